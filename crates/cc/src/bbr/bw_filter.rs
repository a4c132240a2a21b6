//! Kathleen Nichols' windowed min/max filter, as Linux `lib/win_minmax.c`.
//!
//! The filter keeps the best, second-best and third-best samples of the
//! window, each newer than the one before, so the best value of the last
//! `win` time units is known in O(1) time and memory. BBR v1 keys its
//! bottleneck-bandwidth max filter by round count (window 10 rounds).
//!
//! The estimate is exact when a new best arrives, and otherwise approximate
//! in the way Linux is: when the best sample ages out, the second choice
//! (taken from the second quarter of the window) replaces it.

/// One sample: the time (any monotone unit) and the value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    pub t: u64,
    pub v: u64,
}

/// Linux `struct minmax`: best, 2nd best and 3rd best samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Minmax {
    s: [Sample; 3],
}

impl Minmax {
    /// The current best value.
    #[inline]
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    /// Linux `minmax_reset`: forget everything, keep `meas` taken at `t`.
    pub fn reset(&mut self, t: u64, meas: u64) -> u64 {
        let val = Sample { t, v: meas };
        self.s = [val; 3];
        self.s[0].v
    }

    /// Linux `minmax_subwin_update`: age the choices out of the window.
    fn subwin_update(&mut self, win: u64, val: Sample) -> u64 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // The whole window passed without a new best: the 2nd choice
            // becomes the best and the 3rd the 2nd; the 2nd may be stale
            // too, so this may happen twice.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window passed without a new best: take a
            // 2nd choice from the 2nd quarter.
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window passed: take a 3rd choice from the last half.
            self.s[2] = val;
        }
        self.s[0].v
    }

    /// Linux `minmax_running_max`: windowed maximum over `win`.
    pub fn running_max(&mut self, win: u64, t: u64, meas: u64) -> u64 {
        let val = Sample { t, v: meas };
        if val.v >= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, meas);
        }
        if val.v >= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// Linux `minmax_running_min`: windowed minimum over `win`.
    pub fn running_min(&mut self, win: u64, t: u64, meas: u64) -> u64 {
        let val = Sample { t, v: meas };
        if val.v <= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, meas);
        }
        if val.v <= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if val.v <= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact windowed maximum over (t − win, t] of a sample list.
    fn brute_max(xs: &[(u64, u64)], win: u64, t: u64) -> u64 {
        xs.iter().filter(|&&(ts, _)| t - ts <= win).map(|&(_, v)| v).max().unwrap()
    }

    // Window 10 rounds, as BBR's bw filter. A peak at round 0 is held for
    // rounds 0..=10 and forgotten at round 11; the second choice (the best
    // sample taken after a quarter of the window) then takes over.
    #[test]
    fn max_filter_holds_peak_for_window_then_ages_out() {
        let mut m = Minmax::default();
        let xs = [(0, 100), (1, 60), (2, 50), (3, 70), (4, 40), (5, 45), (6, 30), (7, 20), (8, 20), (9, 20), (10, 20)];
        for &(t, v) in &xs {
            assert_eq!(m.running_max(10, t, v), 100, "round {t}");
        }
        // Round 11: the peak (age 11) leaves; the 2nd choice is 70 from
        // round 3 (chosen once a quarter of the window had passed).
        assert_eq!(m.running_max(10, 11, 20), 70);
        // 70 itself leaves at round 14; the 3rd choice was taken in the
        // second half of the window.
        let v14 = m.running_max(10, 14, 10);
        assert!((10..70).contains(&v14), "{v14}");
    }

    // Monotone rising input: the estimate is always the newest (exact).
    #[test]
    fn max_filter_tracks_rising_samples_exactly() {
        let mut m = Minmax::default();
        for t in 0..50 {
            assert_eq!(m.running_max(10, t, 10 * t + 5), 10 * t + 5);
        }
    }

    // Monotone falling input: the estimate never exceeds the true window
    // maximum and never lags it by more than the filter's design allows
    // (it is at least the true max of the last half window).
    #[test]
    fn max_filter_bounds_on_falling_samples() {
        let mut m = Minmax::default();
        let mut xs = vec![];
        for t in 0..100u64 {
            let v = 1000 - 7 * t;
            xs.push((t, v));
            let got = m.running_max(10, t, v);
            let exact = brute_max(&xs, 10, t);
            assert!(got <= exact, "t={t}: {got} > {exact}");
            let half = brute_max(&xs, 5, t);
            assert!(got >= half, "t={t}: {got} < half-window max {half}");
        }
    }

    // A sample after a gap longer than the window resets the filter.
    #[test]
    fn max_filter_resets_after_silence() {
        let mut m = Minmax::default();
        m.running_max(10, 0, 100);
        m.running_max(10, 1, 50);
        assert_eq!(m.running_max(10, 30, 5), 5);
    }

    // The min filter is the mirror image (used for RTT-like signals).
    #[test]
    fn min_filter_mirrors_max() {
        let mut m = Minmax::default();
        m.reset(0, u64::MAX);
        assert_eq!(m.running_min(10, 0, 40), 40);
        assert_eq!(m.running_min(10, 3, 55), 40);
        assert_eq!(m.running_min(10, 6, 60), 40);
        assert_eq!(m.running_min(10, 10, 70), 40);
        // 40 is 11 old at t = 11: the 2nd choice (55 from t = 3) takes over.
        assert_eq!(m.running_min(10, 11, 80), 55);
        assert_eq!(m.running_min(10, 12, 30), 30, "a new minimum resets");
    }
}
