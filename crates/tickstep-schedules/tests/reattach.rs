//! A host whose tasks survive a crash gets every in-flight firing back after a `SIGKILL`, under
//! its run id, and no point fires twice (docs/schedules.md §11.5, §11.42, §11.49).
//!
//! A child process (this test binary, re-executed) runs an engine on the REAL clock, as a host
//! with persistent tasks would: each firing is a "task" whose start is a line
//! `F generation schedule point run` appended to a file in one `write(2)` before `start`
//! returns, and whose end, about 150 ms later, is a line `E generation run` (the task's own
//! durable record, as a MOO server's task database would hold it). The parent `SIGKILL`s the
//! child at random moments and starts the next generation on the same store. At open each child
//! reads the file: a run `interrupted()` hands back that has a task is reattached (reported at
//! once when its task had ended, later when it ends); one with no task — its start never
//! happened — is abandoned. Each decision is a line `B generation schedule point run decision`.
//! On `PostgreSQL` every child resumes the same node (`Config::node`), waiting out the lease of
//! the one killed.
//!
//! Asserted: every task unfinished at a kill is handed back to the next generation, with the
//! schedule, point and run id it started under, and reattached; no point fires twice; every
//! handed-back run without a task is one whose start never happened.
//!
//! Bounded: 6 kills per store of at most 0.6 s of running each, a 20 s bound on every wait.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

use common::effects;
use common::stores::{Kind, Store};
use tickstep_kernel::clock::SystemClock;
use tickstep_schedules::testkit::TestWorld;
use tickstep_schedules::{
    Firing, Options, Outcome, Overlap, Refused, RunId, Runner, Schedules, Value,
};

const CHILD_DB: &str = "TICKSTEP_REATTACH_DB";
const CHILD_TASKS: &str = "TICKSTEP_REATTACH_TASKS";
const CHILD_GEN: &str = "TICKSTEP_REATTACH_GEN";
const KILLS: u64 = 6;
/// How long a task runs.
const TASK: Duration = Duration::from_millis(150);
/// The node every child is on a `PostgreSQL` store.
const NODE: u64 = 4242;

/// One line of the task file.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Line {
    /// A task started: (generation, schedule, point, run).
    Started(u64, u64, u64, u64),
    /// A task ended: (generation it started in, run).
    Ended(u64, u64),
    /// A run handed back: (generation, schedule, point, run, reattached).
    Back(u64, u64, u64, u64, bool),
}

fn read_tasks(path: &Path) -> Vec<Line> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let n = |i: usize| f[i].parse::<u64>().unwrap();
            match f[0] {
                "F" => Line::Started(n(1), n(2), n(3), n(4)),
                "E" => Line::Ended(n(1), n(2)),
                _ => Line::Back(n(1), n(2), n(3), n(4), f[5] == "reattach"),
            }
        })
        .collect()
}

/// Tasks the file lists as started and not ended: (schedule, point, run) → generation.
fn unfinished(lines: &[Line]) -> BTreeMap<(u64, u64, u64), u64> {
    let ended: BTreeSet<(u64, u64)> = lines
        .iter()
        .filter_map(|l| match l {
            Line::Ended(generation, run) => Some((*generation, *run)),
            _ => None,
        })
        .collect();
    lines
        .iter()
        .filter_map(|l| match l {
            Line::Started(generation, s, p, r) if !ended.contains(&(*generation, *r)) => {
                Some(((*s, *p, *r), *generation))
            }
            _ => None,
        })
        .collect()
}

/// The host's task system: appends each start and end to the task file in one write.
#[derive(Clone)]
struct Tasks {
    file: Rc<std::cell::RefCell<std::fs::File>>,
    generation: u64,
    /// Running tasks: (generation started, run, when it ends).
    running: Rc<std::cell::RefCell<Vec<(u64, RunId, Instant)>>>,
}

impl Tasks {
    fn append(&self, line: &str) {
        self.file.borrow_mut().write_all(line.as_bytes()).unwrap();
    }

    /// Ends the tasks whose time is up: the end is recorded, then reported.
    fn end_due(&self, engine: &Schedules) {
        let now = Instant::now();
        let due: Vec<_> = {
            let mut running = self.running.borrow_mut();
            let (due, rest) = running.drain(..).partition(|(_, _, at)| *at <= now);
            *running = rest;
            due
        };
        for (generation, run, _) in due {
            self.append(&format!("E {generation} {}\n", run.0));
            engine.report(run, Outcome::Returned(Value::Int(0)));
        }
    }
}

impl Runner for Tasks {
    fn start(&self, firing: &Firing) -> Result<(), Refused> {
        self.append(&format!(
            "F {} {} {} {}\n",
            self.generation,
            firing.schedule.get(),
            firing.nominal_unix_nanos,
            firing.run.0
        ));
        self.running
            .borrow_mut()
            .push((self.generation, firing.run, Instant::now() + TASK));
        Ok(())
    }
}

/// The child's body; a no-op unless the parent set the environment.
#[test]
fn reattach_child_process_entry() {
    let Ok(db) = std::env::var(CHILD_DB) else {
        return;
    };
    let path = std::env::var(CHILD_TASKS).unwrap();
    let generation: u64 = std::env::var(CHILD_GEN).unwrap().parse().unwrap();
    let before = read_tasks(Path::new(&path));
    let tasks = Tasks {
        file: Rc::new(std::cell::RefCell::new(
            OpenOptions::new()
                .append(true)
                .create(true)
                .open(&path)
                .unwrap(),
        )),
        generation,
        running: Rc::default(),
    };
    let world = TestWorld::new();
    let wiz = world.add_wizard();
    world.add_verb(wiz, "ring");
    let mut config = common::config();
    config.lease = Duration::from_secs(1);
    config.node = Some(NODE);
    let clock = SystemClock::new();
    let engine = Schedules::open(&db, clock.clone(), world, tasks.clone(), config).expect("open");
    // The host's side of docs/schedules.md §11.5: a run it has a task for is reattached; one
    // whose task already ended had its outcome lost with the process, so it is reported now.
    let open = unfinished(&before);
    let started: BTreeMap<(u64, u64, u64), u64> = before
        .iter()
        .filter_map(|l| match l {
            Line::Started(generation, s, p, r) => Some(((*s, *p, *r), *generation)),
            _ => None,
        })
        .collect();
    for f in engine.interrupted() {
        let key = (f.schedule.get(), f.nominal_unix_nanos, f.run.0);
        let decision = if let Some(&from) = open.get(&key) {
            assert!(engine.reattach(f.run));
            // It goes on in this process, under the generation that started it.
            tasks
                .running
                .borrow_mut()
                .push((from, f.run, Instant::now() + TASK));
            "reattach"
        } else if started.contains_key(&key) {
            assert!(engine.reattach(f.run));
            engine.report(f.run, Outcome::Returned(Value::Int(0)));
            "reattach"
        } else {
            assert!(engine.abandon(f.run));
            "abandon"
        };
        tasks.append(&format!(
            "B {generation} {} {} {} {decision}\n",
            key.0, key.1, key.2
        ));
    }
    if engine.live_count() == 0 {
        let mut txn = engine.begin(wiz);
        for interval in [0.05, 0.08, 0.13] {
            txn.schedule_every(
                wiz,
                "ring",
                interval,
                vec![],
                Options::new().overlap(Overlap::Concurrent),
            )
            .unwrap();
        }
        txn.commit().unwrap();
    }
    effects::tick_until_killed(&engine, &clock, || tasks.end_due(&engine), |_| {});
}

/// Starts generation `generation` on `store`, waits until it runs, lets it run `run_for`, and
/// SIGKILLs it.
fn run_and_kill(exe: &Path, store: &Store, tasks: &Path, generation: u64, run_for: Duration) {
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "reattach_child_process_entry",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DB, store.path())
        .env(CHILD_TASKS, tasks)
        .env(CHILD_GEN, generation.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.contains("@READY") {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(20))
        .expect("the child opened the store");
    std::thread::sleep(run_for);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    reader.join().unwrap();
}

on_both_stores! {
fn a_host_that_reattaches_after_sigkill_gets_every_run_back_and_no_point_fires_twice(store) {
    let _dropped = common::stores::DroppedAtEnd(store);
    let exe = std::env::current_exe().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tasks");
    let mut rng = fastrand::Rng::with_seed(33);
    let mut in_flight_at_kills = 0;
    // The last generation is killed too; the one after it only opens and hands back.
    for generation in 1..=KILLS + 1 {
        let open = unfinished(&read_tasks(&file));
        in_flight_at_kills += open.len();
        let run_for = if generation > KILLS {
            Duration::from_millis(50)
        } else {
            Duration::from_millis(rng.u64(250..600))
        };
        run_and_kill(&exe, store, &file, generation, run_for);
        let lines = read_tasks(&file);
        let back: BTreeMap<(u64, u64, u64), bool> = lines
            .iter()
            .filter_map(|l| match l {
                Line::Back(g, s, p, r, reattached) if *g == generation => {
                    Some(((*s, *p, *r), *reattached))
                }
                _ => None,
            })
            .collect();
        for key in open.keys() {
            assert_eq!(
                back.get(key),
                Some(&true),
                "generation {generation}: the task {key:?} ran at the kill and was not handed \
                 back to reattach; handed back: {back:?}"
            );
        }
        let started: BTreeSet<(u64, u64, u64)> = lines
            .iter()
            .filter_map(|l| match l {
                Line::Started(_, s, p, r) => Some((*s, *p, *r)),
                _ => None,
            })
            .collect();
        for (key, reattached) in &back {
            assert_eq!(
                *reattached,
                started.contains(key),
                "generation {generation}: {key:?} abandoned only when its task never started"
            );
        }
    }
    let lines = read_tasks(&file);
    let mut points: BTreeMap<(u64, u64), usize> = BTreeMap::new();
    for l in &lines {
        if let Line::Started(_, s, p, _) = l {
            *points.entry((*s, *p)).or_default() += 1;
        }
    }
    let twice: Vec<_> = points.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "points fired twice: {twice:?}");
    assert!(points.len() > 30, "the children fired: {}", points.len());
    assert!(
        in_flight_at_kills > 0,
        "some task was running at a kill, so reattaching was exercised"
    );
    let kind = if store.kind() == Kind::Postgres { "postgres" } else { "sqlite" };
    eprintln!(
        "reattach ({kind}): {} points fired across {KILLS} kills, none twice; {in_flight_at_kills} \
         tasks running at a kill, every one handed back",
        points.len()
    );
}
}

/// docs/schedules.md §11.49: a node id another live engine holds is refused once its lease has
/// been renewed for two leases of waiting, and an id outside `1..=i64::MAX` is a typed error; the
/// live engine keeps its rows.
#[test]
fn a_node_a_live_engine_holds_is_refused_and_a_bad_node_id_is_named() {
    let url = pg_or_skip!("a_node_a_live_engine_holds_is_refused");
    let store = Store::postgres(url);
    let open = |node: u64| {
        let world = TestWorld::new();
        let mut config = common::config();
        config.lease = Duration::from_millis(300);
        config.node = Some(node);
        Schedules::open(
            store.path(),
            tickstep_kernel::clock::ManualClock::new(),
            world,
            tickstep_schedules::testkit::TestRunner::new(),
            config,
        )
    };
    let live = open(77).expect("the first engine on node 77");
    let refused = open(77).err().expect("a second engine on node 77");
    assert!(
        matches!(
            refused,
            tickstep_schedules::Error::NodeInUse { node: 77, .. }
        ),
        "{refused}"
    );
    assert!(
        refused.to_string().contains("node 77 is in use"),
        "{refused}"
    );
    for bad in [0, u64::MAX] {
        let e = open(bad).err().expect("refused");
        assert_eq!(e.code(), "E_INVARG", "{e}");
        assert!(e.to_string().contains(&bad.to_string()), "{e}");
    }
    drop(live);
    // A clean close ends its lease's hold: the node is free again at once.
    drop(open(77).expect("node 77 after its engine closed"));
}
