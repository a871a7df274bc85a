//! Guide: bring your own object database and task system (docs/runtime.md §4.11).
//!
//! A world server already has both: objects with owners and verbs in its own database, and a
//! task system that runs verb code (here, a queue of jobs that take a few frames each, as a
//! scripting VM's tasks would). tickstep brings the durable schedules and the frame-budgeted
//! kernel; the server plugs its two pieces in and writes no driver loop and no future:
//!
//! 1. **The object database** answers the engine's questions through [`World`]: does this object
//!    exist, is this principal a wizard, who controls what, may this verb be called now.
//! 2. **The task system** receives firings through a [`QueueRunner`]: the engine queues each
//!    firing when its deadline comes (`start` only numbers and queues it); the server takes the
//!    queue, runs the jobs its own way, and reports each outcome through a
//!    [`Reporter`](tickstep::Reporter) when the job ends, one slice or many later.
//! 3. **The runtime** drives the engine: it ticks it when a deadline comes due, re-arms after
//!    every report, and sleeps between deadlines (in virtual time here, so a simulated hour runs
//!    at once).
//!
//! Run it with `cargo run -p tickstep --example own_host`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use tickstep::Runtime;
use tickstep::kernel::{ManualClock, Priority};
use tickstep::schedules::{Firing, ObjId, Options, Outcome, QueueRunner, RunId, Value, World};

/// The server's own object database: objects, their owners and verbs.
#[derive(Default)]
struct Database {
    objects: RefCell<HashMap<ObjId, Object>>,
}

struct Object {
    owner: ObjId,
    wizard: bool,
    verbs: Vec<&'static str>,
}

/// Read-only view of the database the engine asks (shared with the server through an `Rc`).
struct DbWorld(Rc<Database>);

impl World for DbWorld {
    fn valid(&self, obj: ObjId) -> bool {
        self.0.objects.borrow().contains_key(&obj)
    }
    fn is_wizard(&self, who: ObjId) -> bool {
        self.0.objects.borrow().get(&who).is_some_and(|o| o.wizard)
    }
    fn controls(&self, who: ObjId, obj: ObjId) -> bool {
        self.is_wizard(who)
            || self
                .0
                .objects
                .borrow()
                .get(&obj)
                .is_some_and(|o| o.owner == who)
    }
    fn verb_callable(&self, _perms: ObjId, target: ObjId, verb: &str) -> bool {
        self.0
            .objects
            .borrow()
            .get(&target)
            .is_some_and(|o| o.verbs.contains(&verb))
    }
}

/// The server's own task system: each job needs a number of frames of work before it ends.
#[derive(Default)]
struct Tasks {
    jobs: Vec<Job>,
}

struct Job {
    run: RunId,
    firing: Firing,
    frames_left: u32,
}

impl Tasks {
    /// Admits the firings the engine started since the last frame.
    fn admit(&mut self, started: Vec<(RunId, Firing)>) {
        for (run, firing) in started {
            let frames_left = if &*firing.verb == "sweep" { 3 } else { 1 };
            self.jobs.push(Job {
                run,
                firing,
                frames_left,
            });
        }
    }

    /// One frame of work for every job; returns the outcomes of the jobs that ended.
    fn run_frame(&mut self) -> Vec<(RunId, Outcome)> {
        let mut ended = Vec::new();
        self.jobs.retain_mut(|job| {
            job.frames_left -= 1;
            if job.frames_left > 0 {
                return true;
            }
            let outcome = match &*job.firing.verb {
                "sweep" => Outcome::Returned(Value::Int(0)),
                other => Outcome::Returned(Value::Str(format!("{other} done"))),
            };
            ended.push((job.run, outcome));
            false
        });
        ended
    }
}

pub(crate) fn main() -> Result<(), Box<dyn std::error::Error>> {
    let db = Rc::new(Database::default());
    let (wizard, room) = (ObjId(1), ObjId(10));
    db.objects.borrow_mut().insert(
        wizard,
        Object {
            owner: wizard,
            wizard: true,
            verbs: vec![],
        },
    );
    db.objects.borrow_mut().insert(
        room,
        Object {
            owner: wizard,
            wizard: false,
            verbs: vec!["sweep"],
        },
    );

    let jobs = QueueRunner::new();
    let rt = Runtime::builder()
        .manual_clock(ManualClock::new()) // drop this line to run on real time
        .world(DbWorld(Rc::clone(&db)))
        .runner(jobs.clone())
        .without_commands() // a world server with no robot-style commands
        .in_memory_store() // or .store_path("world.db") to survive restarts
        .build()?;

    // The room sweeps itself every ten minutes.
    let mut txn = rt.schedules().begin(wizard);
    let sweep = txn.schedule_every(room, "sweep", 600.0, vec![], Options::new())?;
    txn.commit()?;
    // A verb the database does not know is refused at the call site, not at 3 a.m.
    let mut txn = rt.schedules().begin(wizard);
    assert!(
        txn.schedule_every(room, "dance", 60.0, vec![], Options::new())
            .is_err()
    );
    drop(txn);

    // The server's task system runs beside the kernel as one kernel job every 100 ms at Low
    // priority (under the frame budget, after the kernel's own work): it takes what the engine
    // started, runs one slice of every job, and reports the ones that ended.
    let mut tasks = Tasks::default();
    let reporter = rt.reporter();
    let _host = rt.scheduler().with_origin("host tasks").every(
        Duration::from_millis(100),
        move || {
            tasks.admit(jobs.take_started());
            for (run, outcome) in tasks.run_frame() {
                reporter.report(run, outcome);
            }
        },
        Priority::Low,
    )?;

    // No driver loop: run an hour (virtual time here; a real server runs until shutdown).
    rt.run_for(Duration::from_secs(3600))?;

    let info = rt.schedules().begin(wizard).schedule_info(sweep)?;
    println!(
        "{} sweeps in an hour; {} firings started and {} returned",
        info.run_count,
        rt.stats().firings_started,
        rt.stats().firings_returned,
    );
    assert_eq!(
        info.run_count, 6,
        "the sweep due at exactly one hour started"
    );
    // It takes three 100 ms slices of the host's task system: still running at the hour.
    assert_eq!(rt.stats().firings_returned, 5);
    assert!(info.running_task.is_some());
    rt.run_for(Duration::from_secs(1))?;
    assert_eq!(rt.stats().firings_returned, 6);
    Ok(())
}
