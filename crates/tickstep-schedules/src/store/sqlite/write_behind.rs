//! The `SQLite` store's cadence writes, behind the tick on a thread of their own
//! (docs/schedules.md §11.2, §11.35).
//!
//! A tick's group commit rewrites the cadence of every schedule that fired: tens of random B-tree
//! pages copied into the WAL, a few milliseconds of CPU at thousands of firings a second. On the
//! engine's thread that was most of a busy frame, and a frame that long is the one the operating
//! system preempts when cores are short. The tick therefore only hands its [`ChangeSet`] to this
//! thread, which writes everything that has arrived in one transaction, on a connection of its
//! own, as `PostgreSQL`'s store thread does (docs/schedules.md §11.15).
//!
//! The tick never wakes the thread while it is busy: after a write the thread pauses for
//! [`GATHER`] and only a flush or the close cuts that pause short, so what the ticks queue
//! meanwhile is one push under an uncontended lock, no system call, and the thread's own timer,
//! not the frame, decides when it runs next (docs/schedules.md §11.37). Only a tick that finds
//! the thread idle wakes it. After each write the thread tells the checkpointer
//! ([`CheckpointWaker`]), so that wake-up leaves the frame too.
//!
//! The engine's thread never waits for this thread while it holds nothing (docs/schedules.md
//! §11.51): the thread runs ten nice steps below the engine (docs/schedules.md §11.36), and on a
//! busy machine a thread that nice can be kept off the cores for a tenth of a second. So a tick that finds the
//! queue's lock held keeps its batch and hands it over with the next one
//! ([`WriteBehind::queue`]), and a write on the engine's own connection takes what is queued and
//! writes it there itself ([`WriteBehind::take_queued`]) unless the thread is in the middle of
//! writing.
//!
//! A write that fails stays queued and is retried, with a backoff doubling from 50 ms to 5 s; a
//! [`WriteBehind::flush`] tries at once and reports the failure. Closing (dropping) writes what
//! is queued, with a few attempts, before the engine's connection closes.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::checkpointer::CheckpointWaker;
use super::integrity::store_error;
use super::write::write_changes;
use crate::Error;
use crate::store::background::yield_cpu_to_the_engine;
use crate::store_rows::ChangeSet;

const FIRST_BACKOFF: Duration = Duration::from_millis(50);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// Attempts to write what is still queued when the store closes.
const ATTEMPTS_AT_CLOSE: u32 = 3;
/// How long the thread gathers ticks' changes after a write before the next one: about one
/// 60 fps frame, so a busy store writes about as often as it did in the tick, and a crash loses
/// at most about this much more (docs/schedules.md §11.37).
const GATHER: Duration = Duration::from_millis(15);
/// What the writer thread holds.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum Holds {
    /// Nothing, and it is waiting for work: the next batch wakes it.
    #[default]
    Idle,
    /// Nothing (it wrote what it took, and gathers or looks at the queue).
    Nothing,
    /// Batches it took and has not yet written (writing, or a write failed).
    Batches,
}

/// What the engine's thread and the writer share, under one lock that neither holds for long
/// (never while writing).
#[derive(Default)]
struct State {
    /// Batches handed over and not yet taken by the thread, oldest first.
    queue: VecDeque<ChangeSet>,
    /// What the thread is doing with the batches it took.
    thread: Holds,
    /// A flush waits: the thread writes at once and answers in `answer`.
    flush: bool,
    answer: Option<Result<(), Error>>,
    /// The store is closing: write what is queued and stop.
    closed: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Batches written so far (they are written in order): the engine reads it without the lock
    /// to start the firings whose update is durable (docs/schedules.md §11.42).
    written: AtomicU64,
    /// The thread waits on this one.
    work: Condvar,
    /// A flush waits on this one.
    answered: Condvar,
}

impl Shared {
    fn new() -> Self {
        Shared {
            state: Mutex::new(State::default()),
            written: AtomicU64::new(0),
            work: Condvar::new(),
            answered: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind: go on with it.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The writing thread of one open store; dropping it writes what is queued and joins it.
pub(crate) struct WriteBehind {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// Batches the engine's thread kept because the thread held the queue's lock when they were
    /// queued, oldest first: handed over before anything newer (docs/schedules.md §11.51).
    kept: VecDeque<ChangeSet>,
    /// The same handles as the thread's, for the batches the engine's thread writes itself.
    metrics: crate::metrics::StoreMetrics,
}

/// What [`WriteBehind::take_queued`] found.
pub(crate) enum Queued {
    /// Nothing queued, and the thread holds nothing: every batch handed over is written.
    Written,
    /// The batches queued, oldest first, taken from a thread that holds nothing: the caller
    /// writes them and reports with [`WriteBehind::wrote`] or [`WriteBehind::give_back`].
    Taken(Vec<ChangeSet>),
    /// The thread is writing batches it took (or retrying a failed write), or has stopped: only
    /// [`WriteBehind::flush`] can tell when they are written.
    Held,
}

impl WriteBehind {
    /// Opens a second connection to the store at `path`, set up as the engine's
    /// (`synchronous=NORMAL`, `wal_autocheckpoint` as `autocheckpoint` says), and starts the
    /// thread on it; `None` (with a warning) when either fails, and the caller writes on its own
    /// thread as before. After each write the thread tells `checkpoints`.
    pub(crate) fn start(
        path: &Path,
        namespace: crate::Namespace,
        busy_timeout: Duration,
        checkpoints: Option<CheckpointWaker>,
    ) -> Option<Self> {
        let conn = Connection::open(path).and_then(|conn| {
            conn.busy_timeout(busy_timeout)?;
            conn.pragma_update(None, "mmap_size", 0)?; // as the engine's connection
            conn.pragma_update(None, "synchronous", "NORMAL")?;
            if checkpoints.is_some() {
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
        let shared = Arc::new(Shared::new());
        let writer = Writer {
            conn,
            namespace,
            path: path.to_path_buf(),
            shared: Arc::clone(&shared),
            checkpoints,
            pending: VecDeque::new(),
            backoff: FIRST_BACKOFF,
            retry_at: None,
            buf: String::new(),
            metrics: crate::metrics::StoreMetrics::register("sqlite"),
        };
        let thread = std::thread::Builder::new()
            .name("tickstep-sqlite-writer".into())
            .spawn(move || {
                yield_cpu_to_the_engine();
                writer.run();
            });
        match thread {
            Ok(thread) => Some(WriteBehind {
                shared,
                thread: Some(thread),
                kept: VecDeque::new(),
                metrics: crate::metrics::StoreMetrics::register("sqlite"),
            }),
            Err(error) => {
                tracing::warn!(%error, "no write-behind thread; ticks will write their cadence updates");
                None
            }
        }
    }

    /// Queues `changes` to be written behind the caller: a push under the lock, and a wake-up
    /// only when the thread is idle. Never waits for the lock: while the thread holds it (and
    /// may be descheduled holding it), the batch is kept and handed over, in order, by the next
    /// call, [`flush`](Self::flush), [`take_queued`](Self::take_queued) or the close
    /// (docs/schedules.md §11.51).
    ///
    /// # Errors
    ///
    /// The thread has stopped (it panicked): `changes` come back unqueued, for the caller to
    /// write.
    pub(crate) fn queue(&mut self, changes: ChangeSet) -> Result<(), ChangeSet> {
        if self.thread.as_ref().is_none_or(JoinHandle::is_finished) {
            return Err(changes);
        }
        self.kept.push_back(changes);
        let mut state = match self.shared.state.try_lock() {
            Ok(state) => state,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return Ok(()),
        };
        state.queue.extend(self.kept.drain(..));
        if state.thread == Holds::Idle {
            state.thread = Holds::Nothing;
            self.shared.work.notify_one();
        }
        Ok(())
    }

    /// For a write on the engine's own connection (docs/schedules.md §11.51): takes every batch
    /// queued when the thread holds none, so that the caller writes them itself, in order,
    /// instead of waiting for a thread that runs at a lower priority.
    pub(crate) fn take_queued(&mut self) -> Queued {
        if self.thread.as_ref().is_none_or(JoinHandle::is_finished) {
            return Queued::Held;
        }
        let mut state = lock_with_kept(&self.shared, &mut self.kept);
        if state.thread == Holds::Batches {
            return Queued::Held;
        }
        if state.queue.is_empty() {
            return Queued::Written;
        }
        Queued::Taken(state.queue.drain(..).collect())
    }

    /// The caller committed `batches` batches it took with [`take_queued`](Self::take_queued),
    /// in `elapsed`.
    pub(crate) fn wrote(&self, batches: usize, elapsed: Duration) {
        self.metrics.wrote(batches, elapsed, true);
        self.shared
            .written
            .fetch_add(batches as u64, Ordering::Release);
    }

    /// The caller could not write what it took with [`take_queued`](Self::take_queued): the
    /// batches go back to the front of the queue, for the thread to retry.
    pub(crate) fn give_back(&mut self, batches: Vec<ChangeSet>) {
        self.metrics.wrote(batches.len(), Duration::ZERO, false);
        let mut state = lock_with_kept(&self.shared, &mut self.kept);
        for batch in batches.into_iter().rev() {
            state.queue.push_front(batch);
        }
        if state.thread == Holds::Idle {
            state.thread = Holds::Nothing;
            self.shared.work.notify_one();
        }
    }

    /// How many batches are written (by the thread, or by the engine's thread after
    /// [`take_queued`](Self::take_queued)), in the order they were queued; once the thread
    /// has stopped, `queued` (what it held is lost, and nothing it would write ever comes).
    pub(crate) fn written(&self, queued: u64) -> u64 {
        if self.thread.as_ref().is_none_or(JoinHandle::is_finished) {
            return queued;
        }
        self.shared.written.load(Ordering::Acquire)
    }

    /// Waits until everything queued so far is written.
    ///
    /// # Errors
    ///
    /// The error of the write that failed (what failed stays queued and is retried), or
    /// [`Error::Store`] when the thread has stopped.
    pub(crate) fn flush(&mut self) -> Result<(), Error> {
        let mut state = lock_with_kept(&self.shared, &mut self.kept);
        if state.queue.is_empty() && state.thread != Holds::Batches {
            // Everything handed over is written: no round trip to the (lower-priority) thread,
            // so a creation never waits for it to be scheduled.
            return Ok(());
        }
        state.flush = true;
        state.answer = None;
        self.shared.work.notify_one();
        loop {
            if let Some(answer) = state.answer.take() {
                return answer;
            }
            if self.thread.as_ref().is_none_or(JoinHandle::is_finished) {
                return Err(thread_gone());
            }
            // Bounded, so that a thread that died meanwhile is noticed.
            state = self
                .shared
                .answered
                .wait_timeout(state, Duration::from_millis(100))
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
    }
}

/// The queue's lock, once the batches the engine's thread `kept` are queued behind what the
/// thread already has.
fn lock_with_kept<'a>(shared: &'a Shared, kept: &mut VecDeque<ChangeSet>) -> MutexGuard<'a, State> {
    let mut state = shared.lock();
    state.queue.extend(kept.drain(..));
    state
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
        lock_with_kept(&self.shared, &mut self.kept).closed = true;
        self.shared.work.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The thread's state.
struct Writer {
    conn: Connection,
    /// The engine's namespace, for the creations a batch may hold (docs/schedules.md §15.2).
    namespace: crate::Namespace,
    path: std::path::PathBuf,
    shared: Arc<Shared>,
    checkpoints: Option<CheckpointWaker>,
    /// Batches taken from the queue and not yet written (a failed write), oldest first.
    pending: VecDeque<ChangeSet>,
    backoff: Duration,
    /// When a failed write is tried again; `None` while nothing failed.
    retry_at: Option<Instant>,
    buf: String,
    /// Write latency, failures and the batches left queued (docs/observability.md §1.9–§1.11).
    metrics: crate::metrics::StoreMetrics,
}

/// What woke the thread.
struct Woken {
    flush: bool,
    closed: bool,
}

impl Writer {
    fn run(mut self) {
        loop {
            let woken = self.wait_for_work();
            let result = if woken.flush || self.retry_at.is_none_or(|at| Instant::now() >= at) {
                self.write_pending()
            } else {
                Ok(()) // backing off
            };
            if woken.flush {
                self.shared.lock().answer = Some(result);
                self.shared.answered.notify_all();
            }
            if woken.closed {
                break;
            }
            self.gather();
        }
        for attempt in 1..=ATTEMPTS_AT_CLOSE {
            self.take_queue();
            if self.write_pending().is_ok() {
                return;
            }
            if attempt < ATTEMPTS_AT_CLOSE {
                std::thread::sleep(self.backoff);
            }
        }
        tracing::error!(
            batches = self.pending.len(),
            "SQLite schedule store closed with cadence updates it could not write"
        );
    }

    /// Sleeps until there is something to write (or a failed write's retry is due), a flush,
    /// or the close; takes what was queued.
    fn wait_for_work(&mut self) -> Woken {
        let shared = Arc::clone(&self.shared);
        let mut state = shared.lock();
        loop {
            if state.flush || state.closed {
                break;
            }
            let now = Instant::now();
            match self.retry_at {
                Some(at) if now >= at => break,
                Some(at) => {
                    state = shared
                        .work
                        .wait_timeout(state, at - now)
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .0;
                }
                None if !state.queue.is_empty() || !self.pending.is_empty() => break,
                None => {
                    state.thread = Holds::Idle;
                    state = shared
                        .work
                        .wait(state)
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                }
            }
        }
        let woken = Woken {
            flush: std::mem::take(&mut state.flush),
            closed: state.closed,
        };
        self.take_from(&mut state);
        woken
    }

    /// After a write: [`GATHER`] while the ticks queue without waking the thread; a flush or
    /// the close ends it early.
    fn gather(&self) {
        let until = Instant::now() + GATHER;
        let mut state = self.shared.lock();
        while !state.flush && !state.closed {
            let now = Instant::now();
            if now >= until {
                return;
            }
            state = self
                .shared
                .work
                .wait_timeout(state, until - now)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
    }

    fn take_queue(&mut self) {
        let shared = Arc::clone(&self.shared);
        self.take_from(&mut shared.lock());
    }

    /// Moves what the ticks queued behind what the thread already holds.
    fn take_from(&mut self, state: &mut State) {
        self.pending.extend(state.queue.drain(..));
        state.thread = if self.pending.is_empty() {
            Holds::Nothing
        } else {
            Holds::Batches
        };
    }

    /// Writes every pending batch, in order, in one transaction; on failure all stay pending.
    fn write_pending(&mut self) -> Result<(), Error> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let started = Instant::now();
        let written = write_changes(
            &self.conn,
            self.pending.iter(),
            self.namespace,
            &mut self.buf,
        );
        self.metrics
            .wrote(self.pending.len(), started.elapsed(), written.is_ok());
        match written {
            Ok(_) => {
                self.shared
                    .written
                    .fetch_add(self.pending.len() as u64, Ordering::Release);
                self.pending.clear();
                self.shared.lock().thread = Holds::Nothing;
                self.backoff = FIRST_BACKOFF;
                self.retry_at = None;
                if let Some(checkpoints) = &self.checkpoints {
                    checkpoints.committed();
                }
                Ok(())
            }
            Err(error) => {
                let error =
                    store_error(&self.path, "writing cadence updates behind the tick", error);
                tracing::warn!(%error, batches = self.pending.len(), "retrying");
                self.retry_at = Some(Instant::now() + self.backoff);
                self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
                Err(error)
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::mpsc;

    use super::*;

    impl WriteBehind {
        /// A writer whose thread never takes anything (as one the OS keeps off the cores would
        /// not) and ends after `lasts`, so a test that waits for it fails instead of hanging.
        pub(crate) fn stalled(lasts: Duration) -> Self {
            let shared = Arc::new(Shared::new());
            let watched = Arc::clone(&shared);
            let thread = std::thread::spawn(move || {
                let until = Instant::now() + lasts;
                let mut state = watched.lock();
                while !state.closed && Instant::now() < until {
                    let left = until.saturating_duration_since(Instant::now());
                    state = watched.work.wait_timeout(state, left).unwrap().0;
                }
            });
            WriteBehind {
                shared,
                thread: Some(thread),
                kept: VecDeque::new(),
                metrics: crate::metrics::StoreMetrics::register("sqlite"),
            }
        }
    }

    fn batch(id: u64) -> ChangeSet {
        ChangeSet {
            deletes: vec![id],
            ..ChangeSet::default()
        }
    }

    fn ids(batches: &[ChangeSet]) -> Vec<u64> {
        batches.iter().flat_map(|b| b.deletes.clone()).collect()
    }

    /// docs/schedules.md §11.51: while the writer thread holds the queue's lock, a tick's batch
    /// is kept, not waited for, and goes to the thread with the next one, in order.
    #[test]
    fn a_tick_never_waits_for_the_queues_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        // The tables a batch of deletes touches: a delete that finds no row forgets the
        // schedule's history (docs/schedules.md §9.11).
        Connection::open(&path)
            .unwrap()
            .execute_batch(
                "CREATE TABLE schedules (id INTEGER PRIMARY KEY);
                 CREATE TABLE firing_history (slot INTEGER, schedule_id INTEGER);",
            )
            .unwrap();
        let mut writer = WriteBehind::start(
            &path,
            crate::Namespace::DEFAULT,
            Duration::from_secs(5),
            None,
        )
        .expect("a writer thread");
        // Another thread holds the lock, as the writer thread does when it is descheduled
        // between taking the lock and letting it go; it lets go when told, or after a bound so
        // that a queue that waits for it fails the test rather than hanging it.
        let shared = Arc::clone(&writer.shared);
        let (release, released) = mpsc::channel::<()>();
        let (held, holding) = mpsc::channel::<()>();
        let holder = std::thread::spawn(move || {
            let _state = shared.lock();
            held.send(()).unwrap();
            let _ = released.recv_timeout(Duration::from_secs(30));
        });
        holding.recv().unwrap();
        writer.queue(batch(1)).unwrap();
        writer.queue(batch(2)).unwrap();
        assert_eq!(ids(writer.kept.make_contiguous()), [1, 2], "kept, in order");
        release.send(()).unwrap();
        holder.join().unwrap();
        writer.queue(batch(3)).unwrap();
        assert!(writer.kept.is_empty(), "handed over with the next batch");
        writer.flush().unwrap();
        assert_eq!(writer.written(3), 3);
    }

    /// docs/schedules.md §11.51: a write on the engine's connection takes what is queued while
    /// the thread holds nothing; while the thread is writing it must wait; what it could not
    /// write goes back in front.
    #[test]
    fn the_engine_takes_the_queue_from_a_thread_that_holds_nothing() {
        let mut writer = WriteBehind::stalled(Duration::from_secs(30));
        assert!(matches!(writer.take_queued(), Queued::Written));
        for id in 1..=3 {
            writer.queue(batch(id)).unwrap();
        }
        let Queued::Taken(taken) = writer.take_queued() else {
            panic!("a thread that holds nothing leaves the queue to the engine");
        };
        assert_eq!(ids(&taken), [1, 2, 3]);
        writer.queue(batch(4)).unwrap();
        writer.give_back(taken);
        assert_eq!(
            ids(writer.shared.lock().queue.make_contiguous()),
            [1, 2, 3, 4]
        );
        let Queued::Taken(taken) = writer.take_queued() else {
            panic!("still the engine's to write");
        };
        writer.wrote(taken.len(), Duration::ZERO);
        assert_eq!(writer.written(4), 4);
        writer.queue(batch(5)).unwrap();
        writer.shared.lock().thread = Holds::Batches;
        assert!(
            matches!(writer.take_queued(), Queued::Held),
            "a thread in the middle of a write is waited for"
        );
        writer.shared.lock().thread = Holds::Nothing;
    }
}
