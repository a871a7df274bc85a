//! The SQL of a list's page (docs/schedules.md §9.17) as each store spells it, and how a store
//! runs it: shared by the `SQLite` inspector and the `PostgreSQL` one, which
//! [`Inspector::page`](crate::Inspector::page) reads through.

use crate::store::decode::StoredColumns;
use crate::{Error, ScheduleStatus};

/// How one store spells what the two say differently.
#[derive(Clone, Copy)]
pub(crate) struct Dialect {
    pub(crate) postgres: bool,
    /// The store's schema version, and the first versions with keys, operator state, calendars
    /// and namespaces: older stores read those columns as NULL.
    version: i64,
    keys: i64,
    ops: i64,
    calendars: i64,
    namespaces: i64,
    pub(crate) table: &'static str,
}

impl Dialect {
    /// A `SQLite` store of schema `version`, which keeps namespaces from `namespaces` on.
    pub(crate) fn sqlite(version: i64, namespaces: i64) -> Self {
        Dialect {
            postgres: false,
            version,
            keys: 4,
            ops: 5,
            calendars: 8,
            namespaces,
            table: "schedules",
        }
    }

    /// A `PostgreSQL` store of schema `version`, which keeps namespaces from `namespaces` on.
    #[cfg(feature = "postgres")]
    pub(crate) fn postgres(version: i64, namespaces: i64) -> Self {
        Dialect {
            postgres: true,
            version,
            keys: 5,
            ops: 6,
            calendars: 10,
            namespaces,
            table: "tickstep_schedules",
        }
    }

    /// Parameter `n` (from 1).
    pub(crate) fn param(self, n: usize) -> String {
        if self.postgres {
            format!("${n}")
        } else {
            format!("?{n}")
        }
    }

    /// `column`, or a typed NULL in a store older than `since`.
    pub(crate) fn column(self, column: &str, since: i64, sql_type: &str) -> String {
        if self.version >= since {
            column.to_owned()
        } else {
            format!("CAST(NULL AS {sql_type})")
        }
    }

    /// `text`, compared byte by byte (`PostgreSQL` compares by the database's collation
    /// otherwise; `SQLite`'s text columns compare bytes already).
    pub(crate) fn bytewise(self, text: &str) -> String {
        if self.postgres {
            format!("{text} COLLATE \"C\"")
        } else {
            text.to_owned()
        }
    }

    pub(crate) fn namespace(self) -> &'static str {
        crate::store::codec::namespace_column(self.version, self.namespaces)
    }

    pub(crate) fn key(self) -> String {
        self.column("key", self.keys, "TEXT")
    }

    /// When the last point was missed (`ops.missed.last`'s Unix nanoseconds), NULL for none
    /// (docs/schedules.md §11.48).
    pub(crate) fn last_miss(self) -> String {
        if self.version < self.ops {
            "CAST(NULL AS BIGINT)".to_owned()
        } else if self.postgres {
            "((ops::jsonb -> 'missed' -> 'last' ->> 0)::bigint)".to_owned()
        } else {
            "json_extract(ops, '$.missed.last[0]')".to_owned()
        }
    }

    /// The last fault's kind (`last_fault`'s `kind`), NULL for none.
    pub(crate) fn last_fault_kind(self) -> &'static str {
        if self.postgres {
            "(last_fault::jsonb ->> 'kind')"
        } else {
            "json_extract(last_fault, '$.kind')"
        }
    }

    /// Whether `armed`.
    pub(crate) fn armed(self) -> &'static str {
        if self.postgres { "armed" } else { "armed <> 0" }
    }

    /// The state as its place in [`ScheduleStatus::ALL`], from the columns that decide it as
    /// [`ScheduleStatus::of`] does (docs/schedules.md §9.13): paused while the operator state
    /// holds a pause, else running while a firing with a run id is in flight (a start waiting
    /// for the row to be durable is no run yet, docs/schedules.md §11.42), else failing while its last settled
    /// firing faulted, else active. A store holds no retired schedule.
    pub(crate) fn status(self) -> String {
        let paused = if self.version < self.ops {
            "FALSE".to_owned()
        } else if self.postgres {
            "jsonb_typeof(ops::jsonb -> 'paused') = 'object'".to_owned()
        } else {
            "json_type(ops, '$.paused') = 'object'".to_owned()
        };
        let running = if self.postgres {
            "EXISTS (SELECT 1 FROM jsonb_array_elements(running::jsonb) AS r(e) \
             WHERE jsonb_typeof(r.e -> 0) = 'number')"
        } else {
            "EXISTS (SELECT 1 FROM json_each(running) WHERE json_type(value, '$[0]') = 'integer')"
        };
        let rank = |s: ScheduleStatus| s as u8;
        format!(
            "CASE WHEN {paused} THEN {} WHEN running IS NOT NULL AND {running} THEN {} \
             WHEN consecutive_faults > 0 THEN {} ELSE {} END",
            rank(ScheduleStatus::Paused),
            rank(ScheduleStatus::Running),
            rank(ScheduleStatus::Failing),
            rank(ScheduleStatus::Active),
        )
    }

    /// The columns a page's row is read with (`inspector::page`'s `listed`), in its order.
    pub(crate) fn listed_columns(self) -> String {
        format!(
            "id, {}, kind, verb, args, owner, {}, interval_ns, {}, {}, {}, {}, {}, fire_at, \
             last_run, last_fault, consecutive_faults, run_count, fault_count",
            self.namespace(),
            self.key(),
            self.column("cron_expr", self.calendars, "TEXT"),
            self.column("cron_zone", self.calendars, "TEXT"),
            self.column("ops", self.ops, "TEXT"),
            self.status(),
            // A flag as an integer on both stores, so one decoder reads it.
            if self.postgres {
                "CASE WHEN armed THEN 1 ELSE 0 END"
            } else {
                "armed"
            },
        )
    }
}

/// A parameter of the page's SQL.
#[derive(Debug)]
pub(crate) enum Param {
    Int(i64),
    Text(String),
}

#[cfg(feature = "postgres")]
impl Param {
    pub(crate) fn as_pg(&self) -> &(dyn postgres::types::ToSql + Sync) {
        match self {
            Param::Int(n) => n,
            Param::Text(t) => t,
        }
    }
}

impl rusqlite::ToSql for Param {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            Param::Int(n) => n.to_sql(),
            Param::Text(t) => t.to_sql(),
        }
    }
}

/// Runs SQL for a page: `SQLite` or `PostgreSQL`, rows handed to `each` as [`StoredColumns`].
pub(crate) trait Reader {
    /// The error a row's [`StoredColumns`] gives.
    type RowError;

    /// Runs `sql`, handing each row to `each`.
    fn each(
        &self,
        sql: &str,
        params: &[Param],
        each: &mut EachRow<'_, Self::RowError>,
    ) -> Result<(), Error>;

    /// Runs `sql`, a statement that returns no rows (a transaction's start or end).
    fn execute(&self, sql: &str) -> Result<(), Error>;
}

/// What a [`Reader`] hands each row to.
pub(crate) type EachRow<'a, E> = dyn FnMut(&dyn StoredColumns<Error = E>) -> Result<(), E> + 'a;
