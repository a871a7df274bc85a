//! Operator stops on `PostgreSQL` (docs/schedules.md §11.21–§11.23): the operator's side writes a
//! note, the store thread's side notices it without the engine's thread waiting.
//!
//! * [`stop_as_operator`] deletes the schedule's row, appends a note to
//!   `tickstep_operator_stops` and sends `NOTIFY tickstep_stops` — one transaction, so either all
//!   three happen or none, and the notification is delivered only once the stop is committed.
//! * [`StopWatch`] lives on the store thread: at most once per `Config::tick` it reads the notes
//!   past the last `seq` it has seen (one indexed round trip, on the store thread, never on the
//!   tick) and hands their ids to the engine through a channel, which
//!   [`Backend::poll_stops`](crate::store::Backend::poll_stops) drains without blocking. A flush
//!   reads them too, so a stop committed before it reaches the engine's next poll.
//!
//! Why polling and not `LISTEN`: the synchronous client reads a notification only while it waits
//! on its socket, and waiting would hold the one thread that writes the ticks' updates. A poll by
//! `seq` also needs nothing special after a reconnection (notifications sent while disconnected
//! are lost; notes are not). The `NOTIFY` is still sent, for tools and nodes that do listen.

use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use postgres::Client;

use super::database_error;
use crate::Error;
use crate::store::codec::{from_sql, operator_note, to_sql};
use crate::store_rows::OperatorNote;

/// The notification channel a stop is announced on.
pub(crate) const CHANNEL: &str = "tickstep_stops";

/// Notes older than this are pruned by the next operator stop (as in the `SQLite` store: an
/// engine paused longer never loads the row again anyway).
const KEEP_NOTES_NS: u64 = 7 * 24 * 3600 * 1_000_000_000;

/// An operator's stop of schedule `id`: deletes the row, leaves a note and notifies listening
/// engines, in one transaction; whether the row existed (no note when it did not, nor on a
/// version-1 store, which has no notes table: `notes` false).
pub(crate) fn stop_as_operator(
    client: &mut Client,
    id: u64,
    now_unix_nanos: u64,
    notes: bool,
) -> Result<bool, Error> {
    let context = "stopping a schedule as an operator";
    let mut tx = client.transaction().map_err(database_error(context))?;
    let removed = tx
        .execute(
            "DELETE FROM tickstep_schedules WHERE id = $1",
            &[&to_sql(id)],
        )
        .map_err(database_error(context))?;
    if removed > 0 && notes {
        tx.execute(
            "INSERT INTO tickstep_operator_stops (schedule_id, stopped_at_ns) VALUES ($1, $2)",
            &[&to_sql(id), &to_sql(now_unix_nanos)],
        )
        .map_err(database_error(context))?;
        tx.execute(
            "DELETE FROM tickstep_operator_stops WHERE stopped_at_ns < $1",
            &[&to_sql(now_unix_nanos.saturating_sub(KEEP_NOTES_NS))],
        )
        .map_err(database_error(context))?;
        tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &id.to_string()])
            .map_err(database_error(context))?;
    }
    tx.commit().map_err(database_error(context))?;
    Ok(removed > 0)
}

/// The store thread's watch for operator stops.
/// An operator's `action` on schedule `id` from outside any engine (docs/schedules.md §9.12),
/// in one transaction: the row (locked) gets the state the action leaves, and a note and a
/// `NOTIFY` tell the node holding it to apply it. `None` when the database holds no such
/// schedule; else what the engine's own call returns.
pub(crate) fn act_as_operator(
    client: &mut Client,
    id: u64,
    action: &crate::store_rows::OperatorAction,
    now_unix_nanos: u64,
) -> Result<Option<u64>, Error> {
    let context = "acting on a schedule as an operator";
    let mut tx = client.transaction().map_err(database_error(context))?;
    let row = tx
        .query_opt(
            &format!("{} WHERE id = $1 FOR UPDATE", super::pg_codec::select_all()),
            &[&to_sql(id)],
        )
        .map_err(database_error(context))?;
    let Some(row) = row else {
        return Ok(None);
    };
    let mut row =
        super::pg_codec::decode(&row).map_err(|source| Error::Database { context, source })?;
    let seen = row.cadence.ops.as_ref().map_or(0, |ops| ops.note);
    let pending = tx
        .query(
            "SELECT seq, schedule_id, action FROM tickstep_operator_stops \
             WHERE schedule_id = $1 AND seq > $2 AND action IS NOT NULL ORDER BY seq",
            &[&to_sql(id), &to_sql(seen)],
        )
        .map_err(database_error(context))?;
    let pending = pending.iter().filter_map(|r| {
        operator_note(
            from_sql(r.get(0)),
            from_sql(r.get(1)),
            r.get::<_, Option<&str>>(2),
        )
    });
    crate::row_actions::replay_pending(&mut row, pending, now_unix_nanos);
    let answer = crate::row_actions::act_on_row(&mut row, action, now_unix_nanos)?;
    if answer > 0 {
        let seq: i64 = tx
            .query_one(
                "INSERT INTO tickstep_operator_stops (schedule_id, stopped_at_ns, action) \
                 VALUES ($1, $2, $3) RETURNING seq",
                &[
                    &to_sql(id),
                    &to_sql(now_unix_nanos),
                    &crate::store::codec::json(action),
                ],
            )
            .map_err(database_error(context))?
            .get(0);
        // The row's state includes this note (docs/schedules.md §9.12).
        row.cadence.ops.get_or_insert_default().note = from_sql(seq);
        let ops = row.cadence.ops.as_ref().map(crate::store::codec::json);
        tx.execute(
            "UPDATE tickstep_schedules SET ops = $2, armed = $3 WHERE id = $1",
            &[&to_sql(id), &ops, &row.cadence.armed],
        )
        .map_err(database_error(context))?;
        tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &id.to_string()])
            .map_err(database_error(context))?;
    }
    tx.commit().map_err(database_error(context))?;
    Ok(Some(answer))
}

/// Every operator note that carries an action, oldest first (docs/schedules.md §9.12).
pub(super) fn operator_actions(client: &mut Client) -> Result<Vec<OperatorNote>, Error> {
    let rows = client
        .query(
            "SELECT seq, schedule_id, action FROM tickstep_operator_stops \
             WHERE action IS NOT NULL ORDER BY seq",
            &[],
        )
        .map_err(database_error("reading operator actions"))?;
    Ok(rows
        .iter()
        .filter_map(|row| {
            let action: Option<String> = row.get(2);
            let seq: i64 = row.get(0);
            operator_note(from_sql(seq), from_sql(row.get(1)), action.as_deref())
        })
        .collect())
}

pub(super) struct StopWatch {
    /// The last note's `seq` handed to the engine.
    seen: i64,
    interval: Duration,
    next_poll: Instant,
    out: Sender<OperatorNote>,
}

impl StopWatch {
    /// Starts watching: takes the newest note as already seen (a stop committed before the
    /// engine loads is not in the rows it loads).
    pub(super) fn start(
        client: &mut Client,
        interval: Duration,
        out: Sender<OperatorNote>,
    ) -> Result<Self, Error> {
        let seen = client
            .query_one(
                "SELECT COALESCE(MAX(seq), 0) FROM tickstep_operator_stops",
                &[],
            )
            .map_err(database_error("reading operator stops"))?
            .get(0);
        Ok(StopWatch {
            seen,
            interval,
            next_poll: Instant::now() + interval,
            out,
        })
    }

    /// When the next poll is due.
    pub(super) fn next_poll(&self) -> Instant {
        self.next_poll
    }

    /// Reads the notes if one interval has passed since the last poll. A failure is retried at
    /// the next poll, from the same `seq`: nothing is marked seen that was not handed over.
    /// Returns how many notes it handed over.
    pub(super) fn poll_if_due(&mut self, client: &mut Client) -> Result<usize, Error> {
        let now = Instant::now();
        if now < self.next_poll {
            return Ok(0);
        }
        self.next_poll = now + self.interval;
        self.read_notes(client)
    }

    /// Reads every note past the last one seen and hands its id to the engine; how many.
    pub(super) fn read_notes(&mut self, client: &mut Client) -> Result<usize, Error> {
        let rows = client
            .query(
                "SELECT seq, schedule_id, action FROM tickstep_operator_stops WHERE seq > $1 \
                 ORDER BY seq",
                &[&self.seen],
            )
            .map_err(database_error("reading operator stops"))?;
        for row in &rows {
            // The engine gone means nobody is left to tell; the thread ends on its own.
            let action: Option<String> = row.get(2);
            let seq: i64 = row.get(0);
            if let Some(note) =
                operator_note(from_sql(seq), from_sql(row.get(1)), action.as_deref())
            {
                let _ = self.out.send(note);
            }
            self.seen = row.get(0);
        }
        Ok(rows.len())
    }
}
