//! FAST TCP: a delay-based window update that keeps α packets queued.
//!
//! Source: C. Jin, D. X. Wei, S. H. Low, "FAST TCP: motivation, architecture,
//! algorithms, performance", IEEE INFOCOM 2004 (also Caltech technical report
//! CaltechCSTR:2003.010). FAST is not in mainline Linux, so there is no
//! kernel behaviour to follow. The paper was not re-opened when the rule
//! below was written down, and several details below are marked as not
//! confirmed against it.
//!
//! ```text
//!  baseRTT = minimum RTT seen                       (propagation delay)
//!  RTT     = EWMA of the RTT samples                (queueing + propagation)
//!
//!  once per RTT:   w ← min{ 2w , (1 − γ)·w + γ·(baseRTT/RTT · w + α) }
//!
//!  equilibrium:    w · (1 − baseRTT/RTT) = α        (α packets queued per flow)
//! ```
//!
//! How this file applies the rule (choices of ours where the rule as recalled
//! is silent or unconfirmed, each a plain reading of the paper's model):
//!
//! * **Update period**: once per RTT, when the ACK of the first packet sent
//!   after the previous update arrives (as Linux Vegas delimits its RTTs).
//!   The paper's prototype updates on a fixed period (unconfirmed).
//! * **Averaged RTT**: an EWMA over every RTT sample with gain `rtt_gain`
//!   (default 1/8, the gain of RFC 6298's SRTT; the paper's own weight was not
//!   checked).
//! * **Applying w**: a decrease takes effect at once; an increase is released
//!   over the next RTT as ACKs arrive, at most one packet per packet
//!   acknowledged (so the 2w cap grows no faster than slow start and does not
//!   send a window-sized burst).
//! * **Slow start**: Reno slow start until a queueing-delay signal appears:
//!   at an RTT boundary, if the *minimum* RTT of the last RTT shows at least α
//!   packets queued (`cwnd · (1 − baseRTT/minRTT) ≥ α`), slow start ends
//!   (ssthresh = cwnd) and the FAST rule takes over. The per-RTT minimum, as
//!   in Vegas, ignores the short queues slow start's bursts make.
//! * **Loss**: Reno (halve, via the sender's recovery), and the FAST rule
//!   resumes from the reduced window on returning to Open (FAST's loss
//!   handling recalled as "Reno-like", not confirmed against the paper).
//!   Outside Open state the window grows as Reno.
//! * **Not cwnd-limited**: w is not raised (it could not be measured).

use crate::params::{ParamDefault, ParamKind, ParamSpec, Params};
use crate::{common, AckSample, CaEvent, CaState, CongestionControl, Sock, MAX_METRICS};

/// FAST's parameters. The values attributed to the paper were not confirmed
/// against it.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "alpha",
        kind: ParamKind::Float { min: 0.0, max: 1.0e6 },
        default: ParamDefault::Float(200.0),
        doc: "packets each flow aims to keep queued in the network; 200 as in the paper's 2004 Gb/s experiments [UNCONFIRMED], small simulations use 10-100",
    },
    ParamSpec {
        name: "gamma",
        kind: ParamKind::Float { min: 0.001, max: 1.0 },
        default: ParamDefault::Float(0.5),
        doc: "step size of the per-RTT update, in (0, 1] (dimensionless); 0.5 typical per the paper [UNCONFIRMED]",
    },
    ParamSpec {
        name: "rtt_gain",
        kind: ParamKind::Float { min: 0.001, max: 1.0 },
        default: ParamDefault::Float(0.125),
        doc: "EWMA gain of the averaged RTT per sample (dimensionless); 1/8 = RFC 6298's SRTT gain (our choice; the paper's own weight was not checked)",
    },
];

/// Typed FAST configuration (see [`PARAMS`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FastConfig {
    /// Target packets queued per flow.
    pub alpha: f64,
    /// Update step, (0, 1].
    pub gamma: f64,
    /// EWMA gain of the averaged RTT.
    pub rtt_gain: f64,
}

impl Default for FastConfig {
    fn default() -> Self {
        FastConfig { alpha: 200.0, gamma: 0.5, rtt_gain: 0.125 }
    }
}

impl FastConfig {
    /// Reads resolved registry parameters.
    pub fn from_params(p: &Params) -> FastConfig {
        FastConfig { alpha: p.float("alpha"), gamma: p.float("gamma"), rtt_gain: p.float("rtt_gain") }
    }
}

/// One FAST window update (the paper's rule), packets.
/// `w ← min{2w, (1 − γ)·w + γ·(baseRTT/RTT · w + α)}`.
pub fn fast_update(w: f64, base_rtt: f64, rtt: f64, alpha: f64, gamma: f64) -> f64 {
    (2.0 * w).min((1.0 - gamma) * w + gamma * (base_rtt / rtt * w + alpha))
}

/// "No sample yet" for the RTT minima, µs.
const RTT_NONE_US: u64 = u64::MAX;

/// Per-flow FAST state.
#[derive(Clone, Debug)]
pub struct Fast {
    cfg: FastConfig,
    /// FAST runs this RTT (Open state only).
    doing_fast_now: bool,
    /// The RTT ends when an ACK passes this sequence number, bytes.
    beg_snd_nxt: u64,
    /// RTT samples this RTT.
    cnt_rtt: u32,
    /// Minimum RTT this RTT, µs (slow-start exit signal).
    round_min_rtt_us: u64,
    /// Minimum RTT ever, µs.
    base_rtt_us: u64,
    /// Averaged (EWMA) RTT, µs; 0 before the first sample.
    avg_rtt_us: f64,
    /// FAST's window, packets (fractional; cwnd follows its integer part).
    w: f64,
    /// cwnd the current RTT grows toward, packets.
    target: u32,
    /// cwnd as this algorithm last left it, to notice changes made by the
    /// sender's recovery, an RTO or an undo.
    last_cwnd: u32,
}

impl Fast {
    pub fn new(cfg: FastConfig) -> Fast {
        Fast {
            cfg,
            doing_fast_now: true,
            beg_snd_nxt: 0,
            cnt_rtt: 0,
            round_min_rtt_us: RTT_NONE_US,
            base_rtt_us: RTT_NONE_US,
            avg_rtt_us: 0.0,
            w: 0.0,
            target: 0,
            last_cwnd: 0,
        }
    }

    /// Starts a fresh RTT of samples at the next send.
    fn enable(&mut self, tp: &Sock) {
        self.doing_fast_now = true;
        self.beg_snd_nxt = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.round_min_rtt_us = RTT_NONE_US;
    }

    /// Packets this flow has queued by the averaged RTT: w·(1 − baseRTT/RTT).
    fn queue_estimate(&self) -> f64 {
        if self.avg_rtt_us <= 0.0 || self.base_rtt_us == RTT_NONE_US {
            return 0.0;
        }
        self.w * (1.0 - self.base_rtt_us as f64 / self.avg_rtt_us)
    }

    /// The once-per-RTT update (the paper's rule).
    fn update(&mut self, tp: &mut Sock) {
        let base = self.base_rtt_us as f64;
        if tp.in_slow_start() {
            // Slow start ends when the last RTT's minimum RTT shows α packets queued.
            let min = self.round_min_rtt_us as f64;
            let queued = tp.snd_cwnd as f64 * (1.0 - base / min);
            if queued < self.cfg.alpha {
                return;
            }
            tp.snd_ssthresh = tp.snd_cwnd;
        }
        let mut w = fast_update(self.w, base, self.avg_rtt_us, self.cfg.alpha, self.cfg.gamma);
        if !tp.is_cwnd_limited() {
            // The window was not used: do not raise it on that evidence.
            w = w.min(self.w);
        }
        let clamp = tp.snd_cwnd_clamp.max(2);
        self.w = w.clamp(2.0, clamp as f64);
        self.target = (self.w as u32).clamp(2, clamp);
        if self.target < tp.snd_cwnd {
            tp.snd_cwnd = self.target;
            // Stay out of slow start after a FAST decrease.
            tp.snd_ssthresh = tp.snd_ssthresh.min(tp.snd_cwnd);
        }
    }
}

impl CongestionControl for Fast {
    fn init(&mut self, tp: &mut Sock) {
        self.base_rtt_us = RTT_NONE_US;
        self.avg_rtt_us = 0.0;
        self.w = tp.snd_cwnd as f64;
        self.target = tp.snd_cwnd;
        self.last_cwnd = tp.snd_cwnd;
        self.enable(tp);
    }

    /// Reno's halving (FAST's loss handling recalled as "Reno-like", not
    /// confirmed against the paper).
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        common::reno_ssthresh(tp)
    }

    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        if !self.doing_fast_now {
            common::reno_cong_avoid(tp, acked);
            return;
        }
        if tp.snd_cwnd != self.last_cwnd {
            // Changed outside this hook (recovery, RTO, undo): FAST resumes from it.
            self.w = tp.snd_cwnd as f64;
            self.target = tp.snd_cwnd;
        }
        if tp.snd_una > self.beg_snd_nxt {
            self.beg_snd_nxt = tp.snd_nxt;
            if self.cnt_rtt > 0 {
                self.update(tp);
            }
            self.cnt_rtt = 0;
            self.round_min_rtt_us = RTT_NONE_US;
        }
        if tp.in_slow_start() {
            if tp.is_cwnd_limited() {
                common::slow_start(tp, acked);
            }
            self.w = tp.snd_cwnd as f64;
            self.target = tp.snd_cwnd;
        } else if tp.snd_cwnd < self.target && tp.is_cwnd_limited() {
            // Release the increase with the ACK clock: ≤ 1 packet per packet acked.
            tp.snd_cwnd = tp.snd_cwnd.saturating_add(acked).min(self.target);
        }
        self.last_cwnd = tp.snd_cwnd;
    }

    fn pkts_acked(&mut self, _tp: &mut Sock, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        let rtt = (sample.rtt_us as u64).max(1);
        self.base_rtt_us = self.base_rtt_us.min(rtt);
        self.round_min_rtt_us = self.round_min_rtt_us.min(rtt);
        self.cnt_rtt = self.cnt_rtt.saturating_add(1);
        let r = rtt as f64;
        self.avg_rtt_us =
            if self.avg_rtt_us <= 0.0 { r } else { self.avg_rtt_us + self.cfg.rtt_gain * (r - self.avg_rtt_us) };
    }

    /// FAST's rule runs only in Open state and restarts its RTT, from the
    /// window the recovery left, on returning to it.
    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable(tp);
            self.w = tp.snd_cwnd as f64;
            self.target = tp.snd_cwnd;
            self.last_cwnd = tp.snd_cwnd;
        } else {
            self.doing_fast_now = false;
        }
    }

    /// After idle, wait for a flight of fresh samples (baseRTT is kept).
    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        if matches!(ev, CaEvent::TxStart { .. } | CaEvent::CwndRestart) && self.doing_fast_now {
            self.enable(tp);
        }
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &["base_rtt_us", "avg_rtt_us", "w_pkts", "queue_est_pkts"]
    }

    fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
        out[0] = if self.base_rtt_us == RTT_NONE_US { 0.0 } else { self.base_rtt_us as f64 };
        out[1] = self.avg_rtt_us;
        out[2] = self.w;
        out[3] = self.queue_estimate();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit;
    use crate::INFINITE_SSTHRESH;

    const MSS: u32 = 1448;

    fn sock(cwnd: u32, ssthresh: u32) -> Sock {
        testkit::sock_at(cwnd, ssthresh, 1_000_000)
    }

    fn ack(rtt_us: i64) -> AckSample {
        testkit::rtt_ack(rtt_us)
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn defaults() {
        let p = crate::registry::resolve_params("fast", &[]).unwrap();
        assert_eq!(FastConfig::from_params(&p), FastConfig::default());
    }

    // The rule by hand: baseRTT 100 ms, RTT 120 ms held constant, w = 1000, α = 200,
    // γ = 0.5: 0.5·1000 + 0.5·(1000/1.2 + 200) = 1016.67, then 1031.94,
    // 1045.95, 1058.79, 1070.55, 1081.34; fixed point α/(1 − 100/120) = 1200.
    #[test]
    fn tv_update_sequence() {
        let want = [1016.67, 1031.94, 1045.95, 1058.79, 1070.55, 1081.34];
        let mut w = 1000.0;
        for &x in &want {
            w = fast_update(w, 100.0, 120.0, 200.0, 0.5);
            assert!(close(w, x, 0.005), "{w} vs {x}");
        }
        let mut w = 1000.0;
        for _ in 0..200 {
            w = fast_update(w, 100.0, 120.0, 200.0, 0.5);
        }
        assert!(close(w, 1200.0, 1e-3), "fixed point {w}");
        // The 2w cap binds on an empty path with a small window: 10 → 20, not 110.
        assert_eq!(fast_update(10.0, 100.0, 100.0, 200.0, 0.5), 20.0);
        // γ = 1 jumps straight to baseRTT/RTT·w + α.
        assert!(close(fast_update(1000.0, 100.0, 120.0, 200.0, 1.0), 1033.33, 0.005));
    }

    /// Sets FAST into congestion avoidance at window `w` with an averaged RTT
    /// of `rtt_us` over baseRTT `base_us`, at the end of an RTT.
    fn at_boundary(w: u32, base_us: u64, rtt_us: u64) -> (Fast, Sock) {
        let mut f = Fast::new(FastConfig::default());
        let mut tp = sock(w, w);
        f.init(&mut tp);
        f.base_rtt_us = base_us;
        f.avg_rtt_us = rtt_us as f64;
        f.round_min_rtt_us = rtt_us;
        f.cnt_rtt = 10;
        tp.snd_una = MSS as u64;
        tp.snd_nxt = (w as u64 + 1) * MSS as u64;
        (f, tp)
    }

    // The same vector through the hooks: the decision at the boundary sets
    // w = 1016.67 and the target 1016; the increase is released one packet
    // per packet acked, never more.
    #[test]
    fn tv_through_hooks_and_ack_paced_increase() {
        let (mut f, mut tp) = at_boundary(1000, 100_000, 120_000);
        f.cong_avoid(&mut tp, 1);
        assert!(close(f.w, 1016.67, 0.005), "w {}", f.w);
        assert_eq!(f.target, 1016);
        assert_eq!(tp.snd_cwnd, 1001, "first ACK releases one packet");
        f.cong_avoid(&mut tp, 2);
        assert_eq!(tp.snd_cwnd, 1003);
        for _ in 0..20 {
            f.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 1016, "stops at the target");
        let mut m = [0.0; MAX_METRICS];
        f.metrics(&mut m);
        assert_eq!((m[0], m[1]), (100_000.0, 120_000.0));
        assert!(close(m[3], 1016.67 * (1.0 - 100.0 / 120.0), 0.01), "queue estimate {}", m[3]);
    }

    // A decrease applies at once and keeps the flow out of slow start:
    // w = 1500 at RTT = 1.5·base: 0.5·1500 + 0.5·(1000 + 200) = 1350.
    #[test]
    fn decrease_is_immediate() {
        let (mut f, mut tp) = at_boundary(1500, 100_000, 150_000);
        f.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_cwnd, 1350);
        assert!(tp.snd_ssthresh <= 1350 && !tp.in_slow_start());
    }

    // Not cwnd-limited: w may fall but not rise.
    #[test]
    fn no_increase_when_not_cwnd_limited() {
        let (mut f, mut tp) = at_boundary(1000, 100_000, 100_000);
        tp.is_cwnd_limited = false;
        f.cong_avoid(&mut tp, 1);
        assert_eq!((f.w, tp.snd_cwnd), (1000.0, 1000));
    }

    // Slow start ends at the first boundary where the RTT minimum shows α
    // queued packets: cwnd 400 at minRTT 1.5·base → 133 queued ≥ α = 100.
    #[test]
    fn slow_start_exit_on_queueing_delay() {
        let cfg = FastConfig { alpha: 100.0, ..Default::default() };
        for (min_rtt, exits) in [(120_000u64, false), (150_000, true)] {
            let mut f = Fast::new(cfg.clone());
            let mut tp = sock(400, INFINITE_SSTHRESH);
            f.init(&mut tp);
            (f.base_rtt_us, f.avg_rtt_us, f.round_min_rtt_us, f.cnt_rtt) = (100_000, min_rtt as f64, min_rtt, 5);
            tp.snd_una = MSS as u64;
            f.cong_avoid(&mut tp, 1);
            if exits {
                // 0.5·400 + 0.5·(400/1.5 + 100) = 383.3 → 383.
                assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (383, 383));
            } else {
                // 80 queued < 100: slow start continues (+1).
                assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (401, INFINITE_SSTHRESH));
            }
        }
    }

    /// One round on a fluid path (`testkit::FluidPath`); None on overflow.
    fn round(f: &mut Fast, tp: &mut Sock, base_us: u64, bdp: u32, buffer: u32) -> Option<u32> {
        testkit::FluidPath { base_us, bdp, buffer, sample_bias_us: 0 }.round(f, tp)
    }

    // Narrative: α = 50 on a 500-packet pipe. Slow start from IW10 ends on
    // its own but late: the RTT with 640 packets (140 queued) is measured
    // when 1280 are already sent, so the buffer must hold 780 (here 1000).
    // The queue then settles at α (±1 for the integer window), a loss halves
    // the window (Reno), and FAST climbs back to α queued within a few RTTs
    // (γ(α − q) per RTT, not +1 per RTT).
    #[test]
    fn narrative_slow_start_steady_state_loss() {
        let (base, bdp, buf) = (100_000, 500, 1000);
        let mut f = Fast::new(FastConfig { alpha: 50.0, ..Default::default() });
        let mut tp = sock(10, INFINITE_SSTHRESH);
        tp.snd_nxt = 10 * MSS as u64;
        f.init(&mut tp);
        let mut rounds = 0;
        while tp.in_slow_start() {
            round(&mut f, &mut tp, base, bdp, buf).expect("no overflow in slow start");
            rounds += 1;
            assert!(rounds < 20);
        }
        let mut q = vec![];
        for _ in 0..40 {
            q.push(round(&mut f, &mut tp, base, bdp, buf).expect("no overflow"));
        }
        for &x in &q[20..] {
            assert!((49..=51).contains(&x), "queue {x}: {q:?}");
        }

        tp.snd_ssthresh = f.ssthresh(&tp);
        f.set_state(&mut tp, CaState::Recovery);
        tp.snd_cwnd = tp.snd_ssthresh; // end of recovery
        f.set_state(&mut tp, CaState::Open);
        assert_eq!(tp.snd_cwnd, 275);
        assert_eq!((f.w, f.target), (275.0, 275), "FAST resumes from the reduced window");
        let mut back = None;
        for r in 0..30 {
            let x = round(&mut f, &mut tp, base, bdp, buf).unwrap();
            if back.is_none() && (49..=51).contains(&x) {
                back = Some(r);
            }
        }
        // From 275 to 550: +γα = 25 per RTT while nothing is queued, then
        // smaller steps near α: about 15 RTTs (Reno would need 275).
        let back = back.expect("back at α");
        assert!(back <= 20, "{back} rounds to recover");
        let x = round(&mut f, &mut tp, base, bdp, buf).unwrap();
        assert!((49..=51).contains(&x), "queue {x}");
    }

    #[test]
    fn extremes_do_not_panic() {
        for cfg in [
            FastConfig { alpha: 0.0, gamma: 0.001, rtt_gain: 0.001 },
            FastConfig { alpha: 1.0e6, gamma: 1.0, rtt_gain: 1.0 },
        ] {
            let mut f = Fast::new(cfg);
            for &cwnd in &[1u32, 2, 1000, u32::MAX / 2] {
                let mut tp = sock(cwnd, INFINITE_SSTHRESH);
                tp.snd_cwnd_clamp = u32::MAX;
                f.init(&mut tp);
                for r in [i64::MAX, 0, 1, -1] {
                    f.pkts_acked(&mut tp, &ack(r));
                }
                tp.snd_una = u64::MAX / 2;
                f.cong_avoid(&mut tp, u32::MAX);
                tp.snd_ssthresh = 1;
                tp.snd_una = u64::MAX;
                f.pkts_acked(&mut tp, &ack(5));
                f.cong_avoid(&mut tp, 1);
                assert!(tp.snd_cwnd >= 1);
                let mut m = [0.0; MAX_METRICS];
                f.metrics(&mut m);
                assert!(m.iter().all(|x| x.is_finite()), "{m:?}");
                f.ssthresh(&tp);
            }
        }
    }
}
