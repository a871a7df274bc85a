//! The NT4 protocol as a client sees it (docs/nt4.md §2, §3): `topicsonly` announces without
//! values, exact names do not match as prefixes, unchanged values are not sent again, clock
//! sync echoes the client's time, and a client's publication is announced to others and
//! unannounced when it leaves. Real sockets on loopback, every wait bounded.

mod common;

use common::ws::{next, nt, runtime, send_text};
use tickstep_nt4::{Limits, Nt4Server, Value};
use tokio_tungstenite::tungstenite::Message;

fn start() -> Nt4Server {
    Nt4Server::start("127.0.0.1:0".parse().unwrap(), Limits::default()).unwrap()
}

fn text(m: &Message) -> Option<String> {
    match m {
        Message::Text(t) => Some(t.to_string()),
        _ => None,
    }
}

/// The value byte of a binary frame holding one small-int message `[id, ts, 2, v]`.
fn small_int(m: &Message) -> Option<u8> {
    match m {
        Message::Binary(b) if b.first() == Some(&0x94) => b.last().copied(),
        _ => None,
    }
}

#[test]
fn topicsonly_announces_without_values_until_a_value_subscription() {
    let server = start();
    runtime().block_on(async {
        let mut ws = nt(&server, "t").await;
        send_text(&mut ws, r#"[{"method":"subscribe","params":{"topics":["/a/"],"subuid":1,"options":{"prefix":true,"topicsonly":true,"periodic":0.01}}}]"#).await;
        server.set("/a/x", Value::Int(1));
        let first = next(&mut ws).await;
        assert!(text(&first).is_some_and(|t| t.contains("\"announce\"") && t.contains("/a/x")), "{first:?}");
        server.set("/a/x", Value::Int(2));
        send_text(&mut ws, r#"[{"method":"subscribe","params":{"topics":["/a/x"],"subuid":2,"options":{"periodic":0.01}}}]"#).await;
        // The first value to arrive is 2: topicsonly never sent 1.
        let value = loop {
            let m = next(&mut ws).await;
            if let Some(v) = small_int(&m) {
                break v;
            }
        };
        assert_eq!(value, 2);
    });
}

#[test]
fn an_exact_name_is_not_a_prefix() {
    let server = start();
    runtime().block_on(async {
        let mut ws = nt(&server, "e").await;
        send_text(&mut ws, r#"[{"method":"subscribe","params":{"topics":["/b"],"subuid":1,"options":{"periodic":0.01}}}]"#).await;
        server.set("/b/c", Value::Int(5));
        server.set("/b", Value::Int(6));
        let first = text(&next(&mut ws).await).expect("an announce");
        assert!(first.contains("\"name\":\"/b\"") && !first.contains("/b/c"), "{first}");
    });
}

#[test]
fn an_unchanged_value_is_not_sent_again() {
    let server = start();
    runtime().block_on(async {
        let mut ws = nt(&server, "u").await;
        send_text(&mut ws, r#"[{"method":"subscribe","params":{"topics":["/c"],"subuid":1,"options":{"periodic":0.01}}}]"#).await;
        assert!(server.set("/c", Value::Int(1)));
        let mut values = Vec::new();
        while values.is_empty() {
            values.extend(small_int(&next(&mut ws).await));
        }
        assert!(!server.set("/c", Value::Int(1)), "equal: not a change");
        assert!(server.set("/c", Value::Int(3)));
        while values.len() < 2 {
            values.extend(small_int(&next(&mut ws).await));
        }
        assert_eq!(values, [1, 3]);
    });
}

#[test]
fn clock_sync_echoes_the_clients_time_with_the_servers() {
    let server = start();
    runtime().block_on(async {
        let mut ws = nt(&server, "clock").await;
        // [-1, 0, 2 (int), 12345]
        let ping = vec![0x94, 0xff, 0x00, 0x02, 0xcd, 0x30, 0x39];
        futures_util::SinkExt::send(&mut ws, Message::Binary(ping.into()))
            .await
            .unwrap();
        let Message::Binary(reply) = next(&mut ws).await else {
            panic!("a binary reply")
        };
        assert_eq!(&reply[..2], &[0x94, 0xff], "id -1");
        assert!(
            reply.ends_with(&[0x02, 0xcd, 0x30, 0x39]),
            "the client's value back: {reply:?}"
        );
    });
}

#[test]
fn a_clients_publication_is_announced_to_others_and_unannounced_when_it_leaves() {
    let server = start();
    runtime().block_on(async {
        let mut watcher = nt(&server, "watcher").await;
        send_text(&mut watcher, r#"[{"method":"subscribe","params":{"topics":["/tickstep/input/"],"subuid":1,"options":{"prefix":true,"periodic":0.01}}}]"#).await;
        let mut dash = nt(&server, "dash").await;
        send_text(&mut dash, r#"[{"method":"publish","params":{"name":"/tickstep/input/button","pubuid":3,"type":"boolean","properties":{}}}]"#).await;
        let ack = text(&next(&mut dash).await).expect("an announce");
        assert!(ack.contains("\"pubuid\":3"), "{ack}");
        // [3, 1, 0 (boolean), true]
        futures_util::SinkExt::send(&mut dash, Message::Binary(vec![0x94, 3, 1, 0, 0xc3].into())).await.unwrap();
        let seen = text(&next(&mut watcher).await).expect("an announce");
        assert!(seen.contains("/tickstep/input/button") && !seen.contains("pubuid"), "{seen}");
        let value = next(&mut watcher).await;
        assert!(matches!(&value, Message::Binary(b) if b.last() == Some(&0xc3)), "{value:?}");
        assert_eq!(server.get("/tickstep/input/button"), Some(Value::Boolean(true)));
        drop(dash);
        let gone = text(&next(&mut watcher).await).expect("an unannounce");
        assert!(gone.contains("unannounce") && gone.contains("/tickstep/input/button"), "{gone}");
        assert_eq!(server.get("/tickstep/input/button"), None);
    });
}
