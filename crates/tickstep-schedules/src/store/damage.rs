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
