//! Schedule options: a typed builder for Rust hosts, and [`Options::from_map`] for hosts that
//! expose `schedule_at`/`schedule_every` to a scripting language and receive a key/value map.
//!
//! Values are checked when the schedule is created, not when the builder is filled in, so every
//! bad option surfaces as `E_INVARG` at the call site with nothing created.

use std::time::Duration;

use crate::limits::{check_storable, preview, seconds_to_nanos};
use crate::{DstPolicy, Error, ObjId, Value};

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

/// What to do about cadence points that passed with nothing running to account for them
/// (the server was down, or the scheduler stalled past more than one point).
///
/// ```
/// use tickstep_schedules::Catchup;
/// assert_eq!(Catchup::default(), Catchup::Skip);
/// assert_eq!(Catchup::parse("all"), Some(Catchup::All));
/// assert_eq!(Catchup::Once.as_str(), "once");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Catchup {
    /// Drop every missed point; the next deadline is the first cadence point after now.
    #[default]
    Skip,
    /// One late firing now stands for all missed points; then the cadence resumes.
    Once,
    /// Fire each missed point in order, and the points that come due meanwhile, at most
    /// [`MAX_CATCHUP_FIRINGS`] per catch-up.
    All,
}

/// The most firings one catch-up under [`Catchup::All`] makes: of the missed points it keeps the
/// latest this many (older ones are dropped), and the points that come due while it fires them
/// join it up to the same bound in all (docs/schedules.md §4.5).
///
/// ```
/// assert_eq!(tickstep_schedules::MAX_CATCHUP_FIRINGS, 1000);
/// ```
pub const MAX_CATCHUP_FIRINGS: u64 = 1000;

impl Catchup {
    /// The option's spelling.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::Catchup::Skip.as_str(), "skip");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Catchup::Skip => "skip",
            Catchup::Once => "once",
            Catchup::All => "all",
        }
    }

    /// Parses the option's spelling.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::Catchup::parse("once"), Some(tickstep_schedules::Catchup::Once));
    /// assert_eq!(tickstep_schedules::Catchup::parse("Once"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "skip" => Some(Catchup::Skip),
            "once" => Some(Catchup::Once),
            "all" => Some(Catchup::All),
            _ => None,
        }
    }
}

/// What to do when a deadline arrives while the previous firing of the same schedule still runs.
///
/// ```
/// use tickstep_schedules::Overlap;
/// assert_eq!(Overlap::default(), Overlap::Skip);
/// assert_eq!(Overlap::parse("queue"), Some(Overlap::Queue));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Overlap {
    /// Drop the deadline (counted in `overlap_count`); the cadence stays in phase.
    #[default]
    Skip,
    /// At most one deadline waits and starts when the running firing ends; further ones are
    /// dropped and counted.
    Queue,
    /// Every deadline starts a firing; `running_task` reports the oldest.
    Concurrent,
    /// The deadline kills the running firing (a fault of kind `killed` naming why) and starts
    /// (docs/schedules.md §16.7).
    CancelOther,
}

impl Overlap {
    /// The option's spelling.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::Overlap::Concurrent.as_str(), "concurrent");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Overlap::Skip => "skip",
            Overlap::Queue => "queue",
            Overlap::Concurrent => "concurrent",
            Overlap::CancelOther => "cancel_other",
        }
    }

    /// Parses the option's spelling.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::Overlap::parse("skip"), Some(tickstep_schedules::Overlap::Skip));
    /// assert_eq!(tickstep_schedules::Overlap::parse("parallel"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "skip" => Some(Overlap::Skip),
            "queue" => Some(Overlap::Queue),
            "concurrent" => Some(Overlap::Concurrent),
            "cancel_other" => Some(Overlap::CancelOther),
            _ => None,
        }
    }
}

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

    /// Parses a scripting language's option map: keys are strings or symbols from
    /// [`OPTION_KEYS`]; flags take integers or booleans; `catchup`/`overlap` take a string or
    /// symbol; `jitter` an integer or float; `max_faults` a non-negative integer; `player` an
    /// object; `state` anything.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArg`] naming the key for an unknown key, a key that is not a string or
    /// symbol, a value of the wrong type, or a policy spelled wrongly; also when `options` is not
    /// a map.
    ///
    /// ```
    /// use tickstep_schedules::{Options, Value};
    /// let typo = Value::Map(vec![(Value::from("persit"), Value::Int(0))]);
    /// let err = Options::from_map(&typo).unwrap_err();
    /// assert_eq!(err.code(), "E_INVARG");
    /// assert!(err.to_string().contains("persit"));
    /// ```
    pub fn from_map(options: &Value) -> Result<Self, Error> {
        let Value::Map(pairs) = options else {
            return Err(Error::invalid(
                preview(options),
                "schedule options must be a map",
            ));
        };
        let mut out = Options::default();
        for (key, value) in pairs {
            let Some(name) = key.as_text() else {
                return Err(Error::invalid(
                    preview(key),
                    "schedule option keys must be strings or symbols",
                ));
            };
            let wrong = |expected: &str| {
                Error::invalid(
                    preview(value),
                    format!("schedule option \"{name}\" must be {expected}"),
                )
            };
            match name {
                "adaptive" => out.adaptive = Some(value.as_flag().ok_or_else(|| wrong("a flag"))?),
                "pass_elapsed" => {
                    out.pass_elapsed = value.as_flag().ok_or_else(|| wrong("a flag"))?;
                }
                "persist" => out.persist = value.as_flag().ok_or_else(|| wrong("a flag"))?,
                "catchup" => {
                    out.catchup = value
                        .as_text()
                        .and_then(Catchup::parse)
                        .ok_or_else(|| wrong("\"skip\", \"once\" or \"all\""))?;
                }
                "overlap" => {
                    out.overlap = value.as_text().and_then(Overlap::parse).ok_or_else(|| {
                        wrong("\"skip\", \"queue\", \"concurrent\" or \"cancel_other\"")
                    })?;
                }
                "jitter" => {
                    out.jitter_seconds = match *value {
                        Value::Int(i) => i as f64,
                        Value::Float(f) => f,
                        _ => return Err(wrong("a number of seconds >= 0")),
                    };
                }
                "max_faults" => {
                    out.max_faults = match *value {
                        Value::Int(i) => u32::try_from(i)
                            .map_err(|_| wrong("an integer from 0 to 4294967295"))?,
                        _ => return Err(wrong("an integer from 0 to 4294967295")),
                    };
                }
                "seconds" => out.time_limit = Some(crate::firing_limits::parse_seconds(value)?),
                "ticks" => out.tick_limit = Some(crate::firing_limits::parse_ticks(value)?),
                "key" => {
                    out.key = Some(value.as_text().ok_or_else(|| wrong("a string"))?.to_owned());
                }
                "dst_gap" => {
                    out.dst.gap = parse_policy_word(value, name)?;
                }
                "dst_fold" => {
                    out.dst.fold = parse_policy_word(value, name)?;
                }
                "catchup_window" => {
                    out.catchup_window = Some(crate::policies::parse_catchup_window(value)?);
                }
                "remaining_runs" => {
                    out.remaining_runs = Some(crate::policies::parse_remaining_runs(value)?);
                }
                "on_max_faults" => {
                    out.on_max_faults = crate::policies::parse_on_max_faults(value)?;
                }
                "state" => out.state = Some(value.clone()),
                "player" => match *value {
                    Value::Obj(o) => out.player = Some(o),
                    _ => return Err(wrong("an object")),
                },
                _ => {
                    return Err(Error::invalid(
                        preview(key),
                        format!(
                            "unknown schedule option (known: {})",
                            OPTION_KEYS.join(", ")
                        ),
                    ));
                }
            }
        }
        Ok(out)
    }

    /// Checks the values the builder could not and resolves defaults that depend on the kind.
    pub(crate) fn resolve(&self, every: bool) -> Result<Resolved, Error> {
        let jitter = self.jitter_seconds;
        if !jitter.is_finite() || jitter < 0.0 {
            return Err(Error::invalid(
                Value::Float(jitter),
                "jitter must be a finite number of seconds >= 0",
            ));
        }
        let jitter_ns = seconds_to_nanos(jitter).ok_or_else(|| {
            Error::invalid(
                Value::Float(jitter),
                "jitter must fit in 64-bit nanoseconds (at most 18446744073 seconds)",
            )
        })?;
        if let Some(state) = &self.state {
            check_storable(state, "state")?;
            let size = serde_json::to_vec(state).map_or(usize::MAX, |b| b.len());
            if size > MAX_STATE_BYTES {
                return Err(Error::invalid(
                    crate::limits::preview(state),
                    format!(
                        "state must be at most {MAX_STATE_BYTES} bytes serialised (got {size})"
                    ),
                ));
            }
        }
        let (time_limit_ns, tick_limit) =
            crate::firing_limits::resolve(self.time_limit, self.tick_limit)?;
        let policies =
            crate::policies::resolve(self.catchup_window, self.remaining_runs, self.on_max_faults)?;
        Ok(Resolved {
            adaptive: self.adaptive.unwrap_or(!every),
            jitter_ns,
            time_limit_ns,
            tick_limit,
            policies,
        })
    }
}

/// Option values that needed checking or a kind-dependent default.
pub(crate) struct Resolved {
    pub(crate) adaptive: bool,
    pub(crate) jitter_ns: u64,
    /// The `seconds` limit in nanoseconds (at least 1), if set.
    pub(crate) time_limit_ns: Option<u64>,
    /// The `ticks` limit (at least 1), if set.
    pub(crate) tick_limit: Option<u64>,
    /// The policies of docs/schedules.md §16, checked.
    pub(crate) policies: crate::policies::Policies,
}

/// The schedule's key (docs/schedules.md §5.12–§5.18); checked and looked up in `key_rules.rs` and the
/// engine's key index.
impl Options {
    /// Names the schedule: a key unique among its owner's live schedules. A creation whose key
    /// already names the same schedule returns that schedule's id and creates nothing
    /// ([`Txn::is_new`](crate::Txn::is_new) tells the two apart); one whose key names a different
    /// schedule is [`Error::KeyTaken`]. Checked at creation: 1 to [`MAX_KEY_LEN`](crate::MAX_KEY_LEN)
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

/// A DST policy word (`dst_gap`, `dst_fold`; docs/schedules.md §14.9): a string or symbol the
/// calendar's parser accepts, else `E_INVARG` naming the key, the value and the words allowed.
fn parse_policy_word<P>(value: &Value, key: &str) -> Result<P, Error>
where
    P: std::str::FromStr<Err = crate::CalendarError>,
{
    let word = value.as_text().ok_or_else(|| {
        Error::invalid(
            preview(value),
            format!("schedule option \"{key}\" must be a string (docs/schedules.md §14.9)"),
        )
    })?;
    word.parse().map_err(|e: crate::CalendarError| {
        Error::invalid(
            preview(value),
            format!("schedule option \"{key}\": {e} (docs/schedules.md §14.9)"),
        )
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: Vec<(&str, Value)>) -> Value {
        Value::Map(
            pairs
                .into_iter()
                .map(|(k, v)| (Value::from(k), v))
                .collect(),
        )
    }

    #[test]
    fn option_unknown_key_is_invarg_naming_the_key() {
        let err = Options::from_map(&map(vec![("jiter", Value::Int(1))])).unwrap_err();
        assert!(matches!(err, Error::InvalidArg { ref value, .. } if value == "\"jiter\""));
    }

    #[test]
    fn option_keys_may_be_strings_or_symbols() {
        let m = Value::Map(vec![(Value::Symbol("persist".into()), Value::Int(0))]);
        assert!(!Options::from_map(&m).unwrap().persist);
    }

    #[test]
    fn option_key_that_is_not_text_is_invarg() {
        let m = Value::Map(vec![(Value::Int(1), Value::Int(0))]);
        assert_eq!(Options::from_map(&m).unwrap_err().code(), "E_INVARG");
    }

    #[test]
    fn option_wrong_value_type_is_invarg() {
        for (k, v) in [
            ("adaptive", Value::from("yes")),
            ("catchup", Value::Int(1)),
            ("catchup", Value::from("sometimes")),
            ("overlap", Value::from("parallel")),
            ("jitter", Value::from("1")),
            ("max_faults", Value::Int(-1)),
            ("max_faults", Value::Float(2.0)),
            ("player", Value::Int(3)),
            ("persist", Value::List(vec![])),
        ] {
            let err = Options::from_map(&map(vec![(k, v.clone())])).unwrap_err();
            assert_eq!(err.code(), "E_INVARG", "{k} -> {v}");
            assert!(err.to_string().contains(k), "{err}");
        }
    }

    #[test]
    fn options_that_are_not_a_map_are_invarg() {
        assert_eq!(
            Options::from_map(&Value::Int(0)).unwrap_err().code(),
            "E_INVARG"
        );
    }

    #[test]
    fn dst_policy_words_are_checked_and_named() {
        // docs/schedules.md §14.9: the calendar's words, the calendar's defaults.
        let o = Options::from_map(&map(vec![
            ("dst_gap", Value::from("skip")),
            ("dst_fold", Value::from("last")),
        ]))
        .unwrap();
        assert_eq!(o.dst().gap, crate::GapPolicy::Skip);
        assert_eq!(o.dst().fold, crate::FoldPolicy::Last);
        for (key, value) in [
            ("dst_gap", Value::from("later")),
            ("dst_fold", Value::from("twice")),
            ("dst_fold", Value::from("First")),
            ("dst_gap", Value::Int(1)),
        ] {
            let err = Options::from_map(&map(vec![(key, value.clone())])).unwrap_err();
            assert_eq!(err.code(), "E_INVARG");
            let text = err.to_string();
            assert!(text.contains(key), "{text}");
            assert!(text.contains("docs/schedules.md §14.9"), "{text}");
            if let Some(word) = value.as_text() {
                assert!(text.contains(word), "{text}");
            }
        }
    }

    #[test]
    fn adaptive_defaults_on_for_at_and_off_for_every() {
        assert!(Options::new().resolve(false).unwrap().adaptive);
        assert!(!Options::new().resolve(true).unwrap().adaptive);
    }

    #[test]
    fn negative_or_nan_jitter_is_invarg() {
        for j in [-0.5, f64::NAN, f64::INFINITY, 1e30] {
            assert_eq!(
                Options::new()
                    .jitter_seconds(j)
                    .resolve(true)
                    .err()
                    .unwrap()
                    .code(),
                "E_INVARG"
            );
        }
    }

    #[test]
    fn state_larger_than_4kb_serialised_is_invarg() {
        let big = Value::Str("x".repeat(MAX_STATE_BYTES));
        let err = Options::new().state(big).resolve(true).err().unwrap();
        assert!(err.to_string().contains("4096"), "{err}");
        let fits = Value::Str("x".repeat(MAX_STATE_BYTES - 20));
        assert!(Options::new().state(fits).resolve(true).is_ok());
    }
}
