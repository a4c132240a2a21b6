//! Scalable TCP (STCP), following Linux `net/ipv4/tcp_scalable.c`.
//!
//! Sources: T. Kelly, "Scalable TCP: improving performance in highspeed wide
//! area networks", ACM CCR 33(2), 2003; Linux `tcp_scalable.c` (J. Heffner)
//! as changed by "tcp: fix stretch ACK bugs in Scalable" (P. Yang, 2020).
//!
//! STCP in a nutshell: multiplicative increase, multiplicative decrease.
//!
//! ```text
//!  per packet acked:  cwnd += a            (a = 0.01 ⇒ ×1.01 per RTT)
//!  on loss:           cwnd ← (1 − b)·cwnd  (b = 0.125)
//!  response:          a(1 − p) = p·b·w  ⇒  w ≈ a/(b·p) = 0.08/p
//! ```
//!
//! Recovery after a loss takes ln(1/(1 − b))/ln(1 + a) = 13.4 RTTs whatever
//! the window. Linux writes the increase as `tcp_cong_avoid_ai(min(cwnd,
//! 1/a), acked)`: +1 per min(cwnd, 100) packets acked, which is Reno (+1 per
//! RTT) up to cwnd = 1/a = 100 and +a per packet above it; the decrease is
//! `cwnd − cwnd >> 3`, so windows below 8 are not reduced at all.
//!
//! Kernels before 2020 used `AI_CNT = 50` and counted ACKs instead of
//! packets ("50 instead of 100 to account for delayed ack"); with delayed
//! ACKs both give about the same growth. This file follows the current form.
//!
//! Deviations from Linux: none in the default configuration. With other
//! values of `a` and `b`, 1/a is rounded to the nearest integer and b is
//! applied in 1/1024 steps (b = 0.125 is exactly `>> 3`).

use crate::params::{ParamDefault, ParamKind, ParamSpec, Params};
use crate::{common, CongestionControl, Sock, MAX_METRICS};

/// b is applied as `(cwnd · round(b·1024)) >> 10`; 0.125 gives Linux's `>> 3`.
const B_SHIFT: u32 = 10;

/// Scalable TCP's parameters; defaults are Kelly's and Linux's values.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "a",
        kind: ParamKind::Float { min: 1e-6, max: 1.0 },
        default: ParamDefault::Float(0.01),
        doc: "increase per packet acknowledged, packets (applied as +1 per round(1/a) packets, and Reno below cwnd = 1/a); Kelly 2003 and Linux TCP_SCALABLE_AI_CNT=100: a=0.01",
    },
    ParamSpec {
        name: "b",
        kind: ParamKind::Float { min: 0.0, max: 0.99 },
        default: ParamDefault::Float(0.125),
        doc: "fraction of cwnd removed on loss (applied in 1/1024 steps, rounded down); Kelly 2003 and Linux TCP_SCALABLE_MD_SCALE=3: b=1/8",
    },
];

/// Typed Scalable TCP configuration (see [`PARAMS`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ScalableConfig {
    pub a: f64,
    pub b: f64,
}

impl Default for ScalableConfig {
    fn default() -> Self {
        ScalableConfig { a: 0.01, b: 0.125 }
    }
}

impl ScalableConfig {
    /// Reads resolved registry parameters.
    pub fn from_params(p: &Params) -> ScalableConfig {
        ScalableConfig { a: p.float("a"), b: p.float("b") }
    }
}

/// Scalable TCP keeps no state beyond its two constants.
#[derive(Clone, Debug)]
pub struct Scalable {
    /// Packets acked per +1 of cwnd above the legacy window (Linux
    /// `TCP_SCALABLE_AI_CNT`, 100 = 1/a).
    ai_cnt: u32,
    /// b·1024 (128 = Linux's `>> 3`).
    md: u32,
}

impl Scalable {
    pub fn new(cfg: ScalableConfig) -> Scalable {
        let ai = (1.0 / cfg.a).round();
        let ai_cnt = if ai.is_nan() { 100 } else { ai.clamp(1.0, u32::MAX as f64) as u32 };
        let md = (cfg.b * (1 << B_SHIFT) as f64).round();
        let md = if md.is_nan() { 128 } else { md.clamp(0.0, ((1 << B_SHIFT) - 1) as f64) as u32 };
        Scalable { ai_cnt, md }
    }
}

impl CongestionControl for Scalable {
    /// Linux `tcp_scalable_ssthresh`: cwnd − b·cwnd, at least 2.
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        let cwnd = tp.snd_cwnd as u64;
        ((cwnd - ((cwnd * self.md as u64) >> B_SHIFT)) as u32).max(2)
    }

    /// Linux `tcp_scalable_cong_avoid`.
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
        // +1 per min(cwnd, 1/a) acked: Reno below 1/a, +a per packet above.
        let w = tp.snd_cwnd.min(self.ai_cnt);
        common::cong_avoid_ai(tp, w, acked);
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &["ai_cnt_pkts"]
    }

    fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
        out[0] = self.ai_cnt as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit;

    fn sock(cwnd: u32, ssthresh: u32) -> Sock {
        testkit::sock_at(cwnd, ssthresh, 0)
    }

    fn stcp() -> Scalable {
        Scalable::new(ScalableConfig::default())
    }

    /// One RTT of ACKs, one per packet.
    fn rtt(c: &mut Scalable, tp: &mut Sock) {
        for _ in 0..tp.snd_cwnd {
            c.cong_avoid(tp, 1);
        }
    }

    #[test]
    fn defaults_are_linux() {
        let c = stcp();
        assert_eq!((c.ai_cnt, c.md), (100, 128));
        let p = crate::registry::resolve_params("scalable", &[]).unwrap();
        assert_eq!(ScalableConfig::from_params(&p), ScalableConfig::default());
    }

    // Linux `tcp_scalable_ssthresh`: cwnd 1000 → 875; cwnd − cwnd >> 3
    // below 8 is no reduction (Linux), floor of 2.
    #[test]
    fn ssthresh_vectors() {
        let mut c = stcp();
        assert_eq!(c.ssthresh(&sock(1000, 1000)), 875);
        assert_eq!(c.ssthresh(&sock(8, 8)), 7);
        assert_eq!(c.ssthresh(&sock(7, 7)), 7);
        assert_eq!(c.ssthresh(&sock(2, 2)), 2);
        assert_eq!(c.ssthresh(&sock(1, 1)), 2);
        // Exactly Linux's shift for every window.
        for w in [9u32, 100, 12_345, 1 << 30] {
            assert_eq!(c.ssthresh(&sock(w, w)), (w - (w >> 3)).max(2));
        }
    }

    // Linux `tcp_scalable_cong_avoid`: cwnd 50 → +1 per 50 acked (+1 per
    // RTT); cwnd 1000 → +1 per 100 acked (+10 per RTT).
    #[test]
    fn increase_per_rtt() {
        let mut c = stcp();
        let mut tp = sock(50, 50);
        rtt(&mut c, &mut tp);
        assert_eq!(tp.snd_cwnd, 51);
        let mut tp = sock(1000, 1000);
        rtt(&mut c, &mut tp);
        assert_eq!(tp.snd_cwnd, 1010);
        // Stretch ACKs count every packet (the 2020 fix).
        let mut tp = sock(1000, 1000);
        for _ in 0..500 {
            c.cong_avoid(&mut tp, 2);
        }
        assert_eq!(tp.snd_cwnd, 1010);
    }

    // Kelly's a and b: recovery from 875 back to 1000 takes
    // ln(8/7)/ln(1.01) = 13.4 RTTs.
    #[test]
    fn recovery_time_is_13_rtts() {
        let mut c = stcp();
        let mut tp = sock(1000, 1000);
        tp.snd_ssthresh = c.ssthresh(&tp);
        tp.snd_cwnd = tp.snd_ssthresh;
        let mut rtts = 0;
        while tp.snd_cwnd < 1000 {
            rtt(&mut c, &mut tp);
            rtts += 1;
        }
        assert!((13..=14).contains(&rtts), "{rtts} RTTs");
        // The same at 100 000 packets: MIMD recovery time is scale-free.
        let mut tp = sock(100_000, 100_000);
        tp.snd_ssthresh = c.ssthresh(&tp);
        tp.snd_cwnd = tp.snd_ssthresh;
        let mut rtts = 0;
        while tp.snd_cwnd < 100_000 {
            rtt(&mut c, &mut tp);
            rtts += 1;
        }
        assert!((13..=14).contains(&rtts), "{rtts} RTTs");
    }

    // Response: a/(b·p), derived from Kelly's rule (a·(1 − p) = p·b·w at
    // equilibrium); p = 1e-5 → 8000.
    #[test]
    fn response_constant() {
        let cfg = ScalableConfig::default();
        assert!((cfg.a / (cfg.b * 1e-5) - 8000.0).abs() < 1e-6);
    }

    #[test]
    fn other_constants() {
        let mut c = Scalable::new(ScalableConfig { a: 0.02, b: 0.5 });
        assert_eq!(c.ai_cnt, 50);
        assert_eq!(c.ssthresh(&sock(1000, 1000)), 500);
        let c = Scalable::new(ScalableConfig { a: f64::NAN, b: f64::NAN });
        assert_eq!((c.ai_cnt, c.md), (100, 128));
    }
}
