//! The dashboard on serve's HTTP side (docs/serve.md §13): the schedules list, with filter,
//! search and sort, and a detail view with every `schedule_info` field, rendered on the server as
//! plain HTML (no script, no external resource).
//!
//! The model: axum's handlers must be `Send` and the world is not, so a handler only parses the
//! request and sends a [`View`] to a task on the server's thread, which reads the schedules engine
//! between frames and answers with the page. Every string a user supplied goes through
//! [`escape`] on its way into the page.
//!
//! Costs: a page reads each listed schedule's info once, between frames, on the server's thread
//! (at most [`LIST_CAP`] rows are rendered); a page is one allocation of its HTML.

use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::rc::{Rc, Weak};

use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use tickstep::schedules::{ScheduleId, ScheduleInfo, Value};
use tokio::sync::{mpsc, oneshot};

use super::actions::{self, ActionGrant};
use super::protocol::Request;
use super::text;
use super::world::Server;

/// The most rows the list renders (docs/serve.md §13.2).
pub(crate) const LIST_CAP: usize = 500;
/// The longest query string accepted (docs/serve.md §13.4).
const MAX_QUERY: usize = 2_048;
/// The live view's script.
const SCRIPT: &str = include_str!("dashboard.js");
/// How many views may wait for the server's thread before a request is turned away with `503`.
const QUEUE: usize = 64;

/// What a request asks the server's thread to render.
#[derive(Debug, PartialEq)]
enum View {
    List(Filter),
    Detail(u64),
    /// An action's command, checked already, as the grant's player, from the address that
    /// asked (docs/serve.md §13.8).
    Act(u64, Request, IpAddr),
}

/// What the server's thread answers: a page, or a status and the sentence that says why not.
type Answer = Result<Reply, (StatusCode, String)>;

/// A view's success.
#[derive(Debug)]
enum Reply {
    /// An HTML page.
    Page(String),
    /// An action done: the path to go to (`303 See Other`).
    GoTo(String),
}
type Ask = (View, oneshot::Sender<Answer>);

/// The list's filter and order, from the query string (docs/serve.md §13.2).
#[derive(Debug, Default, PartialEq, Eq)]
struct Filter {
    owner: Option<String>,
    verb: Option<String>,
    kind: Option<String>,
    state: Option<StateFilter>,
    search: Option<String>,
    sort: Sort,
}

/// A schedule's state as the list filters it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StateFilter {
    Active,
    Paused,
}

/// The list's order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Sort {
    #[default]
    Id,
    Owner,
    Verb,
    Kind,
    State,
    Next,
}

/// The dashboard's routes, answered by a task on the server's thread (which it starts; it ends
/// when the router is dropped).
pub(crate) fn router(server: &Rc<Server>, grant: Option<ActionGrant>) -> Router {
    let (asks, inbox) = mpsc::channel::<Ask>(QUEUE);
    let acting_as = grant.as_ref().map(|g| g.name.clone());
    tokio::task::spawn_local(render_loop(Rc::downgrade(server), inbox, acting_as));
    Router::new()
        .route("/dashboard", get(list))
        .route("/dashboard/schedules/{id}", get(detail))
        .route("/dashboard/schedules/{id}/{action}", post(act))
        .route("/dashboard/live.js", get(script))
        .layer(DefaultBodyLimit::max(actions::MAX_FORM))
        .with_state(Dashboard { asks, grant })
}

/// What the handlers share: the way to the server's thread, and the action grant if any.
#[derive(Clone)]
struct Dashboard {
    asks: mpsc::Sender<Ask>,
    grant: Option<ActionGrant>,
}

/// An action: checked here (grant, origin, token), done on the server's thread; success goes
/// back to the schedule's page (or the list, after a stop) with `303`.
async fn act(
    State(dash): State<Dashboard>,
    Path((id, action)): Path<(String, String)>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: axum::http::HeaderMap,
    body: String,
) -> Response {
    let Some(id) = parse_id(&id) else {
        return bad_id(&id);
    };
    if !actions::is_form(&headers) {
        return (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "an action is a form: application/x-www-form-urlencoded (docs/serve.md §13.8)\n",
        )
            .into_response();
    }
    let form = match parse_pairs(&body) {
        Ok(form) => form,
        Err(why) => return (StatusCode::BAD_REQUEST, why).into_response(),
    };
    match actions::check(dash.grant.as_ref(), &headers, id, &action, &form) {
        Ok(request) => ask(&dash.asks, View::Act(id, request, peer.ip())).await,
        Err(refusal) => refusal.into_response(),
    }
}

fn parse_id(id: &str) -> Option<u64> {
    id.parse::<u64>().ok().filter(|n| *n > 0)
}

fn bad_id(id: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        format!("{id:?} is not a schedule id: a positive whole number (docs/serve.md §13.4)\n"),
    )
        .into_response()
}

/// `key=value&…` pairs, %-decoded.
fn parse_pairs(text: &str) -> Result<Vec<(String, String)>, String> {
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match (percent_decode(key), percent_decode(value)) {
                (Some(k), Some(v)) => Ok((k, v)),
                _ => Err(format!(
                    "{key:?}: not UTF-8 or a bad %-escape (docs/serve.md §13.4)\n"
                )),
            }
        })
        .collect()
}

async fn list(State(dash): State<Dashboard>, RawQuery(query): RawQuery) -> Response {
    let asks = dash.asks;
    match parse_filter(query.as_deref().unwrap_or("")) {
        Ok(filter) => ask(&asks, View::List(filter)).await,
        Err(why) => (StatusCode::BAD_REQUEST, why).into_response(),
    }
}

async fn detail(State(dash): State<Dashboard>, Path(id): Path<String>) -> Response {
    match parse_id(&id) {
        Some(n) => ask(&dash.asks, View::Detail(n)).await,
        None => bad_id(&id),
    }
}

/// The live view's script, the only script the dashboard runs (docs/serve.md §13.3).
async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
        .into_response()
}

/// Sends `view` to the server's thread and turns its answer into a response.
async fn ask(asks: &mpsc::Sender<Ask>, view: View) -> Response {
    let (reply, answer) = oneshot::channel();
    if asks.try_send((view, reply)).is_err() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "the dashboard is busy; try again (docs/serve.md §13.5)\n",
        )
            .into_response();
    }
    match answer.await {
        // Scripts only from this server, none inline and no plugin: an injected `<script>` or
        // event handler would not run even if escaping missed it (docs/serve.md §13.3).
        Ok(Ok(Reply::GoTo(path))) => (
            StatusCode::SEE_OTHER,
            [(header::LOCATION, path.clone())],
            format!("done; see {path}\n"),
        )
            .into_response(),
        Ok(Ok(Reply::Page(page))) => (
            [
                (
                    header::CONTENT_SECURITY_POLICY,
                    "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
                ),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ],
            Html(page),
        )
            .into_response(),
        Ok(Err((status, why))) => (status, why).into_response(),
        Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "the server is stopping\n").into_response(),
    }
}

/// Answers views on the server's thread, one at a time, between frames.
async fn render_loop(
    server: Weak<Server>,
    mut inbox: mpsc::Receiver<Ask>,
    acting_as: Option<String>,
) {
    while let Some((view, reply)) = inbox.recv().await {
        let Some(server) = server.upgrade() else {
            return;
        };
        let answer = match view {
            View::List(filter) => Ok(Reply::Page(render_list(&server, &filter))),
            View::Detail(id) => render_detail(&server, id, acting_as.as_deref()),
            View::Act(id, request, from) => {
                act_now(&server, (id, from), request, acting_as.as_deref())
            }
        };
        let _ = reply.send(answer);
    }
}

/// Parses `owner`, `verb`, `kind`, `state`, `q` and `sort`; anything else, or a bad value, is
/// refused with a sentence naming it.
fn parse_filter(query: &str) -> Result<Filter, String> {
    if query.len() > MAX_QUERY {
        return Err(format!(
            "the query string is {} bytes; at most {MAX_QUERY} are accepted (docs/serve.md §13.4)\n",
            query.len()
        ));
    }
    let mut filter = Filter::default();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_decode(value)
            .ok_or_else(|| format!("the value of {key:?} is not UTF-8 or has a bad %-escape\n"))?;
        let wanted = (!value.is_empty()).then(|| value.clone());
        match key {
            "owner" => filter.owner = wanted,
            "verb" => filter.verb = wanted,
            "q" => filter.search = wanted,
            "kind" => {
                filter.kind = match value.as_str() {
                    "" => None,
                    "at" | "every" => Some(value),
                    _ => return Err(bad_value("kind", &value, "at or every")),
                }
            }
            "state" => {
                filter.state = match value.as_str() {
                    "" => None,
                    "active" => Some(StateFilter::Active),
                    "paused" => Some(StateFilter::Paused),
                    _ => return Err(bad_value("state", &value, "active or paused")),
                }
            }
            "sort" => {
                filter.sort = match value.as_str() {
                    "" | "id" => Sort::Id,
                    "owner" => Sort::Owner,
                    "verb" => Sort::Verb,
                    "kind" => Sort::Kind,
                    "state" => Sort::State,
                    "next" => Sort::Next,
                    _ => {
                        return Err(bad_value(
                            "sort",
                            &value,
                            "id, owner, verb, kind, state or next",
                        ));
                    }
                }
            }
            _ => {
                return Err(format!(
                    "unknown parameter {:?}: the list takes owner, verb, kind, state, q and sort \
                     (docs/serve.md §13.2)\n",
                    percent_decode(key).unwrap_or_else(|| key.to_owned())
                ));
            }
        }
    }
    Ok(filter)
}

fn bad_value(key: &str, value: &str, allowed: &str) -> String {
    format!("{key}={value:?} is not one of {allowed} (docs/serve.md §13.2)\n")
}

/// `application/x-www-form-urlencoded` decoding: `+` is a space, `%XX` a byte; `None` for a bad
/// escape or bytes that are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        rest = tail;
        match b {
            b'+' => bytes.push(b' '),
            b'%' => {
                let hex = std::str::from_utf8(rest.get(..2)?).ok()?;
                bytes.push(u8::from_str_radix(hex, 16).ok()?);
                rest = &rest[2..];
            }
            _ => bytes.push(b),
        }
    }
    String::from_utf8(bytes).ok()
}

/// `text` as HTML text or attribute value: control and bidi characters (an ANSI escape's ESC
/// among them) shown as visible escapes by [`text::shown`], the one escaping every screen uses
/// (docs/serve.md §11.1), then the five markup characters as entities, so nothing a user typed
/// is markup or reaches a terminal (docs/serve.md §13.3).
pub(crate) fn escape(text: &str) -> String {
    let shown = text::shown(text);
    let mut out = String::with_capacity(shown.len());
    for c in shown.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// One row of the list, with what it is filtered and sorted by.
struct Row {
    info: ScheduleInfo,
    owner: String,
    args: String,
}

fn render_list(server: &Server, filter: &Filter) -> String {
    let txn = server.rt.schedules().begin(server.principals_root());
    let ids = txn.schedules(None).unwrap_or_default();
    let total = ids.len();
    let mut rows: Vec<Row> = ids
        .into_iter()
        .filter_map(|id| txn.schedule_info(id).ok())
        .map(|info| Row {
            owner: server.name(info.owner),
            args: info
                .args
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" "),
            info,
        })
        .filter(|row| keep(row, filter))
        .collect();
    match filter.sort {
        Sort::Id => rows.sort_by_key(|r| r.info.id.get()),
        Sort::Owner => rows.sort_by(|a, b| a.owner.cmp(&b.owner)),
        Sort::Verb => rows.sort_by(|a, b| a.info.verb.cmp(&b.info.verb)),
        Sort::Kind => rows.sort_by_key(|r| r.info.kind.as_str()),
        Sort::State => rows.sort_by_key(|r| r.info.pause.is_some()),
        Sort::Next => rows.sort_by(|a, b| a.info.next_run.total_cmp(&b.info.next_run)),
    }
    let now = server.rt.schedules().now_unix_seconds();
    let mut page = head("Schedules");
    let _ = write!(
        page,
        "<h1>tickstep serve</h1><form method=get action=/dashboard>\
         <input name=q placeholder=search value=\"{}\"> \
         <input name=owner placeholder=owner value=\"{}\"> \
         <input name=verb placeholder=verb value=\"{}\"> \
         <select name=kind>{}</select> <select name=state>{}</select> \
         <select name=sort>{}</select> <button>Filter</button></form>\
         <p id=count>{} of {total} live schedules</p>",
        escape(filter.search.as_deref().unwrap_or("")),
        escape(filter.owner.as_deref().unwrap_or("")),
        escape(filter.verb.as_deref().unwrap_or("")),
        options(&["", "at", "every"], filter.kind.as_deref().unwrap_or("")),
        options(
            &["", "active", "paused"],
            match filter.state {
                None => "",
                Some(StateFilter::Active) => "active",
                Some(StateFilter::Paused) => "paused",
            }
        ),
        options(
            &["id", "owner", "verb", "kind", "state", "next"],
            sort_name(filter.sort)
        ),
        rows.len(),
    );
    page.push_str(LIVE_SECTIONS);
    page.push_str(
        "<h2>Schedules</h2><table id=schedules><tr><th>id</th><th>owner</th><th>kind</th><th>verb</th>\
         <th>args</th><th>state</th><th>next in</th><th>runs</th><th>faults</th></tr>",
    );
    for row in rows.iter().take(LIST_CAP) {
        let info = &row.info;
        let next = if info.next_run > 0.0 {
            format!("{:.1} s", (info.next_run - now).max(0.0))
        } else {
            "-".to_owned()
        };
        let _ = write!(
            page,
            "<tr><td><a href=\"/dashboard/schedules/{id}\">#{id}</a></td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{next}</td><td>{}</td><td>{}</td></tr>",
            escape(&row.owner),
            info.kind.as_str(),
            escape(&info.verb),
            escape(&row.args),
            if info.pause.is_some() {
                "paused"
            } else {
                "active"
            },
            info.run_count,
            info.fault_count,
            id = info.id.get(),
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
    let info = &row.info;
    filter.owner.as_ref().is_none_or(|o| *o == row.owner)
        && filter.verb.as_ref().is_none_or(|v| *v == info.verb)
        && filter.kind.as_ref().is_none_or(|k| k == info.kind.as_str())
        && filter
            .state
            .is_none_or(|s| (s == StateFilter::Paused) == info.pause.is_some())
        && filter.search.as_ref().is_none_or(|q| {
            info.verb.contains(q.as_str())
                || row.args.contains(q.as_str())
                || row.owner.contains(q.as_str())
                || info.key.as_ref().is_some_and(|k| k.contains(q.as_str()))
        })
}

fn sort_name(sort: Sort) -> &'static str {
    match sort {
        Sort::Id => "id",
        Sort::Owner => "owner",
        Sort::Verb => "verb",
        Sort::Kind => "kind",
        Sort::State => "state",
        Sort::Next => "next",
    }
}

/// `<option>`s for fixed, known-safe values, the chosen one selected.
fn options(values: &[&str], chosen: &str) -> String {
    let mut html = String::new();
    for v in values {
        let selected = if *v == chosen { " selected" } else { "" };
        let _ = write!(html, "<option value=\"{v}\"{selected}>{v}</option>");
    }
    html
}

/// Runs an action's command as the grant's player, as if typed from `from` (whose per-address
/// limits it shares, docs/serve.md §11.3); on success, the page to go to (a path).
fn act_now(
    server: &Rc<Server>,
    (id, from): (u64, IpAddr),
    request: Request,
    acting_as: Option<&str>,
) -> Answer {
    let name = acting_as.unwrap_or_default();
    let Some(who) = server.player_named(name) else {
        return Err((
            StatusCode::FORBIDDEN,
            format!("actions act as {name:?}, who has never logged in (docs/serve.md §13.8)\n"),
        ));
    };
    let stopping = matches!(request, Request::Stop(_));
    let (lines, _) = server.execute(who, from, request);
    let reply = lines.join("\n");
    match actions::status_of(&reply) {
        StatusCode::SEE_OTHER if stopping => Ok(Reply::GoTo("/dashboard".to_owned())),
        StatusCode::SEE_OTHER => Ok(Reply::GoTo(format!("/dashboard/schedules/{id}"))),
        status => Err((status, format!("{reply} (acting as {name})\n"))),
    }
}

fn render_detail(server: &Server, id: u64, acting_as: Option<&str>) -> Answer {
    let missing = || {
        (
            StatusCode::NOT_FOUND,
            format!("no live schedule #{id} (docs/serve.md §13.4)\n"),
        )
    };
    let id = ScheduleId::from_raw(id);
    let txn = server.rt.schedules().begin(server.principals_root());
    let info = txn.schedule_info(id).map_err(|_| missing())?;
    let mut page = head(&format!("Schedule #{}", id.get()));
    let _ = write!(
        page,
        "<p><a href=/dashboard>all schedules</a></p><h1>Schedule #{}</h1>\
         <p>owner <b id=owner>{}</b></p><table id=info>",
        id.get(),
        escape(&server.name(info.owner))
    );
    if let Value::Map(fields) = info.to_value() {
        for (key, value) in fields {
            let key = match key {
                Value::Str(name) => name,
                other => other.to_string(),
            };
            let _ = write!(
                page,
                "<tr><th>{}</th><td>{}</td></tr>",
                escape(&key),
                escape(&value.to_string())
            );
        }
    }
    page.push_str("</table>");
    if let Some(name) = acting_as {
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
                "<form method=post action=\"/dashboard/schedules/{}/{action}\" class=action>\
                 <input type=password name=token placeholder=\"action token\" required> {note}\
                 <button id={action}>{action}</button></form>",
                id.get()
            );
        }
    }
    page.push_str("</body></html>");
    Ok(Reply::Page(page))
}

/// The frame budget, commands and server sections, filled by the live view's script.
const LIVE_SECTIONS: &str = "<h2>Frame budget</h2>\
<p>step time per frame against the budget <span id=budget>?</span> (the line; red bars are over it) \
— <span id=live-state>waiting for the first update</span></p>\
<canvas id=frames width=720 height=120 data-updates=0></canvas>\
<p>frames over budget in the last second <b id=over-budget>?</b>; kernel overload events \
<b id=overloads>?</b>; tasks deferred in the last step <b id=deferred>?</b>; waiting per priority \
<b id=pending>?</b></p>\
<h2>Commands</h2><p>running commands <b id=commands-running>?</b>. serve runs one command, the \
bell's ring, on one mechanism; a TokioDriver host with commands lists more here.</p>\
<p>live schedules <b id=schedules-live>?</b>; players online <b id=online>?</b></p>\
<script src=/dashboard/live.js></script>";

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_quotes_and_ansi_escapes_come_out_as_text() {
        // docs/serve.md §13.3
        assert_eq!(
            escape("<script>alert(1)</script>"),
            "&lt;script&gt;alert(1)&lt;/script&gt;"
        );
        assert_eq!(
            escape("\"><img onerror='x'>"),
            "&quot;&gt;&lt;img onerror=&#39;x&#39;&gt;"
        );
        assert_eq!(escape("\u{1b}[31mred"), "\\x1b[31mred");
        assert_eq!(escape("a\u{202e}<b"), "a\\u{202e}&lt;b");
        assert_eq!(escape("a & b"), "a &amp; b");
    }

    #[test]
    fn the_filter_reads_every_parameter_and_names_a_bad_one() {
        // docs/serve.md §13.2, §13.4
        let filter =
            parse_filter("owner=alice&verb=tell&kind=every&state=paused&q=tea+time&sort=next")
                .unwrap();
        assert_eq!(
            filter,
            Filter {
                owner: Some("alice".into()),
                verb: Some("tell".into()),
                kind: Some("every".into()),
                state: Some(StateFilter::Paused),
                search: Some("tea time".into()),
                sort: Sort::Next,
            }
        );
        assert_eq!(
            parse_filter("q=%3Cscript%3E").unwrap().search.as_deref(),
            Some("<script>")
        );
        assert_eq!(parse_filter("").unwrap(), Filter::default());
        for (query, named) in [
            ("sort=size", "\"size\""),
            ("kind=daily", "\"daily\""),
            ("state=dead", "\"dead\""),
            ("colour=red", "\"colour\""),
            ("q=%zz", "\"q\""),
            ("q=%ff", "\"q\""),
        ] {
            let why = parse_filter(query).unwrap_err();
            assert!(why.contains(named), "{query}: {why}");
        }
        let long = format!("q={}", "a".repeat(MAX_QUERY));
        assert!(parse_filter(&long).unwrap_err().contains("bytes"));
    }
}
