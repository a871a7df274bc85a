//! Lifecycle transitions under the state borrow: queue, start as child, promote, cancel, finish.
//!
//! Nothing here runs user code; effects that would (events, `on_cancel`, dropping bodies) are
//! pushed onto `State::deferred` in the order they happen.

use std::panic::Location;
use std::rc::Rc;

use super::state::{Deferred, Failure, Phase, Robot, State};
use crate::id::Key;
use crate::metrics::ConflictWith;
use crate::schedule_result::ScheduleResult;
use crate::scope::Scope;

/// How many children one command may start within one `run()` (the guard against a body that
/// starts children ending at once in a loop that never yields).
pub(crate) const MAX_CHILD_STARTS_PER_RUN: u32 = 10_000;
use crate::event::{CommandId, EventKind};
use crate::scheduler::command::Command;

/// Who displaced a command, for the `Interrupted` event.
pub(crate) type Interrupter = Option<(CommandId, Rc<str>)>;

impl State {
    /// Checks `cmd` (at effective priority `priority`) against the running owners of its
    /// mechanisms, ignoring its own `ancestors`. On success returns the commands to cancel: for
    /// each conflicting owner, its highest ancestor that is not an ancestor of the newcomer.
    pub(crate) fn conflicts(
        &self,
        cmd: &Command,
        priority: i32,
        ancestors: &[Key],
    ) -> Result<Vec<Key>, ScheduleResult> {
        let mut victims = Vec::new();
        for m in &cmd.0.requirements {
            let Some(owner) = self.mechs[m.index()].owner else {
                continue;
            };
            if ancestors.contains(&owner) {
                continue;
            }
            let Some(o) = self.entry(owner) else { continue };
            if o.priority > priority {
                self.metrics.conflict(ConflictWith::Running);
                return Err(ScheduleResult::LowerPriorityThanRunning {
                    running: o.cmd.name().to_owned(),
                    running_priority: o.priority,
                    priority,
                });
            }
            let mut victim = owner;
            while let Some(parent) = self.entry(victim).and_then(|e| e.parent) {
                if ancestors.contains(&parent) {
                    break;
                }
                victim = parent;
            }
            if !victims.contains(&victim) {
                victims.push(victim);
            }
        }
        Ok(victims)
    }

    /// Queues `cmd` for the promotion step, as a top-level command living in `scope` or (with
    /// `parent`) as a child of a running command that starts when promoted. Checks running and
    /// queued conflicts and evicts lower-or-equal queued rivals.
    pub(crate) fn schedule_queued(
        &mut self,
        cmd: &Command,
        parent: Option<Key>,
        scope: Scope,
        at: &'static Location<'static>,
    ) -> (ScheduleResult, Option<Key>) {
        if let Some(refused) = self.refuse_if_disabled(cmd, parent) {
            return (refused, None);
        }
        let (priority, ancestors) = match parent {
            None => (cmd.priority(), Vec::new()),
            Some(p) => match self.running_parent(p) {
                Ok(parent_priority) => (cmd.priority().max(parent_priority), self.lineage(p)),
                Err(rejected) => return (rejected, None),
            },
        };
        if let Err(rejected) = self.conflicts(cmd, priority, &ancestors) {
            return (rejected, None);
        }
        let mut rivals: Vec<Key> = Vec::new();
        for m in &cmd.0.requirements {
            let Some(q) = self.mechs[m.index()].queued else {
                continue;
            };
            let Some(e) = self.entry(q) else { continue };
            if e.priority > priority {
                self.metrics.conflict(ConflictWith::Queued);
                return (
                    ScheduleResult::LowerPriorityThanQueued {
                        queued: e.cmd.name().to_owned(),
                        queued_priority: e.priority,
                        priority,
                    },
                    None,
                );
            }
            if !rivals.contains(&q) {
                rivals.push(q);
            }
        }
        let key = self.alloc(cmd, parent, Phase::Queued, priority, at);
        if let Some(e) = self.entry_mut(key) {
            e.scope = scope;
        }
        if let Some(p) = parent.and_then(|p| self.entry_mut(p)) {
            p.children.push(key);
        }
        self.emit(key, EventKind::Scheduled);
        let by = self.interrupter(key);
        for rival in rivals {
            self.cancel_tree(rival, by.clone());
        }
        for m in &cmd.0.requirements {
            self.mechs[m.index()].queued = Some(key);
        }
        self.queued.push(key);
        (ScheduleResult::Success, Some(key))
    }

    /// While the robot is disabled, refuses `cmd` if it requires a mechanism not controllable
    /// then (docs/commands.md §12.2). A refused child cancels its parent's whole composition,
    /// which is reported `Disabled` (docs/commands.md §12.4).
    #[inline]
    pub(crate) fn refuse_if_disabled(
        &mut self,
        cmd: &Command,
        parent: Option<Key>,
    ) -> Option<ScheduleResult> {
        if self.robot == Robot::Enabled {
            return None;
        }
        self.refuse_disabled(cmd, parent)
    }

    #[cold]
    fn refuse_disabled(&mut self, cmd: &Command, parent: Option<Key>) -> Option<ScheduleResult> {
        let mechanism = self.disabled_blocker(cmd)?.0.name.clone();
        if let Some(parent) = parent.filter(|p| self.is_live(*p)) {
            let root = self.root_of(parent);
            self.cancel_disabled(root, mechanism.clone());
        }
        Some(ScheduleResult::RobotDisabled {
            command: cmd.name().to_owned(),
            mechanism: mechanism.to_string(),
        })
    }

    /// Cancels the composition rooted at `root` because the robot is disabled and it needs
    /// `mechanism`: `Disabled`, then `Canceled` and its descendants' (docs/commands.md §12.3).
    fn cancel_disabled(&mut self, root: Key, mechanism: std::rc::Rc<str>) {
        self.emit(root, EventKind::Disabled { mechanism });
        self.cancel_tree(root, None);
    }

    /// The robot became disabled: every queued or running command that requires a mechanism not
    /// controllable while disabled is canceled with its whole composition, running ones first,
    /// each in the order it started (docs/commands.md §12.3).
    pub(crate) fn sweep_disabled(&mut self) {
        if self.robot != Robot::DisabledUnswept {
            return;
        }
        self.robot = Robot::Disabled;
        let mut doomed: Vec<(Key, std::rc::Rc<str>)> = Vec::new();
        for &key in self.running.iter().chain(&self.queued) {
            let Some(e) = self.entry(key).filter(|e| e.phase != Phase::Finished) else {
                continue;
            };
            let Some(m) = self.disabled_blocker(&e.cmd) else {
                continue;
            };
            let root = self.root_of(key);
            if !doomed.iter().any(|(k, _)| *k == root) {
                doomed.push((root, m.0.name.clone()));
            }
        }
        for (root, mechanism) in doomed {
            if self.is_live(root) {
                self.cancel_disabled(root, mechanism);
            }
        }
    }

    /// The effective priority of `parent` if it is running; otherwise why a child cannot start.
    fn running_parent(&self, parent: Key) -> Result<i32, ScheduleResult> {
        match self.entry(parent) {
            Some(p) if p.phase == Phase::Running => Ok(p.priority),
            Some(p) => Err(ScheduleResult::ParentNotRunning {
                parent: p.cmd.name().to_owned(),
            }),
            None => Err(ScheduleResult::ParentNotRunning {
                parent: String::from("<ended>"),
            }),
        }
    }

    /// Counts one child start for `parent` in this run; refuses past [`MAX_CHILD_STARTS_PER_RUN`]
    /// so a body that starts children that end at once, in a loop that never yields, cannot
    /// keep `run()` from returning.
    fn count_start(&mut self, parent: Key) -> Result<(), ScheduleResult> {
        let cycle = self.cycle;
        let Some(p) = self.entry_mut(parent) else {
            return Ok(());
        };
        let (at, count) = p.starts;
        let count = if at == cycle { count } else { 0 };
        if count >= MAX_CHILD_STARTS_PER_RUN {
            return Err(ScheduleResult::TooManyStarts {
                parent: p.cmd.name().to_owned(),
                limit: MAX_CHILD_STARTS_PER_RUN,
            });
        }
        p.starts = (cycle, count + 1);
        Ok(())
    }

    /// Starts `cmd` as a running child of `parent`. The caller mounts it right after.
    pub(crate) fn start_child(
        &mut self,
        cmd: &Command,
        parent: Key,
        at: &'static Location<'static>,
    ) -> Result<Key, ScheduleResult> {
        let parent_priority = self.running_parent(parent)?;
        if let Some(refused) = self.refuse_if_disabled(cmd, Some(parent)) {
            return Err(refused);
        }
        let priority = cmd.priority().max(parent_priority);
        let ancestors = self.lineage(parent);
        let victims = self.conflicts(cmd, priority, &ancestors)?;
        self.count_start(parent)?;
        let key = self.alloc(cmd, Some(parent), Phase::Running, priority, at);
        if let Some(p) = self.entry_mut(parent) {
            p.children.push(key);
        }
        self.emit(key, EventKind::Scheduled);
        let by = self.interrupter(key);
        for victim in victims {
            self.cancel_tree(victim, by.clone());
        }
        self.claim(key);
        self.running.push(key);
        Ok(key)
    }

    /// The promotion step: queued commands start running in the order they were scheduled,
    /// interrupting lower-or-equal owners; a queued command that now loses is discarded.
    pub(crate) fn promote(&mut self) {
        let mut queued = std::mem::take(&mut self.queued);
        for &key in &queued {
            let Some(e) = self.entry(key) else { continue };
            if e.phase != Phase::Queued {
                continue;
            }
            let (cmd, priority, parent) = (e.cmd.clone(), e.priority, e.parent);
            for m in &cmd.0.requirements {
                let slot = &mut self.mechs[m.index()];
                if slot.queued == Some(key) {
                    slot.queued = None;
                }
            }
            let ancestors = parent.map(|p| self.lineage(p)).unwrap_or_default();
            match self.conflicts(&cmd, priority, &ancestors) {
                Err(_) => {
                    self.emit(key, EventKind::Canceled);
                    self.unlink_from_parent(key);
                    self.free(key);
                }
                Ok(victims) => {
                    let by = self.interrupter(key);
                    for victim in victims {
                        self.cancel_tree(victim, by.clone());
                    }
                    if let Some(e) = self.entry_mut(key) {
                        e.phase = Phase::Running;
                    }
                    self.claim(key);
                    self.running.push(key);
                }
            }
        }
        queued.clear();
        // Nothing can be queued while promoting (no user code runs), so reuse the allocation.
        debug_assert!(self.queued.is_empty());
        self.queued = queued;
    }

    /// The running command that keeps `cmd` (at effective `priority`, below `ancestors`) from
    /// starting, if a higher-priority one does.
    pub(crate) fn blocker(&self, cmd: &Command, priority: i32, ancestors: &[Key]) -> Option<Key> {
        cmd.0.requirements.iter().find_map(|m| {
            let owner = self.mechs[m.index()].owner?;
            let o = self.entry(owner)?;
            (!ancestors.contains(&owner) && o.priority > priority).then_some(owner)
        })
    }

    /// The reference's answer to a refused fork: `key` is interrupted by `blocker` and its whole
    /// composition is canceled.
    pub(crate) fn interrupt_composition(&mut self, key: Key, blocker: Key) {
        let Some(b) = self.entry(blocker) else { return };
        self.pending_interrupt = Some((key, b.id, b.cmd.0.name.clone()));
        let root = self.root_of(key);
        self.cancel_tree(root, None);
        self.pending_interrupt = None;
    }

    fn interrupter(&self, key: Key) -> Interrupter {
        self.entry(key).map(|e| (e.id, e.cmd.0.name.clone()))
    }

    /// Takes ownership of the command's mechanisms, remembering ancestors it borrows from.
    fn claim(&mut self, key: Key) {
        let Some(e) = self.entry(key) else { return };
        let cmd = e.cmd.clone();
        let mut displaced = Vec::with_capacity(cmd.0.requirements.len());
        for m in &cmd.0.requirements {
            let slot = &mut self.mechs[m.index()];
            displaced.push(slot.owner);
            slot.owner = Some(key);
        }
        if let Some(e) = self.entry_mut(key) {
            e.displaced = displaced;
        }
    }

    /// Gives the command's mechanisms back (to the ancestor it borrowed them from, if any).
    fn release(&mut self, key: Key) {
        let Some(e) = self.entry_mut(key) else { return };
        let displaced = std::mem::take(&mut e.displaced);
        let cmd = e.cmd.clone();
        for (i, m) in cmd.0.requirements.iter().enumerate() {
            let back = displaced.get(i).copied().flatten();
            let back = back.filter(|k| self.is_live(*k));
            let slot = &mut self.mechs[m.index()];
            if slot.owner == Some(key) {
                slot.owner = back;
            }
            if slot.queued == Some(key) {
                slot.queued = None;
            }
        }
    }

    fn unlink_from_parent(&mut self, key: Key) {
        let parent = self.entry(key).and_then(|e| e.parent);
        if let Some(p) = parent.and_then(|p| self.entry_mut(p)) {
            p.children.retain(|c| *c != key);
        }
    }

    fn cancel_children(&mut self, key: Key) {
        let Some(e) = self.entry_mut(key) else { return };
        let children = std::mem::take(&mut e.children);
        for child in children.into_iter().rev() {
            self.cancel_tree(child, None);
        }
    }

    /// Cancels a command and everything it started (docs/commands.md §6.1). Events go top-down,
    /// as in the reference: an interrupted command emits `Interrupted` then `Canceled`, then its
    /// descendants are canceled (newest first). The state is torn down bottom-up, so a child
    /// gives borrowed mechanisms back to a parent that still holds them. `on_cancel` runs only
    /// for an instance that was running.
    pub(crate) fn cancel_tree(&mut self, key: Key, by: Interrupter) {
        let Some(e) = self.entry(key) else { return };
        if e.phase == Phase::Finished {
            return;
        }
        let was_running = e.phase == Phase::Running;
        let by = by.or_else(|| match self.pending_interrupt.take() {
            Some((victim, id, name)) if victim == key => Some((id, name)),
            other => {
                self.pending_interrupt = other;
                None
            }
        });
        if let Some((by, by_name)) = by {
            self.metrics.interrupted();
            self.emit(key, EventKind::Interrupted { by, by_name });
        }
        self.emit(key, EventKind::Canceled);
        let hook = self.entry(key).and_then(|e| e.cmd.0.on_cancel.clone());
        if let (true, Some(hook)) = (was_running, hook) {
            self.deferred.push_back(Deferred::OnCancel(hook));
        }
        self.cancel_children(key);
        self.end(key);
    }

    /// The body returned `Ok`: `Completed`, then its children are canceled.
    pub(crate) fn complete(&mut self, key: Key) {
        self.emit(key, EventKind::Completed);
        self.cancel_children(key);
        self.end(key);
    }

    /// The body failed: `CompletedWithError`, its children canceled, then the root composition
    /// is canceled. The first failure of a cycle is kept for `run()` to return.
    pub(crate) fn fail(&mut self, key: Key, message: String, failure: Failure) {
        let root = self.root_of(key);
        self.emit(key, EventKind::CompletedWithError { message });
        self.cancel_children(key);
        self.end(key);
        if root != key {
            self.cancel_tree(root, None);
        }
        if self.failure.is_none() {
            self.failure = Some(failure);
        }
    }

    /// Releases everything an ended instance holds; frees the slot unless it is being polled.
    fn end(&mut self, key: Key) {
        self.release(key);
        self.unlink_from_parent(key);
        let tag = self.tag;
        let Some(e) = self.entry_mut(key) else { return };
        e.phase = Phase::Finished;
        if e.cmd.0.live.get() == Some((tag, key)) {
            e.cmd.0.live.set(None);
        }
        if !e.mounted {
            self.free(key);
        }
    }
}
