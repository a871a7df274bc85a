//! Retention of retired entries.
//!
//! A retired entry stays in the table for [`Config::retention`](crate::Config) (60 s) so that
//! `schedule_info` can say why it ended; meanwhile it is not valid, not listed, not armed, and
//! still a GC root. Entries retire in time order, so a FIFO of (drop time, id) finds the expired
//! ones in O(1) each. Lookups also treat an entry past its drop time as gone, so a driver that
//! sleeps through the sweep never shows a stale entry.

use super::core::Core;
use super::entry::Entry;

impl Core {
    /// Drops retired entries whose retention has run out.
    pub(super) fn sweep_retired(&mut self, now: u64) {
        while let Some(&(drop_at, id)) = self.retired.front() {
            if drop_at > now {
                break;
            }
            self.retired.pop_front();
            if self.table.get(id).is_some_and(|e| !e.is_live()) {
                self.drop_entry(id);
            }
        }
    }

    /// Removes an entry outright (stop, discard, expiry), forgetting its runs.
    pub(super) fn drop_entry(&mut self, id: u64) -> Option<Entry> {
        let e = self.table.remove(id)?;
        self.unindex_key(&e);
        // Its settled firings not yet handed to the store are not written: its row is gone or
        // going, and the store's write does not look (docs/schedules.md §9.11). The list holds
        // one tick's records at most.
        self.history.retain(|h| h.schedule != id);
        for run in e.running().iter().filter_map(|r| r.run) {
            // Only while the id is still this schedule's: a runner that reused it for a run
            // still awaited gave it to that newer run (see `record` in tick.rs), which goes on.
            if self.runs.get(&run).is_some_and(|rec| rec.schedule == id) {
                self.runs.remove(&run);
            }
        }
        if !e.is_live()
            && let Some(pos) = self.retired.iter().position(|&(_, rid)| rid == id)
        {
            self.retired.remove(pos);
        }
        Some(e)
    }

    /// The entry for `id` as lookups should see it: absent once retention has run out.
    pub(super) fn visible(&self, id: u64, now: u64) -> Option<&Entry> {
        let e = self.table.get(id)?;
        match e.retired() {
            Some(r) if r.at.saturating_add(self.retention_ns) <= now => None,
            _ => Some(e),
        }
    }
}
