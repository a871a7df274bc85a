//! What a `PostgreSQL` store can tell of its cluster over time, for the cluster page
//! (docs/serve.md §13.19): each node's life over the last hour (from its start to its lease's end,
//! or to now while the lease runs, or to when it left) as an SVG timeline drawn here, on the
//! server; each node's holdings over the hour as an SVG line chart with the numbers in a table
//! beside it; the takeovers of the hour from the store's cluster history (when, from, to, how
//! many, docs/schedules.md §11.50); and the schedules whose last fault is a takeover (the
//! `taken_over` fault a takeover leaves, docs/schedules.md §11.39).

use maud::{Markup, html};
use tickstep_host::relative;

use super::pages::Text;
use super::when::When;
use crate::schedules::{Cluster, ClusterHistory, FaultKind, Inspector, ListQuery, NodeHoldings};

/// How many nodes the timeline and the chart draw and how many takeovers the page lists (all
/// are counted).
pub(crate) const SHOWN: usize = 50;
/// The timeline's span, seconds.
const HOUR: f64 = 3600.0;
/// The colours the chart's lines cycle through (`series-0` … in the stylesheet).
const SERIES: usize = 6;

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
    /// Read from the store `inspector` shows: one page of the schedules whose last fault is a
    /// takeover, by id, and how many there are (docs/schedules.md §9.19), never every schedule.
    pub(crate) fn read(inspector: &Inspector) -> Result<Takeovers, crate::schedules::Error> {
        let page = inspector.page(&ListQuery {
            last_fault: Some(FaultKind::TakenOver),
            ..ListQuery::new(SHOWN)
        })?;
        let listed = page
            .rows
            .into_iter()
            .filter_map(|s| {
                let fault = s.last_fault?;
                Some(Takeover {
                    id: s.id.get(),
                    what: match fault.value {
                        crate::schedules::Value::Str(text) => text,
                        other => other.to_string(),
                    },
                })
            })
            .collect();
        Ok(Takeovers {
            listed,
            count: usize::try_from(page.matched).unwrap_or(usize::MAX),
        })
    }
}

/// The cluster's last hour as the store's history tells it (docs/schedules.md §11.50).
pub(crate) fn read_hour(inspector: &Inspector) -> Result<ClusterHistory, crate::schedules::Error> {
    Ok(inspector
        .cluster_history(std::time::Duration::from_secs_f64(HOUR))?
        .unwrap_or_default())
}

/// A node of the history that is no longer in `tickstep_nodes`: it left cleanly in the hour.
struct Gone {
    node: i64,
    /// Its first event of the hour (its join, or an hour ago).
    from: f64,
    left: f64,
    released: u64,
}

/// The nodes of `history` that left cleanly and so have no row in `cluster` any more.
fn gone(cluster: &Cluster, history: &ClusterHistory, from: f64) -> Vec<Gone> {
    history
        .holdings()
        .into_iter()
        .filter(|h| !cluster.nodes.iter().any(|n| n.node == h.node))
        .filter_map(|h| {
            let left = h.left?;
            let joined = history
                .events
                .iter()
                .find(|e| e.node == h.node && e.kind == crate::schedules::ClusterEventKind::Joined);
            let released = history
                .events
                .iter()
                .rev()
                .find(|e| e.node == h.node && e.kind == crate::schedules::ClusterEventKind::Left)
                .map_or(0, |e| e.schedules);
            Some(Gone {
                node: h.node,
                from: joined.map_or(from, |e| e.at),
                left,
                released,
            })
        })
        .collect()
}

/// The page's part: the nodes' timeline over the last hour, their holdings, and the takeovers.
pub(crate) fn render(
    cluster: &Cluster,
    history: &ClusterHistory,
    takeovers: &Takeovers,
    now: f64,
) -> Markup {
    const W: f64 = 720.0;
    const LABEL: f64 = 190.0;
    const ROW: f64 = 24.0;
    let nodes: Vec<_> = cluster.nodes.iter().take(SHOWN).collect();
    let from = now - HOUR;
    let gone = gone(cluster, history, from);
    let gone: Vec<_> = gone.iter().take(SHOWN - nodes.len()).collect();
    let height = ROW * (nodes.len() + gone.len()) as f64 + 26.0;
    let x = |t: f64| LABEL + (t.clamp(from, now) - from) / HOUR * (W - LABEL - 6.0);
    html! {
        section.card id="cluster-hour" {
            h2 { "Nodes over the last hour" }
            p.muted {
                "each node from its start to its lease's end (green while the lease runs, grey once it ran out, "
                "blue to when it left cleanly), by the database's clock against this dashboard's"
            }
            @if nodes.is_empty() && gone.is_empty() {
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
                    @for (i, g) in gone.iter().enumerate() {
                        @let y = ROW * (nodes.len() + i) as f64 + 4.0;
                        @let (x0, x1) = (x(g.from), x(g.left));
                        text.tick x="4" y=(y + 14.0) { "node " (g.node) }
                        rect class="span left" x=(format!("{x0:.1}")) y=(y)
                            width=(format!("{:.1}", (x1 - x0).max(2.0))) height="16" {
                            title {
                                "node " (g.node) ": left cleanly " (relative(g.left, now))
                                ", handing back " (g.released) " schedules"
                            }
                        }
                    }
                    line.axis x1=(LABEL) y1=(height - 20.0) x2=(W - 6.0) y2=(height - 20.0) {}
                    text.tick x=(LABEL) y=(height - 6.0) { "an hour ago" }
                    text.tick x=(W - 6.0) y=(height - 6.0) text-anchor="end" { "now" }
                }
            }
        }
        (holdings(history, now))
        section.card id="takeovers" {
            h2 { "Takeovers" }
            (takeover_events(history, now))
            h3 { "Schedules whose last fault is a takeover" }
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

/// Why the page has no history: the database's schema is older than the history
/// (docs/schedules.md §11.50).
const NOT_KEPT: &str = "this database keeps no cluster history yet: its schema is from before \
                        version 15, and the first engine of this build to open it adds it";

/// The takeovers of the hour, from the cluster's history: when, from, to, how many.
fn takeover_events(history: &ClusterHistory, now: f64) -> Markup {
    let all: Vec<_> = history.takeovers().collect();
    html! {
        @if !history.kept {
            p.empty { (NOT_KEPT) }
        } @else if all.is_empty() {
            p.empty { "no takeover in the last hour" }
        } @else {
            p.count {
                "claims of schedules from a node whose lease ran out, in the last hour: " (all.len())
            }
            div.scroll {
                table id="takeover-events" {
                    tr { th { "when" } th { "from node" } th { "to node" } th.num { "schedules" } }
                    @for t in all.iter().rev().take(SHOWN) {
                        tr {
                            td { (When { at: t.at, now }) }
                            td { (t.from) }
                            td { (t.to) }
                            td.num { (t.schedules) }
                        }
                    }
                }
            }
            @if all.len() > SHOWN {
                p.muted { "… " (all.len() - SHOWN) " earlier" }
            }
        }
    }
}

/// Each node's holdings over the hour: an SVG line a node (a step at each claim, takeover,
/// sample and leave) and the same numbers in a table.
fn holdings(history: &ClusterHistory, now: f64) -> Markup {
    const W: f64 = 720.0;
    const H: f64 = 180.0;
    const LEFT: f64 = 44.0;
    const TOP: f64 = 10.0;
    const BOTTOM: f64 = 24.0;
    let series: Vec<NodeHoldings> = history.holdings().into_iter().take(SHOWN).collect();
    let from = now - HOUR;
    let peak = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .max()
        .unwrap_or(0)
        .max(1);
    let x = |t: f64| LEFT + (t.clamp(from, now) - from) / HOUR * (W - LEFT - 6.0);
    let y = |n: u64| TOP + (1.0 - n as f64 / peak as f64) * (H - TOP - BOTTOM);
    html! {
        section.card id="cluster-holdings" {
            h2 { "Holdings over the last hour" }
            p.muted {
                "how many schedules each node held: a step at each claim or takeover, a sample a minute "
                "with the lease's renewal, 0 when it left (the store's cluster history, by the database's clock)"
            }
            @if !history.kept {
                p.empty { (NOT_KEPT) }
            } @else if series.iter().all(|s| s.points.is_empty()) {
                p.empty { "no node recorded its holdings in the last hour" }
            } @else {
                svg.holdings role="img" aria-label="schedules each node held over the last hour"
                    viewBox={ "0 0 " (W) " " (H) } data-lines=(series.len()) data-peak=(peak) {
                    line.axis x1=(LEFT) y1=(H - BOTTOM) x2=(W - 6.0) y2=(H - BOTTOM) {}
                    line.axis x1=(LEFT) y1=(TOP) x2=(LEFT) y2=(H - BOTTOM) {}
                    text.tick x=(LEFT - 4.0) y=(TOP + 8.0) text-anchor="end" { (peak) }
                    text.tick x=(LEFT - 4.0) y=(H - BOTTOM) text-anchor="end" { "0" }
                    text.tick x=(LEFT) y=(H - 6.0) { "an hour ago" }
                    text.tick x=(W - 6.0) y=(H - 6.0) text-anchor="end" { "now" }
                    @for (i, s) in series.iter().enumerate() {
                        @let class = format!("series-{}", i % SERIES);
                        polyline class={ "line " (class) } points=(steps(&s.points, s.left.is_none(), now, &x, &y)) {
                            title { "node " (s.node) }
                        }
                        @for p in &s.points {
                            circle class={ "dot " (class) } cx=(format!("{:.1}", x(p.0))) cy=(format!("{:.1}", y(p.1))) r="3" {
                                title { "node " (s.node) ": " (p.1) " schedules, " (relative(p.0, now)) }
                            }
                        }
                    }
                }
                div.scroll {
                    table id="holdings-rows" {
                        tr {
                            th { "node" } th.num { "holds" } th.num { "peak" } th { "as of" } th { "left" }
                        }
                        @for (i, s) in series.iter().enumerate() {
                            @if let Some(last) = s.points.last() {
                                tr {
                                    td { span class={ "key series-" (i % SERIES) } { "■" } " " (s.node) }
                                    td.num { (last.1) }
                                    td.num { (s.points.iter().map(|p| p.1).max().unwrap_or(0)) }
                                    td { (When { at: last.0, now }) }
                                    td { @if let Some(left) = s.left { (When { at: left, now }) } @else { "-" } }
                                }
                            }
                        }
                    }
                }
            }
            @if history.truncated {
                p.muted { "the hour held more events than a page reads: the oldest are left out" }
            }
        }
    }
}

/// The SVG points of a step line through `points`, held on to now while `open` (the node has
/// not left).
fn steps(
    points: &[(f64, u64)],
    open: bool,
    now: f64,
    x: &impl Fn(f64) -> f64,
    y: &impl Fn(u64) -> f64,
) -> String {
    let mut out: Vec<String> = Vec::with_capacity(points.len() * 2 + 1);
    // A point where the line already is (a sample that changed nothing) is left out.
    let mut at = |t: f64, n: u64| {
        let point = format!("{:.1},{:.1}", x(t), y(n));
        if out.last() != Some(&point) {
            out.push(point);
        }
    };
    let mut last: Option<u64> = None;
    for &(t, n) in points {
        if let Some(before) = last {
            at(t, before);
        }
        at(t, n);
        last = Some(n);
    }
    if let (true, Some(n)) = (open, last) {
        at(now, n);
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedules::{ClusterEvent, ClusterEventKind};

    fn page(history: &ClusterHistory) -> String {
        let none = Takeovers {
            listed: Vec::new(),
            count: 0,
        };
        render(&Cluster::default(), history, &none, 10_000.0).into_string()
    }

    #[test]
    fn an_empty_hour_and_a_history_not_kept_say_so_in_words() {
        // docs/serve.md §13.19
        let empty = page(&ClusterHistory::of(Vec::new()));
        assert!(empty.contains("no node recorded its holdings in the last hour"));
        assert!(empty.contains("no takeover in the last hour"));
        assert!(!empty.contains("<svg class=\"holdings\""));
        let old = page(&ClusterHistory::default());
        assert_eq!(old.matches(NOT_KEPT).count(), 2, "{old}");
    }

    #[test]
    fn a_node_that_left_is_drawn_to_its_leave_and_its_line_steps_down() {
        // docs/serve.md §13.19
        let history = ClusterHistory::of(vec![
            ClusterEvent::new(8_000.0, 7, ClusterEventKind::Joined, 0),
            ClusterEvent::new(8_001.0, 7, ClusterEventKind::Claimed, 4),
            ClusterEvent::new(9_000.0, 7, ClusterEventKind::Left, 4),
        ]);
        let html = page(&history);
        assert_eq!(
            html.matches("<rect class=\"span left\"").count(),
            1,
            "{html}"
        );
        assert!(html.contains("handing back 4 schedules"), "{html}");
        // Joined at 0, a step up to 4, held until it left, then 0: five points, no line to now.
        let (_, line) = html.split_once("<polyline").unwrap();
        let (_, points) = line.split_once("points=\"").unwrap();
        let points = points.split('"').next().unwrap();
        assert_eq!(points.split(' ').count(), 5, "{points}");
        assert!(html.contains("data-peak=\"4\""), "{html}");
    }
}
