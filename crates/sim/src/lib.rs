//! The ccarena packet-level simulator.
//!
//! A network of links, each a [`net::Port`] (a queue discipline in front of
//! a serialiser) followed by its propagation delay. Every flow has its own
//! sender and receiver and a route: the links its data cross and the links
//! its ACKs cross, in order (htsim's source routes). A packet carries its
//! place on the route; a link's departure hands it to the flow's next delay
//! line, which brings it to the next link or to the endpoint.
//!
//! The dumbbell is the network of two links, the bottleneck (link 0) and the
//! reverse link (link 1), with every flow's data on one and ACKs on the
//! other, and per-flow access delays so that flows may have different RTTs:
//!
//! ```text
//!  sender i ──(a_i)──► [forward port: qdisc → rate C] ──(d + b_i)──► receiver i
//!  sender i ◄──(d + a_i)── [reverse port: qdisc → rate C_r] ◄──(b_i)── receiver i
//!  a_i = b_i = (rtt_i/2 − d)/2,  d = bottleneck propagation delay
//! ```
//!
//! A longer route spreads the flow's access delay the same way: its data
//! lines are `a`, the delays of its links but the last, and the last link's
//! delay plus `b`, with `a = b = (rtt/2 − Σ link delays)/2` (likewise the ACK
//! route). [`Network`] adds links 2, 3, … and the routes (the parking lot
//! and any topology are built from it by the front end).
//!
//! Time is integer picoseconds; events run in (time, insertion) order; all
//! randomness comes from generators owned by the simulation, so the same
//! config and seed give the same output, and simulations may run on several
//! threads at once. Every run ends with a packet-conservation check.

pub mod check;
pub mod event;
pub mod hist;
pub mod linkmodel;
pub mod net;
pub mod packet;
pub mod packet_log;
pub mod qdisc;
pub mod rng;
pub mod sim;
pub mod tcp;
pub mod trace;
pub mod traffic;

pub use net::QueueLimit;
pub use packet_log::PacketLog;
pub use qdisc::XcpConfig;
pub use qdisc::{catalogue as qdisc_catalogue, QdiscConfig};
pub use sim::{run, Simulator};
pub use tcp::sender::{App, Recovery};
pub use trace::{Column, Columns};
pub use traffic::{Arrivals, Direction, LossModel, RttDist, SizeDist, TcpSource, UdpPattern, UdpSource};

use cc::ParamValue;

/// A bottleneck (or reverse) link.
#[derive(Clone, Debug)]
pub struct LinkConfig {
    pub rate_bps: u64,
    /// One-way propagation delay of the link itself, ns.
    pub delay_ns: u64,
    pub limit: QueueLimit,
    /// Bernoulli loss probability for data packets arriving at the port.
    pub loss: f64,
    /// A bursty loss process used instead of `loss` when set.
    pub loss_model: Option<LossModel>,
    /// Queue discipline; `limit` is its capacity.
    pub qdisc: QdiscConfig,
    /// Capacity over time, policer, shaper, batching and jitter; the
    /// default is an ideal link.
    pub model: linkmodel::LinkModel,
}

impl LinkConfig {
    /// The loss process of this link.
    pub fn loss_process(&self) -> LossModel {
        match self.loss_model {
            Some(m) => m,
            None if self.loss > 0.0 => LossModel::Bernoulli { p: self.loss },
            None => LossModel::None,
        }
    }
}

/// One flow, fully resolved.
#[derive(Clone, Debug)]
pub struct FlowConfig {
    pub cc: String,
    pub params: Vec<(String, ParamValue)>,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    /// Round-trip propagation delay, ns.
    pub rtt_ns: u64,
    pub mss: u32,
    pub header_bytes: u32,
    pub init_cwnd: u32,
    pub rwnd_bytes: Option<u64>,
    pub pacing: bool,
    /// `None`: the algorithm's default recovery.
    pub recovery: Option<Recovery>,
    pub app: App,
    /// Data flow from the receivers' side: through the reverse link, with
    /// their ACKs through the bottleneck.
    pub reverse: bool,
    /// Negotiate ECN (RFC 3168): data sent ECT(0), the receiver echoes CE
    /// and the sender answers an echo with a window reduction. Algorithms
    /// that need ECN (DCTCP) use it whatever this says.
    pub ecn: bool,
    /// Send as Linux 2.6 with TCP segmentation offload does (an unpaced
    /// sender only); `None`: segment by segment.
    pub tso: Option<tcp::sender::Tso>,
    /// The sender's own link in front of its route (a NIC and its queue);
    /// `None`: the sender feeds its route's first link directly.
    pub access: Option<AccessLink>,
}

/// A sender's access link: its NIC's rate and the queue in front of it
/// (Linux's `txqueuelen`, 1000 packets on Ethernet), no propagation delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessLink {
    pub rate_bps: u64,
    pub queue_pkts: u64,
}

/// The route of one flow: link indices (0 the bottleneck, 1 the reverse
/// link, 2.. [`Network::links`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// Links its data cross, in order.
    pub data: Vec<u32>,
    /// Links its ACKs cross, in order.
    pub ack: Vec<u32>,
    /// The link of `data` where its rate at the bottleneck is counted (the
    /// trace's `bottleneck_bytes` and [`FlowStats::bottleneck_bytes`]).
    pub measure: u32,
}

/// Links beyond the dumbbell's two, and the flows' routes over all of them.
/// Empty: the dumbbell.
#[derive(Clone, Debug, Default)]
pub struct Network {
    /// Links 2, 3, …
    pub links: Vec<LinkConfig>,
    /// The route of foreground flow `i` (every flow has one when any has).
    pub routes: Vec<Route>,
    /// A name per link, 0 and 1 included (for messages; may be empty).
    pub names: Vec<String>,
}

impl Network {
    /// Whether this is the dumbbell (no extra link, no route).
    pub fn is_dumbbell(&self) -> bool {
        self.links.is_empty() && self.routes.is_empty()
    }
}

/// A whole experiment, fully resolved.
#[derive(Clone, Debug)]
pub struct Config {
    pub seed: u64,
    pub duration_ns: u64,
    pub interval_ns: u64,
    pub trace: bool,
    pub bottleneck: LinkConfig,
    pub reverse: LinkConfig,
    /// Links beyond these two and the flows' routes; the default is the dumbbell.
    pub network: Network,
    pub flows: Vec<FlowConfig>,
    /// Background TCP transfers (web, on-off sessions).
    pub tcp_sources: Vec<TcpSource>,
    /// Unresponsive UDP load.
    pub udp_sources: Vec<UdpSource>,
}

/// Per-flow results.
#[derive(Clone, Debug)]
pub struct FlowStats {
    pub id: u32,
    pub cc: String,
    pub recovery: &'static str,
    pub metric_names: &'static [&'static str],
    pub sent_pkts: u64,
    pub retrans_pkts: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    /// Window reductions in answer to an ECN echo.
    pub ecn_reductions: u64,
    pub goodput_bytes: u64,
    pub bottleneck_bytes: u64,
    pub drops: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub completion_ns: Option<u64>,
    pub rtt: hist::Histogram,
    /// Wire bytes of its data that left each link of its data route: (link, bytes).
    pub link_bytes: Vec<(u32, u64)>,
}

impl FlowStats {
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("sent_pkts", self.sent_pkts),
            ("retrans_pkts", self.retrans_pkts),
            ("timeouts", self.timeouts),
            ("fast_recoveries", self.fast_recoveries),
            ("ecn_reductions", self.ecn_reductions),
            ("goodput_bytes", self.goodput_bytes),
            ("bottleneck_bytes", self.bottleneck_bytes),
            ("drops", self.drops),
            ("start_ns", self.start_ns),
            ("end_ns", self.end_ns),
        ]
    }

    /// RTT statistics in µs (None when the flow took no sample).
    pub fn rtt_quantiles_us(&self) -> Vec<(&'static str, Option<f64>)> {
        vec![
            ("rtt_min_us", self.rtt.min().map(|v| v as f64)),
            ("rtt_mean_us", self.rtt.mean()),
            ("rtt_p50_us", self.rtt.quantile(0.5)),
            ("rtt_p99_us", self.rtt.quantile(0.99)),
        ]
    }
}

/// Bottleneck results.
#[derive(Clone, Debug)]
pub struct QueueStats {
    pub arrivals: u64,
    pub drops: u64,
    pub random_drops: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub max_backlog_pkts: u64,
    /// Queueing delay (enqueue to start of transmission), ns.
    pub delay: hist::Histogram,
    pub reverse_drops: u64,
    pub reverse_delay: hist::Histogram,
    /// Name of the bottleneck's discipline.
    pub qdisc: &'static str,
    /// CE marks at the bottleneck and the reverse port.
    pub marks: u64,
    pub reverse_marks: u64,
    /// Bottleneck drops chosen by the discipline (RED/PIE early drops,
    /// CoDel head drops), included in `drops`; the rest of `drops` is
    /// buffer overflow and random loss.
    pub aqm_drops: u64,
}

impl QueueStats {
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut c = vec![
            ("arrivals", self.arrivals),
            ("drops", self.drops),
            ("random_drops", self.random_drops),
            ("tx_packets", self.tx_packets),
            ("tx_bytes", self.tx_bytes),
            ("max_backlog_pkts", self.max_backlog_pkts),
            ("reverse_drops", self.reverse_drops),
        ];
        // DropTail runs keep exactly the counters they had before AQMs existed.
        if self.qdisc != "droptail" {
            c.push(("marks", self.marks));
            c.push(("aqm_drops", self.aqm_drops));
            c.push(("reverse_marks", self.reverse_marks));
        }
        c
    }

    /// Queueing-delay statistics in µs.
    pub fn delay_quantiles_us(&self) -> Vec<(&'static str, Option<f64>)> {
        let us = |v: Option<f64>| v.map(|x| x / 1_000.0);
        vec![
            ("delay_mean_us", us(self.delay.mean())),
            ("delay_p50_us", us(self.delay.quantile(0.5))),
            ("delay_p99_us", us(self.delay.quantile(0.99))),
            ("reverse_delay_p50_us", us(self.reverse_delay.quantile(0.5))),
            ("reverse_delay_p99_us", us(self.reverse_delay.quantile(0.99))),
        ]
    }
}

/// One link's results (every link, the dumbbell's two included).
#[derive(Clone, Debug)]
pub struct LinkStats {
    pub name: String,
    pub rate_bps: u64,
    pub qdisc: &'static str,
    pub arrivals: u64,
    pub drops: u64,
    pub random_drops: u64,
    /// Drops the discipline chose (included in `drops`).
    pub aqm_drops: u64,
    pub marks: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub max_backlog_pkts: u64,
    /// Queueing delay (enqueue to start of transmission), ns.
    pub delay: hist::Histogram,
    /// Whether the link has models (capacity over time, policer, shaper,
    /// batching, jitter); only then are the next fields reported.
    pub modelled: bool,
    /// Counters of its models: packets policed, batches released and the
    /// packets in them, and on its propagation packets delivered and reordered.
    pub model_counters: Vec<(&'static str, u64)>,
}

/// Packet accounting at the end of a run:
/// created = delivered + dropped + queued + in_flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conservation {
    pub created: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub queued: u64,
    pub in_flight: u64,
}

impl Conservation {
    pub fn holds(&self) -> bool {
        self.created == self.delivered + self.dropped + self.queued + self.in_flight
    }

    pub fn fields(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("created", self.created),
            ("delivered", self.delivered),
            ("dropped", self.dropped),
            ("queued", self.queued),
            ("in_flight", self.in_flight),
        ]
    }
}

/// One finished or unfinished background transfer.
#[derive(Clone, Copy, Debug)]
pub struct TransferRecord {
    /// Index of the TCP source in `Config::tcp_sources`.
    pub source: u32,
    /// Session of a closed-loop source (`None` for Poisson arrivals).
    pub session: Option<u32>,
    pub size_bytes: u64,
    pub start_ns: u64,
    /// Completion time (start to last byte acknowledged), if it finished.
    pub fct_ns: Option<u64>,
    pub rtt_ns: u64,
    pub reverse: bool,
    /// In-order bytes the receiver got (all of them if it finished).
    pub delivered_bytes: u64,
}

/// Per-source totals.
#[derive(Clone, Debug, Default)]
pub struct SourceStats {
    pub name: String,
    pub kind: &'static str,
    /// Bytes the source offered: transfer sizes started, or UDP bytes sent.
    pub offered_bytes: u64,
    /// Bytes delivered: receiver goodput of its transfers, or UDP bytes that
    /// crossed their link.
    pub delivered_bytes: u64,
    pub started: u64,
    pub completed: u64,
    /// Start and end of the source's activity, ns.
    pub active_from_ns: u64,
    pub active_to_ns: u64,
}

/// Everything a run produces.
#[derive(Debug)]
pub struct Output {
    pub flow_columns: Columns,
    pub queue_columns: Columns,
    /// Per link per interval (only for a network other than the dumbbell):
    /// `t_ns`, `link`, backlog, and the interval's drops, marks and bytes sent.
    pub link_columns: Columns,
    /// Every link, in index order.
    pub links: Vec<LinkStats>,
    pub flows: Vec<FlowStats>,
    pub queue: QueueStats,
    pub conservation: Conservation,
    pub transfers: Vec<TransferRecord>,
    pub sources: Vec<SourceStats>,
    /// Most flow slots in use at once (foreground + background).
    pub peak_flow_slots: usize,
    pub events: u64,
    /// Data packets that crossed the bottleneck.
    pub bottleneck_data_packets: u64,
    /// Wall-clock seconds spent in the event loop.
    pub engine_seconds: f64,
    /// Rows of the packet log not yet taken (empty unless
    /// [`Simulator::set_packet_log`] was called).
    pub packets: PacketLog,
}
