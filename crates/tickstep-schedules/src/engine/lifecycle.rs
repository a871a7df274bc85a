//! An entry's arrival and departure, and the other steps that span `Core`'s parts: building the
//! state, loading and claims, transactions and keys, holding back at open, operator stops,
//! retention, and the starts that wait for a durable write. One of the three files of `Core`'s
//! methods (see [`core`](super::core)).

use std::rc::Rc;

use tickstep_kernel::clock::Instant;

use super::access::Draft;
use super::config::Config;
use super::core::Core;
use super::entry::{Entry, Running};
use super::interner::Names;
use super::keys::{Holder, Keys, taken_meanwhile};
use super::operator_queue::OperatorQueue;
use super::retention::Retention;
use super::runs::Runs;
use super::settings::Settings;
use super::starts::Starts;
use super::storage::{Behind, Loader};
use super::store_side::{Committed, StoreSide};
use super::table::Table;
use crate::held_back::{HOLD_BACK_MIN, HeldBack};
use crate::limits::duration_nanos;
use crate::store::Backend;
use crate::store_rows::ClaimedRow;
use crate::{Error, Fault, FaultKind, Firing, Namespace, ObjId, ScheduleId, Value, World};

impl Core {
    pub(super) fn new(config: Config, seed: u64, store: Option<Box<dyn Backend>>) -> Self {
        Core {
            table: Table::default(),
            names: Names::default(),
            settings: Settings::new(&config, seed),
            keys: Keys::default(),
            runs: Runs::default(),
            retention: Retention::new(duration_nanos(config.retention)),
            store: StoreSide {
                backend: store,
                ..StoreSide::default()
            },
            operator: OperatorQueue::default(),
            starts: Starts::default(),
            metrics: crate::metrics::SchedulesMetrics::register(),
        }
    }

    /// Marks an entry's cadence state for the next group commit (persistent entries only).
    #[inline]
    pub(super) fn mark_dirty(&mut self, id: u64) {
        self.store.mark_dirty(&mut self.table, id);
    }

    /// Step 4 of a tick: the group commit ([`StoreSide::group_commit`]). The starts waiting for
    /// an update learn which of the store's writes carries it (docs/schedules.md §11.42).
    #[inline]
    pub(crate) fn group_commit(&mut self) -> Result<Committed, Error> {
        let (committed, seq) = self.store.group_commit(&mut self.table)?;
        if committed != Committed::Nothing {
            self.starts.carried(seq);
        }
        Ok(committed)
    }

    /// Drops retired entries whose retention has run out (docs/schedules.md §8.1).
    pub(super) fn sweep_retired(&mut self, now: u64) {
        while let Some(id) = self.retention.pop_expired(now) {
            if self.table.get(id).is_some_and(|e| !e.is_live()) {
                self.drop_entry(id);
            }
        }
    }

    /// Removes an entry outright (stop, discard, expiry), forgetting its runs.
    pub(super) fn drop_entry(&mut self, id: u64) -> Option<Entry> {
        let e = self.table.remove(id)?;
        self.keys.unindex_entry(&e);
        // Its settled firings not yet handed to the store are not written: its row is gone or
        // going, and the store's write does not look (docs/schedules.md §9.11). The list holds
        // one tick's records at most.
        self.store.history.retain(|h| h.schedule != id);
        self.runs.forget(&e);
        if !e.is_live() {
            self.retention.forget(id);
        }
        Some(e)
    }

    /// The entry for `id` as lookups should see it: absent once retention has run out.
    #[inline]
    pub(super) fn visible(&self, id: u64, now: u64) -> Option<&Entry> {
        self.table.get(id).filter(|e| self.retention.shows(e, now))
    }

    /// Holding back, at open, schedules whose targets the world does not have, when they are
    /// too many to be this application's own (docs/schedules.md §15.6). A schedule whose object
    /// is gone retires as `invalid_target` when it comes due (docs/schedules.md §8.1); but an
    /// engine that finds most of what it loads pointing at objects it does not know has most
    /// likely opened a store, or a namespace, that another application filled, and retiring
    /// them would clean up a database that is not its own. Their entries leave the table before
    /// catch-up can touch them; their rows are left as they are.
    ///
    /// After the load, before catch-up: holds back every loaded schedule whose target `world`
    /// does not know, when they are at least [`HOLD_BACK_MIN`] and more than half of what was
    /// loaded; the report, or `None` when nothing was held.
    pub(super) fn hold_back_unknown_targets(
        &mut self,
        world: &dyn World,
        namespace: Namespace,
    ) -> Option<HeldBack> {
        let loaded = self.table.len();
        let unknown: Vec<u64> = self
            .table
            .iter()
            .filter(|e| !world.valid(e.target))
            .map(|e| e.id)
            .collect();
        if unknown.len() < HOLD_BACK_MIN || unknown.len() * 2 <= loaded {
            return None;
        }
        for &id in &unknown {
            // No row is written for it: the entry simply leaves the engine.
            self.drop_entry(id);
        }
        // What else the load noted of them goes with their entries: a table lookup each, not a
        // search of the held list (which may hold a million).
        let table = &self.table;
        self.runs
            .interrupted
            .retain(|f| table.get(f.schedule.get()).is_some());
        self.operator.due.retain(|&id| table.get(id).is_some());
        let mut schedules: Vec<ScheduleId> =
            unknown.into_iter().map(ScheduleId::from_raw).collect();
        schedules.sort_unstable();
        let held = HeldBack {
            namespace,
            schedules,
            loaded,
        };
        tracing::warn!(%held, "schedule engine: schedules held back at open");
        Some(held)
    }

    /// Catch-up at open, for what was in flight and for what missed cadence points idle; first,
    /// the starts that were waiting for their row are started again or settled
    /// (docs/schedules.md §11.42).
    pub(super) fn catch_up_loaded(&mut self, behind: Behind) {
        for (id, nominal, parked) in behind.waiting {
            self.restore_waiting(id, nominal, parked, behind.now);
        }
        for id in behind.interrupted {
            self.catch_up_interrupted(id, behind.now);
        }
        for id in behind.idle {
            self.catch_up_at_open(id, behind.now);
        }
    }

    /// At load: a recurring schedule whose firing was in flight is armed for the cadence point
    /// after the one being served (saved as `next_run` when the firing started), with catch-up
    /// applied to the points that passed while the engine was down. Catch-up firings wait for the
    /// restored firing to settle, as they would have had it started normally. A catch-up the
    /// schedule was in when the engine stopped starts afresh from its next point: the downtime
    /// is a new one, whose points it takes in (docs/schedules.md §11.8).
    pub(super) fn catch_up_interrupted(&mut self, id: u64, now: u64) {
        let Some(e) = self.table.get(id) else {
            return;
        };
        if !e.kind.is_recurring() || !e.is_live() || e.is_paused() || e.next_run > now {
            return;
        }
        let Some(step) = e.step() else {
            return;
        };
        let arrived = step.arrived(e.next_run, e.next_run, now);
        self.catch_up(id, &step, arrived, e.next_run, now);
    }

    /// At load: a recurring schedule with nothing in flight that missed two or more cadence
    /// points while the engine was down gets its catch-up policy applied now, not at the first
    /// tick, so `schedule_info` right after open shows the true `next_run` and `missed_count`.
    /// The firings the policy keeps wait in the backlog and start at the first tick, exactly as
    /// the first tick would have started them. One passed point is an ordinary late firing (the
    /// catch-up threshold) and is left for the first tick — unless the schedule was catching up
    /// when the engine stopped: that catch-up starts afresh from its next point, with the points
    /// of the downtime (docs/schedules.md §11.8).
    pub(super) fn catch_up_at_open(&mut self, id: u64, now: u64) {
        let Some(e) = self.table.get(id) else {
            return;
        };
        let idle = e.kind.is_recurring()
            && e.is_live()
            && e.armed
            && !e.is_running()
            && e.queued().is_none();
        let due = e.next_run.max(e.fire_at);
        if !idle || due > now {
            return;
        }
        let Some(step) = e.step() else {
            return;
        };
        let arrived = step.arrived(e.next_run, due, now);
        if arrived.count >= 2 || e.backlog > 0 {
            self.catch_up(id, &step, arrived, due, now);
        }
    }

    /// Drops the entries of schedules an operator stopped in the store from outside (their rows
    /// are already gone), as a committed `schedule_stop` would. A run they had in flight goes on;
    /// its outcome is ignored.
    ///
    /// The store is asked at most once per engine tick interval
    /// ([`OperatorQueue::poll_stops_due`]).
    pub(super) fn apply_operator_stops(&mut self, mono: Instant, now: u64) -> Result<(), Error> {
        let Some(store) = self.store.backend.as_mut() else {
            return Ok(());
        };
        if !self.operator.poll_stops_due(mono, self.settings.tick_ns) {
            return Ok(());
        }
        let mut stopped = std::mem::take(&mut self.store.stopped_buf);
        let result = store.poll_stops(&mut stopped);
        for note in stopped.drain(..) {
            let id = note.id;
            if !self.table.get(id).is_some_and(|e| e.persist) {
                continue;
            }
            match note.action {
                None => {
                    tracing::info!(schedule = id, "schedule stopped by an operator");
                    self.drop_entry(id);
                    self.operator.stopped.push(id);
                }
                Some(action) => self.apply_operator_note(note.seq, id, action, now),
            }
        }
        stopped.clear();
        self.store.stopped_buf = stopped;
        result
    }

    /// Schedules moving between nodes on a shared store (docs/schedules.md §11.26), taken from
    /// the store once per tick without waiting on I/O: rows the store claimed for this engine
    /// come in and are applied like rows at open (catch-up); schedules another node took over
    /// go out, dropped as a stop would drop them. The firings a claimed row says are running
    /// are settled at once as taken over ([`Core::settle_taken_over`], docs/schedules.md §11.39).
    ///
    /// Drops the schedules another node took over, then applies the rows claimed since the
    /// last tick and settles the firings they brought with them. A run a dropped schedule had
    /// in flight goes on; its outcome is ignored.
    pub(super) fn apply_claims(&mut self, now: u64) -> Result<(), Error> {
        let Some(store) = self.store.backend.as_mut() else {
            return Ok(());
        };
        let mut claimed = std::mem::take(&mut self.store.claimed_buf);
        let mut lost = std::mem::take(&mut self.store.lost_buf);
        store.poll_claims(now, &mut claimed, &mut lost);
        for id in lost.drain(..) {
            self.drop_entry(id);
        }
        self.store.lost_buf = lost;
        if claimed.is_empty() {
            self.store.claimed_buf = claimed;
            return Ok(());
        }
        let from: Vec<(u64, Option<u64>)> =
            claimed.iter().map(|c| (c.row.id, c.from_node)).collect();
        let mut loader = Loader::for_claims(self, now);
        let mut result = Ok(());
        for ClaimedRow { row, .. } in claimed.drain(..) {
            if let Err(e) = crate::store_rows::RowSink::apply(&mut loader, row) {
                result = Err(e);
                break;
            }
        }
        let taken = loader.take_taken_over();
        let behind = loader.finish_claims();
        self.catch_up_loaded(behind);
        for (id, firings) in taken {
            let node = from.iter().find(|(row, _)| *row == id).and_then(|f| f.1);
            self.settle_taken_over(id, firings, node, now);
        }
        claimed.clear();
        self.store.claimed_buf = claimed;
        result
    }

    /// The live schedule of `owner` keyed `key`, skipping `skip` (a transaction's stops): the
    /// one this engine holds, else, on a shared store, the row another engine holds. A row of a
    /// schedule this engine holds but has retired is not a holder: its delete is on its way.
    pub(super) fn key_holder(
        &mut self,
        owner: ObjId,
        key: &str,
        skip: &[u64],
    ) -> Result<Option<Holder>, Error> {
        if let Some(id) = self.keys.holder(owner, key) {
            if !skip.contains(&id)
                && let Some(e) = self.table.get(id)
            {
                return Ok(Some(Holder {
                    row: e.to_row(&self.names.verbs),
                    persist: e.persist,
                }));
            }
            return Ok(None);
        }
        let Some(store) = self.store.backend.as_mut() else {
            return Ok(None);
        };
        let row = store.row_by_key(owner, key)?;
        Ok(row
            .filter(|r| !skip.contains(&r.id) && self.table.get(r.id).is_none())
            .map(|row| Holder { row, persist: true }))
    }

    /// Checks a transaction's keyed creations against what committed since they were made
    /// (another task took the key: docs/schedules.md §5.15), and gets this engine's retired rows
    /// out of the store before a new row may take their key. Nothing is applied on error.
    #[inline(never)]
    pub(super) fn prepare_keys(&mut self, drafts: &[Draft], stops: &[u64]) -> Result<(), Error> {
        let mut keyed = false;
        for d in drafts {
            let Some(key) = d.0.key() else { continue };
            keyed |= d.0.persist;
            if let Some(id) = self.keys.holder(d.0.owner, key)
                && !stops.contains(&id)
            {
                return Err(taken_meanwhile(key, d.0.owner, id));
            }
        }
        if keyed && !self.store.doomed_rows.is_empty() {
            // Retired rows go at the group commit; written first, the commit below never meets
            // a retired schedule's key in the store's unique index (docs/schedules.md §5.16).
            self.group_commit()?;
        }
        Ok(())
    }

    /// Explains a store's refusal of a commit holding keyed creations: when another engine
    /// committed a row under one of their keys first (docs/schedules.md §5.15), that is the error;
    /// otherwise the store's own.
    #[cold]
    pub(super) fn key_conflict(&mut self, error: Error, drafts: &[Draft]) -> Error {
        for d in drafts.iter().filter(|d| d.0.persist) {
            let Some(key) = d.0.key() else { continue };
            let key = Rc::clone(key);
            if let Ok(Some(holder)) = self.key_holder(d.0.owner, &key, &[])
                && holder.row.id != d.0.id
            {
                return taken_meanwhile(&key, d.0.owner, holder.row.id);
            }
        }
        error
    }

    /// The schedule `id` as another engine sharing the store holds it (never one this engine
    /// has: a retired entry past its retention stays gone), read from the store's row; `None`
    /// without such a store or row. A read error is logged and reads as `None`.
    pub(super) fn held_elsewhere(&mut self, id: u64) -> Option<Entry> {
        if self.table.get(id).is_some() {
            return None;
        }
        let store = self.store.backend.as_mut()?;
        match store.row_elsewhere(id) {
            Ok(row) => row
                .map(|row| Entry::from_row(row, &mut self.names.verbs, &mut self.names.calendars)),
            Err(error) => {
                tracing::warn!(%error, schedule = id, "could not read a schedule held elsewhere");
                None
            }
        }
    }

    /// The keys a transaction's creations would take, checked before anything is written
    /// (docs/schedules.md §5.15); nothing to do for a transaction without keys.
    #[inline]
    pub(super) fn check_keys(&mut self, drafts: &[Draft], stops: &[u64]) -> Result<(), Error> {
        if drafts.iter().any(|d| d.0.key().is_some()) {
            self.prepare_keys(drafts, stops)?;
        }
        Ok(())
    }

    /// A committed transaction in memory: stops and discards drop their entries, creations are
    /// armed.
    #[inline]
    pub(super) fn apply_committed(
        &mut self,
        drafts: Vec<Draft>,
        stops: &[u64],
        discards: &[u64],
        now: u64,
    ) {
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
            e.fire_at = self.settings.jittered(point, jitter, now);
            e.armed = true;
            if e.key().is_some() {
                self.keys.index(&e);
            }
            self.table.insert(e);
        }
    }

    /// Keeps `firing` until the update that records it is durable. Its schedule lists its run
    /// as running (waiting), which is what the update carries; planning it marked the schedule
    /// for the group commit already.
    pub(super) fn defer(&mut self, firing: Firing, now: u64) {
        let id = firing.schedule.get();
        if let Some(e) = self.table.get_mut(id) {
            e.extra_mut().running.push(Running {
                run: Some(firing.run),
                nominal: firing.nominal_unix_nanos,
                // Never 0 here: 0 marks a start a clean shutdown knows never happened.
                started_unix: now.max(1),
                waiting: true,
            });
            debug_assert!(
                e.dirty,
                "a planned firing's schedule is marked for the commit"
            );
        }
        self.starts.wait(firing, now);
    }

    /// The oldest waiting start whose update is durable by `durable`, skipping those whose
    /// place in the running list is gone (stopped, taken over).
    pub(super) fn next_durable(&mut self, durable: u64) -> Option<Firing> {
        while let Some(firing) = self.starts.pop_durable(durable) {
            if self.table.waiting_place(&firing).is_some() {
                return Some(firing);
            }
        }
        None
    }

    /// A clean shutdown: every waiting start is known never to have started. Marked so in the
    /// running list (`started_unix` 0), the next open starts it instead of settling it.
    pub(super) fn park_pending(&mut self) {
        for firing in self.starts.take_all() {
            let id = firing.schedule.get();
            if let Some(at) = self.table.waiting_place(&firing) {
                let e = self.table.get_mut(id).expect("placeholder found");
                e.extra_mut().running[at].started_unix = 0;
                self.mark_dirty(id);
            }
        }
    }

    /// At open: a firing that was waiting for its update when the engine stopped. Parked by a
    /// clean shutdown (never started), it waits again under the run id it was given (a new one
    /// for a row written before run ids were, or claimed from another node), until the update
    /// saying it is no longer parked is durable; otherwise it is a row from a
    /// build that wrote no run id before the start, whose firing may have started: it is
    /// settled as interrupted (docs/schedules.md §11.5: its point is not fired again).
    pub(super) fn restore_waiting(
        &mut self,
        id: u64,
        (nominal, run): (u64, Option<crate::RunId>),
        parked: bool,
        now: u64,
    ) {
        if parked {
            let run = run.unwrap_or_else(|| self.runs.next_id());
            let Some(firing) = self.firing(id, nominal, now, run) else {
                return;
            };
            let Some(e) = self.table.get_mut(id) else {
                return;
            };
            // Its place was kept at load. From here it is an ordinary waiting start: it takes
            // its run id and no longer says "never started", and it starts only once that is
            // written, so a crash after the start never starts it again.
            if let Some(place) = e
                .extra_mut()
                .running
                .iter_mut()
                .find(|r| r.is_parked() && r.nominal == nominal)
            {
                place.run = Some(run);
                place.started_unix = now.max(1);
            }
            self.mark_dirty(id);
            self.starts.wait(firing, now);
            return;
        }
        // Its place in the running list went at load (`Loader::apply`).
        self.fault(
            id,
            Fault {
                kind: FaultKind::Interrupted,
                value: Value::from("interrupted by restart"),
            },
            now,
        );
    }

    /// At open: the operator actions whose note a loaded row does not include yet, applied —
    /// an engine that wrote the row's cadence after the operator's write and before it read the
    /// note left the row without the action (docs/schedules.md §9.12).
    pub(super) fn apply_actions_at_open(&mut self, now: u64) -> Result<(), Error> {
        let Some(store) = self.store.backend.as_mut() else {
            return Ok(());
        };
        for note in store.operator_actions()? {
            if let Some(action) = note.action {
                self.apply_operator_note(note.seq, note.id, action, now);
            }
        }
        Ok(())
    }
}
