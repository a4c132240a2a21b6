//! A sender's host as the engine takes it: the access link in front of its
//! route (a NIC and its queue) and how it hands data to the NIC with TCP
//! segmentation offload. Flows ([`crate::FlowConfig`]) and background sources
//! ([`crate::TcpSource`]) both have one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::event::PS_PER_NS;
use crate::tcp::sender::{Era, Tso};

/// A sender's access link: its NIC's rate and the queue in front of it
/// (Linux's `txqueuelen`, 1000 packets on Ethernet), no propagation delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccessLink {
    pub rate_bps: u64,
    pub queue_pkts: u64,
    /// TCP Small Queues (today's Linux): `tcp_limit_output_bytes`, the most
    /// an unpaced sender keeps in this host queue and NIC (see
    /// [`crate::tcp::sender::tsq_limit`]); `None`: no TSQ (Linux 2.6).
    #[serde(rename = "tsq_bytes", default)]
    pub tsq: Option<u64>,
}

/// A TSO host as written (`max_defer_ns` in ns, the engine keeps ps).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TsoForm {
    pub max_segs: u32,
    pub win_divisor: u32,
    pub max_defer_ns: u64,
    /// `linux-2.6` (default) or `linux-today`.
    #[serde(default, deserialize_with = "crate::config_form::null_default")]
    pub era: Era,
}

impl From<TsoForm> for Tso {
    fn from(f: TsoForm) -> Self {
        Tso { max_segs: f.max_segs, win_divisor: f.win_divisor, max_defer: f.max_defer_ns * PS_PER_NS, era: f.era }
    }
}

impl From<Tso> for TsoForm {
    fn from(t: Tso) -> Self {
        TsoForm { max_segs: t.max_segs, win_divisor: t.win_divisor, max_defer_ns: t.max_defer / PS_PER_NS, era: t.era }
    }
}
