//! The event queue: a binary heap keyed by (time, insertion sequence), so
//! events at the same time run in the order they were scheduled.
//!
//! Events are small `Copy` values naming a component by index; components own
//! their state in the simulator's vectors.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Simulated time in picoseconds (u64 covers about 213 days).
pub type Time = u64;

/// Picoseconds per nanosecond / microsecond / millisecond / second.
pub const PS_PER_NS: u64 = 1_000;
pub const PS_PER_US: u64 = 1_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// Serialisation time of `wire_len` bytes at `rate_bps`, picoseconds (rounded up).
#[inline]
pub fn tx_time(wire_len: u32, rate_bps: u64) -> Time {
    let bits = wire_len as u128 * 8 * PS_PER_S as u128;
    bits.div_ceil(rate_bps as u128) as Time
}

/// Timers a flow may have pending, one slot each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TimerKind {
    /// Sender retransmission timeout.
    Rto = 0,
    /// Sender pacing release.
    Pace = 1,
    /// Sender application (rate-limited source has new data).
    App = 2,
    /// Receiver delayed-ACK timer.
    DelAck = 3,
}

pub const TIMER_KINDS: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A port finished serialising the packet at its head.
    PortTxDone(u32),
    /// The packet at the head of a delay line arrives at the line's end.
    LineDeliver(u32),
    /// A flow's timer fires.
    Timer(u32, TimerKind),
    /// A flow starts sending.
    FlowStart(u32),
    /// A flow's application stops offering data.
    FlowStop(u32),
    /// Periodic measurement.
    Probe,
    /// A TCP source's next Poisson arrival.
    Arrival(u32),
    /// A closed-loop session of a TCP source starts its next transfer.
    SessionStart(u32, u32),
    /// A UDP source sends its next packet.
    UdpSend(u32),
    /// The packet log's window opens (true) or closes (false).
    PacketLog(bool),
    /// A link releases the batch it holds (link, batch generation).
    LinkRelease(u32, u32),
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Time,
    seq: u64,
    ev: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we pop the earliest.
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then_with(|| o.seq.cmp(&self.seq))
    }
}

/// Deterministic event queue.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue { heap: BinaryHeap::with_capacity(1024), seq: 0 }
    }

    #[inline]
    pub fn push(&mut self, time: Time, ev: Event) {
        self.seq += 1;
        self.heap.push(Entry { time, seq: self.seq, ev });
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.heap.pop().map(|e| (e.time, e.ev))
    }

    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }

    /// The earliest event and its time.
    #[inline]
    pub fn peek(&self) -> Option<(Time, Event)> {
        self.heap.peek().map(|e| (e.time, e.ev))
    }

    /// Moves every event for which `moves` holds `by` later, keeping the
    /// order among them (ties still in insertion order).
    pub fn delay_where(&mut self, by: Time, moves: impl Fn(&Event) -> bool) {
        let mut v = std::mem::take(&mut self.heap).into_vec();
        for e in v.iter_mut().filter(|e| moves(&e.ev)) {
            e.time += by;
        }
        self.heap = BinaryHeap::from(v);
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_ties_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(5, Event::Probe);
        q.push(3, Event::FlowStart(1));
        q.push(5, Event::FlowStart(2));
        q.push(3, Event::FlowStart(3));
        q.push(4, Event::PortTxDone(0));
        let order: Vec<(Time, Event)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (3, Event::FlowStart(1)),
                (3, Event::FlowStart(3)),
                (4, Event::PortTxDone(0)),
                (5, Event::Probe),
                (5, Event::FlowStart(2)),
            ]
        );
    }

    #[test]
    fn delayed_events_keep_their_order_and_the_others_stay() {
        let mut q = EventQueue::new();
        q.push(3, Event::FlowStart(1));
        q.push(5, Event::Probe);
        q.push(3, Event::FlowStart(2));
        q.push(4, Event::PortTxDone(0));
        q.delay_where(2, |e| !matches!(e, Event::Probe));
        let order: Vec<(Time, Event)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(5, Event::FlowStart(1)), (5, Event::Probe), (5, Event::FlowStart(2)), (6, Event::PortTxDone(0)),]
        );
    }
}
