//! Durable schedules: run a host's verb later, once or on a cadence, surviving restarts.
//!
//! This is the third layer of tickstep, specified in docs/schedules.md. A host — a MOO world server
//! is the model, but nothing here knows MOO — asks for `target:verb(@args)` to be called at a time
//! ([`Txn::schedule_at`]) or every so often ([`Txn::schedule_every`]). The engine keeps a deadline
//! and that triple; when the deadline passes it hands a [`Firing`] to the host's [`Runner`], which
//! starts a fresh task, exactly as `fork` would. Each firing is its own task with its own
//! transaction and budget, so a fault in one leaves the others alone. The schedule is data, not a
//! task: idle, it costs one compact entry (about 150 bytes) and nothing else.
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
//!   It is a value: [`Calendar::next_after`] and [`Calendar::upcoming`] give its instants; no
//!   schedule kind fires on one yet (docs/schedules.md §14).
//! * **Test host.** [`testkit`] holds a small object world and a recording runner; the crate's
//!   tests and examples use them, and a host may too.
//!
//! # Costs
//!
//! | operation | cost |
//! |---|---|
//! | idle schedule | a ~150 B entry plus ~50 B of index and heap; no allocation without args or state; no work until due |
//! | firing | heap pop, a few id-hash lookups, `Rc` clones of verb and args; no allocation in steady state; one `UPDATE` in the tick's group commit when persistent |
//! | tick | one read of each clock timeline; at most one `SQLite` transaction, handed to the store's writer thread (one channel send and a copy of the changes) |
//! | create/stop commit | one fsync'd `SQLite` transaction (none for non-persistent schedules) plus one fsync per 1,024 ids handed out |
//! | `schedules()`, `schedules_for()` | O(number of schedules) scan |
//! | open | one sequential table scan; O(n) heap build |
//! | `Calendar::next_after` | a bit-set search of wall-clock fields plus a zone lookup per DST transition crossed; no allocation; 0.2–0.7 µs (0.13–0.27× croner's) |
//!
//! Measured with `cargo run --release -p tickstep-bench -- schedules` on the project's shared
//! two-core VM (see `crates/tickstep-bench/src/schedules.rs`; the spread is the machine's load):
//! 0.17–0.38 µs per in-memory firing including its outcome; 1.05–1.5× the cost of the bare
//! `UPDATE`s per persisted firing (1.5–5 µs); 1.3–1.8 s of CPU (2.3 s wall) to open a million
//! schedules; 190–230 resident bytes per loaded schedule.
//!
//! # Decisions where the spec was open
//!
//! Each is a rule of docs/schedules.md §13.
//!
//! * **Catch-up at open.** A recurring schedule that missed two or more points while the engine
//!   was down has its policy applied by [`Schedules::open`] (skip: counted missed and re-armed
//!   after now; once/all: the kept points wait in the backlog and fire from the first tick, one
//!   per tick). One passed point is left as a late firing for the first tick.
//! * **End of the deadline range.** A due cadence point fires even when the point after it does
//!   not fit in 64-bit Unix nanoseconds; the schedule retires `deadline_out_of_range` as that
//!   firing starts (when its next deadline would be armed), so the firing's outcome is not
//!   recorded.
//! * **Catch-up threshold.** When the engine gets to a schedule and exactly one cadence point has
//!   passed, that is an ordinary (slightly late) firing under every policy; so `skip` never drops
//!   a point for a few milliseconds of tick lateness. When two or more have passed, the schedule
//!   is behind and the policy applies to all of them: `skip` drops them all (the next deadline is
//!   the first point after now), `once` fires one late firing for them, `all` fires each.
//!   Lateness counts from the jittered deadline, so jitter never causes drops.
//! * **`catchup = "all"`** fires one missed point per tick, in order, each waiting for the
//!   previous firing unless `overlap = "concurrent"`. A point that comes due while that catch-up
//!   is worked off joins it, whatever the overlap policy, so none is skipped after a restart or a
//!   takeover; the catch-up ends when it has caught up and its last firing has ended, or after
//!   1,000 firings (docs/schedules.md §13.64, §13.65).
//! * **Adaptive delay** counts from when the outcome is reported (the moment the verb returned),
//!   like `suspend(n)` at the end of a loop would.
//! * **A running one-shot is still live**: `schedule_valid` is true until its outcome settles it,
//!   which keeps "one driver per object" from starting a second driver mid-firing.
//! * **A faulting one-shot** retires `completed` (it will not fire again), or `max_faults` if that
//!   limit is reached first; `last_fault` tells the story.
//! * **The first firing of `schedule_every`** is one interval after creation.
//! * **`elapsed`** is measured between firing starts on the wall clock, so it spans restarts (a
//!   verb integrating over downtime sees the real gap).
//! * **`invalid_target`** is checked at firing time and is not a fault; a verb that is no longer
//!   callable is a fault of kind `start_failed`, as is a runner refusal.
//! * **`next_run`** in `schedule_info` is when the next firing is due, jitter included.
//! * **Duration window**: `mean_duration_ns`/`p99_duration_ns` cover the last 64 firings settled
//!   in this server run; `last_duration_ns` is persisted.
//! * **Id blocks**: the persisted high-water mark is raised 1,024 ids at a time, ahead of use
//!   (rather than written with each creation); they never repeat, not even ids of rolled-back
//!   or non-persistent schedules. A clean stop gives the unused rest of its block back, so ids
//!   continue after a restart; only after a crash do they jump past the crashed engine's block
//!   (docs/schedules.md §11.47).
//! * **Non-persistent schedules in a store-backed engine** never reach the file; only the id
//!   counter they draw from does.
//! * **Value nesting**: args and state may nest lists and maps at most
//!   [`MAX_VALUE_DEPTH`] (32) deep, so every stored value reads back; a fault value the store could
//!   not hold (NaN, deeper nesting) is kept as its text.
//! * **Clean shutdown**: dropping the engine writes pending cadence updates; only a crash hands
//!   firings back as interrupted. A crash never repeats a served point: a persistent firing
//!   starts only once the update recording it is written (docs/schedules.md §11.42), and one whose
//!   update was written but which had not started is settled as interrupted.
//! * **Cluster.** [`Inspector::cluster`] lists a `PostgreSQL` store's nodes, their leases and what
//!   each holds (docs/schedules.md §11.43), for the dashboard's cluster page.
//! * **Operators** read a store with [`Inspector`] (read-only, never migrating; a file of another
//!   schema is refused with [`Error::SchemaTooNew`] or [`Error::NotAStore`], never misread) and
//!   stop a schedule with [`Inspector::stop`], which deletes the row through the engine's own
//!   fsync'd commit and leaves a note in the store's `operator_stops` table. Every engine running
//!   on the file notices at its next tick, before it fires anything: a tick at least one engine
//!   tick interval ([`Config::tick`], 10 ms) after the last poll reads `PRAGMA data_version`,
//!   which changes only when another connection committed, and reads the notes (an indexed range
//!   scan from the last one seen) only then. The poll costs a few microseconds on the project's
//!   VM (the bench's `stop_poll_tick` row), at most once per 10 ms however often the host ticks. The engine drops the schedule
//!   as a committed `schedule_stop` would and lists it in [`Schedules::take_operator_stops`];
//!   the next engine to open the file never loads it. A row the codec cannot decode fails the
//!   whole read with the value named, exactly as it would fail an engine's open.
//! * **Store integrity.** Opening looks at the file read-only first and refuses, writing nothing
//!   (not even the switch to WAL): a file that is not SQLite or holds another application's
//!   tables or `application_id` ([`Error::NotAStore`]; [`Config::share_file`] opts in to sharing
//!   one), a damaged file ([`Error::Damaged`], naming the file and `sqlite3 FILE .recover`), a
//!   newer schema ([`Error::SchemaTooNew`], both versions). `PRAGMA quick_check` runs only when
//!   opening must write before loading (a migration or the first switch to WAL): on a current
//!   store the load itself reads every schedule row and refuses damage it meets, so the common
//!   open pays nothing extra (on a 1M-schedule store `quick_check` took 0.51 s against 1.9 s for
//!   the open itself: the bench's `quick_check_1m` and `load_1m` rows, full run). A fresh store is stamped with tickstep's
//!   `application_id` (0x54535450, "TSTP").
//!   Operator stops and the file checks are `SQLite`'s: a `PostgreSQL` store has no operator stop
//!   path yet (its engine polls nothing); it refuses a newer schema and rows it cannot decode, and
//!   [`Config::share_file`] does not apply to it (its prefixed tables always share a database).
//! * **`PostgreSQL` writes behind the tick**: a crash may lose the cadence updates still queued on
//!   the store thread, whose firings have not started yet (docs/schedules.md §11.42); a lost
//!   connection keeps them queued and retries with a backoff from 50 ms to 5 s, the engine running
//!   on in memory and persistent firings waiting for their writes; a transaction's commit
//!   meanwhile fails with [`Error::Database`] and applies nothing.
//! * **`PostgreSQL` tables are prefixed `tickstep_`**, so the store can share a database with
//!   another application (its own `schedules` table is left alone); migrations take an advisory
//!   lock, so engines opening one database at once migrate it once.
//! * **Errors** name the offending value and the rule; [`Error::code`] maps them to `E_INVARG`,
//!   `E_PERM` (and `E_QUOTA` for a store failure).
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

mod cadence_points;
mod calendar;
mod commit;
mod engine;
mod error;
mod firing_limits;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod held_back;
mod host;
mod id;
mod info;
mod kernel_wake;
mod key;
mod lateness;
mod limits;
mod missed;
mod namespace;
mod operator_rules;
mod options;
mod perms;
mod policies;
mod queue_runner;
mod recorded;
mod row;
mod store;
pub mod testkit;
mod txn;
mod value;

pub use calendar::{
    Calendar, CalendarError, CronField, DstPolicy, FoldPolicy, GapPolicy, MAX_EXPR_LEN,
    PointsArrived,
};
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
pub use key::MAX_KEY_LEN;
pub use lateness::Lateness;
pub use limits::MAX_VALUE_DEPTH;
pub use missed::{MissedPoints, MissedReason};
pub use namespace::Namespace;
pub use operator_rules::MAX_NOTE_BYTES;
pub use options::{
    Catchup, DEFAULT_MAX_FAULTS, MAX_CATCHUP_FIRINGS, MAX_STATE_BYTES, OPTION_KEYS, Options,
    Overlap,
};
pub use policies::OnMaxFaults;
pub use queue_runner::QueueRunner;
pub use store::{
    Cluster, ClusterNode, ClusterStats, HELD_SHOWN, Inspector, StoredSchedule, display_location,
    is_server_location,
};
pub use txn::Txn;
pub use value::Value;

/// The kernel layer (`tickstep-kernel`), whose clock an engine reads and whose scheduler
/// [`KernelWake`] wakes: a user of this crate alone names [`kernel::clock::ManualClock`] from
/// here, with no second dependency (docs/crates.md §1.4).
pub use tickstep_kernel as kernel;
