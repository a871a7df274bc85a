//! Named schedules (docs/schedules.md §5.12–§5.18): a key unique per owner, create-if-absent,
//! lookup by key, keys freed by a stop or a retirement, kept across a restart and guarded by a
//! unique index in both stores — from one engine, from two tasks, and from two nodes at once.

mod common;

use std::sync::{Arc, Barrier};

use common::Host;
use common::stores::{Kind, Store};
use tickstep_schedules::{Error, Options, ScheduleId, Value};

/// `schedule_every(room, "tick", secs)` keyed `key`, as `prog`, committed; and whether it was new.
fn every_keyed(h: &Host, secs: f64, key: &str) -> Result<(ScheduleId, bool), Error> {
    let mut txn = h.engine.begin(h.prog);
    let id = txn.schedule_every(h.room, "tick", secs, vec![], Options::new().key(key))?;
    let new = txn.is_new(id);
    txn.commit()?;
    Ok((id, new))
}

fn rows_keyed(store: &Store, key: &str) -> i64 {
    store.count(&format!(
        "SELECT COUNT(*) FROM schedules WHERE key = '{key}'"
    ))
}

on_every_store! {
    fn a_key_creates_once_and_names_the_same_schedule_after(store) {
        let h = Host::on(store);
        let (id, new) = every_keyed(&h, 60.0, "heartbeat").unwrap();
        assert!(new);
        let (again, new) = every_keyed(&h, 60.0, "heartbeat").unwrap();
        assert_eq!((again, new), (id, false), "the existing schedule, nothing created");
        assert_eq!(h.engine.begin(h.prog).schedules(None).unwrap(), vec![id]);
        assert_eq!(h.engine.begin(h.prog).schedule_named("heartbeat", None).unwrap(), Some(id));
        assert_eq!(h.info(id).key.as_deref(), Some("heartbeat"));
        assert_eq!(h.info(id).to_value().get("key"), Some(&Value::from("heartbeat")));
        if store.kind() != Kind::Memory {
            h.engine.flush().unwrap();
            assert_eq!(rows_keyed(store, "heartbeat"), 1);
        }
    }
}

on_every_store! {
    fn a_different_definition_under_a_taken_key_is_refused_naming_the_schedule(store) {
        let h = Host::on(store);
        let (id, _) = every_keyed(&h, 60.0, "heartbeat").unwrap();
        let err = every_keyed(&h, 30.0, "heartbeat").unwrap_err();
        assert_eq!(err.code(), "E_INVARG");
        assert!(matches!(err, Error::KeyTaken { existing, .. } if existing == id), "{err}");
        let text = err.to_string();
        assert!(text.contains("\"heartbeat\"") && text.contains("interval"), "{text}");
        assert!(text.contains("docs/schedules.md §5.14"), "{text}");
        // Other options and a one-shot differ too; the deadline of a one-shot does not.
        let mut txn = h.engine.begin(h.prog);
        let at = |txn: &mut tickstep_schedules::Txn, when: f64, key: &str| {
            txn.schedule_at(h.room, "tick", when, vec![], Options::new().key(key))
        };
        assert!(at(&mut txn, h.now() + 5.0, "heartbeat").unwrap_err().to_string().contains("kind"));
        let once = at(&mut txn, h.now() + 5.0, "once").unwrap();
        assert_eq!(at(&mut txn, h.now() + 9.0, "once").unwrap(), once);
        let err = txn
            .schedule_every(h.room, "tick", 60.0, vec![], Options::new().key("heartbeat").max_faults(3))
            .unwrap_err();
        assert!(err.to_string().contains("max_faults"), "{err}");
        txn.commit().unwrap();
        assert_eq!(h.engine.begin(h.prog).schedules(None).unwrap(), vec![id, once]);
    }
}

on_every_store! {
    fn a_stop_frees_the_key_even_in_the_transaction_that_creates_its_successor(store) {
        let h = Host::on(store);
        let (id, _) = every_keyed(&h, 60.0, "heartbeat").unwrap();
        let mut txn = h.engine.begin(h.prog);
        assert!(txn.schedule_stop(id).unwrap());
        assert_eq!(txn.schedule_named("heartbeat", None).unwrap(), None);
        let successor = txn
            .schedule_every(h.room, "tick", 30.0, vec![], Options::new().key("heartbeat"))
            .unwrap();
        assert!(txn.is_new(successor) && successor != id);
        txn.commit().unwrap();
        assert_eq!(h.engine.begin(h.prog).schedule_named("heartbeat", None).unwrap(), Some(successor));
        assert!(!h.valid(id));
        if store.kind() != Kind::Memory {
            h.engine.flush().unwrap();
            assert_eq!(rows_keyed(store, "heartbeat"), 1);
        }
    }
}

on_every_store! {
    fn retirement_frees_the_key_and_the_retired_schedule_still_shows_it(store) {
        let h = Host::on(store);
        let mut txn = h.engine.begin(h.prog);
        let once = txn
            .schedule_at(h.room, "tick", h.now() + 1.0, vec![], Options::new().key("ring"))
            .unwrap();
        txn.commit().unwrap();
        assert_eq!(h.after(1.0).started, 1);
        // Firing, not settled: still live, still the key's (docs/schedules.md §13.4).
        assert_eq!(h.engine.begin(h.prog).schedule_named("ring", None).unwrap(), Some(once));
        h.finish_all();
        let info = h.info(once);
        assert!(info.retired);
        assert_eq!(info.key.as_deref(), Some("ring"));
        assert_eq!(h.engine.begin(h.prog).schedule_named("ring", None).unwrap(), None);
        // Its row is still waiting for the group commit; the new one takes the key all the same.
        let mut txn = h.engine.begin(h.prog);
        let next = txn
            .schedule_at(h.room, "tick", h.now() + 1.0, vec![], Options::new().key("ring"))
            .unwrap();
        assert!(txn.is_new(next) && next != once);
        txn.commit().unwrap();
        if store.kind() != Kind::Memory {
            h.engine.flush().unwrap();
            assert_eq!(
                store.pairs("SELECT id, COUNT(*) FROM schedules WHERE key = 'ring' GROUP BY id"),
                vec![(i64::try_from(next.get()).unwrap(), 1)]
            );
        }
    }
}

on_every_store! {
    fn two_tasks_creating_one_key_the_later_commit_is_refused_with_nothing_applied(store) {
        let h = Host::on(store);
        let mut first = h.engine.begin(h.prog);
        let mut second = h.engine.begin(h.prog);
        let a = first.schedule_every(h.room, "tick", 60.0, vec![], Options::new().key("hb")).unwrap();
        let b = second.schedule_every(h.room, "tick", 60.0, vec![], Options::new().key("hb")).unwrap();
        let other = second.schedule_every(h.room, "tick", 5.0, vec![], Options::new()).unwrap();
        assert_ne!(a, b);
        first.commit().unwrap();
        let err = second.commit().unwrap_err();
        assert!(matches!(err, Error::KeyTaken { existing, .. } if existing == a), "{err}");
        assert!(err.to_string().contains("docs/schedules.md §5.15"), "{err}");
        assert!(!h.valid(b) && !h.valid(other), "nothing of the refused transaction applied");
        // Run again, the task gets the schedule the other committed.
        assert_eq!(every_keyed(&h, 60.0, "hb").unwrap(), (a, false));
    }
}

on_every_store! {
    fn bad_keys_are_invarg_naming_the_key_with_nothing_created(store) {
        let h = Host::on(store);
        let long = "k".repeat(tickstep_schedules::MAX_KEY_LEN + 1);
        for bad in ["", long.as_str(), "bell\u{7}", "new\nline", "two words"] {
            let err = every_keyed(&h, 60.0, bad).unwrap_err();
            assert_eq!(err.code(), "E_INVARG", "{bad:?}");
            assert!(err.to_string().contains("docs/schedules.md §5.12"), "{err}");
            assert_eq!(h.engine.begin(h.prog).schedule_named(bad, None).unwrap_err().code(), "E_INVARG");
        }
        assert!(every_keyed(&h, 60.0, "bell\u{7}").unwrap_err().to_string().contains("bell\\u{7}"));
        assert!(h.engine.begin(h.wiz).schedules(None).unwrap().is_empty(), "nothing created");
        // The longest key is fine, and a key another owner uses is that owner's.
        every_keyed(&h, 60.0, &"k".repeat(tickstep_schedules::MAX_KEY_LEN)).unwrap();
        let (mine, _) = every_keyed(&h, 60.0, "shared:name").unwrap();
        let mut txn = h.engine.begin(h.other);
        let theirs = txn
            .schedule_every(h.other, "tick", 60.0, vec![], Options::new().key("shared:name"))
            .unwrap();
        assert!(txn.is_new(theirs));
        txn.commit().unwrap();
        assert_ne!(mine, theirs);
        // A map's key option parses; its value is checked at creation.
        let map = Value::Map(vec![(Value::from("key"), Value::Int(3))]);
        assert_eq!(Options::from_map(&map).unwrap_err().code(), "E_INVARG");
    }
}

on_every_store! {
    fn lookup_by_key_is_for_the_owner_or_a_wizard(store) {
        let h = Host::on(store);
        let (id, _) = every_keyed(&h, 60.0, "heartbeat").unwrap();
        let err = h.engine.begin(h.other).schedule_named("heartbeat", Some(h.prog)).unwrap_err();
        assert_eq!(err.code(), "E_PERM");
        assert_eq!(h.engine.begin(h.other).schedule_named("heartbeat", None).unwrap(), None);
        assert_eq!(h.engine.begin(h.wiz).schedule_named("heartbeat", Some(h.prog)).unwrap(), Some(id));
    }
}

on_both_stores! {
    fn a_restart_keeps_the_key(store) {
        let id = {
            let h = Host::on(store);
            every_keyed(&h, 60.0, "heartbeat").unwrap().0
        };
        let h = Host::on(store);
        assert_eq!(h.engine.begin(h.prog).schedule_named("heartbeat", None).unwrap(), Some(id));
        assert_eq!(every_keyed(&h, 60.0, "heartbeat").unwrap(), (id, false));
        assert_eq!(h.info(id).key.as_deref(), Some("heartbeat"));
        let stored = tickstep_schedules::Inspector::open(store.path()).unwrap().find_key("heartbeat").unwrap();
        assert_eq!(stored.iter().map(|s| s.id).collect::<Vec<_>>(), vec![id]);
    }
}

on_every_store! {
    fn a_non_persistent_key_is_kept_by_its_engine(store) {
        let h = Host::on(store);
        let mut txn = h.engine.begin(h.prog);
        let id = txn
            .schedule_every(h.room, "tick", 1.0, vec![], Options::new().key("debounce").persist(false))
            .unwrap();
        txn.commit().unwrap();
        let mut txn = h.engine.begin(h.prog);
        let again = txn
            .schedule_every(h.room, "tick", 1.0, vec![], Options::new().key("debounce").persist(false))
            .unwrap();
        assert_eq!((again, txn.is_new(again)), (id, false));
        let err = txn
            .schedule_every(h.room, "tick", 1.0, vec![], Options::new().key("debounce"))
            .unwrap_err();
        assert!(err.to_string().contains("persist"), "{err}");
    }
}

#[test]
fn sqlite_only_the_unique_index_refuses_a_duplicate_key_written_with_the_sqlite3_shell() {
    let store = Store::sqlite();
    let h = Host::on(&store);
    let (id, _) = every_keyed(&h, 60.0, "heartbeat").unwrap();
    h.engine.flush().unwrap();
    let copy = "CREATE TEMP TABLE t AS SELECT * FROM schedules; UPDATE t SET id = id + 1000; \
                INSERT INTO schedules SELECT * FROM t;";
    let out = std::process::Command::new("sqlite3")
        .arg(store.path())
        .arg(copy)
        .output();
    let Ok(out) = out else {
        // No shell here: the same statement through the library says the same.
        let conn = rusqlite::Connection::open(store.path()).unwrap();
        let err = conn.execute_batch(copy).unwrap_err().to_string();
        assert!(
            err.contains(
                "UNIQUE constraint failed: schedules.namespace, schedules.owner, schedules.key"
            ),
            "{err}"
        );
        return;
    };
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "UNIQUE constraint failed: schedules.namespace, schedules.owner, schedules.key"
        ),
        "{stderr}"
    );
    assert_eq!(rows_keyed(&store, "heartbeat"), 1);
    // A row without a key is no one's duplicate.
    store.execute(
        "CREATE TEMP TABLE t AS SELECT * FROM schedules; UPDATE t SET id = id + 1000, key = NULL; \
         INSERT INTO schedules SELECT * FROM t;",
    );
    assert_eq!(store.count("SELECT COUNT(*) FROM schedules"), 2);
    assert!(h.valid(id));
}

#[test]
fn postgres_only_the_unique_index_refuses_a_duplicate_key_written_beside_the_engine() {
    let url = pg_or_skip!("named_index");
    let store = Store::postgres(url.clone());
    let h = Host::on(&store);
    every_keyed(&h, 60.0, "heartbeat").unwrap();
    h.engine.flush().unwrap();
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let err = client
        .batch_execute(
            "CREATE TEMP TABLE t AS SELECT * FROM tickstep_schedules; UPDATE t SET id = id + 1000; \
             INSERT INTO tickstep_schedules SELECT * FROM t;",
        )
        .unwrap_err();
    assert_eq!(
        err.code().map(postgres::error::SqlState::code),
        Some("23505"),
        "{err}"
    );
    assert_eq!(rows_keyed(&store, "heartbeat"), 1);
}

/// Two nodes on one database create the same key at once, each from its own thread: both
/// transactions make their schedule before either commits, so the unique index decides.
#[test]
fn postgres_only_two_nodes_racing_for_one_key_leave_one_row_and_agree_on_it() {
    let url = pg_or_skip!("named_race");
    let store = Store::postgres(url);
    for round in 0..3 {
        let key = format!("race{round}");
        let both_created = Arc::new(Barrier::new(2));
        let results: Vec<(ScheduleId, bool, bool)> = std::thread::scope(|s| {
            let nodes: Vec<_> = (0..2)
                .map(|_| {
                    let (store, key, barrier) = (&store, key.clone(), Arc::clone(&both_created));
                    s.spawn(move || {
                        let h = Host::on(store);
                        let mut txn = h.engine.begin(h.prog);
                        let id = txn
                            .schedule_every(h.room, "tick", 60.0, vec![], Options::new().key(&*key))
                            .unwrap();
                        let created_first = txn.is_new(id);
                        barrier.wait();
                        match txn.commit() {
                            Ok(()) => (id, true, created_first),
                            Err(Error::KeyTaken { existing, .. }) => {
                                // Run again: the creation returns the winner's schedule.
                                let (again, new) = every_keyed(&h, 60.0, &key).unwrap();
                                assert!(!new);
                                assert_eq!(again, existing);
                                (again, false, created_first)
                            }
                            Err(other) => panic!("{other}"),
                        }
                    })
                })
                .collect();
            nodes.into_iter().map(|n| n.join().unwrap()).collect()
        });
        assert!(
            results.iter().all(|r| r.2),
            "both made a schedule before either committed"
        );
        assert_eq!(
            results.iter().filter(|r| r.1).count(),
            1,
            "exactly one committed: {results:?}"
        );
        assert_eq!(results[0].0, results[1].0, "both name the one schedule");
        assert_eq!(rows_keyed(&store, &key), 1);
    }
}

#[test]
fn postgres_only_a_node_that_does_not_hold_a_key_finds_it_and_gets_it_back_on_create() {
    let url = pg_or_skip!("named_elsewhere");
    let store = Store::postgres(url);
    let holder = Host::on(&store);
    let (id, _) = every_keyed(&holder, 60.0, "heartbeat").unwrap();
    let other = Host::on(&store);
    assert!(
        other
            .engine
            .begin(other.prog)
            .schedules(None)
            .unwrap()
            .is_empty(),
        "held by the first"
    );
    assert_eq!(
        other
            .engine
            .begin(other.prog)
            .schedule_named("heartbeat", None)
            .unwrap(),
        Some(id)
    );
    assert_eq!(every_keyed(&other, 60.0, "heartbeat").unwrap(), (id, false));
    assert_eq!(other.info(id).key.as_deref(), Some("heartbeat"));
    let err = every_keyed(&other, 5.0, "heartbeat").unwrap_err();
    assert!(
        matches!(err, Error::KeyTaken { existing, .. } if existing == id),
        "{err}"
    );
    // A stop from the other node frees the key for everyone.
    let mut txn = other.engine.begin(other.prog);
    assert!(txn.schedule_stop(id).unwrap());
    let successor = txn
        .schedule_every(
            other.room,
            "tick",
            5.0,
            vec![],
            Options::new().key("heartbeat"),
        )
        .unwrap();
    txn.commit().unwrap();
    // The holder drops the stopped schedule at its first tick after reading the note
    // (docs/schedules.md §11.30).
    holder.engine.flush().unwrap();
    holder.tick();
    assert_eq!(
        holder
            .engine
            .begin(holder.prog)
            .schedule_named("heartbeat", None)
            .unwrap(),
        Some(successor)
    );
    assert_eq!(rows_keyed(&store, "heartbeat"), 1);
}

#[test]
fn sqlite_only_a_version_3_file_has_no_keys_for_the_inspector_and_is_migrated_by_the_engine() {
    let store = Store::sqlite();
    let id = Host::on(&store).every(60.0, Options::new());
    store.execute(
        "DROP TRIGGER schedules_history_goes_with_the_row; DROP TABLE firing_history; \
         ALTER TABLE operator_stops DROP COLUMN action; \
         DROP INDEX schedules_owner_key; ALTER TABLE schedules DROP COLUMN key; \
         ALTER TABLE schedules DROP COLUMN ops; \
         DELETE FROM schema_migrations WHERE version >= 4;",
    );
    let inspector = tickstep_schedules::Inspector::open(store.path()).unwrap();
    assert_eq!(inspector.get(id).unwrap().unwrap().key, None);
    assert!(inspector.find_key("heartbeat").unwrap().is_empty());
    drop(inspector);
    assert_eq!(
        store.count("SELECT MAX(version) FROM schema_migrations"),
        3,
        "not migrated"
    );
    let h = Host::on(&store);
    assert_eq!(
        store.count("SELECT MAX(version) FROM schema_migrations"),
        12
    );
    assert!(h.valid(id));
    let (keyed, _) = every_keyed(&h, 60.0, "heartbeat").unwrap();
    assert_eq!(rows_keyed(&store, "heartbeat"), 1);
    assert_ne!(keyed, id);
}
