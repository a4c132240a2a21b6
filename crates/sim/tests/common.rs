//! Helpers to build dumbbell experiments in tests.
#![allow(dead_code)]

use sim::qdisc::ParamValue::{self, Bool, Float};
use sim::{App, Config, FlowConfig, LinkConfig, Output, QdiscConfig, QueueLimit};

pub const MSS: u32 = 1448;
pub const HDR: u32 = 52;

pub fn flow(cc: &str, rtt_ms: u64) -> FlowConfig {
    FlowConfig {
        cc: cc.into(),
        params: vec![],
        start_ns: 0,
        stop_ns: None,
        rtt_ns: rtt_ms * 1_000_000,
        mss: MSS,
        header_bytes: HDR,
        init_cwnd: 10,
        rwnd_bytes: None,
        pacing: false,
        recovery: None,
        app: App::Bulk,
        reverse: false,
        ecn: false,
        accecn: false,
        receiver_accecn: true,
        accecn_option: true,
        sack_compression: None,
        receive_window: None,
        tso: None,
        access: None,
    }
}

/// A dumbbell with a buffer of `bdp` × the bandwidth-delay product (in 1500-byte packets).
pub fn dumbbell(rate_mbps: u64, rtt_ms: u64, bdp: f64, secs: u64, flows: Vec<FlowConfig>) -> Config {
    let rate = rate_mbps * 1_000_000;
    let pkts = ((rate as f64 * rtt_ms as f64 / 1000.0 / 8.0 / 1500.0) * bdp).round().max(1.0) as u64;
    Config {
        seed: 1,
        network: Default::default(),
        duration_ns: secs * 1_000_000_000,
        interval_ns: 100_000_000,
        trace: true,
        bottleneck: LinkConfig {
            rate_bps: rate,
            delay_ns: 0,
            limit: QueueLimit::Packets(pkts),
            loss: 0.0,
            loss_model: None,
            qdisc: Default::default(),
            model: Default::default(),
        },
        reverse: LinkConfig {
            rate_bps: rate,
            delay_ns: 0,
            limit: QueueLimit::Packets(pkts.max(1000)),
            loss: 0.0,
            loss_model: None,
            qdisc: Default::default(),
            model: Default::default(),
        },
        flows,
        tcp_sources: vec![],
        udp_sources: vec![],
    }
}

pub fn run(cfg: &Config) -> Output {
    sim::run(cfg).expect("simulation failed")
}

/// Bytes through the bottleneck per flow between t0 and t1 seconds (from the trace).
pub fn bytes_between(out: &Output, t0: f64, t1: f64) -> Vec<u64> {
    let cols = &out.flow_columns;
    let get = |name: &str| cols.iter().find(|(n, _)| *n == name).map(|(_, c)| c).unwrap();
    let (sim::Column::U64(t), sim::Column::U32(flow), sim::Column::U64(b)) =
        (get("t_ns"), get("flow"), get("bottleneck_bytes"))
    else {
        panic!("unexpected column types")
    };
    let mut per = vec![0u64; out.flows.len()];
    for i in 0..t.len() {
        let ts = t[i] as f64 / 1e9;
        if ts > t0 && ts <= t1 {
            per[flow[i] as usize] += b[i];
        }
    }
    per
}

pub fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    s * s / (xs.len() as f64 * s2)
}

/// A flow column by name (any integer or float type), as f64.
pub fn flow_column(out: &Output, name: &str) -> Vec<f64> {
    column_f64(&out.flow_columns, name)
}

/// A queue column by name (any integer or float type), as f64.
pub fn queue_column(out: &Output, name: &str) -> Vec<f64> {
    column_f64(&out.queue_columns, name)
}

fn column_f64(cols: &[(&'static str, sim::Column)], name: &str) -> Vec<f64> {
    match cols.iter().find(|(n, _)| *n == name).map(|(_, c)| c) {
        Some(sim::Column::U64(x)) => x.iter().map(|&v| v as f64).collect(),
        Some(sim::Column::U32(x)) => x.iter().map(|&v| v as f64).collect(),
        Some(sim::Column::F64(x)) => x.clone(),
        None => panic!("no column {name}"),
    }
}

/// Utilisation of the bottleneck by all flows between t0 and t1 seconds.
pub fn utilisation(out: &Output, rate_mbps: u64, t0: f64, t1: f64) -> f64 {
    let total: u64 = bytes_between(out, t0, t1).iter().sum();
    total as f64 * 8.0 / (rate_mbps as f64 * 1e6 * (t1 - t0))
}

/// A flow of `cc` as the front ends build it (paced if the algorithm needs it).
pub fn cc_flow(cc: &str, rtt_ms: u64) -> FlowConfig {
    let mut f = flow(cc, rtt_ms);
    f.pacing = cc::registry::info(cc).unwrap().needs_pacing;
    f
}

/// Jain's index of two flows of `cc` started together over 60–120 s of
/// 120 s (100 Mbit/s, 50 ms, 1 BDP DropTail), and their shares in bytes.
pub fn pair_jain_120s(cc: &str) -> (f64, Vec<u64>) {
    let out = run(&dumbbell(100, 50, 1.0, 120, vec![cc_flow(cc, 50), cc_flow(cc, 50)]));
    let b = bytes_between(&out, 60.0, 120.0);
    (jain(&[b[0] as f64, b[1] as f64]), b)
}

/// Utilisation of one flow of `cc` over 10–60 s of 60 s (100 Mbit/s, 50 ms,
/// `bdp` of DropTail buffer).
pub fn one_flow_utilisation(cc: &str, bdp: f64) -> f64 {
    let out = run(&dumbbell(100, 50, bdp, 60, vec![cc_flow(cc, 50)]));
    utilisation(&out, 100, 10.0, 60.0)
}

/// `cfg` with the bottleneck's discipline `kind` and these parameters.
pub fn with_qdisc(mut cfg: Config, kind: &str, params: &[(&str, ParamValue)]) -> Config {
    let p: Vec<_> = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    cfg.bottleneck.qdisc = QdiscConfig::from_params(kind, &p).unwrap();
    cfg
}

/// Marks every ECT packet that arrives to find more than `k` packets queued:
/// RED on the instantaneous queue (wq = 1) with min_th = k, max_th = k + 1,
/// max_p = 1, marking in the forced region (as Linux DCTCP set-ups do with
/// `tc qdisc ... red min K max K+1 probability 1.0 ecn`).
pub fn step_marking(cfg: Config, k: f64) -> Config {
    with_qdisc(
        cfg,
        "red",
        &[
            ("min_th", Float(k)),
            ("max_th", Float(k + 1.0)),
            ("max_p", Float(1.0)),
            ("wq", Float(1.0)),
            ("gentle", Bool(false)),
            ("harddrop", Bool(false)),
            ("ecn", Bool(true)),
        ],
    )
}
