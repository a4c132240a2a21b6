//! `ccarena._core`: the compiled core seen from Python.
//!
//! Five functions cross the boundary: `cc_algorithms()` (the registry),
//! `qdisc_catalogue()` (the queue disciplines and their parameters),
//! `engine_schema()` (the JSON Schema of the engine configuration),
//! `cc_resolve(name, params)` (parameter validation with defaults filled in)
//! and `simulate(config)` (one whole run). The Python layer validates the
//! experiment file and hands `simulate` a fully resolved config of plain
//! integers; traces come back once, at the end, as little-endian column bytes.
//! The GIL is released while the engine runs.

use cc::registry::{self, ParamDefault, ParamKind, ParamValue};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString};
use sim::qdisc::{DefaultValue as QdiscDefault, ParamType as QdiscParamType};
use sim::{Column, Config};

mod pycc;
mod step;

fn param_value(v: &Bound<'_, PyAny>) -> PyResult<ParamValue> {
    if v.is_instance_of::<PyBool>() {
        Ok(ParamValue::Bool(v.extract()?))
    } else if v.is_instance_of::<PyInt>() {
        Ok(ParamValue::Int(v.extract()?))
    } else if v.is_instance_of::<PyFloat>() {
        Ok(ParamValue::Float(v.extract()?))
    } else if v.is_instance_of::<PyString>() {
        Ok(ParamValue::Str(v.extract()?))
    } else {
        Err(PyValueError::new_err(format!("expected a boolean, number or string, got {}", v.get_type().name()?)))
    }
}

fn py_value<'py>(py: Python<'py>, v: &ParamValue) -> PyResult<PyObject> {
    Ok(match v {
        ParamValue::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        ParamValue::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        ParamValue::Float(x) => x.into_pyobject(py)?.into_any().unbind(),
        ParamValue::Str(s) => s.into_pyobject(py)?.into_any().unbind(),
    })
}

fn params_from(d: Option<Bound<'_, PyDict>>) -> PyResult<Vec<(String, ParamValue)>> {
    let mut out = Vec::new();
    if let Some(d) = d {
        for (k, v) in d.iter() {
            let k: String = k.extract()?;
            let pv = param_value(&v).map_err(|e| PyValueError::new_err((k.clone(), e.to_string())))?;
            out.push((k, pv));
        }
    }
    Ok(out)
}

/// Events handled between two checks for signals (about 0.1 s of engine time).
const SLICE_EVENTS: u64 = 2_000_000;

/// The registry as a list of dicts: name, summary, source, default_recovery,
/// unconfirmed, needs_pacing, needs_ecn, needs_accecn, randomized (draws random numbers),
/// params (name, type, default, min, max, choices, doc).
#[pyfunction]
fn cc_algorithms(py: Python<'_>) -> PyResult<Py<PyList>> {
    let list = PyList::empty(py);
    for a in registry::all_algorithms() {
        let d = PyDict::new(py);
        d.set_item("name", a.name)?;
        d.set_item("summary", a.summary)?;
        d.set_item("source", a.source)?;
        d.set_item("default_recovery", a.default_recovery)?;
        d.set_item("unconfirmed", a.unconfirmed)?;
        d.set_item("needs_pacing", a.needs_pacing)?;
        d.set_item("needs_ecn", a.needs_ecn)?;
        d.set_item("needs_accecn", a.needs_accecn)?;
        d.set_item("randomized", a.randomized)?;
        let ps = PyList::empty(py);
        for p in a.params {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            pd.set_item("doc", p.doc)?;
            match p.kind {
                ParamKind::Bool => pd.set_item("type", "bool")?,
                ParamKind::Int { min, max } => {
                    pd.set_item("type", "int")?;
                    pd.set_item("min", min)?;
                    pd.set_item("max", max)?;
                }
                ParamKind::Float { min, max } => {
                    pd.set_item("type", "float")?;
                    pd.set_item("min", min)?;
                    pd.set_item("max", max)?;
                }
                ParamKind::Choice(c) => {
                    pd.set_item("type", "choice")?;
                    pd.set_item("choices", c.to_vec())?;
                }
            }
            match p.default {
                ParamDefault::Bool(b) => pd.set_item("default", b)?,
                ParamDefault::Int(i) => pd.set_item("default", i)?,
                ParamDefault::Float(x) => pd.set_item("default", x)?,
                ParamDefault::Str(s) => pd.set_item("default", s)?,
            }
            ps.append(pd)?;
        }
        d.set_item("params", ps)?;
        list.append(d)?;
    }
    Ok(list.unbind())
}

/// The queue disciplines as a list of dicts: name, summary, source, params
/// (name, type ("float", "int", "bool" or "choice"), default, doc; numbers
/// also min, max, min_open and max_open (true: the bound itself is outside),
/// unit (None, "ns" or "bytes") and exceeds (the parameter this one must be
/// greater than, or None); choices). This is the engine's own table: the
/// engine checks a configuration against it, and the Python validation reads
/// it. The link table's `qdisc` dict takes `kind` = name plus any of these
/// parameters.
#[pyfunction]
fn qdisc_catalogue(py: Python<'_>) -> PyResult<Py<PyList>> {
    let list = PyList::empty(py);
    for q in sim::qdisc_catalogue() {
        let d = PyDict::new(py);
        d.set_item("name", q.name)?;
        d.set_item("summary", q.summary)?;
        d.set_item("source", q.source)?;
        let ps = PyList::empty(py);
        for p in q.params {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            pd.set_item("doc", p.doc)?;
            if p.choices.is_empty() {
                pd.set_item("type", p.ty.name())?;
            } else {
                pd.set_item("type", "choice")?;
                pd.set_item("choices", p.choices.to_vec())?;
            }
            match p.ty {
                QdiscParamType::Int => {
                    pd.set_item("min", p.min.map(|x| x as i64))?;
                    pd.set_item("max", p.max.map(|x| x as i64))?;
                }
                QdiscParamType::Float => {
                    pd.set_item("min", p.min)?;
                    pd.set_item("max", p.max)?;
                }
                _ => {}
            }
            if matches!(p.ty, QdiscParamType::Int | QdiscParamType::Float) {
                pd.set_item("min_open", p.min_open)?;
                pd.set_item("max_open", p.max_open)?;
                pd.set_item("unit", p.unit.name())?;
                pd.set_item("exceeds", p.exceeds)?;
            }
            match p.default {
                QdiscDefault::Bool(b) => pd.set_item("default", b)?,
                QdiscDefault::Int(i) => pd.set_item("default", i)?,
                QdiscDefault::Float(x) => pd.set_item("default", x)?,
                QdiscDefault::Str(s) => pd.set_item("default", s)?,
            }
            ps.append(pd)?;
        }
        d.set_item("params", ps)?;
        list.append(d)?;
    }
    Ok(list.unbind())
}

/// Validates an algorithm's parameters and returns them with defaults filled
/// in. Raises `ValueError((param_or_None, message))` on bad input.
#[pyfunction]
#[pyo3(signature = (name, params=None))]
fn cc_resolve(py: Python<'_>, name: &str, params: Option<Bound<'_, PyDict>>) -> PyResult<Py<PyDict>> {
    let given = params_from(params)?;
    let resolved = registry::resolve_params(name, &given).map_err(|e| PyValueError::new_err((e.param, e.message)))?;
    let d = PyDict::new(py);
    for (k, v) in &resolved.0 {
        d.set_item(k, py_value(py, v)?)?;
    }
    Ok(d.unbind())
}

/// The engine configuration's JSON Schema, as JSON text: every field of the
/// dict `simulate` takes, made from the Rust types (see [`sim::config_form`]).
#[pyfunction]
fn engine_schema() -> String {
    sim::config_form::schema().to_string()
}

/// The engine configuration from its dict (the keys of [`sim::config_form`]),
/// in one deserialisation. A refusal is a ValueError of one line naming the
/// field path, as the engine's own checks do: `flows[2].recovery: unknown
/// variant ...`.
pub(crate) fn config_from(config: &Bound<'_, PyAny>) -> PyResult<Config> {
    sim::read_config(&mut pythonize::Depythonizer::from_object(config)).map_err(PyValueError::new_err)
}

/// Bits `link` (an engine link's dict) can carry from `t0_ns` to `t1_ns`: the
/// integral of its rate schedule, its trace's opportunities in `(t0_ns, t1_ns]`
/// times one MTU (as [`sim::linkmodel::Capacity::bits_between`] counts them),
/// or its constant rate times the span. Utilisation's denominator, computed
/// by the same code that serves the link.
#[pyfunction]
fn link_capacity_bits(link: &Bound<'_, PyAny>, t0_ns: u64, t1_ns: u64) -> PyResult<f64> {
    let l: sim::LinkConfig =
        sim::config_form::read(&mut pythonize::Depythonizer::from_object(link)).map_err(PyValueError::new_err)?;
    let t1_ns = t1_ns.max(t0_ns);
    Ok(match &l.model.capacity {
        Some(c) => sim::linkmodel::Capacity::new(c).bits_between(t0_ns * sim::event::PS_PER_NS, t1_ns * sim::event::PS_PER_NS),
        None => l.rate_bps as f64 * (t1_ns - t0_ns) as f64 / 1e9,
    })
}

fn columns<'py>(py: Python<'py>, cols: &[(&'static str, Column)]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in cols {
        let (dtype, bytes): (&str, Vec<u8>) = match col {
            Column::U64(v) => ("<u8", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
            Column::U32(v) => ("<u4", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
            Column::F64(v) => ("<f8", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        };
        d.set_item(*name, (dtype, PyBytes::new(py, &bytes)))?;
    }
    Ok(d)
}

/// Runs one simulation from a resolved config dict and returns its raw output:
/// `flows_trace` and `queue_trace` (column name → (numpy dtype, bytes)),
/// `flows` (per-flow statistics), `queue`, `conservation` and `stats`.
/// With `sink`, the trace goes to it instead, in chunks of at least
/// `chunk_rows` flow rows (whole intervals) as the run goes and the rest at
/// the end (see `hand_over`); the returned traces are then empty. The engine
/// runs `slice_events` events between looks at signals, progress and the sink.
/// Hands the trace rows recorded so far to `sink(flows_trace, queue_trace, flows)`:
/// columns as in `simulate`'s output, and per foreground flow a dict of `id`,
/// `cc`, `metric_names`, `start_ns` and `end_ns` (None while not known: the flow
/// has neither completed nor reached its stop time).
fn hand_over(py: Python<'_>, engine: &mut sim::Simulator, sink: &PyObject) -> PyResult<()> {
    let ends = engine.flow_ends_so_far();
    let names = engine.flow_metric_names();
    let flows = PyList::empty(py);
    for (i, ((cc, start_ns), (end, names))) in
        engine.flow_identities().into_iter().zip(ends.into_iter().zip(names)).enumerate()
    {
        let fd = PyDict::new(py);
        fd.set_item("id", i)?;
        fd.set_item("cc", cc)?;
        fd.set_item("metric_names", names)?;
        fd.set_item("start_ns", start_ns)?;
        fd.set_item("end_ns", end)?;
        flows.append(fd)?;
    }
    let (flow_cols, queue_cols) = engine.take_trace();
    sink.call1(py, (columns(py, &flow_cols)?, columns(py, &queue_cols)?, flows))?;
    Ok(())
}

/// The packet log's rows as columns (name → (numpy dtype, bytes)), which
/// it then forgets, keeping its buffers for the next chunk.
fn packet_columns<'py>(py: Python<'py>, engine: &mut sim::Simulator) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, dtype, bytes) in engine.packet_log().columns() {
        d.set_item(name, (dtype, PyBytes::new(py, &bytes)))?;
    }
    engine.clear_packet_log();
    Ok(d)
}

/// With `packets` = (from_ns, to_ns), the engine also logs every packet
/// event at the links in that window (see `sim::packet_log`): to
/// `packet_sink(columns)` in chunks of at least `chunk_rows` rows as the run
/// goes and the rest at the end, or without a sink as `packets` in the output.
#[pyfunction]
#[pyo3(signature = (config, progress=None, sink=None, chunk_rows=65536, slice_events=SLICE_EVENTS, packets=None, packet_sink=None))]
#[allow(clippy::too_many_arguments)]
fn simulate(
    py: Python<'_>,
    config: Bound<'_, PyDict>,
    progress: Option<PyObject>,
    sink: Option<PyObject>,
    chunk_rows: usize,
    slice_events: u64,
    packets: Option<(u64, u64)>,
    packet_sink: Option<PyObject>,
) -> PyResult<Py<PyDict>> {
    // Every refusal is a ValueError whose text is "<engine field>: <what is
    // wrong>": a missing or mistyped key of the config (a front-end mistake)
    // as much as a value outside what the engine represents.
    let cfg = config_from(config.as_any())?;
    let mut engine = sim::Simulator::new(&cfg).map_err(PyValueError::new_err)?;
    if sink.is_some() {
        engine.set_trace_chunk_rows(chunk_rows);
    }
    if let Some((from_ns, to_ns)) = packets {
        let rows = if packet_sink.is_some() { chunk_rows } else { usize::MAX };
        engine.set_packet_log(from_ns, to_ns, rows).map_err(PyValueError::new_err)?;
    }
    // A Python algorithm's hooks need the GIL: keep it for the whole run then.
    let keep_gil = pycc::uses_python(&cfg) && std::env::var_os("CCARENA_PYCC_RELEASE_GIL").is_none();
    pycc::clear_error();
    let t0 = std::time::Instant::now();
    let mut writing = std::time::Duration::ZERO;
    // In slices of about a tenth of a second, so that Ctrl-C and SIGTERM take effect
    // (the signal handlers run between slices) and progress can be drawn.
    loop {
        let done = if keep_gil {
            engine.run_events(slice_events.max(1))
        } else {
            py.allow_threads(|| engine.run_events(slice_events.max(1)))
        };
        if let Some(e) = pycc::take_error() {
            return Err(e);
        }
        py.check_signals()?;
        if let Some(cb) = &progress {
            cb.call1(py, (engine.now_ns(), engine.bottleneck_data_packets(), t0.elapsed().as_secs_f64()))?;
        }
        if let Some(sink) = &sink {
            if done || engine.trace_rows() >= chunk_rows {
                let before = std::time::Instant::now();
                hand_over(py, &mut engine, sink)?;
                writing += before.elapsed();
            }
        }
        if let Some(psink) = &packet_sink {
            let rows = engine.packet_log().len();
            if rows > 0 && (done || rows >= chunk_rows) {
                let before = std::time::Instant::now();
                psink.call1(py, (packet_columns(py, &mut engine)?,))?;
                writing += before.elapsed();
            }
        }
        if done {
            break;
        }
    }
    // The engine's own time: without the sink's (writing the trace away).
    let packet_log = match (packets, &packet_sink) {
        (Some(_), None) => Some(packet_columns(py, &mut engine)?),
        _ => None,
    };
    let out = engine.finish((t0.elapsed() - writing).as_secs_f64()).map_err(PyRuntimeError::new_err)?;
    output_dict(py, out, packet_log)
}

/// The output dict of `simulate` (and of a stepped run's `finish`) from the
/// engine's output; `packet_log`: the packet log's columns when kept in memory.
pub(crate) fn output_dict(
    py: Python<'_>,
    out: sim::Output,
    packet_log: Option<Bound<'_, PyDict>>,
) -> PyResult<Py<PyDict>> {
    let d = PyDict::new(py);
    if let Some(p) = packet_log {
        d.set_item("packets", p)?;
    }
    d.set_item("flows_trace", columns(py, &out.flow_columns)?)?;
    d.set_item("queue_trace", columns(py, &out.queue_columns)?)?;
    let flows = PyList::empty(py);
    for f in &out.flows {
        let fd = PyDict::new(py);
        fd.set_item("id", f.id)?;
        fd.set_item("cc", &f.cc)?;
        fd.set_item("recovery", f.recovery)?;
        fd.set_item("metric_names", f.metric_names.to_vec())?;
        for (k, v) in f.counters() {
            fd.set_item(k, v)?;
        }
        fd.set_item("completion_ns", f.completion_ns)?;
        for (k, v) in f.rtt_quantiles_us() {
            fd.set_item(k, v)?;
        }
        fd.set_item("link_bytes", f.link_bytes.clone())?;
        flows.append(fd)?;
    }
    d.set_item("flows", flows)?;
    let q = PyDict::new(py);
    for (k, v) in out.queue.counters() {
        q.set_item(k, v)?;
    }
    for (k, v) in out.queue.delay_quantiles_us() {
        q.set_item(k, v)?;
    }
    d.set_item("queue", q)?;
    let links = PyList::empty(py);
    for l in &out.links {
        let ld = PyDict::new(py);
        ld.set_item("name", &l.name)?;
        ld.set_item("rate_bps", l.rate_bps)?;
        ld.set_item("qdisc", l.qdisc)?;
        for (k, v) in [
            ("arrivals", l.arrivals),
            ("drops", l.drops),
            ("random_drops", l.random_drops),
            ("aqm_drops", l.aqm_drops),
            ("marks", l.marks),
            ("tx_packets", l.tx_packets),
            ("tx_bytes", l.tx_bytes),
            ("max_backlog_pkts", l.max_backlog_pkts),
        ] {
            ld.set_item(k, v)?;
        }
        let us = |v: Option<f64>| v.map(|x| x / 1_000.0);
        ld.set_item("delay_mean_us", us(l.delay.mean()))?;
        ld.set_item("delay_p50_us", us(l.delay.quantile(0.5)))?;
        ld.set_item("delay_p99_us", us(l.delay.quantile(0.99)))?;
        if l.modelled {
            for (k, v) in &l.model_counters {
                ld.set_item(*k, *v)?;
            }
        }
        links.append(ld)?;
    }
    d.set_item("links", links)?;
    d.set_item("link_trace", columns(py, &out.link_columns)?)?;
    let c = PyDict::new(py);
    for (k, v) in out.conservation.fields() {
        c.set_item(k, v)?;
    }
    d.set_item("conservation", c)?;
    let t = &out.transfers;
    let transfer_cols: sim::Columns = vec![
        ("source", Column::U32(t.iter().map(|r| r.source).collect())),
        ("session", Column::U32(t.iter().map(|r| r.session.unwrap_or(u32::MAX)).collect())),
        ("size_bytes", Column::U64(t.iter().map(|r| r.size_bytes).collect())),
        ("start_ns", Column::U64(t.iter().map(|r| r.start_ns).collect())),
        ("fct_ns", Column::U64(t.iter().map(|r| r.fct_ns.unwrap_or(u64::MAX)).collect())),
        ("rtt_ns", Column::U64(t.iter().map(|r| r.rtt_ns).collect())),
        ("reverse", Column::U32(t.iter().map(|r| r.reverse as u32).collect())),
        ("delivered_bytes", Column::U64(t.iter().map(|r| r.delivered_bytes).collect())),
    ];
    d.set_item("transfers", columns(py, &transfer_cols)?)?;
    let sources = PyList::empty(py);
    for src in &out.sources {
        let sd = PyDict::new(py);
        sd.set_item("name", &src.name)?;
        sd.set_item("kind", src.kind)?;
        sd.set_item("offered_bytes", src.offered_bytes)?;
        sd.set_item("delivered_bytes", src.delivered_bytes)?;
        sd.set_item("started", src.started)?;
        sd.set_item("completed", src.completed)?;
        sd.set_item("active_from_ns", src.active_from_ns)?;
        sd.set_item("active_to_ns", src.active_to_ns)?;
        sources.append(sd)?;
    }
    d.set_item("sources", sources)?;
    let s = PyDict::new(py);
    s.set_item("peak_flow_slots", out.peak_flow_slots)?;
    s.set_item("events", out.events)?;
    s.set_item("bottleneck_data_packets", out.bottleneck_data_packets)?;
    s.set_item("engine_seconds", out.engine_seconds)?;
    d.set_item("stats", s)?;
    Ok(d.unbind())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cc_algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(cc_resolve, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(qdisc_catalogue, m)?)?;
    m.add_function(wrap_pyfunction!(engine_schema, m)?)?;
    m.add_function(wrap_pyfunction!(link_capacity_bits, m)?)?;
    m.add_class::<step::Stepper>()?;
    pycc::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("__rustc__", env!("CCARENA_RUSTC_VERSION"))?;
    // The engine's receive window for `receive_window = "linux"`, from the one definition
    // (crates/sim/src/tcp/rcvwnd.rs), so that Python writes the same numbers into the engine's file.
    let linux = sim::tcp::rcvwnd::RcvBufConfig::LINUX;
    let rw = PyDict::new(m.py());
    rw.set_item("rmem_default", linux.rmem_default)?;
    rw.set_item("rmem_max", linux.rmem_max)?;
    rw.set_item("truesize", linux.truesize)?;
    m.add("LINUX_RECEIVE_WINDOW", rw)?;
    Ok(())
}
