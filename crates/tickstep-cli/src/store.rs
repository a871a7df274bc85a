//! Reading a schedule store the way an operator does: plain SQL on the `SQLite` file, opened
//! read-only, so it works while a demo (or any engine) is writing it — WAL gives readers a
//! consistent snapshot without blocking the writer.
//!
//! The columns are the schedules crate's documented on-disk schema (version 1): times are Unix
//! nanoseconds and counters are `u64` stored bit-for-bit in `SQLite`'s signed integers; arguments,
//! state and faults are JSON.

use std::path::Path;

use rusqlite::{Connection, OpenFlags, OptionalExtension, Row};
use serde_json::{Value as Json, json};

/// The newest schema version this reader understands.
const SCHEMA_VERSION: i64 = 1;

/// One schedule row.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Row1 {
    pub(crate) id: u64,
    pub(crate) kind: String,
    pub(crate) target: i64,
    pub(crate) verb: String,
    pub(crate) args: Json,
    pub(crate) state: Json,
    pub(crate) owner: i64,
    pub(crate) player: i64,
    pub(crate) interval_ns: u64,
    pub(crate) interval_clamped: bool,
    pub(crate) jitter_ns: u64,
    pub(crate) max_faults: u64,
    pub(crate) catchup: String,
    pub(crate) overlap: String,
    pub(crate) adaptive: bool,
    pub(crate) pass_elapsed: bool,
    pub(crate) created_at: u64,
    pub(crate) next_run: u64,
    pub(crate) fire_at: u64,
    pub(crate) last_run: u64,
    pub(crate) run_count: u64,
    pub(crate) fault_count: u64,
    pub(crate) consecutive_faults: u64,
    pub(crate) missed_count: u64,
    pub(crate) overlap_count: u64,
    pub(crate) last_duration_ns: u64,
    pub(crate) last_fault: Json,
    pub(crate) running: Json,
}

const COLUMNS: &str = "id, kind, target, verb, args, state, owner, player, interval_ns, \
    interval_clamped, jitter_ns, max_faults, catchup, overlap, adaptive, pass_elapsed, created_at, \
    next_run, fire_at, last_run, run_count, fault_count, consecutive_faults, missed_count, \
    overlap_count, last_duration_ns, last_fault, running";

/// Bits-preserving `i64` → `u64`, as the store writes them.
fn unsigned(n: i64) -> u64 {
    u64::from_ne_bytes(n.to_ne_bytes())
}

fn parse_json(text: Option<String>) -> Json {
    text.and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Json::Null)
}

impl Row1 {
    fn read(row: &Row<'_>) -> rusqlite::Result<Row1> {
        let u = |i: usize| row.get::<_, i64>(i).map(unsigned);
        let b = |i: usize| row.get::<_, i64>(i).map(|v| v != 0);
        let j = |i: usize| row.get::<_, Option<String>>(i).map(parse_json);
        Ok(Row1 {
            id: u(0)?,
            kind: row.get(1)?,
            target: row.get(2)?,
            verb: row.get(3)?,
            args: j(4)?,
            state: j(5)?,
            owner: row.get(6)?,
            player: row.get(7)?,
            interval_ns: u(8)?,
            interval_clamped: b(9)?,
            jitter_ns: u(10)?,
            max_faults: u(11)?,
            catchup: row.get(12)?,
            overlap: row.get(13)?,
            adaptive: b(14)?,
            pass_elapsed: b(15)?,
            created_at: u(16)?,
            next_run: u(17)?,
            fire_at: u(18)?,
            last_run: u(19)?,
            run_count: u(20)?,
            fault_count: u(21)?,
            consecutive_faults: u(22)?,
            missed_count: u(23)?,
            overlap_count: u(24)?,
            last_duration_ns: u(25)?,
            last_fault: j(26)?,
            running: j(27)?,
        })
    }

    /// The seed's `schedule_info` shape: times as float Unix seconds (0.0 for never), durations
    /// as integer nanoseconds, absent values as 0.
    pub(crate) fn to_json(&self) -> Json {
        let secs = |ns: u64| ns as f64 / 1e9;
        let running_task = self
            .running
            .as_array()
            .and_then(|runs| runs.first())
            .and_then(|run| run.get(0))
            .cloned()
            .unwrap_or(json!(0));
        json!({
            "id": self.id,
            "target": self.target,
            "verb": self.verb,
            "args": if self.args.is_null() { json!([]) } else { self.args.clone() },
            "owner": self.owner,
            "authority": self.owner,
            "kind": self.kind,
            "interval": secs(self.interval_ns),
            "created_at": secs(self.created_at),
            "next_run": secs(self.fire_at),
            "last_run": secs(self.last_run),
            "run_count": self.run_count,
            "fault_count": self.fault_count,
            "consecutive_faults": self.consecutive_faults,
            "last_fault": if self.last_fault.is_null() { json!(0) } else { self.last_fault.clone() },
            "missed_count": self.missed_count,
            "overlap_count": self.overlap_count,
            "last_duration_ns": self.last_duration_ns,
            "running_task": running_task,
            "interval_clamped": self.interval_clamped,
            "adaptive": self.adaptive,
            "catchup": self.catchup,
            "overlap": self.overlap,
            "jitter": secs(self.jitter_ns),
            "max_faults": self.max_faults,
            "pass_elapsed": self.pass_elapsed,
            "persist": true,
            "player": self.player,
            "state": if self.state.is_null() { json!(0) } else { self.state.clone() },
        })
    }
}

/// A store opened for reading.
pub(crate) struct Store {
    conn: Connection,
}

impl Store {
    /// Opens `path` read-only; refuses a missing file and a newer schema.
    pub(crate) fn open_read_only(path: &Path) -> Result<Store, String> {
        if !path.exists() {
            return Err(format!(
                "no schedule store at {} (run `tickstep demo --db {}` to create one)",
                path.display(),
                path.display()
            ));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(|e| e.to_string())?;
        let store = Store { conn };
        store.check_schema(path)?;
        Ok(store)
    }

    /// Opens `path` for the one write an operator makes (stop).
    pub(crate) fn open_for_stop(path: &Path) -> Result<Store, String> {
        let read = Self::open_read_only(path)?;
        drop(read);
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(|e| e.to_string())?;
        // Durable before we say so, as the engine's own stop is.
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(|e| e.to_string())?;
        Ok(Store { conn })
    }

    fn check_schema(&self, path: &Path) -> Result<(), String> {
        let not_a_store = |e: rusqlite::Error| {
            format!("{} is not a tickstep schedule store: {e}", path.display())
        };
        let version: i64 = self
            .conn
            .query_row(
                "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                [],
                |r| r.get(0),
            )
            .map_err(not_a_store)?;
        if version > SCHEMA_VERSION {
            return Err(format!(
                "{} has schema version {version}; this build reads up to {SCHEMA_VERSION}",
                path.display()
            ));
        }
        Ok(())
    }

    /// Every saved schedule, by id.
    pub(crate) fn list(&self) -> Result<Vec<Row1>, String> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {COLUMNS} FROM schedules ORDER BY id"))
            .map_err(|e| e.to_string())?;
        let rows = stmt.query_map([], Row1::read).map_err(|e| e.to_string())?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())
    }

    /// One schedule, or `None`.
    pub(crate) fn get(&self, id: u64) -> Result<Option<Row1>, String> {
        self.conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM schedules WHERE id = ?1"),
                [i64::from_ne_bytes(id.to_ne_bytes())],
                Row1::read,
            )
            .optional()
            .map_err(|e| e.to_string())
    }

    /// Removes a saved schedule, as `schedule_stop` does for a live one; whether it existed.
    pub(crate) fn stop(&self, id: u64) -> Result<bool, String> {
        let removed = self
            .conn
            .execute(
                "DELETE FROM schedules WHERE id = ?1",
                [i64::from_ne_bytes(id.to_ne_bytes())],
            )
            .map_err(|e| e.to_string())?;
        Ok(removed > 0)
    }

    /// The ids saved in the store (what a running demo compares against).
    pub(crate) fn ids(&self) -> Result<Vec<u64>, String> {
        let mut stmt = self
            .conn
            .prepare("SELECT id FROM schedules")
            .map_err(|e| e.to_string())?;
        let ids = stmt
            .query_map([], |r| r.get::<_, i64>(0).map(unsigned))
            .map_err(|e| e.to_string())?;
        ids.collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())
    }
}
