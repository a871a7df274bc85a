//! The dashboard's routes and where each request is answered (docs/serve.md §13.10): a handler
//! only parses the request and hands a [`View`] to its backend — for a runtime, a task on the
//! runtime's thread that reads the engine between frames (the world is not `Send`); for a store
//! alone, a blocking thread that reads it through an `Inspector` — and turns the answer into a
//! response.
//!
//! Costs: at most [`QUEUE`] views wait for the runtime's thread and at most [`BLOCKING`] store
//! reads run at once; another request gets `503` (docs/serve.md §13.5).

use std::net::SocketAddr;
use std::path::{Path as FsPath, PathBuf};
use std::rc::{Rc, Weak};
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use tokio::sync::{Semaphore, mpsc, oneshot};

use super::asks::{Answer, Ask, Reply, View, now_unix_nanos};
use super::assets;
use super::audit::{self, Audit, Entry};
use super::guard::{self, ACTIONS, Action, ActionGrant, MAX_FORM};
use super::host::DashboardHost;
use super::names::{Names, PrincipalNames};
use super::on_runtime::render_loop;
use super::on_store::{read_cluster, store_answer};
use super::pages::Chrome;
use super::query;
use super::session::{SessionLimits, Sessions, Signed};
use crate::schedules::Namespace;
use crate::{Runtime, RuntimeHandle};

/// How many views may wait for the runtime's thread.
const QUEUE: usize = 64;
/// How many store reads may run at once on blocking threads.
const BLOCKING: usize = 4;

/// Where views are answered.
#[derive(Clone)]
enum Backend {
    /// A task on the runtime's thread.
    Runtime(mpsc::Sender<Ask>),
    /// Blocking reads of a store alone: of one namespace's schedules, or of all
    /// (docs/schedules.md §15.5); owners named by the host's names, if it lends them
    /// (docs/serve.md §13.13).
    Store(Option<Namespace>, Option<Arc<dyn PrincipalNames>>),
}

/// What the handlers share.
#[derive(Clone)]
pub(crate) struct Dashboard {
    backend: Backend,
    pub(crate) grant: Option<ActionGrant>,
    chrome: Arc<Chrome>,
    /// The `PostgreSQL` store the cluster view and a store alone read.
    location: Option<Arc<PathBuf>>,
    blocking: Arc<Semaphore>,
    pub(crate) sessions: Arc<Sessions>,
    pub(crate) audit: Arc<Audit>,
    /// Reached over TLS (through a proxy): the session cookie is `Secure`.
    pub(crate) secure: bool,
}

/// How a dashboard's actions are allowed: the grant, its sessions' limits, and whether it is
/// reached over TLS (docs/serve.md §13.8).
pub(crate) struct Access {
    pub(crate) grant: Option<ActionGrant>,
    pub(crate) sessions: SessionLimits,
    pub(crate) behind_tls: bool,
    /// The sign-in and bulk routes (`login`, `bulk`): they use this module's handler plumbing,
    /// so the parent hands them in rather than this module naming them.
    pub(crate) routes: Router<Dashboard>,
}

impl Dashboard {
    fn new(
        backend: Backend,
        access: &Access,
        chrome: Chrome,
        location: Option<Arc<PathBuf>>,
    ) -> Self {
        Dashboard {
            backend,
            grant: access.grant.clone(),
            chrome: Arc::new(chrome),
            location,
            blocking: Arc::new(Semaphore::new(BLOCKING)),
            sessions: Arc::new(Sessions::new(access.sessions)),
            audit: Arc::new(Audit::default()),
            secure: access.behind_tls,
        }
    }

    /// The page chrome for this request: signed in as its session, if it has a live one.
    pub(crate) fn chrome_for(&self, headers: &HeaderMap) -> (Arc<Chrome>, Option<Signed>) {
        if self.grant.is_none() {
            return (Arc::clone(&self.chrome), None);
        }
        match self.sessions.find(headers, Instant::now()) {
            Some(signed) => {
                let mut chrome = (*self.chrome).clone();
                chrome.signed = Some(signed.clone());
                (Arc::new(chrome), Some(signed))
            }
            None => (Arc::clone(&self.chrome), None),
        }
    }
}

/// The routes of a runtime's dashboard; starts the task that answers them on this thread.
pub(crate) fn runtime_routes(
    rt: &Rc<Runtime>,
    handle: RuntimeHandle,
    host: Weak<dyn DashboardHost>,
    chrome: Chrome,
    access: Access,
) -> Router {
    let (asks, inbox) = mpsc::channel::<Ask>(QUEUE);
    tokio::task::spawn_local(render_loop(Rc::downgrade(rt), host, handle, inbox));
    let location = rt
        .store_path()
        .filter(|p| crate::schedules::is_server_location(p))
        .map(|p| Arc::new(p.to_path_buf()));
    let dash = Dashboard::new(Backend::Runtime(asks), &access, chrome, location);
    routes(dash, access.routes)
}

/// The routes of a store's dashboard.
pub(crate) fn store_routes(
    location: &FsPath,
    (namespace, names): (Option<Namespace>, Option<Arc<dyn PrincipalNames>>),
    chrome: Chrome,
    access: Access,
) -> Router {
    let location = Some(Arc::new(location.to_path_buf()));
    let dash = Dashboard::new(Backend::Store(namespace, names), &access, chrome, location);
    routes(dash, access.routes)
}

fn routes(dash: Dashboard, actions: Router<Dashboard>) -> Router {
    Router::new()
        .route("/dashboard", get(list))
        .route("/dashboard/schedules/{id}", get(detail))
        .route("/dashboard/schedules/{id}/{action}", get(confirm).post(act))
        .route("/dashboard/overview", get(overview))
        .route("/dashboard/commands", get(commands))
        .route("/dashboard/cluster", get(cluster))
        .route("/dashboard/audit", get(audit_page))
        .merge(actions)
        .layer(DefaultBodyLimit::max(MAX_FORM))
        .with_state(dash)
        .merge(assets::routes())
}

async fn list(
    State(dash): State<Dashboard>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    match query::parse_filter(query.as_deref().unwrap_or("")) {
        Ok(filter) => ask(&dash, View::List(filter), &headers).await,
        Err(why) => (StatusCode::BAD_REQUEST, why).into_response(),
    }
}

async fn detail(
    State(dash): State<Dashboard>,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    if let Err(why) = query::no_query(q.as_deref()) {
        return (StatusCode::BAD_REQUEST, why).into_response();
    }
    match query::parse_id(&id) {
        Some(n) => ask(&dash, View::Detail(n), &headers).await,
        None => (StatusCode::BAD_REQUEST, query::bad_id(&id)).into_response(),
    }
}

async fn overview(
    State(dash): State<Dashboard>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    match query::no_query(q.as_deref()) {
        Ok(()) => ask(&dash, View::Overview, &headers).await,
        Err(why) => (StatusCode::BAD_REQUEST, why).into_response(),
    }
}

async fn commands(
    State(dash): State<Dashboard>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    match query::no_query(q.as_deref()) {
        Ok(()) => ask(&dash, View::Commands, &headers).await,
        Err(why) => (StatusCode::BAD_REQUEST, why).into_response(),
    }
}

async fn cluster(
    State(dash): State<Dashboard>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    match query::no_query(q.as_deref()) {
        Ok(()) => ask(&dash, View::Cluster, &headers).await,
        Err(why) => (StatusCode::BAD_REQUEST, why).into_response(),
    }
}

/// Who did what (docs/serve.md §13.17): a read-only dashboard has no actions to show.
async fn audit_page(
    State(dash): State<Dashboard>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    if let Err(why) = query::no_query(q.as_deref()) {
        return (StatusCode::BAD_REQUEST, why).into_response();
    }
    if dash.grant.is_none() {
        return guard::read_only().into_response();
    }
    let (chrome, _) = dash.chrome_for(&headers);
    let now = now_unix_nanos() as f64 / 1e9;
    page_response(audit::page(&dash.audit.newest_first(), now, &chrome))
}

/// The confirm page of an action, for a browser without the page's script: read-only
/// dashboards have none (`403`), an unknown action is `404`, and without a session it sends the
/// browser to sign in (docs/serve.md §13.8).
async fn confirm(
    State(dash): State<Dashboard>,
    Path((id, action)): Path<(String, String)>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    if let Err(why) = query::no_query(q.as_deref()) {
        return (StatusCode::BAD_REQUEST, why).into_response();
    }
    let Some(id) = query::parse_id(&id) else {
        return (StatusCode::BAD_REQUEST, query::bad_id(&id)).into_response();
    };
    if dash.grant.is_none() {
        return guard::read_only().into_response();
    }
    if dash.chrome_for(&headers).1.is_none() {
        return sign_in_first();
    }
    match ACTIONS.into_iter().find(|a| *a == action) {
        Some(action) => ask(&dash, View::Confirm(id, action), &headers).await,
        None => (
            StatusCode::NOT_FOUND,
            format!(
                "no action {:?}: pause, resume, trigger or stop (docs/serve.md §13.8)\n",
                action.chars().take(40).collect::<String>()
            ),
        )
            .into_response(),
    }
}

/// An action: checked here (grant, origin, session and CSRF token or the action token), done by
/// the backend and recorded with who asked (docs/serve.md §13.17); success goes back to the
/// schedule's page (or the list, after a stop) with `303`.
async fn act(
    State(dash): State<Dashboard>,
    Path((id, action)): Path<(String, String)>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let Some(id) = query::parse_id(&id) else {
        return (StatusCode::BAD_REQUEST, query::bad_id(&id)).into_response();
    };
    if !guard::is_form(&headers) {
        return guard::not_a_form().into_response();
    }
    let form = match query::parse_pairs(&body) {
        Ok(form) => form,
        Err(why) => return (StatusCode::BAD_REQUEST, why).into_response(),
    };
    let signed = dash.chrome_for(&headers).1;
    let (action, by) = match guard::check(
        dash.grant.as_ref(),
        &headers,
        &action,
        &form,
        signed.as_ref(),
    ) {
        Ok(checked) => checked,
        Err(refusal) => return refusal.into_response(),
    };
    let action = by_whom(action, &by);
    let name = action.name();
    let answer = ask_answer(&dash, View::Act(id, action, peer.ip()), &headers).await;
    dash.audit.record(Entry {
        at: now_unix_nanos() as f64 / 1e9,
        by,
        from: peer.ip(),
        action: name,
        id,
        bulk: false,
        refused: answer
            .as_ref()
            .err()
            .map(|(_, why)| why.trim_end().to_owned()),
    });
    respond(answer)
}

/// The action with who asked for it written into a pause's note (docs/serve.md §13.17).
pub(crate) fn by_whom(action: Action, by: &str) -> Action {
    match action {
        Action::Pause { note } => Action::Pause {
            note: guard::signed_note(&note, by),
        },
        other => other,
    }
}

/// `303` to the sign-in form.
pub(crate) fn sign_in_first() -> Response {
    (
        StatusCode::SEE_OTHER,
        [(header::LOCATION, "/dashboard/login")],
        "sign in first; see /dashboard/login (docs/serve.md §13.8)\n",
    )
        .into_response()
}

/// Hands `view` to where it is answered and turns the answer into a response.
async fn ask(dash: &Dashboard, view: View, headers: &HeaderMap) -> Response {
    respond(ask_answer(dash, view, headers).await)
}

/// Hands `view`, seen by the request's session, to where it is answered.
pub(crate) async fn ask_answer(dash: &Dashboard, view: View, headers: &HeaderMap) -> Answer {
    let busy = || {
        Err((
            StatusCode::SERVICE_UNAVAILABLE,
            "the dashboard is busy; try again (docs/serve.md §13.5)\n".to_owned(),
        ))
    };
    let (chrome, _) = dash.chrome_for(headers);
    match (&dash.backend, view) {
        // The cluster is read from the store, whoever serves the dashboard.
        (_, View::Cluster) => {
            let Ok(permit) = Arc::clone(&dash.blocking).try_acquire_owned() else {
                return busy();
            };
            let location = dash.location.clone();
            blocking(permit, move || read_cluster(location.as_deref(), &chrome)).await
        }
        (Backend::Store(namespace, names), view) => {
            let (namespace, names) = (*namespace, names.clone());
            let Ok(permit) = Arc::clone(&dash.blocking).try_acquire_owned() else {
                return busy();
            };
            let Some(location) = dash.location.clone() else {
                return busy();
            };
            blocking(permit, move || {
                let names = Names::read(names.as_deref());
                store_answer(&location, namespace, &names, view, &chrome)
            })
            .await
        }
        (Backend::Runtime(asks), view) => {
            let (reply, answer) = oneshot::channel();
            if asks.try_send((view, chrome, reply)).is_err() {
                return busy();
            }
            answer.await.unwrap_or_else(|_| {
                Err((
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the runtime is stopping\n".to_owned(),
                ))
            })
        }
    }
}

/// Runs a store read on a blocking thread (the `PostgreSQL` client blocks), holding `permit`.
async fn blocking(
    permit: tokio::sync::OwnedSemaphorePermit,
    read: impl FnOnce() -> Answer + Send + 'static,
) -> Answer {
    tokio::task::spawn_blocking(move || {
        let answer = read();
        drop(permit);
        answer
    })
    .await
    .unwrap_or_else(|_| {
        Err((
            StatusCode::INTERNAL_SERVER_ERROR,
            "the store read failed\n".to_owned(),
        ))
    })
}

pub(crate) fn respond(answer: Answer) -> Response {
    match answer {
        Ok(Reply::GoTo(path)) => (
            StatusCode::SEE_OTHER,
            [(header::LOCATION, path.clone())],
            format!("done; see {path}\n"),
        )
            .into_response(),
        Ok(Reply::Page(page)) => page_response(page),
        // Recorded and rendered by the bulk handler; never reaches here.
        Ok(Reply::Bulk(_)) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        Err((status, why)) => (status, why).into_response(),
    }
}

/// A page with its headers: scripts only from this server, none inline and no plugin, so an
/// injected `<script>` or event handler would not run even if escaping missed it
/// (docs/serve.md §13.3).
pub(crate) fn page_response(page: String) -> Response {
    (
        [
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        Html(page),
    )
        .into_response()
}
