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
        let mut snapshot = LiveSnapshot::of(&rt, &*host, &frames);
        snapshot.minutes = Some(minutes.json());
        match serde_json::to_string(&snapshot) {
            Ok(json) => {
                publish.send_replace(Arc::from(json));
            }
            // Unreachable: every field is a number, a string or a JSON value.
            Err(error) => eprintln!("tickstep dashboard: the live snapshot failed: {error}"),
        }
    }
}

/// One snapshot of the live view (docs/serve.md §13.6), as the dashboard writes it once a second
/// and `tickstep top` reads it (docs/serve.md §14.3): one type for both ends of the wire.
///
/// Fields are only ever added. Read tolerantly: a field the sender did not write is zero, empty
/// or `None`, one the reader does not know is ignored, and a list entry of a shape this version
/// does not write is kept as it came ([`Listed::Other`]). The fields are declared in the order
/// their names sort, the order the JSON object has always had on the wire.
///
/// ```
/// use tickstep::dashboard::LiveSnapshot;
/// // What a sender did not write reads as zero, empty or `None`.
/// let snapshot = LiveSnapshot {
///     period_us: 16_666,
///     frames: vec![(40, 30)],
///     online: Some(2),
///     ..LiveSnapshot::default()
/// };
/// assert_eq!(snapshot.commands_running, 0);
/// assert_eq!(snapshot.schedules_paused, None);
/// ```
#[derive(Debug, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct LiveSnapshot {
    /// The running commands, at most 50 of them (all are counted in `commands_running`).
    pub commands: Vec<Listed<LiveCommand>>,
    /// How many commands are running.
    pub commands_running: u64,
    /// Tasks the kernel deferred in its last step.
    pub deferred_last_step: u64,
    /// Firings started so far.
    pub firings: u64,
    /// Each frame since the last snapshot: wall and CPU step time in microseconds (CPU 0 where
    /// unknown).
    pub frames: Vec<(u64, u64)>,
    /// The kernel's hot tasks, at most [`HOT_TASKS`].
    pub hot_tasks: Vec<Listed<LiveHotTask>>,
    /// The last hour a minute at a time (docs/serve.md §13.18), as the dashboard's chart reads it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minutes: Option<serde_json::Value>,
    /// Players online, where the host has players.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub online: Option<u64>,
    /// How many of `frames` took longer than the period.
    pub over_budget: u64,
    /// The kernel's overload events so far.
    pub overloads: u64,
    /// Tasks waiting per priority, kernel first: pairs, so the kernel's order survives.
    pub pending: Vec<(String, u64)>,
    /// The frame period: the step budget, in microseconds.
    pub period_us: u64,
    /// Live schedules.
    pub schedules_live: u64,
    /// How many of the live schedules are paused (one pass over the engine's table a second,
    /// only while someone watches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedules_paused: Option<u64>,
}

/// A running command in a [`LiveSnapshot`]. Fields in the order their names sort, as on the wire.
///
/// ```
/// let c = tickstep::dashboard::LiveCommand {
///     id: 7,
///     mechanisms: vec!["arm".into()],
///     name: "intake".into(),
///     priority: 2,
/// };
/// assert_eq!(c.mechanisms, ["arm"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LiveCommand {
    /// The instance id.
    pub id: u64,
    /// The mechanisms it requires.
    pub mechanisms: Vec<String>,
    /// The command's name.
    pub name: String,
    /// Its effective priority.
    pub priority: i32,
}

/// A hot task in a [`LiveSnapshot`]: its origin, total microseconds, calls and longest run in
/// microseconds, written as a four-element array.
///
/// ```
/// let hot = tickstep::dashboard::LiveHotTask("drive.rs:40".into(), 812, 60, 30);
/// assert_eq!((hot.1, hot.2, hot.3), (812, 60, 30));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LiveHotTask(pub String, pub u64, pub u64, pub u64);

/// An entry of a [`LiveSnapshot`]'s list: the shape this version writes, or, from a sender of
/// another version, whatever came (a reader shows it as it is: docs/serve.md §14.3). Written as
/// the entry alone.
///
/// ```
/// use tickstep::dashboard::{Listed, LiveHotTask};
/// let known = Listed::Known(LiveHotTask("x".into(), 1, 1, 1));
/// assert!(matches!(known, Listed::Known(LiveHotTask(ref origin, ..)) if origin == "x"));
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum Listed<T> {
    /// An entry of the shape this version writes.
    Known(T),
    /// Any other JSON value.
    Other(serde_json::Value),
}

impl LiveSnapshot {
    /// The snapshot of `rt` now, with `frames` (wall, CPU microseconds) and, where `host` has
    /// players, who is online; no `minutes` (the publishing task adds its own).
    fn of(rt: &Runtime, host: &dyn DashboardHost, frames: &[(u32, u32)]) -> LiveSnapshot {
        let period = micros(rt.frame_loop().period());
        let stats = rt.stats();
        let pending = PRIORITIES
            .into_iter()
            .zip(stats.kernel.pending)
            .map(|(name, waiting)| (name.to_owned(), count(waiting)))
            .collect();
        let hot_tasks = rt
            .scheduler()
            .top_tasks(HOT_TASKS)
            .into_iter()
            .map(|t| {
                Listed::Known(LiveHotTask(
                    t.key,
                    u64::try_from(t.time.as_micros()).unwrap_or(u64::MAX),
                    t.calls,
                    u64::try_from(t.max.as_micros()).unwrap_or(u64::MAX),
                ))
            })
            .collect();
        let commands = rt
            .commands()
            .running()
            .into_iter()
            .take(COMMANDS_LISTED)
            .map(|c| {
                Listed::Known(LiveCommand {
                    id: c.id.get(),
                    mechanisms: c.requirements,
                    name: c.name,
                    priority: c.priority,
                })
            })
            .collect();
        LiveSnapshot {
            commands,
            commands_running: count(stats.commands_running),
            deferred_last_step: stats.kernel.tasks_deferred,
            firings: stats.firings_started,
            frames: frames
                .iter()
                .map(|&(wall, cpu)| (u64::from(wall), u64::from(cpu)))
                .collect(),
            hot_tasks,
            minutes: None,
            online: host.online().map(count),
            over_budget: count(frames.iter().filter(|(wall, _)| *wall > period).count()),
            overloads: stats.overloads,
            pending,
            period_us: u64::from(period),
            schedules_live: count(stats.schedules_live),
            schedules_paused: Some(count(rt.schedules().paused_count())),
        }
    }
}

/// A count as the snapshot writes it.
fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
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
    fn the_snapshot_is_written_as_the_object_the_browser_and_top_have_always_read() {
        // docs/serve.md §13.6: the same bytes as the `json!` object this type replaced (a map
        // whose keys sort), so the browser's live view and an older `top` read it unchanged.
        let snapshot = LiveSnapshot {
            commands: vec![Listed::Known(LiveCommand {
                id: 7,
                mechanisms: vec!["arm".into(), "roller".into()],
                name: "intake".into(),
                priority: -2,
            })],
            commands_running: 1,
            deferred_last_step: 3,
            firings: 12,
            frames: vec![(41, 38), (20_500, 19_800)],
            hot_tasks: vec![Listed::Known(LiveHotTask(
                "drive.rs:40".into(),
                812,
                60,
                30,
            ))],
            minutes: Some(serde_json::json!({"minutes": [], "now": 5})),
            online: Some(2),
            over_budget: 1,
            overloads: 4,
            pending: vec![("kernel".into(), 0), ("normal".into(), 2)],
            period_us: 16_666,
            schedules_live: 3,
            schedules_paused: Some(1),
        };
        let mut old = serde_json::json!({
            "period_us": 16_666,
            "frames": [[41, 38], [20_500, 19_800]],
            "over_budget": 1,
            "overloads": 4,
            "deferred_last_step": 3,
            "pending": [["kernel", 0], ["normal", 2]],
            "commands_running": 1,
            "commands": [{"id": 7, "name": "intake", "priority": -2, "mechanisms": ["arm", "roller"]}],
            "hot_tasks": [["drive.rs:40", 812, 60, 30]],
            "schedules_live": 3,
            "schedules_paused": 1,
            "firings": 12,
        });
        let map = old.as_object_mut().unwrap();
        map.insert("online".into(), 2.into());
        map.insert(
            "minutes".into(),
            serde_json::json!({"minutes": [], "now": 5}),
        );
        let written = serde_json::to_string(&snapshot).unwrap();
        assert_eq!(written, old.to_string());
        let read: LiveSnapshot = serde_json::from_str(&written).unwrap();
        assert_eq!(read, snapshot, "read back as written");
    }

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
