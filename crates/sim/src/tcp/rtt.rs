//! RTT estimation and the retransmission timeout, as Linux computes them
//! (`tcp_rtt_estimator`, `__tcp_set_rto`): RFC 6298's smoothing with a 200 ms
//! floor on the variance term rather than on the whole RTO, so a steady path
//! settles at RTO ≈ SRTT + 200 ms.

/// Linux `TCP_RTO_MIN`, µs.
pub const RTO_MIN_US: u64 = 200_000;
/// Linux `TCP_RTO_MAX`, µs.
pub const RTO_MAX_US: u64 = 120_000_000;
/// Linux `TCP_TIMEOUT_INIT` (RFC 6298 §2.1), µs.
pub const RTO_INIT_US: u64 = 1_000_000;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    /// 8 × smoothed RTT, µs (Linux `srtt_us`); 0 before the first sample.
    srtt8: u64,
    /// 4 × mean deviation, µs (Linux `mdev_us`).
    mdev4: i64,
    /// Largest mdev4 in the current RTT, µs.
    mdev_max: i64,
    /// Variance term used in the RTO, µs (Linux `rttvar_us`).
    rttvar: i64,
    /// Sequence that ends the current RTT of samples.
    rtt_seq: u64,
    rto_us: u64,
}

impl Default for RttEstimator {
    fn default() -> Self {
        RttEstimator { srtt8: 0, mdev4: 0, mdev_max: 0, rttvar: 0, rtt_seq: 0, rto_us: RTO_INIT_US }
    }
}

impl RttEstimator {
    /// Smoothed RTT in µs, or 0 before the first sample.
    pub fn srtt_us(&self) -> u64 {
        self.srtt8 >> 3
    }

    /// Current RTO (before backoff), µs.
    pub fn rto_us(&self) -> u64 {
        self.rto_us
    }

    /// Variance term, µs.
    pub fn rttvar_us(&self) -> u64 {
        self.rttvar as u64
    }

    /// Adds a sample `m_us`. `snd_una`/`snd_nxt` (any monotone sequence
    /// unit) mark when an RTT's worth of samples has passed.
    pub fn sample(&mut self, m_us: u64, snd_una: u64, snd_nxt: u64) {
        let m_us = m_us.max(1);
        if self.srtt8 == 0 {
            self.srtt8 = m_us << 3;
            self.mdev4 = (m_us << 1) as i64;
            self.rttvar = self.mdev4.max(RTO_MIN_US as i64);
            self.mdev_max = self.rttvar;
            self.rtt_seq = snd_nxt;
        } else {
            let mut m = m_us as i64 - (self.srtt8 >> 3) as i64;
            self.srtt8 = (self.srtt8 as i64 + m).max(1) as u64;
            if m < 0 {
                // RTT fell: a smaller gain, so a sudden drop does not inflate the variance.
                m = -m - (self.mdev4 >> 2);
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= self.mdev4 >> 2;
            }
            self.mdev4 += m;
            if self.mdev4 > self.mdev_max {
                self.mdev_max = self.mdev4;
                if self.mdev_max > self.rttvar {
                    self.rttvar = self.mdev_max;
                }
            }
            if snd_una > self.rtt_seq {
                if self.mdev_max < self.rttvar {
                    self.rttvar -= (self.rttvar - self.mdev_max) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max = RTO_MIN_US as i64;
            }
        }
        self.rto_us = ((self.srtt8 >> 3) + self.rttvar as u64).min(RTO_MAX_US);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Linux's estimator (net/ipv4/tcp_input.c tcp_rtt_estimator,
    // include/net/tcp.h __tcp_set_rto), worked by hand; each sample
    // completes an RTT.
    #[test]
    fn linux_rto_vectors() {
        let mut e = RttEstimator::default();
        assert_eq!(e.rto_us(), 1_000_000);
        e.sample(100_000, 1, 2);
        assert_eq!((e.srtt_us(), e.rttvar_us(), e.rto_us()), (100_000, 200_000, 300_000));
        e.sample(120_000, 3, 4);
        assert_eq!(e.srtt_us(), 102_500);
        assert_eq!(e.rto_us(), 302_500);
        e.sample(300_000, 5, 6);
        // srtt = 102.5 + (300 − 102.5)/8 = 127.19 ms; rttvar 325 ms (mdev jumps) → RTO 452.2 ms
        assert_eq!(e.srtt_us(), 127_187);
        let rto = e.rto_us() as i64;
        assert!((rto - 452_200).abs() < 1_000, "rto {rto}");
    }

    #[test]
    fn lan_rto_is_srtt_plus_200ms() {
        let mut e = RttEstimator::default();
        for i in 0..5 {
            e.sample(10_000, 2 * i + 1, 2 * i + 2);
        }
        assert_eq!(e.srtt_us(), 10_000);
        assert_eq!(e.rto_us(), 210_000);
    }
}
