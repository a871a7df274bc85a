//! The trigger phase, and the narrow API trigger and mechanism handles use to reach the engine:
//! only this folder touches the scheduler's state.

use std::panic::Location;
use std::rc::Rc;

use super::Inner;
use super::state::MechSlot;
use crate::scheduler::binding::{Action, Binding, Kind};
use crate::scheduler::command::Command;
use crate::signal::{Ctx, Node};

impl Inner {
    /// The trigger phase: poll every binding once (in the order they were made) and act on
    /// edges. Bindings made during this phase are first polled next cycle.
    pub(crate) fn poll_bindings(self: &Rc<Self>) {
        let (count, ctx) = {
            let s = self.state.borrow();
            (s.bindings.len(), self.trigger_ctx_of(&s))
        };
        for i in 0..count {
            let Some(binding) = self.state.borrow().bindings.get(i).cloned() else {
                break;
            };
            let live = |cmd: &Command| self.state.borrow().live_key(cmd).is_some();
            match binding.poll(&ctx, live) {
                Some(Action::Schedule) => self.schedule_binding(&binding),
                Some(Action::Cancel) => {
                    self.cancel_command(binding.command());
                }
                Some(Action::Toggle) if !self.cancel_command(binding.command()) => {
                    self.schedule_binding(&binding);
                }
                None | Some(Action::Toggle) => {}
            }
        }
    }

    fn schedule_binding(self: &Rc<Self>, binding: &Binding) {
        // Remember only an instance this binding started, so its scope ending never cancels one
        // that someone else scheduled.
        let (result, key) = self.schedule_in(binding.command(), binding.scope, binding.at());
        if result.is_success() {
            binding.set_scheduled(key);
        }
    }

    /// Cancels `cmd`'s live instance; whether there was one.
    pub(crate) fn cancel_command(&self, cmd: &Command) -> bool {
        let key = self.state.borrow().live_key(cmd);
        if let Some(key) = key {
            self.cancel_key(key);
        }
        key.is_some()
    }

    fn trigger_ctx_of(&self, s: &super::state::State) -> Ctx {
        Ctx {
            cycle: s.cycle,
            now: s.current_now(&self.clock),
        }
    }

    /// What a trigger read now sees: the current cycle and the latest clock reading.
    pub(crate) fn trigger_ctx(&self) -> Ctx {
        self.trigger_ctx_of(&self.state.borrow())
    }

    /// Adds a binding in the caller's scope.
    pub(crate) fn add_binding(
        &self,
        node: Rc<Node>,
        kind: Kind,
        command: &Command,
        at: &'static Location<'static>,
        first_low_falls: bool,
    ) {
        let mut s = self.state.borrow_mut();
        let scope = s.scope_for(self.mounted.get());
        s.bindings.push(Rc::new(Binding::new(
            node,
            kind,
            command,
            scope,
            at,
            first_low_falls,
        )));
    }

    /// Marks every binding on `node` dead (removed, and its command canceled, at the next
    /// cleanup).
    pub(crate) fn unbind_node(&self, node: &Rc<Node>) {
        for binding in &self.state.borrow().bindings {
            if binding.watches(node) {
                binding.unbind();
            }
        }
    }

    /// A new mechanism's slot: its index and this scheduler's tag.
    pub(crate) fn add_mechanism(&self) -> (usize, usize) {
        let mut s = self.state.borrow_mut();
        s.mechs.push(MechSlot {
            controllable_while_disabled: false,
            owner: None,
            queued: None,
            defaults: Vec::new(),
            default_key: None,
        });
        (s.mechs.len() - 1, s.tag)
    }
}
