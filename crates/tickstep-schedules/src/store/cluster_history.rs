//! A `PostgreSQL` store's cluster over time: the events its nodes recorded (joined, claimed,
//! took over, holdings sampled, left), as
//! [`Inspector::cluster_history`](crate::Inspector::cluster_history) reads them for a window
//! (docs/schedules.md §11.50), and the holdings and takeovers they tell.

use std::time::Duration;

/// How many events [`Inspector::cluster_history`](crate::Inspector::cluster_history) returns at
/// most: the newest of the window (a day of a minute's samples for a dozen nodes).
pub const CLUSTER_HISTORY_ROWS: usize = 20_000;

/// How long a store keeps its cluster's events, and so the longest window a read answers: a day
/// (docs/schedules.md §11.50).
pub const CLUSTER_HISTORY_KEPT: Duration = Duration::from_secs(24 * 3600);

/// What one event of a node's life was ([`ClusterEvent::kind`]).
///
/// ```
/// use tickstep_schedules::ClusterEventKind;
/// assert_eq!(ClusterEventKind::TookOver { from: 7 }.to_string(), "took over from node 7");
/// assert_eq!(ClusterEventKind::Held.to_string(), "held");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClusterEventKind {
    /// The node registered (or a host resumed it, docs/schedules.md §11.49); it held nothing yet.
    Joined,
    /// It claimed rows nobody held (never claimed, or handed back by a node that left).
    Claimed,
    /// It claimed rows from node `from`, whose lease had run out.
    TookOver {
        /// The node whose lease ran out.
        from: i64,
    },
    /// A sample, with a lease renewal, of how many rows named it as holder.
    Held,
    /// It left cleanly, handing back the rows it held.
    Left,
}

impl std::fmt::Display for ClusterEventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClusterEventKind::Joined => f.write_str("joined"),
            ClusterEventKind::Claimed => f.write_str("claimed"),
            ClusterEventKind::TookOver { from } => write!(f, "took over from node {from}"),
            ClusterEventKind::Held => f.write_str("held"),
            ClusterEventKind::Left => f.write_str("left"),
        }
    }
}

/// One event of a node's life, as the store recorded it in the same statement or transaction as
/// the claim, renewal or release it tells of.
///
/// ```
/// use tickstep_schedules::{ClusterEvent, ClusterEventKind};
/// let e = ClusterEvent::new(1_700_000_000.0, 42, ClusterEventKind::Held, 3);
/// assert_eq!((e.node, e.schedules), (42, 3));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ClusterEvent {
    /// When, float Unix seconds of the database's clock (that of the leases).
    pub at: f64,
    /// The node it happened to.
    pub node: i64,
    /// What happened.
    pub kind: ClusterEventKind,
    /// How many schedules: claimed or taken over, held at the sample, or handed back when
    /// leaving (0 when joining).
    pub schedules: u64,
    /// The node's namespace (docs/schedules.md §15.2).
    pub namespace: Option<String>,
}

impl ClusterEvent {
    /// An event of `node` at `at` (float Unix seconds), with no namespace.
    ///
    /// ```
    /// use tickstep_schedules::{ClusterEvent, ClusterEventKind};
    /// let e = ClusterEvent::new(10.0, 1, ClusterEventKind::Joined, 0);
    /// assert_eq!(e.namespace, None);
    /// ```
    #[must_use]
    pub fn new(at: f64, node: i64, kind: ClusterEventKind, schedules: u64) -> ClusterEvent {
        ClusterEvent {
            at,
            node,
            kind,
            schedules,
            namespace: None,
        }
    }
}

/// One takeover: when node `to` claimed `schedules` rows from node `from`, whose lease had run out.
///
/// ```
/// # use tickstep_schedules::{ClusterEvent, ClusterEventKind, ClusterHistory};
/// let history = ClusterHistory::of(vec![ClusterEvent::new(5.0, 2, ClusterEventKind::TookOver { from: 1 }, 4)]);
/// let t = history.takeovers().next().unwrap();
/// assert_eq!((t.at, t.from, t.to, t.schedules), (5.0, 1, 2, 4));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct ClusterTakeover {
    /// When, float Unix seconds of the database's clock.
    pub at: f64,
    /// The node whose lease ran out.
    pub from: i64,
    /// The node that claimed its rows.
    pub to: i64,
    /// How many rows that claim took.
    pub schedules: u64,
}

/// The cluster's events over a window ([`Inspector::cluster_history`](crate::Inspector::cluster_history),
/// docs/schedules.md §11.50).
///
/// ```
/// use tickstep_schedules::{ClusterEvent, ClusterEventKind as K, ClusterHistory};
/// let history = ClusterHistory::of(vec![
///     ClusterEvent::new(0.0, 1, K::Joined, 0),
///     ClusterEvent::new(1.0, 1, K::Claimed, 5),
///     ClusterEvent::new(60.0, 1, K::Held, 5),
///     ClusterEvent::new(90.0, 1, K::Left, 5),
/// ]);
/// let holdings = history.holdings();
/// assert_eq!(holdings.len(), 1);
/// assert_eq!(holdings[0].node, 1);
/// let counts: Vec<u64> = holdings[0].points.iter().map(|p| p.1).collect();
/// assert_eq!(counts, [0, 5, 5, 5, 0]);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ClusterHistory {
    /// The events, oldest first: at most [`CLUSTER_HISTORY_ROWS`], the newest of the window.
    pub events: Vec<ClusterEvent>,
    /// Whether older events of the window were left out to stay within [`CLUSTER_HISTORY_ROWS`].
    pub truncated: bool,
    /// Whether the store keeps a history at all: `false` for a database of a schema from before
    /// it (`PostgreSQL` schema version 15), which has no events.
    pub kept: bool,
}

/// One node's holdings over a window, as its events tell them ([`ClusterHistory::holdings`]).
///
/// ```
/// # use tickstep_schedules::{ClusterEvent, ClusterEventKind, ClusterHistory};
/// let history = ClusterHistory::of(vec![ClusterEvent::new(3.0, 9, ClusterEventKind::Held, 2)]);
/// assert_eq!(history.holdings()[0].points, [(3.0, 2)]);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct NodeHoldings {
    /// The node.
    pub node: i64,
    /// (when, float Unix seconds of the database's clock; how many schedules it held then),
    /// oldest first.
    pub points: Vec<(f64, u64)>,
    /// When it left cleanly, if it did within the window.
    pub left: Option<f64>,
}

impl ClusterHistory {
    /// A history of `events` (oldest first), complete and kept: for tests and examples.
    ///
    /// ```
    /// let h = tickstep_schedules::ClusterHistory::of(Vec::new());
    /// assert!(h.kept && !h.truncated && h.events.is_empty());
    /// ```
    #[must_use]
    pub fn of(events: Vec<ClusterEvent>) -> ClusterHistory {
        ClusterHistory {
            events,
            truncated: false,
            kept: true,
        }
    }

    /// The takeovers, oldest first.
    ///
    /// ```
    /// let h = tickstep_schedules::ClusterHistory::default();
    /// assert_eq!(h.takeovers().count(), 0);
    /// ```
    pub fn takeovers(&self) -> impl Iterator<Item = ClusterTakeover> + '_ {
        self.events.iter().filter_map(|e| match e.kind {
            ClusterEventKind::TookOver { from } => Some(ClusterTakeover {
                at: e.at,
                from,
                to: e.node,
                schedules: e.schedules,
            }),
            _ => None,
        })
    }

    /// Each node's holdings over the window, in the order the nodes first appear: a node holds
    /// 0 when it joins, each claim or takeover adds to what it held, each sample says what it
    /// held (schedules it created count from its next sample), and when it leaves it held what it
    /// handed back and then 0. Before its first sample or join in the window what a
    /// node held is unknown, and its claims add no point until then.
    ///
    /// ```
    /// use tickstep_schedules::{ClusterEvent, ClusterEventKind as K, ClusterHistory};
    /// // The window starts after node 2 joined: its claim is unknown ground until a sample.
    /// let h = ClusterHistory::of(vec![
    ///     ClusterEvent::new(1.0, 2, K::TookOver { from: 1 }, 3),
    ///     ClusterEvent::new(2.0, 2, K::Held, 8),
    ///     ClusterEvent::new(3.0, 2, K::Claimed, 1),
    /// ]);
    /// assert_eq!(h.holdings()[0].points, [(2.0, 8), (3.0, 9)]);
    /// ```
    #[must_use]
    pub fn holdings(&self) -> Vec<NodeHoldings> {
        let mut nodes: Vec<(NodeHoldings, Option<u64>)> = Vec::new();
        for e in &self.events {
            let at = nodes.iter().position(|(n, _)| n.node == e.node);
            let index = at.unwrap_or_else(|| {
                nodes.push((
                    NodeHoldings {
                        node: e.node,
                        points: Vec::new(),
                        left: None,
                    },
                    None,
                ));
                nodes.len() - 1
            });
            let (series, held) = &mut nodes[index];
            let now = match e.kind {
                ClusterEventKind::Joined => Some(0),
                ClusterEventKind::Held => Some(e.schedules),
                ClusterEventKind::Claimed | ClusterEventKind::TookOver { .. } => {
                    held.map(|h| h.saturating_add(e.schedules))
                }
                ClusterEventKind::Left => {
                    // What it handed back, then nothing: a drop, not a slope.
                    series.left = Some(e.at);
                    series.points.push((e.at, e.schedules));
                    Some(0)
                }
            };
            if let Some(count) = now {
                series.points.push((e.at, count));
            }
            *held = now;
        }
        nodes.into_iter().map(|(n, _)| n).collect()
    }
}
