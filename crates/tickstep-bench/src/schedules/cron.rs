//! Calendar schedules in the engine (docs/schedules.md §14.16): what firing one costs beside an
//! `every` schedule, and what 100,000 of them cost to load and hold.
//!
//! | measure | ours | against |
//! |---|---|---|
//! | `fire_cron` | N due `* * * * * *` schedules in Europe/Paris, one tick fires them all, then each outcome is reported; no store; per firing | N due `every 1 s` schedules, same fixture, interleaved in one run; goal ratio ≤ 1.3 |
//! | `cron_load_100k` | `Schedules::open` of a `SQLite` store of 100,000 calendar schedules in 8 zones (`calendar_load`'s 4 expression shapes: 120 distinct calendars, which the engine shares), in a fresh process | goal ≤ 2 s |
//! | `cron_bytes_per_schedule` | resident-set growth of that open, per schedule (entry, calendar, `SQLite`'s page cache) | goal ≤ 400 B |
//! | `cron_load_100k_distinct`, `cron_bytes_distinct` | the same with no two calendars alike (the worst case: nothing shared) | goals 2 s and 400 B |
//!
//! The load is measured in a fresh child process, as `bytes_per_schedule` is: memory freed by
//! earlier rows would otherwise be reused and hide the cost.

use std::path::Path;
use std::time::Instant;

use tickstep_schedules::Options;

use super::calendar_load::{ZONES, expr, in_child};
use super::{Fixture, ROOM, WIZARD, open, resident_bytes};
use crate::harness::{Measure, Row, interleave};

/// Set in the child that opens the store of calendar schedules: its path.
pub(super) const CHILD_ENV: &str = "TICKSTEP_BENCH_CRON_LOAD_CHILD";

/// How many calendar schedules the load measures.
const LOADED: usize = 100_000;

pub(super) fn rows(dir: &Path, due: usize, rounds: usize) -> Vec<Row> {
    let mut rows = vec![fire_cron(due, rounds)];
    rows.extend(load(dir, Set::Mixed));
    rows.extend(load(dir, Set::Distinct));
    rows
}

/// Which calendars a loaded store holds.
#[derive(Clone, Copy)]
enum Set {
    /// `calendar_load`'s expressions in 8 zones: 120 distinct calendars over 100,000 schedules.
    Mixed,
    /// No two alike: minute, hour and day of month vary with the schedule.
    Distinct,
}

impl Set {
    /// The `i`-th schedule's expression and zone.
    fn calendar(self, i: usize) -> (String, &'static str) {
        let zone = ZONES[i % ZONES.len()];
        match self {
            Set::Mixed => (expr(i), zone),
            Set::Distinct => {
                let k = i / ZONES.len();
                (
                    format!("{} {} {} * *", k % 60, k / 60 % 24, k / 1_440 % 28 + 1),
                    zone,
                )
            }
        }
    }
}

fn fire_cron(n: usize, rounds: usize) -> Row {
    let mut cron = Fixture::with(n, None, |txn| {
        txn.schedule_cron(
            ROOM,
            "tick",
            "* * * * * *",
            "Europe/Paris",
            vec![],
            Options::new(),
        )
    });
    let mut every = Fixture::new(n, None);
    let (ours_ns, peer_ns) = interleave(
        rounds,
        || cron.fire_all(n).frame_ns,
        || every.fire_all(n).frame_ns,
    );
    Row {
        name: "fire_cron",
        measure: Measure::Ratio {
            ours_ns,
            peer: "every-1s schedules",
            peer_ns,
            goal_ratio: 1.3,
        },
        note: format!(
            "{n} due secondly calendar schedules in Europe/Paris, one tick + {n} reported outcomes, no store; per firing"
        ),
    }
}

/// Writes a store of `n` calendar schedules of `set` (not timed).
fn build_store(path: &Path, n: usize, set: Set) {
    let fixture = Fixture::new(0, Some(path));
    let mut txn = fixture.engine.begin(WIZARD);
    for i in 0..n {
        let (expr, zone) = set.calendar(i);
        txn.schedule_cron(ROOM, "tick", &expr, zone, vec![], Options::new())
            .expect("create");
    }
    txn.commit().expect("commit");
}

/// In the child: opens the store, prints the seconds taken and the bytes per schedule, exits.
pub(super) fn child(path: &Path) -> ! {
    let before = resident_bytes().unwrap_or(0);
    let started = Instant::now();
    let engine = open(path);
    let seconds = started.elapsed().as_secs_f64();
    let after = resident_bytes().unwrap_or(0);
    let per = after.saturating_sub(before) as f64 / engine.live_count().max(1) as f64;
    println!("{seconds} {per}");
    std::process::exit(0);
}

fn load(dir: &Path, set: Set) -> [Row; 2] {
    let (file, names, what) = match set {
        Set::Mixed => (
            "cron.db",
            ["cron_load_100k", "cron_bytes_per_schedule"],
            "120 distinct calendars, shared",
        ),
        Set::Distinct => (
            "cron_distinct.db",
            ["cron_load_100k_distinct", "cron_bytes_distinct"],
            "no two calendars alike",
        ),
    };
    let path = dir.join(file);
    build_store(&path, LOADED, set);
    let (seconds, bytes) = in_child(CHILD_ENV, &path);
    [
        Row {
            name: names[0],
            measure: Measure::Value {
                value: seconds,
                unit: "s",
                goal: 2.0,
            },
            note: format!(
                "Schedules::open of a SQLite store of {LOADED} calendar schedules in 8 zones ({what}), a fresh process"
            ),
        },
        Row {
            name: names[1],
            measure: Measure::Value {
                value: bytes,
                unit: "B",
                goal: 400.0,
            },
            note: format!(
                "resident-set growth of that open per schedule ({what}): entry, calendar, SQLite's page cache"
            ),
        },
    ]
}
