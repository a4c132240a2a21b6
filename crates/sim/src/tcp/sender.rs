//! The TCP sender: segments, the SACK scoreboard, loss detection, recovery,
//! the retransmission timer, the delivery-rate sampler, pacing and the
//! application model. Congestion control is delegated to a
//! [`cc::CongestionControl`] through the hooks Linux calls.
//!
//! ```text
//!            3 SACKed above a hole (RFC 6675 IsLost)      snd_una ≥ high_seq
//!  Open ─────────────────────────────────────────► Recovery ─────────────────► Open
//!   ▲  (NewReno mode: 3rd duplicate ACK)            (PRR, RFC 6937, or NewReno
//!   │                                                 inflation, RFC 6582)
//!   │ snd_una ≥ high_seq                ┌───────────────────────────────────┐
//!  Loss ◄──────────── RTO from any state┘  cwnd = 1, everything un-SACKed lost,
//!                                          timer backs off ×2 up to 120 s
//! ```
//!
//! A retransmission that is lost again is found by RACK's time rule (RFC
//! 8985 §6.2, Linux `tcp_rack_detect_loss`): once a segment sent after it
//! has been delivered and the latest RTT (plus the reordering window) has
//! passed since it left, it is marked lost and sent once more, instead of
//! waiting for the retransmission timer. Original transmissions are judged by
//! the RFC 6675 rule above; there is no RACK reordering timer and no
//! tail-loss probe, so a lost retransmission is found on the next ACK after
//! its deadline, and a loss at the very end of a flight still waits for the
//! RTO.
//!
//! ECN (RFC 3168 §6.1, as Linux): a flow that negotiates ECN sends new data
//! ECT (retransmissions not, unless the algorithm needs ECN, e.g. DCTCP). An
//! ACK with ECE in Open or Disorder enters CWR: ssthresh from the algorithm,
//! cwnd brought down by PRR as in Recovery but nothing retransmitted, and CWR
//! set on the next new segment. Further echoes are ignored until snd_una
//! passes the CWR point (`high_seq`, snd_nxt at entry), so the window is cut
//! at most once per window of data; a loss found during CWR turns it into
//! Recovery without a second cut.
//!
//! AccECN (RFC 9768): a sender that offers it (the flow's setting, or an
//! algorithm that needs it, Prague) to a receiver that supports it reads the
//! number of newly CE-marked packets from each ACK's ACE field and AccECN
//! option (see [`super::accecn`]), counts them in `delivered_ce` and hands
//! them to the algorithm (`RateSample::ece_delta`); an ACK reporting new
//! marks enters CWR as an ECE does, and CWR is not sent (the bit belongs to
//! ACE). Against a receiver without AccECN the connection falls back to RFC
//! 3168 feedback, or to no ECN for an algorithm that needs AccECN (Linux
//! `TCP_CONG_NO_FALLBACK_RFC3168`).
//!
//! Sequence numbers are segment indices: segment k carries bytes
//! [k·MSS, (k+1)·MSS) (the last segment of a fixed-size transfer may be
//! shorter). The scoreboard is a ring over [snd_una, snd_nxt) that grows to
//! the largest window and is then reused, so steady state allocates nothing.

use std::collections::VecDeque;

use super::accecn::{AckFacts, Mirror};
use super::rtt::{RttEstimator, RTO_MAX_US};
use crate::event::{Time, PS_PER_MS, PS_PER_NS, PS_PER_S, PS_PER_US};
use crate::hist::Histogram;
use crate::packet::{Packet, MAX_SACK};
use cc::{AckSample, AnyCc, CaEvent, CaState, CongestionControl, EcnMode, RateSample, Sock, INFINITE_SSTHRESH};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The largest window a TCP receiver can advertise (RFC 7323 §2.2: a
/// 16-bit window scaled by at most 2^14), the receive window of flows that
/// set none.
pub const MAX_WINDOW_BYTES: u64 = 1 << 30;

/// What the application offers the socket.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum App {
    /// Always has data (a bulk transfer).
    Bulk,
    /// A transfer of this many bytes; its completion time is recorded.
    Fixed { bytes: u64 },
    /// Data produced at a constant rate, bit/s (application-limited stream).
    Rate { bps: u64 },
}

/// Loss recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Recovery {
    /// SACK scoreboard (RFC 6675 loss detection) with Proportional Rate
    /// Reduction (RFC 6937): Linux's default.
    Prr,
    /// RFC 6582 NewReno: three duplicate ACKs, window inflation, one
    /// retransmission per partial ACK; SACK information is ignored.
    NewReno,
}

impl Recovery {
    pub fn name(self) -> &'static str {
        match self {
            Recovery::Prr => "prr",
            Recovery::NewReno => "newreno",
        }
    }
}

#[derive(Clone, Debug)]
pub struct SenderConfig {
    pub mss: u32,
    pub header_bytes: u32,
    pub init_cwnd: u32,
    pub rwnd_bytes: Option<u64>,
    pub pacing: bool,
    pub recovery: Recovery,
    pub app: App,
    /// Negotiate ECN (RFC 3168). Algorithms that need ECN use it regardless.
    pub ecn: bool,
    /// Offer AccECN feedback (RFC 9768; implies ECN). Algorithms that need
    /// AccECN offer it regardless.
    pub accecn: bool,
    /// The receiver supports AccECN: an offer is answered with AccECN,
    /// otherwise with RFC 3168 feedback.
    pub peer_accecn: bool,
    /// TCP segmentation offload's sending pattern, for an unpaced sender; `None`: segment by segment.
    pub tso: Option<Tso>,
    /// TCP Small Queues: the sender stops handing data down while more than
    /// its limit is in the host's queue and NIC (today's Linux); the value is
    /// `tcp_limit_output_bytes`, the cap for an unpaced socket. `None`: no TSQ.
    pub tsq: Option<u64>,
    /// The receiver advertises Linux's window ([`crate::tcp::rcvwnd`]): the
    /// window it opens with and its scale. `None`: no window but `rwnd_bytes`.
    pub peer_window: Option<PeerWindow>,
}

/// What the handshake tells a sender of its receiver's window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerWindow {
    /// The SYN's window, bytes.
    pub initial: u64,
    /// The receiver's window scale (RFC 7323).
    pub wscale: u32,
}

impl SenderConfig {
    /// A bulk sender of `mss`-byte segments: unpaced, PRR, no ECN, no
    /// receive-window limit, segment by segment (no TSO, no TSQ); the other
    /// settings are set over it with `..`.
    pub fn bulk(mss: u32, header_bytes: u32, init_cwnd: u32) -> SenderConfig {
        SenderConfig {
            mss,
            header_bytes,
            init_cwnd,
            rwnd_bytes: None,
            pacing: false,
            recovery: Recovery::Prr,
            app: App::Bulk,
            ecn: false,
            accecn: false,
            peer_accecn: true,
            tso: None,
            tsq: None,
            peer_window: None,
        }
    }
}

/// Which Linux's TSO the sender follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Era {
    /// Linux 2.6: full 64 KB super-packets, deferral for at most `max_defer`.
    #[default]
    #[serde(rename = "linux-2.6")]
    Linux26,
    /// Linux since 5.18 (`tcp_tso_autosize` with its RTT allowance, the
    /// current `tcp_tso_should_defer`, super-packets of at most half the window).
    #[serde(rename = "linux-today")]
    Today,
}

/// Linux's `tcp_tso_rtt_log`: the RTT allowance of `tcp_tso_autosize` halves
/// for every 2^9 µs of min RTT.
pub const TSO_RTT_LOG: u32 = 9;
/// Linux's `sk_pacing_shift` (10): super-packets and the TSQ limit are sized
/// to 2^-10 s (about 1 ms) of the pacing rate.
pub const PACING_SHIFT: u32 = 10;
/// Linux's `tcp_min_tso_segs`.
pub const MIN_TSO_SEGS: u64 = 2;
/// The socket's largest GSO packet, bytes: `GSO_LEGACY_MAX_SIZE` (65 536)
/// less `MAX_TCP_HEADER` + 1 (320 + 1), as `sk_setup_caps` sets `sk_gso_max_size`.
pub const GSO_MAX_BYTES: u64 = 65_536 - 321;
/// An skb's `truesize` beyond its payload, bytes: the `sk_buff`, its shared
/// info and the header area `tcp_stream_alloc_skb` allocates (about
/// `SKB_TRUESIZE(MAX_TCP_HEADER)` on x86-64; it varies with the kernel's
/// configuration).
pub const SKB_OVERHEAD: u64 = 1_280;

/// Segments in a super-packet of today's Linux (`tcp_tso_autosize`, 5.18+):
/// about 1 ms of the pacing rate (bytes/s) plus an allowance that halves
/// for every 512 µs of min RTT, at most [`GSO_MAX_BYTES`], at least two
/// segments, at most `max_segs`.
pub fn tso_autosize(pacing_rate: u64, min_rtt_us: u64, mss: u64, max_segs: u64) -> u64 {
    let mut bytes = pacing_rate >> PACING_SHIFT;
    let r = min_rtt_us >> TSO_RTT_LOG;
    if r < 32 {
        bytes += GSO_MAX_BYTES >> r;
    }
    (bytes.min(GSO_MAX_BYTES) / mss.max(1)).max(MIN_TSO_SEGS).min(max_segs)
}

/// The TSQ limit before an skb of `truesize` bytes (`tcp_small_queue_check`):
/// two such skbs or about 1 ms of the pacing rate, whichever is more; for an
/// unpaced socket at most `limit_output_bytes`; doubled for a retransmission.
pub fn tsq_limit(truesize: u64, pacing_rate: u64, paced: bool, limit_output_bytes: u64, rtx: bool) -> u64 {
    let mut limit = (2 * truesize).max(pacing_rate >> PACING_SHIFT);
    if !paced {
        limit = limit.min(limit_output_bytes);
    }
    limit << rtx as u32
}

/// How a Linux sender with TSO (2.6 era, no pacing) puts data on the wire:
/// in super-packets of up to `max_segs` segments handed to the NIC at once,
/// and, when the window has opened by less than a super-packet and less than
/// `1/win_divisor` of the window, waiting for more ACKs rather than sending
/// a small one, for at most `max_defer` (`tcp_tso_should_defer`; its
/// default divisor `tcp_tso_win_divisor` is 3, its wait two jiffies). A
/// deferring sender counts as cwnd-limited, as Linux's `tcp_is_cwnd_limited`
/// then says. With [`Era::Today`] super-packets are autosized and deferral
/// follows today's rule instead (see `Sender::tso_defer_today`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tso {
    /// Segments in a full super-packet (64 KB: 45 of 1448 bytes); today's
    /// autosizing is capped by it.
    pub max_segs: u32,
    pub win_divisor: u32,
    /// Longest deferral (Linux 2.6 only).
    pub max_defer: Time,
    pub era: Era,
}

/// What a sender with TCP Small Queues knows of its data below TCP: its
/// skbs in the host queue and NIC, oldest first, as (last segment, truesize);
/// the simulator reports each packet that leaves the host (or is dropped
/// there), and an skb is freed with its last segment, as Linux frees it on
/// TX completion (`tcp_wfree`).
#[derive(Debug, Default)]
struct HostQueue {
    on: bool,
    /// Truesize of the skbs below TCP (Linux `sk_wmem_alloc`), bytes.
    bytes: u64,
    skbs: VecDeque<(u64, u64)>,
    /// First segment of the newest skb of new data.
    newest_first: u64,
    /// TSQ stopped the sender; it resumes on the next TX completion
    /// (Linux `TSQ_THROTTLED`).
    throttled: bool,
    /// `sk_pacing_rate` of an unpaced socket before the first RTT sample
    /// (Linux's `tcp_update_pacing_rate` then leaves it undivided by srtt:
    /// in effect unbounded), bytes/s.
    rate: u64,
}

impl HostQueue {
    fn new(on: bool) -> HostQueue {
        HostQueue {
            on,
            skbs: if on { VecDeque::with_capacity(64) } else { VecDeque::new() },
            rate: u64::MAX >> 8,
            ..HostQueue::default()
        }
    }
}

/// What TSO and TCP Small Queues make of the next new segment.
enum Shape {
    Send,
    /// TSO waits for more ACKs (counted as cwnd-limited).
    Defer,
    /// TSQ holds it until a TX completion.
    Hold,
}

// Scoreboard flags.
const SACKED: u8 = 1;
const LOST: u8 = 2;
/// A retransmitted copy is in flight.
const RETRANS: u8 = 4;
/// The segment was retransmitted at least once (Karn: no RTT sample).
const EVER_RETRANS: u8 = 8;
const APP_LIMITED: u8 = 16;

#[derive(Clone, Copy, Debug, Default)]
struct Seg {
    tx_time: Time,
    /// Rate-sampler stamps (draft-cheng-iccrg-delivery-rate-estimation §3).
    first_sent_time: Time,
    delivered_time: Time,
    delivered: u64,
    /// `tp.lost` and `tp.delivered_ce` when sent (google/bbr v3 `tx.lost`,
    /// `tx.delivered_ce`).
    lost: u64,
    delivered_ce: u64,
    /// Packets in flight just after this one was sent (v3 `tx.in_flight`).
    in_flight: u32,
    flags: u8,
}

/// Timer slots the sender uses (indices into `timers`).
pub const T_RTO: usize = 0;
pub const T_PACE: usize = 1;
pub const T_APP: usize = 2;

/// The ECN feedback a connection ends up with (the outcome of the SYN
/// exchange of RFC 9768 §3.1, reduced to the two ends' settings): AccECN if
/// the sender offers it (its setting, or an algorithm that needs it) and the
/// receiver supports it; else RFC 3168 if ECN was asked for and the
/// algorithm accepts RFC 3168 feedback; else none.
pub fn negotiate_ecn(cfg: &SenderConfig, cc: &AnyCc) -> EcnMode {
    let needs_accecn = cc.needs_accecn();
    let offer = cfg.accecn || needs_accecn;
    if !(cfg.ecn || offer || cc.needs_ecn()) {
        EcnMode::Off
    } else if offer && cfg.peer_accecn {
        EcnMode::AccEcn
    } else if needs_accecn {
        EcnMode::Off
    } else {
        EcnMode::Rfc3168
    }
}

/// Counters reported per flow.
#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    pub sent_pkts: u64,
    pub retrans_pkts: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    /// Window reductions in answer to an ECN echo (entries into CWR).
    pub ecn_reductions: u64,
    pub completion: Option<Time>,
}

pub struct Sender {
    pub id: u32,
    pub cfg: SenderConfig,
    pub tp: Sock,
    pub cc: AnyCc,
    ring: Vec<Seg>,
    mask: u64,
    /// First unacknowledged segment.
    una: u64,
    /// Next new segment.
    nxt: u64,
    /// SACKed ranges above `una`, sorted, disjoint, [start, end).
    sacked: Vec<(u64, u64)>,
    /// Recovery point (Linux `high_seq`), segment.
    high_seq: u64,
    /// Segments below this have been judged by the IsLost rule.
    lost_hint: u64,
    /// Every segment below this is SACKed, acknowledged, or marked lost.
    lost_hi: u64,
    /// No lost, unretransmitted segment lies below this.
    rtx_hint: u64,
    /// Retransmissions in the order they were sent, (segment, send time),
    /// for RACK (SACK recovery only); entries whose segment has since been
    /// delivered, resent or marked lost are dropped when they reach the
    /// front (Linux walks its `tsorted_sent_queue` the same way).
    rtx_sent: VecDeque<(u64, Time)>,
    /// RACK (RFC 8985 §6.2, Linux `tp->rack`): send time and sequence of the
    /// most recently sent segment delivered so far, the RTT of the latest
    /// delivery that updated RACK, ps, and whether this ACK updated it.
    rack_xmit: Time,
    rack_end: u64,
    rack_rtt: Time,
    rack_advanced: bool,
    prr_delivered: u32,
    prr_out: u32,
    dupacks: u32,
    pub rtt: RttEstimator,
    backoff: u32,
    // Delivery-rate sampler connection state.
    delivered_time: Time,
    first_sent_time: Time,
    /// Linux `rate_delivered`/`rate_interval_us`/`rate_app_limited`.
    rate_delivered: u64,
    rate_interval_us: u64,
    rate_app_limited: bool,
    next_send: Time,
    last_send: Time,
    /// TSO: when the sender began deferring (0: it is not), and segments
    /// left in the super-packet being sent.
    tso_deferred: Time,
    tso_left: u32,
    /// TCP Small Queues (`cfg.tsq`): the host's state.
    host: HostQueue,
    /// TSO or TCP Small Queues shape the sending (`cfg.tso` or `cfg.tsq`).
    shaped: bool,
    start: Time,
    /// Segments the application offers in total (fixed size), if bounded.
    total_segs: Option<u64>,
    total_bytes: Option<u64>,
    /// The application stopped offering data at this segment count.
    stopped_at: Option<u64>,
    /// Deadlines of the sender's timers (0 = not armed), ps.
    pub timers: [Time; 3],
    pub stats: SenderStats,
    pub rtt_hist: Histogram,
    /// Packets ready to leave, drained by the simulator.
    pub out: Vec<Packet>,
    /// The algorithm took full control (`cong_control`) on the last ACK.
    cc_controls: bool,
    /// `snd_nxt` when `max_packets_out` was last reset (Linux `max_packets_seq`).
    max_packets_seq: u64,
    /// Delivery time stamped on the newest packet of the current rate sample.
    rate_prior_time: Time,
    /// `tp.lost` / `tp.delivered_ce` stamped on that packet.
    rate_prior_lost: u64,
    rate_prior_delivered_ce: u64,
    /// A partial ACK was seen in the current NewReno recovery.
    partial_acked: bool,
    /// The connection uses ECN; the algorithm needs it (DCTCP).
    ecn: bool,
    needs_ecn: bool,
    /// ECN-capable packets carry ECT(1) (the algorithm's [`CongestionControl::wants_ect1`]).
    ect1: bool,
    /// AccECN feedback was negotiated; the mirror of the receiver's counters.
    accecn: bool,
    acc: Mirror,
    /// Set CWR on the next new segment (Linux `TCP_ECN_QUEUE_CWR`).
    queue_cwr: bool,
    /// The receiver's window from its latest ACK, bytes (`cfg.peer_window`;
    /// unbounded without it).
    snd_wnd: u64,
}

/// The allocations a sender owns, handed from one connection to the next.
struct SenderBuffers {
    ring: Vec<Seg>,
    rtx_sent: VecDeque<(u64, Time)>,
    sacked: Vec<(u64, u64)>,
    out: Vec<Packet>,
    rtt_hist: Histogram,
}

impl Sender {
    pub fn new(id: u32, cfg: SenderConfig, cc: AnyCc) -> Sender {
        let bufs = SenderBuffers {
            ring: vec![Seg::default(); 64],
            rtx_sent: VecDeque::with_capacity(16),
            sacked: Vec::with_capacity(16),
            out: Vec::with_capacity(64),
            rtt_hist: Histogram::new(),
        };
        Sender::with_buffers(id, cfg, cc, bufs)
    }

    /// Reuses this sender's buffers for a new connection (a pooled flow slot),
    /// so short flows allocate nothing once the pool has grown.
    pub fn reinit(&mut self, id: u32, cfg: SenderConfig, cc: AnyCc) {
        let mut bufs = SenderBuffers {
            ring: std::mem::take(&mut self.ring),
            rtx_sent: std::mem::take(&mut self.rtx_sent),
            sacked: std::mem::take(&mut self.sacked),
            out: std::mem::take(&mut self.out),
            rtt_hist: std::mem::take(&mut self.rtt_hist),
        };
        bufs.sacked.clear();
        bufs.rtx_sent.clear();
        bufs.out.clear();
        bufs.rtt_hist.clear();
        *self = Sender::with_buffers(id, cfg, cc, bufs);
    }

    fn with_buffers(id: u32, cfg: SenderConfig, cc: AnyCc, bufs: SenderBuffers) -> Sender {
        let (total_segs, total_bytes) = match cfg.app {
            App::Fixed { bytes } => (Some(bytes.div_ceil(cfg.mss as u64)), Some(bytes)),
            _ => (None, None),
        };
        let mut tp = Sock::new(cfg.mss, cfg.init_cwnd);
        tp.paced = cfg.pacing;
        let needs_ecn = cc.needs_ecn();
        let ect1 = cc.wants_ect1();
        let ecn_mode = negotiate_ecn(&cfg, &cc);
        tp.ecn_mode = ecn_mode;
        let cap = bufs.ring.len();
        debug_assert!(cap.is_power_of_two());
        Sender {
            id,
            tp,
            cc,
            ring: bufs.ring,
            mask: cap as u64 - 1,
            una: 0,
            nxt: 0,
            sacked: bufs.sacked,
            high_seq: 0,
            lost_hint: 0,
            lost_hi: 0,
            rtx_hint: 0,
            rtx_sent: bufs.rtx_sent,
            rack_xmit: 0,
            rack_end: 0,
            rack_rtt: 0,
            rack_advanced: false,
            prr_delivered: 0,
            prr_out: 0,
            dupacks: 0,
            rtt: RttEstimator::default(),
            backoff: 0,
            delivered_time: 0,
            first_sent_time: 0,
            rate_delivered: 0,
            rate_interval_us: 0,
            rate_app_limited: false,
            next_send: 0,
            last_send: 0,
            tso_deferred: 0,
            tso_left: 0,
            host: HostQueue::new(cfg.tsq.is_some()),
            shaped: cfg.tso.is_some() || cfg.tsq.is_some(),
            start: 0,
            total_segs,
            total_bytes,
            stopped_at: None,
            timers: [0; 3],
            stats: SenderStats::default(),
            rtt_hist: bufs.rtt_hist,
            out: bufs.out,
            cc_controls: false,
            max_packets_seq: 0,
            rate_prior_time: 0,
            rate_prior_lost: 0,
            rate_prior_delivered_ce: 0,
            partial_acked: false,
            ecn: ecn_mode != EcnMode::Off,
            needs_ecn,
            ect1,
            accecn: ecn_mode == EcnMode::AccEcn,
            acc: Mirror::default(),
            queue_cwr: false,
            snd_wnd: cfg.peer_window.map_or(u64::MAX, |w| w.initial),
            cfg,
        }
    }

    #[inline]
    fn seg(&self, k: u64) -> &Seg {
        &self.ring[(k & self.mask) as usize]
    }

    #[inline]
    fn seg_mut(&mut self, k: u64) -> &mut Seg {
        &mut self.ring[(k & self.mask) as usize]
    }

    /// Doubles the ring, keeping [una, nxt) at the same indices modulo the new size.
    fn grow_ring(&mut self) {
        let old = std::mem::take(&mut self.ring);
        let old_mask = self.mask;
        let cap = old.len() * 2;
        self.ring = vec![Seg::default(); cap];
        self.mask = cap as u64 - 1;
        for k in self.una..self.nxt {
            self.ring[(k & self.mask) as usize] = old[(k & old_mask) as usize];
        }
    }

    /// Payload bytes of segment k.
    #[inline]
    fn seg_len(&self, k: u64) -> u32 {
        let mss = self.cfg.mss as u64;
        match self.total_bytes {
            Some(total) => (total - k * mss).min(mss) as u32,
            None => mss as u32,
        }
    }

    #[inline]
    fn set_now(&mut self, now: Time) {
        self.tp.now_ns = now / 1_000;
        self.tp.now_us = now / PS_PER_US;
    }

    /// Segments the application has made available by `now`.
    fn app_avail(&self, now: Time) -> u64 {
        let avail = match self.cfg.app {
            App::Bulk => u64::MAX,
            App::Fixed { .. } => self.total_segs.unwrap_or(0),
            App::Rate { bps } => {
                let bytes = (bps as u128 * (now - self.start) as u128 / 8 / PS_PER_S as u128) as u64;
                bytes / self.cfg.mss as u64
            }
        };
        match self.stopped_at {
            Some(s) => avail.min(s),
            None => avail,
        }
    }

    /// When the rate-limited application will have the next segment ready.
    fn app_next_ready(&self) -> Option<Time> {
        match self.cfg.app {
            App::Rate { bps } if self.stopped_at.is_none() => {
                let need_bytes = (self.nxt + 1) as u128 * self.cfg.mss as u128;
                let t = (need_bytes * 8 * PS_PER_S as u128).div_ceil(bps as u128) as Time;
                Some(self.start + t)
            }
            _ => None,
        }
    }

    /// Whether the flow has nothing more to do (finished transfer or stopped and drained).
    pub fn finished(&self) -> bool {
        self.stats.completion.is_some()
    }

    pub fn start(&mut self, now: Time) {
        self.start = now;
        self.next_send = now;
        self.tp.wstamp_ns = now / PS_PER_NS;
        self.last_send = now;
        self.set_now(now);
        self.cc.init(&mut self.tp);
        if self.total_segs == Some(0) {
            self.stats.completion = Some(now);
            return;
        }
        self.try_send(now);
    }

    /// The application stops offering new data; data already offered is still delivered.
    pub fn stop(&mut self) {
        self.stopped_at = Some(self.nxt);
        self.timers[T_APP] = 0;
    }

    #[inline]
    fn rto_ps(&self) -> Time {
        let rto = (self.rtt.rto_us() << self.backoff.min(20)).min(RTO_MAX_US);
        rto * PS_PER_US
    }

    /// Packets counted against cwnd: RFC 6675 pipe in PRR mode, FlightSize in
    /// NewReno fast recovery.
    #[inline]
    fn window_used(&self) -> u32 {
        if self.cfg.recovery == Recovery::NewReno && self.tp.ca_state == CaState::Recovery {
            self.tp.packets_out
        } else {
            self.tp.packets_in_flight()
        }
    }

    /// The lowest segment marked lost and not yet retransmitted.
    fn next_lost(&mut self) -> Option<u64> {
        let mut k = self.rtx_hint.max(self.una);
        let end = self.lost_hi.min(self.nxt);
        while k < end {
            let f = self.seg(k).flags;
            if f & LOST != 0 && f & (RETRANS | SACKED) == 0 {
                self.rtx_hint = k;
                return Some(k);
            }
            k += 1;
        }
        self.rtx_hint = end;
        None
    }

    /// Sends what cwnd, the receive window, pacing and the application allow.
    pub fn try_send(&mut self, now: Time) {
        if self.finished() {
            return;
        }
        self.set_now(now);
        let mut cwnd_limited = false;
        self.tso_left = 0;
        loop {
            // NewReno retransmits the hole at once, whatever the window (RFC 6582 §3.2).
            let forced = self.cfg.recovery == Recovery::NewReno && self.tp.ca_state == CaState::Recovery;
            let lost = if forced || self.window_used() < self.tp.snd_cwnd { self.next_lost() } else { None };
            let (k, is_rtx) = match lost {
                Some(k) => (k, true),
                None => {
                    if self.window_used() >= self.tp.snd_cwnd {
                        cwnd_limited = true;
                        break;
                    }
                    if self.nxt >= self.app_avail(now) {
                        self.mark_app_limited();
                        if let Some(t) = self.app_next_ready() {
                            self.timers[T_APP] = t;
                        }
                        break;
                    }
                    // The receiver's window: the flow's limit, else the largest a
                    // TCP receiver can advertise (RFC 7323 §2.2: 2^30 bytes), and
                    // the window the receiver last advertised, if it does.
                    let rwnd = self.cfg.rwnd_bytes.unwrap_or(MAX_WINDOW_BYTES).min(self.snd_wnd);
                    if (self.nxt + 1 - self.una) * self.cfg.mss as u64 > rwnd {
                        break;
                    }
                    if self.shaped {
                        match self.shape(now, rwnd) {
                            Shape::Send => {}
                            Shape::Defer => {
                                cwnd_limited = true;
                                break;
                            }
                            Shape::Hold => break,
                        }
                    }
                    (self.nxt, false)
                }
            };
            if is_rtx && self.host.on && !self.pacing_waits(now) {
                if self.tsq_holds(1, true) {
                    break;
                }
                self.host_skb(k, 1, true);
            }
            if self.pacing_waits(now) {
                self.timers[T_PACE] = self.next_send;
                break;
            }
            self.transmit(now, k, is_rtx);
        }
        self.cwnd_validate(cwnd_limited);
    }

    /// TSO and TCP Small Queues before the next new segment: whether to send
    /// it, to defer (TSO), or to hold it until a TX completion (TSQ). A new
    /// skb is accounted below TCP as it is decided; all its segments are
    /// sent in this call.
    #[inline]
    fn shape(&mut self, now: Time, rwnd: u64) -> Shape {
        if self.cfg.tso.is_some() && !self.tp.paced {
            if self.tso_left == 0 {
                if self.tso_defer(now, rwnd) {
                    return Shape::Defer;
                }
                if self.host.on {
                    let segs = self.tso_left as u64;
                    if self.tsq_holds(segs, false) {
                        self.tso_left = 0;
                        return Shape::Hold;
                    }
                    self.host_skb(self.nxt, segs, false);
                }
            }
            self.tso_left = self.tso_left.saturating_sub(1);
        } else if self.host.on && !self.pacing_waits(now) {
            if self.tsq_holds(1, false) {
                return Shape::Hold;
            }
            self.host_skb(self.nxt, 1, false);
        }
        Shape::Send
    }

    /// The paced sender must wait before its next segment.
    #[inline]
    fn pacing_waits(&self, now: Time) -> bool {
        self.tp.paced && self.tp.pacing_rate > 0 && now < self.next_send
    }

    /// TCP Small Queues (`tcp_small_queue_check`, current form): whether the
    /// next skb, of `segs` segments, must wait for a TX completion because
    /// more than the limit is below TCP. It is sent anyway while the
    /// retransmission queue holds at most one skb (Linux
    /// `tcp_rtx_queue_empty_or_single_skb`; here: no segment in flight, or
    /// all of them sent in the newest skb).
    #[inline(never)]
    fn tsq_holds(&mut self, segs: u64, rtx: bool) -> bool {
        let truesize = segs * self.cfg.mss as u64 + SKB_OVERHEAD;
        let limit = tsq_limit(truesize, self.sk_pacing_rate(), self.tp.paced, self.cfg.tsq.unwrap_or(u64::MAX), rtx);
        if self.host.bytes <= limit || self.nxt == self.una || self.una >= self.host.newest_first {
            return false;
        }
        self.host.throttled = true;
        true
    }

    /// The socket's pacing rate, bytes/s: the algorithm's or the pacing
    /// sender's; for an unpaced socket Linux's `tcp_update_pacing_rate`
    /// value, from the current cwnd, packets out and srtt (Linux computes it
    /// on each ACK; the two differ only while more than cwnd is out).
    #[inline]
    fn sk_pacing_rate(&self) -> u64 {
        if self.tp.paced {
            self.tp.pacing_rate
        } else {
            self.linux_pacing_rate()
        }
    }

    /// A packet of this sender left the host (its NIC sent it, or the host
    /// queue dropped it). Frees the skb it ends; returns whether the sender
    /// was waiting for that and has tried to send (TSQ's TX-completion
    /// handler, `tcp_tsq_handler`).
    pub fn host_left(&mut self, now: Time, seg: u64) -> bool {
        match self.host.skbs.front() {
            Some(&(last, truesize)) if last == seg => {
                self.host.skbs.pop_front();
                self.host.bytes -= truesize;
            }
            _ => return false,
        }
        if !self.host.throttled {
            return false;
        }
        self.host.throttled = false;
        self.try_send(now);
        true
    }

    /// Bytes (truesize) of this sender's skbs in the host queue and NIC.
    pub fn host_bytes(&self) -> u64 {
        self.host.bytes
    }

    /// An skb of `segs` segments from `first` goes below TCP.
    fn host_skb(&mut self, first: u64, segs: u64, rtx: bool) {
        let truesize = segs * self.cfg.mss as u64 + SKB_OVERHEAD;
        self.host.skbs.push_back((first + segs - 1, truesize));
        self.host.bytes += truesize;
        if !rtx {
            self.host.newest_first = first;
        }
    }

    /// TSO of today's Linux: whether to wait for more ACKs before the next
    /// super-packet (`tcp_tso_should_defer` as of 6.18); if not, sizes the
    /// super-packet (`tcp_tso_autosize`, 5.18+, and `tcp_cwnd_test`'s
    /// half-window cap). Deferral needs all of: not in recovery; the last
    /// send less than 1 ms ago; the window allowing less than a super-packet
    /// and less than `1/win_divisor` of the window; data in flight whose ACK
    /// is due within min(srtt/2, 1 ms). There is no deferral timer: the next
    /// ACK or TX completion ends it. Linux's further case for an skb in the
    /// middle of the write queue (send if the window holds all of it) is left
    /// out: a bulk sender's skbs in the write queue are super-packet sized,
    /// so it coincides with the first.
    #[inline(never)]
    fn tso_defer_today(&mut self, now: Time, rwnd: u64, tso: Tso) -> bool {
        let mss = self.cfg.mss as u64;
        let cwnd = self.tp.snd_cwnd as u64;
        let cwnd_room = cwnd.saturating_sub(self.window_used() as u64);
        let rwnd_room = (rwnd / mss).saturating_sub(self.nxt - self.una);
        let room = cwnd_room.min(rwnd_room);
        let app_room = self.app_avail(now).saturating_sub(self.nxt);
        let goal = tso_autosize(self.sk_pacing_rate(), self.tp.min_rtt_us, mss, tso.max_segs as u64);
        let chunk = (rwnd / mss).min(cwnd) / tso.win_divisor.max(1) as u64;
        let srtt = self.tp.srtt_us * PS_PER_US;
        let defer = self.tp.ca_state < CaState::Recovery
            && now - self.last_send <= PS_PER_MS
            && room < goal
            && room < chunk
            && app_room > room
            && self.nxt > self.una
            && (self.seg(self.una).tx_time + srtt).saturating_sub(now) <= (srtt / 2).min(PS_PER_MS);
        if defer {
            return true;
        }
        // tcp_cwnd_test: at most half the window per skb, so that at least
        // two are in flight.
        let half = (cwnd >> 1).max(1);
        self.tso_left = room.min(app_room).min(goal).min(half) as u32;
        false
    }

    /// TSO: whether to wait for more ACKs before the next super-packet
    /// (`tcp_tso_should_defer` of Linux 2.6); if not, sizes the super-packet.
    #[inline(never)]
    fn tso_defer(&mut self, now: Time, rwnd: u64) -> bool {
        let tso = self.cfg.tso.expect("checked by the caller");
        if tso.era == Era::Today {
            return self.tso_defer_today(now, rwnd, tso);
        }
        let mss = self.cfg.mss as u64;
        let cwnd_room = self.tp.snd_cwnd.saturating_sub(self.window_used()) as u64;
        let rwnd_room = (rwnd / mss).saturating_sub(self.nxt - self.una);
        let room = cwnd_room.min(rwnd_room);
        let app_room = self.app_avail(now).saturating_sub(self.nxt);
        // A window's fraction, and the data the application has: send what there is.
        let chunk = (rwnd / mss).min(self.tp.snd_cwnd as u64) / tso.win_divisor.max(1) as u64;
        if room < tso.max_segs as u64 && room < chunk && app_room > room {
            if self.tso_deferred == 0 {
                self.tso_deferred = now.max(1);
            }
            if now - self.tso_deferred < tso.max_defer {
                return true;
            }
        }
        self.tso_deferred = 0;
        self.tso_left = room.min(app_room).min(tso.max_segs as u64) as u32;
        false
    }

    /// Linux `tcp_cwnd_validate`: remember whether the last window was cwnd-limited.
    fn cwnd_validate(&mut self, cwnd_limited: bool) {
        let tp = &mut self.tp;
        if self.una >= self.max_packets_seq || tp.packets_out > tp.max_packets_out {
            tp.max_packets_out = tp.packets_out;
            self.max_packets_seq = self.nxt;
            tp.is_cwnd_limited = cwnd_limited;
        } else {
            tp.is_cwnd_limited |= cwnd_limited;
        }
    }

    /// Linux `tcp_rate_check_app_limited`.
    fn mark_app_limited(&mut self) {
        let tp = &mut self.tp;
        if tp.packets_in_flight() < tp.snd_cwnd && tp.lost_out <= tp.retrans_out {
            tp.app_limited = (tp.delivered + tp.packets_in_flight() as u64).max(1);
        }
    }

    fn transmit(&mut self, now: Time, k: u64, is_rtx: bool) {
        if !is_rtx && self.nxt - self.una >= self.ring.len() as u64 {
            self.grow_ring();
        }
        if self.tp.packets_out == 0 {
            // Linux tcp_event_data_sent → CA_EVENT_TX_START after idle.
            let idle_us = (now - self.last_send) / PS_PER_US;
            self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart { idle_us });
            // Rate sampler: a new flight starts (tcp_rate_skb_sent).
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let stamp = Seg {
            tx_time: now,
            first_sent_time: self.first_sent_time,
            delivered_time: self.delivered_time,
            delivered: self.tp.delivered,
            lost: self.tp.lost,
            delivered_ce: self.tp.delivered_ce,
            in_flight: self.tp.packets_in_flight() + 1,
            flags: if self.tp.app_limited != 0 { APP_LIMITED } else { 0 },
        };
        if is_rtx {
            let s = self.seg_mut(k);
            let keep = s.flags & (LOST | SACKED);
            *s = Seg { flags: stamp.flags | keep | RETRANS | EVER_RETRANS, ..stamp };
            self.tp.retrans_out += 1;
            if self.cfg.recovery == Recovery::Prr {
                self.rtx_sent.push_back((k, now));
            }
            self.stats.retrans_pkts += 1;
        } else {
            *self.seg_mut(k) = stamp;
            self.nxt += 1;
            self.tp.packets_out += 1;
            self.tp.snd_nxt = self.nxt * self.cfg.mss as u64;
        }
        if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
            self.prr_out += 1;
        }
        let len = self.seg_len(k);
        let wire = len + self.cfg.header_bytes;
        let mut p = Packet::data(self.id, k, len, wire);
        p.retrans = is_rtx;
        if self.ecn {
            // Linux tcp_ecn_send: new data ECT, with CWR after a reduction;
            // retransmissions Not-ECT (RFC 3168 §6.1.5) unless the algorithm needs ECN.
            p.ect = !is_rtx || self.needs_ecn;
            p.ect1 = self.ect1;
            if !is_rtx && self.queue_cwr {
                p.cwr = true;
                self.queue_cwr = false;
            }
        }
        self.cc.on_send(&self.tp, &mut p.hdr);
        self.out.push(p);
        self.stats.sent_pkts += 1;
        self.last_send = now;
        if self.tp.paced && self.tp.pacing_rate > 0 {
            // Earliest departure time of the next packet (Linux
            // tcp_update_skb_after_send): the rate applies to the payload
            // (skb->len), as the rates algorithms compute are mss-based.
            let gap = (len as u128 * PS_PER_S as u128 / self.tp.pacing_rate as u128) as Time;
            self.next_send = self.next_send.max(now) + gap;
            self.tp.wstamp_ns = self.next_send / PS_PER_NS;
        }
        if self.timers[T_RTO] == 0 {
            self.timers[T_RTO] = now + self.rto_ps();
        }
    }

    /// Marks segment k delivered for the rate sampler (Linux `tcp_rate_skb_delivered`).
    #[inline]
    fn rate_delivered(&mut self, s: Seg, rs: &mut RateSample, newest: &mut Option<Time>) {
        if newest.is_none_or(|t| s.tx_time >= t) {
            *newest = Some(s.tx_time);
            rs.prior_delivered = s.delivered;
            rs.prior_mstamp_us = s.delivered_time / PS_PER_US;
            rs.is_app_limited = s.flags & APP_LIMITED != 0;
            rs.is_retrans = s.flags & EVER_RETRANS != 0;
            self.first_sent_time = s.tx_time;
            rs.snd_interval_us = (s.tx_time - s.first_sent_time) / PS_PER_US;
            rs.tx_in_flight = s.in_flight;
            self.rate_prior_time = s.delivered_time;
            self.rate_prior_lost = s.lost;
            self.rate_prior_delivered_ce = s.delivered_ce;
        }
    }

    /// Linux `tcp_rack_advance` (RFC 8985 §6.2 step 2): segment k, sent at
    /// `s.tx_time`, was just delivered. A retransmitted segment delivered
    /// sooner than min_rtt after its last transmission may be the original's
    /// ACK, so it does not move RACK. With no retransmission in flight
    /// RACK has nothing to judge, and a delivery now cannot have been sent
    /// after a retransmission yet to come, so RACK is left as it is.
    #[inline]
    fn rack_advance(&mut self, now: Time, k: u64, s: &Seg) {
        if self.rtx_sent.is_empty() {
            return;
        }
        let rtt = now - s.tx_time;
        if s.flags & EVER_RETRANS != 0 && self.tp.min_rtt_us != u64::MAX && rtt < self.tp.min_rtt_us * PS_PER_US {
            return;
        }
        self.rack_advanced = true;
        self.rack_rtt = rtt;
        if s.tx_time > self.rack_xmit || (s.tx_time == self.rack_xmit && k > self.rack_end) {
            self.rack_xmit = s.tx_time;
            self.rack_end = k;
        }
    }

    /// Linux `tcp_rack_reo_wnd`: the reordering window, ps. The simulated
    /// paths never reorder (Linux's `reord_seen` stays 0), so it is zero in
    /// recovery or once three segments are SACKed, else min(min_rtt/4, srtt).
    fn rack_reo_wnd(&self) -> Time {
        if self.tp.ca_state >= CaState::Recovery || self.tp.sacked_out >= 3 || self.tp.min_rtt_us == u64::MAX {
            return 0;
        }
        (self.tp.min_rtt_us / 4).min(self.tp.srtt_us) * PS_PER_US
    }

    /// Linux `tcp_rack_mark_lost` for retransmissions (RFC 8985 §6.2 step
    /// 5): a retransmission still in flight is lost if a segment sent after
    /// it has been delivered and RACK.rtt + reo_wnd has passed since it was
    /// sent. It is marked lost again (Linux `tcp_mark_skb_lost`: it stays
    /// counted in `lost_out`, leaves `retrans_out`, and `tp.lost` and the
    /// algorithm hear of it) so recovery sends it once more. Returns the
    /// number marked.
    fn rack_mark_lost_retrans(&mut self, now: Time) -> u32 {
        if !self.rack_advanced {
            return 0;
        }
        self.rack_advanced = false;
        let reo_wnd = self.rack_reo_wnd();
        let mut newly = 0;
        // In send order, so the first retransmission that is not yet lost
        // ends the walk: every later one was sent later still.
        while let Some(&(k, tx)) = self.rtx_sent.front() {
            let in_flight = k >= self.una && {
                let s = self.seg(k);
                s.flags & RETRANS != 0 && s.tx_time == tx
            };
            if in_flight {
                let sent_before = tx < self.rack_xmit || (tx == self.rack_xmit && k < self.rack_end);
                if !sent_before || now < tx + self.rack_rtt + reo_wnd {
                    break;
                }
                self.seg_mut(k).flags &= !RETRANS;
                self.tp.retrans_out -= 1;
                self.tp.lost += 1;
                self.rtx_hint = self.rtx_hint.min(k);
                self.notify_lost(k);
                newly += 1;
            }
            self.rtx_sent.pop_front();
        }
        newly
    }

    /// Processes an ACK carrying cumulative ACK `cum` (segments), SACK blocks and an ECN echo.
    pub fn on_ack(&mut self, now: Time, pkt: &Packet) {
        if self.finished() {
            return;
        }
        self.set_now(now);
        let cum = pkt.seg.min(self.nxt);
        if let Some(w) = self.cfg.peer_window {
            if cum >= self.una {
                // Linux tcp_ack_update_window: ACKs arrive in order here, so the
                // latest one that is not older than snd_una carries the window.
                self.snd_wnd = (pkt.window as u64) << w.wscale;
            }
        }
        let prior_in_flight = self.tp.packets_in_flight();
        let prior_sacked = self.tp.sacked_out;
        let prior_una = self.una;
        let mut rs = RateSample { prior_in_flight, rtt_us: -1, ..RateSample::default() };
        let mut newest: Option<Time> = None;
        // Karn: RTT from the newest newly delivered segment never retransmitted.
        let mut rtt_from: Option<Time> = None;
        let mut acked_sacked: u32 = 0;
        // AccECN counts delivered bytes: is a short last segment still undelivered?
        let last_pending = self.accecn && self.short_last_pending();

        // Cumulative part.
        for k in self.una..cum {
            let s = *self.seg(k);
            if s.flags & SACKED != 0 {
                self.tp.sacked_out -= 1;
            } else {
                acked_sacked += 1;
                self.rate_delivered(s, &mut rs, &mut newest);
                self.rack_advance(now, k, &s);
                if s.flags & EVER_RETRANS == 0 {
                    rtt_from = Some(rtt_from.map_or(s.tx_time, |t: Time| t.max(s.tx_time)));
                }
            }
            if s.flags & LOST != 0 && s.flags & SACKED == 0 {
                self.tp.lost_out -= 1;
            }
            if s.flags & RETRANS != 0 {
                self.tp.retrans_out -= 1;
            }
        }
        let una_advanced = cum > self.una;
        if una_advanced {
            self.una = cum;
            self.tp.snd_una = cum * self.cfg.mss as u64;
            self.tp.packets_out = (self.nxt - self.una) as u32;
            while let Some(&(s, e)) = self.sacked.first() {
                if e <= cum {
                    self.sacked.remove(0);
                } else {
                    if s < cum {
                        self.sacked[0].0 = cum;
                    }
                    break;
                }
            }
        }

        // Selective part (ignored by NewReno recovery).
        if self.cfg.recovery == Recovery::Prr {
            for b in 0..pkt.nsack as usize {
                let (s, e) = pkt.sack[b];
                let (s, e) = (s.max(self.una), e.min(self.nxt));
                if s < e {
                    acked_sacked += self.sack_range(now, s, e, &mut rs, &mut newest, &mut rtt_from);
                }
            }
        }

        // Newly CE-marked packets: AccECN's count, or every packet an ECE covers.
        let mut ece_delta = 0;
        if acked_sacked > 0 {
            self.tp.delivered += acked_sacked as u64;
            self.delivered_time = now;
            if self.accecn {
                ece_delta = self.accecn_process(pkt, acked_sacked, last_pending);
            } else if pkt.ece {
                ece_delta = acked_sacked;
            }
            self.tp.delivered_ce += ece_delta as u64;
        }
        let ece_flag = if self.accecn { ece_delta > 0 } else { pkt.ece };
        let newly_lost = if self.cfg.recovery == Recovery::Prr {
            self.mark_lost_sack() + self.rack_mark_lost_retrans(now)
        } else {
            0
        };

        // RTT.
        let mut rtt_us: i64 = -1;
        if let Some(t) = rtt_from {
            let m = ((now - t) / PS_PER_US).max(1);
            rtt_us = m as i64;
            self.rtt.sample(m, self.una, self.nxt);
            self.tp.srtt_us = self.rtt.srtt_us();
            self.tp.min_rtt_us = self.tp.min_rtt_us.min(m);
            self.rtt_hist.record(m);
        }

        // Rate sample (Linux tcp_rate_gen).
        if self.tp.app_limited != 0 && self.tp.delivered > self.tp.app_limited {
            self.tp.app_limited = 0;
        }
        rs.acked_sacked = acked_sacked;
        rs.losses = newly_lost;
        rs.rtt_us = rtt_us;
        // Linux FLAG_ACK_MAYBE_DELAYED (tcp_clean_rtx_queue): only an ACK of
        // one lone sub-MSS segment, with nothing SACKed, may have been held
        // back by the receiver.
        rs.is_ack_delayed = acked_sacked == 1
            && cum == prior_una + 1
            && prior_sacked == 0
            && self.seg_len(prior_una) < self.cfg.mss
            && newest.is_some()
            && rs.prior_delivered + 1 == self.tp.delivered;
        rs.is_ece = ece_flag;
        rs.ece_delta = ece_delta;
        if newest.is_none() {
            rs.delivered = -1;
            rs.interval_us = -1;
        } else {
            rs.delivered = (self.tp.delivered - rs.prior_delivered) as i64;
            rs.delivered_ce = (self.tp.delivered_ce - self.rate_prior_delivered_ce) as i64;
            rs.lost = (self.tp.lost - self.rate_prior_lost).min(u32::MAX as u64) as u32;
            rs.rcv_interval_us = (now - self.rate_prior_time) / PS_PER_US;
            let interval = rs.snd_interval_us.max(rs.rcv_interval_us);
            rs.interval_us = interval as i64;
            if self.tp.min_rtt_us != u64::MAX && interval < self.tp.min_rtt_us {
                rs.interval_us = -1;
            } else if !rs.is_app_limited
                || (rs.delivered as u64) * self.rate_interval_us >= self.rate_delivered * interval
            {
                self.rate_delivered = rs.delivered as u64;
                self.rate_interval_us = interval;
                self.rate_app_limited = rs.is_app_limited;
            }
        }

        if acked_sacked > 0 || rtt_us >= 0 {
            let sample = AckSample {
                acked: acked_sacked,
                rtt_us,
                in_flight: prior_in_flight,
                ece: ece_flag,
                feedback: pkt.hdr.has_feedback.then_some(pkt.hdr.feedback),
            };
            self.cc.pkts_acked(&mut self.tp, &sample);
        }

        // Retransmission timer: restart on forward progress (RFC 6298 §5.3),
        // except that NewReno's "impatient" variant restarts it only on the
        // first partial ACK of a recovery (RFC 6582 §4.3), so a window with
        // many losses falls back to a timeout instead of one hole per RTT.
        if una_advanced {
            self.backoff = 0;
            let partial = self.cfg.recovery == Recovery::NewReno
                && self.tp.ca_state == CaState::Recovery
                && self.una < self.high_seq;
            if !partial || !self.partial_acked {
                self.timers[T_RTO] = if self.tp.packets_out > 0 { now + self.rto_ps() } else { 0 };
            }
            self.partial_acked |= partial;
        }

        let ece = self.ecn && ece_flag;
        match self.cfg.recovery {
            Recovery::Prr => self.state_machine_sack(&rs, acked_sacked, newly_lost, una_advanced, ece),
            Recovery::NewReno => self.state_machine_newreno(pkt, prior_una, acked_sacked, ece),
        }

        // Completion of a fixed-size transfer.
        if let Some(total) = self.total_segs {
            if self.una >= total && self.stats.completion.is_none() {
                self.stats.completion = Some(now);
                self.timers = [0; 3];
                return;
            }
        }
        if self.tp.paced && !self.cc_controls {
            self.update_pacing_rate();
        }
        self.try_send(now);
    }

    /// Whether the last segment of a fixed-size transfer is shorter than an
    /// MSS, sent, and not yet delivered.
    fn short_last_pending(&self) -> bool {
        match self.total_segs {
            Some(n) if n > 0 && n <= self.nxt && self.una < n => {
                self.seg_len(n - 1) < self.cfg.mss && self.seg(n - 1).flags & SACKED == 0
            }
            _ => false,
        }
    }

    /// AccECN: the packets this ACK reports newly CE-marked (Linux
    /// `tcp_accecn_process`), from `acked_sacked` packets newly delivered.
    fn accecn_process(&mut self, pkt: &Packet, acked_sacked: u32, last_pending: bool) -> u32 {
        let mss = self.cfg.mss;
        let mut bytes = acked_sacked as u64 * mss as u64;
        if last_pending && !self.short_last_pending() {
            let n = self.total_segs.unwrap_or(0);
            bytes -= (mss - self.seg_len(n - 1)) as u64;
        }
        let facts = AckFacts {
            delivered_pkts: acked_sacked,
            delivered_bytes: bytes,
            mss,
            sack_or_open: self.cfg.recovery == Recovery::Prr
                || matches!(self.tp.ca_state, CaState::Open | CaState::Cwr),
        };
        self.acc.process(pkt.ace(), &pkt.accecn_option(), facts)
    }

    /// The sender's mirror of the receiver's AccECN counters.
    pub fn accecn_mirror(&self) -> Option<&Mirror> {
        self.accecn.then_some(&self.acc)
    }

    /// Marks [s, e) SACKed where it is not yet; returns the count newly SACKed.
    fn sack_range(
        &mut self,
        now: Time,
        s: u64,
        e: u64,
        rs: &mut RateSample,
        newest: &mut Option<Time>,
        rtt_from: &mut Option<Time>,
    ) -> u32 {
        let mut newly = 0u32;
        // Walk the gaps of [s, e) not covered by existing ranges.
        let mut pos = s;
        let mut i = self.sacked.partition_point(|&(_, re)| re <= s);
        while pos < e {
            let gap_end = match self.sacked.get(i) {
                Some(&(rs_, re)) if rs_ <= pos => {
                    pos = re;
                    i += 1;
                    continue;
                }
                Some(&(rs_, _)) => rs_.min(e),
                None => e,
            };
            for k in pos..gap_end {
                let seg = *self.seg(k);
                let f = seg.flags;
                if f & LOST != 0 {
                    self.tp.lost_out -= 1;
                }
                if f & RETRANS != 0 {
                    self.tp.retrans_out -= 1;
                }
                self.seg_mut(k).flags = (f & !(LOST | RETRANS)) | SACKED;
                self.tp.sacked_out += 1;
                newly += 1;
                self.rate_delivered(seg, rs, newest);
                self.rack_advance(now, k, &seg);
                if f & EVER_RETRANS == 0 {
                    *rtt_from = Some(rtt_from.map_or(seg.tx_time, |t| t.max(seg.tx_time)));
                }
            }
            pos = gap_end;
        }
        if newly > 0 {
            self.insert_sacked(s, e);
        }
        newly
    }

    /// Merges [s, e) into the sorted SACKed ranges.
    fn insert_sacked(&mut self, s: u64, e: u64) {
        let lo = self.sacked.partition_point(|&(_, re)| re < s);
        let hi = self.sacked.partition_point(|&(rs, _)| rs <= e);
        if lo == hi {
            self.sacked.insert(lo, (s, e));
        } else {
            let ns = s.min(self.sacked[lo].0);
            let ne = e.max(self.sacked[hi - 1].1);
            self.sacked[lo] = (ns, ne);
            self.sacked.drain(lo + 1..hi);
        }
    }

    /// RFC 6675 IsLost: a segment with at least DupThresh (3) SACKed segments
    /// above it is lost. Returns the number of segments newly marked.
    fn mark_lost_sack(&mut self) -> u32 {
        const DUP_THRESH: u64 = 3;
        let mut need = DUP_THRESH;
        let mut boundary = None;
        for &(s, e) in self.sacked.iter().rev() {
            let len = e - s;
            if len >= need {
                boundary = Some(e - need);
                break;
            }
            need -= len;
        }
        let Some(b) = boundary else { return 0 };
        let from = self.lost_hint.max(self.una);
        let mut newly = 0;
        let mut first = None;
        for k in from..b {
            let f = self.seg(k).flags;
            if f & (SACKED | LOST) == 0 {
                self.seg_mut(k).flags = f | LOST;
                self.tp.lost_out += 1;
                self.tp.lost += 1;
                newly += 1;
                first.get_or_insert(k);
                self.notify_lost(k);
            }
        }
        self.lost_hint = self.lost_hint.max(b);
        self.lost_hi = self.lost_hi.max(b);
        if let Some(k) = first {
            self.rtx_hint = self.rtx_hint.min(k);
        }
        newly
    }

    /// Tells the algorithm that segment k was just marked lost (google/bbr
    /// v3 `tcp_notify_skb_loss_event` → `skb_marked_lost`); `tp.lost`
    /// already counts it.
    fn notify_lost(&mut self, k: u64) {
        let s = *self.seg(k);
        let rs = RateSample {
            tx_in_flight: s.in_flight,
            lost: (self.tp.lost - s.lost).min(u32::MAX as u64) as u32,
            is_app_limited: s.flags & APP_LIMITED != 0,
            rtt_us: -1,
            delivered: -1,
            interval_us: -1,
            ..RateSample::default()
        };
        self.cc.skb_marked_lost(&mut self.tp, &rs);
    }

    fn mark_lost_one(&mut self, k: u64) {
        let f = self.seg(k).flags;
        if f & (LOST | SACKED) == 0 {
            self.seg_mut(k).flags = f | LOST;
            self.tp.lost_out += 1;
            self.tp.lost += 1;
            self.notify_lost(k);
        }
        // A NewReno partial ACK asks for the hole again even if it was resent.
        if f & RETRANS != 0 {
            self.seg_mut(k).flags &= !RETRANS;
            self.tp.retrans_out -= 1;
        }
        self.lost_hi = self.lost_hi.max(k + 1);
        self.rtx_hint = self.rtx_hint.min(k);
    }

    fn enter_recovery(&mut self) {
        self.stats.fast_recoveries += 1;
        // Linux tcp_enter_recovery: inside a CWR episode the window has
        // already been cut for this window of data.
        if self.tp.ca_state != CaState::Cwr {
            self.tp.prior_ssthresh = self.tp.snd_ssthresh;
            self.init_cwnd_reduction();
        }
        self.partial_acked = false;
        self.cc.set_state(&mut self.tp, CaState::Recovery);
        self.tp.ca_state = CaState::Recovery;
    }

    /// An ECN echo in Open or Disorder: reduce the window without a
    /// retransmission (Linux `tcp_enter_cwr` → `tcp_init_cwnd_reduction`).
    fn enter_cwr(&mut self) {
        self.stats.ecn_reductions += 1;
        self.tp.prior_ssthresh = 0;
        self.tp.snd_cwnd_cnt = 0;
        self.init_cwnd_reduction();
        self.cc.set_state(&mut self.tp, CaState::Cwr);
        self.tp.ca_state = CaState::Cwr;
    }

    /// A window reduction starts (Linux `tcp_init_cwnd_reduction`, without
    /// its reset of `snd_cwnd_cnt`, which only CWR does here): the window
    /// of data it covers ends at `high_seq`, PRR starts from the current
    /// cwnd, the algorithm sets ssthresh, and the next new segment says CWR.
    fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.nxt;
        self.tp.prior_cwnd = self.tp.snd_cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
        self.queue_cwr = self.ecn && !self.accecn;
    }

    /// Linux `tcp_end_cwnd_reduction`: cwnd settles at ssthresh (algorithms
    /// with `cong_control` keep their own), then back to Open.
    fn end_cwnd_reduction(&mut self) {
        if !self.cc_controls && self.tp.snd_ssthresh < INFINITE_SSTHRESH {
            self.tp.snd_cwnd = self.tp.snd_ssthresh;
        }
        self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
        self.enter_open();
    }

    /// Back to Open: recovery or the loss state is over.
    fn enter_open(&mut self) {
        self.cc.set_state(&mut self.tp, CaState::Open);
        self.tp.ca_state = CaState::Open;
    }

    /// Loss state machine and window update with SACK and PRR (Linux
    /// `tcp_fastretrans_alert` then `tcp_cong_control`).
    fn state_machine_sack(
        &mut self,
        rs: &RateSample,
        acked_sacked: u32,
        newly_lost: u32,
        una_advanced: bool,
        ece: bool,
    ) {
        match self.tp.ca_state {
            CaState::Recovery if self.una >= self.high_seq => self.end_cwnd_reduction(),
            CaState::Loss if self.una >= self.high_seq => self.enter_open(),
            // CWR holds until something above high_seq is acknowledged, so
            // the segment carrying CWR has reached the receiver.
            CaState::Cwr if self.una > self.high_seq => self.end_cwnd_reduction(),
            _ => {}
        }
        let reducible = matches!(self.tp.ca_state, CaState::Open | CaState::Disorder);
        if (reducible || self.tp.ca_state == CaState::Cwr) && self.tp.lost_out > 0 {
            self.enter_recovery();
        } else if reducible && ece {
            self.enter_cwr();
        }
        self.cc_controls = self.cc.cong_control(&mut self.tp, rs);
        if self.cc_controls {
            return;
        }
        if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
            self.prr(acked_sacked, newly_lost, una_advanced);
        } else if acked_sacked > 0 {
            self.cc.cong_avoid(&mut self.tp, acked_sacked);
        }
    }

    /// The latest delivery-rate estimate not limited by the application
    /// (Linux `tcp_info.tcpi_delivery_rate`), bytes per second.
    pub fn delivery_rate(&self) -> u64 {
        if self.rate_interval_us == 0 {
            return 0;
        }
        self.rate_delivered * self.cfg.mss as u64 * 1_000_000 / self.rate_interval_us
    }

    /// RFC 6937 Proportional Rate Reduction with the slow-start reduction
    /// bound, as Linux `tcp_cwnd_reduction`.
    fn prr(&mut self, acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
        if acked_sacked == 0 || self.tp.prior_cwnd == 0 {
            return;
        }
        self.prr_delivered += acked_sacked;
        let in_flight = self.tp.packets_in_flight() as i64;
        let ssthresh = self.tp.snd_ssthresh as i64;
        let delta = ssthresh - in_flight;
        let mut sndcnt: i64 = if delta < 0 {
            // Proportional part: send ssthresh/RecoverFS per packet delivered.
            let dividend = ssthresh as u64 * self.prr_delivered as u64 + self.tp.prior_cwnd as u64 - 1;
            (dividend / self.tp.prior_cwnd as u64) as i64 - self.prr_out as i64
        } else {
            // Slow-start reduction bound.
            let mut s = (self.prr_delivered as i64 - self.prr_out as i64).max(acked_sacked as i64);
            if una_advanced && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        // Force the fast retransmission on entry.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.tp.snd_cwnd = (in_flight + sndcnt).max(1) as u32;
    }

    /// RFC 6582 NewReno fast recovery, driven by duplicate ACKs.
    fn state_machine_newreno(&mut self, pkt: &Packet, prior_una: u64, acked: u32, ece: bool) {
        let newly = self.una - prior_una;
        if self.tp.ca_state == CaState::Loss && self.una >= self.high_seq {
            self.enter_open();
        }
        if self.tp.ca_state == CaState::Cwr && self.una > self.high_seq {
            self.end_cwnd_reduction();
        }
        if ece && matches!(self.tp.ca_state, CaState::Open | CaState::Disorder) {
            self.enter_cwr();
        }
        if newly > 0 {
            self.dupacks = 0;
            if self.tp.ca_state == CaState::Cwr {
                self.prr(acked, 0, true);
                return;
            }
            if self.tp.ca_state == CaState::Recovery {
                if self.una >= self.high_seq {
                    // Full ACK: deflate to ssthresh and leave recovery.
                    self.tp.snd_cwnd = self.tp.snd_ssthresh;
                    self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
                    self.enter_open();
                } else {
                    // Partial ACK: retransmit the next hole; deflate by the amount
                    // acknowledged, add back one segment.
                    let k = self.una;
                    self.mark_lost_one(k);
                    let cwnd = self.tp.snd_cwnd as i64 - newly as i64 + 1;
                    self.tp.snd_cwnd = cwnd.max(1) as u32;
                }
                return;
            }
            self.cc.cong_avoid(&mut self.tp, acked);
            return;
        }
        let is_dup = pkt.seg == self.una && self.tp.packets_out > 0 && pkt.payload == 0;
        if !is_dup {
            return;
        }
        self.dupacks += 1;
        match self.tp.ca_state {
            CaState::Recovery => self.tp.snd_cwnd += 1,
            // RFC 6582 §3.2 step 1: only for a hole above the last recovery
            // point; inside a CWR episode the point is the episode's own.
            CaState::Open | CaState::Disorder | CaState::Cwr
                if self.dupacks == 3 && (self.una >= self.high_seq || self.tp.ca_state == CaState::Cwr) =>
            {
                self.enter_recovery();
                self.high_seq = self.nxt;
                self.tp.snd_cwnd = self.tp.snd_ssthresh + 3;
                let k = self.una;
                self.mark_lost_one(k);
            }
            _ => {}
        }
    }

    /// Retransmission timeout (RFC 6298 §5, Linux `tcp_enter_loss`).
    pub fn on_rto(&mut self, now: Time) {
        if self.tp.packets_out == 0 || self.finished() {
            return;
        }
        self.set_now(now);
        self.stats.timeouts += 1;
        // Linux reduces ssthresh once per window of data: not again when the
        // timer fires in a CWR or recovery episode (or a loss episode with a
        // timeout retransmitted) whose window is still outstanding.
        let reduce = matches!(self.tp.ca_state, CaState::Open | CaState::Disorder)
            || self.una >= self.high_seq
            || (self.tp.ca_state == CaState::Loss && self.backoff == 0);
        if reduce {
            self.tp.prior_ssthresh = self.tp.snd_ssthresh;
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
            self.cc.cwnd_event(&mut self.tp, CaEvent::Loss);
        }
        // Everything not SACKed is lost; retransmissions in flight are forgotten.
        for k in self.una..self.nxt {
            let f = self.seg(k).flags;
            let mut nf = f & !RETRANS;
            if f & SACKED == 0 && f & LOST == 0 {
                nf |= LOST;
                self.tp.lost_out += 1;
                self.tp.lost += 1;
            }
            self.seg_mut(k).flags = nf;
        }
        self.tp.retrans_out = 0;
        self.rtx_sent.clear();
        self.lost_hint = self.nxt;
        self.lost_hi = self.nxt;
        self.rtx_hint = self.una;
        self.dupacks = 0;
        self.tp.snd_cwnd = self.tp.packets_in_flight() + 1;
        self.tp.snd_cwnd_cnt = 0;
        self.cc.set_state(&mut self.tp, CaState::Loss);
        self.tp.ca_state = CaState::Loss;
        self.high_seq = self.nxt;
        self.queue_cwr = self.ecn && !self.accecn;
        self.backoff += 1;
        self.timers[T_RTO] = now + self.rto_ps();
        // The paced release time is reset so the retransmission leaves now.
        self.next_send = now;
        self.tp.wstamp_ns = now / PS_PER_NS;
        self.try_send(now);
    }

    /// Linux `tcp_update_pacing_rate` for algorithms that do not set their
    /// own rate: 200 % of cwnd/srtt in slow start, 120 % in congestion avoidance.
    fn update_pacing_rate(&mut self) {
        let tp = &mut self.tp;
        if tp.srtt_us == 0 {
            return;
        }
        let ratio: u64 = if tp.snd_cwnd < tp.snd_ssthresh / 2 { 200 } else { 120 };
        let w = tp.snd_cwnd.max(tp.packets_out) as u64;
        tp.pacing_rate = (tp.mss as u128 * w as u128 * ratio as u128 * 1_000_000 / 100 / tp.srtt_us as u128) as u64;
    }

    /// The same rate for an unpaced socket's `sk_pacing_rate` (which sizes
    /// its super-packets and its TSQ limit); unchanged before an RTT sample.
    fn linux_pacing_rate(&self) -> u64 {
        let tp = &self.tp;
        if tp.srtt_us == 0 {
            return self.host.rate;
        }
        let ratio: u64 = if tp.snd_cwnd < tp.snd_ssthresh / 2 { 200 } else { 120 };
        let w = tp.snd_cwnd.max(tp.packets_out) as u64;
        (tp.mss as u128 * w as u128 * ratio as u128 * 1_000_000 / 100 / tp.srtt_us as u128) as u64
    }

    /// Timer expiry dispatch for the sender's slots.
    pub fn on_timer(&mut self, now: Time, slot: usize) {
        match slot {
            T_RTO => self.on_rto(now),
            _ => self.try_send(now),
        }
    }

    /// Segments sent and not cumulatively acknowledged.
    pub fn packets_out(&self) -> u32 {
        self.tp.packets_out
    }

    /// Highest segment sent + 1.
    pub fn snd_nxt(&self) -> u64 {
        self.nxt
    }

    /// SACK blocks are limited to this many per ACK.
    pub const MAX_SACK_BLOCKS: usize = MAX_SACK;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::PS_PER_MS;

    fn sender(recovery: Recovery, cwnd: u32) -> Sender {
        let cfg = SenderConfig { recovery, ..SenderConfig::bulk(1000, 40, cwnd) };
        let mut s = Sender::new(0, cfg, cc::build("reno", &[]).unwrap());
        s.tp.snd_ssthresh = cwnd; // in congestion avoidance from the start
        s.start(0);
        s
    }

    fn ack(cum: u64, sacks: &[(u64, u64)]) -> Packet {
        let mut p = Packet::ack(0, cum, 40);
        for (i, &b) in sacks.iter().enumerate() {
            p.sack[i] = b;
        }
        p.nsack = sacks.len() as u8;
        p
    }

    fn sent(s: &mut Sender) -> Vec<(u64, bool)> {
        s.out.drain(..).map(|p| (p.seg, p.retrans)).collect()
    }

    fn ecn_sender(recovery: Recovery, cwnd: u32) -> Sender {
        let mut s = sender(Recovery::Prr, 1);
        s.cfg.ecn = true;
        s.cfg.recovery = recovery;
        s.cfg.init_cwnd = cwnd;
        let cfg = s.cfg.clone();
        let mut s = Sender::new(0, cfg, cc::build("reno", &[]).unwrap());
        s.tp.snd_ssthresh = cwnd;
        s.start(0);
        s
    }

    fn ece(cum: u64) -> Packet {
        let mut p = ack(cum, &[]);
        p.ece = true;
        p
    }

    // RFC 3168 §6.1.2 (one reduction per window of data): a Reno sender at cwnd 40
    // gets an ECE: ssthresh 20, CWR on the next new segment, nothing
    // retransmitted; further echoes for the same window change nothing; cwnd
    // is 20 once the window ends, and a later echo cuts again.
    // A receiver advertising a window holds the sender to it: 10 segments of
    // 1000 bytes in the SYN's 10,000-byte window whatever cwnd allows, then
    // up to each ACK's window (scale 10: the field counts KiB) beyond snd_una.
    #[test]
    fn the_advertised_window_holds_the_sender() {
        let peer = PeerWindow { initial: 10_000, wscale: 10 };
        let cfg = SenderConfig { peer_window: Some(peer), ..SenderConfig::bulk(1000, 40, 40) };
        let mut s = Sender::new(0, cfg, cc::build("reno", &[]).unwrap());
        s.start(0);
        assert_eq!(sent(&mut s).len(), 10);
        let mut a = ack(2, &[]);
        a.window = 20; // 20,480 bytes from segment 2: segments up to 21
        s.on_ack(PS_PER_MS, &a);
        let more = sent(&mut s);
        assert_eq!(more.last().map(|p| p.0), Some(21));
        // Without a peer window the same sender fills its cwnd of 40.
        let mut s = sender(Recovery::Prr, 40);
        assert_eq!(sent(&mut s).len(), 40);
    }

    #[test]
    fn ecn_echo_halves_once_per_window_without_retransmitting() {
        for recovery in [Recovery::Prr, Recovery::NewReno] {
            let mut s = ecn_sender(recovery, 40);
            let first: Vec<Packet> = s.out.drain(..).collect();
            assert_eq!(first.len(), 40);
            assert!(first.iter().all(|p| p.ect && !p.cwr), "{recovery:?}: new data is ECT");
            let mut t = 100 * PS_PER_MS;
            s.on_ack(t, &ece(2));
            assert_eq!(s.tp.ca_state, CaState::Cwr, "{recovery:?}");
            assert_eq!(s.tp.snd_ssthresh, 20, "{recovery:?}");
            assert_eq!(s.stats.ecn_reductions, 1);
            let mut cwr_seen = 0;
            let mut sent_new = 0;
            for k in 3..=40u64 {
                for p in s.out.drain(..) {
                    assert!(!p.retrans, "{recovery:?}: no retransmission");
                    cwr_seen += p.cwr as u32;
                    sent_new += 1;
                }
                t += PS_PER_MS;
                // Every ACK of the old window still echoes CE.
                s.on_ack(t, &ece(k));
                assert_eq!(s.tp.snd_ssthresh, 20, "{recovery:?}: one cut per window (ACK {k})");
            }
            assert_eq!(cwr_seen, 1, "{recovery:?}: CWR on exactly one segment");
            assert_eq!(s.stats.ecn_reductions, 1);
            assert!(s.tp.snd_cwnd <= 21, "{recovery:?}: cwnd {} after the window", s.tp.snd_cwnd);
            assert!((18..=22).contains(&sent_new), "{recovery:?}: {sent_new} sent while reducing");
            // The first ACK above the CWR point ends the episode at cwnd = ssthresh.
            t += PS_PER_MS;
            s.on_ack(t, &ack(41, &[]));
            assert_eq!(s.tp.ca_state, CaState::Open, "{recovery:?}");
            assert_eq!(s.tp.snd_cwnd, 20, "{recovery:?}");
            s.out.clear();
            t += PS_PER_MS;
            s.on_ack(t, &ece(42));
            assert_eq!((s.tp.ca_state, s.tp.snd_ssthresh), (CaState::Cwr, 10), "{recovery:?}");
            assert_eq!(s.stats.ecn_reductions, 2);
            assert_eq!(s.stats.retrans_pkts, 0);
        }
    }

    fn accecn_sender(cc: &str, cwnd: u32) -> Sender {
        let mut s = sender(Recovery::Prr, 1);
        s.cfg.accecn = true;
        s.cfg.init_cwnd = cwnd;
        let cfg = s.cfg.clone();
        let mut s = Sender::new(0, cfg, cc::build(cc, &[]).unwrap());
        s.tp.snd_ssthresh = cwnd;
        s.start(0);
        s
    }

    /// An ACK up to `cum` from a receiver that has counted `ce` CE packets
    /// and `ceb` CE bytes (ACE and the option's fields as it writes them).
    fn accecn_ack(cum: u64, ce: u64, ceb: Option<u64>) -> Packet {
        let mut p = ack(cum, &[]);
        let c = crate::tcp::accecn::Counters { cep: ce, ceb: ceb.unwrap_or(0), fields: 2, ..Default::default() };
        p.set_ace(c.ace());
        if ceb.is_some() {
            p.set_accecn_option(c.option(3));
        }
        p
    }

    // RFC 9768 negotiation reduced to settings: AccECN needs both ends;
    // otherwise RFC 3168, except for an algorithm that needs AccECN (Linux
    // TCP_CONG_NO_FALLBACK_RFC3168), which then runs without ECN.
    #[test]
    fn ecn_negotiation() {
        let mode = |cc: &str, ecn: bool, accecn: bool, peer: bool| {
            let mut s = sender(Recovery::Prr, 1);
            s.cfg.ecn = ecn;
            s.cfg.accecn = accecn;
            s.cfg.peer_accecn = peer;
            negotiate_ecn(&s.cfg, &cc::build(cc, &[]).unwrap())
        };
        assert_eq!(mode("reno", false, false, true), EcnMode::Off);
        assert_eq!(mode("reno", true, false, true), EcnMode::Rfc3168);
        assert_eq!(mode("reno", false, true, true), EcnMode::AccEcn, "AccECN implies ECN");
        assert_eq!(mode("reno", true, true, false), EcnMode::Rfc3168, "fallback");
        assert_eq!(mode("dctcp", false, false, true), EcnMode::Rfc3168);
        assert_eq!(mode("dctcp", false, true, true), EcnMode::AccEcn);
        assert_eq!(mode("prague", false, false, true), EcnMode::AccEcn);
        assert_eq!(mode("prague", true, false, false), EcnMode::Off, "no RFC 3168 fallback");
    }

    // AccECN at the sender: the exact count of newly CE-marked packets goes
    // to delivered_ce, even when one stretch ACK covers more than 7 packets
    // (Linux __tcp_accecn_process, as in tcp/accecn.rs's
    // av5_wrap_resolved_by_bytes: the option's CE bytes resolve the wrap of
    // ACE); an ACK reporting marks enters CWR once per window; CWR
    // is never set on data (the bit belongs to ACE).
    #[test]
    fn accecn_counts_every_mark_through_stretch_acks() {
        let mut s = accecn_sender("reno", 40);
        assert_eq!(s.tp.ecn_mode, EcnMode::AccEcn);
        let first: Vec<Packet> = s.out.drain(..).collect();
        assert!(first.iter().all(|p| p.ect && !p.ect1), "Reno with AccECN: ECT(0)");
        let mut t = 100 * PS_PER_MS;
        // 4 packets, none marked: ACE stays 5.
        s.on_ack(t, &accecn_ack(4, 0, Some(0)));
        assert_eq!((s.tp.delivered_ce, s.tp.ca_state), (0, CaState::Open));
        // 20 packets in one ACK, 11 of them CE (ACE moved by 3): with the
        // option the byte count says 11, not 3 or 19.
        t += PS_PER_MS;
        s.on_ack(t, &accecn_ack(24, 11, Some(11 * 1000)));
        assert_eq!(s.tp.delivered_ce, 11);
        assert_eq!(s.accecn_mirror().unwrap().delivered_ce, 11);
        assert_eq!(s.tp.ca_state, CaState::Cwr);
        assert_eq!(s.stats.ecn_reductions, 1);
        // 10 packets, 9 of them marked (ACE moved by 1), no option: the safe
        // count is 9 (Linux assumes the most marks the ACK can hold).
        t += PS_PER_MS;
        s.on_ack(t, &accecn_ack(34, 20, None));
        assert_eq!(s.tp.delivered_ce, 20);
        assert_eq!(s.stats.ecn_reductions, 1, "one reduction per window");
        assert!(s.out.iter().all(|p| !p.cwr), "no CWR bit with AccECN");
    }

    // Against a receiver without AccECN an AccECN offer falls back to RFC
    // 3168: ECE/CWR exactly as a classic ECN sender.
    #[test]
    fn accecn_fallback_is_classic_ecn() {
        let mut s = sender(Recovery::Prr, 1);
        s.cfg.accecn = true;
        s.cfg.peer_accecn = false;
        s.cfg.init_cwnd = 40;
        let cfg = s.cfg.clone();
        let mut s = Sender::new(0, cfg, cc::build("reno", &[]).unwrap());
        s.tp.snd_ssthresh = 40;
        s.start(0);
        assert_eq!(s.tp.ecn_mode, EcnMode::Rfc3168);
        s.out.clear();
        s.on_ack(100 * PS_PER_MS, &ece(2));
        assert_eq!((s.tp.ca_state, s.tp.snd_ssthresh, s.tp.delivered_ce), (CaState::Cwr, 20, 2));
        assert!(s.out.iter().any(|p| p.cwr), "CWR on the next new segment");
    }

    // Without ECN negotiated an echo is ignored (and nothing is sent ECT).
    #[test]
    fn echo_ignored_without_ecn() {
        let mut s = sender(Recovery::Prr, 40);
        assert!(s.out.drain(..).all(|p| !p.ect));
        s.on_ack(PS_PER_MS, &ece(2));
        assert_eq!(s.tp.ca_state, CaState::Open);
        assert_eq!(s.stats.ecn_reductions, 0);
    }

    // A loss found during CWR becomes Recovery without a second cut (Linux
    // tcp_enter_recovery inside a window reduction); the retransmission is Not-ECT.
    #[test]
    fn loss_during_cwr_does_not_cut_twice() {
        let mut s = ecn_sender(Recovery::Prr, 40);
        s.out.clear();
        s.on_ack(PS_PER_MS, &ece(1));
        assert_eq!((s.tp.ca_state, s.tp.snd_ssthresh), (CaState::Cwr, 20));
        // Segment 1 lost: three segments above it SACKed.
        s.on_ack(2 * PS_PER_MS, &ack(1, &[(2, 5)]));
        assert_eq!(s.tp.ca_state, CaState::Recovery);
        assert_eq!(s.tp.snd_ssthresh, 20, "no second reduction");
        let rtx: Vec<Packet> = s.out.drain(..).filter(|p| p.retrans).collect();
        assert_eq!(rtx.len(), 1);
        assert!(!rtx[0].ect, "RFC 3168 §6.1.5: retransmissions are Not-ECT");
    }

    // RFC 6937 (PRR, as Linux applies it in recovery; that Linux ends the
    // recovery with cwnd = ssthresh, tcp_end_cwnd_reduction, was not
    // confirmed in a second source): segments 0..20 in flight (cwnd 20),
    // segment 0 lost, the rest SACKed one by one. Recovery starts at the
    // third SACK with ssthresh 10; PRR then releases about one segment per two
    // delivered, and when the retransmission is acknowledged cwnd = ssthresh
    // and no more than ssthresh packets are in flight.
    #[test]
    fn prr_reduces_to_ssthresh_smoothly() {
        let mut s = sender(Recovery::Prr, 20);
        assert_eq!(sent(&mut s).len(), 20);
        let mut t = 100 * PS_PER_MS;
        let mut new_during_recovery = 0;
        let mut retransmitted = false;
        for k in 1..20u64 {
            t += PS_PER_MS;
            s.on_ack(t, &ack(0, &[(1, k + 1)]));
            for (seg, rtx) in sent(&mut s) {
                if rtx {
                    assert_eq!(seg, 0);
                    retransmitted = true;
                } else {
                    new_during_recovery += 1;
                }
            }
            if k >= 3 {
                assert_eq!(s.tp.ca_state, CaState::Recovery, "after {k} SACKs");
                assert_eq!(s.tp.snd_ssthresh, 10);
            }
        }
        assert!(retransmitted, "the lost segment is retransmitted on entering recovery");
        // 19 delivered during recovery at ssthresh/RecoverFS = 1/2 → about 9 sent.
        assert!((8..=10).contains(&new_during_recovery), "sent {new_during_recovery} during recovery");
        // The retransmission arrives: the ACK covers the recovery point (the
        // data sent before recovery); what PRR released is still in flight.
        t += PS_PER_MS;
        let cum = s.high_seq;
        assert!(s.nxt > cum);
        s.on_ack(t, &ack(cum, &[]));
        assert_eq!(s.tp.ca_state, CaState::Open);
        assert_eq!(s.tp.snd_cwnd, 10, "cwnd = ssthresh at the end of recovery");
        assert!(s.tp.packets_in_flight() <= 10, "in flight {}", s.tp.packets_in_flight());
    }

    // Window arithmetic of Reno/NewReno fast recovery (RFC 5681 §3.2, RFC
    // 6582), worked by hand: cwnd 40, the first segment lost, 39 duplicate
    // ACKs.
    #[test]
    fn newreno_inflates_per_dupack_and_deflates_on_full_ack() {
        let mut s = sender(Recovery::NewReno, 40);
        assert_eq!(sent(&mut s).len(), 40);
        let mut t = 100 * PS_PER_MS;
        let mut new_sent = vec![];
        for d in 1..=39u32 {
            t += PS_PER_MS;
            s.on_ack(t, &ack(0, &[]));
            for (seg, rtx) in sent(&mut s) {
                if rtx {
                    assert_eq!((seg, d), (0, 3), "retransmit segment 0 on the 3rd dupACK");
                } else {
                    new_sent.push(seg);
                }
            }
            match d {
                3 => assert_eq!((s.tp.snd_ssthresh, s.tp.snd_cwnd), (20, 23)),
                20 => assert_eq!(s.tp.snd_cwnd, 40),
                _ => {}
            }
        }
        assert_eq!(s.tp.snd_cwnd, 59);
        assert_eq!(new_sent, (40..59).collect::<Vec<u64>>(), "one new segment per dupACK 21..39");
        t += PS_PER_MS;
        s.on_ack(t, &ack(40, &[]));
        assert_eq!(s.tp.ca_state, CaState::Open);
        assert_eq!(s.tp.snd_cwnd, 20);
    }

    // RFC 6582's partial ACK, worked by hand: two losses in one window; a
    // partial ACK retransmits the next hole and deflates the window.
    #[test]
    fn newreno_partial_ack_retransmits_next_hole() {
        let mut s = sender(Recovery::NewReno, 16);
        s.cfg.app = App::Fixed { bytes: 16_000 };
        s.total_segs = Some(16);
        s.total_bytes = Some(16_000);
        assert_eq!(sent(&mut s).len(), 16);
        let mut t = 100 * PS_PER_MS;
        for _ in 0..3 {
            t += PS_PER_MS;
            s.on_ack(t, &ack(0, &[]));
        }
        assert_eq!(sent(&mut s), vec![(0, true)]);
        assert_eq!((s.tp.snd_cwnd, s.tp.snd_ssthresh), (11, 8));
        for _ in 0..11 {
            t += PS_PER_MS;
            s.on_ack(t, &ack(0, &[]));
        }
        assert_eq!(s.tp.snd_cwnd, 22);
        t += PS_PER_MS;
        s.on_ack(t, &ack(4, &[]));
        assert_eq!(sent(&mut s), vec![(4, true)], "partial ACK retransmits the next hole");
        assert_eq!(s.tp.snd_cwnd, 19, "22 − 4 acknowledged + 1");
        t += PS_PER_MS;
        s.on_ack(t, &ack(16, &[]));
        assert_eq!(s.tp.ca_state, CaState::Open);
        assert_eq!(s.tp.snd_cwnd, 8);
        assert!(s.finished());
    }

    // The timeout response of RFC 5681 §3.1 and RFC 6298 §5, worked by hand:
    // a timeout halves ssthresh, sets cwnd to 1 and doubles the timer.
    #[test]
    fn rto_collapses_window_and_backs_off() {
        let mut s = sender(Recovery::Prr, 40);
        assert_eq!(sent(&mut s).len(), 40);
        let first = s.timers[T_RTO];
        assert_eq!(first, 1_000 * PS_PER_MS, "initial RTO is 1 s");
        s.on_rto(first);
        assert_eq!((s.tp.snd_ssthresh, s.tp.snd_cwnd), (20, 1));
        assert_eq!(s.tp.ca_state, CaState::Loss);
        assert_eq!(sent(&mut s), vec![(0, true)]);
        assert_eq!(s.timers[T_RTO], first + 2_000 * PS_PER_MS, "backed off to 2 s");
        s.on_rto(s.timers[T_RTO]);
        assert_eq!(s.tp.snd_ssthresh, 20, "a repeated timeout does not reduce ssthresh again");
        assert_eq!(s.stats.timeouts, 2);
    }

    // Linux tcp_enter_loss ("reduce ssthresh if it has not yet been made
    // inside this window"): a timeout during SACK recovery keeps the
    // ssthresh the recovery set (cwnd 40, one loss: 20) and only collapses
    // cwnd; once the recovery's window is acknowledged, the next timeout
    // reduces again.
    #[test]
    fn rto_in_recovery_keeps_the_recoverys_ssthresh() {
        let mut s = sender(Recovery::Prr, 40);
        assert_eq!(sent(&mut s).len(), 40);
        let mut t = 100 * PS_PER_MS;
        for k in 1..=10u64 {
            t += PS_PER_MS;
            s.on_ack(t, &ack(0, &[(1, k + 1)]));
        }
        sent(&mut s);
        assert_eq!((s.tp.ca_state, s.tp.snd_ssthresh), (CaState::Recovery, 20));
        // What reducing again would give differs from 20.
        assert_ne!(s.cc.ssthresh(&s.tp), 20, "cwnd {}", s.tp.snd_cwnd);
        s.on_rto(t + 1_000 * PS_PER_MS);
        assert_eq!(s.tp.ca_state, CaState::Loss);
        assert_eq!((s.tp.snd_ssthresh, s.tp.snd_cwnd), (20, 1));
        assert_eq!(sent(&mut s), vec![(0, true)]);
        // Everything outstanding is acknowledged: the loss episode's window is over.
        t += 1_100 * PS_PER_MS;
        let all = s.nxt;
        s.on_ack(t, &ack(all, &[]));
        sent(&mut s);
        let expected = s.cc.ssthresh(&s.tp);
        assert!(s.tp.packets_out > 0);
        s.on_rto(s.timers[T_RTO]);
        assert_eq!(s.tp.snd_ssthresh, expected, "a new window is reduced again");
        assert_eq!(s.stats.timeouts, 2);
    }

    // RFC 8985 §6.2 (Linux tcp_rack_detect_loss): a retransmission that is
    // lost again is found as soon as a segment sent after it is delivered
    // (in recovery the reordering window is 0), and is sent a third time
    // without waiting for the retransmission timer. Segments 0..10 leave at
    // t = 0 and segment 0 is lost; SACKs of 1, 2, 3 at 100, 101, 102 ms start
    // recovery and resend 0 at 102 ms. SACKs of the originals 4..9 (sent
    // before that retransmission) do not condemn it; PRR sends new segments
    // from 10 on. When a segment sent after the retransmission is SACKed
    // one RTT later and the retransmission is not, it is lost again.
    #[test]
    fn rack_detects_lost_retransmission() {
        let mut s = sender(Recovery::Prr, 10);
        assert_eq!(sent(&mut s).len(), 10);
        let mut new_segs = vec![];
        for k in 1..10u64 {
            let t = (99 + k) * PS_PER_MS;
            s.on_ack(t, &ack(0, &[(1, k + 1)]));
            for (seg, rtx) in sent(&mut s) {
                if rtx {
                    assert_eq!((seg, k), (0, 3), "segment 0 resent on the third SACK");
                } else {
                    new_segs.push((seg, t));
                }
            }
            if k >= 3 {
                assert_eq!(s.tp.retrans_out, 1, "the retransmission is still in flight after {k} SACKs");
            }
        }
        assert_eq!(s.stats.retrans_pkts, 1);
        // Segment 10 left at 100 ms, before the retransmission; its SACK
        // does not condemn it either.
        assert_eq!(new_segs[0], (10, 100 * PS_PER_MS));
        s.on_ack(200 * PS_PER_MS, &ack(0, &[(1, 11)]));
        assert!(sent(&mut s).iter().all(|&(_, rtx)| !rtx));
        assert_eq!(s.tp.retrans_out, 1);
        // The first segment sent after it (PRR releases segment 12 at 104
        // ms) is SACKed an RTT later: the retransmission is lost again.
        let &(first, t1) = new_segs.iter().find(|&&(_, t)| t > 102 * PS_PER_MS).unwrap();
        assert_eq!((first, t1), (12, 104 * PS_PER_MS));
        s.on_ack(t1 + 100 * PS_PER_MS, &ack(0, &[(1, first + 1)]));
        assert_eq!(sent(&mut s).first(), Some(&(0, true)), "segment 0 sent a third time");
        assert_eq!(s.stats.retrans_pkts, 2);
        assert_eq!(s.tp.retrans_out, 1);
        assert_eq!(s.tp.lost, 2, "the original and the first retransmission");
        assert_eq!(s.stats.timeouts, 0);
    }

    // Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation;
    // Linux net/ipv4/tcp_rate.c) through the sender, worked by hand: the
    // newest packet delivered decides the sample; interval = max(send, ack
    // elapsed).
    #[test]
    fn rate_sample_uses_newest_delivered_packet() {
        let mut s = sender(Recovery::Prr, 10);
        sent(&mut s);
        // All 10 sent at t = 0; ACK of all at 100 ms: delivered 10 over 100 ms.
        s.on_ack(100 * PS_PER_MS, &ack(10, &[]));
        assert_eq!(s.delivery_rate(), 10 * 1000 * 10, "10 packets of 1000 B in 0.1 s");
    }

    /// Sends segments 0..10 at t = 0, then (with the connection state set to
    /// a worked example of ours: C.delivered = 50, C.delivered_time = 90 ms,
    /// C.first_sent_time = 80 ms) segment 10 = P at 100 ms, stamped with it.
    fn bbr_worked_example_sender() -> Sender {
        let mut s = sender(Recovery::Prr, 10);
        assert_eq!(sent(&mut s).len(), 10);
        s.tp.delivered = 50;
        s.delivered_time = 90 * PS_PER_MS;
        s.first_sent_time = 80 * PS_PER_MS;
        s.tp.snd_cwnd = 11;
        s.try_send(100 * PS_PER_MS);
        assert_eq!(sent(&mut s), vec![(10, false)]);
        s
    }

    // Worked by hand from draft-cheng-iccrg-delivery-rate-estimation and
    // Linux tcp_rate.c: an ACK at 140 ms delivers 10 packets, P the newest,
    // bringing C.delivered to 60: send phase 100 − 80 = 20 ms, ACK
    // phase 140 − 90 = 50 ms → interval 50 ms, 10 packets → 200 packets/s,
    // valid with min_rtt 40 ms (this ACK's RTT sample, 140 − 100).
    #[test]
    fn rate_sample_bbr_worked_example() {
        let mut s = bbr_worked_example_sender();
        s.on_ack(140 * PS_PER_MS, &ack(0, &[(1, 11)]));
        assert_eq!(s.tp.delivered, 60);
        assert_eq!(s.tp.min_rtt_us, 40_000);
        assert_eq!((s.rate_delivered, s.rate_interval_us), (10, 50_000));
        assert_eq!(s.delivery_rate(), 200 * 1000, "200 packets/s of 1000 B");
        assert!(!s.rate_app_limited);
    }

    // The same sample with min_rtt 60 ms (no RTT sample on this ACK to
    // lower it: the delivered segments were retransmissions) is shorter
    // than min_rtt, so Linux discards it.
    #[test]
    fn rate_sample_shorter_than_min_rtt_is_discarded() {
        let mut s = bbr_worked_example_sender();
        s.tp.min_rtt_us = 60_000;
        for k in 1..=10 {
            s.seg_mut(k).flags |= EVER_RETRANS;
        }
        s.on_ack(140 * PS_PER_MS, &ack(0, &[(1, 11)]));
        assert_eq!(s.tp.min_rtt_us, 60_000);
        assert_eq!(s.tp.delivered, 60);
        assert_eq!(s.delivery_rate(), 0, "no valid sample recorded");
    }

    // Linux tcp_rate_check_app_limited / tcp_rate_gen: when the application
    // runs dry with cwnd to spare, app_limited = delivered + in flight;
    // packets sent until that "bubble" is delivered carry the mark, and so
    // do the rate samples they end; an app-limited sample replaces the
    // recorded rate only if it is higher; the mark clears once delivered
    // passes the bubble.
    #[test]
    fn app_limited_marking_follows_the_bubble() {
        // 1000-byte segments offered at 8 Mbit/s: one per ms.
        let cfg = SenderConfig { app: App::Rate { bps: 8_000_000 }, ..SenderConfig::bulk(1000, 40, 10) };
        let mut s = Sender::new(0, cfg, cc::build("reno", &[]).unwrap());
        s.tp.snd_ssthresh = 10;
        s.start(0);
        assert_eq!(s.tp.app_limited, 1, "nothing to send at t = 0: marked (at least 1)");
        for ms in 1..=5 {
            s.on_timer(ms * PS_PER_MS, T_APP);
        }
        assert_eq!(sent(&mut s).len(), 5);
        assert_eq!(s.tp.app_limited, 5, "delivered 0 + 5 in flight");
        for k in 0..5 {
            assert!(s.seg(k).flags & APP_LIMITED != 0, "segment {k} sent app-limited");
        }
        // Say the last recorded rate is 10 packets per 100 ms. The ACK of
        // segments 0..5 at 45 ms gives an app-limited sample of 5 packets
        // over 44 ms (ACK phase from the 1 ms stamp) = 114 packets/s: higher,
        // so it replaces the recorded rate, marked app-limited.
        s.rate_delivered = 10;
        s.rate_interval_us = 100_000;
        s.on_ack(45 * PS_PER_MS, &ack(5, &[]));
        assert!(s.rate_app_limited);
        assert_eq!(s.rate_delivered, 5);
        assert_eq!(s.tp.app_limited, 5, "delivered (5) has not passed the bubble (5)");
        // The application has 45 segments by now: cwnd-limited sends, still
        // inside the bubble, so marked; being cwnd-limited does not re-mark.
        let burst = sent(&mut s);
        assert!(burst.len() >= 10, "{burst:?}");
        let first_new = burst[0].0;
        assert!(s.seg(first_new).flags & APP_LIMITED != 0);
        assert_eq!(s.tp.app_limited, 5);
        // A lower app-limited sample (1 packet) does not replace a recorded
        // 10 000 packets/s.
        s.rate_delivered = 1_000;
        s.rate_interval_us = 100_000;
        let next = s.una + 1;
        s.on_ack(85 * PS_PER_MS, &ack(next, &[]));
        assert_eq!(s.rate_delivered, 1_000, "lower app-limited sample ignored");
        // delivered (6) > bubble (5): the mark is cleared, and segments sent
        // from now on (cwnd-limited, the application has data) are unmarked.
        assert_eq!(s.tp.app_limited, 0);
        let more = sent(&mut s);
        assert!(!more.is_empty());
        assert!(s.seg(more[0].0).flags & APP_LIMITED == 0);
    }

    // Today's TSO autosizing (Linux 5.18+ `tcp_tso_autosize`, MSS 1448). A
    // CUBIC flow in congestion avoidance with cwnd 200 and srtt 20 ms has
    // Linux's pacing rate 1.2 · 200 · 1448 B / 20 ms = 17 376 000 B/s.
    const CUBIC_RATE: u64 = 17_376_000;

    #[test]
    fn linux_pacing_rate_of_an_unpaced_cubic_flow() {
        let mut s = today_sender(200);
        s.tp.snd_ssthresh = 200; // cwnd ≥ ssthresh/2: congestion avoidance, 120 %
        s.tp.srtt_us = 20_000;
        assert_eq!(s.linux_pacing_rate(), CUBIC_RATE);
        s.tp.snd_ssthresh = 402; // cwnd < ssthresh/2: slow start, 200 %
        assert_eq!(s.linux_pacing_rate(), CUBIC_RATE / 120 * 200);
    }

    #[test]
    fn autosize_without_the_rtt_allowance_is_a_millisecond_of_pacing() {
        // Beyond 16.4 ms of min RTT the allowance is 65215 >> 32 or more: nothing,
        // so these are the 3.12–5.17 sizes: bytes = rate >> 10, capped at 65215.
        let segs = |rate_bps: u64| tso_autosize(rate_bps / 8, 100_000, 1448, 45);
        assert_eq!(segs(1_000_000_000), 45); // 122 070 B, capped at 65 215 B
        assert_eq!(segs(250_000_000), 21); // 30 517 B
        assert_eq!(segs(10_000_000), 2); // 1 220 B, the minimum of two
        assert_eq!(tso_autosize(CUBIC_RATE, 20_000, 1448, 45), 11); // 16 968 B
                                                                    // Before an RTT sample (min RTT "infinite") there is no allowance either.
        assert_eq!(tso_autosize(CUBIC_RATE, u64::MAX, 1448, 45), 11);
    }

    #[test]
    fn autosize_adds_the_rtt_allowance_of_close_peers() {
        // 16 968 B plus 65 215 B >> (min_rtt_us >> 9).
        assert_eq!(tso_autosize(CUBIC_RATE, 2_000, 1448, 45), 17); // + 8 151 B (>> 3)
        assert_eq!(tso_autosize(CUBIC_RATE, 1_000, 1448, 45), 34); // + 32 607 B (>> 1)
        assert_eq!(tso_autosize(CUBIC_RATE, 500, 1448, 45), 45); // + 65 215 B, capped
        assert_eq!(tso_autosize(CUBIC_RATE, 0, 1448, 45), 45);
        // `tso_segs` caps it.
        assert_eq!(tso_autosize(CUBIC_RATE, 500, 1448, 30), 30);
    }

    #[test]
    fn tsq_limit_is_two_super_packets_or_a_millisecond_of_pacing() {
        // The CUBIC flow above: 11-segment skbs of truesize 11 · 1448 + 1280 = 17 208 B;
        // two of them (34 416 B) exceed 1 ms of its rate (16 968 B).
        let truesize = |segs: u64| segs * 1448 + SKB_OVERHEAD;
        assert_eq!(tsq_limit(truesize(11), CUBIC_RATE, false, 1 << 20, false), 34_416);
        // Retransmissions may have twice as much below TCP.
        assert_eq!(tsq_limit(truesize(11), CUBIC_RATE, false, 1 << 20, true), 68_832);
        // At 1 Gbit/s: 1 ms is 122 070 B, two 45-segment skbs 132 880 B.
        assert_eq!(tsq_limit(truesize(45), 125_000_000, false, 1 << 20, false), 132_880);
        // At 10 Gbit/s 1 ms (1 220 703 B) exceeds tcp_limit_output_bytes, the cap of
        // an unpaced socket; a paced one keeps the millisecond.
        assert_eq!(tsq_limit(truesize(45), 1_250_000_000, false, 1 << 20, false), 1 << 20);
        assert_eq!(tsq_limit(truesize(45), 1_250_000_000, true, 1 << 20, false), 1_220_703);
    }

    fn today_sender(cwnd: u32) -> Sender {
        let cfg = SenderConfig {
            tso: Some(Tso { max_segs: 45, win_divisor: 3, max_defer: 2 * PS_PER_MS, era: Era::Today }),
            tsq: Some(1 << 20),
            ..SenderConfig::bulk(1448, 52, cwnd)
        };
        let mut s = Sender::new(0, cfg, cc::build("reno", &[]).unwrap());
        s.tp.snd_ssthresh = cwnd;
        s
    }

    #[test]
    fn tsq_stops_the_sender_until_its_skbs_leave_the_host() {
        // cwnd 100, no RTT sample: the rate is unbounded, so super-packets are
        // capped by the half window (50) and by 45 segments; the TSQ limit is
        // tcp_limit_output_bytes (1 MiB) until the retransmission queue holds
        // more than one skb. With srtt 20 ms and cwnd 100 the rate is
        // 1.2 · 100 · 1448 / 20 ms = 8 688 000 B/s: 8 484 B per ms, 5 segments,
        // and a limit of two 5-segment skbs, 2 · (5 · 1448 + 1280) = 17 040 B.
        let mut s = today_sender(100);
        s.tp.srtt_us = 20_000;
        s.tp.min_rtt_us = 20_000;
        assert_eq!(s.sk_pacing_rate(), 8_688_000);
        s.start(0);
        let sizes: Vec<u64> = s.host.skbs.iter().map(|&(_, t)| (t - SKB_OVERHEAD) / 1448).collect();
        // The first skb goes out whatever the limit (empty retransmission queue), the
        // second as the first is the only one in flight, the third as 2 · 8 520 B is
        // not above the limit; then 25 560 B > 17 040 B stops the sender.
        assert_eq!(sizes, vec![5, 5, 5]);
        assert!(s.host.throttled);
        assert_eq!(s.out.len(), 15);
        // The NIC sends the first skb's five packets: the sender hands down one more.
        for k in 0..4 {
            assert!(!s.host_left(1, k));
        }
        assert!(s.host_left(1, 4));
        assert_eq!(s.out.len(), 20);
        assert_eq!(s.host_bytes(), 3 * (5 * 1448 + SKB_OVERHEAD));
    }
}
