//! The storage boundary as a trait: what the engine asks of any store, in rows (docs/schedules.md
//! §11.12).

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

    /// Raises the id high-water mark to `through`, durable before returning.
    ///
    /// # Errors
    ///
    /// [`Error::Store`]; the mark is unchanged.
    fn reserve_ids(&mut self, through: u64) -> Result<(), Error>;

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
#[derive(Clone, Copy, Debug)]
pub(crate) struct OpenPolicy {
    /// Add the store's tables to a database that already holds another application's tables.
    pub(crate) share_file: bool,
    /// How often a store whose I/O runs on its own thread looks for operator stops
    /// (`Config::tick`; the `SQLite` store is polled by the engine's tick instead).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) stop_poll: std::time::Duration,
}
