//! The bulk routes (docs/serve.md §13.16): `GET /dashboard/bulk/ACTION?FILTER` asks to confirm
//! (signed in), `POST` to the same path does it, with the session's CSRF token or the action token
//! and the count it confirmed, and records each schedule's outcome in the audit (docs/serve.md
//! §13.17). What is acted on and the pages are [`selection`](super::selection)'s.
//!
//! Costs: one read of the list for the confirm page and one for the action, then one action per
//! schedule acted on.

use std::net::SocketAddr;

use axum::Router;
use axum::extract::{ConnectInfo, Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::asks::{Reply, View, now_unix_nanos};
use super::audit::Entry;
use super::guard::{self, ACTIONS, Refusal};
use super::query::{self, Filter};
use super::routes::{Dashboard, ask_answer, by_whom, page_response, respond, sign_in_first};
use super::selection::result_page;

pub(crate) fn routes() -> Router<Dashboard> {
    Router::new().route("/dashboard/bulk/{action}", get(ask_to_confirm).post(act))
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

/// The confirm page: read-only `403`, a bad filter `400`, an unknown action `404`, signed out
/// `303` to the sign-in.
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

/// The bulk action: checked as a single action is (guard, session or token), then done on the
/// selection if it still holds as many as confirmed, each outcome recorded in the audit.
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
                count.map_or(String::new(), |c| c.chars().take(40).collect())
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
