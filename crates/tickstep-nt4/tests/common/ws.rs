//! A raw NT4 WebSocket client for tests that speak the protocol by hand.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tickstep_nt4::Nt4Server;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

pub type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Every wait on the server is bounded by this (real sockets on loopback).
pub const LIMIT: Duration = Duration::from_secs(20);

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

pub async fn connect(
    server: &Nt4Server,
    name: &str,
    protocol: Option<&str>,
) -> Result<Ws, WsError> {
    let mut req = format!("ws://{}/nt/{name}", server.local_addr())
        .into_client_request()
        .unwrap();
    if let Some(p) = protocol {
        req.headers_mut()
            .insert("Sec-WebSocket-Protocol", p.parse().unwrap());
    }
    tokio_tungstenite::connect_async(req)
        .await
        .map(|(ws, _)| ws)
}

pub async fn nt(server: &Nt4Server, name: &str) -> Ws {
    connect(server, name, Some("v4.1.networktables.first.wpi.edu"))
        .await
        .expect("connect")
}

pub async fn send_text(ws: &mut Ws, text: &str) {
    ws.send(Message::Text(text.into())).await.unwrap();
}

/// The next text or binary message (bounded by [`LIMIT`]).
pub async fn next(ws: &mut Ws) -> Message {
    tokio::time::timeout(LIMIT, async {
        loop {
            match ws.next().await {
                Some(Ok(m @ (Message::Text(_) | Message::Binary(_) | Message::Close(_)))) => {
                    return m;
                }
                Some(Ok(_)) => {}
                other => panic!("the socket ended: {other:?}"),
            }
        }
    })
    .await
    .expect("nothing arrived in time")
}

/// Reads until the server closes; returns its close frame (None when the socket just ended).
pub async fn close_frame(ws: &mut Ws) -> Option<CloseFrame> {
    let read = async {
        while let Some(msg) = ws.next().await {
            match msg {
                Ok(Message::Close(frame)) => return frame,
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        None
    };
    tokio::time::timeout(LIMIT, read)
        .await
        .expect("the server never closed the client")
}
