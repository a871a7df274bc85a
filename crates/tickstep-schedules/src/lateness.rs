//! How late firings started: the percentiles of [`FiringRecord::lateness`](crate::FiringRecord::lateness)
//! over the firings a store keeps (docs/schedules.md §9.16). A leaf: `Lateness::of`, which reads
//! firing records, lives beside them in `info`.

use crate::Value;

/// The 50th and 99th percentiles of firings' lateness, seconds, and how many firings they are
/// taken over (docs/schedules.md §9.16): one schedule's kept history, or every schedule's.
/// Percentiles are nearest-rank: each is one of the samples.
///
/// ```
/// use tickstep_schedules::{FiringRecord, Lateness};
/// let record = |late: f64| FiringRecord { started: 10.0 + late, ended: 11.0 + late, nominal: 10.0, fault: None };
/// let records: Vec<_> = (0..100).map(|i| record(f64::from(i))).collect();
/// let l = Lateness::of(&records);
/// assert_eq!((l.p50, l.p99, l.samples), (49.0, 98.0, 100));
/// assert_eq!(Lateness::of(&[]), Lateness::default());
/// ```
#[derive(Clone, Copy, PartialEq, Debug, Default)]
pub struct Lateness {
    /// The median lateness, seconds (0.0 without samples).
    pub p50: f64,
    /// The 99th percentile, seconds (0.0 without samples).
    pub p99: f64,
    /// How many firings they cover.
    pub samples: usize,
}

impl Lateness {
    /// The percentiles of `seconds`, lateness samples in any order.
    ///
    /// ```
    /// let l = tickstep_schedules::Lateness::of_seconds(vec![3.0, 1.0, 2.0]);
    /// assert_eq!((l.p50, l.p99, l.samples), (2.0, 3.0, 3));
    /// ```
    pub fn of_seconds(mut seconds: Vec<f64>) -> Lateness {
        if seconds.is_empty() {
            return Lateness::default();
        }
        seconds.sort_unstable_by(f64::total_cmp);
        let rank = |q: f64| {
            // Nearest rank: the smallest sample with at least q of them at or below it.
            let n = seconds.len();
            let at = (q * n as f64).ceil() as usize;
            seconds[at.clamp(1, n) - 1]
        };
        Lateness {
            p50: rank(0.50),
            p99: rank(0.99),
            samples: seconds.len(),
        }
    }

    /// The fields `schedule_info`'s map shows (docs/schedules.md §9.16): `lateness_p50`,
    /// `lateness_p99` (float seconds) and `lateness_samples`.
    ///
    /// ```
    /// use tickstep_schedules::{Lateness, Value};
    /// let fields = Lateness { p50: 0.5, p99: 2.0, samples: 20 }.fields();
    /// assert_eq!(fields[2], ("lateness_samples", Value::Int(20)));
    /// ```
    pub fn fields(&self) -> [(&'static str, Value); 3] {
        [
            ("lateness_p50", Value::Float(self.p50)),
            ("lateness_p99", Value::Float(self.p99)),
            (
                "lateness_samples",
                Value::Int(i64::try_from(self.samples).unwrap_or(i64::MAX)),
            ),
        ]
    }
}
