//! Whole runs of XCP (Katabi, Handley, Rohrs, SIGCOMM 2002): XCP senders
//! through an XCP router at the bottleneck.

mod common;
use common::*;
use sim::{Config, QdiscConfig, XcpConfig};

fn xcp_link(mut cfg: Config) -> Config {
    cfg.bottleneck.qdisc = QdiscConfig::Xcp(XcpConfig::default());
    cfg
}

/// Mean bottleneck backlog (bytes) of the probe samples in (t0, t1] s.
fn mean_queue_bytes(out: &sim::Output, t0: f64, t1: f64) -> f64 {
    let t = queue_column(out, "t_ns");
    let q = queue_column(out, "backlog_bytes");
    let v: Vec<f64> = t.iter().zip(&q).filter(|(t, _)| **t / 1e9 > t0 && **t / 1e9 <= t1).map(|(_, q)| *q).collect();
    v.iter().sum::<f64>() / v.len() as f64
}

/// Per-interval bottleneck bytes of one flow, with the interval end times (s).
fn series(out: &sim::Output, flow: u32) -> (Vec<f64>, Vec<f64>) {
    let t = flow_column(out, "t_ns");
    let f = flow_column(out, "flow");
    let b = flow_column(out, "bottleneck_bytes");
    let mut ts = vec![];
    let mut bs = vec![];
    for i in 0..t.len() {
        if f[i] as u32 == flow {
            ts.push(t[i] / 1e9);
            bs.push(b[i]);
        }
    }
    (ts, bs)
}

/// First time after `from` (s) at which the flow's rate averaged over the
/// next `window` intervals of 100 ms is within `frac` of `target_bps`.
fn reach_time(out: &sim::Output, flow: u32, from: f64, target_bps: f64, frac: f64, window: usize) -> Option<f64> {
    let (t, b) = series(out, flow);
    for i in 0..t.len().saturating_sub(window) {
        if t[i] - 0.1 < from - 1e-9 {
            continue;
        }
        let rate = b[i..i + window].iter().sum::<f64>() * 8.0 / (0.1 * window as f64);
        if (rate - target_bps).abs() <= frac * target_bps {
            return Some(t[i] - 0.1 - from);
        }
    }
    None
}

/// §5 of the paper: near-full utilisation with an almost empty queue at high
/// bandwidth-delay products. One XCP flow, 100 ms, buffer one BDP, measured
/// over 5–30 s. Bound: utilisation ≥ 95 %, mean queue < 0.05 BDP, no drops
/// (measured: 1.0000 and 0.003 BDP at 100 Mbit/s, 1.0000 and 0.001 BDP at 200).
#[test]
fn full_link_with_near_empty_queue() {
    for rate in [100u64, 200] {
        let out = run(&xcp_link(dumbbell(rate, 100, 1.0, 30, vec![flow("xcp", 100)])));
        let u = utilisation(&out, rate, 5.0, 30.0);
        let bdp = rate as f64 * 1e6 * 0.1 / 8.0;
        let q = mean_queue_bytes(&out, 5.0, 30.0) / bdp;
        println!("xcp {rate} Mbit/s: utilisation {u:.4}, mean queue {q:.4} BDP, drops {}", out.queue.drops);
        assert!(u >= 0.95, "{rate}: utilisation {u:.4}");
        assert!(q < 0.05, "{rate}: mean queue {q:.4} BDP");
        assert_eq!(out.queue.drops, 0);
    }
}

/// The same link with the plain tail-drop queue: the XCP sender gets no
/// feedback and runs Reno, which fills the buffer and drops (the contrast
/// that makes the bound above meaningful). Measured: mean queue 0.168 BDP,
/// 1671 drops.
#[test]
fn without_the_router_xcp_is_reno() {
    let out = run(&dumbbell(100, 100, 1.0, 30, vec![flow("xcp", 100)]));
    let q = mean_queue_bytes(&out, 5.0, 30.0) / (100e6 * 0.1 / 8.0);
    println!("xcp sender over tail drop: mean queue {q:.3} BDP, drops {}", out.queue.drops);
    assert!(q > 0.1 && out.queue.drops > 0);
}

/// §3.5: the fairness controller equalises throughput, not windows, so flows
/// of different RTTs share equally (unlike TCP, whose share falls with RTT).
/// Three flows of 40, 100 and 200 ms on 100 Mbit/s, over 30–60 s.
/// Measured Jain index 1.0000.
#[test]
fn jain_among_different_rtts() {
    let out = run(&xcp_link(dumbbell(100, 100, 1.0, 60, vec![flow("xcp", 40), flow("xcp", 100), flow("xcp", 200)])));
    let b = bytes_between(&out, 30.0, 60.0);
    let j = jain(&b.iter().map(|&x| x as f64).collect::<Vec<_>>());
    println!("xcp 40/100/200 ms: Jain {j:.4}, bytes {b:?}");
    assert!(j >= 0.99, "Jain {j:.4}");
}

/// D4: a second flow joins at 40 s (50 Mbit/s, 100 ms, 1 BDP buffer); time
/// until its rate, averaged over 1 s, is within 10 % of the fair share
/// (25 Mbit/s). Measured: xcp 1.5 s (15 RTTs), reno 52 s (520 RTTs),
/// highspeed 136 s (1361 RTTs).
#[test]
fn d4_late_flow_converges_in_tens_of_rtts() {
    let mut rtts = vec![];
    for cc in ["xcp", "highspeed", "reno"] {
        let mut late = flow(cc, 100);
        late.start_ns = 40_000_000_000;
        let mut cfg = dumbbell(50, 100, 1.0, 240, vec![flow(cc, 100), late]);
        if cc == "xcp" {
            cfg = xcp_link(cfg);
        }
        let out = run(&cfg);
        let r = reach_time(&out, 1, 40.0, 25e6, 0.1, 10).map_or(f64::INFINITY, |s| s / 0.1);
        println!("{cc}: late flow within 10 % of its fair share after {r:.0} RTTs");
        rtts.push(r);
    }
    assert!(rtts[0] <= 50.0, "xcp: {} RTTs", rtts[0]);
    assert!(rtts[1] >= 200.0 && rtts[2] >= 200.0, "highspeed {} reno {} RTTs", rtts[1], rtts[2]);
    assert!(rtts[0] * 10.0 <= rtts[1].min(rtts[2]));
}

/// D5: when one of two flows stops at 40 s, the other takes the freed
/// bandwidth within a few RTTs: its 100 ms rate is within 10 % of the link
/// (50 Mbit/s, 100 ms). Measured 0.5 s (5 RTTs).
#[test]
fn d5_freed_bandwidth_taken_within_a_few_rtts() {
    let mut first = flow("xcp", 100);
    first.stop_ns = Some(40_000_000_000);
    let out = run(&xcp_link(dumbbell(50, 100, 1.0, 60, vec![first, flow("xcp", 100)])));
    let r = reach_time(&out, 1, 40.0, 50e6, 0.1, 1).expect("never took the link") / 0.1;
    println!("xcp: freed bandwidth taken after {r:.0} RTTs");
    assert!(r <= 10.0, "{r} RTTs");
}

/// Same seed, same configuration: identical traces.
#[test]
fn deterministic() {
    let cfg = xcp_link(dumbbell(100, 100, 1.0, 10, vec![flow("xcp", 40), flow("xcp", 200)]));
    let (a, b) = (run(&cfg), run(&cfg));
    assert_eq!(flow_column(&a, "cwnd_pkts"), flow_column(&b, "cwnd_pkts"));
    assert_eq!(queue_column(&a, "backlog_bytes"), queue_column(&b, "backlog_bytes"));
    assert_eq!(a.events, b.events);
}

/// XCP and Reno through the XCP port (the paper's TCP-friendly set-up,
/// §5.5): separate queues weighted by the classes' numbers of flows. The
/// XCP aggregate gets its flows' share of the link, the link stays full, and
/// the XCP flows' packets see an empty queue while Reno keeps its own queue
/// standing. (On one shared FIFO Reno's standing queue made φ negative and
/// squeezed XCP to 0.06 % of the bytes.)
#[test]
fn mixed_with_reno_gets_its_flows_share() {
    for (n_xcp, n_reno) in [(1usize, 1usize), (3, 1), (1, 3)] {
        let mut flows = vec![flow("xcp", 100); n_xcp];
        flows.extend(vec![flow("reno", 100); n_reno]);
        let out = run(&xcp_link(dumbbell(100, 100, 1.0, 60, flows)));
        let u = utilisation(&out, 100, 20.0, 60.0);
        let b = bytes_between(&out, 20.0, 60.0);
        let xcp: u64 = b[..n_xcp].iter().sum();
        let share = xcp as f64 / b.iter().sum::<u64>() as f64;
        let expected = n_xcp as f64 / (n_xcp + n_reno) as f64;
        let p50 = |i: usize| out.flows[i].rtt.quantile(0.5).unwrap() / 1e3;
        println!(
            "{n_xcp} xcp + {n_reno} reno: utilisation {u:.4}, xcp share {share:.3} (flows' share {expected:.3}), \
             rtt p50 xcp {:.1} ms, reno {:.1} ms",
            p50(0),
            p50(n_xcp)
        );
        assert!(u >= 0.95, "utilisation {u:.4}");
        assert!((share - expected).abs() <= 0.1, "XCP share {share:.3} vs {expected:.3}");
        assert!(p50(0) < 105.0, "XCP packets wait in their own, near-empty queue");
        assert!(p50(n_xcp) > p50(0) + 10.0, "Reno keeps its own queue standing");
    }
}

/// A parking lot of three XCP hops of `rates` Mbit/s, 10 ms each way, each
/// buffer one BDP of the long flow: one long flow across the three (RTT
/// 60 ms) and one cross flow per hop (20 ms), as `ccarena` builds
/// `[topology] kind = "parking_lot"` (links 0, 2, 4 the hops, each followed
/// by its reverse twin for the ACKs).
fn xcp_lot(rates: [u64; 3], secs: u64) -> Config {
    let hop = |mbps: u64, xcp: bool| {
        let rate = mbps * 1_000_000;
        sim::LinkConfig {
            rate_bps: rate,
            delay_ns: 10_000_000,
            limit: sim::QueueLimit::Packets((rate as f64 * 0.06 / 8.0 / 1500.0).round() as u64),
            loss: 0.0,
            loss_model: None,
            qdisc: if xcp { QdiscConfig::Xcp(XcpConfig::default()) } else { Default::default() },
            model: Default::default(),
        }
    };
    let mut cfg =
        dumbbell(rates[0], 60, 1.0, secs, vec![flow("xcp", 60), flow("xcp", 20), flow("xcp", 20), flow("xcp", 20)]);
    cfg.bottleneck = hop(rates[0], true);
    cfg.reverse = hop(rates[0], false);
    cfg.network.links = vec![hop(rates[1], true), hop(rates[1], false), hop(rates[2], true), hop(rates[2], false)];
    let route = |data: Vec<u32>, ack: Vec<u32>| sim::Route { measure: data[0], data, ack };
    cfg.network.routes = vec![
        route(vec![0, 2, 4], vec![5, 3, 1]),
        route(vec![0], vec![1]),
        route(vec![2], vec![3]),
        route(vec![4], vec![5]),
    ];
    cfg
}

/// XCP on every hop of a 100/60/100 Mbit/s parking lot, rates over 15–30 s
/// of 30 s. Max-min would give the long flow and hop 2's cross flow 30
/// each and the cross flows of hops 1 and 3 70 each. XCP is not max-min in
/// a network (Low, Andrew, Wydrowski, INFOCOM 2005): hop 1 sits upstream
/// of the long flow's bottleneck, sees only the sender's request, and keeps
/// shuffling (Eq. 2: h = 0.1·y − φ), half of the increase h + φ = 0.1·y
/// going to the long flow, which hop 2 refuses. Its cross flow settles where
/// the other half equals what shuffling takes from it (per unit time, in
/// Mbit/s): with y = 30 + x, 0.05·y = (0.1·y − 0.4·(100 − y))·x/y, i.e.
/// 0.45·x² − 28·x − 45 = 0, x = 63.8 (link 93.8 % used). Hop 3 sees
/// the header hop 2 cut and gives the refused increase to its cross flow
/// (the residue accounting of ns-2's xcpq.cc, see qdisc/xcp.rs).
/// Measured: long 30.02, hop-2 cross 29.96, hop 1 63.74, hop 3 67.68 (63.79
/// when hop 3 charged its whole offer, as hop 1 must).
#[test]
fn parking_lot_upstream_hop_settles_at_xcps_equilibrium_downstream_near_max_min() {
    let out = run(&xcp_lot([100, 60, 100], 30));
    let mbps: Vec<f64> = bytes_between(&out, 15.0, 30.0).iter().map(|&b| b as f64 * 8.0 / 15.0 / 1e6).collect();
    println!("xcp lot 100/60/100: long {:.2}, cross {:.2} / {:.2} / {:.2} Mbit/s", mbps[0], mbps[1], mbps[2], mbps[3]);
    let within = |got: f64, want: f64, frac: f64| (got - want).abs() <= frac * want;
    assert!(within(mbps[0], 30.0, 0.02) && within(mbps[2], 30.0, 0.02), "hop 2 shared {:.2} / {:.2}", mbps[0], mbps[2]);
    assert!(within(mbps[1], 63.79, 0.02), "hop 1 cross {:.2}, XCP's equilibrium 63.79", mbps[1]);
    assert!(within(mbps[3], 70.0, 0.05), "hop 3 cross {:.2}, max-min 70", mbps[3]);
}
