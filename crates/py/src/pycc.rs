//! Congestion control written in Python: an adapter that implements
//! [`CongestionControl`] by calling a Python object's methods.
//!
//! `ccarena.register_cc(cls)` (python/ccarena/pycc.py) hands the class's table
//! entry to [`register_py_cc`]; the entry goes into the same registry as the
//! built-ins (`cc::registry::register_external`), so parameters are checked
//! and defaulted by the same code and `cc_algorithms()` lists it. The engine
//! then builds a [`PyCc`] per flow through the registry's factory.
//!
//! Per hook call: the GIL (already held: `simulate` keeps it for the whole
//! run when a Python algorithm is present, see [`uses_python`]), one copy of
//! the socket into a reusable `Sock` view object, the call of a bound method
//! cached at construction, and for hooks that may write the socket one copy
//! back. Hooks the class does not define are not called: the trait's
//! default (Linux's behaviour) runs. The first exception ends the run: it is
//! kept in a per-thread slot (the engine runs on the calling thread) with the
//! algorithm, the hook and the simulated time, later hooks of that run are
//! skipped, and `simulate` raises `CcHookError(line, traceback)` after the
//! current slice of events.

use std::cell::RefCell;
use std::sync::Arc;

use cc::registry::{self, AlgoInfo, ParamDefault, ParamKind, ParamSpec, ParamValue, Params};
use cc::{AckSample, CaEvent, CaState, CcHeader, CongestionControl, ExternalCc, RateSample, Sock, MAX_METRICS};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

create_exception!(_core, CcHookError, PyRuntimeError, "A hook of a Python congestion-control algorithm raised.");

/// The socket as Python sees it (Linux `tcp_sock` names); one per flow, reused.
macro_rules! sock_view {
    ($($f:ident : $t:ty),* $(,)?) => {
        /// The socket state a hook reads and writes (the fields of Rust's
        /// `cc::Sock`, Linux `tcp_sock` names; windows in packets, times in
        /// microseconds, rates in bytes per second; `ca_state` an int:
        /// 0 Open, 1 Disorder, 2 CWR, 3 Recovery, 4 Loss).
        #[pyclass(name = "Sock", module = "ccarena._core")]
        pub struct PySock {
            $( #[pyo3(get, set)] pub $f: $t, )*
            #[pyo3(get, set)]
            pub ca_state: u8,
            /// Linux `tp->is_cwnd_limited` (the flag; `is_cwnd_limited()` is Linux's function).
            #[pyo3(get, set)]
            pub cwnd_limited: bool,
        }

        impl PySock {
            fn new(s: &Sock) -> PySock {
                PySock { $( $f: s.$f, )* ca_state: s.ca_state as u8, cwnd_limited: s.is_cwnd_limited }
            }
            #[inline]
            fn load(&mut self, s: &Sock) {
                $( self.$f = s.$f; )*
                self.ca_state = s.ca_state as u8;
                self.cwnd_limited = s.is_cwnd_limited;
            }
            #[inline]
            fn store(&self, s: &mut Sock) {
                $( s.$f = self.$f; )*
                s.ca_state = ca_state(self.ca_state);
                s.is_cwnd_limited = self.cwnd_limited;
            }
            fn sock(&self) -> Sock {
                let mut s = Sock::new(self.mss, self.snd_cwnd);
                self.store(&mut s);
                s
            }
        }
    };
}

sock_view!(
    now_us: u64,
    now_ns: u64,
    mss: u32,
    snd_cwnd: u32,
    snd_ssthresh: u32,
    snd_cwnd_cnt: u32,
    snd_cwnd_clamp: u32,
    prior_cwnd: u32,
    prior_ssthresh: u32,
    pacing_rate: u64,
    paced: bool,
    srtt_us: u64,
    min_rtt_us: u64,
    packets_out: u32,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    snd_una: u64,
    snd_nxt: u64,
    delivered: u64,
    delivered_ce: u64,
    lost: u64,
    max_packets_out: u32,
    app_limited: u64,
    wstamp_ns: u64,
    rng_seed: u64,
);

fn ca_state(v: u8) -> CaState {
    match v {
        0 => CaState::Open,
        1 => CaState::Disorder,
        2 => CaState::Cwr,
        3 => CaState::Recovery,
        _ => CaState::Loss,
    }
}

#[pymethods]
impl PySock {
    /// Linux `tcp_packets_in_flight`.
    fn packets_in_flight(&self) -> u32 {
        self.sock().packets_in_flight()
    }
    /// Linux `tcp_in_slow_start`: cwnd < ssthresh.
    fn in_slow_start(&self) -> bool {
        self.snd_cwnd < self.snd_ssthresh
    }
    /// Linux `tcp_is_cwnd_limited`.
    fn is_cwnd_limited(&self) -> bool {
        self.sock().is_cwnd_limited()
    }
}

/// Linux `struct ack_sample` plus `acked` (read-only for the hook).
#[pyclass(name = "AckSample", module = "ccarena._core", get_all)]
#[derive(Default)]
pub struct PyAck {
    acked: u32,
    rtt_us: i64,
    in_flight: u32,
    ece: bool,
    feedback: Option<i64>,
}

/// Linux `struct rate_sample` (read-only for the hook).
#[pyclass(name = "RateSample", module = "ccarena._core", get_all)]
#[derive(Default)]
pub struct PyRate {
    prior_mstamp_us: u64,
    prior_delivered: u64,
    delivered: i64,
    interval_us: i64,
    snd_interval_us: u64,
    rcv_interval_us: u64,
    rtt_us: i64,
    losses: u32,
    acked_sacked: u32,
    prior_in_flight: u32,
    is_app_limited: bool,
    is_retrans: bool,
    is_ack_delayed: bool,
    tx_in_flight: u32,
    lost: u32,
    delivered_ce: i64,
    is_ece: bool,
}

impl PyRate {
    fn load(&mut self, r: &RateSample) {
        *self = PyRate {
            prior_mstamp_us: r.prior_mstamp_us,
            prior_delivered: r.prior_delivered,
            delivered: r.delivered,
            interval_us: r.interval_us,
            snd_interval_us: r.snd_interval_us,
            rcv_interval_us: r.rcv_interval_us,
            rtt_us: r.rtt_us,
            losses: r.losses,
            acked_sacked: r.acked_sacked,
            prior_in_flight: r.prior_in_flight,
            is_app_limited: r.is_app_limited,
            is_retrans: r.is_retrans,
            is_ack_delayed: r.is_ack_delayed,
            tx_in_flight: r.tx_in_flight,
            lost: r.lost,
            delivered_ce: r.delivered_ce,
            is_ece: r.is_ece,
        };
    }
}

/// The per-packet congestion header `on_send` may write (XCP's H_cwnd, H_rtt, H_feedback).
#[pyclass(name = "CcHeader", module = "ccarena._core", get_all, set_all)]
#[derive(Default)]
pub struct PyHeader {
    cwnd_bytes: u64,
    rtt_us: u64,
    feedback: i64,
    has_feedback: bool,
}

const HOOKS: [&str; 11] = [
    "init",
    "ssthresh",
    "cong_avoid",
    "cong_control",
    "pkts_acked",
    "set_state",
    "cwnd_event",
    "undo_cwnd",
    "skb_marked_lost",
    "on_send",
    "metrics",
];
const INIT: usize = 0;
const SSTHRESH: usize = 1;
const CONG_AVOID: usize = 2;
const CONG_CONTROL: usize = 3;
const PKTS_ACKED: usize = 4;
const SET_STATE: usize = 5;
const CWND_EVENT: usize = 6;
const UNDO_CWND: usize = 7;
const SKB_MARKED_LOST: usize = 8;
const ON_SEND: usize = 9;
const METRICS: usize = 10;

/// The first exception of the run on this thread: (one line, traceback).
struct HookError {
    line: String,
    traceback: String,
}

thread_local! {
    static FAILED: RefCell<Option<HookError>> = const { RefCell::new(None) };
}

fn failed() -> bool {
    FAILED.with(|f| f.borrow().is_some())
}

/// Forgets an earlier run's failure on this thread (called before a run).
pub fn clear_error() {
    FAILED.with(|f| *f.borrow_mut() = None);
}

/// The failure of the run on this thread, as the exception `simulate` raises.
pub fn take_error() -> Option<PyErr> {
    FAILED.with(|f| f.borrow_mut().take()).map(|e| CcHookError::new_err((e.line, e.traceback)))
}

/// One registered class: what the factory needs.
struct Registered {
    name: &'static str,
    /// `make(params_dict)` → the algorithm object.
    make: PyObject,
    defined: [bool; HOOKS.len()],
    needs_ecn: bool,
    metric_names: &'static [&'static str],
}

/// One flow's Python algorithm.
pub struct PyCc {
    reg: Arc<Registered>,
    obj: PyObject,
    /// Bound methods, looked up once; `None` where the class has no such hook.
    methods: [Option<PyObject>; HOOKS.len()],
    sock: Py<PySock>,
    ack: Py<PyAck>,
    rate: Py<PyRate>,
    header: Py<PyHeader>,
}

impl PyCc {
    fn new(py: Python<'_>, reg: Arc<Registered>, obj: PyObject) -> PyResult<PyCc> {
        let mut methods: [Option<PyObject>; HOOKS.len()] = Default::default();
        for (k, hook) in HOOKS.iter().enumerate() {
            if reg.defined[k] {
                methods[k] = Some(obj.getattr(py, *hook)?);
            }
        }
        Ok(PyCc {
            reg,
            obj,
            methods,
            sock: Py::new(py, PySock::new(&Sock::new(1448, 10)))?,
            ack: Py::new(py, PyAck::default())?,
            rate: Py::new(py, PyRate::default())?,
            header: Py::new(py, PyHeader::default())?,
        })
    }

    /// Calls hook `k` with the socket loaded; `args` builds the call's
    /// arguments after the socket view. On an exception the run's failure is
    /// recorded and `None` returned. `write` copies the socket view back.
    #[inline]
    fn call<'py, A>(
        &self,
        py: Python<'py>,
        k: usize,
        tp: &Sock,
        args: impl FnOnce(Python<'py>, Bound<'py, PySock>) -> PyResult<A>,
    ) -> Option<Bound<'py, PyAny>>
    where
        A: IntoPyObject<'py, Target = PyTuple>,
    {
        let m = self.methods[k].as_ref()?;
        if failed() {
            return None;
        }
        let sock = self.sock.bind(py).clone();
        sock.borrow_mut().load(tp);
        let r = args(py, sock).and_then(|a| m.bind(py).call1(a));
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.record(py, k, tp, e);
                None
            }
        }
    }

    fn record(&self, py: Python<'_>, k: usize, tp: &Sock, e: PyErr) {
        let tb = py
            .import("traceback")
            .and_then(|m| m.call_method1("format_exception", (e.clone_ref(py),)))
            .and_then(|l| pyo3::types::PyString::new(py, "").call_method1("join", (l,)))
            .and_then(|s| s.extract::<String>())
            .unwrap_or_else(|_| e.to_string());
        let what = e.value(py).to_string();
        let kind = e.get_type(py).name().map(|n| n.to_string()).unwrap_or_else(|_| "Exception".into());
        let line = format!(
            "algorithm {}: {} raised {}{} at simulated time {:.6} s",
            self.reg.name,
            HOOKS[k],
            kind,
            if what.is_empty() { String::new() } else { format!(" ({})", what.lines().next().unwrap_or("")) },
            tp.now_ns as f64 / 1e9
        );
        FAILED.with(|f| {
            let mut f = f.borrow_mut();
            if f.is_none() {
                *f = Some(HookError { line, traceback: tb });
            }
        });
    }

    #[inline]
    fn store(&self, py: Python<'_>, tp: &mut Sock) {
        self.sock.borrow(py).store(tp);
    }

    fn u32_result(&self, py: Python<'_>, k: usize, tp: &Sock, v: Option<Bound<'_, PyAny>>) -> Option<u32> {
        let v = v?;
        match v.extract::<u32>() {
            Ok(x) => Some(x),
            Err(e) => {
                let e =
                    PyValueError::new_err(format!("{} must return a window in packets (an int >= 0): {e}", HOOKS[k]));
                self.record(py, k, tp, e);
                None
            }
        }
    }
}

impl CongestionControl for PyCc {
    fn init(&mut self, tp: &mut Sock) {
        Python::with_gil(|py| {
            if self.call(py, INIT, tp, |_, s| Ok((s,))).is_some() {
                self.store(py, tp);
            }
        })
    }

    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        if self.methods[SSTHRESH].is_none() {
            return cc::common::reno_ssthresh(tp);
        }
        Python::with_gil(|py| {
            let v = self.call(py, SSTHRESH, tp, |_, s| Ok((s,)));
            self.u32_result(py, SSTHRESH, tp, v).unwrap_or_else(|| cc::common::reno_ssthresh(tp))
        })
    }

    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        if self.methods[CONG_AVOID].is_none() {
            return cc::common::reno_cong_avoid(tp, acked);
        }
        Python::with_gil(|py| {
            if self.call(py, CONG_AVOID, tp, |_, s| Ok((s, acked))).is_some() {
                self.store(py, tp);
            }
        })
    }

    fn cong_control(&mut self, tp: &mut Sock, rs: &RateSample) -> bool {
        if self.methods[CONG_CONTROL].is_none() {
            return false;
        }
        Python::with_gil(|py| {
            let rate = self.rate.bind(py).clone();
            rate.borrow_mut().load(rs);
            match self.call(py, CONG_CONTROL, tp, |_, s| Ok((s, rate))) {
                Some(v) => {
                    self.store(py, tp);
                    v.is_truthy().unwrap_or(false)
                }
                None => false,
            }
        })
    }

    fn pkts_acked(&mut self, tp: &mut Sock, s: &AckSample) {
        if self.methods[PKTS_ACKED].is_none() {
            return;
        }
        Python::with_gil(|py| {
            let ack = self.ack.bind(py).clone();
            {
                let mut a = ack.borrow_mut();
                a.acked = s.acked;
                a.rtt_us = s.rtt_us;
                a.in_flight = s.in_flight;
                a.ece = s.ece;
                a.feedback = s.feedback;
            }
            if self.call(py, PKTS_ACKED, tp, |_, so| Ok((so, ack))).is_some() {
                self.store(py, tp);
            }
        })
    }

    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        if self.methods[SET_STATE].is_none() {
            return;
        }
        Python::with_gil(|py| {
            if self.call(py, SET_STATE, tp, |_, s| Ok((s, new_state as u8))).is_some() {
                self.store(py, tp);
            }
        })
    }

    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        if self.methods[CWND_EVENT].is_none() {
            return;
        }
        let (code, idle) = match ev {
            CaEvent::TxStart { idle_us } => (0u8, idle_us),
            CaEvent::CwndRestart => (1, 0),
            CaEvent::CompleteCwr => (2, 0),
            CaEvent::Loss => (3, 0),
            CaEvent::EcnIsCe => (4, 0),
            CaEvent::EcnNoCe => (5, 0),
        };
        Python::with_gil(|py| {
            if self.call(py, CWND_EVENT, tp, |_, s| Ok((s, code, idle))).is_some() {
                self.store(py, tp);
            }
        })
    }

    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        if self.methods[UNDO_CWND].is_none() {
            return cc::common::reno_undo_cwnd(tp);
        }
        Python::with_gil(|py| {
            let v = self.call(py, UNDO_CWND, tp, |_, s| Ok((s,)));
            self.u32_result(py, UNDO_CWND, tp, v).unwrap_or_else(|| cc::common::reno_undo_cwnd(tp))
        })
    }

    fn skb_marked_lost(&mut self, tp: &mut Sock, rs: &RateSample) {
        if self.methods[SKB_MARKED_LOST].is_none() {
            return;
        }
        Python::with_gil(|py| {
            let rate = self.rate.bind(py).clone();
            rate.borrow_mut().load(rs);
            if self.call(py, SKB_MARKED_LOST, tp, |_, s| Ok((s, rate))).is_some() {
                self.store(py, tp);
            }
        })
    }

    fn on_send(&mut self, tp: &Sock, hdr: &mut CcHeader) {
        if self.methods[ON_SEND].is_none() {
            return;
        }
        Python::with_gil(|py| {
            let h = self.header.bind(py).clone();
            {
                let mut b = h.borrow_mut();
                b.cwnd_bytes = hdr.cwnd_bytes;
                b.rtt_us = hdr.rtt_us;
                b.feedback = hdr.feedback;
                b.has_feedback = hdr.has_feedback;
            }
            if self.call(py, ON_SEND, tp, |_, s| Ok((s, h.clone()))).is_some() {
                let b = h.borrow();
                hdr.cwnd_bytes = b.cwnd_bytes;
                hdr.rtt_us = b.rtt_us;
                hdr.feedback = b.feedback;
                hdr.has_feedback = b.has_feedback;
            }
        })
    }

    fn needs_ecn(&self) -> bool {
        self.reg.needs_ecn
    }

    fn metric_names(&self) -> &'static [&'static str] {
        self.reg.metric_names
    }

    fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
        let Some(m) = self.methods[METRICS].as_ref() else { return };
        if failed() {
            return;
        }
        Python::with_gil(|py| match m.bind(py).call0().and_then(|v| v.extract::<Vec<f64>>()) {
            Ok(v) => {
                for (o, x) in out.iter_mut().zip(v) {
                    *o = x;
                }
            }
            Err(e) => {
                let tp = self.sock.borrow(py).sock();
                self.record(py, METRICS, &tp, e)
            }
        })
    }
}

impl ExternalCc for PyCc {
    fn name(&self) -> &'static str {
        self.reg.name
    }

    fn clone_box(&self) -> Box<dyn ExternalCc> {
        Python::with_gil(|py| {
            let obj = py
                .import("copy")
                .and_then(|c| c.call_method1("deepcopy", (self.obj.bind(py),)))
                .map(|o| o.unbind())
                .unwrap_or_else(|_| self.obj.clone_ref(py));
            let c = PyCc::new(py, self.reg.clone(), obj).expect("the methods existed on the original");
            Box::new(c)
        })
    }
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn param_spec(d: &Bound<'_, PyDict>) -> PyResult<ParamSpec> {
    let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
        d.get_item(k)?.ok_or_else(|| PyValueError::new_err(format!("parameter entry without {k}")))
    };
    let name = leak(get("name")?.extract()?);
    let ty: String = get("type")?.extract()?;
    let doc = leak(d.get_item("doc")?.map(|v| v.extract::<String>()).transpose()?.unwrap_or_default());
    let default = get("default")?;
    let (kind, default) = match ty.as_str() {
        "bool" => (ParamKind::Bool, ParamDefault::Bool(default.extract()?)),
        "int" => (
            ParamKind::Int { min: get("min")?.extract()?, max: get("max")?.extract()? },
            ParamDefault::Int(default.extract()?),
        ),
        "float" => (
            ParamKind::Float { min: get("min")?.extract()?, max: get("max")?.extract()? },
            ParamDefault::Float(default.extract()?),
        ),
        "choice" => {
            let c: Vec<String> = get("choices")?.extract()?;
            let c: Vec<&'static str> = c.into_iter().map(leak).collect();
            (ParamKind::Choice(Box::leak(c.into_boxed_slice())), ParamDefault::Str(leak(default.extract()?)))
        }
        other => return Err(PyValueError::new_err(format!("parameter {name}: unknown type {other}"))),
    };
    Ok(ParamSpec { name, kind, default, doc })
}

fn params_dict<'py>(py: Python<'py>, p: &Params) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in &p.0 {
        match v {
            ParamValue::Bool(b) => d.set_item(k, *b)?,
            ParamValue::Int(i) => d.set_item(k, *i)?,
            ParamValue::Float(x) => d.set_item(k, *x)?,
            ParamValue::Str(s) => d.set_item(k, s)?,
        }
    }
    Ok(d)
}

/// Registers a Python algorithm (called by `ccarena.register_cc`): `make`
/// builds the object from the resolved parameters dict; `params` are dicts
/// as `cc_algorithms()` lists them; `hooks` the hook names the class defines.
#[pyfunction]
#[pyo3(signature = (name, make, params, hooks, summary, source, default_recovery="prr", needs_ecn=false, needs_pacing=false, metric_names=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn register_py_cc(
    name: String,
    make: PyObject,
    params: Vec<Bound<'_, PyDict>>,
    hooks: Vec<String>,
    summary: String,
    source: String,
    default_recovery: &str,
    needs_ecn: bool,
    needs_pacing: bool,
    metric_names: Vec<String>,
) -> PyResult<()> {
    if !matches!(default_recovery, "prr" | "newreno") {
        return Err(PyValueError::new_err(format!("default_recovery must be prr or newreno, got {default_recovery}")));
    }
    if metric_names.len() > MAX_METRICS {
        return Err(PyValueError::new_err(format!("at most {MAX_METRICS} metric names")));
    }
    let mut defined = [false; HOOKS.len()];
    for h in &hooks {
        match HOOKS.iter().position(|k| k == h) {
            Some(k) => defined[k] = true,
            None => return Err(PyValueError::new_err(format!("unknown hook {h} (known: {})", HOOKS.join(", ")))),
        }
    }
    let specs: Vec<ParamSpec> = params.iter().map(param_spec).collect::<PyResult<_>>()?;
    let name = leak(name);
    let names: Vec<&'static str> = metric_names.into_iter().map(leak).collect();
    let reg =
        Arc::new(Registered { name, make, defined, needs_ecn, metric_names: Box::leak(names.into_boxed_slice()) });
    let info = AlgoInfo {
        name,
        summary: leak(summary),
        source: leak(source),
        default_recovery: if default_recovery == "prr" { "prr" } else { "newreno" },
        params: Box::leak(specs.into_boxed_slice()),
        unconfirmed: false,
        needs_pacing,
        needs_ecn,
        needs_accecn: false,
        randomized: false,
    };
    let factory = move |p: &Params| -> Result<Box<dyn ExternalCc>, String> {
        Python::with_gil(|py| {
            let d = params_dict(py, p).map_err(|e| e.to_string())?;
            let obj = reg.make.call1(py, (d,)).map_err(|e| format!("{name}: constructing the algorithm raised {e}"))?;
            let c = PyCc::new(py, reg.clone(), obj).map_err(|e| e.to_string())?;
            Ok(Box::new(c) as Box<dyn ExternalCc>)
        })
    };
    registry::register_external(info, Arc::new(factory)).map_err(PyValueError::new_err)
}

/// Forgets a Python algorithm; true if it was registered.
#[pyfunction]
fn unregister_py_cc(name: &str) -> bool {
    registry::unregister_external(name)
}

/// Whether the run uses an algorithm registered at run time: then `simulate`
/// keeps the GIL for the whole run (each hook would otherwise take it back).
pub fn uses_python(cfg: &sim::Config) -> bool {
    let builtin = |n: &str| registry::algorithms().iter().any(|a| a.name == n);
    cfg.flows.iter().any(|f| !builtin(&f.cc)) || cfg.tcp_sources.iter().any(|s| !builtin(&s.cc))
}

/// Adds this module's functions, classes and exception to `_core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(register_py_cc, m)?)?;
    m.add_function(wrap_pyfunction!(unregister_py_cc, m)?)?;
    m.add_class::<PySock>()?;
    m.add_class::<PyAck>()?;
    m.add_class::<PyRate>()?;
    m.add_class::<PyHeader>()?;
    m.add("CcHookError", m.py().get_type::<CcHookError>())?;
    // The hooks the adapter calls, in its order (ccarena.pycc.HOOKS reads them here).
    m.add("PYCC_HOOKS", HOOKS.to_vec())?;
    Ok(())
}
