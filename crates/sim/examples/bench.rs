//! Engine throughput on fixed scenarios: bottleneck data packets and events
//! per wall-clock second, event loop only (set-up and output excluded).
//!
//! Run with `bash bench/run.sh` (release build). Each scenario runs
//! `--repeat` times (default 3) and the best run is reported, since the
//! machine may be shared.

use sim::qdisc::ParamValue;
use sim::{App, Config, FlowConfig, LinkConfig, QdiscConfig, QueueLimit};

fn scenario(flows: usize, rate_bps: u64, rtt_ms: u64, secs: u64, trace: bool) -> Config {
    let bdp_pkts = (rate_bps as f64 * rtt_ms as f64 / 1000.0 / 8.0 / 1500.0).round() as u64;
    let f = FlowConfig {
        cc: "cubic".into(),
        params: vec![],
        start_ns: 0,
        stop_ns: None,
        rtt_ns: rtt_ms * 1_000_000,
        mss: 1448,
        header_bytes: 52,
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
    };
    Config {
        seed: 1,
        network: Default::default(),
        duration_ns: secs * 1_000_000_000,
        interval_ns: 100_000_000,
        trace,
        bottleneck: LinkConfig {
            rate_bps,
            delay_ns: 0,
            limit: QueueLimit::Packets(bdp_pkts),
            loss: 0.0,
            loss_model: None,
            qdisc: Default::default(),
            model: Default::default(),
        },
        reverse: LinkConfig {
            rate_bps,
            delay_ns: 0,
            limit: QueueLimit::Packets(bdp_pkts),
            loss: 0.0,
            loss_model: None,
            qdisc: Default::default(),
            model: Default::default(),
        },
        flows: vec![f; flows],
        tcp_sources: vec![],
        udp_sources: vec![],
    }
}

/// Scenario a with one link model: a rate schedule (100 Mbit/s, 50 from 30 s), a
/// Mahimahi trace of the same mean rate, jitter (uniform 0-1 ms, order kept or
/// not), a policer or shaper at 90 Mbit/s (bucket 100 KB), ACK aggregation
/// every 5 ms on the reverse link, hosts (1 Gbit/s NICs, Linux 2.6 TSO),
/// receivers that compress SACKs as Linux's since 4.18 (`tcp_comp_sack_nr` 44,
/// 1 ms: the default of an experiment file), or receivers with Linux's
/// receive window (`receive_window = "linux"`); or scenario a beside 200
/// bidirectional web sessions of SURGE sizes (Reno, exponential RTTs of mean
/// one-way 66 ms, 5 s think), their senders ideal (`web`) or behind one
/// 1 Gbit/s NIC with Linux 2.6 TSO per direction (`webhost`).
fn with_model(kind: &str) -> Config {
    use sim::linkmodel::{BatchConfig, BucketConfig, CapacityConfig, JitterConfig, JitterDist, TraceConfig, TraceMode};
    let mut c = scenario(2, 100_000_000, 100, 60, true);
    let m = &mut c.bottleneck.model;
    let bucket = BucketConfig { rate_bps: 90_000_000, burst_bytes: 100_000 };
    let jitter =
        |reorder| JitterConfig { dist: Some(JitterDist::Uniform { max_ns: 1_000_000 }), reorder, delay_steps: vec![] };
    match kind {
        "schedule" => m.capacity = Some(CapacityConfig::Schedule(vec![(0, 100_000_000), (30_000_000_000, 50_000_000)])),
        // 100 Mbit/s: 25 opportunities every 3 ms.
        "trace" => {
            let lines = (1..=3).flat_map(|ms| std::iter::repeat_n(ms, if ms == 3 { 9 } else { 8 })).collect();
            m.capacity = Some(CapacityConfig::Trace(TraceConfig {
                opportunities_ms: lines,
                once: false,
                mode: TraceMode::Ideal,
            }));
        }
        "jitter" => m.jitter = Some(jitter(false)),
        "reorder" => m.jitter = Some(jitter(true)),
        "policer" => m.policer = Some(bucket),
        "shaper" => m.shaper = Some(bucket),
        "acks" => c.reverse.model.batch = Some(BatchConfig::Periodic { every_ns: 5_000_000, phase_ns: 0 }),
        "host" => {
            for f in &mut c.flows {
                f.access = Some(sim::AccessLink { rate_bps: 1_000_000_000, queue_pkts: 1000, tsq: None });
                f.tso = Some(sim::tcp::sender::Tso {
                    max_segs: 45,
                    win_divisor: 3,
                    max_defer: 2_000_000_000,
                    era: Default::default(),
                });
            }
        }
        "web" | "webhost" => {
            let tso = sim::TsoForm { max_segs: 45, win_divisor: 3, max_defer_ns: 2_000_000, era: Default::default() };
            c.tcp_sources.push(sim::TcpSource {
                name: "web".into(),
                arrivals: sim::Arrivals::Sessions { sessions: 200, off_mean_ns: 5_000_000_000 },
                sizes: sim::SizeDist::surge(),
                rtt: sim::RttDist::ExponentialOneWay { mean_one_way_ns: 66_000_000, min_rtt_ns: 0 },
                direction: sim::Direction::Both,
                cc: "reno".into(),
                params: vec![],
                mss: 1448,
                header_bytes: 52,
                init_cwnd: 10,
                pacing: false,
                ecn: false,
                start_ns: 0,
                stop_ns: None,
                route: None,
                access: (kind == "webhost").then_some(sim::AccessLink {
                    rate_bps: 1_000_000_000,
                    queue_pkts: 1000,
                    tsq: None,
                }),
                tso: (kind == "webhost").then_some(tso),
            });
        }
        "sack" => {
            for f in &mut c.flows {
                f.sack_compression = Some(sim::SackCompression { nr: 44, delay_ns: 1_000_000 });
            }
        }
        "rwnd" => {
            for f in &mut c.flows {
                f.receive_window = Some(sim::tcp::rcvwnd::RcvBufConfig::LINUX);
            }
        }
        _ => unreachable!("unknown model {kind}"),
    }
    c
}

fn main() {
    let repeat: usize = std::env::args()
        .skip_while(|a| a != "--repeat")
        .nth(1)
        .map(|v| v.parse().expect("--repeat takes a number"))
        .unwrap_or(3);
    // `--only NAME,...`: run just the scenarios whose label starts with one of
    // these (e.g. `--only a,b` for the two base scenarios, for callgrind).
    let only: Vec<String> = std::env::args()
        .skip_while(|a| a != "--only")
        .nth(1)
        .map(|v| v.split(',').map(|x| format!("{x}:")).collect())
        .unwrap_or_default();
    let with_qdisc = |kind: &str| {
        let mut c = scenario(10, 1_000_000_000, 100, 20, true);
        // RED's default thresholds (5/15 packets) would starve a 1 Gbit/s,
        // 8333-packet BDP link; scale them to the buffer (1/10 and 3/10).
        let params = match kind {
            "red" => vec![
                ("min_th".to_string(), ParamValue::Float(833.0)),
                ("max_th".to_string(), ParamValue::Float(2500.0)),
            ],
            _ => vec![],
        };
        let (kind, ecn) = match kind.strip_suffix("+ecn") {
            Some(k) => (k, true),
            None => (kind, false),
        };
        let mut params = params;
        // DualPI2 has no `ecn` switch: it marks ECN-capable packets always.
        if ecn && kind != "dualpi2" {
            params.push(("ecn".to_string(), ParamValue::Bool(true)));
        }
        c.bottleneck.qdisc = QdiscConfig::from_params(kind, &params).expect("valid parameters");
        for f in &mut c.flows {
            f.ecn = ecn;
            if kind == "xcp" {
                f.cc = "xcp".into();
            }
        }
        c
    };
    let cases = [
        (
            "a: 2 cubic, 100 Mbit/s, 100 ms, 1 BDP, 60 s, 100 ms probes".to_string(),
            scenario(2, 100_000_000, 100, 60, true),
        ),
        ("b: 10 cubic, 1 Gbit/s, 100 ms, 1 BDP, 20 s".to_string(), scenario(10, 1_000_000_000, 100, 20, true)),
    ]
    .into_iter()
    // Scenario b with each discipline (same buffer; defaults except RED's
    // thresholds); "+ecn": the flows negotiate ECN and the queue marks;
    // xcp: the flows run XCP through the XCP router.
    .chain(
        ["red", "codel", "pie", "fq_codel", "codel+ecn", "fq_codel+ecn", "dualpi2", "dualpi2+ecn", "xcp"]
            .map(|k| (format!("b/{k}: scenario b with {k}"), with_qdisc(k))),
    )
    // Scenario a with each link model on, and with compressing receivers (see
    // `with_model`).
    .chain(
        [
            "schedule", "trace", "jitter", "reorder", "policer", "shaper", "acks", "host", "sack", "rwnd", "web",
            "webhost",
        ]
        .map(|k| (format!("a/{k}: scenario a with {k}"), with_model(k))),
    );
    println!("{:<58} {:>14} {:>14} {:>10}", "scenario", "data pkts/s", "events/s", "engine s");
    for (name, cfg) in cases.filter(|(n, _)| only.is_empty() || only.iter().any(|o| n.starts_with(o.as_str()))) {
        let mut best: Option<(f64, f64, f64)> = None;
        for _ in 0..repeat {
            let out = sim::run(&cfg).expect("benchmark run failed");
            let s = out.engine_seconds;
            let r = (out.bottleneck_data_packets as f64 / s, out.events as f64 / s, s);
            if best.is_none_or(|b| r.0 > b.0) {
                best = Some(r);
            }
        }
        let (pps, eps, s) = best.unwrap();
        println!("{name:<58} {pps:>14.0} {eps:>14.0} {s:>10.3}");
    }
}
