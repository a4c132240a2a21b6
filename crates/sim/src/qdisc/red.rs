//! Random Early Detection: S. Floyd, V. Jacobson, "Random Early Detection
//! Gateways for Congestion Avoidance", IEEE/ACM ToN 1(4), 1993 (Fig. 2), with
//! Floyd's "gentle" variant and Adaptive RED (S. Floyd, R. Gummadi,
//! S. Shenker, "Adaptive RED: An Algorithm for Increasing the Robustness of
//! RED's Active Queue Management", ICSI 2001). Linux: `include/net/red.h`,
//! `net/sched/sch_red.c`.
//!
//! ```text
//!   avg < min_th           → admit, count = −1
//!   min_th ≤ avg < max_th  → p_b = max_p·(avg−min_th)/(max_th−min_th)
//!                            p_a = p_b/(1 − count·p_b): mark/drop with p_a
//!   max_th ≤ avg < 2·max_th, gentle → p_b = max_p + (1−max_p)(avg−max_th)/max_th
//!   otherwise              → forced drop
//! ```
//! `avg` is an EWMA (weight w_q) of the instantaneous queue sampled at each
//! arrival; after an idle period it decays as if m = idle/s empty-queue
//! arrivals had been seen (s = transmission time of an average packet).
//! Red computes in f64 where Linux uses fixed point (`Wlog`, `Plog`,
//! `Scell_log`); the algorithm is the paper's.

use super::{PacketView, QueueLimit, RedConfig, RedMode};
use crate::event::{Time, PS_PER_S};
use crate::packet::PacketId;
use crate::rng::Rng;
use std::collections::VecDeque;

/// Adaptive RED's adaptation period (Floyd, Gummadi, Shenker 2001, Fig. 2: 0.5 s).
const ADAPT_INTERVAL: Time = PS_PER_S / 2;
/// Adaptive RED's multiplicative decrease of max_p (paper: β = 0.9).
const ADAPT_BETA: f64 = 0.9;

/// What RED decided for an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Admit,
    /// Probabilistic mark/drop (ECN-markable).
    Prob,
    /// Forced drop: above max_th (or 2·max_th with gentle).
    Hard,
}

#[derive(Debug)]
pub struct Red {
    pub cfg: RedConfig,
    limit: QueueLimit,
    q: VecDeque<PacketId>,
    bytes: u64,
    /// Average queue, packets or bytes as `cfg.mode`.
    pub avg: f64,
    /// Packets since the last mark/drop (−1: avg below min_th).
    pub count: i64,
    /// Start of the current idle period, ps (None while busy).
    idle_since: Option<Time>,
    /// Transmission time of an average packet (s in the paper), ps.
    s_ps: f64,
    /// Current max_p (changes only with adaptive).
    pub max_p: f64,
    next_adapt: Time,
    rng: Rng,
    pub marks: u64,
    /// Early (probabilistic or forced) drops, not overflow.
    pub aqm_drops: u64,
}

impl Red {
    pub fn new(cfg: RedConfig, limit: QueueLimit, rate_bps: u64, rng: Rng) -> Red {
        let s_ps = cfg.avpkt_bytes as f64 * 8.0 * PS_PER_S as f64 / rate_bps as f64;
        Red {
            max_p: cfg.max_p,
            cfg,
            limit,
            q: VecDeque::with_capacity(1024),
            bytes: 0,
            avg: 0.0,
            count: -1,
            idle_since: Some(0),
            s_ps,
            next_adapt: ADAPT_INTERVAL,
            rng,
            marks: 0,
            aqm_drops: 0,
        }
    }

    fn qlen(&self) -> f64 {
        match self.cfg.mode {
            RedMode::Packets => self.q.len() as f64,
            RedMode::Bytes => self.bytes as f64,
        }
    }

    /// Updates `avg` for an arrival at `now` (paper Fig. 2).
    pub fn update_avg(&mut self, now: Time) {
        match self.idle_since {
            Some(t0) if self.q.is_empty() => {
                // Idle decay: m = (now − q_time)/s, avg ← (1 − w_q)^m·avg.
                let m = (now - t0.min(now)) as f64 / self.s_ps;
                self.avg *= (1.0 - self.cfg.wq).powf(m);
                self.idle_since = None;
            }
            _ => self.avg += self.cfg.wq * (self.qlen() - self.avg),
        }
    }

    /// Probability before count spacing, for the current avg and max_p.
    pub fn p_b(&self, len: u32) -> Option<f64> {
        let (min, max, maxp) = (self.cfg.min_th, self.cfg.max_th, self.max_p);
        let avg = self.avg;
        let p = if avg < min {
            return Some(0.0);
        } else if avg < max {
            maxp * (avg - min) / (max - min)
        } else if self.cfg.gentle && avg < 2.0 * max {
            maxp + (1.0 - maxp) * (avg - max) / max
        } else {
            return None;
        };
        Some(match self.cfg.mode {
            // Byte mode: p_b·PacketSize/MaximumPacketSize (paper §4).
            RedMode::Bytes => p * len as f64 / self.cfg.mtu_bytes as f64,
            RedMode::Packets => p,
        })
    }

    /// The decision for an arriving packet of `len` bytes (avg already updated).
    pub fn decide(&mut self, len: u32) -> Action {
        match self.p_b(len) {
            None => {
                self.count = 0;
                Action::Hard
            }
            Some(p) if p <= 0.0 && self.avg < self.cfg.min_th => {
                self.count = -1;
                Action::Admit
            }
            Some(p_b) => {
                self.count += 1;
                // Uniform spacing of marks: p_a = p_b/(1 − count·p_b) (paper §7).
                let denom = 1.0 - self.count as f64 * p_b;
                let p_a = if denom <= 0.0 { 1.0 } else { p_b / denom };
                if self.rng.uniform() < p_a {
                    self.count = 0;
                    Action::Prob
                } else {
                    Action::Admit
                }
            }
        }
    }

    /// Adaptive RED (2001, Fig. 2): every 0.5 s move max_p so that avg
    /// stays in [min_th + 0.4·(max_th − min_th), min_th + 0.6·(max_th − min_th)].
    pub fn adapt(&mut self) {
        let (min, max) = (self.cfg.min_th, self.cfg.max_th);
        let lo = min + 0.4 * (max - min);
        let hi = min + 0.6 * (max - min);
        if self.avg > hi && self.max_p <= 0.5 {
            self.max_p += (self.max_p / 4.0).min(0.01);
        } else if self.avg < lo && self.max_p >= 0.01 {
            self.max_p *= ADAPT_BETA;
        }
    }

    #[inline]
    pub fn enqueue<P: PacketView>(&mut self, id: PacketId, now: Time, pkts: &mut P) -> bool {
        let len = pkts.wire_len(id);
        if self.cfg.adaptive {
            while now >= self.next_adapt {
                self.adapt();
                self.next_adapt += ADAPT_INTERVAL;
            }
        }
        self.update_avg(now);
        match self.decide(len) {
            Action::Admit => {}
            Action::Prob if self.cfg.ecn && pkts.ect(id) => {
                pkts.set_ce(id);
                self.marks += 1;
            }
            Action::Hard if !self.cfg.harddrop && self.cfg.ecn && pkts.ect(id) => {
                pkts.set_ce(id);
                self.marks += 1;
            }
            Action::Prob | Action::Hard => {
                self.aqm_drops += 1;
                return false;
            }
        }
        if !self.limit.fits(self.q.len(), self.bytes, len) {
            return false;
        }
        self.q.push_back(id);
        self.bytes += len as u64;
        true
    }

    #[inline]
    pub fn dequeue<P: PacketView>(&mut self, now: Time, pkts: &mut P) -> Option<PacketId> {
        let id = self.q.pop_front()?;
        self.bytes -= pkts.wire_len(id) as u64;
        if self.q.is_empty() {
            self.idle_since = Some(now);
        }
        Some(id)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn len(&self) -> usize {
        self.q.len()
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::Pkts;
    use super::*;

    fn red(gentle: bool) -> Red {
        let cfg = RedConfig { min_th: 5.0, max_th: 15.0, max_p: 0.1, gentle, ..RedConfig::default() };
        Red::new(cfg, QueueLimit::Packets(1000), 100_000_000, Rng::new(1, 0))
    }

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol, "{a} vs {b}");
    }

    // Floyd & Jacobson 1993 §4: p_b = max_p·(avg − min_th)/(max_th − min_th);
    // gentle: max_p + (1 − max_p)(avg − max_th)/max_th.
    #[test]
    fn drop_probability_linear_and_gentle() {
        let mut r = red(true);
        for (avg, want) in [
            (4.0, Some(0.0)),
            (10.0, Some(0.05)),
            (14.9, Some(0.099)),
            (20.0, Some(0.4)),
            (29.0, Some(0.94)),
            (31.0, None),
        ] {
            r.avg = avg;
            match (r.p_b(1500), want) {
                (Some(p), Some(w)) => close(p, w, 1e-12),
                (None, None) => {}
                (got, w) => panic!("avg {avg}: {got:?} vs {w:?}"),
            }
        }
        let mut r = red(false);
        r.avg = 20.0;
        assert_eq!(r.p_b(1500), None);
    }

    // Paper §7: p_a = p_b/(1 − count·p_b), count incremented first. The gap
    // n to the next mark has P(n) = Π_{k<n} (1 − (k+1)p)/(1 − kp) · p/(1 − np)
    // = p/(1 − p): uniform on 1..=19 for p_b = 0.05 (count 19 → p_a = 1).
    #[test]
    fn count_spacing_forces_a_mark() {
        let mut r = red(true);
        r.avg = 10.0;
        r.rng = Rng::new(99, 0);
        // Never more than 19 packets between marks.
        let mut gap = 0;
        let mut gaps = Vec::new();
        for _ in 0..20_000 {
            gap += 1;
            if r.decide(1500) == Action::Prob {
                gaps.push(gap);
                gap = 0;
            }
        }
        assert!(gaps.iter().all(|&g| g <= 19), "{gaps:?}");
        assert!(gaps.contains(&19));
        // Uniform on 1..=19: mean 10.
        let mean = gaps.iter().sum::<i32>() as f64 / gaps.len() as f64;
        close(mean, 10.0, 0.3);
    }

    // EWMA with constant q = 20 from avg 0: 500 arrivals → 20·(1 − 0.998^500) = 12.65.
    #[test]
    fn ewma_and_idle_decay() {
        let mut r = red(true);
        for i in 0..20 {
            r.q.push_back(i);
        }
        r.idle_since = None;
        r.update_avg(0);
        close(r.avg, 0.04, 1e-12);
        for _ in 1..500 {
            r.update_avg(0);
        }
        close(r.avg, 12.65, 0.01);
        // 10 ms idle at 100 Mbit/s with avpkt 1500 B (s = 120 µs): m = 83.3,
        // avg·0.998^83.3 = 0.846·avg.
        r.cfg.avpkt_bytes = 1500;
        r.s_ps = 1500.0 * 8.0 * 1e12 / 1e8;
        r.q.clear();
        let before = r.avg;
        r.idle_since = Some(1_000_000_000);
        r.update_avg(1_000_000_000 + 10_000_000_000);
        close(r.avg / before, 0.846, 0.001);
    }

    // Adaptive RED: band [9, 11] for thresholds 5/15.
    #[test]
    fn adaptive_max_p_steps() {
        let mut r = red(true);
        r.avg = 13.0;
        r.adapt();
        close(r.max_p, 0.11, 1e-12);
        r.avg = 8.0;
        r.adapt();
        close(r.max_p, 0.099, 1e-12);
        r.max_p = 0.02;
        r.avg = 13.0;
        r.adapt();
        close(r.max_p, 0.025, 1e-12);
        r.avg = 10.0;
        r.adapt();
        close(r.max_p, 0.025, 1e-12);
    }

    #[test]
    fn ecn_marks_below_max_th_and_drops_above() {
        let mut r = red(false);
        r.cfg.ecn = true;
        let mut p = Pkts::new(4000, 1500, true);
        r.avg = 12.0;
        r.idle_since = None;
        r.q.extend(0..12);
        let mut dropped = 0;
        for id in 100..1100 {
            r.avg = 12.0;
            if !r.enqueue(id, 0, &mut p) {
                dropped += 1;
            }
            r.q.pop_back();
        }
        assert_eq!(dropped, 0);
        assert!(r.marks > 50, "{}", r.marks);
        r.q.extend(0..20);
        r.avg = 16.0;
        assert!(!r.enqueue(2000, 0, &mut p));
    }
}
