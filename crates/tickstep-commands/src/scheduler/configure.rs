//! The public methods of [`CommandScheduler`] a program calls to set it up: default commands,
//! sideloads and periodic callbacks, event listeners, the robot's state and modes, the watchdog
//! and mount timing. Running it and asking it questions is `api.rs`.

use std::future::Future;
use std::panic::Location;
use std::rc::Rc;
use std::time::Duration;

use super::CommandScheduler;
use super::state::{Listen, Sideload};
use crate::error::DefaultCommandError;
use crate::event::Event;
use crate::id::Mounted;
use crate::scheduler::Coroutine;
use crate::scheduler::Mechanism;
use crate::scheduler::command::{BodyFuture, Command};
use crate::scope::OpMode;

impl CommandScheduler {
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
        Rc::make_mut(&mut setups).push(super::cycle_phases::ModeSetup {
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
}
