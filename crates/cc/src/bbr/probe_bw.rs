//! PROBE_BW: cycle the pacing gain through eight phases of about one
//! min_rtt each — probe at 1.25, drain at 0.75, cruise at 1.0 for six —
//! so the average rate equals the estimated bw (Linux
//! `bbr_update_cycle_phase`).

use super::{Bbr, Mode, BBR_UNIT};
use crate::{RateSample, Sock};

/// Number of phases in the gain cycle (Linux `CYCLE_LEN`).
pub(crate) const CYCLE_LEN: usize = 8;
/// Pacing gains of the cycle: probe for more bw, drain the probe's queue,
/// then cruise at the estimated bw.
pub(crate) const PACING_GAIN: [u32; CYCLE_LEN] =
    [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
/// The start phase is random over this many phases (never the 0.75 one).
pub(crate) const CYCLE_RAND: u32 = 7;
/// The bw max filter spans a full cycle plus two rounds (Linux `bbr_bw_rtts`).
pub(crate) const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;

impl Bbr {
    /// Linux `bbr_reset_probe_bw_mode`: enter ProbeBW at a random phase
    /// among {0, 2, 3, …, 7}: index 7 − rand{0..6}, then one advance.
    pub(super) fn enter_probe_bw(&mut self, _tp: &Sock) {
        self.transition_to(Mode::ProbeBw);
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.below(CYCLE_RAND) as usize;
        self.advance_cycle_phase();
    }

    /// Linux `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_mstamp_us = self.delivered_mstamp_us;
    }

    /// Linux `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, tp: &Sock, rs: &RateSample) -> bool {
        let is_full_length = self.delivered_mstamp_us.saturating_sub(self.cycle_mstamp_us) > self.min_rtt_us;
        // Gain 1.0: cruise for one min_rtt.
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            // Probe until inflight reaches gain·BDP, but not past a loss:
            // a shallow buffer may not hold that much.
            return is_full_length && (rs.losses > 0 || inflight >= self.inflight(tp, bw, self.pacing_gain));
        }
        // Drain until the queue is gone, at most one min_rtt.
        is_full_length || inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    /// Linux `bbr_update_cycle_phase`.
    pub(super) fn update_probe_bw_cycle_phase(&mut self, tp: &Sock, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(tp, rs) {
            self.advance_cycle_phase();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;
    use crate::bbr::{Bbr, BbrConfig};
    use crate::CongestionControl;

    // The entry phase is uniform over {0, 2..7} and never 1 (the 0.75
    // phase would drain a queue that does not exist yet).
    #[test]
    fn random_start_phase_never_the_drain_phase() {
        let mut counts = [0u32; CYCLE_LEN];
        for seed in 0..7000u64 {
            let mut b = Bbr::new(BbrConfig { seed });
            let mut tp = sock();
            tp.rng_seed = seed.wrapping_mul(31);
            b.init(&mut tp);
            b.mode = Mode::Drain;
            b.enter_probe_bw(&tp);
            counts[b.cycle_idx] += 1;
        }
        assert_eq!(counts[1], 0);
        for (i, &c) in counts.iter().enumerate() {
            if i != 1 {
                assert!((850..1150).contains(&c), "phase {i}: {c} of 7000");
            }
        }
    }

    // The seed decides the phase: same seeds, same phase; the per-flow
    // seed from the simulator changes it.
    #[test]
    fn start_phase_is_deterministic_per_seed() {
        let phase = |param: u64, flow: u64| {
            let mut b = Bbr::new(BbrConfig { seed: param });
            let mut tp = sock();
            tp.rng_seed = flow;
            b.init(&mut tp);
            b.mode = Mode::Drain;
            (0..8)
                .map(|_| {
                    b.mode = Mode::Drain;
                    b.enter_probe_bw(&tp);
                    b.cycle_idx
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(phase(0, 5), phase(0, 5));
        assert_ne!(phase(0, 5), phase(0, 6));
        assert_ne!(phase(1, 5), phase(0, 5));
    }

    // A whole cycle at 10 Mbit/s, min_rtt 40 ms, ACKs every 1 ms with
    // inflight held at 1 BDP (34): the cruise phases last just over one
    // min_rtt each; the 1.25 phase does not end until inflight reaches
    // inflight(bw, 1.25) = ceil(41.67) + 6 → 48 + 2 = 50; the 0.75 phase
    // ends at once when inflight ≤ inflight(bw, 1.0) = 40.
    #[test]
    fn pacing_gain_cycles_through_eight_phases() {
        let (mut b, mut tp) = in_probe_bw(10.0, 40_000);
        // Start the walk at phase 2 (first cruise phase).
        b.cycle_idx = 2;
        b.cycle_mstamp_us = b.delivered_mstamp_us;
        b.update_gains();
        let mut seen = vec![(b.cycle_idx, tp.now_us)];
        let mut inflight = 34;
        for _ in 0..2_000 {
            let mut rs = sample_for(&b, &tp, 10.0, 40_000);
            rs.prior_delivered = 0; // mid-round ACKs
            rs.prior_in_flight = inflight;
            ack(&mut b, &mut tp, rs);
            if b.cycle_idx != seen.last().unwrap().0 {
                seen.push((b.cycle_idx, tp.now_us));
            }
            // Phase 0 (1.25) raises inflight by one packet per ACK.
            inflight = if b.cycle_idx == 0 { inflight + 1 } else { 34 };
            if seen.len() == 10 {
                break;
            }
        }
        let order: Vec<usize> = seen.iter().map(|s| s.0).collect();
        assert_eq!(order, [2, 3, 4, 5, 6, 7, 0, 1, 2, 3]);
        let dur = |i: usize| seen[i + 1].1 - seen[i].1;
        for (i, phase) in order.iter().enumerate().take(6) {
            // Full length: strictly more than min_rtt (ACKs 1 ms apart).
            assert_eq!(dur(i), 41_000, "cruise phase {phase}");
        }
        // 1.25 phase: 41 ms, by which time inflight (34 + 41 = 75) ≥ 50.
        assert_eq!(dur(6), 41_000);
        // 0.75 phase: ends on the first ACK, inflight 34 ≤ 40.
        assert_eq!(dur(7), 1_000);
        assert_eq!(b.pacing_gain, BBR_UNIT);
    }

    // The 1.25 phase persists past one min_rtt while inflight is short of
    // 1.25·BDP, and ends at once on a loss.
    #[test]
    fn probe_phase_waits_for_inflight_or_loss() {
        let (mut b, mut tp) = in_probe_bw(10.0, 40_000);
        b.cycle_idx = 0;
        b.cycle_mstamp_us = b.delivered_mstamp_us;
        b.update_gains();
        assert_eq!(b.pacing_gain, 320);
        for _ in 0..100 {
            let mut rs = sample_for(&b, &tp, 10.0, 40_000);
            rs.prior_in_flight = 34;
            ack(&mut b, &mut tp, rs);
        }
        assert_eq!(b.cycle_idx, 0, "inflight 34 < 50: keep probing");
        let mut rs = sample_for(&b, &tp, 10.0, 40_000);
        rs.prior_in_flight = 34;
        rs.losses = 1;
        ack(&mut b, &mut tp, rs);
        assert_eq!(b.cycle_idx, 1, "a loss ends the probe");
        assert_eq!(b.pacing_gain, 192);
    }

    // The 0.75 phase lasts a full min_rtt when inflight stays high.
    #[test]
    fn drain_phase_lasts_at_most_one_min_rtt() {
        let (mut b, mut tp) = in_probe_bw(10.0, 40_000);
        b.cycle_idx = 1;
        b.cycle_mstamp_us = b.delivered_mstamp_us;
        b.update_gains();
        let t0 = tp.now_us;
        while b.cycle_idx == 1 {
            let mut rs = sample_for(&b, &tp, 10.0, 40_000);
            rs.prior_in_flight = 60;
            ack(&mut b, &mut tp, rs);
        }
        assert_eq!(tp.now_us - t0, 41_000);
    }

    // BV3: ProbeBW pacing at 10 Mbit/s: 1.25 / 0.75 / 1.0 → 12.375 /
    // 7.425 / 9.9 Mbit/s with the 1 % margin.
    #[test]
    fn bv3_probe_bw_pacing_rates() {
        let (mut b, mut tp) = in_probe_bw(10.0, 40_000);
        for (idx, want) in [(0, 12.375), (1, 7.425), (2, 9.9)] {
            b.cycle_idx = idx;
            b.update_gains();
            b.set_pacing_rate(&mut tp, b.bw(), b.pacing_gain);
            let mbps = tp.pacing_rate as f64 * 8.0 / 1e6;
            assert!((mbps - want).abs() < 0.005, "phase {idx}: {mbps} vs {want}");
        }
    }
}
