//! Crash safety: a child process (this test binary, re-executed) creates, stops and fires
//! schedules against a real store (a `SQLite` file; a `PostgreSQL` database) and is killed with
//! `SIGKILL` at random points, 20 times. After each kill the store is reopened: no committed
//! schedule is lost, no rolled-back one appears, no id is handed out twice, and no deadline is
//! earlier than one the child had seen durably written.
//!
//! The child reports each durable fact on stdout *after* the call that made it durable returned:
//! `C id` (creation committed), `R id` (rolled back), `P id` (about to stop), `S id` (stop
//! committed), `T wall` (a tick's group commit returned, at that wall time), `D id next_run`
//! (that tick left this deadline). On `PostgreSQL`, whose ticks write behind, the child waits for
//! the writes (`wait_for_writes`) before it reads a deadline back: only what was written can be
//! promised (docs/schedules.md §11.17).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use common::Host;
use common::stores::{Kind, Store};
use tickstep_kernel::clock::{Clock, ManualClock};
use tickstep_schedules::{Options, Outcome, ScheduleId, Value};

const CHILD_DB: &str = "TICKSTEP_CRASH_CHILD_DB";
const CHILD_WALL: &str = "TICKSTEP_CRASH_CHILD_WALL";
const CHILD_SEED: &str = "TICKSTEP_CRASH_CHILD_SEED";

/// The child's body; a no-op unless the parent set the environment.
#[test]
fn crash_child_process_entry() {
    let Ok(db) = std::env::var(CHILD_DB) else {
        return;
    };
    let wall: u64 = std::env::var(CHILD_WALL).unwrap().parse().unwrap();
    let seed: u64 = std::env::var(CHILD_SEED).unwrap().parse().unwrap();
    let h = Host::open(Path::new(&db), ManualClock::starting_at_unix_nanos(wall));
    for f in h.engine.interrupted() {
        h.engine.abandon(f.run);
    }
    let reader = Store::at(&db);
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = std::io::stdout().lock();
    let mut say = |line: String| {
        writeln!(out, "@J {line}").unwrap();
        out.flush().unwrap();
    };
    let mut mine: Vec<ScheduleId> = h.engine.begin(h.wiz).schedules(None).unwrap();
    for _ in 0..1_000_000 {
        match rng.u8(0..10) {
            0..=2 => {
                let mut txn = h.engine.begin(h.prog);
                let n = rng.usize(1..4);
                let ids: Vec<_> = (0..n)
                    .map(|_| {
                        let interval = f64::from(rng.u8(1..6));
                        txn.schedule_every(
                            h.room,
                            "tick",
                            interval,
                            vec![Value::Int(1)],
                            Options::new().max_faults(0),
                        )
                        .unwrap()
                    })
                    .collect();
                if rng.bool() {
                    txn.commit().unwrap();
                    for id in ids {
                        say(format!("C {}", id.get()));
                        mine.push(id);
                    }
                } else {
                    txn.rollback();
                    for id in ids {
                        say(format!("R {}", id.get()));
                    }
                }
            }
            3 if !mine.is_empty() => {
                let id = mine.swap_remove(rng.usize(..mine.len()));
                // Announced first: a kill between commit and "S" may leave it stopped.
                say(format!("P {}", id.get()));
                let mut txn = h.engine.begin(h.wiz);
                txn.schedule_stop(id).unwrap();
                txn.commit().unwrap();
                say(format!("S {}", id.get()));
            }
            _ => {
                h.advance(f64::from(rng.u8(1..30)) / 10.0);
                for run in h.runner.running() {
                    if rng.bool() {
                        let outcome = if rng.u8(0..4) == 0 {
                            Outcome::Killed
                        } else {
                            Outcome::Returned(Value::Int(0))
                        };
                        h.runner.finish(&h.engine, run, outcome);
                    }
                }
                h.engine.tick().unwrap();
                say(format!("T {}", h.clock.unix_nanos()));
                let txn = h.engine.begin(h.wiz);
                for &id in &mine {
                    assert!(
                        !txn.schedule_info(id).unwrap().retired,
                        "nothing retires these"
                    );
                }
                // What the tick's group commit made durable, read back as an operator would.
                h.engine.wait_for_writes().unwrap();
                for (id, next_run) in reader.pairs("SELECT id, next_run FROM schedules") {
                    say(format!("D {id} {next_run}"));
                }
            }
        }
    }
}

#[derive(Default)]
struct Journal {
    committed: BTreeSet<u64>,
    rolled_back: BTreeSet<u64>,
    stopped: BTreeSet<u64>,
    stopping: BTreeSet<u64>,
    deadline: BTreeMap<u64, u64>,
    wall: u64,
    handed_out: Vec<u64>,
    /// Every fact, for the failure message.
    log: Vec<String>,
}

impl Journal {
    fn history(&self, id: u64) -> Vec<&String> {
        let id = id.to_string();
        self.log
            .iter()
            .filter(|l| l.starts_with("round") || l.split_whitespace().nth(1) == Some(id.as_str()))
            .collect()
    }

    /// Reads one line of child output; returns whether it held a fact. The test harness may print
    /// its "test ... " banner on the same line, hence the marker search.
    fn read_line(&mut self, line: &str) -> bool {
        let Some((_, fact)) = line.split_once("@J ") else {
            return false;
        };
        self.read(fact);
        true
    }

    fn read(&mut self, line: &str) {
        self.log.push(line.to_owned());
        let mut parts = line.split_whitespace();
        let (Some(tag), Some(a)) = (parts.next(), parts.next()) else {
            return;
        };
        let a: u64 = a.parse().unwrap();
        match tag {
            "C" => {
                self.committed.insert(a);
                self.handed_out.push(a);
            }
            "R" => {
                self.rolled_back.insert(a);
                self.handed_out.push(a);
            }
            "P" => {
                self.stopping.insert(a);
            }
            "S" => {
                self.stopped.insert(a);
            }
            "T" => self.wall = self.wall.max(a),
            "D" => {
                let d: u64 = parts.next().unwrap().parse().unwrap();
                let seen = self.deadline.entry(a).or_insert(d);
                *seen = (*seen).max(d);
            }
            _ => {}
        }
    }
}

/// Runs one child until it has reported `kill_after` facts, SIGKILLs it, and reads every fact it
/// managed to print.
fn run_and_kill_child(exe: &Path, db: &Path, round: u64, kill_after: usize, journal: &mut Journal) {
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "crash_child_process_entry",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DB, db)
        .env(CHILD_WALL, (journal.wall + 1_000_000_000).to_string())
        .env(CHILD_SEED, round.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    journal.log.push(format!("round {round}"));
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut read = 0;
    while read < kill_after {
        let Some(Ok(line)) = lines.next() else { break };
        if journal.read_line(&line) {
            read += 1;
        }
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // Facts printed after the kill decision but before the signal landed are true too.
    for line in lines.map_while(Result::ok) {
        journal.read_line(&line);
    }
}

/// Checks the store against everything the children reported.
fn check_store(store: &Store, round: u64, journal: &Journal) -> usize {
    let rows: BTreeMap<u64, u64> = store
        .pairs("SELECT id, next_run FROM schedules")
        .into_iter()
        .map(|(id, next_run)| (id as u64, next_run as u64))
        .collect();
    for id in journal.committed.difference(&journal.stopping) {
        assert!(
            rows.contains_key(id),
            "round {round}: committed schedule {id} lost; its facts: {:?}",
            journal.history(*id)
        );
    }
    for id in journal.rolled_back.union(&journal.stopped) {
        assert!(
            !rows.contains_key(id),
            "round {round}: {id} exists: {:?}",
            journal.history(*id)
        );
    }
    for (id, seen) in &journal.deadline {
        if let Some(&now) = rows.get(id) {
            assert!(
                now >= *seen,
                "round {round}: schedule {id} deadline moved back {seen} -> {now}"
            );
        }
    }
    let unique: BTreeSet<u64> = journal.handed_out.iter().copied().collect();
    assert_eq!(
        unique.len(),
        journal.handed_out.len(),
        "round {round}: an id was handed out twice"
    );
    rows.len()
}

on_both_stores! {
fn a_child_killed_at_random_points_20_times_loses_no_committed_schedule_reuses_no_id_and_moves_no_deadline_back(store) {
    let db = store.path();
    let exe = std::env::current_exe().unwrap();
    let mut journal = Journal {
        wall: ManualClock::DEFAULT_UNIX_NANOS,
        ..Journal::default()
    };
    let mut rng = fastrand::Rng::with_seed(2026);
    for round in 0..20 {
        run_and_kill_child(&exe, db, round, rng.usize(1..600), &mut journal);
        if store.kind() == Kind::Postgres {
            // The killed node still holds its rows until its lease runs out (docs/schedules.md
            // §11.26); end it here as ten seconds of waiting would, so the reopening engine
            // claims them all.
            store.execute("UPDATE tickstep_nodes SET lease_until = now() - interval '1 second'");
        }
        let rows = check_store(store, round, &journal);
        // The engine opens the file, and its next id is above everything ever handed out.
        let h = Host::open(db, ManualClock::starting_at_unix_nanos(journal.wall + 1));
        assert_eq!(h.engine.live_count(), rows);
        let mut txn = h.engine.begin(h.prog);
        let fresh = txn
            .schedule_every(h.room, "tick", 1.0, vec![], Options::new())
            .unwrap()
            .get();
        txn.rollback();
        assert!(
            journal.handed_out.iter().all(|&id| id < fresh),
            "round {round}: fresh id {fresh} reuses one"
        );
        journal.handed_out.push(fresh);
        journal.rolled_back.insert(fresh);
        journal.wall = journal.wall.max(h.clock.unix_nanos());
    }
    assert!(
        journal.committed.len() > 20,
        "the children did real work: {}",
        journal.committed.len()
    );
}
}
