//! The five FIFO queues, one per priority.
//!
//! Each is a ring buffer (`VecDeque`) of slot indices: push and pop are O(1) with no shifting, the
//! Rust form of the seed's "array with a head index". Cancelling a queued task does not search the
//! queue; the slot is marked and skipped when its turn comes, and a per-queue counter keeps the
//! live depth exact.

use std::collections::VecDeque;

use crate::Priority;

pub(crate) struct Queues {
    queues: [VecDeque<u32>; 5],
    /// Cancelled entries still sitting in each queue.
    cancelled: [usize; 5],
}

impl Queues {
    pub(crate) fn new() -> Self {
        Queues {
            queues: Default::default(),
            cancelled: [0; 5],
        }
    }

    pub(crate) fn push(&mut self, priority: Priority, index: u32) {
        self.queues[priority.queue()].push_back(index);
    }

    pub(crate) fn front(&self, queue: usize) -> Option<u32> {
        self.queues[queue].front().copied()
    }

    pub(crate) fn pop(&mut self, queue: usize) -> Option<u32> {
        self.queues[queue].pop_front()
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

    pub(crate) fn note_cancelled(&mut self, priority: Priority) {
        self.cancelled[priority.queue()] += 1;
    }

    pub(crate) fn note_skipped(&mut self, queue: usize) {
        self.cancelled[queue] -= 1;
    }

    /// Indices still queued in `queue` and after it, for the deferred-origin scan.
    pub(crate) fn iter_from(&self, queue: usize) -> impl Iterator<Item = u32> + '_ {
        self.queues[queue..].iter().flat_map(|q| q.iter().copied())
    }

    pub(crate) fn clear(&mut self) {
        for q in &mut self.queues {
            q.clear();
        }
        self.cancelled = [0; 5];
    }
}
