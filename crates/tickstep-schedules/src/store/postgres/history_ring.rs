//! The `PostgreSQL` store's firing history: a ring kept in the schedule's own row
//! (docs/schedules.md §9.11, §13.54; the `SQLite` store keeps a table keyed slot first).
//!
//! A row's `history` column holds [`HISTORY_KEPT`] fixed-width records, one per slot: record `n`
//! of a schedule (counting settled firings) lives at byte `(n mod 20) × 25`. A record is the
//! cadence point served, the start and the end (each a big-endian `i64`, the stored bits of the
//! `u64` nanoseconds, as every time column holds them) and one outcome byte: 0 for an empty slot,
//! 1 returned, 2 fault. Fixed width lets SQL splice one record into the column (`overlay`),
//! inside the cadence `UPDATE` the settled firing already makes, so recording it is no write of
//! its own: no second tuple, no index probe, no conflict check. A fault's value has no fixed
//! width: it goes to the history table, one row per faulted record, matched to its record by
//! slot and start.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

use crate::info::HISTORY_KEPT;
use crate::store::codec::{from_sql, to_sql};
use crate::store_rows::HistoryRow;

/// Bytes of one record: nominal, started, ended, outcome.
pub(crate) const RECORD_BYTES: usize = 25;

/// Bytes of a whole ring.
pub(crate) const RING_BYTES: usize = RECORD_BYTES * HISTORY_KEPT as usize;

const EMPTY: u8 = 0;
const RETURNED: u8 = 1;
const FAULT: u8 = 2;

/// One record as the ring holds it: everything but the fault's value.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) struct RingRecord {
    pub(crate) slot: u32,
    pub(crate) nominal: u64,
    pub(crate) started: u64,
    pub(crate) ended: u64,
    pub(crate) faulted: bool,
}

/// The bytes record `h` takes in its slot.
pub(crate) fn encode(h: &HistoryRow) -> [u8; RECORD_BYTES] {
    let mut out = [0; RECORD_BYTES];
    out[0..8].copy_from_slice(&to_sql(h.nominal).to_be_bytes());
    out[8..16].copy_from_slice(&to_sql(h.started).to_be_bytes());
    out[16..24].copy_from_slice(&to_sql(h.ended).to_be_bytes());
    out[24] = if h.fault.is_some() { FAULT } else { RETURNED };
    out
}

/// The records of a stored ring, empty slots left out; `None` when the column is not a ring
/// (wrong length, or an outcome byte it never writes).
pub(crate) fn decode(ring: &[u8]) -> Option<Vec<RingRecord>> {
    if ring.len() != RING_BYTES {
        return None;
    }
    let mut out = Vec::new();
    for (slot, record) in (0u32..).zip(ring.chunks_exact(RECORD_BYTES)) {
        let time = |at: usize| {
            let bytes: [u8; 8] = record[at..at + 8].try_into().expect("8 bytes");
            from_sql(i64::from_be_bytes(bytes))
        };
        let faulted = match record[24] {
            EMPTY => continue,
            RETURNED => false,
            FAULT => true,
            _ => return None,
        };
        out.push(RingRecord {
            slot,
            nominal: time(0),
            started: time(8),
            ended: time(16),
            faulted,
        });
    }
    Some(out)
}

/// A batch's records split by how they are written: the first record of each schedule that has
/// a cadence update in the batch rides in that update; the others (a second firing of the same
/// schedule settled before the commit, or a schedule without an update) are spliced by a
/// statement of their own, after the updates and in order, so the newest record of a slot wins.
pub(crate) struct Folded<'a> {
    first: HashMap<u64, &'a HistoryRow>,
    /// Records written on their own, in the order they settled.
    pub(crate) rest: Vec<&'a HistoryRow>,
}

impl<'a> Folded<'a> {
    /// Splits `history` against the ids of the batch's cadence updates.
    pub(crate) fn new(history: &'a [HistoryRow], updated: impl Iterator<Item = u64>) -> Self {
        let mut folded = Folded {
            first: HashMap::with_capacity(history.len()),
            rest: Vec::new(),
        };
        if history.is_empty() {
            return folded;
        }
        let mut first: HashMap<u64, usize> = HashMap::with_capacity(history.len());
        let mut rest = Vec::new();
        for (i, h) in history.iter().enumerate() {
            match first.entry(h.schedule) {
                Entry::Occupied(_) => rest.push(i),
                Entry::Vacant(slot) => {
                    slot.insert(i);
                }
            }
        }
        for id in updated {
            if let Some(i) = first.remove(&id) {
                folded.first.insert(id, &history[i]);
            }
        }
        // A record with no update to ride in is written on its own, before any later record of
        // the same schedule.
        rest.extend(first.into_values());
        rest.sort_unstable();
        folded.rest = rest.into_iter().map(|i| &history[i]).collect();
        folded
    }

    /// The record that rides in schedule `id`'s cadence update, if any.
    pub(crate) fn take(&mut self, id: u64) -> Option<&'a HistoryRow> {
        self.first.remove(&id)
    }
}

/// The faulted records of a batch: the rows the history table receives.
pub(crate) fn faulted(history: &[HistoryRow]) -> impl Iterator<Item = &HistoryRow> {
    history.iter().filter(|h| h.fault.is_some())
}

/// The history of schedule `schedule`, newest first, from its ring and its fault rows
/// (slot, started, fault); `None` names nothing wrong by itself: the caller names the schedule.
/// A faulted record whose fault row is missing or does not match is refused.
pub(crate) fn merge(
    schedule: u64,
    ring: Vec<RingRecord>,
    faults: &HashMap<u32, (u64, crate::Fault)>,
) -> Option<Vec<HistoryRow>> {
    let mut out = Vec::with_capacity(ring.len());
    for r in ring {
        let fault = if r.faulted {
            match faults.get(&r.slot) {
                Some((started, fault)) if *started == r.started => Some(fault.clone()),
                _ => return None,
            }
        } else {
            None
        };
        out.push(HistoryRow {
            schedule,
            slot: r.slot,
            started: r.started,
            ended: r.ended,
            nominal: r.nominal,
            fault,
        });
    }
    out.sort_by_key(|r| Reverse((r.started, r.slot)));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Fault, FaultKind, Value};

    fn record(schedule: u64, slot: u32, started: u64, fault: bool) -> HistoryRow {
        HistoryRow {
            schedule,
            slot,
            started,
            ended: started + 7,
            nominal: u64::MAX - started,
            fault: fault.then(|| Fault {
                kind: FaultKind::Error,
                value: Value::from("boom"),
            }),
        }
    }

    #[test]
    fn a_record_round_trips_through_its_slot_bits_and_all() {
        let mut ring = vec![0; RING_BYTES];
        let h = record(1, 19, 0x80_00_00_00_00_00_00_01, false);
        ring[19 * RECORD_BYTES..].copy_from_slice(&encode(&h));
        let back = decode(&ring).unwrap();
        assert_eq!(back.len(), 1, "empty slots are left out");
        assert_eq!(
            (
                back[0].slot,
                back[0].nominal,
                back[0].started,
                back[0].ended
            ),
            (19, h.nominal, h.started, h.ended)
        );
        assert!(!back[0].faulted);
    }

    #[test]
    fn a_column_that_is_not_a_ring_is_refused() {
        assert!(decode(&[0; RING_BYTES - 1]).is_none());
        let mut ring = vec![0; RING_BYTES];
        ring[24] = 9;
        assert!(decode(&ring).is_none());
    }

    #[test]
    fn the_first_record_of_an_updated_schedule_rides_in_its_update() {
        let history = [
            record(1, 0, 10, false),
            record(2, 0, 11, false),
            record(1, 1, 12, false),
            record(3, 0, 13, false),
        ];
        let mut folded = Folded::new(&history, [1, 2].into_iter());
        assert_eq!(folded.take(1).map(|h| h.started), Some(10));
        assert_eq!(folded.take(2).map(|h| h.started), Some(11));
        assert!(folded.take(3).is_none(), "3 has no update");
        let rest: Vec<u64> = folded.rest.iter().map(|h| h.started).collect();
        assert_eq!(rest, [12, 13], "the others, in the order they settled");
    }

    #[test]
    fn a_fault_shows_only_beside_the_record_it_was_written_with() {
        let fault = Fault {
            kind: FaultKind::Error,
            value: Value::from("boom"),
        };
        let ring = vec![
            RingRecord {
                slot: 0,
                nominal: 1,
                started: 5,
                ended: 6,
                faulted: true,
            },
            RingRecord {
                slot: 1,
                nominal: 2,
                started: 9,
                ended: 9,
                faulted: false,
            },
        ];
        let faults = HashMap::from([(0, (5, fault.clone())), (1, (3, fault.clone()))]);
        let merged = merge(4, ring.clone(), &faults).unwrap();
        assert_eq!(merged[0].started, 9, "newest first");
        assert!(
            merged[0].fault.is_none(),
            "a stale fault row of slot 1 is ignored"
        );
        assert_eq!(merged[1].fault.as_ref(), Some(&fault));
        assert!(
            merge(4, ring, &HashMap::new()).is_none(),
            "a missing fault is named"
        );
    }
}
