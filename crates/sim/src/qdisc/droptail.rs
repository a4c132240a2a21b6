//! Tail-drop FIFO (Linux `pfifo`/`bfifo`): admit while under the limit,
//! otherwise drop the arriving packet.

use super::books::{Cx, DropReason};
use super::discipline::{Discipline, Env, QdiscKind};
use super::params::{Fields, QdiscInfo};
use super::queue::QueueLimit;
use crate::packet::{PacketId, PacketView};
use std::collections::VecDeque;

/// DropTail has no parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DropTailConfig;

impl QdiscKind for DropTailConfig {
    type Qdisc = DropTail;
    const KIND: &'static str = "droptail";

    fn info() -> QdiscInfo {
        QdiscInfo {
            name: Self::KIND,
            summary: "Tail-drop FIFO: drop arrivals when the link buffer (buffer_pkts or buffer_bytes) is full.",
            source: "Linux net/sched/sch_fifo.c (pfifo/bfifo)",
            params: vec![],
        }
    }

    fn fields(&mut self, _: &mut Fields) -> Result<(), String> {
        Ok(())
    }

    fn build(&self, env: Env) -> DropTail {
        DropTail::new(env.limit)
    }
}

/// Tail-drop FIFO limited in packets or bytes.
#[derive(Debug)]
pub struct DropTail {
    pub limit: QueueLimit,
    q: VecDeque<PacketId>,
}

impl DropTail {
    pub fn new(limit: QueueLimit) -> DropTail {
        DropTail { limit, q: VecDeque::with_capacity(1024) }
    }
}

impl Discipline for DropTail {
    /// Admits the packet, or refuses it (tail drop) if it would exceed the limit.
    #[inline]
    fn enqueue<P: PacketView>(&mut self, id: PacketId, cx: &mut Cx<'_, P>) -> Result<(), DropReason> {
        if !self.limit.fits(cx.pkts(), cx.bytes(), cx.wire_len(id)) {
            return Err(DropReason::Overflow);
        }
        self.q.push_back(id);
        Ok(())
    }

    #[inline]
    fn dequeue<P: PacketView>(&mut self, _: &mut Cx<'_, P>) -> Option<PacketId> {
        self.q.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::Pkts;
    use super::super::Qdisc;
    use super::*;

    #[test]
    fn droptail_limits() {
        let mut pk = Pkts::new(8, 1500, false);
        let mut q = Qdisc::around(DropTail::new(QueueLimit::Packets(2)));
        assert!(q.enqueue(1, 0, &mut pk));
        assert!(q.enqueue(2, 0, &mut pk));
        assert!(!q.enqueue(3, 0, &mut pk));
        (pk.len[2], pk.len[3], pk.len[4]) = (1000, 600, 500);
        let mut q = Qdisc::around(DropTail::new(QueueLimit::Bytes(3000)));
        assert!(q.enqueue(1, 0, &mut pk));
        assert!(q.enqueue(2, 0, &mut pk));
        assert!(!q.enqueue(3, 0, &mut pk));
        assert!(q.enqueue(4, 0, &mut pk));
        assert_eq!(q.bytes(), 3000);
        assert_eq!(q.dequeue(0, &mut pk), Some(1));
        assert_eq!(q.bytes(), 1500);
        assert_eq!(q.books().dropped(DropReason::Overflow), 1);
    }
}
