//! What a `PostgreSQL` store can tell of its cluster over time, for the cluster page
//! (docs/serve.md §13.19): each node's life over the last hour (from its start to its lease's end,
//! or to now while the lease runs) as an SVG timeline drawn here, on the server, and the
//! schedules taken over from a node whose lease ran out (the `taken_over` fault a takeover
//! leaves, docs/schedules.md §11.39).

use maud::{Markup, html};

use super::pages::Text;
use super::when::relative;
use crate::schedules::{Cluster, FaultKind, Inspector, StoredSchedule};

/// How many nodes the timeline draws and how many takeovers the page lists (all are counted).
pub(crate) const SHOWN: usize = 50;
/// The timeline's span, seconds.
const HOUR: f64 = 3600.0;

/// A schedule whose last fault is a takeover: its id and what the store recorded.
pub(crate) struct Takeover {
    pub(crate) id: u64,
    pub(crate) what: String,
}

/// The takeovers the store records: the first [`SHOWN`] by id, and how many there are.
pub(crate) struct Takeovers {
    pub(crate) listed: Vec<Takeover>,
    pub(crate) count: usize,
}

impl Takeovers {
    /// The schedules of `saved` whose last fault is a takeover.
    pub(crate) fn of(saved: &[StoredSchedule]) -> Takeovers {
        let mut all: Vec<Takeover> = saved
            .iter()
            .filter_map(|s| {
                let fault = s.last_fault.as_ref()?;
                (fault.kind == FaultKind::TakenOver).then(|| Takeover {
                    id: s.id.get(),
                    what: match &fault.value {
                        crate::schedules::Value::Str(text) => text.clone(),
                        other => other.to_string(),
                    },
                })
            })
            .collect();
        all.sort_by_key(|t| t.id);
        let count = all.len();
        all.truncate(SHOWN);
        Takeovers { listed: all, count }
    }

    /// Read from the store `inspector` shows.
    pub(crate) fn read(inspector: &Inspector) -> Result<Takeovers, crate::schedules::Error> {
        Ok(Takeovers::of(&inspector.list()?))
    }
}

/// The page's part: the nodes' timeline over the last hour and the takeovers.
pub(crate) fn render(cluster: &Cluster, takeovers: &Takeovers, now: f64) -> Markup {
    const W: f64 = 720.0;
    const LABEL: f64 = 190.0;
    const ROW: f64 = 24.0;
    let nodes: Vec<_> = cluster.nodes.iter().take(SHOWN).collect();
    let height = ROW * nodes.len() as f64 + 26.0;
    let from = now - HOUR;
    let x = |t: f64| LABEL + (t.clamp(from, now) - from) / HOUR * (W - LABEL - 6.0);
    html! {
        section.card id="cluster-hour" {
            h2 { "Nodes over the last hour" }
            p.muted {
                "each node from its start to its lease's end (green while the lease runs, grey once it ran out), "
                "by the database's clock against this dashboard's"
            }
            @if nodes.is_empty() {
                p.empty { "no node has opened this store" }
            } @else {
                svg.timeline role="img" aria-label="each node's life over the last hour"
                    viewBox={ "0 0 " (W) " " (height) } {
                    @for (i, n) in nodes.iter().enumerate() {
                        @let y = ROW * i as f64 + 4.0;
                        @let (x0, x1) = (x(n.started_at), x(if n.live { now } else { n.lease_until }));
                        text.tick x="4" y=(y + 14.0) { "node " (n.node) }
                        @if n.lease_until >= from {
                            rect class={ "span " (if n.live { "live" } else { "expired" }) }
                                x=(format!("{x0:.1}")) y=(y) width=(format!("{:.1}", (x1 - x0).max(2.0))) height="16" {
                                title {
                                    "node " (n.node) ": started " (relative(n.started_at, now))
                                    "; lease " (if n.live { "runs until " } else { "ran out " })
                                    (relative(n.lease_until, now))
                                }
                            }
                        } @else {
                            text.tick x=(LABEL) y=(y + 14.0) { "lease ran out over an hour ago" }
                        }
                    }
                    line.axis x1=(LABEL) y1=(height - 20.0) x2=(W - 6.0) y2=(height - 20.0) {}
                    text.tick x=(LABEL) y=(height - 6.0) { "an hour ago" }
                    text.tick x=(W - 6.0) y=(height - 6.0) text-anchor="end" { "now" }
                }
            }
        }
        section.card id="takeovers" {
            h2 { "Takeovers" }
            @if takeovers.count == 0 {
                p.empty { "no schedule was taken over from a node whose lease ran out" }
            } @else {
                p.count {
                    "schedules whose last fault is a takeover (a node's lease ran out while a firing "
                    "ran, and another node claimed the schedule and settled that firing): " (takeovers.count)
                }
                div.scroll {
                    table id="takeover-rows" {
                        tr { th { "schedule" } th { "what the store recorded" } }
                        @for t in &takeovers.listed {
                            tr {
                                td { a href={ "/dashboard/schedules/" (t.id) } { "#" (t.id) } }
                                td { (Text(&t.what)) }
                            }
                        }
                    }
                }
                @if takeovers.count > takeovers.listed.len() {
                    p.muted { "… " (takeovers.count - takeovers.listed.len()) " more" }
                }
            }
        }
    }
}
