//! The SQLite store: open and migrate, durable commits, per-tick group commits, loading.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::codec::{self, CadenceRow, from_sql, to_sql};
use super::schema;
use crate::engine::entry::Entry;
use crate::engine::{Core, InFlight, Interner, RunRecord};
use crate::{Error, ScheduleId};

/// One open store file.
pub(crate) struct SqliteStore {
    conn: Connection,
}

impl SqliteStore {
    /// Opens or creates the file, switches it to WAL, and migrates it.
    pub(crate) fn open(path: &Path) -> Result<Self, Error> {
        let mut conn = Connection::open(path).map_err(Error::store("opening the store"))?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(Error::store("switching the store to WAL"))?;
        debug_assert_eq!(mode.to_ascii_lowercase(), "wal");
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(Error::store("setting synchronous"))?;
        conn.busy_timeout(Duration::from_secs(5))
            .map_err(Error::store("setting the busy timeout"))?;
        schema::migrate(&mut conn)?;
        Ok(SqliteStore { conn })
    }

    /// Opens an existing store of exactly this build's schema for writing, without creating,
    /// converting or migrating anything: the operator's way in ([`Inspector::stop`]).
    ///
    /// [`Inspector::stop`]: crate::Inspector::stop
    pub(crate) fn open_existing(path: &Path) -> Result<Self, Error> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(Error::store("opening the store"))?;
        conn.busy_timeout(Duration::from_secs(5))
            .map_err(Error::store("setting the busy timeout"))?;
        schema::check_current(&conn, path)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(Error::store("setting synchronous"))?;
        Ok(SqliteStore { conn })
    }

    fn set_synchronous(&self, level: &str) -> rusqlite::Result<()> {
        self.conn.pragma_update(None, "synchronous", level)
    }

    /// Raises the id high-water mark to `through`, fsync'd before returning.
    pub(crate) fn reserve_ids(&self, through: u64) -> Result<(), Error> {
        let context = "reserving schedule ids";
        self.set_synchronous("FULL")
            .map_err(Error::store(context))?;
        let result = self.conn.execute(
            "UPDATE meta SET value = MAX(value, ?1) WHERE key = 'id_high_water'",
            [to_sql(through)],
        );
        let restored = self.set_synchronous("NORMAL");
        result
            .and(restored)
            .map(drop)
            .map_err(Error::store(context))
    }

    /// Creations and stops in one transaction, fsync'd before returning; how many of the `gone`
    /// rows existed.
    pub(crate) fn commit_durable(
        &self,
        rows: &[&Entry],
        gone: &[u64],
        verbs: &Interner,
    ) -> Result<usize, Error> {
        let context = "committing schedule creations and stops";
        self.set_synchronous("FULL")
            .map_err(Error::store(context))?;
        let result = (|| {
            let mut removed = 0;
            let tx = self.conn.unchecked_transaction()?;
            {
                let mut insert = tx.prepare_cached(codec::INSERT)?;
                for e in rows {
                    codec::insert(&mut insert, e, verbs)?;
                }
                let mut delete = tx.prepare_cached("DELETE FROM schedules WHERE id = ?1")?;
                for &id in gone {
                    removed += delete.execute([to_sql(id)])?;
                }
            }
            tx.commit().map(|()| removed)
        })();
        let restored = self.set_synchronous("NORMAL");
        result
            .and_then(|removed| restored.map(|()| removed))
            .map_err(Error::store(context))
    }

    /// The per-tick group commit: cadence state of `entries`, deletion of `doomed` rows.
    pub(crate) fn write_cadence<'a>(
        &self,
        entries: impl Iterator<Item = &'a Entry>,
        doomed: &[u64],
    ) -> Result<(), Error> {
        let result = (|| {
            let tx = self.conn.unchecked_transaction()?;
            {
                let mut update = tx.prepare_cached(codec::UPDATE_CADENCE)?;
                let mut running = String::new();
                for e in entries {
                    CadenceRow::new(e, &mut running).bind(&mut update, &running)?;
                    update.raw_execute()?;
                }
                let mut delete = tx.prepare_cached("DELETE FROM schedules WHERE id = ?1")?;
                for &id in doomed {
                    delete.execute([to_sql(id)])?;
                }
            }
            tx.commit()
        })();
        result.map_err(Error::store("group-committing cadence updates"))
    }

    /// Loads every saved schedule into `core`, re-registers in-flight firings as interrupted, and
    /// applies catch-up to interrupted recurring schedules.
    pub(crate) fn load_into(&self, core: &mut Core, now: u64) -> Result<(), Error> {
        let high_water: u64 = self
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'id_high_water'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(from_sql)
            .map_err(codec::load_error)?;
        let count: i64 = self
            .conn
            .query_row("SELECT COUNT(*) FROM schedules", [], |r| r.get(0))
            .map_err(codec::load_error)?;
        core.table.reserve(usize::try_from(count).unwrap_or(0));
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {} FROM schedules", codec::COLUMNS))
            .map_err(codec::load_error)?;
        let mut rows = stmt.query([]).map_err(codec::load_error)?;
        let mut max_id = 0;
        let mut interrupted_ids = Vec::new();
        let mut deadlines = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
        while let Some(row) = rows.next().map_err(codec::load_error)? {
            let (mut entry, running) =
                codec::decode(row, &mut core.verbs).map_err(codec::load_error)?;
            max_id = max_id.max(entry.id);
            if !running.is_empty() {
                for r in &running {
                    core.runs.insert(
                        r.run,
                        RunRecord {
                            schedule: entry.id,
                            started: None,
                        },
                    );
                    core.interrupted.push(InFlight {
                        schedule: ScheduleId::from_raw(entry.id),
                        run: r.run,
                        nominal_unix_nanos: r.nominal,
                    });
                }
                interrupted_ids.push(entry.id);
                entry.extra_mut().running = running;
            }
            if entry.armed {
                deadlines.push((entry.fire_at, entry.id));
            }
            core.table.place(entry);
        }
        core.table.arm_in_bulk(deadlines);
        core.last_id = high_water.max(max_id);
        core.reserved_through = high_water;
        for id in interrupted_ids {
            core.catch_up_interrupted(id, now);
        }
        Ok(())
    }
}

impl Core {
    /// Step 4 of a tick: writes every dirty entry's cadence and deletes retired rows, in one
    /// transaction. On failure everything stays pending.
    pub(crate) fn group_commit(&mut self) -> Result<(), Error> {
        let Some(store) = &self.store else {
            return Ok(());
        };
        if self.dirty.is_empty() && self.doomed_rows.is_empty() {
            return Ok(());
        }
        let table = &self.table;
        let entries = self
            .dirty
            .iter()
            .filter_map(|&id| table.get(id))
            .filter(|e| e.is_live() && e.persist);
        store.write_cadence(entries, &self.doomed_rows)?;
        for id in self.dirty.drain(..) {
            if let Some(e) = self.table.get_mut(id) {
                e.dirty = false;
            }
        }
        self.doomed_rows.clear();
        Ok(())
    }
}
