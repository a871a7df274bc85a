//! The dashboard's live view (docs/serve.md §13.6): once a second the runtime's thread writes one
//! JSON snapshot — the frames' step times against the budget, frames over it, kernel overload
//! events, tasks waiting per priority, the hot tasks, the running commands, live schedules (and
//! how many of them are paused), the last hour a minute at a time (docs/serve.md §13.18) and,
//! where the host has users, who is online — and every viewer's server-sent-event stream
//! (`/dashboard/events`) sends that same snapshot.
//!
//! Costs: one snapshot a second however many watch (a `watch` channel holds the latest; a viewer
//! clones an `Arc`), counting the paused schedules in one pass over the engine's table; until
//! the first viewer arrives, only the hour's counters are read each second (a copy, no pass). Viewers are capped at [`MAX_VIEWERS`]; one more gets `503`.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::rc::{Rc, Weak};
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

use super::host::DashboardHost;
use super::minutes::{Minutes, Totals};
use crate::Runtime;

/// The most live viewers at once (docs/serve.md §13.5).
pub const MAX_VIEWERS: usize = 64;
/// How often a snapshot is taken.
const EVERY: Duration = Duration::from_secs(1);
/// The kernel's priorities, in the order of its `pending` counts.
const PRIORITIES: [&str; 5] = ["kernel", "high", "normal", "low", "background"];
/// How many hot tasks a snapshot lists (docs/serve.md §13.6).
pub const HOT_TASKS: usize = 8;
/// How many running commands a snapshot lists (all are counted).
const COMMANDS_LISTED: usize = 50;

/// The step times of the frames run since the live view last looked, for its chart: kept only
/// once someone watches, at most [`LiveFrames::KEPT`] (docs/serve.md §13.6). The host records
/// each frame it runs (e.g. from [`TokioDriver::on_frame`](crate::TokioDriver::on_frame)); a clone
/// shares the same frames.
///
/// ```
/// use std::time::Duration;
/// let frames = tickstep::dashboard::LiveFrames::default();
/// frames.record(Duration::from_micros(40), None);
/// assert!(frames.take().is_empty(), "nobody watched yet");
/// frames.record(Duration::from_micros(50), Some(Duration::from_micros(30)));
/// assert_eq!(frames.take(), [(50, 30)]);
/// ```
#[derive(Clone, Default)]
pub struct LiveFrames(Rc<RefCell<Option<Frames>>>);

/// Frames waiting to be shown: (wall, CPU) microseconds, oldest first.
type Frames = VecDeque<(u32, u32)>;

impl std::fmt::Debug for LiveFrames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveFrames").finish_non_exhaustive()
    }
}

impl LiveFrames {
    /// At most this many frames wait to be shown (4 s at 60 fps); older ones are dropped.
    pub const KEPT: usize = 256;

    /// Records one frame: its step time on the wall clock and, where known, in the thread's CPU
    /// time. Nothing is kept until the first [`take`](Self::take).
    ///
    /// ```
    /// tickstep::dashboard::LiveFrames::default().record(std::time::Duration::from_millis(1), None);
    /// ```
    pub fn record(&self, wall: Duration, cpu: Option<Duration>) {
        if let Some(live) = self.0.borrow_mut().as_mut() {
            if live.len() == Self::KEPT {
                live.pop_front();
            }
            live.push_back((micros(wall), cpu.map_or(0, micros)));
        }
    }

    /// The frames recorded since the last call (wall, CPU microseconds; CPU 0 where unknown), the
    /// newest [`Self::KEPT`]. The first call starts the keeping.
    ///
    /// ```
    /// assert!(tickstep::dashboard::LiveFrames::default().take().is_empty());
    /// ```
    pub fn take(&self) -> Vec<(u32, u32)> {
        self.0
            .borrow_mut()
            .replace(VecDeque::new())
            .map(Vec::from)
            .unwrap_or_default()
    }
}

fn micros(time: Duration) -> u32 {
    u32::try_from(time.as_micros()).unwrap_or(u32::MAX)
}

#[derive(Clone)]
struct Viewers {
    latest: watch::Receiver<Arc<str>>,
    count: Arc<AtomicUsize>,
}

/// What the publishing task reads, weakly: it ends with the runtime or the host.
pub(crate) struct Watched {
    pub(crate) rt: Weak<Runtime>,
    pub(crate) host: Weak<dyn DashboardHost>,
    pub(crate) frames: LiveFrames,
}

/// The `/dashboard/events` route, fed by a task on the runtime's thread (which it starts; it ends
/// with the runtime or when the router is dropped).
pub(crate) fn router(watched: Watched) -> Router {
    let (publish, latest) = watch::channel(Arc::<str>::from("{}"));
    let count = Arc::new(AtomicUsize::new(0));
    tokio::task::spawn_local(publish_loop(watched, publish, Arc::clone(&count)));
    Router::new()
        .route("/dashboard/events", get(events))
        .with_state(Viewers { latest, count })
}

/// One snapshot a second while anyone watches; the last hour's minutes are read every second
/// whether or not anyone does (docs/serve.md §13.18).
async fn publish_loop(watched: Watched, publish: watch::Sender<Arc<str>>, count: Arc<AtomicUsize>) {
    let mut minutes = Minutes::default();
    let mut ticks = tokio::time::interval(EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        if publish.is_closed() {
            return;
        }
        let (Some(rt), Some(host)) = (watched.rt.upgrade(), watched.host.upgrade()) else {
            return;
        };
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let now = (rt.schedules().now_unix_seconds() * 1e9) as u64;
        minutes.observe(now, &Totals::of(&rt.host_counts(), &rt.schedules().tally()));
        if count.load(Ordering::Relaxed) == 0 {
            continue;
        }
        let frames = watched.frames.take();
        let mut json = snapshot(&rt, &*host, &frames);
        if let Some(map) = json.as_object_mut() {
            map.insert("minutes".into(), minutes.json());
        }
        publish.send_replace(Arc::from(json.to_string()));
    }
}

/// The live view's JSON (the fields of docs/serve.md §13.6; fields are only ever added).
pub(crate) fn snapshot(
    rt: &Runtime,
    host: &dyn DashboardHost,
    frames: &[(u32, u32)],
) -> serde_json::Value {
    let period = micros(rt.frame_loop().period());
    let stats = rt.stats();
    // Pairs, not an object, so the kernel's order survives.
    let pending: Vec<(&str, usize)> = PRIORITIES.into_iter().zip(stats.kernel.pending).collect();
    let hot: Vec<_> = rt
        .scheduler()
        .top_tasks(HOT_TASKS)
        .into_iter()
        .map(|t| {
            serde_json::json!([
                t.key,
                u64::try_from(t.time.as_micros()).unwrap_or(u64::MAX),
                t.calls,
                u64::try_from(t.max.as_micros()).unwrap_or(u64::MAX)
            ])
        })
        .collect();
    let commands: Vec<_> = rt
        .commands()
        .running()
        .into_iter()
        .take(COMMANDS_LISTED)
        .map(|c| {
            serde_json::json!({
                "id": c.id.get(),
                "name": c.name,
                "priority": c.priority,
                "mechanisms": c.requirements,
            })
        })
        .collect();
    let mut json = serde_json::json!({
        "period_us": period,
        "frames": frames,
        "over_budget": frames.iter().filter(|(wall, _)| *wall > period).count(),
        "overloads": stats.overloads,
        "deferred_last_step": stats.kernel.tasks_deferred,
        "pending": pending,
        "commands_running": stats.commands_running,
        "commands": commands,
        "hot_tasks": hot,
        "schedules_live": stats.schedules_live,
        // Among the live ones (docs/serve.md §13.6): one pass over the engine's table a second,
        // only while someone watches.
        "schedules_paused": rt.schedules().paused_count(),
        "firings": stats.firings_started,
    });
    if let (Some(online), Some(map)) = (host.online(), json.as_object_mut()) {
        map.insert("online".into(), online.into());
    }
    json
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_frames_are_kept_only_once_watched_and_only_the_newest() {
        // docs/serve.md §13.6
        let frames = LiveFrames::default();
        frames.record(Duration::from_millis(1), None);
        assert!(frames.take().is_empty(), "nobody watched yet");
        for ms in 0..300 {
            frames.record(Duration::from_millis(ms), Some(Duration::from_micros(5)));
        }
        let live = frames.take();
        assert_eq!(live.len(), LiveFrames::KEPT);
        assert_eq!(live.last(), Some(&(299_000, 5)));
        assert_eq!(live.first(), Some(&((300 - 256) * 1_000, 5)));
        assert!(frames.take().is_empty(), "each frame is shown once");
    }
}
