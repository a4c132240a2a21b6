//! A log-linear histogram of non-negative integers (HDR-histogram style):
//! exact below 128, then 64 buckets per power of two, so a quantile is within
//! 0.8 % of the true value. Fixed size, no allocation after construction.

const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS; // 64
const EXACT: u64 = 2 * SUB; // values below 128 are exact
const BUCKETS: usize = ((64 - SUB_BITS as usize) * SUB as usize) + SUB as usize;

#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u32>,
    n: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

#[inline]
fn index(v: u64) -> usize {
    if v < EXACT {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // floor(log2 v) ≥ 7
    let shift = e - SUB_BITS;
    ((e - SUB_BITS) as u64 * SUB + (v >> shift)) as usize
}

/// Lower bound and width of bucket `i`.
fn bounds(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < EXACT {
        return (i, 1);
    }
    let shift = i / SUB - 1;
    let mant = i - shift * SUB;
    (mant << shift, 1 << shift)
}

impl Histogram {
    pub fn new() -> Histogram {
        Histogram { counts: Vec::new(), n: 0, sum: 0, min: u64::MAX, max: 0 }
    }

    /// Forgets every value, keeping the buckets for reuse.
    pub fn clear(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.n = 0;
        self.sum = 0;
        self.min = u64::MAX;
        self.max = 0;
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        if self.counts.is_empty() {
            self.counts.resize(BUCKETS, 0);
        }
        self.counts[index(v)] += 1;
        self.n += 1;
        self.sum += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum as f64 / self.n as f64)
    }

    pub fn min(&self) -> Option<u64> {
        (self.n > 0).then_some(self.min)
    }

    pub fn max(&self) -> Option<u64> {
        (self.n > 0).then_some(self.max)
    }

    /// The q-quantile (0 ≤ q ≤ 1): the midpoint of the bucket holding the
    /// ⌈q·n⌉-th smallest value, clamped to the observed min and max.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c as u64;
            if seen >= rank {
                let (lo, w) = bounds(i);
                let mid = lo as f64 + (w as f64 - 1.0) / 2.0;
                return Some(mid.clamp(self.min as f64, self.max as f64));
            }
        }
        Some(self.max as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_cover_values() {
        let mut prev_end = 0u64;
        for i in 0..BUCKETS {
            let (lo, w) = bounds(i);
            assert_eq!(lo, prev_end, "bucket {i}");
            assert_eq!(index(lo), i);
            assert_eq!(index(lo + w - 1), i);
            prev_end = lo + w;
            if prev_end > (1u64 << 62) {
                break;
            }
        }
    }

    #[test]
    fn quantiles_within_one_percent() {
        let mut h = Histogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 37);
        }
        for q in [0.01, 0.5, 0.9, 0.99] {
            let exact = (q * 100_000.0) * 37.0;
            let got = h.quantile(q).unwrap();
            assert!((got - exact).abs() / exact < 0.01, "q {q}: {got} vs {exact}");
        }
        assert_eq!(h.mean().unwrap(), 37.0 * 50_000.5);
        assert_eq!(h.min(), Some(37));
    }

    #[test]
    fn small_values_are_exact() {
        let mut h = Histogram::new();
        for v in [3, 3, 5, 100] {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), Some(3.0));
        assert_eq!(h.quantile(1.0), Some(100.0));
    }
}
