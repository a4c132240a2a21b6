//! The books a [`super::Qdisc`] keeps around its discipline (after ns-3's
//! `QueueDisc` base, `traffic-control/model/queue-disc.h`): arrivals,
//! drops by reason, CE marks, the packets and bytes held, departures and
//! their sojourn. A discipline does not count; it reports what it does
//! through the [`Cx`] it is handed: [`Cx::mark`] and [`Cx::drop`], and the
//! verdict its `enqueue` returns.

use crate::event::Time;
use crate::packet::{PacketId, PacketView};
use cc::CcHeader;

/// Why a discipline dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer was full (tail drop, FQ-CoDel's overflow batch).
    Overflow = 0,
    /// The discipline chose it (RED/PIE early drop, CoDel head drop).
    Aqm = 1,
}

/// A discipline's counters, kept by [`super::Qdisc`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Books {
    /// Packets offered to the discipline.
    pub arrivals: u64,
    /// Drops, indexed by [`DropReason`]: refused arrivals and packets
    /// dropped after they were admitted.
    pub drops: [u64; 2],
    /// CE marks.
    pub marks: u64,
    /// Packets handed to the link.
    pub departures: u64,
    /// Sum and largest of the departures' sojourn (enqueue to dequeue), ps.
    pub sojourn_total: u128,
    pub sojourn_max: Time,
    /// Packets and bytes held. While a discipline's `enqueue` runs, these
    /// leave out the arriving packet (added once it is admitted).
    pkts: usize,
    bytes: u64,
}

impl Books {
    pub fn pkts(&self) -> usize {
        self.pkts
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn dropped(&self, why: DropReason) -> u64 {
        self.drops[why as usize]
    }

    #[inline]
    pub(super) fn admit(&mut self, len: u32) {
        // Wrapping: a discipline may drop the packet it is admitting
        // (FQ-CoDel's overflow batch) before it is counted here.
        self.pkts = self.pkts.wrapping_add(1);
        self.bytes = self.bytes.wrapping_add(len as u64);
    }

    #[inline]
    pub(super) fn release(&mut self, len: u32) {
        self.pkts = self.pkts.wrapping_sub(1);
        self.bytes = self.bytes.wrapping_sub(len as u64);
    }

    #[inline]
    pub(super) fn depart(&mut self, len: u32, sojourn: Time) {
        self.release(len);
        self.departures += 1;
        self.sojourn_total += sojourn as u128;
        self.sojourn_max = self.sojourn_max.max(sojourn);
    }
}

/// What a discipline sees of the world during one enqueue or dequeue: the
/// time, the packets (read through [`PacketView`]), the books (read only)
/// and the two things it may do besides queueing: mark and drop.
pub struct Cx<'a, P: PacketView> {
    pub now: Time,
    pkts: &'a mut P,
    books: &'a mut Books,
    dropped: &'a mut Vec<PacketId>,
}

impl<'a, P: PacketView> Cx<'a, P> {
    #[inline]
    pub(super) fn new(now: Time, pkts: &'a mut P, books: &'a mut Books, dropped: &'a mut Vec<PacketId>) -> Self {
        Cx { now, pkts, books, dropped }
    }

    /// Packets held by the discipline (during `enqueue`, without the arrival).
    #[inline]
    pub fn pkts(&self) -> usize {
        self.books.pkts
    }

    /// Bytes held by the discipline (during `enqueue`, without the arrival).
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.books.bytes
    }

    #[inline]
    pub fn wire_len(&self, id: PacketId) -> u32 {
        self.pkts.wire_len(id)
    }

    #[inline]
    pub fn enqueued_at(&self, id: PacketId) -> Time {
        self.pkts.enqueued_at(id)
    }

    #[inline]
    pub fn ect(&self, id: PacketId) -> bool {
        self.pkts.ect(id)
    }

    /// The IP header's ECN field ([`PacketView::codepoint`]).
    #[inline]
    pub fn codepoint(&self, id: PacketId) -> u8 {
        self.pkts.codepoint(id)
    }

    #[inline]
    pub fn flow_key(&self, id: PacketId) -> u64 {
        self.pkts.flow_key(id)
    }

    #[inline]
    pub fn cc_header(&self, id: PacketId) -> CcHeader {
        self.pkts.cc_header(id)
    }

    #[inline]
    pub fn cc_header_mut(&mut self, id: PacketId) -> Option<&mut CcHeader> {
        self.pkts.cc_header_mut(id)
    }

    #[inline]
    pub fn data_flow(&self, id: PacketId) -> Option<u32> {
        self.pkts.data_flow(id)
    }

    /// CE-marks the packet.
    #[inline]
    pub fn mark(&mut self, id: PacketId) {
        self.pkts.set_ce(id);
        self.books.marks += 1;
    }

    /// Drops a packet the discipline held (a head drop, an overflow batch);
    /// the engine takes it through `Qdisc::pop_dropped`. An arriving packet
    /// is refused by `enqueue`'s verdict instead.
    #[inline]
    pub fn drop(&mut self, id: PacketId, why: DropReason) {
        self.books.release(self.pkts.wire_len(id));
        self.books.drops[why as usize] += 1;
        self.dropped.push(id);
    }
}
