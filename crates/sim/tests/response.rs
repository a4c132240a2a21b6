//! Whole-run response functions: the average window of one flow under random
//! (Bernoulli) loss on an uncongested path, against the analytic forms of
//! `metrics.md` §7:
//!
//! | algorithm | W(p), packets | source |
//! |---|---|---|
//! | HighSpeed TCP | 0.12/p^0.835 (w > 38) | RFC 3649 |
//! | Scalable TCP | a/(b·p) = 0.08/p | Kelly 2003 |
//! | CUBIC | 1.054·RTT^0.75/p^0.75 where above Reno's 1.22/√p | RFC 9438 §5 |
//!
//! Set-up: one flow on a link at least twice as fast as the flow can ever
//! send, with a buffer that never fills (so the only losses are the random
//! ones, applied to data packets at the bottleneck), and a receive window of
//! 8× the expected average window that only shortens the slow-start
//! overshoot (the test checks it never binds in the measured period). The
//! average window is the time average of cwnd sampled every 100 ms, from the
//! first sample after the slow-start peak at which cwnd has come down to
//! 1.2× the expected window, cross-checked with goodput × RTT / MSS.
//!
//! The analytic forms assume deterministic (periodic) loss; with Bernoulli
//! loss the loss intervals are exponential, which changes the constant by a
//! model-dependent factor (for Reno about +9 %, measured with this set-up at
//! p = 1e-4; see also
//! `whole.rs`). Measured (seed 11), mean window against the formula:
//! HighSpeed (a(w) per RTT) +55 % at 1e-3, +20 % at 1e-4, +12.5 % at 1e-5,
//! −5.6 % at 1e-6; CUBIC +19 % at 1e-4, +12 % at 1e-5, +7 % at 3e-6 in both
//! modes; Scalable −4.8 %, −5.5 %, −1.3 % at 1e-4, 3e-5, 1e-5. The
//! batch-means standard error is ±2–4 % at 1e-4 and ±4–10 % at the smaller
//! loss rates (fewer loss events). The cases beyond 15 % are kept as ignored
//! tests with their measured numbers and the reason (as `whole.rs` does);
//! tolerances are not widened to pass.
//!
//! Runs are sized by the number of loss events they contain (≈ 1/p packets
//! each). The engine moves 2–3 M packets per second in the test profile at
//! windows of a few hundred packets, about 1.5 M at windows above 10 000;
//! the file takes about 30 s on two cores.

mod common;
use common::*;
use sim::{Column, Output, QueueLimit};

/// What one run measured.
struct Measured {
    /// Time-averaged cwnd after the warm-up, packets.
    mean_cwnd: f64,
    /// Its standard error from 10 batch means, packets.
    std_err: f64,
    /// Goodput × RTT / MSS over the same period, packets.
    goodput_window: f64,
    /// Loss events (retransmissions) in the measured period.
    losses: u64,
    timeouts: u64,
    max_cwnd: u32,
}

fn col<'a>(out: &'a Output, name: &str) -> &'a Column {
    &out.flow_columns.iter().find(|(n, _)| *n == name).unwrap().1
}

/// One flow of `cc` with random loss `p` on a `rtt_ms` path, long enough for
/// about `losses` loss events in the measured period; `w_size` (the expected
/// window) sizes the link, the run and, times `rwnd_factor`, the receive
/// window.
fn measure_with(
    cc: &str,
    params: &[(&str, cc::ParamValue)],
    p: f64,
    rtt_ms: u64,
    w_size: f64,
    losses: f64,
    rwnd_factor: f64,
) -> Measured {
    let rtt = rtt_ms as f64 / 1e3;
    let rwnd_pkts = (rwnd_factor * w_size).max(256.0).ceil() as u64;
    // Twice the rate of a full receive window (wire bytes), and at least
    // 1 Gbit/s so that bursts of a small window do not queue either, Mbit/s.
    let rate_mbps = ((2.0 * rwnd_pkts as f64 * (MSS + HDR) as f64 * 8.0 / rtt / 1e6).ceil() as u64).max(1000);
    // Loss events per second at the expected window.
    let loss_rate = p * w_size / rtt;
    let measure_s = losses / loss_rate;
    let warm_s = (0.2 * measure_s).max(20.0 * rtt).max(10.0);
    let secs = (warm_s + measure_s).ceil() as u64;

    let mut f = flow(cc, rtt_ms);
    f.params = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    f.rwnd_bytes = Some(rwnd_pkts * MSS as u64);
    let mut cfg = dumbbell(rate_mbps, rtt_ms, 1.0, secs, vec![f]);
    cfg.bottleneck.limit = QueueLimit::Packets(100_000_000);
    cfg.reverse.limit = QueueLimit::Packets(100_000_000);
    cfg.bottleneck.loss = p;
    cfg.seed = 11;
    let out = run(&cfg);

    let (Column::U64(t), Column::U32(cwnd), Column::U64(delivered), Column::U64(retrans)) =
        (col(&out, "t_ns"), col(&out, "cwnd_pkts"), col(&out, "delivered_bytes"), col(&out, "retrans"))
    else {
        panic!("unexpected column types")
    };
    // Start after the slow-start peak, once cwnd is back near the expected
    // window (the overshoot to the receive window takes a few losses to undo).
    let half = t.len() / 2;
    let peak = (0..half).max_by_key(|&i| cwnd[i]).unwrap();
    let first = (peak..t.len())
        .find(|&i| cwnd[i] as f64 <= 1.2 * w_size)
        .unwrap_or_else(|| panic!("{cc}: cwnd never came down to 1.2 × {w_size:.0}"))
        .max(1);
    let last = t.len() - 1;
    let span = (t[last] - t[first - 1]) as f64 / 1e9;
    assert!(span >= 0.75 * measure_s, "{cc}: warm-up took {:.0} s of {secs} s", t[first] as f64 / 1e9);
    let samples = &cwnd[first..=last];
    let mean_cwnd = samples.iter().map(|&c| c as f64).sum::<f64>() / samples.len() as f64;
    // Standard error by batch means (10 consecutive batches).
    let k = samples.len() / 10;
    let batches: Vec<f64> =
        (0..10).map(|j| samples[j * k..(j + 1) * k].iter().map(|&c| c as f64).sum::<f64>() / k as f64).collect();
    let var = batches.iter().map(|b| (b - mean_cwnd).powi(2)).sum::<f64>() / 9.0;
    let std_err = (var / 10.0).sqrt();
    let goodput_pps = (delivered[last] - delivered[first - 1]) as f64 / MSS as f64 / span;
    let m = Measured {
        mean_cwnd,
        std_err,
        goodput_window: goodput_pps * rtt,
        losses: retrans[last] - retrans[first - 1],
        timeouts: out.flows[0].timeouts,
        max_cwnd: *samples.iter().max().unwrap(),
    };
    // The receive window must not have limited the measured period, the
    // buffer never dropped, and the link never held a queue worth noticing.
    assert!((m.max_cwnd as u64) < rwnd_pkts, "{cc}: cwnd {} reached the receive window {rwnd_pkts}", m.max_cwnd);
    assert_eq!(out.queue.drops, out.queue.random_drops, "{cc}: buffer drops");
    let qcol = |name: &str| &out.queue_columns.iter().find(|(n, _)| *n == name).unwrap().1;
    let (Column::U64(qt), Column::U64(backlog)) = (qcol("t_ns"), qcol("backlog_bytes")) else {
        panic!("unexpected queue column types")
    };
    let t_first = t[first];
    let max_backlog = qt.iter().zip(backlog).filter(|(&x, _)| x >= t_first).map(|(_, &b)| b).max().unwrap_or(0);
    let max_queue_ms = max_backlog as f64 * 8.0 / (rate_mbps as f64 * 1e6) * 1e3;
    assert!(max_queue_ms < 0.02 * rtt_ms as f64, "{cc}: queueing delay up to {max_queue_ms:.2} ms");
    m
}

/// Runs one case; returns the relative error of the mean window against
/// `w_formula` and the measured mean window.
#[allow(clippy::too_many_arguments)]
fn case(
    label: &str,
    cc: &str,
    params: &[(&str, cc::ParamValue)],
    p: f64,
    rtt_ms: u64,
    w_formula: f64,
    w_size: f64,
    losses: f64,
) -> (f64, f64) {
    case_rw(label, cc, params, p, rtt_ms, w_formula, w_size, losses, 8.0)
}

/// [`case`] with the receive window as a multiple of `w_size`.
#[allow(clippy::too_many_arguments)]
fn case_rw(
    label: &str,
    cc: &str,
    params: &[(&str, cc::ParamValue)],
    p: f64,
    rtt_ms: u64,
    w_formula: f64,
    w_size: f64,
    losses: f64,
    rwnd_factor: f64,
) -> (f64, f64) {
    let t0 = std::time::Instant::now();
    let m = measure_with(cc, params, p, rtt_ms, w_size, losses, rwnd_factor);
    let err = m.mean_cwnd / w_formula - 1.0;
    println!(
        "{label:<30} p={p:.0e} RTT={rtt_ms} ms: mean cwnd {:.1} ± {:.1}, goodput·RTT {:.1}, formula {w_formula:.1}, \
         error {:+.1}% ± {:.1}% ({} losses, {} timeouts, max cwnd {}, {:.1} s)",
        m.mean_cwnd,
        m.std_err,
        m.goodput_window,
        err * 100.0,
        m.std_err / w_formula * 100.0,
        m.losses,
        m.timeouts,
        m.max_cwnd,
        t0.elapsed().as_secs_f64()
    );
    // The two averages agree (cwnd is the window in use on an uncongested path).
    assert!(
        (m.goodput_window / m.mean_cwnd - 1.0).abs() < 0.1,
        "{label}: goodput window {:.1} vs cwnd {:.1}",
        m.goodput_window,
        m.mean_cwnd
    );
    (err, m.mean_cwnd)
}

/// Asserts every error is within ±`tol`, after all cases ran (so the log
/// shows every number).
fn check_all(what: &str, errors: &[(f64, f64)], tol: f64) {
    for &(p, e) in errors {
        assert!(e.abs() <= tol, "{what} at p = {p:e}: {:+.1}% from the response function", e * 100.0);
    }
}

fn b(v: bool) -> cc::ParamValue {
    cc::ParamValue::Bool(v)
}

fn s(v: &str) -> cc::ParamValue {
    cc::ParamValue::Str(v.into())
}

/// RFC 3649: w(p) = 0.12/p^0.835 (exactly Low_Window·(p/Low_P)^S).
fn hstcp_w(p: f64) -> f64 {
    let s = (83000f64.ln() - 38f64.ln()) / (1e-7f64.ln() - 1e-3f64.ln());
    38.0 * (p / 1e-3).powf(s)
}

/// RFC 3649's response function assumes an increase of a(w) per RTT, i.e.
/// a(w)/w per packet acknowledged: `count_acked_packets = true`.
fn hstcp_rfc_params() -> Vec<(&'static str, cc::ParamValue)> {
    vec![("count_acked_packets", b(true))]
}

// HighSpeed TCP at p = 1e-6 (w = 12 141): measured 11 460 ± 635, −5.6 %
// (25 loss events: the costliest run of the file).
#[test]
fn highspeed_follows_rfc3649_at_1e6() {
    let p = 1e-6;
    // cwnd peaks at 1.7 w here: a receive window of 4 w shortens the costly
    // slow-start overshoot.
    let w = hstcp_w(p);
    let (e, _) = case_rw("highspeed (a(w) per RTT)", "highspeed", &hstcp_rfc_params(), p, 100, w, w, 20.0, 4.0);
    check_all("highspeed", &[(p, e)], 0.15);
}

// Linux's tcp_highspeed adds a(w)/cwnd per ACK whatever the ACK covers; with
// delayed ACKs (2 packets per ACK) that is a(w)/2 per RTT. In RFC 3649's AIMD
// model (w² = a(w)(2 − b(w))/(2 b(w) p)) halving a(w) is the same as
// doubling p, so Linux's window should be w(2p)/w(p) = 2^−0.835 = 0.561 of the
// packet-counting variant at the same p, whatever the loss model. Measured
// (seed 11): 0.590 at 1e-4, 0.562 at 1e-5; against 0.12/p^0.835 itself Linux's
// HighSpeed is −29 % and −37 %. The packet-counting variant at 1e-5 is
// checked against 0.12/p^0.835: 1998, +12.5 %.
#[test]
fn highspeed_linux_per_ack_equals_doubled_loss_rate() {
    let ratio = 2f64.powf(-0.835);
    let mut ratio_errs = vec![];
    let mut rfc_errs = vec![];
    for (p, losses) in [(1e-4, 200.0), (1e-5, 100.0)] {
        let (e_rfc, rfc) =
            case("highspeed (a(w) per RTT)", "highspeed", &hstcp_rfc_params(), p, 100, hstcp_w(p), hstcp_w(p), losses);
        let (e, linux) =
            case("highspeed (Linux, per ACK)", "highspeed", &[], p, 100, hstcp_w(p), hstcp_w(2.0 * p), losses);
        println!(
            "    Linux/packet-counting window ratio {:.3} (expected {ratio:.3}); Linux vs 0.12/p^0.835: {:+.1}%",
            linux / rfc,
            e * 100.0
        );
        ratio_errs.push((p, linux / rfc / ratio - 1.0));
        if p < 1e-4 {
            rfc_errs.push((p, e_rfc));
        }
    }
    check_all("highspeed Linux/packet-counting ratio", &ratio_errs, 0.15);
    check_all("highspeed (a(w) per RTT)", &rfc_errs, 0.15);
}

// Measured +55 % at 1e-3 (58.8 ± 1.3 vs 38.4) and +20 % at 1e-4 (312 ± 9
// vs 260).
// At 1e-3 the cause is Linux's table, not the loss model: w = 38 is
// Low_Window, and the table gives a = 2, b = 0.44 from 39 packets on (RFC
// 3649's a(w) only reaches 2 at 118), so the AIMD fixed point
// w² = a(2 − b)/(2bp) of the table is 60 packets, as measured. At 1e-4 the
// table's fixed point is 291 (+11 %); the rest is attributed to Bernoulli vs
// periodic loss (not separable here: the simulator has only Bernoulli loss).
#[test]
#[ignore = "HighSpeed vs 0.12/p^0.835 under random loss: +55% at 1e-3 (Linux table at Low_Window), +20% at 1e-4; see comment"]
fn highspeed_follows_rfc3649_at_1e3_and_1e4() {
    let mut errs = vec![];
    for (p, losses) in [(1e-3, 400.0), (1e-4, 200.0)] {
        let (e, _) =
            case("highspeed (a(w) per RTT)", "highspeed", &hstcp_rfc_params(), p, 100, hstcp_w(p), hstcp_w(p), losses);
        errs.push((p, e));
    }
    check_all("highspeed", &errs, 0.15);
}

// Scalable: 0.08/p in the MIMD region (w > 1/a = 100). Measured −4.8 %,
// −5.5 %, −1.3 %.
#[test]
fn scalable_follows_kelly() {
    let mut errs = vec![];
    for (p, losses) in [(1e-4, 300.0), (3e-5, 200.0), (1e-5, 150.0)] {
        let (e, _) = case("scalable", "scalable", &[], p, 100, 0.08 / p, 0.08 / p, losses);
        errs.push((p, e));
    }
    check_all("scalable", &errs, 0.15);
}

/// RFC 9438 §5: (C(3 + β)/(4(1 − β)))^¼·RTT^¾/p^¾ = 1.054·RTT^0.75/p^0.75.
fn cubic_w(p: f64, rtt_s: f64) -> f64 {
    let (c, beta) = (0.4f64, 0.7f64);
    (c * (3.0 + beta) / (4.0 * (1.0 - beta))).powf(0.25) * rtt_s.powf(0.75) / p.powf(0.75)
}

/// CUBIC at RTT 200 ms, in the cubic region: the window is ≥ 2.5× Reno's 1.22/√p.
fn cubic_case(label: &str, params: &[(&str, cc::ParamValue)], rates: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut errs = vec![];
    for &(p, losses) in rates {
        let w = cubic_w(p, 0.2);
        assert!(w > 2.5 * 1.22 / p.sqrt(), "p = {p}: not the cubic region");
        errs.push((p, case(label, "cubic", params, p, 200, w, w, losses).0));
    }
    errs
}

// RTT 200 ms: p = 1e-5, W = 1772 (Reno 386): measured 1982, +11.8 %;
// p = 3e-6, W = 4372 (Reno 704): 4698, +7.5 %.
#[test]
fn cubic_linux_follows_rfc9438_response() {
    let errs = cubic_case("cubic (linux)", &[], &[(1e-5, 100.0), (3e-6, 30.0)]);
    check_all("cubic (linux)", &errs, 0.15);
}

// Measured 1970, +11.2 % at 1e-5; 4665, +6.7 % at 3e-6.
#[test]
fn cubic_rfc9438_follows_rfc9438_response() {
    let errs = cubic_case("cubic (rfc9438)", &[("mode", s("rfc9438"))], &[(1e-5, 100.0), (3e-6, 30.0)]);
    check_all("cubic (rfc9438)", &errs, 0.15);
}

// Measured (seed 11, RTT 200 ms, p = 1e-4, W = 315): Linux 375.5, +19.1 %;
// RFC 9438 mode 375.0, +19.0 %. RFC 9438's average window is derived for
// periodic loss at the same W_max every epoch; with Bernoulli loss the epochs
// vary and the convex growth after long loss-free intervals lifts the average.
// The two implementations agree within 0.5 %, so this is the loss model, not
// an implementation difference; the excess shrinks as p falls (+12 % at 1e-5,
// +7 % at 3e-6, +5.5 % at 1e-6 in an earlier 38-loss run).
#[test]
#[ignore = "CUBIC vs RFC 9438 average window under random loss: +19% at 1e-4 in both modes; see comment"]
fn cubic_follows_rfc9438_response_at_1e4() {
    let mut errs = cubic_case("cubic (linux)", &[], &[(1e-4, 200.0)]);
    errs.extend(cubic_case("cubic (rfc9438)", &[("mode", s("rfc9438"))], &[(1e-4, 200.0)]));
    check_all("cubic", &errs, 0.15);
}

// No response function in metrics.md §7 for these; measured windows for the
// report, against: SQRT (α = 1, β = 1/2) periodic-loss sawtooth
// √(α/(βp)) = 1.41/√p; Illinois on a path without queueing delay is
// AIMD(α = 10, multiplier 7/8): √(10·1.875/(0.25 p)) = 8.66/√p; BIC and H-TCP
// against Reno's 1.22/√p only for scale.
#[test]
#[ignore = "report only: no analytic response function in metrics.md for these"]
fn report_other_response_functions() {
    // SQRT sheds only β√w per loss, so undoing a slow-start overshoot takes
    // hundreds of loss-free RTTs: a receive window of 3 w and long runs; p
    // stops at 3e-5 (at 1e-5 the descent alone takes ~20 min simulated).
    for p in [1e-3f64, 1e-4, 3e-5] {
        let w = 2f64.sqrt() / p.sqrt();
        case_rw("sqrt vs 1.41/sqrt(p)", "sqrt", &[], p, 100, w, w, 200.0, 3.0);
    }
    for p in [1e-3f64, 1e-4, 1e-5] {
        let reno = 1.22 / p.sqrt();
        case("illinois vs 8.66/sqrt(p)", "illinois", &[], p, 100, 8.66 / p.sqrt(), 8.66 / p.sqrt(), 100.0);
        case("bic vs Reno 1.22/sqrt(p)", "bic", &[], p, 100, reno, 5.0 * reno, 100.0);
        case("htcp vs Reno 1.22/sqrt(p)", "htcp", &[], p, 100, reno, 8.0 * reno, 100.0);
    }
}
