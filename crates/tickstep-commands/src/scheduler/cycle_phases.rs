//! One scheduler cycle, phase by phase, with what each phase works on. `Inner`'s methods live
//! in three files: `inner.rs` (the engine, settling, schedule, fork and cancel), this file (the
//! phases of a cycle, the robot state and modes, default commands, the trigger phase and the
//! narrow API trigger and mechanism handles use), and `execute.rs` (mounting one command)
//! (docs/commands.md §11.37).
//!
//! The phases, in the order of docs/commands.md §2.1:
//!
//! 1. **Cleanup**: if the robot just became disabled, what it may not run is canceled
//!    (docs/commands.md §12.3); bindings and sideloads whose scope ended are removed; commands
//!    those bindings scheduled are canceled.
//! 2. **Sideloads**: each periodic coroutine is polled once.
//! 3. **Scheduling**: triggers are polled (queueing or canceling commands); default commands are
//!    queued for idle mechanisms; queued commands are promoted (higher priority interrupts, ties
//!    go to the newcomer, lower is discarded).
//! 4. **Execution**: running commands are mounted newest first, so a parent awaiting a child
//!    resumes in the cycle the child ends. Children started during this phase already ran inside
//!    their parent's poll and are not polled again.

use std::panic::Location;
use std::rc::Rc;

use tickstep_kernel::clock::Clock;

use super::inner::RestoreMounted;
use super::state::{DefaultBinding, Failure, MechSlot, Phase, State};
use super::{CommandScheduler, Inner};
use crate::error::RunError;
use crate::id::{Key, Mounted};
use crate::scheduler::binding::{Action, Binding, Kind};
use crate::scheduler::command::Command;
use crate::scope::{OpMode, Scope};
use crate::trigger_node::{Ctx, Node};

struct RunGuard<'a>(&'a Inner);
impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        self.0.mounted.set(Mounted::NOTHING);
        if let Ok(mut s) = self.0.state.try_borrow_mut() {
            s.in_run = false;
        }
    }
}

/// The cycle itself: `run`, the cleanup phase and the sideloads.
impl Inner {
    #[track_caller]
    pub(crate) fn run(self: &Rc<Self>) -> Result<(), RunError> {
        // The host's view of the robot, read once per cycle before anything else
        // (docs/commands.md §12.1): a disabled robot's commands never run another step.
        if !self.state.borrow().in_run {
            self.read_robot_state();
        }
        let (start, idle) = {
            let mut s = self.state.borrow_mut();
            assert!(
                !s.in_run,
                "CommandScheduler::run was called from inside run() (from a command, trigger, sideload or listener); call it once per cycle from the robot loop"
            );
            s.in_run = true;
            s.cycle += 1;
            s.now_raw = self.clock.raw();
            s.now = self.clock.raw_instant(s.now_raw);
            s.compact();
            (s.now, s.is_idle())
        };
        let guard = RunGuard(self);

        // An idle cycle only counts itself and its time (docs/commands.md §2.4): every phase
        // would find its list empty.
        if !idle {
            self.sweep_disabled();
            self.cleanup_scopes();
            self.run_sideloads();
            self.poll_bindings();
            self.process_defaults();
            self.state.borrow_mut().promote();
            self.settle();
            self.execute();
        }

        let failure = {
            let mut s = self.state.borrow_mut();
            s.compact();
            let end = self.clock.now();
            s.last_run_time = end - start;
            let running = (s.running.iter())
                .filter(|k| s.entry(**k).is_some_and(|e| e.phase == Phase::Running))
                .count();
            s.metrics.cycle(running);
            s.now = end;
            s.failure.take()
        };
        drop(guard);
        match failure {
            None => Ok(()),
            Some(Failure::Error(error)) => Err(error),
            Some(Failure::Panic(payload)) => std::panic::resume_unwind(payload),
        }
    }

    fn execute(self: &Rc<Self>) {
        let count = self.state.borrow().running.len();
        for i in (0..count).rev() {
            if self.mount_running(i) {
                // The failure leaves run() now, like an exception out of the loop: commands not yet
                // polled this cycle are polled next cycle.
                return;
            }
        }
    }

    /// Removes bindings and sideloads whose scope ended (and unbound bindings), canceling the
    /// commands those bindings started. A scan without allocation when nothing died.
    fn cleanup_scopes(&self) {
        let dead_bodies = {
            let mut s = self.state.borrow_mut();
            let s = &mut *s;
            let binding_dead = |s: &State, b: &Binding| b.is_unbound() || !s.scope_alive(b.scope);
            if s.bindings.iter().any(|b| binding_dead(s, b)) {
                let bindings = std::mem::take(&mut s.bindings);
                let (dead, kept): (Vec<_>, Vec<_>) =
                    bindings.into_iter().partition(|b| binding_dead(s, b));
                s.bindings = kept;
                for key in dead.iter().filter_map(|b| b.scheduled_key()) {
                    s.cancel_tree(key, None);
                }
            }
            if s.swept_epoch != s.opmode_epoch {
                // The opmode changed: commands scheduled in the old one end with it.
                s.swept_epoch = s.opmode_epoch;
                let mut doomed: Vec<_> = s.live_in(&s.running, Phase::Running);
                doomed.extend(s.live_in(&s.queued, Phase::Queued));
                doomed.retain(|k| {
                    s.entry(*k).is_some_and(|e| {
                        e.parent.is_none()
                            && matches!(e.scope, Scope::OpMode(_))
                            && !s.scope_alive(e.scope)
                    })
                });
                for key in doomed.into_iter().rev() {
                    s.cancel_tree(key, None);
                }
            }
            let mut bodies = Vec::new();
            if s.sideloads.iter().any(|sl| !s.scope_alive(sl.scope)) {
                let sideloads = std::mem::take(&mut s.sideloads);
                let (dead, kept): (Vec<_>, Vec<_>) = sideloads
                    .into_iter()
                    .partition(|sl| !s.scope_alive(sl.scope));
                s.sideloads = kept;
                bodies.extend(dead.into_iter().filter_map(|sl| sl.future));
            }
            bodies
        };
        // Dropping a body may run user code (its captures' destructors): no borrow held.
        drop(dead_bodies);
        self.settle();
    }

    fn run_sideloads(self: &Rc<Self>) {
        let count = self.state.borrow().sideloads.len();
        let mut any_done = false;
        for i in 0..count {
            let (id, future) = {
                let mut s = self.state.borrow_mut();
                let sideload = &mut s.sideloads[i];
                (sideload.id, sideload.future.take())
            };
            let Some(mut future) = future else { continue };
            let previous = self.mounted.replace(Mounted::sideload(id));
            let restore = RestoreMounted(&self.mounted, previous);
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            let done = future.poll(&mut cx).is_ready();
            drop(restore);
            if done {
                any_done = true;
                drop(future);
            } else {
                self.state.borrow_mut().sideloads[i].future = Some(future);
            }
        }
        if any_done {
            self.state
                .borrow_mut()
                .sideloads
                .retain(|sl| sl.future.is_some());
        }
        self.settle();
    }
}

/// What a robot mode sets up when it starts (`CommandScheduler::on_mode`).
#[derive(Clone)]
pub(crate) struct ModeSetup {
    pub(crate) mode: OpMode,
    pub(crate) setup: Rc<dyn Fn(&CommandScheduler)>,
}

/// The robot's state in the scheduler (docs/commands.md §12): reading the host's
/// `RobotState`, sweeping what a disabled robot may not run, and following
/// the robot mode — switching the opmode and running what the new mode sets up.
impl Inner {
    /// Reads whether the robot is enabled; a change to disabled makes the next cleanup phase
    /// sweep (docs/commands.md §12.3). The host's code runs with no borrow held.
    pub(crate) fn read_enabled(&self) -> bool {
        let robot = self.robot.borrow().clone();
        let enabled = robot.is_enabled();
        let mut s = self.state.borrow_mut();
        s.robot = s.robot.read(enabled);
        enabled
    }

    /// The start of a cycle: whether the robot is enabled, then its mode (docs/commands.md
    /// §12.1, §12.5).
    pub(crate) fn read_robot_state(self: &Rc<Self>) {
        self.read_enabled();
        let robot = self.robot.borrow().clone();
        if let Some(mode) = robot.mode() {
            self.enter_opmode(Some(mode));
        }
    }

    /// Whether the host's robot mode differs from the active opmode: the next `run()` enters it
    /// (docs/commands.md §12.8).
    pub(crate) fn mode_pending(&self) -> bool {
        let robot = self.robot.borrow().clone();
        robot
            .mode()
            .is_some_and(|mode| self.state.borrow().opmode != Some(mode))
    }

    /// Cancels what a disabled robot may not run, if it just became disabled.
    pub(crate) fn sweep_disabled(&self) {
        self.state.borrow_mut().sweep_disabled();
        self.settle();
    }

    /// Makes `opmode` the active one; when it changed, everything scoped to the old one dies at
    /// the next cleanup (docs/commands.md §8.1, §8.5) and the new mode's setups run now, outside
    /// any command, so what they make belongs to the new mode (docs/commands.md §12.6).
    pub(crate) fn enter_opmode(self: &Rc<Self>, opmode: Option<OpMode>) {
        let epoch = {
            let mut s = self.state.borrow_mut();
            if s.opmode == opmode {
                return;
            }
            s.opmode = opmode;
            s.opmode_epoch += 1;
            s.opmode_epoch
        };
        let Some(mode) = opmode else { return };
        let setups = self.mode_setups.borrow().clone();
        if !setups.iter().any(|m| m.mode == mode) {
            return;
        }
        let scheduler = CommandScheduler {
            inner: self.clone(),
        };
        let _unmount = RestoreMounted(&self.mounted, self.mounted.replace(Mounted::NOTHING));
        for m in setups.iter().filter(|m| m.mode == mode) {
            // A setup that changed the mode again stops the rest of the old mode's setups.
            if self.state.borrow().opmode_epoch != epoch {
                break;
            }
            (m.setup)(&scheduler);
        }
    }
}

/// Default commands, scoped like bindings (docs/commands.md §4.6–§4.8).
///
/// Each mechanism keeps a stack of default commands, widest scope first. A default set outside
/// any command is global (or, while an opmode is active, lives as long as the opmode); one set
/// inside a command lives as long as that command and runs as its child (so it inherits the
/// command's priority and dies with it). The narrowest default whose scope is alive applies; a
/// wider one that is running gives way to it, and comes back when the narrower scope ends.
/// Setting a default again in the same scope replaces it (the stack never grows from re-setting).
///
/// A default command that sets its own mechanism's default replaces itself: the new one starts
/// at the next default-command step (the reference's "takes effect at the end of the cycle"),
/// instead of starting as its own child, which could recurse within one `run()`.
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

/// The trigger phase, and the narrow API trigger and mechanism handles use to reach the engine:
/// only this folder touches the scheduler's state.
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
