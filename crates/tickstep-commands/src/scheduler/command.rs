//! Commands: a name, a priority, the mechanisms they require, and an async body.
//!
//! A [`Command`] is a reusable description. Each time it is scheduled the scheduler calls its body
//! factory with a fresh [`Coroutine`] and polls the returned future once per cycle. Cloning a
//! `Command` clones a handle to the same description: the scheduler runs at most one instance of
//! a command at a time, so scheduling it again while it runs answers
//! [`ScheduleResult::AlreadyRunning`](crate::ScheduleResult::AlreadyRunning).

use std::cell::Cell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use crate::error::BoxError;
use crate::id::Key;
use crate::scheduler::Coroutine;
use crate::scheduler::Mechanism;

/// The boxed future of one running command instance. An infallible body is polled as it is (no
/// adapter future around it), which keeps the per-cycle poll one virtual call.
pub(crate) enum BodyFuture {
    Infallible(Pin<Box<dyn Future<Output = ()>>>),
    Fallible(Pin<Box<dyn Future<Output = Result<(), BoxError>>>>),
}

impl BodyFuture {
    pub(crate) fn infallible(future: impl Future<Output = ()> + 'static) -> Self {
        BodyFuture::Infallible(Box::pin(future))
    }

    pub(crate) fn fallible(future: impl Future<Output = Result<(), BoxError>> + 'static) -> Self {
        BodyFuture::Fallible(Box::pin(future))
    }

    #[inline]
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        match self {
            BodyFuture::Infallible(future) => future.as_mut().poll(cx).map(Ok),
            BodyFuture::Fallible(future) => future.as_mut().poll(cx),
        }
    }
}
/// Builds a body future for a new instance.
pub(crate) type BodyFn = Rc<dyn Fn(Coroutine) -> BodyFuture>;

pub(crate) struct CommandDef {
    pub(crate) name: Rc<str>,
    pub(crate) priority: i32,
    pub(crate) requirements: Vec<Mechanism>,
    pub(crate) body: BodyFn,
    pub(crate) on_cancel: Option<Rc<dyn Fn()>>,
    /// The live instance, if any: (scheduler tag, slot key). Checked against the slot on use, so a
    /// stale value is harmless; it saves a map lookup per `schedule` and `is_running`.
    pub(crate) live: Cell<Option<(usize, Key)>>,
}

/// A command: name, priority, requirements and an async body, built with
/// [`Command::requiring`] or [`Command::no_requirements`].
///
/// ```
/// use std::time::Duration;
/// use tickstep_commands::{Command, Mechanism, CommandScheduler};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// let clock = ManualClock::new();
/// let scheduler = CommandScheduler::new(clock.clone());
/// let arm = Mechanism::new(&scheduler, "arm");
/// let raise = Command::requiring(&arm)
///     .executing(|co| async move { co.wait(Duration::from_millis(40)).await; })
///     .with_priority(5)
///     .named("raise");
/// assert_eq!(raise.name(), "raise");
/// assert_eq!(raise.priority(), 5);
/// assert!(raise.requires(&arm));
/// scheduler.schedule(&raise);
/// for _ in 0..3 {
///     scheduler.run().unwrap();
///     clock.advance(Duration::from_millis(20));
/// }
/// assert!(!scheduler.is_running(&raise));
/// ```
#[derive(Clone)]
pub struct Command(pub(crate) Rc<CommandDef>);

impl Command {
    /// Starts building a command that requires `mechanism` (add more with
    /// [`NeedsBody::requiring`]).
    ///
    /// ```
    /// # use tickstep_commands::{Command, Mechanism, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// # let scheduler = CommandScheduler::new(ManualClock::new());
    /// let arm = Mechanism::new(&scheduler, "arm");
    /// let wrist = Mechanism::new(&scheduler, "wrist");
    /// let stow = Command::requiring(&arm).requiring(&wrist)
    ///     .executing(|co| async move { co.yield_now().await; })
    ///     .named("stow");
    /// assert_eq!(stow.requirements().len(), 2);
    /// ```
    pub fn requiring(mechanism: &Mechanism) -> NeedsBody {
        NeedsBody {
            requirements: vec![mechanism.clone()],
        }
    }

    /// Starts building a command that requires nothing (it never conflicts).
    ///
    /// ```
    /// use tickstep_commands::Command;
    /// let log = Command::no_requirements().executing(|_co| async move {}).named("log");
    /// assert!(log.requirements().is_empty());
    /// ```
    pub fn no_requirements() -> NeedsBody {
        NeedsBody {
            requirements: Vec::new(),
        }
    }

    /// The command's name.
    ///
    /// ```
    /// # use tickstep_commands::Command;
    /// assert_eq!(Command::no_requirements().executing(|_co| async {}).named("x").name(), "x");
    /// ```
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The command's own priority (default 0; higher wins conflicts).
    ///
    /// ```
    /// # use tickstep_commands::Command;
    /// assert_eq!(Command::no_requirements().executing(|_co| async {}).named("x").priority(), 0);
    /// ```
    pub fn priority(&self) -> i32 {
        self.0.priority
    }

    /// The mechanisms the command requires, without duplicates.
    ///
    /// ```
    /// # use tickstep_commands::{Command, Mechanism, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// # let scheduler = CommandScheduler::new(ManualClock::new());
    /// let arm = Mechanism::new(&scheduler, "arm");
    /// let c = Command::requiring(&arm).requiring(&arm).executing(|_co| async {}).named("c");
    /// assert_eq!(c.requirements(), [arm]);
    /// ```
    pub fn requirements(&self) -> &[Mechanism] {
        &self.0.requirements
    }

    /// Whether the command requires `mechanism`.
    ///
    /// ```
    /// # use tickstep_commands::{Command, Mechanism, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// # let scheduler = CommandScheduler::new(ManualClock::new());
    /// let arm = Mechanism::new(&scheduler, "arm");
    /// assert!(arm.run(|_co| async {}).named("c").requires(&arm));
    /// ```
    pub fn requires(&self, mechanism: &Mechanism) -> bool {
        self.0.requirements.contains(mechanism)
    }

    /// Whether the two commands require at least one common mechanism.
    ///
    /// ```
    /// # use tickstep_commands::{Command, Mechanism, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// # let scheduler = CommandScheduler::new(ManualClock::new());
    /// let arm = Mechanism::new(&scheduler, "arm");
    /// let a = arm.run(|_co| async {}).named("a");
    /// let b = arm.run(|_co| async {}).named("b");
    /// let free = tickstep_commands::Command::no_requirements().executing(|_co| async {}).named("f");
    /// assert!(a.conflicts_with(&b));
    /// assert!(!a.conflicts_with(&free));
    /// ```
    pub fn conflicts_with(&self, other: &Command) -> bool {
        self.0
            .requirements
            .iter()
            .any(|m| other.0.requirements.contains(m))
    }

    /// Whether both handles describe the same command (not merely equal fields).
    ///
    /// ```
    /// # use tickstep_commands::Command;
    /// let a = Command::no_requirements().executing(|_co| async {}).named("a");
    /// let same = a.clone();
    /// let other = Command::no_requirements().executing(|_co| async {}).named("a");
    /// assert!(a.same_as(&same));
    /// assert!(!a.same_as(&other));
    /// ```
    pub fn same_as(&self, other: &Command) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }

    /// A copy of this command under another name: same body, priority, requirements and
    /// cancel hook, but a new command (it runs independently of the original). Renames
    /// compositions, whose names are otherwise made from their children's.
    ///
    /// ```
    /// use tickstep_commands::{compose, Command};
    /// let a = Command::no_requirements().executing(|_co| async {}).named("A");
    /// let b = Command::no_requirements().executing(|_co| async {}).named("B");
    /// let score = a.and_then(&b).named("score");
    /// assert_eq!(score.name(), "score");
    /// assert!(!score.same_as(&a.and_then(&b)));
    /// ```
    #[must_use]
    pub fn named(&self, name: impl Into<String>) -> Command {
        Command(Rc::new(CommandDef {
            name: Rc::from(name.into()),
            priority: self.0.priority,
            requirements: self.0.requirements.clone(),
            body: self.0.body.clone(),
            on_cancel: self.0.on_cancel.clone(),
            live: Cell::new(None),
        }))
    }

    pub(crate) fn shared_mechanisms(&self, other: &Command) -> Vec<String> {
        self.0
            .requirements
            .iter()
            .filter(|m| other.0.requirements.contains(m))
            .map(|m| m.name().to_owned())
            .collect()
    }
}

impl PartialEq for Command {
    fn eq(&self, other: &Self) -> bool {
        self.same_as(other)
    }
}

impl fmt::Debug for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Command")
            .field("name", &self.0.name)
            .field("priority", &self.0.priority)
            .field("requirements", &self.0.requirements)
            .finish_non_exhaustive()
    }
}

/// First builder stage: requirements chosen, body still missing.
///
/// ```
/// # use tickstep_commands::{Command, Mechanism, CommandScheduler};
/// # use tickstep_commands::kernel::clock::ManualClock;
/// # let scheduler = CommandScheduler::new(ManualClock::new());
/// let arm = Mechanism::new(&scheduler, "arm");
/// let stage = Command::requiring(&arm);
/// let cmd = stage.executing(|_co| async {}).named("noop");
/// assert!(cmd.requires(&arm));
/// ```
#[must_use = "a command builder does nothing until `.executing(..).named(..)`"]
pub struct NeedsBody {
    requirements: Vec<Mechanism>,
}

impl NeedsBody {
    /// Adds another required mechanism (duplicates are ignored).
    ///
    /// ```
    /// # use tickstep_commands::{Command, Mechanism, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// # let scheduler = CommandScheduler::new(ManualClock::new());
    /// let (arm, wrist) = (Mechanism::new(&scheduler, "arm"), Mechanism::new(&scheduler, "wrist"));
    /// let c = Command::no_requirements().requiring(&arm).requiring(&wrist).executing(|_co| async {}).named("c");
    /// assert!(c.requires(&arm) && c.requires(&wrist));
    /// ```
    pub fn requiring(mut self, mechanism: &Mechanism) -> Self {
        if !self.requirements.contains(mechanism) {
            self.requirements.push(mechanism.clone());
        }
        self
    }

    /// Sets the body: a closure called with a fresh [`Coroutine`] each time the command starts,
    /// returning the future to poll. The body cannot fail (a body that loops forever fits too);
    /// see [`NeedsBody::executing_fallible`] for one that can.
    ///
    /// ```
    /// use tickstep_commands::Command;
    /// let spin = Command::no_requirements()
    ///     .executing(|co| async move {
    ///         loop {
    ///             co.yield_now().await;
    ///         }
    ///     })
    ///     .named("spin");
    /// assert_eq!(spin.name(), "spin");
    /// ```
    pub fn executing<F, Fut>(self, body: F) -> CommandBuilder
    where
        F: Fn(Coroutine) -> Fut + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        self.with_body(Rc::new(move |co| BodyFuture::infallible(body(co))))
    }

    /// Sets a body that may fail: its future returns `Result<(), BoxError>`, so `?` works on any
    /// error type. An `Err` ends the command with `CompletedWithError`, cancels its root
    /// composition and makes [`CommandScheduler::run`](crate::CommandScheduler::run) return a
    /// [`RunError`](crate::RunError).
    ///
    /// ```
    /// use tickstep_commands::Command;
    /// let checked = Command::no_requirements()
    ///     .executing_fallible(|co| async move {
    ///         co.yield_now().await;
    ///         let volts: f64 = "12.4".parse()?;
    ///         if volts < 11.0 {
    ///             return Err("battery low".into());
    ///         }
    ///         Ok(())
    ///     })
    ///     .named("checked");
    /// assert_eq!(checked.name(), "checked");
    /// ```
    pub fn executing_fallible<F, Fut>(self, body: F) -> CommandBuilder
    where
        F: Fn(Coroutine) -> Fut + 'static,
        Fut: Future<Output = Result<(), BoxError>> + 'static,
    {
        self.with_body(Rc::new(move |co| BodyFuture::fallible(body(co))))
    }

    fn with_body(self, body: BodyFn) -> CommandBuilder {
        CommandBuilder {
            requirements: self.requirements,
            body,
            priority: 0,
            until: None,
            on_cancel: None,
        }
    }
}

/// Second builder stage: body set; optional priority, end condition and cancel hook; finish with
/// [`CommandBuilder::named`].
///
/// ```
/// use std::{cell::Cell, rc::Rc};
/// use tickstep_commands::{Command, CommandScheduler};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// let scheduler = CommandScheduler::new(ManualClock::new());
/// let stop = Rc::new(Cell::new(false));
/// let flag = stop.clone();
/// let spin = Command::no_requirements()
///     .executing(|co| async move { co.park().await; })
///     .until(move || flag.get())
///     .named("spin");
/// scheduler.schedule(&spin);
/// scheduler.run().unwrap();
/// assert!(scheduler.is_running(&spin));
/// stop.set(true);
/// scheduler.run().unwrap();
/// assert!(!scheduler.is_running(&spin));
/// ```
#[must_use = "a command builder does nothing until `.named(..)`"]
pub struct CommandBuilder {
    requirements: Vec<Mechanism>,
    body: BodyFn,
    priority: i32,
    until: Option<Rc<dyn Fn() -> bool>>,
    on_cancel: Option<Rc<dyn Fn()>>,
}

impl CommandBuilder {
    /// Sets the priority (default 0). In a conflict the higher priority wins; ties go to the
    /// newer command.
    ///
    /// ```
    /// # use tickstep_commands::Command;
    /// let c = Command::no_requirements().executing(|_co| async {}).with_priority(-3).named("c");
    /// assert_eq!(c.priority(), -3);
    /// ```
    pub fn with_priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }

    /// Ends the command (as Completed) at the first mount where `condition` returns true. The
    /// condition is checked before the body is polled, once per cycle.
    ///
    /// ```
    /// # use tickstep_commands::Command;
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).until(|| true).named("c");
    /// # let _ = c;
    /// ```
    pub fn until(mut self, condition: impl Fn() -> bool + 'static) -> Self {
        let condition: Rc<dyn Fn() -> bool> = Rc::new(condition);
        self.until = Some(match self.until.take() {
            None => condition,
            Some(previous) => Rc::new(move || previous() || condition()),
        });
        self
    }

    /// Runs `hook` when a running instance is canceled (interrupted, canceled by hand, by its
    /// parent or its scope). Never on completion or error, never for a merely queued instance.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use tickstep_commands::{Command, CommandScheduler};
    /// use tickstep_commands::kernel::clock::ManualClock;
    ///
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let hooked = Rc::new(Cell::new(0));
    /// let count = hooked.clone();
    /// let c = Command::no_requirements()
    ///     .executing(|co| async move { co.park().await; })
    ///     .on_cancel(move || count.set(count.get() + 1))
    ///     .named("c");
    /// scheduler.schedule(&c);
    /// scheduler.run().unwrap();
    /// scheduler.cancel(&c);
    /// assert_eq!(hooked.get(), 1);
    /// ```
    pub fn on_cancel(mut self, hook: impl Fn() + 'static) -> Self {
        self.on_cancel = Some(Rc::new(hook));
        self
    }

    /// Names the command and finishes building it.
    ///
    /// ```
    /// # use tickstep_commands::Command;
    /// assert_eq!(Command::no_requirements().executing(|_co| async {}).named("done").name(), "done");
    /// ```
    pub fn named(self, name: impl Into<String>) -> Command {
        let body = match self.until {
            None => self.body,
            Some(condition) => {
                let inner = self.body;
                Rc::new(move |co| {
                    BodyFuture::fallible(Until {
                        body: inner(co),
                        condition: condition.clone(),
                    })
                }) as BodyFn
            }
        };
        Command(Rc::new(CommandDef {
            name: Rc::from(name.into()),
            priority: self.priority,
            requirements: self.requirements,
            body,
            on_cancel: self.on_cancel,
            live: Cell::new(None),
        }))
    }
}

/// A body that ends early, as completed, when its condition turns true.
struct Until {
    body: BodyFuture,
    condition: Rc<dyn Fn() -> bool>,
}

impl Future for Until {
    type Output = Result<(), BoxError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if (self.condition)() {
            return Poll::Ready(Ok(()));
        }
        self.body.poll(cx)
    }
}

pub(crate) fn build(
    name: String,
    priority: i32,
    requirements: Vec<Mechanism>,
    body: BodyFn,
) -> Command {
    Command(Rc::new(CommandDef {
        name: Rc::from(name),
        priority,
        requirements,
        body,
        on_cancel: None,
        live: Cell::new(None),
    }))
}
