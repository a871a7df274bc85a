//! The dashboard's live view (docs/serve.md §13.6): once a second the server's thread writes one
//! JSON snapshot — the frames' step times against the budget, frames over it, kernel overload
//! events, tasks waiting per priority, running commands, live schedules, who is online — and
//! every viewer's server-sent-event stream (`/dashboard/events`) sends that same snapshot.
//!
//! Costs: one snapshot a second however many watch (a `watch` channel holds the latest; a viewer
//! clones an `Arc`); nothing at all until the first viewer arrives. Viewers are capped at
//! [`MAX_VIEWERS`]; one more gets `503`.

use std::convert::Infallible;
use std::rc::Weak;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::Stream;
use tokio::sync::watch;

use super::world::Server;

/// The most live viewers at once (docs/serve.md §13.5).
pub(crate) const MAX_VIEWERS: usize = 64;
/// How often a snapshot is taken.
const EVERY: Duration = Duration::from_secs(1);
/// The kernel's priorities, in the order of its `pending` counts.
const PRIORITIES: [&str; 5] = ["kernel", "high", "normal", "low", "background"];

#[derive(Clone)]
struct Viewers {
    latest: watch::Receiver<Arc<str>>,
    count: Arc<AtomicUsize>,
}

/// The `/dashboard/events` route, fed by a task on the server's thread (which it starts; it ends
/// with the server or when the router is dropped).
pub(crate) fn router(server: Weak<Server>) -> Router {
    let (publish, latest) = watch::channel(Arc::<str>::from("{}"));
    let count = Arc::new(AtomicUsize::new(0));
    tokio::task::spawn_local(publish_loop(server, publish, Arc::clone(&count)));
    Router::new()
        .route("/dashboard/events", get(events))
        .with_state(Viewers { latest, count })
}

/// One snapshot a second while anyone watches.
async fn publish_loop(
    server: Weak<Server>,
    publish: watch::Sender<Arc<str>>,
    count: Arc<AtomicUsize>,
) {
    let mut ticks = tokio::time::interval(EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        if publish.is_closed() {
            return;
        }
        let Some(server) = server.upgrade() else {
            return;
        };
        if count.load(Ordering::Relaxed) == 0 {
            continue;
        }
        publish.send_replace(Arc::from(snapshot(&server).to_string()));
    }
}

/// The live view's JSON (the fields of docs/serve.md §13.6).
pub(crate) fn snapshot(server: &Server) -> serde_json::Value {
    let frames = server.frames.take_live();
    let period = server.frames.period_micros();
    let stats = server.rt.stats();
    // Pairs, not an object, so the kernel's order survives.
    let pending: Vec<(&str, usize)> = PRIORITIES.into_iter().zip(stats.kernel.pending).collect();
    serde_json::json!({
        "period_us": period,
        "frames": frames,
        "over_budget": frames.iter().filter(|(wall, _)| *wall > period).count(),
        "overloads": stats.overloads,
        "deferred_last_step": stats.kernel.tasks_deferred,
        "pending": pending,
        "commands_running": stats.commands_running,
        "schedules_live": stats.schedules_live,
        "firings": stats.firings_started,
        "online": server.online_count(),
    })
}

/// A viewer's stream: the latest snapshot, then each new one; the viewer count goes down when
/// the stream is dropped.
async fn events(State(viewers): State<Viewers>) -> Response {
    if viewers.count.fetch_add(1, Ordering::Relaxed) >= MAX_VIEWERS {
        viewers.count.fetch_sub(1, Ordering::Relaxed);
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("{MAX_VIEWERS} live viewers already watch; try again (docs/serve.md §13.5)\n"),
        )
            .into_response();
    }
    let seat = Seat(Arc::clone(&viewers.count));
    Sse::new(stream(viewers.latest, seat))
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// A viewer's place in the count, given back when dropped.
struct Seat(Arc<AtomicUsize>);

impl Drop for Seat {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn stream(
    latest: watch::Receiver<Arc<str>>,
    seat: Seat,
) -> impl Stream<Item = Result<Event, Infallible>> {
    futures_util::stream::unfold((latest, seat), |(mut latest, seat)| async move {
        latest.changed().await.ok()?;
        let data = Arc::clone(&latest.borrow_and_update());
        Some((Ok(Event::default().data(&*data)), (latest, seat)))
    })
}
