//! Links: a [`Port`] is a queue discipline in front of a serialiser of fixed
//! rate; a [`DelayLine`] is constant propagation delay. Both keep at most one
//! pending event: the port its next transmission end, the line its head
//! packet's arrival (a constant-delay line is FIFO, htsim's `Pipe`).

pub use crate::event::tx_time;
use crate::event::Time;
use crate::linkmodel::{LineModel, PortModel};
use crate::packet::PacketId;
use crate::rng::Rng;
use crate::traffic::{Loss, LossModel};
use std::collections::VecDeque;

/// Where a packet goes after a component is done with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hop {
    Line(u32),
    Port(u32),
    Receiver(u32),
    Sender(u32),
}

pub use crate::qdisc::{Qdisc, QueueLimit};

/// A queue and a serialiser. The packet being serialised has left the queue.
#[derive(Debug)]
pub struct Port {
    pub rate_bps: u64,
    pub qdisc: Qdisc,
    /// Packet being serialised, if any.
    pub busy: Option<PacketId>,
    /// The link's random loss, applied to arriving packets its owner says
    /// it hits ([`crate::service::arrive`]).
    pub loss: Loss,
    pub counters: PortCounters,
    /// The link's models (capacity over time, policer, shaper, batching);
    /// `None` for an ideal link.
    pub model: Option<Box<PortModel>>,
    /// The models' time 0 on the owner's clock; before it the link is
    /// ideal. The simulator's is 0; the emulator's is the start of its
    /// measurement (connection set-up runs on ideal links).
    pub model_from: Time,
}

/// A port's counters: packets that arrived, were dropped (of them by the
/// link's random loss) and were sent, bytes sent, and the longest queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortCounters {
    pub arrivals: u64,
    pub drops: u64,
    pub random_drops: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub max_backlog_pkts: u64,
}

impl Port {
    /// A lossless port with a tail-drop queue.
    pub fn new(rate_bps: u64, limit: QueueLimit) -> Port {
        Port::with_qdisc(rate_bps, Qdisc::droptail(limit), Loss::new(LossModel::None, Rng::new(0, 0)))
    }

    pub fn with_qdisc(rate_bps: u64, qdisc: Qdisc, loss: Loss) -> Port {
        Port {
            rate_bps,
            qdisc,
            busy: None,
            loss,
            counters: PortCounters::default(),
            model: None,
            model_from: 0,
        }
    }

    /// Serialisation time of `wire_len` bytes, picoseconds (rounded up).
    #[inline]
    pub fn tx_time(&self, wire_len: u32) -> Time {
        tx_time(wire_len, self.rate_bps)
    }

    /// When the last bit of a packet of `wire_len` bytes that arrived at
    /// `arrived` leaves, its serialisation starting at `now`.
    #[inline]
    pub fn service_end(&mut self, now: Time, arrived: Time, wire_len: u32) -> Time {
        match &mut self.model {
            Some(m) if now >= self.model_from => {
                let from = self.model_from;
                m.service_end(now - from, arrived.saturating_sub(from), wire_len, self.rate_bps).saturating_add(from)
            }
            _ => now + tx_time(wire_len, self.rate_bps),
        }
    }

    /// Packets held by the port: queued, the one on the wire, and any held for a batch.
    pub fn held(&self) -> u64 {
        self.qdisc.len() as u64 + self.busy.is_some() as u64 + self.model.as_ref().map_or(0, |m| m.held())
    }
}

/// A constant-delay FIFO line.
#[derive(Debug)]
pub struct DelayLine {
    pub delay: Time,
    pub next: Hop,
    q: VecDeque<(Time, PacketId)>,
    /// Jitter and delay steps of the link before it; `None`: constant delay.
    pub model: Option<Box<LineModel>>,
}

impl DelayLine {
    pub fn new(delay: Time, next: Hop) -> DelayLine {
        DelayLine { delay, next, q: VecDeque::with_capacity(256), model: None }
    }

    /// Adds a packet at `now`; returns its arrival time if the line needs
    /// an event for it (it is the line's new head; the caller schedules it).
    #[inline]
    pub fn push(&mut self, now: Time, id: PacketId) -> Option<Time> {
        if self.model.is_some() {
            return self.push_modelled(now, id);
        }
        self.push_at(now + self.delay, id)
    }

    /// Adds a packet that arrives at `at`, which its caller computed (the
    /// emulator's jittered lines); `at` must not be before the line's last
    /// packet. Returns `at` if the packet is the line's new head.
    #[inline]
    pub fn push_at(&mut self, at: Time, id: PacketId) -> Option<Time> {
        debug_assert!(self.tail_time().is_none_or(|t| at >= t));
        let was_empty = self.q.is_empty();
        self.q.push_back((at, id));
        was_empty.then_some(at)
    }

    /// [`DelayLine::push`] on a line with jitter or delay steps.
    #[cold]
    #[inline(never)]
    fn push_modelled(&mut self, now: Time, id: PacketId) -> Option<Time> {
        let m = self.model.as_mut().expect("checked by push");
        let at = m.due(now, self.delay, self.q.back().map(|e| e.0));
        if m.reorders() {
            return m.insert(at, id);
        }
        self.push_at(at, id)
    }

    /// At the line's event at `now`: false when the event is stale (a
    /// reordering line's head moved earlier and got an event of its own).
    #[inline]
    pub fn fire(&mut self, now: Time) -> bool {
        match &mut self.model {
            None => true,
            Some(m) => m.fire(now),
        }
    }

    /// After the due packets were taken: the time of the line's next event, if any.
    #[inline]
    pub fn rearm(&mut self) -> Option<Time> {
        match &mut self.model {
            Some(m) if m.reorders() => m.rearm(),
            _ => self.head_time(),
        }
    }

    /// Takes the head packet if it has arrived by `now`.
    #[inline]
    pub fn pop_due(&mut self, now: Time) -> Option<PacketId> {
        if self.model.is_some() {
            return self.pop_due_modelled(now);
        }
        self.pop_due_plain(now)
    }

    /// [`DelayLine::pop_due`] on a line without jitter or delay steps.
    #[inline]
    pub fn pop_due_plain(&mut self, now: Time) -> Option<PacketId> {
        debug_assert!(self.model.is_none());
        self.pop_front_due(now)
    }

    /// Takes the head of the line's queue if it has arrived by `now`.
    #[inline]
    fn pop_front_due(&mut self, now: Time) -> Option<PacketId> {
        match self.q.front() {
            Some(&(at, id)) if at <= now => {
                self.q.pop_front();
                Some(id)
            }
            _ => None,
        }
    }

    /// [`DelayLine::pop_due`] on a line with jitter or delay steps.
    #[cold]
    #[inline(never)]
    fn pop_due_modelled(&mut self, now: Time) -> Option<PacketId> {
        if self.model.as_ref().is_some_and(|m| m.reorders()) {
            return self.model.as_mut().and_then(|m| m.pop_due(now));
        }
        let id = self.pop_front_due(now)?;
        if let Some(m) = &mut self.model {
            m.delivered += 1;
        }
        Some(id)
    }

    /// Arrival time and id of the head packet.
    #[inline]
    pub fn head(&self) -> Option<(Time, PacketId)> {
        self.q.front().copied()
    }

    /// Arrival time of the head packet.
    #[inline]
    pub fn head_time(&self) -> Option<Time> {
        self.q.front().map(|&(at, _)| at)
    }

    /// Every packet on the line arrives `by` later.
    pub fn delay_all(&mut self, by: Time) {
        for e in self.q.iter_mut() {
            e.0 += by;
        }
    }

    /// Arrival time of the last packet on the line.
    #[inline]
    pub fn tail_time(&self) -> Option<Time> {
        self.q.back().map(|&(at, _)| at)
    }

    pub fn len(&self) -> usize {
        self.q.len() + self.model.as_ref().map_or(0, |m| m.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialisation_time_is_exact() {
        let p = Port::new(100_000_000, QueueLimit::Packets(10));
        assert_eq!(p.tx_time(1500), 120_000_000); // 1500 B at 100 Mbit/s = 120 µs
        let p = Port::new(1_000_000_000, QueueLimit::Packets(10));
        assert_eq!(p.tx_time(1500), 12_000_000);
    }

    #[test]
    fn delay_line_is_fifo_with_one_pending_time() {
        let mut l = DelayLine::new(10, Hop::Receiver(0));
        assert_eq!(l.push(0, 7), Some(10));
        assert_eq!(l.push(3, 8), None);
        assert_eq!(l.pop_due(9), None);
        assert_eq!(l.pop_due(10), Some(7));
        assert_eq!(l.head_time(), Some(13));
    }
}
