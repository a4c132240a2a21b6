//! Shared helpers for BBR's unit tests, and tests of the cwnd, pacing and
//! recovery rules (Linux `bbr_set_cwnd`; worked examples BV2, BV3, BV7,
//! worked by hand from Linux's rules and constants).

use super::*;
use crate::{CaState, CongestionControl, RateSample, Sock};

/// The worked examples use 1500-byte packets.
pub(crate) const MSS: u32 = 1500;

pub(crate) fn sock() -> Sock {
    let mut tp = Sock::new(MSS, 10);
    tp.paced = true;
    tp
}

/// `mbps` of 1500-byte packets in Linux's unit (packets/µs << 24).
pub(crate) fn bw_fixed(mbps: f64) -> u64 {
    (mbps * 1e6 / 8.0 / MSS as f64 / 1e6 * BW_UNIT as f64).round() as u64
}

pub(crate) fn bw_mbps(bw: u64) -> f64 {
    bw as f64 / BW_UNIT as f64 * 1e6 * MSS as f64 * 8.0 / 1e6
}

/// A BBR flow just initialised at t = 0.
pub(crate) fn started() -> (Bbr, Sock) {
    let mut b = Bbr::new(BbrConfig::default());
    let mut tp = sock();
    b.init(&mut tp);
    (b, tp)
}

/// A valid rate sample of `mbps` (1000 packets over the matching
/// interval) that starts a new round, with RTT `rtt_us`.
pub(crate) fn sample_for(b: &Bbr, tp: &Sock, mbps: f64, rtt_us: i64) -> RateSample {
    let pps = mbps * 1e6 / 8.0 / MSS as f64;
    RateSample {
        prior_delivered: b.next_rtt_delivered,
        delivered: 1000,
        interval_us: (1000.0 / pps * 1e6).round() as i64,
        rtt_us,
        acked_sacked: 1,
        prior_in_flight: tp.packets_in_flight(),
        ..RateSample::default()
    }
}

/// Delivers `rs` 1 ms after the previous ACK.
pub(crate) fn ack(b: &mut Bbr, tp: &mut Sock, rs: RateSample) {
    tp.now_us += 1_000;
    ack_at(b, tp, rs);
}

/// Delivers `rs` at the current `tp.now_us`.
pub(crate) fn ack_at(b: &mut Bbr, tp: &mut Sock, rs: RateSample) {
    tp.now_ns = tp.now_us.saturating_mul(1_000);
    tp.delivered += rs.acked_sacked as u64;
    if rs.rtt_us > 0 {
        tp.srtt_us = rs.rtt_us as u64; // the sender's smoothed RTT
    }
    assert!(b.cong_control(tp, &rs));
}

/// One round-starting ACK carrying a `mbps` sample.
pub(crate) fn round_ack(b: &mut Bbr, tp: &mut Sock, mbps: f64, rtt_us: i64) {
    let rs = sample_for(b, tp, mbps, rtt_us);
    ack(b, tp, rs);
}

/// A flow whose bw plateaued at `mbps`, now in Drain with 1000 packets out.
pub(crate) fn in_drain(mbps: f64, rtt_us: i64) -> (Bbr, Sock) {
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

/// A flow in ProbeBW at `mbps` with 30 packets out.
pub(crate) fn in_probe_bw(mbps: f64, rtt_us: i64) -> (Bbr, Sock) {
    let (mut b, mut tp) = in_drain(mbps, rtt_us);
    tp.packets_out = 30;
    round_ack(&mut b, &mut tp, mbps, rtt_us);
    assert_eq!(b.mode(), Mode::ProbeBw);
    (b, tp)
}

// BV2: BtlBw 10 Mbit/s of 1500-byte packets = 833.33 pkt/s, min_rtt 40 ms,
// BDP 33.33. ProbeBW target ceil(2·33.33) = 67, + 3·2 TSO = 73 → even 74;
// in phase 0: 76. Startup target ceil(2.88672·33.33) = 97 → 103 → 104.
#[test]
fn bv2_cwnd_targets() {
    let (mut b, tp) = in_probe_bw(10.0, 40_000);
    let bw = bw_fixed(10.0);
    assert_eq!(b.max_bw(), bw);
    assert_eq!(b.min_rtt_us, 40_000);
    assert_eq!(b.bdp(bw, BBR_UNIT), 34);
    assert_eq!(b.bdp(bw, CWND_GAIN), 67);
    b.cycle_idx = 2;
    assert_eq!(b.inflight(&tp, bw, CWND_GAIN), 74);
    b.cycle_idx = 0;
    assert_eq!(b.inflight(&tp, bw, CWND_GAIN), 76);
    b.mode = Mode::Startup;
    assert_eq!(b.bdp(bw, startup::HIGH_GAIN), 97);
    assert_eq!(b.inflight(&tp, bw, startup::HIGH_GAIN), 104);
}

// Before any RTT sample the target is the initial window (Linux TCP_INIT_CWND).
#[test]
fn bdp_without_rtt_is_initial_window() {
    let (b, _) = started();
    assert_eq!(b.bdp(bw_fixed(100.0), CWND_GAIN), 10);
}

// Initial pacing: high_gain · 10 packets / 1 ms (no RTT yet) × 0.99; once
// an RTT is known, high_gain · cwnd / srtt.
#[test]
fn initial_pacing_rate() {
    let (b, tp) = started();
    let want = 739.0 / 256.0 * 10.0 * MSS as f64 / 1e-3 * 0.99;
    assert!((tp.pacing_rate as f64 / want - 1.0).abs() < 1e-3, "{} vs {want}", tp.pacing_rate);
    assert!(!b.has_seen_rtt);
    let (mut b, mut tp) = started();
    tp.srtt_us = 40_000;
    let mut rs = RateSample { rtt_us: 40_000, acked_sacked: 1, delivered: -1, interval_us: -1, ..Default::default() };
    rs.prior_in_flight = 10;
    ack(&mut b, &mut tp, rs);
    assert!(b.has_seen_rtt);
    let want = 739.0 / 256.0 * 10.0 * MSS as f64 / 0.04 * 0.99;
    // cwnd grew by one on this ACK: 11 · rate of 10 at most.
    assert!(tp.pacing_rate as f64 <= want * 1.001, "{} vs {want}", tp.pacing_rate);
}

// Before the pipe is full the pacing rate never falls; after, it follows bw.
#[test]
fn startup_pacing_only_rises() {
    let (mut b, mut tp) = started();
    tp.packets_out = 1000;
    round_ack(&mut b, &mut tp, 50.0, 40_000);
    let r = tp.pacing_rate;
    b.bw.reset(b.rtt_cnt, bw_fixed(5.0));
    b.set_pacing_rate(&mut tp, b.bw(), b.pacing_gain);
    assert_eq!(tp.pacing_rate, r);
    b.full_bw_reached = true;
    b.set_pacing_rate(&mut tp, b.bw(), b.pacing_gain);
    assert!(tp.pacing_rate < r);
}

// In Startup cwnd grows by the packets acknowledged toward the target;
// after the pipe is full it snaps down to the target.
#[test]
fn cwnd_slow_starts_then_snaps_to_target() {
    let (mut b, mut tp) = in_probe_bw(10.0, 40_000);
    b.cycle_idx = 2;
    b.update_gains();
    tp.snd_cwnd = 200;
    let mut rs = sample_for(&b, &tp, 10.0, 40_000);
    rs.prior_delivered = 0;
    ack(&mut b, &mut tp, rs);
    let target = b.bdp(b.bw(), CWND_GAIN) + b.ack_aggregation_cwnd();
    assert_eq!(tp.snd_cwnd, b.quantization_budget(&tp, target));
    tp.snd_cwnd = 20;
    let mut rs = sample_for(&b, &tp, 10.0, 40_000);
    rs.prior_delivered = 0;
    rs.acked_sacked = 3;
    ack(&mut b, &mut tp, rs);
    assert_eq!(tp.snd_cwnd, 23, "below target: + acked");
}

// BV7: cwnd 100, inflight 100; fast retransmit on an ACK with acked = 1
// and losses = 3: cwnd − 3 = 97, then entering Recovery cwnd = inflight
// (96) + acked = 97. During the first round each ACK of k packets allows
// inflight + k; after the round, normal growth; leaving recovery restores
// max(cwnd, prior_cwnd = 100).
#[test]
fn bv7_packet_conservation_in_recovery() {
    let (mut b, mut tp) = in_probe_bw(30.0, 40_000); // target > 100
    b.cycle_idx = 2;
    b.update_gains();
    tp.snd_cwnd = 100;
    tp.packets_out = 100;
    // The sender: ssthresh() then set_state(Recovery), then cong_control.
    let ss = tp.snd_ssthresh;
    assert_eq!(b.ssthresh(&tp), ss, "ssthresh unchanged");
    assert_eq!(b.prior_cwnd, 100);
    b.set_state(&mut tp, CaState::Recovery);
    tp.ca_state = CaState::Recovery;
    tp.sacked_out = 1;
    tp.lost_out = 3;
    assert_eq!(tp.packets_in_flight(), 96);
    let mut rs = sample_for(&b, &tp, 30.0, 40_000);
    rs.prior_delivered = 0;
    rs.losses = 3;
    ack(&mut b, &mut tp, rs);
    assert!(b.packet_conservation);
    assert_eq!(tp.snd_cwnd, 97);
    // ACK of 5 packets with 94 in flight: max(97, 94 + 5) = 99.
    tp.sacked_out += 5;
    tp.packets_out = 100;
    tp.retrans_out = 1;
    let inflight = tp.packets_in_flight();
    let mut rs = sample_for(&b, &tp, 30.0, 40_000);
    rs.prior_delivered = 0;
    rs.acked_sacked = 5;
    ack(&mut b, &mut tp, rs);
    assert_eq!(tp.snd_cwnd, 97.max(inflight + 5));
    // A new round ends conservation: cwnd grows by acked toward target.
    let before = tp.snd_cwnd;
    let mut rs = sample_for(&b, &tp, 30.0, 40_000);
    rs.prior_delivered = b.next_rtt_delivered;
    rs.acked_sacked = 2;
    ack(&mut b, &mut tp, rs);
    assert!(!b.packet_conservation);
    assert_eq!(tp.snd_cwnd, before + 2);
    // Recovery ends: restore prior_cwnd.
    tp.ca_state = CaState::Open;
    tp.sacked_out = 0;
    tp.lost_out = 0;
    tp.retrans_out = 0;
    let mut rs = sample_for(&b, &tp, 30.0, 40_000);
    rs.prior_delivered = 0;
    ack(&mut b, &mut tp, rs);
    assert_eq!(tp.snd_cwnd, 100 + 1, "restored to prior_cwnd, then + acked");
}

// RTO: set_state(Loss) restarts full-pipe detection and ends the round;
// the cwnd is restored when Loss ends.
#[test]
fn rto_then_restore() {
    let (mut b, mut tp) = in_probe_bw(30.0, 40_000);
    tp.snd_cwnd = 150;
    b.ssthresh(&tp);
    tp.snd_cwnd = 1; // the sender: inflight + 1
    b.set_state(&mut tp, CaState::Loss);
    tp.ca_state = CaState::Loss;
    assert_eq!(b.full_bw, 0);
    assert!(b.round_start);
    let mut rs = sample_for(&b, &tp, 30.0, 40_000);
    rs.prior_delivered = 0;
    ack(&mut b, &mut tp, rs);
    assert_eq!(tp.snd_cwnd, 4, "grows by acked in Loss, at least 4");
    tp.ca_state = CaState::Open;
    let mut rs = sample_for(&b, &tp, 30.0, 40_000);
    rs.prior_delivered = 0;
    ack(&mut b, &mut tp, rs);
    assert_eq!(tp.snd_cwnd, 151);
}

// Undo: full-pipe detection restarts, cwnd is kept.
#[test]
fn undo_keeps_cwnd() {
    let (mut b, mut tp) = in_probe_bw(30.0, 40_000);
    tp.snd_cwnd = 77;
    b.full_bw_cnt = 2;
    assert_eq!(b.undo_cwnd(&tp), 77);
    assert_eq!((b.full_bw, b.full_bw_cnt), (0, 0));
}

// ACK aggregation: at 10 Mbit/s (0.833 packets/ms) an epoch opens with an
// ACK of 10 packets; 7 ms later an ACK of 40 brings the epoch to 50 when
// floor(0.833 × 7) = 5 were expected: extra_acked = 45, added to the cwnd
// target once the pipe is full.
#[test]
fn ack_aggregation_measures_excess() {
    let (mut b, mut tp) = in_probe_bw(10.0, 40_000);
    tp.snd_cwnd = 100;
    b.aggr.extra_acked = [0, 0];
    // An ACK at the expected rate opens an epoch.
    let mut rs = sample_for(&b, &tp, 10.0, 40_000);
    rs.prior_delivered = 0;
    ack(&mut b, &mut tp, rs);
    b.aggr.extra_acked = [0, 0];
    b.aggr.epoch_acked = 0;
    let mut rs = sample_for(&b, &tp, 10.0, 40_000);
    rs.prior_delivered = 0;
    rs.acked_sacked = 10;
    ack(&mut b, &mut tp, rs);
    assert_eq!(b.aggr.epoch_mstamp_us, tp.now_us, "epoch restarted");
    assert_eq!(b.extra_acked(), 10);
    tp.now_us += 6_000;
    let mut rs = sample_for(&b, &tp, 10.0, 40_000);
    rs.prior_delivered = 0;
    rs.acked_sacked = 40;
    ack(&mut b, &mut tp, rs);
    assert_eq!(b.extra_acked(), 45);
    assert_eq!(b.ack_aggregation_cwnd(), 45);
    // Capped at 100 ms of bw (83 packets).
    b.aggr.extra_acked = [500, 0];
    assert_eq!(b.ack_aggregation_cwnd(), 83);
}

#[test]
fn transitions_follow_the_diagram() {
    use Mode::*;
    assert!(Startup.can_transition_to(Drain));
    assert!(Drain.can_transition_to(ProbeBw));
    assert!(ProbeRtt.can_transition_to(Startup));
    assert!(ProbeRtt.can_transition_to(ProbeBw));
    assert!(!Startup.can_transition_to(ProbeBw));
    assert!(!ProbeBw.can_transition_to(Drain));
    assert!(!ProbeBw.can_transition_to(Startup));
    assert!(!Drain.can_transition_to(Startup));
}

#[test]
fn metrics_export_state() {
    let (b, _) = in_probe_bw(10.0, 40_000);
    assert_eq!(
        b.metric_names(),
        &["state", "pacing_gain", "cwnd_gain", "btl_bw_bps", "min_rtt_ms", "round", "cycle_idx", "lt_use_bw"]
    );
    let mut m = [0.0; crate::MAX_METRICS];
    b.metrics(&mut m);
    assert_eq!(m[0], 2.0);
    assert_eq!(m[2], 2.0);
    assert!((m[3] / 1e7 - 1.0).abs() < 1e-3, "btl_bw {}", m[3]);
    assert_eq!(m[4], 40.0);
    assert!(m[5] >= 4.0);
    assert_eq!(m[7], 0.0);
}

// Extreme inputs must not panic (overflow checks are on in tests).
#[test]
fn extremes_do_not_panic() {
    for mbps in [1e-3, 1.0, 1e5] {
        let (mut b, mut tp) = started();
        tp.snd_cwnd_clamp = u32::MAX;
        for i in 0..50u64 {
            let mut rs = sample_for(&b, &tp, mbps, 1 + (i as i64 * 997) % 1_000_000);
            rs.losses = (i % 7) as u32;
            rs.acked_sacked = (i * 1_000) as u32;
            rs.is_app_limited = i % 3 == 0;
            tp.packets_out = (i * 100_000) as u32;
            tp.wstamp_ns = u64::MAX / 2;
            ack(&mut b, &mut tp, rs);
            if i == 20 {
                b.set_state(&mut tp, CaState::Loss);
            }
        }
        tp.now_us = u64::MAX / 4;
        round_ack(&mut b, &mut tp, mbps, 5);
    }
}
