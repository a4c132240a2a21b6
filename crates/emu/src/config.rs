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

use crate::engine::{EngineConfig, LinkSpec};
use sim::qdisc::{ParamValue, QdiscConfig};
use sim::QueueLimit;

use std::collections::HashMap;

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

impl Config {
    pub fn parse(text: &str) -> Result<Config, String> {
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
        if let Some(k) = m.keys().find(|k| !KNOWN.contains(&k.as_str())) {
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
            fwd: LinkSpec { rate_bps: num(&m, "rate_bps")?, limit: limit(&m, "")?, qdisc: qdisc(&m, "qdisc")? },
            rev: LinkSpec {
                rate_bps: num(&m, "rev_rate_bps")?,
                limit: limit(&m, "rev_")?,
                qdisc: qdisc(&m, "rev_qdisc")?,
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
        };
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
}
