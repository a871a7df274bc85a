//! Running firings as tasks: their limits, killing them, listing them (docs/runtime.md
//! §4.5–§4.10).
//!
//! A firing is an ordinary kernel task, and like any task it has limits and can be killed:
//!
//! * **`seconds`**, a wall-clock limit on the runtime's clock (virtual time included). An async
//!   verb past it is dropped at its next poll — the firing arms one kernel timer at its limit, so
//!   a verb asleep or waiting is woken to be dropped then, not whenever it would next have run —
//!   and reported as fault `time_limit`. A sync verb cannot be preempted: Rust cannot stop a
//!   function mid-call. Its run is measured, and when it ran past the limit it is reported as
//!   `time_limit` after it returns (its return value is discarded; its effects stand).
//! * **`ticks`**, a poll budget for async verbs: the number of times its future may be polled
//!   (each poll is one kernel task run, so at most one per step). The next poll past the budget
//!   drops it: fault `tick_limit`. A sync verb is one poll and never exceeds a budget of one.
//! * **Kill.** [`HostCore::kill`](crate::HostCore::kill) cancels the firing's kernel
//!   task — an async verb's future is dropped at once, a queued sync verb never runs — and
//!   reports `killed`. A sync verb that kills its own firing from inside is reported `killed`
//!   when it returns.
//!
//! All three are faults of the schedule, counted toward its `max_faults` like any other, and
//! shown in `schedule_info`'s `last_fault`. Costs: per firing one map entry (inserted at start,
//! removed when it settles), per poll one counter increment and two clock comparisons when
//! limited, one kernel timer per firing with a `seconds` limit.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use tickstep_kernel::clock::Instant;
use tickstep_kernel::{FrameScheduler, Sleep, TaskHandle};
use tickstep_schedules::{FaultKind, Firing, ObjId, Options, Outcome, RunId, ScheduleId, Value};

/// Limits on one firing ([`HostSettings::firing_limits`](crate::HostSettings::firing_limits)
/// for every firing; a schedule's `seconds` and `ticks` options, stored with it; and
/// [`HostCore::set_firing_limits`](crate::HostCore::set_firing_limits), an in-memory override per
/// schedule). `None` is no limit. docs/runtime.md §4.5–§4.9 say what each does.
///
/// ```
/// use std::time::Duration;
/// use tickstep_host::FiringLimits;
/// let limits = FiringLimits::none().seconds(Duration::from_secs(5)).ticks(100);
/// assert_eq!(limits.time_limit(), Some(Duration::from_secs(5)));
/// assert_eq!(limits.tick_limit(), Some(100));
/// assert_eq!(FiringLimits::default(), FiringLimits::none());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FiringLimits {
    seconds: Option<Duration>,
    ticks: Option<u64>,
}

impl FiringLimits {
    /// No limit (the runtime's default).
    ///
    /// ```
    /// assert_eq!(tickstep_host::FiringLimits::none().time_limit(), None);
    /// ```
    pub fn none() -> Self {
        FiringLimits::default()
    }

    /// A wall-clock limit on the runtime's clock.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let _l = tickstep_host::FiringLimits::none().seconds(Duration::from_millis(500));
    /// ```
    #[must_use]
    pub fn seconds(mut self, limit: Duration) -> Self {
        self.seconds = Some(limit);
        self
    }

    /// A poll budget for async verbs.
    ///
    /// ```
    /// let _l = tickstep_host::FiringLimits::none().ticks(30);
    /// ```
    #[must_use]
    pub fn ticks(mut self, polls: u64) -> Self {
        self.ticks = Some(polls);
        self
    }

    /// The wall-clock limit, if any.
    ///
    /// ```
    /// assert_eq!(tickstep_host::FiringLimits::none().time_limit(), None);
    /// ```
    pub fn time_limit(&self) -> Option<Duration> {
        self.seconds
    }

    /// The poll budget, if any.
    ///
    /// ```
    /// assert_eq!(tickstep_host::FiringLimits::none().ticks(3).tick_limit(), Some(3));
    /// ```
    pub fn tick_limit(&self) -> Option<u64> {
        self.ticks
    }

    /// The limits a schedule's options set (the `seconds` and `ticks` keys of an options map, or
    /// [`Options::time_limit`] / [`Options::tick_limit`]). The engine keeps them with the
    /// schedule and hands them to the runtime with every firing, so a host need not call this;
    /// it serves a host that builds a [`HostCore::set_firing_limits`](crate::HostCore::set_firing_limits)
    /// override from an options map.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_host::FiringLimits;
    /// use tickstep_host::schedules::{Options, Value};
    /// let opts = Options::from_map(&Value::Map(vec![(Value::from("seconds"), Value::Int(5))])).unwrap();
    /// assert_eq!(FiringLimits::from_options(&opts), FiringLimits::none().seconds(Duration::from_secs(5)));
    /// ```
    pub fn from_options(options: &Options) -> Self {
        let (seconds, ticks) = options.firing_limits();
        FiringLimits { seconds, ticks }
    }

    /// The limits the engine hands over with a firing: the schedule's own `seconds` and `ticks`
    /// options (docs/runtime.md §4.5).
    ///
    /// ```
    /// # use std::rc::Rc;
    /// use tickstep_host::FiringLimits;
    /// use tickstep_host::schedules::{Firing, ObjId, RunId, ScheduleId};
    /// let firing = Firing { schedule: ScheduleId::from_raw(1), run: RunId(1), target: ObjId(1), verb: Rc::from("v"),
    ///     args: Rc::from(Vec::new()), state: None, elapsed: None, player: ObjId(1),
    ///     authority: ObjId(1), nominal_unix_nanos: 0, time_limit: None,
    ///     tick_limit: std::num::NonZeroU64::new(3) };
    /// assert_eq!(FiringLimits::of_firing(&firing), FiringLimits::none().ticks(3));
    /// ```
    pub fn of_firing(firing: &Firing) -> Self {
        FiringLimits {
            seconds: firing.time_limit,
            ticks: firing.tick_limit.map(std::num::NonZeroU64::get),
        }
    }

    /// `self`, with each limit `other` sets taking its place.
    fn overridden_by(self, other: FiringLimits) -> FiringLimits {
        FiringLimits {
            seconds: other.seconds.or(self.seconds),
            ticks: other.ticks.or(self.ticks),
        }
    }
}

/// One firing running now ([`HostCore::running_firings`](crate::HostCore::running_firings)).
///
/// ```
/// use tickstep_host::{HostCore, HostSettings};
/// use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
/// let clock = ManualClock::new();
/// let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
/// let core = HostCore::new(clock, kernel, &HostSettings::default(), None);
/// core.open(None, Box::new(tickstep_host::schedules::OpenWorld), None)?;
/// for firing in core.running_firings() {
///     println!("#{} run {} {} since {} polls {}", firing.schedule, firing.run.0,
///         firing.target_verb(), firing.started_unix_nanos, firing.polls);
/// }
/// # Ok::<(), tickstep_host::HostError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RunningFiring {
    /// The schedule firing.
    pub schedule: ScheduleId,
    /// Its run id.
    pub run: RunId,
    /// `this`.
    pub target: ObjId,
    /// The verb.
    pub verb: String,
    /// When it started, Unix nanoseconds on the runtime's clock.
    pub started_unix_nanos: u64,
    /// Polls so far (an async verb's future; a sync verb is 0 until it runs, then 1).
    pub polls: u64,
}

impl RunningFiring {
    /// `#target:verb`, the way an operator names it.
    ///
    /// ```
    /// use tickstep_host::RunningFiring;
    /// fn named(firings: &[RunningFiring]) -> Vec<String> {
    ///     firings.iter().map(RunningFiring::target_verb).collect() // `#12:ring`
    /// }
    /// assert!(named(&[]).is_empty());
    /// ```
    pub fn target_verb(&self) -> String {
        format!("#{}:{}", self.target.0, self.verb)
    }
}

/// What the runtime keeps about a running firing.
struct Entry {
    run: RunId,
    schedule: ScheduleId,
    target: ObjId,
    verb: Rc<str>,
    started_unix_nanos: u64,
    state: Rc<FiringState>,
    task: Option<TaskHandle>,
}

/// What a firing's task and the runtime share: one allocation per firing.
pub(crate) struct FiringState {
    pub(crate) polls: Cell<u64>,
    pub(crate) killed: Cell<bool>,
    /// Its index in the running list, or `NOT_LISTED`.
    slot: Cell<usize>,
}

const NOT_LISTED: usize = usize::MAX;

impl Default for FiringState {
    fn default() -> Self {
        FiringState {
            polls: Cell::new(0),
            killed: Cell::new(false),
            slot: Cell::new(NOT_LISTED),
        }
    }
}

/// The running firings and the limits they run under.
pub(crate) struct Firings {
    /// In no order: a firing's [`FiringState`] knows its place, so it leaves in O(1)
    /// (`swap_remove`) with no hashing; lookups by run id (kill, listing) scan, and are rare.
    running: RefCell<Vec<Entry>>,
    defaults: FiringLimits,
    per_schedule: RefCell<HashMap<ScheduleId, FiringLimits>>,
}

/// What a starting firing's task needs: its limits and its shared state.
pub(crate) struct Tracker {
    pub(crate) limits: FiringLimits,
    pub(crate) state: Rc<FiringState>,
}

impl Firings {
    pub(crate) fn new(defaults: FiringLimits) -> Self {
        Firings {
            running: RefCell::default(),
            defaults,
            per_schedule: RefCell::new(HashMap::new()),
        }
    }

    /// How many firings are running now.
    pub(crate) fn len(&self) -> usize {
        self.running.borrow().len()
    }

    pub(crate) fn set_limits(&self, schedule: ScheduleId, limits: Option<FiringLimits>) {
        let mut map = self.per_schedule.borrow_mut();
        match limits {
            Some(limits) => map.insert(schedule, limits),
            None => map.remove(&schedule),
        };
    }

    /// What a starting firing's task needs; [`Firings::register`] records it once its task
    /// exists. Its limits: the runtime's defaults, overridden by the schedule's stored options,
    /// overridden by the host's in-memory override (docs/runtime.md §4.5).
    pub(crate) fn tracker(&self, firing: &Firing) -> Tracker {
        let stored = FiringLimits::of_firing(firing);
        let mut limits = self.defaults.overridden_by(stored);
        let per_schedule = self.per_schedule.borrow();
        if !per_schedule.is_empty()
            && let Some(own) = per_schedule.get(&firing.schedule)
        {
            limits = limits.overridden_by(*own);
        }
        Tracker {
            limits,
            state: Rc::default(),
        }
    }

    /// Records a started firing and its task (one push; `end_at` takes it out).
    pub(crate) fn register(
        &self,
        run: RunId,
        firing: &Firing,
        started_unix_nanos: u64,
        state: Rc<FiringState>,
        task: TaskHandle,
    ) {
        let mut running = self.running.borrow_mut();
        state.slot.set(running.len());
        running.push(Entry {
            run,
            schedule: firing.schedule,
            target: firing.target,
            verb: Rc::clone(&firing.verb),
            started_unix_nanos,
            state,
            task: Some(task),
        });
    }

    /// Forgets a settled firing, by its state (O(1)). Returns the entry to drop unborrowed.
    fn take_at(&self, state: &FiringState) -> Option<Entry> {
        let slot = state.slot.replace(NOT_LISTED);
        if slot == NOT_LISTED {
            return None;
        }
        let mut running = self.running.borrow_mut();
        let entry = running.swap_remove(slot);
        if let Some(moved) = running.get(slot) {
            moved.state.slot.set(slot);
        }
        Some(entry)
    }

    /// Forgets a settled firing its task reports.
    pub(crate) fn end_at(&self, state: &FiringState) {
        drop(self.take_at(state));
    }

    /// Forgets a settled firing by run id (kill, a host's report): a scan.
    pub(crate) fn end(&self, run: RunId) {
        let state = self
            .running
            .borrow()
            .iter()
            .find(|e| e.run == run)
            .map(|e| Rc::clone(&e.state));
        if let Some(state) = state {
            drop(self.take_at(&state));
        }
    }

    /// Marks `run` killed and cancels its task. Returns whether it was running, and whether its
    /// outcome is to be reported now (false for a sync verb running this very moment: it
    /// reports `killed` itself when it returns).
    pub(crate) fn kill(&self, run: RunId) -> Option<bool> {
        let task = {
            let mut running = self.running.borrow_mut();
            let entry = running.iter_mut().find(|e| e.run == run)?;
            if entry.state.killed.replace(true) {
                return Some(false); // killed twice: the first kill reports
            }
            entry.task.take()
        };
        // Cancelling drops the task's future (with nothing borrowed): an async verb ends here.
        let took_effect = task.is_some_and(|t| {
            t.cancel();
            t.is_cancelled()
        });
        Some(took_effect)
    }

    /// Cancels every running firing's task and forgets them all, reporting nothing: the host is
    /// going, and the engine keeps them as in flight for the next start to settle.
    pub(crate) fn cancel_all(&self) {
        let running = std::mem::take(&mut *self.running.borrow_mut());
        // Cancelled with nothing borrowed: dropping a verb's future may run its code's drops.
        for entry in running {
            entry.state.slot.set(NOT_LISTED);
            if let Some(task) = entry.task {
                task.cancel();
            }
        }
    }

    pub(crate) fn runs_of(&self, schedule: ScheduleId) -> Vec<RunId> {
        self.running
            .borrow()
            .iter()
            .filter(|e| e.schedule == schedule)
            .map(|e| e.run)
            .collect()
    }

    pub(crate) fn list(&self) -> Vec<RunningFiring> {
        let mut list: Vec<RunningFiring> = self
            .running
            .borrow()
            .iter()
            .map(|e| RunningFiring {
                schedule: e.schedule,
                run: e.run,
                target: e.target,
                verb: e.verb.to_string(),
                started_unix_nanos: e.started_unix_nanos,
                polls: e.state.polls.get(),
            })
            .collect();
        list.sort_by_key(|f| f.run.0);
        list
    }
}

/// The fault a sync verb's run earns: killed from inside, or past its time limit.
pub(crate) fn sync_verdict(tracker: &Tracker, ran: Duration) -> Option<Outcome> {
    if tracker.state.killed.get() {
        return Some(Outcome::Killed);
    }
    match tracker.limits.seconds {
        Some(limit) if ran > limit => Some(time_limit(ran, limit)),
        _ => None,
    }
}

fn time_limit(ran: Duration, limit: Duration) -> Outcome {
    Outcome::Fault {
        kind: FaultKind::TimeLimit,
        value: Value::Str(format!("time limit: ran {ran:?}, limit {limit:?}")),
    }
}

/// An async verb's future under its limits: each poll counts, and the poll past a limit drops
/// the verb (by finishing without polling it) with the limit's fault.
pub(crate) struct Limited<F> {
    inner: Pin<Box<F>>,
    state: Rc<FiringState>,
    ticks: Option<u64>,
    time: Option<(Instant, Duration, Sleep)>,
    kernel: FrameScheduler,
}

impl<F> Limited<F> {
    pub(crate) fn new(inner: F, tracker: &Tracker, kernel: &FrameScheduler) -> Self {
        let started = kernel.now();
        Limited {
            inner: Box::pin(inner),
            state: Rc::clone(&tracker.state),
            ticks: tracker.limits.ticks,
            time: tracker
                .limits
                .seconds
                .map(|limit| (started, limit, kernel.sleep(limit))),
            kernel: kernel.clone(),
        }
    }
}

impl<F, T> Future for Limited<F>
where
    F: Future<Output = std::thread::Result<T>>,
{
    /// `Err(outcome)` when a limit ended the verb.
    type Output = Result<std::thread::Result<T>, Outcome>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let polls = this.state.polls.get() + 1;
        this.state.polls.set(polls);
        if let Some((started, limit, sleep)) = &mut this.time {
            let ran = this.kernel.now() - *started;
            if ran >= *limit {
                return Poll::Ready(Err(time_limit(ran, *limit)));
            }
            // Arms (once) the timer that wakes this task at the limit.
            let _ = Pin::new(sleep).poll(cx);
        }
        if let Some(budget) = this.ticks
            && polls > budget
        {
            return Poll::Ready(Err(Outcome::Fault {
                kind: FaultKind::TickLimit,
                value: Value::Str(format!("tick limit: {budget} polls")),
            }));
        }
        this.inner.as_mut().poll(cx).map(Ok)
    }
}
