//! Helpers shared by the algorithms, as Linux shares them in `net/ipv4/tcp_cong.c`.

use crate::Sock;

/// Linux `tcp_slow_start`: grow cwnd by one packet per packet acknowledged, up
/// to ssthresh. Returns the acknowledged packets left over once cwnd reaches
/// ssthresh, which the caller spends in congestion avoidance (a stretch ACK of
/// N packets counts as N ACKs; no RFC 3465 L = 2 cap, as in Linux).
#[inline]
pub fn slow_start(tp: &mut Sock, acked: u32) -> u32 {
    let cwnd = tp.snd_cwnd.saturating_add(acked).min(tp.snd_ssthresh);
    let spent = cwnd.saturating_sub(tp.snd_cwnd);
    tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
    acked - spent.min(acked)
}

/// Linux `tcp_cong_avoid_ai`: add one packet to cwnd per `w` packets acknowledged.
#[inline]
pub fn cong_avoid_ai(tp: &mut Sock, w: u32, acked: u32) {
    let w = w.max(1);
    // Credits earned at a larger window than the current `w` are spent first.
    if tp.snd_cwnd_cnt >= w {
        tp.snd_cwnd_cnt = 0;
        tp.snd_cwnd = tp.snd_cwnd.saturating_add(1);
    }
    tp.snd_cwnd_cnt = tp.snd_cwnd_cnt.saturating_add(acked);
    if tp.snd_cwnd_cnt >= w {
        let delta = tp.snd_cwnd_cnt / w;
        tp.snd_cwnd_cnt -= delta * w;
        tp.snd_cwnd = tp.snd_cwnd.saturating_add(delta);
    }
    tp.snd_cwnd = tp.snd_cwnd.min(tp.snd_cwnd_clamp);
}

/// Linux `tcp_reno_cong_avoid`: slow start below ssthresh, then +1 packet per RTT.
#[inline]
pub fn reno_cong_avoid(tp: &mut Sock, mut acked: u32) {
    if !tp.is_cwnd_limited() {
        return;
    }
    if tp.in_slow_start() {
        acked = slow_start(tp, acked);
        if acked == 0 {
            return;
        }
    }
    let w = tp.snd_cwnd;
    cong_avoid_ai(tp, w, acked);
}

/// Linux `tcp_reno_ssthresh`: half the window, at least 2 packets.
#[inline]
pub fn reno_ssthresh(tp: &Sock) -> u32 {
    (tp.snd_cwnd >> 1).max(2)
}

/// Linux `tcp_reno_undo_cwnd`: the larger of the current and the pre-reduction cwnd.
#[inline]
pub fn reno_undo_cwnd(tp: &Sock) -> u32 {
    tp.snd_cwnd.max(tp.prior_cwnd)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sock(cwnd: u32, ssthresh: u32) -> Sock {
        let mut tp = Sock::new(1448, cwnd);
        tp.snd_ssthresh = ssthresh;
        tp.max_packets_out = cwnd;
        tp
    }

    // TV-C1 (Linux `tcp_slow_start` in tcp_cong.c, worked by hand): IW10,
    // ACK every segment, cwnd doubles per RTT.
    #[test]
    fn slow_start_doubles_per_rtt() {
        let mut tp = sock(10, crate::INFINITE_SSTHRESH);
        for rtt in 1..=3 {
            let acks = tp.snd_cwnd;
            tp.max_packets_out = tp.snd_cwnd;
            for _ in 0..acks {
                reno_cong_avoid(&mut tp, 1);
            }
            assert_eq!(tp.snd_cwnd, 10 << rtt);
        }
    }

    // TV-C2: delayed ACKs with Linux `acked` counting still double per RTT.
    #[test]
    fn slow_start_with_delayed_acks_doubles() {
        let mut tp = sock(10, crate::INFINITE_SSTHRESH);
        for _ in 0..5 {
            reno_cong_avoid(&mut tp, 2);
        }
        assert_eq!(tp.snd_cwnd, 20);
    }

    // TV-C3: cwnd 20 = ssthresh, 20 single ACKs → 21; with acked = 2, 10 ACKs → 21.
    #[test]
    fn congestion_avoidance_adds_one_per_window() {
        let mut tp = sock(20, 20);
        tp.is_cwnd_limited = true;
        for i in 0..20 {
            assert_eq!(tp.snd_cwnd, 20, "after {i} acks");
            reno_cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 21);
        assert_eq!(tp.snd_cwnd_cnt, 0);

        let mut tp = sock(20, 20);
        for _ in 0..10 {
            reno_cong_avoid(&mut tp, 2);
        }
        assert_eq!(tp.snd_cwnd, 21);
    }

    // TV-C4: cwnd 30, ssthresh 32, acked 5 → cwnd 32, 3 left over into CA.
    #[test]
    fn slow_start_spills_into_avoidance() {
        let mut tp = sock(30, 32);
        tp.max_packets_out = 30;
        reno_cong_avoid(&mut tp, 5);
        assert_eq!(tp.snd_cwnd, 32);
        assert_eq!(tp.snd_cwnd_cnt, 3);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut tp = sock(20, 10);
        tp.is_cwnd_limited = false;
        reno_cong_avoid(&mut tp, 20);
        assert_eq!(tp.snd_cwnd, 20);
    }

    #[test]
    fn reno_halves() {
        assert_eq!(reno_ssthresh(&sock(40, 100)), 20);
        assert_eq!(reno_ssthresh(&sock(3, 100)), 2);
        assert_eq!(reno_ssthresh(&sock(1, 100)), 2);
    }
}
