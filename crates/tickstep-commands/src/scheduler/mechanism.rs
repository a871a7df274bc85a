//! Mechanisms: the hardware a command requires. At most one command owns a mechanism at a time
//! (a child may use what its ancestors own).

use std::fmt;
use std::rc::Rc;

use super::{Mechanism, MechanismData};
use crate::error::DefaultCommandError;
use crate::scheduler::CommandScheduler;
use crate::scheduler::Coroutine;
use crate::scheduler::command::{Command, CommandBuilder};

impl Mechanism {
    /// Registers a mechanism named `name` with `scheduler`.
    ///
    /// ```
    /// # use tickstep_commands::{Mechanism, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let drive = Mechanism::new(&scheduler, "drive");
    /// assert_eq!(drive.to_string(), "drive");
    /// ```
    pub fn new(scheduler: &CommandScheduler, name: impl Into<String>) -> Self {
        let name: Rc<str> = Rc::from(name.into());
        let (index, tag) = scheduler.inner.add_mechanism();
        Mechanism(Rc::new(MechanismData {
            name,
            index,
            tag,
            scheduler: Rc::downgrade(&scheduler.inner),
        }))
    }

    /// The mechanism's name.
    ///
    /// ```
    /// # use tickstep_commands::{Mechanism, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// # let scheduler = CommandScheduler::new(ManualClock::new());
    /// assert_eq!(Mechanism::new(&scheduler, "lift").name(), "lift");
    /// ```
    pub fn name(&self) -> &str {
        &self.0.name
    }

    pub(crate) fn index(&self) -> usize {
        self.0.index
    }

    pub(crate) fn tag(&self) -> usize {
        self.0.tag
    }

    /// Starts building a command that requires this mechanism and runs `body`.
    ///
    /// ```
    /// # use tickstep_commands::{Mechanism, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// # let scheduler = CommandScheduler::new(ManualClock::new());
    /// let arm = Mechanism::new(&scheduler, "arm");
    /// let raise = arm.run(|co| async move { co.yield_now().await; }).named("raise");
    /// assert!(raise.requires(&arm));
    /// ```
    pub fn run<F, Fut>(&self, body: F) -> CommandBuilder
    where
        F: Fn(Coroutine) -> Fut + 'static,
        Fut: std::future::Future<Output = ()> + 'static,
    {
        Command::requiring(self).executing(body)
    }

    /// Like [`Mechanism::run`] with a body that may fail (see
    /// [`NeedsBody::executing_fallible`](crate::NeedsBody::executing_fallible)).
    ///
    /// ```
    /// # use tickstep_commands::{Mechanism, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// # let scheduler = CommandScheduler::new(ManualClock::new());
    /// let arm = Mechanism::new(&scheduler, "arm");
    /// let home = arm.run_fallible(|_co| async move { Err("limit switch missing".into()) }).named("home");
    /// scheduler.schedule(&home);
    /// assert!(scheduler.run().is_err());
    /// ```
    pub fn run_fallible<F, Fut>(&self, body: F) -> CommandBuilder
    where
        F: Fn(Coroutine) -> Fut + 'static,
        Fut: std::future::Future<Output = Result<(), crate::BoxError>> + 'static,
    {
        Command::requiring(self).executing_fallible(body)
    }

    /// Starts building a command that requires this mechanism and calls `step` once per cycle
    /// until canceled or interrupted.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// # use tickstep_commands::{Mechanism, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let arm = Mechanism::new(&scheduler, "arm");
    /// let steps = Rc::new(Cell::new(0));
    /// let s = steps.clone();
    /// let hold = arm.run_repeatedly(move || s.set(s.get() + 1)).named("hold");
    /// scheduler.schedule(&hold);
    /// for _ in 0..3 { scheduler.run().unwrap(); }
    /// assert_eq!(steps.get(), 3);
    /// ```
    pub fn run_repeatedly(&self, step: impl Fn() + 'static) -> CommandBuilder {
        let step = Rc::new(step);
        self.run(move |co| {
            let step = step.clone();
            crate::scheduler::coroutine::repeat_forever(co, move || step())
        })
    }

    /// A command that requires this mechanism, does nothing and never ends, at the lowest
    /// priority (`i32::MIN`): it keeps the mechanism from its default command until anything
    /// else wants it. Named `"<mechanism> idle"`.
    ///
    /// ```
    /// # use tickstep_commands::{Mechanism, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// # let scheduler = CommandScheduler::new(ManualClock::new());
    /// let arm = Mechanism::new(&scheduler, "arm");
    /// let idle = arm.idle();
    /// assert_eq!(idle.name(), "arm idle");
    /// assert_eq!(idle.priority(), i32::MIN);
    /// ```
    pub fn idle(&self) -> Command {
        self.run(|co| async move {
            co.park().await;
        })
        .with_priority(i32::MIN)
        .named(format!("{} idle", self.name()))
    }

    /// Sets this mechanism's default command; see
    /// [`CommandScheduler::set_default_command`].
    ///
    /// # Errors
    ///
    /// [`DefaultCommandError::WrongRequirements`] unless `cmd` requires exactly this mechanism.
    ///
    /// # Panics
    ///
    /// If the scheduler was dropped.
    ///
    /// ```
    /// # use tickstep_commands::{Mechanism, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// # let scheduler = CommandScheduler::new(ManualClock::new());
    /// let arm = Mechanism::new(&scheduler, "arm");
    /// arm.set_default_command(&arm.idle()).unwrap();
    /// assert_eq!(arm.default_command().unwrap().name(), "arm idle");
    /// ```
    #[track_caller]
    pub fn set_default_command(&self, cmd: &Command) -> Result<(), DefaultCommandError> {
        self.scheduler().set_default_command(self, cmd)
    }

    /// This mechanism's default command, if set.
    ///
    /// # Panics
    ///
    /// If the scheduler was dropped.
    ///
    /// ```
    /// # use tickstep_commands::{Mechanism, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// # let scheduler = CommandScheduler::new(ManualClock::new());
    /// assert!(Mechanism::new(&scheduler, "arm").default_command().is_none());
    /// ```
    #[track_caller]
    pub fn default_command(&self) -> Option<Command> {
        self.scheduler().default_command(self)
    }

    /// Whether commands that require this mechanism may be scheduled and keep running while the
    /// robot is disabled (docs/commands.md §12.2). False unless set: a mechanism that moves
    /// something must not start moving the moment the robot is enabled because a button was
    /// pressed while it was disabled.
    ///
    /// # Panics
    ///
    /// If the scheduler was dropped.
    ///
    /// ```
    /// # use tickstep_commands::{Mechanism, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// # let scheduler = CommandScheduler::new(ManualClock::new());
    /// let leds = Mechanism::new(&scheduler, "leds");
    /// assert!(!leds.controllable_while_disabled());
    /// leds.set_controllable_while_disabled(true);
    /// assert!(leds.controllable_while_disabled());
    /// ```
    #[track_caller]
    pub fn controllable_while_disabled(&self) -> bool {
        let inner = self.scheduler().inner;
        let s = inner.state.borrow();
        s.mechs[self.index()].controllable_while_disabled
    }

    /// Says whether commands that require this mechanism may run while the robot is disabled
    /// (lights, a gyro reset, a display); see [`Mechanism::controllable_while_disabled`]. Takes
    /// effect for the next `schedule` and the next time the robot becomes disabled.
    ///
    /// # Panics
    ///
    /// If the scheduler was dropped.
    ///
    /// ```
    /// # use tickstep_commands::{Mechanism, CommandScheduler, RobotStateCell, ScheduleResult};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// scheduler.set_robot_state(RobotStateCell::new()); // disabled
    /// let leds = Mechanism::new(&scheduler, "leds");
    /// leds.set_controllable_while_disabled(true);
    /// let blink = leds.run(|co| async move { co.park().await; }).named("blink");
    /// assert_eq!(scheduler.schedule(&blink), ScheduleResult::Success);
    /// ```
    #[track_caller]
    pub fn set_controllable_while_disabled(&self, controllable: bool) {
        let inner = self.scheduler().inner;
        inner.state.borrow_mut().mechs[self.index()].controllable_while_disabled = controllable;
    }

    /// The scheduler this mechanism belongs to.
    ///
    /// # Panics
    ///
    /// If the scheduler was dropped.
    ///
    /// ```
    /// # use tickstep_commands::{Mechanism, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let arm = Mechanism::new(&scheduler, "arm");
    /// arm.scheduler().run().unwrap();
    /// ```
    #[track_caller]
    pub fn scheduler(&self) -> CommandScheduler {
        CommandScheduler {
            inner: self
                .0
                .scheduler
                .upgrade()
                .expect("the scheduler of this mechanism was dropped"),
        }
    }
}

impl PartialEq for Mechanism {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Mechanism {}

impl fmt::Debug for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Mechanism({})", self.0.name)
    }
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.name)
    }
}
