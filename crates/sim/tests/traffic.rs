//! Background traffic in whole simulations: pooled short flows, reverse
//! traffic, UDP load and determinism.

mod common;
use common::*;
use sim::{Arrivals, Column, Direction, RttDist, SizeDist, TcpSource, UdpPattern, UdpSource};

fn web(arrivals: Arrivals, direction: Direction) -> TcpSource {
    TcpSource {
        name: "web".into(),
        arrivals,
        sizes: SizeDist::surge(),
        rtt: RttDist::ExponentialOneWay { mean_one_way_ns: 33_000_000, min_rtt_ns: 0 },
        direction,
        cc: "reno".into(),
        params: vec![],
        mss: MSS,
        header_bytes: HDR,
        init_cwnd: 10,
        pacing: false,
        ecn: false,
        start_ns: 0,
        stop_ns: None,
        route: None,
        access: None,
        tso: None,
    }
}

fn queue_col(out: &sim::Output, name: &str) -> Vec<u64> {
    match &out.queue_columns.iter().find(|(n, _)| *n == name).unwrap().1 {
        Column::U64(v) => v.clone(),
        _ => panic!("{name} is not u64"),
    }
}

/// Thousands of short flows reuse a bounded pool of slots; every transfer
/// that started early enough completes with exactly its size delivered.
#[test]
fn short_flows_reuse_pooled_slots() {
    let mut cfg = dumbbell(100, 50, 1.0, 60, vec![flow("cubic", 50)]);
    cfg.tcp_sources.push(web(Arrivals::Poisson { rate: 40.0 }, Direction::Forward));
    let out = run(&cfg);
    let n = out.transfers.len();
    assert!(n > 2000, "{n} transfers");
    assert!(out.peak_flow_slots < n / 10, "peak {} slots for {n} transfers", out.peak_flow_slots);
    let early: Vec<_> = out.transfers.iter().filter(|t| t.start_ns < 40_000_000_000).collect();
    let done = early.iter().filter(|t| t.fct_ns.is_some()).count();
    assert_eq!(done, early.len(), "transfers started before 40 s all finish by 60 s");
    for t in &early {
        assert_eq!(t.delivered_bytes, t.size_bytes);
        // At least one RTT plus the transfer at line rate.
        let floor = t.rtt_ns as f64 + t.size_bytes as f64 * 8.0 / 100e6 * 1e9;
        assert!(t.fct_ns.unwrap() as f64 >= floor * 0.99, "{t:?}");
    }
    let s = &out.sources[0];
    assert_eq!(s.started as usize, n);
    assert!(out.conservation.holds());
    let delivered: u64 = out.transfers.iter().map(|t| t.delivered_bytes).sum();
    assert_eq!(delivered, s.delivered_bytes);
}

/// Closed-loop sessions alternate a transfer and an idle period.
#[test]
fn sessions_alternate_transfers_and_idle_time() {
    let mut cfg = dumbbell(250, 40, 1.0, 120, vec![]);
    let mut src = web(Arrivals::Sessions { sessions: 100, off_mean_ns: 2_000_000_000 }, Direction::Forward);
    src.sizes = SizeDist::Pareto { min: 1448.0 * 100.0 * 0.2 / 1.2, shape: 1.2 };
    cfg.tcp_sources.push(src);
    let out = run(&cfg);
    let mut gaps = Vec::new();
    for s in 0..100u32 {
        let mut t: Vec<_> = out.transfers.iter().filter(|r| r.session == Some(s)).collect();
        t.sort_by_key(|r| r.start_ns);
        for w in t.windows(2) {
            let end = w[0].start_ns + w[0].fct_ns.expect("a later transfer means this one finished");
            assert!(w[1].start_ns >= end, "a session never overlaps its transfers");
            gaps.push((w[1].start_ns - end) as f64 / 1e9);
        }
    }
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    // ~5000 exponential gaps: standard error 1.4 %.
    assert!(gaps.len() > 3000, "{} gaps", gaps.len());
    assert!((mean / 2.0 - 1.0).abs() < 0.05, "mean idle time {mean:.3} s over {} gaps", gaps.len());
}

/// A saturating reverse bulk flow queues the forward flow's ACKs behind its
/// data (ACK compression) and costs the forward flow utilisation.
#[test]
fn reverse_bulk_flow_queues_acks() {
    let mut base = dumbbell(20, 40, 1.0, 60, vec![flow("reno", 40)]);
    base.reverse.limit = base.bottleneck.limit; // the same buffer both ways
    let alone = run(&base);
    let mut both = base.clone();
    let mut rev = flow("reno", 40);
    rev.reverse = true;
    both.flows.push(rev);
    let out = run(&both);
    let util = |o: &sim::Output| bytes_between(o, 10.0, 60.0)[0] as f64 * 8.0 / (20e6 * 50.0);
    let (u_alone, u_both) = (util(&alone), util(&out));
    let ack_delay_p50_ms = out.queue.reverse_delay.quantile(0.5).unwrap() / 1e6;
    let alone_ack_delay = alone.queue.reverse_delay.quantile(0.99).unwrap();
    println!("forward utilisation {u_alone:.3} alone, {u_both:.3} with reverse traffic; ACK queueing p50 {ack_delay_p50_ms:.2} ms");
    assert_eq!(alone_ack_delay, 0.0, "without reverse traffic ACKs never wait");
    assert!(ack_delay_p50_ms > 1.0);
    assert!(queue_col(&out, "reverse_backlog_pkts").iter().any(|&b| b > 10));
    assert!(u_both < u_alone - 0.02, "{u_both} vs {u_alone}");
    // The reverse flow's data are counted at the reverse link.
    assert!(out.flows[1].bottleneck_bytes > 0);
}

/// CBR load is exact; Poisson UDP load is within its sampling error.
#[test]
fn udp_sources_offer_their_rate() {
    let mut cfg = dumbbell(100, 20, 1.0, 100, vec![]);
    for pattern in [UdpPattern::Cbr, UdpPattern::Poisson] {
        cfg.udp_sources.push(UdpSource {
            name: format!("{pattern:?}"),
            pattern,
            rate_bps: 20_000_000,
            packet_bytes: 1500,
            direction: Direction::Forward,
            start_ns: 0,
            stop_ns: None,
            link: None,
        });
    }
    let out = run(&cfg);
    for s in &out.sources {
        let offered = s.offered_bytes as f64 * 8.0 / 100.0;
        println!("{}: offered {offered:.0} bit/s, delivered {}", s.name, s.delivered_bytes);
        assert!((offered / 20e6 - 1.0).abs() < 0.01, "{}: {offered}", s.name);
        // Below capacity nothing is lost: all but the packets still queued arrive.
        assert!(
            s.offered_bytes - s.delivered_bytes <= 10 * 1500,
            "{}: {} of {} bytes",
            s.name,
            s.delivered_bytes,
            s.offered_bytes
        );
    }
    assert_eq!(out.queue.drops, 0);
    assert!(out.queue.tx_bytes > 0);
}

#[test]
fn background_traffic_is_deterministic() {
    let mut cfg = dumbbell(50, 40, 1.0, 20, vec![flow("cubic", 40)]);
    cfg.tcp_sources.push(web(Arrivals::Poisson { rate: 10.0 }, Direction::Both));
    cfg.tcp_sources.push(web(Arrivals::Sessions { sessions: 20, off_mean_ns: 1_000_000_000 }, Direction::Forward));
    let a = run(&cfg);
    let b = run(&cfg);
    let key = |o: &sim::Output| o.transfers.iter().map(|t| (t.size_bytes, t.start_ns, t.fct_ns)).collect::<Vec<_>>();
    assert_eq!(key(&a), key(&b));
    assert_eq!(a.events, b.events);
    cfg.seed = 2;
    assert_ne!(key(&a), key(&run(&cfg)));
    // A new source does not change the draws of the existing ones.
    let mut more = cfg.clone();
    more.seed = 1;
    let first_sizes = |o: &sim::Output| {
        o.transfers.iter().filter(|t| t.source == 0).map(|t| t.size_bytes).take(50).collect::<Vec<_>>()
    };
    more.udp_sources.push(UdpSource {
        name: "cbr".into(),
        pattern: UdpPattern::Cbr,
        rate_bps: 1_000_000,
        packet_bytes: 1000,
        direction: Direction::Forward,
        start_ns: 0,
        stop_ns: None,
        link: None,
    });
    assert_eq!(first_sizes(&a), first_sizes(&run(&more)));
}
