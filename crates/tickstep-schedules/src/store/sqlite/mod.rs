//! The `SQLite` backend: open (after [`integrity`](self::integrity) has looked), durable commits,
//! per-tick group commits, loading, and polling for operator stops.
//!
//! * [`sqlite_schema`] — tables and versioned migrations;
//! * [`damage`] — SQLite's "damaged" told apart from other failures;
//! * [`integrity`] — what opening checks before it writes anything (damaged, foreign, newer);
//! * [`columns`] — how a `SQLite` row gives up a column to the shared decoder;
//! * [`write`] — the one transaction that writes change sets, synced or behind the tick;
//! * [`checkpointer`] — the WAL checkpoints, on a thread of their own;
//! * [`write_behind`] — the per-tick cadence writes, behind the tick on a thread of their own;
//! * [`sqlite_inspector`] — the [`Inspector`](crate::Inspector)'s read-only connection to a file.

pub(crate) mod checkpointer;
pub(crate) mod columns;
pub(crate) mod damage;
pub(crate) mod integrity;
pub(crate) mod sqlite_inspector;
pub(crate) mod sqlite_schema;
pub(crate) mod write;
pub(crate) mod write_behind;

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, OptionalExtension};

use self::checkpointer::Checkpointer;
use self::integrity::store_error;
use self::sqlite_schema::{APPLICATION_ID, CURRENT_VERSION};
use self::write::write_changes;
use self::write_behind::{Queued, WriteBehind};
use crate::Error;
use crate::store::backend::{Backend, OpenPolicy};
use crate::store::codec::{self, to_sql};
use crate::store::history_in_flight::{self, HistoryInFlight};
use crate::store_rows::{ChangeSet, Durability, OperatorNote, RowSink};

/// How long a statement waits for another connection's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// One open store file.
pub(crate) struct SqliteStore {
    /// Writes the ticks' cadence updates behind them (docs/schedules.md §11.35); `None` for the
    /// operator's connection, and where the thread could not start. Declared first so that
    /// closing writes what it holds before anything else closes.
    writer: Option<WriteBehind>,
    /// The engine's store checkpoints on this thread, never in a commit (docs/schedules.md
    /// §11.34); `None` for the operator's short-lived connection, which keeps SQLite's automatic
    /// checkpoint. Declared before `conn` so that it closes first and `conn`, closing last,
    /// removes the WAL.
    checkpointer: Option<Checkpointer>,
    conn: Connection,
    path: PathBuf,
    /// The engine's namespace: the only rows it loads, and where its creations go
    /// (docs/schedules.md §15.2); [`Namespace::DEFAULT`](crate::Namespace::DEFAULT) for the
    /// operator's connection, which creates nothing.
    namespace: crate::Namespace,
    /// `PRAGMA data_version` when the stops table was last read: it changes only when another
    /// connection commits, so an unchanged value means no operator stop can have arrived.
    data_version: i64,
    /// The last `operator_stops.seq` this engine has seen.
    stops_seen: i64,
    /// Whether the file has the `operator_stops` table (version 2 on).
    has_stops: bool,
    /// The file's schema version as opened.
    version: i64,
    running_buf: String,
    /// Grouped commits handed to the writer thread (docs/schedules.md §11.42).
    handed: u64,
    /// The history records of those not yet written, for reads that do not wait for it.
    history_in_flight: HistoryInFlight,
    /// Schedules an operator stopped from outside, seen since the last commit: the next one
    /// deletes them again, which deletes any record of theirs written after the stop
    /// (docs/schedules.md §9.11).
    stopped_outside: Vec<u64>,
}

impl SqliteStore {
    /// Examines the file read-only (refusing a damaged, foreign or newer one without writing to
    /// it), then opens or creates it, switches it to WAL, and migrates it.
    pub(crate) fn open(path: &Path, policy: OpenPolicy) -> Result<Self, Error> {
        let verdict = integrity::examine(path, policy.share_file)?;
        let mut conn = Connection::open(path).map_err(Error::store("opening the store"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(Error::store("setting the busy timeout"))?;
        // Asked, not set: the journal mode as the file's header records it, read by SQLite.
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .map_err(|e| store_error(path, "reading the journal mode", e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            // The switch is the first write: a damaged file is refused before it
            // (docs/schedules.md §11.10).
            if !verdict.fresh && !verdict.checked {
                integrity::quick_check(&conn, path)?;
            }
            switch_to_wal(&conn, path)?;
        }
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(Error::store("setting synchronous"))?;
        // Pages are read with `read` calls, never through a memory map, whatever the SQLite
        // build's default: a file truncated under the engine is then an I/O error, not SIGBUS.
        conn.pragma_update(None, "mmap_size", 0)
            .map_err(Error::store("turning the memory map off"))?;
        // One plan per statement, whatever is bound to it: the build's planner otherwise marks
        // a statement to be compiled again whenever a new value is bound to a parameter it
        // looked at, and the history read was parsed and planned anew at every call
        // (docs/schedules.md §11.44).
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
            .map_err(Error::store("fixing the query plans"))?;
        sqlite_schema::migrate(&mut conn, verdict.version, policy.namespace)?;
        if verdict.fresh && !verdict.shared {
            conn.pragma_update(None, "application_id", APPLICATION_ID)
                .map_err(Error::store("stamping the store's application id"))?;
        }
        let mut store = SqliteStore::from_conn(conn, path, CURRENT_VERSION);
        store.namespace = policy.namespace;
        store.checkpointer = Checkpointer::start(path, BUSY_TIMEOUT);
        if store.checkpointer.is_some() {
            store
                .conn
                .pragma_update(None, "wal_autocheckpoint", 0)
                .map_err(|e| store_error(path, "leaving checkpoints to their thread", e))?;
        }
        store.writer = WriteBehind::start(
            path,
            policy.namespace,
            BUSY_TIMEOUT,
            store.checkpointer.as_ref().and_then(Checkpointer::waker),
        );
        store.stops_seen = store
            .conn
            .query_row(
                "SELECT COALESCE(MAX(seq), 0) FROM operator_stops",
                [],
                |r| r.get(0),
            )
            .map_err(|e| store_error(path, "reading operator stops", e))?;
        store.data_version = store.data_version()?;
        Ok(store)
    }

    /// Opens an existing store of a schema this build reads, for writing, without creating,
    /// converting or migrating anything: the operator's way in ([`Inspector::stop`]).
    ///
    /// [`Inspector::stop`]: crate::Inspector::stop
    pub(crate) fn open_existing(path: &Path) -> Result<Self, Error> {
        integrity::look(path)?;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(Error::store("opening the store"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(Error::store("setting the busy timeout"))?;
        let version = sqlite_schema::check_current(&conn, path)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(Error::store("setting synchronous"))?;
        Ok(SqliteStore::from_conn(conn, path, version))
    }

    fn from_conn(conn: Connection, path: &Path, version: i64) -> Self {
        SqliteStore {
            writer: None,
            checkpointer: None,
            conn,
            path: path.to_path_buf(),
            namespace: crate::Namespace::DEFAULT,
            data_version: 0,
            stops_seen: 0,
            has_stops: version >= 2,
            version,
            running_buf: String::new(),
            handed: 0,
            history_in_flight: HistoryInFlight::default(),
            stopped_outside: Vec::new(),
        }
    }

    fn set_synchronous(&self, level: &str) -> rusqlite::Result<()> {
        self.conn.pragma_update(None, "synchronous", level)
    }

    fn data_version(&self) -> Result<i64, Error> {
        self.conn
            .prepare_cached("PRAGMA data_version")
            .and_then(|mut stmt| stmt.query_row([], |r| r.get(0)))
            .map_err(|e| store_error(&self.path, "polling for operator stops", e))
    }

    /// An operator's stop: deletes the row and leaves a note for running engines, in one
    /// `synchronous=FULL` transaction; whether the row existed. Notes older than a week are pruned
    /// (an engine polls every tick; one paused longer than that never loads the row again anyway).
    pub(crate) fn stop_as_operator(&mut self, id: u64, now_unix_nanos: u64) -> Result<bool, Error> {
        const WEEK_NS: u64 = 7 * 24 * 3600 * 1_000_000_000;
        let context = "stopping a schedule as an operator";
        self.set_synchronous("FULL")
            .map_err(Error::store(context))?;
        let result = (|| {
            let tx = self.conn.unchecked_transaction()?;
            let removed = tx.execute("DELETE FROM schedules WHERE id = ?1", [to_sql(id)])?;
            if removed > 0 && self.has_stops {
                tx.execute(
                    "INSERT INTO operator_stops (id, stopped_at) VALUES (?1, ?2)",
                    [to_sql(id), to_sql(now_unix_nanos)],
                )?;
                tx.execute(
                    "DELETE FROM operator_stops WHERE stopped_at < ?1",
                    [to_sql(now_unix_nanos.saturating_sub(WEEK_NS))],
                )?;
            }
            tx.commit().map(|()| removed > 0)
        })();
        let restored = self.set_synchronous("NORMAL");
        result
            .and_then(|removed| restored.map(|()| removed))
            .map_err(|e| store_error(&self.path, context, e))
    }

    /// An operator's `action` on schedule `id` from outside any engine (docs/schedules.md §9.12),
    /// in one `synchronous=FULL` transaction: the row gets the state the action leaves, and a
    /// note tells the engines running on the file to apply it. `None` when the store holds no
    /// such schedule; else what the engine's own call returns.
    pub(crate) fn act_as_operator(
        &mut self,
        id: u64,
        action: &crate::store_rows::OperatorAction,
        now_unix_nanos: u64,
    ) -> Result<Option<u64>, Error> {
        let context = "acting on a schedule as an operator";
        if self.version < 7 {
            return Err(Error::invalid(
                self.path.display(),
                format!(
                    "this store has schema version {}; operator actions need version 7: open it \
                     with the engine once to migrate it (docs/schedules.md §9.12)",
                    self.version
                ),
            ));
        }
        self.set_synchronous("FULL")
            .map_err(Error::store(context))?;
        let path = self.path.clone();
        let sql = |e| store_error(&path, context, e);
        let result = (|| {
            // The write lock first (docs/schedules.md §11.46): a transaction that reads and then
            // writes cannot wait for another writer, whose commit makes what it read stale, so
            // SQLite fails its first write at once ("database is locked") whatever the busy
            // timeout. Taken at the start, the lock is waited for and the read is fresh.
            let tx = rusqlite::Transaction::new_unchecked(
                &self.conn,
                rusqlite::TransactionBehavior::Immediate,
            )
            .map_err(sql)?;
            let row = tx
                .query_row(
                    &format!("SELECT {} FROM schedules WHERE id = ?1", codec::COLUMNS),
                    [to_sql(id)],
                    columns::decode,
                )
                .optional()
                .map_err(sql)?;
            let Some(mut row) = row else {
                return Ok(None);
            };
            let seen = row.cadence.ops.as_ref().map_or(0, |ops| ops.note);
            let pending = {
                let mut stmt = tx
                    .prepare(
                        "SELECT seq, id, action FROM operator_stops \
                         WHERE id = ?1 AND seq > ?2 AND action IS NOT NULL ORDER BY seq",
                    )
                    .map_err(sql)?;
                let notes = stmt
                    .query_map([to_sql(id), to_sql(seen)], |r| {
                        Ok(codec::operator_note(
                            codec::from_sql(r.get(0)?),
                            codec::from_sql(r.get(1)?),
                            r.get::<_, Option<String>>(2)?.as_deref(),
                        ))
                    })
                    .map_err(sql)?;
                notes.collect::<Result<Vec<_>, _>>().map_err(sql)?
            };
            crate::row_actions::replay_pending(
                &mut row,
                pending.into_iter().flatten(),
                now_unix_nanos,
            );
            let answer = crate::row_actions::act_on_row(&mut row, action, now_unix_nanos)?;
            if answer > 0 {
                tx.execute(
                    "INSERT INTO operator_stops (id, stopped_at, action) VALUES (?1, ?2, ?3)",
                    rusqlite::params![to_sql(id), to_sql(now_unix_nanos), codec::json(action)],
                )
                .map_err(sql)?;
                // The row's state includes this note (docs/schedules.md §9.12).
                let seq = codec::from_sql(tx.last_insert_rowid());
                row.cadence.ops.get_or_insert_default().note = seq;
                tx.execute(
                    "UPDATE schedules SET ops = ?2, armed = ?3 WHERE id = ?1",
                    rusqlite::params![
                        to_sql(id),
                        row.cadence.ops.as_ref().map(codec::json),
                        row.cadence.armed
                    ],
                )
                .map_err(sql)?;
            }
            tx.commit().map_err(sql)?;
            Ok(Some(answer))
        })();
        let restored = self
            .set_synchronous("NORMAL")
            .map_err(Error::store(context));
        result.and_then(|answer| restored.map(|()| answer))
    }

    /// Sees that what the ticks handed the writer thread is written, so that a write on this
    /// connection is never overtaken by an older tick's updates, nor waits for its lock. What
    /// is still queued while the thread holds nothing is written here, on this connection, in
    /// one transaction of its own: the engine's thread never waits for a thread ten nice steps
    /// below it unless that thread is in the middle of a write (docs/schedules.md §11.51).
    fn wait_for_writer(&mut self) -> Result<(), Error> {
        let Some(writer) = &mut self.writer else {
            return Ok(());
        };
        let batches = match writer.take_queued() {
            Queued::Written => return Ok(()),
            Queued::Held => return writer.flush(),
            Queued::Taken(batches) => batches,
        };
        let started = std::time::Instant::now();
        match write_changes(&self.conn, &batches, self.namespace, &mut self.running_buf) {
            Ok(_) => {
                writer.wrote(batches.len(), started.elapsed());
                if let Some(checkpointer) = &self.checkpointer {
                    checkpointer.committed();
                }
                Ok(())
            }
            Err(error) => {
                writer.give_back(batches);
                Err(store_error(
                    &self.path,
                    "writing cadence updates behind the tick",
                    error,
                ))
            }
        }
    }

    fn write(&mut self, changes: &ChangeSet) -> rusqlite::Result<usize> {
        write_changes(
            &self.conn,
            std::iter::once(changes),
            self.namespace,
            &mut self.running_buf,
        )
    }
}

/// Switches the file to WAL. The switch needs the file to itself, and SQLite answers a switch
/// it cannot make at once with "busy" rather than waiting: another engine opening the same new
/// file at the same moment (docs/schedules.md §15.2) is switching or migrating it. So it is tried
/// again until [`BUSY_TIMEOUT`], and done once the file reads as WAL, whoever switched it.
fn switch_to_wal(conn: &Connection, path: &Path) -> Result<(), Error> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
            Ok(mode) if mode.eq_ignore_ascii_case("wal") => return Ok(()),
            // A file system or build without WAL: nothing to wait for.
            Ok(mode) => {
                return Err(Error::invalid(
                    path.display(),
                    format!(
                        "SQLite keeps this file in journal mode {mode:?}, not WAL, which the \
                         store needs (docs/schedules.md §11.1)"
                    ),
                ));
            }
            Err(e)
                if e.sqlite_error_code() != Some(rusqlite::ErrorCode::DatabaseBusy)
                    || std::time::Instant::now() >= deadline =>
            {
                return Err(store_error(path, "switching the store to WAL", e));
            }
            Err(_) => {}
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

impl Backend for SqliteStore {
    fn load(&mut self, sink: &mut dyn RowSink) -> Result<u64, Error> {
        let path = self.path.clone();
        let read = |e| store_error(&path, "loading schedules", e);
        let high_water: i64 = self
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'id_high_water'",
                [],
                |r| r.get(0),
            )
            .map_err(read)?;
        let namespace = self.namespace.as_str();
        let count: i64 = self
            .conn
            .query_row(
                "SELECT COUNT(*) FROM schedules WHERE namespace = ?1",
                [namespace],
                |r| r.get(0),
            )
            .map_err(read)?;
        sink.expect(usize::try_from(count).unwrap_or(0));
        // A scan, not an index: the load reads every row of the file's usual one namespace.
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {} FROM schedules WHERE namespace = ?1",
                codec::COLUMNS
            ))
            .map_err(read)?;
        let mut rows = stmt.query([namespace]).map_err(read)?;
        while let Some(row) = rows.next().map_err(read)? {
            sink.apply(columns::decode(row).map_err(read)?)?;
        }
        Ok(codec::from_sql(high_water))
    }

    fn reserve_ids(&mut self, next: u64, block: u64) -> Result<RangeInclusive<u64>, Error> {
        let context = "reserving schedule ids";
        self.wait_for_writer()?;
        self.set_synchronous("FULL")
            .map_err(Error::store(context))?;
        // One statement reads and raises the mark, under SQLite's write lock: engines of other
        // namespaces on the file take their blocks after or before this one, never the same ids
        // (docs/schedules.md §11.4, §15.2).
        let result = self.conn.query_row(
            "UPDATE meta SET value = MAX(value, ?1) + ?2 WHERE key = 'id_high_water' \
             RETURNING value",
            [to_sql(next.saturating_sub(1)), to_sql(block)],
            |r| r.get::<_, i64>(0),
        );
        let restored = self.set_synchronous("NORMAL");
        let end = codec::from_sql(
            result
                .and_then(|end| restored.map(|()| end))
                .map_err(|e| store_error(&self.path, context, e))?,
        );
        Ok(end.saturating_sub(block) + 1..=end)
    }

    fn release_ids(&mut self, last_used: u64, reserved_through: u64) -> Result<bool, Error> {
        let context = "giving back unused schedule ids";
        self.wait_for_writer()?;
        // Not fsync'd: a give-back lost to a power cut leaves the mark high, which only skips ids.
        let lowered = self
            .conn
            .execute(
                "UPDATE meta SET value = ?1 WHERE key = 'id_high_water' AND value = ?2",
                [to_sql(last_used), to_sql(reserved_through)],
            )
            .map_err(|e| store_error(&self.path, context, e))?;
        Ok(lowered == 1)
    }

    fn commit(&mut self, changes: &mut ChangeSet, durability: Durability) -> Result<usize, Error> {
        let context = match durability {
            Durability::Synced => "committing schedule creations and stops",
            Durability::Grouped => "group-committing cadence updates",
        };
        // Lost if this write fails: a stray record is never read (its id is never reused).
        changes.deletes.append(&mut self.stopped_outside);
        if durability == Durability::Grouped
            && let Some(writer) = &mut self.writer
        {
            let history = changes.history.clone();
            match writer.queue(std::mem::take(changes)) {
                // Behind the tick; the writer tells the checkpointer. Nobody reads the count of
                // a group commit.
                Ok(()) => {
                    self.handed += 1;
                    let written = writer.written(self.handed);
                    self.history_in_flight.handed(self.handed, history, written);
                    return Ok(0);
                }
                // The thread has stopped: this tick writes them itself.
                Err(back) => *changes = back,
            }
        }
        let result = if durability == Durability::Grouped {
            self.write(changes)
        } else {
            self.wait_for_writer()?;
            self.set_synchronous("FULL")
                .map_err(Error::store(context))?;
            let result = self.write(changes);
            let restored = self.set_synchronous("NORMAL");
            result.and_then(|removed| restored.map(|()| removed))
        };
        if !changes.is_empty()
            && let Some(checkpointer) = &self.checkpointer
        {
            checkpointer.committed();
        }
        result.map_err(|e| store_error(&self.path, context, e))
    }

    fn flush(&mut self) -> Result<(), Error> {
        self.wait_for_writer()
    }

    fn operator_actions(&mut self) -> Result<Vec<OperatorNote>, Error> {
        let path = &self.path;
        let read = |e| store_error(path, "reading operator actions", e);
        let mut stmt = self.conn.prepare(codec::SELECT_ACTIONS).map_err(read)?;
        let mut rows = stmt.query([]).map_err(read)?;
        let mut notes = Vec::new();
        while let Some(row) = rows.next().map_err(read)? {
            let seq: i64 = row.get(0).map_err(read)?;
            let id = codec::from_sql(row.get(1).map_err(read)?);
            let action: Option<String> = row.get(2).map_err(read)?;
            notes.extend(codec::operator_note(
                codec::from_sql(seq),
                id,
                action.as_deref(),
            ));
        }
        Ok(notes)
    }

    /// Never waits for the writer: what it has not written yet is laid over what the file
    /// holds (`history_in_flight`).
    fn history(
        &mut self,
        id: u64,
        settled: u64,
    ) -> Result<Vec<crate::store_rows::HistoryRow>, Error> {
        let unwritten = self.history_in_flight.of(id, self.durable_behind());
        let mut rows = read_history(&self.conn, &self.path, id, settled)?;
        history_in_flight::overlay(&mut rows, unwritten);
        Ok(rows)
    }

    fn handed_behind(&self) -> u64 {
        self.handed
    }

    fn durable_behind(&self) -> u64 {
        self.writer
            .as_ref()
            .map_or(self.handed, |writer| writer.written(self.handed))
    }

    fn poll_stops(&mut self, notes: &mut Vec<OperatorNote>) -> Result<(), Error> {
        if !self.has_stops {
            return Ok(());
        }
        let version = self.data_version()?;
        if version == self.data_version {
            return Ok(());
        }
        let path = &self.path;
        let read = |e| store_error(path, "polling for operator stops", e);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT seq, id, action FROM operator_stops WHERE seq > ?1 ORDER BY seq",
            )
            .map_err(read)?;
        let mut rows = stmt.query([self.stops_seen]).map_err(read)?;
        let mut seen = self.stops_seen;
        while let Some(row) = rows.next().map_err(read)? {
            seen = row.get(0).map_err(read)?;
            let id = codec::from_sql(row.get(1).map_err(read)?);
            let action: Option<String> = row.get(2).map_err(read)?;
            if let Some(note) = codec::operator_note(codec::from_sql(seen), id, action.as_deref()) {
                if note.action.is_none() {
                    self.stopped_outside.push(id);
                }
                notes.push(note);
            }
        }
        drop(rows);
        drop(stmt);
        self.stops_seen = seen;
        self.data_version = version;
        Ok(())
    }
}

/// The history of schedule `id` in the store file behind `conn`, newest first
/// (docs/schedules.md §9.11), read from the slots that `settled` settled firings can have
/// filled (`u64::MAX` when the count is not known); a record that does not decode is refused
/// naming it.
pub(crate) fn read_history(
    conn: &Connection,
    path: &Path,
    id: u64,
    settled: u64,
) -> Result<Vec<crate::store_rows::HistoryRow>, Error> {
    let read = |e| store_error(path, "reading a schedule's history", e);
    let Some(slots) = codec::history_slots(settled) else {
        return Ok(Vec::new());
    };
    let mut stmt = conn.prepare_cached(codec::SELECT_HISTORY).map_err(read)?;
    let params = std::iter::once(to_sql(id)).chain(slots);
    let mut rows = stmt
        .query(rusqlite::params_from_iter(params))
        .map_err(read)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(read)? {
        let columns = (
            row.get(0).map_err(read)?,
            row.get(1).map_err(read)?,
            row.get(2).map_err(read)?,
            row.get(3).map_err(read)?,
        );
        let fault: Option<String> = row.get(4).map_err(read)?;
        let record = codec::history_row(id, columns, fault.as_deref()).ok_or_else(|| {
            read(rusqlite::Error::FromSqlConversionFailure(
                4,
                rusqlite::types::Type::Text,
                format!(
                    "schedule {id}: bad fault in firing_history row: {:?}",
                    crate::limits::excerpt(fault.as_deref().unwrap_or(""))
                )
                .into(),
            ))
        })?;
        out.push(record);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{SqliteStore, WriteBehind};
    use crate::store::backend::{Backend, OpenPolicy};
    use crate::store_rows::{ChangeSet, Durability};

    /// docs/schedules.md §11.51: a synced commit behind queued group commits writes them itself
    /// when the writer thread holds nothing, and never waits for that thread. The writer here
    /// never runs (as a thread ten nice steps down on a busy machine may not for a tenth of a
    /// second); it ends after a bound, so that waiting for it fails the test instead of hanging.
    #[test]
    fn a_synced_commit_writes_the_queue_itself_instead_of_waiting_for_the_writer() {
        let dir = tempfile::tempdir().unwrap();
        let policy = OpenPolicy {
            share_file: false,
            stop_poll: Duration::from_millis(10),
            lease: Duration::from_secs(10),
            namespace: crate::Namespace::DEFAULT,
            node: None,
        };
        let mut store = SqliteStore::open(&dir.path().join("s.db"), policy).unwrap();
        store.writer = Some(WriteBehind::stalled(Duration::from_secs(30)));
        for id in 1..=3 {
            let mut grouped = ChangeSet {
                deletes: vec![id],
                ..ChangeSet::default()
            };
            store.commit(&mut grouped, Durability::Grouped).unwrap();
        }
        assert_eq!((store.handed_behind(), store.durable_behind()), (3, 0));
        let mut synced = ChangeSet {
            deletes: vec![4],
            ..ChangeSet::default()
        };
        store
            .commit(&mut synced, Durability::Synced)
            .expect("committed without the writer thread");
        assert_eq!(
            store.durable_behind(),
            3,
            "the queued batches written first"
        );
        // An id reservation, the other write on the engine's connection, does the same.
        let mut grouped = ChangeSet {
            deletes: vec![5],
            ..ChangeSet::default()
        };
        store.commit(&mut grouped, Durability::Grouped).unwrap();
        let block = store
            .reserve_ids(1, 8)
            .expect("reserved without the writer thread");
        assert_eq!(block.count(), 8);
        assert_eq!(store.durable_behind(), 4);
    }
}
