//! The `PostgreSQL` schema and its versioned migrations (docs/schedules.md §11.13).
//!
//! Every table is prefixed `tickstep_`, so the store can live in a database another application
//! already uses without touching (or misreading) its tables. `tickstep_schema_migrations` holds a
//! row per applied version, like the `SQLite` store's `schema_migrations`. Migrations run in one
//! transaction under a transaction-scoped advisory lock, so nodes opening the same database at
//! once migrate it once, and a failure leaves the previous version whole (`PostgreSQL` DDL is
//! transactional). A database migrated by a newer build is refused with
//! [`Error::SchemaTooNew`].
//!
//! Versions are numbered by the change, not by their place in this build: a build may know
//! versions with gaps between them (changes made on other branches, numbered when they were
//! written). The runner therefore applies every known version the database has not recorded, in
//! order, whatever the gaps. A database that records a version this build does not know was
//! migrated by a different build and is refused, nothing applied: [`Error::SchemaTooNew`] when
//! that version is newer than every version this build knows, [`Error::Database`] naming it
//! otherwise (a version from a branch this build does not carry).
//!
//! Version 4 adds the firing limits a schedule was created with (`time_limit_ns`, `tick_limit`;
//! NULL for none), as the `SQLite` store's version 3 does.
//!
//! Version 5 adds each schedule's key (`key`, NULL for none) and the unique index
//! `tickstep_schedules_owner_key` on (owner, key) over the keyed rows, as the `SQLite` store's
//! version 4 does: two nodes creating the same key at once leave one row (docs/schedules.md
//! §5.15, §5.18).
//!
//! Version 6 adds each schedule's operator state (`ops`, JSON, NULL for none), as the `SQLite`
//! store's version 5 does (docs/schedules.md §9.10).
//!
//! Version 7 adds `tickstep_firing_history`, the last firings of each schedule, as the `SQLite`
//! store's version 6 does (docs/schedules.md §9.11); a foreign key deletes a schedule's history
//! with its row.
//!
//! Version 8 lets an operator's note carry an action (`action`, JSON; NULL for a stop), as the
//! `SQLite` store's version 7 does (docs/schedules.md §9.12).
//!
//! Version 9 drops that foreign key: a statement-level trigger deletes a schedule's history with
//! its row instead, as the `SQLite` store's trigger does, and the history table gets fill factor
//! 70 (docs/schedules.md §13.53).
//!
//! Version 10 moves each schedule's history ring into its row (`history`, fixed-width records
//! spliced by the cadence update); the history table keeps the faulted records, for their faults
//! (docs/schedules.md §13.54).
//!
//! Version 11 adds calendar schedules: `kind` may be `'cron'`, with the calendar's expression,
//! zone and DST policy in `cron_expr`, `cron_zone` and `cron_dst`, as the `SQLite` store's
//! version 9 does (docs/schedules.md §14.14).
//!
//! Version 12 adds each schedule's namespace (`namespace`), as the `SQLite` store's version 10
//! does (docs/schedules.md §15.3): the rows already there go to the migrating engine's
//! namespace, the key index becomes unique per (namespace, owner, key), and each node's row
//! names its namespace too (NULL for a node of an older build), for the cluster view.
//!
//! Version 13 adds each schedule's policies (`policies`, JSON, NULL for the defaults), as the
//! `SQLite` store's version 11 does (docs/schedules.md §16.3): rows already there get the
//! defaults.
//!
//! Version 14 lets the operator state's JSON (`ops`) carry the points a schedule missed by
//! reason and its last miss, as the `SQLite` store's version 12 does (docs/schedules.md §11.48):
//! no column changes, only the version, so that an older build refuses the database instead of
//! misreading its rows.
//!
//! Version 15 adds `tickstep_cluster_history`, the cluster's history: an append-only row per
//! event of a node's life (joined, claimed, took over, its holdings sampled, left), written by
//! the statement or transaction that made the event, kept for a day (docs/schedules.md §11.50).
//!
//! Column types follow the `SQLite` schema: `u64` times and counters are `BIGINT` holding the same
//! bits (readable as is before 2262), flags are `BOOLEAN`, values are JSON text (cast to `jsonb`
//! to query them).

use postgres::Client;

use super::database_error;
use crate::Error;

/// The newest schema version this build knows.
pub(crate) const CURRENT_VERSION: i64 = 15;

/// The advisory lock key that serialises migrations (any constant other applications are
/// unlikely to pick: "tsch" in ASCII).
const MIGRATION_LOCK: i64 = 0x7473_6368;

/// Migrations in order: (version, description, SQL). Versions need not be contiguous: each
/// missing one is applied, so a build that adds a version below one already applied (two
/// branches numbering theirs apart) still brings every database up to date.
const MIGRATIONS: [(i64, &str, &str); 15] = [
    (
        1,
        "schedules table, id high-water mark",
        "
    CREATE TABLE tickstep_meta (
        key   TEXT PRIMARY KEY,
        value BIGINT NOT NULL
    );
    INSERT INTO tickstep_meta (key, value) VALUES ('id_high_water', 0);
    CREATE TABLE tickstep_schedules (
        id                 BIGINT  PRIMARY KEY,
        kind               TEXT    NOT NULL CHECK (kind IN ('at', 'every')),
        target             BIGINT  NOT NULL,
        verb               TEXT    NOT NULL,
        args               TEXT,             -- JSON list; NULL for none
        state              TEXT,             -- JSON value; NULL for none
        owner              BIGINT  NOT NULL, -- also the authority principal
        player             BIGINT  NOT NULL,
        interval_ns        BIGINT  NOT NULL,
        interval_clamped   BOOLEAN NOT NULL,
        jitter_ns          BIGINT  NOT NULL,
        max_faults         BIGINT  NOT NULL,
        catchup            TEXT    NOT NULL,
        overlap            TEXT    NOT NULL,
        adaptive           BOOLEAN NOT NULL,
        pass_elapsed       BOOLEAN NOT NULL,
        created_at         BIGINT  NOT NULL, -- Unix nanoseconds
        -- cadence state below: written behind, once per tick
        next_run           BIGINT  NOT NULL,
        fire_at            BIGINT  NOT NULL,
        armed              BOOLEAN NOT NULL,
        last_run           BIGINT  NOT NULL,
        run_count          BIGINT  NOT NULL,
        fault_count        BIGINT  NOT NULL,
        consecutive_faults BIGINT  NOT NULL,
        missed_count       BIGINT  NOT NULL,
        overlap_count      BIGINT  NOT NULL,
        last_duration_ns   BIGINT  NOT NULL,
        backlog            INTEGER NOT NULL,
        queued             BIGINT,
        last_fault         TEXT,             -- JSON {\"kind\": .., \"value\": ..}
        running            TEXT              -- JSON [[run id, nominal, started], ..]
    );
    ",
    ),
    (2, "operator stops; schedules fillfactor 70", OPERATOR_STOPS),
    (
        3,
        "claims: owner node and fence per schedule, node leases",
        "
    -- The node that holds the schedule (NULL: nobody, claimable) and the fencing token its
    -- claim set: every write a node makes carries both and matches nothing once another node
    -- has claimed the row (docs/schedules.md §11.26–§11.27).
    ALTER TABLE tickstep_schedules
        ADD COLUMN owner_node BIGINT,
        ADD COLUMN fence      BIGINT NOT NULL DEFAULT 0;
    CREATE INDEX tickstep_schedules_owner ON tickstep_schedules (owner_node);
    -- One row per open engine: its lease, in the database's time. A schedule whose owner's
    -- lease has run out is claimable by any other node.
    CREATE TABLE tickstep_nodes (
        node        BIGINT      PRIMARY KEY,
        lease_until TIMESTAMPTZ NOT NULL,
        started_at  TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
    );
    ",
    ),
    (
        4,
        "per-firing limits kept with each schedule",
        "
    ALTER TABLE tickstep_schedules
        ADD COLUMN time_limit_ns BIGINT, -- seconds option, ns; NULL for none
        ADD COLUMN tick_limit    BIGINT; -- ticks option, polls; NULL for none
    ",
    ),
    (
        5,
        "schedule keys, unique per owner",
        "
    ALTER TABLE tickstep_schedules ADD COLUMN key TEXT; -- the caller's name for it; NULL for none
    CREATE UNIQUE INDEX tickstep_schedules_owner_key
        ON tickstep_schedules (owner, key) WHERE key IS NOT NULL;
    ",
    ),
    (
        6,
        "operator state: pause, trigger, backfill",
        "
    ALTER TABLE tickstep_schedules ADD COLUMN ops TEXT; -- JSON; NULL for none
    ",
    ),
    (
        7,
        "the last firings of each schedule",
        "
    CREATE TABLE tickstep_firing_history (
        schedule_id BIGINT  NOT NULL REFERENCES tickstep_schedules (id) ON DELETE CASCADE,
        slot        INTEGER NOT NULL, -- the firing's number modulo the retention: a ring
        started_at  BIGINT  NOT NULL, -- Unix nanoseconds
        ended_at    BIGINT  NOT NULL,
        nominal     BIGINT  NOT NULL, -- the cadence point it served
        outcome     TEXT    NOT NULL CHECK (outcome IN ('returned', 'fault')),
        fault       TEXT,             -- JSON {\"kind\": .., \"value\": ..}
        PRIMARY KEY (schedule_id, slot)
    );
    ",
    ),
    (
        8,
        "operator notes carry actions",
        "
    ALTER TABLE tickstep_operator_stops ADD COLUMN action TEXT; -- JSON; NULL for a stop
    ",
    ),
    (
        9,
        "firing history without a foreign key; a trigger deletes it with its schedule",
        HISTORY_WITHOUT_FOREIGN_KEY,
    ),
    (
        10,
        "the firing history's ring moves into the schedules row",
        HISTORY_RING_IN_THE_ROW,
    ),
    (11, "calendar schedules", CALENDAR_SCHEDULES),
    (
        12,
        "namespaces: the application each schedule belongs to",
        NAMESPACES,
    ),
    (
        13,
        "schedule policies: catch-up window, limited runs, pause on max faults",
        POLICIES,
    ),
    (
        14,
        "points missed by reason, in the operator state",
        crate::store::sqlite::sqlite_schema::MISSED_BY_REASON,
    ),
    (
        15,
        "the cluster's history: nodes joining, claiming, taking over, holding and leaving",
        CLUSTER_HISTORY,
    ),
];

/// The version that adds the cluster's history (docs/schedules.md §11.50).
pub(crate) const CLUSTER_HISTORY_VERSION: i64 = 15;

/// Version 15: the cluster's history (docs/schedules.md §11.50), appended to by the claim, the
/// lease renewal and a node's registration and release, each in its own statement or
/// transaction, and pruned past a day by the renewal. `at_ns` is the database's clock, as Unix
/// nanoseconds, so every node's events share one clock (that of the leases, docs/schedules.md
/// §11.29). The index serves both the pruning and the window a read asks for. A new table alone,
/// so the step is made idempotent (`IF NOT EXISTS`): a database whose version rows were rolled
/// back by hand (as the tests do to stand for an older build) is migrated again without failing
/// here.
const CLUSTER_HISTORY: &str = "
    CREATE TABLE IF NOT EXISTS tickstep_cluster_history (
        seq       BIGSERIAL PRIMARY KEY,
        at_ns     BIGINT NOT NULL, -- the database's clock, Unix nanoseconds
        node      BIGINT NOT NULL,
        namespace TEXT,            -- the node's namespace
        kind      TEXT   NOT NULL
                  CHECK (kind IN ('joined', 'claimed', 'took_over', 'held', 'left')),
        from_node BIGINT,          -- took_over: the node whose lease ran out
        schedules BIGINT NOT NULL  -- claimed, taken over, held, or handed back when leaving
    );
    CREATE INDEX IF NOT EXISTS tickstep_cluster_history_at ON tickstep_cluster_history (at_ns);
";

/// Version 13: each schedule's policies (docs/schedules.md §16.3), as the `SQLite` store's
/// version 11: one JSON column, NULL for the defaults, which is what every row already there
/// gets. The cadence update never writes it (the policies are part of the definition), so it
/// costs a fired row nothing.
const POLICIES: &str = "
    ALTER TABLE tickstep_schedules ADD COLUMN policies TEXT; -- JSON; NULL for the defaults
";

/// The version that adds namespaces; migrating to it moves the rows already there into the
/// migrating engine's namespace (docs/schedules.md §15.3).
pub(crate) const NAMESPACES_VERSION: i64 = 12;

/// Version 12: each schedule's namespace (docs/schedules.md §15.3), as the `SQLite` store's
/// version 10. The default only fills the rows already there ([`migrate`] then moves them to the
/// migrating engine's namespace) and is dropped, so every insert names its own. No index is
/// made on it: a database usually holds one or a few namespaces, the claim already scans for
/// claimable rows, and an index over `fire_at` would cost every cadence update its HOT update
/// (docs/schedules.md §11.31).
const NAMESPACES: &str = "
    ALTER TABLE tickstep_schedules ADD COLUMN namespace TEXT NOT NULL DEFAULT 'default';
    ALTER TABLE tickstep_schedules ALTER COLUMN namespace DROP DEFAULT;
    DROP INDEX IF EXISTS tickstep_schedules_owner_key;
    CREATE UNIQUE INDEX tickstep_schedules_owner_key
        ON tickstep_schedules (namespace, owner, key) WHERE key IS NOT NULL;
    ALTER TABLE tickstep_nodes ADD COLUMN namespace TEXT;
";

/// Version 11: calendar schedules (docs/schedules.md §14.14), as the `SQLite` store's version 9:
/// `'cron'` allowed in `kind`, and the calendar's expression, zone and DST policy in three
/// columns (NULL for the other kinds). One self-contained step; `PostgreSQL` alters the check in
/// place.
const CALENDAR_SCHEDULES: &str = "
    ALTER TABLE tickstep_schedules
        DROP CONSTRAINT tickstep_schedules_kind_check,
        ADD CONSTRAINT tickstep_schedules_kind_check CHECK (kind IN ('at', 'every', 'cron')),
        ADD COLUMN cron_expr TEXT, -- a calendar's cron expression; NULL for 'at' and 'every'
        ADD COLUMN cron_zone TEXT, -- its IANA zone
        ADD COLUMN cron_dst  TEXT; -- its DST policy: gap word, space, fold word ('shift first')
";

/// Version 2: the notes an operator's stop leaves for running engines (docs/schedules.md
/// §11.21), read by `seq` past the last one an engine has seen; and a fill factor that keeps the
/// per-tick cadence rewrites on their page.
const OPERATOR_STOPS: &str = "
    CREATE TABLE tickstep_operator_stops (
        seq           BIGSERIAL PRIMARY KEY,
        schedule_id   BIGINT NOT NULL,
        stopped_at_ns BIGINT NOT NULL -- Unix nanoseconds, for pruning
    );
    CREATE INDEX tickstep_operator_stops_at ON tickstep_operator_stops (stopped_at_ns);
    -- Room on each page for the new versions of its rows: a tick rewrites every fired row, and a
    -- new version that fits on its page is a HOT update (no index entry, no new page).
    ALTER TABLE tickstep_schedules SET (fillfactor = 70);
";

/// Version 9: the history table loses its foreign key, whose per-row check cost more than the
/// record itself (docs/schedules.md §13.53). One statement-level trigger deletes the history of
/// every schedule row a statement deletes, whoever deletes it (as the `SQLite` store's trigger
/// does); the write takes a key-share lock on the live rows instead of the check
/// ([`super::pg_codec::RECORD_HISTORY`]). A fill factor leaves room for the ring's in-place
/// rewrites, as version 2 does for the cadence.
const HISTORY_WITHOUT_FOREIGN_KEY: &str = "
    ALTER TABLE tickstep_firing_history
        DROP CONSTRAINT IF EXISTS tickstep_firing_history_schedule_id_fkey;
    ALTER TABLE tickstep_firing_history SET (fillfactor = 70);
    CREATE FUNCTION tickstep_history_goes_with_the_row() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM tickstep_firing_history AS h USING gone WHERE h.schedule_id = gone.id;
        RETURN NULL;
    END
    $$;
    CREATE TRIGGER tickstep_schedules_history_goes_with_the_row
        AFTER DELETE ON tickstep_schedules REFERENCING OLD TABLE AS gone
        FOR EACH STATEMENT EXECUTE FUNCTION tickstep_history_goes_with_the_row();
";

/// Version 10 (docs/schedules.md §9.11, §13.54): each schedule's history ring moves into its
/// row, a `history` column of 20 fixed-width records (`store/postgres/history_ring.rs` defines the
/// bytes), spliced by the cadence update; `tickstep_firing_history` keeps only the faulted
/// records, whose fault has no fixed width. The records already kept move over: each becomes its
/// slot's 25 bytes (`int8send` writes a `BIGINT` big-endian, as the ring holds it, then the
/// outcome byte), an empty slot 25 zero bytes; the rows of returned firings then go.
const HISTORY_RING_IN_THE_ROW: &str = "
    ALTER TABLE tickstep_schedules ADD COLUMN history BYTEA; -- 20 records of 25 bytes
    UPDATE tickstep_schedules AS s SET history = r.ring
    FROM (SELECT ids.schedule_id,
                 string_agg(coalesce(int8send(h.nominal) || int8send(h.started_at)
                                     || int8send(h.ended_at)
                                     || CASE h.outcome WHEN 'fault' THEN '\\x02'::bytea
                                                       ELSE '\\x01'::bytea END,
                                     decode(repeat('00', 25), 'hex')),
                            ''::bytea ORDER BY slots.slot) AS ring
          FROM (SELECT DISTINCT schedule_id FROM tickstep_firing_history) AS ids
          CROSS JOIN generate_series(0, 19) AS slots(slot)
          LEFT JOIN tickstep_firing_history AS h
                 ON h.schedule_id = ids.schedule_id AND h.slot = slots.slot
          GROUP BY ids.schedule_id) AS r
    WHERE s.id = r.schedule_id;
    DELETE FROM tickstep_firing_history WHERE outcome <> 'fault';
";

/// Creates the migration table if needed and applies every migration the database lacks, in one
/// transaction under the migration lock. The rows a database holds from before namespaces go to
/// `namespace`, the migrating engine's.
pub(crate) fn migrate(client: &mut Client, namespace: crate::Namespace) -> Result<(), Error> {
    let mut tx = client
        .transaction()
        .map_err(database_error("starting a migration"))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(database_error("taking the migration lock"))?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS tickstep_schema_migrations (
             version     BIGINT PRIMARY KEY,
             description TEXT NOT NULL,
             applied_at  TIMESTAMPTZ NOT NULL DEFAULT now()
         );",
    )
    .map_err(database_error("creating the migration table"))?;
    let applied: Vec<i64> = tx
        .query(
            "SELECT version FROM tickstep_schema_migrations ORDER BY version",
            &[],
        )
        .map_err(database_error("reading the schema versions"))?
        .iter()
        .map(|row| row.get(0))
        .collect();
    for plan in pending(&applied) {
        let (version, description, sql) = plan?;
        tx.batch_execute(sql)
            .map_err(database_error("applying a migration"))?;
        if version == NAMESPACES_VERSION {
            tx.execute(
                "UPDATE tickstep_schedules SET namespace = $1",
                &[&namespace.as_str()],
            )
            .map_err(database_error("moving the schedules into their namespace"))?;
        }
        tx.execute(
            "INSERT INTO tickstep_schema_migrations (version, description) VALUES ($1, $2)",
            &[&version, &description],
        )
        .map_err(database_error("recording a migration"))?;
    }
    tx.commit()
        .map_err(database_error("committing the migrations"))
}

/// Why [`check_current`] refused a database.
pub(crate) enum CheckError {
    /// Not a store this build reads: what is missing, in words.
    NotAStore(String),
    /// A newer schema, or the server failed.
    Other(Error),
}

/// The schema version of an existing store, without creating or migrating anything (for the
/// inspector): refuses a database with no migration table, or one a newer build migrated.
pub(crate) fn check_current(client: &mut Client) -> Result<i64, CheckError> {
    let context = "reading the schema version";
    let exists: bool = client
        .query_one(
            "SELECT to_regclass('tickstep_schema_migrations') IS NOT NULL",
            &[],
        )
        .map_err(|e| CheckError::Other(database_error(context)(e)))?
        .get(0);
    if !exists {
        return Err(CheckError::NotAStore(
            "the database has no tickstep_schema_migrations table (no engine has opened it)".into(),
        ));
    }
    let found: i64 = client
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM tickstep_schema_migrations",
            &[],
        )
        .map_err(|e| CheckError::Other(database_error(context)(e)))?
        .get(0);
    if found > CURRENT_VERSION {
        return Err(CheckError::Other(Error::SchemaTooNew {
            found,
            supported: CURRENT_VERSION,
        }));
    }
    if found < 1 {
        return Err(CheckError::NotAStore(format!(
            "schema version {found} (unmigrated); an engine migrates it when it opens the \
             database"
        )));
    }
    Ok(found)
}

/// The migrations to apply to a database that recorded `applied`, in order: every known version
/// it lacks, gaps and all. A recorded version this build does not know comes first, as an error,
/// so nothing is applied to a database another build shaped.
fn pending(
    applied: &[i64],
) -> impl Iterator<Item = Result<(i64, &'static str, &'static str), Error>> {
    let unknown = applied
        .iter()
        .copied()
        .filter(|v| !MIGRATIONS.iter().any(|(known, ..)| known == v))
        .max();
    let refusal = unknown.map(|found| Err(unknown_version(found)));
    let todo = MIGRATIONS
        .into_iter()
        .filter(move |(version, ..)| unknown.is_none() && !applied.contains(version))
        .map(Ok);
    refusal.into_iter().chain(todo)
}

/// The refusal of a database that records migration `found`, which this build does not know.
fn unknown_version(found: i64) -> Error {
    if found > CURRENT_VERSION {
        return Error::SchemaTooNew {
            found,
            supported: CURRENT_VERSION,
        };
    }
    let known: Vec<String> = MIGRATIONS.iter().map(|(v, ..)| v.to_string()).collect();
    Error::Database {
        context: "checking the schema version",
        source: format!(
            "the database records schema version {found}, which this build does not know (it \
             knows {}): a different build migrated it",
            known.join(", ")
        )
        .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(applied: &[i64]) -> Result<Vec<i64>, i64> {
        pending(applied)
            .map(|p| match p {
                Ok((v, ..)) => Ok(v),
                Err(Error::SchemaTooNew { found, .. }) => Err(found),
                Err(other) => panic!("{other}"),
            })
            .collect()
    }

    #[test]
    fn every_known_version_missing_is_applied_gaps_and_all() {
        let all: Vec<i64> = (1..=15).collect();
        assert_eq!(versions(&[]), Ok(all.clone()));
        assert_eq!(versions(&[1]), Ok(all[1..].to_vec()));
        let without = |gone: &[i64]| all.iter().copied().filter(|v| !gone.contains(v)).collect();
        assert_eq!(versions(&[1, 4]), Ok(without(&[1, 4])));
        assert_eq!(versions(&[4]), Ok(without(&[4])));
        assert_eq!(versions(&all), Ok(vec![]));
    }

    #[test]
    fn a_newer_version_is_schema_too_new_naming_both() {
        assert_eq!(versions(&[1, 4, 16]), Err(16));
        let err = pending(&[1, 4, 16]).next().unwrap().unwrap_err();
        assert!(err.to_string().contains("version 16") && err.to_string().contains("up to 15"));
    }

    #[test]
    fn an_unknown_version_in_a_gap_is_refused_naming_it_and_what_is_known() {
        let mut plan = pending(&[0, 1]);
        let err = plan.next().unwrap().unwrap_err();
        assert!(matches!(err, Error::Database { .. }), "{err}");
        // The reason is the error's source (docs/README.md: one error convention).
        let text = tickstep_kernel::ErrorChain(&err).to_string();
        assert!(
            text.contains("schema version 0")
                && text.contains("knows 1, 2, 3, 4, 5, 6, 7, 8, 9, 10"),
            "{text}"
        );
        assert!(plan.next().is_none(), "nothing is applied after a refusal");
    }

    #[test]
    fn migrations_are_listed_in_increasing_version_order() {
        assert!(MIGRATIONS.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(MIGRATIONS.last().map(|m| m.0), Some(CURRENT_VERSION));
    }
}
