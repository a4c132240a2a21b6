//! Links as they really behave: a link's capacity over time (a schedule
//! of rates, outages, or a Mahimahi delivery trace), a token-bucket policer
//! or shaper, ACK aggregation (arrivals held and released in batches), and
//! jitter on the propagation that follows the link.
//!
//! Every model is a property of one link and costs nothing on a link without
//! models: a port holds its models in one boxed [`PortModel`] (`None` for an
//! ideal link) and a delay line its jitter in a boxed [`LineModel`]. The
//! simulator calls into them at three points of a packet's way through a
//! link: on arrival ([`PortModel::arrive`]: pass, drop at the policer, or
//! hold for a batch), when its serialisation starts
//! ([`PortModel::service_end`]: when its last bit leaves), and when it enters
//! the propagation after the link ([`LineModel::due`]: when it arrives).

pub mod batch;
pub mod bucket;
pub mod capacity;
pub mod jitter;

use crate::event::Time;
use crate::packet::PacketId;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use batch::{BatchConfig, Batcher};
pub use bucket::{BucketConfig, TokenBucket};
pub use capacity::{Capacity, CapacityConfig, TraceConfig, TraceMode};
pub use jitter::{JitterConfig, JitterDist, LineModel};

/// The models of one link; the default is an ideal link (constant rate and
/// delay, no policer, shaper, batching or jitter).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(try_from = "crate::config_form::LinkModelForm", into = "crate::config_form::LinkModelForm")]
pub struct LinkModel {
    /// The link's capacity over time; `None`: its constant `rate_bps`.
    pub capacity: Option<CapacityConfig>,
    /// Drops what exceeds a token bucket, on arrival.
    pub policer: Option<BucketConfig>,
    /// Holds the packet at the head of the queue until the bucket has its tokens.
    pub shaper: Option<BucketConfig>,
    /// Holds arrivals and releases them into the queue in batches.
    pub batch: Option<BatchConfig>,
    /// Extra delay per packet on the propagation after the link, and steps
    /// of the link's propagation delay over time.
    pub jitter: Option<JitterConfig>,
}

impl LinkModel {
    /// Whether the link is ideal (no model at all).
    pub fn is_ideal(&self) -> bool {
        *self == LinkModel::default()
    }

    /// Whether the port needs a [`PortModel`] (everything but jitter lives there).
    pub fn needs_port_model(&self) -> bool {
        self.capacity.is_some() || self.policer.is_some() || self.shaper.is_some() || self.batch.is_some()
    }

    /// Checks the parameters; `Err` names the field under the link.
    pub fn check(&self) -> Result<(), String> {
        if let Some(c) = &self.capacity {
            c.check().map_err(|e| format!("capacity.{e}"))?;
        }
        if let Some(b) = &self.policer {
            b.check().map_err(|e| format!("policer.{e}"))?;
        }
        if let Some(b) = &self.shaper {
            b.check().map_err(|e| format!("shaper.{e}"))?;
        }
        if let Some(b) = &self.batch {
            b.check().map_err(|e| format!("ack_aggregation.{e}"))?;
        }
        if let Some(j) = &self.jitter {
            j.check().map_err(|e| format!("jitter.{e}"))?;
        }
        Ok(())
    }
}

/// What happens to a packet arriving at a link with models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// On to the queue.
    Pass,
    /// Dropped by the policer.
    Policed,
    /// Held for a batch; `Some(t)`: the batch is released at `t` (schedule it).
    Held(Option<Time>),
}

/// The run-time state of a port's models.
#[derive(Debug)]
pub struct PortModel {
    capacity: Option<Capacity>,
    policer: Option<TokenBucket>,
    shaper: Option<TokenBucket>,
    batch: Option<Batcher>,
    /// Packets the policer dropped.
    pub policed: u64,
}

impl PortModel {
    pub fn new(m: &LinkModel) -> PortModel {
        PortModel {
            capacity: m.capacity.as_ref().map(Capacity::new),
            policer: m.policer.as_ref().map(TokenBucket::new),
            shaper: m.shaper.as_ref().map(TokenBucket::new),
            batch: m.batch.as_ref().map(Batcher::new),
            policed: 0,
        }
    }

    /// A packet of `wire` bytes arrives at `now`.
    #[inline(never)]
    pub fn arrive(&mut self, now: Time, id: PacketId, wire: u32) -> Arrival {
        if let Some(p) = &mut self.policer {
            if !p.take_if_conforming(now, wire) {
                self.policed += 1;
                return Arrival::Policed;
            }
        }
        if let Some(b) = &mut self.batch {
            return Arrival::Held(b.hold(now, id));
        }
        Arrival::Pass
    }

    /// The held batch, if `generation` is still the batch's; the caller
    /// hands its packets to the queue in arrival order.
    pub fn release(&mut self, generation: u32, out: &mut Vec<PacketId>) {
        if let Some(b) = &mut self.batch {
            b.release(generation, out);
        }
    }

    /// The generation of the batch being held (see [`Batcher::generation`]).
    pub fn batch_generation(&self) -> u32 {
        self.batch.as_ref().map_or(0, |b| b.generation())
    }

    /// Packets held for a batch.
    pub fn held(&self) -> u64 {
        self.batch.as_ref().map_or(0, |b| b.len() as u64)
    }

    /// When the last bit of a packet of `wire` bytes leaves, its
    /// serialisation starting at `now` (it arrived at the link at
    /// `arrived`), on a link of nominal rate `rate_bps`.
    #[inline(never)]
    pub fn service_end(&mut self, now: Time, arrived: Time, wire: u32, rate_bps: u64) -> Time {
        let start = match &mut self.shaper {
            Some(s) => s.take_when_conforming(now, wire),
            None => now,
        };
        match &mut self.capacity {
            Some(c) => c.finish(start, arrived, wire),
            None => start + crate::event::tx_time(wire, rate_bps),
        }
    }

    /// Whether the capacity changes over time (a schedule or a trace).
    pub fn varies(&self) -> bool {
        self.capacity.is_some()
    }

    /// Counters of the models present: packets policed, batches released and their packets.
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut c = vec![];
        if self.policer.is_some() {
            c.push(("policed", self.policed));
        }
        if let Some(b) = &self.batch {
            c.push(("batches", b.batches));
            c.push(("batched", b.released));
        }
        c
    }

    /// Capacity of a link whose capacity changes over time, bits from `from`
    /// to `to` (the integral of its rate; for a trace, its delivery
    /// opportunities' bytes); `None` for a constant rate.
    pub fn capacity_bits(&self, from: Time, to: Time) -> Option<f64> {
        self.capacity.as_ref().map(|c| c.bits_between(from, to))
    }
}
