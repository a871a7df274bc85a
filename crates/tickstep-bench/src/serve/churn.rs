//! The `serve` section's churn mode (issue 24, finding 3): other players' round trips while one
//! client runs a create/stop loop, against the same players idle just before, on one server in
//! one run.
//!
//! The server runs with its default fair-use limits (docs/serve.md §11.3) but for the names per
//! address (every client is on loopback). `players` clients each send `schedules` every 100 ms;
//! for one window they are alone, for the next a churn client sends `every 60 tell churn` and
//! `stop <id>` for each one made, as fast as the server answers — most are refused by the
//! player's creation rate, which is what bounds the churn's cost. Full: 200 players, 10 s
//! windows; `--quick`: 50 players, 4 s windows.

use std::time::{Duration, Instant};

use super::{
    Addrs, Client, PATIENCE, Transport, connect, paced_asks, quantile, start_server_with, value,
};
use crate::harness::{Measure, Row, Section};

/// What the churn client did in its window.
#[derive(Default)]
struct Churned {
    asked: u64,
    made: u64,
}

/// Measures the churn mode's rows.
pub(crate) async fn measure(quick: bool) -> Section {
    let (players, window) = if quick {
        (50, Duration::from_secs(4))
    } else {
        (200, Duration::from_secs(10))
    };
    let server = start_server_with(&[], &["--names-per-address", "0"]);
    let scale = format!(
        "{}{players} players each sending `schedules` every 100 ms, {} s windows",
        if quick { "QUICK: " } else { "" },
        window.as_secs()
    );
    let addrs = Addrs {
        tcp: server.addr.clone(),
        ws: None,
    };
    let mut clients = Vec::new();
    for n in 0..players {
        let mut client = connect(&addrs, n, Transport::Raw).await;
        client.log_in(&format!("player{n}")).await;
        clients.push(client);
    }
    let idle = paced_round(&mut clients, window).await;
    // The churn client runs on a thread and runtime of its own: on the measuring clients' thread
    // its loop would delay their reads, and the bench would measure itself.
    let churn_addr = server.addr.clone();
    let churn = std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the churn client")
            .block_on(churn_loop(&churn_addr, window + Duration::from_millis(200)))
    });
    let busy = paced_round(&mut clients, window).await;
    let churned = churn.join().expect("the churn client ran");
    let wal = std::fs::metadata(server.dir.path().join("serve.db-wal")).map_or(0, |m| m.len());
    rows(idle, busy, &churned, wal, window, &scale)
}

/// One client's create/stop loop for `window`, as fast as the server answers.
async fn churn_loop(addr: &str, window: Duration) -> Churned {
    let addrs = Addrs {
        tcp: addr.to_owned(),
        ws: None,
    };
    let mut churner = connect(&addrs, 0, Transport::Raw).await;
    churner.log_in("churner").await;
    let end = Instant::now() + window;
    let mut done = Churned::default();
    while Instant::now() < end {
        let reply = churner.ask("every 60 tell churn").await;
        done.asked += 1;
        if let Some(id) = reply.strip_prefix("ok: schedule #") {
            let id = id.split(' ').next().unwrap_or_default();
            let stopped = churner.ask(&format!("stop {id}")).await;
            assert!(stopped.starts_with("ok: stopped"), "{stopped}");
            done.made += 1;
        } else {
            assert!(
                reply.starts_with("error: too many new schedules"),
                "{reply}"
            );
        }
    }
    done
}

/// Every client paced for `window` at once; all their round trips, in milliseconds.
async fn paced_round(clients: &mut Vec<Client>, window: Duration) -> Vec<f64> {
    let mut tasks = Vec::new();
    for (n, mut client) in std::mem::take(clients).into_iter().enumerate() {
        tasks.push(tokio::task::spawn_local(async move {
            let rtts = paced_asks(&mut client, "schedules", window, n).await;
            (client, rtts)
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        let (client, rtts) = tokio::time::timeout(PATIENCE, task)
            .await
            .expect("a client's window ends")
            .expect("a client ran");
        clients.push(client);
        all.extend(rtts);
    }
    all
}

fn rows(
    mut idle: Vec<f64>,
    mut busy: Vec<f64>,
    churned: &Churned,
    wal: u64,
    window: Duration,
    scale: &str,
) -> Section {
    let (idle_p99, busy_p99) = (quantile(&mut idle, 0.99), quantile(&mut busy, 0.99));
    let seconds = window.as_secs_f64();
    vec![
        Row {
            name: "churn_rtt_p99",
            measure: Measure::Ratio {
                ours_ns: busy_p99 * 1e6,
                peer: "the same players idle, same run",
                peer_ns: idle_p99 * 1e6,
                goal_ratio: 2.0,
            },
            note: format!(
                "round-trip p99 beside a create/stop loop ({} creates asked, {:.0}/s) vs idle \
                 (p50 {:.2} vs {:.2} ms); {scale}",
                churned.asked,
                churned.asked as f64 / seconds,
                quantile(&mut busy, 0.5),
                quantile(&mut idle, 0.5)
            ),
        },
        value(
            "churn_made_per_s",
            churned.made as f64 / seconds,
            "schedules/s",
            f64::INFINITY,
            format!(
                "schedules the loop really made and stopped ({} of {} asked; the rest refused \
                 by the creation rate); {scale}",
                churned.made, churned.asked
            ),
        ),
        value(
            "churn_wal",
            wal as f64 / 1e6,
            "MB",
            64.0,
            format!("the store's WAL file after the churn; {scale}"),
        ),
    ]
}
