//! The narrow API a [`Txn`](crate::Txn) uses, and all it may use: the clock and the world, a
//! [`Draft`] for each creation, a [`Summary`] of what it looks up, `schedule_info` records, live
//! ids, and one commit. A transaction never sees an entry or the engine's fields, so the engine's
//! layout can change without touching it.
//!
//! Each call borrows the engine for its own short step and returns with no borrow held, so the
//! transaction can ask the host's [`World`] between calls (permission checks are host code).

use std::rc::Rc;

use super::core::{Core, Shared};
use super::entry::{Entry, Extra, Kind, Limits};
use crate::info::ScheduleInfo;
use crate::options::{Options, Resolved};
use crate::row::{ChangeSet, Durability};
use crate::store::ID_BLOCK;
use crate::store::answer::Pending;
use crate::{Error, ObjId, Value, World};

/// What a transaction may know of a schedule: enough to check permissions and filter listings.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Summary {
    pub(crate) id: u64,
    pub(crate) owner: ObjId,
    pub(crate) target: ObjId,
    /// Not retired.
    pub(crate) live: bool,
}

/// A schedule created inside a transaction and not committed yet: it has its id, and the engine
/// knows nothing else of it until [`Shared::commit`].
#[derive(Debug)]
pub(crate) struct Draft(pub(super) Entry);

impl Draft {
    pub(crate) fn id(&self) -> u64 {
        self.0.id
    }

    pub(crate) fn summary(&self) -> Summary {
        summary(&self.0)
    }
}

fn summary(e: &Entry) -> Summary {
    Summary {
        id: e.id,
        owner: e.owner,
        target: e.target,
        live: e.is_live(),
    }
}

/// What a keyed creation came to (docs/schedules.md §5.13).
pub(super) enum Keyed {
    /// Nothing held the key: a new schedule, committed with the transaction.
    New(Draft),
    /// The key names this schedule, of the same definition: nothing is created.
    Existing(u64),
}

/// Everything a creation has checked, ready to become a [`Draft`].
pub(crate) struct NewSchedule<'a> {
    pub(crate) kind: Kind,
    pub(crate) target: ObjId,
    pub(crate) verb: &'a str,
    /// The first cadence point (Unix nanoseconds).
    pub(crate) first: u64,
    pub(crate) interval_ns: u64,
    pub(crate) interval_clamped: bool,
    /// A `Cron` schedule's calendar, checked whole (docs/schedules.md §14.12).
    pub(crate) calendar: Option<std::sync::Arc<crate::Calendar>>,
    pub(crate) args: Vec<Value>,
    pub(crate) options: Options,
    pub(crate) resolved: Resolved,
    /// The creating task's permissions: owner and authority.
    pub(crate) owner: ObjId,
    pub(crate) player: ObjId,
    pub(crate) now: u64,
}

impl Shared {
    /// The clock's wall time, Unix nanoseconds.
    pub(crate) fn now_unix_nanos(&self) -> u64 {
        self.clock.unix_nanos()
    }

    /// The host's object model.
    pub(crate) fn world(&self) -> &dyn World {
        &*self.world
    }

    /// The engine's tick, nanoseconds (the floor for intervals).
    pub(crate) fn tick_ns(&self) -> u64 {
        self.core.borrow().tick_ns
    }

    /// Hands out an id, builds the draft and adds it to the transaction's drafts `own`; returns
    /// its id. Fails only when the store cannot raise the id high-water mark.
    ///
    /// A keyed creation (docs/schedules.md §5.13) may instead come to the schedule its key
    /// already names, among the transaction's drafts and what it has not stopped (`stops`):
    /// then that schedule's id, with nothing added.
    pub(crate) fn draft(
        &self,
        new: NewSchedule<'_>,
        own: &mut Vec<Draft>,
        stops: &[u64],
    ) -> Result<u64, Error> {
        if new.options.key_name().is_some() {
            return match self.draft_keyed(new, own, stops)? {
                Keyed::New(draft) => {
                    let id = draft.id();
                    own.push(draft);
                    Ok(id)
                }
                Keyed::Existing(id) => Ok(id),
            };
        }
        let mut core = self.core.borrow_mut();
        let id = core.allocate_id()?;
        own.push(Draft(core.new_entry(id, new)));
        Ok(id)
    }

    /// The committed schedule `id` as lookups see it at `now` (a retired one until its retention
    /// runs out).
    pub(crate) fn lookup(&self, id: u64, now: u64) -> Option<Summary> {
        let mut core = self.core.borrow_mut();
        if let Some(e) = core.visible(id, now) {
            return Some(summary(e));
        }
        core.held_elsewhere(id).map(|e| summary(&e))
    }

    /// The `schedule_info` record of committed schedule `id`.
    pub(crate) fn info(&self, id: u64, now: u64) -> Option<ScheduleInfo> {
        let mut core = self.core.borrow_mut();
        let (mut info, settled) = if let Some(e) = core.visible(id, now) {
            (core.info(e, now), e.settled())
        } else {
            let e = core.held_elsewhere(id)?;
            (core.info(&e, now), e.settled())
        };
        if info.persist {
            info.history = core.history(id, settled);
        }
        Some(info)
    }

    /// The next `count` cadence points of committed schedule `id` (docs/schedules.md §9.8).
    pub(crate) fn upcoming(&self, id: u64, now: u64, count: usize) -> Option<Vec<u64>> {
        let mut core = self.core.borrow_mut();
        if let Some(e) = core.visible(id, now) {
            return Some(super::deadlines::upcoming(e.cadence_view(), now, count));
        }
        core.held_elsewhere(id)
            .map(|e| super::deadlines::upcoming(e.cadence_view(), now, count))
    }

    /// The `schedule_info` record of a draft.
    pub(crate) fn draft_info(&self, draft: &Draft) -> ScheduleInfo {
        let now = self.clock.unix_nanos();
        self.core.borrow().info(&draft.0, now)
    }

    /// Appends the ids of live committed schedules that `keep` accepts.
    pub(crate) fn live_ids(&self, keep: impl Fn(&Summary) -> bool, out: &mut Vec<u64>) {
        let core = self.core.borrow();
        out.extend(
            core.table
                .iter()
                .filter(|e| e.is_live())
                .map(summary)
                .filter(|s| keep(s))
                .map(|s| s.id),
        );
    }

    /// Applies a transaction: the durable part first (one synced store commit), then memory; on a
    /// store error nothing changes.
    pub(crate) fn commit(
        &self,
        drafts: Vec<Draft>,
        stops: &[u64],
        discards: &[u64],
        now: u64,
    ) -> Result<(), Error> {
        let mut core = self.core.borrow_mut();
        core.check_keys(&drafts, stops)?;
        if let Some(mut changes) = core.durable_changes(&drafts, stops, discards)
            && let Some(store) = core.store.as_mut()
            && let Err(error) = store.commit(&mut changes, Durability::Synced)
        {
            return Err(core.key_conflict(error, &drafts));
        }
        core.apply_committed(drafts, stops, discards, now);
        Ok(())
    }

    /// The durable half of an awaited commit (docs/schedules.md §11.41): hands the store the
    /// transaction's rows and returns the answer to await; `None` when nothing needs writing.
    /// Nothing changes in memory until [`Shared::finish_commit`].
    ///
    /// # Errors
    ///
    /// A key the transaction would take that is already taken (docs/schedules.md §5.15), with
    /// nothing handed to the store.
    pub(crate) fn start_commit(
        &self,
        drafts: &[Draft],
        stops: &[u64],
        discards: &[u64],
    ) -> Result<Option<Pending<Result<usize, Error>>>, Error> {
        let mut core = self.core.borrow_mut();
        core.check_keys(drafts, stops)?;
        let Some(mut changes) = core.durable_changes(drafts, stops, discards) else {
            return Ok(None);
        };
        let Some(store) = core.store.as_mut() else {
            return Ok(None);
        };
        Ok(Some(store.start_synced_commit(&mut changes)))
    }

    /// A store's refusal of an awaited commit, named as the key it lost when another task or
    /// node took that key meanwhile (docs/schedules.md §5.15).
    pub(crate) fn refusal(&self, error: Error, drafts: &[Draft]) -> Error {
        self.core.borrow_mut().key_conflict(error, drafts)
    }

    /// The in-memory half of an awaited commit, once its write is durable.
    pub(crate) fn finish_commit(&self, drafts: Vec<Draft>, stops: &[u64], discards: &[u64]) {
        let now = self.clock.unix_nanos();
        self.core
            .borrow_mut()
            .apply_committed(drafts, stops, discards, now);
    }
}

impl Core {
    /// The entry `new` describes, with id `id`. Inlined into the unkeyed creation, which then
    /// builds the entry in place in the transaction's drafts: left to the compiler, it was a call
    /// and a copy of the entry, 2% more instructions per creation than before keys (measured with
    /// callgrind over 20,000 `create_inmem` creations; always inlined, 0.5% fewer).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(super) fn new_entry(&mut self, id: u64, new: NewSchedule<'_>) -> Entry {
        let verb = self.verbs.intern(new.verb);
        let NewSchedule {
            args,
            options,
            calendar,
            ..
        } = new;
        let limits = Limits {
            time_limit_ns: new.resolved.time_limit_ns,
            tick_limit: new.resolved.tick_limit,
        };
        let key: Option<Rc<str>> = options.key.as_deref().map(Rc::from);
        let policies = new.resolved.policies;
        let has_extra = !args.is_empty()
            || options.state.is_some()
            || !limits.is_none()
            || key.is_some()
            || !policies.is_default();
        let extra = has_extra.then(|| {
            Box::new(Extra {
                args: (!args.is_empty()).then(|| Rc::from(args)),
                state: options.state.map(Rc::new),
                limits,
                key,
                policies,
                ..Extra::default()
            })
        });
        Entry {
            id,
            fire_at: new.first,
            next_run: new.first,
            interval_ns: new.interval_ns,
            jitter_ns: new.resolved.jitter_ns,
            created_at: new.now,
            last_run: 0,
            run_count: 0,
            fault_count: 0,
            missed_count: 0,
            overlap_count: 0,
            last_duration_ns: 0,
            target: new.target,
            owner: new.owner,
            player: new.player,
            verb,
            max_faults: options.max_faults,
            consecutive_faults: 0,
            backlog: 0,
            kind: new.kind,
            catchup: options.catchup,
            overlap: options.overlap,
            adaptive: new.resolved.adaptive,
            pass_elapsed: options.pass_elapsed,
            persist: options.persist,
            interval_clamped: new.interval_clamped,
            // Not in the heap until commit; armed so schedule_info shows the first deadline.
            armed: true,
            dirty: false,
            extra,
            calendar: calendar.map(|c| self.calendars.intern(c)),
        }
    }
}

impl Core {
    /// The stored history of `id`, which has settled `settled` firings, newest first
    /// (docs/schedules.md §9.11); empty without a store, or before any firing settled. A read
    /// error is logged and reads as empty: `schedule_info` still answers.
    fn history(&mut self, id: u64, settled: u64) -> Vec<crate::FiringRecord> {
        let Some(store) = self.store.as_mut().filter(|_| settled > 0) else {
            return Vec::new();
        };
        let mut rows = store.history(id, settled).unwrap_or_else(|error| {
            tracing::warn!(%error, schedule = id, "could not read a schedule's history");
            Vec::new()
        });
        // Firings settled since the last group commit are not in the store yet: each takes
        // its slot, as it will there.
        let pending = self.history.iter().filter(|h| h.schedule == id).cloned();
        crate::store::history_in_flight::overlay(&mut rows, pending.collect());
        rows.sort_by(|a, b| b.started.cmp(&a.started).then(b.slot.cmp(&a.slot)));
        rows.into_iter()
            .map(crate::row::HistoryRow::into_record)
            .collect()
    }

    /// The schedule `id` as another engine sharing the store holds it (never one this engine
    /// has: a retired entry past its retention stays gone), read from the store's row; `None`
    /// without such a store or row. A read error is logged and reads as `None`.
    fn held_elsewhere(&mut self, id: u64) -> Option<Entry> {
        if self.table.get(id).is_some() {
            return None;
        }
        let store = self.store.as_mut()?;
        match store.row_elsewhere(id) {
            Ok(row) => row.map(|row| Entry::from_row(row, &mut self.verbs, &mut self.calendars)),
            Err(error) => {
                tracing::warn!(%error, schedule = id, "could not read a schedule held elsewhere");
                None
            }
        }
    }

    /// Hands out the next id. Past the reserved block, first asks the store for a new one
    /// (durable before it is used), so no id handed out — committed or not — can be handed out
    /// again after a restart, nor by another engine sharing the store (docs/schedules.md §11.4,
    /// §11.18). The block may start above the next id when other engines took the ids between.
    pub(super) fn allocate_id(&mut self) -> Result<u64, Error> {
        let mut id = self.last_id + 1;
        if let Some(store) = self.store.as_mut()
            && id > self.reserved_through
        {
            let block = store.reserve_ids(id, ID_BLOCK)?;
            id = *block.start();
            self.reserved_through = *block.end();
        }
        self.last_id = id;
        Ok(id)
    }

    /// At a clean stop, gives the unused end of the reserved block back to the store, so the
    /// next open continues from the last id handed out rather than above the block
    /// (docs/schedules.md §11.47). A crash skips this: the next open starts above the block.
    pub(super) fn release_ids(&mut self) {
        let (last_used, reserved_through) = (self.last_id, self.reserved_through);
        let Some(store) = self.store.as_mut() else {
            return;
        };
        if reserved_through <= last_used {
            return;
        }
        match store.release_ids(last_used, reserved_through) {
            Ok(lowered) => {
                self.reserved_through = if lowered { last_used } else { reserved_through }
            }
            Err(error) => tracing::debug!(%error, "could not give back unused schedule ids"),
        }
    }

    /// The keys a transaction's creations would take, checked before anything is written
    /// (docs/schedules.md §5.15); nothing to do for a transaction without keys.
    fn check_keys(&mut self, drafts: &[Draft], stops: &[u64]) -> Result<(), Error> {
        if drafts.iter().any(|d| d.0.key().is_some()) {
            self.prepare_keys(drafts, stops)?;
        }
        Ok(())
    }

    /// What a transaction writes to the store, synced: its persistent creations and its stops
    /// (a stop of a schedule this engine does not hold deletes the row whoever holds it);
    /// `None` without a store or with nothing to write.
    fn durable_changes(
        &self,
        drafts: &[Draft],
        stops: &[u64],
        discards: &[u64],
    ) -> Option<ChangeSet> {
        self.store.as_ref()?;
        let table = &self.table;
        let changes = ChangeSet {
            inserts: drafts
                .iter()
                .filter(|d| d.0.persist)
                .map(|d| d.0.to_row(&self.verbs))
                .collect(),
            updates: Vec::new(),
            deletes: stops
                .iter()
                .chain(discards)
                .copied()
                // Not in the table: held by another engine on a shared store (only such a
                // store lets a transaction find it), whose row the stop deletes.
                .filter(|&id| table.get(id).is_none_or(|e| e.persist))
                .collect(),
            history: Vec::new(),
        };
        (!changes.is_empty()).then_some(changes)
    }

    /// A committed transaction in memory: stops and discards drop their entries, creations are
    /// armed.
    fn apply_committed(&mut self, drafts: Vec<Draft>, stops: &[u64], discards: &[u64], now: u64) {
        for &id in stops {
            self.drop_entry(id);
        }
        for &id in discards {
            if self.table.get(id).is_some_and(|e| !e.is_live()) {
                self.drop_entry(id);
            }
        }
        for Draft(mut e) in drafts {
            let (point, jitter) = (e.next_run, e.jitter_ns);
            e.fire_at = self.jittered(point, jitter, now);
            e.armed = true;
            if e.key().is_some() {
                self.index_key(&e);
            }
            self.table.insert(e);
        }
    }
}
