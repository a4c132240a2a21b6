//! ACK aggregation (on any link; on a data link it batches data): arrivals
//! are held and released into the link's queue together, as Wi-Fi's block
//! ACKs, cellular uplink grants and receive offload do. Two forms:
//!
//! - `Periodic`: held packets leave at the next `phase + k·every`; with
//!   `every = D` this is the deterministic instance of the CCAC model's
//!   non-congestive delay bound (Arun et al., "Toward Formally Verifying
//!   Congestion Control Behavior", SIGCOMM 2021): every packet leaves within
//!   D of when an ideal link would have sent it.
//! - `Count`: released when `n` are held, or `timeout` after the first of the
//!   batch arrived, as a GRO-style receiver acknowledges a merged burst.
//!
//! Order is kept and nothing is lost: a batch enters the queue in arrival
//! order (the queue's own limit may then drop, as for any arrival).

use crate::event::Time;
use crate::packet::PacketId;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum BatchConfig {
    /// Release every `every_ns`, at `phase_ns + k·every_ns`.
    Periodic {
        every_ns: u64,
        #[serde(default, deserialize_with = "crate::config_form::null_default")]
        phase_ns: u64,
    },
    /// Release once `n` are held or `timeout_ns` after the batch's first.
    Count { n: u32, timeout_ns: u64 },
}

impl BatchConfig {
    pub fn check(&self) -> Result<(), String> {
        match *self {
            BatchConfig::Periodic { every_ns, phase_ns } => {
                if every_ns == 0 {
                    return Err("every: expected a time above 0s".into());
                }
                if phase_ns >= every_ns {
                    return Err("phase: expected a time below every".into());
                }
            }
            BatchConfig::Count { n, timeout_ns } => {
                if n < 1 {
                    return Err("count: expected at least 1".into());
                }
                if timeout_ns == 0 {
                    return Err("timeout: expected a time above 0s".into());
                }
            }
        }
        Ok(())
    }
}

#[derive(Debug)]
pub struct Batcher {
    cfg: BatchConfig,
    held: Vec<PacketId>,
    /// Counts batches, so that a release scheduled for an earlier batch
    /// (a count batch's timeout after it filled) finds itself stale.
    generation: u32,
    /// Batches released, and packets in them.
    pub batches: u64,
    pub released: u64,
}

const PS_PER_NS: u64 = crate::event::PS_PER_NS;

impl Batcher {
    pub fn new(cfg: &BatchConfig) -> Batcher {
        Batcher { cfg: *cfg, held: Vec::with_capacity(64), generation: 0, batches: 0, released: 0 }
    }

    /// Holds a packet arriving at `now`; `Some(t)`: schedule the batch's release at `t`.
    #[inline]
    pub fn hold(&mut self, now: Time, id: PacketId) -> Option<Time> {
        self.held.push(id);
        match self.cfg {
            BatchConfig::Periodic { every_ns, phase_ns } if self.held.len() == 1 => {
                let (every, phase) = (every_ns * PS_PER_NS, phase_ns * PS_PER_NS);
                // The first boundary at or after now.
                let k = (now + every - phase - 1) / every;
                Some(k * every + phase)
            }
            BatchConfig::Count { n, .. } if self.held.len() >= n as usize => Some(now),
            BatchConfig::Count { timeout_ns, .. } if self.held.len() == 1 => Some(now + timeout_ns * PS_PER_NS),
            _ => None,
        }
    }

    /// The generation a release scheduled now belongs to.
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// Moves the held batch to `out` if `generation` is current.
    pub fn release(&mut self, generation: u32, out: &mut Vec<PacketId>) {
        if generation != self.generation || self.held.is_empty() {
            return;
        }
        self.generation = self.generation.wrapping_add(1);
        self.batches += 1;
        self.released += self.held.len() as u64;
        out.append(&mut self.held);
    }

    pub fn len(&self) -> usize {
        self.held.len()
    }

    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::PS_PER_MS;

    #[test]
    fn periodic_releases_at_the_next_boundary() {
        let mut b = Batcher::new(&BatchConfig::Periodic { every_ns: 20_000_000, phase_ns: 0 });
        assert_eq!(b.hold(3 * PS_PER_MS, 1), Some(20 * PS_PER_MS));
        assert_eq!(b.hold(19 * PS_PER_MS, 2), None);
        let mut out = vec![];
        b.release(b.generation(), &mut out);
        assert_eq!(out, vec![1, 2]);
        assert_eq!(b.hold(20 * PS_PER_MS, 3), Some(20 * PS_PER_MS));
        assert_eq!(b.hold(20 * PS_PER_MS + 1, 4), None);
        let mut p = Batcher::new(&BatchConfig::Periodic { every_ns: 20_000_000, phase_ns: 5_000_000 });
        assert_eq!(p.hold(6 * PS_PER_MS, 1), Some(25 * PS_PER_MS));
    }

    #[test]
    fn count_releases_when_full_and_a_stale_timeout_does_nothing() {
        let mut b = Batcher::new(&BatchConfig::Count { n: 3, timeout_ns: 1_000_000 });
        assert_eq!(b.hold(0, 1), Some(PS_PER_MS));
        let g = b.generation();
        assert_eq!(b.hold(1, 2), None);
        assert_eq!(b.hold(2, 3), Some(2));
        let mut out = vec![];
        b.release(g, &mut out);
        assert_eq!(out, vec![1, 2, 3]);
        assert_eq!(b.hold(5, 4), Some(5 + PS_PER_MS));
        b.release(g, &mut out); // the first batch's timeout: stale
        assert_eq!(out.len(), 3);
        assert_eq!(b.len(), 1);
    }
}
