//! A link's port at work, written once for the simulator and the emulator.
//!
//! A packet that reaches a port meets, in order: the link's random loss,
//! its models (a policer that drops, a batch that holds), and its queue
//! discipline, in front of a serialiser that sends one packet at a time at
//! the link's rate (or as its capacity model allows). [`arrive`],
//! [`release`] and [`start_next`] carry out that order and keep the port's
//! counters; the owner of the port (the simulator's event loop, or the
//! emulator's real-time engine) implements [`PortOwner`]: where its packets
//! are, and what to do when the port drops a packet, starts one on the wire
//! or holds a batch. When a transmission ends the owner takes the packet
//! with [`Port::finish`], sends it on its way, then calls [`start_next`].
//!
//! The functions are generic over the owner and inline into its event
//! handlers: no virtual call and no allocation per packet.

use crate::event::Time;
use crate::linkmodel::Arrival;
use crate::net::Port;
use crate::packet::{PacketId, PacketView};

/// The owner of ports: the packets they serve and the consequences of
/// their decisions.
pub trait PortOwner {
    type Packets: PacketView;

    /// Port `p` and the packets.
    fn port(&mut self, p: usize) -> (&mut Port, &mut Self::Packets);

    /// Packet `id` enters a queue at `now` (its sojourn counts from here).
    fn stamp(&mut self, id: PacketId, now: Time);

    /// Port `p` dropped `id` at `now` (already counted in the port's
    /// `drops`): lost at random on arrival (`random`), or policed, refused
    /// by the discipline or dropped by it after admission.
    fn dropped(&mut self, p: usize, id: PacketId, random: bool, now: Time);

    /// Port `p` began serialising `id` at `now` after it waited `waited`
    /// ps in the queue; its last bit leaves at `end`: the owner calls
    /// [`Port::finish`] then.
    fn started(&mut self, p: usize, id: PacketId, now: Time, end: Time, waited: Time);

    /// At `now`, port `p`'s model holds a batch to be released at `at`
    /// (on the owner's clock, possibly not later than `now`) with
    /// [`release`], if it is still of generation `generation` then.
    fn held(&mut self, p: usize, now: Time, at: Time, generation: u32);

    /// The discipline of port `p` took or refused `id` (or the idle link
    /// took it straight onto the wire); for a packet log.
    #[inline(always)]
    fn enqueued(&mut self, _p: usize, _id: PacketId) {}

    /// The discipline of port `p` gave `next` to the serialiser (or
    /// nothing); for a packet log.
    #[inline(always)]
    fn dequeued(&mut self, _p: usize, _next: Option<PacketId>) {}
}

/// Packet `id` reaches port `p` at `now`. The link's random loss applies
/// to it when `lossy` (the owner decides which packets a link's loss hits:
/// data, not ACKs).
#[inline(always)]
pub fn arrive<O: PortOwner>(o: &mut O, p: usize, id: PacketId, now: Time, lossy: bool) {
    o.stamp(id, now);
    let (port, _) = o.port(p);
    port.counters.arrivals += 1;
    if lossy && port.loss.lose() {
        drop(o, p, id, true, now);
        return;
    }
    if port.model.is_some() && now >= port.model_from && !arrive_modelled(o, p, id, now) {
        return;
    }
    admit(o, p, id, now);
}

/// A packet arrives at a port whose models run: false when the policer
/// dropped it or a batch holds it.
#[cold]
#[inline(never)]
fn arrive_modelled<O: PortOwner>(o: &mut O, p: usize, id: PacketId, now: Time) -> bool {
    let (port, pkts) = o.port(p);
    let wire = pkts.wire_len(id);
    let from = port.model_from;
    let m = port.model.as_mut().expect("checked by the caller");
    match m.arrive(now - from, id, wire) {
        Arrival::Pass => true,
        Arrival::Policed => {
            drop(o, p, id, false, now);
            false
        }
        Arrival::Held(None) => false,
        Arrival::Held(Some(at)) => {
            let generation = m.batch_generation();
            o.held(p, now, at + from, generation);
            false
        }
    }
}

/// Port `p`'s batch of generation `generation` enters its queue at `now`,
/// in arrival order (a stale generation releases nothing). `out` is the
/// owner's reusable list, left empty.
#[cold]
#[inline(never)]
pub fn release<O: PortOwner>(o: &mut O, p: usize, generation: u32, now: Time, out: &mut Vec<PacketId>) {
    if let Some(m) = &mut o.port(p).0.model {
        m.release(generation, out);
    }
    for &id in out.iter() {
        o.stamp(id, now);
        admit(o, p, id, now);
    }
    out.clear();
}

/// A packet that got past the link's loss, policer and batching enters
/// port `p`'s queue at `now`, or goes straight onto an idle link's wire
/// when nothing queues and the discipline is a plain FIFO. An AQM sees
/// every arrival (RED's average decays over idle time), so the packet goes
/// through it even when the link is idle.
#[inline(always)]
pub fn admit<O: PortOwner>(o: &mut O, p: usize, id: PacketId, now: Time) {
    let (port, pkts) = o.port(p);
    if port.busy.is_none() && port.qdisc.is_droptail() && port.qdisc.is_empty() {
        port.busy = Some(id);
        let end = port.service_end(now, now, pkts.wire_len(id));
        o.started(p, id, now, end, 0);
        o.enqueued(p, id);
        o.dequeued(p, Some(id));
        return;
    }
    let admitted = port.qdisc.enqueue(id, now, pkts);
    o.enqueued(p, id);
    drain(o, p, now);
    if !admitted {
        drop(o, p, id, false, now);
        return;
    }
    if o.port(p).0.busy.is_none() {
        start_next(o, p, now);
    }
    let port = o.port(p).0;
    let backlog = port.qdisc.len() as u64;
    if backlog > port.counters.max_backlog_pkts {
        port.counters.max_backlog_pkts = backlog;
    }
}

/// Takes the next packet from port `p`'s discipline onto its idle
/// serialiser at `now` (after a transmission ends, or when the first
/// packet queues).
#[inline]
pub fn start_next<O: PortOwner>(o: &mut O, p: usize, now: Time) {
    let (port, pkts) = o.port(p);
    let next = port.qdisc.dequeue(now, pkts);
    drain(o, p, now);
    o.dequeued(p, next);
    if let Some(id) = next {
        let (port, pkts) = o.port(p);
        port.busy = Some(id);
        let enq = pkts.enqueued_at(id);
        let end = port.service_end(now, enq, pkts.wire_len(id));
        o.started(p, id, now, end, now - enq);
    }
}

/// Counts and hands over the packets port `p`'s discipline dropped after
/// admitting them.
#[inline]
fn drain<O: PortOwner>(o: &mut O, p: usize, now: Time) {
    while let Some(d) = o.port(p).0.qdisc.pop_dropped() {
        drop(o, p, d, false, now);
    }
}

#[inline]
fn drop<O: PortOwner>(o: &mut O, p: usize, id: PacketId, random: bool, now: Time) {
    let port = o.port(p).0;
    port.counters.drops += 1;
    port.counters.random_drops += random as u64;
    o.dropped(p, id, random, now);
}

impl Port {
    /// Port `p`'s transmission has ended: the packet that left (counted
    /// as sent). The owner sends it on, then calls [`start_next`].
    #[inline]
    pub fn finish<P: PacketView>(&mut self, pkts: &P) -> PacketId {
        let id = self.busy.take().expect("tx done on an idle port");
        self.counters.tx_packets += 1;
        self.counters.tx_bytes += pkts.wire_len(id) as u64;
        id
    }
}
