//! One `SQLite` transaction that writes change sets in order: the store's synced commits and its
//! writer thread's behind-the-tick writes (docs/schedules.md §11.35) share it.

use rusqlite::Connection;

use super::codec::{self, CadenceParams, to_sql};
use super::history_ring::{self, Folded};
use crate::row::ChangeSet;

/// Writes `batches` in order in one transaction on `conn`; returns how many deletes existed.
/// `buf` is scratch space for the running-firings column.
pub(super) fn write_changes<'a>(
    conn: &Connection,
    batches: impl IntoIterator<Item = &'a ChangeSet>,
    buf: &mut String,
) -> rusqlite::Result<usize> {
    let tx = conn.unchecked_transaction()?;
    let mut removed = 0;
    for changes in batches {
        let mut folded = Folded::new(&changes.history, changes.updates.iter().map(|u| u.0));
        if !changes.updates.is_empty() {
            let mut update = tx.prepare_cached(codec::UPDATE_CADENCE)?;
            for (id, cadence) in &changes.updates {
                CadenceParams::new(*id, cadence, buf).bind(&mut update, buf, folded.take(*id))?;
                update.raw_execute()?;
            }
        }
        if !changes.deletes.is_empty() {
            let mut delete = tx.prepare_cached("DELETE FROM schedules WHERE id = ?1")?;
            for &id in &changes.deletes {
                removed += delete.execute([to_sql(id)])?;
            }
        }
        // The rare records that did not ride in an update (docs/schedules.md §9.11), then the
        // faults' values, which have no fixed width; a row deleted above takes neither.
        if !folded.rest.is_empty() {
            let mut splice = tx.prepare_cached(codec::SPLICE_HISTORY)?;
            for h in &folded.rest {
                let bytes = history_ring::encode(h);
                splice.execute(rusqlite::params![to_sql(h.schedule), h.slot, &bytes[..]])?;
            }
        }
        let mut faults = history_ring::faulted(&changes.history).peekable();
        if faults.peek().is_some() {
            let mut record = tx.prepare_cached(codec::RECORD_FAULTED)?;
            for h in faults {
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
        // Inserts after deletes: a transaction that stops a keyed schedule and creates one under
        // the same key frees the key before the unique index looks (docs/schedules.md §5.16).
        if !changes.inserts.is_empty() {
            let mut insert = tx.prepare_cached(codec::insert_sql())?;
            for row in &changes.inserts {
                codec::insert(&mut insert, row)?;
            }
        }
    }
    tx.commit().map(|()| removed)
}
