//! Whole-simulation behaviour of the queue disciplines (RFC 8289 CoDel,
//! RFC 8033 PIE, RFC 8290 FQ-CoDel, Floyd & Jacobson RED) on the dumbbell:
//! where each one holds a long-lived flow's standing queue, flow isolation,
//! ECN marking and determinism.

mod common;

use common::*;
use sim::{App, Config, Output, QdiscConfig};

/// Median queueing delay at the bottleneck (enqueue to start of transmission), ms.
fn median_delay_ms(out: &Output) -> f64 {
    out.queue.delay.quantile(0.5).unwrap() / 1e6
}

/// Eight long-lived CUBIC flows, 100 Mbit/s, 50 ms, a 2-BDP buffer, 30 s.
/// (With a single CUBIC flow CoDel's queue is empty most of the time: each
/// 30 % window reduction drains it, median delay 0.12 ms at 92 % use.)
fn long_flows(kind: &str) -> Config {
    with_qdisc(dumbbell(100, 50, 2.0, 30, vec![flow("cubic", 50); 8]), kind, &[])
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    xs[xs.len() / 2]
}

// RFC 8289 §4.4: CoDel keeps the standing queue near target (5 ms) while
// the link stays busy. DropTail with the same buffer sits far above it.
#[test]
fn codel_holds_the_queue_near_its_target() {
    let out = run(&long_flows("codel"));
    let d = median_delay_ms(&out);
    let u = utilisation(&out, 100, 5.0, 30.0);
    println!("codel: median queue delay {d:.2} ms, utilisation {u:.3}, drops {}", out.queue.drops);
    assert!((2.0..=10.0).contains(&d), "median queue delay {d} ms");
    assert!(u >= 0.90, "utilisation {u}");
    assert!(out.queue.aqm_drops > 0 && out.queue.aqm_drops == out.queue.drops, "{:?}", out.queue.counters());
    let dt = run(&long_flows("droptail"));
    let ddt = median_delay_ms(&dt);
    println!("droptail: median queue delay {ddt:.2} ms");
    assert!(ddt > 3.0 * d, "droptail {ddt} ms vs codel {d} ms");
}

// RFC 8033 §4.1: PIE steers the queueing delay towards QDELAY_REF = 15 ms.
#[test]
fn pie_holds_the_queue_near_its_target() {
    let out = run(&long_flows("pie"));
    let d = median_delay_ms(&out);
    let u = utilisation(&out, 100, 5.0, 30.0);
    let p = median(queue_column(&out, "pie_drop_prob"));
    println!(
        "pie: median queue delay {d:.2} ms, utilisation {u:.3}, median drop prob {p:.5}, drops {}",
        out.queue.drops
    );
    assert!((7.5..=25.0).contains(&d), "median queue delay {d} ms");
    assert!(u >= 0.90, "utilisation {u}");
    assert!(out.queue.aqm_drops > 0);
}

// RFC 8290 §1: a sparse flow beside bulk flows sees almost no queue under
// FQ-CoDel (its packets go through new_flows), while DropTail makes it wait
// behind the whole standing queue.
#[test]
fn fq_codel_isolates_a_sparse_flow() {
    let build = |kind: &str| {
        let mut flows = vec![flow("cubic", 50); 4];
        let mut sparse = flow("cubic", 50);
        sparse.app = App::Rate { bps: 1_000_000 };
        flows.push(sparse);
        with_qdisc(dumbbell(100, 50, 1.0, 30, flows), kind, &[])
    };
    // Queueing seen by the sparse flow: its median RTT above the 50 ms base.
    let extra_ms = |out: &Output| out.flows[4].rtt.quantile(0.5).unwrap() / 1e3 - 50.0;
    let fq = run(&build("fq_codel"));
    let dt = run(&build("droptail"));
    let (e_fq, e_dt) = (extra_ms(&fq), extra_ms(&dt));
    let u = utilisation(&fq, 100, 5.0, 30.0);
    println!("sparse flow queueing: fq_codel {e_fq:.2} ms, droptail {e_dt:.2} ms; fq_codel utilisation {u:.3}");
    assert!(e_fq < 1.0, "fq_codel: {e_fq} ms");
    assert!(e_dt > 10.0, "droptail: {e_dt} ms");
    assert!(u >= 0.90, "utilisation {u}");
    // The active-flow column counts non-empty sub-queues: at most the five
    // flows, and every bulk flow's queue is seen backlogged at some sample.
    let active = queue_column(&fq, "fq_active_flows");
    let max = active.iter().cloned().fold(0.0, f64::max);
    assert!((4.0..=5.0).contains(&max), "active flows {active:?}");
}

// Adaptive RED (Floyd, Gummadi, Shenker 2001): at full load max_p adapts
// so that the average queue stays between the thresholds (target band
// 90–110 packets here). Sixteen CUBIC flows, 100 Mbit/s, 50 ms, 1 BDP
// (417 packets), thresholds 50 and 150 packets, 60 s; the last 30 s count.
// Plain RED with max_p 0.1 would sit near min_th: the flows need a drop
// rate of about 0.3 %, reached at avg ≈ min_th + 0.03·(max_th − min_th).
#[test]
fn adaptive_red_average_stays_between_its_thresholds() {
    use sim::qdisc::ParamValue::{Bool, Float};
    let cfg = with_qdisc(
        dumbbell(100, 50, 1.0, 60, vec![flow("cubic", 50); 16]),
        "red",
        &[("min_th", Float(50.0)), ("max_th", Float(150.0)), ("adaptive", Bool(true))],
    );
    let out = run(&cfg);
    let t = queue_column(&out, "t_ns");
    let late = |name: &str| -> Vec<f64> {
        queue_column(&out, name).into_iter().zip(&t).filter(|(_, &t)| t > 30e9).map(|(a, _)| a).collect()
    };
    let avg = late("red_avg_pkts");
    let m = median(avg.clone());
    let u = utilisation(&out, 100, 30.0, 60.0);
    let inside = avg.iter().filter(|&&a| (50.0..150.0).contains(&a)).count() as f64 / avg.len() as f64;
    let max_p = *late("red_max_p").last().unwrap();
    println!(
        "adaptive red: median avg {m:.1} pkts, {:.0} % of samples in [min_th, max_th), max_p {max_p:.4}, utilisation {u:.3}, early drops {} of {}",
        inside * 100.0,
        out.queue.aqm_drops,
        out.queue.drops
    );
    assert!((50.0..150.0).contains(&m), "median avg {m}");
    assert!(inside >= 0.75, "{inside}");
    assert!(max_p < 0.02, "max_p {max_p}");
    assert!(u >= 0.95, "utilisation {u}");
    // Below max_th nothing overflows: every drop is RED's.
    assert_eq!(out.queue.aqm_drops, out.queue.drops);
}

// RFC 3168 §5 / RFC 8289 §5.5 / RFC 8290: with ECN on, ECN-capable packets
// are marked, never dropped by the AQM (the buffer may still overflow). With
// ECN off in the discipline the same run drops.
#[test]
fn ecn_marks_instead_of_dropping() {
    use sim::qdisc::ParamValue::Bool;
    for kind in ["codel", "fq_codel"] {
        let build = |ecn: bool| {
            let mut f = flow("cubic", 50);
            f.ecn = true;
            with_qdisc(dumbbell(100, 50, 2.0, 10, vec![f; 2]), kind, &[("ecn", Bool(ecn))])
        };
        let on = run(&build(true));
        let off = run(&build(false));
        println!(
            "{kind}: ecn on marks {} aqm drops {} drops {}; off marks {} aqm drops {}",
            on.queue.marks, on.queue.aqm_drops, on.queue.drops, off.queue.marks, off.queue.aqm_drops
        );
        assert!(on.queue.marks > 0, "{kind}");
        assert_eq!(on.queue.aqm_drops, 0, "{kind}");
        assert_eq!(off.queue.marks, 0, "{kind}");
        assert!(off.queue.aqm_drops > 0, "{kind}");
        let marks: f64 = queue_column(&on, "marks").iter().sum();
        assert_eq!(marks as u64, on.queue.marks, "{kind}: trace marks add up");
    }
    // Not-ECT packets are dropped even with ECN on.
    let cfg = with_qdisc(dumbbell(100, 50, 2.0, 10, vec![flow("cubic", 50)]), "codel", &[("ecn", Bool(true))]);
    let out = run(&cfg);
    assert_eq!(out.queue.marks, 0);
    assert!(out.queue.aqm_drops > 0);
}

// The same seed gives the same trace and counters with every discipline.
#[test]
fn same_seed_same_result() {
    for kind in ["droptail", "red", "codel", "pie", "fq_codel"] {
        let mut flows = vec![flow("cubic", 50); 3];
        flows[1].rtt_ns = 80_000_000;
        flows[2].ecn = true;
        let cfg = with_qdisc(dumbbell(50, 50, 1.0, 5, flows), kind, &[]);
        let (a, b) = (run(&cfg), run(&cfg));
        // Debug strings: the traces hold NaN, which is not equal to itself.
        assert_eq!(format!("{:?}", a.queue_columns), format!("{:?}", b.queue_columns), "{kind}");
        assert_eq!(format!("{:?}", a.flow_columns), format!("{:?}", b.flow_columns), "{kind}");
        assert_eq!(a.queue.counters(), b.queue.counters(), "{kind}");
        let names: Vec<_> = a.queue_columns.iter().map(|(n, _)| *n).collect();
        if kind == "droptail" {
            assert!(!names.contains(&"marks"));
        } else {
            assert!(names.contains(&"marks"), "{kind}: {names:?}");
        }
    }
}

#[test]
fn bad_qdisc_parameters_are_errors() {
    use sim::qdisc::ParamValue::{Float, Int};
    assert!(QdiscConfig::from_params("red", &[("max_p".into(), Float(-0.1))]).is_err());
    assert!(QdiscConfig::from_params("fq_codel", &[("flows".into(), Int(0))]).is_err());
    assert!(QdiscConfig::from_params("pie", &[("target_ns".into(), Float(1.5))]).is_err());
}
