//! The SQLite store: durability, restart, catch-up after downtime, in-flight firings, schema,
//! operator access with the `sqlite3` shell. Real files in temp dirs.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::stores::Store;
use common::{Host, approx};
use tickstep_kernel::clock::{Clock, ManualClock};
use tickstep_schedules::{
    Catchup, Error, FaultKind, Options, Outcome, Overlap, RetireReason, RunId, ScheduleId, Value,
};

fn db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("schedules.db");
    (dir, path)
}

/// Drops `h` and opens the same file `secs_later` seconds of wall time later.
fn restart(h: Host, path: &Path, secs_later: f64) -> Host {
    let wall = h.clock.unix_nanos() + (secs_later * 1e9) as u64;
    drop(h);
    Host::open(path, ManualClock::starting_at_unix_nanos(wall))
}

/// A count read beside the engine, once the store has written what it was handed.
fn count(h: &Host, store: &Store, sql: &str) -> i64 {
    h.engine.wait_for_writes().unwrap();
    store.count(sql)
}

fn sql_count(path: &Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

on_both_stores! {
    fn restart_keeps_ids_deadlines_counters_and_options_intact(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let mut txn = h.engine.begin(h.prog);
        let id = txn
            .schedule_every(
                h.room,
                "tick",
                10.0,
                common::nested_args(),
                common::unusual_options(h.prog),
            )
            .unwrap();
        txn.commit().unwrap();
        for _ in 0..3 {
            h.advance(10.25);
            h.tick();
            h.advance(0.5);
            h.fault(h.last_run());
        }
        h.tick(); // group commit of the last outcome
        let before = h.info(id);
        let h = restart(h, path, 0.0);
        let after = h.info(id);
        assert_eq!(
            after.mean_duration_ns, 0,
            "the duration window is per server run"
        );
        let mut expected = before.clone();
        expected.mean_duration_ns = 0;
        expected.p99_duration_ns = 0;
        assert_eq!(after, expected);
        assert_eq!(after.fault_count, 3);
        assert_eq!(after.last_fault.unwrap().value, Value::from("E_DIV"));
    }
}

on_both_stores! {
    fn the_id_high_water_mark_never_goes_back_across_restarts(store) {
        let path = store.path();
        let mut h = Host::open(path, ManualClock::new());
        let mut all: Vec<ScheduleId> = Vec::new();
        for round in 0..4 {
            for persist in [true, false] {
                let mut txn = h.engine.begin(h.prog);
                let id = txn
                    .schedule_every(h.room, "tick", 1.0, vec![], Options::new().persist(persist))
                    .unwrap();
                if round % 2 == 0 {
                    txn.commit().unwrap();
                }
                all.push(id);
            }
            h = restart(h, path, 1.0);
        }
        assert!(all.windows(2).all(|w| w[0] < w[1]), "{all:?}");
    }
}

on_both_stores! {
    fn ids_continue_from_the_last_one_used_after_a_clean_stop(store) {
        // docs/schedules.md §11.47: a clean stop gives the unused end of its block back.
        let path = store.path();
        let mut h = Host::open(path, ManualClock::new());
        let mut ids = vec![h.every(1.0, Options::new()), h.every(1.0, Options::new())];
        for _ in 0..3 {
            h = restart(h, path, 1.0);
            ids.push(h.every(1.0, Options::new()));
        }
        let raw: Vec<u64> = ids.iter().map(|id| id.get()).collect();
        assert_eq!(raw, [1, 2, 3, 4, 5], "no jump after a clean stop");
    }
}

on_both_stores! {
    fn rolled_back_ids_never_appear_after_restart(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let mut txn = h.engine.begin(h.prog);
        let ghost = txn
            .schedule_every(h.room, "tick", 1.0, vec![], Options::new())
            .unwrap();
        txn.rollback();
        let h = restart(h, path, 0.0);
        assert!(!h.valid(ghost));
        assert_eq!(count(&h, store, "SELECT COUNT(*) FROM schedules"), 0);
        let fresh = h.every(1.0, Options::new());
        assert!(fresh > ghost);
    }
}

on_both_stores! {
    fn creation_and_stop_are_durable_when_commit_returns(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(60.0, Options::new());
        // Another connection sees the row at once: no tick, no flush needed.
        assert_eq!(count(&h, store, "SELECT COUNT(*) FROM schedules"), 1);
        let mut txn = h.engine.begin(h.prog);
        txn.schedule_stop(id).unwrap();
        assert_eq!(
            count(&h, store, "SELECT COUNT(*) FROM schedules"),
            1,
            "not before commit"
        );
        txn.commit().unwrap();
        assert_eq!(count(&h, store, "SELECT COUNT(*) FROM schedules"), 0);
    }
}

on_both_stores! {
    fn cadence_updates_are_group_committed_once_per_tick(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let ids: Vec<_> = (0..5).map(|_| h.every(1.0, Options::new())).collect();
        h.after(1.0);
        assert_eq!(
            count(&h, store, "SELECT SUM(run_count) FROM schedules"),
            5,
            "one tick, all five rows"
        );
        h.finish_all();
        assert_eq!(
            count(&h, store, "SELECT COUNT(*) FROM schedules WHERE running IS NULL"
            ),
            0
        );
        h.tick();
        assert_eq!(
            count(&h, store, "SELECT COUNT(*) FROM schedules WHERE running IS NULL"
            ),
            5
        );
        let _ = ids;
    }
}

on_both_stores! {
    fn non_persistent_schedules_never_touch_the_disk_and_vanish_on_restart(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(1.0, Options::new().persist(false));
        h.after(1.0);
        h.finish_all();
        h.tick();
        assert_eq!(count(&h, store, "SELECT COUNT(*) FROM schedules"), 0);
        let h = restart(h, path, 0.0);
        assert!(!h.valid(id));
        assert_eq!(h.engine.live_count(), 0);
    }
}

on_both_stores! {
    fn retired_entries_are_not_saved_so_a_restart_drops_them(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.at(0.0, Options::new());
        h.tick();
        h.finish(h.last_run(), Value::Int(0));
        h.tick();
        assert!(h.info(id).retired);
        assert_eq!(count(&h, store, "SELECT COUNT(*) FROM schedules"), 0);
        let h = restart(h, path, 0.0);
        assert_eq!(
            h.engine.begin(h.wiz).schedule_info(id).unwrap_err().code(),
            "E_INVARG"
        );
    }
}

on_both_stores! {
    fn catchup_skip_after_downtime_drops_the_missed_points(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new());
        let h = restart(h, path, 45.0); // points at +10 .. +40 passed while down
        h.tick();
        assert_eq!(h.fired(), 0);
        let info = h.info(id);
        assert_eq!(info.missed_count, 4);
        assert!(approx(info.next_run, common::t0() + 50.0));
    }
}

on_both_stores! {
    fn catchup_once_after_downtime_fires_one_late_firing(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new().catchup(Catchup::Once));
        let h = restart(h, path, 45.0);
        h.tick();
        assert_eq!(h.fired(), 1);
        assert_eq!(h.info(id).missed_count, 3);
    }
}

on_both_stores! {
    fn catchup_all_after_downtime_fires_each_missed_point_in_order(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        h.every(10.0, Options::new().catchup(Catchup::All));
        let h = restart(h, path, 45.0);
        for _ in 0..4 {
            h.tick();
            h.finish_all();
        }
        let nominals: Vec<f64> = (0..4).map(|i| h.nominal(i) - common::t0()).collect();
        assert_eq!(nominals, vec![10.0, 20.0, 30.0, 40.0]);
    }
}

on_both_stores! {
    fn catchup_skip_is_applied_at_open_so_info_is_true_before_the_first_tick(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new());
        let h = restart(h, path, 45.0); // points at +10 .. +40 passed while down
        let info = h.info(id);
        assert_eq!(info.missed_count, 4, "counted at open, no tick yet");
        assert!(approx(info.next_run, common::t0() + 50.0));
        assert_eq!(
            h.engine.next_deadline_unix_nanos(),
            Some((common::t0() + 50.0) as u64 * 1_000_000_000)
        );
        h.tick();
        assert_eq!(
            (h.fired(), h.info(id).missed_count),
            (0, 4),
            "the tick adds nothing"
        );
        // The first group commit writes what open decided.
        assert_eq!(count(&h, store, "SELECT missed_count FROM schedules"), 4);
    }
}

on_both_stores! {
    fn catchup_once_is_applied_at_open_and_the_kept_point_fires_at_the_first_tick(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new().catchup(Catchup::Once));
        let h = restart(h, path, 45.0);
        let info = h.info(id);
        assert_eq!(info.missed_count, 3);
        assert!(approx(info.next_run, common::t0() + 40.0), "due now");
        h.tick();
        assert_eq!(h.fired(), 1);
        assert!(approx(h.nominal(0), common::t0() + 40.0));
        let info = h.info(id);
        assert_eq!(info.missed_count, 3);
        assert!(approx(info.next_run, common::t0() + 50.0));
    }
}

on_both_stores! {
    fn one_passed_point_at_open_is_an_ordinary_late_firing_not_a_catch_up(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new());
        let h = restart(h, path, 15.0); // only +10 passed
        let info = h.info(id);
        assert_eq!(info.missed_count, 0);
        assert!(approx(info.next_run, common::t0() + 10.0));
        h.tick();
        assert_eq!(h.fired(), 1);
    }
}

on_both_stores! {
    fn an_in_flight_firing_is_handed_back_and_a_reattached_one_still_counts_as_running(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new());
        h.after(10.0);
        let run = h.last_run();
        let h = restart(h, path, 3.0);
        let interrupted = h.engine.interrupted();
        assert_eq!(interrupted.len(), 1);
        assert_eq!((interrupted[0].schedule, interrupted[0].run), (id, run));
        assert!(h.engine.reattach(run));
        assert!(h.engine.interrupted().is_empty());
        assert_eq!(h.info(id).running_task, Some(run));
        // The deadline it was serving is not fired again; overlap applies to it as before.
        h.after(7.0);
        assert_eq!(h.fired(), 0);
        assert_eq!(h.info(id).overlap_count, 1);
        assert!(h.engine.report(run, Outcome::Returned(Value::Int(0))));
        h.after(10.0);
        assert_eq!(h.fired(), 1);
    }
}

on_both_stores! {
    fn an_abandoned_in_flight_firing_is_a_fault_interrupted_by_restart(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.at(0.0, Options::new());
        h.tick();
        let run = h.last_run();
        let h = restart(h, path, 1.0);
        assert!(h.engine.abandon(run));
        let info = h.info(id);
        let fault = info.last_fault.unwrap();
        assert_eq!(fault.kind, FaultKind::Interrupted);
        assert_eq!(fault.value, Value::from("interrupted by restart"));
        assert_eq!(
            info.retire_reason,
            Some(RetireReason::Completed),
            "a one-shot then retires"
        );
    }
}

on_both_stores! {
    fn a_restored_firing_of_an_interrupted_recurring_schedule_is_armed_for_the_next_point_with_catchup(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new().catchup(Catchup::Once));
        h.after(10.0); // serving +10; +20 armed
        let run = h.last_run();
        let h = restart(h, path, 35.0); // now +45: +20, +30, +40 passed while down
        h.engine.reattach(run);
        h.tick();
        assert_eq!(h.fired(), 0, "catch-up waits for the restored firing");
        assert_eq!(h.info(id).missed_count, 2);
        h.engine.report(run, Outcome::Returned(Value::Int(0)));
        h.tick();
        assert_eq!(h.fired(), 1);
        assert!(approx(h.nominal(0), common::t0() + 40.0));
    }
}

on_both_stores! {
    /// docs/schedules.md §7.9, §11.5: the reopened engine numbers its runs above the restored
    /// ones, even after the host abandoned them (their schedule retired at the first abandon),
    /// so no id names two runs; when that retired entry expires, the new runs are still settled
    /// by their outcomes.
    fn a_run_started_after_a_restart_is_settled_by_its_outcome(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let concurrent = Options::new().overlap(Overlap::Concurrent).max_faults(1);
        let retiring = h.every(1.0, concurrent.clone());
        h.after(1.0);
        h.after(1.0);
        let h = restart(h, path, 0.5);
        let mut restored: Vec<RunId> = h.engine.interrupted().iter().map(|f| f.run).collect();
        restored.sort_unstable();
        assert_eq!(restored.len(), 2);
        for &run in &restored {
            assert!(h.engine.abandon(run));
        }
        assert_eq!(h.info(retiring).retire_reason, Some(RetireReason::MaxFaults));
        assert_eq!(h.info(retiring).running_task, None, "both abandoned runs are over");

        let id = h.every(1.0, concurrent);
        h.after(1.0);
        h.after(1.0);
        let runs: Vec<RunId> = h.started().iter().map(|(run, _)| *run).collect();
        let above: Vec<RunId> = restored.iter().map(|r| RunId(r.0 + 2)).collect();
        assert_eq!(runs, above, "the new runs count on above the restored ones");
        h.after(60.0);
        assert!(!h.valid(retiring));
        for run in runs {
            assert!(h.finish(run, Value::Int(0)), "run {run:?} is awaited");
        }
        assert_eq!(h.info(id).consecutive_faults, 0);
    }
}

on_both_stores! {
    fn the_result_of_a_restored_firing_whose_schedule_was_stopped_is_ignored(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new());
        h.after(10.0);
        let run = h.last_run();
        let h = restart(h, path, 1.0);
        let mut txn = h.engine.begin(h.prog);
        txn.schedule_stop(id).unwrap();
        txn.commit().unwrap();
        assert!(!h.engine.report(run, Outcome::Returned(Value::Int(0))));
    }
}

#[test]
fn an_operator_can_read_the_store_with_the_sqlite3_shell_while_the_engine_runs() {
    let (_dir, path) = db();
    let h = Host::open(&path, ManualClock::new());
    let mut txn = h.engine.begin(h.prog);
    txn.schedule_every(
        h.room,
        "tick",
        60.0,
        vec![Value::from("hello")],
        Options::new(),
    )
    .unwrap();
    txn.commit().unwrap();
    h.after(60.0); // a firing is in flight and the engine holds the file open
    // The tick's cadence update is written behind it (docs/schedules.md §11.35).
    h.engine.wait_for_writes().unwrap();
    let out = Command::new("sqlite3")
        .arg(&path)
        .arg(
            "SELECT verb, run_count, json_extract(args, '$[0].Str'), \
             (SELECT MAX(version) FROM schema_migrations) FROM schedules;",
        )
        .output()
        .expect("the sqlite3 shell must be installed (.ci/run installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "tick|1|hello|12"
    );
    // The engine keeps writing while the shell reads.
    h.finish_all();
    h.after(60.0);
    h.engine.wait_for_writes().unwrap();
    assert_eq!(sql_count(&path, "SELECT run_count FROM schedules"), 2);
}

#[test]
fn sqlite_only_the_file_uses_wal_and_records_its_schema_version() {
    let (_dir, path) = db();
    let _h = Host::open(&path, ManualClock::new());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let version: i64 = conn
        .query_row("SELECT MAX(version) FROM schema_migrations", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(version, 12);
}

/// Rows in the database file itself, ignoring the WAL (`immutable` reads the main file only).
fn rows_in_main_file(path: &Path) -> i64 {
    let uri = format!("file:{}?immutable=1", path.display());
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI;
    let conn = rusqlite::Connection::open_with_flags(uri, flags).unwrap();
    conn.query_row("SELECT COUNT(*) FROM schedules", [], |r| r.get(0))
        .unwrap_or(0) // before the first checkpoint the main file may not have the table yet
}

/// docs/schedules.md §11.34. A real thread on a real file: bounded in time and count, asserting
/// the outcome (the row reached the database file while the engine is open), never how soon.
#[test]
fn sqlite_only_commits_reach_the_database_file_through_the_checkpoint_thread_while_open() {
    let (_dir, path) = db();
    let h = Host::open(&path, ManualClock::new());
    // One small commit: SQLite's own automatic checkpoint would wait for 1,000 WAL pages, so
    // only the store's thread can bring this row into the main file before the engine closes.
    h.every(10.0, Options::new());
    let mut polls = 0;
    while rows_in_main_file(&path) < 1 {
        polls += 1;
        assert!(polls < 1_000, "no checkpoint reached the file in 10 s");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // The engine keeps the row and runs on.
    assert_eq!(h.engine.begin(h.prog).schedules(None).unwrap().len(), 1);
}

on_both_stores! {
    fn a_store_written_by_a_newer_schema_is_refused_not_misread(store) {
        let path = store.path();
        drop(Host::open(path, ManualClock::new()));
        // The stores version their schemas apart: whatever this build wrote is what it supports.
        let supported = store.count("SELECT MAX(version) FROM schema_migrations");
        let found = supported + 1;
        store.execute(&format!(
            "INSERT INTO schema_migrations (version, description) VALUES ({found}, 'from the future')"
        ));
        let world = tickstep_schedules::testkit::TestWorld::new();
        let result = tickstep_schedules::Schedules::open(
            path,
            ManualClock::new(),
            world,
            tickstep_schedules::testkit::TestRunner::new(),
            common::config(),
        );
        assert!(matches!(
            result.err(),
            Some(Error::SchemaTooNew { found: f, supported: s }) if f == found && s == supported
        ));
    }
}

#[test]
fn a_commit_the_store_refuses_applies_nothing_sqlite_only_fault_injected_by_a_sqlite_trigger() {
    let (_dir, path) = db();
    let h = Host::open(&path, ManualClock::new());
    let kept = h.every(1.0, Options::new());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER no_inserts BEFORE INSERT ON schedules BEGIN SELECT RAISE(ABORT, 'disk says no'); END;",
    )
    .unwrap();
    let mut txn = h.engine.begin(h.prog);
    let lost = txn
        .schedule_every(h.room, "tick", 1.0, vec![], Options::new())
        .unwrap();
    txn.schedule_stop(kept).unwrap();
    let err = txn.commit().unwrap_err();
    assert!(matches!(err, Error::Store { .. }), "{err}");
    assert!(
        tickstep_kernel::ErrorChain(&err)
            .to_string()
            .contains("disk says no"),
        "{err}"
    );
    assert!(!h.valid(lost), "the creation never happened");
    assert!(h.valid(kept), "nor did the stop");
    conn.execute_batch("DROP TRIGGER no_inserts").unwrap();
    assert!(
        h.every(1.0, Options::new()) > lost,
        "the burnt id is not reused"
    );
}

/// A host on a store at `path` with one schedule every second, and a second connection whose
/// trigger makes every cadence update fail ("busy") until it drops `no_updates`.
fn one_schedule_whose_updates_fail(path: &Path) -> (Host, rusqlite::Connection) {
    // As on real time: the tick hands its updates to the writer thread (docs/schedules.md
    // §11.42).
    let clock = ManualClock::new();
    let h = Host::open_with(path, clock.clone(), common::RealTime(clock));
    h.every(1.0, Options::new());
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER no_updates BEFORE UPDATE ON schedules BEGIN SELECT RAISE(ABORT, 'busy'); END;",
    )
    .unwrap();
    (h, conn)
}

/// docs/schedules.md §11.35: a cadence write that fails stays queued on the writer thread.
#[test]
fn a_failed_cadence_write_stays_queued_and_a_flush_reports_it_sqlite_only_postgres_alike() {
    let (_dir, path) = db();
    let (h, conn) = one_schedule_whose_updates_fail(&path);
    h.advance(1.0);
    let report = h
        .engine
        .tick()
        .expect("the tick hands its updates over and goes on");
    assert_eq!(report.starts_waiting, 1);
    assert_eq!(
        h.fired(),
        0,
        "the firing waits for its update (docs/schedules.md §11.42)"
    );
    let err = h.engine.wait_for_writes().unwrap_err();
    assert!(matches!(err, Error::Store { .. }), "{err}");
    assert!(
        tickstep_kernel::ErrorChain(&err)
            .to_string()
            .contains("busy"),
        "{err}"
    );
    assert_eq!(sql_count(&path, "SELECT run_count FROM schedules"), 0);
    assert_eq!(h.tick().started, 0, "nor while its write fails");
    conn.execute_batch("DROP TRIGGER no_updates").unwrap();
    h.engine
        .wait_for_writes()
        .expect("the queued update is written now");
    assert_eq!(sql_count(&path, "SELECT run_count FROM schedules"), 1);
    assert_eq!(h.tick().started, 1, "and the firing starts");
}

/// docs/schedules.md §9.11: reading a schedule's history never waits for the writer thread. A
/// settled firing whose record the writer cannot write yet (its batch fails and stays queued)
/// is in `schedule_info` at once, from the batch, and in the file once the write goes through.
#[test]
fn a_history_read_lays_the_unwritten_records_over_the_file_instead_of_waiting_sqlite_only() {
    let (_dir, path) = db();
    let clock = ManualClock::new();
    let h = Host::open_with(&path, clock.clone(), common::RealTime(clock));
    let id = h.every(1.0, Options::new());
    h.advance(1.0);
    h.tick(); // plans the firing and hands its update over
    h.engine.wait_for_writes().unwrap();
    assert_eq!(h.tick().started, 1);
    h.advance(0.25);
    h.finish(h.last_run(), Value::Int(1));
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER no_updates BEFORE UPDATE ON schedules BEGIN SELECT RAISE(ABORT, 'busy'); END;",
    )
    .unwrap();
    h.tick(); // hands the outcome and its history record over; the write fails and stays queued
    let history = h.info(id).history;
    assert_eq!(history.len(), 1, "the queued record is shown: {history:?}");
    assert!(common::approx(history[0].ended - history[0].started, 0.25));
    assert_eq!(
        sql_count(&path, "SELECT COUNT(*) FROM firing_history"),
        0,
        "and it is not in the file yet"
    );
    conn.execute_batch("DROP TRIGGER no_updates").unwrap();
    h.engine.wait_for_writes().unwrap();
    assert_eq!(sql_count(&path, "SELECT COUNT(*) FROM firing_history"), 1);
    assert_eq!(
        h.info(id).history,
        history,
        "the same record, now from the file"
    );
}

/// docs/schedules.md §11.35: a durable creation is never overtaken by an older tick's cadence
/// update still queued, and closing the store writes what is queued.
#[test]
fn queued_cadence_updates_are_written_before_a_creation_and_when_the_store_closes_sqlite_only() {
    let (_dir, path) = db();
    let (h, conn) = one_schedule_whose_updates_fail(&path);
    h.advance(1.0);
    h.tick(); // its update is queued, and fails
    let mut txn = h.engine.begin(h.prog);
    txn.schedule_every(h.room, "tick", 5.0, vec![], Options::new())
        .unwrap();
    let err = txn.commit().unwrap_err();
    assert!(
        tickstep_kernel::ErrorChain(&err)
            .to_string()
            .contains("busy"),
        "a creation waits for the queue, and reports what stops it: {err}"
    );
    assert_eq!(sql_count(&path, "SELECT COUNT(*) FROM schedules"), 1);
    conn.execute_batch("DROP TRIGGER no_updates").unwrap();
    h.every(5.0, Options::new());
    assert_eq!(sql_count(&path, "SELECT COUNT(*) FROM schedules"), 2);
    assert_eq!(
        sql_count(&path, "SELECT COUNT(*) FROM schedules WHERE run_count = 1"),
        1
    );
    assert_eq!(h.tick().started, 1, "its update written, the firing starts");
    h.finish_all();
    h.advance(1.0);
    h.tick(); // queued again; nobody waits for it
    drop(h);
    assert_eq!(
        sql_count(&path, "SELECT MAX(run_count) FROM schedules"),
        2,
        "closing the store wrote the queued update"
    );
}

on_both_stores! {
    fn anonymous_object_references_are_still_enumerated_after_a_restart(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let anon = h.world.add_anonymous(h.prog);
        let mut txn = h.engine.begin(h.prog);
        txn.schedule_every(h.room, "tick", 5.0, vec![Value::Obj(anon)], Options::new())
            .unwrap();
        txn.commit().unwrap();
        let world = h.world.clone();
        let wall = h.clock.unix_nanos();
        drop(h);
        let engine = tickstep_schedules::Schedules::open(
            path,
            ManualClock::starting_at_unix_nanos(wall),
            world,
            tickstep_schedules::testkit::TestRunner::new(),
            common::config(),
        )
        .unwrap();
        assert_eq!(engine.anonymous_references(), vec![anon]);
    }
}

on_both_stores! {
    fn a_clean_shutdown_saves_outcomes_reported_since_the_last_tick(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(10.0, Options::new());
        h.after(10.0);
        h.fault(h.last_run()); // reported, no tick after it
        let h = restart(h, path, 0.0);
        assert!(
            h.engine.interrupted().is_empty(),
            "the outcome was saved on drop"
        );
        let info = h.info(id);
        assert_eq!((info.fault_count, info.running_task), (1, None));
    }
}

on_both_stores! {
    fn values_at_the_deepest_allowed_nesting_survive_a_restart(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let deep = (0..tickstep_schedules::MAX_VALUE_DEPTH).fold(Value::Int(7), |inner, i| {
            if i % 2 == 0 {
                Value::Map(vec![(Value::from("k"), inner)])
            } else {
                Value::List(vec![inner])
            }
        });
        let mut txn = h.engine.begin(h.prog);
        let id = txn
            .schedule_every(
                h.room,
                "tick",
                1.0,
                vec![deep.clone()],
                Options::new().state(deep.clone()),
            )
            .unwrap();
        txn.commit().unwrap();
        let h = restart(h, path, 0.0);
        let info = h.info(id);
        assert_eq!((info.args, info.state), (vec![deep.clone()], Some(deep)));
    }
}

on_both_stores! {
    fn a_fault_value_the_store_cannot_hold_is_kept_as_text_and_the_store_stays_readable(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(1.0, Options::new());
        h.after(1.0);
        let nan = Value::List(vec![Value::Float(f64::NAN)]);
        h.runner.finish(
            &h.engine,
            h.last_run(),
            Outcome::Fault {
                kind: FaultKind::Error,
                value: nan,
            },
        );
        h.tick();
        let h = restart(h, path, 0.0);
        let fault = h.info(id).last_fault.unwrap();
        assert_eq!(fault.value, Value::from("{NaN}"));
    }
}

on_both_stores! {
    fn an_in_flight_firing_of_a_non_persistent_schedule_is_unknown_after_restart(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        h.every(1.0, Options::new().persist(false));
        h.after(1.0);
        let run = h.last_run();
        let h = restart(h, path, 1.0);
        assert!(h.engine.interrupted().is_empty());
        assert!(
            !h.engine.report(run, Outcome::Returned(Value::Int(0))),
            "its result is ignored"
        );
    }
}

fn open_at(path: &Path) -> Result<tickstep_schedules::Schedules, Error> {
    tickstep_schedules::Schedules::open(
        path,
        ManualClock::new(),
        tickstep_schedules::testkit::TestWorld::new(),
        tickstep_schedules::testkit::TestRunner::new(),
        common::config(),
    )
}

#[test]
fn opening_a_store_where_no_file_can_be_made_is_a_store_error() {
    let (_dir, path) = db();
    let err = open_at(&path.join("no/such/dir/s.db")).err().unwrap();
    assert!(matches!(err, Error::Store { .. }), "{err}");
    assert_eq!(err.code(), "E_QUOTA");
}

#[test]
fn opening_a_file_that_is_not_a_database_is_refused_as_not_a_store_and_left_alone() {
    let (_dir, path) = db();
    let text = b"this is not an SQLite file, it is a shopping list";
    std::fs::write(&path, text).unwrap();
    let err = open_at(&path).err().unwrap();
    assert!(matches!(err, Error::NotAStore { .. }), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), text);
}

on_both_stores! {
    fn a_row_an_operator_corrupted_is_refused_on_open_naming_the_column(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        h.every(1.0, Options::new());
        drop(h);
        store.execute("UPDATE schedules SET args = 'not json'");
        let err = open_at(path).err().unwrap();
        let report = tickstep_kernel::ErrorChain(&err).to_string();
        assert!(report.contains("bad args"), "{report}");
    }
}

on_both_stores! {
    fn elapsed_spans_a_restart_with_the_real_gap(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        h.every(10.0, Options::new());
        h.after(10.0);
        h.finish_all();
        let h = restart(h, path, 25.0); // down from +10 to +35
        h.tick(); // the driver ticks on open: skip drops +20 and +30
        h.after(5.0); // +40
        let elapsed = h.started()[0].1.elapsed.unwrap();
        assert!(approx(elapsed, 30.0), "{elapsed}");
    }
}
