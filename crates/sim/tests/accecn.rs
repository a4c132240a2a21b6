//! AccECN feedback (RFC 9768) end to end: the receiver's counters and the
//! sender's count of CE-marked packets equal the marks the queue made,
//! exactly; a receiver without AccECN gives RFC 3168 feedback, bit for bit
//! as a classic ECN flow; an algorithm that needs AccECN (Prague) runs as
//! Reno without ECN there.

mod common;

use cc::EcnMode;
use common::*;
use sim::qdisc::ParamValue::Bool;
use sim::{Config, FlowConfig, Output, Simulator};

/// Runs to the end and reads each flow's ECN state before the output is built.
fn run_ecn(cfg: &Config) -> (Output, Vec<(EcnMode, u64, Option<sim::tcp::accecn::Counters>)>) {
    let mut s = Simulator::new(cfg).unwrap();
    while !s.run_until(cfg.duration_ns, u64::MAX) {}
    let ecn = (0..cfg.flows.len()).map(|i| s.flow_ecn(i).unwrap()).collect();
    (s.finish(0.0).unwrap(), ecn)
}

fn accecn_flow(cc: &str, rtt_ms: u64) -> FlowConfig {
    let mut f = cc_flow(cc, rtt_ms);
    f.accecn = true;
    f
}

/// Flows that stop offering data 2 s before the end of a `secs` run, so
/// every packet the queue marked has reached its receiver and every ACK its
/// sender by the end.
fn draining(secs: u64, mut flows: Vec<FlowConfig>) -> Vec<FlowConfig> {
    for f in &mut flows {
        f.stop_ns = Some((secs - 2) * 1_000_000_000);
    }
    flows
}

fn check_exact_counts(what: &str, cfg: &Config) {
    let (out, ecn) = run_ecn(cfg);
    let ceps: Vec<u64> = ecn.iter().map(|(_, _, c)| c.expect("AccECN negotiated").cep).collect();
    let delivered: Vec<u64> = ecn.iter().map(|(_, d, _)| *d).collect();
    println!(
        "{what}: queue marks {}, drops {}; receivers' r.cep − 5 {ceps:?}; senders' delivered_ce {delivered:?}; \
         ecn reductions {:?}",
        out.queue.marks,
        out.queue.drops,
        out.flows.iter().map(|f| f.ecn_reductions).collect::<Vec<_>>()
    );
    assert!(ecn.iter().all(|(m, _, _)| *m == EcnMode::AccEcn));
    assert!(out.queue.marks > 100, "{what}: too few marks to test ({})", out.queue.marks);
    assert_eq!(ceps.iter().sum::<u64>(), out.queue.marks, "{what}: receivers' counters against the queue's marks");
    assert_eq!(delivered, ceps, "{what}: senders' delivered_ce against their receivers' counters");
    // The byte counters agree with the packet counter (full-size segments).
    for (_, _, c) in &ecn {
        let c = c.unwrap();
        assert_eq!(c.ceb, c.cep * MSS as u64, "{what}: CE bytes");
    }
}

// RFC 9768 §3.2: the receiver counts every CE-marked packet (r.cep) and
// byte (r.ceb), and the sender recovers the count from ACE and the option
// (Linux net/ipv4/tcp_input.c __tcp_accecn_process): both equal the marks
// the queue made.
// 100 Mbit/s, 20 ms, 2 BDP of buffer; RED step marking at 20 packets
// (ECT(0) Reno and DCTCP, ECT(1) Prague in one queue).
#[test]
fn counters_equal_the_queues_marks_through_red() {
    let flows = draining(10, vec![accecn_flow("reno", 20), accecn_flow("dctcp", 20), cc_flow("prague", 20)]);
    let cfg = step_marking(dumbbell(100, 20, 2.0, 10, flows), 20.0);
    check_exact_counts("red", &cfg);
}

// The same through CoDel with ECN (marks at dequeue), CUBIC and Prague
// (with the loss-based CUBIC CoDel marks rarely: a 30 s run).
#[test]
fn counters_equal_the_queues_marks_through_codel() {
    let flows = draining(30, vec![accecn_flow("cubic", 20), cc_flow("prague", 30)]);
    let cfg = with_qdisc(dumbbell(100, 20, 2.0, 30, flows), "codel", &[("ecn", Bool(true))]);
    check_exact_counts("codel", &cfg);
}

/// The parts of an output that describe the run (not the wall time),
/// compared through their printed form so that NaN (a metric an algorithm
/// does not have) equals NaN.
fn same_run(a: &Output, b: &Output) -> bool {
    format!("{:?}", a.flow_columns) == format!("{:?}", b.flow_columns)
        && format!("{:?}", a.queue_columns) == format!("{:?}", b.queue_columns)
        && a.events == b.events
        && format!("{:?}", a.flows) == format!("{:?}", b.flows)
        && format!("{:?}", a.queue) == format!("{:?}", b.queue)
}

// RFC 9768 fallback: offered to a receiver without AccECN, a connection
// uses RFC 3168 feedback (ECE until CWR) and the run is the same, bit for
// bit, as the classic ECN flow's (Reno), and as DCTCP's own echo (DCTCP).
#[test]
fn fallback_is_classic_ecn_bit_for_bit() {
    for cc in ["reno", "dctcp"] {
        let mut classic = flow(cc, 20);
        classic.ecn = true;
        let mut offered = classic.clone();
        offered.accecn = true;
        offered.receiver_accecn = false;
        let run_one = |f: FlowConfig| {
            let cfg = step_marking(dumbbell(100, 20, 2.0, 5, vec![f.clone(), f]), 20.0);
            run_ecn(&cfg)
        };
        let (a, ea) = run_one(classic);
        let (b, eb) = run_one(offered);
        assert!(ea.iter().chain(&eb).all(|(m, _, c)| *m == EcnMode::Rfc3168 && c.is_none()));
        assert!(a.queue.marks > 100, "{cc}: marks {}", a.queue.marks);
        assert!(same_run(&a, &b), "{cc}: the fallback run differs from the classic ECN run");
        println!("{cc}: fallback identical to classic ECN ({} marks, {} events)", b.queue.marks, b.events);
    }
}

// L4STeam tcp_prague.c (its TCP_CONG_NO_FALLBACK_RFC3168 flag and
// prague_init): Prague against a receiver without AccECN sends Not-ECT and
// runs as Reno, so a marking queue drops its packets and never marks them,
// and it moves the same packets as a paced Reno flow.
#[test]
fn prague_without_accecn_is_reno_without_ecn() {
    let mut prague = cc_flow("prague", 20);
    prague.receiver_accecn = false;
    let mut reno = flow("reno", 20);
    reno.pacing = true;
    let run_one = |f: FlowConfig| run_ecn(&step_marking(dumbbell(100, 20, 2.0, 5, vec![f]), 20.0));
    let (p, ep) = run_one(prague);
    let (r, _) = run_one(reno);
    assert_eq!(ep[0].0, EcnMode::Off);
    assert_eq!(p.queue.marks, 0);
    assert!(p.queue.drops > 0);
    let counters = |o: &Output| (o.flows[0].sent_pkts, o.flows[0].retrans_pkts, o.flows[0].goodput_bytes, o.events);
    assert_eq!(counters(&p), counters(&r), "prague-reno against paced Reno");
}
