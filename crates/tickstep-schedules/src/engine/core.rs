//! The engine's state, shared by every [`Schedules`](super::Schedules) handle and [`Txn`](crate::Txn).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use tickstep_kernel::clock::{Clock, Instant};

use super::config::Config;
use super::interner::Interner;
use super::table::{self, Later, Table};
use crate::limits::duration_nanos;
use crate::row::ChangeSet;
use crate::store::Backend;
use crate::{InFlight, RunId, Runner, Value, World};

/// Everything a handle or a transaction holds: the state and the host's parts.
pub(crate) struct Shared {
    pub(super) core: RefCell<Core>,
    pub(super) world: Box<dyn World>,
    pub(super) runner: Box<dyn Runner>,
    pub(super) clock: Box<dyn Clock>,
}

impl Drop for Shared {
    /// A clean shutdown writes the last cadence updates (outcomes reported since the last tick),
    /// so only a crash hands firings back as interrupted.
    fn drop(&mut self) {
        let core = self.core.get_mut();
        // Starts still waiting for their update never happened: the next open starts them
        // (docs/schedules.md §11.42).
        core.park_pending();
        if let Err(error) = core.group_commit() {
            tracing::warn!(%error, "schedule engine dropped with cadence updates it could not save");
        }
        core.release_ids();
    }
}

/// A run the engine is waiting to hear about.
#[derive(Clone, Copy, Debug)]
pub(super) struct RunRecord {
    pub(super) schedule: u64,
    /// Monotonic start, for durations; `None` for runs restored from the store.
    pub(super) started: Option<Instant>,
}

/// The engine's state.
pub(crate) struct Core {
    pub(super) table: Table,
    pub(super) verbs: Interner,
    /// Calendars shared by the schedules that use them (docs/schedules.md §14.16).
    pub(super) calendars: super::interner::Calendars,
    pub(super) runs: table::IdMap<RunId, RunRecord>,
    /// The last run id handed out; a restored run raises it (docs/schedules.md §11.5).
    pub(super) last_run: u64,
    /// Retired entries in retirement order: (drop at, id).
    pub(super) retired: VecDeque<(u64, u64)>,
    /// Entries whose cadence state the store has not seen yet.
    pub(super) dirty: Vec<u64>,
    /// Rows to delete at the next group commit (retired persistent schedules).
    pub(super) doomed_rows: Vec<u64>,
    /// The last id handed out.
    pub(super) last_id: u64,
    /// Ids up to this are covered by the durable high-water mark.
    pub(super) reserved_through: u64,
    pub(super) rng: fastrand::Rng,
    pub(super) tick_ns: u64,
    pub(super) retention_ns: u64,
    pub(super) max_per_tick: usize,
    /// [`Config::max_tick_time`]: the time a tick may spend starting firings.
    pub(super) max_tick_time: Option<std::time::Duration>,
    pub(super) store: Option<Box<dyn Backend>>,
    pub(super) interrupted: Vec<InFlight>,
    /// Shared by every firing of a schedule without arguments.
    pub(super) empty_args: Rc<[Value]>,
    /// Reused across ticks so planning does not allocate.
    pub(super) firing_buf: Vec<crate::Firing>,
    pub(super) later_buf: Later,
    /// The group commit's change set: reused across ticks by a store that writes in the tick,
    /// taken by one that writes behind it (docs/schedules.md §11.35, §11.15).
    pub(super) changes: ChangeSet,
    /// Firings planned and waiting for their cadence update to be durable before they start
    /// (docs/schedules.md §11.42), oldest first.
    pub(super) pending: super::pending::PendingStarts,
    /// Operator stops found by the last poll, reused across ticks.
    pub(super) stopped_buf: Vec<crate::row::OperatorNote>,
    /// Schedules dropped because an operator stopped them, until the host takes the list.
    pub(super) operator_stopped: Vec<u64>,
    /// When the store was last polled for operator stops (monotonic).
    pub(super) last_stop_poll: Option<Instant>,
    /// Rows claimed from other nodes and ids taken over by them, reused across ticks.
    pub(super) claimed_buf: Vec<crate::row::ClaimedRow>,
    pub(super) lost_buf: Vec<u64>,
    /// The live keyed schedules this engine holds, by (owner, key) (docs/schedules.md §5.12).
    pub(super) keys: std::collections::HashMap<(crate::ObjId, Rc<str>), u64>,
    /// Schedules with an operator's trigger or backfill waiting for the tick (docs/schedules.md
    /// §9.6, §9.7); empty nearly always, so a tick pays one check for it.
    pub(super) operator_due: Vec<u64>,
    /// When the host should tick for them (Unix nanoseconds).
    pub(super) operator_at: u64,
    /// Settled firings of persistent schedules, for the next group commit (docs/schedules.md
    /// §9.11).
    pub(super) history: Vec<crate::row::HistoryRow>,
    /// Starts, outcomes, missed points, retirements and gauges (docs/observability.md §1).
    pub(super) metrics: crate::metrics::SchedulesMetrics,
    /// Set while a resume catches up: the points it drops were missed while paused
    /// (docs/observability.md §1.4).
    pub(super) catching_up_paused: bool,
    /// The schedules held back at open (docs/schedules.md §15.6), if any.
    pub(super) held_back: Option<crate::HeldBack>,
    /// Runs settled as killed by overlap `"cancel_other"` this tick, for the tick to hand to
    /// `Runner::cancel` with no borrow held (docs/schedules.md §16.7).
    pub(super) cancelled: Vec<RunId>,
    /// The tick's monotonic time, for the duration of a run the tick cancels.
    pub(super) tick_mono: Option<Instant>,
}

impl Core {
    pub(super) fn new(config: Config, seed: u64, store: Option<Box<dyn Backend>>) -> Self {
        Core {
            metrics: crate::metrics::SchedulesMetrics::register(),
            catching_up_paused: false,
            held_back: None,
            cancelled: Vec::new(),
            tick_mono: None,
            table: Table::default(),
            verbs: Interner::default(),
            calendars: super::interner::Calendars::default(),
            runs: table::IdMap::default(),
            last_run: 0,
            retired: VecDeque::new(),
            dirty: Vec::new(),
            doomed_rows: Vec::new(),
            last_id: 0,
            reserved_through: 0,
            rng: fastrand::Rng::with_seed(config.rng_seed.unwrap_or(seed)),
            tick_ns: duration_nanos(config.tick).max(1),
            retention_ns: duration_nanos(config.retention),
            max_per_tick: config.max_firings_per_tick.max(1),
            max_tick_time: config.max_tick_time,
            store,
            interrupted: Vec::new(),
            empty_args: Rc::from(Vec::new()),
            firing_buf: Vec::new(),
            later_buf: Vec::new(),
            changes: ChangeSet::default(),
            pending: super::pending::PendingStarts::new(),
            stopped_buf: Vec::new(),
            operator_stopped: Vec::new(),
            last_stop_poll: None,
            claimed_buf: Vec::new(),
            lost_buf: Vec::new(),
            keys: std::collections::HashMap::new(),
            operator_due: Vec::new(),
            operator_at: u64::MAX,
            history: Vec::new(),
        }
    }

    /// Marks an entry's cadence state for the next group commit (persistent entries only).
    pub(super) fn mark_dirty(&mut self, id: u64) {
        if self.store.is_none() {
            return;
        }
        if let Some(e) = self.table.get_mut(id)
            && e.persist
            && !e.dirty
        {
            e.dirty = true;
            self.dirty.push(id);
        }
    }
}
