//! Reading a schedule store the way an operator does, through the schedules crate's
//! [`Inspector`]: opened read-only, so it works while a demo (or any engine) is writing it — WAL
//! gives readers a consistent snapshot without blocking the writer; a `postgres://` URL is read
//! in a read-only session beside the engines on that database. Locations are shown without
//! their password ([`shown`]). The schema, its version check
//! and the row decoding all live in `tickstep-schedules`; this module only words the errors for a
//! terminal. A saved schedule is shaped as the `schedule_info` map of docs/schedules.md §9.1 by
//! `tickstep::dashboard::info_json`, which the dashboard shows too.

use std::path::Path;

use tickstep::kernel::ErrorChain;
use tickstep::schedules::{Error, Inspector, ScheduleId, display_location, is_server_location};

/// `path` as it may be printed: a URL's password is replaced by `***`.
pub(crate) fn shown(path: &Path) -> String {
    display_location(path)
}

/// Opens `path` read-only; refuses a missing file (without creating it), a file or database that
/// is not a store and a newer schema.
pub(crate) fn open(path: &Path) -> Result<Inspector, String> {
    require_file(path)?;
    Inspector::open(path).map_err(|e| explain(path, &e))
}

/// Removes a saved schedule durably, as `schedule_stop` does for a live one; whether it existed.
pub(crate) fn stop(path: &Path, id: u64) -> Result<bool, String> {
    require_file(path)?;
    Inspector::stop(path, ScheduleId::from_raw(id)).map_err(|e| explain(path, &e))
}

/// Pauses a saved schedule as the store's operator (docs/schedules.md §9.12); whether it changed.
pub(crate) fn pause(path: &Path, id: u64, note: &str) -> Result<bool, String> {
    require_file(path)?;
    Inspector::pause(path, ScheduleId::from_raw(id), note).map_err(|e| explain(path, &e))
}

/// Resumes a saved schedule; whether it was paused.
pub(crate) fn resume(path: &Path, id: u64) -> Result<bool, String> {
    require_file(path)?;
    Inspector::resume(path, ScheduleId::from_raw(id)).map_err(|e| explain(path, &e))
}

/// Asks for one firing of a saved schedule now; whether none was waiting.
pub(crate) fn trigger(path: &Path, id: u64) -> Result<bool, String> {
    require_file(path)?;
    Inspector::trigger(path, ScheduleId::from_raw(id)).map_err(|e| explain(path, &e))
}

/// Backfills a saved schedule over a past range; how many points.
pub(crate) fn backfill(path: &Path, id: u64, from: f64, to: f64) -> Result<u64, String> {
    require_file(path)?;
    Inspector::backfill(path, ScheduleId::from_raw(id), from, to).map_err(|e| explain(path, &e))
}

/// A missing file is refused before the inspector runs (which would say the same less kindly);
/// a server URL is checked by connecting.
fn require_file(path: &Path) -> Result<(), String> {
    if is_server_location(path) || path.exists() {
        return Ok(());
    }
    Err(format!(
        "no schedule store at {} (run `tickstep demo --db {}` to create one)",
        shown(path),
        shown(path)
    ))
}

/// The error with the file named once: a damaged store's message already names it and says how
/// to recover it; a foreign file's names it and its tables; a newer store's names both versions.
fn explain(path: &Path, e: &Error) -> String {
    match e {
        Error::NotAStore { .. } | Error::Damaged { .. } => e.to_string(),
        Error::SchemaTooNew { .. } => format!(
            "{}: {e}; upgrade tickstep to read it (nothing was changed)",
            shown(path)
        ),
        _ => format!("{}: {}", shown(path), ErrorChain(e)),
    }
}
