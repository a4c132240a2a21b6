//! Scaffolding shared by the algorithms' unit tests: a connection in a
//! given state, an ACK with an RTT sample, and a fluid path that drives an
//! algorithm one round at a time.

use crate::{AckSample, CongestionControl, Sock};

/// Payload bytes of a full-size segment, as in the simulator's default.
pub const MSS: u32 = 1448;

/// A connection with `cwnd` and `ssthresh`, a full window out and limited
/// by it, at time `now_us`.
pub fn sock_at(cwnd: u32, ssthresh: u32, now_us: u64) -> Sock {
    let mut tp = Sock::new(MSS, cwnd);
    tp.snd_ssthresh = ssthresh;
    tp.max_packets_out = cwnd;
    tp.is_cwnd_limited = true;
    tp.now_us = now_us;
    tp
}

/// An ACK of one packet carrying an RTT sample of `rtt_us`.
pub fn rtt_ack(rtt_us: i64) -> AckSample {
    AckSample { acked: 1, rtt_us, ..Default::default() }
}

/// A fluid path for narrative tests: `bdp` packets fill the pipe, the rest
/// wait in a queue of at most `buffer` packets drained at `bdp` packets per
/// base RTT. One round is one window of ACKs spread over the round's RTT,
/// each with an RTT sample of that RTT plus `sample_bias_us`.
pub struct FluidPath {
    pub base_us: u64,
    pub bdp: u32,
    pub buffer: u32,
    pub sample_bias_us: i64,
}

impl FluidPath {
    /// Runs one round; returns the queue the round saw, or None when the
    /// window overflows the buffer (the caller applies the loss).
    pub fn round<C: CongestionControl>(&self, cc: &mut C, tp: &mut Sock) -> Option<u32> {
        let w = tp.snd_cwnd;
        let queue = w.saturating_sub(self.bdp);
        if queue > self.buffer {
            return None;
        }
        let rtt = self.base_us + self.base_us * queue as u64 / self.bdp as u64;
        tp.max_packets_out = w;
        for _ in 0..w {
            tp.now_us += rtt / w as u64;
            tp.snd_una += MSS as u64;
            tp.snd_nxt = tp.snd_una + tp.snd_cwnd as u64 * MSS as u64;
            cc.pkts_acked(tp, &rtt_ack(rtt as i64 + self.sample_bias_us));
            cc.cong_avoid(tp, 1);
        }
        Some(queue)
    }
}
