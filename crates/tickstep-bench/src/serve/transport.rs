//! The bench's clients on each transport the server speaks (docs/serve.md §8, §9): raw lines as
//! `nc` sends them, a telnet client that negotiates as a MUD client does, and a WebSocket client
//! with plain text frames. One `ask` is one command sent and its reply read, on any of them.

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

use super::{BENCH_PASSWORD, PATIENCE};

/// How a bench client reaches the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Transport {
    /// Lines over TCP, ignoring the server's telnet offers (`nc`).
    Raw,
    /// Telnet over TCP: agrees to GMCP and EOR, reports a 200×50 window, declines the rest.
    Telnet,
    /// A WebSocket with plain text frames, one line each.
    WebSocket,
}

impl Transport {
    /// All three, in the order the bench deals them out to clients.
    pub(super) const ALL: [Transport; 3] =
        [Transport::Raw, Transport::Telnet, Transport::WebSocket];

    pub(super) fn name(self) -> &'static str {
        match self {
            Transport::Raw => "raw",
            Transport::Telnet => "telnet",
            Transport::WebSocket => "websocket",
        }
    }
}

/// Where a server listens: its TCP address, and its browser side's, if it has one.
pub(super) struct Addrs {
    pub(super) tcp: String,
    pub(super) ws: Option<String>,
}

enum Conn {
    Tcp {
        read: BufReader<OwnedReadHalf>,
        write: OwnedWriteHalf,
    },
    Ws(Box<WebSocketStream<TcpStream>>),
}

/// One connected client.
pub(super) struct Client {
    conn: Conn,
    buf: Vec<u8>,
    /// Lines the server sent by itself (`[`…), counted as they pass.
    pub(super) unsolicited: u64,
}

/// What a telnet client answers to the server's offers at connect: GMCP and EOR agreed, the
/// window size sent, terminal type and character set declined.
const TELNET_ANSWERS: &[u8] = &[
    255, 253, 201, // DO GMCP
    255, 253, 25, // DO EOR
    255, 251, 31, // WILL NAWS
    // SB NAWS 4000 50 SE: wide enough that no reply wraps (a piece of `info`'s field line would
    // read as a reply), narrow enough that the server measures every line against it.
    255, 250, 31, 15, 160, 0, 50, 255, 240, 255, 252, 24, // WONT TTYPE
    255, 252, 42, // WONT CHARSET
];

impl Client {
    /// Connects over `transport` and reads the greeting; `None` if it does not come within
    /// `patience` (the caller retries).
    pub(super) async fn try_connect(
        addrs: &Addrs,
        transport: Transport,
        patience: std::time::Duration,
    ) -> Option<Client> {
        let mut client = match transport {
            Transport::Raw | Transport::Telnet => {
                let stream = TcpStream::connect(&addrs.tcp).await.expect("connect");
                stream.set_nodelay(true).expect("nodelay");
                let (read, write) = stream.into_split();
                Client::over(Conn::Tcp {
                    read: BufReader::new(read),
                    write,
                })
            }
            Transport::WebSocket => {
                let addr = addrs.ws.as_deref().expect("the server serves WebSockets");
                let stream = TcpStream::connect(addr).await.expect("connect");
                stream.set_nodelay(true).expect("nodelay");
                let (ws, _) = tokio_tungstenite::client_async(format!("ws://{addr}/ws"), stream)
                    .await
                    .expect("the WebSocket handshake");
                Client::over(Conn::Ws(Box::new(ws)))
            }
        };
        tokio::time::timeout(patience, client.line()).await.ok()?;
        if transport == Transport::Telnet {
            client.send_raw(TELNET_ANSWERS).await;
        }
        Some(client)
    }

    fn over(conn: Conn) -> Client {
        Client {
            conn,
            buf: Vec::new(),
            unsolicited: 0,
        }
    }

    async fn send_raw(&mut self, bytes: &[u8]) {
        if let Conn::Tcp { write, .. } = &mut self.conn {
            write.write_all(bytes).await.expect("write");
        }
    }

    /// The next line, telnet's own bytes taken out.
    async fn line(&mut self) -> String {
        match &mut self.conn {
            Conn::Tcp { read, .. } => {
                self.buf.clear();
                let n = read.read_until(b'\n', &mut self.buf).await.expect("read");
                assert!(n > 0, "the server keeps the connection");
                without_telnet(&self.buf)
            }
            Conn::Ws(ws) => loop {
                match ws.next().await.expect("the server keeps the connection") {
                    Ok(Message::Text(text)) => return text.as_str().to_owned(),
                    Ok(_) => {}
                    Err(error) => panic!("the WebSocket failed: {error}"),
                }
            },
        }
    }

    /// Logs in as `name` (made the first time), with the bench's one password
    /// (docs/serve.md §10).
    pub(super) async fn log_in(&mut self, name: &str) {
        let prompt = self.ask(name).await;
        assert!(prompt.starts_with("password: "), "{prompt}");
        let welcome = self.ask(BENCH_PASSWORD).await;
        assert!(welcome.starts_with("ok: welcome"), "{welcome}");
    }

    /// Sends `line` and returns the first reply that is not a line the server sent by itself (nor
    /// an indented line left over from an earlier reply).
    pub(super) async fn ask(&mut self, line: &str) -> String {
        match &mut self.conn {
            Conn::Tcp { write, .. } => write
                .write_all(format!("{line}\n").as_bytes())
                .await
                .expect("write"),
            Conn::Ws(ws) => ws.send(Message::text(line)).await.expect("send"),
        }
        loop {
            let next = tokio::time::timeout(PATIENCE, self.line())
                .await
                .expect("a reply in time");
            if next.starts_with('[') {
                self.unsolicited += 1;
            } else if next.starts_with("  ") {
                // The rest of an earlier reply (`info`'s fields, a listing's rows).
            } else {
                return next;
            }
        }
    }
}

/// A line as text: IAC commands and sub-negotiations dropped, `IAC IAC` a 255, CRLF taken off.
fn without_telnet(bytes: &[u8]) -> String {
    let mut kept = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1).copied()) {
            (255, Some(255)) => {
                kept.push(255);
                i += 2;
            }
            (255, Some(250)) => {
                // To the IAC SE that ends the sub-negotiation.
                let end = bytes[i..]
                    .windows(2)
                    .position(|w| w == [255, 240])
                    .map_or(bytes.len(), |p| i + p + 2);
                i = end;
            }
            (255, Some(251..=254)) => i += 3,
            (255, _) => i += 2,
            (b, _) => {
                kept.push(b);
                i += 1;
            }
        }
    }
    while matches!(kept.last(), Some(b'\n' | b'\r')) {
        kept.pop();
    }
    String::from_utf8_lossy(&kept).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn telnet_is_taken_out_of_a_line() {
        assert_eq!(
            without_telnet(b"\xff\xef\xff\xfa\xc9Char.Name {}\xff\xf0ok: hi\r\n"),
            "ok: hi"
        );
        assert_eq!(
            without_telnet(b"\xff\xfb\xc9\xff\xfd\x1fhello\r\n"),
            "hello"
        );
    }
}
