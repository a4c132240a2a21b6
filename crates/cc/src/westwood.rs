//! TCP Westwood+, following Linux `net/ipv4/tcp_westwood.c`.
//!
//! Sources: S. Mascolo, C. Casetti, M. Gerla, M. Y. Sanadidi, R. Wang, "TCP
//! Westwood: bandwidth estimation for enhanced transport over wireless
//! links", ACM MobiCom 2001; L. A. Grieco, S. Mascolo, "Performance
//! evaluation and comparison of Westwood+, New Reno, and Vegas TCP congestion
//! control", ACM CCR 34(2), 2004; the Linux module (A. Dell'Aera, S.
//! Hemminger).
//!
//! Westwood+ probes like Reno; what changes is the window after a loss. It
//! measures the rate at which data is acknowledged, once per RTT, smooths it,
//! and after a loss sets the window to the pipe size that rate implies:
//!
//! ```text
//!  every ACK:   bk += bytes acknowledged
//!  every RTT (≥ 50 ms):  sample = bk / Δt
//!                        bw_ns_est ← (7·bw_ns_est + sample) / 8
//!                        bw_est    ← (7·bw_est + bw_ns_est) / 8
//!  RTTmin = minimum RTT (restarted after an RTO)
//!
//!  loss (Linux): recovery halves cwnd as Reno; when it ends
//!                cwnd = ssthresh = max(bw_est · RTTmin / MSS, 2)
//!  loss (paper): ssthresh = BWE·RTTmin/MSS at once, cwnd = min(cwnd, ssthresh)
//!  RTO:          ssthresh = max(bw_est · RTTmin / MSS, 2), cwnd = 1
//! ```
//!
//! Deviations from Linux:
//! * Time is in µs and the bandwidth in bytes per second. Linux counts in
//!   jiffies (rounding RTT samples up to whole jiffies) and bytes per jiffy,
//!   so its estimates carry rounding this one does not.
//! * `bk` adds the packets each ACK newly delivers, cumulatively or by SACK
//!   (`acked · MSS`). Linux derives the same quantity from `snd_una` moves,
//!   counting a duplicate ACK as one MSS and subtracting it from the
//!   cumulative ACK that later covers it (its `accounted` bookkeeping); with
//!   SACK the delivered count is exact, so the bookkeeping is not needed.
//! * Linux runs the estimator in `in_ack_event`, just before `pkts_acked`
//!   records the ACK's RTT sample, so RTTmin takes a sample one ACK late;
//!   here the sample is recorded first.
//! * The first bandwidth sample fills both filter stages (modern Linux
//!   `westwood_filter`: "If the filter is empty fill it with the first
//!   sample"); not seen in a 2.6-era copy of the file, it was checked in the
//!   current kernel source.

use crate::params::{ParamDefault, ParamKind, ParamSpec, Params};
use crate::{common, AckSample, CaEvent, CongestionControl, Sock, MAX_METRICS};

const USEC_PER_SEC: u64 = 1_000_000;
/// Linux `TCP_WESTWOOD_RTT_MIN` = HZ/20: bandwidth samples cover at least
/// 50 ms, so short RTTs do not give noisy samples, µs.
const RTT_MIN_INTERVAL_US: u64 = 50_000;
/// Linux `TCP_WESTWOOD_INIT_RTT` = 20·HZ: placeholder RTT before the first
/// sample, deliberately too large so the first real sample replaces it, µs.
const INIT_RTT_US: u64 = 20 * USEC_PER_SEC;

/// Westwood+'s parameters.
pub static PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "loss_response",
    kind: ParamKind::Choice(&["linux", "paper"]),
    default: ParamDefault::Str("linux"),
    doc: "\"linux\": Reno halving during recovery, then cwnd = ssthresh = BWE*RTTmin/MSS when it completes (tcp_westwood.c); \"paper\": ssthresh = BWE*RTTmin/MSS on entering recovery and cwnd = min(cwnd, ssthresh) (Mascolo et al. 2001)",
}];

/// When the bandwidth estimate sets the window after a loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossResponse {
    /// Linux: `tcp_reno_ssthresh` on entry, BWE·RTTmin at `CA_EVENT_COMPLETE_CWR`.
    Linux,
    /// Paper: BWE·RTTmin as ssthresh on entry; cwnd = min(cwnd, ssthresh).
    Paper,
}

/// Typed Westwood+ configuration (see [`PARAMS`]).
#[derive(Clone, Debug, PartialEq)]
pub struct WestwoodConfig {
    pub loss_response: LossResponse,
}

impl Default for WestwoodConfig {
    fn default() -> Self {
        WestwoodConfig { loss_response: LossResponse::Linux }
    }
}

impl WestwoodConfig {
    /// Reads resolved registry parameters.
    pub fn from_params(p: &Params) -> WestwoodConfig {
        let loss_response = match p.str("loss_response") {
            "paper" => LossResponse::Paper,
            _ => LossResponse::Linux,
        };
        WestwoodConfig { loss_response }
    }
}

/// Linux `westwood_do_filter`: the low-pass filter (7·a + b)/8, in integers.
#[inline]
pub fn do_filter(a: u64, b: u64) -> u64 {
    (7 * a + b) >> 3
}

/// Linux `struct westwood`.
#[derive(Clone, Debug)]
pub struct Westwood {
    cfg: WestwoodConfig,
    /// First filter stage ("not too smoothed"), bytes/s.
    bw_ns_est: u64,
    /// Bandwidth estimate, bytes/s.
    bw_est: u64,
    /// Start of the current sampling interval, µs.
    rtt_win_sx: u64,
    /// Bytes acknowledged in the current interval.
    bk: u64,
    /// Latest RTT sample, µs.
    rtt_us: u64,
    /// Minimum RTT, µs.
    rtt_min_us: u64,
    /// Take the next RTT sample as RTTmin (after init and after an RTO).
    reset_rtt_min: bool,
    /// Bandwidth samples taken (for traces and tests).
    samples: u64,
}

impl Westwood {
    pub fn new(cfg: WestwoodConfig) -> Westwood {
        Westwood {
            cfg,
            bw_ns_est: 0,
            bw_est: 0,
            rtt_win_sx: 0,
            bk: 0,
            rtt_us: INIT_RTT_US,
            rtt_min_us: INIT_RTT_US,
            reset_rtt_min: true,
            samples: 0,
        }
    }

    /// Linux `westwood_filter`: one bandwidth sample over `delta_us`.
    fn filter(&mut self, delta_us: u64) {
        let sample =
            (self.bk as u128 * USEC_PER_SEC as u128 / delta_us.max(1) as u128).min(u64::MAX as u128 / 8) as u64;
        if self.bw_ns_est == 0 && self.bw_est == 0 {
            // An empty filter takes the first sample as it is.
            self.bw_ns_est = sample;
            self.bw_est = sample;
        } else {
            self.bw_ns_est = do_filter(self.bw_ns_est, sample);
            self.bw_est = do_filter(self.bw_est, self.bw_ns_est);
        }
        self.samples += 1;
    }

    /// Linux `westwood_update_window`: close the interval once it spans
    /// max(RTT, 50 ms).
    fn update_window(&mut self, now_us: u64) {
        let delta = now_us.saturating_sub(self.rtt_win_sx);
        if self.rtt_us != 0 && delta > self.rtt_us.max(RTT_MIN_INTERVAL_US) {
            self.filter(delta);
            self.bk = 0;
            self.rtt_win_sx = now_us;
        }
    }

    /// Linux `update_rtt_min`.
    fn update_rtt_min(&mut self) {
        if self.reset_rtt_min {
            self.rtt_min_us = self.rtt_us;
            self.reset_rtt_min = false;
        } else {
            self.rtt_min_us = self.rtt_min_us.min(self.rtt_us);
        }
    }

    /// Linux `tcp_westwood_bw_rttmin`: the pipe size BWE·RTTmin, packets, ≥ 2.
    pub fn bw_rttmin(&self, mss: u32) -> u32 {
        let pkts = self.bw_est as u128 * self.rtt_min_us as u128 / USEC_PER_SEC as u128 / mss.max(1) as u128;
        pkts.clamp(2, u32::MAX as u128) as u32
    }
}

impl CongestionControl for Westwood {
    /// Linux `tcp_westwood_init`.
    fn init(&mut self, tp: &mut Sock) {
        *self = Westwood::new(self.cfg.clone());
        self.rtt_win_sx = tp.now_us;
    }

    /// Linux uses `tcp_reno_ssthresh` and applies the estimate when recovery
    /// completes; the paper applies it here.
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        match self.cfg.loss_response {
            LossResponse::Linux => common::reno_ssthresh(tp),
            LossResponse::Paper => self.bw_rttmin(tp.mss),
        }
    }

    /// Reno's growth (Linux `tcp_reno_cong_avoid`).
    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        common::reno_cong_avoid(tp, acked);
    }

    /// The RTT sample (Linux `tcp_westwood_pkts_acked`) and the estimator
    /// (Linux `tcp_westwood_ack`).
    fn pkts_acked(&mut self, tp: &mut Sock, sample: &AckSample) {
        if sample.rtt_us > 0 {
            self.rtt_us = sample.rtt_us as u64;
        }
        self.update_window(tp.now_us);
        self.bk = self.bk.saturating_add(sample.acked as u64 * tp.mss as u64);
        self.update_rtt_min();
    }

    /// Linux `tcp_westwood_event`.
    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        match ev {
            CaEvent::CompleteCwr => {
                let pipe = self.bw_rttmin(tp.mss);
                match self.cfg.loss_response {
                    LossResponse::Linux => {
                        tp.snd_ssthresh = pipe;
                        tp.snd_cwnd = pipe.min(tp.snd_cwnd_clamp);
                    }
                    // ssthresh was set on entry; cwnd = min(cwnd before the loss, ssthresh).
                    LossResponse::Paper => tp.snd_cwnd = tp.prior_cwnd.min(tp.snd_ssthresh).max(2),
                }
            }
            CaEvent::Loss => {
                // RTO: the sender has set ssthresh from `ssthresh()`; Westwood
                // replaces it with the pipe size, and restarts RTTmin.
                tp.snd_ssthresh = self.bw_rttmin(tp.mss);
                self.reset_rtt_min = true;
            }
            _ => {}
        }
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &["bw_est_bytes_s", "rtt_min_us", "bw_ns_est_bytes_s", "bw_samples"]
    }

    fn metrics(&self, out: &mut [f64; MAX_METRICS]) {
        out[0] = self.bw_est as f64;
        out[1] = self.rtt_min_us as f64;
        out[2] = self.bw_ns_est as f64;
        out[3] = self.samples as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit;
    use crate::{CaState, INFINITE_SSTHRESH};

    const MSS: u32 = 1448;

    fn sock(cwnd: u32, ssthresh: u32) -> Sock {
        testkit::sock_at(cwnd, ssthresh, 1_000_000)
    }

    fn ack(acked: u32, rtt_us: i64) -> AckSample {
        AckSample { acked, rtt_us, ..Default::default() }
    }

    fn westwood() -> Westwood {
        Westwood::new(WestwoodConfig::default())
    }

    #[test]
    fn defaults() {
        let p = crate::registry::resolve_params("westwood", &[]).unwrap();
        assert_eq!(WestwoodConfig::from_params(&p), WestwoodConfig::default());
        let p = crate::registry::resolve_params(
            "westwood",
            &[("loss_response".into(), crate::ParamValue::Str("paper".into()))],
        )
        .unwrap();
        assert_eq!(WestwoodConfig::from_params(&p).loss_response, LossResponse::Paper);
    }

    // Worked example: bw_est = 10 Mb/s = 1.25e6 B/s, RTTmin 50 ms, MSS 1448:
    // 1.25e6 · 0.05 / 1448 = 43.16 → 43 packets; never below 2.
    #[test]
    fn tv_pipe_size() {
        let mut w = westwood();
        w.bw_est = 1_250_000;
        w.rtt_min_us = 50_000;
        assert_eq!(w.bw_rttmin(MSS), 43);
        w.bw_est = 0;
        assert_eq!(w.bw_rttmin(MSS), 2);
    }

    // Linux's integer filter, (7a + b) >> 3: samples 100, 100, 200 →
    // (100, 100) after the first (an empty filter takes it whole),
    // (100, 100) after the second, then
    // bw_ns_est = (700 + 200) >> 3 = 112, bw_est = (700 + 112) >> 3 = 101.
    #[test]
    fn tv_filter() {
        let mut w = westwood();
        let mut got = vec![];
        for s in [100u64, 100, 200] {
            w.bk = s; // over exactly 1 s, so the sample is s bytes/s
            w.filter(USEC_PER_SEC);
            got.push((w.bw_ns_est, w.bw_est));
        }
        assert_eq!(got, [(100, 100), (100, 100), (112, 101)]);
        assert_eq!(do_filter(100, 200), 112);
        assert_eq!(w.samples, 3);
    }

    // A sample closes only after max(RTT, 50 ms): with RTT 20 ms the interval
    // is 50 ms; with RTT 80 ms, 80 ms. The ACK that closes it counts toward
    // the next interval. 10 packets per 10 ms = 1448 kB/s.
    #[test]
    fn sampling_interval_is_max_rtt_50ms() {
        for (rtt, closes_after_ms) in [(20_000i64, 60u64), (80_000, 90)] {
            let mut w = westwood();
            let mut tp = sock(10, INFINITE_SSTHRESH);
            w.init(&mut tp);
            let t0 = tp.now_us;
            let mut closed_at = None;
            for step in 1..=20u64 {
                tp.now_us = t0 + step * 10_000;
                w.pkts_acked(&mut tp, &ack(10, rtt));
                if closed_at.is_none() && w.samples == 1 {
                    closed_at = Some(step * 10);
                }
            }
            assert_eq!(closed_at, Some(closes_after_ms), "RTT {rtt}");
        }
        // The first sample: 5 ACKs (the 6th closes at 60 ms) = 50 packets in
        // 60 ms = 72400 B / 0.06 s.
        let mut w = westwood();
        let mut tp = sock(10, INFINITE_SSTHRESH);
        w.init(&mut tp);
        let t0 = tp.now_us;
        for step in 1..=6u64 {
            tp.now_us = t0 + step * 10_000;
            w.pkts_acked(&mut tp, &ack(10, 20_000));
        }
        assert_eq!(w.bw_est, 50 * MSS as u64 * 1_000_000 / 60_000);
        assert_eq!(w.bk, 10 * MSS as u64, "the closing ACK starts the next interval");
        assert_eq!(w.rtt_min_us, 20_000);
    }

    // RTTmin: the first sample replaces the 20 s placeholder, later ones only
    // lower it, and after an RTO the next sample replaces it again.
    #[test]
    fn rtt_min_tracking_and_rto_reset() {
        let mut w = westwood();
        let mut tp = sock(10, INFINITE_SSTHRESH);
        w.init(&mut tp);
        assert_eq!(w.rtt_min_us, INIT_RTT_US);
        w.pkts_acked(&mut tp, &ack(1, 60_000));
        assert_eq!(w.rtt_min_us, 60_000);
        w.pkts_acked(&mut tp, &ack(1, 70_000));
        w.pkts_acked(&mut tp, &ack(1, -1));
        assert_eq!(w.rtt_min_us, 60_000);
        w.bw_est = 1_250_000;
        tp.snd_ssthresh = w.ssthresh(&tp);
        w.cwnd_event(&mut tp, CaEvent::Loss);
        // 1.25e6 · 0.06 / 1448 = 51.8 → 51.
        assert_eq!(tp.snd_ssthresh, 51);
        w.pkts_acked(&mut tp, &ack(1, 90_000));
        assert_eq!(w.rtt_min_us, 90_000, "restarted after the RTO");
    }

    // Narrative: slow start, steady ACK clock at 1.25 MB/s (RTT 50 ms), a
    // loss at cwnd 80. Linux: recovery enters with Reno's 40, and when it
    // completes cwnd = ssthresh = BWE·RTTmin = 43. Paper mode sets 43 on
    // entry and keeps it.
    #[test]
    fn narrative_estimate_then_loss() {
        for mode in [LossResponse::Linux, LossResponse::Paper] {
            let mut w = Westwood::new(WestwoodConfig { loss_response: mode });
            let mut tp = sock(10, INFINITE_SSTHRESH);
            w.init(&mut tp);
            // 2 s of ACKs at 1.25 MB/s: one packet of 1448 B every 1158 µs,
            // RTT 50 ms; slow start, then Reno growth capped at 80.
            let gap = 1_000_000 * MSS as u64 / 1_250_000;
            let t0 = tp.now_us;
            let mut n = 0u64;
            while tp.now_us < t0 + 2_000_000 {
                n += 1;
                tp.now_us = t0 + n * gap;
                w.pkts_acked(&mut tp, &ack(1, 50_000));
                w.cong_avoid(&mut tp, 1);
                tp.max_packets_out = tp.snd_cwnd;
                if tp.snd_cwnd >= 80 {
                    tp.snd_ssthresh = tp.snd_ssthresh.min(80);
                }
            }
            let bw = w.bw_est as f64;
            assert!((bw / 1_250_000.0 - 1.0).abs() < 0.01, "estimate {bw}");
            assert_eq!(w.bw_rttmin(MSS), 43);

            tp.snd_cwnd = 80;
            tp.prior_cwnd = 80;
            tp.snd_ssthresh = w.ssthresh(&tp);
            w.set_state(&mut tp, CaState::Recovery);
            match mode {
                LossResponse::Linux => assert_eq!(tp.snd_ssthresh, 40),
                LossResponse::Paper => assert_eq!(tp.snd_ssthresh, 43),
            }
            // The sender's recovery ends with cwnd = ssthresh, then the event.
            tp.snd_cwnd = tp.snd_ssthresh;
            w.cwnd_event(&mut tp, CaEvent::CompleteCwr);
            assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (43, 43), "{mode:?}");
            // Then Reno growth: +1 after a window of ACKs.
            for _ in 0..43 {
                w.cong_avoid(&mut tp, 1);
            }
            assert_eq!(tp.snd_cwnd, 44);
        }
        // Paper mode never raises cwnd above what it was: pipe 43 > cwnd 30.
        let mut w = Westwood::new(WestwoodConfig { loss_response: LossResponse::Paper });
        let mut tp = sock(30, 30);
        (w.bw_est, w.rtt_min_us) = (1_250_000, 50_000);
        tp.prior_cwnd = 30;
        tp.snd_ssthresh = w.ssthresh(&tp);
        w.cwnd_event(&mut tp, CaEvent::CompleteCwr);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (30, 43));
    }

    #[test]
    fn metric_names_fixed() {
        let mut w = westwood();
        (w.bw_est, w.rtt_min_us, w.bw_ns_est, w.samples) = (1, 2, 3, 4);
        let mut m = [0.0; MAX_METRICS];
        w.metrics(&mut m);
        assert_eq!(w.metric_names(), &["bw_est_bytes_s", "rtt_min_us", "bw_ns_est_bytes_s", "bw_samples"]);
        assert_eq!(&m[..4], &[1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn extremes_do_not_panic() {
        let mut w = westwood();
        let mut tp = sock(10, INFINITE_SSTHRESH);
        w.init(&mut tp);
        tp.now_us = u64::MAX;
        w.pkts_acked(&mut tp, &ack(u32::MAX, i64::MAX));
        w.bk = u64::MAX;
        w.filter(1);
        w.filter(1);
        w.rtt_min_us = u64::MAX;
        assert!(w.bw_rttmin(1) >= 2);
        assert!(w.bw_rttmin(0) >= 2);
        w.cwnd_event(&mut tp, CaEvent::CompleteCwr);
        w.cwnd_event(&mut tp, CaEvent::Loss);
    }
}
