//! DRAIN: pace at the inverse of the Startup gain until the queue Startup
//! built is gone, i.e. inflight ≤ BDP (+ budget) (Linux `bbr_check_drain`).

use super::{Bbr, Mode, BBR_UNIT};
use crate::Sock;

/// ln 2/2 ≈ 0.347, the inverse of the Startup gain, drains Startup's queue
/// in about one round (Linux `BBR_UNIT * 1000 / 2885` = 88/256 = 0.34375).
pub(crate) const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;

impl Bbr {
    /// Linux `bbr_check_drain`: Startup → Drain once the pipe is full
    /// (ssthresh is set for monitoring), then Drain → ProbeBW when the
    /// packets in the network at the next departure fit one BDP.
    pub(super) fn check_drain(&mut self, tp: &mut Sock) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.transition_to(Mode::Drain);
            tp.snd_ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.packets_in_flight()) <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.enter_probe_bw(tp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;

    // BV1: drain gain 88/256 = 0.34375.
    #[test]
    fn bv1_drain_gain() {
        assert_eq!(DRAIN_GAIN, 88);
    }

    // BV2: 10 Mbit/s of 1500-byte packets (833.33 pkt/s), min_rtt 40 ms:
    // BDP 33.33 → Drain ends once inflight ≤ ceil(33.33) = 34 plus the
    // quantisation budget (3 × 2 TSO segments at this rate, rounded to
    // even: 34 + 6 = 40, Linux's `bbr_quantization_budget` worked by hand).
    #[test]
    fn bv2_drain_exits_at_bdp_plus_budget() {
        let (mut b, mut tp) = in_drain(10.0, 40_000);
        assert_eq!(b.inflight(&tp, b.max_bw(), BBR_UNIT), 40);
        tp.packets_out = 41;
        b.check_drain(&mut tp);
        assert_eq!(b.mode(), Mode::Drain);
        tp.packets_out = 40;
        b.check_drain(&mut tp);
        assert_eq!(b.mode(), Mode::ProbeBw);
    }

    // Startup → Drain sets ssthresh to the 1.0 inflight and the Drain gains.
    #[test]
    fn startup_to_drain_sets_ssthresh_and_gains() {
        let (b, tp) = in_drain(10.0, 40_000);
        assert_eq!(b.mode(), Mode::Drain);
        assert_eq!(tp.snd_ssthresh, 40);
        assert_eq!((b.pacing_gain, b.cwnd_gain), (DRAIN_GAIN, super::super::startup::HIGH_GAIN));
        // BV3: Drain pacing 10 Mbit/s × 0.34375 × 0.99 = 3.40 Mbit/s.
        let mbps = tp.pacing_rate as f64 * 8.0 / 1e6;
        assert!((mbps - 3.40).abs() < 0.01, "{mbps}");
    }
}
