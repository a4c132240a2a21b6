//! TCP Illinois, following Linux `net/ipv4/tcp_illinois.c`.
//!
//! Sources: S. Liu, T. Başar, R. Srikant, "TCP-Illinois: a loss- and
//! delay-based congestion control algorithm for high-speed networks",
//! Performance Evaluation 65(6–7), 2008 (VALUETOOLS 2006); Linux
//! `tcp_illinois.c` (S. Hemminger, S. Liu), "implemented from description in
//! paper and ns-2 simulation".
//!
//! Illinois in a nutshell: loss decides *when* to back off, delay decides
//! *how much* to grow and to back off. Once per RTT, from the average
//! queueing delay d_a and the largest seen d_m:
//!
//! ```text
//!  α(d_a) = α_max = 10              d_a ≤ d_1 = d_m/100 (for θ = 5 RTTs in a row)
//!         = κ1/(κ2 + d_a)            otherwise: hyperbolic from 10 down to α_min = 0.3 at d_m
//!  β(d_a) = β_min = 1/8             d_a ≤ d_2 = d_m/10
//!         = linear                   d_2 < d_a < d_3
//!         = β_max = 1/2             d_a ≥ d_3 = 0.8·d_m
//!  per ACK: cwnd += α/cwnd           on loss: cwnd ← (1 − β)·cwnd
//! ```
//!
//! Below `win_thresh` = 15 packets it is Reno (α = 1, β = 1/2).
//!
//! Deviations from Linux: the per-RTT sample count is 32-bit (Linux's u16
//! wraps after 65 535 samples in one RTT, i.e. windows above 64 K packets,
//! which corrupts the average); other products are computed in 64 bits with
//! the same results as Linux's 32-bit ones.

use crate::params::{ParamDefault, ParamKind, ParamSpec, Params};
use crate::{common, CaState, CongestionControl, Sock, MAX_METRICS};

/// α is stored ×128 (Linux `ALPHA_SHIFT` = 7).
const ALPHA_SHIFT: u32 = 7;
const ALPHA_SCALE: u32 = 1 << ALPHA_SHIFT;
/// Smallest α, 38/128 = 0.297 packets per RTT (Linux `3·ALPHA_SCALE/10`, "~0.3").
const ALPHA_MIN: u32 = 3 * ALPHA_SCALE / 10;
/// Largest α, 10 packets per RTT (Linux `10·ALPHA_SCALE`).
const ALPHA_MAX: u32 = 10 * ALPHA_SCALE;
/// α = 1 (Reno), used below win_thresh and after an RTO.
const ALPHA_BASE: u32 = ALPHA_SCALE;
/// RTT samples are clamped to U32_MAX/ALPHA_MAX µs ≈ 3.36 s so the α
/// arithmetic cannot overflow 32 bits (Linux `RTT_MAX`).
const RTT_MAX_US: u32 = u32::MAX / ALPHA_MAX;
/// β is stored ×64 (Linux `BETA_SHIFT` = 6).
const BETA_SHIFT: u32 = 6;
const BETA_SCALE: u32 = 1 << BETA_SHIFT;
/// β bounds: 1/8 with low delay, 1/2 with high delay (Linux `BETA_MIN`, `BETA_MAX`).
const BETA_MIN: u32 = BETA_SCALE / 8;
const BETA_MAX: u32 = BETA_SCALE / 2;
/// β = 1/2 (Reno), used below win_thresh and after an RTO.
const BETA_BASE: u32 = BETA_MAX;
/// Initial base RTT, µs (Linux `0x7fffffff`, "none yet").
const BASE_RTT_INIT: u32 = 0x7fff_ffff;

/// Illinois' parameters; defaults are Linux's module parameters.
pub static PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "win_thresh",
        kind: ParamKind::Int { min: 0, max: 1_000_000 },
        default: ParamDefault::Int(15),
        doc: "below this cwnd Illinois is Reno (alpha 1, beta 1/2), packets; Linux win_thresh=15",
    },
    ParamSpec {
        name: "theta",
        kind: ParamKind::Int { min: 0, max: 255 },
        default: ParamDefault::Int(5),
        doc: "RTTs of low delay in a row before alpha returns to its maximum; Linux theta=5",
    },
];

/// Typed Illinois configuration (see [`PARAMS`]).
#[derive(Clone, Debug, PartialEq)]
pub struct IllinoisConfig {
    pub win_thresh: u32,
    pub theta: u32,
}

impl Default for IllinoisConfig {
    fn default() -> Self {
        IllinoisConfig { win_thresh: 15, theta: 5 }
    }
}

impl IllinoisConfig {
    /// Reads resolved registry parameters.
    pub fn from_params(p: &Params) -> IllinoisConfig {
        IllinoisConfig {
            win_thresh: p.int("win_thresh").clamp(0, u32::MAX as i64) as u32,
            theta: p.int("theta").clamp(0, u32::MAX as i64) as u32,
        }
    }
}

/// Linux `struct illinois`.
#[derive(Clone, Debug)]
pub struct Illinois {
    cfg: IllinoisConfig,
    /// Sum and count of the RTT samples of the current RTT, µs.
    sum_rtt: u64,
    cnt_rtt: u32,
    /// Smallest and largest RTT ever seen, µs.
    base_rtt: u32,
    max_rtt: u32,
    /// The current RTT ends when snd_una passes this sequence number, bytes.
    end_seq: u64,
    /// Increase per RTT ×128.
    alpha: u32,
    /// Fraction of cwnd removed on loss ×64.
    beta: u32,
    /// Packets acknowledged by the current ACK.
    acked: u32,
    /// The average delay has left the low-delay zone since α was last maximal.
    rtt_above: bool,
    /// Consecutive low-delay RTTs since then.
    rtt_low: u32,
}

impl Illinois {
    pub fn new(cfg: IllinoisConfig) -> Illinois {
        Illinois {
            cfg,
            sum_rtt: 0,
            cnt_rtt: 0,
            base_rtt: BASE_RTT_INIT,
            max_rtt: 0,
            end_seq: 0,
            alpha: ALPHA_MAX,
            beta: BETA_BASE,
            acked: 0,
            rtt_above: false,
            rtt_low: 0,
        }
    }

    /// Linux `rtt_reset`: start collecting the next RTT's samples.
    fn rtt_reset(&mut self, tp: &Sock) {
        self.end_seq = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.sum_rtt = 0;
    }

    /// Maximum queueing delay d_m, µs (Linux `max_delay`).
    fn max_delay(&self) -> u32 {
        self.max_rtt.saturating_sub(self.base_rtt)
    }

    /// Average queueing delay d_a over the last RTT, µs (Linux `avg_delay`).
    fn avg_delay(&self) -> u32 {
        ((self.sum_rtt / self.cnt_rtt.max(1) as u64) as u32).saturating_sub(self.base_rtt)
    }

    /// Linux `alpha`: α from the average and maximum queueing delay.
    fn alpha_for(&mut self, da: u32, dm: u32) -> u32 {
        let d1 = dm / 100; // low-delay threshold
        if da <= d1 {
            // Never left the low-delay zone: grow as fast as allowed.
            if !self.rtt_above {
                return ALPHA_MAX;
            }
            // Wait θ good RTTs before going back to α_max, so that a single
            // good RTT does not cause a sudden increase.
            self.rtt_low += 1;
            if self.rtt_low < self.cfg.theta {
                return self.alpha;
            }
            self.rtt_low = 0;
            self.rtt_above = false;
            return ALPHA_MAX;
        }
        self.rtt_above = true;
        // α = κ1/(κ2 + d_a) with α(d1) = α_max and α(d_m) = α_min:
        // (d_m − d1)·α_max / ((d_m − d1) + (d_a − d1)(α_max − α_min)/α_min).
        let (dm, da) = ((dm - d1) as u64, (da - d1) as u64);
        let den = dm + da * (ALPHA_MAX - ALPHA_MIN) as u64 / ALPHA_MIN as u64;
        (dm * ALPHA_MAX as u64 / den.max(1)) as u32
    }

    /// Linux `beta`: β from the average and maximum queueing delay.
    fn beta_for(da: u32, dm: u32) -> u32 {
        let d2 = dm / 10;
        if da <= d2 {
            return BETA_MIN;
        }
        let d3 = (8 * dm as u64 / 10) as u32;
        if da >= d3 || d3 <= d2 {
            return BETA_MAX;
        }
        // Linear from β_min at d2 to β_max at d3.
        let (d2, d3, da) = (d2 as i64, d3 as i64, da as i64);
        let num = BETA_MIN as i64 * d3 - BETA_MAX as i64 * d2 + (BETA_MAX - BETA_MIN) as i64 * da;
        (num / (d3 - d2)) as u32
    }

    /// Linux `update_params`, once per RTT.
    fn update_params(&mut self, tp: &Sock) {
        if tp.snd_cwnd < self.cfg.win_thresh {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
        } else if self.cnt_rtt > 0 {
            let (dm, da) = (self.max_delay(), self.avg_delay());
            self.alpha = self.alpha_for(da, dm);
            self.beta = Self::beta_for(da, dm);
        }
        self.rtt_reset(tp);
    }

    /// α in packets per RTT.
    pub fn alpha_pkts(&self) -> f64 {
        self.alpha as f64 / ALPHA_SCALE as f64
    }

    /// β as the fraction removed on loss.
    pub fn beta(&self) -> f64 {
        self.beta as f64 / BETA_SCALE as f64
    }
}

impl CongestionControl for Illinois {
    /// Linux `tcp_illinois_init`.
    fn init(&mut self, tp: &mut Sock) {
        *self = Illinois::new(self.cfg.clone());
        self.rtt_reset(tp);
    }

    /// Linux `tcp_illinois_ssthresh`: cwnd·(1 − β).
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        let cwnd = tp.snd_cwnd as u64;
        ((cwnd - ((cwnd * self.beta as u64) >> BETA_SHIFT)) as u32).max(2)
    }

    /// Linux `tcp_illinois_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        if tp.snd_una > self.end_seq {
            self.update_params(tp);
        }
        // RFC 2861: grow only when the window is used.
        if !tp.is_cwnd_limited() {
            return;
        }
        if tp.in_slow_start() {
            // Linux drops what is left of `acked` once ssthresh is reached.
            common::slow_start(tp, acked);
            return;
        }
        // cwnd += α/cwnd per packet: once cnt·α/128 ≥ cwnd, add
        // ⌊cnt·α/128/cwnd⌋ and drop the remainder.
        tp.snd_cwnd_cnt = tp.snd_cwnd_cnt.saturating_add(self.acked);
        self.acked = 1;
        let delta = (tp.snd_cwnd_cnt as u64 * self.alpha as u64) >> ALPHA_SHIFT;
        let cwnd = tp.snd_cwnd as u64;
        if delta >= cwnd {
            tp.snd_cwnd = (cwnd + delta / cwnd).min(tp.snd_cwnd_clamp as u64) as u32;
            tp.snd_cwnd_cnt = 0;
        }
    }

    /// Linux `tcp_illinois_state`: an RTO returns to Reno's α and β.
    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
            self.rtt_low = 0;
            self.rtt_above = false;
            self.rtt_reset(tp);
        }
    }

    /// Linux `tcp_illinois_acked`: collect this RTT's delay samples.
    fn pkts_acked(&mut self, _tp: &mut Sock, sample: &crate::AckSample) {
        self.acked = sample.acked;
        if sample.rtt_us < 0 {
            return;
        }
        // Bogus values are clamped so the α arithmetic cannot wrap.
        let rtt = sample.rtt_us.min(RTT_MAX_US as i64) as u32;
        self.base_rtt = self.base_rtt.min(rtt);
        self.max_rtt = self.max_rtt.max(rtt);
        self.cnt_rtt = self.cnt_rtt.saturating_add(1);
        self.sum_rtt += rtt as u64;
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &["alpha_pkts_per_rtt", "beta", "base_rtt_us", "max_rtt_us"]
    }

    fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
        out[0] = self.alpha_pkts();
        out[1] = self.beta();
        out[2] = if self.base_rtt == BASE_RTT_INIT { f64::NAN } else { self.base_rtt as f64 };
        out[3] = self.max_rtt as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit;
    use crate::AckSample;

    const MSS: u64 = 1448;

    fn sock(cwnd: u32, ssthresh: u32) -> Sock {
        testkit::sock_at(cwnd, ssthresh, 0)
    }

    fn ack(rtt_us: i64) -> AckSample {
        testkit::rtt_ack(rtt_us)
    }

    /// Illinois with base RTT 50 ms and max RTT 150 ms seen (d_m = 100 ms),
    /// then one RTT whose samples average 50 ms + `da_us`, then the RTT ends.
    fn after_rtt(c: &mut Illinois, tp: &mut Sock, da_us: i64) {
        c.base_rtt = c.base_rtt.min(50_000);
        c.max_rtt = c.max_rtt.max(150_000);
        c.pkts_acked(tp, &ack(50_000 + da_us));
        tp.snd_nxt += 100 * MSS;
        tp.snd_una = c.end_seq + MSS;
        c.cong_avoid(tp, 1);
    }

    #[test]
    fn constants_are_linux() {
        assert_eq!((ALPHA_MIN, ALPHA_MAX, ALPHA_BASE), (38, 1280, 128));
        assert_eq!((BETA_MIN, BETA_MAX), (8, 32));
        assert_eq!(RTT_MAX_US, 3_355_443);
        let p = crate::registry::resolve_params("illinois", &[]).unwrap();
        assert_eq!(IllinoisConfig::from_params(&p), IllinoisConfig::default());
    }

    // Linux's integer arithmetic worked by hand, d_m = 100 ms: d_a,
    // α (×128), β (×64), ssthresh(100).
    #[test]
    fn alpha_beta_vectors() {
        let rows: &[(i64, u32, u32, u32)] = &[
            (500, 1280, 8, 88),   // ≤ d1 = 1 ms, never above: α 10, β 1/8
            (10_000, 322, 8, 88), // α 2.52, β still 1/8 (≤ d2 = 10 ms)
            (50_000, 74, 21, 68), // α 0.578, β 21/64 = 0.328
            (90_000, 42, 32, 50), // α 0.328, β 1/2 (≥ d3 = 80 ms)
        ];
        for &(da, alpha, beta, ss) in rows {
            let mut c = Illinois::new(IllinoisConfig::default());
            let mut tp = sock(100, 50);
            c.init(&mut tp);
            after_rtt(&mut c, &mut tp, da);
            assert_eq!((c.alpha, c.beta), (alpha, beta), "d_a = {da} µs");
            assert_eq!(c.ssthresh(&tp), ss, "d_a = {da} µs");
        }
    }

    // After a high-delay RTT, α returns to α_max only after θ = 5 low-delay
    // RTTs in a row.
    #[test]
    fn theta_low_delay_rtts() {
        let mut c = Illinois::new(IllinoisConfig::default());
        let mut tp = sock(100, 50);
        c.init(&mut tp);
        after_rtt(&mut c, &mut tp, 50_000);
        assert_eq!(c.alpha, 74);
        for i in 1..5 {
            after_rtt(&mut c, &mut tp, 0);
            assert_eq!(c.alpha, 74, "low RTT {i}: α kept");
        }
        after_rtt(&mut c, &mut tp, 0);
        assert_eq!(c.alpha, ALPHA_MAX);
    }

    // Below win_thresh: Reno's α and β whatever the delay.
    #[test]
    fn small_windows_are_reno() {
        let mut c = Illinois::new(IllinoisConfig::default());
        let mut tp = sock(14, 10);
        c.init(&mut tp);
        after_rtt(&mut c, &mut tp, 0);
        assert_eq!((c.alpha, c.beta), (ALPHA_BASE, BETA_BASE));
        assert_eq!(c.ssthresh(&tp), 7);
    }

    // α = 10 at cwnd 100: +1 per 10 packets acked, +10 per RTT.
    #[test]
    fn increase_per_rtt() {
        let mut c = Illinois::new(IllinoisConfig::default());
        let mut tp = sock(100, 50);
        c.init(&mut tp);
        tp.snd_una = 1; // first ACK ends the "RTT" begun at init
        c.pkts_acked(&mut tp, &ack(50_000));
        c.cong_avoid(&mut tp, 1);
        assert_eq!(c.alpha, ALPHA_MAX);
        let start = tp.snd_cwnd;
        for _ in 0..100 {
            c.pkts_acked(&mut tp, &ack(50_000));
            c.cong_avoid(&mut tp, 1);
        }
        // +1 per ⌈cwnd/10⌉ packets: 10 at cwnd 100, 11 from 101 on.
        assert_eq!(tp.snd_cwnd - start, 9);
    }

    #[test]
    fn rto_returns_to_reno() {
        let mut c = Illinois::new(IllinoisConfig::default());
        let mut tp = sock(100, 50);
        c.init(&mut tp);
        after_rtt(&mut c, &mut tp, 10_000);
        c.set_state(&mut tp, CaState::Recovery);
        assert_eq!(c.alpha, 322);
        c.set_state(&mut tp, CaState::Loss);
        assert_eq!((c.alpha, c.beta, c.rtt_above, c.cnt_rtt), (ALPHA_BASE, BETA_BASE, false, 0));
    }

    #[test]
    fn samples_are_clamped() {
        let mut c = Illinois::new(IllinoisConfig::default());
        let mut tp = sock(100, 50);
        c.pkts_acked(&mut tp, &ack(i64::MAX));
        assert_eq!(c.max_rtt, RTT_MAX_US);
        c.pkts_acked(&mut tp, &ack(0));
        let (dm, da) = (c.max_delay(), c.avg_delay());
        assert!(c.alpha_for(da, dm) >= ALPHA_MIN - 1);
        assert!(Illinois::beta_for(u32::MAX, u32::MAX) <= BETA_MAX);
        // A dupACK (no sample) still records the packets acked.
        c.pkts_acked(&mut tp, &AckSample { acked: 3, rtt_us: -1, ..Default::default() });
        assert_eq!(c.acked, 3);
    }
}
