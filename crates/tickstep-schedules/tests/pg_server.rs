//! The throwaway `PostgreSQL` server the store tests run on (`common/pg.rs`): it starts, gives each
//! test a database of its own, and stops when its owner drops it.

mod common;

use common::pg;

fn count_tables(url: &str) -> i64 {
    let mut client = postgres::Client::connect(url, postgres::NoTls).expect("connect");
    client
        .query_one(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'",
            &[],
        )
        .expect("count")
        .get(0)
}

#[test]
fn each_test_gets_an_empty_database_of_its_own() {
    let first = pg_or_skip!("own_database_first");
    let second = pg_or_skip!("own_database_second");
    assert_ne!(first, second);
    let mut client = postgres::Client::connect(&first, postgres::NoTls).expect("connect");
    client
        .batch_execute("CREATE TABLE mine (x BIGINT)")
        .expect("create");
    assert_eq!(count_tables(&first), 1);
    assert_eq!(count_tables(&second), 0, "the other database is untouched");
}

#[test]
fn a_server_owned_by_a_test_stops_when_dropped() {
    if std::env::var(pg::URL_VAR).is_ok() {
        eprintln!(
            "skipped: {} names a server this test must not stop",
            pg::URL_VAR
        );
        return;
    }
    let server = match pg::Server::start() {
        Ok(s) => s,
        Err(why) if !pg::required() => {
            eprintln!("skipped: no PostgreSQL: {why}");
            return;
        }
        Err(why) => panic!("{}=1 but no PostgreSQL: {why}", pg::REQUIRE_VAR),
    };
    assert!(server.is_throwaway());
    let url = server.create_database("owned").expect("database");
    assert_eq!(count_tables(&url), 0);
    drop(server);
    assert!(
        postgres::Client::connect(&url, postgres::NoTls).is_err(),
        "the server is gone"
    );
}

#[test]
fn database_urls_keep_credentials_host_and_parameters() {
    assert_eq!(
        pg::with_database("postgres://u:p@h:5/app?sslmode=disable", "t1"),
        "postgres://u:p@h:5/t1?sslmode=disable"
    );
    assert_eq!(pg::with_database("postgres://h", "t2"), "postgres://h/t2");
    assert_eq!(
        pg::redact("postgres://u:secret@h/db"),
        "postgres://u:***@h/db"
    );
    assert_eq!(pg::redact("postgres://u@h/db"), "postgres://u@h/db");
}
