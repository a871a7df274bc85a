//! The mailbox between a node's store thread and its engine (docs/schedules.md §11.26–§11.27):
//! rows the thread claimed and schedules another node took over wait here for the engine's next
//! tick, which takes them without waiting on I/O; the cluster counters live here too.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::row::ScheduleRow;
use crate::store::ClusterStats;

/// What the store thread leaves for the engine, and what it counts. Shared by the engine's
/// handle and the thread; the engine only ever takes from it, never waits on I/O for it.
#[derive(Default)]
pub(super) struct Mailbox {
    inbox: Mutex<Inbox>,
    /// The engine's wall clock at its last poll (Unix ns): claims look ahead from it.
    engine_now: AtomicU64,
    claimed: AtomicU64,
    refused_writes: AtomicU64,
    taken_over: AtomicU64,
    /// Write-behind batches committed so far, in the order they were sent (docs/schedules.md
    /// §11.38).
    written: AtomicU64,
}

#[derive(Default)]
struct Inbox {
    claimed: Vec<ScheduleRow>,
    lost: Vec<u64>,
}

impl Mailbox {
    /// The engine's side: notes its clock and takes what arrived.
    pub(super) fn take(&self, now: u64, claimed: &mut Vec<ScheduleRow>, lost: &mut Vec<u64>) {
        self.engine_now.store(now, Ordering::Relaxed);
        let mut inbox = self
            .inbox
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Losses first: a row lost and claimed back later arrives in that order.
        lost.append(&mut inbox.lost);
        claimed.append(&mut inbox.claimed);
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
    }

    /// The thread's side: rows it claimed, for the engine's next tick.
    pub(super) fn deliver(&self, rows: Vec<ScheduleRow>) {
        self.count_claimed(rows.len() as u64);
        let mut inbox = self
            .inbox
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        inbox.claimed.extend(rows);
    }

    /// The engine's wall clock at its last poll (Unix ns; 0 before the first).
    pub(super) fn engine_now(&self) -> u64 {
        self.engine_now.load(Ordering::Relaxed)
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
    }

    /// The thread's side: schedules taken over by another node, for the engine to drop.
    pub(super) fn lose(&self, ids: Vec<u64>) {
        self.taken_over
            .fetch_add(ids.len() as u64, Ordering::Relaxed);
        let mut inbox = self
            .inbox
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        inbox.lost.extend(ids);
    }
}
