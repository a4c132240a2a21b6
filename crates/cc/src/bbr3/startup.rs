//! STARTUP (v3): pacing gain 4·ln 2 ≈ 2.77 and cwnd gain 2; leave on a bw
//! plateau (3 rounds < +25 %), on high loss (≥ 6 loss events in a recovery
//! round with > 2 % lost), or on 2 rounds with > 50 % CE marks (google/bbr v3
//! `tcp_bbr.c`).

use super::{Bbr3, ECN_THRESH};
use crate::bbr::{BBR_SCALE, BBR_UNIT};
use crate::{CaState, RateSample, Sock};

/// 4·ln 2 ≈ 2.77: doubles the rate per round with a smoother queue than
/// v1's 2.89 (google/bbr `BBR_UNIT * 277 / 100 + 1` = 710/256 = 2.7734).
pub(crate) const STARTUP_PACING_GAIN: u32 = BBR_UNIT * 277 / 100 + 1;
/// cwnd gain in Startup: 2.0.
pub(crate) const STARTUP_CWND_GAIN: u32 = BBR_UNIT * 2;
/// 25 % growth per round means the pipe is not full yet.
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// Rounds without that growth before the pipe counts as full.
const FULL_BW_CNT: u32 = 3;
/// Startup ends after this many loss events in one recovery round (with
/// the loss rate above the threshold).
pub(crate) const FULL_LOSS_CNT: u32 = 6;
/// Startup ends after this many rounds with CE ratio above ECN_THRESH.
const FULL_ECN_CNT: u32 = 2;

impl Bbr3 {
    /// Linux `bbr_reset_full_bw`.
    pub(super) fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    /// Linux v3 `bbr_check_full_bw_reached`: any sample 25 % above full_bw
    /// restarts the count; each round start without one counts. Also used
    /// in PROBE_UP (full_bw_now ends the probe).
    pub(super) fn check_startup_done(&mut self, rs: &RateSample, sample_bw: u64) {
        if self.full_bw_now || rs.is_app_limited {
            return;
        }
        let bw_thresh = ((self.full_bw as u128 * FULL_BW_THRESH as u128) >> BBR_SCALE) as u64;
        if sample_bw >= bw_thresh {
            self.reset_full_bw();
            self.full_bw = sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= FULL_BW_CNT;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// Linux `bbr_handle_queue_too_high_in_startup`: leave Startup with
    /// inflight_hi at the larger of BDP and the data delivered last round.
    pub(super) fn handle_queue_too_high_in_startup(&mut self, tp: &Sock) {
        self.full_bw_reached = true;
        let bdp = self.inflight(tp, self.max_bw(), BBR_UNIT);
        self.inflight_hi = bdp.max(self.inflight_latest);
    }

    /// Linux `bbr_check_loss_too_high_in_startup`: checked at the end of
    /// each loss round while in Recovery.
    pub(super) fn check_loss_too_high_in_startup(&mut self, tp: &Sock, rs: &RateSample) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < 0xF {
            self.loss_events_in_round += 1;
        }
        if FULL_LOSS_CNT > 0
            && self.loss_round_start
            && tp.ca_state == CaState::Recovery
            && self.loss_events_in_round >= FULL_LOSS_CNT
            && self.is_inflight_too_high(rs)
        {
            self.handle_queue_too_high_in_startup(tp);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// Linux `bbr_check_ecn_too_high_in_startup`.
    pub(super) fn check_ecn_too_high_in_startup(&mut self, tp: &Sock, ce_ratio: u32) {
        if self.full_bw_reached || !self.ecn_eligible || FULL_ECN_CNT == 0 || ECN_THRESH == 0 {
            return;
        }
        if ce_ratio >= ECN_THRESH {
            self.startup_ecn_rounds += 1;
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= FULL_ECN_CNT {
            self.handle_queue_too_high_in_startup(tp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;
    use crate::bbr::Mode;

    #[test]
    fn v3_startup_gains() {
        assert_eq!(STARTUP_PACING_GAIN, 710);
        assert!((STARTUP_PACING_GAIN as f64 / 256.0 - 4.0 * 2f64.ln()).abs() < 0.002);
        let (b, _) = started();
        assert_eq!((b.pacing_gain, b.cwnd_gain), (710, 512));
    }

    // Plateau exit as in v1 (BV4 in bbr/startup.rs), using per-sample bw:
    // 10, 20, 40, 45, 46, 47 → full after the 6th round.
    #[test]
    fn plateau_exit() {
        let (mut b, mut tp) = started();
        tp.packets_out = 1000;
        for (i, mbps) in [10.0, 20.0, 40.0, 45.0, 46.0, 47.0].into_iter().enumerate() {
            round_ack(&mut b, &mut tp, mbps, 40_000);
            assert_eq!(b.full_bw_reached, i == 5, "round {}", i + 1);
        }
        assert_eq!(b.mode(), Mode::Drain);
        assert_eq!(b.inflight_hi, u32::MAX, "a plateau exit leaves inflight_hi unset");
    }

    // Loss exit: 6 ACKs with losses in one round of Recovery and a loss
    // rate above 2 % → full pipe, inflight_hi = max(BDP, inflight_latest).
    #[test]
    fn loss_exit_sets_inflight_hi() {
        let (mut b, mut tp) = started();
        tp.packets_out = 1000;
        for mbps in [10.0, 20.0, 40.0] {
            round_ack(&mut b, &mut tp, mbps, 40_000);
        }
        tp.ca_state = CaState::Recovery;
        for i in 0..6 {
            let mut rs = sample_for(&b, &tp, 40.0, 40_000);
            rs.prior_delivered = 0;
            rs.losses = 1;
            rs.lost = 3 + i;
            rs.tx_in_flight = 100;
            ack(&mut b, &mut tp, rs);
        }
        assert!(!b.full_bw_reached, "decided only at the end of the loss round");
        let mut rs = sample_for(&b, &tp, 40.0, 40_000);
        rs.prior_delivered = b.loss_round_delivered;
        rs.lost = 9;
        rs.tx_in_flight = 100;
        ack(&mut b, &mut tp, rs);
        assert!(b.full_bw_reached);
        assert_eq!(b.mode(), Mode::Drain);
        let bdp = b.inflight(&tp, b.max_bw(), BBR_UNIT);
        assert_eq!(b.inflight_hi, bdp.max(1000));
    }

    // Five loss events, or a loss rate below 2 %, keep Startup going.
    #[test]
    fn few_losses_do_not_end_startup() {
        for (events, lost) in [(5, 9), (8, 1)] {
            let (mut b, mut tp) = started();
            tp.packets_out = 1000;
            round_ack(&mut b, &mut tp, 10.0, 40_000);
            tp.ca_state = CaState::Recovery;
            for _ in 0..events {
                let mut rs = sample_for(&b, &tp, 20.0, 40_000);
                rs.prior_delivered = 0;
                rs.losses = 1;
                rs.lost = lost;
                rs.tx_in_flight = 100;
                ack(&mut b, &mut tp, rs);
            }
            let mut rs = sample_for(&b, &tp, 40.0, 40_000);
            rs.prior_delivered = b.loss_round_delivered;
            rs.lost = lost;
            rs.tx_in_flight = 100;
            ack(&mut b, &mut tp, rs);
            assert!(!b.full_bw_reached, "{events} events, {lost} lost of 100");
        }
    }
}
