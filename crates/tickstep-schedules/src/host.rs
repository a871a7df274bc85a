//! The two traits a host implements: a [`World`] that answers questions about objects and
//! principals, and a [`Runner`] that starts firings. The engine knows nothing else about the host.
//!
//! Both are called with no engine borrow held, so an implementation may call back into the engine
//! (open a transaction and create or stop schedules, report an earlier run's outcome).

use std::rc::Rc;

use crate::{ObjId, RunId, ScheduleId, Value};

/// The host's object model, asked at creation (permissions) and at firing time (is the target
/// still there, is the verb still callable).
///
/// ```
/// use tickstep_schedules::{ObjId, World};
/// struct Everyone;
/// impl World for Everyone {
///     fn valid(&self, _: ObjId) -> bool { true }
///     fn is_wizard(&self, who: ObjId) -> bool { who == ObjId(2) }
///     fn controls(&self, who: ObjId, obj: ObjId) -> bool { who == obj }
///     fn verb_callable(&self, _: ObjId, _: ObjId, verb: &str) -> bool { verb == "tick" }
/// }
/// assert!(Everyone.is_wizard(ObjId(2)));
/// assert!(!Everyone.is_anonymous(ObjId(2)));
/// ```
pub trait World {
    /// Whether `obj` exists (MOO `valid()`).
    ///
    /// ```
    /// use tickstep_schedules::{testkit::TestWorld, ObjId, World};
    /// let world = TestWorld::new();
    /// assert!(world.valid(world.add_programmer()));
    /// assert!(!world.valid(ObjId(-1)));
    /// ```
    fn valid(&self, obj: ObjId) -> bool;

    /// Whether principal `who` is a wizard.
    ///
    /// ```
    /// use tickstep_schedules::{testkit::TestWorld, World};
    /// let world = TestWorld::new();
    /// assert!(world.is_wizard(world.add_wizard()));
    /// assert!(!world.is_wizard(world.add_programmer()));
    /// ```
    fn is_wizard(&self, who: ObjId) -> bool;

    /// Whether `who` controls `obj`: is it, or owns it. (Wizards are handled by the engine.)
    ///
    /// ```
    /// use tickstep_schedules::{testkit::TestWorld, World};
    /// let world = TestWorld::new();
    /// let (a, b) = (world.add_programmer(), world.add_programmer());
    /// assert!(world.controls(a, world.add_object(a)));
    /// assert!(!world.controls(a, b));
    /// ```
    fn controls(&self, who: ObjId, obj: ObjId) -> bool;

    /// Whether `perms` may call `verb` on `target` now: found on the target or an ancestor and
    /// executable by `perms` — the check an ordinary method call makes.
    ///
    /// ```
    /// use tickstep_schedules::{testkit::TestWorld, World};
    /// let world = TestWorld::new();
    /// let p = world.add_programmer();
    /// world.add_verb(p, "look");
    /// assert!(world.verb_callable(p, p, "look"));
    /// assert!(!world.verb_callable(p, p, "dance"));
    /// ```
    fn verb_callable(&self, perms: ObjId, target: ObjId, verb: &str) -> bool;

    /// Whether `obj` is an anonymous object (one the host garbage-collects). Default: none are.
    ///
    /// ```
    /// use tickstep_schedules::{testkit::TestWorld, World};
    /// let world = TestWorld::new();
    /// let p = world.add_programmer();
    /// assert!(world.is_anonymous(world.add_anonymous(p)));
    /// assert!(!world.is_anonymous(p));
    /// ```
    fn is_anonymous(&self, obj: ObjId) -> bool {
        let _ = obj;
        false
    }
}

/// The one allow-everything world: every object exists, every principal is a wizard, everyone
/// controls everything and every verb is callable. It is the `tickstep` runtime's and the Bevy
/// plugin's default (each narrows "callable" to the verbs it has code for), and what tests and
/// benchmarks use to measure the engine with nothing of a host's.
///
/// ```
/// use tickstep_schedules::{ObjId, OpenWorld, World};
/// assert!(OpenWorld.valid(ObjId(42)) && OpenWorld.is_wizard(ObjId(1)));
/// assert!(OpenWorld.controls(ObjId(1), ObjId(2)));
/// assert!(OpenWorld.verb_callable(ObjId(1), ObjId(2), "anything"));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenWorld;

impl World for OpenWorld {
    fn valid(&self, _obj: ObjId) -> bool {
        true
    }
    fn is_wizard(&self, _who: ObjId) -> bool {
        true
    }
    fn controls(&self, _who: ObjId, _obj: ObjId) -> bool {
        true
    }
    fn verb_callable(&self, _perms: ObjId, _target: ObjId, _verb: &str) -> bool {
        true
    }
}

/// Starts firings. The outcome of each started run comes back later through
/// [`Schedules::report`](crate::Schedules::report) with the firing's [`RunId`]
/// ([`Firing::run`]).
///
/// Run ids are the engine's: it names each run before the start, writes the name with the update
/// that records the firing, and only then starts it, so after a crash the host gets every run
/// that may have started back by its id ([`interrupted`](crate::Schedules::interrupted)) and
/// reattaches the task it still has or abandons the run (docs/schedules.md §11.5). A host keeps
/// the run id with its task (a task's state, a map from run to task) to report the outcome.
/// A runner must not report a run's outcome from inside `start` (the engine records the run
/// only when `start` returns); queue it and report it afterwards.
///
/// ```
/// use std::cell::RefCell;
/// use tickstep_schedules::{Firing, Refused, RunId, Runner};
/// struct Log(RefCell<Vec<RunId>>);
/// impl Runner for Log {
///     fn start(&self, firing: &Firing) -> Result<(), Refused> {
///         self.0.borrow_mut().push(firing.run);
///         Ok(())
///     }
/// }
/// # let _ = Log(RefCell::new(Vec::new()));
/// ```
pub trait Runner {
    /// Starts `firing` as a fresh background task, run [`Firing::run`], or refuses (which
    /// counts as a fault).
    ///
    /// # Errors
    ///
    /// [`Refused`] when the host cannot start the task; the engine records a
    /// [`FaultKind::StartFailed`] fault with the reason.
    ///
    /// ```
    /// use std::rc::Rc;
    /// use tickstep_schedules::testkit::TestRunner;
    /// use tickstep_schedules::{Firing, ObjId, RunId, Runner, ScheduleId};
    /// let f = Firing { schedule: ScheduleId::from_raw(1), run: RunId(4), target: ObjId(1),
    ///     verb: Rc::from("v"), args: Rc::from(Vec::new()), state: None, elapsed: None,
    ///     player: ObjId(1), authority: ObjId(1), nominal_unix_nanos: 0, time_limit: None,
    ///     tick_limit: None };
    /// assert_eq!(TestRunner::new().start(&f), Ok(()));
    /// ```
    fn start(&self, firing: &Firing) -> Result<(), Refused>;

    /// Stops run `run`, which the engine has already settled as a fault of kind `killed`: a
    /// point of its schedule arrived under overlap `"cancel_other"` (docs/schedules.md §16.7).
    /// The host ends the task; an outcome it still reports for the run is ignored. Returns
    /// whether a task was stopped. The default stops nothing: the task runs on, detached from
    /// its schedule, and its outcome is ignored.
    ///
    /// ```
    /// use tickstep_schedules::testkit::TestRunner;
    /// use tickstep_schedules::{RunId, Runner};
    /// assert!(!TestRunner::new().cancel(RunId(7)), "nothing runs");
    /// ```
    fn cancel(&self, run: RunId) -> bool {
        let _ = run;
        false
    }

    /// Starts `firing` again: a point whose run was handed back as interrupted — started by a
    /// process that died, or by a node whose row this engine claimed (docs/schedules.md §11.5,
    /// §11.57) — and that the host chose to run once more with
    /// [`Schedules::rerun`](crate::Schedules::rerun). What the first run did may or may not have
    /// happened: the host's code checks before doing it again. The default starts it as any
    /// firing.
    ///
    /// # Errors
    ///
    /// [`Refused`] when the host cannot run it, as for [`Runner::start`]: the run settles as a
    /// fault of kind `start_failed`.
    ///
    /// ```
    /// # use std::rc::Rc;
    /// use tickstep_schedules::testkit::TestRunner;
    /// use tickstep_schedules::{Firing, ObjId, RunId, Runner, ScheduleId};
    /// # let f = Firing { schedule: ScheduleId::from_raw(1), run: RunId(4), target: ObjId(1),
    /// #     verb: Rc::from("v"), args: Rc::from(Vec::new()), state: None, elapsed: None,
    /// #     player: ObjId(1), authority: ObjId(1), nominal_unix_nanos: 0, time_limit: None,
    /// #     tick_limit: None };
    /// let runner = TestRunner::new();
    /// assert_eq!(runner.rerun(&f), Ok(()));
    /// assert_eq!(runner.started()[0].0, RunId(4));
    /// ```
    fn rerun(&self, firing: &Firing) -> Result<(), Refused> {
        self.start(firing)
    }
}

/// A runner's refusal to start a firing, with the host's reason.
///
/// ```
/// let r = tickstep_schedules::Refused("task queue full".into());
/// assert_eq!(r.to_string(), "runner refused: task queue full");
/// ```
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
#[error("runner refused: {0}")]
pub struct Refused(pub String);

/// One firing of a schedule, as handed to [`Runner::start`].
///
/// `args`, `state` and `verb` are shared with the schedule (reference-counted), so building a
/// firing allocates nothing; [`Firing::call_args`] builds the verb's full argument list when the
/// host needs one.
///
/// ```
/// use std::rc::Rc;
/// use tickstep_schedules::{Firing, ObjId, RunId, ScheduleId, Value};
/// let f = Firing {
///     schedule: ScheduleId::from_raw(1),
///     run: RunId(1),
///     target: ObjId(10),
///     verb: Rc::from("tick"),
///     args: Rc::from(vec![Value::Int(1)]),
///     state: Some(Rc::new(Value::from("key"))),
///     elapsed: Some(0.0),
///     player: ObjId(10),
///     authority: ObjId(3),
///     nominal_unix_nanos: 0,
///     time_limit: None,
///     tick_limit: std::num::NonZeroU64::new(30),
/// };
/// assert_eq!(f.call_args(), vec![Value::Int(1), Value::from("key"), Value::Float(0.0)]);
/// ```
#[derive(Clone, Debug)]
pub struct Firing {
    /// The schedule firing.
    pub schedule: ScheduleId,
    /// The run: the engine's name for this firing, on disk before it starts; the host reports
    /// the outcome with it (docs/schedules.md §11.5).
    pub run: RunId,
    /// The object whose verb is called (`this`).
    pub target: ObjId,
    /// The verb name.
    pub verb: Rc<str>,
    /// The schedule's arguments.
    pub args: Rc<[Value]>,
    /// The schedule's `state` option, appended after `args`.
    pub state: Option<Rc<Value>>,
    /// Real seconds since the previous firing started (0.0 the first time), appended last;
    /// `None` when `pass_elapsed` is off.
    pub elapsed: Option<f64>,
    /// `player` inside the verb.
    pub player: ObjId,
    /// The creator's permissions: `caller` and `caller_perms()` inside the verb.
    pub authority: ObjId,
    /// The cadence point (Unix nanoseconds) this firing serves.
    pub nominal_unix_nanos: u64,
    /// The schedule's `seconds` option: a wall-clock limit for the runner to enforce
    /// (docs/schedules.md §5.10); `None` for none.
    pub time_limit: Option<std::time::Duration>,
    /// The schedule's `ticks` option: a poll budget for the runner to enforce; `None` for none.
    /// Never 0: a schedule cannot be made with a budget of no polls. (Nonzero also keeps a
    /// `Firing` within 128 bytes, which the engine moves without a call to `memcpy`,
    /// docs/schedules.md §17.5.)
    pub tick_limit: Option<std::num::NonZeroU64>,
}

impl Firing {
    /// The verb's argument list: `args ++ [state] ++ [elapsed]`.
    ///
    /// ```
    /// # use std::rc::Rc;
    /// # use tickstep_schedules::{Firing, ObjId, RunId, ScheduleId, Value};
    /// # let f = Firing { schedule: ScheduleId::from_raw(1), run: RunId(1), target: ObjId(1), verb: Rc::from("v"),
    /// #   args: Rc::from(Vec::new()), state: None, elapsed: None, player: ObjId(1), authority: ObjId(1),
    /// #   nominal_unix_nanos: 0, time_limit: None, tick_limit: None };
    /// assert!(f.call_args().is_empty());
    /// ```
    pub fn call_args(&self) -> Vec<Value> {
        let mut out = Vec::with_capacity(self.args.len() + 2);
        out.extend(self.args.iter().cloned());
        if let Some(state) = &self.state {
            out.push(Value::clone(state));
        }
        if let Some(elapsed) = self.elapsed {
            out.push(Value::Float(elapsed));
        }
        out
    }
}

/// How a run ended, as the host reports it.
///
/// A conflict retry is not an outcome: the host reports one outcome per firing, after its last
/// attempt.
///
/// ```
/// use tickstep_schedules::{FaultKind, Outcome, Value};
/// let ok = Outcome::Returned(Value::Int(0));
/// let bad = Outcome::Fault { kind: FaultKind::Error, value: Value::from("E_DIV") };
/// # let _ = (ok, bad, Outcome::Killed);
/// ```
#[derive(Clone, PartialEq, Debug)]
pub enum Outcome {
    /// The verb returned this value.
    Returned(Value),
    /// The verb raised (or hit a limit); `value` is the error value.
    Fault {
        /// What kind of fault.
        kind: FaultKind,
        /// The error value.
        value: Value,
    },
    /// The task was killed (`kill_task`): a fault.
    Killed,
}

/// The kinds of fault a schedule counts.
///
/// ```
/// assert_eq!(tickstep_schedules::FaultKind::TickLimit.as_str(), "tick_limit");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum FaultKind {
    /// An uncaught error.
    Error,
    /// The tick limit was exhausted.
    TickLimit,
    /// The time limit was exhausted.
    TimeLimit,
    /// The task was killed.
    Killed,
    /// The firing could not start (verb no longer callable, runner refused).
    StartFailed,
    /// The firing was in flight when the server went down and the host abandoned it.
    Interrupted,
    /// The firing was in flight on another node whose lease ran out, and this node claimed the
    /// schedule (docs/schedules.md §11.39). Not counted toward `max_faults`.
    TakenOver,
    /// The next deadline would pass the end of 64-bit Unix nanoseconds.
    DeadlineOutOfRange,
}

impl FaultKind {
    /// The kind's name as `schedule_info()` reports it in `last_fault`.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::FaultKind::Interrupted.as_str(), "interrupted");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::Error => "error",
            FaultKind::TickLimit => "tick_limit",
            FaultKind::TimeLimit => "time_limit",
            FaultKind::Killed => "killed",
            FaultKind::StartFailed => "start_failed",
            FaultKind::Interrupted => "interrupted",
            FaultKind::TakenOver => "taken_over",
            FaultKind::DeadlineOutOfRange => "deadline_out_of_range",
        }
    }

    /// Parses [`FaultKind::as_str`]'s spelling.
    ///
    /// ```
    /// use tickstep_schedules::FaultKind;
    /// assert_eq!(FaultKind::parse("killed"), Some(FaultKind::Killed));
    /// assert_eq!(FaultKind::parse("oops"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Self> {
        [
            FaultKind::Error,
            FaultKind::TickLimit,
            FaultKind::TimeLimit,
            FaultKind::Killed,
            FaultKind::StartFailed,
            FaultKind::Interrupted,
            FaultKind::TakenOver,
            FaultKind::DeadlineOutOfRange,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// What a store calls, from its own thread, when it has left work for the engine's next tick:
/// rows it claimed from another node, schedules another node took over, operator stops
/// (docs/schedules.md §11.40). Register it with
/// [`Schedules::set_store_waker`](crate::Schedules::set_store_waker); it should only make the
/// host tick the engine soon (notify a task, wake a loop), never tick it itself.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicBool, Ordering};
/// let news = Arc::new(AtomicBool::new(false));
/// let flag = Arc::clone(&news);
/// let waker: tickstep_schedules::StoreWaker = Arc::new(move || flag.store(true, Ordering::Release));
/// waker();
/// assert!(news.load(Ordering::Acquire));
/// ```
pub type StoreWaker = std::sync::Arc<dyn Fn() + Send + Sync>;

/// A recorded fault: its kind and value (`last_fault` in `schedule_info()`).
///
/// ```
/// use tickstep_schedules::{Fault, FaultKind, Value};
/// let f = Fault { kind: FaultKind::Killed, value: Value::Int(0) };
/// assert_eq!(f.to_value(), Value::List(vec![Value::from("killed"), Value::Int(0)]));
/// ```
#[derive(Clone, PartialEq, Debug)]
pub struct Fault {
    /// What kind of fault.
    pub kind: FaultKind,
    /// The error value.
    pub value: Value,
}

impl Fault {
    /// `{kind, value}` as a list value.
    ///
    /// ```
    /// # use tickstep_schedules::{Fault, FaultKind, Value};
    /// let f = Fault { kind: FaultKind::Error, value: Value::from("E_DIV") };
    /// assert_eq!(f.to_value().to_string(), r#"{"error", "E_DIV"}"#);
    /// ```
    pub fn to_value(&self) -> Value {
        Value::List(vec![Value::from(self.kind.as_str()), self.value.clone()])
    }
}

/// A firing that was in flight when the store was last saved, handed back to the host on open.
///
/// The host either [reattaches](crate::Schedules::reattach) it (the restored task still counts as the
/// schedule's running firing, and its outcome is reported as usual) or
/// [abandons](crate::Schedules::abandon) it (a fault, "interrupted by restart").
///
/// ```
/// use tickstep_schedules::{InFlight, RunId, ScheduleId};
/// let f = InFlight { schedule: ScheduleId::from_raw(1), run: RunId(9), nominal_unix_nanos: 0 };
/// assert_eq!(f.run, RunId(9));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct InFlight {
    /// The schedule whose firing it was.
    pub schedule: ScheduleId,
    /// The host's run id.
    pub run: RunId,
    /// The cadence point it was serving.
    pub nominal_unix_nanos: u64,
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    /// The engine moves a `Firing` several times per firing (planned, deferred, started). Up to
    /// 128 bytes the compiler moves it inline; past that each move is a call to `memcpy`, which
    /// slowed every firing when `Firing::run` took it to 136 (docs/schedules.md §17.5).
    #[test]
    fn a_firing_fits_in_128_bytes() {
        assert!(
            size_of::<super::Firing>() <= 128,
            "Firing is {} bytes",
            size_of::<super::Firing>()
        );
    }
}
