//! The packet log (crates/sim/src/packet_log.rs): it changes nothing else
//! in a run, its rows agree with the links' own counters, it keeps to its
//! window, and it allocates nothing per packet.

mod common;
use common::*;
use sim::packet_log::{PacketEvent as E, FLAG_ACK, FLAG_RETRANS};
use sim::{Column, Config, Direction, Output, PacketLog, QdiscConfig, Simulator, UdpPattern, UdpSource};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

// Allocations counted per thread, as the tests of this file run in parallel.
struct Counting;
thread_local!(static ALLOCS: Cell<u64> = const { Cell::new(0) });

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Two flows and a UDP source through RED with ECN, random loss on the
/// bottleneck: every event and drop reason occurs.
fn busy(secs: u64) -> Config {
    busy_with(secs, "red")
}

/// As [`busy`] with another discipline, ECN on (the first flow negotiates it).
fn busy_with(secs: u64, qdisc: &str) -> Config {
    let mut flows = vec![flow("cubic", 40), flow("reno", 60)];
    flows[0].ecn = true;
    let mut cfg = dumbbell(50, 40, 1.0, secs, flows);
    cfg.bottleneck.loss = 2e-4;
    let params = [("ecn".to_string(), sim::qdisc::ParamValue::Bool(true))];
    cfg.bottleneck.qdisc = QdiscConfig::from_params(qdisc, &params).unwrap();
    cfg.udp_sources.push(UdpSource {
        name: "cbr".into(),
        pattern: UdpPattern::Cbr,
        rate_bps: 2_000_000,
        packet_bytes: 1000,
        direction: Direction::Forward,
        start_ns: 0,
        stop_ns: None,
        link: None,
    });
    cfg
}

/// Runs `cfg` with the log on over [from, to) ns.
fn logged(cfg: &Config, from_ns: u64, to_ns: u64) -> Output {
    let mut s = Simulator::new(cfg).unwrap();
    s.set_packet_log(from_ns, to_ns, usize::MAX).unwrap();
    s.run();
    s.finish(0.0).unwrap()
}

fn column_bytes(cols: &[(&'static str, Column)]) -> Vec<u8> {
    let mut v = Vec::new();
    for (name, c) in cols {
        v.extend(name.bytes());
        match c {
            Column::U64(x) => x.iter().for_each(|y| v.extend(y.to_le_bytes())),
            Column::U32(x) => x.iter().for_each(|y| v.extend(y.to_le_bytes())),
            Column::F64(x) => x.iter().for_each(|y| v.extend(y.to_bits().to_le_bytes())),
        }
    }
    v
}

fn count(log: &PacketLog, pred: impl Fn(usize) -> bool) -> u64 {
    (0..log.len()).filter(|&i| pred(i)).count() as u64
}

#[test]
fn the_log_changes_nothing_else() {
    let cfg = busy(5);
    let off = run(&cfg);
    let on = logged(&cfg, 1_000_000_000, 3_000_000_000);
    assert!(off.packets.is_empty());
    assert!(on.packets.len() > 1000, "{} rows", on.packets.len());
    assert_eq!(column_bytes(&off.flow_columns), column_bytes(&on.flow_columns));
    assert_eq!(column_bytes(&off.queue_columns), column_bytes(&on.queue_columns));
    assert_eq!(format!("{:?}", off.flows), format!("{:?}", on.flows));
    assert_eq!(format!("{:?}", off.queue), format!("{:?}", on.queue));
    assert_eq!(off.conservation, on.conservation);
    // The events that open and close the window are not counted.
    assert_eq!(off.events, on.events);
}

// Marks at enqueue (RED, PIE) and at dequeue (CoDel, FQ-CoDel); AQM drops
// on arrival (RED, PIE) and at the head (CoDel).
#[test]
fn a_whole_run_log_agrees_with_the_link_counters() {
    for qdisc in ["red", "pie", "codel", "fq_codel"] {
        agrees_with_the_link_counters(qdisc);
    }
}

fn agrees_with_the_link_counters(qdisc: &str) {
    let cfg = busy_with(10, qdisc);
    let out = logged(&cfg, 0, cfg.duration_ns + 1);
    let (log, q) = (&out.packets, &out.queue);
    let at = |link: u8, ev: E| move |i: usize| log.link[i] == link && log.event[i] == ev as u8;
    assert_eq!(count(log, at(0, E::Enqueue)), q.arrivals);
    assert_eq!(count(log, at(0, E::Drop)), q.drops);
    assert_eq!(count(log, at(1, E::Drop)), q.reverse_drops);
    assert_eq!(count(log, at(0, E::Mark)), q.marks);
    let reason = |r: u8| count(log, |i| log.link[i] == 0 && log.event[i] == E::Drop as u8 && log.reason[i] == r);
    assert_eq!(reason(3), q.random_drops);
    assert_eq!(reason(2), q.aqm_drops);
    assert_eq!(reason(1), q.drops - q.random_drops - q.aqm_drops);
    // Every reason occurs; PIE marks nothing in this run.
    let (random, aqm, marks) = (q.random_drops, q.aqm_drops, q.marks);
    assert!(random > 0 && aqm > 0 && (marks > 0 || qdisc == "pie"), "{qdisc}: {random} {aqm} {marks}");
    // Every transmission started was counted when it ended, but the last.
    let started = count(log, at(0, E::Dequeue));
    assert!(started == q.tx_packets || started == q.tx_packets + 1, "{started} vs {}", q.tx_packets);
    // Per flow: retransmissions that reached the bottleneck, at most those sent.
    for (f, st) in out.flows.iter().enumerate() {
        let rtx = count(log, |i| {
            log.owner[i] == 0
                && log.id[i] == f as u32
                && log.event[i] == E::Enqueue as u8
                && log.link[i] == 0
                && log.flags[i] & FLAG_RETRANS != 0
        });
        assert!(rtx > 0 && rtx <= st.retrans_pkts, "flow {f}: {rtx} of {}", st.retrans_pkts);
    }
    // Packets are created, delivered or dropped, or still in the network.
    let delivered = count(log, |i| log.event[i] == E::Deliver as u8);
    let dropped = count(log, |i| log.event[i] == E::Drop as u8);
    let c = out.conservation;
    assert_eq!(delivered, c.delivered);
    assert_eq!(dropped, c.dropped);
    // The UDP datagrams are delivered as their transmission ends.
    let udp = |ev: E| count(log, |i| log.owner[i] == 2 && log.event[i] == ev as u8);
    assert!(udp(E::Deliver) > 0 && udp(E::Dequeue) - udp(E::Deliver) <= 1);
    // ACKs cross the reverse link only.
    assert!((0..log.len()).all(|i| (log.flags[i] & FLAG_ACK != 0) == (log.link[i] == 1)));
}

#[test]
fn rows_keep_to_the_window_in_time_order() {
    let cfg = busy(3);
    let (from, to) = (1_000_000_000, 1_250_000_000);
    let out = logged(&cfg, from, to);
    let t = &out.packets.time_ns;
    assert!(!t.is_empty());
    assert!(t.iter().all(|&x| x >= from && x < to));
    assert!(t.windows(2).all(|w| w[0] <= w[1]));
    let mut s = Simulator::new(&cfg).unwrap();
    assert!(s.set_packet_log(to, from, 1).is_err());
}

fn allocations(secs: u64) -> (u64, usize) {
    let cfg = busy(secs);
    let before = ALLOCS.with(|c| c.get());
    let mut s = Simulator::new(&cfg).unwrap();
    s.set_packet_log(0, cfg.duration_ns, 1 << 14).unwrap();
    let mut rows = 0;
    loop {
        let done = s.run_events(u64::MAX);
        rows += s.packet_log().len();
        s.clear_packet_log();
        if done {
            break;
        }
    }
    drop(s.finish(0.0).unwrap());
    (ALLOCS.with(|c| c.get()) - before, rows)
}

#[test]
fn logging_allocates_nothing_per_packet() {
    let (short, r_short) = allocations(5);
    let (long, r_long) = allocations(30);
    println!("{short} allocations for {r_short} rows, {long} for {r_long}");
    assert!(r_long > 4 * r_short, "{r_long} vs {r_short} rows");
    assert!(long < short + 64, "{short} allocations for {r_short} rows, {long} for {r_long}");
}
