//! Operator actions on a live schedule: pause and resume, a firing now, a backfill of a past
//! range (docs/schedules.md §9.4–§9.10).
//!
//! Each action is checked whole before anything changes — the id names a live schedule this
//! engine holds, the caller is its owner or a wizard (the rule of `schedule_stop`, docs/schedules.md §6.3), the
//! arguments make sense — then applied to the entry and, for a persistent schedule on a store,
//! written synced before the call returns, as a stop is (docs/schedules.md §2.4). If that write fails the entry is
//! put back as it was, so an action either happened durably or not at all.
//!
//! The state an action leaves (who paused and why, a trigger not fired yet, the rest of a
//! backfill) is the entry's [`OpsRow`], stored with the cadence in the `ops` column; the
//! firings a trigger or a backfill asks for are planned by the tick from
//! [`Core::operator_due`], one per schedule per tick, before the deadline heap is visited.

use super::core::Core;
use super::handle::Schedules;
use crate::info::unix_seconds;
use crate::operator_rules::{OPERATOR, backfill_bounds, backfill_points, check_note};
use crate::perms::may_manage;
use crate::row::{ChangeSet, Durability, OperatorAction, OpsRow, PausedRow};
use crate::{Error, Firing, ObjId, Overlap, ScheduleId};

/// The operator actions, for error messages.
#[derive(Clone, Copy)]
enum Action {
    Pause,
    Resume,
    Trigger,
    Backfill,
}

impl Action {
    fn name(self) -> &'static str {
        match self {
            Action::Pause => "pause",
            Action::Resume => "resume",
            Action::Trigger => "trigger_now",
            Action::Backfill => "backfill",
        }
    }
}

impl Schedules {
    /// `pause(id, note)`: stops `id` firing until [`Schedules::resume`], keeping its cadence;
    /// `schedule_info` shows who paused it (`perms`), when and `note` (docs/schedules.md §9.4,
    /// §9.5). Durable when it returns. Returns `false`, changing nothing, when it was paused
    /// already.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArg`] for an id that names no live schedule here, or a note longer than
    /// [`MAX_NOTE_BYTES`](crate::MAX_NOTE_BYTES) or holding a control character; [`Error::Perm`] when `perms` is
    /// neither the owner nor a wizard; the store's error when the write fails (nothing changed).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_schedules::kernel::clock::ManualClock;
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// use tickstep_schedules::{Options, Schedules};
    ///
    /// let clock = ManualClock::new();
    /// let world = TestWorld::new();
    /// let wiz = world.add_wizard();
    /// world.add_verb(wiz, "beat");
    /// let runner = TestRunner::new();
    /// let engine = Schedules::in_memory(clock.clone(), world, runner.clone(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "beat", 1.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// assert!(engine.pause(wiz, id, "maintenance").unwrap());
    /// clock.advance(Duration::from_secs(5));
    /// assert_eq!(engine.tick().unwrap().started, 0);
    /// let info = engine.begin(wiz).schedule_info(id).unwrap();
    /// assert_eq!(info.pause.unwrap().note, "maintenance");
    /// ```
    pub fn pause(&self, perms: ObjId, id: ScheduleId, note: &str) -> Result<bool, Error> {
        check_note(note)?;
        self.act(perms, id, Action::Pause, |core, raw, now| {
            Ok(core.pause_entry(raw, perms, note, now))
        })
    }

    /// `resume(id)`: undoes [`Schedules::pause`]. The cadence points that passed while paused
    /// go to the schedule's catch-up policy, every one of them (not only from the second, as
    /// after downtime); those it drops count in `missed_count` and `paused_missed`
    /// (docs/schedules.md §9.4). Durable when it returns. Returns `false`, changing nothing,
    /// when it was not paused.
    ///
    /// # Errors
    ///
    /// As [`Schedules::pause`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_schedules::kernel::clock::ManualClock;
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// use tickstep_schedules::{Options, Schedules};
    ///
    /// let clock = ManualClock::new();
    /// let world = TestWorld::new();
    /// let wiz = world.add_wizard();
    /// world.add_verb(wiz, "beat");
    /// let engine = Schedules::in_memory(clock.clone(), world, TestRunner::new(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "beat", 10.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// engine.pause(wiz, id, "").unwrap();
    /// clock.advance(Duration::from_secs(35)); // points at 10, 20 and 30 pass
    /// assert!(engine.resume(wiz, id).unwrap());
    /// let info = engine.begin(wiz).schedule_info(id).unwrap();
    /// assert_eq!((info.missed_count, info.paused_missed), (3, 3)); // catchup "skip"
    /// assert!(!engine.resume(wiz, id).unwrap());
    /// ```
    pub fn resume(&self, perms: ObjId, id: ScheduleId) -> Result<bool, Error> {
        self.act(perms, id, Action::Resume, |core, raw, now| {
            Ok(core.resume_entry(raw, now))
        })
    }

    /// `trigger_now(id)`: one firing at the next tick, serving now, under the schedule's
    /// overlap policy; the cadence is left alone (docs/schedules.md §9.6). A paused schedule
    /// fires too. Durable when it returns: a restart before the tick still fires it, once.
    /// Returns `false`, changing nothing, when a trigger was already waiting.
    ///
    /// # Errors
    ///
    /// As [`Schedules::pause`], without the note.
    ///
    /// ```
    /// use tickstep_schedules::kernel::clock::ManualClock;
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// use tickstep_schedules::{Options, Schedules};
    ///
    /// let world = TestWorld::new();
    /// let wiz = world.add_wizard();
    /// world.add_verb(wiz, "beat");
    /// let runner = TestRunner::new();
    /// let engine = Schedules::in_memory(ManualClock::new(), world, runner.clone(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "beat", 3600.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// assert!(engine.trigger_now(wiz, id).unwrap());
    /// assert_eq!(engine.tick().unwrap().started, 1);
    /// ```
    pub fn trigger_now(&self, perms: ObjId, id: ScheduleId) -> Result<bool, Error> {
        self.act(perms, id, Action::Trigger, |core, raw, _| {
            Ok(core.trigger_entry(raw))
        })
    }

    /// `backfill(id, from, to)`: fires the cadence points of a recurring schedule that fall in
    /// `[from, to]` (float Unix seconds, `to` not after now), oldest first, one per tick, each
    /// waiting for the previous firing unless `overlap = "concurrent"`, each exactly once, also
    /// across a restart (docs/schedules.md §9.7). At most [`MAX_CATCHUP_FIRINGS`](crate::MAX_CATCHUP_FIRINGS) points, the
    /// bound of catch-up. Returns how many points it will fire. Durable when it returns.
    ///
    /// # Errors
    ///
    /// As [`Schedules::pause`], and [`Error::InvalidArg`] for a one-shot, a bound that is not a
    /// finite time, `from > to`, `to` later than now, a range holding no cadence point or more
    /// than [`MAX_CATCHUP_FIRINGS`](crate::MAX_CATCHUP_FIRINGS), or a backfill of the schedule still under way. Nothing
    /// changes on error.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_schedules::kernel::clock::ManualClock;
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// use tickstep_schedules::{Options, Schedules};
    ///
    /// let clock = ManualClock::new();
    /// let world = TestWorld::new();
    /// let wiz = world.add_wizard();
    /// world.add_verb(wiz, "beat");
    /// let engine = Schedules::in_memory(clock.clone(), world, TestRunner::new(), Default::default());
    /// let t0 = engine.now_unix_seconds();
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "beat", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// clock.advance(Duration::from_secs(600));
    /// // The cadence points are t0 + 60 k: three of them lie in [t0 + 100, t0 + 280].
    /// assert_eq!(engine.backfill(wiz, id, t0 + 100.0, t0 + 280.0).unwrap(), 3);
    /// assert_eq!(engine.backfill(wiz, id, t0 + 700.0, t0 + 800.0).unwrap_err().code(), "E_INVARG");
    /// ```
    pub fn backfill(&self, perms: ObjId, id: ScheduleId, from: f64, to: f64) -> Result<u64, Error> {
        let now = self.shared.clock.unix_nanos();
        let (from_ns, to_ns) = backfill_bounds(from, to, now)?;
        self.act(perms, id, Action::Backfill, |core, raw, _| {
            core.backfill_entry(raw, (from_ns, to_ns), (from, to))
        })
    }

    /// The checks every action shares, then `apply` on the entry, then the synced write; on a
    /// failed write the entry is restored. `apply` validates before it changes anything.
    fn act<T>(
        &self,
        perms: ObjId,
        id: ScheduleId,
        action: Action,
        apply: impl FnOnce(&mut Core, u64, u64) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let shared = &*self.shared;
        let raw = id.get();
        let now = shared.clock.unix_nanos();
        let unknown = || {
            Error::invalid(
                id,
                format!(
                    "{} needs a live schedule: no such schedule (docs/schedules.md §9.9)",
                    action.name()
                ),
            )
        };
        let summary = shared.lookup(raw, now).ok_or_else(unknown)?;
        // Host code: asked with no engine borrow held (docs/schedules.md §6.4).
        if !may_manage(shared.world(), perms, summary.owner) {
            return Err(Error::perm(
                perms,
                id,
                format!(
                    "{} is for the schedule's owner or a wizard, as schedule_stop (docs/schedules.md §6.3, §9.9)",
                    action.name()
                ),
            ));
        }
        if !summary.live {
            return Err(Error::invalid(
                id,
                format!(
                    "{} needs a live schedule: this one retired (docs/schedules.md §9.9)",
                    action.name()
                ),
            ));
        }
        let mut core = shared.core.borrow_mut();
        let Some(before) = core.table.get(raw).cloned() else {
            return Err(Error::invalid(
                id,
                format!(
                    "{} acts on the node that holds the schedule; this one does not (docs/schedules.md §9.9)",
                    action.name()
                ),
            ));
        };
        let answer = apply(&mut core, raw, now)?;
        let after = core.table.get(raw).expect("apply keeps the entry");
        if after.persist && core.store.is_some() {
            let mut changes = ChangeSet {
                updates: vec![(raw, after.cadence())],
                ..ChangeSet::default()
            };
            let store = core.store.as_mut().expect("checked above");
            if let Err(error) = store.commit(&mut changes, Durability::Synced) {
                core.restore(before);
                return Err(error);
            }
        }
        if core
            .table
            .get(raw)
            .is_some_and(super::entry::Entry::has_operator_firings)
        {
            core.want_operator_pass(raw, now);
        }
        Ok(answer)
    }
}

impl Core {
    /// Applies an action an operator took from outside the engine, found in the store's notes
    /// (docs/schedules.md §9.12): as the engine's own call would, with the operator's authority
    /// (the store's: `#-1` pauses). The store already holds the action's state for a restart;
    /// the schedule is marked so the store gets the engine's view of it too. An action that
    /// does not apply (a backfill of a one-shot, say) is logged and dropped.
    ///
    /// A note is applied once: the schedule's operator state records the newest note it
    /// includes (`note`), which the store's own write of the action already carries.
    pub(super) fn apply_operator_note(
        &mut self,
        seq: u64,
        id: u64,
        action: OperatorAction,
        now: u64,
    ) {
        let Some(e) = self.table.get_mut(id).filter(|e| e.is_live() && e.persist) else {
            return;
        };
        if e.ops().is_some_and(|o| o.note >= seq) {
            return;
        }
        e.extra_mut().ops.note = seq;
        let applied = match action {
            OperatorAction::Pause { note } => {
                self.pause_entry(id, OPERATOR, &note, now);
                Ok(())
            }
            OperatorAction::Resume => {
                self.resume_entry(id, now);
                Ok(())
            }
            OperatorAction::Trigger => {
                self.trigger_entry(id);
                Ok(())
            }
            OperatorAction::Backfill { from, to } => self
                .backfill_entry(id, (from, to), (unix_seconds(from), unix_seconds(to)))
                .map(drop),
        };
        match applied {
            Ok(()) => {
                tracing::info!(schedule = id, "operator action applied from the store");
                self.mark_dirty(id);
                if self
                    .table
                    .get(id)
                    .is_some_and(super::entry::Entry::has_operator_firings)
                {
                    self.want_operator_pass(id, now);
                }
            }
            Err(error) => {
                tracing::warn!(%error, schedule = id, "an operator's action from the store does not apply");
            }
        }
    }

    /// At open: the operator actions whose note a loaded row does not include yet, applied —
    /// an engine that wrote the row's cadence after the operator's write and before it read the
    /// note left the row without the action (docs/schedules.md §9.12).
    pub(super) fn apply_actions_at_open(&mut self, now: u64) -> Result<(), Error> {
        let Some(store) = self.store.as_mut() else {
            return Ok(());
        };
        for note in store.operator_actions()? {
            if let Some(action) = note.action {
                self.apply_operator_note(note.seq, note.id, action, now);
            }
        }
        Ok(())
    }

    /// Pauses `id` (docs/schedules.md §9.4); whether it was not paused already.
    /// Pauses `id` at `max_faults` under `on_max_faults = "pause"` (docs/schedules.md §16.6): by
    /// no one (`#-1`), as the engine's own act, written with the next group commit as any
    /// change an outcome makes.
    pub(super) fn pause_for_faults(&mut self, id: u64, note: &str, now: u64) {
        if self.pause_entry(id, ObjId(-1), note, now) {
            self.mark_dirty(id);
        }
    }

    fn pause_entry(&mut self, id: u64, by: ObjId, note: &str, now: u64) -> bool {
        let Some(e) = self.table.get_mut(id) else {
            return false;
        };
        if e.is_paused() {
            return false;
        }
        let armed = e.armed;
        e.armed = false;
        e.extra_mut().ops.paused = Some(PausedRow {
            by,
            at: now,
            note: note.to_owned(),
            armed,
        });
        true
    }

    /// Asks for one firing of `id` at the next tick (docs/schedules.md §9.6); whether none
    /// was waiting already.
    fn trigger_entry(&mut self, id: u64) -> bool {
        let Some(e) = self.table.get_mut(id) else {
            return false;
        };
        if e.ops().is_some_and(|o| o.trigger) {
            return false;
        }
        e.extra_mut().ops.trigger = true;
        true
    }

    /// Starts a backfill of `id` over `[from, to]` (Unix ns; `typed` as the caller gave them,
    /// for errors): how many points (docs/schedules.md §9.7).
    fn backfill_entry(
        &mut self,
        id: u64,
        (from, to): (u64, u64),
        typed: (f64, f64),
    ) -> Result<u64, Error> {
        let name = ScheduleId::from_raw(id);
        let Some(e) = self.table.get_mut(id) else {
            return Err(Error::invalid(
                name,
                "no such schedule (docs/schedules.md §9.9)",
            ));
        };
        let under_way = e.ops().is_some_and(|o| o.backfill.is_some());
        let (first, last, count) = backfill_points(
            (e.step().as_ref(), e.next_run, under_way),
            (from, to),
            typed,
            name,
        )?;
        e.extra_mut().ops.backfill = Some((first, last));
        Ok(count)
    }

    /// Puts back an entry an action changed, when writing the change failed.
    fn restore(&mut self, before: super::entry::Entry) {
        let (id, armed, at) = (before.id, before.armed, before.fire_at);
        if let Some(e) = self.table.get_mut(id) {
            *e = before;
            e.armed = false;
            if armed {
                self.table.arm(id, at);
            }
        }
    }

    /// Resumes `id` if paused (docs/schedules.md §9.4); whether it was.
    fn resume_entry(&mut self, id: u64, now: u64) -> bool {
        let Some(e) = self.table.get_mut(id) else {
            return false;
        };
        let Some(paused) = e.extra_mut().ops.paused.take() else {
            return false;
        };
        // A catch-up the pause interrupted starts afresh, with the points of the pause
        // (docs/schedules.md §4.5).
        let idle_recurring = e.kind.is_recurring() && !e.is_running() && e.queued().is_none();
        let step = e.step().filter(|_| idle_recurring && e.next_run <= now);
        if let Some(step) = step {
            let arrived = step.arrived(e.next_run, e.next_run, now);
            // What the catch-up drops is counted missed as `paused` (`Core::count_missed`).
            self.catching_up_paused = true;
            let due = e.next_run;
            self.catch_up(id, &step, arrived, due, now);
            self.catching_up_paused = false;
        } else if paused.armed {
            let at = e.fire_at;
            self.table.arm(id, at);
        }
        true
    }

    /// Asks the next tick to plan `id`'s operator firings.
    fn want_operator_pass(&mut self, id: u64, now: u64) {
        if !self.operator_due.contains(&id) {
            self.operator_due.push(id);
        }
        self.operator_at = self.operator_at.min(now);
    }

    /// When the host should tick for operator firings: `None` without any.
    pub(super) fn operator_deadline(&self) -> Option<u64> {
        (!self.operator_due.is_empty()).then_some(self.operator_at)
    }

    /// The tick's operator pass: for each schedule with a trigger or backfill waiting, at most
    /// one firing (a trigger first). Firings that must wait for their update are deferred as
    /// the heap's are; the rest are returned to start now.
    pub(super) fn plan_operator(&mut self, now: u64) -> Vec<Firing> {
        if self.operator_due.is_empty() {
            return Vec::new();
        }
        let mut start_now = Vec::new();
        for id in std::mem::take(&mut self.operator_due) {
            let (firing, again) = self.visit_operator(id, now);
            if again {
                self.operator_due.push(id);
            }
            if let Some(firing) = firing {
                if self.starts_after_write(id) {
                    self.defer(firing, now);
                } else {
                    start_now.push(firing);
                }
            }
        }
        // What waits (a backfill behind a running firing) is looked at again one tick on.
        self.operator_at = now.saturating_add(self.tick_ns);
        start_now
    }

    /// One schedule's operator firing this tick, and whether it has more to come.
    fn visit_operator(&mut self, id: u64, now: u64) -> (Option<Firing>, bool) {
        let Some(e) = self.table.get(id).filter(|e| e.is_live()) else {
            return (None, false);
        };
        if e.is_spent() {
            // Its last run has started: no trigger or backfill fires (docs/schedules.md §16.5).
            self.spent(id, now);
            return (None, false);
        }
        let busy = e.is_running() && e.overlap != Overlap::Concurrent;
        let (overlap, queue_free, step) = (e.overlap, e.queued().is_none(), e.step());
        let OpsRow {
            trigger, backfill, ..
        } = e.ops().cloned().unwrap_or_default();
        if trigger {
            let e = self.table.get_mut(id).expect("checked above");
            e.extra_mut().ops.trigger = false;
            let firing = if busy && overlap == Overlap::CancelOther {
                // The trigger kills the running firing and starts (docs/schedules.md §16.7).
                self.cancel_running(id, now, now)
                    .then(|| self.start(id, now, now))
            } else if busy {
                // Overlap decides, as for a cadence point arriving mid-firing (docs/schedules.md §4.4).
                if overlap == Overlap::Queue && queue_free {
                    e.extra_mut().queued = Some(now);
                } else {
                    self.count_missed(id, crate::MissedReason::Overlap, 1, now);
                }
                None
            } else {
                Some(self.start(id, now, now))
            };
            self.mark_dirty(id);
            return (firing, backfill.is_some());
        }
        let Some((point, last)) = backfill else {
            return (None, false);
        };
        if busy {
            return (None, true);
        }
        let rest = step
            .and_then(|s| s.after(point))
            .filter(|&p| p <= last)
            .map(|p| (p, last));
        let e = self.table.get_mut(id).expect("checked above");
        e.extra_mut().ops.backfill = rest;
        let firing = self.start(id, point, now);
        (Some(firing), rest.is_some())
    }
}
