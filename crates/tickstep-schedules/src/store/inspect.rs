//! The operator's view of a store: [`Inspector`] reads it without an engine, and
//! [`Inspector::stop`] removes a schedule the way the engine's own durable stop does. A file is
//! read here; a `postgres://` URL (feature `postgres`) by the `PostgreSQL` store's inspector
//! (docs/schedules.md §11.24).
//!
//! Everything here goes through the store's own schema check and row codec, so a schema change is
//! made in one place and the inspector follows it; a file of a schema this build does not know is
//! refused, never misread.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::cluster::Cluster;
use super::codec::{self, from_sql, to_sql};
use super::sqlite::SqliteStore;
use super::sqlite::columns;
use super::sqlite::integrity;
use super::sqlite::schema;
use crate::cadence_points::{CadenceView, upcoming};
use crate::row::{OperatorAction, ScheduleRow};
use crate::{Catchup, Error, Fault, InFlight, ObjId, Overlap, ScheduleId, ScheduleKind, Value};

mod page;
pub use page::{ListOrder, ListPage, ListQuery, ListedSchedule, MAX_PAGE_SIZE};

/// How long a read waits for the engine's write lock before giving up (WAL readers rarely wait:
/// only while the engine checkpoints or a writer recovers the file).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// A read-only view of a schedule store, for operators and tools (the `tickstep schedules`
/// command is one): a `SQLite` file or, in a build with the `postgres` feature, a `postgres://`
/// URL (a read-only session, the `PostgreSQL` store's own schema check and codec;
/// docs/schedules.md §11.24).
///
/// [`Inspector::open`] opens the file with `SQLite`'s read-only flag: it never creates, migrates
/// or writes the file, and — the file being in WAL mode — reads a consistent snapshot without
/// blocking an engine that is writing it at the same time. Rows are decoded by the store's own
/// codec, so what it reports is exactly what a restarting engine would load.
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
    source: Source,
    /// The one namespace this inspector reads ([`Inspector::in_namespace`]); `None`: every
    /// namespace (docs/schedules.md §15.5).
    namespace: Option<crate::Namespace>,
}

/// Where an inspector reads.
#[derive(Debug)]
enum Source {
    Sqlite {
        conn: Connection,
        path: std::path::PathBuf,
        /// The file's schema version: which columns its rows have.
        version: i64,
    },
    #[cfg(feature = "postgres")]
    // Boxed: a client and its statements are far larger than a SQLite connection.
    Postgres(Box<super::postgres::inspect::PgInspector>),
}

/// One schedule as the store holds it: what was committed by the engine's last durable commit or
/// group commit, with times as Unix nanoseconds (0 for never).
///
/// It is the persisted part of [`ScheduleInfo`](crate::ScheduleInfo): the duration window and
/// retirement live only in a running engine (retired schedules are not saved), and the cadence
/// fields are as of the last tick the engine committed.
///
/// ```
/// # use tickstep_schedules::kernel::clock::{Clock, ManualClock};
/// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
/// # use tickstep_schedules::{Inspector, Options, Schedules, ScheduleKind, Value};
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("s.db");
/// # let world = TestWorld::new();
/// # let wiz = world.add_wizard();
/// # world.add_verb(wiz, "ring");
/// let clock = ManualClock::new();
/// let engine = Schedules::open(&path, clock.clone(), world, TestRunner::new(),
///     Default::default()).unwrap();
/// let mut txn = engine.begin(wiz);
/// let options = Options::new().state(Value::from("loud"));
/// let id = txn.schedule_every(wiz, "ring", 2.0, vec![Value::Int(3)], options).unwrap();
/// txn.commit().unwrap();
///
/// let bell = Inspector::open(&path).unwrap().get(id).unwrap().unwrap();
/// assert_eq!(bell.kind, ScheduleKind::Every);
/// assert_eq!(bell.interval_ns, 2_000_000_000);
/// assert_eq!(bell.args, vec![Value::Int(3)]);
/// assert_eq!(bell.state, Some(Value::from("loud")));
/// assert_eq!(bell.fire_at_unix_nanos, clock.unix_nanos() + 2_000_000_000);
/// assert!(bell.running.is_empty());
/// ```
#[derive(Clone, PartialEq, Debug)]
#[non_exhaustive]
#[allow(clippy::struct_excessive_bools)] // the schedule's options, one to one
pub struct StoredSchedule {
    /// The application it belongs to (docs/schedules.md §15); empty in a store from before
    /// namespaces.
    pub namespace: String,
    /// The schedule's id.
    pub id: ScheduleId,
    /// One-shot or recurring.
    pub kind: ScheduleKind,
    /// The object whose verb is called.
    pub target: ObjId,
    /// The verb.
    pub verb: String,
    /// The arguments (without state and elapsed); empty for none.
    pub args: Vec<Value>,
    /// The `state` option.
    pub state: Option<Value>,
    /// The creating task's permissions, also the authority principal.
    pub owner: ObjId,
    /// `player` inside the fired verb.
    pub player: ObjId,
    /// Nanoseconds between cadence points, after clamping (for a one-shot, what was stored).
    pub interval_ns: u64,
    /// Whether the requested interval was below one tick and was raised to it.
    pub interval_clamped: bool,
    /// The `jitter` option, nanoseconds.
    pub jitter_ns: u64,
    /// The `max_faults` option (0 = unlimited).
    pub max_faults: u32,
    /// The `catchup` option.
    pub catchup: Catchup,
    /// The `overlap` option.
    pub overlap: Overlap,
    /// The `adaptive` option.
    pub adaptive: bool,
    /// The `pass_elapsed` option.
    pub pass_elapsed: bool,
    /// Creation time.
    pub created_unix_nanos: u64,
    /// The next cadence point, before jitter.
    pub next_run_unix_nanos: u64,
    /// The stored deadline, jitter included. It is when the next firing is due only while
    /// `armed`: a paused schedule keeps its deadline unarmed (docs/schedules.md §9.4), so
    /// [`StoredSchedule::next_due_unix_nanos`] is `schedule_info`'s `next_run`.
    pub fire_at_unix_nanos: u64,
    /// Whether a next firing is armed at all (false while paused, or while a one-shot runs).
    pub armed: bool,
    /// When the last firing started (0 if never).
    pub last_run_unix_nanos: u64,
    /// Firings started.
    pub run_count: u64,
    /// Faults over the schedule's life.
    pub fault_count: u64,
    /// Faults since the last success.
    pub consecutive_faults: u32,
    /// Cadence points dropped by catch-up.
    pub missed_count: u64,
    /// Deadlines that arrived while a firing ran and did not start one.
    pub overlap_count: u64,
    /// Duration of the last settled firing, nanoseconds.
    pub last_duration_ns: u64,
    /// The most recent fault.
    pub last_fault: Option<Fault>,
    /// Firings in flight at the last commit, oldest first (a restarting engine hands these back
    /// as [`Schedules::interrupted`](crate::Schedules::interrupted)).
    pub running: Vec<InFlight>,
    /// The `seconds` option: the wall-clock limit on each firing, if any (`None` in a store
    /// older than schema version 3, which did not keep it).
    pub time_limit: Option<std::time::Duration>,
    /// The `ticks` option: the poll budget of each firing, if any (never 0).
    pub tick_limit: Option<std::num::NonZeroU64>,
    /// The schedule's key, unique per owner (docs/schedules.md §5.12); `None` for none, and in
    /// a store older than schema version 4 (`PostgreSQL`: 5), which did not keep keys.
    pub key: Option<String>,
    /// Who paused it, when and why, while paused (docs/schedules.md §9.4).
    pub pause: Option<crate::PauseInfo>,
    /// Cadence points missed because it was paused, over its life (docs/schedules.md §9.4).
    pub paused_missed: u64,
    /// The points it missed by reason and its last miss (docs/schedules.md §9.15): zero for
    /// every reason but `paused` in a store older than schema version 12 (`PostgreSQL` 14).
    pub missed: crate::MissedPoints,
    /// Whether a `trigger_now` waits for the next tick (docs/schedules.md §9.6).
    pub trigger_pending: bool,
    /// The backfill under way: its next point and its last, Unix nanoseconds (docs/schedules.md
    /// §9.7).
    pub backfill_unix_nanos: Option<(u64, u64)>,
    /// A calendar schedule's expression, zone and DST policy (docs/schedules.md §14.12).
    pub calendar: Option<crate::CalendarInfo>,
    /// The `catchup_window` option, if set (`None` in a store older than schema version 11,
    /// `PostgreSQL` 13, which did not keep policies; docs/schedules.md §16.1).
    pub catchup_window: Option<std::time::Duration>,
    /// The `remaining_runs` option as given at creation, if set (docs/schedules.md §16.5).
    pub run_limit: Option<u64>,
    /// The firings its `remaining_runs` still allow (the limit less `run_count`), if it has a
    /// limit (docs/schedules.md §16.5).
    pub remaining_runs: Option<u64>,
    /// What reaching `max_faults` does (docs/schedules.md §16.6).
    pub on_max_faults: crate::OnMaxFaults,
    /// What the next fire times are computed from (docs/schedules.md §9.8), its calendar apart.
    cadence: CadenceView<'static>,
    /// The calendar the next fire times of a `Cron` schedule come from.
    steps_by: Option<std::sync::Arc<crate::Calendar>>,
}

impl StoredSchedule {
    /// When the next firing is due, jitter included, as `schedule_info`'s `next_run` says it:
    /// the stored deadline while one is armed, `None` while none is — paused (docs/schedules.md
    /// §9.4), or a one-shot running.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::{Clock, ManualClock};
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Inspector, Options, Schedules};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "v");
    /// let clock = ManualClock::new();
    /// let engine = Schedules::open(&path, clock.clone(), world, TestRunner::new(), Default::default()).unwrap();
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "v", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// let stored = || Inspector::open(&path).unwrap().get(id).unwrap().unwrap();
    /// assert_eq!(stored().next_due_unix_nanos(), Some(clock.unix_nanos() + 60_000_000_000));
    /// engine.pause(wiz, id, "").unwrap();
    /// assert_eq!(stored().next_due_unix_nanos(), None, "paused: nothing is due");
    /// ```
    pub fn next_due_unix_nanos(&self) -> Option<u64> {
        self.armed.then_some(self.fire_at_unix_nanos)
    }

    /// What the schedule is doing, in one word, as `schedule_info`'s `status` decides it from
    /// the same fields (docs/schedules.md §9.13). A store holds no retired schedule.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Inspector, Options, Schedules, ScheduleStatus};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "v");
    /// let engine = Schedules::open(&path, ManualClock::new(), world, TestRunner::new(), Default::default()).unwrap();
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "v", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// engine.pause(wiz, id, "deploy").unwrap();
    /// let stored = Inspector::open(&path).unwrap().get(id).unwrap().unwrap();
    /// assert_eq!(stored.status(), ScheduleStatus::Paused);
    /// ```
    pub fn status(&self) -> crate::ScheduleStatus {
        crate::ScheduleStatus::of(
            false,
            self.pause.is_some(),
            !self.running.is_empty(),
            self.consecutive_faults,
        )
    }

    /// The next `count` cadence points after the stored state, nominal, Unix nanoseconds, as the
    /// engine computes them for `schedule_info` (docs/schedules.md §9.8): `now_unix_nanos`
    /// matters only for a paused schedule, whose list starts after it.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::{Clock, ManualClock};
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Inspector, Options, Schedules};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # let clock = ManualClock::new();
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "v");
    /// let engine = Schedules::open(&path, clock.clone(), world, TestRunner::new(), Default::default()).unwrap();
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "v", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// let stored = Inspector::open(&path).unwrap().get(id).unwrap().unwrap();
    /// let next = stored.next_runs(clock.unix_nanos(), 3);
    /// assert_eq!(next, [60, 120, 180].map(|s| clock.unix_nanos() + s * 1_000_000_000));
    /// ```
    pub fn next_runs(&self, now_unix_nanos: u64, count: usize) -> Vec<u64> {
        let cadence = CadenceView {
            calendar: self.steps_by.as_deref(),
            ..self.cadence
        };
        upcoming(cadence, now_unix_nanos, count)
    }
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
        match &self.source {
            Source::Sqlite { .. } => Ok(None),
            #[cfg(feature = "postgres")]
            Source::Postgres(pg) => pg.cluster(super::cluster::HELD_SHOWN).map(Some),
        }
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
        match &self.source {
            Source::Sqlite { .. } => {
                let _ = window;
                Ok(None)
            }
            #[cfg(feature = "postgres")]
            Source::Postgres(pg) => pg
                .cluster_history(window, super::cluster_history::CLUSTER_HISTORY_ROWS)
                .map(Some),
        }
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
        if let Some(url) = server_url(path)? {
            #[cfg(feature = "postgres")]
            return Ok(Inspector {
                source: Source::Postgres(Box::new(super::postgres::inspect::PgInspector::open(
                    url,
                )?)),
                namespace: None,
            });
            #[cfg(not(feature = "postgres"))]
            let _ = url;
        }
        integrity::look(path)?;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(Error::store("opening the store read-only"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(Error::store("setting the busy timeout"))?;
        let version = schema::check_current(&conn, path)?;
        Ok(Inspector {
            source: Source::Sqlite {
                conn,
                path: path.to_path_buf(),
                version,
            },
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
        let (conn, path, version) = match &self.source {
            Source::Sqlite {
                conn,
                path,
                version,
            } => (conn, path, *version),
            #[cfg(feature = "postgres")]
            Source::Postgres(pg) => return pg.namespaces(),
        };
        let column = codec::namespace_column(version, schema::NAMESPACES_VERSION);
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {column}, COUNT(*) FROM schedules GROUP BY 1 ORDER BY 1"
            ))
            .map_err(load_error(path))?;
        let counts = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, from_sql(r.get(1)?))))
            .map_err(load_error(path))?;
        counts.collect::<Result<_, _>>().map_err(load_error(path))
    }

    /// The namespace filter as a query parameter (`NULL`: every namespace).
    fn namespace_param(&self) -> Option<&str> {
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
        let namespace = self.namespace_param();
        let (conn, load_error, version) = match &self.source {
            Source::Sqlite {
                conn,
                path,
                version,
            } => (conn, load_error(path), *version),
            #[cfg(feature = "postgres")]
            Source::Postgres(pg) => {
                return Ok(pg
                    .list(namespace)?
                    .into_iter()
                    .map(StoredSchedule::from)
                    .collect());
            }
        };
        decoded(conn, &sqlite_select(version, "TRUE"), [namespace]).map_err(load_error)
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
        let namespace = self.namespace_param();
        let (conn, path, version) = match &self.source {
            Source::Sqlite {
                conn,
                path,
                version,
            } => (conn, path, *version),
            #[cfg(feature = "postgres")]
            Source::Postgres(pg) => {
                return Ok(pg.get(id.get(), namespace)?.map(StoredSchedule::from));
            }
        };
        let sql = sqlite_select(version, "id = ?2");
        decoded(conn, &sql, rusqlite::params![namespace, to_sql(id.get())])
            .map(|mut rows| rows.pop())
            .map_err(load_error(path))
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
        let rows = match &self.source {
            Source::Sqlite {
                conn,
                path,
                version,
            } => {
                if *version < 6 {
                    return Ok(Vec::new());
                }
                // The count of settled firings is the row's to know; every slot is read.
                super::sqlite::read_history(conn, path, id.get(), u64::MAX)?
            }
            #[cfg(feature = "postgres")]
            Source::Postgres(pg) => pg.history(id.get())?,
        };
        Ok(rows
            .into_iter()
            .map(crate::row::HistoryRow::into_record)
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
        crate::key_rules::check_key(key)?;
        let namespace = self.namespace_param();
        let (conn, load_error, version) = match &self.source {
            Source::Sqlite {
                conn,
                path,
                version,
            } => (conn, load_error(path), *version),
            #[cfg(feature = "postgres")]
            Source::Postgres(pg) => {
                return Ok(pg
                    .find_key(key, namespace)?
                    .into_iter()
                    .map(StoredSchedule::from)
                    .collect());
            }
        };
        if version < 4 {
            return Ok(Vec::new());
        }
        let sql = sqlite_select(version, "key = ?2");
        decoded(conn, &sql, rusqlite::params![namespace, key]).map_err(load_error)
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
        let namespace = self.namespace_param();
        let (conn, load_error, version) = match &self.source {
            Source::Sqlite {
                conn,
                path,
                version,
            } => (conn, load_error(path), *version),
            #[cfg(feature = "postgres")]
            Source::Postgres(pg) => {
                return Ok(pg
                    .ids(namespace)?
                    .into_iter()
                    .map(ScheduleId::from_raw)
                    .collect());
            }
        };
        let column = codec::namespace_column(version, schema::NAMESPACES_VERSION);
        let mut stmt = conn
            .prepare(&format!(
                "SELECT id FROM schedules WHERE (?1 IS NULL OR {column} = ?1) ORDER BY id"
            ))
            .map_err(&load_error)?;
        let ids = stmt
            .query_map([namespace], |r| {
                r.get::<_, i64>(0)
                    .map(|id| ScheduleId::from_raw(from_sql(id)))
            })
            .map_err(&load_error)?;
        ids.collect::<Result<_, _>>().map_err(load_error)
    }

    /// Stops schedule `id` in the store at `path`, as an operator: deletes its row in a
    /// `synchronous=FULL` transaction — the engine's own durable-stop code path — so the stop has
    /// reached the disk when this returns. Returns whether the store held it (`false` is not an
    /// error, as with `schedule_stop`).
    ///
    /// The same transaction leaves a note in the store's `operator_stops` table: every engine
    /// running on the file drops the schedule at its next tick, before firing anything (see
    /// [`Schedules::take_operator_stops`](crate::Schedules::take_operator_stops)). The next
    /// engine that opens the file does not load it. Like [`Inspector::open`], this never creates, converts or
    /// migrates the file. On a `postgres://` URL the delete, the note in
    /// `tickstep_operator_stops` and a `NOTIFY tickstep_stops` are one transaction
    /// (docs/schedules.md §11.21).
    ///
    /// # Errors
    ///
    /// As [`Inspector::open`]; [`Error::Store`] (or [`Error::Database`] on a URL) if the delete
    /// fails (then nothing was deleted).
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Options, Schedules};
    /// use tickstep_schedules::Inspector;
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "upkeep");
    /// # let engine = Schedules::open(&path, ManualClock::new(), world, TestRunner::new(),
    /// #     Default::default()).unwrap();
    /// # let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "upkeep", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    ///
    /// assert!(Inspector::stop(&path, id).unwrap());
    /// assert!(!Inspector::stop(&path, id).unwrap(), "already gone");
    /// assert_eq!(Inspector::open(&path).unwrap().get(id).unwrap(), None);
    /// ```
    pub fn stop(path: impl AsRef<Path>, id: ScheduleId) -> Result<bool, Error> {
        let path = path.as_ref();
        let now = wall_now();
        if let Some(url) = server_url(path)? {
            #[cfg(feature = "postgres")]
            return super::postgres::inspect::stop(url, id.get(), now);
            #[cfg(not(feature = "postgres"))]
            let _ = url;
        }
        SqliteStore::open_existing(path)?.stop_as_operator(id.get(), now)
    }
}

/// The system clock's wall time, Unix nanoseconds: what an operator's action is stamped with.
fn wall_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Operator actions on a store, from outside any engine (docs/schedules.md §9.12).
impl Inspector {
    /// Pauses schedule `id` in the store at `path`, as [`Schedules::pause`] does in an engine,
    /// paused by `#-1` (the store's operator): the row records it and every engine running on
    /// the store applies it at its next poll, as it does a stop. Returns `false`, changing
    /// nothing, when it was paused already.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArg`] for an id the store does not hold, a bad note (docs/schedules.md
    /// §9.5), or a store older than operator actions; the store's error otherwise. Nothing is
    /// changed on error.
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
    /// let id = txn.schedule_every(wiz, "v", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// assert!(Inspector::pause(&path, id, "disk full").unwrap());
    /// engine.tick().unwrap(); // the engine finds the note
    /// let pause = engine.begin(wiz).schedule_info(id).unwrap().pause.unwrap();
    /// assert_eq!((pause.by.0, pause.note.as_str()), (-1, "disk full"));
    /// ```
    ///
    /// [`Schedules::pause`]: crate::Schedules::pause
    pub fn pause(path: impl AsRef<Path>, id: ScheduleId, note: &str) -> Result<bool, Error> {
        let action = OperatorAction::Pause {
            note: note.to_owned(),
        };
        Self::act(path.as_ref(), id, &action).map(|n| n > 0)
    }

    /// Resumes schedule `id` in the store at `path` (docs/schedules.md §9.12); `false` when it
    /// was not paused. The engine holding it applies catch-up to the points it missed, as
    /// [`Schedules::resume`] does; with none running, the next to open it applies catch-up as
    /// after downtime (docs/schedules.md §11.8).
    ///
    /// # Errors
    ///
    /// As [`Inspector::pause`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # drop(tickstep_schedules::Schedules::open(&path, tickstep_schedules::kernel::clock::ManualClock::new(),
    /// #     tickstep_schedules::testkit::TestWorld::new(), tickstep_schedules::testkit::TestRunner::new(), Default::default()).unwrap());
    /// let err = tickstep_schedules::Inspector::resume(&path, tickstep_schedules::ScheduleId::from_raw(5)).unwrap_err();
    /// assert_eq!(err.code(), "E_INVARG");
    /// ```
    ///
    /// [`Schedules::resume`]: crate::Schedules::resume
    pub fn resume(path: impl AsRef<Path>, id: ScheduleId) -> Result<bool, Error> {
        Self::act(path.as_ref(), id, &OperatorAction::Resume).map(|n| n > 0)
    }

    /// Asks for one firing of schedule `id` now (docs/schedules.md §9.6, §9.12): the engine
    /// holding it fires it at its next tick after it reads the note, or the next engine to open
    /// the store at its first tick; `false` when one was waiting already.
    ///
    /// # Errors
    ///
    /// As [`Inspector::pause`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # drop(tickstep_schedules::Schedules::open(&path, tickstep_schedules::kernel::clock::ManualClock::new(),
    /// #     tickstep_schedules::testkit::TestWorld::new(), tickstep_schedules::testkit::TestRunner::new(), Default::default()).unwrap());
    /// let err = tickstep_schedules::Inspector::trigger(&path, tickstep_schedules::ScheduleId::from_raw(5)).unwrap_err();
    /// assert!(err.to_string().contains("no such schedule"));
    /// ```
    pub fn trigger(path: impl AsRef<Path>, id: ScheduleId) -> Result<bool, Error> {
        Self::act(path.as_ref(), id, &OperatorAction::Trigger).map(|n| n > 0)
    }

    /// Backfills schedule `id` over `[from, to]` (float Unix seconds, by the system clock), as
    /// [`Schedules::backfill`] does (docs/schedules.md §9.7, §9.12); how many points it will
    /// fire.
    ///
    /// # Errors
    ///
    /// As [`Schedules::backfill`] and [`Inspector::pause`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # drop(tickstep_schedules::Schedules::open(&path, tickstep_schedules::kernel::clock::ManualClock::new(),
    /// #     tickstep_schedules::testkit::TestWorld::new(), tickstep_schedules::testkit::TestRunner::new(), Default::default()).unwrap());
    /// let id = tickstep_schedules::ScheduleId::from_raw(5);
    /// let err = tickstep_schedules::Inspector::backfill(&path, id, 20.0, 10.0).unwrap_err();
    /// assert!(err.to_string().contains("from must not be after to"));
    /// ```
    ///
    /// [`Schedules::backfill`]: crate::Schedules::backfill
    pub fn backfill(
        path: impl AsRef<Path>,
        id: ScheduleId,
        from: f64,
        to: f64,
    ) -> Result<u64, Error> {
        let (from, to) = crate::operator_rules::backfill_bounds(from, to, wall_now())?;
        Self::act(path.as_ref(), id, &OperatorAction::Backfill { from, to })
    }

    fn act(path: &Path, id: ScheduleId, action: &OperatorAction) -> Result<u64, Error> {
        let now = wall_now();
        let answer = if let Some(url) = server_url(path)? {
            #[cfg(feature = "postgres")]
            {
                super::postgres::inspect::act(url, id.get(), action, now)?
            }
            #[cfg(not(feature = "postgres"))]
            {
                let _ = url;
                unreachable!("server_url refuses a URL without the postgres feature")
            }
        } else {
            SqliteStore::open_existing(path)?.act_as_operator(id.get(), action, now)?
        };
        answer.ok_or_else(|| {
            Error::invalid(id, "no such schedule in the store (docs/schedules.md §9.9)")
        })
    }
}

/// The `SQLite` select of a store of schema `version`: the row's columns, then its namespace,
/// of the namespace `?1` (every namespace when `?1` is NULL; docs/schedules.md §15.5) where
/// `condition` holds, by id.
fn sqlite_select(version: i64, condition: &str) -> String {
    let namespace = codec::namespace_column(version, schema::NAMESPACES_VERSION);
    format!(
        "SELECT {}, {namespace} FROM schedules WHERE (?1 IS NULL OR {namespace} = ?1) \
         AND ({condition}) ORDER BY id",
        codec::columns_for(version)
    )
}

/// The schedules `sql` ([`sqlite_select`]) selects, decoded, each with its namespace.
fn decoded(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> rusqlite::Result<Vec<StoredSchedule>> {
    let mut stmt = conn.prepare(sql)?;
    let mut rows = stmt.query(params)?;
    let mut all = Vec::new();
    while let Some(row) = rows.next()? {
        let namespace: String = row.get(codec::COLUMN_COUNT)?;
        all.push(StoredSchedule::from((columns::decode(row)?, namespace)));
    }
    Ok(all)
}

/// Maps a read error: damage names the file and the way to recover it.
fn load_error(path: &Path) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |e| integrity::store_error(path, "loading schedules", e)
}

/// The URL when `path` names a `PostgreSQL` server, `None` for a file.
///
/// # Errors
///
/// [`Error::InvalidArg`] for a server location in a build without the `postgres` feature (named
/// by its scheme only: the URL may carry a password).
fn server_url(path: &Path) -> Result<Option<&str>, Error> {
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

impl From<(ScheduleRow, String)> for StoredSchedule {
    /// A decoded row, with its namespace, as the operator sees it.
    fn from((r, namespace): (ScheduleRow, String)) -> Self {
        let id = ScheduleId::from_raw(r.id);
        let c = r.cadence;
        let ops = c.ops.unwrap_or_default();
        let cadence = CadenceView {
            kind: r.kind,
            calendar: None,
            next_run: c.next_run,
            interval_ns: r.interval_ns,
            waiting: c.armed || ops.paused.as_ref().is_some_and(|p| p.armed),
            paused: ops.paused.is_some(),
            // A schedule whose last run has started has no next point (docs/schedules.md §16.5).
            live: r.policies.run_limit.is_none_or(|n| c.run_count < n),
        };
        StoredSchedule {
            namespace,
            id,
            kind: r.kind,
            target: r.target,
            verb: r.verb,
            args: r.args.unwrap_or_default(),
            state: r.state,
            owner: r.owner,
            player: r.player,
            interval_ns: r.interval_ns,
            interval_clamped: r.interval_clamped,
            jitter_ns: r.jitter_ns,
            max_faults: r.max_faults,
            catchup: r.catchup,
            overlap: r.overlap,
            adaptive: r.adaptive,
            pass_elapsed: r.pass_elapsed,
            created_unix_nanos: r.created_at,
            next_run_unix_nanos: c.next_run,
            fire_at_unix_nanos: c.fire_at,
            armed: c.armed,
            last_run_unix_nanos: c.last_run,
            run_count: c.run_count,
            fault_count: c.fault_count,
            consecutive_faults: c.consecutive_faults,
            missed_count: c.missed_count,
            overlap_count: c.overlap_count,
            last_duration_ns: c.last_duration_ns,
            last_fault: c.last_fault,
            running: c
                .running
                .iter()
                // A start still waiting for the row to be durable is no run yet (docs/schedules.md §11.42).
                .filter_map(|r| {
                    Some(InFlight {
                        schedule: id,
                        run: r.run?,
                        nominal_unix_nanos: r.nominal,
                    })
                })
                .collect(),
            time_limit: r.time_limit_ns.map(std::time::Duration::from_nanos),
            tick_limit: r.tick_limit.and_then(std::num::NonZeroU64::new),
            key: r.key,
            pause: ops.paused.map(|p| crate::PauseInfo {
                by: p.by,
                at: crate::info::unix_seconds(p.at),
                note: p.note,
            }),
            paused_missed: ops.paused_missed,
            missed: ops.missed.view(ops.paused_missed),
            trigger_pending: ops.trigger,
            backfill_unix_nanos: ops.backfill,
            calendar: r.calendar.as_deref().map(crate::CalendarInfo::from),
            catchup_window: r.policies.catchup_window(),
            run_limit: r.policies.run_limit,
            remaining_runs: r.policies.run_limit.map(|n| n.saturating_sub(c.run_count)),
            on_max_faults: r.policies.on_max_faults,
            cadence,
            steps_by: r.calendar,
        }
    }
}
