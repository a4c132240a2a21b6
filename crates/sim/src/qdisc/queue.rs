//! Where a discipline keeps its packets: a capacity ([`QueueLimit`]) and a
//! FIFO that counts its bytes ([`Fifo`], for disciplines that keep several
//! queues), and the largest capacity the engine holds.

use crate::packet::PacketId;
use std::collections::VecDeque;

/// Largest queue: 10^9 packets, or 10^9 full-size packets' bytes (the
/// configuration check, `crate::check`, refuses more).
pub const MAX_BUFFER_PKTS: u64 = 1_000_000_000;
pub const MAX_BUFFER_BYTES: u64 = MAX_BUFFER_PKTS * 65_535;

/// Queue capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u64),
    Bytes(u64),
}

impl QueueLimit {
    /// Whether a packet of `len` bytes fits beside `pkts` packets of `bytes` bytes.
    #[inline]
    pub fn fits(&self, pkts: usize, bytes: u64, len: u32) -> bool {
        match *self {
            QueueLimit::Packets(n) => (pkts as u64) < n,
            QueueLimit::Bytes(b) => bytes + len as u64 <= b,
        }
    }
}

/// A FIFO with its byte count: CoDel's queue, FQ-CoDel's sub-queues, the
/// XCP port's two classes. (The discipline's totals are kept by
/// [`super::Qdisc`].)
#[derive(Debug, Default)]
pub struct Fifo {
    pub q: VecDeque<PacketId>,
    pub bytes: u64,
}

impl Fifo {
    pub fn with_capacity(n: usize) -> Fifo {
        Fifo { q: VecDeque::with_capacity(n), bytes: 0 }
    }

    #[inline]
    pub fn push(&mut self, id: PacketId, len: u32) {
        self.q.push_back(id);
        self.bytes += len as u64;
    }

    /// The head and its length, `len_of` giving a packet's length.
    #[inline]
    pub fn pop(&mut self, len_of: impl FnOnce(PacketId) -> u32) -> Option<(PacketId, u32)> {
        let id = self.q.pop_front()?;
        let len = len_of(id);
        self.bytes -= len as u64;
        Some((id, len))
    }

    pub fn len(&self) -> usize {
        self.q.len()
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
}
