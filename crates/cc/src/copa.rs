//! Copa: delay-based congestion control with a target rate of 1/(δ·d_q).
//!
//! Sources: V. Arun, H. Balakrishnan, "Copa: Practical Delay-Based
//! Congestion Control for the Internet", USENIX NSDI 2018 (the arXiv/web
//! version, which corrects §5.1 and §5.6 of the camera-ready); the authors'
//! code `venkatarun95/genericCC` (`markoviancc.cc` @25fa626b:
//! `update_intersend_time`, `update_delta`; `rtt-window.cc`:
//! `RTTWindow::is_copa`); Meta's `facebook/mvfst`
//! (`quic/congestion_control/Copa.cpp`: `onPacketAcked`,
//! `checkAndUpdateDirection`, `changeDirection`, `onPacketLoss`).
//!
//! Copa in a nutshell (windows in packets, times in µs):
//!
//! ```text
//! on each ACK of n packets with an RTT sample:
//!     rtt_min  = min RTT over the last 10 s
//!     rtt_st   = min RTT over the last srtt/2        ("standing" RTT: no ACK jitter)
//!     d_q      = rtt_st − rtt_min                    (queueing delay)
//!     target   = 1/(δ·d_q)   packets per second      (+∞ when d_q = 0)
//!     current  = cwnd / rtt_st
//!     slow start: while current ≤ target, cwnd += n (doubles per RTT);
//!                 the first ACK with current > target ends it
//!     otherwise:  cwnd ± n·v/(δ·cwnd)   (+ if current ≤ target, else −; ≥ 2)
//!                 i.e. v/δ packets per RTT toward the target
//!     pacing_rate = 2·cwnd/rtt_st
//! once per srtt (velocity): direction = up if cwnd grew since the last check,
//!     else down; same direction 3 checks running → v doubles at each further
//!     check; a change of direction → v = 1
//! mode (every ACK): over the last min(10 s, 4·srtt), is the queue nearly
//!     empty at least once (min RTT ≤ rtt_min + 0.1·(max RTT − rtt_min))?
//!     yes → DEFAULT: δ = delta (0.5), unless COMPETITIVE halved 1/δ on a
//!           loss within the last srtt (then δ is kept until that srtt is over)
//!     no  → COMPETITIVE (a buffer-filler shares the queue): AIMD on 1/δ,
//!           1/δ += 1 per srtt, 1/δ /= 2 on loss (once per srtt), δ ≤ delta
//! ```
//!
//! Equilibrium (a fluid derivation from the control law): flows that see
//! the same d_q send at 1/(δ·d_q) each, so n flows at capacity μ hold
//! Σ 1/δ packets queued (2 per flow at δ = 0.5), whatever the link rate and
//! the RTTs, and equal δ gives equal rates.
//!
//! Where the sources differ, this file follows:
//! * **Control law and RTT filters**: the paper (d_q from RTT_standing, as
//!   genericCC; mvfst's default uses the latest RTT instead). The filters are
//!   exact windowed minima/maxima over monotone deques, as genericCC's
//!   `ExtremeWindow` (mvfst uses an approximate three-sample filter). When
//!   no sample is as recent as the window, the newest sample stands in (as
//!   genericCC keeps at least one).
//! * **Velocity**: the paper's rule as mvfst implements it
//!   (`checkAndUpdateDirection`; unit test CV3): a check once per srtt, v
//!   doubles from the 3rd consecutive same-direction check, and — mvfst's
//!   addition — v drops to 1 at once when an ACK moves the window against the
//!   current direction while v > 1. genericCC uses an older per-RTT rule.
//! * **Slow start**: +1 packet per packet acknowledged while below the target
//!   (genericCC), which doubles the window per RTT as the paper says; mvfst
//!   doubles in one step once per srtt.
//! * **Pacing**: 2·cwnd/RTT_standing, the paper's rate and genericCC's
//!   (`intersend = 0.5·rtt_standing/cwnd`); mvfst paces 2·cwnd/srtt.
//! * **Competitive mode**: genericCC's `update_delta` with `is_copa()`: the
//!   window min(10 s, 4·srtt) and the 10 % threshold (the paper's "nearly
//!   empty within about 5 RTTs" was not re-read: unconfirmed), and δ bounded
//!   by the default δ (`delta = min(delta, default_delta)` in genericCC; the
//!   paper's bound was not confirmed against the paper's text, the code was
//!   read here). Returning to DEFAULT resets δ to the default, but not within
//!   one RTT of a loss that halved 1/δ: genericCC's default-mode branch
//!   resets only when `prev_delta_update_time_loss + cur_rtt < cur_time`
//!   (cur_rtt is the ACK's RTT sample there; the srtt here, as for the other
//!   once-per-RTT rules): when a buffer-filler's loss episode also drops
//!   Copa packets and then drains the queue, Copa keeps its halved 1/δ for
//!   that RTT instead of falling back to δ = 0.5 at once.
//!   The loss rule's once per RTT is the same guard on the loss path
//!   (`update_delta(true)`); genericCC calls it without an RTT (the
//!   parameter defaults to 0), which as written halves 1/δ on every ACK
//!   that reveals a loss. This file keeps the guard's once per srtt, as
//!   `update_delta` does when it is given an RTT.
//! * **Loss**: in default mode losses do not change the window (genericCC's
//!   `onDupACK`/`onTimeout` are empty; mvfst ignores all but persistent
//!   congestion). A retransmission timeout sets the window to the minimum,
//!   2 packets, as mvfst does on persistent congestion (one source only).
//!
//! Points not confirmed against the paper's text, and what this file rests on:
//! the δ bound in competitive mode (genericCC's code, read; the unit test
//! CV5 checks it); the mode-check period (genericCC's 4·srtt, read; no test
//! depends on the paper's "≈ 5 RTTs"); the pacing rate (genericCC @25fa626b
//! and mvfst both pace two windows per RTT; another reading of genericCC gave
//! intersend = RTT/cwnd, apparently another version); the default-mode loss
//! rule (genericCC and mvfst agree; CP5 depends on it); the oscillation's
//! period and amplitude and Copa's measured share against CUBIC (no test
//! depends on them except the ignored CP4 band, see crates/sim/tests/copa.rs).
//!
//! Departures, each for a reason:
//! * The mode test is `≤` where genericCC has `<`, so that a perfectly flat
//!   RTT (no queue at all: max = min = rtt_min) counts as an empty queue;
//!   with `<` such a path would be called competitive.
//! * v is capped at max(1, δ·cwnd), so a step is at most one packet per
//!   packet acknowledged (never faster than slow start up, at most the whole
//!   window per RTT down). Without a cap v doubles without bound while the
//!   window is pinned at its minimum (the direction then reads "down" at
//!   every check). genericCC bounds its step by δ·cwnd in the same way.
//! * The window grows only while the sender is cwnd-limited (Linux
//!   `tcp_is_cwnd_limited`, as every Linux algorithm): an application-limited
//!   flow sees no queue and would otherwise raise cwnd without bound.
//! * `ssthresh` is not part of Copa. It is set to the window when slow start
//!   ends (as Linux does for Vegas and BBR) so that traces show the exit;
//!   `ssthresh()` returns it unchanged (no loss-based reduction).
//!
//! Hooks: the whole update runs in `pkts_acked` (it needs the ACK's RTT
//! sample and runs in every congestion state under either recovery), and
//! `cong_control` returns true so that the sender neither applies PRR nor
//! overwrites the pacing rate. Run it paced (`pacing = true`, the default
//! the front ends pick for it); with the sender's NewReno recovery
//! (`recovery = "newreno"`) the sender sets cwnd itself during recovery and
//! its own pacing rate, and Copa takes the window back on the next ACK.

use std::collections::VecDeque;

use crate::params::{ParamDefault, ParamKind, ParamSpec, Params};
use crate::{AckSample, CaEvent, CongestionControl, RateSample, Sock, MAX_METRICS};

/// RTT_min is the minimum over this long, µs (paper §2.1; genericCC, mvfst: 10 s).
pub const MIN_RTT_WINDOW_US: u64 = 10_000_000;
/// The mode check looks back this many srtt, at most [`MIN_RTT_WINDOW_US`]
/// (genericCC `RTTWindow`: min(10 s, 4·srtt)).
pub const MODE_WINDOW_SRTTS: u64 = 4;
/// "Nearly empty": the window's lowest RTT is within this fraction of the
/// window's highest queueing delay above RTT_min (genericCC `is_copa`: 10 %).
pub const NEARLY_EMPTY_FRACTION: f64 = 0.1;
/// v starts doubling once the direction has held for this many srtt checks
/// (paper §2.1 "three RTTs"; mvfst `velocityDirectionThreshold`).
pub const VELOCITY_SAME_DIRECTION: u32 = 3;
/// The window never goes below 2 packets (genericCC `max(2.0, window)`).
pub const MIN_CWND: f64 = 2.0;
/// Pace at twice the window rate: cwnd is sent in half an RTT_standing,
/// so pacing never limits a window-limited flow (paper, genericCC).
pub const PACING_GAIN: f64 = 2.0;

/// Copa's parameters.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "delta",
        kind: ParamKind::Float { min: 0.001, max: 10.0 },
        default: ParamDefault::Float(0.5),
        doc: "delta of default mode: target rate 1/(delta*d_q), about 1/delta packets queued per flow; paper default 0.5 (mvfst ships 0.05, genericCC sets it by config string)",
    },
    ParamSpec {
        name: "mode_switch",
        kind: ParamKind::Bool,
        default: ParamDefault::Bool(true),
        doc: "switch to competitive mode (AIMD on 1/delta: +1 per srtt, halved on loss, delta <= the default) while the queue is not nearly empty within min(10 s, 4 srtt); false keeps delta fixed (genericCC constant_delta)",
    },
    ParamSpec {
        name: "velocity",
        kind: ParamKind::Bool,
        default: ParamDefault::Bool(true),
        doc: "velocity: the per-RTT step v/delta doubles once the window has moved the same way for 3 srtt checks (paper section 2.1, mvfst); false keeps v = 1",
    },
];

/// Typed Copa configuration (see [`PARAMS`]).
#[derive(Clone, Debug, PartialEq)]
pub struct CopaConfig {
    /// δ of default mode (dimensionless; 1/δ is in packets).
    pub delta: f64,
    /// Detect buffer-filling competitors and switch to competitive mode.
    pub mode_switch: bool,
    /// Use the velocity mechanism (else v = 1).
    pub velocity: bool,
}

impl Default for CopaConfig {
    fn default() -> Self {
        CopaConfig { delta: 0.5, mode_switch: true, velocity: true }
    }
}

impl CopaConfig {
    /// Reads resolved registry parameters.
    pub fn from_params(p: &Params) -> CopaConfig {
        CopaConfig { delta: p.float("delta"), mode_switch: p.bool("mode_switch"), velocity: p.bool("velocity") }
    }
}

/// The paper's target rate 1/(δ·d_q), packets per second (d_q in µs > 0).
pub fn target_rate_pps(delta: f64, dq_us: u64) -> f64 {
    1e6 / (delta * dq_us as f64)
}

/// The control law's direction: true when the current rate cwnd/rtt_st is
/// at most the target 1/(δ·d_q), i.e. cwnd·δ·d_q ≤ rtt_st (no division, so
/// d_q = 0, an infinite target, is simply "up").
pub fn wants_increase(cwnd: f64, delta: f64, rtt_standing_us: u64, dq_us: u64) -> bool {
    cwnd * delta * dq_us as f64 <= rtt_standing_us as f64
}

/// Default or competitive mode (the number is what traces export).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// δ = the configured default: aim at 1/δ packets queued.
    Default = 0,
    /// A buffer-filler keeps the queue from draining: AIMD on 1/δ.
    Competitive = 1,
}

/// Direction of the window at the last velocity check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// No check yet.
    None,
    Up,
    Down,
}

/// Exact windowed minimum and maximum of the RTT samples of the last
/// [`MIN_RTT_WINDOW_US`], answered for any shorter window ending now.
///
/// `mins` holds (time, rtt) with both increasing: each entry is the minimum
/// of every sample taken at or after its time (a newer sample at most as
/// large removes it). The minimum over the samples since time T is then the
/// first entry at or after T. `maxs` is the same with rtt decreasing. RTTs
/// are whole µs, so each deque holds at most one entry per distinct µs value
/// in the window's RTT range.
#[derive(Clone, Debug, Default)]
struct RttWindow {
    mins: VecDeque<(u64, u64)>,
    maxs: VecDeque<(u64, u64)>,
}

impl RttWindow {
    fn push(&mut self, now_us: u64, rtt_us: u64) {
        while self.mins.back().is_some_and(|&(_, r)| r >= rtt_us) {
            self.mins.pop_back();
        }
        self.mins.push_back((now_us, rtt_us));
        while self.maxs.back().is_some_and(|&(_, r)| r <= rtt_us) {
            self.maxs.pop_back();
        }
        self.maxs.push_back((now_us, rtt_us));
        // Forget what is older than 10 s, but always keep the newest sample.
        let horizon = now_us.saturating_sub(MIN_RTT_WINDOW_US);
        for q in [&mut self.mins, &mut self.maxs] {
            while q.len() > 1 && q.front().is_some_and(|&(t, _)| t < horizon) {
                q.pop_front();
            }
        }
    }

    /// The first entry of `q` taken at or after now − win, else the newest.
    fn over(q: &VecDeque<(u64, u64)>, now_us: u64, win_us: u64) -> Option<u64> {
        let from = now_us.saturating_sub(win_us);
        let i = q.partition_point(|&(t, _)| t < from);
        q.get(i).or(q.back()).map(|&(_, r)| r)
    }

    /// Minimum RTT of the samples of the last `win_us`, µs.
    fn min_over(&self, now_us: u64, win_us: u64) -> Option<u64> {
        Self::over(&self.mins, now_us, win_us)
    }

    /// Maximum RTT of the samples of the last `win_us`, µs.
    fn max_over(&self, now_us: u64, win_us: u64) -> Option<u64> {
        Self::over(&self.maxs, now_us, win_us)
    }

    /// RTT_min: the minimum over the 10 s before the newest sample, µs.
    fn min_rtt(&self) -> Option<u64> {
        self.mins.front().map(|&(_, r)| r)
    }
}

/// Per-flow Copa state.
#[derive(Clone, Debug)]
pub struct Copa {
    cfg: CopaConfig,
    /// Congestion window, packets (fractional; `snd_cwnd` is its floor).
    cwnd: f64,
    /// In slow start (until the first ACK that wants a decrease).
    slow_start: bool,
    mode: Mode,
    /// δ in use (the default, or the competitive-mode value).
    delta: f64,
    /// Velocity v (≥ 1), multiplies the per-ACK step.
    velocity: f64,
    direction: Direction,
    /// Consecutive velocity checks with an unchanged direction.
    same_direction: u32,
    /// (time µs, cwnd) at the last velocity check; None before the first.
    record: Option<(u64, f64)>,
    /// Last additive increase of 1/δ in competitive mode, µs.
    last_delta_increase_us: u64,
    /// Last loss that halved 1/δ, µs.
    last_loss_us: Option<u64>,
    rtts: RttWindow,
    /// Filter outputs of the last update, µs (0 = no sample yet), for traces.
    rtt_min_us: u64,
    rtt_standing_us: u64,
}

impl Copa {
    pub fn new(cfg: CopaConfig) -> Copa {
        let delta = cfg.delta;
        Copa {
            cfg,
            cwnd: 10.0,
            slow_start: true,
            mode: Mode::Default,
            delta,
            velocity: 1.0,
            direction: Direction::None,
            same_direction: 0,
            record: None,
            last_delta_increase_us: 0,
            last_loss_us: None,
            rtts: RttWindow::default(),
            rtt_min_us: 0,
            rtt_standing_us: 0,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn delta(&self) -> f64 {
        self.delta
    }

    /// The largest v allowed: a step of at most one packet per packet acknowledged.
    fn velocity_cap(&self) -> f64 {
        (self.delta * self.cwnd).max(1.0)
    }

    /// Window change per packet acknowledged, packets: v/(δ·cwnd).
    fn step_per_packet(&self) -> f64 {
        self.velocity.min(self.velocity_cap()) / (self.delta * self.cwnd)
    }

    /// Paper §2.1 / mvfst `checkAndUpdateDirection`: once per srtt compare
    /// cwnd with its value at the previous check.
    fn update_direction(&mut self, now_us: u64, srtt_us: u64) {
        let Some((t, w)) = self.record else {
            self.record = Some((now_us, self.cwnd));
            return;
        };
        if now_us.saturating_sub(t) < srtt_us {
            return;
        }
        let dir = if self.cwnd > w { Direction::Up } else { Direction::Down };
        if dir != self.direction {
            self.velocity = 1.0;
            self.same_direction = 0;
        } else {
            self.same_direction = self.same_direction.saturating_add(1);
            if self.same_direction >= VELOCITY_SAME_DIRECTION {
                self.velocity = (2.0 * self.velocity).min(self.velocity_cap());
            }
        }
        self.direction = dir;
        self.record = Some((now_us, self.cwnd));
    }

    /// mvfst `changeDirection`: an ACK moves the window against the current
    /// direction while v > 1, so v (built up for the other way) restarts at 1.
    fn change_direction(&mut self, dir: Direction, now_us: u64) {
        if self.direction == dir {
            return;
        }
        self.direction = dir;
        self.velocity = 1.0;
        self.same_direction = 0;
        self.record = Some((now_us, self.cwnd));
    }

    /// genericCC `is_copa`: was the queue nearly empty at least once over the
    /// last min(10 s, 4·srtt)? (`≤` rather than `<`: see the module doc.)
    fn nearly_empty(&self, now_us: u64, srtt_us: u64, rtt_min_us: u64) -> bool {
        let win = MODE_WINDOW_SRTTS.saturating_mul(srtt_us).min(MIN_RTT_WINDOW_US);
        let (Some(lo), Some(hi)) = (self.rtts.min_over(now_us, win), self.rtts.max_over(now_us, win)) else {
            return true;
        };
        lo.saturating_sub(rtt_min_us) as f64 <= NEARLY_EMPTY_FRACTION * hi.saturating_sub(rtt_min_us) as f64
    }

    /// genericCC `update_delta` without a loss: DEFAULT resets δ, but not
    /// within an srtt of the last loss that halved 1/δ in COMPETITIVE
    /// (`prev_delta_update_time_loss + cur_rtt < cur_time` guards the reset);
    /// in COMPETITIVE, 1/δ grows by 1 once per srtt; δ never exceeds the default.
    fn update_mode(&mut self, now_us: u64, srtt_us: u64, nearly_empty: bool) {
        if nearly_empty {
            self.mode = Mode::Default;
            if self.last_loss_us.is_none_or(|t| now_us.saturating_sub(t) > srtt_us) {
                self.delta = self.cfg.delta;
            }
            return;
        }
        if self.mode == Mode::Default {
            self.mode = Mode::Competitive;
            self.last_delta_increase_us = now_us;
        } else if now_us.saturating_sub(self.last_delta_increase_us) >= srtt_us {
            self.delta = 1.0 / (1.0 / self.delta + 1.0);
            self.last_delta_increase_us = now_us;
        }
        self.delta = self.delta.min(self.cfg.delta);
    }

    /// genericCC `update_delta(pkt_lost = true)`: in competitive mode a loss
    /// halves 1/δ, at most once per srtt (the guard
    /// `prev_delta_update_time_loss + cur_rtt < cur_time`; see the module
    /// doc); default mode ignores losses.
    fn on_loss(&mut self, now_us: u64, srtt_us: u64) {
        if self.mode != Mode::Competitive {
            return;
        }
        if self.last_loss_us.is_some_and(|t| now_us.saturating_sub(t) < srtt_us) {
            return;
        }
        self.delta = (2.0 * self.delta).min(self.cfg.delta);
        self.last_loss_us = Some(now_us);
    }

    /// The per-ACK update (paper §2.1; genericCC; mvfst `onPacketAcked`).
    fn on_ack(&mut self, tp: &mut Sock, acked: u32, rtt_us: i64) {
        let now = tp.now_us;
        if rtt_us >= 0 {
            self.rtts.push(now, (rtt_us as u64).max(1));
        }
        let (Some(rtt_min), Some(rtt_st)) = (self.rtts.min_rtt(), self.rtts.min_over(now, tp.srtt_us / 2)) else {
            return;
        };
        self.rtt_min_us = rtt_min;
        self.rtt_standing_us = rtt_st;
        if self.cfg.mode_switch {
            let empty = self.nearly_empty(now, tp.srtt_us, rtt_min);
            self.update_mode(now, tp.srtt_us, empty);
        }
        if acked == 0 {
            return;
        }
        let n = acked as f64;
        let dq = rtt_st.saturating_sub(rtt_min);
        let up = wants_increase(self.cwnd, self.delta, rtt_st, dq);
        // mvfst: no velocity bookkeeping while slow start is still growing.
        if self.cfg.velocity && !(up && self.slow_start) {
            self.update_direction(now, tp.srtt_us);
        }
        if up {
            if tp.is_cwnd_limited() {
                if self.slow_start {
                    self.cwnd += n;
                } else {
                    if self.velocity > 1.0 && self.direction != Direction::Up {
                        self.change_direction(Direction::Up, now);
                    }
                    self.cwnd += n * self.step_per_packet();
                }
            }
        } else {
            if self.velocity > 1.0 && self.direction != Direction::Down {
                self.change_direction(Direction::Down, now);
            }
            self.cwnd = (self.cwnd - n * self.step_per_packet()).max(MIN_CWND);
            if self.slow_start {
                // The first "down" ends slow start (mvfst `onPacketAcked`).
                self.slow_start = false;
                tp.snd_ssthresh = (self.cwnd as u32).max(2);
            }
        }
        self.apply(tp);
    }

    /// Writes cwnd (clamped) and the pacing rate 2·cwnd/RTT_standing.
    fn apply(&mut self, tp: &mut Sock) {
        let clamp = tp.snd_cwnd_clamp.max(1);
        self.cwnd = self.cwnd.clamp(MIN_CWND, (clamp as f64).max(MIN_CWND));
        tp.snd_cwnd = (self.cwnd as u32).clamp(1, clamp);
        if self.rtt_standing_us > 0 {
            let rate = PACING_GAIN * self.cwnd * tp.mss as f64 * 1e6 / self.rtt_standing_us as f64;
            tp.pacing_rate = rate as u64;
        }
    }
}

impl CongestionControl for Copa {
    fn init(&mut self, tp: &mut Sock) {
        self.cwnd = tp.snd_cwnd as f64;
    }

    /// Not loss-based: the threshold stays where slow start left it.
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        tp.snd_ssthresh.max(2)
    }

    /// Copa sets cwnd in `pkts_acked`; the sender's Reno growth must not run.
    fn cong_avoid(&mut self, _tp: &mut Sock, _acked: u32) {}

    /// cwnd and pacing are Copa's (set in `pkts_acked`): no PRR, no
    /// sender-computed pacing rate.
    fn cong_control(&mut self, _tp: &mut Sock, _rs: &RateSample) -> bool {
        true
    }

    fn pkts_acked(&mut self, tp: &mut Sock, sample: &AckSample) {
        self.on_ack(tp, sample.acked, sample.rtt_us);
    }

    /// A packet marked lost: only competitive mode reacts (1/δ halves).
    fn skb_marked_lost(&mut self, tp: &mut Sock, _rs: &RateSample) {
        self.on_loss(tp.now_us, tp.srtt_us);
    }

    /// A retransmission timeout: the window restarts at the minimum (mvfst's
    /// persistent-congestion rule); competitive mode also halves 1/δ.
    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        if ev == CaEvent::Loss {
            self.cwnd = MIN_CWND;
            self.on_loss(tp.now_us, tp.srtt_us);
        }
    }

    /// Nothing to undo: losses did not reduce the window.
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        tp.snd_cwnd
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &["mode", "delta", "velocity", "rtt_min_us", "rtt_standing_us", "queue_delay_us", "direction", "slow_start"]
    }

    /// mode: 0 default, 1 competitive; direction: +1 up, −1 down, 0 none;
    /// RTTs NaN before the first sample.
    fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
        let have = self.rtt_standing_us > 0;
        let nan_if_none = |v: u64| if have { v as f64 } else { f64::NAN };
        out[0] = self.mode as u8 as f64;
        out[1] = self.delta;
        out[2] = self.velocity;
        out[3] = nan_if_none(self.rtt_min_us);
        out[4] = nan_if_none(self.rtt_standing_us);
        out[5] = nan_if_none(self.rtt_standing_us.saturating_sub(self.rtt_min_us));
        out[6] = match self.direction {
            Direction::None => 0.0,
            Direction::Up => 1.0,
            Direction::Down => -1.0,
        };
        out[7] = if self.slow_start { 1.0 } else { 0.0 };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit;
    use crate::INFINITE_SSTHRESH;

    macro_rules! assert_close {
        ($a:expr, $b:expr, $tol:expr) => {{
            let (a, b): (f64, f64) = ($a, $b);
            assert!((a - b).abs() <= $tol, "{} = {a}, expected {b} ± {}", stringify!($a), $tol);
        }};
    }

    fn copa(cfg: CopaConfig) -> (Copa, Sock) {
        let mut c = Copa::new(cfg);
        let mut tp = testkit::sock_at(10, INFINITE_SSTHRESH, 100_000_000);
        c.init(&mut tp);
        (c, tp)
    }

    fn fixed_delta() -> CopaConfig {
        CopaConfig { mode_switch: false, ..CopaConfig::default() }
    }

    fn ack(c: &mut Copa, tp: &mut Sock, acked: u32, rtt_us: i64) {
        c.pkts_acked(tp, &AckSample { acked, rtt_us, ..Default::default() });
        assert!(c.cong_control(tp, &RateSample::default()));
    }

    /// A flow out of slow start with RTT_min = `min_us` (sampled 1 s ago)
    /// and, now, a standing RTT of `st_us` (srtt = `st_us`).
    fn steady(cfg: CopaConfig, cwnd: f64, min_us: u64, st_us: u64) -> (Copa, Sock) {
        let (mut c, mut tp) = copa(cfg);
        c.slow_start = false;
        c.cwnd = cwnd;
        tp.snd_cwnd = cwnd as u32;
        tp.snd_ssthresh = cwnd as u32;
        tp.max_packets_out = cwnd as u32;
        tp.srtt_us = st_us;
        c.rtts.push(tp.now_us - 1_000_000, min_us);
        (c, tp)
    }

    #[test]
    fn defaults() {
        let p = crate::registry::resolve_params("copa", &[]).unwrap();
        assert_eq!(CopaConfig::from_params(&p), CopaConfig::default());
        assert_eq!(CopaConfig::default(), CopaConfig { delta: 0.5, mode_switch: true, velocity: true });
    }

    // CV1: δ 0.5, d_q 2 ms → target 1/(0.5·0.002) = 1000 packets/s
    // (12 Mbit/s of 1500-byte packets). cwnd 100, RTT_st 50 ms → current
    // 100/0.05 = 2000 packets/s > target → decrease by v/(δ·cwnd) =
    // 1/(0.5·100) = 0.02 packet per ACK (v = 1), 2 packets per RTT.
    #[test]
    fn cv1_decrease_above_target() {
        assert_close!(target_rate_pps(0.5, 2_000), 1000.0, 1e-9);
        assert_close!(target_rate_pps(0.5, 2_000) * 1500.0 * 8.0, 12e6, 1e-3);
        assert!(!wants_increase(100.0, 0.5, 50_000, 2_000));
        let (mut c, mut tp) = steady(fixed_delta(), 100.0, 48_000, 50_000);
        ack(&mut c, &mut tp, 1, 50_000);
        assert_eq!((c.rtt_min_us, c.rtt_standing_us), (48_000, 50_000));
        assert_close!(c.cwnd, 99.98, 1e-9);
        assert_eq!(tp.snd_cwnd, 99);
        // A window's worth of ACKs (v = 1 throughout: no srtt has passed)
        // takes about 2 packets off: Σ 1/(0.5·w) over 100 ACKs with w
        // going from 100 to 98 is 2·100/99 = 2.02.
        for _ in 1..100 {
            ack(&mut c, &mut tp, 1, 50_000);
        }
        assert_close!(c.cwnd, 100.0 - 200.0 / 99.0, 0.001);
    }

    // CV2: same with d_q 0.5 ms: target 1/(0.5·0.0005) = 4000 packets/s;
    // current 100/0.0485 = 2062 < 4000 → increase 0.02 per ACK.
    #[test]
    fn cv2_increase_below_target() {
        assert_close!(target_rate_pps(0.5, 500), 4000.0, 1e-9);
        assert!(wants_increase(100.0, 0.5, 48_500, 500));
        let (mut c, mut tp) = steady(fixed_delta(), 100.0, 48_000, 48_500);
        ack(&mut c, &mut tp, 1, 48_500);
        assert_close!(c.cwnd, 100.02, 1e-9);
        // A stretch ACK of n packets counts as n ACKs (mvfst `onPacketAcked`
        // multiplies the step by the packets acked).
        ack(&mut c, &mut tp, 4, 48_500);
        assert_close!(c.cwnd, 100.02 + 4.0 / (0.5 * 100.02), 1e-9);
        // The pacing rate is 2·cwnd/RTT_standing, in payload bytes per second.
        let want = 2.0 * c.cwnd * testkit::MSS as f64 / 0.0485;
        assert!((tp.pacing_rate as f64 - want).abs() <= 1.0, "{} vs {want}", tp.pacing_rate);
    }

    // No queue (d_q = 0): the target is infinite, always "up".
    #[test]
    fn zero_queueing_delay_is_up() {
        assert!(wants_increase(1e9, 0.5, 50_000, 0));
        let (mut c, mut tp) = steady(fixed_delta(), 100.0, 50_000, 50_000);
        ack(&mut c, &mut tp, 1, 50_000);
        assert_close!(c.cwnd, 100.02, 1e-9);
    }

    // CV3 (mvfst rule): after the initial record, srtt checks that all see
    // the window grown: 1st sets the direction (counter 0, v = 1), 2nd → 1,
    // 3rd → 2, 4th → 3 ⇒ v = 2, 5th ⇒ v = 4; a "down" check ⇒ v = 1.
    #[test]
    fn cv3_velocity_doubling() {
        let (mut c, _) = copa(CopaConfig::default());
        c.cwnd = 100.0;
        let srtt = 50_000;
        let mut t = 1_000_000;
        c.update_direction(t, srtt);
        assert_eq!((c.direction, c.velocity), (Direction::None, 1.0));
        let mut seen = vec![];
        for _ in 0..5 {
            t += srtt;
            c.cwnd += 1.0;
            c.update_direction(t, srtt);
            seen.push((c.same_direction, c.velocity));
        }
        assert_eq!(seen, vec![(0, 1.0), (1, 1.0), (2, 1.0), (3, 2.0), (4, 4.0)]);
        assert_eq!(c.direction, Direction::Up);
        // Not yet an srtt since the last check: nothing happens.
        c.cwnd += 1.0;
        c.update_direction(t + srtt - 1, srtt);
        assert_eq!(c.velocity, 4.0);
        // An unchanged window reads "down" (mvfst: up only if larger).
        t += srtt;
        c.cwnd -= 1.0;
        c.update_direction(t, srtt);
        assert_eq!((c.direction, c.same_direction, c.velocity), (Direction::Down, 0, 1.0));
    }

    // mvfst changeDirection: while v > 1 going down, an ACK that wants an
    // increase restarts v at 1 before the step (so the step is 1/(δ·cwnd)).
    #[test]
    fn opposite_ack_resets_velocity_at_once() {
        let (mut c, mut tp) = steady(CopaConfig::default(), 100.0, 48_000, 48_500);
        c.direction = Direction::Down;
        c.velocity = 8.0;
        c.record = Some((tp.now_us, 100.0));
        ack(&mut c, &mut tp, 1, 48_500); // d_q 0.5 ms: "up" (CV2)
        assert_eq!((c.direction, c.velocity), (Direction::Up, 1.0));
        assert_close!(c.cwnd, 100.02, 1e-9);
        // With v = 8 kept (same direction), the step is 8/(δ·cwnd).
        c.velocity = 8.0;
        let w = c.cwnd;
        ack(&mut c, &mut tp, 1, 48_500);
        assert_close!(c.cwnd, w + 8.0 / (0.5 * w), 1e-9);
    }

    // The cap: v ≤ max(1, δ·cwnd) (a step of at most one packet per packet
    // acknowledged), and v cannot grow without bound at the minimum window.
    #[test]
    fn velocity_is_capped() {
        let (mut c, _) = copa(CopaConfig::default());
        c.cwnd = MIN_CWND;
        let mut t = 0;
        for _ in 0..5000 {
            t += 10_000;
            c.update_direction(t, 10_000);
        }
        assert_eq!(c.direction, Direction::Down);
        assert_eq!(c.velocity, 1.0, "δ·cwnd = 1 at the minimum window");
        c.cwnd = 40.0;
        for _ in 0..50 {
            t += 10_000;
            c.update_direction(t, 10_000);
        }
        assert_eq!(c.velocity, 20.0);
        assert_close!(c.step_per_packet(), 1.0, 1e-12);
    }

    // Velocity off: v stays 1 however long the direction holds.
    #[test]
    fn velocity_off() {
        let (mut c, mut tp) =
            steady(CopaConfig { velocity: false, mode_switch: false, ..Default::default() }, 100.0, 48_000, 48_500);
        for _ in 0..10_000 {
            tp.now_us += 1_000;
            ack(&mut c, &mut tp, 1, 48_500);
        }
        assert_eq!(c.velocity, 1.0);
        assert_eq!(c.direction, Direction::None);
    }

    // CV4, the (fluid) equilibrium of the control law: one flow at capacity
    // μ with q packets queued has cwnd = BDP + q, RTT_st = (BDP + q)/μ,
    // d_q = q/μ, and wants an increase iff q ≤ 1/δ. The hold point is 2
    // packets at δ = 0.5 (0.24 ms at 100 Mbit/s = 8333.3 packets/s), 4 at
    // δ = 0.25, whatever the BDP.
    #[test]
    fn cv4_single_flow_equilibrium_is_one_over_delta_packets() {
        let mu = 100e6 / 8.0 / 1500.0; // packets per second
        for (delta, q_eq) in [(0.5, 2.0), (0.25, 4.0), (0.1, 10.0)] {
            for bdp in [10.0, 417.0, 8333.0] {
                let decide = |q: f64| {
                    let rtt_st = ((bdp + q) / mu * 1e6).round() as u64;
                    let dq = (q / mu * 1e6).round() as u64;
                    wants_increase(bdp + q, delta, rtt_st, dq)
                };
                assert!(decide(q_eq * 0.95), "δ {delta}, BDP {bdp}: below 1/δ must grow");
                assert!(!decide(q_eq * 1.05), "δ {delta}, BDP {bdp}: above 1/δ must shrink");
            }
        }
        assert_close!(2.0 / mu * 1e3, 0.24, 1e-12); // ms
    }

    // CV4, several flows (fluid): with the same d_q, flow i holds at
    // λ_i = 1/(δ_i·d_q), and Σλ_i = μ gives d_q = Σ(1/δ_i)/μ: 10 flows at
    // δ = 0.5 → 20 packets = 2.4 ms, each at μ/10; δ = 0.5 and 0.25 → 6
    // packets = 0.72 ms, shares 1/3 : 2/3. At that d_q each flow's decision
    // flips exactly at its share.
    #[test]
    fn cv4_several_flows_share_by_one_over_delta() {
        let mu = 100e6 / 8.0 / 1500.0;
        let dq_10 = 20.0 / mu;
        assert_close!(dq_10 * 1e3, 2.4, 1e-12);
        assert_close!(target_rate_pps(0.5, (dq_10 * 1e6).round() as u64), mu / 10.0, 0.5);
        let dq_2 = (1.0 / 0.5 + 1.0 / 0.25) / mu;
        assert_close!(dq_2 * 1e3, 0.72, 1e-12);
        let dq_us = (dq_2 * 1e6).round() as u64; // 720 µs
        let (a, b) = (target_rate_pps(0.5, dq_us), target_rate_pps(0.25, dq_us));
        assert_close!(a / mu, 1.0 / 3.0, 1e-9);
        assert_close!(b / mu, 2.0 / 3.0, 1e-9);
        // A flow at its share with RTT_st 50.72 ms holds; 5 % more shrinks.
        let rtt_st = 50_720;
        let w = |rate: f64| rate * rtt_st as f64 / 1e6;
        assert!(wants_increase(w(a) * 0.95, 0.5, rtt_st, dq_us));
        assert!(!wants_increase(w(a) * 1.05, 0.5, rtt_st, dq_us));
        assert!(wants_increase(w(b) * 0.95, 0.25, rtt_st, dq_us));
        assert!(!wants_increase(w(b) * 1.05, 0.25, rtt_st, dq_us));
    }

    // CV5: competitive mode, AIMD on 1/δ: 1/δ = 2 → after 10 loss-free
    // srtts 12 (δ = 0.083) → loss → 6. Losses within an srtt of the last
    // count once; 1/δ never drops below 1/δ_default = 2 (genericCC's
    // `delta = min(delta, default_delta)`; the paper's bound is unconfirmed);
    // an empty queue returns to DEFAULT with δ = 0.5.
    #[test]
    fn cv5_competitive_aimd_on_inverse_delta() {
        let (mut c, _) = copa(CopaConfig::default());
        let srtt = 100_000;
        let mut t = 5_000_000;
        c.update_mode(t, srtt, false);
        assert_eq!((c.mode, c.delta), (Mode::Competitive, 0.5));
        for _ in 0..10 {
            c.update_mode(t + srtt / 2, srtt, false); // within the srtt: no change
            t += srtt;
            c.update_mode(t, srtt, false);
        }
        assert_close!(1.0 / c.delta, 12.0, 1e-9);
        assert_close!(c.delta, 0.083, 0.0004);
        c.on_loss(t, srtt);
        assert_close!(1.0 / c.delta, 6.0, 1e-9);
        c.on_loss(t + srtt - 1, srtt);
        assert_close!(1.0 / c.delta, 6.0, 1e-9);
        c.on_loss(t + srtt, srtt);
        assert_close!(1.0 / c.delta, 3.0, 1e-9);
        c.on_loss(t + 2 * srtt, srtt);
        assert_close!(1.0 / c.delta, 2.0, 1e-9); // 1.5, bounded by δ ≤ 0.5
        c.update_mode(t + 3 * srtt, srtt, true);
        assert_eq!((c.mode, c.delta), (Mode::Default, 0.5));
        // Default mode ignores losses.
        c.on_loss(t + 10 * srtt, srtt);
        assert_eq!(c.delta, 0.5);
    }

    // genericCC `update_delta`: back in DEFAULT, δ returns to the default
    // only once an RTT has passed since COMPETITIVE last halved 1/δ on a
    // loss (`prev_delta_update_time_loss + cur_rtt < cur_time`); without
    // such a loss the return resets δ at once. COMPETITIVE resumes its AIMD
    // from the δ kept.
    #[test]
    fn default_mode_keeps_delta_within_an_rtt_of_a_competitive_loss() {
        let (mut c, _) = copa(CopaConfig::default());
        let srtt = 100_000;
        let mut t = 5_000_000;
        c.update_mode(t, srtt, false);
        for _ in 0..20 {
            t += srtt;
            c.update_mode(t, srtt, false);
        }
        assert_close!(1.0 / c.delta, 22.0, 1e-9);
        c.on_loss(t, srtt);
        assert_close!(1.0 / c.delta, 11.0, 1e-9);
        // The queue reads nearly empty within the srtt after the loss.
        c.update_mode(t + srtt / 2, srtt, true);
        assert_eq!(c.mode, Mode::Default);
        assert_close!(1.0 / c.delta, 11.0, 1e-9);
        c.update_mode(t + srtt, srtt, true);
        assert_close!(1.0 / c.delta, 11.0, 1e-9);
        // Competitive again: the AIMD goes on from 1/δ = 11.
        c.update_mode(t + srtt + 1, srtt, false);
        assert_eq!(c.mode, Mode::Competitive);
        c.update_mode(t + 2 * srtt + 1, srtt, false);
        assert_close!(1.0 / c.delta, 12.0, 1e-9);
        // Nearly empty more than an srtt after the loss: δ = the default.
        c.update_mode(t + 2 * srtt + 2, srtt, true);
        assert_eq!((c.mode, c.delta), (Mode::Default, 0.5));

        // Without a loss in the last srtt the return resets δ at once.
        let (mut c, _) = copa(CopaConfig::default());
        let mut t = 5_000_000;
        c.update_mode(t, srtt, false);
        for _ in 0..5 {
            t += srtt;
            c.update_mode(t, srtt, false);
        }
        assert_close!(1.0 / c.delta, 7.0, 1e-9);
        c.update_mode(t + 1, srtt, true);
        assert_eq!((c.mode, c.delta), (Mode::Default, 0.5));
    }

    // CV6: RTT_min 50 ms, max in the window 90 ms → threshold
    // 50 + 0.1·40 = 54 ms; window min 53 ms → DEFAULT, 60 ms → COMPETITIVE.
    // The window is min(10 s, 4·srtt): older samples do not count.
    #[test]
    fn cv6_mode_check() {
        let srtt = 60_000; // window 240 ms
        let now = 20_000_000;
        for (lo, empty) in [(53_000, true), (60_000, false), (54_000, true)] {
            let (mut c, _) = copa(CopaConfig::default());
            c.rtts.push(now - 5_000_000, 50_000); // RTT_min, outside the mode window
            c.rtts.push(now - 1_000_000, 52_000); // outside the mode window too
            c.rtts.push(now - 200_000, 90_000);
            c.rtts.push(now - 100_000, lo);
            c.rtts.push(now, 70_000);
            assert_eq!(c.rtts.min_rtt(), Some(50_000));
            assert_eq!(c.nearly_empty(now, srtt, 50_000), empty, "window min {lo}");
        }
    }

    // A flat RTT (no queue at all) counts as empty (our `≤`; see the module doc).
    #[test]
    fn flat_rtt_is_default_mode() {
        let (mut c, mut tp) = copa(CopaConfig::default());
        tp.srtt_us = 50_000;
        for _ in 0..100 {
            tp.now_us += 5_000;
            ack(&mut c, &mut tp, 1, 50_000);
        }
        assert_eq!(c.mode, Mode::Default);
    }

    // The windowed filters are exact: minimum over any window ending now,
    // maximum likewise, the newest sample when none is that recent, and
    // RTT_min forgets samples older than 10 s (keeping the newest).
    #[test]
    fn rtt_window_filters() {
        let mut w = RttWindow::default();
        let samples = [(0, 50), (1_000, 70), (2_000, 60), (3_000, 80), (4_000, 65), (5_000, 75)];
        for (t, r) in samples {
            w.push(t, r);
        }
        let brute = |from: u64, max: bool| {
            let it = samples.iter().filter(|s| s.0 >= from).map(|s| s.1);
            if max {
                it.max()
            } else {
                it.min()
            }
        };
        for win in [0, 500, 1_000, 1_500, 2_500, 3_000, 4_000, 5_000, 9_000] {
            let from = 5_000u64.saturating_sub(win);
            assert_eq!(w.min_over(5_000, win), brute(from, false), "min over {win}");
            assert_eq!(w.max_over(5_000, win), brute(from, true), "max over {win}");
        }
        assert_eq!(w.min_rtt(), Some(50));
        // Nothing within the last 1 µs at t = 9000: the newest sample stands in.
        assert_eq!(w.min_over(9_000, 1), Some(75));
        // 10 s later the old minimum is gone.
        w.push(MIN_RTT_WINDOW_US + 1_500, 90);
        assert_eq!(w.min_rtt(), Some(60));
        w.push(3 * MIN_RTT_WINDOW_US, 100);
        assert_eq!((w.min_rtt(), w.max_over(3 * MIN_RTT_WINDOW_US, MIN_RTT_WINDOW_US)), (Some(100), Some(100)));
        assert_eq!((w.mins.len(), w.maxs.len()), (1, 1));
    }

    // Slow start: +1 per packet acknowledged while below the target
    // (doubling per RTT); the first ACK that wants a decrease ends it and
    // records the window as ssthresh. Not cwnd-limited: no growth.
    #[test]
    fn slow_start_until_first_decrease() {
        let (mut c, mut tp) = copa(fixed_delta());
        tp.srtt_us = 50_000;
        for _ in 0..10 {
            tp.now_us += 5_000;
            ack(&mut c, &mut tp, 1, 50_000);
        }
        assert!(c.slow_start);
        assert_eq!(tp.snd_cwnd, 20);
        assert_eq!(c.direction, Direction::None, "no velocity checks while slow start grows");
        tp.is_cwnd_limited = false;
        tp.max_packets_out = 5; // 20 ≥ 2·5: not cwnd-limited in slow start
        ack(&mut c, &mut tp, 2, 50_000);
        assert_eq!(tp.snd_cwnd, 20);
        // A queue of 2 ms at cwnd 20, RTT_st 52 ms: 20·0.5·2000 = 20000 ≤
        // 52000, still up; at 6 ms, 60000 > 56000: down, slow start ends.
        tp.max_packets_out = 20;
        tp.is_cwnd_limited = true;
        tp.now_us += 100_000;
        ack(&mut c, &mut tp, 1, 52_000);
        assert!(c.slow_start);
        assert_eq!(tp.snd_cwnd, 21);
        tp.now_us += 100_000;
        ack(&mut c, &mut tp, 1, 56_000);
        assert!(!c.slow_start);
        assert_close!(c.cwnd, 21.0 - 1.0 / (0.5 * 21.0), 1e-9);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (20, 20));
        assert!(!tp.in_slow_start());
    }

    // Default mode ignores losses (fast retransmit); a retransmission
    // timeout restarts the window at 2 packets. ssthresh() and undo change
    // nothing; cong_avoid does nothing.
    #[test]
    fn loss_response() {
        let (mut c, mut tp) = steady(CopaConfig::default(), 100.0, 48_000, 50_000);
        ack(&mut c, &mut tp, 1, 50_000);
        let w = (c.cwnd, tp.snd_cwnd);
        c.skb_marked_lost(&mut tp, &RateSample::default());
        assert_eq!(c.ssthresh(&tp), tp.snd_ssthresh);
        c.set_state(&mut tp, crate::CaState::Recovery);
        assert_eq!((c.cwnd, tp.snd_cwnd), w);
        assert_eq!(c.undo_cwnd(&tp), tp.snd_cwnd);
        c.cong_avoid(&mut tp, 10);
        assert_eq!(tp.snd_cwnd, w.1);
        c.cwnd_event(&mut tp, CaEvent::Loss);
        assert_eq!(c.cwnd, MIN_CWND);
        tp.snd_cwnd = 1; // as the sender does on a timeout
                         // The next ACK (still below the target) grows from 2 by v/(δ·2) = 1.
        ack(&mut c, &mut tp, 1, 50_000);
        assert_eq!(tp.snd_cwnd, 3);
        assert_eq!(c.delta, 0.5);
    }

    // Competitive mode, end to end through the hooks: the RTT never comes
    // back near RTT_min, so the mode switches, 1/δ climbs by one per srtt,
    // and a loss halves it.
    #[test]
    fn competitive_mode_through_hooks() {
        let (mut c, mut tp) = copa(CopaConfig::default());
        c.slow_start = false;
        tp.srtt_us = 100_000;
        ack(&mut c, &mut tp, 1, 50_000); // RTT_min
        for i in 0..200 {
            tp.now_us += 10_000;
            // A buffer-filler keeps 100–150 ms of queue.
            ack(&mut c, &mut tp, 1, 150_000 + 50_000 * (i % 2));
        }
        assert_eq!(c.mode, Mode::Competitive);
        // 2 s = 20 srtts after the switch (the 4·srtt window first has to
        // lose the RTT_min sample): 1/δ ≈ 2 + 16.
        assert!((15.0..=19.0).contains(&(1.0 / c.delta)), "1/δ = {}", 1.0 / c.delta);
        let inv = 1.0 / c.delta;
        c.skb_marked_lost(&mut tp, &RateSample::default());
        assert_close!(1.0 / c.delta, inv / 2.0, 1e-9);
    }

    // Narrative on a fluid path (bdp 100 packets, 100 ms, buffer 300): slow
    // start from IW10 ends once the queue shows, Copa drains what slow start
    // queued, then holds the queue around 1/δ = 2 packets (the fluid
    // equilibrium): over the last 200 rounds the mean is within
    // [1/(2δ), 4/δ] = [1, 8] (CP1 in crates/sim/tests/copa.rs: "≈ 1/δ to a
    // few × 1/δ"), the buffer never overflows and the link stays busy (the
    // queue is empty in fewer than half the rounds).
    //
    // δ is fixed here (no mode switch). In this round-by-round model the
    // window's effect on the RTT is seen within the same round, so the
    // oscillation is smaller than on a real path and the queue rarely drains
    // below 10 % of its recent maximum: the mode check would call the path
    // competitive. The mode switch is tested through the simulator instead
    // (crates/sim/tests/copa.rs, CP1: DEFAULT ≥ 95 % of the time).
    #[test]
    fn narrative_fluid_path() {
        let (base, bdp, buffer) = (100_000u64, 100.0, 300.0);
        let (mut c, mut tp) = copa(fixed_delta());
        let mut queues = vec![];
        let mut exit_round = None;
        for round in 0..400 {
            let w = tp.snd_cwnd as f64;
            let q = (w - bdp).max(0.0);
            assert!(q <= buffer, "round {round}: queue {q} overflows");
            let rtt = base + (q / bdp * base as f64) as u64;
            tp.srtt_us = if tp.srtt_us == 0 { rtt } else { (7 * tp.srtt_us + rtt) / 8 };
            tp.max_packets_out = tp.snd_cwnd;
            for _ in 0..tp.snd_cwnd {
                tp.now_us += rtt / w as u64;
                ack(&mut c, &mut tp, 1, rtt as i64);
            }
            if exit_round.is_none() && !c.slow_start {
                exit_round = Some(round);
            }
            queues.push(q);
        }
        let exit = exit_round.expect("slow start ended");
        assert!(exit < 10, "slow start ended in round {exit}");
        let tail = &queues[200..];
        let mean = tail.iter().sum::<f64>() / tail.len() as f64;
        let empty = tail.iter().filter(|&&q| q == 0.0).count();
        println!("slow start ended in round {exit}; tail mean queue {mean:.2}, empty in {empty}/200 rounds");
        assert!((1.0..=8.0).contains(&mean), "mean queue {mean:.2} packets");
        assert!(empty < 100, "queue empty in {empty} of 200 rounds");
    }

    #[test]
    fn metric_names_fixed() {
        let c = Copa::new(CopaConfig::default());
        assert_eq!(
            c.metric_names(),
            &[
                "mode",
                "delta",
                "velocity",
                "rtt_min_us",
                "rtt_standing_us",
                "queue_delay_us",
                "direction",
                "slow_start"
            ]
        );
        let mut m = [0.0; MAX_METRICS];
        c.metrics(&mut m);
        assert!(m[3].is_nan() && m[4].is_nan() && m[5].is_nan());
        assert_eq!((m[0], m[1], m[2], m[7]), (0.0, 0.5, 1.0, 1.0));
    }

    // Extreme values must not panic (overflow checks are on in tests), and
    // the window stays within [1, clamp].
    #[test]
    fn extremes_do_not_panic() {
        for delta in [0.001, 0.5, 10.0] {
            for cwnd in [1u32, 2, 1000, u32::MAX / 2] {
                let mut c = Copa::new(CopaConfig { delta, ..Default::default() });
                let mut tp = testkit::sock_at(cwnd, INFINITE_SSTHRESH, u64::MAX / 4);
                c.init(&mut tp);
                for (i, r) in [0i64, 1, i64::MAX / 4, -1, 1, 2_000_000].into_iter().cycle().take(200).enumerate() {
                    tp.now_us = tp.now_us.saturating_add(if i % 7 == 0 { u64::MAX / 64 } else { 1 });
                    tp.srtt_us = if i % 3 == 0 { 0 } else { u64::MAX / 8 };
                    ack(&mut c, &mut tp, [0, 1, u32::MAX][i % 3], r);
                    assert!(tp.snd_cwnd >= 1 && tp.snd_cwnd <= tp.snd_cwnd_clamp);
                    assert!(c.cwnd.is_finite() && c.velocity.is_finite() && c.delta > 0.0);
                    if i % 11 == 0 {
                        c.cwnd_event(&mut tp, CaEvent::Loss);
                        c.skb_marked_lost(&mut tp, &RateSample::default());
                    }
                }
            }
        }
    }
}
