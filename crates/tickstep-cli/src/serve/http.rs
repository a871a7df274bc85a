//! The HTTP side of `tickstep serve` (docs/serve.md §9, §13): one listener (`--http ADDR`, also
//! `--ws`) with a small terminal-like page at `/`, a WebSocket endpoint at `/ws`, and the
//! dashboard's routes (`tickstep::dashboard`, with serve's side in [`super::actions`]) in the
//! same router.
//!
//! The model: a WebSocket is served by the same session a TCP connection gets, so login,
//! commands, limits and backpressure are one code path. Frames become the session's input bytes
//! on the way in, and its output bytes become frames on the way out:
//!
//! * no subprotocol (plain text): TEXT frames carry the lines in, each line out is one TEXT frame;
//! * `gmcp.mudstandards.org`: BINARY frames carry the lines in, one line per frame out (ending in
//!   CRLF); TEXT frames carry GMCP messages (`Package.Message json`) both ways, read by the same
//!   GMCP code as telnet.
//!
//! A frame of text in ends its lines as a telnet stream does (CR, LF, CRLF, CR NUL), and its own
//! end ends the line it leaves open: `name`, `name\n` and `name\r\n` are one line each
//! (docs/serve.md §9.2). The telnet codec reads them ([`super::telnet::Telnet::receive_message`]),
//! so there is one rule for line ends, not one per transport.
//!
//! Costs: per connection, the session's own (no task of its own); a frame is copied once into
//! the session's input and each line once into a frame. HTTP and the WebSocket handshake are
//! axum's (hyper and tungstenite), run on the server's one thread.

use std::net::{IpAddr, SocketAddr};
use std::rc::Rc;

use axum::Router;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use super::connection::{self, Limits};
use super::server::Server;
use super::telnet::{OPT_GMCP, escape_iac};
use super::wire::{Chunk, Input, Output};

/// The mudstandards.org subprotocol the endpoint speaks besides plain text.
pub(crate) const GMCP_PROTOCOL: &str = "gmcp.mudstandards.org";
/// The smallest frame cap (docs/serve.md §9.3).
const MIN_FRAME_CAP: usize = 64 * 1024;
/// How much a socket read asks for (docs/serve.md §9.3). tungstenite zeroes this much of its
/// buffer before every read attempt, a would-block included; its 128 KiB default made that
/// zeroing 8% of the server's CPU under the bench's load. A player's line is far shorter, and a
/// longer frame is only read in more calls.
const READ_CHUNK: usize = 4 * 1024;
/// The page: a terminal-like client, no external resources.
const PAGE: &str = include_str!("client.html");
/// The page's script and style, served from files of their own so the page's policy can refuse every
/// inline script (docs/serve.md §9.7).
const PAGE_SCRIPT: &str = include_str!("client.js");
const PAGE_STYLE: &str = include_str!("client.css");
/// What the play page may load and where it may connect: its own origin only (the WebSocket too),
/// no inline script, no plugins, no framing (docs/serve.md §9.7).
const PAGE_POLICY: &str = "default-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

/// How a WebSocket's frames carry lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// TEXT frames for the lines.
    Plain,
    /// `gmcp.mudstandards.org`: BINARY frames for text, TEXT frames for GMCP.
    Gmcp,
}

/// A WebSocket handed from axum's handler to the server's thread, with the client's address
/// (the key of its per-address limits, docs/serve.md §11, §7.28).
type Upgraded = (WebSocket, Framing, IpAddr);

/// Who may act on the dashboard: the grant of `--action-token-file`, and whether the session
/// cookie is `Secure` (`--http-behind-tls`, docs/serve.md §13.8).
pub(crate) struct Access {
    pub(crate) grant: Option<tickstep::dashboard::ActionGrant>,
    pub(crate) behind_tls: bool,
}

/// Serves the page and the WebSocket endpoint on `listener` until the task is aborted.
///
/// axum's connection tasks must be `Send`, and the world is not: its handler only upgrades the
/// connection and sends the WebSocket (which is `Send`) to a task on the server's thread.
pub(crate) async fn serve(
    listener: TcpListener,
    server: Rc<Server>,
    limits: Limits,
    access: Access,
    metrics: Option<tickstep::prometheus::PrometheusHandle>,
) {
    let (upgraded, mut sockets) = mpsc::unbounded_channel::<Upgraded>();
    // Held here, for as long as the listener serves: the dashboard holds it weakly.
    let host = super::actions::ServeHost::new(&server);
    let options = tickstep::dashboard::DashboardOptions {
        title: "tickstep serve".into(),
        grant: access.grant,
        behind_tls: access.behind_tls,
        frames: server.stats.frames.live().clone(),
        ..Default::default()
    };
    let app = Router::new()
        .route("/", get(page))
        .route("/client.js", get(page_script))
        .route("/client.css", get(page_style))
        .route("/ws", get(upgrade))
        .with_state((upgraded, limits))
        .merge(tickstep::dashboard::router(
            &server.rt,
            server.handle.clone(),
            &host,
            options,
        ));
    // `/metrics` (docs/serve.md §13.9): the exporter's own router, rendered off the frame's thread
    // from the recorder's atomics.
    let app = match metrics {
        Some(handle) => app.merge(tickstep::prometheus::metrics_router(handle)),
        None => app,
    }
    .fallback(unknown_route);
    // Lines are small and interactive: without TCP_NODELAY, Nagle's algorithm and the peer's
    // delayed ACK hold a reply back some 40 ms (as on the TCP side, connection::serve).
    let listener = listener.tap_io(|socket| {
        let _ = socket.set_nodelay(true);
    });
    let http = tokio::task::spawn_local(async move {
        let app = app.into_make_service_with_connect_info::<SocketAddr>();
        if let Err(error) = axum::serve(listener, app).await {
            eprintln!("tickstep serve: the HTTP listener failed: {error}");
        }
    });
    while let Some((socket, framing, from)) = sockets.recv().await {
        tokio::task::spawn_local(play(Rc::clone(&server), socket, framing, from, limits));
    }
    http.abort();
    drop(host);
}

/// Any other path: `404` with the routes there are (docs/serve.md §13.4).
async fn unknown_route(uri: axum::http::Uri) -> Response {
    (
        StatusCode::NOT_FOUND,
        format!(
            "no route {:?}: try / (play), /ws (WebSocket), /dashboard or /metrics (docs/serve.md §13.1)\n",
            uri.path()
        ),
    )
        .into_response()
}

async fn page() -> Response {
    (
        [
            (header::CONTENT_SECURITY_POLICY, PAGE_POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        Html(PAGE),
    )
        .into_response()
}

async fn page_script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        PAGE_SCRIPT,
    )
        .into_response()
}

async fn page_style() -> Response {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        PAGE_STYLE,
    )
        .into_response()
}

/// The WebSocket handshake: refuses a page of another origin (docs/serve.md §9.4), picks the framing, and
/// passes the socket to the server's thread.
async fn upgrade(
    ws: WebSocketUpgrade,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    State((upgraded, limits)): State<(mpsc::UnboundedSender<Upgraded>, Limits)>,
) -> Response {
    let (origin, host) = (headers.get(header::ORIGIN), headers.get(header::HOST));
    let bytes = axum::http::HeaderValue::as_bytes;
    if !tickstep_host::same_origin(origin.map(bytes), host.map(bytes)) {
        super::metrics::refused_cross_origin();
        return (
            StatusCode::FORBIDDEN,
            "a WebSocket from a page of another origin is refused (docs/serve.md §9.4)\n",
        )
            .into_response();
    }
    // A frame may hold a whole line and a GMCP message; the session's own cap (docs/serve.md §2.4) is what
    // normally closes a connection, with a reason.
    let cap = limits.max_line.saturating_mul(4).max(MIN_FRAME_CAP);
    let ws = ws
        .protocols([GMCP_PROTOCOL])
        .max_message_size(cap)
        .max_frame_size(cap)
        .read_buffer_size(READ_CHUNK);
    let framing = if ws.selected_protocol().is_some() {
        Framing::Gmcp
    } else {
        Framing::Plain
    };
    ws.on_upgrade(move |socket| async move {
        let _ = upgraded.send((socket, framing, peer.ip()));
    })
}

/// Runs one session over `socket`: its frames are the session's input, and its output is cut
/// into frames.
async fn play(
    server: Rc<Server>,
    socket: WebSocket,
    framing: Framing,
    from: IpAddr,
    limits: Limits,
) {
    let (frames_out, frames_in) = socket.split();
    serve_frames(server, (frames_in, frames_out), framing, from, limits).await;
}

/// Runs one session over a WebSocket's two halves, whatever carries them (axum's socket, or a
/// test's in-memory one): the frames coming in are the session's input, and its output is cut
/// into frames going out (docs/serve.md §9.2).
pub(crate) async fn serve_frames<E, S>(
    server: Rc<Server>,
    (frames_in, frames_out): (impl Stream<Item = Result<Message, E>> + Unpin + 'static, S),
    framing: Framing,
    from: IpAddr,
    limits: Limits,
) where
    S: Sink<Message> + Unpin + 'static,
    S::Error: std::error::Error + Send + Sync + 'static,
{
    // With GMCP framing the session's codec turns GMCP on, as for a telnet client that agreed.
    let agree = (framing == Framing::Gmcp).then(|| Chunk::Bytes(vec![255, 253, OPT_GMCP]));
    let frames = futures_util::stream::unfold(frames_in, move |mut frames| async move {
        loop {
            let chunk = match frames.next().await? {
                Ok(Message::Close(_)) | Err(_) => return None,
                Ok(Message::Text(text)) if framing == Framing::Gmcp => {
                    let mut bytes = vec![255, 250, OPT_GMCP];
                    escape_iac(text.as_bytes(), &mut bytes);
                    bytes.extend_from_slice(&[255, 240]);
                    Chunk::Bytes(bytes)
                }
                Ok(Message::Text(text)) => lines_in(text.as_bytes()),
                Ok(Message::Binary(data)) => lines_in(&data),
                Ok(Message::Ping(_) | Message::Pong(_)) => continue,
            };
            return Some((chunk, frames));
        }
    });
    let input = Input::chunks(futures_util::stream::iter(agree).chain(frames));
    let output = Frames {
        sink: frames_out,
        split: OutputSplitter::default(),
        framing,
    };
    let open = server
        .metrics
        .connected(super::metrics::Transport::WebSocket);
    connection::serve_wire(server, from, input, output, limits).await;
    drop(open);
}

/// The session's output as frames on the WebSocket.
struct Frames<S> {
    sink: S,
    split: OutputSplitter,
    framing: Framing,
}

impl<S> Output for Frames<S>
where
    S: Sink<Message> + Unpin,
    S::Error: std::error::Error + Send + Sync + 'static,
{
    async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        for piece in self.split.feed(bytes) {
            let frame = match (self.framing, piece) {
                (Framing::Plain, Piece::Line(line)) => Message::text(line),
                (Framing::Plain, Piece::Gmcp(_)) => continue,
                (Framing::Gmcp, Piece::Line(line)) => Message::binary(line + "\r\n"),
                (Framing::Gmcp, Piece::Gmcp(message)) => Message::text(message),
            };
            self.sink.feed(frame).await.map_err(std::io::Error::other)?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> std::io::Result<()> {
        self.sink.flush().await.map_err(std::io::Error::other)
    }

    async fn close(&mut self) {
        let _ = self.sink.send(Message::Close(None)).await;
    }
}

/// One frame's text as a message for the session: IAC doubled (a frame is text, not telnet).
/// The codec ends its lines as a telnet stream's, and the frame's end ends the last one
/// (docs/serve.md §9.2).
fn lines_in(text: &[u8]) -> Chunk {
    let mut bytes = Vec::with_capacity(text.len());
    escape_iac(text, &mut bytes);
    Chunk::Message(bytes)
}

/// What the session wrote, cut into frames.
#[derive(Debug, PartialEq, Eq)]
enum Piece {
    Line(String),
    Gmcp(String),
}

/// Cuts the session's output (CRLF lines with telnet's own bytes between them) into lines and
/// GMCP messages; negotiation, GA and EOR are dropped, since a WebSocket has none of them.
#[derive(Default)]
struct OutputSplitter {
    state: OutState,
    buf: Vec<u8>,
    sb: Vec<u8>,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum OutState {
    #[default]
    Data,
    Iac,
    Verb,
    Sb,
    SbIac,
}

impl OutputSplitter {
    fn feed(&mut self, bytes: &[u8]) -> Vec<Piece> {
        let mut pieces = Vec::new();
        let mut rest = bytes;
        while let Some((&b, after)) = rest.split_first() {
            if self.state == OutState::Data {
                // A line's text is copied as one run, up to the next byte the states act on.
                let run = rest
                    .iter()
                    .position(|&b| matches!(b, 255 | b'\n' | b'\r'))
                    .unwrap_or(rest.len());
                if run > 0 {
                    self.buf.extend_from_slice(&rest[..run]);
                    rest = &rest[run..];
                    continue;
                }
            }
            rest = after;
            self.state = match (self.state, b) {
                (OutState::Data, 255) => OutState::Iac,
                (OutState::Data, b'\n') => {
                    let line = std::mem::take(&mut self.buf);
                    let line = String::from_utf8(line)
                        .unwrap_or_else(|bad| String::from_utf8_lossy(bad.as_bytes()).into_owned());
                    pieces.push(Piece::Line(line));
                    OutState::Data
                }
                (OutState::Data, b'\r') => OutState::Data,
                (OutState::Data, b) => {
                    self.buf.push(b);
                    OutState::Data
                }
                (OutState::Iac, 255) => {
                    self.buf.push(255);
                    OutState::Data
                }
                (OutState::Iac, 251..=254) => OutState::Verb,
                (OutState::Iac, 250) => {
                    self.sb.clear();
                    OutState::Sb
                }
                (OutState::Iac | OutState::Verb, _) => OutState::Data,
                (OutState::Sb, 255) => OutState::SbIac,
                (OutState::Sb, b) => {
                    self.sb.push(b);
                    OutState::Sb
                }
                (OutState::SbIac, 255) => {
                    self.sb.push(255);
                    OutState::Sb
                }
                (OutState::SbIac, _) => {
                    if self.sb.first() == Some(&OPT_GMCP) {
                        let text = String::from_utf8_lossy(&self.sb[1..]).into_owned();
                        pieces.push(Piece::Gmcp(text));
                    }
                    OutState::Data
                }
            };
        }
        pieces
    }
}

/// Binds the browser side's listener; the address it took is printed by the caller.
pub(crate) async fn bind(addr: SocketAddr) -> Result<TcpListener, String> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen for browsers on {addr}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sessions_output_becomes_lines_and_gmcp_messages() {
        let mut split = OutputSplitter::default();
        let mut out = vec![255, 251, 201, 255, 253, 31];
        out.extend_from_slice(b"hello: hi\r\n");
        out.extend_from_slice(&[255, 249]);
        out.extend_from_slice(b"\xff\xfa\xc9Char.Name {\"name\":\"a\"}\xff\xf0ok: wel");
        let mut pieces = split.feed(&out);
        pieces.extend(split.feed(b"come\r\n\xff\xef"));
        assert_eq!(
            pieces,
            [
                Piece::Line("hello: hi".into()),
                Piece::Gmcp("Char.Name {\"name\":\"a\"}".into()),
                Piece::Line("ok: welcome".into()),
            ]
        );
    }

    #[test]
    fn a_line_is_cut_the_same_whatever_its_bytes_and_however_they_arrive() {
        // docs/serve.md §9.2: a doubled IAC is one 255 in the line, a carriage return is
        // dropped, and a byte that is not UTF-8 reads as U+FFFD, whether the line arrives in one
        // write or a byte at a time.
        let out = b"ok: caf\xc3 \xff\xff!\r\n\r\nlast\r\n";
        let mut whole = OutputSplitter::default();
        let pieces = whole.feed(out);
        assert_eq!(
            pieces,
            [
                Piece::Line("ok: caf\u{fffd} \u{fffd}!".into()),
                Piece::Line(String::new()),
                Piece::Line("last".into()),
            ]
        );
        let mut bytewise = OutputSplitter::default();
        let one_at_a_time: Vec<Piece> = out.iter().flat_map(|b| bytewise.feed(&[*b])).collect();
        assert_eq!(one_at_a_time, pieces);
    }

    #[test]
    fn a_frame_is_a_message_of_text_and_never_telnet() {
        assert_eq!(
            lines_in(b"say hi\r\n"),
            Chunk::Message(b"say hi\r\n".to_vec())
        );
        assert_eq!(
            lines_in(b"\xff\xfb\x01"),
            Chunk::Message(b"\xff\xff\xfb\x01".to_vec())
        );
    }
}
