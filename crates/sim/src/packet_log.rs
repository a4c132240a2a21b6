//! The per-packet log: one row per packet event at a link inside a time
//! window, in columns (struct of arrays) like the traces, handed to the
//! caller in chunks and cleared for reuse.
//!
//! The simulator opens the log with an event at the window's start and
//! closes it with one at its end. Its hooks are compiled into a second copy
//! of the event loop (`Simulator::run_slice::<true>`), which runs only while
//! the window is open; the rest of the run, and a run without a window, runs
//! the same code as an engine without the log. The rows go to
//! [`PacketLog::push`], which appends to vectors reserved up front and
//! reused chunk after chunk.
//!
//! Events, each at a link (the port a packet crosses: forward = the
//! bottleneck, reverse = the ACK-direction port):
//!
//! ```text
//!  enqueue  the packet arrives at the link (every arrival, also those then dropped)
//!  dequeue  it leaves the queue and its transmission starts
//!  drop     it is discarded: buffer full, AQM decision, or the link's random loss
//!  mark     the discipline sets CE on it (at enqueue: RED, PIE; at dequeue: CoDel)
//!  deliver  it reaches its endpoint: data the receiver, an ACK the sender
//!           (a UDP datagram: the end of the link)
//! ```

/// What happened to the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PacketEvent {
    Enqueue = 0,
    Dequeue = 1,
    Drop = 2,
    Mark = 3,
    Deliver = 4,
}

/// Why a packet was dropped (`None` for every other event).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum DropReason {
    None = 0,
    /// The buffer was full (tail drop, FQ-CoDel's overflow batch).
    Overflow = 1,
    /// The discipline chose it (RED/PIE early drop, CoDel head drop).
    Aqm = 2,
    /// The link's random loss process.
    Random = 3,
}

/// Who a packet belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Owner {
    /// A configured flow; the id is its index.
    Flow = 0,
    /// A background TCP transfer; the id is its index in `Output::transfers`.
    Transfer = 1,
    /// A UDP source; the id is its index in `Config::udp_sources`.
    Udp = 2,
    /// Traffic of no flow, transfer or source (the emulator's ICMP and
    /// other ports); the id is 0.
    Other = 3,
}

/// Bits of [`PacketLog::flags`].
pub const FLAG_RETRANS: u8 = 1;
/// TCP ECE (on ACKs: the receiver echoes congestion).
pub const FLAG_ECE: u8 = 2;
/// TCP CWR (on data: the sender reduced its window).
pub const FLAG_CWR: u8 = 4;
/// An ACK (else data or a datagram).
pub const FLAG_ACK: u8 = 8;

pub use crate::packet::{ECN_CE, ECN_ECT0, ECN_ECT1, ECN_NOT_ECT};

/// One row.
#[derive(Clone, Copy, Debug)]
pub struct PacketRow {
    pub time_ns: u64,
    /// 0 forward, 1 reverse.
    pub link: u8,
    pub event: PacketEvent,
    pub reason: DropReason,
    pub owner: Owner,
    pub id: u32,
    /// Data: offset of the first payload byte in the stream (segment × MSS);
    /// datagram: its number × its size. ACK: 0.
    pub seq_bytes: u64,
    /// ACK: next byte expected (cumulative ACK × MSS, at most the transfer's size). Else 0.
    pub ack_bytes: u64,
    /// Bytes on the wire (payload and headers).
    pub size_bytes: u32,
    pub payload_bytes: u32,
    pub flags: u8,
    pub ecn: u8,
}

/// The log's columns and window. Empty and closed unless
/// [`crate::Simulator::set_packet_log`] was called.
#[derive(Debug, Default)]
pub struct PacketLog {
    /// Window [from, to), ps.
    pub from: u64,
    pub to: u64,
    pub time_ns: Vec<u64>,
    pub link: Vec<u8>,
    pub event: Vec<u8>,
    pub reason: Vec<u8>,
    pub owner: Vec<u8>,
    pub id: Vec<u32>,
    pub seq_bytes: Vec<u64>,
    pub ack_bytes: Vec<u64>,
    pub size_bytes: Vec<u32>,
    pub payload_bytes: Vec<u32>,
    pub flags: Vec<u8>,
    pub ecn: Vec<u8>,
    /// Each port's `Qdisc::aqm_drops` accounted for by logged drops, to tell
    /// the discipline's drops from overflow.
    pub aqm_seen: Vec<u64>,
}

impl PacketLog {
    /// An empty log for the window [from, to) (ps) with room for `rows` rows.
    pub fn new(from: u64, to: u64, rows: usize) -> PacketLog {
        PacketLog {
            from,
            to,
            time_ns: Vec::with_capacity(rows),
            link: Vec::with_capacity(rows),
            event: Vec::with_capacity(rows),
            reason: Vec::with_capacity(rows),
            owner: Vec::with_capacity(rows),
            id: Vec::with_capacity(rows),
            seq_bytes: Vec::with_capacity(rows),
            ack_bytes: Vec::with_capacity(rows),
            size_bytes: Vec::with_capacity(rows),
            payload_bytes: Vec::with_capacity(rows),
            flags: Vec::with_capacity(rows),
            ecn: Vec::with_capacity(rows),
            aqm_seen: Vec::new(),
        }
    }

    /// Like [`PacketLog::new`], with the room written once, so that an owner
    /// that runs in real time (the emulator) takes no page faults while it logs.
    pub fn new_touched(from: u64, to: u64, rows: usize) -> PacketLog {
        fn touch<T: Copy + Default>(v: &mut Vec<T>) {
            v.resize(v.capacity(), T::default());
            v.clear();
        }
        let mut log = PacketLog::new(from, to, rows);
        touch(&mut log.time_ns);
        touch(&mut log.link);
        touch(&mut log.event);
        touch(&mut log.reason);
        touch(&mut log.owner);
        touch(&mut log.id);
        touch(&mut log.seq_bytes);
        touch(&mut log.ack_bytes);
        touch(&mut log.size_bytes);
        touch(&mut log.payload_bytes);
        touch(&mut log.flags);
        touch(&mut log.ecn);
        log
    }

    /// Starts telling the disciplines' drops from overflow afresh, from
    /// each port's `Qdisc::aqm_drops` now (when the window opens).
    pub fn restart_aqm(&mut self, drops: impl IntoIterator<Item = u64>) {
        self.aqm_seen.clear();
        self.aqm_seen.extend(drops);
    }

    #[inline]
    pub fn push(&mut self, r: PacketRow) {
        self.time_ns.push(r.time_ns);
        self.link.push(r.link);
        self.event.push(r.event as u8);
        self.reason.push(r.reason as u8);
        self.owner.push(r.owner as u8);
        self.id.push(r.id);
        self.seq_bytes.push(r.seq_bytes);
        self.ack_bytes.push(r.ack_bytes);
        self.size_bytes.push(r.size_bytes);
        self.payload_bytes.push(r.payload_bytes);
        self.flags.push(r.flags);
        self.ecn.push(r.ecn);
    }

    /// Rows held.
    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// Forgets the rows, keeping the buffers for the next ones.
    pub fn clear(&mut self) {
        self.time_ns.clear();
        self.link.clear();
        self.event.clear();
        self.reason.clear();
        self.owner.clear();
        self.id.clear();
        self.seq_bytes.clear();
        self.ack_bytes.clear();
        self.size_bytes.clear();
        self.payload_bytes.clear();
        self.flags.clear();
        self.ecn.clear();
    }

    /// The columns as (name, numpy dtype, little-endian bytes), for the
    /// Python layer and for tests that compare runs byte for byte.
    pub fn columns(&self) -> Vec<(&'static str, &'static str, Vec<u8>)> {
        fn le<const N: usize, T: Copy>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
            let mut out = Vec::with_capacity(v.len() * N);
            for &x in v {
                out.extend_from_slice(&f(x));
            }
            out
        }
        vec![
            ("time_ns", "<u8", le(&self.time_ns, u64::to_le_bytes)),
            ("link", "|u1", self.link.clone()),
            ("event", "|u1", self.event.clone()),
            ("reason", "|u1", self.reason.clone()),
            ("owner", "|u1", self.owner.clone()),
            ("id", "<u4", le(&self.id, u32::to_le_bytes)),
            ("seq_bytes", "<u8", le(&self.seq_bytes, u64::to_le_bytes)),
            ("ack_bytes", "<u8", le(&self.ack_bytes, u64::to_le_bytes)),
            ("size_bytes", "<u4", le(&self.size_bytes, u32::to_le_bytes)),
            ("payload_bytes", "<u4", le(&self.payload_bytes, u32::to_le_bytes)),
            ("flags", "|u1", self.flags.clone()),
            ("ecn", "|u1", self.ecn.clone()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: u64) -> PacketRow {
        PacketRow {
            time_ns: t,
            link: 0,
            event: PacketEvent::Drop,
            reason: DropReason::Aqm,
            owner: Owner::Flow,
            id: 1,
            seq_bytes: 1448,
            ack_bytes: 0,
            size_bytes: 1500,
            payload_bytes: 1448,
            flags: FLAG_RETRANS,
            ecn: ECN_ECT0,
        }
    }

    #[test]
    fn clear_keeps_the_buffers() {
        let mut log = PacketLog::new(0, 10, 4);
        for t in 0..4 {
            log.push(row(t));
        }
        let cap = log.time_ns.capacity();
        log.clear();
        assert!(log.is_empty());
        assert_eq!(log.time_ns.capacity(), cap);
    }

    #[test]
    fn columns_are_little_endian_in_order() {
        let mut log = PacketLog::new(0, 10, 1);
        log.push(row(258));
        let cols = log.columns();
        assert_eq!(cols[0], ("time_ns", "<u8", vec![2, 1, 0, 0, 0, 0, 0, 0]));
        assert_eq!(cols[2], ("event", "|u1", vec![PacketEvent::Drop as u8]));
        assert_eq!(cols[3], ("reason", "|u1", vec![DropReason::Aqm as u8]));
    }
}
