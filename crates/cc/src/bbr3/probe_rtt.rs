//! The min_rtt filter and PROBE_RTT (v3): ProbeRTT comes when no lower RTT
//! was seen for 5 s and holds cwnd at 0.5·BDP (≥ 4) for max(200 ms, one
//! round); min_rtt itself is a 10 s windowed min (google/bbr v3 `tcp_bbr.c`).

use super::Bbr3;
use crate::bbr::{Mode, BBR_UNIT, CWND_MIN_TARGET, USEC_PER_MSEC, USEC_PER_SEC};
use crate::{RateSample, Sock};

/// min_rtt filter window, 10 s.
const MIN_RTT_WIN_US: u64 = 10 * USEC_PER_SEC;
/// ProbeRTT interval: the window of probe_rtt_min_us, 5 s.
pub(crate) const PROBE_RTT_WIN_US: u64 = 5_000 * USEC_PER_MSEC;
/// Time at the reduced cwnd in ProbeRTT, 200 ms.
const PROBE_RTT_MODE_US: u64 = 200 * USEC_PER_MSEC;
/// ProbeRTT cwnd = 0.5 × BDP.
const PROBE_RTT_CWND_GAIN: u32 = BBR_UNIT / 2;

impl Bbr3 {
    /// Linux `bbr_probe_rtt_cwnd`: max(4, 0.5·BDP).
    pub(super) fn probe_rtt_cwnd(&self) -> u32 {
        CWND_MIN_TARGET.max(self.bdp(self.bw(), PROBE_RTT_CWND_GAIN))
    }

    /// Linux v3 `bbr_update_min_rtt`.
    pub(super) fn update_min_rtt(&mut self, tp: &mut Sock, rs: &RateSample) {
        let now = tp.now_us;
        let probe_rtt_expired = now > self.probe_rtt_min_stamp_us + PROBE_RTT_WIN_US;
        if rs.rtt_us >= 0 && ((rs.rtt_us as u64) < self.probe_rtt_min_us || (probe_rtt_expired && !rs.is_ack_delayed)) {
            self.probe_rtt_min_us = rs.rtt_us as u64;
            self.probe_rtt_min_stamp_us = now;
        }
        let min_rtt_expired = now > self.min_rtt_stamp_us + MIN_RTT_WIN_US;
        if self.probe_rtt_min_us <= self.min_rtt_us || min_rtt_expired {
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp_us = self.probe_rtt_min_stamp_us;
        }

        if probe_rtt_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.transition_to(Mode::ProbeRtt);
            self.save_cwnd(tp);
            self.probe_rtt_done_stamp_us = None;
            self.ack_phase = super::AckPhase::ProbeStopping;
            self.next_rtt_delivered = tp.delivered;
        }

        if self.mode == Mode::ProbeRtt {
            // Samples at the reduced cwnd say nothing about the bottleneck.
            tp.app_limited = (tp.delivered + tp.packets_in_flight() as u64).max(1);
            if self.probe_rtt_done_stamp_us.is_none() && tp.packets_in_flight() <= self.probe_rtt_cwnd() {
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
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// Linux v3 `bbr_check_probe_rtt_done`.
    pub(super) fn check_probe_rtt_done(&mut self, tp: &mut Sock) {
        match self.probe_rtt_done_stamp_us {
            Some(done) if tp.now_us > done => {}
            _ => return,
        }
        self.probe_rtt_min_stamp_us = tp.now_us;
        tp.snd_cwnd = tp.snd_cwnd.max(self.prior_cwnd);
        self.exit_probe_rtt(tp);
    }

    /// Linux `bbr_exit_probe_rtt`: back to ProbeBW (DOWN, then at once
    /// CRUISE: inflight is already below BDP) or Startup.
    fn exit_probe_rtt(&mut self, tp: &Sock) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.transition_to(Mode::ProbeBw);
            self.start_bw_probe_down(tp);
            self.start_bw_probe_cruise();
        } else {
            self.transition_to(Mode::Startup);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;
    use crate::bbr3::Phase;

    // ProbeRTT every 5 s at cwnd 0.5·BDP (BDP 34 at 10 Mbit/s, 40 ms → 17),
    // for 200 ms and a round; then CRUISE.
    #[test]
    fn probe_rtt_every_five_seconds_at_half_bdp() {
        let (mut b, mut tp) = in_probe_bw(10.0, 40_000);
        let t0 = b.probe_rtt_min_stamp_us;
        tp.packets_out = 60;
        while tp.now_us <= t0 + PROBE_RTT_WIN_US - 1_000 {
            let mut rs = sample_for(&b, &tp, 10.0, 45_000);
            rs.prior_delivered = 0;
            ack(&mut b, &mut tp, rs);
            assert_ne!(b.mode(), Mode::ProbeRtt);
        }
        tp.now_us = t0 + PROBE_RTT_WIN_US + 1;
        let mut rs = sample_for(&b, &tp, 10.0, 45_000);
        rs.is_ack_delayed = true;
        ack_at(&mut b, &mut tp, rs);
        assert_eq!(b.mode(), Mode::ProbeRtt);
        assert_eq!(b.probe_rtt_cwnd(), 17);
        assert_eq!(tp.snd_cwnd, 17);
        assert_eq!(b.min_rtt_us, 40_000, "min_rtt has a 10 s window");
        tp.packets_out = 17;
        let enter = tp.now_us;
        while b.mode() == Mode::ProbeRtt {
            let rs = sample_for(&b, &tp, 10.0, 40_000);
            ack(&mut b, &mut tp, rs);
            assert!(tp.now_us < enter + 400_000);
        }
        assert!(tp.now_us - enter > 200_000);
        assert_eq!(b.mode(), Mode::ProbeBw);
        assert_eq!(b.phase(), Phase::Cruise);
    }
}
