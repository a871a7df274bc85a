//! `fire_inmem_policies` and `fire_sqlite_policies`: `fire_inmem`'s and `fire_sqlite`'s rounds
//! with every policy of docs/schedules.md §16 set on every schedule — a catch-up window, a run
//! limit no round reaches, pause at `max_faults`, overlap `"cancel_other"` — against the same
//! schedules without them, interleaved in one run. Each firing is on time and each outcome is
//! reported before the next point, so the policies are consulted on every firing and change
//! nothing it does: the rows measure what keeping and checking them costs (goal ≤ 1.05×, the 5%
//! the issue allows; docs/schedules.md §16.8).

use std::path::Path;
use std::time::Duration;

use tickstep_schedules::{OnMaxFaults, Options, Overlap};

use super::{Fixture, ROOM};
use crate::harness::{Measure, Row, interleave};

/// Every policy set, none of them acting on an on-time firing.
fn with_policies() -> Options {
    Options::new()
        .catchup_window(Duration::from_secs(60))
        .remaining_runs(1 << 40)
        .on_max_faults(OnMaxFaults::Pause)
        .overlap(Overlap::CancelOther)
}

pub(super) fn rows(dir: &Path, n: usize, rounds: usize) -> [Row; 2] {
    let inmem = compare(None, n, rounds);
    let sqlite = compare(
        Some((&dir.join("policies.db"), &dir.join("plain.db"))),
        n,
        rounds,
    );
    [
        row(
            "fire_inmem_policies",
            "fire_inmem's schedules, no store",
            n,
            inmem,
        ),
        row(
            "fire_sqlite_policies",
            "fire_sqlite's schedules on a WAL store (the engine thread's time)",
            n,
            sqlite,
        ),
    ]
}

/// Median ns per firing with the policies and without, rounds interleaved.
fn compare(stores: Option<(&Path, &Path)>, n: usize, rounds: usize) -> (f64, f64) {
    let create = |options: fn() -> Options| {
        move |txn: &mut tickstep_schedules::Txn| {
            txn.schedule_every(ROOM, "tick", 1.0, vec![], options())
        }
    };
    let mut ours = Fixture::with(n, stores.map(|s| s.0), create(with_policies));
    let mut plain = Fixture::with(n, stores.map(|s| s.1), create(Options::new));
    interleave(
        rounds,
        || ours.fire_all(n).frame_ns,
        || plain.fire_all(n).frame_ns,
    )
}

fn row(name: &'static str, what: &str, n: usize, (ours_ns, peer_ns): (f64, f64)) -> Row {
    Row {
        name,
        measure: Measure::Ratio {
            ours_ns,
            peer: "the same schedules without policies",
            peer_ns,
            goal_ratio: 1.05,
        },
        note: format!(
            "{what}: {n} due every-1s schedules with catchup_window, remaining_runs, on_max_faults = pause and overlap = cancel_other, tick + outcomes; per firing"
        ),
    }
}
