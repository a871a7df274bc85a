//! WAL checkpoints off the tick (docs/schedules.md §11.34).
//!
//! SQLite's automatic checkpoint runs inside the commit that crosses 1,000 WAL pages: that commit
//! copies the pages into the database file and fsyncs it, which stalls the tick that made it by
//! milliseconds to tens of milliseconds — long enough to overrun a 60 fps frame. The engine's
//! connection therefore never checkpoints; a thread of the store's own, on a second connection,
//! runs a `PASSIVE` checkpoint after commits instead (a passive checkpoint never blocks the writer
//! and never waits for it). At most one checkpoint runs per [`PAUSE`], so a busy store fsyncs a few
//! times a second, as it did with the automatic checkpoint, not once per tick.

use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender, TrySendError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::Connection;

/// The least time between two checkpoints: the WAL grows by at most what a store commits in it.
const PAUSE: Duration = Duration::from_millis(250);

/// The checkpointing thread of one open store; dropping it ends the thread and joins it.
pub(crate) struct Checkpointer {
    /// Holds at most one wake-up: a commit while one is pending adds nothing.
    wake: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Opens a second connection to the store at `path` and starts the thread on it; `None`
    /// (with a warning) when either fails, and the caller keeps SQLite's automatic checkpoint.
    pub(crate) fn start(path: &Path, busy_timeout: Duration) -> Option<Self> {
        let conn = match Connection::open(path).and_then(|conn| {
            conn.busy_timeout(busy_timeout)?;
            conn.pragma_update(None, "mmap_size", 0)?; // as the engine's connection
            Ok(conn)
        }) {
            Ok(conn) => conn,
            Err(error) => {
                tracing::warn!(%error, "no checkpoint connection; commits will checkpoint the WAL");
                return None;
            }
        };
        let (wake, woken) = mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("tickstep-sqlite-checkpoint".into())
            .spawn(move || {
                crate::store::background::yield_cpu_to_the_engine();
                run(&conn, &woken);
            });
        match thread {
            Ok(thread) => Some(Checkpointer {
                wake: Some(wake),
                thread: Some(thread),
            }),
            Err(error) => {
                tracing::warn!(%error, "no checkpoint thread; commits will checkpoint the WAL");
                None
            }
        }
    }

    /// Tells the thread the store committed: one non-blocking channel send, nothing when a
    /// wake-up is already pending.
    pub(crate) fn committed(&self) {
        if let Some(wake) = &self.wake {
            committed(wake);
        }
    }

    /// A way to tell the thread about commits from another thread (the store's writer, which
    /// commits behind the tick, docs/schedules.md §11.35).
    pub(crate) fn waker(&self) -> Option<CheckpointWaker> {
        self.wake.clone().map(CheckpointWaker)
    }
}

/// [`Checkpointer::committed`] for another thread. The checkpoint thread ends when every sender
/// is gone, so a waker must be dropped before its [`Checkpointer`] is (the store's writer, which
/// holds one, closes first).
pub(crate) struct CheckpointWaker(SyncSender<()>);

impl CheckpointWaker {
    /// As [`Checkpointer::committed`].
    pub(crate) fn committed(&self) {
        committed(&self.0);
    }
}

fn committed(wake: &SyncSender<()>) {
    if let Err(TrySendError::Disconnected(())) = wake.try_send(()) {
        tracing::warn!("the SQLite checkpoint thread has stopped; the WAL will grow");
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.wake = None; // disconnects: the thread ends its pause at once and returns
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The thread: a checkpoint after a wake-up, then a [`PAUSE`] in which further wake-ups are
/// gathered into the next checkpoint. Closing the store ends it at once: the engine's
/// connection, closing last, checkpoints whatever is left.
fn run(conn: &Connection, woken: &mpsc::Receiver<()>) {
    let mut pending = false;
    loop {
        if !pending && woken.recv().is_err() {
            return;
        }
        checkpoint(conn);
        pending = false;
        let until = Instant::now() + PAUSE;
        loop {
            match woken.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(()) => pending = true,
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }
}

fn checkpoint(conn: &Connection) {
    if let Err(error) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
        tracing::warn!(%error, "a WAL checkpoint failed; the next commit retries it");
    }
}
