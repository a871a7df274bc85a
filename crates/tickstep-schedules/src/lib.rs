//! Durable schedules: run a host's verb later, once or on a cadence, surviving restarts.
//!
//! This is the third layer of tickstep, specified in docs/schedules.md. A host — a MOO world server
//! is the model, but nothing here knows MOO — asks for `target:verb(@args)` to be called at a time
//! ([`Txn::schedule_at`]) or every so often ([`Txn::schedule_every`]). The engine keeps a deadline
//! and that triple; when the deadline passes it hands a [`Firing`] to the host's [`Runner`], which
//! starts a fresh task, exactly as `fork` would. Each firing is its own task with its own
//! transaction and budget, so a fault in one leaves the others alone. The schedule is data, not a
//! task: idle, it costs one compact entry and nothing else.
//!
//! # The model
//!
//! * **Host traits.** A [`World`] answers "is this object valid, is this principal a wizard, does
//!   P control O, can P call verb V on T now"; a [`Runner`] starts firings and returns a
//!   [`RunId`]. The host reports each run's [`Outcome`] later with [`Schedules::report`]. Values
//!   (args, state, return values) are [`Value`]s, MOO-shaped and serde-serialisable.
//! * **Transactions.** Every builtin runs inside a [`Txn`] opened with the calling task's
//!   permissions ([`Schedules::begin`]). Creations and stops are buffered and take effect at
//!   [`Txn::commit`]; dropping the transaction rolls back, and a rolled-back schedule never
//!   existed. Within the transaction its own creations are already valid and stoppable.
//! * **Ids** ([`ScheduleId`]) are a type of their own, handed out by a counter that never goes
//!   back — across restarts included, because its durable high-water mark is raised (fsync'd)
//!   before an id beyond it is handed out, so it covers the creation's transaction and more.
//! * **Named schedules.** [`Options::key`] names a schedule, unique among its owner's live
//!   schedules: a creation whose key already names the same schedule returns it and creates
//!   nothing ([`Txn::is_new`] tells), from any node of a shared store; [`Txn::schedule_named`]
//!   looks a key up. Both stores keep the key behind a unique index (docs/schedules.md
//!   §5.12–§5.18).
//! * **Cadence.** Recurring deadlines are computed from the previous deadline, never from when a
//!   firing ended; the next deadline is armed the moment a firing starts. Deadlines that arrive
//!   while a firing still runs are the [`Overlap`] policy's business; cadence points missed with
//!   nothing running (the server was down, the scheduler stalled) are the [`Catchup`] policy's,
//!   and under [`Catchup::All`] so are the points that come due while its catch-up is worked off
//!   (docs/schedules.md §4.5).
//!   See `engine/cadence.rs` for the exact arithmetic.
//! * **Time.** Deadlines are wall-clock Unix nanoseconds (`u64`, so the last one is in July 2554),
//!   read from the kernel's [`Clock`](tickstep_kernel::clock::Clock); durations use its monotonic
//!   side. Every test drives the engine with a
//!   [`ManualClock`](tickstep_kernel::clock::ManualClock).
//! * **Driving.** A host calls [`Schedules::tick`] from its loop — once per frame, or after
//!   sleeping until [`Schedules::next_deadline`]. A tick fires what is due (at most
//!   [`Config::max_firings_per_tick`], 1,024 by default, so 10,000 simultaneous deadlines never
//!   stall the host: they fire over ten ticks), then group-commits every cadence change in one
//!   SQLite transaction, written behind the tick by the store's writer thread.
//! * **Storage.** [`Schedules::open`] uses one SQLite file in WAL mode with a versioned schema;
//!   an operator can read it with the `sqlite3` shell while the engine runs. Creation and stop are
//!   fsync'd before `commit` returns. On open, schedules come back with ids, deadlines, counters
//!   and options intact, and firings that were in flight are handed back
//!   ([`Schedules::interrupted`]) to be reattached or abandoned. Catch-up is applied inside
//!   [`Schedules::open`], before it returns: `schedule_info` and [`Schedules::next_deadline`]
//!   show the true `next_run` and `missed_count` at once; the firings the policy keeps start at
//!   the first tick, and the file shows the new counters after that tick's group commit.
//!   [`Schedules::in_memory`] is the same engine with no file. Given a `postgres://` URL instead
//!   of a path (crate feature `postgres`), [`Schedules::open`] keeps the same rows in a
//!   `PostgreSQL` database (tables prefixed `tickstep_`, versioned migrations): a store thread owns
//!   the connection, creations and stops are committed on the server before `commit` returns, and
//!   a tick's cadence updates are handed to that thread and written behind it, so a tick never
//!   waits on the network ([`Schedules::wait_for_writes`] waits for them). Several engines
//!   (nodes) may share one database: each schedule is held by one node at a time through a claim
//!   and a lease, and a fence refuses a late write from a node whose rows were taken over
//!   (docs/schedules.md §11.20). An [`Inspector`] reads the file
//!   read-only beside a running engine (decoding rows with the store's own codec) and performs
//!   an operator's durable stop, for tools such as the `tickstep schedules` command.
//! * **Single-threaded.** The [`Schedules`] handle is an `Rc`: `!Send`, proven by a
//!   `compile_fail` doctest on it (and on [`Txn`]). Host code (world, runner) is always called
//!   with no internal borrow held, so a firing may create or stop schedules from inside
//!   `Runner::start`, and a world may consult the engine from inside its answers.
//! * **Calendars.** A [`Calendar`] is a cron expression (5 or 6 fields, names, `L`, `W`, `#`,
//!   `?`, `@daily`-style aliases) read in an IANA zone from the tz database bundled into the
//!   binary, under an explicit [`DstPolicy`] for wall times that a gap skips or a fold repeats.
//!   It is a value: [`Calendar::next_after`] and [`Calendar::upcoming`] give its instants, and
//!   [`Txn::schedule_cron`] makes a schedule that fires on one (docs/schedules.md §14). It comes
//!   from the `tickstep-calendar` crate, re-exported here as [`calendar`] and at the root, which a
//!   program that wants cron times without the engine uses alone (docs/schedules.md §13.76).
//! * **Test host.** [`testkit`] holds a small object world and a recording runner; the crate's
//!   tests and examples use them, and a host may too.
//!
//! # Costs
//!
//! An idle schedule costs its entry and no work until it is due; a firing costs one `UPDATE` in
//! the tick's group commit when it persists, written behind the tick; creating or stopping a
//! persistent schedule is one fsync'd transaction; opening a store is one table scan.
//! docs/schedules.md §17 holds the costs, the figures and the measurements behind them.
//!
//! # Decisions where the spec was open
//!
//! They are the rules of docs/schedules.md §13. Among them: one missed point is a late firing and
//! several are the catch-up policy's (docs/schedules.md §13.1); ids are reserved in blocks and
//! never repeat (docs/schedules.md §13.11); only a crash hands firings back as interrupted
//! (docs/schedules.md §13.14); an operator stops a schedule through the engine's own commit, and
//! every running engine notices at its next tick (docs/schedules.md §13.15, §13.19).
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use tickstep_schedules::kernel::clock::ManualClock;
//! use tickstep_schedules::testkit::{TestRunner, TestWorld};
//! use tickstep_schedules::{Options, Schedules, Value};
//!
//! let clock = ManualClock::new();
//! let world = TestWorld::new();
//! let wizard = world.add_wizard();
//! let room = world.add_object(wizard);
//! world.add_verb(room, "upkeep");
//! let runner = TestRunner::new();
//! let dir = tempfile::tempdir().unwrap();
//! let engine = Schedules::open(dir.path().join("s.db"), clock.clone(), world, runner.clone(),
//!     Default::default()).unwrap();
//!
//! // Every minute, forever (or until stopped).
//! let mut txn = engine.begin(wizard);
//! let id = txn.schedule_every(room, "upkeep", 60.0, vec![], Options::new()).unwrap();
//! txn.commit().unwrap();
//!
//! clock.advance(Duration::from_secs(60));
//! engine.tick().unwrap();
//! let (run, firing) = runner.started()[0].clone();
//! assert_eq!(firing.call_args(), vec![Value::Float(0.0)]); // elapsed: 0.0 the first time
//! engine.report(run, tickstep_schedules::Outcome::Returned(Value::Int(0)));
//! assert_eq!(engine.begin(wizard).schedule_info(id).unwrap().run_count, 1);
//! ```

mod commit;
mod engine;
mod error;
mod fire_times;
mod firing_limits;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod held_back;
mod host;
mod id;
mod info;
mod kernel_wake;
mod lateness;
mod limits;
mod metrics;
mod missed;
mod namespace;
mod options;
mod perms;
mod policies;
mod queue_runner;
mod row_actions;
mod schedule_keys;
mod store;
mod store_rows;
mod tally;
pub mod testkit;
mod txn;
mod value;

pub use commit::Commit;
pub use engine::{Config, DEFAULT_LEASE, DEFAULT_RETENTION, DEFAULT_TICK, Schedules, TickReport};
pub use error::Error;
pub use held_back::HeldBack;
pub use host::{
    Fault, FaultKind, Firing, InFlight, OpenWorld, Outcome, Refused, Runner, StoreWaker, World,
};
pub use id::{ObjId, RunId, ScheduleId};
pub use info::{
    CalendarInfo, FiringRecord, HISTORY_KEPT, NEXT_RUNS_SHOWN, PauseInfo, RetireReason,
    ScheduleInfo, ScheduleKind, ScheduleStatus,
};
pub use kernel_wake::KernelWake;
pub use lateness::Lateness;
pub use limits::MAX_VALUE_DEPTH;
pub use missed::{MissedPoints, MissedReason};
pub use namespace::Namespace;
pub use options::{
    Catchup, DEFAULT_MAX_FAULTS, MAX_CATCHUP_FIRINGS, MAX_STATE_BYTES, OPTION_KEYS, Options,
    Overlap,
};
pub use policies::OnMaxFaults;
pub use queue_runner::QueueRunner;
pub use row_actions::MAX_NOTE_BYTES;
pub use schedule_keys::MAX_KEY_LEN;
pub use store::{
    CLUSTER_HISTORY_KEPT, CLUSTER_HISTORY_ROWS, Cluster, ClusterEvent, ClusterEventKind,
    ClusterHistory, ClusterNode, ClusterStats, ClusterTakeover, HELD_SHOWN, Inspector, ListOrder,
    ListPage, ListQuery, ListedSchedule, MAX_PAGE_SIZE, NodeHoldings, StoredSchedule,
    display_location, is_server_location,
};
pub use tally::{EngineTally, LATENESS_BUCKETS, LatenessBuckets};
pub use tickstep_calendar::{
    Calendar, CalendarError, CronField, DstPolicy, FoldPolicy, GapPolicy, MAX_EXPR_LEN,
    PointsArrived,
};
pub use txn::Txn;
pub use value::Value;

/// The kernel layer (`tickstep-kernel`), whose clock an engine reads and whose scheduler
/// [`KernelWake`] wakes: a user of this crate alone names [`kernel::clock::ManualClock`] from
/// here, with no second dependency (docs/crates.md §1.4).
pub use tickstep_kernel as kernel;

/// The calendar layer (`tickstep-calendar`), whose [`Calendar`] a cron schedule fires on: its
/// items are also at this crate's root, where they were before the calendar became a crate of its
/// own (docs/schedules.md §13.76), one item with two paths.
///
/// ```
/// use tickstep_schedules::calendar::{Calendar, DstPolicy};
/// let cal: tickstep_schedules::Calendar = Calendar::new("@daily", "UTC", DstPolicy::default()).unwrap();
/// assert_eq!(cal.next_after(0), Some(86_400 * 1_000_000_000));
/// ```
pub use tickstep_calendar as calendar;
