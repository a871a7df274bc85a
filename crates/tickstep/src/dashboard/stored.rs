//! A saved schedule as the `schedule_info` map of docs/schedules.md §9.1, in JSON: what
//! `tickstep schedules info --json` prints and what a store's dashboard shows in a detail view
//! (one shaping for both).

use serde_json::{Value as Json, json};

use crate::schedules::{FiringRecord, StoredSchedule, Value};

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// A value as plain JSON (docs/runtime.md §7.10): a number, a string, a boolean, a list as an
/// array and a map whose keys are distinct strings as an object, as JSON has them; an object and
/// a symbol as their MOO literals (`"#3"`, `"'name"`), which JSON has no type for; any other map
/// as a list of `[key, value]` pairs. Never the store's own encoding, which tags each value with
/// its type (`{"Str": "boom"}`) so it reads back exactly.
///
/// ```
/// # use tickstep::schedules::{ObjId, Value};
/// # let value_json = |v: &Value| tickstep::dashboard::value_json(v);
/// let fault = Value::Map(vec![(Value::from("kind"), Value::from("error")), (Value::from("value"), Value::from("boom"))]);
/// assert_eq!(value_json(&fault).to_string(), r#"{"kind":"error","value":"boom"}"#);
/// assert_eq!(value_json(&Value::List(vec![Value::Int(1), Value::Obj(ObjId(3))])).to_string(), r##"[1,"#3"]"##);
/// ```
pub fn value_json(value: &Value) -> Json {
    match value {
        Value::Int(i) => Json::from(*i),
        // The store holds no NaN or infinity (docs/schedules.md §5.11); were one here, `null`.
        Value::Float(f) => Json::from(*f),
        Value::Str(s) => Json::from(s.as_str()),
        Value::Bool(b) => Json::from(*b),
        Value::Obj(_) | Value::Symbol(_) => Json::from(value.to_string()),
        Value::List(items) => Json::Array(items.iter().map(value_json).collect()),
        Value::Map(pairs) => {
            let object: serde_json::Map<String, Json> = pairs
                .iter()
                .filter_map(|(k, v)| match k {
                    Value::Str(k) => Some((k.clone(), value_json(v))),
                    _ => None,
                })
                .collect();
            if object.len() == pairs.len() {
                Json::Object(object)
            } else {
                pairs
                    .iter()
                    .map(|(k, v)| json!([value_json(k), value_json(v)]))
                    .collect()
            }
        }
    }
}

/// The `schedule_info` shape of docs/schedules.md §9.2: times as float Unix seconds (0.0 for
/// never, and `next_run` 0.0 while nothing is armed: paused, a one-shot running), durations as
/// integer nanoseconds, absent values as 0, values as plain JSON ([`value_json`]), and the
/// schedule's `status` (docs/schedules.md §9.13).
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
/// assert_eq!(info["status"], "active");
/// assert_eq!(info["namespace"], tickstep::host::program_namespace().as_str());
/// ```
pub fn info_json(s: &StoredSchedule) -> Json {
    let mut info = json!({
        "id": s.id.get(),
        "target": s.target.0,
        "verb": s.verb,
        "args": s.args.iter().map(value_json).collect::<Vec<_>>(),
        "owner": s.owner.0,
        "authority": s.owner.0,
        "kind": s.kind.as_str(),
        "interval": secs(s.interval_ns),
        "created_at": secs(s.created_unix_nanos),
        // Nothing is due while nothing is armed: a paused schedule's kept deadline is not its
        // next run (docs/schedules.md §9.4).
        "next_run": s.next_due_unix_nanos().map_or(0.0, secs),
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
    });
    // Two halves: one `json!` of every field passes the macro's recursion limit.
    let rest = json!({
        "state": s.state.as_ref().map_or(json!(0), value_json),
        "seconds": s.time_limit.map_or(json!(0), |d| json!(d.as_secs_f64())),
        "ticks": s.tick_limit.map_or(0, std::num::NonZeroU64::get),
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
        "status": s.status().as_str(),
        // The application it belongs to (docs/schedules.md §15.5): the store's, not the
        // engine's, so `schedule_info` has no such field.
        "namespace": s.namespace,
        // The policies (docs/schedules.md §16.4): 0 for none, as `schedule_info` shows them.
        "catchup_window": s.catchup_window.map_or(json!(0), |d| json!(d.as_secs_f64())),
        "run_limit": s.run_limit.unwrap_or(0),
        "remaining_runs": s.remaining_runs.unwrap_or(0),
        "on_max_faults": s.on_max_faults.as_str(),
    });
    if let (Some(info), Json::Object(rest)) = (info.as_object_mut(), rest) {
        info.extend(rest);
        // Why points were missed (docs/schedules.md §9.15), as `schedule_info` keys them.
        for (key, value) in s.missed.fields() {
            info.insert(key.to_owned(), value_json(&value));
        }
    }
    info
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
        "lateness": r.lateness(),
        "fault": r.fault.as_ref().map_or(json!(0), |f| {
            json!({ "kind": f.kind.as_str(), "value": value_json(&f.value) })
        }),
    })
}
