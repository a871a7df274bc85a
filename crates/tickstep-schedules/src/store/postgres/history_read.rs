//! Reading a schedule's firing history from a `PostgreSQL` store (docs/schedules.md §9.11), for
//! the engine's store thread and the inspector alike: the ring in the row ([`history_ring`])
//! with the faults kept beside it, or a row per record in a database older than the ring.

use super::history_ring;
use super::{database_error, pg_codec};
use crate::Error;
use crate::store::codec::{from_sql, to_sql};
use crate::store_rows::HistoryRow;

/// Schedule `id`'s history in the database behind `client`, of schema `version`, newest first
/// (docs/schedules.md §9.11): from the row's ring and the faulted records' rows (version 10 on),
/// or from a row per record (versions 7 to 9). A record that does not decode is refused naming
/// it.
pub(super) fn read_history(
    client: &mut postgres::Client,
    id: u64,
    version: i64,
) -> Result<Vec<HistoryRow>, Error> {
    let context = "reading a schedule's history";
    if version < 10 {
        return read_history_rows(client, id);
    }
    let bad = |what: String| Error::Database {
        context,
        source: what.into(),
    };
    let ring: Option<Vec<u8>> = client
        .query_opt(pg_codec::SELECT_RING, &[&to_sql(id)])
        .map_err(database_error(context))?
        .and_then(|r| r.get(0));
    let Some(ring) = ring else {
        return Ok(Vec::new());
    };
    let ring = history_ring::decode(&ring)
        .ok_or_else(|| bad(format!("schedule {id}: its history column is not a ring")))?;
    let mut faults = std::collections::HashMap::new();
    if ring.iter().any(|r| r.faulted) {
        for r in client
            .query(pg_codec::SELECT_FAULTS, &[&to_sql(id)])
            .map_err(database_error(context))?
        {
            let text: String = r.get(2);
            let fault = crate::store::codec::parse_fault(&text).ok_or_else(|| {
                bad(format!(
                    "schedule {id}: bad fault in tickstep_firing_history row: {:?}",
                    crate::limits::excerpt(&text)
                ))
            })?;
            if let Ok(slot) = u32::try_from(r.get::<_, i32>(0)) {
                faults.insert(slot, (from_sql(r.get(1)), fault));
            }
        }
    }
    history_ring::merge(id, ring, &faults).ok_or_else(|| {
        bad(format!(
            "schedule {id}: a faulted firing's fault is missing"
        ))
    })
}

/// [`read_history`] of a database of schema version 7 to 9: a row per record.
fn read_history_rows(client: &mut postgres::Client, id: u64) -> Result<Vec<HistoryRow>, Error> {
    let context = "reading a schedule's history";
    let rows = client
        .query(pg_codec::SELECT_HISTORY, &[&to_sql(id)])
        .map_err(database_error(context))?;
    rows.iter()
        .map(|r| {
            let fault: Option<String> = r.get(4);
            crate::store::codec::history_row(
                id,
                (i64::from(r.get::<_, i32>(0)), r.get(1), r.get(2), r.get(3)),
                fault.as_deref(),
            )
            .ok_or_else(|| Error::Database {
                context,
                source: format!(
                    "schedule {id}: bad fault in tickstep_firing_history row: {:?}",
                    crate::limits::excerpt(fault.as_deref().unwrap_or(""))
                )
                .into(),
            })
        })
        .collect()
}
