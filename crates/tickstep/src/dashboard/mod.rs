//! The web dashboard (feature `dashboard`; docs/serve.md §13): one implementation for every host.
//!
//! * [`router`] — the dashboard of a running [`Runtime`] on a tokio host (a
//!   [`TokioDriver`](crate::TokioDriver) program, `tickstep serve`): the overview of the last
//!   hour, schedules list and detail, actions, the live view of the frame budget with the hot
//!   tasks, the commands page and, on a `PostgreSQL` store, the cluster page. What a host adds — names, users online, its
//!   permission rules for actions — comes through [`DashboardHost`] ([`PlainHost`] adds nothing).
//! * [`store_router`] — the dashboard of a store alone, with no engine running
//!   (`tickstep dashboard --db FILE|postgres://…`): the same overview (its hour read from the
//!   kept history), list, detail, actions (as the store's operator) and cluster pages, read through an [`Inspector`](crate::schedules::Inspector).
//!
//! Either is an axum [`Router`](axum::Router) to merge into the host's own and serve with
//! `into_make_service_with_connect_info::<SocketAddr>()` (actions count against the address
//! that asked). Neither sets a fallback: the host words its own `404`.
//!
//! # The model
//!
//! Handlers must be `Send` and a runtime is not, so a handler only parses the request and hands
//! the view to a task on the runtime's thread, which reads the engine between frames and answers
//! with the page; a store alone is read on tokio's blocking threads (its `PostgreSQL` client
//! blocks). Either way the rows meet one template per view. Pages are HTML rendered on the server
//! from maud templates, with every user-supplied string escaped (docs/serve.md §13.3), and link one
//! stylesheet and one script, static files compiled in (no build step, nothing fetched from
//! elsewhere, nothing inline). Read-only unless an [`ActionGrant`] is given;
//! then an operator signs in once with its token for a session cookie, and actions are `POST`s
//! carrying the session's CSRF token (or, from a script, the action token), behind a CSRF guard
//! (the page must be of this origin, docs/serve.md §13.8); the list acts in bulk on what its
//! filter matches (docs/serve.md §13.16), and every action is recorded with who asked
//! (docs/serve.md §13.17).
//!
//! # Costs
//!
//! A page reads each listed schedule once (a runtime between frames, at most 50 rows rendered);
//! the live view takes one snapshot a second while anyone watches, whatever the number of
//! viewers (at most 64); at most 64 views wait for the runtime's thread and 4 store reads run at
//! once, the rest get `503`. Nothing runs while nobody asks. Build: axum (already built for
//! `prometheus`), `serde_json` and `futures-util` (already in the tree).
//!
//! ```no_run
//! use std::{net::SocketAddr, rc::Rc};
//! use tickstep::dashboard::{DashboardOptions, PlainHost};
//! use tickstep::schedules::ObjId;
//! use tickstep::{Runtime, TokioDriver};
//!
//! # async fn serve() -> Result<(), Box<dyn std::error::Error>> {
//! let driver = TokioDriver::new(Runtime::builder().in_memory_store())?;
//! let host = Rc::new(PlainHost { reader: ObjId(1) });
//! let app = tickstep::dashboard::router(driver.runtime(), driver.handle(), &host, DashboardOptions::default());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! tokio::task::spawn_local(async move {
//!     axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await
//! });
//! driver.run_until(tickstep::shutdown_signal()).await?; // Ctrl-C or SIGTERM
//! # Ok(()) }
//! ```

mod asks;
mod assets;
mod audit;
mod bulk;
mod cluster_history;
mod detail;
mod guard;
mod host;
mod live;
mod login;
mod minutes;
mod names;
mod on_runtime;
mod on_store;
mod overview;
mod pages;
mod query;
mod routes;
mod rows;
mod selection;
mod session;
mod stored;
mod text;
mod unavailable;
mod when;

use std::path::Path;
use std::rc::Rc;

pub use guard::{Action, ActionGrant, MAX_FORM, MIN_TOKEN};
pub use host::{ActionRequest, DashboardHost, PlainHost, Refused, RefusedKind, act_as};
pub use live::{
    HOT_TASKS, Listed, LiveCommand, LiveFrames, LiveHotTask, LiveSnapshot, MAX_VIEWERS,
};
pub use names::PrincipalNames;
pub use pages::LIST_CAP;
pub use session::SessionLimits;
pub use stored::{info_json, record_json, value_json};
pub use unavailable::StoreUnavailable;

use crate::{Runtime, RuntimeHandle};

/// What a dashboard is given besides its runtime or store.
///
/// ```
/// let options = tickstep::dashboard::DashboardOptions {
///     title: "my server".into(),
///     ..Default::default()
/// };
/// assert!(options.grant.is_none(), "read-only unless a grant is given");
/// ```
#[derive(Clone, Debug, Default)]
pub struct DashboardOptions {
    /// The pages' heading (`tickstep` when empty).
    pub title: String,
    /// Allows actions: the token and whom they act as. `None`: read-only.
    pub grant: Option<ActionGrant>,
    /// The frames the live view charts: the host records them ([`LiveFrames::record`]); none
    /// recorded, the chart stays empty while the counts still update.
    pub frames: LiveFrames,
    /// A store alone's dashboard ([`store_router`]) shows, and acts on, this namespace's
    /// schedules only; `None`: every namespace (docs/schedules.md §15.5). A runtime's dashboard
    /// shows its engine's own namespace whatever this says.
    pub namespace: Option<crate::schedules::Namespace>,
    /// How many browser sessions, how long each lives, and how many sign-ins a minute
    /// (docs/serve.md §13.8).
    pub sessions: SessionLimits,
    /// The dashboard is reached over HTTPS, through a proxy that ends TLS in front of it: the
    /// session cookie is marked `Secure` (docs/serve.md §13.8). Said by the host, never guessed
    /// from a request's headers.
    pub behind_tls: bool,
    /// A store alone's dashboard shows, and its filters accept, principals by the names these
    /// give (serve's players, docs/serve.md §13.13); `None`: as `#N`. A runtime's dashboard
    /// names them through its [`DashboardHost`] whatever this says.
    pub names: Option<std::sync::Arc<dyn PrincipalNames>>,
}

impl DashboardOptions {
    fn access(&self) -> routes::Access {
        routes::Access {
            grant: self.grant.clone(),
            sessions: self.sessions,
            behind_tls: self.behind_tls,
            routes: action_routes(),
        }
    }

    fn title(&self) -> String {
        if self.title.is_empty() {
            "tickstep".to_owned()
        } else {
            self.title.clone()
        }
    }
}

/// The sign-in, sign-out and bulk routes, merged into either dashboard's (docs/serve.md §13.8,
/// §13.16).
fn action_routes() -> axum::Router<routes::Dashboard> {
    login::routes().merge(bulk::routes())
}

/// The dashboard of a running runtime: `/dashboard/overview` (the last hour), `/dashboard`
/// (list), `/dashboard/schedules/ID` (detail) and its actions, `/dashboard/commands`,
/// `/dashboard/cluster` (a `PostgreSQL` store's),
/// `/dashboard/events` (the live view), the static files and `/favicon.ico`. Call it on the runtime's thread,
/// inside a `LocalSet`: it starts the tasks that answer the pages and publish the live view
/// (they end with the runtime or the host, which they hold weakly, or when the router is
/// dropped).
///
/// ```
/// use std::rc::Rc;
/// use tickstep::dashboard::{DashboardOptions, PlainHost};
/// # let threads = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
/// tokio::task::LocalSet::new().block_on(&threads, async {
///     let driver = tickstep::TokioDriver::new(tickstep::Runtime::builder().in_memory_store())?;
///     let host = Rc::new(PlainHost { reader: tickstep::schedules::ObjId(1) });
///     let app: axum::Router =
///         tickstep::dashboard::router(driver.runtime(), driver.handle(), &host, DashboardOptions::default());
///     # drop(app);
///     Ok::<(), tickstep::RuntimeError>(())
/// })?;
/// # Ok::<(), tickstep::RuntimeError>(())
/// ```
pub fn router<H: DashboardHost>(
    rt: &Rc<Runtime>,
    handle: RuntimeHandle,
    host: &Rc<H>,
    options: DashboardOptions,
) -> axum::Router {
    let chrome = pages::Chrome {
        title: options.title(),
        runtime: true,
        online: host.online().is_some(),
        cluster: rt
            .store_path()
            .is_some_and(crate::schedules::is_server_location),
        acting_as: options.grant.as_ref().map(|g| g.name().to_owned()),
        signed: None,
    };
    let weak_host: std::rc::Weak<dyn DashboardHost> = {
        let host: Rc<dyn DashboardHost> = Rc::clone(host) as Rc<dyn DashboardHost>;
        Rc::downgrade(&host)
    };
    let access = options.access();
    let live = live::router(live::Watched {
        rt: Rc::downgrade(rt),
        host: weak_host.clone(),
        frames: options.frames,
    });
    routes::runtime_routes(rt, handle, weak_host, chrome, access).merge(live)
}

/// The dashboard of a store alone, with no engine running (`tickstep dashboard --db`): the
/// overview, list, detail, actions and cluster routes of [`router`], read through an
/// [`Inspector`](crate::schedules::Inspector) on tokio's blocking threads. Actions, when a grant
/// allows them, are the store operator's (`Inspector::pause`, `resume`, `trigger`, `stop`),
/// and the grant's name is written into a pause's note (docs/serve.md §13.13).
///
/// It opens the store once to check it: call it outside async code (the `PostgreSQL` client
/// blocks), before serving.
///
/// # Errors
///
/// [`StoreUnavailable`], naming the store, when it cannot be opened or read as one.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("s.db");
/// tickstep::Runtime::builder().store_path(&path).build()?.shutdown()?;
/// let app = tickstep::dashboard::store_router(&path, Default::default()).unwrap();
/// # drop(app);
/// assert!(tickstep::dashboard::store_router(&dir.path().join("none.db"), Default::default()).is_err());
/// # Ok::<(), tickstep::RuntimeError>(())
/// ```
pub fn store_router(
    location: &Path,
    options: DashboardOptions,
) -> Result<axum::Router, StoreUnavailable> {
    let unavailable = |error| StoreUnavailable::new(location, error);
    let inspector = crate::schedules::Inspector::open(location).map_err(unavailable)?;
    let cluster = inspector.cluster().map_err(unavailable)?.is_some();
    drop(inspector);
    let chrome = pages::Chrome {
        title: options.title(),
        runtime: false,
        online: false,
        cluster,
        acting_as: options.grant.as_ref().map(|g| g.name().to_owned()),
        signed: None,
    };
    let access = routes::Access {
        grant: options.grant,
        sessions: options.sessions,
        behind_tls: options.behind_tls,
        routes: action_routes(),
    };
    Ok(routes::store_routes(
        location,
        (options.namespace, options.names),
        chrome,
        access,
    ))
}
