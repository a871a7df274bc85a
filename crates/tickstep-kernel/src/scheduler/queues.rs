//! The five FIFO queues, one per priority.
//!
//! Each is a ring buffer (`VecDeque`): push and pop are O(1) with no shifting, the Rust form of
//! the O(1) queues of docs/kernel.md §2.1. An entry is either a slot index (recurring jobs, due
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

/// A `schedule()` closure together with what the scheduler needs to know about it, in the
/// closure's own allocation (so a queue entry stays two words, like a bare `Box<dyn FnOnce()>`).
pub(crate) trait OnceTask {
    /// Runs the closure, consuming it, with panics caught. Hands back where it was scheduled and
    /// its profiler origin (or `NO_ORIGIN`): read for free here, since the closure's memory is
    /// being touched anyway, so the hot path makes no second virtual call for them.
    fn run(self: Box<Self>) -> OnceRun;
    /// Where it was scheduled, and its profiler origin (or `NO_ORIGIN`).
    fn meta(&self) -> (&'static Location<'static>, u32);
}

/// What running a [`OnceTask`] reports: its panic, if any, and its metadata.
pub(crate) type OnceRun = (
    Option<Box<dyn std::any::Any + Send>>,
    &'static Location<'static>,
    u32,
);

/// The one implementation of [`OnceTask`].
pub(crate) struct OnceFn<F> {
    pub(crate) f: F,
    pub(crate) location: &'static Location<'static>,
    pub(crate) origin: u32,
}

impl<F: FnOnce()> OnceTask for OnceFn<F> {
    #[inline]
    fn run(self: Box<Self>) -> OnceRun {
        let OnceFn {
            f,
            location,
            origin,
        } = *self;
        let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).err();
        (panic, location, origin)
    }

    fn meta(&self) -> (&'static Location<'static>, u32) {
        (self.location, self.origin)
    }
}

/// One queued task.
pub(crate) enum QueueEntry {
    /// Work that lives in the slab.
    Slot(u32),
    /// An inline one-shot.
    Once(Box<dyn OnceTask>),
}

#[allow(clippy::struct_field_names)] // `queues` is the point of `Queues`
pub(crate) struct Queues {
    queues: [VecDeque<QueueEntry>; 5],
    /// Cancelled entries still sitting in each queue.
    cancelled: [usize; 5],
    /// One-shots ever pushed to each queue: the next one's sequence number there.
    pushed: [u64; 5],
    /// One-shots that have left each queue. They leave in order, so the front-most one-shot of
    /// queue `q` is number `left[q]`, and one-shot `n` is still queued iff `n >= left[q]`.
    left: [u64; 5],
    /// Cancelled one-shots still queued, as `seq * 5 + queue`.
    cancelled_once: HashSet<u64>,
}

fn once_key(queue: usize, seq: u64) -> u64 {
    seq * 5 + queue as u64
}

impl Queues {
    pub(crate) fn new() -> Self {
        Queues {
            queues: Default::default(),
            cancelled: [0; 5],
            pushed: [0; 5],
            left: [0; 5],
            cancelled_once: HashSet::new(),
        }
    }

    pub(crate) fn push(&mut self, priority: Priority, index: u32) {
        self.queues[priority.queue()].push_back(QueueEntry::Slot(index));
    }

    /// Queues a one-shot; returns its sequence number within its queue.
    #[inline]
    pub(crate) fn push_once(&mut self, priority: Priority, task: Box<dyn OnceTask>) -> u64 {
        let queue = priority.queue();
        let seq = self.pushed[queue];
        self.pushed[queue] += 1;
        self.queues[queue].push_back(QueueEntry::Once(task));
        seq
    }

    /// The next `n` entries of `queue`, front first.
    pub(crate) fn ahead(&self, queue: usize, n: usize) -> impl Iterator<Item = &QueueEntry> {
        self.queues[queue].iter().take(n)
    }

    pub(crate) fn front(&self, queue: usize) -> Option<&QueueEntry> {
        self.queues[queue].front()
    }

    #[inline]
    pub(crate) fn pop(&mut self, queue: usize) -> Option<QueueEntry> {
        let entry = self.queues[queue].pop_front()?;
        if let QueueEntry::Once(_) = entry {
            self.left[queue] += 1;
        }
        Some(entry)
    }

    /// Whether the front-most one-shot of `queue` was cancelled (a set lookup only while any
    /// one-shot is cancelled).
    #[inline]
    pub(crate) fn front_once_cancelled(&self, queue: usize) -> bool {
        self.once_cancelled(queue, self.left[queue])
    }

    fn once_cancelled(&self, queue: usize, seq: u64) -> bool {
        !self.cancelled_once.is_empty() && self.cancelled_once.contains(&once_key(queue, seq))
    }

    /// Pops the front entry, known to be a cancelled one, and forgets it.
    pub(crate) fn pop_cancelled(&mut self, queue: usize) -> Option<QueueEntry> {
        if let Some(QueueEntry::Once(_)) = self.front(queue) {
            self.cancelled_once
                .remove(&once_key(queue, self.left[queue]));
        }
        let entry = self.pop(queue)?;
        self.cancelled[queue] -= 1;
        Some(entry)
    }

    /// Whether one-shot `seq` of `queue` is still waiting there.
    pub(crate) fn once_waiting(&self, queue: usize, seq: u64) -> bool {
        seq >= self.left[queue] && seq < self.pushed[queue] && !self.once_cancelled(queue, seq)
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
        self.cancelled_once.insert(once_key(queue, seq));
        self.cancelled[queue] += 1;
        true
    }

    /// The live entries of `queue` and every queue after it, for the deferred-origin scan.
    pub(crate) fn live_entries_from(&self, queue: usize) -> impl Iterator<Item = &QueueEntry> + '_ {
        (queue..5).flat_map(move |q| {
            let mut seq = self.left[q];
            self.queues[q].iter().filter(move |entry| match entry {
                QueueEntry::Slot(_) => true,
                QueueEntry::Once(_) => {
                    seq += 1;
                    !self.once_cancelled(q, seq - 1)
                }
            })
        })
    }

    /// Entries in `queue` and every queue after it, cancelled ones included.
    pub(crate) fn len_from(&self, queue: usize) -> usize {
        self.queues[queue..].iter().map(VecDeque::len).sum()
    }

    /// The entry `position` places from the front of `queue`, counting on through the queues
    /// after it (cancelled entries included). O(1) per queue.
    pub(crate) fn entry_from(&self, queue: usize, mut position: usize) -> Option<&QueueEntry> {
        for q in &self.queues[queue..] {
            if position < q.len() {
                return q.get(position);
            }
            position -= q.len();
        }
        None
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
