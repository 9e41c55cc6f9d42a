//! The one place for the statistics of many games: a running mean with its 95 %
//! normal-approximation interval ([`Moments`], [`Mean`]) and a rate with its 95 % Wilson
//! score interval ([`Rate`]). The arena's report, `simulate` and the coach all use these.

use serde::Serialize;

/// The 0.975 quantile of the standard normal distribution.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Running sums of per-game numbers, for their mean and its 95 % interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Moments {
    count: u64,
    sum: f64,
    sum_squares: f64,
}

impl Moments {
    pub fn add(&mut self, x: f64) {
        self.count += 1;
        self.sum += x;
        self.sum_squares += x * x;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    /// The sample standard deviation (0 below two numbers).
    pub fn std_dev(&self) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        let (n, mean) = (self.count as f64, self.mean());
        ((self.sum_squares - n * mean * mean) / (n - 1.0))
            .max(0.0)
            .sqrt()
    }

    /// The mean's 95 % interval (the mean itself below two numbers).
    pub fn ci95(&self) -> [f64; 2] {
        let mean = self.mean();
        let half = Z95 * self.std_dev() / (self.count.max(1) as f64).sqrt();
        [mean - half, mean + half]
    }

    /// The mean, its interval and the standard deviation, as reports give them.
    pub fn summary(&self) -> Mean {
        let [low, high] = self.ci95();
        Mean {
            mean: self.mean(),
            low,
            high,
            std_dev: self.std_dev(),
        }
    }
}

/// A mean with its 95 % normal-approximation interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mean {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
    pub std_dev: f64,
}

/// A rate with its 95 % Wilson score interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rate {
    pub rate: f64,
    pub low: f64,
    pub high: f64,
}

impl Rate {
    pub fn of(hits: u64, total: u64) -> Rate {
        let n = total as f64;
        let p = hits as f64 / n;
        let z2 = Z95 * Z95;
        let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
        let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
        Rate {
            rate: p,
            low: (centre - half).max(0.0),
            high: (centre + half).min(1.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_matches_a_known_case() {
        // 50 of 100: 0.5 with the Wilson interval 0.4038..0.5962
        let r = Rate::of(50, 100);
        assert_eq!(r.rate, 0.5);
        assert!(
            (r.low - 0.403_8).abs() < 1e-4 && (r.high - 0.596_2).abs() < 1e-4,
            "{r:?}"
        );
        let none = Rate::of(0, 10);
        assert_eq!(none.low, 0.0);
        assert!(none.high > 0.25 && none.high < 0.3, "{none:?}");
    }

    #[test]
    fn the_mean_s_interval_matches_a_hand_computation() {
        let mut m = Moments::default();
        for x in [1.0, 2.0, 3.0, 4.0] {
            m.add(x);
        }
        // mean 2.5, sample variance 5/3, half-width Z95 * sqrt(5/3 / 4)
        let half = Z95 * (5.0f64 / 3.0 / 4.0).sqrt();
        let [low, high] = m.ci95();
        assert!((m.mean() - 2.5).abs() < 1e-15);
        assert!((low - (2.5 - half)).abs() < 1e-12 && (high - (2.5 + half)).abs() < 1e-12);
        let mut one = Moments::default();
        one.add(7.0);
        assert_eq!(one.ci95(), [7.0, 7.0]);
    }
}
