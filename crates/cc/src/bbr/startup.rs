//! STARTUP: grow the sending rate by 2/ln 2 per round until the delivery
//! rate stops growing (Linux `bbr_check_full_bw_reached`).

use super::{Bbr, BBR_SCALE, BBR_UNIT};
use crate::RateSample;

/// 2/ln 2 ≈ 2.885: the smallest gain that doubles the delivery rate every
/// round, sending as much per round as slow-starting Reno (Linux
/// `bbr_high_gain = BBR_UNIT * 2885 / 1000 + 1` = 739/256 = 2.8867).
pub(crate) const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// bw must grow by 25 % per round for the pipe to count as not yet full.
pub(crate) const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// Rounds without 25 % growth before the pipe counts as full: one for
/// receive-window autotuning, one to fill it, one to see the higher rate.
pub(crate) const FULL_BW_CNT: u32 = 3;

impl Bbr {
    /// Linux `bbr_check_full_bw_reached`: on each round start
    /// with a non-app-limited sample, count rounds in which max_bw grew by
    /// less than 25 %.
    pub(super) fn check_startup_done(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let bw_thresh = ((self.full_bw as u128 * FULL_BW_THRESH as u128) >> BBR_SCALE) as u64;
        if self.max_bw() >= bw_thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;
    use crate::bbr::Mode;

    // BV1: high_gain = 739/256 = 2.88672 (2/ln 2 = 2.88539).
    #[test]
    fn bv1_high_gain() {
        assert_eq!(HIGH_GAIN, 739);
        assert!((HIGH_GAIN as f64 / 256.0 - 2.88672).abs() < 1e-5);
        assert!((HIGH_GAIN as f64 / 256.0 - 2.0 / 2f64.ln()).abs() < 0.002);
    }

    // BV4: round-start max_bw samples 10, 20, 40, 45, 46, 47 Mbit/s:
    // full_bw becomes 10, 20, 40; 45, 46, 47 are all below 50 → count
    // 1, 2, 3 → full_bw_reached on the 6th round, and the same ACK moves
    // the flow to DRAIN.
    #[test]
    fn bv4_full_pipe_after_three_flat_rounds() {
        let (mut b, mut tp) = started();
        let samples = [10.0, 20.0, 40.0, 45.0, 46.0, 47.0];
        let mut full_bw_mbps = vec![];
        for (i, &mbps) in samples.iter().enumerate() {
            // Every sample opens a round and carries the given rate.
            round_ack(&mut b, &mut tp, mbps, 40_000);
            full_bw_mbps.push((bw_mbps(b.full_bw) * 10.0).round() / 10.0);
            assert_eq!(b.full_bw_reached, i == 5, "round {}", i + 1);
        }
        assert_eq!(full_bw_mbps, [10.0, 20.0, 40.0, 40.0, 40.0, 40.0]);
        assert_eq!(b.full_bw_cnt, 3);
        assert_ne!(b.mode(), Mode::Startup);
    }

    // App-limited samples and ACKs that do not start a round are ignored.
    #[test]
    fn full_pipe_ignores_app_limited_and_mid_round_samples() {
        let (mut b, mut tp) = started();
        round_ack(&mut b, &mut tp, 10.0, 40_000);
        for _ in 0..5 {
            let mut rs = sample_for(&b, &tp, 10.0, 40_000);
            rs.is_app_limited = true;
            ack(&mut b, &mut tp, rs);
        }
        assert_eq!(b.full_bw_cnt, 0, "app-limited rounds do not count");
        // Mid-round samples (prior_delivered below the round end) do not count.
        for _ in 0..5 {
            let mut rs = sample_for(&b, &tp, 10.0, 40_000);
            rs.prior_delivered = b.next_rtt_delivered.saturating_sub(1);
            ack(&mut b, &mut tp, rs);
        }
        assert_eq!(b.full_bw_cnt, 0);
        assert!(!b.full_bw_reached);
    }

    // Growth of 25 % exactly resets the count (>= threshold).
    #[test]
    fn exactly_25_percent_growth_keeps_startup() {
        let (mut b, mut tp) = started();
        let mut mbps = 8.0;
        for _ in 0..10 {
            round_ack(&mut b, &mut tp, mbps, 40_000);
            mbps *= 1.26;
        }
        assert!(!b.full_bw_reached);
        assert_eq!(b.mode(), Mode::Startup);
    }
}
