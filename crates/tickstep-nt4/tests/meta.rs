//! The server's meta topics and keepalive as a raw client sees them (docs/nt4.md §2.5, §4.4):
//! `$clients` lists who is connected and is hidden from a subscription to everything,
//! `$clientsub$<client>` and `$clientpub$<client>` follow a client's requests, `$serverpub` lists
//! the robot's topics, and a client that does not answer pings is dropped while one that does
//! stays. Real sockets on loopback, every wait bounded; nothing asserts a duration.

mod common;

use std::time::Duration;

use common::ws::{LIMIT, next, nt, runtime, send_text};
use futures_util::StreamExt;
use tickstep_nt4::{Limits, Nt4Server, Value};
use tokio_tungstenite::tungstenite::Message;

fn start(limits: Limits) -> Nt4Server {
    Nt4Server::start("127.0.0.1:0".parse().unwrap(), limits).unwrap()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// Reads until a binary frame holding `needle` (and not `absent`) arrives; returns every text
/// frame seen on the way.
async fn until_binary(ws: &mut common::ws::Ws, needle: &str, absent: Option<&str>) -> Vec<String> {
    let mut texts = Vec::new();
    loop {
        match next(ws).await {
            Message::Binary(b)
                if contains(&b, needle) && absent.is_none_or(|a| !contains(&b, a)) =>
            {
                return texts;
            }
            Message::Text(t) => texts.push(t.to_string()),
            _ => {}
        }
    }
}

#[test]
fn clients_and_their_requests_are_published_as_meta_topics() {
    let server = start(Limits::default());
    server.set("/tickstep/answer", Value::Int(42));
    runtime().block_on(async {
        let mut watcher = nt(&server, "watcher").await;
        send_text(&mut watcher, r#"[{"method":"subscribe","params":{"topics":["$clients","$serverpub","$clientsub$dash","$clientpub$dash"],"subuid":7,"options":{"periodic":0.01}}}]"#).await;
        let texts = until_binary(&mut watcher, "/tickstep/answer", None).await;
        let announced = texts.join("");
        assert!(announced.contains(r#""name":"$clients""#), "{announced}");
        assert!(announced.contains(r#""type":"msgpack""#), "{announced}");

        // A dashboard subscribed to everything is not sent the server's bookkeeping.
        let mut dash = nt(&server, "dash").await;
        send_text(&mut dash, r#"[{"method":"subscribe","params":{"topics":[""],"subuid":1,"options":{"prefix":true,"periodic":0.01}}},{"method":"publish","params":{"name":"/tickstep/input/button","pubuid":3,"type":"boolean","properties":{}}}]"#).await;
        // $clients names it, $clientpub$dash its publisher, $clientsub$dash its subscription's
        // options (one sweep may carry all three in one frame).
        let mut seen = Vec::new();
        while !["dash", "/tickstep/input/button", "topicsonly"]
            .iter()
            .all(|n| contains(&seen, n))
        {
            if let Message::Binary(b) = next(&mut watcher).await {
                seen.extend_from_slice(&b);
            }
        }
        let mut dash_texts = Vec::new();
        loop {
            if let Message::Text(t) = next(&mut dash).await {
                dash_texts.push(t.to_string());
                if t.contains("/tickstep/answer") {
                    break;
                }
            }
        }
        let dash_saw = dash_texts.join("");
        assert!(!dash_saw.contains("$clients"), "hidden topics were announced: {dash_saw}");

        // It leaves: $clients no longer names it, and its own meta topics are gone.
        drop(dash);
        let texts = until_binary(&mut watcher, "watcher", Some("dash")).await;
        let mut gone = texts.join("");
        let deadline = tokio::time::Instant::now() + LIMIT;
        while !gone.contains("$clientpub$dash") && tokio::time::Instant::now() < deadline {
            if let Message::Text(t) = next(&mut watcher).await {
                gone.push_str(&t);
            }
        }
        assert!(gone.contains("unannounce") && gone.contains("$clientpub$dash"), "{gone}");
    });
}

#[test]
fn a_client_that_does_not_answer_pings_is_dropped_and_one_that_does_stays() {
    let mut limits = Limits::default();
    limits.ping_interval = Duration::from_millis(20);
    limits.ping_timeout = Duration::from_millis(100);
    let server = start(limits);
    runtime().block_on(async {
        // This one reads, so its WebSocket library answers each ping with a pong.
        let mut answering = nt(&server, "answering").await;
        let reader = tokio::spawn(async move { while let Some(Ok(_)) = answering.next().await {} });
        // This one never reads: its pings go unanswered. It sends nothing and subscribes to
        // nothing, so pings are all the server sends it.
        let silent = nt(&server, "silent").await;
        let deadline = tokio::time::Instant::now() + LIMIT;
        while server.client_count() < 2 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(server.client_count(), 2);
        while server.client_count() > 1 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(server.client_count(), 1, "the silent client was dropped");
        let clients = server.get("$clients").expect("$clients");
        let Value::Raw(bytes, kind) = clients else {
            panic!("$clients is {clients:?}")
        };
        assert_eq!(kind, "msgpack");
        assert!(contains(&bytes, "answering") && !contains(&bytes, "silent"));
        assert!(
            !reader.is_finished(),
            "the answering client is still connected"
        );
        drop(silent);
        reader.abort();
    });
}
