//! The read side of the storage boundary as a trait: what an [`Inspector`](crate::Inspector)
//! asks of a store it reads without an engine (docs/schedules.md §13.74).
//!
//! It is not [`Backend`](super::Backend): the engine's store holds a writable connection (and,
//! for `PostgreSQL`, a store thread writing behind the tick), while an inspector opens its own
//! read-only one — `SQLite`'s read-only flag, a `PostgreSQL` session whose transactions are read
//! only — and shares no connection, thread or state with an engine. Like `Backend`, it speaks in
//! rows: each backend decodes with its own codec, and the inspector turns rows into what an
//! operator sees, once for both.

use std::time::Duration;

use super::cluster::Cluster;
use super::cluster_history::ClusterHistory;
use super::list_page::{ListPage, ListQuery};
use crate::Error;
use crate::store_rows::{HistoryRow, ScheduleRow};

/// What an inspector reads from a store. `namespace` is the one namespace read, `None` for every
/// namespace (docs/schedules.md §15.5); a row comes with the namespace it is stored in.
pub(crate) trait ReadBackend: std::fmt::Debug {
    /// Every saved row, by id.
    ///
    /// # Errors
    ///
    /// The store's error; a row that does not decode is named.
    fn list(&self, namespace: Option<&str>) -> Result<Vec<(ScheduleRow, String)>, Error>;

    /// Row `id`, if the store holds it.
    ///
    /// # Errors
    ///
    /// As [`ReadBackend::list`].
    fn get(&self, id: u64, namespace: Option<&str>)
    -> Result<Option<(ScheduleRow, String)>, Error>;

    /// The rows keyed `key` (a key already checked), by id; none in a store older than keys.
    ///
    /// # Errors
    ///
    /// As [`ReadBackend::list`].
    fn find_key(
        &self,
        key: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<(ScheduleRow, String)>, Error>;

    /// Every saved id, by id, without decoding the rows.
    ///
    /// # Errors
    ///
    /// The store's error.
    fn ids(&self, namespace: Option<&str>) -> Result<Vec<u64>, Error>;

    /// How many schedules each namespace holds, by name; one unnamed (`""`) namespace for a
    /// store from before namespaces.
    ///
    /// # Errors
    ///
    /// The store's error.
    fn namespaces(&self) -> Result<Vec<(String, u64)>, Error>;

    /// Schedule `id`'s stored history, newest first (docs/schedules.md §9.11); empty in a store
    /// older than histories.
    ///
    /// # Errors
    ///
    /// The store's error; a record that does not decode is named.
    fn history(&self, id: u64) -> Result<Vec<HistoryRow>, Error>;

    /// One page of a list, checked already, read in one snapshot (docs/schedules.md §9.17).
    ///
    /// # Errors
    ///
    /// The store's error.
    fn page(&self, namespace: Option<String>, query: &ListQuery) -> Result<ListPage, Error>;

    /// The nodes sharing the store and what each holds, at most `shown` ids a node
    /// (docs/schedules.md §11.43); `None` for a store one engine uses.
    ///
    /// # Errors
    ///
    /// The store's error.
    fn cluster(&self, shown: usize) -> Result<Option<Cluster>, Error> {
        let _ = shown;
        Ok(None)
    }

    /// The cluster's events of the last `window`, at most `rows` of them, the newest
    /// (docs/schedules.md §11.50); `None` for a store one engine uses.
    ///
    /// # Errors
    ///
    /// The store's error.
    fn cluster_history(
        &self,
        window: Duration,
        rows: usize,
    ) -> Result<Option<ClusterHistory>, Error> {
        let _ = (window, rows);
        Ok(None)
    }
}
