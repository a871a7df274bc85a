//! Schedule options: a typed builder for Rust hosts, and [`Options::from_map`] for hosts that
//! expose `schedule_at`/`schedule_every` to a scripting language and receive a key/value map.
//!
//! Values are checked when the schedule is created, not when the builder is filled in, so every
//! bad option surfaces as `E_INVARG` at the call site with nothing created.
//!
//! * `catchup_overlap.rs` — the [`Catchup`] and [`Overlap`] policies (docs/schedules.md §4);
//! * `option_map.rs` — [`Options::from_map`], and the checks made at creation.

use std::time::Duration;

use crate::{DstPolicy, ObjId, Value};

mod catchup_overlap;
mod option_map;
pub use catchup_overlap::{Catchup, MAX_CATCHUP_FIRINGS, Overlap};
pub(crate) use option_map::Resolved;

/// Largest serialised `state`, in bytes (4 KB, docs/schedules.md §5.7).
///
/// ```
/// assert_eq!(tickstep_schedules::MAX_STATE_BYTES, 4096);
/// ```
pub const MAX_STATE_BYTES: usize = 4096;

/// Default consecutive-fault limit before a schedule retires with `max_faults`.
///
/// ```
/// assert_eq!(tickstep_schedules::DEFAULT_MAX_FAULTS, 50);
/// ```
pub const DEFAULT_MAX_FAULTS: u32 = 50;

/// Options for a new schedule (the optional fifth argument, docs/schedules.md §5).
///
/// Every field has the default of docs/schedules.md §5; set only what differs.
///
/// ```
/// use tickstep_schedules::{Catchup, ObjId, Options, Overlap, Value};
/// let opts = Options::new()
///     .catchup(Catchup::Once)
///     .overlap(Overlap::Queue)
///     .jitter_seconds(2.0)
///     .max_faults(0)
///     .pass_elapsed(false)
///     .state(Value::Int(7))
///     .persist(false)
///     .player(ObjId(5))
///     .adaptive(true);
/// assert_eq!(opts, Options::from_map(&Value::Map(vec![
///     (Value::from("catchup"), Value::from("once")),
///     (Value::Symbol("overlap".into()), Value::Symbol("queue".into())),
///     (Value::from("jitter"), Value::Int(2)),
///     (Value::from("max_faults"), Value::Int(0)),
///     (Value::from("pass_elapsed"), Value::Int(0)),
///     (Value::from("state"), Value::Int(7)),
///     (Value::from("persist"), Value::Bool(false)),
///     (Value::from("player"), Value::Obj(ObjId(5))),
///     (Value::from("adaptive"), Value::Int(1)),
/// ])).unwrap());
/// ```
#[derive(Clone, PartialEq, Debug)]
pub struct Options {
    pub(crate) adaptive: Option<bool>,
    pub(crate) catchup: Catchup,
    pub(crate) overlap: Overlap,
    pub(crate) jitter_seconds: f64,
    pub(crate) max_faults: u32,
    pub(crate) pass_elapsed: bool,
    pub(crate) state: Option<Value>,
    pub(crate) persist: bool,
    pub(crate) player: Option<ObjId>,
    pub(crate) time_limit: Option<Duration>,
    pub(crate) tick_limit: Option<u64>,
    /// The schedule's key (docs/schedules.md §5.12), checked at creation.
    pub(crate) key: Option<String>,
    /// What a calendar schedule does in a DST gap or fold (docs/schedules.md §14.9).
    pub(crate) dst: DstPolicy,
    /// The `catchup_window` (docs/schedules.md §16.1), checked at creation.
    pub(crate) catchup_window: Option<Duration>,
    /// The `remaining_runs` (docs/schedules.md §16.5), checked at creation.
    pub(crate) remaining_runs: Option<u64>,
    /// What reaching `max_faults` does (docs/schedules.md §16.6).
    pub(crate) on_max_faults: crate::OnMaxFaults,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            adaptive: None,
            catchup: Catchup::Skip,
            overlap: Overlap::Skip,
            jitter_seconds: 0.0,
            max_faults: DEFAULT_MAX_FAULTS,
            pass_elapsed: true,
            state: None,
            persist: true,
            player: None,
            time_limit: None,
            tick_limit: None,
            key: None,
            dst: DstPolicy::default(),
            catchup_window: None,
            remaining_runs: None,
            on_max_faults: crate::OnMaxFaults::Retire,
        }
    }
}

/// The option keys [`Options::from_map`] accepts.
///
/// ```
/// assert!(tickstep_schedules::OPTION_KEYS.contains(&"pass_elapsed"));
/// ```
pub const OPTION_KEYS: [&str; 17] = [
    "adaptive",
    "catchup",
    "overlap",
    "jitter",
    "max_faults",
    "pass_elapsed",
    "state",
    "persist",
    "player",
    "seconds",
    "ticks",
    "key",
    "dst_gap",
    "dst_fold",
    "catchup_window",
    "remaining_runs",
    "on_max_faults",
];

impl Options {
    /// The defaults of docs/schedules.md §5.
    ///
    /// ```
    /// let o = tickstep_schedules::Options::new();
    /// assert_eq!(o, tickstep_schedules::Options::default());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the fired verb's return value sets the next delay (default: on for
    /// `schedule_at`, off for `schedule_every`).
    ///
    /// ```
    /// let o = tickstep_schedules::Options::new().adaptive(false);
    /// # let _ = o;
    /// ```
    #[must_use]
    pub fn adaptive(mut self, on: bool) -> Self {
        self.adaptive = Some(on);
        self
    }

    /// The catch-up policy (default [`Catchup::Skip`]).
    ///
    /// ```
    /// let o = tickstep_schedules::Options::new().catchup(tickstep_schedules::Catchup::All);
    /// # let _ = o;
    /// ```
    #[must_use]
    pub fn catchup(mut self, policy: Catchup) -> Self {
        self.catchup = policy;
        self
    }

    /// The overlap policy (default [`Overlap::Skip`]).
    ///
    /// ```
    /// let o = tickstep_schedules::Options::new().overlap(tickstep_schedules::Overlap::Concurrent);
    /// # let _ = o;
    /// ```
    #[must_use]
    pub fn overlap(mut self, policy: Overlap) -> Self {
        self.overlap = policy;
        self
    }

    /// Jitter in seconds: each deadline moves by a uniform random amount in `[-j, +j]`, never to
    /// earlier than one tick from now. Checked at creation: finite and `>= 0`.
    ///
    /// ```
    /// let o = tickstep_schedules::Options::new().jitter_seconds(0.25);
    /// # let _ = o;
    /// ```
    #[must_use]
    pub fn jitter_seconds(mut self, seconds: f64) -> Self {
        self.jitter_seconds = seconds;
        self
    }

    /// Consecutive faults before retiring with `max_faults` (default 50; 0 = unlimited).
    ///
    /// ```
    /// let o = tickstep_schedules::Options::new().max_faults(3);
    /// # let _ = o;
    /// ```
    #[must_use]
    pub fn max_faults(mut self, limit: u32) -> Self {
        self.max_faults = limit;
        self
    }

    /// Whether to append the real seconds since the previous firing (default on).
    ///
    /// ```
    /// let o = tickstep_schedules::Options::new().pass_elapsed(false);
    /// # let _ = o;
    /// ```
    #[must_use]
    pub fn pass_elapsed(mut self, on: bool) -> Self {
        self.pass_elapsed = on;
        self
    }

    /// A constant value appended to the arguments of every firing (before elapsed). At most
    /// [`MAX_STATE_BYTES`] serialised, checked at creation.
    ///
    /// ```
    /// let o = tickstep_schedules::Options::new().state(tickstep_schedules::Value::from("cursor"));
    /// # let _ = o;
    /// ```
    #[must_use]
    pub fn state(mut self, state: Value) -> Self {
        self.state = Some(state);
        self
    }

    /// Whether the schedule is saved and restored across restarts (default on).
    ///
    /// ```
    /// let o = tickstep_schedules::Options::new().persist(false);
    /// # let _ = o;
    /// ```
    #[must_use]
    pub fn persist(mut self, on: bool) -> Self {
        self.persist = on;
        self
    }

    /// The `player` of the fired verb (default: the target). The creator must control it.
    ///
    /// ```
    /// let o = tickstep_schedules::Options::new().player(tickstep_schedules::ObjId(2));
    /// # let _ = o;
    /// ```
    #[must_use]
    pub fn player(mut self, player: ObjId) -> Self {
        self.player = Some(player);
        self
    }
}

/// The schedule's key (docs/schedules.md §5.12–§5.18); checked and looked up in `schedule_keys.rs` and the
/// engine's key index.
impl Options {
    /// Names the schedule: a key unique among its owner's live schedules. A creation whose key
    /// already names the same schedule returns that schedule's id and creates nothing
    /// ([`Txn::is_new`](crate::Txn::is_new) tells the two apart); one whose key names a different
    /// schedule is [`Error::KeyTaken`](crate::Error::KeyTaken). Checked at creation: 1 to [`MAX_KEY_LEN`](crate::MAX_KEY_LEN)
    /// characters from `A-Z a-z 0-9 _ - . :`, else `E_INVARG`.
    ///
    /// ```
    /// use tickstep_schedules::{Options, Value};
    /// let o = Options::new().key("heartbeat");
    /// assert_eq!(o.key_name(), Some("heartbeat"));
    /// assert_eq!(o, Options::from_map(&Value::Map(vec![(Value::from("key"), Value::from("heartbeat"))])).unwrap());
    /// ```
    #[must_use]
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The key set with [`Options::key`], if any.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::Options::new().key_name(), None);
    /// ```
    pub fn key_name(&self) -> Option<&str> {
        self.key.as_deref()
    }
}

/// The DST policy of a calendar schedule (docs/schedules.md §14.9).
impl Options {
    /// What a calendar schedule does with a wall time in a DST gap or fold (the `dst_gap` and
    /// `dst_fold` keys). The default is the calendar's, `shift` and `first` (docs/schedules.md §13.45). Schedules
    /// that are not calendars ignore it.
    ///
    /// ```
    /// use tickstep_schedules::{DstPolicy, FoldPolicy, GapPolicy, Options, Value};
    /// let policy = DstPolicy { gap: GapPolicy::Skip, fold: FoldPolicy::Both };
    /// let o = Options::new().dst_policy(policy);
    /// assert_eq!(o.dst(), policy);
    /// assert_eq!(o, Options::from_map(&Value::Map(vec![
    ///     (Value::from("dst_gap"), Value::from("skip")),
    ///     (Value::from("dst_fold"), Value::Symbol("both".into())),
    /// ])).unwrap());
    /// assert_eq!(Options::new().dst(), DstPolicy::default());
    /// ```
    #[must_use]
    pub fn dst_policy(mut self, policy: DstPolicy) -> Self {
        self.dst = policy;
        self
    }

    /// The DST policy set (or the default).
    ///
    /// ```
    /// use tickstep_schedules::{DstPolicy, Options};
    /// assert_eq!(Options::new().dst(), DstPolicy::default());
    /// ```
    pub fn dst(&self) -> DstPolicy {
        self.dst
    }
}

/// The policies of docs/schedules.md §16; parsed and checked in `policies.rs`.
impl Options {
    /// The catch-up window (the `catchup_window` key, seconds): cadence points older than this
    /// when the engine sees them — after downtime, a stall or a pause — are counted missed, not
    /// fired; the points inside it follow the catch-up policy (docs/schedules.md §16.1). Checked
    /// at creation: more than zero and at most `u64::MAX` nanoseconds, else `E_INVARG`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_schedules::{Options, Value};
    /// let o = Options::new().catchup_window(Duration::from_secs(300));
    /// assert_eq!(o, Options::from_map(&Value::Map(vec![
    ///     (Value::from("catchup_window"), Value::Int(300)),
    /// ])).unwrap());
    /// ```
    #[must_use]
    pub fn catchup_window(mut self, window: Duration) -> Self {
        self.catchup_window = Some(window);
        self
    }

    /// Limited runs (the `remaining_runs` key): the schedule fires this many more times — every
    /// firing counts, a trigger or a backfill included — and retires with `remaining_runs` once
    /// the last has settled (docs/schedules.md §16.5). Checked at creation: at least 1, else
    /// `E_INVARG`.
    ///
    /// ```
    /// use tickstep_schedules::{Options, Value};
    /// let o = Options::new().remaining_runs(3);
    /// assert_eq!(o, Options::from_map(&Value::Map(vec![
    ///     (Value::from("remaining_runs"), Value::Int(3)),
    /// ])).unwrap());
    /// ```
    #[must_use]
    pub fn remaining_runs(mut self, runs: u64) -> Self {
        self.remaining_runs = Some(runs);
        self
    }

    /// What reaching `max_faults` consecutive faults does (the `on_max_faults` key, `"retire"`
    /// or `"pause"`): [`OnMaxFaults::Retire`](crate::OnMaxFaults::Retire), the default, retires
    /// with `max_faults`; [`OnMaxFaults::Pause`](crate::OnMaxFaults::Pause) pauses a recurring
    /// schedule with a note naming the fault, for an operator to resume (docs/schedules.md
    /// §16.6).
    ///
    /// ```
    /// use tickstep_schedules::{OnMaxFaults, Options, Value};
    /// let o = Options::new().max_faults(3).on_max_faults(OnMaxFaults::Pause);
    /// assert_eq!(o, Options::from_map(&Value::Map(vec![
    ///     (Value::from("max_faults"), Value::Int(3)),
    ///     (Value::from("on_max_faults"), Value::from("pause")),
    /// ])).unwrap());
    /// ```
    #[must_use]
    pub fn on_max_faults(mut self, policy: crate::OnMaxFaults) -> Self {
        self.on_max_faults = policy;
        self
    }
}

/// The per-firing limits (docs/schedules.md §5.10); parsed and checked in `firing_limits.rs`.
impl Options {
    /// A wall-clock limit on each firing (the `seconds` key). Checked at creation: more than
    /// zero and at most `u64::MAX` nanoseconds (about 584 years), else `E_INVARG`.
    ///
    /// ```
    /// use std::time::Duration;
    /// let o = tickstep_schedules::Options::new().time_limit(Duration::from_secs(5));
    /// assert_eq!(o.firing_limits(), (Some(Duration::from_secs(5)), None));
    /// ```
    #[must_use]
    pub fn time_limit(mut self, limit: Duration) -> Self {
        self.time_limit = Some(limit);
        self
    }

    /// A poll budget for each firing of an async verb (the `ticks` key). Checked at creation: at
    /// least 1, else `E_INVARG`.
    ///
    /// ```
    /// let o = tickstep_schedules::Options::new().tick_limit(30);
    /// assert_eq!(o.firing_limits(), (None, Some(30)));
    /// ```
    #[must_use]
    pub fn tick_limit(mut self, polls: u64) -> Self {
        self.tick_limit = Some(polls);
        self
    }

    /// The per-firing limits set: `(seconds, ticks)`, `None` for no limit.
    ///
    /// ```
    /// use tickstep_schedules::{Options, Value};
    /// let o = Options::from_map(&Value::Map(vec![
    ///     (Value::from("seconds"), Value::Float(2.5)),
    ///     (Value::from("ticks"), Value::Int(10)),
    /// ])).unwrap();
    /// assert_eq!(o.firing_limits(), (Some(std::time::Duration::from_millis(2500)), Some(10)));
    /// ```
    pub fn firing_limits(&self) -> (Option<Duration>, Option<u64>) {
        (self.time_limit, self.tick_limit)
    }
}
