//! The operator's view of a `SQLite` store file: what [`Inspector`](crate::Inspector) reads
//! through for a path (docs/schedules.md §11.24, §13.74).
//!
//! The file is opened with `SQLite`'s read-only flag, so it is never created, migrated or
//! written; the file being in WAL mode, reads see a consistent snapshot without blocking an engine
//! writing it. Rows are decoded by the store's own codec, and a schema this build does not know is
//! refused, never misread.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::{columns, integrity, sqlite_schema};
use crate::Error;
use crate::store::codec::{self, from_sql, to_sql};
use crate::store::list_page::{ListPage, ListQuery, read_page};
use crate::store::list_sql::{Dialect, EachRow, Param, Reader};
use crate::store::read_backend::ReadBackend;
use crate::store_rows::{HistoryRow, ScheduleRow};

/// How long a read waits for the engine's write lock before giving up (WAL readers rarely wait:
/// only while the engine checkpoints or a writer recovers the file).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// A read-only connection to a store file.
#[derive(Debug)]
pub(crate) struct SqliteInspector {
    conn: Connection,
    path: PathBuf,
    /// The file's schema version: which columns its rows have.
    version: i64,
}

impl SqliteInspector {
    /// Opens `path` read-only and checks its schema.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] if the file does not exist or cannot be opened (it is not created);
    /// [`Error::NotAStore`] or [`Error::SchemaTooNew`] from the schema check.
    pub(crate) fn open(path: &Path) -> Result<Self, Error> {
        integrity::look(path)?;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(Error::store("opening the store read-only"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(Error::store("setting the busy timeout"))?;
        let version = sqlite_schema::check_current(&conn, path)?;
        Ok(SqliteInspector {
            conn,
            path: path.to_path_buf(),
            version,
        })
    }

    /// Maps a read error: damage names the file and the way to recover it.
    fn load_error(&self) -> impl Fn(rusqlite::Error) -> Error + '_ {
        move |e| integrity::store_error(&self.path, "loading schedules", e)
    }

    /// The namespace column as this file's schema has it (`''` before namespaces).
    fn namespace_column(&self) -> &'static str {
        codec::namespace_column(self.version, sqlite_schema::NAMESPACES_VERSION)
    }

    /// The select of the row's columns, then its namespace, of the namespace `?1` (every
    /// namespace when `?1` is NULL; docs/schedules.md §15.5) where `condition` holds, by id.
    fn select(&self, condition: &str) -> String {
        let namespace = self.namespace_column();
        format!(
            "SELECT {}, {namespace} FROM schedules WHERE (?1 IS NULL OR {namespace} = ?1) \
             AND ({condition}) ORDER BY id",
            codec::columns_for(self.version)
        )
    }

    /// The rows `sql` ([`SqliteInspector::select`]) selects, decoded, each with its namespace.
    fn rows(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<(ScheduleRow, String)>, Error> {
        let read = || -> rusqlite::Result<Vec<(ScheduleRow, String)>> {
            let mut stmt = self.conn.prepare(sql)?;
            let mut rows = stmt.query(params)?;
            let mut all = Vec::new();
            while let Some(row) = rows.next()? {
                let namespace: String = row.get(codec::COLUMN_COUNT)?;
                all.push((columns::decode(row)?, namespace));
            }
            Ok(all)
        };
        read().map_err(self.load_error())
    }
}

impl ReadBackend for SqliteInspector {
    fn list(&self, namespace: Option<&str>) -> Result<Vec<(ScheduleRow, String)>, Error> {
        self.rows(&self.select("TRUE"), [namespace])
    }

    fn get(
        &self,
        id: u64,
        namespace: Option<&str>,
    ) -> Result<Option<(ScheduleRow, String)>, Error> {
        self.rows(
            &self.select("id = ?2"),
            rusqlite::params![namespace, to_sql(id)],
        )
        .map(|mut rows| rows.pop())
    }

    fn find_key(
        &self,
        key: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<(ScheduleRow, String)>, Error> {
        if self.version < 4 {
            return Ok(Vec::new());
        }
        self.rows(&self.select("key = ?2"), rusqlite::params![namespace, key])
    }

    fn ids(&self, namespace: Option<&str>) -> Result<Vec<u64>, Error> {
        let column = self.namespace_column();
        let read = || -> rusqlite::Result<Vec<u64>> {
            let mut stmt = self.conn.prepare(&format!(
                "SELECT id FROM schedules WHERE (?1 IS NULL OR {column} = ?1) ORDER BY id"
            ))?;
            let ids = stmt.query_map([namespace], |r| r.get::<_, i64>(0).map(from_sql))?;
            ids.collect()
        };
        read().map_err(self.load_error())
    }

    fn namespaces(&self) -> Result<Vec<(String, u64)>, Error> {
        let column = self.namespace_column();
        let read = || -> rusqlite::Result<Vec<(String, u64)>> {
            let mut stmt = self.conn.prepare(&format!(
                "SELECT {column}, COUNT(*) FROM schedules GROUP BY 1 ORDER BY 1"
            ))?;
            let counts =
                stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, from_sql(r.get(1)?))))?;
            counts.collect()
        };
        read().map_err(self.load_error())
    }

    fn history(&self, id: u64) -> Result<Vec<HistoryRow>, Error> {
        if self.version < 6 {
            return Ok(Vec::new());
        }
        // The count of settled firings is the row's to know; every slot is read.
        super::read_history(&self.conn, &self.path, id, u64::MAX)
    }

    fn page(&self, namespace: Option<String>, query: &ListQuery) -> Result<ListPage, Error> {
        read_page(
            self,
            Dialect::sqlite(self.version, sqlite_schema::NAMESPACES_VERSION),
            namespace,
            query,
        )
    }
}

impl Reader for SqliteInspector {
    type RowError = rusqlite::Error;

    fn each(
        &self,
        sql: &str,
        params: &[Param],
        each: &mut EachRow<'_, rusqlite::Error>,
    ) -> Result<(), Error> {
        let mut run = || -> rusqlite::Result<()> {
            let mut stmt = self.conn.prepare(sql)?;
            let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
            while let Some(row) = rows.next()? {
                each(row)?;
            }
            Ok(())
        };
        run().map_err(self.load_error())
    }

    fn execute(&self, sql: &str) -> Result<(), Error> {
        self.conn.execute_batch(sql).map_err(self.load_error())
    }
}
