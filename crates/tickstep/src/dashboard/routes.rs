//! The dashboard's routes and where each request is answered (docs/serve.md §13.10): a handler
//! only parses the request and hands a [`View`] to its backend — for a runtime, a task on the
//! runtime's thread that reads the engine between frames (the world is not `Send`); for a store
//! alone, a blocking thread that reads it through an `Inspector` — and turns the answer into a
//! response.
//!
//! Costs: at most [`QUEUE`] views wait for the runtime's thread and at most [`BLOCKING`] store
//! reads run at once; another request gets `503` (docs/serve.md §13.5).

use std::net::{IpAddr, SocketAddr};
use std::path::{Path as FsPath, PathBuf};
use std::rc::{Rc, Weak};
use std::sync::Arc;

use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use tokio::sync::{Semaphore, mpsc, oneshot};

use super::assets;
use super::cluster_history;
use super::detail::{self, ACTIONS};
use super::guard::{self, Action, ActionGrant, MAX_FORM};
use super::host::{ActionRequest, DashboardHost, RefusedKind};
use super::overview;
use super::pages::{self, Chrome};
use super::query::{self, Filter};
use super::rows;
use crate::schedules::{Inspector, Namespace, ScheduleId};
use crate::{Runtime, RuntimeHandle};

/// How many views may wait for the runtime's thread.
const QUEUE: usize = 64;
/// How many store reads may run at once on blocking threads.
const BLOCKING: usize = 4;

/// What a request asks for.
#[derive(Debug)]
pub(crate) enum View {
    List(Filter),
    Detail(u64),
    /// The confirm page of an action on a schedule (docs/serve.md §13.8).
    Confirm(u64, &'static str),
    /// An action, checked already (grant, origin, token), from the address that asked.
    Act(u64, Action, IpAddr),
    Commands,
    Cluster,
    /// The last hour and the frame budget (docs/serve.md §13.18).
    Overview,
}

/// A view's success: an HTML page, or an action done and the path to go to (`303`).
#[derive(Debug)]
pub(crate) enum Reply {
    Page(String),
    GoTo(String),
}

/// A reply, or a status and the sentence that says why not.
pub(crate) type Answer = Result<Reply, (StatusCode, String)>;
type Ask = (View, oneshot::Sender<Answer>);

/// Where views are answered.
#[derive(Clone)]
enum Backend {
    /// A task on the runtime's thread.
    Runtime(mpsc::Sender<Ask>),
    /// Blocking reads of a store alone: of one namespace's schedules, or of all
    /// (docs/schedules.md §15.5).
    Store(Option<Namespace>),
}

/// What the handlers share.
#[derive(Clone)]
struct Dashboard {
    backend: Backend,
    grant: Option<ActionGrant>,
    chrome: Arc<Chrome>,
    /// The `PostgreSQL` store the cluster view and a store alone read.
    location: Option<Arc<PathBuf>>,
    blocking: Arc<Semaphore>,
}

/// The routes of a runtime's dashboard; starts the task that answers them on this thread.
pub(crate) fn runtime_routes(
    rt: &Rc<Runtime>,
    handle: RuntimeHandle,
    host: Weak<dyn DashboardHost>,
    chrome: Chrome,
    grant: Option<ActionGrant>,
) -> Router {
    let (asks, inbox) = mpsc::channel::<Ask>(QUEUE);
    let chrome = Arc::new(chrome);
    tokio::task::spawn_local(render_loop(
        Rc::downgrade(rt),
        host,
        handle,
        inbox,
        Arc::clone(&chrome),
    ));
    let location = rt
        .store_path()
        .filter(|p| crate::schedules::is_server_location(p))
        .map(|p| Arc::new(p.to_path_buf()));
    routes(Dashboard {
        backend: Backend::Runtime(asks),
        grant,
        chrome,
        location,
        blocking: Arc::new(Semaphore::new(BLOCKING)),
    })
}

/// The routes of a store's dashboard.
pub(crate) fn store_routes(
    location: &FsPath,
    namespace: Option<Namespace>,
    chrome: Chrome,
    grant: Option<ActionGrant>,
) -> Router {
    routes(Dashboard {
        backend: Backend::Store(namespace),
        grant,
        chrome: Arc::new(chrome),
        location: Some(Arc::new(location.to_path_buf())),
        blocking: Arc::new(Semaphore::new(BLOCKING)),
    })
}

fn routes(dash: Dashboard) -> Router {
    Router::new()
        .route("/dashboard", get(list))
        .route("/dashboard/schedules/{id}", get(detail))
        .route("/dashboard/schedules/{id}/{action}", get(confirm).post(act))
        .route("/dashboard/overview", get(overview))
        .route("/dashboard/commands", get(commands))
        .route("/dashboard/cluster", get(cluster))
        .layer(DefaultBodyLimit::max(MAX_FORM))
        .with_state(dash)
        .merge(assets::routes())
}

async fn list(State(dash): State<Dashboard>, RawQuery(query): RawQuery) -> Response {
    match query::parse_filter(query.as_deref().unwrap_or("")) {
        Ok(filter) => ask(&dash, View::List(filter)).await,
        Err(why) => (StatusCode::BAD_REQUEST, why).into_response(),
    }
}

async fn detail(
    State(dash): State<Dashboard>,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> Response {
    if let Err(why) = query::no_query(q.as_deref()) {
        return (StatusCode::BAD_REQUEST, why).into_response();
    }
    match query::parse_id(&id) {
        Some(n) => ask(&dash, View::Detail(n)).await,
        None => (StatusCode::BAD_REQUEST, query::bad_id(&id)).into_response(),
    }
}

async fn overview(State(dash): State<Dashboard>, RawQuery(q): RawQuery) -> Response {
    match query::no_query(q.as_deref()) {
        Ok(()) => ask(&dash, View::Overview).await,
        Err(why) => (StatusCode::BAD_REQUEST, why).into_response(),
    }
}

async fn commands(State(dash): State<Dashboard>, RawQuery(q): RawQuery) -> Response {
    match query::no_query(q.as_deref()) {
        Ok(()) => ask(&dash, View::Commands).await,
        Err(why) => (StatusCode::BAD_REQUEST, why).into_response(),
    }
}

async fn cluster(State(dash): State<Dashboard>, RawQuery(q): RawQuery) -> Response {
    match query::no_query(q.as_deref()) {
        Ok(()) => ask(&dash, View::Cluster).await,
        Err(why) => (StatusCode::BAD_REQUEST, why).into_response(),
    }
}

/// The confirm page of an action, for a browser without the page's script: read-only
/// dashboards have none (`403`), an unknown action is `404` (docs/serve.md §13.8).
async fn confirm(
    State(dash): State<Dashboard>,
    Path((id, action)): Path<(String, String)>,
    RawQuery(q): RawQuery,
) -> Response {
    if let Err(why) = query::no_query(q.as_deref()) {
        return (StatusCode::BAD_REQUEST, why).into_response();
    }
    let Some(id) = query::parse_id(&id) else {
        return (StatusCode::BAD_REQUEST, query::bad_id(&id)).into_response();
    };
    if dash.grant.is_none() {
        return (
            StatusCode::FORBIDDEN,
            "the dashboard is read-only: start it with --action-token-file to allow actions \
             (docs/serve.md §13.8)\n",
        )
            .into_response();
    }
    match ACTIONS.into_iter().find(|a| *a == action) {
        Some(action) => ask(&dash, View::Confirm(id, action)).await,
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

/// An action: checked here (grant, origin, token), done by the backend; success goes back to
/// the schedule's page (or the list, after a stop) with `303`.
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
        return (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "an action is a form: application/x-www-form-urlencoded (docs/serve.md §13.8)\n",
        )
            .into_response();
    }
    let form = match query::parse_pairs(&body) {
        Ok(form) => form,
        Err(why) => return (StatusCode::BAD_REQUEST, why).into_response(),
    };
    match guard::check(dash.grant.as_ref(), &headers, &action, &form) {
        Ok(action) => ask(&dash, View::Act(id, action, peer.ip())).await,
        Err(refusal) => refusal.into_response(),
    }
}

/// Hands `view` to where it is answered and turns the answer into a response.
async fn ask(dash: &Dashboard, view: View) -> Response {
    let busy = || {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "the dashboard is busy; try again (docs/serve.md §13.5)\n",
        )
            .into_response()
    };
    let answer = match (&dash.backend, view) {
        // The cluster is read from the store, whoever serves the dashboard.
        (_, View::Cluster) => {
            let Ok(permit) = Arc::clone(&dash.blocking).try_acquire_owned() else {
                return busy();
            };
            let (location, chrome) = (dash.location.clone(), Arc::clone(&dash.chrome));
            blocking(permit, move || read_cluster(location.as_deref(), &chrome)).await
        }
        (&Backend::Store(namespace), view) => {
            let Ok(permit) = Arc::clone(&dash.blocking).try_acquire_owned() else {
                return busy();
            };
            let Some(location) = dash.location.clone() else {
                return busy();
            };
            let chrome = Arc::clone(&dash.chrome);
            blocking(permit, move || {
                store_answer(&location, namespace, view, &chrome)
            })
            .await
        }
        (Backend::Runtime(asks), view) => {
            let (reply, answer) = oneshot::channel();
            if asks.try_send((view, reply)).is_err() {
                return busy();
            }
            answer.await.unwrap_or_else(|_| {
                Err((
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the runtime is stopping\n".to_owned(),
                ))
            })
        }
    };
    respond(answer)
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

fn respond(answer: Answer) -> Response {
    match answer {
        Ok(Reply::GoTo(path)) => (
            StatusCode::SEE_OTHER,
            [(header::LOCATION, path.clone())],
            format!("done; see {path}\n"),
        )
            .into_response(),
        // Scripts only from this server, none inline and no plugin: an injected `<script>` or
        // event handler would not run even if escaping missed it (docs/serve.md §13.3).
        Ok(Reply::Page(page)) => (
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
        Err((status, why)) => (status, why).into_response(),
    }
}

fn missing(id: u64) -> (StatusCode, String) {
    (
        StatusCode::NOT_FOUND,
        format!("no live schedule #{id} (docs/serve.md §13.4)\n"),
    )
}

/// Where an action goes once done: the schedule's page, or the list after a stop.
fn done(id: u64, action: &Action) -> Reply {
    Reply::GoTo(match action {
        Action::Stop => "/dashboard".to_owned(),
        _ => format!("/dashboard/schedules/{id}"),
    })
}

/// Answers views on the runtime's thread, one at a time, between frames.
async fn render_loop(
    rt: Weak<Runtime>,
    host: Weak<dyn DashboardHost>,
    handle: RuntimeHandle,
    mut inbox: mpsc::Receiver<Ask>,
    chrome: Arc<Chrome>,
) {
    while let Some((view, reply)) = inbox.recv().await {
        let (Some(rt), Some(host)) = (rt.upgrade(), host.upgrade()) else {
            return;
        };
        let answer = match view {
            View::List(filter) => Ok(Reply::Page(pages::list(
                rows::runtime_rows(&rt, &*host),
                &filter,
                rt.schedules().now_unix_seconds(),
                &chrome,
            ))),
            View::Detail(id) => rows::runtime_detail(&rt, &*host, id)
                .map(|d| Reply::Page(detail::page(&d, rt.schedules().now_unix_seconds(), &chrome)))
                .ok_or_else(|| missing(id)),
            View::Confirm(id, action) => rows::runtime_detail(&rt, &*host, id)
                .map(|d| Reply::Page(detail::confirm(&d, action, &chrome)))
                .ok_or_else(|| missing(id)),
            View::Commands => Ok(Reply::Page(pages::commands(
                &rt.commands().running(),
                &chrome,
            ))),
            View::Overview => Ok(Reply::Page(overview::page(None, &chrome))),
            View::Act(id, action, from) => {
                let acting_as = chrome.acting_as.clone().unwrap_or_default();
                let request = ActionRequest {
                    id: ScheduleId::from_raw(id),
                    action,
                    acting_as,
                    from,
                };
                let result = host.act(&rt, &request);
                // A resumed or triggered schedule's deadline is armed again: wake an idle driver.
                let _ = handle.wake();
                result.map(|()| done(id, &request.action)).map_err(|r| {
                    let status = match r.kind {
                        RefusedKind::NotFound => StatusCode::NOT_FOUND,
                        RefusedKind::Forbidden => StatusCode::FORBIDDEN,
                        RefusedKind::Invalid => StatusCode::BAD_REQUEST,
                    };
                    (
                        status,
                        format!("{} (acting as {})\n", r.why, request.acting_as),
                    )
                })
            }
            // Answered by `read_cluster` off this thread; never sent here.
            View::Cluster => read_cluster(None, &chrome),
        };
        let _ = reply.send(answer);
    }
}

/// The cluster page of the `PostgreSQL` store at `location` (docs/serve.md §13.12).
fn read_cluster(location: Option<&PathBuf>, chrome: &Chrome) -> Answer {
    let none = || {
        Err((
            StatusCode::NOT_FOUND,
            "no cluster here: only a PostgreSQL store is shared by nodes (docs/serve.md §13.12)\n"
                .to_owned(),
        ))
    };
    let Some(location) = location else {
        return none();
    };
    let inspector = rows::open(location, None).map_err(unavailable)?;
    match inspector.cluster() {
        // Relative to this host's clock; live or expired is the database's word.
        Ok(Some(cluster)) => {
            let takeovers = cluster_history::Takeovers::read(&inspector)
                .map_err(|e| unavailable(rows::failed(location, &e)))?;
            let now = now_unix_nanos() as f64 / 1e9;
            let over_time = cluster_history::render(&cluster, &takeovers, now);
            Ok(Reply::Page(pages::cluster(
                &cluster, &over_time, now, chrome,
            )))
        }
        Ok(None) => none(),
        Err(e) => Err(unavailable(rows::failed(location, &e))),
    }
}

#[allow(clippy::needless_pass_by_value)] // used as map_err(unavailable)
fn unavailable(why: String) -> (StatusCode, String) {
    // The store could not be read: the dashboard is up, its source is not.
    (StatusCode::SERVICE_UNAVAILABLE, format!("{why}\n"))
}

fn now_unix_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Answers a view of a store alone, on a blocking thread.
fn store_answer(
    location: &FsPath,
    namespace: Option<Namespace>,
    view: View,
    chrome: &Chrome,
) -> Answer {
    match view {
        View::List(filter) => {
            let rows = rows::store_rows(location, namespace).map_err(unavailable)?;
            let now = now_unix_nanos() as f64 / 1e9;
            Ok(Reply::Page(pages::list(rows, &filter, now, chrome)))
        }
        View::Detail(id) => rows::store_detail(location, namespace, id, now_unix_nanos())
            .map_err(unavailable)?
            .map(|d| Reply::Page(detail::page(&d, now_unix_nanos() as f64 / 1e9, chrome)))
            .ok_or_else(|| missing(id)),
        View::Confirm(id, action) => rows::store_detail(location, namespace, id, now_unix_nanos())
            .map_err(unavailable)?
            .map(|d| Reply::Page(detail::confirm(&d, action, chrome)))
            .ok_or_else(|| missing(id)),
        View::Commands => Err((
            StatusCode::NOT_FOUND,
            "a store alone runs no commands: the commands view is a running host's \
             (docs/serve.md §13.11)\n"
                .to_owned(),
        )),
        View::Act(id, action, _) => store_act(location, namespace, id, &action, chrome),
        View::Overview => {
            let minutes = overview::store_minutes(location, namespace, now_unix_nanos())
                .map_err(unavailable)?;
            Ok(Reply::Page(overview::page(Some(&minutes), chrome)))
        }
        View::Cluster => read_cluster(Some(&location.to_path_buf()), chrome),
    }
}

/// An action on a store alone, as the store's operator does it (`tickstep schedules pause` …):
/// the store's own durable operator paths (docs/schedules.md §9.12, §11.7).
fn store_act(
    location: &FsPath,
    namespace: Option<Namespace>,
    id: u64,
    action: &Action,
    chrome: &Chrome,
) -> Answer {
    let sid = ScheduleId::from_raw(id);
    // Another namespace's schedule is not there for a dashboard of one namespace.
    let held = rows::open(location, namespace)
        .map_err(unavailable)?
        .get(sid)
        .map_err(|e| unavailable(rows::failed(location, &e)))?;
    if held.is_none() {
        return Err(missing(id));
    }
    let name = chrome.acting_as.as_deref().unwrap_or("operator");
    let result = match action {
        Action::Stop => Inspector::stop(location, sid),
        Action::Pause { note } => {
            // The operator's pause has no principal: the note says who (docs/serve.md §13.13).
            let note = if note.is_empty() {
                format!("by {name} on the dashboard")
            } else {
                format!("{note} (by {name} on the dashboard)")
            };
            Inspector::pause(location, sid, &note)
        }
        Action::Resume => Inspector::resume(location, sid),
        Action::Trigger => Inspector::trigger(location, sid),
    };
    match result {
        Ok(_) => Ok(done(id, action)),
        Err(e) => Err((
            StatusCode::BAD_REQUEST,
            format!("{} (acting as {name})\n", rows::failed(location, &e)),
        )),
    }
}
