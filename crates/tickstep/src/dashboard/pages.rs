//! The dashboard's pages as HTML, rendered on the server from maud templates (docs/serve.md
//! §13.2–§13.3, §13.11–§13.12, §13.14): one template per view, whatever the host — a runtime's or
//! a store's rows come here as [`Row`]s and [`Detail`]s. maud escapes every value by default;
//! every string a user supplied is put in as [`Text`], which also shows control and bidi
//! characters as visible escapes. No style or script is inline: the pages link the static files
//! of [`assets`](super::assets).
//!
//! Costs: a list page sorts the matched rows and renders at most [`LIST_CAP`]; a page is one
//! allocation of its HTML.

use maud::{DOCTYPE, Markup, Render, html};

use crate::commands::CommandInfo;
use crate::schedules::{Cluster, ScheduleKind, ScheduleStatus};

use super::assets::{ICON, SCRIPT, STYLE};
use super::query::{Filter, Sort};
use super::text::escape;

/// The most rows the list renders (docs/serve.md §13.2).
pub const LIST_CAP: usize = 500;

/// One schedule in the list, with what it is filtered and sorted by.
pub(crate) struct Row {
    pub(crate) id: u64,
    pub(crate) owner: String,
    pub(crate) kind: ScheduleKind,
    pub(crate) verb: String,
    pub(crate) args: String,
    pub(crate) key: Option<String>,
    /// What it is doing (docs/schedules.md §9.13).
    pub(crate) status: ScheduleStatus,
    /// Float Unix seconds; 0.0 for none (paused, a one-shot running: docs/schedules.md §9.4).
    pub(crate) next_run: f64,
    pub(crate) run_count: u64,
    pub(crate) fault_count: u64,
}

/// One schedule's detail: its owner's name and every `schedule_info` field, shown as text.
pub(crate) struct Detail {
    pub(crate) id: u64,
    pub(crate) owner: String,
    pub(crate) fields: Vec<(String, String)>,
}

/// What surrounds every page: whose dashboard it is and which views it has.
#[derive(Clone, Debug)]
pub(crate) struct Chrome {
    /// The heading: `tickstep serve`, `tickstep dashboard: FILE` …
    pub(crate) title: String,
    /// A runtime: the live view and the commands page.
    pub(crate) runtime: bool,
    /// Whether the live view counts users online (docs/serve.md §13.6).
    pub(crate) online: bool,
    /// A `PostgreSQL` store: the cluster page (docs/serve.md §13.12).
    pub(crate) cluster: bool,
    /// Whom actions act as, when a grant allows them.
    pub(crate) acting_as: Option<String>,
}

/// Text a user supplied, as a page shows it: escaped by [`escape`] (docs/serve.md §13.3) — the
/// markup characters as entities and control and bidi characters as visible escapes.
pub(crate) struct Text<'a>(pub(crate) &'a str);

impl Render for Text<'_> {
    fn render_to(&self, buffer: &mut String) {
        buffer.push_str(&escape(self.0));
    }
}

/// Which view a page is, for the navigation's current link.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Here {
    Schedules,
    Commands,
    Cluster,
}

impl Chrome {
    /// A whole page: the head (stylesheet, icon), the host's bar with the links, the page's own
    /// heading and body, and the one script.
    fn page(&self, title: &str, here: Option<Here>, body: &Markup) -> String {
        let link = |to: Here, href: &str, name: &str| {
            html! {
                @if here == Some(to) { a href=(href) aria-current="page" { (name) } }
                @else { a href=(href) { (name) } }
            }
        };
        html! {
            (DOCTYPE)
            html lang="en" {
                head {
                    meta charset="utf-8";
                    meta name="viewport" content="width=device-width, initial-scale=1";
                    title { (Text(title)) " — tickstep" }
                    link rel="stylesheet" href=(STYLE.path);
                    link rel="icon" type="image/svg+xml" href=(ICON.path);
                }
                body {
                    header.top {
                        p.host id="host" { (Text(&self.title)) }
                        nav aria-label="views" {
                            (link(Here::Schedules, "/dashboard", "schedules"))
                            @if self.runtime { (link(Here::Commands, "/dashboard/commands", "commands")) }
                            @if self.cluster { (link(Here::Cluster, "/dashboard/cluster", "cluster")) }
                        }
                        @if let Some(name) = &self.acting_as {
                            span.who { "acting as " b { (Text(name)) } }
                        }
                    }
                    main {
                        h1 { (Text(title)) }
                        (body)
                    }
                    script src=(SCRIPT.path) {}
                }
            }
        }
        .into_string()
    }
}

/// The list page: the filter form, the live view (a runtime's) and the matched rows.
pub(crate) fn list(mut rows: Vec<Row>, filter: &Filter, now: f64, chrome: &Chrome) -> String {
    let total = rows.len();
    rows.retain(|row| keep(row, filter));
    match filter.sort {
        Sort::Id => rows.sort_by_key(|r| r.id),
        Sort::Owner => rows.sort_by(|a, b| a.owner.cmp(&b.owner)),
        Sort::Verb => rows.sort_by(|a, b| a.verb.cmp(&b.verb)),
        Sort::Kind => rows.sort_by_key(|r| r.kind.as_str()),
        Sort::State => rows.sort_by_key(|r| r.status),
        Sort::Next => rows.sort_by(|a, b| a.next_run.total_cmp(&b.next_run)),
    }
    let kinds = ScheduleKind::ALL.map(ScheduleKind::as_str);
    let states = ScheduleStatus::ALL.map(ScheduleStatus::as_str);
    let body = html! {
        form.filters method="get" action="/dashboard" role="search" {
            label { "search" input name="q" value=(Text(filter.search.as_deref().unwrap_or(""))); }
            label { "owner" input name="owner" value=(Text(filter.owner.as_deref().unwrap_or(""))); }
            label { "verb" input name="verb" value=(Text(filter.verb.as_deref().unwrap_or(""))); }
            label { "kind" select name="kind" { (options(&kinds, filter.kind.map_or("", ScheduleKind::as_str), true)) } }
            label { "state" select name="state" { (options(&states, filter.state.map_or("", ScheduleStatus::as_str), true)) } }
            label { "sort" select name="sort" { (options(&Sort::NAMES, filter.sort.name(), false)) } }
            button { "Filter" }
        }
        p.count id="count" { (rows.len()) " of " (total) " live schedules" }
        @if chrome.runtime { (live(chrome.online)) }
        h2 { "Schedules" }
        div.scroll {
            table id="schedules" {
                tr {
                    th { "id" } th { "owner" } th { "kind" } th { "verb" } th { "args" } th { "state" }
                    th { "next in" } th.num { "runs" } th.num { "faults" }
                }
                @for row in rows.iter().take(LIST_CAP) {
                    tr {
                        td { a href={ "/dashboard/schedules/" (row.id) } { "#" (row.id) } }
                        td { (Text(&row.owner)) }
                        td { (row.kind.as_str()) }
                        td { (Text(&row.verb)) }
                        td.args { (Text(&row.args)) }
                        td { span class={ "badge " (row.status.as_str()) } { (row.status.as_str()) } }
                        td {
                            @if row.next_run > 0.0 { (format!("{:.1} s", (row.next_run - now).max(0.0))) }
                            @else { "-" }
                        }
                        td.num { (row.run_count) }
                        td.num { (row.fault_count) }
                    }
                }
            }
        }
        @if rows.len() > LIST_CAP {
            p { "… and " (rows.len() - LIST_CAP) " more; narrow the filter." }
        }
    };
    chrome.page("Schedules", Some(Here::Schedules), &body)
}

fn keep(row: &Row, filter: &Filter) -> bool {
    filter.owner.as_ref().is_none_or(|o| *o == row.owner)
        && filter.verb.as_ref().is_none_or(|v| *v == row.verb)
        && filter.kind.is_none_or(|k| k == row.kind)
        && filter.state.is_none_or(|s| s == row.status)
        && filter.search.as_ref().is_none_or(|q| {
            row.verb.contains(q.as_str())
                || row.args.contains(q.as_str())
                || row.owner.contains(q.as_str())
                || row.key.as_ref().is_some_and(|k| k.contains(q.as_str()))
        })
}

/// `<option>`s for fixed, known-safe values (an empty one first, for no filter, when `any`),
/// the chosen one selected.
fn options(values: &[&str], chosen: &str, any: bool) -> Markup {
    html! {
        @if any { option value="" selected[chosen.is_empty()] { "any" } }
        @for v in values {
            option value=(v) selected[*v == chosen] { (v) }
        }
    }
}

/// A schedule's page: every field, and the action forms when a grant allows them.
pub(crate) fn detail(detail: &Detail, chrome: &Chrome) -> String {
    let id = detail.id;
    let body = html! {
        p { "owner " b id="owner" { (Text(&detail.owner)) } }
        section.card {
            table id="info" {
                @for (key, value) in &detail.fields {
                    tr { th { (Text(key)) } td { (Text(value)) } }
                }
            }
        }
        @if let Some(name) = &chrome.acting_as {
            h2 { "Actions" }
            p { "acting as " b { (Text(name)) } "; each needs the action token." }
            div.actions {
                @for action in ["pause", "resume", "trigger", "stop"] {
                    form.action method="post" action={ "/dashboard/schedules/" (id) "/" (action) } {
                        input type="password" name="token" placeholder="action token" required aria-label="action token";
                        @if action == "pause" {
                            input name="note" placeholder="note" maxlength="200" aria-label="note";
                        }
                        button id=(action) class=[(action == "stop").then_some("danger")] { (action) }
                    }
                }
            }
        }
    };
    chrome.page(&format!("Schedule #{id}"), None, &body)
}

/// The commands page (docs/serve.md §13.11): each running command, its priority, the mechanisms
/// it holds, its parent and its last run time.
pub(crate) fn commands(running: &[CommandInfo], chrome: &Chrome) -> String {
    let body = html! {
        p.count id="count" { (running.len()) " running" }
        div.scroll {
            table id="commands" {
                tr {
                    th.num { "id" } th { "name" } th.num { "priority" } th { "mechanisms" }
                    th.num { "parent" } th.num { "last run" }
                }
                @for c in running {
                    tr {
                        td.num { (c.id.get()) }
                        td { (Text(&c.name)) }
                        td.num { (c.priority) }
                        td { (Text(&c.requirements.join(", "))) }
                        td.num { @match c.parent { Some(p) => (p.get()), None => "-" } }
                        td.num { (c.last_run_time.as_micros()) " µs" }
                    }
                }
            }
        }
    };
    chrome.page("Commands", Some(Here::Commands), &body)
}

/// The cluster page (docs/serve.md §13.12): each node, its lease, what it holds.
pub(crate) fn cluster(cluster: &Cluster, chrome: &Chrome) -> String {
    let body = html! {
        p.count id="count" {
            (cluster.nodes.len()) " nodes; " (cluster.unheld) " schedules held by no live node"
        }
        div.scroll {
            table id="nodes" {
                tr {
                    th { "node" } th { "lease" } th { "lease until" } th { "started" }
                    th.num { "holds" } th { "schedules" }
                }
                @for n in &cluster.nodes {
                    tr {
                        td { (n.node) }
                        td { span class={ "badge " (if n.live { "active" } else { "retired" }) } {
                            (if n.live { "live" } else { "expired" })
                        } }
                        td { (format!("{:.1}", n.lease_until)) }
                        td { (format!("{:.1}", n.started_at)) }
                        td.num { (n.holds) }
                        td {
                            @for id in &n.held {
                                a href={ "/dashboard/schedules/" (id.get()) } { "#" (id.get()) } " "
                            }
                            @if n.holds > n.held.len() as u64 {
                                "… " (n.holds - n.held.len() as u64) " more"
                            }
                        }
                    }
                }
            }
        }
    };
    chrome.page("Cluster", Some(Here::Cluster), &body)
}

/// The frame budget, hot tasks and counts, filled by the script (docs/serve.md §13.6).
fn live(online: bool) -> Markup {
    html! {
        section.card id="live" {
            h2 { "Frame budget" }
            p.muted {
                "step time per frame against the budget " span id="budget" { "?" }
                " (red bars are over it) — " span id="live-state" { "waiting for the first update" }
            }
            canvas.chart id="frames" width="720" height="160" data-updates="0"
                aria-label="step time of each recent frame against the frame budget" {}
            p.stats {
                span { "over budget in the last second " b id="over-budget" { "?" } }
                span { "kernel overload events " b id="overloads" { "?" } }
                span { "deferred in the last step " b id="deferred" { "?" } }
                span { "waiting per priority " b id="pending" { "?" } }
            }
            p.stats {
                span { "running commands " b id="commands-running" { "?" } }
                span { "live schedules " b id="schedules-live" { "?" } }
                span { "paused " b id="schedules-paused" { "?" } }
                @if online { span { "players online " b id="online" { "?" } } }
            }
            h2 { "Hot tasks" }
            table id="hot-tasks" {
                tr { th { "origin" } th.num { "total µs" } th.num { "calls" } th.num { "longest µs" } }
            }
            p { a href="/dashboard/commands" { "each running command, with its mechanisms and priority" } }
        }
    }
}
