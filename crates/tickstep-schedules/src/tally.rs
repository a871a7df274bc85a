//! What the engine has counted since it was built, for a host that charts it over time
//! (docs/schedules.md §9.18): firings started, points missed by reason, and the lateness of each
//! start in power-of-two buckets. The same events the metrics facade records, kept where the
//! host can read them without a recorder; a host takes the difference of two reads.

use crate::MissedReason;

/// How many lateness buckets there are: bucket 0 holds starts under 1 µs late, bucket `i` those
/// from 2^(i−1) to 2^i µs, and the last one everything later (2^38 µs is over three days).
pub const LATENESS_BUCKETS: usize = 40;

/// Starts counted by lateness in power-of-two buckets of microseconds (docs/schedules.md §9.18):
/// a fixed array, so recording one allocates nothing and a percentile is read to within a
/// factor of two (the bucket's upper bound).
///
/// ```
/// use tickstep_schedules::LatenessBuckets;
/// let mut b = LatenessBuckets::default();
/// for _ in 0..99 { b.record(3_000_000); } // 3 ms late
/// b.record(2_000_000_000); // 2 s late
/// assert_eq!(b.samples(), 100);
/// assert_eq!(b.quantile(0.50), 0.004096, "3 ms is in the bucket up to 4,096 µs");
/// assert_eq!(b.quantile(1.0), 2.097152);
/// assert_eq!(LatenessBuckets::default().quantile(0.99), 0.0, "no samples");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LatenessBuckets(pub [u64; LATENESS_BUCKETS]);

impl Default for LatenessBuckets {
    fn default() -> Self {
        LatenessBuckets([0; LATENESS_BUCKETS])
    }
}

impl LatenessBuckets {
    /// The bucket of a start `late_nanos` late.
    ///
    /// ```
    /// use tickstep_schedules::LatenessBuckets;
    /// assert_eq!(LatenessBuckets::bucket(999), 0);
    /// assert_eq!(LatenessBuckets::bucket(1_000), 1);
    /// assert_eq!(LatenessBuckets::bucket(u64::MAX), 39);
    /// ```
    pub fn bucket(late_nanos: u64) -> usize {
        let micros = late_nanos / 1_000;
        // 0 for 0 µs; else one more than the highest set bit: 1 µs is bucket 1, 2–3 µs bucket 2.
        let bits = (u64::BITS - micros.leading_zeros()) as usize;
        bits.min(LATENESS_BUCKETS - 1)
    }

    /// Counts one start `late_nanos` late.
    ///
    /// ```
    /// let mut b = tickstep_schedules::LatenessBuckets::default();
    /// b.record(5_000);
    /// assert_eq!(b.0[3], 1, "5 µs: from 4 to 8 µs");
    /// ```
    pub fn record(&mut self, late_nanos: u64) {
        self.0[Self::bucket(late_nanos)] += 1;
    }

    /// How many starts are counted.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::LatenessBuckets::default().samples(), 0);
    /// ```
    pub fn samples(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Adds `other`'s counts to these.
    ///
    /// ```
    /// let mut a = tickstep_schedules::LatenessBuckets::default();
    /// let mut b = a;
    /// b.record(1);
    /// a.add(&b);
    /// assert_eq!(a.samples(), 1);
    /// ```
    pub fn add(&mut self, other: &LatenessBuckets) {
        for (mine, theirs) in self.0.iter_mut().zip(other.0) {
            *mine += theirs;
        }
    }

    /// The counts since `earlier`, a previous read of the same buckets.
    ///
    /// ```
    /// let mut b = tickstep_schedules::LatenessBuckets::default();
    /// let before = b;
    /// b.record(1);
    /// assert_eq!(b.since(&before).samples(), 1);
    /// ```
    #[must_use]
    pub fn since(&self, earlier: &LatenessBuckets) -> LatenessBuckets {
        let mut out = *self;
        for (now, then) in out.0.iter_mut().zip(earlier.0) {
            *now = now.saturating_sub(then);
        }
        out
    }

    /// The `q` quantile (0 to 1), nearest rank, as the upper bound of its bucket in seconds
    /// (0.0 without samples; bucket 0 reads as 0.0).
    ///
    /// ```
    /// let mut b = tickstep_schedules::LatenessBuckets::default();
    /// b.record(0);
    /// assert_eq!(b.quantile(0.99), 0.0, "on time");
    /// ```
    pub fn quantile(&self, q: f64) -> f64 {
        let n = self.samples();
        if n == 0 {
            return 0.0;
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, count) in self.0.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return if i == 0 {
                    0.0
                } else {
                    (1u64 << i) as f64 / 1e6
                };
            }
        }
        0.0
    }
}

/// The engine's running counts ([`Schedules::tally`](crate::Schedules::tally), docs/schedules.md
/// §9.18), from when the engine was built.
///
/// ```
/// use tickstep_schedules::{EngineTally, MissedReason};
/// let t = EngineTally::default();
/// assert_eq!((t.started, t.missed(MissedReason::Overlap)), (0, 0));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct EngineTally {
    /// Firings started.
    pub started: u64,
    /// Cadence points missed, by reason in the order of [`MissedReason::ALL`].
    pub missed_by: [u64; MissedReason::ALL.len()],
    /// Each start's lateness.
    pub lateness: LatenessBuckets,
}

impl EngineTally {
    /// Points missed for `reason`.
    ///
    /// ```
    /// use tickstep_schedules::{EngineTally, MissedReason};
    /// let t = EngineTally { missed_by: [0, 2, 0, 0, 0], ..Default::default() };
    /// assert_eq!(t.missed(MissedReason::Overlap), 2);
    /// ```
    pub fn missed(&self, reason: MissedReason) -> u64 {
        self.missed_by[reason as usize]
    }

    pub(crate) fn started(&mut self, late_nanos: u64) {
        self.started += 1;
        self.lateness.record(late_nanos);
    }
}
