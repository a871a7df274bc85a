//! What many calendars cost: 100,000 `Calendar`s in mixed zones built in a fresh process, the
//! time to build them and the resident-set growth per calendar (docs/schedules.md §14.7, §14.11).
//!
//! | measure | ours | goal |
//! |---|---|---|
//! | `calendar_build_100k` | wall time to parse and check 100,000 calendars (8 zones, 4 expression shapes, each text distinct) | ≤ 2 s, the load goal of a cron schedule |
//! | `calendar_bytes` | resident-set growth per calendar held in a `Vec` | ≤ 400 B, the memory goal of a whole cron schedule |
//!
//! A fresh child process measures both, as `bytes_per_schedule` does: memory freed by earlier
//! rows would otherwise be reused and hide the cost. These are the calendar's share of a cron
//! schedule; the schedule's engine entry is measured by `bytes_per_schedule`.

use std::process::Command;
use std::time::Instant;

use tickstep_schedules::{Calendar, DstPolicy};

use crate::harness::{Measure, Row};

/// Set in the child that builds the calendars: how many.
pub(super) const CHILD_ENV: &str = "TICKSTEP_BENCH_CALENDARS_CHILD";

pub(super) const ZONES: [&str; 8] = [
    "Europe/London",
    "Europe/Paris",
    "America/New_York",
    "America/Los_Angeles",
    "Asia/Kolkata",
    "Australia/Lord_Howe",
    "Asia/Tokyo",
    "UTC",
];

/// The `i`-th expression: four shapes, the minute varied so that no two texts are alike in a row.
pub(super) fn expr(i: usize) -> String {
    let minute = i % 60;
    match i % 4 {
        0 => format!("{minute} * * * *"),
        1 => format!("{minute} 3 * * 1-5"),
        2 => format!("{minute} 9 * * MON#2"),
        _ => format!("{minute} 0 L * *"),
    }
}

/// Resident bytes of this process (Linux `/proc/self/statm`), or 0 elsewhere.
fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// In the child: builds `n` calendars, prints the seconds taken and the bytes per calendar, exits.
pub(super) fn child(n: usize) -> ! {
    // The texts exist before the clock starts: a store hands the engine its rows' strings.
    let texts: Vec<(String, &str)> = (0..n).map(|i| (expr(i), ZONES[i % ZONES.len()])).collect();
    let before = resident_bytes();
    let started = Instant::now();
    let calendars: Vec<Calendar> = texts
        .iter()
        .map(|(e, z)| Calendar::new(e, z, DstPolicy::default()).expect("calendar"))
        .collect();
    let seconds = started.elapsed().as_secs_f64();
    let per = resident_bytes().saturating_sub(before) as f64 / calendars.len().max(1) as f64;
    println!("{seconds} {per}");
    std::process::exit(0);
}

/// Runs this bench again as a fresh child with `env` set to `value` (the child measures and
/// exits), and reads the two numbers it prints: seconds, then bytes (NaN for one missing).
pub(super) fn in_child(env: &str, value: impl AsRef<std::ffi::OsStr>) -> (f64, f64) {
    let output = Command::new(std::env::current_exe().expect("current exe"))
        .arg("schedules")
        .env(env, value)
        .output()
        .expect("run the measuring child");
    let text = String::from_utf8_lossy(&output.stdout);
    let mut values = text
        .split_whitespace()
        .map(|v| v.parse().unwrap_or(f64::NAN));
    let seconds = values.next().unwrap_or(f64::NAN);
    (seconds, values.next().unwrap_or(f64::NAN))
}

pub(super) fn rows() -> Vec<Row> {
    let n = 100_000;
    let (seconds, bytes) = in_child(CHILD_ENV, n.to_string());
    vec![
        Row {
            name: "calendar_build_100k",
            measure: Measure::Value {
                value: seconds,
                unit: "s",
                goal: 2.0,
            },
            note: format!("{n} Calendar::new in 8 zones, 4 expression shapes, a fresh process"),
        },
        Row {
            name: "calendar_bytes",
            measure: Measure::Value {
                value: bytes,
                unit: "B",
                goal: 400.0,
            },
            note: format!(
                "resident-set growth per calendar over {n}, held in a Vec; each zone's rules shared"
            ),
        },
    ]
}
