//! The `PostgreSQL` store: the same boundary as the `SQLite` store, over the network, with the
//! network kept off the engine's thread (docs/schedules.md §11.13–§11.24).
//!
//! [`Schedules::open`](crate::Schedules::open) picks it when the location is a `postgres://` (or
//! `postgresql://`) URL, in a build with the `postgres` feature. Opening starts a store thread
//! ([`store_thread`]) that connects, migrates the schema ([`pg_schema`]; tables prefixed `tickstep_`, so
//! another application's tables in the same database are left alone) and owns the connection
//! from then on; the opening thread only waits for its answer, so opening from inside a tokio
//! runtime is safe (docs/schedules.md §11.38).
//!
//! # Who waits for what
//!
//! | call | engine thread | why |
//! |---|---|---|
//! | open, load | blocks (rows stream in chunks of 1,024 while the engine applies them) | nothing can fire before the schedules are known |
//! | `Txn::commit` (create, stop) | blocks for one commit on the server | creation and stop are durable when `commit` returns |
//! | `Txn::commit_async` | never: a future the store thread completes | the same promise, for a thread that serves other tasks meanwhile (docs/schedules.md §11.41) |
//! | id reservation | blocks once per 1,024 ids | an id is never handed out before its block is durable |
//! | a tick's cadence updates | never: queued for the store thread | the frame must not wait on a round trip |
//! | `Schedules::flush` | blocks until the queue is written | for hosts and tests that must see the rows |
//!
//! The thread writes queued updates in one transaction per wake-up (`UPDATE … FROM unnest(…)`, one
//! statement for the whole batch), so several ticks' updates may become one commit. Updates are
//! whole cadence states, so writing a newer one after an older one needs no merging. A crash
//! loses at most the updates still queued: the restarted engine replays from the last written
//! cadence — deadlines never move backwards past what was written. A firing starts only once
//! the update carrying it is committed (docs/schedules.md §11.42), so those lost updates started
//! nothing, and no served point is fired again.
//!
//! Durability is the server's: a commit is acknowledged after the server has flushed its WAL
//! (`synchronous_commit = on`, the default; a database configured otherwise weakens
//! `Txn::commit`'s promise accordingly).
//!
//! # Operators
//!
//! [`Inspector`](crate::Inspector) opens a `postgres://` URL too ([`pg_inspector`]: read-only session,
//! the store's schema check and codec). Its stop deletes the row, leaves a note in
//! `tickstep_operator_stops` and sends `NOTIFY tickstep_stops` in one transaction; the store
//! thread reads new notes at most once per `Config::tick` and hands the ids to the engine's next
//! poll without the tick waiting ([`stops`], docs/schedules.md §11.21–§11.24).
//!
//! # Several nodes on one database (docs/schedules.md §11.20, §11.25–§11.30)
//!
//! Any number of engines (nodes) may open the same database. The engine owns its state; the
//! database only arbitrates which node holds which schedule ([`pg_claims`]).
//!
//! * **Ids.** `reserve_ids` takes a block from the database's counter (`UPDATE tickstep_meta SET
//!   value = GREATEST(value, $next - 1) + $block … RETURNING value`): the row lock orders
//!   concurrent reservations, so no two nodes — and no restart — ever get the same id.
//! * **Nodes and leases.** Each open engine registers a random 63-bit node id in
//!   `tickstep_nodes` with `lease_until = clock_timestamp() + lease` (`Config::lease`, 10 s by
//!   default). The store thread renews it every third of the lease: **one single-row statement**,
//!   whatever the number of schedules the node holds. (A lease per schedule row, renewed for
//!   every row, would rewrite the whole table three times per lease and leave as many dead
//!   tuples; the node-level lease gives the same takeover rule at O(1).)
//! * **Claims.** A row names its holder (`owner_node`) and the fence of the claim that gave it
//!   to that holder. Claimable: no holder, or a holder whose lease ran out (database time). One
//!   statement claims: `UPDATE … SET owner_node = $me, fence = fence + 1 FROM (SELECT id …
//!   WHERE claimable AND (NOT armed OR fire_at <= $horizon) ORDER BY fire_at LIMIT 1024 FOR
//!   UPDATE SKIP LOCKED) … RETURNING` the whole rows. `SKIP LOCKED` lets nodes claim at once
//!   without waiting on one another or on a row being written. Opening claims every claimable
//!   row, whatever its deadline (what a restart resumes, with catch-up); after that the thread
//!   claims, every third of the lease, rows due within one lease of the engine's clock (as last
//!   noted, moved on by the time since: the engine need not tick), wakes the host's store waker,
//!   and the engine applies them at its next tick like rows at open (`poll_claims`, never
//!   waiting), settling the firings a dead holder had in flight as taken over
//!   (docs/schedules.md §11.39, §11.40).
//!   Schedules created on a node are held by it from creation (fence 1). A clean close hands
//!   every row back (`owner_node = NULL`) so another node claims it at its next round instead
//!   of after a lease.
//! * **Fencing.** The thread keeps the fence of every row it holds; every write-behind update
//!   and retirement carries it (`… AND s.fence = u.fence AND s.owner_node IS NOT DISTINCT FROM
//!   $me`, a comparison no index serves, docs/schedules.md §11.54). A node paused past its
//!   lease finds its rows claimed with a higher fence: its late writes match
//!   nothing, are counted ([`ClusterStats`](crate::ClusterStats), a `tracing` warning) and the
//!   schedules dropped from its engine, never applied. The server ends a transaction left idle
//!   for a lease (`idle_in_transaction_session_timeout`), so a node paused mid-write cannot keep
//!   its rows locked from the claims. A transaction's stop deletes whoever holds the row.
//! * **Exactly once.** A firing is recorded by the fenced cadence update that carries its run;
//!   only the holder's update commits, so each cadence point is committed once. A firing starts
//!   only once that update has committed (docs/schedules.md §11.42), so a node killed or fenced
//!   off never ran the verb for a point the next holder runs again; a point committed but not
//!   yet started when its node died is settled as taken over by the next holder. The verb's side effects are at
//!   most once per point; a verb that needs exactly-once effects writes them in the same
//!   database keyed by (schedule id, cadence point).
//! * **Clocks.** Leases are measured by the database's clock only (`clock_timestamp()` for both
//!   the renewal and the claim check), so node clock skew cannot make two holds overlap.
//!   Deadlines stay in each engine's wall clock (Unix ns; cadence arithmetic is the engine's): a
//!   node whose clock runs `s` ahead fires `s` early, never twice, since the claim and the fence
//!   decide who fires. Skew below the lookahead (one lease) only moves when a row is claimed.
//! * **Any node.** A node's `Txn` reads a schedule it does not hold from its row (one round
//!   trip, after the node's queued writes), so `schedule_info` and `schedule_stop` work from any
//!   node. A stop — in a `Txn` on any node, or an operator's (`Inspector::stop`) — deletes the
//!   row and leaves a note with `NOTIFY` ([`stops`]); the holding node's store thread reads the
//!   notes once per `Config::tick` (polling, not listening: see [`stops`]) and its engine drops
//!   the schedule at its next tick.
//! * **History.** Joins, claims, takeovers, a holdings sample a minute and leaves are appended
//!   to `tickstep_cluster_history` by the statement or transaction that made them, and kept a
//!   day ([`cluster_log`], docs/schedules.md §11.50).
//!
//! Costs per node: a hash-map entry (id → fence) per held schedule on the store thread; one
//! heartbeat statement and one claim statement (an index scan on `owner_node`) per third of a
//! lease, the heartbeat once a minute a transaction that also counts the node's rows and prunes
//! the history (docs/schedules.md §17.7); per write-behind batch, two more array columns and, only when a write matched fewer
//! rows than it carried, one query to tell taken-over rows from stopped ones. A takeover
//! happens one lease after a node's last heartbeat plus at most a third of a lease.

mod batch_writes;
mod claim_marks;
pub(crate) mod cluster_log;
mod history_read;
mod history_ring;
mod key_lookup;
mod mailbox;
mod pg_claims;
mod pg_codec;
pub(crate) mod pg_inspector;
mod pg_schema;
pub(crate) mod stops;
mod store_thread;

use std::ops::RangeInclusive;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use super::answer::{self, Pending};
use super::backend::{Backend, ClusterStats};
use super::history_in_flight::{self, HistoryInFlight};
use crate::Error;
use crate::store_rows::{ChangeSet, ClaimedRow, Durability, RowSink, ScheduleRow};
use mailbox::Mailbox;
use store_thread::{Loaded, Request, Worker};

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
    stopped: Receiver<crate::store_rows::OperatorNote>,
    thread: Option<JoinHandle<()>>,
    mailbox: Arc<Mailbox>,
    /// Write-behind batches sent to the thread (docs/schedules.md §11.42).
    handed: u64,
    /// The history records of those not yet written, for reads that do not wait for them.
    history_in_flight: HistoryInFlight,
}

impl PostgresStore {
    /// Starts the store thread, which connects to `url`, migrates the schema and registers a
    /// new node with a `lease`; waits (on a std channel) until it has.
    ///
    /// The synchronous client runs a small runtime of its own for every call and panics when
    /// called from inside another tokio runtime, so the connection is made, and used from then
    /// on, only on the store thread: opening the store from a task of a tokio runtime (the tokio
    /// driver of the `tickstep` crate builds its runtime there) never panics
    /// (docs/schedules.md §11.38).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArg`] for a URL the client cannot parse (named without its password) or a
    /// node id out of range; [`Error::NodeInUse`] when the named node's lease is renewed while
    /// this open waits for it to run out;
    /// [`Error::Database`] when the server refuses the connection or the migration;
    /// [`Error::SchemaTooNew`] when a newer build migrated the database.
    pub(crate) fn open(
        url: &str,
        stop_poll: Duration,
        lease: Duration,
        namespace: crate::Namespace,
        node: Option<u64>,
    ) -> Result<Self, Error> {
        let node = node
            .map(|n| {
                i64::try_from(n).ok().filter(|n| *n > 0).ok_or_else(|| {
                    Error::invalid(
                        n.to_string(),
                        "a node id is from 1 to 9223372036854775807 (docs/schedules.md §11.49)",
                    )
                })
            })
            .transpose()?;
        let mut config = parse(url)?;
        let lease = lease.max(Duration::from_millis(30));
        // A node paused inside a write transaction would keep its rows locked, and `SKIP
        // LOCKED` claims would pass them by for as long as it stays paused: the server ends
        // such a transaction after a lease of idleness (at least a second), which frees the
        // rows for a takeover; the paused node's write then fails, and once it reconnects the
        // fence refuses it.
        let idle_ms = lease.max(Duration::from_secs(1)).as_millis();
        let options = format!(
            "{} -c idle_in_transaction_session_timeout={idle_ms}",
            config.get_options().unwrap_or_default()
        );
        config.options(options.trim_start());
        let (found, stopped) = mpsc::channel();
        let (requests, inbox) = mpsc::channel();
        let (opened, answer) = mpsc::channel();
        let mailbox = Arc::new(Mailbox::default());
        let for_thread = Arc::clone(&mailbox);
        let thread = std::thread::Builder::new()
            .name("tickstep-pg-store".into())
            .spawn(move || {
                let node = (node, lease);
                match start_worker(config, stop_poll, node, namespace, found, for_thread) {
                    Ok(worker) => {
                        let _ = opened.send(Ok(()));
                        worker.run(&inbox);
                    }
                    Err(e) => {
                        let _ = opened.send(Err(e));
                    }
                }
            })
            .map_err(|e| Error::Database {
                context: "starting the store thread",
                source: Box::new(e),
            })?;
        match answer.recv() {
            Ok(Ok(())) => Ok(PostgresStore {
                requests: Some(requests),
                stopped,
                thread: Some(thread),
                mailbox,
                handed: 0,
                history_in_flight: HistoryInFlight::default(),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => {
                let _ = thread.join();
                Err(thread_gone())
            }
        }
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

/// The store thread's start: connects, migrates, registers the node (a random 63-bit id: two
/// nodes meeting on one would need 2^31 nodes to be likely), or resumes the one the host named
/// (docs/schedules.md §11.49), and notes the last operator stop.
///
/// # Errors
///
/// As [`PostgresStore::open`].
fn start_worker(
    config: postgres::Config,
    stop_poll: Duration,
    (named, lease): (Option<i64>, Duration),
    namespace: crate::Namespace,
    found: Sender<crate::store_rows::OperatorNote>,
    mailbox: Arc<Mailbox>,
) -> Result<Worker, Error> {
    let mut client = config
        .connect(postgres::NoTls)
        .map_err(database_error("connecting to PostgreSQL"))?;
    pg_schema::migrate(&mut client, namespace)?;
    let node = if let Some(node) = named {
        pg_claims::resume(&mut client, node, namespace, lease)?;
        node
    } else {
        let node = fastrand::i64(1..i64::MAX);
        pg_claims::register(&mut client, node, namespace, lease)?;
        node
    };
    let stops = stops::StopWatch::start(&mut client, stop_poll, found)?;
    Ok(Worker::new(
        client, config, stops, node, namespace, lease, mailbox,
    ))
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

    fn reserve_ids(&mut self, next: u64, block: u64) -> Result<RangeInclusive<u64>, Error> {
        self.ask(|reply| Request::Reserve { next, block, reply })
    }

    fn release_ids(&mut self, last_used: u64, reserved_through: u64) -> Result<bool, Error> {
        self.ask(|reply| Request::Release {
            last_used,
            reserved_through,
            reply,
        })
    }

    fn commit(&mut self, changes: &mut ChangeSet, durability: Durability) -> Result<usize, Error> {
        match durability {
            Durability::Synced => self
                .start_synced_commit(changes)
                .wait()
                .unwrap_or_else(|| Err(thread_gone())),
            Durability::Grouped => {
                let history = changes.history.clone();
                let seen = self.mailbox.taken();
                self.send(Request::Behind(std::mem::take(changes), seen))?;
                self.handed += 1;
                let written = self.durable_behind();
                self.history_in_flight.handed(self.handed, history, written);
                Ok(0)
            }
        }
    }

    /// Queues the commit behind what is queued and returns at once; the store thread answers
    /// once the server has committed it (docs/schedules.md §11.41).
    fn start_synced_commit(&mut self, changes: &mut ChangeSet) -> Pending<Result<usize, Error>> {
        let (reply, pending) = answer::answer();
        let request = Request::Synced {
            changes: std::mem::take(changes),
            seen: self.mailbox.taken(),
            reply,
        };
        match self.send(request) {
            Ok(()) => pending,
            Err(e) => Pending::ready(Err(e)),
        }
    }

    /// Hands over the ids the store thread has found in `tickstep_operator_stops` since the last
    /// call ([`stops`]); never waits for the network.
    fn poll_stops(
        &mut self,
        notes: &mut Vec<crate::store_rows::OperatorNote>,
    ) -> Result<(), Error> {
        notes.extend(self.stopped.try_iter());
        Ok(())
    }

    fn poll_claims(&mut self, now: u64, claimed: &mut Vec<ClaimedRow>, lost: &mut Vec<u64>) {
        self.mailbox.take(now, claimed, lost);
    }

    fn set_waker(&mut self, waker: crate::StoreWaker) {
        self.mailbox.set_waker(waker);
    }

    fn row_elsewhere(&mut self, id: u64) -> Result<Option<ScheduleRow>, Error> {
        self.ask(|reply| Request::Fetch { id, reply })
    }

    fn operator_actions(&mut self) -> Result<Vec<crate::store_rows::OperatorNote>, Error> {
        self.ask(Request::Actions)
    }

    /// One round trip that waits for no queued write: what the thread has not written yet is
    /// laid over what the database holds (`history_in_flight`). The ring is one column of the
    /// row (docs/schedules.md §13.54), read whole whatever `settled` is.
    fn history(
        &mut self,
        id: u64,
        _settled: u64,
    ) -> Result<Vec<crate::store_rows::HistoryRow>, Error> {
        let unwritten = self.history_in_flight.of(id, self.durable_behind());
        let mut rows = self.ask(|reply| Request::History { id, reply })?;
        history_in_flight::overlay(&mut rows, unwritten);
        Ok(rows)
    }

    fn row_by_key(&mut self, owner: crate::ObjId, key: &str) -> Result<Option<ScheduleRow>, Error> {
        let key = key.to_owned();
        self.ask(|reply| Request::FetchKey { owner, key, reply })
    }

    fn cluster_stats(&self) -> ClusterStats {
        self.mailbox.stats()
    }

    fn flush(&mut self) -> Result<(), Error> {
        self.ask(Request::Flush)
    }

    fn handed_behind(&self) -> u64 {
        self.handed
    }

    fn durable_behind(&self) -> u64 {
        // Only what the thread wrote. A thread that has died (it ends early only by panicking)
        // writes nothing more, so the firings waiting for its writes wait, as in an outage
        // (docs/schedules.md §11.16): starting them would run points no durable row records.
        self.mailbox.written()
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
