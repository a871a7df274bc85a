//! Next occurrence: the first instant after a given one at which a calendar fires, walking the
//! zone's stretches (see `dst.rs`) in order (docs/schedules.md §14.4–§14.7).
//!
//! Within one stretch the offset is fixed, so wall time and instants move together and the first
//! wall-clock match in the stretch's wall range is its first firing — unless the DST policy
//! refuses it because it is one pass of a fold, in which case the search jumps past the refused
//! pass. A gap's wall times belong to no stretch; under `shift` they fire at the transition that
//! ends the gap, checked when the search reaches that transition. Each step is a zone lookup (a
//! binary search in the bundled rules) and one wall-clock search, so a call costs a few of those
//! per transition crossed, and nothing is allocated.

use jiff::tz::TimeZone;

use super::civil::{DAY, LAST_YEAR, days_from_civil};
use super::dst::{DstPolicy, FoldPolicy, GapPolicy, offset_at, stretch_at, stretch_start};
use super::expr::CronSpec;

/// The last whole second a deadline can hold (u64 nanoseconds, docs/schedules.md §1).
pub(crate) const LAST_INSTANT: i64 = 18_446_744_073; // u64::MAX / 10^9

/// The first instant (whole seconds since the Unix epoch) after `after` at which the calendar
/// fires, or `None` if there is none up to [`LAST_INSTANT`].
pub(crate) fn next_after(
    spec: &CronSpec,
    zone: &TimeZone,
    policy: DstPolicy,
    after: i64,
) -> Option<i64> {
    // An expression that allows every hour ignores the policy (docs/schedules.md §14.5): its
    // gap wall times are skipped, and both passes of a fold fire.
    let every_hour = spec.every_hour();
    let shift = policy.gap == GapPolicy::Shift && !every_hour;
    let fold = if every_hour {
        FoldPolicy::Both
    } else {
        policy.fold
    };
    let last_wall = days_from_civil(LAST_YEAR + 1, 1, 1) * DAY;
    let mut low = after.checked_add(1)?.max(0);
    while low <= LAST_INSTANT {
        let stretch = stretch_at(zone, low);
        let offset = stretch.offset;
        if shift {
            let before = offset_at(zone, low - 1);
            // `low` is the transition that ends a gap: the gap's wall times fire here
            // (docs/schedules.md §14.4).
            if before < offset && spec.next_match(low + before, low + offset).is_some() {
                return Some(low);
            }
        }
        let wall_end = stretch.end.map_or(last_wall, |(end, _)| end + offset);
        let Some(wall) = spec.next_match(low + offset, wall_end) else {
            match stretch.end {
                Some((end, _)) => {
                    low = end;
                    continue;
                }
                None => return None,
            }
        };
        let instant = wall - offset;
        if fold == FoldPolicy::Last
            && let Some((end, _)) = stretch.end.filter(|&(end, next)| wall >= end + next)
        {
            // The first pass of a fold; the second comes in the next stretch.
            low = end;
            continue;
        }
        if fold == FoldPolicy::First
            && let Some((start, previous)) =
                stretch_start(zone, instant).filter(|&(start, previous)| wall < start + previous)
        {
            // The second pass of a fold: go on from the first wall time after the fold.
            low = start + previous - offset;
            continue;
        }
        return (instant <= LAST_INSTANT).then_some(instant);
    }
    None
}
