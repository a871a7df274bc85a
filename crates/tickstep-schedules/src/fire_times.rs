//! Where a cadence's points fall: how many have arrived by a time, the point `n` intervals on,
//! and the next fire times of a schedule (docs/schedules.md §4.3, §9.8, §14.13).
//!
//! Pure arithmetic on Unix nanoseconds, shared by the engine (which arms deadlines with it) and
//! the operator's view of a store (which shows a stored schedule's next fire times), so both
//! compute them one way. A recurring cadence is a [`Step`]: an interval (`every`), where points
//! are counted by division, or a calendar (`cron`), whose points are searched one by one.

use std::sync::Arc;

use crate::{Calendar, ScheduleKind as Kind};

/// How many of a calendar's points one catch-up counts before it stops counting
/// (docs/schedules.md §14.13): a day of a secondly calendar, about 10 ms of searches.
pub(crate) const MAX_CALENDAR_COUNT: u64 = 100_000;

/// How a recurring schedule goes from one cadence point to the next.
#[derive(Clone, Debug)]
pub(crate) enum Step {
    /// Every `interval` nanoseconds (`every`).
    Interval(u64),
    /// The calendar's next point (`cron`, docs/schedules.md §14.12).
    Calendar(Arc<Calendar>),
}

/// The points from a due one up to a time, as [`Step::arrived`] counts them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Arrived {
    /// How many (at least 1, the due point itself).
    pub(crate) count: u64,
    /// The last of them.
    pub(crate) latest: u64,
    /// The first point after them; `None` past the end of 64-bit nanoseconds (or of the
    /// calendar).
    pub(crate) end: Option<u64>,
}

impl Step {
    /// A recurring schedule's step; `None` for a one-shot.
    pub(crate) fn of(
        kind: Kind,
        interval_ns: u64,
        calendar: Option<&Arc<Calendar>>,
    ) -> Option<Self> {
        match (kind, calendar) {
            (Kind::Every, _) => Some(Step::Interval(interval_ns)),
            (Kind::Cron, Some(c)) => Some(Step::Calendar(Arc::clone(c))),
            // A one-shot, or a calendar schedule without its calendar (never built).
            _ => None,
        }
    }

    /// The point after `point`.
    pub(crate) fn after(&self, point: u64) -> Option<u64> {
        match self {
            Step::Interval(i) => advance(point, *i, 1),
            Step::Calendar(c) => c.next_after(point),
        }
    }

    /// The point `n` points after `point` (`point` itself for 0).
    pub(crate) fn nth(&self, point: u64, n: u64) -> Option<u64> {
        match self {
            Step::Interval(i) => advance(point, *i, n),
            Step::Calendar(c) => (0..n).try_fold(point, |p, _| c.next_after(p)),
        }
    }

    /// The points from `point` that have arrived by `now`, lateness counted from `due` (the
    /// later of the point and its jittered deadline, docs/schedules.md §4.3): at least the
    /// point itself. A calendar counts its real points (docs/schedules.md §14.13), at most
    /// [`MAX_CALENDAR_COUNT`]; past that, `end` is still the first point after the time.
    pub(crate) fn arrived(&self, point: u64, due: u64, now: u64) -> Arrived {
        match self {
            Step::Interval(i) => {
                let count = points_arrived(due, *i, now);
                Arrived {
                    count,
                    latest: point.saturating_add(i.saturating_mul(count - 1)),
                    end: advance(point, *i, count),
                }
            }
            Step::Calendar(c) => {
                // Lateness caused by jitter is not lateness: count up to `now` moved back by it.
                let until = now.saturating_sub(due.saturating_sub(point));
                let a = c.arrived(point, until, MAX_CALENDAR_COUNT);
                Arrived {
                    count: a.count,
                    latest: a.latest,
                    end: a.next,
                }
            }
        }
    }

    /// The points of `[from, to]`, where `anchor` is a point (an interval's points are
    /// `anchor + k × interval` for any whole `k`): the first, the last and how many, counting at
    /// most `cap + 1`; `None` when there are none (docs/schedules.md §9.7).
    pub(crate) fn points_in(
        &self,
        anchor: u64,
        from: u64,
        to: u64,
        cap: u64,
    ) -> Option<(u64, u64, u64)> {
        match self {
            Step::Interval(i) => {
                let (first, count) = interval_points_in(anchor, *i, from, to)?;
                // `first + (count - 1) * interval` is at most `to`: no overflow.
                Some((first, first + (count - 1) * i, count))
            }
            Step::Calendar(c) => {
                let first = c.next_after(from.saturating_sub(1)).filter(|&p| p <= to)?;
                let (mut last, mut count) = (first, 1);
                while let Some(p) = c.next_after(last).filter(|&p| p <= to) {
                    if count > cap {
                        break;
                    }
                    (last, count) = (p, count + 1);
                }
                Some((first, last, count))
            }
        }
    }
}

/// How many cadence points, starting at `point`, have arrived by `now` (at least one: a popped
/// entry's deadline has arrived even when jitter moved it before the point itself).
pub(crate) fn points_arrived(point: u64, interval: u64, now: u64) -> u64 {
    if now <= point || interval == 0 {
        1
    } else {
        (now - point) / interval + 1
    }
}

/// `point + n * interval`, or `None` past the end of 64-bit nanoseconds.
pub(crate) fn advance(point: u64, interval: u64, n: u64) -> Option<u64> {
    interval.checked_mul(n).and_then(|d| point.checked_add(d))
}

/// What the next fire times of a schedule depend on: its cadence, and whether it waits for a
/// deadline now. An engine entry and a stored row (the operator's view) both give one, so the
/// next fire times are computed one way (docs/schedules.md §9.8).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct CadenceView<'a> {
    pub(crate) kind: Kind,
    /// A `Cron` schedule's calendar.
    pub(crate) calendar: Option<&'a Calendar>,
    /// The next cadence point (Unix nanoseconds).
    pub(crate) next_run: u64,
    pub(crate) interval_ns: u64,
    /// Whether a deadline waits (armed, or kept while paused); false while a one-shot runs.
    pub(crate) waiting: bool,
    pub(crate) paused: bool,
    pub(crate) live: bool,
}

/// The next `count` cadence points, nominal (before jitter), Unix nanoseconds: computed, never
/// stored (docs/schedules.md §9.8). A one-shot has its one deadline while it waits for it; a
/// retired schedule has none. A paused recurring one shows the points after `now` that
/// resuming keeps. Each kind of cadence answers here.
pub(crate) fn upcoming(c: CadenceView<'_>, now: u64, count: usize) -> Vec<u64> {
    if !c.live || count == 0 {
        return Vec::new();
    }
    match c.kind {
        Kind::At => {
            if c.waiting {
                vec![c.next_run]
            } else {
                Vec::new()
            }
        }
        Kind::Every => {
            let mut first = Some(c.next_run);
            if c.paused && c.next_run <= now {
                let n = points_arrived(c.next_run, c.interval_ns, now);
                first = advance(c.next_run, c.interval_ns, n);
            }
            let mut out = Vec::with_capacity(count.min(1024));
            let mut next = first;
            while let Some(p) = next.filter(|_| out.len() < count) {
                out.push(p);
                next = advance(p, c.interval_ns, 1);
            }
            out
        }
        Kind::Cron => {
            let Some(calendar) = c.calendar else {
                return Vec::new();
            };
            // A paused calendar shows the points after now that resuming keeps.
            let first = if c.paused && c.next_run <= now {
                calendar.next_after(now)
            } else {
                Some(c.next_run)
            };
            first.map_or_else(Vec::new, |first| {
                std::iter::once(first)
                    .chain(calendar.upcoming(first, count - 1))
                    .collect()
            })
        }
    }
}

/// The cadence points `anchor + k * interval` (any integer `k`) in `[from, to]`: the first and
/// how many; `None` when there are none.
fn interval_points_in(anchor: u64, interval: u64, from: u64, to: u64) -> Option<(u64, u64)> {
    if interval == 0 {
        return None;
    }
    let (a, i, f) = (i128::from(anchor), i128::from(interval), i128::from(from));
    // The smallest k with anchor + k * interval >= from.
    let k = (f - a).div_euclid(i) + i128::from((f - a).rem_euclid(i) != 0);
    let first = u64::try_from(a + k * i).ok()?;
    if first > to {
        return None;
    }
    Some((first, (to - first) / interval + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_arrived_counts_every_point_up_to_now() {
        assert_eq!(points_arrived(10, 5, 9), 1);
        assert_eq!(points_arrived(10, 5, 10), 1);
        assert_eq!(points_arrived(10, 5, 14), 1);
        assert_eq!(points_arrived(10, 5, 15), 2);
        assert_eq!(points_arrived(10, 5, 31), 5);
    }

    #[test]
    fn upcoming_lists_cadence_points_and_skips_what_a_paused_schedule_slept_through() {
        let view = CadenceView {
            kind: Kind::Every,
            calendar: None,
            next_run: 100,
            interval_ns: 10,
            waiting: true,
            paused: false,
            live: true,
        };
        assert_eq!(upcoming(view, 50, 3), vec![100, 110, 120]);
        assert_eq!(
            upcoming(
                CadenceView {
                    paused: true,
                    ..view
                },
                125,
                2
            ),
            vec![130, 140]
        );
        assert_eq!(
            upcoming(
                CadenceView {
                    live: false,
                    ..view
                },
                50,
                3
            ),
            Vec::<u64>::new()
        );
        let near_end = CadenceView {
            next_run: u64::MAX - 5,
            ..view
        };
        assert_eq!(
            upcoming(near_end, 0, 3),
            vec![u64::MAX - 5],
            "stops at the end of time"
        );
        let once = CadenceView {
            kind: Kind::At,
            ..view
        };
        assert_eq!(upcoming(once, 0, 5), vec![100]);
        assert!(
            upcoming(
                CadenceView {
                    waiting: false,
                    ..once
                },
                0,
                5
            )
            .is_empty()
        );
    }

    #[test]
    fn advance_reports_overflow() {
        assert_eq!(advance(10, 5, 2), Some(20));
        assert_eq!(advance(u64::MAX - 1, 5, 1), None);
        assert_eq!(advance(0, u64::MAX, 2), None);
    }
    #[test]
    fn an_intervals_points_in_a_range_are_found_by_arithmetic() {
        // Points at 100 + 60 k.
        assert_eq!(interval_points_in(100, 60, 0, 100), Some((40, 2)));
        assert_eq!(interval_points_in(100, 60, 41, 99), None);
        assert_eq!(interval_points_in(100, 60, 40, 40), Some((40, 1)));
        assert_eq!(interval_points_in(100, 60, 100, 400), Some((100, 6)));
        assert_eq!(interval_points_in(1_000, 60, 0, 59), Some((40, 1)));
        assert_eq!(interval_points_in(100, 0, 0, 400), None);
    }
}
