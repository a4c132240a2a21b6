//! ccarena's real-time link emulator.
//!
//! The `ccarena-emu` binary forwards IP packets between two TUN devices,
//! one in the senders' network namespace and one in the receivers', through
//! the bottleneck of an experiment: the simulator's queue discipline, then
//! serialisation at the link rate, then each flow's one-way delay; ACKs take
//! a reverse port and the same delay back. In a network of links in a line
//! (a parking lot), each packet crosses the links of its flow's path in
//! turn, each link's delay between them. It measures at the bottleneck and
//! at every link as the simulator does and writes the same columns at the end.
//!
//! [`engine`] is the emulator proper, driven by explicit times so that it is
//! tested without devices; [`sys`] holds the system calls, [`config`] the
//! configuration file (JSON: the simulator's own configuration and the
//! emulator's settings) and [`report`] the output folder. Python's
//! `ccarena.emulate` creates the namespaces, starts this binary and runs the
//! real TCP connections through it.

pub mod config;
pub mod engine;
pub mod report;
pub mod sys;
pub mod wire;
