//! A link's capacity over time: a schedule of rates (rate 0 is an outage
//! that buffers), or a trace of delivery opportunities in Mahimahi's format.
//!
//! A schedule serves a packet as a fluid: it finishes when the integral of
//! the rate since its start equals its size, so a change of rate or an
//! outage acts on the bits not yet sent (real PHYs, and Mahimahi, behave so;
//! ns-3's point-to-point device instead fixes the time at the start).
//!
//! A trace (Netravali et al., "Mahimahi: Accurate Record-and-Replay for
//! HTTP", USENIX ATC 2015; the format of its `mm-link`) is one line per
//! delivery opportunity, a time in milliseconds; each opportunity can
//! deliver one MTU of bytes. Bytes, not packets: small packets share an
//! opportunity and a large one may straddle two (it leaves at the later);
//! the unused bytes of an opportunity are lost when the queue is empty; after
//! the last line the trace starts again, shifted by its last time. Two
//! modes: `Mahimahi` as mm-link counts (1504 bytes per opportunity, 4 more
//! per packet for the TUN header, arrival times truncated to the millisecond
//! and an opportunity serving only packets that arrived in an earlier
//! millisecond) and `Ideal` (1500 IP bytes, exact times, an opportunity at t
//! serving packets that arrived by t).

use crate::event::{Time, PS_PER_MS, PS_PER_S};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a link's capacity changes over time.
#[derive(Clone, Debug, PartialEq)]
pub enum CapacityConfig {
    /// `(from_ns, rate_bps)`, sorted, the first from 0; rate 0 is an outage
    /// during which packets wait in the queue.
    Schedule(Vec<(u64, u64)>),
    /// Delivery opportunities.
    Trace(TraceConfig),
}

/// Mahimahi's byte accounting, or the same idealised to IP bytes and exact times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TraceMode {
    Mahimahi,
    Ideal,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    /// Times of the opportunities, ms, non-decreasing; the last one is the period.
    pub opportunities_ms: Vec<u64>,
    /// Deliver nothing after the last line instead of starting again (mm-link `--once`).
    #[serde(default, deserialize_with = "crate::config_form::null_default")]
    pub once: bool,
    pub mode: TraceMode,
}

impl CapacityConfig {
    pub fn check(&self) -> Result<(), String> {
        match self {
            CapacityConfig::Schedule(s) => {
                if s.is_empty() || s[0].0 != 0 {
                    return Err("schedule: expected its first change at 0s".into());
                }
                if s.windows(2).any(|w| w[1].0 <= w[0].0) {
                    return Err("schedule: expected increasing times".into());
                }
                if s.iter().all(|&(_, r)| r == 0) {
                    return Err("schedule: expected a rate above 0 somewhere".into());
                }
                Ok(())
            }
            CapacityConfig::Trace(t) => {
                let o = &t.opportunities_ms;
                if o.is_empty() {
                    return Err("trace: expected at least one opportunity".into());
                }
                if o.windows(2).any(|w| w[1] < w[0]) {
                    return Err("trace: expected non-decreasing times".into());
                }
                if *o.last().unwrap() == 0 {
                    return Err("trace: expected a last time above 0 ms (it is the period)".into());
                }
                Ok(())
            }
        }
    }
}

/// Run-time capacity of one port.
#[derive(Debug)]
pub enum Capacity {
    Schedule(Schedule),
    Trace(Trace),
}

impl Capacity {
    pub fn new(c: &CapacityConfig) -> Capacity {
        match c {
            CapacityConfig::Schedule(s) => Capacity::Schedule(Schedule::new(s)),
            CapacityConfig::Trace(t) => Capacity::Trace(Trace::new(t)),
        }
    }

    #[inline]
    pub fn finish(&mut self, start: Time, arrived: Time, wire: u32) -> Time {
        match self {
            Capacity::Schedule(s) => s.finish(start, wire),
            Capacity::Trace(t) => t.finish(start, arrived, wire),
        }
    }

    pub fn bits_between(&self, from: Time, to: Time) -> f64 {
        match self {
            Capacity::Schedule(s) => s.bits_between(from, to),
            Capacity::Trace(t) => t.bits_between(from, to),
        }
    }
}

/// A piecewise-constant rate.
#[derive(Debug)]
pub struct Schedule {
    /// `(from, rate_bps)`, from in ps.
    steps: Vec<(Time, u64)>,
    /// The step in force at the last start (starts never go back in time).
    cursor: usize,
}

impl Schedule {
    pub fn new(s: &[(u64, u64)]) -> Schedule {
        Schedule { steps: s.iter().map(|&(t, r)| (t * crate::event::PS_PER_NS, r)).collect(), cursor: 0 }
    }

    /// When `wire` bytes starting at `start` are through (`Time::MAX`: never,
    /// the link staying dark).
    pub fn finish(&mut self, start: Time, wire: u32) -> Time {
        while self.cursor + 1 < self.steps.len() && self.steps[self.cursor + 1].0 <= start {
            self.cursor += 1;
        }
        // Work in bit·ps: rate (bit/s) × time (ps) = bits × 10^12.
        let mut left = wire as u128 * 8 * PS_PER_S as u128;
        let mut t = start;
        let mut k = self.cursor;
        loop {
            let rate = self.steps[k].1 as u128;
            let end = self.steps.get(k + 1).map_or(Time::MAX, |s| s.0);
            if rate > 0 {
                let can = rate * (end - t) as u128;
                if can >= left {
                    return t + left.div_ceil(rate) as Time;
                }
                left -= can;
            }
            if end == Time::MAX {
                return Time::MAX;
            }
            t = end;
            k += 1;
        }
    }

    /// Capacity in `[from, to]`, bits (the integral of the rate).
    fn bits_between(&self, from: Time, to: Time) -> f64 {
        let mut bits = 0.0;
        for (k, &(t0, rate)) in self.steps.iter().enumerate() {
            let t1 = self.steps.get(k + 1).map_or(Time::MAX, |s| s.0);
            let (a, b) = (t0.max(from), t1.min(to));
            if b > a {
                bits += rate as f64 * (b - a) as f64 / PS_PER_S as f64;
            }
        }
        bits
    }
}

/// A trace of delivery opportunities being spent.
#[derive(Debug)]
pub struct Trace {
    /// Opportunity times within one pass, ps.
    at: Vec<Time>,
    period: Time,
    once: bool,
    /// Bytes one opportunity can deliver, and bytes a packet costs beyond its own.
    budget: u32,
    extra: u32,
    /// Arrival times count in whole milliseconds, and an opportunity serves
    /// only packets of an earlier millisecond (Mahimahi).
    whole_ms: bool,
    /// The opportunity being spent: pass `base`, index `idx`; `left` bytes remain.
    base: Time,
    idx: usize,
    left: u32,
    /// No opportunity taken yet.
    fresh: bool,
}

impl Trace {
    pub fn new(c: &TraceConfig) -> Trace {
        let (budget, extra, whole_ms) = match c.mode {
            TraceMode::Mahimahi => (1504, 4, true),
            TraceMode::Ideal => (1500, 0, false),
        };
        Trace {
            at: c.opportunities_ms.iter().map(|&m| m * PS_PER_MS).collect(),
            period: c.opportunities_ms.last().copied().unwrap_or(1) * PS_PER_MS,
            once: c.once,
            budget,
            extra,
            whole_ms,
            base: 0,
            idx: 0,
            left: 0,
            fresh: true,
        }
    }

    /// Time of the current opportunity.
    fn now_opp(&self) -> Time {
        self.base + self.at[self.idx]
    }

    /// Moves to the next opportunity; false when a `once` trace has none left.
    fn advance(&mut self) -> bool {
        self.idx += 1;
        if self.idx == self.at.len() {
            if self.once {
                self.idx -= 1;
                return false;
            }
            self.idx = 0;
            self.base += self.period;
        }
        self.left = self.budget;
        true
    }

    /// Moves to the first opportunity at or after `t` (the current one's
    /// leftover bytes are lost); false when a `once` trace has none left.
    fn seek(&mut self, t: Time) -> bool {
        if !self.fresh && self.now_opp() >= t {
            return self.advance();
        }
        // Skip the passes wholly before t (pass p's times lie in [p·P, (p+1)·P]).
        if !self.once && t > self.base + self.period {
            self.base += (t - self.base - 1) / self.period * self.period;
        }
        let i = self.at.partition_point(|&a| self.base + a < t);
        if i == self.at.len() {
            if self.once {
                return false;
            }
            self.base += self.period;
            self.idx = 0;
        } else {
            self.idx = i;
        }
        self.fresh = false;
        self.left = self.budget;
        true
    }

    /// When a packet of `wire` bytes that arrived at `arrived`, whose
    /// service starts at `start`, has been delivered: the time of the
    /// opportunity that carries its last byte.
    pub fn finish(&mut self, start: Time, arrived: Time, wire: u32) -> Time {
        // The earliest opportunity this packet may use.
        let earliest = if self.whole_ms { (arrived / PS_PER_MS + 1) * PS_PER_MS } else { arrived };
        let usable = !self.fresh && self.left > 0 && self.now_opp() >= earliest.max(start);
        if !usable && !self.seek(earliest.max(start)) {
            return Time::MAX;
        }
        let mut need = wire + self.extra;
        loop {
            let take = need.min(self.left);
            need -= take;
            self.left -= take;
            if need == 0 {
                return self.now_opp();
            }
            if !self.advance() {
                return Time::MAX;
            }
        }
    }

    /// Capacity in `(from, to]`, bits: the opportunities' IP bytes (one MTU
    /// each); a packet leaving at an opportunity at `to` counts in it.
    fn bits_between(&self, from: Time, to: Time) -> f64 {
        let n = self.count_upto(to).saturating_sub(self.count_upto(from));
        n as f64 * 1500.0 * 8.0
    }

    /// Opportunities at times up to `t`. Pass p's lie in [p·P, (p+1)·P] (P
    /// the period, the last line), so passes 0..m, m = t / P, lie wholly
    /// before, and pass m counts its offsets up to t − m·P.
    fn count_upto(&self, t: Time) -> u64 {
        let upto = |x: Time| self.at.partition_point(|&a| a <= x) as u64;
        if self.once {
            return upto(t);
        }
        let m = t / self.period;
        m * self.at.len() as u64 + upto(t - m * self.period)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::PS_PER_US;

    fn ms(x: f64) -> Time {
        (x * PS_PER_MS as f64).round() as Time
    }

    fn trace(lines: &[u64], mode: TraceMode) -> Trace {
        Trace::new(&TraceConfig { opportunities_ms: lines.to_vec(), once: false, mode })
    }

    /// The fluid rule, worked by hand: a 1500-byte packet starting at
    /// 0.9995 s, 10 Mbit/s until 1 s then 5 Mbit/s, ends at 1.0014 s.
    #[test]
    fn fluid_schedule_finishes_on_the_remaining_bits() {
        let mut s = Schedule::new(&[(0, 10_000_000), (1_000_000_000, 5_000_000)]);
        assert_eq!(s.finish(ms(999.5), 1500), ms(1001.4));
    }

    /// The fluid rule, by hand: an outage 1.000-1.050 s holds the rest of the packet.
    #[test]
    fn an_outage_pauses_the_packet_in_service() {
        let mut s = Schedule::new(&[(0, 10_000_000), (1_000_000_000, 0), (1_050_000_000, 10_000_000)]);
        assert_eq!(s.finish(ms(999.5), 1500), ms(1050.7));
    }

    #[test]
    fn a_constant_schedule_is_the_plain_serialiser() {
        let mut s = Schedule::new(&[(0, 100_000_000)]);
        assert_eq!(s.finish(7, 1500), 7 + crate::event::tx_time(1500, 100_000_000));
        let mut dark = Schedule::new(&[(0, 10_000_000), (1_000_000, 0)]);
        assert_eq!(dark.finish(ms(0.999), 1500), Time::MAX);
    }

    /// By hand: 100 Mbit/s for 30 s then 20 Mbit/s: 3.6e9 bits in 60 s.
    #[test]
    fn schedule_integral() {
        let s = Schedule::new(&[(0, 100_000_000), (30_000_000_000, 20_000_000)]);
        assert_eq!(s.bits_between(0, 60 * PS_PER_S), 3.6e9);
    }

    /// Mahimahi's byte accounting (ravinet/mahimahi link_queue.cc), worked by
    /// hand: trace `1`, four packets at t = 0: A (1500 B) at ms 1, B (1000 B)
    /// and C (52 B) at ms 2, D (1500 B) straddles into ms 3.
    #[test]
    fn opportunities_are_spent_in_bytes() {
        let mut t = trace(&[1], TraceMode::Mahimahi);
        assert_eq!(t.finish(0, 0, 1500), ms(1.0));
        assert_eq!(t.finish(ms(1.0), 0, 1000), ms(2.0));
        assert_eq!(t.finish(ms(2.0), 0, 52), ms(2.0));
        assert_eq!(t.finish(ms(2.0), 0, 1500), ms(3.0));
        assert_eq!(t.left, 1504 - 1060);
    }

    /// Mahimahi (link_queue.cc), by hand: an opportunity per 100 ms carries 26
    /// ACKs of 52 bytes (56 with the TUN header); the 27th straddles and leaves
    /// 100 ms later.
    #[test]
    fn one_opportunity_carries_26_acks() {
        let mut t = trace(&[100], TraceMode::Mahimahi);
        let mut done = vec![];
        let mut now = 0;
        for _ in 0..27 {
            now = t.finish(now, 0, 52);
            done.push(now);
        }
        assert!(done[..26].iter().all(|&d| d == ms(100.0)));
        assert_eq!(done[26], ms(200.0));
    }

    /// Mahimahi's loop rule, by hand: trace `0, 0, 5` loops with period 5:
    /// 0, 0, 5 | 5, 5, 10 | …
    #[test]
    fn the_trace_loops_on_its_last_time() {
        let mut t = trace(&[0, 0, 5], TraceMode::Ideal);
        let mut now = 0;
        let mut got = vec![];
        for _ in 0..7 {
            now = t.finish(now, 0, 1500);
            got.push(now / PS_PER_MS);
        }
        assert_eq!(got, vec![0, 0, 5, 5, 5, 10, 10]);
    }

    /// Mahimahi (link_queue.cc), by hand: on an idle trace `1` link a packet
    /// arriving at 5.3 ms leaves at ms 6; unused bytes of earlier
    /// opportunities are lost.
    #[test]
    fn strictly_later_and_no_credit() {
        let mut t = trace(&[1], TraceMode::Mahimahi);
        assert_eq!(t.finish(ms(5.3), ms(5.3), 100), ms(6.0));
        // 1404 bytes left at ms 6, but the next packet arrives at 7.2 ms.
        assert_eq!(t.finish(ms(7.2), ms(7.2), 1500), ms(8.0));
        // Ideal mode: an opportunity at t serves a packet that arrived at t.
        let mut i = trace(&[1], TraceMode::Ideal);
        assert_eq!(i.finish(ms(5.0), ms(5.0), 1500), ms(5.0));
        assert_eq!(i.finish(ms(5.0) + PS_PER_US, ms(5.0) + PS_PER_US, 1500), ms(6.0));
    }

    /// By hand: k lines per ms carry k·1500 bytes per ms; a square wave's
    /// delivered bytes equal its integral.
    #[test]
    fn backlogged_delivery_matches_the_trace_integral() {
        let mut t = trace(&[1, 1, 1], TraceMode::Ideal);
        let mut now = 0;
        let mut n = 0;
        while now <= PS_PER_S {
            now = t.finish(now, 0, 1500);
            n += (now <= PS_PER_S) as u64;
        }
        assert_eq!(n * 1500 * 8, 36_000_000);
        assert_eq!(t.bits_between(0, PS_PER_S), 36_000_000.0);
        let square: Vec<u64> = (51..=100).flat_map(|m| [m, m]).collect();
        let mut t = trace(&square, TraceMode::Ideal);
        let (mut now, mut bytes) = (0, 0u64);
        loop {
            now = t.finish(now, 0, 1500);
            if now > PS_PER_S {
                break;
            }
            bytes += 1500;
        }
        assert_eq!(bytes, 1_500_000);
        assert_eq!(t.bits_between(0, PS_PER_S), 1_500_000.0 * 8.0);
    }

    #[test]
    fn a_once_trace_ends() {
        let mut t = Trace::new(&TraceConfig { opportunities_ms: vec![1, 2], once: true, mode: TraceMode::Ideal });
        assert_eq!(t.finish(0, 0, 1500), ms(1.0));
        assert_eq!(t.finish(ms(1.0), 0, 1500), ms(2.0));
        assert_eq!(t.finish(ms(2.0), 0, 1500), Time::MAX);
    }
}
