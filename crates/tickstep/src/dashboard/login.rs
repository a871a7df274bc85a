//! Signing in and out (docs/serve.md §13.8): `GET /dashboard/login` is the form, `POST
//! /dashboard/login` exchanges the action token and the operator's name for a session cookie,
//! `POST /dashboard/logout` ends the session. A wrong token is `403` without saying what was
//! wrong; the token is never echoed or logged; attempts are rate-limited per address and overall.
//!
//! Costs: one form parse, one rate-limit count and one constant-time comparison per sign-in.

use std::net::SocketAddr;
use std::time::Instant;

use axum::Router;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use maud::html;
use tickstep_host::shown;

use super::guard;
use super::pages::{Chrome, Text};
use super::query;
use super::routes::{Dashboard, page_response};
use super::session::{Limited, clear_cookie};

/// The longest operator name a sign-in accepts, in characters.
pub(crate) const MAX_NAME: usize = 40;

pub(crate) fn routes() -> Router<Dashboard> {
    Router::new()
        .route("/dashboard/login", get(form).post(sign_in))
        .route("/dashboard/logout", post(sign_out))
}

fn login_page(chrome: &Chrome, default_name: &str) -> String {
    let body = html! {
        form.confirm.login method="post" action="/dashboard/login" {
            p { "The action token is asked once; the session lasts until you sign out or leave it idle." }
            label { "your name (recorded with every action)"
                input name="name" maxlength=(MAX_NAME) placeholder=(Text(default_name)) autocomplete="username";
            }
            label { "action token" input type="password" name="token" required autocomplete="current-password"; }
            div.actions { button id="sign-in-button" { "Sign in" } }
        }
    };
    chrome.page("Sign in", None, &body)
}

async fn form(State(dash): State<Dashboard>, headers: HeaderMap) -> Response {
    let Some(grant) = &dash.grant else {
        return guard::read_only().into_response();
    };
    let (chrome, _) = dash.chrome_for(&headers);
    page_response(login_page(&chrome, grant.name()))
}

async fn sign_in(
    State(dash): State<Dashboard>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let Some(grant) = &dash.grant else {
        return guard::read_only().into_response();
    };
    if let Err(refusal) = guard::same_site(&headers) {
        return refusal.into_response();
    }
    if !guard::is_form(&headers) {
        return guard::not_a_form().into_response();
    }
    let now = Instant::now();
    if let Err(limit) = dash.sessions.attempt(peer.ip(), now) {
        tracing::warn!(target: "tickstep::dashboard::audit", from = %peer.ip(), ?limit, "dashboard sign-in rate-limited");
        let whose = match limit {
            Limited::Address => "this address",
            Limited::Overall => "everyone",
        };
        return (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, "60")],
            format!(
                "too many sign-ins from {whose} in the last minute; try again in a minute \
                 (docs/serve.md §13.8)\n"
            ),
        )
            .into_response();
    }
    let form = match query::parse_pairs(&body) {
        Ok(form) => form,
        Err(why) => return (StatusCode::BAD_REQUEST, why).into_response(),
    };
    let field = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map_or("", |(_, v)| v.as_str())
    };
    if !grant.matches(field("token")) {
        tracing::warn!(target: "tickstep::dashboard::audit", from = %peer.ip(), "dashboard sign-in refused");
        return (
            StatusCode::FORBIDDEN,
            "sign-in refused (docs/serve.md §13.8)\n",
        )
            .into_response();
    }
    let name = match field("name").trim() {
        "" => grant.name(),
        name => name,
    };
    // It goes into logs, notes and pages as typed: nothing there may rewrite a line.
    if name.chars().count() > MAX_NAME || shown(name) != name {
        return (
            StatusCode::BAD_REQUEST,
            format!(
                "name {}: a name of 1 to {MAX_NAME} characters without control or bidi control \
                 characters (docs/serve.md §13.8)\n",
                shown(&name.chars().take(MAX_NAME).collect::<String>())
            ),
        )
            .into_response();
    }
    let (id, _) = match dash.sessions.start(name, now) {
        Ok(started) => started,
        Err(why) => return (StatusCode::INTERNAL_SERVER_ERROR, format!("{why}\n")).into_response(),
    };
    tracing::info!(target: "tickstep::dashboard::audit", by = name, from = %peer.ip(), "dashboard sign-in");
    (
        StatusCode::SEE_OTHER,
        [
            (header::LOCATION, "/dashboard".to_owned()),
            (
                header::SET_COOKIE,
                dash.sessions.set_cookie(&id, dash.secure),
            ),
        ],
        "signed in; see /dashboard\n",
    )
        .into_response()
}

/// Ends the session (its CSRF token must come with it) and clears the cookie; without a live
/// session it only clears the cookie.
async fn sign_out(State(dash): State<Dashboard>, headers: HeaderMap, body: String) -> Response {
    if let Err(refusal) = guard::same_site(&headers) {
        return refusal.into_response();
    }
    if let Some(signed) = dash.sessions.find(&headers, Instant::now()) {
        let form = query::parse_pairs(&body).unwrap_or_default();
        let csrf = form
            .iter()
            .find(|(k, _)| k == "csrf")
            .map_or("", |(_, v)| v.as_str());
        if !guard::same_bytes(csrf.as_bytes(), signed.csrf.as_bytes()) {
            return guard::bad_csrf().into_response();
        }
        dash.sessions.end(&headers);
        tracing::info!(target: "tickstep::dashboard::audit", by = %signed.name, "dashboard sign-out");
    }
    (
        StatusCode::SEE_OTHER,
        [
            (header::LOCATION, "/dashboard".to_owned()),
            (header::SET_COOKIE, clear_cookie(dash.secure)),
        ],
        "signed out; see /dashboard\n",
    )
        .into_response()
}
