//! What the engine can represent: [`Config::check`] refuses, with the field
//! named, any value outside it, so that [`crate::Simulator::new`] returns an
//! error instead of overflowing or panicking on a configuration built by hand.
//!
//! Time runs in picoseconds in 64 bits (2^64 ps is 213 days), so every time
//! is at most [`MAX_TIME_NS`] and a few of them summed still fit; rates are
//! at most [`MAX_RATE_BPS`]. The Python front end applies the same limits
//! (python/ccarena/spec/limits.py) with the experiment file's field paths.

use crate::qdisc::QdiscConfig;
use crate::traffic::{Arrivals, LossModel, RttDist, SizeDist};
use crate::{App, Config, LinkConfig, QueueLimit, Route};

/// Longest time anywhere in a configuration: 10^6 s.
pub const MAX_TIME_NS: u64 = 1_000_000_000_000_000;
/// Fastest link or application rate: 10 Tbit/s.
pub const MAX_RATE_BPS: u64 = 10_000_000_000_000;
/// Largest queue: 10^9 packets, or 10^9 full-size packets' bytes (stated
/// beside the queue's capacity type, which the disciplines read too).
pub use crate::qdisc::queue::{MAX_BUFFER_BYTES, MAX_BUFFER_PKTS};
/// Largest packet on the wire (an IPv4 datagram).
pub const MAX_PACKET_BYTES: u32 = 65_535;
/// Largest initial window, packets.
pub const MAX_INIT_CWND: u32 = 1_000_000;
/// Largest fixed-size transfer: 2^53 bytes (exact as a float).
pub const MAX_TRANSFER_BYTES: u64 = 1 << 53;

type R = Result<(), String>;

fn time(v: u64, field: &str, positive: bool) -> R {
    if v > MAX_TIME_NS || (positive && v == 0) {
        let lo = if positive { "1 ns" } else { "0" };
        return Err(format!("{field}: {v} ns is outside {lo}..{MAX_TIME_NS} ns"));
    }
    Ok(())
}

fn rate(v: u64, field: &str) -> R {
    if v == 0 || v > MAX_RATE_BPS {
        return Err(format!("{field}: {v} bit/s is outside 1..{MAX_RATE_BPS} bit/s"));
    }
    Ok(())
}

fn prob(v: f64, field: &str) -> R {
    if !(0.0..=1.0).contains(&v) {
        return Err(format!("{field}: {v} is not a probability in [0, 1]"));
    }
    Ok(())
}

fn finite(v: f64, field: &str, lo: f64, hi: f64) -> R {
    if !(v.is_finite() && lo <= v && v <= hi) {
        return Err(format!("{field}: {v} is outside [{lo}, {hi}]"));
    }
    Ok(())
}

fn int<T: Into<u64> + Copy + std::fmt::Display>(v: T, field: &str, lo: u64, hi: u64) -> R {
    let x: u64 = v.into();
    if x < lo || x > hi {
        return Err(format!("{field}: {v} is outside {lo}..{hi}"));
    }
    Ok(())
}

fn loss(m: &LossModel, field: &str) -> R {
    match *m {
        LossModel::None => Ok(()),
        LossModel::Bernoulli { p } => prob(p, &format!("{field}.p")),
        LossModel::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => {
            prob(p_gb, &format!("{field}.p_gb"))?;
            prob(p_bg, &format!("{field}.p_bg"))?;
            prob(loss_good, &format!("{field}.loss_good"))?;
            prob(loss_bad, &format!("{field}.loss_bad"))
        }
        LossModel::Periodic { period } => int(period, &format!("{field}.period"), 1, u64::MAX),
    }
}

/// A discipline's parameters against the catalogue's ranges, the ones an
/// experiment file is checked against ([`QdiscConfig::from_params`]).
fn qdisc(q: &QdiscConfig, field: &str) -> R {
    QdiscConfig::from_params(q.name(), &q.params()).map(|_| ()).map_err(|e| format!("{field}.{e}"))
}

fn link(l: &LinkConfig, field: &str) -> R {
    rate(l.rate_bps, &format!("{field}.rate"))?;
    time(l.delay_ns, &format!("{field}.delay"), false)?;
    match l.limit {
        QueueLimit::Packets(n) => int(n, &format!("{field}.buffer"), 1, MAX_BUFFER_PKTS)?,
        QueueLimit::Bytes(n) => int(n, &format!("{field}.buffer"), 1, MAX_BUFFER_BYTES)?,
    }
    prob(l.loss, &format!("{field}.loss"))?;
    if let Some(m) = &l.loss_model {
        loss(m, &format!("{field}.loss"))?;
    }
    qdisc(&l.qdisc, &format!("{field}.qdisc"))?;
    l.model.check().map_err(|e| format!("{field}.{e}"))
}

/// MSS and header: a packet is at most 65535 bytes and carries at least one.
fn segment(mss: u32, header: u32, field: &str) -> R {
    int(header, &format!("{field}.header"), 0, MAX_PACKET_BYTES as u64 - 1)?;
    int(mss, &format!("{field}.mss"), 1, (MAX_PACKET_BYTES - header) as u64)
}

fn start_stop(start: u64, stop: Option<u64>, field: &str) -> R {
    time(start, &format!("{field}.start"), false)?;
    if let Some(s) = stop {
        time(s, &format!("{field}.stop"), false)?;
    }
    Ok(())
}

/// Longest route: a packet counts the links it crossed in a byte.
pub const MAX_ROUTE_LINKS: usize = 64;

/// A route of 1 to [`MAX_ROUTE_LINKS`] existing links each way, measured on
/// a link of its data route.
fn route(r: &Route, n_links: usize, p: &str) -> R {
    for (what, links) in [("path", &r.data), ("ack_path", &r.ack)] {
        if links.is_empty() || links.len() > MAX_ROUTE_LINKS {
            return Err(format!("{p}.{what}: expected 1 to {MAX_ROUTE_LINKS} links, got {}", links.len()));
        }
        if let Some(&l) = links.iter().find(|&&l| l as usize >= n_links) {
            return Err(format!("{p}.{what}: no link {l} (there are {n_links})"));
        }
    }
    if !r.data.contains(&r.measure) {
        return Err(format!("{p}.measure: link {} is not on its path", r.measure));
    }
    Ok(())
}

impl Config {
    /// The network's links as any link, and its routes: one per flow, each of
    /// 1 to [`MAX_ROUTE_LINKS`] existing links, measured on a link of its data route.
    fn network(&self) -> R {
        let net = &self.network;
        let n_links = 2 + net.links.len();
        for (k, l) in net.links.iter().enumerate() {
            link(l, &format!("links[{}]", k + 2))?;
        }
        if !net.routes.is_empty() && net.routes.len() != self.flows.len() {
            return Err(format!(
                "network.routes: {} routes for {} flows (one per flow)",
                net.routes.len(),
                self.flows.len()
            ));
        }
        for (i, r) in net.routes.iter().enumerate() {
            route(r, n_links, &format!("flows[{i}]"))?;
        }
        for (i, s) in self.tcp_sources.iter().enumerate() {
            if let Some(r) = &s.route {
                route(r, n_links, &format!("tcp_sources[{i}]"))?;
            }
        }
        for (i, s) in self.udp_sources.iter().enumerate() {
            if let Some(l) = s.link {
                if l as usize >= n_links {
                    return Err(format!("udp_sources[{i}].path: no link {l} (there are {n_links})"));
                }
            }
        }
        Ok(())
    }

    /// Checks that every value is one the engine represents.
    pub fn check(&self) -> Result<(), String> {
        time(self.duration_ns, "duration", true)?;
        time(self.interval_ns, "interval", true)?;
        link(&self.bottleneck, "bottleneck")?;
        link(&self.reverse, "reverse")?;
        self.network()?;
        for (i, f) in self.flows.iter().enumerate() {
            let p = format!("flows[{i}]");
            segment(f.mss, f.header_bytes, &p)?;
            int(f.init_cwnd, &format!("{p}.init_cwnd"), 1, MAX_INIT_CWND as u64)?;
            if let Some(w) = f.rwnd_bytes {
                int(w, &format!("{p}.rwnd"), f.mss as u64, MAX_BUFFER_BYTES)?;
            }
            time(f.rtt_ns, &format!("{p}.rtt"), true)?;
            start_stop(f.start_ns, f.stop_ns, &p)?;
            match f.app {
                App::Bulk => {}
                App::Fixed { bytes } => int(bytes, &format!("{p}.size"), 0, MAX_TRANSFER_BYTES)?,
                App::Rate { bps } => rate(bps, &format!("{p}.rate"))?,
            }
        }
        for (i, s) in self.tcp_sources.iter().enumerate() {
            let p = format!("tcp_sources[{i}]");
            segment(s.mss, s.header_bytes, &p)?;
            int(s.init_cwnd, &format!("{p}.init_cwnd"), 1, MAX_INIT_CWND as u64)?;
            start_stop(s.start_ns, s.stop_ns, &p)?;
            match s.arrivals {
                Arrivals::Poisson { rate } => finite(rate, &format!("{p}.rate"), f64::MIN_POSITIVE, 1e9)?,
                Arrivals::Sessions { sessions, off_mean_ns } => {
                    int(sessions, &format!("{p}.sessions"), 1, 10_000_000)?;
                    time(off_mean_ns, &format!("{p}.off"), false)?;
                }
            }
            let sz = format!("{p}.sizes");
            let bytes = MAX_TRANSFER_BYTES as f64;
            match s.sizes {
                SizeDist::Fixed { bytes: b } => int(b, &sz, 1, MAX_TRANSFER_BYTES)?,
                SizeDist::Pareto { min, shape } => {
                    finite(min, &format!("{sz}.min"), 0.0, bytes)?;
                    finite(shape, &format!("{sz}.shape"), f64::MIN_POSITIVE, 100.0)?;
                }
                SizeDist::Lognormal { mu, sigma } => {
                    finite(mu, &format!("{sz}.mu"), -1e3, 1e3)?;
                    finite(sigma, &format!("{sz}.sigma"), 0.0, 100.0)?;
                }
                SizeDist::Surge { body, mu, sigma, tail_min, tail_shape } => {
                    prob(body, &format!("{sz}.body"))?;
                    finite(mu, &format!("{sz}.mu"), -1e3, 1e3)?;
                    finite(sigma, &format!("{sz}.sigma"), 0.0, 100.0)?;
                    finite(tail_min, &format!("{sz}.tail_min"), 0.0, bytes)?;
                    finite(tail_shape, &format!("{sz}.tail_shape"), f64::MIN_POSITIVE, 100.0)?;
                }
                SizeDist::Exponential { mean } => finite(mean, &format!("{sz}.mean"), 0.0, bytes)?,
            }
            let r = format!("{p}.rtt");
            match s.rtt {
                RttDist::Fixed { rtt_ns } => time(rtt_ns, &r, true)?,
                RttDist::ExponentialOneWay { mean_one_way_ns, min_rtt_ns } => {
                    // A draw reaches at most 37 means (−ln 2^−53), so the mean
                    // stays 100 times below the limit.
                    time(mean_one_way_ns.saturating_mul(100), &format!("{r}.mean_one_way (x100)"), false)?;
                    time(min_rtt_ns, &r, false)?;
                }
                RttDist::Uniform { lo_ns, hi_ns } => {
                    time(lo_ns, &r, true)?;
                    time(hi_ns, &r, true)?;
                    if hi_ns < lo_ns {
                        return Err(format!("{r}: upper bound {hi_ns} ns below lower bound {lo_ns} ns"));
                    }
                }
            }
        }
        for (i, s) in self.udp_sources.iter().enumerate() {
            let p = format!("udp_sources[{i}]");
            rate(s.rate_bps, &format!("{p}.rate"))?;
            int(s.packet_bytes, &format!("{p}.packet"), 1, MAX_PACKET_BYTES as u64)?;
            start_stop(s.start_ns, s.stop_ns, &p)?;
        }
        Ok(())
    }
}
