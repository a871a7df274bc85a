//! Rows ⇄ `PostgreSQL` parameters: whole rows inserted as column arrays, thousands a statement
//! (docs/schedules.md §11.52), a tick's cadence updates as one `UPDATE … FROM unnest(…)` over
//! column arrays (one round trip for the whole batch), deletes as one `DELETE … USING
//! unnest(…)`, claims as one `UPDATE … RETURNING` of whole rows. Every write a node makes to a
//! row it holds carries the row's fence and the node's id (docs/schedules.md §11.27).
//!
//! Values are encoded exactly as the `SQLite` store encodes them (its codec's JSON helpers), and
//! read back by the same decoder ([`decode`](crate::store::decode)), so a row reads back the same
//! from either store.

use std::sync::OnceLock;

use postgres::Row;
use postgres::types::{ToSql, Type};

use crate::store::codec::{
    COLUMNS, COLUMNS_WITHOUT_CALENDAR, COLUMNS_WITHOUT_KEY, COLUMNS_WITHOUT_LIMITS,
    COLUMNS_WITHOUT_OPS, COLUMNS_WITHOUT_POLICIES, calendar_dst, calendar_expr, calendar_zone,
    fault_json, json, outcome_word, running_json, schedule_name, to_sql,
};
use crate::store::decode::StoredColumns;
use crate::store_rows::{Cadence, HistoryRow, ScheduleRow};

/// The `SELECT` that reads rows of a store of the current schema, columns as [`decode`] reads
/// them.
pub(super) fn select_all() -> String {
    format!("SELECT {COLUMNS} FROM tickstep_schedules")
}

/// The columns of a store of schema `version` as [`decode`] reads them, as an operator's view
/// that does not migrate meets them: before version 4 there are no firing limits to read,
/// before 5 no keys, before 6 no operator state, before 10 no calendars, before 13 no policies.
pub(super) fn columns_of(version: i64) -> &'static str {
    match version {
        13.. => COLUMNS,
        10..=12 => COLUMNS_WITHOUT_POLICIES,
        6..=9 => COLUMNS_WITHOUT_CALENDAR,
        5 => COLUMNS_WITHOUT_OPS,
        4 => COLUMNS_WITHOUT_KEY,
        _ => COLUMNS_WITHOUT_LIMITS,
    }
}

/// The claim: takes rows of namespace `$4` (the node's, docs/schedules.md §15.2) that nobody
/// holds, or whose holder's lease has run out (database time), due by `$2` (the node's wall clock plus the lookahead, Unix ns) or not armed, at most `$3` of
/// them (`NULL`: all), for node `$1` (`$5`: the nodes whose lease ran out, as
/// [`claim_where`] says); bumps each row's fence; returns whole rows, columns as
/// [`decode`] reads them, then the new fence. `SKIP LOCKED` lets nodes claiming at once take
/// disjoint rows without waiting on one another, and a row a node is writing is skipped, not
/// waited for. A node never claims from itself (its own lease may have lapsed while it was
/// paused: the rows nobody took meanwhile are still its own, with the same fence).
pub(super) fn claim_sql() -> &'static str {
    static SQL: OnceLock<String> = OnceLock::new();
    SQL.get_or_init(|| claim_where("owner_node IS NULL"))
}

/// [`claim_sql`] as an open runs it: the rows node `$1` itself holds are taken too, with a new
/// fence. A fresh node holds none; a resumed one (docs/schedules.md §11.49) takes back what the
/// process it follows held, and the fence refuses that process's writes should it still run.
pub(super) fn load_sql() -> &'static str {
    static SQL: OnceLock<String> = OnceLock::new();
    SQL.get_or_init(|| claim_where("owner_node IS NULL OR owner_node = $1"))
}

/// The claim statement, taking rows whose holder matches `free` or whose holder's lease ran out.
///
/// `$5` lists the nodes whose lease had run out when the caller looked, just before
/// ([`super::pg_claims`]'s `lapsed_nodes`): a literal list lets the planner read the candidate
/// rows through the holder index — none at all in a healthy cluster — where a subquery alone
/// made it scan the whole table (docs/schedules.md §11.58). The subquery stays, so a node
/// that renewed its lease in between keeps its rows.
fn claim_where(free: &str) -> String {
    let returned: Vec<String> = COLUMNS
        .split(',')
        .map(|c| format!("s.{}", c.trim()))
        .collect();
    format!(
        "UPDATE tickstep_schedules AS s SET owner_node = $1, fence = s.fence + 1 \
         FROM (SELECT id, owner_node AS was FROM tickstep_schedules \
               WHERE namespace = $4 \
                 AND ({free} OR (owner_node = ANY($5) AND owner_node IN \
                      (SELECT node FROM tickstep_nodes \
                       WHERE lease_until < clock_timestamp() AND node <> $1))) \
                 AND (NOT armed OR fire_at <= $2) \
               ORDER BY fire_at LIMIT $3 FOR UPDATE SKIP LOCKED) AS c \
         WHERE s.id = c.id RETURNING {}, s.fence, c.was",
        returned.join(", ")
    )
}

/// The column [`claim_sql`] returns the new fence in: the one after [`COLUMNS`].
pub(super) const FENCE_COLUMN: usize = crate::store::codec::COLUMN_COUNT;
/// The column [`claim_sql`] returns the row's previous holder in (NULL: it had none).
pub(super) const PREVIOUS_HOLDER_COLUMN: usize = FENCE_COLUMN + 1;

/// The SQL type of each of [`COLUMNS`], in order, as the batched insert's arrays carry them.
const COLUMN_TYPES: [&str; crate::store::codec::COLUMN_COUNT] = [
    "bigint", "text", "bigint", "text", "text", "text", "bigint", "bigint", "bigint", "boolean",
    "bigint", "bigint", "text", "text", "boolean", "boolean", "bigint", "bigint", "bigint",
    "boolean", "bigint", "bigint", "bigint", "bigint", "bigint", "bigint", "bigint", "integer",
    "bigint", "text", "text", "bigint", "bigint", "text", "text", "text", "text", "text", "text",
];

/// Rows per statement of the batched insert: bounds the arrays one statement carries, and so
/// the client's and the server's memory for one message, whatever the size of a transaction.
pub(super) const INSERT_CHUNK: usize = 4_096;

/// The batched `INSERT` of whole rows (docs/schedules.md §11.52): each of [`COLUMNS`] as an
/// array (`$1` to `$39`, typed by [`COLUMN_TYPES`]), unnested into rows held by node `$40` from
/// their creation with fence 1, in namespace `$41` (ids are unique across namespaces,
/// docs/schedules.md §15.2). Replacing a row of the same id (an upsert, like `SQLite`'s `INSERT
/// OR REPLACE`) takes it over with the next fence. A row whose (owner, key) another row holds is
/// refused by the unique index (docs/schedules.md §5.18), which fails the whole statement: the
/// upsert is on the id alone. Returns each row's id and fence. One statement may not upsert a
/// row twice, so a chunk holds each id once ([`InsertColumns::push`] says when it cannot).
pub(super) fn insert_sql() -> &'static str {
    static SQL: OnceLock<String> = OnceLock::new();
    SQL.get_or_init(|| {
        let columns: Vec<&str> = COLUMNS.split(',').map(str::trim).collect();
        let arrays: Vec<String> = COLUMN_TYPES
            .iter()
            .enumerate()
            .map(|(i, t)| format!("${}::{t}[]", i + 1))
            .collect();
        let node = columns.len() + 1;
        let namespace = node + 1;
        let sets: Vec<String> = columns[1..]
            .iter()
            .map(|c| format!("{c} = EXCLUDED.{c}"))
            .collect();
        format!(
            "INSERT INTO tickstep_schedules ({COLUMNS}, owner_node, fence, namespace) \
             SELECT u.*, ${node}::bigint, 1, ${namespace}::text \
             FROM unnest({}) AS u({COLUMNS}) \
             ON CONFLICT (id) DO UPDATE SET {}, owner_node = EXCLUDED.owner_node, \
             fence = tickstep_schedules.fence + 1 RETURNING id, fence",
            arrays.join(", "),
            sets.join(", ")
        )
    })
}

/// One value of a row, on its way to its column's array.
enum Value {
    Int(i64),
    IntOrNull(Option<i64>),
    Int4(i32),
    Flag(bool),
    Text(Option<String>),
}

/// Row `r`'s values in the order of [`COLUMNS`], each of its column's type in
/// [`COLUMN_TYPES`].
fn row_values(r: &ScheduleRow) -> [Value; crate::store::codec::COLUMN_COUNT] {
    let c = &r.cadence;
    let mut running = String::new();
    let has_running = running_json(&c.running, &mut running);
    [
        Value::Int(to_sql(r.id)),
        Value::Text(Some(r.kind.as_str().to_owned())),
        Value::Int(r.target.0),
        Value::Text(Some(r.verb.clone())),
        Value::Text(r.args.as_ref().map(json)),
        Value::Text(r.state.as_ref().map(json)),
        Value::Int(r.owner.0),
        Value::Int(r.player.0),
        Value::Int(to_sql(r.interval_ns)),
        Value::Flag(r.interval_clamped),
        Value::Int(to_sql(r.jitter_ns)),
        Value::Int(i64::from(r.max_faults)),
        Value::Text(Some(r.catchup.as_str().to_owned())),
        Value::Text(Some(r.overlap.as_str().to_owned())),
        Value::Flag(r.adaptive),
        Value::Flag(r.pass_elapsed),
        Value::Int(to_sql(r.created_at)),
        Value::Int(to_sql(c.next_run)),
        Value::Int(to_sql(c.fire_at)),
        Value::Flag(c.armed),
        Value::Int(to_sql(c.last_run)),
        Value::Int(to_sql(c.run_count)),
        Value::Int(to_sql(c.fault_count)),
        Value::Int(i64::from(c.consecutive_faults)),
        Value::Int(to_sql(c.missed_count)),
        Value::Int(to_sql(c.overlap_count)),
        Value::Int(to_sql(c.last_duration_ns)),
        Value::Int4(i32::from(c.backlog)),
        Value::IntOrNull(c.queued.map(to_sql)),
        Value::Text(c.last_fault.as_deref().map(fault_json)),
        Value::Text(has_running.then_some(running)),
        Value::IntOrNull(r.time_limit_ns.map(to_sql)),
        Value::IntOrNull(r.tick_limit.map(to_sql)),
        Value::Text(r.key.clone()),
        Value::Text(c.ops.as_ref().map(json)),
        Value::Text(calendar_expr(r).map(str::to_owned)),
        Value::Text(calendar_zone(r).map(str::to_owned)),
        Value::Text(calendar_dst(r)),
        Value::Text(crate::policies::to_column(&r.policies)),
    ]
}

/// One column's values across a chunk of rows, as the array parameter [`insert_sql`] takes.
enum Array {
    Int(Vec<i64>),
    IntOrNull(Vec<Option<i64>>),
    Int4(Vec<i32>),
    Flag(Vec<bool>),
    Text(Vec<Option<String>>),
}

impl Array {
    /// The array of `v`'s column, holding `v`.
    fn starting_with(v: Value) -> Self {
        match v {
            Value::Int(v) => Array::Int(vec![v]),
            Value::IntOrNull(v) => Array::IntOrNull(vec![v]),
            Value::Int4(v) => Array::Int4(vec![v]),
            Value::Flag(v) => Array::Flag(vec![v]),
            Value::Text(v) => Array::Text(vec![v]),
        }
    }

    fn push(&mut self, v: Value) {
        match (self, v) {
            (Array::Int(a), Value::Int(v)) => a.push(v),
            (Array::IntOrNull(a), Value::IntOrNull(v)) => a.push(v),
            (Array::Int4(a), Value::Int4(v)) => a.push(v),
            (Array::Flag(a), Value::Flag(v)) => a.push(v),
            (Array::Text(a), Value::Text(v)) => a.push(v),
            _ => unreachable!("row_values gives each column values of one type"),
        }
    }

    fn as_param(&self) -> &(dyn ToSql + Sync) {
        match self {
            Array::Int(a) => a,
            Array::IntOrNull(a) => a,
            Array::Int4(a) => a,
            Array::Flag(a) => a,
            Array::Text(a) => a,
        }
    }
}

/// A chunk of whole rows as column arrays, the parameters of [`insert_sql`].
#[derive(Default)]
pub(super) struct InsertColumns {
    /// One per column of [`COLUMNS`], once a row is in.
    arrays: Vec<Array>,
    ids: std::collections::HashSet<u64>,
}

impl InsertColumns {
    /// How many rows the chunk holds.
    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }

    /// Adds row `r`, unless the chunk holds its id already (a second upsert of one row must be
    /// a statement of its own): then returns `false` and adds nothing.
    pub(super) fn push(&mut self, r: &ScheduleRow) -> bool {
        if !self.ids.insert(r.id) {
            return false;
        }
        let values = row_values(r);
        if self.arrays.is_empty() {
            self.arrays = values.into_iter().map(Array::starting_with).collect();
        } else {
            for (array, value) in self.arrays.iter_mut().zip(values) {
                array.push(value);
            }
        }
        true
    }

    /// The parameters of [`insert_sql`], in order, for rows of `node` in `namespace`.
    pub(super) fn params<'a>(
        &'a self,
        node: &'a i64,
        namespace: &'a &'a str,
    ) -> Vec<&'a (dyn ToSql + Sync)> {
        let mut params: Vec<&(dyn ToSql + Sync)> =
            self.arrays.iter().map(Array::as_param).collect();
        params.push(node);
        params.push(namespace);
        params
    }
}

/// The batched cadence update: one row of arrays, unnested and joined on id, fenced: a row
/// matches only while node `$18` holds it with the fence in `$17`; returns the ids it updated.
/// An id the table no longer holds matches nothing (its schedule is dropped, never fired:
/// docs/schedules.md §11.55); one another node took over matches nothing and is found by
/// [`TAKEN_OVER`]. `$19` and `$20` are the slot and the bytes of
/// the settled firing's history record that rides in each row's update (docs/schedules.md
/// §9.11), NULL bytes for none; the ring's size (500) and a record's (25) are
/// [`super::history_ring`]'s.
///
/// The holder is compared with `IS NOT DISTINCT FROM` (the same test for a node id, never NULL),
/// which no index serves, so the rows are found by their primary key, one probe per row of the
/// batch (docs/schedules.md §11.54). With `=` the planner could use the index on `owner_node`,
/// and did whenever its statistics did not know the node's id (a table just filled, a node
/// just started): it estimated a few rows and read every row the node holds for each batch.
/// [`DELETE_FENCED`] and [`SPLICE_HISTORY`] compare the holder the same way.
pub(super) const UPDATE_CADENCE: &str = "UPDATE tickstep_schedules AS s SET next_run = u.next_run, \
     fire_at = u.fire_at, armed = u.armed, last_run = u.last_run, run_count = u.run_count, \
     fault_count = u.fault_count, consecutive_faults = u.consecutive_faults, \
     missed_count = u.missed_count, overlap_count = u.overlap_count, \
     last_duration_ns = u.last_duration_ns, backlog = u.backlog, queued = u.queued, \
     last_fault = u.last_fault, running = u.running, ops = u.ops, \
     history = CASE WHEN u.record IS NULL THEN s.history ELSE \
     overlay(coalesce(s.history, decode(repeat('00', 500), 'hex')) \
     PLACING u.record FROM u.slot * 25 + 1 FOR 25) END \
     FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::boolean[], $5::bigint[], \
     $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], \
     $12::integer[], $13::bigint[], $14::text[], $15::text[], $16::text[], $17::bigint[], \
     $19::integer[], $20::bytea[]) \
     AS u(id, next_run, fire_at, armed, last_run, run_count, fault_count, consecutive_faults, \
     missed_count, overlap_count, last_duration_ns, backlog, queued, last_fault, running, ops, \
     fence, slot, record) \
     WHERE s.id = u.id AND s.fence = u.fence AND s.owner_node IS NOT DISTINCT FROM $18 \
     RETURNING s.id";

/// Splices history records into their rows' rings, fenced as a cadence update (node `$5`):
/// `$1` the ids, `$2` the slots, `$3` the records (25 bytes each), `$4` the fences — the splice
/// [`UPDATE_CADENCE`] makes, for records with no update to ride in (docs/schedules.md §9.11,
/// §11.53). One statement for many rows; it may not update a row twice, so each id comes once.
pub(super) const SPLICE_HISTORY: &str = "UPDATE tickstep_schedules AS s SET history = \
     overlay(coalesce(s.history, decode(repeat('00', 500), 'hex')) \
     PLACING u.record FROM u.slot * 25 + 1 FOR 25) \
     FROM unnest($1::bigint[], $2::integer[], $3::bytea[], $4::bigint[]) \
     AS u(id, slot, record, fence) \
     WHERE s.id = u.id AND s.fence = u.fence AND s.owner_node IS NOT DISTINCT FROM $5";

/// One round of history splices as column arrays, the parameters of [`SPLICE_HISTORY`].
#[derive(Default)]
pub(super) struct SpliceColumns {
    id: Vec<i64>,
    slot: Vec<i32>,
    record: Vec<Vec<u8>>,
    fence: Vec<i64>,
}

impl SpliceColumns {
    /// Adds record `h`, to be spliced while its row's fence is `fence`.
    pub(super) fn push(&mut self, h: &HistoryRow, fence: i64) {
        self.id.push(to_sql(h.schedule));
        self.slot.push(i32::try_from(h.slot).unwrap_or(i32::MAX));
        self.record.push(super::history_ring::encode(h).to_vec());
        self.fence.push(fence);
    }

    /// The parameters of [`SPLICE_HISTORY`], in order, for the writes of `node`.
    pub(super) fn params<'a>(&'a self, node: &'a i64) -> [&'a (dyn ToSql + Sync); 5] {
        [&self.id, &self.slot, &self.record, &self.fence, node]
    }
}

/// Of the rows (`$1` ids, `$2` fences) a fenced write just matched nothing in, those that still
/// exist under another holder or fence: taken over, the write refused. Rows a stop deleted are
/// not among them.
pub(super) const TAKEN_OVER: &str = "SELECT s.id FROM tickstep_schedules AS s \
     JOIN unnest($1::bigint[], $2::bigint[]) AS u(id, fence) ON s.id = u.id \
     WHERE s.fence <> u.fence OR s.owner_node IS DISTINCT FROM $3";

/// Deletes by id, whoever holds the row (a stop made in a transaction: docs/schedules.md
/// §11.27); returns the ids that existed.
pub(super) const DELETE: &str =
    "DELETE FROM tickstep_schedules WHERE id = ANY($1::bigint[]) RETURNING id";

/// The notes a transaction's stops leave for the nodes holding them (`$1` ids, `$2` Unix ns),
/// as an operator's stop does (docs/schedules.md §11.21, §11.30).
pub(super) const NOTE_STOPS: &str = "INSERT INTO tickstep_operator_stops (schedule_id, stopped_at_ns) \
     SELECT id, $2 FROM unnest($1::bigint[]) AS id";

/// The notification of those stops, one per id (payload: the id).
pub(super) const NOTIFY_STOPS: &str =
    "SELECT pg_notify('tickstep_stops', id::text) FROM unnest($1::bigint[]) AS id";

/// Records faulted firings whole in the history table, beside their records in the rows' rings
/// (docs/schedules.md §9.11): a fault's value has no fixed width. One statement for a batch:
/// each replaces its slot's previous row; a schedule whose row is gone records nothing. A batch holds each (schedule, slot) once ([`HistoryColumns::of`]
/// keeps the newest), since one statement may not update a row twice.
///
/// No foreign key guards the table (schema version 9, docs/schedules.md §13.53): the live rows
/// are found by one join and locked `FOR KEY SHARE`, the lock a foreign key's check would take
/// row by row, so a concurrent delete either waits for this commit (and its trigger then takes
/// these records) or has committed first (and the row is not joined).
pub(super) const RECORD_HISTORY: &str = "WITH live AS (SELECT id FROM tickstep_schedules \
     WHERE id = ANY($1::bigint[]) FOR KEY SHARE) \
     INSERT INTO tickstep_firing_history \
     (schedule_id, slot, started_at, ended_at, nominal, outcome, fault) \
     SELECT u.schedule_id, u.slot, u.started_at, u.ended_at, u.nominal, u.outcome, u.fault \
     FROM unnest($1::bigint[], $2::integer[], $3::bigint[], $4::bigint[], $5::bigint[], \
     $6::text[], $7::text[]) \
     AS u(schedule_id, slot, started_at, ended_at, nominal, outcome, fault) \
     JOIN live ON live.id = u.schedule_id \
     ON CONFLICT (schedule_id, slot) DO UPDATE SET started_at = EXCLUDED.started_at, \
     ended_at = EXCLUDED.ended_at, nominal = EXCLUDED.nominal, outcome = EXCLUDED.outcome, \
     fault = EXCLUDED.fault";

/// A schedule's history ring (schema version 10 on; `$1` the id).
pub(super) const SELECT_RING: &str = "SELECT history FROM tickstep_schedules WHERE id = $1";

/// The faults of a schedule's history (schema version 10 on): slot, started, fault.
pub(super) const SELECT_FAULTS: &str = "SELECT slot, started_at, fault \
     FROM tickstep_firing_history WHERE schedule_id = $1 AND fault IS NOT NULL";

/// A schedule's history as schema versions 7 to 9 keep it, a row per record, newest first
/// (`$1` the id).
pub(super) const SELECT_HISTORY: &str = "SELECT slot, started_at, ended_at, nominal, fault \
     FROM tickstep_firing_history WHERE schedule_id = $1 ORDER BY started_at DESC, slot DESC";

/// A batch of history records as column arrays, the parameters of [`RECORD_HISTORY`].
#[derive(Default)]
pub(super) struct HistoryColumns {
    schedule: Vec<i64>,
    slot: Vec<i32>,
    started: Vec<i64>,
    ended: Vec<i64>,
    nominal: Vec<i64>,
    outcome: Vec<&'static str>,
    fault: Vec<Option<String>>,
}

impl HistoryColumns {
    /// The records of `history`, the newest of each (schedule, slot) only.
    pub(super) fn of(history: &[HistoryRow]) -> Self {
        let mut columns = HistoryColumns::default();
        let mut seen = std::collections::HashSet::new();
        for h in history.iter().rev() {
            if !seen.insert((h.schedule, h.slot)) {
                continue;
            }
            columns.schedule.push(to_sql(h.schedule));
            columns.slot.push(i32::try_from(h.slot).unwrap_or(i32::MAX));
            columns.started.push(to_sql(h.started));
            columns.ended.push(to_sql(h.ended));
            columns.nominal.push(to_sql(h.nominal));
            columns.outcome.push(outcome_word(h));
            columns.fault.push(h.fault.as_ref().map(fault_json));
        }
        columns
    }

    /// The parameters of [`RECORD_HISTORY`], in order.
    pub(super) fn params(&self) -> [&(dyn ToSql + Sync); 7] {
        [
            &self.schedule,
            &self.slot,
            &self.started,
            &self.ended,
            &self.nominal,
            &self.outcome,
            &self.fault,
        ]
    }
}

/// Deletes by id (`$1`) and fence (`$2`), only rows node `$3` still holds (retirements written
/// behind the tick, fenced like cadence updates).
pub(super) const DELETE_FENCED: &str = "DELETE FROM tickstep_schedules AS s \
     USING unnest($1::bigint[], $2::bigint[]) AS u(id, fence) \
     WHERE s.id = u.id AND s.fence = u.fence AND s.owner_node IS NOT DISTINCT FROM $3";

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
    ops: Vec<Option<String>>,
    fence: Vec<i64>,
    slot: Vec<i32>,
    record: Vec<Option<Vec<u8>>>,
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
        self.ops.clear();
        self.fence.clear();
        self.slot.clear();
        self.record.clear();
    }

    /// How many rows the batch holds.
    pub(super) fn len(&self) -> usize {
        self.id.len()
    }

    /// The batch's ids and fences, the parameters of [`TAKEN_OVER`].
    pub(super) fn ids_and_fences(&self) -> (&Vec<i64>, &Vec<i64>) {
        (&self.id, &self.fence)
    }

    /// Adds row `id`'s update, with the history record that rides in it, if any.
    pub(super) fn push(&mut self, id: u64, fence: i64, c: &Cadence, record: Option<&HistoryRow>) {
        self.fence.push(fence);
        self.slot
            .push(record.map_or(0, |h| i32::try_from(h.slot).unwrap_or(i32::MAX)));
        self.record
            .push(record.map(|h| super::history_ring::encode(h).to_vec()));
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
        self.last_fault
            .push(c.last_fault.as_deref().map(fault_json));
        let running = running_json(&c.running, &mut self.running_buf);
        self.running.push(running.then(|| self.running_buf.clone()));
        self.ops.push(c.ops.as_ref().map(json));
    }

    /// The parameters of [`UPDATE_CADENCE`], in order, for the writes of `node`.
    pub(super) fn params<'a>(&'a self, node: &'a i64) -> [&'a (dyn ToSql + Sync); 20] {
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
            &self.ops,
            &self.fence,
            node,
            &self.slot,
            &self.record,
        ]
    }
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

type Decoded<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// Reads one row a claim returned ([`claim_sql`]; the fence is read apart), with the decoding
/// both stores share.
pub(super) fn decode(row: &Row) -> Decoded<ScheduleRow> {
    crate::store::decode::decode(row)
}

impl StoredColumns for Row {
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn int(&self, i: usize) -> Decoded<i64> {
        // `backlog` is an INTEGER column; every other integer is a BIGINT.
        if self
            .columns()
            .get(i)
            .is_some_and(|c| *c.type_() == Type::INT4)
        {
            return Ok(i64::from(self.try_get::<_, i32>(i)?));
        }
        Ok(self.try_get(i)?)
    }

    fn int_or_null(&self, i: usize) -> Decoded<Option<i64>> {
        Ok(self.try_get(i)?)
    }

    fn flag(&self, i: usize) -> Decoded<bool> {
        Ok(self.try_get(i)?)
    }

    fn text(&self, i: usize) -> Decoded<&str> {
        Ok(self.try_get(i)?)
    }

    fn text_or_null(&self, i: usize) -> Decoded<Option<&str>> {
        Ok(self.try_get(i)?)
    }

    fn corrupt(
        &self,
        id: Option<u64>,
        _index: usize,
        column: &'static str,
        text: &str,
    ) -> Self::Error {
        Box::new(Corrupt {
            id,
            column,
            text: crate::limits::excerpt(text),
        })
    }
}

#[cfg(test)]
mod fence_column_tests {
    use super::{COLUMNS, FENCE_COLUMN};

    #[test]
    fn the_fence_is_returned_right_after_the_row_columns() {
        assert_eq!(FENCE_COLUMN, COLUMNS.split(',').count());
    }
}
