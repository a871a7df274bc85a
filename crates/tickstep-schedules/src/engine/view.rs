//! Read-only answers: `schedule_info` records, GC roots, the engine's idea of now.

use super::core::Core;
use super::deadlines::upcoming;
use super::entry::{Entry, Kind};
use super::handle::Schedules;
use crate::info::{NEXT_RUNS_SHOWN, PauseInfo, ScheduleInfo, unix_seconds};
use crate::{Error, ObjId, ScheduleId};

/// The most fire times [`Schedules::next_runs`] lists (docs/schedules.md §9.8).
const MAX_NEXT_RUNS: usize = 1000;

impl Core {
    /// The `schedule_info` record of `e` at `now` (Unix nanoseconds).
    pub(super) fn info(&self, e: &Entry, now: u64) -> ScheduleInfo {
        let x = e.extra.as_deref();
        let ops = e.ops();
        let retired = e.retired();
        let next_run = if e.armed { e.fire_at } else { 0 };
        ScheduleInfo {
            id: ScheduleId::from_raw(e.id),
            target: e.target,
            verb: self.verbs.name(e.verb).to_string(),
            args: e.args().map(|a| a.to_vec()).unwrap_or_default(),
            owner: e.owner,
            authority: e.owner,
            kind: e.kind,
            interval: if e.kind == Kind::Every {
                e.interval_ns as f64 / 1e9
            } else {
                0.0
            },
            calendar: e.calendar.as_deref().map(crate::CalendarInfo::from),
            created_at: unix_seconds(e.created_at),
            next_run: unix_seconds(next_run),
            last_run: unix_seconds(e.last_run),
            run_count: e.run_count,
            fault_count: e.fault_count,
            consecutive_faults: e.consecutive_faults,
            last_fault: e.last_fault().cloned(),
            missed_count: e.missed_count,
            overlap_count: e.overlap_count,
            last_duration_ns: e.last_duration_ns,
            mean_duration_ns: x.map_or(0, |x| x.window.mean()),
            p99_duration_ns: x.map_or(0, |x| x.window.p99()),
            running_task: e.running().iter().find(|r| !r.waiting).and_then(|r| r.run),
            interval_clamped: e.interval_clamped,
            retired: retired.is_some(),
            retire_reason: retired.map(|r| r.reason),
            adaptive: e.adaptive,
            catchup: e.catchup,
            overlap: e.overlap,
            jitter: e.jitter_ns as f64 / 1e9,
            max_faults: e.max_faults,
            pass_elapsed: e.pass_elapsed,
            persist: e.persist,
            player: e.player,
            state: e.state().map(|s| (**s).clone()),
            time_limit: e
                .limits()
                .time_limit_ns
                .map(std::time::Duration::from_nanos),
            tick_limit: e.limits().tick_limit.and_then(std::num::NonZeroU64::new),
            key: e.key().map(ToString::to_string),
            pause: ops.and_then(|o| o.paused.as_ref()).map(|p| PauseInfo {
                by: p.by,
                at: unix_seconds(p.at),
                note: p.note.clone(),
            }),
            paused_missed: ops.map_or(0, |o| o.paused_missed),
            missed: ops.map_or_else(Default::default, |o| o.missed.view(o.paused_missed)),
            trigger_pending: ops.is_some_and(|o| o.trigger),
            backfill: ops
                .and_then(|o| o.backfill)
                .map(|(next, last)| (unix_seconds(next), unix_seconds(last))),
            // Read from the store by `Shared::info`, only when asked (docs/schedules.md §9.11).
            history: Vec::new(),
            catchup_window: e.policies().catchup_window(),
            run_limit: e.policies().run_limit,
            remaining_runs: e.runs_left(),
            on_max_faults: e.policies().on_max_faults,
            next_runs: upcoming(e.cadence_view(), now, NEXT_RUNS_SHOWN)
                .into_iter()
                .map(unix_seconds)
                .collect(),
        }
    }
}

impl Schedules {
    /// The schedules held back at open because most of what the engine loaded names objects its
    /// world does not have (docs/schedules.md §15.6), or `None`: they are neither fired nor
    /// retired, and their rows stay as they are. A host says so at its start.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// let engine = tickstep_schedules::Schedules::in_memory(
    ///     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert_eq!(engine.held_back(), None);
    /// ```
    pub fn held_back(&self) -> Option<crate::HeldBack> {
        self.shared.core.borrow().held_back.clone()
    }

    /// The next `count` fire times of schedule `id` (at most 1,000), nominal (before jitter),
    /// float Unix seconds: computed from its cadence, never stored (docs/schedules.md §9.8).
    /// `schedule_info` lists the first [`NEXT_RUNS_SHOWN`]; this is for more.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArg`] for an id that names nothing or a `count` over 1,000;
    /// [`Error::Perm`] when `perms` is neither the owner nor a wizard (as `schedule_info`).
    ///
    /// ```
    /// use tickstep_schedules::kernel::clock::ManualClock;
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// use tickstep_schedules::{Options, Schedules};
    ///
    /// let world = TestWorld::new();
    /// let wiz = world.add_wizard();
    /// world.add_verb(wiz, "v");
    /// let engine = Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// let t0 = engine.now_unix_seconds();
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "v", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// let next = engine.next_runs(wiz, id, 20).unwrap();
    /// assert_eq!((next.len(), next[19]), (20, t0 + 1200.0));
    /// ```
    pub fn next_runs(&self, perms: ObjId, id: ScheduleId, count: usize) -> Result<Vec<f64>, Error> {
        if count > MAX_NEXT_RUNS {
            return Err(Error::invalid(
                count,
                format!(
                    "next_runs lists at most {MAX_NEXT_RUNS} fire times (docs/schedules.md §9.8)"
                ),
            ));
        }
        let shared = &*self.shared;
        let now = shared.clock.unix_nanos();
        let unknown = || Error::invalid(id, "no such schedule");
        let owner = shared.lookup(id.get(), now).ok_or_else(unknown)?.owner;
        if !crate::perms::may_manage(shared.world(), perms, owner) {
            return Err(Error::perm(
                perms,
                id,
                "next_runs is for the schedule's owner or a wizard, as schedule_info",
            ));
        }
        let points = shared.upcoming(id.get(), now, count).ok_or_else(unknown)?;
        Ok(points.into_iter().map(unix_seconds).collect())
    }

    /// Every anonymous object (as the world's [`World::is_anonymous`](crate::World::is_anonymous)
    /// says) that a schedule keeps alive through its target, player, args, state or last fault
    /// value — live and retained retired entries alike. A host's garbage collector treats them as
    /// roots. Sorted, without duplicates.
    ///
    /// ```
    /// use tickstep_schedules::kernel::clock::ManualClock;
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// use tickstep_schedules::{Options, Schedules, Value};
    ///
    /// let world = TestWorld::new();
    /// let wiz = world.add_wizard();
    /// world.add_verb(wiz, "poke");
    /// let anon = world.add_anonymous(wiz);
    /// let engine = Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// txn.schedule_every(wiz, "poke", 5.0, vec![Value::Obj(anon)], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// assert_eq!(engine.anonymous_references(), vec![anon]);
    /// ```
    pub fn anonymous_references(&self) -> Vec<crate::ObjId> {
        let mut all: Vec<ObjId> = Vec::new();
        {
            let core = self.shared.core.borrow();
            for e in core.table.iter() {
                e.for_each_object(&mut |o| all.push(o));
            }
        }
        all.sort_unstable();
        all.dedup();
        // Asked with no borrow held: the world is host code.
        all.retain(|&o| self.shared.world.is_anonymous(o));
        all
    }

    /// The engine clock's wall time in float Unix seconds (MOO `ftime()`), handy for computing a
    /// `schedule_at` time.
    ///
    /// ```
    /// use tickstep_schedules::kernel::clock::ManualClock;
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// let clock = ManualClock::starting_at_unix_nanos(1_500_000_000);
    /// let engine = tickstep_schedules::Schedules::in_memory(clock, TestWorld::new(), TestRunner::new(), Default::default());
    /// assert_eq!(engine.now_unix_seconds(), 1.5);
    /// ```
    pub fn now_unix_seconds(&self) -> f64 {
        unix_seconds(self.shared.clock.unix_nanos())
    }
}
