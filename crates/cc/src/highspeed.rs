//! HighSpeed TCP (RFC 3649), following Linux `net/ipv4/tcp_highspeed.c`.
//!
//! Sources: S. Floyd, RFC 3649 "HighSpeed TCP for large congestion windows"
//! (2003, Experimental); Linux `tcp_highspeed.c` (J. Heffner), whose table is
//! "from RFC 3649 appendix B, with fixed-point MD scaled <<8"; RFC 3742
//! (Limited Slow-Start).
//!
//! HSTCP in a nutshell: AIMD whose increase a(w) and decrease b(w) depend on
//! the window, chosen so that the response function is a straight line on a
//! log-log plot through (p = 10⁻³, w = 38) and (p = 10⁻⁷, w = 83 000):
//!
//! ```text
//!  w(p) = Low_Window·(p/Low_P)^S ≈ 0.12/p^0.835,     S = −0.8348
//!  b(w) = (High_Decrease − 0.5)·(ln w − ln 38)/(ln 83000 − ln 38) + 0.5
//!  a(w) = w²·p(w)·2·b(w)/(2 − b(w))
//!  per ACK:  cwnd += a(w)/cwnd        on loss:  cwnd ← (1 − b(w))·cwnd
//! ```
//!
//! At or below Low_Window = 38 packets (the table's first row) a = 1 and
//! b = 0.5: exactly Reno.
//!
//! Linux adds a(w)/cwnd per ACK, whatever the number of packets the ACK
//! covers; with delayed ACKs (2 packets per ACK) the increase is a(w)/2 per
//! RTT. RFC 3649's response function assumes a(w) per RTT. The parameter
//! `count_acked_packets` (off by default, as in Linux) adds a(w)/cwnd per
//! packet acknowledged instead, in the spirit of RFC 3465 byte counting.
//!
//! Linux's table holds a(w) = row + 1 over each whole row, so from 39 packets
//! on a = 2 where the RFC's a(w) climbs from 1.0 to 1.8 only by w = 118: the
//! table's own AIMD balance at p = 1e-3 is about 60 packets where the RFC's
//! line gives 38. The parameter `aimd = "rfc3649"` uses the RFC's continuous
//! a(w), b(w) above instead (evaluated at the current cwnd, in 1/256
//! packets), i.e. the algorithm whose response function RFC 3649 states.
//!
//! Deviations from Linux: none in the default configuration besides wider
//! integers for the products.

use crate::params::{ParamDefault, ParamKind, ParamSpec, Params};
use crate::{common, CongestionControl, Sock, MAX_METRICS};

/// Linux `hstcp_aimd_vals`: row i covers `cwnd ≤ AIMD[i].0` (and above the
/// previous row's bound); a(w) = i + 1 packets per RTT and
/// b(w) = `AIMD[i].1`/256. Values from RFC 3649 Appendix B.
#[rustfmt::skip]
pub const AIMD: [(u32, u32); 72] = [
    (38, 128), (118, 112), (221, 104), (347, 98), (495, 93), (663, 89),
    (851, 86), (1058, 83), (1284, 81), (1529, 78), (1793, 76), (2076, 74),
    (2378, 72), (2699, 71), (3039, 69), (3399, 68), (3778, 66), (4177, 65),
    (4596, 64), (5036, 62), (5497, 61), (5979, 60), (6483, 59), (7009, 58),
    (7558, 57), (8130, 56), (8726, 55), (9346, 54), (9991, 53), (10661, 52),
    (11358, 52), (12082, 51), (12834, 50), (13614, 49), (14424, 48), (15265, 48),
    (16137, 47), (17042, 46), (17981, 45), (18955, 45), (19965, 44), (21013, 43),
    (22101, 43), (23230, 42), (24402, 41), (25618, 41), (26881, 40), (28193, 39),
    (29557, 39), (30975, 38), (32450, 38), (33986, 37), (35586, 36), (37253, 36),
    (38992, 35), (40808, 35), (42707, 34), (44694, 33), (46776, 33), (48961, 32),
    (51258, 32), (53677, 31), (56230, 30), (58932, 30), (61799, 29), (64851, 28),
    (68113, 28), (71617, 27), (75401, 26), (79517, 26), (84035, 25), (89053, 24),
];

/// RFC 3649 Low_Window: at or below this cwnd HSTCP is Reno, packets
/// (the bound of the table's first row).
pub const LOW_WINDOW: u32 = AIMD[0].0;
/// RFC 3649 §5 High_Window: the response line's upper anchor, packets.
pub const HIGH_WINDOW: f64 = 83_000.0;
/// RFC 3649 §5 High_P: the loss rate at High_Window.
pub const HIGH_P: f64 = 1e-7;
/// RFC 3649 §5 Low_P: the loss rate at Low_Window (Reno's 1.2/√p = 38).
pub const LOW_P: f64 = 1e-3;
/// RFC 3649 §5 High_Decrease: b(High_Window).
pub const HIGH_DECREASE: f64 = 0.1;

/// RFC 3649 §5: b(w) and a(w) (packets per RTT) for `w` > Low_Window, with
/// p(w) the exact response line through (Low_P, Low_Window) and
/// (High_P, High_Window); Reno's (1, 0.5) at or below Low_Window. Above
/// High_Window the values at High_Window are kept (the RFC specifies the
/// line between the two anchors; Linux's table likewise ends near 89 000).
pub fn rfc3649_a_b(w: f64) -> (f64, f64) {
    let low = LOW_WINDOW as f64;
    if w <= low {
        return (1.0, 0.5);
    }
    let w = w.min(HIGH_WINDOW);
    let span = (w.ln() - low.ln()) / (HIGH_WINDOW.ln() - low.ln());
    let b = (HIGH_DECREASE - 0.5) * span + 0.5;
    // S = (ln W1 − ln W0)/(ln P1 − ln P0) = −0.8348; p(w) = Low_P·(w/38)^(1/S).
    let s = (HIGH_WINDOW.ln() - low.ln()) / (HIGH_P.ln() - LOW_P.ln());
    let p = LOW_P * (w / low).powf(1.0 / s);
    (w * w * p * 2.0 * b / (2.0 - b), b)
}

/// Linux `hstcp_init`: cwnd is clamped so that `cwnd · md` fits 32 bits
/// (0xffffffff/128 packets).
const CWND_CLAMP: u32 = 0xffff_ffff / 128;
/// b(w) is stored ×256 (Linux "fixed-point MD scaled <<8").
const MD_SHIFT: u32 = 8;

/// HighSpeed TCP's parameters; defaults are Linux's behaviour.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "aimd",
        kind: ParamKind::Choice(&["linux", "rfc3649"]),
        default: ParamDefault::Str("linux"),
        doc: "linux: tcp_highspeed.c's 72-row table (a = row + 1 and b = md/256 over each whole row, e.g. a = 2 for 38 < w <= 118); rfc3649: RFC 3649 section 5's continuous a(w), b(w) at the current cwnd (b linear in ln w from 0.5 at 38 to 0.1 at 83000 packets, a(w) = w^2 p(w) 2b/(2 - b)), held at their 83000 values above",
    },
    ParamSpec {
        name: "count_acked_packets",
        kind: ParamKind::Bool,
        default: ParamDefault::Bool(false),
        doc: "add a(w)/cwnd per packet acknowledged (a(w) per RTT, as RFC 3649's response function assumes) instead of per ACK as Linux does (a(w)/2 per RTT with delayed ACKs); Linux: false",
    },
    ParamSpec {
        name: "max_ssthresh",
        kind: ParamKind::Int { min: 0, max: 1 << 31 },
        default: ParamDefault::Int(0),
        doc: "RFC 3742 Limited Slow-Start threshold, packets: above it slow start adds at most max_ssthresh/2 per RTT; 0 = standard slow start (Linux); RFC 3742 suggests 100",
    },
];

/// Typed HighSpeed TCP configuration (see [`PARAMS`]).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct HighSpeedConfig {
    /// RFC 3649's continuous a(w), b(w) instead of Linux's table.
    pub rfc3649_aimd: bool,
    pub count_acked_packets: bool,
    pub max_ssthresh: u32,
}

impl HighSpeedConfig {
    /// Reads resolved registry parameters.
    pub fn from_params(p: &Params) -> HighSpeedConfig {
        HighSpeedConfig {
            rfc3649_aimd: p.str("aimd") == "rfc3649",
            count_acked_packets: p.bool("count_acked_packets"),
            max_ssthresh: p.int("max_ssthresh").clamp(0, u32::MAX as i64) as u32,
        }
    }
}

/// Linux `struct hstcp`.
#[derive(Clone, Debug)]
pub struct HighSpeed {
    cfg: HighSpeedConfig,
    /// Row of [`AIMD`] bracketing cwnd at the last congestion-avoidance ACK;
    /// a(w) = ai + 1.
    ai: usize,
    /// `aimd = "rfc3649"`: the cwnd at which `a_256`/`b_256` were evaluated
    /// (0: not yet), packets.
    rfc_w: u32,
    /// RFC 3649 a(w) in 1/256 packets per RTT (0.4 % resolution at a = 1).
    a_256: u32,
    /// RFC 3649 b(w).
    b_rfc: f64,
}

/// a(w) and b(w) are held in 1/256 (as Linux holds b).
const AB_SCALE: f64 = (1 << MD_SHIFT) as f64;

impl HighSpeed {
    pub fn new(cfg: HighSpeedConfig) -> HighSpeed {
        HighSpeed { cfg, ai: 0, rfc_w: 0, a_256: 256, b_rfc: 0.5 }
    }

    /// Re-evaluates RFC 3649's a(w), b(w) when cwnd has changed.
    fn update_rfc(&mut self, cwnd: u32) {
        if cwnd != self.rfc_w {
            let (a, b) = rfc3649_a_b(cwnd as f64);
            self.rfc_w = cwnd;
            self.a_256 = (a * AB_SCALE).round() as u32;
            self.b_rfc = b;
        }
    }

    /// Moves `ai` so that `AIMD[ai − 1].0 < cwnd ≤ AIMD[ai].0` (the last
    /// row covers everything above).
    fn update_row(&mut self, cwnd: u32) {
        while cwnd > AIMD[self.ai].0 && self.ai < AIMD.len() - 1 {
            self.ai += 1;
        }
        while self.ai > 0 && cwnd <= AIMD[self.ai - 1].0 {
            self.ai -= 1;
        }
    }

    /// a(w) in packets per RTT for the current row.
    pub fn a(&self) -> u32 {
        self.ai as u32 + 1
    }

    /// b(w) ×256 for the current row.
    pub fn md(&self) -> u32 {
        AIMD[self.ai].1
    }

    /// a(w) in 1/256 packets per RTT (the row's, or RFC 3649's).
    fn a_256(&self) -> u32 {
        if self.cfg.rfc3649_aimd {
            self.a_256
        } else {
            self.a() << MD_SHIFT
        }
    }

    /// b(w) (the row's, or RFC 3649's).
    fn b(&self) -> f64 {
        if self.cfg.rfc3649_aimd {
            self.b_rfc
        } else {
            self.md() as f64 / AB_SCALE
        }
    }

    /// RFC 3742 §2: above max_ssthresh, +1/K per packet acked with
    /// K = ⌊cwnd/(max_ssthresh/2)⌋, i.e. at most max_ssthresh/2 per RTT.
    fn limited_slow_start(&self, tp: &mut Sock, acked: u32) {
        let max_ss = self.cfg.max_ssthresh;
        if tp.snd_cwnd <= max_ss {
            common::slow_start(tp, acked);
            return;
        }
        let k = (tp.snd_cwnd / (max_ss / 2).max(1)).max(1);
        common::cong_avoid_ai(tp, k, acked);
        tp.snd_cwnd = tp.snd_cwnd.min(tp.snd_ssthresh);
    }
}

impl CongestionControl for HighSpeed {
    /// Linux `hstcp_init`.
    fn init(&mut self, tp: &mut Sock) {
        self.ai = 0;
        self.rfc_w = 0;
        tp.snd_cwnd_clamp = tp.snd_cwnd_clamp.min(CWND_CLAMP);
    }

    /// Linux `hstcp_ssthresh`: cwnd·(1 − b(w)), with b(w) from the row of the
    /// last congestion-avoidance ACK (RFC 3649 mode: b at the current cwnd).
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        if self.cfg.rfc3649_aimd {
            // In floating point: b(w) in 1/256 would move ssthresh by up to
            // 0.2 % of cwnd.
            self.update_rfc(tp.snd_cwnd);
            let dec = (tp.snd_cwnd as f64 * self.b_rfc).round() as u32;
            return (tp.snd_cwnd - dec.min(tp.snd_cwnd)).max(2);
        }
        let cwnd = tp.snd_cwnd as u64;
        let dec = (cwnd * self.md() as u64) >> MD_SHIFT;
        ((cwnd - dec) as u32).max(2)
    }

    /// Linux `hstcp_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        if !tp.is_cwnd_limited() {
            return;
        }
        if tp.in_slow_start() {
            // Linux discards what is left of `acked` once ssthresh is reached.
            if self.cfg.max_ssthresh > 0 {
                self.limited_slow_start(tp, acked);
            } else {
                common::slow_start(tp, acked);
            }
            return;
        }
        self.update_row(tp.snd_cwnd);
        if self.cfg.rfc3649_aimd {
            self.update_rfc(tp.snd_cwnd);
        }
        if tp.snd_cwnd >= tp.snd_cwnd_clamp {
            return;
        }
        // cwnd += a(w)/cwnd: count a(w) per ACK (Linux) or per packet acked.
        // Linux counts whole packets (a = ai + 1); RFC 3649's a(w) is
        // fractional, so its credits are 1/256 packet (cwnd_cnt saturates
        // only beyond 16.7 M packets of cwnd).
        let per = if self.cfg.count_acked_packets { acked as u64 } else { 1 };
        let (credit, unit) =
            if self.cfg.rfc3649_aimd { (self.a_256 as u64, 1 << MD_SHIFT) } else { (self.a() as u64, 1) };
        let cnt = tp.snd_cwnd_cnt as u64 + credit * per;
        let cwnd = tp.snd_cwnd as u64;
        let need = cwnd * unit;
        if cnt >= need {
            // Linux adds at most one packet per ACK; counting packets, a
            // stretch ACK may earn several.
            let n = if self.cfg.count_acked_packets { cnt / need } else { 1 };
            tp.snd_cwnd_cnt = (cnt - n * need).min(u32::MAX as u64) as u32;
            tp.snd_cwnd = (cwnd + n).min(tp.snd_cwnd_clamp as u64) as u32;
        } else {
            tp.snd_cwnd_cnt = cnt as u32;
        }
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &["a_pkts_per_rtt", "b"]
    }

    fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
        out[0] = self.a_256() as f64 / AB_SCALE;
        out[1] = self.b();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit;
    use crate::INFINITE_SSTHRESH;

    fn sock(cwnd: u32, ssthresh: u32) -> Sock {
        testkit::sock_at(cwnd, ssthresh, 0)
    }

    fn at(cwnd: u32) -> HighSpeed {
        let mut h = HighSpeed::new(HighSpeedConfig::default());
        h.update_row(cwnd);
        h
    }

    /// RFC 3649 §5: b(w), and a(w) with the exact p(w) of the response line
    /// through (Low_P = 1e-3, 38) and (High_P = 1e-7, 83000).
    fn b_rfc(w: f64) -> f64 {
        (0.1 - 0.5) * (w.ln() - 38f64.ln()) / (83000f64.ln() - 38f64.ln()) + 0.5
    }
    fn a_rfc(w: f64) -> f64 {
        if w <= 38.0 {
            // Reno by definition (the formula itself would give 0.96 at 38).
            return 1.0;
        }
        let s = (83000f64.ln() - 38f64.ln()) / (1e-7f64.ln() - 1e-3f64.ln());
        let p = 1e-3 * (w / 38.0).powf(1.0 / s);
        let b = b_rfc(w);
        w * w * p * 2.0 * b / (2.0 - b)
    }

    // `aimd = "rfc3649"` reproduces RFC 3649 §5's formula values (exact p(w)):
    // a = 1.00, 1.82, 7.86, 29.6, 72.5 and b = 0.500, 0.450, 0.330, 0.210,
    // 0.100 at w = 38, 100, 1000, 10 000, 83 000; held above 83 000.
    #[test]
    fn rfc3649_a_b_rows() {
        for (w, a, b) in
            [(38.0, 1.00, 0.500), (100.0, 1.82, 0.450), (1000.0, 7.86, 0.330), (1e4, 29.6, 0.210), (83e3, 72.5, 0.100)]
        {
            let (ra, rb) = rfc3649_a_b(w);
            assert!((ra - a).abs() / a < 0.005, "a({w}) = {ra}");
            assert!((rb - b).abs() < 0.0015, "b({w}) = {rb}");
            assert!((ra - a_rfc(w)).abs() < 1e-9 && (rb - if w <= 38.0 { 0.5 } else { b_rfc(w) }).abs() < 1e-12);
        }
        assert_eq!(rfc3649_a_b(1e6), rfc3649_a_b(83e3));
        // Just above Low_Window a(w) starts near 1, not at the table's 2.
        assert!((rfc3649_a_b(39.0).0 - 1.0).abs() < 0.05);
    }

    fn rfc_cfg(count_acked_packets: bool) -> HighSpeedConfig {
        HighSpeedConfig { rfc3649_aimd: true, count_acked_packets, ..Default::default() }
    }

    // RFC mode: ssthresh = cwnd − round(cwnd·b(cwnd)): 1000·(1 − 0.330) = 670 (the
    // RFC 3649 formula value; Linux's table gives 676), 100·0.55 = 55 (table: 57),
    // 38 → 19.
    #[test]
    fn rfc3649_ssthresh_and_growth() {
        for (w, ss) in [(1000u32, 670u32), (100, 55), (38, 19)] {
            let mut h = HighSpeed::new(rfc_cfg(false));
            assert_eq!(h.ssthresh(&sock(w, w)), ss, "w = {w}");
        }
        // One RTT at w = 1000 with a packet per ACK: a(1000) = 7.86 per RTT
        // (a_256 = 2012), so +7 and most of the 8th, as the table.
        assert_eq!(one_rtt(rfc_cfg(false), 1000, 1), 1007);
        // At w = 100: a = 1.82 → +1 in the RTT (table: +2 → 101 and most of 102).
        assert_eq!(one_rtt(rfc_cfg(true), 100, 2), 101);
        assert_eq!(one_rtt(HighSpeedConfig::default(), 100, 1), 101);
        // Counting ACKs with delayed ACKs halves it, as in Linux mode.
        assert_eq!(one_rtt(rfc_cfg(false), 1000, 2), 1003);
        let p =
            crate::registry::resolve_params("highspeed", &[("aimd".into(), crate::ParamValue::Str("rfc3649".into()))])
                .unwrap();
        assert!(HighSpeedConfig::from_params(&p).rfc3649_aimd);
    }

    #[test]
    fn table_shape() {
        assert_eq!(LOW_WINDOW, 38);
        assert!(AIMD.windows(2).all(|r| r[0].0 < r[1].0 && r[0].1 >= r[1].1));
        let p = crate::registry::resolve_params("highspeed", &[]).unwrap();
        assert_eq!(HighSpeedConfig::from_params(&p), HighSpeedConfig::default());
    }

    // Rows: w, RFC 3649 §5's b(w), its a(w) (with p(w) ≈ 0.078/w^1.2),
    // a(w) with the exact p(w), Linux a, Linux md.
    #[test]
    fn a_and_b_rows() {
        let rows: &[(u32, f64, f64, f64, u32, u32)] = &[
            (38, 0.500, 1.00, 1.00, 1, 128),
            (100, 0.450, 1.80, 1.82, 2, 112),
            (1000, 0.330, 7.74, 7.86, 8, 83),
            (10000, 0.210, 29.0, 29.6, 30, 52),
            (83000, 0.100, 70.7, 72.5, 71, 25),
        ];
        for &(w, b, a, a_exact, linux_a, linux_md) in rows {
            let h = at(w);
            assert_eq!((h.a(), h.md()), (linux_a, linux_md), "w = {w}");
            // RFC 3649 §5's formula values are reproduced ...
            assert!((b_rfc(w as f64) - b).abs() < 0.0015, "b({w}) = {}", b_rfc(w as f64));
            assert!((a_rfc(w as f64) - a_exact).abs() / a_exact < 0.01, "a({w}) = {}", a_rfc(w as f64));
            // ... and Linux's table is within one packet of a(w) and 0.015 of b(w).
            assert!((linux_a as f64 - a).abs() <= 1.0, "w = {w}");
            assert!((linux_md as f64 / 256.0 - b).abs() < 0.015, "w = {w}");
        }
        // Bracketing: row i covers (AIMD[i−1].0, AIMD[i].0].
        assert_eq!(at(39).a(), 2);
        assert_eq!(at(118).a(), 2);
        assert_eq!(at(119).a(), 3);
        assert_eq!(at(10_000_000).a(), 72);
        // And back down.
        let mut h = at(100_000);
        h.update_row(38);
        assert_eq!(h.a(), 1);
    }

    // Linux's table: w = 1000 → 1000 − (1000·83 >> 8) = 676; w = 10000 → 7969;
    // w = 38 → 19 (Reno).
    #[test]
    fn ssthresh_vectors() {
        for (w, ss) in [(1000u32, 676u32), (10_000, 7969), (38, 19), (3, 2), (1, 2)] {
            assert_eq!(at(w).ssthresh(&sock(w, w)), ss, "w = {w}");
        }
    }

    /// cwnd after one RTT of congestion avoidance starting at `w`, with ACKs
    /// covering `per_ack` packets each.
    fn one_rtt(cfg: HighSpeedConfig, w: u32, per_ack: u32) -> u32 {
        let mut h = HighSpeed::new(cfg);
        let mut tp = sock(w, w);
        h.init(&mut tp);
        for _ in 0..w / per_ack {
            h.cong_avoid(&mut tp, per_ack);
        }
        tp.snd_cwnd
    }

    // Linux's table: growth at w = 1000 is +8 per RTT with one ACK per packet
    // (a(1000) = 8; 8000 credits buy 1000 + … + 1006, so +7 and most of the
    // 8th). With delayed ACKs Linux grows half as fast (a(w) per ACK),
    // packet counting as fast.
    #[test]
    fn growth_per_rtt() {
        assert_eq!(one_rtt(HighSpeedConfig::default(), 1000, 1), 1007);
        assert_eq!(one_rtt(HighSpeedConfig::default(), 1000, 2), 1003);
        let counted = HighSpeedConfig { count_acked_packets: true, ..Default::default() };
        assert_eq!(one_rtt(counted.clone(), 1000, 2), 1007);
        assert_eq!(one_rtt(counted, 1000, 1), 1007);
        // w = 38: Reno, +1 per RTT.
        assert_eq!(one_rtt(HighSpeedConfig::default(), 38, 1), 39);
    }

    #[test]
    fn slow_start_and_clamp() {
        let mut h = HighSpeed::new(HighSpeedConfig::default());
        let mut tp = sock(10, INFINITE_SSTHRESH);
        h.init(&mut tp);
        assert_eq!(tp.snd_cwnd_clamp, CWND_CLAMP);
        for _ in 0..10 {
            h.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 20);
        // Slow start stops at ssthresh; the rest of the ACK is dropped.
        let mut tp = sock(30, 32);
        h.cong_avoid(&mut tp, 5);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (32, 0));
        // At the clamp nothing grows.
        let mut tp = sock(CWND_CLAMP, 1);
        h.init(&mut tp);
        h.cong_avoid(&mut tp, 1000);
        assert_eq!(tp.snd_cwnd, CWND_CLAMP);
    }

    // RFC 3742: max_ssthresh 100; at cwnd 1000, K = 1000/50 = 20, so one
    // window of ACKs adds 1000/20 = 50 = max_ssthresh/2 packets.
    #[test]
    fn limited_slow_start() {
        let mut h = HighSpeed::new(HighSpeedConfig { max_ssthresh: 100, ..Default::default() });
        let mut tp = sock(1000, INFINITE_SSTHRESH);
        for _ in 0..1000 {
            h.cong_avoid(&mut tp, 1);
        }
        assert!((1048..=1050).contains(&tp.snd_cwnd), "cwnd {}", tp.snd_cwnd);
        // Below max_ssthresh: standard doubling.
        let mut tp = sock(40, INFINITE_SSTHRESH);
        for _ in 0..40 {
            h.cong_avoid(&mut tp, 1);
        }
        assert!(tp.snd_cwnd >= 80 && tp.snd_cwnd <= 100, "cwnd {}", tp.snd_cwnd);
    }
}
