//! Row ⇄ SQL: [`ScheduleRow`]s and [`Cadence`] updates as `SQLite` columns (JSON for values,
//! bit-preserving integers for `u64`).
//!
//! The codec knows rows, never the engine's entries: the engine converts between the two on its
//! side of the boundary (`engine/storage.rs`). Reading a row back is shared with the `PostgreSQL`
//! store ([`decode`](super::decode)); [`columns`](super::sqlite::columns) says how a `SQLite` row
//! gives up a column.

use std::fmt::Write as _;

use crate::store_rows::{Cadence, HistoryRow, RunningRow, RunningRows, ScheduleRow};
use crate::{Fault, FaultKind, RunId, Value};

/// A `u64` as SQLite's signed integer, bits preserved (readable as is below 2^63).
pub(crate) fn to_sql(n: u64) -> i64 {
    i64::from_ne_bytes(n.to_ne_bytes())
}

/// The inverse of [`to_sql`].
pub(crate) fn from_sql(n: i64) -> u64 {
    u64::from_ne_bytes(n.to_ne_bytes())
}

/// The columns of schema versions 1 and 2, in [`decode`](super::decode::decode)'s order.
macro_rules! columns_v1 {
    () => {
        "id, kind, target, verb, args, state, owner, player, interval_ns, \
         interval_clamped, jitter_ns, max_faults, catchup, overlap, adaptive, pass_elapsed, \
         created_at, next_run, fire_at, armed, last_run, run_count, fault_count, \
         consecutive_faults, missed_count, overlap_count, last_duration_ns, backlog, queued, \
         last_fault, running"
    };
}

/// No calendar: the three calendar columns of a store older than `SQLite` schema version 8
/// (`PostgreSQL`: 10), typed NULLs.
macro_rules! no_calendar {
    () => {
        ", CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT)"
    };
}

/// No policies: the `policies` column of a store older than `SQLite` schema version 11
/// (`PostgreSQL`: 13), a typed NULL (docs/schedules.md §16.3).
macro_rules! no_policies {
    () => {
        ", CAST(NULL AS TEXT)"
    };
}

/// The columns [`decode`](super::decode::decode) reads, in order: schema version 3 added the
/// firing limits, version 4 (`PostgreSQL`: 5) the key, version 5 (`PostgreSQL`: 6) the operator
/// state, version 8 (`PostgreSQL`: 10) a calendar schedule's expression, zone and DST policy
/// (docs/schedules.md §14.14), version 11 (`PostgreSQL`: 13) the policies (docs/schedules.md
/// §16.3), each last.
pub(crate) const COLUMNS: &str = concat!(
    columns_v1!(),
    ", time_limit_ns, tick_limit, key, ops, cron_expr, cron_zone, cron_dst, policies"
);

/// What [`decode`](super::decode::decode) reads from a store that kept calendars but no
/// policies yet (`SQLite` schema versions 8 to 10, `PostgreSQL` 10 to 12).
pub(crate) const COLUMNS_WITHOUT_POLICIES: &str = concat!(
    columns_v1!(),
    ", time_limit_ns, tick_limit, key, ops, cron_expr, cron_zone, cron_dst",
    no_policies!()
);

/// How many columns [`COLUMNS`] names: a reader that selects more (the namespace, the fence)
/// finds them from this index on.
pub(crate) const COLUMN_COUNT: usize = {
    let bytes = COLUMNS.as_bytes();
    let (mut i, mut commas) = (0, 0);
    while i < bytes.len() {
        if bytes[i] == b',' {
            commas += 1;
        }
        i += 1;
    }
    commas + 1
};

/// What [`decode`](super::decode::decode) reads from a store that kept operator state but no
/// calendars yet (`SQLite` schema versions 5 to 7, `PostgreSQL` 6 to 9).
pub(crate) const COLUMNS_WITHOUT_CALENDAR: &str = concat!(
    columns_v1!(),
    ", time_limit_ns, tick_limit, key, ops",
    no_calendar!(),
    no_policies!()
);

/// What [`decode`](super::decode::decode) reads from a store that kept keys but no operator
/// state yet (`SQLite` schema version 4, `PostgreSQL` 5). The NULLs are typed because
/// `PostgreSQL`'s client checks a column's type even when its value is NULL.
pub(crate) const COLUMNS_WITHOUT_OPS: &str = concat!(
    columns_v1!(),
    ", time_limit_ns, tick_limit, key, CAST(NULL AS TEXT)",
    no_calendar!(),
    no_policies!()
);

/// What [`decode`](super::decode::decode) reads from a store that kept firing limits but no keys
/// yet (`SQLite` schema version 3, `PostgreSQL` 4): no key, no operator state.
pub(crate) const COLUMNS_WITHOUT_KEY: &str = concat!(
    columns_v1!(),
    ", time_limit_ns, tick_limit, CAST(NULL AS TEXT), CAST(NULL AS TEXT)",
    no_calendar!(),
    no_policies!()
);

/// What [`decode`](super::decode::decode) reads from a store that did not keep firing limits yet
/// (`SQLite` before schema version 3, `PostgreSQL` before 4): no limits, no key, no operator
/// state.
pub(crate) const COLUMNS_WITHOUT_LIMITS: &str = concat!(
    columns_v1!(),
    ", CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), CAST(NULL AS TEXT), CAST(NULL AS TEXT)",
    no_calendar!(),
    no_policies!()
);

/// The select list [`decode`](super::decode::decode) reads from a `SQLite` store of schema
/// `version` (a reader that does not migrate, like the `Inspector`, meets older files).
pub(crate) fn columns_for(version: i64) -> &'static str {
    match version {
        11.. => COLUMNS,
        8..=10 => COLUMNS_WITHOUT_POLICIES,
        5..=7 => COLUMNS_WITHOUT_CALENDAR,
        4 => COLUMNS_WITHOUT_OPS,
        3 => COLUMNS_WITHOUT_KEY,
        _ => COLUMNS_WITHOUT_LIMITS,
    }
}

/// The namespace column as a reader of schema `version` selects it: `''` (no namespace) from a
/// store older than namespaces (`SQLite` version 10, `PostgreSQL` 12; docs/schedules.md §15.3).
pub(crate) fn namespace_column(version: i64, first_with_it: i64) -> &'static str {
    if version >= first_with_it {
        "namespace"
    } else {
        "CAST('' AS TEXT)"
    }
}

/// `INSERT` of a whole row in the store's namespace (the last parameter); parameters as
/// [`insert`] binds them. A row of the same id is replaced (an upsert on the id alone; ids are
/// unique across namespaces, docs/schedules.md §15.2, so it is always this engine's), but a row
/// whose (namespace, owner, key) another row holds is refused by the unique index, never
/// replaced (docs/schedules.md §5.18).
pub(crate) fn insert_sql() -> &'static str {
    static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SQL.get_or_init(|| {
        let columns: Vec<&str> = COLUMNS.split(',').map(str::trim).collect();
        let params: Vec<String> = (1..=columns.len() + 1).map(|i| format!("?{i}")).collect();
        let sets: Vec<String> = columns[1..]
            .iter()
            .map(|c| format!("{c} = excluded.{c}"))
            .collect();
        format!(
            "INSERT INTO schedules ({COLUMNS}, namespace) VALUES ({}) \
             ON CONFLICT (id) DO UPDATE SET {}",
            params.join(", "),
            sets.join(", ")
        )
    })
}

/// `UPDATE` of the cadence state only; parameters as [`CadenceParams::bind`] binds them.
pub(crate) const UPDATE_CADENCE: &str = "UPDATE schedules SET next_run = ?2, fire_at = ?3, armed = ?4, \
     last_run = ?5, run_count = ?6, fault_count = ?7, consecutive_faults = ?8, missed_count = ?9, \
     overlap_count = ?10, last_duration_ns = ?11, backlog = ?12, queued = ?13, last_fault = ?14, \
     running = ?15, ops = ?16 WHERE id = ?1";

pub(crate) fn json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    // Values are checked storable (finite floats) before they reach the store.
    serde_json::to_string(v).expect("storable values serialise")
}

pub(crate) fn fault_json(f: &Fault) -> String {
    format!(
        "{{\"kind\":\"{}\",\"value\":{}}}",
        f.kind.as_str(),
        json(&f.value)
    )
}

/// Writes `[[run, nominal, started], ..]` into `out` (cleared first); `false` when nothing runs.
pub(crate) fn running_json(running: &[RunningRow], out: &mut String) -> bool {
    out.clear();
    if running.is_empty() {
        return false;
    }
    out.push('[');
    for (i, r) in running.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match r.run {
            Some(run) => {
                let _ = write!(out, "[{},{},{}]", run.0, r.nominal, r.started_unix);
            }
            // A start waiting for this row to be durable (docs/schedules.md §11.42).
            None => {
                let _ = write!(out, "[null,{},{}]", r.nominal, r.started_unix);
            }
        }
    }
    out.push(']');
    true
}

/// The cadence columns of one row, ready to bind.
pub(crate) struct CadenceParams {
    values: [i64; 12],
    queued: Option<i64>,
    last_fault: Option<String>,
    has_running: bool,
    ops: Option<String>,
}

impl CadenceParams {
    /// `running_buf` receives the running firings' JSON (reused across rows).
    pub(crate) fn new(id: u64, c: &Cadence, running_buf: &mut String) -> Self {
        CadenceParams {
            values: [
                to_sql(id),
                to_sql(c.next_run),
                to_sql(c.fire_at),
                i64::from(c.armed),
                to_sql(c.last_run),
                to_sql(c.run_count),
                to_sql(c.fault_count),
                i64::from(c.consecutive_faults),
                to_sql(c.missed_count),
                to_sql(c.overlap_count),
                to_sql(c.last_duration_ns),
                i64::from(c.backlog),
            ],
            queued: c.queued.map(to_sql),
            last_fault: c.last_fault.as_deref().map(fault_json),
            has_running: running_json(&c.running, running_buf),
            ops: c.ops.as_ref().map(json),
        }
    }

    /// Binds [`UPDATE_CADENCE`]'s parameters; `running` is the buffer given to [`Self::new`].
    pub(crate) fn bind(
        &self,
        stmt: &mut rusqlite::Statement<'_>,
        running: &str,
    ) -> rusqlite::Result<()> {
        for (i, v) in self.values.iter().enumerate() {
            stmt.raw_bind_parameter(i + 1, v)?;
        }
        stmt.raw_bind_parameter(13, self.queued)?;
        stmt.raw_bind_parameter(14, self.last_fault.as_deref())?;
        stmt.raw_bind_parameter(15, self.has_running.then_some(running))?;
        stmt.raw_bind_parameter(16, self.ops.as_deref())?;
        Ok(())
    }
}

/// Executes [`insert_sql`] for a whole row, in `namespace`.
pub(crate) fn insert(
    stmt: &mut rusqlite::Statement<'_>,
    r: &ScheduleRow,
    namespace: crate::Namespace,
) -> rusqlite::Result<()> {
    let mut running = String::new();
    let cadence = CadenceParams::new(r.id, &r.cadence, &mut running);
    let [
        id,
        next_run,
        fire_at,
        armed,
        last_run,
        run_count,
        fault_count,
        consecutive,
        missed,
        overlaps,
        last_dur,
        backlog,
    ] = cadence.values;
    stmt.execute(rusqlite::params![
        id,
        r.kind.as_str(),
        r.target.0,
        r.verb,
        r.args.as_ref().map(json),
        r.state.as_ref().map(json),
        r.owner.0,
        r.player.0,
        to_sql(r.interval_ns),
        r.interval_clamped,
        to_sql(r.jitter_ns),
        r.max_faults,
        r.catchup.as_str(),
        r.overlap.as_str(),
        r.adaptive,
        r.pass_elapsed,
        to_sql(r.created_at),
        next_run,
        fire_at,
        armed,
        last_run,
        run_count,
        fault_count,
        consecutive,
        missed,
        overlaps,
        last_dur,
        backlog,
        cadence.queued,
        cadence.last_fault,
        cadence.has_running.then_some(running),
        r.time_limit_ns.map(to_sql),
        r.tick_limit.map(to_sql),
        r.key,
        cadence.ops,
        calendar_expr(r),
        calendar_zone(r),
        calendar_dst(r),
        crate::policies::to_column(&r.policies),
        namespace.as_str(),
    ])?;
    Ok(())
}

/// A calendar schedule's expression, for `cron_expr` (NULL for the other kinds).
pub(crate) fn calendar_expr(r: &ScheduleRow) -> Option<&str> {
    r.calendar.as_deref().map(crate::Calendar::expr)
}

/// A calendar schedule's zone, for `cron_zone`.
pub(crate) fn calendar_zone(r: &ScheduleRow) -> Option<&str> {
    r.calendar.as_deref().map(crate::Calendar::zone)
}

/// A calendar schedule's DST policy, for `cron_dst`: its two words, gap first (`"shift first"`,
/// docs/schedules.md §14.14).
pub(crate) fn calendar_dst(r: &ScheduleRow) -> Option<String> {
    r.calendar.as_deref().map(|c| {
        let p = c.policy();
        format!("{} {}", p.gap, p.fold)
    })
}

/// The calendar of a row read back: `cron_expr`, `cron_zone` and `cron_dst` as
/// [`insert`] wrote them; `Err` names the column that does not decode.
pub(crate) fn parse_calendar(
    expr: &str,
    zone: &str,
    dst: &str,
) -> Result<crate::Calendar, (&'static str, String)> {
    let mut words = dst.split(' ');
    let (Some(gap), Some(fold), None) = (words.next(), words.next(), words.next()) else {
        return Err(("cron_dst", dst.to_owned()));
    };
    let policy = crate::DstPolicy {
        gap: gap.parse().map_err(|_| ("cron_dst", dst.to_owned()))?,
        fold: fold.parse().map_err(|_| ("cron_dst", dst.to_owned()))?,
    };
    crate::Calendar::new(expr, zone, policy).map_err(|e| match e {
        crate::CalendarError::UnknownZone { .. } => ("cron_zone", zone.to_owned()),
        _ => ("cron_expr", expr.to_owned()),
    })
}

/// "schedule 7", or "schedule (id unreadable)" when the id column itself is bad.
pub(crate) fn schedule_name(id: Option<u64>) -> String {
    id.map_or_else(
        || "schedule (id unreadable)".to_owned(),
        |id| format!("schedule {id}"),
    )
}

fn parse_json<T: serde::de::DeserializeOwned>(text: &str) -> Option<T> {
    serde_json::from_str(text).ok()
}

/// Decodes a stored fault (`{"kind": .., "value": ..}`); `None` if it is not one.
pub(crate) fn parse_fault(text: &str) -> Option<Fault> {
    let raw: serde_json::Value = parse_json(text)?;
    let kind = raw["kind"].as_str().and_then(FaultKind::parse)?;
    let value: Value = serde_json::from_value(raw["value"].clone()).ok()?;
    Some(Fault { kind, value })
}

/// Records a settled firing in its schedule's history ring (docs/schedules.md §9.11): the slot's
/// previous record is replaced. Parameters: schedule, slot, started, ended, nominal, outcome,
/// fault. The key is slot first (docs/schedules.md §13.54). A single-row `VALUES` upsert with no
/// check that the schedule's row exists: a check (`INSERT … SELECT … WHERE EXISTS`) cost a seek
/// and a statement journal per record, a quarter of the record's write (docs/schedules.md
/// §13.73); the records of rows that are gone are kept out instead by the order of the write and
/// [`FORGET_HISTORY`].
pub(crate) const RECORD_HISTORY: &str = "INSERT INTO firing_history \
     (schedule_id, slot, started_at, ended_at, nominal, outcome, fault) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
     ON CONFLICT (slot, schedule_id) DO UPDATE SET started_at = excluded.started_at, \
     ended_at = excluded.ended_at, nominal = excluded.nominal, outcome = excluded.outcome, \
     fault = excluded.fault";

/// Deletes schedule `?1`'s history, as the trigger on `schedules` does when its row is deleted:
/// for a row that was already gone when the write deleted it (an operator stopped it from
/// outside, and a record of it was written after that; docs/schedules.md §9.11).
pub(crate) const FORGET_HISTORY: &str = "DELETE FROM firing_history \
     WHERE slot IN (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19) \
     AND schedule_id = ?1";

/// A schedule's history, newest first: the columns [`history_row`] reads, from the slots
/// [`history_slots`] binds to `?2`..`?21`. The table is keyed slot first (schema version 8,
/// docs/schedules.md §13.54): naming the slots makes it a seek for each, on that layout and on
/// the older one alike.
pub(crate) const SELECT_HISTORY: &str = "SELECT slot, started_at, ended_at, nominal, fault \
     FROM firing_history WHERE slot IN (?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, \
     ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21) AND schedule_id = ?1 \
     ORDER BY started_at DESC, slot DESC";

/// The slots that can hold a record of a schedule that has settled `settled` firings, as the
/// twenty values [`SELECT_HISTORY`] names (docs/schedules.md §9.11). Record `n` takes slot
/// `n mod 20`, so a schedule that has settled fewer than twenty has records only in slots
/// `1..=settled`: the list repeats those (an `IN` list holds a value once), and the read seeks
/// only where a record can be. `None` when there is nothing to read.
pub(crate) fn history_slots(settled: u64) -> Option<[i64; 20]> {
    if settled == 0 {
        return None;
    }
    let kept = crate::info::HISTORY_KEPT;
    Some(std::array::from_fn(|k| {
        let k = k as u64;
        let slot = if settled >= kept { k } else { 1 + k % settled };
        i64::try_from(slot).expect("a slot is below 20")
    }))
}

/// The outcome column's word for a record.
pub(crate) fn outcome_word(h: &HistoryRow) -> &'static str {
    if h.fault.is_some() {
        "fault"
    } else {
        "returned"
    }
}

/// One history record back from its columns (slot, started, ended, nominal, fault JSON);
/// `None` when the fault does not decode.
pub(crate) fn history_row(
    schedule: u64,
    (slot, started, ended, nominal): (i64, i64, i64, i64),
    fault: Option<&str>,
) -> Option<HistoryRow> {
    Some(HistoryRow {
        schedule,
        slot: u32::try_from(slot).ok()?,
        started: from_sql(started),
        ended: from_sql(ended),
        nominal: from_sql(nominal),
        fault: match fault {
            Some(text) => Some(parse_fault(text)?),
            None => None,
        },
    })
}

/// An operator's note as the engine applies it: a stop without an action, else the action
/// (docs/schedules.md §9.12). An action this build cannot read is skipped with a warning,
/// never taken for a stop.
pub(crate) fn operator_note(
    seq: u64,
    id: u64,
    action: Option<&str>,
) -> Option<crate::store_rows::OperatorNote> {
    let action = match action {
        None => None,
        Some(text) => {
            let Some(action) = parse_json(text) else {
                tracing::warn!(
                    schedule = id,
                    action = %crate::limits::excerpt(text),
                    "an operator's note holds an action this build cannot read; skipped"
                );
                return None;
            };
            Some(action)
        }
    };
    Some(crate::store_rows::OperatorNote { seq, id, action })
}

/// Every operator note that carries an action, oldest first (`seq, id, action`): what an engine
/// applies at open to the rows whose state does not include it yet (docs/schedules.md §9.12).
pub(crate) const SELECT_ACTIONS: &str =
    "SELECT seq, id, action FROM operator_stops WHERE action IS NOT NULL ORDER BY seq";

/// Decodes the `ops` column (docs/schedules.md §9.4–§9.10); `None` if it is not an operator state.
pub(crate) fn parse_ops(text: &str) -> Option<crate::store_rows::OpsRow> {
    parse_json(text)
}

/// Decodes the `running` column (`[[run, nominal, started], ..]`, `run` null for a start that
/// waits for the row to be durable); `None` if it is not that.
pub(crate) fn parse_running(text: &str) -> Option<RunningRows> {
    Some(
        parse_json::<Vec<(Option<u64>, u64, u64)>>(text)?
            .into_iter()
            .map(|(run, nominal, started_unix)| RunningRow {
                run: run.map(RunId),
                nominal,
                started_unix,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::history_slots;

    #[test]
    fn history_slots_name_only_the_slots_settled_firings_can_have_filled() {
        assert_eq!(history_slots(0), None, "nothing settled, nothing to read");
        let distinct = |settled| {
            let mut slots = history_slots(settled).unwrap().to_vec();
            slots.sort_unstable();
            slots.dedup();
            slots
        };
        assert_eq!(distinct(1), vec![1]);
        assert_eq!(distinct(3), vec![1, 2, 3]);
        assert_eq!(distinct(19), (1..=19).collect::<Vec<_>>());
        assert_eq!(
            distinct(20),
            (0..20).collect::<Vec<_>>(),
            "record 20 took slot 0"
        );
        assert_eq!(distinct(u64::MAX), (0..20).collect::<Vec<_>>());
    }
}
