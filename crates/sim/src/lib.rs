//! The ccarena packet-level simulator.
//!
//! A network of links, each a [`net::Port`] (a queue discipline in front of
//! a serialiser) followed by its propagation delay. Every flow has its own
//! sender and receiver and a route: the links its data cross and the links
//! its ACKs cross, in order (htsim's source routes). A packet carries its
//! place on the route; a link's departure hands it to the flow's next delay
//! line, which brings it to the next link or to the endpoint.
//!
//! The dumbbell is the network of two links, the bottleneck (link 0) and the
//! reverse link (link 1), with every flow's data on one and ACKs on the
//! other, and per-flow access delays so that flows may have different RTTs:
//!
//! ```text
//!  sender i ──(a_i)──► [forward port: qdisc → rate C] ──(d + b_i)──► receiver i
//!  sender i ◄──(d + a_i)── [reverse port: qdisc → rate C_r] ◄──(b_i)── receiver i
//!  a_i = b_i = (rtt_i/2 − d)/2,  d = bottleneck propagation delay
//! ```
//!
//! A longer route spreads the flow's access delay the same way: its data
//! lines are `a`, the delays of its links but the last, and the last link's
//! delay plus `b`, with `a = b = (rtt/2 − Σ link delays)/2` (likewise the ACK
//! route). [`Network`] adds links 2, 3, … and the routes (the parking lot
//! and any topology are built from it by the front end).
//!
//! Time is integer picoseconds; events run in (time, insertion) order; all
//! randomness comes from generators owned by the simulation, so the same
//! config and seed give the same output, and simulations may run on several
//! threads at once. Every run ends with a packet-conservation check.

pub mod check;
pub mod config;
pub mod config_form;
pub mod event;
pub mod hist;
pub mod host;
pub mod linkmodel;
pub mod net;
pub mod output;
pub mod packet;
pub mod packet_log;
pub mod qdisc;
pub mod rng;
pub mod service;
pub mod sim;
pub mod tcp;
pub mod trace;
pub mod traffic;

pub use config::{Config, FlowConfig, LinkConfig, Network, Route, SackCompression};
pub use config_form::read_config;
pub use host::{AccessLink, TsoForm};
pub use net::QueueLimit;
pub use output::{Conservation, FlowStats, LinkStats, Output, QueueStats, SourceStats, TransferRecord};
pub use packet_log::PacketLog;
pub use qdisc::XcpConfig;
pub use qdisc::{catalogue as qdisc_catalogue, QdiscConfig};
pub use sim::{run, Simulator};
pub use tcp::sender::{App, Recovery};
pub use trace::{Column, Columns};
pub use traffic::{Arrivals, Direction, LossModel, RttDist, SizeDist, TcpSource, UdpPattern, UdpSource};
