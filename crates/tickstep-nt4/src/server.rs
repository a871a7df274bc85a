//! The NT4 server: a tokio runtime on a thread of its own serving `/nt/<client>`
//! (docs/nt4.md §1).

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use futures_util::{SinkExt, StreamExt};
use tokio::sync::Notify;

use crate::hub::{Closing, Hub, PROTOCOL_40, PROTOCOL_41, PROTOCOL_RTT};
use crate::keepalive::{Keepalive, Step};
use crate::limits::Limits;
use crate::value::Value;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The address could not be bound.
    #[error("NT4 server: cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The server's thread or runtime could not start.
    #[error("NT4 server: cannot start its thread: {0}")]
    Start(std::io::Error),
}

/// An NT4 server. Clone it freely: clones share one server, which stops when the last clone is
/// dropped.
///
/// The robot side calls [`Nt4Server::set`] each frame (a short lock, no I/O: docs/nt4.md §5.4);
/// each client's writer sends what changed at the client's period.
///
/// ```
/// use tickstep_nt4::{Limits, Nt4Server, Value};
/// let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Limits::default()).unwrap();
/// assert!(server.set("/tickstep/answer", Value::Int(42)));
/// assert!(!server.set("/tickstep/answer", Value::Int(42))); // unchanged: nothing to send
/// assert_eq!(server.get("/tickstep/answer"), Some(Value::Int(42)));
/// assert_ne!(server.local_addr().port(), 0);
/// ```
#[derive(Clone)]
pub struct Nt4Server {
    shared: Arc<Shared>,
}

struct Shared {
    hub: Arc<Mutex<Hub>>,
    addr: SocketAddr,
    stop: Arc<Notify>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.stop.notify_one();
    }
}

impl std::fmt::Debug for Nt4Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nt4Server")
            .field("addr", &self.shared.addr)
            .finish_non_exhaustive()
    }
}

fn lock(hub: &Mutex<Hub>) -> MutexGuard<'_, Hub> {
    // A panic while holding the lock leaves the state consistent enough to keep serving.
    hub.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Nt4Server {
    /// Binds `addr` (port 5810 is NT4's; 0 picks a free one) and starts serving on a thread of
    /// its own.
    ///
    /// # Errors
    /// [`ServerError::Bind`] when the address cannot be bound.
    ///
    /// ```
    /// use tickstep_nt4::{Limits, Nt4Server};
    /// let a = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Limits::default()).unwrap();
    /// let taken = a.local_addr();
    /// assert!(Nt4Server::start(taken, Limits::default()).is_err());
    /// ```
    pub fn start(addr: SocketAddr, limits: Limits) -> Result<Self, ServerError> {
        let listener = std::net::TcpListener::bind(addr)
            .map_err(|source| ServerError::Bind { addr, source })?;
        listener.set_nonblocking(true).map_err(ServerError::Start)?;
        let local = listener.local_addr().map_err(ServerError::Start)?;
        let hub = Arc::new(Mutex::new(Hub::new(limits)));
        let stop = Arc::new(Notify::new());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(ServerError::Start)?;
        let (hub2, stop2) = (hub.clone(), stop.clone());
        std::thread::Builder::new()
            .name("tickstep-nt4".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                        return;
                    };
                    let app = Router::new()
                        .route("/nt/{client}", any(upgrade))
                        .with_state(hub2)
                        .into_make_service_with_connect_info::<SocketAddr>();
                    let _ = axum::serve(listener, app)
                        .with_graceful_shutdown(async move { stop2.notified().await })
                        .await;
                });
            })
            .map_err(ServerError::Start)?;
        Ok(Self {
            shared: Arc::new(Shared {
                hub,
                addr: local,
                stop,
            }),
        })
    }

    /// The address the server listens on.
    ///
    /// ```
    /// # use tickstep_nt4::{Limits, Nt4Server};
    /// let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Limits::default()).unwrap();
    /// assert!(server.local_addr().ip().is_loopback());
    /// ```
    pub fn local_addr(&self) -> SocketAddr {
        self.shared.addr
    }

    /// Publishes `value` on topic `name` (created on first use with the value's type). Returns
    /// whether the value changed: an unchanged value is not sent again, and a value of another
    /// type than the topic's is refused (docs/nt4.md §2.3).
    ///
    /// ```
    /// # use tickstep_nt4::{Limits, Nt4Server, Value};
    /// let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Limits::default()).unwrap();
    /// assert!(server.set("/x", Value::Double(1.5)));
    /// assert!(!server.set("/x", Value::Int(1))); // the topic is a double
    /// ```
    pub fn set(&self, name: &str, value: Value) -> bool {
        lock(&self.shared.hub).set(name, value, None)
    }

    /// Runs `f` on the server's state under one lock: the frame sets all of its changed topics
    /// at once (docs/nt4.md §5.4, §8.3).
    pub(crate) fn with_hub<R>(&self, f: impl FnOnce(&mut Hub) -> R) -> R {
        f(&mut lock(&self.shared.hub))
    }

    /// Like [`Nt4Server::set`], with properties for a topic it creates (for example
    /// `{"retained": true}`).
    ///
    /// ```
    /// # use tickstep_nt4::{Limits, Nt4Server, Value};
    /// let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Limits::default()).unwrap();
    /// server.set_with_properties("/.schema/x", Value::Raw(vec![1], "raw".into()), &tickstep_nt4::serde_json::json!({"retained": true}));
    /// ```
    pub fn set_with_properties(
        &self,
        name: &str,
        value: Value,
        properties: &serde_json::Value,
    ) -> bool {
        lock(&self.shared.hub).set(name, value, Some(properties))
    }

    /// The retained value of a topic, whoever published it: how the robot reads what a
    /// dashboard publishes (docs/nt4.md §5.5).
    ///
    /// ```
    /// # use tickstep_nt4::{Limits, Nt4Server, Value};
    /// let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Limits::default()).unwrap();
    /// assert_eq!(server.get("/nobody/published/this"), None);
    /// ```
    pub fn get(&self, name: &str) -> Option<Value> {
        lock(&self.shared.hub).get(name)
    }

    /// How many clients are connected.
    ///
    /// ```
    /// # use tickstep_nt4::{Limits, Nt4Server};
    /// let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Limits::default()).unwrap();
    /// assert_eq!(server.client_count(), 0);
    /// ```
    pub fn client_count(&self) -> usize {
        lock(&self.shared.hub).client_count()
    }

    /// The server's time base in microseconds (what its timestamps count).
    ///
    /// ```
    /// # use tickstep_nt4::{Limits, Nt4Server};
    /// let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Limits::default()).unwrap();
    /// let t = server.now_us();
    /// assert!(server.now_us() >= t);
    /// ```
    pub fn now_us(&self) -> u64 {
        lock(&self.shared.hub).now_us()
    }
}

async fn upgrade(
    Path(client): Path<String>,
    State(hub): State<Arc<Mutex<Hub>>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    ws: WebSocketUpgrade,
) -> Response {
    let (limits, clients) = {
        let h = lock(&hub);
        (h.limits.clone(), h.client_count())
    };
    if !limits.allowed_peers.is_empty() && !limits.allowed_peers.contains(&peer.ip()) {
        let ip = peer.ip();
        return (
            StatusCode::FORBIDDEN,
            format!("{ip} is not an allowed peer (docs/nt4.md §4.3)"),
        )
            .into_response();
    }
    if clients >= limits.max_clients {
        let max = limits.max_clients;
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("more than {max} clients (docs/nt4.md §4.1)"),
        )
            .into_response();
    }
    let ws = ws
        .protocols([PROTOCOL_41, PROTOCOL_40, PROTOCOL_RTT])
        .max_message_size(limits.max_frame_bytes)
        .max_frame_size(limits.max_frame_bytes);
    let Some(protocol) = ws
        .selected_protocol()
        .and_then(|p| p.to_str().ok())
        .map(str::to_owned)
    else {
        return (
            StatusCode::BAD_REQUEST,
            format!("subprotocol {PROTOCOL_41} or {PROTOCOL_40} required (docs/nt4.md §1.2)"),
        )
            .into_response();
    };
    ws.on_upgrade(move |socket| serve_client(hub, client, peer, socket, protocol == PROTOCOL_RTT))
}

/// Runs one client: a reader (this task) and a writer (spawned) that sweeps at the client's
/// period or when woken. Only the writer removes the client, after sending any close frame.
async fn serve_client(
    hub: Arc<Mutex<Hub>>,
    name: String,
    peer: SocketAddr,
    socket: WebSocket,
    rtt_only: bool,
) {
    let notify = Arc::new(Notify::new());
    let (cid, _name) = lock(&hub).add_client(&name, peer.to_string(), notify.clone());
    let (mut sink, mut stream) = socket.split();
    let (send_timeout, ping_interval, ping_timeout) = {
        let h = lock(&hub);
        (
            h.limits.send_timeout,
            h.limits.ping_interval,
            h.limits.ping_timeout,
        )
    };
    let mut keepalive = Keepalive::new(ping_interval, ping_timeout, tokio::time::Instant::now());
    let pongs = keepalive.pongs();
    let writer_hub = hub.clone();
    let writer = tokio::spawn(async move {
        let mut period = Duration::from_millis(100);
        loop {
            let until_due = keepalive
                .due()
                .saturating_duration_since(tokio::time::Instant::now());
            let _ = tokio::time::timeout(period.min(until_due), notify.notified()).await;
            let now = tokio::time::Instant::now();
            match keepalive.step(now) {
                Step::Wait => {}
                Step::TimedOut => lock(&writer_hub).close_unanswered(cid),
                Step::Ping => {
                    let ping = Message::Ping(axum::body::Bytes::from_static(b"nt4"));
                    if !send_within(&mut sink, ping, send_timeout).await {
                        break;
                    }
                    keepalive.sent(now);
                }
            }
            let sweep = lock(&writer_hub).sweep(cid);
            period = sweep.period;
            if let Some(reason) = sweep.close {
                if let Closing::Reason(r) = reason {
                    let frame = CloseFrame {
                        code: r.code,
                        reason: r.reason.into(),
                    };
                    let _ =
                        tokio::time::timeout(send_timeout, sink.send(Message::Close(Some(frame))))
                            .await;
                }
                break;
            }
            let messages = [
                sweep.text.map(|t| Message::Text(t.into())),
                sweep.binary.map(|b| Message::Binary(b.into())),
            ];
            // A client that does not read within the timeout is dropped (docs/nt4.md §4.2).
            if !send_all(&mut sink, messages, send_timeout).await {
                break;
            }
        }
        lock(&writer_hub).remove_client(cid);
    });
    let mut window_start = tokio::time::Instant::now();
    let mut count = 0u32;
    while let Some(msg) = stream.next().await {
        let now = tokio::time::Instant::now();
        if now.duration_since(window_start) >= Duration::from_secs(1) {
            window_start = now;
            count = 0;
        }
        count += 1;
        let mut h = lock(&hub);
        if h.too_many_messages(cid, count) {
            break;
        }
        match msg {
            Ok(Message::Text(t)) if !rtt_only => h.handle_text(cid, t.as_str()),
            Ok(Message::Binary(b)) => h.handle_binary(cid, &b),
            Ok(Message::Pong(_)) => {
                pongs.fetch_add(1, Ordering::Relaxed);
            }
            Ok(Message::Close(_)) => {
                h.close_client(cid, Closing::Left);
                break;
            }
            Ok(_) => {}
            Err(e) => {
                if is_too_big(&e) {
                    h.close_too_big(cid);
                } else {
                    h.close_client(cid, Closing::Left);
                }
                break;
            }
        }
    }
    lock(&hub).close_client(cid, Closing::Left);
    let _ = writer.await;
}

/// Sends `msg`, reporting whether it went out within `limit`.
async fn send_within(
    sink: &mut futures_util::stream::SplitSink<WebSocket, Message>,
    msg: Message,
    limit: Duration,
) -> bool {
    matches!(
        tokio::time::timeout(limit, sink.send(msg)).await,
        Ok(Ok(()))
    )
}

/// Sends each present message in turn; false as soon as one does not go out within `limit`.
async fn send_all(
    sink: &mut futures_util::stream::SplitSink<WebSocket, Message>,
    messages: [Option<Message>; 2],
    limit: Duration,
) -> bool {
    for msg in messages.into_iter().flatten() {
        if !send_within(sink, msg, limit).await {
            return false;
        }
    }
    true
}

fn is_too_big(e: &axum::Error) -> bool {
    let text = e.to_string();
    text.contains("too long") || text.contains("too big") || text.contains("Space limit")
}
