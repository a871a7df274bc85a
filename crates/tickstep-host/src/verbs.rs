//! Verbs: the code a durable schedule calls, registered with a host by name (docs/runtime.md §4).
//!
//! The schedule engine only knows `(target, verb, args)`; the host core keeps the table that maps
//! a verb name to Rust code, for the `Runtime` and the Bevy plugin alike. A sync verb runs as one kernel task; an async verb (one that waits for
//! a command to finish or for time to pass) runs as an async kernel task, polled under the same
//! budget. Either way the verb's outcome — its returned value, its error value, or its panic — is
//! reported to the engine by run id, so each firing is isolated and counted.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use std::time::Duration;

use tickstep_kernel::FrameScheduler;
use tickstep_schedules::{
    FaultKind, Firing, ObjId, Outcome, RunId, ScheduleId, Schedules, Value, World,
};

/// What a host hands every verb besides the firing (the Bevy plugin's `WorldQueue`): one `Rc`
/// clone per firing, read back by type with [`VerbCall::host_context`].
pub(crate) type HostContext = Option<Rc<dyn Any>>;

use tickstep_kernel::{Sleep, Timeout, WaitUntil};

/// What a verb returns: `Ok(value)` (an adaptive schedule reads a positive number as its next
/// delay in seconds) or `Err(error value)`, which the schedule counts as a fault.
///
/// ```
/// use tickstep_host::VerbResult;
/// use tickstep_host::schedules::Value;
/// fn lockup(customers: u32) -> VerbResult {
///     if customers > 0 { Ok(Value::Int(30)) } else { Ok(Value::Int(0)) } // check again in 30 s
/// }
/// fn refuse() -> VerbResult { Err(Value::from("E_PERM")) }
/// assert_eq!(lockup(2), Ok(Value::Int(30)));
/// assert!(refuse().is_err());
/// ```
pub type VerbResult = Result<Value, Value>;

/// The boxed future an async verb returns.
pub(crate) type VerbFuture = Pin<Box<dyn Future<Output = VerbResult>>>;

/// A registered verb.
#[derive(Clone)]
pub(crate) enum Verb {
    Sync(Rc<dyn Fn(&VerbCall) -> VerbResult>),
    Async(Rc<dyn Fn(VerbCall) -> VerbFuture>),
}

/// Verb name → code. Shared by the runtime (which registers) and its runner (which looks up).
#[derive(Default)]
pub(crate) struct VerbTable {
    verbs: RefCell<HashMap<Rc<str>, Verb>>,
}

impl VerbTable {
    pub(crate) fn insert(&self, name: &str, verb: Verb) {
        self.verbs.borrow_mut().insert(Rc::from(name), verb);
    }

    pub(crate) fn get(&self, name: &str) -> Option<Verb> {
        self.verbs.borrow().get(name).cloned()
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.verbs.borrow().contains_key(name)
    }

    /// Drops every verb (and whatever its closure captured) at shutdown.
    pub(crate) fn clear(&self) {
        let drained: Vec<Verb> = self.verbs.borrow_mut().drain().map(|(_, v)| v).collect();
        drop(drained); // dropped with no borrow held: a closure's drop may touch the runtime
    }
}

/// One firing of a schedule, as a verb sees it.
///
/// ```
/// use tickstep_host::{HostCore, HostSettings, VerbCall};
/// use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
/// use tickstep_host::schedules::Value;
///
/// let clock = ManualClock::new();
/// let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
/// let core = HostCore::new(clock, kernel, &HostSettings::default(), None);
/// core.verb("greet", |call: &VerbCall| {
///     // args ++ [elapsed]: ["hi", 0.0] on the first firing
///     assert_eq!(call.args()[0], Value::from("hi"));
///     assert_eq!(call.elapsed(), 0.0);
///     Ok(Value::Int(0))
/// });
/// ```
#[derive(Clone)]
pub struct VerbCall {
    firing: Firing,
    rerun: bool,
    run: RunId,
    engine: Schedules,
    kernel: FrameScheduler,
    context: HostContext,
}

impl VerbCall {
    /// The firing as the engine handed it out (schedule id, target, verb, args, state, elapsed,
    /// player, authority, nominal deadline).
    ///
    /// ```
    /// fn log(call: &tickstep_host::VerbCall) -> String {
    ///     format!("{}:{}", call.firing().target, call.firing().verb)
    /// }
    /// ```
    pub fn firing(&self) -> &Firing {
        &self.firing
    }

    /// The schedule firing.
    ///
    /// ```
    /// fn id(call: &tickstep_host::VerbCall) -> u64 { call.schedule().get() }
    /// ```
    pub fn schedule(&self) -> ScheduleId {
        self.firing.schedule
    }

    /// Whether this run serves a point that was started before, by a process that died or a
    /// node whose schedules this one took over, and is run again because the host turned on
    /// `rerun_interrupted` (docs/runtime.md §6.7). What the earlier run did may or may not have
    /// happened: a verb that has effects outside the engine checks them first.
    ///
    /// ```
    /// fn append_once(call: &tickstep_host::VerbCall, already_done: impl Fn() -> bool) -> bool {
    ///     // Run the effect unless an earlier run of this point already made it.
    ///     !(call.is_rerun() && already_done())
    /// }
    /// ```
    pub fn is_rerun(&self) -> bool {
        self.rerun
    }

    /// This firing's run id (what the engine's `running_task` reports).
    ///
    /// ```
    /// fn run(call: &tickstep_host::VerbCall) -> u64 { call.run().0 }
    /// ```
    pub fn run(&self) -> RunId {
        self.run
    }

    /// `this`: the object whose verb is called.
    ///
    /// ```
    /// fn this(call: &tickstep_host::VerbCall) -> i64 { call.target().0 }
    /// ```
    pub fn target(&self) -> ObjId {
        self.firing.target
    }

    /// The verb's full argument list: `args ++ [state] ++ [elapsed]`.
    ///
    /// ```
    /// fn first(call: &tickstep_host::VerbCall) -> Option<tickstep_host::schedules::Value> {
    ///     call.args().into_iter().next()
    /// }
    /// ```
    pub fn args(&self) -> Vec<Value> {
        self.firing.call_args()
    }

    /// Real seconds since the schedule's previous firing (0.0 the first time, and when
    /// `pass_elapsed` is off). Integrate over this, not over the nominal interval.
    ///
    /// ```
    /// fn regen(call: &tickstep_host::VerbCall, per_second: f64) -> f64 { per_second * call.elapsed() }
    /// ```
    pub fn elapsed(&self) -> f64 {
        self.firing.elapsed.unwrap_or(0.0)
    }

    /// The schedule engine, so a verb may create or stop schedules (a debounce re-arming itself,
    /// a driver starting the next one). No engine borrow is held while a verb runs.
    ///
    /// ```
    /// fn live(call: &tickstep_host::VerbCall) -> usize { call.schedules().live_count() }
    /// ```
    pub fn schedules(&self) -> &Schedules {
        &self.engine
    }

    /// A future that completes after `duration` on the runtime's clock (for async verbs).
    ///
    /// ```
    /// async fn pause(call: &tickstep_host::VerbCall) {
    ///     call.sleep(std::time::Duration::from_millis(250)).await;
    /// }
    /// ```
    pub fn sleep(&self, duration: Duration) -> Sleep {
        self.kernel.sleep(duration)
    }

    /// A future that completes when `condition()` is true, re-checked once per step (for async
    /// verbs waiting on a command or on world state).
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// async fn wait_for_door(call: &tickstep_host::VerbCall, open: Rc<Cell<bool>>) {
    ///     call.wait_until(move || open.get()).await;
    /// }
    /// ```
    pub fn wait_until<F: FnMut() -> bool + Unpin>(&self, condition: F) -> WaitUntil<F> {
        tickstep_kernel::wait_until(condition)
    }

    /// [`VerbCall::wait_until`] with a limit: `Ok(())` when the condition became true,
    /// `Err(TimedOut)` when `limit` passed first (on the runtime's clock).
    ///
    /// # Errors
    ///
    /// The future's output is [`TimedOut`](crate::kernel::TimedOut) when the limit passed first.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_host::schedules::Value;
    /// async fn wait_for_door(call: &tickstep_host::VerbCall, open: impl Fn() -> bool + Unpin) -> tickstep_host::VerbResult {
    ///     match call.wait_until_timeout(open, Duration::from_secs(30)).await {
    ///         Ok(()) => Ok(Value::Int(1)),
    ///         Err(_timed_out) => Err(Value::from("the door stayed shut")),
    ///     }
    /// }
    /// ```
    pub fn wait_until_timeout<F: FnMut() -> bool + Unpin>(
        &self,
        condition: F,
        limit: Duration,
    ) -> Timeout<WaitUntil<F>> {
        self.kernel.wait_until_timeout(condition, limit)
    }

    /// What the host that runs this firing hands its verbs, when it is a `T`: the Bevy plugin
    /// hands its `WorldQueue` (which `tickstep_bevy` reads as `call.world()`); the `Runtime`
    /// hands nothing.
    ///
    /// ```
    /// fn world_of(call: &tickstep_host::VerbCall) -> Option<&String> { call.host_context::<String>() }
    /// ```
    pub fn host_context<T: Any>(&self) -> Option<&T> {
        self.context.as_deref().and_then(<dyn Any>::downcast_ref)
    }

    pub(crate) fn new(
        (firing, rerun): (Firing, bool),
        run: RunId,
        engine: Schedules,
        kernel: FrameScheduler,
        context: HostContext,
    ) -> Self {
        VerbCall {
            firing,
            rerun,
            run,
            engine,
            kernel,
            context,
        }
    }
}

impl std::fmt::Debug for VerbCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerbCall")
            .field("firing", &self.firing)
            .field("run", &self.run)
            .field("rerun", &self.rerun)
            .finish_non_exhaustive()
    }
}

/// Turns a verb's result (or its panic) into the outcome the engine records.
pub(crate) fn outcome_of(result: std::thread::Result<VerbResult>) -> Outcome {
    match result {
        Ok(Ok(value)) => Outcome::Returned(value),
        Ok(Err(value)) => Outcome::Fault {
            kind: FaultKind::Error,
            value,
        },
        Err(payload) => Outcome::Fault {
            kind: FaultKind::Error,
            value: Value::Str(format!(
                "panic: {}",
                tickstep_kernel::panic_message(payload.as_ref())
            )),
        },
    }
}

/// Runs a sync verb, catching its panic.
pub(crate) fn call_sync(
    verb: &dyn Fn(&VerbCall) -> VerbResult,
    call: &VerbCall,
) -> std::thread::Result<VerbResult> {
    catch_unwind(AssertUnwindSafe(|| verb(call)))
}

/// An async verb's future with its panics caught at every poll, so a panicking async verb is a
/// fault of its own schedule rather than a crash report about the runtime.
pub(crate) struct CatchUnwind(pub(crate) VerbFuture);

impl Future for CatchUnwind {
    type Output = std::thread::Result<VerbResult>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match catch_unwind(AssertUnwindSafe(|| inner.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(result)) => Poll::Ready(Ok(result)),
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}

/// The host's world, narrowed by the verb table: a verb is callable only if the host allows it
/// *and* the host core has code for it, so scheduling an unregistered verb fails at the call site
/// (`E_INVARG`) instead of faulting at firing time.
pub(crate) struct HostWorld {
    pub(crate) host: Box<dyn World>,
    /// `None` when the host runs firings itself (its own runner): then the host alone says
    /// which verbs are callable.
    pub(crate) verbs: Option<Rc<VerbTable>>,
}

impl World for HostWorld {
    fn valid(&self, obj: ObjId) -> bool {
        self.host.valid(obj)
    }
    fn is_wizard(&self, who: ObjId) -> bool {
        self.host.is_wizard(who)
    }
    fn controls(&self, who: ObjId, obj: ObjId) -> bool {
        self.host.controls(who, obj)
    }
    fn verb_callable(&self, perms: ObjId, target: ObjId, verb: &str) -> bool {
        self.verbs.as_ref().is_none_or(|v| v.contains(verb))
            && self.host.verb_callable(perms, target, verb)
    }
    fn is_anonymous(&self, obj: ObjId) -> bool {
        self.host.is_anonymous(obj)
    }
}
