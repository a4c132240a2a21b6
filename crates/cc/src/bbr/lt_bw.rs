//! The long-term ("LT") bandwidth model: detect a token-bucket policer and
//! pace at its rate (Linux `bbr_lt_bw_sampling`).
//!
//! Sampling starts at the first loss. An interval lasts 4–16 rounds and
//! ends on a loss; if at least 50/256 (≈ 20 %) of the packets sent in it
//! were lost, its average delivery rate is a candidate. Two consecutive
//! candidates within 1/8 (or 4 kbit/s) of each other mean "policed": BBR
//! then uses their average as bw with pacing gain 1.0 for 48 rounds.

use super::{rate_bytes_per_sec, Bbr, Mode, BBR_SCALE, BBR_UNIT, BW_UNIT, PACING_MARGIN_PERCENT, USEC_PER_MSEC};
use crate::{RateSample, Sock};

/// Minimum rounds in a sampling interval.
pub(crate) const LT_INTVL_MIN_RTTS: u32 = 4;
/// Lossy interval: lost/delivered ≥ 50/256 ≈ 20 %.
pub(crate) const LT_LOSS_THRESH: u64 = 50;
/// Consistent candidates: |Δbw| ≤ bw/8 …
pub(crate) const LT_BW_RATIO: u64 = BBR_UNIT as u64 / 8;
/// … or |Δbw| ≤ 4 kbit/s (in bytes per second).
pub(crate) const LT_BW_DIFF: u64 = 4000 / 8;
/// Rounds to keep using lt_bw before re-probing.
pub(crate) const LT_BW_MAX_RTTS: u32 = 48;

impl Bbr {
    /// Linux `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self, tp: &Sock) {
        self.lt_last_stamp_ms = self.delivered_mstamp_us / USEC_PER_MSEC;
        self.lt_last_delivered = tp.delivered;
        self.lt_last_lost = tp.lost;
        self.lt_rtt_cnt = 0;
    }

    /// Linux `bbr_reset_lt_bw_sampling`.
    pub(super) fn reset_lt_bw_sampling(&mut self, tp: &Sock) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// Linux `bbr_lt_bw_interval_done`: compare with the previous candidate.
    fn lt_bw_interval_done(&mut self, tp: &Sock, bw: u64) {
        if self.lt_bw != 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * BBR_UNIT as u64 <= LT_BW_RATIO * self.lt_bw
                || rate_bytes_per_sec(diff, tp.mss, BBR_UNIT, PACING_MARGIN_PERCENT) <= LT_BW_DIFF
            {
                // Policed: use the average of the two intervals.
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// Linux `bbr_lt_bw_sampling`.
    pub(super) fn lt_bw_sampling(&mut self, tp: &Sock, rs: &RateSample) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(tp);
                    self.enter_probe_bw(tp);
                }
            }
            return;
        }
        // Wait for the first loss, so the policer's tokens are used up.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tp);
            self.lt_is_sampling = true;
        }
        // Running out of data would underestimate the rate.
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        // End the interval on a loss (tokens exhausted).
        if rs.losses == 0 {
            return;
        }
        let lost = tp.lost - self.lt_last_lost;
        let delivered = tp.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t_ms = (self.delivered_mstamp_us / USEC_PER_MSEC) as i64 - self.lt_last_stamp_ms as i64;
        if t_ms < 1 {
            return;
        }
        let bw = (delivered as u128 * BW_UNIT as u128 / (t_ms as u128 * USEC_PER_MSEC as u128)) as u64;
        self.lt_bw_interval_done(tp, bw);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;

    /// Runs one policed interval: `rounds` rounds of 100 packets delivered
    /// (one ACK per round, 40 ms apart) with `loss_pct` % lost, the last
    /// ACK carrying a loss.
    fn lossy_interval(b: &mut Bbr, tp: &mut Sock, rounds: u32, delivered_per_round: u64, lost_per_round: u64) {
        for r in 0..rounds {
            let mut rs = sample_for(b, tp, 10.0, 40_000);
            rs.acked_sacked = delivered_per_round as u32;
            tp.lost += lost_per_round;
            rs.losses = if r + 1 == rounds { 1 } else { 0 };
            tp.now_us += 39_000;
            ack(b, tp, rs);
        }
    }

    // Two consecutive 4-round intervals with 25 % loss (≥ 50/256) at the
    // same delivery rate (100 packets per 40 ms = 2500 pkt/s) → policed:
    // lt_bw = 2500 pkt/s, pacing gain 1.0; released after 48 rounds.
    #[test]
    fn policer_detected_after_two_consistent_lossy_intervals() {
        let (mut b, mut tp) = in_probe_bw(30.0, 40_000);
        let mut rs = sample_for(&b, &tp, 10.0, 40_000);
        rs.losses = 1; // first loss starts sampling
        ack(&mut b, &mut tp, rs);
        assert!(b.lt_is_sampling);
        lossy_interval(&mut b, &mut tp, 4, 100, 25);
        assert!(b.lt_bw > 0 && !b.lt_use_bw, "first candidate");
        lossy_interval(&mut b, &mut tp, 4, 100, 25);
        assert!(b.lt_use_bw, "second consistent candidate → policed");
        let pps = b.lt_bw as f64 * 1e6 / BW_UNIT as f64;
        assert!((pps - 2500.0).abs() < 30.0, "lt_bw {pps} pkt/s");
        assert_eq!(b.bw(), b.lt_bw);
        assert_eq!(b.pacing_gain, BBR_UNIT);
        for _ in 0..LT_BW_MAX_RTTS {
            round_ack(&mut b, &mut tp, 30.0, 40_000);
        }
        assert!(!b.lt_use_bw, "lt_bw used for 48 rounds only");
    }

    // A loss rate below 20 % never yields a candidate.
    #[test]
    fn low_loss_is_not_policing() {
        let (mut b, mut tp) = in_probe_bw(30.0, 40_000);
        let mut rs = sample_for(&b, &tp, 10.0, 40_000);
        rs.losses = 1;
        ack(&mut b, &mut tp, rs);
        for _ in 0..4 {
            lossy_interval(&mut b, &mut tp, 4, 100, 10);
        }
        assert_eq!(b.lt_bw, 0);
        assert!(!b.lt_use_bw);
    }

    // App-limited samples reset the sampling.
    #[test]
    fn app_limited_resets_sampling() {
        let (mut b, mut tp) = in_probe_bw(30.0, 40_000);
        let mut rs = sample_for(&b, &tp, 10.0, 40_000);
        rs.losses = 1;
        ack(&mut b, &mut tp, rs);
        let mut rs = sample_for(&b, &tp, 10.0, 40_000);
        rs.is_app_limited = true;
        ack(&mut b, &mut tp, rs);
        assert!(!b.lt_is_sampling);
    }
}
