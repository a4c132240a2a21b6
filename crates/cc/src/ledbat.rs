//! LEDBAT, Low Extra Delay Background Transport (RFC 6817), and the
//! LEDBAT++ changes of draft-irtf-iccrg-ledbat-plus-plus as the `ledbat++`
//! variant.
//!
//! Sources: S. Shalunov, G. Hazel, J. Iyengar, M. Kühlewind, "Low Extra
//! Delay Background Transport (LEDBAT)", RFC 6817 (Experimental, 2012),
//! §2.4 (pseudo-code) and §2.5 (parameter values); P. Balasubramanian,
//! O. Ertugay, D. Havey, M. Bagnulo, "LEDBAT++: Congestion Control for
//! Background Traffic", draft-irtf-iccrg-ledbat-plus-plus-01, §4.1–§4.5.
//! Their rules as used here come from implementations: RFC 6817's
//! pseudo-code and values as quoted by two uTP libraries (Go, Erlang) and
//! ns-3's `src/internet/model/tcp-ledbat.cc`, the draft's rules as cited by
//! an ns-3 `TcpLedbatpp` port and a Go uTP LEDBAT++ controller's tests. The
//! LEDBAT++ rules were checked a second time against Apple's XNU
//! `bsd/netinet/tcp_ledbat.c`
//! ("implements LEDBAT++ as described in draft-irtf-iccrg-ledbat-plus-plus-01"),
//! which is the source for the choices marked "(XNU)" below. Not in Linux.
//!
//! LEDBAT is a scavenger: it keeps the queueing delay it measures at TARGET
//! and gives way to any flow that pushes the queue beyond that.
//!
//! ```text
//!  delay sample      d = RTT of the ACK                 (see "Delay" below)
//!  base delay        B = min of BASE_HISTORY one-minute minima of d
//!  current delay     D = min of the last CURRENT_FILTER samples of d
//!  queueing delay    q = D − B
//!
//!  RFC 6817, per ACK of `acked` packets (windows in packets):
//!    off_target = (TARGET − q) / TARGET            1 at an empty queue, < 0 above TARGET
//!    cwnd += GAIN · off_target · acked / cwnd       ±GAIN·off_target packets per RTT
//!    cwnd  = min(cwnd, flight + ALLOWED_INCREASE)   no growth while application-limited
//!    cwnd  = max(cwnd, MIN_CWND)
//!  loss:    cwnd = max(cwnd/2, MIN_CWND)            (once per window, by the sender's recovery)
//!  timeout: cwnd = 1                                (the sender's RTO)
//!
//!  LEDBAT++ (variant "ledbat++"), TARGET 60 ms:
//!    GAIN = 1 / min(16, ⌈2·TARGET / B⌉)                         §4.2 slower than Reno on short paths
//!    per RTT: q ≤ TARGET: W += GAIN                              §4.3 (applied per ACK as acked/W of it)
//!             q > TARGET: W += max(GAIN − W·(q/TARGET − 1), −W/2)    multiplicative decrease
//!    slow start: W += GAIN per packet acked, leave at q > ¾·TARGET     §4.1
//!    slowdowns (LEDBAT++ §4.4):
//!
//!     slow start ──exit──► CA ──2 RTT──► slowdown: ssthresh = W, W = 2 for 2 RTTs
//!                          ▲                 │
//!                          │                 ▼ slow start back to ssthresh (leave at q > TARGET)
//!                          └── 9 × (length of the slowdown) ◄── ramp over: back in CA
//! ```
//!
//! **Delay.** RFC 6817 measures one-way delay from timestamps the receiver
//! echoes. The simulator gives congestion control only an RTT sample per
//! ACK ([`AckSample::rtt_us`], no one-way delay), so both variants use the
//! RTT as the delay sample, as LEDBAT++ does (the ns-3 `TcpLedbatpp` port feeds
//! it RTT samples; XNU's LEDBAT++ uses its RTT estimates too). On the
//! simulator's paths the reverse direction carries only ACKs and does not
//! queue, so q is the forward queueing delay as long as one of the last
//! CURRENT_FILTER samples comes from an ACK sent at once (the receiver's
//! every-second-segment ACK). An ACK sent by the receiver's delayed-ACK timer
//! adds its hold (Linux `ato`, at least 40 ms) to its sample, and at a window
//! of MIN_CWND the ACK clock keeps the two packets apart, so every sample
//! carries it: a flow held at 2 packets reads q about 40 ms above the real
//! queue (LB7 in crates/sim/tests/ledbat.rs). RFC 6817's one-way delay,
//! taken when the data packet arrives, has no such term.
//!
//! **Choices where the sources are silent or unconfirmed**:
//!
//! * RFC 6817's pseudo-code has no slow start, and what the RFC's text says
//!   about one was not confirmed (the text itself was not re-read).
//!   `slow_start = true` (default, as ns-3's LEDBAT) runs Reno slow start,
//!   which is no faster than TCP, and leaves it on a loss or once q exceeds
//!   ¾·TARGET (the exit LEDBAT++ §4.1 uses; ours for the RFC variant).
//!   `false` starts with the window law at the initial window.
//! * The initial window is INIT_CWND = 2 packets (RFC 6817 §2.5, LEDBAT++
//!   §4.1) unless the `init_cwnd` parameter is 0, which keeps the flow's.
//! * "At most once per RTT" for the loss response: the sender reduces once
//!   per window of data (a recovery episode), which is that rule.
//! * The ALLOWED_INCREASE cap is applied to the window law, not to slow
//!   start (where the sender's cwnd-limited test does that job; with delayed
//!   ACKs the cap would hold slow start to +1 per ACK).
//! * After a LEDBAT decrease the slow-start threshold follows cwnd down, so
//!   that a window reduced by delay does not restart slow start.
//! * LEDBAT++: the §4.3 formula applies only above TARGET; below it the
//!   window grows by GAIN per RTT (the draft's "W += GAIN"; read literally
//!   below TARGET the formula would add W·(1 − q/TARGET) per RTT).
//! * LEDBAT++: the ramp out of a slowdown is the §4.1 slow start (GAIN per
//!   packet acked) up to the saved ssthresh, left early when q exceeds
//!   TARGET, not ¾·TARGET (XNU). A slowdown lasts from the window cut to the
//!   end of that ramp; the next one starts 9 times that later (draft §4.4). The
//!   "RTT" of the 2-RTT waits is the sender's smoothed RTT (XNU).
//! * LEDBAT++: XNU also doubles the measured length of a slowdown whose
//!   ramp stopped short of ssthresh and postpones a pending slowdown by 30 s
//!   after each multiplicative decrease; neither is in the draft's rules as
//!   the ns-3 port and the Go controller's tests cite them, and neither is
//!   done here.

use crate::params::{ParamDefault, ParamKind, ParamSpec, Params};
use crate::{common, AckSample, CongestionControl, Sock, MAX_METRICS};
use std::collections::VecDeque;

/// RFC 6817 §2.5: TARGET = 100 ms (it MUST NOT be above 100 ms), µs.
pub const TARGET_RFC6817_US: u64 = 100_000;
/// LEDBAT++ §4.5: TARGET = 60 ms, µs.
pub const TARGET_PLUS_PLUS_US: u64 = 60_000;
/// RFC 6817 §2.5: ALLOWED_INCREASE = 1 packet above the flight size.
pub const ALLOWED_INCREASE: f64 = 1.0;
/// RFC 6817 §2.5: MIN_CWND = 2 packets (also LEDBAT++'s slowdown window).
pub const MIN_CWND: u32 = 2;
/// RFC 6817 §2.4.2: each base-delay minimum covers one minute, µs.
const BASE_INTERVAL_US: u64 = 60_000_000;
/// LEDBAT++ §4.2: GAIN is at least 1/16 of Reno's increase.
const GAIN_MAX_DIVISOR: u64 = 16;
/// LEDBAT++ §4.3: "Constant" of the multiplicative decrease.
const DECREASE_K: f64 = 1.0;
/// LEDBAT++ §4.4: the next slowdown waits 9 times the last one's length
/// (so slowdowns take at most about a tenth of the time).
const SLOWDOWN_SPACING: u64 = 9;
/// LEDBAT++ §4.4: the first slowdown comes this many RTTs after the initial
/// slow start ends, and the window stays at MIN_CWND this many RTTs.
const SLOWDOWN_RTTS: u64 = 2;

/// LEDBAT's parameters.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "variant",
        kind: ParamKind::Choice(&["rfc6817", "ledbat++"]),
        default: ParamDefault::Str("rfc6817"),
        doc: "rfc6817: RFC 6817 window law (TARGET 100 ms, GAIN 1, linear decrease above TARGET); ledbat++: draft-irtf-iccrg-ledbat-plus-plus-01 (TARGET 60 ms, GAIN 1/min(16, ceil(2 TARGET/base)), multiplicative decrease, gain-scaled slow start left at 3/4 TARGET, initial and periodic slowdowns). Both measure delay from RTT samples",
    },
    ParamSpec {
        name: "target_ms",
        kind: ParamKind::Float { min: 0.0, max: 100.0 },
        default: ParamDefault::Float(0.0),
        doc: "queueing delay the flow aims at, ms; 0 = the variant's: 100 (RFC 6817 section 2.5, MUST be <= 100) or 60 (LEDBAT++ section 4.5)",
    },
    ParamSpec {
        name: "gain",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: ParamDefault::Float(0.0),
        doc: "packets of window change per RTT at off_target 1 (dimensionless, MUST be <= 1); 0 = the variant's: 1 (RFC 6817 section 2.5) or 1/min(16, ceil(2 TARGET/base delay)) (LEDBAT++ section 4.2)",
    },
    ParamSpec {
        name: "base_history",
        kind: ParamKind::Int { min: 1, max: 100 },
        default: ParamDefault::Int(10),
        doc: "one-minute delay minima kept for the base delay (about this many minutes of memory); RFC 6817 section 2.5 BASE_HISTORY = 10",
    },
    ParamSpec {
        name: "current_filter",
        kind: ParamKind::Int { min: 1, max: 64 },
        default: ParamDefault::Int(4),
        doc: "delay samples whose minimum is the current delay; RFC 6817 leaves the filter open (NULL, MIN or EWMA), ns-3 and uTP use MIN over 4",
    },
    ParamSpec {
        name: "slow_start",
        kind: ParamKind::Bool,
        default: ParamDefault::Bool(true),
        doc: "initial slow start, left on loss or once queueing delay > 3/4 TARGET: Reno's for rfc6817 (not in RFC 6817's pseudo-code; ns-3 default, UNCONFIRMED RFC wording), GAIN per packet acked for ledbat++ (section 4.1); false = window law from the initial window",
    },
    ParamSpec {
        name: "init_cwnd",
        kind: ParamKind::Int { min: 0, max: 1000 },
        default: ParamDefault::Int(2),
        doc: "initial window, packets; RFC 6817 section 2.5 INIT_CWND = 2, LEDBAT++ section 4.1: 2; 0 = keep the flow's initial window",
    },
];

/// Which rules run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// RFC 6817.
    Rfc6817,
    /// draft-irtf-iccrg-ledbat-plus-plus-01.
    PlusPlus,
}

/// Typed LEDBAT configuration (see [`PARAMS`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LedbatConfig {
    pub variant: Variant,
    /// TARGET, µs.
    pub target_us: u64,
    /// Fixed GAIN, or `None` for the variant's rule.
    pub gain: Option<f64>,
    /// BASE_HISTORY, one-minute minima.
    pub base_history: usize,
    /// CURRENT_FILTER, samples.
    pub current_filter: usize,
    /// Initial slow start on.
    pub slow_start: bool,
    /// Initial window, packets (0 = the flow's).
    pub init_cwnd: u32,
}

impl LedbatConfig {
    /// RFC 6817 with its §2.5 values.
    pub fn rfc6817() -> LedbatConfig {
        LedbatConfig {
            variant: Variant::Rfc6817,
            target_us: TARGET_RFC6817_US,
            gain: None,
            base_history: 10,
            current_filter: 4,
            slow_start: true,
            init_cwnd: MIN_CWND,
        }
    }

    /// LEDBAT++ with the draft's values.
    pub fn plus_plus() -> LedbatConfig {
        LedbatConfig { variant: Variant::PlusPlus, target_us: TARGET_PLUS_PLUS_US, ..LedbatConfig::rfc6817() }
    }

    /// Reads resolved registry parameters.
    pub fn from_params(p: &Params) -> LedbatConfig {
        let mut c = match p.str("variant") {
            "ledbat++" => LedbatConfig::plus_plus(),
            _ => LedbatConfig::rfc6817(),
        };
        let target_ms = p.float("target_ms");
        if target_ms > 0.0 {
            c.target_us = ((target_ms * 1000.0).round() as u64).max(1);
        }
        let gain = p.float("gain");
        c.gain = (gain > 0.0).then_some(gain);
        c.base_history = p.int("base_history").clamp(1, 100) as usize;
        c.current_filter = p.int("current_filter").clamp(1, 64) as usize;
        c.slow_start = p.bool("slow_start");
        c.init_cwnd = p.int("init_cwnd").clamp(0, 1000) as u32;
        c
    }
}

impl Default for LedbatConfig {
    fn default() -> Self {
        LedbatConfig::rfc6817()
    }
}

/// RFC 6817 §2.4.2: the window change for one ACK, packets:
/// `GAIN · off_target · acked / cwnd`.
pub fn rfc6817_increment(gain: f64, off_target: f64, acked: f64, cwnd: f64) -> f64 {
    gain * off_target * acked / cwnd
}

/// LEDBAT++ §4.3: the window change over one RTT, packets, at queueing
/// delay `q_us` with window `w`: `+GAIN` up to TARGET, above it
/// `max(GAIN − K·W·(q/TARGET − 1), −W/2)`.
pub fn plus_plus_change_per_rtt(gain: f64, w: f64, q_us: u64, target_us: u64) -> f64 {
    if q_us <= target_us {
        return gain;
    }
    let over = q_us as f64 / target_us as f64 - 1.0;
    (gain - DECREASE_K * w * over).max(-w / 2.0)
}

/// LEDBAT++ §4.2: `GAIN = 1 / min(16, ⌈2·TARGET / base⌉)`, in exact integer
/// arithmetic on µs; 1/16 (the slowest) before the first delay sample.
pub fn plus_plus_gain(target_us: u64, base_us: Option<u64>) -> f64 {
    let Some(base) = base_us else { return 1.0 / GAIN_MAX_DIVISOR as f64 };
    let divisor = (2 * target_us).div_ceil(base.max(1)).clamp(1, GAIN_MAX_DIVISOR);
    1.0 / divisor as f64
}

/// RFC 6817 §2.4.2 `update_base_delay`: BASE_HISTORY minima, each over one
/// (wall-clock) minute, kept oldest first. A new entry starts with the
/// first sample in a minute different from that of the last rollover, so
/// minutes without samples add no entry.
#[derive(Clone, Debug)]
pub struct BaseHistory {
    /// Minima, µs, oldest first; `u64::MAX` = +∞ (not filled yet).
    minima: VecDeque<u64>,
    /// Minute of the last rollover (`None` = −∞, before any sample).
    last_minute: Option<u64>,
    /// Cached minimum of `minima`, µs.
    min: u64,
}

impl BaseHistory {
    pub fn new(len: usize) -> BaseHistory {
        BaseHistory { minima: std::iter::repeat_n(u64::MAX, len.max(1)).collect(), last_minute: None, min: u64::MAX }
    }

    pub fn update(&mut self, now_us: u64, delay_us: u64) {
        let minute = now_us / BASE_INTERVAL_US;
        if self.last_minute != Some(minute) {
            self.last_minute = Some(minute);
            let oldest = self.minima.pop_front().unwrap_or(u64::MAX);
            self.minima.push_back(delay_us);
            if oldest <= self.min {
                // The minimum may have left with the oldest entry.
                self.min = self.minima.iter().copied().min().unwrap_or(u64::MAX);
            } else {
                self.min = self.min.min(delay_us);
            }
        } else if let Some(tail) = self.minima.back_mut() {
            *tail = (*tail).min(delay_us);
            self.min = self.min.min(delay_us);
        }
    }

    /// MIN(base_delays), µs, or `None` before the first sample.
    pub fn base(&self) -> Option<u64> {
        (self.min != u64::MAX).then_some(self.min)
    }
}

/// Per-flow LEDBAT state.
#[derive(Clone, Debug)]
pub struct Ledbat {
    cfg: LedbatConfig,
    base: BaseHistory,
    /// The last CURRENT_FILTER delay samples, µs, oldest first.
    current: VecDeque<u64>,
    /// The window, packets (fractional; cwnd is its integer part).
    cwnd: f64,
    /// cwnd as this algorithm last left it, to notice changes made by the
    /// sender (recovery, RTO, undo).
    last_cwnd: u32,
    /// Packets in flight before the ACK being processed (RFC 6817 `flightsize`).
    flight: u32,
    /// LEDBAT++: time of the next slowdown, µs (`None` = not scheduled).
    next_slowdown_us: Option<u64>,
    /// LEDBAT++: the current slowdown began at this time, µs, and is not over
    /// until its ramp ends.
    slowdown_begin_us: Option<u64>,
    /// LEDBAT++: the window stays at MIN_CWND until this time, µs.
    freeze_until_us: Option<u64>,
    /// LEDBAT++: slowdowns so far.
    slowdowns: u32,
    /// LEDBAT++: length of the last completed slowdown, µs.
    last_slowdown_us: u64,
}

impl Ledbat {
    pub fn new(cfg: LedbatConfig) -> Ledbat {
        Ledbat {
            base: BaseHistory::new(cfg.base_history),
            current: VecDeque::with_capacity(cfg.current_filter),
            cfg,
            cwnd: MIN_CWND as f64,
            last_cwnd: 0,
            flight: 0,
            next_slowdown_us: None,
            slowdown_begin_us: None,
            freeze_until_us: None,
            slowdowns: 0,
            last_slowdown_us: 0,
        }
    }

    /// FILTER(current_delays): the minimum of the last samples, µs.
    fn current_delay(&self) -> Option<u64> {
        self.current.iter().copied().min()
    }

    /// queuing_delay = FILTER(current_delays) − MIN(base_delays), µs.
    pub fn queuing_delay_us(&self) -> Option<u64> {
        Some(self.current_delay()?.saturating_sub(self.base.base()?))
    }

    /// GAIN for the next update.
    fn gain(&self) -> f64 {
        match (self.cfg.gain, self.cfg.variant) {
            (Some(g), _) => g,
            (None, Variant::Rfc6817) => 1.0,
            (None, Variant::PlusPlus) => plus_plus_gain(self.cfg.target_us, self.base.base()),
        }
    }

    /// off_target = (TARGET − q) / TARGET; 1 (empty queue) before any sample.
    fn off_target(&self) -> f64 {
        match self.queuing_delay_us() {
            Some(q) => (self.cfg.target_us as f64 - q as f64) / self.cfg.target_us as f64,
            None => 1.0,
        }
    }

    /// Queueing delay above `num/den` of TARGET (false without an estimate).
    fn delay_above(&self, num: u64, den: u64) -> bool {
        self.queuing_delay_us().is_some_and(|q| q.saturating_mul(den) > self.cfg.target_us * num)
    }

    /// The smoothed RTT (or the current delay before one), µs, for the
    /// 2-RTT waits of LEDBAT++ slowdowns.
    fn rtt_us(&self, tp: &Sock) -> u64 {
        if tp.srtt_us > 0 {
            tp.srtt_us
        } else {
            self.current_delay().unwrap_or(0)
        }
    }

    /// One slow-start step: Reno's `+acked` or LEDBAT++'s `+GAIN·acked`, up
    /// to ssthresh, while cwnd-limited.
    fn slow_start_step(&mut self, tp: &Sock, acked: u32) {
        if !tp.is_cwnd_limited() {
            return;
        }
        let step = match self.cfg.variant {
            Variant::Rfc6817 => acked as f64,
            Variant::PlusPlus => self.gain() * acked as f64,
        };
        self.cwnd = (self.cwnd + step).min(tp.snd_ssthresh as f64);
    }

    /// The window law after slow start, with RFC 6817's caps.
    fn window_law(&mut self, tp: &mut Sock, acked: u32) {
        let acked = acked as f64;
        let before = self.cwnd;
        match self.cfg.variant {
            Variant::Rfc6817 => {
                self.cwnd += rfc6817_increment(self.gain(), self.off_target(), acked, self.cwnd);
            }
            Variant::PlusPlus => {
                let q = self.queuing_delay_us().unwrap_or(0);
                let per_rtt = plus_plus_change_per_rtt(self.gain(), self.cwnd, q, self.cfg.target_us);
                // Applied per ACK as acked/W of the per-RTT change.
                self.cwnd += per_rtt * acked / self.cwnd;
            }
        }
        // RFC 6817: never more than ALLOWED_INCREASE above the flight size.
        self.cwnd = self.cwnd.min(self.flight as f64 + ALLOWED_INCREASE);
        self.cwnd = self.cwnd.max(MIN_CWND as f64);
        if self.cwnd < before {
            // A delay-driven decrease: stay out of slow start.
            tp.snd_ssthresh = tp.snd_ssthresh.min((self.cwnd as u32).max(MIN_CWND));
        }
    }

    /// RFC 6817 per-ACK processing after the delay samples.
    fn rfc6817_ack(&mut self, tp: &mut Sock, acked: u32) {
        if self.cfg.slow_start && tp.in_slow_start() {
            if !self.delay_above(3, 4) {
                self.slow_start_step(tp, acked);
                return;
            }
            // Queueing delay past ¾·TARGET: leave slow start.
            tp.snd_ssthresh = tp.snd_cwnd.max(MIN_CWND);
        }
        self.window_law(tp, acked);
    }

    /// LEDBAT++ per-ACK processing: slowdowns, modified slow start, window law.
    fn plus_plus_ack(&mut self, tp: &mut Sock, acked: u32) {
        let now = tp.now_us;
        // §4.4: the window stays at MIN_CWND for 2 RTTs of a slowdown.
        if let Some(until) = self.freeze_until_us {
            if now < until {
                self.cwnd = MIN_CWND as f64;
                return;
            }
            self.freeze_until_us = None;
        }
        let ramping = self.slowdown_begin_us.is_some();
        if tp.in_slow_start() && (self.cfg.slow_start || ramping) {
            // §4.1: leave the initial slow start at ¾·TARGET; XNU leaves the
            // ramp after a slowdown only at TARGET.
            let (num, den) = if ramping { (1, 1) } else { (3, 4) };
            if !self.delay_above(num, den) {
                self.slow_start_step(tp, acked);
                return;
            }
            tp.snd_ssthresh = tp.snd_cwnd.max(MIN_CWND);
        }
        // In congestion avoidance.
        if self.next_slowdown_us.is_none() {
            let at = match self.slowdown_begin_us.take() {
                Some(begin) => {
                    // The slowdown's ramp is over: next one 9 lengths later.
                    self.last_slowdown_us = now.saturating_sub(begin);
                    now.saturating_add(SLOWDOWN_SPACING.saturating_mul(self.last_slowdown_us))
                }
                // The initial slow start is over: first slowdown 2 RTTs later.
                None => now.saturating_add(SLOWDOWN_RTTS.saturating_mul(self.rtt_us(tp))),
            };
            self.next_slowdown_us = Some(at);
        }
        if self.next_slowdown_us.is_some_and(|at| now >= at) {
            self.next_slowdown_us = None;
            self.slowdown_begin_us = Some(now);
            self.freeze_until_us = Some(now.saturating_add(SLOWDOWN_RTTS.saturating_mul(self.rtt_us(tp))));
            self.slowdowns = self.slowdowns.saturating_add(1);
            // Ramp back up to the window held before the slowdown.
            tp.snd_ssthresh = tp.snd_cwnd.max(MIN_CWND);
            self.cwnd = MIN_CWND as f64;
            return;
        }
        self.window_law(tp, acked);
    }

    /// 0 = no slowdown, 1 = window held at MIN_CWND, 2 = ramping back.
    fn slowdown_phase(&self) -> f64 {
        match (self.freeze_until_us, self.slowdown_begin_us) {
            (Some(_), _) => 1.0,
            (None, Some(_)) => 2.0,
            _ => 0.0,
        }
    }
}

impl CongestionControl for Ledbat {
    /// RFC 6817 §2.4.2 "on initialization", INIT_CWND of §2.5.
    fn init(&mut self, tp: &mut Sock) {
        if self.cfg.init_cwnd > 0 {
            tp.snd_cwnd = self.cfg.init_cwnd.min(tp.snd_cwnd_clamp).max(1);
        }
        if !self.cfg.slow_start {
            tp.snd_ssthresh = tp.snd_cwnd.max(MIN_CWND);
        }
        self.cwnd = tp.snd_cwnd as f64;
        self.last_cwnd = tp.snd_cwnd;
    }

    /// RFC 6817 §2.4.2 "on data loss": cwnd = min(cwnd, max(cwnd/2, MIN_CWND)),
    /// which for cwnd ≥ MIN_CWND is Reno's halving floored at 2.
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        common::reno_ssthresh(tp)
    }

    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        if tp.snd_cwnd != self.last_cwnd {
            // Changed outside this hook (recovery, RTO, undo): resume from it.
            self.cwnd = tp.snd_cwnd as f64;
        }
        match self.cfg.variant {
            Variant::Rfc6817 => self.rfc6817_ack(tp, acked),
            Variant::PlusPlus => self.plus_plus_ack(tp, acked),
        }
        let clamp = tp.snd_cwnd_clamp.max(1);
        self.cwnd = self.cwnd.clamp(1.0, clamp as f64);
        tp.snd_cwnd = (self.cwnd as u32).clamp(1, clamp);
        self.last_cwnd = tp.snd_cwnd;
    }

    /// RFC 6817 §2.4.2: every delay sample updates the base history and the
    /// current filter; the flight size before the ACK bounds the increase.
    fn pkts_acked(&mut self, tp: &mut Sock, sample: &AckSample) {
        self.flight = sample.in_flight;
        if sample.rtt_us < 0 {
            return;
        }
        let d = (sample.rtt_us as u64).max(1);
        self.base.update(tp.now_us, d);
        if self.current.len() >= self.cfg.current_filter {
            self.current.pop_front();
        }
        self.current.push_back(d);
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &["base_delay_us", "queuing_delay_us", "off_target", "gain", "cwnd_pkts", "slowdowns", "slowdown_phase"]
    }

    fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
        out[0] = self.base.base().map_or(f64::NAN, |b| b as f64);
        out[1] = self.queuing_delay_us().map_or(f64::NAN, |q| q as f64);
        out[2] = if self.queuing_delay_us().is_some() { self.off_target() } else { f64::NAN };
        out[3] = self.gain();
        out[4] = self.cwnd;
        out[5] = self.slowdowns as f64;
        out[6] = self.slowdown_phase();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{testkit, CaState, INFINITE_SSTHRESH};

    const MSS: u32 = testkit::MSS;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// A flow of `cfg` that keeps the window it is given (init_cwnd = 0).
    fn ledbat(mut cfg: LedbatConfig) -> Ledbat {
        cfg.init_cwnd = 0;
        Ledbat::new(cfg)
    }

    fn sock(cwnd: u32, ssthresh: u32) -> Sock {
        testkit::sock_at(cwnd, ssthresh, 1_000_000)
    }

    /// An ACK of one packet with an RTT sample, `in_flight` packets out before it.
    fn ack(rtt_us: i64, in_flight: u32) -> AckSample {
        AckSample { acked: 1, rtt_us, in_flight, ..Default::default() }
    }

    /// Feeds a base sample then `filter` samples of `base + q`, so that
    /// queuing_delay = q, with `in_flight` = cwnd.
    fn set_delay(l: &mut Ledbat, tp: &mut Sock, base_us: u64, q_us: u64) {
        let w = tp.snd_cwnd;
        l.pkts_acked(tp, &ack(base_us as i64, w));
        for _ in 0..l.cfg.current_filter {
            l.pkts_acked(tp, &ack((base_us + q_us) as i64, w));
        }
        assert_eq!(l.queuing_delay_us(), Some(q_us));
    }

    #[test]
    fn defaults_and_variants() {
        let p = crate::registry::resolve_params("ledbat", &[]).unwrap();
        assert_eq!(LedbatConfig::from_params(&p), LedbatConfig::rfc6817());
        let c = LedbatConfig::rfc6817();
        assert_eq!((c.target_us, c.gain, c.base_history, c.current_filter, c.init_cwnd), (100_000, None, 10, 4, 2));
        let p = crate::registry::resolve_params("ledbat", &[("variant".into(), ParamValue::Str("ledbat++".into()))])
            .unwrap();
        let c = LedbatConfig::from_params(&p);
        assert_eq!((c.variant, c.target_us), (Variant::PlusPlus, 60_000));
        let p = crate::registry::resolve_params(
            "ledbat",
            &[("target_ms".into(), ParamValue::Float(25.0)), ("gain".into(), ParamValue::Float(0.5))],
        )
        .unwrap();
        let c = LedbatConfig::from_params(&p);
        assert_eq!((c.target_us, c.gain), (25_000, Some(0.5)));
        // TARGET MUST be ≤ 100 ms and GAIN ≤ 1 (RFC 6817 §2.5).
        assert!(crate::build("ledbat", &[("target_ms".into(), ParamValue::Float(101.0))]).is_err());
        assert!(crate::build("ledbat", &[("gain".into(), ParamValue::Float(1.5))]).is_err());
    }

    use crate::ParamValue;

    // INIT_CWND = 2 (RFC 6817 §2.5) replaces the flow's window; 0 keeps it.
    #[test]
    fn initial_window() {
        let mut tp = sock(10, INFINITE_SSTHRESH);
        Ledbat::new(LedbatConfig::rfc6817()).init(&mut tp);
        assert_eq!(tp.snd_cwnd, 2);
        let mut tp = sock(10, INFINITE_SSTHRESH);
        ledbat(LedbatConfig::rfc6817()).init(&mut tp);
        assert_eq!(tp.snd_cwnd, 10);
        // Without slow start the window law runs from the start.
        let mut tp = sock(10, INFINITE_SSTHRESH);
        ledbat(LedbatConfig { slow_start: false, ..LedbatConfig::rfc6817() }).init(&mut tp);
        assert!(!tp.in_slow_start());
    }

    // LV1: TARGET 100 ms, queuing delay 25 ms → off_target 0.75; cwnd 20,
    // one packet acked: +0.0375 packets, +0.75 per RTT. Delay 150 ms →
    // off_target −0.5 (−0.5 per RTT); 300 ms → −2 per RTT.
    #[test]
    fn tv_lv1_window_change_per_ack() {
        assert!(close(rfc6817_increment(1.0, 0.75, 1.0, 20.0), 0.0375, 1e-12));
        assert!(close(20.0 * rfc6817_increment(1.0, 0.75, 1.0, 20.0), 0.75, 1e-12));
        assert!(close(20.0 * rfc6817_increment(1.0, -0.5, 1.0, 20.0), -0.5, 1e-12));
        assert!(close(20.0 * rfc6817_increment(1.0, -2.0, 1.0, 20.0), -2.0, 1e-12));
        for (q_ms, off, step) in [(25u64, 0.75, 0.0375), (150, -0.5, -0.025), (300, -2.0, -0.1)] {
            let mut l = ledbat(LedbatConfig::rfc6817());
            let mut tp = sock(20, 20);
            l.init(&mut tp);
            set_delay(&mut l, &mut tp, 50_000, q_ms * 1000);
            assert!(close(l.off_target(), off, 1e-12), "q {q_ms} ms: off_target {}", l.off_target());
            l.cong_avoid(&mut tp, 1);
            assert!(close(l.cwnd, 20.0 + step, 1e-12), "q {q_ms} ms: cwnd {}", l.cwnd);
            assert_eq!(tp.snd_cwnd, if step > 0.0 { 20 } else { 19 });
            let mut m = [0.0; MAX_METRICS];
            l.metrics(&mut m);
            assert_eq!((m[0], m[1]), (50_000.0, (q_ms * 1000) as f64));
            assert!(close(m[2], off, 1e-12));
        }
    }

    // LV1 over a whole RTT through the hooks: 20 ACKs at q = 25 ms add
    // about 0.75 packets (a little less: cwnd grows during the RTT).
    #[test]
    fn tv_lv1_per_rtt_through_hooks() {
        let mut l = ledbat(LedbatConfig::rfc6817());
        let mut tp = sock(20, 20);
        l.init(&mut tp);
        set_delay(&mut l, &mut tp, 50_000, 25_000);
        for _ in 0..20 {
            l.pkts_acked(&mut tp, &ack(75_000, 20));
            l.cong_avoid(&mut tp, 1);
        }
        // Each ACK adds 0.75/cwnd with cwnd in [20, 20.75]: 0.723 to 0.75.
        assert!((20.0 + 0.75 * 20.0 / 20.75..20.75).contains(&l.cwnd), "cwnd {}", l.cwnd);
    }

    // LV2: flight size 5, cwnd 40 (application-limited) → 6 on the next ACK
    // (ALLOWED_INCREASE = 1 above the flight size).
    #[test]
    fn tv_lv2_allowed_increase() {
        let mut l = ledbat(LedbatConfig::rfc6817());
        let mut tp = sock(40, 40);
        l.init(&mut tp);
        set_delay(&mut l, &mut tp, 50_000, 0);
        l.pkts_acked(&mut tp, &ack(50_000, 5));
        l.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_cwnd, 6);
        assert!(tp.snd_ssthresh <= 6, "the cut leaves slow start off: ssthresh {}", tp.snd_ssthresh);
        // Never below MIN_CWND: flight 0 → 2.
        l.pkts_acked(&mut tp, &ack(50_000, 0));
        l.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_cwnd, 2);
    }

    // LV3: a loss halves cwnd, floored at MIN_CWND: 3 → max(1.5, 2) = 2; 40 → 20.
    #[test]
    fn tv_lv3_loss() {
        let mut l = ledbat(LedbatConfig::rfc6817());
        for (cwnd, want) in [(3, 2), (40, 20), (2, 2), (1, 2)] {
            assert_eq!(l.ssthresh(&sock(cwnd, 100)), want, "cwnd {cwnd}");
        }
        // Through recovery: the sender sets cwnd = ssthresh and LEDBAT resumes from it.
        let mut tp = sock(40, INFINITE_SSTHRESH);
        l.init(&mut tp);
        set_delay(&mut l, &mut tp, 50_000, 50_000);
        tp.snd_ssthresh = l.ssthresh(&tp);
        l.set_state(&mut tp, CaState::Recovery);
        tp.snd_cwnd = tp.snd_ssthresh;
        l.set_state(&mut tp, CaState::Open);
        l.pkts_acked(&mut tp, &ack(100_000, 20));
        l.cong_avoid(&mut tp, 1);
        assert!(close(l.cwnd, 20.0 + 0.5 / 20.0, 1e-12), "cwnd {}", l.cwnd);
    }

    // LV4: samples 52, 50, 51 ms in minute 0, 49 ms in minute 3, then 60 ms
    // once a minute: the base stays 49 ms until the minute-3 entry leaves
    // the 10-entry list, at the 10th rollover after it (minute 13).
    #[test]
    fn tv_lv4_base_history() {
        let min = 60_000_000u64;
        let mut h = BaseHistory::new(10);
        assert_eq!(h.base(), None);
        for d in [52_000, 50_000, 51_000] {
            h.update(10_000_000, d);
        }
        assert_eq!(h.base(), Some(50_000));
        h.update(3 * min + 1, 49_000);
        assert_eq!(h.base(), Some(49_000));
        for m in 4..=12 {
            h.update(m * min + 5, 60_000);
            assert_eq!(h.base(), Some(49_000), "minute {m}");
        }
        h.update(13 * min, 60_000);
        assert_eq!(h.base(), Some(60_000), "minute 13: the 49 ms minimum has aged out");
        // A smaller sample lowers the newest entry at once.
        h.update(13 * min + 1, 55_000);
        assert_eq!(h.base(), Some(55_000));
        // BASE_HISTORY = 1: the base is the current minute's minimum.
        let mut h = BaseHistory::new(1);
        h.update(0, 40_000);
        h.update(min, 70_000);
        assert_eq!(h.base(), Some(70_000));
    }

    // The same history through the hooks: the current filter keeps the
    // minimum of the last 4 samples.
    #[test]
    fn current_filter_is_min_of_last_samples() {
        let mut l = ledbat(LedbatConfig::rfc6817());
        let mut tp = sock(10, 10);
        l.init(&mut tp);
        for r in [40_000, 90_000, 80_000, 70_000, 60_000] {
            l.pkts_acked(&mut tp, &ack(r, 10));
        }
        // Last four: 90, 80, 70, 60 → 60 ms; base 40 ms.
        assert_eq!(l.queuing_delay_us(), Some(20_000));
        l.pkts_acked(&mut tp, &ack(-1, 10));
        assert_eq!(l.queuing_delay_us(), Some(20_000), "no sample, no change");
        // 80, 70, 60, 100 → still 60 ms; three more 100s push the 60 out.
        l.pkts_acked(&mut tp, &ack(100_000, 10));
        assert_eq!(l.queuing_delay_us(), Some(20_000));
        for _ in 0..3 {
            l.pkts_acked(&mut tp, &ack(100_000, 10));
        }
        assert_eq!(l.queuing_delay_us(), Some(60_000));
    }

    // LV5: LEDBAT++ GAIN = 1/min(16, ⌈2·60 ms / base⌉).
    #[test]
    fn tv_lv5_plus_plus_gain() {
        for (base_us, div) in [
            (1_000u64, 16u64),
            (7_500, 16),
            (8_000, 15),
            (20_000, 6),
            (50_000, 3),
            (60_000, 2),
            (120_000, 1),
            (500_000, 1),
        ] {
            assert_eq!(plus_plus_gain(60_000, Some(base_us)), 1.0 / div as f64, "base {base_us} µs");
        }
        assert_eq!(plus_plus_gain(60_000, None), 1.0 / 16.0);
        assert_eq!(plus_plus_gain(60_000, Some(0)), 1.0 / 16.0);
    }

    // LV6: LEDBAT++ per-RTT change with GAIN 1/6, W = 100: +1/6 up to TARGET;
    // 1.1·TARGET → 1/6 − 100·0.1 = −9.833; 10·TARGET → floored at −50;
    // W = 200 and a huge delay → −100.
    #[test]
    fn tv_lv6_plus_plus_change_per_rtt() {
        let g = 1.0 / 6.0;
        assert_eq!(plus_plus_change_per_rtt(g, 100.0, 0, 60_000), g);
        assert_eq!(plus_plus_change_per_rtt(g, 100.0, 60_000, 60_000), g);
        assert!(close(plus_plus_change_per_rtt(g, 100.0, 66_000, 60_000), -9.8333, 1e-4));
        assert_eq!(plus_plus_change_per_rtt(g, 100.0, 600_000, 60_000), -50.0);
        assert_eq!(plus_plus_change_per_rtt(g, 200.0, 10_000_000, 60_000), -100.0);
        // Through the hooks, per ACK: acked/W of it. Base 20 ms (GAIN 1/6).
        let mut l = ledbat(LedbatConfig::plus_plus());
        let mut tp = sock(100, 100);
        l.init(&mut tp);
        set_delay(&mut l, &mut tp, 20_000, 66_000);
        l.next_slowdown_us = Some(u64::MAX); // no slowdown in this test
        l.cong_avoid(&mut tp, 1);
        assert!(close(l.cwnd, 100.0 - 9.8333 / 100.0, 1e-4), "cwnd {}", l.cwnd);
        assert!(tp.snd_ssthresh <= tp.snd_cwnd);
    }

    // LEDBAT++ §4.1: slow start adds GAIN per packet acked and ends once the
    // queueing delay exceeds ¾·TARGET = 45 ms; RFC 6817 (our choice) adds 1
    // and ends at ¾ of its TARGET = 75 ms.
    #[test]
    fn slow_start_steps_and_exit() {
        let mut l = ledbat(LedbatConfig::plus_plus());
        let mut tp = sock(30, INFINITE_SSTHRESH);
        l.init(&mut tp);
        set_delay(&mut l, &mut tp, 20_000, 45_000);
        l.cong_avoid(&mut tp, 3);
        assert!(close(l.cwnd, 30.5, 1e-12), "GAIN 1/6 × 3 packets: cwnd {}", l.cwnd);
        assert!(tp.in_slow_start());
        set_delay(&mut l, &mut tp, 20_000, 45_001);
        l.cong_avoid(&mut tp, 3);
        assert_eq!(tp.snd_ssthresh, 30, "slow start left at cwnd");
        assert!(!tp.in_slow_start());

        let mut l = ledbat(LedbatConfig::rfc6817());
        let mut tp = sock(30, INFINITE_SSTHRESH);
        l.init(&mut tp);
        set_delay(&mut l, &mut tp, 20_000, 75_000);
        l.cong_avoid(&mut tp, 3);
        assert_eq!(tp.snd_cwnd, 33);
        set_delay(&mut l, &mut tp, 20_000, 75_001);
        l.cong_avoid(&mut tp, 3);
        assert_eq!(tp.snd_ssthresh, 33);
        // Then the window law: off_target (100 − 75.001)/100 → +off_target·3/33.
        assert!(close(l.cwnd, 33.0 + 0.24999 * 3.0 / 33.0, 1e-12), "cwnd {}", l.cwnd);
        // Not cwnd-limited: slow start does not grow the window.
        let mut tp = sock(30, INFINITE_SSTHRESH);
        tp.is_cwnd_limited = false;
        tp.max_packets_out = 10;
        let mut l = ledbat(LedbatConfig::rfc6817());
        l.init(&mut tp);
        l.cong_avoid(&mut tp, 3);
        assert_eq!(tp.snd_cwnd, 30);
    }

    // A delay-driven decrease lowers ssthresh with cwnd, so the flow does
    // not fall back into slow start.
    #[test]
    fn decrease_keeps_slow_start_off() {
        let mut l = ledbat(LedbatConfig::rfc6817());
        let mut tp = sock(50, 50);
        l.init(&mut tp);
        set_delay(&mut l, &mut tp, 50_000, 300_000);
        for _ in 0..200 {
            let w = tp.snd_cwnd;
            l.pkts_acked(&mut tp, &ack(350_000, w));
            l.cong_avoid(&mut tp, 1);
            assert!(!tp.in_slow_start(), "cwnd {} ssthresh {}", tp.snd_cwnd, tp.snd_ssthresh);
        }
        assert!(tp.snd_cwnd < 50);
    }

    /// LV7 set-up: LEDBAT++ in slow start at cwnd 50, base and smoothed RTT
    /// 20 ms (GAIN 1/6); returns with the initial slow start ended at t₀ by
    /// a queueing delay of 50 ms > 45 ms.
    fn plus_plus_after_slow_start(t0: u64) -> (Ledbat, Sock) {
        let mut l = ledbat(LedbatConfig::plus_plus());
        let mut tp = sock(50, INFINITE_SSTHRESH);
        tp.srtt_us = 20_000;
        tp.now_us = t0;
        l.init(&mut tp);
        set_delay(&mut l, &mut tp, 20_000, 50_000);
        l.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_ssthresh, 50);
        (l, tp)
    }

    fn ack_at(l: &mut Ledbat, tp: &mut Sock, t: u64, rtt_us: u64) {
        tp.now_us = t;
        let w = tp.snd_cwnd;
        l.pkts_acked(tp, &ack(rtt_us as i64, w));
        l.cong_avoid(tp, 1);
    }

    // LV7: slow start ends at t₀ (RTT 20 ms) → slowdown at t₀ + 40 ms; cwnd 2
    // until t₀ + 80 ms; the ramp ends at t₀ + 140 ms (the slowdown took
    // 100 ms) → next slowdown at t₀ + 140 + 900 ms.
    #[test]
    fn tv_lv7_slowdown_schedule() {
        let ms = 1000;
        let t0 = 5_000 * ms;
        let (mut l, mut tp) = plus_plus_after_slow_start(t0);
        assert_eq!(l.next_slowdown_us, Some(t0 + 40 * ms));
        ack_at(&mut l, &mut tp, t0 + 39 * ms, 70_000);
        assert!(tp.snd_cwnd >= 50, "no slowdown before t₀ + 40 ms");
        ack_at(&mut l, &mut tp, t0 + 40 * ms, 70_000);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh, l.slowdowns), (2, 50, 1), "slowdown: ssthresh = W, W = 2");
        assert_eq!(l.slowdown_phase(), 1.0);
        // Held at 2 for 2 RTTs, whatever the delay says.
        for t in [41, 60, 79] {
            ack_at(&mut l, &mut tp, t0 + t * ms, 20_000);
            assert_eq!(tp.snd_cwnd, 2, "t₀ + {t} ms");
        }
        // From t₀ + 80 ms: slow start at GAIN = 1/6 per packet acked.
        for _ in 0..4 {
            l.pkts_acked(&mut tp, &ack(20_000, 2));
        }
        ack_at(&mut l, &mut tp, t0 + 80 * ms, 20_000);
        assert!(close(l.cwnd, 2.0 + 1.0 / 6.0, 1e-12), "ramp: cwnd {}", l.cwnd);
        assert_eq!(l.slowdown_phase(), 2.0);
        // The ramp goes on below TARGET (45–60 ms does not stop it) ...
        set_delay(&mut l, &mut tp, 20_000, 55_000);
        ack_at(&mut l, &mut tp, t0 + 100 * ms, 75_000);
        assert!(tp.in_slow_start());
        // ... and ends at t₀ + 140 ms when the delay passes TARGET.
        set_delay(&mut l, &mut tp, 20_000, 61_000);
        ack_at(&mut l, &mut tp, t0 + 140 * ms, 81_000);
        assert!(!tp.in_slow_start());
        assert_eq!(l.last_slowdown_us, 100 * ms);
        assert_eq!(l.next_slowdown_us, Some(t0 + 1040 * ms));
        assert_eq!(l.slowdown_phase(), 0.0);
        ack_at(&mut l, &mut tp, t0 + 1039 * ms, 81_000);
        assert_eq!(l.slowdowns, 1);
        ack_at(&mut l, &mut tp, t0 + 1040 * ms, 81_000);
        assert_eq!((l.slowdowns, tp.snd_cwnd), (2, 2));
    }

    // A ramp that reaches the saved ssthresh ends the slowdown too; a loss
    // during the ramp ends it through the sender's recovery.
    #[test]
    fn slowdown_ramp_ends_at_ssthresh() {
        let ms = 1000;
        let t0 = 1_000 * ms;
        let (mut l, mut tp) = plus_plus_after_slow_start(t0);
        ack_at(&mut l, &mut tp, t0 + 40 * ms, 70_000);
        assert_eq!(tp.snd_cwnd, 2);
        set_delay(&mut l, &mut tp, 20_000, 0);
        let mut t = t0 + 80 * ms;
        while tp.in_slow_start() {
            t += ms;
            ack_at(&mut l, &mut tp, t, 20_000);
            assert!(t < t0 + 2_000 * ms);
        }
        assert_eq!(tp.snd_cwnd, 50, "back at the window held before the slowdown");
        ack_at(&mut l, &mut tp, t + ms, 20_000);
        assert_eq!(l.next_slowdown_us, Some(t + ms + 9 * (t + ms - (t0 + 40 * ms))));
    }

    /// One round of a fluid path, as `testkit::FluidPath` but reporting the
    /// flight size (the window) with each ACK, which LEDBAT's
    /// ALLOWED_INCREASE cap reads. None when the queue overflows `buffer`.
    fn round(l: &mut Ledbat, tp: &mut Sock, base_us: u64, bdp: u32, buffer: u32) -> Option<u32> {
        let w = tp.snd_cwnd;
        let queue = w.saturating_sub(bdp);
        if queue > buffer {
            return None;
        }
        let rtt = base_us + base_us * queue as u64 / bdp as u64;
        tp.max_packets_out = w;
        tp.srtt_us = rtt;
        for _ in 0..w {
            tp.now_us += rtt / w as u64;
            tp.snd_una += MSS as u64;
            tp.snd_nxt = tp.snd_una + tp.snd_cwnd as u64 * MSS as u64;
            l.pkts_acked(tp, &ack(rtt as i64, w));
            l.cong_avoid(tp, 1);
        }
        Some(queue)
    }

    // Narrative (RFC 6817): 100-packet pipe, 50 ms, TARGET 100 ms = 200
    // packets queued. Slow start from 2 leaves at 150 queued (¾·TARGET);
    // the window law then approaches 200 with a time constant of
    // TARGET/(50 ms per 100 packets) = 200 RTTs (Δw per RTT = 1 − q/TARGET),
    // so after 1000 RTTs the queue is within a packet of 200 and stays.
    // A loss halves the window; the flow climbs back at ≤ 1 packet per RTT.
    #[test]
    fn narrative_rfc6817_holds_target() {
        let mut l = Ledbat::new(LedbatConfig::rfc6817());
        let mut tp = sock(10, INFINITE_SSTHRESH);
        l.init(&mut tp);
        let mut rounds = 0;
        while tp.in_slow_start() {
            round(&mut l, &mut tp, 50_000, 100, 1000).expect("no overflow");
            rounds += 1;
            assert!(rounds < 20);
        }
        for _ in 0..1000 {
            round(&mut l, &mut tp, 50_000, 100, 1000).unwrap();
        }
        let q = round(&mut l, &mut tp, 50_000, 100, 1000).unwrap();
        assert!((198..=200).contains(&q), "queue {q}");
        let w = tp.snd_cwnd;
        tp.snd_ssthresh = l.ssthresh(&tp);
        tp.snd_cwnd = tp.snd_ssthresh;
        let before = tp.snd_cwnd;
        round(&mut l, &mut tp, 50_000, 100, 1000).unwrap();
        assert_eq!(before, w / 2);
        assert!(tp.snd_cwnd <= before + 1, "≤ GAIN per RTT: {} from {before}", tp.snd_cwnd);
    }

    // Narrative (LEDBAT++): same path, TARGET 60 ms = 120 packets. The queue
    // settles just under 120 (+GAIN up to TARGET, a multiplicative cut
    // above), and slowdowns come every ≈ 10 slowdown lengths, each emptying
    // the queue.
    #[test]
    fn narrative_plus_plus_target_and_slowdowns() {
        let mut l = Ledbat::new(LedbatConfig::plus_plus());
        let mut tp = sock(10, INFINITE_SSTHRESH);
        l.init(&mut tp);
        let mut queues = vec![];
        let (mut slowed_us, mut total_us) = (0, 0);
        for r in 0..3000 {
            let t = tp.now_us;
            queues.push(round(&mut l, &mut tp, 50_000, 100, 1000).expect("no overflow"));
            if r >= 1000 {
                total_us += tp.now_us - t;
                if l.slowdown_phase() > 0.0 {
                    slowed_us += tp.now_us - t;
                }
            }
        }
        assert!(l.slowdowns >= 5, "{} slowdowns", l.slowdowns);
        let tail = &queues[1000..];
        // §4.4: about a tenth of the time (a slowdown, then 9 of its lengths).
        let slowed = slowed_us as f64 / total_us as f64;
        assert!((0.05..=0.12).contains(&slowed), "slowed {slowed:.3} of the time");
        let mut sorted = tail.to_vec();
        sorted.sort();
        let median = sorted[sorted.len() / 2];
        assert!((110..=121).contains(&median), "median queue {median}");
        assert!(*tail.iter().max().unwrap() <= 125, "max {}", tail.iter().max().unwrap());
        assert!(tail.contains(&0), "slowdowns empty the queue");
    }

    #[test]
    fn metric_names_fixed() {
        let l = Ledbat::new(LedbatConfig::rfc6817());
        assert_eq!(
            l.metric_names(),
            &["base_delay_us", "queuing_delay_us", "off_target", "gain", "cwnd_pkts", "slowdowns", "slowdown_phase"]
        );
        let mut m = [0.0; MAX_METRICS];
        l.metrics(&mut m);
        assert!(m[0].is_nan() && m[1].is_nan() && m[2].is_nan(), "no estimate before a sample: {m:?}");
    }

    // Extreme values must not panic (overflow checks are on in tests).
    #[test]
    fn extremes_do_not_panic() {
        for base in [LedbatConfig::rfc6817(), LedbatConfig::plus_plus()] {
            for cfg in [
                LedbatConfig { target_us: 1, gain: Some(1.0), base_history: 1, current_filter: 1, ..base.clone() },
                LedbatConfig { target_us: 100_000, base_history: 100, current_filter: 64, ..base.clone() },
            ] {
                let mut l = Ledbat::new(cfg);
                for &cwnd in &[1u32, 2, 1000, u32::MAX / 2] {
                    let mut tp = sock(cwnd, INFINITE_SSTHRESH);
                    tp.snd_cwnd_clamp = u32::MAX;
                    l.init(&mut tp);
                    tp.snd_cwnd = cwnd;
                    for r in [i64::MAX, 0, 1, -1] {
                        l.pkts_acked(
                            &mut tp,
                            &AckSample { acked: u32::MAX, rtt_us: r, in_flight: u32::MAX, ..Default::default() },
                        );
                    }
                    tp.srtt_us = u64::MAX;
                    tp.now_us = u64::MAX - 1;
                    l.cong_avoid(&mut tp, u32::MAX);
                    l.cong_avoid(&mut tp, 1);
                    tp.now_us = u64::MAX;
                    l.cong_avoid(&mut tp, 1);
                    assert!(tp.snd_cwnd >= 1);
                    let mut m = [0.0; MAX_METRICS];
                    l.metrics(&mut m);
                    assert!(m.iter().all(|x| !x.is_infinite()), "{m:?}");
                    l.ssthresh(&tp);
                }
            }
        }
    }
}
