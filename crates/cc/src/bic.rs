//! BIC (Binary Increase Congestion control), following Linux `net/ipv4/tcp_bic.c`.
//!
//! Sources: L. Xu, K. Harfoush, I. Rhee, "Binary increase congestion control
//! (BIC) for fast long-distance networks", IEEE INFOCOM 2004; Linux
//! `tcp_bic.c` (S. Hemminger, modern version).
//!
//! BIC in a nutshell: after a loss at W_max it binary-searches back towards
//! W_max, jumping a quarter of the remaining distance per RTT (at most Smax
//! packets per RTT, at least Smin near W_max); once past W_max it probes for
//! a new maximum, slowly at first and then linearly.
//!
//! ```text
//!  cwnd ≤ low_window          Reno: +1 per RTT
//!  cwnd < W_max               dist = (W_max − cwnd)/B
//!      dist > Smax              +Smax per RTT        (linear increase)
//!      dist ≤ 1                 +B/smooth_part per RTT (plateau, Smin)
//!      otherwise                +dist per RTT        (binary search)
//!  cwnd ≥ W_max               max probing
//!      cwnd < W_max + B         +B/smooth_part per RTT
//!      cwnd < W_max + Smax(B−1) +(cwnd − W_max)/(B−1) per RTT
//!      otherwise                +Smax per RTT
//!  loss                       W_max = cwnd (or cwnd·(1+β)/2, fast convergence);
//!                             cwnd ← β·cwnd (cwnd/2 at or below low_window)
//! ```
//!
//! The result is expressed, as in Linux, as `cnt`: the number of packets to be
//! acknowledged per +1 packet of cwnd, then corrected for the measured number
//! of packets per ACK (`delayed_ack`, a Linux addition not in the paper).
//!
//! Deviations from Linux: wider integers replace Linux's 32-bit arithmetic
//! (`cwnd · smooth_part` and `cnt << 4` cannot wrap); `epoch_start`, which
//! modern Linux sets but never reads, is not kept.

use crate::params::{ParamDefault, ParamKind, ParamSpec, Params};
use crate::{common, CaState, CongestionControl, Sock, MAX_METRICS};

/// Linux `BICTCP_BETA_SCALE`: β is stored as a multiple of 1/1024.
const BETA_SCALE: u32 = 1024;
/// Linux `BICTCP_B`: the binary search moves to (max + min)/B, i.e. a
/// quarter of the distance to W_max per RTT (dimensionless).
const BICTCP_B: u32 = 4;
/// Linux `ACK_RATIO_SHIFT`: `delayed_ack` holds packets per ACK × 16.
const ACK_RATIO_SHIFT: u32 = 4;
/// `delayed_ack` after a reset: 2 packets per ACK (Linux `2 << ACK_RATIO_SHIFT`).
const DELAYED_ACK_INIT: u32 = 2 << ACK_RATIO_SHIFT;
/// Linux `HZ / 32`: `cnt` is kept while cwnd is unchanged for this long, µs.
const CNT_HOLD_US: u64 = 1_000_000 / 32;
/// Before the first loss, grow at least 5 % per RTT (+1 per 20 acked; Linux).
const NO_LOSS_MAX_CNT: u32 = 20;

/// BIC's parameters; defaults are Linux's module parameters.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "beta",
        kind: ParamKind::Float { min: 0.1, max: 0.99 },
        default: ParamDefault::Float(819.0 / 1024.0),
        doc: "window multiplier after loss above low_window (dimensionless, applied as round(beta*1024)/1024); Linux tcp_bic.c beta=819/1024",
    },
    ParamSpec {
        name: "fast_convergence",
        kind: ParamKind::Bool,
        default: ParamDefault::Bool(true),
        doc: "W_max = cwnd*(1+beta)/2 when a loss happens below the previous W_max; Linux fast_convergence=1",
    },
    ParamSpec {
        name: "max_increment",
        kind: ParamKind::Int { min: 1, max: 1_000_000 },
        default: ParamDefault::Int(16),
        doc: "Smax, largest increase per RTT, packets; Linux max_increment=16 (the paper's Smax is 32, unconfirmed)",
    },
    ParamSpec {
        name: "low_window",
        kind: ParamKind::Int { min: 0, max: 1_000_000 },
        default: ParamDefault::Int(14),
        doc: "at or below this cwnd BIC behaves as Reno, packets; Linux low_window=14",
    },
    ParamSpec {
        name: "smooth_part",
        kind: ParamKind::Int { min: 1, max: 1_000_000 },
        default: ParamDefault::Int(20),
        doc: "RTTs from W_max - B to W_max; the plateau increase is B/smooth_part = 0.2 packets per RTT; Linux smooth_part=20",
    },
    ParamSpec {
        name: "initial_ssthresh",
        kind: ParamKind::Int { min: 0, max: 1 << 31 },
        default: ParamDefault::Int(0),
        doc: "initial slow-start threshold, packets; 0 = unused; Linux initial_ssthresh=0 (kernels before 2.6.22 used 100)",
    },
    ParamSpec {
        name: "ack_ratio_correction",
        kind: ParamKind::Bool,
        default: ParamDefault::Bool(true),
        doc: "divide cnt by the measured packets per ACK (Linux delayed_ack EWMA, not in the paper); Linux: always on",
    },
];

/// Typed BIC configuration (see [`PARAMS`] for meanings and sources).
#[derive(Clone, Debug, PartialEq)]
pub struct BicConfig {
    pub beta: f64,
    pub fast_convergence: bool,
    pub max_increment: u32,
    pub low_window: u32,
    pub smooth_part: u32,
    pub initial_ssthresh: u32,
    pub ack_ratio_correction: bool,
}

impl Default for BicConfig {
    fn default() -> Self {
        BicConfig {
            beta: 819.0 / 1024.0,
            fast_convergence: true,
            max_increment: 16,
            low_window: 14,
            smooth_part: 20,
            initial_ssthresh: 0,
            ack_ratio_correction: true,
        }
    }
}

fn to_u32(v: i64) -> u32 {
    v.clamp(0, u32::MAX as i64) as u32
}

impl BicConfig {
    /// Reads resolved registry parameters.
    pub fn from_params(p: &Params) -> BicConfig {
        BicConfig {
            beta: p.float("beta"),
            fast_convergence: p.bool("fast_convergence"),
            max_increment: to_u32(p.int("max_increment")).max(1),
            low_window: to_u32(p.int("low_window")),
            smooth_part: to_u32(p.int("smooth_part")).max(1),
            initial_ssthresh: to_u32(p.int("initial_ssthresh")),
            ack_ratio_correction: p.bool("ack_ratio_correction"),
        }
    }
}

/// Linux `struct bictcp`.
#[derive(Clone, Debug)]
pub struct Bic {
    cfg: BicConfig,
    /// β·1024 (Linux `beta`, default 819).
    beta: u32,
    /// Increase cwnd by 1 per `cnt` packets acked.
    cnt: u32,
    /// W_max, packets (0 = no loss yet).
    last_max_cwnd: u32,
    /// cwnd when `cnt` was last computed, packets.
    last_cwnd: u32,
    /// Time `cnt` was last computed, µs.
    last_time_us: u64,
    /// Packets per ACK × 16, an EWMA with gain 1/16.
    delayed_ack: u32,
}

impl Bic {
    pub fn new(cfg: BicConfig) -> Bic {
        let beta = (cfg.beta * BETA_SCALE as f64).round();
        let beta = if beta.is_nan() { 819 } else { beta.clamp(1.0, (BETA_SCALE - 1) as f64) as u32 };
        Bic { cfg, beta, cnt: 0, last_max_cwnd: 0, last_cwnd: 0, last_time_us: 0, delayed_ack: DELAYED_ACK_INIT }
    }

    /// Linux `bictcp_reset`.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time_us = 0;
        self.delayed_ack = DELAYED_ACK_INIT;
    }

    /// Linux `bictcp_update`: packets to acknowledge per +1 of cwnd.
    fn update(&mut self, cwnd: u32, now_us: u64) {
        if self.last_cwnd == cwnd && now_us.saturating_sub(self.last_time_us) <= CNT_HOLD_US {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time_us = now_us;

        // Start off as Reno (no ACK-ratio correction here, as in Linux).
        if cwnd <= self.cfg.low_window {
            self.cnt = cwnd;
            return;
        }

        let (w, w_max) = (cwnd as u64, self.last_max_cwnd as u64);
        let (b, s_max, smooth) = (BICTCP_B as u64, self.cfg.max_increment as u64, self.cfg.smooth_part as u64);
        let cnt = if w < w_max {
            // Binary search towards W_max.
            let dist = (w_max - w) / b;
            if dist > s_max {
                w / s_max // linear increase, +Smax per RTT
            } else if dist <= 1 {
                w * smooth / b // plateau, +B/smooth_part per RTT
            } else {
                w / dist // +dist per RTT
            }
        } else if w < w_max + b {
            // Max probing: start slowly just above W_max ...
            w * smooth / b
        } else if w < w_max + s_max * (b - 1) {
            // ... speed up as cwnd leaves W_max behind (+(cwnd − W_max)/3 per RTT) ...
            w * (b - 1) / (w - w_max)
        } else {
            w / s_max // ... and go linear at +Smax per RTT.
        };
        let mut cnt = cnt.min(u32::MAX as u64) as u32;

        if self.last_max_cwnd == 0 && cnt > NO_LOSS_MAX_CNT {
            cnt = NO_LOSS_MAX_CNT;
        }
        if self.cfg.ack_ratio_correction {
            // With 2 packets per ACK each ACK must count double.
            cnt = (((cnt as u64) << ACK_RATIO_SHIFT) / self.delayed_ack.max(1) as u64).min(u32::MAX as u64) as u32;
        }
        self.cnt = cnt.max(1);
    }
}

impl CongestionControl for Bic {
    /// Linux `bictcp_init`.
    fn init(&mut self, tp: &mut Sock) {
        self.reset();
        if self.cfg.initial_ssthresh != 0 {
            tp.snd_ssthresh = self.cfg.initial_ssthresh;
        }
    }

    /// Linux `bictcp_recalc_ssthresh`.
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        let cwnd = tp.snd_cwnd as u64;
        self.last_max_cwnd = if tp.snd_cwnd < self.last_max_cwnd && self.cfg.fast_convergence {
            // W_max = cwnd·(1 + β)/2: leave room for a newcomer.
            (cwnd * (BETA_SCALE + self.beta) as u64 / (2 * BETA_SCALE) as u64) as u32
        } else {
            tp.snd_cwnd
        };
        if tp.snd_cwnd <= self.cfg.low_window {
            (tp.snd_cwnd >> 1).max(2)
        } else {
            ((cwnd * self.beta as u64 / BETA_SCALE as u64) as u32).max(2)
        }
    }

    /// Linux `bictcp_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut Sock, mut acked: u32) {
        if !tp.is_cwnd_limited() {
            return;
        }
        if tp.in_slow_start() {
            acked = common::slow_start(tp, acked);
            if acked == 0 {
                return;
            }
        }
        self.update(tp.snd_cwnd, tp.now_us);
        common::cong_avoid_ai(tp, self.cnt, acked);
    }

    /// Linux `bictcp_state`: an RTO forgets W_max.
    fn set_state(&mut self, _tp: &mut Sock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.reset();
        }
    }

    /// Linux `bictcp_acked`: ratio = (15·ratio + packets acked)/16, in Open only.
    fn pkts_acked(&mut self, tp: &mut Sock, sample: &crate::AckSample) {
        if tp.ca_state == CaState::Open {
            let d = self.delayed_ack as u64 + sample.acked as u64 - (self.delayed_ack >> ACK_RATIO_SHIFT) as u64;
            self.delayed_ack = d.min(u32::MAX as u64) as u32;
        }
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &["w_max_pkts", "cnt_pkts", "pkts_per_ack"]
    }

    fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
        out[0] = self.last_max_cwnd as f64;
        out[1] = self.cnt as f64;
        out[2] = self.delayed_ack as f64 / (1 << ACK_RATIO_SHIFT) as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit;
    use crate::{AckSample, INFINITE_SSTHRESH};

    fn sock(cwnd: u32, ssthresh: u32) -> Sock {
        testkit::sock_at(cwnd, ssthresh, 10_000_000)
    }

    /// BIC with one ACK per packet measured (delayed_ack = 16), W_max set.
    fn bic_at(w_max: u32) -> Bic {
        let mut c = Bic::new(BicConfig::default());
        c.last_max_cwnd = w_max;
        c.delayed_ack = 1 << ACK_RATIO_SHIFT;
        c
    }

    #[test]
    fn from_params_defaults_equal_default() {
        let p = crate::registry::resolve_params("bic", &[]).unwrap();
        assert_eq!(BicConfig::from_params(&p), BicConfig::default());
        assert_eq!(Bic::new(BicConfig::default()).beta, 819);
    }

    // Linux `bictcp_update`, worked by hand: cnt and growth per RTT
    // (= cwnd/cnt) near W_max.
    #[test]
    fn increment_table_near_w_max() {
        let rows: &[(u32, u32, u32, f64)] = &[
            (79, 100, 15, 5.27),   // dist (100−79)/4 = 5 → +5 per RTT (79/15)
            (800, 1000, 50, 16.0), // dist 50 > Smax 16 → linear, 800/16
            (99, 100, 495, 0.2),   // dist 0 ≤ 1 → plateau 99·20/4
            (101, 100, 505, 0.2),  // just above W_max: 101·20/4
            (110, 100, 33, 3.33),  // 110·3/(110 − 100)
            (200, 100, 12, 16.7),  // ≥ W_max + 48 → 200/16 (≈ +16 cap)
            (10, 100, 10, 1.0),    // ≤ low_window: Reno
        ];
        for &(cwnd, w_max, cnt, growth) in rows {
            let mut c = bic_at(w_max);
            c.update(cwnd, 1_000_000);
            assert_eq!(c.cnt, cnt, "cwnd {cwnd}, W_max {w_max}");
            let g = cwnd as f64 / c.cnt as f64;
            assert!((g - growth).abs() < 0.05, "cwnd {cwnd}: +{g:.3} per RTT, table {growth}");
        }
    }

    // Worked examples of Linux `bictcp_recalc_ssthresh`.
    #[test]
    fn ssthresh_and_fast_convergence() {
        let mut c = Bic::new(BicConfig::default());
        // First loss at 100: W_max = 100, ssthresh = 100·819/1024 = 79.98 → 79.
        assert_eq!(c.ssthresh(&sock(100, 100)), 79);
        assert_eq!(c.last_max_cwnd, 100);
        // Loss at 90 < 100: W_max = 90·1843/2048 = 80.99 → 80; ssthresh 71.98 → 71.
        assert_eq!(c.ssthresh(&sock(90, 100)), 71);
        assert_eq!(c.last_max_cwnd, 80);
        // At or below low_window: halve. 14 → 7; 3 → 1 → floor of 2.
        assert_eq!(c.ssthresh(&sock(14, 100)), 7);
        assert_eq!(c.ssthresh(&sock(3, 100)), 2);
        // Without fast convergence W_max is the loss window.
        let mut c = Bic::new(BicConfig { fast_convergence: false, ..Default::default() });
        c.ssthresh(&sock(100, 100));
        c.ssthresh(&sock(90, 100));
        assert_eq!(c.last_max_cwnd, 90);
    }

    // Fluid trajectory, worked by hand, from 79 towards W_max = 100 (cnt
    // evaluated once per RTT): 84.3, 88.3, 91.3, 93.3, then +0.2 per RTT:
    // the integer dist = (W_max − cwnd)/4 reaches 1 at 93–96, so Linux BIC
    // plateaus a few packets below W_max. Per ACK, Linux recomputes cnt
    // whenever cwnd changes, so the jump shrinks within the RTT: from 79,
    // 15 ACKs → 80 (cnt 16), 16 → 81 (dist 4, cnt 20), 20 → 82, 20 → 83 with
    // 8 ACKs left: 83, then 86, 89, 91, up to 2.3 below the fluid values.
    #[test]
    fn binary_search_trajectory() {
        let mut c = bic_at(100);
        let mut tp = sock(79, 79);
        let mut per_rtt = Vec::new();
        for _ in 0..12 {
            let n = tp.snd_cwnd;
            for _ in 0..n {
                tp.now_us += 100_000 / n as u64;
                c.pkts_acked(&mut tp, &AckSample { acked: 1, rtt_us: 100_000, ..Default::default() });
                c.cong_avoid(&mut tp, 1);
            }
            per_rtt.push(tp.snd_cwnd);
        }
        assert_eq!(per_rtt[..4], [83, 86, 89, 91], "{per_rtt:?}");
        for (i, (&got, &w)) in per_rtt.iter().zip(&[84.3, 88.3, 91.3, 93.3]).enumerate() {
            assert!((got as f64 - w).abs() < 2.5, "RTT {}: cwnd {got}, fluid {w}", i + 1);
        }
        // Plateau: never reaches W_max within 12 RTTs, and stays near 93–96.
        assert!(per_rtt[4..].iter().all(|&w| (93..=96).contains(&w)), "{per_rtt:?}");
    }

    // Linux's ACK-ratio correction: with 2 packets per ACK the EWMA settles
    // at 32 and cnt halves, so growth per RTT is the same per packet.
    #[test]
    fn delayed_ack_ratio_correction() {
        let mut c = bic_at(100);
        let mut tp = sock(79, 79);
        for _ in 0..200 {
            c.pkts_acked(&mut tp, &AckSample { acked: 2, ..Default::default() });
        }
        assert_eq!(c.delayed_ack, 32, "EWMA d += 2 − d/16 climbs from 16 and settles at 32");
        c.update(79, 1_000_000);
        assert_eq!(c.cnt, 15 * 16 / c.delayed_ack);

        // Not in Open: no update.
        let mut c = bic_at(100);
        tp.ca_state = CaState::Recovery;
        c.pkts_acked(&mut tp, &AckSample { acked: 10, ..Default::default() });
        assert_eq!(c.delayed_ack, 16);

        // Correction off: cnt is the table value whatever the ratio.
        let mut c = Bic::new(BicConfig { ack_ratio_correction: false, ..Default::default() });
        c.last_max_cwnd = 100;
        c.delayed_ack = 40;
        c.update(79, 1_000_000);
        assert_eq!(c.cnt, 15);
    }

    #[test]
    fn before_first_loss_at_least_five_percent() {
        let mut c = bic_at(0);
        c.update(1000, 1_000_000);
        assert_eq!(c.cnt, 20);
    }

    #[test]
    fn cnt_kept_for_a_32nd_of_a_second() {
        let mut c = bic_at(100);
        c.update(79, 1_000_000);
        assert_eq!(c.cnt, 15);
        c.last_max_cwnd = 1000; // would give cnt = 79/16 = 4
        c.update(79, 1_000_000 + CNT_HOLD_US);
        assert_eq!(c.cnt, 15, "same cwnd within HZ/32: kept");
        c.update(79, 1_000_000 + CNT_HOLD_US + 1);
        assert_eq!(c.cnt, 4);
    }

    #[test]
    fn rto_resets_and_init_applies_ssthresh() {
        let mut c = bic_at(100);
        let mut tp = sock(50, INFINITE_SSTHRESH);
        c.set_state(&mut tp, CaState::Recovery);
        assert_eq!(c.last_max_cwnd, 100);
        c.set_state(&mut tp, CaState::Loss);
        assert_eq!(c.last_max_cwnd, 0);
        assert_eq!(c.delayed_ack, DELAYED_ACK_INIT);

        Bic::new(BicConfig { initial_ssthresh: 100, ..Default::default() }).init(&mut tp);
        assert_eq!(tp.snd_ssthresh, 100);
    }

    #[test]
    fn extremes_do_not_panic() {
        for smooth in [1u32, 20, 1_000_000] {
            for s_max in [1u32, 16, 1_000_000] {
                let cfg = BicConfig { smooth_part: smooth, max_increment: s_max, ..Default::default() };
                for &w_max in &[0u32, 1, 100, u32::MAX] {
                    for &cwnd in &[1u32, 15, 1000, u32::MAX / 2, u32::MAX] {
                        let mut c = Bic::new(cfg.clone());
                        c.last_max_cwnd = w_max;
                        c.delayed_ack = u32::MAX;
                        c.update(cwnd, u64::MAX);
                        assert!(c.cnt >= 1);
                        c.ssthresh(&sock(cwnd, 1));
                    }
                }
            }
        }
    }
}
