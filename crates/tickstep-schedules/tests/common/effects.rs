//! Side effects that outlive a `SIGKILL`, for the tests that kill a child process mid-run
//! (`served_once.rs`, `cron_kill.rs`, `reattach.rs`): a runner that appends `F schedule point
//! run` to an `O_APPEND`
//! file in one `write(2)` before `start` returns — a write the kernel accepted survives the
//! process's kill (it is in the page cache), so no `fsync` is needed for what these tests kill —
//! and the readers the parent checks them with.
#![allow(dead_code, unreachable_pub)]

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::rc::Rc;

use std::time::{Duration, Instant};

use tickstep_kernel::clock::{Clock, SystemClock};
use tickstep_schedules::{Firing, Outcome, Refused, RunId, Runner, Schedules, TickReport, Value};

use super::stores::Store;

/// Appends `F schedule point run` for every firing it starts, in one write, before returning.
#[derive(Clone)]
pub struct EffectRunner {
    effects: Rc<RefCell<File>>,
    started: Rc<RefCell<Vec<RunId>>>,
}

impl EffectRunner {
    /// A runner appending to the file at `path` (made if missing).
    pub fn appending_to(path: impl AsRef<Path>) -> Self {
        let effects = OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .unwrap();
        EffectRunner {
            effects: Rc::new(RefCell::new(effects)),
            started: Rc::new(RefCell::new(Vec::new())),
        }
    }

    /// Ends every firing started since the last call, as returned: a healthy run, so overlap
    /// never drops a point.
    pub fn end_started(&self, engine: &Schedules) {
        let finished: Vec<RunId> = self.started.borrow_mut().drain(..).collect();
        for run in finished {
            engine.report(run, Outcome::Returned(Value::Int(0)));
        }
    }
}

impl Runner for EffectRunner {
    fn start(&self, firing: &Firing) -> Result<(), Refused> {
        let line = format!(
            "F {} {} {}\n",
            firing.schedule.get(),
            firing.nominal_unix_nanos,
            firing.run.0
        );
        // One write(2) on an O_APPEND file: whole, and kept by the kernel through a SIGKILL.
        self.effects
            .borrow_mut()
            .write_all(line.as_bytes())
            .unwrap();
        self.started.borrow_mut().push(firing.run);
        Ok(())
    }
}

/// The points each schedule fired, as the effects file at `path` lists them, in file order
/// (the run ids are read by [`runs_fired`]).
pub fn fired(path: &Path) -> BTreeMap<u64, Vec<u64>> {
    let mut fired: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let f: Vec<u64> = line
            .split(' ')
            .skip(1)
            .map(|x| x.parse().unwrap())
            .collect();
        fired.entry(f[0]).or_default().push(f[1]);
    }
    fired
}

/// The rows' running lists: (schedule, point) of every firing in flight.
pub fn in_flight(store: &Store) -> BTreeSet<(u64, u64)> {
    let rows = store.texts("SELECT id, running FROM schedules WHERE running IS NOT NULL");
    let mut out = BTreeSet::new();
    for (id, running) in rows {
        let list: Vec<(Option<u64>, u64, u64)> = serde_json::from_str(&running).unwrap();
        for (_, point, _) in list {
            out.insert((id as u64, point));
        }
    }
    out
}

/// A killed child's life: says `@READY` on stdout, then for at most 20 s of real time runs
/// `before` and a tick, hands the tick's report to `after`, and sleeps until the engine's next
/// deadline (1 to 5 ms). The parent `SIGKILL`s it long before the 20 s are out.
pub fn tick_until_killed(
    engine: &Schedules,
    clock: &SystemClock,
    mut before: impl FnMut(),
    mut after: impl FnMut(&TickReport),
) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "@READY").unwrap();
    out.flush().unwrap();
    drop(out);
    let until = Instant::now() + Duration::from_secs(20);
    while Instant::now() < until {
        before();
        after(&engine.tick().unwrap());
        let wait = engine
            .next_deadline()
            .map_or(Duration::from_millis(5), |at| {
                at.as_nanos()
                    .checked_sub(clock.now().as_nanos())
                    .map_or(Duration::ZERO, Duration::from_nanos)
            });
        std::thread::sleep(wait.clamp(Duration::from_millis(1), Duration::from_millis(5)));
    }
}
