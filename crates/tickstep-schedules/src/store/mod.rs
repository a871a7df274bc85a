//! Durable storage: one SQLite file in WAL mode.
//!
//! * [`schema`] — tables and versioned migrations;
//! * [`codec`] — entry ⇄ row (JSON for values, bit-preserving integers for `u64`);
//! * [`sqlite`] — the store: durable commits, per-tick group commits, loading;
//! * [`inspect`] — the operator's read-only view ([`Inspector`]) and durable stop, on the same
//!   schema check and codec.
//!
//! # Durability
//!
//! Creation and stop are durable when `Txn::commit` returns: their SQLite transaction runs with
//! `synchronous=FULL`, which fsyncs the WAL before the commit returns. Cadence updates from firings
//! (next deadline, counters, running firings) are group-committed once per tick with
//! `synchronous=NORMAL`: one transaction per tick, surviving a process crash (the WAL is written
//! before commit returns) though not necessarily a power cut, in which case the restarted engine
//! replays from the last durable cadence — deadlines never move backwards past what was durable,
//! and a firing may repeat, never vanish.
//!
//! # Id high-water mark
//!
//! Ids are reserved in blocks of [`ID_BLOCK`]: before the engine hands out an id beyond the
//! durable mark, it raises the mark to that id plus a block (fsync'd). The mark therefore covers
//! every id handed out — committed, rolled back or non-persistent — before the creating task can
//! even see it, which is stronger than writing it with the creation. Most creations write no meta
//! row, non-persistent schedules (which never touch the disk) cost an fsync once per block, and a
//! restart resumes above the mark, so no id is ever handed out twice.
//!
//! # Operators
//!
//! WAL lets any number of readers — the `sqlite3` shell included — read the file while the engine
//! writes it: `sqlite3 schedules.db "SELECT id, verb, next_run FROM schedules"`. Tools written in
//! Rust use [`Inspector`], which decodes rows with this module's codec and refuses a schema it
//! does not know, so they never carry a second copy of the column list.

pub(crate) mod codec;
pub(crate) mod inspect;
pub(crate) mod schema;
pub(crate) mod sqlite;

pub use inspect::{Inspector, StoredSchedule};
pub(crate) use sqlite::SqliteStore;

/// How many ids one durable high-water-mark write reserves.
pub(crate) const ID_BLOCK: u64 = 1024;
