//! The engine configuration's written form: the dict keys the front end
//! writes, read by serde, misspelt keys refused naming their path.

use serde_json::json;
use sim::{read_config, App, Config, QdiscConfig, QueueLimit};

/// A dumbbell with one flow of each app and everything optional left out.
fn written() -> serde_json::Value {
    json!({
        "seed": 1, "duration_ns": 2_000_000_000u64, "interval_ns": 100_000_000, "trace": false,
        "bottleneck": {"rate_bps": 10_000_000, "delay_ns": 5_000_000, "buffer_pkts": 100,
                       "qdisc": {"kind": "codel", "target_ns": 5_000_000}},
        "reverse": {"rate_bps": 10_000_000, "buffer_bytes": 150_000, "loss": null,
                    "loss_model": {"kind": "gilbert", "p_gb": 0.01, "p_bg": 0.5, "loss_good": 0.0, "loss_bad": 0.5}},
        "flows": [
            {"cc": "reno", "start_ns": 0, "stop_ns": null, "rtt_ns": 40_000_000, "mss": 1448, "header_bytes": 52,
             "init_cwnd": 10, "pacing": false, "app": "bulk", "recovery": "prr", "params": {}},
            {"cc": "cubic", "params": {"beta": 0.7, "fast_convergence": true, "mode": "rfc9438"},
             "start_ns": 0, "rtt_ns": 40_000_000, "mss": 1448, "header_bytes": 52,
             "init_cwnd": 10, "pacing": true, "app": "fixed", "app_bytes": 100_000,
             "tso": {"max_segs": 44, "win_divisor": 3, "max_defer_ns": 2_000_000, "era": "linux-today"},
             "access": {"rate_bps": 1_000_000_000, "queue_pkts": 1000, "tsq_bytes": 262_144}}
        ],
        "udp_sources": [{"name": "u", "pattern": "cbr", "rate_bps": 1_000_000, "packet_bytes": 1000}]
    })
}

fn read(v: &serde_json::Value) -> Result<Config, String> {
    read_config(v)
}

#[test]
fn the_written_form_reads_into_the_engine_types() {
    let c = read(&written()).unwrap();
    assert_eq!(c.bottleneck.limit, QueueLimit::Packets(100));
    assert_eq!(c.reverse.limit, QueueLimit::Bytes(150_000));
    assert_eq!(c.reverse.loss, 0.0);
    assert_eq!(c.bottleneck.qdisc.name(), "codel");
    assert!(matches!(c.reverse.qdisc, QdiscConfig::DropTail));
    assert_eq!(c.flows[1].app, App::Fixed { bytes: 100_000 });
    assert_eq!(c.flows[1].tso.unwrap().max_defer, 2_000_000 * 1_000);
    assert_eq!(c.flows[1].access.unwrap().tsq, Some(262_144));
    assert!(c.flows[1].receiver_accecn && c.flows[1].accecn_option);
    assert_eq!(
        c.flows[1].params.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
        ["beta", "fast_convergence", "mode"]
    );
    assert!(c.network.is_dumbbell() && c.tcp_sources.is_empty() && c.udp_sources.len() == 1);
    runs(&c);
}

#[test]
fn writing_and_reading_again_gives_the_same_configuration() {
    let c = read(&written()).unwrap();
    let once = serde_json::to_value(&c).unwrap();
    let again = serde_json::to_value(read(&once).unwrap()).unwrap();
    assert_eq!(once, again);
}

#[test]
fn a_misspelt_or_missing_key_names_its_path() {
    let mut v = written();
    v["flows"][1]["recovry"] = json!("prr");
    let e = read(&v).unwrap_err();
    assert!(e.starts_with("flows[1].recovry: unknown field `recovry`"), "{e}");

    let mut v = written();
    v["bottleneck"]["qdisc"]["target_ns"] = json!(0);
    let e = read(&v).unwrap_err();
    assert!(e.starts_with("bottleneck.qdisc: target_ns: expected"), "{e}");

    let mut v = written();
    v["bottleneck"]["buffer_bytes"] = json!(1000);
    assert_eq!(read(&v).unwrap_err(), "bottleneck: exactly one of buffer_pkts and buffer_bytes must be given");

    let mut v = written();
    v["flows"][0]["recovery"] = json!("reno");
    assert_eq!(read(&v).unwrap_err(), "flows[0].recovery: unknown variant `reno`, expected `prr` or `newreno`");

    let mut v = written();
    v.as_object_mut().unwrap().remove("seed");
    assert_eq!(read(&v).unwrap_err(), "missing field `seed`");
}

/// Runs the configuration briefly: what was read is a configuration the engine takes.
fn runs(c: &Config) {
    let mut c = c.clone();
    c.duration_ns = 200_000_000;
    sim::run(&c).expect("the engine takes it");
}
