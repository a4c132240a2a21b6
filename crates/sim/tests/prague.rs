//! TCP Prague (L4STeam `tcp_prague.c` v0.7) on the dumbbell behind a
//! shallow step-marking queue, RED marking every ECT packet that finds more
//! than K packets queued, a stand-in for DualPI2's L queue (its native step
//! at 1 ms of sojourn). Expected numbers (PG1, PG2: this file's names for
//! the behaviours checked) come from the rate law and the RTT independence
//! below 25 ms that the v0.7 header comment of `tcp_prague.c` states and
//! from RFC 9331's sub-millisecond mean queueing delay for L4S, fixed before
//! the runs; PG1's 2 ms 99th percentile recalls L4S demonstrations and was
//! not confirmed in a second source.

mod common;

use common::*;
use sim::qdisc::ParamValue::{Bool, Float};
use sim::{Config, FlowConfig, Output};

/// 1 ms of queue at 100 Mbit/s in 1500-byte packets: DualPI2's step threshold.
const K_1MS: f64 = 8.0;

/// Two flows of `cc` with base RTTs 5 ms and 20 ms through the step queue
/// (100 Mbit/s, 60 s); their byte ratio over 10–60 s (5 ms flow / 20 ms flow).
fn two_rtts(cc: &str) -> (f64, Output) {
    let flows: Vec<FlowConfig> = [5, 20]
        .into_iter()
        .map(|rtt| {
            let mut f = cc_flow(cc, rtt);
            f.ecn = true;
            f
        })
        .collect();
    let out = run(&step_marking(dumbbell(100, 20, 2.0, 60, flows), K_1MS));
    let b = bytes_between(&out, 10.0, 60.0);
    (b[0] as f64 / b[1] as f64, out)
}

/// PG1's run: one Prague flow, 100 Mbit/s, 20 ms, marking above 1 ms of
/// queue, 30 s.
fn pg1() -> Output {
    run(&step_marking(dumbbell(100, 20, 2.0, 30, vec![cc_flow("prague", 20)]), K_1MS))
}

// PG1: utilisation ≥ 95 % and a shallow queue: mean queueing delay < 1 ms,
// 99th percentile < 2 ms; no loss, so nothing is retransmitted.
#[test]
fn pg1_full_utilisation_and_a_shallow_queue() {
    let out = pg1();
    let u = utilisation(&out, 100, 5.0, 30.0);
    let ce = out.queue.marks as f64 / out.queue.arrivals as f64;
    let mean_ms = out.queue.delay.mean().unwrap() / 1e6;
    let p99_ms = out.queue.delay.quantile(0.99).unwrap() / 1e6;
    let alpha = flow_column(&out, "cc_0");
    println!(
        "prague PG1: utilisation {u:.4}, CE fraction {:.3} %, queue delay mean {mean_ms:.3} ms p99 {p99_ms:.3} ms, \
         drops {}, retransmissions {}, ecn reductions {}, final alpha {:.3}",
        ce * 100.0,
        out.queue.drops,
        out.flows[0].retrans_pkts,
        out.flows[0].ecn_reductions,
        alpha.last().unwrap()
    );
    assert!(u >= 0.95, "utilisation {u}");
    assert!(mean_ms < 1.0, "mean queue delay {mean_ms} ms");
    assert!(p99_ms < 2.0, "p99 queue delay {p99_ms} ms");
    assert_eq!(out.flows[0].retrans_pkts, 0);
}

// PG1: about 1 % of packets CE-marked (the response function r [Mbit/s] =
// 1/p − 1 at RTT ≤ 25 ms gives p ≈ 1/101; accepted 0.5–2 %). That law
// assumes marks spread evenly; a step marker marks every packet while the
// queue is above K, about one window per sawtooth (DCTCP's analysis gives
// α ≈ √(2/W), W ≈ 174 packets here: ≈ 11 %), which the measured α (≈ 0.09)
// matches. Kept as stated; a DualPI2 run (coupled, randomised marking)
// may meet it.
#[test]
#[ignore = "measured 9.57 % CE-marked through the step marker, expected 0.5-2 % (PG1: about 1 %)"]
fn pg1_about_one_percent_marked() {
    let out = pg1();
    let ce = out.queue.marks as f64 / out.queue.arrivals as f64;
    println!("prague PG1: CE fraction {:.3} %", ce * 100.0);
    assert!((0.005..=0.02).contains(&ce), "CE fraction {ce}");
}

/// Marks ECT packets with a probability that grows with RED's average queue
/// (min_th 8, max_th 48 packets, max_p 0.1, gentle, RED's default averaging
/// weight 0.002): marks spread over the packets, the premise of Prague's
/// response function (the law the v0.7 header comment of tcp_prague.c
/// states) and of PG1's and PG3's expected numbers, which the step marker
/// does not meet.
fn ramp_marking(cfg: Config) -> Config {
    with_qdisc(
        cfg,
        "red",
        &[
            ("min_th", Float(8.0)),
            ("max_th", Float(48.0)),
            ("max_p", Float(0.1)),
            ("gentle", Bool(true)),
            ("harddrop", Bool(false)),
            ("ecn", Bool(true)),
        ],
    )
}

// PG1's marked fraction where its law's premise holds: the same flow through
// the spread (probabilistic) marker; the same 0.5-2 % band. It misses too:
// the law also assumes a cut every 25 ms, and Linux's CWR state, which a
// refused cut (the 25 ms rule) still enters, ignores further echoes for a
// round, so cuts come further apart and more marks are needed for the same
// rate (tcp_input.c tcp_try_to_open / tcp_enter_cwr; tcp_prague.c
// prague_enter_cwr).
#[test]
#[ignore = "measured 2.45 % CE-marked through the spread marker, expected 0.5-2 % (PG1: about 1 %)"]
fn pg1_about_one_percent_marked_when_marks_are_spread() {
    let out = run(&ramp_marking(dumbbell(100, 20, 2.0, 30, vec![cc_flow("prague", 20)])));
    let ce = out.queue.marks as f64 / out.queue.arrivals as f64;
    let u = utilisation(&out, 100, 5.0, 30.0);
    println!("prague PG1, spread marking: CE fraction {:.3} %, utilisation {u:.4}", ce * 100.0);
    assert!((0.005..=0.02).contains(&ce), "CE fraction {ce}");
    assert!(u >= 0.95, "utilisation {u}");
}

// PG2: base RTTs 5 ms and 20 ms in the same queue: Prague's rate scaling
// below 25 ms makes their rates nearly equal (ratio 0.8–1.25), where
// DCTCP, whose windows are equal at equal marking, splits about 4 : 1
// (accepted 2.5–6); Prague is the more equal of the two.
#[test]
fn pg2_rtt_independence() {
    let (prague, po) = two_rtts("prague");
    let (dctcp, _) = two_rtts("dctcp");
    println!(
        "PG2: rate ratio 5 ms / 20 ms: prague {prague:.3}, dctcp {dctcp:.3}; prague utilisation {:.3}",
        utilisation(&po, 100, 10.0, 60.0)
    );
    assert!((0.8..=1.25).contains(&prague), "prague ratio {prague}");
    assert!((2.5..=6.0).contains(&dctcp), "dctcp ratio {dctcp}");
    assert!((prague - 1.0).abs() < (dctcp - 1.0).abs());
}

// The same pair with rtt_scaling = false behaves as DCTCP does (rate ∝
// 1/RTT): the RTT independence comes from the scaling, nothing else.
#[test]
fn pg2_without_rtt_scaling_is_rtt_dependent() {
    let flows: Vec<FlowConfig> = [5, 20]
        .into_iter()
        .map(|rtt| {
            let mut f = cc_flow("prague", rtt);
            f.params = vec![("rtt_scaling".into(), cc::ParamValue::Bool(false))];
            f
        })
        .collect();
    let out = run(&step_marking(dumbbell(100, 20, 2.0, 60, flows), K_1MS));
    let b = bytes_between(&out, 10.0, 60.0);
    let ratio = b[0] as f64 / b[1] as f64;
    println!("PG2 without rtt_scaling: rate ratio 5 ms / 20 ms {ratio:.3}");
    assert!(ratio > 1.5, "ratio {ratio}");
}

// PG3: base RTTs 20 ms and 100 ms: above 25 ms the rate scales as 25/RTT,
// so the 20 ms flow (RTT-independent, like a 25 ms flow) gets about
// 100/25 = 4 times the 100 ms flow's rate (accepted 3–5.3), measured over
// 20–90 s of 90 s. The law assumes each flow sees the same marked
// fraction; a step marker instead marks both flows at the same moments, and
// with synchronised cuts the rates settle in the ratio of their growth
// rates, 1/(25 ms)² : 1/(100 ms)² = 16, near what is measured.
#[test]
#[ignore = "measured 18.2 (20 ms / 100 ms) through the step marker, expected 3-5.3 (PG3: about 4)"]
fn pg3_above_the_target_rtt_rate_scales_as_25ms_over_rtt() {
    let flows: Vec<FlowConfig> = [20, 100].into_iter().map(|rtt| cc_flow("prague", rtt)).collect();
    let out = run(&step_marking(dumbbell(100, 20, 2.0, 90, flows), K_1MS));
    let b = bytes_between(&out, 20.0, 90.0);
    let ratio = b[0] as f64 / b[1] as f64;
    println!("PG3: rate ratio 20 ms / 100 ms {ratio:.3}, utilisation {:.3}", utilisation(&out, 100, 20.0, 90.0));
    assert!((3.0..=5.3).contains(&ratio), "ratio {ratio}");
}

// PG3 where its law applies: the same two flows through the spread marker,
// where each sees the same marked fraction without synchronised cuts; the
// same 3-5.3 band.
#[test]
fn pg3_rate_scales_as_25ms_over_rtt_when_marks_are_spread() {
    let flows: Vec<FlowConfig> = [20, 100].into_iter().map(|rtt| cc_flow("prague", rtt)).collect();
    let out = run(&ramp_marking(dumbbell(100, 20, 2.0, 90, flows)));
    let b = bytes_between(&out, 20.0, 90.0);
    let ratio = b[0] as f64 / b[1] as f64;
    println!("PG3, spread marking: rate ratio 20 ms / 100 ms {ratio:.3}");
    assert!((3.0..=5.3).contains(&ratio), "ratio {ratio}");
}

/// Prague and Reno (`paced` or not), both at `rtt_ms`, through a DropTail FIFO of one BDP
/// without ECN marking (100 Mbit/s, 90 s): Prague's share of the bytes over
/// 30–90 s, divided by Reno's.
fn against_reno(rtt_ms: u64, paced: bool) -> f64 {
    let mut reno = flow("reno", rtt_ms);
    reno.pacing = paced;
    let out = run(&dumbbell(100, rtt_ms, 1.0, 90, vec![cc_flow("prague", rtt_ms), reno]));
    let b = bytes_between(&out, 30.0, 90.0);
    b[0] as f64 / b[1] as f64
}

// PG4: on a loss-only FIFO at RTT ≥ 25 ms Prague is Reno-like (halving on
// loss, +1 packet per round): about an equal share (accepted 0.7–1.4) at 50 ms.
// Prague is paced and steps its window down one packet per ACK in recovery
// where Reno (unpaced) runs PRR, which may favour it.
#[test]
#[ignore = "measured 1.936 (prague / reno at 50 ms), expected 0.7-1.4 (PG4: about 1)"]
fn pg4_reno_friendly_on_loss_above_25ms() {
    let ratio = against_reno(50, false);
    println!("PG4: prague / reno at 50 ms on DropTail {ratio:.3}");
    assert!((0.7..=1.4).contains(&ratio), "ratio {ratio}");
}

// PG4's premise, equal exposure to the drops, against a Reno flow paced as
// Prague is (Linux paces Prague always, Reno only under fq): the same
// 0.7-1.4 band. Prague's answer to loss is Reno's (halve, +1 per round).
#[test]
fn pg4_reno_friendly_on_loss_against_paced_reno() {
    let ratio = against_reno(50, true);
    println!("PG4: prague / paced reno at 50 ms on DropTail {ratio:.3}");
    assert!((0.7..=1.4).contains(&ratio), "ratio {ratio}");
}

// PG5: at 10 ms Prague adds only (10/25)² = 0.16 packet per round against
// Reno's 1, so with the same halving its window is about √0.16 = 0.4 of
// Reno's (fluid AIMD; accepted 0.3–0.55).
#[test]
fn pg5_below_25ms_prague_yields_to_reno_on_loss() {
    let ratio = against_reno(10, false);
    println!("PG5: prague / reno at 10 ms on DropTail {ratio:.3}");
    assert!((0.3..=0.55).contains(&ratio), "ratio {ratio}");
}
