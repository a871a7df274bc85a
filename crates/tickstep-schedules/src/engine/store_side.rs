//! The engine's side of its store: the backend, and what the engine owes it — the cadence
//! updates, deletes and history of the next group commit, and the block of ids the store has
//! reserved for it.
//!
//! Keeps docs/schedules.md §11.4 and §11.18 (an id is handed out only under the durable
//! high-water mark), docs/schedules.md §11.47 (a clean stop gives the unused ids back),
//! docs/schedules.md §11.35 and §11.15 (the group commit goes behind the tick),
//! docs/schedules.md §9.11 (settled firings are written with it) and docs/schedules.md §11.42
//! (the starts waiting for an update learn which write carries it).

use std::collections::HashMap;

use super::entry::Entry;
use super::interner::Interner;
use super::table::Table;
use crate::Error;
use crate::store::{Backend, ID_BLOCK};
use crate::store_rows::{ChangeSet, ClaimedRow, Durability, HistoryRow, OperatorNote};

/// What a group commit did.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Committed {
    /// Nothing was pending.
    Nothing,
    /// Handed to the store's writer, behind the caller.
    Behind,
    /// Written before the store returned (the caller waited for it).
    InPlace,
}

/// The store and what the engine has for it.
#[derive(Default)]
pub(super) struct StoreSide {
    /// `None` for an engine in memory.
    pub(super) backend: Option<Box<dyn Backend>>,
    /// Entries whose cadence state the store has not seen yet.
    pub(super) dirty: Vec<u64>,
    /// Rows to delete at the next group commit (retired persistent schedules).
    pub(super) doomed_rows: Vec<u64>,
    /// Settled firings of persistent schedules, for the next group commit (docs/schedules.md
    /// §9.11).
    pub(super) history: Vec<HistoryRow>,
    /// The group commit's change set: reused across ticks by a store that writes in the tick,
    /// taken by one that writes behind it (docs/schedules.md §11.35, §11.15).
    pub(super) changes: ChangeSet,
    /// The last id handed out.
    pub(super) last_id: u64,
    /// Ids up to this are covered by the durable high-water mark.
    pub(super) reserved_through: u64,
    /// Rows claimed from other nodes and ids taken over by them, reused across ticks.
    pub(super) claimed_buf: Vec<ClaimedRow>,
    pub(super) lost_buf: Vec<u64>,
    /// Operator stops found by the last poll, reused across ticks.
    pub(super) stopped_buf: Vec<OperatorNote>,
    /// The last history read of each schedule this engine holds, with the count of settled
    /// firings it was read at (docs/schedules.md §11.44): until another firing settles the
    /// same read would give the same records. At most [`HISTORY_READS_KEPT`] schedules.
    pub(super) history_reads: HashMap<u64, (u64, Vec<crate::FiringRecord>)>,
}

/// How many schedules' history reads are kept; past it they are all dropped, and the next
/// reads fill it again (a client polling a few thousand schedules still reads each from memory).
const HISTORY_READS_KEPT: usize = 4_096;

impl StoreSide {
    /// Marks entry `id`'s cadence state for the next group commit (persistent entries on a
    /// store only).
    #[inline]
    pub(super) fn mark_dirty(&mut self, table: &mut Table, id: u64) {
        if self.backend.is_none() {
            return;
        }
        if let Some(e) = table.get_mut(id)
            && e.persist
            && !e.dirty
        {
            e.dirty = true;
            self.dirty.push(id);
        }
    }

    /// Step 4 of a tick: writes every dirty entry's cadence and deletes retired rows, in one
    /// transaction. On failure everything stays pending. Returns what it did and the store's
    /// count of the write that carries it (0 for a write made before `commit` returned).
    pub(super) fn group_commit(&mut self, table: &mut Table) -> Result<(Committed, u64), Error> {
        let Some(store) = self.backend.as_mut() else {
            return Ok((Committed::Nothing, 0));
        };
        if self.dirty.is_empty() && self.doomed_rows.is_empty() && self.history.is_empty() {
            return Ok((Committed::Nothing, 0));
        }
        let handed = store.handed_behind();
        let changes = &mut self.changes;
        changes.clear();
        // A store that writes behind the tick takes the set's buffers with it: one allocation
        // of the right size, not a doubling series of copies of the rows built so far.
        changes.updates.reserve(self.dirty.len());
        // A plain loop: through `extend` over a `filter_map` each row was moved three times.
        // Each entry's flag is cleared as its row is built, in the one lookup; a commit that
        // fails sets them again (docs/schedules.md §17.11).
        for &id in &self.dirty {
            let Some(e) = table.get_mut(id) else {
                continue;
            };
            e.dirty = false;
            if e.is_live() && e.persist {
                changes.updates.push((e.id, e.cadence()));
            }
        }
        changes.deletes.extend_from_slice(&self.doomed_rows);
        // The records go over whole, not copied one by one; the buffer left for the next
        // tick's records is sized for as many (docs/schedules.md §17.11).
        std::mem::swap(&mut changes.history, &mut self.history);
        self.history.reserve(changes.history.len());
        let result = store.commit(changes, Durability::Grouped);
        if result.is_err() {
            // Kept for the next try, as the updates are (rebuilt from the dirty list).
            self.history.append(&mut changes.history);
            for &id in &self.dirty {
                if let Some(e) = table.get_mut(id) {
                    e.dirty = true;
                }
            }
        }
        changes.clear();
        result?;
        let seq = store.handed_behind();
        self.dirty.clear();
        self.doomed_rows.clear();
        if seq == handed {
            // Written before `commit` returned: durable now, as a write counted 0 is.
            Ok((Committed::InPlace, 0))
        } else {
            Ok((Committed::Behind, seq))
        }
    }

    /// The grouped commits the store has made durable (all, without a store).
    #[inline]
    pub(super) fn durable_through(&self) -> u64 {
        self.backend
            .as_ref()
            .map_or(u64::MAX, |s| s.durable_behind())
    }

    /// Whether a firing of `e` must wait for its cadence update to be durable: only a
    /// persistent schedule on a store has one (docs/schedules.md §11.42).
    #[inline]
    pub(super) fn starts_after_write(&self, e: Option<&Entry>) -> bool {
        self.backend.is_some() && e.is_some_and(|e| e.persist)
    }

    /// Hands out the next id. Past the reserved block, first asks the store for a new one
    /// (durable before it is used), so no id handed out — committed or not — can be handed out
    /// again after a restart, nor by another engine sharing the store (docs/schedules.md §11.4,
    /// §11.18). The block may start above the next id when other engines took the ids between.
    #[inline]
    pub(super) fn allocate_id(&mut self) -> Result<u64, Error> {
        let mut id = self.last_id + 1;
        if let Some(store) = self.backend.as_mut()
            && id > self.reserved_through
        {
            let block = store.reserve_ids(id, ID_BLOCK)?;
            id = *block.start();
            self.reserved_through = *block.end();
        }
        self.last_id = id;
        Ok(id)
    }

    /// At a clean stop, gives the unused end of the reserved block back to the store, so the
    /// next open continues from the last id handed out rather than above the block
    /// (docs/schedules.md §11.47). A crash skips this: the next open starts above the block.
    pub(super) fn release_ids(&mut self) {
        let (last_used, reserved_through) = (self.last_id, self.reserved_through);
        let Some(store) = self.backend.as_mut() else {
            return;
        };
        if reserved_through <= last_used {
            return;
        }
        match store.release_ids(last_used, reserved_through) {
            Ok(lowered) => {
                self.reserved_through = if lowered { last_used } else { reserved_through }
            }
            Err(error) => tracing::debug!(%error, "could not give back unused schedule ids"),
        }
    }

    /// Queues the settled firing of entry `id` of `table` for its history, with the next group
    /// commit (docs/schedules.md §9.11); its fault, if any, is the schedule's `last_fault` just
    /// set. Only a persistent schedule on a store keeps one. Inlined, and the entry looked up
    /// only on a store: every settle calls it, and an in-memory engine returns at once.
    #[inline]
    pub(super) fn record_history(
        &mut self,
        (table, id): (&Table, u64),
        nominal: u64,
        started: u64,
        now: u64,
    ) {
        if self.backend.is_none() {
            return;
        }
        let Some(e) = table.get(id).filter(|e| e.persist) else {
            return;
        };
        let settled = e.settled();
        let fault = if e.consecutive_faults > 0 {
            e.last_fault().cloned()
        } else {
            None
        };
        self.history.push(HistoryRow {
            schedule: e.id,
            slot: u32::try_from(settled % crate::info::HISTORY_KEPT).expect("below HISTORY_KEPT"),
            started,
            ended: now,
            nominal,
            fault,
        });
    }

    /// The stored history of `id`, which has settled `settled` firings, newest first
    /// (docs/schedules.md §9.11); empty without a store, or before any firing settled. A read
    /// error is logged and reads as empty: `schedule_info` still answers. For a schedule this
    /// engine `holds` live, a read at the settled count of the last one is answered from
    /// memory (docs/schedules.md §11.44): only a settled firing adds a record, and it counts.
    pub(super) fn history(
        &mut self,
        id: u64,
        settled: u64,
        holds: bool,
    ) -> Vec<crate::FiringRecord> {
        let Some(store) = self.backend.as_mut().filter(|_| settled > 0) else {
            return Vec::new();
        };
        if holds
            && let Some((read_at, records)) = self.history_reads.get(&id)
            && *read_at == settled
        {
            return records.clone();
        }
        let (mut rows, read) = match store.history(id, settled) {
            Ok(rows) => (rows, true),
            Err(error) => {
                tracing::warn!(%error, schedule = id, "could not read a schedule's history");
                (Vec::new(), false)
            }
        };
        // Firings settled since the last group commit are not in the store yet: each takes
        // its slot, as it will there.
        let pending = self.history.iter().filter(|h| h.schedule == id).cloned();
        crate::store::history_in_flight::overlay(&mut rows, pending.collect());
        rows.sort_by(|a, b| b.started.cmp(&a.started).then(b.slot.cmp(&a.slot)));
        let records: Vec<_> = rows.into_iter().map(HistoryRow::into_record).collect();
        // A failed read is not kept: the next one asks the store again.
        if holds && read {
            if self.history_reads.len() >= HISTORY_READS_KEPT
                && !self.history_reads.contains_key(&id)
            {
                self.history_reads.clear();
            }
            self.history_reads.insert(id, (settled, records.clone()));
        }
        records
    }

    /// What a transaction writes to the store, synced: its persistent creations (`inserts`,
    /// whose verbs `verbs` names) and its stops (a stop of a schedule this engine does not
    /// hold deletes the row whoever holds it); `None` without a store or with nothing to write.
    #[inline]
    pub(super) fn durable_changes<'a>(
        &self,
        (table, verbs): (&Table, &Interner),
        inserts: impl Iterator<Item = &'a Entry>,
        gone: impl Iterator<Item = u64>,
    ) -> Option<ChangeSet> {
        self.backend.as_ref()?;
        let changes = ChangeSet {
            inserts: inserts
                .filter(|e| e.persist)
                .map(|e| e.to_row(verbs))
                .collect(),
            updates: Vec::new(),
            deletes: gone
                // Not in the table: held by another engine on a shared store (only such a
                // store lets a transaction find it), whose row the stop deletes.
                .filter(|&id| table.get(id).is_none_or(|e| e.persist))
                .collect(),
            history: Vec::new(),
        };
        (!changes.is_empty()).then_some(changes)
    }
}
