//! The simulator: builds the dumbbell from a [`Config`], runs the event loop
//! and collects traces and statistics.

use crate::event::{Event, EventQueue, Time, TimerKind, PS_PER_NS, TIMER_KINDS};
use crate::hist::Histogram;
use crate::net::{DelayLine, Dir, Hop, Port};
use crate::packet::{Kind, PacketArena, PacketId};
use crate::rng::Rng;
use crate::tcp::receiver::Receiver;
use crate::tcp::sender::{Recovery, Sender, SenderConfig, T_APP, T_PACE, T_RTO};
use crate::trace::{FlowRow, FlowTrace, QueueTrace};
use crate::{Config, Conservation, FlowStats, Output, QueueStats};
use cc::{CongestionControl, MAX_METRICS};

/// Random stream numbers, one per random process.
const STREAM_BOTTLENECK_LOSS: u64 = 1;

const FWD: usize = 0;
const REV: usize = 1;

struct Flow {
    sender: Sender,
    receiver: Receiver,
    /// Delay lines: sender→port, port→receiver, receiver→reverse port, reverse port→sender.
    fwd_in: u32,
    fwd_out: u32,
    rev_in: u32,
    rev_out: u32,
    /// Time of the pending event of each timer slot (u64::MAX = none).
    pending: [Time; TIMER_KINDS],
    start: Time,
    stop: Option<Time>,
    started: bool,
    /// Wire bytes of this flow that left the bottleneck, this interval and in total.
    interval_bytes: u64,
    total_bytes: u64,
    drops: u64,
}

/// One simulation. Owns all of its state; no globals.
pub struct Simulator {
    now: Time,
    end: Time,
    interval: Time,
    trace_on: bool,
    q: EventQueue,
    arena: PacketArena,
    ports: [Port; 2],
    lines: Vec<DelayLine>,
    flows: Vec<Flow>,
    loss_rng: Rng,
    fwd_delay: Histogram,
    rev_delay: Histogram,
    flow_trace: FlowTrace,
    queue_trace: QueueTrace,
    interval_drops: u64,
    interval_tx_bytes: u64,
    created: u64,
    delivered: u64,
    dropped: u64,
    events: u64,
    bottleneck_data_packets: u64,
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

impl Simulator {
    /// Builds the dumbbell. Fails with a message if an algorithm or parameter is invalid.
    pub fn new(cfg: &Config) -> Result<Simulator, String> {
        if cfg.interval_ns == 0 || cfg.duration_ns == 0 {
            return Err("duration and interval must be positive".into());
        }
        if cfg.bottleneck.rate_bps == 0 || cfg.reverse.rate_bps == 0 {
            return Err("link rates must be positive".into());
        }
        let d = ns(cfg.bottleneck.delay_ns);
        let mut lines = Vec::with_capacity(cfg.flows.len() * 4);
        let mut flows = Vec::with_capacity(cfg.flows.len());
        for (i, f) in cfg.flows.iter().enumerate() {
            let id = i as u32;
            let cc = cc::build(&f.cc, &f.params).map_err(|e| match e.param {
                Some(p) => format!("flows[{i}].params.{p}: {}", e.message),
                None => format!("flows[{i}].cc: {}", e.message),
            })?;
            let one_way = ns(f.rtt_ns) / 2;
            if one_way < d {
                return Err(format!("flows[{i}].rtt: shorter than twice the bottleneck delay"));
            }
            let access = (one_way - d) / 2;
            let recovery = f.recovery.unwrap_or_else(|| {
                let info = cc::registry::info(&f.cc).expect("built above");
                if info.default_recovery == "newreno" { Recovery::NewReno } else { Recovery::Prr }
            });
            let base = lines.len() as u32;
            // access + bottleneck delay on the far side, so a_i + d + b_i = rtt/2.
            lines.push(DelayLine::new(access, Hop::Port(FWD as u32)));
            lines.push(DelayLine::new(d + (one_way - d - access), Hop::Receiver(id)));
            lines.push(DelayLine::new(access, Hop::Port(REV as u32)));
            lines.push(DelayLine::new(d + (one_way - d - access), Hop::Sender(id)));
            let total = match f.app {
                crate::App::Fixed { bytes } => Some(bytes),
                _ => None,
            };
            let scfg = SenderConfig {
                mss: f.mss,
                header_bytes: f.header_bytes,
                init_cwnd: f.init_cwnd,
                rwnd_bytes: f.rwnd_bytes,
                pacing: f.pacing,
                recovery,
                app: f.app,
            };
            flows.push(Flow {
                sender: Sender::new(id, scfg, cc),
                receiver: Receiver::new(id, f.mss, f.header_bytes, total),
                fwd_in: base,
                fwd_out: base + 1,
                rev_in: base + 2,
                rev_out: base + 3,
                pending: [u64::MAX; TIMER_KINDS],
                start: ns(f.start_ns),
                stop: f.stop_ns.map(ns),
                started: false,
                interval_bytes: 0,
                total_bytes: 0,
                drops: 0,
            });
        }
        let b = &cfg.bottleneck;
        let r = &cfg.reverse;
        let rows = if cfg.trace { (cfg.duration_ns / cfg.interval_ns) as usize * cfg.flows.len() } else { 0 };
        let mut sim = Simulator {
            now: 0,
            end: ns(cfg.duration_ns),
            interval: ns(cfg.interval_ns),
            trace_on: cfg.trace,
            q: EventQueue::new(),
            arena: PacketArena::new(),
            ports: [Port::new(Dir::Forward, b.rate_bps, b.limit, b.loss), Port::new(Dir::Reverse, r.rate_bps, r.limit, 0.0)],
            lines,
            flows,
            loss_rng: Rng::new(cfg.seed, STREAM_BOTTLENECK_LOSS),
            fwd_delay: Histogram::new(),
            rev_delay: Histogram::new(),
            flow_trace: FlowTrace::with_capacity(rows.min(50_000_000)),
            queue_trace: QueueTrace::default(),
            interval_drops: 0,
            interval_tx_bytes: 0,
            created: 0,
            delivered: 0,
            dropped: 0,
            events: 0,
            bottleneck_data_packets: 0,
        };
        for (i, f) in sim.flows.iter().enumerate() {
            if f.start < sim.end {
                sim.q.push(f.start, Event::FlowStart(i as u32));
            }
            if let Some(s) = f.stop {
                if s < sim.end {
                    sim.q.push(s, Event::FlowStop(i as u32));
                }
            }
        }
        sim.q.push(sim.interval.min(sim.end), Event::Probe);
        Ok(sim)
    }

    /// Runs to the end of the experiment.
    pub fn run(&mut self) {
        while let Some(t) = self.q.peek_time() {
            if t > self.end {
                break;
            }
            let (t, ev) = self.q.pop().expect("peeked");
            self.now = t;
            self.events += 1;
            match ev {
                Event::PortTxDone(p) => self.port_tx_done(p as usize),
                Event::LineDeliver(l) => self.line_deliver(l),
                Event::Timer(f, k) => self.timer(f, k),
                Event::FlowStart(f) => {
                    let fl = &mut self.flows[f as usize];
                    fl.started = true;
                    fl.sender.start(t);
                    self.flush(f);
                }
                Event::FlowStop(f) => {
                    self.flows[f as usize].sender.stop();
                    self.flush(f);
                }
                Event::Probe => self.probe(),
            }
        }
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
            if let Some(at) = self.lines[fl.fwd_in as usize].push(now, id) {
                self.q.push(at, Event::LineDeliver(fl.fwd_in));
            }
        }
        fl.sender.out.clear();
        for i in 0..fl.receiver.out.len() {
            let p = fl.receiver.out[i];
            let id = self.arena.alloc(p);
            self.created += 1;
            if let Some(at) = self.lines[fl.rev_in as usize].push(now, id) {
                self.q.push(at, Event::LineDeliver(fl.rev_in));
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
        if deadline == 0 {
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

    fn line_deliver(&mut self, l: u32) {
        let now = self.now;
        while let Some(id) = self.lines[l as usize].pop_due(now) {
            let next = self.lines[l as usize].next;
            self.forward(id, next);
        }
        if let Some(at) = self.lines[l as usize].head_time() {
            self.q.push(at, Event::LineDeliver(l));
        }
    }

    #[inline]
    fn forward(&mut self, id: PacketId, hop: Hop) {
        match hop {
            Hop::Port(p) => self.enqueue(p as usize, id),
            Hop::Receiver(f) => {
                let pkt = *self.arena.get(id);
                self.arena.free(id);
                self.delivered += 1;
                let fl = &mut self.flows[f as usize];
                fl.receiver.on_data(self.now, &pkt);
                self.flush(f);
            }
            Hop::Sender(f) => {
                let pkt = *self.arena.get(id);
                self.arena.free(id);
                self.delivered += 1;
                let fl = &mut self.flows[f as usize];
                fl.sender.on_ack(self.now, &pkt);
                self.flush(f);
            }
            Hop::Line(l) => {
                if let Some(at) = self.lines[l as usize].push(self.now, id) {
                    self.q.push(at, Event::LineDeliver(l));
                }
            }
        }
    }

    fn drop_packet(&mut self, p: usize, id: PacketId, random: bool) {
        let flow = self.arena.get(id).flow as usize;
        self.arena.free(id);
        self.dropped += 1;
        let port = &mut self.ports[p];
        port.drops += 1;
        if random {
            port.random_drops += 1;
        }
        if p == FWD {
            self.interval_drops += 1;
            self.flows[flow].drops += 1;
        }
    }

    fn enqueue(&mut self, p: usize, id: PacketId) {
        let now = self.now;
        let (wire, is_data) = {
            let pkt = self.arena.get_mut(id);
            pkt.enqueued_at = now;
            (pkt.wire_len, pkt.kind == Kind::Data)
        };
        self.ports[p].arrivals += 1;
        if is_data && self.ports[p].loss > 0.0 && self.loss_rng.uniform() < self.ports[p].loss {
            self.drop_packet(p, id, true);
            return;
        }
        let port = &mut self.ports[p];
        if port.busy.is_none() && port.qdisc.is_empty() {
            port.busy = Some(id);
            let at = now + port.tx_time(wire);
            self.q.push(at, Event::PortTxDone(p as u32));
            if p == FWD { &mut self.fwd_delay } else { &mut self.rev_delay }.record(0);
            return;
        }
        if !port.qdisc.enqueue(id, wire) {
            self.drop_packet(p, id, false);
            return;
        }
        let backlog = port.qdisc.len() as u64;
        if backlog > port.max_backlog_pkts {
            port.max_backlog_pkts = backlog;
        }
    }

    fn port_tx_done(&mut self, p: usize) {
        let now = self.now;
        let id = self.ports[p].busy.take().expect("tx done on an idle port");
        let (flow, wire, is_data) = {
            let pkt = self.arena.get(id);
            (pkt.flow as usize, pkt.wire_len as u64, pkt.kind == Kind::Data)
        };
        {
            let port = &mut self.ports[p];
            port.tx_packets += 1;
            port.tx_bytes += wire;
        }
        let fl = &mut self.flows[flow];
        let line = if p == FWD {
            // Rate at the router: bytes counted as their last bit leaves.
            fl.interval_bytes += wire;
            fl.total_bytes += wire;
            self.interval_tx_bytes += wire;
            if is_data {
                self.bottleneck_data_packets += 1;
            }
            fl.fwd_out
        } else {
            fl.rev_out
        };
        if let Some(at) = self.lines[line as usize].push(now, id) {
            self.q.push(at, Event::LineDeliver(line));
        }
        // Start the next packet.
        let arena = &self.arena;
        let port = &mut self.ports[p];
        if let Some(next) = port.qdisc.dequeue(|i| arena.get(i).wire_len) {
            port.busy = Some(next);
            let pkt = arena.get(next);
            let at = now + port.tx_time(pkt.wire_len);
            let waited = (now - pkt.enqueued_at) / PS_PER_NS;
            self.q.push(at, Event::PortTxDone(p as u32));
            if p == FWD { &mut self.fwd_delay } else { &mut self.rev_delay }.record(waited);
        }
    }

    fn probe(&mut self) {
        let now = self.now;
        if self.trace_on {
            let t_ns = now / PS_PER_NS;
            for (i, fl) in self.flows.iter_mut().enumerate() {
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
            self.queue_trace.t_ns.push(t_ns);
            self.queue_trace.backlog_bytes.push(port.qdisc.bytes());
            self.queue_trace.backlog_pkts.push(port.qdisc.len() as u64);
            self.queue_trace.drops.push(self.interval_drops);
            self.queue_trace.tx_bytes.push(self.interval_tx_bytes);
        }
        self.interval_drops = 0;
        self.interval_tx_bytes = 0;
        if now < self.end {
            self.q.push((now + self.interval).min(self.end), Event::Probe);
        }
    }

    /// Packets accounted for at this moment.
    pub fn conservation(&self) -> Conservation {
        let queued: u64 = self.ports.iter().map(|p| p.held()).sum();
        let in_flight: u64 = self.lines.iter().map(|l| l.len() as u64).sum();
        Conservation { created: self.created, delivered: self.delivered, dropped: self.dropped, queued, in_flight }
    }

    /// Finishes the run: checks conservation and returns the output.
    pub fn finish(self, engine_seconds: f64) -> Result<Output, String> {
        let c = self.conservation();
        if !c.holds() || self.arena.live() != c.queued + c.in_flight {
            return Err(format!(
                "packet conservation violated: created {} != delivered {} + dropped {} + queued {} + in flight {} (arena holds {})",
                c.created, c.delivered, c.dropped, c.queued, c.in_flight, self.arena.live()
            ));
        }
        let end_ns = self.end / PS_PER_NS;
        let flows = self
            .flows
            .into_iter()
            .map(|fl| {
                let s = &fl.sender;
                let start_ns = fl.start / PS_PER_NS;
                let completion = s.stats.completion.map(|t| (t - fl.start) / PS_PER_NS);
                let stop_ns = fl.stop.map(|t| t / PS_PER_NS).unwrap_or(end_ns).min(end_ns);
                let end = match completion {
                    Some(c) => (start_ns + c).min(stop_ns),
                    None => stop_ns,
                };
                FlowStats {
                    id: s.id,
                    cc: s.cc.name().to_string(),
                    recovery: s.cfg.recovery.name(),
                    metric_names: s.cc.metric_names(),
                    sent_pkts: s.stats.sent_pkts,
                    retrans_pkts: s.stats.retrans_pkts,
                    timeouts: s.stats.timeouts,
                    fast_recoveries: s.stats.fast_recoveries,
                    goodput_bytes: fl.receiver.delivered_bytes(),
                    bottleneck_bytes: fl.total_bytes,
                    drops: fl.drops,
                    start_ns,
                    end_ns: end.max(start_ns),
                    completion_ns: completion,
                    rtt: s.rtt_hist.clone(),
                }
            })
            .collect();
        let fwd = &self.ports[FWD];
        let queue = QueueStats {
            arrivals: fwd.arrivals,
            drops: fwd.drops,
            random_drops: fwd.random_drops,
            tx_packets: fwd.tx_packets,
            tx_bytes: fwd.tx_bytes,
            max_backlog_pkts: fwd.max_backlog_pkts,
            delay: self.fwd_delay,
            reverse_drops: self.ports[REV].drops,
            reverse_delay: self.rev_delay,
        };
        Ok(Output {
            flow_columns: self.flow_trace.into_columns(),
            queue_columns: self.queue_trace.into_columns(),
            flows,
            queue,
            conservation: c,
            events: self.events,
            bottleneck_data_packets: self.bottleneck_data_packets,
            engine_seconds,
        })
    }

    /// The current simulated time, ps.
    pub fn now(&self) -> Time {
        self.now
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
