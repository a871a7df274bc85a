//! The handle a command body receives: its way to yield, wait, and start or await children.
//!
//! A body is polled only while its command is mounted, so every operation first checks that the
//! coroutine's own command is the one mounted; using a coroutine anywhere else panics with
//! "Coroutines can only be used by the command bound to them" (inside another command's body the
//! panic becomes that command's `CompletedWithError`, then leaves `run()`).
//!
//! The scheduler polls with a no-op waker and mounts every running command once per cycle, so
//! the futures here need no wake-up bookkeeping: each poll re-checks its condition.

use std::convert::Infallible;
use std::future::Future;
use std::panic::Location;
use std::rc::Rc;
use std::time::Duration;

use tickstep_kernel::clock::{Clock, Instant};

use super::awaitables::{
    CycleWaitUntil, CycleWaitUntilTimeout, CycleYieldNow, Join, JoinKeys, JoinMode, Wait,
};
use crate::error::ForkError;
use crate::id::{Key, Mounted};
use crate::run::Run;
use crate::scheduler::command::Command;
use crate::scheduler::{CommandScheduler, Coroutine, Inner};

impl Coroutine {
    pub(crate) fn new(inner: &Rc<Inner>, bound: Mounted) -> Self {
        Coroutine {
            inner: Rc::downgrade(inner),
            mounted: inner.mounted.clone(),
            bound,
        }
    }

    /// Panics unless this coroutine's own command (or sideload) is the one being polled.
    #[track_caller]
    #[inline]
    fn check_bound(&self) {
        assert!(
            self.mounted.get() == self.bound,
            "Coroutines can only be used by the command bound to them"
        );
    }

    /// The scheduler, checked to be polling this coroutine's command.
    #[track_caller]
    fn engine(&self) -> Rc<Inner> {
        self.check_bound();
        self.inner
            .upgrade()
            .expect("the scheduler this coroutine belongs to was dropped")
    }

    fn key(&self) -> Option<Key> {
        self.bound.as_command()
    }

    #[track_caller]
    fn command_key(&self, op: &str) -> Key {
        self.key().unwrap_or_else(|| {
            panic!("a sideload coroutine cannot {op}; only commands have children")
        })
    }

    /// Gives control back to the scheduler until the next cycle.
    ///
    /// # Panics
    ///
    /// If used outside the command it is bound to.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.yield_now().await; }).named("c");
    /// scheduler.schedule(&c);
    /// scheduler.run().unwrap();
    /// assert!(scheduler.is_running(&c));
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_running(&c));
    /// ```
    #[track_caller]
    #[inline]
    pub fn yield_now(&self) -> CycleYieldNow {
        self.check_bound();
        CycleYieldNow { yielded: false }
    }

    /// Yields forever: the command runs (holding its mechanisms) until canceled or interrupted.
    ///
    /// # Panics
    ///
    /// If used outside the command it is bound to.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// scheduler.schedule(&c);
    /// for _ in 0..10 { scheduler.run().unwrap(); }
    /// assert!(scheduler.is_running(&c));
    /// ```
    #[track_caller]
    pub fn park(&self) -> impl Future<Output = Infallible> + 'static {
        self.check_bound();
        std::future::pending::<Infallible>()
    }

    /// Waits until `duration` has passed on the scheduler's clock, measured from this call. The
    /// check happens once per cycle, so a wait shorter than the cycle waits one cycle; a zero
    /// wait does not yield.
    ///
    /// # Panics
    ///
    /// If used outside the command it is bound to.
    ///
    /// ```
    /// use std::time::Duration;
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let clock = ManualClock::new();
    /// let scheduler = CommandScheduler::new(clock.clone());
    /// let c = Command::no_requirements()
    ///     .executing(|co| async move { co.wait(Duration::from_millis(5)).await; })
    ///     .named("c");
    /// scheduler.schedule(&c);
    /// scheduler.run().unwrap();
    /// clock.advance(Duration::from_millis(20));
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_running(&c));
    /// ```
    #[track_caller]
    pub fn wait(&self, duration: Duration) -> Wait {
        let inner = self.engine();
        Wait {
            deadline: inner.clock.now().saturating_add(duration),
            inner: self.inner.clone(),
            bound: self.bound,
        }
    }

    /// Waits until `condition` returns true, checking it now and then once per cycle.
    ///
    /// # Panics
    ///
    /// If used outside the command it is bound to.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let go = Rc::new(Cell::new(false));
    /// let flag = go.clone();
    /// let c = Command::no_requirements()
    ///     .executing(move |co| { let flag = flag.clone(); async move { co.wait_until(move || flag.get()).await; } })
    ///     .named("c");
    /// scheduler.schedule(&c);
    /// scheduler.run().unwrap();
    /// go.set(true);
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_running(&c));
    /// ```
    #[track_caller]
    pub fn wait_until<F: FnMut() -> bool>(&self, condition: F) -> CycleWaitUntil<F> {
        self.check_bound();
        CycleWaitUntil {
            condition,
            inner: self.inner.clone(),
            bound: self.bound,
        }
    }

    /// Waits until `condition` returns true or `timeout` passes. Each cycle the condition is
    /// checked first, so a condition that turns true in the cycle the timeout passes wins.
    ///
    /// # Panics
    ///
    /// If used outside the command it is bound to.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_commands::{Command, CommandScheduler, WaitResult};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements()
    ///     .executing(|co| async move {
    ///         assert_eq!(co.wait_until_timeout(|| true, Duration::ZERO).await, WaitResult::ConditionMet);
    ///     })
    ///     .named("c");
    /// scheduler.schedule(&c);
    /// scheduler.run().unwrap();
    /// ```
    #[track_caller]
    pub fn wait_until_timeout<F: FnMut() -> bool>(
        &self,
        condition: F,
        timeout: Duration,
    ) -> CycleWaitUntilTimeout<F> {
        let inner = self.engine();
        CycleWaitUntilTimeout {
            condition,
            deadline: inner.clock.now().saturating_add(timeout),
            inner: self.inner.clone(),
            bound: self.bound,
        }
    }

    /// Starts `commands` as children of this command, all or nothing. Each starts at once and runs
    /// its first step inside this call; they are canceled when this command ends.
    ///
    /// # Errors
    ///
    /// [`ForkError`] when two of them share a mechanism, one is already running, one loses a
    /// priority conflict, or this command was canceled. Nothing was started then.
    ///
    /// # Panics
    ///
    /// If used outside the command it is bound to, or from a sideload.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let a = Command::no_requirements().executing(|co| async move { co.park().await; }).named("a");
    /// let child = a.clone();
    /// let parent = Command::no_requirements()
    ///     .executing(move |co| { let a = child.clone(); async move { co.fork([&a]).unwrap(); co.park().await; } })
    ///     .named("parent");
    /// scheduler.schedule(&parent);
    /// scheduler.run().unwrap();
    /// assert!(scheduler.is_running(&a));
    /// scheduler.cancel(&parent);
    /// assert!(!scheduler.is_running(&a));
    /// ```
    #[track_caller]
    pub fn fork<'a>(
        &self,
        commands: impl IntoIterator<Item = &'a Command>,
    ) -> Result<(), ForkError> {
        let at = Location::caller();
        let inner = self.engine();
        let cmds: Vec<Command> = commands.into_iter().cloned().collect();
        if self.key().is_none() {
            return inner.fork_from_sideload(&cmds, at);
        }
        let key = self.command_key("fork");
        inner.fork(key, &cmds, false, at).map(|_| ())
    }

    /// Like [`Coroutine::fork`], but a command already running elsewhere is joined (left to run)
    /// instead of being an error: what compositions use to start children they then await.
    #[track_caller]
    pub(crate) fn start_or_join<'a>(
        &self,
        commands: impl IntoIterator<Item = &'a Command>,
    ) -> Result<(), ForkError> {
        let at = Location::caller();
        let inner = self.engine();
        let key = self.command_key("fork");
        let cmds: Vec<Command> = commands.into_iter().cloned().collect();
        inner.fork(key, &cmds, true, at).map(|_| ())
    }

    /// Starts `command` as a child (unless it is already running, in which case it just waits
    /// for that instance) and waits until it ends. The child runs before this command in each
    /// cycle, so this command resumes in the cycle the child ends. Awaiting a command that waits
    /// for this one (or this command itself) never ends, and blocks only this command.
    ///
    /// # Errors
    ///
    /// The future resolves to [`ForkError`] if the child could not start.
    ///
    /// # Panics
    ///
    /// If used outside the command it is bound to, or from a sideload.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let step = Command::no_requirements().executing(|co| async move { co.yield_now().await; }).named("step");
    /// let done = Rc::new(Cell::new(false));
    /// let d = done.clone();
    /// let outer = Command::no_requirements()
    ///     .executing(move |co| {
    ///         let (step, d) = (step.clone(), d.clone());
    ///         async move { co.await_cmd(&step).await.unwrap(); d.set(true); }
    ///     })
    ///     .named("outer");
    /// scheduler.schedule(&outer);
    /// scheduler.run().unwrap();
    /// assert!(!done.get());
    /// scheduler.run().unwrap();
    /// assert!(done.get() && !scheduler.is_running(&outer));
    /// ```
    #[track_caller]
    pub fn await_cmd(&self, command: &Command) -> Join {
        self.join(
            std::slice::from_ref(command),
            JoinMode::All,
            Location::caller(),
        )
    }

    /// Starts (or joins) every command and waits until all have ended.
    ///
    /// # Errors
    ///
    /// The future resolves to [`ForkError`] if they could not all start (none started then).
    ///
    /// # Panics
    ///
    /// If used outside the command it is bound to, or from a sideload.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let a = Command::no_requirements().executing(|co| async move { co.yield_now().await; }).named("a");
    /// let b = Command::no_requirements().executing(|_co| async {}).named("b");
    /// let both = Command::no_requirements()
    ///     .executing(move |co| { let (a, b) = (a.clone(), b.clone()); async move { co.await_all([&a, &b]).await.unwrap(); } })
    ///     .named("both");
    /// scheduler.schedule(&both);
    /// scheduler.run().unwrap();
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_running(&both));
    /// ```
    #[track_caller]
    pub fn await_all<'a>(&self, commands: impl IntoIterator<Item = &'a Command>) -> Join {
        let cmds: Vec<Command> = commands.into_iter().cloned().collect();
        self.join(&cmds, JoinMode::All, Location::caller())
    }

    /// Starts (or joins) every command, waits until any one ends, then cancels the others.
    ///
    /// # Errors
    ///
    /// The future resolves to [`ForkError`] if they could not all start (none started then).
    ///
    /// # Panics
    ///
    /// If used outside the command it is bound to, or from a sideload.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let slow = Command::no_requirements().executing(|co| async move { co.park().await; }).named("slow");
    /// let fast = Command::no_requirements().executing(|co| async move { co.yield_now().await; }).named("fast");
    /// let s = slow.clone();
    /// let first = Command::no_requirements()
    ///     .executing(move |co| { let (s, f) = (s.clone(), fast.clone()); async move { co.await_any([&s, &f]).await.unwrap(); } })
    ///     .named("first");
    /// scheduler.schedule(&first);
    /// scheduler.run().unwrap();
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_running(&first) && !scheduler.is_running(&slow));
    /// ```
    #[track_caller]
    pub fn await_any<'a>(&self, commands: impl IntoIterator<Item = &'a Command>) -> Join {
        let cmds: Vec<Command> = commands.into_iter().cloned().collect();
        self.join(&cmds, JoinMode::Any, Location::caller())
    }

    #[track_caller]
    fn join(&self, cmds: &[Command], mode: JoinMode, at: &'static Location<'static>) -> Join {
        let inner = self.engine();
        let key = self.command_key("await commands");
        let started = inner.fork(key, cmds, true, at);
        let (keys, error) = match started {
            Ok(keys) => (JoinKeys::Many(keys), None),
            Err(e) => (JoinKeys::None, Some(e)),
        };
        Join {
            inner: self.inner.clone(),
            bound: self.bound,
            keys,
            error,
            mode,
        }
    }

    /// Starts `command` as a child, like [`Coroutine::fork`] with one command, and returns its
    /// [`Run`] to await ([`Coroutine::await_run`]) or cancel
    /// ([`CommandScheduler::cancel_run`]) later (docs/commands.md §13.2).
    ///
    /// # Errors
    ///
    /// As [`Coroutine::fork`]: [`ForkError`] when it is already running, loses a priority
    /// conflict, may not run while the robot is disabled, or this command was canceled.
    ///
    /// # Panics
    ///
    /// If used outside the command it is bound to, or from a sideload.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let step = Command::no_requirements().executing(|co| async move { co.yield_now().await; }).named("step");
    /// let twice = Command::no_requirements()
    ///     .executing_fallible(move |co| {
    ///         let step = step.clone();
    ///         async move {
    ///             let first = co.fork_run(&step)?;
    ///             co.await_run(first).await?;
    ///             let second = co.fork_run(&step)?; // the same command, a second run
    ///             assert_ne!(first, second);
    ///             co.await_run(second).await?;
    ///             Ok(())
    ///         }
    ///     })
    ///     .named("twice");
    /// scheduler.schedule(&twice);
    /// for _ in 0..3 { scheduler.run().unwrap(); }
    /// assert!(!scheduler.is_running(&twice));
    /// ```
    #[track_caller]
    pub fn fork_run(&self, command: &Command) -> Result<Run, ForkError> {
        let at = Location::caller();
        let inner = self.engine();
        let key = self.command_key("fork");
        let runs = inner.fork(key, std::slice::from_ref(command), false, at)?;
        Ok(runs[0])
    }

    /// Waits until `run` has ended (completed, failed or canceled); at once if it already has. It
    /// never starts anything: the run may be any run of this scheduler, a child or not
    /// (docs/commands.md §13.2). Allocates nothing.
    ///
    /// # Errors
    ///
    /// None today: the future resolves to `Ok(())` (a [`ForkError`] is kept in the type so it
    /// composes with the other awaits).
    ///
    /// # Panics
    ///
    /// If used outside the command it is bound to, or from a sideload.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let slow = Command::no_requirements().executing(|co| async move { co.yield_now().await; }).named("slow");
    /// let run = scheduler.schedule_run(&slow).unwrap();
    /// let waiter = Command::no_requirements()
    ///     .executing(move |co| async move { co.await_run(run).await.unwrap(); })
    ///     .named("waiter");
    /// scheduler.schedule(&waiter);
    /// scheduler.run().unwrap();
    /// assert!(scheduler.is_running(&waiter));
    /// scheduler.run().unwrap(); // slow ends
    /// scheduler.run().unwrap(); // waiter, polled before slow in that cycle, sees it now
    /// assert!(!scheduler.is_running(&waiter));
    /// ```
    #[track_caller]
    pub fn await_run(&self, run: Run) -> Join {
        self.command_key("await a run");
        Join {
            inner: self.inner.clone(),
            bound: self.bound,
            keys: JoinKeys::One(run),
            error: None,
            mode: JoinMode::All,
        }
    }

    /// Cancels this coroutine's own command (and its children) now, and returns a future that
    /// never completes: awaiting it is where the body stops, so code after
    /// `co.request_cancellation().await` never runs (as in the reference, whose cancel never
    /// returns to the body). The command ends with `Canceled` and its `on_cancel` hook runs.
    ///
    /// # Panics
    ///
    /// If used outside the command it is bound to, or from a sideload.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let quitter = Command::no_requirements()
    ///     .executing(|co| async move { co.request_cancellation().await; unreachable!() })
    ///     .named("quitter");
    /// scheduler.schedule(&quitter);
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_running(&quitter));
    /// ```
    #[track_caller]
    pub fn request_cancellation(&self) -> impl Future<Output = Infallible> + 'static {
        let inner = self.engine();
        let key = self.command_key("cancel itself");
        inner.cancel_key(key);
        std::future::pending::<Infallible>()
    }

    /// Chooses what a [`fork`](Coroutine::fork), [`await_cmd`](Coroutine::await_cmd),
    /// [`await_all`](Coroutine::await_all) or [`await_any`](Coroutine::await_any) refused because
    /// a higher-priority command holds a mechanism does to this command.
    ///
    /// * `false` (the default): nothing; the call returns a [`ForkError`] naming the blocker, and
    ///   the body decides (propagating it with `?` fails the command loudly).
    /// * `true` (the reference's default): this command is reported `Interrupted` by the blocker
    ///   and its whole composition is canceled; the body stops at its next await.
    ///
    /// tickstep keeps `false` as its default because the error stays visible in the body and in
    /// `run()`'s result, where a silent cancellation only shows up as an event.
    ///
    /// # Panics
    ///
    /// If used outside the command it is bound to, or from a sideload.
    ///
    /// ```
    /// # use tickstep_commands::{Command, Mechanism, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let arm = Mechanism::new(&scheduler, "arm");
    /// let hold = arm.run(|co| async move { co.park().await; }).with_priority(9).named("hold");
    /// let nudge = arm.run(|co| async move { co.park().await; }).named("nudge");
    /// let auto = Command::no_requirements()
    ///     .executing(move |co| {
    ///         let nudge = nudge.clone();
    ///         async move {
    ///             co.set_cancel_on_fork_failure(true);
    ///             let _ = co.await_cmd(&nudge).await;
    ///             co.park().await;
    ///         }
    ///     })
    ///     .named("auto");
    /// scheduler.schedule(&hold);
    /// scheduler.schedule(&auto);
    /// scheduler.run().unwrap();
    /// assert!(scheduler.is_running(&hold) && !scheduler.is_running(&auto));
    /// ```
    #[track_caller]
    pub fn set_cancel_on_fork_failure(&self, cancel: bool) {
        let inner = self.engine();
        let key = self.command_key("set cancel_on_fork_failure");
        inner.set_cancel_on_fork_failure(key, cancel);
    }

    /// The scheduler running this coroutine (to schedule, cancel or bind from inside a body).
    ///
    /// # Panics
    ///
    /// If the scheduler was dropped.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements()
    ///     .executing(|co| async move { assert!(co.scheduler().current_command().is_some()); })
    ///     .named("c");
    /// scheduler.schedule(&c);
    /// scheduler.run().unwrap();
    /// ```
    #[track_caller]
    pub fn scheduler(&self) -> CommandScheduler {
        CommandScheduler {
            inner: self
                .inner
                .upgrade()
                .expect("the scheduler this coroutine belongs to was dropped"),
        }
    }

    /// The scheduler's clock reading.
    ///
    /// # Panics
    ///
    /// If the scheduler was dropped.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::{Instant, ManualClock};
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { assert_eq!(co.now(), Instant::ZERO); }).named("c");
    /// scheduler.schedule(&c);
    /// scheduler.run().unwrap();
    /// ```
    #[track_caller]
    pub fn now(&self) -> Instant {
        self.scheduler().now()
    }
}

impl std::fmt::Debug for Coroutine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coroutine")
            .field("bound", &self.bound)
            .finish_non_exhaustive()
    }
}

/// Calls `step` then yields, forever (the body of `run_repeatedly` and `add_periodic`).
pub(crate) async fn repeat_forever(co: Coroutine, mut step: impl FnMut()) {
    loop {
        step();
        co.yield_now().await;
    }
}
