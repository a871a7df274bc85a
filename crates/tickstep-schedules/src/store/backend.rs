//! The storage boundary as a trait: what the engine asks of any store, in rows (docs/schedules.md
//! §11.12).

use std::ops::RangeInclusive;

use super::answer::Pending;
use crate::Error;
use crate::store_rows::{ChangeSet, ClaimedRow, Durability, OperatorNote, RowSink, ScheduleRow};

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

    /// Gives back the unused end of the last block at a clean stop: lowers the high-water mark
    /// from `reserved_through` to `last_used`, but only if it still reads `reserved_through` (no
    /// engine reserved after this one), so the next open continues from `last_used + 1`
    /// (docs/schedules.md §11.47). Returns whether the mark was lowered.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] or [`Error::Database`]; the mark is as it was, which only skips ids.
    fn release_ids(&mut self, last_used: u64, reserved_through: u64) -> Result<bool, Error>;

    /// Writes `changes` in one transaction, as durable as `durability` says; returns how many of
    /// `changes.deletes` existed. A store that writes behind the caller takes what `changes`
    /// holds (leaving it empty) rather than copying it: the caller builds each change set anew.
    ///
    /// # Errors
    ///
    /// [`Error::Store`]; nothing was written.
    fn commit(&mut self, changes: &mut ChangeSet, durability: Durability) -> Result<usize, Error>;

    /// Starts a [`Durability::Synced`] commit of `changes` (taking what it holds) and returns
    /// the answer to come: how many deletes existed, once the write is durable
    /// (docs/schedules.md §11.41). A store whose writes are local answers before it returns;
    /// one whose writes cross the network (`PostgreSQL`'s store thread) answers from its
    /// thread, so the caller may await the answer instead of blocking on it.
    fn start_synced_commit(&mut self, changes: &mut ChangeSet) -> Pending<Result<usize, Error>> {
        Pending::ready(self.commit(changes, Durability::Synced))
    }

    /// Appends to `notes` the notes operators left from outside this engine since the last call:
    /// stops (the row is gone) and actions (docs/schedules.md §9.12). Called once per tick, so it
    /// must be cheap when nothing happened.
    ///
    /// # Errors
    ///
    /// [`Error::Store`]; the next call reports what this one missed.
    fn poll_stops(&mut self, notes: &mut Vec<OperatorNote>) -> Result<(), Error>;

    /// Moves into `claimed` the rows the store claimed for this engine since the last call
    /// (whole rows, to be applied like rows at open) and into `lost` the ids of schedules
    /// another engine took over (their writes were refused; the engine drops them). `now` is
    /// the engine's wall clock (Unix ns), where the store's next claims look ahead from (moved
    /// on by the time since, until the next call: docs/schedules.md §11.40). Called
    /// once per tick, so it must not wait on I/O. A store only one engine uses has neither
    /// (docs/schedules.md §11.26).
    fn poll_claims(&mut self, now: u64, claimed: &mut Vec<ClaimedRow>, lost: &mut Vec<u64>) {
        let _ = (now, claimed, lost);
    }

    /// Registers the host's waker: a store whose own thread finds work for the engine (rows it
    /// claimed, schedules another engine took over, operator stops) calls it from that thread
    /// when it does, so the host ticks the engine then (docs/schedules.md §11.40). A store
    /// polled only by the tick has no such thread and ignores it.
    fn set_waker(&mut self, waker: crate::StoreWaker) {
        let _ = waker;
    }

    /// The saved row of schedule `id` as the store holds it now, whichever engine holds it;
    /// `None` when it holds none. Only a store several engines share can hold a row this engine
    /// has not loaded (docs/schedules.md §11.30); it answers after a round trip, behind the
    /// writes queued before.
    ///
    /// # Errors
    ///
    /// The store's error; nothing changed.
    fn row_elsewhere(&mut self, id: u64) -> Result<Option<ScheduleRow>, Error> {
        let _ = id;
        Ok(None)
    }

    /// The saved row of `owner`'s schedule keyed `key` (docs/schedules.md §5.12), whichever
    /// engine holds it; `None` when it holds none. As [`Backend::row_elsewhere`]: only a store
    /// several engines share is asked, after a round trip behind the writes queued before; a
    /// store one engine uses answers `None`, the engine's own key index being the whole truth.
    ///
    /// # Errors
    ///
    /// The store's error; nothing changed.
    fn row_by_key(&mut self, owner: crate::ObjId, key: &str) -> Result<Option<ScheduleRow>, Error> {
        let _ = (owner, key);
        Ok(None)
    }

    /// The stored history of schedule `id`, newest first (docs/schedules.md §9.11), read after
    /// the writes handed over before (so a settled firing already queued is in it). `settled`
    /// is how many of its firings have settled: a store may read only the slots those can
    /// have filled.
    ///
    /// # Errors
    ///
    /// The store's error; nothing changed.
    fn history(
        &mut self,
        id: u64,
        settled: u64,
    ) -> Result<Vec<crate::store_rows::HistoryRow>, Error>;

    /// Every operator note that carries an action (docs/schedules.md §9.12), oldest first: read
    /// once at open, so that an action whose row an engine overwrote before reading its note
    /// is applied after all.
    ///
    /// # Errors
    ///
    /// The store's error; the open fails.
    fn operator_actions(&mut self) -> Result<Vec<OperatorNote>, Error>;

    /// What the store counted of claims and fencing so far.
    fn cluster_stats(&self) -> ClusterStats {
        ClusterStats::default()
    }

    /// How many grouped commits this store has handed to a writer behind the caller so far; 0
    /// for a store that writes them before `commit` returns. The n-th such commit is durable once
    /// [`Backend::durable_behind`] reaches n (docs/schedules.md §11.42).
    fn handed_behind(&self) -> u64 {
        0
    }

    /// How many of the grouped commits handed behind the caller are durable now, oldest first
    /// (they are written in order). Never waits; must be cheap, since every tick asks.
    fn durable_behind(&self) -> u64 {
        0
    }

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
    /// How long a node's claims outlive its last heartbeat (a store several engines share).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) lease: std::time::Duration,
    /// The engine's namespace: the store loads, claims and looks up only its rows, and stores
    /// every row the engine creates in it (docs/schedules.md §15.2).
    pub(crate) namespace: crate::Namespace,
    /// The node to resume on a shared store, if the host names one (docs/schedules.md §11.49).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) node: Option<u64>,
}

/// What an engine's store counted of claims and fencing since it opened
/// ([`Schedules::cluster_stats`](crate::Schedules::cluster_stats); docs/schedules.md §11.27).
/// All zero for a `SQLite` store or an engine with no store, which share with no other engine.
///
/// ```
/// let stats = tickstep_schedules::ClusterStats::default();
/// assert_eq!((stats.claimed, stats.refused_writes, stats.taken_over), (0, 0, 0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClusterStats {
    /// Schedules this node claimed: at open (rows nobody held) and since (rows nobody held, or
    /// whose holder's lease ran out, due within one lease).
    pub claimed: u64,
    /// Row writes (cadence updates, retirements) the database refused because another node had
    /// claimed the row since this node did: never applied.
    pub refused_writes: u64,
    /// Schedules this node dropped because another node took them over.
    pub taken_over: u64,
}
