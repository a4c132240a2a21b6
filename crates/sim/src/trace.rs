//! Columnar probe buffers: each sampled quantity appends to its own vector
//! (struct of arrays), handed to Python once at the end of the run.

use cc::MAX_METRICS;

/// Named columns of a trace, in order.
pub type Columns = Vec<(&'static str, Column)>;

/// One column of a trace.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    U64(Vec<u64>),
    U32(Vec<u32>),
    F64(Vec<f64>),
}

/// Per-flow samples, one row per flow per interval.
#[derive(Debug, Default)]
pub struct FlowTrace {
    pub t_ns: Vec<u64>,
    pub flow: Vec<u32>,
    pub bottleneck_bytes: Vec<u64>,
    pub cwnd_pkts: Vec<u32>,
    pub ssthresh_pkts: Vec<u32>,
    pub srtt_us: Vec<u64>,
    pub inflight_pkts: Vec<u32>,
    pub pacing_rate_bps: Vec<u64>,
    pub delivered_bytes: Vec<u64>,
    pub retrans: Vec<u64>,
    pub cc: [Vec<f64>; MAX_METRICS],
}

/// One row of [`FlowTrace`].
pub struct FlowRow {
    pub t_ns: u64,
    pub flow: u32,
    pub bottleneck_bytes: u64,
    pub cwnd_pkts: u32,
    pub ssthresh_pkts: u32,
    pub srtt_us: u64,
    pub inflight_pkts: u32,
    pub pacing_rate_bps: u64,
    pub delivered_bytes: u64,
    pub retrans: u64,
    pub cc: [f64; MAX_METRICS],
}

impl FlowTrace {
    pub fn with_capacity(n: usize) -> FlowTrace {
        FlowTrace {
            t_ns: Vec::with_capacity(n),
            flow: Vec::with_capacity(n),
            bottleneck_bytes: Vec::with_capacity(n),
            cwnd_pkts: Vec::with_capacity(n),
            ssthresh_pkts: Vec::with_capacity(n),
            srtt_us: Vec::with_capacity(n),
            inflight_pkts: Vec::with_capacity(n),
            pacing_rate_bps: Vec::with_capacity(n),
            delivered_bytes: Vec::with_capacity(n),
            retrans: Vec::with_capacity(n),
            cc: std::array::from_fn(|_| Vec::with_capacity(n)),
        }
    }

    pub fn push(&mut self, r: FlowRow) {
        self.t_ns.push(r.t_ns);
        self.flow.push(r.flow);
        self.bottleneck_bytes.push(r.bottleneck_bytes);
        self.cwnd_pkts.push(r.cwnd_pkts);
        self.ssthresh_pkts.push(r.ssthresh_pkts);
        self.srtt_us.push(r.srtt_us);
        self.inflight_pkts.push(r.inflight_pkts);
        self.pacing_rate_bps.push(r.pacing_rate_bps);
        self.delivered_bytes.push(r.delivered_bytes);
        self.retrans.push(r.retrans);
        for (c, v) in self.cc.iter_mut().zip(r.cc) {
            c.push(v);
        }
    }

    pub fn into_columns(self) -> Columns {
        const CC_NAMES: [&str; MAX_METRICS] = ["cc_0", "cc_1", "cc_2", "cc_3", "cc_4", "cc_5", "cc_6", "cc_7"];
        let mut cols = vec![
            ("t_ns", Column::U64(self.t_ns)),
            ("flow", Column::U32(self.flow)),
            ("bottleneck_bytes", Column::U64(self.bottleneck_bytes)),
            ("cwnd_pkts", Column::U32(self.cwnd_pkts)),
            ("ssthresh_pkts", Column::U32(self.ssthresh_pkts)),
            ("srtt_us", Column::U64(self.srtt_us)),
            ("inflight_pkts", Column::U32(self.inflight_pkts)),
            ("pacing_rate_bps", Column::U64(self.pacing_rate_bps)),
            ("delivered_bytes", Column::U64(self.delivered_bytes)),
            ("retrans", Column::U64(self.retrans)),
        ];
        for (name, c) in CC_NAMES.into_iter().zip(self.cc) {
            cols.push((name, Column::F64(c)));
        }
        cols
    }
}

/// Bottleneck samples, one row per interval.
#[derive(Debug, Default)]
pub struct QueueTrace {
    pub t_ns: Vec<u64>,
    pub backlog_bytes: Vec<u64>,
    pub backlog_pkts: Vec<u64>,
    pub drops: Vec<u64>,
    pub tx_bytes: Vec<u64>,
    /// Bytes of background transfers and UDP sources that left the bottleneck.
    pub background_bytes: Vec<u64>,
    /// Packets waiting in the reverse (ACK-direction) queue.
    pub reverse_backlog_pkts: Vec<u64>,
    /// Flow slots in use (foreground flows plus running background transfers).
    pub flow_slots: Vec<u64>,
    /// Whether the bottleneck runs an AQM: then `marks` and the state
    /// columns are emitted (a DropTail trace keeps its original columns).
    pub aqm: bool,
    /// CE marks in the interval.
    pub marks: Vec<u64>,
    /// Whether the bottleneck's capacity changes over time (a schedule or
    /// a trace): then `capacity_bytes` is emitted.
    pub varying: bool,
    /// Bytes the bottleneck could have sent in the interval.
    pub capacity_bytes: Vec<u64>,
    /// Discipline state at the sample (`Qdisc::state`), named by
    /// `state_names` (the columns past its length stay empty).
    pub state: [Vec<f64>; crate::qdisc::MAX_STATE],
    pub state_names: &'static [&'static str],
}

impl QueueTrace {
    pub fn into_columns(self) -> Columns {
        let mut cols = vec![
            ("t_ns", Column::U64(self.t_ns)),
            ("backlog_bytes", Column::U64(self.backlog_bytes)),
            ("backlog_pkts", Column::U64(self.backlog_pkts)),
            ("drops", Column::U64(self.drops)),
            ("tx_bytes", Column::U64(self.tx_bytes)),
            ("background_bytes", Column::U64(self.background_bytes)),
            ("reverse_backlog_pkts", Column::U64(self.reverse_backlog_pkts)),
            ("flow_slots", Column::U64(self.flow_slots)),
        ];
        if self.varying {
            cols.push(("capacity_bytes", Column::U64(self.capacity_bytes)));
        }
        if self.aqm {
            cols.push(("marks", Column::U64(self.marks)));
            for (name, c) in self.state_names.iter().zip(self.state) {
                cols.push((name, Column::F64(c)));
            }
        }
        cols
    }
}

/// Per-link rows, one per link per interval (networks other than the dumbbell).
#[derive(Debug, Default)]
pub struct LinkTrace {
    pub t_ns: Vec<u64>,
    /// Index of the link.
    pub link: Vec<u64>,
    /// At the sample.
    pub backlog_bytes: Vec<u64>,
    pub backlog_pkts: Vec<u64>,
    /// In the interval.
    pub drops: Vec<u64>,
    pub marks: Vec<u64>,
    pub tx_bytes: Vec<u64>,
}

impl LinkTrace {
    pub fn into_columns(self) -> Columns {
        vec![
            ("t_ns", Column::U64(self.t_ns)),
            ("link", Column::U64(self.link)),
            ("backlog_bytes", Column::U64(self.backlog_bytes)),
            ("backlog_pkts", Column::U64(self.backlog_pkts)),
            ("drops", Column::U64(self.drops)),
            ("marks", Column::U64(self.marks)),
            ("tx_bytes", Column::U64(self.tx_bytes)),
        ]
    }
}
