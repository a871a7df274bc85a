//! Default commands, scoped like bindings (docs/commands.md §4.6–§4.8).
//!
//! Each mechanism keeps a stack of default commands, widest scope first. A default set outside
//! any command is global (or, while an opmode is active, lives as long as the opmode); one set
//! inside a command lives as long as that command and runs as its child (so it inherits the
//! command's priority and dies with it). The narrowest default whose scope is alive applies; a
//! wider one that is running gives way to it, and comes back when the narrower scope ends.
//! Setting a default again in the same scope replaces it (the stack never grows from re-setting).
//!
//! A default command that sets its own mechanism's default replaces itself: the new one starts
//! at the next default-command step (the reference's "takes effect at the end of the cycle"),
//! instead of starting as its own child, which could recurse within one `run()`.

use std::panic::Location;
use std::rc::Rc;

use super::Inner;
use super::state::DefaultBinding;
use crate::id::Key;
use crate::scheduler::command::Command;
use crate::scope::Scope;

impl Inner {
    /// Records `cmd` as the default of mechanism `m` in the caller's scope. Set from inside a
    /// command (not the mechanism's running default itself), it applies at once.
    pub(crate) fn set_default(
        self: &Rc<Self>,
        m: usize,
        cmd: &Command,
        at: &'static Location<'static>,
    ) {
        let mounted = self.mounted.get();
        let immediate = {
            let mut s = self.state.borrow_mut();
            s.any_defaults = true;
            let scope = s.scope_for(mounted);
            let caller = mounted.as_command();
            let slot = &mut s.mechs[m];
            let binding = DefaultBinding {
                cmd: cmd.clone(),
                at,
                scope,
            };
            if caller.is_some() && caller == slot.default_key {
                // The running default replaces itself in its own scope.
                if let Some(top) = slot.defaults.last_mut() {
                    top.cmd = binding.cmd;
                    top.at = at;
                } else {
                    slot.defaults.push(binding);
                }
                false
            } else {
                if let Some(same) = slot.defaults.iter_mut().find(|d| d.scope == scope) {
                    *same = binding;
                } else {
                    slot.defaults.push(binding);
                }
                caller.is_some()
            }
        };
        if immediate {
            self.process_default(m);
        }
    }

    /// The default-command step for every mechanism.
    pub(crate) fn process_defaults(self: &Rc<Self>) {
        let count = {
            let s = self.state.borrow();
            if !s.any_defaults {
                return;
            }
            s.mechs.len()
        };
        for m in 0..count {
            self.process_default(m);
        }
    }

    /// Drops defaults whose scope ended, stops a running default that is no longer the one that
    /// applies, and schedules the applicable default if the mechanism is idle.
    fn process_default(self: &Rc<Self>, m: usize) {
        let (next, needs_settle) = {
            let mut s = self.state.borrow_mut();
            let s = &mut *s;
            if s.mechs[m].defaults.is_empty() && s.mechs[m].default_key.is_none() {
                return;
            }
            // A scan without allocation in the common cycle, where every scope is alive.
            if s.mechs[m].defaults.iter().any(|d| !s.scope_alive(d.scope)) {
                let mut defaults = std::mem::take(&mut s.mechs[m].defaults);
                defaults.retain(|d| s.scope_alive(d.scope));
                s.mechs[m].defaults = defaults;
            }
            let running_default: Option<Key> = s.mechs[m].default_key.filter(|k| s.is_live(*k));
            s.mechs[m].default_key = running_default;
            let top = s.mechs[m]
                .defaults
                .last()
                .map(|d| (d.cmd.clone(), d.at, d.scope));
            if let Some(key) = running_default {
                let still_applies = top.as_ref().is_some_and(|(cmd, _, scope)| {
                    s.entry(key).is_some_and(|e| {
                        e.cmd.same_as(cmd)
                            && match scope {
                                Scope::Command(parent) => e.parent == Some(*parent),
                                Scope::Global | Scope::OpMode(_) => e.parent.is_none(),
                            }
                    })
                });
                if !still_applies {
                    s.cancel_tree(key, None);
                    s.mechs[m].default_key = None;
                }
            }
            let slot = &s.mechs[m];
            let idle = slot.owner.is_none() && slot.queued.is_none();
            (idle.then_some(top).flatten(), !s.deferred.is_empty())
        };
        if needs_settle {
            self.settle();
        }
        if let Some((cmd, at, scope)) = next {
            let (result, key) = self.schedule_in(&cmd, scope, at);
            if result.is_success() {
                self.state.borrow_mut().mechs[m].default_key = key;
            }
        }
    }
}
