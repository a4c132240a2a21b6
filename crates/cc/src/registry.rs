//! The one registry of algorithms: names, typed parameters with Linux's
//! defaults, sources, and the factory that builds an [`AnyCc`].
//!
//! The experiment-file validation and `ccarena list cc` both read this table,
//! so a parameter exists in exactly one place.

use crate::copa;
use crate::ledbat;
use crate::{bbr, bbr3, cubic, dctcp, reno, AnyCc};
use crate::{bic, highspeed, htcp, illinois, scalable, sqrt, xcp};
use crate::{compound, fast, prague, vegas, vivace, westwood};

// The parameter types live in `params` so that algorithms need not import
// this table; they stay reachable here as `registry::ParamSpec` and so on.
pub use crate::params::{ParamDefault, ParamError, ParamKind, ParamSpec, ParamValue, Params};

/// One registered algorithm.
#[derive(Clone, Copy, Debug)]
pub struct AlgoInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// The implementation followed and the papers/RFCs behind it.
    pub source: &'static str,
    /// Loss recovery the sender runs unless the flow says otherwise: "prr" or "newreno".
    pub default_recovery: &'static str,
    pub params: &'static [ParamSpec],
    /// A reference this implementation relies on is not confirmed by a second source.
    pub unconfirmed: bool,
    /// The algorithm assumes a paced sender (BBR); front ends default the
    /// flow's `pacing` to true for it.
    pub needs_pacing: bool,
    /// The algorithm needs ECN (DCTCP); its flows negotiate ECN whatever
    /// their `ecn` setting.
    pub needs_ecn: bool,
    /// The algorithm needs AccECN feedback (Prague; RFC 9768): its flows
    /// offer AccECN whatever their `accecn` setting and, against a receiver
    /// without it, run without ECN.
    pub needs_accecn: bool,
    /// The algorithm draws random numbers (BBR's ProbeBW start phase, BBR
    /// v3's bw-probe wait) from its `seed` parameter mixed with the run's
    /// per-flow seed, so repeats with different seeds differ even when
    /// nothing else in the scenario is random.
    pub randomized: bool,
}

const RENO_SOURCE: &str = "Linux net/ipv4/tcp_cong.c (tcp_reno_cong_avoid, tcp_reno_ssthresh); RFC 5681";

static ALGORITHMS: &[AlgoInfo] = &[
    AlgoInfo {
        name: "bbr",
        summary: "BBR v1: paces at the windowed-max delivery rate and caps inflight at 2 BDP, cycling gains to probe; run it paced",
        source: "Linux net/ipv4/tcp_bbr.c (v1); Cardwell et al., ACM Queue 14(5) 2016; draft-cardwell-iccrg-bbr-congestion-control-00; delivery rate: draft-cheng-iccrg-delivery-rate-estimation, Linux tcp_rate.c",
        default_recovery: "prr",
        params: bbr::PARAMS,
        unconfirmed: false,
        needs_pacing: true,
        needs_ecn: false,
        needs_accecn: false,
        randomized: true,
    },
    AlgoInfo {
        name: "bbr3",
        summary: "BBR v3: BBR with loss/ECN bounds (inflight_hi/lo, 2 % loss threshold, beta 0.7) and the DOWN/CRUISE/REFILL/UP probe cycle; run it paced",
        source: "github.com/google/bbr branch v3, net/ipv4/tcp_bbr.c (BBR_VERSION 3); draft-ietf-ccwg-bbr; what v3 keeps from v1 as in Linux net/ipv4/tcp_bbr.c",
        default_recovery: "prr",
        params: bbr3::PARAMS,
        unconfirmed: false,
        needs_pacing: true,
        needs_ecn: false,
        needs_accecn: false,
        randomized: true,
    },
    AlgoInfo {
        name: "bic",
        summary: "BIC: binary search toward the last maximum window (at most Smax = 16 packets per RTT), then max probing",
        source: "Linux net/ipv4/tcp_bic.c; Xu, Harfoush, Rhee, IEEE INFOCOM 2004",
        default_recovery: "prr",
        params: bic::PARAMS,
        unconfirmed: false,
        needs_pacing: false,
        needs_ecn: false,
        needs_accecn: false,
        randomized: false,
    },
    AlgoInfo {
        name: "compound",
        summary: "Compound TCP: Reno's window plus a delay-based window that grows like HighSpeed TCP while fewer than gamma packets are queued",
        source: "Tan, Song, Zhang, Sridharan, IEEE INFOCOM 2006; Linux/ns-2 port tcp_compound.c (Castellani, Hemminger, Andrew) in the TCP evaluation suite",
        default_recovery: "prr",
        params: compound::PARAMS,
        unconfirmed: false,
        needs_pacing: false,
        needs_ecn: false,
        needs_accecn: false,
        randomized: false,
    },
    AlgoInfo {
        name: "copa",
        summary: "Copa: per ACK moves cwnd by v/(delta*cwnd) toward the target rate 1/(delta*d_q), d_q = RTT_standing - RTT_min, holding about 1/delta = 2 packets queued per flow; velocity v doubles after 3 RTTs in one direction; competitive mode (AIMD on 1/delta) while a buffer-filler keeps the queue from draining; paces at 2*cwnd/RTT_standing: run it paced",
        source: "Arun & Balakrishnan, NSDI 2018 (arXiv/web version); authors' code venkatarun95/genericCC markoviancc.cc, rtt-window.cc (mode check, delta update, pacing); facebook/mvfst Copa.cpp (velocity, timeout rule); not in Linux; paper's loss rule and mode-check period unconfirmed",
        default_recovery: "prr",
        params: copa::PARAMS,
        unconfirmed: true,
        needs_pacing: true,
        needs_ecn: false,
        needs_accecn: false,
        randomized: false,
    },
    AlgoInfo {
        name: "cubic",
        summary: "CUBIC: window grows as a cubic function of time since the last loss (Linux default)",
        source: "Linux net/ipv4/tcp_cubic.c v2.3; RFC 9438; Ha, Rhee, Xu, ACM SIGOPS OSR 2008; HyStart: Ha & Rhee, Computer Networks 2011",
        default_recovery: "prr",
        params: cubic::PARAMS,
        unconfirmed: false,
        needs_pacing: false,
        needs_ecn: false,
        needs_accecn: false,
        randomized: false,
    },
    AlgoInfo {
        name: "dctcp",
        summary: "DCTCP: cuts cwnd by alpha/2, alpha the EWMA (g = 1/16) of the fraction of CE-marked packets per window; needs ECN and a marking queue",
        source: "Linux net/ipv4/tcp_dctcp.c; RFC 8257; Alizadeh et al., ACM SIGCOMM 2010",
        default_recovery: "prr",
        params: dctcp::PARAMS,
        unconfirmed: false,
        needs_pacing: false,
        needs_ecn: true,
        needs_accecn: false,
        randomized: false,
    },
    AlgoInfo {
        name: "fast",
        summary: "FAST TCP: per-RTT window update toward alpha packets queued, w <- min(2w, (1-gamma)w + gamma(baseRTT/RTT w + alpha))",
        source: "Jin, Wei, Low, IEEE INFOCOM 2004 (Caltech CSTR:2003.010); not in Linux; alpha/gamma defaults, update period and loss response unconfirmed",
        default_recovery: "prr",
        params: fast::PARAMS,
        unconfirmed: true,
        needs_pacing: false,
        needs_ecn: false,
        needs_accecn: false,
        randomized: false,
    },
    AlgoInfo {
        name: "highspeed",
        summary: "HighSpeed TCP: AIMD with a(w), b(w) from RFC 3649's table, Reno up to 38 packets, response 0.12/p^0.835",
        source: "RFC 3649 (Floyd 2003); Linux net/ipv4/tcp_highspeed.c (table from RFC 3649 appendix B); RFC 3742 limited slow start",
        default_recovery: "prr",
        params: highspeed::PARAMS,
        unconfirmed: false,
        needs_pacing: false,
        needs_ecn: false,
        needs_accecn: false,
        randomized: false,
    },
    AlgoInfo {
        name: "htcp",
        summary: "H-TCP: increase grows with the time since the last congestion event, backoff RTTmin/RTTmax in [0.5, 0.8]",
        source: "Linux net/ipv4/tcp_htcp.c; Leith & Shorten, PFLDnet 2004",
        default_recovery: "prr",
        params: htcp::PARAMS,
        unconfirmed: false,
        needs_pacing: false,
        needs_ecn: false,
        needs_accecn: false,
        randomized: false,
    },
    AlgoInfo {
        name: "illinois",
        summary: "TCP Illinois: loss-triggered AIMD whose increase (10 to 0.3 per RTT) and decrease (1/8 to 1/2) follow the queueing delay",
        source: "Linux net/ipv4/tcp_illinois.c; Liu, Basar, Srikant, Performance Evaluation 65(6-7) 2008",
        default_recovery: "prr",
        params: illinois::PARAMS,
        unconfirmed: false,
        needs_pacing: false,
        needs_ecn: false,
        needs_accecn: false,
        randomized: false,
    },
    AlgoInfo {
        name: "ledbat",
        summary: "LEDBAT scavenger: keeps its measured queueing delay at TARGET (100 ms) with cwnd += GAIN*off_target per RTT and yields above it; variant = \"ledbat++\" adds TARGET 60 ms, slower-than-Reno gain, multiplicative decrease and periodic slowdowns; delay from RTT samples",
        source: "RFC 6817 (sections 2.4, 2.5); draft-irtf-iccrg-ledbat-plus-plus-01 (sections 4.1-4.5), checked against Apple XNU bsd/netinet/tcp_ledbat.c; not in Linux; one-way delay replaced by RTT (the simulator gives no one-way sample); RFC slow-start wording unconfirmed",
        default_recovery: "prr",
        params: ledbat::PARAMS,
        unconfirmed: true,
        needs_pacing: false,
        needs_ecn: false,
        needs_accecn: false,
        randomized: false,
    },
    AlgoInfo {
        name: "newreno",
        summary: "NewReno: Reno's window rules with RFC 6582 fast recovery (inflate per dupACK, deflate on partial ACK)",
        source: "RFC 6582; RFC 5681",
        default_recovery: "newreno",
        params: &[],
        unconfirmed: false,
        needs_pacing: false,
        needs_ecn: false,
        needs_accecn: false,
        randomized: false,
    },
    AlgoInfo {
        name: "prague",
        summary: "TCP Prague (L4S): DCTCP-like cut by alpha/2 per round from AccECN's exact CE count (alpha EWMA g = 1/16), sends ECT(1), fractional window, additive increase scaled to a 25 ms virtual RTT below 25 ms, Reno halving on loss, paced at cwnd/srtt; Reno without AccECN; run it paced",
        source: "L4STeam Linux net/ipv4/tcp_prague.c v0.7 (fractional-window mode; rate mode below 4 packets not modelled); RFC 9331 section 4 (Prague L4S requirements); RFC 8257 (DCTCP alpha); RFC 9768 (AccECN feedback)",
        default_recovery: "prr",
        params: prague::PARAMS,
        unconfirmed: false,
        needs_pacing: true,
        needs_ecn: true,
        needs_accecn: true,
        randomized: false,
    },
    AlgoInfo {
        name: "reno",
        summary: "Reno as Linux runs it: slow start, +1 packet per RTT, halve on loss, SACK + PRR recovery",
        source: RENO_SOURCE,
        default_recovery: "prr",
        params: &[],
        unconfirmed: false,
        needs_pacing: false,
        needs_ecn: false,
        needs_accecn: false,
        randomized: false,
    },
    AlgoInfo {
        name: "scalable",
        summary: "Scalable TCP: MIMD, +0.01 per packet acked (Reno below 100 packets), -1/8 on loss; response 0.08/p",
        source: "Linux net/ipv4/tcp_scalable.c (2020 stretch-ACK fix); Kelly, ACM CCR 33(2) 2003",
        default_recovery: "prr",
        params: scalable::PARAMS,
        unconfirmed: false,
        needs_pacing: false,
        needs_ecn: false,
        needs_accecn: false,
        randomized: false,
    },
    AlgoInfo {
        name: "sqrt",
        summary: "SQRT: binomial congestion control with k = l = 1/2, +alpha/sqrt(w) per RTT, -beta*sqrt(w) on loss; not in Linux",
        source: "Bansal & Balakrishnan, IEEE INFOCOM 2001; alpha = 1, beta = 1/2 and the paper's details not re-verified (UNCONFIRMED)",
        default_recovery: "prr",
        params: sqrt::PARAMS,
        unconfirmed: true,
        needs_pacing: false,
        needs_ecn: false,
        needs_accecn: false,
        randomized: false,
    },
    AlgoInfo {
        name: "vegas",
        summary: "Vegas as Linux runs it: once per RTT keep between alpha and beta packets queued (cwnd +-1), leave slow start past gamma",
        source: "Linux net/ipv4/tcp_vegas.c; Brakmo & Peterson, IEEE JSAC 13(8) 1995",
        default_recovery: "prr",
        params: vegas::PARAMS,
        unconfirmed: false,
        needs_pacing: false,
        needs_ecn: false,
        needs_accecn: false,
        randomized: false,
    },
    AlgoInfo {
        name: "vivace",
        summary: "PCC Vivace: rate-based online learning; per monitor interval (1.5 srtt) u = x^0.9 - 900*x*dRTT/dT - 11.35*x*loss, start-up doubling, probing pairs at r(1 +- 0.05), gradient steps with a confidence amplifier and a 5 % change bound; cwnd = 2*rate*srtt is only a cap: run it paced",
        source: "Dong et al., USENIX NSDI 2018 (paper not re-read); PCCproject/PCC-Uspace QUIC-port rate control (pcc_vivace_sender.cpp, pcc_utility_manager.cpp, pcc_sender.cpp) for the utility, constants and state machine; PCCproject/PCC-Kernel tcp_pcc.c for the tcp_congestion_ops mapping; not in Linux; the paper's own theta0 and change-bound values unconfirmed (QUIC port's used)",
        default_recovery: "prr",
        params: vivace::PARAMS,
        unconfirmed: true,
        needs_pacing: true,
        needs_ecn: false,
        needs_accecn: false,
        randomized: true,
    },
    AlgoInfo {
        name: "westwood",
        summary: "Westwood+: Reno growth; after a loss cwnd = ssthresh = bandwidth estimate x RTTmin",
        source: "Linux net/ipv4/tcp_westwood.c; Mascolo et al., ACM MobiCom 2001; Grieco & Mascolo, ACM CCR 34(2) 2004",
        default_recovery: "prr",
        params: westwood::PARAMS,
        unconfirmed: false,
        needs_pacing: false,
        needs_ecn: false,
        needs_accecn: false,
        randomized: false,
    },
    AlgoInfo {
        name: "xcp",
        summary: "XCP sender: cwnd += router feedback per ACK (floor one packet), Reno on loss; needs an XCP router (qdisc xcp), simulation only",
        source: "Katabi, Handley, Rohrs, ACM SIGCOMM 2002 (section 3 and Appendix A)",
        default_recovery: "prr",
        params: &[],
        unconfirmed: false,
        needs_pacing: false,
        needs_ecn: false,
        needs_accecn: false,
        randomized: false,
    },
];

/// All registered algorithms, sorted by name.
pub fn algorithms() -> &'static [AlgoInfo] {
    ALGORITHMS
}

/// Builds an external algorithm from its resolved parameters; an error is a
/// one-line message (the algorithm's constructor failed).
pub type ExternalFactory = dyn Fn(&Params) -> Result<Box<dyn crate::ExternalCc>, String> + Send + Sync;

type ExternalEntry = (&'static AlgoInfo, std::sync::Arc<ExternalFactory>);

/// Algorithms registered at run time, in registration order.
static EXTERNAL: std::sync::RwLock<Vec<ExternalEntry>> = std::sync::RwLock::new(Vec::new());

/// Registers (or replaces) an algorithm built at run time: its table entry
/// (parameters are checked and defaulted like a built-in's) and its factory.
/// A built-in's name is refused. The entry is leaked: registrations are few.
pub fn register_external(info: AlgoInfo, factory: std::sync::Arc<ExternalFactory>) -> Result<(), String> {
    if ALGORITHMS.iter().any(|a| a.name == info.name) {
        return Err(format!("\"{}\" is a built-in algorithm; choose another name", info.name));
    }
    let info: &'static AlgoInfo = Box::leak(Box::new(info));
    let mut ext = EXTERNAL.write().unwrap_or_else(|e| e.into_inner());
    ext.retain(|(i, _)| i.name != info.name);
    ext.push((info, factory));
    Ok(())
}

/// Forgets an algorithm registered at run time; true if it was registered.
pub fn unregister_external(name: &str) -> bool {
    let mut ext = EXTERNAL.write().unwrap_or_else(|e| e.into_inner());
    let n = ext.len();
    ext.retain(|(i, _)| i.name != name);
    ext.len() != n
}

/// The built-in algorithms followed by those registered at run time.
pub fn all_algorithms() -> Vec<&'static AlgoInfo> {
    let ext = EXTERNAL.read().unwrap_or_else(|e| e.into_inner());
    ALGORITHMS.iter().chain(ext.iter().map(|(i, _)| *i)).collect()
}

fn external(name: &str) -> Option<ExternalEntry> {
    let ext = EXTERNAL.read().unwrap_or_else(|e| e.into_inner());
    ext.iter().find(|(i, _)| i.name == name).cloned()
}

/// Looks up an algorithm by name.
pub fn info(name: &str) -> Result<&'static AlgoInfo, ParamError> {
    if let Some(a) = ALGORITHMS.iter().find(|a| a.name == name) {
        return Ok(a);
    }
    if let Some((a, _)) = external(name) {
        return Ok(a);
    }
    Err({
        let known: Vec<&str> = all_algorithms().iter().map(|a| a.name).collect();
        ParamError { param: None, message: format!("unknown algorithm \"{name}\" (known: {})", known.join(", ")) }
    })
}

fn check(spec: &ParamSpec, v: &ParamValue) -> Result<ParamValue, String> {
    match (spec.kind, v) {
        (ParamKind::Bool, ParamValue::Bool(b)) => Ok(ParamValue::Bool(*b)),
        (ParamKind::Bool, _) => Err(format!("expected true or false, got {v}")),
        (ParamKind::Int { min, max }, ParamValue::Int(i)) => {
            if *i < min || *i > max {
                Err(format!("expected an integer in [{min}, {max}], got {i}"))
            } else {
                Ok(ParamValue::Int(*i))
            }
        }
        (ParamKind::Int { min, max }, _) => Err(format!("expected an integer in [{min}, {max}], got {v}")),
        (ParamKind::Float { min, max }, ParamValue::Float(_) | ParamValue::Int(_)) => {
            let x = match v {
                ParamValue::Float(x) => *x,
                ParamValue::Int(i) => *i as f64,
                _ => unreachable!(),
            };
            if !x.is_finite() || x < min || x > max {
                Err(format!("expected a number in [{min}, {max}], got {v}"))
            } else {
                Ok(ParamValue::Float(x))
            }
        }
        (ParamKind::Float { min, max }, _) => Err(format!("expected a number in [{min}, {max}], got {v}")),
        (ParamKind::Choice(choices), ParamValue::Str(s)) if choices.contains(&s.as_str()) => {
            Ok(ParamValue::Str(s.clone()))
        }
        (ParamKind::Choice(choices), _) => Err(format!("expected one of {}, got {v}", choices.join(", "))),
    }
}

/// Checks the given parameters against the algorithm's table and fills in defaults.
pub fn resolve_params(name: &str, given: &[(String, ParamValue)]) -> Result<Params, ParamError> {
    let info = info(name)?;
    for (k, _) in given {
        if !info.params.iter().any(|p| p.name == k) {
            let known: Vec<&str> = info.params.iter().map(|p| p.name).collect();
            let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
            return Err(ParamError {
                param: Some(k.clone()),
                message: format!("unknown parameter \"{k}\" for {name} (known: {known})"),
            });
        }
    }
    let mut out = Vec::with_capacity(info.params.len());
    for spec in info.params {
        let v = match given.iter().find(|(k, _)| k == spec.name) {
            Some((_, v)) => {
                check(spec, v).map_err(|m| ParamError { param: Some(spec.name.to_string()), message: m })?
            }
            None => spec.default.value(),
        };
        out.push((spec.name.to_string(), v));
    }
    Ok(Params(out))
}

/// Builds an algorithm instance from its name and (unresolved) parameters.
pub fn build(name: &str, given: &[(String, ParamValue)]) -> Result<AnyCc, ParamError> {
    let p = resolve_params(name, given)?;
    Ok(match name {
        "reno" => AnyCc::Reno(reno::Reno),
        "newreno" => AnyCc::NewReno(reno::NewReno),
        "bbr" => AnyCc::Bbr(bbr::Bbr::new(bbr::BbrConfig::from_params(&p))),
        "bbr3" => AnyCc::Bbr3(bbr3::Bbr3::new(bbr3::Bbr3Config::from_params(&p))),
        "cubic" => AnyCc::Cubic(cubic::Cubic::new(cubic::CubicConfig::from_params(&p))),
        "dctcp" => AnyCc::Dctcp(dctcp::Dctcp::new(dctcp::DctcpConfig::from_params(&p))),
        "compound" => AnyCc::Compound(compound::Compound::new(compound::CompoundConfig::from_params(&p))),
        "copa" => AnyCc::Copa(copa::Copa::new(copa::CopaConfig::from_params(&p))),
        "fast" => AnyCc::Fast(fast::Fast::new(fast::FastConfig::from_params(&p))),
        "bic" => AnyCc::Bic(bic::Bic::new(bic::BicConfig::from_params(&p))),
        "highspeed" => AnyCc::HighSpeed(highspeed::HighSpeed::new(highspeed::HighSpeedConfig::from_params(&p))),
        "htcp" => AnyCc::Htcp(htcp::Htcp::new(htcp::HtcpConfig::from_params(&p))),
        "illinois" => AnyCc::Illinois(illinois::Illinois::new(illinois::IllinoisConfig::from_params(&p))),
        "ledbat" => AnyCc::Ledbat(ledbat::Ledbat::new(ledbat::LedbatConfig::from_params(&p))),
        "prague" => AnyCc::Prague(prague::Prague::new(prague::PragueConfig::from_params(&p))),
        "scalable" => AnyCc::Scalable(scalable::Scalable::new(scalable::ScalableConfig::from_params(&p))),
        "sqrt" => AnyCc::Sqrt(sqrt::Sqrt::new(sqrt::SqrtConfig::from_params(&p))),
        "vegas" => AnyCc::Vegas(vegas::Vegas::new(vegas::VegasConfig::from_params(&p))),
        "vivace" => AnyCc::Vivace(vivace::Vivace::new(vivace::VivaceConfig::from_params(&p))),
        "westwood" => AnyCc::Westwood(westwood::Westwood::new(westwood::WestwoodConfig::from_params(&p))),
        "xcp" => AnyCc::Xcp(xcp::Xcp::new()),
        _ => match external(name) {
            Some((_, factory)) => AnyCc::External(crate::External::new(
                factory(&p).map_err(|message| ParamError { param: None, message })?,
            )),
            None => unreachable!("registered algorithm {name} has no constructor"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests that register an external algorithm or read the whole list run one at a time.
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn unknown_algorithm_lists_known() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let e = build("cubik", &[]).unwrap_err();
        assert_eq!(
            e.message,
            "unknown algorithm \"cubik\" (known: bbr, bbr3, bic, compound, copa, cubic, dctcp, fast, highspeed, htcp, illinois, \
             ledbat, newreno, prague, reno, scalable, sqrt, vegas, vivace, westwood, xcp)"
        );
    }

    #[test]
    fn names_are_sorted_and_unique() {
        let names: Vec<&str> = algorithms().iter().map(|a| a.name).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(names, sorted);
    }

    #[test]
    fn table_flags_match_the_algorithms() {
        for a in algorithms() {
            let cc = build(a.name, &[]).unwrap();
            use crate::CongestionControl;
            assert_eq!(a.needs_ecn, cc.needs_ecn(), "{}: needs_ecn", a.name);
            assert_eq!(a.needs_accecn, cc.needs_accecn(), "{}: needs_accecn", a.name);
        }
    }

    #[test]
    fn randomized_algorithms_are_those_with_a_seed() {
        for a in algorithms() {
            let seeded = a.params.iter().any(|p| p.name == "seed");
            assert_eq!(a.randomized, seeded, "{}: randomized must match a `seed` parameter", a.name);
        }
    }

    #[test]
    fn every_algorithm_builds_with_defaults() {
        for a in algorithms() {
            build(a.name, &[]).unwrap();
            assert!(a.default_recovery == "prr" || a.default_recovery == "newreno");
        }
    }

    #[derive(Clone)]
    struct Fixed(u32);

    /// How many `Fixed` were dropped: `External` drops its box by hand.
    static FIXED_DROPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    impl Drop for Fixed {
        fn drop(&mut self) {
            FIXED_DROPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    impl crate::CongestionControl for Fixed {
        fn ssthresh(&mut self, _tp: &crate::Sock) -> u32 {
            self.0
        }
    }

    impl crate::ExternalCc for Fixed {
        fn name(&self) -> &'static str {
            "test_fixed"
        }
        fn clone_box(&self) -> Box<dyn crate::ExternalCc> {
            Box::new(self.clone())
        }
    }

    static FIXED_PARAMS: &[ParamSpec] = &[ParamSpec {
        name: "ssthresh",
        kind: ParamKind::Int { min: 2, max: 100 },
        default: ParamDefault::Int(7),
        doc: "the ssthresh it always answers",
    }];

    #[test]
    fn external_algorithms_are_registered_checked_built_and_forgotten() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let info = |name: &'static str| AlgoInfo {
            name,
            summary: "test",
            source: "test",
            default_recovery: "prr",
            params: FIXED_PARAMS,
            unconfirmed: false,
            needs_pacing: false,
            needs_ecn: false,
            needs_accecn: false,
            randomized: false,
        };
        let factory: std::sync::Arc<ExternalFactory> = std::sync::Arc::new(|p: &Params| {
            Ok(Box::new(Fixed(p.int("ssthresh") as u32)) as Box<dyn crate::ExternalCc>)
        });
        assert!(register_external(info("cubic"), factory.clone()).unwrap_err().contains("built-in"));
        register_external(info("test_fixed"), factory).unwrap();
        assert!(all_algorithms().iter().any(|a| a.name == "test_fixed"));
        assert!(!algorithms().iter().any(|a| a.name == "test_fixed"));
        let mut cc = build("test_fixed", &[("ssthresh".into(), ParamValue::Int(9))]).unwrap();
        assert_eq!(cc.name(), "test_fixed");
        let tp = crate::Sock::new(1448, 10);
        assert_eq!(crate::CongestionControl::ssthresh(&mut cc, &tp), 9);
        let mut copy = cc.clone();
        assert_eq!(crate::CongestionControl::ssthresh(&mut copy, &tp), 9);
        let drops = FIXED_DROPS.load(std::sync::atomic::Ordering::Relaxed);
        drop(copy);
        assert_eq!(FIXED_DROPS.load(std::sync::atomic::Ordering::Relaxed), drops + 1);
        assert_eq!(format!("{cc:?}"), "External(External(test_fixed))");
        // Defaults (Linux's) for the hooks it leaves out: Reno's growth.
        let mut tp = crate::Sock::new(1448, 10);
        tp.max_packets_out = 10;
        crate::CongestionControl::cong_avoid(&mut cc, &mut tp, 3);
        assert_eq!(tp.snd_cwnd, 13);
        let e = build("test_fixed", &[("ssthresh".into(), ParamValue::Int(1))]).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("ssthresh"));
        assert!(unregister_external("test_fixed"));
        assert!(build("test_fixed", &[]).is_err());
    }

    #[test]
    fn parameters_are_type_and_range_checked() {
        let e = build("cubic", &[("beta".into(), ParamValue::Float(1.5))]).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("beta"));
        let e = build("cubic", &[("hystart".into(), ParamValue::Int(1))]).unwrap_err();
        assert!(e.message.contains("true or false"), "{}", e.message);
        let e = build("reno", &[("beta".into(), ParamValue::Float(0.5))]).unwrap_err();
        assert!(e.message.contains("unknown parameter"), "{}", e.message);
    }
}
