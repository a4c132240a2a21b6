//! What a run produces: the traces' columns, per-flow, per-link and
//! bottleneck statistics, the conservation check and the background
//! traffic's records.

use crate::hist;
use crate::packet_log::PacketLog;
use crate::trace::Columns;

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
