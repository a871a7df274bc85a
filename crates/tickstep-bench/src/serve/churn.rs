//! The `serve` section's churn mode (issue 24, finding 3): other players' round trips while one
//! client runs a create/stop loop, against the same players without it, on one server in one
//! run.
//!
//! The server runs with its default fair-use limits (docs/serve.md §11.3) but for the names per
//! address (every client is on loopback). `players` clients each send `schedules` every 100 ms;
//! a churn client sends `every 60 tell churn` and `stop <id>` for each one made, as fast as the
//! server answers — most are refused by the player's creation rate, which is what bounds the
//! churn's cost.
//!
//! The window is cut into slices, and the churn runs in every other one, in the order idle, busy,
//! busy, idle, idle, busy, …: the idle and busy samples are taken side by side, so a build or a
//! benchmark elsewhere on the shared machine lands in both alike rather than in one whole
//! window (one idle window then one busy window gave ratios from 0.34 to 3.3 on the same build).
//! A first slice warms the server and is not counted. Each busy slice opens with the churn
//! client's pace and creation buckets full, so it also meets the burst (docs/serve.md §11.11).
//! The ratio compares the median of each kind's slice p99s: a slice where the machine stalled
//! every client at once (at load average 5, one 30–50 ms stall set a whole window's p99) moves
//! one slice's p99, not the median; the pooled p99s are in the note.
//! Full: 200 players, ten 2 s slices; `--quick`: 50 players, twelve 1 s slices.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use super::{
    Addrs, Client, PATIENCE, Transport, connect, cpu_seconds, paced_asks, quantile,
    start_server_with, value,
};
use crate::harness::{Measure, Row, Section};

/// What the churn client did while it ran, and whether it should be running.
#[derive(Default)]
struct Churn {
    on: AtomicBool,
    over: AtomicBool,
    asked: AtomicU64,
    made: AtomicU64,
}

/// The samples of one kind of slice: round trips in milliseconds (all, and each slice's p99),
/// the server's CPU seconds.
#[derive(Default)]
struct Slices {
    rtts: Vec<f64>,
    p99s: Vec<f64>,
    server_cpu: f64,
}

/// Measures the churn mode's rows.
pub(crate) async fn measure(quick: bool) -> Section {
    let (players, slices, slice) = if quick {
        (50, 12, Duration::from_secs(1))
    } else {
        (200, 10, Duration::from_secs(2))
    };
    let server = start_server_with(&[], &["--names-per-address", "0"]);
    let pid = server.child.id();
    let scale = format!(
        "{}{players} players each sending `schedules` every 100 ms; {slices} slices of {} s, \
         idle and busy interleaved",
        if quick { "QUICK: " } else { "" },
        slice.as_secs()
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
    // The churn client runs on a thread and runtime of its own: on the measuring clients' thread
    // its loop would delay their reads, and the bench would measure itself.
    let churn = Arc::new(Churn::default());
    let churner = {
        let (addr, churn) = (server.addr.clone(), Arc::clone(&churn));
        std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the churn client")
                .block_on(churn_loop(&addr, &churn));
        })
    };
    paced_round(&mut clients, slice).await; // warm-up, not counted
    let (mut idle, mut busy) = (Slices::default(), Slices::default());
    for n in 0..slices {
        // idle, busy, busy, idle, idle, busy, …
        let churning = n % 4 == 1 || n % 4 == 2;
        churn.on.store(churning, Ordering::SeqCst);
        let cpu_before = cpu_seconds(pid);
        let mut rtts = paced_round(&mut clients, slice).await;
        let kind = if churning { &mut busy } else { &mut idle };
        kind.p99s.push(quantile(&mut rtts, 0.99));
        kind.rtts.extend(rtts);
        kind.server_cpu += cpu_seconds(pid) - cpu_before;
    }
    churn.over.store(true, Ordering::SeqCst);
    churner.join().expect("the churn client ran");
    let wal = std::fs::metadata(server.dir.path().join("serve.db-wal")).map_or(0, |m| m.len());
    let busy_time = slice * (slices / 2);
    rows(idle, busy, &churn, wal, busy_time, &scale)
}

/// One client's create/stop loop, as fast as the server answers, while `churn.on`; it waits
/// while it is off, and ends once `churn.over`.
async fn churn_loop(addr: &str, churn: &Churn) {
    let addrs = Addrs {
        tcp: addr.to_owned(),
        ws: None,
    };
    let mut churner = connect(&addrs, 0, Transport::Raw).await;
    churner.log_in("churner").await;
    while !churn.over.load(Ordering::SeqCst) {
        if !churn.on.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(2)).await;
            continue;
        }
        let reply = churner.ask("every 60 tell churn").await;
        churn.asked.fetch_add(1, Ordering::Relaxed);
        if let Some(id) = reply.strip_prefix("ok: schedule #") {
            let id = id.split(' ').next().unwrap_or_default();
            let stopped = churner.ask(&format!("stop {id}")).await;
            assert!(stopped.starts_with("ok: stopped"), "{stopped}");
            churn.made.fetch_add(1, Ordering::Relaxed);
        } else {
            assert!(
                reply.starts_with("error: too many new schedules"),
                "{reply}"
            );
        }
    }
}

/// Every client paced for `window` at once; all their round trips, in milliseconds.
async fn paced_round(clients: &mut Vec<Client>, window: Duration) -> Vec<f64> {
    let mut tasks = Vec::new();
    for (n, mut client) in std::mem::take(clients).into_iter().enumerate() {
        tasks.push(tokio::task::spawn_local(async move {
            let rtts = paced_asks(&mut client, "schedules", (window, n), false)
                .await
                .rtts;
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
    mut idle: Slices,
    mut busy: Slices,
    churn: &Churn,
    wal: u64,
    busy_time: Duration,
    scale: &str,
) -> Section {
    let (idle_p99, busy_p99) = (quantile(&mut idle.p99s, 0.5), quantile(&mut busy.p99s, 0.5));
    let seconds = busy_time.as_secs_f64();
    let (asked, made) = (
        churn.asked.load(Ordering::Relaxed),
        churn.made.load(Ordering::Relaxed),
    );
    vec![
        Row {
            name: "churn_rtt_p99",
            measure: Measure::Ratio {
                ours_ns: busy_p99 * 1e6,
                peer: "the same players without it, interleaved",
                peer_ns: idle_p99 * 1e6,
                goal_ratio: 2.0,
            },
            note: format!(
                "round-trip p99, the median of the slices', beside a create/stop loop ({asked} \
                 creates asked, {:.0}/s) vs without it (pooled p99 {:.2} vs {:.2} ms, p50 {:.2} \
                 vs {:.2} ms); {scale}",
                asked as f64 / seconds,
                quantile(&mut busy.rtts, 0.99),
                quantile(&mut idle.rtts, 0.99),
                quantile(&mut busy.rtts, 0.5),
                quantile(&mut idle.rtts, 0.5)
            ),
        },
        value(
            "churn_server_cpu",
            busy.server_cpu / seconds,
            "cores",
            f64::INFINITY,
            format!(
                "the server's CPU beside the loop, against {:.3} cores without it; {scale}",
                idle.server_cpu / seconds
            ),
        ),
        value(
            "churn_made_per_s",
            made as f64 / seconds,
            "schedules/s",
            f64::INFINITY,
            format!(
                "schedules the loop really made and stopped ({made} of {asked} asked; the rest \
                 refused by the creation rate); {scale}"
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
