//! Failover with real processes (docs/schedules.md §11.25–§11.28): three node processes (this
//! test binary, re-executed) share one `PostgreSQL` database and fire hundreds of schedules every
//! 100 ms on the real clock. One node is `SIGKILL`ed mid-run; another is `SIGSTOP`ped past its
//! lease and then `SIGCONT`ed, so its late writes meet rows the others took over.
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
//! from its first to its last (catch-up `all`: none missed); every schedule still fired after
//! the failovers; no deadline went backwards; no id handed out twice; the paused node's late
//! writes were refused and counted; every committed firing was also started (external), and a
//! firing started but never committed happened only on a node that was killed or had writes
//! refused. Bounded: about 15 s of real time; outcomes only, never durations.

mod common;

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::rc::Rc;
use std::time::{Duration, Instant};

use common::nodes::{Node, fields};

use tickstep_kernel::clock::{ManualClock, SystemClock};
use tickstep_schedules::testkit::TestWorld;
use tickstep_schedules::{
    Catchup, Firing, Options, Outcome, Overlap, Refused, RunId, Runner, Schedules, Value,
};

const CHILD_URL: &str = "TICKSTEP_FAILOVER_URL";
const CHILD_NODE: &str = "TICKSTEP_FAILOVER_NODE";
const SCHEDULES_PER_NODE: usize = 70;
const LEASE: Duration = Duration::from_secs(2);
/// How long each node runs after creating its schedules.
const RUN_FOR: Duration = Duration::from_secs(12);
const KILL_AT: Duration = Duration::from_secs(2);
const STOP_AT: Duration = Duration::from_secs(3);
/// Well past the lease, so the others take the stopped node's schedules over.
const CONT_AT: Duration = Duration::from_secs(8);

/// Prints each firing as it starts (the external log) and hands out run ids unique per node.
#[derive(Clone)]
struct LoggingRunner {
    node: u64,
    next: Rc<Cell<u64>>,
    started: Rc<RefCell<Vec<RunId>>>,
}

impl Runner for LoggingRunner {
    fn start(&self, firing: &Firing) -> Result<RunId, Refused> {
        let n = self.next.get() + 1;
        self.next.set(n);
        let run = RunId((self.node << 40) | n);
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
        Ok(run)
    }
}

/// A node's body; a no-op unless the parent set the environment.
#[test]
fn failover_node_process_entry() {
    let Ok(url) = std::env::var(CHILD_URL) else {
        return;
    };
    let node: u64 = std::env::var(CHILD_NODE).unwrap().parse().unwrap();
    let world = TestWorld::new();
    let wiz = world.add_wizard();
    world.add_verb(wiz, "ring");
    let runner = LoggingRunner {
        node,
        next: Rc::new(Cell::new(0)),
        started: Rc::new(RefCell::new(Vec::new())),
    };
    let mut config = common::config();
    config.lease = LEASE;
    let engine =
        Schedules::open(&url, SystemClock::new(), world, runner.clone(), config).expect("open");
    let mut txn = engine.begin(wiz);
    let options = Options::new()
        .catchup(Catchup::All)
        .overlap(Overlap::Concurrent);
    let ids: Vec<_> = (0..SCHEDULES_PER_NODE)
        .map(|_| {
            txn.schedule_every(wiz, "ring", 0.1, vec![], options.clone())
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
    while Instant::now() < until {
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

#[test]
fn three_nodes_one_killed_one_paused_past_its_lease_fire_every_point_once() {
    let url = pg_or_skip!("failover");
    // Migrate, then install the committed log on the tables the nodes will write.
    drop(
        Schedules::open(
            &url,
            ManualClock::new(),
            TestWorld::new(),
            tickstep_schedules::testkit::TestRunner::new(),
            common::config(),
        )
        .unwrap(),
    );
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client.batch_execute(common::pg::COMMITTED_LOG).unwrap();

    let mut nodes: Vec<Node> = (0..3)
        .map(|n| {
            let env = [(CHILD_URL, url.clone()), (CHILD_NODE, n.to_string())];
            Node::spawn("failover_node_process_entry", &env)
        })
        .collect();
    let give_up = Instant::now() + Duration::from_secs(30);
    while !nodes.iter().all(|n| n.said("@READY")) {
        assert!(Instant::now() < give_up, "the nodes did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let start = Instant::now();
    let at = |t: Duration| std::thread::sleep(t.saturating_sub(start.elapsed()));
    at(KILL_AT);
    nodes[0].signal("-KILL");
    at(STOP_AT);
    nodes[1].signal("-STOP");
    at(CONT_AT);
    let cont_wall = unix_now();
    nodes[1].signal("-CONT");
    let _ = nodes[0].child.wait();
    for n in &mut nodes[1..] {
        n.wait();
    }

    // Ids: each handed out once, across nodes.
    let mut created = BTreeSet::new();
    for n in &nodes {
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
    assert_eq!(created.len(), 3 * SCHEDULES_PER_NODE);

    let (committed, committer) = committed_points(&mut client, created.len(), cont_wall);
    let index = node_index(&nodes);
    let committer: BTreeMap<(u64, u64), usize> = committer
        .into_iter()
        .map(|(k, owner)| (k, index[&owner]))
        .collect();
    let backwards: i64 = client
        .query_one("SELECT COUNT(*) FROM backwards", &[])
        .unwrap()
        .get(0);
    assert_eq!(backwards, 0, "a deadline went backwards");
    let missed: i64 = client
        .query_one(
            "SELECT COALESCE(SUM(missed_count + overlap_count), 0)::bigint FROM tickstep_schedules",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(
        missed, 0,
        "catch-up `all` and overlap `concurrent` drop nothing"
    );

    // The paused node's late writes were refused and counted; it dropped what it lost.
    let stats: BTreeMap<usize, Vec<u64>> = nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| {
            let lines = n.lines.lock().unwrap();
            let s = lines.iter().find(|l| l.starts_with("@S "))?;
            Some((i, fields(s)))
        })
        .collect();
    assert!(!stats.contains_key(&0), "the killed node never finished");
    let paused = &stats[&1];
    assert!(paused[0] > 0, "the paused node's late writes were refused");
    assert!(paused[1] > 0, "and it dropped the schedules it lost");

    let parked = parked_points(&mut client);
    let repeated = check_side_effects(&nodes, &committed, &committer, &parked, &stats);
    eprintln!(
        "failover: {} committed firings, {} started more than once or not committed \
         (at-least-once side effects), paused node refused {} writes",
        committed.values().map(Vec::len).sum::<usize>(),
        repeated,
        paused[0]
    );
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
        for (run, point, started) in list {
            if run.is_none() && started == 0 {
                parked.insert((u64::try_from(id).unwrap(), point));
            }
        }
    }
    parked
}

/// Per schedule, its committed points; and who committed each (schedule, point).
type Committed = (BTreeMap<u64, Vec<u64>>, BTreeMap<(u64, u64), u64>);

/// The committed log, per schedule, checked: every point once, none missing between the first
/// and the last, all still firing after the failovers.
fn committed_points(client: &mut postgres::Client, schedules: usize, cont_wall: u64) -> Committed {
    // The committed log: every point once, none missing, all still firing after the failovers.
    let mut committed: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    // Which node committed each point (database node ids).
    let mut committer = BTreeMap::new();
    for row in client
        .query("SELECT schedule, point, node FROM firing_log", &[])
        .unwrap()
    {
        let (s, p, n): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
        let (s, p) = (u64::try_from(s).unwrap(), u64::try_from(p).unwrap());
        committed.entry(s).or_default().push(p);
        committer.insert((s, p), u64::try_from(n).unwrap());
    }
    assert_eq!(committed.len(), schedules, "every schedule fired");
    let interval = 100_000_000;
    for (schedule, points) in &mut committed {
        points.sort_unstable();
        for w in points.windows(2) {
            assert_ne!(
                w[0], w[1],
                "schedule {schedule}: point {} committed twice",
                w[0]
            );
            assert_eq!(
                w[1] - w[0],
                interval,
                "schedule {schedule}: points missing between {} and {}",
                w[0],
                w[1]
            );
        }
        assert!(
            *points.last().unwrap() > cont_wall,
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
