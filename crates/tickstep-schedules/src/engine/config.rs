//! Engine settings.

use std::time::Duration;

use crate::Namespace;

/// Engine settings. Start from [`Config::default`] and change fields.
///
/// ```
/// use std::time::Duration;
/// let mut config = tickstep_schedules::Config::default();
/// config.tick = Duration::from_millis(50);
/// config.rng_seed = Some(7);
/// config.max_tick_time = Some(Duration::from_millis(2));
/// assert_eq!(config.max_firings_per_tick, 1024);
/// assert_eq!(config.namespace, tickstep_schedules::Namespace::DEFAULT);
/// ```
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Config {
    /// The scheduler tick: the floor for intervals (shorter ones are clamped and reported
    /// `interval_clamped`) and the earliest jitter may move a deadline to. Default 10 ms.
    pub tick: Duration,
    /// The most due entries one [`Schedules::tick`](crate::Schedules::tick) handles; the rest wait for the next tick.
    /// Default 1,024.
    pub max_firings_per_tick: usize,
    /// The most engine-clock time one tick spends starting firings (docs/schedules.md §10.5):
    /// once it has passed, the tick starts no further firings, commits, and leaves the rest due
    /// for the next tick. `None` (the default) bounds a tick by
    /// [`max_firings_per_tick`](Config::max_firings_per_tick) alone.
    pub max_tick_time: Option<Duration>,
    /// How long a retired entry stays visible to `schedule_info`. Default 60 s.
    pub retention: Duration,
    /// Seed for the jitter random number generator. `None` seeds it from the clock's wall time,
    /// which is deterministic under a [`ManualClock`](tickstep_kernel::clock::ManualClock).
    pub rng_seed: Option<u64>,
    /// Lets [`Schedules::open`](crate::Schedules::open) add the store's tables to a `SQLite` file
    /// that already holds another application's tables (and switch that file to WAL). Off by
    /// default: such a file is refused with [`Error::NotAStore`](crate::Error::NotAStore) and
    /// left untouched. A `PostgreSQL` store ignores it: its tables are prefixed `tickstep_`
    /// and always share their database.
    pub share_file: bool,
    /// How long a node's hold on its schedules outlives its last heartbeat, on a `PostgreSQL`
    /// store several engines share (docs/schedules.md §11.25): the node renews it every third
    /// of this; once it runs out (a crash, a pause, a lost network) other nodes take its
    /// schedules over. Measured by the database's clock, never the node's. Default 10 s;
    /// a `SQLite` store ignores it.
    pub lease: Duration,
    /// The application this engine is (docs/schedules.md §15): it loads, claims, fires and
    /// retires only the stored schedules of this namespace, and every schedule it creates is
    /// stored in it. Default [`Namespace::DEFAULT`] (`default`); the `tickstep` crate's hosts
    /// name theirs (`serve`, `demo`, the program's own name).
    pub namespace: Namespace,
    /// The node this engine is on a `PostgreSQL` store, kept across restarts so that a host
    /// whose tasks survive a crash gets its in-flight firings back (docs/schedules.md §11.49):
    /// opening waits for the lease of a previous process on this node to run out (at most two
    /// leases, else [`Error::NodeInUse`](crate::Error::NodeInUse)), takes the node's rows back
    /// with a new fence, and hands their runs to [`Schedules::interrupted`](crate::Schedules::interrupted)
    /// instead of settling them as taken over. `None` (the default): a fresh random node at each
    /// open. From 1 to `i64::MAX`; two live engines must never share one. A `SQLite` store
    /// ignores it: it has one engine, whose runs always come back.
    pub node: Option<u64>,
    /// On a `PostgreSQL` store, what becomes of the firings a row claimed from another node says
    /// were running there (docs/schedules.md §11.57). Off (the default): they are settled at
    /// once as taken over, at most once (docs/schedules.md §11.39). On: each is handed to
    /// [`Schedules::interrupted`](crate::Schedules::interrupted) under a fresh run id, for the
    /// host to run again ([`Schedules::rerun`](crate::Schedules::rerun)), reattach or abandon —
    /// so a host that turns it on must decide on that list after every tick. A `SQLite` store
    /// ignores it: it has one engine, whose runs always come back (docs/schedules.md §11.5).
    pub hand_back_taken_over: bool,
}

/// The default tick (10 ms).
///
/// ```
/// assert_eq!(tickstep_schedules::DEFAULT_TICK, std::time::Duration::from_millis(10));
/// ```
pub const DEFAULT_TICK: Duration = Duration::from_millis(10);

/// The default retention of retired entries (60 s).
///
/// ```
/// assert_eq!(tickstep_schedules::DEFAULT_RETENTION.as_secs(), 60);
/// ```
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(60);

/// The default lease of a node on a shared `PostgreSQL` store (10 s).
///
/// ```
/// assert_eq!(tickstep_schedules::DEFAULT_LEASE.as_secs(), 10);
/// ```
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);

impl Default for Config {
    fn default() -> Self {
        Config {
            tick: DEFAULT_TICK,
            max_firings_per_tick: 1024,
            max_tick_time: None,
            retention: DEFAULT_RETENTION,
            rng_seed: None,
            share_file: false,
            lease: DEFAULT_LEASE,
            namespace: Namespace::DEFAULT,
            node: None,
            hand_back_taken_over: false,
        }
    }
}
