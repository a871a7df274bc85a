//! What opening a store file checks before anything writes to it (docs/schedules.md §11.9,
//! §11.10).
//!
//! A file is looked at through a read-only connection first, and refused — with nothing written,
//! not even the switch to WAL — when it is:
//!
//! * **not SQLite** (its first read, SQLite's, finds no database header): [`Error::NotAStore`];
//! * **damaged** (SQLite reads it as a database, then calls it corrupt, or `quick_check` finds a
//!   problem): [`Error::Damaged`], naming the file and the `sqlite3 FILE .recover` way out;
//! * **another application's** (tables that are not the store's, or another `application_id`),
//!   unless the caller opted in to sharing the file: [`Error::NotAStore`];
//! * **from a newer build** (a schema version above this build's): [`Error::SchemaTooNew`].
//!
//! Nothing here opens the file but `SQLite`: whether anything is there is asked with `stat`,
//! and what it is, of `SQLite`. A descriptor of our own, closed, would drop every POSIX lock the
//! process holds on the file, an engine's in the same process included (docs/schedules.md
//! §11.45).
//!
//! # `quick_check`
//!
//! `PRAGMA quick_check` reads every page of the file: 0.51 s on a 1M-schedule store, a quarter more
//! on top of the 1.9 s open (the bench's `quick_check_1m` and `load_1m` rows, full run). Opening
//! runs it only when it is about to write before loading — a migration (here) or the first switch
//! to WAL (asked of the read-write connection, just before the switch) — because then a damage found later by the load would
//! come too late to leave the file untouched. A store that is already current and in WAL mode is
//! not written before the load, and the load reads every schedule row: a damaged page it meets
//! refuses the open with [`Error::Damaged`] just the same, with nothing written, at no extra cost.

use std::path::Path;

use rusqlite::{Connection, ErrorCode, OpenFlags};

pub(crate) use super::damage::{damaged, is_damage, not_sqlite, store_error};
use super::sqlite_schema::{APPLICATION_ID, CURRENT_VERSION, OWN_TABLES};
use crate::Error;

/// What a file turned out to be.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Verdict {
    /// No file, an empty one, or a database with no tables: the store creates its schema.
    pub(crate) fresh: bool,
    /// The store's schema version in the file (0 when it has none yet).
    pub(crate) version: i64,
    /// The file holds another application's tables (the caller opted in).
    pub(crate) shared: bool,
    /// `PRAGMA quick_check` already passed (the file is about to be migrated). Whether it must
    /// also run before the switch to WAL is asked of the read-write connection, which reads the
    /// journal mode from the file's header (an `immutable` connection always reports the
    /// rollback journal).
    pub(crate) checked: bool,
}

/// What the file system says is at a store's path, asked with `stat` alone: the file is
/// `SQLite`'s (and its locks are), so nothing here opens it (docs/schedules.md §11.45).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Found {
    /// No file, or an empty one: a store is created in it.
    Nothing,
    /// A file with bytes in it, for `SQLite` to read.
    File,
}

/// Whether there is a file with bytes in it at `path`, by `stat`; never opens it.
pub(crate) fn look(path: &Path) -> Result<Found, Error> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.len() == 0 => Ok(Found::Nothing),
        Ok(_) => Ok(Found::File),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Found::Nothing),
        Err(e) => Err(Error::NotAStore {
            path: path.to_path_buf(),
            detail: format!("cannot be read: {e}"),
        }),
    }
}

/// Looks at the file read-only and refuses what must not be touched.
pub(crate) fn examine(path: &Path, share_file: bool) -> Result<Verdict, Error> {
    if look(path)? == Found::Nothing {
        return Ok(Verdict {
            fresh: true,
            version: 0,
            shared: false,
            checked: false,
        });
    }
    let conn = open_untouched(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(|e| store_error(path, "setting the busy timeout", e))?;
    let read = |e| store_error(path, "examining the store", e);
    // The first read of the file: SQLite's answer tells a file that is not SQLite at all.
    let app_id: i64 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(|e| not_sqlite(path, &e).unwrap_or_else(|| read(e)))?;
    let tables: Vec<String> = {
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .map_err(read)?;
        stmt.query_map([], |r| r.get(0))
            .map_err(read)?
            .collect::<Result<_, _>>()
            .map_err(read)?
    };
    let foreign: Vec<&str> = tables
        .iter()
        .map(String::as_str)
        .filter(|t| !OWN_TABLES.contains(t))
        .collect();
    let shared = !foreign.is_empty() || (app_id != 0 && app_id != APPLICATION_ID);
    if shared && !share_file {
        let detail = if foreign.is_empty() {
            format!("its application_id is {app_id:#x}, another application's")
        } else {
            format!(
                "it holds another application's tables ({})",
                foreign.join(", ")
            )
        };
        return Err(Error::NotAStore {
            path: path.to_path_buf(),
            detail: format!(
                "{detail}; nothing was written. Point tickstep at a file of its own, or opt in to \
                 sharing this one (Config::share_file)"
            ),
        });
    }
    let version: i64 = if tables.iter().any(|t| t == "schema_migrations") {
        conn.query_row(
            "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
            [],
            |r| r.get(0),
        )
        .map_err(
            |e| match store_error(path, "reading the schema version", e) {
                Error::Store { source, .. } if !is_damage(&source) && !is_busy(&source) => {
                    Error::NotAStore {
                        path: path.to_path_buf(),
                        detail: format!("its schema_migrations table is not tickstep's: {source}"),
                    }
                }
                other => other,
            },
        )?
    } else {
        0
    };
    if version > CURRENT_VERSION {
        return Err(Error::SchemaTooNew {
            found: version,
            supported: CURRENT_VERSION,
        });
    }
    let fresh = tables.is_empty();
    let checked = !fresh && version < CURRENT_VERSION;
    if checked {
        quick_check(&conn, path)?;
    }
    Ok(Verdict {
        fresh,
        version,
        shared,
        checked,
    })
}

/// A read-only connection that leaves the directory as it found it. With no `-wal` file beside
/// the database, no connection has it open in WAL mode, so it is opened `immutable` (no `-wal` or
/// `-shm` created, no locks taken); otherwise an engine is running on it and the ordinary
/// read-only connection shares that engine's WAL files, creating nothing.
fn open_untouched(path: &Path) -> Result<Connection, Error> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let context = "opening the store read-only";
    if Path::new(&wal).exists() {
        return Connection::open_with_flags(path, flags).map_err(|e| store_error(path, context, e));
    }
    let Some(text) = path.to_str() else {
        return Connection::open_with_flags(path, flags).map_err(|e| store_error(path, context, e));
    };
    let uri = format!("file:{}?immutable=1", uri_escape(text));
    Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI)
        .map_err(|e| store_error(path, context, e))
}

/// Percent-encodes the characters a `file:` URI path may not hold as they are.
fn uri_escape(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3F"),
            '#' => out.push_str("%23"),
            _ => out.push(c),
        }
    }
    out
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

fn damaged_or_store(path: &Path, e: rusqlite::Error) -> Error {
    if is_damage(&e) {
        damaged(path, format!("quick_check: {e}"))
    } else {
        Error::Store {
            context: "checking the store",
            source: e,
        }
    }
}

/// `PRAGMA quick_check`: refuses the file with the first problems SQLite lists.
pub(crate) fn quick_check(conn: &Connection, path: &Path) -> Result<(), Error> {
    let read = |e: rusqlite::Error| damaged_or_store(path, e);
    let mut stmt = conn.prepare("PRAGMA quick_check(5)").map_err(read)?;
    let lines: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .map_err(read)?
        .collect::<Result<_, _>>()
        .map_err(read)?;
    if lines.len() == 1 && lines[0] == "ok" {
        return Ok(());
    }
    Err(damaged(path, format!("quick_check: {}", lines.join("; "))))
}
