//! One stored schedule row back into a [`ScheduleRow`], for either SQL store.
//!
//! Both stores keep the same columns in the same order ([`COLUMNS`](super::codec::COLUMNS)) with
//! the same encodings — `u64`s as bit-preserving signed integers, values as JSON, policies by
//! name — so what each column means, and which stored values are refused, is written once, here.
//! A store says only how to read one column of its row as a plain SQL type, and how it names a
//! value that does not decode ([`StoredColumns`]); its own error type comes back unchanged, so the
//! `SQLite` store still names the column's index and the `PostgreSQL` store its own table
//! (docs/schedules.md §12.2, §12.3).
//!
//! The trait is generic, not dynamic: each store's decoder is compiled for its own row type, with
//! the same column reads it made before, and values are parsed from borrowed text.

use super::codec::{from_sql, parse_calendar, parse_fault, parse_ops, parse_running};
use crate::store_rows::{Cadence, ScheduleRow};
use crate::{Catchup, ObjId, Overlap, ScheduleKind, Value};

/// A store's row, read one column at a time (columns numbered as in
/// [`COLUMNS`](super::codec::COLUMNS)).
pub(crate) trait StoredColumns {
    /// The store's own error: a column that is missing or of the wrong type, or a bad value.
    type Error;

    /// Column `i`, an integer.
    fn int(&self, i: usize) -> Result<i64, Self::Error>;

    /// Column `i`, an integer or `NULL`.
    fn int_or_null(&self, i: usize) -> Result<Option<i64>, Self::Error>;

    /// Column `i`, a boolean.
    fn flag(&self, i: usize) -> Result<bool, Self::Error>;

    /// Column `i`, text (an error naming the column if it holds anything else).
    fn text(&self, i: usize) -> Result<&str, Self::Error>;

    /// Column `i`, text or `NULL`.
    fn text_or_null(&self, i: usize) -> Result<Option<&str>, Self::Error>;

    /// The error for a value of column `column` (number `index`) that does not decode, in the
    /// schedule with id `id` (`None` when the id itself did not read).
    fn corrupt(
        &self,
        id: Option<u64>,
        index: usize,
        column: &'static str,
        text: &str,
    ) -> Self::Error;
}

/// Column `index`, an integer, as the narrower field it is stored for.
fn narrow<R: StoredColumns + ?Sized, T: TryFrom<i64>>(
    row: &R,
    id: Option<u64>,
    index: usize,
    column: &'static str,
) -> Result<T, R::Error> {
    let n = row.int(index)?;
    T::try_from(n).map_err(|_| row.corrupt(id, index, column, &n.to_string()))
}

/// Column `index`, JSON text or `NULL`, as the value it encodes.
fn json<R: StoredColumns + ?Sized, T: serde::de::DeserializeOwned>(
    row: &R,
    id: Option<u64>,
    index: usize,
    column: &'static str,
) -> Result<Option<T>, R::Error> {
    row.text_or_null(index)?
        .map(|t| serde_json::from_str(t).map_err(|_| row.corrupt(id, index, column, t)))
        .transpose()
}

/// Reads one row (selected with [`COLUMNS`](super::codec::COLUMNS)).
///
/// # Errors
///
/// The store's error for a column it cannot read, or [`StoredColumns::corrupt`] naming the
/// schedule and the column for a value that does not decode: an unknown kind or policy, JSON
/// that is not a value, a fault or a list of running firings, a counter too large for its field,
/// a firing limit of 0, a key that breaks the key rule (docs/schedules.md §5.12), an operator
/// state that is not one (docs/schedules.md §9.4–§9.10).
pub(crate) fn decode<R: StoredColumns + ?Sized>(row: &R) -> Result<ScheduleRow, R::Error> {
    let u = |i: usize| -> Result<u64, R::Error> { row.int(i).map(from_sql) };
    // Read first, so every error below names the schedule.
    let id = u(0).ok();
    let bad = |index: usize, column: &'static str, text: &str| row.corrupt(id, index, column, text);
    let kind = match row.text(1)? {
        "at" => ScheduleKind::At,
        "every" => ScheduleKind::Every,
        "cron" => ScheduleKind::Cron,
        other => return Err(bad(1, "kind", other)),
    };
    let verb = row.text(3)?.to_owned();
    let args: Option<Vec<Value>> = json(row, id, 4, "args")?;
    let state: Option<Value> = json(row, id, 5, "state")?;
    let catchup_text = row.text(12)?;
    let catchup = Catchup::parse(catchup_text).ok_or_else(|| bad(12, "catchup", catchup_text))?;
    let overlap_text = row.text(13)?;
    let overlap = Overlap::parse(overlap_text).ok_or_else(|| bad(13, "overlap", overlap_text))?;
    let last_fault = row
        .text_or_null(29)?
        .map(|t| parse_fault(t).ok_or_else(|| bad(29, "last_fault", t)))
        .transpose()?;
    let running = row
        .text_or_null(30)?
        .map(|t| parse_running(t).ok_or_else(|| bad(30, "running", t)))
        .transpose()?
        .unwrap_or_default();
    let limit = |i: usize, column: &'static str| -> Result<Option<u64>, R::Error> {
        match row.int_or_null(i)? {
            Some(0) => Err(bad(i, column, "0")),
            n => Ok(n.map(from_sql)),
        }
    };
    let key = row
        .text_or_null(33)?
        .map(|k| {
            crate::schedule_keys::is_valid_key(k)
                .then(|| k.to_owned())
                .ok_or_else(|| bad(33, "key", k))
        })
        .transpose()?;
    let ops = row
        .text_or_null(34)?
        .map(|t| parse_ops(t).map(Box::new).ok_or_else(|| bad(34, "ops", t)))
        .transpose()?;
    let calendar = calendar(row, kind, &bad)?;
    let policies = row
        .text_or_null(38)?
        .map(|t| crate::policies::from_column(t).ok_or_else(|| bad(38, "policies", t)))
        .transpose()?
        .unwrap_or_default();
    Ok(ScheduleRow {
        id: u(0)?,
        kind,
        target: ObjId(row.int(2)?),
        verb,
        args,
        state,
        owner: ObjId(row.int(6)?),
        player: ObjId(row.int(7)?),
        interval_ns: u(8)?,
        interval_clamped: row.flag(9)?,
        jitter_ns: u(10)?,
        max_faults: narrow(row, id, 11, "max_faults")?,
        catchup,
        overlap,
        adaptive: row.flag(14)?,
        pass_elapsed: row.flag(15)?,
        created_at: u(16)?,
        time_limit_ns: limit(31, "time_limit_ns")?,
        tick_limit: limit(32, "tick_limit")?,
        key,
        calendar,
        policies,
        cadence: Cadence {
            next_run: u(17)?,
            fire_at: u(18)?,
            armed: row.flag(19)?,
            last_run: u(20)?,
            run_count: u(21)?,
            fault_count: u(22)?,
            consecutive_faults: narrow(row, id, 23, "consecutive_faults")?,
            missed_count: u(24)?,
            overlap_count: u(25)?,
            last_duration_ns: u(26)?,
            backlog: narrow(row, id, 27, "backlog")?,
            queued: row.int_or_null(28)?.map(from_sql),
            last_fault: last_fault.map(Box::new),
            running,
            ops,
        },
    })
}

/// A calendar schedule's calendar (columns 35-37), checked as its creation checked it
/// (docs/schedules.md §14.14); the other kinds have none.
fn calendar<R: StoredColumns + ?Sized>(
    row: &R,
    kind: ScheduleKind,
    bad: &dyn Fn(usize, &'static str, &str) -> R::Error,
) -> Result<Option<std::sync::Arc<crate::Calendar>>, R::Error> {
    let expr = row.text_or_null(35)?;
    if kind != ScheduleKind::Cron {
        return match expr {
            None => Ok(None),
            Some(expr) => Err(bad(35, "cron_expr", expr)),
        };
    }
    let expr = expr.ok_or_else(|| bad(35, "cron_expr", "NULL"))?;
    let zone = row
        .text_or_null(36)?
        .ok_or_else(|| bad(36, "cron_zone", "NULL"))?;
    let dst = row
        .text_or_null(37)?
        .ok_or_else(|| bad(37, "cron_dst", "NULL"))?;
    let calendar = parse_calendar(expr, zone, dst).map_err(|(column, text)| {
        let index = match column {
            "cron_zone" => 36,
            "cron_dst" => 37,
            _ => 35,
        };
        bad(index, column, &text)
    })?;
    Ok(Some(std::sync::Arc::new(calendar)))
}
