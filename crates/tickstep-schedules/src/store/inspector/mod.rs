//! The operator's view of a store: [`Inspector`] reads it without an engine, and its operator
//! actions ([`Inspector::stop`], [`Inspector::pause`], …) change it the way the engine's own
//! durable commits do (docs/schedules.md §9.12, §11.24).
//!
//! The inspector reads through a [`ReadBackend`] (docs/schedules.md §13.74): a `SQLite` file's
//! read-only connection (`store/sqlite/sqlite_inspector.rs`) or, with the `postgres` feature, a
//! `postgres://` URL's read-only session (`store/postgres/pg_inspector.rs`). Each goes through
//! its store's own schema check and row codec, so a schema change is made in one place and the
//! inspector follows it; a store of a schema this build does not know is refused, never misread.
//!
//! * `stored_schedule.rs` — [`StoredSchedule`], a row as the operator sees it;
//! * `store_actions.rs` — the operator actions, each on a connection of its own.

use std::path::Path;

use super::cluster::Cluster;
use super::list_page::{ListPage, ListQuery, MAX_PAGE_SIZE};
use super::read_backend::ReadBackend;
use super::sqlite::sqlite_inspector::SqliteInspector;
use crate::{Error, ScheduleId};

mod store_actions;
mod stored_schedule;
pub use stored_schedule::StoredSchedule;

/// A read-only view of a schedule store, for operators and tools (the `tickstep schedules`
/// command is one): a `SQLite` file or, in a build with the `postgres` feature, a `postgres://`
/// URL (a read-only session, the `PostgreSQL` store's own schema check and codec;
/// docs/schedules.md §11.24).
///
/// [`Inspector::open`] opens the file with `SQLite`'s read-only flag: it never creates, migrates
/// or writes the file, and — the file being in WAL mode — reads a consistent snapshot without
/// blocking an engine that is writing it at the same time. Rows are decoded by the store's own
/// codec, so what it reports is exactly what a restarting engine would load. Both stores are read
/// through one read-side trait (docs/schedules.md §13.74).
///
/// ```
/// use tickstep_schedules::kernel::clock::ManualClock;
/// use tickstep_schedules::testkit::{TestRunner, TestWorld};
/// use tickstep_schedules::{Inspector, Options, Schedules};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("s.db");
/// let world = TestWorld::new();
/// let wiz = world.add_wizard();
/// world.add_verb(wiz, "upkeep");
/// let engine = Schedules::open(&path, ManualClock::new(), world, TestRunner::new(),
///     Default::default()).unwrap();
/// let mut txn = engine.begin(wiz);
/// let id = txn.schedule_every(wiz, "upkeep", 60.0, vec![], Options::new()).unwrap();
/// txn.commit().unwrap();
///
/// // The engine keeps running; the inspector reads beside it.
/// let saved = Inspector::open(&path).unwrap().list().unwrap();
/// assert_eq!(saved.len(), 1);
/// assert_eq!((saved[0].id, saved[0].verb.as_str()), (id, "upkeep"));
/// ```
#[derive(Debug)]
pub struct Inspector {
    /// The store read: a file's read-only connection or a server's read-only session.
    reads: Box<dyn ReadBackend>,
    /// The one namespace this inspector reads ([`Inspector::in_namespace`]); `None`: every
    /// namespace (docs/schedules.md §15.5).
    namespace: Option<crate::Namespace>,
}

impl Inspector {
    /// The nodes sharing this store, their leases and what each holds, in one read
    /// (docs/schedules.md §11.43); `None` for a `SQLite` file, which has one engine and no claims.
    ///
    /// # Errors
    ///
    /// [`Error::Database`] when the server refuses the read.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # drop(tickstep_schedules::Schedules::open(&path, tickstep_schedules::kernel::clock::ManualClock::new(),
    /// #     tickstep_schedules::testkit::TestWorld::new(),
    /// #     tickstep_schedules::testkit::TestRunner::new(), Default::default()).unwrap());
    /// let inspector = tickstep_schedules::Inspector::open(&path).unwrap();
    /// assert_eq!(inspector.cluster().unwrap(), None, "a file has no nodes");
    /// ```
    pub fn cluster(&self) -> Result<Option<Cluster>, Error> {
        self.reads.cluster(super::cluster::HELD_SHOWN)
    }

    /// The cluster's events of the last `window` (at most [`CLUSTER_HISTORY_KEPT`](crate::CLUSTER_HISTORY_KEPT),
    /// a day; a longer window reads a day), oldest first, at most
    /// [`CLUSTER_HISTORY_ROWS`](crate::CLUSTER_HISTORY_ROWS) of them, the newest (docs/schedules.md §11.50):
    /// nodes joining and leaving, claims and takeovers, and a sample a minute of what each node
    /// holds. `None` for a `SQLite` file, which has one engine and keeps no cluster history; a
    /// `PostgreSQL` database from before the history (schema version 15) answers an empty one
    /// whose `kept` is `false`. It writes nothing.
    ///
    /// # Errors
    ///
    /// [`Error::Database`] when the server refuses the read or a row names an unknown kind.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # drop(tickstep_schedules::Schedules::open(&path, tickstep_schedules::kernel::clock::ManualClock::new(),
    /// #     tickstep_schedules::testkit::TestWorld::new(),
    /// #     tickstep_schedules::testkit::TestRunner::new(), Default::default()).unwrap());
    /// use std::time::Duration;
    /// let inspector = tickstep_schedules::Inspector::open(&path).unwrap();
    /// let hour = inspector.cluster_history(Duration::from_secs(3600)).unwrap();
    /// assert_eq!(hour, None, "a file is one engine: no cluster, no history");
    /// ```
    pub fn cluster_history(
        &self,
        window: std::time::Duration,
    ) -> Result<Option<super::cluster_history::ClusterHistory>, Error> {
        let window = window.min(super::cluster_history::CLUSTER_HISTORY_KEPT);
        self.reads
            .cluster_history(window, super::cluster_history::CLUSTER_HISTORY_ROWS)
    }

    /// Opens the store at `path` read-only and checks its schema. A `postgres://` URL connects
    /// to that database instead (docs/schedules.md §11.24).
    ///
    /// The store file itself is never written. Like every WAL reader (the `sqlite3` shell too),
    /// the connection creates the `-shm` index and an empty `-wal` log beside it if no engine has
    /// them open; they hold no data, and the next engine to open the file uses them as its own.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] if the file does not exist or cannot be opened (it is not created);
    /// [`Error::NotAStore`] if it is not a schedule store of a schema this build reads;
    /// [`Error::SchemaTooNew`] (naming both versions) if a newer build wrote it. For a URL:
    /// [`Error::InvalidArg`] if it does not parse (or the build has no `postgres` feature),
    /// [`Error::Database`] if the server refuses, [`Error::NotAStore`] if the database has no
    /// tickstep schema.
    ///
    /// ```
    /// use tickstep_schedules::{Error, Inspector};
    /// let dir = tempfile::tempdir().unwrap();
    /// let missing = dir.path().join("nothing.db");
    /// assert!(matches!(Inspector::open(&missing), Err(Error::Store { .. })));
    /// assert!(!missing.exists(), "an inspector never creates the file");
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let reads: Box<dyn ReadBackend> = match server_url(path)? {
            #[cfg(feature = "postgres")]
            Some(url) => Box::new(super::postgres::pg_inspector::PgInspector::open(url)?),
            #[cfg(not(feature = "postgres"))]
            Some(_) => unreachable!("server_url refuses a URL without the postgres feature"),
            None => Box::new(SqliteInspector::open(path)?),
        };
        Ok(Inspector {
            reads,
            namespace: None,
        })
    }

    /// This inspector, reading only the schedules of `namespace` (docs/schedules.md §15.5):
    /// [`list`](Inspector::list), [`get`](Inspector::get), [`find_key`](Inspector::find_key)
    /// and [`ids`](Inspector::ids) leave every other application's schedules out. A fresh
    /// inspector reads every namespace.
    ///
    /// ```
    /// use tickstep_schedules::kernel::clock::ManualClock;
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// use tickstep_schedules::{Config, Inspector, Namespace, Options, Schedules};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("s.db");
    /// let world = TestWorld::new();
    /// let wiz = world.add_wizard();
    /// world.add_verb(wiz, "v");
    /// let mut config = Config::default();
    /// config.namespace = Namespace::new("billing").unwrap();
    /// let engine = Schedules::open(&path, ManualClock::new(), world, TestRunner::new(), config).unwrap();
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "v", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    ///
    /// let all = Inspector::open(&path).unwrap();
    /// assert_eq!(all.list().unwrap()[0].namespace, "billing");
    /// let other = Inspector::open(&path).unwrap().in_namespace(Namespace::new("games").unwrap());
    /// assert!(other.list().unwrap().is_empty());
    /// assert_eq!(other.get(id).unwrap(), None, "another application's schedule is not there");
    /// ```
    #[must_use]
    pub fn in_namespace(self, namespace: crate::Namespace) -> Inspector {
        Inspector {
            namespace: Some(namespace),
            ..self
        }
    }

    /// The namespace this inspector reads, `None` when it reads every one.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # drop(tickstep_schedules::Schedules::open(&path, tickstep_schedules::kernel::clock::ManualClock::new(),
    /// #     tickstep_schedules::testkit::TestWorld::new(),
    /// #     tickstep_schedules::testkit::TestRunner::new(), Default::default()).unwrap());
    /// let inspector = tickstep_schedules::Inspector::open(&path).unwrap();
    /// assert_eq!(inspector.namespace(), None);
    /// ```
    #[must_use]
    pub fn namespace(&self) -> Option<crate::Namespace> {
        self.namespace
    }

    /// How many schedules each namespace holds, by name (docs/schedules.md §15.5), whatever
    /// namespace this inspector reads. A store from before namespaces shows its schedules under
    /// the empty name.
    ///
    /// # Errors
    ///
    /// As [`Inspector::list`].
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Inspector, Options, Schedules};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "v");
    /// let engine = Schedules::open(&path, ManualClock::new(), world, TestRunner::new(), Default::default()).unwrap();
    /// let mut txn = engine.begin(wiz);
    /// txn.schedule_every(wiz, "v", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// let counts = Inspector::open(&path).unwrap().namespaces().unwrap();
    /// assert_eq!(counts, vec![("default".to_string(), 1)]);
    /// ```
    pub fn namespaces(&self) -> Result<Vec<(String, u64)>, Error> {
        self.reads.namespaces()
    }

    /// The namespace filter as a query parameter (`NULL`: every namespace).
    pub(super) fn namespace_param(&self) -> Option<&str> {
        self.namespace.as_ref().map(crate::Namespace::as_str)
    }

    /// Every saved schedule, by id.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] if `SQLite` fails or a row does not decode (a corrupt value is named in
    /// the source error).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # drop(tickstep_schedules::Schedules::open(&path, tickstep_schedules::kernel::clock::ManualClock::new(),
    /// #     tickstep_schedules::testkit::TestWorld::new(),
    /// #     tickstep_schedules::testkit::TestRunner::new(), Default::default()).unwrap());
    /// let inspector = tickstep_schedules::Inspector::open(&path).unwrap();
    /// assert!(inspector.list().unwrap().is_empty());
    /// ```
    pub fn list(&self) -> Result<Vec<StoredSchedule>, Error> {
        Ok(self
            .reads
            .list(self.namespace_param())?
            .into_iter()
            .map(StoredSchedule::from)
            .collect())
    }

    /// The saved schedule `id`, or `None` if the store does not hold it (never created, not
    /// persistent, stopped or retired).
    ///
    /// # Errors
    ///
    /// As [`Inspector::list`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # drop(tickstep_schedules::Schedules::open(&path, tickstep_schedules::kernel::clock::ManualClock::new(),
    /// #     tickstep_schedules::testkit::TestWorld::new(),
    /// #     tickstep_schedules::testkit::TestRunner::new(), Default::default()).unwrap());
    /// use tickstep_schedules::{Inspector, ScheduleId};
    /// let inspector = Inspector::open(&path).unwrap();
    /// assert_eq!(inspector.get(ScheduleId::from_raw(7)).unwrap(), None);
    /// ```
    pub fn get(&self, id: ScheduleId) -> Result<Option<StoredSchedule>, Error> {
        Ok(self
            .reads
            .get(id.get(), self.namespace_param())?
            .map(StoredSchedule::from))
    }

    /// The last settled firings of schedule `id`, newest first, as the store keeps them (at
    /// most [`HISTORY_KEPT`](crate::HISTORY_KEPT), docs/schedules.md §9.11); empty for an
    /// unknown id, a schedule that has not fired, or a store older than histories. A reader
    /// who wants the latest asks the running engine to `wait_for_writes()` first.
    ///
    /// # Errors
    ///
    /// As [`Inspector::list`]; a stored fault that does not decode is named.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Inspector, Options, Schedules};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # let clock = ManualClock::new();
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "v");
    /// let runner = TestRunner::new();
    /// let engine = Schedules::open(&path, clock.clone(), world, runner.clone(), Default::default()).unwrap();
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "v", 1.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// clock.advance(std::time::Duration::from_secs(1));
    /// engine.tick().unwrap();
    /// runner.finish_all(&engine);
    /// engine.flush().unwrap();
    /// let history = Inspector::open(&path).unwrap().history(id).unwrap();
    /// assert_eq!(history.len(), 1);
    /// assert_eq!(history[0].outcome(), "returned");
    /// ```
    pub fn history(&self, id: ScheduleId) -> Result<Vec<crate::FiringRecord>, Error> {
        let rows = self.reads.history(id.get())?;
        Ok(rows
            .into_iter()
            .map(crate::store_rows::HistoryRow::into_record)
            .collect())
    }

    /// How late the firings the store keeps started, over every schedule it shows (this
    /// namespace's, with [`Inspector::in_namespace`]): the percentiles of
    /// [`FiringRecord::lateness`](crate::FiringRecord::lateness) over each schedule's last
    /// [`HISTORY_KEPT`](crate::HISTORY_KEPT) firings together, with their count
    /// (docs/schedules.md §9.16). It reads each schedule's history, one read a schedule.
    ///
    /// # Errors
    ///
    /// As [`Inspector::history`].
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Inspector, Options, Schedules};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # let clock = ManualClock::new();
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "v");
    /// let runner = TestRunner::new();
    /// let engine = Schedules::open(&path, clock.clone(), world, runner.clone(), Default::default()).unwrap();
    /// let mut txn = engine.begin(wiz);
    /// txn.schedule_every(wiz, "v", 1.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// clock.advance(std::time::Duration::from_millis(1250));
    /// engine.tick().unwrap();
    /// runner.finish_all(&engine);
    /// engine.flush().unwrap();
    /// let lateness = Inspector::open(&path).unwrap().lateness().unwrap();
    /// assert_eq!(lateness.samples, 1);
    /// assert!((lateness.p99 - 0.25).abs() < 1e-6, "float Unix seconds: {}", lateness.p99);
    /// ```
    pub fn lateness(&self) -> Result<crate::Lateness, Error> {
        let mut seconds = Vec::new();
        for id in self.ids()? {
            seconds.extend(self.history(id)?.iter().map(crate::FiringRecord::lateness));
        }
        Ok(crate::Lateness::of_seconds(seconds))
    }

    /// The saved schedules keyed `key`, by id: one per owner at most, the key being unique per
    /// owner (docs/schedules.md §5.17, §5.18). Empty for a store older than keys.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArg`] for a key that breaks the key rule (docs/schedules.md §5.12); as
    /// [`Inspector::list`] otherwise.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::{Clock, ManualClock};
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Inspector, Options, Schedules};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "beat");
    /// # let engine = Schedules::open(&path, ManualClock::new(), world, TestRunner::new(),
    /// #     Default::default()).unwrap();
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "beat", 5.0, vec![], Options::new().key("heartbeat")).unwrap();
    /// txn.commit().unwrap();
    /// let found = Inspector::open(&path).unwrap().find_key("heartbeat").unwrap();
    /// assert_eq!(found.iter().map(|s| s.id).collect::<Vec<_>>(), vec![id]);
    /// assert_eq!(found[0].key.as_deref(), Some("heartbeat"));
    /// ```
    pub fn find_key(&self, key: &str) -> Result<Vec<StoredSchedule>, Error> {
        crate::schedule_keys::check_key(key)?;
        Ok(self
            .reads
            .find_key(key, self.namespace_param())?
            .into_iter()
            .map(StoredSchedule::from)
            .collect())
    }

    /// The ids of every saved schedule, by id, without decoding the rows (cheap enough to poll).
    ///
    /// # Errors
    ///
    /// [`Error::Store`] if `SQLite` fails.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # drop(tickstep_schedules::Schedules::open(&path, tickstep_schedules::kernel::clock::ManualClock::new(),
    /// #     tickstep_schedules::testkit::TestWorld::new(),
    /// #     tickstep_schedules::testkit::TestRunner::new(), Default::default()).unwrap());
    /// let ids = tickstep_schedules::Inspector::open(&path).unwrap().ids().unwrap();
    /// assert!(ids.is_empty());
    /// ```
    pub fn ids(&self) -> Result<Vec<ScheduleId>, Error> {
        Ok(self
            .reads
            .ids(self.namespace_param())?
            .into_iter()
            .map(ScheduleId::from_raw)
            .collect())
    }

    /// One page of the schedules `query` selects, in its order, with how many matched and how
    /// many there are (docs/schedules.md §9.17): the filters, the order and the page's
    /// `LIMIT … OFFSET …` run in the store, which reads only the columns a list shows, so a page
    /// of a large store costs about one pass of the database over its rows and the decoding of
    /// the page's rows alone (a text search also reads the matching rows' verb, arguments,
    /// owner and key). Within the inspector's namespace ([`Inspector::in_namespace`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArg`] for a page of 0 or a page size outside 1 to [`MAX_PAGE_SIZE`],
    /// naming the value; as [`Inspector::list`] otherwise.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// use tickstep_schedules::{Inspector, ListOrder, ListQuery, Options, Schedules, ScheduleKind};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "v");
    /// let engine = Schedules::open(&path, ManualClock::new(), world, TestRunner::new(), Default::default()).unwrap();
    /// let mut txn = engine.begin(wiz);
    /// for n in 1..=5 {
    ///     txn.schedule_every(wiz, "v", f64::from(n), vec![], Options::new()).unwrap();
    /// }
    /// txn.schedule_cron(wiz, "v", "0 3 * * *", "UTC", vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    ///
    /// let inspector = Inspector::open(&path).unwrap();
    /// let query = ListQuery { kind: Some(ScheduleKind::Every), order: ListOrder::Next, page: 2, ..ListQuery::new(2) };
    /// let page = inspector.page(&query).unwrap();
    /// assert_eq!((page.matched, page.total, page.pages()), (5, 6, 3));
    /// let intervals: Vec<u64> = page.rows.iter().map(|r| r.interval_ns / 1_000_000_000).collect();
    /// assert_eq!(intervals, [3, 4], "the second page of the soonest due");
    /// assert!(inspector.page(&ListQuery { page: 0, ..ListQuery::new(2) }).is_err());
    /// ```
    pub fn page(&self, query: &ListQuery) -> Result<ListPage, Error> {
        if query.page == 0 {
            return Err(Error::invalid(
                query.page,
                "a list's page counts from 1 (docs/schedules.md §9.17)",
            ));
        }
        if !(1..=MAX_PAGE_SIZE).contains(&query.page_size) {
            return Err(Error::invalid(
                query.page_size,
                format!("a list's page holds 1 to {MAX_PAGE_SIZE} rows (docs/schedules.md §9.17)"),
            ));
        }
        let namespace = self.namespace_param().map(str::to_owned);
        self.reads.page(namespace, query)
    }
}

/// The URL when `path` names a `PostgreSQL` server, `None` for a file.
///
/// # Errors
///
/// [`Error::InvalidArg`] for a server location in a build without the `postgres` feature (named
/// by its scheme only: the URL may carry a password).
pub(super) fn server_url(path: &Path) -> Result<Option<&str>, Error> {
    if !super::is_server_location(path) {
        return Ok(None);
    }
    if cfg!(feature = "postgres") {
        Ok(path.to_str())
    } else {
        Err(Error::invalid(
            "postgres://…",
            "this build has no PostgreSQL store (enable tickstep-schedules' `postgres` \
             feature); give a SQLite file path",
        ))
    }
}
