//! The back ends the integration suite runs on, and [`on_both_stores!`] / [`on_every_store!`],
//! which turn one test body into a `sqlite` and a `postgres` test (and a `memory` one).
//!
//! A test written with it gets a [`Store`]: a location to open (a file path or a `postgres://`
//! URL, both given to `Schedules::open` as they are) and a way to read the stored rows with SQL,
//! as an operator would. Table names are written as the `SQLite` store spells them
//! (`schedules`, `schema_migrations`); [`Store::sql`] maps them to the `PostgreSQL` store's
//! prefixed tables. The `postgres` half skips (saying why) when there is no server, unless
//! `TICKSTEP_REQUIRE_PG=1`.
#![allow(dead_code, unreachable_pub)]

use std::path::Path;

/// One store a test runs on.
pub struct Store {
    location: String,
    kind: Kind,
    _dir: Option<tempfile::TempDir>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// No store: `Schedules::in_memory`.
    Memory,
    Sqlite,
    Postgres,
}

impl Store {
    /// No store at all: the engine runs in memory.
    pub fn memory() -> Store {
        Store {
            location: String::new(),
            kind: Kind::Memory,
            _dir: None,
        }
    }

    /// A fresh `SQLite` file in a temp directory.
    pub fn sqlite() -> Store {
        let dir = tempfile::tempdir().unwrap();
        let location = dir
            .path()
            .join("schedules.db")
            .to_str()
            .unwrap()
            .to_string();
        Store {
            location,
            kind: Kind::Sqlite,
            _dir: Some(dir),
        }
    }

    /// The `PostgreSQL` database at `url` (fresh, from `pg_or_skip!`).
    pub fn postgres(url: String) -> Store {
        Store {
            location: url,
            kind: Kind::Postgres,
            _dir: None,
        }
    }

    /// The store at `location`, as given to a child process: a `postgres://` URL or a file path
    /// (which the caller keeps alive).
    pub fn at(location: &str) -> Store {
        let kind = if tickstep_schedules::is_server_location(Path::new(location)) {
            Kind::Postgres
        } else {
            Kind::Sqlite
        };
        Store {
            location: location.to_string(),
            kind,
            _dir: None,
        }
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// What `Schedules::open` is given.
    pub fn path(&self) -> &Path {
        Path::new(&self.location)
    }

    /// `sql` with the `SQLite` store's table names mapped to this store's.
    pub fn sql(&self, sql: &str) -> String {
        match self.kind {
            Kind::Memory | Kind::Sqlite => sql.to_string(),
            Kind::Postgres => sql
                .replace("schema_migrations", "tickstep_schema_migrations")
                .replace("FROM schedules", "FROM tickstep_schedules")
                .replace("UPDATE schedules", "UPDATE tickstep_schedules"),
        }
    }

    /// The first column of the first row of `sql`, an integer (`NULL` reads as 0).
    pub fn count(&self, sql: &str) -> i64 {
        let sql = self.sql(sql);
        match self.kind {
            Kind::Memory => panic!("an in-memory engine has no rows to count"),
            Kind::Sqlite => {
                let conn = rusqlite::Connection::open(&self.location).unwrap();
                conn.query_row(&sql, [], |r| r.get::<_, Option<i64>>(0))
                    .unwrap()
                    .unwrap_or(0)
            }
            Kind::Postgres => {
                let mut client =
                    postgres::Client::connect(&self.location, postgres::NoTls).unwrap();
                // SUM over BIGINT is NUMERIC in PostgreSQL: read every answer as a BIGINT.
                let row = client
                    .query_one(&format!("SELECT ({sql})::bigint"), &[])
                    .unwrap();
                row.get::<_, Option<i64>>(0).unwrap_or(0)
            }
        }
    }

    /// Every row of `sql`, two integer columns each.
    pub fn pairs(&self, sql: &str) -> Vec<(i64, i64)> {
        self.rows(sql)
    }

    /// Every row of `sql`, an integer and a text column each.
    pub fn texts(&self, sql: &str) -> Vec<(i64, String)> {
        self.rows(sql)
    }

    /// Every row of `sql`: an integer column and a `T` column.
    fn rows<T>(&self, sql: &str) -> Vec<(i64, T)>
    where
        T: rusqlite::types::FromSql + for<'a> postgres::types::FromSql<'a>,
    {
        let sql = self.sql(sql);
        match self.kind {
            Kind::Memory => panic!("an in-memory engine has no rows to read"),
            Kind::Sqlite => {
                let conn = rusqlite::Connection::open(&self.location).unwrap();
                let mut stmt = conn.prepare(&sql).unwrap();
                stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect()
            }
            Kind::Postgres => postgres::Client::connect(&self.location, postgres::NoTls)
                .unwrap()
                .query(&sql, &[])
                .unwrap()
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect(),
        }
    }

    /// Ends, as if its node were paused past it, the lease of every node whose lease runs more
    /// than a minute ahead: a test's long-lease node ([`Host::with_lease`](super::Host::with_lease)).
    pub fn lapse_long_leases(&self) {
        self.execute(
            "UPDATE tickstep_nodes SET lease_until = now() - interval '1 second' \
             WHERE lease_until > now() + interval '1 minute'",
        );
    }

    /// Runs `sql` (statements, no results) beside the engine.
    pub fn execute(&self, sql: &str) {
        let sql = self.sql(sql);
        match self.kind {
            Kind::Memory => panic!("an in-memory engine has no database"),
            Kind::Sqlite => rusqlite::Connection::open(&self.location)
                .unwrap()
                .execute_batch(&sql)
                .unwrap(),
            Kind::Postgres => postgres::Client::connect(&self.location, postgres::NoTls)
                .unwrap()
                .batch_execute(&sql)
                .unwrap(),
        }
    }
}

/// The one expansion behind [`on_both_stores!`] and [`on_every_store!`]: a module `name` whose
/// tests run `body` with `store: &Store` on a fresh store of each kind listed (`memory` first
/// when asked for), so the two macros cannot drift apart.
#[macro_export]
macro_rules! on_stores {
    ([$($memory:ident)?] $(#[$meta:meta])* fn $name:ident($store:ident) $body:block) => {
        $(#[$meta])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            fn body($store: &$crate::common::stores::Store) $body

            $(
                #[test]
                fn $memory() {
                    body(&$crate::common::stores::Store::memory());
                }
            )?

            #[test]
            fn sqlite() {
                body(&$crate::common::stores::Store::sqlite());
            }

            #[test]
            fn postgres() {
                let url = $crate::pg_or_skip!(stringify!($name));
                body(&$crate::common::stores::Store::postgres(url));
            }
        }
    };
}

/// `on_both_stores! { fn name(store) { body } }`: a module `name` with a test `sqlite` and a
/// test `postgres`, each running `body` with `store: &Store` on a fresh store of its kind.
#[macro_export]
macro_rules! on_both_stores {
    ($($test:tt)*) => {
        $crate::on_stores!([] $($test)*);
    };
}

/// `on_every_store! { fn name(store) { body } }`: like [`on_both_stores!`], plus a `memory` test on
/// an engine with no store — for behaviour that must not depend on the store at all.
#[macro_export]
macro_rules! on_every_store {
    ($($test:tt)*) => {
        $crate::on_stores!([memory] $($test)*);
    };
}

/// Drops a test's `PostgreSQL` database when the guard goes out of scope, the test passed or
/// not (any other store: nothing). For tests whose children fill a database with rows the shared
/// server would otherwise keep.
pub struct DroppedAtEnd<'a>(pub &'a Store);

impl Drop for DroppedAtEnd<'_> {
    fn drop(&mut self) {
        if self.0.kind() == Kind::Postgres {
            super::pg::drop_database(self.0.path().to_str().unwrap());
        }
    }
}
