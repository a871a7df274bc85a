//! `tickstep dashboard`: the web dashboard of a schedule store with no server running
//! (docs/serve.md §13.13) — the same pages `tickstep serve --http` and any `TokioDriver` host
//! serve, from `tickstep::dashboard::store_router`, read through the store's `Inspector` beside
//! any engine that has the store open. Read-only unless `--action-token-file` is given; then an
//! operator signs in with the token once per browser session, and actions are the store
//! operator's, as `tickstep schedules pause|resume|trigger|stop` do them.
//!
//! Costs: nothing while nobody asks; a page opens the store read-only and reads it once.

use std::net::SocketAddr;
use std::path::PathBuf;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use clap::Args;
use tickstep::dashboard::{ActionGrant, DashboardOptions};
use tickstep::kernel::ErrorChain;

use crate::console::{say, usage_error};
use crate::store;

/// The longest `--actions-as` name.
const MAX_NAME: usize = 64;

#[derive(Args, Debug)]
pub(crate) struct DashboardArgs {
    /// The schedule store: a file, or a postgres://… URL.
    #[arg(long, value_name = "FILE|URL")]
    db: PathBuf,
    /// Serve HTTP on ADDR (use a loopback address; port 0 picks one).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:4002")]
    http: SocketAddr,
    /// Allow actions (stop, pause, resume, trigger) to whoever signs in with the token in FILE
    /// (its first line, at least 16 bytes), or gives it as token= from a script; without it the
    /// dashboard is read-only.
    #[arg(long, value_name = "FILE")]
    action_token_file: Option<PathBuf>,
    /// The name a signed-in operator gets by default, and a script's actions are recorded as
    /// (in the audit and a pause's note; the store's operator acts, a store alone has no
    /// principals).
    #[arg(long, value_name = "NAME", requires = "action_token_file")]
    actions_as: Option<String>,
    /// Show and act on this application's schedules only (docs/schedules.md §15.5); without it,
    /// every namespace's.
    #[arg(long, value_name = "NAME")]
    namespace: Option<tickstep::schedules::Namespace>,
    /// The dashboard is reached over HTTPS through a proxy that ends TLS: its session cookie is
    /// marked Secure (docs/serve.md §13.8).
    #[arg(long)]
    http_behind_tls: bool,
}

pub(crate) fn run(args: &DashboardArgs) -> Result<(), String> {
    // The store's own words for a missing file or a foreign database, before anything binds.
    drop(store::open(&args.db)?);
    let name = args.actions_as.as_deref().unwrap_or("operator");
    if name.is_empty() || name.len() > MAX_NAME || name.chars().any(char::is_control) {
        usage_error(&format!(
            "--actions-as {name:?}: a name of 1 to {MAX_NAME} bytes without control characters"
        ));
    }
    let grant = args
        .action_token_file
        .as_deref()
        .map(|path| ActionGrant::from_file(path, name))
        .transpose()?;
    let options = DashboardOptions {
        title: format!("tickstep dashboard: {}", store::shown(&args.db)),
        grant,
        namespace: args.namespace,
        behind_tls: args.http_behind_tls,
        // A server's players by name, where one kept them beside the store.
        names: crate::serve::registry::names::beside(&args.db),
        ..DashboardOptions::default()
    };
    let app = tickstep::dashboard::store_router(&args.db, options)
        .map_err(|e| format!("{}: {}", e.location(), ErrorChain(e.error())))?
        .fallback(unknown_route);
    let threads = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting the HTTP side: {e}"))?;
    threads.block_on(async {
        // Ctrl-C, SIGTERM (what a service manager sends) or SIGHUP stops it cleanly, listening
        // from before the address is printed (docs/runtime.md §7.11).
        let stop = tickstep::shutdown_signal();
        let listener = tokio::net::TcpListener::bind(args.http)
            .await
            .map_err(|e| format!("--http {}: {e}", args.http))?;
        let bound = listener
            .local_addr()
            .map_err(|e| format!("--http {}: {e}", args.http))?;
        say(format!(
            "tickstep dashboard: {} on http://{bound}/dashboard ({})",
            store::shown(&args.db),
            if args.action_token_file.is_some() {
                "sign in with the token to act"
            } else {
                "read-only"
            }
        ));
        let app = app.into_make_service_with_connect_info::<SocketAddr>();
        axum::serve(listener, app)
            .with_graceful_shutdown(stop)
            .await
            .map_err(|e| format!("the HTTP listener failed: {e}"))
    })?;
    say("tickstep dashboard: stopped");
    Ok(())
}

/// Any other path: `404` with the routes there are (docs/serve.md §13.13).
async fn unknown_route(uri: axum::http::Uri) -> Response {
    (
        StatusCode::NOT_FOUND,
        format!(
            "no route {:?}: try /dashboard, /dashboard/overview, /dashboard/schedules/ID or /dashboard/cluster \
             (docs/serve.md §13.13)\n",
            uri.path()
        ),
    )
        .into_response()
}
