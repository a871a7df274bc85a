//! What only the `PostgreSQL` store has to prove: the tick never waits for the database, a lost
//! connection is survived without losing a write, and bad locations and foreign databases are
//! refused or left alone. (Everything both stores must do is in `store.rs`, on both.)

mod common;

use common::Host;
use common::stores::Store;
use tickstep_kernel::clock::ManualClock;
use tickstep_schedules::{Error, Options, Schedules};

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
    let h = Host::open(store.path(), ManualClock::new());
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
    assert_eq!(report.started, 3, "the firings went ahead");
    assert_eq!(h.fired(), 3);
    locker
        .batch_execute("SELECT 1")
        .expect("the lock was still held when the tick returned");
    locker.batch_execute("COMMIT").unwrap();
    h.engine.wait_for_writes().unwrap();
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
    // Versions 1 and 4 (the numbers of the changes this build knows), each recorded once.
    assert_eq!(store.count("SELECT COUNT(*) FROM schema_migrations"), 2);
    assert_eq!(store.count("SELECT SUM(version) FROM schema_migrations"), 5);
}
