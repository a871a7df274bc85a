//! Reading a schedule store the way an operator does, through the schedules crate's
//! [`Inspector`]: opened read-only, so it works while a demo (or any engine) is writing it — WAL
//! gives readers a consistent snapshot without blocking the writer; a `postgres://` URL is read
//! in a read-only session beside the engines on that database. Locations are shown without
//! their password ([`shown`]). The schema, its version check
//! and the row decoding all live in `tickstep-schedules`; this module only words the errors for a
//! terminal and shapes a [`StoredSchedule`] as the `schedule_info` map
//! of docs/schedules.md §9.1.

use std::path::Path;

use serde_json::{Value as Json, json};
use tickstep::kernel::ErrorChain;
use tickstep::schedules::{
    Error, FiringRecord, Inspector, ScheduleId, StoredSchedule, Value, display_location,
    is_server_location,
};

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

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

fn value_json(value: &Value) -> Json {
    // The store wrote these values as JSON, so they encode again (NaN never reaches it).
    serde_json::to_value(value).unwrap_or(Json::Null)
}

/// The `schedule_info` shape of docs/schedules.md §9.2: times as float Unix seconds (0.0 for
/// never), durations as integer nanoseconds, absent values as 0.
pub(crate) fn to_json(s: &StoredSchedule) -> Json {
    json!({
        "id": s.id.get(),
        "target": s.target.0,
        "verb": s.verb,
        "args": s.args.iter().map(value_json).collect::<Vec<_>>(),
        "owner": s.owner.0,
        "authority": s.owner.0,
        "kind": s.kind.as_str(),
        "interval": secs(s.interval_ns),
        "created_at": secs(s.created_unix_nanos),
        "next_run": secs(s.fire_at_unix_nanos),
        "last_run": secs(s.last_run_unix_nanos),
        "run_count": s.run_count,
        "fault_count": s.fault_count,
        "consecutive_faults": s.consecutive_faults,
        "last_fault": s.last_fault.as_ref().map_or(json!(0), |f| {
            json!({ "kind": f.kind.as_str(), "value": value_json(&f.value) })
        }),
        "missed_count": s.missed_count,
        "overlap_count": s.overlap_count,
        "last_duration_ns": s.last_duration_ns,
        "running_task": s.running.first().map_or(0, |r| r.run.0),
        "interval_clamped": s.interval_clamped,
        "adaptive": s.adaptive,
        "catchup": s.catchup.as_str(),
        "overlap": s.overlap.as_str(),
        "jitter": secs(s.jitter_ns),
        "max_faults": s.max_faults,
        "pass_elapsed": s.pass_elapsed,
        "persist": true,
        "player": s.player.0,
        "state": s.state.as_ref().map_or(json!(0), value_json),
        "key": s.key.as_deref().unwrap_or(""),
        "paused": s.pause.is_some(),
        "paused_by": s.pause.as_ref().map_or(0, |p| p.by.0),
        "paused_at": s.pause.as_ref().map_or(0.0, |p| p.at),
        "pause_note": s.pause.as_ref().map_or("", |p| p.note.as_str()),
        "paused_missed": s.paused_missed,
        "trigger_pending": s.trigger_pending,
        "backfill": s.backfill_unix_nanos.map_or(json!(0), |(next, last)| json!([secs(next), secs(last)])),
        "cron": s.calendar.as_ref().map_or("", |c| c.expr.as_str()),
        "zone": s.calendar.as_ref().map_or("", |c| c.zone.as_str()),
        "dst_gap": s.calendar.as_ref().map_or("", |c| c.dst.gap.as_str()),
        "dst_fold": s.calendar.as_ref().map_or("", |c| c.dst.fold.as_str()),
    })
}

/// One history record as `schedule_info`'s `history` shows it (docs/schedules.md §9.2).
pub(crate) fn record_json(r: &FiringRecord) -> Json {
    json!({
        "started": r.started,
        "ended": r.ended,
        "nominal": r.nominal,
        "outcome": r.outcome(),
        "fault": r.fault.as_ref().map_or(json!(0), |f| {
            json!({ "kind": f.kind.as_str(), "value": value_json(&f.value) })
        }),
    })
}
