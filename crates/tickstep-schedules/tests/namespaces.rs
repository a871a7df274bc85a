//! Applications sharing one store (docs/schedules.md §15): each engine opens a namespace and
//! sees, claims, fires and retires only its schedules; ids never collide; keys are per
//! namespace; a store from before namespaces gives its schedules to the engine that migrates it;
//! and an engine that finds most of what it loads naming objects it does not have holds them
//! back instead of retiring them. On both stores, with the engines open at the same time.

mod common;

use std::collections::BTreeSet;

use common::stores::{DroppedAtEnd, Kind, Store};
use common::{Host, config};
use tickstep_kernel::clock::ManualClock;
use tickstep_schedules::testkit::{TestRunner, TestWorld};
use tickstep_schedules::{Config, Error, Inspector, Namespace, Options, ScheduleId, Schedules};

fn in_namespace(name: &str) -> Config {
    let mut c = config();
    c.namespace = Namespace::new(name).unwrap();
    c
}

/// A host of application `name` on `store`.
fn app(store: &Store, name: &str) -> Host {
    Host::on_with_config(store, in_namespace(name))
}

/// The ids `host`'s runner started, as a set.
fn fired_ids(host: &Host) -> BTreeSet<ScheduleId> {
    host.started().iter().map(|(_, f)| f.schedule).collect()
}

on_both_stores! {
    fn two_applications_open_at_once_each_fire_and_keep_only_their_own(store) {
        let _dropped = DroppedAtEnd(store);
        let serve = app(store, "serve");
        let demo = app(store, "demo");
        let serve_ids: BTreeSet<_> = (0..3).map(|_| serve.every(10.0, Options::new())).collect();
        let demo_ids: BTreeSet<_> = (0..2).map(|_| demo.every(10.0, Options::new())).collect();
        assert!(serve_ids.is_disjoint(&demo_ids), "ids are unique across namespaces");
        assert_eq!((serve.engine.live_count(), demo.engine.live_count()), (3, 2));

        for host in [&serve, &demo] {
            host.after(10.0);
            host.finish_all();
        }
        assert_eq!(fired_ids(&serve), serve_ids);
        assert_eq!(fired_ids(&demo), demo_ids);
        serve.engine.flush().unwrap();
        demo.engine.flush().unwrap();

        let all = Inspector::open(store.path()).unwrap().list().unwrap();
        let by_namespace = |name: &str| -> BTreeSet<ScheduleId> {
            all.iter().filter(|s| s.namespace == name).map(|s| s.id).collect()
        };
        assert_eq!((by_namespace("serve"), by_namespace("demo")), (serve_ids.clone(), demo_ids.clone()));
        let counts = Inspector::open(store.path()).unwrap().namespaces().unwrap();
        assert_eq!(counts, vec![("demo".to_string(), 2), ("serve".to_string(), 3)]);

        // Each reopens and loads its own alone, counters intact.
        drop((serve, demo));
        let serve = app(store, "serve");
        let demo = app(store, "demo");
        assert_eq!((serve.engine.live_count(), demo.engine.live_count()), (3, 2));
        for id in &serve_ids {
            assert_eq!(serve.info(*id).run_count, 1);
        }
        assert!(!demo.valid(*serve_ids.first().unwrap()), "another application's id is not there");
    }
}

on_both_stores! {
    fn a_foreign_schedule_is_never_fired_retired_or_stopped_by_another_application(store) {
        let _dropped = DroppedAtEnd(store);
        let game = app(store, "game");
        let ids: Vec<_> = (0..3).map(|_| game.every(10.0, Options::new())).collect();
        game.engine.flush().unwrap();

        // Another application, in a world where none of the game's objects exist, runs beside
        // it for an hour of its own time.
        let clock = ManualClock::new();
        let tools = Schedules::open(
            store.path(),
            clock.clone(),
            TestWorld::new(),
            TestRunner::new(),
            in_namespace("tools"),
        )
        .unwrap();
        for _ in 0..360 {
            clock.advance(std::time::Duration::from_secs(10));
            tools.tick().unwrap();
        }
        assert_eq!(tools.live_count(), 0);
        assert_eq!(tools.held_back(), None, "it loaded nothing to hold back");
        // Its transactions do not see the game's schedules: no info, no stop.
        let wizard = TestWorld::new().add_wizard();
        let mut txn = tools.begin(wizard);
        for id in &ids {
            assert!(matches!(txn.schedule_info(*id), Err(Error::InvalidArg { .. })));
            assert!(!txn.schedule_stop(*id).unwrap(), "another application's id is not there to stop");
        }
        txn.commit().unwrap();
        tools.flush().unwrap();
        drop(tools);

        assert_eq!(store.count("SELECT COUNT(*) FROM schedules WHERE namespace = 'game'"), 3);
        game.after(10.0);
        assert_eq!(game.fired(), 3, "the game's schedules are all there and fire");
        for id in ids {
            assert!(game.info(id).retire_reason.is_none());
        }
    }
}

on_both_stores! {
    fn keys_are_unique_per_namespace(store) {
        let _dropped = DroppedAtEnd(store);
        let a = app(store, "a");
        let b = app(store, "b");
        let keyed = |host: &Host| {
            let mut txn = host.engine.begin(host.prog);
            let id = txn
                .schedule_every(host.room, "tick", 60.0, vec![], Options::new().key("hourly"))
                .unwrap();
            txn.commit().map(|()| id)
        };
        let (first, second) = (keyed(&a).unwrap(), keyed(&b).unwrap());
        assert_ne!(first, second, "the same owner and key in two namespaces are two schedules");
        // Within one namespace the key names the schedule already there (docs/schedules.md §5.13).
        assert_eq!(keyed(&a).unwrap(), first, "within one namespace the key is taken");
        assert_eq!(a.engine.live_count(), 1);
        let found = Inspector::open(store.path())
            .unwrap()
            .in_namespace(Namespace::new("b").unwrap())
            .find_key("hourly")
            .unwrap();
        assert_eq!(found.iter().map(|s| s.id).collect::<Vec<_>>(), vec![second]);
    }
}

on_both_stores! {
    fn the_inspector_reads_one_namespace_or_all(store) {
        let _dropped = DroppedAtEnd(store);
        let a = app(store, "a");
        let b = app(store, "b");
        let in_a = a.every(60.0, Options::new());
        let in_b = b.every(60.0, Options::new());
        a.engine.flush().unwrap();
        b.engine.flush().unwrap();
        let all = Inspector::open(store.path()).unwrap();
        assert_eq!(all.namespace(), None);
        assert_eq!(all.ids().unwrap(), vec![in_a, in_b]);
        let only_b = Inspector::open(store.path()).unwrap().in_namespace(Namespace::new("b").unwrap());
        assert_eq!(only_b.ids().unwrap(), vec![in_b]);
        assert_eq!(only_b.list().unwrap().len(), 1);
        assert_eq!(only_b.get(in_a).unwrap(), None);
        assert_eq!(only_b.get(in_b).unwrap().unwrap().namespace, "b");
    }
}

on_both_stores! {
    fn a_store_from_before_namespaces_gives_its_schedules_to_the_engine_that_migrates_it(store) {
        let _dropped = DroppedAtEnd(store);
        let old = app(store, "default");
        let ids: BTreeSet<_> = (0..2).map(|_| old.every(60.0, Options::new())).collect();
        old.engine.flush().unwrap();
        drop(old);
        // What a build before namespaces left: no column, the key index on (owner, key).
        match store.kind() {
            Kind::Postgres => store.execute(
                "ALTER TABLE tickstep_schedules DROP COLUMN namespace; \
                 ALTER TABLE tickstep_schedules DROP COLUMN policies; \
                 ALTER TABLE tickstep_nodes DROP COLUMN namespace; \
                 DROP TABLE tickstep_cluster_history; \
                 CREATE UNIQUE INDEX tickstep_schedules_owner_key \
                     ON tickstep_schedules (owner, key) WHERE key IS NOT NULL; \
                 DELETE FROM schema_migrations WHERE version IN (12, 13, 14, 15)",
            ),
            _ => store.execute(
                "DROP INDEX schedules_owner_key; \
                 ALTER TABLE schedules DROP COLUMN namespace; \
                 ALTER TABLE schedules DROP COLUMN policies; \
                 CREATE UNIQUE INDEX schedules_owner_key ON schedules (owner, key) \
                     WHERE key IS NOT NULL; \
                 DELETE FROM schema_migrations WHERE version IN (10, 11, 12)",
            ),
        }
        // The inspector reads it as it is, without a namespace.
        let before = Inspector::open(store.path()).unwrap().list().unwrap();
        assert!(before.iter().all(|s| s.namespace.is_empty()), "{before:?}");

        // The first engine to open it is the application that has been using it.
        let owner = app(store, "billing");
        assert_eq!(owner.engine.live_count(), 2);
        let stranger = app(store, "reports");
        assert_eq!(stranger.engine.live_count(), 0);
        let listed: BTreeSet<_> = Inspector::open(store.path())
            .unwrap()
            .in_namespace(Namespace::new("billing").unwrap())
            .ids()
            .unwrap()
            .into_iter()
            .collect();
        assert_eq!(listed, ids);
    }
}

on_both_stores! {
    fn an_engine_that_finds_most_targets_unknown_holds_them_back_and_writes_nothing(store) {
        let _dropped = DroppedAtEnd(store);
        let game = app(store, "shared");
        let ids: Vec<_> = (0..3).map(|_| game.every(10.0, Options::new())).collect();
        game.engine.flush().unwrap();
        drop(game);
        let before = store.count("SELECT SUM(next_run) FROM schedules");

        // The same namespace, a world without the game's objects: three of three unknown.
        let clock = ManualClock::new();
        let stranger = Schedules::open(
            store.path(),
            clock.clone(),
            TestWorld::new(),
            TestRunner::new(),
            in_namespace("shared"),
        )
        .unwrap();
        let held = stranger.held_back().expect("held back");
        assert_eq!(held.schedules, ids);
        assert_eq!((held.loaded, held.namespace.as_str()), (3, "shared"));
        let said = held.to_string();
        assert!(said.contains("3 of the 3 schedules") && said.contains("held back, not retired"), "{said}");
        for _ in 0..100 {
            clock.advance(std::time::Duration::from_secs(10));
            stranger.tick().unwrap();
        }
        stranger.flush().unwrap();
        drop(stranger);
        assert_eq!(store.count("SELECT COUNT(*) FROM schedules"), 3, "none retired");
        assert_eq!(store.count("SELECT SUM(next_run) FROM schedules"), before, "none written");

        // The application that made them finds them whole and fires them.
        let game = app(store, "shared");
        assert_eq!(game.engine.held_back(), None);
        game.after(10.0);
        assert_eq!(game.fired(), 3);
    }
}

on_both_stores! {
    fn one_unknown_target_among_many_still_retires_as_invalid_target(store) {
        let _dropped = DroppedAtEnd(store);
        let game = Host::on(store);
        // An object the next world will not have (its ids are handed out in the same order).
        let gone = game.world.add_object(game.prog);
        game.world.add_verb(gone, "tick");
        let mut txn = game.engine.begin(game.prog);
        let doomed = txn.schedule_every(gone, "tick", 10.0, vec![], Options::new()).unwrap();
        txn.commit().unwrap();
        for _ in 0..3 {
            game.every(10.0, Options::new());
        }
        game.engine.flush().unwrap();
        drop(game);

        let again = Host::on(store);
        assert_eq!(again.engine.held_back(), None, "one of four is an object destroyed, not a stranger's store");
        again.after(10.0);
        assert_eq!(again.info(doomed).retire_reason.map(tickstep_schedules::RetireReason::as_str), Some("invalid_target"));
    }
}

#[test]
fn postgres_only_a_node_never_claims_another_namespaces_rows_when_their_holder_dies() {
    let url = pg_or_skip!("namespace_claims");
    let store = Store::postgres(url);
    let _dropped = DroppedAtEnd(&store);
    let node = |name: &str| {
        let mut c = in_namespace(name);
        c.lease = std::time::Duration::from_secs(600);
        Host::on_with_config(&store, c)
    };
    let orders = node("orders");
    let ids: Vec<_> = (0..2).map(|_| orders.every(1.0, Options::new())).collect();
    orders.engine.flush().unwrap();
    // The holder dies (no clean close hands its rows back) and its lease runs out.
    std::mem::forget(orders);
    store.execute("UPDATE tickstep_nodes SET lease_until = now() - interval '1 second'");

    let mail = node("mail");
    assert_eq!(
        mail.engine.live_count(),
        0,
        "another namespace's rows are not claimed at open"
    );
    assert_eq!(
        store.count("SELECT COUNT(*) FROM schedules WHERE owner_node IS NULL"),
        0,
        "nor touched: they still name their dead holder"
    );
    let heir = node("orders");
    for id in &ids {
        assert!(
            heir.valid(*id),
            "the namespace's own next node takes them over"
        );
    }
}

#[test]
fn sqlite_only_engines_opening_a_new_file_at_once_migrate_and_switch_it_once() {
    // Two applications started together on a store neither has made yet (docs/schedules.md
    // §15.2): the migrations run under the write lock and skip what the other applied, and the
    // switch to WAL waits for the other's. Twenty fresh files, two engines each, a barrier
    // between them.
    for round in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.db");
        let barrier = std::sync::Barrier::new(2);
        std::thread::scope(|scope| {
            for name in ["a", "b"] {
                let (path, barrier) = (&path, &barrier);
                scope.spawn(move || {
                    barrier.wait();
                    let engine = Schedules::open(
                        path,
                        ManualClock::new(),
                        TestWorld::new(),
                        TestRunner::new(),
                        in_namespace(name),
                    )
                    .unwrap_or_else(|e| panic!("round {round}, {name}: {e}"));
                    drop(engine);
                });
            }
        });
        let conn = rusqlite::Connection::open(&path).unwrap();
        let versions: i64 = conn
            .query_row("SELECT COUNT(*) FROM schema_migrations", [], |r| r.get(0))
            .unwrap();
        assert_eq!(versions, 12, "round {round}: each migration recorded once");
    }
}

on_both_stores! {
    fn a_clean_stop_gives_back_only_ids_no_other_engine_reserved_after_it(store) {
        // docs/schedules.md §11.47: the mark is lowered only while it is still this engine's.
        let _dropped = DroppedAtEnd(store);
        let serve = app(store, "serve");
        let demo = app(store, "demo");
        let first = serve.every(10.0, Options::new()).get();
        let other = demo.every(10.0, Options::new()).get();
        assert!(other > first, "demo took the next block: {first} then {other}");
        drop(serve); // the mark is demo's block now: nothing is given back
        let again = app(store, "serve");
        let after = again.every(10.0, Options::new()).get();
        let more = demo.every(10.0, Options::new()).get();
        assert!(after > more && more > other, "serve resumes above demo's block: {other}, {more}, {after}");
        drop(demo); // no longer the top block either: serve's is
        drop(again); // the top block: given back down to `after`
        let last = app(store, "demo").every(10.0, Options::new()).get();
        assert_eq!(last, after + 1, "continues from the last id used");
    }
}
