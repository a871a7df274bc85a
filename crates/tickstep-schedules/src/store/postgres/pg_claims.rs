//! Claims, the node lease and fencing on the store thread (docs/schedules.md §11.25–§11.27): what a node
//! takes, how long it may keep it, and what it learns when another node took something back.
//!
//! * **Node lease.** Each open engine is a node with a random 63-bit id and a row in
//!   `tickstep_nodes` whose `lease_until` is database time (`clock_timestamp()`). The store thread
//!   renews it every third of the lease ([`Worker::beat`]): one single-row statement, whatever
//!   the number of schedules the node holds.
//! * **Claims.** A schedule row names its holder (`owner_node`) and the fence of the claim that
//!   gave it to that holder. A row nobody holds, or whose holder's lease ran out, is claimable:
//!   the thread claims such rows ahead of their deadlines (due within one lease of the engine's
//!   clock) in batches, bumping the fence ([`Worker::claim_due`]), and leaves the whole rows in
//!   the mailbox (`mailbox.rs`) for the engine's next tick, which applies them like rows at open.
//! * **Fencing.** The thread remembers the fence of every row it holds; every write carries it
//!   (see `codec`). A write that matches nothing because another node claimed the row since is
//!   refused: counted, logged, and the schedule handed to the engine as lost, to be dropped.
//! * **Release.** A clean shutdown hands every row back (`owner_node = NULL`) and removes the
//!   node, so the next engine to open claims them at once instead of after a lease.
//! * **History.** Each of these appends to the cluster's history in its own statement or
//!   transaction (`cluster_log.rs`, docs/schedules.md §11.50).

use std::time::{Duration, Instant};

use postgres::types::ToSql;

use super::cluster_log;
use super::database_error;
use super::pg_codec;
use super::store_thread::Worker;
use crate::Error;
use crate::store::codec::to_sql;
use crate::store_rows::ClaimedRow;

/// Rows per claim statement after open.
pub(super) const CLAIM_BATCH: i64 = 1024;
/// Claim statements per wake-up at most, so a large takeover does not hold queued writes back.
const CLAIM_ROUNDS: usize = 8;

/// Seconds as `make_interval` takes them.
fn seconds(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// Registers node `node` with a fresh lease (on the opening connection, before the thread
/// starts).
///
/// # Errors
///
/// [`Error::Database`] when the server refuses the row.
pub(super) fn register(
    client: &mut postgres::Client,
    node: i64,
    namespace: crate::Namespace,
    lease: Duration,
) -> Result<(), Error> {
    let context = "registering this node";
    let mut tx = client.transaction().map_err(database_error(context))?;
    tx.execute(
        "INSERT INTO tickstep_nodes (node, lease_until, namespace) \
         VALUES ($1, clock_timestamp() + make_interval(secs => $2), $3)",
        &[&node, &seconds(lease), &namespace.as_str()],
    )
    .map_err(database_error(context))?;
    cluster_log::joined(&mut tx, node, namespace.as_str())?;
    tx.commit().map_err(database_error(context))
}

/// Resumes node `node`, which the host names across restarts (docs/schedules.md §11.49): takes
/// its row once the lease of the process that had it has run out (database time), or makes it.
/// A live process keeps renewing that lease: after two leases of waiting the open gives up.
///
/// # Errors
///
/// [`Error::NodeInUse`] when the lease was still running after two leases;
/// [`Error::Database`] when the server refuses a statement.
pub(super) fn resume(
    client: &mut postgres::Client,
    node: i64,
    namespace: crate::Namespace,
    lease: Duration,
) -> Result<(), Error> {
    let context = "resuming this node";
    let give_up = std::time::Instant::now() + lease * 2;
    loop {
        // One statement: taken only if its lease ran out, so two processes resuming the same
        // node at once cannot both have it.
        let taken = client
            .execute(
                "UPDATE tickstep_nodes SET lease_until = clock_timestamp() + make_interval(secs => $2), \
                 started_at = clock_timestamp(), namespace = $3 \
                 WHERE node = $1 AND lease_until < clock_timestamp()",
                &[&node, &seconds(lease), &namespace.as_str()],
            )
            .map_err(database_error(context))?;
        let made = taken == 0
            && client
                .execute(
                    "INSERT INTO tickstep_nodes (node, lease_until, namespace) \
                     VALUES ($1, clock_timestamp() + make_interval(secs => $2), $3) \
                     ON CONFLICT (node) DO NOTHING",
                    &[&node, &seconds(lease), &namespace.as_str()],
                )
                .map_err(database_error(context))?
                == 1;
        if taken == 1 || made {
            return cluster_log::joined(client, node, namespace.as_str());
        }
        if std::time::Instant::now() >= give_up {
            return Err(Error::NodeInUse {
                node: node.unsigned_abs(),
                waited: lease * 2,
            });
        }
        std::thread::sleep(
            (lease / 10).clamp(Duration::from_millis(10), Duration::from_millis(250)),
        );
    }
}

impl Worker {
    /// Renews this node's lease (re-creating its row if someone removed it). At most once per
    /// [`cluster_log::HOLDINGS_EVERY`] the renewal is a transaction that also samples what the
    /// node holds and prunes the cluster's history (docs/schedules.md §11.50); otherwise it is
    /// the one statement.
    pub(super) fn beat(&mut self) -> Result<(), Error> {
        const RENEW: &str = "INSERT INTO tickstep_nodes (node, lease_until, namespace) \
             VALUES ($1, clock_timestamp() + make_interval(secs => $2), $3) \
             ON CONFLICT (node) DO UPDATE SET lease_until = EXCLUDED.lease_until";
        let context = "renewing this node's lease";
        self.reconnect_if_closed()?;
        let (node, namespace) = (self.node, self.namespace.as_str());
        let params: [&(dyn ToSql + Sync); 3] = [&node, &seconds(self.lease), &namespace];
        let now = Instant::now();
        if now < self.next_sample {
            return self
                .client
                .execute(RENEW, &params)
                .map(drop)
                .map_err(database_error(context));
        }
        let mut tx = self.client.transaction().map_err(database_error(context))?;
        tx.execute(RENEW, &params)
            .map_err(database_error(context))?;
        cluster_log::sample_and_prune(&mut tx, node, namespace)?;
        tx.commit().map_err(database_error(context))?;
        self.next_sample = now + cluster_log::HOLDINGS_EVERY;
        Ok(())
    }

    /// The other nodes whose lease has run out now (database time): the claim's `$5`
    /// (docs/schedules.md §11.58). One read of the small nodes table.
    pub(super) fn lapsed_nodes(&mut self) -> Result<Vec<i64>, Error> {
        let row = self
            .client
            .query_one(
                "SELECT coalesce(array_agg(node), '{}') FROM tickstep_nodes \
                 WHERE lease_until < clock_timestamp() AND node <> $1",
                &[&self.node],
            )
            .map_err(database_error("reading which nodes' leases ran out"))?;
        Ok(row.get(0))
    }

    /// Runs one claim statement: up to `limit` claimable rows (`None`: all) due by `horizon`
    /// (Unix ns, as the database stores it), taken from `lapsed` nodes or from nobody. Records
    /// each row's fence; returns the rows, each with the node that held it before.
    pub(super) fn claim(
        &mut self,
        horizon: i64,
        limit: Option<i64>,
        lapsed: &[i64],
    ) -> Result<Vec<ClaimedRow>, Error> {
        let context = "claiming schedules";
        self.reconnect_if_closed()?;
        let namespace = self.namespace.as_str();
        let params: [&(dyn ToSql + Sync); 5] = [&self.node, &horizon, &limit, &namespace, &lapsed];
        let rows = self
            .client
            .query(cluster_log::claim_sql(), &params)
            .map_err(database_error(context))?;
        let mut claimed = Vec::with_capacity(rows.len());
        for row in &rows {
            let fence: i64 = row
                .try_get(pg_codec::FENCE_COLUMN)
                .map_err(database_error(context))?;
            let was: Option<i64> = row
                .try_get(pg_codec::PREVIOUS_HOLDER_COLUMN)
                .map_err(database_error(context))?;
            let decoded =
                pg_codec::decode(row).map_err(|source| Error::Database { context, source })?;
            self.fences.insert(decoded.id, fence);
            claimed.push(ClaimedRow {
                row: decoded,
                from_node: was.and_then(|n| u64::try_from(n).ok()),
            });
        }
        Ok(claimed)
    }

    /// Claims rows due within one lease of the engine's clock, batch after batch, and leaves
    /// them for the engine (whose host the mailbox wakes). The engine's clock is the one its
    /// last poll noted, moved on by the time since, so an engine with nothing due, which does
    /// not tick, still claims what comes due (docs/schedules.md §11.40). Opening notes the
    /// clock once; nothing is claimed before that.
    pub(super) fn claim_due(&mut self) -> Result<(), Error> {
        let now = self.mailbox.engine_now();
        if now == 0 {
            return Ok(());
        }
        let lookahead = u64::try_from(self.lease.as_nanos()).unwrap_or(u64::MAX);
        let horizon = to_sql(now.saturating_add(lookahead).min(i64::MAX as u64));
        self.reconnect_if_closed()?;
        // Read once for the rounds: a node whose lease runs out meanwhile waits for the next
        // claim, a third of a lease later, as it would between two claims.
        let lapsed = self.lapsed_nodes()?;
        for _ in 0..CLAIM_ROUNDS {
            let rows = self.claim(horizon, Some(CLAIM_BATCH), &lapsed)?;
            let full = i64::try_from(rows.len()).is_ok_and(|n| n == CLAIM_BATCH);
            if !rows.is_empty() {
                tracing::info!(
                    node = self.node,
                    schedules = rows.len(),
                    "PostgreSQL schedule store: claimed schedules nobody held"
                );
                let ids: Vec<u64> = rows.iter().map(|c| c.row.id).collect();
                let taken = self.mailbox.deliver(rows);
                self.claim_marks.mark(ids, taken);
            }
            if !full {
                break;
            }
        }
        Ok(())
    }

    /// Counts writes another node's claim refused, forgets those rows and tells the engine to
    /// drop them.
    pub(super) fn refused(&mut self, ids: &[u64]) {
        if ids.is_empty() {
            return;
        }
        self.mailbox.count_refused(ids.len() as u64);
        let lost: Vec<u64> = ids
            .iter()
            .copied()
            .filter(|id| self.fences.remove(id).is_some())
            .collect();
        if lost.is_empty() {
            return;
        }
        tracing::warn!(
            node = self.node,
            refused_writes = ids.len(),
            schedules = lost.len(),
            first = lost[0],
            "PostgreSQL schedule store: another node took these schedules over (this node's lease ran out); \
             its late writes were refused and the schedules are dropped here"
        );
        self.mailbox.lose(lost);
    }

    /// Hands every row this node holds back and removes the node (a clean shutdown).
    pub(super) fn release(&mut self) -> Result<(), Error> {
        self.reconnect_if_closed()?;
        let context = "releasing this node's schedules";
        let mut tx = self.client.transaction().map_err(database_error(context))?;
        let released = tx
            .execute(
                "UPDATE tickstep_schedules SET owner_node = NULL WHERE owner_node = $1",
                &[&self.node],
            )
            .map_err(database_error(context))?;
        tx.execute("DELETE FROM tickstep_nodes WHERE node = $1", &[&self.node])
            .map_err(database_error(context))?;
        cluster_log::left(&mut tx, self.node, self.namespace.as_str(), released)?;
        tx.commit().map_err(database_error(context))
    }
}
