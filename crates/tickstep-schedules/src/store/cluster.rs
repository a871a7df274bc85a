//! Who shares a `PostgreSQL` store: its nodes, their leases and what each holds, as
//! [`Inspector::cluster`](crate::Inspector::cluster) reads them (docs/schedules.md §11.43).

use crate::ScheduleId;

/// How many ids [`Inspector::cluster`](crate::Inspector::cluster) lists per node (its `holds` counts them all).
pub const HELD_SHOWN: usize = 50;

/// The nodes sharing a `PostgreSQL` store and what each holds ([`Inspector::cluster`](crate::Inspector::cluster),
/// docs/schedules.md §11.43).
///
/// ```
/// let cluster = tickstep_schedules::Cluster::default();
/// assert!(cluster.nodes.is_empty());
/// assert_eq!(cluster.unheld, 0);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Cluster {
    /// Every node with a row in `tickstep_nodes`, oldest first.
    pub nodes: Vec<ClusterNode>,
    /// Schedules no live node holds: never claimed, released, or held by a node whose lease ran
    /// out (claimable, docs/schedules.md §11.26).
    pub unheld: u64,
}

/// One node of a [`Cluster`]: its lease and its claims.
///
/// ```
/// # let node = tickstep_schedules::Cluster::default().nodes.first().cloned();
/// assert!(node.is_none());
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ClusterNode {
    /// The node's id (random, 63 bits).
    pub node: i64,
    /// When its lease runs out, float Unix seconds of the database's clock.
    pub lease_until: f64,
    /// When it registered, float Unix seconds of the database's clock.
    pub started_at: f64,
    /// Whether its lease still runs (by the database's clock, when read).
    pub live: bool,
    /// How many schedules name it as their holder.
    pub holds: u64,
    /// The first [`HELD_SHOWN`] of them, by id.
    pub held: Vec<ScheduleId>,
    /// The namespace the node serves (docs/schedules.md §15.2); `None` for a node of a build
    /// from before namespaces.
    pub namespace: Option<String>,
}
