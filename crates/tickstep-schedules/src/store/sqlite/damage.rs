//! Telling SQLite's "this file is damaged" apart from other failures, and wording it.

use std::path::Path;

use rusqlite::ErrorCode;

use crate::Error;

/// Whether `e` is SQLite saying the file is damaged.
pub(crate) fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    )
}

/// `e` as [`Error::NotAStore`] when it is `SQLite` calling the file "not a database": the
/// first read of a file that is not `SQLite` at all (or whose header `SQLite` cannot read) says
/// so, before anything is written. Asked before [`is_damage`], which counts it as damage once a
/// file was known to be a database (docs/schedules.md §11.9, §11.45).
pub(crate) fn not_sqlite(path: &Path, e: &rusqlite::Error) -> Option<Error> {
    (e.sqlite_error_code() == Some(ErrorCode::NotADatabase)).then(|| Error::NotAStore {
        path: path.to_path_buf(),
        detail: "not a SQLite database (SQLite finds no database header in it)".into(),
    })
}

/// `e` as [`Error::Damaged`] when SQLite says the file is damaged, else as a store failure.
pub(crate) fn store_error(path: &Path, context: &'static str, e: rusqlite::Error) -> Error {
    if is_damage(&e) {
        damaged(path, e.to_string())
    } else {
        Error::Store { context, source: e }
    }
}

pub(crate) fn damaged(path: &Path, detail: String) -> Error {
    Error::Damaged {
        path: path.to_path_buf(),
        detail,
    }
}
