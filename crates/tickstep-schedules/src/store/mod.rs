//! Durable storage behind one boundary: a store speaks in rows.
//!
//! The engine owns its state; a store never sees it. [`Backend`] is everything the engine asks of
//! a store: stream the saved rows at open ([`Backend::load`] into a [`RowSink`]), raise the id
//! high-water mark, write a tick's or a transaction's [`ChangeSet`], and report the schedules an
//! operator stopped from outside ([`Backend::poll_stops`]). Which store is chosen at open, from
//! the location ([`open`]): a path is a `SQLite` file; a `postgres://` URL is the `PostgreSQL`
//! store (`postgres`, behind the crate's `postgres` feature), a second `Backend`.
//!
//! * [`backend`] — the [`Backend`] trait: what the engine asks of any store;
//! * [`read_backend`] — the [`ReadBackend`](read_backend::ReadBackend) trait: what an
//!   [`Inspector`] asks of a store it reads without an engine (docs/schedules.md §13.74);
//!
//! Shared by both SQL stores, so each is written once:
//!
//! * [`codec`] — row ⇄ SQL (JSON for values, bit-preserving integers for `u64`);
//! * [`decode`] — a stored row back into a row;
//! * [`list_page`] — one page of a list, read in the store ([`Inspector::page`]), and
//!   [`list_sql`], its SQL as each store spells it;
//!
//! The stores and what reads them:
//!
//! * [`sqlite`] — the `SQLite` backend: durable commits, per-tick group commits, loading, stops;
//!   its schema and migrations, the checks opening makes, the writer and the checkpointer;
//! * [`background`] — the lower CPU priority of the store's own threads;
//! * `postgres` — the `PostgreSQL` backend: a store thread, writes behind the tick (feature
//!   `postgres`);
//! * [`cluster`] — who shares a `PostgreSQL` store, as [`Inspector::cluster`] reads it;
//! * [`cluster_history`] — its cluster over time, as [`Inspector::cluster_history`] reads it;
//! * [`inspector`] — the operator's read-only view ([`Inspector`]) and its actions, through a
//!   `ReadBackend` each store implements in its own folder, on the store's own schema check and
//!   codec (a `SQLite` file or, with `postgres`, a `postgres://` URL).
//!
//! # Durability
//!
//! Creation and stop are durable when `Txn::commit` returns: their SQLite transaction runs with
//! `synchronous=FULL`, which fsyncs the WAL before the commit returns. Cadence updates from firings
//! (next deadline, counters, running firings) are group-committed once per tick with
//! `synchronous=NORMAL`: one transaction per tick, surviving a process crash (the WAL is written
//! before commit returns) though not necessarily a power cut, in which case the restarted engine
//! replays from the last durable cadence — deadlines never move backwards past what was durable.
//! A firing starts only once its update is written (docs/schedules.md §11.42), so a process crash
//! never repeats a served point; a power cut may lose what the OS had not yet written.
//!
//! # Id high-water mark
//!
//! Ids are reserved in blocks of [`ID_BLOCK`]: before the engine hands out an id beyond the
//! durable mark, it raises the mark to that id plus a block (fsync'd). The mark therefore covers
//! every id handed out — committed, rolled back or non-persistent — before the creating task can
//! even see it, which is stronger than writing it with the creation. Most creations write no meta
//! row, non-persistent schedules (which never touch the disk) cost an fsync once per block, and a
//! restart resumes above the mark, so no id is ever handed out twice. A clean stop lowers the mark
//! to the last id used while the mark is still its own block's end (docs/schedules.md §11.47), so
//! only a crash makes ids jump.
//!
//! # Operators
//!
//! WAL lets any number of readers — the `sqlite3` shell included — read the file while the engine
//! writes it: `sqlite3 schedules.db "SELECT id, verb, next_run FROM schedules"`. Tools written in
//! Rust use [`Inspector`], which decodes rows with this module's codec and refuses a schema it
//! does not know, so they never carry a second copy of the column list.

pub(crate) mod answer;
pub(crate) mod backend;
pub(crate) mod background;
pub(crate) mod cluster;
pub(crate) mod cluster_history;
pub(crate) mod codec;
pub(crate) mod decode;
pub(crate) mod history_in_flight;
pub(crate) mod inspector;
pub(crate) mod list_page;
pub(crate) mod list_sql;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
pub(crate) mod read_backend;
pub(crate) mod sqlite;

use std::path::Path;

pub use cluster::{Cluster, ClusterNode, HELD_SHOWN};
pub use cluster_history::{
    CLUSTER_HISTORY_KEPT, CLUSTER_HISTORY_ROWS, ClusterEvent, ClusterEventKind, ClusterHistory,
    ClusterTakeover, NodeHoldings,
};
pub use inspector::{Inspector, StoredSchedule};
pub use list_page::{ListOrder, ListPage, ListQuery, ListedSchedule, MAX_PAGE_SIZE};

pub use backend::ClusterStats;
pub(crate) use backend::{Backend, OpenPolicy};

use crate::Error;

/// How many ids one durable high-water-mark write reserves.
pub(crate) const ID_BLOCK: u64 = 1024;

/// Whether a store location names a `PostgreSQL` server (`postgres://…` or `postgresql://…`)
/// rather than a `SQLite` file: the one rule [`Schedules::open`](crate::Schedules::open) and its
/// hosts use, so a host never creates a directory for a URL.
///
/// ```
/// use std::path::Path;
/// use tickstep_schedules::is_server_location;
///
/// assert!(is_server_location(Path::new("postgres://world@db.local/tickstep")));
/// assert!(!is_server_location(Path::new("saves/world.db")));
/// ```
pub fn is_server_location(location: &Path) -> bool {
    location
        .to_str()
        .is_some_and(|text| text.starts_with("postgres://") || text.starts_with("postgresql://"))
}

/// `location` as it may be shown to a person: a file path as is, a server URL with any password
/// replaced by `***` (for messages and logs, which must never carry a credential).
///
/// ```
/// use std::path::Path;
/// use tickstep_schedules::display_location;
///
/// assert_eq!(display_location(Path::new("postgres://world:secret@db/t")), "postgres://world:***@db/t");
/// assert_eq!(display_location(Path::new("postgres://db:5432/t")), "postgres://db:5432/t");
/// assert_eq!(
///     display_location(Path::new("postgres://db/t?sslmode=disable&password=secret")),
///     "postgres://db/t?sslmode=disable&password=***"
/// );
/// assert_eq!(display_location(Path::new("saves/world.db")), "saves/world.db");
/// ```
pub fn display_location(location: &Path) -> String {
    let text = location.to_string_lossy();
    if !is_server_location(location) {
        return text.into_owned();
    }
    let start = text.find("://").map_or(0, |i| i + 3);
    let authority_end = text[start..].find('/').map_or(text.len(), |i| start + i);
    let authority = &text[start..authority_end];
    let shown = match (authority.rfind('@'), authority.find(':')) {
        (Some(at), Some(colon)) if colon < at => {
            format!("{}***{}", &text[..=start + colon], &text[start + at..])
        }
        _ => text.into_owned(),
    };
    // A password may also be a query parameter.
    let Some(query_start) = shown.find('?') else {
        return shown;
    };
    let (base, query) = shown.split_at(query_start + 1);
    let params: Vec<String> = query
        .split('&')
        .map(|p| match p.split_once('=') {
            Some(("password", _)) => "password=***".to_string(),
            _ => p.to_string(),
        })
        .collect();
    format!("{base}{}", params.join("&"))
}

/// Opens the store at `location`: a `SQLite` file path, created when missing.
///
/// # Errors
///
/// A `postgres://` location opens the `PostgreSQL` store (as `postgres::PostgresStore::open`);
/// in a build without the `postgres` feature it is [`Error::InvalidArg`]. Anything else is a
/// file, as [`sqlite::SqliteStore::open`].
pub(crate) fn open(location: &Path, policy: OpenPolicy) -> Result<Box<dyn Backend>, Error> {
    if is_server_location(location) {
        #[cfg(feature = "postgres")]
        return Ok(Box::new(postgres::PostgresStore::open(
            &location.to_string_lossy(),
            policy.stop_poll,
            policy.lease,
            policy.namespace,
            policy.node,
        )?));
        #[cfg(not(feature = "postgres"))]
        // The URL may carry a password: name the scheme only.
        return Err(Error::invalid(
            "postgres://…",
            "this build has no PostgreSQL store (enable tickstep-schedules' `postgres` \
             feature); give a SQLite file path",
        ));
    }
    Ok(Box::new(sqlite::SqliteStore::open(location, policy)?))
}
