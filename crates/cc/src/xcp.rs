//! The XCP sender (Katabi, Handley, Rohrs, SIGCOMM 2002, §3.2-3.3).
//!
//! The window is set by routers, not probed for. Each data packet carries a
//! congestion header with the sender's cwnd (H_cwnd, bytes) and RTT estimate
//! (H_rtt; 0 before the first sample) and a requested window change
//! (H_feedback) that every XCP router on the path may only reduce. The
//! receiver echoes the header; on each ACK
//!
//! ```text
//!     cwnd = max(cwnd + H_feedback, s)        s = one packet
//! ```
//!
//! Losses are rare under XCP; the paper handles them "in a similar manner to
//! TCP", so here the sender's ordinary loss recovery runs with Reno's
//! halving, and the byte window restarts from the window recovery leaves.
//! An ACK without router feedback (no XCP router on the path) leaves the
//! window to Reno's rules, so a path without XCP routers runs Reno.
//!
//! The window is kept in bytes (feedback arrives in bytes, often a few
//! bytes per packet) and rounded to the sender's packet window.

use crate::{common, AckSample, CaState, CcHeader, CongestionControl, RateSample, Sock, MAX_METRICS};

/// H_feedback a greedy sender requests, bytes: larger than any router's
/// allocation, so the most congested router on the path decides (paper
/// §3.2: a greedy sender may ask for a large value).
pub const GREEDY_REQUEST: i64 = 1 << 40;

#[derive(Clone, Debug, Default)]
pub struct Xcp {
    /// Congestion window, payload bytes.
    cwnd_bytes: f64,
    /// Some ACK carried router feedback: the window is XCP's.
    routed: bool,
    /// Feedback of the last ACK, bytes (for traces).
    last_feedback: i64,
}

impl Xcp {
    pub fn new() -> Xcp {
        Xcp::default()
    }

    fn in_control(tp: &Sock) -> bool {
        matches!(tp.ca_state, CaState::Open | CaState::Disorder)
    }
}

impl CongestionControl for Xcp {
    fn init(&mut self, tp: &mut Sock) {
        self.cwnd_bytes = tp.snd_cwnd as f64 * tp.mss as f64;
    }

    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        common::reno_ssthresh(tp)
    }

    fn pkts_acked(&mut self, tp: &mut Sock, s: &AckSample) {
        let Some(fb) = s.feedback else { return };
        self.routed = true;
        self.last_feedback = fb;
        if Self::in_control(tp) {
            // §3.2: cwnd = max(cwnd + H_feedback, s).
            self.cwnd_bytes = (self.cwnd_bytes + fb as f64).max(tp.mss as f64);
        }
    }

    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        // Leaving Recovery or Loss: continue from the window recovery left.
        if new_state == CaState::Open && matches!(tp.ca_state, CaState::Recovery | CaState::Loss) {
            self.cwnd_bytes = tp.snd_cwnd as f64 * tp.mss as f64;
        }
    }

    fn cong_control(&mut self, tp: &mut Sock, _rs: &RateSample) -> bool {
        if !self.routed || !Self::in_control(tp) {
            return false;
        }
        let pkts = (self.cwnd_bytes / tp.mss as f64).round().max(1.0);
        tp.snd_cwnd = (pkts as u32).min(tp.snd_cwnd_clamp);
        true
    }

    fn on_send(&mut self, tp: &Sock, hdr: &mut CcHeader) {
        hdr.cwnd_bytes = tp.snd_cwnd as u64 * tp.mss as u64;
        hdr.rtt_us = tp.srtt_us;
        hdr.feedback = GREEDY_REQUEST;
        hdr.has_feedback = false;
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &["cwnd_bytes", "feedback_bytes"]
    }

    fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
        out[0] = self.cwnd_bytes;
        out[1] = self.last_feedback as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{sock_at, MSS};

    fn fb_ack(fb: i64) -> AckSample {
        AckSample { acked: 1, rtt_us: 100_000, feedback: Some(fb), ..Default::default() }
    }

    /// XV4 (the paper's §3.2 sender rule, worked by hand): cwnd 50 000 B,
    /// H_feedback = −60 000 → max(50 000 − 60 000, s) = one packet.
    #[test]
    fn xv4_window_floor_is_one_packet() {
        let mut tp = sock_at(1, u32::MAX / 2, 0);
        let mut x = Xcp::new();
        x.init(&mut tp);
        x.cwnd_bytes = 50_000.0;
        x.pkts_acked(&mut tp, &fb_ack(-60_000));
        assert_eq!(x.cwnd_bytes, MSS as f64);
        assert!(x.cong_control(&mut tp, &RateSample::default()));
        assert_eq!(tp.snd_cwnd, 1);
    }

    /// Per-ACK feedback adds bytes: 100 ACKs of +144.8 B = +10 packets of 1448 B.
    #[test]
    fn feedback_accumulates_in_bytes() {
        let mut tp = sock_at(10, u32::MAX / 2, 0);
        let mut x = Xcp::new();
        x.init(&mut tp);
        for k in 0..100 {
            // 80 ACKs of 144 B and 20 of 148 B: 14 480 B in all.
            x.pkts_acked(&mut tp, &fb_ack(144 + (k % 5 == 0) as i64 * 4));
            x.cong_control(&mut tp, &RateSample::default());
        }
        assert_eq!(x.cwnd_bytes, 14_480.0 + 14_480.0);
        assert_eq!(tp.snd_cwnd, 20);
    }

    /// Without router feedback the window is Reno's (cong_control declines).
    #[test]
    fn no_router_means_reno() {
        let mut tp = sock_at(10, u32::MAX / 2, 0);
        let mut x = Xcp::new();
        x.init(&mut tp);
        x.pkts_acked(&mut tp, &AckSample { acked: 1, rtt_us: 100_000, ..Default::default() });
        assert!(!x.cong_control(&mut tp, &RateSample::default()));
    }

    /// The header carries cwnd in bytes, the RTT (0 before a sample) and a
    /// greedy request.
    #[test]
    fn header_written_on_send() {
        let mut tp = sock_at(10, u32::MAX / 2, 0);
        let mut x = Xcp::new();
        let mut h = CcHeader::default();
        x.on_send(&tp, &mut h);
        assert_eq!((h.cwnd_bytes, h.rtt_us, h.feedback), (14_480, 0, GREEDY_REQUEST));
        tp.srtt_us = 100_000;
        x.on_send(&tp, &mut h);
        assert_eq!(h.rtt_us, 100_000);
    }

    /// Loss: Reno halving, then the byte window restarts from recovery's
    /// result; feedback during recovery is not applied.
    #[test]
    fn loss_then_resume_from_recovered_window() {
        let mut tp = sock_at(100, u32::MAX / 2, 0);
        let mut x = Xcp::new();
        x.init(&mut tp);
        x.pkts_acked(&mut tp, &fb_ack(0));
        assert_eq!(x.ssthresh(&tp), 50);
        tp.ca_state = CaState::Recovery;
        x.pkts_acked(&mut tp, &fb_ack(10_000));
        assert!(!x.cong_control(&mut tp, &RateSample::default()));
        tp.snd_cwnd = 50;
        x.set_state(&mut tp, CaState::Open);
        assert_eq!(x.cwnd_bytes, 50.0 * MSS as f64);
    }
}
