//! Calendar schedules across real DST changes, by date, in the bundled tz database
//! (docs/schedules.md §14.3–§14.5): each zone's gap and fold under each policy, for an
//! expression with a fixed hour and one that allows every hour.

// Instants here are seconds of this century, far inside i64 and u64 alike.
#![allow(clippy::cast_possible_wrap)]

use jiff::Timestamp;
use jiff::tz::TimeZone;
use tickstep_calendar::{Calendar, DstPolicy, FoldPolicy, GapPolicy};

const NANOS: u64 = 1_000_000_000;

const GAPS: [GapPolicy; 2] = [GapPolicy::Shift, GapPolicy::Skip];
const FOLDS: [FoldPolicy; 3] = [FoldPolicy::First, FoldPolicy::Last, FoldPolicy::Both];

/// The firings strictly between two UTC instants (RFC 3339), as wall times with their offsets.
fn fires(
    expr: &str,
    zone: &str,
    gap: GapPolicy,
    fold: FoldPolicy,
    from: &str,
    to: &str,
) -> Vec<String> {
    let cal = Calendar::new(expr, zone, DstPolicy { gap, fold }).unwrap();
    let tz = TimeZone::get(zone).unwrap();
    let from = from.parse::<Timestamp>().unwrap().as_second() as u64 * NANOS;
    let to = to.parse::<Timestamp>().unwrap().as_second() as u64 * NANOS;
    cal.upcoming(from, 1000)
        .take_while(|&t| t < to)
        .map(|t| {
            Timestamp::from_second((t / NANOS) as i64)
                .unwrap()
                .to_zoned_datetime(tz.clone())
                .strftime("%Y-%m-%dT%H:%M%:z")
                .to_string()
        })
        .collect()
}

/// The same firings under every policy: an expression whose hour field allows every hour.
fn fires_under_any_policy(expr: &str, zone: &str, from: &str, to: &str) -> Vec<String> {
    let reference = fires(expr, zone, GapPolicy::Shift, FoldPolicy::First, from, to);
    for gap in GAPS {
        for fold in FOLDS {
            assert_eq!(
                fires(expr, zone, gap, fold, from, to),
                reference,
                "{expr} {zone} {gap} {fold}"
            );
        }
    }
    reference
}

/// A fixed-time expression across a gap: `shift` and `skip`, whatever the fold policy.
fn gap_case(expr: &str, zone: &str, from: &str, to: &str, shift: &[&str], skip: &[&str]) {
    for fold in FOLDS {
        assert_eq!(
            fires(expr, zone, GapPolicy::Shift, fold, from, to),
            shift,
            "{expr} {zone} shift"
        );
        assert_eq!(
            fires(expr, zone, GapPolicy::Skip, fold, from, to),
            skip,
            "{expr} {zone} skip"
        );
    }
}

/// A fixed-time expression across a fold: `first`, `last` and `both`, whatever the gap policy.
fn fold_case(
    expr: &str,
    zone: &str,
    from: &str,
    to: &str,
    first: &[&str],
    last: &[&str],
    both: &[&str],
) {
    for gap in GAPS {
        assert_eq!(
            fires(expr, zone, gap, FoldPolicy::First, from, to),
            first,
            "{expr} {zone} first"
        );
        assert_eq!(
            fires(expr, zone, gap, FoldPolicy::Last, from, to),
            last,
            "{expr} {zone} last"
        );
        assert_eq!(
            fires(expr, zone, gap, FoldPolicy::Both, from, to),
            both,
            "{expr} {zone} both"
        );
    }
}

#[test]
fn new_york_spring_forward_and_fall_back() {
    // 2026-03-08 02:00 EST → 03:00 EDT; 2026-11-01 02:00 EDT → 01:00 EST.
    let zone = "America/New_York";
    gap_case(
        "30 2 * * *",
        zone,
        "2026-03-07T12:00:00Z",
        "2026-03-09T12:00:00Z",
        &["2026-03-08T03:00-04:00", "2026-03-09T02:30-04:00"],
        &["2026-03-09T02:30-04:00"],
    );
    // Three wall times in one gap fire once under `shift` (docs/schedules.md §14.4).
    gap_case(
        "*/20 2 * * *",
        zone,
        "2026-03-08T00:00:00Z",
        "2026-03-08T12:00:00Z",
        &["2026-03-08T03:00-04:00"],
        &[],
    );
    // 02:00 and 03:00 both map to 03:00 EDT: one firing.
    gap_case(
        "0 2,3 * * *",
        zone,
        "2026-03-08T00:00:00Z",
        "2026-03-08T12:00:00Z",
        &["2026-03-08T03:00-04:00"],
        &["2026-03-08T03:00-04:00"],
    );
    fold_case(
        "30 1 * * *",
        zone,
        "2026-10-31T12:00:00Z",
        "2026-11-02T12:00:00Z",
        &["2026-11-01T01:30-04:00", "2026-11-02T01:30-05:00"],
        &["2026-11-01T01:30-05:00", "2026-11-02T01:30-05:00"],
        &[
            "2026-11-01T01:30-04:00",
            "2026-11-01T01:30-05:00",
            "2026-11-02T01:30-05:00",
        ],
    );
    // Every half hour: the gap is passed over, the repeated hour fires twice
    // (docs/schedules.md §14.5).
    assert_eq!(
        fires_under_any_policy(
            "*/30 * * * *",
            zone,
            "2026-03-08T06:00:00Z",
            "2026-03-08T09:00:00Z"
        ),
        [
            "2026-03-08T01:30-05:00",
            "2026-03-08T03:00-04:00",
            "2026-03-08T03:30-04:00",
            "2026-03-08T04:00-04:00",
            "2026-03-08T04:30-04:00",
        ]
    );
    assert_eq!(
        fires_under_any_policy(
            "*/30 * * * *",
            zone,
            "2026-11-01T04:00:00Z",
            "2026-11-01T08:00:00Z"
        ),
        [
            "2026-11-01T00:30-04:00",
            "2026-11-01T01:00-04:00",
            "2026-11-01T01:30-04:00",
            "2026-11-01T01:00-05:00",
            "2026-11-01T01:30-05:00",
            "2026-11-01T02:00-05:00",
            "2026-11-01T02:30-05:00",
        ]
    );
}

#[test]
fn london_and_paris_change_at_the_same_instant_at_different_wall_times() {
    // 2026-03-29 01:00 UTC; 2026-10-25 01:00 UTC.
    gap_case(
        "30 1 * * *",
        "Europe/London",
        "2026-03-28T12:00:00Z",
        "2026-03-29T12:00:00Z",
        &["2026-03-29T02:00+01:00"],
        &[],
    );
    fold_case(
        "30 1 * * *",
        "Europe/London",
        "2026-10-24T12:00:00Z",
        "2026-10-25T12:00:00Z",
        &["2026-10-25T01:30+01:00"],
        &["2026-10-25T01:30+00:00"],
        &["2026-10-25T01:30+01:00", "2026-10-25T01:30+00:00"],
    );
    gap_case(
        "0 2 * * *",
        "Europe/Paris",
        "2026-03-28T12:00:00Z",
        "2026-03-29T12:00:00Z",
        &["2026-03-29T03:00+02:00"],
        &[],
    );
    fold_case(
        "0 2 * * *",
        "Europe/Paris",
        "2026-10-24T12:00:00Z",
        "2026-10-25T12:00:00Z",
        &["2026-10-25T02:00+02:00"],
        &["2026-10-25T02:00+01:00"],
        &["2026-10-25T02:00+02:00", "2026-10-25T02:00+01:00"],
    );
    // 03:00 on the fold day exists once (the clocks go back at 03:00 CEST): no policy doubles it.
    fold_case(
        "0 3 * * *",
        "Europe/Paris",
        "2026-10-24T12:00:00Z",
        "2026-10-25T12:00:00Z",
        &["2026-10-25T03:00+01:00"],
        &["2026-10-25T03:00+01:00"],
        &["2026-10-25T03:00+01:00"],
    );
    assert_eq!(
        fires_under_any_policy(
            "0 * * * *",
            "Europe/Paris",
            "2026-03-28T23:30:00Z",
            "2026-03-29T03:00:00Z"
        ),
        [
            "2026-03-29T01:00+01:00",
            "2026-03-29T03:00+02:00",
            "2026-03-29T04:00+02:00",
        ]
    );
}

#[test]
fn lord_howe_moves_half_an_hour() {
    // 2026-04-05 02:00 +11:00 → 01:30 +10:30; 2026-10-04 02:00 +10:30 → 02:30 +11:00.
    let zone = "Australia/Lord_Howe";
    gap_case(
        "15 2 * * *",
        zone,
        "2026-10-03T00:00:00Z",
        "2026-10-04T12:00:00Z",
        &["2026-10-04T02:30+11:00"],
        &[],
    );
    fold_case(
        "45 1 * * *",
        zone,
        "2026-04-04T00:00:00Z",
        "2026-04-05T12:00:00Z",
        &["2026-04-05T01:45+11:00"],
        &["2026-04-05T01:45+10:30"],
        &["2026-04-05T01:45+11:00", "2026-04-05T01:45+10:30"],
    );
    assert_eq!(
        fires_under_any_policy(
            "*/15 * * * *",
            zone,
            "2026-04-04T14:10:00Z",
            "2026-04-04T15:40:00Z"
        ),
        [
            "2026-04-05T01:15+11:00",
            "2026-04-05T01:30+11:00",
            "2026-04-05T01:45+11:00",
            "2026-04-05T01:30+10:30",
            "2026-04-05T01:45+10:30",
            "2026-04-05T02:00+10:30",
        ]
    );
    assert_eq!(
        fires_under_any_policy(
            "*/15 * * * *",
            zone,
            "2026-10-03T15:10:00Z",
            "2026-10-03T16:00:00Z"
        ),
        [
            "2026-10-04T01:45+10:30",
            "2026-10-04T02:30+11:00",
            "2026-10-04T02:45+11:00"
        ]
    );
}

#[test]
fn cairo_skips_midnight() {
    // 2026-04-24 (the last Friday of April) 00:00 +02:00 → 01:00 +03:00;
    // 2026-10-29 (the last Thursday of October) 24:00 +03:00 → 23:00 +02:00.
    let zone = "Africa/Cairo";
    gap_case(
        "0 0 * * *",
        zone,
        "2026-04-22T12:00:00Z",
        "2026-04-25T12:00:00Z",
        &[
            "2026-04-23T00:00+02:00",
            "2026-04-24T01:00+03:00",
            "2026-04-25T00:00+03:00",
        ],
        &["2026-04-23T00:00+02:00", "2026-04-25T00:00+03:00"],
    );
    fold_case(
        "30 23 * * *",
        zone,
        "2026-10-29T12:00:00Z",
        "2026-10-30T12:00:00Z",
        &["2026-10-29T23:30+03:00"],
        &["2026-10-29T23:30+02:00"],
        &["2026-10-29T23:30+03:00", "2026-10-29T23:30+02:00"],
    );
}

#[test]
fn kolkata_has_no_changes() {
    for gap in GAPS {
        for fold in FOLDS {
            assert_eq!(
                fires(
                    "30 2 * * *",
                    "Asia/Kolkata",
                    gap,
                    fold,
                    "2026-03-07T00:00:00Z",
                    "2026-03-09T00:00:00Z"
                ),
                ["2026-03-08T02:30+05:30", "2026-03-09T02:30+05:30"]
            );
        }
    }
}

#[test]
fn santiago_changes_in_the_southern_seasons() {
    // 2026-04-04 24:00 -03:00 → 23:00 -04:00; 2026-09-06 00:00 -04:00 → 01:00 -03:00.
    let zone = "America/Santiago";
    fold_case(
        "30 23 * * *",
        zone,
        "2026-04-04T12:00:00Z",
        "2026-04-05T12:00:00Z",
        &["2026-04-04T23:30-03:00"],
        &["2026-04-04T23:30-04:00"],
        &["2026-04-04T23:30-03:00", "2026-04-04T23:30-04:00"],
    );
    gap_case(
        "0 0 * * *",
        zone,
        "2026-09-05T12:00:00Z",
        "2026-09-06T12:00:00Z",
        &["2026-09-06T01:00-03:00"],
        &[],
    );
}

#[test]
fn mexico_city_follows_the_law_that_ended_its_dst() {
    // Mexico abolished DST in 2022: the 2022 changes are in the database, the 2023 ones are not.
    let zone = "America/Mexico_City";
    gap_case(
        "30 2 * * *",
        zone,
        "2022-04-02T12:00:00Z",
        "2022-04-03T23:00:00Z",
        &["2022-04-03T03:00-05:00"],
        &[],
    );
    gap_case(
        "30 2 * * *",
        zone,
        "2023-04-01T12:00:00Z",
        "2023-04-02T23:00:00Z",
        &["2023-04-02T02:30-06:00"],
        &["2023-04-02T02:30-06:00"],
    );
    fold_case(
        "30 1 * * *",
        zone,
        "2022-10-29T12:00:00Z",
        "2022-10-30T12:00:00Z",
        &["2022-10-30T01:30-05:00"],
        &["2022-10-30T01:30-06:00"],
        &["2022-10-30T01:30-05:00", "2022-10-30T01:30-06:00"],
    );
    fold_case(
        "30 1 * * *",
        zone,
        "2023-10-28T12:00:00Z",
        "2023-10-29T12:00:00Z",
        &["2023-10-29T01:30-06:00"],
        &["2023-10-29T01:30-06:00"],
        &["2023-10-29T01:30-06:00"],
    );
}

#[test]
fn a_search_starting_inside_a_fold_or_on_a_transition_misses_nothing() {
    let zone = "America/New_York";
    let both = DstPolicy {
        gap: GapPolicy::Shift,
        fold: FoldPolicy::Both,
    };
    let cal = Calendar::new("30 1 * * *", zone, both).unwrap();
    let at = |s: &str| s.parse::<Timestamp>().unwrap().as_second() as u64 * NANOS;
    // From 01:40 EDT (first pass, after its 01:30): the second pass's 01:30 EST is next.
    assert_eq!(
        cal.next_after(at("2026-11-01T05:40:00Z")),
        Some(at("2026-11-01T06:30:00Z"))
    );
    // From one second before the gap's end, `shift` fires at the transition.
    let shift = Calendar::new("30 2 * * *", zone, DstPolicy::default()).unwrap();
    assert_eq!(
        shift.next_after(at("2026-03-08T06:59:59Z")),
        Some(at("2026-03-08T07:00:00Z"))
    );
    assert_eq!(
        shift.next_after(at("2026-03-08T07:00:00Z")),
        Some(at("2026-03-09T06:30:00Z"))
    );
    // A fractional nanosecond start still finds the next whole second.
    assert_eq!(
        shift.next_after(at("2026-03-08T06:59:59Z") + 1),
        Some(at("2026-03-08T07:00:00Z"))
    );
}

/// A range's points are instants (docs/schedules.md §14.7) — the count a catch-up across a DST
/// change needs: an hourly calendar has 25 on a fall-back day and 23 on a spring-forward day.
#[test]
fn points_in_a_range_are_real_instants_not_wall_times() {
    let at = |s: &str| s.parse::<Timestamp>().unwrap().as_second() as u64 * NANOS;
    let hourly = Calendar::new("@hourly", "America/New_York", DstPolicy::default()).unwrap();
    let count = |from: &str, to: &str| {
        hourly
            .upcoming(at(from) - 1, 100)
            .take_while(|&t| t < at(to))
            .count()
    };
    // Local midnight to midnight.
    assert_eq!(count("2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z"), 25);
    assert_eq!(count("2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z"), 23);
    assert_eq!(count("2026-06-01T04:00:00Z", "2026-06-02T04:00:00Z"), 24);
    // A daily 01:30 under `both` has two points on the fall-back day, under `first` one.
    let both = DstPolicy {
        gap: GapPolicy::Shift,
        fold: FoldPolicy::Both,
    };
    let daily = Calendar::new("30 1 * * *", "America/New_York", both).unwrap();
    let from = at("2026-11-01T04:00:00Z") - 1;
    assert_eq!(
        daily
            .upcoming(from, 3)
            .filter(|&t| t < at("2026-11-02T04:00:00Z"))
            .count(),
        2
    );
}
