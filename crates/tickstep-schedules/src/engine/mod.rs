//! The engine: a [`Schedules`] handle over one table of schedules, driven by [`Schedules::tick`].
//!
//! Only this folder holds the engine's state types ([`core::Core`], [`entry::Entry`], the table)
//! and their `impl` blocks; their fields are visible to this folder alone (`pub(super)`), so the
//! compiler keeps the rest of the crate out. The rest talks to it through two narrow doors:
//! a store exchanges rows ([`rows`], `crate::row`, `crate::store::Backend`), and a transaction
//! uses [`access`].
//!
//! Table of contents:
//! * [`handle`] — the public [`Schedules`] handle: open, deadlines, restart hand-back;
//! * [`config`] — [`Config`] and its defaults;
//! * [`core`] — the engine's state, shared by every handle;
//! * [`entry`] — the compact per-schedule record;
//! * [`interner`] — verb names as `u32`s;
//! * [`rows`] — entry ⇄ row, loading, the group commit, operator stops;
//! * [`claims`] — rows another node gave up, taken in between ticks; schedules another node took;
//! * [`hold`] — schedules held back at open when most name objects the world lacks;
//! * [`keys`] — schedule keys: the (owner, key) index, create-if-absent, lookup by key;
//! * [`operator`] — pause, resume, trigger now, backfill (docs/schedules.md §9.4–§9.10);
//! * [`access`] — the narrow API a [`Txn`](crate::Txn) uses: drafts, lookups, commit;
//! * [`table`] — slab, id index and deadline heap;
//! * [`cadence`] — deadline arithmetic: overlap, catch-up, jitter, arming;
//! * [`tick`] — one scheduler tick: choose due firings, start them, group-commit;
//! * [`starts`] — firings waiting for their cadence update to be durable before they start
//!   ([`pending`] holds what waits);
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

pub(crate) mod access;
pub(crate) mod cancel;
pub(crate) mod claims;
pub(crate) mod config;
pub(crate) mod core;
pub(crate) mod deadlines;
pub(crate) mod entry;
#[cfg(feature = "fuzzing")]
pub(crate) mod fuzz_hooks;
pub(crate) mod handle;
pub(crate) mod hold;
pub(crate) mod interner;
pub(crate) mod key_index;
pub(crate) mod operator_actions;
pub(crate) mod outcome;
pub(crate) mod pending;
pub(crate) mod retire;
pub(crate) mod starts;
pub(crate) mod storage;
pub(crate) mod table;
pub(crate) mod tick;
pub(crate) mod view;

pub use config::{Config, DEFAULT_LEASE, DEFAULT_RETENTION, DEFAULT_TICK};
pub use handle::Schedules;
pub use tick::TickReport;
