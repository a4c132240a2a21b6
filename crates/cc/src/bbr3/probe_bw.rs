//! PROBE_BW (v3): DOWN → CRUISE → REFILL → UP → DOWN, with the upper
//! bounds (inflight_hi, bw_hi) adapted from what each probe sees
//! (google/bbr v3 `tcp_bbr.c`).
//!
//! * DOWN (0.91): drain until inflight ≤ BDP and ≤ 85 % of inflight_hi.
//! * CRUISE (1.0): cwnd ≤ 85 % of inflight_hi; wait 2–3 s, or fewer
//!   rounds (min(BDP, 63)) for Reno coexistence, then probe.
//! * REFILL (1.0): one round at the estimated bw with the lower bounds
//!   reset, so a shallow buffer is not overrun before the pipe is full.
//! * UP (1.25, cwnd gain 2.25): raise inflight_hi by 1, 2, 4, … packets per
//!   round until > 2 % loss (inflight_hi is set where the loss rate crossed
//!   2 %), a bw plateau, or inflight reaches a previous too-high inflight_hi.

use super::{AckPhase, Bbr3, BETA, ECN_FACTOR};
use crate::bbr::{Mode, BBR_SCALE, BBR_UNIT};
use crate::{CaState, RateSample, Sock};

/// ProbeBW phases, numbered as google/bbr's `cycle_idx` (traces export the number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Push inflight up to probe for bw.
    Up = 0,
    /// Drain the queue the probe built.
    Down = 1,
    /// Use the pipe with headroom.
    Cruise = 2,
    /// Refill the pipe to the estimated BDP before probing.
    Refill = 3,
}

impl Phase {
    /// google/bbr `bbr_pacing_gain[]`: UP 1.25, DOWN 0.91, CRUISE and REFILL 1.0.
    pub fn pacing_gain(self) -> u32 {
        match self {
            Phase::Up => BBR_UNIT * 5 / 4,
            Phase::Down => BBR_UNIT * 91 / 100,
            Phase::Cruise | Phase::Refill => BBR_UNIT,
        }
    }
}

/// cwnd gain in UP is raised by this many quarters (0.25 → 2.25).
pub(crate) const BW_PROBE_CWND_GAIN: u32 = 1;
/// Reno-coexistence bound on rounds between probes.
const BW_PROBE_MAX_ROUNDS: u32 = 63;
/// Random extra rounds (0..2) in the Reno-coexistence bound.
const BW_PROBE_RAND_ROUNDS: u32 = 2;
/// Wall-clock wait between probes: 2 s + rand(0, 1 s).
const BW_PROBE_BASE_US: u64 = 2_000_000;
const BW_PROBE_RAND_US: u32 = 1_000_000;
/// After a cycle with CE marks but no loss, reprobe at once with the
/// first round's inflight_hi increment = half of inflight_hi.
const ECN_REPROBE_GAIN: u32 = BBR_UNIT / 2;

impl Bbr3 {
    /// Linux `bbr_set_cycle_idx`.
    fn set_cycle_idx(&mut self, phase: Phase) {
        self.cycle_idx = phase;
    }

    /// Linux `bbr_advance_max_bw_filter`: keep the max of the last 1–2 cycles.
    fn advance_max_bw_filter(&mut self) {
        if self.bw_hi[1] == 0 {
            return;
        }
        self.bw_hi[0] = self.bw_hi[1];
        self.bw_hi[1] = 0;
    }

    /// Linux `bbr_has_elapsed_in_phase`.
    fn has_elapsed_in_phase(&self, tp: &Sock, interval_us: u64) -> bool {
        tp.now_us > self.cycle_mstamp_us + interval_us
    }

    /// Linux `bbr_raise_inflight_hi_slope`: each round of UP doubles the
    /// growth of inflight_hi (1, 2, 4, … packets per round).
    fn raise_inflight_hi_slope(&mut self, tp: &Sock) {
        let growth_this_round = 1u32 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = (tp.snd_cwnd / growth_this_round).max(1);
    }

    /// Linux `bbr_probe_inflight_hi_upward`: +1 per bw_probe_up_cnt packets
    /// ACKed while cwnd-limited at inflight_hi.
    fn probe_inflight_hi_upward(&mut self, tp: &Sock, rs: &RateSample) {
        if !tp.is_cwnd_limited || tp.snd_cwnd < self.inflight_hi {
            return;
        }
        self.bw_probe_up_acks += rs.acked_sacked;
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
        }
        if self.round_start {
            self.raise_inflight_hi_slope(tp);
        }
    }

    /// Linux `bbr_handle_inflight_too_high`: once per probe, set
    /// inflight_hi to the inflight where loss went too high (at least
    /// 0.7 × target), and stop probing.
    pub(super) fn handle_inflight_too_high(&mut self, tp: &Sock, rs: &RateSample) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !rs.is_app_limited {
            let floor = ((self.target_inflight(tp) as u64 * (BBR_UNIT - BETA) as u64) >> BBR_SCALE) as u32;
            self.inflight_hi = rs.tx_in_flight.max(floor);
        }
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            self.start_bw_probe_down(tp);
        }
    }

    /// Linux `bbr_adapt_upper_bounds`. Returns true if it decided a phase change.
    fn adapt_upper_bounds(&mut self, tp: &Sock, rs: &RateSample) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // The probe's samples are over: forget the older bw bucket now.
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !rs.is_app_limited {
                self.advance_max_bw_filter();
            }
            // A probe that reached inflight_hi without excess loss: probe
            // again at once, letting inflight sit at inflight_hi a round.
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(tp, 0);
                return true;
            }
        }
        if self.is_inflight_too_high(rs) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(tp, rs);
            }
        } else {
            if self.inflight_hi == u32::MAX {
                return false;
            }
            // Robust to random loss: raise inflight_hi whenever a higher
            // level proved safe.
            if rs.tx_in_flight > self.inflight_hi {
                self.inflight_hi = rs.tx_in_flight;
            }
            if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
                self.probe_inflight_hi_upward(tp, rs);
            }
        }
        false
    }

    /// Linux `bbr_pick_probe_wait`.
    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = self.rng.below(BW_PROBE_RAND_ROUNDS);
        self.probe_wait_us = BW_PROBE_BASE_US + self.rng.below(BW_PROBE_RAND_US) as u64;
    }

    /// Linux `bbr_is_reno_coexistence_probe_time`: a Reno flow with our BDP
    /// would probe every BDP rounds (at most 63).
    fn is_reno_coexistence_probe_time(&self, tp: &Sock) -> bool {
        let rounds = BW_PROBE_MAX_ROUNDS.min(self.target_inflight(tp));
        self.rounds_since_probe >= rounds
    }

    /// Linux `bbr_start_bw_probe_refill`.
    fn start_bw_probe_refill(&mut self, tp: &Sock, bw_probe_up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = bw_probe_up_rounds;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = tp.delivered;
        self.set_cycle_idx(Phase::Refill);
    }

    /// Linux `bbr_start_bw_probe_up`.
    fn start_bw_probe_up(&mut self, tp: &Sock, sample_bw: u64) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = tp.delivered;
        self.cycle_mstamp_us = tp.now_us;
        self.reset_full_bw();
        self.full_bw = sample_bw;
        self.set_cycle_idx(Phase::Up);
        self.raise_inflight_hi_slope(tp);
    }

    /// Linux `bbr_start_bw_probe_down`: start a cycle with a random wait.
    pub(super) fn start_bw_probe_down(&mut self, tp: &Sock) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = u32::MAX;
        self.pick_probe_wait();
        self.cycle_mstamp_us = tp.now_us;
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = tp.delivered;
        self.set_cycle_idx(Phase::Down);
    }

    /// Linux `bbr_start_bw_probe_cruise`.
    pub(super) fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != u32::MAX {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.set_cycle_idx(Phase::Cruise);
    }

    /// Linux `bbr_check_time_to_probe_bw`.
    fn check_time_to_probe_bw(&mut self, tp: &Sock) -> bool {
        if ECN_REPROBE_GAIN > 0
            && ECN_FACTOR > 0
            && self.ecn_eligible
            && self.ecn_in_cycle
            && !self.loss_in_cycle
            && tp.ca_state == CaState::Open
        {
            let target = ((self.inflight_hi as u64 * ECN_REPROBE_GAIN as u64) >> BBR_SCALE).max(1);
            let n = 63 - target.leading_zeros();
            self.start_bw_probe_refill(tp, n);
            return true;
        }
        if self.has_elapsed_in_phase(tp, self.probe_wait_us) || self.is_reno_coexistence_probe_time(tp) {
            self.start_bw_probe_refill(tp, 0);
            return true;
        }
        false
    }

    /// Linux `bbr_check_time_to_cruise`: inflight at or below both the
    /// headroom level and one BDP.
    fn check_time_to_cruise(&self, tp: &Sock, inflight: u32, bw: u64) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    /// Linux v3 `bbr_update_cycle_phase`: the ProbeBW state machine.
    pub(super) fn update_probe_bw_cycle_phase(&mut self, tp: &Sock, rs: &RateSample, sample_bw: u64) {
        if !self.full_bw_reached {
            return;
        }
        // In Drain, ProbeBW or ProbeRTT, adapt the upper bounds.
        if self.adapt_upper_bounds(tp, rs) {
            return;
        }
        if self.mode != Mode::ProbeBw {
            return;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        match self.cycle_idx {
            Phase::Cruise => {
                self.check_time_to_probe_bw(tp);
            }
            Phase::Refill => {
                // After one round of REFILL, samples reflect the refill.
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(tp, sample_bw);
                }
            }
            Phase::Up => {
                let mut is_bw_probe_done = false;
                if self.prev_probe_too_high && inflight >= self.inflight_hi {
                    // (1) Reached the inflight_hi the last probe found too
                    // high: the next packets will likely be lost.
                    self.stopped_risky_probe = true;
                    is_bw_probe_done = true;
                } else if tp.is_cwnd_limited && tp.snd_cwnd >= self.inflight_hi {
                    // inflight_hi is what limits growth: not a plateau.
                    self.reset_full_bw();
                    self.full_bw = sample_bw;
                } else if self.full_bw_now {
                    // (2) bw plateau: the pipe looks full.
                    is_bw_probe_done = true;
                }
                if is_bw_probe_done {
                    self.prev_probe_too_high = false;
                    self.start_bw_probe_down(tp);
                }
            }
            Phase::Down => {
                if self.check_time_to_probe_bw(tp) {
                    return;
                }
                if self.check_time_to_cruise(tp, inflight, bw) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;
    use crate::CongestionControl;

    #[test]
    fn phase_gains() {
        assert_eq!(Phase::Up.pacing_gain(), 320);
        assert_eq!(Phase::Down.pacing_gain(), 232, "0.91 → 232/256");
        assert_eq!(Phase::Cruise.pacing_gain(), 256);
        assert_eq!(Phase::Refill.pacing_gain(), 256);
    }

    // One full cycle at 10 Mbit/s, min_rtt 40 ms (BDP 34). Entering
    // ProbeBW with little in flight passes DOWN at once to CRUISE; CRUISE
    // lasts until the probe wait or the Reno bound (min(BDP + budget, 63)
    // rounds) passes; REFILL lasts one round; UP ends on a bw plateau (3
    // rounds without +25 %); DOWN ends when inflight ≤ BDP.
    #[test]
    fn cycle_cruise_refill_up_down_cruise() {
        let (mut b, mut tp) = in_probe_bw(10.0, 40_000);
        assert_eq!(b.phase(), Phase::Cruise);
        tp.is_cwnd_limited = false;
        let mut phases = vec![(Phase::Cruise, tp.now_us)];
        for _ in 0..20_000 {
            // One ACK per ms, a round every 40 ACKs; 34 in flight, 60 in
            // the first ACK of DOWN.
            let round = tp.now_us % 40_000 == 0;
            let mut rs = sample_for(&b, &tp, 10.0, 40_000);
            if !round {
                rs.prior_delivered = 0;
            }
            let inflight = if b.phase() == Phase::Up { 60 } else { 34 };
            rs.prior_in_flight = inflight;
            rs.tx_in_flight = inflight;
            ack(&mut b, &mut tp, rs);
            if b.phase() != phases.last().unwrap().0 {
                phases.push((b.phase(), tp.now_us));
            }
            if phases.len() == 5 {
                break;
            }
        }
        let order: Vec<Phase> = phases.iter().map(|p| p.0).collect();
        assert_eq!(order, [Phase::Cruise, Phase::Refill, Phase::Up, Phase::Down, Phase::Cruise]);
        let ms = |i: usize| (phases[i + 1].1 - phases[i].1) / 1000;
        // Cruise → Refill by the Reno bound: 34 rounds of 40 ms, well
        // before the 2–3 s wall clock.
        assert!((1_300..1_400).contains(&ms(0)), "cruise {} ms", ms(0));
        assert!(ms(1) <= 40, "refill {} ms", ms(1));
        assert!((80..=160).contains(&ms(2)), "up {} ms", ms(2));
        assert_eq!(ms(3), 1, "down ends on the first ACK with inflight ≤ BDP");
    }

    // Worked by hand from v3's 2 % rule: an UP round with 100 packets
    // delivered and 3 lost (3/103 = 2.9 % > 2 %) is too high → inflight_hi
    // from the flight, DOWN;
    // with 1 lost (0.99 %) the probe continues.
    #[test]
    fn probe_up_stops_above_two_percent_loss() {
        for (lost, too_high) in [(3u32, true), (1, false)] {
            let (mut b, mut tp) = in_probe_bw(10.0, 40_000);
            b.cycle_idx = Phase::Up;
            b.reset_full_bw();
            b.bw_probe_samples = true;
            b.inflight_hi = 90;
            tp.snd_cwnd = 60;
            b.update_gains();
            let mut rs = sample_for(&b, &tp, 10.0, 40_000);
            rs.prior_delivered = 0;
            rs.tx_in_flight = 103;
            rs.prior_in_flight = 103; // too much in flight to cruise at once
            rs.lost = lost;
            rs.losses = 1;
            ack(&mut b, &mut tp, rs);
            if too_high {
                assert_eq!(b.phase(), Phase::Down);
                assert_eq!(b.inflight_hi, 103, "max(tx_in_flight, 0.7·target)");
                assert!(b.prev_probe_too_high);
            } else {
                assert_eq!(b.phase(), Phase::Up);
                assert_eq!(b.inflight_hi, 103, "a safe higher inflight raises inflight_hi");
            }
        }
    }

    // skb_marked_lost while probing: the loss crossed 2 % inside this
    // flight; inflight_hi is set where it did. tx_in_flight 200, lost 6
    // (this one included): inflight_prev 199, lost_prev 5, budget
    // ceil(199·5/256) = 4 ≤ 5 → prefix 0 → inflight_hi = 199.
    #[test]
    fn lost_packet_sets_inflight_hi_at_crossing() {
        let (mut b, mut tp) = in_probe_bw(10.0, 40_000);
        b.cycle_idx = Phase::Up;
        b.bw_probe_samples = true;
        let rs = RateSample { tx_in_flight: 200, lost: 6, ..Default::default() };
        b.skb_marked_lost(&mut tp, &rs);
        assert_eq!(b.inflight_hi, 199);
        assert_eq!(b.phase(), Phase::Down, "DOWN restarts the loss signals");
        // Below the threshold (3 of 200): noted, no cut.
        let (mut b, mut tp) = in_probe_bw(10.0, 40_000);
        b.cycle_idx = Phase::Up;
        b.bw_probe_samples = true;
        let rs = RateSample { tx_in_flight: 200, lost: 3, ..Default::default() };
        b.skb_marked_lost(&mut tp, &rs);
        assert_eq!(b.inflight_hi, u32::MAX);
        assert_eq!(b.phase(), Phase::Up);
        assert!(b.loss_in_round && b.loss_in_cycle, "the loss is noted");
        // Crossing inside: 300 in flight, 2 lost before this one: budget
        // ceil(299·5/256) = 6, prefix (6 − 2)·256/251 = 4 → 303.
        assert_eq!(
            Bbr3::inflight_hi_from_lost_skb(&RateSample { tx_in_flight: 300, lost: 3, ..Default::default() }),
            303
        );
    }

    // inflight_hi rises in UP with a doubling slope: cwnd 64 at
    // inflight_hi, round 1: +1 per 64 ACKed, round 2: +1 per 32, …
    #[test]
    fn inflight_hi_slope_doubles_per_round() {
        let (mut b, mut tp) = in_probe_bw(10.0, 40_000);
        b.inflight_hi = 64;
        b.start_bw_probe_refill(&tp, 0);
        b.start_bw_probe_up(&tp, 0);
        assert_eq!(b.bw_probe_up_cnt, tp.snd_cwnd.max(1));
        tp.snd_cwnd = 64;
        b.bw_probe_up_cnt = 64;
        b.bw_probe_up_rounds = 1;
        tp.is_cwnd_limited = true;
        let rs = RateSample { acked_sacked: 64, ..Default::default() };
        b.round_start = false;
        b.probe_inflight_hi_upward(&tp, &rs);
        assert_eq!(b.inflight_hi, 65);
        b.round_start = true;
        let rs = RateSample { acked_sacked: 0, ..Default::default() };
        tp.snd_cwnd = 65;
        b.probe_inflight_hi_upward(&tp, &rs);
        assert_eq!(b.bw_probe_up_cnt, 65 / 2, "second round: 2 per round-trip");
        b.probe_inflight_hi_upward(&tp, &rs);
        assert_eq!(b.bw_probe_up_cnt, 65 / 4);
    }

    // Lower bounds (`bbr_adapt_lower_bounds`, worked by hand): a loss round in
    // CRUISE with inflight_latest 60 and inflight_lo 100 → 70; bw_latest 8
    // and bw_lo 10 Mbit/s → 8.
    #[test]
    fn loss_round_cuts_lower_bounds() {
        let (mut b, tp) = in_probe_bw(10.0, 40_000);
        b.cycle_idx = Phase::Cruise;
        b.inflight_lo = 100;
        b.bw_lo = bw_fixed(10.0);
        b.inflight_latest = 60;
        b.bw_latest = bw_fixed(8.0);
        b.loss_in_round = true;
        b.adapt_lower_bounds(&tp);
        assert_eq!(b.inflight_lo, 70);
        assert!((bw_mbps(b.bw_lo) - 8.0).abs() < 0.01);
        // 0.7·inflight_lo wins when the round delivered little.
        b.inflight_latest = 10;
        b.bw_latest = bw_fixed(1.0);
        b.loss_in_round = true;
        b.adapt_lower_bounds(&tp);
        assert_eq!(b.inflight_lo, 49);
        assert!((bw_mbps(b.bw_lo) - 5.625).abs() < 0.01, "8 × 180/256");
        // Not while probing.
        b.cycle_idx = Phase::Up;
        b.loss_in_round = true;
        b.adapt_lower_bounds(&tp);
        assert_eq!(b.inflight_lo, 49);
        // REFILL resets them.
        b.start_bw_probe_refill(&tp, 0);
        assert_eq!((b.inflight_lo, b.bw_lo), (u32::MAX, u64::MAX));
    }

    // ECN (`bbr_ecn_cut`, worked by hand): alpha 0.6, inflight_lo 100 →
    // 100·(1 − 0.6/3) = 80.
    #[test]
    fn ecn_round_cuts_inflight_lo() {
        let (mut b, tp) = in_probe_bw(10.0, 40_000);
        b.cycle_idx = Phase::Cruise;
        b.inflight_lo = 100;
        b.ecn_alpha = (0.6f64 * 256.0).round() as u32;
        b.ecn_in_round = true;
        b.adapt_lower_bounds(&tp);
        assert_eq!(b.inflight_lo, 80);
    }

    // The cwnd bounds by phase: inflight_hi in UP/DOWN/REFILL, inflight_hi
    // less 15 % (38/256 → 100 − 14 = 86) in CRUISE, inflight_lo always.
    #[test]
    fn cwnd_bounded_by_phase() {
        let (mut b, mut tp) = in_probe_bw(10.0, 40_000);
        b.inflight_hi = 100;
        for (phase, cap) in [(Phase::Up, 100), (Phase::Down, 100), (Phase::Refill, 100), (Phase::Cruise, 86)] {
            b.cycle_idx = phase;
            tp.snd_cwnd = 500;
            b.bound_cwnd_for_inflight_model(&mut tp);
            assert_eq!(tp.snd_cwnd, cap, "{phase:?}");
        }
        b.inflight_lo = 50;
        tp.snd_cwnd = 500;
        b.bound_cwnd_for_inflight_model(&mut tp);
        assert_eq!(tp.snd_cwnd, 50);
    }
}
