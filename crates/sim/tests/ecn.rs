//! ECN end to end (RFC 3168) and DCTCP (RFC 8257) on the dumbbell: senders
//! that answer CE marks instead of losses, and DCTCP holding a step-marking
//! queue near its threshold at full utilisation.

mod common;

use common::*;
use sim::qdisc::ParamValue::Bool;
use sim::{Output, QueueLimit};

/// Queue length in 1500-byte packets at the given quantile of queueing delay.
fn queue_pkts(out: &Output, rate_mbps: u64, q: f64) -> f64 {
    out.queue.delay.quantile(q).unwrap() / 1e9 * rate_mbps as f64 * 1e6 / 8.0 / 1500.0
}

fn sum(out: &Output, f: impl Fn(&sim::FlowStats) -> u64) -> u64 {
    out.flows.iter().map(f).sum()
}

/// Two flows of `cc` with ECN through a step-marking queue at K = 30
/// packets: 1 Gbit/s, 1 ms RTT (BDP 83 packets), a 10-BDP buffer, 5 s.
fn datacenter(cc: &str) -> Output {
    let mut f = flow(cc, 1);
    f.ecn = true;
    let mut cfg = dumbbell(1000, 1, 10.0, 5, vec![f; 2]);
    cfg.interval_ns = 10_000_000;
    run(&step_marking(cfg, K))
}

const K: f64 = 30.0;

// RFC 8257 §3 / Alizadeh et al. 2010 §3.3: DCTCP keeps the queue around K
// without drops and without idling the link; α settles near √(2/W*), W*
// the window at which the queue reaches K ((C·RTT + K)/N packets per flow).
// Reno with the same ECN marks halves instead and leaves the link idle.
#[test]
fn dctcp_holds_a_step_marking_queue_near_k() {
    let out = datacenter("dctcp");
    let u = utilisation(&out, 1000, 1.0, 5.0);
    let (p10, p50, p90) = (queue_pkts(&out, 1000, 0.1), queue_pkts(&out, 1000, 0.5), queue_pkts(&out, 1000, 0.9));
    let alpha = flow_column(&out, "cc_0"); // DCTCP's one metric, alpha
    let t = flow_column(&out, "t_ns");
    let mut late: Vec<f64> = alpha.iter().zip(&t).filter(|(_, &t)| t > 1e9).map(|(&a, _)| a).collect();
    late.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let a50 = late[late.len() / 2];
    let w_star = (83.3 + K) / 2.0;
    let predicted = (2.0 / w_star).sqrt();
    let reno = datacenter("reno");
    let ur = utilisation(&reno, 1000, 1.0, 5.0);
    println!(
        "dctcp: utilisation {u:.4}, queue p10/p50/p90 {p10:.1}/{p50:.1}/{p90:.1} pkts (K {K}), marks {}, drops {}, \
         ecn reductions {}, retransmissions {}, median alpha {a50:.3} (sqrt(2/W*) = {predicted:.3}); \
         reno+ecn: utilisation {ur:.4}, queue p50 {:.1} pkts",
        out.queue.marks,
        out.queue.drops,
        sum(&out, |f| f.ecn_reductions),
        sum(&out, |f| f.retrans_pkts),
        queue_pkts(&reno, 1000, 0.5),
    );
    assert!(u >= 0.99, "utilisation {u}");
    assert!((0.5 * K..=1.5 * K).contains(&p50), "median queue {p50} packets");
    assert!(p90 <= 2.0 * K && p10 > 0.0, "queue p10 {p10}, p90 {p90}");
    assert_eq!(out.queue.drops, 0);
    assert_eq!(sum(&out, |f| f.retrans_pkts), 0);
    assert!(sum(&out, |f| f.ecn_reductions) > 100);
    assert!((0.5 * predicted..=2.0 * predicted).contains(&a50), "alpha {a50} vs {predicted}");
    assert!(ur < u - 0.03, "reno {ur} vs dctcp {u}");
}

// RFC 3168 end to end: with ECN the same CUBIC flows through CoDel lose
// nothing to the discipline and retransmit (almost) nothing, while the queue
// is held at the same target and the link stays as busy; without ECN CoDel
// drops and the senders retransmit.
#[test]
fn ecn_replaces_losses_with_marks() {
    let build = |ecn: bool| {
        let mut f = flow("cubic", 50);
        f.ecn = ecn;
        let mut cfg = dumbbell(100, 50, 2.0, 30, vec![f; 8]);
        cfg.bottleneck.limit = QueueLimit::Packets(2000);
        with_qdisc(cfg, "codel", &[("ecn", Bool(true))])
    };
    let on = run(&build(true));
    let off = run(&build(false));
    let (u_on, u_off) = (utilisation(&on, 100, 5.0, 30.0), utilisation(&off, 100, 5.0, 30.0));
    let d_on = on.queue.delay.quantile(0.5).unwrap() / 1e6;
    let d_off = off.queue.delay.quantile(0.5).unwrap() / 1e6;
    let r_on = sum(&on, |f| f.retrans_pkts);
    let r_off = sum(&off, |f| f.retrans_pkts);
    println!(
        "codel+ecn: marks {} drops {} retrans {r_on} ecn reductions {} fast recoveries {} utilisation {u_on:.3} median delay {d_on:.2} ms; \
         without ecn: drops {} retrans {r_off} utilisation {u_off:.3} median delay {d_off:.2} ms",
        on.queue.marks,
        on.queue.drops,
        sum(&on, |f| f.ecn_reductions),
        sum(&on, |f| f.fast_recoveries),
        off.queue.drops,
    );
    assert_eq!(on.queue.aqm_drops, 0);
    assert!(on.queue.marks > 0 && sum(&on, |f| f.ecn_reductions) > 0);
    assert!(off.queue.aqm_drops > 0 && r_off > 0);
    assert!(r_on * 10 <= r_off, "retransmissions {r_on} with ECN vs {r_off} without");
    assert!(u_on >= 0.9 && u_on >= u_off - 0.02, "utilisation {u_on} vs {u_off}");
    assert!((2.0..=10.0).contains(&d_on), "median queue delay {d_on} ms");
}
