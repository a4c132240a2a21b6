//! Tail-drop FIFO (Linux `pfifo`/`bfifo`): admit while under the limit,
//! otherwise drop the arriving packet.

use super::QueueLimit;
use crate::packet::PacketId;
use std::collections::VecDeque;

/// Tail-drop FIFO limited in packets or bytes.
#[derive(Debug)]
pub struct DropTail {
    pub limit: QueueLimit,
    q: VecDeque<PacketId>,
    bytes: u64,
}

impl DropTail {
    pub fn new(limit: QueueLimit) -> DropTail {
        DropTail { limit, q: VecDeque::with_capacity(1024), bytes: 0 }
    }

    /// Admits the packet, or returns false (tail drop) if it would exceed the limit.
    #[inline]
    pub fn enqueue(&mut self, id: PacketId, wire_len: u32) -> bool {
        if !self.limit.fits(self.q.len(), self.bytes, wire_len) {
            return false;
        }
        self.q.push_back(id);
        self.bytes += wire_len as u64;
        true
    }

    #[inline]
    pub fn dequeue(&mut self, wire_len_of: impl Fn(PacketId) -> u32) -> Option<PacketId> {
        let id = self.q.pop_front()?;
        self.bytes -= wire_len_of(id) as u64;
        Some(id)
    }

    pub fn len(&self) -> usize {
        self.q.len()
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn droptail_limits() {
        let mut q = DropTail::new(QueueLimit::Packets(2));
        assert!(q.enqueue(1, 1500));
        assert!(q.enqueue(2, 1500));
        assert!(!q.enqueue(3, 1500));
        let mut q = DropTail::new(QueueLimit::Bytes(3000));
        assert!(q.enqueue(1, 1500));
        assert!(q.enqueue(2, 1000));
        assert!(!q.enqueue(3, 600));
        assert!(q.enqueue(4, 500));
        assert_eq!(q.bytes(), 3000);
        assert_eq!(q.dequeue(|id| [0, 1500, 1000, 0, 500][id as usize]), Some(1));
        assert_eq!(q.bytes(), 1500);
    }
}
