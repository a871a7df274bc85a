//! The store's schema and its migrations.
//!
//! `schema_migrations` records every migration applied, one row per version, so an operator (or a
//! later build) can see exactly what shape the file has. Opening runs the migrations the file has
//! not seen, each in its own transaction; a file from a newer build is refused rather than
//! misread.
//!
//! Version 2 (docs/schedules.md §11.11) adds `operator_stops`, where an operator's stop
//! (`Inspector::stop`) leaves a note that running engines poll (see
//! [`Backend::poll_stops`](super::Backend::poll_stops)), and stamps the file with tickstep's
//! `application_id` (unless it is shared with another application), so that a tool can tell a
//! store from another program's database.
//!
//! Version 3 (docs/schedules.md §11.32) adds the firing limits a schedule was created with
//! (`time_limit_ns`, `tick_limit`; NULL for none), so they survive a restart. Rows written by an
//! older version read as having none.
//!
//! Version 4 (docs/schedules.md §5.18) adds each schedule's key (`key`, NULL for none) and the
//! unique index `schedules_owner_key` on (owner, key) over the keyed rows: a key names one row
//! of its owner's, whoever writes the file. Rows written by an older version have no key.
//!
//! Version 5 (docs/schedules.md §9.10) adds each schedule's operator state (`ops`, JSON, NULL
//! for none): a pause with who, when and why, the points missed while paused, a `trigger_now`
//! not fired yet, a backfill's remaining range. It is written with the cadence. Rows written by
//! an older version have none.
//!
//! Version 6 (docs/schedules.md §9.11) adds `firing_history`: the last firings of each schedule
//! (start, end, the point served, outcome, fault), a ring of `slot`s per schedule, so keeping the
//! last few is an upsert, never a prune; a trigger deletes a schedule's history with its row.
//!
//! Version 7 (docs/schedules.md §9.12) lets an operator's note carry an action (`action`, JSON;
//! NULL for a stop, as every note before it): pause, resume, trigger or backfill, made from
//! outside the engine and applied by the engines running on the file.
//!
//! Version 8 (docs/schedules.md §9.11, §13.54) keys `firing_history` slot first, so a group
//! commit's records for schedules that fire together share pages.
//!
//! Version 9 (docs/schedules.md §14.14) adds calendar schedules: `kind` may be `'cron'`, and
//! each row gets the calendar's expression, zone and DST policy (`cron_expr`, `cron_zone`,
//! `cron_dst`; NULL for the other kinds). `kind`'s `CHECK` cannot be altered in place, so the
//! step rebuilds the table (SQLite's "make a new table, copy, drop, rename"), with its index
//! and its history trigger. Rows written by an older version are not calendars.
//!
//! Version 10 (docs/schedules.md §15.3) adds each schedule's namespace (`namespace`): the
//! application it belongs to, so that applications sharing the file see only their own. The
//! rows already there go to the namespace of the engine that migrates the file (the application
//! that has been using it), and the key index becomes unique per (namespace, owner, key).
//!
//! Version 11 (docs/schedules.md §16.3) adds each schedule's policies (`policies`, JSON, NULL
//! for the defaults): `catchup_window` and the other policies of docs/schedules.md §16. Rows
//! written by an older version have the defaults.
//!
//! Version 12 (docs/schedules.md §11.48) lets the operator state's JSON (`ops`) carry the
//! points a schedule missed by reason and its last miss (`missed`). No column changes: the version
//! is there so that an older build, whose reader refuses a field it does not know, refuses the
//! file instead of misreading its rows. Rows written by an older version have missed nothing by
//! any reason but `paused` (which `paused_missed` has kept since version 5).
//!
//! Times are Unix nanoseconds and counters are integers; both are `u64` in the engine and are
//! stored as SQLite's signed 64-bit integers by reinterpreting the bits, which leaves every
//! deadline before the year 2262 readable as is. Arguments, state and fault values are JSON, so
//! `sqlite3` users can query them with `json_extract`.

use std::path::Path;

use rusqlite::{Connection, ErrorCode};

use crate::Error;

/// The newest schema version this build knows.
pub(crate) const CURRENT_VERSION: i64 = 12;

/// The oldest schema version an [`Inspector`](crate::Inspector) reads (it reads the firing limits
/// version 3 added as none from an older file).
pub(crate) const OLDEST_READABLE: i64 = 1;

/// `PRAGMA application_id` of a file that is a store and nothing else: "TSTP".
pub(crate) const APPLICATION_ID: i64 = 0x5453_5450;

/// The tables a store file holds (`sqlite_sequence` is SQLite's, for `AUTOINCREMENT`).
pub(crate) const OWN_TABLES: [&str; 6] = [
    "firing_history",
    "meta",
    "operator_stops",
    "schema_migrations",
    "schedules",
    "sqlite_sequence",
];

/// Migrations in order: (version, description, SQL).
const MIGRATIONS: [(i64, &str, &str); 12] = [
    (
        1,
        "schedules table, id high-water mark",
        "
    CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value INTEGER NOT NULL
    );
    INSERT INTO meta (key, value) VALUES ('id_high_water', 0);
    CREATE TABLE schedules (
        id                 INTEGER PRIMARY KEY,
        kind               TEXT    NOT NULL CHECK (kind IN ('at', 'every')),
        target             INTEGER NOT NULL,
        verb               TEXT    NOT NULL,
        args               TEXT,             -- JSON list; NULL for none
        state              TEXT,             -- JSON value; NULL for none
        owner              INTEGER NOT NULL, -- also the authority principal
        player             INTEGER NOT NULL,
        interval_ns        INTEGER NOT NULL,
        interval_clamped   INTEGER NOT NULL,
        jitter_ns          INTEGER NOT NULL,
        max_faults         INTEGER NOT NULL,
        catchup            TEXT    NOT NULL,
        overlap            TEXT    NOT NULL,
        adaptive           INTEGER NOT NULL,
        pass_elapsed       INTEGER NOT NULL,
        created_at         INTEGER NOT NULL, -- Unix nanoseconds
        -- cadence state below: group-committed once per tick
        next_run           INTEGER NOT NULL, -- next cadence point, Unix nanoseconds
        fire_at            INTEGER NOT NULL, -- next firing, jitter included
        armed              INTEGER NOT NULL,
        last_run           INTEGER NOT NULL,
        run_count          INTEGER NOT NULL,
        fault_count        INTEGER NOT NULL,
        consecutive_faults INTEGER NOT NULL,
        missed_count       INTEGER NOT NULL,
        overlap_count      INTEGER NOT NULL,
        last_duration_ns   INTEGER NOT NULL,
        backlog            INTEGER NOT NULL,
        queued             INTEGER,          -- nominal deadline waiting under overlap=queue
        last_fault         TEXT,             -- JSON {\"kind\": .., \"value\": ..}
        running            TEXT              -- JSON [[run id, nominal, started], ..]
    );
    ",
    ),
    (
        2,
        "operator stops that running engines poll",
        "
    CREATE TABLE operator_stops (
        seq        INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused, so pollers keep their place
        id         INTEGER NOT NULL,                  -- the schedule stopped
        stopped_at INTEGER NOT NULL                   -- Unix nanoseconds, for pruning
    );
    ",
    ),
    (
        3,
        "per-firing limits kept with each schedule",
        "
    ALTER TABLE schedules ADD COLUMN time_limit_ns INTEGER; -- seconds option, ns; NULL for none
    ALTER TABLE schedules ADD COLUMN tick_limit    INTEGER; -- ticks option, polls; NULL for none
    ",
    ),
    (
        4,
        "schedule keys, unique per owner",
        "
    ALTER TABLE schedules ADD COLUMN key TEXT; -- the caller's name for it; NULL for none
    CREATE UNIQUE INDEX schedules_owner_key ON schedules (owner, key) WHERE key IS NOT NULL;
    ",
    ),
    (
        5,
        "operator state: pause, trigger, backfill",
        "
    ALTER TABLE schedules ADD COLUMN ops TEXT; -- JSON {paused, paused_missed, trigger, backfill}
    ",
    ),
    (
        6,
        "the last firings of each schedule",
        "
    CREATE TABLE firing_history (
        schedule_id INTEGER NOT NULL,
        slot        INTEGER NOT NULL, -- the firing's number modulo the retention: a ring
        started_at  INTEGER NOT NULL, -- Unix nanoseconds
        ended_at    INTEGER NOT NULL,
        nominal     INTEGER NOT NULL, -- the cadence point it served
        outcome     TEXT    NOT NULL CHECK (outcome IN ('returned', 'fault')),
        fault       TEXT,             -- JSON {\"kind\": .., \"value\": ..}
        PRIMARY KEY (schedule_id, slot)
    ) WITHOUT ROWID;
    -- A schedule's history goes with it, whoever deletes its row.
    CREATE TRIGGER schedules_history_goes_with_the_row AFTER DELETE ON schedules
    BEGIN
        DELETE FROM firing_history WHERE schedule_id = old.id;
    END;
    ",
    ),
    (
        7,
        "operator notes carry actions",
        "
    ALTER TABLE operator_stops ADD COLUMN action TEXT; -- JSON; NULL for a stop
    ",
    ),
    (8, "the firing history keyed slot first", HISTORY_SLOT_FIRST),
    (9, "calendar schedules", CALENDAR_SCHEDULES),
    (
        10,
        "namespaces: the application each schedule belongs to",
        NAMESPACES,
    ),
    (
        11,
        "schedule policies: catch-up window, limited runs, pause on max faults",
        POLICIES,
    ),
    (
        12,
        "points missed by reason, in the operator state",
        MISSED_BY_REASON,
    ),
];

/// Version 12: the `ops` JSON may carry `missed` (docs/schedules.md §11.48); nothing to alter.
pub(crate) const MISSED_BY_REASON: &str = "
    SELECT 1; -- the ops column's JSON may now hold `missed`: an older build must not read it
";

/// Version 11: each schedule's policies (docs/schedules.md §16.3): one JSON column, NULL for
/// the defaults, which is what every row already there gets. The cadence update never writes it.
const POLICIES: &str = "
    ALTER TABLE schedules ADD COLUMN policies TEXT; -- JSON; NULL for the defaults
";

/// The version that adds namespaces; migrating to it moves the rows already there into the
/// migrating engine's namespace (docs/schedules.md §15.3).
pub(crate) const NAMESPACES_VERSION: i64 = 10;

/// Version 10: each schedule's namespace (docs/schedules.md §15.3). The column's default only
/// fills the rows already there; [`migrate`] then moves them to the migrating engine's
/// namespace, and every later insert names its own.
const NAMESPACES: &str = "
    ALTER TABLE schedules ADD COLUMN namespace TEXT NOT NULL DEFAULT 'default';
    DROP INDEX schedules_owner_key;
    CREATE UNIQUE INDEX schedules_owner_key ON schedules (namespace, owner, key)
        WHERE key IS NOT NULL;
";

/// Version 8 (docs/schedules.md §9.11, §13.54): the history table is keyed slot first,
/// `(slot, schedule_id)`, so the records a group commit writes for schedules that fire together
/// (and so share their slot) lie side by side in the b-tree and dirty a few pages, not one page
/// per schedule. Its rows are kept as they are; the trigger that deletes a schedule's history
/// names the twenty slots, so it stays twenty seeks.
const HISTORY_SLOT_FIRST: &str = "
    CREATE TABLE firing_history_by_slot (
        slot        INTEGER NOT NULL, -- the firing's number modulo the retention: a ring
        schedule_id INTEGER NOT NULL,
        started_at  INTEGER NOT NULL, -- Unix nanoseconds
        ended_at    INTEGER NOT NULL,
        nominal     INTEGER NOT NULL, -- the cadence point it served
        outcome     TEXT    NOT NULL CHECK (outcome IN ('returned', 'fault')),
        fault       TEXT,             -- JSON {\"kind\": .., \"value\": ..}
        PRIMARY KEY (slot, schedule_id)
    ) WITHOUT ROWID;
    INSERT INTO firing_history_by_slot
        SELECT slot, schedule_id, started_at, ended_at, nominal, outcome, fault
        FROM firing_history;
    DROP TRIGGER schedules_history_goes_with_the_row;
    DROP TABLE firing_history;
    ALTER TABLE firing_history_by_slot RENAME TO firing_history;
    CREATE TRIGGER schedules_history_goes_with_the_row AFTER DELETE ON schedules
    BEGIN
        DELETE FROM firing_history
        WHERE slot IN (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19)
          AND schedule_id = old.id;
    END;
    ";

/// Version 9: calendar schedules (docs/schedules.md §14.14). One self-contained step: the
/// `schedules` table rebuilt with `'cron'` allowed in `kind` and the calendar's three columns
/// last, every row copied, the key index and the history trigger made again. The trigger goes
/// first, so dropping the old table deletes no history.
const CALENDAR_SCHEDULES: &str = "
    DROP TRIGGER schedules_history_goes_with_the_row;
    CREATE TABLE schedules_v9 (
        id                 INTEGER PRIMARY KEY,
        kind               TEXT    NOT NULL CHECK (kind IN ('at', 'every', 'cron')),
        target             INTEGER NOT NULL,
        verb               TEXT    NOT NULL,
        args               TEXT,
        state              TEXT,
        owner              INTEGER NOT NULL,
        player             INTEGER NOT NULL,
        interval_ns        INTEGER NOT NULL,
        interval_clamped   INTEGER NOT NULL,
        jitter_ns          INTEGER NOT NULL,
        max_faults         INTEGER NOT NULL,
        catchup            TEXT    NOT NULL,
        overlap            TEXT    NOT NULL,
        adaptive           INTEGER NOT NULL,
        pass_elapsed       INTEGER NOT NULL,
        created_at         INTEGER NOT NULL,
        next_run           INTEGER NOT NULL,
        fire_at            INTEGER NOT NULL,
        armed              INTEGER NOT NULL,
        last_run           INTEGER NOT NULL,
        run_count          INTEGER NOT NULL,
        fault_count        INTEGER NOT NULL,
        consecutive_faults INTEGER NOT NULL,
        missed_count       INTEGER NOT NULL,
        overlap_count      INTEGER NOT NULL,
        last_duration_ns   INTEGER NOT NULL,
        backlog            INTEGER NOT NULL,
        queued             INTEGER,
        last_fault         TEXT,
        running            TEXT,
        time_limit_ns      INTEGER,
        tick_limit         INTEGER,
        key                TEXT,
        ops                TEXT,
        cron_expr          TEXT, -- a calendar's cron expression; NULL for 'at' and 'every'
        cron_zone          TEXT, -- its IANA zone
        cron_dst           TEXT  -- its DST policy: gap word, space, fold word ('shift first')
    );
    -- By name: a file's columns are in the order its migrations added them.
    INSERT INTO schedules_v9 (
        id, kind, target, verb, args, state, owner, player, interval_ns,
        interval_clamped, jitter_ns, max_faults, catchup, overlap, adaptive, pass_elapsed,
        created_at, next_run, fire_at, armed, last_run, run_count, fault_count,
        consecutive_faults, missed_count, overlap_count, last_duration_ns, backlog, queued,
        last_fault, running, time_limit_ns, tick_limit, key, ops
    ) SELECT
        id, kind, target, verb, args, state, owner, player, interval_ns,
        interval_clamped, jitter_ns, max_faults, catchup, overlap, adaptive, pass_elapsed,
        created_at, next_run, fire_at, armed, last_run, run_count, fault_count,
        consecutive_faults, missed_count, overlap_count, last_duration_ns, backlog, queued,
        last_fault, running, time_limit_ns, tick_limit, key, ops
    FROM schedules;
    DROP TABLE schedules;
    ALTER TABLE schedules_v9 RENAME TO schedules;
    CREATE UNIQUE INDEX schedules_owner_key ON schedules (owner, key) WHERE key IS NOT NULL;
    CREATE TRIGGER schedules_history_goes_with_the_row AFTER DELETE ON schedules
    BEGIN
        DELETE FROM firing_history
        WHERE slot IN (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19)
          AND schedule_id = old.id;
    END;
";

/// Applies every migration past `found` (the version [`examine`](super::integrity::examine)
/// read), each in its own transaction, creating the migration table first on a fresh file. The
/// rows a file holds from before namespaces go to `namespace`, the migrating engine's.
pub(crate) fn migrate(
    conn: &mut Connection,
    found: i64,
    namespace: crate::Namespace,
) -> Result<(), Error> {
    if found >= CURRENT_VERSION {
        return Ok(());
    }
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version     INTEGER PRIMARY KEY,
             description TEXT NOT NULL
         );",
    )
    .map_err(Error::store("creating the migration table"))?;
    for (version, description, sql) in MIGRATIONS {
        if version <= found {
            continue;
        }
        // Under the write lock from the start, and applied only if no other engine opening the
        // file at the same moment applied it first (as the PostgreSQL store's advisory lock
        // does, docs/schedules.md §11.13): two engines may now share a file (docs/schedules.md §15.2).
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(Error::store("starting a migration"))?;
        let applied: bool = tx
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = ?1)",
                [version],
                |r| r.get(0),
            )
            .map_err(Error::store("reading the schema version"))?;
        if applied {
            continue;
        }
        tx.execute_batch(sql)
            .map_err(Error::store("applying a migration"))?;
        if version == NAMESPACES_VERSION {
            tx.execute("UPDATE schedules SET namespace = ?1", [namespace.as_str()])
                .map_err(Error::store("moving the schedules into their namespace"))?;
        }
        tx.execute(
            "INSERT INTO schema_migrations (version, description) VALUES (?1, ?2)",
            rusqlite::params![version, description],
        )
        .map_err(Error::store("recording a migration"))?;
        tx.commit()
            .map_err(Error::store("committing a migration"))?;
    }
    Ok(())
}

/// Checks, without writing anything, that `conn` holds a store whose `schedules` table this build
/// reads, and returns its version — what a reader that must not migrate (the
/// [`Inspector`](crate::Inspector)) needs before it decodes a row.
pub(crate) fn check_current(conn: &Connection, path: &Path) -> Result<i64, Error> {
    let not_a_store = |detail: String| Error::NotAStore {
        path: path.to_path_buf(),
        detail,
    };
    let found: i64 = match conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
        [],
        |r| r.get(0),
    ) {
        Ok(found) => found,
        // A writer holding the file past the busy timeout is a store failure, not a verdict on
        // what the file is.
        Err(e)
            if matches!(
                e.sqlite_error_code(),
                Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
            ) =>
        {
            return Err(Error::store("reading the schema version")(e));
        }
        Err(e) => {
            return Err(match super::damage::not_sqlite(path, &e) {
                Some(not_sqlite) => not_sqlite,
                None if super::damage::is_damage(&e) => super::damage::damaged(path, e.to_string()),
                None => not_a_store(e.to_string()),
            });
        }
    };
    if found > CURRENT_VERSION {
        return Err(Error::SchemaTooNew {
            found,
            supported: CURRENT_VERSION,
        });
    }
    if found < OLDEST_READABLE {
        return Err(not_a_store(format!(
            "schema version {found}, this build reads versions {OLDEST_READABLE} to \
             {CURRENT_VERSION} (opening it with the engine migrates it)"
        )));
    }
    Ok(found)
}
