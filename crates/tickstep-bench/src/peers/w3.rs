//! W3 of the peers section: recurring schedules at scale (docs/peers.md §1.6). N schedules
//! `every 60 s` on one `PostgreSQL` database, held by one node and then by three: the firings a
//! second they sustain, how late each starts, the memory a held schedule costs, and how late the
//! points due in the minute after every node was killed with `SIGKILL` start on fresh nodes.
//!
//! Each node is this binary again, started with [`ENV`] set: a `TokioDriver` on the store, a
//! no-op verb that writes each start's lateness (start − the point it serves) to a file of its
//! own, and a line a second on stdout with the schedules it holds, the firings it started and its
//! resident memory. A node with a share creates it in transactions of [`CHUNK`], paced over a
//! minute, so the schedules' points spread over the minute rather than falling on one instant.
//! The peers have no place here (docs/peers.md §3.5): graphile-worker's and pg-boss's recurring
//! jobs are minute crons, for a few recurring tasks, not a million schedules each with a phase
//! of its own.

use std::cell::RefCell;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tickstep::schedules::{Namespace, ObjId, Options, Value};
use tickstep::{Runtime, TokioDriver};

use super::pg;
use super::worker::now_us;

/// Set in a node's process: `url|share|spread_ms|samples_path`.
pub(crate) const ENV: &str = "TICKSTEP_BENCH_PEERS_W3";

/// Schedules per creating transaction, at most; a share is created in at least [`SPREAD_STEPS`].
const CHUNK: u64 = 1_000;
/// The fewest transactions a share is created in, one a second over the minute, so that even a
/// small share's points spread over the minute.
const SPREAD_STEPS: u64 = 60;
/// Every schedule's interval.
const EVERY: Duration = Duration::from_secs(60);
/// The nodes' lease: a killed node's schedules are taken over once it lapses.
const LEASE: Duration = Duration::from_secs(10);

/// What one run measured, for one node count.
pub(crate) struct Figures {
    pub(crate) nodes: usize,
    pub(crate) n: u64,
    /// From the nodes' start until every share was created.
    pub(crate) create_s: f64,
    /// Firings started a second over the measured window, and what `n / 60` asks.
    pub(crate) per_s: f64,
    pub(crate) window_s: f64,
    /// Start − point, over the window's firings, in milliseconds: p50, p99, max.
    pub(crate) lateness_ms: [f64; 3],
    /// The nodes' resident memory at the window's end less theirs before creating, per
    /// schedule held.
    pub(crate) bytes_per_schedule: f64,
    /// After the `SIGKILL` of every node, fresh nodes fire the points due in the minute after
    /// it: the latest start of any of them, past its point (the lease, then the claim), or
    /// infinity when not all `n` came within the bound; and how many came.
    pub(crate) takeover_s: f64,
    pub(crate) after_kill_points: u64,
}

/// What a node is told.
struct Node {
    url: String,
    share: u64,
    spread: Duration,
    samples: PathBuf,
}

impl Node {
    fn packed(&self) -> String {
        format!(
            "{}|{}|{}|{}",
            self.url,
            self.share,
            self.spread.as_millis(),
            self.samples.display()
        )
    }

    fn parse(packed: &str) -> Self {
        let parts: Vec<&str> = packed.splitn(4, '|').collect();
        assert_eq!(parts.len(), 4, "{ENV} is url|share|spread_ms|samples");
        Node {
            url: parts[0].to_owned(),
            share: parts[1].parse().expect("a share"),
            spread: Duration::from_millis(parts[2].parse().expect("a spread in ms")),
            samples: PathBuf::from(parts[3]),
        }
    }
}

/// Runs the node of [`ENV`]'s value and never returns (it is killed).
pub(crate) fn main(packed: &str) -> ! {
    super::worker::run_until_killed("tickstep W3 node", run_node(Node::parse(packed)))
}

async fn run_node(node: Node) -> Result<(), Box<dyn std::error::Error>> {
    let builder = Runtime::builder()
        .store_path(&node.url)
        .namespace(Namespace::new("peers_w3")?)
        .lease(LEASE)
        .without_commands();
    let driver = TokioDriver::new(builder)?;
    let samples = Rc::new(RefCell::new(BufWriter::new(std::fs::File::create(
        &node.samples,
    )?)));
    let fired = Rc::new(std::cell::Cell::new(0_u64));
    {
        let samples = Rc::clone(&samples);
        let fired = Rc::clone(&fired);
        driver.runtime().verb("w3", move |call| {
            let started = now_us();
            let point = i64::try_from(call.firing().nominal_unix_nanos / 1_000).unwrap_or(0);
            fired.set(fired.get() + 1);
            // A bench's own file: a failed write shows as missing samples, not a fault.
            let _ = writeln!(samples.borrow_mut(), "{started} {}", started - point);
            Ok(Value::Int(0))
        });
    }
    let runtime = Rc::clone(driver.runtime());
    println!("ready {}", rss_kb());
    let create = async {
        let started = Instant::now();
        let chunks = node.share.div_ceil(CHUNK).max(SPREAD_STEPS).min(node.share);
        let size = node.share.div_ceil(chunks.max(1));
        for c in 0..chunks {
            // Chunk c is created at c/chunks of the spread, or as soon as the one before it is.
            let due = node.spread.mul_f64(c as f64 / chunks.max(1) as f64);
            if let Some(wait) = due.checked_sub(started.elapsed()) {
                tokio::time::sleep(wait).await;
            }
            let mut txn = runtime.schedules().begin(ObjId(1));
            for _ in 0..size.min(node.share.saturating_sub(c * size)) {
                txn.schedule_every(ObjId(1), "w3", EVERY.as_secs_f64(), vec![], Options::new())?;
            }
            txn.commit_async().await?;
        }
        println!("created {} {}", started.elapsed().as_millis(), rss_kb());
        Ok::<(), Box<dyn std::error::Error>>(())
    };
    let report = async {
        let mut every = tokio::time::interval(Duration::from_secs(1));
        loop {
            every.tick().await;
            let _ = samples.borrow_mut().flush();
            println!(
                "stat {} {} {} {}",
                now_us(),
                runtime.schedules().live_count(),
                fired.get(),
                rss_kb()
            );
        }
    };
    let creating = async {
        create.await?;
        report.await;
        Ok::<(), Box<dyn std::error::Error>>(())
    };
    let (ran, created) = tokio::join!(driver.run(), creating);
    created?;
    ran?;
    Ok(())
}

/// This process's resident memory, KiB.
fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The latest of a node's lines.
#[derive(Clone, Copy, Default)]
struct Seen {
    ready_rss_kb: Option<u64>,
    created_ms: Option<u64>,
    held: u64,
    fired: u64,
    rss_kb: u64,
}

/// A running node and what it has said.
struct Running {
    child: Child,
    seen: Arc<Mutex<Seen>>,
}

impl Running {
    fn start(node: &Node, log: &Path) -> Result<Self, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let log = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let mut child = Command::new(exe)
            .arg("peers")
            .env(ENV, node.packed())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start a W3 node: {e}"))?;
        let out = BufReader::new(child.stdout.take().expect("piped"));
        let seen = Arc::new(Mutex::new(Seen::default()));
        let shared = Arc::clone(&seen);
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                let f: Vec<u64> = line
                    .split_whitespace()
                    .skip(1)
                    .filter_map(|w| w.parse().ok())
                    .collect();
                let mut s = shared.lock().expect("not poisoned");
                match (line.split_whitespace().next(), f.as_slice()) {
                    (Some("ready"), [rss]) => s.ready_rss_kb = Some(*rss),
                    (Some("created"), [ms, rss]) => {
                        s.created_ms = Some(*ms);
                        s.rss_kb = *rss;
                    }
                    (Some("stat"), [_, held, fired, rss]) => {
                        s.held = *held;
                        s.fired = *fired;
                        s.rss_kb = *rss;
                    }
                    _ => {}
                }
            }
        });
        Ok(Running { child, seen })
    }

    fn seen(&self) -> Seen {
        *self.seen.lock().expect("not poisoned")
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until `done` holds over the nodes' latest lines, up to `bound`; the time it took.
fn wait_for(
    nodes: &[Running],
    bound: Duration,
    done: impl Fn(&[Seen]) -> bool,
) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < bound {
        let seen: Vec<Seen> = nodes.iter().map(Running::seen).collect();
        if done(&seen) {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

/// One run of `n` schedules over `k` nodes, measured for `window`.
pub(crate) fn run_once(
    server: &pg::Server,
    n: u64,
    k: usize,
    spread: Duration,
    window: Duration,
) -> Result<Figures, String> {
    let url = server.create_database(&format!("peers_w3_{k}"))?;
    let dir = std::env::temp_dir();
    let samples = |life: u32, i: usize| dir.join(format!("peers-w3-{k}-{life}-{i}.samples"));
    let log = |life: u32, i: usize| dir.join(format!("peers-w3-{k}-{life}-{i}.log"));
    let mut nodes = Vec::new();
    let k64 = k as u64;
    for i in 0..k {
        let share = n / k64 + u64::from((i as u64) < n % k64);
        let node = Node {
            url: url.clone(),
            share,
            spread,
            samples: samples(0, i),
        };
        nodes.push(Running::start(&node, &log(0, i))?);
    }
    let kill_all = |nodes: &mut Vec<Running>| nodes.iter_mut().for_each(Running::kill);
    // Creating a million schedules on this machine takes minutes; the bound is generous.
    let created = wait_for(&nodes, Duration::from_secs(1_800), |s| {
        s.iter().all(|s| s.created_ms.is_some())
    });
    let Some(create) = created else {
        kill_all(&mut nodes);
        return Err(format!(
            "W3 ({k} nodes): the schedules were not all created (see {})",
            log(0, 0).display()
        ));
    };
    // Every schedule comes due once in the minute after its creation: the window starts then.
    std::thread::sleep(EVERY + Duration::from_secs(5));
    let from_us = now_us();
    std::thread::sleep(window);
    let to_us = now_us();
    let end: Vec<Seen> = nodes.iter().map(Running::seen).collect();
    let grown_kb: u64 = end
        .iter()
        .map(|s| s.rss_kb.saturating_sub(s.ready_rss_kb.unwrap_or(s.rss_kb)))
        .sum();
    let held: u64 = end.iter().map(|s| s.held).sum();
    kill_all(&mut nodes);
    let killed_us = now_us();
    let mut late = Vec::new();
    for i in 0..k {
        read_samples(&samples(0, i), from_us, to_us, &mut late)?;
    }
    // Fresh nodes, creating nothing, take every schedule over once the killed nodes' leases
    // lapse.
    let mut fresh = Vec::new();
    for i in 0..k {
        let node = Node {
            url: url.clone(),
            share: 0,
            spread,
            samples: samples(1, i),
        };
        fresh.push(Running::start(&node, &log(1, i))?);
    }
    // Every schedule has one point in the minute after the kill; fresh nodes claim each within
    // a lease of its due time (docs/schedules.md §11.26), so the minute, the lease and a margin
    // see them all.
    std::thread::sleep(EVERY + LEASE + Duration::from_secs(15));
    let mut waits = Vec::new();
    for i in 0..k {
        read_takeover(&samples(1, i), killed_us, &mut waits)?;
    }
    kill_all(&mut fresh);
    pg::drop_database(&url);
    for life in 0..2 {
        for i in 0..k {
            let _ = std::fs::remove_file(samples(life, i));
        }
    }
    late.sort_unstable();
    let q = |p: f64| {
        late.get(((late.len() as f64 * p) as usize).min(late.len().saturating_sub(1)))
            .map_or(0.0, |&us| us as f64 / 1e3)
    };
    let window_s = (to_us - from_us) as f64 / 1e6;
    Ok(Figures {
        nodes: k,
        n,
        create_s: create.as_secs_f64(),
        per_s: late.len() as f64 / window_s,
        window_s,
        lateness_ms: [
            q(0.50),
            q(0.99),
            late.last().map_or(0.0, |&us| us as f64 / 1e3),
        ],
        bytes_per_schedule: grown_kb as f64 * 1024.0 / held.max(1) as f64,
        // Not every point came within the bound: the takeover did not end.
        takeover_s: if waits.len() as u64 >= n {
            waits
                .iter()
                .copied()
                .max()
                .map_or(f64::INFINITY, |us| us as f64 / 1e6)
        } else {
            f64::INFINITY
        },
        after_kill_points: waits.len() as u64,
    })
}

/// For every start written to `path` of a point due in the minute after `killed_us`, appends how
/// long it waited past its point (µs): the points due before the fresh nodes held them wait for
/// the lease and the claim.
fn read_takeover(path: &Path, killed_us: i64, out: &mut Vec<i64>) -> Result<(), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let minute = i64::try_from(EVERY.as_micros()).unwrap_or(i64::MAX);
    for line in BufReader::new(file).lines().map_while(Result::ok) {
        let mut words = line.split_whitespace().map(str::parse::<i64>);
        if let (Some(Ok(start)), Some(Ok(late))) = (words.next(), words.next()) {
            let point = start - late;
            if (killed_us..killed_us + minute).contains(&point) {
                out.push(start - point);
            }
        }
    }
    Ok(())
}

/// Appends the lateness (µs) of every start in `[from_us, to_us)` written to `path`.
fn read_samples(path: &Path, from_us: i64, to_us: i64, out: &mut Vec<i64>) -> Result<(), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    for line in BufReader::new(file).lines().map_while(Result::ok) {
        let mut words = line.split_whitespace().map(str::parse::<i64>);
        if let (Some(Ok(start)), Some(Ok(late))) = (words.next(), words.next())
            && (from_us..to_us).contains(&start)
        {
            out.push(late);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_is_told_its_share_through_one_variable() {
        let node = Node {
            url: "postgres://u@h:1/db?sslmode=disable".to_owned(),
            share: 333_334,
            spread: Duration::from_secs(60),
            samples: PathBuf::from("/tmp/s"),
        };
        let back = Node::parse(&node.packed());
        assert_eq!(back.packed(), node.packed());
    }
}
