//! Schedules moving between nodes on a shared store (docs/schedules.md §11.26): rows the store
//! claimed for this engine come in and are applied like rows at open (catch-up, interrupted
//! firings handed back); schedules another node took over go out, dropped as a stop would drop
//! them. Both are taken from the store once per tick, without waiting on I/O.

use super::core::Core;
use super::rows::Loader;
use crate::Error;

impl Core {
    /// Drops the schedules another node took over, then applies the rows claimed since the
    /// last tick. A run a dropped schedule had in flight goes on; its outcome is ignored.
    pub(super) fn apply_claims(&mut self, now: u64) -> Result<(), Error> {
        let Some(store) = self.store.as_mut() else {
            return Ok(());
        };
        let mut claimed = std::mem::take(&mut self.claimed_buf);
        let mut lost = std::mem::take(&mut self.lost_buf);
        store.poll_claims(now, &mut claimed, &mut lost);
        for id in lost.drain(..) {
            self.drop_entry(id);
        }
        self.lost_buf = lost;
        if claimed.is_empty() {
            self.claimed_buf = claimed;
            return Ok(());
        }
        let mut loader = Loader::new(self, now);
        let mut result = Ok(());
        for row in claimed.drain(..) {
            if let Err(e) = crate::row::RowSink::apply(&mut loader, row) {
                result = Err(e);
                break;
            }
        }
        let behind = loader.finish_claims();
        self.catch_up_loaded(behind);
        claimed.clear();
        self.claimed_buf = claimed;
        result
    }
}
