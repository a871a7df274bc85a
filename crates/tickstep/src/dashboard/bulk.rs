//! Bulk actions (docs/serve.md §13.16): pause, resume, trigger or stop every schedule the list's
//! filter matches — all its pages — behind a confirm step that names the count and the filter.
//! The form carries the count it confirmed; if the filter matches another number when it comes
//! back, nothing is done (`409`). At most [`MAX_BULK`] schedules, the first by id, are acted on
//! per request, each through the same path as a single action, and the result page lists each
//! one done or refused; every one is recorded in the audit (docs/serve.md §13.17).
//!
//! Costs: one read of the list (as a list page reads it) for the confirm page and one for the
//! action, then one action per schedule acted on.

use std::net::SocketAddr;

use axum::Router;
use axum::extract::{ConnectInfo, Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use maud::{Markup, html};

use super::audit::Entry;
use super::detail::ACTIONS;
use super::guard::{self, Refusal};
use super::pages::{Chrome, Row, Text};
use super::query::{self, Filter};
use super::routes::{
    Dashboard, Reply, View, ask_answer, by_whom, now_unix_nanos, page_response, respond,
    sign_in_first,
};

/// The most schedules one bulk action acts on: each is its own durable action (a store's commit,
/// its sync to disk), about 15 ms apiece on the shared test machine, so a request stays within
/// seconds (docs/serve.md §13.16).
pub(crate) const MAX_BULK: usize = 200;
/// How many of the matched schedules the confirm page names.
const NAMED: usize = 10;

/// One schedule's outcome in a bulk action.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub(crate) id: u64,
    pub(crate) verb: String,
    /// `None`: done; the refusal's sentence otherwise.
    pub(crate) refused: Option<String>,
}

pub(crate) fn routes() -> Router<Dashboard> {
    Router::new().route("/dashboard/bulk/{action}", get(ask_to_confirm).post(act))
}

/// The filter in words, as the confirm page names it: `kind=cron state=active`.
fn described(filter: &Filter) -> String {
    let mut words = Vec::new();
    for (key, value) in [
        ("q", &filter.search),
        ("owner", &filter.owner),
        ("verb", &filter.verb),
        ("namespace", &filter.namespace),
    ] {
        if let Some(v) = value {
            words.push(format!("{key}={v}"));
        }
    }
    if let Some(kind) = filter.kind {
        words.push(format!("kind={}", kind.as_str()));
    }
    if let Some(state) = filter.state {
        words.push(format!("state={}", state.as_str()));
    }
    words.join(" ")
}

/// "matching kind=cron state=active", or "(every live schedule)".
fn matching(filter: &Filter) -> String {
    let words = described(filter);
    if words.is_empty() {
        "(every live schedule)".to_owned()
    } else {
        format!("matching {words}")
    }
}

/// The list's offer of the bulk actions on what its filter matches.
pub(crate) fn offer(matched: usize, filter: &Filter) -> Markup {
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

/// The confirm page of `action` on `rows` (the filter's matches, by id).
pub(crate) fn confirm(rows: &[Row], filter: &Filter, action: &str, chrome: &Chrome) -> String {
    let acted = rows.len().min(MAX_BULK);
    let csrf = chrome.signed.as_ref().map_or("", |s| s.csrf.as_str());
    let query = filter.query(1);
    let body = html! {
        form.confirm method="post" action={ "/dashboard/bulk/" (action) (query) } {
            p id="bulk-what" { b { (action) } " " (acted) " schedules " (Text(&matching(filter))) }
            @if rows.len() > MAX_BULK {
                p id="bulk-more" {
                    (rows.len()) " match; one request acts on at most " (MAX_BULK)
                    ", the first by id. Confirm again for the rest."
                }
            }
            @if rows.is_empty() { p { "No schedule matches: there is nothing to do." } }
            @else {
                p.muted {
                    @for row in rows.iter().take(NAMED) { "#" (row.id) " " (Text(&row.verb)) "; " }
                    @if rows.len() > NAMED { "and " (acted - NAMED.min(acted)) " more." }
                }
            }
            @if action == "stop" { p.muted { "Stopped schedules are gone: they cannot be resumed." } }
            input type="hidden" name="csrf" value=(csrf);
            input type="hidden" name="count" value=(rows.len());
            @if action == "pause" {
                label { "note" input name="note" maxlength="200" placeholder="why, for the next person"; }
            }
            div.actions {
                @if !rows.is_empty() {
                    button id="bulk-confirm" class=[(action == "stop").then_some("danger")] {
                        "Confirm " (action) " of " (acted)
                    }
                }
                a href={ "/dashboard" (query) } { "Cancel" }
            }
        }
    };
    chrome.page(&format!("{action} {acted} schedules?"), None, &body)
}

/// The first [`MAX_BULK`] of `rows`, if they are still `expected` in number; otherwise the
/// refusal (`409`), and nothing is done.
pub(crate) fn selection(rows: &[Row], expected: usize) -> Result<&[Row], Refusal> {
    if rows.len() != expected {
        return Err((
            StatusCode::CONFLICT,
            format!(
                "the filter now matches {} schedules, not the {expected} confirmed: nothing was \
                 done; confirm again (docs/serve.md §13.16)\n",
                rows.len()
            ),
        ));
    }
    Ok(&rows[..rows.len().min(MAX_BULK)])
}

impl Outcome {
    /// How the action on `row`'s schedule ended.
    pub(crate) fn of(row: &Row, result: Result<(), Refusal>) -> Outcome {
        Outcome {
            id: row.id,
            verb: row.verb.clone(),
            refused: result.err().map(|(_, why)| why.trim_end().to_owned()),
        }
    }
}

/// The result page: each schedule acted on, done or refused.
fn result_page(outcomes: &[Outcome], filter: &Filter, action: &str, chrome: &Chrome) -> String {
    let refused = outcomes.iter().filter(|o| o.refused.is_some()).count();
    let body = html! {
        p.count id="bulk-result" {
            (action) ": " (outcomes.len() - refused) " done, " (refused) " refused, of the "
            (outcomes.len()) " schedules " (Text(&matching(filter)))
        }
        div.scroll {
            table id="outcomes" {
                tr { th { "schedule" } th { "verb" } th { "outcome" } }
                @for o in outcomes {
                    tr {
                        td { a href={ "/dashboard/schedules/" (o.id) } { "#" (o.id) } }
                        td { (Text(&o.verb)) }
                        td {
                            @match &o.refused {
                                None => span.badge.ok { "done" },
                                Some(why) => { span.badge.fault { "refused" } " " (Text(why)) },
                            }
                        }
                    }
                }
            }
        }
        p { a href={ "/dashboard" (filter.query(1)) } { "Back to the list" } }
    };
    chrome.page(&format!("{action}: the outcome"), None, &body)
}

/// The filter and the action of a bulk request, or why not.
fn parse(query: Option<&str>, action: &str) -> Result<(Filter, &'static str), Refusal> {
    let filter =
        query::parse_filter(query.unwrap_or("")).map_err(|why| (StatusCode::BAD_REQUEST, why))?;
    let action = ACTIONS
        .into_iter()
        .find(|a| *a == action)
        .ok_or_else(|| guard::no_action(action))?;
    Ok((filter, action))
}

async fn ask_to_confirm(
    State(dash): State<Dashboard>,
    Path(action): Path<String>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    if dash.grant.is_none() {
        return guard::read_only().into_response();
    }
    let (filter, action) = match parse(q.as_deref(), &action) {
        Ok(parsed) => parsed,
        Err(refused) => return refused.into_response(),
    };
    if dash.chrome_for(&headers).1.is_none() {
        return sign_in_first();
    }
    respond(ask_answer(&dash, View::Bulk(filter, action), &headers).await)
}

async fn act(
    State(dash): State<Dashboard>,
    Path(action): Path<String>,
    RawQuery(q): RawQuery,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: String,
) -> Response {
    if !guard::is_form(&headers) {
        return guard::not_a_form().into_response();
    }
    let form = match query::parse_pairs(&body) {
        Ok(form) => form,
        Err(why) => return (StatusCode::BAD_REQUEST, why).into_response(),
    };
    let (chrome, signed) = dash.chrome_for(&headers);
    let by = match guard::who(dash.grant.as_ref(), &headers, &form, signed.as_ref()) {
        Ok(by) => by,
        Err(refusal) => return refusal.into_response(),
    };
    let (filter, name) = match parse(q.as_deref(), &action) {
        Ok(parsed) => parsed,
        Err(refused) => return refused.into_response(),
    };
    let action = match guard::action_named(name, &form) {
        Ok(action) => by_whom(action, &by),
        Err(refusal) => return refusal.into_response(),
    };
    let count = form.iter().find(|(k, _)| k == "count").map(|(_, v)| v);
    let Some(expected) = count.and_then(|c| c.parse::<usize>().ok()) else {
        return (
            StatusCode::BAD_REQUEST,
            format!(
                "count {:?}: a bulk action carries the number of schedules it confirmed \
                 (docs/serve.md §13.16)\n",
                count.map_or("", |c| c.as_str())
            ),
        )
            .into_response();
    };
    let view = View::BulkAct(
        query::parse_filter(q.as_deref().unwrap_or("")).unwrap_or_default(),
        action,
        expected,
        peer.ip(),
    );
    match ask_answer(&dash, view, &headers).await {
        Ok(Reply::Bulk(outcomes)) => {
            let at = now_unix_nanos() as f64 / 1e9;
            for o in &outcomes {
                dash.audit.record(Entry {
                    at,
                    by: by.clone(),
                    from: peer.ip(),
                    action: name,
                    id: o.id,
                    bulk: true,
                    refused: o.refused.clone(),
                });
            }
            page_response(result_page(&outcomes, &filter, name, &chrome))
        }
        other => respond(other),
    }
}
