//! The public methods of [`CommandScheduler`] a robot loop calls as it runs: make one, schedule
//! and cancel, run a cycle, ask what is queued or running, read telemetry. What a program sets
//! up once (defaults, sideloads, listeners, robot state and modes, the watchdog) is in
//! `configure.rs`.

use std::panic::Location;

use tickstep_kernel::AnyClock;
use tickstep_kernel::clock::{Clock, Instant};

use super::CommandScheduler;
use super::Inner;
use super::state::Phase;
use crate::error::RunError;
use crate::run::Run;
use crate::schedule_result::ScheduleResult;
use crate::scheduler::command::Command;
use crate::scheduler::telemetry::{CommandInfo, Telemetry};

impl CommandScheduler {
    /// A scheduler reading time from `clock` (a [`ManualClock`](crate::kernel::clock::ManualClock)
    /// in tests, a [`SystemClock`](crate::kernel::clock::SystemClock) on a robot).
    ///
    /// ```
    /// use tickstep_commands::CommandScheduler;
    /// use tickstep_commands::kernel::clock::SystemClock;
    /// let scheduler = CommandScheduler::new(SystemClock::new());
    /// assert!(scheduler.running().is_empty());
    /// ```
    pub fn new(clock: impl Clock + 'static) -> Self {
        CommandScheduler {
            inner: Inner::new(AnyClock::new(clock)),
        }
    }

    /// Schedules `cmd`. From outside a command it is queued and starts at the next `run()` (if it
    /// still wins its conflicts then). From inside a running command it becomes that command's
    /// child and starts at once, within the caller's poll.
    ///
    /// The caller's location is recorded and named in a [`RunError`] if the body fails.
    ///
    /// # Panics
    ///
    /// If `cmd` requires a mechanism created for another scheduler.
    ///
    /// ```
    /// use tickstep_commands::{Command, Mechanism, ScheduleResult, CommandScheduler};
    /// use tickstep_commands::kernel::clock::ManualClock;
    ///
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let arm = Mechanism::new(&scheduler, "arm");
    /// let a = arm.run(|co| async move { co.park().await; }).with_priority(2).named("a");
    /// let b = arm.run(|co| async move { co.park().await; }).named("b");
    /// assert_eq!(scheduler.schedule(&a), ScheduleResult::Success);
    /// assert!(matches!(scheduler.schedule(&b), ScheduleResult::LowerPriorityThanQueued { .. }));
    /// ```
    #[track_caller]
    pub fn schedule(&self, cmd: &Command) -> ScheduleResult {
        self.inner.schedule(cmd, Location::caller()).0
    }

    /// Schedules `cmd` like [`CommandScheduler::schedule`] and returns the [`Run`] it made, to
    /// await or cancel that run alone (docs/commands.md §13.1).
    ///
    /// # Errors
    ///
    /// Every answer of `schedule` but `Success`, unchanged; `AlreadyRunning` when `cmd` is
    /// already queued or running (its run is [`CommandScheduler::run_of`]).
    ///
    /// # Panics
    ///
    /// If `cmd` requires a mechanism created for another scheduler.
    ///
    /// ```
    /// use tickstep_commands::{Command, CommandScheduler, ScheduleResult};
    /// use tickstep_commands::kernel::clock::ManualClock;
    ///
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// let run = scheduler.schedule_run(&c).unwrap();
    /// assert_eq!(scheduler.schedule_run(&c), Err(ScheduleResult::AlreadyRunning));
    /// assert_eq!(scheduler.run_of(&c), Some(run));
    /// ```
    #[track_caller]
    pub fn schedule_run(&self, cmd: &Command) -> Result<Run, ScheduleResult> {
        match self.inner.schedule(cmd, Location::caller()) {
            (ScheduleResult::Success, Some(key)) => Ok(self
                .inner
                .state
                .borrow()
                .run_of_key(key)
                .expect("a command just scheduled has an instance")),
            (result, _) => Err(result),
        }
    }

    /// The queued or running run of `cmd`, if any.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// assert_eq!(scheduler.run_of(&c), None);
    /// scheduler.schedule(&c);
    /// assert_eq!(scheduler.run_of(&c).unwrap().id(), scheduler.queued()[0].id);
    /// ```
    pub fn run_of(&self, cmd: &Command) -> Option<Run> {
        let s = self.inner.state.borrow();
        s.live_key(cmd).and_then(|key| s.run_of_key(key))
    }

    /// Whether `run` is still queued or running. A later run of the same command is another
    /// run (docs/commands.md §13.1).
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|_co| async {}).named("c");
    /// let run = scheduler.schedule_run(&c).unwrap();
    /// assert!(scheduler.is_live(run));
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_live(run));
    /// ```
    pub fn is_live(&self, run: Run) -> bool {
        self.inner.state.borrow().live_run(run).is_some()
    }

    /// Cancels `run` (and every command it started) if it is still queued or running, as
    /// [`CommandScheduler::cancel`] does, and says whether it was. A later run of the same
    /// command is left alone (docs/commands.md §13.3).
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// let run = scheduler.schedule_run(&c).unwrap();
    /// assert!(scheduler.cancel_run(run));
    /// assert!(!scheduler.cancel_run(run));
    /// ```
    pub fn cancel_run(&self, run: Run) -> bool {
        let live = self.inner.state.borrow().live_run(run);
        if let Some(key) = live {
            self.inner.cancel_key(key);
        }
        live.is_some()
    }

    /// Cancels `cmd` (and every command it started) if it is queued or running; does nothing
    /// otherwise. Takes effect immediately. `on_cancel` runs only if it was running. Canceling a
    /// command from inside its own body ends it when the body next yields.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// scheduler.schedule(&c);
    /// scheduler.cancel(&c);
    /// assert!(!scheduler.is_scheduled(&c));
    /// ```
    pub fn cancel(&self, cmd: &Command) {
        let key = self.inner.state.borrow().live_key(cmd);
        if let Some(key) = key {
            self.inner.cancel_key(key);
        }
    }

    /// Cancels every queued and running command (children with their parents).
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let a = Command::no_requirements().executing(|co| async move { co.park().await; }).named("a");
    /// let b = Command::no_requirements().executing(|co| async move { co.park().await; }).named("b");
    /// scheduler.schedule(&a);
    /// scheduler.run().unwrap();
    /// scheduler.schedule(&b);
    /// scheduler.cancel_all();
    /// assert!(scheduler.running().is_empty() && scheduler.queued().is_empty());
    /// ```
    pub fn cancel_all(&self) {
        {
            let mut s = self.inner.state.borrow_mut();
            let mut roots = s.live_in(&s.running, Phase::Running);
            roots.retain(|k| s.entry(*k).is_some_and(|e| e.parent.is_none()));
            roots.extend(s.live_in(&s.queued, Phase::Queued));
            for key in roots.into_iter().rev() {
                s.cancel_tree(key, None);
            }
        }
        self.inner.settle();
    }

    /// Runs one cycle: cleanup, sideloads, triggers, default commands, promotion, execution.
    ///
    /// # Errors
    ///
    /// A command body returned `Err`: after its `CompletedWithError` event and the cancellation
    /// of its root composition, the error is returned naming the command and where it was
    /// scheduled. Commands not yet polled this cycle are polled next cycle.
    ///
    /// # Panics
    ///
    /// A command body panicked: the panic resumes after the `CompletedWithError` event and the
    /// cancellation of its root. Also panics when called from inside `run()` itself.
    ///
    /// ```
    /// # use tickstep_commands::CommandScheduler;
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// scheduler.run().unwrap();
    /// ```
    #[track_caller]
    pub fn run(&self) -> Result<(), RunError> {
        self.inner.run()
    }

    /// Whether the next cycle would do nothing but count itself (docs/commands.md §2.4): nothing
    /// queued or running, no trigger binding, sideload or default command (ever set), no opmode
    /// change to sweep, and the robot neither just disabled nor in a mode the scheduler has not
    /// entered yet (it reads the [`RobotState`](crate::RobotState), docs/commands.md §12.8). A
    /// host may skip the cycles of an idle scheduler; work scheduled later makes it busy again.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// assert!(scheduler.is_idle());
    /// let c = Command::no_requirements().executing(|_co| async {}).named("c");
    /// scheduler.schedule(&c);
    /// assert!(!scheduler.is_idle());
    /// scheduler.run().unwrap(); // c runs to its end
    /// assert!(scheduler.is_idle());
    /// ```
    pub fn is_idle(&self) -> bool {
        self.inner.read_enabled();
        self.inner.state.borrow().is_idle() && !self.inner.mode_pending()
    }

    /// Whether `cmd` is queued ("scheduled"): requested, not yet started.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// scheduler.schedule(&c);
    /// assert!(scheduler.is_scheduled(&c));
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_scheduled(&c));
    /// ```
    pub fn is_scheduled(&self, cmd: &Command) -> bool {
        self.phase_of(cmd) == Some(Phase::Queued)
    }

    /// Whether `cmd` is running ("mounted"): promoted or started as a child, not yet ended.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// scheduler.schedule(&c);
    /// assert!(!scheduler.is_running(&c));
    /// scheduler.run().unwrap();
    /// assert!(scheduler.is_running(&c));
    /// ```
    pub fn is_running(&self, cmd: &Command) -> bool {
        self.phase_of(cmd) == Some(Phase::Running)
    }

    fn phase_of(&self, cmd: &Command) -> Option<Phase> {
        let s = self.inner.state.borrow();
        let key = s.live_key(cmd)?;
        s.entry(key).map(|e| e.phase)
    }

    /// Queued commands, oldest first.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|_co| async {}).named("c");
    /// scheduler.schedule(&c);
    /// assert_eq!(scheduler.queued()[0].command, c);
    /// ```
    pub fn queued(&self) -> Vec<CommandInfo> {
        let s = self.inner.state.borrow();
        let keys = s.live_in(&s.queued, Phase::Queued);
        keys.into_iter()
            .filter_map(|k| s.info(k, &self.inner.clock))
            .collect()
    }

    /// Running commands, in the order they started (execution runs this list backwards).
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// scheduler.schedule(&c);
    /// scheduler.run().unwrap();
    /// assert_eq!(scheduler.running()[0].name, "c");
    /// ```
    pub fn running(&self) -> Vec<CommandInfo> {
        let s = self.inner.state.borrow();
        let keys = s.live_in(&s.running, Phase::Running);
        keys.into_iter()
            .filter_map(|k| s.info(k, &self.inner.clock))
            .collect()
    }

    /// The command that started `cmd` as its child, if `cmd` is running as a child.
    ///
    /// ```
    /// use tickstep_commands::{Command, CommandScheduler};
    /// use tickstep_commands::kernel::clock::ManualClock;
    ///
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let child = Command::no_requirements().executing(|co| async move { co.park().await; }).named("child");
    /// let inner = child.clone();
    /// let parent = Command::no_requirements()
    ///     .executing(move |co| {
    ///         let child = inner.clone();
    ///         async move { co.await_cmd(&child).await.unwrap(); }
    ///     })
    ///     .named("parent");
    /// scheduler.schedule(&parent);
    /// scheduler.run().unwrap();
    /// assert_eq!(scheduler.parent_of(&child), Some(parent));
    /// ```
    pub fn parent_of(&self, cmd: &Command) -> Option<Command> {
        let s = self.inner.state.borrow();
        let key = s.live_key(cmd)?;
        let parent = s.entry(key)?.parent?;
        s.entry(parent).map(|p| p.cmd.clone())
    }

    /// The command whose body is being polled right now, if any.
    ///
    /// ```
    /// # use tickstep_commands::CommandScheduler;
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// assert!(scheduler.current_command().is_none());
    /// ```
    pub fn current_command(&self) -> Option<Command> {
        let key = self.inner.mounted.get().as_command()?;
        self.inner.state.borrow().entry(key).map(|e| e.cmd.clone())
    }

    /// A snapshot of queued and running commands and the last `run()` time.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// scheduler.run().unwrap();
    /// let t = scheduler.telemetry();
    /// assert_eq!(t.cycle, 1);
    /// assert!(t.running.is_empty());
    /// ```
    pub fn telemetry(&self) -> Telemetry {
        let (queued, running) = (self.queued(), self.running());
        let s = self.inner.state.borrow();
        Telemetry {
            queued,
            running,
            last_run_time: s.last_run_time,
            cycle: s.cycle,
            bindings: s.bindings.len(),
            sideloads: s.sideloads.len(),
        }
    }

    /// Overwrites `out` with the same snapshot as [`CommandScheduler::telemetry`], reusing its
    /// vectors and strings: once `out` has held as many commands as now run, a snapshot
    /// allocates nothing (docs/commands.md §10.5). For telemetry published every cycle.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// scheduler.schedule(&c);
    /// scheduler.run().unwrap();
    /// let mut t = scheduler.telemetry();
    /// scheduler.cancel(&c);
    /// scheduler.telemetry_into(&mut t);
    /// assert_eq!(t, scheduler.telemetry());
    /// assert!(t.running.is_empty());
    /// ```
    pub fn telemetry_into(&self, out: &mut Telemetry) {
        let s = self.inner.state.borrow();
        let clock = &self.inner.clock;
        s.infos_into(&s.queued, Phase::Queued, clock, &mut out.queued);
        s.infos_into(&s.running, Phase::Running, clock, &mut out.running);
        out.last_run_time = s.last_run_time;
        out.cycle = s.cycle;
        out.bindings = s.bindings.len();
        out.sideloads = s.sideloads.len();
    }

    /// The scheduler's clock reading.
    ///
    /// ```
    /// # use tickstep_commands::CommandScheduler;
    /// # use tickstep_commands::kernel::clock::{Instant, ManualClock};
    /// assert_eq!(CommandScheduler::new(ManualClock::new()).now(), Instant::ZERO);
    /// ```
    pub fn now(&self) -> Instant {
        self.inner.clock.now()
    }
}

impl std::fmt::Debug for CommandScheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.inner.state.borrow();
        f.debug_struct("Scheduler")
            .field("cycle", &s.cycle)
            .field("queued", &s.queued.len())
            .field("running", &s.running.len())
            .finish_non_exhaustive()
    }
}
