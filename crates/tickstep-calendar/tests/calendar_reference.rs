//! `Calendar::next_after` against a brute-force reference (docs/schedules.md §14.4–§14.7): walk
//! every minute in UTC, map it to the zone with jiff, match the fields, and apply the DST policy
//! by asking jiff whether the wall time is ambiguous. The expressions are generated as field
//! models and rendered to text, so the reference matches the model, not the parser's output.
//!
//! Run time in a debug build: two cases over 10 years (5.3 million minutes each, 10-15 s of CPU
//! apiece) and 256 over 40-day spans starting in February, March, August, September or October
//! (where most zones change), about 15 s of CPU together.

// Instants here are seconds of this century, far inside i64 and u64 alike.
#![allow(clippy::cast_possible_wrap)]

use jiff::civil::DateTime;
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::{SignedDuration, Timestamp};
use proptest::prelude::*;
use tickstep_calendar::{Calendar, DstPolicy, FoldPolicy, GapPolicy};

const ZONES: [&str; 14] = [
    "America/New_York",
    "Europe/London",
    "Europe/Paris",
    "Europe/Dublin",
    "Australia/Lord_Howe",
    "Africa/Cairo",
    "Asia/Kolkata",
    "America/Santiago",
    "America/Mexico_City",
    "America/St_Johns",
    "Pacific/Chatham",
    "Pacific/Apia",
    "Asia/Tehran",
    "UTC",
];

/// One field: everything, a step from the start, or a list of values.
#[derive(Clone, Debug)]
enum Field {
    All,
    Step(u32),
    List(Vec<u32>),
}

impl Field {
    fn render(&self) -> String {
        match self {
            Field::All => "*".into(),
            Field::Step(k) => format!("*/{k}"),
            Field::List(v) => v.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
        }
    }
    fn has(&self, n: u32, lo: u32) -> bool {
        match self {
            Field::All => true,
            Field::Step(k) => (n - lo).is_multiple_of(*k),
            Field::List(v) => v.contains(&n),
        }
    }
}

#[derive(Clone, Debug)]
enum Dom {
    Any,
    Days(Vec<u32>),
    Last,
}

#[derive(Clone, Debug)]
enum Dow {
    Any,
    Days(Vec<u32>),
    Nth(u32, u32),
    LastOf(u32),
}

#[derive(Clone, Debug)]
struct Model {
    minute: Field,
    hour: Field,
    dom: Dom,
    month: Field,
    dow: Dow,
}

impl Model {
    fn render(&self) -> String {
        let dom = match &self.dom {
            Dom::Any => "*".into(),
            Dom::Days(v) => v.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
            Dom::Last => "L".into(),
        };
        let dow = match &self.dow {
            Dow::Any => "?".into(),
            Dow::Days(v) => v.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
            Dow::Nth(d, k) => format!("{d}#{k}"),
            Dow::LastOf(d) => format!("{d}L"),
        };
        format!(
            "{} {} {dom} {} {dow}",
            self.minute.render(),
            self.hour.render(),
            self.month.render()
        )
    }

    fn every_hour(&self) -> bool {
        match &self.hour {
            Field::All | Field::Step(1) => true,
            Field::Step(_) => false,
            Field::List(v) => (0..24).all(|h| v.contains(&h)),
        }
    }

    fn matches(&self, dt: DateTime) -> bool {
        let (day, length) = (dt.day() as u32, dt.date().days_in_month() as u32);
        let weekday = dt.weekday() as u32 % 7;
        let by_month = match &self.dom {
            Dom::Any => true,
            Dom::Days(v) => v.contains(&day),
            Dom::Last => day == length,
        };
        let by_week = match &self.dow {
            Dow::Any => true,
            Dow::Days(v) => v.contains(&weekday),
            Dow::Nth(d, k) => *d == weekday && (day - 1) / 7 + 1 == *k,
            Dow::LastOf(d) => *d == weekday && day + 7 > length,
        };
        let day_ok = match (matches!(self.dom, Dom::Any), matches!(self.dow, Dow::Any)) {
            (false, false) => by_month || by_week,
            (false, true) => by_month,
            (true, false) => by_week,
            (true, true) => true,
        };
        dt.second() == 0
            && self.minute.has(dt.minute() as u32, 0)
            && self.hour.has(dt.hour() as u32, 0)
            && self.month.has(dt.month() as u32, 1)
            && day_ok
    }
}

fn values(max: u32, min: u32) -> impl Strategy<Value = Vec<u32>> {
    prop::collection::btree_set(min..=max, 1..=3).prop_map(|s| s.into_iter().collect())
}

fn model() -> impl Strategy<Value = Model> {
    let minute = prop_oneof![
        1 => Just(Field::All),
        2 => (2u32..=30).prop_map(Field::Step),
        4 => values(59, 0).prop_map(Field::List),
    ];
    let hour = prop_oneof![
        2 => Just(Field::All),
        1 => (2u32..=12).prop_map(Field::Step),
        4 => values(23, 0).prop_map(Field::List),
        // Most zones change between 22:00 and 04:00: fixed hours there meet the gaps and folds.
        4 => prop::collection::btree_set(prop_oneof![0u32..=3, 22u32..=23], 1..=2)
            .prop_map(|s| Field::List(s.into_iter().collect())),
    ];
    let dom = prop_oneof![
        4 => Just(Dom::Any),
        2 => values(31, 1).prop_map(Dom::Days),
        1 => Just(Dom::Last),
    ];
    let month = prop_oneof![
        4 => Just(Field::All),
        1 => prop::collection::btree_set(1u32..=12, 3..=8)
            .prop_map(|s| Field::List(s.into_iter().collect())),
    ];
    let dow = prop_oneof![
        4 => Just(Dow::Any),
        2 => values(6, 0).prop_map(Dow::Days),
        1 => (0u32..=6, 1u32..=5).prop_map(|(d, k)| Dow::Nth(d, k)),
        1 => (0u32..=6).prop_map(Dow::LastOf),
    ];
    (minute, hour, dom, month, dow).prop_map(|(minute, hour, dom, month, dow)| Model {
        minute,
        hour,
        dom,
        month,
        dow,
    })
}

fn policy() -> impl Strategy<Value = DstPolicy> {
    (
        prop_oneof![Just(GapPolicy::Shift), Just(GapPolicy::Skip)],
        prop_oneof![
            Just(FoldPolicy::First),
            Just(FoldPolicy::Last),
            Just(FoldPolicy::Both)
        ],
    )
        .prop_map(|(gap, fold)| DstPolicy { gap, fold })
}

/// The reference: every firing in `[start, end)` (Unix seconds, whole minutes), by brute force.
fn reference(model: &Model, zone: &TimeZone, policy: DstPolicy, start: i64, end: i64) -> Vec<i64> {
    let every_hour = model.every_hour();
    let mut fired = Vec::new();
    let mut previous_offset = zone.to_offset(Timestamp::from_second(start - 60).unwrap());
    for instant in (start..end).step_by(60) {
        let at = Timestamp::from_second(instant).unwrap();
        let offset = zone.to_offset(at);
        if offset > previous_offset && policy.gap == GapPolicy::Shift && !every_hour {
            // A gap ended at this minute (the zones here change on whole minutes): under `shift`
            // its wall times fire now if any of them matches.
            let mut wall = previous_offset.to_datetime(at);
            let after = offset.to_datetime(at);
            while wall < after {
                if model.matches(wall) {
                    fired.push(instant);
                    break;
                }
                wall += SignedDuration::from_secs(60);
            }
        }
        previous_offset = offset;
        let wall = offset.to_datetime(at);
        if !model.matches(wall) {
            continue;
        }
        let keep = match zone.to_ambiguous_timestamp(wall).offset() {
            AmbiguousOffset::Fold { before, .. } if !every_hour => {
                let first = before.to_timestamp(wall).unwrap() == at;
                match policy.fold {
                    FoldPolicy::First => first,
                    FoldPolicy::Last => !first,
                    FoldPolicy::Both => true,
                }
            }
            _ => true,
        };
        if keep && fired.last() != Some(&instant) {
            fired.push(instant);
        }
    }
    fired
}

fn implementation(cal: &Calendar, start: i64, end: i64) -> Vec<i64> {
    const NANOS: u64 = 1_000_000_000;
    cal.upcoming((start - 1) as u64 * NANOS, usize::MAX)
        .map(|t| (t / NANOS) as i64)
        .take_while(|&t| t < end)
        .collect()
}

fn check(model: &Model, zone: &str, policy: DstPolicy, start: i64, days: i64) {
    let expr = model.render();
    let cal = match Calendar::new(&expr, zone, policy) {
        Ok(cal) => cal,
        // A model with no date in any year (e.g. day 31 only in short months, no weekday).
        Err(tickstep_calendar::CalendarError::NeverOccurs { .. }) => return,
        Err(e) => panic!("{expr}: {e}"),
    };
    let tz = TimeZone::get(zone).unwrap();
    let end = start + days * 86_400;
    let want = reference(model, &tz, policy, start, end);
    let got = implementation(&cal, start, end);
    assert_eq!(
        got, want,
        "{expr:?} in {zone} under {policy:?} from {start}"
    );
}

/// A whole minute between 1995 and 2045.
fn start_minute() -> impl Strategy<Value = i64> {
    (788_918_400i64..2_366_755_200).prop_map(|s| s - s.rem_euclid(60))
}

proptest! {
    // Each 10-year case walks 5.3 million minutes through jiff: 10-15 s of CPU in a debug build.
    #![proptest_config(ProptestConfig { cases: 2, ..ProptestConfig::default() })]

    #[test]
    fn agrees_with_brute_force_over_ten_years(
        model in model(),
        zone in prop::sample::select(&ZONES[..]),
        policy in policy(),
        start in start_minute(),
    ) {
        check(&model, zone, policy, start, 3_653);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn agrees_with_brute_force_around_dst_changes(
        model in model(),
        zone in prop::sample::select(&ZONES[..]),
        policy in policy(),
        year in 1995i64..2045,
        month in prop::sample::select(&[2u32, 3, 8, 9, 10][..]),
        minute_of_month in 0i64..44_640,
    ) {
        // A 40-day span starting in a month that holds (or precedes) a change in one hemisphere.
        let first = jiff::civil::date(year as i16, month as i8, 1).at(0, 0, 0, 0);
        let midnight = jiff::tz::Offset::UTC.to_timestamp(first).unwrap().as_second();
        let start = midnight + minute_of_month * 60;
        check(&model, zone, policy, start, 40);
    }
}
