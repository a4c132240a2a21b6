//! TCP Prague, following the L4STeam Linux tree's `net/ipv4/tcp_prague.c`
//! (v0.7, `MODULE_VERSION("0.7")`).
//!
//! Sources: L4STeam/linux `tcp_prague.c` v0.7 (Chang, Tilmans, De Schepper,
//! Briscoe), with v0.6 for what v0.7 keeps; RFC 9331 §4 (the "Prague L4S
//! requirements": ECT(1), accurate feedback, scalable response, Reno-like
//! response to loss, reduced RTT dependence, fractional windows); RFC 8257
//! (DCTCP, whose α estimator Prague keeps); RFC 9768 (AccECN, the feedback it
//! needs).
//!
//! Prague is DCTCP made fit for the Internet: it sends ECT(1) so an L4S queue
//! marks it at a shallow threshold, reads the exact number of CE-marked
//! packets from AccECN, and answers each round's marks in proportion:
//!
//! ```text
//!  per ACK (cong_control):   acked = newly delivered − newly CE-marked
//!      slow start:          cwnd += acked (Linux tcp_slow_start)
//!      else:                frac_cwnd += acked·ai/cwnd        (ai = 1, or (srtt/25 ms)²)
//!      first CE ever:       frac_cwnd /= 2
//!      integer cwnd steps ±1 per ACK toward ⌈frac_cwnd⌉ (≥ 2); a step down sets ssthresh;
//!      each step recomputes ai from the current srtt
//!  once per round (and, RTT-independent, at most once per 25 ms):
//!      F = CE-marked / delivered over the round
//!      α ← α + g·(F − α)                                   g = 1/16
//!  entering CWR (an ACK reported new CE; at most once per round / 25 ms):
//!      frac_cwnd −= frac_cwnd·α/2
//!  entering Recovery, or a timeout: frac_cwnd /= 2 (Reno), no increase until Open
//!  pacing: mss·max(⌊frac_cwnd⌋, in flight)/srtt, doubled in slow start
//! ```
//!
//! Fixed-point units are Linux's: the window in 2⁻²⁰ packets (`CWND_UNIT`),
//! α in 2⁻²⁴ kept multiplied by 2^shift_g (`upscaled_alpha`), the additive
//! increase in 2⁻²⁰ packets per round.
//!
//! RTT independence (v0.7 rate scaling, RFC 9331 §4 reduced RTT dependence):
//! four rounds after slow start, a flow whose srtt is below the 25 ms target
//! adds only (srtt/25 ms)² packets per round and updates α and cuts at most
//! once per 25 ms, so its rate grows by one packet per (25 ms)² like a 25 ms
//! flow's. `rtt_scaling = false` turns this off (DCTCP-like per-round
//! behaviour).
//!
//! Without AccECN (the receiver does not support it), Linux's `prague_init`
//! runs the connection as plain Reno ("prague-reno"), Not-ECT; so does this
//! one when [`Sock::ecn_mode`] is not [`EcnMode::AccEcn`].
//!
//! Not modelled: v0.7's rate mode below 4 packets of window (MSS shrinking,
//! the ±3 % pacing offset), the GSO burst cap (`prague_tso_segs`; the
//! simulator paces packet by packet), v0.6's optional Classic-ECN bottleneck
//! detection (removed in v0.7; RFC 9331's R5 is thus not met).

use crate::params::{ParamDefault, ParamKind, ParamSpec, Params};
use crate::{common, CaEvent, CaState, CongestionControl, EcnMode, RateSample, Sock, MAX_METRICS};

/// Linux `CWND_UNIT`: one packet of fractional window.
pub const CWND_ONE: u64 = 1 << 20;
/// Linux `PRAGUE_ALPHA_BITS`: α = 1.
pub const ALPHA_ONE: u64 = 1 << 24;
/// Linux `MIN_CWND_RTT`: floor of the integer window, packets.
pub const MIN_CWND: u32 = 2;
/// Linux `MAX_SCALED_RTT`: no AI scaling above this srtt (overflow guard), µs.
pub const MAX_SCALED_RTT_US: u64 = 100_000;
/// Linux `MINIMUM_RATE`: the pacing floor, bytes per second (100 kbit/s).
pub const MINIMUM_RATE: u64 = 12_500;
/// v0.7 normalises the additive increase to a 1500-byte MTU; the MTU here
/// is the MSS plus 52 header bytes (IPv4 + TCP with timestamps, the
/// simulator's default header), so the default MSS of 1448 has an MTU of 1500.
pub const MTU_OVERHEAD: u64 = 52;
/// The MTU the additive increase is normalised to, bytes.
pub const REFERENCE_MTU: u64 = 1500;

/// Prague's parameters; defaults are v0.7's.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "shift_g",
        kind: ParamKind::Int { min: 0, max: 8 },
        default: ParamDefault::Int(4),
        doc: "EWMA gain g = 1/2^shift_g for alpha; tcp_prague.c PRAGUE_SHIFT_G = 4 (g = 1/16, as DCTCP, RFC 8257)",
    },
    ParamSpec {
        name: "rtt_scaling",
        kind: ParamKind::Bool,
        default: ParamDefault::Bool(true),
        doc:
            "RTT independence: below rtt_target_us add (srtt/rtt_target_us)^2 packets per round and update alpha and cut at \
              most once per rtt_target_us (v0.7 rate-scaled AI); false: per-round behaviour at any RTT",
    },
    ParamSpec {
        name: "rtt_target_us",
        kind: ParamKind::Int { min: 1_000, max: 100_000 },
        default: ParamDefault::Int(25_000),
        doc: "the virtual RTT of RTT independence, microseconds; tcp_prague.c prague_rtt_target = 25 ms",
    },
    ParamSpec {
        name: "rtt_transition",
        kind: ParamKind::Int { min: 0, max: 1_000 },
        default: ParamDefault::Int(4),
        doc: "rounds after slow start before RTT independence starts; v0.7 prague_rtt_transition = 4",
    },
];

/// Typed Prague configuration (see [`PARAMS`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PragueConfig {
    pub shift_g: u32,
    pub rtt_scaling: bool,
    pub rtt_target_us: u64,
    pub rtt_transition: u32,
}

impl Default for PragueConfig {
    fn default() -> Self {
        PragueConfig { shift_g: 4, rtt_scaling: true, rtt_target_us: 25_000, rtt_transition: 4 }
    }
}

impl PragueConfig {
    /// Reads resolved registry parameters.
    pub fn from_params(p: &Params) -> PragueConfig {
        PragueConfig {
            shift_g: p.int("shift_g") as u32,
            rtt_scaling: p.bool("rtt_scaling"),
            rtt_target_us: p.int("rtt_target_us") as u64,
            rtt_transition: p.int("rtt_transition") as u32,
        }
    }
}

/// Linux `struct prague` (fractional-window mode).
#[derive(Clone, Debug)]
pub struct Prague {
    cfg: PragueConfig,
    /// No AccECN was negotiated: the connection runs as Reno ("prague-reno").
    reno: bool,
    /// α·2^shift_g in 2⁻²⁴ units.
    upscaled_alpha: u64,
    /// Time of the last α update, µs.
    alpha_stamp_us: u64,
    /// Time of the last CWR cut, µs.
    cwr_stamp_us: u64,
    /// The window in 2⁻²⁰ packets.
    frac_cwnd: u64,
    /// Window and fractional window before the last loss, for undo.
    loss_cwnd: u32,
    loss_frac_cwnd: u64,
    /// `tp.delivered` / `tp.delivered_ce` at the start of the round.
    old_delivered: u64,
    old_delivered_ce: u64,
    /// snd_nxt (bytes) at the start of the round: it ends when snd_una passes it.
    next_seq: u64,
    /// Rounds since slow start ended.
    round: u32,
    /// Additive increase per round, 2⁻²⁰ packets.
    ai_ack_increase: u64,
    /// A CE mark has been reported on this connection.
    saw_ce: bool,
    /// In Recovery or after a timeout: no additive increase until Open.
    in_loss: bool,
}

impl Prague {
    pub fn new(cfg: PragueConfig) -> Prague {
        Prague {
            cfg,
            reno: false,
            upscaled_alpha: 0,
            alpha_stamp_us: 0,
            cwr_stamp_us: 0,
            frac_cwnd: 0,
            loss_cwnd: 0,
            loss_frac_cwnd: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            next_seq: 0,
            round: 0,
            ai_ack_increase: CWND_ONE,
            saw_ce: false,
            in_loss: false,
        }
    }

    /// α as a fraction in [0, 1].
    pub fn alpha(&self) -> f64 {
        (self.upscaled_alpha >> self.cfg.shift_g) as f64 / ALPHA_ONE as f64
    }

    /// The fractional window, packets.
    pub fn frac_cwnd(&self) -> f64 {
        self.frac_cwnd as f64 / CWND_ONE as f64
    }

    /// Whether the connection runs as Reno for want of AccECN.
    pub fn is_reno(&self) -> bool {
        self.reno
    }

    /// Linux `prague_is_rtt_indep`: past slow start by `rtt_transition` rounds.
    fn rtt_indep(&self, tp: &Sock) -> bool {
        self.cfg.rtt_scaling && !tp.in_slow_start() && self.round >= self.cfg.rtt_transition
    }

    /// Linux `prague_ai_ack_increase` / `prague_rate_scaled_ai_ack_increase`:
    /// one packet per round, or (srtt/target)² below the target RTT so the
    /// rate grows by one packet per target² whatever the RTT.
    fn ai_ack_increase(&self, tp: &Sock) -> u64 {
        let srtt = tp.srtt_us;
        let target = self.cfg.rtt_target_us;
        if !self.cfg.rtt_scaling
            || self.round < self.cfg.rtt_transition
            || srtt == 0
            || srtt > MAX_SCALED_RTT_US
            || srtt >= target
        {
            return CWND_ONE;
        }
        let divisor = target * target;
        (((srtt * srtt) << 20) + divisor / 2) / divisor
    }

    /// Linux `prague_frac_cwnd_to_snd_cwnd`: ⌈frac_cwnd⌉, at least 2, at most the clamp.
    fn target_cwnd(&self, tp: &Sock) -> u32 {
        let w = self.frac_cwnd.div_ceil(CWND_ONE).min(u32::MAX as u64) as u32;
        w.max(MIN_CWND).min(tp.snd_cwnd_clamp)
    }

    /// Linux `prague_update_cwnd`.
    fn update_cwnd(&mut self, tp: &mut Sock, rs: &RateSample) {
        let mut acked = rs.acked_sacked as i64;
        if rs.ece_delta > 0 {
            // v0.7 (prague_alpha_mode 0): α starts at 0 and the first mark halves.
            if !self.saw_ce {
                self.frac_cwnd = (self.frac_cwnd + 1) >> 1;
            }
            self.saw_ce = true;
            // Only packets that were not marked earn an increase (header item 4).
            acked -= rs.ece_delta as i64;
        }
        if acked > 0 && !self.in_loss && tp.is_cwnd_limited() {
            let mut acked = acked as u32;
            if tp.in_slow_start() {
                acked = common::slow_start(tp, acked);
                self.frac_cwnd = (tp.snd_cwnd as u64) << 20;
                if acked == 0 {
                    self.cwnd_changed(tp);
                    return;
                }
            }
            let mtu = tp.mss as u128 + MTU_OVERHEAD as u128;
            // acked·ai/frac_cwnd rounded to nearest (Linux DIV64_U64_ROUND_CLOSEST).
            let frac = self.frac_cwnd.max(1) as u128;
            let inc = (((acked as u128 * self.ai_ack_increase as u128) << 20) + frac / 2) / frac;
            let inc = inc * REFERENCE_MTU as u128 / mtu;
            let inc = inc.max(acked as u128).min(u64::MAX as u128) as u64;
            let cap = (tp.snd_cwnd_clamp as u64) << 20;
            self.frac_cwnd = self.frac_cwnd.saturating_add(inc).min(cap);
        }
        // The integer window follows step by step.
        let target = self.target_cwnd(tp);
        if tp.snd_cwnd > target {
            tp.snd_cwnd -= 1;
            tp.snd_ssthresh = tp.snd_cwnd;
            self.cwnd_changed(tp);
        } else if tp.snd_cwnd < target {
            tp.snd_cwnd += 1;
            self.cwnd_changed(tp);
        }
    }

    /// Linux `prague_cwnd_changed`: every change of the integer window
    /// recomputes the additive increase from the current srtt.
    fn cwnd_changed(&mut self, tp: &Sock) {
        self.ai_ack_increase = self.ai_ack_increase(tp);
    }

    /// Linux `prague_should_update_ewma`: a round has ended (and, RTT
    /// independent, the target RTT has passed since the last update).
    fn should_update_ewma(&self, tp: &Sock) -> bool {
        tp.snd_una >= self.next_seq
            && (!self.rtt_indep(tp) || tp.now_us.saturating_sub(self.alpha_stamp_us) >= self.cfg.rtt_target_us)
    }

    /// Linux `prague_update_alpha`: α ← α + g·(F − α), F the round's marked fraction.
    fn update_alpha(&mut self, tp: &Sock) {
        if self.saw_ce {
            let delivered = tp.delivered.saturating_sub(self.old_delivered).max(1);
            let ce = tp.delivered_ce.saturating_sub(self.old_delivered_ce);
            let f = ((ce as u128) << 24) / delivered as u128;
            let a = self.upscaled_alpha - (self.upscaled_alpha >> self.cfg.shift_g);
            let max = ALPHA_ONE << self.cfg.shift_g;
            self.upscaled_alpha = (a as u128 + f).min(max as u128) as u64;
            self.alpha_stamp_us = tp.now_us;
        }
        self.new_round(tp);
    }

    /// Linux `prague_new_round`.
    fn new_round(&mut self, tp: &Sock) {
        self.next_seq = tp.snd_nxt;
        self.old_delivered = tp.delivered;
        self.old_delivered_ce = tp.delivered_ce;
        if !tp.in_slow_start() {
            self.round = self.round.saturating_add(1);
        }
        self.ai_ack_increase = self.ai_ack_increase(tp);
    }

    /// Linux `prague_enter_cwr`: cut by α/2, at most once per target RTT
    /// when RTT-independent.
    fn enter_cwr(&mut self, tp: &Sock) {
        if self.rtt_indep(tp) && tp.now_us.saturating_sub(self.cwr_stamp_us) < self.cfg.rtt_target_us {
            return;
        }
        self.cwr_stamp_us = tp.now_us;
        let alpha = self.upscaled_alpha >> self.cfg.shift_g;
        // frac_cwnd·α/2, rounded to nearest.
        let reduction = ((alpha as u128 * self.frac_cwnd as u128 + ALPHA_ONE as u128) >> 25) as u64;
        self.frac_cwnd -= reduction.min(self.frac_cwnd);
    }

    /// Linux `prague_enter_loss`: Reno's halving (RFC 9331 §4: fall back to a
    /// Reno-friendly response on loss).
    fn enter_loss(&mut self, tp: &Sock) {
        self.loss_cwnd = tp.snd_cwnd;
        self.loss_frac_cwnd = self.frac_cwnd;
        self.frac_cwnd -= self.frac_cwnd >> 1;
        self.in_loss = true;
    }

    /// Linux `prague_update_pacing_rate` (fractional-window mode): 100 % of
    /// the window per srtt, 200 % in slow start, at least 100 kbit/s; the
    /// window counts whole packets, max(⌊frac_cwnd⌋, packets in flight). The
    /// simulator paces payload bytes, so the rate is in MSS units.
    fn update_pacing_rate(&self, tp: &mut Sock) {
        if tp.srtt_us == 0 {
            return;
        }
        let w = (self.frac_cwnd >> 20).max(tp.packets_in_flight() as u64) as u128;
        let mut rate = (tp.mss as u128 * w * 1_000_000 / tp.srtt_us as u128) as u64;
        rate = rate.max(MINIMUM_RATE);
        if tp.snd_cwnd < tp.snd_ssthresh / 2 {
            rate = rate.saturating_mul(2);
        }
        tp.pacing_rate = rate;
    }
}

impl CongestionControl for Prague {
    /// Linux `prague_init`: without AccECN, Reno; else fresh state.
    fn init(&mut self, tp: &mut Sock) {
        *self = Prague::new(self.cfg.clone());
        self.reno = tp.ecn_mode != EcnMode::AccEcn;
        self.frac_cwnd = (tp.snd_cwnd as u64) << 20;
        self.saw_ce = tp.delivered_ce > 0;
        self.alpha_stamp_us = tp.now_us;
        self.cwr_stamp_us = tp.now_us;
        self.new_round(tp);
    }

    /// Linux `prague_ssthresh`: the current ssthresh; the window itself is
    /// cut in `set_state` and `cwnd_event`.
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        if self.reno {
            return common::reno_ssthresh(tp);
        }
        tp.snd_ssthresh
    }

    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        common::reno_cong_avoid(tp, acked);
    }

    /// Linux `prague_cong_control`.
    fn cong_control(&mut self, tp: &mut Sock, rs: &RateSample) -> bool {
        if self.reno {
            return false;
        }
        self.update_cwnd(tp, rs);
        if self.should_update_ewma(tp) {
            self.update_alpha(tp);
        }
        self.update_pacing_rate(tp);
        true
    }

    /// Linux `prague_state`.
    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        if self.reno || new_state == tp.ca_state {
            return;
        }
        match new_state {
            CaState::Recovery => self.enter_loss(tp),
            CaState::Cwr => self.enter_cwr(tp),
            CaState::Open => self.in_loss = false,
            _ => {}
        }
    }

    /// Linux `prague_cwnd_event`: a timeout halves as a loss does.
    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        if !self.reno && ev == CaEvent::Loss {
            self.enter_loss(tp);
        }
    }

    /// Linux `prague_cwnd_undo`: the pre-loss window comes back.
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        if self.reno {
            return common::reno_undo_cwnd(tp);
        }
        self.in_loss = false;
        self.frac_cwnd = self.frac_cwnd.max(self.loss_frac_cwnd);
        tp.snd_cwnd.max(self.loss_cwnd)
    }

    fn needs_ecn(&self) -> bool {
        true
    }

    fn wants_ect1(&self) -> bool {
        true
    }

    fn needs_accecn(&self) -> bool {
        true
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &["alpha", "frac_cwnd_pkts"]
    }

    fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
        out[0] = self.alpha();
        out[1] = self.frac_cwnd();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit;

    fn prague_at(cwnd: u32, ssthresh: u32, now_us: u64) -> (Prague, Sock) {
        let mut c = Prague::new(PragueConfig::default());
        let mut tp = testkit::sock_at(cwnd, ssthresh, now_us);
        tp.ecn_mode = EcnMode::AccEcn;
        tp.snd_nxt = cwnd as u64 * testkit::MSS as u64;
        c.init(&mut tp);
        (c, tp)
    }

    fn rs(acked: u32, ece_delta: u32) -> RateSample {
        RateSample { acked_sacked: acked, ece_delta, rtt_us: -1, ..Default::default() }
    }

    #[test]
    fn defaults_are_v07() {
        let p = crate::registry::resolve_params("prague", &[]).unwrap();
        assert_eq!(PragueConfig::from_params(&p), PragueConfig::default());
        let (c, _) = prague_at(10, crate::INFINITE_SSTHRESH, 0);
        assert_eq!(c.upscaled_alpha, 0, "v0.7: alpha starts at 0");
        assert!(!c.reno);
    }

    // PR1 (v0.7's `prague_update_alpha`, worked by hand): α = 0.25, a round
    // of 100 delivered with 10 CE: F = ⌊10·2²⁴/100⌋ = 1 677 721;
    // 67 108 864 − 4 194 304 + 1 677 721 = 64 592 281;
    // α = 64 592 281 >> 4 = 4 037 017 (0.240625).
    #[test]
    fn pr1_alpha_update() {
        let (mut c, mut tp) = prague_at(100, 50, 0);
        c.saw_ce = true;
        c.upscaled_alpha = ALPHA_ONE / 4 * 16;
        assert_eq!(c.upscaled_alpha, 67_108_864);
        tp.delivered += 100;
        tp.delivered_ce += 10;
        c.update_alpha(&tp);
        assert_eq!(c.upscaled_alpha, 64_592_281);
        assert_eq!(c.upscaled_alpha >> 4, 4_037_017);
        assert!((c.alpha() - 0.240625).abs() < 1e-6, "{}", c.alpha());
    }

    // PR2: frac_cwnd 100 packets, α from PR1: reduction = (4 037 017·100·2²⁰
    // + 2²⁴) >> 25 = 12 615 678 (12.03125 packets); target ⌈87.97⌉ = 88;
    // cwnd 100 walks down one per ACK (12 ACKs), setting ssthresh each step.
    #[test]
    fn pr2_cwr_cut_and_step_down() {
        let (mut c, mut tp) = prague_at(100, 100, 0);
        c.upscaled_alpha = 64_592_281;
        c.set_state(&mut tp, CaState::Cwr);
        assert_eq!(100 * CWND_ONE - c.frac_cwnd, 12_615_678);
        assert_eq!(c.target_cwnd(&tp), 88);
        tp.ca_state = CaState::Cwr;
        tp.is_cwnd_limited = false;
        for i in 1..=12 {
            c.update_cwnd(&mut tp, &rs(1, 0));
            assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (100 - i, 100 - i));
        }
        c.update_cwnd(&mut tp, &rs(1, 0));
        assert_eq!(tp.snd_cwnd, 88);
    }

    // PR3: srtt 10 ms, round ≥ 4: ai = (10/25)² = 0.16 packet per round
    // (⌊0.16·2²⁰ + ½⌋ = 167 772); srtt 30 ms: 1; round 2: 1.
    #[test]
    fn pr3_ai_scaling() {
        let (mut c, mut tp) = prague_at(100, 50, 0);
        tp.srtt_us = 10_000;
        c.round = 4;
        assert_eq!(c.ai_ack_increase(&tp), 167_772);
        tp.srtt_us = 30_000;
        assert_eq!(c.ai_ack_increase(&tp), CWND_ONE);
        tp.srtt_us = 10_000;
        c.round = 2;
        assert_eq!(c.ai_ack_increase(&tp), CWND_ONE);
        c.round = 4;
        c.cfg.rtt_scaling = false;
        assert_eq!(c.ai_ack_increase(&tp), CWND_ONE, "scaling off: one packet per round");
    }

    // PR4: srtt 10 ms, RTT-independent, a CWR entry every round: cuts at 0,
    // 30, 60 ms (each needs 25 ms since the last).
    #[test]
    fn pr4_cut_spacing() {
        let (mut c, mut tp) = prague_at(100, 50, 1_000_000);
        c.round = 4;
        c.upscaled_alpha = ALPHA_ONE << 4; // α = 1: every cut halves
        c.cwr_stamp_us = 0;
        let mut cuts = vec![];
        for r in 0..7u64 {
            tp.now_us = 1_000_000 + r * 10_000;
            let before = c.frac_cwnd;
            tp.ca_state = CaState::Open;
            c.set_state(&mut tp, CaState::Cwr);
            if c.frac_cwnd < before {
                cuts.push(r * 10);
            }
        }
        assert_eq!(cuts, vec![0, 30, 60]);
        // Per round without RTT independence.
        c.cfg.rtt_scaling = false;
        let before = c.frac_cwnd;
        tp.now_us += 10_000;
        c.set_state(&mut tp, CaState::Cwr);
        assert!(c.frac_cwnd < before);
    }

    // PR5: frac_cwnd 64 packets, the first ACK with ece_delta = 1 halves it
    // ((64·2²⁰ + 1)/2 = 32 packets); cwnd steps down and slow start ends.
    #[test]
    fn pr5_first_mark_halves() {
        let (mut c, mut tp) = prague_at(64, crate::INFINITE_SSTHRESH, 0);
        c.cong_control(&mut tp, &rs(1, 1));
        assert_eq!(c.frac_cwnd, 32 * CWND_ONE);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (63, 63), "left slow start");
        c.cong_control(&mut tp, &rs(1, 1));
        assert_eq!(c.frac_cwnd, 32 * CWND_ONE, "only the first mark halves");
        assert_eq!(tp.snd_cwnd, 62);
    }

    // PR6: cwnd 100, srtt 20 ms, 1500-byte packets: 1500·100/0.02 = 7.5 MB/s;
    // doubled in slow start (cwnd < ssthresh/2); floor 12 500 B/s.
    #[test]
    fn pr6_pacing() {
        let (mut c, mut tp) = prague_at(100, 100, 0);
        tp.mss = 1500;
        tp.srtt_us = 20_000;
        c.update_pacing_rate(&mut tp);
        assert_eq!(tp.pacing_rate, 7_500_000);
        tp.snd_ssthresh = 202;
        c.update_pacing_rate(&mut tp);
        assert_eq!(tp.pacing_rate, 15_000_000);
        c.frac_cwnd = CWND_ONE / 100;
        tp.srtt_us = 1_000_000;
        c.update_pacing_rate(&mut tp);
        assert_eq!(tp.pacing_rate, 2 * MINIMUM_RATE);
    }

    // v0.7 `prague_ai_ack_increase`: in congestion avoidance at srtt ≥ 25 ms,
    // one window of unmarked ACKs adds one packet; with every packet marked,
    // nothing.
    #[test]
    fn additive_increase_one_packet_per_round() {
        let (mut c, mut tp) = prague_at(100, 100, 0);
        tp.srtt_us = 40_000;
        for _ in 0..100 {
            c.update_cwnd(&mut tp, &rs(1, 0));
        }
        assert!((c.frac_cwnd() - 101.0).abs() < 0.01, "{}", c.frac_cwnd());
        assert_eq!(tp.snd_cwnd, 101);
        c.saw_ce = true;
        let f = c.frac_cwnd;
        c.update_cwnd(&mut tp, &rs(2, 2));
        assert_eq!(c.frac_cwnd, f, "marked packets earn no increase");
    }

    // Linux prague_cwnd_changed: each step of the integer window recomputes
    // the additive increase from the current srtt; at 10 ms it is 0.16
    // (167 772), at 20 ms (20/25)² = 0.64: ⌊0.64·2²⁰ + ½⌋ = 671 089. An ACK
    // that leaves cwnd where it is keeps the old value.
    #[test]
    fn each_cwnd_step_recomputes_the_increase() {
        let (mut c, mut tp) = prague_at(100, 50, 0);
        tp.srtt_us = 10_000;
        c.round = 4;
        c.new_round(&tp);
        assert_eq!(c.ai_ack_increase, 167_772);
        tp.srtt_us = 20_000;
        c.frac_cwnd = 100 * CWND_ONE - CWND_ONE / 2;
        c.update_cwnd(&mut tp, &rs(1, 0));
        assert_eq!(tp.snd_cwnd, 100);
        assert_eq!(c.ai_ack_increase, 167_772, "no step, no recomputation");
        c.frac_cwnd = 100 * CWND_ONE;
        c.update_cwnd(&mut tp, &rs(1, 0));
        assert_eq!(tp.snd_cwnd, 101);
        assert_eq!(c.ai_ack_increase, 671_089);
    }

    // Linux prague_update_cwnd: the increase acked·ai·2²⁰/frac_cwnd is
    // rounded to nearest (DIV64_U64_ROUND_CLOSEST): 2 packets acked at
    // frac_cwnd 3, ai 1: 2²¹/3 = 699 050.67 → 699 051 (MTU 1500: factor 1).
    #[test]
    fn the_increase_rounds_to_nearest() {
        let (mut c, mut tp) = prague_at(3, 2, 0);
        tp.srtt_us = 40_000;
        c.update_cwnd(&mut tp, &rs(2, 0));
        assert_eq!(c.frac_cwnd, 3 * CWND_ONE + 699_051);
    }

    // Linux prague_update_pacing_rate: the window in the rate counts whole
    // packets, max(⌊frac_cwnd⌋, packets in flight): frac_cwnd 100.9 with
    // nothing in flight paces 100 packets per srtt (1500·100/0.02 s =
    // 7.5 MB/s); 120 in flight pace 120 (9 MB/s).
    #[test]
    fn pacing_counts_whole_packets() {
        let (mut c, mut tp) = prague_at(100, 100, 0);
        tp.mss = 1500;
        tp.srtt_us = 20_000;
        c.frac_cwnd = 100 * CWND_ONE + CWND_ONE * 9 / 10;
        c.update_pacing_rate(&mut tp);
        assert_eq!(tp.pacing_rate, 7_500_000);
        tp.packets_out = 120;
        c.update_pacing_rate(&mut tp);
        assert_eq!(tp.pacing_rate, 9_000_000);
    }

    // §4.9 and RFC 9331 §4: a loss halves, no increase until Open; undo
    // restores the window.
    #[test]
    fn loss_halves_and_undo_restores() {
        let (mut c, mut tp) = prague_at(80, 80, 0);
        c.set_state(&mut tp, CaState::Recovery);
        tp.ca_state = CaState::Recovery;
        assert_eq!(c.frac_cwnd, 40 * CWND_ONE);
        let f = c.frac_cwnd;
        c.update_cwnd(&mut tp, &rs(5, 0));
        assert_eq!(c.frac_cwnd, f, "no increase in loss");
        assert_eq!(tp.snd_cwnd, 79);
        assert_eq!(c.undo_cwnd(&tp), 80);
        assert_eq!(c.frac_cwnd, 80 * CWND_ONE);
        c.set_state(&mut tp, CaState::Open);
        assert!(!c.in_loss);
        // A timeout halves as well.
        c.cwnd_event(&mut tp, CaEvent::Loss);
        assert_eq!(c.frac_cwnd, 40 * CWND_ONE);
    }

    // PG6: without AccECN Linux's prague_init switches to Reno (L4STeam tcp_prague.c).
    #[test]
    fn without_accecn_runs_as_reno() {
        let mut c = Prague::new(PragueConfig::default());
        let mut tp = testkit::sock_at(40, 20, 0);
        tp.ecn_mode = EcnMode::Rfc3168;
        c.init(&mut tp);
        assert!(c.is_reno());
        assert!(!c.cong_control(&mut tp, &rs(1, 0)));
        assert_eq!(c.ssthresh(&tp), 20);
        c.cong_avoid(&mut tp, 40);
        assert_eq!(tp.snd_cwnd, 41);
    }
}
