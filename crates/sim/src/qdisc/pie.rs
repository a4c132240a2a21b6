//! PIE, RFC 8033 (R. Pan et al.), as in Linux `net/sched/sch_pie.c` and
//! `include/net/pie.h` with its default timestamp-based queue delay
//! (`dq_rate_estimator` off: qdelay is the sojourn of the last dequeued
//! packet, 0 once the queue is empty).
//!
//! Every `tupdate` the drop probability moves by
//! α·(qdelay − target) + β·(qdelay − qdelay_old), scaled down while p is
//! small (RFC 8033 §4.2; Linux halves below 10 % and divides by a further 4
//! per decade below 1 %, down to 10⁻⁶), capped at +2 % when p ≥ 10 %, with
//! Linux's extra +2 % when qdelay > 250 ms and its ×(1 − 1/64) decay when
//! the queue stays empty. Arrivals are dropped (or CE-marked, ECT packets
//! while p ≤ 10 %) with probability p, de-randomised as in RFC 8033 §5.1 /
//! Linux `pie_drop_early`. The update runs lazily at the next enqueue or
//! dequeue for every tupdate boundary passed (the queue does not change in
//! between, so this equals a timer). The burst allowance drains by tupdate
//! per update (RFC 8033 §4.2).

use super::books::{Cx, DropReason};
use super::discipline::{Discipline, Env, QdiscKind};
use super::params::{bytes, ns, p, DefaultValue as D, Fields, ParamType as T, QdiscInfo, Unit, MAX_PARAM_NS};
use super::queue::QueueLimit;
use crate::event::{Time, PS_PER_NS, PS_PER_S};
use crate::packet::{PacketId, PacketView};
use crate::rng::Rng;
use std::collections::VecDeque;

/// PIE parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct PieConfig {
    pub target_ns: u64,
    pub tupdate_ns: u64,
    pub alpha: f64,
    pub beta: f64,
    pub max_burst_ns: u64,
    pub ecn: bool,
    pub ecn_prob: f64,
    pub bytemode: bool,
    pub mtu_bytes: u64,
}

impl Default for PieConfig {
    fn default() -> PieConfig {
        PieConfig {
            target_ns: 15_000_000,
            tupdate_ns: 15_000_000,
            alpha: 0.125,
            beta: 1.25,
            max_burst_ns: 150_000_000,
            ecn: false,
            ecn_prob: 0.1,
            bytemode: false,
            mtu_bytes: 1514,
        }
    }
}

impl QdiscKind for PieConfig {
    type Qdisc = Pie;
    const KIND: &'static str = "pie";

    fn info() -> QdiscInfo {
        QdiscInfo {
        name: Self::KIND,
        summary: "Proportional Integral controller Enhanced: drop (or CE-mark) arrivals with a probability updated every tupdate from the queueing delay.",
        source: "RFC 8033; Linux net/sched/sch_pie.c, include/net/pie.h",
        params: vec![
            ns("target_ns", 15_000_000, "Target queueing delay QDELAY_REF (RFC 8033 §4.1: 15 ms; Linux default 15 ms)."),
            p("tupdate_ns", T::Int, D::Int(15_000_000), Some(1e3), Some(MAX_PARAM_NS), "Probability update period T_UPDATE (RFC 8033: 15 ms; Linux 15 ms). At least 1 us, Linux's unit for it (tc-pie 'tupdate'): the engine catches up update by update, so a shorter one costs a loop per nanosecond.").unit(Unit::Ns),
            p("alpha", T::Float, D::Float(0.125), Some(0.0), Some(32.0), "Weight of (qdelay − target), per second (RFC 8033 §4.2: 0.125 Hz)."),
            p("beta", T::Float, D::Float(1.25), Some(0.0), Some(32.0), "Weight of (qdelay − qdelay_old), per second (RFC 8033 §4.2: 1.25 Hz)."),
            ns("max_burst_ns", 150_000_000, "Burst allowance MAX_BURST during which nothing is dropped (RFC 8033 §4.1: 150 ms)."),
            p("ecn", T::Bool, D::Bool(false), None, None, "CE-mark ECN-capable packets instead of dropping while the probability is at most ecn_prob (RFC 8033 §5.1; Linux default off)."),
            p("ecn_prob", T::Float, D::Float(0.1), Some(0.0), Some(1.0), "Largest drop probability at which marking replaces dropping (RFC 8033 §5.1: 10 %)."),
            p("bytemode", T::Bool, D::Bool(false), None, None, "Scale the probability by packet size / mtu_bytes (Linux sch_pie 'bytemode')."),
            bytes("mtu_bytes", 1514, "Full-size packet: no early drop with fewer than two of them queued (RFC 8033 §5.1; Linux psched_mtu)."),
        ],
    }
    }

    fn fields(&mut self, f: &mut Fields) -> Result<(), String> {
        f.int("target_ns", &mut self.target_ns)?;
        f.int("tupdate_ns", &mut self.tupdate_ns)?;
        f.float("alpha", &mut self.alpha)?;
        f.float("beta", &mut self.beta)?;
        f.int("max_burst_ns", &mut self.max_burst_ns)?;
        f.flag("ecn", &mut self.ecn)?;
        f.float("ecn_prob", &mut self.ecn_prob)?;
        f.flag("bytemode", &mut self.bytemode)?;
        f.int("mtu_bytes", &mut self.mtu_bytes)
    }

    fn build(&self, env: Env) -> Pie {
        Pie::new(self.clone(), env.limit, env.rng)
    }
}

/// Linux `pie_calculate_probability`: non-linear drop above 250 ms.
const QDELAY_BURST: Time = 250 * 1_000_000_000;

#[derive(Debug)]
pub struct Pie {
    pub cfg: PieConfig,
    limit: QueueLimit,
    q: VecDeque<PacketId>,
    target: Time,
    tupdate: Time,
    next_update: Time,
    /// Drop probability, 0..=1.
    pub prob: f64,
    /// Queue delay used by the controller, ps.
    pub qdelay: Time,
    pub qdelay_old: Time,
    /// Remaining burst allowance, ps.
    pub burst_time: Time,
    /// De-randomisation accumulator (RFC 8033 §5.1).
    accu_prob: f64,
    rng: Rng,
}

impl Pie {
    pub fn new(cfg: PieConfig, limit: QueueLimit, rng: Rng) -> Pie {
        let tupdate = cfg.tupdate_ns * PS_PER_NS;
        Pie {
            limit,
            q: VecDeque::with_capacity(1024),
            target: cfg.target_ns * PS_PER_NS,
            tupdate,
            next_update: tupdate,
            prob: 0.0,
            qdelay: 0,
            qdelay_old: 0,
            burst_time: cfg.max_burst_ns * PS_PER_NS,
            accu_prob: 0.0,
            rng,
            cfg,
        }
    }

    /// One probability update (Linux `pie_calculate_probability`).
    pub fn calculate_probability(&mut self) {
        let qdelay = self.qdelay;
        // "If qdelay is zero and qlen is not, qlen is very small": no update.
        let update_prob = qdelay != 0 || self.q.is_empty();
        let (mut alpha, mut beta) = (self.cfg.alpha, self.cfg.beta);
        if self.prob < 0.1 {
            alpha /= 2.0;
            beta /= 2.0;
            let mut power = 100.0;
            while self.prob < 1.0 / power && power <= 1e6 {
                alpha /= 4.0;
                beta /= 4.0;
                power *= 10.0;
            }
        }
        let s = |t: Time| t as f64 / PS_PER_S as f64;
        let mut delta = alpha * (s(qdelay) - s(self.target)) + beta * (s(qdelay) - s(self.qdelay_old));
        // RFC 8033 §4.2: cap large increases once p ≥ 10 %.
        if delta > 0.02 && self.prob >= 0.1 {
            delta = 0.02;
        }
        if qdelay > QDELAY_BURST {
            delta += 0.02;
        }
        if update_prob {
            self.prob = (self.prob + delta).clamp(0.0, 1.0);
            // Non-linear decay while the queue is idle (Linux: prob −= prob/64).
            if qdelay == 0 && self.qdelay_old == 0 {
                self.prob -= self.prob / 64.0;
            }
        }
        self.qdelay_old = qdelay;
        self.burst_time = self.burst_time.saturating_sub(self.tupdate);
        // RFC 8033 §4.2: re-arm the burst allowance once the queue has settled.
        if qdelay < self.target / 2 && self.qdelay_old < self.target / 2 && self.prob == 0.0 {
            self.burst_time = self.cfg.max_burst_ns * PS_PER_NS;
            self.accu_prob = 0.0;
        }
    }

    #[inline]
    fn catch_up(&mut self, now: Time) {
        while now >= self.next_update {
            self.calculate_probability();
            self.next_update += self.tupdate;
        }
    }

    /// Linux `pie_drop_early` for a packet of `len` bytes arriving to
    /// `backlog` bytes.
    fn drop_early(&mut self, len: u32, backlog: u64) -> bool {
        if self.burst_time > 0 {
            return false;
        }
        if self.qdelay_old < self.target / 2 && self.prob < 0.2 {
            return false;
        }
        if backlog < 2 * self.cfg.mtu_bytes {
            return false;
        }
        let mut local = self.prob;
        if self.cfg.bytemode && len as u64 <= self.cfg.mtu_bytes {
            local = local * len as f64 / self.cfg.mtu_bytes as f64;
        }
        if self.prob == 0.0 {
            self.accu_prob = 0.0;
        }
        self.accu_prob += local;
        if self.accu_prob < 0.85 {
            return false;
        }
        if self.accu_prob >= 8.5 {
            self.accu_prob = 0.0;
            return true;
        }
        if self.rng.uniform() < local {
            self.accu_prob = 0.0;
            return true;
        }
        false
    }
}

impl Discipline for Pie {
    #[inline]
    fn enqueue<P: PacketView>(&mut self, id: PacketId, cx: &mut Cx<'_, P>) -> Result<(), DropReason> {
        self.catch_up(cx.now);
        let len = cx.wire_len(id);
        if !self.limit.fits(cx.pkts(), cx.bytes(), len) {
            return Err(DropReason::Overflow);
        }
        if self.drop_early(len, cx.bytes()) {
            // RFC 8033 §5.1: mark instead of drop while p ≤ 10 %.
            if self.cfg.ecn && self.prob <= self.cfg.ecn_prob && cx.ect(id) {
                cx.mark(id);
            } else {
                return Err(DropReason::Aqm);
            }
        }
        self.q.push_back(id);
        Ok(())
    }

    #[inline]
    fn dequeue<P: PacketView>(&mut self, cx: &mut Cx<'_, P>) -> Option<PacketId> {
        self.catch_up(cx.now);
        let id = self.q.pop_front()?;
        self.qdelay = if self.q.is_empty() { 0 } else { cx.now - cx.enqueued_at(id) };
        Some(id)
    }

    fn state_names(&self) -> &'static [&'static str] {
        &["pie_drop_prob", "pie_qdelay_us"]
    }

    fn state(&self) -> [f64; 2] {
        [self.prob, self.qdelay as f64 / 1e6]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000_000;

    fn pie(prob: f64, qdelay_ms: u64, old_ms: u64) -> Pie {
        let mut p = Pie::new(PieConfig::default(), QueueLimit::Packets(1000), Rng::new(1, 0));
        p.prob = prob;
        p.qdelay = qdelay_ms * MS;
        p.qdelay_old = old_ms * MS;
        p.q.push_back(0);
        p
    }

    // RFC 8033 §4.2 with Linux's scaling:
    #[test]
    fn probability_update_steps() {
        // p 0.05, qdelay 25, old 20: Δp = 0.125·0.010 + 1.25·0.005 = 0.0075, /2 → 0.05375.
        let mut p = pie(0.05, 25, 20);
        p.calculate_probability();
        assert!((p.prob - 0.05375).abs() < 1e-12, "{}", p.prob);
        // p 0, qdelay 30, old 0: Δp = (0.125·0.015 + 1.25·0.030)/2048 = 1.92e−5.
        let mut p = pie(0.0, 30, 0);
        p.calculate_probability();
        assert!((p.prob - 0.039375 / 2048.0).abs() < 1e-12, "{}", p.prob);
        // p 0.2, qdelay 45, old 15: raw 0.04125 capped to 0.02 → 0.22.
        let mut p = pie(0.2, 45, 15);
        p.calculate_probability();
        assert!((p.prob - 0.22).abs() < 1e-12, "{}", p.prob);
        // qdelay above 250 ms adds 2 %: p 0.5, qdelay 300, old 300: 0.125·0.285 = 0.035625 → 0.02 + 0.02.
        let mut p = pie(0.5, 300, 300);
        p.calculate_probability();
        assert!((p.prob - 0.54).abs() < 1e-12, "{}", p.prob);
        // Idle decay: p 0.1, both delays 0, empty queue: −0.125·0.015 = −0.001875 → 0.098125, ×63/64.
        let mut p = pie(0.1, 0, 0);
        p.q.clear();
        p.calculate_probability();
        assert!((p.prob - 0.098125 * 63.0 / 64.0).abs() < 1e-12, "{}", p.prob);
    }

    #[test]
    fn burst_allowance_drains_by_tupdate() {
        let mut p = pie(0.0, 20, 20);
        assert_eq!(p.burst_time, 150 * MS);
        p.calculate_probability();
        assert_eq!(p.burst_time, 135 * MS);
        for _ in 0..9 {
            p.calculate_probability();
        }
        assert_eq!(p.burst_time, 0);
    }
}
