//! What `schedule_info()` reports: [`ScheduleInfo`], with its calendar and pause.
//!
//! * `schedule_status.rs` — a schedule's kind, status and retirement reason;
//! * `firing_record.rs` — one settled firing of its history.

use crate::{Catchup, DstPolicy, Fault, ObjId, Overlap, RunId, ScheduleId, Value};

mod firing_record;
mod schedule_status;
pub use firing_record::{FiringRecord, HISTORY_KEPT};
pub use schedule_status::{RetireReason, ScheduleKind, ScheduleStatus};

/// Everything `schedule_info(id)` reports. [`ScheduleInfo::to_value`] gives the string-keyed map
/// of docs/schedules.md §9.1 and §9.2 (times as float Unix seconds, 0.0 for never; durations as
/// integer nanoseconds; absent optional values as 0).
///
/// `next_run` is when the next firing is due, jitter included (0.0 while nothing is armed: a
/// paused schedule, a one-shot running, a retired one; docs/schedules.md §9.4). `mean_duration_ns` and `p99_duration_ns` cover the last 64 firings settled in this
/// server run.
///
/// ```
/// use std::rc::Rc;
/// use tickstep_schedules::testkit::{TestRunner, TestWorld};
/// use tickstep_schedules::{ObjId, Options, ScheduleKind, Schedules, Value};
/// use tickstep_schedules::kernel::clock::ManualClock;
///
/// let world = TestWorld::new();
/// let wiz = world.add_wizard();
/// let room = world.add_object(wiz);
/// world.add_verb(room, "upkeep");
/// let engine = Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
/// let mut txn = engine.begin(wiz);
/// let id = txn.schedule_every(room, "upkeep", 60.0, vec![], Options::new()).unwrap();
/// let info = txn.schedule_info(id).unwrap();
/// assert_eq!(info.kind, ScheduleKind::Every);
/// assert_eq!(info.to_value().get("interval"), Some(&Value::Float(60.0)));
/// ```
#[derive(Clone, PartialEq, Debug)]
#[allow(clippy::struct_excessive_bools)] // the fields of docs/schedules.md §9.1, one to one
pub struct ScheduleInfo {
    /// The schedule's id.
    pub id: ScheduleId,
    /// The object whose verb is called.
    pub target: ObjId,
    /// The verb.
    pub verb: String,
    /// The arguments (without state and elapsed).
    pub args: Vec<Value>,
    /// The creating task's permissions.
    pub owner: ObjId,
    /// The authority principal (`caller` inside the verb); equal to the owner.
    pub authority: ObjId,
    /// One-shot or recurring.
    pub kind: ScheduleKind,
    /// Seconds between cadence points (0.0 for a one-shot or a calendar), after clamping.
    pub interval: f64,
    /// A calendar schedule's expression, zone and DST policy (docs/schedules.md §14.12);
    /// `None` for the other kinds.
    pub calendar: Option<CalendarInfo>,
    /// Creation time, float Unix seconds.
    pub created_at: f64,
    /// When the next firing is due, float Unix seconds (0.0 if none is armed: paused, a one-shot
    /// running, retired; docs/schedules.md §9.4).
    pub next_run: f64,
    /// When the last firing started, float Unix seconds (0.0 if never).
    pub last_run: f64,
    /// Firings started.
    pub run_count: u64,
    /// Faults over the schedule's life.
    pub fault_count: u64,
    /// Faults since the last success.
    pub consecutive_faults: u32,
    /// The most recent fault.
    pub last_fault: Option<Fault>,
    /// Cadence points dropped by catch-up.
    pub missed_count: u64,
    /// Deadlines that arrived while a firing ran and did not start one.
    pub overlap_count: u64,
    /// Duration of the last settled firing, nanoseconds.
    pub last_duration_ns: u64,
    /// Mean over the duration window, nanoseconds.
    pub mean_duration_ns: u64,
    /// 99th percentile over the duration window, nanoseconds.
    pub p99_duration_ns: u64,
    /// The running firing (the oldest under `concurrent`), if any.
    pub running_task: Option<RunId>,
    /// Whether the requested interval was below one tick and was raised to it.
    pub interval_clamped: bool,
    /// Whether the schedule has retired.
    pub retired: bool,
    /// Why it retired.
    pub retire_reason: Option<RetireReason>,
    /// The `adaptive` option.
    pub adaptive: bool,
    /// The `catchup` option.
    pub catchup: Catchup,
    /// The `overlap` option.
    pub overlap: Overlap,
    /// The `jitter` option, seconds.
    pub jitter: f64,
    /// The `max_faults` option (0 = unlimited).
    pub max_faults: u32,
    /// The `pass_elapsed` option.
    pub pass_elapsed: bool,
    /// The `persist` option.
    pub persist: bool,
    /// `player` inside the fired verb.
    pub player: ObjId,
    /// The `state` option.
    pub state: Option<Value>,
    /// The `seconds` option: the wall-clock limit on each firing, if any (docs/schedules.md
    /// §5.10).
    pub time_limit: Option<std::time::Duration>,
    /// The `ticks` option: the poll budget of each firing, if any (never 0).
    pub tick_limit: Option<std::num::NonZeroU64>,
    /// The schedule's key, if it has one (docs/schedules.md §5.12); a retired schedule still
    /// shows it, though it no longer holds it (docs/schedules.md §5.16).
    pub key: Option<String>,
    /// Who paused it, when and why, while it is paused (docs/schedules.md §9.4).
    pub pause: Option<PauseInfo>,
    /// Cadence points dropped because the schedule was paused, over its life (also counted in
    /// `missed_count`).
    pub paused_missed: u64,
    /// The points it missed by reason and its last miss (docs/schedules.md §9.15).
    pub missed: crate::MissedPoints,
    /// Whether a `trigger_now` waits for the next tick (docs/schedules.md §9.6).
    pub trigger_pending: bool,
    /// The backfill under way: the next point it fires and its last, float Unix seconds
    /// (docs/schedules.md §9.7).
    pub backfill: Option<(f64, f64)>,
    /// The next cadence points, nominal (before jitter), float Unix seconds: at most
    /// [`NEXT_RUNS_SHOWN`], computed, not stored (docs/schedules.md §9.8).
    pub next_runs: Vec<f64>,
    /// The last settled firings, newest first, as the store keeps them (at most
    /// [`HISTORY_KEPT`]); empty without a store or for a schedule that does not persist
    /// (docs/schedules.md §9.11).
    pub history: Vec<FiringRecord>,
    /// The `catchup_window` option, if set (docs/schedules.md §16.1).
    pub catchup_window: Option<std::time::Duration>,
    /// The `remaining_runs` option as given at creation, if set (docs/schedules.md §16.5).
    pub run_limit: Option<u64>,
    /// The firings its `remaining_runs` still allow (the limit less `run_count`), if it has a
    /// limit (docs/schedules.md §16.5).
    pub remaining_runs: Option<u64>,
    /// What reaching `max_faults` does (docs/schedules.md §16.6).
    pub on_max_faults: crate::OnMaxFaults,
}

/// What a calendar schedule fires on: its cron expression, its zone and its DST policy
/// (docs/schedules.md §14.12).
///
/// ```
/// use tickstep_schedules::{CalendarInfo, DstPolicy};
/// let c = CalendarInfo { expr: "0 3 * * *".into(), zone: "Europe/Paris".into(), dst: DstPolicy::default() };
/// assert_eq!(c.to_string(), "0 3 * * * Europe/Paris (gap shift, fold first)");
/// ```
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CalendarInfo {
    /// The cron expression, as given (trimmed).
    pub expr: String,
    /// The zone's IANA name, as the tz database spells it.
    pub zone: String,
    /// The DST policy.
    pub dst: DstPolicy,
}

impl std::fmt::Display for CalendarInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} (gap {}, fold {})",
            self.expr, self.zone, self.dst.gap, self.dst.fold
        )
    }
}

impl From<&crate::Calendar> for CalendarInfo {
    fn from(c: &crate::Calendar) -> Self {
        CalendarInfo {
            expr: c.expr().to_owned(),
            zone: c.zone().to_owned(),
            dst: c.policy(),
        }
    }
}

/// How many upcoming cadence points `schedule_info` lists (docs/schedules.md §9.8).
pub const NEXT_RUNS_SHOWN: usize = 10;

/// Who paused a schedule, when and why (docs/schedules.md §9.4).
///
/// ```
/// let p = tickstep_schedules::PauseInfo { by: tickstep_schedules::ObjId(2), at: 1.5, note: "deploy".into() };
/// assert_eq!(p.note, "deploy");
/// ```
#[derive(Clone, PartialEq, Debug)]
pub struct PauseInfo {
    /// The permissions that paused it.
    pub by: ObjId,
    /// When, float Unix seconds.
    pub at: f64,
    /// The operator's note.
    pub note: String,
}

/// Unix nanoseconds as float seconds (0 stays 0.0, "never").
pub(crate) fn unix_seconds(nanos: u64) -> f64 {
    nanos as f64 / 1e9
}

impl ScheduleInfo {
    /// Every field as a `(key, value)` pair, keys in the order of docs/schedules.md §9.1: what
    /// [`ScheduleInfo::to_value`] maps, without a string allocated for each key, for a host that
    /// prints the record field by field.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Options, Schedules, Value};
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "ring");
    /// # let engine = Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// # let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_at(wiz, "ring", 1.0e10, vec![], Options::new()).unwrap();
    /// let fields = txn.schedule_info(id).unwrap().fields();
    /// assert_eq!(fields[0], ("id", Value::Int(id.get() as i64)));
    /// assert!(fields.iter().any(|(key, value)| *key == "kind" && *value == Value::from("at")));
    /// ```
    pub fn fields(&self) -> Vec<(&'static str, Value)> {
        let int = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
        let obj = Value::Obj;
        let mut pairs: Vec<(&'static str, Value)> = vec![
            ("id", int(self.id.get())),
            ("target", obj(self.target)),
            ("verb", Value::from(self.verb.as_str())),
            ("args", Value::List(self.args.clone())),
            ("owner", obj(self.owner)),
            ("authority", obj(self.authority)),
            ("kind", Value::from(self.kind.as_str())),
            ("interval", Value::Float(self.interval)),
            ("created_at", Value::Float(self.created_at)),
            ("next_run", Value::Float(self.next_run)),
            ("last_run", Value::Float(self.last_run)),
            ("run_count", int(self.run_count)),
            ("fault_count", int(self.fault_count)),
            (
                "consecutive_faults",
                int(u64::from(self.consecutive_faults)),
            ),
            (
                "last_fault",
                self.last_fault
                    .as_ref()
                    .map_or(Value::Int(0), Fault::to_value),
            ),
            ("missed_count", int(self.missed_count)),
            ("overlap_count", int(self.overlap_count)),
            ("last_duration_ns", int(self.last_duration_ns)),
            ("mean_duration_ns", int(self.mean_duration_ns)),
            ("p99_duration_ns", int(self.p99_duration_ns)),
            ("running_task", int(self.running_task.map_or(0, |r| r.0))),
            ("interval_clamped", Value::Bool(self.interval_clamped)),
            ("retired", Value::Bool(self.retired)),
            (
                "retire_reason",
                Value::from(self.retire_reason.map_or("", RetireReason::as_str)),
            ),
            ("adaptive", Value::Bool(self.adaptive)),
            ("catchup", Value::from(self.catchup.as_str())),
            ("overlap", Value::from(self.overlap.as_str())),
            ("jitter", Value::Float(self.jitter)),
            ("max_faults", int(u64::from(self.max_faults))),
            ("pass_elapsed", Value::Bool(self.pass_elapsed)),
            ("persist", Value::Bool(self.persist)),
            ("player", obj(self.player)),
            ("state", self.state.clone().unwrap_or(Value::Int(0))),
            (
                "seconds",
                self.time_limit
                    .map_or(Value::Int(0), |d| Value::Float(d.as_secs_f64())),
            ),
            (
                "ticks",
                int(self.tick_limit.map_or(0, std::num::NonZeroU64::get)),
            ),
            ("key", Value::from(self.key.as_deref().unwrap_or(""))),
            ("paused", Value::Bool(self.pause.is_some())),
            (
                "paused_by",
                self.pause.as_ref().map_or(Value::Int(0), |p| obj(p.by)),
            ),
            (
                "paused_at",
                Value::Float(self.pause.as_ref().map_or(0.0, |p| p.at)),
            ),
            (
                "pause_note",
                Value::from(self.pause.as_ref().map_or("", |p| p.note.as_str())),
            ),
            ("paused_missed", int(self.paused_missed)),
            ("trigger_pending", Value::Bool(self.trigger_pending)),
            (
                "backfill",
                self.backfill.map_or(Value::Int(0), |(next, last)| {
                    Value::List(vec![Value::Float(next), Value::Float(last)])
                }),
            ),
            (
                "next_runs",
                Value::List(self.next_runs.iter().map(|&t| Value::Float(t)).collect()),
            ),
            (
                "history",
                Value::List(self.history.iter().map(FiringRecord::to_value).collect()),
            ),
        ];
        pairs.extend(self.calendar_pairs());
        pairs.push(("status", Value::from(self.status().as_str())));
        pairs.extend(self.policy_pairs());
        pairs.extend(self.missed.fields());
        pairs.extend(self.lateness().fields());
        pairs
    }

    /// How late its kept firings started (docs/schedules.md §9.16): the percentiles over
    /// `history`, so over the last [`HISTORY_KEPT`] at most, with their count; none without a
    /// store.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Options, Schedules};
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "ring");
    /// # let engine = Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "ring", 60.0, vec![], Options::new()).unwrap();
    /// assert_eq!(txn.schedule_info(id).unwrap().lateness().samples, 0);
    /// ```
    pub fn lateness(&self) -> crate::Lateness {
        crate::Lateness::of(&self.history)
    }

    /// The string-keyed map of [`ScheduleInfo::fields`], keys in the order of
    /// docs/schedules.md §9.1.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Options, Schedules, Value};
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "ring");
    /// # let engine = Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// # let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_at(wiz, "ring", 1.0e10, vec![], Options::new()).unwrap();
    /// let map = txn.schedule_info(id).unwrap().to_value();
    /// assert_eq!(map.get("kind"), Some(&Value::from("at")));
    /// assert_eq!(map.get("retire_reason"), Some(&Value::from("")));
    /// assert_eq!(map.get("running_task"), Some(&Value::Int(0)));
    /// ```
    pub fn to_value(&self) -> Value {
        Value::Map(
            self.fields()
                .into_iter()
                .map(|(k, v)| (Value::from(k), v))
                .collect(),
        )
    }

    /// What the schedule is doing, in one word (docs/schedules.md §9.13): the map's `status`.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Options, Schedules, ScheduleStatus};
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "ring");
    /// let engine = Schedules::in_memory(ManualClock::new(), world, TestRunner::new(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "ring", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// assert_eq!(engine.begin(wiz).schedule_info(id).unwrap().status(), ScheduleStatus::Active);
    /// engine.pause(wiz, id, "").unwrap();
    /// let info = engine.begin(wiz).schedule_info(id).unwrap();
    /// assert_eq!((info.status(), info.next_run), (ScheduleStatus::Paused, 0.0));
    /// ```
    pub fn status(&self) -> ScheduleStatus {
        ScheduleStatus::of(
            self.retired,
            self.pause.is_some(),
            self.running_task.is_some(),
            self.consecutive_faults,
        )
    }

    /// A calendar schedule's keys (docs/schedules.md §14.12): `""` for the other kinds.
    /// The policies' keys, after `status` (docs/schedules.md §16.4).
    fn policy_pairs(&self) -> [(&'static str, Value); 4] {
        let int =
            |n: Option<u64>| Value::Int(n.map_or(0, |n| i64::try_from(n).unwrap_or(i64::MAX)));
        [
            (
                "catchup_window",
                self.catchup_window
                    .map_or(Value::Int(0), |d| Value::Float(d.as_secs_f64())),
            ),
            ("run_limit", int(self.run_limit)),
            ("remaining_runs", int(self.remaining_runs)),
            ("on_max_faults", Value::from(self.on_max_faults.as_str())),
        ]
    }

    fn calendar_pairs(&self) -> [(&'static str, Value); 4] {
        let c = self.calendar.as_ref();
        [
            ("cron", Value::from(c.map_or("", |c| c.expr.as_str()))),
            ("zone", Value::from(c.map_or("", |c| c.zone.as_str()))),
            ("dst_gap", Value::from(c.map_or("", |c| c.dst.gap.as_str()))),
            (
                "dst_fold",
                Value::from(c.map_or("", |c| c.dst.fold.as_str())),
            ),
        ]
    }
}
