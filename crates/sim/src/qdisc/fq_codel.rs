//! FQ-CoDel, RFC 8290 (T. Høiland-Jørgensen et al.), as in Linux
//! `net/sched/sch_fq_codel.c`.
//!
//! Packets are hashed into `flows` sub-queues, each with its own CoDel
//! state; a deficit round robin with `quantum` bytes serves them from two
//! lists:
//! ```text
//!  arrival to an inactive queue ──► new_flows (deficit = quantum)
//!  new_flows head: deficit ≤ 0 ──► deficit += quantum, tail of old_flows
//!                  empty       ──► tail of old_flows (if old_flows non-empty) else inactive
//!  old_flows head: deficit ≤ 0 ──► deficit += quantum, tail of old_flows
//!                  empty       ──► inactive
//! ```
//! New (sparse) queues are served before old ones. When the total exceeds
//! the limit, packets are dropped from the head of the queue with the
//! largest byte backlog, up to `drop_batch` packets or half its backlog
//! (Linux `fq_codel_drop`).
//!
//! Sub-queues are `VecDeque<PacketId>`s that keep their capacity, so after
//! warm-up nothing is allocated per packet. The flow lists are
//! `VecDeque<u32>`s preallocated to `flows` entries.

use super::books::{Cx, DropReason};
use super::codel::{codel_dequeue, CodelConfig, CodelParams, CodelVars};
use super::discipline::{Discipline, Env, QdiscKind};
use super::params::{bytes, ns, p, DefaultValue as D, Fields, ParamType as T, QdiscInfo};
use super::queue::{Fifo, QueueLimit};
use crate::packet::{PacketId, PacketView};
use std::collections::VecDeque;

/// FQ-CoDel parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct FqCodelConfig {
    pub flows: u32,
    pub quantum: u32,
    pub target_ns: u64,
    pub interval_ns: u64,
    pub ecn: bool,
    pub drop_batch: u32,
    pub mtu_bytes: u64,
}

impl Default for FqCodelConfig {
    fn default() -> FqCodelConfig {
        FqCodelConfig {
            flows: 1024,
            quantum: 1514,
            target_ns: 5_000_000,
            interval_ns: 100_000_000,
            ecn: true,
            drop_batch: 64,
            mtu_bytes: 1514,
        }
    }
}

impl FqCodelConfig {
    pub fn codel(&self) -> CodelConfig {
        CodelConfig {
            target_ns: self.target_ns,
            interval_ns: self.interval_ns,
            ecn: self.ecn,
            mtu_bytes: self.mtu_bytes,
        }
    }
}

impl QdiscKind for FqCodelConfig {
    type Qdisc = FqCodel;
    const KIND: &'static str = "fq_codel";

    fn info() -> QdiscInfo {
        QdiscInfo {
        name: Self::KIND,
        summary: "Flow-queue CoDel: hashed per-flow queues, each with CoDel, served by deficit round robin with priority to new flows; overflow drops from the fattest queue.",
        source: "RFC 8290; Linux net/sched/sch_fq_codel.c",
        params: vec![
            p("flows", T::Int, D::Int(1024), Some(1.0), Some(65536.0), "Number of sub-queues (RFC 8290 §5.1; Linux fq_codel_init: 1024)."),
            p("quantum", T::Int, D::Int(1514), Some(1.0), Some(1e6), "DRR quantum, bytes (RFC 8290 §5.1; Linux psched_mtu: MTU + Ethernet header = 1514)."),
            ns("target_ns", 5_000_000, "CoDel target per sub-queue (RFC 8290 §5.2: 5 ms)."),
            ns("interval_ns", 100_000_000, "CoDel interval per sub-queue (RFC 8290 §5.2: 100 ms)."),
            p("ecn", T::Bool, D::Bool(true), None, None, "CE-mark ECN-capable packets instead of dropping (RFC 8290 §5.2; Linux fq_codel default on)."),
            p("drop_batch", T::Int, D::Int(64), Some(1.0), Some(1e6), "Most packets dropped from the fattest queue per overflow (Linux fq_codel drop_batch_size: 64)."),
            bytes("mtu_bytes", 1514, "CoDel's MAXPACKET (Linux psched_mtu)."),
        ],
    }
    }

    fn fields(&mut self, f: &mut Fields) -> Result<(), String> {
        f.int32("flows", &mut self.flows)?;
        f.int32("quantum", &mut self.quantum)?;
        f.int("target_ns", &mut self.target_ns)?;
        f.int("interval_ns", &mut self.interval_ns)?;
        f.flag("ecn", &mut self.ecn)?;
        f.int32("drop_batch", &mut self.drop_batch)?;
        f.int("mtu_bytes", &mut self.mtu_bytes)
    }

    fn build(&self, env: Env) -> FqCodel {
        FqCodel::new(self.clone(), env.limit, env.seed)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

#[derive(Debug)]
struct Flow {
    fifo: Fifo,
    vars: CodelVars,
    deficit: i64,
    list: List,
}

#[derive(Debug)]
pub struct FqCodel {
    pub cfg: FqCodelConfig,
    params: CodelParams,
    limit: QueueLimit,
    flows: Vec<Flow>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    /// Perturbation of the flow hash (Linux draws it at init).
    perturb: u64,
}

/// SplitMix64 finaliser: a deterministic, well-mixed hash of the flow key.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl FqCodel {
    pub fn new(cfg: FqCodelConfig, limit: QueueLimit, seed: u64) -> FqCodel {
        let n = cfg.flows as usize;
        let flows = (0..n)
            .map(|_| Flow { fifo: Fifo::with_capacity(16), vars: CodelVars::default(), deficit: 0, list: List::None })
            .collect();
        FqCodel {
            params: CodelParams::from(&cfg.codel()),
            limit,
            flows,
            new_flows: VecDeque::with_capacity(n),
            old_flows: VecDeque::with_capacity(n),
            perturb: mix(seed ^ 0x0066_7163_6f64_656c),
            cfg,
        }
    }

    /// Sub-queue of a flow key (Linux `fq_codel_hash`: `reciprocal_scale`
    /// of a perturbed hash).
    #[inline]
    pub fn classify(&self, key: u64) -> u32 {
        let h = mix(key ^ self.perturb) as u32;
        ((h as u64 * self.flows.len() as u64) >> 32) as u32
    }

    /// Linux `fq_codel_drop`: head-drop from the queue with the largest
    /// byte backlog until `drop_batch` packets or half its backlog are gone.
    fn drop_fattest<P: PacketView>(&mut self, cx: &mut Cx<'_, P>) -> u32 {
        let mut idx = 0;
        let mut max = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.fifo.bytes > max {
                max = f.fifo.bytes;
                idx = i;
            }
        }
        let threshold = max / 2;
        let f = &mut self.flows[idx];
        let mut len = 0;
        let mut i = 0;
        while let Some((id, l)) = f.fifo.pop(|id| cx.wire_len(id)) {
            len += l as u64;
            cx.drop(id, DropReason::Overflow);
            i += 1;
            if i >= self.cfg.drop_batch || len >= threshold {
                break;
            }
        }
        idx as u32
    }

    /// Sub-queues holding packets.
    pub fn active_flows(&self) -> usize {
        self.flows.iter().filter(|f| !f.fifo.q.is_empty()).count()
    }

    /// Sub-queues on the new and old lists.
    pub fn listed_flows(&self) -> (usize, usize) {
        (self.new_flows.len(), self.old_flows.len())
    }
}

impl Discipline for FqCodel {
    #[inline]
    fn enqueue<P: PacketView>(&mut self, id: PacketId, cx: &mut Cx<'_, P>) -> Result<(), DropReason> {
        let len = cx.wire_len(id);
        let idx = self.classify(cx.flow_key(id));
        let f = &mut self.flows[idx as usize];
        f.fifo.push(id, len);
        if f.list == List::None {
            f.list = List::New;
            f.deficit = self.cfg.quantum as i64;
            self.new_flows.push_back(idx);
        }
        // The totals with this packet.
        let within = match self.limit {
            QueueLimit::Packets(n) => (cx.pkts() as u64) < n,
            QueueLimit::Bytes(b) => cx.bytes() + len as u64 <= b,
        };
        if !within {
            // Over the limit: batch drop from the fattest queue. The arriving
            // packet stays queued unless it is itself among those dropped.
            self.drop_fattest(cx);
        }
        Ok(())
    }

    #[inline]
    fn dequeue<P: PacketView>(&mut self, cx: &mut Cx<'_, P>) -> Option<PacketId> {
        loop {
            let (from_new, idx) = match self.new_flows.front() {
                Some(&i) => (true, i),
                None => (false, *self.old_flows.front()?),
            };
            let f = &mut self.flows[idx as usize];
            if f.deficit <= 0 {
                f.deficit += self.cfg.quantum as i64;
                f.list = List::Old;
                if from_new {
                    self.new_flows.pop_front()
                } else {
                    self.old_flows.pop_front()
                };
                self.old_flows.push_back(idx);
                continue;
            }
            match codel_dequeue(&mut f.vars, &self.params, &mut f.fifo, cx) {
                Some(id) => {
                    f.deficit -= cx.wire_len(id) as i64;
                    return Some(id);
                }
                None => {
                    if from_new {
                        self.new_flows.pop_front();
                    } else {
                        self.old_flows.pop_front();
                    }
                    // Force a pass through old_flows to prevent starvation.
                    if from_new && !self.old_flows.is_empty() {
                        f.list = List::Old;
                        self.old_flows.push_back(idx);
                    } else {
                        f.list = List::None;
                    }
                }
            }
        }
    }

    fn state_names(&self) -> &'static [&'static str] {
        &["fq_active_flows", "fq_new_flows"]
    }

    fn state(&self) -> [f64; 2] {
        [self.active_flows() as f64, self.listed_flows().0 as f64]
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::Pkts;
    use super::super::Qdisc;
    use super::*;

    fn fq() -> Qdisc<FqCodel> {
        Qdisc::around(FqCodel::new(FqCodelConfig::default(), QueueLimit::Packets(10_240), 7))
    }

    // RFC 8290 §4 with quantum 1514: A sends 1514-byte packets, B 64-byte
    // packets; per round A sends 1, B sends while its deficit is positive:
    // 1514 → −22 (24 packets), 1492 → −44 (24), 1470 → −2 (23).
    #[test]
    fn drr_is_byte_fair() {
        let mut q = fq();
        let mut pk = Pkts::new(10_000, 1514, false);
        assert_ne!(q.discipline().classify(1), q.discipline().classify(2));
        for i in 0..100u32 {
            pk.key[i as usize] = 1;
            q.enqueue(i, 0, &mut pk);
        }
        for i in 100..3000u32 {
            pk.key[i as usize] = 2;
            pk.len[i as usize] = 64;
            q.enqueue(i, 0, &mut pk);
        }
        let mut order = Vec::new();
        for _ in 0..100 {
            let id = q.dequeue(0, &mut pk).unwrap();
            order.push(if id < 100 { 'A' } else { 'B' });
        }
        let s: String = order.into_iter().collect();
        // A first (its queue was new first), then B's 24, then A, then 24 B...
        let want = format!("A{}A{}A{}A", "B".repeat(24), "B".repeat(24), "B".repeat(23));
        assert_eq!(&s[..want.len()], want);
    }

    // A new queue is served before old ones; an emptied new queue moves to
    // old_flows when old_flows is non-empty.
    #[test]
    fn new_flows_go_first_and_move_to_old() {
        let mut q = fq();
        let mut pk = Pkts::new(1000, 1514, false);
        for i in 0..10u32 {
            pk.key[i as usize] = 1;
            q.enqueue(i, 0, &mut pk);
        }
        // Serve A until its deficit is spent: it moves to old_flows.
        assert_eq!(q.dequeue(0, &mut pk), Some(0));
        assert_eq!(q.dequeue(0, &mut pk), Some(1));
        assert_eq!(q.discipline().listed_flows(), (0, 1));
        // A sparse packet of flow B arrives: it goes ahead of A.
        pk.key[500] = 2;
        pk.len[500] = 100;
        q.enqueue(500, 0, &mut pk);
        assert_eq!(q.discipline().listed_flows(), (1, 1));
        assert_eq!(q.dequeue(0, &mut pk), Some(500));
        // B is empty: its next visit moves it to old_flows behind A; A's
        // turn refills its deficit and sends it behind B, whose empty queue
        // is then removed from the lists.
        assert_eq!(q.dequeue(0, &mut pk), Some(2));
        assert_eq!(q.discipline().listed_flows(), (0, 1));
        for i in 3..10 {
            assert_eq!(q.dequeue(0, &mut pk), Some(i));
        }
        assert_eq!(q.dequeue(0, &mut pk), None);
        assert_eq!(q.discipline().listed_flows(), (0, 0));
    }

    // Linux fq_codel_drop: over the limit, drop from the head of the fattest
    // queue until half its bytes (or 64 packets) are gone.
    #[test]
    fn overflow_drops_from_the_fattest_queue() {
        let mut q = Qdisc::around(FqCodel::new(FqCodelConfig::default(), QueueLimit::Packets(20), 7));
        let mut pk = Pkts::new(1000, 1000, false);
        for i in 0..4u32 {
            pk.key[i as usize] = 1; // small queue: 4 packets
            q.enqueue(i, 0, &mut pk);
        }
        for i in 4..20u32 {
            pk.key[i as usize] = 2; // fat queue: 16 packets
            q.enqueue(i, 0, &mut pk);
        }
        assert_eq!(q.pop_dropped(), None);
        pk.key[20] = 1;
        assert!(q.enqueue(20, 0, &mut pk));
        // 16 000 B in the fat queue: drop its head until ≥ 8000 B → 8 packets
        // 4..=11 (handed back last first).
        let dropped: Vec<_> = std::iter::from_fn(|| q.pop_dropped()).collect();
        assert_eq!(dropped, (4..12).rev().collect::<Vec<_>>());
        assert_eq!(q.len(), 13);
        assert_eq!(q.books().dropped(DropReason::Overflow), 8);
        assert_eq!(q.aqm_drops(), 0);
    }
}
