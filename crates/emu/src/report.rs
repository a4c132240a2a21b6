//! The emulator's output folder, read by `ccarena.emulate`:
//!
//! ```text
//! emu.json                     scalars: per-flow and queue statistics, timing, columns index
//! flows_trace.<name>.bin       per flow per interval: t_ns, flow, bottleneck_bytes
//! queue_trace.<name>.bin       per interval: t_ns, backlog_bytes, backlog_pkts, drops, tx_bytes
//! link_trace.<name>.bin        per link per interval (networks): t_ns, link, backlog, drops, marks, tx_bytes
//! packets.<name>.bin           with a packet log only: one row per packet event in its window, the
//!                              simulator's columns (sim::packet_log::PacketLog::columns)
//! ```
//!
//! Columns are little-endian arrays with numpy dtype strings, the same form
//! the simulator hands to Python.

use crate::engine::Engine;
use sim::hist::Histogram;
use sim::Column;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

/// Facts about the run that the engine does not know.
pub struct RunInfo {
    pub realtime: bool,
    pub realtime_error: Option<String>,
    pub spin_ns: u64,
    pub wall_seconds: f64,
    pub write_errors: u64,
    /// Reads from the devices (a TSO super-packet is one).
    pub read_packets: u64,
    /// Packets those reads carried on the wire (super-packets split).
    pub wire_packets: u64,
    /// Whether the devices were opened with TSO and checksum offload.
    pub offload: bool,
    /// Naps taken to keep the CPU share under Linux's real-time throttling limit.
    pub forced_sleeps: u64,
    /// CPU seconds the emulator used during the measurement.
    pub measured_cpu_seconds: Option<f64>,
    /// Seconds of the measurement spent working: reading, writing and
    /// running the bottleneck, not waiting or busy-polling for work.
    pub busy_seconds: Option<f64>,
    /// Duration of write(2) to a device, ns.
    pub write_ns: Histogram,
    /// Timer wake-up overshoot, ns.
    pub wake_ns: Histogram,
    /// Whether the CPUs were kept out of halt (PM QoS).
    pub cpu_latency_qos: bool,
    /// The CPU the emulator ran on, if pinned.
    pub pinned_cpu: Option<usize>,
}

fn num(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v}"),
        _ => "null".into(),
    }
}

fn string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `"<prefix>min": .., "<prefix>mean": .., p50, p99, max` of a histogram, scaled by `div`.
fn quantiles(h: &Histogram, prefix: &str, unit: &str, div: f64) -> String {
    let s = |v: Option<f64>| num(v.map(|x| x / div));
    format!(
        "\"{prefix}min_{unit}\": {}, \"{prefix}mean_{unit}\": {}, \"{prefix}p50_{unit}\": {}, \
         \"{prefix}p99_{unit}\": {}, \"{prefix}max_{unit}\": {}, \"{prefix}count\": {}",
        s(h.min().map(|v| v as f64)),
        s(h.mean()),
        s(h.quantile(0.5)),
        s(h.quantile(0.99)),
        s(h.max().map(|v| v as f64)),
        h.count()
    )
}

fn write_columns(dir: &Path, table: &str, cols: &[(&'static str, Column)]) -> io::Result<String> {
    let mut index = Vec::new();
    for (name, col) in cols {
        let (dtype, bytes): (&str, Vec<u8>) = match col {
            Column::U64(v) => ("<u8", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
            Column::U32(v) => ("<u4", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
            Column::F64(v) => ("<f8", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        };
        let file = format!("{table}.{name}.bin");
        std::fs::write(dir.join(&file), bytes)?;
        index.push(format!("[{}, {}, {}]", string(name), string(dtype), string(&file)));
    }
    Ok(format!("[{}]", index.join(", ")))
}

/// Writes the output folder (created if missing).
pub fn write(dir: &Path, engine: &mut Engine, info: &RunInfo) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let (flow_cols, queue_cols) = engine.take_columns();
    let flows_index = write_columns(dir, "flows_trace", &flow_cols)?;
    let queue_index = write_columns(dir, "queue_trace", &queue_cols)?;
    let link_cols = engine.take_link_columns();
    let link_index = write_columns(dir, "link_trace", &link_cols)?;
    // The packet log's columns, only when the experiment asked for one (emu.json is otherwise unchanged).
    let packets_index = if engine.logs_packets() {
        let mut index = Vec::new();
        for (name, dtype, bytes) in engine.packet_log().columns() {
            let file = format!("packets.{name}.bin");
            std::fs::write(dir.join(&file), bytes)?;
            index.push(format!("[{}, {}, {}]", string(name), string(dtype), string(&file)));
        }
        format!(", \"packets\": [{}]", index.join(", "))
    } else {
        String::new()
    };

    let reports = engine.flow_reports();
    let n = engine.n_flows();
    let flow_json = |i: usize| {
        let r = &reports[i];
        let link_bytes: Vec<String> = r.link_bytes.iter().map(|(l, b)| format!("[{l}, {b}]")).collect();
        format!(
            "{{\"id\": {i}, \"bottleneck_bytes\": {}, \"drops\": {}, \"payload_bytes\": {}, \
             \"payload_total\": {}, \"link_bytes\": [{}], {}}}",
            r.bottleneck_bytes,
            r.drops,
            r.payload_bytes,
            r.payload_total,
            link_bytes.join(", "),
            quantiles(&r.rtt, "rtt_", "us", 1.0)
        )
    };
    let flows: Vec<String> = (0..n).map(flow_json).collect();
    let other = flow_json(n);

    let fwd = engine.forward_port();
    let rev = engine.reverse_port();
    let (qd, rqd) = engine.queue_delay();
    let aqm = engine.aqm_counts();
    let us = |v: Option<f64>| num(v.map(|x| x / 1000.0));
    let queue = format!(
        "{{\"arrivals\": {}, \"drops\": {}, \"random_drops\": {}, \"tx_packets\": {}, \"tx_bytes\": {}, \
         \"max_backlog_pkts\": {}, \"reverse_drops\": {}, \"delay_mean_us\": {}, \"delay_p50_us\": {}, \
         \"delay_p99_us\": {}, \"reverse_delay_p50_us\": {}, \"reverse_delay_p99_us\": {}, \"marks\": {}, \
         \"aqm_drops\": {}, \"reverse_marks\": {}}}",
        fwd.arrivals,
        fwd.drops,
        fwd.random_drops,
        fwd.tx_packets,
        fwd.tx_bytes,
        fwd.max_backlog_pkts,
        rev.drops,
        us(qd.mean()),
        us(qd.quantile(0.5)),
        us(qd.quantile(0.99)),
        us(rqd.quantile(0.5)),
        us(rqd.quantile(0.99)),
        aqm[0].0,
        aqm[0].1,
        aqm[1].0,
    );
    // Every link as the simulator reports its links (summary.json's `links`
    // in a network or when a link has models), with what their models did;
    // the front end names a network's links.
    let links: Vec<String> = (0..engine.n_links())
        .map(|p| {
            let (port, delay) = (engine.port_counters(p), engine.link_delay(p));
            let name = match p {
                0 => "forward".to_string(),
                1 => "reverse".to_string(),
                _ => format!("link{p}"),
            };
            let mut extra = String::new();
            if engine.modelled(p) {
                for (k, v) in engine.model_counters(p) {
                    let _ = write!(extra, ", {}: {v}", string(k));
                }
            }
            format!(
                "{{\"name\": {}, \"rate_bps\": {}, \"qdisc\": {}, \"arrivals\": {}, \"drops\": {}, \
                 \"random_drops\": {}, \"aqm_drops\": {}, \"marks\": {}, \"tx_packets\": {}, \"tx_bytes\": {}, \
                 \"max_backlog_pkts\": {}, \"delay_mean_us\": {}, \"delay_p50_us\": {}, \"delay_p99_us\": {}{extra}}}",
                string(&name),
                engine.link(p).rate_bps,
                string(engine.link(p).qdisc.name()),
                port.arrivals,
                port.drops,
                port.random_drops,
                aqm[p].1,
                aqm[p].0,
                port.tx_packets,
                port.tx_bytes,
                port.max_backlog_pkts,
                us(delay.mean()),
                us(delay.quantile(0.5)),
                us(delay.quantile(0.99)),
            )
        })
        .collect();
    let c = engine.snapshot().unwrap_or_else(|| engine.conservation());
    // Each link's packets since the emulator started: arrived = sent + dropped + held.
    let per_link: Vec<String> = engine
        .link_conservation()
        .iter()
        .map(|l| {
            format!(
                "{{\"arrived\": {}, \"sent\": {}, \"dropped\": {}, \"held\": {}}}",
                l.arrived, l.sent, l.dropped, l.held
            )
        })
        .collect();
    let conservation = format!(
        "{{\"created\": {}, \"delivered\": {}, \"dropped\": {}, \"queued\": {}, \"in_flight\": {}, \
         \"links\": [{}]}}",
        c.created,
        c.delivered,
        c.dropped,
        c.queued,
        c.in_flight,
        per_link.join(", ")
    );
    let (late_f, late_r) = engine.lateness();
    let stalls = engine.stalls();
    let timing = format!(
        "{{\"realtime\": {}, \"realtime_error\": {}, \"cpu_latency_qos\": {}, \"cpu\": {}, \"spin_us\": {}, \"wall_seconds\": {}, \
         \"write_errors\": {}, \"read_packets\": {}, \"wire_packets\": {}, \"offload\": {}, \"super_packets\": {}, \
         \"bad_frames\": {}, \"coalesced_writes\": {}, \"coalesced_packets\": {}, \"forced_sleeps\": {}, \"cpu_seconds\": {}, \"busy_seconds\": {}, \"not_ipv4\": {}, {}, {}, {}, {}, {}, \
         \"stalls\": {}, \"stall_total_ms\": {}, \"stall_longest_ms\": {}, \"stall_mode\": \"{}\"}}",
        info.realtime,
        info.realtime_error.as_deref().map(string).unwrap_or_else(|| "null".into()),
        info.cpu_latency_qos,
        info.pinned_cpu.map(|c| c.to_string()).unwrap_or_else(|| "null".into()),
        info.spin_ns as f64 / 1000.0,
        num(Some(info.wall_seconds)),
        info.write_errors,
        info.read_packets,
        info.wire_packets,
        info.offload,
        engine.super_packets(),
        engine.bad_frames(),
        engine.coalesced().0,
        engine.coalesced().1,
        info.forced_sleeps,
        num(info.measured_cpu_seconds),
        num(info.busy_seconds),
        engine.not_ipv4(),
        quantiles(late_f, "lateness_", "us", 1000.0),
        quantiles(late_r, "reverse_lateness_", "us", 1000.0),
        quantiles(&info.write_ns, "write_", "us", 1000.0),
        quantiles(&info.wake_ns, "wake_", "us", 1000.0),
        quantiles(engine.credit(), "credit_", "us", 1000.0),
        stalls.count,
        stalls.total as f64 / 1e9,
        stalls.longest as f64 / 1e9,
        if engine.config().pause_stalls { "pause" } else { "catch-up" },
    );
    let json = format!(
        "{{\n\"finished\": {},\n\"flows\": [{}],\n\"other\": {},\n\"queue\": {},\n\"links\": [{}],\n\"conservation\": {},\n\
         \"stats\": {{\"events\": {}, \"bottleneck_data_packets\": {}, \"engine_seconds\": {}}},\n\"timing\": {},\n\
         \"columns\": {{\"flows_trace\": {}, \"queue_trace\": {}, \"link_trace\": {}{}}}\n}}\n",
        engine.finished(),
        flows.join(",\n  "),
        other,
        queue,
        links.join(",\n  "),
        conservation,
        engine.events(),
        engine.bottleneck_data_packets(),
        num(Some(info.wall_seconds)),
        timing,
        flows_index,
        queue_index,
        link_index,
        packets_index,
    );
    let tmp = dir.join("emu.json.tmp");
    std::fs::write(&tmp, json)?;
    std::fs::rename(tmp, dir.join("emu.json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
        assert_eq!(num(Some(f64::NAN)), "null");
        assert_eq!(num(None), "null");
        assert_eq!(num(Some(1.5)), "1.5");
    }
}
