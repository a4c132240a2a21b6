//! Reno and NewReno window arithmetic (RFC 5681, RFC 6582; Linux `tcp_cong.c`).
//!
//! Both grow the window the same way: slow start below ssthresh, then one
//! packet per RTT, and halve it on loss. They differ in the recovery the sender
//! runs: `reno` is Linux's default (SACK-based loss detection with PRR, RFC
//! 6937); `newreno` asks for RFC 6582 fast recovery (window inflation by one
//! packet per duplicate ACK, deflation on partial ACKs), see the registry's
//! `recovery` default.

use crate::{common, CongestionControl, Sock};

/// Linux `tcp_reno_congestion_ops`.
#[derive(Clone, Debug, Default)]
pub struct Reno;

impl CongestionControl for Reno {
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        common::reno_ssthresh(tp)
    }
}

/// Reno's window rules with RFC 6582 NewReno recovery in the sender.
#[derive(Clone, Debug, Default)]
pub struct NewReno;

impl CongestionControl for NewReno {
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        common::reno_ssthresh(tp)
    }
}
