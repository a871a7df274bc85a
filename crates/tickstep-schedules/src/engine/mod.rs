//! The engine: a [`Schedules`] handle over one table of schedules, driven by [`Schedules::tick`].
//!
//! Only this folder holds the engine's state types ([`core::Core`], [`entry::Entry`], the table)
//! and their `impl` blocks; their fields are visible to this folder alone (`pub(super)`), so the
//! compiler keeps the rest of the crate out. The rest talks to it through two narrow doors:
//! a store exchanges rows ([`storage`], `crate::store_rows`, `crate::store::Backend`), and a transaction
//! uses [`access`].
//!
//! # Where things are
//!
//! `Core` composes owned parts, one file each, each holding its fields and the methods that
//! touch only them (docs/schedules.md §13.77):
//! * [`table`] — the entries: slab, id index and deadline heap;
//! * [`interner`] — [`Names`](interner::Names): verb names, calendars, the empty argument list;
//! * [`settings`] — the tick, the per-tick bounds, the jitter generator;
//! * [`keys`] — the (owner, key) index, and create-if-absent and lookup by key;
//! * [`runs`] — the runs awaited, restored, and killed this tick;
//! * [`retention`] — retired entries kept for their 60 seconds;
//! * [`store_side`] — the backend, the next group commit, the reserved ids;
//! * [`operator_queue`] — triggers and backfills due, operator stops not yet taken;
//! * [`starts`] — firings waiting for their cadence update to be durable.
//!
//! What needs several parts is a method of `Core`, in three files: [`lifecycle`] (an entry's
//! arrival and departure: building the state, loading, claims, transactions, keys, holding back,
//! operator stops, waiting starts), [`cadence`] (what a due entry fires and where its deadline
//! goes: overlap, catch-up, jitter, arming, the tick's plan) and [`outcome`] (what a start, a
//! run's end, a fault, a retirement or an operator's action leaves). [`core`] declares `Core` and
//! imports only its parts, which keeps the engine's modules acyclic.
//!
//! The public [`Schedules`] methods are in three files, by who calls them: [`handle`] (building
//! the engine, and what an operator or a reader asks: counts, `next_runs`, GC roots, pause,
//! resume, trigger, backfill), [`tick`] (what a host's driver loop calls: the tick, deadlines,
//! reporting outcomes, the restart hand-back, the store's news, flushing) and `txn.rs`
//! ([`Schedules::begin`], beside the [`Txn`](crate::Txn) it opens, so the engine never imports
//! the transaction).
//!
//! The rest: [`config`] ([`Config`] and its defaults), [`entry`] (the compact per-schedule
//! record), [`storage`] (entry ⇄ row, loading), [`access`] (the narrow API a
//! [`Txn`](crate::Txn) uses), [`view`] (an entry's `schedule_info` record).
//!
//! # Borrow discipline
//!
//! All state lives in one `RefCell<Core>`. Every method borrows it for a short, self-contained
//! step and releases it before calling host code ([`World`](crate::World),
//! [`Runner`](crate::Runner)), so a host may call back into the engine from inside those calls:
//! open a transaction, create or stop schedules, report another run. A tick therefore works in
//! three steps — plan under the borrow, start firings with no borrow, record results under a
//! fresh borrow — and tolerates anything the host did in between (an entry stopped mid-tick
//! simply has its run ignored).

pub(crate) mod access;
pub(crate) mod cadence;
pub(crate) mod config;
pub(crate) mod core;
pub(crate) mod entry;
pub(crate) mod handle;
pub(crate) mod interner;
pub(crate) mod keys;
pub(crate) mod lifecycle;
pub(crate) mod operator_queue;
pub(crate) mod outcome;
pub(crate) mod retention;
pub(crate) mod runs;
pub(crate) mod settings;
pub(crate) mod starts;
pub(crate) mod storage;
pub(crate) mod store_side;
pub(crate) mod table;
pub(crate) mod tick;
pub(crate) mod view;

pub use config::{Config, DEFAULT_LEASE, DEFAULT_RETENTION, DEFAULT_TICK};
pub use handle::Schedules;
pub use tick::TickReport;
