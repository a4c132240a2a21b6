//! Background traffic: distributions of transfer sizes and RTTs, TCP flow
//! sources (open-loop Poisson arrivals, or closed-loop sessions that
//! alternate a transfer and an idle period), unresponsive UDP sources, and
//! random loss processes. Recipes and defaults follow the SURGE model (Barford and
//! Crovella, SIGMETRICS 1998) and the background traffic of the papers the presets rerun.
//!
//! Every source draws from its own random stream (derived from the
//! simulation seed and the source's index), so adding a source does not
//! change what the others draw.

use crate::rng::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Transfer sizes in bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum SizeDist {
    /// Always this many bytes.
    Fixed { bytes: u64 },
    /// Pareto with minimum `min` bytes and shape `shape` (mean shape·min/(shape−1)).
    Pareto { min: f64, shape: f64 },
    /// Lognormal of ln bytes.
    Lognormal { mu: f64, sigma: f64 },
    /// SURGE-like mixture: with probability `body` a lognormal body
    /// (`mu`, `sigma` of ln bytes), otherwise a Pareto tail (`tail_min`, `tail_shape`).
    Surge { body: f64, mu: f64, sigma: f64, tail_min: f64, tail_shape: f64 },
    /// Exponential with this mean, bytes.
    Exponential { mean: f64 },
}

impl SizeDist {
    /// The SURGE defaults used in Rhee's 2007 rebuttal (I. Rhee, rebuttal to
    /// "Experimental Evaluation of Cubic-TCP" by Leith, Shorten and
    /// McCullagh, 2007). That they are SURGE's own values (Barford and
    /// Crovella, SIGMETRICS 1998) was not confirmed in a second source; another
    /// reading of SURGE's table gives sigma 1.318.
    pub fn surge() -> SizeDist {
        SizeDist::Surge { body: 0.93, mu: 9.357, sigma: 1.328, tail_min: 133_000.0, tail_shape: 1.1 }
    }

    /// One draw, at least one byte.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let x = match *self {
            SizeDist::Fixed { bytes } => bytes as f64,
            SizeDist::Pareto { min, shape } => pareto(rng, min, shape),
            SizeDist::Lognormal { mu, sigma } => (mu + sigma * normal(rng)).exp(),
            SizeDist::Surge { body, mu, sigma, tail_min, tail_shape } => {
                if rng.uniform() < body {
                    (mu + sigma * normal(rng)).exp()
                } else {
                    pareto(rng, tail_min, tail_shape)
                }
            }
            SizeDist::Exponential { mean } => exponential(rng, mean),
        };
        // Heavy tails can exceed any sensible transfer; cap at 1 TB.
        x.round().clamp(1.0, 1e12) as u64
    }

    /// The distribution's mean, bytes (infinite for a Pareto shape ≤ 1).
    pub fn mean(&self) -> f64 {
        match *self {
            SizeDist::Fixed { bytes } => bytes as f64,
            SizeDist::Pareto { min, shape } => pareto_mean(min, shape),
            SizeDist::Lognormal { mu, sigma } => (mu + sigma * sigma / 2.0).exp(),
            SizeDist::Surge { body, mu, sigma, tail_min, tail_shape } => {
                body * (mu + sigma * sigma / 2.0).exp() + (1.0 - body) * pareto_mean(tail_min, tail_shape)
            }
            SizeDist::Exponential { mean } => mean,
        }
    }
}

fn pareto_mean(min: f64, shape: f64) -> f64 {
    if shape > 1.0 {
        shape * min / (shape - 1.0)
    } else {
        f64::INFINITY
    }
}

/// Uniform in (0, 1], so logarithms and negative powers stay finite.
#[inline]
fn open_uniform(rng: &mut Rng) -> f64 {
    1.0 - rng.uniform()
}

/// Pareto(k, α): k·U^(−1/α).
pub fn pareto(rng: &mut Rng, k: f64, alpha: f64) -> f64 {
    k * open_uniform(rng).powf(-1.0 / alpha)
}

/// Exponential with the given mean: −mean·ln U.
pub fn exponential(rng: &mut Rng, mean: f64) -> f64 {
    -mean * open_uniform(rng).ln()
}

/// Standard normal (Box–Muller, one of the pair).
pub fn normal(rng: &mut Rng) -> f64 {
    let u1 = open_uniform(rng);
    let u2 = rng.uniform();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Round-trip propagation delays of the flows a source starts, ns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum RttDist {
    Fixed {
        rtt_ns: u64,
    },
    /// RTT = `min_rtt_ns` + 2 × an exponential one-way delay with this mean
    /// (the background flows of Rhee and Xu, PFLDnet 2005: exponential with
    /// mean 66 ms one way; scenarios/rhee-xu-2005/a2-friendliness-testbed.toml).
    #[serde(rename = "exponential")]
    ExponentialOneWay {
        mean_one_way_ns: u64,
        #[serde(default, deserialize_with = "crate::config_form::null_default")]
        min_rtt_ns: u64,
    },
    Uniform {
        lo_ns: u64,
        hi_ns: u64,
    },
}

impl RttDist {
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match *self {
            RttDist::Fixed { rtt_ns } => rtt_ns,
            RttDist::ExponentialOneWay { mean_one_way_ns, min_rtt_ns } => {
                min_rtt_ns + 2 * exponential(rng, mean_one_way_ns as f64).round() as u64
            }
            RttDist::Uniform { lo_ns, hi_ns } => lo_ns + ((hi_ns - lo_ns) as f64 * rng.uniform()) as u64,
        }
    }
}

/// Which way a source's data flow across the dumbbell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Through the bottleneck (the same way as the main flows).
    #[default]
    Forward,
    /// Through the reverse link, so their data share the queue with the
    /// main flows' ACKs.
    Reverse,
    /// Each transfer (or datagram) picks a direction with probability 1/2.
    Both,
}

/// How a TCP source starts transfers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Arrivals {
    /// Poisson arrivals at `rate` transfers per second, independent of how
    /// earlier transfers fare (open loop).
    Poisson { rate: f64 },
    /// `sessions` independent sessions, each alternating a transfer and an
    /// exponential idle time with mean `off_mean_ns` (closed loop: the next
    /// transfer waits for the previous one to finish).
    Sessions { sessions: u32, off_mean_ns: u64 },
}

/// A source of short TCP transfers (web sessions, on-off sessions).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpSource {
    pub name: String,
    pub arrivals: Arrivals,
    pub sizes: SizeDist,
    pub rtt: RttDist,
    #[serde(default, deserialize_with = "crate::config_form::null_default")]
    pub direction: Direction,
    pub cc: String,
    #[serde(default, with = "crate::config_form::params")]
    #[schemars(with = "crate::config_form::ParamsSchema")]
    pub params: Vec<(String, cc::ParamValue)>,
    pub mss: u32,
    pub header_bytes: u32,
    pub init_cwnd: u32,
    #[serde(default, deserialize_with = "crate::config_form::null_default")]
    pub pacing: bool,
    /// Negotiate ECN (RFC 3168).
    #[serde(default, deserialize_with = "crate::config_form::null_default")]
    pub ecn: bool,
    #[serde(default, deserialize_with = "crate::config_form::null_default")]
    pub start_ns: u64,
    #[serde(default)]
    pub stop_ns: Option<u64>,
    /// The links a transfer's data and ACKs cross (a network's path), or
    /// `None` for the bottleneck and its reverse link as `direction` says.
    #[serde(default)]
    pub route: Option<crate::Route>,
    /// The sending host's access link (a NIC and its queue), one per
    /// direction the source sends in, shared by all of its transfers that
    /// way, in front of their route; `None`: they feed the route directly.
    #[serde(default)]
    pub access: Option<crate::host::AccessLink>,
    /// Its transfers send as Linux with TCP segmentation offload does (see
    /// [`crate::FlowConfig::tso`]); `None`: segment by segment.
    #[serde(default)]
    pub tso: Option<crate::host::TsoForm>,
}

/// How an unresponsive source spaces its packets.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum UdpPattern {
    /// Constant bit rate: packets evenly spaced.
    Cbr,
    /// Poisson packet arrivals with the same mean rate.
    Poisson,
}

/// An unresponsive (UDP-like) source.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UdpSource {
    pub name: String,
    pub pattern: UdpPattern,
    pub rate_bps: u64,
    pub packet_bytes: u32,
    #[serde(default, deserialize_with = "crate::config_form::null_default")]
    pub direction: Direction,
    #[serde(default, deserialize_with = "crate::config_form::null_default")]
    pub start_ns: u64,
    #[serde(default)]
    pub stop_ns: Option<u64>,
    /// The one link the datagrams cross (a network's link), or `None` for
    /// the bottleneck or the reverse link as `direction` says.
    #[serde(default)]
    pub link: Option<u32>,
}

/// A random loss process applied to data packets arriving at a link.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum LossModel {
    #[serde(skip)]
    None,
    /// Each packet is lost independently with probability p.
    Bernoulli { p: f64 },
    /// Two-state Markov chain (Gilbert–Elliott): per packet, Good→Bad with
    /// probability `p_gb`, Bad→Good with `p_bg`; a packet is lost with
    /// probability `loss_good` in Good and `loss_bad` in Bad.
    #[serde(rename = "gilbert")]
    GilbertElliott { p_gb: f64, p_bg: f64, loss_good: f64, loss_bad: f64 },
    /// Deterministic loss: every `period`-th data packet arriving at the
    /// link is lost (the first loss is packet number `period`). This is the
    /// loss process the analytic response functions assume (Mathis 1997,
    /// RFC 3649, RFC 9438 §5: one loss per sawtooth at a fixed rate p);
    /// `period` = round(1/p).
    Periodic { period: u64 },
}

impl LossModel {
    /// Long-run fraction of packets lost.
    pub fn stationary_loss(&self) -> f64 {
        match *self {
            LossModel::None => 0.0,
            LossModel::Bernoulli { p } => p,
            LossModel::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => {
                let pi_bad = p_gb / (p_gb + p_bg);
                pi_bad * loss_bad + (1.0 - pi_bad) * loss_good
            }
            LossModel::Periodic { period } => 1.0 / period.max(1) as f64,
        }
    }
}

/// The running state of a loss process.
#[derive(Clone, Debug)]
pub struct Loss {
    pub model: LossModel,
    bad: bool,
    /// Packets seen since the last periodic loss.
    count: u64,
    rng: Rng,
}

impl Loss {
    pub fn new(model: LossModel, rng: Rng) -> Loss {
        Loss { model, bad: false, count: 0, rng }
    }

    /// Whether the next packet is lost.
    #[inline]
    pub fn lose(&mut self) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Bernoulli { p } => p > 0.0 && self.rng.uniform() < p,
            LossModel::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => {
                let flip = if self.bad { p_bg } else { p_gb };
                if self.rng.uniform() < flip {
                    self.bad = !self.bad;
                }
                let p = if self.bad { loss_bad } else { loss_good };
                p > 0.0 && self.rng.uniform() < p
            }
            LossModel::Periodic { period } => {
                self.count += 1;
                if self.count >= period {
                    self.count = 0;
                    true
                } else {
                    false
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Worked examples of the samplers' formulas, by hand.
    #[test]
    fn recipes() {
        assert!((1000.0f64 * 0.5f64.powf(-1.0 / 1.2) - 1782.0).abs() < 1.0);
        assert!((pareto_mean(1000.0, 1.2) - 6000.0).abs() < 1e-6);
        let ln = SizeDist::Lognormal { mu: 9.357, sigma: 1.318 };
        assert!((ln.mean() - 27_600.0).abs() < 100.0, "{}", ln.mean());
    }

    #[test]
    fn sample_means() {
        let mut r = Rng::new(5, 0);
        let n = 200_000;
        let e: f64 = (0..n).map(|_| exponential(&mut r, 10.0)).sum::<f64>() / n as f64;
        assert!((e / 10.0 - 1.0).abs() < 0.01, "exponential mean {e}");
        let z: Vec<f64> = (0..n).map(|_| normal(&mut r)).collect();
        let m = z.iter().sum::<f64>() / n as f64;
        let v = z.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n as f64;
        assert!(m.abs() < 0.01 && (v - 1.0).abs() < 0.01, "normal mean {m} var {v}");
        // Pareto shape 2.5 (finite variance): mean 5/3 of the minimum.
        let p: f64 = (0..n).map(|_| pareto(&mut r, 3.0, 2.5)).sum::<f64>() / n as f64;
        assert!((p / 5.0 - 1.0).abs() < 0.02, "pareto mean {p}");
    }

    #[test]
    fn gilbert_elliott_matches_stationary_rate() {
        let model = LossModel::GilbertElliott { p_gb: 0.01, p_bg: 0.2, loss_good: 0.0, loss_bad: 0.5 };
        let mut l = Loss::new(model, Rng::new(9, 3));
        let n = 1_000_000;
        let lost = (0..n).filter(|_| l.lose()).count() as f64 / n as f64;
        let expect = model.stationary_loss(); // 0.01/0.21 · 0.5 = 0.0238
        assert!((lost / expect - 1.0).abs() < 0.05, "{lost} vs {expect}");
        // Bursty: a loss is far more likely right after a loss than on average.
        let mut l = Loss::new(model, Rng::new(9, 4));
        let seq: Vec<bool> = (0..n).map(|_| l.lose()).collect();
        let pairs = seq.windows(2).filter(|w| w[0] && w[1]).count() as f64;
        let after_loss = pairs / seq.iter().filter(|&&x| x).count() as f64;
        assert!(after_loss > 5.0 * expect, "P(loss | loss) = {after_loss}");
    }

    // Exactly one loss per `period` packets, evenly spaced, the first at
    // packet `period`; 1/p = 1e4 for p = 1e-4.
    #[test]
    fn periodic_spacing_and_rate() {
        let model = LossModel::Periodic { period: 10_000 };
        assert_eq!(model.stationary_loss(), 1e-4);
        let mut l = Loss::new(model, Rng::new(1, 1));
        let lost: Vec<usize> = (1..=1_000_000).filter(|_| l.lose()).collect();
        assert_eq!(lost.len(), 100);
        assert_eq!(lost[0], 10_000);
        assert!(lost.windows(2).all(|w| w[1] - w[0] == 10_000));
        // Period 1 loses everything.
        let mut l = Loss::new(LossModel::Periodic { period: 1 }, Rng::new(1, 1));
        assert!((0..10).all(|_| l.lose()));
    }

    #[test]
    fn bernoulli_rate() {
        let mut l = Loss::new(LossModel::Bernoulli { p: 0.01 }, Rng::new(1, 1));
        let n = 1_000_000;
        let lost = (0..n).filter(|_| l.lose()).count() as f64 / n as f64;
        assert!((lost / 0.01 - 1.0).abs() < 0.05, "{lost}");
    }
}
