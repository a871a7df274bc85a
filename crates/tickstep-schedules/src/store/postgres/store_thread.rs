//! The store thread: the one place the `PostgreSQL` connection is used (docs/schedules.md
//! §11.14–§11.16).
//!
//! The engine's thread sends [`Request`]s down a channel. A tick's cadence updates
//! ([`Request::Behind`]) are queued and the sender never waits: the thread drains everything that
//! has arrived and writes it in one transaction, so a slow round trip costs the frame nothing and
//! a burst of ticks becomes one commit. Everything else carries a reply channel and is answered in
//! order, after every queued write before it (a transaction's synced commit is therefore never
//! overtaken by — nor overtakes — an older tick's updates).
//!
//! A write that fails stays queued: the thread logs it, reconnects if the connection is gone, and
//! retries with a backoff doubling from 50 ms to 5 s, while the engine keeps running in memory. A
//! synced request meanwhile is answered with the error (nothing of it applied), and a flush
//! reports it. When the engine goes away the thread makes a last few attempts, hands its rows
//! back, then stops.
//!
//! Between requests, every third of the lease, the thread renews the node's lease and claims
//! what is claimable ([`pg_claims`](super::pg_claims)); writes are fenced with the fences it keeps.

use std::collections::{HashMap, HashSet, VecDeque};
use std::ops::RangeInclusive;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use postgres::Client;

use super::batch_writes::{Held, insert_rows, record_history, update_cadences};
use super::claim_marks::ClaimMarks;
use super::database_error;
use super::history_read::read_history;
use super::history_ring::Folded;
use super::mailbox::Mailbox;
use super::pg_codec::{self, CadenceColumns};
use super::stops::StopWatch;
use crate::Error;
use crate::store::answer::Answer;
use crate::store::codec::{from_sql, to_sql};
use crate::store_rows::{ChangeSet, ClaimedRow, HistoryRow, ScheduleRow};

/// Rows per message while loading.
const LOAD_CHUNK: usize = 1024;
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// Attempts to write what is still queued once the engine has gone.
const ATTEMPTS_AT_EXIT: u32 = 3;

/// What the engine asks of the store thread.
pub(super) enum Request {
    /// Stream every row, then the id high-water mark.
    Load(Sender<Loaded>),
    /// Take a block of ids from the database (a reply when it is committed).
    Reserve {
        next: u64,
        block: u64,
        reply: Sender<Result<RangeInclusive<u64>, Error>>,
    },
    /// Give back the unused end of this node's last block of ids, if no node took one since
    /// (docs/schedules.md §11.47); answers whether the mark was lowered.
    Release {
        last_used: u64,
        reserved_through: u64,
        reply: Sender<Result<bool, Error>>,
    },
    /// Write now, answer when committed: how many deletes existed. The engine blocks on the
    /// answer (`Txn::commit`) or awaits it (`Txn::commit_async`).
    Synced {
        changes: ChangeSet,
        /// [`Mailbox::taken`] as the engine sent it (docs/schedules.md §11.56).
        seen: u64,
        reply: Answer<Result<usize, Error>>,
    },
    /// Write behind: nobody waits. With [`Mailbox::taken`] as the engine sent it
    /// (docs/schedules.md §11.56).
    Behind(ChangeSet, u64),
    /// Read one schedule's row, whoever holds it, after writing what is queued.
    Fetch {
        id: u64,
        reply: Sender<Result<Option<ScheduleRow>, Error>>,
    },
    /// Read the row of an owner's schedule by its key, whoever holds it, after writing what is
    /// queued (docs/schedules.md §5.17).
    FetchKey {
        owner: crate::ObjId,
        key: String,
        reply: Sender<Result<Option<ScheduleRow>, Error>>,
    },
    /// Read every operator note that carries an action (docs/schedules.md §9.12).
    Actions(Sender<Result<Vec<crate::store_rows::OperatorNote>, Error>>),
    /// Read one schedule's history as the database holds it, ahead of the queued writes: the
    /// engine lays their records over the answer (docs/schedules.md §9.11).
    History {
        id: u64,
        reply: Sender<Result<Vec<HistoryRow>, Error>>,
    },
    /// Answer once everything queued before is written.
    Flush(Sender<Result<(), Error>>),
}

/// One message of a load.
pub(super) enum Loaded {
    Rows(Vec<ScheduleRow>),
    Done(u64),
    Failed(Error),
}

/// The thread's state.
pub(super) struct Worker {
    pub(super) client: Client,
    config: postgres::Config,
    /// This node's id (`owner_node` of the rows it holds).
    pub(super) node: i64,
    /// The engine's namespace: the only rows this node loads, claims and looks up, and where
    /// its creations go (docs/schedules.md §15.2).
    pub(super) namespace: crate::Namespace,
    pub(super) lease: Duration,
    /// The fence of every row this node holds, by schedule id.
    pub(super) fences: HashMap<u64, i64>,
    /// Schedules this node's own transactions stopped. An awaited commit lets the engine tick
    /// before it drops a stopped schedule (docs/schedules.md §11.41), so a tick's update for it
    /// may follow the delete: such a write is skipped, not counted as refused by a takeover.
    /// One id per stop; ids are never reused.
    stopped_here: HashSet<u64>,
    pub(super) mailbox: Arc<Mailbox>,
    /// When the lease is renewed and claims are made next.
    next_beat: Instant,
    /// When a renewal next samples what this node holds (docs/schedules.md §11.50).
    pub(super) next_sample: Instant,
    /// Write-behind batches not yet committed, oldest first, each with the engine's mailbox
    /// takes when it was sent.
    queue: VecDeque<(u64, ChangeSet)>,
    /// Rows claimed since the engine last took its mailbox: what older batches say of them is
    /// stale (docs/schedules.md §11.56).
    pub(super) claim_marks: ClaimMarks,
    columns: CadenceColumns,
    backoff: Duration,
    /// When a failed write is tried again.
    retry_at: Instant,
    stops: StopWatch,
    /// Write latency, failures and the batches left queued (docs/observability.md §1.9–§1.11).
    metrics: crate::metrics::StoreMetrics,
}

impl Worker {
    pub(super) fn new(
        client: Client,
        config: postgres::Config,
        stops: StopWatch,
        node: i64,
        namespace: crate::Namespace,
        lease: Duration,
        mailbox: Arc<Mailbox>,
    ) -> Self {
        Worker {
            client,
            config,
            node,
            namespace,
            lease,
            fences: HashMap::new(),
            stopped_here: HashSet::new(),
            mailbox,
            next_beat: Instant::now() + lease / 3,
            next_sample: Instant::now(),
            queue: VecDeque::new(),
            claim_marks: ClaimMarks::default(),
            columns: CadenceColumns::default(),
            backoff: FIRST_BACKOFF,
            retry_at: Instant::now(),
            stops,
            metrics: crate::metrics::StoreMetrics::register("postgres"),
        }
    }

    /// Renews the lease and claims, when a third of the lease has passed since the last time.
    fn beat_if_due(&mut self) {
        let now = Instant::now();
        if now < self.next_beat {
            return;
        }
        self.next_beat = now + self.lease / 3;
        if let Err(error) = self.beat() {
            tracing::warn!(%error, node = self.node,
                "PostgreSQL schedule store: could not renew this node's lease");
            return;
        }
        if let Err(error) = self.claim_due() {
            tracing::warn!(%error, node = self.node, "PostgreSQL schedule store: claiming failed");
        }
    }

    /// Serves requests until the engine hangs up, waking at least once per stop-poll interval
    /// to look for operator stops, once per lease third to renew the lease and claim, and at
    /// the backoff to retry a failed write.
    pub(super) fn run(mut self, requests: &Receiver<Request>) {
        loop {
            self.beat_if_due();
            let mut wake = self.stops.next_poll().min(self.next_beat);
            if !self.queue.is_empty() {
                wake = wake.min(self.retry_at);
            }
            match requests.recv_timeout(wake.saturating_duration_since(Instant::now())) {
                Ok(request) => {
                    self.serve(request);
                    // Everything that arrived meanwhile joins the same commit.
                    while let Ok(more) = requests.try_recv() {
                        self.serve(more);
                    }
                    if !self.queue.is_empty() {
                        self.retry_queue();
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    if !self.queue.is_empty() && Instant::now() >= self.retry_at {
                        self.retry_queue();
                    }
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
            self.poll_stops();
        }
        let mut written = false;
        for _ in 0..ATTEMPTS_AT_EXIT {
            if self.write_queue().is_ok() {
                written = true;
                break;
            }
            std::thread::sleep(self.backoff);
        }
        if !written {
            tracing::error!(
                batches = self.queue.len(),
                "PostgreSQL schedule store closed with cadence updates it could not write"
            );
        }
        if let Err(error) = self.release() {
            tracing::warn!(%error, node = self.node,
                "PostgreSQL schedule store: could not hand this node's schedules back; \
                 other nodes take them over once its lease runs out");
        }
    }

    /// Looks for operator stops if a poll is due. A failure (the connection is gone) waits for
    /// the next poll or write to reconnect; the notes are read again then.
    fn poll_stops(&mut self) {
        if self.client.is_closed() {
            return;
        }
        match self.stops.poll_if_due(&mut self.client) {
            // The engine drops them at its next tick: a host with nothing due ticks it now.
            Ok(found) if found > 0 => self.mailbox.wake(),
            Ok(_) => {}
            Err(error) => tracing::debug!(%error,
                "PostgreSQL schedule store: could not poll for operator stops"),
        }
    }

    fn serve(&mut self, request: Request) {
        match request {
            Request::Behind(changes, seen) => self.queue.push_back((seen, changes)),
            Request::Load(out) => self.load(&out),
            Request::Reserve { next, block, reply } => {
                let result = self.reserve(next, block);
                let _ = reply.send(result);
            }
            Request::Release {
                last_used,
                reserved_through,
                reply,
            } => {
                let result = self
                    .write_queue()
                    .and_then(|()| self.give_back_ids(last_used, reserved_through));
                let _ = reply.send(result);
            }
            Request::Synced {
                mut changes,
                seen,
                reply,
            } => {
                let result = self.write_queue().and_then(|()| {
                    let stale = self.claim_marks.strip(seen, &mut changes, false);
                    let removed = self.write(std::slice::from_ref(&changes), false)?;
                    self.claim_marks
                        .written(seen, stale, (self.node, &self.mailbox));
                    Ok(removed)
                });
                reply.send(result);
            }
            Request::Fetch { id, reply } => {
                let result = self.write_queue().and_then(|()| self.fetch(id));
                let _ = reply.send(result);
            }
            Request::FetchKey { owner, key, reply } => {
                let result = self
                    .write_queue()
                    .and_then(|()| self.fetch_key(owner, &key));
                let _ = reply.send(result);
            }
            Request::Actions(reply) => {
                let result = self
                    .reconnect_if_closed()
                    .and_then(|()| super::stops::operator_actions(&mut self.client));
                let _ = reply.send(result);
            }
            Request::History { id, reply } => {
                // Not after the queued writes: the engine lays their records over the answer.
                let result = self.history(id);
                let _ = reply.send(result);
            }
            Request::Flush(reply) => {
                let result = self.write_queue().and_then(|()| {
                    self.reconnect_if_closed()?;
                    self.stops.read_notes(&mut self.client).map(drop)
                });
                let _ = reply.send(result);
            }
        }
    }

    fn retry_queue(&mut self) {
        if let Err(error) = self.write_queue() {
            tracing::warn!(%error, batches = self.queue.len(), retry_in = ?self.backoff,
                "PostgreSQL schedule store: cadence updates kept in memory, retrying");
            self.retry_at = Instant::now() + self.backoff;
            self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// Writes every queued batch in one transaction; on failure they all stay queued.
    fn write_queue(&mut self) -> Result<(), Error> {
        if self.queue.is_empty() {
            return Ok(());
        }
        let (stamps, mut batches): (Vec<u64>, Vec<ChangeSet>) = self.queue.drain(..).unzip();
        let stale: usize = stamps
            .iter()
            .zip(&mut batches)
            .map(|(&seen, changes)| self.claim_marks.strip(seen, changes, true))
            .sum();
        let started = Instant::now();
        let written = self.write(&batches, true);
        self.metrics
            .wrote(batches.len(), started.elapsed(), written.is_ok());
        match written {
            Ok(_) => {
                // The engine starts the firings these carry (docs/schedules.md §11.42).
                self.mailbox.count_written(batches.len());
                self.backoff = FIRST_BACKOFF;
                let last = stamps.last().copied().unwrap_or(0);
                self.claim_marks
                    .written(last, stale, (self.node, &self.mailbox));
                Ok(())
            }
            Err(e) => {
                self.queue.extend(stamps.into_iter().zip(batches));
                Err(e)
            }
        }
    }

    /// Writes `batches` in order, in one transaction; how many deletes existed. A connection
    /// found dead by the attempt is replaced, and a transaction the server aborted for a
    /// serialization failure or a deadlock is retried, once more at once (a write is safe to
    /// repeat: inserts are upserts, updates whole states, deletes by id — a retried write is
    /// the same firing recorded once, never a second one). `fenced_deletes`: deletes are
    /// retirements written behind the tick, made only while this node holds the row; otherwise
    /// they are a transaction's stops, made whoever holds it.
    fn write(&mut self, batches: &[ChangeSet], fenced_deletes: bool) -> Result<usize, Error> {
        match self.write_once(batches, fenced_deletes) {
            Err(e) if self.client.is_closed() || connection_lost(&e) => {
                tracing::info!(error = %e, "PostgreSQL schedule store: connection lost, reconnecting");
                self.reconnect()?;
                self.write_once(batches, fenced_deletes)
            }
            Err(e) if must_retry(&e) => {
                tracing::debug!(error = %e, "PostgreSQL schedule store: write retried");
                self.write_once(batches, fenced_deletes)
            }
            result => result,
        }
    }

    fn write_once(&mut self, batches: &[ChangeSet], fenced_deletes: bool) -> Result<usize, Error> {
        let context = "writing schedules";
        self.reconnect_if_closed()?;
        let node = self.node;
        let mut tx = self.client.transaction().map_err(database_error(context))?;
        let mut removed = 0;
        // Rows whose write another node's claim refused; rows this node no longer holds.
        let mut refused: Vec<u64> = Vec::new();
        let mut gone: Vec<u64> = Vec::new();
        // Rows a cadence update found deleted by someone else (docs/schedules.md §11.55).
        let mut vanished: Vec<u64> = Vec::new();
        for changes in batches {
            let mut folded = Folded::new(&changes.history, changes.updates.iter().map(|u| u.0));
            let held = Held {
                fences: &self.fences,
                stopped_here: &self.stopped_here,
                node,
            };
            update_cadences(
                &mut tx,
                &mut self.columns,
                &held,
                changes,
                &mut folded,
                (&mut refused, &mut vanished),
            )?;
            if !changes.deletes.is_empty() {
                let n = if fenced_deletes {
                    let (mut ids, mut fences) = (Vec::new(), Vec::new());
                    for id in &changes.deletes {
                        match self.fences.get(id) {
                            Some(&fence) => {
                                ids.push(to_sql(*id));
                                fences.push(fence);
                            }
                            None if self.stopped_here.contains(id) => {}
                            None => refused.push(*id),
                        }
                    }
                    let n = tx
                        .execute(pg_codec::DELETE_FENCED, &[&ids, &fences, &node])
                        .map_err(database_error(context))?;
                    if usize::try_from(n).unwrap_or(usize::MAX) < ids.len() {
                        for row in tx
                            .query(pg_codec::TAKEN_OVER, &[&ids, &fences, &node])
                            .map_err(database_error(context))?
                        {
                            refused.push(from_sql(row.get(0)));
                        }
                    }
                    n
                } else {
                    // A transaction's stops: whoever holds the row, and a note for the holder
                    // (docs/schedules.md §11.21, §11.30); this engine has dropped its own already.
                    let ids: Vec<i64> = changes.deletes.iter().map(|&id| to_sql(id)).collect();
                    let deleted: Vec<i64> = tx
                        .query(pg_codec::DELETE, &[&ids])
                        .map_err(database_error(context))?
                        .iter()
                        .map(|r| r.get(0))
                        .collect();
                    if !deleted.is_empty() {
                        tx.execute(pg_codec::NOTE_STOPS, &[&deleted, &to_sql(unix_now())])
                            .map_err(database_error(context))?;
                        tx.execute(pg_codec::NOTIFY_STOPS, &[&deleted])
                            .map_err(database_error(context))?;
                    }
                    u64::try_from(deleted.len()).unwrap_or(u64::MAX)
                };
                removed += usize::try_from(n).unwrap_or(usize::MAX);
                gone.extend_from_slice(&changes.deletes);
            }
            record_history(
                &mut tx,
                (&self.fences, node),
                (&folded.rest, &changes.deletes),
                &changes.history,
            )?;
            // After the deletes: a transaction that stops a keyed schedule and creates one under
            // the same key frees the key first (docs/schedules.md §5.16).
            insert_rows(
                &mut tx,
                &changes.inserts,
                (node, self.namespace.as_str()),
                &mut self.fences,
            )?;
        }
        tx.commit().map_err(database_error(context))?;
        if !fenced_deletes {
            for changes in batches {
                self.stopped_here.extend(&changes.deletes);
            }
        }
        self.refused(&refused);
        for id in gone {
            self.fences.remove(&id);
        }
        if !vanished.is_empty() {
            for id in &vanished {
                self.fences.remove(id);
            }
            self.mailbox.gone(vanished);
        }
        Ok(removed)
    }

    /// Takes the next `block` ids from the database's counter (never below `next`, so one
    /// engine's ids keep rising): the row lock makes concurrent reservations by other nodes wait
    /// and then take the block after, so no two nodes ever get the same id, and the counter is
    /// committed before any id of the block is used (docs/schedules.md §11.18).
    fn reserve(&mut self, next: u64, block: u64) -> Result<RangeInclusive<u64>, Error> {
        let context = "reserving schedule ids";
        self.reconnect_if_closed()?;
        let end: i64 = self
            .client
            .query_one(
                "UPDATE tickstep_meta SET value = GREATEST(value, $1) + $2 \
                 WHERE key = 'id_high_water' RETURNING value",
                &[&to_sql(next.saturating_sub(1)), &to_sql(block)],
            )
            .map_err(database_error(context))?
            .get(0);
        let end = from_sql(end);
        Ok(end.saturating_sub(block) + 1..=end)
    }

    fn give_back_ids(&mut self, last_used: u64, reserved_through: u64) -> Result<bool, Error> {
        let context = "giving back unused schedule ids";
        self.reconnect_if_closed()?;
        let lowered = self
            .client
            .execute(
                "UPDATE tickstep_meta SET value = $1 WHERE key = 'id_high_water' AND value = $2",
                &[&to_sql(last_used), &to_sql(reserved_through)],
            )
            .map_err(database_error(context))?;
        Ok(lowered == 1)
    }

    fn load(&mut self, out: &Sender<Loaded>) {
        let result = (|| -> Result<u64, Error> {
            let context = "loading schedules";
            let high_water: i64 = self
                .client
                .query_one(
                    "SELECT value FROM tickstep_meta WHERE key = 'id_high_water'",
                    &[],
                )
                .map_err(database_error(context))?
                .get(0);
            // Opening claims every row nobody holds (or whose holder's lease ran out), whatever
            // its deadline: what a restart or a takeover resumes. Rows live nodes hold stay
            // theirs.
            let everything = i64::MAX;
            let lapsed = self.lapsed_nodes()?;
            let namespace = self.namespace.as_str();
            let params: [&(dyn postgres::types::ToSql + Sync); 5] =
                [&self.node, &everything, &None::<i64>, &namespace, &lapsed];
            let rows = self
                .client
                .query_raw(super::cluster_log::load_sql(), params.iter().copied())
                .map_err(database_error(context))?;
            let mut chunk = Vec::with_capacity(LOAD_CHUNK);
            let mut rows = rows;
            let mut claimed = 0u64;
            // Rows a node whose lease ran out held with firings in flight: those firings were
            // that node's, so they go the way of every claim (settled as taken over as `open`
            // returns, docs/schedules.md §11.39), not back to this host as its own interrupted
            // firings (docs/schedules.md §11.5), which rows nobody held still are.
            let mut taken_over = Vec::new();
            while let Some(row) = postgres::fallible_iterator::FallibleIterator::next(&mut rows)
                .map_err(database_error(context))?
            {
                let decoded =
                    pg_codec::decode(&row).map_err(|source| Error::Database { context, source })?;
                let fence: i64 = row
                    .try_get(pg_codec::FENCE_COLUMN)
                    .map_err(database_error(context))?;
                self.fences.insert(decoded.id, fence);
                let was: Option<i64> = row
                    .try_get(pg_codec::PREVIOUS_HOLDER_COLUMN)
                    .map_err(database_error(context))?;
                // A resumed node's own rows are its own (docs/schedules.md §11.49).
                let other = was.filter(|node| *node != self.node);
                if let Some(node) = other.filter(|_| !decoded.cadence.running.is_empty()) {
                    taken_over.push(ClaimedRow {
                        row: decoded,
                        from_node: u64::try_from(node).ok(),
                    });
                    continue;
                }
                claimed += 1;
                chunk.push(decoded);
                if chunk.len() == LOAD_CHUNK {
                    let full = std::mem::replace(&mut chunk, Vec::with_capacity(LOAD_CHUNK));
                    if out.send(Loaded::Rows(full)).is_err() {
                        return Ok(0); // the engine stopped listening
                    }
                }
            }
            if !chunk.is_empty() {
                let _ = out.send(Loaded::Rows(chunk));
            }
            self.mailbox.count_claimed(claimed);
            if !taken_over.is_empty() {
                self.mailbox.deliver(taken_over);
            }
            Ok(from_sql(high_water))
        })();
        let _ = out.send(match result {
            Ok(high_water) => Loaded::Done(high_water),
            Err(e) => Loaded::Failed(e),
        });
    }

    /// Schedule `id`'s history as the database holds it now, newest first.
    fn history(&mut self, id: u64) -> Result<Vec<HistoryRow>, Error> {
        self.reconnect_if_closed()?;
        read_history(&mut self.client, id, super::pg_schema::CURRENT_VERSION)
    }

    /// Schedule `id`'s row as the database holds it now.
    fn fetch(&mut self, id: u64) -> Result<Option<ScheduleRow>, Error> {
        self.fetch_where(
            "id = $1",
            &[&to_sql(id)],
            "reading a schedule held elsewhere",
        )
    }

    /// The row `condition` selects (at most one), as the database holds it now.
    pub(super) fn fetch_where(
        &mut self,
        condition: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
        context: &'static str,
    ) -> Result<Option<ScheduleRow>, Error> {
        self.reconnect_if_closed()?;
        // Another namespace's row is not there for this node (docs/schedules.md §15.2): the
        // namespace is the parameter after the condition's.
        let namespace = self.namespace.as_str();
        let mut all = params.to_vec();
        all.push(&namespace);
        let row = self
            .client
            .query_opt(
                &format!(
                    "{} WHERE ({condition}) AND namespace = ${}",
                    pg_codec::select_all(),
                    all.len()
                ),
                &all,
            )
            .map_err(database_error(context))?;
        row.map(|r| pg_codec::decode(&r).map_err(|source| Error::Database { context, source }))
            .transpose()
    }

    pub(super) fn reconnect_if_closed(&mut self) -> Result<(), Error> {
        if self.client.is_closed() {
            tracing::info!("PostgreSQL schedule store: reconnecting");
            self.reconnect()?;
        }
        Ok(())
    }

    /// Replaces the connection.
    fn reconnect(&mut self) -> Result<(), Error> {
        self.client = self
            .config
            .connect(postgres::NoTls)
            .map_err(database_error("reconnecting to PostgreSQL"))?;
        Ok(())
    }
}

/// The wall clock in Unix nanoseconds (for pruning the notes a stop leaves).
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Whether the server aborted the transaction for a serialization failure (`40001`) or a
/// deadlock (`40P01`): nothing of it was applied, and running it again is the remedy.
fn must_retry(e: &Error) -> bool {
    let Error::Database { source, .. } = e else {
        return false;
    };
    source
        .downcast_ref::<postgres::Error>()
        .and_then(postgres::Error::code)
        .is_some_and(|code| matches!(code.code(), "40001" | "40P01"))
}

/// Whether `e` says the session is gone (closed socket, or the server ending it: an
/// administrator's termination, a shutdown, a connection exception), so a fresh connection may
/// succeed where this one cannot.
fn connection_lost(e: &Error) -> bool {
    let Error::Database { source, .. } = e else {
        return false;
    };
    let Some(pg) = source.downcast_ref::<postgres::Error>() else {
        return false;
    };
    pg.is_closed()
        || pg.code().is_some_and(|code| {
            let code = code.code();
            code.starts_with("08") || code.starts_with("57P")
        })
}
