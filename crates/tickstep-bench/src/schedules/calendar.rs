//! Calendar next occurrence: `Calendar::next_after` beside `croner` 4's `find_next_occurrence`
//! on a `jiff::Zoned` in the same zone (docs/schedules.md §14.8), interleaved in one run. Each
//! side walks a chain of occurrences, each asked from the one before, across a year (so the
//! chain crosses both DST changes of the zone).
//!
//! | measure | ours | against |
//! |---|---|---|
//! | `cron_next_daily` | `0 3 * * 1-5` in Europe/Paris; ns per next occurrence | croner, same expression and zone; goal ratio ≤ 1.0 |
//! | `cron_next_minutely` | `*/5 * * * *` in America/New_York; ns per next occurrence | croner, same; goal ratio ≤ 1.0 |
//! | `cron_next_special` | `0 12 L * *`, `30 9 * * MON#2` and `0 0 15W * *` in Australia/Lord_Howe, in turn; ns per next occurrence | croner, same; goal ratio ≤ 1.0 |

use std::hint::black_box;
use std::str::FromStr as _;

use croner::Cron;
use jiff02::Zoned;
use tickstep_schedules::{Calendar, DstPolicy};

use crate::harness::{Measure, Row, interleave, ns_per_op};

const NANOS: u64 = 1_000_000_000;
/// 2026-01-01T00:00:00Z, in seconds and in nanoseconds.
const START_SECONDS: i64 = 1_767_225_600;
const START: u64 = START_SECONDS as u64 * NANOS;

/// Ns per next occurrence over a chain of `n` from [`START`], for ours and croner.
fn chain(expr: &str, zone: &str, n: usize, rounds: usize) -> (f64, f64) {
    let ours = Calendar::new(expr, zone, DstPolicy::default()).expect("calendar");
    let theirs = Cron::from_str(expr).expect("croner parses");
    let tz = jiff02::tz::TimeZone::get(zone).expect("zone");
    let start = jiff02::Timestamp::from_second(START_SECONDS)
        .expect("timestamp")
        .to_zoned(tz);
    // Both sides find the same first occurrences (the rows compare the same work).
    let mine: Vec<i64> = ours
        .upcoming(START, 5)
        .map(|t| i64::try_from(t / NANOS).expect("seconds fit"))
        .collect();
    let mut at = start.clone();
    let peer: Vec<i64> = (0..5)
        .map(|_| {
            at = theirs.find_next_occurrence(&at, false).expect("next");
            at.timestamp().as_second()
        })
        .collect();
    assert_eq!(mine, peer, "{expr} in {zone}");
    interleave(
        rounds,
        || {
            ns_per_op(n, || {
                let mut t = START;
                for _ in 0..n {
                    t = ours.next_after(black_box(t)).expect("next");
                }
                black_box(t);
            })
        },
        || {
            ns_per_op(n, || {
                let mut t: Zoned = start.clone();
                for _ in 0..n {
                    t = theirs
                        .find_next_occurrence(black_box(&t), false)
                        .expect("next");
                }
                black_box(t);
            })
        },
    )
}

fn row(name: &'static str, (ours_ns, peer_ns): (f64, f64), note: String) -> Row {
    Row {
        name,
        measure: Measure::Ratio {
            ours_ns,
            peer: "croner",
            peer_ns,
            goal_ratio: 1.0,
        },
        note,
    }
}

pub(super) fn rows(rounds: usize, quick: bool) -> Vec<Row> {
    let scale = if quick { 1 } else { 4 };
    let daily = chain("0 3 * * 1-5", "Europe/Paris", 260 * scale, rounds);
    let minutely = chain("*/5 * * * *", "America/New_York", 5_000 * scale, rounds);
    let special = ["0 12 L * *", "30 9 * * MON#2", "0 0 15W * *"]
        .map(|expr| chain(expr, "Australia/Lord_Howe", 120 * scale, rounds));
    let special = (
        special.iter().map(|s| s.0).sum::<f64>() / 3.0,
        special.iter().map(|s| s.1).sum::<f64>() / 3.0,
    );
    vec![
        row(
            "cron_next_daily",
            daily,
            format!(
                "{} weekday 03:00 occurrences in Paris from 2026-01-01, median of {rounds} interleaved rounds",
                260 * scale
            ),
        ),
        row(
            "cron_next_minutely",
            minutely,
            format!(
                "{} five-minute occurrences in New York from 2026-01-01, median of {rounds}",
                5_000 * scale
            ),
        ),
        row(
            "cron_next_special",
            special,
            format!(
                "mean of L, MON#2 and 15W, {} occurrences each in Lord Howe, median of {rounds}",
                120 * scale
            ),
        ),
    ]
}
