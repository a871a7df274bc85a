//! The engine's side of the storage boundary: entries become rows on the way out, rows become
//! entries on the way in, and the store never sees an entry.
//!
//! * **Load** — [`Loader`] is the [`RowSink`] a store streams its rows into at open: each row
//!   becomes an entry, in-flight firings are handed back as interrupted, and catch-up is applied
//!   (see [`cadence`](super::cadence)) so the state right after open is the true one.
//! * **Commit** — [`StoreSide::group_commit`](super::store_side::StoreSide::group_commit) turns
//!   every dirty entry into a [`Cadence`] update and every retired persistent entry into a delete,
//!   in one `ChangeSet` written `Durability::Grouped`; a transaction's commit
//!   ([`access`](super::access)) writes whole rows `Durability::Synced`.

use std::rc::Rc;

use super::core::Core;
use super::entry::{Entry, Extra, Limits, Running};
use super::interner::{Calendars, Interner};
use super::runs::RunRecord;
use crate::store_rows::{Cadence, RowSink, RunningRow, RunningRows, ScheduleRow};
use crate::{Error, InFlight, RunId, ScheduleId};

impl Entry {
    /// The entry's cadence state as a row part.
    pub(super) fn cadence(&self) -> Cadence {
        Cadence {
            next_run: self.next_run,
            fire_at: self.fire_at,
            armed: self.armed,
            last_run: self.last_run,
            run_count: self.run_count,
            fault_count: self.fault_count,
            consecutive_faults: self.consecutive_faults,
            missed_count: self.missed_count,
            overlap_count: self.overlap_count,
            last_duration_ns: self.last_duration_ns,
            backlog: self.backlog,
            queued: self.queued(),
            last_fault: self.last_fault().cloned().map(Box::new),
            running: self.running_rows(),
            ops: self
                .ops()
                .filter(|o| !o.is_empty())
                .map(|o| Box::new(o.clone())),
        }
    }

    /// The firings in flight as row parts. Pushed one by one: collecting into the inline list
    /// cost a firing about as much again (docs/schedules.md §17.11).
    fn running_rows(&self) -> RunningRows {
        let mut rows = RunningRows::new();
        for r in self.running() {
            rows.push(RunningRow {
                run: r.run,
                nominal: r.nominal,
                started_unix: r.started_unix,
            });
        }
        rows
    }

    /// The whole entry as a row.
    pub(super) fn to_row(&self, verbs: &Interner) -> ScheduleRow {
        ScheduleRow {
            id: self.id,
            kind: self.kind,
            target: self.target,
            verb: verbs.name(self.verb).to_string(),
            args: self.args().map(|a| a.to_vec()),
            state: self.state().map(|s| (**s).clone()),
            owner: self.owner,
            player: self.player,
            interval_ns: self.interval_ns,
            interval_clamped: self.interval_clamped,
            jitter_ns: self.jitter_ns,
            max_faults: self.max_faults,
            catchup: self.catchup,
            overlap: self.overlap,
            adaptive: self.adaptive,
            pass_elapsed: self.pass_elapsed,
            created_at: self.created_at,
            time_limit_ns: self.limits().time_limit_ns,
            tick_limit: self.limits().tick_limit,
            key: self.key().map(ToString::to_string),
            calendar: self.calendar.clone(),
            policies: self.policies(),
            cadence: self.cadence(),
        }
    }

    /// A saved row as an entry (persistent, clean).
    pub(super) fn from_row(
        row: ScheduleRow,
        verbs: &mut Interner,
        calendars: &mut Calendars,
    ) -> Self {
        let c = row.cadence;
        let running: Vec<Running> = c
            .running
            .into_iter()
            .map(|r| Running {
                run: r.run,
                nominal: r.nominal,
                started_unix: r.started_unix,
                // A start a clean shutdown parked waits again (docs/schedules.md §11.42).
                waiting: r.started_unix == 0,
            })
            .collect();
        let limits = Limits {
            time_limit_ns: row.time_limit_ns,
            tick_limit: row.tick_limit,
        };
        let needs_extra = row.args.is_some()
            || row.state.is_some()
            || !limits.is_none()
            || row.key.is_some()
            || !row.policies.is_default()
            || c.last_fault.is_some()
            || c.queued.is_some()
            || c.ops.is_some()
            || !running.is_empty();
        let extra = needs_extra.then(|| {
            Box::new(Extra {
                args: row.args.map(Rc::from),
                state: row.state.map(Rc::new),
                last_fault: c.last_fault.map(|f| *f),
                queued: c.queued,
                running,
                limits,
                key: row.key.map(Rc::from),
                ops: c.ops.map(|o| *o).unwrap_or_default(),
                policies: row.policies,
                ..Extra::default()
            })
        });
        Entry {
            id: row.id,
            kind: row.kind,
            target: row.target,
            verb: verbs.intern(&row.verb),
            owner: row.owner,
            player: row.player,
            interval_ns: row.interval_ns,
            interval_clamped: row.interval_clamped,
            jitter_ns: row.jitter_ns,
            max_faults: row.max_faults,
            catchup: row.catchup,
            overlap: row.overlap,
            adaptive: row.adaptive,
            pass_elapsed: row.pass_elapsed,
            persist: true,
            created_at: row.created_at,
            next_run: c.next_run,
            fire_at: c.fire_at,
            armed: c.armed,
            last_run: c.last_run,
            run_count: c.run_count,
            fault_count: c.fault_count,
            consecutive_faults: c.consecutive_faults,
            missed_count: c.missed_count,
            overlap_count: c.overlap_count,
            last_duration_ns: c.last_duration_ns,
            backlog: c.backlog,
            dirty: false,
            extra,
            calendar: row.calendar.map(|c| calendars.intern(c)),
        }
    }
}

/// Applies loaded rows to a core: the [`RowSink`] a store's load fills.
pub(super) struct Loader<'a> {
    core: &'a mut Core,
    max_id: u64,
    interrupted_ids: Vec<u64>,
    /// Idle recurring schedules whose deadline passed while the engine was down.
    behind: Vec<u64>,
    /// Starts that were waiting for their row to be durable: (id, (point, run), parked by a
    /// clean shutdown).
    waiting: Vec<(u64, (u64, Option<RunId>), bool)>,
    deadlines: Vec<(u64, u64)>,
    now: u64,
    /// Loading claimed rows (`Some`): the firings each row says are running were another
    /// node's; they are collected here, by schedule, to be settled as taken over, and never
    /// registered as this engine's runs (their ids are another host's).
    taken_over: Option<Vec<(u64, usize)>>,
}

impl<'a> Loader<'a> {
    /// A loader for an engine opening at `now` (Unix nanoseconds).
    pub(super) fn new(core: &'a mut Core, now: u64) -> Self {
        Loader {
            core,
            max_id: 0,
            interrupted_ids: Vec::new(),
            behind: Vec::new(),
            waiting: Vec::new(),
            deadlines: Vec::new(),
            now,
            taken_over: None,
        }
    }

    /// A loader for rows claimed from other nodes while the engine runs (docs/schedules.md
    /// §11.39): like [`Loader::new`], but in-flight firings are collected for
    /// [`Loader::take_taken_over`] instead of handed back as interrupted.
    pub(super) fn for_claims(core: &'a mut Core, now: u64) -> Self {
        Loader {
            taken_over: Some(Vec::new()),
            ..Loader::new(core, now)
        }
    }

    /// The schedules whose rows came with firings in flight, and how many each, since the last
    /// call.
    pub(super) fn take_taken_over(&mut self) -> Vec<(u64, usize)> {
        self.taken_over
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Arms what was loaded (one O(n) heap build) and resumes the id counter above both the
    /// high-water mark and every loaded id. Returns the schedules that need catch-up, to be
    /// applied once the store is attached (so that what catch-up changes is marked for the first
    /// group commit).
    pub(super) fn finish(self, high_water: u64) -> Behind {
        let Loader {
            core,
            max_id,
            interrupted_ids,
            behind,
            waiting,
            deadlines,
            now,
            taken_over: _,
        } = self;
        core.table.arm_in_bulk(deadlines);
        core.store.last_id = high_water.max(max_id);
        core.store.reserved_through = high_water;
        Behind {
            interrupted: interrupted_ids,
            idle: behind,
            waiting,
            now,
        }
    }

    /// Like [`Loader::finish`] for rows claimed while the engine runs: each is armed on its
    /// own (the heap is not rebuilt) and the id counter is left alone (the store hands out
    /// ids; a claimed row's id was never this engine's to reuse).
    pub(super) fn finish_claims(self) -> Behind {
        for (at, id) in self.deadlines {
            self.core.table.arm(id, at);
        }
        Behind {
            interrupted: self.interrupted_ids,
            idle: self.behind,
            waiting: self.waiting,
            now: self.now,
        }
    }
}

/// Loaded schedules whose deadline passed while the engine was down.
pub(super) struct Behind {
    pub(super) interrupted: Vec<u64>,
    pub(super) idle: Vec<u64>,
    pub(super) waiting: Vec<(u64, (u64, Option<RunId>), bool)>,
    pub(super) now: u64,
}

impl RowSink for Loader<'_> {
    fn expect(&mut self, rows: usize) {
        self.core.table.reserve(rows);
        self.deadlines.reserve(rows);
    }

    fn apply(&mut self, row: ScheduleRow) -> Result<(), Error> {
        let core = &mut *self.core;
        if core.table.get(row.id).is_some() {
            // Claimed back after it was taken over: the row is the truth now.
            core.drop_entry(row.id);
        }
        let mut entry = Entry::from_row(row, &mut core.names.verbs, &mut core.names.calendars);
        self.max_id = self.max_id.max(entry.id);
        // A start a clean shutdown parked (`started_unix` 0) never started: it keeps its place
        // and starts again (docs/schedules.md §11.42). Every other run in the list may have
        // started. Under its run id it is handed back to the host (docs/schedules.md §11.5); a
        // row written before run ids were written ahead of the start has none, so such a run
        // leaves the list now and is settled as interrupted once the store is attached. On a
        // row claimed from another node each is settled as taken over (docs/schedules.md
        // §11.39).
        let claiming = self.taken_over.is_some();
        // docs/schedules.md §11.57: handed to this host instead, under ids of its own.
        let hand_back = claiming && core.settings.hand_back_taken_over;
        let mut took = 0;
        for r in entry.running() {
            if let Some(run) = r.run.filter(|_| !claiming) {
                // Fresh ids start above every restored one (docs/schedules.md §7.9).
                core.runs.last = core.runs.last.max(run.0);
            }
            let parked = r.is_parked();
            if parked || (!claiming && r.run.is_none()) {
                // A claimed row's parked start takes a fresh id here: its id was another host's.
                let run = r.run.filter(|_| !claiming);
                self.waiting.push((entry.id, (r.nominal, run), parked));
            } else if claiming {
                took += 1;
            }
        }
        let rewrite = hand_back && took > 0;
        if rewrite {
            // The ids were another host's: each run takes a fresh one of this engine's.
            for r in &mut entry.extra_mut().running {
                if !r.is_parked() {
                    r.run = Some(core.runs.next_id());
                }
            }
        } else if claiming {
            // Another host's runs are never registered here: their ids are that host's.
            entry.extra_mut().running.retain(Running::is_parked);
        } else if entry.running().iter().any(|r| r.run.is_none()) {
            entry
                .extra_mut()
                .running
                .retain(|r| r.run.is_some() || r.is_parked());
        }
        if let (Some(taken), true) = (self.taken_over.as_mut(), took > 0 && !hand_back) {
            taken.push((entry.id, took));
            self.interrupted_ids.push(entry.id);
        } else if (!claiming || rewrite) && entry.running().iter().any(|r| !r.is_parked()) {
            for r in entry.running().iter().filter(|r| !r.is_parked()) {
                let Some(run) = r.run else { continue };
                core.runs.awaited.insert(
                    run,
                    RunRecord {
                        schedule: entry.id,
                        started: None,
                    },
                );
                core.runs.interrupted.push(InFlight {
                    schedule: ScheduleId::from_raw(entry.id),
                    run,
                    nominal_unix_nanos: r.nominal,
                });
            }
            self.interrupted_ids.push(entry.id);
        }
        core.keys.index(&entry);
        if entry.is_paused() {
            // A paused schedule waits unarmed, its deadline kept for resume (docs/schedules.md §9.4).
            entry.armed = false;
        }
        if entry.has_operator_firings() {
            // A trigger or backfill written before the restart fires from the first tick
            // (docs/schedules.md §9.6, §9.7).
            core.operator.due.push(entry.id);
        }
        if entry.armed {
            self.deadlines.push((entry.fire_at, entry.id));
            if !entry.is_running() && entry.fire_at.max(entry.next_run) <= self.now {
                self.behind.push(entry.id);
            }
        }
        let id = entry.id;
        core.table.place(entry);
        if rewrite {
            // The row still names the other host's run ids: it is rewritten with this
            // engine's, so a crash here hands back what this host was told.
            core.mark_dirty(id);
        }
        Ok(())
    }
}
