//! CoDel, RFC 8289 (K. Nichols, V. Jacobson, A. McGregor, J. Iyengar), as in
//! Linux `include/net/codel_impl.h` / `net/sched/sch_codel.c`.
//!
//! ```text
//!            sojourn ≥ target for a whole interval
//!   ┌─────────┐ ─────────────────────────────────► ┌──────────┐
//!   │ normal  │                                    │ dropping │ drop (or CE-mark) at
//!   └─────────┘ ◄───────────────────────────────── └──────────┘ drop_next += interval/√count
//!            sojourn < target or ≤ 1 MTU queued
//! ```
//! Drops happen at dequeue (head drop). Re-entry (codel_impl.h): if the
//! state is re-entered soon after leaving (now − drop_next < 16·interval)
//! and more than one drop happened last time, count restarts at
//! count − lastcount rather than 1. Linux approximates 1/√count with a
//! Newton step; this uses the exact square root.

use super::books::{Cx, DropReason};
use super::discipline::{Discipline, Env, QdiscKind};
use super::params::{bytes, ns, p, DefaultValue as D, Fields, ParamType as T, QdiscInfo};
use super::queue::{Fifo, QueueLimit};
use crate::event::{Time, PS_PER_NS};
use crate::packet::{PacketId, PacketView};

/// CoDel parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct CodelConfig {
    pub target_ns: u64,
    pub interval_ns: u64,
    pub ecn: bool,
    pub mtu_bytes: u64,
}

impl Default for CodelConfig {
    fn default() -> CodelConfig {
        CodelConfig { target_ns: 5_000_000, interval_ns: 100_000_000, ecn: false, mtu_bytes: 1514 }
    }
}

impl QdiscKind for CodelConfig {
    type Qdisc = Codel;
    const KIND: &'static str = "codel";

    fn info() -> QdiscInfo {
        QdiscInfo {
        name: Self::KIND,
        summary: "Controlled Delay: head-drop (or CE-mark) when the sojourn time stays above target for an interval, at intervals interval/√count.",
        source: "RFC 8289; Linux include/net/codel.h, include/net/codel_impl.h, net/sched/sch_codel.c",
        params: vec![
            ns("target_ns", 5_000_000, "Acceptable standing sojourn time (RFC 8289 §4.4: 5 ms; Linux codel_params_init)."),
            ns("interval_ns", 100_000_000, "Window over which the sojourn must stay above target, ≈ worst-case RTT (RFC 8289 §4.3: 100 ms)."),
            p("ecn", T::Bool, D::Bool(false), None, None, "CE-mark ECN-capable packets instead of dropping them (RFC 8289 §5.5; Linux sch_codel default off)."),
            bytes("mtu_bytes", 1514, "Never drop while at most this many bytes are queued (RFC 8289 MAXPACKET; Linux psched_mtu)."),
        ],
    }
    }

    fn fields(&mut self, f: &mut Fields) -> Result<(), String> {
        f.int("target_ns", &mut self.target_ns)?;
        f.int("interval_ns", &mut self.interval_ns)?;
        f.flag("ecn", &mut self.ecn)?;
        f.int("mtu_bytes", &mut self.mtu_bytes)
    }

    fn build(&self, env: Env) -> Codel {
        Codel::new(self, env.limit)
    }
}

/// CoDel's per-queue state (RFC 8289 §5; `struct codel_vars`).
#[derive(Clone, Copy, Debug, Default)]
pub struct CodelVars {
    pub count: u32,
    pub lastcount: u32,
    pub dropping: bool,
    /// Time the sojourn has been above target for an interval (0: not above), ps.
    pub first_above_time: Time,
    /// Next scheduled drop, ps.
    pub drop_next: Time,
}

/// Times in ps, derived from [`CodelConfig`].
#[derive(Clone, Copy, Debug)]
pub struct CodelParams {
    pub target: Time,
    pub interval: Time,
    /// Below this backlog (bytes) never drop (RFC 8289 MAXPACKET; Linux `mtu`).
    pub mtu: u64,
    pub ecn: bool,
}

impl CodelParams {
    pub fn from(c: &CodelConfig) -> CodelParams {
        CodelParams {
            target: c.target_ns * PS_PER_NS,
            interval: c.interval_ns * PS_PER_NS,
            mtu: c.mtu_bytes,
            ecn: c.ecn,
        }
    }
}

/// interval/√count after `t` (RFC 8289 §5.4 control law).
#[inline]
pub fn control_law(t: Time, interval: Time, count: u32) -> Time {
    t + (interval as f64 / (count as f64).sqrt()) as Time
}

/// RFC 8289 `dodequeue`: takes the head and says whether it may be dropped.
#[inline]
fn dodequeue<P: PacketView>(
    v: &mut CodelVars,
    p: &CodelParams,
    f: &mut Fifo,
    cx: &Cx<'_, P>,
) -> (Option<PacketId>, bool) {
    let Some((id, len)) = f.pop(|i| cx.wire_len(i)) else {
        v.first_above_time = 0;
        return (None, false);
    };
    // The whole discipline's backlog behind this packet (Linux reads
    // `sch->qstats.backlog` after taking it, also from fq_codel).
    let backlog = cx.bytes() - len as u64;
    let now = cx.now;
    let sojourn = now - cx.enqueued_at(id);
    let mut ok = false;
    if sojourn < p.target || backlog <= p.mtu {
        v.first_above_time = 0;
    } else if v.first_above_time == 0 {
        v.first_above_time = now + p.interval;
    } else if now >= v.first_above_time {
        ok = true;
    }
    (Some(id), ok)
}

/// RFC 8289 `dequeue` (codel_impl.h `codel_dequeue`) from the queue `f`.
/// Dropped packets go to [`Cx::drop`]; with ECN an ECT packet is CE-marked
/// and sent instead.
pub fn codel_dequeue<P: PacketView>(
    v: &mut CodelVars,
    p: &CodelParams,
    f: &mut Fifo,
    cx: &mut Cx<'_, P>,
) -> Option<PacketId> {
    let now = cx.now;
    let (mut id, mut ok) = dodequeue(v, p, f, cx);
    let Some(mut cur) = id else {
        v.dropping = false;
        return None;
    };
    if v.dropping {
        if !ok {
            // Sojourn fell below target: leave the dropping state.
            v.dropping = false;
        } else if now >= v.drop_next {
            while v.dropping && now >= v.drop_next {
                v.count += 1;
                if p.ecn && cx.ect(cur) {
                    cx.mark(cur);
                    v.drop_next = control_law(v.drop_next, p.interval, v.count);
                    return Some(cur);
                }
                cx.drop(cur, DropReason::Aqm);
                (id, ok) = dodequeue(v, p, f, cx);
                match id {
                    Some(n) if ok => {
                        cur = n;
                        v.drop_next = control_law(v.drop_next, p.interval, v.count);
                    }
                    Some(n) => {
                        cur = n;
                        v.dropping = false;
                    }
                    None => {
                        v.dropping = false;
                        return None;
                    }
                }
            }
        }
    } else if ok {
        // Enter the dropping state (codel_impl.h).
        if p.ecn && cx.ect(cur) {
            cx.mark(cur);
        } else {
            cx.drop(cur, DropReason::Aqm);
            (id, _) = dodequeue(v, p, f, cx);
            match id {
                Some(n) => cur = n,
                None => {
                    // Linux still enters the dropping state here.
                    enter(v, p, now);
                    return None;
                }
            }
        }
        enter(v, p, now);
    }
    Some(cur)
}

/// Sets count on entry: re-entry rule of codel_impl.h.
fn enter(v: &mut CodelVars, p: &CodelParams, now: Time) {
    v.dropping = true;
    let delta = v.count.wrapping_sub(v.lastcount);
    // codel_time_before(now − drop_next, 16·interval) is a signed comparison.
    let since = now as i128 - v.drop_next as i128;
    v.count = if delta > 1 && delta < u32::MAX / 2 && since < 16 * p.interval as i128 { delta } else { 1 };
    v.lastcount = v.count;
    v.drop_next = control_law(now, p.interval, v.count);
}

/// Single-queue CoDel with a tail-drop limit (Linux `sch_codel`).
#[derive(Debug)]
pub struct Codel {
    pub params: CodelParams,
    pub vars: CodelVars,
    limit: QueueLimit,
    fifo: Fifo,
}

impl Codel {
    pub fn new(cfg: &CodelConfig, limit: QueueLimit) -> Codel {
        Codel { params: CodelParams::from(cfg), vars: CodelVars::default(), limit, fifo: Fifo::with_capacity(1024) }
    }
}

impl Discipline for Codel {
    #[inline]
    fn enqueue<P: PacketView>(&mut self, id: PacketId, cx: &mut Cx<'_, P>) -> Result<(), DropReason> {
        let len = cx.wire_len(id);
        if !self.limit.fits(cx.pkts(), cx.bytes(), len) {
            return Err(DropReason::Overflow);
        }
        self.fifo.push(id, len);
        Ok(())
    }

    #[inline]
    fn dequeue<P: PacketView>(&mut self, cx: &mut Cx<'_, P>) -> Option<PacketId> {
        codel_dequeue(&mut self.vars, &self.params, &mut self.fifo, cx)
    }

    fn state_names(&self) -> &'static [&'static str] {
        &["codel_dropping", "codel_count"]
    }

    fn state(&self) -> [f64; 2] {
        [self.vars.dropping as u8 as f64, self.vars.count as f64]
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::Pkts;
    use super::super::Qdisc;
    use super::*;

    const MS: Time = 1_000_000_000;

    #[test]
    fn control_law_gaps() {
        // RFC 8289 §5.4: drops at interval/√count after the previous one.
        // Relative to the first drop: 100, 170.7, 228.4, 278.4, 323.2, 364.0, 401.8 ms.
        let mut t = 0;
        let mut times = Vec::new();
        for n in 1..=7 {
            t = control_law(t, 100 * MS, n);
            times.push(t as f64 / MS as f64);
        }
        let want = [100.0, 170.7, 228.4, 278.4, 323.2, 364.0, 401.8];
        for (g, w) in times.iter().zip(want) {
            assert!((g - w).abs() < 0.05, "{times:?}");
        }
    }

    #[test]
    fn reentry_restarts_at_delta() {
        let p = CodelParams { target: 5 * MS, interval: 100 * MS, mtu: 1514, ecn: false };
        // Left the dropping state with count 8, lastcount 1; re-enter 50 ms
        // after drop_next: count = 7, next drop 100/√7 = 37.8 ms later.
        let mut v = CodelVars { count: 8, lastcount: 1, dropping: false, first_above_time: 0, drop_next: 1000 * MS };
        enter(&mut v, &p, 1050 * MS);
        assert_eq!(v.count, 7);
        assert_eq!(v.lastcount, 7);
        assert_eq!(v.drop_next - 1050 * MS, 37_796_447_300);
        // Beyond 16 intervals: back to 1.
        let mut v = CodelVars { count: 8, lastcount: 1, dropping: false, first_above_time: 0, drop_next: 1000 * MS };
        enter(&mut v, &p, 1000 * MS + 1600 * MS);
        assert_eq!(v.count, 1);
        // delta of 1: back to 1.
        let mut v = CodelVars { count: 2, lastcount: 1, dropping: false, first_above_time: 0, drop_next: 1000 * MS };
        enter(&mut v, &p, 1010 * MS);
        assert_eq!(v.count, 1);
    }

    /// A standing queue of 10 ms sojourn from t = 0: the first drop comes at
    /// the first dequeue at or after 100 ms, then at 100/√n gaps.
    #[test]
    fn standing_queue_drop_schedule() {
        let cfg = CodelConfig::default();
        let mut c = Qdisc::around(Codel::new(&cfg, QueueLimit::Packets(100_000)));
        let mut pk = Pkts::new(100_000, 1500, false);
        let mut next_id = 0u32;
        let mut drops_at = Vec::new();
        // Every 1 ms one packet leaves and one arrives; each waited 10 ms.
        for ms in 0..500u64 {
            let now = ms * MS;
            pk.enq[next_id as usize] = now;
            c.enqueue(next_id, now, &mut pk);
            next_id += 1;
            // Keep 11 packets queued so the head always waited 10 ms.
            if ms < 10 {
                continue;
            }
            c.dequeue(now, &mut pk);
            // Refill what was dropped so the sojourn stays 10 ms.
            while c.pop_dropped().is_some() {
                drops_at.push(ms);
                pk.enq[next_id as usize] = now;
                c.enqueue(next_id, now, &mut pk);
                next_id += 1;
            }
        }
        // first_above_time set at the first dequeue (10 ms) → first drop at 110 ms.
        assert_eq!(drops_at[..5], [110, 210, 281, 339, 389], "{drops_at:?}");
    }

    #[test]
    fn ecn_marks_instead_of_dropping() {
        let cfg = CodelConfig { ecn: true, ..CodelConfig::default() };
        let mut c = Qdisc::around(Codel::new(&cfg, QueueLimit::Packets(100_000)));
        let mut pk = Pkts::new(100_000, 1500, true);
        for ms in 0..500u64 {
            let now = ms * MS;
            pk.enq[ms as usize] = now;
            c.enqueue(ms as u32, now, &mut pk);
            if ms >= 10 {
                c.dequeue(now, &mut pk);
            }
        }
        assert_eq!(c.pop_dropped(), None);
        assert_eq!(c.marks(), 7);
        assert_eq!(pk.marked(), 7);
    }
}
