//! The `serve` section: `tickstep serve`, the real binary, driven over loopback by many
//! concurrent line-protocol clients while many durable schedules fire.
//!
//! | measure | what | goal |
//! |---|---|---|
//! | `rtt_p50`, `rtt_p99` | command round trip (`info <own id>` sent → its `ok:` line read), over every client | p99 under one 60 fps frame, 16.7 ms |
//! | `ping_to_server_p99`, `ping_back_p99` | each `ping` (every tenth command of each client is followed by one) split at the server's clock in its reply (docs/serve.md §3.10): sent → answered (the kernel and the server's runtime) and answered → read (the kernel and the bench's runtime) | informational: whose is the tail |
//! | `slow_ping_back_share` | of the pings whose round trip took more than one frame, the share of their time spent after the server answered (the kernel and the clients' side) | informational: how much of the tail is the client's |
//! | `client_lag_max` | the longest the clients' own runtime went without polling: a task on it asks to wake every millisecond and records how late it wakes; the note has the p99 and the time lost in lags over a frame | informational: the client's own stalls |
//! | `rtt_vs_echo` | `rtt_p50` against a bare tokio line-echo server on the same machine, same clients, same pacing, in the same run | ratio ≤ 3 |
//! | `rtt_p99_raw` | round-trip p99 of the third of the clients on raw lines (`nc`-like) | under one frame |
//! | `rtt_p99_telnet_vs_raw` | round-trip p99 of the third on telnet (negotiating GMCP, EOR, NAWS; every reply followed by IAC EOR) against the raw third, same server, same run | ratio ≤ 1.1 |
//! | `rtt_p99_ws_vs_raw` | the same for the third on a WebSocket (`--ws`, plain text frames) | ratio ≤ 1.5 |
//! | `step_p50`, `step_p99` | the server's own frame step times (heartbeat time of every frame run, from the wizard's `stats`) | under the frame period |
//! | `overruns` | frames whose step exceeded the frame period while the network was busy | 0 |
//! | `step_cpu_p99` | the server thread's CPU time inside each frame's step (its own work, without the time the OS gave other processes mid-frame) | under the frame period |
//! | `overruns_cpu` | frames whose step's CPU time exceeded the frame period: the server's own work overran | 0 |
//! | `firings_per_s` | schedule firings the server started per second during the window (each one a kernel task and a line to its owner), against the firings due in the window, counted from when each schedule was really made | informational |
//! | `server_cpu`, `clients_cpu` | CPU the server process, and the bench's clients, used during the window (cores; 2 is the whole machine) | informational |
//! | `rss` | the server's resident memory at the end | ≤ 512 MB |
//! | `churn_rtt_p99` | other players' round-trip p99 while one client runs a create/stop loop as fast as the server answers it, against the same players' p99 without it, in interleaved slices (the median of each kind's slice p99s), on a server of its own with the default fair-use limits (docs/serve.md §11.3, §11.12), in the same run | ratio ≤ 2 |
//! | `churn_server_cpu` | the server's CPU beside the loop (cores), with its CPU without it in the note | informational |
//! | `churn_made_per_s`, `churn_wal` | schedules the loop really made per second (the rest refused by the rate limit), and the store's WAL at the end | informational; WAL ≤ 64 MB |
//! | `watched_cpu_per_frame` | the server process's CPU time per frame with `/metrics` on and 20 dashboard viewers reading `/dashboard/events`, against the same load on a server without `/metrics` (`--no-metrics`) and no viewer, in the same run (docs/serve.md §14.6) | ratio ≤ 1.03 |
//! | `watched_cpu_per_work` | the same CPU per piece of work (a round trip answered or a firing started): the clients wait for each reply before the next, so a run answered faster does more work in the same frames | ratio ≤ 1.03 |
//! | `watched_overruns` | frames over the period (wall clock plus CPU) with `/metrics` and the viewers | 0 |
//! | `watched_rtt_p99` | every client's round-trip p99 with `/metrics` and the viewers, against the unwatched run | ratio ≤ 1.1 |
//!
//! The main run is the watched one: every row above but the `watched_` ones and `churn_` ones
//! is measured with `/metrics` on and the viewers attached; the unwatched run repeats the same
//! load on a fresh server right after it.
//!
//! Clients are dealt out to the three transports in turn (client `n` on `n % 3`); the
//! transports' own rows compare them under one load.
//!
//! Full: 1,000 connections, 100 schedules each (100,000 live, `every 20–40 s tell …`, intervals
//! spread so the first firings fall evenly over the window: 5,000 firings/s due on average), each
//! client sending one command every 100 ms for a 20 s window that opens when the first schedules
//! come due. Populating takes seconds, so the schedules made last come due after the window
//! opens and fewer than 5,000 a second are due in its first seconds: the note gives the rate
//! really due. `--quick`: 100 connections, 10,000 schedules, a 5 s window — and every note says so.
//! `TICKSTEP_BENCH_SERVE=connections,each,seconds` tries other sizes. The store
//! is on tmpfs (`/dev/shm` when present): creation is fsync'd, and the bench measures the server,
//! not the disk. The server binary is `target/<profile>/tickstep`, built first if missing.

mod churn;

use std::rc::Rc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::harness::{Opts, Section};

mod report;
mod server_process;
mod transport;
mod viewers;

pub(crate) use report::{quantile, value};
use report::{rows, watched_rows};
pub(crate) use server_process::{BENCH_PASSWORD, ServerProcess, cpu_seconds, start_server_with};
use server_process::{rss_mb, start_server};
use transport::{Addrs, Client, Transport};

/// One frame at 60 fps, in milliseconds: the round-trip goal.
const FRAME_MS: f64 = 1000.0 / 60.0;
/// Each client's command pacing.
const PACE: Duration = Duration::from_millis(100);
/// Bound on any single wait for a reply or for the server to start.
pub(crate) const PATIENCE: Duration = Duration::from_secs(60);
/// Dashboard viewers on the live view's events during the main run (docs/serve.md §14.6).
const VIEWERS: usize = 20;

/// How the server under load is watched: with `/metrics` and live viewers, or neither.
#[derive(Clone, Copy)]
struct Watched {
    metrics: bool,
    viewers: usize,
}

struct Load {
    connections: usize,
    schedules_each: usize,
    /// The measurement window, and the interval of every schedule: each fires about once in it.
    window: Duration,
}

pub(crate) fn run(opts: &Opts) -> Section {
    let load = if opts.quick {
        Load {
            connections: 100,
            schedules_each: 100,
            window: Duration::from_secs(5),
        }
    } else {
        Load {
            connections: 1_000,
            schedules_each: 100,
            window: Duration::from_secs(20),
        }
    };
    // A scale of one's own, for trying the section at other sizes: "connections,each,seconds".
    let load = std::env::var("TICKSTEP_BENCH_SERVE")
        .ok()
        .and_then(|v| {
            let n: Vec<u64> = v.split(',').filter_map(|x| x.parse().ok()).collect();
            (n.len() == 3).then(|| Load {
                connections: n[0] as usize,
                schedules_each: n[1] as usize,
                window: Duration::from_secs(n[2]),
            })
        })
        .unwrap_or(load);
    let scale = format!(
        "{}{} connections, {} schedules, {} s window",
        if opts.quick { "QUICK: " } else { "" },
        load.connections,
        load.connections * load.schedules_each,
        load.window.as_secs()
    );
    let threads = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime for the clients");
    let local = tokio::task::LocalSet::new();
    eprintln!(
        "serve: populating the server, then measuring with /metrics and {VIEWERS} dashboard viewers ({scale})"
    );
    let watched = Watched {
        metrics: true,
        viewers: VIEWERS,
    };
    let ours = local.block_on(&threads, measure_server(&load, watched));
    // Right after the watched run, so the machine's other load drifts as little as it can
    // between the two.
    eprintln!("serve: the same load again, without /metrics and with no viewer");
    let unwatched = Watched {
        metrics: false,
        viewers: 0,
    };
    let bare = local.block_on(&threads, measure_server(&load, unwatched));
    eprintln!("serve: the same clients against a bare echo server");
    let echo = local.block_on(&threads, measure_echo(&load));
    let mut section = rows(&ours, &echo, &scale);
    section.extend(watched_rows(&ours, &bare, &scale));
    eprintln!("serve: other players idle, then beside a create/stop loop");
    section.extend(local.block_on(&threads, churn::measure(opts.quick)));
    section
}

/// What a run against our server measured.
struct Measured {
    rtt_ms: Vec<f64>,
    /// Each `ping`'s round trip split at the server's clock: (to the server, back), ms.
    split: Vec<(f64, f64)>,
    /// How late each of the clients' runtime's millisecond wake-ups came in the window, ms.
    client_lag_ms: Vec<f64>,
    /// The machine's one-minute load average at the window's end.
    load_average: f64,
    /// The round trips of each [`Transport`], in [`Transport::ALL`]'s order.
    by_transport: [Vec<f64>; 3],
    stats: Stats,
    firings_per_s: f64,
    /// Firings due in the window per second, from each schedule's creation time and interval.
    due_per_s: f64,
    /// CPU seconds per second of the window: the server process, and this process's clients.
    server_cores: f64,
    clients_cores: f64,
    rss_mb: f64,
    populate: Duration,
    /// The server process's CPU time (every thread) per frame run in the window.
    cpu_per_frame_us: f64,
    /// The server process's CPU time in the window per piece of work it did there: each round
    /// trip answered and each firing started.
    cpu_per_work_us: f64,
    /// The snapshots each dashboard viewer received in the window.
    viewer_snapshots: Vec<usize>,
}

#[derive(Default)]
struct Stats {
    step_p50_us: f64,
    step_p99_us: f64,
    overruns: f64,
    step_cpu_p50_us: f64,
    step_cpu_p99_us: f64,
    cpu_overruns: f64,
    frames: f64,
    firings: f64,
}

/// How many of the firings of schedules made at `made` (each with its interval in seconds)
/// fall in `[start, end]`.
fn due_between(made: &[(Instant, f64)], start: Instant, end: Instant) -> usize {
    made.iter()
        .map(|&(at, every)| {
            let every = Duration::from_secs_f64(every);
            (1..)
                .map(|k| at + every * k)
                .skip_while(|due| *due < start)
                .take_while(|due| *due <= end)
                .count()
        })
        .sum()
}

/// Connects as client number `n`. Clients arrive 1 ms apart (a thousand in a second), and
/// a connection the server has not greeted within 5 s is retried: a thousand SYNs in the same
/// instant can trip the kernel's SYN-flood defence, which loses connections on the client's
/// side only — the listener, not the server, is then what would be measured.
async fn connect(addrs: &Addrs, n: usize, transport: Transport) -> Client {
    tokio::time::sleep(Duration::from_millis(1) * u32::try_from(n).unwrap_or(u32::MAX)).await;
    for _ in 0..5 {
        if let Some(client) = Client::try_connect(addrs, transport, Duration::from_secs(5)).await {
            return client;
        }
    }
    panic!("the server greeted none of five connections");
}

async fn measure_server(load: &Load, watched: Watched) -> Measured {
    let server = start_server(load.schedules_each, watched.metrics);
    // Whatever goes wrong, the server process is stopped before the bench reports it.
    match tokio::time::timeout(PATIENCE * 10, drive_server(&server, load, watched)).await {
        Ok(Ok(measured)) => measured,
        Ok(Err(failure)) => {
            drop(server);
            panic!("serve bench: {failure}");
        }
        Err(_) => {
            drop(server);
            panic!("serve bench: no result within {:?}", PATIENCE * 10);
        }
    }
}

async fn drive_server(
    server: &ServerProcess,
    load: &Load,
    watched: Watched,
) -> Result<Measured, String> {
    let addrs = Rc::new(Addrs {
        tcp: server.addr.clone(),
        ws: Some(server.ws.clone()),
    });
    let mut wizard = connect(&addrs, 0, Transport::Raw).await;
    wizard.log_in("bench").await;
    let started = Instant::now();
    let populated = Rc::new(tokio::sync::Barrier::new(load.connections + 1));
    let go = Rc::new(tokio::sync::Barrier::new(load.connections + 1));
    // When each schedule was made (its `ok` read) and its interval.
    let made = Rc::new(std::cell::RefCell::new(Vec::new()));
    let mut clients = Vec::new();
    for n in 0..load.connections {
        let (addrs, populated, go) = (Rc::clone(&addrs), Rc::clone(&populated), Rc::clone(&go));
        // The transports are dealt out in turn, so each has a third of the clients, under the
        // same load in the same run.
        let kind = n % Transport::ALL.len();
        let made = Rc::clone(&made);
        let (each, window) = (load.schedules_each, load.window);
        clients.push(tokio::task::spawn_local(async move {
            let mut client = connect(&addrs, n, Transport::ALL[kind]).await;
            client.log_in(&format!("player{n}")).await;
            let mut first = 0;
            for i in 0..each {
                // Intervals spread over [window, 2 x window): the first firings spread evenly
                // over the measurement window instead of arriving in one burst.
                let spread = ((n * each + i) % 1000) as f64 / 1000.0;
                let every = window.as_secs_f64() * (1.0 + spread);
                let reply = client.ask(&format!("every {every:.3} tell tick {i}")).await;
                assert!(reply.starts_with("ok: schedule #"), "{reply}");
                made.borrow_mut()
                    .push((Instant::now(), (every * 1000.0).round() / 1000.0));
                if i == 0 {
                    first = reply[14..]
                        .split(' ')
                        .next()
                        .and_then(|id| id.parse::<u64>().ok())
                        .expect("an id");
                }
            }
            populated.wait().await;
            go.wait().await; // after the wizard's stats reset
            let paced = paced_asks(&mut client, &format!("info {first}"), (window, n), true).await;
            (kind, paced)
        }));
    }
    // A client that fails never reaches the barrier: watch for that instead of waiting forever.
    tokio::select! {
        _ = populated.wait() => {}
        failure = first_failure(&mut clients) => return Err(failure),
    }
    let populate = started.elapsed();
    eprintln!(
        "serve: populated in {:.1} s; the window opens when the first schedules come due",
        populate.as_secs_f64()
    );
    // The viewers watch from before the window to its end.
    let viewers = viewers::Viewers::open(&server.ws, watched.viewers).await?;
    // The window opens when the first schedules come due (one interval after the first was
    // made), so each schedule fires about once inside it.
    tokio::time::sleep(load.window.saturating_sub(populate)).await;
    wizard.ask("stats").await; // resets the server's frame window
    let window_start = Instant::now();
    let cpu_start = (
        cpu_seconds(server.child.id()),
        cpu_seconds(std::process::id()),
    );
    let lag = LagProbe::start();
    go.wait().await;
    let (rtt_ms, split, by_transport) = gather(clients).await?;
    let window = window_start.elapsed();
    let (client_lag_ms, load_average) = (lag.stop(), load_average());
    let cpu_end = (
        cpu_seconds(server.child.id()),
        cpu_seconds(std::process::id()),
    );
    let stats = parse_stats(&wizard.ask("stats").await);
    let viewer_snapshots = viewers.stop().await?;
    if viewer_snapshots.contains(&0) {
        return Err(format!(
            "a dashboard viewer received no snapshot in the window: {viewer_snapshots:?}"
        ));
    }
    let seconds = window.as_secs_f64();
    let answered = rtt_ms.len();
    let due = due_between(&made.borrow(), window_start, window_start + window);
    Ok(Measured {
        rtt_ms,
        split,
        client_lag_ms,
        load_average,
        by_transport,
        firings_per_s: stats.firings / seconds,
        due_per_s: due as f64 / seconds,
        server_cores: (cpu_end.0 - cpu_start.0) / seconds,
        clients_cores: (cpu_end.1 - cpu_start.1) / seconds,
        rss_mb: rss_mb(server.child.id()),
        populate,
        cpu_per_frame_us: (cpu_end.0 - cpu_start.0) / stats.frames * 1e6,
        cpu_per_work_us: (cpu_end.0 - cpu_start.0) / (answered as f64 + stats.firings) * 1e6,
        viewer_snapshots,
        stats,
    })
}

/// Resolves with the first client task that ended in a panic (pending while none has).
async fn first_failure(clients: &mut [tokio::task::JoinHandle<(usize, Paced)>]) -> String {
    loop {
        for client in clients.iter_mut() {
            if client.is_finished()
                && let Err(error) = client.await
            {
                return format!("a client failed: {error}");
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// What the paced asks measured: the round trips of `command` in milliseconds, and, when
/// splitting, each `ping`'s round trip split at the server's clock (docs/serve.md §3.10):
/// (sent → the server answered, the server answered → the reply read), in milliseconds.
#[derive(Default)]
struct Paced {
    rtts: Vec<f64>,
    split: Vec<(f64, f64)>,
}

/// One command every [`PACE`] (offset per client so they do not all send at once) until
/// `window` has passed. With `split`, every [`PING_EVERY`]th tick also sends `ping` once the
/// command is answered: the server's clock in its reply tells the time to the server (the
/// kernel's delivery and the server's runtime reaching the connection) from the time back (the
/// kernel's delivery and this process's runtime reading the reply). Both processes read the one
/// system clock. The command's own load is unchanged; a ping adds a tenth as many cheap replies.
async fn paced_asks(
    client: &mut Client,
    command: &str,
    (window, n): (Duration, usize),
    split: bool,
) -> Paced {
    let offset = PACE.mul_f64((n % 100) as f64 / 100.0);
    tokio::time::sleep(offset).await;
    let end = Instant::now() + window;
    let mut ticks = tokio::time::interval(PACE);
    let mut out = Paced::default();
    let mut tick = 0u64;
    while Instant::now() < end {
        ticks.tick().await;
        tick += 1;
        let sent = Instant::now();
        let reply = client.ask(command).await;
        out.rtts.push(sent.elapsed().as_secs_f64() * 1000.0);
        assert!(reply.starts_with("ok:"), "{reply}");
        if split && tick.is_multiple_of(PING_EVERY) {
            let sent = unix_ms();
            let reply = client.ask("ping").await;
            let read = unix_ms();
            let answered = reply
                .strip_prefix("ok: pong ")
                .and_then(|ns| ns.trim().parse::<f64>().ok())
                .unwrap_or_else(|| panic!("a pong with the server's clock: {reply}"))
                / 1e6;
            out.split.push((answered - sent, read - answered));
        }
    }
    out
}

/// Each client's round trips, pooled: every round trip, every `ping`'s split, and the round
/// trips of each transport.
async fn gather(
    clients: Vec<tokio::task::JoinHandle<(usize, Paced)>>,
) -> Result<(Vec<f64>, Vec<(f64, f64)>, [Vec<f64>; 3]), String> {
    let mut rtt_ms = Vec::new();
    let mut split = Vec::new();
    let mut by_transport: [Vec<f64>; 3] = Default::default();
    for client in clients {
        let (kind, paced) = client.await.map_err(|e| format!("a client failed: {e}"))?;
        rtt_ms.extend_from_slice(&paced.rtts);
        by_transport[kind].extend(paced.rtts);
        split.extend(paced.split);
    }
    Ok((rtt_ms, split, by_transport))
}

/// A task on the clients' runtime that asks to wake every millisecond and records how late each
/// wake-up came: the clients' own share of a stall, which no round trip can tell from the
/// server's.
struct LagProbe {
    lags: Rc<std::cell::RefCell<Vec<f64>>>,
    task: tokio::task::JoinHandle<()>,
}

impl LagProbe {
    fn start() -> LagProbe {
        const EVERY: Duration = Duration::from_millis(1);
        let lags = Rc::new(std::cell::RefCell::new(Vec::new()));
        let recorded = Rc::clone(&lags);
        let task = tokio::task::spawn_local(async move {
            loop {
                let asked = Instant::now();
                tokio::time::sleep(EVERY).await;
                let late = asked.elapsed().saturating_sub(EVERY);
                recorded.borrow_mut().push(late.as_secs_f64() * 1000.0);
            }
        });
        LagProbe { lags, task }
    }

    /// Stops the task; how late each wake-up came, in milliseconds.
    fn stop(self) -> Vec<f64> {
        self.task.abort();
        self.lags.take()
    }
}

/// The machine's one-minute load average (NaN where `/proc/loadavg` cannot be read).
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// How often a client follows its command with a `ping` (docs/serve.md §3.10).
const PING_EVERY: u64 = 10;

/// The system clock in milliseconds since the Unix epoch, as the server's `pong` reads it.
fn unix_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// `ok: frames_run=… step_p50_us=… step_p99_us=… step_max_us=… overruns=… step_cpu_p50_us=…
/// step_cpu_p99_us=… step_cpu_max_us=… cpu_overruns=… firings_window=… …`; firings
/// are the server's running total, turned into a window count by the caller's reset.
fn parse_stats(line: &str) -> Stats {
    let field = |key: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    Stats {
        step_p50_us: field("step_p50_us"),
        step_p99_us: field("step_p99_us"),
        overruns: field("overruns"),
        step_cpu_p50_us: field("step_cpu_p50_us"),
        step_cpu_p99_us: field("step_cpu_p99_us"),
        cpu_overruns: field("cpu_overruns"),
        frames: field("frames_run"),
        firings: field("firings_window"),
    }
}

/// The same clients and pacing against a tokio line echo that does nothing else.
async fn measure_echo(load: &Load) -> Vec<f64> {
    let (bound, addr) = std::sync::mpsc::channel();
    // The echo server runs on its own thread and runtime, as the real server runs in its process.
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = std::thread::spawn(move || {
        let threads = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let local = tokio::task::LocalSet::new();
        local.block_on(&threads, async move {
            // tokio's bind asks for the same accept backlog (1,024) as the real server's.
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            let _ = bound.send(listener.local_addr().expect("addr").to_string());
            let mut stopped = std::pin::pin!(stopped);
            loop {
                let socket = tokio::select! {
                    _ = &mut stopped => return,
                    accepted = listener.accept() => match accepted {
                        Ok((socket, _)) => socket,
                        Err(_) => continue,
                    },
                };
                tokio::task::spawn_local(async move {
                    let _ = socket.set_nodelay(true);
                    let (read, mut write) = socket.into_split();
                    let mut lines = BufReader::new(read).lines();
                    let _ = write.write_all(b"hello\n").await;
                    while let Ok(Some(line)) = lines.next_line().await {
                        if write
                            .write_all(format!("ok: {line}\n").as_bytes())
                            .await
                            .is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
    });
    let addrs = Rc::new(Addrs {
        tcp: addr.recv_timeout(PATIENCE).expect("the echo server binds"),
        ws: None,
    });
    let mut clients = Vec::new();
    for n in 0..load.connections {
        let addrs = Rc::clone(&addrs);
        let window = load.window;
        clients.push(tokio::task::spawn_local(async move {
            let mut client = connect(&addrs, n, Transport::Raw).await;
            client.ask(&format!("player{n}")).await;
            paced_asks(&mut client, "info 1", (window, n), false)
                .await
                .rtts
        }));
    }
    let mut rtt_ms = Vec::new();
    for client in clients {
        rtt_ms.extend(client.await.expect("a client task"));
    }
    let _ = stop.send(());
    server.join().expect("the echo server ends");
    rtt_ms
}
