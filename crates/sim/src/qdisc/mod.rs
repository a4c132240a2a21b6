//! Queue disciplines of the bottleneck (and reverse) port, dispatched
//! statically through [`Qdisc`]: DropTail, RED (gentle, adaptive), CoDel,
//! PIE and FQ-CoDel, with ECN marking. Their parameters, defaults and
//! sources are listed once, in [`catalogue`], which both the configuration
//! parser here and the Python front end read.
//!
//! A discipline sees packets only through [`PacketView`], so the simulator's
//! arena and the emulator's slots share the code. Packets a discipline drops
//! after admitting them (CoDel's head drops, FQ-CoDel's overflow batch) are
//! handed back through [`Qdisc::pop_dropped`]; an arriving packet refused at
//! enqueue is signalled by `false`.

pub mod codel;
pub mod droptail;
pub mod fq_codel;
pub mod pie;
pub mod red;

pub use codel::Codel;
pub use droptail::DropTail;
pub use fq_codel::FqCodel;
pub use pie::Pie;
pub use red::Red;

use crate::event::Time;
use crate::packet::PacketId;
use crate::rng::Rng;
use crate::xcp_router::{XcpConfig, XcpPort};
use cc::CcHeader;
pub use cc::ParamValue;

/// Queue capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u64),
    Bytes(u64),
}

impl QueueLimit {
    /// Whether a packet of `len` bytes fits beside `pkts` packets of `bytes` bytes.
    #[inline]
    pub fn fits(&self, pkts: usize, bytes: u64, len: u32) -> bool {
        match *self {
            QueueLimit::Packets(n) => (pkts as u64) < n,
            QueueLimit::Bytes(b) => bytes + len as u64 <= b,
        }
    }
}

/// What a discipline may read and write of a packet.
pub trait PacketView {
    fn wire_len(&self, id: PacketId) -> u32;
    /// Time the packet entered this queue, ps.
    fn enqueued_at(&self, id: PacketId) -> Time;
    /// ECN-capable transport (ECT(0) or ECT(1)).
    fn ect(&self, id: PacketId) -> bool;
    /// Sets CE.
    fn set_ce(&mut self, id: PacketId);
    /// Flow identity for FQ-CoDel's hash.
    fn flow_key(&self, id: PacketId) -> u64;
    /// The congestion header (XCP); none by default.
    fn cc_header(&self, _id: PacketId) -> CcHeader {
        CcHeader::default()
    }
    /// The congestion header, for the XCP router to write its feedback.
    fn cc_header_mut(&mut self, _id: PacketId) -> Option<&mut CcHeader> {
        None
    }
    /// A small number naming the flow a data packet belongs to (distinct
    /// for distinct flows); `None` for ACKs (and by default).
    fn data_flow(&self, _id: PacketId) -> Option<u32> {
        None
    }
}

// ---------------------------------------------------------------- config

/// RED's unit of queue length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedMode {
    Packets,
    Bytes,
}

/// RED parameters; see [`catalogue`] for sources.
#[derive(Clone, Debug, PartialEq)]
pub struct RedConfig {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub wq: f64,
    pub gentle: bool,
    pub ecn: bool,
    pub harddrop: bool,
    pub adaptive: bool,
    pub mode: RedMode,
    pub avpkt_bytes: u64,
    pub mtu_bytes: u64,
}

impl Default for RedConfig {
    fn default() -> RedConfig {
        RedConfig {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            wq: 0.002,
            gentle: true,
            ecn: false,
            harddrop: true,
            adaptive: false,
            mode: RedMode::Packets,
            avpkt_bytes: 1000,
            mtu_bytes: 1514,
        }
    }
}

/// CoDel parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct CodelConfig {
    pub target_ns: u64,
    pub interval_ns: u64,
    pub ecn: bool,
    pub mtu_bytes: u64,
}

impl Default for CodelConfig {
    fn default() -> CodelConfig {
        CodelConfig { target_ns: 5_000_000, interval_ns: 100_000_000, ecn: false, mtu_bytes: 1514 }
    }
}

/// PIE parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct PieConfig {
    pub target_ns: u64,
    pub tupdate_ns: u64,
    pub alpha: f64,
    pub beta: f64,
    pub max_burst_ns: u64,
    pub ecn: bool,
    pub ecn_prob: f64,
    pub bytemode: bool,
    pub mtu_bytes: u64,
}

impl Default for PieConfig {
    fn default() -> PieConfig {
        PieConfig {
            target_ns: 15_000_000,
            tupdate_ns: 15_000_000,
            alpha: 0.125,
            beta: 1.25,
            max_burst_ns: 150_000_000,
            ecn: false,
            ecn_prob: 0.1,
            bytemode: false,
            mtu_bytes: 1514,
        }
    }
}

/// FQ-CoDel parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct FqCodelConfig {
    pub flows: u32,
    pub quantum: u32,
    pub target_ns: u64,
    pub interval_ns: u64,
    pub ecn: bool,
    pub drop_batch: u32,
    pub mtu_bytes: u64,
}

impl Default for FqCodelConfig {
    fn default() -> FqCodelConfig {
        FqCodelConfig {
            flows: 1024,
            quantum: 1514,
            target_ns: 5_000_000,
            interval_ns: 100_000_000,
            ecn: true,
            drop_batch: 64,
            mtu_bytes: 1514,
        }
    }
}

impl FqCodelConfig {
    pub fn codel(&self) -> CodelConfig {
        CodelConfig {
            target_ns: self.target_ns,
            interval_ns: self.interval_ns,
            ecn: self.ecn,
            mtu_bytes: self.mtu_bytes,
        }
    }
}

/// The discipline of a link. The capacity (`QueueLimit`) stays in the link.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum QdiscConfig {
    #[default]
    DropTail,
    Red(RedConfig),
    Codel(CodelConfig),
    Pie(PieConfig),
    FqCodel(FqCodelConfig),
    Xcp(XcpConfig),
}

/// Type of a discipline parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    Float,
    Int,
    Bool,
    Str,
}

impl ParamType {
    pub fn name(self) -> &'static str {
        match self {
            ParamType::Float => "float",
            ParamType::Int => "int",
            ParamType::Bool => "bool",
            ParamType::Str => "str",
        }
    }
}

/// Default value of a discipline parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DefaultValue {
    Float(f64),
    Int(i64),
    Bool(bool),
    Str(&'static str),
}

/// The unit an integer parameter is counted in; the experiment file writes
/// these with a unit (`target = "5ms"`, `mtu = "1514B"`) and the name ends
/// in `_ns` or `_bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A plain number (packets, a probability, a gain, ...; the doc says which).
    Plain,
    /// Nanoseconds.
    Ns,
    /// Bytes.
    Bytes,
}

impl Unit {
    /// `None`, `"ns"` or `"bytes"`, as the Python front end reads it.
    pub fn name(self) -> Option<&'static str> {
        match self {
            Unit::Plain => None,
            Unit::Ns => Some("ns"),
            Unit::Bytes => Some("bytes"),
        }
    }
}

/// One parameter of a discipline: the single statement of its type, unit
/// and range, which [`QdiscConfig::from_params`] (and so the engine's own
/// check of a configuration) and the Python validation both apply.
#[derive(Clone, Debug)]
pub struct QdiscParam {
    pub name: &'static str,
    pub ty: ParamType,
    pub default: DefaultValue,
    /// Bounds of a number (every number has both; none for bools and strings),
    /// in the parameter's unit.
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// The bound itself is outside the range: min < x rather than min ≤ x.
    pub min_open: bool,
    pub max_open: bool,
    pub unit: Unit,
    /// The value must be greater than this other parameter's (RED's max_th > min_th).
    pub exceeds: Option<&'static str>,
    pub choices: &'static [&'static str],
    pub doc: &'static str,
}

impl QdiscParam {
    /// Whether the number `x` lies in the range.
    pub fn admits(&self, x: f64) -> bool {
        let above = self.min.is_none_or(|m| if self.min_open { x > m } else { x >= m });
        let below = self.max.is_none_or(|m| if self.max_open { x < m } else { x <= m });
        x.is_finite() && above && below
    }

    /// The range as text: `(0, 10000000000000]`, `[0, 1]`.
    pub fn range(&self) -> String {
        let lo = self.min.map_or("-inf".to_string(), |m| m.to_string());
        let hi = self.max.map_or("inf".to_string(), |m| m.to_string());
        let (l, r) = (if self.min_open { "(" } else { "[" }, if self.max_open { ")" } else { "]" });
        format!("{l}{lo}, {hi}{r}")
    }

    fn open_min(self) -> QdiscParam {
        QdiscParam { min_open: true, ..self }
    }

    fn open_max(self) -> QdiscParam {
        QdiscParam { max_open: true, ..self }
    }

    fn unit(self, unit: Unit) -> QdiscParam {
        QdiscParam { unit, ..self }
    }

    fn exceeds(self, other: &'static str) -> QdiscParam {
        QdiscParam { exceeds: Some(other), ..self }
    }
}

/// One discipline: its name (the `kind` key), summary, sources and parameters.
#[derive(Clone, Debug)]
pub struct QdiscInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub source: &'static str,
    pub params: Vec<QdiscParam>,
}

/// A parameter with an inclusive range `[min, max]` (open ends, a unit and
/// relations are added with the builder methods above).
const fn p(
    name: &'static str,
    ty: ParamType,
    default: DefaultValue,
    min: Option<f64>,
    max: Option<f64>,
    doc: &'static str,
) -> QdiscParam {
    QdiscParam {
        name,
        ty,
        default,
        min,
        max,
        min_open: false,
        max_open: false,
        unit: Unit::Plain,
        exceeds: None,
        choices: &[],
        doc,
    }
}

/// Longest time parameter, ns: 10^4 s, far beyond any sensible target or
/// interval and 100 times below the engine's limit on any time.
const MAX_PARAM_NS: f64 = 1e13;
/// Largest size parameter (MTU, average packet), bytes.
const MAX_PARAM_BYTES: f64 = 1e6;
/// Largest RED threshold: the largest buffer the engine holds, in bytes
/// (in packet mode it is far beyond any buffer, which is harmless).
const MAX_RED_TH: f64 = crate::check::MAX_BUFFER_BYTES as f64;

use DefaultValue as D;
use ParamType as T;

/// Every discipline with its parameters, defaults, ranges and sources.
pub fn catalogue() -> Vec<QdiscInfo> {
    // A time in (0, 10^4 s], written with a unit in the experiment file.
    let ns = |name, default: i64, doc| p(name, T::Int, D::Int(default), Some(0.0), Some(MAX_PARAM_NS), doc).open_min().unit(Unit::Ns);
    let bytes = |name, default: i64, doc| p(name, T::Int, D::Int(default), Some(1.0), Some(MAX_PARAM_BYTES), doc).unit(Unit::Bytes);
    vec![
        QdiscInfo {
            name: "droptail",
            summary: "Tail-drop FIFO: drop arrivals when the link buffer (buffer_pkts or buffer_bytes) is full.",
            source: "Linux net/sched/sch_fifo.c (pfifo/bfifo)",
            params: vec![],
        },
        QdiscInfo {
            name: "red",
            summary: "Random Early Detection with gentle mode, idle-time decay, count-based spacing of drops and optional Adaptive RED; packet or byte mode.",
            source: "Floyd & Jacobson, IEEE/ACM ToN 1(4) 1993; Floyd, Gummadi & Shenker, Adaptive RED, ICSI 2001; Linux include/net/red.h, net/sched/sch_red.c",
            params: vec![
                p("min_th", T::Float, D::Float(5.0), Some(0.0), Some(MAX_RED_TH), "Lower threshold of the average queue, packets (mode=packets) or bytes (mode=bytes). Floyd & Jacobson 1993 §11: at least 5 packets.").open_max(),
                p("max_th", T::Float, D::Float(15.0), Some(0.0), Some(MAX_RED_TH), "Upper threshold, same unit as min_th; must exceed min_th. Floyd's recommendation: 3·min_th.").open_min().exceeds("min_th"),
                p("max_p", T::Float, D::Float(0.1), Some(0.0), Some(1.0), "Marking probability at avg = max_th (Floyd's RED notes: 0.1; Adaptive RED starts here and adapts it)."),
                p("wq", T::Float, D::Float(0.002), Some(1e-9), Some(1.0), "EWMA weight of the average queue (Floyd & Jacobson 1993 §6: 0.002; Linux: 2^-Wlog)."),
                p("gentle", T::Bool, D::Bool(true), None, None, "Ramp the probability linearly from max_p to 1 between max_th and 2·max_th instead of dropping everything above max_th (Floyd, 'gentle' RED, 2000)."),
                p("ecn", T::Bool, D::Bool(false), None, None, "CE-mark ECN-capable packets instead of dropping them in the probabilistic region (RFC 3168 §5; Linux TC_RED_ECN)."),
                p("harddrop", T::Bool, D::Bool(true), None, None, "Drop even ECN-capable packets in the forced region (avg ≥ max_th, or ≥ 2·max_th with gentle), as RFC 3168 §7 and the RED paper intend. Linux's default (TC_RED_HARDDROP unset) is false: it marks there too."),
                p("adaptive", T::Bool, D::Bool(false), None, None, "Adaptive RED: every 0.5 s, max_p += min(0.01, max_p/4) if avg is above min_th + 0.6·(max_th − min_th), max_p ×= 0.9 if below min_th + 0.4·(max_th − min_th) (Floyd, Gummadi, Shenker 2001, Fig. 2; Linux TC_RED_ADAPTATIVE)."),
                QdiscParam { choices: &["packets", "bytes"], ..p("mode", T::Str, D::Str("packets"), None, None, "Queue measured in packets or bytes; in byte mode p_b is scaled by size/mtu_bytes (Floyd & Jacobson 1993 §4).") },
                bytes("avpkt_bytes", 1000, "Average packet size; its transmission time is s in the idle-time decay avg ← (1−wq)^(idle/s)·avg (paper Fig. 2; tc-red 'avpkt', typical 1000)."),
                bytes("mtu_bytes", 1514, "Maximum packet size for byte mode's scaling (Linux psched_mtu: MTU + Ethernet header)."),
            ],
        },
        QdiscInfo {
            name: "codel",
            summary: "Controlled Delay: head-drop (or CE-mark) when the sojourn time stays above target for an interval, at intervals interval/√count.",
            source: "RFC 8289; Linux include/net/codel.h, include/net/codel_impl.h, net/sched/sch_codel.c",
            params: vec![
                ns("target_ns", 5_000_000, "Acceptable standing sojourn time (RFC 8289 §4.4: 5 ms; Linux codel_params_init)."),
                ns("interval_ns", 100_000_000, "Window over which the sojourn must stay above target, ≈ worst-case RTT (RFC 8289 §4.3: 100 ms)."),
                p("ecn", T::Bool, D::Bool(false), None, None, "CE-mark ECN-capable packets instead of dropping them (RFC 8289 §5.5; Linux sch_codel default off)."),
                bytes("mtu_bytes", 1514, "Never drop while at most this many bytes are queued (RFC 8289 MAXPACKET; Linux psched_mtu)."),
            ],
        },
        QdiscInfo {
            name: "pie",
            summary: "Proportional Integral controller Enhanced: drop (or CE-mark) arrivals with a probability updated every tupdate from the queueing delay.",
            source: "RFC 8033; Linux net/sched/sch_pie.c, include/net/pie.h",
            params: vec![
                ns("target_ns", 15_000_000, "Target queueing delay QDELAY_REF (RFC 8033 §4.1: 15 ms; Linux default 15 ms)."),
                p("tupdate_ns", T::Int, D::Int(15_000_000), Some(1e3), Some(MAX_PARAM_NS), "Probability update period T_UPDATE (RFC 8033: 15 ms; Linux 15 ms). At least 1 us, Linux's unit for it (tc-pie 'tupdate'): the engine catches up update by update, so a shorter one costs a loop per nanosecond.").unit(Unit::Ns),
                p("alpha", T::Float, D::Float(0.125), Some(0.0), Some(32.0), "Weight of (qdelay − target), per second (RFC 8033 §4.2: 0.125 Hz)."),
                p("beta", T::Float, D::Float(1.25), Some(0.0), Some(32.0), "Weight of (qdelay − qdelay_old), per second (RFC 8033 §4.2: 1.25 Hz)."),
                ns("max_burst_ns", 150_000_000, "Burst allowance MAX_BURST during which nothing is dropped (RFC 8033 §4.1: 150 ms)."),
                p("ecn", T::Bool, D::Bool(false), None, None, "CE-mark ECN-capable packets instead of dropping while the probability is at most ecn_prob (RFC 8033 §5.1; Linux default off)."),
                p("ecn_prob", T::Float, D::Float(0.1), Some(0.0), Some(1.0), "Largest drop probability at which marking replaces dropping (RFC 8033 §5.1: 10 %)."),
                p("bytemode", T::Bool, D::Bool(false), None, None, "Scale the probability by packet size / mtu_bytes (Linux sch_pie 'bytemode')."),
                bytes("mtu_bytes", 1514, "Full-size packet: no early drop with fewer than two of them queued (RFC 8033 §5.1; Linux psched_mtu)."),
            ],
        },
        QdiscInfo {
            name: "fq_codel",
            summary: "Flow-queue CoDel: hashed per-flow queues, each with CoDel, served by deficit round robin with priority to new flows; overflow drops from the fattest queue.",
            source: "RFC 8290; Linux net/sched/sch_fq_codel.c",
            params: vec![
                p("flows", T::Int, D::Int(1024), Some(1.0), Some(65536.0), "Number of sub-queues (RFC 8290 §5.1; Linux fq_codel_init: 1024)."),
                p("quantum", T::Int, D::Int(1514), Some(1.0), Some(1e6), "DRR quantum, bytes (RFC 8290 §5.1; Linux psched_mtu: MTU + Ethernet header = 1514)."),
                ns("target_ns", 5_000_000, "CoDel target per sub-queue (RFC 8290 §5.2: 5 ms)."),
                ns("interval_ns", 100_000_000, "CoDel interval per sub-queue (RFC 8290 §5.2: 100 ms)."),
                p("ecn", T::Bool, D::Bool(true), None, None, "CE-mark ECN-capable packets instead of dropping (RFC 8290 §5.2; Linux fq_codel default on)."),
                p("drop_batch", T::Int, D::Int(64), Some(1.0), Some(1e6), "Most packets dropped from the fattest queue per overflow (Linux fq_codel drop_batch_size: 64)."),
                bytes("mtu_bytes", 1514, "CoDel's MAXPACKET (Linux psched_mtu)."),
            ],
        },
        QdiscInfo {
            name: "xcp",
            summary: "XCP router (simulation only): XCP packets (cc = \"xcp\") get the efficiency and fairness controllers' per-packet feedback; other traffic waits in its own tail-drop queue, the two served with weights equal to their numbers of flows (Katabi et al. 2002, section 5.5); each queue holds the buffer.",
            source: "Katabi, Handley, Rohrs, ACM SIGCOMM 2002 (section 3 and Appendix A)",
            params: vec![
                p("alpha", T::Float, D::Float(0.4), Some(1e-9), Some(0.555), "Efficiency controller's gain on spare bandwidth; stable for 0 < alpha < pi/(4 sqrt 2) (Katabi et al. 2002, Theorem 1)."),
                p("beta", T::Float, D::Float(0.226), Some(0.0), Some(10.0), "Gain on the persistent queue; alpha^2 sqrt 2 = 0.226 (Katabi et al. 2002)."),
                p("gamma", T::Float, D::Float(0.1), Some(0.0), Some(1.0), "Fraction of the input traffic shuffled every control interval (the paper's 10 %)."),
                p("initial_interval_s", T::Float, D::Float(0.1), Some(1e-6), Some(100.0), "Control interval before any RTT is known, seconds (the paper gives none; 100 ms)."),
            ],
        },
    ]
}

/// Looks up `name` in `given`, checks its type and range against the
/// catalogue entry, and falls back to the default.
struct Args<'a> {
    info: &'a QdiscInfo,
    given: &'a [(String, ParamValue)],
}

impl Args<'_> {
    fn raw(&self, name: &str) -> Result<(ParamValue, &QdiscParam), String> {
        let spec = self.info.params.iter().find(|q| q.name == name).expect("parameter missing from catalogue");
        let v = match self.given.iter().find(|(k, _)| k == name) {
            Some((_, v)) => v.clone(),
            None => match spec.default {
                D::Float(x) => ParamValue::Float(x),
                D::Int(i) => ParamValue::Int(i),
                D::Bool(b) => ParamValue::Bool(b),
                D::Str(s) => ParamValue::Str(s.into()),
            },
        };
        Ok((v, spec))
    }

    /// A number, checked against its type, its range and the parameter it
    /// must exceed (the messages match the Python validation's).
    fn num(&self, name: &str) -> Result<f64, String> {
        let (v, spec) = self.raw(name)?;
        let (x, what) = match (&v, spec.ty) {
            (ParamValue::Float(x), T::Float) => (*x, "a number"),
            (ParamValue::Int(i), T::Float) => (*i as f64, "a number"),
            (ParamValue::Int(i), T::Int) => (*i as f64, "an integer"),
            (v, t) => return Err(format!("{name}: expected {}, got {v}", t.name())),
        };
        if !spec.admits(x) {
            return Err(format!("{name}: expected {what} in {}, got {v}", spec.range()));
        }
        if let Some(other) = spec.exceeds {
            let y = self.num(other)?;
            if x <= y {
                return Err(format!("{name}: must exceed {other} ({y}), got {v}"));
            }
        }
        Ok(x)
    }

    fn f(&self, name: &str) -> Result<f64, String> {
        self.num(name)
    }

    fn u(&self, name: &str) -> Result<u64, String> {
        Ok(self.num(name)? as u64)
    }

    fn b(&self, name: &str) -> Result<bool, String> {
        match self.raw(name)?.0 {
            ParamValue::Bool(b) => Ok(b),
            v => Err(format!("{name}: expected bool, got {v}")),
        }
    }

    fn s(&self, name: &str) -> Result<String, String> {
        let (v, spec) = self.raw(name)?;
        match v {
            ParamValue::Str(s) if spec.choices.contains(&s.as_str()) => Ok(s),
            v => Err(format!("{name}: expected one of {:?}, got {v}", spec.choices)),
        }
    }
}

impl QdiscConfig {
    /// Builds a configuration from the discipline's name and parameters,
    /// checking names, types and ranges against [`catalogue`].
    pub fn from_params(kind: &str, given: &[(String, ParamValue)]) -> Result<QdiscConfig, String> {
        let cat = catalogue();
        let info = cat.iter().find(|i| i.name == kind).ok_or_else(|| {
            format!("unknown qdisc {kind:?} (known: {})", cat.iter().map(|i| i.name).collect::<Vec<_>>().join(", "))
        })?;
        for (k, _) in given {
            if !info.params.iter().any(|q| q.name == k) {
                return Err(format!("{k}: unknown parameter of {kind}"));
            }
        }
        let a = Args { info, given };
        Ok(match kind {
            "droptail" => QdiscConfig::DropTail,
            "red" => {
                let c = RedConfig {
                    min_th: a.f("min_th")?,
                    max_th: a.f("max_th")?,
                    max_p: a.f("max_p")?,
                    wq: a.f("wq")?,
                    gentle: a.b("gentle")?,
                    ecn: a.b("ecn")?,
                    harddrop: a.b("harddrop")?,
                    adaptive: a.b("adaptive")?,
                    mode: if a.s("mode")? == "bytes" { RedMode::Bytes } else { RedMode::Packets },
                    avpkt_bytes: a.u("avpkt_bytes")?,
                    mtu_bytes: a.u("mtu_bytes")?,
                };
                QdiscConfig::Red(c)
            }
            "codel" => QdiscConfig::Codel(CodelConfig {
                target_ns: a.u("target_ns")?,
                interval_ns: a.u("interval_ns")?,
                ecn: a.b("ecn")?,
                mtu_bytes: a.u("mtu_bytes")?,
            }),
            "pie" => QdiscConfig::Pie(PieConfig {
                target_ns: a.u("target_ns")?,
                tupdate_ns: a.u("tupdate_ns")?,
                alpha: a.f("alpha")?,
                beta: a.f("beta")?,
                max_burst_ns: a.u("max_burst_ns")?,
                ecn: a.b("ecn")?,
                ecn_prob: a.f("ecn_prob")?,
                bytemode: a.b("bytemode")?,
                mtu_bytes: a.u("mtu_bytes")?,
            }),
            "fq_codel" => QdiscConfig::FqCodel(FqCodelConfig {
                flows: a.u("flows")? as u32,
                quantum: a.u("quantum")? as u32,
                target_ns: a.u("target_ns")?,
                interval_ns: a.u("interval_ns")?,
                ecn: a.b("ecn")?,
                drop_batch: a.u("drop_batch")? as u32,
                mtu_bytes: a.u("mtu_bytes")?,
            }),
            "xcp" => QdiscConfig::Xcp(XcpConfig {
                alpha: a.f("alpha")?,
                beta: a.f("beta")?,
                gamma: a.f("gamma")?,
                initial_interval_s: a.f("initial_interval_s")?,
            }),
            _ => unreachable!("catalogue and parser disagree on {kind}"),
        })
    }

    /// The configuration as [`QdiscConfig::from_params`] takes it (its
    /// inverse), so a configuration built by hand can be checked against the
    /// catalogue's ranges. Times and sizes too large for an integer parameter
    /// come out as `i64::MAX`, which no range admits.
    pub fn params(&self) -> Vec<(String, ParamValue)> {
        let int = |v: u64| ParamValue::Int(v.min(i64::MAX as u64) as i64);
        let (f, b) = (ParamValue::Float, ParamValue::Bool);
        let list: Vec<(&str, ParamValue)> = match self {
            QdiscConfig::DropTail => vec![],
            QdiscConfig::Red(c) => vec![
                ("min_th", f(c.min_th)),
                ("max_th", f(c.max_th)),
                ("max_p", f(c.max_p)),
                ("wq", f(c.wq)),
                ("gentle", b(c.gentle)),
                ("ecn", b(c.ecn)),
                ("harddrop", b(c.harddrop)),
                ("adaptive", b(c.adaptive)),
                ("mode", ParamValue::Str(if c.mode == RedMode::Bytes { "bytes" } else { "packets" }.into())),
                ("avpkt_bytes", int(c.avpkt_bytes)),
                ("mtu_bytes", int(c.mtu_bytes)),
            ],
            QdiscConfig::Codel(c) => vec![
                ("target_ns", int(c.target_ns)),
                ("interval_ns", int(c.interval_ns)),
                ("ecn", b(c.ecn)),
                ("mtu_bytes", int(c.mtu_bytes)),
            ],
            QdiscConfig::Pie(c) => vec![
                ("target_ns", int(c.target_ns)),
                ("tupdate_ns", int(c.tupdate_ns)),
                ("alpha", f(c.alpha)),
                ("beta", f(c.beta)),
                ("max_burst_ns", int(c.max_burst_ns)),
                ("ecn", b(c.ecn)),
                ("ecn_prob", f(c.ecn_prob)),
                ("bytemode", b(c.bytemode)),
                ("mtu_bytes", int(c.mtu_bytes)),
            ],
            QdiscConfig::FqCodel(c) => vec![
                ("flows", int(c.flows as u64)),
                ("quantum", int(c.quantum as u64)),
                ("target_ns", int(c.target_ns)),
                ("interval_ns", int(c.interval_ns)),
                ("ecn", b(c.ecn)),
                ("drop_batch", int(c.drop_batch as u64)),
                ("mtu_bytes", int(c.mtu_bytes)),
            ],
            QdiscConfig::Xcp(c) => vec![
                ("alpha", f(c.alpha)),
                ("beta", f(c.beta)),
                ("gamma", f(c.gamma)),
                ("initial_interval_s", f(c.initial_interval_s)),
            ],
        };
        list.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }

    pub fn name(&self) -> &'static str {
        match self {
            QdiscConfig::DropTail => "droptail",
            QdiscConfig::Red(_) => "red",
            QdiscConfig::Codel(_) => "codel",
            QdiscConfig::Pie(_) => "pie",
            QdiscConfig::FqCodel(_) => "fq_codel",
            QdiscConfig::Xcp(_) => "xcp",
        }
    }
}

// ---------------------------------------------------------------- dispatch

/// Queue disciplines, dispatched statically.
#[derive(Debug)]
pub enum Qdisc {
    DropTail(DropTail),
    Red(Box<Red>),
    Codel(Box<Codel>),
    Pie(Box<Pie>),
    FqCodel(Box<FqCodel>),
    /// XCP's port: XCP and other traffic in weighted queues, XCP packets
    /// stamped with feedback as they leave.
    Xcp(Box<XcpPort>),
}

impl Qdisc {
    /// Builds a discipline for a port of `rate_bps` with capacity `limit`;
    /// `rng` feeds RED's and PIE's coin flips, `seed` FQ-CoDel's hash.
    pub fn new(cfg: &QdiscConfig, limit: QueueLimit, rate_bps: u64, rng: Rng, seed: u64) -> Qdisc {
        match cfg {
            QdiscConfig::DropTail => Qdisc::DropTail(DropTail::new(limit)),
            QdiscConfig::Red(c) => Qdisc::Red(Box::new(Red::new(c.clone(), limit, rate_bps, rng))),
            QdiscConfig::Codel(c) => Qdisc::Codel(Box::new(Codel::new(c, limit))),
            QdiscConfig::Pie(c) => Qdisc::Pie(Box::new(Pie::new(c.clone(), limit, rng))),
            QdiscConfig::FqCodel(c) => Qdisc::FqCodel(Box::new(FqCodel::new(c.clone(), limit, seed))),
            QdiscConfig::Xcp(c) => Qdisc::Xcp(Box::new(XcpPort::new(*c, limit, rate_bps))),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Qdisc::DropTail(_) => "droptail",
            Qdisc::Red(_) => "red",
            Qdisc::Codel(_) => "codel",
            Qdisc::Pie(_) => "pie",
            Qdisc::FqCodel(_) => "fq_codel",
            Qdisc::Xcp(_) => "xcp",
        }
    }

    #[inline]
    pub fn is_droptail(&self) -> bool {
        matches!(self, Qdisc::DropTail(_))
    }

    /// Offers a packet whose `enqueued_at` is `now`; false: drop it.
    #[inline]
    pub fn enqueue<P: PacketView>(&mut self, id: PacketId, now: Time, pkts: &mut P) -> bool {
        match self {
            Qdisc::DropTail(q) => q.enqueue(id, pkts.wire_len(id)),
            Qdisc::Red(q) => q.enqueue(id, now, pkts),
            Qdisc::Codel(q) => q.enqueue(id, pkts),
            Qdisc::Pie(q) => q.enqueue(id, now, pkts),
            Qdisc::FqCodel(q) => q.enqueue(id, pkts),
            Qdisc::Xcp(q) => q.enqueue(now, id, pkts),
        }
    }

    /// The next packet to transmit; packets dropped on the way are left
    /// for [`Qdisc::pop_dropped`].
    #[inline]
    pub fn dequeue<P: PacketView>(&mut self, now: Time, pkts: &mut P) -> Option<PacketId> {
        match self {
            Qdisc::DropTail(q) => q.dequeue(|i| pkts.wire_len(i)),
            Qdisc::Red(q) => q.dequeue(now, pkts),
            Qdisc::Codel(q) => q.dequeue(now, pkts),
            Qdisc::Pie(q) => q.dequeue(now, pkts),
            Qdisc::FqCodel(q) => q.dequeue(now, pkts),
            Qdisc::Xcp(q) => q.dequeue(now, pkts),
        }
    }

    /// A packet the discipline dropped after admitting it.
    #[inline]
    pub fn pop_dropped(&mut self) -> Option<PacketId> {
        match self {
            Qdisc::DropTail(_) | Qdisc::Red(_) | Qdisc::Pie(_) | Qdisc::Xcp(_) => None,
            Qdisc::Codel(q) => q.dropped.pop(),
            Qdisc::FqCodel(q) => q.dropped.pop(),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Qdisc::DropTail(q) => q.len(),
            Qdisc::Red(q) => q.len(),
            Qdisc::Codel(q) => q.len(),
            Qdisc::Pie(q) => q.len(),
            Qdisc::FqCodel(q) => q.len(),
            Qdisc::Xcp(q) => q.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn bytes(&self) -> u64 {
        match self {
            Qdisc::DropTail(q) => q.bytes(),
            Qdisc::Red(q) => q.bytes(),
            Qdisc::Codel(q) => q.bytes(),
            Qdisc::Pie(q) => q.bytes(),
            Qdisc::FqCodel(q) => q.bytes(),
            Qdisc::Xcp(q) => q.bytes(),
        }
    }

    /// CE marks so far.
    pub fn marks(&self) -> u64 {
        match self {
            Qdisc::DropTail(_) | Qdisc::Xcp(_) => 0,
            Qdisc::Red(q) => q.marks,
            Qdisc::Codel(q) => q.marks,
            Qdisc::Pie(q) => q.marks,
            Qdisc::FqCodel(q) => q.marks,
        }
    }

    /// Drops the discipline chose (RED/PIE early drops, CoDel head drops),
    /// as opposed to overflow of the buffer.
    pub fn aqm_drops(&self) -> u64 {
        match self {
            Qdisc::DropTail(_) | Qdisc::Xcp(_) => 0,
            Qdisc::Red(q) => q.aqm_drops,
            Qdisc::Codel(q) => q.aqm_drops,
            Qdisc::Pie(q) => q.aqm_drops,
            Qdisc::FqCodel(q) => q.aqm_drops,
        }
    }

    /// Names of the discipline's state columns in the queue trace.
    pub fn state_names(&self) -> &'static [&'static str] {
        match self {
            Qdisc::DropTail(_) | Qdisc::Xcp(_) => &[],
            Qdisc::Red(q) if q.cfg.mode == RedMode::Bytes => &["red_avg_bytes", "red_max_p"],
            Qdisc::Red(_) => &["red_avg_pkts", "red_max_p"],
            Qdisc::Codel(_) => &["codel_dropping", "codel_count"],
            Qdisc::Pie(_) => &["pie_drop_prob", "pie_qdelay_us"],
            Qdisc::FqCodel(_) => &["fq_active_flows", "fq_new_flows"],
        }
    }

    /// Current values of [`Qdisc::state_names`].
    pub fn state(&self) -> [f64; 2] {
        match self {
            Qdisc::DropTail(_) | Qdisc::Xcp(_) => [f64::NAN; 2],
            Qdisc::Red(q) => [q.avg, q.max_p],
            Qdisc::Codel(q) => [q.vars.dropping as u8 as f64, q.vars.count as f64],
            Qdisc::Pie(q) => [q.prob, q.qdelay as f64 / 1e6],
            Qdisc::FqCodel(q) => [q.active_flows() as f64, q.listed_flows().0 as f64],
        }
    }
}

#[cfg(test)]
pub(crate) mod testkit {
    use super::*;

    /// Packets for unit tests: lengths, enqueue times, ECT bits, flow keys.
    pub struct Pkts {
        pub len: Vec<u32>,
        pub enq: Vec<Time>,
        pub ect: Vec<bool>,
        pub ce: Vec<bool>,
        pub key: Vec<u64>,
    }

    impl Pkts {
        pub fn new(n: usize, len: u32, ect: bool) -> Pkts {
            Pkts { len: vec![len; n], enq: vec![0; n], ect: vec![ect; n], ce: vec![false; n], key: vec![0; n] }
        }
    }

    impl PacketView for Pkts {
        fn wire_len(&self, id: PacketId) -> u32 {
            self.len[id as usize]
        }
        fn enqueued_at(&self, id: PacketId) -> Time {
            self.enq[id as usize]
        }
        fn ect(&self, id: PacketId) -> bool {
            self.ect[id as usize]
        }
        fn set_ce(&mut self, id: PacketId) {
            self.ce[id as usize] = true;
        }
        fn flow_key(&self, id: PacketId) -> u64 {
            self.key[id as usize]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // params() inverts from_params: every discipline, defaults and given values.
    #[test]
    fn params_round_trip() {
        for info in catalogue() {
            let c = QdiscConfig::from_params(info.name, &[]).unwrap();
            assert_eq!(QdiscConfig::from_params(info.name, &c.params()).unwrap(), c, "{}", info.name);
        }
        let given = [
            ("min_th".to_string(), ParamValue::Float(30.0)),
            ("max_th".to_string(), ParamValue::Float(31.0)),
            ("mode".to_string(), ParamValue::Str("bytes".into())),
            ("gentle".to_string(), ParamValue::Bool(false)),
        ];
        let c = QdiscConfig::from_params("red", &given).unwrap();
        assert_eq!(QdiscConfig::from_params("red", &c.params()).unwrap(), c);
        // Too large for the catalogue's integer ranges: refused, not wrapped.
        let QdiscConfig::Codel(mut codel) = QdiscConfig::from_params("codel", &[]).unwrap() else { unreachable!() };
        codel.target_ns = u64::MAX;
        assert!(QdiscConfig::from_params("codel", &QdiscConfig::Codel(codel).params())
            .unwrap_err()
            .contains("target_ns"));
    }

    #[test]
    fn parse_defaults_and_errors() {
        assert_eq!(QdiscConfig::from_params("red", &[]).unwrap(), QdiscConfig::Red(RedConfig::default()));
        assert_eq!(QdiscConfig::from_params("codel", &[]).unwrap(), QdiscConfig::Codel(CodelConfig::default()));
        assert_eq!(QdiscConfig::from_params("pie", &[]).unwrap(), QdiscConfig::Pie(PieConfig::default()));
        assert_eq!(QdiscConfig::from_params("fq_codel", &[]).unwrap(), QdiscConfig::FqCodel(FqCodelConfig::default()));
        let e = |k: &str, v: ParamValue| QdiscConfig::from_params("red", &[(k.into(), v)]).unwrap_err();
        assert_eq!(e("max_p", ParamValue::Float(1.5)), "max_p: expected a number in [0, 1], got 1.5");
        assert!(e("gentle", ParamValue::Int(1)).contains("expected bool"));
        assert!(e("bogus", ParamValue::Int(1)).contains("unknown parameter"));
        assert!(e("mode", ParamValue::Str("frames".into())).contains("expected one of"));
        assert_eq!(e("min_th", ParamValue::Float(20.0)), "max_th: must exceed min_th (20), got 15");
        let c = |k: &str, v: i64| QdiscConfig::from_params("codel", &[(k.into(), ParamValue::Int(v))]);
        assert_eq!(c("interval_ns", 0).unwrap_err(), "interval_ns: expected an integer in (0, 10000000000000], got 0");
        assert!(c("interval_ns", 1).is_ok());
        assert!(QdiscConfig::from_params("blue", &[]).unwrap_err().contains("unknown qdisc"));
        let c = QdiscConfig::from_params(
            "codel",
            &[("target_ns".into(), ParamValue::Int(2_000_000)), ("ecn".into(), ParamValue::Bool(true))],
        )
        .unwrap();
        assert_eq!(c, QdiscConfig::Codel(CodelConfig { target_ns: 2_000_000, ecn: true, ..CodelConfig::default() }));
    }

    /// The value just past `x` towards `to` (the next float; for integers, ±1).
    fn step(p: &QdiscParam, x: f64, to: f64) -> f64 {
        match p.ty {
            T::Int => x + (to - x).signum(),
            _ if to > x => f64::from_bits(if x == 0.0 { 1 } else if x > 0.0 { x.to_bits() + 1 } else { x.to_bits() - 1 }),
            _ => -step(p, -x, -to),
        }
    }

    fn value(p: &QdiscParam, x: f64) -> ParamValue {
        if p.ty == T::Int {
            ParamValue::Int(x as i64)
        } else {
            ParamValue::Float(x)
        }
    }

    // Every number's edges, straight from the table: the last value inside each
    // bound is taken (and the discipline built and fed a few packets), the first
    // outside is refused with a message naming the parameter.
    #[test]
    fn every_range_edge_is_enforced() {
        use testkit::Pkts;
        let mut checked = 0;
        for info in catalogue() {
            for p in info.params.iter().filter(|p| matches!(p.ty, T::Int | T::Float)) {
                let (lo, hi) = (p.min.unwrap(), p.max.unwrap());
                let first = if p.min_open { step(p, lo, hi) } else { lo };
                let last = if p.max_open { step(p, hi, lo) } else { hi };
                for x in [first, last] {
                    let mut given = vec![(p.name.to_string(), value(p, x))];
                    // Keep the relations: a parameter that must exceed this one goes to its maximum.
                    for q in info.params.iter().filter(|q| q.exceeds == Some(p.name)) {
                        given.push((q.name.to_string(), value(q, q.max.unwrap())));
                    }
                    if let Some(other) = p.exceeds {
                        let o = info.params.iter().find(|q| q.name == other).unwrap();
                        given.push((other.to_string(), value(o, o.min.unwrap())));
                    }
                    let cfg = QdiscConfig::from_params(info.name, &given)
                        .unwrap_or_else(|e| panic!("{}.{} = {x} refused: {e}", info.name, p.name));
                    let mut q = Qdisc::new(&cfg, QueueLimit::Packets(8), 10_000_000, Rng::new(1, 1), 1);
                    let mut pk = Pkts::new(16, 1500, true);
                    for i in 0..16u32 {
                        pk.enq[i as usize] = i as Time * 1_000_000;
                        q.enqueue(i, i as Time * 1_000_000, &mut pk);
                    }
                    while q.dequeue(20_000_000_000, &mut pk).is_some() {}
                    while q.pop_dropped().is_some() {}
                }
                for x in [step(p, first, f64::NEG_INFINITY), step(p, last, f64::INFINITY)] {
                    let e = QdiscConfig::from_params(info.name, &[(p.name.into(), value(p, x))]).unwrap_err();
                    assert!(e.starts_with(&format!("{}: expected", p.name)), "{}.{} = {x}: {e}", info.name, p.name);
                    checked += 1;
                }
            }
        }
        assert!(checked >= 50, "{checked}");
    }

    #[test]
    fn the_table_is_complete() {
        for info in catalogue() {
            for p in &info.params {
                let numeric = matches!(p.ty, T::Int | T::Float);
                // Every number has both bounds, and its default lies between them.
                assert_eq!(numeric, p.min.is_some() && p.max.is_some(), "{}.{}", info.name, p.name);
                let default = match p.default {
                    D::Int(i) => i as f64,
                    D::Float(x) => x,
                    _ => continue,
                };
                assert!(p.admits(default), "{}.{}: default {default} outside {}", info.name, p.name, p.range());
                // The unit is the name's suffix (the experiment file's key drops it).
                let unit = if p.name.ends_with("_ns") {
                    Unit::Ns
                } else if p.name.ends_with("_bytes") {
                    Unit::Bytes
                } else {
                    Unit::Plain
                };
                assert_eq!(p.unit, unit, "{}.{}", info.name, p.name);
                assert!(p.unit == Unit::Plain || p.ty == T::Int, "{}.{}", info.name, p.name);
                if let Some(other) = p.exceeds {
                    assert!(info.params.iter().any(|q| q.name == other && q.ty == p.ty), "{}.{}", info.name, p.name);
                }
            }
        }
    }

    #[test]
    fn catalogue_defaults_match_the_structs() {
        // Every entry parses with its defaults, and every name is unique.
        for info in catalogue() {
            QdiscConfig::from_params(info.name, &[]).unwrap();
            let mut names: Vec<_> = info.params.iter().map(|p| p.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), info.params.len());
        }
    }
}
