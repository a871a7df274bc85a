//! The `SQLite` store's cadence writes, behind the tick on a thread of their own
//! (docs/schedules.md §11.2, §11.35).
//!
//! A tick's group commit rewrites the cadence of every schedule that fired: tens of random B-tree
//! pages copied into the WAL, a few milliseconds of CPU at thousands of firings a second. On the
//! engine's thread that was most of a busy frame, and a frame that long is the one the operating
//! system preempts when cores are short. The tick therefore only hands its [`ChangeSet`] to this
//! thread, which writes everything that has arrived in one transaction, on a connection of its
//! own, as `PostgreSQL`'s store thread does (§11.14).
//!
//! A write that fails stays queued and is retried, with a backoff doubling from 50 ms to 5 s; a
//! [`WriteBehind::flush`] tries at once and reports the failure. Closing (dropping) writes what
//! is queued, with a few attempts, before the engine's connection closes.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::integrity::store_error;
use super::sqlite::write_changes;
use crate::Error;
use crate::row::ChangeSet;

const FIRST_BACKOFF: Duration = Duration::from_millis(50);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// Attempts to write what is still queued when the store closes.
const ATTEMPTS_AT_CLOSE: u32 = 3;
/// How much nicer than the engine's thread the store's background threads run
/// (docs/schedules.md §11.36).
const BACKGROUND_NICE_STEPS: i32 = 10;
/// The highest nice value Linux has.
const NICEST: i32 = 19;

/// Makes the calling thread [`BACKGROUND_NICE_STEPS`] nicer than it was (at most 19;
/// docs/schedules.md §11.36): the tick wakes the store's threads from inside a frame, and at the
/// engine's priority the woken thread takes the core from the frame that woke it. Linux keeps a
/// nice value per thread; elsewhere `setpriority` would lower the whole process, so nothing is
/// done.
pub(super) fn yield_cpu_to_the_engine() {
    #[cfg(target_os = "linux")]
    if let Err(error) = rustix::process::getpriority_process(None).and_then(|nice| {
        rustix::process::setpriority_process(None, (nice + BACKGROUND_NICE_STEPS).min(NICEST))
    }) {
        tracing::debug!(%error, "a store thread keeps the engine's CPU priority");
    }
}

enum Request {
    /// A tick's cadence updates and retirements; nobody waits.
    Behind(ChangeSet),
    /// Answer once everything queued before is written, or with the error that stopped it.
    Flush(Sender<Result<(), Error>>),
}

/// The writing thread of one open store; dropping it writes what is queued and joins it.
pub(crate) struct WriteBehind {
    requests: Option<Sender<Request>>,
    thread: Option<JoinHandle<()>>,
}

impl WriteBehind {
    /// Opens a second connection to the store at `path`, set up as the engine's
    /// (`synchronous=NORMAL`, `wal_autocheckpoint` as `autocheckpoint` says), and starts the
    /// thread on it; `None` (with a warning) when either fails, and the caller writes on its own
    /// thread as before.
    pub(crate) fn start(path: &Path, busy_timeout: Duration, autocheckpoint: bool) -> Option<Self> {
        let conn = Connection::open(path).and_then(|conn| {
            conn.busy_timeout(busy_timeout)?;
            conn.pragma_update(None, "synchronous", "NORMAL")?;
            if !autocheckpoint {
                conn.pragma_update(None, "wal_autocheckpoint", 0)?;
            }
            Ok(conn)
        });
        let conn = match conn {
            Ok(conn) => conn,
            Err(error) => {
                tracing::warn!(%error, "no write-behind connection; ticks will write their cadence updates");
                return None;
            }
        };
        let (requests, received) = mpsc::channel();
        let writer = Writer {
            conn,
            path: path.to_path_buf(),
            queue: VecDeque::new(),
            backoff: FIRST_BACKOFF,
            retry_at: Instant::now(),
            buf: String::new(),
        };
        let thread = std::thread::Builder::new()
            .name("tickstep-sqlite-writer".into())
            .spawn(move || {
                yield_cpu_to_the_engine();
                writer.run(&received);
            });
        match thread {
            Ok(thread) => Some(WriteBehind {
                requests: Some(requests),
                thread: Some(thread),
            }),
            Err(error) => {
                tracing::warn!(%error, "no write-behind thread; ticks will write their cadence updates");
                None
            }
        }
    }

    /// Queues `changes` to be written behind the caller: one channel send, never a wait. False
    /// when the thread has stopped (it panicked): nothing was queued, the caller writes.
    pub(crate) fn queue(&self, changes: &ChangeSet) -> bool {
        self.send(Request::Behind(changes.clone())).is_ok()
    }

    /// Waits until everything queued so far is written.
    ///
    /// # Errors
    ///
    /// The error of the write that failed (what failed stays queued and is retried), or
    /// [`Error::Store`] when the thread has stopped.
    pub(crate) fn flush(&self) -> Result<(), Error> {
        let (reply, answer) = mpsc::channel();
        self.send(Request::Flush(reply))?;
        answer.recv().map_err(|_| thread_gone())?
    }

    fn send(&self, request: Request) -> Result<(), Error> {
        self.requests
            .as_ref()
            .and_then(|requests| requests.send(request).ok())
            .ok_or_else(thread_gone)
    }
}

/// The thread stopped (it panicked) with what it had queued: those updates are lost, and a
/// flush must not say they were written.
fn thread_gone() -> Error {
    Error::Store {
        context: "waiting for the store's writer thread, which has stopped",
        source: rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ABORT),
            Some(
                "the SQLite store's writer thread stopped; cadence updates it held are lost".into(),
            ),
        ),
    }
}

impl Drop for WriteBehind {
    fn drop(&mut self) {
        drop(self.requests.take()); // hangs up: the thread writes what is queued and returns
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The thread's state.
struct Writer {
    conn: Connection,
    path: std::path::PathBuf,
    /// Batches not yet written, oldest first.
    queue: VecDeque<ChangeSet>,
    backoff: Duration,
    /// When a failed write is tried again.
    retry_at: Instant,
    buf: String,
}

impl Writer {
    /// Serves requests until the store hangs up: everything that has arrived joins one
    /// transaction; a failed one waits for its backoff, or for a flush.
    fn run(mut self, requests: &Receiver<Request>) {
        loop {
            let first = if self.queue.is_empty() {
                requests.recv().map_err(|_| RecvTimeoutError::Disconnected)
            } else {
                requests.recv_timeout(self.retry_at.saturating_duration_since(Instant::now()))
            };
            let mut flushes = Vec::new();
            match first {
                Ok(request) => {
                    for request in std::iter::once(request).chain(requests.try_iter()) {
                        match request {
                            Request::Behind(changes) => self.queue.push_back(changes),
                            Request::Flush(reply) => flushes.push(reply),
                        }
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if flushes.is_empty() {
                // While backing off, the timeout above brings the retry.
                if Instant::now() >= self.retry_at {
                    let _ = self.write_queue();
                }
            }
            // A flush tries at once, whatever the backoff; a second one after a success is free.
            for reply in flushes {
                let _ = reply.send(self.write_queue());
            }
        }
        for attempt in 1..=ATTEMPTS_AT_CLOSE {
            if self.write_queue().is_ok() {
                return;
            }
            if attempt < ATTEMPTS_AT_CLOSE {
                std::thread::sleep(self.backoff);
            }
        }
        tracing::error!(
            batches = self.queue.len(),
            "SQLite schedule store closed with cadence updates it could not write"
        );
    }

    /// Writes every queued batch, in order, in one transaction; on failure all stay queued.
    fn write_queue(&mut self) -> Result<(), Error> {
        if self.queue.is_empty() {
            return Ok(());
        }
        match write_changes(&self.conn, self.queue.iter(), &mut self.buf) {
            Ok(_) => {
                self.queue.clear();
                self.backoff = FIRST_BACKOFF;
                Ok(())
            }
            Err(error) => {
                let error =
                    store_error(&self.path, "writing cadence updates behind the tick", error);
                tracing::warn!(%error, batches = self.queue.len(), "retrying");
                self.retry_at = Instant::now() + self.backoff;
                self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
                Err(error)
            }
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// docs/schedules.md §11.36: the store's threads lower their own priority, and only theirs.
    #[test]
    fn a_store_thread_lowers_its_own_priority_and_not_the_process() {
        let before = rustix::process::getpriority_process(None).unwrap();
        let lowered = std::thread::spawn(|| {
            yield_cpu_to_the_engine();
            rustix::process::getpriority_process(None).unwrap()
        })
        .join()
        .unwrap();
        // Relative to the engine's: a test run under `nice -n 19` stays at 19, never above it.
        assert_eq!(lowered, (before + BACKGROUND_NICE_STEPS).min(NICEST));
        assert!(lowered >= before);
        assert_eq!(rustix::process::getpriority_process(None).unwrap(), before);
    }
}
