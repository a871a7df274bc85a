//! The public methods of [`CommandScheduler`].

use std::future::Future;
use std::panic::Location;
use std::rc::Rc;
use std::time::Duration;

use tickstep_kernel::AnyClock;
use tickstep_kernel::clock::{Clock, Instant};

use super::CommandScheduler;
use super::Inner;
use super::state::{Listen, Phase, Sideload};
use crate::error::{DefaultCommandError, RunError};
use crate::event::Event;
use crate::id::Mounted;
use crate::run::Run;
use crate::schedule_result::ScheduleResult;
use crate::scheduler::Coroutine;
use crate::scheduler::Mechanism;
use crate::scheduler::command::{BodyFuture, Command};
use crate::scheduler::telemetry::{CommandInfo, Telemetry};
use crate::scope::OpMode;

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

    /// Sets the command that runs whenever `mechanism` is idle (queued in the scheduling phase of
    /// any cycle that starts with no command owning or queued for it). It returns after an
    /// interruption once the mechanism is free again.
    ///
    /// Defaults are scoped like bindings: set inside a command, it starts at once as that
    /// command's child and applies while the command runs; set outside any command while an
    /// opmode is active, it applies until the opmode changes; otherwise it is global. The
    /// narrowest live default applies; when its scope ends the wider one comes back. Setting a
    /// default again in the same scope replaces it, and a running instance of the replaced one
    /// is stopped at the next default-command step.
    ///
    /// # Errors
    ///
    /// [`DefaultCommandError::WrongRequirements`] unless `cmd` requires exactly `mechanism`.
    ///
    /// # Panics
    ///
    /// If `mechanism` belongs to another scheduler.
    ///
    /// ```
    /// use tickstep_commands::{Mechanism, CommandScheduler};
    /// use tickstep_commands::kernel::clock::ManualClock;
    ///
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let arm = Mechanism::new(&scheduler, "arm");
    /// let hold = arm.run(|co| async move { co.park().await; }).named("hold");
    /// scheduler.set_default_command(&arm, &hold).unwrap();
    /// scheduler.run().unwrap();
    /// assert!(scheduler.is_running(&hold));
    /// ```
    #[track_caller]
    pub fn set_default_command(
        &self,
        mechanism: &Mechanism,
        cmd: &Command,
    ) -> Result<(), DefaultCommandError> {
        let at = Location::caller();
        let s = self.inner.state.borrow();
        assert!(
            mechanism.tag() == s.tag,
            "mechanism `{}` belongs to another scheduler",
            mechanism.name()
        );
        if cmd.requirements() != std::slice::from_ref(mechanism) {
            return Err(DefaultCommandError::WrongRequirements {
                mechanism: mechanism.name().to_owned(),
                command: cmd.name().to_owned(),
                requirements: cmd
                    .requirements()
                    .iter()
                    .map(|m| m.name().to_owned())
                    .collect(),
            });
        }
        drop(s);
        self.inner.set_default(mechanism.index(), cmd, at);
        Ok(())
    }

    /// The default command of `mechanism`, if set.
    ///
    /// ```
    /// # use tickstep_commands::{Mechanism, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let arm = Mechanism::new(&scheduler, "arm");
    /// assert!(scheduler.default_command(&arm).is_none());
    /// ```
    pub fn default_command(&self, mechanism: &Mechanism) -> Option<Command> {
        let s = self.inner.state.borrow();
        if mechanism.tag() != s.tag {
            return None;
        }
        let live = |d: &&super::state::DefaultBinding| s.scope_alive(d.scope);
        s.mechs[mechanism.index()]
            .defaults
            .iter()
            .rev()
            .find(live)
            .map(|d| d.cmd.clone())
    }

    /// Adds a sideload: a coroutine polled once per cycle in the sideload phase, before triggers.
    /// It is not a command (no requirements, no events); use it for telemetry or sensor
    /// processing, not actuators. It ends when its body returns, or with the scope it was created
    /// in (a command, an opmode, or global). Its coroutine can yield, wait and `fork` (which schedules the commands in the
    /// sideload's scope: they outlive the sideload; a refusal is returned, not fatal).
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use tickstep_commands::CommandScheduler;
    /// use tickstep_commands::kernel::clock::ManualClock;
    ///
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let ticks = Rc::new(Cell::new(0));
    /// let t = ticks.clone();
    /// scheduler.sideload(move |co| async move {
    ///     for _ in 0..2 {
    ///         t.set(t.get() + 1);
    ///         co.yield_now().await;
    ///     }
    /// });
    /// for _ in 0..5 { scheduler.run().unwrap(); }
    /// assert_eq!(ticks.get(), 2);
    /// ```
    pub fn sideload<F, Fut>(&self, body: F)
    where
        F: FnOnce(Coroutine) -> Fut,
        Fut: Future<Output = ()> + 'static,
    {
        let id = {
            let mut s = self.inner.state.borrow_mut();
            let id = s.next_sideload;
            s.next_sideload += 1;
            id
        };
        let fut = body(Coroutine::new(&self.inner, Mounted::sideload(id)));
        let future = BodyFuture::infallible(fut);
        let mut s = self.inner.state.borrow_mut();
        let scope = s.scope_for(self.inner.mounted.get());
        s.sideloads.push(Sideload {
            id,
            scope,
            future: Some(future),
        });
    }

    /// Runs `f` once per cycle in the sideload phase (a sideload that loops forever).
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use tickstep_commands::CommandScheduler;
    /// use tickstep_commands::kernel::clock::ManualClock;
    ///
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let n = Rc::new(Cell::new(0));
    /// let m = n.clone();
    /// scheduler.add_periodic(move || m.set(m.get() + 1));
    /// for _ in 0..3 { scheduler.run().unwrap(); }
    /// assert_eq!(n.get(), 3);
    /// ```
    pub fn add_periodic(&self, f: impl FnMut() + 'static) {
        self.sideload(move |co| crate::scheduler::coroutine::repeat_forever(co, f));
    }

    /// Adds an event listener. Listeners observe; they cannot change or suppress what happened
    /// (a failing body still makes `run()` fail). They may call back into the scheduler.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use tickstep_commands::{Command, CommandScheduler};
    /// use tickstep_commands::kernel::clock::ManualClock;
    ///
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let seen = Rc::new(Cell::new(0));
    /// let s = seen.clone();
    /// scheduler.on_event(move |_| s.set(s.get() + 1));
    /// scheduler.schedule(&Command::no_requirements().executing(|_co| async {}).named("c"));
    /// assert_eq!(seen.get(), 1); // Scheduled
    /// ```
    pub fn on_event(&self, listener: impl Fn(&Event) + 'static) {
        self.add_listener(Rc::new(listener), false);
    }

    /// Adds a listener for lifecycle events only: everything but the per-cycle
    /// [`EventKind::Mounted`](crate::EventKind::Mounted) and
    /// [`EventKind::Yielded`](crate::EventKind::Yielded). With only such listeners the scheduler
    /// does not even build the per-cycle events, so a log of what started and ended costs
    /// nothing per running command per cycle.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// use tickstep_commands::{Command, CommandScheduler};
    /// use tickstep_commands::kernel::clock::ManualClock;
    ///
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let log = Rc::new(RefCell::new(Vec::new()));
    /// let sink = log.clone();
    /// scheduler.on_lifecycle_event(move |e| sink.borrow_mut().push(e.to_string()));
    /// let blink = Command::no_requirements().executing(|co| async move { co.yield_now().await; }).named("blink");
    /// scheduler.schedule(&blink);
    /// scheduler.run().unwrap();
    /// scheduler.run().unwrap();
    /// assert_eq!(*log.borrow(), ["Scheduled blink", "Completed blink"]);
    /// ```
    pub fn on_lifecycle_event(&self, listener: impl Fn(&Event) + 'static) {
        self.add_listener(Rc::new(listener), true);
    }

    fn add_listener(&self, listener: Rc<dyn Fn(&Event)>, lifecycle_only: bool) {
        let mut listeners = self.inner.listeners.borrow_mut();
        Rc::make_mut(&mut listeners).push(super::inner::Listener {
            call: listener,
            lifecycle_only,
        });
        let mut s = self.inner.state.borrow_mut();
        let wanted = if lifecycle_only {
            Listen::Lifecycle
        } else {
            Listen::Everything
        };
        s.listen = s.listen.max(wanted);
        // Added mid-run: event timestamps resume from the latest reading (docs/commands.md §10.4).
        s.now = s.current_now(&self.inner.clock);
    }

    /// Enters (`Some`) or leaves (`None`) an opmode. Bindings, sideloads, default commands and
    /// commands scheduled outside any command while an opmode is active belong to it and die at
    /// the next `run()` after the opmode changes (a dying binding cancels what it scheduled).
    ///
    /// ```
    /// use tickstep_commands::{OpMode, CommandScheduler};
    /// use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// scheduler.set_opmode(Some(OpMode::new(1)));
    /// assert_eq!(scheduler.opmode(), Some(OpMode::new(1)));
    /// ```
    pub fn set_opmode(&self, opmode: Option<OpMode>) {
        self.inner.enter_opmode(opmode);
    }

    /// Installs what the host says about the robot (docs/commands.md §12.1): whether it is
    /// enabled and, if the host wants the scheduler to follow it, the robot mode. Read at once,
    /// then at the start of every `run()` and at every `schedule` made outside `run()`.
    ///
    /// ```
    /// use tickstep_commands::{CommandScheduler, Mechanism, OpMode, RobotStateCell, ScheduleResult};
    /// use tickstep_commands::kernel::clock::ManualClock;
    ///
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let robot = RobotStateCell::new(); // a robot boots disabled
    /// scheduler.set_robot_state(robot.clone());
    /// let arm = Mechanism::new(&scheduler, "arm");
    /// let raise = arm.run(|co| async move { co.park().await; }).named("raise");
    /// assert!(matches!(scheduler.schedule(&raise), ScheduleResult::RobotDisabled { .. }));
    ///
    /// robot.set(true, OpMode::TELEOP);
    /// assert_eq!(scheduler.schedule(&raise), ScheduleResult::Success);
    /// scheduler.run().unwrap();
    /// assert_eq!(scheduler.opmode(), Some(OpMode::TELEOP));
    /// robot.disable();
    /// scheduler.run().unwrap(); // canceled before it runs another step
    /// assert!(!scheduler.is_running(&raise));
    /// ```
    pub fn set_robot_state(&self, robot: impl crate::RobotState + 'static) {
        *self.inner.robot.borrow_mut() = Rc::new(robot);
        self.inner.read_enabled();
    }

    /// Whether the robot is enabled, as the installed [`RobotState`](crate::RobotState) says now
    /// (always true without one).
    ///
    /// ```
    /// # use tickstep_commands::CommandScheduler;
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// assert!(CommandScheduler::new(ManualClock::new()).is_enabled());
    /// ```
    pub fn is_enabled(&self) -> bool {
        self.inner.read_enabled()
    }

    /// Registers what robot mode `mode` sets up each time it starts (docs/commands.md §12.6):
    /// `setup` runs when the opmode becomes `mode` (by [`CommandScheduler::set_opmode`] or by
    /// following the [`RobotState`](crate::RobotState)), outside any command and with `mode`
    /// active, so the default commands, bindings, sideloads and commands it makes belong to the
    /// mode and are torn down when it ends. Setups of one mode run in the order registered.
    ///
    /// ```
    /// use tickstep_commands::{CommandScheduler, Mechanism, OpMode};
    /// use tickstep_commands::kernel::clock::ManualClock;
    ///
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let drive = Mechanism::new(&scheduler, "drive");
    /// let d = drive.clone();
    /// let cruise = drive.run(|co| async move { co.park().await; }).named("cruise");
    /// scheduler.on_mode(OpMode::TELEOP, move |_| d.set_default_command(&cruise).unwrap());
    ///
    /// scheduler.set_opmode(Some(OpMode::TELEOP));
    /// assert_eq!(drive.default_command().unwrap().name(), "cruise");
    /// scheduler.set_opmode(Some(OpMode::AUTONOMOUS));
    /// scheduler.run().unwrap(); // teleop's default ended with teleop
    /// assert!(drive.default_command().is_none());
    /// ```
    pub fn on_mode(&self, mode: OpMode, setup: impl Fn(&CommandScheduler) + 'static) {
        let mut setups = self.inner.mode_setups.borrow_mut();
        Rc::make_mut(&mut setups).push(super::modes::ModeSetup {
            mode,
            setup: Rc::new(setup),
        });
    }

    /// The active opmode.
    ///
    /// ```
    /// # use tickstep_commands::CommandScheduler;
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// assert_eq!(CommandScheduler::new(ManualClock::new()).opmode(), None);
    /// ```
    pub fn opmode(&self) -> Option<OpMode> {
        self.inner.state.borrow().opmode
    }

    /// Sets the greedy-loop watchdog: a mount longer than `limit` is reported by name (an
    /// `Overran` event and a `tracing` warning). `None` turns it off. Default
    /// [`DEFAULT_WATCHDOG_LIMIT`](crate::DEFAULT_WATCHDOG_LIMIT).
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use tickstep_commands::CommandScheduler;
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// scheduler.set_watchdog_limit(Some(Duration::from_millis(5)));
    /// ```
    pub fn set_watchdog_limit(&self, limit: Option<Duration>) {
        let raw = limit.map_or(u64::MAX, |limit| self.inner.clock.raw_of(limit));
        let mut s = self.inner.state.borrow_mut();
        s.watchdog = limit;
        s.watchdog_raw = raw;
    }

    /// Turns per-mount timing on (default) or off. Off removes the clock read per mount: the
    /// watchdog and per-command run times stop; the whole-`run()` time stays.
    ///
    /// ```
    /// # use tickstep_commands::CommandScheduler;
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// scheduler.set_mount_timing(false);
    /// ```
    pub fn set_mount_timing(&self, on: bool) {
        self.inner.state.borrow_mut().timing = on;
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
