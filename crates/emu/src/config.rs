//! The emulator's configuration file: one `key value...` per line, `#`
//! comments. Python's `ccarena.emulate` writes it from a resolved
//! experiment; nothing here has defaults that could hide a mistake.
//!
//! ```text
//! tun_snd ccarena-s          # device names (created in the caller's namespace)
//! tun_rcv ccarena-r
//! rate_bps 20000000          # forward (data) link
//! limit_pkts 67              # or limit_bytes N
//! rev_rate_bps 20000000      # reverse (ACK) link
//! rev_limit_pkts 67          # or rev_limit_bytes N
//! loss 0.0
//! seed 1
//! duration_ns 30000000000
//! interval_ns 100000000
//! trace 1
//! port_base 5001             # flow i's receiver port is port_base + i
//! flow_delay_ns 20000000 20000000   # one-way delay per flow
//! other_delay_ns 20000000
//! max_packet 1600
//! rt_priority 50             # SCHED_FIFO priority, 0 = none
//! spin_ns 60000              # busy-wait the last part of every wait
//! cpu 1                      # optional: run on this CPU only
//! batch_ns 20000             # optional: wake this long after a delivery to a receiver is due, so that
//!                            # packets due together coalesce (default 0)
//! offload 1                  # TSO/checksum offload on the devices (0: one packet per read)
//! stalls pause               # optional: a stall pauses the path (default catch-up: what fell
//!                            # due is delivered at once; see engine::Stalls)
//! qdisc red min_th=5 max_th=15 ecn=true   # optional forward discipline (default droptail)
//! rev_qdisc codel                          # optional reverse discipline
//! ```
//! A `qdisc` line takes the simulator's discipline name and `name=value`
//! parameters (`sim::qdisc::catalogue`): `true`/`false`, integers, decimals,
//! anything else a string.
//!
//! Link models (`sim::linkmodel`), each optional, for the forward link and,
//! with `rev_` before the key, the reverse one:
//!
//! ```text
//! model_schedule 0:100000000 30000000000:20000000   # rate over time, from_ns:bps (0: an outage)
//! model_trace_file fwd.trace mode=mahimahi once=false   # or capacity from a Mahimahi trace
//!                                # (relative to this file's folder; mode mahimahi or ideal)
//! model_jitter dist=uniform max_ns=5000000 reorder=false   # or dist=exponential mean_ns=N,
//!                                # dist=normal mean_ns=N sd_ns=N
//! model_delay_steps 20000000000:40000000   # the link's delay from then on, from_ns:ns
//! delay_ns 10000000              # the link's own delay (within flow_delay_ns), which the steps
//!                                # replace (default 0)
//! model_policer rate_bps=10000000 burst_bytes=100000
//! model_shaper rate_bps=10000000 burst_bytes=15000
//! model_batch every_ns=20000000 phase_ns=0          # or count=16 timeout_ns=10000000
//! ```
//!
//! A network of more than the two links (a parking lot, links in a line)
//! numbers its links as the engine does: 0 is the forward link above (the
//! one measured), 1 the reverse one, and links 2 and on take the forward
//! link's keys with `link<k>_` before them; every flow has a route:
//!
//! ```text
//! links 4                    # links 0..=3
//! delay_ns 10000000          # every link's own delay: the time from it to the next link of a route
//! rev_delay_ns 10000000
//! link2_rate_bps 50000000    # link 2: rate, limit, delay, loss, discipline, models
//! link2_limit_pkts 100
//! link2_delay_ns 10000000
//! link2_loss 0.0
//! link2_qdisc codel
//! link3_rate_bps 50000000
//! link3_limit_pkts 100
//! link3_delay_ns 10000000
//! link3_loss 0.0
//! routes 2,0/1,3/0 0/1/0    # per flow: its data's links, its ACKs' links, the link its rate is measured at
//! ```

use crate::engine::{EngineConfig, LinkSpec};
use sim::linkmodel::{
    BatchConfig, BucketConfig, CapacityConfig, JitterConfig, JitterDist, LinkModel, TraceConfig, TraceMode,
};
use sim::qdisc::{ParamValue, QdiscConfig};
use sim::QueueLimit;
use sim::Route;

use std::collections::HashMap;
use std::path::Path;

/// Everything the binary needs.
#[derive(Clone, Debug)]
pub struct Config {
    pub engine: EngineConfig,
    pub tun_snd: String,
    pub tun_rcv: String,
    pub rt_priority: i32,
    pub spin_ns: u64,
    /// How long after the next event the emulator wakes, ns.
    pub batch_ns: u64,
    /// CPU to run on (none: anywhere).
    pub cpu: Option<usize>,
}

fn one<'a>(m: &'a HashMap<String, Vec<String>>, key: &str) -> Result<&'a str, String> {
    match m.get(key).map(|v| v.as_slice()) {
        Some([v]) => Ok(v),
        Some(_) => Err(format!("{key}: expected one value")),
        None => Err(format!("{key}: missing")),
    }
}

fn num<T: std::str::FromStr>(m: &HashMap<String, Vec<String>>, key: &str) -> Result<T, String> {
    let v = one(m, key)?;
    v.parse().map_err(|_| format!("{key}: not a number: {v}"))
}

fn limit(m: &HashMap<String, Vec<String>>, prefix: &str) -> Result<QueueLimit, String> {
    let pk = format!("{prefix}limit_pkts");
    let by = format!("{prefix}limit_bytes");
    match (m.contains_key(&pk), m.contains_key(&by)) {
        (true, false) => Ok(QueueLimit::Packets(num(m, &pk)?)),
        (false, true) => Ok(QueueLimit::Bytes(num(m, &by)?)),
        _ => Err(format!("exactly one of {pk} and {by} must be given")),
    }
}

fn qdisc(m: &HashMap<String, Vec<String>>, key: &str) -> Result<QdiscConfig, String> {
    let Some(words) = m.get(key) else {
        return Ok(QdiscConfig::DropTail);
    };
    let (kind, rest) = words.split_first().ok_or_else(|| format!("{key}: missing the discipline"))?;
    if kind == "xcp" {
        // The router rewrites a congestion header that kernel TCP does not carry.
        return Err(format!("{key}: xcp runs in the simulator only"));
    }
    let mut params = Vec::with_capacity(rest.len());
    for w in rest {
        let (k, v) = w.split_once('=').ok_or_else(|| format!("{key}: expected name=value, got {w}"))?;
        let v = match v {
            "true" => ParamValue::Bool(true),
            "false" => ParamValue::Bool(false),
            _ => match (v.parse::<i64>(), v.parse::<f64>()) {
                (Ok(i), _) => ParamValue::Int(i),
                (_, Ok(x)) => ParamValue::Float(x),
                _ => ParamValue::Str(v.to_string()),
            },
        };
        params.push((k.to_string(), v));
    }
    QdiscConfig::from_params(kind, &params).map_err(|e| format!("{key}: {e}"))
}

/// The `name=value` words of line `key`, each name one of `known`.
fn params<'a>(
    m: &'a HashMap<String, Vec<String>>,
    key: &str,
    known: &[&str],
) -> Result<Option<HashMap<&'a str, &'a str>>, String> {
    let Some(words) = m.get(key) else {
        return Ok(None);
    };
    let mut out = HashMap::new();
    for w in words {
        let (k, v) = w.split_once('=').ok_or_else(|| format!("{key}: expected name=value, got {w}"))?;
        if !known.contains(&k) {
            return Err(format!("{key}: unknown parameter {k} (expected {})", known.join(", ")));
        }
        if out.insert(k, v).is_some() {
            return Err(format!("{key}: {k} given twice"));
        }
    }
    Ok(Some(out))
}

/// Parameter `name` of line `key` as a number (`default` when absent, if any).
fn param<T: std::str::FromStr>(
    p: &HashMap<&str, &str>,
    key: &str,
    name: &str,
    default: Option<T>,
) -> Result<T, String> {
    match (p.get(name), default) {
        (Some(v), _) => v.parse().map_err(|_| format!("{key}: {name}: not a number: {v}")),
        (None, Some(d)) => Ok(d),
        (None, None) => Err(format!("{key}: {name}: missing")),
    }
}

fn flag(p: &HashMap<&str, &str>, key: &str, name: &str) -> Result<bool, String> {
    match p.get(name).copied() {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(v) => Err(format!("{key}: {name}: expected true or false, got {v}")),
    }
}

/// `from:value` pairs of line `key`.
fn pairs(m: &HashMap<String, Vec<String>>, key: &str) -> Result<Option<Vec<(u64, u64)>>, String> {
    let Some(words) = m.get(key) else {
        return Ok(None);
    };
    if words.is_empty() {
        return Err(format!("{key}: expected from_ns:value pairs"));
    }
    words
        .iter()
        .map(|w| {
            let bad = || format!("{key}: expected from_ns:value, got {w}");
            let (a, b) = w.split_once(':').ok_or_else(bad)?;
            Ok((a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?))
        })
        .collect::<Result<Vec<_>, String>>()
        .map(Some)
}

/// A Mahimahi trace: one delivery opportunity per line, a time in ms.
fn read_trace(path: &Path, key: &str) -> Result<Vec<u64>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{key}: {}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            l.trim()
                .parse()
                .map_err(|_| format!("{key}: {} line {}: expected a time in ms, got {l}", path.display(), i + 1))
        })
        .collect()
}

/// The models of the link whose keys start with `prefix` (`""` or `"rev_"`);
/// trace files are read relative to `dir`.
fn link_model(m: &HashMap<String, Vec<String>>, prefix: &str, dir: &Path) -> Result<LinkModel, String> {
    let key = |k: &str| format!("{prefix}{k}");
    let schedule = pairs(m, &key("model_schedule"))?;
    let tk = key("model_trace_file");
    let trace = match m.get(&tk).map(|v| v.as_slice()) {
        None => None,
        Some([]) => return Err(format!("{tk}: missing the file")),
        Some([file, rest @ ..]) => {
            let mut p = HashMap::new();
            for w in rest {
                let (k, v) = w.split_once('=').ok_or_else(|| format!("{tk}: expected name=value, got {w}"))?;
                if !["mode", "once"].contains(&k) {
                    return Err(format!("{tk}: unknown parameter {k} (expected mode, once)"));
                }
                p.insert(k, v);
            }
            let mode = match p.get("mode").copied() {
                None | Some("mahimahi") => TraceMode::Mahimahi,
                Some("ideal") => TraceMode::Ideal,
                Some(v) => return Err(format!("{tk}: mode: expected mahimahi or ideal, got {v}")),
            };
            let once = flag(&p, &tk, "once")?;
            Some(TraceConfig { opportunities_ms: read_trace(&dir.join(file), &tk)?, once, mode })
        }
    };
    let capacity = match (schedule, trace) {
        (Some(_), Some(_)) => return Err(format!("{tk}: a link has a schedule or a trace, not both")),
        (Some(s), None) => Some(CapacityConfig::Schedule(s)),
        (None, Some(t)) => Some(CapacityConfig::Trace(t)),
        (None, None) => None,
    };
    let bucket = |k: &str| -> Result<Option<BucketConfig>, String> {
        let k = key(k);
        let Some(p) = params(m, &k, &["rate_bps", "burst_bytes"])? else { return Ok(None) };
        Ok(Some(BucketConfig {
            rate_bps: param(&p, &k, "rate_bps", None)?,
            burst_bytes: param(&p, &k, "burst_bytes", None)?,
        }))
    };
    let bk = key("model_batch");
    let batch = match params(m, &bk, &["every_ns", "phase_ns", "count", "timeout_ns"])? {
        None => None,
        Some(p) if p.contains_key("every_ns") => {
            if p.contains_key("count") || p.contains_key("timeout_ns") {
                return Err(format!("{bk}: every_ns (and phase_ns) or count and timeout_ns, not both"));
            }
            Some(BatchConfig::Periodic {
                every_ns: param(&p, &bk, "every_ns", None)?,
                phase_ns: param(&p, &bk, "phase_ns", Some(0))?,
            })
        }
        Some(p) => {
            if p.contains_key("phase_ns") {
                return Err(format!("{bk}: phase_ns: only with every_ns"));
            }
            Some(BatchConfig::Count {
                n: param(&p, &bk, "count", None)?,
                timeout_ns: param(&p, &bk, "timeout_ns", None)?,
            })
        }
    };
    let jk = key("model_jitter");
    let dist = match params(m, &jk, &["dist", "max_ns", "mean_ns", "sd_ns", "reorder"])? {
        None => None,
        Some(p) => {
            let (dist, used): (JitterDist, &[&str]) = match p.get("dist").copied() {
                Some("uniform") => (JitterDist::Uniform { max_ns: param(&p, &jk, "max_ns", None)? }, &["max_ns"]),
                Some("exponential") => {
                    (JitterDist::Exponential { mean_ns: param(&p, &jk, "mean_ns", None)? }, &["mean_ns"])
                }
                Some("normal") => (
                    JitterDist::Normal {
                        mean_ns: param(&p, &jk, "mean_ns", None)?,
                        sd_ns: param(&p, &jk, "sd_ns", None)?,
                    },
                    &["mean_ns", "sd_ns"],
                ),
                Some(v) => return Err(format!("{jk}: dist: expected uniform, exponential or normal, got {v}")),
                None => return Err(format!("{jk}: dist: missing")),
            };
            if let Some(k) = p.keys().find(|k| !["dist", "reorder"].contains(k) && !used.contains(k)) {
                return Err(format!("{jk}: {k}: not a parameter of this distribution"));
            }
            Some((dist, flag(&p, &jk, "reorder")?))
        }
    };
    let steps = pairs(m, &key("model_delay_steps"))?;
    let jitter = match (dist, steps) {
        (None, None) => None,
        (d, steps) => Some(JitterConfig {
            dist: d.map(|d| d.0),
            reorder: d.is_some_and(|d| d.1),
            delay_steps: steps.unwrap_or_default(),
        }),
    };
    let model =
        LinkModel { capacity, policer: bucket("model_policer")?, shaper: bucket("model_shaper")?, batch, jitter };
    model.check().map_err(|e| format!("{prefix}model: {e}"))?;
    Ok(model)
}

/// Link `k` of a network (k ≥ 2): its keys start with `link<k>_`.
fn net_link(m: &HashMap<String, Vec<String>>, k: usize, dir: &Path) -> Result<LinkSpec, String> {
    let prefix = format!("link{k}_");
    let key = |s: &str| format!("{prefix}{s}");
    let link = LinkSpec {
        rate_bps: num(m, &key("rate_bps"))?,
        limit: limit(m, &prefix)?,
        qdisc: qdisc(m, &key("qdisc"))?,
        model: link_model(m, &prefix, dir)?,
        delay_ns: num(m, &key("delay_ns"))?,
        loss: num(m, &key("loss"))?,
    };
    if link.rate_bps == 0 {
        return Err(format!("{prefix}rate_bps: must be positive"));
    }
    if !(0.0..1.0).contains(&link.loss) {
        return Err(format!("{prefix}loss: must be in [0, 1)"));
    }
    Ok(link)
}

/// The `routes` line: one `data/ack/measure` word per flow, links by number, comma-separated.
fn routes(m: &HashMap<String, Vec<String>>, n_links: usize, n_flows: usize) -> Result<Vec<Route>, String> {
    let Some(words) = m.get("routes") else {
        return Err("routes: missing (a network needs every flow's route)".into());
    };
    if words.len() != n_flows {
        return Err(format!("routes: expected one route per flow ({n_flows}), got {}", words.len()));
    }
    let list = |w: &str, part: &str| -> Result<Vec<u32>, String> {
        let links = part
            .split(',')
            .map(|x| match x.parse::<u32>() {
                Ok(l) if (l as usize) < n_links => Ok(l),
                _ => Err(format!("routes: {w}: expected links 0..{} separated by commas, got {x:?}", n_links - 1)),
            })
            .collect::<Result<Vec<u32>, String>>()?;
        Ok(links)
    };
    words
        .iter()
        .map(|w| {
            let parts: Vec<&str> = w.split('/').collect();
            let [data, ack, measure] = parts[..] else {
                return Err(format!("routes: expected data/ack/measure, got {w}"));
            };
            let route = Route { data: list(w, data)?, ack: list(w, ack)?, measure: list(w, measure)?[0] };
            if !route.data.contains(&route.measure) {
                return Err(format!("routes: {w}: the measured link {} is not on the data route", route.measure));
            }
            Ok(route)
        })
        .collect()
}

impl Config {
    /// A configuration whose trace files are relative to the working folder.
    pub fn parse(text: &str) -> Result<Config, String> {
        Config::parse_in(text, Path::new(""))
    }

    /// Reads the configuration file at `path` (its trace files relative to its folder).
    pub fn load(path: &Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        Config::parse_in(&text, path.parent().unwrap_or(Path::new("")))
    }

    /// A configuration whose trace files are relative to `dir`.
    pub fn parse_in(text: &str, dir: &Path) -> Result<Config, String> {
        let mut m: HashMap<String, Vec<String>> = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let mut parts = line.split_whitespace().map(str::to_string);
            let key = parts.next().expect("non-empty");
            if m.insert(key.clone(), parts.collect()).is_some() {
                return Err(format!("line {}: {key} given twice", i + 1));
            }
        }
        const KNOWN: &[&str] = &[
            "tun_snd",
            "tun_rcv",
            "rate_bps",
            "limit_pkts",
            "limit_bytes",
            "rev_rate_bps",
            "rev_limit_pkts",
            "rev_limit_bytes",
            "loss",
            "seed",
            "duration_ns",
            "interval_ns",
            "trace",
            "port_base",
            "flow_delay_ns",
            "other_delay_ns",
            "max_packet",
            "rt_priority",
            "spin_ns",
            "cpu",
            "offload",
            "batch_ns",
            "stalls",
            "qdisc",
            "rev_qdisc",
        ];
        const MODEL: &[&str] = &[
            "delay_ns",
            "model_schedule",
            "model_trace_file",
            "model_jitter",
            "model_delay_steps",
            "model_policer",
            "model_shaper",
            "model_batch",
        ];
        const NET: &[&str] = &["links", "routes"];
        const LINK: &[&str] = &["rate_bps", "limit_pkts", "limit_bytes", "qdisc", "loss"];
        let n_links: usize = if m.contains_key("links") { num(&m, "links")? } else { 2 };
        if !(2..=1 << 16).contains(&n_links) {
            return Err(format!("links: expected 2 to 65536 links, got {n_links}"));
        }
        // A network's link k ≥ 2 (`link<k>_...`): the key without its prefix.
        let net_key = |k: &str| -> Option<String> {
            let rest = k.strip_prefix("link")?;
            let (num, key) = rest.split_once('_')?;
            let i: usize = num.parse().ok()?;
            (2..n_links).contains(&i).then(|| key.to_string())
        };
        let known = |k: &str| {
            KNOWN.contains(&k)
                || NET.contains(&k)
                || MODEL.contains(&k.strip_prefix("rev_").unwrap_or(k))
                || net_key(k).is_some_and(|s| LINK.contains(&s.as_str()) || MODEL.contains(&s.as_str()))
        };
        if let Some(k) = m.keys().find(|k| !known(k)) {
            return Err(format!("{k}: unknown key"));
        }
        let flow_delay_ns = m
            .get("flow_delay_ns")
            .ok_or("flow_delay_ns: missing")?
            .iter()
            .map(|v| v.parse::<u64>().map_err(|_| format!("flow_delay_ns: not a number: {v}")))
            .collect::<Result<Vec<u64>, String>>()?;
        if flow_delay_ns.is_empty() {
            return Err("flow_delay_ns: at least one flow".into());
        }
        let engine = EngineConfig {
            fwd: LinkSpec {
                rate_bps: num(&m, "rate_bps")?,
                limit: limit(&m, "")?,
                qdisc: qdisc(&m, "qdisc")?,
                model: link_model(&m, "", dir)?,
                delay_ns: if m.contains_key("delay_ns") { num(&m, "delay_ns")? } else { 0 },
                loss: 0.0,
            },
            rev: LinkSpec {
                rate_bps: num(&m, "rev_rate_bps")?,
                limit: limit(&m, "rev_")?,
                qdisc: qdisc(&m, "rev_qdisc")?,
                model: link_model(&m, "rev_", dir)?,
                delay_ns: if m.contains_key("rev_delay_ns") { num(&m, "rev_delay_ns")? } else { 0 },
                loss: 0.0,
            },
            loss: num(&m, "loss")?,
            seed: num(&m, "seed")?,
            duration_ns: num(&m, "duration_ns")?,
            interval_ns: num(&m, "interval_ns")?,
            trace: num::<u8>(&m, "trace")? != 0,
            port_base: num(&m, "port_base")?,
            flow_delay_ns,
            other_delay_ns: num(&m, "other_delay_ns")?,
            max_packet: num(&m, "max_packet")?,
            frames: match one(&m, "offload")? {
                "0" => false,
                "1" => true,
                v => return Err(format!("offload: expected 0 or 1, got {v}")),
            },
            pause_stalls: match m.contains_key("stalls").then(|| one(&m, "stalls")).transpose()? {
                None | Some("catch-up") => false,
                Some("pause") => true,
                Some(v) => return Err(format!("stalls: expected pause or catch-up, got {v}")),
            },
            links: (2..n_links).map(|k| net_link(&m, k, dir)).collect::<Result<_, _>>()?,
            routes: Vec::new(),
        };
        let mut engine = engine;
        if m.contains_key("routes") || n_links > 2 {
            engine.routes = routes(&m, n_links, engine.flow_delay_ns.len())?;
        }
        let e = &engine;
        if e.fwd.rate_bps == 0 || e.rev.rate_bps == 0 {
            return Err("link rates must be positive".into());
        }
        if e.duration_ns == 0 || e.interval_ns == 0 {
            return Err("duration_ns and interval_ns must be positive".into());
        }
        if !(0.0..1.0).contains(&e.loss) {
            return Err("loss: must be in [0, 1)".into());
        }
        if e.routes.is_empty() {
            for (prefix, link) in [("", &e.fwd), ("rev_", &e.rev)] {
                if e.flow_delay_ns.iter().any(|&d| d < link.delay_ns) {
                    return Err(format!("{prefix}delay_ns: longer than a flow's one-way delay"));
                }
            }
        }
        for (i, (r, &d)) in e.routes.iter().zip(&e.flow_delay_ns).enumerate() {
            for links in [&r.data, &r.ack] {
                if links.iter().map(|&l| e.link(l as usize).delay_ns).sum::<u64>() > d {
                    return Err(format!("routes: flow {i}'s links take longer than its one-way delay ({d} ns)"));
                }
            }
        }
        if e.port_base as usize + e.flow_delay_ns.len() > 65536 {
            return Err("port_base: too many flows above it".into());
        }
        if !(576..=65535 + 64).contains(&e.max_packet) {
            return Err("max_packet: must be in [576, 65599]".into());
        }
        Ok(Config {
            engine,
            tun_snd: one(&m, "tun_snd")?.to_string(),
            tun_rcv: one(&m, "tun_rcv")?.to_string(),
            rt_priority: num(&m, "rt_priority")?,
            spin_ns: num(&m, "spin_ns")?,
            batch_ns: if m.contains_key("batch_ns") { num(&m, "batch_ns")? } else { 0 },
            cpu: if m.contains_key("cpu") { Some(num(&m, "cpu")?) } else { None },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "tun_snd a\ntun_rcv b\nrate_bps 20000000\nlimit_pkts 67\nrev_rate_bps 20000000\n\
        rev_limit_bytes 100000\nloss 0.0\nseed 1\nduration_ns 1000\ninterval_ns 100\ntrace 1\nport_base 5001\n\
        flow_delay_ns 20000000 10000000 # two flows\nother_delay_ns 5\nmax_packet 1600\nrt_priority 50\nspin_ns 0\noffload 1\n";

    #[test]
    fn parses_a_complete_file() {
        let c = Config::parse(GOOD).unwrap();
        assert_eq!(c.engine.flow_delay_ns, vec![20_000_000, 10_000_000]);
        assert_eq!(c.engine.fwd.limit, QueueLimit::Packets(67));
        assert_eq!(c.engine.rev.limit, QueueLimit::Bytes(100_000));
        assert_eq!(c.tun_rcv, "b");
        assert_eq!(c.engine.fwd.qdisc, QdiscConfig::DropTail);
        assert!(c.engine.frames);
        assert_eq!(c.batch_ns, 0);
        assert_eq!(Config::parse(&format!("{GOOD}batch_ns 25000\n")).unwrap().batch_ns, 25_000);
        assert!(!c.engine.pause_stalls);
        assert!(Config::parse(&format!("{GOOD}stalls pause\n")).unwrap().engine.pause_stalls);
        assert!(!Config::parse(&format!("{GOOD}stalls catch-up\n")).unwrap().engine.pause_stalls);
    }

    #[test]
    fn parses_a_qdisc_line() {
        let c = Config::parse(&format!("{GOOD}qdisc red min_th=10 max_th=30.5 ecn=true mode=bytes\nrev_qdisc codel\n"))
            .unwrap();
        match c.engine.fwd.qdisc {
            QdiscConfig::Red(r) => {
                assert_eq!((r.min_th, r.max_th, r.ecn), (10.0, 30.5, true));
                assert_eq!(r.mode, sim::qdisc::RedMode::Bytes);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(c.engine.rev.qdisc, QdiscConfig::Codel(Default::default()));
        let e = Config::parse(&format!("{GOOD}qdisc pie alpha=-1\n")).unwrap_err();
        assert!(e.starts_with("qdisc: alpha"), "{e}");
        let e = Config::parse(&format!("{GOOD}qdisc blue\n")).unwrap_err();
        assert!(e.contains("unknown qdisc"), "{e}");
    }

    #[test]
    fn names_the_bad_key() {
        let e = Config::parse(&GOOD.replace("rate_bps 20000000\nlimit", "rate_bps x\nlimit")).unwrap_err();
        assert_eq!(e, "rate_bps: not a number: x");
        let e = Config::parse(&format!("{GOOD}colour red\n")).unwrap_err();
        assert_eq!(e, "colour: unknown key");
        let e = Config::parse(&GOOD.replace("limit_pkts 67\n", "")).unwrap_err();
        assert!(e.starts_with("exactly one of limit_pkts"), "{e}");
        let e = Config::parse(&GOOD.replace("offload 1", "offload yes")).unwrap_err();
        assert_eq!(e, "offload: expected 0 or 1, got yes");
        let e = Config::parse(&GOOD.replace("offload 1\n", "")).unwrap_err();
        assert_eq!(e, "offload: missing");
        let e = Config::parse(&format!("{GOOD}stalls wait\n")).unwrap_err();
        assert_eq!(e, "stalls: expected pause or catch-up, got wait");
        let e = Config::parse(&format!("{GOOD}seed 2\n")).unwrap_err();
        assert!(e.contains("seed given twice"), "{e}");
    }

    #[test]
    fn parses_link_models_for_both_links() {
        let dir = std::env::temp_dir().join(format!("ccarena-emu-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("fwd.trace"), "1\n1\n3\n").unwrap();
        let text = format!(
            "{GOOD}model_trace_file fwd.trace mode=ideal once=true\nmodel_jitter dist=uniform max_ns=2000000\n\
             model_policer rate_bps=10000000 burst_bytes=15000\nrev_model_schedule 0:5000000 1000:0 2000:7000000\n\
             rev_model_batch every_ns=20000000 phase_ns=5000000\nrev_model_shaper rate_bps=1000000 burst_bytes=3000\n\
             rev_model_jitter dist=normal mean_ns=1000 sd_ns=10 reorder=true\nmodel_delay_steps 5000:3000000\n\
             delay_ns 1000000\n"
        );
        let c = Config::parse_in(&text, &dir).unwrap();
        let (f, r) = (&c.engine.fwd.model, &c.engine.rev.model);
        assert_eq!(
            f.capacity,
            Some(CapacityConfig::Trace(TraceConfig {
                opportunities_ms: vec![1, 1, 3],
                once: true,
                mode: TraceMode::Ideal
            }))
        );
        let j = f.jitter.as_ref().unwrap();
        assert_eq!((j.dist, j.reorder), (Some(JitterDist::Uniform { max_ns: 2_000_000 }), false));
        assert_eq!(j.delay_steps, vec![(5000, 3_000_000)]);
        assert_eq!(c.engine.fwd.delay_ns, 1_000_000);
        assert_eq!(f.policer, Some(BucketConfig { rate_bps: 10_000_000, burst_bytes: 15_000 }));
        assert_eq!(r.capacity, Some(CapacityConfig::Schedule(vec![(0, 5_000_000), (1000, 0), (2000, 7_000_000)])));
        assert_eq!(r.batch, Some(BatchConfig::Periodic { every_ns: 20_000_000, phase_ns: 5_000_000 }));
        assert_eq!(r.shaper, Some(BucketConfig { rate_bps: 1_000_000, burst_bytes: 3000 }));
        let rj = r.jitter.as_ref().unwrap();
        assert_eq!((rj.dist, rj.reorder), (Some(JitterDist::Normal { mean_ns: 1000, sd_ns: 10 }), true));
        assert!(Config::parse(GOOD).unwrap().engine.fwd.model.is_ideal());
        let c = Config::parse(&format!("{GOOD}model_batch count=16 timeout_ns=10000000\n")).unwrap();
        assert_eq!(c.engine.fwd.model.batch, Some(BatchConfig::Count { n: 16, timeout_ns: 10_000_000 }));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn names_the_bad_model_key() {
        let bad = |extra: &str| Config::parse(&format!("{GOOD}{extra}\n")).unwrap_err();
        assert_eq!(bad("model_jitter dist=uniform"), "model_jitter: max_ns: missing");
        assert_eq!(
            bad("model_jitter dist=pareto max_ns=1"),
            "model_jitter: dist: expected uniform, exponential or normal, got pareto"
        );
        assert_eq!(
            bad("model_jitter dist=uniform max_ns=1 sd_ns=2"),
            "model_jitter: sd_ns: not a parameter of this distribution"
        );
        assert_eq!(bad("rev_model_policer rate_bps=x burst_bytes=1"), "rev_model_policer: rate_bps: not a number: x");
        assert_eq!(bad("model_shaper rate_bps=0 burst_bytes=1"), "model: shaper.rate: expected a rate above 0");
        assert_eq!(bad("model_schedule 5:100"), "model: capacity.schedule: expected its first change at 0s");
        assert_eq!(bad("model_schedule 0-100"), "model_schedule: expected from_ns:value, got 0-100");
        assert_eq!(
            bad("model_batch every_ns=10 count=2"),
            "model_batch: every_ns (and phase_ns) or count and timeout_ns, not both"
        );
        assert_eq!(
            bad("model_batch colour=red"),
            "model_batch: unknown parameter colour (expected every_ns, phase_ns, count, timeout_ns)"
        );
        assert!(bad("model_trace_file /nonexistent/x.trace").starts_with("model_trace_file: /nonexistent/x.trace: "));
        assert_eq!(bad("rev_model_colour 1"), "rev_model_colour: unknown key");
        assert_eq!(bad("delay_ns 30000000"), "delay_ns: longer than a flow's one-way delay");
    }

    /// A network: links 2 and on with their prefix, every link's delay, every flow's route.
    #[test]
    fn parses_a_network() {
        let net = "links 4\ndelay_ns 5000000\nrev_delay_ns 5000000\n\
            link2_rate_bps 50000000\nlink2_limit_bytes 150000\nlink2_delay_ns 4000000\nlink2_loss 0.01\n\
            link2_qdisc codel\nlink3_rate_bps 50000000\nlink3_limit_pkts 100\nlink3_delay_ns 4000000\n\
            link3_loss 0.0\nroutes 2,0/1,3/0 0/1/0\n";
        let c = Config::parse(&format!("{GOOD}{net}")).unwrap();
        let e = &c.engine;
        assert_eq!(e.links.len(), 2);
        assert_eq!(
            (e.links[0].rate_bps, e.links[0].limit, e.links[0].delay_ns),
            (50_000_000, QueueLimit::Bytes(150_000), 4_000_000)
        );
        assert_eq!(e.links[0].loss, 0.01);
        assert!(matches!(e.links[0].qdisc, QdiscConfig::Codel(_)));
        assert_eq!(e.links[1].limit, QueueLimit::Packets(100));
        assert_eq!(e.routes[0], Route { data: vec![2, 0], ack: vec![1, 3], measure: 0 });
        assert_eq!(e.routes[1], Route { data: vec![0], ack: vec![1], measure: 0 });
        // Each mistake is refused with its key.
        for (bad, key) in [
            (net.replace("link3_loss 0.0\n", ""), "link3_loss: missing"),
            (net.replace("routes 2,0/1,3/0 0/1/0", "routes 2,0/1,3/0"), "routes: expected one route per flow"),
            (net.replace("2,0/1,3/0 ", "2,4/1,3/0 "), "routes: 2,4/1,3/0: expected links 0..3"),
            (net.replace("2,0/1,3/0 ", "2,0/1,3/3 "), "routes: 2,0/1,3/3: the measured link 3"),
            (net.replace("2,0/1,3/0 ", "2,0/1,3 "), "routes: expected data/ack/measure"),
            (format!("{net}link4_rate_bps 1\n"), "link4_rate_bps: unknown key"),
            (net.replace("link2_delay_ns 4000000", "link2_delay_ns 20000000"), "routes: flow 0's links take longer"),
        ] {
            let err = Config::parse(&format!("{GOOD}{bad}")).unwrap_err();
            assert!(err.starts_with(key), "{err}");
        }
    }
}
