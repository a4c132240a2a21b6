//! PCC Vivace: rate control by online gradient ascent on a utility function
//! measured over monitor intervals.
//!
//! Sources: M. Dong, T. Meng, D. Zarchy, E. Arslan, Y. Gilad, B. Godfrey,
//! M. Schapira, "PCC Vivace: Online-Learning Congestion Control", USENIX NSDI
//! 2018 (the paper was not re-read; the rules were read in the authors'
//! code). Code read: the authors' QUIC-style port in `PCCproject/PCC-Uspace`
//! (`src/pcc/pcc_vivace_sender.cpp`, `pcc_utility_manager.cpp`,
//! `pcc_sender.cpp`; this file takes it as the paper's reference
//! implementation), and the Vivace kernel module
//! `PCCproject/PCC-Kernel` `src/tcp_pcc.c` @ed39d0f0 for the mapping onto
//! `tcp_congestion_ops` (cwnd as a safety cap, infinite ssthresh, Loss
//! state). The code here is our own.
//!
//! Vivace in a nutshell:
//!
//! ```text
//! the sender paces at a rate r; time is cut into monitor intervals (MIs) of
//! max(1.5 srtt, 20 packets at r), each sent at one fixed rate; when every
//! packet of an MI is acknowledged or lost (about one RTT after it ends):
//!     u = x^0.9 − 900·x·dRTT/dT − 11.35·x·L
//!         x = the MI's actual sending rate, Mbit/s of 2^20 bit
//!         dRTT/dT = least-squares slope of RTT against send time (s/s),
//!                   0 if not significant or negative
//!         L = lost / sent in the MI
//! and the rate moves up the utility's gradient.
//! ```
//!
//! State machine (the QUIC port's `OnUtilityAvailable`):
//!
//! ```text
//!   STARTING ── u > u(previous MI): r ← 2r, stay
//!       │  u did not grow: r ← r/2 (the last good rate)
//!       ▼
//!   PROBING  ── 4 MIs in 2 pairs {r(1+ε), r(1−ε)}, order in each pair random;
//!       │       both pairs prefer the same direction:
//!       │           r ← r(1±ε) ± Δr, Δr = θ₀·γ (γ: mean Δu/Δr of the pairs)
//!       │       else probe again
//!       ▼
//!   MOVING   ── one MI per step; u still improves in the chosen direction:
//!       │           r ← r ± m·θ₀·γ, m = ((rounds+1) div 2)^1.2
//!       │       else step back by θ₀·γ and PROBE
//!       ▼
//!   every step Δr is bounded by ω·r (ω = 0.05 + 0.05·k, k grows each time
//!   the bound bites and shrinks otherwise) and is at least 500 kbit/s.
//! ```
//!
//! While an MI's utility is pending the sender keeps sending at the central
//! rate r (the QUIC port's "non-useful" intervals, the kernel's "wait"), so
//! a decision lags its MI by about one RTT.
//!
//! Mapping onto the hooks (as the kernel module `tcp_pcc.c` does):
//! * `cong_control` runs everything: it attributes delivered and lost
//!   packets and RTT samples to MIs, closes and evaluates MIs, runs the state
//!   machine, and sets `pacing_rate` and `cwnd = max(4, 2·rate·srtt/mss)`, a
//!   cap that does not limit the rate. It always returns true, so neither PRR
//!   nor `cong_avoid` touch cwnd.
//! * `ssthresh` returns infinity; `undo_cwnd` keeps cwnd.
//! * `set_state(Loss)` (a retransmission timeout) freezes MI accounting until
//!   the Loss state ends, then probing restarts.
//! * `on_send` counts transmissions and stamps the MI being sent.
//!
//! **Run it paced.** The rate is enforced only by pacing; without pacing the
//! cwnd cap of 2·rate·srtt is all that limits the sender. Like BBR it needs
//! the simulator's default SACK/PRR sender: the `newreno` recovery path
//! never calls `cong_control`.
//!
//! How MIs are measured with what the trait gives (no per-packet state):
//! * Packets are counted by transmission order: `on_send` numbers every
//!   transmission (retransmissions too, as Linux's `data_segs_out`); an MI
//!   owns the transmissions [sent_start, sent_end). The position up to which
//!   transmissions are accounted for (delivered or marked lost) is
//!   `sent − packets_in_flight`, and each ACK's advance of it is split into
//!   losses (the growth of `tp.lost`, given to the oldest positions) and
//!   deliveries. An MI is finished when that position reaches its end. This
//!   is the kernel module's counting (`packets_counted` against
//!   `data_segs_out`), without its 10-packet trims.
//! * Each ACK's RTT sample belongs to the packet sent at `now − rtt` (the
//!   newest packet it acknowledges), so the sample goes to the MI whose send
//!   period contains that time, with the send time as x of the regression.
//!
//! Departures from the QUIC port, each for a stated reason:
//! * MI boundaries and rate changes happen on ACKs (the trait lets an
//!   algorithm set the pacing rate only from its hooks, as in the kernel
//!   module), and a decision starts the next MI at once instead of at the
//!   end of the current non-useful interval (as the kernel module does).
//! * The RTT gradient's x axis is the send time, not the packet number
//!   divided by the per-packet transfer time at the MI rate; for a paced MI
//!   the two are the same quantity, dRTT/dT.
//! * Significance test: the gradient is ignored when the RMS residual of the
//!   fit, relative to the mean RTT, is at least |gradient| (the port's
//!   `DetermineToleranceGeneral`). The QUIC port computes the residual against
//!   a line whose slope has already been divided by the packet transfer time
//!   (and so is mis-scaled); the residual here is against the fitted line. The
//!   port's trending-gradient tolerance (a six-MI history of mean RTTs) is not
//!   implemented.
//! * Rates are payload rates (the simulator paces `skb->len`, as Linux);
//!   the port counts whole packets. x is therefore about 3.5 % below the
//!   wire rate with 1448-byte segments and 52-byte headers.
//! * Start: before the first RTT sample the initial window is paced over a
//!   nominal 1 ms (Linux BBR's convention); at the first sample the rate
//!   becomes IW·MSS/RTT (the port's starting rate, IW·MSS over its initial
//!   RTT rescaled by the first sample).
//! * Retransmission timeout: the rate is halved (the NSDI-2018 prototype's
//!   `onTimeout`, `PCCproject/PCC-Uspace` branch NSDI-2018, `pcc.h`), MIs are
//!   dropped while in Loss (kernel module), and probing restarts after it.
//! * A restart in STARTING from the minimum rate also forgets the previous
//!   utility (the port keeps it, so STARTING would end at its first MI).
//! * An MI with fewer than two transmissions (application-limited) cannot
//!   be measured; it is dropped, and a probing round containing it restarts.
//!
//! Constants (the QUIC port's, read in `pcc_vivace_sender.cpp`
//! and `pcc_utility_manager.cpp`): t = 0.9, b = 900, c = 11.35, ε = 0.05,
//! θ₀ = 1 Mbit/s per unit gradient, amplifier exponent 1.2, ω₀ = 0.05 with
//! increment 0.05, minimum step and minimum rate 500 kbit/s. ε = 0.05 is also
//! the kernel module's and the NSDI-2018 prototype's value; the paper's own
//! θ₀, ω₀ and increment are not confirmed (the paper was not re-read), and the
//! three implementations differ (kernel: ω₀ = 0.10, +0.07), so this file
//! follows the QUIC port. Probing uses two pairs (earlier revisions of the
//! port's `pcc_sender.cpp`, `kNumIntervalGroupsInProbing = 2`, and the
//! kernel module's four intervals); the port's latest revision (PCC
//! Proteus, 2020) uses three pairs for its primary utility, decided by majority.

use std::collections::VecDeque;

use crate::bbr::{mix_seed, SplitMix64};
use crate::params::{ParamDefault, ParamKind, ParamSpec, Params};
use crate::{CaEvent, CaState, CongestionControl, RateSample, Sock, INFINITE_SSTHRESH, MAX_METRICS};

/// PCC's Mbit: 2^20 bit (`kMegabit = 1024 * 1024` in the port); utilities
/// and the test vectors below (VV1–VV4) use this unit.
pub const MEGABIT: f64 = 1_048_576.0;
/// Utility exponent t: x^t is concave, so a flow's marginal gain falls with
/// its rate, which makes competing flows converge to a fair share.
pub const SENDING_RATE_EXPONENT: f64 = 0.9;
/// Latency coefficient b, per unit of dRTT/dT and per Mbit/s.
pub const LATENCY_COEFFICIENT: f64 = 900.0;
/// Loss coefficient c, per unit of loss rate and per Mbit/s.
pub const LOSS_COEFFICIENT: f64 = 11.35;
/// Probing step ε: the two rates of a pair are r(1 ± ε).
pub const PROBING_STEP: f64 = 0.05;
/// θ₀: rate change per unit utility gradient, Mbit/s (port's
/// `kUtilityGradientToRateChangeFactor`).
pub const GRADIENT_TO_RATE: f64 = 1.0;
/// Confidence amplifier m = ((rounds + 1) div 2)^1.2 (port's
/// `kRateChangeAmplifyExponent`).
pub const AMPLIFY_EXPONENT: f64 = 1.2;
/// Dynamic change boundary ω₀: a step is at most this fraction of the rate…
pub const INITIAL_MAX_STEP: f64 = 0.05;
/// …plus this much for each consecutive time the bound was hit.
pub const INCREMENTAL_STEP: f64 = 0.05;
/// Smallest rate change, Mbit/s (500 kbit/s: smaller steps drown in noise).
pub const MIN_RATE_CHANGE_MBPS: f64 = 500_000.0 / MEGABIT;
/// Smallest sending rate, Mbit/s (500 kbit/s).
pub const MIN_RATE_MBPS: f64 = 500_000.0 / MEGABIT;
/// Largest sending rate, Mbit/s (about 10 Tbit/s): only guards the
/// arithmetic, no path in a simulation comes near it.
const MAX_RATE_MBPS: f64 = 1.0e7;
/// An MI carries at least this many packets at its rate
/// (`kMinimumPacketsPerInterval`), so its loss rate means something.
pub const MIN_PACKETS_PER_MI: f64 = 20.0;
/// Pairs of MIs per probing round (4 MIs in 2 pairs; see the module doc).
pub const PROBING_PAIRS: usize = 2;
/// In STARTING a gradient that changes the RTT by less than this over the
/// MI is ignored (the port's STARTING tolerance, `1000.0 /
/// interval_duration` with the duration in µs), µs.
const STARTING_RTT_TOLERANCE_US: f64 = 1_000.0;
/// cwnd = CWND_GAIN · rate · srtt: a cap that leaves the rate to pacing (kernel `pcc_set_cwnd`).
const CWND_GAIN: f64 = 2.0;
/// cwnd floor, packets (kernel `pcc_set_cwnd`).
const MIN_CWND: u32 = 4;
/// srtt to use before the first sample, µs (kernel `pcc_get_rtt`, Linux BBR).
const NOMINAL_RTT_US: u64 = 1_000;

/// Vivace's parameters: the utility's constants and the probing step,
/// defaults from the QUIC port (`pcc_utility_manager.cpp`,
/// `pcc_vivace_sender.cpp`).
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "exponent",
        kind: ParamKind::Float { min: 0.1, max: 1.0 },
        default: ParamDefault::Float(SENDING_RATE_EXPONENT),
        doc: "t in u = x^t - b*x*dRTT/dT - c*x*L (dimensionless, below 1 for fairness); 0.9, PCC-Uspace kSendingRateExponent",
    },
    ParamSpec {
        name: "latency_coefficient",
        kind: ParamKind::Float { min: 0.0, max: 1.0e5 },
        default: ParamDefault::Float(LATENCY_COEFFICIENT),
        doc: "b, the penalty per unit RTT gradient (s/s) per Mbit/s; 900, PCC-Uspace kLatencyCoefficient; 0 gives the loss-only utility",
    },
    ParamSpec {
        name: "loss_coefficient",
        kind: ParamKind::Float { min: 0.0, max: 1.0e5 },
        default: ParamDefault::Float(LOSS_COEFFICIENT),
        doc: "c, the penalty per unit loss rate per Mbit/s; 11.35, PCC-Uspace kVivaceLossCoefficient",
    },
    ParamSpec {
        name: "probing_step",
        kind: ParamKind::Float { min: 0.01, max: 0.25 },
        default: ParamDefault::Float(PROBING_STEP),
        doc: "epsilon: probing rates are r(1 +- epsilon) (dimensionless); 0.05 in the QUIC port, the kernel module and the NSDI-2018 prototype",
    },
    ParamSpec {
        name: "mi_rtts",
        kind: ParamKind::Float { min: 0.5, max: 4.0 },
        default: ParamDefault::Float(1.5),
        doc: "monitor interval length in smoothed RTTs (at least 20 packets at the MI's rate); 1.5, PCC-Uspace QUIC port ComputeMonitorDuration (UDT port: 1.0)",
    },
    ParamSpec {
        name: "seed",
        kind: ParamKind::Int { min: 0, max: i64::MAX },
        default: ParamDefault::Int(0),
        doc: "seed for the random order of the two rates in each probing pair, mixed with the simulator's per-flow seed; dimensionless",
    },
];

/// Typed Vivace configuration (see [`PARAMS`]).
#[derive(Clone, Debug, PartialEq)]
pub struct VivaceConfig {
    /// t.
    pub exponent: f64,
    /// b, per unit dRTT/dT per Mbit/s.
    pub latency_coefficient: f64,
    /// c, per unit loss rate per Mbit/s.
    pub loss_coefficient: f64,
    /// ε.
    pub probing_step: f64,
    /// MI length in srtt.
    pub mi_rtts: f64,
    pub seed: u64,
}

impl Default for VivaceConfig {
    fn default() -> Self {
        VivaceConfig {
            exponent: SENDING_RATE_EXPONENT,
            latency_coefficient: LATENCY_COEFFICIENT,
            loss_coefficient: LOSS_COEFFICIENT,
            probing_step: PROBING_STEP,
            mi_rtts: 1.5,
            seed: 0,
        }
    }
}

impl VivaceConfig {
    /// Reads resolved registry parameters.
    pub fn from_params(p: &Params) -> VivaceConfig {
        VivaceConfig {
            exponent: p.float("exponent"),
            latency_coefficient: p.float("latency_coefficient"),
            loss_coefficient: p.float("loss_coefficient"),
            probing_step: p.float("probing_step"),
            mi_rtts: p.float("mi_rtts"),
            seed: p.int("seed").max(0) as u64,
        }
    }

    /// Port `CalculateUtilityVivace`: u(x) = x^t − b·x·g − c·x·L, x in Mbit/s
    /// (2^20 bit), g = dRTT/dT (already filtered: ≥ 0), L the loss rate.
    pub fn utility(&self, x_mbps: f64, rtt_gradient: f64, loss_rate: f64) -> f64 {
        x_mbps.powf(self.exponent)
            - self.latency_coefficient * x_mbps * rtt_gradient
            - self.loss_coefficient * x_mbps * loss_rate
    }
}

/// The port's sender modes; the number is what traces export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Double the rate each MI while utility grows.
    Starting = 0,
    /// Pairs of MIs at r(1 ± ε) to find the gradient's sign.
    Probing = 1,
    /// Gradient steps in the chosen direction (the port's DECISION_MADE).
    Moving = 2,
}

/// Direction of the rate change chosen by probing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Up,
    Down,
}

/// Least-squares fit of RTT (y, s) against send time (x, s), kept as sums
/// so an MI needs no per-packet storage. y is stored relative to the first
/// sample to keep the sums well conditioned.
#[derive(Clone, Copy, Debug, Default)]
struct Regression {
    n: u32,
    y0: f64,
    sx: f64,
    sy: f64,
    sxx: f64,
    sxy: f64,
    syy: f64,
}

impl Regression {
    fn add(&mut self, x: f64, y: f64) {
        if self.n == 0 {
            self.y0 = y;
        }
        let y = y - self.y0;
        self.n += 1;
        self.sx += x;
        self.sy += y;
        self.sxx += x * x;
        self.sxy += x * y;
        self.syy += y * y;
    }

    /// (slope, RMS residual / mean y), or None with fewer than two distinct x.
    fn fit(&self) -> Option<(f64, f64)> {
        if self.n < 2 {
            return None;
        }
        let n = self.n as f64;
        let sxx = self.sxx - self.sx * self.sx / n;
        if sxx <= 0.0 {
            return None;
        }
        let sxy = self.sxy - self.sx * self.sy / n;
        let syy = self.syy - self.sy * self.sy / n;
        let slope = sxy / sxx;
        let sse = (syy - slope * sxy).max(0.0);
        let mean_y = self.y0 + self.sy / n;
        let rel_err = if mean_y > 0.0 { (sse / n).sqrt() / mean_y } else { f64::INFINITY };
        Some((slope, rel_err))
    }
}

/// One useful monitor interval.
#[derive(Clone, Copy, Debug)]
struct Mi {
    /// Target sending rate, Mbit/s.
    rate_mbps: f64,
    /// When it became the interval being sent, ns.
    start_ns: u64,
    /// When it stopped being sent, ns (`u64::MAX` while sending).
    end_ns: u64,
    /// Transmissions it owns: [sent_start, sent_end) (`u64::MAX` while sending).
    sent_start: u64,
    sent_end: u64,
    pkts_sent: u64,
    first_send_ns: u64,
    last_send_ns: u64,
    /// Of its transmissions: accounted for as delivered / lost.
    delivered: u64,
    lost: u64,
    rtt: Regression,
}

/// What an MI measured, and its utility.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MiResult {
    /// Target rate, Mbit/s.
    pub rate_mbps: f64,
    /// Actual sending rate x, Mbit/s.
    pub x_mbps: f64,
    /// dRTT/dT after the significance filter and the clamp at 0.
    pub rtt_gradient: f64,
    pub loss_rate: f64,
    pub utility: f64,
}

/// Per-flow Vivace state.
#[derive(Clone, Debug)]
pub struct Vivace {
    cfg: VivaceConfig,
    rng: SplitMix64,
    mss: u32,
    init_cwnd: u32,
    mode: Mode,
    /// Central sending rate r, Mbit/s.
    rate_mbps: f64,
    direction: Direction,
    /// Consecutive MOVING steps (the port's `rounds_`), or probing rounds.
    rounds: u32,
    /// k of the change bound ω = ω₀ + δω·k.
    bound_steps: u32,
    /// The reference point for STARTING and MOVING (the port's `latest_utility_info_`).
    latest: Option<MiResult>,
    /// The last MI evaluated, for traces.
    last: Option<MiResult>,
    /// Probing round: the four rates in sending order, how many MIs were
    /// started, and the results so far.
    probe_rates: [f64; 2 * PROBING_PAIRS],
    probe_next: usize,
    probe_results: Vec<MiResult>,
    /// Useful MIs not yet evaluated, oldest first; the back one is being
    /// sent while `sending`.
    mis: VecDeque<Mi>,
    sending: bool,
    /// Transmissions so far (counted in `on_send`).
    sent: u64,
    /// Transmissions accounted for (delivered or lost) so far.
    accounted: u64,
    /// `tp.lost` at the last accounting.
    last_lost: u64,
    /// An RTT sample has been seen and the first MI may start.
    has_rtt: bool,
    /// In Loss state after a timeout: MI accounting frozen.
    frozen: bool,
    decisions: u64,
}

impl Vivace {
    pub fn new(cfg: VivaceConfig) -> Vivace {
        Vivace {
            rng: SplitMix64::new(cfg.seed),
            cfg,
            mss: 1448,
            init_cwnd: 10,
            mode: Mode::Starting,
            rate_mbps: MIN_RATE_MBPS,
            direction: Direction::Up,
            rounds: 1,
            bound_steps: 0,
            latest: None,
            last: None,
            probe_rates: [0.0; 2 * PROBING_PAIRS],
            probe_next: 0,
            probe_results: Vec::with_capacity(2 * PROBING_PAIRS),
            mis: VecDeque::with_capacity(2 * PROBING_PAIRS),
            sending: false,
            sent: 0,
            accounted: 0,
            last_lost: 0,
            has_rtt: false,
            frozen: false,
            decisions: 0,
        }
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The central sending rate r, Mbit/s (2^20 bit).
    pub fn rate_mbps(&self) -> f64 {
        self.rate_mbps
    }

    /// Rate in Mbit/s → pacing rate in bytes per second of payload.
    fn bytes_per_sec(rate_mbps: f64) -> u64 {
        (rate_mbps * MEGABIT / 8.0).clamp(1.0, u64::MAX as f64 / 2.0) as u64
    }

    fn clamp_rate(r: f64) -> f64 {
        if r.is_nan() {
            return MIN_RATE_MBPS;
        }
        r.clamp(MIN_RATE_MBPS, MAX_RATE_MBPS)
    }

    /// The rate the sender should pace at now: the MI being sent, or the
    /// central rate while waiting for utilities.
    fn current_rate(&self) -> f64 {
        match self.mis.back() {
            Some(mi) if self.sending => mi.rate_mbps,
            _ => self.rate_mbps,
        }
    }

    /// Sets pacing and the cwnd cap (kernel `start_interval`, `pcc_set_cwnd`).
    fn apply(&self, tp: &mut Sock) {
        let rate = Self::bytes_per_sec(self.current_rate());
        tp.pacing_rate = rate;
        let srtt_us = if tp.srtt_us > 0 { tp.srtt_us } else { NOMINAL_RTT_US };
        let cwnd = CWND_GAIN * rate as f64 * srtt_us as f64 / 1e6 / tp.mss.max(1) as f64;
        let cwnd = (cwnd.min(u32::MAX as f64) as u32).max(MIN_CWND);
        tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp).max(1);
    }

    /// Port `ComputeMonitorDuration`: max(mi_rtts · srtt, time to send 20
    /// packets at the MI rate), ns.
    fn mi_duration_ns(&self, tp: &Sock, rate_mbps: f64) -> u64 {
        let by_rtt = self.cfg.mi_rtts * tp.srtt_us as f64 * 1e3;
        let by_pkts = MIN_PACKETS_PER_MI * tp.mss as f64 * 8.0 / (rate_mbps * MEGABIT) * 1e9;
        by_rtt.max(by_pkts).min(u64::MAX as f64 / 4.0) as u64
    }

    /// Starts a useful MI at the rate the mode asks for.
    fn start_mi(&mut self, now_ns: u64) {
        let rate_mbps = match self.mode {
            Mode::Probing => {
                let r = self.probe_rates[self.probe_next];
                self.probe_next += 1;
                r
            }
            Mode::Starting | Mode::Moving => self.rate_mbps,
        };
        self.mis.push_back(Mi {
            rate_mbps,
            start_ns: now_ns,
            end_ns: u64::MAX,
            sent_start: self.sent,
            sent_end: u64::MAX,
            pkts_sent: 0,
            first_send_ns: 0,
            last_send_ns: 0,
            delivered: 0,
            lost: 0,
            rtt: Regression::default(),
        });
        self.sending = true;
    }

    /// Whether another useful MI may start now (port `CreateUsefulInterval`:
    /// one at a time in STARTING and MOVING, 2·pairs per probing round).
    fn may_start_mi(&self) -> bool {
        match self.mode {
            Mode::Starting | Mode::Moving => self.mis.is_empty(),
            Mode::Probing => self.probe_next < 2 * PROBING_PAIRS,
        }
    }

    /// A new probing round around the central rate, the order within each
    /// pair drawn at random (port `MaybeSetSendingRate`).
    fn start_probing_round(&mut self) {
        let eps = self.cfg.probing_step;
        for pair in 0..PROBING_PAIRS {
            let (hi, lo) = (self.rate_mbps * (1.0 + eps), self.rate_mbps * (1.0 - eps));
            let up_first = self.rng.below(2) == 1;
            self.probe_rates[2 * pair] = if up_first { hi } else { lo };
            self.probe_rates[2 * pair + 1] = if up_first { lo } else { hi };
        }
        self.probe_next = 0;
        self.probe_results.clear();
    }

    fn drop_mis(&mut self) {
        self.mis.clear();
        self.sending = false;
    }

    /// Enters PROBING with a fresh round (port `EnterProbing`).
    fn enter_probing(&mut self) {
        self.mode = Mode::Probing;
        self.start_probing_round();
    }

    /// Splits the advance of the accounted position into losses (oldest
    /// positions first) and deliveries, and credits the MIs that own them.
    fn account(&mut self, tp: &Sock) {
        let pos_now = self.sent.saturating_sub(tp.packets_in_flight() as u64);
        let lost_now = tp.lost;
        if pos_now <= self.accounted {
            // Nothing new (or the position moved back, which the sender does
            // not do; re-anchor rather than guess).
            self.accounted = pos_now;
            self.last_lost = lost_now;
            return;
        }
        let mut losses = lost_now.saturating_sub(self.last_lost).min(pos_now - self.accounted);
        self.last_lost = lost_now;
        let mut pos = self.accounted;
        for mi in self.mis.iter_mut() {
            if pos >= pos_now {
                break;
            }
            // Positions before this MI (between intervals) are consumed too.
            if pos < mi.sent_start {
                let gap = mi.sent_start.min(pos_now) - pos;
                losses -= losses.min(gap);
                pos += gap;
            }
            let hi = mi.sent_end.min(pos_now);
            if pos < hi {
                let n = hi - pos;
                let l = losses.min(n);
                losses -= l;
                mi.lost += l;
                mi.delivered += n - l;
                pos = hi;
            }
        }
        self.accounted = pos_now;
    }

    /// Gives an RTT sample to the MI that sent its packet.
    fn add_rtt_sample(&mut self, send_ns: u64, rtt_us: u64) {
        if let Some(mi) = self.mis.iter_mut().rev().find(|mi| mi.start_ns <= send_ns && send_ns < mi.end_ns) {
            mi.rtt.add((send_ns - mi.start_ns) as f64 / 1e9, rtt_us as f64 / 1e6);
        }
    }

    /// The MI's utility (port `CalculateUtilityVivace`), or None when it sent
    /// fewer than two packets.
    fn evaluate(&self, mi: &Mi) -> Option<MiResult> {
        if mi.pkts_sent < 2 || mi.rate_mbps <= 0.0 {
            return None;
        }
        // Port ComputeSimpleMetrics: the send period plus one packet's
        // transfer time at the MI's rate.
        let pkt_bits = self.mss as f64 * 8.0;
        let dur_s = (mi.last_send_ns - mi.first_send_ns) as f64 / 1e9 + pkt_bits / (mi.rate_mbps * MEGABIT);
        let x_mbps = mi.pkts_sent as f64 * pkt_bits / dur_s / MEGABIT;
        let counted = mi.delivered + mi.lost;
        let loss_rate = if counted > 0 { mi.lost as f64 / counted as f64 } else { 0.0 };
        let mut g = match mi.rtt.fit() {
            // Port DetermineToleranceGeneral: only a gradient larger than the
            // fit's relative error counts.
            Some((slope, rel_err)) if rel_err < slope.abs() => slope,
            _ => 0.0,
        };
        // Port CalculateUtilityProportional: in STARTING, an RTT change of
        // under 1 ms over the MI is noise.
        if self.mode == Mode::Starting && g.abs() * dur_s * 1e6 < STARTING_RTT_TOLERANCE_US {
            g = 0.0;
        }
        // Negative gradients are clamped to 0 (a draining queue earns nothing).
        let g = g.max(0.0);
        let utility = self.cfg.utility(x_mbps, g, loss_rate);
        Some(MiResult { rate_mbps: mi.rate_mbps, x_mbps, rtt_gradient: g, loss_rate, utility })
    }

    /// Port `ComputeRateChange`: the step Δr, Mbit/s, from the
    /// utility gradient γ = Δu/Δr, amplified by m in MOVING, bounded by
    /// ω·r and at least the minimum change. `probing` selects the probing
    /// form (γ averaged over the pairs that agree with `direction`).
    fn compute_rate_change(&mut self, probing: bool, results: &[MiResult]) -> f64 {
        let (d_rate, d_utility) = if probing {
            let d_rate = (results[0].rate_mbps - results[1].rate_mbps).abs();
            let mut d_u = 0.0;
            for pair in results.chunks_exact(2) {
                if pair_direction(pair[0], pair[1]) != self.direction {
                    continue;
                }
                d_u += (pair[0].utility - pair[1].utility).abs();
            }
            (d_rate, d_u / PROBING_PAIRS as f64)
        } else {
            let latest = self.latest.unwrap_or(results[0]);
            ((results[0].rate_mbps - latest.rate_mbps).abs(), (results[0].utility - latest.utility).abs())
        };
        let gradient = if d_rate > 0.0 { d_utility / d_rate } else { 0.0 };
        let mut change = gradient * GRADIENT_TO_RATE;
        if probing {
            // Entering MOVING resets the allowance.
            self.bound_steps = 0;
        } else {
            change *= amplifier(self.rounds);
        }
        let max_change = self.rate_mbps * (INITIAL_MAX_STEP + INCREMENTAL_STEP * self.bound_steps as f64);
        if change > max_change {
            change = max_change;
            self.bound_steps += 1;
        } else if self.bound_steps > 0 {
            self.bound_steps -= 1;
        }
        change.max(MIN_RATE_CHANGE_MBPS)
    }

    /// STARTING: double while utility grows, else back to the last good rate.
    fn on_starting(&mut self, r: MiResult) {
        let prev = self.latest.map_or(0.0, |l| l.utility);
        if r.utility > prev {
            self.rate_mbps = Self::clamp_rate(self.rate_mbps * 2.0);
            self.latest = Some(r);
            self.rounds += 1;
        } else {
            // Port EnterProbing from STARTING: halve (the rate before the
            // last doubling).
            self.rate_mbps = Self::clamp_rate(self.rate_mbps * 0.5);
            self.rounds = 1;
            self.enter_probing();
        }
        self.decisions += 1;
    }

    /// PROBING: decide once all four MIs are in (port `OnUtilityAvailable`,
    /// `CanMakeDecision`, `SetRateChangeDirection`, `EnterDecisionMade`).
    fn on_probing_done(&mut self) {
        let results = std::mem::take(&mut self.probe_results);
        let ups = results.chunks_exact(2).filter(|p| pair_direction(p[0], p[1]) == Direction::Up).count();
        let downs = PROBING_PAIRS - ups;
        let decided = ups > PROBING_PAIRS / 2 || downs == PROBING_PAIRS;
        if decided {
            self.direction = if ups > downs { Direction::Up } else { Direction::Down };
            // The reference point: the better MI of the last agreeing pair.
            for p in results.chunks_exact(2) {
                if pair_direction(p[0], p[1]) == self.direction {
                    self.latest = Some(if p[0].utility > p[1].utility { p[0] } else { p[1] });
                }
            }
            let eps = self.cfg.probing_step;
            self.rate_mbps *= match self.direction {
                Direction::Up => 1.0 + eps,
                Direction::Down => 1.0 - eps,
            };
            self.rounds = 1;
            let change = self.compute_rate_change(true, &results);
            self.rate_mbps += match self.direction {
                Direction::Up => change,
                Direction::Down => -change,
            };
            if self.rate_mbps < MIN_RATE_MBPS {
                self.rate_mbps = MIN_RATE_MBPS;
                self.bound_steps = 0;
                self.enter_probing();
            } else {
                self.rate_mbps = Self::clamp_rate(self.rate_mbps);
                self.mode = Mode::Moving;
            }
        } else {
            // Probe again around the same central rate.
            self.rounds += 1;
            self.enter_probing();
            if self.rounds > 1 && self.rate_mbps <= MIN_RATE_MBPS {
                // Port: at the minimum rate, restart in STARTING.
                self.rate_mbps = MIN_RATE_MBPS;
                self.bound_steps = 0;
                self.rounds = 1;
                self.latest = None;
                self.mode = Mode::Starting;
            }
        }
        self.probe_results = results;
        self.probe_results.clear();
        self.decisions += 1;
    }

    /// MOVING: keep stepping while utility improves in the chosen
    /// direction, else step back and probe (port `OnUtilityAvailable`
    /// DECISION_MADE case, `EnterDecisionMade`, vivace `EnterProbing`).
    fn on_moving(&mut self, r: MiResult) {
        let latest = self.latest.unwrap_or(r);
        let better = r.utility > latest.utility;
        let worse = r.utility < latest.utility;
        let (higher, lower) = (r.rate_mbps > latest.rate_mbps, r.rate_mbps < latest.rate_mbps);
        let improving = match self.direction {
            Direction::Up => (better && higher) || (worse && lower),
            Direction::Down => (better && lower) || (worse && higher),
        };
        let sign = match self.direction {
            Direction::Up => 1.0,
            Direction::Down => -1.0,
        };
        if improving {
            self.rounds += 1;
            let change = self.compute_rate_change(false, &[r]);
            self.rate_mbps += sign * change;
            self.latest = Some(r);
            if self.rate_mbps < MIN_RATE_MBPS {
                self.rate_mbps = MIN_RATE_MBPS;
                self.rounds = 1;
                self.bound_steps = 0;
                self.enter_probing();
            } else {
                self.rate_mbps = Self::clamp_rate(self.rate_mbps);
            }
        } else {
            self.rounds = 1;
            let change = self.compute_rate_change(false, &[r]);
            self.rate_mbps -= sign * change;
            if self.rate_mbps < MIN_RATE_MBPS {
                self.rate_mbps = MIN_RATE_MBPS;
                self.bound_steps = 0;
            }
            self.rate_mbps = Self::clamp_rate(self.rate_mbps);
            self.enter_probing();
        }
        self.decisions += 1;
    }

    /// Runs the state machine on one finished MI.
    fn on_mi_finished(&mut self, mi: Mi) {
        let Some(r) = self.evaluate(&mi) else {
            // Too few packets to measure (application-limited). A probing
            // round needs all four, so it starts over.
            if self.mode == Mode::Probing {
                self.drop_mis();
                self.start_probing_round();
            }
            return;
        };
        self.last = Some(r);
        match self.mode {
            Mode::Starting => self.on_starting(r),
            Mode::Moving => self.on_moving(r),
            Mode::Probing => {
                self.probe_results.push(r);
                if self.probe_results.len() == 2 * PROBING_PAIRS {
                    self.on_probing_done();
                }
            }
        }
    }
}

/// Which direction a pair of MIs prefers (port `CanMakeDecision`: the
/// higher-utility MI's rate compared with the other's).
fn pair_direction(a: MiResult, b: MiResult) -> Direction {
    let up = if a.utility > b.utility { a.rate_mbps > b.rate_mbps } else { a.rate_mbps < b.rate_mbps };
    if up {
        Direction::Up
    } else {
        Direction::Down
    }
}

/// Confidence amplifier of the QUIC port (`ComputeRateChange`):
/// ((rounds + 1) div 2)^1.2, the division an integer one.
pub fn amplifier(rounds: u32) -> f64 {
    ((rounds.saturating_add(1) / 2) as f64).powf(AMPLIFY_EXPONENT)
}

impl Vivace {
    /// Everything `cong_control` does before setting pacing and cwnd
    /// (kernel `pcc_process`).
    fn update(&mut self, tp: &Sock, rs: &RateSample) {
        let now_ns = tp.now_ns;
        if !self.has_rtt {
            if tp.srtt_us == 0 {
                self.account(tp);
                return;
            }
            // The port's starting rate: the initial window per RTT.
            self.has_rtt = true;
            let bits = self.init_cwnd as f64 * self.mss as f64 * 8.0;
            self.rate_mbps = Self::clamp_rate(bits / (tp.srtt_us as f64 / 1e6) / MEGABIT);
        }
        self.account(tp);
        if rs.rtt_us > 0 {
            let rtt_us = rs.rtt_us as u64;
            self.add_rtt_sample(now_ns.saturating_sub(rtt_us.saturating_mul(1_000)), rtt_us);
        }
        // Close the MI being sent once it is long enough (kernel
        // `send_interval_ended`; port `AllPacketsSent`).
        if self.sending {
            if let Some(mi) = self.mis.back() {
                let long_enough = now_ns.saturating_sub(mi.start_ns) >= self.mi_duration_ns(tp, mi.rate_mbps);
                if long_enough && mi.pkts_sent >= 2 {
                    let sent = self.sent;
                    let mi = self.mis.back_mut().expect("checked above");
                    mi.end_ns = now_ns;
                    mi.sent_end = sent;
                    self.sending = false;
                }
            }
        }
        // Evaluate the MIs whose transmissions are all accounted for, oldest first.
        while let Some(mi) = self.mis.front() {
            if mi.sent_end == u64::MAX || self.accounted < mi.sent_end {
                break;
            }
            let mi = self.mis.pop_front().expect("checked above");
            self.on_mi_finished(mi);
        }
        if !self.sending && self.may_start_mi() {
            self.start_mi(now_ns);
        }
    }
}

impl CongestionControl for Vivace {
    /// Kernel `pcc_init`: STARTING, no ssthresh, pacing. Before the first RTT
    /// sample the initial window is paced over a nominal 1 ms.
    fn init(&mut self, tp: &mut Sock) {
        let cfg = self.cfg.clone();
        *self = Vivace::new(cfg);
        self.rng = SplitMix64::new(mix_seed(self.cfg.seed, tp.rng_seed));
        self.mss = tp.mss.max(1);
        self.init_cwnd = tp.snd_cwnd.max(1);
        self.last_lost = tp.lost;
        tp.snd_ssthresh = INFINITE_SSTHRESH;
        let rtt_us = if tp.srtt_us > 0 { tp.srtt_us } else { NOMINAL_RTT_US };
        let bits = self.init_cwnd as f64 * self.mss as f64 * 8.0;
        self.rate_mbps = Self::clamp_rate(bits / (rtt_us as f64 / 1e6) / MEGABIT);
        tp.pacing_rate = Self::bytes_per_sec(self.rate_mbps);
    }

    /// Kernel `pcc_ssthresh`: Vivace does not use ssthresh.
    fn ssthresh(&mut self, _tp: &Sock) -> u32 {
        INFINITE_SSTHRESH
    }

    /// cwnd is set in `cong_control`, which always handles the ACK.
    fn cong_avoid(&mut self, _tp: &mut Sock, _acked: u32) {}

    /// Kernel `pcc_process`: MI bookkeeping and the state machine, then
    /// pacing at the MI's rate and cwnd = max(4, 2·rate·srtt).
    fn cong_control(&mut self, tp: &mut Sock, rs: &RateSample) -> bool {
        if !self.frozen {
            self.update(tp, rs);
        }
        self.apply(tp);
        true
    }

    /// Kernel `pcc_set_state`: a timeout's Loss state freezes MI accounting;
    /// on leaving it the counts are re-anchored and probing restarts.
    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        if new_state == CaState::Loss {
            if !self.frozen {
                self.frozen = true;
                self.drop_mis();
            }
        } else if self.frozen {
            self.frozen = false;
            self.accounted = self.sent.saturating_sub(tp.packets_in_flight() as u64);
            self.last_lost = tp.lost;
            self.rounds = 1;
            self.bound_steps = 0;
            if self.has_rtt {
                self.enter_probing();
            }
        }
        self.apply(tp);
    }

    /// A timeout halves the rate (NSDI-2018 prototype `onTimeout`); a
    /// restart after an idle period longer than an RTT (and than two pacing
    /// gaps, so slow paced sending is not idleness) drops the MIs, whose
    /// measurements would span the gap.
    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        match ev {
            CaEvent::Loss => {
                self.rate_mbps = Self::clamp_rate(self.rate_mbps * 0.5);
                self.apply(tp);
            }
            CaEvent::TxStart { idle_us } => {
                let gap_us = self.mss as f64 * 8.0 / (self.current_rate() * MEGABIT) * 1e6;
                let idle = idle_us as f64 > (tp.srtt_us as f64).max(2.0 * gap_us);
                if idle && !self.mis.is_empty() {
                    self.drop_mis();
                    if self.mode == Mode::Probing {
                        self.start_probing_round();
                    }
                    self.apply(tp);
                }
            }
            _ => {}
        }
    }

    /// Kernel `pcc_undo_cwnd`: losses never reduced cwnd, so keep it.
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        tp.snd_cwnd
    }

    /// Numbers every transmission and stamps the MI being sent.
    fn on_send(&mut self, tp: &Sock, _hdr: &mut crate::CcHeader) {
        self.sent += 1;
        if self.sending {
            if let Some(mi) = self.mis.back_mut() {
                if mi.pkts_sent == 0 {
                    mi.first_send_ns = tp.now_ns;
                }
                mi.last_send_ns = tp.now_ns;
                mi.pkts_sent += 1;
            }
        }
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &["mode", "rate_bps", "utility", "rtt_gradient", "loss_rate", "rounds", "bound_steps", "decisions"]
    }

    /// mode: 0 STARTING, 1 PROBING, 2 MOVING; rate_bps: the pacing rate in
    /// bit/s of payload (the MI's, or the central rate between MIs);
    /// utility, rtt_gradient (s/s after filtering) and loss_rate of the last
    /// MI evaluated (NaN before the first); rounds: consecutive MOVING steps;
    /// bound_steps: k of the change bound ω = 0.05 + 0.05k; decisions: MIs
    /// and probing rounds acted on so far.
    fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
        out[0] = self.mode as u8 as f64;
        out[1] = self.current_rate() * MEGABIT;
        out[2] = self.last.map_or(f64::NAN, |r| r.utility);
        out[3] = self.last.map_or(f64::NAN, |r| r.rtt_gradient);
        out[4] = self.last.map_or(f64::NAN, |r| r.loss_rate);
        out[5] = self.rounds as f64;
        out[6] = self.bound_steps as f64;
        out[7] = self.decisions as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::MSS;

    macro_rules! assert_close {
        ($a:expr, $b:expr, $tol:expr) => {{
            let (a, b) = ($a as f64, $b as f64);
            assert!((a - b).abs() <= $tol, "{} = {a}, expected {b} ± {}", stringify!($a), $tol);
        }};
    }

    fn vivace() -> Vivace {
        Vivace::new(VivaceConfig::default())
    }

    fn result(rate_mbps: f64, utility: f64) -> MiResult {
        MiResult { rate_mbps, x_mbps: rate_mbps, rtt_gradient: 0.0, loss_rate: 0.0, utility }
    }

    /// VV1, x in Mbit/s of 2^20 bit: 50^0.9 = e^(0.9·ln 50) = 33.8122;
    /// with L = 1 %: −11.35·50·0.01 = −5.675 → 28.1372; with dRTT/dT = 0.01:
    /// −900·50·0.01 = −450 → −416.1878.
    #[test]
    fn utility_vv1() {
        let c = VivaceConfig::default();
        assert_close!(c.utility(50.0, 0.0, 0.0), 33.812, 5e-4);
        assert_close!(c.utility(50.0, 0.0, 0.01), 28.137, 5e-4);
        assert_close!(c.utility(50.0, 0.01, 0.0), -416.19, 5e-3);
        // Zero rate, zero utility; the loss-only variant (b = 0) ignores latency.
        assert_eq!(c.utility(0.0, 0.0, 0.0), 0.0);
        let loss_only = VivaceConfig { latency_coefficient: 0.0, ..VivaceConfig::default() };
        assert_close!(loss_only.utility(50.0, 0.01, 0.0), 33.812, 5e-4);
    }

    /// Derived from the utility: without queueing, du/dx = 0.9·x^−0.1 − 11.35·L₀
    /// is positive iff L₀ < L* = (0.9/11.35)·x^−0.1: 7.93 % at 1, 6.30 % at 10,
    /// 5.00 % at 100, 3.97 % at 1000 Mbit/s.
    #[test]
    fn random_loss_tolerance_l_star() {
        let c = VivaceConfig::default();
        for (x, l_star) in [(1.0, 0.0793), (10.0, 0.0630), (100.0, 0.0500), (1000.0, 0.0397)] {
            let l = 0.9 / 11.35 * f64::powf(x, -0.1);
            assert_close!(l, l_star, 5e-5);
            // Just below L* utility still grows with the rate, just above it falls.
            let du = |loss: f64| c.utility(x * 1.001, 0.0, loss) - c.utility(x, 0.0, loss);
            assert!(du(l * 0.98) > 0.0 && du(l * 1.02) < 0.0, "x = {x}");
        }
    }

    /// VV2: probing at r = 100 → 105 / 95, u = 65.928 / 60.249, so
    /// γ = 5.679 / 10 = 0.5679 per Mbit/s and Δr = θ₀·γ = 0.568 Mbit/s (m = 1;
    /// the bound, 5 % of 105 = 5.25, is not hit; above the 0.477 Mbit/s
    /// minimum). The port first moves to r(1+ε) = 105, so r = 105.568, and
    /// the reference point is the better MI of the last agreeing pair.
    #[test]
    fn probing_gradient_vv2() {
        let c = VivaceConfig::default();
        let (u_hi, u_lo) = (c.utility(105.0, 0.0, 0.0), c.utility(95.0, 0.0, 0.0));
        assert_close!(u_hi, 65.928, 5e-4);
        assert_close!(u_lo, 60.249, 5e-4);
        let mut v = vivace();
        v.rate_mbps = 100.0;
        v.mode = Mode::Probing;
        v.probe_results = vec![result(105.0, u_hi), result(95.0, u_lo), result(95.0, u_lo), result(105.0, u_hi)];
        v.on_probing_done();
        assert_eq!(v.mode, Mode::Moving);
        assert_eq!(v.direction, Direction::Up);
        assert_close!(v.rate_mbps - 105.0, 0.5679, 5e-4);
        assert_eq!(v.bound_steps, 0);
        assert_eq!(v.latest, Some(result(105.0, u_hi)));
    }

    /// Pairs that disagree give no decision: probe again around the same rate.
    #[test]
    fn probing_without_agreement_probes_again() {
        let mut v = vivace();
        v.rate_mbps = 100.0;
        v.mode = Mode::Probing;
        // Pair 1 prefers 105, pair 2 prefers 95.
        v.probe_results = vec![result(105.0, 2.0), result(95.0, 1.0), result(95.0, 2.0), result(105.0, 1.0)];
        v.on_probing_done();
        assert_eq!(v.mode, Mode::Probing);
        assert_eq!(v.rate_mbps, 100.0);
        assert_eq!(v.probe_next, 0);
        let mut rates = v.probe_rates;
        rates.sort_by(f64::total_cmp);
        assert_eq!(rates, [95.0, 95.0, 105.0, 105.0]);
        // Each pair holds one rate of each side.
        for p in v.probe_rates.chunks_exact(2) {
            assert_close!(p[0] + p[1], 200.0, 1e-9);
        }
    }

    /// VV3: the QUIC port's amplifier ((rounds + 1) div 2)^1.2 for rounds
    /// 1..5: 1, 1, 2^1.2 = 2.297, 2.297, 3^1.2 = 3.737.
    #[test]
    fn amplifier_vv3() {
        let m: Vec<f64> = (1..=5).map(amplifier).collect();
        assert_close!(m[0], 1.0, 1e-12);
        assert_close!(m[1], 1.0, 1e-12);
        assert_close!(m[2], 2.297, 5e-4);
        assert_close!(m[3], 2.297, 5e-4);
        assert_close!(m[4], 3.737, 5e-4);
    }

    /// VV4: change bound at r = 100 with ω = 0.05: a computed Δr of 12 is
    /// clamped to 5 and ω becomes 0.10 for next time; a next Δr of 3 (< 10)
    /// is used as is and the allowance is decremented.
    #[test]
    fn change_bound_vv4() {
        let mut v = vivace();
        v.rate_mbps = 100.0;
        v.mode = Mode::Moving;
        v.rounds = 1; // m = 1
        v.latest = Some(result(100.0, 0.0));
        // γ = 12 per Mbit/s → Δr = 12.
        assert_close!(v.compute_rate_change(false, &[result(101.0, 12.0)]), 5.0, 1e-9);
        assert_eq!(v.bound_steps, 1);
        assert_close!(v.compute_rate_change(false, &[result(101.0, 3.0)]), 3.0, 1e-9);
        assert_eq!(v.bound_steps, 0);
        // A tiny gradient still moves by the minimum step, 500 kbit/s.
        assert_close!(v.compute_rate_change(false, &[result(101.0, 0.01)]), 500_000.0 / MEGABIT, 1e-12);
    }

    /// MOVING keeps going while utility improves in its direction (with the
    /// amplifier growing), and steps back into PROBING when it does not.
    #[test]
    fn moving_continues_then_steps_back() {
        let mut v = vivace();
        v.mode = Mode::Moving;
        v.direction = Direction::Up;
        v.rate_mbps = 50.0;
        v.rounds = 1;
        v.latest = Some(result(49.0, 33.0));
        // Up 1 Mbit/s for +0.6 utility: improving; rounds 2 → m = 1, Δr = 0.6.
        v.on_moving(result(50.0, 33.6));
        assert_eq!((v.mode, v.rounds), (Mode::Moving, 2));
        assert_close!(v.rate_mbps, 50.6, 1e-9);
        // Up 0.6 for +0.36: rounds 3 → m = 2^1.2, Δr = 0.6·2.297 = 1.378.
        v.on_moving(result(50.6, 33.96));
        assert_eq!(v.rounds, 3);
        assert_close!(v.rate_mbps, 50.6 + 0.6 * 2f64.powf(1.2), 1e-9);
        // Utility fell although the rate rose: step back by θ₀·γ (m = 1).
        let r = v.rate_mbps;
        v.on_moving(result(r, 33.0));
        assert_eq!((v.mode, v.rounds), (Mode::Probing, 1));
        let gamma = (33.96 - 33.0) / (r - 50.6);
        assert_close!(v.rate_mbps, r - gamma.max(500_000.0 / MEGABIT), 1e-9);
    }

    /// STARTING doubles while utility grows and reverts one step when it does not.
    #[test]
    fn starting_doubles_then_halves() {
        let mut v = vivace();
        v.rate_mbps = 10.0;
        v.on_starting(result(10.0, 7.9));
        v.on_starting(result(20.0, 14.8));
        assert_eq!((v.mode, v.rate_mbps), (Mode::Starting, 40.0));
        v.on_starting(result(40.0, 10.0));
        assert_eq!((v.mode, v.rate_mbps), (Mode::Probing, 20.0));
    }

    /// Least squares on an exact line: slope and zero residual.
    #[test]
    fn regression_fits_a_line() {
        let mut r = Regression::default();
        for i in 0..50 {
            let x = i as f64 * 1e-3;
            r.add(x, 0.030 + 0.05 * x);
        }
        let (slope, err) = r.fit().unwrap();
        assert_close!(slope, 0.05, 1e-9);
        assert_close!(err, 0.0, 1e-6);
        // Noise larger than the trend: the relative error exceeds the slope.
        let mut r = Regression::default();
        for i in 0..50 {
            let x = i as f64 * 1e-3;
            r.add(x, 0.030 + 1e-5 * x + if i % 2 == 0 { 1e-3 } else { -1e-3 });
        }
        let (slope, err) = r.fit().unwrap();
        assert!(err >= slope.abs(), "slope {slope} err {err}");
        assert!(Regression::default().fit().is_none());
    }

    /// One MI through the hooks: 40 packets sent 0.5 ms apart, RTT rising
    /// 50 µs per packet (dRTT/dT = 50 µs / 500 µs = 0.1), packets 3, 13, 23,
    /// 33 lost and declared at the next ACK. The MI closes on the first ACK
    /// after its 20 ms (20 packets at the initial rate 10·1448 B / 10 ms),
    /// finishes when the last ACK arrives, and measures L = 0.1, g = 0.1.
    #[test]
    fn monitor_interval_accounting_through_hooks() {
        let mut v = vivace();
        let mut tp = Sock::new(MSS, 10);
        tp.paced = true;
        v.init(&mut tp);
        let t0_us = 1_000_000u64;
        let set_now = |tp: &mut Sock, us: u64| {
            tp.now_us = us;
            tp.now_ns = us * 1_000;
        };
        // First RTT sample: the rate becomes IW·MSS/RTT and the first MI starts.
        set_now(&mut tp, t0_us);
        tp.srtt_us = 10_000;
        tp.min_rtt_us = 10_000;
        v.cong_control(&mut tp, &RateSample { rtt_us: -1, delivered: -1, interval_us: -1, ..Default::default() });
        let r0 = 10.0 * MSS as f64 * 8.0 / 0.010 / MEGABIT;
        assert_close!(v.rate_mbps, r0, 1e-9);
        assert_eq!((v.mode, v.mis.len(), v.sending), (Mode::Starting, 1, true));
        assert_eq!(tp.pacing_rate, Vivace::bytes_per_sec(r0));

        // Events: (time µs, Some(i) = ACK of packet i / None = send next).
        let mut events: Vec<(u64, Option<u64>)> = (0..40).map(|i| (t0_us + 500 * i, None)).collect();
        events.extend((0..40).filter(|i| i % 10 != 3).map(|i| (t0_us + 10_000 + 550 * i, Some(i))));
        events.sort_by_key(|&(t, a)| (t, a.is_some()));
        let mut pending_lost = 0;
        for (t, ev) in events {
            set_now(&mut tp, t);
            match ev {
                None => {
                    tp.packets_out += 1;
                    v.on_send(&tp, &mut crate::CcHeader::default());
                }
                Some(i) => {
                    if i % 10 == 4 {
                        pending_lost += 1; // packet i − 1 was lost
                    }
                    tp.packets_out -= 1 + pending_lost;
                    tp.delivered += 1;
                    tp.lost += pending_lost as u64;
                    let rtt_us = 10_000 + 50 * i as i64;
                    let rs = RateSample { rtt_us, acked_sacked: 1, losses: pending_lost, ..Default::default() };
                    pending_lost = 0;
                    v.cong_control(&mut tp, &rs);
                }
            }
        }
        let r = v.last.expect("the MI was evaluated");
        assert_close!(r.loss_rate, 0.1, 1e-12);
        assert_close!(r.rtt_gradient, 0.1, 1e-9);
        let x = 40.0 * MSS as f64 * 8.0 / (0.0195 + MSS as f64 * 8.0 / (r0 * MEGABIT)) / MEGABIT;
        assert_close!(r.x_mbps, x, 1e-9);
        assert_close!(r.utility, x.powf(0.9) - 900.0 * x * 0.1 - 11.35 * x * 0.1, 1e-6);
        // Utility fell below STARTING's initial 0: back to half rate, probing.
        assert_eq!(v.mode, Mode::Probing);
        assert_close!(v.rate_mbps, r0 / 2.0, 1e-9);
        // cwnd is the cap 2·rate·srtt (the probing MI's rate is r0/2·(1 ± ε)).
        let rate = Vivace::bytes_per_sec(v.current_rate()) as f64;
        assert_eq!(tp.snd_cwnd, ((2.0 * rate * 0.010 / MSS as f64) as u32).max(4));
    }

    /// A single bottleneck for narrative tests: capacity `cap_bps` of
    /// payload, base RTT `base_us`, a drop-tail buffer of `buffer` packets.
    /// Each packet is acknowledged on its own; a dropped packet is declared
    /// lost with the next ACK; nothing is retransmitted (a stream of fresh
    /// packets is all congestion control sees).
    struct Path {
        cap_bps: f64,
        base_us: u64,
        buffer: u64,
    }

    /// Runs `v` over `path` for `secs`, calling `each_ack` after every ACK.
    fn drive(v: &mut Vivace, path: &Path, secs: f64, mut each_ack: impl FnMut(&Vivace, &Sock)) -> Sock {
        let mut tp = Sock::new(MSS, 10);
        tp.paced = true;
        v.init(&mut tp);
        let pkt_ns = MSS as f64 * 8.0 / path.cap_bps * 1e9;
        let end_ns = (secs * 1e9) as u64;
        let (mut now, mut next_send, mut link_free) = (0u64, 0u64, 0f64);
        // (arrival of the ACK or the would-be arrival of a drop, sent, dropped)
        let mut flight: VecDeque<(u64, u64, bool)> = VecDeque::new();
        let mut pending_lost = 0u32;
        while now < end_ns {
            let t_ack = flight.front().map_or(u64::MAX, |f| f.0);
            let t_send = if tp.packets_out < tp.snd_cwnd { next_send.max(now) } else { u64::MAX };
            now = t_ack.min(t_send);
            tp.now_ns = now;
            tp.now_us = now / 1_000;
            if t_send <= t_ack {
                let backlog = ((link_free - now as f64) / pkt_ns).max(0.0);
                let dropped = backlog >= path.buffer as f64;
                let arrival = if dropped {
                    now + path.base_us * 1_000
                } else {
                    link_free = link_free.max(now as f64) + pkt_ns;
                    link_free as u64 + path.base_us * 1_000
                };
                flight.push_back((arrival, now, dropped));
                tp.packets_out += 1;
                v.on_send(&tp, &mut crate::CcHeader::default());
                next_send = now + (MSS as f64 * 1e9 / tp.pacing_rate as f64) as u64;
                continue;
            }
            let (_, sent, dropped) = flight.pop_front().unwrap();
            if dropped {
                pending_lost += 1;
                continue;
            }
            let rtt_us = ((now - sent) / 1_000).max(1);
            tp.srtt_us = if tp.srtt_us == 0 { rtt_us } else { (7 * tp.srtt_us + rtt_us) / 8 };
            tp.min_rtt_us = tp.min_rtt_us.min(rtt_us);
            tp.packets_out -= 1 + pending_lost;
            tp.delivered += 1;
            tp.lost += pending_lost as u64;
            let rs = RateSample { rtt_us: rtt_us as i64, acked_sacked: 1, losses: pending_lost, ..Default::default() };
            pending_lost = 0;
            v.cong_control(&mut tp, &rs);
            each_ack(v, &tp);
        }
        tp
    }

    /// VI6: in STARTING the rate doubles with every MI evaluated
    /// until an MI's utility fails to grow, then returns to the rate before
    /// the last doubling and probes. On 20 Mbit/s (10^6), 40 ms, 1 BDP of
    /// buffer, the MI that ends start-up is the first one sent above the
    /// capacity by more than STARTING's 1 ms RTT-change tolerance allows.
    #[test]
    fn start_up_doubles_each_mi_then_reverts_one_step() {
        let path = Path { cap_bps: 20e6, base_us: 40_000, buffer: 67 };
        let mut v = vivace();
        // (mode, central rate) after each decision.
        let mut seen: Vec<(Mode, f64)> = vec![];
        let mut decisions = 0;
        drive(&mut v, &path, 3.0, |v, _| {
            if v.decisions != decisions {
                decisions = v.decisions;
                seen.push((v.mode, v.rate_mbps));
            }
        });
        let exit = seen.iter().position(|s| s.0 != Mode::Starting).expect("start-up ended");
        assert!(exit >= 2, "{seen:?}");
        // The first MI ran at IW·MSS per first RTT sample (40 ms plus one
        // packet's serialisation).
        let r0 = seen[0].1 / 2.0;
        assert_close!(r0, 10.0 * MSS as f64 * 8.0 / 0.040_58 / MEGABIT, 0.01);
        for (i, s) in seen[..exit].iter().enumerate() {
            assert_close!(s.1, r0 * 2f64.powi(i as i32 + 1), 1e-9);
        }
        // Reverts one step: the rate of the MI before the failed one.
        assert_eq!(seen[exit].0, Mode::Probing);
        let failed = seen[exit - 1].1;
        assert_close!(seen[exit].1, failed / 2.0, 1e-9);
        let cap_mbps = path.cap_bps / MEGABIT;
        assert!(failed > cap_mbps && seen[exit].1 < cap_mbps * 1.02, "{seen:?}");
    }

    /// A timeout halves the rate, freezes MI accounting in Loss and
    /// restarts probing afterwards; ssthresh stays infinite, undo keeps cwnd.
    #[test]
    fn timeout_halves_rate_and_restarts_probing() {
        let path = Path { cap_bps: 20e6, base_us: 40_000, buffer: 67 };
        let mut v = vivace();
        let mut tp = drive(&mut v, &path, 2.0, |_, _| {});
        assert_eq!(v.ssthresh(&tp), INFINITE_SSTHRESH);
        let r = v.rate_mbps;
        v.cwnd_event(&mut tp, CaEvent::Loss);
        v.set_state(&mut tp, CaState::Loss);
        assert_close!(v.rate_mbps, r / 2.0, 1e-9);
        assert!(v.frozen && v.mis.is_empty());
        assert_eq!(tp.pacing_rate, Vivace::bytes_per_sec(r / 2.0));
        let mut rs = RateSample { rtt_us: 40_000, acked_sacked: 1, ..Default::default() };
        v.cong_control(&mut tp, &rs);
        assert!(v.mis.is_empty(), "no MI while in Loss");
        v.set_state(&mut tp, CaState::Open);
        assert!(!v.frozen);
        assert_eq!(v.mode, Mode::Probing);
        rs.rtt_us = 40_000;
        v.cong_control(&mut tp, &rs);
        assert_eq!(v.mis.len(), 1, "probing restarted");
        assert_eq!(v.undo_cwnd(&tp), tp.snd_cwnd);
    }

    /// The model harness in tests/model.rs never calls `on_send`, so MIs
    /// never close there. This drives every hook, `on_send` included, with
    /// random sends, ACKs (with losses and RTT samples of 1 µs to 2 s),
    /// timeouts, idle restarts and time jumps, and checks after each event:
    /// no panic, 1 ≤ cwnd ≤ clamp, a positive pacing rate, the central rate
    /// within its bounds, at most four MIs pending, metrics finite or NaN.
    #[test]
    fn random_event_sequences_with_monitor_intervals() {
        let mut mis_closed = 0u64;
        for seed in 0..300u64 {
            let mut rng = SplitMix64::new(seed);
            let mut v = Vivace::new(VivaceConfig { seed, ..VivaceConfig::default() });
            let mut tp = Sock::new(if rng.below(5) == 0 { 536 } else { MSS }, 1 + rng.below(100));
            tp.paced = true;
            tp.rng_seed = rng.next_u64();
            if rng.below(3) == 0 {
                tp.snd_cwnd_clamp = tp.snd_cwnd + rng.below(1000);
            }
            tp.now_us = rng.below(1_000_000_000) as u64;
            tp.now_ns = tp.now_us * 1_000;
            v.init(&mut tp);
            let mut in_loss = 0u32;
            for step in 0..400 {
                let dt_us = match rng.below(10) {
                    0 => rng.below(5_000_000) as u64,
                    _ => rng.below(20_000) as u64,
                };
                tp.now_us += dt_us;
                tp.now_ns = tp.now_us * 1_000;
                match rng.below(100) {
                    0..=39 => {
                        let n = 1 + rng.below(20);
                        if tp.packets_out == 0 {
                            v.cwnd_event(&mut tp, CaEvent::TxStart { idle_us: dt_us });
                        }
                        for _ in 0..n {
                            tp.packets_out += 1;
                            v.on_send(&tp, &mut crate::CcHeader::default());
                        }
                    }
                    40..=89 => {
                        let acked = rng.below(tp.packets_out.min(64) + 1);
                        let lost = rng.below((tp.packets_out - acked).min(4) + 1);
                        tp.packets_out -= acked + lost;
                        tp.delivered += acked as u64;
                        tp.lost += lost as u64;
                        let rtt_us = if rng.below(10) == 0 { -1 } else { 1 + rng.below(2_000_000) as i64 };
                        if rtt_us > 0 {
                            let r = rtt_us as u64;
                            tp.srtt_us = if tp.srtt_us == 0 { r } else { (7 * tp.srtt_us + r) / 8 };
                            tp.min_rtt_us = tp.min_rtt_us.min(r);
                        }
                        let rs = RateSample { rtt_us, acked_sacked: acked, losses: lost, ..Default::default() };
                        assert!(v.cong_control(&mut tp, &rs));
                        if in_loss > 0 {
                            in_loss -= 1;
                            if in_loss == 0 {
                                v.set_state(&mut tp, CaState::Open);
                                tp.ca_state = CaState::Open;
                            }
                        }
                    }
                    90..=92 if tp.packets_out > 0 => {
                        assert_eq!(v.ssthresh(&tp), INFINITE_SSTHRESH);
                        v.cwnd_event(&mut tp, CaEvent::Loss);
                        tp.lost += tp.packets_out as u64;
                        tp.packets_out = 0;
                        tp.snd_cwnd = 1;
                        v.set_state(&mut tp, CaState::Loss);
                        tp.ca_state = CaState::Loss;
                        in_loss = 1 + rng.below(10);
                    }
                    93..=95 => {
                        v.set_state(&mut tp, CaState::Recovery);
                        let w = v.undo_cwnd(&tp);
                        assert_eq!(w, tp.snd_cwnd);
                    }
                    _ => {}
                }
                let ctx = format!("seed {seed} step {step}: cwnd {} clamp {}", tp.snd_cwnd, tp.snd_cwnd_clamp);
                assert!(tp.snd_cwnd >= 1 && tp.snd_cwnd <= tp.snd_cwnd_clamp, "{ctx}");
                assert!(tp.pacing_rate >= 1, "{ctx}");
                assert!((MIN_RATE_MBPS..=MAX_RATE_MBPS).contains(&v.rate_mbps), "{ctx}: rate {}", v.rate_mbps);
                assert!(v.mis.len() <= 2 * PROBING_PAIRS, "{ctx}: {} MIs", v.mis.len());
                let mut m = [0.0; MAX_METRICS];
                v.metrics(&mut m);
                assert!(m.iter().all(|x| !x.is_infinite()), "{ctx}: {m:?}");
            }
            mis_closed += v.decisions;
        }
        // The sequences did reach the state machine (about three decisions each).
        assert!(mis_closed >= 300, "only {mis_closed} decisions");
    }
}
