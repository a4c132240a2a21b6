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

use super::books::{Cx, DropReason};
use super::discipline::{Discipline, Env, QdiscKind};
use super::params::{bytes, p, DefaultValue as D, Fields, ParamType as T, QdiscInfo, QdiscParam};
use super::queue::{QueueLimit, MAX_BUFFER_BYTES};
use crate::event::{Time, PS_PER_S};
use crate::packet::{PacketId, PacketView};
use crate::rng::Rng;
use std::collections::VecDeque;

/// Largest RED threshold: the largest buffer the engine holds, in bytes
/// (in packet mode it is far beyond any buffer, which is harmless).
const MAX_RED_TH: f64 = MAX_BUFFER_BYTES as f64;

/// RED's unit of queue length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedMode {
    Packets,
    Bytes,
}

/// RED parameters; see [`RedConfig::info`] for sources.
#[derive(Clone, Debug, PartialEq)]
pub struct RedConfig {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub wq: f64,
    pub gentle: bool,
    pub ecn: bool,
    pub harddrop: bool,
    pub adaptive: bool,
    pub mode: RedMode,
    pub avpkt_bytes: u64,
    pub mtu_bytes: u64,
}

impl Default for RedConfig {
    fn default() -> RedConfig {
        RedConfig {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            wq: 0.002,
            gentle: true,
            ecn: false,
            harddrop: true,
            adaptive: false,
            mode: RedMode::Packets,
            avpkt_bytes: 1000,
            mtu_bytes: 1514,
        }
    }
}

impl QdiscKind for RedConfig {
    type Qdisc = Red;
    const KIND: &'static str = "red";

    fn info() -> QdiscInfo {
        QdiscInfo {
        name: Self::KIND,
        summary: "Random Early Detection with gentle mode, idle-time decay, count-based spacing of drops and optional Adaptive RED; packet or byte mode.",
        source: "Floyd & Jacobson, IEEE/ACM ToN 1(4) 1993; Floyd, Gummadi & Shenker, Adaptive RED, ICSI 2001; Linux include/net/red.h, net/sched/sch_red.c",
        params: vec![
            p("min_th", T::Float, D::Float(5.0), Some(0.0), Some(MAX_RED_TH), "Lower threshold of the average queue, packets (mode=packets) or bytes (mode=bytes). Floyd & Jacobson 1993 §11: at least 5 packets.").open_max(),
            p("max_th", T::Float, D::Float(15.0), Some(0.0), Some(MAX_RED_TH), "Upper threshold, same unit as min_th; must exceed min_th. Floyd's recommendation: 3·min_th.").open_min().exceeds("min_th"),
            p("max_p", T::Float, D::Float(0.1), Some(0.0), Some(1.0), "Marking probability at avg = max_th (Floyd's RED notes: 0.1; Adaptive RED starts here and adapts it)."),
            p("wq", T::Float, D::Float(0.002), Some(1e-9), Some(1.0), "EWMA weight of the average queue (Floyd & Jacobson 1993 §6: 0.002; Linux: 2^-Wlog)."),
            p("gentle", T::Bool, D::Bool(true), None, None, "Ramp the probability linearly from max_p to 1 between max_th and 2·max_th instead of dropping everything above max_th (Floyd, 'gentle' RED, 2000)."),
            p("ecn", T::Bool, D::Bool(false), None, None, "CE-mark ECN-capable packets instead of dropping them in the probabilistic region (RFC 3168 §5; Linux TC_RED_ECN)."),
            p("harddrop", T::Bool, D::Bool(true), None, None, "Drop even ECN-capable packets in the forced region (avg ≥ max_th, or ≥ 2·max_th with gentle), as RFC 3168 §7 and the RED paper intend. Linux's default (TC_RED_HARDDROP unset) is false: it marks there too."),
            p("adaptive", T::Bool, D::Bool(false), None, None, "Adaptive RED: every 0.5 s, max_p += min(0.01, max_p/4) if avg is above min_th + 0.6·(max_th − min_th), max_p ×= 0.9 if below min_th + 0.4·(max_th − min_th) (Floyd, Gummadi, Shenker 2001, Fig. 2; Linux TC_RED_ADAPTATIVE)."),
            QdiscParam { choices: &["packets", "bytes"], ..p("mode", T::Str, D::Str("packets"), None, None, "Queue measured in packets or bytes; in byte mode p_b is scaled by size/mtu_bytes (Floyd & Jacobson 1993 §4).") },
            bytes("avpkt_bytes", 1000, "Average packet size; its transmission time is s in the idle-time decay avg ← (1−wq)^(idle/s)·avg (paper Fig. 2; tc-red 'avpkt', typical 1000)."),
            bytes("mtu_bytes", 1514, "Maximum packet size for byte mode's scaling (Linux psched_mtu: MTU + Ethernet header)."),
        ],
    }
    }

    fn fields(&mut self, f: &mut Fields) -> Result<(), String> {
        f.float("min_th", &mut self.min_th)?;
        f.float("max_th", &mut self.max_th)?;
        f.float("max_p", &mut self.max_p)?;
        f.float("wq", &mut self.wq)?;
        f.flag("gentle", &mut self.gentle)?;
        f.flag("ecn", &mut self.ecn)?;
        f.flag("harddrop", &mut self.harddrop)?;
        f.flag("adaptive", &mut self.adaptive)?;
        f.choice("mode", &mut self.mode, &[("packets", RedMode::Packets), ("bytes", RedMode::Bytes)])?;
        f.int("avpkt_bytes", &mut self.avpkt_bytes)?;
        f.int("mtu_bytes", &mut self.mtu_bytes)
    }

    fn build(&self, env: Env) -> Red {
        Red::new(self.clone(), env.limit, env.rate_bps, env.rng)
    }
}

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
}

impl Red {
    pub fn new(cfg: RedConfig, limit: QueueLimit, rate_bps: u64, rng: Rng) -> Red {
        let s_ps = cfg.avpkt_bytes as f64 * 8.0 * PS_PER_S as f64 / rate_bps as f64;
        Red {
            max_p: cfg.max_p,
            cfg,
            limit,
            q: VecDeque::with_capacity(1024),
            avg: 0.0,
            count: -1,
            idle_since: Some(0),
            s_ps,
            next_adapt: ADAPT_INTERVAL,
            rng,
        }
    }

    /// The queue in `cfg.mode`'s unit, of `pkts` packets of `bytes` bytes.
    fn qlen(&self, pkts: usize, bytes: u64) -> f64 {
        match self.cfg.mode {
            RedMode::Packets => pkts as f64,
            RedMode::Bytes => bytes as f64,
        }
    }

    /// Updates `avg` for an arrival at `now` that finds `pkts` packets of
    /// `bytes` bytes queued (paper Fig. 2).
    pub fn update_avg(&mut self, now: Time, pkts: usize, bytes: u64) {
        match self.idle_since {
            Some(t0) if pkts == 0 => {
                // Idle decay: m = (now − q_time)/s, avg ← (1 − w_q)^m·avg.
                let m = (now - t0.min(now)) as f64 / self.s_ps;
                self.avg *= (1.0 - self.cfg.wq).powf(m);
                self.idle_since = None;
            }
            _ => self.avg += self.cfg.wq * (self.qlen(pkts, bytes) - self.avg),
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
}

impl Discipline for Red {
    #[inline]
    fn enqueue<P: PacketView>(&mut self, id: PacketId, cx: &mut Cx<'_, P>) -> Result<(), DropReason> {
        let len = cx.wire_len(id);
        if self.cfg.adaptive {
            while cx.now >= self.next_adapt {
                self.adapt();
                self.next_adapt += ADAPT_INTERVAL;
            }
        }
        self.update_avg(cx.now, cx.pkts(), cx.bytes());
        match self.decide(len) {
            Action::Admit => {}
            Action::Prob if self.cfg.ecn && cx.ect(id) => cx.mark(id),
            Action::Hard if !self.cfg.harddrop && self.cfg.ecn && cx.ect(id) => cx.mark(id),
            Action::Prob | Action::Hard => {
                // A drop at an empty queue leaves the link idle: the idle period starts again now, as
                // Linux's red_dequeue starts it when it finds nothing to send (net/sched/sch_red.c), so
                // that avg keeps decaying with time and cannot stay above max_th on a link nothing reaches.
                if cx.pkts() == 0 {
                    self.idle_since = Some(cx.now);
                }
                return Err(DropReason::Aqm);
            }
        }
        if !self.limit.fits(cx.pkts(), cx.bytes(), len) {
            return Err(DropReason::Overflow);
        }
        self.q.push_back(id);
        Ok(())
    }

    #[inline]
    fn dequeue<P: PacketView>(&mut self, cx: &mut Cx<'_, P>) -> Option<PacketId> {
        let id = self.q.pop_front()?;
        if self.q.is_empty() {
            self.idle_since = Some(cx.now);
        }
        Some(id)
    }

    fn state_names(&self) -> &'static [&'static str] {
        match self.cfg.mode {
            RedMode::Bytes => &["red_avg_bytes", "red_max_p"],
            RedMode::Packets => &["red_avg_pkts", "red_max_p"],
        }
    }

    fn state(&self) -> [f64; 2] {
        [self.avg, self.max_p]
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::Pkts;
    use super::super::Qdisc;
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
        r.idle_since = None;
        r.update_avg(0, 20, 30_000);
        close(r.avg, 0.04, 1e-12);
        for _ in 1..500 {
            r.update_avg(0, 20, 30_000);
        }
        close(r.avg, 12.65, 0.01);
        // 10 ms idle at 100 Mbit/s with avpkt 1500 B (s = 120 µs): m = 83.3,
        // avg·0.998^83.3 = 0.846·avg.
        r.cfg.avpkt_bytes = 1500;
        r.s_ps = 1500.0 * 8.0 * 1e12 / 1e8;
        let before = r.avg;
        r.idle_since = Some(1_000_000_000);
        r.update_avg(1_000_000_000 + 10_000_000_000, 0, 0);
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
        let mut q = Qdisc::around(r);
        let mut p = Pkts::new(4000, 1500, true);
        // Twelve packets queued while avg is below min_th.
        for id in 0..12 {
            q.discipline_mut().avg = 0.0;
            assert!(q.enqueue(id, 0, &mut p));
        }
        // avg 12 (between the thresholds): one in, one out, marked not dropped.
        let mut dropped = 0;
        for id in 100..1100 {
            q.discipline_mut().avg = 12.0;
            if q.enqueue(id, 0, &mut p) {
                q.dequeue(0, &mut p);
            } else {
                dropped += 1;
            }
        }
        assert_eq!(dropped, 0);
        assert!(q.marks() > 50, "{}", q.marks());
        assert_eq!(q.len(), 12);
        // Above max_th (not gentle): a forced drop, even of an ECT packet.
        q.discipline_mut().avg = 16.0;
        assert!(!q.enqueue(2000, 0, &mut p));
        assert_eq!(q.aqm_drops(), 1);
    }

    // An arrival dropped at an empty queue starts a new idle period (Linux's red_dequeue starts one
    // whenever it finds nothing to send), so avg decays with time, not per arrival: after avg = 40
    // (above 2·max_th: every arrival dropped) and arrivals 1 s apart on an empty 100 Mbit/s link
    // (s = 80 µs for avpkt 1000 B, m = 12 500 per second), the second arrival finds
    // avg = 40·0.998^12 500 ≈ 0 and is admitted. Without the restart it would find
    // 40·0.998 per arrival and the link would stay dead.
    #[test]
    fn a_drop_at_an_empty_queue_restarts_the_idle_period() {
        let mut q = Qdisc::around(red(true));
        let mut p = Pkts::new(10, 1500, false);
        q.discipline_mut().avg = 40.0;
        q.discipline_mut().idle_since = None;
        // First arrival: avg decays by one EWMA step only (no idle period was running), still above 2·max_th.
        assert!(!q.enqueue(0, 1_000_000_000_000, &mut p));
        close(q.discipline_mut().avg, 40.0 * 0.998, 1e-9);
        assert!(q.enqueue(1, 2_000_000_000_000, &mut p));
        assert!(q.discipline_mut().avg < 1e-6, "{}", q.discipline_mut().avg);
    }
}
