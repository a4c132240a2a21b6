//! The hot path allocates nothing per packet: a run six times longer (several
//! times the packets) makes about the same number of heap allocations, all
//! of them set-up and amortised growth of buffers.

mod common;
use common::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations(secs: u64, qdisc: &str) -> (u64, u64) {
    let mut cfg = dumbbell(100, 40, 1.0, secs, vec![flow("cubic", 40), flow("reno", 60)]);
    cfg.bottleneck.loss = 1e-4;
    cfg.bottleneck.qdisc = sim::QdiscConfig::from_params(qdisc, &[]).unwrap();
    let before = ALLOCS.load(Ordering::Relaxed);
    let out = run(&cfg);
    let n = ALLOCS.load(Ordering::Relaxed) - before;
    (n, out.bottleneck_data_packets)
}

// One test, not one per discipline: the counter is global and tests run
// on parallel threads.
#[test]
fn allocations_do_not_grow_with_packets() {
    for qdisc in ["droptail", "red", "codel", "pie", "fq_codel"] {
        check(qdisc);
    }
}

fn check(qdisc: &str) {
    let (short, p_short) = allocations(10, qdisc);
    let (long, p_long) = allocations(60, qdisc);
    println!("{qdisc}: {short} allocations for {p_short} packets, {long} for {p_long}");
    assert!(p_long > 3 * p_short, "{p_long} vs {p_short} packets");
    // Set-up, trace buffers (reserved up front) and a few doublings of
    // queues and scoreboards; nothing proportional to the packet count.
    assert!(long < short + 64, "{short} allocations for {p_short} packets, {long} for {p_long}");
    assert!(long < 2_000, "{long} allocations");
}
