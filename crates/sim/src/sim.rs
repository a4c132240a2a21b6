//! The simulator: builds the dumbbell from a [`Config`], runs the event loop
//! and collects traces and statistics.
//!
//! Flows live in slots. The configured ("foreground") flows hold slots
//! 0..n for the whole run and are traced; background transfers take a slot
//! from a pool when they start and give it back once they have finished and
//! none of their packets or timers remain, so thousands of short flows reuse
//! a bounded set of buffers.

use crate::event::{Event, EventQueue, Time, TimerKind, PS_PER_NS, PS_PER_S, PS_PER_US, TIMER_KINDS};
use crate::hist::Histogram;
use crate::linkmodel::{JitterConfig, LineModel, PortModel};
use crate::net::{DelayLine, Hop, Port, Qdisc, QueueLimit};
use crate::packet::{Kind, Packet, PacketArena, PacketId, PacketView};
use crate::packet_log::{
    DropReason, Owner, PacketEvent, PacketLog, PacketRow, FLAG_ACK, FLAG_CWR, FLAG_ECE, FLAG_RETRANS,
};
use crate::rng::Rng;
use crate::service::{self, PortOwner};
use crate::tcp::rcvwnd::RcvWindow;
use crate::tcp::receiver::Receiver;
use crate::tcp::sender::{App, PeerWindow, Recovery, Sender, SenderConfig, Tso, T_APP, T_PACE, T_RTO};
use crate::trace::{Columns, FlowRow, FlowTrace, LinkTrace, QueueTrace};
use crate::traffic::{exponential, Arrivals, Direction, Loss, TcpSource, UdpPattern, UdpSource};
use crate::{
    AccessLink, Config, Conservation, FlowStats, LinkConfig, LinkStats, Output, QueueStats, Route, SourceStats,
    TransferRecord,
};
use cc::{CongestionControl, MAX_METRICS};

/// Random stream numbers, one per random process.
const STREAM_BOTTLENECK_LOSS: u64 = 1;
const STREAM_REVERSE_LOSS: u64 = 2;
/// RED's and PIE's coin flips at the bottleneck and reverse ports.
const STREAM_BOTTLENECK_QDISC: u64 = 3;
const STREAM_REVERSE_QDISC: u64 = 4;
const STREAM_TCP_SOURCE_BASE: u64 = 1_000;
const STREAM_UDP_SOURCE_BASE: u64 = 2_000;
/// Per-flow congestion-control seeds use streams STREAM_CC_BASE + flow id;
/// background transfers STREAM_CC_BACKGROUND + transfer index.
const STREAM_CC_BASE: u64 = 1 << 32;
const STREAM_CC_BACKGROUND: u64 = 1 << 33;

const FWD: usize = 0;
const REV: usize = 1;
/// Random streams of links 2, 3, …: loss and discipline, two per link from here.
const STREAM_LINK_BASE: u64 = 3_000;
/// Jitter of delay line i: stream STREAM_JITTER_BASE + i.
const STREAM_JITTER_BASE: u64 = 1 << 34;

struct Flow {
    sender: Sender,
    receiver: Receiver,
    /// Delay lines of the slot, from `line0`: `n_data` on the data route
    /// (sender→first link, between links, last link→receiver), then
    /// `n_ack` on the ACK route; a route of k links has k + 1 lines.
    line0: u32,
    n_data: u8,
    n_ack: u8,
    /// Links the data and the ACKs cross, in order.
    data_route: Vec<u32>,
    ack_route: Vec<u32>,
    /// Link where the flow's rate at the bottleneck is counted.
    measure_port: usize,
    /// The sender's access link when its sender keeps TCP Small Queues
    /// (it hears of each packet leaving it); else `usize::MAX`.
    host_port: usize,
    /// Wire bytes of its data that left each link of `data_route`.
    route_bytes: Vec<u64>,
    /// Time of the pending event of each timer slot (u64::MAX = none).
    pending: [Time; TIMER_KINDS],
    start: Time,
    stop: Option<Time>,
    /// Wire bytes of this flow's data that left its data port, this interval and in total.
    interval_bytes: u64,
    total_bytes: u64,
    drops: u64,
    /// Packets of this slot in ports and lines.
    in_network: u32,
    /// Background transfer: its index in `transfers`, and its session.
    transfer: Option<u32>,
    session: Option<(u32, u32)>,
    /// The transfer finished; the slot is released once drained.
    closing: bool,
}

struct TcpSourceState {
    cfg: TcpSource,
    rng: Rng,
    stats: SourceStats,
    /// Its host's access link for forward and for reverse transfers, if any.
    access: [Option<u32>; 2],
    tso: Option<Tso>,
}

struct UdpSourceState {
    cfg: UdpSource,
    rng: Rng,
    stats: SourceStats,
    packets: u64,
}

/// One simulation. Owns all of its state; no globals.
pub struct Simulator {
    now: Time,
    end: Time,
    /// The event loop pauses before events after this time (see
    /// [`Simulator::run_until`]); `end` otherwise.
    horizon: Time,
    interval: Time,
    trace_on: bool,
    seed: u64,
    q: EventQueue,
    arena: PacketArena,
    /// Links: 0 the bottleneck, 1 the reverse link, then the network's.
    ports: Vec<Port>,
    /// Propagation delay of each link (the dumbbell's reverse link: the bottleneck's).
    link_delay: Vec<Time>,
    /// Jitter and delay steps of each link's propagation, if any.
    link_jitter: Vec<Option<JitterConfig>>,
    /// Packets a link's batch released (reused).
    released: Vec<PacketId>,
    /// Time of the last probe.
    last_probe: Time,
    link_names: Vec<String>,
    /// A network other than the dumbbell: per-link trace rows are kept.
    network: bool,
    /// Each foreground flow's route (empty in the dumbbell).
    routes: Vec<Route>,
    lines: Vec<DelayLine>,
    flows: Vec<Flow>,
    /// Number of foreground flows (slots 0..n_fg).
    n_fg: usize,
    /// Released background slots, by the shape of their lines (data and ACK
    /// lines): a slot is reused only for a route of as many links each way.
    free_slots: Vec<((u8, u8), Vec<u32>)>,
    live_slots: usize,
    peak_slots: usize,
    tcp_sources: Vec<TcpSourceState>,
    udp_sources: Vec<UdpSourceState>,
    transfers: Vec<TransferRecord>,
    /// Queueing delay per link, ns.
    delays: Vec<Histogram>,
    flow_trace: FlowTrace,
    queue_trace: QueueTrace,
    link_trace: LinkTrace,
    /// Per link: drops, marks and bytes sent up to the last probe.
    link_seen: Vec<[u64; 3]>,
    /// See [`Simulator::set_trace_chunk_rows`].
    trace_chunk_rows: usize,
    interval_drops: u64,
    /// Bottleneck CE marks counted up to the last probe.
    last_marks: u64,
    interval_tx_bytes: u64,
    interval_bg_bytes: u64,
    created: u64,
    delivered: u64,
    dropped: u64,
    events: u64,
    bottleneck_data_packets: u64,
    /// The packet log's window is open: the event loop with its hooks runs.
    logging: bool,
    packet_log: PacketLog,
    /// See [`Simulator::set_packet_log`].
    packet_chunk_rows: usize,
}

/// How a slice of the event loop ended.
enum Slice {
    /// The experiment reached its end.
    Done,
    /// The budget ran out (or a trace chunk is ready).
    Paused,
    /// The packet log opened or closed, with this budget left.
    Switch(u64),
}

fn ns(t: u64) -> Time {
    t * PS_PER_NS
}

fn timer_kind(slot: usize) -> TimerKind {
    match slot {
        T_RTO => TimerKind::Rto,
        T_PACE => TimerKind::Pace,
        T_APP => TimerKind::App,
        _ => TimerKind::DelAck,
    }
}

fn port_of(reverse: bool) -> usize {
    if reverse {
        REV
    } else {
        FWD
    }
}

impl Simulator {
    /// Builds the dumbbell. Fails with a message naming the field if an
    /// algorithm, a parameter or a value the engine cannot represent is given.
    pub fn new(cfg: &Config) -> Result<Simulator, String> {
        cfg.check()?;
        let d = ns(cfg.bottleneck.delay_ns);
        let b = &cfg.bottleneck;
        let r = &cfg.reverse;
        let rows = if cfg.trace { (cfg.duration_ns / cfg.interval_ns + 1) as usize * cfg.flows.len() } else { 0 };
        let net = &cfg.network;
        let mut sim = Simulator {
            now: 0,
            end: ns(cfg.duration_ns),
            horizon: ns(cfg.duration_ns),
            interval: ns(cfg.interval_ns),
            trace_on: cfg.trace,
            seed: cfg.seed,
            q: EventQueue::new(),
            arena: PacketArena::new(),
            ports: vec![
                Port::with_qdisc(
                    b.rate_bps,
                    Qdisc::new(&b.qdisc, b.limit, b.rate_bps, Rng::new(cfg.seed, STREAM_BOTTLENECK_QDISC), cfg.seed),
                    Loss::new(b.loss_process(), Rng::new(cfg.seed, STREAM_BOTTLENECK_LOSS)),
                ),
                Port::with_qdisc(
                    r.rate_bps,
                    Qdisc::new(
                        &r.qdisc,
                        r.limit,
                        r.rate_bps,
                        Rng::new(cfg.seed, STREAM_REVERSE_QDISC),
                        cfg.seed ^ STREAM_REVERSE_QDISC,
                    ),
                    Loss::new(r.loss_process(), Rng::new(cfg.seed, STREAM_REVERSE_LOSS)),
                ),
            ],
            link_delay: vec![d, if net.is_dumbbell() { d } else { ns(r.delay_ns) }],
            link_jitter: vec![b.model.jitter.clone(), r.model.jitter.clone()],
            released: Vec::new(),
            last_probe: 0,
            link_names: (0..2).map(|i| link_name(net, i)).collect(),
            network: !net.is_dumbbell(),
            routes: net.routes.clone(),
            lines: Vec::with_capacity(cfg.flows.len() * 4),
            flows: Vec::with_capacity(cfg.flows.len()),
            n_fg: cfg.flows.len(),
            free_slots: Vec::new(),
            live_slots: 0,
            peak_slots: 0,
            tcp_sources: Vec::new(),
            udp_sources: Vec::new(),
            transfers: Vec::new(),
            delays: vec![Histogram::new(); 2],
            // Pre-size for up to 2^20 rows; longer traces grow as they go.
            flow_trace: FlowTrace::with_capacity(rows.min(1 << 20)),
            queue_trace: QueueTrace::default(),
            link_trace: LinkTrace::default(),
            link_seen: vec![[0; 3]; 2],
            trace_chunk_rows: usize::MAX,
            interval_drops: 0,
            last_marks: 0,
            interval_tx_bytes: 0,
            interval_bg_bytes: 0,
            created: 0,
            delivered: 0,
            dropped: 0,
            events: 0,
            bottleneck_data_packets: 0,
            logging: false,
            packet_log: PacketLog::default(),
            packet_chunk_rows: usize::MAX,
        };
        for (port, m) in sim.ports.iter_mut().zip([&b.model, &r.model]) {
            if m.needs_port_model() {
                port.model = Some(Box::new(PortModel::new(m)));
            }
        }
        for (k, link) in net.links.iter().enumerate() {
            sim.add_link(link, link_name(net, 2 + k));
        }
        // Senders' access links come after the network's, one per flow that has one,
        // in front of its data route.
        if cfg.flows.iter().any(|f| f.access.is_some()) {
            sim.routes = (0..cfg.flows.len()).map(|i| sim.route_of(i, cfg.flows[i].reverse)).collect();
            sim.network = true;
            for (i, f) in cfg.flows.iter().enumerate() {
                let Some(a) = f.access else { continue };
                sim.routes[i].data.insert(0, sim.ports.len() as u32);
                sim.add_link(&access_link(a), format!("access{i}"));
            }
        }
        // Then background sources' hosts: one access link per direction a source sends in.
        let mut source_access = Vec::with_capacity(cfg.tcp_sources.len());
        for s in &cfg.tcp_sources {
            let mut access = [None; 2];
            if let Some(a) = s.access {
                sim.network = true;
                let ways: &[usize] = match (s.route.is_some(), s.direction) {
                    (true, _) | (false, Direction::Forward) => &[0],
                    (false, Direction::Reverse) => &[1],
                    (false, Direction::Both) => &[0, 1],
                };
                for &w in ways {
                    access[w] = Some(sim.ports.len() as u32);
                    let name = if w == 0 { format!("access_{}", s.name) } else { format!("access_{}_rev", s.name) };
                    sim.add_link(&access_link(a), name);
                }
            }
            source_access.push(access);
        }
        for (i, f) in cfg.flows.iter().enumerate() {
            let cc = cc::build(&f.cc, &f.params).map_err(|e| match e.param {
                Some(p) => format!("flows[{i}].params.{p}: {}", e.message),
                None => format!("flows[{i}].cc: {}", e.message),
            })?;
            let route = sim.route_of(i, f.reverse);
            for (what, links) in [("data", &route.data), ("ACK", &route.ack)] {
                let total: Time = links.iter().map(|&l| sim.link_delay[l as usize]).sum();
                if ns(f.rtt_ns) / 2 < total {
                    return Err(if sim.network {
                        format!("flows[{i}].rtt: shorter than twice the delay of its {what} route's links")
                    } else {
                        format!("flows[{i}].rtt: shorter than twice the bottleneck delay")
                    });
                }
            }
            let recovery = f.recovery.unwrap_or_else(|| default_recovery(&f.cc));
            // The receiver's window, and what the handshake tells the sender of it.
            let window = f.receive_window.map(|c| Box::new(RcvWindow::new(c, f.mss, f.rwnd_bytes)));
            let scfg = SenderConfig {
                mss: f.mss,
                header_bytes: f.header_bytes,
                init_cwnd: f.init_cwnd,
                rwnd_bytes: f.rwnd_bytes,
                pacing: f.pacing,
                recovery,
                app: f.app,
                ecn: f.ecn,
                accecn: f.accecn,
                peer_accecn: f.receiver_accecn,
                tso: f.tso,
                tsq: f.access.and_then(|a| a.tsq),
                peer_window: window.as_ref().map(|w| PeerWindow { initial: w.initial_window(), wscale: w.wscale }),
            };
            let slot = sim.alloc_slot(route.data.len(), route.ack.len());
            debug_assert_eq!(slot as usize, i);
            let seed = Rng::new(cfg.seed, STREAM_CC_BASE + i as u64).next_u64();
            sim.init_slot(slot, scfg, cc, seed, ns(f.rtt_ns), &route, ns(f.start_ns));
            let fl = &mut sim.flows[i];
            fl.receiver.accecn_option = f.accecn_option;
            if let Some(c) = f.sack_compression {
                fl.receiver.set_sack_compression(c.nr, ns(c.delay_ns), ns(f.rtt_ns));
            }
            fl.receiver.window = window;
            fl.stop = f.stop_ns.map(ns);
            if fl.start < sim.end {
                sim.q.push(fl.start, Event::FlowStart(i as u32));
            }
            if let Some(s) = fl.stop {
                if s < sim.end {
                    sim.q.push(s, Event::FlowStop(i as u32));
                }
            }
        }
        for (i, s) in cfg.tcp_sources.iter().enumerate() {
            let path = format!("background source {} ({})", i, s.name);
            cc::build(&s.cc, &s.params).map_err(|e| format!("{path}: {}", e.message))?;
            let mut st = TcpSourceState {
                cfg: s.clone(),
                rng: Rng::new(cfg.seed, STREAM_TCP_SOURCE_BASE + i as u64),
                stats: SourceStats {
                    name: s.name.clone(),
                    kind: "tcp",
                    active_from_ns: s.start_ns,
                    active_to_ns: s.stop_ns.unwrap_or(cfg.duration_ns).min(cfg.duration_ns),
                    ..SourceStats::default()
                },
                access: source_access[i],
                tso: s.tso.clone().map(Tso::from),
            };
            let start = ns(s.start_ns);
            match s.arrivals {
                Arrivals::Poisson { rate } => {
                    if rate <= 0.0 || !rate.is_finite() {
                        return Err(format!("{path}: arrival rate must be positive"));
                    }
                    // Saturating: a draw may land beyond 2^64 ps, after the end of any run.
                    let at = start.saturating_add((exponential(&mut st.rng, 1.0 / rate) * PS_PER_S as f64) as Time);
                    sim.q.push(at, Event::Arrival(i as u32));
                }
                Arrivals::Sessions { sessions, off_mean_ns } => {
                    for k in 0..sessions {
                        // Each session begins with an idle period, so they do not start in step.
                        let gap = (exponential(&mut st.rng, off_mean_ns as f64) as u64).saturating_mul(PS_PER_NS);
                        sim.q.push(start.saturating_add(gap), Event::SessionStart(i as u32, k));
                    }
                }
            }
            sim.tcp_sources.push(st);
        }
        for (i, u) in cfg.udp_sources.iter().enumerate() {
            if u.rate_bps == 0 || u.packet_bytes == 0 {
                return Err(format!("UDP source {} ({}): rate and packet size must be positive", i, u.name));
            }
            sim.udp_sources.push(UdpSourceState {
                cfg: u.clone(),
                rng: Rng::new(cfg.seed, STREAM_UDP_SOURCE_BASE + i as u64),
                stats: SourceStats {
                    name: u.name.clone(),
                    kind: "udp",
                    active_from_ns: u.start_ns,
                    active_to_ns: u.stop_ns.unwrap_or(cfg.duration_ns).min(cfg.duration_ns),
                    ..SourceStats::default()
                },
                packets: 0,
            });
            sim.q.push(ns(u.start_ns), Event::UdpSend(i as u32));
        }
        sim.q.push(sim.interval.min(sim.end), Event::Probe);
        Ok(sim)
    }

    /// Adds a link after those there are (a network's, then senders' access
    /// links): its port with its discipline and models, its loss process, its
    /// propagation delay and jitter, and its measurement.
    fn add_link(&mut self, link: &LinkConfig, name: String) {
        let i = self.ports.len() as u64;
        let stream = STREAM_LINK_BASE + 2 * (i - 2);
        let qdisc = Qdisc::new(&link.qdisc, link.limit, link.rate_bps, Rng::new(self.seed, stream + 1), self.seed ^ i);
        let loss = Loss::new(link.loss_process(), Rng::new(self.seed, stream));
        let mut port = Port::with_qdisc(link.rate_bps, qdisc, loss);
        if link.model.needs_port_model() {
            port.model = Some(Box::new(PortModel::new(&link.model)));
        }
        self.ports.push(port);
        self.link_delay.push(ns(link.delay_ns));
        self.link_jitter.push(link.model.jitter.clone());
        self.delays.push(Histogram::new());
        self.link_seen.push([0; 3]);
        self.link_names.push(name);
    }

    /// The route of foreground flow `i`: the network's, or the dumbbell's
    /// (data on the bottleneck, ACKs on the reverse link; the other way
    /// round for a reverse flow).
    fn route_of(&self, i: usize, reverse: bool) -> Route {
        match self.routes.get(i) {
            Some(r) => r.clone(),
            None => dumbbell_route(reverse),
        }
    }

    /// Takes a free flow slot made for routes of `data` and `ack` links, or
    /// makes a new one.
    fn alloc_slot(&mut self, data: usize, ack: usize) -> u32 {
        self.live_slots += 1;
        self.peak_slots = self.peak_slots.max(self.live_slots);
        let shape = ((data + 1) as u8, (ack + 1) as u8);
        if let Some(s) = self.free_slots.iter_mut().find(|(k, _)| *k == shape).and_then(|(_, v)| v.pop()) {
            return s;
        }
        let id = self.flows.len() as u32;
        let base = self.lines.len() as u32;
        for _ in 0..data + ack + 2 {
            self.lines.push(DelayLine::new(0, Hop::Sender(id)));
        }
        let dummy = SenderConfig::bulk(1, 0, 1);
        self.flows.push(Flow {
            sender: Sender::new(id, dummy, cc::build("reno", &[]).expect("reno is registered")),
            receiver: Receiver::new(id, 1, 0, None),
            line0: base,
            n_data: (data + 1) as u8,
            n_ack: (ack + 1) as u8,
            data_route: Vec::with_capacity(data),
            ack_route: Vec::with_capacity(ack),
            measure_port: FWD,
            host_port: usize::MAX,
            route_bytes: Vec::with_capacity(data),
            pending: [u64::MAX; TIMER_KINDS],
            start: 0,
            stop: None,
            interval_bytes: 0,
            total_bytes: 0,
            drops: 0,
            in_network: 0,
            transfer: None,
            session: None,
            closing: false,
        });
        id
    }

    /// Sets a slot up for a new connection (its lines are empty).
    #[allow(clippy::too_many_arguments)]
    fn init_slot(
        &mut self,
        slot: u32,
        scfg: SenderConfig,
        cc: cc::AnyCc,
        cc_seed: u64,
        rtt: Time,
        route: &Route,
        start: Time,
    ) {
        let total = match scfg.app {
            App::Fixed { bytes } => Some(bytes),
            _ => None,
        };
        let (mss, hdr) = (scfg.mss, scfg.header_bytes);
        let fl = &mut self.flows[slot as usize];
        debug_assert!(fl.n_data as usize == route.data.len() + 1 && fl.n_ack as usize == route.ack.len() + 1);
        let mut first = fl.line0 as usize;
        // A sender with TCP Small Queues hands its packets to its host queue at
        // once (they count as below TCP until they leave the NIC): the delay
        // in front of the access link moves behind it.
        let host_first = scfg.tsq.is_some();
        for (links, end) in [(&route.data, Hop::Receiver(slot)), (&route.ack, Hop::Sender(slot))] {
            // Lines: a, the links' delays but the last, the last link's delay + b;
            // a = b = (rtt/2 − Σ delays)/2 (the dumbbell's a_i and b_i).
            let sum: Time = links.iter().map(|&l| self.link_delay[l as usize]).sum();
            let one_way = (rtt / 2).max(sum);
            let access = (one_way - sum) / 2;
            let mut before = 0;
            for (k, &l) in links.iter().enumerate() {
                let line = &mut self.lines[first + k];
                debug_assert!(line.is_empty());
                line.delay = if k == 0 { access } else { self.link_delay[links[k - 1] as usize] };
                if host_first && end == Hop::Receiver(slot) && k < 2 {
                    line.delay = if k == 0 { 0 } else { access + self.link_delay[links[0] as usize] };
                }
                line.next = Hop::Port(l);
                before += line.delay;
            }
            let last = &mut self.lines[first + links.len()];
            debug_assert!(last.is_empty());
            last.delay = one_way - before;
            last.next = end;
            // The line after each link carries that link's jitter.
            for (k, &l) in links.iter().enumerate() {
                let i = first + k + 1;
                let line = &mut self.lines[i];
                if line.model.as_ref().map(|m| m.link) == Some(l) {
                    continue; // a reused slot's line goes on with its random stream
                }
                line.model = self.link_jitter[l as usize].as_ref().map(|j| {
                    let rng = Rng::new(self.seed, STREAM_JITTER_BASE + i as u64);
                    Box::new(LineModel::new(j, l, self.link_delay[l as usize], rng))
                });
            }
            first += links.len() + 1;
        }
        fl.data_route.clear();
        fl.data_route.extend_from_slice(&route.data);
        fl.ack_route.clear();
        fl.ack_route.extend_from_slice(&route.ack);
        fl.route_bytes.clear();
        fl.route_bytes.resize(route.data.len(), 0);
        fl.measure_port = route.measure as usize;
        fl.host_port = if scfg.tsq.is_some() { route.data[0] as usize } else { usize::MAX };
        let accurate_ecn = cc.needs_ecn();
        fl.sender.reinit(slot, scfg, cc);
        fl.sender.tp.rng_seed = cc_seed;
        fl.receiver.reinit(slot, mss, hdr, total);
        let ecn_mode = fl.sender.tp.ecn_mode;
        fl.receiver.accurate_ecn = accurate_ecn && ecn_mode == cc::EcnMode::Rfc3168;
        fl.receiver.accecn = ecn_mode == cc::EcnMode::AccEcn;
        fl.pending = [u64::MAX; TIMER_KINDS];
        fl.start = start;
        fl.stop = None;
        fl.interval_bytes = 0;
        fl.total_bytes = 0;
        fl.drops = 0;
        fl.in_network = 0;
        fl.transfer = None;
        fl.session = None;
        fl.closing = false;
    }

    /// Starts one background transfer of TCP source `src`.
    fn start_transfer(&mut self, src: u32, session: Option<u32>) {
        let now = self.now;
        let st = &mut self.tcp_sources[src as usize];
        let size = st.cfg.sizes.sample(&mut st.rng);
        let rtt = ns(st.cfg.rtt.sample(&mut st.rng));
        let reverse = match st.cfg.direction {
            Direction::Forward => false,
            Direction::Reverse => true,
            Direction::Both => st.rng.uniform() < 0.5,
        };
        // A transfer's RTT covers the propagation of its own links.
        let (mut route, rtt) = match &st.cfg.route {
            None => (dumbbell_route(reverse), rtt.max(2 * self.link_delay[FWD])),
            Some(r) => {
                let one_way = |links: &[u32]| links.iter().map(|&l| self.link_delay[l as usize]).sum::<Time>();
                (r.clone(), rtt.max(2 * one_way(&r.data).max(one_way(&r.ack))))
            }
        };
        if let Some(a) = st.access[reverse as usize] {
            route.data.insert(0, a);
        }
        let c = &st.cfg;
        let cc = cc::build(&c.cc, &c.params).expect("checked when the source was built");
        let scfg = SenderConfig {
            pacing: c.pacing,
            recovery: default_recovery(&c.cc),
            app: App::Fixed { bytes: size },
            ecn: c.ecn,
            tso: st.tso,
            tsq: c.access.and_then(|a| a.tsq),
            ..SenderConfig::bulk(c.mss, c.header_bytes, c.init_cwnd)
        };
        st.stats.offered_bytes += size;
        st.stats.started += 1;
        let tid = self.transfers.len() as u32;
        self.transfers.push(TransferRecord {
            source: src,
            session,
            size_bytes: size,
            start_ns: now / PS_PER_NS,
            fct_ns: None,
            rtt_ns: rtt / PS_PER_NS,
            reverse,
            delivered_bytes: 0,
        });
        let seed = Rng::new(self.seed, STREAM_CC_BACKGROUND + tid as u64).next_u64();
        let slot = self.alloc_slot(route.data.len(), route.ack.len());
        self.init_slot(slot, scfg, cc, seed, rtt, &route, now);
        let fl = &mut self.flows[slot as usize];
        fl.transfer = Some(tid);
        fl.session = session.map(|k| (src, k));
        fl.sender.start(now);
        self.flush(slot);
    }

    /// A background transfer finished: record it, schedule its session's
    /// next transfer, and release the slot when drained.
    fn finish_transfer(&mut self, slot: u32) {
        let now = self.now;
        let fl = &mut self.flows[slot as usize];
        let Some(tid) = fl.transfer else { return };
        fl.closing = true;
        let rec = &mut self.transfers[tid as usize];
        rec.fct_ns = Some(now / PS_PER_NS - rec.start_ns);
        rec.delivered_bytes = rec.size_bytes;
        let st = &mut self.tcp_sources[rec.source as usize];
        st.stats.completed += 1;
        st.stats.delivered_bytes += rec.size_bytes;
        if let Some((src, k)) = fl.session {
            if let Arrivals::Sessions { off_mean_ns, .. } = st.cfg.arrivals {
                let at =
                    now.saturating_add((exponential(&mut st.rng, off_mean_ns as f64) as u64).saturating_mul(PS_PER_NS));
                let stop = st.cfg.stop_ns.map(ns).unwrap_or(Time::MAX);
                if at < self.end && at < stop {
                    self.q.push(at, Event::SessionStart(src, k));
                }
            }
        }
        self.maybe_release(slot);
    }

    #[inline]
    fn maybe_release(&mut self, slot: u32) {
        let fl = &mut self.flows[slot as usize];
        // Timer events still queued for the slot are harmless: a reused slot
        // starts with no pending times, so they no longer match and are skipped.
        if fl.closing && fl.in_network == 0 {
            fl.closing = false;
            fl.transfer = None;
            let shape = (fl.n_data, fl.n_ack);
            match self.free_slots.iter_mut().find(|(k, _)| *k == shape) {
                Some((_, v)) => v.push(slot),
                None => self.free_slots.push((shape, vec![slot])),
            }
            self.live_slots -= 1;
        }
    }

    /// Runs to the end of the experiment.
    pub fn run(&mut self) {
        while !self.run_events(u64::MAX) {}
    }

    /// Handles every event at or before `t_ns` (ns; at most the end of the
    /// experiment), at most `budget` of them, and returns true once all are
    /// handled: the simulated time is then `t_ns` (the end if earlier),
    /// events at exactly `t_ns` included, and the next event comes after it.
    /// Events run in the same order as in one run: stopping at a time pushes
    /// nothing, so a run made of such steps, with nothing changed between
    /// them, is the same run, bit for bit.
    pub fn run_until(&mut self, t_ns: u64, budget: u64) -> bool {
        let until = ns(t_ns).min(self.end);
        if until < self.now {
            return true;
        }
        self.horizon = until;
        let done = self.run_events(budget);
        self.horizon = self.end;
        let reached = done || self.q.peek_time().is_none_or(|t| t > until);
        if reached {
            // Every event up to `until` is handled: the clock stands there,
            // where a change made now (`set_cwnd`, `set_pacing_rate`) takes effect.
            self.now = self.now.max(until);
        }
        reached
    }

    /// Sets foreground flow `flow`'s congestion window, packets (at least
    /// 1, at most the sender's clamp), at the current time; a flow that has
    /// started sends at once what the new window allows. The algorithm then
    /// continues from this value (it may change it again on the next ACK,
    /// as it changes its own). Meant between steps of [`Simulator::run_until`].
    pub fn set_cwnd(&mut self, flow: usize, pkts: u32) -> Result<(), String> {
        self.check_flow(flow)?;
        if pkts == 0 {
            return Err(format!("flow {flow}: cwnd must be at least 1 packet"));
        }
        let tp = &mut self.flows[flow].sender.tp;
        tp.snd_cwnd = pkts.min(tp.snd_cwnd_clamp);
        self.resume(flow);
        Ok(())
    }

    /// Sets foreground flow `flow`'s slow-start threshold, packets (at least
    /// 2): a window at or above it grows as congestion avoidance does.
    /// Meant between steps of [`Simulator::run_until`].
    pub fn set_ssthresh(&mut self, flow: usize, pkts: u32) -> Result<(), String> {
        self.check_flow(flow)?;
        if pkts < 2 {
            return Err(format!("flow {flow}: ssthresh must be at least 2 packets"));
        }
        self.flows[flow].sender.tp.snd_ssthresh = pkts;
        Ok(())
    }

    /// Sets foreground flow `flow`'s pacing rate, bits per second of payload
    /// (the sender's `tp.pacing_rate` is bytes per second; 0: not paced
    /// until it is set again). It paces only a flow with pacing on; an
    /// algorithm that sets its own rate (BBR) sets it again when it next
    /// does, and for the others the sender recomputes it on every ACK
    /// (Linux `tcp_update_pacing_rate`). Meant between steps of
    /// [`Simulator::run_until`].
    pub fn set_pacing_rate(&mut self, flow: usize, bps: u64) -> Result<(), String> {
        self.check_flow(flow)?;
        self.flows[flow].sender.tp.pacing_rate = bps / 8;
        self.resume(flow);
        Ok(())
    }

    /// Restarts foreground flow `flow`'s algorithm with the parameters
    /// `params` (the same algorithm; those not given take their defaults),
    /// as Linux does when a live socket's algorithm is set
    /// (`tcp_reinit_congestion_control`): a new controller whose `init`
    /// runs on the sender's current state. The window, the RTT estimates
    /// and the rest of the sender's state stay; the algorithm's own state
    /// starts afresh (BBR, for one, goes back to Startup). Refused if the
    /// parameters change whether the algorithm needs ECN or the internals
    /// it traces. Meant between steps of [`Simulator::run_until`].
    pub fn set_cc_params(&mut self, flow: usize, params: &[(String, cc::registry::ParamValue)]) -> Result<(), String> {
        self.check_flow(flow)?;
        let started = self.events > 0 && self.flows[flow].start <= self.now;
        let now = self.now;
        let sender = &mut self.flows[flow].sender;
        let mut new = cc::build(sender.cc.name(), params).map_err(|e| match e.param {
            Some(p) => format!("flows[{flow}].params.{p}: {}", e.message),
            None => format!("flows[{flow}].cc: {}", e.message),
        })?;
        if new.needs_ecn() != sender.cc.needs_ecn() || new.metric_names() != sender.cc.metric_names() {
            return Err(format!(
                "flows[{flow}].params: these parameters change whether {} needs ECN or what it traces",
                sender.cc.name()
            ));
        }
        if started {
            // The sender's clock as on an event now (`Sender::set_now`).
            sender.tp.now_ns = now / 1_000;
            sender.tp.now_us = now / (PS_PER_NS * 1_000);
            sender.tp.prior_ssthresh = 0; // Linux tcp_init_congestion_control
            new.init(&mut sender.tp);
        }
        sender.cc = new;
        self.resume(flow);
        Ok(())
    }

    /// Foreground flow `flow`'s congestion window and pacing rate (bits per
    /// second) now.
    pub fn flow_cwnd_pacing(&self, flow: usize) -> Result<(u32, u64), String> {
        self.check_flow(flow)?;
        let tp = &self.flows[flow].sender.tp;
        Ok((tp.snd_cwnd, tp.pacing_rate.saturating_mul(8)))
    }

    /// Foreground flow `flow`'s ECN feedback now: the negotiated mode, the
    /// packets its sender has counted as delivered CE-marked
    /// (`delivered_ce`) and, with AccECN, its receiver's counters.
    pub fn flow_ecn(&self, flow: usize) -> Result<(cc::EcnMode, u64, Option<crate::tcp::accecn::Counters>), String> {
        self.check_flow(flow)?;
        let fl = &self.flows[flow];
        let mode = fl.sender.tp.ecn_mode;
        Ok((mode, fl.sender.tp.delivered_ce, (mode == cc::EcnMode::AccEcn).then_some(fl.receiver.counters)))
    }

    /// Whether `flow` names a foreground flow.
    fn check_flow(&self, flow: usize) -> Result<(), String> {
        if flow >= self.n_fg {
            return Err(format!("no flow {flow} (there are {})", self.n_fg));
        }
        Ok(())
    }

    /// After a change from outside: a started flow sends what it now may.
    /// Events up to `now` have been handled, so its start has if it is due.
    fn resume(&mut self, flow: usize) {
        let fl = &self.flows[flow];
        if self.events == 0 || fl.start > self.now {
            return; // not started: its start sends with the values set
        }
        let now = self.now;
        self.flows[flow].sender.try_send(now);
        self.flush(flow as u32);
    }

    /// The end of the experiment, ns.
    pub fn end_ns(&self) -> u64 {
        self.end / PS_PER_NS
    }

    /// Simulated time reached, ns.
    pub fn now_ns(&self) -> u64 {
        self.now / PS_PER_NS
    }

    /// Data packets that have crossed the bottleneck so far.
    pub fn bottleneck_data_packets(&self) -> u64 {
        self.bottleneck_data_packets
    }

    /// Ends every slice of [`Simulator::run_events`] once this many flow
    /// trace rows are waiting, so that a caller taking them with
    /// [`Simulator::take_trace`] holds at most about this many at a time.
    pub fn set_trace_chunk_rows(&mut self, rows: usize) {
        self.trace_chunk_rows = rows.max(1);
    }

    /// Records every packet event at the links in the window [from_ns,
    /// to_ns) into the packet log (see [`crate::packet_log`]); `chunk_rows`:
    /// a slice of [`Simulator::run_events`] ends at the next probe once this
    /// many rows are waiting, for the caller to take them
    /// ([`Simulator::packet_log`], [`Simulator::clear_packet_log`]); what is
    /// left comes with [`Simulator::finish`]. Call before running.
    pub fn set_packet_log(&mut self, from_ns: u64, to_ns: u64, chunk_rows: usize) -> Result<(), String> {
        if from_ns >= to_ns {
            return Err(format!("packet log: the window's start ({from_ns} ns) must be before its end ({to_ns} ns)"));
        }
        let (from, to) = (ns(from_ns), ns(to_ns));
        self.packet_chunk_rows = chunk_rows.max(1);
        // Room for one chunk up front; a longer slice grows the buffers by doubling.
        self.packet_log = PacketLog::new(from, to, chunk_rows.clamp(1, 1 << 16));
        self.arena.marked.reserve(64);
        // Opened a picosecond early, so that it is open for every event at
        // `from` (`log` keeps rows only from `from` on); at 0, now.
        if from == 0 {
            self.open_packet_log(true);
        } else if from <= self.end {
            self.q.push(from - 1, Event::PacketLog(true));
        }
        if to <= self.end {
            self.q.push(to, Event::PacketLog(false));
        }
        Ok(())
    }

    /// The packet log's rows not yet cleared.
    pub fn packet_log(&self) -> &PacketLog {
        &self.packet_log
    }

    /// Forgets the packet log's rows (after the caller has taken them),
    /// keeping its buffers.
    pub fn clear_packet_log(&mut self) {
        self.packet_log.clear();
    }

    fn open_packet_log(&mut self, open: bool) {
        self.logging = open;
        self.arena.log_marks = open;
        self.arena.marked.clear();
        if open {
            self.packet_log.restart_aqm(self.ports.iter().map(|p| p.qdisc.aqm_drops()));
        }
    }

    /// Appends one row about packet `id` at port `link`.
    #[cold]
    #[inline(never)]
    fn log(&mut self, link: usize, id: PacketId, event: PacketEvent, reason: DropReason) {
        let now = self.now;
        if now < self.packet_log.from || now >= self.packet_log.to {
            return; // the picosecond before the window, or its end before the closing event
        }
        let pkt = self.arena.get(id);
        let flags = if pkt.retrans { FLAG_RETRANS } else { 0 }
            | if pkt.ece { FLAG_ECE } else { 0 }
            | if pkt.cwr { FLAG_CWR } else { 0 }
            | if pkt.kind == Kind::Ack { FLAG_ACK } else { 0 };
        let ecn = self.arena.codepoint(id);
        let (owner, owner_id, seq_bytes, ack_bytes) = match pkt.kind {
            Kind::Udp => (Owner::Udp, pkt.flow, pkt.seg.saturating_sub(1) * pkt.payload as u64, 0),
            kind => {
                let fl = &self.flows[pkt.flow as usize];
                let (owner, owner_id) = if (pkt.flow as usize) < self.n_fg {
                    (Owner::Flow, pkt.flow)
                } else {
                    (Owner::Transfer, fl.transfer.unwrap_or(u32::MAX))
                };
                let mss = fl.sender.cfg.mss as u64;
                if kind == Kind::Data {
                    (owner, owner_id, pkt.seg * mss, 0)
                } else {
                    // The last segment of a sized transfer may be short.
                    let ack = match fl.sender.cfg.app {
                        App::Fixed { bytes } => (pkt.seg * mss).min(bytes),
                        _ => pkt.seg * mss,
                    };
                    (owner, owner_id, 0, ack)
                }
            }
        };
        self.packet_log.push(PacketRow {
            time_ns: now / PS_PER_NS,
            link: link as u8,
            event,
            reason,
            owner,
            id: owner_id,
            seq_bytes,
            ack_bytes,
            size_bytes: pkt.wire_len,
            payload_bytes: pkt.payload,
            flags,
            ecn,
        });
    }

    /// Logs the marks the discipline of port `p` just made.
    #[cold]
    #[inline(never)]
    fn log_marks(&mut self, p: usize) {
        for i in 0..self.arena.marked.len() {
            let id = self.arena.marked[i];
            self.log(p, id, PacketEvent::Mark, DropReason::None);
        }
        self.arena.marked.clear();
    }

    /// Logs the marks of a dequeue at port `p` and the start of `next`'s transmission.
    #[cold]
    #[inline(never)]
    fn log_dequeue(&mut self, p: usize, next: Option<PacketId>) {
        self.log_marks(p);
        if let Some(id) = next {
            self.log(p, id, PacketEvent::Dequeue, DropReason::None);
        }
    }

    /// Logs the arrival of packet `id` at an endpoint of slot `f`, against
    /// the port it crossed.
    #[cold]
    #[inline(never)]
    fn log_deliver(&mut self, id: PacketId, f: u32) {
        let fl = &self.flows[f as usize];
        let route = if self.arena.get(id).kind == Kind::Ack { &fl.ack_route } else { &fl.data_route };
        let link = *route.last().expect("a route has a link") as usize;
        self.log(link, id, PacketEvent::Deliver, DropReason::None);
    }

    /// Logs a drop at port `p` with its reason: random loss, the
    /// discipline's choice (its AQM drop counter moved past those already
    /// logged) or overflow.
    #[cold]
    #[inline(never)]
    fn log_drop(&mut self, p: usize, id: PacketId, random: bool) {
        let reason = if random {
            // Lost on arrival: its enqueue row first.
            self.log(p, id, PacketEvent::Enqueue, DropReason::None);
            DropReason::Random
        } else if self.ports[p].qdisc.aqm_drops() > self.packet_log.aqm_seen[p] {
            self.packet_log.aqm_seen[p] += 1;
            DropReason::Aqm
        } else {
            DropReason::Overflow
        };
        self.log(p, id, PacketEvent::Drop, reason);
    }

    /// Handles at most `budget` events; returns true once the experiment has
    /// reached its end. A caller that must stay responsive (to Ctrl-C, to draw
    /// progress) runs the engine in such slices.
    pub fn run_events(&mut self, mut budget: u64) -> bool {
        // The event loop exists twice: with the packet log's hooks compiled
        // in (`LOG`) for while its window is open, and without them, the
        // same code as with no packet log at all, for the rest of the run.
        loop {
            let slice = if self.logging { self.run_slice_logged(budget) } else { self.run_slice::<false>(budget) };
            match slice {
                Slice::Done => return true,
                Slice::Paused => return false,
                Slice::Switch(left) => budget = left,
            }
        }
    }

    /// The loop with the log's hooks, kept apart from the other so that the
    /// compiler lays that one out (and inlines into it) as without the log.
    #[cold]
    #[inline(never)]
    fn run_slice_logged(&mut self, budget: u64) -> Slice {
        self.run_slice::<true>(budget)
    }

    /// [`Simulator::run_events`] with the packet log open (`LOG`) or closed;
    /// stops with the budget left when the log opens or closes.
    fn run_slice<const LOG: bool>(&mut self, mut budget: u64) -> Slice {
        while let Some(t) = self.q.peek_time() {
            if t > self.horizon {
                return if t > self.end { Slice::Done } else { Slice::Paused };
            }
            if budget == 0 {
                return Slice::Paused;
            }
            budget -= 1;
            let (t, ev) = self.q.pop().expect("peeked");
            self.now = t;
            self.events += 1;
            match ev {
                Event::PortTxDone(p) => self.port_tx_done::<LOG>(p as usize),
                Event::LineDeliver(l) => self.line_deliver::<LOG>(l),
                Event::Timer(f, k) => self.timer(f, k),
                Event::FlowStart(f) => {
                    self.flows[f as usize].sender.start(t);
                    self.flush(f);
                }
                Event::FlowStop(f) => {
                    self.flows[f as usize].sender.stop();
                    self.flush(f);
                }
                Event::Probe => {
                    if self.probe() {
                        // Time to hand the trace over (see `take_trace`): end the slice.
                        budget = 0;
                    }
                }
                Event::Arrival(s) => {
                    self.start_transfer(s, None);
                    let st = &mut self.tcp_sources[s as usize];
                    if let Arrivals::Poisson { rate } = st.cfg.arrivals {
                        let at = t.saturating_add((exponential(&mut st.rng, 1.0 / rate) * PS_PER_S as f64) as Time);
                        let stop = st.cfg.stop_ns.map(ns).unwrap_or(Time::MAX);
                        if at < stop && at <= self.end {
                            self.q.push(at, Event::Arrival(s));
                        }
                    }
                }
                Event::SessionStart(s, k) => self.start_transfer(s, Some(k)),
                Event::UdpSend(u) => self.udp_send::<LOG>(u as usize),
                Event::LinkRelease(p, generation) => self.release::<LOG>(p as usize, generation),
                Event::PacketLog(open) => {
                    // Bookkeeping, not part of the experiment: not counted.
                    self.events -= 1;
                    self.open_packet_log(open);
                    if open != LOG {
                        return Slice::Switch(budget);
                    }
                }
            }
        }
        Slice::Done
    }

    /// Moves packets the endpoints produced onto their first line and syncs timers.
    #[inline]
    fn flush(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        for i in 0..fl.sender.out.len() {
            let p = fl.sender.out[i];
            let id = self.arena.alloc(p);
            self.created += 1;
            fl.in_network += 1;
            let l = fl.line0;
            if let Some(at) = self.lines[l as usize].push(now, id) {
                self.q.push(at, Event::LineDeliver(l));
            }
        }
        fl.sender.out.clear();
        for i in 0..fl.receiver.out.len() {
            let p = fl.receiver.out[i];
            let id = self.arena.alloc(p);
            self.created += 1;
            fl.in_network += 1;
            let l = fl.line0 + fl.n_data as u32;
            if let Some(at) = self.lines[l as usize].push(now, id) {
                self.q.push(at, Event::LineDeliver(l));
            }
        }
        fl.receiver.out.clear();
        // Lazy timers: one pending event per slot, re-pushed only when the
        // deadline moves earlier than the pending event.
        for slot in 0..TIMER_KINDS {
            let deadline = if slot < 3 { fl.sender.timers[slot] } else { fl.receiver.delack };
            if deadline != 0 && deadline < fl.pending[slot] {
                let at = deadline.max(now);
                fl.pending[slot] = at;
                self.q.push(at, Event::Timer(f, timer_kind(slot)));
            }
        }
    }

    fn timer(&mut self, f: u32, kind: TimerKind) {
        let slot = kind as usize;
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        if fl.pending[slot] != now {
            return; // superseded by an earlier event for this slot
        }
        fl.pending[slot] = u64::MAX;
        let deadline = if slot < 3 { fl.sender.timers[slot] } else { fl.receiver.delack };
        if deadline == 0 || fl.closing {
            self.maybe_release(f);
            return;
        }
        if deadline > now {
            fl.pending[slot] = deadline;
            self.q.push(deadline, Event::Timer(f, kind));
            return;
        }
        if slot < 3 {
            fl.sender.timers[slot] = 0;
            fl.sender.on_timer(now, slot);
        } else {
            fl.receiver.delack = 0;
            fl.receiver.on_delack_timer(now);
        }
        self.flush(f);
    }

    fn line_deliver<const LOG: bool>(&mut self, l: u32) {
        if self.lines[l as usize].model.is_some() {
            return self.line_deliver_modelled::<LOG>(l);
        }
        let now = self.now;
        while let Some(id) = self.lines[l as usize].pop_due_plain(now) {
            let next = self.lines[l as usize].next;
            self.forward::<LOG>(id, next);
        }
        if let Some(at) = self.lines[l as usize].head_time() {
            self.q.push(at, Event::LineDeliver(l));
        }
    }

    /// [`Simulator::line_deliver`] on a line with jitter or delay steps.
    #[cold]
    #[inline(never)]
    fn line_deliver_modelled<const LOG: bool>(&mut self, l: u32) {
        let now = self.now;
        if !self.lines[l as usize].fire(now) {
            return;
        }
        while let Some(id) = self.lines[l as usize].pop_due(now) {
            let next = self.lines[l as usize].next;
            self.forward::<LOG>(id, next);
        }
        if let Some(at) = self.lines[l as usize].rearm() {
            self.q.push(at, Event::LineDeliver(l));
        }
    }

    #[inline(always)]
    fn forward<const LOG: bool>(&mut self, id: PacketId, hop: Hop) {
        match hop {
            Hop::Port(p) => self.enqueue::<LOG>(p as usize, id),
            Hop::Receiver(f) => {
                let Some(pkt) = self.consume::<LOG>(id, f) else {
                    return;
                };
                let fl = &mut self.flows[f as usize];
                if fl.receiver.window.is_some() {
                    fl.receiver.rtt_estimate = fl.sender.tp.srtt_us * PS_PER_US;
                }
                fl.receiver.on_data(self.now, &pkt);
                self.flush(f);
            }
            Hop::Sender(f) => {
                let Some(pkt) = self.consume::<LOG>(id, f) else {
                    return;
                };
                let fl = &mut self.flows[f as usize];
                fl.sender.on_ack(self.now, &pkt);
                let done = fl.transfer.is_some() && fl.sender.finished();
                self.flush(f);
                if done {
                    self.finish_transfer(f);
                }
            }
            Hop::Line(l) => {
                if let Some(at) = self.lines[l as usize].push(self.now, id) {
                    self.q.push(at, Event::LineDeliver(l));
                }
            }
        }
    }

    /// Takes a packet that reached an endpoint of slot `f` out of the
    /// network; `None` if the slot's transfer has already finished.
    #[inline(always)]
    fn consume<const LOG: bool>(&mut self, id: PacketId, f: u32) -> Option<Packet> {
        let pkt = *self.arena.get(id);
        if LOG {
            self.log_deliver(id, f);
        }
        self.arena.free(id);
        self.delivered += 1;
        let fl = &mut self.flows[f as usize];
        fl.in_network -= 1;
        if fl.closing {
            self.maybe_release(f);
            return None;
        }
        Some(pkt)
    }

    /// Accounts for a packet port `p` dropped (the port has counted it).
    fn drop_packet<const LOG: bool>(&mut self, p: usize, id: PacketId, random: bool) {
        if LOG {
            self.log_drop(p, id, random);
        }
        let (flow, kind) = {
            let pkt = self.arena.get(id);
            (pkt.flow, pkt.kind)
        };
        if kind == Kind::Data && p == self.flows[flow as usize].host_port && !self.flows[flow as usize].closing {
            self.host_left(flow, id);
        }
        self.arena.free(id);
        self.dropped += 1;
        if p == FWD {
            self.interval_drops += 1;
        }
        if kind != Kind::Udp {
            let fl = &mut self.flows[flow as usize];
            fl.in_network -= 1;
            if kind == Kind::Data {
                fl.drops += 1;
            }
            if fl.closing {
                self.maybe_release(flow);
            }
        }
    }

    /// A packet reaches link `p`: the link's random loss hits data and
    /// datagrams, not ACKs.
    #[inline(always)]
    fn enqueue<const LOG: bool>(&mut self, p: usize, id: PacketId) {
        let (now, lossy) = (self.now, self.arena.get(id).kind != Kind::Ack);
        service::arrive(&mut Net::<LOG>(self), p, id, now, lossy);
    }

    /// A link's batch leaves for its queue, in arrival order.
    #[cold]
    #[inline(never)]
    fn release<const LOG: bool>(&mut self, p: usize, generation: u32) {
        let mut out = std::mem::take(&mut self.released);
        let now = self.now;
        service::release(&mut Net::<LOG>(self), p, generation, now, &mut out);
        self.released = out;
    }

    fn port_tx_done<const LOG: bool>(&mut self, p: usize) {
        let now = self.now;
        let id = self.ports[p].finish(&self.arena);
        let (flow, wire, kind, hop) = {
            let pkt = self.arena.get_mut(id);
            pkt.hop += 1;
            (pkt.flow as usize, pkt.wire_len as u64, pkt.kind, pkt.hop as u32)
        };
        if p == FWD {
            self.interval_tx_bytes += wire;
            if kind != Kind::Ack {
                self.bottleneck_data_packets += 1;
            }
        }
        if kind == Kind::Udp {
            // Datagrams leave the dumbbell after the link; count and consume.
            if LOG {
                self.log(p, id, PacketEvent::Deliver, DropReason::None);
            }
            self.arena.free(id);
            self.delivered += 1;
            self.udp_sources[flow].stats.delivered_bytes += wire;
            if p == FWD {
                self.interval_bg_bytes += wire;
            }
        } else {
            let fl = &mut self.flows[flow];
            let line = if kind == Kind::Data {
                let line = fl.line0 + hop;
                fl.route_bytes[hop as usize - 1] += wire;
                if p == fl.measure_port {
                    // Rate at the router: bytes counted as their last bit leaves.
                    fl.interval_bytes += wire;
                    fl.total_bytes += wire;
                } else if p == fl.host_port {
                    self.host_left(flow as u32, id);
                }
                if p == FWD && flow >= self.n_fg {
                    self.interval_bg_bytes += wire;
                }
                line
            } else {
                fl.line0 + fl.n_data as u32 + hop
            };
            if let Some(at) = self.lines[line as usize].push(now, id) {
                self.q.push(at, Event::LineDeliver(line));
            }
        }
        service::start_next(&mut Net::<LOG>(self), p, now);
    }

    /// A data packet left the sender's host (sent by its NIC or dropped by
    /// its queue): TSQ's TX completion.
    #[cold]
    #[inline(never)]
    fn host_left(&mut self, f: u32, id: PacketId) {
        let seg = self.arena.get(id).seg;
        let fl = &mut self.flows[f as usize];
        if !fl.closing && fl.sender.host_left(self.now, seg) {
            self.flush(f);
        }
    }

    fn udp_send<const LOG: bool>(&mut self, u: usize) {
        let now = self.now;
        let st = &mut self.udp_sources[u];
        let stop = st.cfg.stop_ns.map(ns).unwrap_or(Time::MAX);
        if now >= stop {
            return;
        }
        let wire = st.cfg.packet_bytes;
        let port = match (st.cfg.link, st.cfg.direction) {
            (Some(link), _) => link as usize,
            (None, Direction::Forward) => FWD,
            (None, Direction::Reverse) => REV,
            (None, Direction::Both) => port_of(st.rng.uniform() < 0.5),
        };
        st.packets += 1;
        st.stats.offered_bytes += wire as u64;
        let mean_gap = wire as f64 * 8.0 * PS_PER_S as f64 / st.cfg.rate_bps as f64;
        let at = match st.cfg.pattern {
            // Exact spacing: the k-th packet leaves at start + k·gap.
            UdpPattern::Cbr => {
                ns(st.cfg.start_ns)
                    + (st.packets as u128 * wire as u128 * 8 * PS_PER_S as u128 / st.cfg.rate_bps as u128) as Time
            }
            UdpPattern::Poisson => now.saturating_add(exponential(&mut st.rng, mean_gap) as Time),
        };
        if at < stop && at <= self.end {
            self.q.push(at, Event::UdpSend(u as u32));
        }
        let mut pkt = Packet::data(u as u32, st.packets, wire, wire);
        pkt.kind = Kind::Udp;
        let id = self.arena.alloc(pkt);
        self.created += 1;
        self.enqueue::<LOG>(port, id);
    }

    /// Records one interval; true when `trace_chunk_rows` flow rows are waiting.
    #[inline(never)]
    fn probe(&mut self) -> bool {
        let now = self.now;
        if self.trace_on {
            let t_ns = now / PS_PER_NS;
            for (i, fl) in self.flows[..self.n_fg].iter_mut().enumerate() {
                let tp = &fl.sender.tp;
                let mut m = [f64::NAN; MAX_METRICS];
                fl.sender.cc.metrics(&mut m);
                self.flow_trace.push(FlowRow {
                    t_ns,
                    flow: i as u32,
                    bottleneck_bytes: fl.interval_bytes,
                    cwnd_pkts: tp.snd_cwnd,
                    ssthresh_pkts: tp.snd_ssthresh,
                    srtt_us: tp.srtt_us,
                    inflight_pkts: tp.packets_in_flight(),
                    pacing_rate_bps: tp.pacing_rate.saturating_mul(8),
                    delivered_bytes: fl.receiver.delivered_bytes(),
                    retrans: fl.sender.stats.retrans_pkts,
                    cc: m,
                });
                fl.interval_bytes = 0;
            }
            let port = &self.ports[FWD];
            let qt = &mut self.queue_trace;
            qt.t_ns.push(t_ns);
            qt.backlog_bytes.push(port.qdisc.bytes());
            qt.backlog_pkts.push(port.qdisc.len() as u64);
            qt.drops.push(self.interval_drops);
            qt.tx_bytes.push(self.interval_tx_bytes);
            qt.background_bytes.push(self.interval_bg_bytes);
            qt.reverse_backlog_pkts.push(self.ports[REV].qdisc.len() as u64);
            qt.flow_slots.push(self.live_slots as u64);
            if let Some(bits) = port.model.as_ref().and_then(|m| m.capacity_bits(self.last_probe, now)) {
                qt.varying = true;
                qt.capacity_bytes.push((bits / 8.0).round() as u64);
            }
            if !port.qdisc.is_droptail() {
                let marks = port.qdisc.marks();
                qt.marks.push(marks - self.last_marks);
                let n = port.qdisc.state_names().len();
                for (col, x) in qt.state.iter_mut().zip(port.qdisc.state()).take(n) {
                    col.push(x);
                }
            }
        }
        if self.network {
            self.probe_links(now / PS_PER_NS);
        }
        self.last_probe = now;
        self.last_marks = self.ports[FWD].qdisc.marks();
        self.interval_drops = 0;
        self.interval_tx_bytes = 0;
        self.interval_bg_bytes = 0;
        if now < self.end {
            self.q.push((now + self.interval).min(self.end), Event::Probe);
        }
        self.flow_trace.t_ns.len() >= self.trace_chunk_rows || self.packet_log.len() >= self.packet_chunk_rows
    }

    /// One row per link: backlog now, and drops, marks and bytes sent since the last probe.
    fn probe_links(&mut self, t_ns: u64) {
        for (i, port) in self.ports.iter().enumerate() {
            let now = [port.counters.drops, port.qdisc.marks(), port.counters.tx_bytes];
            let seen = std::mem::replace(&mut self.link_seen[i], now);
            if !self.trace_on {
                continue;
            }
            let lt = &mut self.link_trace;
            lt.t_ns.push(t_ns);
            lt.link.push(i as u64);
            lt.backlog_bytes.push(port.qdisc.bytes());
            lt.backlog_pkts.push(port.qdisc.len() as u64);
            lt.drops.push(now[0] - seen[0]);
            lt.marks.push(now[1] - seen[1]);
            lt.tx_bytes.push(now[2] - seen[2]);
        }
    }

    /// The per-link trace rows recorded since the start or the last call
    /// (empty for the dumbbell); [`Simulator::finish`] returns what is left.
    pub fn take_link_trace(&mut self) -> Columns {
        std::mem::take(&mut self.link_trace).into_columns()
    }

    /// Names of the links, by index.
    pub fn link_names(&self) -> &[String] {
        &self.link_names
    }

    /// When a foreground flow ends (ns, not before its start): at its
    /// completion or its stop, whichever is first, capped at `end_ns` (the
    /// end of the run). None while neither has happened by `end_ns`.
    fn flow_end(fl: &Flow, end_ns: u64) -> Option<u64> {
        let start_ns = fl.start / PS_PER_NS;
        let stop_ns = fl.stop.map(|t| t / PS_PER_NS).unwrap_or(end_ns).min(end_ns);
        let end = match fl.sender.stats.completion.map(|t| (t - fl.start) / PS_PER_NS) {
            Some(c) => (start_ns + c).min(stop_ns),
            None => stop_ns,
        };
        (stop_ns < end_ns || fl.sender.stats.completion.is_some()).then_some(end.max(start_ns))
    }

    /// Each foreground flow's end as far as it is known now (see `flow_end`):
    /// Some once it has completed or its stop time has passed.
    pub fn flow_ends_so_far(&self) -> Vec<Option<u64>> {
        let now_ns = self.now / PS_PER_NS;
        self.flows[..self.n_fg]
            .iter()
            .map(|fl| Self::flow_end(fl, self.end / PS_PER_NS).filter(|&e| e <= now_ns))
            .collect()
    }

    /// The names of each foreground flow's algorithm internals (the trace's `cc_k` columns).
    pub fn flow_metric_names(&self) -> Vec<Vec<&'static str>> {
        self.flows[..self.n_fg].iter().map(|fl| fl.sender.cc.metric_names().to_vec()).collect()
    }

    /// Each foreground flow's algorithm name and start time (ns).
    pub fn flow_identities(&self) -> Vec<(&'static str, u64)> {
        self.flows[..self.n_fg].iter().map(|fl| (fl.sender.cc.name(), fl.start / PS_PER_NS)).collect()
    }

    /// Trace rows recorded so far (flow rows).
    pub fn trace_rows(&self) -> usize {
        self.flow_trace.t_ns.len()
    }

    /// Takes the trace rows recorded since the start or the last call (flow
    /// columns, queue columns), so that a long run can write them away as it
    /// goes and its memory does not grow with its duration; `finish` returns
    /// what is left. Rows come whole intervals at a time.
    pub fn take_trace(&mut self) -> (Columns, Columns) {
        let fwd = &self.ports[FWD];
        let mut qt = std::mem::take(&mut self.queue_trace);
        qt.state_names = fwd.qdisc.state_names();
        qt.aqm = !fwd.qdisc.is_droptail();
        let ft = std::mem::take(&mut self.flow_trace);
        (ft.into_columns(), qt.into_columns())
    }

    /// Packets accounted for at this moment.
    pub fn conservation(&self) -> Conservation {
        let queued: u64 = self.ports.iter().map(|p| p.held()).sum();
        let in_flight: u64 = self.lines.iter().map(|l| l.len() as u64).sum();
        Conservation { created: self.created, delivered: self.delivered, dropped: self.dropped, queued, in_flight }
    }

    /// Finishes the run: checks conservation and returns the output.
    pub fn finish(mut self, engine_seconds: f64) -> Result<Output, String> {
        let c = self.conservation();
        if !c.holds() || self.arena.live() != c.queued + c.in_flight {
            return Err(format!(
                "packet conservation violated: created {} != delivered {} + dropped {} + queued {} + in flight {} (arena holds {})",
                c.created, c.delivered, c.dropped, c.queued, c.in_flight, self.arena.live()
            ));
        }
        // And on every link: what arrived left, was dropped, or is still there.
        for (i, p) in self.ports.iter().enumerate() {
            let c = &p.counters;
            if c.arrivals != c.tx_packets + c.drops + p.held() {
                return Err(format!(
                    "packet conservation violated at link {} ({}): arrivals {} != sent {} + dropped {} + held {}",
                    i,
                    self.link_names[i],
                    c.arrivals,
                    c.tx_packets,
                    c.drops,
                    p.held()
                ));
            }
        }
        // Transfers still running at the end: what their receivers got.
        for fl in &self.flows[self.n_fg..] {
            if let (Some(tid), false) = (fl.transfer, fl.closing) {
                let got = fl.receiver.delivered_bytes();
                let rec = &mut self.transfers[tid as usize];
                rec.delivered_bytes = got;
                self.tcp_sources[rec.source as usize].stats.delivered_bytes += got;
            }
        }
        let end_ns = self.end / PS_PER_NS;
        let flows = self.flows[..self.n_fg]
            .iter()
            .map(|fl| {
                let s = &fl.sender;
                let start_ns = fl.start / PS_PER_NS;
                let completion = s.stats.completion.map(|t| (t - fl.start) / PS_PER_NS);
                let end = Self::flow_end(fl, end_ns).unwrap_or(end_ns.max(start_ns));
                FlowStats {
                    id: s.id,
                    cc: s.cc.name().to_string(),
                    recovery: s.cfg.recovery.name(),
                    metric_names: s.cc.metric_names(),
                    sent_pkts: s.stats.sent_pkts,
                    retrans_pkts: s.stats.retrans_pkts,
                    timeouts: s.stats.timeouts,
                    fast_recoveries: s.stats.fast_recoveries,
                    ecn_reductions: s.stats.ecn_reductions,
                    goodput_bytes: fl.receiver.delivered_bytes(),
                    bottleneck_bytes: fl.total_bytes,
                    drops: fl.drops,
                    start_ns,
                    end_ns: end,
                    completion_ns: completion,
                    rtt: s.rtt_hist.clone(),
                    link_bytes: fl.data_route.iter().copied().zip(fl.route_bytes.iter().copied()).collect(),
                }
            })
            .collect();
        let fwd = &self.ports[FWD];
        let queue = QueueStats {
            arrivals: fwd.counters.arrivals,
            drops: fwd.counters.drops,
            random_drops: fwd.counters.random_drops,
            tx_packets: fwd.counters.tx_packets,
            tx_bytes: fwd.counters.tx_bytes,
            max_backlog_pkts: fwd.counters.max_backlog_pkts,
            delay: self.delays[FWD].clone(),
            reverse_drops: self.ports[REV].counters.drops,
            reverse_delay: self.delays[REV].clone(),
            qdisc: fwd.qdisc.name(),
            marks: fwd.qdisc.marks(),
            aqm_drops: fwd.qdisc.aqm_drops(),
            reverse_marks: self.ports[REV].qdisc.marks(),
        };
        self.queue_trace.state_names = fwd.qdisc.state_names();
        self.queue_trace.aqm = !fwd.qdisc.is_droptail();
        let sources = self
            .tcp_sources
            .into_iter()
            .map(|s| s.stats)
            .chain(self.udp_sources.into_iter().map(|u| u.stats))
            .collect();
        let lines = &self.lines;
        let link_jitter = &self.link_jitter;
        let links = self
            .ports
            .iter()
            .zip(&self.delays)
            .zip(&self.link_names)
            .enumerate()
            .map(|(i, ((p, delay), name))| LinkStats {
                modelled: p.model.is_some() || link_jitter[i].is_some(),
                model_counters: model_counters(p, lines, i as u32),
                name: name.clone(),
                rate_bps: p.rate_bps,
                qdisc: p.qdisc.name(),
                arrivals: p.counters.arrivals,
                drops: p.counters.drops,
                random_drops: p.counters.random_drops,
                aqm_drops: p.qdisc.aqm_drops(),
                marks: p.qdisc.marks(),
                tx_packets: p.counters.tx_packets,
                tx_bytes: p.counters.tx_bytes,
                max_backlog_pkts: p.counters.max_backlog_pkts,
                delay: delay.clone(),
            })
            .collect();
        Ok(Output {
            flow_columns: self.flow_trace.into_columns(),
            queue_columns: self.queue_trace.into_columns(),
            link_columns: self.link_trace.into_columns(),
            links,
            flows,
            queue,
            conservation: c,
            transfers: self.transfers,
            sources,
            peak_flow_slots: self.peak_slots,
            events: self.events,
            bottleneck_data_packets: self.bottleneck_data_packets,
            engine_seconds,
            packets: self.packet_log,
        })
    }

    /// The current simulated time, ps.
    pub fn now(&self) -> Time {
        self.now
    }
}

/// The simulator as the owner of its links' ports (see [`service`]), with
/// the packet log's hooks when `LOG`.
struct Net<'a, const LOG: bool>(&'a mut Simulator);

impl<const LOG: bool> PortOwner for Net<'_, LOG> {
    type Packets = PacketArena;

    #[inline(always)]
    fn port(&mut self, p: usize) -> (&mut Port, &mut PacketArena) {
        (&mut self.0.ports[p], &mut self.0.arena)
    }

    #[inline(always)]
    fn stamp(&mut self, id: PacketId, now: Time) {
        self.0.arena.get_mut(id).enqueued_at = now;
    }

    #[inline(always)]
    fn dropped(&mut self, p: usize, id: PacketId, random: bool, _now: Time) {
        self.0.drop_packet::<LOG>(p, id, random);
    }

    #[inline(always)]
    fn started(&mut self, p: usize, _id: PacketId, _now: Time, end: Time, waited: Time) {
        self.0.q.push(end, Event::PortTxDone(p as u32));
        self.0.delays[p].record(waited / PS_PER_NS);
    }

    fn held(&mut self, p: usize, _now: Time, at: Time, generation: u32) {
        self.0.q.push(at, Event::LinkRelease(p as u32, generation));
    }

    #[inline(always)]
    fn enqueued(&mut self, p: usize, id: PacketId) {
        if LOG {
            self.0.log(p, id, PacketEvent::Enqueue, DropReason::None);
            self.0.log_marks(p);
        }
    }

    #[inline(always)]
    fn dequeued(&mut self, p: usize, next: Option<PacketId>) {
        if LOG {
            self.0.log_dequeue(p, next);
        }
    }
}

/// A link's model counters: its port's, and its propagation's summed over the lines after it.
fn model_counters(p: &Port, lines: &[DelayLine], link: u32) -> Vec<(&'static str, u64)> {
    let mut c = p.model.as_ref().map(|m| m.counters()).unwrap_or_default();
    let after: Vec<_> = lines.iter().filter_map(|l| l.model.as_deref()).filter(|m| m.link == link).collect();
    if !after.is_empty() {
        c.push(("jitter_delivered", after.iter().map(|m| m.delivered).sum()));
        c.push(("reordered", after.iter().map(|m| m.reordered).sum()));
    }
    c
}

fn default_recovery(cc_name: &str) -> Recovery {
    match cc::registry::info(cc_name) {
        Ok(info) if info.default_recovery == "newreno" => Recovery::NewReno,
        _ => Recovery::Prr,
    }
}

/// Runs one experiment and returns its output; fails on invalid input or a
/// packet-conservation violation.
pub fn run(cfg: &Config) -> Result<Output, String> {
    let mut sim = Simulator::new(cfg)?;
    let t0 = std::time::Instant::now();
    sim.run();
    let secs = t0.elapsed().as_secs_f64();
    sim.finish(secs)
}

/// A sender's access link: its NIC's rate, no delay, a packet-counted FIFO.
fn access_link(a: AccessLink) -> LinkConfig {
    LinkConfig {
        rate_bps: a.rate_bps,
        delay_ns: 0,
        limit: QueueLimit::Packets(a.queue_pkts),
        loss: 0.0,
        loss_model: None,
        qdisc: Default::default(),
        model: Default::default(),
    }
}

/// The dumbbell's route: data on the bottleneck and ACKs on the reverse
/// link, or the other way round for a reverse flow.
fn dumbbell_route(reverse: bool) -> Route {
    let (data, ack) = if reverse { (REV, FWD) } else { (FWD, REV) };
    Route { data: vec![data as u32], ack: vec![ack as u32], measure: data as u32 }
}

/// Link `i`'s name: the network's, else the default.
fn link_name(net: &crate::Network, i: usize) -> String {
    net.names.get(i).cloned().unwrap_or_else(|| default_link_name(i))
}

fn default_link_name(i: usize) -> String {
    match i {
        FWD => "forward".to_string(),
        REV => "reverse".to_string(),
        _ => format!("link{i}"),
    }
}
