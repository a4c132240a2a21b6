//! The emulator's core: a dumbbell bottleneck, or links in a line, in real
//! time, independent of devices and clocks so that it can be tested with
//! made-up times.
//!
//! ```text
//!  sender TUN ──► [forward port: qdisc → rate C] ──(rtt_i/2)──► receiver TUN
//!  sender TUN ◄──(rtt_i/2)── [reverse port: qdisc → rate C_r] ◄── receiver TUN
//! ```
//!
//! The ports, their queue disciplines and the delay lines are the
//! simulator's own ([`sim::net::Port`], [`sim::net::DelayLine`]); the event
//! queue is the simulator's too. Packets are stored in a slab whose slot
//! numbers are the [`sim::packet::PacketId`]s the queues hold.
//!
//! Time is picoseconds since an epoch chosen by the caller. The link runs on
//! an exact schedule: a transmission ends exactly `wire·8/C` after it
//! started and a packet is due exactly one delay after that. A late caller
//! makes deliveries late, which is measured (`lateness`) and never
//! accumulates; with [`EngineConfig::pause_stalls`], a caller more than
//! [`STALL`] behind pauses the whole path for as long instead (see
//! [`Stalls`]), so that nothing leaves faster than the link and the lines
//! allow.
//!
//! Links may have the simulator's link models ([`sim::linkmodel`]): the
//! forward and reverse ports take a [`PortModel`] (capacity over time from
//! a schedule or a Mahimahi trace, a token-bucket policer or shaper, batch
//! release of arrivals), and each flow's line after a link with jitter a
//! [`LineModel`]. The models count time from the start of the measurement
//! (the simulator's time 0, when flows with no start offset start): the
//! engine converts its own clock on the way in and back on the way out.
//! Before that the ports run as ideal links (connection set-up), while the
//! lines' jitter applies from the first packet (its delay steps counted
//! from time 0). With [`EngineConfig::pause_stalls`] a pause moves the
//! models' time 0 with the rest of the path.
//!
//! A network of several links (a parking lot, or links in a line) runs
//! through the same ports: every flow has a route ([`sim::Route`]), the
//! links its data cross in order and those its ACKs cross, and a packet
//! leaving a link waits on the flow's line after it (that link's delay)
//! before it reaches the next link of its route, as in the simulator:
//!
//! ```text
//!  sender TUN ──► [link a] ──(delay a)──► [link b] ──(rest of rtt_i/2)──► receiver TUN
//! ```
//!
//! The line after a route's last link takes the rest of the flow's one-way
//! delay. Link 0 is the one measured (the queue trace's and the summary's
//! `queue`); link 1 is its reverse twin.
//!
//! Flows are told apart by the receiver's TCP port: flow i listens on
//! `port_base + i`, so data carry it as destination and ACKs as source.
//! Anything else (ICMP, UDP probes) is "other" traffic with its own delay.
//!
//! Measurement is the simulator's: per flow, wire bytes whose last bit left
//! the forward port in each interval; per interval, the backlog at its end,
//! drops and bytes sent; queueing delay from enqueue to start of
//! transmission. In addition the emulator follows each flow's sequence
//! numbers: payload bytes delivered to the receiver for the first time
//! (what the receiving application can read) and RTT samples (a data
//! segment's arrival from the sender to the delivery of the ACK that covers
//! it, Karn's rule for retransmitted segments).
//!
//! With a window ([`EngineConfig::packet_log_ns`], `[measure] packets`)
//! the engine also keeps the simulator's packet log ([`sim::packet_log`]):
//! one row per enqueue, dequeue, drop (with its reason), CE mark and
//! delivery at each link, from the [`PortOwner`] hooks and the writes to
//! the devices. Events on its clock open and close it; outside the window
//! a hook costs one flag check. The rows go to buffers reserved (and
//! touched) when the engine is made, sized for the window at the links'
//! rates; a window that needs more grows them. Times are ns since the
//! start of the measurement; sequence numbers are relative to each flow's
//! first payload byte; a retransmission is a data segment starting below
//! the highest sequence its flow had sent when it arrived.

use crate::wire::{self, Meta};
use sim::event::{Event, EventQueue, Time, PS_PER_NS, PS_PER_US};
use sim::hist::Histogram;
use sim::linkmodel::{LineModel, LinkModel, PortModel};
use sim::net::{DelayLine, Hop, Port, PortCounters, Qdisc, QueueLimit};
use sim::packet::PacketId;
use sim::packet_log::{
    DropReason, Owner, PacketEvent, PacketLog, PacketRow, FLAG_ACK, FLAG_CWR, FLAG_ECE, FLAG_RETRANS,
};
use sim::qdisc::{PacketView, QdiscConfig};
use sim::rng::Rng;
use sim::service::{self, PortOwner};
use sim::traffic::{Loss, LossModel};
use sim::{Column, Conservation, Route};
use std::collections::VecDeque;

/// Most rows the packet log reserves (and touches) up front; a window that
/// needs more grows its buffers by doubling.
const MAX_LOG_ROWS: usize = 1 << 24;

/// The simulator's random stream number for bottleneck loss, so that the
/// same seed draws the same sequence in both backends.
pub const STREAM_BOTTLENECK_LOSS: u64 = 1;
/// The simulator's stream for the reverse link's loss (unused: the
/// emulator's reverse link is lossless).
pub const STREAM_REVERSE_LOSS: u64 = 2;
/// The simulator's streams for the queue disciplines' coin flips.
pub const STREAM_BOTTLENECK_QDISC: u64 = 3;
pub const STREAM_REVERSE_QDISC: u64 = 4;
/// The simulator's streams for jitter: line i draws from stream
/// `STREAM_JITTER_BASE + i`. The simulator gives each flow a line before
/// the first link of each of its routes and one after every link (in the
/// dumbbell, flow f's lines after the forward and reverse links are its
/// lines 4f + 1 and 4f + 3; crates/sim/src/sim.rs, `init_slot`); the
/// emulator's line after a link draws from the simulator's line there.
pub const STREAM_JITTER_BASE: u64 = 1 << 34;
/// The simulator's streams for the links beyond the first two: link i's
/// loss draws from `STREAM_LINK_BASE + 2(i − 2)`, its discipline from the
/// stream after.
pub const STREAM_LINK_BASE: u64 = 3_000;

/// A finish time for a link that never serves again (a schedule ending in
/// an outage, a trace played once): far enough to be never, low enough
/// that delaying it for a pause cannot overflow.
const NEVER: Time = Time::MAX / 4;

pub use sim::Columns;

/// The queue trace's columns, as the simulator names them: backlog at the
/// end of the interval; drops, bytes sent and bytes of other traffic
/// ("background") in the interval; reverse backlog; flows (slots) in use.
pub const QUEUE_COLUMNS: [&str; 8] = [
    "t_ns",
    "backlog_bytes",
    "backlog_pkts",
    "drops",
    "tx_bytes",
    "background_bytes",
    "reverse_backlog_pkts",
    "flow_slots",
];

/// The per-link trace's columns, as the simulator names them (networks
/// only): one row per link per interval, with the backlog at the end of the
/// interval and the drops, CE marks and bytes sent in it.
pub const LINK_COLUMNS: [&str; 7] = ["t_ns", "link", "backlog_bytes", "backlog_pkts", "drops", "marks", "tx_bytes"];

/// Most packets coalesced into one write (Linux's GRO stops at 64 segments).
const MAX_COALESCE: usize = 64;

/// Data segments remembered per flow for RTT samples (bounded memory).
const MAX_PENDING: usize = 1 << 20;

/// Behind its schedule by more than this, the emulator is stalled (see
/// [`Stalls`]).
pub const STALL: Time = 1_000_000_000;

/// Times the emulator found itself more than [`STALL`] behind its schedule
/// (the host taking its CPU is the usual cause), and for how long.
///
/// By default what fell due meanwhile is delivered at once and the schedule
/// kept; a stall is then a stretch of deliveries more than [`STALL`] late,
/// counted once, by its first delivery's lateness. ACKs held up together
/// reach the sender together, and a delivery-rate sample from a held-up ACK
/// to one that came on time, in a round in which the queue grows (BBR's
/// probing), comes out too high by up to the stall over the round trip
/// (BBR keeps the largest sample of ten round trips).
///
/// With [`EngineConfig::pause_stalls`] the links, queues and delay lines
/// stop for as long as the earliest thing due was late, as if the path had
/// been cut: everything in them happens that much later, in the same order
/// and with the same spacing, and what the senders sent meanwhile waits in
/// the bottleneck's queue. Nothing leaves faster than the link; the price
/// is the link's time (a paused link carries nothing), the delay added to
/// everything in flight, and a backlog that stays until the senders drain
/// it. A stall is then one pause, counted by its length.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stalls {
    pub count: u64,
    /// Sum and largest of the stalls' lengths, ps.
    pub total: Time,
    pub longest: Time,
}

impl Stalls {
    fn add(&mut self, length: Time) {
        self.count += 1;
        self.total += length;
        self.longest = self.longest.max(length);
    }
}

/// A link's model counters, named (see [`Engine::model_counters`]).
type Counters = Vec<(&'static str, u64)>;

const FWD: usize = 0;
const REV: usize = 1;

/// One of the two TUN devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The senders' namespace: data come from here, ACKs go here.
    Snd,
    /// The receivers' namespace.
    Rcv,
}

/// What a write to a device carried: the flow of its packets and the time
/// the last of them was due (the write is late by its time minus `due`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cause {
    pub flow: u32,
    pub due: Time,
}

/// A packet read from the receivers' device right after a write of flow
/// `flow` whose last packet was `due` and that ended at `written`; the
/// packet was read at `read`. If it belongs to the same flow, it is that
/// write's answer (an ACK the receiving TCP sent while taking the data), and
/// the write's lateness is taken back on its way to the sender: it is due
/// one delay after the time it would have left had the data arrived on
/// time, `due + (read − written)`, instead of one delay after it was read.
/// The sender then sees the path's delays as configured however late the
/// emulator got round to the data (the receiver alone sees the lateness,
/// which is measured as before). Any other packet from a flow's receiver
/// (an ACK sent when the application read, or on a timer) is taken to
/// answer the flow's last write: the lateness of that write comes off its
/// delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    pub flow: u32,
    pub due: Time,
    pub written: Time,
    pub read: Time,
}

/// A link: rate and queue limit.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    pub rate_bps: u64,
    pub limit: QueueLimit,
    /// The simulator's queue discipline (capacity `limit`).
    pub qdisc: QdiscConfig,
    /// The link's models; the default is an ideal link.
    pub model: LinkModel,
    /// The link's own propagation delay, ns (part of each flow's one-way
    /// delay): what the model's delay steps replace, and in a network the
    /// delay between this link and the next of a route.
    pub delay_ns: u64,
    /// Bernoulli loss probability of data segments arriving at the link,
    /// for links beyond the first two (the forward link's is
    /// [`EngineConfig::loss`]; the reverse link is lossless).
    pub loss: f64,
}

impl LinkSpec {
    /// An ideal link.
    pub fn new(rate_bps: u64, limit: QueueLimit, qdisc: QdiscConfig) -> LinkSpec {
        LinkSpec { rate_bps, limit, qdisc, model: LinkModel::default(), delay_ns: 0, loss: 0.0 }
    }
}

/// The bottleneck and measurement, fully resolved.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub fwd: LinkSpec,
    pub rev: LinkSpec,
    /// Bernoulli loss probability of data segments arriving at the forward port.
    pub loss: f64,
    pub seed: u64,
    pub duration_ns: u64,
    pub interval_ns: u64,
    pub trace: bool,
    /// Flow i's receiver listens on `port_base + i`.
    pub port_base: u16,
    /// One-way delay of flow i in each direction, ns (half its RTT).
    pub flow_delay_ns: Vec<u64>,
    /// One-way delay of other traffic, ns.
    pub other_delay_ns: u64,
    /// Largest packet the devices carry (the slot size), bytes.
    pub max_packet: usize,
    /// The devices read and write frames (a [`wire::VnetHdr`] before each
    /// packet, [`crate::sys::tun_create`] with offload): packets are taken
    /// with [`Engine::ingress_frame`], and the packets of a flow due by the
    /// time of a write are coalesced into one where a receiver's GRO would.
    pub frames: bool,
    /// What a stall does (see [`Stalls`]): pause the path (true), or
    /// deliver what fell due at once and keep the schedule (false).
    pub pause_stalls: bool,
    /// Links 2, 3, … of a network, beyond `fwd` (link 0) and `rev` (link 1).
    pub links: Vec<LinkSpec>,
    /// Each flow's route over links 0, 1, 2, … (data from the senders' side
    /// to the receivers', ACKs back); empty: the dumbbell, data on link 0
    /// and ACKs on link 1. Other traffic takes the dumbbell's route.
    pub routes: Vec<Route>,
    /// The packet log's window [from, to), ns since the start of the
    /// measurement (`[measure] packets`); none: no log (see [`Engine::packet_log`]).
    pub packet_log_ns: Option<(u64, u64)>,
}

impl EngineConfig {
    /// Link `i` (0 forward, 1 reverse, then [`EngineConfig::links`]).
    pub fn link(&self, i: usize) -> &LinkSpec {
        match i {
            FWD => &self.fwd,
            REV => &self.rev,
            _ => &self.links[i - 2],
        }
    }

    /// The number of links.
    pub fn n_links(&self) -> usize {
        2 + self.links.len()
    }

    /// Whether this is a network beyond the dumbbell.
    pub fn is_network(&self) -> bool {
        !self.routes.is_empty() || !self.links.is_empty()
    }

    /// The route of flow `f` (the dumbbell's for other traffic).
    fn route(&self, f: usize) -> Route {
        self.routes.get(f).cloned().unwrap_or(Route {
            data: vec![FWD as u32],
            ack: vec![REV as u32],
            measure: FWD as u32,
        })
    }
}

/// A packet read from a device, with what the engine knows of it.
pub struct Slot {
    buf: Box<[u8]>,
    len: u32,
    flow: u32,
    meta: Meta,
    enqueued_at: Time,
    /// Time taken off the packet's delay on its line (see [`Answer`]).
    credit: Time,
    /// Read from the receivers' side (an ACK's direction).
    from_rcv: bool,
    /// Links of its route the packet has left.
    hop: u32,
    /// A data segment starting below the highest sequence its flow had sent
    /// when it arrived (for the packet log).
    retrans: bool,
}

/// The packet slots; the queue disciplines see them through
/// [`PacketView`]. ECN bits are the IPv4 header's; CE is set in the packet
/// itself (checksum updated).
#[derive(Default)]
pub struct Slots {
    v: Vec<Slot>,
    /// While the packet log is open: the packets CE-marked since the log last looked.
    log_marks: bool,
    marked: Vec<PacketId>,
}

impl std::ops::Deref for Slots {
    type Target = Vec<Slot>;
    fn deref(&self) -> &Vec<Slot> {
        &self.v
    }
}

impl std::ops::DerefMut for Slots {
    fn deref_mut(&mut self) -> &mut Vec<Slot> {
        &mut self.v
    }
}

impl PacketView for Slots {
    fn wire_len(&self, id: PacketId) -> u32 {
        self.v[id as usize].len
    }
    fn enqueued_at(&self, id: PacketId) -> Time {
        self.v[id as usize].enqueued_at
    }
    fn ect(&self, id: PacketId) -> bool {
        let s = &self.v[id as usize];
        matches!(wire::ecn(&s.buf[..s.len as usize]), 1 | 2)
    }
    fn codepoint(&self, id: PacketId) -> u8 {
        let s = &self.v[id as usize];
        wire::ecn(&s.buf[..s.len as usize])
    }
    fn set_ce(&mut self, id: PacketId) {
        let s = &mut self.v[id as usize];
        wire::set_ce(&mut s.buf[..s.len as usize]);
        if self.log_marks {
            self.marked.push(id);
        }
    }
    /// Flow index and TCP/UDP ports, so that other traffic spreads too.
    fn flow_key(&self, id: PacketId) -> u64 {
        let s = &self.v[id as usize];
        ((s.flow as u64) << 32) | ((s.meta.sport as u64) << 16) | s.meta.dport as u64
    }
}

/// Per-flow counters and sequence tracking.
#[derive(Default)]
struct FlowAcc {
    interval_bytes: u64,
    bottleneck_bytes: u64,
    drops: u64,
    /// Payload delivered to the receiver for the first time, in the window / ever.
    payload_bytes: u64,
    payload_total: u64,
    rcv_have: bool,
    rcv_high: u32,
    snd_have: bool,
    snd_high: u32,
    /// `snd_high` as an offset from the flow's first payload byte (its
    /// SYN's sequence + 1, or the first data seen), unwrapped.
    snd_high64: u64,
    /// (end sequence, arrival from the sender, retransmitted) of data segments not yet acknowledged.
    pending: VecDeque<(u32, Time, bool)>,
    /// RTT samples, µs.
    rtt: Histogram,
    /// How late the last write to the receiver was (see [`Answer`]).
    late_by: Time,
    /// Wire bytes of its data that left each link of its data route.
    link_bytes: Vec<u64>,
}

/// Statistics of a finished measurement.
pub struct FlowReport {
    pub bottleneck_bytes: u64,
    pub drops: u64,
    pub payload_bytes: u64,
    pub payload_total: u64,
    pub rtt: Histogram,
    /// (link, wire bytes of data that left it) for each link of the data route.
    pub link_bytes: Vec<(u32, u64)>,
}

/// One link's packets since the engine was made: every packet that arrived
/// left it, was dropped, or is still there (queued, on the wire or held by
/// its model).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkConservation {
    pub arrived: u64,
    pub sent: u64,
    pub dropped: u64,
    pub held: u64,
}

impl LinkConservation {
    pub fn holds(&self) -> bool {
        self.arrived == self.sent + self.dropped + self.held
    }
}

pub struct Engine {
    cfg: EngineConfig,
    q: EventQueue,
    /// Deliveries to the senders, apart from `q` so that the caller can
    /// wake for them without waiting for more to batch ([`Engine::next_wake`]).
    to_senders: EventQueue,
    ports: Vec<Port>,
    /// Each flow's route (flows 0..=n; n is "other").
    routes: Vec<Route>,
    /// Flow f's lines from `line0[f]`: one after each link of its data
    /// route, then one after each link of its ACK route (the dumbbell:
    /// 2·f forward, 2·f+1 reverse). A line's `next` is the next link or
    /// the device.
    line0: Vec<usize>,
    lines: Vec<DelayLine>,
    /// The jitter of each line (the link before it has jitter or delay
    /// steps). Times in a reordering line's store are the engine's; an
    /// order-preserving line keeps its packets in the [`DelayLine`].
    line_models: Vec<Option<Box<LineModel>>>,
    /// A batch being released (reused).
    released: Vec<PacketId>,
    /// Each link's model counters when the measurement started and when it ended.
    counters_at: [Option<Vec<Counters>>; 2],
    /// The ports' counters at the end of the measurement.
    port_counters: Option<Vec<PortCounters>>,
    /// Each link's packets since the engine was made (see [`LinkConservation`]).
    link_packets: Vec<LinkConservation>,
    slots: Slots,
    free: Vec<PacketId>,
    flows: Vec<FlowAcc>,
    t0: Option<Time>,
    end: Time,
    probe_k: u64,
    done: bool,
    /// Queueing delay at each link, ns.
    delays: Vec<Histogram>,
    /// Delivery lateness (actual write minus due time), ns, per direction.
    lateness: [Histogram; 2],
    /// Stalls in the measurement (see [`Stalls`]), and, without pauses,
    /// when the last one's deliveries were written.
    stalls: Stalls,
    stall_end: Time,
    trace_t: Vec<u64>,
    trace_flow: Vec<u32>,
    trace_bytes: Vec<u64>,
    trace_t_queue: Vec<u64>,
    /// Queue trace columns, in [`QUEUE_COLUMNS`] order.
    queue_trace: [Vec<u64>; 7],
    /// Bytes the forward link could send in each interval, when its
    /// capacity changes over time (the simulator's `capacity_bytes`).
    trace_capacity: Vec<u64>,
    last_probe: Time,
    interval_drops: u64,
    interval_tx_bytes: u64,
    created: u64,
    delivered: u64,
    dropped: u64,
    /// Each port's discipline's (CE marks, AQM drops) when the measurement started.
    aqm_at_start: Vec<(u64, u64)>,
    /// The per-link trace (networks), in [`LINK_COLUMNS`] order, and each
    /// link's (drops, marks, bytes sent) at the last probe.
    link_trace: [Vec<u64>; 7],
    link_seen: Vec<[u64; 3]>,
    events: u64,
    bottleneck_data_packets: u64,
    not_ipv4: u64,
    bad_frames: u64,
    super_packets: u64,
    coalesced_writes: u64,
    coalesced_packets: u64,
    /// Credit given to packets from the flows' receivers (see [`Answer`]),
    /// ns, in the measurement.
    credit: Histogram,
    /// The `now` of the current [`Engine::run_until`].
    horizon: Time,
    /// Packets of one write and their due times (reused).
    group: Vec<(PacketId, Time)>,
    /// A coalesced packet being built.
    frame: Vec<u8>,
    snapshot: Option<Conservation>,
    /// The packet log (see [`Engine::packet_log`]), open while `logging`;
    /// `now` is the time of the port operation in progress (the hooks of
    /// [`PortOwner`] that log are not told it).
    log: PacketLog,
    logging: bool,
    now: Time,
}

#[inline]
fn ns(t: u64) -> Time {
    t * PS_PER_NS
}

/// The packet log of an engine: empty, or (with a window) with room for the
/// rows its window should need, reserved and touched now so that logging
/// allocates nothing and takes no page faults: about eight rows per packet
/// the data links could carry at full-size packets (enqueue, dequeue and
/// delivery of a segment and of an ACK, and drops), at most [`MAX_LOG_ROWS`].
fn new_log(cfg: &EngineConfig) -> PacketLog {
    let Some((from, to)) = cfg.packet_log_ns else {
        return PacketLog::default();
    };
    let packets_per_s = cfg.fwd.rate_bps as f64 / (8.0 * cfg.max_packet.max(576) as f64);
    let links = (cfg.n_links() / 2).max(1) as f64;
    let rows = ((to - from) as f64 / 1e9 * packets_per_s * 8.0 * links + 4096.0).min(MAX_LOG_ROWS as f64) as usize;
    PacketLog::new_touched(NEVER, NEVER, rows)
}

/// The engine as the owner of its two ports (see [`sim::service`]): the
/// port code is the simulator's; what the engine adds is its measurement
/// window and its own event queue.
impl PortOwner for Engine {
    type Packets = Slots;

    #[inline]
    fn port(&mut self, p: usize) -> (&mut Port, &mut Slots) {
        (&mut self.ports[p], &mut self.slots)
    }

    #[inline]
    fn stamp(&mut self, id: PacketId, now: Time) {
        self.slots[id as usize].enqueued_at = now;
    }

    fn dropped(&mut self, p: usize, id: PacketId, random: bool, now: Time) {
        self.link_packets[p].dropped += 1;
        if self.logging {
            self.log_drop(p, id, random, now);
        }
        self.drop_packet(p, id, now);
    }

    #[inline(always)]
    fn enqueued(&mut self, p: usize, id: PacketId) {
        if self.logging {
            self.log_enqueue(p, id);
        }
    }

    #[inline(always)]
    fn dequeued(&mut self, p: usize, next: Option<PacketId>) {
        if self.logging {
            self.log_dequeue(p, next);
        }
    }

    fn started(&mut self, p: usize, _id: PacketId, now: Time, end: Time, waited: Time) {
        self.q.push(end.min(NEVER), Event::PortTxDone(p as u32));
        if self.in_window(now) {
            self.delays[p].record(waited / PS_PER_NS);
        }
    }

    fn held(&mut self, p: usize, now: Time, at: Time, generation: u32) {
        if at <= now {
            self.release_batch(p, generation, now);
        } else {
            self.q.push(at, Event::LinkRelease(p as u32, generation));
        }
    }
}

impl Engine {
    pub fn new(cfg: EngineConfig) -> Engine {
        let n = cfg.flow_delay_ns.len();
        let n_links = cfg.n_links();
        let qdisc = |l: &LinkSpec, stream: u64, seed: u64| {
            Qdisc::new(&l.qdisc, l.limit, l.rate_bps, Rng::new(cfg.seed, stream), seed)
        };
        let loss = LossModel::Bernoulli { p: cfg.loss };
        let mut ports = vec![
            Port::with_qdisc(
                cfg.fwd.rate_bps,
                qdisc(&cfg.fwd, STREAM_BOTTLENECK_QDISC, cfg.seed ^ STREAM_BOTTLENECK_QDISC),
                Loss::new(loss, Rng::new(cfg.seed, STREAM_BOTTLENECK_LOSS)),
            ),
            Port::with_qdisc(
                cfg.rev.rate_bps,
                qdisc(&cfg.rev, STREAM_REVERSE_QDISC, cfg.seed ^ STREAM_REVERSE_QDISC),
                Loss::new(LossModel::None, Rng::new(cfg.seed, STREAM_REVERSE_LOSS)),
            ),
        ];
        // Links beyond the first two draw from the simulator's streams for them.
        for (k, link) in cfg.links.iter().enumerate() {
            let stream = STREAM_LINK_BASE + 2 * k as u64;
            let loss = if link.loss > 0.0 { LossModel::Bernoulli { p: link.loss } } else { LossModel::None };
            ports.push(Port::with_qdisc(
                link.rate_bps,
                qdisc(link, stream + 1, cfg.seed ^ (k as u64 + 2)),
                Loss::new(loss, Rng::new(cfg.seed, stream)),
            ));
        }
        for (i, port) in ports.iter_mut().enumerate() {
            let link = cfg.link(i);
            if link.model.needs_port_model() {
                port.model = Some(Box::new(PortModel::new(&link.model)));
            }
            // The models run from the start of the measurement.
            port.model_from = NEVER;
        }
        // Each flow's lines: after each link of its data route, then of its
        // ACK route. The line after a route's last link takes the rest of
        // the one-way delay; the one after any other link, that link's delay.
        let routes: Vec<Route> = (0..=n).map(|f| cfg.route(f)).collect();
        let mut lines = Vec::new();
        let mut line0 = Vec::with_capacity(n + 1);
        let mut line_models: Vec<Option<Box<LineModel>>> = Vec::new();
        // The simulator's index of the flow's first line (its slots have a
        // line before the first link of each route too): jitter streams follow it.
        let mut sim_line = 0u64;
        for (f, route) in routes.iter().enumerate() {
            let one_way = ns(if f < n { cfg.flow_delay_ns[f] } else { cfg.other_delay_ns });
            line0.push(lines.len());
            for (links, end) in [(&route.data, Hop::Receiver(f as u32)), (&route.ack, Hop::Sender(f as u32))] {
                let mut before = 0;
                for (k, &l) in links.iter().enumerate() {
                    let link = cfg.link(l as usize);
                    let (delay, next) = match links.get(k + 1) {
                        Some(&next) => (ns(link.delay_ns), Hop::Port(next)),
                        None => (one_way.saturating_sub(before), end),
                    };
                    before += delay;
                    lines.push(DelayLine::new(delay, next));
                    line_models.push(link.model.jitter.as_ref().map(|j| {
                        let rng = Rng::new(cfg.seed, STREAM_JITTER_BASE + sim_line + k as u64 + 1);
                        Box::new(LineModel::new(j, l, ns(link.delay_ns), rng))
                    }));
                }
                sim_line += links.len() as u64 + 1;
            }
        }
        Engine {
            q: EventQueue::new(),
            to_senders: EventQueue::new(),
            ports,
            routes,
            line0,
            lines,
            line_models,
            released: Vec::new(),
            counters_at: [None, None],
            port_counters: None,
            link_packets: vec![LinkConservation::default(); n_links],
            slots: Slots::default(),
            free: Vec::new(),
            flows: (0..=n)
                .map(|f| FlowAcc { link_bytes: vec![0; cfg.route(f).data.len()], ..FlowAcc::default() })
                .collect(),
            t0: None,
            end: 0,
            probe_k: 0,
            done: false,
            delays: vec![Histogram::new(); n_links],
            lateness: [Histogram::new(), Histogram::new()],
            stalls: Stalls::default(),
            stall_end: 0,
            trace_t: Vec::new(),
            trace_flow: Vec::new(),
            trace_bytes: Vec::new(),
            trace_t_queue: Vec::new(),
            queue_trace: Default::default(),
            trace_capacity: Vec::new(),
            last_probe: 0,
            interval_drops: 0,
            interval_tx_bytes: 0,
            created: 0,
            delivered: 0,
            dropped: 0,
            aqm_at_start: vec![(0, 0); n_links],
            link_trace: Default::default(),
            link_seen: vec![[0; 3]; n_links],
            events: 0,
            bottleneck_data_packets: 0,
            not_ipv4: 0,
            bad_frames: 0,
            super_packets: 0,
            coalesced_writes: 0,
            coalesced_packets: 0,
            credit: Histogram::new(),
            horizon: 0,
            group: Vec::with_capacity(MAX_COALESCE),
            frame: vec![0u8; if cfg.frames { u16::MAX as usize } else { 0 }],
            snapshot: None,
            log: new_log(&cfg),
            logging: false,
            now: 0,
            cfg,
        }
    }

    pub fn config(&self) -> &EngineConfig {
        &self.cfg
    }

    pub fn n_flows(&self) -> usize {
        self.flows.len() - 1
    }

    /// Starts the measurement at `t0`; it ends `duration` later. Traffic
    /// before `t0` (connection set-up) is forwarded but not counted.
    pub fn start(&mut self, t0: Time) {
        self.t0 = Some(t0);
        self.last_probe = t0;
        self.counters_at[0] = Some((0..self.ports.len()).map(|p| self.counters_now(p)).collect());
        self.end = t0 + ns(self.cfg.duration_ns);
        for (i, p) in self.ports.iter_mut().enumerate() {
            self.aqm_at_start[i] = (p.qdisc.marks(), p.qdisc.aqm_drops());
            p.counters = PortCounters::default();
            p.model_from = t0;
        }
        for f in &mut self.flows {
            f.interval_bytes = 0;
            f.bottleneck_bytes = 0;
            f.drops = 0;
            f.payload_bytes = 0;
            f.rtt.clear();
            f.link_bytes.fill(0);
        }
        for (i, p) in self.ports.iter().enumerate() {
            self.link_seen[i] = [p.counters.drops, p.qdisc.marks(), p.counters.tx_bytes];
        }
        self.probe_k = 1;
        self.q.push(self.probe_time(1), Event::Probe);
        if let Some((from, to)) = self.cfg.packet_log_ns {
            // On the measurement's clock, like the probes (a pause does not move it).
            self.log.from = t0 + ns(from);
            self.log.to = t0 + ns(to);
            self.q.push(self.log.from, Event::PacketLog(true));
            self.q.push(self.log.to, Event::PacketLog(false));
        }
    }

    /// Whether the measurement has ended.
    pub fn finished(&self) -> bool {
        self.done
    }

    /// End of the measurement, if started.
    pub fn end_time(&self) -> Option<Time> {
        self.t0.map(|_| self.end)
    }

    fn probe_time(&self, k: u64) -> Time {
        let t0 = self.t0.expect("started");
        t0 + ns((k * self.cfg.interval_ns).min(self.cfg.duration_ns))
    }

    /// The models' time 0: the start of the measurement, later by the pauses
    /// since ([`NEVER`] before the start: connection set-up runs on ideal
    /// links). Both ports keep it as their `model_from`.
    #[inline]
    fn model_epoch(&self) -> Time {
        self.ports[FWD].model_from
    }

    #[inline]
    fn in_window(&self, t: Time) -> bool {
        match self.t0 {
            Some(t0) => !self.done && t >= t0 && t <= self.end,
            None => false,
        }
    }

    /// A free slot to read a packet into; give it back with [`Engine::ingress`] or [`Engine::release`].
    pub fn alloc(&mut self) -> PacketId {
        if let Some(id) = self.free.pop() {
            return id;
        }
        self.slots.push(Slot {
            buf: vec![0u8; self.cfg.max_packet].into_boxed_slice(),
            len: 0,
            flow: 0,
            meta: Meta::default(),
            enqueued_at: 0,
            credit: 0,
            from_rcv: false,
            hop: 0,
            retrans: false,
        });
        (self.slots.len() - 1) as PacketId
    }

    pub fn buf_mut(&mut self, id: PacketId) -> &mut [u8] {
        &mut self.slots[id as usize].buf
    }

    /// Returns an allocated slot unused.
    pub fn release(&mut self, id: PacketId) {
        self.free.push(id);
    }

    /// Time of the next thing to do, if any.
    pub fn next_event(&self) -> Option<Time> {
        self.next_wake(0)
    }

    /// Time of the next delivery to the senders, if any.
    pub fn next_to_senders(&self) -> Option<Time> {
        self.to_senders.peek_time()
    }

    /// When the caller should next run the engine if it lets deliveries to
    /// the receivers wait `batch` to go out together (coalesced): a delivery
    /// to the senders is never held. Their ACKs time their sending, and
    /// holding ACKs back bunches them up: bandwidth samples of a sender
    /// like BBR's, taken from ACK arrivals, come out above the link's rate.
    pub fn next_wake(&self, batch: Time) -> Option<Time> {
        match (self.q.peek_time(), self.to_senders.peek_time()) {
            (Some(a), Some(b)) => Some(a.saturating_add(batch).min(b)),
            (a, b) => a.map(|a| a.saturating_add(batch)).or(b),
        }
    }

    fn flow_of(&self, m: &Meta, side: Side) -> u32 {
        let n = self.n_flows() as u32;
        if !m.tcp {
            return n;
        }
        let port = if side == Side::Snd { m.dport } else { m.sport };
        let i = port.wrapping_sub(self.cfg.port_base) as u32;
        if port >= self.cfg.port_base && i < n {
            i
        } else {
            n
        }
    }

    /// A packet of `len` bytes read into slot `id` from `from` at `now`,
    /// possibly the [`Answer`] to a write. Call [`Engine::run_until`] with
    /// `now` first.
    pub fn ingress(&mut self, now: Time, from: Side, id: PacketId, len: usize, answers: Option<Answer>) {
        let meta = wire::parse(&self.slots[id as usize].buf[..len]);
        if !meta.ipv4 {
            // IPv6 and anything else is not part of an experiment: dropped silently.
            self.not_ipv4 += 1;
            self.free.push(id);
            return;
        }
        let flow = self.flow_of(&meta, from);
        // A flow's receiver answering (other traffic gets no credit).
        let answering = from == Side::Rcv && (flow as usize) < self.n_flows();
        let credit = if answering {
            match answers {
                Some(a) if a.flow == flow => now.saturating_sub(a.due + a.read.saturating_sub(a.written)),
                _ => self.flows[flow as usize].late_by,
            }
        } else {
            0
        };
        {
            let s = &mut self.slots[id as usize];
            s.len = len as u32;
            s.flow = flow;
            s.meta = meta;
            s.credit = credit;
            s.from_rcv = from == Side::Rcv;
            s.hop = 0;
        }
        self.created += 1;
        let route = &self.routes[flow as usize];
        let p = if from == Side::Snd { route.data[0] } else { route.ack[0] } as usize;
        let w = self.in_window(now);
        if w && answering {
            self.credit.record(credit / PS_PER_NS);
        }
        self.slots[id as usize].retrans = from == Side::Snd && self.track_sent(flow as usize, &meta, now);
        self.arrive(p, id, now);
    }

    /// Packet `id` reaches link `p` at `now`; the link's random loss hits data segments.
    #[inline]
    fn arrive(&mut self, p: usize, id: PacketId, now: Time) {
        let meta = &self.slots[id as usize].meta;
        let is_data = meta.tcp && meta.payload > 0;
        self.link_packets[p].arrived += 1;
        self.now = now;
        service::arrive(self, p, id, now, is_data);
    }

    /// Port `p`'s held batch of generation `generation` enters its queue at
    /// `t`, in arrival order (a stale generation releases nothing).
    #[cold]
    #[inline(never)]
    fn release_batch(&mut self, p: usize, generation: u32, t: Time) {
        self.now = t;
        let mut out = std::mem::take(&mut self.released);
        service::release(self, p, generation, t, &mut out);
        self.released = out;
    }

    /// A frame read from a device opened with offload ([`crate::sys::tun_create`]):
    /// a [`wire::VnetHdr`] and a packet. A TCP super-packet is split into the
    /// segments its sender's TCP would have put on a link ([`wire::tso_segment`]),
    /// each entering the bottleneck at `now` as its own packet; a checksum
    /// left to the device is completed. Returns the number of packets that
    /// entered (0 for a frame too short or too large to carry).
    /// Call [`Engine::run_until`] with `now` first.
    pub fn ingress_frame(&mut self, now: Time, from: Side, frame: &mut [u8], answers: Option<Answer>) -> usize {
        let Some(h) = wire::VnetHdr::parse(frame) else {
            self.bad_frames += 1;
            return 0;
        };
        let pkt = &mut frame[wire::VNET_HDR_LEN..];
        let gso = h.gso_type & !wire::VNET_GSO_ECN;
        if gso == wire::VNET_GSO_TCPV4 {
            let size = h.gso_size as usize;
            let Some(layout) = wire::tso_layout(pkt, size) else {
                self.bad_frames += 1;
                return 0;
            };
            if layout.1 + size > self.cfg.max_packet {
                self.bad_frames += 1;
                return 0;
            }
            self.super_packets += 1;
            for k in 0..layout.2 {
                let id = self.alloc();
                let len = wire::tso_segment(pkt, size, layout, k, &mut self.slots[id as usize].buf);
                self.ingress(now, from, id, len, answers);
            }
            return layout.2;
        }
        if gso != wire::VNET_GSO_NONE || pkt.len() > self.cfg.max_packet {
            self.bad_frames += 1;
            return 0;
        }
        if h.flags & wire::VNET_F_NEEDS_CSUM != 0
            && !wire::complete_checksum(pkt, h.csum_start as usize, h.csum_offset as usize)
        {
            self.bad_frames += 1;
            return 0;
        }
        let id = self.alloc();
        self.slots[id as usize].buf[..pkt.len()].copy_from_slice(pkt);
        self.ingress(now, from, id, pkt.len(), answers);
        1
    }

    /// Frames from offloading devices that could not be taken apart (dropped).
    pub fn bad_frames(&self) -> u64 {
        self.bad_frames
    }

    /// TCP super-packets split into segments.
    pub fn super_packets(&self) -> u64 {
        self.super_packets
    }

    /// Credit given to packets from the flows' receivers ([`Answer`]) in
    /// the measurement, ns.
    pub fn credit(&self) -> &Histogram {
        &self.credit
    }

    /// Writes that carried coalesced packets, and the packets they carried.
    pub fn coalesced(&self) -> (u64, u64) {
        (self.coalesced_writes, self.coalesced_packets)
    }

    /// Accounts for packets the discipline dropped after admitting them.
    /// Accounts for a packet port `p` dropped (the port has counted it;
    /// the flows' and the interval's drops count in the measurement only).
    fn drop_packet(&mut self, p: usize, id: PacketId, now: Time) {
        let (flow, from_rcv) = {
            let s = &self.slots[id as usize];
            (s.flow as usize, s.from_rcv)
        };
        self.free.push(id);
        self.dropped += 1;
        if self.in_window(now) {
            if p == FWD {
                self.interval_drops += 1;
            }
            // A flow's drops: of what its sender sent, at any link.
            if !from_rcv {
                self.flows[flow].drops += 1;
            }
        }
    }

    /// A data segment from the sender: remembered for RTT samples; a
    /// segment at or below the highest sequence sent is a retransmission.
    /// Returns whether it is a retransmission.
    fn track_sent(&mut self, flow: usize, m: &Meta, now: Time) -> bool {
        if !m.tcp {
            return false;
        }
        let f = &mut self.flows[flow];
        if m.flags & wire::SYN != 0 {
            f.snd_have = true;
            f.snd_high = m.seq.wrapping_add(1);
            f.snd_high64 = 0;
            f.pending.clear();
            return false;
        }
        if m.payload == 0 {
            return false;
        }
        let end = m.seq.wrapping_add(m.payload);
        if !f.snd_have {
            f.snd_have = true;
            f.snd_high = m.seq;
            f.snd_high64 = 0;
        }
        let retrans = wire::seq_gt(f.snd_high, m.seq);
        if retrans {
            // Karn: no RTT sample from anything this segment overlaps.
            // Records are in sequence order; each covers the bytes up to its end.
            for e in f.pending.iter_mut() {
                if wire::seq_gt(e.0, m.seq) {
                    e.2 = true;
                    if wire::seq_le(end, e.0) {
                        break;
                    }
                }
            }
        }
        if wire::seq_gt(end, f.snd_high) {
            if f.pending.len() >= MAX_PENDING {
                f.pending.clear();
            }
            f.pending.push_back((end, now, retrans));
            f.snd_high64 += end.wrapping_sub(f.snd_high) as u64;
            f.snd_high = end;
        }
        retrans
    }

    /// An ACK delivered to the sender at `now`: one RTT sample from the
    /// oldest segment it newly acknowledges, unless a retransmission is among them.
    fn track_ack(&mut self, flow: usize, m: &Meta, now: Time) {
        if !m.tcp || m.flags & wire::ACK == 0 {
            return;
        }
        let w = self.in_window(now);
        let f = &mut self.flows[flow];
        let mut first: Option<Time> = None;
        let mut ambiguous = false;
        while let Some(&(end, t, r)) = f.pending.front() {
            if !wire::seq_le(end, m.ack) {
                break;
            }
            f.pending.pop_front();
            first.get_or_insert(t);
            ambiguous |= r;
        }
        if let (Some(t), false, true) = (first, ambiguous, w) {
            f.rtt.record(((now.saturating_sub(t)) / PS_PER_US).max(1));
        }
    }

    /// A segment delivered to the receiver: payload beyond the highest
    /// sequence delivered so far is new to the receiving application.
    fn track_delivered(&mut self, flow: usize, m: &Meta, now: Time) {
        if !m.tcp {
            return;
        }
        let w = self.in_window(now);
        let f = &mut self.flows[flow];
        if m.flags & wire::SYN != 0 {
            f.rcv_have = true;
            f.rcv_high = m.seq.wrapping_add(1);
            return;
        }
        if m.payload == 0 {
            return;
        }
        let end = m.seq.wrapping_add(m.payload);
        if !f.rcv_have {
            f.rcv_have = true;
            f.rcv_high = m.seq;
        }
        if wire::seq_gt(end, f.rcv_high) {
            let new = end.wrapping_sub(f.rcv_high) as u64;
            f.rcv_high = end;
            f.payload_total += new;
            if w {
                f.payload_bytes += new;
            }
        }
    }

    /// Runs everything due by `now`. `deliver(to, header, packet, cause)`
    /// writes a packet to a device, after the [`wire::VnetHdr`] `header` when
    /// the devices take frames (empty otherwise), and returns the time it
    /// did so.
    pub fn run_until(&mut self, now: Time, deliver: &mut impl FnMut(Side, &[u8], &[u8], Cause) -> Time) {
        self.horizon = now;
        // The latest time known: `now`, or the end of the last write.
        let mut clock = now;
        loop {
            let (a, b) = (self.q.peek(), self.to_senders.peek_time());
            let q = match (a, b) {
                (Some((a, _)), Some(b)) if b < a => &mut self.to_senders,
                (Some(_), _) => &mut self.q,
                (None, Some(_)) => &mut self.to_senders,
                (None, None) => break,
            };
            let (t, ev) = q.peek().expect("peeked");
            if t > now {
                break;
            }
            if self.cfg.pause_stalls && clock > t + STALL && ev != Event::Probe {
                self.pause(clock - t, clock);
                continue;
            }
            q.pop();
            self.events += 1;
            match ev {
                Event::PortTxDone(p) => self.tx_done(p as usize, t),
                Event::LineDeliver(l) => clock = clock.max(self.line_deliver(l as usize, t, clock, deliver)),
                Event::Probe => self.probe(t),
                Event::LinkRelease(p, generation) => self.release_batch(p as usize, generation, t),
                Event::PacketLog(open) => self.open_log(open),
                _ => unreachable!("the emulator schedules no other events"),
            }
        }
    }

    /// The emulator found itself `by` behind its schedule at `now` (see
    /// [`Stalls`]): the links, queues and delay lines stop for that long,
    /// as if the path had been cut. Everything pending happens `by` later,
    /// in the same order and with the same spacing; measurement intervals
    /// keep to the clock.
    fn pause(&mut self, by: Time, now: Time) {
        // Measurement intervals and the packet log's window keep to the clock.
        self.q.delay_where(by, |e| !matches!(e, Event::Probe | Event::PacketLog(_)));
        self.to_senders.delay_where(by, |_| true);
        for l in self.lines.iter_mut() {
            l.delay_all(by);
        }
        for m in self.line_models.iter_mut().flatten() {
            m.delay_all(by);
        }
        if self.t0.is_some() {
            for port in &mut self.ports {
                port.model_from += by;
            }
        }
        if self.in_window(now) {
            self.stalls.add(by);
        }
    }

    fn tx_done(&mut self, p: usize, t: Time) {
        self.now = t;
        let id = self.ports[p].finish(&self.slots);
        self.link_packets[p].sent += 1;
        let (flow, wire_len, is_data, from_rcv, hop) = {
            let s = &mut self.slots[id as usize];
            s.hop += 1;
            (s.flow as usize, s.len as u64, s.meta.tcp && s.meta.payload > 0, s.from_rcv, s.hop as usize - 1)
        };
        if self.in_window(t) {
            if p == FWD {
                self.interval_tx_bytes += wire_len;
                if is_data {
                    self.bottleneck_data_packets += 1;
                }
            }
            if !from_rcv {
                // Rate at the bottleneck: bytes counted as their last bit leaves the flow's measured link.
                let measured = p == self.routes[flow].measure as usize;
                let f = &mut self.flows[flow];
                f.link_bytes[hop] += wire_len;
                if measured {
                    f.interval_bytes += wire_len;
                    f.bottleneck_bytes += wire_len;
                }
            }
        }
        let line = self.line0[flow] + if from_rcv { self.routes[flow].data.len() } else { 0 } + hop;
        let credit = self.slots[id as usize].credit;
        // An answer's credit (see [`Answer`]) shortens its delay on the line
        // to the sender, never below zero and never past the packet ahead of it.
        let from = if credit == 0 || !matches!(self.lines[line].next, Hop::Sender(_)) {
            t
        } else {
            let l = &self.lines[line];
            let floor = l.tail_time().map_or(0, |a| a.saturating_sub(l.delay));
            t.saturating_sub(credit).max(t.saturating_sub(l.delay)).max(floor)
        };
        if let Some(at) = self.line_push(line, from, id) {
            self.line_events(line).push(at, Event::LineDeliver(line as u32));
        }
        service::start_next(self, p, t);
    }

    /// Puts a packet leaving its link at `from` on line `l`; returns the
    /// time of an event the line needs.
    #[inline]
    fn line_push(&mut self, l: usize, from: Time, id: PacketId) -> Option<Time> {
        let Some(m) = &mut self.line_models[l] else {
            return self.lines[l].push(from, id);
        };
        // The jitter (and delay step) in the model's time, added to the engine's.
        let rel = from.saturating_sub(self.ports[FWD].model_from);
        let line = &mut self.lines[l];
        let at = from + (m.due(rel, line.delay, None) - rel);
        if m.reorders() {
            return m.insert(at, id);
        }
        // Order kept: never before the packet ahead.
        line.push_at(at.max(line.tail_time().unwrap_or(0)), id)
    }

    /// The packet due first on line `l`, and when.
    #[inline]
    fn line_head(&self, l: usize) -> Option<(Time, PacketId)> {
        match &self.line_models[l] {
            Some(m) if m.reorders() => m.head(),
            _ => self.lines[l].head(),
        }
    }

    /// Takes the packet due first on line `l` if it is due by `t`.
    #[inline]
    fn line_pop(&mut self, l: usize, t: Time) -> Option<PacketId> {
        match &mut self.line_models[l] {
            None => self.lines[l].pop_due(t),
            Some(m) if m.reorders() => m.pop_due(t),
            Some(m) => {
                let id = self.lines[l].pop_due(t);
                m.delivered += id.is_some() as u64;
                id
            }
        }
    }

    /// Delivers what is due on line `l` at `t` (and, with frames, by the
    /// horizon); `clock` is the latest time known. Returns the time of the
    /// last write (`clock` if none).
    fn line_deliver(
        &mut self,
        l: usize,
        t: Time,
        mut clock: Time,
        deliver: &mut impl FnMut(Side, &[u8], &[u8], Cause) -> Time,
    ) -> Time {
        if let Some(m) = &mut self.line_models[l] {
            if !m.fire(t) {
                return clock; // a reordering line's stale event
            }
        }
        let (p, to) = match self.lines[l].next {
            Hop::Port(next) => {
                self.forward(l, next as usize, t);
                return clock;
            }
            Hop::Sender(_) => (REV, Side::Snd),
            _ => (FWD, Side::Rcv),
        };
        // With frames, everything due by the time of writing may go out in one write.
        let horizon = if self.cfg.frames { self.horizon.max(t) } else { t };
        let mut group = std::mem::take(&mut self.group);
        while let Some((due, id)) = self.line_head(l) {
            if due > horizon {
                break;
            }
            if self.cfg.pause_stalls && clock > due + STALL {
                self.pause(clock - due, clock);
                break;
            }
            self.line_pop(l, horizon);
            group.clear();
            group.push((id, due));
            let at = if self.cfg.frames {
                self.deliver_coalesced(l, horizon, to, &mut group, deliver)
            } else {
                let s = &self.slots[id as usize];
                deliver(to, &[], &s.buf[..s.len as usize], Cause { flow: s.flow, due })
            };
            for &(id, due) in &group {
                let (flow, meta) = {
                    let s = &self.slots[id as usize];
                    (s.flow as usize, s.meta)
                };
                if self.in_window(due) {
                    let late = at.saturating_sub(due);
                    self.lateness[p].record(late / PS_PER_NS);
                    if late > STALL && !self.cfg.pause_stalls {
                        if due > self.stall_end {
                            // A new stall; its first delivery was due about when it began.
                            self.stalls.add(late);
                        }
                        self.stall_end = at;
                    }
                }
                if self.logging {
                    self.log_deliver(id, at);
                }
                if p == FWD {
                    self.track_delivered(flow, &meta, at);
                } else {
                    self.track_ack(flow, &meta, at);
                }
                self.delivered += 1;
                self.free.push(id);
            }
            clock = clock.max(at);
            if p == FWD {
                let (id, due) = group[group.len() - 1];
                self.flows[self.slots[id as usize].flow as usize].late_by = at.saturating_sub(due);
            }
        }
        self.group = group;
        let next = match &mut self.line_models[l] {
            Some(m) if m.reorders() => m.rearm(),
            _ => self.lines[l].head_time(),
        };
        if let Some(at) = next {
            self.line_events(l).push(at, Event::LineDeliver(l as u32));
        }
        clock
    }

    /// Takes what is due on line `l` at `t` to link `p`, the next of its route.
    fn forward(&mut self, l: usize, p: usize, t: Time) {
        while let Some(id) = self.line_pop(l, t) {
            self.arrive(p, id, t);
        }
        let next = match &mut self.line_models[l] {
            Some(m) if m.reorders() => m.rearm(),
            _ => self.lines[l].head_time(),
        };
        if let Some(at) = next {
            self.q.push(at, Event::LineDeliver(l as u32));
        }
    }

    /// The event queue of line `l`'s deliveries: deliveries to the senders
    /// have their own.
    fn line_events(&mut self, l: usize) -> &mut EventQueue {
        if matches!(self.lines[l].next, Hop::Sender(_)) {
            &mut self.to_senders
        } else {
            &mut self.q
        }
    }

    /// Writes `group[0]` and the packets after it on line `l` that are due
    /// by `horizon` and continue it ([`wire::continues`]) as one coalesced
    /// packet, as a receiver's GRO would take them; returns the write time.
    /// `group` ends up holding every packet written.
    fn deliver_coalesced(
        &mut self,
        l: usize,
        horizon: Time,
        to: Side,
        group: &mut Vec<(PacketId, Time)>,
        deliver: &mut impl FnMut(Side, &[u8], &[u8], Cause) -> Time,
    ) -> Time {
        let first = group[0].0 as usize;
        let flow = self.slots[first].flow;
        let gso = self.slots[first].meta.payload as usize;
        let mut last = first;
        let mut len = self.slots[first].len as usize;
        while group.len() < MAX_COALESCE {
            let Some((due, next)) = self.line_head(l) else { break };
            let (a, b) = (&self.slots[last], &self.slots[next as usize]);
            if due > horizon
                || a.meta.payload as usize != gso
                || len + b.meta.payload as usize > u16::MAX as usize
                || !wire::continues(&a.buf[..a.len as usize], &b.buf[..b.len as usize])
            {
                break;
            }
            if group.len() == 1 {
                self.frame[..len].copy_from_slice(&a.buf[..len]);
            }
            len = wire::append_segment(&mut self.frame, len, &b.buf[..b.len as usize]);
            self.line_pop(l, horizon);
            group.push((next, due));
            last = next as usize;
        }
        let cause = Cause { flow, due: group[group.len() - 1].1 };
        if group.len() == 1 {
            let s = &self.slots[first];
            return deliver(to, &wire::VnetHdr::default().to_bytes(), &s.buf[..s.len as usize], cause);
        }
        self.coalesced_writes += 1;
        self.coalesced_packets += group.len() as u64;
        let h = wire::finish_coalesced(&mut self.frame[..len], gso);
        deliver(to, &h.to_bytes(), &self.frame[..len], cause)
    }

    /// Opens or closes the packet log (events at the window's ends).
    #[cold]
    #[inline(never)]
    fn open_log(&mut self, open: bool) {
        self.logging = open;
        self.slots.log_marks = open;
        self.slots.marked.clear();
        if open {
            self.log.restart_aqm(self.ports.iter().map(|p| p.qdisc.aqm_drops()));
        }
    }

    /// The packet log: its rows so far, in the order the engine handled the
    /// events; times are ns since the start of the measurement. Empty
    /// unless [`EngineConfig::packet_log_ns`] was given.
    pub fn packet_log(&self) -> &PacketLog {
        &self.log
    }

    /// Whether the experiment asked for a packet log.
    pub fn logs_packets(&self) -> bool {
        self.cfg.packet_log_ns.is_some()
    }

    /// Appends one row about packet `id` at link `link` at time `t` (within the window).
    #[cold]
    #[inline(never)]
    fn log_row(&mut self, link: usize, id: PacketId, event: PacketEvent, reason: DropReason, t: Time) {
        if t < self.log.from || t >= self.log.to {
            return;
        }
        let s = &self.slots[id as usize];
        let m = &s.meta;
        let n = self.flows.len() - 1;
        let (owner, id) = if (s.flow as usize) < n { (Owner::Flow, s.flow) } else { (Owner::Other, 0) };
        // Sequence numbers as offsets from the flow's first payload byte, unwrapped
        // against the highest sequence its sender has sent (a packet here is within 2 GB of it).
        let f = &self.flows[s.flow as usize];
        let rel = |x: u32| {
            if !m.tcp || !f.snd_have {
                return 0;
            }
            let back = f.snd_high.wrapping_sub(x) as i32 as i64;
            (f.snd_high64 as i64 - back).max(0) as u64
        };
        let (seq_bytes, ack_bytes) = if s.from_rcv {
            (0, if m.flags & wire::ACK != 0 { rel(m.ack) } else { 0 })
        } else if m.flags & wire::SYN != 0 {
            (0, 0)
        } else {
            (rel(m.seq), 0)
        };
        let flags = if s.retrans { FLAG_RETRANS } else { 0 }
            | if m.tcp && m.flags & wire::ECE != 0 { FLAG_ECE } else { 0 }
            | if m.tcp && m.flags & wire::CWR != 0 { FLAG_CWR } else { 0 }
            | if s.from_rcv { FLAG_ACK } else { 0 };
        let row = PacketRow {
            time_ns: (t - self.t0.unwrap_or(0)) / PS_PER_NS,
            link: link as u8,
            event,
            reason,
            owner,
            id,
            seq_bytes,
            ack_bytes,
            size_bytes: s.len,
            payload_bytes: m.payload,
            flags,
            ecn: wire::ecn(&s.buf[..s.len as usize]),
        };
        self.log.push(row);
    }

    /// Logs the marks the discipline of port `p` just made.
    #[cold]
    #[inline(never)]
    fn log_marks(&mut self, p: usize) {
        for i in 0..self.slots.marked.len() {
            let id = self.slots.marked[i];
            self.log_row(p, id, PacketEvent::Mark, DropReason::None, self.now);
        }
        self.slots.marked.clear();
    }

    #[cold]
    #[inline(never)]
    fn log_enqueue(&mut self, p: usize, id: PacketId) {
        self.log_row(p, id, PacketEvent::Enqueue, DropReason::None, self.now);
        self.log_marks(p);
    }

    #[cold]
    #[inline(never)]
    fn log_dequeue(&mut self, p: usize, next: Option<PacketId>) {
        self.log_marks(p);
        if let Some(id) = next {
            self.log_row(p, id, PacketEvent::Dequeue, DropReason::None, self.now);
        }
    }

    /// A drop at port `p` with its reason: random loss (after its enqueue
    /// row), the discipline's choice (its AQM drop counter moved past those
    /// already logged) or overflow.
    #[cold]
    #[inline(never)]
    fn log_drop(&mut self, p: usize, id: PacketId, random: bool, now: Time) {
        let reason = if random {
            self.log_row(p, id, PacketEvent::Enqueue, DropReason::None, now);
            DropReason::Random
        } else if self.ports[p].qdisc.aqm_drops() > self.log.aqm_seen[p] {
            self.log.aqm_seen[p] += 1;
            DropReason::Aqm
        } else {
            DropReason::Overflow
        };
        self.log_row(p, id, PacketEvent::Drop, reason, now);
    }

    /// Packet `id` written to its endpoint's device at `at`, logged against
    /// the last link of its route.
    #[cold]
    #[inline(never)]
    fn log_deliver(&mut self, id: PacketId, at: Time) {
        let s = &self.slots[id as usize];
        let route = &self.routes[s.flow as usize];
        let link = *if s.from_rcv { &route.ack } else { &route.data }.last().expect("a route has a link") as usize;
        self.log_row(link, id, PacketEvent::Deliver, DropReason::None, at);
    }

    fn probe(&mut self, t: Time) {
        let t0 = self.t0.expect("probes run after start");
        if self.cfg.trace {
            let t_ns = (t - t0) / PS_PER_NS;
            for (i, f) in self.flows.iter().take(self.n_flows()).enumerate() {
                self.trace_t.push(t_ns);
                self.trace_flow.push(i as u32);
                self.trace_bytes.push(f.interval_bytes);
            }
            let n = self.n_flows();
            let port = &self.ports[FWD];
            let row = [
                port.qdisc.bytes(),
                port.qdisc.len() as u64,
                self.interval_drops,
                self.interval_tx_bytes,
                self.flows[n].interval_bytes,
                self.ports[REV].qdisc.len() as u64,
                n as u64,
            ];
            self.trace_t_queue.push(t_ns);
            for (col, v) in self.queue_trace.iter_mut().zip(row) {
                col.push(v);
            }
            if let Some(m) = self.ports[FWD].model.as_ref() {
                // In the models' time (a pause moves it; the intervals keep to the clock).
                let e = self.model_epoch();
                let (a, b) = (self.last_probe.saturating_sub(e), t.saturating_sub(e));
                if let Some(bits) = m.capacity_bits(a, b) {
                    self.trace_capacity.push((bits / 8.0).round() as u64);
                }
            }
        }
        if self.cfg.is_network() {
            self.probe_links((t - t0) / PS_PER_NS);
        }
        self.last_probe = t;
        for f in &mut self.flows {
            f.interval_bytes = 0;
        }
        self.interval_drops = 0;
        self.interval_tx_bytes = 0;
        if t >= self.end {
            self.snapshot = Some(self.conservation());
            self.counters_at[1] = Some((0..self.ports.len()).map(|p| self.counters_now(p)).collect());
            self.port_counters = Some(self.ports.iter().map(|p| p.counters).collect());
            self.done = true;
        } else {
            self.probe_k += 1;
            self.q.push(self.probe_time(self.probe_k), Event::Probe);
        }
    }

    /// One row per link (the simulator's link trace): backlog now, and
    /// drops, marks and bytes sent since the last probe.
    fn probe_links(&mut self, t_ns: u64) {
        for (i, port) in self.ports.iter().enumerate() {
            let now = [port.counters.drops, port.qdisc.marks(), port.counters.tx_bytes];
            let seen = std::mem::replace(&mut self.link_seen[i], now);
            if !self.cfg.trace {
                continue;
            }
            let row = [
                t_ns,
                i as u64,
                port.qdisc.bytes(),
                port.qdisc.len() as u64,
                now[0] - seen[0],
                now[1] - seen[1],
                now[2] - seen[2],
            ];
            for (col, v) in self.link_trace.iter_mut().zip(row) {
                col.push(v);
            }
        }
    }

    /// Every link's packets since the engine was made (see [`LinkConservation`]).
    pub fn link_conservation(&self) -> Vec<LinkConservation> {
        self.link_packets.iter().zip(&self.ports).map(|(c, p)| LinkConservation { held: p.held(), ..*c }).collect()
    }

    /// The number of links.
    pub fn n_links(&self) -> usize {
        self.ports.len()
    }

    /// Link `p`'s counters over the measurement (so far, before its end).
    pub fn port_counters(&self, p: usize) -> PortCounters {
        self.port_counters.as_ref().map_or_else(|| self.ports[p].counters, |c| c[p])
    }

    /// Link `p`'s queueing delay in the measurement, ns.
    pub fn link_delay(&self, p: usize) -> &Histogram {
        &self.delays[p]
    }

    /// The per-link trace (networks; empty for the dumbbell), as columns.
    pub fn take_link_columns(&mut self) -> Columns {
        LINK_COLUMNS.iter().zip(self.link_trace.iter_mut()).map(|(n, c)| (*n, Column::U64(std::mem::take(c)))).collect()
    }

    /// Packets accounted for now: created = delivered + dropped + queued + in flight.
    pub fn conservation(&self) -> Conservation {
        let queued: u64 = self.ports.iter().map(|p| p.held()).sum();
        let in_flight: u64 = self.lines.iter().map(|l| l.len() as u64).sum::<u64>()
            + self.line_models.iter().flatten().map(|m| m.len() as u64).sum::<u64>();
        Conservation { created: self.created, delivered: self.delivered, dropped: self.dropped, queued, in_flight }
    }

    /// Conservation at the end of the measurement (None before).
    pub fn snapshot(&self) -> Option<Conservation> {
        self.snapshot
    }

    /// The forward port's counters over the measurement (so far, before its end).
    pub fn forward_port(&self) -> PortCounters {
        self.port_counters(FWD)
    }

    /// Link `p` as configured (0 forward, 1 reverse, then a network's others).
    pub fn link(&self, p: usize) -> &LinkSpec {
        self.cfg.link(p)
    }

    /// The reverse port's counters over the measurement.
    pub fn reverse_port(&self) -> PortCounters {
        self.port_counters(REV)
    }

    /// CE marks and drops chosen by the discipline (as opposed to overflow)
    /// at each link during the measurement.
    pub fn aqm_counts(&self) -> Vec<(u64, u64)> {
        self.ports
            .iter()
            .zip(&self.aqm_at_start)
            .map(|(p, &(m, d))| (p.qdisc.marks() - m, p.qdisc.aqm_drops() - d))
            .collect()
    }

    /// What link `p`'s models did (0 forward, 1 reverse), as the simulator
    /// reports it: packets policed, batches released and the packets in
    /// them, and on the lines after it packets delivered and of them
    /// reordered (RFC 4737); empty for an ideal link. Counted over the
    /// measurement (not the jitter of packets before it, at connection
    /// set-up, nor anything after it).
    pub fn model_counters(&self, p: usize) -> Counters {
        let end = self.counters_at[1].as_ref().map_or_else(|| self.counters_now(p), |c| c[p].clone());
        match &self.counters_at[0] {
            Some(start) => end.into_iter().zip(&start[p]).map(|((k, v), (_, v0))| (k, v - v0)).collect(),
            None => end,
        }
    }

    /// Link `p`'s model counters since the engine was made.
    fn counters_now(&self, p: usize) -> Counters {
        let mut c = self.ports[p].model.as_ref().map(|m| m.counters()).unwrap_or_default();
        let after: Vec<&LineModel> =
            self.line_models.iter().filter_map(|m| m.as_deref()).filter(|m| m.link == p as u32).collect();
        if !after.is_empty() {
            c.push(("jitter_delivered", after.iter().map(|m| m.delivered).sum()));
            c.push(("reordered", after.iter().map(|m| m.reordered).sum()));
        }
        c
    }

    /// Whether link `p` has models (0 forward, 1 reverse).
    pub fn modelled(&self, p: usize) -> bool {
        !self.cfg.link(p).model.is_ideal()
    }

    pub fn queue_delay(&self) -> (&Histogram, &Histogram) {
        (&self.delays[FWD], &self.delays[REV])
    }

    /// Delivery lateness, ns: (forward, reverse).
    pub fn lateness(&self) -> (&Histogram, &Histogram) {
        (&self.lateness[FWD], &self.lateness[REV])
    }

    /// Stalls in the measurement.
    pub fn stalls(&self) -> Stalls {
        self.stalls
    }

    pub fn events(&self) -> u64 {
        self.events
    }

    pub fn bottleneck_data_packets(&self) -> u64 {
        self.bottleneck_data_packets
    }

    pub fn not_ipv4(&self) -> u64 {
        self.not_ipv4
    }

    /// Per-flow statistics of flows 0..n, then the "other" traffic.
    pub fn flow_reports(&self) -> Vec<FlowReport> {
        self.flows
            .iter()
            .zip(&self.routes)
            .map(|(f, r)| FlowReport {
                bottleneck_bytes: f.bottleneck_bytes,
                drops: f.drops,
                payload_bytes: f.payload_bytes,
                payload_total: f.payload_total,
                rtt: f.rtt.clone(),
                link_bytes: r.data.iter().copied().zip(f.link_bytes.iter().copied()).collect(),
            })
            .collect()
    }

    /// The per-flow trace (t_ns, flow, bottleneck_bytes) and the queue trace, as columns.
    pub fn take_columns(&mut self) -> (Columns, Columns) {
        let flows = vec![
            ("t_ns", Column::U64(std::mem::take(&mut self.trace_t))),
            ("flow", Column::U32(std::mem::take(&mut self.trace_flow))),
            ("bottleneck_bytes", Column::U64(std::mem::take(&mut self.trace_bytes))),
        ];
        let mut queue = vec![(QUEUE_COLUMNS[0], Column::U64(std::mem::take(&mut self.trace_t_queue)))];
        for (name, col) in QUEUE_COLUMNS[1..].iter().zip(self.queue_trace.iter_mut()) {
            queue.push((*name, Column::U64(std::mem::take(col))));
        }
        if self.ports[FWD].model.as_ref().is_some_and(|m| m.varies()) {
            queue.push(("capacity_bytes", Column::U64(std::mem::take(&mut self.trace_capacity))));
        }
        (flows, queue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{build_tcp, ACK, SYN};
    use sim::event::PS_PER_MS;

    fn cfg(n: usize, rate: u64, limit: u64) -> EngineConfig {
        EngineConfig {
            fwd: LinkSpec::new(rate, QueueLimit::Packets(limit), QdiscConfig::DropTail),
            rev: LinkSpec::new(rate, QueueLimit::Packets(limit), QdiscConfig::DropTail),
            loss: 0.0,
            seed: 1,
            duration_ns: 1_000_000_000,
            interval_ns: 100_000_000,
            trace: true,
            port_base: 5000,
            flow_delay_ns: (0..n).map(|i| 10_000_000 * (i as u64 + 1)).collect(),
            other_delay_ns: 5_000_000,
            max_packet: 2048,
            frames: false,
            pause_stalls: false,
            links: Vec::new(),
            routes: Vec::new(),
            packet_log_ns: None,
        }
    }

    /// Feeds a packet in at `now` after running everything due.
    fn feed(e: &mut Engine, now: Time, from: Side, pkt: &[u8], out: &mut Vec<(Time, Side, Vec<u8>)>) {
        feed_answer(e, now, from, pkt, None, out);
    }

    /// [`feed`], the packet possibly being an [`Answer`].
    fn feed_answer(
        e: &mut Engine,
        now: Time,
        from: Side,
        pkt: &[u8],
        answers: Option<Answer>,
        out: &mut Vec<(Time, Side, Vec<u8>)>,
    ) {
        run(e, now, out);
        let id = e.alloc();
        e.buf_mut(id)[..pkt.len()].copy_from_slice(pkt);
        e.ingress(now, from, id, pkt.len(), answers);
    }

    /// Runs to `now`, recording deliveries at their due times (a perfect clock).
    fn run(e: &mut Engine, now: Time, out: &mut Vec<(Time, Side, Vec<u8>)>) {
        while let Some(t) = e.next_event() {
            if t > now {
                break;
            }
            e.run_until(t, &mut |side, head, b, _| {
                assert!(head.is_empty());
                out.push((t, side, b.to_vec()));
                t
            });
        }
    }

    #[test]
    fn serialisation_then_per_flow_delay() {
        // 1500 B at 12 Mbit/s = 1 ms; flow 0 has 10 ms, flow 1 20 ms one way.
        let mut e = Engine::new(cfg(2, 12_000_000, 100));
        let mut out = Vec::new();
        let p0 = build_tcp(40000, 5000, 1, 0, ACK, 1448);
        let p1 = build_tcp(40001, 5001, 1, 0, ACK, 1448);
        feed(&mut e, 0, Side::Snd, &p0, &mut out);
        feed(&mut e, 0, Side::Snd, &p1, &mut out);
        feed(&mut e, 0, Side::Snd, &p0, &mut out);
        run(&mut e, 100 * PS_PER_MS, &mut out);
        let times: Vec<(Time, u16)> = out.iter().map(|(t, _, b)| (*t / PS_PER_US, wire::parse(b).dport)).collect();
        // Back to back: departures at 1, 2, 3 ms; plus each flow's delay.
        assert_eq!(times, vec![(11_000, 5000), (13_000, 5000), (22_000, 5001)]);
        assert!(out.iter().all(|(_, s, _)| *s == Side::Rcv));
    }

    #[test]
    fn acks_take_the_reverse_port_and_delay() {
        let mut e = Engine::new(cfg(1, 12_000_000, 100));
        let mut out = Vec::new();
        let ack = build_tcp(5000, 40000, 1, 1, ACK, 0); // 52 B: 34.667 µs at 12 Mbit/s
        feed(&mut e, PS_PER_MS, Side::Rcv, &ack, &mut out);
        run(&mut e, 100 * PS_PER_MS, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].1, Side::Snd);
        assert_eq!(out[0].0, PS_PER_MS + 34_666_667 + 10 * PS_PER_MS);
    }

    /// Feeds an answer to a write of flow `flow` that was due at `due`,
    /// ended at `written` and was read 2 µs later; fed at `now`.
    fn answer(
        e: &mut Engine,
        now: Time,
        pkt: &[u8],
        flow: u32,
        due: Time,
        written: Time,
        out: &mut Vec<(Time, Side, Vec<u8>)>,
    ) {
        let read = written + 2 * PS_PER_US;
        feed_answer(e, now, Side::Rcv, pkt, Some(Answer { flow, due, written, read }), out);
    }

    /// A data segment delivered 300 µs late is answered at once; the ACK
    /// reaches the sender one delay after the time it would have left had the
    /// data come on time (due + the 2 µs between write and read), not one
    /// delay after it was read.
    #[test]
    fn an_answer_leaves_as_if_its_data_had_come_on_time() {
        let mut e = Engine::new(cfg(2, 12_000_000, 100));
        e.start(0);
        let mut out = Vec::new();
        let ack = build_tcp(5000, 40000, 1, 1449, ACK, 0); // 52 B: 34.667 µs at 12 Mbit/s
        let due = 11 * PS_PER_MS; // 1 ms on the wire + 10 ms
        let written = due + 300 * PS_PER_US;
        let now = written + 5 * PS_PER_US;
        answer(&mut e, now, &ack, 0, due, written, &mut out);
        // Flow 1's ACK read after flow 0's write answers nothing, and flow 1
        // had no write: no credit.
        let ack1 = build_tcp(5001, 40001, 1, 1449, ACK, 0);
        answer(&mut e, now, &ack1, 0, due, written, &mut out);
        run(&mut e, 100 * PS_PER_MS, &mut out);
        let tx = 34_666_667;
        let at: Vec<(Time, u16)> = out.iter().map(|(t, _, b)| (*t, wire::parse(b).sport)).collect();
        assert_eq!(at, vec![(due + 2 * PS_PER_US + tx + 10 * PS_PER_MS, 5000), (now + 2 * tx + 20 * PS_PER_MS, 5001)]);
        assert_eq!(e.credit().count(), 2);
        assert_eq!(e.credit().max(), Some(303_000));
        assert_eq!(e.credit().min(), Some(0));
        assert!(e.conservation().holds());
    }

    /// A packet from a flow's receiver that is not read right after a write
    /// (an ACK sent when the application read) answers the flow's last write:
    /// that write's lateness comes off its delay. Other traffic gets none.
    #[test]
    fn a_later_packet_answers_the_flows_last_write() {
        let mut e = Engine::new(cfg(1, 12_000_000, 100));
        e.start(0);
        let mut out = Vec::new();
        feed(&mut e, 0, Side::Snd, &build_tcp(40000, 5000, 1, 0, ACK, 1448), &mut out);
        // Due at 11 ms, written 250 µs late (a clock that is late).
        let due = 11 * PS_PER_MS;
        let late = 250 * PS_PER_US;
        while let Some(t) = e.next_event() {
            if t > due {
                break;
            }
            e.run_until(t, &mut |_, _, b, c| {
                out.push((t + late, Side::Rcv, b.to_vec()));
                assert_eq!(c, Cause { flow: 0, due });
                t + late
            });
        }
        assert_eq!(out.len(), 1);
        let ack = build_tcp(5000, 40000, 1, 1449, ACK, 0);
        let read = due + late + 400 * PS_PER_US;
        feed(&mut e, read, Side::Rcv, &ack, &mut out);
        // "Other" traffic from the receivers' side: no credit.
        feed(&mut e, read, Side::Rcv, &build_tcp(7000, 40000, 1, 1, ACK, 0), &mut out);
        run(&mut e, 100 * PS_PER_MS, &mut out);
        let tx = 34_666_667;
        // The other packet waited behind the ACK on the reverse port; its line is 5 ms.
        let at: Vec<(Time, u16)> = out[1..].iter().map(|(t, _, b)| (*t, wire::parse(b).sport)).collect();
        assert_eq!(at, vec![(read + 2 * tx + 5 * PS_PER_MS, 7000), (read - late + tx + 10 * PS_PER_MS, 5000)]);
        assert_eq!((e.credit().count(), e.credit().max()), (1, Some(250_000)));
    }

    /// Credit never takes a packet past the one ahead of it on its line, nor
    /// below zero delay.
    #[test]
    fn credit_keeps_a_line_in_order_and_its_delay_above_zero() {
        let ack = build_tcp(5000, 40000, 1, 1, ACK, 0);
        let tx = 34_666_667;
        let t0 = 50 * PS_PER_MS;
        // 10 ms each way: read 2 tx later with 5 ms of credit, the second
        // ACK may not pass the first.
        let mut e = Engine::new(cfg(1, 12_000_000, 100));
        let mut out = Vec::new();
        feed(&mut e, t0, Side::Rcv, &ack, &mut out);
        answer(&mut e, t0 + 2 * tx, &ack, 0, 0, 5 * PS_PER_MS, &mut out);
        run(&mut e, 100 * PS_PER_MS, &mut out);
        assert_eq!(out.iter().map(|(t, _, _)| *t).collect::<Vec<_>>(), vec![t0 + tx + 10 * PS_PER_MS; 2]);
        // 1 ms each way and 5 ms of credit: delivered as it leaves the port.
        let mut c = cfg(1, 12_000_000, 100);
        c.flow_delay_ns = vec![1_000_000];
        let mut e = Engine::new(c);
        let mut out = Vec::new();
        answer(&mut e, t0, &ack, 0, 0, 5 * PS_PER_MS, &mut out);
        run(&mut e, 100 * PS_PER_MS, &mut out);
        assert_eq!(out.iter().map(|(t, _, _)| *t).collect::<Vec<_>>(), vec![t0 + tx]);
    }

    /// Deliveries to the receivers may wait for a batch, deliveries to the
    /// senders never.
    #[test]
    fn the_next_wake_never_holds_a_delivery_to_the_senders() {
        let batch = 25 * PS_PER_US;
        let tx_ack = 34_666_667;
        let data = build_tcp(40000, 5000, 1, 0, ACK, 1448);
        // Data leave at 1 ms and are due at 11 ms: the wake waits for a batch.
        let mut e = Engine::new(cfg(1, 12_000_000, 100));
        let mut out = Vec::new();
        feed(&mut e, 0, Side::Snd, &data, &mut out);
        run(&mut e, 2 * PS_PER_MS, &mut out);
        assert_eq!(e.next_wake(batch), Some(11 * PS_PER_MS + batch));
        assert_eq!(e.next_to_senders(), None);
        // With an ACK due 10 µs after the data, the wake is for the ACK.
        let mut e = Engine::new(cfg(1, 12_000_000, 100));
        let mut out = Vec::new();
        feed(&mut e, 0, Side::Snd, &data, &mut out);
        let ack_due = 11 * PS_PER_MS + 10 * PS_PER_US;
        feed(&mut e, ack_due - 10 * PS_PER_MS - tx_ack, Side::Rcv, &build_tcp(5000, 40000, 1, 1, ACK, 0), &mut out);
        run(&mut e, 2 * PS_PER_MS, &mut out);
        assert_eq!(e.next_wake(batch), Some(ack_due));
        assert_eq!(e.next_event(), Some(11 * PS_PER_MS));
        assert_eq!(e.next_to_senders(), Some(ack_due));
        // Both are delivered, in time order.
        run(&mut e, 100 * PS_PER_MS, &mut out);
        assert_eq!(
            out.iter().map(|(t, s, _)| (*t, *s)).collect::<Vec<_>>(),
            vec![(11 * PS_PER_MS, Side::Rcv), (ack_due, Side::Snd)]
        );
    }

    /// The simulator's CoDel runs in the emulator on the emulator's clock:
    /// a 300-packet burst at 12 Mbit/s (1 ms per packet) keeps the sojourn
    /// above 5 ms, so from about 100 ms on ECT packets leave CE-marked
    /// (RFC 8289 §5.5) with a valid IPv4 checksum, and none is dropped.
    #[test]
    fn codel_marks_ect_packets_in_the_emulator() {
        let mut c = cfg(1, 12_000_000, 1000);
        c.fwd.qdisc = QdiscConfig::Codel(sim::qdisc::CodelConfig { ecn: true, ..Default::default() });
        let mut e = Engine::new(c);
        e.start(0);
        let mut out = Vec::new();
        let mut p = build_tcp(40000, 5000, 1, 0, ACK, 1448);
        p[1] = 0x02; // ECT(0)
        p[10] = 0;
        p[11] = 0;
        let sum = p[..20].chunks(2).fold(0u32, |s, w| s + u16::from_be_bytes([w[0], w[1]]) as u32);
        let sum = (sum & 0xffff) + (sum >> 16);
        p[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
        for _ in 0..300 {
            feed(&mut e, 0, Side::Snd, &p, &mut out);
        }
        run(&mut e, 2_000 * PS_PER_MS, &mut out);
        assert_eq!(out.len(), 300);
        assert_eq!(e.forward_port().drops, 0);
        let marked: Vec<_> = out.iter().filter(|(_, _, b)| wire::ecn(b) == 3).collect();
        assert!(marked.len() >= 3, "{} marked", marked.len());
        // Delivered at t ≥ 100 ms + one-way delay: none before CoDel's first interval.
        let first = marked.iter().map(|(t, _, _)| *t).min().unwrap();
        assert!(first >= 100 * PS_PER_MS, "first mark at {first}");
        for (_, _, b) in &marked {
            let s = b[..20].chunks(2).fold(0u32, |s, w| s + u16::from_be_bytes([w[0], w[1]]) as u32);
            assert_eq!((s & 0xffff) + (s >> 16), 0xffff, "checksum");
        }
    }

    #[test]
    fn the_packet_log_records_its_window_in_reserved_buffers() {
        use sim::packet_log::{DropReason as R, PacketEvent as E};
        // 1500 B at 12 Mbit/s = 1 ms; 10 ms one way; a queue of 2.
        let mut e =
            Engine::new(EngineConfig { packet_log_ns: Some((15_000_000, 500_000_000)), ..cfg(1, 12_000_000, 2) });
        let cap = e.packet_log().time_ns.capacity();
        assert!(cap >= 4096);
        e.start(0);
        let mut out = Vec::new();
        let isn = u32::MAX - 2000; // the stream wraps the 32-bit sequence space
        feed(&mut e, 0, Side::Snd, &build_tcp(40000, 5000, isn, 0, SYN, 0), &mut out);
        let seg = |k: u32| build_tcp(40000, 5000, isn.wrapping_add(1 + k * 1448), 1, ACK, 1448);
        // Before the window: not logged.
        feed(&mut e, PS_PER_MS, Side::Snd, &seg(0), &mut out);
        // In it: one on the wire, two queued, two dropped (overflow).
        for k in 1..6 {
            feed(&mut e, 20 * PS_PER_MS, Side::Snd, &seg(k), &mut out);
        }
        // A retransmission of segment 4, and an ACK of three segments.
        feed(&mut e, 40 * PS_PER_MS, Side::Snd, &seg(4), &mut out);
        feed(
            &mut e,
            45 * PS_PER_MS,
            Side::Rcv,
            &build_tcp(5000, 40000, 1, isn.wrapping_add(1 + 3 * 1448), ACK, 0),
            &mut out,
        );
        run(&mut e, 2_000 * PS_PER_MS, &mut out);
        let log = e.packet_log();
        let n = log.len();
        assert_eq!(log.time_ns.capacity(), cap, "the log grew");
        let rows: Vec<(u64, u8, u8, u8, u64, u64, u8)> = (0..n)
            .map(|i| {
                (
                    log.time_ns[i],
                    log.link[i],
                    log.event[i],
                    log.reason[i],
                    log.seq_bytes[i],
                    log.ack_bytes[i],
                    log.flags[i],
                )
            })
            .collect();
        let count = |link: u8, ev: E| rows.iter().filter(|r| r.1 == link && r.2 == ev as u8).count();
        assert!(rows.iter().all(|r| (15_000_000..500_000_000).contains(&r.0)), "{rows:?}");
        // Forward: 6 arrivals, 2 dropped, 4 sent and delivered (the retransmission too).
        assert_eq!((count(0, E::Enqueue), count(0, E::Drop), count(0, E::Dequeue), count(0, E::Deliver)), (6, 2, 4, 4));
        // Reverse: the ACK.
        assert_eq!((count(1, E::Enqueue), count(1, E::Dequeue), count(1, E::Deliver)), (1, 1, 1));
        let enq: Vec<u64> = rows.iter().filter(|r| r.1 == 0 && r.2 == E::Enqueue as u8).map(|r| r.4).collect();
        assert_eq!(enq, vec![1448, 2 * 1448, 3 * 1448, 4 * 1448, 5 * 1448, 4 * 1448]);
        let drops: Vec<(u8, u64)> = rows.iter().filter(|r| r.2 == E::Drop as u8).map(|r| (r.3, r.4)).collect();
        assert_eq!(drops, vec![(R::Overflow as u8, 4 * 1448), (R::Overflow as u8, 5 * 1448)]);
        let retrans: Vec<u64> = rows.iter().filter(|r| r.6 & FLAG_RETRANS != 0).map(|r| r.4).collect();
        assert_eq!(retrans, vec![4 * 1448; 3], "enqueue, dequeue, deliver of the retransmission");
        let ack = rows.iter().find(|r| r.1 == 1).expect("an ACK row");
        assert_eq!((ack.5, ack.6 & FLAG_ACK), (3 * 1448, FLAG_ACK));
        // Each delivery follows the dequeue of the same segment, one delay (10 ms) and 1 ms after it.
        for d in rows.iter().filter(|r| r.1 == 0 && r.2 == E::Deliver as u8) {
            let q =
                rows.iter().find(|r| r.2 == E::Dequeue as u8 && r.1 == 0 && r.4 == d.4 && r.0 < d.0).expect("dequeued");
            assert_eq!(d.0 - q.0, 11_000_000);
        }
        // Without a window: nothing reserved, nothing logged.
        let mut e = Engine::new(cfg(1, 12_000_000, 2));
        e.start(0);
        feed(&mut e, 20 * PS_PER_MS, Side::Snd, &seg(1), &mut out);
        run(&mut e, 2_000 * PS_PER_MS, &mut out);
        assert_eq!((e.packet_log().len(), e.packet_log().time_ns.capacity(), e.logs_packets()), (0, 0, false));
    }

    #[test]
    fn droptail_from_the_simulator_drops_beyond_the_limit() {
        let mut e = Engine::new(cfg(1, 12_000_000, 2));
        e.start(0);
        let mut out = Vec::new();
        let p = build_tcp(40000, 5000, 1, 0, ACK, 1448);
        for _ in 0..5 {
            feed(&mut e, 0, Side::Snd, &p, &mut out);
        }
        // One on the wire, two queued, two dropped.
        assert_eq!(e.forward_port().drops, 2);
        run(&mut e, 2_000 * PS_PER_MS, &mut out);
        assert_eq!(out.len(), 3);
        let c = e.snapshot().expect("measurement ended");
        assert!(c.holds(), "{c:?}");
        assert_eq!((c.created, c.delivered, c.dropped), (5, 3, 2));
        let fr = e.flow_reports();
        assert_eq!(fr[0].drops, 2);
        assert_eq!(fr[0].bottleneck_bytes, 3 * 1500);
    }

    #[test]
    fn interval_bytes_and_queue_trace() {
        let mut e = Engine::new(cfg(1, 12_000_000, 1000));
        e.start(0);
        let mut out = Vec::new();
        // 150 packets at 0.5 ms, 1 ms each: the k-th leaves at 0.5 + k ms,
        // so 99 leave in the first interval and 51 in the second.
        let p = build_tcp(40000, 5000, 1, 0, ACK, 1448);
        for _ in 0..150 {
            feed(&mut e, PS_PER_MS / 2, Side::Snd, &p, &mut out);
        }
        run(&mut e, 2_000 * PS_PER_MS, &mut out);
        let (flows, queue) = e.take_columns();
        let Column::U64(bytes) = &flows[2].1 else { panic!() };
        assert_eq!(bytes.len(), 10);
        assert_eq!(bytes[0], 99 * 1500);
        assert_eq!(bytes[1], 51 * 1500);
        let Column::U64(backlog) = &queue[2].1 else { panic!() };
        assert_eq!(backlog[0], 50); // 150 − 99 sent − 1 on the wire
        let (d, _) = e.queue_delay();
        assert_eq!(d.count(), 150);
        assert_eq!(d.max(), Some(149_000_000)); // the last waited 149 ms, in ns
    }

    #[test]
    fn unique_payload_and_rtt_samples_follow_sequence_numbers() {
        let mut e = Engine::new(cfg(1, 1_000_000_000, 1000));
        e.start(0);
        let mut out = Vec::new();
        let isn = 0xffff_f000u32; // wraps during the test
        feed(&mut e, 0, Side::Snd, &build_tcp(40000, 5000, isn, 0, SYN, 0), &mut out);
        let mut seq = isn.wrapping_add(1);
        for k in 0..4u64 {
            let t = PS_PER_MS * (1 + k);
            feed(&mut e, t, Side::Snd, &build_tcp(40000, 5000, seq, 0, ACK, 1448), &mut out);
            seq = seq.wrapping_add(1448);
        }
        // Retransmit the second segment: duplicate payload, and Karn.
        let second = isn.wrapping_add(1 + 1448);
        feed(&mut e, 5 * PS_PER_MS, Side::Snd, &build_tcp(40000, 5000, second, 0, ACK, 1448), &mut out);
        // ACK of the first segment arrives at the sender 10 ms after its delivery + 10 ms.
        let ack1 = isn.wrapping_add(1 + 1448);
        feed(&mut e, 12 * PS_PER_MS, Side::Rcv, &build_tcp(5000, 40000, 1, ack1, ACK, 0), &mut out);
        let ack_all = seq;
        feed(&mut e, 13 * PS_PER_MS, Side::Rcv, &build_tcp(5000, 40000, 1, ack_all, ACK, 0), &mut out);
        run(&mut e, 2_000 * PS_PER_MS, &mut out);
        let fr = e.flow_reports();
        assert_eq!(fr[0].payload_total, 4 * 1448);
        assert_eq!(fr[0].payload_bytes, 4 * 1448);
        // One sample only (the second ACK covers the retransmitted segment).
        assert_eq!(fr[0].rtt.count(), 1);
        let rtt = fr[0].rtt.min().unwrap();
        // Sent at 1 ms (+1.5 µs serialisation +10 ms), ACK sent 12 ms, arrives 22 ms + 0.4 µs.
        assert!((21_000..21_010).contains(&rtt), "{rtt}");
    }

    #[test]
    fn random_loss_uses_the_simulators_stream() {
        let mut c = cfg(1, 1_000_000_000, 100_000);
        c.loss = 0.1;
        let mut e = Engine::new(c);
        e.start(0);
        let mut out = Vec::new();
        let p = build_tcp(40000, 5000, 1, 0, ACK, 1448);
        for k in 0..10_000u64 {
            feed(&mut e, k * 20 * PS_PER_US, Side::Snd, &p, &mut out);
        }
        let mut rng = Rng::new(1, STREAM_BOTTLENECK_LOSS);
        let expected = (0..10_000).filter(|_| rng.uniform() < 0.1).count() as u64;
        assert_eq!(e.forward_port().random_drops, expected);
        // ACKs (no payload) are never dropped at random.
        for k in 0..100u64 {
            feed(&mut e, (300 + k) * PS_PER_MS, Side::Snd, &build_tcp(40000, 5000, 1, 0, ACK, 0), &mut out);
        }
        assert_eq!(e.forward_port().random_drops, expected);
    }

    /// An engine in its measurement at 12 Mbit/s, 10 ms, with `n` full
    /// segments of flow 0 read at time 0 (due at 11, 12, ... ms), pausing
    /// for stalls or not.
    fn queued(n: usize, pause_stalls: bool) -> Engine {
        let mut e = Engine::new(EngineConfig { pause_stalls, ..cfg(1, 12_000_000, 100) });
        e.start(0);
        let p = build_tcp(40000, 5000, 1, 0, ACK, 1448);
        for _ in 0..n {
            let id = e.alloc();
            e.buf_mut(id)[..p.len()].copy_from_slice(&p);
            e.ingress(0, Side::Snd, id, p.len(), None);
        }
        e
    }

    #[test]
    fn late_delivery_is_measured_and_does_not_shift_the_schedule() {
        let mut e = queued(3, false);
        // The caller wakes up 50 ms late and delivers everything at once.
        let mut at = Vec::new();
        e.run_until(50 * PS_PER_MS, &mut |_, _, _, _| {
            at.push(50 * PS_PER_MS);
            50 * PS_PER_MS
        });
        assert_eq!(at.len(), 3);
        let (late, _) = e.lateness();
        assert_eq!(late.max(), Some(39_000_000)); // due at 11 ms, written at 50 ms
        assert_eq!(late.min(), Some(37_000_000));
    }

    /// Runs `e` to the end with a caller that is on time except in two
    /// stalls, 15.5-19 ms and 25-27.5 ms (it gets round to anything falling
    /// due in one at its end); returns the times of the writes.
    fn run_with_two_stalls(e: &mut Engine) -> Vec<Time> {
        let us = |x: u64| x * PS_PER_US;
        let stalled = |t: Time| match t {
            t if (us(15_500)..us(19_000)).contains(&t) => us(19_000),
            t if (us(25_000)..us(27_500)).contains(&t) => us(27_500),
            t => t,
        };
        let mut written = Vec::new();
        while let Some(t) = e.next_event() {
            let w = stalled(t);
            e.run_until(w, &mut |_, _, _, _| {
                written.push(w);
                w
            });
        }
        written
    }

    /// Deliveries due 11, 12, ... 30 ms (12 Mbit/s, 10 ms), written on time
    /// except in the two stalls of [`run_with_two_stalls`]. Each is counted
    /// once, as long as its first delivery was late; a delivery no more than
    /// [`STALL`] late is none.
    #[test]
    fn stalls_are_counted_once_each_by_their_first_late_delivery() {
        let mut e = queued(20, false);
        let us = |x: u64| x * PS_PER_US;
        assert_eq!(run_with_two_stalls(&mut e).len(), 20);
        // 16, 17 and 18 ms written at 19 (3, 2, 1 ms late); 25, 26, 27 at 27.5.
        assert_eq!(e.stalls(), Stalls { count: 2, total: us(5_500), longest: us(3_000) });
        assert_eq!(e.lateness().0.max(), Some(3_000_000));
    }

    #[test]
    fn with_pauses_a_delivery_up_to_a_stall_late_is_measured_and_keeps_the_schedule() {
        let mut e = queued(3, true);
        // Due at 11, 12 and 13 ms; the caller gets to them 0.9 ms late each.
        let mut at = Vec::new();
        while let Some(t) = e.next_event() {
            let w = t + 900 * PS_PER_US;
            e.run_until(w, &mut |_, _, _, _| {
                at.push(w);
                w
            });
        }
        let ms = |x: u64| x * PS_PER_MS / 10;
        assert_eq!(at, vec![ms(119), ms(129), ms(139)]);
        assert_eq!((e.lateness().0.min(), e.lateness().0.max()), (Some(900_000), Some(900_000)));
        assert_eq!(e.stalls(), Stalls::default());
    }

    /// The same caller, pausing for stalls: each stall pauses the path for
    /// as long as its first delivery was late:
    /// what was due from 16 ms goes out from 19 ms, and from 25 ms (then due
    /// at 22) from 27.5, one serialisation time apart as before, never
    /// faster than the link. Nothing is written late.
    #[test]
    fn a_stall_pauses_the_path_and_nothing_leaves_faster_than_the_link() {
        let mut e = queued(20, true);
        let us = |x: u64| x * PS_PER_US;
        let written = run_with_two_stalls(&mut e);
        let ms = |x: u64| us(1000 * x);
        let mut want: Vec<Time> = (11..=15).map(ms).collect();
        want.extend((16..=21).map(|x| ms(x) + us(3_000)));
        want.extend((22..=30).map(|x| ms(x) + us(5_500)));
        assert_eq!(written, want);
        assert_eq!(e.stalls(), Stalls { count: 2, total: us(5_500), longest: us(3_000) });
        assert_eq!(e.lateness().0.max(), Some(0));
        let c = e.conservation();
        assert_eq!(c.created, c.delivered + c.dropped + c.queued + c.in_flight);
    }

    /// A packet that arrives after a stall waits behind what the pause
    /// kept in the queue: the link resumes where it stopped.
    #[test]
    fn what_arrives_after_a_stall_queues_behind_the_paused_packets() {
        let mut e = queued(3, true);
        // The caller is away from 0.5 ms to 2.5 ms: the first transmission
        // (due to end at 1 ms) is paused for 1.5 ms, and a fourth segment
        // arrives at 2.5 ms, while the second is on the wire.
        let mut written = Vec::new();
        let us = |x: u64| x * PS_PER_US;
        e.run_until(us(500), &mut |_, _, _, _| unreachable!("nothing due"));
        e.run_until(us(2_500), &mut |_, _, _, _| unreachable!("nothing due after the pause"));
        let p = build_tcp(40000, 5000, 1, 0, ACK, 1448);
        let id = e.alloc();
        e.buf_mut(id)[..p.len()].copy_from_slice(&p);
        e.ingress(us(2_500), Side::Snd, id, p.len(), None);
        while let Some(t) = e.next_event() {
            e.run_until(t, &mut |_, _, _, _| {
                written.push(t);
                t
            });
        }
        assert_eq!(written, vec![us(12_500), us(13_500), us(14_500), us(15_500)]);
        assert_eq!(e.stalls(), Stalls { count: 1, total: us(1_500), longest: us(1_500) });
    }

    /// A frame: an all-zero virtio header (no offload work) and the packet.
    fn plain_frame(pkt: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; wire::VNET_HDR_LEN];
        f.extend_from_slice(pkt);
        f
    }

    /// A TSO super-packet of 10 segments (14 480 payload bytes) read from the
    /// sender enters the bottleneck as 10 wire packets, one serialisation
    /// time apart, and all 10 count as data through the bottleneck.
    #[test]
    fn a_super_packet_enters_as_its_segments() {
        let mut c = cfg(1, 12_000_000, 100);
        c.frames = true;
        let mut e = Engine::new(c);
        e.start(0);
        let mut sp = build_tcp(40000, 5000, 1000, 0, ACK | wire::PSH, 10 * 1448);
        let h = wire::VnetHdr { gso_type: wire::VNET_GSO_TCPV4, gso_size: 1448, hdr_len: 52, ..Default::default() };
        sp.splice(0..0, h.to_bytes());
        assert_eq!(e.ingress_frame(0, Side::Snd, &mut sp, None), 10);
        assert_eq!(e.super_packets(), 1);
        // Written at their due times (one at a time): 1 ms apart, plus 10 ms.
        let mut out = Vec::new();
        while let Some(t) = e.next_event() {
            if t > 100 * PS_PER_MS {
                break;
            }
            e.run_until(t, &mut |_, head: &[u8], b: &[u8], _| {
                assert_eq!(head, [0u8; wire::VNET_HDR_LEN]);
                out.push((t / PS_PER_US, wire::parse(b)));
                t
            });
        }
        let seqs: Vec<(Time, u32, u32)> = out.iter().map(|(t, m)| (*t, m.seq, m.payload)).collect();
        let want: Vec<(Time, u32, u32)> = (0..10).map(|k| (11_000 + 1000 * k as u64, 1000 + 1448 * k, 1448)).collect();
        assert_eq!(seqs, want);
        // PSH only on the last segment, as Linux's GSO leaves it.
        assert!(out[..9].iter().all(|(_, m)| m.flags == ACK));
        assert_eq!(out[9].1.flags, ACK | wire::PSH);
        assert_eq!(e.bottleneck_data_packets(), 10);
        let c = e.conservation();
        assert_eq!((c.created, c.delivered), (10, 10));
    }

    /// Segments of a flow due by the time of a late write go out as one
    /// coalesced packet (a GSO frame the receiver's TCP takes like GRO's),
    /// each still counted, delayed and timed on its own; a CE-marked
    /// segment is never merged with unmarked ones.
    #[test]
    fn due_segments_of_a_flow_coalesce_into_one_write() {
        let mut c = cfg(1, 120_000_000, 100);
        c.frames = true;
        let mut e = Engine::new(c);
        e.start(0);
        for k in 0..4u32 {
            let mut p = build_tcp(40000, 5000, 1 + 1448 * k, 0, ACK, 1448);
            if k == 3 {
                p[1] = 3; // CE
            }
            assert_eq!(e.ingress_frame(0, Side::Snd, &mut plain_frame(&p), None), 1);
        }
        // Serialised by 0.4 ms and due at 10.1, 10.2, 10.3, 10.4 ms; the
        // caller wakes at 10.9 ms (late, but not by a stall).
        e.run_until(PS_PER_MS, &mut |_, _, _, _| unreachable!("nothing due yet"));
        let mut writes = Vec::new();
        let at = 10_900 * PS_PER_US;
        e.run_until(at, &mut |_, head: &[u8], b: &[u8], _| {
            writes.push((wire::VnetHdr::parse(head).unwrap(), b.to_vec()));
            at
        });
        assert_eq!(writes.len(), 2);
        let (h, b) = &writes[0];
        assert_eq!((h.gso_type, h.gso_size, h.flags), (wire::VNET_GSO_TCPV4, 1448, wire::VNET_F_NEEDS_CSUM));
        let m = wire::parse(b);
        assert_eq!((m.seq, m.payload), (1, 3 * 1448));
        assert_eq!(wire::parse(&writes[1].1).seq, 1 + 3 * 1448);
        assert_eq!(e.coalesced(), (1, 3));
        let (late, _) = e.lateness();
        assert_eq!((late.count(), late.min(), late.max()), (4, Some(500_000), Some(800_000)));
        assert_eq!(e.conservation().delivered, 4);
    }

    /// An engine at 12 Mbit/s (1 ms per full packet), 10 ms one way, whose
    /// forward link has `model`; its measurement (the models' time 0) starts at `t0`.
    fn modelled(model: LinkModel, t0: Time) -> Engine {
        let mut c = cfg(1, 12_000_000, 1000);
        c.fwd.model = model;
        c.duration_ns = 10_000_000_000;
        let mut e = Engine::new(c);
        e.start(t0);
        e
    }

    /// Feeds `n` full segments of flow 0 at `at` and runs to `until`; the times of the deliveries.
    fn deliveries(e: &mut Engine, at: &[Time], until: Time) -> Vec<Time> {
        let mut out = Vec::new();
        let p = build_tcp(40000, 5000, 1, 0, ACK, 1448);
        for &t in at {
            feed(e, t, Side::Snd, &p, &mut out);
        }
        run(e, until, &mut out);
        out.iter().map(|(t, _, _)| *t).collect()
    }

    /// A rate schedule counts from the start of the measurement: 12 Mbit/s,
    /// then 6 Mbit/s from 2 ms (model time). Measurement from 50 ms; three
    /// packets at 50 ms: the first takes 1 ms, the second 1 ms at 12 then,
    /// from 52 ms, 2 ms at 6; plus 10 ms.
    #[test]
    fn a_rate_schedule_runs_in_the_measurements_time() {
        let m = LinkModel {
            capacity: Some(sim::linkmodel::CapacityConfig::Schedule(vec![(0, 12_000_000), (2_000_000, 6_000_000)])),
            ..Default::default()
        };
        let t0 = 50 * PS_PER_MS;
        let mut e = modelled(m, t0);
        let got = deliveries(&mut e, &[t0, t0, t0], t0 + 100 * PS_PER_MS);
        let ms = |x: u64| t0 + x * PS_PER_MS;
        assert_eq!(got, vec![ms(11), ms(12), ms(14)]);
        assert!(e.conservation().holds());
    }

    /// Before the measurement starts the link is ideal (connection set-up).
    #[test]
    fn before_the_start_the_link_is_ideal() {
        let m = LinkModel {
            capacity: Some(sim::linkmodel::CapacityConfig::Schedule(vec![(0, 1_200_000)])),
            ..Default::default()
        };
        let t0 = 500 * PS_PER_MS;
        let mut e = modelled(m, t0);
        // At 12 Mbit/s (the nominal rate) before t0; at 1.2 Mbit/s from it.
        assert_eq!(deliveries(&mut e, &[0], t0), vec![11 * PS_PER_MS]);
        assert_eq!(deliveries(&mut e, &[t0], t0 + 100 * PS_PER_MS), vec![t0 + 20 * PS_PER_MS]);
    }

    /// A trace (ideal accounting: 1500 bytes per opportunity, exact times) of
    /// one opportunity every 2 ms, in the measurement's time: packets read
    /// together leave at its opportunities 2, 4, 6 ms after t0.
    #[test]
    fn a_trace_serves_at_its_opportunities() {
        let trace = sim::linkmodel::TraceConfig {
            opportunities_ms: vec![2, 4],
            once: false,
            mode: sim::linkmodel::TraceMode::Ideal,
        };
        let m = LinkModel { capacity: Some(sim::linkmodel::CapacityConfig::Trace(trace)), ..Default::default() };
        let t0 = 7 * PS_PER_MS + 123;
        let mut e = modelled(m, t0);
        let got = deliveries(&mut e, &[t0 + PS_PER_MS; 3], t0 + 100 * PS_PER_MS);
        let ms = |x: u64| t0 + x * PS_PER_MS;
        assert_eq!(got, vec![ms(12), ms(14), ms(16)]);
        // The queue trace gains the link's capacity per interval (100 ms: 50 opportunities).
        run(&mut e, t0 + 200 * PS_PER_MS, &mut Vec::new());
        let (_, queue) = e.take_columns();
        let cap = queue.iter().find(|(n, _)| *n == "capacity_bytes").expect("capacity column");
        let Column::U64(c) = &cap.1 else { panic!() };
        assert_eq!(&c[..2], &[50 * 1500, 50 * 1500]);
    }

    /// A policer of 10 full packets' burst at a rate too low to refill in
    /// the test: of 20 packets read at once, 10 pass and 10 are dropped
    /// (counted as the link's drops and the flow's).
    #[test]
    fn the_policer_drops_what_exceeds_its_bucket() {
        let m = LinkModel {
            policer: Some(sim::linkmodel::BucketConfig { rate_bps: 1_000, burst_bytes: 15_000 }),
            ..Default::default()
        };
        let mut e = modelled(m, 0);
        let got = deliveries(&mut e, &[PS_PER_MS; 20], 100 * PS_PER_MS);
        assert_eq!(got.len(), 10);
        assert_eq!(e.forward_port().drops, 10);
        assert_eq!(e.flow_reports()[0].drops, 10);
        assert_eq!(e.model_counters(0), vec![("policed", 10)]);
        assert!(e.conservation().holds());
    }

    /// Batches every 20 ms (phase 5 ms) in the measurement's time: packets
    /// arriving at 1, 3 and 26 ms leave the queue from 5 and from 45 ms.
    #[test]
    fn a_batch_is_released_at_its_boundary() {
        let m = LinkModel {
            batch: Some(sim::linkmodel::BatchConfig::Periodic { every_ns: 20_000_000, phase_ns: 5_000_000 }),
            ..Default::default()
        };
        let t0 = 30 * PS_PER_MS;
        let mut e = modelled(m, t0);
        let ms = |x: u64| t0 + x * PS_PER_MS;
        let got = deliveries(&mut e, &[ms(1), ms(3), ms(26)], ms(200));
        assert_eq!(got, vec![ms(16), ms(17), ms(56)]);
        assert_eq!(e.model_counters(0), vec![("batches", 2), ("batched", 3)]);
        assert!(e.conservation().holds());
    }

    /// Order-preserving jitter never reorders and adds at most its maximum;
    /// with reordering, every packet arrives by its own draw, some after one
    /// sent later, and all are delivered.
    #[test]
    fn jitter_on_the_line_after_the_link() {
        for reorder in [false, true] {
            let j = sim::linkmodel::JitterConfig {
                dist: Some(sim::linkmodel::JitterDist::Uniform { max_ns: 5_000_000 }),
                reorder,
                delay_steps: vec![],
            };
            let mut e = modelled(LinkModel { jitter: Some(j), ..Default::default() }, 0);
            let mut out = Vec::new();
            for k in 0..200u32 {
                let p = build_tcp(40000, 5000, 1 + 1448 * k, 0, ACK, 1448);
                feed(&mut e, k as u64 * PS_PER_MS, Side::Snd, &p, &mut out);
            }
            run(&mut e, 1_000 * PS_PER_MS, &mut out);
            assert_eq!(out.len(), 200);
            let seqs: Vec<u32> = out.iter().map(|(_, _, b)| (wire::parse(b).seq - 1) / 1448).collect();
            for (k, (t, _, _)) in out.iter().enumerate() {
                // Sent at seq ms, 1 ms on the wire, 10 ms on the line, at most 5 ms of jitter.
                let sent = seqs[k] as u64 * PS_PER_MS;
                assert!(*t >= sent + 11 * PS_PER_MS, "{reorder}: {k}");
                if reorder {
                    assert!(*t <= sent + 16 * PS_PER_MS, "{k}");
                }
            }
            let swapped = seqs.windows(2).filter(|w| w[1] < w[0]).count();
            let c = e.model_counters(0);
            assert_eq!(c[0], ("jitter_delivered", 200));
            if reorder {
                assert!(swapped > 10 && c[1].1 > 10, "{swapped} {c:?}");
            } else {
                assert_eq!((swapped, c[1].1), (0, 0));
            }
            assert!(e.conservation().holds());
        }
    }

    /// A delay step from 5 ms of the measurement on (the link's own 4 ms
    /// delay becomes 9 ms): the one-way delay grows by 5 ms from then.
    #[test]
    fn a_delay_step_counts_from_the_start() {
        let j = sim::linkmodel::JitterConfig { dist: None, reorder: false, delay_steps: vec![(5_000_000, 9_000_000)] };
        let mut c = cfg(1, 12_000_000, 1000);
        c.fwd.model = LinkModel { jitter: Some(j), ..Default::default() };
        c.fwd.delay_ns = 4_000_000;
        let mut e = Engine::new(c);
        let t0 = 100 * PS_PER_MS;
        e.start(t0);
        let ms = |x: u64| t0 + x * PS_PER_MS;
        assert_eq!(deliveries(&mut e, &[ms(0), ms(10)], ms(100)), vec![ms(11), ms(26)]);
    }

    /// Pausing for a stall moves the models with the path: a reordering
    /// line's packets and its pending event, a held batch and the models'
    /// time 0 all go `by` later, and everything is delivered once.
    #[test]
    fn a_pause_moves_the_models_with_the_path() {
        let j = sim::linkmodel::JitterConfig {
            dist: Some(sim::linkmodel::JitterDist::Uniform { max_ns: 3_000_000 }),
            reorder: true,
            delay_steps: vec![],
        };
        let m = LinkModel {
            jitter: Some(j),
            batch: Some(sim::linkmodel::BatchConfig::Periodic { every_ns: 4_000_000, phase_ns: 0 }),
            ..Default::default()
        };
        let mut c = cfg(1, 12_000_000, 1000);
        c.fwd.model = m;
        c.pause_stalls = true;
        c.frames = true;
        let mut e = Engine::new(c);
        e.start(0);
        let mut seqs = Vec::new();
        for k in 0..40u32 {
            let now = k as u64 * PS_PER_MS / 2;
            // The caller is away from 6 to 9 ms.
            if !(6 * PS_PER_MS..9 * PS_PER_MS).contains(&now) {
                e.run_until(now, &mut |_, _, b, _| {
                    let m = wire::parse(b);
                    seqs.extend((0..m.payload / 1448).map(|k| (m.seq - 1) / 1448 + k));
                    now
                });
            }
            let p = build_tcp(40000, 5000, 1 + 1448 * k, 0, ACK, 1448);
            assert_eq!(e.ingress_frame(now, Side::Snd, &mut plain_frame(&p), None), 1);
        }
        while let Some(t) = e.next_event() {
            e.run_until(t, &mut |_, _, b, _| {
                let m = wire::parse(b);
                seqs.extend((0..m.payload / 1448).map(|k| (m.seq - 1) / 1448 + k));
                t
            });
        }
        seqs.sort();
        assert_eq!(seqs, (0..40).collect::<Vec<u32>>());
        assert!(e.stalls().count >= 1);
        let c = e.conservation();
        assert!(c.holds() && c.in_flight == 0 && c.queued == 0, "{c:?}");
    }

    /// A line of two links: link 2 (12 Mbit/s, 1 ms per full packet, 5 ms
    /// to the next link) then link 0 (`rate`), with their twins 1 and 3 for
    /// the ACKs; flow 0 crosses both, flow 1 (a cross flow) link 0 only.
    /// One-way delays 20 ms and 10 ms.
    fn line_of_two(rate: u64, limit: u64) -> Engine {
        let mut c = cfg(2, rate, limit);
        c.flow_delay_ns = vec![20_000_000, 10_000_000];
        c.fwd.delay_ns = 5_000_000;
        c.rev.delay_ns = 5_000_000;
        let mut hop = LinkSpec::new(12_000_000, QueueLimit::Packets(100), QdiscConfig::DropTail);
        hop.delay_ns = 5_000_000;
        c.links = vec![hop.clone(), hop];
        c.routes = vec![
            Route { data: vec![2, 0], ack: vec![1, 3], measure: 0 },
            Route { data: vec![0], ack: vec![1], measure: 0 },
        ];
        let mut e = Engine::new(c);
        e.start(0);
        e
    }

    /// Data cross the links of their route in order, each link's delay
    /// between them, and the rest of the one-way delay after the last; ACKs
    /// come back over the twins.
    #[test]
    fn a_route_crosses_its_links_in_order() {
        // Link 0 at 6 Mbit/s: 2 ms per full packet.
        let mut e = line_of_two(6_000_000, 100);
        let mut out = Vec::new();
        let p = build_tcp(40000, 5000, 1, 0, ACK, 1448);
        feed(&mut e, 0, Side::Snd, &p, &mut out);
        feed(&mut e, 0, Side::Snd, &p, &mut out);
        let ack = build_tcp(5000, 40000, 1, 1, ACK, 0); // 52 B
        feed(&mut e, 0, Side::Rcv, &ack, &mut out);
        run(&mut e, 100 * PS_PER_MS, &mut out);
        let got: Vec<(Time, Side)> = out.iter().map(|(t, s, _)| (*t, *s)).collect();
        // Data: link 2 done at 1 and 2 ms, link 0 from 6 ms (5 ms later) for 2 ms each,
        // then 20 − 5 ms: 23 and 25 ms. The ACK: link 1 at 6 Mbit/s (69.333 µs), 5 ms,
        // link 3 at 12 Mbit/s (34.667 µs), then 15 ms (serialisation rounds up to the picosecond).
        let ack_at = 69_333_334 + 5 * PS_PER_MS + 34_666_667 + 15 * PS_PER_MS;
        assert_eq!(got, vec![(ack_at, Side::Snd), (23 * PS_PER_MS, Side::Rcv), (25 * PS_PER_MS, Side::Rcv)]);
        let c = e.link_conservation();
        assert_eq!(c.iter().map(|l| (l.arrived, l.sent)).collect::<Vec<_>>(), vec![(2, 2), (1, 1), (2, 2), (1, 1)]);
        assert!(c.iter().all(|l| l.holds() && l.held == 0));
        // The flow's bytes leave both links of its path; its rate is counted at link 0.
        let r = &e.flow_reports()[0];
        assert_eq!(r.link_bytes, vec![(2, 3000), (0, 3000)]);
        assert_eq!(r.bottleneck_bytes, 3000);
        assert!(e.conservation().holds());
    }

    /// A flow whose second link is the slower one queues there, not at
    /// its first link: at the first link's rate, its queue stays empty while
    /// the second link's fills and overflows; every link's packets are
    /// accounted for, and the drops are the flow's.
    #[test]
    fn the_slower_second_link_holds_the_queue() {
        // Link 0 at 3 Mbit/s behind link 2 at 12 Mbit/s; 10 packets of buffer at link 0.
        let mut e = line_of_two(3_000_000, 10);
        let mut out = Vec::new();
        for k in 0..100u32 {
            let p = build_tcp(40000, 5000, 1 + 1448 * k, 0, ACK, 1448);
            feed(&mut e, k as u64 * PS_PER_MS, Side::Snd, &p, &mut out);
        }
        let first = e.port_counters(2);
        let second = e.port_counters(0);
        assert_eq!(first.max_backlog_pkts, 0, "{first:?}");
        assert_eq!(first.drops, 0);
        assert!(second.drops > 0 && second.max_backlog_pkts == 10, "{second:?}");
        assert_eq!(e.flow_reports()[0].drops, second.drops);
        assert!(e.link_conservation().iter().all(|l| l.holds()), "{:?}", e.link_conservation());
        run(&mut e, 1_000 * PS_PER_MS, &mut out);
        let c = e.conservation();
        assert!(c.holds() && c.queued == 0 && c.in_flight == 0, "{c:?}");
        assert_eq!(out.len() as u64 + e.port_counters(0).drops, 100);
        assert!(e.link_conservation().iter().all(|l| l.holds() && l.held == 0));
    }

    /// The per-link trace has one row per link per interval; its bytes add
    /// up to each link's bytes sent.
    #[test]
    fn the_link_trace_has_a_row_per_link_per_interval() {
        let mut e = line_of_two(6_000_000, 100);
        let mut out = Vec::new();
        for k in 0..20u32 {
            let p = build_tcp(40001, 5001, 1 + 1448 * k, 0, ACK, 1448);
            feed(&mut e, k as u64 * PS_PER_MS, Side::Snd, &p, &mut out);
        }
        run(&mut e, 2_000 * PS_PER_MS, &mut out);
        assert!(e.finished());
        let cols = e.take_link_columns();
        let col = |name: &str| match &cols.iter().find(|(n, _)| *n == name).unwrap().1 {
            Column::U64(v) => v.clone(),
            _ => panic!(),
        };
        let (link, tx) = (col("link"), col("tx_bytes"));
        assert_eq!(link.len(), 4 * 10);
        assert_eq!(&link[..4], &[0, 1, 2, 3]);
        for l in 0..4 {
            let sum: u64 = link.iter().zip(&tx).filter(|(k, _)| **k == l).map(|(_, b)| b).sum();
            assert_eq!(sum, e.port_counters(l as usize).tx_bytes, "link {l}");
        }
        // The cross flow crosses link 0 only.
        assert_eq!(e.port_counters(2).tx_packets, 0);
        assert_eq!(e.port_counters(0).tx_packets, 20);
    }

    /// A link's jitter applies on the lines after it only (in a network, the
    /// line to the next link of a route), and its counters are that link's.
    #[test]
    fn a_links_jitter_applies_after_it_only() {
        let mut c = cfg(2, 12_000_000, 100);
        c.flow_delay_ns = vec![20_000_000, 10_000_000];
        c.fwd.delay_ns = 5_000_000;
        c.rev.delay_ns = 5_000_000;
        let mut hop = LinkSpec::new(12_000_000, QueueLimit::Packets(100), QdiscConfig::DropTail);
        hop.delay_ns = 5_000_000;
        let mut jittery = hop.clone();
        jittery.model = LinkModel {
            jitter: Some(sim::linkmodel::JitterConfig {
                dist: Some(sim::linkmodel::JitterDist::Uniform { max_ns: 2_000_000 }),
                reorder: false,
                delay_steps: vec![],
            }),
            ..Default::default()
        };
        c.links = vec![jittery, hop];
        c.routes = vec![
            Route { data: vec![2, 0], ack: vec![1, 3], measure: 0 },
            Route { data: vec![0], ack: vec![1], measure: 0 },
        ];
        let mut e = Engine::new(c);
        e.start(0);
        let mut out = Vec::new();
        // Flow 0 every 3 ms for 90 ms, then flow 1 (not to share link 0's queue).
        for k in 0..30u32 {
            let p = build_tcp(40000, 5000, 1 + 1448 * k, 0, ACK, 1448);
            feed(&mut e, k as u64 * 3 * PS_PER_MS, Side::Snd, &p, &mut out);
        }
        for k in 0..30u32 {
            let q = build_tcp(40001, 5001, 1 + 1448 * k, 0, ACK, 1448);
            feed(&mut e, (200 + k as u64 * 3) * PS_PER_MS, Side::Snd, &q, &mut out);
        }
        run(&mut e, 1_000 * PS_PER_MS, &mut out);
        assert_eq!(out.len(), 60);
        assert_eq!(e.model_counters(2), vec![("jitter_delivered", 30), ("reordered", 0)]);
        assert!(e.model_counters(0).is_empty());
        // Flow 1 (link 0 alone, no jitter): 1 ms on the wire, then 10 ms. Flow 0: 1 ms at
        // link 2, 5 ms and up to 2 ms of jitter, 1 ms at link 0, then 15 ms.
        for (t, _, b) in &out {
            let m = wire::parse(b);
            let k = (m.seq - 1) as u64 / 1448;
            if m.dport == 5001 {
                assert_eq!(*t, (200 + 3 * k + 11) * PS_PER_MS);
            } else {
                let d = t - 3 * k * PS_PER_MS;
                assert!((22 * PS_PER_MS..=24 * PS_PER_MS).contains(&d), "{d}");
            }
        }
        assert!(e.link_conservation().iter().all(|l| l.holds() && l.held == 0));
    }
}
