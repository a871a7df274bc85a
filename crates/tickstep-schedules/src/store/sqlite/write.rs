//! One `SQLite` transaction that writes change sets in order: the store's synced commits and its
//! writer thread's behind-the-tick writes (docs/schedules.md §11.35) share it.

use rusqlite::Connection;

use crate::store::codec::{self, CadenceParams, to_sql};
use crate::store_rows::ChangeSet;

/// Writes `batches` in order in one transaction on `conn`, creations in `namespace`; returns how
/// many deletes existed. `buf` is scratch space for the running-firings column.
pub(super) fn write_changes<'a>(
    conn: &Connection,
    batches: impl IntoIterator<Item = &'a ChangeSet>,
    namespace: crate::Namespace,
    buf: &mut String,
) -> rusqlite::Result<usize> {
    let tx = conn.unchecked_transaction()?;
    let mut removed = 0;
    for changes in batches {
        if !changes.updates.is_empty() {
            let mut update = tx.prepare_cached(codec::UPDATE_CADENCE)?;
            for (id, cadence) in &changes.updates {
                CadenceParams::new(*id, cadence, buf).bind(&mut update, buf)?;
                update.raw_execute()?;
            }
        }
        // Records before deletes: a schedule deleted in this batch takes its new records with
        // it (the trigger on `schedules`), as a record needs its row (docs/schedules.md §9.11).
        if !changes.history.is_empty() {
            let mut record = tx.prepare_cached(codec::RECORD_HISTORY)?;
            for h in &changes.history {
                record.execute(rusqlite::params![
                    to_sql(h.schedule),
                    h.slot,
                    to_sql(h.started),
                    to_sql(h.ended),
                    to_sql(h.nominal),
                    codec::outcome_word(h),
                    h.fault.as_ref().map(codec::fault_json),
                ])?;
            }
        }
        if !changes.deletes.is_empty() {
            let mut delete = tx.prepare_cached("DELETE FROM schedules WHERE id = ?1")?;
            for &id in &changes.deletes {
                let gone = delete.execute([to_sql(id)])?;
                if gone == 0 {
                    // No row, so no trigger: an operator's stop deleted it, perhaps before a
                    // record of it was written.
                    tx.prepare_cached(codec::FORGET_HISTORY)?
                        .execute([to_sql(id)])?;
                }
                removed += gone;
            }
        }
        // Inserts after deletes: a transaction that stops a keyed schedule and creates one under
        // the same key frees the key before the unique index looks (docs/schedules.md §5.16).
        if !changes.inserts.is_empty() {
            let mut insert = tx.prepare_cached(codec::insert_sql())?;
            for row in &changes.inserts {
                codec::insert(&mut insert, row, namespace)?;
            }
        }
    }
    tx.commit().map(|()| removed)
}
