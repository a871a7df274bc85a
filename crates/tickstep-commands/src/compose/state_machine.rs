//! A state machine command: each state runs a command; transitions fire on a condition's rising
//! edge, or when the state's command completes on its own.
//!
//! The rules (those of the reference framework; docs/commands.md §6.6–§6.8):
//! * Entering a state starts its command as the machine's child, then runs its `on_enter` hooks
//!   (so they see the command running).
//! * While the command runs, the state's transitions are checked in the order they were declared
//!   (`when`, `exit_when`, `switch_from`/`switch_from_any` interleaved by declaration), right after
//!   entering and then once per cycle after the command has run. A transition fires on the
//!   rising edge of its condition; each transition remembers its condition's last reading from
//!   one check to the next (initially false), so a condition that is already true when its state
//!   is entered fires at once. The first that fires wins: `on_exit` hooks run (the command is
//!   still running), the command is canceled and the next state is entered in the same cycle.
//! * When the command ends on its own, `on_exit` hooks run, then the first `on_completion_if`
//!   whose condition holds picks the next state, else the last `on_completion` (or
//!   `exit_on_completion`) declared; without any, the machine ends. A state whose command ended
//!   before the machine ever yielded in it waits one cycle before the next state is entered, so a
//!   state that completes at once and loops to itself moves one state per cycle.
//! * Canceling the whole machine runs the current state's `on_exit` hooks too.
//! * Guard: more than [`MAX_STATE_ENTRIES_PER_RUN`] entries without yielding (conditions that
//!   flip on every read) fail the machine with [`StateMachineError::TooManyEntries`].

use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::compose::graph::{EdgeKind, GraphEdge, GraphTarget, StateGraph};
use crate::compose::group::group;
use crate::error::StateMachineError;
use crate::scheduler::command::{BodyFn, BodyFuture, Command};
use machine::Machine;

mod machine;

static NEXT_MACHINE: AtomicU64 = AtomicU64::new(1);

/// How many states a machine may enter within one `run()` without yielding.
///
/// ```
/// assert_eq!(tickstep_commands::compose::MAX_STATE_ENTRIES_PER_RUN, 1_000);
/// ```
pub const MAX_STATE_ENTRIES_PER_RUN: u32 = 1_000;

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

type Condition = Rc<dyn Fn() -> bool>;
type Pick = Rc<dyn Fn() -> Option<StateId>>;

/// Where a transition goes.
#[derive(Clone)]
enum Target {
    State(usize),
    Exit,
    /// Chosen when the transition fires; `None` exits.
    Pick(Pick),
}

#[derive(Clone)]
struct Transition {
    /// Declaration order across the machine (orders own and from-any transitions together).
    seq: usize,
    /// Index of this transition's edge memory (shared by every state a from-any covers).
    edge: usize,
    target: Target,
    condition: Condition,
    /// Its name in the machine's graph (`StateMachine::labeled`).
    label: Option<Rc<str>>,
}

#[derive(Clone)]
struct FromAny {
    /// `None`: every state, including those added later.
    from: Option<Vec<usize>>,
    transition: Transition,
}

#[derive(Clone)]
struct StateDef {
    command: Command,
    transitions: Vec<Transition>,
    /// `on_completion_if` transitions: condition, target, label.
    completions: Vec<(Condition, Target, Option<Rc<str>>)>,
    on_complete: Target,
    on_complete_label: Option<Rc<str>>,
    on_enter: Vec<Rc<dyn Fn()>>,
    on_exit: Vec<Rc<dyn Fn()>>,
}

/// Builds a state machine command.
///
/// ```
/// use std::{cell::Cell, rc::Rc};
/// use tickstep_commands::{compose::StateMachine, Command, CommandScheduler};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// let scheduler = CommandScheduler::new(ManualClock::new());
/// let ready = Rc::new(Cell::new(false));
/// let r = ready.clone();
/// let park = |name: &str| Command::no_requirements().executing(|co| async move { co.park().await; }).named(name);
/// let quick = Command::no_requirements().executing(|_co| async {}).named("shoot");
///
/// let mut machine = StateMachine::new("shooter");
/// let idle = machine.state(&park("idle"));
/// let shoot = machine.state(&quick);
/// let finished = park("done");
/// let done = machine.state(&finished);
/// machine.when(idle, shoot, move || r.get());
/// machine.on_completion(shoot, done);
/// let cmd = machine.build().unwrap();
///
/// scheduler.schedule(&cmd);
/// scheduler.run().unwrap();
/// ready.set(true);
/// scheduler.run().unwrap(); // idle -> shoot, which completes at once
/// scheduler.run().unwrap(); // shoot -> done
/// assert!(scheduler.is_running(&finished) && scheduler.is_running(&cmd));
/// ```
pub struct StateMachine {
    name: String,
    tag: u64,
    states: Vec<StateDef>,
    any: Vec<FromAny>,
    initial: Option<usize>,
    error: Option<StateMachineError>,
    next_seq: usize,
    /// The transition declared last, for [`StateMachine::labeled`].
    last: Option<Declared>,
}

/// Where the transition declared last lives.
#[derive(Clone, Copy)]
enum Declared {
    /// `states[state].transitions[index]`.
    Own(usize, usize),
    /// `any[index]`.
    Any(usize),
    /// `states[state].completions[index]`.
    CompletionIf(usize, usize),
    /// `states[state].on_complete`.
    Completion(usize),
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
            next_seq: 0,
            last: None,
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
            completions: Vec::new(),
            on_complete: Target::Exit,
            on_complete_label: None,
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

    fn transition(&mut self, target: Target, condition: Condition) -> Transition {
        let seq = self.next_seq;
        self.next_seq += 1;
        Transition {
            seq,
            edge: seq,
            target,
            condition,
            label: None,
        }
    }

    fn add(&mut self, from: StateId, target: Option<Target>, condition: Condition) -> &mut Self {
        if let (Some(from), Some(target)) = (self.check(from), target) {
            let t = self.transition(target, condition);
            self.states[from].transitions.push(t);
            self.last = Some(Declared::Own(from, self.states[from].transitions.len() - 1));
        }
        self
    }

    /// Sets `from`'s completion transition (the last declaration wins).
    fn completion(&mut self, from: usize, target: Target) {
        self.states[from].on_complete = target;
        self.states[from].on_complete_label = None;
        self.last = Some(Declared::Completion(from));
    }

    /// Names the transition declared last, for the machine's graph ([`StateMachine::graph`],
    /// docs/commands.md §14.2); it changes nothing else. Called before any transition was
    /// declared (or after one that was refused), it does nothing.
    ///
    /// ```
    /// # use tickstep_commands::{compose::StateMachine, Command};
    /// let mut m = StateMachine::new("m");
    /// let a = m.state(&Command::no_requirements().executing(|_co| async {}).named("a"));
    /// let b = m.state(&Command::no_requirements().executing(|_co| async {}).named("b"));
    /// m.when(a, b, || true).labeled("go");
    /// assert!(m.graph().to_mermaid().contains("s0 --> s1: go"));
    /// ```
    pub fn labeled(&mut self, label: impl Into<String>) -> &mut Self {
        let label: Option<Rc<str>> = Some(Rc::from(label.into()));
        match self.last {
            Some(Declared::Own(state, i)) => self.states[state].transitions[i].label = label,
            Some(Declared::Any(i)) => self.any[i].transition.label = label,
            Some(Declared::CompletionIf(state, i)) => self.states[state].completions[i].2 = label,
            Some(Declared::Completion(state)) => self.states[state].on_complete_label = label,
            None => {}
        }
        self
    }

    /// The machine's states and transitions as a graph, to draw as Graphviz DOT or Mermaid
    /// (docs/commands.md §14.1). States are numbered in the order they were added and named
    /// after their commands.
    ///
    /// ```
    /// # use tickstep_commands::{compose::StateMachine, Command};
    /// let mut m = StateMachine::new("m");
    /// let a = m.state(&Command::no_requirements().executing(|_co| async {}).named("a"));
    /// let graph = m.graph();
    /// assert_eq!(graph.states, ["a"]);
    /// assert_eq!(graph.initial, 0);
    /// ```
    pub fn graph(&self) -> StateGraph {
        let mut edges = Vec::new();
        for (from, state) in self.states.iter().enumerate() {
            let mut own: Vec<&Transition> = state.transitions.iter().collect();
            own.extend(
                (self.any.iter())
                    .filter(|any| any.from.as_ref().is_none_or(|f| f.contains(&from)))
                    .map(|any| &any.transition),
            );
            own.sort_by_key(|t| t.seq);
            for t in own {
                edges.push(GraphEdge::new(
                    from,
                    &t.target,
                    EdgeKind::When,
                    t.label.as_deref(),
                ));
            }
            for (_, target, label) in &state.completions {
                edges.push(GraphEdge::new(
                    from,
                    target,
                    EdgeKind::CompletedIf,
                    label.as_deref(),
                ));
            }
            let label = state.on_complete_label.as_deref();
            edges.push(GraphEdge::new(
                from,
                &state.on_complete,
                EdgeKind::Completed,
                label,
            ));
        }
        StateGraph {
            name: self.name.clone(),
            states: self
                .states
                .iter()
                .map(|s| s.command.name().to_owned())
                .collect(),
            initial: self.initial.unwrap_or(0),
            edges,
        }
    }

    fn target(&mut self, to: StateId) -> Option<Target> {
        self.check(to).map(Target::State)
    }

    /// Goes from `from` to `to` when `condition` rises while in `from` (already true on entry
    /// counts).
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
        let target = self.target(to);
        self.add(from, target, Rc::new(condition))
    }

    /// Goes from `from` to the state `pick` returns (read when the transition fires; `None`
    /// ends the machine) when `condition` rises while in `from`.
    ///
    /// ```
    /// # use tickstep_commands::{compose::StateMachine, Command};
    /// let mut m = StateMachine::new("m");
    /// let a = m.state(&Command::no_requirements().executing(|_co| async {}).named("a"));
    /// let b = m.state(&Command::no_requirements().executing(|_co| async {}).named("b"));
    /// m.when_pick(a, move || Some(b), || true);
    /// ```
    pub fn when_pick(
        &mut self,
        from: StateId,
        pick: impl Fn() -> Option<StateId> + 'static,
        condition: impl Fn() -> bool + 'static,
    ) -> &mut Self {
        self.add(from, Some(Target::Pick(Rc::new(pick))), Rc::new(condition))
    }

    /// Ends the machine when `condition` rises while in `from` (its command is canceled).
    ///
    /// ```
    /// # use tickstep_commands::{compose::StateMachine, Command};
    /// let mut m = StateMachine::new("m");
    /// let a = m.state(&Command::no_requirements().executing(|_co| async {}).named("a"));
    /// m.exit_when(a, || false);
    /// ```
    pub fn exit_when(
        &mut self,
        from: StateId,
        condition: impl Fn() -> bool + 'static,
    ) -> &mut Self {
        self.add(from, Some(Target::Exit), Rc::new(condition))
    }

    /// Goes from `from` to `to` when `from`'s command ends on its own. Declared again for the
    /// same state, the last declaration wins (as in the reference).
    ///
    /// ```
    /// # use tickstep_commands::{compose::StateMachine, Command};
    /// let mut m = StateMachine::new("m");
    /// let a = m.state(&Command::no_requirements().executing(|_co| async {}).named("a"));
    /// let b = m.state(&Command::no_requirements().executing(|_co| async {}).named("b"));
    /// m.on_completion(a, b);
    /// ```
    pub fn on_completion(&mut self, from: StateId, to: StateId) -> &mut Self {
        if let (Some(from), Some(target)) = (self.check(from), self.target(to)) {
            self.completion(from, target);
        }
        self
    }

    /// Goes from `from` to the state `pick` returns (read when the command ends; `None` ends the
    /// machine) when `from`'s command ends on its own. Replaces an earlier `on_completion`.
    ///
    /// ```
    /// # use tickstep_commands::{compose::StateMachine, Command};
    /// let mut m = StateMachine::new("m");
    /// let a = m.state(&Command::no_requirements().executing(|_co| async {}).named("a"));
    /// m.on_completion_pick(a, move || Some(a));
    /// ```
    pub fn on_completion_pick(
        &mut self,
        from: StateId,
        pick: impl Fn() -> Option<StateId> + 'static,
    ) -> &mut Self {
        if let Some(from) = self.check(from) {
            self.completion(from, Target::Pick(Rc::new(pick)));
        }
        self
    }

    /// Ends the machine when `from`'s command ends on its own (what a state with no completion
    /// transition does anyway; replaces an earlier `on_completion`).
    ///
    /// ```
    /// # use tickstep_commands::{compose::StateMachine, Command};
    /// let mut m = StateMachine::new("m");
    /// let a = m.state(&Command::no_requirements().executing(|_co| async {}).named("a"));
    /// m.exit_on_completion(a);
    /// ```
    pub fn exit_on_completion(&mut self, from: StateId) -> &mut Self {
        if let Some(from) = self.check(from) {
            self.completion(from, Target::Exit);
        }
        self
    }

    /// Goes from `from` to `to` when `from`'s command ends on its own and `condition` holds at
    /// that moment. Checked in declaration order before any `on_completion`.
    ///
    /// ```
    /// # use tickstep_commands::{compose::StateMachine, Command};
    /// let mut m = StateMachine::new("m");
    /// let a = m.state(&Command::no_requirements().executing(|_co| async {}).named("a"));
    /// let b = m.state(&Command::no_requirements().executing(|_co| async {}).named("b"));
    /// m.on_completion_if(a, b, || true);
    /// ```
    pub fn on_completion_if(
        &mut self,
        from: StateId,
        to: StateId,
        condition: impl Fn() -> bool + 'static,
    ) -> &mut Self {
        if let (Some(from), Some(target)) = (self.check(from), self.target(to)) {
            let completions = &mut self.states[from].completions;
            completions.push((Rc::new(condition), target, None));
            self.last = Some(Declared::CompletionIf(from, completions.len() - 1));
        }
        self
    }

    /// Goes to `to` from any state (including `to` itself, which restarts it, and states added
    /// later) when `condition` rises. Ordered with each state's own transitions by declaration.
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
        if let Some(target) = self.target(to) {
            let transition = self.transition(target, Rc::new(condition));
            self.any.push(FromAny {
                from: None,
                transition,
            });
            self.last = Some(Declared::Any(self.any.len() - 1));
        }
        self
    }

    /// Goes to `to` from any of the states `from` when `condition` rises. One edge memory is
    /// shared by all of them, as for [`StateMachine::switch_from_any`].
    ///
    /// ```
    /// # use tickstep_commands::{compose::StateMachine, Command};
    /// let mut m = StateMachine::new("m");
    /// let a = m.state(&Command::no_requirements().executing(|_co| async {}).named("a"));
    /// let b = m.state(&Command::no_requirements().executing(|_co| async {}).named("b"));
    /// let c = m.state(&Command::no_requirements().executing(|_co| async {}).named("c"));
    /// m.switch_from(&[a, b], c, || false);
    /// ```
    pub fn switch_from(
        &mut self,
        from: &[StateId],
        to: StateId,
        condition: impl Fn() -> bool + 'static,
    ) -> &mut Self {
        let from: Vec<usize> = from.iter().filter_map(|s| self.check(*s)).collect();
        if let Some(target) = self.target(to) {
            let transition = self.transition(target, Rc::new(condition));
            self.any.push(FromAny {
                from: Some(from),
                transition,
            });
            self.last = Some(Declared::Any(self.any.len() - 1));
        }
        self
    }

    /// Runs `hook` each time `state` is entered, right after its command started (the hook sees
    /// it running). Hooks run in the order they were added.
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

    /// Runs `hook` each time `state` is left: on a transition (before its command is canceled,
    /// so the hook sees it running), when its command completes, and when the whole machine is
    /// canceled. Hooks run in the order they were added.
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

    /// Makes `state` the initial state (the last call wins).
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
    /// priority. May be built more than once; each running instance has its own edge memory.
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
        let mut states = self.states.clone();
        for (i, state) in states.iter_mut().enumerate() {
            for any in &self.any {
                if any.from.as_ref().is_none_or(|from| from.contains(&i)) {
                    state.transitions.push(any.transition.clone());
                }
            }
            state.transitions.sort_by_key(|t| t.seq);
        }
        let machine = Rc::new(Machine {
            name: self.name.clone(),
            tag: self.tag,
            states,
            edges: self.next_seq,
            initial: self.initial.unwrap_or(0),
        });
        let commands: Vec<Command> = machine.states.iter().map(|s| s.command.clone()).collect();
        let body: BodyFn =
            Rc::new(move |co| -> BodyFuture { BodyFuture::fallible(machine.clone().run(co)) });
        Ok(group(self.name.clone(), &commands, body))
    }
}

impl GraphEdge {
    fn new(from: usize, target: &Target, kind: EdgeKind, label: Option<&str>) -> Self {
        let to = match target {
            Target::State(i) => GraphTarget::State(*i),
            Target::Exit => GraphTarget::Exit,
            Target::Pick(_) => GraphTarget::Picked,
        };
        GraphEdge {
            from,
            to,
            kind,
            label: label.map(str::to_owned),
        }
    }
}
