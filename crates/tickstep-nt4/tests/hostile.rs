//! Hostile clients (docs/nt4.md §3.2, §3.4, §4): bad JSON, a huge frame, an unknown type, a
//! `MessagePack` map, a subscription flood, a message flood, a client that never reads, a
//! handshake without the subprotocol. Each is closed with a reason naming the rule (or
//! refused), the server stays up, another client is served, and the frame's `set` carries on.
//! Real sockets on loopback: every wait is bounded, and nothing asserts a duration.

use std::time::Duration;

mod common;

use common::ws::{LIMIT, close_frame, connect, nt, runtime};
use futures_util::{SinkExt, StreamExt};
use tickstep_nt4::{Limits, Nt4Server, Value};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

/// A well-behaved client subscribes to `/probe` and must see the value the frame sets.
async fn still_served(server: &Nt4Server, value: i64) {
    let mut ws = nt(server, "good").await;
    let sub = r#"[{"method":"subscribe","params":{"topics":["/probe"],"subuid":1,"options":{"periodic":0.01}}}]"#;
    ws.send(Message::Text(sub.into())).await.unwrap();
    assert!(
        server.set("/probe", Value::Int(value)) || server.get("/probe") == Some(Value::Int(value))
    );
    let seen = async {
        while let Some(Ok(msg)) = ws.next().await {
            // The value arrives as [id, timestamp, 2 (int), value]; its last byte is the fixint.
            if let Message::Binary(b) = msg
                && b.last() == Some(&u8::try_from(value).unwrap())
            {
                return;
            }
        }
        panic!("the good client's socket ended");
    };
    tokio::time::timeout(LIMIT, seen)
        .await
        .expect("the good client was not served");
}

fn start() -> Nt4Server {
    Nt4Server::start("127.0.0.1:0".parse().unwrap(), Limits::default()).unwrap()
}

#[test]
fn bad_json_closes_with_1007_and_the_parse_error() {
    let server = start();
    runtime().block_on(async {
        let mut ws = nt(&server, "bad").await;
        ws.send(Message::Text("[{\"method\": ".into()))
            .await
            .unwrap();
        let frame = close_frame(&mut ws).await.expect("a close frame");
        assert_eq!(u16::from(frame.code), 1007);
        assert!(
            frame.reason.contains("bad JSON") && frame.reason.contains("docs/nt4.md §3.2"),
            "{}",
            frame.reason
        );
        still_served(&server, 1).await;
    });
}

#[test]
fn a_frame_over_the_limit_closes_with_1009() {
    let server = start();
    runtime().block_on(async {
        let mut ws = nt(&server, "huge").await;
        let huge = vec![0xc0u8; (1 << 20) + 1];
        let _ = ws.send(Message::Binary(huge.into())).await;
        if let Some(frame) = close_frame(&mut ws).await {
            assert_eq!(u16::from(frame.code), 1009, "{}", frame.reason);
        }
        still_served(&server, 2).await;
    });
}

#[test]
fn an_unknown_type_is_binary_and_a_messagepack_map_closes() {
    let server = start();
    runtime().block_on(async {
        let mut ws = nt(&server, "odd").await;
        let publish = r#"[{"method":"publish","params":{"name":"/odd","pubuid":7,"type":"bogus","properties":{}}}]"#;
        ws.send(Message::Text(publish.into())).await.unwrap();
        // The announce names the type as asked; values of it travel as binary (type 5).
        let announce = tokio::time::timeout(LIMIT, async {
            loop {
                if let Some(Ok(Message::Text(t))) = ws.next().await {
                    return t.to_string();
                }
            }
        })
        .await
        .unwrap();
        assert!(announce.contains("\"type\":\"bogus\"") && announce.contains("\"pubuid\":7"), "{announce}");
        // [7, 5, 5, bin(0xab)] is kept; [7, 5, 2, 3] (not binary) is ignored.
        ws.send(Message::Binary(vec![0x94, 7, 5, 5, 0xc4, 1, 0xab, 0x94, 7, 6, 2, 3].into())).await.unwrap();
        // The binary value was kept; the integer one was not. Read before the close: once the
        // client is closed its topic may go at any moment (it is the only publisher).
        let kept = Value::Raw(vec![0xab], "bogus".into());
        tokio::time::timeout(LIMIT, async {
            while server.get("/odd") != Some(kept.clone()) {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the binary value was kept");
        // A map is not NT4's MessagePack subset: closed.
        ws.send(Message::Binary(vec![0x81, 0x01, 0x02].into())).await.unwrap();
        let frame = close_frame(&mut ws).await.expect("a close frame");
        assert_eq!(u16::from(frame.code), 1007);
        assert!(frame.reason.contains("map"), "{}", frame.reason);
        let gone = tokio::time::timeout(LIMIT, async {
            // The server removes the client just after its close frame; until its topic goes
            // with it, the topic holds the binary value, never the integer.
            while server.client_count() > 0 {
                let now = server.get("/odd");
                assert!(now.is_none() || now == Some(kept.clone()), "{now:?}");
                tokio::task::yield_now().await;
            }
        });
        gone.await.expect("the client was never removed");
        assert_eq!(server.get("/odd"), None, "its only publisher left, so the topic is gone");
        still_served(&server, 3).await;
    });
}

#[test]
fn a_subscription_flood_closes_with_1008_naming_the_limit() {
    let server = start();
    runtime().block_on(async {
        let mut ws = nt(&server, "flood").await;
        let subs: Vec<String> = (0..300)
            .map(|i| {
                format!(r#"{{"method":"subscribe","params":{{"topics":["/t{i}"],"subuid":{i}}}}}"#)
            })
            .collect();
        ws.send(Message::Text(format!("[{}]", subs.join(",")).into()))
            .await
            .unwrap();
        let frame = close_frame(&mut ws).await.expect("a close frame");
        assert_eq!(u16::from(frame.code), 1008);
        assert!(
            frame.reason.contains("more than 256 subscriptions"),
            "{}",
            frame.reason
        );
        still_served(&server, 4).await;
    });
}

#[test]
fn a_message_flood_closes_with_1008() {
    let server = start();
    runtime().block_on(async {
        let mut ws = nt(&server, "chatty").await;
        for _ in 0..3_000 {
            if ws.send(Message::Text("[]".into())).await.is_err() {
                break;
            }
        }
        let frame = close_frame(&mut ws).await.expect("a close frame");
        assert_eq!(u16::from(frame.code), 1008);
        assert!(
            frame.reason.contains("messages a second"),
            "{}",
            frame.reason
        );
        still_served(&server, 5).await;
    });
}

#[test]
fn a_client_that_never_reads_is_dropped_and_the_frame_carries_on() {
    let mut limits = Limits::default();
    limits.max_pending_bytes = 256 << 10;
    limits.send_timeout = Duration::from_millis(500);
    let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), limits).unwrap();
    runtime().block_on(async {
        let mut ws = nt(&server, "deaf").await;
        let sub = r#"[{"method":"subscribe","params":{"topics":["/big"],"subuid":1,"options":{"all":true,"periodic":0.005}}}]"#;
        ws.send(Message::Text(sub.into())).await.unwrap();
        ws.flush().await.unwrap();
        // The frame keeps publishing 64 KiB values; the client reads nothing.
        let mut frames = 0u32;
        while server.client_count() > 0 {
            assert!(frames < 100_000, "the deaf client was never dropped");
            let value = Value::Raw(vec![(frames % 251) as u8; 64 << 10], "raw".into());
            assert!(server.set("/big", value), "the frame's set was refused");
            frames += 1;
            std::thread::yield_now(); // the server's own thread runs meanwhile
        }
        drop(ws);
        still_served(&server, 6).await;
    });
}

#[test]
fn a_handshake_without_the_subprotocol_is_refused() {
    let server = start();
    runtime().block_on(async {
        let err = connect(&server, "plain", None).await.expect_err("refused");
        match err {
            WsError::Http(resp) => assert_eq!(resp.status().as_u16(), 400),
            other => panic!("{other:?}"),
        }
        still_served(&server, 7).await;
    });
}

#[test]
fn a_duplicate_name_connects_under_another() {
    let server = start();
    runtime().block_on(async {
        let _a = nt(&server, "dash").await;
        let _b = nt(&server, "dash").await;
        tokio::time::timeout(LIMIT, async {
            while server.client_count() < 2 {
                tokio::task::yield_now().await;
            }
        })
        .await
        .unwrap();
    });
}

#[test]
fn a_client_cannot_publish_the_robots_telemetry() {
    let server = start();
    server.set("/tickstep/scheduler/cycle", Value::Int(7));
    runtime().block_on(async {
        let mut ws = nt(&server, "spoof").await;
        let publish = r#"[{"method":"publish","params":{"name":"/tickstep/scheduler/cycle","pubuid":1,"type":"int","properties":{}}}]"#;
        ws.send(Message::Text(publish.into())).await.unwrap();
        let frame = close_frame(&mut ws).await.expect("a close frame");
        assert_eq!(u16::from(frame.code), 1008);
        assert!(frame.reason.contains("is the robot's"), "{}", frame.reason);
        assert_eq!(server.get("/tickstep/scheduler/cycle"), Some(Value::Int(7)));
        still_served(&server, 8).await;
    });
}

#[test]
fn a_peer_outside_the_allow_list_is_refused_with_403() {
    let mut limits = Limits::default();
    limits.allowed_peers = vec!["192.0.2.1".parse().unwrap()]; // TEST-NET-1, never contacted: we come from 127.0.0.1
    let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), limits).unwrap();
    runtime().block_on(async {
        match connect(
            &server,
            "stranger",
            Some("v4.1.networktables.first.wpi.edu"),
        )
        .await
        {
            Err(WsError::Http(resp)) => assert_eq!(resp.status().as_u16(), 403),
            other => panic!("not refused: {other:?}"),
        }
    });
    let mut limits = Limits::default();
    limits.allowed_peers = vec!["127.0.0.1".parse().unwrap()];
    let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), limits).unwrap();
    runtime().block_on(still_served(&server, 9));
}
