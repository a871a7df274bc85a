//! The `peers` section: tickstep against the durable job systems a developer on `PostgreSQL`
//! would pick instead — graphile-worker and pg-boss (Node, `bench/peers/node/`) and apalis (Rust,
//! `bench/peers/apalis/`) — on one throwaway server, in one run, each through its documented API (docs/peers.md).
//!
//! | measure | what |
//! |---|---|
//! | `w1_wall_per_job` | W1: N one-shot jobs due spread over 10 s, one worker; wall time from the first due time to the last completion, per job (1 / jobs per second) | best peer, same run; goal ratio ≤ 0.5 (2× the throughput) |
//! | `w1_lateness_p50`, `_p99`, `_max` | handler start − due time, over the jobs' first runs | best peer; goal for p99: ratio ≤ 0.5 |
//! | `w1_worker_cpu`, `w1_server_cpu` | CPU of the worker process, and of the whole `PostgreSQL` server, per job | best peer; reported |
//! | `w1_stored_bytes` | `pg_total_relation_size` of the system's tables per job, once every job is enqueued | peers in the note; reported |
//! | `w2_twice`, `w2_lost` | W2: W1 with two workers, one `SIGKILL`ed at half the jobs and restarted; ids appended twice or more, and never | goal 0 for tickstep; peers in the note |
//! | `w2_all_ran` | W2: from the kill until every job had run | best peer; reported |
//!
//! Each worker is a process of its own ([`worker`] for tickstep, the Node programs and the apalis
//! binary for the peers); every system gets a fresh database holding its own tables and the append table.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use postgres::{Client, NoTls};

use crate::harness::{Measure, Opts, Row, Section};

// The tests' throwaway server, shared by path (docs/peers.md §5.2). Its docs link the tests'
// skip macro, which is not in scope here.
#[allow(rustdoc::broken_intra_doc_links)]
#[path = "../../tickstep-schedules/tests/common/pg.rs"]
mod pg;
mod procs;
mod w3;
mod worker;

use worker::{Job, now_us};

/// The systems, tickstep first.
#[derive(Clone, Copy, PartialEq, Eq)]
enum System {
    Tickstep,
    Graphile,
    PgBoss,
    Apalis,
}

const SYSTEMS: [System; 4] = [
    System::Tickstep,
    System::Graphile,
    System::PgBoss,
    System::Apalis,
];

impl System {
    fn label(self) -> &'static str {
        match self {
            System::Tickstep => "tickstep",
            System::Graphile => "graphile-worker",
            System::PgBoss => "pg-boss",
            System::Apalis => "apalis",
        }
    }

    /// Starts one worker for `job`; stdout is piped for its `ready` line.
    fn spawn(self, job: &Job, peers_dir: &Path, log: &Path) -> Result<Child, String> {
        let mut command = match self {
            System::Tickstep => {
                let mut c = Command::new(std::env::current_exe().map_err(|e| e.to_string())?);
                c.arg("peers").env(worker::ENV, job.argv().join("|"));
                c
            }
            System::Graphile | System::PgBoss => {
                let script = if self == System::Graphile {
                    "graphile.js"
                } else {
                    "pgboss.js"
                };
                let mut c = Command::new("node");
                c.arg(peers_dir.join("node").join(script)).args(job.argv());
                c
            }
            System::Apalis => {
                let mut c = Command::new(apalis_binary(peers_dir));
                c.args(job.argv());
                c
            }
        };
        let log = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start the {} worker: {e}", self.label()))
    }
}

/// Where the peers' programs live: `bench/peers` of the source tree.
fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/peers")
}

fn apalis_binary(peers_dir: &Path) -> PathBuf {
    peers_dir.join("apalis/target/release/tickstep-bench-apalis")
}

/// Builds the apalis worker, a cargo project of its own with its own lock file (a no-op once
/// built).
fn build_apalis(peers_dir: &Path) -> Result<(), String> {
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(peers_dir.join("apalis/Cargo.toml"))
        .status()
        .map_err(|e| format!("cannot run cargo to build the apalis worker: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("building the apalis worker failed: {status}"))
    }
}

/// Installs the Node peers from their lock file (`npm ci`) unless installed already.
fn install_node(peers_dir: &Path) -> Result<(), String> {
    let dir = &peers_dir.join("node");
    if dir.join("node_modules/.package-lock.json").exists() {
        return Ok(());
    }
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run npm (Node and npm are needed for the peers): {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("npm ci in {} failed: {status}", dir.display()))
    }
}

/// What one run of a workload measured for one system.
struct Figures {
    n: i64,
    enqueue_ms: i64,
    /// Enqueueing ended after the first job was due (its lateness counts the difference).
    enqueue_late: bool,
    jobs_per_s: f64,
    lateness_ms: [f64; 3],
    worker_cpu_us: f64,
    server_cpu_us: f64,
    stored_bytes: f64,
    twice: i64,
    lost: i64,
    /// Seconds from the kill until every job had run (W2; `None` when some never did).
    all_ran_s: Option<f64>,
}

struct Workload {
    n: i64,
    span: Duration,
    workers: i64,
    kill_at_half: bool,
    /// How long after the last due time the run waits for stragglers.
    grace: Duration,
}

/// A worker process and the CPU it has used.
struct Running {
    child: Child,
    cpu_s: f64,
}

impl Running {
    fn start(system: System, job: &Job, peers: &Path, log: &Path) -> Result<(Self, i64), String> {
        let mut child = system.spawn(job, peers, log)?;
        let mut out = BufReader::new(child.stdout.take().expect("piped"));
        let mut line = String::new();
        out.read_line(&mut line).map_err(|e| e.to_string())?;
        let Some(ms) = line.strip_prefix("ready ") else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "the {} worker did not get ready (see {})",
                system.label(),
                log.display()
            ));
        };
        let ms = ms.trim().parse().unwrap_or(0);
        // Keep draining what it prints, so it never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        Ok((Running { child, cpu_s: 0.0 }, ms))
    }

    /// Kills it with `SIGKILL`, keeping the CPU it used.
    fn kill(&mut self) -> f64 {
        self.cpu_s = procs::cpu_seconds(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.cpu_s
    }
}

fn run_once(
    server: &pg::Server,
    system: System,
    load: &Workload,
    peers: &Path,
) -> Result<Figures, String> {
    let db = |e: postgres::Error| format!("{}: {e}", system.label());
    let url = server.create_database(&format!("peers_{}", system.label()))?;
    let mut client = Client::connect(&url, NoTls).map_err(db)?;
    client
        .batch_execute(
            "CREATE TABLE peers_done (id bigint NOT NULL, worker text NOT NULL, \
             started_us bigint NOT NULL, \
             done_us bigint NOT NULL DEFAULT (extract(epoch FROM clock_timestamp()) * 1e6)::bigint)",
        )
        .map_err(db)?;
    let backend: i32 = client
        .query_one("SELECT pg_backend_pid()", &[])
        .map_err(db)?
        .get(0);
    let postmaster = procs::parent(backend.unsigned_abs()).unwrap_or(0);
    let server_cpu_0 = procs::server_cpu_seconds(postmaster);

    // Every worker enqueues its share before the first job is due: three seconds to start and
    // 100 µs a job (the slowest system took about 40 on this machine); a share enqueued late
    // is flagged in the note, since its lateness then counts the difference.
    let lead_us = 3_000_000 + load.n * 100;
    let t0_us = now_us() + lead_us;
    let logs = std::env::temp_dir();
    let job = |w: i64, first: i64, step: i64| Job {
        url: url.clone(),
        n: load.n,
        t0_us,
        span_us: load.span.as_micros() as i64,
        first,
        step,
        name: format!("w{w}"),
    };
    let log = |w: i64, life: u32| logs.join(format!("peers-{}-w{w}-{life}.log", system.label()));
    let mut children = Vec::new();
    let mut spent_cpu = 0.0;
    let mut ready = Vec::new();
    let mut enqueue_ms = 0;
    for w in 0..load.workers {
        let share = job(w, w, load.workers);
        match Running::start(system, &share, peers, &log(w, 0)) {
            Ok((running, ms)) => {
                enqueue_ms = enqueue_ms.max(ms);
                children.push(running);
            }
            Err(why) => {
                for mut c in children {
                    c.kill();
                }
                return Err(why);
            }
        }
        ready.push(now_us());
    }
    let enqueue_late = ready.iter().any(|&r| r > t0_us);
    let stored_bytes: i64 = client
        .query_one(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c \
             JOIN pg_namespace ns ON ns.oid = c.relnamespace \
             WHERE c.relkind IN ('r', 'p') AND c.relname <> 'peers_done' \
             AND ns.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')",
            &[],
        )
        .map_err(db)?
        .get(0);

    let deadline = Instant::now()
        + Duration::from_micros(t0_us.saturating_sub(now_us()).max(0).unsigned_abs())
        + load.span
        + load.grace;
    let mut killed_at_us = None;
    loop {
        let done: i64 = client
            .query_one("SELECT count(DISTINCT id) FROM peers_done", &[])
            .map_err(db)?
            .get(0);
        if load.kill_at_half && killed_at_us.is_none() && done >= load.n / 2 {
            spent_cpu += children[0].kill();
            killed_at_us = Some(now_us());
            match Running::start(system, &job(0, load.n, 1), peers, &log(0, 1)) {
                Ok((running, _)) => children[0] = running,
                Err(why) => eprintln!("peers: {why}"),
            }
        }
        if done >= load.n || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for c in &mut children {
        spent_cpu += c.kill();
    }
    let server_cpu = procs::server_cpu_seconds(postmaster) - server_cpu_0;

    let mut figures = tally(&mut client, load, t0_us, killed_at_us).map_err(db)?;
    figures.enqueue_ms = enqueue_ms;
    figures.enqueue_late = enqueue_late;
    figures.worker_cpu_us = spent_cpu * 1e6 / load.n as f64;
    figures.server_cpu_us = server_cpu * 1e6 / load.n as f64;
    figures.stored_bytes = stored_bytes as f64 / load.n as f64;
    drop(client);
    pg::drop_database(&url);
    Ok(figures)
}

/// What `peers_done` says of a run whose first job was due at `t0_us`: the CPU and size
/// figures are left for the caller.
fn tally(
    client: &mut Client,
    load: &Workload,
    t0_us: i64,
    killed_at_us: Option<i64>,
) -> Result<Figures, postgres::Error> {
    let span_us = load.span.as_micros() as i64;
    let row = client
        .query_one(
            "WITH first AS (SELECT id, min(started_us) AS s, min(done_us) AS d, count(*) AS c \
                            FROM peers_done GROUP BY id), \
                  late AS (SELECT s - ($1::bigint + id * $2::bigint / $3::bigint) AS l, d, c FROM first) \
             SELECT count(*)::bigint, coalesce(sum((c > 1)::int), 0)::bigint, \
                    percentile_disc(0.5) WITHIN GROUP (ORDER BY l), \
                    percentile_disc(0.99) WITHIN GROUP (ORDER BY l), \
                    max(l), max(d) FROM late",
            &[&t0_us, &span_us, &load.n],
        )?;
    let ran: i64 = row.get(0);
    let twice: i64 = row.get(1);
    let ms = |i: usize| row.get::<_, Option<i64>>(i).unwrap_or(0) as f64 / 1000.0;
    let last_done: Option<i64> = row.get(5);
    let last_done = last_done.unwrap_or(t0_us);
    let lost = load.n - ran;
    Ok(Figures {
        n: load.n,
        enqueue_ms: 0,
        enqueue_late: false,
        jobs_per_s: ran as f64 / ((last_done - t0_us).max(1) as f64 / 1e6),
        lateness_ms: [ms(2), ms(3), ms(4)],
        worker_cpu_us: 0.0,
        server_cpu_us: 0.0,
        stored_bytes: 0.0,
        twice,
        lost,
        all_ran_s: killed_at_us
            .filter(|_| lost == 0)
            .map(|k| (last_done - k) as f64 / 1e6),
    })
}

pub(crate) fn run(opts: &Opts) -> Section {
    if let Ok(packed) = std::env::var(worker::ENV) {
        worker::main(&packed);
    }
    if let Ok(packed) = std::env::var(w3::ENV) {
        w3::main(&packed);
    }
    let server = match pg::shared() {
        Ok(server) => server,
        Err(why) => {
            eprintln!("peers: skipped, no PostgreSQL: {why}");
            return Vec::new();
        }
    };
    // `TICKSTEP_BENCH_PEERS_ONLY=w1w2` or `=w3` runs one part (docs/peers.md §5.4).
    let only = std::env::var("TICKSTEP_BENCH_PEERS_ONLY").unwrap_or_default();
    let mut rows = Vec::new();
    if only != "w3" {
        rows.extend(w1_w2(server, opts));
    }
    if only != "w1w2" {
        rows.extend(w3_rows(server, opts));
    }
    rows
}

/// W1 and W2, every system.
fn w1_w2(server: &pg::Server, opts: &Opts) -> Vec<Row> {
    let peers = peers_dir();
    let node_ok = install_node(&peers);
    let apalis_ok = build_apalis(&peers);
    let n = if opts.quick { 10_000 } else { 100_000 };
    let span = Duration::from_secs(10);
    let grace = Duration::from_secs(if opts.quick { 30 } else { 60 });
    let load_before = procs::loadavg();
    let mut w1 = Vec::new();
    let mut w2 = Vec::new();
    for (results, workers, kill_at_half) in [(&mut w1, 1, false), (&mut w2, 2, true)] {
        let load = Workload {
            n,
            span,
            workers,
            kill_at_half,
            grace,
        };
        for system in SYSTEMS {
            let result = match (&node_ok, &apalis_ok, system) {
                (Err(why), _, System::Graphile | System::PgBoss)
                | (_, Err(why), System::Apalis) => Err(why.clone()),
                _ => run_once(server, system, &load, &peers),
            };
            if let Err(why) = &result {
                eprintln!("peers: {} left out: {why}", system.label());
            }
            results.push((system, result));
        }
    }
    let load_after = procs::loadavg();
    let setting = format!(
        "{n} jobs due over {} s{}; loadavg {load_before} before, {load_after} after",
        span.as_secs(),
        if opts.quick {
            " (--quick: a tenth of the full run's 100,000)"
        } else {
            ""
        }
    );
    let mut rows = w1_rows(&w1, &setting);
    rows.extend(w2_rows(&w2, &setting));
    rows
}

type Results = Vec<(System, Result<Figures, String>)>;

/// tickstep's figures and the peers' that ran.
fn split(results: &Results) -> Option<(&Figures, Vec<(System, &Figures)>)> {
    let ours = results.iter().find_map(|(s, r)| {
        (*s == System::Tickstep)
            .then_some(r.as_ref().ok())
            .flatten()
    })?;
    let peers = results
        .iter()
        .filter(|(s, _)| *s != System::Tickstep)
        .filter_map(|(s, r)| r.as_ref().ok().map(|f| (*s, f)))
        .collect();
    Some((ours, peers))
}

/// A row of `ours` against the best (lowest) peer, with every system's figure in the note.
fn ratio_row(
    name: &'static str,
    results: &Results,
    goal_ratio: f64,
    what: &str,
    ns: impl Fn(&Figures) -> Option<f64>,
) -> Option<Row> {
    let (ours, peers) = split(results)?;
    let (peer, peer_ns) = peers
        .iter()
        .filter_map(|(s, f)| ns(f).map(|v| (s.label(), v)))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    Some(Row {
        name,
        measure: Measure::Ratio {
            ours_ns: ns(ours)?,
            peer,
            peer_ns,
            goal_ratio,
        },
        note: format!(
            "{what}: {}",
            everyone(results, |f| ns(f).map(|v| format!("{v:.0} ns")))
        ),
    })
}

/// Each system's figure, or why it has none.
fn everyone(results: &Results, show: impl Fn(&Figures) -> Option<String>) -> String {
    results
        .iter()
        .map(|(s, r)| {
            let shown = match r {
                Ok(f) => show(f).unwrap_or_else(|| "none".to_owned()),
                Err(why) => format!("left out ({why})"),
            };
            format!("{} {shown}", s.label())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn w1_rows(results: &Results, setting: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    rows.extend(ratio_row(
        "w1_wall_per_job",
        results,
        0.5,
        &format!(
            "W1, one worker, {setting}; first due to last done, per job. Jobs/s: {}; enqueue: {}",
            everyone(results, |f| Some(format!("{:.0}", f.jobs_per_s))),
            everyone(results, |f| Some(format!(
                "{} ms{}",
                f.enqueue_ms,
                if f.enqueue_late {
                    " (after the first due time)"
                } else {
                    ""
                }
            ))),
        ),
        |f| Some(1e9 / f.jobs_per_s),
    ));
    for (name, i, goal) in [
        ("w1_lateness_p50", 0, f64::INFINITY),
        ("w1_lateness_p99", 1, 0.5),
        ("w1_lateness_max", 2, f64::INFINITY),
    ] {
        rows.extend(ratio_row(
            name,
            results,
            goal,
            "W1 handler start − due, first runs",
            |f| Some(f.lateness_ms[i].max(0.001) * 1e6),
        ));
    }
    rows.extend(ratio_row(
        "w1_worker_cpu",
        results,
        f64::INFINITY,
        "W1 worker process CPU (enqueue and run) per job",
        |f| Some(f.worker_cpu_us * 1e3),
    ));
    rows.extend(ratio_row(
        "w1_server_cpu",
        results,
        f64::INFINITY,
        "W1 PostgreSQL server CPU (all its processes) per job, whatever else used the server",
        |f| Some(f.server_cpu_us * 1e3),
    ));
    if let Some((ours, _)) = split(results) {
        rows.push(Row {
            name: "w1_stored_bytes",
            measure: Measure::Value {
                value: ours.stored_bytes,
                unit: "B/job",
                goal: f64::INFINITY,
            },
            note: format!(
                "pg_total_relation_size of each system's tables per enqueued job: {}",
                everyone(results, |f| Some(format!("{:.0} B", f.stored_bytes)))
            ),
        });
    }
    rows
}

fn w2_rows(results: &Results, setting: &str) -> Vec<Row> {
    let Some((ours, _)) = split(results) else {
        return Vec::new();
    };
    let n = ours.n;
    let mut rows = vec![
        Row {
            name: "w2_twice",
            measure: Measure::Value {
                value: ours.twice as f64,
                unit: "jobs",
                goal: 0.0,
            },
            note: format!(
                "W2, two workers, one SIGKILLed at half and restarted, {setting}; ids appended 2+ times: {}",
                everyone(results, |f| Some(f.twice.to_string()))
            ),
        },
        Row {
            name: "w2_lost",
            measure: Measure::Value {
                value: ours.lost as f64,
                unit: "jobs",
                goal: 0.0,
            },
            note: format!(
                "ids of the {n} never appended by the end of the run: {}; from the kill until \
                 every job had run: {}",
                everyone(results, |f| Some(f.lost.to_string())),
                everyone(results, |f| Some(
                    f.all_ran_s
                        .map_or_else(|| "never".to_owned(), |s| format!("{s:.1} s"))
                )),
            ),
        },
    ];
    rows.extend(ratio_row(
        "w2_all_ran",
        results,
        f64::INFINITY,
        "from the kill until every job had run (none: some never ran)",
        |f| f.all_ran_s.map(|s| s * 1e9),
    ));
    rows
}

/// W3, tickstep alone (docs/peers.md §1.6): `n` schedules every 60 s over one node, then three.
fn w3_rows(server: &pg::Server, opts: &Opts) -> Vec<Row> {
    let (n, window) = if opts.quick {
        (6_000, Duration::from_secs(20))
    } else {
        (1_000_000, Duration::from_secs(120))
    };
    let mut rows = Vec::new();
    for k in [1, 3] {
        let load_before = procs::loadavg();
        let figures = match w3::run_once(server, n, k, Duration::from_secs(60), window) {
            Ok(figures) => figures,
            Err(why) => {
                eprintln!("peers: W3 on {k} node(s) left out: {why}");
                continue;
            }
        };
        let setting = format!(
            "W3, {n} schedules every 60 s on {k} node(s){}; loadavg {load_before} before, {} after",
            if opts.quick {
                " (--quick: 6,000 and a 20 s window; the full run has 1,000,000 and 120 s)"
            } else {
                ""
            },
            procs::loadavg()
        );
        rows.extend(w3_figure_rows(&figures, &setting));
    }
    rows
}

/// One node count's rows; the names say the count (one or three).
fn w3_figure_rows(f: &w3::Figures, setting: &str) -> Vec<Row> {
    let one = f.nodes == 1;
    let pick = |single: &'static str, three: &'static str| if one { single } else { three };
    let asked = f.n as f64 / 60.0;
    vec![
        Row {
            name: pick("w3_wall_per_firing_1node", "w3_wall_per_firing_3nodes"),
            measure: Measure::Ns {
                ours_ns: 1e9 / f.per_s.max(1e-9),
                // Keeping up: the pace the schedules ask, with 2% for the window's edges.
                goal_ns: 1.02e9 / asked,
            },
            note: format!(
                "{setting}; {:.0} firings/s started over a {:.0} s window, {asked:.0}/s asked",
                f.per_s, f.window_s
            ),
        },
        Row {
            name: pick("w3_lateness_p99_1node", "w3_lateness_p99_3nodes"),
            measure: Measure::Value {
                value: f.lateness_ms[1],
                unit: "ms",
                goal: f64::INFINITY,
            },
            note: format!(
                "start − point over the window's firings: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
                f.lateness_ms[0], f.lateness_ms[1], f.lateness_ms[2]
            ),
        },
        Row {
            name: pick("w3_bytes_per_schedule_1node", "w3_bytes_per_schedule_3nodes"),
            measure: Measure::Value {
                value: f.bytes_per_schedule,
                unit: "B",
                goal: f64::INFINITY,
            },
            note: "the nodes' resident memory at the window's end less theirs before creating, per schedule held".to_owned(),
        },
        Row {
            name: pick("w3_create_1node", "w3_create_3nodes"),
            measure: Measure::Value {
                value: f.create_s,
                unit: "s",
                goal: f64::INFINITY,
            },
            note: "from the nodes' start until every share was created, in transactions of 1,000 paced over 60 s (so at least 60 s)".to_owned(),
        },
        Row {
            name: pick("w3_takeover_1node", "w3_takeover_3nodes"),
            measure: Measure::Value {
                value: f.takeover_s,
                unit: "s",
                // The 10-million row's bound: the lease (10 s) and 10 s more.
                goal: 20.0,
            },
            note: format!(
                "after SIGKILL of every node, as many fresh nodes: the latest start past its point among the points due in the minute after the kill ({} of {} came; the 10 s lease included; inf: not all came within a minute, a lease and 15 s)",
                f.after_kill_points, f.n
            ),
        },
    ]
}
