//! Whole-run response functions: the average window of one flow on an
//! uncongested path at loss rate p, against these analytic forms:
//!
//! | algorithm | W(p), packets | source | derived for |
//! |---|---|---|---|
//! | Reno | √(3/2)/√p = 1.22/√p | Mathis 1997 | periodic loss |
//! | HighSpeed TCP | 0.12/p^0.835 (w > 38) | RFC 3649 §5 | periodic loss (AIMD sawtooth) |
//! | Scalable TCP | a/(b·p) = 0.08/p | Kelly 2003 | random loss (zero mean drift per packet) |
//! | CUBIC | 1.054·RTT^0.75/p^0.75 where above Reno's 1.22/√p | RFC 9438 §5 | periodic loss ("deterministic loss model") |
//!
//! Each form is checked under the loss process it is derived for (the
//! engine's `LossModel::Periodic` drops every round(1/p)-th data packet), and
//! the random (Bernoulli) figures are printed for every case as well: tests
//! for those that are within 15 %, ignored tests with the measured number
//! for those that are not. Reno under periodic loss is the check of the
//! method: it lands within 2.5 % of Mathis, where random loss reads +10 to
//! +14 %. HighSpeed is checked in RFC 3649's own form (`aimd = "rfc3649"`,
//! a(w) per RTT): Linux's table sits above the line at the low end by
//! construction (+54 % at 1e-3 under either loss process; see the report).
//!
//! Set-up: one flow on a link at least twice as fast as the flow can ever
//! send, with a buffer that never fills (so the only losses are the ones of
//! the loss process, applied to data packets at the bottleneck), and a
//! receive window (8 w under random loss, 2.5 w under periodic loss) that
//! only shortens the slow-start overshoot (checked never to bind: cwnd stays
//! below it and no burst queues). The average window is the time average of
//! cwnd sampled every 100 ms, cross-checked with goodput × RTT / MSS. Random
//! loss: from the first sample after the slow-start peak at which cwnd is
//! back to 1.2 w. Periodic loss: over whole loss cycles, from the first cycle
//! whose peak is within 2 % of the last cycle's (the deterministic sawtooth
//! has settled) to the last loss.
//!
//! Runs are sized by the number of loss events they contain (≈ 1/p packets
//! each); periodic runs need far fewer (the cycle repeats exactly). The whole
//! file takes about 55 s of CPU, under 30 s on two free cores, in the test
//! profile; the costliest runs are HighSpeed at 1e-6 (10⁶ packets per loss).

mod common;
mod response_fn;
use response_fn::*;

// ---------------------------------------------------------------------------
// The method, on the best-known case.

/// Mathis et al. 1997 derive √(3/2)/√p for periodic loss (one loss every
/// 1/p packets, one increase per RTT: Linux Reno counts acknowledged
/// packets). Under periodic loss this set-up must land on it; the random-loss
/// figure is printed for contrast (exponential loss intervals raise the mean
/// window). Measured (seed 11): periodic −2.4 % at 1e-3, −0.3 % at 1e-4;
/// random +13.7 % at 1e-3, +9.7 % at 1e-4.
#[test]
fn reno_periodic_loss_matches_mathis() {
    let mut errs = vec![];
    for (p, losses) in [(1e-3, 30.0), (1e-4, 20.0)] {
        errs.push(Case::new("reno vs 1.22/sqrt(p)", "reno", Loss::Periodic, p, 100, mathis_w(p), losses).run().0);
        Case::new("reno vs 1.22/sqrt(p)", "reno", Loss::Random, p, 100, mathis_w(p), 100.0).run();
    }
    check_all("reno (periodic)", &errs, 0.05);
}

// ---------------------------------------------------------------------------
// HighSpeed TCP: RFC 3649's algorithm (`aimd = "rfc3649"`, a(w) per RTT)
// against RFC 3649's response function.

/// RFC 3649 §5 obtains a(w) from w = √(a(w)(2 − b(w))/(2 b(w) p)), the
/// average window of an AIMD sawtooth with one loss every 1/p packets
/// (deterministic loss): under periodic loss RFC 3649's algorithm must give
/// 0.12/p^0.835. Measured (seed 11): +4.5 % at 1e-3, −0.4 % at 1e-4, +0.9 %
/// at 1e-5 (+2.9 % at 1e-6, below).
#[test]
fn highspeed_rfc3649_follows_its_response_function_under_periodic_loss() {
    let mut errs = vec![];
    for (p, losses) in [(1e-3, 30.0), (1e-4, 20.0), (1e-5, 15.0)] {
        let c = Case::new("highspeed (rfc3649)", "highspeed", Loss::Periodic, p, 100, hstcp_w(p), losses);
        errs.push(c.params(&hstcp_rfc_params()).run().0);
    }
    check_all("highspeed (rfc3649, periodic)", &errs, 0.15);
}

/// As above at p = 1e-6 (w = 12 141; 8 cycles of 10⁶ packets after 12 of
/// warm-up, the costliest periodic run). Measured +2.9 %.
#[test]
fn highspeed_rfc3649_periodic_at_1e6() {
    let p = 1e-6;
    let c = Case::new("highspeed (rfc3649)", "highspeed", Loss::Periodic, p, 100, hstcp_w(p), 8.0);
    let e = c.params(&hstcp_rfc_params()).run().0;
    check_all("highspeed (rfc3649, periodic)", &[e], 0.15);
}

/// The same algorithm under random loss, whose mean window the periodic
/// derivation does not give; kept to show how far it moves. Measured
/// (seed 11): +8.4 % at 1e-4, +9.0 % at 1e-5, −1.7 % at 1e-6 (23 losses:
/// ± 7 % batch-means standard error). 1e-3 misses: below.
#[test]
fn highspeed_rfc3649_under_random_loss() {
    let mut errs = vec![];
    for (p, losses) in [(1e-4, 120.0), (1e-5, 80.0), (1e-6, 20.0)] {
        let c = Case::new("highspeed (rfc3649)", "highspeed", Loss::Random, p, 100, hstcp_w(p), losses);
        // The slow-start overshoot is costly at 1e-6 (cwnd peaks at 1.7 w):
        // a receive window of 4 w.
        errs.push(c.params(&hstcp_rfc_params()).rwnd(4.0).run().0);
    }
    check_all("highspeed (rfc3649, random)", &errs, 0.15);
}

// Random loss at p = 1e-3 (w = 38, the bottom of HSTCP's range): measured
// 47.4 ± 2.4, +24.9 % (288 losses). Exponential loss intervals leave long loss-free
// stretches in which w climbs above Low_Window where a(w) > 1, so the mean
// rises above the periodic sawtooth's (+4.5 % under periodic loss); at w = 38
// one stretch is a large fraction of the window.
#[test]
#[ignore = "HighSpeed (rfc3649) vs 0.12/p^0.835 under random loss at 1e-3: +24.9%; periodic loss: +4.5%"]
fn highspeed_rfc3649_random_loss_at_1e3() {
    let p = 1e-3;
    let c = Case::new("highspeed (rfc3649)", "highspeed", Loss::Random, p, 100, hstcp_w(p), 200.0);
    let e = c.params(&hstcp_rfc_params()).rwnd(4.0).run().0;
    check_all("highspeed (rfc3649, random)", &[e], 0.15);
}

// Linux's tcp_highspeed adds a(w)/cwnd per ACK whatever the ACK covers; with
// delayed ACKs (2 packets per ACK) that is a(w)/2 per RTT. In RFC 3649's AIMD
// model (w² = a(w)(2 − b(w))/(2 b(w) p)) halving a(w) is the same as
// doubling p, so Linux's window should be w(2p)/w(p) = 2^−0.835 = 0.561 of the
// packet-counting variant at the same p, whatever the loss model. Measured
// (seed 11, random loss) 0.590 at 1e-4 (0.562 at 1e-5 with 100 losses, left
// out to keep the file short); against 0.12/p^0.835 itself Linux's HighSpeed
// is −29 % at 1e-4 and −37 % at 1e-5 (random loss), −27 %, −34 %, −41 % at
// 1e-3, 1e-4, 1e-5 under periodic loss (bench/family_table.sh).
#[test]
fn highspeed_linux_per_ack_equals_doubled_loss_rate() {
    let ratio = 2f64.powf(-0.835);
    let p = 1e-4;
    let (_, counted) = Case::new("highspeed (table, per packet)", "highspeed", Loss::Random, p, 100, hstcp_w(p), 200.0)
        .params(&hstcp_table_params())
        .run();
    let ((_, e), linux) = Case::new("highspeed (Linux, per ACK)", "highspeed", Loss::Random, p, 100, hstcp_w(p), 200.0)
        .w_size(hstcp_w(2.0 * p))
        .run();
    println!(
        "    Linux/packet-counting window ratio {:.3} (expected {ratio:.3}); Linux vs 0.12/p^0.835: {:+.1}%",
        linux / counted,
        e * 100.0
    );
    check_all("highspeed Linux/packet-counting ratio", &[(p, linux / counted / ratio - 1.0)], 0.15);
}

// ---------------------------------------------------------------------------
// Scalable TCP.

/// Kelly 2003 (T. Kelly, "Scalable TCP: improving performance in highspeed
/// wide area networks", ACM CCR 33(2)): the equilibrium a·(1 − p) = p·b·w sets
/// the expected change of cwnd per packet to zero when each packet is lost
/// independently with probability p, i.e. it is derived for random loss:
/// 0.08/p in the MIMD region (w > 1/a = 100). Measured (seed 11) −4.8 %,
/// −5.5 %, −1.3 % at 1e-4, 3e-5, 1e-5. (Under periodic loss the sawtooth
/// peaks near 0.08/p and the time average is 12.6 % lower: see the report.)
#[test]
fn scalable_follows_kelly_under_random_loss() {
    let mut errs = vec![];
    for (p, losses) in [(1e-4, 300.0), (3e-5, 200.0), (1e-5, 150.0)] {
        errs.push(Case::new("scalable", "scalable", Loss::Random, p, 100, 0.08 / p, losses).run().0);
    }
    check_all("scalable (random)", &errs, 0.15);
}

// ---------------------------------------------------------------------------
// CUBIC at RTT 200 ms in the cubic region.

/// CUBIC in `mode` against RFC 9438's AVG_W at each (p, losses to average
/// over), within 15 %.
fn check_cubic(mode: &str, loss: Loss, points: &[(f64, f64)]) {
    let label = format!("cubic ({mode})");
    let errs: Vec<_> = points.iter().map(|&(p, l)| cubic_case(&label, mode, loss, p, l).run().0).collect();
    let process = if loss == Loss::Periodic { "periodic" } else { "random" };
    check_all(&format!("cubic ({mode}, {process})"), &errs, 0.15);
}

/// RFC 9438 §5 derives AVG_W_cubic "assuming a deterministic loss model
/// where the number of packets between two successive packet losses is
/// always 1/p": under periodic loss. Measured (seed 11): Linux +13.5 %,
/// −1.0 %, −0.9 % at 1e-4, 1e-5, 3e-6.
#[test]
fn cubic_linux_follows_rfc9438_under_periodic_loss() {
    check_cubic("linux", Loss::Periodic, &[(1e-4, 30.0), (1e-5, 20.0), (3e-6, 10.0)]);
}

/// As above in RFC 9438 mode. Measured +0.5 %, +0.1 %, +0.1 %.
#[test]
fn cubic_rfc9438_follows_rfc9438_under_periodic_loss() {
    check_cubic("rfc9438", Loss::Periodic, &[(1e-4, 30.0), (1e-5, 20.0), (3e-6, 10.0)]);
}

// Random loss. RTT 200 ms: p = 1e-5, W = 1772 (Reno 386): measured 1982,
// +11.8 %; p = 3e-6, W = 4372 (Reno 704): 4698, +7.5 %.
#[test]
fn cubic_linux_random_loss() {
    check_cubic("linux", Loss::Random, &[(1e-5, 100.0), (3e-6, 30.0)]);
}

// Measured 1970, +11.2 % at 1e-5; 4665, +6.7 % at 3e-6.
#[test]
fn cubic_rfc9438_random_loss() {
    check_cubic("rfc9438", Loss::Random, &[(1e-5, 100.0), (3e-6, 30.0)]);
}

// Measured (seed 11, RTT 200 ms, p = 1e-4, W = 315): Linux 375.5, +19.1 %;
// RFC 9438 mode 375.0, +19.0 %. With random loss the epochs vary and the
// convex growth after long loss-free intervals lifts the average; the two
// implementations agree within 0.5 %, and under periodic loss (the RFC's
// assumption) the same cases measure +13.5 % and +0.5 %.
#[test]
#[ignore = "CUBIC vs RFC 9438 average window under random loss: +19% at 1e-4 in both modes; see comment"]
fn cubic_random_loss_at_1e4() {
    let errs = vec![
        cubic_case("cubic (linux)", "linux", Loss::Random, 1e-4, 200.0).run().0,
        cubic_case("cubic (rfc9438)", "rfc9438", Loss::Random, 1e-4, 200.0).run().0,
    ];
    check_all("cubic (random)", &errs, 0.15);
}

// ---------------------------------------------------------------------------
// Report only.

// Linux's HighSpeed table counting packets (a = row + 1 over each whole row)
// under periodic loss: measured +54.4 % at 1e-3 (the table's own AIMD balance
// at a = 2, b = 0.4375 is √(2·1.5625/(0.875·1e-3)) = 59.8), +15.4 % at 1e-4,
// +5.7 % at 1e-5, +4.5 % at 1e-6: the table, not the loss model, is what
// misses at the low end. Scalable under periodic loss: −12.6 % at 1e-4,
// 3e-5 and 1e-5 (the sawtooth peaks near a/(b·p) less the growth lost in the
// recovery round, and the time average is 0.94 of the peak).
#[test]
#[ignore = "report only: the Linux HighSpeed table and Scalable under periodic loss"]
fn report_periodic_loss_other_variants() {
    for (p, l) in [(1e-3, 30.0), (1e-4, 20.0), (1e-5, 15.0), (1e-6, 8.0)] {
        Case::new("highspeed (table, per packet)", "highspeed", Loss::Periodic, p, 100, hstcp_w(p), l)
            .params(&hstcp_table_params())
            .run();
    }
    for (p, l) in [(1e-4, 30.0), (3e-5, 20.0), (1e-5, 15.0)] {
        // MIMD settles slowly (the overshoot shrinks by ~0.87 per cycle).
        Case::new("scalable", "scalable", Loss::Periodic, p, 100, 0.08 / p, l).warm_cycles(40.0).run();
    }
}

// No response function in the table at the top of this file for these;
// measured windows for the report, against: SQRT (α = 1, β = 1/2)
// periodic-loss sawtooth √(α/(βp)) = 1.41/√p; Illinois on a path without
// queueing delay is AIMD(α = 10, multiplier 7/8): √(10·1.875/(0.25 p)) =
// 8.66/√p; BIC and H-TCP against Reno's 1.22/√p only for scale.
#[test]
#[ignore = "report only: no analytic response function in this file's table for these"]
fn report_other_response_functions() {
    // SQRT sheds only β√w per loss, so undoing a slow-start overshoot takes
    // hundreds of loss-free RTTs: a receive window of 3 w and long runs; p
    // stops at 3e-5 (at 1e-5 the descent alone takes ~20 min simulated).
    for p in [1e-3f64, 1e-4, 3e-5] {
        let w = 2f64.sqrt() / p.sqrt();
        Case::new("sqrt vs 1.41/sqrt(p)", "sqrt", Loss::Random, p, 100, w, 200.0).rwnd(3.0).run();
    }
    for p in [1e-3f64, 1e-4, 1e-5] {
        let reno = 1.22 / p.sqrt();
        Case::new("illinois vs 8.66/sqrt(p)", "illinois", Loss::Random, p, 100, 8.66 / p.sqrt(), 100.0).run();
        Case::new("bic vs Reno 1.22/sqrt(p)", "bic", Loss::Random, p, 100, reno, 100.0).w_size(5.0 * reno).run();
        Case::new("htcp vs Reno 1.22/sqrt(p)", "htcp", Loss::Random, p, 100, reno, 100.0).w_size(8.0 * reno).run();
    }
}
