//! DRAIN (v3): pace at 1/2.885 until the packets in the network fit one
//! BDP (+ budget), then start ProbeBW in DOWN (google/bbr v3 `tcp_bbr.c`).

use super::Bbr3;
use crate::bbr::{Mode, BBR_UNIT};
use crate::Sock;

/// Same drain gain as v1: 88/256 = 0.34375.
pub(crate) const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;

impl Bbr3 {
    /// Linux v3 `bbr_check_drain`.
    pub(super) fn check_drain(&mut self, tp: &mut Sock) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.transition_to(Mode::Drain);
            // Only a marker that Startup ended; BBR does not use ssthresh.
            tp.snd_ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.packets_in_flight()) <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.transition_to(Mode::ProbeBw);
            self.start_bw_probe_down(tp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;
    use crate::bbr3::Phase;

    // Drain → ProbeBW enters DOWN with a 2–3 s probe wait drawn; with
    // inflight already at BDP, DOWN gives way to CRUISE on the same ACK.
    #[test]
    fn drain_enters_probe_bw_down() {
        let (mut b, mut tp) = in_drain(10.0, 40_000);
        assert_eq!((b.pacing_gain, b.cwnd_gain), (DRAIN_GAIN, 512));
        let limit = b.inflight(&tp, b.max_bw(), BBR_UNIT);
        tp.packets_out = limit + 1;
        round_ack(&mut b, &mut tp, 10.0, 40_000);
        assert_eq!(b.mode(), Mode::Drain);
        tp.packets_out = limit;
        round_ack(&mut b, &mut tp, 10.0, 40_000);
        assert_eq!(b.mode(), Mode::ProbeBw);
        assert_eq!(b.phase(), Phase::Cruise);
        assert!((2_000_000..3_000_000).contains(&b.probe_wait_us), "{}", b.probe_wait_us);
    }
}
