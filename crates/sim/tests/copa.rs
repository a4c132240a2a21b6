//! Whole-simulation checks of Copa (`copa`) against behaviours CP1–CP6,
//! drawn from the paper's claims and from the fluid equilibrium of the
//! control law (crates/cc/src/copa.rs): n flows with δ = 0.5 hold
//! Σ 1/δ = 2n packets queued, share equally whatever their RTTs, and switch
//! to competitive mode against a buffer-filling CUBIC flow.
//!
//! Copa flows run paced, as the registry asks (`cc_flow`). Paths are the
//! dumbbell of `common.rs` (1500-byte packets on the wire; 100 Mbit/s is
//! 8333 packets/s, so 1 ms of queue is 8.3 packets). Thresholds come from
//! those claims and that equilibrium, never from the measured numbers; each
//! test prints what it measured.
//!
//! The "queue ≈ 1/δ to a few × 1/δ packets" of CP1/CP2/CP6 is checked as a
//! mean backlog in [1/(2δ), 4/δ] packets per flow: a factor of two below
//! the fluid value (the queue empties periodically) and four above it
//! (the oscillation the paper describes); for one flow at δ = 0.5 that is
//! [1, 8] packets, inside CP1's "≤ ~1 ms" (8.3 packets).

mod common;
use common::*;
use sim::{Config, Output};

/// A trace column of one flow, by plain name or by algorithm metric name,
/// with its times in seconds.
fn flow_series(out: &Output, id: usize, name: &str) -> (Vec<f64>, Vec<f64>) {
    let flow = flow_column(out, "flow");
    let t = flow_column(out, "t_ns");
    let col = match out.flows[id].metric_names.iter().position(|&m| m == name) {
        Some(i) => flow_column(out, &format!("cc_{i}")),
        None => flow_column(out, name),
    };
    let keep: Vec<usize> = (0..flow.len()).filter(|&i| flow[i] as usize == id).collect();
    (keep.iter().map(|&i| t[i] / 1e9).collect(), keep.iter().map(|&i| col[i]).collect())
}

/// Values of `(t, v)` with t0 < t ≤ t1.
fn between(t: &[f64], v: &[f64], t0: f64, t1: f64) -> Vec<f64> {
    t.iter().zip(v).filter(|(&t, _)| t > t0 && t <= t1).map(|(_, &v)| v).collect()
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Bottleneck backlog samples (packets) with t0 < t ≤ t1 seconds.
fn backlog_between(out: &Output, t0: f64, t1: f64) -> Vec<f64> {
    between(
        &queue_column(out, "t_ns").iter().map(|t| t / 1e9).collect::<Vec<_>>(),
        &queue_column(out, "backlog_pkts"),
        t0,
        t1,
    )
}

/// Drops at the bottleneck with t0 < t ≤ t1 seconds.
fn drops_between(out: &Output, t0: f64, t1: f64) -> f64 {
    let t: Vec<f64> = queue_column(out, "t_ns").iter().map(|t| t / 1e9).collect();
    between(&t, &queue_column(out, "drops"), t0, t1).iter().sum()
}

/// Fraction of a flow's trace samples in t0 < t ≤ t1 with mode = DEFAULT (0).
fn default_mode_fraction(out: &Output, id: usize, t0: f64, t1: f64) -> f64 {
    let (t, mode) = flow_series(out, id, "mode");
    let m = between(&t, &mode, t0, t1);
    m.iter().filter(|&&x| x == 0.0).count() as f64 / m.len() as f64
}

fn copa_with(params: &[(&str, cc::ParamValue)], rtt_ms: u64) -> sim::FlowConfig {
    let mut f = cc_flow("copa", rtt_ms);
    f.params = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    f
}

/// The registry asks for pacing; `cc_flow` honours it.
#[test]
fn copa_is_paced_by_default() {
    let info = cc::registry::info("copa").unwrap();
    assert!(info.needs_pacing);
    assert!(cc_flow("copa", 50).pacing);
}

/// One single-flow run of 60 s on 100 Mbit/s, 50 ms, sampled every 10 ms.
fn single(delta: f64, bdp: f64, loss: f64) -> Config {
    let mut cfg = dumbbell(100, 50, bdp, 60, vec![copa_with(&[("delta", cc::ParamValue::Float(delta))], 50)]);
    cfg.interval_ns = 10_000_000;
    cfg.bottleneck.loss = loss;
    cfg
}

/// CP1: one Copa flow, 100 Mbit/s, 50 ms, 2 BDP of buffer. Over 10–60 s:
/// utilisation ≥ 90 %; mean backlog in [1/(2δ), 4/δ] = [1, 8] packets
/// (≤ 1 ms); the buffer never fills (no drops after slow start); mode
/// DEFAULT at ≥ 95 % of the 10 ms samples.
#[test]
fn cp1_one_flow_full_link_short_queue() {
    let out = run(&single(0.5, 2.0, 0.0));
    let u = utilisation(&out, 100, 10.0, 60.0);
    let q = backlog_between(&out, 10.0, 60.0);
    let qmean = mean(&q);
    let qmax = q.iter().cloned().fold(0.0, f64::max);
    let dflt = default_mode_fraction(&out, 0, 10.0, 60.0);
    let late_drops = drops_between(&out, 10.0, 60.0);
    println!(
        "CP1: utilisation {u:.4}, backlog mean {qmean:.2} max {qmax} packets, default mode {:.1} %, drops {} (after 10 s: {late_drops})",
        dflt * 100.0,
        out.queue.drops
    );
    assert!(u >= 0.90, "utilisation {u:.4}");
    assert!((1.0..=8.0).contains(&qmean), "mean backlog {qmean:.2} packets, want [1, 8]");
    assert_eq!(late_drops, 0.0, "the buffer filled after slow start");
    assert!(dflt >= 0.95, "default mode {:.1} % of the time", dflt * 100.0);
}

/// CP1 with other δ: the standing queue scales as 1/δ (fluid equilibrium):
/// mean backlog in [1/(2δ), 4/δ] for δ = 0.25 (4 packets) and δ = 0.1 (10
/// packets), at ≥ 90 % utilisation.
#[test]
fn cp1_queue_scales_with_one_over_delta() {
    for delta in [0.25, 0.1] {
        let out = run(&single(delta, 2.0, 0.0));
        let u = utilisation(&out, 100, 10.0, 60.0);
        let qmean = mean(&backlog_between(&out, 10.0, 60.0));
        println!("δ = {delta}: utilisation {u:.4}, backlog mean {qmean:.2} packets (1/δ = {})", 1.0 / delta);
        assert!(u >= 0.90, "δ = {delta}: utilisation {u:.4}");
        assert!((0.5 / delta..=4.0 / delta).contains(&qmean), "δ = {delta}: mean backlog {qmean:.2}");
    }
}

/// CP2: five Copa flows, same RTT (50 ms), starting 2 s apart, 100 Mbit/s,
/// 2 BDP. Over 20–60 s (well after the last start at 8 s): Jain ≥ 0.9,
/// mean backlog in [5, 40] packets (Σ 1/δ = 10), utilisation ≥ 90 %.
#[test]
fn cp2_five_flows_converge_to_fair_shares() {
    let flows = (0..5)
        .map(|i| {
            let mut f = cc_flow("copa", 50);
            f.start_ns = i * 2_000_000_000;
            f
        })
        .collect();
    let mut cfg = dumbbell(100, 50, 2.0, 60, flows);
    cfg.interval_ns = 10_000_000;
    let out = run(&cfg);
    let b = bytes_between(&out, 20.0, 60.0);
    let j = jain(&b.iter().map(|&x| x as f64).collect::<Vec<_>>());
    let u = utilisation(&out, 100, 20.0, 60.0);
    let qmean = mean(&backlog_between(&out, 20.0, 60.0));
    let dflt: Vec<f64> = (0..5).map(|i| default_mode_fraction(&out, i, 20.0, 60.0)).collect();
    println!("CP2: Jain {j:.4}, shares {b:?}, utilisation {u:.4}, backlog mean {qmean:.2}, default mode {dflt:.2?}");
    assert!(j >= 0.9, "Jain {j:.4}");
    assert!(u >= 0.90, "utilisation {u:.4}");
    assert!((5.0..=40.0).contains(&qmean), "mean backlog {qmean:.2} packets, want [5, 40]");
}

/// CP3: two Copa flows with RTTs 20 ms and 80 ms (100 Mbit/s, buffer 2 BDP of
/// 50 ms): rates independent of RTT (fluid equilibrium), so Jain ≥ 0.9 over
/// 20–60 s (a ratio within 1:2), and fairer than two CUBIC flows on the same
/// path.
#[test]
fn cp3_rtt_fairness() {
    let jain_of = |cc: &str| {
        let out = run(&dumbbell(100, 50, 2.0, 60, vec![cc_flow(cc, 20), cc_flow(cc, 80)]));
        let b = bytes_between(&out, 20.0, 60.0);
        (jain(&[b[0] as f64, b[1] as f64]), b)
    };
    let (jc, bc) = jain_of("copa");
    let (jcu, bcu) = jain_of("cubic");
    println!("CP3: copa Jain {jc:.4} {bc:?}; cubic Jain {jcu:.4} {bcu:?}");
    assert!(jc >= 0.9, "copa Jain {jc:.4}");
    assert!(jc > jcu, "copa Jain {jc:.4} not above cubic's {jcu:.4}");
}

/// Copa (paced, started alone) against one CUBIC flow that joins at 10 s:
/// 100 Mbit/s, 50 ms, 2 BDP (833 packets), 80 s, sampled every 10 ms.
fn copa_vs_cubic(mode_switch: bool) -> Output {
    let copa = copa_with(&[("mode_switch", cc::ParamValue::Bool(mode_switch))], 50);
    let mut cubic = cc_flow("cubic", 50);
    cubic.start_ns = 10_000_000_000;
    let mut cfg = dumbbell(100, 50, 2.0, 80, vec![copa, cubic]);
    cfg.interval_ns = 10_000_000;
    run(&cfg)
}

/// Copa's share of the two flows' bytes over 20–80 s.
fn copa_share(out: &Output) -> f64 {
    let b = bytes_between(out, 20.0, 80.0);
    b[0] as f64 / (b[0] + b[1]) as f64
}

/// CP4, the mode switch: once CUBIC has filled the buffer (the first 10 ms
/// sample after 10 s with a backlog of at least 90 % of the 833 packets),
/// Copa is in competitive mode within a few RTTs: at most 5 RTTs of 150 ms
/// (50 ms plus a full buffer's 100 ms) later. And the mechanism is what keeps
/// Copa from starving: its share over 20–80 s is above the share it gets
/// with the mode switch off.
#[test]
fn cp4_switches_to_competitive_mode_against_cubic() {
    let out = copa_vs_cubic(true);
    let tq: Vec<f64> = queue_column(&out, "t_ns").iter().map(|t| t / 1e9).collect();
    let q = queue_column(&out, "backlog_pkts");
    let full = tq.iter().zip(&q).find(|(&t, &q)| t > 10.0 && q >= 0.9 * 833.0).map(|(&t, _)| t);
    let (t, mode) = flow_series(&out, 0, "mode");
    let first = t.iter().zip(&mode).find(|(&t, &m)| t > 10.0 && m == 1.0).map(|(&t, _)| t);
    let competitive = 1.0 - default_mode_fraction(&out, 0, 12.0, 80.0);
    let (share, share_off) = (copa_share(&out), copa_share(&copa_vs_cubic(false)));
    println!(
        "CP4: buffer full at {full:?} s, Copa competitive from {first:?} s and {:.1} % of 12–80 s; \
         share {share:.3} (mode switch off: {share_off:.3})",
        competitive * 100.0
    );
    let full = full.expect("CUBIC never filled the buffer");
    let first = first.expect("Copa never switched to competitive mode");
    assert!(first <= full + 5.0 * 0.150, "competitive at {first:.2} s, buffer full at {full:.2} s");
    assert!(share > share_off, "share {share:.3} not above {share_off:.3} without the mode switch");
}

/// CP4, the share: against CUBIC, Copa's share of the bytes over 20–80 s
/// must lie in an acceptance band of ours, [0.2, 0.6] ("not starved", for
/// the claim of good coexistence with Cubic in the paper's abstract;
/// the paper's own measured share was not re-read). Measured: 0.228 (0.177
/// before Copa kept genericCC's rule that a return to default mode within an
/// RTT of a competitive-mode loss leaves δ as it is). The pass is not
/// robust: with CUBIC joining 0.25–1.75 s later the share is 0.168–0.182,
/// and over the eight starts 0–1.75 s later (0.25 s apart) its mean is
/// 0.179 (0.174 before the change); the 0.228 comes from one course of the
/// loss episodes at 47 s and 69 s. What keeps it low: the queue never drains while CUBIC
/// runs, and CUBIC's loss epochs here (11–16 s) outlast RTT_min's 10 s
/// window, so RTT_min rises to the queue's trough; right after each CUBIC
/// backoff the RTT touches that trough, the mode check reads "nearly
/// empty", δ returns to 0.5 and Copa's window collapses (velocity doubling
/// on the way down), after which 1/δ climbs back by one per RTT (genericCC's
/// rules). The share depends on the path: 0.60 at 100 Mbit/s and 20 ms,
/// 0.31 at 50 Mbit/s and 50 ms, 0.075 at 100 Mbit/s and 100 ms (2 BDP each).
#[test]
#[ignore = "Copa's share against CUBIC is 0.228 over 20-80 s here but 0.168-0.182 with CUBIC joining 0.25-1.75 s later: the band [0.2, 0.6] is met by one trajectory only, see the doc comment"]
fn cp4_share_against_cubic_in_reference_band() {
    let share = copa_share(&copa_vs_cubic(true));
    println!("CP4: Copa share {share:.3}");
    assert!((0.2..=0.6).contains(&share), "Copa share {share:.3}");
}

/// CP5: one Copa flow with 1 % random loss keeps its throughput (default
/// mode ignores isolated losses): utilisation over 10–60 s at least 90 % of
/// the lossless run's.
#[test]
fn cp5_random_loss_does_not_cut_throughput() {
    let u0 = utilisation(&run(&single(0.5, 2.0, 0.0)), 100, 10.0, 60.0);
    let out = run(&single(0.5, 2.0, 0.01));
    let u = utilisation(&out, 100, 10.0, 60.0);
    println!(
        "CP5: utilisation {u:.4} at 1 % loss vs {u0:.4} lossless; timeouts {}, retransmissions {}",
        out.flows[0].timeouts, out.flows[0].retrans_pkts
    );
    assert!(u >= 0.9 * u0, "utilisation {u:.4} vs {u0:.4}");
}

/// CP6: a 10 BDP buffer (4167 packets): the queue stays near 1/δ, not
/// near the buffer: over 15–60 s mean backlog in [1, 8] packets and every
/// 10 ms sample below 10 % of the buffer.
#[test]
fn cp6_large_buffer_stays_short() {
    let out = run(&single(0.5, 10.0, 0.0));
    let q = backlog_between(&out, 15.0, 60.0);
    let qmean = mean(&q);
    let qmax = q.iter().cloned().fold(0.0, f64::max);
    let u = utilisation(&out, 100, 15.0, 60.0);
    println!("CP6: backlog mean {qmean:.2} max {qmax} packets (buffer 4167), utilisation {u:.4}");
    assert!((1.0..=8.0).contains(&qmean), "mean backlog {qmean:.2}");
    assert!(qmax < 416.7, "backlog reached {qmax} packets");
}
