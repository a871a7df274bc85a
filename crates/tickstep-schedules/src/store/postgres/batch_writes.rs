//! What one batch of the store thread writes, inside its transaction (docs/schedules.md
//! §11.14, §11.52–§11.55): the cadence updates, fenced, with the history records riding in them;
//! the inserted rows; the history records that ride alone. The store thread ([`super::store_thread`])
//! decides when and retries; these are the statements.

use std::collections::{HashMap, HashSet};

use super::database_error;
use super::history_ring::{self, Folded};
use super::pg_codec::{self, CadenceColumns};
use crate::Error;
use crate::store::codec::from_sql;
use crate::store_rows::{ChangeSet, HistoryRow, ScheduleRow};

/// What a node holds, for its fenced writes: each row's fence, the rows it stopped itself, its id.
pub(super) struct Held<'a> {
    pub(super) fences: &'a HashMap<u64, i64>,
    pub(super) stopped_here: &'a HashSet<u64>,
    pub(super) node: i64,
}

/// Writes a batch's cadence updates in one statement, each carrying the history record that
/// rides in it (`folded`, docs/schedules.md §9.11), fenced; adds the rows another node took over
/// to `refused`, and those found deleted by someone else to `gone` (docs/schedules.md §11.55).
pub(super) fn update_cadences(
    tx: &mut postgres::Transaction<'_>,
    columns: &mut CadenceColumns,
    held: &Held<'_>,
    changes: &ChangeSet,
    folded: &mut Folded<'_>,
    (refused, gone): (&mut Vec<u64>, &mut Vec<u64>),
) -> Result<(), Error> {
    let context = "writing schedules";
    if changes.updates.is_empty() {
        return Ok(());
    }
    columns.clear();
    for (id, cadence) in &changes.updates {
        match held.fences.get(id) {
            Some(&fence) => columns.push(*id, fence, cadence, folded.take(*id)),
            None if held.stopped_here.contains(id) => {}
            None => refused.push(*id), // taken over before: refused unwritten
        }
    }
    if columns.len() == 0 {
        return Ok(());
    }
    let updated: HashSet<i64> = tx
        .query(pg_codec::UPDATE_CADENCE, &columns.params(&held.node))
        .map_err(database_error(context))?
        .iter()
        .map(|row| row.get(0))
        .collect();
    if updated.len() < columns.len() {
        let (ids, fences) = columns.ids_and_fences();
        let taken: HashSet<i64> = tx
            .query(pg_codec::TAKEN_OVER, &[ids, fences, &held.node])
            .map_err(database_error(context))?
            .iter()
            .map(|row| row.get(0))
            .collect();
        // The rest matched nothing because their rows are gone: stopped, or retired by a node
        // that took them over. The firings these updates carry must not start
        // (docs/schedules.md §11.55).
        for &id in ids.iter().filter(|id| !updated.contains(id)) {
            if taken.contains(&id) {
                refused.push(from_sql(id));
            } else {
                gone.push(from_sql(id));
            }
        }
    }
    Ok(())
}

/// Inserts `rows`, held by this node (`node`) in its namespace, in statements of at most
/// [`pg_codec::INSERT_CHUNK`] rows each (docs/schedules.md §11.52), and notes each row's fence in
/// `fences`. A refused row (a key another row holds, docs/schedules.md §5.18) fails its statement
/// and so the transaction: nothing of it is applied.
pub(super) fn insert_rows(
    tx: &mut postgres::Transaction<'_>,
    rows: &[ScheduleRow],
    (node, namespace): (i64, &str),
    fences: &mut HashMap<u64, i64>,
) -> Result<(), Error> {
    let context = "writing schedules";
    if rows.is_empty() {
        return Ok(());
    }
    let stmt = tx
        .prepare(pg_codec::insert_sql())
        .map_err(database_error(context))?;
    let mut rest = rows.iter().peekable();
    while rest.peek().is_some() {
        let mut chunk = pg_codec::InsertColumns::default();
        while chunk.len() < pg_codec::INSERT_CHUNK
            && let Some(row) = rest.peek()
            && chunk.push(row)
        {
            rest.next();
        }
        for row in tx
            .query(&stmt, &chunk.params(&node, &namespace))
            .map_err(database_error(context))?
        {
            fences.insert(from_sql(row.get(0)), row.get(1));
        }
    }
    Ok(())
}

/// Writes what a batch's history needs beyond the records that rode in its cadence update
/// (docs/schedules.md §9.11): the records that did not (`alone`: a one-shot's last firing, whose
/// row retires, or a second firing of a schedule settled before the commit), spliced into their
/// rings fenced as cadence updates (the node's `fences` and id), and the faulted records of
/// `history` whole, one statement. A record of a row the batch deletes (`deleted`) is not
/// written: its ring goes with the row (docs/schedules.md §11.53). The others are spliced in
/// rounds, one statement each: a schedule's first record in the first round, its second in the
/// second, and so on, so a statement touches a row once and the newest record of a slot wins.
pub(super) fn record_history(
    tx: &mut postgres::Transaction<'_>,
    (fences, node): (&HashMap<u64, i64>, i64),
    (alone, deleted): (&[&HistoryRow], &[u64]),
    history: &[HistoryRow],
) -> Result<(), Error> {
    let context = "recording firing histories";
    let deleted: HashSet<u64> = if alone.is_empty() {
        HashSet::new()
    } else {
        deleted.iter().copied().collect()
    };
    // The round of each schedule's next record.
    let mut round_of: HashMap<u64, usize> = HashMap::new();
    let mut rounds: Vec<pg_codec::SpliceColumns> = Vec::new();
    for h in alone.iter().filter(|h| !deleted.contains(&h.schedule)) {
        let Some(&fence) = fences.get(&h.schedule) else {
            continue;
        };
        let round = round_of.entry(h.schedule).or_insert(0);
        if rounds.len() <= *round {
            rounds.push(pg_codec::SpliceColumns::default());
        }
        rounds[*round].push(h, fence);
        *round += 1;
    }
    for round in &rounds {
        tx.execute(pg_codec::SPLICE_HISTORY, &round.params(&node))
            .map_err(database_error(context))?;
    }
    let faulted: Vec<HistoryRow> = history_ring::faulted(history).cloned().collect();
    if !faulted.is_empty() {
        let columns = pg_codec::HistoryColumns::of(&faulted);
        tx.execute(pg_codec::RECORD_HISTORY, &columns.params())
            .map_err(database_error(context))?;
    }
    Ok(())
}
