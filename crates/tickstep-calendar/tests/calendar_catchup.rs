//! Catch-up counts of a calendar (docs/schedules.md §14.10): the real points between a missed
//! point and now, counted across DST changes, never the wall-clock ones.

use tickstep_calendar::{Calendar, DstPolicy, FoldPolicy, GapPolicy, PointsArrived};

const S: u64 = 1_000_000_000;

fn london(gap: GapPolicy, fold: FoldPolicy) -> Calendar {
    Calendar::new("30 1 * * *", "Europe/London", DstPolicy { gap, fold }).unwrap()
}

// 2026-10-25: London shows 01:00-02:00 twice (BST, then GMT).
const OCT_24_0130_BST: u64 = 1_792_801_800 * S;
const OCT_25_0130_BST: u64 = 1_792_888_200 * S;
const OCT_25_0130_GMT: u64 = 1_792_891_800 * S;
const OCT_26_0130_GMT: u64 = 1_792_978_200 * S;
const OCT_26_0200_GMT: u64 = 1_792_980_000 * S;

// 2026-03-29: London skips 01:00-02:00 (GMT to BST).
const MAR_28_0130_GMT: u64 = 1_774_661_400 * S;
const MAR_29_0200_BST: u64 = 1_774_746_000 * S;
const MAR_30_0130_BST: u64 = 1_774_830_600 * S;
const MAR_30_0200_BST: u64 = 1_774_832_400 * S;

#[test]
fn a_fold_under_both_counts_the_repeated_point_twice() {
    let a =
        london(GapPolicy::Shift, FoldPolicy::Both).arrived(OCT_24_0130_BST, OCT_26_0200_GMT, 1_000);
    assert_eq!(
        a,
        PointsArrived {
            count: 4,
            latest: OCT_26_0130_GMT,
            next: Some(OCT_26_0130_GMT + 86_400 * S),
            capped: false,
        }
    );
}

#[test]
fn a_fold_under_first_or_last_counts_the_day_once() {
    for fold in [FoldPolicy::First, FoldPolicy::Last] {
        let a = london(GapPolicy::Shift, fold).arrived(OCT_24_0130_BST, OCT_26_0200_GMT, 1_000);
        assert_eq!((a.count, a.latest), (3, OCT_26_0130_GMT), "{fold}");
    }
    // Stopped between the two passes of the fold: `first` has fired that day, `last` has not yet.
    let mid_fold = OCT_25_0130_BST + 30 * 60 * S;
    let first =
        london(GapPolicy::Shift, FoldPolicy::First).arrived(OCT_24_0130_BST, mid_fold, 1_000);
    assert_eq!(
        (first.count, first.latest, first.next),
        (2, OCT_25_0130_BST, Some(OCT_26_0130_GMT))
    );
    let last = london(GapPolicy::Shift, FoldPolicy::Last).arrived(OCT_24_0130_BST, mid_fold, 1_000);
    assert_eq!(
        (last.count, last.latest, last.next),
        (1, OCT_24_0130_BST, Some(OCT_25_0130_GMT))
    );
}

#[test]
fn a_gap_under_skip_counts_nothing_for_the_missing_day_and_under_shift_counts_its_transition() {
    let skip =
        london(GapPolicy::Skip, FoldPolicy::First).arrived(MAR_28_0130_GMT, MAR_30_0200_BST, 1_000);
    assert_eq!((skip.count, skip.latest), (2, MAR_30_0130_BST));
    let shift = london(GapPolicy::Shift, FoldPolicy::First).arrived(
        MAR_28_0130_GMT,
        MAR_30_0200_BST,
        1_000,
    );
    assert_eq!((shift.count, shift.latest), (3, MAR_30_0130_BST));
    // The shifted point is the transition itself.
    let at_gap = london(GapPolicy::Shift, FoldPolicy::First).arrived(
        MAR_28_0130_GMT,
        MAR_29_0200_BST,
        1_000,
    );
    assert_eq!((at_gap.count, at_gap.latest), (2, MAR_29_0200_BST));
}

#[test]
fn the_count_stops_at_the_cap_but_the_next_point_is_still_after_now() {
    let cal = Calendar::new("* * * * * *", "UTC", DstPolicy::default()).unwrap();
    let a = cal.arrived(10 * S, 1_000_000 * S + S / 2, 100);
    assert_eq!(
        a,
        PointsArrived {
            count: 100,
            latest: 109 * S,
            next: Some(1_000_001 * S),
            capped: true,
        }
    );
    // Exactly `cap` points arrived: not capped.
    let exact = cal.arrived(10 * S, 109 * S, 100);
    assert_eq!(
        (exact.count, exact.capped, exact.next),
        (100, false, Some(110 * S))
    );
    // A cap of 0 counts as 1: the point itself has arrived.
    assert_eq!(cal.arrived(10 * S, 20 * S, 0).count, 1);
}

#[test]
fn a_point_not_yet_due_counts_itself_and_nothing_else() {
    let cal = london(GapPolicy::Shift, FoldPolicy::First);
    let a = cal.arrived(OCT_26_0130_GMT, OCT_24_0130_BST, 1_000);
    assert_eq!(
        (a.count, a.latest, a.next),
        (1, OCT_26_0130_GMT, Some(OCT_26_0130_GMT + 86_400 * S))
    );
}

#[test]
fn a_calendar_that_ends_has_no_next_point() {
    // 2554 is past the last representable deadline: a yearly calendar's last point is in 2554 at
    // the latest, and after it there is none.
    let cal = Calendar::new("@yearly", "UTC", DstPolicy::default()).unwrap();
    let last = cal.upcoming(u64::MAX - 400 * 86_400 * S, 3).last().unwrap();
    let a = cal.arrived(last, u64::MAX, 1_000);
    assert_eq!((a.count, a.latest, a.next), (1, last, None));
}
