//! The emulator's configuration file: JSON, `{"engine": …, "emu": …}`.
//!
//! `engine` is the simulator's own configuration ([`sim::Config`], read with
//! the same serde form as `ccarena._core.simulate` reads its dict, see
//! [`sim::config_form`]); `emu` holds what only the emulator needs
//! ([`EmuSettings`]: device names, ports, the scheduling of its thread).
//! Python's `ccarena.emulate` writes it from a resolved experiment. Every
//! key the file does not define is refused, naming its path.
//!
//! From the engine's configuration the emulator takes the links (0 the
//! forward link, the one measured; 1 the reverse one; 2, 3, … a network's),
//! the flows' routes, and each flow's one-way delay (half its `rtt_ns`); the
//! flows themselves are kernel TCP, started by the Python side. What it
//! cannot run is refused in one line naming the field (the Python side
//! refuses it first, in the experiment's own terms).

use crate::engine::{EngineConfig, LinkSpec};
use serde::Deserialize;
use sim::qdisc::QdiscConfig;
use sim::LinkConfig;

use std::path::Path;

/// What a stall of the emulator's thread does (see [`crate::engine::Stalls`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StallMode {
    /// What fell due is delivered at once and the schedule kept.
    #[default]
    CatchUp,
    /// The whole path pauses.
    Pause,
}

/// The emulator-only settings: the `emu` object of the file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmuSettings {
    /// TUN device on the senders' side (created in the caller's namespace).
    pub tun_snd: String,
    /// TUN device on the receivers' side.
    pub tun_rcv: String,
    /// Flow i's receiver listens on `port_base + i`.
    pub port_base: u16,
    /// One-way delay of traffic that belongs to no flow, ns.
    pub other_delay_ns: u64,
    /// Largest packet the devices carry (the slot size), bytes.
    pub max_packet: usize,
    /// SCHED_FIFO priority, 0 = none.
    pub rt_priority: i32,
    /// Busy-wait the last part of every wait, ns.
    pub spin_ns: u64,
    /// TSO/checksum offload on the devices (false: one packet per read).
    pub offload: bool,
    /// Wake this long after a delivery to a receiver is due, so that packets
    /// due together coalesce, ns (default 0).
    #[serde(default)]
    pub batch_ns: u64,
    /// What a stall does (default catch-up).
    #[serde(default)]
    pub stalls: StallMode,
    /// Run on this CPU only (none: anywhere).
    #[serde(default)]
    pub cpu: Option<usize>,
    /// The packet log's window [from, to), ns since the start of the
    /// measurement (`[measure] packets`; none: no log).
    #[serde(default)]
    pub packets_ns: Option<[u64; 2]>,
}

/// The file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    engine: sim::Config,
    emu: EmuSettings,
}

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

/// The emulator's link from the engine's; `field` names it in refusals.
/// `delay_ns` is the link's own delay as the emulator uses it.
fn link(l: &LinkConfig, field: &str, delay_ns: u64, qdisc: bool) -> Result<LinkSpec, String> {
    if matches!(l.qdisc, QdiscConfig::Xcp(_)) {
        // The router rewrites a congestion header that kernel TCP does not carry.
        return Err(format!("{field}.qdisc: xcp runs in the simulator only"));
    }
    if l.rate_bps == 0 {
        return Err(format!("{field}.rate_bps: must be positive"));
    }
    if l.loss_model.is_some() {
        return Err(format!("{field}.loss_model: the emulator runs Bernoulli loss only"));
    }
    l.model.check().map_err(|e| format!("{field}.model: {e}"))?;
    Ok(LinkSpec {
        rate_bps: l.rate_bps,
        limit: l.limit,
        qdisc: if qdisc { l.qdisc.clone() } else { QdiscConfig::DropTail },
        model: l.model.clone(),
        delay_ns,
        loss: 0.0,
    })
}

/// Whether the link's model steps its delay (which then starts from the link's own).
fn steps_delay(l: &LinkConfig) -> bool {
    l.model.jitter.as_ref().is_some_and(|j| !j.delay_steps.is_empty())
}

impl Config {
    /// Reads the configuration file at `path`.
    pub fn load(path: &Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        Config::parse(&text)
    }

    /// The configuration from the file's text.
    pub fn parse(text: &str) -> Result<Config, String> {
        let mut de = serde_json::Deserializer::from_str(text);
        let file: File = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            // The path names the place; serde_json's "at line 1 column 209" adds nothing to it.
            let inner = e.inner().to_string();
            let what = match (e.inner().line(), inner.rfind(" at line ")) {
                (1.., Some(i)) => &inner[..i],
                _ => &inner[..],
            };
            match e.path().to_string().as_str() {
                "." => what.to_string(),
                path => format!("{path}: {what}"),
            }
        })?;
        de.end().map_err(|e| e.to_string())?;
        Config::from_parts(&file.engine, file.emu)
    }

    /// The emulator's configuration from the engine's and its own settings.
    pub fn from_parts(c: &sim::Config, emu: EmuSettings) -> Result<Config, String> {
        let net = &c.network;
        if c.flows.is_empty() {
            return Err("engine.flows: at least one flow".into());
        }
        let flow_delay_ns: Vec<u64> = c.flows.iter().map(|f| f.rtt_ns / 2).collect();
        let n_links = 2 + net.links.len();
        if n_links > 1 << 16 {
            return Err(format!("engine.network.links: expected at most 65534 links, got {}", net.links.len()));
        }
        let (fwd, rev, links, routes) = if net.is_dumbbell() {
            // The dumbbell: every flow's one-way delay is its own; a link's delay matters only
            // where its model steps it. The reverse link is drop-tail.
            let own = |l: &LinkConfig| if steps_delay(l) { l.delay_ns } else { 0 };
            (
                link(&c.bottleneck, "engine.bottleneck", own(&c.bottleneck), true)?,
                link(&c.reverse, "engine.reverse", own(&c.reverse), false)?,
                Vec::new(),
                Vec::new(),
            )
        } else {
            let mut links = Vec::with_capacity(net.links.len());
            for (k, l) in net.links.iter().enumerate() {
                let field = format!("engine.network.links[{k}]");
                if !(0.0..1.0).contains(&l.loss) {
                    return Err(format!("{field}.loss: must be in [0, 1)"));
                }
                links.push(LinkSpec { loss: l.loss, ..link(l, &field, l.delay_ns, true)? });
            }
            if net.routes.len() != c.flows.len() {
                return Err(format!(
                    "engine.network.routes: expected one route per flow ({}), got {}",
                    c.flows.len(),
                    net.routes.len()
                ));
            }
            for (i, r) in net.routes.iter().enumerate() {
                let field = format!("engine.network.routes[{i}]");
                if let Some(l) = r.data.iter().chain(&r.ack).find(|&&l| l as usize >= n_links) {
                    return Err(format!("{field}: link {l}: expected links 0..{}", n_links - 1));
                }
                if !r.data.contains(&r.measure) {
                    return Err(format!("{field}.measure: the measured link {} is not on the data route", r.measure));
                }
            }
            (
                link(&c.bottleneck, "engine.bottleneck", c.bottleneck.delay_ns, true)?,
                link(&c.reverse, "engine.reverse", c.reverse.delay_ns, true)?,
                links,
                net.routes.clone(),
            )
        };
        let engine = EngineConfig {
            fwd,
            rev,
            loss: c.bottleneck.loss,
            seed: c.seed,
            duration_ns: c.duration_ns,
            interval_ns: c.interval_ns,
            trace: c.trace,
            port_base: emu.port_base,
            flow_delay_ns,
            other_delay_ns: emu.other_delay_ns,
            max_packet: emu.max_packet,
            frames: emu.offload,
            pause_stalls: emu.stalls == StallMode::Pause,
            links,
            routes,
            packet_log_ns: emu.packets_ns.map(|[a, b]| (a, b)),
        };
        let e = &engine;
        if let Some((a, b)) = e.packet_log_ns {
            if a >= b || b > e.duration_ns {
                return Err(format!(
                    "emu.packets_ns: expected [from, to] with from < to <= the duration ({} ns), got [{a}, {b}]",
                    e.duration_ns
                ));
            }
        }
        if e.duration_ns == 0 || e.interval_ns == 0 {
            return Err("engine.duration_ns and engine.interval_ns: must be positive".into());
        }
        if !(0.0..1.0).contains(&e.loss) {
            return Err("engine.bottleneck.loss: must be in [0, 1)".into());
        }
        if e.routes.is_empty() {
            for (field, l) in [("engine.bottleneck", &e.fwd), ("engine.reverse", &e.rev)] {
                if e.flow_delay_ns.iter().any(|&d| d < l.delay_ns) {
                    return Err(format!("{field}.delay_ns: longer than a flow's one-way delay"));
                }
            }
        }
        for (i, (r, &d)) in e.routes.iter().zip(&e.flow_delay_ns).enumerate() {
            for links in [&r.data, &r.ack] {
                if links.iter().map(|&l| e.link(l as usize).delay_ns).sum::<u64>() > d {
                    return Err(format!(
                        "engine.network.routes[{i}]: flow {i}'s links take longer than its one-way delay ({d} ns)"
                    ));
                }
            }
        }
        if e.port_base as usize + e.flow_delay_ns.len() > 65536 {
            return Err("emu.port_base: too many flows above it".into());
        }
        if !(576..=65535 + 64).contains(&e.max_packet) {
            return Err("emu.max_packet: must be in [576, 65599]".into());
        }
        Ok(Config {
            engine,
            tun_snd: emu.tun_snd,
            tun_rcv: emu.tun_rcv,
            rt_priority: emu.rt_priority,
            spin_ns: emu.spin_ns,
            batch_ns: emu.batch_ns,
            cpu: emu.cpu,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use sim::linkmodel::{BatchConfig, BucketConfig, CapacityConfig, JitterDist, TraceConfig, TraceMode};
    use sim::{QueueLimit, Route};

    fn flow(rtt_ns: u64) -> Value {
        json!({"cc": "reno", "start_ns": 0, "rtt_ns": rtt_ns, "mss": 1448, "header_bytes": 52,
               "init_cwnd": 10, "pacing": false, "app": "bulk"})
    }

    /// Two flows of 40 and 20 ms over a 20 Mbit/s dumbbell.
    fn good() -> Value {
        json!({
            "engine": {
                "seed": 1, "duration_ns": 1000, "interval_ns": 100, "trace": true,
                "bottleneck": {"rate_bps": 20_000_000, "delay_ns": 5_000_000, "buffer_pkts": 67, "loss": 0.0},
                "reverse": {"rate_bps": 20_000_000, "delay_ns": 5_000_000, "buffer_bytes": 100_000},
                "flows": [flow(40_000_000), flow(20_000_000)]
            },
            "emu": {"tun_snd": "a", "tun_rcv": "b", "port_base": 5001, "other_delay_ns": 5, "max_packet": 1600,
                    "rt_priority": 50, "spin_ns": 0, "offload": true}
        })
    }

    fn parse(v: &Value) -> Result<Config, String> {
        Config::parse(&v.to_string())
    }

    #[test]
    fn reads_a_complete_file() {
        let c = parse(&good()).unwrap();
        assert_eq!(c.engine.flow_delay_ns, vec![20_000_000, 10_000_000]);
        assert_eq!(c.engine.fwd.limit, QueueLimit::Packets(67));
        assert_eq!(c.engine.rev.limit, QueueLimit::Bytes(100_000));
        // In the dumbbell a link's delay is the flows' own, unless its model steps it.
        assert_eq!((c.engine.fwd.delay_ns, c.engine.rev.delay_ns), (0, 0));
        assert_eq!(c.tun_rcv, "b");
        assert_eq!(c.engine.fwd.qdisc, QdiscConfig::DropTail);
        assert!(c.engine.frames && c.engine.trace);
        assert_eq!((c.batch_ns, c.cpu), (0, None));
        assert!(!c.engine.pause_stalls);
        assert_eq!(c.engine.packet_log_ns, None);
        let mut v = good();
        v["emu"]["packets_ns"] = json!([100, 1_000]);
        assert_eq!(parse(&v).unwrap().engine.packet_log_ns, Some((100, 1_000)));
        v["emu"]["packets_ns"] = json!([500, 2_000]);
        assert!(parse(&v).unwrap_err().starts_with("emu.packets_ns: expected [from, to]"));
        let mut v = good();
        v["emu"]["batch_ns"] = json!(25_000);
        v["emu"]["stalls"] = json!("pause");
        v["emu"]["cpu"] = json!(1);
        let c = parse(&v).unwrap();
        assert_eq!((c.batch_ns, c.cpu, c.engine.pause_stalls), (25_000, Some(1), true));
    }

    #[test]
    fn reads_a_discipline() {
        let mut v = good();
        v["engine"]["bottleneck"]["qdisc"] = json!({"kind": "red", "min_th": 10, "max_th": 30.5, "ecn": true,
                                                     "mode": "bytes"});
        let c = parse(&v).unwrap();
        match c.engine.fwd.qdisc {
            QdiscConfig::Red(r) => {
                assert_eq!((r.min_th, r.max_th, r.ecn), (10.0, 30.5, true));
                assert_eq!(r.mode, sim::qdisc::RedMode::Bytes);
            }
            other => panic!("{other:?}"),
        }
        v["engine"]["bottleneck"]["qdisc"] = json!({"kind": "pie", "alpha": -1.0});
        let e = parse(&v).unwrap_err();
        assert!(e.starts_with("engine.bottleneck.qdisc: alpha"), "{e}");
        v["engine"]["bottleneck"]["qdisc"] = json!({"kind": "xcp"});
        assert_eq!(parse(&v).unwrap_err(), "engine.bottleneck.qdisc: xcp runs in the simulator only");
    }

    #[test]
    fn names_the_bad_key() {
        let bad = |f: &dyn Fn(&mut Value)| {
            let mut v = good();
            f(&mut v);
            parse(&v).unwrap_err()
        };
        assert!(
            bad(&|v| v["engine"]["bottleneck"]["rate_bps"] = json!("x")).starts_with("engine.bottleneck.rate_bps: ")
        );
        assert!(bad(&|v| v["emu"]["colour"] = json!("red")).starts_with("emu.colour: unknown field `colour`"));
        assert!(bad(&|v| v["engine"]["colour"] = json!("red")).starts_with("engine.colour: unknown field"));
        assert_eq!(
            bad(&|v| {
                v["engine"]["bottleneck"].as_object_mut().unwrap().remove("buffer_pkts");
            }),
            "engine.bottleneck: exactly one of buffer_pkts and buffer_bytes must be given"
        );
        assert!(bad(&|v| v["emu"]["offload"] = json!("yes")).starts_with("emu.offload: invalid type"));
        assert_eq!(
            bad(&|v| {
                v["emu"].as_object_mut().unwrap().remove("offload");
            }),
            "emu: missing field `offload`"
        );
        assert!(bad(&|v| v["emu"]["stalls"] = json!("wait")).starts_with("emu.stalls: unknown variant `wait`"));
        assert_eq!(bad(&|v| v["emu"]["max_packet"] = json!(100)), "emu.max_packet: must be in [576, 65599]");
        assert_eq!(
            bad(&|v| v["engine"]["bottleneck"]["loss_model"] = json!({"kind": "periodic", "period": 10})),
            "engine.bottleneck.loss_model: the emulator runs Bernoulli loss only"
        );
    }

    #[test]
    fn reads_link_models_for_both_links() {
        let mut v = good();
        v["engine"]["bottleneck"]["delay_ns"] = json!(1_000_000);
        v["engine"]["bottleneck"]["model"] = json!({
            "trace": {"opportunities_ms": [1, 1, 3], "mode": "ideal", "once": true},
            "jitter": {"dist": "uniform", "max_ns": 2_000_000, "delay_steps": [[5000, 3_000_000]]},
            "policer": {"rate_bps": 10_000_000, "burst_bytes": 15_000}
        });
        v["engine"]["reverse"]["model"] = json!({
            "schedule": [[0, 5_000_000], [1000, 0], [2000, 7_000_000]],
            "batch": {"kind": "periodic", "every_ns": 20_000_000, "phase_ns": 5_000_000},
            "shaper": {"rate_bps": 1_000_000, "burst_bytes": 3000},
            "jitter": {"dist": "normal", "mean_ns": 1000, "sd_ns": 10, "reorder": true}
        });
        let c = parse(&v).unwrap();
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
        assert!(parse(&good()).unwrap().engine.fwd.model.is_ideal());
    }

    #[test]
    fn names_the_bad_model_key() {
        let bad = |model: Value| {
            let mut v = good();
            v["engine"]["bottleneck"]["model"] = model;
            parse(&v).unwrap_err()
        };
        assert_eq!(
            bad(json!({"jitter": {"dist": "uniform"}})),
            "engine.bottleneck.model.jitter: max_ns: missing for this dist"
        );
        assert!(bad(json!({"jitter": {"dist": "pareto", "max_ns": 1}}))
            .starts_with("engine.bottleneck.model.jitter.dist: unknown variant `pareto`"));
        assert_eq!(
            bad(json!({"shaper": {"rate_bps": 0, "burst_bytes": 1}})),
            "engine.bottleneck.model: shaper.rate: expected a rate above 0"
        );
        assert_eq!(
            bad(json!({"schedule": [[5, 100]]})),
            "engine.bottleneck.model: capacity.schedule: expected its first change at 0s"
        );
        assert!(bad(json!({"colour": 1})).starts_with("engine.bottleneck.model.colour: unknown field"));
        assert_eq!(
            bad(
                json!({"jitter": {"delay_steps": [[0, 1000]]}, "schedule": [[0, 1]], "trace": {"opportunities_ms": [1], "mode": "ideal"}})
            ),
            "engine.bottleneck.model: schedule and trace: expected at most one of them"
        );
        let mut v = good();
        v["engine"]["bottleneck"]["delay_ns"] = json!(30_000_000);
        v["engine"]["bottleneck"]["model"] = json!({"jitter": {"delay_steps": [[5000, 3_000_000]]}});
        assert_eq!(parse(&v).unwrap_err(), "engine.bottleneck.delay_ns: longer than a flow's one-way delay");
    }

    /// A network: links 2 and on, every link's own delay, every flow's route.
    #[test]
    fn reads_a_network() {
        let mut v = good();
        let link = |bytes: Option<u64>| {
            let mut l = json!({"rate_bps": 50_000_000, "delay_ns": 4_000_000, "loss": 0.0});
            match bytes {
                Some(b) => l["buffer_bytes"] = json!(b),
                None => l["buffer_pkts"] = json!(100),
            }
            l
        };
        let mut l2 = link(Some(150_000));
        l2["loss"] = json!(0.01);
        l2["qdisc"] = json!({"kind": "codel"});
        v["engine"]["network"] = json!({
            "links": [l2, link(None)],
            "routes": [{"data": [2, 0], "ack": [1, 3], "measure": 0}, {"data": [0], "ack": [1], "measure": 0}],
            "names": ["a", "a_rev", "b", "c"]
        });
        let c = parse(&v).unwrap();
        let e = &c.engine;
        assert_eq!(e.links.len(), 2);
        assert_eq!(
            (e.links[0].rate_bps, e.links[0].limit, e.links[0].delay_ns),
            (50_000_000, QueueLimit::Bytes(150_000), 4_000_000)
        );
        assert_eq!((e.links[0].loss, e.fwd.delay_ns), (0.01, 5_000_000));
        assert!(matches!(e.links[0].qdisc, QdiscConfig::Codel(_)));
        assert_eq!(e.links[1].limit, QueueLimit::Packets(100));
        assert_eq!(e.routes[0], Route { data: vec![2, 0], ack: vec![1, 3], measure: 0 });
        assert_eq!(e.routes[1], Route { data: vec![0], ack: vec![1], measure: 0 });
        // Each mistake is refused with its field.
        let bad = |f: &dyn Fn(&mut Value)| {
            let mut w = v.clone();
            f(&mut w);
            parse(&w).unwrap_err()
        };
        for (e, field) in [
            (
                bad(&|w| w["engine"]["network"]["links"][1]["loss"] = json!(1.5)),
                "engine.network.links[1].loss: must be",
            ),
            (
                bad(&|w| {
                    w["engine"]["network"]["routes"].as_array_mut().unwrap().pop();
                }),
                "engine.network.routes: expected one route per flow",
            ),
            (bad(&|w| w["engine"]["network"]["routes"][0]["data"][1] = json!(4)), "engine.network.routes[0]: link 4"),
            (
                bad(&|w| w["engine"]["network"]["routes"][0]["measure"] = json!(3)),
                "engine.network.routes[0].measure: the measured link 3",
            ),
            (bad(&|w| w["engine"]["network"]["routes"][0]["colour"] = json!(3)), "engine.network.routes[0].colour"),
            (
                bad(&|w| w["engine"]["network"]["links"][0]["delay_ns"] = json!(20_000_000)),
                "engine.network.routes[0]: flow 0's links take longer",
            ),
        ] {
            assert!(e.starts_with(field), "{e}");
        }
    }
}
