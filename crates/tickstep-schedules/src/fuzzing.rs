//! Entry points for the fuzz targets in the project's `fuzz/` folder, compiled only with the
//! `fuzzing` feature. Not part of the API: hidden from the docs and free to change.
//!
//! [`load_row`] puts arbitrary values in every column of one stored row, decodes it with the
//! store's own codec, and loads what decodes into an in-memory engine that then ticks — the path
//! a store file handed in by a disk or an operator takes at open.

use std::cell::RefCell;
use std::fmt::Write as _;

use rusqlite::Connection;
use rusqlite::types::Value as Sql;
use tickstep_kernel::clock::ManualClock;

use crate::OpenWorld;
use crate::testkit::CountingRunner;
use crate::{Config, Error, Outcome, Schedules, Value};

/// How many columns a stored row has.
pub const COLUMNS: usize = 39;

/// One column's stored value.
#[derive(Clone, Debug)]
pub enum Column {
    /// SQL `NULL`.
    Null,
    /// An integer.
    Int(i64),
    /// A real.
    Real(f64),
    /// Raw bytes stored as TEXT (not necessarily UTF-8).
    Text(Vec<u8>),
    /// A BLOB.
    Blob(Vec<u8>),
}

thread_local! {
    static CONN: RefCell<Connection> =
        RefCell::new(Connection::open_in_memory().expect("an in-memory database opens"));
}

fn select_sql() -> String {
    let mut sql = String::from("SELECT ");
    for i in 1..=COLUMNS {
        if i > 1 {
            sql.push_str(", ");
        }
        let flag = i + COLUMNS;
        let _ = write!(
            sql,
            "CASE WHEN ?{flag} THEN CAST(?{i} AS TEXT) ELSE ?{i} END"
        );
    }
    sql
}

/// Decodes `columns` (at most [`COLUMNS`]; missing ones are NULL) as a stored row and, when it
/// decodes, loads it into an in-memory engine whose clock reads `now_unix_nanos`, then ticks
/// three times a second apart, reporting every firing's outcome. Returns how many firings
/// started.
///
/// # Errors
///
/// The codec's refusal of the row ([`Error::Store`] naming the bad column).
///
/// # Panics
///
/// Only on a bug: that is what the fuzzer looks for.
pub fn load_row(columns: &[Column], now_unix_nanos: u64) -> Result<usize, Error> {
    let row = CONN.with(|conn| {
        let conn = conn.borrow();
        let mut stmt = conn
            .prepare_cached(&select_sql())
            .expect("the probe statement prepares");
        let mut params: Vec<Sql> = Vec::with_capacity(2 * COLUMNS);
        let mut flags: Vec<Sql> = Vec::with_capacity(COLUMNS);
        for i in 0..COLUMNS {
            let (value, as_text) = match columns.get(i).cloned().unwrap_or(Column::Null) {
                Column::Null => (Sql::Null, false),
                Column::Int(n) => (Sql::Integer(n), false),
                Column::Real(x) => (Sql::Real(x), false),
                Column::Text(bytes) => (Sql::Blob(bytes), true),
                Column::Blob(bytes) => (Sql::Blob(bytes), false),
            };
            params.push(value);
            flags.push(Sql::Integer(i64::from(as_text)));
        }
        params.extend(flags);
        stmt.query_row(
            rusqlite::params_from_iter(params),
            crate::store::sqlite::columns::decode,
        )
        .map_err(|source| Error::Store {
            context: "decoding a fuzzed row",
            source,
        })
    })?;
    // The wall clock stays clear of the end of u64 so the test clock itself never overflows.
    let clock = ManualClock::starting_at_unix_nanos(now_unix_nanos % (1 << 62));
    let runner = CountingRunner::default();
    let engine = Schedules::in_memory(clock.clone(), OpenWorld, runner.clone(), Config::default());
    engine.load_rows_for_fuzzing(vec![row]);
    let mut started = 0;
    let mut runs = Vec::new();
    for _ in 0..3 {
        started += engine
            .tick()
            .expect("an in-memory tick cannot fail")
            .started;
        runs.clear();
        runner.drain_started_into(&mut runs);
        for &run in &runs {
            engine.report(run, Outcome::Returned(Value::Int(1)));
        }
        let _ = engine.schedules_info_for_fuzzing();
        clock.advance(std::time::Duration::from_secs(1));
    }
    Ok(started)
}
