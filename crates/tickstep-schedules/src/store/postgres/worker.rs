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
//! reports it. When the engine goes away the thread makes a last few attempts, then stops.

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use postgres::Client;

use super::codec::{self, CadenceColumns};
use super::database_error;
use super::stops::StopWatch;
use crate::Error;
use crate::row::{ChangeSet, ScheduleRow};
use crate::store::codec::to_sql;

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
    /// Raise the id high-water mark (a reply when it is committed).
    Reserve {
        through: u64,
        reply: Sender<Result<(), Error>>,
    },
    /// Write now, answer when committed: how many deletes existed.
    Synced {
        changes: ChangeSet,
        reply: Sender<Result<usize, Error>>,
    },
    /// Write behind: nobody waits.
    Behind(ChangeSet),
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
    client: Client,
    config: postgres::Config,
    /// Write-behind batches not yet committed, oldest first.
    queue: VecDeque<ChangeSet>,
    columns: CadenceColumns,
    backoff: Duration,
    /// When a failed write is tried again.
    retry_at: Instant,
    stops: StopWatch,
}

impl Worker {
    pub(super) fn new(client: Client, config: postgres::Config, stops: StopWatch) -> Self {
        Worker {
            client,
            config,
            queue: VecDeque::new(),
            columns: CadenceColumns::default(),
            backoff: FIRST_BACKOFF,
            retry_at: Instant::now(),
            stops,
        }
    }

    /// Serves requests until the engine hangs up, waking at least once per stop-poll interval
    /// to look for operator stops, and at the backoff to retry a failed write.
    pub(super) fn run(mut self, requests: &Receiver<Request>) {
        loop {
            let mut wake = self.stops.next_poll();
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
        for _ in 0..ATTEMPTS_AT_EXIT {
            if self.write_queue().is_ok() {
                return;
            }
            std::thread::sleep(self.backoff);
        }
        tracing::error!(
            batches = self.queue.len(),
            "PostgreSQL schedule store closed with cadence updates it could not write"
        );
    }

    /// Looks for operator stops if a poll is due. A failure (the connection is gone) waits for
    /// the next poll or write to reconnect; the notes are read again then.
    fn poll_stops(&mut self) {
        if self.client.is_closed() {
            return;
        }
        if let Err(error) = self.stops.poll_if_due(&mut self.client) {
            tracing::debug!(%error, "PostgreSQL schedule store: could not poll for operator stops");
        }
    }

    fn serve(&mut self, request: Request) {
        match request {
            Request::Behind(changes) => self.queue.push_back(changes),
            Request::Load(out) => self.load(&out),
            Request::Reserve { through, reply } => {
                let result = self.reserve(through);
                let _ = reply.send(result);
            }
            Request::Synced { changes, reply } => {
                let result = self
                    .write_queue()
                    .and_then(|()| self.write(std::slice::from_ref(&changes)));
                let _ = reply.send(result);
            }
            Request::Flush(reply) => {
                let result = self.write_queue().and_then(|()| {
                    self.reconnect_if_closed()?;
                    self.stops.read_notes(&mut self.client)
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
        let batches: Vec<ChangeSet> = self.queue.drain(..).collect();
        match self.write(&batches) {
            Ok(_) => {
                self.backoff = FIRST_BACKOFF;
                Ok(())
            }
            Err(e) => {
                self.queue.extend(batches);
                Err(e)
            }
        }
    }

    /// Writes `batches` in order, in one transaction; how many deletes existed. A connection
    /// found dead by the attempt is replaced and the write tried once more at once (a write is
    /// safe to repeat: inserts are upserts, updates whole states, deletes by id).
    fn write(&mut self, batches: &[ChangeSet]) -> Result<usize, Error> {
        match self.write_once(batches) {
            Err(e) if self.client.is_closed() || connection_lost(&e) => {
                tracing::info!(error = %e, "PostgreSQL schedule store: connection lost, reconnecting");
                self.reconnect()?;
                self.write_once(batches)
            }
            result => result,
        }
    }

    fn write_once(&mut self, batches: &[ChangeSet]) -> Result<usize, Error> {
        let context = "writing schedules";
        self.reconnect_if_closed()?;
        let mut tx = self.client.transaction().map_err(database_error(context))?;
        let mut removed = 0;
        for changes in batches {
            if !changes.inserts.is_empty() {
                let stmt = tx
                    .prepare(codec::insert_sql())
                    .map_err(database_error(context))?;
                for row in &changes.inserts {
                    codec::insert(&mut tx, &stmt, row).map_err(database_error(context))?;
                }
            }
            if !changes.updates.is_empty() {
                self.columns.clear();
                for (id, cadence) in &changes.updates {
                    self.columns.push(*id, cadence);
                }
                tx.execute(codec::UPDATE_CADENCE, &self.columns.params())
                    .map_err(database_error(context))?;
            }
            if !changes.deletes.is_empty() {
                let ids: Vec<i64> = changes.deletes.iter().map(|&id| to_sql(id)).collect();
                let n = tx
                    .execute(codec::DELETE, &[&ids])
                    .map_err(database_error(context))?;
                removed += usize::try_from(n).unwrap_or(usize::MAX);
            }
        }
        tx.commit().map_err(database_error(context))?;
        Ok(removed)
    }

    fn reserve(&mut self, through: u64) -> Result<(), Error> {
        let context = "reserving schedule ids";
        self.reconnect_if_closed()?;
        self.client
            .execute(
                "UPDATE tickstep_meta SET value = GREATEST(value, $1) WHERE key = 'id_high_water'",
                &[&to_sql(through)],
            )
            .map(drop)
            .map_err(database_error(context))
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
            let rows = self
                .client
                .query_raw(codec::select_all().as_str(), std::iter::empty::<i64>())
                .map_err(database_error(context))?;
            let mut chunk = Vec::with_capacity(LOAD_CHUNK);
            let mut rows = rows;
            while let Some(row) = postgres::fallible_iterator::FallibleIterator::next(&mut rows)
                .map_err(database_error(context))?
            {
                chunk.push(
                    codec::decode(&row).map_err(|source| Error::Database { context, source })?,
                );
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
            Ok(crate::store::codec::from_sql(high_water))
        })();
        let _ = out.send(match result {
            Ok(high_water) => Loaded::Done(high_water),
            Err(e) => Loaded::Failed(e),
        });
    }

    fn reconnect_if_closed(&mut self) -> Result<(), Error> {
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
