//! The min_rtt filter and PROBE_RTT: when min_rtt has not been lowered or
//! confirmed for 10 s, hold inflight at 4 packets for max(200 ms, one
//! round) to let the queue drain and re-measure it (Linux
//! `bbr_update_min_rtt`).

use super::{Bbr, Mode, CWND_MIN_TARGET, USEC_PER_MSEC, USEC_PER_SEC};
use crate::{RateSample, Sock};

/// min_rtt filter window: 10 s (Linux `bbr_min_rtt_win_sec`).
pub(crate) const MIN_RTT_WIN_US: u64 = 10 * USEC_PER_SEC;
/// Time at 4 packets in ProbeRTT: 200 ms, about 2 % of a 10 s window.
pub(crate) const PROBE_RTT_MODE_US: u64 = 200 * USEC_PER_MSEC;

impl Bbr {
    /// Linux `bbr_update_min_rtt`: the min_rtt filter, ProbeRTT entry, the
    /// 200 ms + one round dwell, and exit.
    pub(super) fn update_min_rtt(&mut self, tp: &mut Sock, rs: &RateSample) {
        let now = tp.now_us;
        let filter_expired = now > self.min_rtt_stamp_us.saturating_add(MIN_RTT_WIN_US);
        if rs.rtt_us >= 0 && ((rs.rtt_us as u64) < self.min_rtt_us || (filter_expired && !rs.is_ack_delayed)) {
            self.min_rtt_us = rs.rtt_us as u64;
            self.min_rtt_stamp_us = now;
        }

        if PROBE_RTT_MODE_US > 0 && filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.transition_to(Mode::ProbeRtt);
            self.save_cwnd(tp);
            self.probe_rtt_done_stamp_us = None;
        }

        if self.mode == Mode::ProbeRtt {
            // Samples taken at 4 packets say nothing about the bottleneck.
            tp.app_limited = (tp.delivered + tp.packets_in_flight() as u64).max(1);
            if self.probe_rtt_done_stamp_us.is_none() && tp.packets_in_flight() <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp_us = Some(now + PROBE_RTT_MODE_US);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = tp.delivered;
            } else if self.probe_rtt_done_stamp_us.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(tp);
                }
            }
        }
        // An idle restart ends once an ACK delivers new data.
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// Linux `bbr_check_probe_rtt_done`: after the dwell, restart the
    /// min_rtt clock, restore cwnd and go back to Startup or ProbeBW.
    pub(super) fn check_probe_rtt_done(&mut self, tp: &mut Sock) {
        match self.probe_rtt_done_stamp_us {
            Some(done) if tp.now_us > done => {}
            _ => return,
        }
        self.min_rtt_stamp_us = tp.now_us;
        tp.snd_cwnd = tp.snd_cwnd.max(self.prior_cwnd);
        // Linux bbr_reset_mode.
        if self.full_bw_reached {
            self.enter_probe_bw(tp);
        } else {
            self.transition_to(Mode::Startup);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;

    // BV6 timeline: min_rtt last lowered at t0; the first ACK more than
    // 10 s later enters ProbeRTT (cwnd ≤ 4); inflight reaches 4 at +50 ms
    // → done_stamp = +250 ms; a round ends at +90 ms; exit on the first ACK
    // after +250 ms, with min_rtt_stamp = that time, cwnd restored, ProbeBW.
    #[test]
    fn bv6_probe_rtt_timeline() {
        let (mut b, mut tp) = in_probe_bw(10.0, 40_000);
        let t0 = b.min_rtt_stamp_us;
        tp.snd_cwnd = 80;
        tp.packets_out = 80;
        // ACKs with a higher RTT (queue) do not refresh min_rtt.
        let rtt_hi = 50_000;
        while tp.now_us <= t0 + MIN_RTT_WIN_US - 1_000 {
            let rs = sample_for(&b, &tp, 10.0, rtt_hi);
            ack(&mut b, &mut tp, rs);
            assert_eq!(b.mode(), Mode::ProbeBw);
        }
        tp.now_us = t0 + MIN_RTT_WIN_US + 1;
        let before = tp.snd_cwnd;
        let rs = sample_for(&b, &tp, 10.0, rtt_hi);
        ack_at(&mut b, &mut tp, rs);
        assert_eq!(b.mode(), Mode::ProbeRtt);
        let enter = tp.now_us;
        assert_eq!(tp.snd_cwnd, 4, "cwnd capped at 4 in ProbeRTT");
        assert_eq!(b.prior_cwnd, before, "cwnd saved on entry");
        assert!(tp.app_limited != 0, "samples in ProbeRTT are app-limited");
        // Inflight still above 4 for 50 ms: no dwell yet.
        while tp.now_us < enter + 49_000 {
            let mut rs = sample_for(&b, &tp, 10.0, rtt_hi);
            rs.prior_delivered = 0; // no round starts here
            ack(&mut b, &mut tp, rs);
        }
        assert!(b.probe_rtt_done_stamp_us.is_none());
        tp.packets_out = 4;
        let rs = sample_for(&b, &tp, 10.0, 40_000);
        ack(&mut b, &mut tp, rs);
        let done = b.probe_rtt_done_stamp_us.expect("dwell started");
        assert_eq!(done, tp.now_us + PROBE_RTT_MODE_US);
        // A round ends (a packet sent after the dwell began is delivered).
        let mut rs = sample_for(&b, &tp, 10.0, 40_000);
        rs.prior_delivered = b.next_rtt_delivered;
        ack(&mut b, &mut tp, rs);
        assert!(b.probe_rtt_round_done);
        // No exit until strictly after done.
        while tp.now_us < done {
            let mut rs = sample_for(&b, &tp, 10.0, 40_000);
            rs.prior_delivered = 0;
            ack(&mut b, &mut tp, rs);
            assert_eq!(b.mode(), Mode::ProbeRtt, "t = {}", tp.now_us - enter);
            assert!(tp.snd_cwnd <= 4);
        }
        let rs = sample_for(&b, &tp, 10.0, 40_000);
        ack(&mut b, &mut tp, rs);
        assert_eq!(b.mode(), Mode::ProbeBw);
        assert_eq!(b.min_rtt_stamp_us, tp.now_us);
        assert!(tp.snd_cwnd > 4, "cwnd restored: {}", tp.snd_cwnd);
        assert_ne!(b.cycle_idx, 1);
    }

    // Without a full pipe, ProbeRTT returns to Startup.
    #[test]
    fn probe_rtt_from_startup_returns_to_startup() {
        let (mut b, mut tp) = started();
        tp.packets_out = 2;
        round_ack(&mut b, &mut tp, 1.0, 40_000);
        tp.now_us += MIN_RTT_WIN_US + 1;
        let mut rs = sample_for(&b, &tp, 1.0, 90_000);
        rs.is_ack_delayed = true;
        ack(&mut b, &mut tp, rs);
        assert_eq!(b.mode(), Mode::ProbeRtt);
        for _ in 0..300 {
            let mut rs = sample_for(&b, &tp, 1.0, 90_000);
            rs.is_app_limited = true;
            ack(&mut b, &mut tp, rs);
        }
        assert_eq!(b.mode(), Mode::Startup);
    }

    // The min_rtt filter: only a strictly lower sample renews it (Linux
    // since 4.x; with "lower or equal" a path with a constant RTT would
    // never enter ProbeRTT); a higher sample replaces it only once the
    // window expired and the ACK was not delayed.
    #[test]
    fn min_rtt_filter_window() {
        let (mut b, mut tp) = started();
        tp.packets_out = 3;
        round_ack(&mut b, &mut tp, 1.0, 40_000);
        assert_eq!(b.min_rtt_us, 40_000);
        round_ack(&mut b, &mut tp, 1.0, 45_000);
        assert_eq!(b.min_rtt_us, 40_000);
        let stamp = b.min_rtt_stamp_us;
        round_ack(&mut b, &mut tp, 1.0, 40_000);
        assert_eq!(b.min_rtt_stamp_us, stamp, "an equal sample leaves the stamp");
        round_ack(&mut b, &mut tp, 1.0, 39_000);
        assert_eq!((b.min_rtt_us, b.min_rtt_stamp_us), (39_000, tp.now_us), "a lower sample renews it");
        tp.now_us += MIN_RTT_WIN_US;
        let mut rs = sample_for(&b, &tp, 1.0, 60_000);
        rs.is_ack_delayed = true;
        ack(&mut b, &mut tp, rs);
        assert_eq!(b.min_rtt_us, 39_000, "delayed ACK does not replace an expired min");
        let rs = sample_for(&b, &tp, 1.0, 60_000);
        ack(&mut b, &mut tp, rs);
        assert_eq!(b.min_rtt_us, 60_000);
    }
}
