//! What only the `PostgreSQL` store has to prove: the tick never waits for the database, a lost
//! connection is survived without losing a write, and bad locations and foreign databases are
//! refused or left alone. (Everything both stores must do is in `store.rs`, on both.)

mod common;

use common::Host;
use common::stores::Store;
use std::time::{Duration, Instant};
use tickstep_kernel::clock::ManualClock;

use postgres::fallible_iterator::FallibleIterator;
use tickstep_schedules::{Error, Inspector, Options, Schedules};

fn open(location: &str) -> Result<Schedules, Error> {
    Schedules::open(
        location,
        ManualClock::new(),
        tickstep_schedules::testkit::TestWorld::new(),
        tickstep_schedules::testkit::TestRunner::new(),
        common::config(),
    )
}

fn client(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls).expect("connect")
}

#[test]
fn a_tick_fires_and_returns_while_the_table_is_locked_and_its_writes_land_after() {
    let url = pg_or_skip!("tick_never_waits");
    let store = Store::postgres(url.clone());
    // Time moved by the test, but not virtual: the tick behaves as on real time (docs/schedules.md §11.42).
    let h = Host::on_real_time(&store);
    let ids: Vec<_> = (0..3).map(|_| h.every(1.0, Options::new())).collect();
    // Another session holds the table exclusively. Should the tick wait for the database, the
    // server ends that session after 20 s and the check below that it is still alive fails.
    let mut locker = client(&url);
    locker
        .batch_execute(
            "SET idle_in_transaction_session_timeout = '20s'; BEGIN; \
             LOCK TABLE tickstep_schedules IN ACCESS EXCLUSIVE MODE",
        )
        .unwrap();
    let report = h.after(1.0);
    // The firings wait for their updates to be durable (docs/schedules.md §11.42); the tick
    // does not.
    assert_eq!((report.started, report.starts_waiting), (0, 3));
    assert!(!report.waited_for_store);
    assert_eq!(
        h.tick().started,
        0,
        "nothing starts before its update is written"
    );
    assert_eq!(h.fired(), 0);
    locker
        .batch_execute("SELECT 1")
        .expect("the lock was still held when the tick returned");
    locker.batch_execute("COMMIT").unwrap();
    h.engine.wait_for_writes().unwrap();
    assert_eq!(h.tick().started, 3, "the firings went ahead once written");
    assert_eq!(h.fired(), 3);
    h.engine.flush().unwrap();
    assert_eq!(
        store.count("SELECT SUM(run_count) FROM schedules"),
        3,
        "the tick's updates were written once the lock was gone"
    );
    assert_eq!(ids.len(), 3);
}

#[test]
fn a_lost_connection_keeps_the_updates_queued_and_writes_them_once_reconnected() {
    let url = pg_or_skip!("lost_connection");
    let store = Store::postgres(url.clone());
    let h = Host::open(store.path(), ManualClock::new());
    h.every(1.0, Options::new());
    // The server ends every session of the engine's database but ours, and waits (up to 10 s)
    // until each is gone.
    let mut admin = client(&url);
    let killed: i64 = admin
        .query_one(
            "SELECT COUNT(*) FILTER (WHERE pg_terminate_backend(pid, 10000)) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(killed, 1, "the store's one connection");
    h.after(1.0);
    h.finish_all();
    h.after(1.0);
    assert_eq!(h.fired(), 2, "the engine kept running in memory");
    h.engine.wait_for_writes().expect("reconnected and written");
    assert_eq!(store.count("SELECT SUM(run_count) FROM schedules"), 2);
}

#[test]
fn a_location_that_is_not_a_postgres_url_is_invarg_naming_it_without_the_password() {
    let err = open("postgres://user:hunter2@127.0.0.1:notaport/db")
        .err()
        .expect("refused");
    assert_eq!(err.code(), "E_INVARG", "{err}");
    let text = err.to_string();
    assert!(text.contains("127.0.0.1:notaport"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
}

#[test]
fn a_refused_connection_is_a_database_error() {
    // A port nothing listens on: bound and released just now.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = open(&format!("postgres://postgres@127.0.0.1:{port}/db"))
        .err()
        .expect("refused");
    assert!(matches!(err, Error::Database { .. }), "{err}");
    assert_eq!(err.code(), "E_QUOTA");
    assert!(err.to_string().contains("connecting"), "{err}");
}

#[test]
fn another_applications_tables_in_the_same_database_are_left_alone() {
    let url = pg_or_skip!("foreign_tables");
    let mut app = client(&url);
    app.batch_execute(
        "CREATE TABLE schedules (id TEXT PRIMARY KEY, cron TEXT); \
         INSERT INTO schedules VALUES ('nightly', '0 3 * * *'); \
         CREATE TABLE schema_migrations (version TEXT PRIMARY KEY); \
         INSERT INTO schema_migrations VALUES ('20240101');",
    )
    .unwrap();
    let store = Store::postgres(url.clone());
    let h = Host::open(store.path(), ManualClock::new());
    h.every(1.0, Options::new());
    drop(h);
    let theirs: Vec<(String, String)> = app
        .query("SELECT id, cron FROM schedules", &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(theirs, vec![("nightly".into(), "0 3 * * *".into())]);
    assert_eq!(store.count("SELECT COUNT(*) FROM schedules"), 1, "ours");
}

#[test]
fn two_engines_opening_a_fresh_database_at_once_migrate_it_once() {
    let url = pg_or_skip!("concurrent_migration");
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || open(&url).map(drop))
        })
        .collect();
    for h in handles {
        h.join().unwrap().expect("both opened");
    }
    let store = Store::postgres(url);
    assert_eq!(
        store.count("SELECT COUNT(*) FROM schema_migrations"),
        store.count("SELECT MAX(version) FROM schema_migrations"),
        "each version applied once"
    );
}

#[test]
fn an_operator_stop_deletes_the_row_leaves_a_note_and_notifies_in_one_transaction() {
    let url = pg_or_skip!("operator_stop_note");
    let store = Store::postgres(url.clone());
    let h = Host::open(store.path(), ManualClock::new());
    let stopped = h.every(60.0, Options::new());
    let kept = h.every(60.0, Options::new());
    let mut listener = client(&url);
    listener.batch_execute("LISTEN tickstep_stops").unwrap();

    assert!(Inspector::stop(&url, stopped).unwrap());
    assert!(
        !Inspector::stop(&url, stopped).unwrap(),
        "already gone: no note"
    );
    assert_eq!(
        store.count("SELECT COUNT(*) FROM schedules"),
        1,
        "only the kept row"
    );
    assert_eq!(
        store.count(&format!(
            "SELECT COUNT(*) FROM tickstep_operator_stops WHERE schedule_id = {}",
            stopped.get()
        )),
        1
    );
    assert_eq!(
        store.count("SELECT COUNT(*) FROM tickstep_operator_stops"),
        1
    );
    let mut notes = listener.notifications();
    let mut waiting = notes.timeout_iter(Duration::from_secs(10));
    let note = waiting.next().unwrap().expect("a notification within 10 s");
    assert_eq!(
        (note.channel(), note.payload()),
        ("tickstep_stops", stopped.get().to_string().as_str())
    );
    assert!(h.valid(kept));
}

#[test]
fn a_running_engine_drops_a_schedule_stopped_on_another_connection_at_its_next_poll() {
    let url = pg_or_skip!("operator_stop_engine");
    let store = Store::postgres(url.clone());
    let h = Host::open(store.path(), ManualClock::new());
    let stopped = h.every(60.0, Options::new());
    let kept = h.every(60.0, Options::new());
    h.tick();
    assert!(Inspector::stop(&url, stopped).unwrap());
    // The flush reads the notes committed before it, so the next poll has them.
    h.engine.wait_for_writes().unwrap();
    h.tick(); // same instant: not polled again
    assert!(h.valid(stopped));
    h.advance(0.01);
    h.tick();
    assert!(
        !h.valid(stopped),
        "dropped one tick interval after the last poll"
    );
    assert!(h.valid(kept));
    assert_eq!(h.engine.take_operator_stops(), vec![stopped]);
    // A restarted engine does not load it, and its old notes are not replayed.
    let clock = h.clock.clone();
    drop(h);
    let reopened = Host::open(store.path(), clock);
    reopened.after(0.01);
    assert!(!reopened.valid(stopped));
    assert!(reopened.valid(kept));
    assert!(reopened.engine.take_operator_stops().is_empty());
}

#[test]
fn the_store_thread_notices_a_stop_on_its_own_without_a_flush() {
    let url = pg_or_skip!("operator_stop_notify");
    let h = Host::open(Store::postgres(url.clone()).path(), ManualClock::new());
    let stopped = h.every(60.0, Options::new());
    assert!(Inspector::stop(&url, stopped).unwrap());
    // Real time: the store thread polls the notes once per (real) tick interval. Bounded at
    // 10 s; only the outcome is asserted.
    let give_up = Instant::now() + Duration::from_secs(10);
    while h.valid(stopped) && Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(5));
        h.after(0.01);
    }
    assert!(
        !h.valid(stopped),
        "noticed by the store thread's poll within 10 s"
    );
    assert_eq!(h.engine.take_operator_stops(), vec![stopped]);
}

/// docs/schedules.md §11.27: a write the server aborts for a deadlock is retried whole, and the
/// firings it carries are recorded once, none of them a fault. The deadlock is real: another
/// session holds one schedule row while the store thread's batched update waits for it, then
/// asks for the rows that update already holds; the store thread's session finds the deadlock
/// first (the other session's `deadlock_timeout` is set far longer) and is the one aborted.
#[test]
fn a_write_the_server_aborts_for_a_deadlock_is_retried_and_each_firing_recorded_once() {
    let url = pg_or_skip!("deadlock_retry");
    let store = Store::postgres(url.clone());
    // As on real time, so the tick hands its write to the store thread and returns (docs/schedules.md §11.42).
    let h = Host::on_real_time(&store);
    let ids: Vec<_> = (0..50).map(|_| h.every(1.0, Options::new())).collect();
    let middle = i64::try_from(ids[ids.len() / 2].get()).unwrap();
    let mut other = client(&url);
    other.batch_execute("SET deadlock_timeout = '60s'").unwrap();
    let deadlocks = |c: &mut postgres::Client| -> i64 {
        c.query_one(
            "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()",
            &[],
        )
        .unwrap()
        .get(0)
    };
    let mut watcher = client(&url);
    let before = deadlocks(&mut watcher);
    let mut tx = other.transaction().unwrap();
    tx.execute(
        "SELECT 1 FROM tickstep_schedules WHERE id = $1 FOR UPDATE",
        &[&middle],
    )
    .unwrap();
    // Every schedule is due; the store thread's one update of all 50 rows, which their starts
    // wait for, waits on `middle`.
    assert_eq!(h.after(1.0).starts_waiting, 50);
    assert_eq!(h.tick().started, 0);
    let waiting = |c: &mut postgres::Client| -> i64 {
        c.query_one(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE wait_event_type = 'Lock' AND datname = current_database()",
            &[],
        )
        .unwrap()
        .get(0)
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while waiting(&mut watcher) == 0 {
        assert!(
            Instant::now() < deadline,
            "the store thread never waited on the held row"
        );
        std::thread::yield_now();
    }
    // Take every row the update does not hold yet; the ones it holds are what this session now
    // waits for, while it waits for `middle`: a deadlock, unless it held none.
    let free: i64 = tx
        .query_one(
            "SELECT count(*) FROM (SELECT id FROM tickstep_schedules WHERE id <> $1 \
             FOR UPDATE SKIP LOCKED) AS s",
            &[&middle],
        )
        .unwrap()
        .get(0);
    assert!(
        free < 49,
        "the update held some rows before it waited ({free} were free)"
    );
    tx.execute(
        "SELECT 1 FROM tickstep_schedules WHERE id <> $1 FOR UPDATE",
        &[&middle],
    )
    .unwrap();
    let rows_before_retry: i64 = tx
        .query_one("SELECT sum(run_count)::bigint FROM tickstep_schedules", &[])
        .unwrap()
        .get(0);
    assert_eq!(rows_before_retry, 0, "the aborted write applied nothing");
    tx.commit().unwrap();
    h.engine.wait_for_writes().unwrap();
    assert_eq!(
        h.tick().started,
        50,
        "the firings start once their write is in"
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while deadlocks(&mut watcher) == before {
        assert!(Instant::now() < deadline, "the server reported no deadlock");
        std::thread::yield_now();
    }
    assert_eq!(
        store.count("SELECT COUNT(*) FROM schedules WHERE run_count = 1"),
        50,
        "the retried write recorded each firing once"
    );
    for id in ids {
        let info = h.info(id);
        assert_eq!((info.run_count, info.fault_count), (1, 0), "{id:?}");
    }
}
