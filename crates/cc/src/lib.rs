//! Congestion-control algorithms behind one trait shaped like Linux's
//! `struct tcp_congestion_ops`.
//!
//! The crate knows nothing about the simulator. A sender (the simulator's, or a
//! unit test's) owns a [`Sock`], the subset of Linux's `tcp_sock` that
//! congestion control reads and writes, and calls the hooks of a
//! [`CongestionControl`] at the points Linux calls them:
//!
//! ```text
//!  ACK arrives ──► pkts_acked(rtt sample) ──► loss/recovery state machine (sender)
//!        │                                          │ entering Recovery/Loss/CWR
//!        │                                          ├──► ssthresh()  then set_state()
//!        ▼                                          ▼
//!  cong_control(rate sample) ── returns false ──► cong_avoid(acked)   (only in Open/Disorder/Loss)
//! ```
//!
//! Windows are counted in packets (segments), as in Linux; times in
//! microseconds unless a name says otherwise; rates in bytes per second.
//!
//! Algorithms are selected through [`registry`], which maps a name to typed
//! parameters whose defaults are Linux's module parameters.

pub mod bbr;
pub mod bbr3;
pub mod bic;
pub mod common;
pub mod compound;
pub mod copa;
pub mod cubic;
pub mod dctcp;
pub mod fast;
pub mod highspeed;
pub mod htcp;
pub mod illinois;
pub mod ledbat;
pub mod params;
pub mod prague;
pub mod registry;
pub mod reno;
pub mod scalable;
pub mod sqrt;
#[cfg(test)]
mod testkit;
pub mod vegas;
pub mod vivace;
pub mod westwood;
pub mod xcp;

pub use params::{ParamKind, ParamSpec, ParamValue, Params};
pub use registry::{algorithms, build, resolve_params, AlgoInfo};

/// Linux `TCP_INFINITE_SSTHRESH`: ssthresh before the first loss.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Sender congestion states (Linux `enum tcp_ca_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    /// Normal operation.
    Open = 0,
    /// Duplicate ACKs or SACKs seen, no loss decided yet.
    Disorder = 1,
    /// Window reduced after an ECN echo, no retransmission.
    Cwr = 2,
    /// Fast recovery after a loss detected by duplicate ACKs / SACK.
    Recovery = 3,
    /// After a retransmission timeout.
    Loss = 4,
}

/// The ECN feedback a connection negotiated (Linux `tcp_ecn_mode_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EcnMode {
    /// No ECN: packets leave Not-ECT and a congested queue drops them.
    #[default]
    Off,
    /// RFC 3168 feedback: ECE latched until CWR (or DCTCP's per-change echo),
    /// at most one congestion signal per round trip.
    Rfc3168,
    /// AccECN feedback (RFC 9768): the ACK counts every CE-marked packet
    /// (the ACE field) and byte (the AccECN option).
    AccEcn,
}

/// Events passed to [`CongestionControl::cwnd_event`] (Linux `enum tcp_ca_event`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when no packets were in flight; `idle_us` is how long
    /// the sender was idle.
    TxStart { idle_us: u64 },
    /// Congestion window restart after idle.
    CwndRestart,
    /// End of a window reduction (Recovery or CWR completed).
    CompleteCwr,
    /// Retransmission timeout.
    Loss,
    /// A CE-marked packet was received (receiver side in Linux; echoed here).
    EcnIsCe,
    /// A packet without CE was received.
    EcnNoCe,
}

/// The part of Linux's `tcp_sock` that congestion control touches.
///
/// The sender owns this struct and keeps its fields current; algorithms change
/// `snd_cwnd`, `snd_ssthresh`, `snd_cwnd_cnt` and `pacing_rate` only from
/// inside their hooks.
#[derive(Clone, Debug)]
pub struct Sock {
    /// Current time, microseconds (Linux `tcp_mstamp`).
    pub now_us: u64,
    /// Current time, nanoseconds, for algorithms that want finer time.
    pub now_ns: u64,
    /// Maximum segment size, payload bytes.
    pub mss: u32,
    /// Congestion window, packets.
    pub snd_cwnd: u32,
    /// Slow-start threshold, packets.
    pub snd_ssthresh: u32,
    /// Linear-increase counter (packets acknowledged since the last +1).
    pub snd_cwnd_cnt: u32,
    /// Upper bound on `snd_cwnd`, packets.
    pub snd_cwnd_clamp: u32,
    /// cwnd before the last reduction (Linux `prior_cwnd`), packets.
    pub prior_cwnd: u32,
    /// ssthresh before the last reduction (for undo), packets.
    pub prior_ssthresh: u32,
    /// Pacing rate, bytes per second of payload (as Linux paces `skb->len`);
    /// 0 means "not set".
    pub pacing_rate: u64,
    /// Whether the sender paces (pacing enabled for this flow).
    pub paced: bool,
    /// Smoothed RTT, microseconds (0 before the first sample).
    pub srtt_us: u64,
    /// Minimum RTT seen, microseconds (`u64::MAX` before the first sample).
    pub min_rtt_us: u64,
    /// Packets sent and not cumulatively acknowledged.
    pub packets_out: u32,
    /// Packets selectively acknowledged.
    pub sacked_out: u32,
    /// Packets marked lost and not yet retransmitted or acknowledged.
    pub lost_out: u32,
    /// Retransmitted packets still in flight.
    pub retrans_out: u32,
    /// Lowest unacknowledged sequence number, bytes.
    pub snd_una: u64,
    /// Next sequence number to send, bytes.
    pub snd_nxt: u64,
    /// Packets delivered (cumulatively or selectively acknowledged) so far.
    pub delivered: u64,
    /// Packets delivered with a CE mark echoed.
    pub delivered_ce: u64,
    /// Packets declared lost so far.
    pub lost: u64,
    /// Congestion state.
    pub ca_state: CaState,
    /// Whether the last transmission attempt was limited by cwnd (Linux
    /// `is_cwnd_limited`).
    pub is_cwnd_limited: bool,
    /// Largest `packets_out` in the last window (Linux `max_packets_out`).
    pub max_packets_out: u32,
    /// Non-zero while the application limits sending (Linux `app_limited`).
    pub app_limited: u64,
    /// Earliest departure time of the next paced packet, ns (Linux
    /// `tcp_wstamp_ns`); kept by the sender, read by BBR.
    pub wstamp_ns: u64,
    /// Seed for algorithms that need randomness (BBR's gain-cycle phase),
    /// derived by the simulator from the simulation seed and the flow id.
    pub rng_seed: u64,
    /// The ECN feedback negotiated for this connection, set before `init`.
    pub ecn_mode: EcnMode,
}

impl Sock {
    /// A fresh connection with the given MSS and initial window (packets).
    pub fn new(mss: u32, init_cwnd: u32) -> Sock {
        Sock {
            now_us: 0,
            now_ns: 0,
            mss,
            snd_cwnd: init_cwnd,
            snd_ssthresh: INFINITE_SSTHRESH,
            snd_cwnd_cnt: 0,
            snd_cwnd_clamp: u32::MAX / 2,
            prior_cwnd: init_cwnd,
            prior_ssthresh: 0,
            pacing_rate: 0,
            paced: false,
            srtt_us: 0,
            min_rtt_us: u64::MAX,
            packets_out: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            snd_una: 0,
            snd_nxt: 0,
            delivered: 0,
            delivered_ce: 0,
            lost: 0,
            ca_state: CaState::Open,
            is_cwnd_limited: true,
            max_packets_out: 0,
            app_limited: 0,
            wstamp_ns: 0,
            rng_seed: 0,
            ecn_mode: EcnMode::Off,
        }
    }

    /// Linux `tcp_packets_in_flight`: packets_out − (sacked + lost) + retransmitted.
    #[inline]
    pub fn packets_in_flight(&self) -> u32 {
        (self.packets_out + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// Linux `tcp_in_slow_start`.
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.snd_cwnd < self.snd_ssthresh
    }

    /// Linux `tcp_is_cwnd_limited`: in slow start, growth is allowed while
    /// cwnd < 2·max_packets_out; otherwise only when sending was cwnd-limited.
    #[inline]
    pub fn is_cwnd_limited(&self) -> bool {
        if self.in_slow_start() {
            return self.snd_cwnd < 2 * self.max_packets_out;
        }
        self.is_cwnd_limited
    }
}

/// One ACK's worth of information for [`CongestionControl::pkts_acked`] and
/// [`CongestionControl::cong_avoid`] (Linux `struct ack_sample` plus `acked`).
#[derive(Clone, Copy, Debug, Default)]
pub struct AckSample {
    /// Packets newly acknowledged, cumulatively or by SACK.
    pub acked: u32,
    /// RTT sample from the newest packet acknowledged that was never
    /// retransmitted, microseconds; negative when there is none.
    pub rtt_us: i64,
    /// Packets in flight before this ACK was processed.
    pub in_flight: u32,
    /// The ACK carried an ECN echo.
    pub ece: bool,
    /// Router feedback echoed from the congestion header (XCP), bytes of
    /// window change; `None` when no router wrote it.
    pub feedback: Option<i64>,
}

/// A delivery-rate sample (Linux `struct rate_sample`,
/// draft-cheng-iccrg-delivery-rate-estimation).
#[derive(Clone, Copy, Debug, Default)]
pub struct RateSample {
    /// Time of the delivery the sample starts from, microseconds.
    pub prior_mstamp_us: u64,
    /// `delivered` at the start of the sample, packets.
    pub prior_delivered: u64,
    /// Packets delivered over the interval; negative when there is no valid sample.
    pub delivered: i64,
    /// Sample interval, microseconds; negative when invalid.
    pub interval_us: i64,
    /// Send-side elapsed time, microseconds.
    pub snd_interval_us: u64,
    /// ACK-side elapsed time, microseconds.
    pub rcv_interval_us: u64,
    /// RTT of the most recently sent packet delivered by this ACK, microseconds, or −1.
    pub rtt_us: i64,
    /// Packets newly marked lost by this ACK.
    pub losses: u32,
    /// Packets newly acknowledged or SACKed by this ACK.
    pub acked_sacked: u32,
    /// Packets in flight before this ACK.
    pub prior_in_flight: u32,
    /// The sample was taken while the application limited sending.
    pub is_app_limited: bool,
    /// The ACK acknowledged a retransmitted packet.
    pub is_retrans: bool,
    /// The ACK was delayed or stretched (covers more than one packet).
    pub is_ack_delayed: bool,
    /// Packets in flight just after the newest packet of the sample was sent
    /// (google/bbr v3 `tx_in_flight`).
    pub tx_in_flight: u32,
    /// Packets marked lost since the newest packet of the sample was sent
    /// (google/bbr v3 `rs->lost`).
    pub lost: u32,
    /// Packets delivered with a CE echo over the sample interval.
    pub delivered_ce: i64,
    /// The ACK carried an ECN echo (google/bbr v3 `is_ece`).
    pub is_ece: bool,
    /// Packets newly delivered with a CE mark, as this ACK reports them
    /// (L4STeam Linux `rs->ece_delta`): AccECN's count of newly CE-marked
    /// packets (RFC 9768), or with RFC 3168 feedback every packet this ACK
    /// delivers when it carries ECE.
    pub ece_delta: u32,
}

impl RateSample {
    /// Delivery rate in packets per second, if the sample is valid.
    pub fn delivery_rate_pps(&self) -> Option<f64> {
        if self.delivered <= 0 || self.interval_us <= 0 {
            return None;
        }
        Some(self.delivered as f64 * 1e6 / self.interval_us as f64)
    }
}

/// A small per-packet congestion header. The sender writes it when a data
/// packet leaves; routers may rewrite it (XCP's feedback); the receiver
/// echoes it in the ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CcHeader {
    /// Sender's congestion window, bytes (XCP H_cwnd); 0 if unused.
    pub cwnd_bytes: u64,
    /// Sender's RTT estimate, microseconds (XCP H_rtt); 0 if unused.
    pub rtt_us: u64,
    /// Feedback, bytes of window change, rewritten by routers (XCP H_feedback).
    pub feedback: i64,
    /// Whether any router wrote `feedback`.
    pub has_feedback: bool,
}

/// Up to eight algorithm internals exported per trace interval, with their names.
pub const MAX_METRICS: usize = 8;

/// The congestion-control hooks, named as in Linux's `tcp_congestion_ops`.
///
/// Every hook except [`ssthresh`](Self::ssthresh) has a default matching
/// Linux's behaviour when an algorithm leaves the hook unset.
pub trait CongestionControl {
    /// Called once before the first packet is sent (Linux `init`).
    fn init(&mut self, _tp: &mut Sock) {}

    /// New slow-start threshold after a loss or an ECN echo, packets
    /// (Linux `ssthresh`). Called once per reduction, before `set_state`.
    fn ssthresh(&mut self, tp: &Sock) -> u32;

    /// Window growth on an ACK in Open, Disorder or Loss state (Linux
    /// `cong_avoid`). `acked` is the number of packets newly acknowledged.
    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        common::reno_cong_avoid(tp, acked);
    }

    /// Full control of cwnd and pacing from a rate sample (Linux
    /// `cong_control`). Return `true` if the algorithm handled the ACK, in
    /// which case neither PRR nor `cong_avoid` run.
    fn cong_control(&mut self, _tp: &mut Sock, _rs: &RateSample) -> bool {
        false
    }

    /// Per-ACK information: packets acknowledged and an RTT sample (Linux `pkts_acked`).
    fn pkts_acked(&mut self, _tp: &mut Sock, _sample: &AckSample) {}

    /// Congestion state change (Linux `set_state`), called before the state changes.
    fn set_state(&mut self, _tp: &mut Sock, _new_state: CaState) {}

    /// Events such as transmission start after idle (Linux `cwnd_event`).
    fn cwnd_event(&mut self, _tp: &mut Sock, _ev: CaEvent) {}

    /// cwnd to restore when a reduction proves spurious (Linux `undo_cwnd`).
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        common::reno_undo_cwnd(tp)
    }

    /// A packet was just marked lost (google/bbr v3 `skb_marked_lost`).
    /// `rs` describes the flight up to that packet: `tx_in_flight` when it
    /// was sent, `lost` = packets marked lost since then (this one
    /// included), `is_app_limited` as stamped at its transmission.
    fn skb_marked_lost(&mut self, _tp: &mut Sock, _rs: &RateSample) {}

    /// Called when a data packet leaves; may write the congestion header.
    fn on_send(&mut self, _tp: &Sock, _hdr: &mut CcHeader) {}

    /// The algorithm needs ECN (Linux `TCP_CONG_NEEDS_ECN`): the connection
    /// uses ECN whatever the flow's setting, every data packet (retransmissions
    /// too) is sent ECT, and the receiver echoes each change of CE at once.
    fn needs_ecn(&self) -> bool {
        false
    }

    /// The algorithm is scalable and sends ECT(1), the L4S identifier
    /// (RFC 9331 §4; Linux `TCP_CONG_WANTS_ECT_1`): its ECN-capable packets
    /// carry ECT(1) instead of ECT(0), so that an L4S-aware queue (DualPI2)
    /// classifies them into its low-latency queue. Only meaningful with ECN.
    fn wants_ect1(&self) -> bool {
        false
    }

    /// The algorithm needs AccECN feedback (RFC 9768; Linux
    /// `TCP_CONG_NEEDS_ACCECN` with `TCP_CONG_NO_FALLBACK_RFC3168`): the
    /// sender offers AccECN whatever the flow's setting, and when the
    /// receiver does not support it the connection runs without ECN rather
    /// than with RFC 3168 feedback ([`Sock::ecn_mode`] tells the algorithm
    /// at `init`).
    fn needs_accecn(&self) -> bool {
        false
    }

    /// Names of the internals reported by [`metrics`](Self::metrics), in order.
    fn metric_names(&self) -> &'static [&'static str] {
        &[]
    }

    /// Writes the current internals (see [`metric_names`](Self::metric_names)).
    fn metrics(&self, _out: &mut [f64; MAX_METRICS]) {}
}

/// Every registered algorithm, dispatched statically (no `Box` per flow).
#[derive(Clone, Debug)]
pub enum AnyCc {
    Reno(reno::Reno),
    NewReno(reno::NewReno),
    Bbr(bbr::Bbr),
    Bbr3(bbr3::Bbr3),
    Bic(bic::Bic),
    Cubic(cubic::Cubic),
    Dctcp(dctcp::Dctcp),
    Compound(compound::Compound),
    Copa(copa::Copa),
    Fast(fast::Fast),
    HighSpeed(highspeed::HighSpeed),
    Htcp(htcp::Htcp),
    Illinois(illinois::Illinois),
    Ledbat(ledbat::Ledbat),
    Prague(prague::Prague),
    Scalable(scalable::Scalable),
    Sqrt(sqrt::Sqrt),
    Vegas(vegas::Vegas),
    Vivace(vivace::Vivace),
    Westwood(westwood::Westwood),
    Xcp(xcp::Xcp),
    /// An algorithm registered at run time (one written in Python, through
    /// crates/py), dispatched through a box.
    External(External),
}

/// An algorithm registered at run time (see [`registry::register_external`]).
pub trait ExternalCc: CongestionControl + Send {
    /// The registry name it was registered under.
    fn name(&self) -> &'static str;
    /// A copy with the same state (`AnyCc` is `Clone`).
    fn clone_box(&self) -> Box<dyn ExternalCc>;
}

/// A boxed [`ExternalCc`]: the one `AnyCc` variant that is not static dispatch.
///
/// Every call into it, its drop and its clone included, goes through a cold,
/// never-inlined `extern "C"` function, which the compiler knows cannot unwind
/// (a panic inside aborts). A call through the box that may unwind puts a
/// landing pad in every function `AnyCc`'s calls are inlined into, and with
/// them in the event loop (and the packet being built kept out of registers
/// for `on_send`) the built-in algorithms ran 5 to 7% slower.
pub struct External(std::mem::ManuallyDrop<Box<dyn ExternalCc>>);

impl External {
    /// Wraps an algorithm registered at run time.
    pub fn new(cc: Box<dyn ExternalCc>) -> External {
        External(std::mem::ManuallyDrop::new(cc))
    }
}

#[cold]
#[inline(never)]
#[allow(improper_ctypes_definitions)] // called from Rust only
extern "C" fn call_mut<R, F: FnOnce(&mut dyn ExternalCc) -> R>(e: &mut External, f: F) -> R {
    f(&mut **e.0)
}

#[cold]
#[inline(never)]
#[allow(improper_ctypes_definitions)] // called from Rust only
extern "C" fn call_ref<R, F: FnOnce(&dyn ExternalCc) -> R>(e: &External, f: F) -> R {
    f(&**e.0)
}

#[cold]
#[inline(never)]
extern "C" fn drop_external(e: &mut External) {
    // SAFETY: called once, from `Drop::drop`; the box is not used afterwards.
    unsafe { std::mem::ManuallyDrop::drop(&mut e.0) }
}

impl Drop for External {
    fn drop(&mut self) {
        drop_external(self)
    }
}

impl Clone for External {
    fn clone(&self) -> External {
        External::new(call_ref(self, |c| c.clone_box()))
    }
}

impl std::fmt::Debug for External {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "External({})", call_ref(self, |c| c.name()))
    }
}

impl CongestionControl for External {
    fn init(&mut self, tp: &mut Sock) {
        call_mut(self, |c| c.init(tp))
    }
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        call_mut(self, |c| c.ssthresh(tp))
    }
    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        call_mut(self, |c| c.cong_avoid(tp, acked))
    }
    fn cong_control(&mut self, tp: &mut Sock, rs: &RateSample) -> bool {
        call_mut(self, |c| c.cong_control(tp, rs))
    }
    // The ACK sample and the header are handed over as copies: the sender's
    // own, passed to a call the compiler cannot see into, would have to live
    // in memory in its hot paths (the packet being built, for the header).
    fn pkts_acked(&mut self, tp: &mut Sock, s: &AckSample) {
        let s = *s;
        call_mut(self, |c| c.pkts_acked(tp, &s))
    }
    fn set_state(&mut self, tp: &mut Sock, st: CaState) {
        call_mut(self, |c| c.set_state(tp, st))
    }
    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        call_mut(self, |c| c.cwnd_event(tp, ev))
    }
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        call_mut(self, |c| c.undo_cwnd(tp))
    }
    fn skb_marked_lost(&mut self, tp: &mut Sock, rs: &RateSample) {
        call_mut(self, |c| c.skb_marked_lost(tp, rs))
    }
    fn on_send(&mut self, tp: &Sock, hdr: &mut CcHeader) {
        let mut h = *hdr;
        call_mut(self, |c| c.on_send(tp, &mut h));
        *hdr = h;
    }
    fn needs_ecn(&self) -> bool {
        call_ref(self, |c| c.needs_ecn())
    }
    fn wants_ect1(&self) -> bool {
        call_ref(self, |c| c.wants_ect1())
    }
    fn needs_accecn(&self) -> bool {
        call_ref(self, |c| c.needs_accecn())
    }
    fn metric_names(&self) -> &'static [&'static str] {
        call_ref(self, |c| c.metric_names())
    }
    fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
        call_ref(self, |c| c.metrics(out))
    }
}

macro_rules! forward {
    ($self:ident, $cc:ident => $body:expr) => {
        match $self {
            AnyCc::Reno($cc) => $body,
            AnyCc::NewReno($cc) => $body,
            AnyCc::Bbr($cc) => $body,
            AnyCc::Bbr3($cc) => $body,
            AnyCc::Bic($cc) => $body,
            AnyCc::Cubic($cc) => $body,
            AnyCc::Dctcp($cc) => $body,
            AnyCc::Compound($cc) => $body,
            AnyCc::Copa($cc) => $body,
            AnyCc::Fast($cc) => $body,
            AnyCc::HighSpeed($cc) => $body,
            AnyCc::Htcp($cc) => $body,
            AnyCc::Illinois($cc) => $body,
            AnyCc::Ledbat($cc) => $body,
            AnyCc::Prague($cc) => $body,
            AnyCc::Scalable($cc) => $body,
            AnyCc::Sqrt($cc) => $body,
            AnyCc::Vegas($cc) => $body,
            AnyCc::Vivace($cc) => $body,
            AnyCc::Westwood($cc) => $body,
            AnyCc::Xcp($cc) => $body,
            AnyCc::External($cc) => $body,
        }
    };
}

impl AnyCc {
    /// The registry name of the algorithm.
    pub fn name(&self) -> &'static str {
        match self {
            AnyCc::Reno(_) => "reno",
            AnyCc::NewReno(_) => "newreno",
            AnyCc::Bbr(_) => "bbr",
            AnyCc::Bbr3(_) => "bbr3",
            AnyCc::Bic(_) => "bic",
            AnyCc::Cubic(_) => "cubic",
            AnyCc::Dctcp(_) => "dctcp",
            AnyCc::Compound(_) => "compound",
            AnyCc::Copa(_) => "copa",
            AnyCc::Fast(_) => "fast",
            AnyCc::HighSpeed(_) => "highspeed",
            AnyCc::Htcp(_) => "htcp",
            AnyCc::Illinois(_) => "illinois",
            AnyCc::Ledbat(_) => "ledbat",
            AnyCc::Prague(_) => "prague",
            AnyCc::Scalable(_) => "scalable",
            AnyCc::Sqrt(_) => "sqrt",
            AnyCc::Vegas(_) => "vegas",
            AnyCc::Vivace(_) => "vivace",
            AnyCc::Westwood(_) => "westwood",
            AnyCc::Xcp(_) => "xcp",
            AnyCc::External(e) => call_ref(e, |c| c.name()),
        }
    }
}

impl CongestionControl for AnyCc {
    #[inline]
    fn init(&mut self, tp: &mut Sock) {
        forward!(self, c => c.init(tp))
    }
    #[inline]
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        forward!(self, c => c.ssthresh(tp))
    }
    #[inline]
    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        forward!(self, c => c.cong_avoid(tp, acked))
    }
    #[inline]
    fn cong_control(&mut self, tp: &mut Sock, rs: &RateSample) -> bool {
        forward!(self, c => c.cong_control(tp, rs))
    }
    #[inline]
    fn pkts_acked(&mut self, tp: &mut Sock, s: &AckSample) {
        forward!(self, c => c.pkts_acked(tp, s))
    }
    #[inline]
    fn set_state(&mut self, tp: &mut Sock, st: CaState) {
        forward!(self, c => c.set_state(tp, st))
    }
    #[inline]
    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        forward!(self, c => c.cwnd_event(tp, ev))
    }
    #[inline]
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        forward!(self, c => c.undo_cwnd(tp))
    }
    #[inline]
    fn skb_marked_lost(&mut self, tp: &mut Sock, rs: &RateSample) {
        forward!(self, c => c.skb_marked_lost(tp, rs))
    }
    #[inline]
    fn on_send(&mut self, tp: &Sock, hdr: &mut CcHeader) {
        forward!(self, c => c.on_send(tp, hdr))
    }
    #[inline]
    fn needs_ecn(&self) -> bool {
        forward!(self, c => c.needs_ecn())
    }
    #[inline]
    fn wants_ect1(&self) -> bool {
        forward!(self, c => c.wants_ect1())
    }
    #[inline]
    fn needs_accecn(&self) -> bool {
        forward!(self, c => c.needs_accecn())
    }
    fn metric_names(&self) -> &'static [&'static str] {
        forward!(self, c => c.metric_names())
    }
    #[inline]
    fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
        forward!(self, c => c.metrics(out))
    }
}
