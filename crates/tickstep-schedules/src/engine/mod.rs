//! The engine: a [`Schedules`] handle over one table of schedules, driven by [`Schedules::tick`].
//!
//! Table of contents:
//! * [`handle`] — the public [`Schedules`] handle: open, begin, deadlines, restart hand-back;
//! * [`entry`] — the compact per-schedule record;
//! * [`table`] — slab, id index and deadline heap;
//! * [`cadence`] — deadline arithmetic: overlap, catch-up, jitter, arming;
//! * [`tick`] — one scheduler tick: choose due firings, start them, group-commit;
//! * [`outcome`] — settling a run: faults, adaptive delays, retirement;
//! * [`retire`] — the 60-second retention of retired entries;
//! * [`view`] — read-only answers (info, listings, GC roots).
//!
//! # Borrow discipline
//!
//! All state lives in one `RefCell<Core>`. Every method borrows it for a short, self-contained
//! step and releases it before calling host code ([`World`], [`Runner`]), so a host may call back
//! into the engine from inside those calls: open a transaction, create or stop schedules, report
//! another run. A tick therefore works in three steps — plan under the borrow, start firings with
//! no borrow, record results under a fresh borrow — and tolerates anything the host did in between
//! (an entry stopped mid-tick simply has its run ignored).

pub(crate) mod cadence;
pub(crate) mod entry;
pub(crate) mod handle;
pub(crate) mod outcome;
pub(crate) mod retire;
pub(crate) mod table;
pub(crate) mod tick;
pub(crate) mod view;

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::time::Duration;

use tickstep_kernel::clock::{Clock, Instant};

use crate::limits::duration_nanos;
use crate::store::SqliteStore;
use crate::{RunId, Runner, ScheduleId, Value, World};
use table::Table;

pub use handle::Schedules;
pub use tick::TickReport;

/// Engine settings. Start from [`Config::default`] and change fields.
///
/// ```
/// use std::time::Duration;
/// let mut config = tickstep_schedules::Config::default();
/// config.tick = Duration::from_millis(50);
/// config.rng_seed = Some(7);
/// assert_eq!(config.max_firings_per_tick, 1024);
/// ```
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Config {
    /// The scheduler tick: the floor for intervals (shorter ones are clamped and reported
    /// `interval_clamped`) and the earliest jitter may move a deadline to. Default 10 ms.
    pub tick: Duration,
    /// The most due entries one [`Schedules::tick`] handles; the rest wait for the next tick.
    /// Default 1,024.
    pub max_firings_per_tick: usize,
    /// How long a retired entry stays visible to `schedule_info`. Default 60 s.
    pub retention: Duration,
    /// Seed for the jitter random number generator. `None` seeds it from the clock's wall time,
    /// which is deterministic under a [`ManualClock`](tickstep_kernel::clock::ManualClock).
    pub rng_seed: Option<u64>,
}

/// The default tick (10 ms).
///
/// ```
/// assert_eq!(tickstep_schedules::DEFAULT_TICK, std::time::Duration::from_millis(10));
/// ```
pub const DEFAULT_TICK: Duration = Duration::from_millis(10);

/// The default retention of retired entries (60 s).
///
/// ```
/// assert_eq!(tickstep_schedules::DEFAULT_RETENTION.as_secs(), 60);
/// ```
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(60);

impl Default for Config {
    fn default() -> Self {
        Config {
            tick: DEFAULT_TICK,
            max_firings_per_tick: 1024,
            retention: DEFAULT_RETENTION,
            rng_seed: None,
        }
    }
}

/// A firing that was in flight when the store was last saved, handed back to the host on open.
///
/// The host either [reattaches](Schedules::reattach) it (the restored task still counts as the
/// schedule's running firing, and its outcome is reported as usual) or
/// [abandons](Schedules::abandon) it (a fault, "interrupted by restart").
///
/// ```
/// use tickstep_schedules::{InFlight, RunId, ScheduleId};
/// let f = InFlight { schedule: ScheduleId::from_raw(1), run: RunId(9), nominal_unix_nanos: 0 };
/// assert_eq!(f.run, RunId(9));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct InFlight {
    /// The schedule whose firing it was.
    pub schedule: ScheduleId,
    /// The host's run id.
    pub run: RunId,
    /// The cadence point it was serving.
    pub nominal_unix_nanos: u64,
}

pub(crate) struct Shared {
    pub(crate) core: RefCell<Core>,
    pub(crate) world: Box<dyn World>,
    pub(crate) runner: Box<dyn Runner>,
    pub(crate) clock: Box<dyn Clock>,
}

impl Drop for Shared {
    /// A clean shutdown writes the last cadence updates (outcomes reported since the last tick),
    /// so only a crash hands firings back as interrupted.
    fn drop(&mut self) {
        if let Err(error) = self.core.get_mut().group_commit() {
            tracing::warn!(%error, "schedule engine dropped with cadence updates it could not save");
        }
    }
}

/// A run the engine is waiting to hear about.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunRecord {
    pub(crate) schedule: u64,
    /// Monotonic start, for durations; `None` for runs restored from the store.
    pub(crate) started: Option<Instant>,
}

/// The engine's state.
pub(crate) struct Core {
    pub(crate) table: Table,
    pub(crate) verbs: Interner,
    pub(crate) runs: table::IdMap<RunId, RunRecord>,
    /// Retired entries in retirement order: (drop at, id).
    pub(crate) retired: VecDeque<(u64, u64)>,
    /// Entries whose cadence state the store has not seen yet.
    pub(crate) dirty: Vec<u64>,
    /// Rows to delete at the next group commit (retired persistent schedules).
    pub(crate) doomed_rows: Vec<u64>,
    /// The last id handed out.
    pub(crate) last_id: u64,
    /// Ids up to this are covered by the durable high-water mark.
    pub(crate) reserved_through: u64,
    pub(crate) rng: fastrand::Rng,
    pub(crate) tick_ns: u64,
    pub(crate) retention_ns: u64,
    pub(crate) max_per_tick: usize,
    pub(crate) store: Option<SqliteStore>,
    pub(crate) interrupted: Vec<InFlight>,
    /// Shared by every firing of a schedule without arguments.
    pub(crate) empty_args: Rc<[Value]>,
    /// Reused across ticks so planning does not allocate.
    pub(crate) firing_buf: Vec<crate::Firing>,
    pub(crate) later_buf: cadence::Later,
}

/// Verb names, interned so an entry holds a `u32` instead of a `String`.
#[derive(Default)]
pub(crate) struct Interner {
    names: Vec<Rc<str>>,
    ids: HashMap<Rc<str>, u32>,
}

impl Interner {
    pub(crate) fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = u32::try_from(self.names.len()).expect("more than 4 billion distinct verbs");
        let name: Rc<str> = Rc::from(name);
        self.names.push(Rc::clone(&name));
        self.ids.insert(name, id);
        id
    }

    pub(crate) fn name(&self, id: u32) -> &Rc<str> {
        &self.names[id as usize]
    }
}

impl Core {
    fn new(config: Config, seed: u64, store: Option<SqliteStore>) -> Self {
        Core {
            table: Table::default(),
            verbs: Interner::default(),
            runs: table::IdMap::default(),
            retired: VecDeque::new(),
            dirty: Vec::new(),
            doomed_rows: Vec::new(),
            last_id: 0,
            reserved_through: 0,
            rng: fastrand::Rng::with_seed(config.rng_seed.unwrap_or(seed)),
            tick_ns: duration_nanos(config.tick).max(1),
            retention_ns: duration_nanos(config.retention),
            max_per_tick: config.max_firings_per_tick.max(1),
            store,
            interrupted: Vec::new(),
            empty_args: Rc::from(Vec::new()),
            firing_buf: Vec::new(),
            later_buf: Vec::new(),
        }
    }

    /// Marks an entry's cadence state for the next group commit (persistent entries only).
    pub(crate) fn mark_dirty(&mut self, id: u64) {
        if self.store.is_none() {
            return;
        }
        if let Some(e) = self.table.get_mut(id) {
            if e.persist && !e.dirty {
                e.dirty = true;
                self.dirty.push(id);
            }
        }
    }
}
