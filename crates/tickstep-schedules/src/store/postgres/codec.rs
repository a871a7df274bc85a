//! Rows ⇄ `PostgreSQL` parameters: whole rows inserted one statement each, a tick's cadence
//! updates as one `UPDATE … FROM unnest(…)` over column arrays (one round trip for the whole
//! batch), deletes as one `DELETE … WHERE id = ANY(…)`.
//!
//! Values are encoded exactly as the `SQLite` store encodes them (its codec's JSON helpers), so a
//! row reads back the same from either store.

use std::sync::OnceLock;

use postgres::Row;
use postgres::types::ToSql;

use crate::row::{Cadence, ScheduleRow};
use crate::store::codec::{
    COLUMNS, fault_json, from_sql, json, parse_fault, parse_running, running_json, schedule_name,
    to_sql,
};
use crate::{Catchup, ObjId, Overlap, ScheduleKind, Value};

/// The `SELECT` that loads every row, columns as [`decode`] reads them.
pub(super) fn select_all() -> String {
    format!("SELECT {COLUMNS} FROM tickstep_schedules")
}

/// `INSERT` of a whole row, replacing a row of the same id (an upsert, like `SQLite`'s
/// `INSERT OR REPLACE`).
pub(super) fn insert_sql() -> &'static str {
    static SQL: OnceLock<String> = OnceLock::new();
    SQL.get_or_init(|| {
        let columns: Vec<&str> = COLUMNS.split(',').map(str::trim).collect();
        let params: Vec<String> = (1..=columns.len()).map(|i| format!("${i}")).collect();
        let sets: Vec<String> = columns[1..]
            .iter()
            .map(|c| format!("{c} = EXCLUDED.{c}"))
            .collect();
        format!(
            "INSERT INTO tickstep_schedules ({COLUMNS}) VALUES ({}) ON CONFLICT (id) DO UPDATE SET {}",
            params.join(", "),
            sets.join(", ")
        )
    })
}

/// The batched cadence update: one row of arrays, unnested and joined on id. An id the table no
/// longer holds matches nothing and is skipped, as the boundary asks.
pub(super) const UPDATE_CADENCE: &str = "UPDATE tickstep_schedules AS s SET next_run = u.next_run, \
     fire_at = u.fire_at, armed = u.armed, last_run = u.last_run, run_count = u.run_count, \
     fault_count = u.fault_count, consecutive_faults = u.consecutive_faults, \
     missed_count = u.missed_count, overlap_count = u.overlap_count, \
     last_duration_ns = u.last_duration_ns, backlog = u.backlog, queued = u.queued, \
     last_fault = u.last_fault, running = u.running \
     FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::boolean[], $5::bigint[], \
     $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], \
     $12::integer[], $13::bigint[], $14::text[], $15::text[]) \
     AS u(id, next_run, fire_at, armed, last_run, run_count, fault_count, consecutive_faults, \
     missed_count, overlap_count, last_duration_ns, backlog, queued, last_fault, running) \
     WHERE s.id = u.id";

/// Deletes by id; the count says how many existed.
pub(super) const DELETE: &str = "DELETE FROM tickstep_schedules WHERE id = ANY($1::bigint[])";

/// A batch of cadence updates as column arrays, the parameters of [`UPDATE_CADENCE`]. Kept and
/// cleared between batches so a steady tick does not reallocate.
#[derive(Default)]
pub(super) struct CadenceColumns {
    id: Vec<i64>,
    next_run: Vec<i64>,
    fire_at: Vec<i64>,
    armed: Vec<bool>,
    last_run: Vec<i64>,
    run_count: Vec<i64>,
    fault_count: Vec<i64>,
    consecutive_faults: Vec<i64>,
    missed_count: Vec<i64>,
    overlap_count: Vec<i64>,
    last_duration_ns: Vec<i64>,
    backlog: Vec<i32>,
    queued: Vec<Option<i64>>,
    last_fault: Vec<Option<String>>,
    running: Vec<Option<String>>,
    running_buf: String,
}

impl CadenceColumns {
    pub(super) fn clear(&mut self) {
        self.id.clear();
        self.next_run.clear();
        self.fire_at.clear();
        self.armed.clear();
        self.last_run.clear();
        self.run_count.clear();
        self.fault_count.clear();
        self.consecutive_faults.clear();
        self.missed_count.clear();
        self.overlap_count.clear();
        self.last_duration_ns.clear();
        self.backlog.clear();
        self.queued.clear();
        self.last_fault.clear();
        self.running.clear();
    }

    pub(super) fn push(&mut self, id: u64, c: &Cadence) {
        self.id.push(to_sql(id));
        self.next_run.push(to_sql(c.next_run));
        self.fire_at.push(to_sql(c.fire_at));
        self.armed.push(c.armed);
        self.last_run.push(to_sql(c.last_run));
        self.run_count.push(to_sql(c.run_count));
        self.fault_count.push(to_sql(c.fault_count));
        self.consecutive_faults
            .push(i64::from(c.consecutive_faults));
        self.missed_count.push(to_sql(c.missed_count));
        self.overlap_count.push(to_sql(c.overlap_count));
        self.last_duration_ns.push(to_sql(c.last_duration_ns));
        self.backlog.push(i32::from(c.backlog));
        self.queued.push(c.queued.map(to_sql));
        self.last_fault.push(c.last_fault.as_ref().map(fault_json));
        let running = running_json(&c.running, &mut self.running_buf);
        self.running.push(running.then(|| self.running_buf.clone()));
    }

    /// The parameters of [`UPDATE_CADENCE`], in order.
    pub(super) fn params(&self) -> [&(dyn ToSql + Sync); 15] {
        [
            &self.id,
            &self.next_run,
            &self.fire_at,
            &self.armed,
            &self.last_run,
            &self.run_count,
            &self.fault_count,
            &self.consecutive_faults,
            &self.missed_count,
            &self.overlap_count,
            &self.last_duration_ns,
            &self.backlog,
            &self.queued,
            &self.last_fault,
            &self.running,
        ]
    }
}

/// Inserts one whole row with [`insert_sql`].
pub(super) fn insert(
    tx: &mut postgres::Transaction<'_>,
    stmt: &postgres::Statement,
    r: &ScheduleRow,
) -> Result<(), postgres::Error> {
    let c = &r.cadence;
    let mut running = String::new();
    let has_running = running_json(&c.running, &mut running);
    tx.execute(
        stmt,
        &[
            &to_sql(r.id),
            &r.kind.as_str(),
            &r.target.0,
            &r.verb,
            &r.args.as_ref().map(json),
            &r.state.as_ref().map(json),
            &r.owner.0,
            &r.player.0,
            &to_sql(r.interval_ns),
            &r.interval_clamped,
            &to_sql(r.jitter_ns),
            &i64::from(r.max_faults),
            &r.catchup.as_str(),
            &r.overlap.as_str(),
            &r.adaptive,
            &r.pass_elapsed,
            &to_sql(r.created_at),
            &to_sql(c.next_run),
            &to_sql(c.fire_at),
            &c.armed,
            &to_sql(c.last_run),
            &to_sql(c.run_count),
            &to_sql(c.fault_count),
            &i64::from(c.consecutive_faults),
            &to_sql(c.missed_count),
            &to_sql(c.overlap_count),
            &to_sql(c.last_duration_ns),
            &i32::from(c.backlog),
            &c.queued.map(to_sql),
            &c.last_fault.as_ref().map(fault_json),
            &has_running.then_some(running.as_str()),
            &r.time_limit_ns.map(to_sql),
            &r.tick_limit.map(to_sql),
        ],
    )?;
    Ok(())
}

/// A row the store holds but cannot turn back into a schedule: the schedule (when its id read),
/// the column and a bounded excerpt of its value.
#[derive(Debug, thiserror::Error)]
#[error("{}: bad {column} in tickstep_schedules row: {text:?}", schedule_name(*.id))]
pub(crate) struct Corrupt {
    id: Option<u64>,
    column: &'static str,
    text: String,
}

fn corrupt(
    id: Option<u64>,
    column: &'static str,
    text: &(impl std::fmt::Display + ?Sized),
) -> Box<dyn std::error::Error + Send + Sync> {
    Box::new(Corrupt {
        id,
        column,
        text: crate::limits::excerpt(&text.to_string()),
    })
}

type Decoded<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

fn json_column<T: serde::de::DeserializeOwned>(
    id: Option<u64>,
    column: &'static str,
    text: Option<String>,
) -> Decoded<Option<T>> {
    text.map(|t| serde_json::from_str(&t).map_err(|_| corrupt(id, column, &t)))
        .transpose()
}

fn narrow<T: TryFrom<i64>>(id: Option<u64>, column: &'static str, n: i64) -> Decoded<T> {
    T::try_from(n).map_err(|_| corrupt(id, column, &n))
}

/// Reads one row selected with [`select_all`].
pub(super) fn decode(row: &Row) -> Decoded<ScheduleRow> {
    let u = |i: usize| -> Decoded<u64> { Ok(from_sql(row.try_get::<_, i64>(i)?)) };
    // Read first, so every error below names the schedule.
    let id = u(0).ok();
    let corrupt = |column, text: &dyn std::fmt::Display| corrupt(id, column, text);
    let kind_text: &str = row.try_get(1)?;
    let kind = match kind_text {
        "at" => ScheduleKind::At,
        "every" => ScheduleKind::Every,
        other => return Err(corrupt("kind", &other)),
    };
    let catchup_text: &str = row.try_get(12)?;
    let catchup = Catchup::parse(catchup_text).ok_or_else(|| corrupt("catchup", &catchup_text))?;
    let overlap_text: &str = row.try_get(13)?;
    let overlap = Overlap::parse(overlap_text).ok_or_else(|| corrupt("overlap", &overlap_text))?;
    let last_fault = row
        .try_get::<_, Option<&str>>(29)?
        .map(|t| parse_fault(t).ok_or_else(|| corrupt("last_fault", &t)))
        .transpose()?;
    let running = row
        .try_get::<_, Option<&str>>(30)?
        .map(|t| parse_running(t).ok_or_else(|| corrupt("running", &t)))
        .transpose()?
        .unwrap_or_default();
    let limit = |i: usize, column: &'static str| -> Decoded<Option<u64>> {
        match row.try_get::<_, Option<i64>>(i)? {
            Some(0) => Err(corrupt(column, &0)),
            n => Ok(n.map(from_sql)),
        }
    };
    let args: Option<Vec<Value>> = json_column(id, "args", row.try_get(4)?)?;
    let state: Option<Value> = json_column(id, "state", row.try_get(5)?)?;
    Ok(ScheduleRow {
        id: u(0)?,
        kind,
        target: ObjId(row.try_get(2)?),
        verb: row.try_get(3)?,
        args,
        state,
        owner: ObjId(row.try_get(6)?),
        player: ObjId(row.try_get(7)?),
        interval_ns: u(8)?,
        interval_clamped: row.try_get(9)?,
        jitter_ns: u(10)?,
        max_faults: narrow(id, "max_faults", row.try_get(11)?)?,
        catchup,
        overlap,
        adaptive: row.try_get(14)?,
        pass_elapsed: row.try_get(15)?,
        created_at: u(16)?,
        time_limit_ns: limit(31, "time_limit_ns")?,
        tick_limit: limit(32, "tick_limit")?,
        cadence: Cadence {
            next_run: u(17)?,
            fire_at: u(18)?,
            armed: row.try_get(19)?,
            last_run: u(20)?,
            run_count: u(21)?,
            fault_count: u(22)?,
            consecutive_faults: narrow(id, "consecutive_faults", row.try_get(23)?)?,
            missed_count: u(24)?,
            overlap_count: u(25)?,
            last_duration_ns: u(26)?,
            backlog: narrow(id, "backlog", i64::from(row.try_get::<_, i32>(27)?))?,
            queued: row.try_get::<_, Option<i64>>(28)?.map(from_sql),
            last_fault,
            running,
        },
    })
}
