//! Why a schedule's cadence points passed without a firing of their own (docs/schedules.md
//! §9.15): the reasons, each schedule's count of each, and its last miss.
//!
//! One [`MissedReason`] names a cause everywhere: the `reason` label of
//! `tickstep_schedules_missed_total` (docs/observability.md §1.4), the counts `schedule_info`
//! shows, and what the store keeps. The engine counts every dropped point in one place, so that
//! the counts by reason add up to `missed_count` and `overlap_count` (docs/schedules.md §9.15).

use crate::Value;

/// Why cadence points passed without a firing of their own (docs/schedules.md §9.15).
///
/// ```
/// use tickstep_schedules::MissedReason;
/// assert_eq!(MissedReason::CatchupWindow.as_str(), "catchup_window");
/// assert_eq!(MissedReason::parse("dst_gap"), Some(MissedReason::DstGap));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissedReason {
    /// Dropped by the catch-up policy after downtime or a stall (`catchup = "skip"`, or all but
    /// the latest under `"once"`, all but the latest 1,000 under `"all"`).
    Catchup,
    /// Arrived while a firing ran and started none (`overlap = "skip"`, a full `"queue"`, the
    /// older points `"cancel_other"` passes over).
    Overlap,
    /// Passed while the schedule was paused, and dropped at its resume (docs/schedules.md §9.4).
    Paused,
    /// A calendar's wall time in a DST gap, dropped by `gap = "skip"` (docs/schedules.md
    /// §14.15).
    DstGap,
    /// Older than the schedule's `catchup_window` when the engine saw it (docs/schedules.md
    /// §16.2).
    CatchupWindow,
}

impl MissedReason {
    /// Every reason, in the order of the metric's labels and of `missed_by`'s keys.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::MissedReason::ALL.len(), 5);
    /// ```
    pub const ALL: [MissedReason; 5] = [
        MissedReason::Catchup,
        MissedReason::Overlap,
        MissedReason::Paused,
        MissedReason::DstGap,
        MissedReason::CatchupWindow,
    ];

    /// The reason's name: the metric's `reason` label and the key in `missed_by`.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::MissedReason::Overlap.as_str(), "overlap");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            MissedReason::Catchup => "catchup",
            MissedReason::Overlap => "overlap",
            MissedReason::Paused => "paused",
            MissedReason::DstGap => "dst_gap",
            MissedReason::CatchupWindow => "catchup_window",
        }
    }

    /// Parses [`MissedReason::as_str`]'s spelling.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::MissedReason::parse("late"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl std::fmt::Display for MissedReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A schedule's missed points by reason, over its life, and its last miss (docs/schedules.md
/// §9.15). `catchup + catchup_window + paused` is `missed_count` and `overlap` is
/// `overlap_count`, for points missed since the store's schema version 12 (`PostgreSQL` 14);
/// `dst_gap` is in neither, as the schedule did what its policy says (docs/schedules.md §14.15).
///
/// ```
/// use tickstep_schedules::{MissedPoints, MissedReason};
/// let m = MissedPoints { catchup: 3, overlap: 1, ..MissedPoints::default() };
/// assert_eq!(m.count(MissedReason::Catchup), 3);
/// assert_eq!(m.total(), 4);
/// ```
#[derive(Clone, Copy, PartialEq, Debug, Default)]
pub struct MissedPoints {
    /// Dropped by the catch-up policy after downtime or a stall.
    pub catchup: u64,
    /// Older than the `catchup_window` when the engine saw them.
    pub catchup_window: u64,
    /// Arrived while a firing ran and started none.
    pub overlap: u64,
    /// Passed while paused (the same count as `paused_missed`).
    pub paused: u64,
    /// A calendar's wall times in DST gaps, skipped by `gap = "skip"`.
    pub dst_gap: u64,
    /// The last miss: when the engine counted it (float Unix seconds) and why; `None` for none
    /// since schema version 12.
    pub last: Option<(f64, MissedReason)>,
}

impl MissedPoints {
    /// The points missed for `reason`.
    ///
    /// ```
    /// use tickstep_schedules::{MissedPoints, MissedReason};
    /// assert_eq!(MissedPoints::default().count(MissedReason::DstGap), 0);
    /// ```
    pub fn count(&self, reason: MissedReason) -> u64 {
        match reason {
            MissedReason::Catchup => self.catchup,
            MissedReason::Overlap => self.overlap,
            MissedReason::Paused => self.paused,
            MissedReason::DstGap => self.dst_gap,
            MissedReason::CatchupWindow => self.catchup_window,
        }
    }

    /// Every point missed, whatever the reason.
    ///
    /// ```
    /// let m = tickstep_schedules::MissedPoints { dst_gap: 2, paused: 1, ..Default::default() };
    /// assert_eq!(m.total(), 3);
    /// ```
    pub fn total(&self) -> u64 {
        MissedReason::ALL
            .into_iter()
            .fold(0u64, |sum, r| sum.saturating_add(self.count(r)))
    }

    /// The counts as a map keyed by reason (`schedule_info`'s `missed_by`, docs/schedules.md
    /// §9.15), every reason present.
    ///
    /// ```
    /// use tickstep_schedules::{MissedPoints, Value};
    /// let m = MissedPoints { overlap: 2, ..Default::default() };
    /// assert_eq!(m.to_value().get("overlap"), Some(&Value::Int(2)));
    /// assert_eq!(m.to_value().get("dst_gap"), Some(&Value::Int(0)));
    /// ```
    pub fn to_value(&self) -> Value {
        Value::Map(
            MissedReason::ALL
                .into_iter()
                .map(|r| {
                    let n = i64::try_from(self.count(r)).unwrap_or(i64::MAX);
                    (Value::from(r.as_str()), Value::Int(n))
                })
                .collect(),
        )
    }

    /// The fields `schedule_info`'s map shows for them (docs/schedules.md §9.15): `missed_by`,
    /// `last_missed_at` (0.0 for none) and `last_missed_reason` (`""` for none).
    ///
    /// ```
    /// use tickstep_schedules::{MissedPoints, MissedReason, Value};
    /// let m = MissedPoints { catchup: 1, last: Some((5.0, MissedReason::Catchup)), ..Default::default() };
    /// let fields = m.fields();
    /// assert_eq!(fields[1], ("last_missed_at", Value::Float(5.0)));
    /// assert_eq!(fields[2], ("last_missed_reason", Value::from("catchup")));
    /// ```
    pub fn fields(&self) -> [(&'static str, Value); 3] {
        [
            ("missed_by", self.to_value()),
            (
                "last_missed_at",
                Value::Float(self.last.map_or(0.0, |(at, _)| at)),
            ),
            (
                "last_missed_reason",
                Value::from(self.last.map_or("", |(_, r)| r.as_str())),
            ),
        ]
    }
}

/// The counts a store keeps, in the `ops` column's JSON (docs/schedules.md §11.48): every
/// reason but `paused`, which `paused_missed` has kept there since schema version 5.
#[derive(Clone, PartialEq, Eq, Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MissedRow {
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) catchup: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) catchup_window: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) overlap: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) dst_gap: u64,
    /// The last miss: Unix nanoseconds, reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) last: Option<(u64, MissedReason)>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl MissedRow {
    /// Whether nothing was missed (the row then keeps no `missed` at all).
    pub(crate) fn is_empty(&self) -> bool {
        let MissedRow {
            catchup,
            catchup_window,
            overlap,
            dst_gap,
            last,
        } = self;
        last.is_none() && *catchup == 0 && *catchup_window == 0 && *overlap == 0 && *dst_gap == 0
    }

    /// Counts `points` missed for `reason` at `at` (Unix nanoseconds); `paused` is counted by
    /// the caller in `paused_missed`, so only the last miss is noted for it here.
    pub(crate) fn add(&mut self, reason: MissedReason, points: u64, at: u64) {
        let count = match reason {
            MissedReason::Catchup => &mut self.catchup,
            MissedReason::CatchupWindow => &mut self.catchup_window,
            MissedReason::Overlap => &mut self.overlap,
            MissedReason::DstGap => &mut self.dst_gap,
            MissedReason::Paused => {
                self.last = Some((at, reason));
                return;
            }
        };
        *count = count.saturating_add(points);
        self.last = Some((at, reason));
    }

    /// The public view, with the `paused` count kept in `paused_missed`.
    pub(crate) fn view(&self, paused: u64) -> MissedPoints {
        MissedPoints {
            catchup: self.catchup,
            catchup_window: self.catchup_window,
            overlap: self.overlap,
            paused,
            dst_gap: self.dst_gap,
            last: self
                .last
                // Float Unix seconds, as `info` shows times.
                .map(|(at, reason)| (at as f64 / 1e9, reason)),
        }
    }
}
