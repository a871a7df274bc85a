//! Retention of retired entries (docs/schedules.md §8.1).
//!
//! A retired entry stays in the table for [`Config::retention`](crate::Config) (60 s) so that
//! `schedule_info` can say why it ended; meanwhile it is not valid, not listed, not armed, and
//! still a GC root. Entries retire in time order, so a FIFO of (drop time, id) finds the expired
//! ones in O(1) each. Lookups also treat an entry past its drop time as gone, so a driver that
//! sleeps through the sweep never shows a stale entry.

use std::collections::VecDeque;

use super::entry::Entry;

/// The retired entries still kept, in retirement order, and how long each is kept.
pub(super) struct Retention {
    /// [`Config::retention`](crate::Config) in nanoseconds.
    ns: u64,
    /// (drop at, id), oldest first.
    queue: VecDeque<(u64, u64)>,
}

impl Retention {
    pub(super) fn new(ns: u64) -> Self {
        Retention {
            ns,
            queue: VecDeque::new(),
        }
    }

    /// Keeps `id`, retired at `now`, for the retention period.
    #[inline]
    pub(super) fn keep(&mut self, id: u64, now: u64) {
        self.queue.push_back((now.saturating_add(self.ns), id));
    }

    /// The oldest retired entry whose retention has run out by `now`, taken off the list.
    #[inline]
    pub(super) fn pop_expired(&mut self, now: u64) -> Option<u64> {
        let &(drop_at, id) = self.queue.front()?;
        if drop_at > now {
            return None;
        }
        self.queue.pop_front();
        Some(id)
    }

    /// Takes `id` off the list (its entry leaves the table early: a stop, a discard).
    pub(super) fn forget(&mut self, id: u64) {
        if let Some(pos) = self.queue.iter().position(|&(_, rid)| rid == id) {
            self.queue.remove(pos);
        }
    }

    /// How many retired entries are kept.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether lookups at `now` still see `e`: not once its retention has run out.
    #[inline]
    pub(super) fn shows(&self, e: &Entry, now: u64) -> bool {
        e.retired()
            .is_none_or(|r| r.at.saturating_add(self.ns) > now)
    }
}
