//! Bindings: a trigger, a command and a rule for what each edge does; polled in the trigger phase.
//!
//! Each binding keeps its own previous value (so two bindings on one trigger made at different
//! times each see their own first poll) and only the last instance it scheduled (so a binding
//! never grows, however often it fires). See [`Trigger`](crate::Trigger) for the edge rules.

use std::cell::Cell;
use std::panic::Location;
use std::rc::Rc;

use crate::id::Key;
use crate::scheduler::command::Command;
use crate::scope::Scope;
use crate::trigger_node::{Ctx, Node};

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

/// What a binding does this cycle.
pub(crate) enum Action {
    Schedule,
    Cancel,
    Toggle,
}

impl Binding {
    /// Reads the trigger for this cycle and decides what to do; `live` says whether the bound
    /// command is queued or running (read only by the retry kinds).
    pub(crate) fn poll(&self, ctx: &Ctx, live: impl Fn(&Command) -> bool) -> Option<Action> {
        if self.unbound.get() {
            return None;
        }
        let value = self.node.value(ctx);
        let previous = self.previous.replace(Some(value));
        let rising = value && previous != Some(true);
        let falling =
            !value && (previous == Some(true) || (previous.is_none() && self.first_low_falls));
        let entered_false = !value && previous != Some(false);
        let left_false = value && previous == Some(false);
        let action = match self.kind {
            Kind::OnTrue | Kind::WhileTrue if rising => Action::Schedule,
            Kind::OnFalse if falling => Action::Schedule,
            Kind::WhileFalse if entered_false => Action::Schedule,
            Kind::RetryWhileTrue if value && !live(&self.command) => Action::Schedule,
            Kind::RetryWhileFalse if !value && !live(&self.command) => Action::Schedule,
            Kind::WhileTrue | Kind::RetryWhileTrue if falling => Action::Cancel,
            Kind::WhileFalse | Kind::RetryWhileFalse if left_false => Action::Cancel,
            Kind::ToggleOnTrue if rising => Action::Toggle,
            Kind::ToggleOnFalse if falling => Action::Toggle,
            _ => return None,
        };
        Some(action)
    }

    pub(crate) fn command(&self) -> &Command {
        &self.command
    }

    pub(crate) fn at(&self) -> &'static Location<'static> {
        self.at
    }

    /// Remembers the instance this binding started (only that one is canceled with it).
    pub(crate) fn set_scheduled(&self, key: Option<Key>) {
        self.scheduled.set(key);
    }
}
