//! Schedules moving between nodes on a shared store (docs/schedules.md §11.26): rows the store
//! claimed for this engine come in and are applied like rows at open (catch-up); schedules
//! another node took over go out, dropped as a stop would drop them. Both are taken from the
//! store once per tick, without waiting on I/O.
//!
//! A claimed row may say a firing is running: the node that started it is gone (its lease ran
//! out) and its outcome will never be reported here — the run is another host's (unless this
//! engine resumed that node, docs/schedules.md §11.49, when the rows are its own). Such
//! firings are settled at once, as the claim is applied, with a fault of kind
//! [`TakenOver`](crate::FaultKind::TakenOver) (docs/schedules.md §11.39): the schedule is then
//! idle, so the points after the one that firing served fire normally, with overlap and
//! catch-up applied as at open, instead of every later point counting as an overlap behind a
//! firing nobody will ever settle. A takeover is counted in `fault_count` and shown in
//! `last_fault` but does not add to `consecutive_faults`, so it never retires a schedule by
//! `max_faults` (docs/schedules.md §13.36).

use super::core::Core;
use super::entry::Kind;
use super::storage::Loader;
use crate::info::RetireReason;
use crate::row::ClaimedRow;
use crate::{Error, Fault, FaultKind, Value};

impl Core {
    /// Drops the schedules another node took over, then applies the rows claimed since the
    /// last tick and settles the firings they brought with them. A run a dropped schedule had
    /// in flight goes on; its outcome is ignored.
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
        let from: Vec<(u64, Option<u64>)> =
            claimed.iter().map(|c| (c.row.id, c.from_node)).collect();
        let mut loader = Loader::for_claims(self, now);
        let mut result = Ok(());
        for ClaimedRow { row, .. } in claimed.drain(..) {
            if let Err(e) = crate::row::RowSink::apply(&mut loader, row) {
                result = Err(e);
                break;
            }
        }
        let taken = loader.take_taken_over();
        let behind = loader.finish_claims();
        self.catch_up_loaded(behind);
        for (id, firings) in taken {
            let node = from.iter().find(|(row, _)| *row == id).and_then(|f| f.1);
            self.settle_taken_over(id, firings, node, now);
        }
        claimed.clear();
        self.claimed_buf = claimed;
        result
    }

    /// Settles the `firings` a claimed schedule's row said were running on node `from` (`None`:
    /// the row had no holder): each counts in `fault_count`, the last is `last_fault`;
    /// `consecutive_faults` is left alone. A one-shot will not fire again and retires
    /// `"completed"`, as a faulting one-shot does (docs/schedules.md §7.4); for a recurring schedule
    /// the firings have ended (a point waiting behind them is armed now).
    fn settle_taken_over(&mut self, id: u64, firings: usize, from: Option<u64>, now: u64) {
        // The loader took them off the running list already; a parked start stays there.
        let Some(e) = self.table.get_mut(id) else {
            return;
        };
        if !e.is_live() {
            return;
        }
        let value = match from {
            Some(node) => format!("taken over from node {node}, whose lease ran out"),
            None => "taken over from a node that handed it back while it ran".to_string(),
        };
        e.fault_count = e
            .fault_count
            .saturating_add(u64::try_from(firings).unwrap_or(u64::MAX));
        e.extra_mut().last_fault = Some(Fault {
            kind: FaultKind::TakenOver,
            value: Value::Str(value),
        });
        let kind = e.kind;
        tracing::info!(
            schedule = id,
            firings,
            from,
            "settled the firings a schedule taken over from another node had in flight"
        );
        self.mark_dirty(id);
        if kind == Kind::At {
            self.retire(id, RetireReason::Completed, now);
        } else {
            self.firing_ended(id, now);
        }
    }
}
