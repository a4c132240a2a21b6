//! H-TCP, following Linux `net/ipv4/tcp_htcp.c`.
//!
//! Sources: D. Leith, R. Shorten, "H-TCP: TCP for high-speed and
//! long-distance networks", PFLDnet 2004; Linux `tcp_htcp.c` (B. Even).
//!
//! H-TCP in a nutshell: the additive increase grows with the time Δ since the
//! last congestion event, and the backoff adapts to the queueing delay.
//!
//! ```text
//!  α_H(Δ) = 1                                  Δ ≤ Δ_L = 1 s
//!         = 1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)²     Δ > Δ_L       (packets per RTT)
//!  α      = 2(1 − β)·α_H(Δ)·RTT_min/100 ms      (Reno-equivalent at small Δ;
//!                                               RTT scaling clamped to [0.5, 10]×)
//!  β      = RTT_min/RTT_max ∈ [0.5, 0.8]        (adaptive backoff)
//!         = 0.5 if the throughput before this congestion event differs by
//!               more than 20 % from the one before the last event
//!  per ACK: cwnd += α/cwnd                     on loss: cwnd ← β·cwnd
//! ```
//!
//! Time is counted, as in Linux, in jiffies, with HZ = 1000 (1 jiffy = 1 ms):
//! Linux's integer α(Δ) depends on it (`factor = 1 + (10·d + (d/2)²/HZ)/HZ`
//! with d = Δ − 1 s in jiffies), and so do RTT_min and RTT_max, which Linux
//! rounds up to whole jiffies.
//!
//! Deviations from Linux:
//! * The quadratic term `(d/2)²` is computed in 64 bits; Linux's 32-bit
//!   product wraps once Δ exceeds ≈ 132 s without a congestion event.
//! * Linux uses `undo_last_cong == 0` as "nothing to undo", which would
//!   misfire if a congestion event happened at jiffy 0 (Linux starts jiffies
//!   at −5 min, so it never does); here it is an `Option`.

use crate::params::{ParamDefault, ParamKind, ParamSpec, Params};
use crate::{common, CaState, CongestionControl, Sock, MAX_METRICS};

/// Linux `HZ` as used here: jiffies per second (1 jiffy = 1 ms).
const HZ: u64 = 1000;
/// α is stored ×128 (Linux `<< 7`); `ALPHA_BASE` is 1.0 packet per RTT.
const ALPHA_SHIFT: u32 = 7;
const ALPHA_BASE: u32 = 1 << ALPHA_SHIFT;
/// β is stored ×128. `BETA_MIN` = 64/128 = 0.5, `BETA_MAX` = 102/128 = 0.797
/// ("0.8" in Linux's comment): the clamp of the adaptive backoff.
const BETA_MIN: u32 = 1 << 6;
const BETA_MAX: u32 = 102;
/// RTT scaling factor ×8 is clamped to [0.5, 10] (Linux `1U << 2`, `10U << 3`).
const RTT_SCALE_MIN: u64 = 1 << 2;
const RTT_SCALE_MAX: u64 = 10 << 3;
/// RTT_max only grows by samples at most 20 ms above it (Linux
/// `msecs_to_jiffies(20)`), to ignore outliers.
const MAX_RTT_STEP_MS: u32 = 20;
/// Adaptive backoff needs RTT_min above 10 ms (Linux `msecs_to_jiffies(10)`).
const MODESWITCH_MIN_RTT_MS: u32 = 10;
/// Throughput samples within this many RTT_min of a backoff restart the
/// estimate (Linux `htcp_ccount(ca) <= 3`).
const BW_RESTART_RTTS: u64 = 3;
/// RTT_max fades towards RTT_min by 5 % per congestion event (Linux 95/100).
const MAX_RTT_FADE_PCT: u64 = 95;

/// H-TCP's parameters; defaults are Linux's module parameters.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "use_rtt_scaling",
        kind: ParamKind::Bool,
        default: ParamDefault::Bool(true),
        doc: "scale alpha by RTT_min/100 ms (clamped to [0.5, 10]) so flows with different RTTs grow alike in time; Linux use_rtt_scaling=1",
    },
    ParamSpec {
        name: "use_bandwidth_switch",
        kind: ParamKind::Bool,
        default: ParamDefault::Bool(true),
        doc: "back off by 0.5 when the throughput before a congestion event differs by more than 20 % from the previous one; Linux use_bandwidth_switch=1",
    },
];

/// Typed H-TCP configuration (see [`PARAMS`]).
#[derive(Clone, Debug, PartialEq)]
pub struct HtcpConfig {
    pub use_rtt_scaling: bool,
    pub use_bandwidth_switch: bool,
}

impl Default for HtcpConfig {
    fn default() -> Self {
        HtcpConfig { use_rtt_scaling: true, use_bandwidth_switch: true }
    }
}

impl HtcpConfig {
    /// Reads resolved registry parameters.
    pub fn from_params(p: &Params) -> HtcpConfig {
        HtcpConfig { use_rtt_scaling: p.bool("use_rtt_scaling"), use_bandwidth_switch: p.bool("use_bandwidth_switch") }
    }
}

/// Linux `usecs_to_jiffies` at HZ = 1000: rounds up.
fn us_to_jiffies(us: u64) -> u32 {
    us.div_ceil(1000).min(u32::MAX as u64) as u32
}

/// Linux `struct htcp`.
#[derive(Clone, Debug)]
pub struct Htcp {
    cfg: HtcpConfig,
    /// Increase per RTT ×128.
    alpha: u32,
    /// Backoff multiplier ×128.
    beta: u32,
    /// Adaptive backoff allowed (set after the first congestion event).
    modeswitch: bool,
    /// Packets acknowledged by the current ACK (Open state only; 1 otherwise).
    pkts_acked: u32,
    /// Packets acknowledged since the last throughput sample.
    packetcount: u32,
    /// RTT_min and RTT_max, jiffies (ms, rounded up); 0 = none.
    min_rtt: u32,
    max_rtt: u32,
    /// Time of the last congestion event, jiffies.
    last_cong: u64,
    /// Saved at each congestion event for `undo_cwnd`.
    undo_last_cong: Option<u64>,
    undo_max_rtt: u32,
    undo_old_maxb: u32,
    /// Throughput estimates, packets per second: smallest and largest since
    /// the last backoff, the largest before that, and the smoothed current one.
    minb: u32,
    maxb: u32,
    old_maxb: u32,
    bi: u32,
    /// Start of the current throughput sample, jiffies.
    lasttime: u64,
}

impl Htcp {
    pub fn new(cfg: HtcpConfig) -> Htcp {
        Htcp {
            cfg,
            alpha: ALPHA_BASE,
            beta: BETA_MIN,
            modeswitch: false,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt: 0,
            max_rtt: 0,
            last_cong: 0,
            undo_last_cong: None,
            undo_max_rtt: 0,
            undo_old_maxb: 0,
            minb: 0,
            maxb: 0,
            old_maxb: 0,
            bi: 0,
            lasttime: 0,
        }
    }

    fn jiffies(tp: &Sock) -> u64 {
        tp.now_us / 1000
    }

    /// Linux `htcp_cong_time`: Δ, jiffies.
    fn cong_time(&self, now: u64) -> u64 {
        now.saturating_sub(self.last_cong)
    }

    /// Linux `htcp_reset`: a congestion event starts now.
    fn reset(&mut self, now: u64) {
        self.undo_last_cong = Some(self.last_cong);
        self.undo_max_rtt = self.max_rtt;
        self.undo_old_maxb = self.old_maxb;
        self.last_cong = now;
    }

    /// Linux `measure_rtt` (the sample is in jiffies).
    fn measure_rtt(&mut self, state: CaState, rtt: u32) {
        if self.min_rtt > rtt || self.min_rtt == 0 {
            self.min_rtt = rtt;
        }
        if state == CaState::Open {
            if self.max_rtt < self.min_rtt {
                self.max_rtt = self.min_rtt;
            }
            if self.max_rtt < rtt && rtt <= self.max_rtt.saturating_add(MAX_RTT_STEP_MS) {
                self.max_rtt = rtt;
            }
        }
    }

    /// Linux `htcp_beta_update`: adaptive backoff at a congestion event.
    fn beta_update(&mut self) {
        if self.cfg.use_bandwidth_switch {
            let (maxb, old_maxb) = (self.maxb as u64, self.old_maxb as u64);
            self.old_maxb = self.maxb;
            // Throughput changed by more than 20 %: the path changed, back
            // off by half and wait one more event before adapting again.
            if !(4 * old_maxb <= 5 * maxb && 5 * maxb <= 6 * old_maxb) {
                self.beta = BETA_MIN;
                self.modeswitch = false;
                return;
            }
        }
        if self.modeswitch && self.min_rtt > MODESWITCH_MIN_RTT_MS && self.max_rtt > 0 {
            // β = RTT_min/RTT_max: empty the queue, no more.
            let b = ((self.min_rtt as u64) << ALPHA_SHIFT) / self.max_rtt as u64;
            self.beta = (b as u32).clamp(BETA_MIN, BETA_MAX);
        } else {
            self.beta = BETA_MIN;
            self.modeswitch = true;
        }
    }

    /// Linux `htcp_alpha_update`: α from Δ, RTT_min and β.
    fn alpha_update(&mut self, now: u64) {
        let mut factor: u64 = 1;
        let mut diff = self.cong_time(now);
        if diff > HZ {
            // Δ_L = 1 s of Reno-like growth, then 1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)².
            diff -= HZ;
            let half = diff / 2;
            factor = 1 + (10u64.saturating_mul(diff)).saturating_add(half.saturating_mul(half) / HZ) / HZ;
        }
        if self.cfg.use_rtt_scaling && self.min_rtt > 0 {
            // ×RTT_min/100 ms, the ratio ×8 clamped to [0.5, 10].
            let scale = ((HZ << 3) / (10 * self.min_rtt as u64)).clamp(RTT_SCALE_MIN, RTT_SCALE_MAX);
            factor = ((factor << 3) / scale).max(1);
        }
        // 2(1 − β): keeps the same average rate as Reno when Δ is small.
        let alpha = 2 * factor * ((1u64 << ALPHA_SHIFT) - self.beta as u64);
        self.alpha = if alpha == 0 { ALPHA_BASE } else { alpha.min(u32::MAX as u64) as u32 };
    }

    /// Linux `htcp_param_update`, at each congestion event.
    fn param_update(&mut self, now: u64) {
        self.beta_update();
        self.alpha_update(now);
        // Slowly fading memory of RTT_max, for routing changes.
        if self.min_rtt > 0 && self.max_rtt > self.min_rtt {
            let span = (self.max_rtt - self.min_rtt) as u64;
            self.max_rtt = self.min_rtt + (span * MAX_RTT_FADE_PCT / 100) as u32;
        }
    }

    /// α in packets per RTT.
    pub fn alpha_pkts(&self) -> f64 {
        self.alpha as f64 / ALPHA_BASE as f64
    }

    /// β as a multiplier.
    pub fn beta(&self) -> f64 {
        self.beta as f64 / ALPHA_BASE as f64
    }
}

impl CongestionControl for Htcp {
    /// Linux `htcp_init`.
    fn init(&mut self, tp: &mut Sock) {
        *self = Htcp::new(self.cfg.clone());
        self.last_cong = Self::jiffies(tp);
    }

    /// Linux `htcp_recalc_ssthresh`.
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        self.param_update(Self::jiffies(tp));
        (((tp.snd_cwnd as u64 * self.beta as u64) >> ALPHA_SHIFT) as u32).max(2)
    }

    /// Linux `htcp_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        if !tp.is_cwnd_limited() {
            return;
        }
        if tp.in_slow_start() {
            // Linux drops what is left of `acked` once ssthresh is reached.
            common::slow_start(tp, acked);
            return;
        }
        // cwnd += α/cwnd per packet: +1 once cnt·α/128 ≥ cwnd (at most one
        // per ACK, and the packets of that ACK are not carried over).
        if (tp.snd_cwnd_cnt as u64 * self.alpha as u64) >> ALPHA_SHIFT >= tp.snd_cwnd as u64 {
            if tp.snd_cwnd < tp.snd_cwnd_clamp {
                tp.snd_cwnd += 1;
            }
            tp.snd_cwnd_cnt = 0;
            self.alpha_update(Self::jiffies(tp));
        } else {
            tp.snd_cwnd_cnt = tp.snd_cwnd_cnt.saturating_add(self.pkts_acked);
        }
        self.pkts_acked = 1;
    }

    /// Linux `htcp_state`: a reduction starts a congestion event; returning
    /// to Open (after an undo was possible) restarts Δ.
    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        let now = Self::jiffies(tp);
        match new_state {
            CaState::Open => {
                if self.undo_last_cong.take().is_some() {
                    self.last_cong = now;
                }
            }
            CaState::Cwr | CaState::Recovery | CaState::Loss => self.reset(now),
            CaState::Disorder => {}
        }
    }

    /// Linux `htcp_cwnd_undo`: the congestion event did not happen.
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        if let Some(last) = self.undo_last_cong.take() {
            self.last_cong = last;
            self.max_rtt = self.undo_max_rtt;
            self.old_maxb = self.undo_old_maxb;
        }
        common::reno_undo_cwnd(tp)
    }

    /// Linux `measure_achieved_throughput`: RTT extremes and the throughput
    /// reached before each congestion event.
    fn pkts_acked(&mut self, tp: &mut Sock, sample: &crate::AckSample) {
        let now = Self::jiffies(tp);
        if tp.ca_state == CaState::Open {
            self.pkts_acked = sample.acked;
        }
        if sample.rtt_us > 0 {
            self.measure_rtt(tp.ca_state, us_to_jiffies(sample.rtt_us as u64));
        }
        if !self.cfg.use_bandwidth_switch {
            return;
        }
        if !matches!(tp.ca_state, CaState::Open | CaState::Disorder) {
            self.packetcount = 0;
            self.lasttime = now;
            return;
        }
        self.packetcount = self.packetcount.saturating_add(sample.acked);

        // A sample per RTT_min and per (almost) a window of packets. Linux's
        // `cwnd − α` is unsigned: when α exceeds cwnd it wraps and no sample
        // is taken.
        let a = (self.alpha >> ALPHA_SHIFT).max(1);
        let enough = tp.snd_cwnd.checked_sub(a).is_some_and(|need| self.packetcount >= need);
        let elapsed = now.saturating_sub(self.lasttime);
        if enough && self.min_rtt > 0 && elapsed >= self.min_rtt as u64 {
            let cur = (self.packetcount as u64 * HZ / elapsed).min(u32::MAX as u64) as u32;
            if self.cong_time(now) / self.min_rtt as u64 <= BW_RESTART_RTTS {
                // Just after a backoff.
                self.minb = cur;
                self.maxb = cur;
                self.bi = cur;
            } else {
                self.bi = ((3 * self.bi as u64 + cur as u64) / 4) as u32;
                self.maxb = self.maxb.max(self.bi);
                self.minb = self.minb.min(self.maxb);
            }
            self.packetcount = 0;
            self.lasttime = now;
        }
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &["alpha_pkts_per_rtt", "beta", "min_rtt_ms", "max_rtt_ms", "max_throughput_pps"]
    }

    fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
        out[0] = self.alpha_pkts();
        out[1] = self.beta();
        out[2] = self.min_rtt as f64;
        out[3] = self.max_rtt as f64;
        out[4] = self.maxb as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit;
    use crate::AckSample;

    fn sock(cwnd: u32, ssthresh: u32) -> Sock {
        testkit::sock_at(cwnd, ssthresh, 100_000_000)
    }

    /// α after Δ seconds since the congestion event, for RTT_min and β given.
    fn alpha_at(delta_s: f64, min_rtt_ms: u32, beta: u32) -> f64 {
        let mut h = Htcp::new(HtcpConfig::default());
        h.min_rtt = min_rtt_ms;
        h.beta = beta;
        h.last_cong = 1_000;
        h.alpha_update(1_000 + (delta_s * 1000.0).round() as u64);
        h.alpha_pkts()
    }

    #[test]
    fn from_params_defaults_equal_default() {
        let p = crate::registry::resolve_params("htcp", &[]).unwrap();
        assert_eq!(HtcpConfig::from_params(&p), HtcpConfig::default());
    }

    // Linux `htcp_alpha_update`, worked by hand: α per RTT at Δ = 0.5 … 11 s for
    // (RTT_min 100 ms, β 0.5), (100 ms, β 102/128), (20 ms, β 0.5). At Δ = 2 s
    // the paper's α_H = 1 + 10 + 0.25 = 11.25; Linux's integer factor gives
    // 1 + (10·1000 + 500²/1000)/1000 = 11, so α = 2·11·(128 − 64)/128 = 11.0.
    #[test]
    fn alpha_vectors() {
        let rows: &[(f64, f64, f64, f64, f64)] = &[
            // Δ, paper α_H, Linux (100, 0.5), Linux (100, 0.8), Linux (20, 0.5)
            (0.5, 1.00, 1.0, 0.41, 1.0),
            (1.5, 6.06, 6.0, 2.44, 1.0),
            (2.0, 11.25, 11.0, 4.47, 2.0),
            (3.0, 22.0, 22.0, 8.94, 4.0),
            (5.0, 45.0, 45.0, 18.3, 9.0),
            (11.0, 126.0, 126.0, 51.2, 25.0),
        ];
        for &(d, paper, a_100, a_100_08, a_20) in rows {
            let alpha_h = if d <= 1.0 { 1.0 } else { 1.0 + 10.0 * (d - 1.0) + 0.25 * (d - 1.0).powi(2) };
            assert!((alpha_h - paper).abs() < 0.01, "paper α_H({d}) = {alpha_h}");
            assert_eq!(alpha_at(d, 100, BETA_MIN), a_100, "Δ = {d}, 100 ms, β 0.5");
            assert!((alpha_at(d, 100, BETA_MAX) - a_100_08).abs() < 0.05, "Δ = {d}, 100 ms, β 0.8");
            assert_eq!(alpha_at(d, 20, BETA_MIN), a_20, "Δ = {d}, 20 ms, β 0.5");
        }
        // Δ exactly 2 s: Linux's 11.0 (the paper's α_H is 11.25).
        assert_eq!(alpha_at(2.0, 100, BETA_MIN), 11.0);
        // RTT scaling off: α does not depend on RTT_min.
        let mut h = Htcp::new(HtcpConfig { use_rtt_scaling: false, ..Default::default() });
        h.min_rtt = 20;
        h.alpha_update(2_000);
        assert_eq!(h.alpha_pkts(), 11.0);
        // The scaling ratio 100 ms/RTT_min is clamped to [0.5, 10]: at
        // RTT_min 500 ms Linux's scale = 8000/5000 = 1 (×8) is raised to 4,
        // so α is 11·8/4 = 22 rather than 11·5 = 55.
        assert_eq!(alpha_at(2.0, 500, BETA_MIN), 22.0);
    }

    // Linux `htcp_beta_update`, worked by hand: RTT_min 100, RTT_max 150 →
    // 12800/150 = 85 (0.664), and RTT_max fades to 100 + 50·0.95 = 147.
    // ssthresh(1000) = 1000·85 >> 7 = 664.
    #[test]
    fn adaptive_backoff() {
        let mut h = Htcp::new(HtcpConfig::default());
        h.modeswitch = true;
        h.min_rtt = 100;
        h.max_rtt = 150;
        h.maxb = 1000;
        h.old_maxb = 1000;
        let ss = h.ssthresh(&sock(1000, 1000));
        assert_eq!(h.beta, 85);
        assert!((h.beta() - 0.664).abs() < 0.001);
        assert_eq!(h.max_rtt, 147);
        assert_eq!(ss, 664);

        // Clamped to [0.5, 0.8]: 100/110 → 116 → 102; 20/100 → 25 → 64.
        for (min, max, beta) in [(100u32, 110u32, BETA_MAX), (20, 100, BETA_MIN)] {
            let mut h = Htcp::new(HtcpConfig::default());
            (h.modeswitch, h.min_rtt, h.max_rtt) = (true, min, max);
            h.beta_update();
            assert_eq!(h.beta, beta, "{min}/{max}");
        }
        // RTT_min ≤ 10 ms: no adaptation.
        let mut h = Htcp::new(HtcpConfig::default());
        (h.modeswitch, h.min_rtt, h.max_rtt) = (true, 10, 15);
        h.beta_update();
        assert_eq!(h.beta, BETA_MIN);
        // The first congestion event only enables the mode switch.
        let mut h = Htcp::new(HtcpConfig::default());
        (h.min_rtt, h.max_rtt) = (100, 150);
        h.beta_update();
        assert_eq!((h.beta, h.modeswitch), (BETA_MIN, true));
    }

    // Linux `htcp_beta_update`: maxB jumping from 100 to 130 (> 1.2×) →
    // β = 0.5 and the mode switch is cleared; 100 → 115 keeps the adaptive
    // value.
    #[test]
    fn bandwidth_switch() {
        for (new, beta, modeswitch) in
            [(130u32, BETA_MIN, false), (115, 85, true), (79, BETA_MIN, false), (80, 85, true)]
        {
            let mut h = Htcp::new(HtcpConfig::default());
            (h.modeswitch, h.min_rtt, h.max_rtt) = (true, 100, 150);
            (h.old_maxb, h.maxb) = (100, new);
            h.beta_update();
            assert_eq!((h.beta, h.modeswitch), (beta, modeswitch), "maxB 100 → {new}");
            assert_eq!(h.old_maxb, new);
        }
        // Switched off: the change is ignored.
        let mut h = Htcp::new(HtcpConfig { use_bandwidth_switch: false, ..Default::default() });
        (h.modeswitch, h.min_rtt, h.max_rtt) = (true, 100, 150);
        (h.old_maxb, h.maxb) = (100, 130);
        h.beta_update();
        assert_eq!(h.beta, 85);
    }

    // Per ACK: +1 once cnt·α/128 ≥ cwnd. α = 1 at cwnd 100: +1 per 100
    // packets; α rises as Δ grows past 1 s.
    #[test]
    fn congestion_avoidance_growth() {
        let mut h = Htcp::new(HtcpConfig::default());
        let mut tp = sock(100, 100);
        h.init(&mut tp);
        h.min_rtt = 100;
        // One RTT of ACKs (100 ms) at Δ < 1 s: α = 1 → about +1.
        for _ in 0..101 {
            tp.now_us += 1_000;
            h.pkts_acked(&mut tp, &AckSample { acked: 1, rtt_us: 100_000, ..Default::default() });
            h.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 101);
        // At Δ = 3 s (α = 22 with β 0.5): an RTT at cwnd 1000 adds about 21.
        // Each increment takes ⌈1000/22⌉ = 46 ACKs plus the ACK that triggers
        // it (Linux does not carry its packets over), so 1000/47 = 21.3.
        tp.now_us = 100_000_000 + 3_000_000;
        tp.snd_cwnd = 1000;
        tp.snd_cwnd_cnt = 0;
        h.alpha_update(Htcp::jiffies(&tp));
        assert_eq!(h.alpha_pkts(), 22.0);
        let start = tp.snd_cwnd;
        for _ in 0..start {
            h.pkts_acked(&mut tp, &AckSample { acked: 1, rtt_us: 100_000, ..Default::default() });
            h.cong_avoid(&mut tp, 1);
        }
        let grown = tp.snd_cwnd - start;
        assert!((20..=22).contains(&grown), "+{grown} per RTT");
    }

    #[test]
    fn rtt_extremes() {
        let mut h = Htcp::new(HtcpConfig::default());
        let mut tp = sock(100, 100);
        let ack = |rtt_us: i64| AckSample { acked: 1, rtt_us, ..Default::default() };
        h.pkts_acked(&mut tp, &ack(100_500)); // rounds up to 101 ms
        assert_eq!((h.min_rtt, h.max_rtt), (101, 101));
        h.pkts_acked(&mut tp, &ack(120_000));
        assert_eq!(h.max_rtt, 120);
        h.pkts_acked(&mut tp, &ack(150_000)); // > max + 20 ms: outlier
        assert_eq!(h.max_rtt, 120);
        tp.ca_state = CaState::Recovery;
        h.pkts_acked(&mut tp, &ack(130_000)); // only in Open
        assert_eq!(h.max_rtt, 120);
        h.pkts_acked(&mut tp, &ack(90_000));
        assert_eq!(h.min_rtt, 90);
    }

    // Throughput: a sample per RTT_min once about a window is acked; within
    // 3 RTTs of a backoff the estimate restarts, later it is smoothed 3:1.
    #[test]
    fn throughput_samples() {
        let mut h = Htcp::new(HtcpConfig::default());
        let mut tp = sock(100, 100);
        h.init(&mut tp);
        let t0 = Htcp::jiffies(&tp);
        h.lasttime = t0;
        h.min_rtt = 100;
        let ack = AckSample { acked: 1, rtt_us: 100_000, ..Default::default() };
        // 99 packets in 100 ms → 990 pkt/s, just after the event: restart.
        for _ in 0..99 {
            tp.now_us += 100_000 / 99 + 1;
            h.pkts_acked(&mut tp, &ack);
        }
        assert_eq!((h.minb, h.maxb, h.bi), (990, 990, 990));
        // 10 s later (> 3 RTTs), 200 packets in 100 ms → 2000 pkt/s:
        // Bi = (3·990 + 2000)/4 = 1242.
        tp.now_us += 10_000_000;
        h.lasttime = Htcp::jiffies(&tp);
        tp.now_us += 100_000;
        h.pkts_acked(&mut tp, &AckSample { acked: 200, ..ack });
        assert_eq!(h.bi, 1242);
        assert_eq!(h.maxb, 1242);
        // Outside Open/Disorder the count restarts.
        tp.ca_state = CaState::Recovery;
        h.pkts_acked(&mut tp, &AckSample { acked: 50, ..ack });
        assert_eq!(h.packetcount, 0);
    }

    // Δ restarts at each congestion event; an undo restores the old start.
    #[test]
    fn congestion_events_and_undo() {
        let mut h = Htcp::new(HtcpConfig::default());
        let mut tp = sock(100, 100);
        h.init(&mut tp);
        let start = h.last_cong;
        tp.now_us += 5_000_000;
        h.max_rtt = 150;
        h.set_state(&mut tp, CaState::Recovery);
        assert_eq!(h.last_cong, start + 5_000);
        h.max_rtt = 140;
        tp.snd_cwnd = 50;
        tp.prior_cwnd = 100;
        assert_eq!(h.undo_cwnd(&tp), 100);
        assert_eq!((h.last_cong, h.max_rtt), (start, 150));

        // Without undo, returning to Open restarts Δ at the end of recovery.
        h.set_state(&mut tp, CaState::Recovery);
        tp.now_us += 200_000;
        h.set_state(&mut tp, CaState::Open);
        assert_eq!(h.last_cong, start + 5_200);
        // A second Open changes nothing.
        tp.now_us += 200_000;
        h.set_state(&mut tp, CaState::Open);
        assert_eq!(h.last_cong, start + 5_200);
    }

    #[test]
    fn extremes_do_not_panic() {
        let mut h = Htcp::new(HtcpConfig::default());
        let mut tp = sock(u32::MAX / 2, 1);
        h.init(&mut tp);
        h.min_rtt = 1;
        tp.now_us = u64::MAX;
        h.alpha_update(Htcp::jiffies(&tp));
        h.cong_avoid(&mut tp, u32::MAX);
        h.pkts_acked(&mut tp, &AckSample { acked: u32::MAX, rtt_us: i64::MAX, ..Default::default() });
        h.ssthresh(&tp);
        assert!(h.alpha >= 1);
    }
}
