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

use super::codel::{codel_dequeue, CodelParams, CodelVars, Fifo, Sink};
use super::{FqCodelConfig, PacketView, QueueLimit};
use crate::event::Time;
use crate::packet::PacketId;
use std::collections::VecDeque;

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
    total_bytes: u64,
    total_pkts: usize,
    /// Perturbation of the flow hash (Linux draws it at init).
    perturb: u64,
    pub dropped: Vec<PacketId>,
    pub marks: u64,
    /// CoDel drops (not overflow).
    pub aqm_drops: u64,
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
            .map(|_| Flow {
                fifo: Fifo { q: VecDeque::with_capacity(16), bytes: 0 },
                vars: CodelVars::default(),
                deficit: 0,
                list: List::None,
            })
            .collect();
        FqCodel {
            params: CodelParams::from(&cfg.codel()),
            limit,
            flows,
            new_flows: VecDeque::with_capacity(n),
            old_flows: VecDeque::with_capacity(n),
            total_bytes: 0,
            total_pkts: 0,
            perturb: mix(seed ^ 0x0066_7163_6f64_656c),
            dropped: Vec::with_capacity(cfg.drop_batch as usize + 1),
            marks: 0,
            aqm_drops: 0,
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

    #[inline]
    pub fn enqueue<P: PacketView>(&mut self, id: PacketId, pkts: &P) -> bool {
        let len = pkts.wire_len(id) as u64;
        let idx = self.classify(pkts.flow_key(id));
        let f = &mut self.flows[idx as usize];
        f.fifo.q.push_back(id);
        f.fifo.bytes += len;
        if f.list == List::None {
            f.list = List::New;
            f.deficit = self.cfg.quantum as i64;
            self.new_flows.push_back(idx);
        }
        self.total_bytes += len;
        self.total_pkts += 1;
        if self.within_limit() {
            return true;
        }
        // Over the limit: batch drop from the fattest queue. The arriving
        // packet stays queued unless it is itself among those dropped.
        self.drop_fattest(pkts);
        true
    }

    fn within_limit(&self) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => self.total_pkts as u64 <= n,
            QueueLimit::Bytes(b) => self.total_bytes <= b,
        }
    }

    /// Linux `fq_codel_drop`: head-drop from the queue with the largest
    /// byte backlog until `drop_batch` packets or half its backlog are gone.
    fn drop_fattest<P: PacketView>(&mut self, pkts: &P) -> u32 {
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
        while let Some(id) = f.fifo.q.pop_front() {
            let l = pkts.wire_len(id) as u64;
            f.fifo.bytes -= l;
            self.total_bytes -= l;
            self.total_pkts -= 1;
            len += l;
            self.dropped.push(id);
            i += 1;
            if i >= self.cfg.drop_batch || len >= threshold {
                break;
            }
        }
        idx as u32
    }

    #[inline]
    pub fn dequeue<P: PacketView>(&mut self, now: Time, pkts: &mut P) -> Option<PacketId> {
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
            let mut s = Sink {
                dropped: &mut self.dropped,
                marks: &mut self.marks,
                aqm_drops: &mut self.aqm_drops,
                total_bytes: &mut self.total_bytes,
                total_pkts: &mut self.total_pkts,
            };
            match codel_dequeue(&mut f.vars, &self.params, now, &mut f.fifo, &mut s, pkts) {
                Some(id) => {
                    f.deficit -= pkts.wire_len(id) as i64;
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

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn len(&self) -> usize {
        self.total_pkts
    }

    pub fn bytes(&self) -> u64 {
        self.total_bytes
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

#[cfg(test)]
mod tests {
    use super::super::testkit::Pkts;
    use super::*;

    fn fq() -> FqCodel {
        FqCodel::new(FqCodelConfig::default(), QueueLimit::Packets(10_240), 7)
    }

    // RFC 8290 §4 with quantum 1514: A sends 1514-byte packets, B 64-byte
    // packets; per round A sends 1, B sends while its deficit is positive:
    // 1514 → −22 (24 packets), 1492 → −44 (24), 1470 → −2 (23).
    #[test]
    fn drr_is_byte_fair() {
        let mut q = fq();
        let mut pk = Pkts::new(10_000, 1514, false);
        assert_ne!(q.classify(1), q.classify(2));
        for i in 0..100u32 {
            pk.key[i as usize] = 1;
            q.enqueue(i, &pk);
        }
        for i in 100..3000u32 {
            pk.key[i as usize] = 2;
            pk.len[i as usize] = 64;
            q.enqueue(i, &pk);
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
            q.enqueue(i, &pk);
        }
        // Serve A until its deficit is spent: it moves to old_flows.
        assert_eq!(q.dequeue(0, &mut pk), Some(0));
        assert_eq!(q.dequeue(0, &mut pk), Some(1));
        assert_eq!(q.listed_flows(), (0, 1));
        // A sparse packet of flow B arrives: it goes ahead of A.
        pk.key[500] = 2;
        pk.len[500] = 100;
        q.enqueue(500, &pk);
        assert_eq!(q.listed_flows(), (1, 1));
        assert_eq!(q.dequeue(0, &mut pk), Some(500));
        // B is empty: its next visit moves it to old_flows behind A; A's
        // turn refills its deficit and sends it behind B, whose empty queue
        // is then removed from the lists.
        assert_eq!(q.dequeue(0, &mut pk), Some(2));
        assert_eq!(q.listed_flows(), (0, 1));
        for i in 3..10 {
            assert_eq!(q.dequeue(0, &mut pk), Some(i));
        }
        assert_eq!(q.dequeue(0, &mut pk), None);
        assert_eq!(q.listed_flows(), (0, 0));
    }

    // Linux fq_codel_drop: over the limit, drop from the head of the fattest
    // queue until half its bytes (or 64 packets) are gone.
    #[test]
    fn overflow_drops_from_the_fattest_queue() {
        let mut q = FqCodel::new(FqCodelConfig::default(), QueueLimit::Packets(20), 7);
        let mut pk = Pkts::new(1000, 1000, false);
        for i in 0..4u32 {
            pk.key[i as usize] = 1; // small queue: 4 packets
            q.enqueue(i, &pk);
        }
        for i in 4..20u32 {
            pk.key[i as usize] = 2; // fat queue: 16 packets
            q.enqueue(i, &pk);
        }
        assert!(q.dropped.is_empty());
        pk.key[20] = 1;
        assert!(q.enqueue(20, &pk));
        // 16 000 B in the fat queue: drop its head until ≥ 8000 B → 8 packets 4..=11.
        assert_eq!(q.dropped, (4..12).collect::<Vec<_>>());
        assert_eq!(q.len(), 13);
    }
}
