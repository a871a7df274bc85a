//! Creation: what `Txn::commit` of one new schedule costs, in memory and on a `SQLite` store
//! (a synced commit: `synchronous=FULL`, one fsync), one schedule per transaction as a task
//! creating a schedule makes it.
//!
//! | measure | ours | against |
//! |---|---|---|
//! | `create_inmem` | `begin`, `schedule_every`, `commit` on an engine without a store; ns per schedule | goal ≤ 5,000 ns |
//! | `create_sqlite` | the same on a `SQLite` store: one durable transaction per schedule | goal ≤ 10,000,000 ns (one fsync) |

use std::path::Path;

use tickstep_kernel::clock::ManualClock;
use tickstep_schedules::OpenWorld;
use tickstep_schedules::testkit::CountingRunner;
use tickstep_schedules::{Options, Schedules};

use super::{ROOM, WIZARD, config};
use crate::harness::{Measure, Row, median, ns_per_op};

/// Ns per created and committed schedule, `n` of them, on `engine`.
fn create(engine: &Schedules, n: usize) -> f64 {
    ns_per_op(n, || {
        for _ in 0..n {
            let mut txn = engine.begin(WIZARD);
            txn.schedule_every(ROOM, "tick", 60.0, vec![], Options::new())
                .expect("create");
            txn.commit().expect("commit");
        }
    })
}

fn engine(path: Option<&Path>) -> Schedules {
    let (clock, world, runner) = (ManualClock::new(), OpenWorld, CountingRunner::default());
    match path {
        Some(path) => Schedules::open(path, clock, world, runner, config(1024)).expect("open"),
        None => Schedules::in_memory(clock, world, runner, config(1024)),
    }
}

/// The creation rows: medians of `rounds` batches, each on a fresh engine (so every batch
/// creates into the same size of table).
pub(super) fn rows(dir: &Path, rounds: usize, quick: bool) -> Vec<Row> {
    let (inmem_n, sqlite_n) = if quick { (5_000, 100) } else { (20_000, 400) };
    let mut inmem: Vec<f64> = (0..=rounds)
        .map(|_| create(&engine(None), inmem_n))
        .skip(1)
        .collect();
    let mut stored: Vec<f64> = (0..=rounds)
        .map(|round| {
            let path = dir.join(format!("create{round}.db"));
            let ns = create(&engine(Some(&path)), sqlite_n);
            let _ = std::fs::remove_file(&path);
            ns
        })
        .skip(1)
        .collect();
    vec![
        Row {
            name: "create_inmem",
            measure: Measure::Ns {
                ours_ns: median(&mut inmem),
                goal_ns: 5_000.0,
            },
            note: format!(
                "begin + schedule_every + commit, no store; {inmem_n} per batch, median of {rounds}"
            ),
        },
        Row {
            name: "create_sqlite",
            measure: Measure::Ns {
                ours_ns: median(&mut stored),
                goal_ns: 10_000_000.0,
            },
            note: format!(
                "the same on a SQLite store (a synced commit, one fsync each); {sqlite_n} per batch, median of {rounds}"
            ),
        },
    ]
}
