//! The dashboard's pages as HTML, rendered on the server from maud templates (docs/serve.md
//! §13.2–§13.3, §13.11–§13.12, §13.14): one template per view, whatever the host — a runtime's or
//! a store's rows come here as [`Row`]s (a schedule's page: [`detail`](super::detail)). maud escapes every value by default;
//! every string a user supplied is put in as [`Text`], which also shows control and bidi
//! characters as visible escapes. No style or script is inline: the pages link the static files
//! of [`assets`](super::assets).
//!
//! Costs: a list page keeps the matched rows, selects one page of them in linear time, sorts
//! and renders only those [`LIST_CAP`]; a page is one allocation of its HTML.

use std::cmp::Ordering;

use maud::{DOCTYPE, Markup, Render, html};

use crate::commands::CommandInfo;
use crate::schedules::{Cluster, ScheduleKind, ScheduleStatus};

use super::assets::{ICON, SCRIPT, STYLE};
use super::guard::ACTIONS;
use super::query::{Filter, Sort};
use super::session::Signed;
use super::text::escape;
use super::when::{When, span};

/// The most rows one list page renders (docs/serve.md §13.2): a page of the matched rows, with
/// links to the pages before and after.
///
/// ```
/// assert!(tickstep::dashboard::LIST_CAP <= 100, "a page a person reads");
/// ```
pub const LIST_CAP: usize = 50;

/// One schedule in the list, with what it is filtered and sorted by.
pub(crate) struct Row {
    pub(crate) id: u64,
    pub(crate) owner: String,
    pub(crate) kind: ScheduleKind,
    pub(crate) verb: String,
    pub(crate) args: String,
    pub(crate) key: Option<String>,
    /// A store alone's rows say whose application they are (docs/schedules.md §15.5).
    pub(crate) namespace: Option<String>,
    /// Seconds between points of an `every` schedule.
    pub(crate) interval: f64,
    /// A `cron` schedule's expression and zone.
    pub(crate) calendar: Option<(String, String)>,
    /// What it is doing (docs/schedules.md §9.13).
    pub(crate) status: ScheduleStatus,
    /// A paused schedule's note (docs/schedules.md §9.4).
    pub(crate) pause_note: Option<String>,
    /// Float Unix seconds; 0.0 for none (paused, a one-shot running: docs/schedules.md §9.4).
    pub(crate) next_run: f64,
    /// Float Unix seconds; 0.0 for never.
    pub(crate) last_run: f64,
    /// The last settled firing's fault, as text, while it is the last outcome.
    pub(crate) last_fault: Option<String>,
    pub(crate) run_count: u64,
    pub(crate) fault_count: u64,
}

impl Row {
    /// The cadence in words: `every 90 s`, `0 3 * * MON-FRI Europe/Paris`, `once`.
    pub(crate) fn cadence(&self) -> String {
        match (self.kind, &self.calendar) {
            (ScheduleKind::Cron, Some((expr, zone))) => format!("{expr} {zone}"),
            (ScheduleKind::Every, _) => format!("every {}", span(self.interval)),
            _ => "once".to_owned(),
        }
    }
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
    /// The request's session, once signed in (docs/serve.md §13.8).
    pub(crate) signed: Option<Signed>,
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
pub(crate) enum Here {
    Overview,
    Schedules,
    Commands,
    Cluster,
    Audit,
}

impl Chrome {
    /// A whole page: the head (stylesheet, icon), the host's bar with the links, the page's own
    /// heading and body, and the one script.
    pub(crate) fn page(&self, title: &str, here: Option<Here>, body: &Markup) -> String {
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
                            (link(Here::Overview, "/dashboard/overview", "overview"))
                            (link(Here::Schedules, "/dashboard", "schedules"))
                            @if self.runtime { (link(Here::Commands, "/dashboard/commands", "commands")) }
                            @if self.cluster { (link(Here::Cluster, "/dashboard/cluster", "cluster")) }
                            @if self.acting_as.is_some() { (link(Here::Audit, "/dashboard/audit", "audit")) }
                        }
                        @if let Some(name) = &self.acting_as {
                            (who(name, self.signed.as_ref()))
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

/// The header's corner: who is signed in and a way out, or a way in.
pub(crate) fn who(acting_as: &str, signed: Option<&Signed>) -> Markup {
    html! {
        @if let Some(signed) = signed {
            form.who method="post" action="/dashboard/logout" {
                "signed in as " b id="signed-in" { (Text(&signed.name)) }
                " (acting as " (Text(acting_as)) ") · "
                input type="hidden" name="csrf" value=(signed.csrf);
                button.link id="sign-out" { "sign out" }
            }
        } @else {
            span.who { a id="sign-in" href="/dashboard/login" { "sign in" } " to act as " b { (Text(acting_as)) } }
        }
    }
}

/// The list's offer of the bulk actions on what its filter matches.
pub(crate) fn offer(matched: u64, filter: &Filter) -> Markup {
    let query = filter.query(1);
    html! {
        p.bulk id="bulk" {
            "All " (matched) " matching: "
            @for action in ACTIONS {
                a.button id={ "bulk-" (action) } href={ "/dashboard/bulk/" (action) (query) } { (action) "…" }
                " "
            }
        }
    }
}

/// One page of the list and what it is a page of.
pub(crate) struct Listed<'a> {
    /// The page's rows, in order.
    pub(crate) shown: &'a [Row],
    /// How many rows the filter matched, and how many there are.
    pub(crate) matched: u64,
    pub(crate) total: u64,
    /// Which page these are (from 1): the asked one, or the last when it asked past it.
    pub(crate) page: usize,
}

/// The list page of every row a runtime has: filtered, ordered and paged here (a store does it
/// in SQL, docs/schedules.md §9.17, and calls [`list_page`]).
pub(crate) fn list(mut rows: Vec<Row>, filter: &Filter, now: f64, chrome: &Chrome) -> String {
    let total = rows.len() as u64;
    rows.retain(|row| keep(row, filter));
    let matched = rows.len();
    let page = filter.page.min(matched.div_ceil(LIST_CAP).max(1));
    let shown = order_page(&mut rows, filter, page);
    let listed = Listed {
        shown,
        matched: matched as u64,
        total,
        page,
    };
    list_page(&listed, filter, now, chrome)
}

/// The list page: the filter form, one page of the matched rows with the links to the others,
/// and the live view (a runtime's).
pub(crate) fn list_page(listed: &Listed<'_>, filter: &Filter, now: f64, chrome: &Chrome) -> String {
    let Listed {
        shown,
        matched,
        total,
        page,
    } = *listed;
    let pages = usize::try_from(matched.div_ceil(LIST_CAP as u64))
        .unwrap_or(usize::MAX)
        .max(1);
    let kinds = ScheduleKind::ALL.map(ScheduleKind::as_str);
    let states = ScheduleStatus::ALL.map(ScheduleStatus::as_str);
    let body = html! {
        form.filters method="get" action="/dashboard" role="search" {
            label { "search" input name="q" type="search" value=(Text(filter.search.as_deref().unwrap_or(""))); }
            label { "owner" input name="owner" value=(Text(filter.owner.as_deref().unwrap_or(""))); }
            label { "verb" input name="verb" value=(Text(filter.verb.as_deref().unwrap_or(""))); }
            @if !chrome.runtime {
                label { "namespace" input name="namespace" value=(Text(filter.namespace.as_deref().unwrap_or(""))); }
            }
            label { "kind" select name="kind" { (options(&kinds, filter.kind.map_or("", ScheduleKind::as_str), true)) } }
            label { "state" select name="state" { (options(&states, filter.state.map_or("", ScheduleStatus::as_str), true)) } }
            label { "sort" select name="sort" { (options(&Sort::NAMES, filter.sort.name(), false)) } }
            button { "Filter" }
        }
        p.count id="count" { (matched) " of " (total) " live schedules" }
        @if chrome.signed.is_some() && matched > 0 { (offer(matched, filter)) }
        div.scroll {
            table id="schedules" {
                tr {
                    th { "id" } th { "name" } th { "owner" } th { "cadence" } th { "verb" }
                    th.hide-narrow { "args" } th { "state" } th { "next run" } th { "last outcome" }
                    th.num { "runs" } th.num { "faults" }
                }
                @for row in shown {
                    tr {
                        td { a href={ "/dashboard/schedules/" (row.id) } { "#" (row.id) } }
                        td.mono { @if let Some(key) = &row.key { (Text(key)) } @else { span.muted { "-" } } }
                        td { (Text(&row.owner)) }
                        td.mono { (Text(&row.cadence())) }
                        td { (Text(&row.verb)) }
                        td.args.hide-narrow { (Text(&row.args)) }
                        td { (badge(row)) }
                        td { (When { at: row.next_run, now }) }
                        td { (outcome(row, now)) }
                        td.num { (row.run_count) }
                        td.num { (row.fault_count) }
                    }
                }
            }
        }
        nav.pager aria-label="pages" {
            @if page > 1 { a rel="prev" href={ "/dashboard" (filter.query(page - 1)) } { "← previous" } }
            span id="page" { "page " (page) " of " (pages) }
            @if page < pages { a rel="next" href={ "/dashboard" (filter.query(page + 1)) } { "next →" } }
        }
        @if chrome.runtime { (live(chrome.online)) }
    };
    chrome.page("Schedules", Some(Here::Schedules), &body)
}

/// Page `page` of `rows` in the filter's order (ties by id, so pages never overlap): the page's
/// rows are selected in linear time and only they are sorted, so a deep page of 100,000 rows
/// costs about what the first does.
fn order_page<'a>(rows: &'a mut [Row], filter: &Filter, page: usize) -> &'a [Row] {
    let sort = filter.sort;
    let order = move |a: &Row, b: &Row| -> Ordering {
        let by = match sort {
            Sort::Id => Ordering::Equal,
            Sort::Owner => a.owner.cmp(&b.owner),
            Sort::Verb => a.verb.cmp(&b.verb),
            Sort::Kind => a.kind.as_str().cmp(b.kind.as_str()),
            Sort::State => a.status.cmp(&b.status),
            // Nothing due (0.0) last.
            Sort::Next => {
                let due = |r: &Row| {
                    if r.next_run > 0.0 {
                        r.next_run
                    } else {
                        f64::INFINITY
                    }
                };
                due(a).total_cmp(&due(b))
            }
            // No key last.
            Sort::Key => (a.key.is_none(), &a.key).cmp(&(b.key.is_none(), &b.key)),
        };
        by.then(a.id.cmp(&b.id))
    };
    let from = ((page - 1) * LIST_CAP).min(rows.len());
    let to = (from + LIST_CAP).min(rows.len());
    if from > 0 {
        rows.select_nth_unstable_by(from, order);
    }
    let rest = &mut rows[from..];
    if to - from < rest.len() && to > from {
        rest.select_nth_unstable_by(to - from - 1, order);
    }
    let window = &mut rows[from..to];
    window.sort_unstable_by(order);
    window
}

/// The state as a badge; a paused one's note on hover.
pub(crate) fn badge(row: &Row) -> Markup {
    let state = row.status.as_str();
    html! {
        span class={ "badge " (state) } title=[row.pause_note.as_deref().map(Text)] { (state) }
    }
}

/// How the last firing ended, and when: `ok`, `fault` (its value on hover) or never run.
pub(crate) fn outcome(row: &Row, now: f64) -> Markup {
    html! {
        @if row.last_run == 0.0 && row.run_count == 0 {
            span.muted { "never run" }
        } @else if let Some(fault) = &row.last_fault {
            span.badge.fault title=(Text(fault)) { "fault" } " " (When { at: row.last_run, now })
        } @else {
            span.badge.ok { "ok" } " " (When { at: row.last_run, now })
        }
    }
}

pub(crate) fn keep(row: &Row, filter: &Filter) -> bool {
    filter.owner.as_ref().is_none_or(|o| *o == row.owner)
        && filter.verb.as_ref().is_none_or(|v| *v == row.verb)
        && filter.kind.is_none_or(|k| k == row.kind)
        && filter.state.is_none_or(|s| s == row.status)
        && filter
            .namespace
            .as_ref()
            .is_none_or(|n| row.namespace.as_ref() == Some(n))
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

/// The cluster page (docs/serve.md §13.12): each node, its lease, what it holds; then `over_time`,
/// the nodes' hour and the takeovers (docs/serve.md §13.19).
pub(crate) fn cluster(cluster: &Cluster, over_time: &Markup, now: f64, chrome: &Chrome) -> String {
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
                        td { (When { at: n.lease_until, now }) }
                        td { (When { at: n.started_at, now }) }
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
        (over_time)
    };
    chrome.page("Cluster", Some(Here::Cluster), &body)
}

/// The frame budget, hot tasks and counts, filled by the script (docs/serve.md §13.6).
pub(crate) fn live(online: bool) -> Markup {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dashboard::query::parse_filter;

    fn row(id: u64) -> Row {
        Row {
            id,
            owner: if id.is_multiple_of(2) { "alice" } else { "bob" }.to_owned(),
            kind: if id.is_multiple_of(3) {
                ScheduleKind::Cron
            } else {
                ScheduleKind::Every
            },
            verb: "tell".to_owned(),
            args: format!("\"<b>{id}</b>\""),
            key: id.is_multiple_of(5).then(|| format!("job-{id:04}")),
            namespace: None,
            interval: 90.0,
            calendar: id
                .is_multiple_of(3)
                .then(|| ("0 3 * * MON-FRI".to_owned(), "Europe/Paris".to_owned())),
            status: if id.is_multiple_of(7) {
                ScheduleStatus::Paused
            } else {
                ScheduleStatus::Active
            },
            pause_note: id.is_multiple_of(7).then(|| "deploy <now>".to_owned()),
            next_run: if id.is_multiple_of(7) {
                0.0
            } else {
                1_000.0 + (500 - id) as f64
            },
            last_run: 0.0,
            last_fault: None,
            run_count: 0,
            fault_count: 0,
        }
    }

    fn chrome() -> Chrome {
        Chrome {
            title: "t".into(),
            runtime: false,
            online: false,
            cluster: false,
            acting_as: None,
            signed: None,
        }
    }

    fn ids(page: &str) -> Vec<u64> {
        page.split("<a href=\"/dashboard/schedules/")
            .skip(1)
            .map(|s| s.split('"').next().unwrap().parse().unwrap())
            .collect()
    }

    #[test]
    fn the_list_pages_its_matched_rows_and_keeps_the_filter_in_the_links() {
        // docs/serve.md §13.2
        let rows = || (1..=400).map(row).collect::<Vec<_>>();
        let first = list(rows(), &parse_filter("").unwrap(), 0.0, &chrome());
        assert_eq!(ids(&first), (1..=50).collect::<Vec<_>>());
        assert!(first.contains("400 of 400 live schedules"));
        assert!(first.contains("page 1 of 8"));
        assert!(first.contains("<a rel=\"next\" href=\"/dashboard?page=2\">"));
        assert!(!first.contains("rel=\"prev\""));
        let last = list(rows(), &parse_filter("page=8").unwrap(), 0.0, &chrome());
        assert_eq!(ids(&last), (351..=400).collect::<Vec<_>>());
        assert!(last.contains("<a rel=\"prev\" href=\"/dashboard?page=7\">"));
        assert!(!last.contains("rel=\"next\""));
        // Past the end: the last page.
        let beyond = list(rows(), &parse_filter("page=99").unwrap(), 0.0, &chrome());
        assert_eq!(ids(&beyond), ids(&last));
        // Filtered by kind and sorted: the links keep both, and the pages do not overlap.
        let cron = |page: usize| {
            let query = format!("kind=cron&sort=next&owner=alice&page={page}");
            list(rows(), &parse_filter(&query).unwrap(), 0.0, &chrome())
        };
        let (one, two) = (cron(1), cron(2));
        assert!(one.contains("66 of 400 live schedules"), "{one}");
        assert!(
            one.contains("href=\"/dashboard?owner=alice&amp;kind=cron&amp;sort=next&amp;page=2\"")
        );
        let all: Vec<u64> = ids(&one).into_iter().chain(ids(&two)).collect();
        let mut expected: Vec<u64> = (1..=400).filter(|i| i % 6 == 0).collect();
        // Soonest first, the paused (nothing due) last.
        expected.sort_by_key(|&i| if i % 7 == 0 { (1, i) } else { (0, 500 - i) });
        assert_eq!(all, expected);
    }

    #[test]
    fn a_row_shows_cadence_state_and_times_for_people() {
        // docs/serve.md §13.2–§13.3
        let page = list(
            (1..=14).map(row).collect(),
            &parse_filter("").unwrap(),
            900.0,
            &chrome(),
        );
        assert!(
            page.contains("<td class=\"mono\">0 3 * * MON-FRI Europe/Paris</td>"),
            "{page}"
        );
        assert!(page.contains("<td class=\"mono\">every 90 s</td>"));
        assert!(page.contains("<td class=\"mono\">job-0005</td>"));
        assert!(
            page.contains(
                "<span class=\"badge paused\" title=\"deploy &lt;now&gt;\">paused</span>"
            )
        );
        assert!(page.contains("<span class=\"badge active\">active</span>"));
        assert!(
            page.contains("title=\"1970-01-01 00:24:59 UTC\">in 10 min</time>"),
            "{page}"
        );
        assert!(page.contains("never run"));
        // A store alone's rows filter by namespace; an empty value is no filter, as the form
        // sends it.
        let spaced = |query: &str| {
            let rows = (1..=6)
                .map(|id| Row {
                    namespace: Some(["", "a", "b"][id as usize % 3].to_owned()),
                    ..row(id)
                })
                .collect();
            ids(&list(rows, &parse_filter(query).unwrap(), 0.0, &chrome()))
        };
        assert_eq!(spaced("namespace=a"), [1, 4]);
        assert_eq!(spaced("namespace=b"), [2, 5]);
        assert_eq!(spaced("namespace="), [1, 2, 3, 4, 5, 6]);
        assert_eq!(spaced(""), [1, 2, 3, 4, 5, 6]);
        assert!(page.contains("&quot;&lt;b&gt;1&lt;/b&gt;&quot;"));
    }
}
