//! Shared helpers for BBR v3's unit tests.

use super::*;
pub(crate) use crate::bbr::tests::{bw_fixed, bw_mbps, sock, MSS};
use crate::{CongestionControl, RateSample, Sock};

pub(crate) fn started() -> (Bbr3, Sock) {
    let mut b = Bbr3::new(Bbr3Config::default());
    let mut tp = sock();
    b.init(&mut tp);
    (b, tp)
}

/// A valid round-starting sample of `mbps` (1000 packets), RTT `rtt_us`.
pub(crate) fn sample_for(b: &Bbr3, tp: &Sock, mbps: f64, rtt_us: i64) -> RateSample {
    let pps = mbps * 1e6 / 8.0 / MSS as f64;
    RateSample {
        prior_delivered: b.next_rtt_delivered,
        delivered: 1000,
        interval_us: (1000.0 / pps * 1e6).round() as i64,
        rtt_us,
        acked_sacked: 1,
        prior_in_flight: tp.packets_in_flight(),
        tx_in_flight: tp.packets_in_flight(),
        ..RateSample::default()
    }
}

pub(crate) fn ack(b: &mut Bbr3, tp: &mut Sock, rs: RateSample) {
    tp.now_us += 1_000;
    ack_at(b, tp, rs);
}

pub(crate) fn ack_at(b: &mut Bbr3, tp: &mut Sock, rs: RateSample) {
    tp.now_ns = tp.now_us.saturating_mul(1_000);
    tp.delivered += rs.acked_sacked as u64;
    if rs.rtt_us > 0 {
        tp.srtt_us = rs.rtt_us as u64;
    }
    assert!(b.cong_control(tp, &rs));
}

pub(crate) fn round_ack(b: &mut Bbr3, tp: &mut Sock, mbps: f64, rtt_us: i64) {
    let rs = sample_for(b, tp, mbps, rtt_us);
    ack(b, tp, rs);
}

pub(crate) fn in_drain(mbps: f64, rtt_us: i64) -> (Bbr3, Sock) {
    let (mut b, mut tp) = started();
    tp.packets_out = 1000;
    for _ in 0..10 {
        round_ack(&mut b, &mut tp, mbps, rtt_us);
        if b.mode() == Mode::Drain {
            return (b, tp);
        }
    }
    panic!("no Drain after 10 flat rounds");
}

pub(crate) fn in_probe_bw(mbps: f64, rtt_us: i64) -> (Bbr3, Sock) {
    let (mut b, mut tp) = in_drain(mbps, rtt_us);
    tp.packets_out = 30;
    round_ack(&mut b, &mut tp, mbps, rtt_us);
    assert_eq!(b.mode(), Mode::ProbeBw);
    (b, tp)
}

#[test]
fn metrics_export_bounds_and_phase() {
    let (mut b, _) = in_probe_bw(10.0, 40_000);
    assert_eq!(
        b.metric_names(),
        &[
            "state",
            "pacing_gain",
            "cwnd_gain",
            "btl_bw_bps",
            "min_rtt_ms",
            "inflight_hi_pkts",
            "inflight_lo_pkts",
            "phase"
        ]
    );
    let mut m = [0.0; crate::MAX_METRICS];
    b.metrics(&mut m);
    assert_eq!(m[0], 2.0);
    assert!((m[3] / 1e7 - 1.0).abs() < 1e-3);
    assert_eq!(m[4], 40.0);
    assert!(m[5].is_nan(), "inflight_hi unset");
    assert_eq!(m[7], 2.0, "CRUISE");
    b.inflight_hi = 120;
    b.inflight_lo = 80;
    b.metrics(&mut m);
    assert_eq!((m[5], m[6]), (120.0, 80.0));
}

// Undo restores the bounds saved when recovery began.
#[test]
fn undo_restores_bounds() {
    let (mut b, tp) = in_probe_bw(10.0, 40_000);
    b.inflight_hi = 100;
    b.inflight_lo = 90;
    b.ssthresh(&tp);
    b.inflight_lo = 60;
    b.inflight_hi = 70;
    b.undo_cwnd(&tp);
    assert_eq!((b.inflight_lo, b.inflight_hi), (90, 100));
}

// An RTO outside a probe seeds inflight_lo with the pre-RTO cwnd, and
// leaving Loss restores cwnd.
#[test]
fn rto_seeds_inflight_lo() {
    let (mut b, mut tp) = in_probe_bw(10.0, 40_000);
    b.cycle_idx = Phase::Cruise;
    tp.snd_cwnd = 70;
    b.ssthresh(&tp);
    tp.snd_cwnd = 1;
    b.set_state(&mut tp, CaState::Loss);
    assert_eq!(b.inflight_lo, 70);
    b.prev_ca_state = CaState::Loss;
    b.set_state(&mut tp, CaState::Open);
    assert_eq!(tp.snd_cwnd, 70);
}

#[test]
fn extremes_do_not_panic() {
    for mbps in [1e-3, 1.0, 1e5] {
        let (mut b, mut tp) = started();
        tp.snd_cwnd_clamp = u32::MAX;
        for i in 0..200u64 {
            let mut rs = sample_for(&b, &tp, mbps, 1 + (i as i64 * 997) % 1_000_000);
            rs.losses = (i % 7) as u32;
            rs.lost = (i % 13) as u32;
            rs.tx_in_flight = (i * 37) as u32;
            rs.acked_sacked = (i * 1_000) as u32;
            rs.is_app_limited = i % 3 == 0;
            rs.delivered_ce = (i % 5) as i64;
            rs.is_ece = i % 2 == 0;
            tp.packets_out = (i * 100_000) as u32;
            tp.wstamp_ns = u64::MAX / 2;
            ack(&mut b, &mut tp, rs);
            b.skb_marked_lost(
                &mut tp,
                &RateSample { tx_in_flight: i as u32, lost: (i % 3) as u32, ..Default::default() },
            );
            if i == 20 {
                b.set_state(&mut tp, CaState::Loss);
            }
            tp.now_us += 100_000;
        }
    }
}
