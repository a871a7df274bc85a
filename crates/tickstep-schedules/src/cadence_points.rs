//! Where a cadence's points fall: how many have arrived by a time, the point `n` intervals on,
//! and the next fire times of a schedule (docs/schedules.md §4.3, §9.8).
//!
//! Pure arithmetic on Unix nanoseconds, shared by the engine (which arms deadlines with it) and
//! the operator's view of a store (which shows a stored schedule's next fire times), so both
//! compute them one way. A new kind of cadence (a calendar) answers [`upcoming`] here.

use crate::ScheduleKind as Kind;

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
pub(crate) struct CadenceView {
    pub(crate) kind: Kind,
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
pub(crate) fn upcoming(c: CadenceView, now: u64, count: usize) -> Vec<u64> {
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
    }
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
}
