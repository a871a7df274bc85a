//! What `schedule_info()` reports: [`ScheduleInfo`], and the retirement reasons.

use crate::{Catchup, DstPolicy, Fault, ObjId, Overlap, RunId, ScheduleId, Value};

/// Whether a schedule is a one-shot (`schedule_at`), recurring on an interval
/// (`schedule_every`) or on a calendar (`schedule_cron`, docs/schedules.md §14.12).
///
/// ```
/// assert_eq!(tickstep_schedules::ScheduleKind::Every.as_str(), "every");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ScheduleKind {
    /// A one-shot.
    At,
    /// A recurring schedule.
    Every,
    /// A calendar schedule: a cron expression in a time zone (docs/schedules.md §14.12).
    Cron,
}

impl ScheduleKind {
    /// Every kind the engine has, in the order of [`ScheduleKind::as_str`]'s docs: what a filter
    /// by kind offers and accepts (docs/serve.md §13.2).
    ///
    /// ```
    /// let names: Vec<_> = tickstep_schedules::ScheduleKind::ALL.iter().map(|k| k.as_str()).collect();
    /// assert_eq!(names, ["at", "every", "cron"]);
    /// ```
    pub const ALL: [ScheduleKind; 3] = [ScheduleKind::At, ScheduleKind::Every, ScheduleKind::Cron];

    /// Parses [`ScheduleKind::as_str`]'s spelling.
    ///
    /// ```
    /// use tickstep_schedules::ScheduleKind;
    /// assert_eq!(ScheduleKind::parse("cron"), Some(ScheduleKind::Cron));
    /// assert_eq!(ScheduleKind::parse("daily"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// `"at"`, `"every"` or `"cron"`.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::ScheduleKind::At.as_str(), "at");
    /// assert_eq!(tickstep_schedules::ScheduleKind::Cron.as_str(), "cron");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ScheduleKind::At => "at",
            ScheduleKind::Every => "every",
            ScheduleKind::Cron => "cron",
        }
    }

    /// Whether the kind fires again and again (`every` and `cron`).
    ///
    /// ```
    /// use tickstep_schedules::ScheduleKind;
    /// assert!(ScheduleKind::Cron.is_recurring());
    /// assert!(!ScheduleKind::At.is_recurring());
    /// ```
    pub fn is_recurring(self) -> bool {
        self != ScheduleKind::At
    }
}

/// What a schedule is doing, in one word: the `status` of `schedule_info`, the STATE column of
/// `tickstep schedules list` and the state the dashboard shows and filters by
/// (docs/schedules.md §9.13). The first that holds, in this order:
///
/// * `retired` — it will not fire again (docs/schedules.md §8.1);
/// * `paused` — an operator paused it (docs/schedules.md §9.4), a firing still running or not;
/// * `running` — a firing of it is in flight;
/// * `failing` — its last settled firing faulted (`consecutive_faults` > 0), and it fires on;
/// * `active` — it waits for its next cadence point.
///
/// ```
/// use tickstep_schedules::ScheduleStatus;
/// assert_eq!(ScheduleStatus::Paused.as_str(), "paused");
/// assert_eq!(ScheduleStatus::parse("failing"), Some(ScheduleStatus::Failing));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[non_exhaustive]
pub enum ScheduleStatus {
    /// Waiting for its next cadence point.
    Active,
    /// A firing is in flight.
    Running,
    /// Its last settled firing faulted; it fires on.
    Failing,
    /// Paused by an operator (docs/schedules.md §9.4).
    Paused,
    /// It will not fire again (docs/schedules.md §8.1).
    Retired,
}

impl ScheduleStatus {
    /// Every status, in the order of [`ScheduleStatus::as_str`]'s spellings.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::ScheduleStatus::ALL.len(), 5);
    /// ```
    pub const ALL: [ScheduleStatus; 5] = [
        ScheduleStatus::Active,
        ScheduleStatus::Running,
        ScheduleStatus::Failing,
        ScheduleStatus::Paused,
        ScheduleStatus::Retired,
    ];

    /// `"active"`, `"running"`, `"failing"`, `"paused"` or `"retired"`.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::ScheduleStatus::Running.as_str(), "running");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ScheduleStatus::Active => "active",
            ScheduleStatus::Running => "running",
            ScheduleStatus::Failing => "failing",
            ScheduleStatus::Paused => "paused",
            ScheduleStatus::Retired => "retired",
        }
    }

    /// Parses [`ScheduleStatus::as_str`]'s spelling.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::ScheduleStatus::parse("dead"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The rule of docs/schedules.md §9.13, from what both the engine's record and a stored row
    /// know: one decision for every reader.
    pub(crate) fn of(retired: bool, paused: bool, running: bool, consecutive_faults: u32) -> Self {
        if retired {
            ScheduleStatus::Retired
        } else if paused {
            ScheduleStatus::Paused
        } else if running {
            ScheduleStatus::Running
        } else if consecutive_faults > 0 {
            ScheduleStatus::Failing
        } else {
            ScheduleStatus::Active
        }
    }
}

impl std::fmt::Display for ScheduleStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a schedule retired (it will not fire again; its entry is kept 60 s for `schedule_info`).
///
/// ```
/// use tickstep_schedules::RetireReason;
/// assert_eq!(RetireReason::MaxFaults.as_str(), "max_faults");
/// assert_eq!(RetireReason::parse("completed"), Some(RetireReason::Completed));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum RetireReason {
    /// A one-shot fired and did not reschedule itself.
    Completed,
    /// `max_faults` consecutive faults.
    MaxFaults,
    /// The next deadline would pass the end of 64-bit Unix nanoseconds (counted as a fault).
    DeadlineOutOfRange,
    /// The target was no longer valid at firing time.
    InvalidTarget,
    /// Its `remaining_runs` were all made and settled (docs/schedules.md §16.5).
    RemainingRuns,
}

impl RetireReason {
    /// The reason's name in `retire_reason`.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::RetireReason::InvalidTarget.as_str(), "invalid_target");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            RetireReason::Completed => "completed",
            RetireReason::MaxFaults => "max_faults",
            RetireReason::DeadlineOutOfRange => "deadline_out_of_range",
            RetireReason::InvalidTarget => "invalid_target",
            RetireReason::RemainingRuns => "remaining_runs",
        }
    }

    /// Parses [`RetireReason::as_str`]'s spelling.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::RetireReason::parse("nope"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Self> {
        [
            RetireReason::Completed,
            RetireReason::MaxFaults,
            RetireReason::DeadlineOutOfRange,
            RetireReason::InvalidTarget,
            RetireReason::RemainingRuns,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }
}

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

/// How many settled firings the store keeps for each persistent schedule (docs/schedules.md
/// §9.11).
///
/// ```
/// assert_eq!(tickstep_schedules::HISTORY_KEPT, 20);
/// ```
pub const HISTORY_KEPT: u64 = 20;

/// One settled firing in a schedule's history (docs/schedules.md §9.11).
///
/// ```
/// let r = tickstep_schedules::FiringRecord { started: 1.0, ended: 1.5, nominal: 1.0, fault: None };
/// assert_eq!(r.outcome(), "returned");
/// ```
#[derive(Clone, PartialEq, Debug)]
pub struct FiringRecord {
    /// When it started, float Unix seconds.
    pub started: f64,
    /// When its outcome was reported, float Unix seconds.
    pub ended: f64,
    /// The cadence point it served, float Unix seconds.
    pub nominal: f64,
    /// Its fault (kind and value), or `None` when it returned.
    pub fault: Option<Fault>,
}

impl FiringRecord {
    /// How late it started: its start minus the point it served, seconds, never below 0.0 — a
    /// firing jitter started before its point was not late, as the lateness histogram counts it
    /// (docs/schedules.md §9.16, docs/observability.md §1.5).
    ///
    /// ```
    /// use tickstep_schedules::FiringRecord;
    /// let r = FiringRecord { started: 12.5, ended: 13.0, nominal: 10.0, fault: None };
    /// assert_eq!(r.lateness(), 2.5);
    /// let early = FiringRecord { started: 9.0, ended: 9.5, nominal: 10.0, fault: None };
    /// assert_eq!(early.lateness(), 0.0);
    /// ```
    pub fn lateness(&self) -> f64 {
        (self.started - self.nominal).max(0.0)
    }

    /// `"returned"` or `"fault"`.
    ///
    /// ```
    /// use tickstep_schedules::{Fault, FaultKind, FiringRecord, Value};
    /// let fault = Fault { kind: FaultKind::Killed, value: Value::from("killed") };
    /// let r = FiringRecord { started: 1.0, ended: 2.0, nominal: 1.0, fault: Some(fault) };
    /// assert_eq!(r.outcome(), "fault");
    /// ```
    pub fn outcome(&self) -> &'static str {
        if self.fault.is_some() {
            "fault"
        } else {
            "returned"
        }
    }

    /// The record as a map: `started`, `ended`, `nominal`, `outcome`, `fault` (its map, or 0),
    /// `lateness` (seconds, [`FiringRecord::lateness`]).
    ///
    /// ```
    /// let r = tickstep_schedules::FiringRecord { started: 1.0, ended: 1.5, nominal: 1.0, fault: None };
    /// assert_eq!(r.to_value().get("outcome"), Some(&tickstep_schedules::Value::from("returned")));
    /// ```
    pub fn to_value(&self) -> Value {
        let pairs = [
            ("started", Value::Float(self.started)),
            ("ended", Value::Float(self.ended)),
            ("nominal", Value::Float(self.nominal)),
            ("outcome", Value::from(self.outcome())),
            (
                "fault",
                self.fault.as_ref().map_or(Value::Int(0), Fault::to_value),
            ),
            ("lateness", Value::Float(self.lateness())),
        ];
        Value::Map(
            pairs
                .into_iter()
                .map(|(k, v)| (Value::from(k), v))
                .collect(),
        )
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

impl crate::Lateness {
    /// The percentiles of `records`' lateness.
    ///
    /// ```
    /// let r = tickstep_schedules::FiringRecord { started: 3.0, ended: 3.5, nominal: 1.0, fault: None };
    /// assert_eq!(tickstep_schedules::Lateness::of(&[r]).p99, 2.0);
    /// ```
    pub fn of(records: &[FiringRecord]) -> crate::Lateness {
        Self::of_seconds(records.iter().map(FiringRecord::lateness).collect())
    }
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
