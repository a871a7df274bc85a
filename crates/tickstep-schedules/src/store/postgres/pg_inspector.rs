//! The operator's view of a `PostgreSQL` store (docs/schedules.md §11.24, §13.74): what
//! [`Inspector`](crate::Inspector) reads through for a `postgres://` URL.
//!
//! The inspector never creates or migrates anything: it checks the schema the way the store does
//! (refusing a database without tickstep's tables as [`Error::NotAStore`] and a newer one as
//! [`Error::SchemaTooNew`]), reads in read-only transactions, and decodes rows with the store's
//! own codec. A stop goes through [`stops::stop_as_operator`] on a connection of its own.

use std::cell::RefCell;
use std::path::PathBuf;

use postgres::Client;

use super::stops;
use super::{connect, database_error, pg_codec, pg_schema, redacted};
use crate::Error;
use crate::store::cluster::{Cluster, ClusterNode};
use crate::store::cluster_history::{ClusterEvent, ClusterEventKind, ClusterHistory};
use crate::store::codec::{from_sql, to_sql};
use crate::store::list_page::{ListPage, ListQuery, read_page};
use crate::store::list_sql::{Dialect, EachRow, Param, Reader};
use crate::store::read_backend::ReadBackend;
use crate::store_rows::ScheduleRow;

/// A read-only connection to a `PostgreSQL` store.
pub(crate) struct PgInspector {
    client: RefCell<Client>,
    /// The `SELECT` of the database's schema version, which the inspector does not migrate:
    /// the row's columns, then its namespace, of the namespace `$1` (every namespace when
    /// `$1` is NULL; docs/schedules.md §15.5).
    select: String,
    /// Whether the schema keeps keys (version 5 on).
    keyed: bool,
    /// The database's schema version: nodes and claims from 3 on, firing histories from 7 on,
    /// their ring in the row from 10 on.
    version: i64,
}

impl std::fmt::Debug for PgInspector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgInspector").finish_non_exhaustive()
    }
}

/// Connects to `url` and checks that it holds a store of a schema this build reads; the version.
fn open_checked(url: &str) -> Result<(Client, i64), Error> {
    let mut client = connect(url)?;
    let version = pg_schema::check_current(&mut client).map_err(|e| match e {
        pg_schema::CheckError::NotAStore(detail) => Error::NotAStore {
            path: PathBuf::from(redacted(url)),
            detail,
        },
        pg_schema::CheckError::Other(e) => e,
    })?;
    Ok((client, version))
}

impl PgInspector {
    /// Connects and checks the schema; every later read runs in a read-only transaction.
    pub(crate) fn open(url: &str) -> Result<Self, Error> {
        let (mut client, version) = open_checked(url)?;
        client
            .batch_execute("SET default_transaction_read_only = on")
            .map_err(database_error("making the inspector's session read-only"))?;
        let namespace =
            crate::store::codec::namespace_column(version, pg_schema::NAMESPACES_VERSION);
        Ok(PgInspector {
            client: RefCell::new(client),
            select: format!(
                "SELECT {}, {namespace} FROM tickstep_schedules \
                 WHERE ($1::text IS NULL OR {namespace} = $1)",
                pg_codec::columns_of(version)
            ),
            keyed: version >= 5,
            version,
        })
    }

    /// The rows `sql` selects, each with its namespace (the column after the row's).
    fn rows(
        &self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<Vec<(ScheduleRow, String)>, Error> {
        let context = "loading schedules";
        let rows = self
            .client
            .borrow_mut()
            .query(sql, params)
            .map_err(database_error(context))?;
        rows.iter()
            .map(|row| {
                let decoded =
                    pg_codec::decode(row).map_err(|source| Error::Database { context, source })?;
                let namespace: String = row
                    .try_get(crate::store::codec::COLUMN_COUNT)
                    .map_err(database_error(context))?;
                Ok((decoded, namespace))
            })
            .collect()
    }

    /// How the page's SQL is spelt for this database (docs/schedules.md §9.17).
    fn dialect(&self) -> Dialect {
        Dialect::postgres(self.version, pg_schema::NAMESPACES_VERSION)
    }

    /// The namespace column as this database's schema has it (`''` before namespaces).
    fn namespace_column(&self) -> &'static str {
        crate::store::codec::namespace_column(self.version, pg_schema::NAMESPACES_VERSION)
    }
}

impl ReadBackend for PgInspector {
    /// Every row of `namespace` (`None`: of every namespace), by id.
    fn list(&self, namespace: Option<&str>) -> Result<Vec<(ScheduleRow, String)>, Error> {
        self.rows(&format!("{} ORDER BY id", self.select), &[&namespace])
    }

    /// Row `id`, if held in `namespace` (`None`: in any).
    fn get(
        &self,
        id: u64,
        namespace: Option<&str>,
    ) -> Result<Option<(ScheduleRow, String)>, Error> {
        let mut rows = self.rows(
            &format!("{} AND id = $2", self.select),
            &[&namespace, &to_sql(id)],
        )?;
        Ok(rows.pop())
    }

    /// The rows keyed `key` (one per owner and namespace at most), by id; none before schema
    /// version 5.
    fn find_key(
        &self,
        key: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<(ScheduleRow, String)>, Error> {
        if !self.keyed {
            return Ok(Vec::new());
        }
        self.rows(
            &format!("{} AND key = $2 ORDER BY id", self.select),
            &[&namespace, &key],
        )
    }

    /// Schedule `id`'s history, newest first; none before schema version 7.
    fn history(&self, id: u64) -> Result<Vec<crate::store_rows::HistoryRow>, Error> {
        if self.version < 7 {
            return Ok(Vec::new());
        }
        super::history_read::read_history(&mut self.client.borrow_mut(), id, self.version)
    }

    /// The nodes and what each holds (docs/schedules.md §11.43), in database time; at most
    /// `shown` ids per node.
    fn cluster(&self, shown: usize) -> Result<Option<Cluster>, Error> {
        if self.version < 3 {
            // Before claims every row is the one engine's: no nodes, nothing held.
            return Ok(Some(Cluster::default()));
        }
        let context = "reading the nodes and their claims";
        let mut client = self.client.borrow_mut();
        let node_namespace = if self.version >= pg_schema::NAMESPACES_VERSION {
            "n.namespace"
        } else {
            "CAST(NULL AS TEXT)"
        };
        let nodes = client
            .query(
                &format!(
                    "SELECT n.node, \
                        EXTRACT(EPOCH FROM n.lease_until)::float8, \
                        EXTRACT(EPOCH FROM n.started_at)::float8, \
                        n.lease_until > clock_timestamp(), \
                        (SELECT count(*) FROM tickstep_schedules s WHERE s.owner_node = n.node), \
                        ARRAY(SELECT s.id FROM tickstep_schedules s WHERE s.owner_node = n.node \
                              ORDER BY s.id LIMIT $1), \
                        {node_namespace} \
                 FROM tickstep_nodes n ORDER BY n.started_at, n.node"
                ),
                &[&i64::try_from(shown).unwrap_or(i64::MAX)],
            )
            .map_err(database_error(context))?;
        let unheld = client
            .query_one(
                "SELECT count(*) FROM tickstep_schedules s WHERE s.owner_node IS NULL \
                 OR NOT EXISTS (SELECT 1 FROM tickstep_nodes n WHERE n.node = s.owner_node \
                                AND n.lease_until > clock_timestamp())",
                &[],
            )
            .map_err(database_error(context))?;
        Ok(Some(Cluster {
            nodes: nodes
                .iter()
                .map(|row| ClusterNode {
                    node: row.get(0),
                    lease_until: row.get(1),
                    started_at: row.get(2),
                    live: row.get(3),
                    holds: from_sql(row.get(4)),
                    held: row
                        .get::<_, Vec<i64>>(5)
                        .into_iter()
                        .map(|id| crate::ScheduleId::from_raw(from_sql(id)))
                        .collect(),
                    namespace: row.get(6),
                })
                .collect(),
            unheld: from_sql(unheld.get(0)),
        }))
    }

    /// The cluster's events of the last `window` by the database's clock, oldest first: at most
    /// `rows`, the newest (docs/schedules.md §11.50); none, not kept, before schema version 15.
    fn cluster_history(
        &self,
        window: std::time::Duration,
        rows: usize,
    ) -> Result<Option<ClusterHistory>, Error> {
        if self.version < pg_schema::CLUSTER_HISTORY_VERSION {
            return Ok(Some(ClusterHistory {
                kept: false,
                ..ClusterHistory::default()
            }));
        }
        let context = "reading the cluster's history";
        let window = i64::try_from(window.as_nanos()).unwrap_or(i64::MAX);
        let limit = i64::try_from(rows).unwrap_or(i64::MAX - 1);
        let found = self
            .client
            .borrow_mut()
            .query(
                &format!(
                    "SELECT at_ns, node, kind, from_node, schedules, namespace \
                     FROM tickstep_cluster_history WHERE at_ns >= (SELECT {} - $1) \
                     ORDER BY at_ns DESC, seq DESC LIMIT $2",
                    super::cluster_log::NOW_NS
                ),
                &[&window, &(limit + 1)],
            )
            .map_err(database_error(context))?;
        let truncated = found.len() > rows;
        let mut events = found
            .iter()
            .take(rows)
            .map(|row| {
                let kind: String = row.get(2);
                let from: Option<i64> = row.get(3);
                let kind = match (kind.as_str(), from) {
                    ("joined", _) => ClusterEventKind::Joined,
                    ("claimed", _) => ClusterEventKind::Claimed,
                    ("took_over", Some(from)) => ClusterEventKind::TookOver { from },
                    ("held", _) => ClusterEventKind::Held,
                    ("left", _) => ClusterEventKind::Left,
                    (other, _) => {
                        return Err(Error::Database {
                            context,
                            source: format!(
                                "tickstep_cluster_history: unknown kind {:?} (with from_node {from:?})",
                                crate::limits::excerpt(other)
                            )
                            .into(),
                        });
                    }
                };
                let at: i64 = row.get(0);
                let mut event = ClusterEvent::new(
                    at as f64 / 1e9,
                    row.get(1),
                    kind,
                    from_sql(row.get(4)),
                );
                event.namespace = row.get(5);
                Ok(event)
            })
            .collect::<Result<Vec<_>, Error>>()?;
        events.reverse();
        Ok(Some(ClusterHistory {
            events,
            truncated,
            kept: true,
        }))
    }

    /// Every id of `namespace` (`None`: of every namespace), by id.
    fn ids(&self, namespace: Option<&str>) -> Result<Vec<u64>, Error> {
        let column = self.namespace_column();
        let rows = self
            .client
            .borrow_mut()
            .query(
                &format!(
                    "SELECT id FROM tickstep_schedules \
                     WHERE ($1::text IS NULL OR {column} = $1) ORDER BY id"
                ),
                &[&namespace],
            )
            .map_err(database_error("loading schedule ids"))?;
        Ok(rows.iter().map(|r| from_sql(r.get(0))).collect())
    }

    /// How many schedules each namespace holds, by name (docs/schedules.md §15.5); one unnamed
    /// (`""`) namespace for a database from before namespaces.
    fn namespaces(&self) -> Result<Vec<(String, u64)>, Error> {
        let column = self.namespace_column();
        let rows = self
            .client
            .borrow_mut()
            .query(
                &format!(
                    "SELECT {column}, count(*) FROM tickstep_schedules \
                     GROUP BY 1 ORDER BY 1"
                ),
                &[],
            )
            .map_err(database_error("counting schedules by namespace"))?;
        Ok(rows
            .iter()
            .map(|r| (r.get(0), from_sql(r.get(1))))
            .collect())
    }

    fn page(&self, namespace: Option<String>, query: &ListQuery) -> Result<ListPage, Error> {
        read_page(self, self.dialect(), namespace, query)
    }
}

/// An operator's stop of `id` in the store at `url`: the row deleted, a note left and engines
/// notified, in one transaction (a version-1 store, without the notes table, gets no note).
pub(crate) fn act(
    url: &str,
    id: u64,
    action: &crate::store_rows::OperatorAction,
    now_unix_nanos: u64,
) -> Result<Option<u64>, Error> {
    let (mut client, version) = open_checked(url)?;
    if version < 8 {
        return Err(Error::invalid(
            redacted(url),
            format!(
                "this database has schema version {version}; operator actions need version 8: \
                 open it with the engine once to migrate it (docs/schedules.md §9.12)"
            ),
        ));
    }
    stops::act_as_operator(&mut client, id, action, now_unix_nanos)
}

pub(crate) fn stop(url: &str, id: u64, now_unix_nanos: u64) -> Result<bool, Error> {
    let (mut client, version) = open_checked(url)?;
    stops::stop_as_operator(&mut client, id, now_unix_nanos, version >= 2)
}

/// What a row's column reads fail with.
type RowError = Box<dyn std::error::Error + Send + Sync>;

impl Reader for PgInspector {
    type RowError = RowError;

    fn each(
        &self,
        sql: &str,
        params: &[Param],
        each: &mut EachRow<'_, RowError>,
    ) -> Result<(), Error> {
        let context = "listing schedules";
        let params: Vec<_> = params.iter().map(Param::as_pg).collect();
        let rows = self
            .client
            .borrow_mut()
            .query(sql, &params)
            .map_err(database_error(context))?;
        for row in &rows {
            each(row).map_err(|source| Error::Database { context, source })?;
        }
        Ok(())
    }

    fn execute(&self, sql: &str) -> Result<(), Error> {
        self.client
            .borrow_mut()
            .batch_execute(sql)
            .map_err(database_error("listing schedules"))
    }
}
