//! SQRT: the binomial congestion control with k = l = 1/2.
//!
//! Source: D. Bansal, H. Balakrishnan, "Binomial congestion control
//! algorithms", IEEE INFOCOM 2001, which defines the binomial family and its
//! members IIAD (k = 1, l = 0) and SQRT (k = l = 1/2). Not in Linux.
//!
//! **Unconfirmed reference.** The paper was not re-opened for this
//! implementation and no second source was found for its constants; α = 1
//! and β = 1/2 are values we chose for illustration, not checked against
//! the paper. The high-speed SQRT variant of Hatano et al. (2003) is not
//! implemented (no copy was found). `ccarena list cc` flags this algorithm.
//!
//! Binomial(k, l) in a nutshell:
//!
//! ```text
//!  per RTT:   w ← w + α/w^k        (per packet acked: + α/w^(k+1))
//!  on loss:   w ← w − β·w^l
//! ```
//!
//! Reno is (k, l) = (0, 1). The family is TCP-compatible (throughput ∝ 1/√p)
//! when k + l = 1, with α and β matched to Reno's constant. SQRT's smaller
//! decrease (β·√w instead of w/2) gives smoother rates for streaming, at
//! the cost of a slower increase (α/√w per RTT).
//!
//! Slow start, recovery and RTO are standard, as for Reno. Windows are whole
//! packets: the increase is applied as +1 per ⌈w^(k+1)/α⌋ packets
//! acknowledged (Linux's `tcp_cong_avoid_ai`), and the new ssthresh is
//! w − β·w^l rounded down (and always below w once w > 2).

use crate::params::{ParamDefault, ParamKind, ParamSpec, Params};
use crate::{common, CongestionControl, Sock};

/// SQRT's parameters.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "k",
        kind: ParamKind::Float { min: 0.0, max: 2.0 },
        default: ParamDefault::Float(0.5),
        doc: "increase exponent: +alpha/w^k packets per RTT; SQRT k=1/2 (Bansal & Balakrishnan 2001; Reno k=0)",
    },
    ParamSpec {
        name: "l",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: ParamDefault::Float(0.5),
        doc: "decrease exponent: -beta*w^l packets on loss; SQRT l=1/2 (Bansal & Balakrishnan 2001; Reno l=1)",
    },
    ParamSpec {
        name: "alpha",
        kind: ParamKind::Float { min: 0.001, max: 1000.0 },
        default: ParamDefault::Float(1.0),
        doc: "increase constant, packets^(1+k) per RTT; 1.0 is an illustrative choice, not checked against the paper [UNCONFIRMED]",
    },
    ParamSpec {
        name: "beta",
        kind: ParamKind::Float { min: 0.001, max: 1.0 },
        default: ParamDefault::Float(0.5),
        doc: "decrease constant, packets^(1-l); 0.5 is an illustrative choice, not checked against the paper [UNCONFIRMED]",
    },
];

/// Typed binomial configuration (see [`PARAMS`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SqrtConfig {
    pub k: f64,
    pub l: f64,
    pub alpha: f64,
    pub beta: f64,
}

impl Default for SqrtConfig {
    fn default() -> Self {
        SqrtConfig { k: 0.5, l: 0.5, alpha: 1.0, beta: 0.5 }
    }
}

impl SqrtConfig {
    /// Reads resolved registry parameters.
    pub fn from_params(p: &Params) -> SqrtConfig {
        SqrtConfig { k: p.float("k"), l: p.float("l"), alpha: p.float("alpha"), beta: p.float("beta") }
    }
}

/// Binomial congestion control; stateless beyond its configuration.
#[derive(Clone, Debug)]
pub struct Sqrt {
    cfg: SqrtConfig,
}

impl Sqrt {
    pub fn new(cfg: SqrtConfig) -> Sqrt {
        Sqrt { cfg }
    }

    /// Packets to acknowledge per +1 packet: w^(k+1)/α, so that a window of
    /// ACKs adds α/w^k.
    fn acks_per_increment(&self, w: u32) -> u32 {
        let n = (w.max(1) as f64).powf(self.cfg.k + 1.0) / self.cfg.alpha;
        if n.is_nan() {
            return w.max(1);
        }
        n.round().clamp(1.0, u32::MAX as f64) as u32
    }

    /// The window after a loss at `w`: w − β·w^l, rounded down.
    fn decreased(&self, w: u32) -> u32 {
        let dec = self.cfg.beta * (w as f64).powf(self.cfg.l);
        let ss = (w as f64 - dec).floor();
        let ss = if ss.is_nan() { (w / 2) as f64 } else { ss.clamp(0.0, u32::MAX as f64) };
        // A decrease always removes something (the floor above already does
        // unless β·w^l rounds to nothing next to a huge w).
        (ss as u32).min(w.saturating_sub(1)).max(2)
    }
}

impl CongestionControl for Sqrt {
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        self.decreased(tp.snd_cwnd)
    }

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
        let n = self.acks_per_increment(tp.snd_cwnd);
        common::cong_avoid_ai(tp, n, acked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit;

    fn sock(cwnd: u32, ssthresh: u32) -> Sock {
        testkit::sock_at(cwnd, ssthresh, 0)
    }

    fn sqrt() -> Sqrt {
        Sqrt::new(SqrtConfig::default())
    }

    #[test]
    fn defaults() {
        let p = crate::registry::resolve_params("sqrt", &[]).unwrap();
        assert_eq!(SqrtConfig::from_params(&p), SqrtConfig::default());
        assert!(crate::registry::info("sqrt").unwrap().unconfirmed);
    }

    // Worked example with the illustration values (α = 1, β = 0.5):
    // w = 100 → +0.1 per RTT (+1 per 100^1.5 = 1000 packets);
    // loss → 100 − 0.5·10 = 95.
    #[test]
    fn per_ack_and_loss_at_100() {
        let mut c = sqrt();
        assert_eq!(c.acks_per_increment(100), 1000);
        let mut tp = sock(100, 100);
        for rtt in 1..=10 {
            for _ in 0..100 {
                c.cong_avoid(&mut tp, 1);
            }
            assert_eq!(tp.snd_cwnd, if rtt < 10 { 100 } else { 101 }, "after {rtt} RTTs");
        }
        assert_eq!(c.ssthresh(&sock(100, 100)), 95);
    }

    // w = 10000 → +0.01 per RTT (+1 per 10^6 packets); loss → 9950.
    #[test]
    fn per_ack_and_loss_at_10000() {
        let mut c = sqrt();
        assert_eq!(c.acks_per_increment(10_000), 1_000_000);
        assert_eq!(c.ssthresh(&sock(10_000, 10_000)), 9950);
        let mut tp = sock(10_000, 10_000);
        for _ in 0..99 {
            c.cong_avoid(&mut tp, 10_000);
        }
        assert_eq!(tp.snd_cwnd, 10_000, "99 RTTs: +0.99");
        c.cong_avoid(&mut tp, 10_000);
        assert_eq!(tp.snd_cwnd, 10_001);
    }

    // The family: Reno (0, 1) halves and adds one per window; IIAD (1, 0)
    // adds 1/w per RTT and removes β = 1 packet.
    #[test]
    fn binomial_family_members() {
        let mut reno = Sqrt::new(SqrtConfig { k: 0.0, l: 1.0, ..Default::default() });
        assert_eq!(reno.acks_per_increment(40), 40);
        assert_eq!(reno.ssthresh(&sock(40, 40)), 20);
        let mut iiad = Sqrt::new(SqrtConfig { k: 1.0, l: 0.0, alpha: 1.0, beta: 1.0 });
        assert_eq!(iiad.acks_per_increment(40), 1600);
        assert_eq!(iiad.ssthresh(&sock(40, 40)), 39);
    }

    #[test]
    fn small_and_huge_windows() {
        let mut c = sqrt();
        for (w, ss) in [(1u32, 2u32), (2, 2), (3, 2), (4, 3), (9, 7)] {
            assert_eq!(c.ssthresh(&sock(w, w)), ss, "w = {w}");
        }
        assert_eq!(c.acks_per_increment(1), 1);
        assert!(c.ssthresh(&sock(u32::MAX, 1)) < u32::MAX);
        assert_eq!(c.acks_per_increment(u32::MAX), u32::MAX);
        let mut tiny = Sqrt::new(SqrtConfig { l: 0.0, beta: 0.001, ..Default::default() });
        assert_eq!(tiny.ssthresh(&sock(1 << 31, 1)), (1 << 31) - 1);
    }
}
