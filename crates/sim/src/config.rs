//! The engine's configuration: a whole experiment fully resolved, as the
//! front end (Python, or a Rust test) hands it to [`crate::Simulator`].

use crate::host::AccessLink;
use crate::linkmodel;
use crate::net::QueueLimit;
use crate::qdisc::QdiscConfig;
use crate::tcp::sender::{App, Recovery, Tso};
use crate::traffic::{LossModel, TcpSource, UdpSource};
use cc::ParamValue;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A bottleneck (or reverse) link. Written as [`crate::config_form::LinkForm`].
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(try_from = "crate::config_form::LinkForm", into = "crate::config_form::LinkForm")]
pub struct LinkConfig {
    pub rate_bps: u64,
    /// One-way propagation delay of the link itself, ns.
    pub delay_ns: u64,
    pub limit: QueueLimit,
    /// Bernoulli loss probability for data packets arriving at the port.
    pub loss: f64,
    /// A bursty loss process used instead of `loss` when set.
    pub loss_model: Option<LossModel>,
    /// Queue discipline; `limit` is its capacity.
    pub qdisc: QdiscConfig,
    /// Capacity over time, policer, shaper, batching and jitter; the
    /// default is an ideal link.
    pub model: linkmodel::LinkModel,
}

impl LinkConfig {
    /// The loss process of this link.
    pub fn loss_process(&self) -> LossModel {
        match self.loss_model {
            Some(m) => m,
            None if self.loss > 0.0 => LossModel::Bernoulli { p: self.loss },
            None => LossModel::None,
        }
    }
}

/// One flow, fully resolved. Written as [`crate::config_form::FlowForm`].
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(try_from = "crate::config_form::FlowForm", into = "crate::config_form::FlowForm")]
pub struct FlowConfig {
    pub cc: String,
    pub params: Vec<(String, ParamValue)>,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    /// Round-trip propagation delay, ns.
    pub rtt_ns: u64,
    pub mss: u32,
    pub header_bytes: u32,
    pub init_cwnd: u32,
    pub rwnd_bytes: Option<u64>,
    pub pacing: bool,
    /// `None`: the algorithm's default recovery.
    pub recovery: Option<Recovery>,
    pub app: App,
    /// Data flow from the receivers' side: through the reverse link, with
    /// their ACKs through the bottleneck.
    pub reverse: bool,
    /// Negotiate ECN (RFC 3168): data sent ECT(0), the receiver echoes CE
    /// and the sender answers an echo with a window reduction. Algorithms
    /// that need ECN (DCTCP) use it whatever this says.
    pub ecn: bool,
    /// Offer AccECN feedback (RFC 9768; implies ECN): the receiver counts
    /// every CE-marked packet and byte and the sender reads the exact count
    /// from each ACK. Algorithms that need it (Prague) offer it whatever
    /// this says.
    pub accecn: bool,
    /// The receiver supports AccECN. When it does not, an AccECN offer falls
    /// back to RFC 3168 feedback (or, for an algorithm that needs AccECN, to
    /// no ECN).
    pub receiver_accecn: bool,
    /// With AccECN, the receiver's ACKs carry the AccECN option (byte
    /// counters) besides the ACE field.
    pub accecn_option: bool,
    /// The receiver compresses SACKs as Linux's does since 4.18
    /// (`net/ipv4/tcp_input.c`, `__tcp_ack_snd_check`); `None`: every
    /// out-of-order segment is acknowledged at once.
    pub sack_compression: Option<SackCompression>,
    /// The receiver advertises Linux's receive window, grown segment by
    /// segment and autotuned per RTT, and acknowledges each segment that
    /// grows it at once ([`crate::tcp::rcvwnd`]); `None`: no window but
    /// `rwnd_bytes`, and ACKs by the delayed-ACK rules alone.
    pub receive_window: Option<crate::tcp::rcvwnd::RcvBufConfig>,
    /// Send as Linux with TCP segmentation offload does, 2.6's or today's
    /// (an unpaced sender only); `None`: segment by segment.
    pub tso: Option<Tso>,
    /// The sender's own link in front of its route (a NIC and its queue);
    /// `None`: the sender feeds its route's first link directly.
    pub access: Option<AccessLink>,
}

/// Linux's receiver-side SACK compression (4.18+, `net/ipv4/tcp_input.c`
/// `__tcp_ack_snd_check`, `tcp_timer.c` `tcp_compressed_ack_kick`): with
/// data held above a hole, after three immediate duplicate ACKs per
/// `rcv_nxt` the receiver holds further ACKs (at most `nr`) for
/// min(`delay_ns`, 5 % of the flow's base RTT), then sends one with the
/// current SACK blocks. See [`crate::tcp::receiver`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SackCompression {
    /// `net.ipv4.tcp_comp_sack_nr` (Linux default 44; 0 turns it off).
    pub nr: u32,
    /// `net.ipv4.tcp_comp_sack_delay_ns` (Linux default 1 ms).
    pub delay_ns: u64,
}

/// The route of one flow: link indices (0 the bottleneck, 1 the reverse
/// link, 2.. [`Network::links`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// Links its data cross, in order.
    pub data: Vec<u32>,
    /// Links its ACKs cross, in order.
    pub ack: Vec<u32>,
    /// The link of `data` where its rate at the bottleneck is counted (the
    /// trace's `bottleneck_bytes` and [`FlowStats::bottleneck_bytes`]).
    pub measure: u32,
}

/// Links beyond the dumbbell's two, and the flows' routes over all of them.
/// Empty: the dumbbell.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Network {
    /// Links 2, 3, …
    #[serde(default, deserialize_with = "crate::config_form::null_default")]
    pub links: Vec<LinkConfig>,
    /// The route of foreground flow `i` (every flow has one when any has).
    #[serde(default, deserialize_with = "crate::config_form::null_default")]
    pub routes: Vec<Route>,
    /// A name per link, 0 and 1 included (for messages; may be empty).
    #[serde(default, deserialize_with = "crate::config_form::null_default")]
    pub names: Vec<String>,
}

impl Network {
    /// Whether this is the dumbbell (no extra link, no route).
    pub fn is_dumbbell(&self) -> bool {
        self.links.is_empty() && self.routes.is_empty()
    }
}

/// A whole experiment, fully resolved: what `ccarena._core.simulate` takes
/// as a dict and the emulator as JSON (see [`crate::config_form`]).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub seed: u64,
    pub duration_ns: u64,
    pub interval_ns: u64,
    pub trace: bool,
    pub bottleneck: LinkConfig,
    pub reverse: LinkConfig,
    /// Links beyond these two and the flows' routes; the default is the dumbbell.
    #[serde(default, deserialize_with = "crate::config_form::null_default")]
    pub network: Network,
    pub flows: Vec<FlowConfig>,
    /// Background TCP transfers (web, on-off sessions).
    #[serde(default, deserialize_with = "crate::config_form::null_default")]
    pub tcp_sources: Vec<TcpSource>,
    /// Unresponsive UDP load.
    #[serde(default, deserialize_with = "crate::config_form::null_default")]
    pub udp_sources: Vec<UdpSource>,
}
