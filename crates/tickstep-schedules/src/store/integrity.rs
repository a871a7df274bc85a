//! What opening a store file checks before anything writes to it (docs/schedules.md §11.9,
//! §11.10).
//!
//! A file is looked at through a read-only connection first, and refused — with nothing written,
//! not even the switch to WAL — when it is:
//!
//! * **not SQLite** (the first 16 bytes are not SQLite's header): [`Error::NotAStore`];
//! * **damaged** (SQLite's header, but SQLite calls it corrupt or not a database, or `quick_check`
//!   finds a problem): [`Error::Damaged`], naming the file and the `sqlite3 FILE .recover` way out;
//! * **another application's** (tables that are not the store's, or another `application_id`),
//!   unless the caller opted in to sharing the file: [`Error::NotAStore`];
//! * **from a newer build** (a schema version above this build's): [`Error::SchemaTooNew`].
//!
//! # `quick_check`
//!
//! `PRAGMA quick_check` reads every page of the file: 0.51 s on a 1M-schedule store, a quarter more
//! on top of the 1.9 s open (the bench's `quick_check_1m` and `load_1m` rows, full run). Opening runs it only when it is about to write before loading —
//! a migration or the first switch to WAL — because then a damage found later by the load would
//! come too late to leave the file untouched. A store that is already current and in WAL mode is
//! not written before the load, and the load reads every schedule row: a damaged page it meets
//! refuses the open with [`Error::Damaged`] just the same, with nothing written, at no extra cost.

use std::io::Read as _;
use std::path::Path;

use rusqlite::{Connection, ErrorCode, OpenFlags};

pub(crate) use super::damage::{damaged, is_damage, store_error};
use super::schema::{APPLICATION_ID, CURRENT_VERSION, OWN_TABLES};
use crate::Error;

/// SQLite's file header.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// What a file turned out to be.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Verdict {
    /// No file, an empty one, or a database with no tables: the store creates its schema.
    pub(crate) fresh: bool,
    /// The store's schema version in the file (0 when it has none yet).
    pub(crate) version: i64,
    /// The file holds another application's tables (the caller opted in).
    pub(crate) shared: bool,
    /// The file is already in WAL mode (read from its header: an `immutable` connection always
    /// reports the rollback journal).
    pub(crate) wal: bool,
}

/// What the first bytes of a file say.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Header {
    /// No file, or an empty one: a store is created in it.
    Absent,
    /// SQLite's header; `wal` from its file-format bytes (offsets 18 and 19 are 2 in WAL mode).
    Sqlite { wal: bool },
}

/// Refuses a file that is there but is not SQLite, without opening it as a database.
pub(crate) fn check_header(path: &Path) -> Result<Header, Error> {
    let unreadable = |e: std::io::Error| Error::NotAStore {
        path: path.to_path_buf(),
        detail: format!("cannot be read: {e}"),
    };
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Header::Absent),
        Err(e) => return Err(unreadable(e)),
    };
    let mut head = Vec::with_capacity(20);
    file.by_ref()
        .take(20)
        .read_to_end(&mut head)
        .map_err(unreadable)?;
    if head.is_empty() {
        return Ok(Header::Absent);
    }
    if !head.starts_with(SQLITE_MAGIC) {
        return Err(Error::NotAStore {
            path: path.to_path_buf(),
            detail: "not a SQLite database (the file does not start with SQLite's header)".into(),
        });
    }
    // A header cut short is damage SQLite itself reports when the file is opened.
    Ok(Header::Sqlite {
        wal: head.get(18..20) == Some(&[2, 2]),
    })
}

/// Looks at the file read-only and refuses what must not be touched.
pub(crate) fn examine(path: &Path, share_file: bool) -> Result<Verdict, Error> {
    let wal = match check_header(path)? {
        Header::Absent => {
            return Ok(Verdict {
                fresh: true,
                version: 0,
                shared: false,
                wal: false,
            });
        }
        Header::Sqlite { wal } => wal,
    };
    let conn = open_untouched(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(|e| store_error(path, "setting the busy timeout", e))?;
    let read = |e| store_error(path, "examining the store", e);
    let app_id: i64 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(read)?;
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
    if !fresh && (version < CURRENT_VERSION || !wal) {
        quick_check(&conn, path)?;
    }
    Ok(Verdict {
        fresh,
        version,
        shared,
        wal,
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
