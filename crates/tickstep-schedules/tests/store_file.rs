//! The store's file and its writes: operator access with the `sqlite3` shell, WAL and the schema
//! version, the checkpoint thread, refused and failed writes and the write queue, and what
//! opening refuses. Restart and durability are `store.rs`. Real files in temp dirs.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Host;
use tickstep_kernel::clock::ManualClock;
use tickstep_schedules::{Error, Options, Value};

fn db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("schedules.db");
    (dir, path)
}

fn sql_count(path: &Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
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
