//! The five FIFO queues, one per priority.
//!
//! Each is a ring buffer (`VecDeque`): push and pop are O(1) with no shifting, the Rust form of
//! the seed's "array with a head index". An entry is either a slot index (recurring jobs, due
//! timers, futures, entries: work that lives in the slab) or a one-shot `schedule()` closure
//! stored inline, which never touches the slab at all: that is the hot path, one push and one pop.
//!
//! Cancelling a queued task does not search the queue. A slot is marked cancelled in the slab; an
//! inline one-shot is named by its sequence number and recorded in a small set, checked only while
//! the set is non-empty. Either way the entry is skipped when its turn comes, and a per-queue
//! counter keeps the live depth exact. Whether a one-shot is still queued is a comparison: one-shots
//! leave a queue in sequence order, so one counter per queue says which have left.

use std::collections::{HashSet, VecDeque};
use std::panic::Location;

use crate::Priority;

/// A `schedule()` closure waiting in its queue.
pub(crate) struct OnceTask {
    pub(crate) seq: u64,
    pub(crate) body: Box<dyn FnOnce()>,
    pub(crate) origin: u32,
    pub(crate) location: &'static Location<'static>,
}

/// One queued task.
pub(crate) enum QueueEntry {
    /// Work that lives in the slab.
    Slot(u32),
    /// An inline one-shot.
    Once(OnceTask),
}

#[allow(clippy::struct_field_names)] // `queues` is the point of `Queues`
pub(crate) struct Queues {
    queues: [VecDeque<QueueEntry>; 5],
    /// Cancelled entries still sitting in each queue.
    cancelled: [usize; 5],
    /// One past the sequence number of the last one-shot that left each queue.
    left: [u64; 5],
    /// Sequence numbers of cancelled one-shots still queued.
    cancelled_once: HashSet<u64>,
    next_seq: u64,
}

impl Queues {
    pub(crate) fn new() -> Self {
        Queues {
            queues: Default::default(),
            cancelled: [0; 5],
            left: [0; 5],
            cancelled_once: HashSet::new(),
            next_seq: 0,
        }
    }

    pub(crate) fn push(&mut self, priority: Priority, index: u32) {
        self.queues[priority.queue()].push_back(QueueEntry::Slot(index));
    }

    /// Queues a one-shot; returns its sequence number.
    #[inline]
    pub(crate) fn push_once(
        &mut self,
        priority: Priority,
        body: Box<dyn FnOnce()>,
        origin: u32,
        location: &'static Location<'static>,
    ) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.queues[priority.queue()].push_back(QueueEntry::Once(OnceTask {
            seq,
            body,
            origin,
            location,
        }));
        seq
    }

    pub(crate) fn front(&self, queue: usize) -> Option<&QueueEntry> {
        self.queues[queue].front()
    }

    #[inline]
    pub(crate) fn pop(&mut self, queue: usize) -> Option<QueueEntry> {
        let entry = self.queues[queue].pop_front()?;
        if let QueueEntry::Once(task) = &entry {
            self.left[queue] = task.seq + 1;
        }
        Some(entry)
    }

    /// Whether a queued one-shot was cancelled (a set lookup only while any are).
    #[inline]
    pub(crate) fn once_cancelled(&self, seq: u64) -> bool {
        !self.cancelled_once.is_empty() && self.cancelled_once.contains(&seq)
    }

    /// Pops the front entry, known to be a cancelled one, and forgets it.
    pub(crate) fn pop_cancelled(&mut self, queue: usize) -> Option<QueueEntry> {
        let entry = self.pop(queue)?;
        if let QueueEntry::Once(task) = &entry {
            self.cancelled_once.remove(&task.seq);
        }
        self.cancelled[queue] -= 1;
        Some(entry)
    }

    /// Whether one-shot `seq`, queued in `queue`, is still waiting there.
    pub(crate) fn once_waiting(&self, queue: usize, seq: u64) -> bool {
        seq >= self.left[queue] && seq < self.next_seq && !self.once_cancelled(seq)
    }

    /// Whether one-shot `seq` had not left `queue` (used after destroy cleared the queues).
    pub(crate) fn once_never_left(&self, queue: usize, seq: u64) -> bool {
        seq >= self.left[queue]
    }

    /// Cancels a waiting one-shot. Returns whether it was waiting.
    pub(crate) fn cancel_once(&mut self, queue: usize, seq: u64) -> bool {
        if !self.once_waiting(queue, seq) {
            return false;
        }
        self.cancelled_once.insert(seq);
        self.cancelled[queue] += 1;
        true
    }

    /// Entries in `queue`, cancelled ones included (the drain's snapshot counts those too).
    pub(crate) fn len(&self, queue: usize) -> usize {
        self.queues[queue].len()
    }

    /// Live tasks in `queue`.
    pub(crate) fn live(&self, queue: usize) -> usize {
        self.queues[queue].len() - self.cancelled[queue]
    }

    /// Live tasks in `queue` and every queue after it: what a spent budget defers.
    pub(crate) fn live_from(&self, queue: usize) -> usize {
        (queue..5).map(|q| self.live(q)).sum()
    }

    pub(crate) fn any_live(&self) -> bool {
        (0..5).any(|q| self.live(q) > 0)
    }

    /// A slot cancelled while queued.
    pub(crate) fn note_cancelled(&mut self, priority: Priority) {
        self.cancelled[priority.queue()] += 1;
    }

    /// Entries still queued in `queue` and after it, for the deferred-origin scan.
    pub(crate) fn iter_from(&self, queue: usize) -> impl Iterator<Item = &QueueEntry> + '_ {
        self.queues[queue..].iter().flat_map(|q| q.iter())
    }

    /// Empties every queue (destroy). Returns the entries for the caller to drop unborrowed.
    pub(crate) fn clear(&mut self) -> Vec<QueueEntry> {
        let mut entries = Vec::new();
        for q in &mut self.queues {
            entries.extend(q.drain(..));
        }
        self.cancelled = [0; 5];
        self.cancelled_once.clear();
        entries
    }
}
