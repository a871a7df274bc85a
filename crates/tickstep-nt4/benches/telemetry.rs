//! What publishing the telemetry adds to a frame (docs/nt4.md §8): a robot of 50 running
//! commands on 20 mechanisms and 30 without requirements, 5 bound triggers, on a `SystemClock`
//! (so the run times, and with them the scheduler message, change every frame: the worst case).
//! Each bench is one frame: `run()` alone (the baseline), then `run()` + `publish()` to an NT4
//! server with 0, 1 and 10 subscribed clients reading, and to a `.wpilog` only. Compare each
//! with the baseline of the same run.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::{SinkExt, StreamExt};
use tickstep_commands::{Command, CommandScheduler, Mechanism, Trigger};
use tickstep_kernel::clock::SystemClock;
use tickstep_nt4::{Limits, LogConfig, Nt4Server, SchedulerTelemetry, WpiLog};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

fn robot() -> (CommandScheduler, Vec<Mechanism>, Vec<Trigger>) {
    let scheduler = CommandScheduler::new(SystemClock::new());
    let mechanisms: Vec<Mechanism> = (0..20)
        .map(|i| Mechanism::new(&scheduler, format!("mechanism {i}")))
        .collect();
    for (i, m) in mechanisms.iter().enumerate() {
        let c = m
            .run(|co| async move {
                loop {
                    co.yield_now().await;
                }
            })
            .with_priority(1)
            .named(format!("drive {i}"));
        scheduler.schedule(&c);
    }
    for i in 0..30 {
        let c = Command::no_requirements()
            .executing(|co| async move {
                loop {
                    co.yield_now().await;
                }
            })
            .named(format!("watch {i}"));
        scheduler.schedule(&c);
    }
    let triggers = (0..5)
        .map(|i| Trigger::new(&scheduler, move || i % 2 == 0))
        .collect();
    scheduler.run().unwrap();
    assert_eq!(scheduler.running().len(), 50);
    (scheduler, mechanisms, triggers)
}

fn telemetry_of(
    scheduler: &CommandScheduler,
    mechanisms: &[Mechanism],
    triggers: &[Trigger],
) -> SchedulerTelemetry {
    let mut t = SchedulerTelemetry::new(scheduler);
    for m in mechanisms {
        t.mechanism(m);
    }
    for (i, tr) in triggers.iter().enumerate() {
        t.trigger(&format!("trigger {i}"), tr);
    }
    t
}

/// Starts `n` clients on a thread of their own, each subscribed to `/tickstep/` every 20 ms
/// and reading everything; returns once all are connected.
fn clients(server: &Nt4Server, n: usize) -> std::thread::JoinHandle<()> {
    let url = format!("ws://{}/nt/bench", server.local_addr());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let mut tasks = Vec::new();
            for _ in 0..n {
                let mut req = url.as_str().into_client_request().unwrap();
                req.headers_mut().insert("Sec-WebSocket-Protocol", "v4.1.networktables.first.wpi.edu".parse().unwrap());
                let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
                let sub = r#"[{"method":"subscribe","params":{"topics":["/tickstep/"],"subuid":1,"options":{"prefix":true,"periodic":0.02}}}]"#;
                ws.send(Message::Text(sub.into())).await.unwrap();
                tasks.push(tokio::spawn(async move { while let Some(Ok(_)) = ws.next().await {} }));
            }
            ready_tx.send(()).unwrap();
            for t in tasks {
                let _ = t.await;
            }
        });
    });
    ready_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("clients connected");
    handle
}

/// Frames per timed chunk. Between chunks, untimed, `between` runs: the log bench drains the
/// writer there, so the writer's disk work (a robot's 50 frames a second would give it a
/// thousandth of what this loop's frame rate does) is not charged to the frame it never blocks.
const CHUNK: u64 = 256;

fn timed_frames(iters: u64, mut frame: impl FnMut(), mut between: impl FnMut()) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let n = left.min(CHUNK);
        let start = std::time::Instant::now();
        for _ in 0..n {
            frame();
        }
        total += start.elapsed();
        left -= n;
        between();
    }
    total
}

/// `iters` frames of `run()` then `publish()`, timed in chunks (see [`timed_frames`]).
fn publishing_frames(
    iters: u64,
    scheduler: &CommandScheduler,
    telemetry: &mut SchedulerTelemetry,
    between: impl FnMut(),
) -> Duration {
    timed_frames(
        iters,
        || {
            scheduler.run().unwrap();
            telemetry.publish();
        },
        between,
    )
}

fn frame_cost(c: &mut Criterion) {
    let (scheduler, mechanisms, triggers) = robot();
    let mut group = c.benchmark_group("frame of 50 commands, 20 mechanisms");
    group.bench_function("run() alone (baseline)", |b| {
        b.iter_custom(|iters| timed_frames(iters, || scheduler.run().unwrap(), || {}));
    });

    // The floor: the scheduler's own snapshot, which `publish` starts from (reused in place).
    let mut snapshot = scheduler.telemetry();
    group.bench_function("run() + telemetry_into() snapshot", |b| {
        b.iter_custom(|iters| {
            timed_frames(
                iters,
                || {
                    scheduler.run().unwrap();
                    scheduler.telemetry_into(&mut snapshot);
                    std::hint::black_box(&snapshot);
                },
                || {},
            )
        });
    });

    for n in [0usize, 1, 10] {
        let server = Nt4Server::start("127.0.0.1:0".parse().unwrap(), Limits::default()).unwrap();
        let _clients = (n > 0).then(|| clients(&server, n));
        let mut t = telemetry_of(&scheduler, &mechanisms, &triggers);
        t.serve(&server);
        group.bench_function(format!("run() + publish() to NT4, {n} clients"), |b| {
            b.iter_custom(|iters| publishing_frames(iters, &scheduler, &mut t, || {}));
        });
        drop(server); // the clients' sockets end with it
    }

    let dir = tempfile::tempdir().unwrap();
    // Room for a chunk's batches; the writer sleeps through the timed chunk (a robot's 50 frames
    // a second give it a thousandth of this loop's work) and writes between chunks, woken by the
    // untimed flush, so no batch is dropped and the frame is charged only what it does itself.
    let mut config = LogConfig::new(dir.path());
    config.queue = 2 * CHUNK as usize;
    config.flush_every = Duration::from_secs(10);
    config.max_file_bytes = 16 << 20;
    let log = WpiLog::start(config).unwrap();
    let mut t = telemetry_of(&scheduler, &mechanisms, &triggers);
    t.log(&log);
    group.bench_function("run() + publish() to .wpilog", |b| {
        b.iter_custom(|iters| publishing_frames(iters, &scheduler, &mut t, || log.flush()));
    });
    group.finish();
    log.flush();
    eprintln!(
        "wpilog: {} records dropped (queue full) during the bench",
        log.dropped()
    );
}

criterion_group!(benches, frame_cost);
criterion_main!(benches);
