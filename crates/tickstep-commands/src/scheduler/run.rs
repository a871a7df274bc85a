//! One scheduler cycle, in the order of docs/commands.md §2.1:
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

use std::rc::Rc;

use tickstep_kernel::clock::Clock;

use super::Inner;
use super::inner::RestoreMounted;
use super::state::{Failure, Phase, State};
use crate::error::RunError;
use crate::id::Mounted;
use crate::scheduler::binding::Binding;
use crate::scope::Scope;

struct RunGuard<'a>(&'a Inner);
impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        self.0.mounted.set(Mounted::NOTHING);
        if let Ok(mut s) = self.0.state.try_borrow_mut() {
            s.in_run = false;
        }
    }
}

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
