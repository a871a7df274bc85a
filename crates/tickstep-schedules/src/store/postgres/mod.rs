//! The `PostgreSQL` store: the same boundary as the `SQLite` store, over the network, with the
//! network kept off the engine's thread (docs/schedules.md §11.13–§11.24).
//!
//! [`Schedules::open`](crate::Schedules::open) picks it when the location is a `postgres://` (or
//! `postgresql://`) URL, in a build with the `postgres` feature. Opening connects, migrates the
//! schema ([`schema`]; tables prefixed `tickstep_`, so another application's tables in the same
//! database are left alone) and starts a store thread ([`worker`]) that owns the connection from
//! then on.
//!
//! # Who waits for what
//!
//! | call | engine thread | why |
//! |---|---|---|
//! | open, load | blocks (rows stream in chunks of 1,024 while the engine applies them) | nothing can fire before the schedules are known |
//! | `Txn::commit` (create, stop) | blocks for one commit on the server | creation and stop are durable when `commit` returns |
//! | id reservation | blocks once per 1,024 ids | an id is never handed out before its block is durable |
//! | a tick's cadence updates | never: queued for the store thread | the frame must not wait on a round trip |
//! | `Schedules::flush` | blocks until the queue is written | for hosts and tests that must see the rows |
//!
//! The thread writes queued updates in one transaction per wake-up (`UPDATE … FROM unnest(…)`, one
//! statement for the whole batch), so several ticks' updates may become one commit. Updates are
//! whole cadence states, so writing a newer one after an older one needs no merging. A crash
//! loses at most the updates still queued: the restarted engine replays from the last written
//! cadence — deadlines never move backwards past what was written, and a firing may repeat,
//! never vanish (the `SQLite` store's power-cut rule, here for a process crash too).
//!
//! Durability is the server's: a commit is acknowledged after the server has flushed its WAL
//! (`synchronous_commit = on`, the default; a database configured otherwise weakens
//! `Txn::commit`'s promise accordingly).
//!
//! # Not yet
//!
//! One engine per database: ids come from the `tickstep_meta` high-water mark raised with
//! `GREATEST`, exactly as in the `SQLite` store, which is unique for one node; several nodes on
//! one database are not built.
//!
//! # Operators
//!
//! [`Inspector`](crate::Inspector) opens a `postgres://` URL too ([`inspect`]: read-only session,
//! the store's schema check and codec). Its stop deletes the row, leaves a note in
//! `tickstep_operator_stops` and sends `NOTIFY tickstep_stops` in one transaction; the store
//! thread reads new notes at most once per `Config::tick` and hands the ids to the engine's next
//! poll without the tick waiting ([`stops`], docs/schedules.md §11.21–§11.24).
//!
//! # Several nodes: the design the next step builds (nothing below exists yet)
//!
//! * **Ownership by claim.** A schedule is owned by at most one node at a time and lives in that
//!   node's table between claims (the engine owns its state; the database arbitrates who). New
//!   columns: `owner_node`, `lease_until` (database time), `fence BIGINT`. The store thread claims
//!   ahead of deadlines in batches: `SELECT id … WHERE (owner_node IS NULL OR lease_until <
//!   clock_timestamp()) AND fire_at <= $horizon ORDER BY fire_at LIMIT $batch FOR UPDATE SKIP
//!   LOCKED`, then in the same transaction sets `owner_node`, `lease_until = clock_timestamp() +
//!   lease` and `fence = fence + 1`, returning whole rows that the engine loads like rows at open.
//!   `SKIP LOCKED` lets nodes claim disjoint batches without waiting on one another.
//! * **Fencing.** Every write-behind `UPDATE` carries the fence it was claimed with (`… AND
//!   s.fence = u.fence AND s.owner_node = $node`). A node paused past its lease finds its rows
//!   re-claimed with a higher fence: its late writes match nothing, are counted (a stat and a
//!   `tracing` warning) and its entries dropped, never applied.
//! * **Heartbeat.** Once per lease third the thread extends every lease it holds in one statement
//!   (`UPDATE … SET lease_until = clock_timestamp() + lease WHERE owner_node = $node`); a node
//!   that stops heartbeating loses all its schedules after one lease time.
//! * **Clocks.** Leases are in database time only (`clock_timestamp()` on both the claim and the
//!   check), so node clock skew can never make two leases overlap. Deadlines stay in the engine's
//!   wall clock (Unix ns, as now, since cadence arithmetic is the engine's): a node whose clock is
//!   `s` ahead fires its schedules `s` early, never twice, because the claim and the fence decide
//!   who fires. Nodes should run NTP; the claim horizon (`fire_at <= node now + lookahead`) absorbs
//!   skew smaller than the lookahead.
//! * **Ids.** `reserve_ids` must return a block the database hands out (`UPDATE tickstep_meta SET
//!   value = value + $block RETURNING value`), not raise a mark the node chose: a change to the
//!   boundary's id call and to the engine's id allocation (`engine/access.rs`).
//! * **Stops from any node.** A stop of a schedule another node owns deletes the row and inserts
//!   into `tickstep_operator_stops` with `NOTIFY tickstep_stops`; the store thread `LISTEN`s and
//!   hands the ids to `poll_stops` (within one tick of the notification), and re-reads the table
//!   after every reconnect, since notifications sent while disconnected are lost. `schedule_info`
//!   for a schedule owned elsewhere reads its row.

mod codec;
pub(crate) mod inspect;
mod schema;
pub(crate) mod stops;
mod worker;

use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;

use super::backend::Backend;
use crate::Error;
use crate::row::{ChangeSet, Durability, RowSink};
use worker::{Loaded, Request, Worker};

/// Maps a client error to ours, with what the store was doing.
pub(crate) fn database_error(context: &'static str) -> impl FnOnce(postgres::Error) -> Error {
    move |e| Error::Database {
        context,
        source: Box::new(e),
    }
}

/// `url` with any password replaced by `***`, for messages.
fn redacted(url: &str) -> String {
    crate::display_location(std::path::Path::new(url))
}

/// `url` as a client configuration.
///
/// # Errors
///
/// [`Error::InvalidArg`] naming the URL without its password.
fn parse(url: &str) -> Result<postgres::Config, Error> {
    url.parse().map_err(|e| {
        Error::invalid(
            redacted(url),
            format!("must be a PostgreSQL connection URL: {e}"),
        )
    })
}

/// A connection to `url`, for the operator's tools.
///
/// # Errors
///
/// As [`parse`]; [`Error::Database`] when the server refuses the connection.
fn connect(url: &str) -> Result<postgres::Client, Error> {
    parse(url)?
        .connect(postgres::NoTls)
        .map_err(database_error("connecting to PostgreSQL"))
}

/// The engine's side of the store: a channel to the store thread.
pub(crate) struct PostgresStore {
    requests: Option<Sender<Request>>,
    /// Ids of schedules an operator stopped, as the store thread finds them.
    stopped: Receiver<u64>,
    thread: Option<JoinHandle<()>>,
}

impl PostgresStore {
    /// Connects to `url`, migrates the schema, and starts the store thread.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArg`] for a URL the client cannot parse (named without its password);
    /// [`Error::Database`] when the server refuses the connection or the migration;
    /// [`Error::SchemaTooNew`] when a newer build migrated the database.
    pub(crate) fn open(url: &str, stop_poll: std::time::Duration) -> Result<Self, Error> {
        let config = parse(url)?;
        let mut client = config
            .connect(postgres::NoTls)
            .map_err(database_error("connecting to PostgreSQL"))?;
        schema::migrate(&mut client)?;
        let (found, stopped) = mpsc::channel();
        let stops = stops::StopWatch::start(&mut client, stop_poll, found)?;
        let (requests, inbox) = mpsc::channel();
        let worker = Worker::new(client, config, stops);
        let thread = std::thread::Builder::new()
            .name("tickstep-pg-store".into())
            .spawn(move || worker.run(&inbox))
            .map_err(|e| Error::Database {
                context: "starting the store thread",
                source: Box::new(e),
            })?;
        Ok(PostgresStore {
            requests: Some(requests),
            stopped,
            thread: Some(thread),
        })
    }

    fn send(&self, request: Request) -> Result<(), Error> {
        self.requests
            .as_ref()
            .and_then(|r| r.send(request).ok())
            .ok_or_else(thread_gone)
    }

    /// Sends a request that carries `reply` and waits for its answer.
    fn ask<T>(&self, make: impl FnOnce(Sender<Result<T, Error>>) -> Request) -> Result<T, Error> {
        let (reply, answer) = mpsc::channel();
        self.send(make(reply))?;
        answer.recv().map_err(|_| thread_gone())?
    }
}

fn thread_gone() -> Error {
    Error::Database {
        context: "talking to the store thread",
        source: "the PostgreSQL store thread has stopped".into(),
    }
}

impl Backend for PostgresStore {
    fn load(&mut self, sink: &mut dyn RowSink) -> Result<u64, Error> {
        let (out, rows) = mpsc::channel();
        self.send(Request::Load(out))?;
        loop {
            match rows.recv().map_err(|_| thread_gone())? {
                Loaded::Rows(chunk) => {
                    sink.expect(chunk.len());
                    for row in chunk {
                        sink.apply(row)?;
                    }
                }
                Loaded::Done(high_water) => return Ok(high_water),
                Loaded::Failed(e) => return Err(e),
            }
        }
    }

    fn reserve_ids(&mut self, through: u64) -> Result<(), Error> {
        self.ask(|reply| Request::Reserve { through, reply })
    }

    fn commit(&mut self, changes: &ChangeSet, durability: Durability) -> Result<usize, Error> {
        match durability {
            Durability::Synced => self.ask(|reply| Request::Synced {
                changes: changes.clone(),
                reply,
            }),
            Durability::Grouped => self.send(Request::Behind(changes.clone())).map(|()| 0),
        }
    }

    /// Hands over the ids the store thread has found in `tickstep_operator_stops` since the last
    /// call ([`stops`]); never waits for the network.
    fn poll_stops(&mut self, stopped: &mut Vec<u64>) -> Result<(), Error> {
        stopped.extend(self.stopped.try_iter());
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Error> {
        self.ask(Request::Flush)
    }
}

impl Drop for PostgresStore {
    /// Hangs up and waits for the thread to write what is queued (a clean shutdown loses
    /// nothing; the thread gives up after a few failed attempts).
    fn drop(&mut self) {
        drop(self.requests.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::redacted;

    #[test]
    fn urls_in_messages_never_carry_the_password() {
        assert_eq!(
            redacted("postgres://u:secret@h/db"),
            "postgres://u:***@h/db"
        );
        assert_eq!(redacted("postgres://u@h:5432/db"), "postgres://u@h:5432/db");
        assert_eq!(redacted("postgres://h:5432/db"), "postgres://h:5432/db");
    }
}
