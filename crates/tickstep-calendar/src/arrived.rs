//! Which of a calendar's points have arrived by a time: what catch-up counts for a calendar
//! schedule (docs/schedules.md §14.10).
//!
//! An `every` schedule divides the time passed by its interval (docs/schedules.md §4.3); a calendar's points are not
//! evenly spaced — a DST fold under `fold = "both"` repeats one, a gap under `gap = "skip"`
//! removes one, months differ in length — so they are counted one by one with
//! [`Calendar::next_after`], each a bit-set search (docs/schedules.md §14.7). The count stops at a cap the caller
//! chooses, so a long outage of a secondly calendar costs at most `cap` searches.

use super::{Calendar, NANOS};

/// The points of a calendar from one point up to a time (docs/schedules.md §14.10), as
/// [`Calendar::arrived`] counts them.
///
/// ```
/// use tickstep_calendar::{Calendar, DstPolicy};
/// let cal = Calendar::new("@hourly", "UTC", DstPolicy::default())?;
/// let hour = 3_600_000_000_000;
/// let a = cal.arrived(hour, 3 * hour + 1, 1_000);
/// assert_eq!((a.count, a.latest, a.next, a.capped), (3, 3 * hour, Some(4 * hour), false));
/// # Ok::<(), tickstep_calendar::CalendarError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PointsArrived {
    /// How many points arrived, the first included (at least 1; at most the cap).
    pub count: u64,
    /// The last of them (Unix nanoseconds); when `capped`, the cap-th, not the newest.
    pub latest: u64,
    /// The first point strictly after the time, `None` when the calendar ends first.
    pub next: Option<u64>,
    /// Whether the count stopped at the cap with more points before the time.
    pub capped: bool,
}

impl Calendar {
    /// Counts the calendar's points from `point` (a point of the calendar, counted even when it
    /// is after `now`, as a due deadline is) through `now`, real instants one by one: a fold
    /// that repeats a wall time under `fold = "both"` counts twice, a gap skipped under
    /// `gap = "skip"` not at all (docs/schedules.md §14.10). At most `cap` (at least 1) are
    /// counted; past the cap `next` is still the first point after `now`.
    ///
    /// ```
    /// use tickstep_calendar::{Calendar, DstPolicy, FoldPolicy, GapPolicy};
    /// // 01:30 every day in London, where 2026-10-25 shows 01:00-02:00 twice.
    /// let both = DstPolicy { gap: GapPolicy::Shift, fold: FoldPolicy::Both };
    /// let cal = Calendar::new("30 1 * * *", "Europe/London", both)?;
    /// let s = 1_000_000_000;
    /// let first = 1_792_801_800 * s; // 2026-10-24 01:30 BST
    /// let now = 1_792_980_000 * s; // 2026-10-26 02:00 GMT: two wall-clock days later
    /// let a = cal.arrived(first, now, 1_000);
    /// assert_eq!(a.count, 4, "24th, 25th in BST, 25th again in GMT, 26th");
    /// assert_eq!(a.next, Some((1_792_978_200 + 86_400) * s));
    /// # Ok::<(), tickstep_calendar::CalendarError>(())
    /// ```
    pub fn arrived(&self, point: u64, now: u64, cap: u64) -> PointsArrived {
        let cap = cap.max(1);
        let mut arrived = PointsArrived {
            count: 1,
            latest: point,
            next: self.next_after(point),
            capped: false,
        };
        while let Some(p) = arrived.next.filter(|&p| p <= now) {
            if arrived.count == cap {
                arrived.capped = true;
                // Counting stops here; the next deadline does not depend on the count.
                arrived.next = self.next_after(now);
                break;
            }
            arrived.count += 1;
            arrived.latest = p;
            arrived.next = self.next_after(p);
        }
        arrived
    }
}

impl Calendar {
    /// How many DST gaps in `(after, until]` (Unix nanoseconds) held a wall time of the
    /// calendar that `gap = "skip"` dropped: one per gap, the firing `shift` would have made
    /// there (docs/schedules.md §14.15). 0 under `shift`, and for an expression the policy does
    /// not apply to (docs/schedules.md §14.5). Costs a zone lookup per transition crossed.
    ///
    /// ```
    /// use tickstep_calendar::{Calendar, DstPolicy, FoldPolicy, GapPolicy};
    /// // 02:30 in Paris does not exist on 2026-03-29: the clocks go from 02:00 to 03:00.
    /// let skip = DstPolicy { gap: GapPolicy::Skip, fold: FoldPolicy::First };
    /// let cal = Calendar::new("30 2 * * *", "Europe/Paris", skip)?;
    /// let (sat, mon) = (1_774_656_000 * 1_000_000_000, 1_774_828_800 * 1_000_000_000);
    /// assert_eq!(cal.gaps_skipped(sat, mon), 1);
    /// let shift = Calendar::new("30 2 * * *", "Europe/Paris", DstPolicy::default())?;
    /// assert_eq!(shift.gaps_skipped(sat, mon), 0, "shift fires at 03:00 instead");
    /// # Ok::<(), tickstep_calendar::CalendarError>(())
    /// ```
    pub fn gaps_skipped(&self, after: u64, until: u64) -> u64 {
        if self.policy.gap != super::GapPolicy::Skip || self.spec.every_hour() {
            return 0;
        }
        let (mut low, until) = (
            i64::try_from(after / NANOS).unwrap_or(i64::MAX),
            i64::try_from(until / NANOS).unwrap_or(i64::MAX),
        );
        let mut gaps = 0;
        while low < until {
            let stretch = super::dst::stretch_at(&self.zone, low);
            let Some((end, next_offset)) = stretch.end.filter(|&(end, _)| end <= until) else {
                break;
            };
            let before = stretch.offset;
            if before < next_offset
                && self
                    .spec
                    .next_match(end + before, end + next_offset)
                    .is_some()
            {
                gaps += 1;
            }
            low = end;
        }
        gaps
    }
}
