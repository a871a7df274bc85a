//! One schedule as a store holds it, as the operator sees it: [`StoredSchedule`], made from a
//! decoded row and its namespace, with the engine's own rules for its status and next fire
//! times (docs/schedules.md §9.8, §9.13).

use crate::fire_times::{CadenceView, upcoming};
use crate::store_rows::ScheduleRow;
use crate::{Catchup, Fault, InFlight, ObjId, Overlap, ScheduleId, ScheduleKind, Value};

/// One schedule as the store holds it: what was committed by the engine's last durable commit or
/// group commit, with times as Unix nanoseconds (0 for never).
///
/// It is the persisted part of [`ScheduleInfo`](crate::ScheduleInfo): the duration window and
/// retirement live only in a running engine (retired schedules are not saved), and the cadence
/// fields are as of the last tick the engine committed.
///
/// ```
/// # use tickstep_schedules::kernel::clock::{Clock, ManualClock};
/// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
/// # use tickstep_schedules::{Inspector, Options, Schedules, ScheduleKind, Value};
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("s.db");
/// # let world = TestWorld::new();
/// # let wiz = world.add_wizard();
/// # world.add_verb(wiz, "ring");
/// let clock = ManualClock::new();
/// let engine = Schedules::open(&path, clock.clone(), world, TestRunner::new(),
///     Default::default()).unwrap();
/// let mut txn = engine.begin(wiz);
/// let options = Options::new().state(Value::from("loud"));
/// let id = txn.schedule_every(wiz, "ring", 2.0, vec![Value::Int(3)], options).unwrap();
/// txn.commit().unwrap();
///
/// let bell = Inspector::open(&path).unwrap().get(id).unwrap().unwrap();
/// assert_eq!(bell.kind, ScheduleKind::Every);
/// assert_eq!(bell.interval_ns, 2_000_000_000);
/// assert_eq!(bell.args, vec![Value::Int(3)]);
/// assert_eq!(bell.state, Some(Value::from("loud")));
/// assert_eq!(bell.fire_at_unix_nanos, clock.unix_nanos() + 2_000_000_000);
/// assert!(bell.running.is_empty());
/// ```
#[derive(Clone, PartialEq, Debug)]
#[non_exhaustive]
#[allow(clippy::struct_excessive_bools)] // the schedule's options, one to one
pub struct StoredSchedule {
    /// The application it belongs to (docs/schedules.md §15); empty in a store from before
    /// namespaces.
    pub namespace: String,
    /// The schedule's id.
    pub id: ScheduleId,
    /// One-shot or recurring.
    pub kind: ScheduleKind,
    /// The object whose verb is called.
    pub target: ObjId,
    /// The verb.
    pub verb: String,
    /// The arguments (without state and elapsed); empty for none.
    pub args: Vec<Value>,
    /// The `state` option.
    pub state: Option<Value>,
    /// The creating task's permissions, also the authority principal.
    pub owner: ObjId,
    /// `player` inside the fired verb.
    pub player: ObjId,
    /// Nanoseconds between cadence points, after clamping (for a one-shot, what was stored).
    pub interval_ns: u64,
    /// Whether the requested interval was below one tick and was raised to it.
    pub interval_clamped: bool,
    /// The `jitter` option, nanoseconds.
    pub jitter_ns: u64,
    /// The `max_faults` option (0 = unlimited).
    pub max_faults: u32,
    /// The `catchup` option.
    pub catchup: Catchup,
    /// The `overlap` option.
    pub overlap: Overlap,
    /// The `adaptive` option.
    pub adaptive: bool,
    /// The `pass_elapsed` option.
    pub pass_elapsed: bool,
    /// Creation time.
    pub created_unix_nanos: u64,
    /// The next cadence point, before jitter.
    pub next_run_unix_nanos: u64,
    /// The stored deadline, jitter included. It is when the next firing is due only while
    /// `armed`: a paused schedule keeps its deadline unarmed (docs/schedules.md §9.4), so
    /// [`StoredSchedule::next_due_unix_nanos`] is `schedule_info`'s `next_run`.
    pub fire_at_unix_nanos: u64,
    /// Whether a next firing is armed at all (false while paused, or while a one-shot runs).
    pub armed: bool,
    /// When the last firing started (0 if never).
    pub last_run_unix_nanos: u64,
    /// Firings started.
    pub run_count: u64,
    /// Faults over the schedule's life.
    pub fault_count: u64,
    /// Faults since the last success.
    pub consecutive_faults: u32,
    /// Cadence points dropped by catch-up.
    pub missed_count: u64,
    /// Deadlines that arrived while a firing ran and did not start one.
    pub overlap_count: u64,
    /// Duration of the last settled firing, nanoseconds.
    pub last_duration_ns: u64,
    /// The most recent fault.
    pub last_fault: Option<Fault>,
    /// Firings in flight at the last commit, oldest first (a restarting engine hands these back
    /// as [`Schedules::interrupted`](crate::Schedules::interrupted)).
    pub running: Vec<InFlight>,
    /// The `seconds` option: the wall-clock limit on each firing, if any (`None` in a store
    /// older than schema version 3, which did not keep it).
    pub time_limit: Option<std::time::Duration>,
    /// The `ticks` option: the poll budget of each firing, if any (never 0).
    pub tick_limit: Option<std::num::NonZeroU64>,
    /// The schedule's key, unique per owner (docs/schedules.md §5.12); `None` for none, and in
    /// a store older than schema version 4 (`PostgreSQL`: 5), which did not keep keys.
    pub key: Option<String>,
    /// Who paused it, when and why, while paused (docs/schedules.md §9.4).
    pub pause: Option<crate::PauseInfo>,
    /// Cadence points missed because it was paused, over its life (docs/schedules.md §9.4).
    pub paused_missed: u64,
    /// The points it missed by reason and its last miss (docs/schedules.md §9.15): zero for
    /// every reason but `paused` in a store older than schema version 12 (`PostgreSQL` 14).
    pub missed: crate::MissedPoints,
    /// Whether a `trigger_now` waits for the next tick (docs/schedules.md §9.6).
    pub trigger_pending: bool,
    /// The backfill under way: its next point and its last, Unix nanoseconds (docs/schedules.md
    /// §9.7).
    pub backfill_unix_nanos: Option<(u64, u64)>,
    /// A calendar schedule's expression, zone and DST policy (docs/schedules.md §14.12).
    pub calendar: Option<crate::CalendarInfo>,
    /// The `catchup_window` option, if set (`None` in a store older than schema version 11,
    /// `PostgreSQL` 13, which did not keep policies; docs/schedules.md §16.1).
    pub catchup_window: Option<std::time::Duration>,
    /// The `remaining_runs` option as given at creation, if set (docs/schedules.md §16.5).
    pub run_limit: Option<u64>,
    /// The firings its `remaining_runs` still allow (the limit less `run_count`), if it has a
    /// limit (docs/schedules.md §16.5).
    pub remaining_runs: Option<u64>,
    /// What reaching `max_faults` does (docs/schedules.md §16.6).
    pub on_max_faults: crate::OnMaxFaults,
    /// What the next fire times are computed from (docs/schedules.md §9.8), its calendar apart.
    cadence: CadenceView<'static>,
    /// The calendar the next fire times of a `Cron` schedule come from.
    steps_by: Option<std::sync::Arc<crate::Calendar>>,
}

impl StoredSchedule {
    /// When the next firing is due, jitter included, as `schedule_info`'s `next_run` says it:
    /// the stored deadline while one is armed, `None` while none is — paused (docs/schedules.md
    /// §9.4), or a one-shot running.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::{Clock, ManualClock};
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Inspector, Options, Schedules};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "v");
    /// let clock = ManualClock::new();
    /// let engine = Schedules::open(&path, clock.clone(), world, TestRunner::new(), Default::default()).unwrap();
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "v", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// let stored = || Inspector::open(&path).unwrap().get(id).unwrap().unwrap();
    /// assert_eq!(stored().next_due_unix_nanos(), Some(clock.unix_nanos() + 60_000_000_000));
    /// engine.pause(wiz, id, "").unwrap();
    /// assert_eq!(stored().next_due_unix_nanos(), None, "paused: nothing is due");
    /// ```
    pub fn next_due_unix_nanos(&self) -> Option<u64> {
        self.armed.then_some(self.fire_at_unix_nanos)
    }

    /// What the schedule is doing, in one word, as `schedule_info`'s `status` decides it from
    /// the same fields (docs/schedules.md §9.13). A store holds no retired schedule.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Inspector, Options, Schedules, ScheduleStatus};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "v");
    /// let engine = Schedules::open(&path, ManualClock::new(), world, TestRunner::new(), Default::default()).unwrap();
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "v", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// engine.pause(wiz, id, "deploy").unwrap();
    /// let stored = Inspector::open(&path).unwrap().get(id).unwrap().unwrap();
    /// assert_eq!(stored.status(), ScheduleStatus::Paused);
    /// ```
    pub fn status(&self) -> crate::ScheduleStatus {
        crate::ScheduleStatus::of(
            false,
            self.pause.is_some(),
            !self.running.is_empty(),
            self.consecutive_faults,
        )
    }

    /// The next `count` cadence points after the stored state, nominal, Unix nanoseconds, as the
    /// engine computes them for `schedule_info` (docs/schedules.md §9.8): `now_unix_nanos`
    /// matters only for a paused schedule, whose list starts after it.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::{Clock, ManualClock};
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Inspector, Options, Schedules};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # let clock = ManualClock::new();
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "v");
    /// let engine = Schedules::open(&path, clock.clone(), world, TestRunner::new(), Default::default()).unwrap();
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "v", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// let stored = Inspector::open(&path).unwrap().get(id).unwrap().unwrap();
    /// let next = stored.next_runs(clock.unix_nanos(), 3);
    /// assert_eq!(next, [60, 120, 180].map(|s| clock.unix_nanos() + s * 1_000_000_000));
    /// ```
    pub fn next_runs(&self, now_unix_nanos: u64, count: usize) -> Vec<u64> {
        let cadence = CadenceView {
            calendar: self.steps_by.as_deref(),
            ..self.cadence
        };
        upcoming(cadence, now_unix_nanos, count)
    }
}

impl From<(ScheduleRow, String)> for StoredSchedule {
    /// A decoded row, with its namespace, as the operator sees it.
    fn from((r, namespace): (ScheduleRow, String)) -> Self {
        let id = ScheduleId::from_raw(r.id);
        let c = r.cadence;
        let ops = c.ops.unwrap_or_default();
        let cadence = CadenceView {
            kind: r.kind,
            calendar: None,
            next_run: c.next_run,
            interval_ns: r.interval_ns,
            waiting: c.armed || ops.paused.as_ref().is_some_and(|p| p.armed),
            paused: ops.paused.is_some(),
            // A schedule whose last run has started has no next point (docs/schedules.md §16.5).
            live: r.policies.run_limit.is_none_or(|n| c.run_count < n),
        };
        StoredSchedule {
            namespace,
            id,
            kind: r.kind,
            target: r.target,
            verb: r.verb,
            args: r.args.unwrap_or_default(),
            state: r.state,
            owner: r.owner,
            player: r.player,
            interval_ns: r.interval_ns,
            interval_clamped: r.interval_clamped,
            jitter_ns: r.jitter_ns,
            max_faults: r.max_faults,
            catchup: r.catchup,
            overlap: r.overlap,
            adaptive: r.adaptive,
            pass_elapsed: r.pass_elapsed,
            created_unix_nanos: r.created_at,
            next_run_unix_nanos: c.next_run,
            fire_at_unix_nanos: c.fire_at,
            armed: c.armed,
            last_run_unix_nanos: c.last_run,
            run_count: c.run_count,
            fault_count: c.fault_count,
            consecutive_faults: c.consecutive_faults,
            missed_count: c.missed_count,
            overlap_count: c.overlap_count,
            last_duration_ns: c.last_duration_ns,
            last_fault: c.last_fault.map(|f| *f),
            running: c
                .running
                .iter()
                // A start still waiting for the row to be durable is no run yet (docs/schedules.md §11.42).
                .filter_map(|r| {
                    Some(InFlight {
                        schedule: id,
                        run: r.run?,
                        nominal_unix_nanos: r.nominal,
                    })
                })
                .collect(),
            time_limit: r.time_limit_ns.map(std::time::Duration::from_nanos),
            tick_limit: r.tick_limit.and_then(std::num::NonZeroU64::new),
            key: r.key,
            pause: ops.paused.map(|p| crate::PauseInfo {
                by: p.by,
                at: crate::info::unix_seconds(p.at),
                note: p.note,
            }),
            paused_missed: ops.paused_missed,
            missed: ops.missed.view(ops.paused_missed),
            trigger_pending: ops.trigger,
            backfill_unix_nanos: ops.backfill,
            calendar: r.calendar.as_deref().map(crate::CalendarInfo::from),
            catchup_window: r.policies.catchup_window(),
            run_limit: r.policies.run_limit,
            remaining_runs: r.policies.run_limit.map(|n| n.saturating_sub(c.run_count)),
            on_max_faults: r.policies.on_max_faults,
            cadence,
            steps_by: r.calendar,
        }
    }
}
