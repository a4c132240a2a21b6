"""Reno in Python: a line-for-line port of crates/cc/src/reno.rs and the
helpers of crates/cc/src/common.rs (Linux net/ipv4/tcp_cong.c).

Gives results identical to the built-in ``reno`` (tests/test_python_cc.py).
"""

from __future__ import annotations

import ccarena

U32_MAX = 0xFFFF_FFFF


def slow_start(tp, acked: int) -> int:
    """Linux tcp_slow_start: returns the packets acked left over at ssthresh."""
    cwnd = min(min(tp.snd_cwnd + acked, U32_MAX), tp.snd_ssthresh)
    spent = max(cwnd - tp.snd_cwnd, 0)
    tp.snd_cwnd = min(cwnd, tp.snd_cwnd_clamp)
    return acked - min(spent, acked)


def cong_avoid_ai(tp, w: int, acked: int) -> None:
    """Linux tcp_cong_avoid_ai: one packet more per w packets acknowledged."""
    w = max(w, 1)
    if tp.snd_cwnd_cnt >= w:
        tp.snd_cwnd_cnt = 0
        tp.snd_cwnd = min(tp.snd_cwnd + 1, U32_MAX)
    tp.snd_cwnd_cnt = min(tp.snd_cwnd_cnt + acked, U32_MAX)
    if tp.snd_cwnd_cnt >= w:
        delta = tp.snd_cwnd_cnt // w
        tp.snd_cwnd_cnt -= delta * w
        tp.snd_cwnd = min(tp.snd_cwnd + delta, U32_MAX)
    tp.snd_cwnd = min(tp.snd_cwnd, tp.snd_cwnd_clamp)


def reno_cong_avoid(tp, acked: int) -> None:
    """Linux tcp_reno_cong_avoid."""
    if not tp.is_cwnd_limited():
        return
    if tp.snd_cwnd < tp.snd_ssthresh:
        acked = slow_start(tp, acked)
        if acked == 0:
            return
    cong_avoid_ai(tp, tp.snd_cwnd, acked)


class PyReno:
    """Reno (Linux tcp_reno_congestion_ops), written in Python."""

    name = "py_reno"

    def ssthresh(self, tp) -> int:
        return max(tp.snd_cwnd >> 1, 2)

    def cong_avoid(self, tp, acked: int) -> None:
        reno_cong_avoid(tp, acked)

    def undo_cwnd(self, tp) -> int:
        return max(tp.snd_cwnd, tp.prior_cwnd)


ccarena.register_cc(PyReno)
