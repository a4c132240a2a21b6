//! TCP endpoints: the sender (with loss recovery, RTO, rate sampling and
//! pacing) and the receiver (cumulative ACKs, SACK, delayed ACKs).

pub mod accecn;
pub mod rcvwnd;
pub mod receiver;
pub mod rtt;
pub mod sender;
