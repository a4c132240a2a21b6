//! `Stepper`: one run that a program advances step by step and may steer
//! between steps (`ccarena.Simulation` wraps it).
//!
//! It owns a [`sim::Simulator`]; `run_until(t_ns)` handles every event up
//! to that time, in slices with the GIL released and signals checked
//! between them, as `simulate` does; `take(sink)` hands the trace rows
//! since the last take to `sink` exactly as `simulate` hands a chunk over
//! (`hand_over`); `finish()` returns the same dict as `simulate`. Stopping
//! at a time changes nothing in the run: with nothing set between steps, the
//! steps together are the one run `simulate` makes, bit for bit.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::{config_from, hand_over, output_dict, packet_columns, params_from, SLICE_EVENTS};

/// A run in progress; see the module documentation.
#[pyclass(module = "ccarena._core", unsendable)]
pub struct Stepper {
    /// None once finished.
    engine: Option<sim::Simulator>,
    /// Whether the packet log is kept (returned by `finish`).
    packets: bool,
    /// Wall time spent in the engine, s.
    engine_seconds: f64,
    /// The experiment has reached its end.
    done: bool,
    /// A flow runs an algorithm written in Python (its hooks need the GIL).
    python: bool,
}

impl Stepper {
    fn engine(&mut self) -> PyResult<&mut sim::Simulator> {
        self.engine.as_mut().ok_or_else(|| PyRuntimeError::new_err("the run is finished"))
    }
}

#[pymethods]
impl Stepper {
    /// Builds the engine from a resolved config dict (as `simulate`'s);
    /// with `packets` = (from_ns, to_ns) it also keeps the packet log, all
    /// of it in memory until `finish`.
    #[new]
    #[pyo3(signature = (config, packets=None))]
    fn new(config: Bound<'_, PyDict>, packets: Option<(u64, u64)>) -> PyResult<Self> {
        let cfg = config_from(config.as_any())?;
        crate::pycc::clear_error();
        let mut engine = sim::Simulator::new(&cfg).map_err(PyValueError::new_err)?;
        if let Some((from_ns, to_ns)) = packets {
            engine.set_packet_log(from_ns, to_ns, usize::MAX).map_err(PyValueError::new_err)?;
        }
        let python = crate::pycc::uses_python(&cfg);
        Ok(Stepper { engine: Some(engine), packets: packets.is_some(), engine_seconds: 0.0, done: false, python })
    }

    /// Runs every event up to `t_ns` (the end of the experiment at most);
    /// returns true once the experiment has reached its end.
    #[pyo3(signature = (t_ns, slice_events=SLICE_EVENTS))]
    fn run_until(&mut self, py: Python<'_>, t_ns: u64, slice_events: u64) -> PyResult<bool> {
        let engine = self.engine.as_mut().ok_or_else(|| PyRuntimeError::new_err("the run is finished"))?;
        loop {
            let t0 = std::time::Instant::now();
            // A Python algorithm's hooks need the GIL: keep it (as `simulate` does).
            let reached = if self.python {
                engine.run_until(t_ns, slice_events.max(1))
            } else {
                py.allow_threads(|| engine.run_until(t_ns, slice_events.max(1)))
            };
            self.engine_seconds += t0.elapsed().as_secs_f64();
            // A hook that raised stops the run here, with its one-line error.
            if let Some(e) = crate::pycc::take_error() {
                self.engine = None;
                return Err(e);
            }
            py.check_signals()?;
            if reached {
                break;
            }
        }
        self.done = engine.now_ns() >= engine.end_ns();
        Ok(self.done)
    }

    /// Hands the trace rows recorded since the last take to
    /// `sink(flows_trace, queue_trace, flows)`, as `simulate` hands a chunk
    /// to its sink.
    fn take(&mut self, py: Python<'_>, sink: PyObject) -> PyResult<()> {
        hand_over(py, self.engine()?, &sink)
    }

    /// Simulated time reached, ns.
    fn now_ns(&mut self) -> PyResult<u64> {
        Ok(self.engine()?.now_ns())
    }

    /// The experiment's end, ns.
    fn end_ns(&mut self) -> PyResult<u64> {
        Ok(self.engine()?.end_ns())
    }

    /// Whether the experiment has reached its end.
    #[getter]
    fn done(&self) -> bool {
        self.done
    }

    /// Sets foreground flow `flow`'s congestion window, packets.
    fn set_cwnd(&mut self, flow: usize, pkts: u32) -> PyResult<()> {
        self.engine()?.set_cwnd(flow, pkts).map_err(PyValueError::new_err)
    }

    /// Sets foreground flow `flow`'s slow-start threshold, packets.
    fn set_ssthresh(&mut self, flow: usize, pkts: u32) -> PyResult<()> {
        self.engine()?.set_ssthresh(flow, pkts).map_err(PyValueError::new_err)
    }

    /// Sets foreground flow `flow`'s pacing rate, bit/s of payload.
    fn set_pacing_rate(&mut self, flow: usize, bps: u64) -> PyResult<()> {
        self.engine()?.set_pacing_rate(flow, bps).map_err(PyValueError::new_err)
    }

    /// Restarts foreground flow `flow`'s algorithm with the parameters
    /// `params` (name → value; those not given take their defaults);
    /// see `sim::Simulator::set_cc_params`.
    fn set_cc_params(&mut self, flow: usize, params: Bound<'_, PyDict>) -> PyResult<()> {
        let params = params_from(Some(params))?;
        self.engine()?.set_cc_params(flow, &params).map_err(PyValueError::new_err)
    }

    /// Foreground flow `flow`'s (cwnd packets, pacing rate bit/s) now.
    fn cwnd_pacing(&mut self, flow: usize) -> PyResult<(u32, u64)> {
        self.engine()?.flow_cwnd_pacing(flow).map_err(PyValueError::new_err)
    }

    /// Runs to the end, ends the run and returns `simulate`'s output dict
    /// (the traces: the rows not yet taken). The stepper is unusable afterwards.
    fn finish(&mut self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let end = self.engine()?.end_ns();
        self.run_until(py, end, SLICE_EVENTS)?;
        let mut engine = self.engine.take().expect("checked above");
        let packet_log = if self.packets { Some(packet_columns(py, &mut engine)?) } else { None };
        let out = engine.finish(self.engine_seconds).map_err(PyRuntimeError::new_err)?;
        output_dict(py, out, packet_log)
    }
}
