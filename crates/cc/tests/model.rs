//! One model-based property harness over every registered algorithm.
//!
//! Each algorithm from `cc::algorithms()` (so algorithms added later are
//! covered without touching this file) is built with its defaults and with
//! one variant per non-default `Bool`/`Choice` value and per numeric
//! extreme, and driven by random sequences of the events a sender produces:
//! ACKs (1–64 packets, RTT samples 1 ms–2 s or none), losses detected by
//! duplicate ACKs (ssthresh, Recovery, cwnd = ssthresh, later Open), timeouts
//! (ssthresh, `CaEvent::Loss`, Loss state, cwnd = 1), ECN echoes (ssthresh,
//! CWR), undo of a reduction, idle periods (`TxStart { idle_us }`) and bare
//! time steps. The harness keeps the `Sock` consistent the way the
//! simulator's sender does (monotone time, packets_out, snd_una/snd_nxt,
//! delivered, srtt/min_rtt, a delivery-rate sample per ACK) and checks after
//! every event:
//!
//! * no panic, including integer overflow (checks are on in the test profile);
//! * 1 ≤ cwnd ≤ cwnd_clamp, ssthresh ≥ 1;
//! * ssthresh() ≥ 2 and, for loss-based algorithms, below the window it
//!   reduces unless that window is ≤ 2 (exceptions listed in
//!   [`NO_STRICT_DECREASE`] with their reason);
//! * undo_cwnd() ≥ 1;
//! * every exported metric is finite or NaN (NaN = not available yet).
//!
//! The random source is a seeded splitmix64, so a failure names the
//! algorithm, the parameters and the sequence seed that reproduce it.

use cc::registry::{ParamDefault, ParamKind};
use cc::{
    algorithms, build, AckSample, AlgoInfo, AnyCc, CaEvent, CaState, CongestionControl, EcnMode, ParamValue,
    RateSample, Sock, INFINITE_SSTHRESH, MAX_METRICS,
};
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Sequences per algorithm with default parameters, and per variant.
const SEQS_DEFAULT: u64 = 1_000;
const SEQS_VARIANT: u64 = 100;
/// Events per sequence.
const STEPS: u32 = 400;

/// What a sequence exercised.
#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    acks: u64,
    losses: u64,
    timeouts: u64,
    ecn: u64,
    undos: u64,
    idles: u64,
    max_cwnd: u32,
}

impl Stats {
    fn add(&mut self, o: Stats) {
        self.acks += o.acks;
        self.losses += o.losses;
        self.timeouts += o.timeouts;
        self.ecn += o.ecn;
        self.undos += o.undos;
        self.idles += o.idles;
        self.max_cwnd = self.max_cwnd.max(o.max_cwnd);
    }
}

/// Where "ssthresh() < cwnd" does not hold, and why: `None` = never
/// required; `Some(w)` = required only from cwnd w up.
fn no_strict_decrease(name: &str, params: &[(String, ParamValue)]) -> Option<Option<u32>> {
    let param = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    for &(n, p, v, w, _why) in NO_STRICT_DECREASE {
        let matches_param = match p {
            None => true,
            Some(p) => param(p) == Some(ParamValue::Str(v.to_string())),
        };
        if n == name && matches_param {
            return Some(w);
        }
    }
    None
}

/// (algorithm, parameter, value, smallest window always reduced, reason).
#[allow(clippy::type_complexity)]
const NO_STRICT_DECREASE: &[(&str, Option<&str>, &str, Option<u32>, &str)] = &[
    ("scalable", None, "", Some(8), "Linux: ssthresh = cwnd − (cwnd >> 3), which removes nothing below 8"),
    ("illinois", None, "", Some(8), "Linux: cwnd − (cwnd·β >> 6) with β = 1/8 removes nothing below 8"),
    (
        "dctcp",
        None,
        "",
        None,
        "ssthresh() removes cwnd·alpha/2, nothing once alpha reaches 0 (RFC 8257 §3.3); a loss is halved by set_state(Recovery)",
    ),
    ("bbr", None, "", None, "not loss-based: ssthresh() returns the current ssthresh (Linux bbr_ssthresh)"),
    (
        "prague",
        None,
        "",
        None,
        "ssthresh() returns the current ssthresh (tcp_prague.c prague_ssthresh); the window is cut in set_state/cwnd_event",
    ),
    ("bbr3", None, "", None, "not loss-based: ssthresh() returns the current ssthresh"),
    ("vivace", None, "", None, "rate-based: ssthresh() returns infinity (PCC kernel module pcc_ssthresh)"),
    (
        "copa",
        None,
        "",
        None,
        "not loss-based: ssthresh() returns the current ssthresh; a loss changes delta in competitive mode only",
    ),
    (
        "westwood",
        Some("loss_response"),
        "paper",
        None,
        "paper variant: ssthresh = bandwidth estimate × RTTmin, not a fraction of cwnd",
    ),
];

/// splitmix64 (Steele, Lea, Flood 2014).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [lo, hi].
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
    fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
    /// Log-uniform in [lo, hi].
    fn log_range(&mut self, lo: u64, hi: u64) -> u64 {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((lo as f64).ln() + u * ((hi as f64).ln() - (lo as f64).ln())).exp().round() as u64
    }
}

/// The parameter sets to run: defaults, then one variant per non-default
/// Bool/Choice value (checked with the full rules) and per numeric extreme
/// (checked without the decrease rule: e.g. b = 0 removes nothing).
fn variants(info: &AlgoInfo) -> Vec<(Vec<(String, ParamValue)>, bool)> {
    let mut out = vec![(vec![], true)];
    for p in info.params {
        let name = p.name.to_string();
        match (p.kind, p.default) {
            (ParamKind::Bool, ParamDefault::Bool(b)) => out.push((vec![(name, ParamValue::Bool(!b))], true)),
            (ParamKind::Choice(choices), ParamDefault::Str(d)) => {
                for c in choices.iter().filter(|c| **c != d) {
                    out.push((vec![(name.clone(), ParamValue::Str(c.to_string()))], true));
                }
            }
            (ParamKind::Int { min, max }, _) => {
                out.push((vec![(name.clone(), ParamValue::Int(min))], false));
                out.push((vec![(name, ParamValue::Int(max))], false));
            }
            (ParamKind::Float { min, max }, _) => {
                out.push((vec![(name.clone(), ParamValue::Float(min))], false));
                out.push((vec![(name, ParamValue::Float(max))], false));
            }
            _ => {}
        }
    }
    out
}

/// The sender side of the model.
struct Model<C: CongestionControl> {
    cc: C,
    tp: Sock,
    rng: Rng,
    name: &'static str,
    /// Required floor for a strict decrease, or None when not required.
    strict_from: Option<u32>,
    /// The algorithm set cwnd itself on the last ACK (Linux `cong_control`).
    controls: bool,
    /// ACKs left before the current reduction (Recovery/CWR/Loss) ends.
    recovery_acks: u32,
    /// Idle time to report with the next transmission, µs.
    idle_us: Option<u64>,
    /// (time, delivered) at past ACKs, for delivery-rate samples.
    history: VecDeque<(u64, u64)>,
    step: u32,
    stats: Stats,
}

impl<C: CongestionControl> Model<C> {
    fn check(&mut self, what: &str) {
        self.stats.max_cwnd = self.stats.max_cwnd.max(self.tp.snd_cwnd);
        let tp = &self.tp;
        let ctx = || {
            format!(
                "{} step {} after {what}: cwnd {} ssthresh {} clamp {}",
                self.name, self.step, tp.snd_cwnd, tp.snd_ssthresh, tp.snd_cwnd_clamp
            )
        };
        assert!(tp.snd_cwnd >= 1, "cwnd below 1: {}", ctx());
        assert!(tp.snd_cwnd <= tp.snd_cwnd_clamp, "cwnd above clamp: {}", ctx());
        assert!(tp.snd_ssthresh >= 1, "ssthresh below 1: {}", ctx());
        let names = self.cc.metric_names();
        assert!(names.len() <= MAX_METRICS, "{}: {} metric names", self.name, names.len());
        let mut m = [0.0; MAX_METRICS];
        self.cc.metrics(&mut m);
        for (n, v) in names.iter().zip(m) {
            assert!(!v.is_infinite(), "metric {n} = {v}: {}", ctx());
        }
    }

    /// Sends up to the window (or less when application-limited).
    fn send(&mut self) {
        let cwnd_limited = self.rng.chance(0.9);
        let target = if cwnd_limited {
            self.tp.snd_cwnd
        } else {
            self.rng.range(0, self.tp.snd_cwnd.saturating_sub(1) as u64) as u32
        };
        if self.tp.packets_out < target {
            if self.tp.packets_out == 0 {
                let idle_us = self.idle_us.take().unwrap_or(0);
                self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart { idle_us });
            }
            let add = target - self.tp.packets_out;
            self.tp.snd_nxt += add as u64 * self.tp.mss as u64;
            self.tp.packets_out = target;
        }
        self.tp.is_cwnd_limited = cwnd_limited;
        self.tp.max_packets_out = self.tp.packets_out;
        self.tp.app_limited = if cwnd_limited { 0 } else { (self.tp.delivered + self.tp.packets_out as u64).max(1) };
        if self.tp.paced && self.tp.pacing_rate > 0 {
            let gap_ns = self.tp.mss as u64 * 1_000_000_000 / self.tp.pacing_rate.max(1);
            self.tp.wstamp_ns = self.tp.now_ns.max(self.tp.wstamp_ns).saturating_add(gap_ns);
        }
    }

    fn advance(&mut self, us: u64) {
        self.tp.now_us += us;
        self.tp.now_ns = self.tp.now_us * 1_000;
    }

    /// One ACK of `acked` packets (0 = a duplicate ACK carrying only an RTT sample).
    fn ack(&mut self, acked: u32, ece: bool) {
        let acked = acked.min(self.tp.packets_out);
        let rtt_us: i64 = if self.rng.chance(0.1) { -1 } else { self.rng.log_range(1_000, 2_000_000) as i64 };
        let dt = self.rng.range(0, 50_000);
        self.advance(dt);
        let prior_in_flight = self.tp.packets_in_flight();
        self.tp.snd_una += acked as u64 * self.tp.mss as u64;
        self.tp.packets_out -= acked;
        self.tp.delivered += acked as u64;
        if ece {
            self.tp.delivered_ce += acked as u64;
        }
        if rtt_us >= 0 {
            let r = rtt_us as u64;
            self.tp.srtt_us = if self.tp.srtt_us == 0 { r } else { (7 * self.tp.srtt_us + r) / 8 };
            self.tp.min_rtt_us = self.tp.min_rtt_us.min(r);
        }
        if self.tp.app_limited != 0 && self.tp.delivered > self.tp.app_limited {
            self.tp.app_limited = 0;
        }

        // Delivery-rate sample: delivered since the newest acked packet was
        // sent, one RTT (or one recorded ACK) ago.
        let now = self.tp.now_us;
        let back = if rtt_us >= 0 { rtt_us as u64 } else { 0 };
        let (t0, d0) = self
            .history
            .iter()
            .rev()
            .find(|(t, _)| *t + back <= now)
            .copied()
            .unwrap_or((now.saturating_sub(back.max(1)), self.tp.delivered - acked as u64));
        let interval = now.saturating_sub(t0).max(1);
        let rs = RateSample {
            prior_mstamp_us: t0,
            prior_delivered: d0,
            delivered: if acked > 0 { (self.tp.delivered - d0) as i64 } else { -1 },
            interval_us: if acked > 0 { interval as i64 } else { -1 },
            snd_interval_us: interval,
            rcv_interval_us: interval,
            rtt_us,
            losses: 0,
            acked_sacked: acked,
            prior_in_flight,
            is_app_limited: self.tp.app_limited != 0,
            is_ack_delayed: acked > 1,
            tx_in_flight: prior_in_flight,
            is_ece: ece,
            ece_delta: if ece { acked } else { 0 },
            ..Default::default()
        };
        self.history.push_back((now, self.tp.delivered));
        if self.history.len() > 512 {
            self.history.pop_front();
        }

        self.stats.acks += 1;
        let sample = AckSample { acked, rtt_us, in_flight: prior_in_flight, ece, feedback: None };
        self.cc.pkts_acked(&mut self.tp, &sample);
        self.check("pkts_acked");

        // End of a reduction (Linux tcp_end_cwnd_reduction / leaving Loss).
        if self.tp.ca_state != CaState::Open && self.tp.ca_state != CaState::Disorder {
            self.recovery_acks = self.recovery_acks.saturating_sub(1);
            if self.recovery_acks == 0 {
                if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
                    if self.tp.snd_ssthresh < INFINITE_SSTHRESH {
                        self.tp.snd_cwnd = self.tp.snd_ssthresh.min(self.tp.snd_cwnd_clamp);
                    }
                    self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
                }
                self.enter_open();
            }
        }

        self.controls = self.cc.cong_control(&mut self.tp, &rs);
        self.check("cong_control");
        if !self.controls && acked > 0 && matches!(self.tp.ca_state, CaState::Open | CaState::Disorder | CaState::Loss)
        {
            self.cc.cong_avoid(&mut self.tp, acked);
            self.check("cong_avoid");
        }
    }

    fn enter_open(&mut self) {
        self.cc.set_state(&mut self.tp, CaState::Open);
        self.tp.ca_state = CaState::Open;
        self.tp.lost_out = 0;
        self.check("set_state(Open)");
    }

    /// Calls ssthresh() and checks the reduction rules.
    fn reduce(&mut self, what: &str) -> u32 {
        let before = self.tp.snd_cwnd;
        self.tp.prior_cwnd = before;
        self.tp.prior_ssthresh = self.tp.snd_ssthresh;
        let ss = self.cc.ssthresh(&self.tp);
        assert!(ss >= 2, "{} step {}: ssthresh() = {ss} < 2 at cwnd {before} ({what})", self.name, self.step);
        if let Some(from) = self.strict_from {
            if before > 2 && before >= from {
                assert!(
                    ss < before,
                    "{} step {}: ssthresh() = {ss} not below cwnd {before} ({what})",
                    self.name,
                    self.step
                );
            }
        }
        self.tp.snd_ssthresh = ss;
        ss
    }

    /// Loss detected by duplicate ACKs / SACK: ssthresh, Recovery, cwnd = ssthresh.
    fn fast_retransmit(&mut self) {
        self.stats.losses += 1;
        self.reduce("loss");
        let n = self.rng.range(1, 3).min(self.tp.packets_out.max(1) as u64) as u32;
        self.tp.lost += n as u64;
        for i in 1..=n {
            let rs = RateSample {
                tx_in_flight: self.tp.packets_out,
                lost: i,
                is_app_limited: self.tp.app_limited != 0,
                ..Default::default()
            };
            self.cc.skb_marked_lost(&mut self.tp, &rs);
        }
        self.cc.set_state(&mut self.tp, CaState::Recovery);
        self.tp.ca_state = CaState::Recovery;
        // Recovery ends at tp.snd_ssthresh, which set_state may have set (DCTCP).
        if !self.controls {
            self.tp.snd_cwnd = self.tp.snd_ssthresh.min(self.tp.snd_cwnd_clamp);
        }
        self.recovery_acks = self.rng.range(1, 20) as u32;
        self.check("loss");
    }

    /// Retransmission timeout (Linux tcp_enter_loss).
    fn timeout(&mut self) {
        if self.tp.packets_out == 0 {
            return;
        }
        self.stats.timeouts += 1;
        if self.tp.ca_state != CaState::Loss || self.rng.chance(0.5) {
            self.reduce("timeout");
            self.cc.cwnd_event(&mut self.tp, CaEvent::Loss);
        }
        self.tp.lost += self.tp.packets_out as u64;
        self.tp.snd_cwnd = 1;
        self.tp.snd_cwnd_cnt = 0;
        self.cc.set_state(&mut self.tp, CaState::Loss);
        self.tp.ca_state = CaState::Loss;
        self.recovery_acks = self.rng.range(1, 20) as u32;
        self.check("timeout");
    }

    /// ECN echo: ssthresh, CWR, cwnd = ssthresh.
    fn ecn(&mut self) {
        self.stats.ecn += 1;
        if self.rng.chance(0.5) {
            self.cc.cwnd_event(&mut self.tp, CaEvent::EcnIsCe);
        }
        let ss = self.reduce("ECN");
        self.cc.set_state(&mut self.tp, CaState::Cwr);
        self.tp.ca_state = CaState::Cwr;
        if !self.controls {
            self.tp.snd_cwnd = ss.min(self.tp.snd_cwnd_clamp);
        }
        self.recovery_acks = self.rng.range(1, 20) as u32;
        self.check("ECN");
    }

    /// The reduction was spurious (Linux tcp_undo_cwnd_reduction).
    fn undo(&mut self) {
        self.stats.undos += 1;
        let w = self.cc.undo_cwnd(&self.tp);
        assert!(w >= 1, "{} step {}: undo_cwnd() = {w}", self.name, self.step);
        self.tp.snd_cwnd = w.min(self.tp.snd_cwnd_clamp);
        self.tp.snd_ssthresh = self.tp.snd_ssthresh.max(self.tp.prior_ssthresh);
        self.enter_open();
    }

    /// Everything is acknowledged, then the sender stays idle.
    fn idle(&mut self) {
        self.stats.idles += 1;
        // Stretch ACKs of at least a quarter of the flight, so that huge
        // windows do not take thousands of ACKs.
        let chunk = self.tp.packets_out.div_ceil(4).max(64);
        while self.tp.packets_out > 0 {
            let n = self.tp.packets_out.min(chunk);
            self.ack(n, false);
        }
        let idle = self.rng.log_range(1_000, 30_000_000);
        self.advance(idle);
        self.idle_us = Some(idle);
    }

    fn step(&mut self) {
        self.step += 1;
        let open = matches!(self.tp.ca_state, CaState::Open | CaState::Disorder);
        let r = self.rng.range(0, 99);
        match r {
            0..=61 => {
                self.send();
                let acked = if self.rng.chance(0.05) { 0 } else { self.rng.range(1, 64) as u32 };
                let ece = open && self.rng.chance(0.02);
                self.ack(acked, ece);
            }
            62..=67 if open => self.fast_retransmit(),
            68..=69 => self.timeout(),
            70..=73 if open => self.ecn(),
            74..=75 if self.tp.ca_state == CaState::Recovery => self.undo(),
            76..=78 if self.tp.ca_state == CaState::Open => {
                self.cc.set_state(&mut self.tp, CaState::Disorder);
                self.tp.ca_state = CaState::Disorder;
                self.check("set_state(Disorder)");
            }
            79..=80 if self.tp.ca_state == CaState::Disorder => self.enter_open(),
            81..=83 if self.tp.ca_state == CaState::Open => self.idle(),
            84..=88 => {
                let dt = self.rng.log_range(1, 5_000_000);
                self.advance(dt);
            }
            _ => {
                self.send();
                let n = self.rng.range(1, 64) as u32;
                self.ack(n, false);
            }
        }
    }
}

fn run_sequence(info: &AlgoInfo, params: &[(String, ParamValue)], strict: bool, seed: u64) -> Stats {
    let cc: AnyCc = build(info.name, params).expect("registered algorithm builds");
    let strict_from = match no_strict_decrease(info.name, params) {
        None if strict => Some(0),
        None => None,
        Some(w) if strict => w,
        Some(_) => None,
    };
    run_model(cc, info.name, info.needs_pacing, strict_from, seed)
}

/// One random sequence of [`STEPS`] events against `cc`.
fn run_model<C: CongestionControl>(
    cc: C,
    name: &'static str,
    needs_pacing: bool,
    strict_from: Option<u32>,
    seed: u64,
) -> Stats {
    let mut rng = Rng(seed);
    let init_cwnd = if rng.chance(0.1) { rng.log_range(100, 1_000_000) } else { rng.range(1, 100) } as u32;
    let mut tp = Sock::new(if rng.chance(0.8) { 1448 } else { rng.range(536, 9000) as u32 }, init_cwnd);
    if rng.chance(0.3) {
        tp.snd_cwnd_clamp = rng.range(init_cwnd as u64, init_cwnd as u64 * 100) as u32;
    }
    tp.now_us = rng.range(0, 1_000_000_000);
    tp.now_ns = tp.now_us * 1_000;
    tp.paced = needs_pacing || rng.chance(0.2);
    tp.rng_seed = rng.next();
    // AccECN feedback on most sequences (algorithms that need it, Prague,
    // run as Reno without it), chosen without drawing from the sequence.
    tp.ecn_mode = if seed.is_multiple_of(8) { EcnMode::Off } else { EcnMode::AccEcn };
    let mut m = Model {
        cc,
        tp,
        rng,
        name,
        strict_from,
        controls: false,
        recovery_acks: 0,
        idle_us: None,
        history: VecDeque::with_capacity(520),
        step: 0,
        stats: Stats::default(),
    };
    m.cc.init(&mut m.tp);
    m.check("init");
    for _ in 0..STEPS {
        m.step();
    }
    m.stats
}

#[test]
fn every_algorithm_survives_random_event_sequences() {
    let mut total = 0u64;
    let mut failures = Vec::new();
    for (ai, info) in algorithms().iter().enumerate() {
        let t0 = std::time::Instant::now();
        let mut n_alg = 0;
        let mut stats = Stats::default();
        'variants: for (vi, (params, strict)) in variants(info).into_iter().enumerate() {
            let n = if vi == 0 { SEQS_DEFAULT } else { SEQS_VARIANT };
            for s in 0..n {
                let seed = 0x5EED_0000_0000_0000 ^ ((ai as u64) << 40) ^ ((vi as u64) << 24) ^ s;
                let r = catch_unwind(AssertUnwindSafe(|| run_sequence(info, &params, strict, seed)));
                if let Ok(st) = r {
                    stats.add(st);
                }
                if let Err(e) = r {
                    let msg = e
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    // One failure per algorithm is enough to report.
                    failures.push(format!("{} with {params:?}, sequence seed {seed:#x}: {msg}", info.name));
                    break 'variants;
                }
                n_alg += 1;
            }
        }
        println!("{}: {n_alg} sequences in {:.2} s, {stats:?}", info.name, t0.elapsed().as_secs_f64());
        // Every kind of event happened many times.
        if n_alg > 0 {
            let min = n_alg / 2;
            assert!(
                [stats.losses, stats.timeouts, stats.ecn, stats.undos, stats.idles].iter().all(|&c| c >= min),
                "{}: too few events {stats:?}",
                info.name
            );
        }
        total += n_alg;
    }
    println!("{total} sequences of {STEPS} events");
    assert!(failures.is_empty(), "{} algorithm(s) failed:\n{}", failures.len(), failures.join("\n"));
    assert!(total >= 2_000, "only {total} sequences");
}

// The harness itself must be able to fail: deliberately broken algorithms
// (an ssthresh that does not reduce, a cwnd forced to 0, a metric that
// overflows to infinity) are caught, and Reno passes.
#[test]
fn harness_catches_broken_algorithms() {
    struct NoDecrease;
    impl CongestionControl for NoDecrease {
        fn ssthresh(&mut self, tp: &Sock) -> u32 {
            tp.snd_cwnd.max(2)
        }
    }
    struct ZeroCwnd;
    impl CongestionControl for ZeroCwnd {
        fn ssthresh(&mut self, tp: &Sock) -> u32 {
            (tp.snd_cwnd / 2).max(2)
        }
        fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
            tp.snd_cwnd = tp.snd_cwnd.saturating_sub(acked);
        }
    }
    struct InfiniteMetric;
    impl CongestionControl for InfiniteMetric {
        fn ssthresh(&mut self, tp: &Sock) -> u32 {
            (tp.snd_cwnd / 2).max(2)
        }
        fn metric_names(&self) -> &'static [&'static str] {
            &["x"]
        }
        fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
            out[0] = f64::INFINITY;
        }
    }
    fn fails<C: CongestionControl>(cc: C) -> bool {
        // The expected panics print their message; the test output shows it.
        catch_unwind(AssertUnwindSafe(|| run_model(cc, "broken", false, Some(0), 7))).is_err()
    }
    assert!(fails(NoDecrease));
    assert!(fails(ZeroCwnd));
    assert!(fails(InfiniteMetric));
    for seed in 0..50 {
        let st = run_model(cc::reno::Reno, "reno", false, Some(0), seed);
        assert!(st.acks > 100 && st.max_cwnd > 10, "{st:?}");
    }
}
