//! BBR v1 (Bottleneck Bandwidth and Round-trip propagation time), following
//! Linux `net/ipv4/tcp_bbr.c`.
//!
//! Sources: Linux `tcp_bbr.c`, where the constants, the per-ACK order
//! (`bbr_main`), the state machine, cwnd and recovery (`bbr_set_cwnd`), ACK
//! aggregation and the long-term policer model were read; Cardwell et al.,
//! "BBR: Congestion-Based Congestion Control", ACM Queue 14(5), 2016.
//!
//! BBR in a nutshell (the Linux header comment, in pseudo-code):
//!
//! ```text
//! on each ACK:
//!     btl_bw  = windowed_max(delivered / interval, 10 packet-timed rounds)
//!     min_rtt = windowed_min(rtt, 10 s)
//!     pacing_rate = pacing_gain · btl_bw · 0.99
//!     cwnd        = max(cwnd_gain · btl_bw · min_rtt + extra_acked + budget, 4)
//! loss does not lower the model; it only triggers packet conservation
//! during the first round of recovery.
//! ```
//!
//! State machine (one file per state in this directory):
//!
//! ```text
//!             |
//!             V
//!    +---> STARTUP  ----+        STARTUP: pacing/cwnd gain 2/ln2 until the
//!    |        |         |                 bw plateaus (3 rounds < +25 %)
//!    |        V         |        DRAIN:   pacing gain ln2/2 until inflight ≤ BDP
//!    |      DRAIN   ----+        PROBE_BW: 8-phase gain cycle 1.25, 0.75, 1 ×6
//!    |        |         |        PROBE_RTT: cwnd 4 for max(200 ms, 1 round)
//!    |        V         |                  when min_rtt is 10 s old
//!    +---> PROBE_BW ----+
//!    |      ^    |      |
//!    |      +----+      |
//!    |                  |
//!    +---- PROBE_RTT <--+
//! ```
//!
//! Arithmetic is Linux's fixed point: bandwidth in packets/µs << 24
//! (`BW_SCALE`), gains in 1/256 (`BBR_SCALE`), so the worked examples in
//! the tests (BV1–BV7, worked by hand from Linux's constants; e.g. high
//! gain 739/256) come out exactly.
//!
//! Deviations from Linux:
//! * Times are microseconds throughout; Linux keeps `min_rtt_stamp` and
//!   `probe_rtt_done_stamp` in jiffies (1 ms at HZ = 1000).
//! * `tp->delivered_mstamp` is tracked here (time of the last ACK that
//!   delivered data), since [`Sock`] does not carry it.
//! * The TSO budget (`bbr_tso_segs_goal`) assumes Linux's defaults
//!   (`sk_pacing_shift` 10, 64 KB GSO) although the simulator sends single
//!   packets; it only enlarges cwnd targets, as in Linux.
//! * The random start phase of the gain cycle comes from a seeded SplitMix64
//!   generator (seed = parameter `seed` mixed with [`Sock::rng_seed`]).
//! * Bandwidths and counters are 64-bit (Linux: 32-bit with wrap-around).

mod ack_aggregation;
mod bw_filter;
mod drain;
mod lt_bw;
mod probe_bw;
mod probe_rtt;
mod startup;

pub(crate) use ack_aggregation::AckAggregation;
pub use bw_filter::Minmax;

use crate::params::{ParamDefault, ParamKind, ParamSpec, Params};
use crate::{CaEvent, CaState, CongestionControl, RateSample, Sock, MAX_METRICS};

/// Linux `BW_SCALE`: bandwidth is stored in packets/µs << 24.
pub(crate) const BW_SCALE: u32 = 24;
pub(crate) const BW_UNIT: u64 = 1 << BW_SCALE;
/// Linux `BBR_SCALE`: gains and fractions are stored in units of 1/256.
pub(crate) const BBR_SCALE: u32 = 8;
pub(crate) const BBR_UNIT: u32 = 1 << BBR_SCALE;
pub(crate) const USEC_PER_SEC: u64 = 1_000_000;
pub(crate) const USEC_PER_MSEC: u64 = 1_000;

/// Steady-state cwnd gain: 2·BDP tolerates delayed and stretched ACKs.
const CWND_GAIN: u32 = BBR_UNIT * 2;
/// Keep at least 4 packets in flight: two ACK-every-other-packet pairs.
pub(crate) const CWND_MIN_TARGET: u32 = 4;
/// Pace 1 % below the estimated bw so queues drain on average.
pub(crate) const PACING_MARGIN_PERCENT: u64 = 1;
/// Linux `TCP_INIT_CWND`: cwnd target before any RTT sample.
const TCP_INIT_CWND: u32 = 10;
/// Below 1.2 Mbit/s Linux sends one segment per TSO burst, else two.
const MIN_TSO_RATE_BPS: u64 = 1_200_000;
/// Linux `sk_pacing_shift` default: TSO bursts of about 1 ms of data.
pub(crate) const PACING_SHIFT: u32 = 10;
/// Linux `GSO_MAX_SIZE − 1 − MAX_TCP_HEADER` (64 KB GSO, 320-byte header room).
pub(crate) const GSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
/// ACK aggregation: gain applied to extra_acked (1.0).
const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// ACK aggregation: each of the two max-filter buckets lasts 5 rounds.
pub(crate) const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// ACK aggregation: restart the epoch after this many packets.
pub(crate) const ACK_EPOCH_ACKED_RESET_THRESH: u64 = 1 << 20;
/// ACK aggregation: extra cwnd is capped at 100 ms worth of bw.
pub(crate) const EXTRA_ACKED_MAX_US: u64 = 100_000;

/// BBR's parameters (Linux hard-codes the algorithm's constants; only the
/// random seed is exposed).
pub static PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "seed",
    kind: ParamKind::Int { min: 0, max: i64::MAX },
    default: ParamDefault::Int(0),
    doc: "seed for the random start phase of the ProbeBW gain cycle, mixed with the simulator's per-flow seed (Linux uses prandom); dimensionless",
}];

/// Typed BBR configuration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BbrConfig {
    pub seed: u64,
}

impl BbrConfig {
    pub fn from_params(p: &Params) -> BbrConfig {
        BbrConfig { seed: p.int("seed").max(0) as u64 }
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seeded generator for the
/// gain-cycle phase draws.
#[derive(Clone, Debug)]
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, n) (Linux `prandom_u32_max` / `get_random_u32_below`).
    pub(crate) fn below(&mut self, n: u32) -> u32 {
        (((self.next_u64() >> 32) * n as u64) >> 32) as u32
    }
}

/// Mixes the algorithm's `seed` parameter with the per-flow seed.
pub(crate) fn mix_seed(param: u64, flow: u64) -> u64 {
    let mut g = SplitMix64::new(param ^ flow.rotate_left(29) ^ 0x6A09_E667_F3BC_C908);
    g.next_u64()
}

/// Linux `bbr_rate_bytes_per_sec`: bw (pkts/µs << 24) × mss × gain, less
/// `margin` percent, in bytes per second.
pub(crate) fn rate_bytes_per_sec(bw: u64, mss: u32, gain: u32, margin: u64) -> u64 {
    let mut rate = bw as u128 * mss as u128;
    rate = (rate * gain as u128) >> BBR_SCALE;
    rate *= (USEC_PER_SEC / 100 * (100 - margin)) as u128;
    (rate >> BW_SCALE).min(u64::MAX as u128) as u64
}

/// Bandwidth (pkts/µs << 24) in bits per second of payload, for traces.
pub(crate) fn bw_to_bps(bw: u64, mss: u32) -> f64 {
    bw as f64 * mss as f64 * 8.0 * USEC_PER_SEC as f64 / BW_UNIT as f64
}

/// BBR's modes (Linux `enum bbr_mode`); the number is what traces export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up quickly to fill the pipe.
    Startup = 0,
    /// Drain the queue Startup built.
    Drain = 1,
    /// Cycle the pacing gain around the estimated bw.
    ProbeBw = 2,
    /// Cut inflight to 4 packets to re-measure min_rtt.
    ProbeRtt = 3,
}

impl Mode {
    /// Whether `self → to` is an edge of the state diagram. ProbeBW →
    /// ProbeBW is the restart of gain cycling when the policer model ends.
    pub fn can_transition_to(self, to: Mode) -> bool {
        use Mode::*;
        matches!(
            (self, to),
            (Startup, Drain)
                | (Drain, ProbeBw)
                | (ProbeBw, ProbeBw)
                | (Startup | Drain | ProbeBw, ProbeRtt)
                | (ProbeRtt, Startup | ProbeBw)
        )
    }
}

/// Linux `struct bbr`: per-flow BBR v1 state.
#[derive(Clone, Debug)]
pub struct Bbr {
    cfg: BbrConfig,
    rng: SplitMix64,
    mode: Mode,
    /// Mode changes so far (the state machine's event count).
    transitions: u64,
    /// MSS, bytes (for converting bw to bit/s in traces).
    mss: u32,

    // Model.
    /// Max filter of delivery-rate samples, pkts/µs << 24, keyed by round.
    bw: Minmax,
    /// Windowed min RTT, µs (`u64::MAX` before the first sample).
    min_rtt_us: u64,
    /// When `min_rtt_us` was last set, µs.
    min_rtt_stamp_us: u64,
    /// End of the 200 ms ProbeRTT dwell, µs (None until inflight ≤ 4).
    probe_rtt_done_stamp_us: Option<u64>,
    /// A packet-timed round passed at the ProbeRTT cwnd.
    probe_rtt_round_done: bool,
    /// Packet-timed rounds so far.
    rtt_cnt: u64,
    /// `tp.delivered` that ends the current round.
    next_rtt_delivered: u64,
    /// This ACK started a new round.
    round_start: bool,
    /// Time of the last ACK that delivered data (Linux `tp->delivered_mstamp`), µs.
    delivered_mstamp_us: u64,

    // Gain cycling.
    /// Start of the current gain-cycle phase, µs.
    cycle_mstamp_us: u64,
    /// Current phase of [`probe_bw::PACING_GAIN`].
    cycle_idx: usize,
    /// Current gains, 1/256.
    pacing_gain: u32,
    cwnd_gain: u32,

    // Startup.
    full_bw_reached: bool,
    /// Rounds without 25 % bw growth.
    full_bw_cnt: u32,
    /// bw at the last 25 % step, pkts/µs << 24.
    full_bw: u64,
    has_seen_rtt: bool,

    // Loss recovery.
    /// cwnd saved on entering recovery or ProbeRTT, packets.
    prior_cwnd: u32,
    prev_ca_state: CaState,
    /// First round of recovery: send one packet per packet delivered.
    packet_conservation: bool,
    /// Restarting after idle (app-limited); suppresses ProbeRTT entry.
    idle_restart: bool,

    // Long-term (policer) model, see lt_bw.rs.
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    /// Long-term bw estimate, pkts/µs << 24.
    lt_bw: u64,
    lt_last_delivered: u64,
    /// ms.
    lt_last_stamp_ms: u64,
    lt_last_lost: u64,

    /// Excess packets ACKed, max over two 5-round windows.
    aggr: AckAggregation,
}

impl Bbr {
    pub fn new(cfg: BbrConfig) -> Bbr {
        Bbr {
            rng: SplitMix64::new(cfg.seed),
            cfg,
            mode: Mode::Startup,
            transitions: 0,
            mss: 1448,
            bw: Minmax::default(),
            min_rtt_us: u64::MAX,
            min_rtt_stamp_us: 0,
            probe_rtt_done_stamp_us: None,
            probe_rtt_round_done: false,
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            delivered_mstamp_us: 0,
            cycle_mstamp_us: 0,
            cycle_idx: 0,
            pacing_gain: startup::HIGH_GAIN,
            cwnd_gain: startup::HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            full_bw: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            idle_restart: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp_ms: 0,
            lt_last_lost: 0,
            aggr: AckAggregation::default(),
        }
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Changes mode, checking the edge against the state diagram. There is
    /// no event channel in the trait: traces see the mode through
    /// [`metrics`](CongestionControl::metrics), and `transitions` counts changes.
    fn transition_to(&mut self, to: Mode) {
        debug_assert!(self.mode.can_transition_to(to), "BBR: illegal transition {:?} -> {:?}", self.mode, to);
        self.mode = to;
        self.transitions += 1;
    }

    /// Linux `bbr_max_bw`: windowed max delivery rate, pkts/µs << 24.
    #[inline]
    fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// Linux `bbr_bw`: the bw the model uses (long-term bw if policed).
    #[inline]
    fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// Linux `bbr_extra_acked`: max excess ACKed over the last 5–10 rounds.
    #[inline]
    fn extra_acked(&self) -> u32 {
        self.aggr.extra_acked()
    }

    /// Linux `bbr_bw_to_pacing_rate`, bytes per second.
    fn bw_to_pacing_rate(tp: &Sock, bw: u64, gain: u32) -> u64 {
        rate_bytes_per_sec(bw, tp.mss, gain, PACING_MARGIN_PERCENT)
    }

    /// Linux `bbr_init_pacing_rate_from_rtt`: high_gain · cwnd / srtt
    /// (1 ms nominal before the first sample).
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut Sock) {
        let rtt_us = if tp.srtt_us != 0 {
            self.has_seen_rtt = true;
            tp.srtt_us.max(1)
        } else {
            USEC_PER_MSEC
        };
        let bw = tp.snd_cwnd as u64 * BW_UNIT / rtt_us;
        tp.pacing_rate = Self::bw_to_pacing_rate(tp, bw, startup::HIGH_GAIN);
    }

    /// Linux `bbr_set_pacing_rate`: before the pipe is full the rate only rises.
    fn set_pacing_rate(&mut self, tp: &mut Sock, bw: u64, gain: u32) {
        let rate = Self::bw_to_pacing_rate(tp, bw, gain);
        if !self.has_seen_rtt && tp.srtt_us != 0 {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full_bw_reached || rate > tp.pacing_rate {
            tp.pacing_rate = rate;
        }
    }

    /// Linux `bbr_tso_segs_goal`: about 1 ms of data per burst, 1 or 2
    /// segments at low rates, at most 127 (and 64 KB).
    fn tso_segs_goal(tp: &Sock) -> u32 {
        let bytes = (tp.pacing_rate >> PACING_SHIFT).min(GSO_MAX_BYTES);
        let min_segs = if tp.pacing_rate < MIN_TSO_RATE_BPS / 8 { 1 } else { 2 };
        ((bytes / tp.mss.max(1) as u64) as u32).max(min_segs).min(0x7F)
    }

    /// Linux `bbr_save_cwnd`: remember the last good cwnd.
    fn save_cwnd(&mut self, tp: &Sock) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = tp.snd_cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(tp.snd_cwnd);
        }
    }

    /// Linux `bbr_bdp`: ceil(bw · min_rtt · gain), packets; the initial
    /// window before any RTT sample.
    fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.min_rtt_us == u64::MAX {
            return TCP_INIT_CWND;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        let bdp = ((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128);
        bdp.min(u32::MAX as u128) as u32
    }

    /// Linux `bbr_quantization_budget`: room for three TSO bursts, rounded
    /// up to even, plus 2 in the 1.25 phase so probing exceeds BDP.
    fn quantization_budget(&self, tp: &Sock, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.saturating_add(3 * Self::tso_segs_goal(tp));
        cwnd = cwnd.saturating_add(1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd = cwnd.saturating_add(2);
        }
        cwnd
    }

    /// Linux `bbr_inflight`: BDP at `gain` plus the quantization budget.
    fn inflight(&self, tp: &Sock, bw: u64, gain: u32) -> u32 {
        let bdp = self.bdp(bw, gain);
        self.quantization_budget(tp, bdp)
    }

    /// Linux `bbr_packets_in_net_at_edt`: packets still in the network
    /// when the next paced packet leaves (inflight minus what the path
    /// delivers until then, plus that packet's burst when probing up).
    fn packets_in_net_at_edt(&self, tp: &Sock, inflight_now: u32) -> u32 {
        let now_ns = tp.now_ns;
        let edt_ns = tp.wstamp_ns.max(now_ns);
        let interval_us = (edt_ns - now_ns) / 1_000;
        let interval_delivered = ((self.bw() as u128 * interval_us as u128) >> BW_SCALE) as u64;
        let mut inflight_at_edt = inflight_now as u64;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += Self::tso_segs_goal(tp) as u64;
        }
        inflight_at_edt.saturating_sub(interval_delivered) as u32
    }

    /// Linux `bbr_ack_aggregation_cwnd`: extra cwnd for ACK aggregation,
    /// only once the pipe is full, capped at 100 ms of bw.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if EXTRA_ACKED_GAIN == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr_cwnd = (self.bw() as u128 * EXTRA_ACKED_MAX_US as u128 / BW_UNIT as u128) as u64;
        let aggr_cwnd = (EXTRA_ACKED_GAIN as u64 * self.extra_acked() as u64) >> BBR_SCALE;
        aggr_cwnd.min(max_aggr_cwnd) as u32
    }

    /// Linux `bbr_set_cwnd_to_recover_or_restore`: packet conservation in
    /// the first round of recovery, cwnd restored when recovery ends.
    /// Returns the cwnd to use and whether conservation decided it.
    fn set_cwnd_to_recover_or_restore(&mut self, tp: &Sock, rs: &RateSample, acked: u32) -> (u32, bool) {
        let prev_state = self.prev_ca_state;
        let state = tp.ca_state;
        let mut cwnd = tp.snd_cwnd;

        // An ACK for P packets should release at most 2P: first deduct
        // the packets just marked lost; set_cwnd then slow-starts.
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            // Linux: first round of recovery → packet conservation,
            // start a round now, cut unused cwnd.
            self.packet_conservation = true;
            self.next_rtt_delivered = tp.delivered;
            cwnd = tp.packets_in_flight() + acked;
        } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
            // Leaving recovery: restore the cwnd saved on entry.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;

        if self.packet_conservation {
            return (cwnd.max(tp.packets_in_flight() + acked), true);
        }
        (cwnd, false)
    }

    /// Linux `bbr_set_cwnd`: slow-start toward the target (cwnd_gain·BDP +
    /// aggregation allowance + budget), or snap down to it once the pipe
    /// has been filled; at most 4 packets in ProbeRTT.
    fn set_cwnd(&mut self, tp: &mut Sock, rs: &RateSample, acked: u32, bw: u64, gain: u32) {
        let mut cwnd = tp.snd_cwnd;
        if acked > 0 {
            let (c, conserving) = self.set_cwnd_to_recover_or_restore(tp, rs, acked);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target = target.saturating_add(self.ack_aggregation_cwnd());
                target = self.quantization_budget(tp, target);
                if self.full_bw_reached {
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target || tp.delivered < TCP_INIT_CWND as u64 {
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            tp.snd_cwnd = tp.snd_cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// Linux `bbr_update_bw`: round accounting, the policer model, and the
    /// bw max filter (app-limited samples only if they raise it).
    fn update_bw(&mut self, tp: &Sock, rs: &RateSample) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        // Linux's packet-timed round: it ends when a packet sent after it
        // began is delivered.
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(tp, rs);

        let bw = rs.delivered as u64 * BW_UNIT / rs.interval_us as u64;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(probe_bw::BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// Linux `bbr_update_ack_aggregation`: excess packets ACKed
    /// beyond bw × epoch, max over two 5-round windows.
    fn update_ack_aggregation(&mut self, tp: &Sock, rs: &RateSample) {
        if EXTRA_ACKED_GAIN == 0 {
            return;
        }
        let bw = self.bw();
        self.aggr.update(rs, self.round_start, EXTRA_ACKED_WIN_RTTS, bw, self.delivered_mstamp_us, tp.snd_cwnd);
    }

    /// Linux `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (startup::HIGH_GAIN, startup::HIGH_GAIN),
            Mode::Drain => (drain::DRAIN_GAIN, startup::HIGH_GAIN),
            Mode::ProbeBw => {
                let g = if self.lt_use_bw { BBR_UNIT } else { probe_bw::PACING_GAIN[self.cycle_idx] };
                (g, CWND_GAIN)
            }
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// Linux `bbr_update_model` (the order of the calls matters).
    fn update_model(&mut self, tp: &mut Sock, rs: &RateSample) {
        self.update_bw(tp, rs);
        self.update_ack_aggregation(tp, rs);
        self.update_probe_bw_cycle_phase(tp, rs);
        self.check_startup_done(rs);
        self.check_drain(tp);
        self.update_min_rtt(tp, rs);
        self.update_gains();
    }
}

impl CongestionControl for Bbr {
    /// Linux `bbr_init`.
    fn init(&mut self, tp: &mut Sock) {
        let cfg = self.cfg.clone();
        *self = Bbr::new(cfg);
        self.rng = SplitMix64::new(mix_seed(self.cfg.seed, tp.rng_seed));
        tp.snd_ssthresh = crate::INFINITE_SSTHRESH;
        self.mss = tp.mss;
        self.min_rtt_us = tp.min_rtt_us;
        self.min_rtt_stamp_us = tp.now_us;
        self.delivered_mstamp_us = tp.now_us;
        self.bw.reset(self.rtt_cnt, 0);
        self.init_pacing_rate_from_rtt(tp);
        self.reset_lt_bw_sampling(tp);
        self.aggr.epoch_mstamp_us = tp.now_us;
    }

    /// Linux `bbr_ssthresh`: save cwnd for recovery exit; ssthresh unchanged.
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        self.save_cwnd(tp);
        tp.snd_ssthresh
    }

    /// BBR sets cwnd in `cong_control`; never called while it returns true.
    fn cong_avoid(&mut self, _tp: &mut Sock, _acked: u32) {}

    /// Linux `bbr_main`.
    fn cong_control(&mut self, tp: &mut Sock, rs: &RateSample) -> bool {
        if rs.acked_sacked > 0 {
            self.delivered_mstamp_us = tp.now_us;
        }
        self.update_model(tp, rs);
        let bw = self.bw();
        self.set_pacing_rate(tp, bw, self.pacing_gain);
        self.set_cwnd(tp, rs, rs.acked_sacked, bw, self.cwnd_gain);
        true
    }

    /// Linux `bbr_set_state`: an RTO ends the round, restarts full-pipe
    /// detection and feeds a lossy sample to the policer model.
    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
            let rs = RateSample { losses: 1, ..RateSample::default() };
            self.lt_bw_sampling(tp, &rs);
        }
    }

    /// Linux `bbr_cwnd_event`: restarting from idle while app-limited.
    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        if let CaEvent::TxStart { .. } = ev {
            if tp.app_limited != 0 {
                self.idle_restart = true;
                self.aggr.restart_epoch(tp.now_us);
                // No need for more speed after idle: pace at the estimated bw.
                if self.mode == Mode::ProbeBw {
                    let bw = self.bw();
                    self.set_pacing_rate(tp, bw, BBR_UNIT);
                } else if self.mode == Mode::ProbeRtt {
                    self.check_probe_rtt_done(tp);
                }
            }
        }
    }

    /// Linux `bbr_undo_cwnd`: a spurious loss restarts full-pipe detection
    /// and the policer model; cwnd is kept.
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(tp);
        tp.snd_cwnd
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &["state", "pacing_gain", "cwnd_gain", "btl_bw_bps", "min_rtt_ms", "round", "cycle_idx", "lt_use_bw"]
    }

    /// state: 0 Startup, 1 Drain, 2 ProbeBW, 3 ProbeRTT; gains as
    /// multipliers; btl_bw in bit/s of payload (the bw the model uses);
    /// min_rtt in ms (NaN before the first sample); round = packet-timed
    /// rounds so far; cycle_idx = ProbeBW phase (0 is the 1.25 phase);
    /// lt_use_bw = 1 while the policer model sets the rate.
    fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
        out[0] = self.mode as u8 as f64;
        out[1] = self.pacing_gain as f64 / BBR_UNIT as f64;
        out[2] = self.cwnd_gain as f64 / BBR_UNIT as f64;
        out[3] = bw_to_bps(self.bw(), self.mss);
        out[4] = if self.min_rtt_us == u64::MAX { f64::NAN } else { self.min_rtt_us as f64 / 1e3 };
        out[5] = self.rtt_cnt as f64;
        out[6] = self.cycle_idx as f64;
        out[7] = if self.lt_use_bw { 1.0 } else { 0.0 };
    }
}

#[cfg(test)]
pub(crate) mod tests;
