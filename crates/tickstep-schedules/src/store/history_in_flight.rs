//! Firing-history records a store has handed to its writer and not yet written, kept so that
//! reading a schedule's history never waits for the writer (docs/schedules.md §9.11, §11.35, §11.44).
//!
//! Both stores write a tick's change set behind the tick, numbered in the order handed. A
//! history read answers from the database as it stands, then lays over it the records of the
//! batches not yet written, each in its slot, as the write will. What the read returns is what
//! the store will hold once the writer catches up, and the caller — `schedule_info` on the
//! engine's thread, a frame — waits for no write, however busy the writer is.

use std::collections::VecDeque;

use crate::store_rows::HistoryRow;

/// The records of the batches handed and not yet written, oldest batch first.
#[derive(Default)]
pub(crate) struct HistoryInFlight {
    batches: VecDeque<(u64, Vec<HistoryRow>)>,
}

impl HistoryInFlight {
    /// Batch `seq` (counting from 1 in the order handed) carries `history`, a copy the store
    /// made of the records it handed (a few dozen bytes each, once per firing); `written`
    /// batches are written.
    pub(crate) fn handed(&mut self, seq: u64, history: Vec<HistoryRow>, written: u64) {
        self.forget_written(written);
        if !history.is_empty() {
            self.batches.push_back((seq, history));
        }
    }

    /// Schedule `id`'s records in batches not yet written (`written` are), oldest first. Taken
    /// before the database is read: a batch written in between is then in both, and the later
    /// record of a slot wins either way.
    pub(crate) fn of(&mut self, id: u64, written: u64) -> Vec<HistoryRow> {
        self.forget_written(written);
        self.batches
            .iter()
            .flat_map(|(_, rows)| rows.iter().filter(|h| h.schedule == id))
            .cloned()
            .collect()
    }

    fn forget_written(&mut self, written: u64) {
        while self.batches.front().is_some_and(|(seq, _)| *seq <= written) {
            self.batches.pop_front();
        }
    }
}

/// Lays `newer` (oldest first) over `stored`: each record takes its slot, as the store's write
/// will.
pub(crate) fn overlay(stored: &mut Vec<HistoryRow>, newer: Vec<HistoryRow>) {
    for record in newer {
        stored.retain(|r| r.slot != record.slot);
        stored.push(record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(schedule: u64, slot: u32, started: u64) -> HistoryRow {
        HistoryRow {
            schedule,
            slot,
            nominal: started,
            started,
            ended: started + 1,
            fault: None,
        }
    }

    #[test]
    fn unwritten_records_are_laid_over_the_stored_ones_until_their_batch_is_written() {
        let mut in_flight = HistoryInFlight::default();
        in_flight.handed(1, vec![record(7, 0, 100), record(8, 0, 100)], 0);
        in_flight.handed(2, vec![], 0);
        in_flight.handed(3, vec![record(7, 1, 200), record(7, 0, 2100)], 0);
        let newer = in_flight.of(7, 0);
        assert_eq!(
            newer.iter().map(|h| h.started).collect::<Vec<_>>(),
            [100, 200, 2100]
        );
        // The store still holds slot 0 from twenty firings before, and slot 5.
        let mut stored = vec![record(7, 0, 1), record(7, 5, 50)];
        overlay(&mut stored, newer);
        let mut started: Vec<u64> = stored.iter().map(|h| h.started).collect();
        started.sort_unstable();
        assert_eq!(started, [50, 200, 2100], "slot 0's newest record wins");
        // Batch 1 written: its records are the database's now.
        assert_eq!(in_flight.of(7, 1).len(), 2);
        assert!(in_flight.of(7, 3).is_empty());
        assert!(
            in_flight.batches.is_empty(),
            "written batches are forgotten"
        );
    }
}
