//! Triggers: boolean signals polled once per cycle, bound to commands.
//!
//! A [`Trigger`] wraps a signal closure. Combinators ([`Trigger::and`], [`Trigger::debounce`],
//! [`Trigger::multi_press`], …) build new triggers over it; each node remembers its value for the
//! current cycle, so a trigger shared by several bindings or combinators is evaluated once per
//! cycle and stateful combinators see every cycle exactly once.
//!
//! **Edges on the first poll** (docs/commands.md §7.2). A binding has no previous value before its first poll. A signal
//! that is already true on the first poll counts as a rising edge (`on_true`, `while_true`,
//! `toggle_on_true` fire), so a condition true when bound is honored, as in the reference. A
//! signal false on the first poll is *not* a falling edge (`on_false` and `toggle_on_false` wait
//! for a real true→false change): nothing fell. Level bindings follow the level: `while_false`
//! and `retry_while_false` start on a first poll that reads false.
//!
//! A binding holds only the last instance it scheduled, so a global binding fired thousands of
//! times still costs one entry (the reference leaks one scope entry per schedule).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::panic::Location;
use std::rc::{Rc, Weak};
use std::time::Duration;

use tickstep_kernel::clock::Instant;

use crate::error::TriggerError;
use crate::scheduler::CommandScheduler;
use crate::scheduler::Inner;
use crate::scheduler::binding::Kind;
use crate::scheduler::command::Command;
use crate::trigger_node::{Ctx, Node};

/// A boolean signal polled once per scheduler cycle, to bind commands to.
///
/// ```
/// use std::{cell::Cell, rc::Rc};
/// use tickstep_commands::{Command, CommandScheduler, Trigger};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// let scheduler = CommandScheduler::new(ManualClock::new());
/// let pressed = Rc::new(Cell::new(false));
/// let button = { let p = pressed.clone(); Trigger::new(&scheduler, move || p.get()) };
/// let shoot = Command::no_requirements().executing(|co| async move { co.park().await; }).named("shoot");
/// button.while_true(&shoot);
/// scheduler.run().unwrap();
/// assert!(!scheduler.is_running(&shoot));
/// pressed.set(true);
/// scheduler.run().unwrap();
/// assert!(scheduler.is_running(&shoot));
/// pressed.set(false);
/// scheduler.run().unwrap();
/// assert!(!scheduler.is_running(&shoot));
/// ```
#[derive(Clone)]
pub struct Trigger {
    node: Rc<Node>,
    scheduler: Weak<Inner>,
    /// Whether bindings count a first poll reading false as a falling edge.
    first_low_falls: bool,
}

impl Trigger {
    /// A trigger on `signal`, polled by `scheduler`.
    ///
    /// ```
    /// # use tickstep_commands::{CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let always = Trigger::new(&scheduler, || true);
    /// # let _ = always;
    /// ```
    pub fn new(scheduler: &CommandScheduler, signal: impl Fn() -> bool + 'static) -> Self {
        Trigger {
            node: Node::new(move |_| signal()),
            scheduler: Rc::downgrade(&scheduler.inner),
            first_low_falls: false,
        }
    }

    fn derive(&self, eval: impl Fn(&Ctx) -> bool + 'static) -> Trigger {
        Trigger {
            node: Node::new(eval),
            scheduler: self.scheduler.clone(),
            first_low_falls: self.first_low_falls,
        }
    }

    /// The same signal, but bindings made through the returned trigger treat a first poll that
    /// reads false as a falling edge, as the reference does: `on_false` schedules and
    /// `toggle_on_false` toggles when the signal starts low. By default a first low poll is not a
    /// falling edge (nothing fell: a button that was never pressed was not released), which is
    /// what most bindings want; choose this for code ported from the reference that relies on it.
    /// Triggers derived from the returned one keep the choice.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// Trigger::new(&scheduler, || false).first_low_is_falling_edge().on_false(&c);
    /// scheduler.run().unwrap();
    /// assert!(scheduler.is_running(&c));
    /// ```
    #[must_use]
    pub fn first_low_is_falling_edge(&self) -> Trigger {
        Trigger {
            first_low_falls: true,
            ..self.clone()
        }
    }

    #[track_caller]
    fn bind(&self, kind: Kind, command: &Command) -> &Self {
        let at = Location::caller();
        let inner = self
            .scheduler
            .upgrade()
            .expect("the scheduler of this trigger was dropped");
        inner.check_mechanisms(command);
        inner.add_binding(self.node.clone(), kind, command, at, self.first_low_falls);
        self
    }

    /// The trigger's value in the scheduler's current cycle: the value its bindings saw in the
    /// last trigger phase, or, if nothing read it in this cycle yet, the signal read now (and
    /// remembered for the rest of the cycle). Stateful combinators (`debounce`, `multi_press`, …)
    /// only advance when read, so read them every cycle or bind them. Lets a trigger serve as a
    /// plain condition, e.g. for a [`StateMachine`](crate::compose::StateMachine) transition.
    ///
    /// # Panics
    ///
    /// If the scheduler was dropped.
    ///
    /// ```
    /// # use tickstep_commands::{CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let never = Trigger::new(&scheduler, || false);
    /// assert!(!never.get());
    /// assert!(never.not().get());
    /// ```
    #[track_caller]
    pub fn get(&self) -> bool {
        let inner = self
            .scheduler
            .upgrade()
            .expect("the scheduler of this trigger was dropped");
        let ctx = inner.trigger_ctx();
        self.node.value(&ctx)
    }

    /// Schedules `command` on each rising edge.
    ///
    /// # Panics
    ///
    /// If the scheduler was dropped or `command` requires another scheduler's mechanism.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// Trigger::new(&scheduler, || true).on_true(&c);
    /// scheduler.run().unwrap(); // true on the first poll counts as a rising edge
    /// assert!(scheduler.is_running(&c));
    /// ```
    #[track_caller]
    pub fn on_true(&self, command: &Command) -> &Self {
        self.bind(Kind::OnTrue, command)
    }

    /// Schedules `command` on each falling edge (true → false; not on a first poll reading false).
    ///
    /// # Panics
    ///
    /// If the scheduler was dropped or `command` requires another scheduler's mechanism.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// Trigger::new(&scheduler, || false).on_false(&c);
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_running(&c));
    /// ```
    #[track_caller]
    pub fn on_false(&self, command: &Command) -> &Self {
        self.bind(Kind::OnFalse, command)
    }

    /// Schedules `command` on a rising edge and cancels it on the falling edge. It is not
    /// restarted if it ends while the signal stays true (see [`Trigger::retry_while_true`]).
    ///
    /// # Panics
    ///
    /// If the scheduler was dropped or `command` requires another scheduler's mechanism.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// Trigger::new(&scheduler, || true).while_true(&c);
    /// scheduler.run().unwrap();
    /// assert!(scheduler.is_running(&c));
    /// ```
    #[track_caller]
    pub fn while_true(&self, command: &Command) -> &Self {
        self.bind(Kind::WhileTrue, command)
    }

    /// Schedules `command` when the signal reads false (first poll or a falling edge) and
    /// cancels it on the rising edge.
    ///
    /// # Panics
    ///
    /// If the scheduler was dropped or `command` requires another scheduler's mechanism.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// Trigger::new(&scheduler, || false).while_false(&c);
    /// scheduler.run().unwrap();
    /// assert!(scheduler.is_running(&c));
    /// ```
    #[track_caller]
    pub fn while_false(&self, command: &Command) -> &Self {
        self.bind(Kind::WhileFalse, command)
    }

    /// On each rising edge: cancels `command` if it is queued or running, schedules it otherwise.
    ///
    /// # Panics
    ///
    /// If the scheduler was dropped or `command` requires another scheduler's mechanism.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// Trigger::new(&scheduler, || true).toggle_on_true(&c);
    /// scheduler.run().unwrap();
    /// assert!(scheduler.is_running(&c));
    /// ```
    #[track_caller]
    pub fn toggle_on_true(&self, command: &Command) -> &Self {
        self.bind(Kind::ToggleOnTrue, command)
    }

    /// On each falling edge: cancels `command` if it is queued or running, schedules it otherwise.
    ///
    /// # Panics
    ///
    /// If the scheduler was dropped or `command` requires another scheduler's mechanism.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// Trigger::new(&scheduler, || false).toggle_on_false(&c);
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_running(&c));
    /// ```
    #[track_caller]
    pub fn toggle_on_false(&self, command: &Command) -> &Self {
        self.bind(Kind::ToggleOnFalse, command)
    }

    /// While the signal is true, schedules `command` every cycle it is neither queued nor
    /// running (so it retries after losing a priority conflict and restarts after ending);
    /// cancels it on the falling edge.
    ///
    /// # Panics
    ///
    /// If the scheduler was dropped or `command` requires another scheduler's mechanism.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let blip = Command::no_requirements().executing(|_co| async {}).named("blip");
    /// Trigger::new(&scheduler, || true).retry_while_true(&blip);
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_running(&blip)); // ran and ended
    /// assert!(!scheduler.is_scheduled(&blip));
    /// scheduler.run().unwrap(); // and again
    /// ```
    #[track_caller]
    pub fn retry_while_true(&self, command: &Command) -> &Self {
        self.bind(Kind::RetryWhileTrue, command)
    }

    /// While the signal is false, schedules `command` every cycle it is neither queued nor
    /// running; cancels it on the rising edge.
    ///
    /// # Panics
    ///
    /// If the scheduler was dropped or `command` requires another scheduler's mechanism.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// Trigger::new(&scheduler, || false).retry_while_false(&c);
    /// scheduler.run().unwrap();
    /// assert!(scheduler.is_running(&c));
    /// ```
    #[track_caller]
    pub fn retry_while_false(&self, command: &Command) -> &Self {
        self.bind(Kind::RetryWhileFalse, command)
    }

    /// Removes every binding made through this trigger (or a clone of it). Like a scope ending,
    /// the commands they scheduled are canceled; both happen in the next cleanup phase.
    ///
    /// # Panics
    ///
    /// If the scheduler was dropped.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// let t = Trigger::new(&scheduler, || true);
    /// t.while_true(&c);
    /// scheduler.run().unwrap();
    /// t.unbind();
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_running(&c));
    /// assert_eq!(scheduler.telemetry().bindings, 0);
    /// ```
    #[track_caller]
    pub fn unbind(&self) {
        let inner = self
            .scheduler
            .upgrade()
            .expect("the scheduler of this trigger was dropped");
        inner.unbind_node(&self.node);
    }

    /// True when both are true. Both are evaluated every cycle (no short circuit), so stateful
    /// inputs never miss a cycle.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// Trigger::new(&scheduler, || true).and(&Trigger::new(&scheduler, || false)).on_true(&c);
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_running(&c));
    /// ```
    #[must_use]
    pub fn and(&self, other: &Trigger) -> Trigger {
        let (a, b) = (self.node.clone(), other.node.clone());
        self.derive(move |ctx| a.value(ctx) & b.value(ctx))
    }

    /// True when either is true (both evaluated every cycle).
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// Trigger::new(&scheduler, || true).or(&Trigger::new(&scheduler, || false)).on_true(&c);
    /// scheduler.run().unwrap();
    /// assert!(scheduler.is_running(&c));
    /// ```
    #[must_use]
    pub fn or(&self, other: &Trigger) -> Trigger {
        let (a, b) = (self.node.clone(), other.node.clone());
        self.derive(move |ctx| a.value(ctx) | b.value(ctx))
    }

    /// The negation.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// Trigger::new(&scheduler, || false).not().on_true(&c);
    /// scheduler.run().unwrap();
    /// assert!(scheduler.is_running(&c));
    /// ```
    #[allow(clippy::should_implement_trait)]
    #[must_use]
    pub fn not(&self) -> Trigger {
        let a = self.node.clone();
        self.derive(move |ctx| !a.value(ctx))
    }

    /// True once this trigger has been true continuously for `duration` (rising edges are
    /// debounced, falling edges pass at once), measured on the scheduler's clock at each poll.
    ///
    /// ```
    /// use std::time::Duration;
    /// # use tickstep_commands::{Command, CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let clock = ManualClock::new();
    /// let scheduler = CommandScheduler::new(clock.clone());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// Trigger::new(&scheduler, || true).debounce(Duration::from_millis(30)).on_true(&c);
    /// scheduler.run().unwrap();
    /// clock.advance(Duration::from_millis(20));
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_running(&c));
    /// clock.advance(Duration::from_millis(20));
    /// scheduler.run().unwrap();
    /// assert!(scheduler.is_running(&c));
    /// ```
    #[must_use]
    pub fn debounce(&self, duration: Duration) -> Trigger {
        let a = self.node.clone();
        let since: Cell<Option<Instant>> = Cell::new(None);
        self.derive(move |ctx| {
            if a.value(ctx) {
                let start = since.get().unwrap_or(ctx.now);
                since.set(Some(start));
                ctx.now - start >= duration
            } else {
                since.set(None);
                false
            }
        })
    }

    /// True for exactly the cycle this trigger turns true (a first poll reading true counts).
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// Trigger::new(&scheduler, || true).rising_edge().while_true(&c);
    /// scheduler.run().unwrap();
    /// assert!(scheduler.is_running(&c));
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_running(&c));
    /// ```
    #[must_use]
    pub fn rising_edge(&self) -> Trigger {
        let a = self.node.clone();
        let previous = Cell::new(None);
        self.derive(move |ctx| {
            let value = a.value(ctx);
            previous.replace(Some(value)) != Some(true) && value
        })
    }

    /// True for exactly the cycle this trigger turns false after being true.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// Trigger::new(&scheduler, || false).falling_edge().on_true(&c);
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_running(&c));
    /// ```
    #[must_use]
    pub fn falling_edge(&self) -> Trigger {
        let a = self.node.clone();
        let previous = Cell::new(None);
        self.derive(move |ctx| {
            let value = a.value(ctx);
            previous.replace(Some(value)) == Some(true) && !value
        })
    }

    /// True while at least `count` presses (rising edges) fall within the last `window`,
    /// whether the signal is still held or not (as in the reference): each press is remembered
    /// for `window` (inclusive) after it happened, on the scheduler's clock. The trigger is read
    /// once per cycle when bound; a press is counted only if the trigger is read while the
    /// signal is low in between, so bind it (or read it every cycle) rather than polling it now
    /// and then.
    ///
    /// # Errors
    ///
    /// [`TriggerError::InvalidPressCount`] for a count below 1; [`TriggerError::InvalidWindow`]
    /// for a zero window (a negative window cannot be expressed as a `Duration`). The reference
    /// returns an always-true or always-false trigger for these; an error names the mistake.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc, time::Duration};
    /// # use tickstep_commands::{Command, CommandScheduler, Trigger};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let clock = ManualClock::new();
    /// let scheduler = CommandScheduler::new(clock.clone());
    /// let held = Rc::new(Cell::new(false));
    /// let h = held.clone();
    /// let double_tap = Trigger::new(&scheduler, move || h.get())
    ///     .multi_press(2, Duration::from_millis(500))
    ///     .unwrap();
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// double_tap.while_true(&c);
    /// for pressed in [true, false, true, false] {
    ///     held.set(pressed);
    ///     scheduler.run().unwrap();
    ///     clock.advance(Duration::from_millis(100));
    /// }
    /// assert!(scheduler.is_running(&c)); // two presses within 500 ms, released or not
    /// clock.advance(Duration::from_millis(500));
    /// scheduler.run().unwrap();
    /// assert!(!scheduler.is_running(&c)); // the first press left the window
    /// ```
    pub fn multi_press(&self, count: i64, window: Duration) -> Result<Trigger, TriggerError> {
        if count < 1 {
            return Err(TriggerError::InvalidPressCount { count });
        }
        if window.is_zero() {
            return Err(TriggerError::InvalidWindow { window });
        }
        let needed = usize::try_from(count).unwrap_or(usize::MAX);
        let a = self.node.clone();
        let previous = Cell::new(None);
        let presses: RefCell<VecDeque<Instant>> = RefCell::new(VecDeque::new());
        Ok(self.derive(move |ctx| {
            let value = a.value(ctx);
            let rising = previous.replace(Some(value)) != Some(true) && value;
            let mut presses = presses.borrow_mut();
            if rising {
                presses.push_back(ctx.now);
            }
            while presses.front().is_some_and(|t| ctx.now - *t > window) {
                presses.pop_front();
            }
            presses.len() >= needed
        }))
    }

    /// [`Trigger::multi_press`] with the window in seconds, for hosts that read numbers from
    /// scripts or configuration.
    ///
    /// # Errors
    ///
    /// [`TriggerError::InvalidWindowSeconds`] for a negative, zero, NaN or infinite window (or
    /// one too large for a `Duration`); [`TriggerError::InvalidPressCount`] for a count below 1.
    ///
    /// ```
    /// # use tickstep_commands::{CommandScheduler, Trigger, TriggerError};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let button = Trigger::new(&scheduler, || false);
    /// assert!(button.multi_press_seconds(2, 0.4).is_ok());
    /// assert_eq!(
    ///     button.multi_press_seconds(2, -0.5).unwrap_err().to_string(),
    ///     "multi_press window must be a finite number of seconds > 0 (got -0.5)"
    /// );
    /// assert!(button.multi_press_seconds(2, f64::NAN).is_err());
    /// ```
    pub fn multi_press_seconds(
        &self,
        count: i64,
        window_seconds: f64,
    ) -> Result<Trigger, TriggerError> {
        let window = (window_seconds.is_finite() && window_seconds > 0.0)
            .then(|| Duration::try_from_secs_f64(window_seconds).ok())
            .flatten()
            .ok_or(TriggerError::InvalidWindowSeconds {
                seconds: window_seconds,
            })?;
        self.multi_press(count, window)
    }
}

impl std::fmt::Debug for Trigger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trigger").finish_non_exhaustive()
    }
}
