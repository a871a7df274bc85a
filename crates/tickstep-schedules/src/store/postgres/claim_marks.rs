//! What a write planned before the engine saw a claim may not touch (docs/schedules.md §11.56).
//!
//! A node whose store thread stalled past its lease can lose a row and claim it back before its
//! engine hears of either: the claim gives the thread a new fence, and a write the engine planned
//! from its old copy of the row would carry that fence and land — a point another node committed
//! meanwhile committed a second time. So every claimed row is marked with how many times the
//! engine had taken its mailbox when the row was delivered, and every batch the engine sends is
//! stamped with how many times it had taken it then ([`Mailbox::taken`](super::mailbox::Mailbox::taken)).
//! A batch stamped at or below a row's mark was planned before the engine applied the claim: what
//! it says of that row is stale and is dropped unwritten, counted as a refused write. A row the
//! engine never held before has nothing in such a batch, so marking every claim costs nothing
//! there; marks go once a later batch is written.

use std::collections::HashMap;

use super::mailbox::Mailbox;
use crate::store_rows::ChangeSet;

/// Claimed rows by id, each with the engine's mailbox takes when it was delivered.
#[derive(Default)]
pub(super) struct ClaimMarks {
    marks: HashMap<u64, u64>,
}

impl ClaimMarks {
    /// Marks `ids`, delivered when the engine had taken its mailbox `taken` times.
    pub(super) fn mark(&mut self, ids: impl IntoIterator<Item = u64>, taken: u64) {
        self.marks.extend(ids.into_iter().map(|id| (id, taken)));
    }

    /// Drops from `changes`, planned when the engine had taken its mailbox `seen` times, its
    /// cadence updates, history records and (with `deletes`) retirements of rows delivered in a
    /// take it had not made; how many it dropped. A transaction's stops are its user's and stay
    /// (they apply whoever holds the row, docs/schedules.md §11.21).
    pub(super) fn strip(&self, seen: u64, changes: &mut ChangeSet, deletes: bool) -> usize {
        if self.marks.is_empty() {
            return 0;
        }
        let stale = |id: &u64| self.marks.get(id).is_some_and(|&taken| seen <= taken);
        let before = changes.updates.len() + changes.history.len() + changes.deletes.len();
        changes.updates.retain(|(id, _)| !stale(id));
        changes.history.retain(|h| !stale(&h.schedule));
        if deletes {
            changes.deletes.retain(|id| !stale(id));
        }
        before - (changes.updates.len() + changes.history.len() + changes.deletes.len())
    }

    /// Once batches up to one stamped `seen` are written by node `node`, with `stale` of their
    /// entries dropped: counts those as refused late writes in `mailbox`, and forgets the marks
    /// that batch is already past (batches arrive in the order they were stamped, so no later
    /// one can be stale for them).
    pub(super) fn written(&mut self, seen: u64, stale: usize, (node, mailbox): (i64, &Mailbox)) {
        if stale > 0 {
            tracing::info!(
                node,
                writes = stale,
                "PostgreSQL schedule store: writes planned before a claim of their rows were \
                 refused (the rows were taken over and claimed back meanwhile)"
            );
            mailbox.count_refused(stale as u64);
        }
        if !self.marks.is_empty() {
            self.marks.retain(|_, taken| *taken >= seen);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store_rows::{Cadence, HistoryRow};

    fn changes(ids: &[u64]) -> ChangeSet {
        ChangeSet {
            updates: ids.iter().map(|&id| (id, Cadence::default())).collect(),
            deletes: ids.to_vec(),
            history: ids
                .iter()
                .map(|&schedule| HistoryRow {
                    schedule,
                    slot: 0,
                    started: 1,
                    ended: 2,
                    nominal: 1,
                    fault: None,
                })
                .collect(),
            ..ChangeSet::default()
        }
    }

    #[test]
    fn a_batch_planned_before_the_take_loses_what_it_says_of_the_claimed_rows_only() {
        let mut marks = ClaimMarks::default();
        marks.mark([7], 3);
        let mut stale = changes(&[7, 8]);
        assert_eq!(marks.strip(3, &mut stale, true), 3);
        assert_eq!(stale.updates.len(), 1);
        assert_eq!(stale.updates[0].0, 8);
        assert_eq!(stale.deletes, vec![8]);
        // A transaction's stop stays.
        let mut synced = changes(&[7]);
        assert_eq!(marks.strip(2, &mut synced, false), 2);
        assert_eq!(synced.deletes, vec![7]);
        // Planned after the take: untouched.
        let mut fresh = changes(&[7]);
        assert_eq!(marks.strip(4, &mut fresh, true), 0);
        marks.written(4, 0, (1, &Mailbox::default()));
        assert!(marks.marks.is_empty());
    }
}
