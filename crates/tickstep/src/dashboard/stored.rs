//! A saved schedule as the `schedule_info` map of docs/schedules.md §9.1, in JSON: what
//! `tickstep schedules info --json` prints and what a store's dashboard shows in a detail view
//! (one shaping for both).

use serde_json::{Value as Json, json};

use crate::schedules::{FiringRecord, StoredSchedule, Value};

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

fn value_json(value: &Value) -> Json {
    // The store wrote these values as JSON, so they encode again (NaN never reaches it).
    serde_json::to_value(value).unwrap_or(Json::Null)
}

/// The `schedule_info` shape of docs/schedules.md §9.2: times as float Unix seconds (0.0 for
/// never), durations as integer nanoseconds, absent values as 0.
///
/// ```
/// # use tickstep::schedules::{Inspector, ObjId, Options};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("s.db");
/// let rt = tickstep::Runtime::builder().store_path(&path).build().unwrap();
/// rt.verb("ring", |_| Ok(tickstep::schedules::Value::Int(0)));
/// let mut txn = rt.schedules().begin(ObjId(1));
/// let id = txn.schedule_every(ObjId(1), "ring", 60.0, vec![], Options::new()).unwrap();
/// txn.commit().unwrap();
/// rt.shutdown().unwrap();
/// let saved = Inspector::open(&path).unwrap().get(id).unwrap().unwrap();
/// let info = tickstep::dashboard::info_json(&saved);
/// assert_eq!(info["verb"], "ring");
/// assert_eq!(info["interval"], 60.0);
/// assert_eq!(info["namespace"], tickstep::host::program_namespace().as_str());
/// ```
pub fn info_json(s: &StoredSchedule) -> Json {
    let mut info = fields_json(s);
    // The application it belongs to (docs/schedules.md §15.5): the store's, not the engine's,
    // so `schedule_info` has no such field.
    info["namespace"] = Json::from(s.namespace.as_str());
    info
}

/// The fields `schedule_info` has, from a stored schedule.
fn fields_json(s: &StoredSchedule) -> Json {
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
///
/// ```
/// # use tickstep::schedules::{Inspector, ObjId, Options};
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("s.db");
/// let clock = tickstep::kernel::ManualClock::new();
/// let rt = tickstep::Runtime::builder().manual_clock(clock).store_path(&path).build().unwrap();
/// rt.verb("ring", |_| Ok(tickstep::schedules::Value::Int(0)));
/// let mut txn = rt.schedules().begin(ObjId(1));
/// let id = txn.schedule_every(ObjId(1), "ring", 1.0, vec![], Options::new()).unwrap();
/// txn.commit().unwrap();
/// rt.run_for(std::time::Duration::from_millis(1500)).unwrap();
/// rt.shutdown().unwrap();
/// let history = Inspector::open(&path).unwrap().history(id).unwrap();
/// assert_eq!(tickstep::dashboard::record_json(&history[0])["outcome"], "returned");
/// ```
pub fn record_json(r: &FiringRecord) -> Json {
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
