//! The storage boundary as a trait: what the engine asks of any store, in rows (docs/schedules.md
//! §11.12).

use std::ops::RangeInclusive;

use crate::Error;
use crate::row::{ChangeSet, Durability, RowSink};

/// What a store must do for the engine. Every method runs on the engine's thread between ticks or
/// inside one; a backend whose I/O is remote keeps that off the caller's thread (see the crate
/// essay on how a `PostgreSQL` store would).
pub(crate) trait Backend {
    /// Streams every saved schedule into `sink`; returns the durable id high-water mark.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] (a row that does not decode is named), [`Error::Damaged`].
    fn load(&mut self, sink: &mut dyn RowSink) -> Result<u64, Error>;

    /// Reserves a block of `block` ids for this engine alone, none below `next` (the engine's
    /// next id), durable before returning; returns the block granted. A store that serves one
    /// engine grants `next..=next + block` by raising its high-water mark (`SQLite`); one that
    /// several engines share hands out a block no other engine ever gets (`PostgreSQL`:
    /// docs/schedules.md §11.18), so the block may start above `next`.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] or [`Error::Database`]; nothing was reserved.
    fn reserve_ids(&mut self, next: u64, block: u64) -> Result<RangeInclusive<u64>, Error>;

    /// Writes `changes` in one transaction, as durable as `durability` says; returns how many of
    /// `changes.deletes` existed.
    ///
    /// # Errors
    ///
    /// [`Error::Store`]; nothing was written.
    fn commit(&mut self, changes: &ChangeSet, durability: Durability) -> Result<usize, Error>;

    /// Appends to `stopped` the ids an operator stopped from outside this engine since the last
    /// call. Called once per tick, so it must be cheap when nothing happened.
    ///
    /// # Errors
    ///
    /// [`Error::Store`]; the next call reports what this one missed.
    fn poll_stops(&mut self, stopped: &mut Vec<u64>) -> Result<(), Error>;

    /// Waits until every commit handed over so far is written. A store that writes before
    /// `commit` returns has nothing to wait for; one that writes behind (`PostgreSQL`'s store
    /// thread) waits for its queue, and reports a write that failed meanwhile.
    ///
    /// # Errors
    ///
    /// The store's error for a write it could not make; the write stays queued.
    fn flush(&mut self) -> Result<(), Error> {
        Ok(())
    }
}

/// How the caller wants a store opened.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct OpenPolicy {
    /// Add the store's tables to a database that already holds another application's tables.
    pub(crate) share_file: bool,
}
