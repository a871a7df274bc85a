//! The scheduler's data: a slab of command instances, the queued and running lists, the
//! mechanism table, bindings, sideloads and the deferred-effects queue.
//!
//! Invariants:
//! * A slot is freed only when its instance has ended and is not being polled; freed slot indices
//!   wait in `pending_free` until the `queued`/`running` lists are compacted, so a key stored in
//!   those lists never points at a reused slot. Keys held elsewhere are checked by generation.
//! * `running` is in mount order; execution walks it backwards (newest first). It is compacted
//!   only outside the execution phase, so indices stay stable while commands run.
//! * `mechs[m].owner` is the innermost running holder of mechanism `m`; a child that borrows a
//!   mechanism from an ancestor remembers the ancestor in `displaced` and gives it back on exit.
//! * Every effect that runs user code (listeners, `on_cancel`, dropping a body) goes through
//!   `deferred` and runs after the borrow of this state is released.

use std::collections::VecDeque;
use std::panic::Location;
use std::rc::Rc;
use std::time::Duration;

use tickstep_kernel::AnyClock;
use tickstep_kernel::clock::Instant;

use crate::error::RunError;
use crate::event::{CommandId, Event, EventKind};
use crate::id::{Key, MAX_SLOTS, Mounted};
use crate::scheduler::binding::Binding;
use crate::scheduler::command::{BodyFuture, Command};
use crate::scheduler::telemetry::CommandInfo;
use crate::scope::{OpMode, Scope};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Phase {
    /// Scheduled from outside a command; waits for the promotion step.
    Queued,
    /// Mounted at least once or promoted; polled every cycle.
    Running,
    /// Ended while its body was being polled; the slot is freed when the poll returns.
    Finished,
}

/// One command instance. The fields every cycle touches live inline in the slab (small, so
/// 1,000 running commands stay within the L1 cache); the rest sits behind one box.
pub(crate) struct Entry {
    pub(crate) phase: Phase,
    /// Being polled (its future is on the stack, not in `future`).
    pub(crate) mounted: bool,
    pub(crate) last_cycle: u64,
    pub(crate) future: Option<BodyFuture>,
    /// Mount timing, kept inline so a timed mount never touches the cold box: the last mount's
    /// and all mounts' durations in the clock's raw units (saturating), scaled to nanoseconds
    /// only when telemetry reads them.
    pub(crate) last_run_raw: u64,
    pub(crate) total_run_raw: u64,
    info: Box<Info>,
}

/// The cold part of an [`Entry`], reached through `Deref`.
pub(crate) struct Info {
    pub(crate) id: CommandId,
    pub(crate) cmd: Command,
    pub(crate) parent: Option<Key>,
    pub(crate) children: Vec<Key>,
    /// Effective priority: the maximum over this command and its ancestors.
    pub(crate) priority: i32,
    pub(crate) scheduled_at: &'static Location<'static>,
    /// For each requirement, the ancestor that held it before this command borrowed it.
    pub(crate) displaced: Vec<Option<Key>>,
    /// How long a top-level command may live: one scheduled from outside any command while an
    /// opmode is active dies when the opmode changes (children live as long as their parent).
    pub(crate) scope: Scope,
    /// Children started in the current run: (cycle, count), for the per-run start limit.
    pub(crate) starts: (u64, u32),
    /// A fork or await refused for priority cancels this command's composition (opt-in).
    pub(crate) cancel_on_fork_failure: bool,
}

impl Entry {
    /// Records one mount's duration, in raw clock units.
    #[inline]
    pub(crate) fn record_run(&mut self, took_raw: u64) {
        self.last_run_raw = took_raw;
        self.total_run_raw = self.total_run_raw.saturating_add(took_raw);
    }
}

impl std::ops::Deref for Entry {
    type Target = Info;
    fn deref(&self) -> &Info {
        &self.info
    }
}

impl std::ops::DerefMut for Entry {
    fn deref_mut(&mut self) -> &mut Info {
        &mut self.info
    }
}

struct Slot {
    generation: u32,
    entry: Option<Entry>,
}

pub(crate) struct MechSlot {
    /// May be driven while the robot is disabled (docs/commands.md §12.2); false by default.
    pub(crate) controllable_while_disabled: bool,
    pub(crate) owner: Option<Key>,
    pub(crate) queued: Option<Key>,
    /// Default commands, widest scope first: the last one whose scope is alive applies.
    pub(crate) defaults: Vec<DefaultBinding>,
    /// The instance the default-command step started last (to stop it when a narrower or newer
    /// default takes over).
    pub(crate) default_key: Option<Key>,
}

/// A default command set for a mechanism, with the scope it was set in.
pub(crate) struct DefaultBinding {
    pub(crate) cmd: Command,
    pub(crate) at: &'static Location<'static>,
    pub(crate) scope: Scope,
}

pub(crate) struct Sideload {
    pub(crate) id: u64,
    pub(crate) scope: Scope,
    pub(crate) future: Option<BodyFuture>,
}

/// An effect that may run user code, queued while the state is borrowed.
pub(crate) enum Deferred {
    Event(Event),
    OnCancel(Rc<dyn Fn()>),
    Drop(BodyFuture),
}

/// The robot's state as the scheduler last read it (docs/commands.md §12.1, §12.3).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Robot {
    Enabled,
    /// Just became disabled: what it may not run has not been swept yet.
    DisabledUnswept,
    Disabled,
}

impl Robot {
    /// The state after reading `enabled` from the host.
    pub(crate) fn read(self, enabled: bool) -> Robot {
        match (self, enabled) {
            (_, true) => Robot::Enabled,
            (Robot::Enabled, false) => Robot::DisabledUnswept,
            (seen, false) => seen,
        }
    }
}

/// The events emitted on every mount (docs/commands.md §9.1).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum CycleEvent {
    Mounted,
    Yielded,
}

/// Which events the listeners want, widest last.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(crate) enum Listen {
    Nothing,
    /// Lifecycle events only (no per-cycle `Mounted`/`Yielded`).
    Lifecycle,
    Everything,
}

/// A body failure waiting to leave `run()`.
pub(crate) enum Failure {
    Error(RunError),
    Panic(Box<dyn std::any::Any + Send>),
}

pub(crate) struct State {
    /// Identifies this scheduler in `CommandDef::live`.
    pub(crate) tag: usize,
    slots: Vec<Slot>,
    free: Vec<u32>,
    pending_free: Vec<u32>,
    pub(crate) queued: Vec<Key>,
    pub(crate) running: Vec<Key>,
    pub(crate) mechs: Vec<MechSlot>,
    pub(crate) bindings: Vec<Rc<Binding>>,
    pub(crate) sideloads: Vec<Sideload>,
    pub(crate) next_sideload: u64,
    pub(crate) deferred: VecDeque<Deferred>,
    /// Which events any listener wants; events nobody wants are not even built.
    pub(crate) listen: Listen,
    pub(crate) cycle: u64,
    next_id: u64,
    /// The latest clock reading, for event timestamps. While `run()` executes and nobody
    /// listens, a yielding mount updates only `now_raw` (scaling every mount's end for a timestamp
    /// nobody reads cost about a tenth of a timed mount); read it through [`State::current_now`].
    pub(crate) now: Instant,
    /// The latest clock reading raw (see `AnyClock::raw`) while `run()` executes: where the next
    /// top-level mount's timing starts.
    pub(crate) now_raw: u64,
    pub(crate) failure: Option<Failure>,
    pub(crate) opmode: Option<OpMode>,
    /// The robot as last read (docs/commands.md §12.1); enabled without a host.
    pub(crate) robot: Robot,
    pub(crate) opmode_epoch: u64,
    /// The opmode epoch whose opmode-scoped commands were last swept.
    pub(crate) swept_epoch: u64,
    pub(crate) watchdog: Option<Duration>,
    /// The watchdog limit in raw clock units (`u64::MAX` when off), so the common mount compares
    /// two integers instead of scaling its span.
    pub(crate) watchdog_raw: u64,
    pub(crate) timing: bool,
    pub(crate) last_run_time: Duration,
    pub(crate) in_run: bool,
    /// Whether any default command was ever set: until then the default-command step is skipped
    /// (it would visit every mechanism for nothing).
    pub(crate) any_defaults: bool,
    /// A command to report as interrupted (by whom) when the cancellation under way reaches it.
    pub(crate) pending_interrupt: Option<(Key, CommandId, Rc<str>)>,
    /// Cycles, running commands, interruptions and conflicts (docs/observability.md §3).
    pub(crate) metrics: crate::metrics::CommandMetrics,
}

impl Drop for State {
    /// A scheduler dropped with commands still live must not leave them marked live: they could
    /// never be scheduled again (by another scheduler) otherwise.
    fn drop(&mut self) {
        for entry in self.slots.iter().filter_map(|slot| slot.entry.as_ref()) {
            if entry
                .cmd
                .0
                .live
                .get()
                .is_some_and(|(tag, _)| tag == self.tag)
            {
                entry.cmd.0.live.set(None);
            }
        }
    }
}

impl State {
    pub(crate) fn new(tag: usize, watchdog_raw: u64) -> Self {
        State {
            tag,
            slots: Vec::new(),
            free: Vec::new(),
            pending_free: Vec::new(),
            queued: Vec::new(),
            running: Vec::new(),
            mechs: Vec::new(),
            bindings: Vec::new(),
            sideloads: Vec::new(),
            next_sideload: 1,
            deferred: VecDeque::new(),
            listen: Listen::Nothing,
            cycle: 0,
            next_id: 1,
            now: Instant::ZERO,
            now_raw: 0,
            failure: None,
            opmode: None,
            robot: Robot::Enabled,
            opmode_epoch: 0,
            swept_epoch: 0,
            watchdog: Some(super::DEFAULT_WATCHDOG_LIMIT),
            watchdog_raw,
            timing: true,
            last_run_time: Duration::ZERO,
            in_run: false,
            any_defaults: false,
            pending_interrupt: None,
            metrics: crate::metrics::CommandMetrics::register(),
        }
    }

    pub(crate) fn entry(&self, key: Key) -> Option<&Entry> {
        let slot = self.slots.get(key.idx as usize)?;
        if slot.generation == key.generation {
            slot.entry.as_ref()
        } else {
            None
        }
    }

    pub(crate) fn entry_mut(&mut self, key: Key) -> Option<&mut Entry> {
        let slot = self.slots.get_mut(key.idx as usize)?;
        if slot.generation == key.generation {
            slot.entry.as_mut()
        } else {
            None
        }
    }

    /// The latest clock reading: inside `run()` the raw one scaled (see `now`), outside it `now`.
    pub(crate) fn current_now(&self, clock: &AnyClock) -> Instant {
        if self.in_run {
            clock.raw_instant(self.now_raw)
        } else {
            self.now
        }
    }

    /// Whether `key` is queued or running (not ended).
    pub(crate) fn is_live(&self, key: Key) -> bool {
        self.entry(key).is_some_and(|e| e.phase != Phase::Finished)
    }

    /// The run made for the instance at `key`.
    pub(crate) fn run_of_key(&self, key: Key) -> Option<crate::Run> {
        self.entry(key).map(|e| crate::Run { id: e.id, key })
    }

    /// The instance of `run` if it is still queued or running (docs/commands.md §13.1).
    pub(crate) fn live_run(&self, run: crate::Run) -> Option<Key> {
        let e = self.entry(run.key)?;
        (e.id == run.id && e.phase != Phase::Finished).then_some(run.key)
    }

    /// The live instance of `cmd` in this scheduler.
    pub(crate) fn live_key(&self, cmd: &Command) -> Option<Key> {
        let (tag, key) = cmd.0.live.get()?;
        if tag != self.tag {
            return None;
        }
        let e = self.entry(key)?;
        (e.phase != Phase::Finished && e.cmd.same_as(cmd)).then_some(key)
    }

    /// True when `cmd` is live in another scheduler.
    pub(crate) fn live_elsewhere(&self, cmd: &Command) -> bool {
        cmd.0.live.get().is_some_and(|(tag, _)| tag != self.tag)
    }

    pub(crate) fn alloc(
        &mut self,
        cmd: &Command,
        parent: Option<Key>,
        phase: Phase,
        priority: i32,
        scheduled_at: &'static Location<'static>,
    ) -> Key {
        let id = CommandId(self.next_id);
        self.next_id += 1;
        let entry = Entry {
            phase,
            mounted: false,
            last_cycle: 0,
            future: None,
            last_run_raw: 0,
            total_run_raw: 0,
            info: Box::new(Info {
                id,
                cmd: cmd.clone(),
                parent,
                children: Vec::new(),
                priority,
                scheduled_at,
                displaced: Vec::new(),
                scope: Scope::Global,
                starts: (0, 0),
                cancel_on_fork_failure: false,
            }),
        };
        let key = if let Some(idx) = self.free.pop() {
            let slot = &mut self.slots[idx as usize];
            slot.entry = Some(entry);
            Key {
                idx,
                generation: slot.generation,
            }
        } else {
            let idx = u32::try_from(self.slots.len())
                .ok()
                .filter(|idx| *idx < MAX_SLOTS)
                .expect("more than 2^30 command instances alive at once");
            self.slots.push(Slot {
                generation: 0,
                entry: Some(entry),
            });
            Key { idx, generation: 0 }
        };
        cmd.0.live.set(Some((self.tag, key)));
        key
    }

    /// Frees an ended instance's slot; its body (if any) is dropped later, outside the borrow.
    pub(crate) fn free(&mut self, key: Key) {
        let slot = &mut self.slots[key.idx as usize];
        debug_assert_eq!(slot.generation, key.generation);
        let Some(mut entry) = slot.entry.take() else {
            return;
        };
        // An exhausted generation retires the slot rather than wrapping, so a key kept for 2^32
        // reuses of its slot can never name a stranger (one slot lost per 2^32 instances).
        if let Some(next) = slot.generation.checked_add(1) {
            slot.generation = next;
            self.pending_free.push(key.idx);
        }
        if entry.cmd.0.live.get() == Some((self.tag, key)) {
            entry.cmd.0.live.set(None);
        }
        if let Some(fut) = entry.future.take() {
            self.deferred.push_back(Deferred::Drop(fut));
        }
    }

    /// Drops ended keys from the lists and makes their slots reusable. A key only goes stale
    /// when its slot is freed, so with nothing freed since the last call there is nothing to do
    /// (the common cycle pays nothing).
    /// Whether a cycle would do nothing but count itself (docs/commands.md §2.4): nothing queued,
    /// running or waiting to be freed, no binding, sideload or default command, no event or hook
    /// deferred, no opmode change or disabling to sweep.
    #[inline]
    pub(crate) fn is_idle(&self) -> bool {
        self.queued.is_empty()
            && self.running.is_empty()
            && self.pending_free.is_empty()
            && self.bindings.is_empty()
            && self.sideloads.is_empty()
            && !self.any_defaults
            && self.deferred.is_empty()
            && self.swept_epoch == self.opmode_epoch
            && self.robot != Robot::DisabledUnswept
    }

    pub(crate) fn compact(&mut self) {
        if self.pending_free.is_empty() {
            return;
        }
        let slots = &self.slots;
        let live = |k: &Key| {
            slots
                .get(k.idx as usize)
                .is_some_and(|s| s.generation == k.generation && s.entry.is_some())
        };
        self.running.retain(|k| {
            live(k)
                && slots[k.idx as usize]
                    .entry
                    .as_ref()
                    .is_some_and(|e| e.phase == Phase::Running)
        });
        self.queued.retain(live);
        self.free.append(&mut self.pending_free);
    }

    /// Queues an event for the listeners; free when nobody listens.
    #[inline]
    pub(crate) fn emit(&mut self, key: Key, kind: EventKind) {
        if self.listen != Listen::Nothing {
            self.emit_slow(key, kind);
        }
    }

    /// Queues a per-cycle event; free unless a listener wants them. It takes a plain `Copy`
    /// value, not an [`EventKind`], so the common mount drops nothing (an `EventKind` owns
    /// strings, and dropping one was an out-of-line call per mount).
    #[inline]
    pub(crate) fn emit_cycle(&mut self, key: Key, event: CycleEvent) {
        if self.listen == Listen::Everything {
            let kind = match event {
                CycleEvent::Mounted => EventKind::Mounted,
                CycleEvent::Yielded => EventKind::Yielded,
            };
            self.emit_slow(key, kind);
        }
    }

    #[cold]
    fn emit_slow(&mut self, key: Key, kind: EventKind) {
        let Some(e) = self.entry(key) else { return };
        let event = Event {
            kind,
            command: e.id,
            name: e.cmd.0.name.clone(),
            at: self.now,
        };
        self.deferred.push_back(Deferred::Event(event));
    }

    /// The chain of ancestors of `key`, nearest first, including `key` itself.
    pub(crate) fn lineage(&self, key: Key) -> Vec<Key> {
        let mut chain = vec![key];
        let mut at = key;
        while let Some(parent) = self.entry(at).and_then(|e| e.parent) {
            chain.push(parent);
            at = parent;
        }
        chain
    }

    /// While the robot is disabled, the first mechanism `cmd` requires that is not controllable
    /// then (docs/commands.md §12.2). One flag test while enabled.
    pub(crate) fn disabled_blocker<'c>(&self, cmd: &'c Command) -> Option<&'c crate::Mechanism> {
        if self.robot == Robot::Enabled {
            return None;
        }
        (cmd.0.requirements.iter()).find(|m| !self.mechs[m.index()].controllable_while_disabled)
    }

    pub(crate) fn root_of(&self, key: Key) -> Key {
        let mut at = key;
        while let Some(parent) = self.entry(at).and_then(|e| e.parent) {
            at = parent;
        }
        at
    }

    pub(crate) fn scope_alive(&self, scope: Scope) -> bool {
        match scope {
            Scope::Global => true,
            Scope::OpMode(epoch) => self.opmode.is_some() && self.opmode_epoch == epoch,
            Scope::Command(key) => self.entry(key).is_some_and(|e| e.phase == Phase::Running),
        }
    }

    pub(crate) fn scope_for(&self, mounted: Mounted) -> Scope {
        if let Some(key) = mounted.as_command() {
            Scope::Command(key)
        } else if let Some(id) = mounted.as_sideload() {
            self.sideloads
                .iter()
                .find(|s| s.id == id)
                .map_or(Scope::Global, |s| s.scope)
        } else if self.opmode.is_some() {
            Scope::OpMode(self.opmode_epoch)
        } else {
            Scope::Global
        }
    }

    /// A snapshot of one instance, for telemetry.
    pub(crate) fn info(&self, key: Key, clock: &AnyClock) -> Option<CommandInfo> {
        let e = self.entry(key)?;
        Some(CommandInfo {
            id: e.id,
            parent: e.parent.and_then(|p| self.entry(p)).map(|p| p.id),
            command: e.cmd.clone(),
            name: e.cmd.name().to_owned(),
            priority: e.priority,
            requirements: e
                .cmd
                .requirements()
                .iter()
                .map(|m| m.name().to_owned())
                .collect(),
            last_run_time: Duration::from_nanos(clock.raw_to_nanos(e.last_run_raw)),
            total_run_time: Duration::from_nanos(clock.raw_to_nanos(e.total_run_raw)),
        })
    }

    /// Overwrites `out` with the instance's snapshot, reusing its strings and vectors
    /// (docs/commands.md §10.5). False when the key is dead.
    pub(crate) fn info_into(&self, key: Key, clock: &AnyClock, out: &mut CommandInfo) -> bool {
        let Some(e) = self.entry(key) else {
            return false;
        };
        out.id = e.id;
        out.parent = e.parent.and_then(|p| self.entry(p)).map(|p| p.id);
        // A command's name and requirements never change (a renamed command is a new command),
        // so a slot that already describes this command keeps them: a frame copies no strings.
        if !out.command.same_as(&e.cmd) || out.name != e.cmd.name() {
            out.command = e.cmd.clone();
            e.cmd.name().clone_into(&mut out.name);
            let requirements = e.cmd.requirements();
            out.requirements.truncate(requirements.len());
            for (i, m) in requirements.iter().enumerate() {
                match out.requirements.get_mut(i) {
                    Some(r) => m.name().clone_into(r),
                    None => out.requirements.push(m.name().to_owned()),
                }
            }
        }
        out.priority = e.priority;
        out.last_run_time = Duration::from_nanos(clock.raw_to_nanos(e.last_run_raw));
        out.total_run_time = Duration::from_nanos(clock.raw_to_nanos(e.total_run_raw));
        true
    }

    /// Overwrites `out` with the snapshots of the live instances of `list` in `phase`, reusing
    /// the entries already there.
    pub(crate) fn infos_into(
        &self,
        list: &[Key],
        phase: Phase,
        clock: &AnyClock,
        out: &mut Vec<CommandInfo>,
    ) {
        let mut n = 0;
        for &k in list {
            if !self.entry(k).is_some_and(|e| e.phase == phase) {
                continue;
            }
            if let Some(slot) = out.get_mut(n) {
                if self.info_into(k, clock, slot) {
                    n += 1;
                }
            } else if let Some(info) = self.info(k, clock) {
                out.push(info);
                n += 1;
            }
        }
        out.truncate(n);
    }

    /// Live instance keys in list order, for snapshots.
    pub(crate) fn live_in(&self, list: &[Key], phase: Phase) -> Vec<Key> {
        list.iter()
            .copied()
            .filter(|k| self.entry(*k).is_some_and(|e| e.phase == phase))
            .collect()
    }
}
