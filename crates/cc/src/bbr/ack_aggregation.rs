//! The ACK-aggregation estimator shared by BBR v1 and v3 (Linux
//! `bbr_update_ack_aggregation`): how many packets were (S)ACKed
//! beyond what the bandwidth estimate explains since the current epoch
//! began, kept as the largest excess in each of two windows of rounds.

use super::{ACK_EPOCH_ACKED_RESET_THRESH, BW_UNIT};
use crate::RateSample;

/// Linux caps `extra_acked_win_rtts` at 5 bits.
const WIN_RTTS_MAX: u32 = 0x1F;
/// Linux caps `ack_epoch_acked` at 20 bits.
const EPOCH_ACKED_MAX: u64 = 0xFFFFF;

#[derive(Clone, Debug, Default)]
pub(crate) struct AckAggregation {
    /// Start of the current epoch, µs (the delivery time it began at).
    pub(crate) epoch_mstamp_us: u64,
    /// Packets (S)ACKed in the current epoch.
    pub(crate) epoch_acked: u64,
    /// Max excess packets ACKed in each of two windows of rounds.
    pub(crate) extra_acked: [u32; 2],
    win_rtts: u32,
    win_idx: usize,
}

impl AckAggregation {
    /// Linux `bbr_extra_acked`: the larger of the two windows' excess.
    #[inline]
    pub(crate) fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// Starts a new epoch at `now_us` (start-up, restart from idle).
    pub(crate) fn restart_epoch(&mut self, now_us: u64) {
        self.epoch_mstamp_us = now_us;
        self.epoch_acked = 0;
    }

    /// Linux `bbr_update_ack_aggregation` for one ACK: `bw` is the bandwidth
    /// estimate (BW_UNIT-scaled packets per µs), `delivered_mstamp_us` the
    /// delivery time of this ACK, `window_rounds` the rounds per window (v1:
    /// 5; v3: 1 in Startup, else 5), and the excess is capped at `cwnd`.
    pub(crate) fn update(
        &mut self,
        rs: &RateSample,
        round_start: bool,
        window_rounds: u32,
        bw: u64,
        delivered_mstamp_us: u64,
        cwnd: u32,
    ) {
        if rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if round_start {
            self.win_rtts = (self.win_rtts + 1).min(WIN_RTTS_MAX);
            if self.win_rtts >= window_rounds {
                self.win_rtts = 0;
                self.win_idx ^= 1;
                self.extra_acked[self.win_idx] = 0;
            }
        }
        let epoch_us = delivered_mstamp_us.saturating_sub(self.epoch_mstamp_us);
        let mut expected_acked = (bw as u128 * epoch_us as u128 / BW_UNIT as u128) as u64;
        // ACKs slower than expected (or a very old epoch): start over.
        if self.epoch_acked <= expected_acked
            || self.epoch_acked + rs.acked_sacked as u64 >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.epoch_acked = 0;
            self.epoch_mstamp_us = delivered_mstamp_us;
            expected_acked = 0;
        }
        self.epoch_acked = (self.epoch_acked + rs.acked_sacked as u64).min(EPOCH_ACKED_MAX);
        let extra = (self.epoch_acked - expected_acked).min(cwnd as u64) as u32;
        let slot = &mut self.extra_acked[self.win_idx];
        if extra > *slot {
            *slot = extra;
        }
    }
}
