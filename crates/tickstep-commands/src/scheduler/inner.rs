//! The shared engine behind every handle: state, clock, the mount marker and the listeners.
//!
//! Re-entrancy rule: a `RefCell` borrow of the state is never held across user code. Entry
//! points take the borrow, change the state, release it, then call [`Inner::settle`] which runs
//! deferred effects (listeners, `on_cancel`, dropping bodies) one at a time without a borrow.

use std::cell::{Cell, RefCell};
use std::panic::Location;
use std::rc::Rc;

use tickstep_kernel::AnyClock;
use tickstep_kernel::clock::Clock;

use super::Inner;
use super::state::{Deferred, Listen, Phase, Robot, State};
use crate::error::{ConflictPair, ForkError};
use crate::event::{Event, EventKind};
use crate::id::{Key, Mounted};
use crate::metrics::ConflictWith;
use crate::run::Run;
use crate::schedule_result::ScheduleResult;
use crate::scheduler::command::Command;
use crate::scope::Scope;

#[derive(Clone)]
pub(crate) struct Listener {
    pub(crate) call: Rc<dyn Fn(&Event)>,
    /// Skips the per-cycle `Mounted`/`Yielded` events.
    pub(crate) lifecycle_only: bool,
}

/// Puts the mount marker back when dropped (also on unwinding).
pub(crate) struct RestoreMounted<'a>(pub(crate) &'a Cell<Mounted>, pub(crate) Mounted);
impl Drop for RestoreMounted<'_> {
    fn drop(&mut self) {
        self.0.set(self.1);
    }
}

struct ResetOnDrop<'a>(&'a Cell<bool>);
impl Drop for ResetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

impl Inner {
    pub(crate) fn new(clock: AnyClock) -> Rc<Inner> {
        let watchdog_raw = clock.raw_of(super::DEFAULT_WATCHDOG_LIMIT);
        Rc::new_cyclic(|weak| Inner {
            state: RefCell::new(State::new(weak.as_ptr() as usize, watchdog_raw)),
            clock,
            mounted: Rc::new(Cell::new(Mounted::NOTHING)),
            listeners: RefCell::new(Rc::new(Vec::new())),
            settling: Cell::new(false),
            robot: RefCell::new(Rc::new(crate::robot::AlwaysEnabled)),
            mode_setups: RefCell::new(Rc::new(Vec::new())),
        })
    }

    /// Runs deferred effects in order until none are left. Nested calls (from a listener that
    /// schedules) return at once; the outer loop picks up what they queued.
    pub(crate) fn settle(&self) {
        if self.settling.replace(true) {
            return;
        }
        let _reset = ResetOnDrop(&self.settling);
        // Listeners and hooks are not the body being polled: what they schedule is top level.
        let _unmount = RestoreMounted(&self.mounted, self.mounted.replace(Mounted::NOTHING));
        loop {
            let next = self.state.borrow_mut().deferred.pop_front();
            match next {
                None => break,
                Some(Deferred::Event(event)) => {
                    let listeners = self.listeners.borrow().clone();
                    let per_cycle = matches!(event.kind, EventKind::Mounted | EventKind::Yielded);
                    for listener in listeners.iter() {
                        if !(per_cycle && listener.lifecycle_only) {
                            (listener.call)(&event);
                        }
                    }
                }
                Some(Deferred::OnCancel(hook)) => hook(),
                Some(Deferred::Drop(body)) => drop(body),
            }
        }
    }

    /// Refreshes the event timestamp when called from outside `run()`.
    fn stamp(&self, s: &mut State) {
        if !s.in_run && s.listen != Listen::Nothing {
            s.now = self.clock.now();
        }
    }

    #[track_caller]
    pub(crate) fn check_mechanisms(&self, cmd: &Command) {
        let tag = self.state.borrow().tag;
        for m in &cmd.0.requirements {
            assert!(
                m.tag() == tag,
                "command `{}` requires mechanism `{}`, which belongs to another scheduler",
                cmd.name(),
                m.name()
            );
        }
    }

    /// `schedule` from anywhere: the command lives in the narrowest scope of the caller (see
    /// [`Inner::schedule_in`]).
    #[track_caller]
    pub(crate) fn schedule(
        self: &Rc<Self>,
        cmd: &Command,
        at: &'static Location<'static>,
    ) -> (ScheduleResult, Option<Key>) {
        // From outside run() the robot may have been disabled since the cycle began
        // (docs/commands.md §12.2); inside it, the cycle's reading holds.
        if !self.state.borrow().in_run {
            self.read_enabled();
        }
        let scope = self.state.borrow().scope_for(self.mounted.get());
        self.schedule_in(cmd, scope, at)
    }

    /// Schedules `cmd` to live in `scope`. A command scope makes it that command's child: started
    /// and polled at once when that command is the one being polled, otherwise queued for the
    /// promotion step. An opmode or global scope queues it at top level.
    #[track_caller]
    pub(crate) fn schedule_in(
        self: &Rc<Self>,
        cmd: &Command,
        scope: Scope,
        at: &'static Location<'static>,
    ) -> (ScheduleResult, Option<Key>) {
        self.check_mechanisms(cmd);
        let mounted = self.mounted.get().as_command();
        let (result, key, child) = {
            let mut s = self.state.borrow_mut();
            self.stamp(&mut s);
            if let Some(key) = s.live_key(cmd) {
                (ScheduleResult::AlreadyRunning, Some(key), false)
            } else if s.live_elsewhere(cmd) {
                (ScheduleResult::AlreadyRunning, None, false)
            } else {
                match scope {
                    Scope::Command(parent) if mounted == Some(parent) => {
                        match s.start_child(cmd, parent, at) {
                            Ok(key) => (ScheduleResult::Success, Some(key), true),
                            Err(rejected) => (rejected, None, false),
                        }
                    }
                    Scope::Command(parent) => {
                        let (result, key) = s.schedule_queued(cmd, Some(parent), scope, at);
                        (result, key, false)
                    }
                    Scope::Global | Scope::OpMode(_) => {
                        let (result, key) = s.schedule_queued(cmd, None, scope, at);
                        (result, key, false)
                    }
                }
            }
        };
        self.settle();
        if let (true, Some(key)) = (child, key) {
            // A failure here stays recorded; the enclosing run() reports it.
            let _ = self.mount(key);
        }
        (result, key)
    }

    /// Starts `cmds` as children of `parent`, all or nothing. With `join`, commands that are
    /// already live are not an error: their running instance is returned to wait on.
    #[track_caller]
    pub(crate) fn fork(
        self: &Rc<Self>,
        parent: Key,
        cmds: &[Command],
        join: bool,
        at: &'static Location<'static>,
    ) -> Result<Vec<Run>, ForkError> {
        for cmd in cmds {
            self.check_mechanisms(cmd);
        }
        self.refuse_fork_while_disabled(parent, cmds)?;
        let mut keys: Vec<Option<Run>> = vec![None; cmds.len()];
        {
            let s = self.state.borrow();
            let parent_entry = s.entry(parent).filter(|p| p.phase == Phase::Running);
            let Some(p) = parent_entry else {
                let parent_name = s
                    .entry(parent)
                    .map_or_else(|| "<ended>".to_owned(), |p| p.cmd.name().to_owned());
                return Err(ForkError::ParentFinished {
                    command: cmds
                        .first()
                        .map_or_else(String::new, |c| c.name().to_owned()),
                    parent: parent_name,
                });
            };
            let parent_priority = p.priority;
            let mut fresh: Vec<&Command> = Vec::new();
            for (i, cmd) in cmds.iter().enumerate() {
                if let Some(key) = s.live_key(cmd) {
                    if !join {
                        return Err(ForkError::AlreadyRunning {
                            command: cmd.name().to_owned(),
                        });
                    }
                    keys[i] = s.run_of_key(key);
                } else if s.live_elsewhere(cmd) || fresh.iter().any(|f| f.same_as(cmd)) {
                    return Err(ForkError::AlreadyRunning {
                        command: cmd.name().to_owned(),
                    });
                } else {
                    fresh.push(cmd);
                }
            }
            let pairs = conflicting_pairs(&fresh);
            if !pairs.is_empty() {
                s.metrics.conflict(ConflictWith::Fork);
                return Err(ForkError::Conflicting { pairs });
            }
            let ancestors = s.lineage(parent);
            let cancel_parent = p.cancel_on_fork_failure;
            for cmd in &fresh {
                let priority = cmd.priority().max(parent_priority);
                if let Err(reason) = s.conflicts(cmd, priority, &ancestors) {
                    let blocker = s.blocker(cmd, priority, &ancestors);
                    drop(s);
                    if let (true, Some(blocker)) = (cancel_parent, blocker) {
                        self.state
                            .borrow_mut()
                            .interrupt_composition(parent, blocker);
                        self.settle();
                    }
                    return Err(ForkError::Rejected {
                        command: cmd.name().to_owned(),
                        reason,
                    });
                }
            }
        }
        let mut started: Vec<Key> = Vec::new();
        for (i, cmd) in cmds.iter().enumerate() {
            if keys[i].is_some() {
                continue;
            }
            let outcome = {
                let mut s = self.state.borrow_mut();
                // The run is named before the child's first step, which may end it.
                (s.start_child(cmd, parent, at)).map(|key| (key, s.run_of_key(key)))
            };
            match outcome {
                Ok((key, run)) => {
                    self.settle();
                    started.push(key);
                    keys[i] = run;
                    let _ = self.mount(key);
                }
                Err(reason) => {
                    self.undo_fork(parent, cmd, started);
                    return Err(ForkError::Rejected {
                        command: cmd.name().to_owned(),
                        reason,
                    });
                }
            }
        }
        Ok(keys.into_iter().flatten().collect())
    }

    /// While the robot is disabled, a fork of a command it may not run is refused and cancels
    /// the parent's composition: safety first (docs/commands.md §12.4).
    fn refuse_fork_while_disabled(&self, parent: Key, cmds: &[Command]) -> Result<(), ForkError> {
        if self.state.borrow().robot == Robot::Enabled {
            return Ok(());
        }
        let refused = {
            let mut s = self.state.borrow_mut();
            (cmds.iter()).find_map(|cmd| Some((cmd, s.refuse_if_disabled(cmd, Some(parent))?)))
        };
        self.settle();
        match refused {
            Some((cmd, reason)) => Err(ForkError::Rejected {
                command: cmd.name().to_owned(),
                reason,
            }),
            None => Ok(()),
        }
    }

    /// An earlier child of a fork changed the world while it ran so that `cmd` could not start:
    /// the children started so far are canceled, and with `cancel_on_fork_failure` the parent's
    /// composition is interrupted by whatever blocks `cmd`.
    fn undo_fork(&self, parent: Key, cmd: &Command, started: Vec<Key>) {
        {
            let mut s = self.state.borrow_mut();
            for key in started.into_iter().rev() {
                s.cancel_tree(key, None);
            }
            let cancel_parent = s.entry(parent).is_some_and(|p| p.cancel_on_fork_failure);
            let priority = s
                .entry(parent)
                .map_or(cmd.priority(), |p| cmd.priority().max(p.priority));
            let ancestors = s.lineage(parent);
            if let (true, Some(blocker)) = (cancel_parent, s.blocker(cmd, priority, &ancestors)) {
                s.interrupt_composition(parent, blocker);
            }
        }
        self.settle();
    }

    /// A sideload's `fork`: a sideload has no children, so the commands are scheduled in the
    /// sideload's scope (queued, promoted this cycle), all or nothing. A refusal does not end
    /// the sideload.
    #[track_caller]
    pub(crate) fn fork_from_sideload(
        self: &Rc<Self>,
        cmds: &[Command],
        at: &'static Location<'static>,
    ) -> Result<(), ForkError> {
        let refs: Vec<&Command> = cmds.iter().collect();
        let pairs = conflicting_pairs(&refs);
        if !pairs.is_empty() {
            self.state.borrow().metrics.conflict(ConflictWith::Fork);
            return Err(ForkError::Conflicting { pairs });
        }
        let scope = self.state.borrow().scope_for(self.mounted.get());
        let mut started = Vec::new();
        for cmd in cmds {
            match self.schedule_in(cmd, scope, at) {
                (ScheduleResult::Success, Some(key)) => started.push(key),
                (reason, _) => {
                    for key in started {
                        self.cancel_key(key);
                    }
                    return Err(match reason {
                        ScheduleResult::AlreadyRunning => ForkError::AlreadyRunning {
                            command: cmd.name().to_owned(),
                        },
                        reason => ForkError::Rejected {
                            command: cmd.name().to_owned(),
                            reason,
                        },
                    });
                }
            }
        }
        Ok(())
    }

    pub(crate) fn cancel_key(&self, key: Key) {
        {
            let mut s = self.state.borrow_mut();
            self.stamp(&mut s);
            s.cancel_tree(key, None);
        }
        self.settle();
    }

    pub(crate) fn set_cancel_on_fork_failure(&self, key: Key, cancel: bool) {
        if let Some(e) = self.state.borrow_mut().entry_mut(key) {
            e.cancel_on_fork_failure = cancel;
        }
    }

    pub(crate) fn is_live(&self, key: Key) -> bool {
        self.state.borrow().is_live(key)
    }

    /// Whether the command bound to `mounted` may continue (not canceled mid-poll).
    pub(crate) fn still_running(&self, mounted: Mounted) -> bool {
        mounted.as_command().is_none_or(|key| {
            self.state
                .borrow()
                .entry(key)
                .is_some_and(|e| e.phase == Phase::Running)
        })
    }
}

/// Every pair of commands (in order) that share a mechanism.
pub(crate) fn conflicting_pairs(cmds: &[&Command]) -> Vec<ConflictPair> {
    let mut pairs = Vec::new();
    for (i, a) in cmds.iter().enumerate() {
        for b in &cmds[i + 1..] {
            let shared = a.shared_mechanisms(b);
            if !shared.is_empty() {
                pairs.push(ConflictPair {
                    first: a.name().to_owned(),
                    second: b.name().to_owned(),
                    mechanisms: shared,
                });
            }
        }
    }
    pairs
}
