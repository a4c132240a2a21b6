//! Token buckets: a policer drops what exceeds the bucket on arrival
//! (Linux's `act_police` with the usual `drop` action); a shaper holds the
//! packet at the head of the queue until the bucket has its tokens (Linux's
//! `tbf`). The bucket holds at most `burst` bytes, fills at `rate`, starts
//! full, and a packet takes its size in tokens; a packet that does not
//! conform takes nothing (the policer's state does not change). Sizes are
//! the same bytes as the link's rate counts (IP bytes).
//!
//! Tokens are kept as integers in bit·ps (a rate in bit/s times a time in
//! ps), so refills and takes are exact.

use crate::event::{Time, PS_PER_S};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BucketConfig {
    pub rate_bps: u64,
    /// Depth of the bucket, bytes.
    pub burst_bytes: u64,
}

impl BucketConfig {
    pub fn check(&self) -> Result<(), String> {
        if self.rate_bps == 0 {
            return Err("rate: expected a rate above 0".into());
        }
        if self.burst_bytes == 0 {
            return Err("burst: expected a size above 0".into());
        }
        Ok(())
    }
}

#[derive(Debug)]
pub struct TokenBucket {
    rate: u128,
    depth: u128,
    tokens: u128,
    last: Time,
}

/// Tokens a packet of `wire` bytes takes, bit·ps.
#[inline]
fn cost(wire: u32) -> u128 {
    wire as u128 * 8 * PS_PER_S as u128
}

impl TokenBucket {
    pub fn new(c: &BucketConfig) -> TokenBucket {
        let depth = c.burst_bytes as u128 * 8 * PS_PER_S as u128;
        TokenBucket { rate: c.rate_bps as u128, depth, tokens: depth, last: 0 }
    }

    #[inline]
    fn refill(&mut self, now: Time) {
        if now > self.last {
            self.tokens = (self.tokens + self.rate * (now - self.last) as u128).min(self.depth);
            self.last = now;
        }
    }

    /// Policer: takes the packet's tokens if it conforms at `now`.
    #[inline]
    pub fn take_if_conforming(&mut self, now: Time, wire: u32) -> bool {
        self.refill(now);
        let c = cost(wire);
        if self.tokens >= c {
            self.tokens -= c;
            true
        } else {
            false
        }
    }

    /// Shaper: the time at or after `now` when the packet conforms, its
    /// tokens taken then. A packet larger than the bucket waits for a full
    /// bucket and takes it all (tbf refuses such packets at configuration).
    #[inline]
    pub fn take_when_conforming(&mut self, now: Time, wire: u32) -> Time {
        self.refill(now);
        let c = cost(wire).min(self.depth);
        let at = if self.tokens >= c { now } else { now + (c - self.tokens).div_ceil(self.rate) as Time };
        self.refill(at);
        self.tokens -= c.min(self.tokens);
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::PS_PER_US;

    fn bucket() -> TokenBucket {
        // Linux tbf and police (net/sched/sch_tbf.c, act_police.c; tc-tbf(8)) with
        // rate 10 Mbit/s, burst 15 000 B; the examples below are worked by hand.
        TokenBucket::new(&BucketConfig { rate_bps: 10_000_000, burst_bytes: 15_000 })
    }

    /// Policer: 20 packets back to back at 1 Gbit/s (12 µs apart): 10 pass, 10 are dropped.
    #[test]
    fn policer_passes_the_burst_and_drops_the_rest() {
        let mut b = bucket();
        let passed: Vec<bool> = (1..=20).map(|i| b.take_if_conforming(i * 12 * PS_PER_US, 1500)).collect();
        assert_eq!(passed.iter().filter(|&&p| p).count(), 10);
        assert!(passed[..10].iter().all(|&p| p));
    }

    /// Shaper: it sends packets 1-10 on arrival, the 11th at 1.212 ms,
    /// then one every 1.2 ms, the 20th at 12.012 ms.
    #[test]
    fn shaper_releases_at_the_token_rate() {
        let mut b = bucket();
        let mut last = 0;
        let mut out = vec![];
        for i in 1..=20u64 {
            last = b.take_when_conforming((i * 12 * PS_PER_US).max(last), 1500);
            out.push(last);
        }
        assert_eq!(out[9], 120 * PS_PER_US);
        assert_eq!(out[10], 1_212 * PS_PER_US);
        assert_eq!(out[11], 2_412 * PS_PER_US);
        assert_eq!(out[19], 12_012 * PS_PER_US);
    }
}
