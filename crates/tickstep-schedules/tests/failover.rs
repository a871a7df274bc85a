//! Failover with real processes (docs/schedules.md §11.25–§11.28): node processes (this test
//! binary, re-executed) share one `PostgreSQL` database and fire schedules every 100 ms on the
//! real clock, all with catch-up `all`. In the first test three nodes fire hundreds of schedules
//! under overlap `concurrent`; one node is `SIGKILL`ed mid-run, another is `SIGSTOP`ped past its
//! lease and then `SIGCONT`ed, so its late writes meet rows the others took over. In the second,
//! under overlap `skip`, 20 failovers follow one another — kills, each node replaced by a new
//! one, and pauses — so that every takeover's catch-up meets the live points coming due during
//! it (docs/schedules.md §13.64).
//!
//! Two logs judge the run:
//! * **committed** — a trigger the test installs on `tickstep_schedules` appends (schedule,
//!   cadence point, node, fence) for every firing a cadence update *committed* (a run that
//!   appears in the row's `running` list), in the same transaction as that fenced update, and
//!   notes any update that moves `next_run` back. This is the store's exactly-once record.
//! * **external** — each node prints every firing as its runner starts it, before anything is
//!   written: the verb's side effect, which is at-least-once on failover.
//!
//! Asserted: no cadence point committed twice; each schedule's committed points are every point
//! from its first (one interval after its creation) to its last (catch-up `all`: none missed),
//! and no schedule counts a point in `missed_count` or `overlap_count`; every schedule still
//! fired after the failovers; no deadline went backwards; no id handed out twice; a paused
//! node's late writes were refused and counted; every committed firing was also started (external), and a
//! firing started but never committed happened only on a node that was killed or had writes
//! refused. Bounded: about 15 s and 25 s of real time; outcomes only, never durations.

mod common;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::rc::Rc;
use std::time::{Duration, Instant};

use common::nodes::{Node, fields};
use common::stores::{DroppedAtEnd, Store};

use tickstep_kernel::clock::{ManualClock, SystemClock};
use tickstep_schedules::testkit::TestWorld;
use tickstep_schedules::{
    Catchup, Firing, Options, Outcome, Overlap, Refused, RunId, Runner, Schedules, Value,
};

const CHILD_URL: &str = "TICKSTEP_FAILOVER_URL";
const CHILD_NODE: &str = "TICKSTEP_FAILOVER_NODE";
/// The overlap policy of the node's schedules (`skip`, `queue` or `concurrent`).
const CHILD_OVERLAP: &str = "TICKSTEP_FAILOVER_OVERLAP";
const CHILD_SCHEDULES: &str = "TICKSTEP_FAILOVER_SCHEDULES";
const CHILD_LEASE_MS: &str = "TICKSTEP_FAILOVER_LEASE_MS";
/// The node's schedules' interval; unset: [`INTERVAL_NS`].
const CHILD_INTERVAL_MS: &str = "TICKSTEP_FAILOVER_INTERVAL_MS";
/// A file whose appearance stops the node; unset: it stops [`RUN_FOR`] after creating its
/// schedules.
const CHILD_STOP_FILE: &str = "TICKSTEP_FAILOVER_STOP_FILE";
const SCHEDULES_PER_NODE: usize = 70;
const LEASE: Duration = Duration::from_secs(2);
/// How long each node runs after creating its schedules.
const RUN_FOR: Duration = Duration::from_secs(12);
const KILL_AT: Duration = Duration::from_secs(2);
const STOP_AT: Duration = Duration::from_secs(3);
/// Well past the lease, so the others take the stopped node's schedules over.
const CONT_AT: Duration = Duration::from_secs(8);
/// Every schedule's interval.
const INTERVAL_NS: u64 = 100_000_000;

/// Prints each firing as it starts (the external log).
#[derive(Clone)]
struct LoggingRunner {
    node: u64,
    started: Rc<RefCell<Vec<RunId>>>,
}

impl Runner for LoggingRunner {
    fn start(&self, firing: &Firing) -> Result<(), Refused> {
        let run = firing.run;
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "@F {} {} {}",
            firing.schedule.get(),
            firing.nominal_unix_nanos,
            self.node
        )
        .unwrap();
        out.flush().unwrap();
        self.started.borrow_mut().push(run);
        Ok(())
    }
}

/// A node's body; a no-op unless the parent set the environment.
#[test]
fn failover_node_process_entry() {
    let Ok(url) = std::env::var(CHILD_URL) else {
        return;
    };
    let node: u64 = std::env::var(CHILD_NODE).unwrap().parse().unwrap();
    let var = |name: &str| std::env::var(name).ok();
    let overlap = var(CHILD_OVERLAP).map_or(Overlap::Concurrent, |o| Overlap::parse(&o).unwrap());
    let schedules = var(CHILD_SCHEDULES).map_or(SCHEDULES_PER_NODE, |n| n.parse().unwrap());
    let lease = var(CHILD_LEASE_MS).map_or(LEASE, |ms| Duration::from_millis(ms.parse().unwrap()));
    let stop_file = var(CHILD_STOP_FILE).map(std::path::PathBuf::from);
    let interval_ns =
        var(CHILD_INTERVAL_MS).map_or(INTERVAL_NS, |ms| ms.parse::<u64>().unwrap() * 1_000_000);
    let world = TestWorld::new();
    let wiz = world.add_wizard();
    world.add_verb(wiz, "ring");
    let runner = LoggingRunner {
        node,
        started: Rc::new(RefCell::new(Vec::new())),
    };
    let mut config = common::config();
    config.lease = lease;
    let engine =
        Schedules::open(&url, SystemClock::new(), world, runner.clone(), config).expect("open");
    let mut txn = engine.begin(wiz);
    let options = Options::new().catchup(Catchup::All).overlap(overlap);
    let ids: Vec<_> = (0..schedules)
        .map(|_| {
            txn.schedule_every(
                wiz,
                "ring",
                interval_ns as f64 / 1e9,
                vec![],
                options.clone(),
            )
            .unwrap()
        })
        .collect();
    txn.commit().unwrap();
    // This node's id in the database, which the committed log names.
    let owner: i64 = postgres::Client::connect(&url, postgres::NoTls)
        .unwrap()
        .query_one(
            "SELECT owner_node FROM tickstep_schedules WHERE id = $1",
            &[&i64::try_from(ids[0].get()).unwrap()],
        )
        .unwrap()
        .get(0);
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "@N {owner}").unwrap();
        for id in ids {
            writeln!(out, "@C {}", id.get()).unwrap();
        }
        writeln!(out, "@READY").unwrap();
        out.flush().unwrap();
    }
    let until = Instant::now() + RUN_FOR;
    let running = || match &stop_file {
        Some(file) => !file.exists(),
        None => Instant::now() < until,
    };
    while running() {
        // Firings handed over with a claimed row ran on the node that died: settled as done.
        for f in engine.interrupted() {
            engine.reattach(f.run);
            engine.report(f.run, Outcome::Returned(Value::Int(0)));
        }
        let finished: Vec<RunId> = runner.started.borrow_mut().drain(..).collect();
        for run in finished {
            engine.report(run, Outcome::Returned(Value::Int(0)));
        }
        engine.tick().unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    let stats = engine.cluster_stats();
    drop(engine);
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "@S {} {} {}",
        stats.refused_writes, stats.taken_over, stats.claimed
    )
    .unwrap();
    out.flush().unwrap();
}

/// A fresh database at `url`, migrated, with the committed log installed on the tables the nodes
/// will write; a client to read it with.
fn committed_log(url: &str) -> postgres::Client {
    drop(
        Schedules::open(
            url,
            ManualClock::new(),
            TestWorld::new(),
            tickstep_schedules::testkit::TestRunner::new(),
            common::config(),
        )
        .unwrap(),
    );
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    client.batch_execute(common::pg::COMMITTED_LOG).unwrap();
    client
}

/// Starts node `n` on `url`, with `env` besides.
fn spawn_node(url: &str, n: usize, env: &[(&str, String)]) -> Node {
    let mut all = vec![(CHILD_URL, url.to_string()), (CHILD_NODE, n.to_string())];
    all.extend(env.iter().cloned());
    Node::spawn("failover_node_process_entry", &all)
}

/// Waits (bounded) until every node in `nodes` has said `@READY`.
/// Held by each test that runs a cluster of node processes, so the two clusters do not run at
/// once. Each node ticks every 5 ms against one `PostgreSQL` server; two clusters at once on a
/// small machine delay the writes a firing waits for past the 100 ms interval, and a firing still
/// waiting for its write counts as running (docs/schedules.md §11.42), so under overlap `skip`
/// the next point is rightly dropped as an overlap — which the churn test counts as a lost point.
static ONE_CLUSTER: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// [`ONE_CLUSTER`], held until dropped; a test that failed while holding it does not fail the next.
fn one_cluster_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_CLUSTER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn wait_ready(nodes: &[Node]) {
    let give_up = Instant::now() + Duration::from_secs(30);
    while !nodes.iter().all(|n| n.said("@READY")) {
        assert!(Instant::now() < give_up, "the nodes did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn three_nodes_one_killed_one_paused_past_its_lease_fire_every_point_once() {
    let url = pg_or_skip!("failover");
    let _cluster = one_cluster_at_a_time();
    let store = Store::postgres(url.clone());
    let _dropped = DroppedAtEnd(&store);
    let mut client = committed_log(&url);
    let mut nodes: Vec<Node> = (0..3).map(|n| spawn_node(&url, n, &[])).collect();
    wait_ready(&nodes);
    let start = Instant::now();
    let at = |t: Duration| std::thread::sleep(t.saturating_sub(start.elapsed()));
    at(KILL_AT);
    nodes[0].signal("-KILL");
    at(STOP_AT);
    nodes[1].signal("-STOP");
    at(CONT_AT);
    let cont_wall = unix_now();
    nodes[1].signal("-CONT");
    for n in &mut nodes {
        n.wait();
    }

    let judged = judge(&mut client, &nodes, &BTreeSet::from([0]), cont_wall);
    assert_eq!(judged.schedules, 3 * SCHEDULES_PER_NODE);
    let paused = &judged.stats[&1];
    assert!(paused[0] > 0, "the paused node's late writes were refused");
    assert!(paused[1] > 0, "and it dropped the schedules it lost");
    eprintln!(
        "failover: {} committed firings, {} started more than once or not committed \
         (at-least-once side effects), paused node refused {} writes",
        judged.firings, judged.repeated, paused[0]
    );
}

/// Failovers in the churn run: each a node that holds schedules, killed (and replaced by a new
/// one) or paused past its lease.
const FAILOVERS: usize = 20;
/// Every fourth failover is a pause past the lease; the others are kills.
const PAUSE_EVERY: usize = 4;
/// Nodes running at once in the churn run.
const CHURN_NODES: usize = 3;
const CHURN_SCHEDULES_PER_NODE: usize = 8;
const CHURN_LEASE: Duration = Duration::from_secs(1);
/// The churn's schedules' interval: three times [`INTERVAL_NS`], so that a firing's write
/// delayed by a loaded machine (a firing waiting for it counts as running, docs/schedules.md
/// §11.42) does not make overlap `skip` rightly drop the next point, which the test would count
/// as lost. Still under a third of the lease, so a takeover's catch-up has points to fire.
const CHURN_INTERVAL: Duration = Duration::from_millis(300);
/// Between two failovers: less than a lease and a claim interval, so takeovers overlap.
const CHURN_EVERY: Duration = Duration::from_millis(800);
/// How long a paused node stays stopped: past its lease, so the others take its schedules over.
const PAUSE_FOR: Duration = Duration::from_secs(2);
/// After the last failover, for the last takeovers and their catch-ups to end.
const CHURN_TAIL: Duration = Duration::from_secs(4);

/// The done-criterion (docs/schedules.md §11.28, §13.64): under catch-up `all` and
/// overlap `skip` — where the new holder's catch-up once dropped the points that came due during
/// it — 20 failovers lose no point. Three nodes run at once; every 0.8 s the node holding the
/// most schedules is killed (and a new node started in its place) or, every fourth time, paused
/// for two leases and resumed. Every node creates 8 schedules every 300 ms ([`CHURN_INTERVAL`]). Judged as the
/// three-node test is: `missed_count` is 0, and a point is missing only where overlap `skip`
/// dropped it and counted it (a firing's write delayed by a loaded machine). Bounded:
/// about 25 s of real time; outcomes only, never durations.
#[test]
fn twenty_failovers_under_catch_up_all_and_overlap_skip_lose_no_point() {
    let url = pg_or_skip!("failover_churn");
    let _cluster = one_cluster_at_a_time();
    let store = Store::postgres(url.clone());
    let _dropped = DroppedAtEnd(&store);
    let mut client = committed_log(&url);
    let dir = tempfile::tempdir().unwrap();
    let stop_file = dir.path().join("stop");
    let env = [
        (CHILD_OVERLAP, Overlap::Skip.as_str().to_string()),
        (CHILD_SCHEDULES, CHURN_SCHEDULES_PER_NODE.to_string()),
        (CHILD_LEASE_MS, CHURN_LEASE.as_millis().to_string()),
        (CHILD_INTERVAL_MS, CHURN_INTERVAL.as_millis().to_string()),
        (CHILD_STOP_FILE, stop_file.to_str().unwrap().to_string()),
    ];
    let mut nodes: Vec<Node> = (0..CHURN_NODES)
        .map(|n| spawn_node(&url, n, &env))
        .collect();
    wait_ready(&nodes);
    let mut killed = BTreeSet::new();
    let mut paused: Option<(usize, Instant)> = None;
    let mut were_paused = BTreeSet::new();
    let mut failovers = 0;
    let mut last_wall = unix_now();
    let mut next = Instant::now() + CHURN_EVERY;
    let give_up = Instant::now() + Duration::from_secs(120);
    while failovers < FAILOVERS || paused.is_some() {
        assert!(Instant::now() < give_up, "the churn did not finish");
        if let Some((node, since)) = paused
            && since.elapsed() >= PAUSE_FOR
        {
            nodes[node].signal("-CONT");
            paused = None;
            last_wall = unix_now();
        }
        if failovers < FAILOVERS && Instant::now() >= next {
            next += CHURN_EVERY;
            // The live node that holds the most schedules now: its failover moves the most.
            let held = holdings(&mut client, &nodes);
            let (victim, count) = held
                .into_iter()
                .filter(|(n, _)| !killed.contains(n) && paused.is_none_or(|(p, _)| p != *n))
                .max_by_key(|&(n, count)| (count, n))
                .expect("a live node holds schedules");
            assert!(count > 0, "node {victim} holds schedules: a real failover");
            if failovers % PAUSE_EVERY == PAUSE_EVERY - 1 && paused.is_none() {
                nodes[victim].signal("-STOP");
                paused = Some((victim, Instant::now()));
                were_paused.insert(victim);
            } else {
                nodes[victim].signal("-KILL");
                killed.insert(victim);
                let n = nodes.len();
                nodes.push(spawn_node(&url, n, &env));
            }
            failovers += 1;
            last_wall = unix_now();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // The last replacement is running before the tail starts, so every node fires its own.
    wait_ready(&nodes);
    std::thread::sleep(CHURN_TAIL);
    std::fs::write(&stop_file, b"").unwrap();
    for n in &mut nodes {
        n.wait();
    }

    let judged = judge(&mut client, &nodes, &killed, last_wall);
    assert_eq!(judged.schedules, nodes.len() * CHURN_SCHEDULES_PER_NODE);
    assert!(
        were_paused
            .iter()
            .any(|n| judged.stats.get(n).is_some_and(|s| s[1] > 0)),
        "a paused node dropped the schedules taken over from it"
    );
    eprintln!(
        "failover churn: {failovers} failovers ({} kills), {} nodes, {} schedules, {} committed \
         firings, none lost; {} started more than once or not committed",
        killed.len(),
        nodes.len(),
        judged.schedules,
        judged.firings,
        judged.repeated
    );
}

/// How many schedules each node (by index) holds now, by the database; nodes that have not
/// said who they are yet are left out.
fn holdings(client: &mut postgres::Client, nodes: &[Node]) -> BTreeMap<usize, i64> {
    let index = node_index(nodes);
    let mut held: BTreeMap<usize, i64> = index.values().map(|&n| (n, 0)).collect();
    for row in client
        .query(
            "SELECT owner_node, COUNT(*) FROM tickstep_schedules \
             WHERE owner_node IS NOT NULL GROUP BY owner_node",
            &[],
        )
        .unwrap()
    {
        let (owner, count): (i64, i64) = (row.get(0), row.get(1));
        if let Some(n) = index.get(&u64::try_from(owner).unwrap()) {
            held.insert(*n, count);
        }
    }
    held
}

/// What [`judge`] found.
struct Judged {
    /// Schedules created, across the nodes.
    schedules: usize,
    /// Committed firings.
    firings: usize,
    /// Points started more than once, or started and not committed (at-least-once effects).
    repeated: usize,
    /// Each node that finished: refused writes, schedules taken over from it, claimed.
    stats: BTreeMap<usize, Vec<u64>>,
}

/// Judges a run whose nodes `killed` were killed and whose last failover was at `last_wall`
/// (Unix ns): ids handed out once; every schedule's committed points each once, none missing
/// from its first to its last but the overlap skips it counted, still firing after `last_wall`;
/// no deadline moved back; nothing counted missed (catch-up `all` drops nothing); every other
/// node finished;
/// side effects as [`check_side_effects`] says.
fn judge(
    client: &mut postgres::Client,
    nodes: &[Node],
    killed: &BTreeSet<usize>,
    last_wall: u64,
) -> Judged {
    // Ids: each handed out once, across nodes.
    let mut created = BTreeSet::new();
    for n in nodes {
        for l in n
            .lines
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.starts_with("@C "))
        {
            assert!(created.insert(fields(l)[0]), "id handed out twice: {l}");
        }
    }
    let (committed, committer) = committed_points(client, created.len(), last_wall);
    let index = node_index(nodes);
    let committer: BTreeMap<(u64, u64), usize> = committer
        .into_iter()
        .map(|(k, owner)| (k, index[&owner]))
        .collect();
    let backwards: i64 = client
        .query_one("SELECT COUNT(*) FROM backwards", &[])
        .unwrap()
        .get(0);
    assert_eq!(backwards, 0, "a deadline went backwards");
    // Catch-up `all` drops nothing. Overlap `skip` may: a firing waiting for its write counts
    // as running (docs/schedules.md §11.42), and a loaded machine can delay that write past the
    // next point; every point it drops is counted, and `committed_points` holds each gap to
    // its schedule's count.
    let missed: i64 = client
        .query_one(
            "SELECT COALESCE(SUM(missed_count), 0)::bigint FROM tickstep_schedules",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(missed, 0, "catch-up `all` drops nothing");

    let stats: BTreeMap<usize, Vec<u64>> = nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| {
            let lines = n.lines.lock().unwrap();
            let s = lines.iter().find(|l| l.starts_with("@S "))?;
            Some((i, fields(s)))
        })
        .collect();
    for i in 0..nodes.len() {
        assert_eq!(
            stats.contains_key(&i),
            !killed.contains(&i),
            "node {i} finished unless it was killed"
        );
    }
    let parked = parked_points(client);
    let repeated = check_side_effects(nodes, &committed, &committer, &parked, &stats);
    Judged {
        schedules: created.len(),
        firings: committed.values().map(Vec::len).sum(),
        repeated,
        stats,
    }
}

/// Database node id -> node index, from what each node said (`@N`).
fn node_index(nodes: &[Node]) -> BTreeMap<u64, usize> {
    nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| {
            let lines = n.lines.lock().unwrap();
            let l = lines.iter().find(|l| l.starts_with("@N "))?;
            Some((fields(l)[0], i))
        })
        .collect()
}

/// Firings the nodes' clean shutdowns left waiting: never started, the next open starts them
/// (docs/schedules.md §11.42).
fn parked_points(client: &mut postgres::Client) -> BTreeSet<(u64, u64)> {
    let mut parked = BTreeSet::new();
    for row in client
        .query(
            "SELECT id, running FROM tickstep_schedules WHERE running IS NOT NULL",
            &[],
        )
        .unwrap()
    {
        let (id, running): (i64, String) = (row.get(0), row.get(1));
        let list: Vec<(Option<u64>, u64, u64)> = serde_json::from_str(&running).unwrap();
        for (_, point, started) in list {
            if started == 0 {
                parked.insert((u64::try_from(id).unwrap(), point));
            }
        }
    }
    parked
}

/// Per schedule, its committed points; and who committed each (schedule, point).
type Committed = (BTreeMap<u64, Vec<u64>>, BTreeMap<(u64, u64), u64>);

/// The committed log, per schedule, checked: every point once, none missing between the first
/// and the last but the overlap skips the schedule counted, all still firing after the
/// failovers.
fn committed_points(client: &mut postgres::Client, schedules: usize, last_wall: u64) -> Committed {
    // The committed log: every point once, none missing, all still firing after the failovers.
    let mut committed: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    // Which node committed each point (database node ids).
    let mut committer = BTreeMap::new();
    // Every (node, fence) that committed each point, for a failure to name them.
    let mut by_whom: BTreeMap<(u64, u64), Vec<(i64, i64)>> = BTreeMap::new();
    for row in client
        .query("SELECT schedule, point, node, fence FROM firing_log", &[])
        .unwrap()
    {
        let (s, p, n, f): (i64, i64, i64, i64) = (row.get(0), row.get(1), row.get(2), row.get(3));
        let (s, p) = (u64::try_from(s).unwrap(), u64::try_from(p).unwrap());
        committed.entry(s).or_default().push(p);
        committer.insert((s, p), u64::try_from(n).unwrap());
        by_whom.entry((s, p)).or_default().push((n, f));
    }
    assert_eq!(committed.len(), schedules, "every schedule fired");
    // The first point of each is one interval after its creation (docs/schedules.md §1.2): the
    // engine reads its clock for the point and for `created_at` a few microseconds apart, so
    // the first point is within half an interval of `created_at + interval`, and the second is
    // not.
    // Each schedule's creation and interval (the churn's nodes use a longer one).
    let created: BTreeMap<u64, (u64, u64)> = client
        .query(
            "SELECT id, created_at, interval_ns FROM tickstep_schedules",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| {
            let (id, at, every): (i64, i64, i64) = (r.get(0), r.get(1), r.get(2));
            let u = |v: i64| u64::try_from(v).unwrap();
            (u(id), (u(at), u(every)))
        })
        .collect();
    // What each schedule counted as dropped, for a failure to say whether a missing point was
    // counted (an overlap of a firing whose outcome came late, on a starved node) or lost.
    let dropped: BTreeMap<u64, (i64, i64)> = client
        .query(
            "SELECT id, overlap_count, missed_count FROM tickstep_schedules",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| {
            (
                u64::try_from(r.get::<_, i64>(0)).unwrap(),
                (r.get(1), r.get(2)),
            )
        })
        .collect();
    for (schedule, points) in &mut committed {
        points.sort_unstable();
        let (created_at, interval) = created[schedule];
        let first = created_at + interval;
        assert!(
            (first - interval / 2..first + interval / 2).contains(&points[0]),
            "schedule {schedule}: its first point committed ({} after creation)",
            points[0] - created_at
        );
        let mut skipped = 0;
        for w in points.windows(2) {
            assert_ne!(
                w[0],
                w[1],
                "schedule {schedule}: point {} committed twice, by (node, fence) {:?}",
                w[0],
                by_whom[&(*schedule, w[0])]
            );
            assert_eq!(
                (w[1] - w[0]) % interval,
                0,
                "schedule {schedule}: {} and {} are not points of its cadence",
                w[0],
                w[1]
            );
            skipped += (w[1] - w[0]) / interval - 1;
        }
        // Every point missing from the committed log was dropped by overlap `skip` and
        // counted so; none was lost.
        let (overlaps, _) = dropped[schedule];
        assert!(
            skipped <= u64::try_from(overlaps).unwrap(),
            "schedule {schedule}: {skipped} points missing from its committed log, but it \
             counted {overlaps} overlap skips"
        );
        assert!(
            *points.last().unwrap() > last_wall,
            "schedule {schedule} kept firing after the failovers"
        );
    }
    (committed, committer)
}

/// External effects: every committed firing was started, unless the node that committed it was
/// killed or fenced off before it could start it (a start waits for its commit, docs/schedules.md
/// §11.42; the next holder settles it as taken over) or its clean shutdown parked it (`parked`:
/// the next open starts it); a firing started but never committed, or
/// started twice, on a node killed or fenced off. Returns how many such points.
fn check_side_effects(
    nodes: &[Node],
    committed: &BTreeMap<u64, Vec<u64>>,
    committer: &BTreeMap<(u64, u64), usize>,
    parked: &BTreeSet<(u64, u64)>,
    stats: &BTreeMap<usize, Vec<u64>>,
) -> usize {
    let fenced = |node: &usize| stats.get(node).is_none_or(|s| s[0] > 0);
    let mut external: BTreeMap<(u64, u64), BTreeSet<u64>> = BTreeMap::new();
    for n in nodes {
        for l in n
            .lines
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.starts_with("@F "))
        {
            let f = fields(l);
            external.entry((f[0], f[1])).or_default().insert(f[2]);
        }
    }
    let mut repeated = 0;
    for (schedule, points) in committed {
        for p in points {
            let by = committer[&(*schedule, *p)];
            assert!(
                external.contains_key(&(*schedule, *p))
                    || fenced(&by)
                    || parked.contains(&(*schedule, *p)),
                "schedule {schedule} point {p} committed by node {by}, which was neither killed \
                 nor fenced off, but never started"
            );
        }
    }
    for ((schedule, point), by) in &external {
        let was_committed = committed
            .get(schedule)
            .is_some_and(|ps| ps.binary_search(point).is_ok());
        if !was_committed || by.len() > 1 {
            // A start beyond the one committed: one of the nodes that started it must have been
            // killed or fenced off (its write lost or refused), never a healthy node.
            repeated += 1;
            assert!(
                by.iter().any(|node| fenced(&(*node as usize))),
                "schedule {schedule} point {point} started by nodes {by:?} (committed: \
                 {was_committed}), none of them killed or fenced off"
            );
        }
    }
    repeated
}

fn unix_now() -> u64 {
    u64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos(),
    )
    .unwrap()
}
