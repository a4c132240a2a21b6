"""CUBIC in Python: a port of crates/cc/src/cubic.rs in its default Linux
mode (Linux net/ipv4/tcp_cubic.c v2.3, integer arithmetic, with HyStart).

``mode = "rfc9438"`` and ``scaling_bug_2_6_18`` are not ported. Gives
results identical to the built-in ``cubic`` (tests/test_python_cc.py).
"""

from __future__ import annotations

import ccarena
from ccarena import Param
from ccarena.pycc import CA_EVENT_TX_START, CA_LOSS

try:  # the Reno helpers (tcp_slow_start, tcp_cong_avoid_ai), from the file next to this one
    from reno import cong_avoid_ai, slow_start
except ImportError:  # imported as a file (cc_module = "examples/python_cc/cubic.py")
    import importlib.util
    import pathlib

    _spec = importlib.util.spec_from_file_location("ccarena_example_reno", pathlib.Path(__file__).with_name("reno.py"))
    _reno = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_reno)
    cong_avoid_ai, slow_start = _reno.cong_avoid_ai, _reno.slow_start

U32_MAX = 0xFFFF_FFFF
U64_MAX = 0xFFFF_FFFF_FFFF_FFFF
BETA_SCALE = 1024
BICTCP_HZ = 10
USEC_PER_SEC = 1_000_000
CNT_HOLD_US = USEC_PER_SEC // 32
JIFFY_US = 1_000
EPOCH_SAMPLE_HOLDOFF_US = USEC_PER_SEC
HYSTART_MIN_SAMPLES = 8
HYSTART_DELAY_MIN_US = 4_000
HYSTART_DELAY_MAX_US = 16_000
HYSTART_ACK_TRAIN = 0x1
HYSTART_DELAY = 0x2
GSO_MAX_SIZE = 65_536
ACK_DELAY_CAP_US = 1_000


def fixed_1024(x: float, lo: int, hi: int) -> int:
    """round(x * 1024) in [lo, hi] (Rust's f64::round: half away from zero)."""
    v = x * 1024.0
    r = int(v + 0.5) if v >= 0 else -int(-v + 0.5)
    return min(max(r, lo), hi)


def cube_root(a: int) -> int:
    """Integer cube root rounded to the nearest integer (exact)."""
    if a == 0:
        return 0
    r = int(float(a) ** (1.0 / 3.0))
    while r > 0 and r * r * r > a:
        r -= 1
    while (r + 1) ** 3 <= a:
        r += 1
    return r + 1 if 8 * a >= (2 * r + 1) ** 3 else r


class PyCubic:
    """CUBIC with HyStart (Linux tcp_cubic.c), written in Python."""

    name = "py_cubic"
    params = (
        Param("beta", float, 717.0 / 1024.0, min=0.1, max=0.99, doc="window multiplier after loss; Linux 717/1024"),
        Param("c", float, 0.4, min=0.01, max=10.0, doc="cubic scaling constant C, packets/s^3; Linux 410/1024"),
        Param("fast_convergence", bool, True, doc="W_max = cwnd*(1+beta)/2 on a loss below the previous W_max"),
        Param("tcp_friendliness", bool, True, doc="grow at least as fast as the Reno estimate"),
        Param("hystart", bool, True, doc="hybrid slow start"),
        Param("hystart_ack_train", bool, True, doc="HyStart ACK-train detection"),
        Param("hystart_delay", bool, True, doc="HyStart delay-increase detection"),
        Param("hystart_low_window", int, 16, min=2, max=1_000_000, doc="HyStart runs from this cwnd, packets"),
        Param("hystart_ack_delta_us", int, 2000, min=0, max=1_000_000, doc="largest ACK spacing of a train, us"),
        Param("initial_ssthresh", int, 0, min=0, max=1 << 31, doc="initial ssthresh when hystart is off; 0 = unused"),
    )
    metric_names = ("w_max_pkts", "k_s", "origin_pkts", "hystart_found", "w_est_pkts")

    def __init__(self, **p) -> None:
        self.fast_convergence = p["fast_convergence"]
        self.tcp_friendliness = p["tcp_friendliness"]
        self.hystart = p["hystart"]
        self.hystart_low_window = p["hystart_low_window"]
        self.hystart_ack_delta_us = p["hystart_ack_delta_us"]
        self.initial_ssthresh = p["initial_ssthresh"]
        self.beta = fixed_1024(p["beta"], 1, BETA_SCALE - 1)
        self.cube_rtt_scale = fixed_1024(p["c"], 1, U32_MAX)
        self.cube_factor = (1 << (10 + 3 * BICTCP_HZ)) // self.cube_rtt_scale
        self.beta_scale = 8 * (BETA_SCALE + self.beta) // 3 // (BETA_SCALE - self.beta)
        self.hystart_detect = (HYSTART_ACK_TRAIN if p["hystart_ack_train"] else 0) | (
            HYSTART_DELAY if p["hystart_delay"] else 0
        )
        self.round_start = self.end_seq = self.last_ack = 0
        self.curr_rtt = U32_MAX
        self.reset()

    def reset(self) -> None:
        """Linux bictcp_reset."""
        self.cnt = 0
        self.last_max_cwnd = 0
        self.last_cwnd = 0
        self.last_time = 0
        self.bic_origin_point = 0
        self.bic_k = 0
        self.delay_min = 0
        self.epoch_start = 0
        self.ack_cnt = 0
        self.tcp_cwnd = 0
        self.sample_cnt = 0
        self.found = False

    def hystart_reset(self, tp) -> None:
        self.round_start = tp.now_us
        self.last_ack = tp.now_us
        self.end_seq = tp.snd_nxt
        self.curr_rtt = U32_MAX
        self.sample_cnt = 0

    def update(self, cwnd: int, acked: int, now: int) -> None:
        """Linux bictcp_update."""
        self.ack_cnt = min(self.ack_cnt + acked, U32_MAX)
        if self.last_cwnd == cwnd and max(now - self.last_time, 0) <= CNT_HOLD_US:
            return
        same_tick = now // JIFFY_US == self.last_time // JIFFY_US
        if self.epoch_start == 0 or not same_tick:
            self.last_cwnd = cwnd
            self.last_time = now
            if self.epoch_start == 0:
                self.epoch_start = max(now, 1)
                self.ack_cnt = acked
                self.tcp_cwnd = cwnd
                if self.last_max_cwnd <= cwnd:
                    self.bic_k = 0
                    self.bic_origin_point = cwnd
                else:
                    self.bic_k = cube_root(self.cube_factor * (self.last_max_cwnd - cwnd))
                    self.bic_origin_point = self.last_max_cwnd
            elapsed = max(now - self.epoch_start, 0) + self.delay_min
            t = min((elapsed << BICTCP_HZ) // USEC_PER_SEC, U64_MAX)
            offs = self.bic_k - t if t < self.bic_k else t - self.bic_k
            delta = min((self.cube_rtt_scale * offs * offs * offs) >> (10 + 3 * BICTCP_HZ), U64_MAX)
            origin = self.bic_origin_point
            target = max(origin - delta, 0) if t < self.bic_k else min(origin + delta, U64_MAX)
            if target > cwnd:
                self.cnt = min(cwnd // (target - cwnd), U32_MAX)
            else:
                self.cnt = min(cwnd * 100, U32_MAX)
            if self.last_max_cwnd == 0 and self.cnt > 20:
                self.cnt = 20
        if self.tcp_friendliness:
            delta = min(max((cwnd * self.beta_scale) >> 3, 1), U32_MAX)
            if self.ack_cnt > delta:
                n = (self.ack_cnt - 1) // delta
                self.ack_cnt -= n * delta
                self.tcp_cwnd = min(self.tcp_cwnd + n, U32_MAX)
            if self.tcp_cwnd > cwnd:
                max_cnt = cwnd // (self.tcp_cwnd - cwnd)
                self.cnt = min(self.cnt, max_cnt)
        self.cnt = max(self.cnt, 2)

    def hystart_update(self, tp, delay: int) -> None:
        """Linux hystart_update."""
        if tp.snd_una > self.end_seq:
            self.hystart_reset(tp)
        if tp.snd_cwnd < self.hystart_low_window:
            return
        if self.hystart_detect & HYSTART_ACK_TRAIN:
            now = tp.now_us
            if max(now - self.last_ack, 0) <= self.hystart_ack_delta_us:
                self.last_ack = now
                ack_delay = 0 if tp.pacing_rate == 0 else min(GSO_MAX_SIZE * 4 * USEC_PER_SEC // tp.pacing_rate, ACK_DELAY_CAP_US)
                threshold = self.delay_min + ack_delay
                if not tp.paced:
                    threshold >>= 1
                if max(now - self.round_start, 0) > threshold:
                    self.found = True
                    tp.snd_ssthresh = tp.snd_cwnd
        if self.hystart_detect & HYSTART_DELAY:
            self.curr_rtt = min(self.curr_rtt, delay)
            if self.sample_cnt < HYSTART_MIN_SAMPLES:
                self.sample_cnt += 1
            else:
                thresh = min(max(self.delay_min >> 3, HYSTART_DELAY_MIN_US), HYSTART_DELAY_MAX_US)
                if self.curr_rtt > self.delay_min + thresh:
                    self.found = True
                    tp.snd_ssthresh = tp.snd_cwnd

    # -- hooks ------------------------------------------------------------

    def init(self, tp) -> None:
        self.reset()
        if self.hystart:
            self.hystart_reset(tp)
        if not self.hystart and self.initial_ssthresh != 0:
            tp.snd_ssthresh = self.initial_ssthresh

    def ssthresh(self, tp) -> int:
        self.epoch_start = 0
        cwnd = tp.snd_cwnd
        if cwnd < self.last_max_cwnd and self.fast_convergence:
            self.last_max_cwnd = cwnd * (BETA_SCALE + self.beta) // (2 * BETA_SCALE)
        else:
            self.last_max_cwnd = cwnd
        return max(cwnd * self.beta // BETA_SCALE, 2)

    def cong_avoid(self, tp, acked: int) -> None:
        if not tp.is_cwnd_limited():
            return
        if tp.snd_cwnd < tp.snd_ssthresh:
            acked = slow_start(tp, acked)
            if acked == 0:
                return
        self.update(tp.snd_cwnd, acked, tp.now_us)
        cong_avoid_ai(tp, self.cnt, acked)

    def set_state(self, tp, new_state: int) -> None:
        if new_state == CA_LOSS:
            self.reset()
            self.hystart_reset(tp)

    def cwnd_event(self, tp, event: int, idle_us: int) -> None:
        if event == CA_EVENT_TX_START and self.epoch_start != 0 and idle_us > 0:
            self.epoch_start = min(self.epoch_start + idle_us, max(tp.now_us, 1))

    def pkts_acked(self, tp, sample) -> None:
        if sample.rtt_us < 0:
            return
        if self.epoch_start != 0 and max(tp.now_us - self.epoch_start, 0) < EPOCH_SAMPLE_HOLDOFF_US:
            return
        delay = max(min(sample.rtt_us, U32_MAX), 1)
        if self.delay_min == 0 or self.delay_min > delay:
            self.delay_min = delay
        if not self.found and tp.snd_cwnd < tp.snd_ssthresh and self.hystart:
            self.hystart_update(tp, delay)

    def metrics(self) -> list[float]:
        return [self.last_max_cwnd, self.bic_k / 1024.0, self.bic_origin_point, 1.0 if self.found else 0.0,
                self.tcp_cwnd]


ccarena.register_cc(PyCubic)
