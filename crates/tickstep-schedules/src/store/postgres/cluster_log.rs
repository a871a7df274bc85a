//! The cluster's history (docs/schedules.md §11.50): what a node's life appends to
//! `tickstep_cluster_history`, always in the statement or transaction that made the event, so the
//! history can never disagree with the claims, the leases and the holdings it records.
//!
//! * **joined**: registration or resumption of the node (`register`/`resume` in `pg_claims.rs`);
//! * **claimed** / **took over**: the claim statement itself, wrapped in a data-modifying `WITH`
//!   that appends one row per previous holder of the rows it claimed (none when it claimed
//!   nothing), so it costs the claim no round trip;
//! * **held**: a sample of the rows that name the node as holder, in the lease renewal's
//!   transaction, at most once per [`HOLDINGS_EVERY`]; the same transaction prunes what is older
//!   than [`CLUSTER_HISTORY_KEPT`];
//! * **left**: in the release's transaction, with the number of rows it handed back.

use std::sync::OnceLock;
use std::time::Duration;

use postgres::GenericClient;

use super::database_error;
use super::pg_codec;
use crate::Error;
use crate::store::cluster_history::CLUSTER_HISTORY_KEPT;

/// The database's clock as Unix nanoseconds (`clock_timestamp()` has microseconds), as every
/// event's `at_ns` is written: the clock of the leases (docs/schedules.md §11.29), shared by every
/// node.
pub(crate) const NOW_NS: &str =
    "(floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint * 1000)";

/// How often, at most, a node samples its holdings (on a lease renewal).
pub(super) const HOLDINGS_EVERY: Duration = Duration::from_secs(60);

/// The columns every append names.
const INSERT: &str = "INSERT INTO tickstep_cluster_history \
                      (at_ns, node, namespace, kind, from_node, schedules)";

/// `claim` (a claim statement of `codec`: node `$1`, namespace `$4`, returning each row's
/// previous holder as `was`) appending, in the same statement, one event per previous holder:
/// `took_over` from a node that is not `$1`, `claimed` for rows nobody held (or `$1` held, a
/// resumed node's own). Returns what `claim` returns, in its order.
fn logged(claim: &str) -> String {
    format!(
        "WITH claimed AS ({claim}), \
         logged AS ({INSERT} \
             SELECT {NOW_NS}, $1, $4, \
                    CASE WHEN was IS NULL OR was = $1 THEN 'claimed' ELSE 'took_over' END, \
                    NULLIF(was, $1), count(*) \
             FROM claimed GROUP BY was) \
         SELECT * FROM claimed"
    )
}

/// The claim after open ([`pg_codec::claim_sql`]), logged.
pub(super) fn claim_sql() -> &'static str {
    static SQL: OnceLock<String> = OnceLock::new();
    SQL.get_or_init(|| logged(pg_codec::claim_sql()))
}

/// The claim at open ([`pg_codec::load_sql`]), logged.
pub(super) fn load_sql() -> &'static str {
    static SQL: OnceLock<String> = OnceLock::new();
    SQL.get_or_init(|| logged(pg_codec::load_sql()))
}

/// Appends that node `node` of `namespace` joined (registered or resumed).
pub(super) fn joined(
    client: &mut impl GenericClient,
    node: i64,
    namespace: &str,
) -> Result<(), Error> {
    client
        .execute(
            &format!("{INSERT} VALUES ({NOW_NS}, $1, $2, 'joined', NULL, 0)"),
            &[&node, &namespace],
        )
        .map(drop)
        .map_err(database_error("recording that this node joined"))
}

/// Appends how many rows name `node` as holder, then prunes every event older than
/// [`CLUSTER_HISTORY_KEPT`] (inside the lease renewal's transaction).
pub(super) fn sample_and_prune(
    client: &mut impl GenericClient,
    node: i64,
    namespace: &str,
) -> Result<(), Error> {
    let context = "recording this node's holdings";
    client
        .execute(
            &format!(
                "{INSERT} SELECT {NOW_NS}, $1, $2, 'held', NULL, count(*) \
                 FROM tickstep_schedules WHERE owner_node = $1"
            ),
            &[&node, &namespace],
        )
        .map_err(database_error(context))?;
    let retention = i64::try_from(CLUSTER_HISTORY_KEPT.as_nanos()).unwrap_or(i64::MAX);
    client
        .execute(
            // The cut-off in a subquery: evaluated once, so the index on `at_ns` serves the
            // delete, where `clock_timestamp()` (volatile) in the comparison itself is evaluated
            // for every row of a sequential scan (24 ms on a day of ten nodes' samples).
            &format!("DELETE FROM tickstep_cluster_history WHERE at_ns < (SELECT {NOW_NS} - $1)"),
            &[&retention],
        )
        .map(drop)
        .map_err(database_error("pruning the cluster's history"))
}

/// Appends that `node` left, handing `released` rows back (inside the release's transaction).
pub(super) fn left(
    client: &mut impl GenericClient,
    node: i64,
    namespace: &str,
    released: u64,
) -> Result<(), Error> {
    let released = i64::try_from(released).unwrap_or(i64::MAX);
    client
        .execute(
            &format!("{INSERT} VALUES ({NOW_NS}, $1, $2, 'left', NULL, $3)"),
            &[&node, &namespace, &released],
        )
        .map(drop)
        .map_err(database_error("recording that this node left"))
}
