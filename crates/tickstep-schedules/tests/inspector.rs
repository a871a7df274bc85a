//! The operator's inspector: read-only opening, schema refusal, rows as the engine committed
//! them, and the durable operator stop — on both stores (a `SQLite` file in a temp dir, a
//! `PostgreSQL` database on the throwaway server). Tests about files are `sqlite_only_`, tests
//! about a server `postgres_only_`.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::Host;
use common::stores::{Kind, Store};
use tickstep_kernel::clock::ManualClock;
use tickstep_schedules::{
    Error, FaultKind, InFlight, Inspector, Options, ScheduleId, ScheduleKind, StoredSchedule, Value,
};

fn db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("schedules.db");
    (dir, path)
}

/// Every file in `dir` with a hash of its bytes, its length and its modification time.
fn snapshot(dir: &Path) -> Vec<(PathBuf, u64, usize, std::time::SystemTime)> {
    let mut files: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let modified = fs::metadata(&path).unwrap().modified().unwrap();
            let bytes = fs::read(&path).unwrap();
            let mut hasher = std::hash::DefaultHasher::new();
            std::hash::Hash::hash(&bytes, &mut hasher);
            let hash = std::hash::Hasher::finish(&hasher);
            (path, hash, bytes.len(), modified)
        })
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}

fn set_schema_version(store: &Store, version: i64) {
    store.execute("DELETE FROM schema_migrations");
    if version > 0 {
        store.execute(&format!(
            "INSERT INTO schema_migrations (version, description) VALUES ({version}, 'set by a test')"
        ));
    }
}

/// `stored` is what `h`'s engine reports for the same schedule, field by field.
#[allow(clippy::float_cmp)] // both sides are the same conversion of the same stored integer
fn assert_matches_engine(h: &Host, stored: &StoredSchedule) {
    let info = h.info(stored.id);
    assert_eq!(stored.kind, info.kind);
    assert_eq!(stored.target, info.target);
    assert_eq!(stored.verb, info.verb);
    assert_eq!(stored.args, info.args);
    assert_eq!(stored.state, info.state);
    assert_eq!(stored.owner, info.owner);
    assert_eq!(stored.player, info.player);
    assert_eq!(stored.interval_clamped, info.interval_clamped);
    assert_eq!(stored.jitter_ns as f64 / 1e9, info.jitter);
    assert_eq!(stored.max_faults, info.max_faults);
    assert_eq!(stored.catchup, info.catchup);
    assert_eq!(stored.overlap, info.overlap);
    assert_eq!(stored.adaptive, info.adaptive);
    assert_eq!(stored.pass_elapsed, info.pass_elapsed);
    assert_eq!(stored.created_unix_nanos as f64 / 1e9, info.created_at);
    let next = if stored.armed {
        stored.fire_at_unix_nanos
    } else {
        0
    };
    assert_eq!(next as f64 / 1e9, info.next_run);
    assert_eq!(stored.last_run_unix_nanos as f64 / 1e9, info.last_run);
    assert_eq!(stored.run_count, info.run_count);
    assert_eq!(stored.fault_count, info.fault_count);
    assert_eq!(stored.consecutive_faults, info.consecutive_faults);
    assert_eq!(stored.missed_count, info.missed_count);
    assert_eq!(stored.overlap_count, info.overlap_count);
    assert_eq!(stored.last_duration_ns, info.last_duration_ns);
    assert_eq!(stored.last_fault, info.last_fault);
    assert_eq!(stored.running.first().map(|r| r.run), info.running_task);
}

#[test]
fn sqlite_only_opening_a_missing_file_is_an_error_and_creates_nothing() {
    let (dir, path) = db();
    assert!(matches!(Inspector::open(&path), Err(Error::Store { .. })));
    assert!(matches!(
        Inspector::stop(&path, ScheduleId::from_raw(1)),
        Err(Error::Store { .. })
    ));
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn sqlite_only_reading_a_store_leaves_the_file_unchanged_and_adds_only_empty_wal_sidecars() {
    let (dir, path) = db();
    let h = Host::open(&path, ManualClock::new());
    h.every(10.0, Options::new());
    h.after(10.0);
    h.finish_all();
    drop(h);
    let before = snapshot(dir.path());
    assert_eq!(
        before.len(),
        1,
        "a clean shutdown leaves the store file alone"
    );
    let inspector = Inspector::open(&path).unwrap();
    assert_eq!(inspector.list().unwrap().len(), 1);
    assert_eq!(inspector.ids().unwrap().len(), 1);
    drop(inspector);
    let after = snapshot(dir.path());
    assert_eq!(
        after[0], before[0],
        "the store file is byte-for-byte untouched"
    );
    // What any WAL reader (the sqlite3 shell too) creates: the shared-memory index and an empty
    // log, which the next engine uses as its own.
    for (file, _, len, _) in &after[1..] {
        let name = file.file_name().unwrap().to_str().unwrap();
        assert!(
            name == "schedules.db-shm" || (name == "schedules.db-wal" && *len == 0),
            "{name} ({len} bytes)"
        );
    }
    let reopened = Host::open(&path, ManualClock::new());
    assert_eq!(
        reopened
            .engine
            .begin(reopened.wiz)
            .schedules(None)
            .unwrap()
            .len(),
        1
    );
}

on_both_stores! {
    fn a_store_written_by_a_newer_schema_is_refused_naming_both_versions(store) {
        drop(Host::open(store.path(), ManualClock::new()));
        let supported = store.count("SELECT MAX(version) FROM schema_migrations");
        let newer = supported + 1;
        set_schema_version(store, newer);
        let before = (store.kind() == Kind::Sqlite)
            .then(|| snapshot(store.path().parent().unwrap()));
        let err = Inspector::open(store.path()).unwrap_err();
        assert!(
            matches!(err, Error::SchemaTooNew { found, supported: s } if found == newer && s == supported),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(
            text.contains(&format!("version {newer}")) && text.contains(&format!("up to {supported}")),
            "{text}"
        );
        assert!(matches!(
            Inspector::stop(store.path(), ScheduleId::from_raw(1)),
            Err(Error::SchemaTooNew { found, .. }) if found == newer
        ));
        if let Some(before) = before {
            assert_eq!(snapshot(store.path().parent().unwrap()), before, "refused without writing");
        }
        assert_eq!(store.count("SELECT COUNT(*) FROM schema_migrations"), 1, "not migrated");
    }
}

#[test]
fn sqlite_only_a_file_that_is_not_a_store_is_refused_naming_the_file() {
    let (dir, path) = db();
    fs::write(&path, b"shopping list").unwrap();
    let err = Inspector::open(&path).unwrap_err();
    assert!(matches!(err, Error::NotAStore { .. }), "{err:?}");
    assert!(
        err.to_string().contains(&format!(
            "{} is not a tickstep schedule store",
            path.display()
        )),
        "{err}"
    );
    assert_eq!(err.code(), "E_INVARG");
    assert!(matches!(
        Inspector::stop(&path, ScheduleId::from_raw(1)),
        Err(Error::NotAStore { .. })
    ));
    assert_eq!(fs::read(&path).unwrap(), b"shopping list");
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn sqlite_only_an_sqlite_file_without_the_schema_is_not_a_store_and_is_not_migrated() {
    let (_dir, path) = db();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE notes (text TEXT)")
        .unwrap();
    drop(conn);
    assert!(matches!(
        Inspector::open(&path),
        Err(Error::NotAStore { .. })
    ));
    assert!(matches!(
        Inspector::stop(&path, ScheduleId::from_raw(1)),
        Err(Error::NotAStore { .. })
    ));
    let conn = rusqlite::Connection::open(&path).unwrap();
    let tables: i64 = conn
        .query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get(0))
        .unwrap();
    assert_eq!(tables, 1, "nothing was created in it");
}

#[test]
fn postgres_only_a_version_3_database_is_read_by_the_inspector_without_limits_and_not_migrated() {
    let url = pg_or_skip!("inspect_version_3");
    let store = Store::postgres(url.clone());
    let h = Host::open(store.path(), ManualClock::new());
    let id = h.every(10.0, Options::new().max_faults(4));
    h.engine.wait_for_writes().unwrap();
    drop(h);
    // What a version-3 build left behind: no limit or key columns, no version-4 or 5 migration.
    store.execute(
        "DROP TABLE tickstep_firing_history; \
         ALTER TABLE tickstep_operator_stops DROP COLUMN action; \
         ALTER TABLE tickstep_schedules DROP COLUMN time_limit_ns, DROP COLUMN tick_limit, \
         DROP COLUMN key, DROP COLUMN ops, DROP COLUMN history; \
         DELETE FROM schema_migrations WHERE version >= 4",
    );

    let inspector = Inspector::open(&url).unwrap();
    let stored = inspector.get(id).unwrap().unwrap();
    assert_eq!(
        (stored.time_limit, stored.tick_limit, stored.max_faults),
        (None, None, 4)
    );
    assert_eq!(inspector.list().unwrap().len(), 1);
    assert_eq!(store.count("SELECT MAX(version) FROM schema_migrations"), 3);
}

#[test]
fn postgres_only_a_database_without_the_schema_is_not_a_store_named_without_its_password() {
    let url = pg_or_skip!("inspect_foreign_database");
    let mut app = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    app.batch_execute("CREATE TABLE notes (text TEXT)").unwrap();
    // The same server and database, with a password the server ignores (trust) but the
    // message must not show.
    let with_password = url.replacen("postgres@", "postgres:hunter2@", 1);
    let err = Inspector::open(&with_password).unwrap_err();
    assert!(matches!(err, Error::NotAStore { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("tickstep_schema_migrations"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    assert!(matches!(
        Inspector::stop(&url, ScheduleId::from_raw(1)),
        Err(Error::NotAStore { .. })
    ));
    let tables: i64 = app
        .query_one(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(tables, 1, "nothing was created in it");
}

#[test]
fn postgres_only_an_unreachable_server_is_a_database_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://postgres@127.0.0.1:{port}/db");
    assert!(matches!(Inspector::open(&url), Err(Error::Database { .. })));
    assert!(matches!(
        Inspector::stop(&url, ScheduleId::from_raw(1)),
        Err(Error::Database { .. })
    ));
}

on_both_stores! {
    fn a_store_of_an_older_schema_is_refused_not_migrated(store) {
        drop(Host::open(store.path(), ManualClock::new()));
        set_schema_version(store, 0);
        let err = Inspector::open(store.path()).unwrap_err();
        assert!(err.to_string().contains("schema version 0"), "{err}");
        assert!(matches!(
            Inspector::stop(store.path(), ScheduleId::from_raw(1)),
            Err(Error::NotAStore { .. })
        ));
        assert_eq!(store.count("SELECT COUNT(*) FROM schema_migrations"), 0, "not migrated");
    }
}

on_both_stores! {
fn list_and_get_match_what_the_engine_committed_while_it_runs(store) {
    let path = store.path();
    let h = Host::open(path, ManualClock::new());
    let mut txn = h.engine.begin(h.prog);
    let busy = txn
        .schedule_every(
            h.room,
            "tick",
            10.0,
            common::nested_args(),
            common::unusual_options(h.prog)
                .pass_elapsed(false),
        )
        .unwrap();
    let once = txn
        .schedule_at(h.room, "tick", h.now() + 100.0, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();

    // Two firings of `busy`: the first faults, the second is still running at the commit.
    h.after(10.25);
    h.fault(h.last_run());
    h.after(10.0);
    let running = h.last_run();
    h.engine.wait_for_writes().unwrap(); // PostgreSQL writes ticks behind

    let inspector = Inspector::open(path).unwrap();
    let all = inspector.list().unwrap();
    assert_eq!(
        all.iter().map(|s| s.id).collect::<Vec<_>>(),
        vec![busy, once]
    );
    assert_eq!(inspector.ids().unwrap(), vec![busy, once]);
    for stored in &all {
        assert_matches_engine(&h, stored);
        assert_eq!(inspector.get(stored.id).unwrap().as_ref(), Some(stored));
    }
    let stored = &all[0];
    assert_eq!(stored.kind, ScheduleKind::Every);
    assert_eq!(stored.interval_ns, 10_000_000_000);
    assert_eq!(stored.run_count, 2);
    assert_eq!(stored.fault_count, 1);
    assert_eq!(
        stored.last_fault.as_ref().map(|f| f.kind),
        Some(FaultKind::Error)
    );
    assert_eq!(
        stored.running,
        vec![InFlight {
            schedule: busy,
            run: running,
            nominal_unix_nanos: h.started().last().unwrap().1.nominal_unix_nanos,
        }]
    );
    assert_eq!(all[1].kind, ScheduleKind::At);
    assert!(all[1].running.is_empty() && all[1].last_fault.is_none());
}
}

on_both_stores! {
fn a_non_persistent_or_unknown_schedule_is_not_in_the_store(store) {
    let path = store.path();
    let h = Host::open(path, ManualClock::new());
    let fleeting = h.every(10.0, Options::new().persist(false));
    let inspector = Inspector::open(path).unwrap();
    assert_eq!(inspector.get(fleeting).unwrap(), None);
    assert_eq!(inspector.get(ScheduleId::from_raw(u64::MAX)).unwrap(), None);
    assert!(inspector.list().unwrap().is_empty());
}
}

on_both_stores! {
fn an_operator_stop_removes_the_schedule_durably_and_a_reopened_engine_does_not_load_it(store) {
    let path = store.path();
    let h = Host::open(path, ManualClock::new());
    let stopped = h.every(10.0, Options::new());
    let kept = h.every(10.0, Options::new());

    assert!(Inspector::stop(path, stopped).unwrap());
    assert!(
        !Inspector::stop(path, stopped).unwrap(),
        "a second stop finds nothing"
    );
    assert!(!Inspector::stop(path, ScheduleId::from_raw(999)).unwrap());
    // The running engine keeps its in-memory copy until it notices.
    assert!(h.valid(stopped));
    assert_eq!(Inspector::open(path).unwrap().ids().unwrap(), vec![kept]);

    // Its later group commits (cadence updates) and clean shutdown do not bring the row back.
    h.after(10.0);
    h.finish_all();
    h.engine.flush().unwrap();
    assert_eq!(Inspector::open(path).unwrap().ids().unwrap(), vec![kept]);
    let clock = h.clock.clone();
    drop(h);
    let reopened = Host::open(path, clock);
    assert!(!reopened.valid(stopped));
    assert!(reopened.valid(kept));
}
}

on_both_stores! {
fn an_operator_stop_leaves_the_other_schedules_loadable(store) {
    let path = store.path();
    let h = Host::open(path, ManualClock::new());
    let stopped = h.every(10.0, Options::new());
    let kept = h.every(10.0, Options::new().state(Value::Int(4)));
    let clock = h.clock.clone();
    drop(h);
    assert!(Inspector::stop(path, stopped).unwrap());
    let reopened = Host::open(path, clock);
    assert!(!reopened.valid(stopped));
    assert!(reopened.valid(kept));
    assert_eq!(reopened.info(kept).state, Some(Value::Int(4)));
}
}
