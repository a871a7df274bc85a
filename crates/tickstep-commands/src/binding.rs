//! Bindings: a trigger, a command and a rule for what each edge does; polled in the trigger phase.
//!
//! Each binding keeps its own previous value (so two bindings on one trigger made at different
//! times each see their own first poll) and only the last instance it scheduled (so a binding
//! never grows, however often it fires). See [`Trigger`](crate::Trigger) for the edge rules.

use std::cell::Cell;
use std::panic::Location;
use std::rc::Rc;

use crate::command::Command;
use crate::id::Key;
use crate::scheduler::inner::Inner;
use crate::scope::Scope;
use crate::trigger::{Ctx, Node};

/// What a binding does on an edge or level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    OnTrue,
    OnFalse,
    WhileTrue,
    WhileFalse,
    ToggleOnTrue,
    ToggleOnFalse,
    RetryWhileTrue,
    RetryWhileFalse,
}

/// A trigger bound to a command.
pub(crate) struct Binding {
    node: Rc<Node>,
    kind: Kind,
    command: Command,
    pub(crate) scope: Scope,
    at: &'static Location<'static>,
    previous: Cell<Option<bool>>,
    scheduled: Cell<Option<Key>>,
    unbound: Cell<bool>,
    /// A first poll reading false counts as a falling edge (the reference's rule, opt-in).
    first_low_falls: bool,
}

impl Binding {
    pub(crate) fn new(
        node: Rc<Node>,
        kind: Kind,
        command: &Command,
        scope: Scope,
        at: &'static Location<'static>,
        first_low_falls: bool,
    ) -> Self {
        Binding {
            node,
            kind,
            command: command.clone(),
            scope,
            at,
            previous: Cell::new(None),
            scheduled: Cell::new(None),
            unbound: Cell::new(false),
            first_low_falls,
        }
    }

    /// Whether this binding listens to `node`.
    pub(crate) fn watches(&self, node: &Rc<Node>) -> bool {
        Rc::ptr_eq(&self.node, node)
    }

    /// Marks the binding dead; the next cleanup phase removes it and cancels what it scheduled.
    pub(crate) fn unbind(&self) {
        self.unbound.set(true);
    }

    pub(crate) fn is_unbound(&self) -> bool {
        self.unbound.get()
    }

    pub(crate) fn scheduled_key(&self) -> Option<Key> {
        self.scheduled.get()
    }
}

/// The trigger phase: poll every binding once (in the order they were made) and act on edges.
/// Bindings made during this phase are first polled next cycle.
pub(crate) fn poll_bindings(inner: &Rc<Inner>) {
    let (count, ctx) = {
        let s = inner.state.borrow();
        let ctx = Ctx {
            cycle: s.cycle,
            now: s.now,
        };
        (s.bindings.len(), ctx)
    };
    for i in 0..count {
        let Some(binding) = inner.state.borrow().bindings.get(i).cloned() else {
            break;
        };
        if binding.unbound.get() {
            continue;
        }
        let value = binding.node.value(&ctx);
        let previous = binding.previous.replace(Some(value));
        let rising = value && previous != Some(true);
        let falling =
            !value && (previous == Some(true) || (previous.is_none() && binding.first_low_falls));
        let entered_false = !value && previous != Some(false);
        let left_false = value && previous == Some(false);
        let live = || inner.state.borrow().live_key(&binding.command).is_some();
        let action = match binding.kind {
            Kind::OnTrue | Kind::WhileTrue if rising => Action::Schedule,
            Kind::OnFalse if falling => Action::Schedule,
            Kind::WhileFalse if entered_false => Action::Schedule,
            Kind::RetryWhileTrue if value && !live() => Action::Schedule,
            Kind::RetryWhileFalse if !value && !live() => Action::Schedule,
            Kind::WhileTrue | Kind::RetryWhileTrue if falling => Action::Cancel,
            Kind::WhileFalse | Kind::RetryWhileFalse if left_false => Action::Cancel,
            Kind::ToggleOnTrue if rising => Action::Toggle,
            Kind::ToggleOnFalse if falling => Action::Toggle,
            _ => continue,
        };
        match action {
            Action::Schedule => schedule(inner, &binding),
            Action::Cancel => cancel(inner, &binding),
            Action::Toggle => toggle(inner, &binding),
        }
    }
}

enum Action {
    Schedule,
    Cancel,
    Toggle,
}

fn schedule(inner: &Rc<Inner>, binding: &Binding) {
    // Remember only an instance this binding started, so its scope ending never cancels one
    // that someone else scheduled.
    let (result, key) = inner.schedule_in(&binding.command, binding.scope, binding.at);
    if result.is_success() {
        binding.scheduled.set(key);
    }
}

fn cancel(inner: &Rc<Inner>, binding: &Binding) {
    let key = inner.state.borrow().live_key(&binding.command);
    if let Some(key) = key {
        inner.cancel_key(key);
    }
}

fn toggle(inner: &Rc<Inner>, binding: &Binding) {
    let key = inner.state.borrow().live_key(&binding.command);
    match key {
        Some(key) => inner.cancel_key(key),
        None => schedule(inner, binding),
    }
}
