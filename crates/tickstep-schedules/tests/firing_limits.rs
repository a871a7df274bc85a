//! Per-firing limits (`seconds`, `ticks`) are part of the schedule: checked at creation, stored
//! with it in both stores, handed to the runner with each firing and shown by `schedule_info`,
//! before and after a restart (docs/schedules.md §5.10, §11.32). The SQLite store's version-3
//! migration adds them to a version-2 file, and the `Inspector` reads files of versions 1 to 3.

mod common;

use std::num::NonZeroU64;
use std::path::Path;
use std::time::Duration;

use common::Host;
use tickstep_kernel::clock::{Clock, ManualClock};
use tickstep_schedules::{Inspector, Options, ScheduleId, Value};

/// Drops `h` and opens the same store again, at the same wall time.
fn reopen(h: Host, location: &Path) -> Host {
    let wall = h.clock.unix_nanos();
    h.engine.flush().unwrap();
    drop(h);
    Host::open(location, ManualClock::starting_at_unix_nanos(wall))
}

fn map(pairs: Vec<(&str, Value)>) -> Options {
    Options::from_map(&Value::Map(
        pairs
            .into_iter()
            .map(|(k, v)| (Value::from(k), v))
            .collect(),
    ))
    .unwrap()
}

/// The limits the runner was handed with the last firing of `id`.
fn handed(h: &Host, id: ScheduleId) -> (Option<Duration>, Option<u64>) {
    let started = h.started();
    let (_, firing) = started
        .iter()
        .rev()
        .find(|(_, f)| f.schedule == id)
        .expect("a firing of the schedule started");
    (firing.time_limit, firing.tick_limit.map(NonZeroU64::get))
}

on_both_stores! {
    fn limits_set_at_creation_survive_a_restart_and_reach_the_runner(store) {
        let h = Host::on(store);
        let both = h.every(10.0, map(vec![("seconds", Value::Float(1.5)), ("ticks", Value::Int(7))]));
        let timed = h.every(10.0, Options::new().time_limit(Duration::from_millis(250)));
        let none = h.every(10.0, Options::new());
        let h = reopen(h, store.path());
        let info = h.info(both);
        assert_eq!((info.time_limit, info.tick_limit), (Some(Duration::from_millis(1500)), NonZeroU64::new(7)));
        assert_eq!(info.to_value().get("seconds"), Some(&Value::Float(1.5)));
        assert_eq!(info.to_value().get("ticks"), Some(&Value::Int(7)));
        assert_eq!(h.info(none).to_value().get("seconds"), Some(&Value::Int(0)));
        h.after(10.0);
        assert_eq!(h.fired(), 3);
        assert_eq!(handed(&h, both), (Some(Duration::from_millis(1500)), Some(7)));
        assert_eq!(handed(&h, timed), (Some(Duration::from_millis(250)), None));
        assert_eq!(handed(&h, none), (None, None));
        // Stored in their own columns, NULL for none.
        h.engine.wait_for_writes().unwrap();
        assert_eq!(
            store.count(&format!("SELECT time_limit_ns FROM schedules WHERE id = {}", both.get())),
            1_500_000_000
        );
        assert_eq!(
            store.count(&format!("SELECT tick_limit FROM schedules WHERE id = {}", both.get())),
            7
        );
        assert_eq!(
            store.count(&format!(
                "SELECT COUNT(*) FROM schedules WHERE id = {} AND time_limit_ns IS NULL \
                 AND tick_limit IS NULL",
                none.get()
            )),
            1
        );
    }
}

on_every_store! {
    fn bad_limits_are_refused_at_creation_naming_the_value_and_nothing_is_created(store) {
        let h = Host::on(store);
        let hostile: Vec<(Options, &str)> = vec![
            (Options::new().time_limit(Duration::ZERO), "0ns"),
            (Options::new().time_limit(Duration::from_secs(u64::MAX)), "18446744073709551615s"),
            (Options::new().tick_limit(0), "E_INVARG: 0:"),
        ];
        for (options, named) in hostile {
            let mut txn = h.engine.begin(h.prog);
            let err = txn.schedule_every(h.room, "tick", 10.0, vec![], options).unwrap_err();
            assert_eq!(err.code(), "E_INVARG");
            let text = err.to_string();
            assert!(text.contains(named), "{text}");
            assert!(text.contains("\"seconds\"") || text.contains("\"ticks\""), "{text}");
            txn.commit().unwrap();
        }
        for (key, value) in [
            ("seconds", Value::Int(-3)),
            ("seconds", Value::Float(f64::INFINITY)),
            ("ticks", Value::Int(0)),
            ("ticks", Value::from("ten")),
        ] {
            let bad = Value::Map(vec![(Value::from(key), value.clone())]);
            let err = Options::from_map(&bad).unwrap_err();
            assert!(err.to_string().contains(&value.to_string()), "{err}");
            assert!(err.to_string().contains(key), "{err}");
        }
        assert!(h.engine.begin(h.prog).schedules(None).unwrap().is_empty());
        if store.kind() != common::stores::Kind::Memory {
            h.engine.wait_for_writes().unwrap();
            assert_eq!(store.count("SELECT COUNT(*) FROM schedules"), 0);
        }
    }
}

/// Turns the current store at `path` back into what a version-2 build wrote.
fn back_to_version_2(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "DROP TRIGGER schedules_history_goes_with_the_row; DROP TABLE firing_history; \
         ALTER TABLE operator_stops DROP COLUMN action; \
         DROP INDEX schedules_owner_key; ALTER TABLE schedules DROP COLUMN key; \
         ALTER TABLE schedules DROP COLUMN ops; \
         ALTER TABLE schedules DROP COLUMN time_limit_ns; \
         ALTER TABLE schedules DROP COLUMN tick_limit; \
         DELETE FROM schema_migrations WHERE version >= 3;",
    )
    .unwrap();
}

fn schema_version(path: &Path) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row("SELECT MAX(version) FROM schema_migrations", [], |r| {
        r.get(0)
    })
    .unwrap()
}

#[test]
fn a_version_2_file_is_read_by_the_inspector_and_migrated_by_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.db");
    let h = Host::open(&path, ManualClock::new());
    let id = h.every(10.0, Options::new().max_faults(4));
    let h = reopen(h, &path);
    let wall = h.clock.unix_nanos();
    drop(h);
    back_to_version_2(&path);
    assert_eq!(schema_version(&path), 2);

    // The Inspector reads the old file as it is, limits as none, and does not migrate it.
    let stored = Inspector::open(&path).unwrap().get(id).unwrap().unwrap();
    assert_eq!(
        (stored.time_limit, stored.tick_limit, stored.max_faults),
        (None, None, 4)
    );
    assert_eq!(Inspector::open(&path).unwrap().list().unwrap().len(), 1);
    assert_eq!(schema_version(&path), 2);

    // The engine migrates it, keeps the schedule, and new schedules keep their limits.
    let h = Host::open(&path, ManualClock::starting_at_unix_nanos(wall));
    assert_eq!(schema_version(&path), 12, "migrated to the current version");
    assert_eq!(h.info(id).max_faults, 4);
    assert_eq!((h.info(id).time_limit, h.info(id).tick_limit), (None, None));
    let limited = h.every(10.0, Options::new().tick_limit(2));
    let h = reopen(h, &path);
    assert_eq!(h.info(limited).tick_limit, NonZeroU64::new(2));
    drop(h);
    let stored = Inspector::open(&path)
        .unwrap()
        .get(limited)
        .unwrap()
        .unwrap();
    assert_eq!(stored.tick_limit, NonZeroU64::new(2));
}

#[test]
fn a_stored_limit_of_zero_fails_the_open_naming_the_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("zero.db");
    let h = Host::open(&path, ManualClock::new());
    h.every(10.0, Options::new().tick_limit(3));
    h.engine.flush().unwrap();
    drop(h);
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute("UPDATE schedules SET tick_limit = 0", [])
        .unwrap();
    let text = common::open_refusal(&path);
    assert!(text.contains("tick_limit"), "{text}");
}
