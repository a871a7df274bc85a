//! The dashboard's pages as HTML, rendered on the server (docs/serve.md §13.2–§13.3, §13.11–§13.12):
//! one renderer per view, whatever the host — a runtime's or a store's rows come here as [`Row`]s
//! and [`Detail`]s. Every string a user supplied goes through [`escape`]; the only script is the
//! live view's own file.
//!
//! Costs: a list page sorts the matched rows and renders at most [`LIST_CAP`]; a page is one
//! allocation of its HTML.

use std::fmt::Write as _;

use crate::commands::CommandInfo;
use crate::schedules::{Cluster, ScheduleKind, ScheduleStatus};

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

impl Chrome {
    /// The links to the other views.
    fn nav(&self) -> String {
        let mut nav = String::from("<nav><a href=/dashboard>schedules</a>");
        if self.runtime {
            nav.push_str(" · <a href=/dashboard/commands>commands</a>");
        }
        if self.cluster {
            nav.push_str(" · <a href=/dashboard/cluster>cluster</a>");
        }
        nav.push_str("</nav>");
        nav
    }

    /// The list's head: the dashboard's name as its heading, then the links.
    fn start_list(&self) -> String {
        let mut page = head("Schedules");
        let _ = write!(page, "<h1>{}</h1>{}", escape(&self.title), self.nav());
        page
    }

    /// Another page's head: the dashboard's name and the links, then the page's own heading.
    fn start(&self, title: &str) -> String {
        let mut page = head(title);
        let _ = write!(
            page,
            "<p id=host>{}</p>{}<h1>{}</h1>",
            escape(&self.title),
            self.nav(),
            escape(title)
        );
        page
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
    let mut page = chrome.start_list();
    let _ = write!(
        page,
        "<form method=get action=/dashboard>\
         <input name=q placeholder=search value=\"{}\"> \
         <input name=owner placeholder=owner value=\"{}\"> \
         <input name=verb placeholder=verb value=\"{}\"> \
         <select name=kind>{}</select> <select name=state>{}</select> \
         <select name=sort>{}</select> <button>Filter</button></form>\
         <p id=count>{} of {total} live schedules</p>",
        escape(filter.search.as_deref().unwrap_or("")),
        escape(filter.owner.as_deref().unwrap_or("")),
        escape(filter.verb.as_deref().unwrap_or("")),
        // An empty choice first: no filter.
        options(
            [""].into_iter()
                .chain(ScheduleKind::ALL.map(ScheduleKind::as_str)),
            filter.kind.map_or("", ScheduleKind::as_str)
        ),
        options(
            [""].into_iter()
                .chain(ScheduleStatus::ALL.map(ScheduleStatus::as_str)),
            filter.state.map_or("", ScheduleStatus::as_str)
        ),
        options(Sort::NAMES, filter.sort.name()),
        rows.len(),
    );
    if chrome.runtime {
        page.push_str(LIVE_SECTIONS);
        if chrome.online {
            page.push_str(ONLINE);
        }
        page.push_str("<script src=/dashboard/live.js></script>");
    }
    page.push_str(
        "<h2>Schedules</h2><table id=schedules><tr><th>id</th><th>owner</th><th>kind</th><th>verb</th>\
         <th>args</th><th>state</th><th>next in</th><th>runs</th><th>faults</th></tr>",
    );
    for row in rows.iter().take(LIST_CAP) {
        let next = if row.next_run > 0.0 {
            format!("{:.1} s", (row.next_run - now).max(0.0))
        } else {
            "-".to_owned()
        };
        let _ = write!(
            page,
            "<tr><td><a href=\"/dashboard/schedules/{id}\">#{id}</a></td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{next}</td><td>{}</td><td>{}</td></tr>",
            escape(&row.owner),
            row.kind.as_str(),
            escape(&row.verb),
            escape(&row.args),
            row.status,
            row.run_count,
            row.fault_count,
            id = row.id,
        );
    }
    page.push_str("</table>");
    if rows.len() > LIST_CAP {
        let _ = write!(
            page,
            "<p>… and {} more; narrow the filter.</p>",
            rows.len() - LIST_CAP
        );
    }
    page.push_str("</body></html>");
    page
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

/// `<option>`s for fixed, known-safe values, the chosen one selected.
fn options<'a>(values: impl IntoIterator<Item = &'a str>, chosen: &str) -> String {
    let mut html = String::new();
    for v in values {
        let selected = if v == chosen { " selected" } else { "" };
        let _ = write!(html, "<option value=\"{v}\"{selected}>{v}</option>");
    }
    html
}

/// A schedule's page: every field, and the action forms when a grant allows them.
pub(crate) fn detail(detail: &Detail, chrome: &Chrome) -> String {
    let id = detail.id;
    let mut page = chrome.start(&format!("Schedule #{id}"));
    let _ = write!(
        page,
        "<p>owner <b id=owner>{}</b></p><table id=info>",
        escape(&detail.owner)
    );
    for (key, value) in &detail.fields {
        let _ = write!(
            page,
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(key),
            escape(value)
        );
    }
    page.push_str("</table>");
    if let Some(name) = &chrome.acting_as {
        let _ = write!(
            page,
            "<h2>Actions</h2><p>acting as <b>{}</b>; each needs the action token.</p>",
            escape(name)
        );
        for action in ["pause", "resume", "trigger", "stop"] {
            let note = if action == "pause" {
                "<input name=note placeholder=note maxlength=200> "
            } else {
                ""
            };
            let _ = write!(
                page,
                "<form method=post action=\"/dashboard/schedules/{id}/{action}\" class=action>\
                 <input type=password name=token placeholder=\"action token\" required> {note}\
                 <button id={action}>{action}</button></form>"
            );
        }
    }
    page.push_str("</body></html>");
    page
}

/// The commands page (docs/serve.md §13.11): each running command, its priority, the mechanisms
/// it holds, its parent and its last run time.
pub(crate) fn commands(running: &[CommandInfo], chrome: &Chrome) -> String {
    let mut page = chrome.start("Commands");
    let _ = write!(
        page,
        "<p id=count>{} running</p><table id=commands><tr><th>id</th><th>name</th>\
         <th>priority</th><th>mechanisms</th><th>parent</th><th>last run</th></tr>",
        running.len()
    );
    for c in running {
        let _ = write!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} µs</td></tr>",
            c.id.get(),
            escape(&c.name),
            c.priority,
            escape(&c.requirements.join(", ")),
            c.parent
                .map_or_else(|| "-".to_owned(), |p| p.get().to_string()),
            c.last_run_time.as_micros(),
        );
    }
    page.push_str("</table></body></html>");
    page
}

/// The cluster page (docs/serve.md §13.12): each node, its lease, what it holds.
pub(crate) fn cluster(cluster: &Cluster, chrome: &Chrome) -> String {
    let mut page = chrome.start("Cluster");
    let _ = write!(
        page,
        "<p id=count>{} nodes; {} schedules held by no live node</p>\
         <table id=nodes><tr><th>node</th><th>lease</th><th>lease until</th><th>started</th>\
         <th>holds</th><th>schedules</th></tr>",
        cluster.nodes.len(),
        cluster.unheld
    );
    for n in &cluster.nodes {
        let mut held = String::new();
        for id in &n.held {
            let _ = write!(
                held,
                "<a href=\"/dashboard/schedules/{id}\">#{id}</a> ",
                id = id.get()
            );
        }
        if n.holds > n.held.len() as u64 {
            let _ = write!(held, "… {} more", n.holds - n.held.len() as u64);
        }
        let _ = write!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{}</td><td>{held}</td></tr>",
            n.node,
            if n.live { "live" } else { "expired" },
            n.lease_until,
            n.started_at,
            n.holds,
        );
    }
    page.push_str("</table></body></html>");
    page
}

/// The frame budget, hot tasks and counts, filled by the live view's script (docs/serve.md
/// §13.6).
const LIVE_SECTIONS: &str = "<h2>Frame budget</h2>\
<p>step time per frame against the budget <span id=budget>?</span> (the line; red bars are over it) \
— <span id=live-state>waiting for the first update</span></p>\
<canvas id=frames width=720 height=120 data-updates=0></canvas>\
<p>frames over budget in the last second <b id=over-budget>?</b>; kernel overload events \
<b id=overloads>?</b>; tasks deferred in the last step <b id=deferred>?</b>; waiting per priority \
<b id=pending>?</b></p>\
<h2>Hot tasks</h2><table id=hot-tasks><tr><th>origin</th><th>total µs</th><th>calls</th>\
<th>longest µs</th></tr></table>\
<h2>Commands</h2><p>running commands <b id=commands-running>?</b> \
(<a href=/dashboard/commands>each, with its mechanisms and priority</a>)</p>\
<p>live schedules <b id=schedules-live>?</b>, of which paused <b id=schedules-paused>?</b></p>";

/// The online count, for a host that has users.
const ONLINE: &str = "<p>players online <b id=online>?</b></p>";

/// The page's head: a title and a little CSS, nothing fetched.
fn head(title: &str) -> String {
    format!(
        "<!doctype html><html><head><meta charset=utf-8><title>{} — tickstep</title>\
         <style>body{{font-family:sans-serif;margin:1em}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:2px 6px;text-align:left;font-family:monospace}}\
         </style></head><body>",
        escape(title)
    )
}
