//! Rows: what the engine and a store hand each other, and nothing else (docs/schedules.md
//! §11.12).
//!
//! This module is the storage boundary's vocabulary. It imports nothing of the engine: a store
//! turns rows into its own format (SQL parameters for `SQLite`; the same rows would become
//! statements or `COPY` batches for a `PostgreSQL` store) without knowing how the engine keeps
//! schedules in memory, and the engine builds and applies rows without knowing which store it
//! talks to. Rows are plain owned data (`Send`), so a store that does its I/O on another thread
//! can take a [`ChangeSet`] across and hand [`ScheduleRow`]s back.
//!
//! * Loading: a store streams every saved schedule as a [`ScheduleRow`] into a [`RowSink`].
//! * Committing: the engine hands the store a [`ChangeSet`] — whole rows to insert, cadence state
//!   to update, ids to delete — with a [`Durability`] that says when the write must be on disk.

use crate::{Catchup, Fault, ObjId, Overlap, RunId, ScheduleKind, Value};

/// A firing in flight when the row was written.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct RunningRow {
    /// The host's run id; `None` while the firing's start waits for this row to be durable
    /// (docs/schedules.md §11.42), so whether it started is unknown after a crash.
    pub(crate) run: Option<RunId>,
    /// The cadence point it serves (Unix nanoseconds).
    pub(crate) nominal: u64,
    /// When it started (Unix nanoseconds); for a start still waiting, when it was planned, or 0
    /// when a clean shutdown left it known never started.
    pub(crate) started_unix: u64,
}

/// The firings in flight in a row. Nearly always none or one, and a row is built for every
/// firing on a store (the group commit's update), so one is kept inline: the engine's thread
/// allocates nothing for it, and the store's writer frees nothing (docs/schedules.md §17.11).
pub(crate) type RunningRows = smallvec::SmallVec<[RunningRow; 1]>;

/// The part of a schedule that changes as it fires: group-committed once per tick.
#[derive(Clone, PartialEq, Debug, Default)]
pub(crate) struct Cadence {
    pub(crate) next_run: u64,
    pub(crate) fire_at: u64,
    pub(crate) armed: bool,
    pub(crate) last_run: u64,
    pub(crate) run_count: u64,
    pub(crate) fault_count: u64,
    pub(crate) consecutive_faults: u32,
    pub(crate) missed_count: u64,
    pub(crate) overlap_count: u64,
    pub(crate) last_duration_ns: u64,
    pub(crate) backlog: u16,
    pub(crate) queued: Option<u64>,
    /// Boxed, as `ops` is: most schedules have none (docs/schedules.md §17.6).
    pub(crate) last_fault: Option<Box<Fault>>,
    pub(crate) running: RunningRows,
    /// What operators did to the schedule (docs/schedules.md §9.4–§9.10); `None` for nothing.
    /// Boxed: most schedules have none, and every dirty schedule's cadence is built and moved
    /// at each group commit, so the row stays small (docs/schedules.md §17.6).
    pub(crate) ops: Option<Box<OpsRow>>,
}

/// A schedule's operator state (docs/schedules.md §9.4–§9.10), stored as one JSON column (`ops`) so
/// that it rides the cadence update: pause, points missed while paused, a `trigger_now` not
/// fired yet, a backfill's remaining range.
#[derive(Clone, PartialEq, Eq, Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OpsRow {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) paused: Option<PausedRow>,
    /// Cadence points missed because the schedule was paused, over its life.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) paused_missed: u64,
    /// A `trigger_now` waiting for the next tick.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) trigger: bool,
    /// The backfill still to fire: (next point, last point), Unix nanoseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) backfill: Option<(u64, u64)>,
    /// The points missed by every reason but `paused` (counted above), and the last miss
    /// (docs/schedules.md §9.15, §11.48).
    #[serde(default, skip_serializing_if = "crate::missed::MissedRow::is_empty")]
    pub(crate) missed: crate::missed::MissedRow,
    /// The newest operator note (its `seq`) this state includes (docs/schedules.md §9.12): an
    /// engine that overwrote the row before it read a newer note applies that note at open.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) note: u64,
}

impl OpsRow {
    /// Whether nobody touched the schedule (the row then keeps no `ops`). Asked of every dirty
    /// schedule at every group commit, so field by field, not against a default built for it
    /// (docs/schedules.md §17.11).
    pub(crate) fn is_empty(&self) -> bool {
        let OpsRow {
            paused,
            paused_missed,
            trigger,
            backfill,
            missed,
            note,
        } = self;
        *paused_missed == 0
            && *note == 0
            && !trigger
            && paused.is_none()
            && backfill.is_none()
            && missed.is_empty()
    }
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A note an operator left in the store for the engines running on it (docs/schedules.md
/// §11.11, §9.12): a stop (no action; the row is gone already) or an action to apply.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct OperatorNote {
    /// The note's place in the store's notes (`seq`).
    pub(crate) seq: u64,
    pub(crate) id: u64,
    pub(crate) action: Option<OperatorAction>,
}

/// An operator action taken from outside the engine, stored in its note as JSON
/// (docs/schedules.md §9.12).
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum OperatorAction {
    Pause {
        note: String,
    },
    Resume,
    Trigger,
    /// The range, Unix nanoseconds.
    Backfill {
        from: u64,
        to: u64,
    },
}

/// Who paused a schedule, when (Unix nanoseconds) and why.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PausedRow {
    pub(crate) by: ObjId,
    pub(crate) at: u64,
    pub(crate) note: String,
    /// Whether it has a deadline to be armed at on resume (its `fire_at`): it had one when
    /// paused, or got one since (an outcome re-armed it).
    pub(crate) armed: bool,
}

/// One saved schedule, whole.
#[derive(Clone, PartialEq, Debug)]
#[allow(clippy::struct_excessive_bools)] // the schedule's options, one to one
pub(crate) struct ScheduleRow {
    pub(crate) id: u64,
    pub(crate) kind: ScheduleKind,
    pub(crate) target: ObjId,
    pub(crate) verb: String,
    /// `None` for no arguments.
    pub(crate) args: Option<Vec<Value>>,
    pub(crate) state: Option<Value>,
    pub(crate) owner: ObjId,
    pub(crate) player: ObjId,
    pub(crate) interval_ns: u64,
    pub(crate) interval_clamped: bool,
    pub(crate) jitter_ns: u64,
    pub(crate) max_faults: u32,
    pub(crate) catchup: Catchup,
    pub(crate) overlap: Overlap,
    pub(crate) adaptive: bool,
    pub(crate) pass_elapsed: bool,
    pub(crate) created_at: u64,
    /// The `seconds` option in nanoseconds (at least 1); `None` for no limit.
    pub(crate) time_limit_ns: Option<u64>,
    /// The `ticks` option (at least 1); `None` for no limit.
    pub(crate) tick_limit: Option<u64>,
    /// The schedule's key, unique per owner (docs/schedules.md §5.12); `None` for none.
    pub(crate) key: Option<String>,
    /// A `Cron` schedule's calendar, stored as its expression, zone and DST policy
    /// (docs/schedules.md §14.14); `None` for the other kinds.
    pub(crate) calendar: Option<std::sync::Arc<crate::Calendar>>,
    /// The policies of docs/schedules.md §16 (the `policies` column, NULL for the defaults).
    pub(crate) policies: crate::policies::Policies,
    pub(crate) cadence: Cadence,
}

/// A row a store claimed for this engine while it runs (docs/schedules.md §11.26), with the
/// node that held it before: the firings the row says are running were that node's, and the
/// engine settles them at once as taken over (docs/schedules.md §11.39).
#[derive(Clone, PartialEq, Debug)]
pub(crate) struct ClaimedRow {
    pub(crate) row: ScheduleRow,
    /// The node whose lease ran out; `None` when the row had no holder (a node closed cleanly
    /// and handed it back).
    pub(crate) from_node: Option<u64>,
}

/// When a commit must be on disk.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Durability {
    /// Before the commit returns (creations and stops: `Txn::commit`'s promise).
    Synced,
    /// Written behind the caller, synced with the store's next checkpoint (a tick's cadence
    /// updates: a crash may replay a firing, docs/schedules.md §11.2).
    Grouped,
}

/// What one commit writes. Cleared and reused, so a tick's group commit does not allocate once
/// its buffers have grown.
#[derive(Clone, PartialEq, Debug, Default)]
pub(crate) struct ChangeSet {
    /// Whole rows to insert (or replace).
    pub(crate) inserts: Vec<ScheduleRow>,
    /// Cadence state of existing rows, by id; an id the store no longer holds is skipped.
    pub(crate) updates: Vec<(u64, Cadence)>,
    /// Rows to delete.
    pub(crate) deletes: Vec<u64>,
    /// Settled firings to record in the schedules' histories (docs/schedules.md §9.11).
    pub(crate) history: Vec<HistoryRow>,
}

impl HistoryRow {
    /// The record `schedule_info` shows.
    pub(crate) fn into_record(self) -> crate::FiringRecord {
        let seconds = crate::info::unix_seconds;
        crate::FiringRecord {
            started: seconds(self.started),
            ended: seconds(self.ended),
            nominal: seconds(self.nominal),
            fault: self.fault,
        }
    }
}

/// One settled firing of a schedule, for its bounded history (docs/schedules.md §9.11).
#[derive(Clone, PartialEq, Debug)]
pub(crate) struct HistoryRow {
    pub(crate) schedule: u64,
    /// The ring position: the firing's number modulo `HISTORY_KEPT`.
    pub(crate) slot: u32,
    /// Unix nanoseconds.
    pub(crate) started: u64,
    pub(crate) ended: u64,
    /// The cadence point it served.
    pub(crate) nominal: u64,
    /// `None` for a returned value.
    pub(crate) fault: Option<Fault>,
}

impl ChangeSet {
    /// Whether the commit would write nothing.
    pub(crate) fn is_empty(&self) -> bool {
        self.inserts.is_empty()
            && self.updates.is_empty()
            && self.deletes.is_empty()
            && self.history.is_empty()
    }

    /// Empties the set, keeping its buffers.
    pub(crate) fn clear(&mut self) {
        self.inserts.clear();
        self.updates.clear();
        self.deletes.clear();
        self.history.clear();
    }
}

/// Where a store's load delivers rows.
pub(crate) trait RowSink {
    /// How many rows are coming (a hint, for reserving room).
    fn expect(&mut self, rows: usize);

    /// Applies one row.
    ///
    /// # Errors
    ///
    /// Whatever the engine refuses in the row; the load stops there.
    fn apply(&mut self, row: ScheduleRow) -> Result<(), crate::Error>;
}

#[cfg(test)]
mod tests {
    use super::OpsRow;
    use crate::MissedReason;

    #[test]
    fn an_operator_state_is_empty_only_while_every_field_is_its_default() {
        assert!(OpsRow::default().is_empty());
        let touched: [fn(&mut OpsRow); 11] = [
            |o| o.paused_missed = 1,
            |o| o.note = 1,
            |o| o.trigger = true,
            |o| o.backfill = Some((1, 2)),
            |o| o.missed.add(MissedReason::Overlap, 1, 5),
            |o| o.missed.catchup = 1,
            |o| o.missed.catchup_window = 1,
            |o| o.missed.overlap = 1,
            |o| o.missed.dst_gap = 1,
            |o| o.missed.last = Some((5, MissedReason::Paused)),
            |o| {
                o.paused = Some(super::PausedRow {
                    by: crate::ObjId(1),
                    at: 1,
                    note: String::new(),
                    armed: false,
                });
            },
        ];
        for touch in touched {
            let mut ops = OpsRow::default();
            touch(&mut ops);
            assert!(!ops.is_empty(), "{ops:?}");
        }
    }

    /// Every dirty schedule's cadence is built and moved at each group commit (docs/schedules.md
    /// §17.6, §17.11): the rare operator state and last fault stay boxed, so the common row,
    /// with its one running firing inline, is copied small.
    #[test]
    fn a_cadence_row_keeps_its_operator_state_boxed() {
        assert!(
            size_of::<super::Cadence>() <= 144,
            "Cadence is {} bytes",
            size_of::<super::Cadence>()
        );
    }
}
