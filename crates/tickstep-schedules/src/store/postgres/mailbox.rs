//! The mailbox between a node's store thread and its engine (docs/schedules.md §11.26–§11.27):
//! rows the thread claimed and schedules another node took over wait here for the engine's next
//! tick, which takes them without waiting on I/O; the cluster counters live here too.
//!
//! Whenever the thread leaves something (claimed rows, lost schedules, operator stops) it calls
//! the host's waker, if the host registered one
//! ([`Schedules::set_store_waker`](crate::Schedules::set_store_waker)), so a host whose engine
//! has nothing due ticks it at once instead of at its next deadline (docs/schedules.md §11.40).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use crate::StoreWaker;
use crate::store::ClusterStats;
use crate::store_rows::ClaimedRow;

/// What the store thread leaves for the engine, and what it counts. Shared by the engine's
/// handle and the thread; the engine only ever takes from it, never waits on I/O for it.
#[derive(Default)]
pub(super) struct Mailbox {
    inbox: Mutex<Inbox>,
    /// The engine's wall clock at its last poll (Unix ns) and the moment it was noted: claims
    /// look ahead from it, moved on by the time since, so an engine that does not tick still
    /// claims what comes due (docs/schedules.md §11.40).
    engine_clock: Mutex<Option<(u64, Instant)>>,
    waker: Mutex<Option<StoreWaker>>,
    claimed: AtomicU64,
    refused_writes: AtomicU64,
    taken_over: AtomicU64,
    /// Write-behind batches committed so far, in the order they were sent (docs/schedules.md
    /// §11.42).
    written: AtomicU64,
    /// The same three counts through the `metrics` facade (docs/observability.md §1.12–§1.14).
    metrics: crate::metrics::ClusterMetrics,
}

#[derive(Default)]
struct Inbox {
    claimed: Vec<ClaimedRow>,
    lost: Vec<u64>,
    /// How many times the engine has taken what arrived: the stamp of its writes and the mark
    /// of each delivery (docs/schedules.md §11.56, `claim_marks.rs`).
    taken: u64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Mailbox {
    /// The engine's side: notes its clock and takes what arrived.
    pub(super) fn take(&self, now: u64, claimed: &mut Vec<ClaimedRow>, lost: &mut Vec<u64>) {
        *lock(&self.engine_clock) = Some((now, Instant::now()));
        let mut inbox = lock(&self.inbox);
        // Losses first: a row lost and claimed back later arrives in that order.
        lost.append(&mut inbox.lost);
        claimed.append(&mut inbox.claimed);
        inbox.taken += 1;
    }

    /// The engine's side: how many times it has taken what arrived, stamped on each batch it
    /// sends; a batch stamped at or below a claimed row's delivery was planned before the
    /// engine applied that claim (docs/schedules.md §11.56).
    pub(super) fn taken(&self) -> u64 {
        lock(&self.inbox).taken
    }

    pub(super) fn stats(&self) -> ClusterStats {
        ClusterStats {
            claimed: self.claimed.load(Ordering::Relaxed),
            refused_writes: self.refused_writes.load(Ordering::Relaxed),
            taken_over: self.taken_over.load(Ordering::Relaxed),
        }
    }

    pub(super) fn count_claimed(&self, rows: u64) {
        self.claimed.fetch_add(rows, Ordering::Relaxed);
        self.metrics.claimed(rows);
    }

    /// The thread's side: rows it claimed, for the engine's next tick; how many times the
    /// engine had taken what arrived before them (the next take is the one that brings them).
    pub(super) fn deliver(&self, rows: Vec<ClaimedRow>) -> u64 {
        self.count_claimed(rows.len() as u64);
        let taken = {
            let mut inbox = lock(&self.inbox);
            inbox.claimed.extend(rows);
            inbox.taken
        };
        self.wake();
        taken
    }

    /// The engine's wall clock now (Unix ns), as its last poll saw it plus the time since; 0
    /// before the first poll.
    pub(super) fn engine_now(&self) -> u64 {
        lock(&self.engine_clock).map_or(0, |(at, noted)| {
            let since = u64::try_from(noted.elapsed().as_nanos()).unwrap_or(u64::MAX);
            at.saturating_add(since)
        })
    }

    /// The host's side: who to call when something arrives.
    pub(super) fn set_waker(&self, waker: StoreWaker) {
        *lock(&self.waker) = Some(waker);
    }

    /// Calls the host's waker (outside the lock: it may take locks of its own).
    pub(super) fn wake(&self) {
        let waker = lock(&self.waker).clone();
        if let Some(waker) = waker {
            waker();
        }
    }

    /// The thread's side: `n` more write-behind batches are committed.
    pub(super) fn count_written(&self, n: usize) {
        self.written.fetch_add(n as u64, Ordering::Release);
    }

    /// Write-behind batches committed so far.
    pub(super) fn written(&self) -> u64 {
        self.written.load(Ordering::Acquire)
    }

    /// Counts `n` writes another node's claim refused.
    pub(super) fn count_refused(&self, n: u64) {
        self.refused_writes.fetch_add(n, Ordering::Relaxed);
        self.metrics.refused(n);
    }

    /// The thread's side: schedules whose rows are gone from under this node's fenced writes
    /// (docs/schedules.md §11.55), for the engine to drop as it drops lost ones; not counted as
    /// taken over, since a stop deletes rows too.
    pub(super) fn gone(&self, ids: Vec<u64>) {
        lock(&self.inbox).lost.extend(ids);
        self.wake();
    }

    /// The thread's side: schedules taken over by another node, for the engine to drop.
    pub(super) fn lose(&self, ids: Vec<u64>) {
        self.taken_over
            .fetch_add(ids.len() as u64, Ordering::Relaxed);
        self.metrics.taken_over(ids.len() as u64);
        lock(&self.inbox).lost.extend(ids);
        self.wake();
    }
}
