//! The Prometheus exporter for a tokio host (feature `prometheus`, docs/observability.md §4).
//!
//! The libraries record through the `metrics` facade only; this module is the application's side:
//! [`install_recorder`] installs a process-wide Prometheus recorder (before the runtime is built,
//! so the kernel, commands and schedules register their handles against it), and
//! [`metrics_router`] answers `GET /metrics` with the text exposition format. The exporter's own
//! HTTP listener is off: the route mounts on the host's axum server (`tickstep serve --http`).
//!
//! Cost: rendering walks every registered series (a few dozen: the label sets are bounded) and
//! allocates the text; recording is the facade's handle call (see docs/observability.md §5 for
//! the measured numbers).

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
pub use metrics_exporter_prometheus::{BuildError, PrometheusHandle};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};

/// The bucket bounds, in seconds, of every `_seconds` histogram (docs/observability.md §4.2):
/// 50 µs to 10 s, covering a frame step (well under a 16 ms frame) and a schedule's lateness.
pub const SECONDS_BUCKETS: [f64; 12] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.1, 1.0, 10.0,
];

/// The `Content-Type` of the text exposition format, version 0.0.4.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// How often the upkeep thread drains the histograms into their buckets
/// (docs/observability.md §4.5).
pub const UPKEEP_PERIOD: std::time::Duration = std::time::Duration::from_secs(5);

/// Installs a Prometheus recorder as the process's global `metrics` recorder and returns the
/// handle that renders it. Call it once, before building the runtime (docs/observability.md
/// §4.1): handles registered before it stay no-ops.
///
/// It also starts a thread, `tickstep-metrics-upkeep`, that drains the histograms every
/// [`UPKEEP_PERIOD`], so their memory stays bounded when nobody scrapes (docs/observability.md
/// §4.5).
///
/// # Errors
///
/// [`BuildError`] when a recorder is already installed in this process.
///
/// ```
/// let handle = tickstep::prometheus::install_recorder().expect("first recorder");
/// assert!(tickstep::prometheus::install_recorder().is_err(), "one per process");
/// metrics::counter!("doc_example_total").increment(2);
/// assert!(handle.render().contains("doc_example_total 2"));
/// ```
pub fn install_recorder() -> Result<PrometheusHandle, BuildError> {
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".to_owned()), &SECONDS_BUCKETS)?
        .install_recorder()?;
    let upkeep = handle.clone();
    // A detached thread: the global recorder lives as long as the process, and so does it.
    let _ = std::thread::Builder::new()
        .name("tickstep-metrics-upkeep".into())
        .spawn(move || {
            loop {
                std::thread::sleep(UPKEEP_PERIOD);
                upkeep.run_upkeep();
            }
        });
    Ok(handle)
}

/// A router answering `GET /metrics` with the handle's text (docs/observability.md §4.3), to
/// mount on a host's axum server.
///
/// ```
/// let handle = tickstep::prometheus::install_recorder()?;
/// let router: axum::Router = tickstep::prometheus::metrics_router(handle);
/// # drop(router);
/// # Ok::<(), tickstep::prometheus::BuildError>(())
/// ```
pub fn metrics_router(handle: PrometheusHandle) -> Router {
    Router::new()
        .route("/metrics", get(render_metrics))
        .with_state(handle)
}

/// The `/metrics` handler: drains the histograms and renders every series as Prometheus text.
///
/// ```
/// use axum::{Router, routing::get};
/// let handle = tickstep::prometheus::install_recorder()?;
/// let app: Router = Router::new()
///     .route("/stats", get(tickstep::prometheus::render_metrics))
///     .with_state(handle);
/// # drop(app);
/// # Ok::<(), tickstep::prometheus::BuildError>(())
/// ```
pub async fn render_metrics(State(handle): State<PrometheusHandle>) -> impl IntoResponse {
    handle.run_upkeep();
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], handle.render())
}
