//! DCTCP, following Linux `net/ipv4/tcp_dctcp.c` and RFC 8257.
//!
//! Sources: M. Alizadeh et al., "Data Center TCP (DCTCP)", ACM SIGCOMM 2010;
//! RFC 8257 (Bensley et al., 2017); Linux `tcp_dctcp.c` and `tcp_dctcp.h`.
//!
//! The sender keeps α, an estimate of the fraction of its packets that were
//! CE-marked, and cuts the window in proportion to it instead of halving:
//!
//! ```text
//!  once per window of data (snd_una passes the snd_nxt of the last update):
//!      F = packets delivered with ECE / packets delivered     (over that window)
//!      α ← (1 − g)·α + g·F                                    g = 1/16
//!  on an ECN echo (at most once per window, through the sender's CWR state):
//!      ssthresh = max(cwnd − cwnd·α/2, 2)
//!  on a loss: ssthresh = max(cwnd/2, 2), as Reno
//! ```
//!
//! α is kept, as in Linux, as an integer scaled by 1024 (`DCTCP_MAX_ALPHA`);
//! the decay `α −= α >> 4` snaps α below 16/1024 to zero. α starts at 1
//! (`dctcp_alpha_on_init` = 1024), so the first mark halves the window.
//!
//! DCTCP needs ECN (Linux `TCP_CONG_NEEDS_ECN`): the sender marks every data
//! packet ECT, retransmissions included, and the receiver echoes each CE
//! change at once (RFC 8257 §3.2), which the simulator's receiver does for a
//! flow whose algorithm reports [`CongestionControl::needs_ecn`].
//!
//! Deviation from Linux: the α update runs after the ACK's deliveries are
//! counted (Linux ≥ 6.x calls `in_ack_event` after `tcp_clean_rtx_queue`;
//! older kernels counted them one ACK later).

use crate::params::{ParamDefault, ParamKind, ParamSpec, Params};
use crate::{common, AckSample, CaEvent, CaState, CongestionControl, Sock, MAX_METRICS};

/// Linux `DCTCP_MAX_ALPHA`: α = 1.
pub const MAX_ALPHA: u32 = 1024;

/// DCTCP's parameters; defaults are Linux's module parameters.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "shift_g",
        kind: ParamKind::Int { min: 0, max: 10 },
        default: ParamDefault::Int(4),
        doc: "EWMA gain g = 1/2^shift_g for alpha; Linux dctcp_shift_g = 4 (g = 1/16, RFC 8257 section 4.2)",
    },
    ParamSpec {
        name: "alpha_on_init",
        kind: ParamKind::Int { min: 0, max: 1024 },
        default: ParamDefault::Int(1024),
        doc: "initial alpha in 1/1024 units; Linux dctcp_alpha_on_init = DCTCP_MAX_ALPHA (alpha = 1)",
    },
];

/// Typed DCTCP configuration (see [`PARAMS`]).
#[derive(Clone, Debug, PartialEq)]
pub struct DctcpConfig {
    pub shift_g: u32,
    pub alpha_on_init: u32,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig { shift_g: 4, alpha_on_init: MAX_ALPHA }
    }
}

impl DctcpConfig {
    /// Reads resolved registry parameters.
    pub fn from_params(p: &Params) -> DctcpConfig {
        DctcpConfig { shift_g: p.int("shift_g") as u32, alpha_on_init: p.int("alpha_on_init") as u32 }
    }
}

/// Linux `struct dctcp` (sender half; the receiver's CE state lives in the
/// simulator's receiver).
#[derive(Clone, Debug)]
pub struct Dctcp {
    shift_g: u32,
    /// α·1024.
    alpha: u32,
    /// snd_nxt (bytes) at the last α update: the window ends when snd_una passes it.
    next_seq: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
    /// cwnd before the last reduction, for undo.
    loss_cwnd: u32,
}

impl Dctcp {
    pub fn new(cfg: DctcpConfig) -> Dctcp {
        Dctcp {
            shift_g: cfg.shift_g,
            alpha: cfg.alpha_on_init.min(MAX_ALPHA),
            next_seq: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            loss_cwnd: 0,
        }
    }

    /// α as a fraction in [0, 1].
    pub fn alpha(&self) -> f64 {
        self.alpha as f64 / MAX_ALPHA as f64
    }

    /// Linux `dctcp_reset`: a new observation window starts now.
    fn reset(&mut self, tp: &Sock) {
        self.next_seq = tp.snd_nxt;
        self.old_delivered = tp.delivered;
        self.old_delivered_ce = tp.delivered_ce;
    }

    /// Linux `dctcp_update_alpha`.
    fn update_alpha(&mut self, tp: &Sock) {
        if tp.snd_una < self.next_seq {
            return;
        }
        let delivered = tp.delivered - self.old_delivered;
        let delivered_ce = tp.delivered_ce - self.old_delivered_ce;
        let mut alpha = self.alpha;
        // α ← (1 − g)·α; Linux's min_not_zero lets a decay step of 0 take α to 0.
        let step = alpha >> self.shift_g;
        alpha -= if step == 0 { alpha } else { step };
        if delivered_ce > 0 {
            let f = (delivered_ce << (10 - self.shift_g)) / delivered.max(1);
            alpha = (alpha as u64 + f).min(MAX_ALPHA as u64) as u32;
        }
        self.alpha = alpha;
        self.reset(tp);
    }

    /// Linux `dctcp_react_to_loss`: Reno's halving.
    fn react_to_loss(&mut self, tp: &mut Sock) {
        self.loss_cwnd = tp.snd_cwnd;
        tp.snd_ssthresh = (tp.snd_cwnd >> 1).max(2);
    }
}

impl CongestionControl for Dctcp {
    fn init(&mut self, tp: &mut Sock) {
        self.reset(tp);
    }

    /// Linux `dctcp_ssthresh`: cwnd − cwnd·α/2, at least 2.
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        self.loss_cwnd = tp.snd_cwnd;
        let cwnd = tp.snd_cwnd as u64;
        ((cwnd - ((cwnd * self.alpha as u64) >> 11)) as u32).max(2)
    }

    /// Linux calls `dctcp_update_alpha` from `in_ack_event`, on every ACK.
    fn pkts_acked(&mut self, tp: &mut Sock, _sample: &AckSample) {
        self.update_alpha(tp);
    }

    /// Linux `dctcp_state`: entering Recovery halves the window.
    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        if new_state == CaState::Recovery && tp.ca_state != CaState::Recovery {
            self.react_to_loss(tp);
        }
    }

    /// Linux `dctcp_cwnd_event`: a timeout halves the window (once per RTO,
    /// as the sender calls it).
    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        if ev == CaEvent::Loss {
            self.react_to_loss(tp);
        }
    }

    /// Linux `dctcp_cwnd_undo`.
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        tp.snd_cwnd.max(self.loss_cwnd)
    }

    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        common::reno_cong_avoid(tp, acked);
    }

    fn needs_ecn(&self) -> bool {
        true
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &["alpha"]
    }

    fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
        out[0] = self.alpha();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit;

    fn dctcp() -> Dctcp {
        Dctcp::new(DctcpConfig::default())
    }

    /// One window of `n` packets delivered, `ce` of them with ECE, then the
    /// ACK that ends the window.
    fn window(c: &mut Dctcp, tp: &mut Sock, n: u64, ce: u64) {
        tp.delivered += n;
        tp.delivered_ce += ce;
        tp.snd_una = tp.snd_nxt;
        tp.snd_nxt += n * testkit::MSS as u64;
        c.pkts_acked(tp, &AckSample::default());
    }

    #[test]
    fn defaults_are_linux() {
        let p = crate::registry::resolve_params("dctcp", &[]).unwrap();
        assert_eq!(DctcpConfig::from_params(&p), DctcpConfig::default());
        assert_eq!(dctcp().alpha, 1024);
    }

    // RFC 8257 §4.2: with every packet marked α stays at 1; with none it
    // decays by 1/16 per window (Linux integer arithmetic: 1024 → 960 → 900).
    #[test]
    fn alpha_follows_the_marked_fraction() {
        let mut c = dctcp();
        let mut tp = testkit::sock_at(100, 50, 0);
        c.init(&mut tp);
        window(&mut c, &mut tp, 100, 100);
        assert_eq!(c.alpha, 1024);
        window(&mut c, &mut tp, 100, 0);
        assert_eq!(c.alpha, 960);
        window(&mut c, &mut tp, 100, 0);
        assert_eq!(c.alpha, 900);
        // A steady marked fraction F: α converges to F (fixed point of
        // α = (15/16)α + F/16), here F = 1/4 → 256 within integer rounding.
        for _ in 0..200 {
            window(&mut c, &mut tp, 100, 25);
        }
        assert!((c.alpha as i64 - 256).abs() <= 16, "alpha {}", c.alpha);
        // No marks at all: α reaches exactly 0 (α < 16 snaps to zero).
        for _ in 0..200 {
            window(&mut c, &mut tp, 100, 0);
        }
        assert_eq!(c.alpha, 0);
    }

    #[test]
    fn alpha_updates_once_per_window() {
        let mut c = dctcp();
        let mut tp = testkit::sock_at(100, 50, 0);
        c.init(&mut tp);
        window(&mut c, &mut tp, 100, 0);
        let a = c.alpha;
        // ACKs inside the window (snd_una below the window's end) change nothing.
        tp.delivered += 10;
        tp.snd_una += 10 * testkit::MSS as u64;
        c.pkts_acked(&mut tp, &AckSample::default());
        assert_eq!(c.alpha, a);
    }

    // RFC 8257 §3.3: cwnd ← cwnd·(1 − α/2); α = 1 halves, α = 0 keeps cwnd
    // (Linux floor 2), α = 1/4 removes 1/8.
    #[test]
    fn reduction_is_proportional_to_alpha() {
        let mut c = dctcp();
        let tp = testkit::sock_at(80, 80, 0);
        assert_eq!(c.ssthresh(&tp), 40);
        c.alpha = 256;
        assert_eq!(c.ssthresh(&tp), 70);
        c.alpha = 0;
        assert_eq!(c.ssthresh(&tp), 80);
        assert_eq!(c.ssthresh(&testkit::sock_at(1, 1, 0)), 2);
    }

    #[test]
    fn loss_halves_like_reno() {
        let mut c = dctcp();
        c.alpha = 0;
        let mut tp = testkit::sock_at(80, 80, 0);
        tp.snd_ssthresh = c.ssthresh(&tp);
        c.set_state(&mut tp, CaState::Recovery);
        assert_eq!(tp.snd_ssthresh, 40);
        tp.snd_cwnd = 40;
        assert_eq!(c.undo_cwnd(&tp), 80);
    }
}
