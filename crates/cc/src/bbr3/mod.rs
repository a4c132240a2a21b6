//! BBR v3, following `net/ipv4/tcp_bbr.c` of github.com/google/bbr (branch
//! v3, `BBR_VERSION 3`).
//!
//! The v3 constants were read in that source; what v3 keeps from v1
//! follows Linux `tcp_bbr.c` as in [`crate::bbr`].
//!
//! BBR v3 in a nutshell:
//!
//! ```text
//! model:  max_bw  = max delivery rate over the last 1–2 ProbeBW cycles (bw_hi)
//!         min_rtt = windowed min RTT (10 s), ProbeRTT every 5 s at 0.5·BDP
//!         inflight_hi, bw_hi: long-term upper bounds, lowered when a bw
//!             probe sees > 2 % loss (or > 50 % CE), raised while probes are clean
//!         inflight_lo, bw_lo: short-term lower bounds, cut ×0.7 at the end of
//!             each round with loss (×(1 − α/3) with ECN) while not probing
//! control: bw = min(max_bw, bw_lo)
//!          pacing_rate = pacing_gain · bw · 0.99
//!          cwnd = min(cwnd_gain · bw · min_rtt + extra_acked, bounds by phase)
//! ```
//!
//! ProbeBW phases (one file per state in this directory):
//!
//! ```text
//!  STARTUP (2.77 / cwnd 2.0) ─ plateau or loss ─► DRAIN (0.35) ─ inflight ≤ BDP ─┐
//!                                                                                  ▼
//!   ┌───────────────────── every 2–3 s or min(BDP, 63) rounds ─────────────────┐ DOWN (0.91)
//!   ▼                                                                          │   │ inflight ≤ BDP
//!  REFILL (1.0, one round, bounds reset) ─► UP (1.25, cwnd 2.25) ─ loss > 2 %, │   ▼   and headroom
//!                                            plateau, or inflight_hi reached ──┴─ CRUISE (1.0,
//!                                                                                 0.85·inflight_hi)
//! ```
//!
//! Deviations from google/bbr v3:
//! * No fast path (`bbr_run_fast_path`, a CPU optimisation for app-limited
//!   ACKs), no PLB, no TLP-driven loss recovery (the simulator has no TLP).
//! * ECN is used only when the `ecn` parameter is set (Linux: ECN
//!   negotiated and the route's `ecn_low` flag) and min_rtt ≤ 5 ms; the CE
//!   signal is the ACK's ECN echo (`rs.is_ece`) and the sender's
//!   `delivered_ce` count, not the receiver-side `ce_state` machinery.
//! * Times are microseconds (Linux: jiffies for the min_rtt/ProbeRTT stamps).
//! * As in v1, `tp->delivered_mstamp` is tracked here, and 64-bit counters
//!   replace Linux's 32-bit ones.

mod drain;
mod probe_bw;
mod probe_rtt;
mod startup;

pub use probe_bw::Phase;

use crate::bbr::{
    bw_to_bps, mix_seed, rate_bytes_per_sec, AckAggregation, Mode, SplitMix64, BBR_SCALE, BBR_UNIT, BW_SCALE, BW_UNIT,
    CWND_MIN_TARGET, EXTRA_ACKED_MAX_US, EXTRA_ACKED_WIN_RTTS, GSO_MAX_BYTES, PACING_MARGIN_PERCENT, PACING_SHIFT,
    USEC_PER_MSEC,
};
use crate::params::{ParamDefault, ParamKind, ParamSpec, Params};
use crate::{CaEvent, CaState, CongestionControl, RateSample, Sock, MAX_METRICS};

/// Steady-state cwnd gain (2.0).
const CWND_GAIN: u32 = BBR_UNIT * 2;
/// ACK aggregation: gain applied to extra_acked (1.0).
const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// Loss response: cut bw_lo / inflight_lo by 30 %, i.e. × 0.7.
pub(crate) const BETA: u32 = BBR_UNIT * 30 / 100;
/// A bw probe went too far if more than 2 % of the flight was lost
/// (5/256 = 1.95 % in Linux's fixed point).
pub(crate) const LOSS_THRESH: u32 = BBR_UNIT * 2 / 100;
/// ECN: use sender-side ECN logic only at RTTs up to 5 ms.
const ECN_MAX_RTT_US: u64 = 5_000;
/// ECN: EWMA gain of the CE ratio (1/16).
const ECN_ALPHA_GAIN: u32 = BBR_UNIT / 16;
/// ECN: initial alpha 1.0, to respond fast if the path starts congested.
const ECN_ALPHA_INIT: u32 = BBR_UNIT;
/// ECN: cut inflight_lo by alpha/3 per round with CE marks.
pub(crate) const ECN_FACTOR: u32 = BBR_UNIT / 3;
/// ECN: a probe went too far if more than 50 % of deliveries were CE-marked.
pub(crate) const ECN_THRESH: u32 = BBR_UNIT / 2;
/// Cruise at 85 % of inflight_hi, leaving headroom for other flows.
pub(crate) const INFLIGHT_HEADROOM: u32 = BBR_UNIT * 15 / 100;
/// Linux `GSO_LEGACY_MAX_SIZE`.
const GSO_LEGACY_MAX_SIZE: u64 = 65_536;
/// TSO allowance halves for every 2^9 µs of min_rtt.
const TSO_RTT_SHIFT: u32 = 9;
/// Linux `sysctl_tcp_min_tso_segs` default.
const MIN_TSO_SEGS: u32 = 2;

/// BBR v3's parameters.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "seed",
        kind: ParamKind::Int { min: 0, max: i64::MAX },
        default: ParamDefault::Int(0),
        doc: "seed for the randomised bw-probe wait (2 s + rand(1 s), 0–1 extra rounds), mixed with the simulator's per-flow seed (Linux uses get_random_u32_below); dimensionless",
    },
    ParamSpec {
        name: "ecn",
        kind: ParamKind::Bool,
        default: ParamDefault::Bool(false),
        doc: "use ECN (CE echoes) as a congestion signal when min_rtt <= 5 ms; Linux requires ECN negotiated and the route's ecn_low flag, off by default",
    },
];

/// Typed BBR v3 configuration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bbr3Config {
    pub seed: u64,
    pub ecn: bool,
}

impl Bbr3Config {
    pub fn from_params(p: &Params) -> Bbr3Config {
        Bbr3Config { seed: p.int("seed").max(0) as u64, ecn: p.bool("ecn") }
    }
}

/// How the incoming ACKs relate to bw probing (Linux `enum bbr_ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AckPhase {
    /// Not probing; not getting probe feedback.
    Init,
    /// Sending at the estimated bw to fill the pipe.
    Refilling,
    /// Inflight rising to probe bw.
    ProbeStarting,
    /// Getting feedback from bw probing.
    ProbeFeedback,
    /// Stopped probing; still getting feedback.
    ProbeStopping,
}

/// Per-flow BBR v3 state (google/bbr `struct bbr`).
#[derive(Clone, Debug)]
pub struct Bbr3 {
    cfg: Bbr3Config,
    rng: SplitMix64,
    mode: Mode,
    transitions: u64,
    mss: u32,
    /// Initial cwnd, packets (the BDP before any RTT sample).
    init_cwnd: u32,

    // min_rtt and ProbeRTT.
    min_rtt_us: u64,
    min_rtt_stamp_us: u64,
    /// Min RTT over the 5 s ProbeRTT window, µs, and when it was taken.
    probe_rtt_min_us: u64,
    probe_rtt_min_stamp_us: u64,
    probe_rtt_done_stamp_us: Option<u64>,
    probe_rtt_round_done: bool,

    // Rounds.
    next_rtt_delivered: u64,
    round_start: bool,
    delivered_mstamp_us: u64,
    /// Round in which loss is measured: ends when `loss_round_delivered` is passed.
    loss_round_delivered: u64,
    loss_round_start: bool,
    /// Rounds since the last bw probe (saturates at 255).
    rounds_since_probe: u32,

    // Gains and phase.
    pacing_gain: u32,
    cwnd_gain: u32,
    cycle_idx: Phase,
    cycle_mstamp_us: u64,
    ack_phase: AckPhase,
    /// Wall-clock wait in DOWN/CRUISE before the next probe, µs.
    probe_wait_us: u64,

    // Startup / plateau detection.
    full_bw_reached: bool,
    /// bw plateaued recently (also ends PROBE_UP).
    full_bw_now: bool,
    full_bw_cnt: u32,
    full_bw: u64,
    has_seen_rtt: bool,
    /// ACKs with losses in this round (Startup loss exit).
    loss_events_in_round: u32,
    startup_ecn_rounds: u32,

    // Loss recovery.
    prior_cwnd: u32,
    prev_ca_state: CaState,
    idle_restart: bool,

    // Model bounds.
    /// Max delivery rate in the last round, pkts/µs << 24.
    bw_latest: u64,
    /// Short-term lower bound on bw (u64::MAX = unset).
    bw_lo: u64,
    /// Max bw of the current and previous probe cycles.
    bw_hi: [u64; 2],
    /// Max packets delivered over one sample in the last round.
    inflight_latest: u32,
    /// Short-term lower bound on inflight, packets (u32::MAX = unset).
    inflight_lo: u32,
    /// Long-term upper bound on inflight, packets (u32::MAX = unset).
    inflight_hi: u32,
    /// Packets to ACK per +1 of inflight_hi in PROBE_UP.
    bw_probe_up_cnt: u32,
    bw_probe_up_acks: u32,
    /// Rounds in PROBE_UP (the inflight_hi slope doubles each round).
    bw_probe_up_rounds: u32,
    /// Rate samples now reflect bw probing.
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    loss_in_round: bool,
    ecn_in_round: bool,
    loss_in_cycle: bool,
    ecn_in_cycle: bool,
    undo_bw_lo: u64,
    undo_inflight_lo: u32,
    undo_inflight_hi: u32,

    // ECN.
    ecn_eligible: bool,
    /// EWMA of the CE ratio, 1/256.
    ecn_alpha: u32,
    alpha_last_delivered: u64,
    alpha_last_delivered_ce: u64,

    /// Excess packets ACKed, max over two windows (one round in Startup,
    /// then 5 rounds).
    aggr: AckAggregation,
}

impl Bbr3 {
    pub fn new(cfg: Bbr3Config) -> Bbr3 {
        Bbr3 {
            rng: SplitMix64::new(cfg.seed),
            cfg,
            mode: Mode::Startup,
            transitions: 0,
            mss: 1448,
            init_cwnd: 10,
            min_rtt_us: u64::MAX,
            min_rtt_stamp_us: 0,
            probe_rtt_min_us: u64::MAX,
            probe_rtt_min_stamp_us: 0,
            probe_rtt_done_stamp_us: None,
            probe_rtt_round_done: false,
            next_rtt_delivered: 0,
            round_start: false,
            delivered_mstamp_us: 0,
            loss_round_delivered: 1,
            loss_round_start: false,
            rounds_since_probe: 0,
            pacing_gain: startup::STARTUP_PACING_GAIN,
            cwnd_gain: startup::STARTUP_CWND_GAIN,
            cycle_idx: Phase::Up,
            cycle_mstamp_us: 0,
            ack_phase: AckPhase::Init,
            probe_wait_us: 0,
            full_bw_reached: false,
            full_bw_now: false,
            full_bw_cnt: 0,
            full_bw: 0,
            has_seen_rtt: false,
            loss_events_in_round: 0,
            startup_ecn_rounds: 0,
            prior_cwnd: 0,
            prev_ca_state: CaState::Open,
            idle_restart: false,
            bw_latest: 0,
            bw_lo: u64::MAX,
            bw_hi: [0; 2],
            inflight_latest: 0,
            inflight_lo: u32::MAX,
            inflight_hi: u32::MAX,
            bw_probe_up_cnt: u32::MAX,
            bw_probe_up_acks: 0,
            bw_probe_up_rounds: 0,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            loss_in_round: false,
            ecn_in_round: false,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            undo_bw_lo: 0,
            undo_inflight_lo: 0,
            undo_inflight_hi: 0,
            ecn_eligible: false,
            ecn_alpha: ECN_ALPHA_INIT,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            aggr: AckAggregation::default(),
        }
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The current ProbeBW phase (meaningful in ProbeBW only).
    pub fn phase(&self) -> Phase {
        self.cycle_idx
    }

    /// Changes mode, checking the edge against the state diagram (v3 has
    /// no ProbeBW → ProbeBW mode restart; phases change within ProbeBW).
    fn transition_to(&mut self, to: Mode) {
        debug_assert!(
            self.mode != to && self.mode.can_transition_to(to),
            "BBRv3: illegal transition {:?} -> {:?}",
            self.mode,
            to
        );
        self.mode = to;
        self.transitions += 1;
    }

    /// Linux `bbr_max_bw`: max of the two cycle buckets of bw_hi.
    #[inline]
    fn max_bw(&self) -> u64 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// Linux `bbr_bw`: the bw the controls use, min(max_bw, bw_lo).
    #[inline]
    fn bw(&self) -> u64 {
        self.max_bw().min(self.bw_lo)
    }

    #[inline]
    fn extra_acked(&self) -> u32 {
        self.aggr.extra_acked()
    }

    /// Linux `bbr_bw_to_pacing_rate` (v3 floors the rate at 1 B/s).
    fn bw_to_pacing_rate(tp: &Sock, bw: u64, gain: u32) -> u64 {
        rate_bytes_per_sec(bw, tp.mss, gain, PACING_MARGIN_PERCENT).max(1)
    }

    /// Linux `bbr_init_pacing_rate_from_rtt` with the v3 Startup gain.
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut Sock) {
        let rtt_us = if tp.srtt_us != 0 {
            self.has_seen_rtt = true;
            tp.srtt_us.max(1)
        } else {
            USEC_PER_MSEC
        };
        let bw = tp.snd_cwnd as u64 * BW_UNIT / rtt_us;
        tp.pacing_rate = Self::bw_to_pacing_rate(tp, bw, startup::STARTUP_PACING_GAIN);
    }

    /// Linux `bbr_set_pacing_rate`.
    fn set_pacing_rate(&mut self, tp: &mut Sock, bw: u64, gain: u32) {
        let rate = Self::bw_to_pacing_rate(tp, bw, gain);
        if !self.has_seen_rtt && tp.srtt_us != 0 {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full_bw_reached || rate > tp.pacing_rate {
            tp.pacing_rate = rate;
        }
    }

    /// Linux v3 `bbr_tso_segs_goal`: ~1 ms of data plus 64 KB halved per
    /// 512 µs of min_rtt, at least 2 segments.
    fn tso_segs_goal(&self, tp: &Sock) -> u32 {
        let mut bytes = tp.pacing_rate >> PACING_SHIFT;
        let r = self.min_rtt_us >> TSO_RTT_SHIFT;
        if r < 32 {
            bytes += GSO_LEGACY_MAX_SIZE >> r;
        }
        let bytes = bytes.min(GSO_MAX_BYTES);
        ((bytes / tp.mss.max(1) as u64) as u32).max(MIN_TSO_SEGS)
    }

    /// Linux `bbr_save_cwnd`.
    fn save_cwnd(&mut self, tp: &Sock) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = tp.snd_cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(tp.snd_cwnd);
        }
    }

    /// Linux `bbr_bdp`: ceil(bw · min_rtt · gain); init_cwnd before any RTT.
    fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.min_rtt_us == u64::MAX {
            return self.init_cwnd;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        let bdp = ((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128);
        bdp.min(u32::MAX as u128) as u32
    }

    /// Linux v3 `bbr_quantization_budget`: at least three TSO bursts and 4
    /// packets; +2 in PROBE_UP.
    fn quantization_budget(&self, tp: &Sock, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.max(3 * self.tso_segs_goal(tp)).max(CWND_MIN_TARGET);
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            cwnd = cwnd.saturating_add(2);
        }
        cwnd
    }

    /// Linux `bbr_inflight`.
    fn inflight(&self, tp: &Sock, bw: u64, gain: u32) -> u32 {
        self.quantization_budget(tp, self.bdp(bw, gain))
    }

    /// Linux `bbr_packets_in_net_at_edt`.
    fn packets_in_net_at_edt(&self, tp: &Sock, inflight_now: u32) -> u32 {
        let edt_ns = tp.wstamp_ns.max(tp.now_ns);
        let interval_us = (edt_ns - tp.now_ns) / 1_000;
        let interval_delivered = ((self.bw() as u128 * interval_us as u128) >> BW_SCALE) as u64;
        let mut inflight_at_edt = inflight_now as u64;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += self.tso_segs_goal(tp) as u64;
        }
        inflight_at_edt.saturating_sub(interval_delivered) as u32
    }

    /// Linux v3 `bbr_ack_aggregation_cwnd` (also during Startup).
    fn ack_aggregation_cwnd(&self) -> u32 {
        if EXTRA_ACKED_GAIN == 0 {
            return 0;
        }
        let max_aggr_cwnd = (self.bw() as u128 * EXTRA_ACKED_MAX_US as u128 / BW_UNIT as u128) as u64;
        let aggr_cwnd = (EXTRA_ACKED_GAIN as u64 * self.extra_acked() as u64) >> BBR_SCALE;
        aggr_cwnd.min(max_aggr_cwnd) as u32
    }

    /// Linux v3 `bbr_set_cwnd`: slow-start toward the target, snap down once
    /// the pipe has been filled (no packet conservation in v3: loss is
    /// handled by inflight_lo / inflight_hi).
    fn set_cwnd(&mut self, tp: &mut Sock, acked: u32, bw: u64, gain: u32) {
        let mut cwnd = tp.snd_cwnd;
        if acked > 0 {
            let mut target = self.bdp(bw, gain);
            target = target.saturating_add(self.ack_aggregation_cwnd());
            target = self.quantization_budget(tp, target);
            if self.full_bw_reached {
                cwnd = cwnd.saturating_add(acked).min(target);
            } else if cwnd < target || cwnd < 2 * self.init_cwnd {
                cwnd = cwnd.saturating_add(acked);
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            tp.snd_cwnd = tp.snd_cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// Linux `bbr_inflight_with_headroom`: 85 % of inflight_hi (≥ 4).
    fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == u32::MAX {
            return u32::MAX;
        }
        let headroom = ((self.inflight_hi as u64 * INFLIGHT_HEADROOM as u64) >> BBR_SCALE).max(1) as u32;
        self.inflight_hi.saturating_sub(headroom).max(CWND_MIN_TARGET)
    }

    /// Linux `bbr_bound_cwnd_for_inflight_model`: inflight_hi while probing
    /// (REFILL, UP, DOWN), the headroom level in CRUISE and ProbeRTT, and
    /// always inflight_lo.
    fn bound_cwnd_for_inflight_model(&mut self, tp: &mut Sock) {
        let mut cap = u32::MAX;
        if self.mode == Mode::ProbeBw && self.cycle_idx != Phase::Cruise {
            cap = self.inflight_hi;
        } else if self.mode == Mode::ProbeRtt || (self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Cruise) {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo).max(CWND_MIN_TARGET);
        tp.snd_cwnd = tp.snd_cwnd.min(cap);
    }

    /// Linux `bbr_target_inflight`: BDP (+ budget), or less if cwnd is smaller.
    fn target_inflight(&self, tp: &Sock) -> u32 {
        self.inflight(tp, self.bw(), BBR_UNIT).min(tp.snd_cwnd)
    }

    /// Linux `bbr_is_probing_bandwidth`: Startup, REFILL and UP.
    fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw && matches!(self.cycle_idx, Phase::Refill | Phase::Up))
    }

    /// Linux `bbr_is_inflight_too_high`: more than 2 % of the
    /// flight lost, or (with ECN) more than half of the deliveries CE-marked.
    fn is_inflight_too_high(&self, rs: &RateSample) -> bool {
        if rs.lost > 0 && rs.tx_in_flight > 0 {
            let loss_thresh = (rs.tx_in_flight as u64 * LOSS_THRESH as u64) >> BBR_SCALE;
            if rs.lost as u64 > loss_thresh {
                return true;
            }
        }
        if rs.delivered_ce > 0 && rs.delivered > 0 && self.ecn_eligible {
            let ecn_thresh = (rs.delivered as u64 * ECN_THRESH as u64) >> BBR_SCALE;
            if rs.delivered_ce as u64 > ecn_thresh {
                return true;
            }
        }
        false
    }

    /// Linux `bbr_update_round_start`.
    fn update_round_start(&mut self, tp: &Sock, rs: &RateSample) {
        self.round_start = false;
        if rs.interval_us > 0 && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.round_start = true;
        }
    }

    /// Linux `bbr_calculate_bw_sample`: delivered / interval, rounded up.
    fn bw_sample(rs: &RateSample) -> u64 {
        if rs.interval_us > 0 && rs.delivered >= 0 {
            (rs.delivered as u128 * BW_UNIT as u128).div_ceil(rs.interval_us as u128) as u64
        } else {
            0
        }
    }

    /// Linux `bbr_update_latest_delivery_signals`.
    fn update_latest_delivery_signals(&mut self, tp: &Sock, rs: &RateSample, sample_bw: u64) {
        self.loss_round_start = false;
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(sample_bw);
        self.inflight_latest = self.inflight_latest.max(rs.delivered.max(0) as u32);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = tp.delivered;
            self.loss_round_start = true;
        }
    }

    /// Linux `bbr_advance_latest_delivery_signals`: restart the per-round
    /// maxima once per loss round.
    fn advance_latest_delivery_signals(&mut self, rs: &RateSample, sample_bw: u64) {
        if self.loss_round_start {
            self.bw_latest = sample_bw;
            self.inflight_latest = rs.delivered.max(0) as u32;
        }
    }

    /// Linux `bbr_update_congestion_signals`: bw_hi sample, loss in round,
    /// and at the end of each loss round the lower-bound adaptation.
    fn update_congestion_signals(&mut self, tp: &Sock, rs: &RateSample, sample_bw: u64) {
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        if !rs.is_app_limited || sample_bw >= self.max_bw() {
            self.bw_hi[1] = self.bw_hi[1].max(sample_bw);
        }
        self.loss_in_round |= rs.losses > 0;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds(tp);
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    /// Linux `bbr_init_lower_bounds`.
    fn init_lower_bounds(&mut self, tp: &Sock, init_bw: bool) {
        if init_bw && self.bw_lo == u64::MAX {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == u32::MAX {
            self.inflight_lo = tp.snd_cwnd;
        }
    }

    /// Linux `bbr_adapt_lower_bounds`: at the end of a round
    /// with loss, while not probing, bw_lo = max(bw_latest, 0.7·bw_lo) and
    /// inflight_lo = max(inflight_latest, 0.7·inflight_lo); with CE marks
    /// inflight_lo ×= 1 − alpha/3.
    fn adapt_lower_bounds(&mut self, tp: &Sock) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = u32::MAX;
        if self.ecn_in_round && ECN_FACTOR > 0 {
            self.init_lower_bounds(tp, false);
            ecn_inflight_lo = ((self.inflight_lo as u64 * self.ecn_cut() as u64) >> BBR_SCALE) as u32;
        }
        if self.loss_in_round {
            self.init_lower_bounds(tp, true);
            let loss_cut = (BBR_UNIT - BETA) as u128;
            self.bw_lo = self.bw_latest.max(((self.bw_lo as u128 * loss_cut) >> BBR_SCALE) as u64);
            self.inflight_lo =
                self.inflight_latest.max(((self.inflight_lo as u64 * loss_cut as u64) >> BBR_SCALE) as u32);
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.max(1);
    }

    /// Linux `bbr_ecn_cut`: 1 − alpha · ecn_factor, 1/256.
    fn ecn_cut(&self) -> u32 {
        BBR_UNIT - ((self.ecn_alpha * ECN_FACTOR) >> BBR_SCALE)
    }

    /// Linux `bbr_reset_lower_bounds`.
    fn reset_lower_bounds(&mut self) {
        self.bw_lo = u64::MAX;
        self.inflight_lo = u32::MAX;
    }

    /// Linux `bbr_reset_congestion_signals`.
    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// Linux `bbr_update_ecn_alpha`: once per round, the EWMA of the CE
    /// ratio; returns the ratio (1/256) or None when ECN is not in use.
    fn update_ecn_alpha(&mut self, tp: &Sock) -> Option<u32> {
        if !self.ecn_eligible && self.cfg.ecn && ECN_FACTOR > 0 && self.min_rtt_us <= ECN_MAX_RTT_US {
            self.ecn_eligible = true;
        }
        if !self.ecn_eligible {
            return None;
        }
        let delivered = tp.delivered - self.alpha_last_delivered;
        let delivered_ce = tp.delivered_ce - self.alpha_last_delivered_ce;
        if delivered == 0 {
            return None;
        }
        let ce_ratio = ((delivered_ce << BBR_SCALE) / delivered) as u32;
        let alpha =
            (((BBR_UNIT - ECN_ALPHA_GAIN) * self.ecn_alpha) >> BBR_SCALE) + ((ECN_ALPHA_GAIN * ce_ratio) >> BBR_SCALE);
        self.ecn_alpha = alpha.min(BBR_UNIT);
        self.alpha_last_delivered = tp.delivered;
        self.alpha_last_delivered_ce = tp.delivered_ce;
        self.check_ecn_too_high_in_startup(tp, ce_ratio);
        Some(ce_ratio)
    }

    /// Linux `bbr_update_ack_aggregation`; the window is one round in Startup.
    fn update_ack_aggregation(&mut self, tp: &Sock, rs: &RateSample) {
        if EXTRA_ACKED_GAIN == 0 {
            return;
        }
        let window_rounds = if self.full_bw_reached { EXTRA_ACKED_WIN_RTTS } else { 1 };
        let bw = self.bw();
        self.aggr.update(rs, self.round_start, window_rounds, bw, self.delivered_mstamp_us, tp.snd_cwnd);
    }

    /// Linux v3 `bbr_update_gains`: cwnd gain 2.25 in PROBE_UP.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (startup::STARTUP_PACING_GAIN, startup::STARTUP_CWND_GAIN),
            Mode::Drain => (drain::DRAIN_GAIN, startup::STARTUP_CWND_GAIN),
            Mode::ProbeBw => {
                let mut cwnd_gain = CWND_GAIN;
                if probe_bw::BW_PROBE_CWND_GAIN > 0 && self.cycle_idx == Phase::Up {
                    cwnd_gain += BBR_UNIT * probe_bw::BW_PROBE_CWND_GAIN / 4;
                }
                (self.cycle_idx.pacing_gain(), cwnd_gain)
            }
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// Linux v3 `bbr_update_model`.
    fn update_model(&mut self, tp: &mut Sock, rs: &RateSample, sample_bw: u64) {
        self.update_congestion_signals(tp, rs, sample_bw);
        self.update_ack_aggregation(tp, rs);
        self.check_loss_too_high_in_startup(tp, rs);
        self.check_startup_done(rs, sample_bw);
        self.check_drain(tp);
        self.update_probe_bw_cycle_phase(tp, rs, sample_bw);
        self.update_min_rtt(tp, rs);
    }

    /// Linux `bbr_note_loss`: the loss round runs from the first loss.
    fn note_loss(&mut self, tp: &Sock) {
        if !self.loss_in_round {
            self.loss_round_delivered = tp.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }

    /// Linux `bbr_inflight_hi_from_lost_skb`: the inflight at which the
    /// loss rate crossed 2 %, solving
    /// (lost_prev + x) / (inflight_prev + x) = loss_thresh for x.
    fn inflight_hi_from_lost_skb(rs: &RateSample) -> u32 {
        let pcount = 1u32;
        let Some(inflight_prev) = rs.tx_in_flight.checked_sub(pcount) else { return u32::MAX };
        let Some(lost_prev) = rs.lost.checked_sub(pcount) else { return u32::MAX };
        let loss_budget = (inflight_prev as u64 * LOSS_THRESH as u64).div_ceil(BBR_UNIT as u64);
        let lost_prefix = if lost_prev as u64 >= loss_budget {
            0
        } else {
            ((loss_budget - lost_prev as u64) << BBR_SCALE) / (BBR_UNIT - LOSS_THRESH) as u64
        };
        (inflight_prev as u64 + lost_prefix).min(u32::MAX as u64) as u32
    }
}

impl CongestionControl for Bbr3 {
    /// google/bbr v3 `bbr_init`.
    fn init(&mut self, tp: &mut Sock) {
        let cfg = self.cfg.clone();
        *self = Bbr3::new(cfg);
        self.rng = SplitMix64::new(mix_seed(self.cfg.seed, tp.rng_seed));
        self.mss = tp.mss;
        self.init_cwnd = tp.snd_cwnd.min(0x7F);
        self.prior_cwnd = tp.prior_cwnd;
        tp.snd_ssthresh = crate::INFINITE_SSTHRESH;
        self.next_rtt_delivered = tp.delivered;
        self.probe_rtt_min_us = tp.min_rtt_us;
        self.probe_rtt_min_stamp_us = tp.now_us;
        self.min_rtt_us = tp.min_rtt_us;
        self.min_rtt_stamp_us = tp.now_us;
        self.delivered_mstamp_us = tp.now_us;
        self.init_pacing_rate_from_rtt(tp);
        self.aggr.epoch_mstamp_us = tp.now_us;
        // Start sampling ECN/loss rounds after the first flight is ACKed.
        self.loss_round_delivered = tp.delivered + 1;
        self.alpha_last_delivered = tp.delivered;
        self.alpha_last_delivered_ce = tp.delivered_ce;
    }

    /// Linux v3 `bbr_ssthresh`: save cwnd and the bounds for undo.
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        self.save_cwnd(tp);
        self.undo_bw_lo = self.bw_lo;
        self.undo_inflight_lo = self.inflight_lo;
        self.undo_inflight_hi = self.inflight_hi;
        tp.snd_ssthresh
    }

    fn cong_avoid(&mut self, _tp: &mut Sock, _acked: u32) {}

    /// google/bbr v3 `bbr_main`.
    fn cong_control(&mut self, tp: &mut Sock, rs: &RateSample) -> bool {
        if rs.acked_sacked > 0 {
            self.delivered_mstamp_us = tp.now_us;
        }
        self.update_round_start(tp, rs);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xFF);
            self.update_ecn_alpha(tp);
        }
        self.ecn_in_round |= self.ecn_eligible && rs.is_ece;
        let sample_bw = Self::bw_sample(rs);
        self.update_latest_delivery_signals(tp, rs, sample_bw);

        self.update_model(tp, rs, sample_bw);

        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(tp, bw, self.pacing_gain);
        self.set_cwnd(tp, rs.acked_sacked, bw, self.cwnd_gain);
        self.bound_cwnd_for_inflight_model(tp);

        self.advance_latest_delivery_signals(rs, sample_bw);
        self.prev_ca_state = tp.ca_state;
        self.loss_in_cycle |= rs.lost > 0;
        self.ecn_in_cycle |= rs.delivered_ce > 0;
        true
    }

    /// google/bbr v3 `bbr_skb_marked_lost`: while probing, find the
    /// inflight at which the loss rate went too high and set inflight_hi.
    fn skb_marked_lost(&mut self, tp: &mut Sock, rs: &RateSample) {
        self.note_loss(tp);
        if !self.bw_probe_samples {
            return;
        }
        if self.is_inflight_too_high(rs) {
            let rs2 = RateSample { tx_in_flight: Self::inflight_hi_from_lost_skb(rs), ..*rs };
            self.handle_inflight_too_high(tp, &rs2);
        }
    }

    /// google/bbr v3 `bbr_set_state`.
    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.reset_full_bw();
            if !self.is_probing_bandwidth() && self.inflight_lo == u32::MAX {
                // adapt_lower_bounds needs the cwnd from before the RTO.
                self.inflight_lo = tp.snd_cwnd.max(self.prior_cwnd);
            }
        } else if self.prev_ca_state == CaState::Loss {
            // Linux bbr_exit_loss_recovery.
            tp.snd_cwnd = tp.snd_cwnd.max(self.prior_cwnd);
        }
    }

    /// google/bbr v3 `bbr_cwnd_event` (TX_START after idle).
    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        if let CaEvent::TxStart { .. } = ev {
            if tp.app_limited == 0 {
                return;
            }
            self.idle_restart = true;
            self.aggr.restart_epoch(tp.now_us);
            if self.mode == Mode::ProbeBw {
                let bw = self.bw();
                self.set_pacing_rate(tp, bw, BBR_UNIT);
            } else if self.mode == Mode::ProbeRtt {
                self.check_probe_rtt_done(tp);
            }
        }
    }

    /// google/bbr v3 `bbr_undo_cwnd`: revert the loss-driven bounds.
    fn undo_cwnd(&mut self, _tp: &Sock) -> u32 {
        self.reset_full_bw();
        self.loss_in_round = false;
        self.bw_lo = self.bw_lo.max(self.undo_bw_lo);
        self.inflight_lo = self.inflight_lo.max(self.undo_inflight_lo);
        self.inflight_hi = self.inflight_hi.max(self.undo_inflight_hi);
        self.prior_cwnd
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &[
            "state",
            "pacing_gain",
            "cwnd_gain",
            "btl_bw_bps",
            "min_rtt_ms",
            "inflight_hi_pkts",
            "inflight_lo_pkts",
            "phase",
        ]
    }

    /// state: 0 Startup, 1 Drain, 2 ProbeBW, 3 ProbeRTT; gains as
    /// multipliers; btl_bw = min(max_bw, bw_lo) in bit/s of payload;
    /// min_rtt in ms (NaN before a sample); inflight_hi/lo in packets
    /// (NaN while unset, i.e. unbounded); phase: 0 UP, 1 DOWN, 2 CRUISE, 3 REFILL (NaN
    /// outside ProbeBW).
    fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
        let pkts = |v: u32| if v == u32::MAX { f64::NAN } else { v as f64 };
        out[0] = self.mode as u8 as f64;
        out[1] = self.pacing_gain as f64 / BBR_UNIT as f64;
        out[2] = self.cwnd_gain as f64 / BBR_UNIT as f64;
        out[3] = bw_to_bps(self.bw(), self.mss);
        out[4] = if self.min_rtt_us == u64::MAX { f64::NAN } else { self.min_rtt_us as f64 / 1e3 };
        out[5] = pkts(self.inflight_hi);
        out[6] = pkts(self.inflight_lo);
        out[7] = if self.mode == Mode::ProbeBw { self.cycle_idx as u8 as f64 } else { f64::NAN };
    }
}

#[cfg(test)]
pub(crate) mod tests;
