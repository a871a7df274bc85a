//! A state machine command: states run commands; transitions fire on a condition's rising edge,
//! on a state's command completing, or from any state.
//!
//! Each cycle (after the current state's command has run) the machine checks, in order, the
//! `switch_from_any` transitions and then the current state's own transitions, each in the order
//! they were added; the first that fires wins. A condition fires on its rising edge *while in the
//! state*: its value when the state is entered is the baseline, so a condition already true on
//! entry must fall and rise again. On a transition the state's command is canceled, `on_exit`
//! hooks run, then the next state's `on_enter` hooks, then its command starts (in the same
//! cycle). A state whose command ends and that has no way out (no transition of its own and no
//! `switch_from_any`) ends the machine. A `switch_from_any` into the current state does nothing.

use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::command::{BodyFn, BodyFuture, Command};
use crate::compose::group::group;
use crate::error::StateMachineError;

static NEXT_MACHINE: AtomicU64 = AtomicU64::new(1);

/// A state of one [`StateMachine`].
///
/// ```
/// use tickstep_commands::{compose::StateMachine, Command};
/// let mut machine = StateMachine::new("m");
/// let a = machine.state(&Command::no_requirements().executing(|_co| async {}).named("a"));
/// assert_eq!(a, a);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateId {
    machine: u64,
    index: usize,
}

#[derive(Clone)]
enum When {
    Rising(Rc<dyn Fn() -> bool>),
    Completed,
}

#[derive(Clone)]
struct Transition {
    to: usize,
    when: When,
}

#[derive(Clone)]
struct StateDef {
    command: Command,
    transitions: Vec<Transition>,
    on_enter: Vec<Rc<dyn Fn()>>,
    on_exit: Vec<Rc<dyn Fn()>>,
}

/// Builds a state machine command.
///
/// ```
/// use std::{cell::Cell, rc::Rc};
/// use tickstep_commands::{compose::StateMachine, Command, Scheduler};
/// use tickstep_kernel::clock::ManualClock;
///
/// let scheduler = Scheduler::new(ManualClock::new());
/// let ready = Rc::new(Cell::new(false));
/// let r = ready.clone();
/// let park = |name: &str| Command::no_requirements().executing(|co| async move { co.park().await; }).named(name);
/// let quick = Command::no_requirements().executing(|_co| async {}).named("shoot");
///
/// let mut machine = StateMachine::new("shooter");
/// let idle = machine.state(&park("idle"));
/// let shoot = machine.state(&quick);
/// let done = machine.state(&Command::no_requirements().executing(|_co| async {}).named("done"));
/// machine.when(idle, shoot, move || r.get());
/// machine.on_completion(shoot, done);
/// let cmd = machine.build().unwrap();
///
/// scheduler.schedule(&cmd);
/// scheduler.run().unwrap();
/// ready.set(true);
/// scheduler.run().unwrap(); // idle -> shoot -> (completes) -> done -> (completes): machine ends
/// assert!(!scheduler.is_running(&cmd));
/// ```
pub struct StateMachine {
    name: String,
    tag: u64,
    states: Vec<StateDef>,
    any: Vec<Transition>,
    initial: Option<usize>,
    error: Option<StateMachineError>,
}

impl StateMachine {
    /// An empty machine named `name`.
    ///
    /// ```
    /// use tickstep_commands::compose::StateMachine;
    /// let machine = StateMachine::new("auto");
    /// assert!(machine.build().is_err()); // no states yet
    /// ```
    pub fn new(name: impl Into<String>) -> Self {
        StateMachine {
            name: name.into(),
            tag: NEXT_MACHINE.fetch_add(1, Ordering::Relaxed),
            states: Vec::new(),
            any: Vec::new(),
            initial: None,
            error: None,
        }
    }

    /// Adds a state that runs `command`. The first state added is the initial state unless
    /// [`StateMachine::start_in`] says otherwise.
    ///
    /// ```
    /// # use tickstep_commands::{compose::StateMachine, Command};
    /// let mut machine = StateMachine::new("m");
    /// let s = machine.state(&Command::no_requirements().executing(|_co| async {}).named("s"));
    /// # let _ = s;
    /// ```
    pub fn state(&mut self, command: &Command) -> StateId {
        self.states.push(StateDef {
            command: command.clone(),
            transitions: Vec::new(),
            on_enter: Vec::new(),
            on_exit: Vec::new(),
        });
        StateId {
            machine: self.tag,
            index: self.states.len() - 1,
        }
    }

    fn check(&mut self, state: StateId) -> Option<usize> {
        if state.machine == self.tag && state.index < self.states.len() {
            Some(state.index)
        } else {
            if self.error.is_none() {
                self.error = Some(StateMachineError::ForeignState {
                    machine: self.name.clone(),
                    state: state.index,
                });
            }
            None
        }
    }

    /// Goes from `from` to `to` when `condition` rises while in `from`.
    ///
    /// ```
    /// # use tickstep_commands::{compose::StateMachine, Command};
    /// let mut m = StateMachine::new("m");
    /// let a = m.state(&Command::no_requirements().executing(|_co| async {}).named("a"));
    /// let b = m.state(&Command::no_requirements().executing(|_co| async {}).named("b"));
    /// m.when(a, b, || true);
    /// ```
    pub fn when(
        &mut self,
        from: StateId,
        to: StateId,
        condition: impl Fn() -> bool + 'static,
    ) -> &mut Self {
        if let (Some(from), Some(to)) = (self.check(from), self.check(to)) {
            self.states[from].transitions.push(Transition {
                to,
                when: When::Rising(Rc::new(condition)),
            });
        }
        self
    }

    /// Goes from `from` to `to` when `from`'s command ends on its own.
    ///
    /// ```
    /// # use tickstep_commands::{compose::StateMachine, Command};
    /// let mut m = StateMachine::new("m");
    /// let a = m.state(&Command::no_requirements().executing(|_co| async {}).named("a"));
    /// let b = m.state(&Command::no_requirements().executing(|_co| async {}).named("b"));
    /// m.on_completion(a, b);
    /// ```
    pub fn on_completion(&mut self, from: StateId, to: StateId) -> &mut Self {
        if let (Some(from), Some(to)) = (self.check(from), self.check(to)) {
            self.states[from].transitions.push(Transition {
                to,
                when: When::Completed,
            });
        }
        self
    }

    /// Goes to `to` from whatever state is current when `condition` rises. Checked before the
    /// current state's own transitions.
    ///
    /// ```
    /// # use tickstep_commands::{compose::StateMachine, Command};
    /// let mut m = StateMachine::new("m");
    /// let stop = m.state(&Command::no_requirements().executing(|_co| async {}).named("stop"));
    /// m.switch_from_any(stop, || false);
    /// ```
    pub fn switch_from_any(
        &mut self,
        to: StateId,
        condition: impl Fn() -> bool + 'static,
    ) -> &mut Self {
        if let Some(to) = self.check(to) {
            self.any.push(Transition {
                to,
                when: When::Rising(Rc::new(condition)),
            });
        }
        self
    }

    /// Runs `hook` each time `state` is entered, before its command starts.
    ///
    /// ```
    /// # use tickstep_commands::{compose::StateMachine, Command};
    /// let mut m = StateMachine::new("m");
    /// let a = m.state(&Command::no_requirements().executing(|_co| async {}).named("a"));
    /// m.on_enter(a, || println!("entered a"));
    /// ```
    pub fn on_enter(&mut self, state: StateId, hook: impl Fn() + 'static) -> &mut Self {
        if let Some(i) = self.check(state) {
            self.states[i].on_enter.push(Rc::new(hook));
        }
        self
    }

    /// Runs `hook` each time `state` is left by a transition or by the machine ending on its own
    /// (not when the whole machine is canceled).
    ///
    /// ```
    /// # use tickstep_commands::{compose::StateMachine, Command};
    /// let mut m = StateMachine::new("m");
    /// let a = m.state(&Command::no_requirements().executing(|_co| async {}).named("a"));
    /// m.on_exit(a, || println!("left a"));
    /// ```
    pub fn on_exit(&mut self, state: StateId, hook: impl Fn() + 'static) -> &mut Self {
        if let Some(i) = self.check(state) {
            self.states[i].on_exit.push(Rc::new(hook));
        }
        self
    }

    /// Makes `state` the initial state.
    ///
    /// ```
    /// # use tickstep_commands::{compose::StateMachine, Command};
    /// let mut m = StateMachine::new("m");
    /// let _a = m.state(&Command::no_requirements().executing(|_co| async {}).named("a"));
    /// let b = m.state(&Command::no_requirements().executing(|_co| async {}).named("b"));
    /// m.start_in(b);
    /// ```
    pub fn start_in(&mut self, state: StateId) -> &mut Self {
        if let Some(i) = self.check(state) {
            self.initial = Some(i);
        }
        self
    }

    /// The machine as a command: requires every state's mechanisms, runs at the highest state
    /// priority. May be built more than once.
    ///
    /// # Errors
    ///
    /// [`StateMachineError::NoStates`]; [`StateMachineError::ForeignState`] if any method was
    /// given a state of another machine.
    ///
    /// ```
    /// # use tickstep_commands::{compose::StateMachine, Command};
    /// let mut m = StateMachine::new("m");
    /// m.state(&Command::no_requirements().executing(|_co| async {}).named("a"));
    /// assert_eq!(m.build().unwrap().name(), "m");
    /// ```
    pub fn build(&self) -> Result<Command, StateMachineError> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        if self.states.is_empty() {
            return Err(StateMachineError::NoStates {
                machine: self.name.clone(),
            });
        }
        let states: Rc<[StateDef]> = self.states.iter().cloned().collect();
        let any: Rc<[Transition]> = self.any.iter().cloned().collect();
        let initial = self.initial.unwrap_or(0);
        let commands: Vec<Command> = states.iter().map(|s| s.command.clone()).collect();
        let body: BodyFn = Rc::new(move |co| -> BodyFuture {
            let (states, any) = (states.clone(), any.clone());
            BodyFuture::fallible(async move {
                let mut current = initial;
                loop {
                    let state = &states[current];
                    for hook in &state.on_enter {
                        hook();
                    }
                    co.fork([&state.command])?;
                    let candidates: Vec<&Transition> =
                        any.iter().chain(state.transitions.iter()).collect();
                    let mut previous: Vec<bool> = candidates
                        .iter()
                        .map(|t| match &t.when {
                            When::Rising(condition) => condition(),
                            When::Completed => false,
                        })
                        .collect();
                    let next = loop {
                        let scheduler = co.scheduler();
                        let done = !scheduler.is_running(&state.command)
                            && !scheduler.is_scheduled(&state.command);
                        let mut next = None;
                        for (i, t) in candidates.iter().enumerate() {
                            let fired = match &t.when {
                                When::Rising(condition) => {
                                    let value = condition();
                                    let rose = value && !previous[i];
                                    previous[i] = value;
                                    rose
                                }
                                When::Completed => done,
                            };
                            let self_switch = i < any.len() && t.to == current;
                            if fired && !self_switch && next.is_none() {
                                next = Some(t.to);
                            }
                        }
                        if next.is_some() {
                            scheduler.cancel(&state.command);
                            break next;
                        }
                        if done && candidates.is_empty() {
                            break None;
                        }
                        drop(scheduler);
                        co.yield_now().await;
                    };
                    for hook in &state.on_exit {
                        hook();
                    }
                    match next {
                        Some(to) => current = to,
                        None => return Ok(()),
                    }
                }
            })
        });
        Ok(group(self.name.clone(), &commands, body))
    }
}
