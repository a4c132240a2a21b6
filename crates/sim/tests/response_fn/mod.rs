//! The response-function measurement shared by `response.rs` (the checks)
//! and `family.rs` (the closing table): one flow on an uncongested path with
//! random or periodic loss; see `response.rs` for the set-up.
#![allow(dead_code)]

use crate::common::*;
use sim::{Column, LossModel, Output, QueueLimit};

/// The loss process at the bottleneck, at rate p.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Loss {
    /// Each data packet lost independently with probability p.
    Random,
    /// Every round(1/p)-th data packet lost: the deterministic loss the
    /// analytic forms are derived for.
    Periodic,
}

/// What one run measured.
pub struct Measured {
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

pub fn col<'a>(out: &'a Output, name: &str) -> &'a Column {
    &out.flow_columns.iter().find(|(n, _)| *n == name).unwrap().1
}

/// One flow of `cc` with random loss `p` on a `rtt_ms` path, long enough for
/// about `losses` loss events in the measured period; `w_size` (the expected
/// window) sizes the link, the run and, times `rwnd_factor`, the receive
/// window.
#[allow(clippy::too_many_arguments)]
pub fn measure_with(
    cc: &str,
    params: &[(&str, cc::ParamValue)],
    loss: Loss,
    p: f64,
    rtt_ms: u64,
    w_size: f64,
    losses: f64,
    rwnd_factor: f64,
    warm_cycles: f64,
) -> Measured {
    let rtt = rtt_ms as f64 / 1e3;
    let rwnd_pkts = (rwnd_factor * w_size).max(256.0).ceil() as u64;
    // Twice the rate of a full receive window or of 8 w (wire bytes), and at
    // least 1 Gbit/s, so that bursts (of a small window, or released when
    // recovery ends) do not queue either, Mbit/s.
    let fast_pkts = (rwnd_pkts as f64).max(8.0 * w_size);
    let rate_mbps = ((2.0 * fast_pkts * (MSS + HDR) as f64 * 8.0 / rtt / 1e6).ceil() as u64).max(1000);
    // Loss events per second at the expected window.
    let loss_rate = p * w_size / rtt;
    let measure_s = losses / loss_rate;
    // Under periodic loss the window approaches its sawtooth geometrically
    // after the slow-start overshoot.
    let warm_cycles = if loss == Loss::Periodic { warm_cycles / loss_rate } else { 0.0 };
    let warm_s = (0.2 * measure_s).max(20.0 * rtt).max(10.0).max(warm_cycles);
    let secs = (warm_s + measure_s).ceil() as u64;

    let mut f = flow(cc, rtt_ms);
    f.params = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    f.rwnd_bytes = Some(rwnd_pkts * MSS as u64);
    let mut cfg = dumbbell(rate_mbps, rtt_ms, 1.0, secs, vec![f]);
    cfg.bottleneck.limit = QueueLimit::Packets(100_000_000);
    cfg.reverse.limit = QueueLimit::Packets(100_000_000);
    match loss {
        Loss::Random => cfg.bottleneck.loss = p,
        Loss::Periodic => cfg.bottleneck.loss_model = Some(LossModel::Periodic { period: (1.0 / p).round() as u64 }),
    }
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
    let mut last = t.len() - 1;
    let mut first = first;
    if loss == Loss::Periodic {
        // Whole sawtooth cycles, once the sawtooth has settled: from the
        // sample just after a loss whose cycle peaks within 2 % of the last
        // cycle's peak, to the sample before the sample just after the last
        // loss (the cycle is deterministic, so a partial cycle or the decay
        // of the slow-start overshoot would bias the mean).
        let after_loss: Vec<usize> = (first..t.len()).filter(|&i| retrans[i] > retrans[i - 1]).collect();
        let n = after_loss.len();
        assert!(n >= 3, "{cc}: only {n} losses after the warm-up");
        let peak_of = |k: usize| *cwnd[after_loss[k]..after_loss[k + 1]].iter().max().unwrap() as f64;
        let final_peak = peak_of(n - 2);
        let settled = (0..n - 1).find(|&k| peak_of(k) <= 1.02 * final_peak).unwrap();
        first = after_loss[settled];
        last = after_loss[n - 1] - 1;
    }
    let span = (t[last] - t[first - 1]) as f64 / 1e9;
    let measured = if loss == Loss::Periodic { 0.5 } else { 0.75 } * measure_s;
    assert!(span >= measured, "{cc}: warm-up took {:.0} s of {secs} s", t[first] as f64 / 1e9);
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

/// One measurement: `cc` with `params` at loss rate `p` under `loss`,
/// against `w_formula`.
pub struct Case<'a> {
    label: &'a str,
    cc: &'a str,
    params: Vec<(&'a str, cc::ParamValue)>,
    loss: Loss,
    p: f64,
    rtt_ms: u64,
    w_formula: f64,
    /// The expected window that sizes the link, run and receive window.
    w_size: f64,
    /// Loss events in the measured period.
    losses: f64,
    /// Receive window as a multiple of `w_size`.
    rwnd_factor: f64,
    /// Periodic loss: loss cycles of warm-up at least.
    warm_cycles: f64,
}

impl<'a> Case<'a> {
    pub fn new(label: &'a str, cc: &'a str, loss: Loss, p: f64, rtt_ms: u64, w_formula: f64, losses: f64) -> Case<'a> {
        // Periodic loss never leaves a long loss-free interval, so the
        // sawtooth peaks at 4/3 w (Reno) or within 1.4 w (the others); in
        // recovery the sender runs up to a window past the hole, so a
        // receive window of 2.5 w never binds (the queue check below would
        // see the burst it releases) and only shortens the slow-start
        // overshoot, whose undoing would otherwise take many long cycles.
        let rwnd_factor = if loss == Loss::Periodic { 2.5 } else { 8.0 };
        // The overshoot decays by about 1 − 2b per cycle for AIMD with
        // decrease b (0.6 for HSTCP's b = 0.2): twelve cycles settle it.
        Case {
            label,
            cc,
            params: vec![],
            loss,
            p,
            rtt_ms,
            w_formula,
            w_size: w_formula,
            losses,
            rwnd_factor,
            warm_cycles: 12.0,
        }
    }

    pub fn params(mut self, params: &[(&'a str, cc::ParamValue)]) -> Self {
        self.params = params.to_vec();
        self
    }

    pub fn w_size(mut self, w: f64) -> Self {
        self.w_size = w;
        self
    }

    pub fn warm_cycles(mut self, n: f64) -> Self {
        self.warm_cycles = n;
        self
    }

    pub fn rwnd(mut self, factor: f64) -> Self {
        self.rwnd_factor = factor;
        self
    }

    /// Runs it; returns (p, relative error of the mean window) and the mean
    /// window.
    pub fn run(&self) -> ((f64, f64), f64) {
        let t0 = std::time::Instant::now();
        let m = measure_with(
            self.cc,
            &self.params,
            self.loss,
            self.p,
            self.rtt_ms,
            self.w_size,
            self.losses,
            self.rwnd_factor,
            self.warm_cycles,
        );
        let err = m.mean_cwnd / self.w_formula - 1.0;
        println!(
            "{:<28} {:<8} p={:.0e} RTT={} ms: mean cwnd {:.1} ± {:.1}, goodput·RTT {:.1}, formula {:.1}, \
             error {:+.1}% ± {:.1}% ({} losses, {} timeouts, max cwnd {}, {:.1} s)",
            self.label,
            format!("{:?}", self.loss).to_lowercase(),
            self.p,
            self.rtt_ms,
            m.mean_cwnd,
            m.std_err,
            m.goodput_window,
            self.w_formula,
            err * 100.0,
            m.std_err / self.w_formula * 100.0,
            m.losses,
            m.timeouts,
            m.max_cwnd,
            t0.elapsed().as_secs_f64()
        );
        // The two averages agree (cwnd is the window in use on an uncongested path).
        assert!(
            (m.goodput_window / m.mean_cwnd - 1.0).abs() < 0.1,
            "{}: goodput window {:.1} vs cwnd {:.1}",
            self.label,
            m.goodput_window,
            m.mean_cwnd
        );
        ((self.p, err), m.mean_cwnd)
    }
}

/// Asserts every error is within ±`tol`, after all cases ran (so the log
/// shows every number).
pub fn check_all(what: &str, errors: &[(f64, f64)], tol: f64) {
    for &(p, e) in errors {
        assert!(e.abs() <= tol, "{what} at p = {p:e}: {:+.1}% from the response function", e * 100.0);
    }
}

pub fn b(v: bool) -> cc::ParamValue {
    cc::ParamValue::Bool(v)
}

pub fn s(v: &str) -> cc::ParamValue {
    cc::ParamValue::Str(v.into())
}

/// Mathis et al. 1997 for periodic loss with one increase per RTT (Linux
/// Reno counts acknowledged packets): √(3/2)/√p.
pub fn mathis_w(p: f64) -> f64 {
    1.5f64.sqrt() / p.sqrt()
}

/// RFC 3649: w(p) = 0.12/p^0.835 (exactly Low_Window·(p/Low_P)^S).
pub fn hstcp_w(p: f64) -> f64 {
    let s = (83000f64.ln() - 38f64.ln()) / (1e-7f64.ln() - 1e-3f64.ln());
    38.0 * (p / 1e-3).powf(s)
}

/// RFC 3649 §5 as written: its continuous a(w), b(w), and an increase of
/// a(w) per RTT, i.e. a(w)/w per packet acknowledged.
pub fn hstcp_rfc_params() -> Vec<(&'static str, cc::ParamValue)> {
    vec![("aimd", s("rfc3649")), ("count_acked_packets", b(true))]
}

/// Linux's table with a(w) per RTT (packet counting).
pub fn hstcp_table_params() -> Vec<(&'static str, cc::ParamValue)> {
    vec![("count_acked_packets", b(true))]
}

/// RFC 9438 §5: (C(3 + β)/(4(1 − β)))^¼·RTT^¾/p^¾ = 1.054·RTT^0.75/p^0.75.
pub fn cubic_w(p: f64, rtt_s: f64) -> f64 {
    let (c, beta) = (0.4f64, 0.7f64);
    (c * (3.0 + beta) / (4.0 * (1.0 - beta))).powf(0.25) * rtt_s.powf(0.75) / p.powf(0.75)
}

/// CUBIC at RTT 200 ms, in the cubic region: the window is ≥ 2.5× Reno's 1.22/√p.
pub fn cubic_case<'a>(label: &'a str, mode: &str, loss: Loss, p: f64, losses: f64) -> Case<'a> {
    let w = cubic_w(p, 0.2);
    assert!(w > 2.5 * 1.22 / p.sqrt(), "p = {p}: not the cubic region");
    Case::new(label, "cubic", loss, p, 200, w, losses).params(&[("mode", s(mode))])
}
