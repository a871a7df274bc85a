//! The schedules section's several-nodes rows, on the server `TICKSTEP_PG_URL` names (see
//! [`postgres`](super::postgres)): engines sharing one `PostgreSQL` database
//! (docs/schedules.md §11.25–§11.28).
//!
//! | measure | ours | against |
//! |---|---|---|
//! | `fire_postgres_3nodes` | three engines (threads, a connection and store thread each) on one database, N due schedules each created on it and held by it; a round starts all three at once (barrier) and ends when the slowest has fired its N, reported the outcomes and had the batch committed; wall time per persisted firing over the 3N | `fire_postgres`'s one-node time per persisted firing, same run; goal ratio ≤ 1.0 (adding nodes must not lose aggregate throughput) |
//! | `claim_to_start_p50`, `claim_to_start_p99` | N due schedules released by a node closing cleanly; another node (lease 300 ms, so it claims every 100 ms) ticks every millisecond of real time: ms from the release's commit to the tick that starts each schedule, 5 rounds | goal p50 ≤ 100 ms, p99 ≤ 150 ms: one claim interval (a third of the lease) plus the claim itself |

use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use tickstep_kernel::clock::ManualClock;
use tickstep_schedules::OpenWorld;
use tickstep_schedules::testkit::CountingRunner;
use tickstep_schedules::{Outcome, RunId, Schedules, Value};

use super::Fixture;
use super::scratch::Scratch;
use crate::harness::{Measure, Row, median};

const NODES: usize = 3;

/// `fire_postgres_3nodes`, against the one-node ns per persisted firing measured in this run.
pub(super) fn fire_3nodes(
    admin_url: &str,
    n: usize,
    rounds: usize,
    one_node_ns: f64,
) -> Result<Row, postgres::Error> {
    let db = Scratch::new(admin_url, "nodes3")?;
    let barrier = Arc::new(Barrier::new(NODES));
    let threads: Vec<_> = (0..NODES)
        .map(|_| {
            let url = db.url.clone();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let mut node = Fixture::new(n, Some(Path::new(&url)));
                let mut one_round = || {
                    barrier.wait();
                    let start = Instant::now();
                    node.fire_all(n);
                    node.engine.wait_for_writes().expect("written");
                    start.elapsed()
                };
                one_round(); // warm-up
                (0..rounds).map(|_| one_round()).collect::<Vec<Duration>>()
            })
        })
        .collect();
    let per_node: Vec<Vec<Duration>> = threads
        .into_iter()
        .map(|t| t.join().expect("a node thread panicked"))
        .collect();
    // A round lasts as long as its slowest node.
    let mut samples: Vec<f64> = (0..rounds)
        .map(|r| {
            let wall = per_node.iter().map(|d| d[r]).max().unwrap_or_default();
            wall.as_nanos() as f64 / (NODES * n) as f64
        })
        .collect();
    let ours_ns = median(&mut samples);
    Ok(Row {
        name: "fire_postgres_3nodes",
        measure: Measure::Ratio {
            ours_ns,
            peer: "fire_postgres on one node, same run",
            peer_ns: one_node_ns,
            goal_ratio: 1.0,
        },
        note: format!(
            "{NODES} engines x {n} due every-1s schedules on one PostgreSQL database (loopback), \
             rounds started together, fire + outcomes + fenced write-behind until committed; \
             wall ns per persisted firing over all nodes ({:.0}/s aggregate vs {:.0}/s on one node: \
             {:.2}x)",
            1e9 / ours_ns,
            1e9 / one_node_ns,
            one_node_ns / ours_ns
        ),
    })
}

/// `claim_to_start_p50` and `claim_to_start_p99`.
pub(super) fn claim_to_start(admin_url: &str, n: usize) -> Result<Vec<Row>, postgres::Error> {
    const ROUNDS: usize = 5;
    let mut samples: Vec<f64> = Vec::with_capacity(ROUNDS * n);
    for round in 0..ROUNDS {
        let db = Scratch::new(admin_url, &format!("claims{round}"))?;
        let url = Path::new(&db.url);
        let mut config = super::config(n);
        config.lease = Duration::from_millis(300);
        let clock = ManualClock::new();
        let runner = CountingRunner::default();
        let taker = Schedules::open(url, clock.clone(), OpenWorld, runner.clone(), config)
            .expect("open the taking node");
        let giver = Fixture::new(n, Some(url));
        clock.advance(Duration::from_secs(1)); // their first point is now
        drop(giver); // a clean close hands every row back
        let released = Instant::now();
        let mut outcomes: Vec<RunId> = Vec::new();
        let mut started = 0;
        while started < n && released.elapsed() < Duration::from_secs(10) {
            let report = taker.tick().expect("tick");
            let ms = released.elapsed().as_secs_f64() * 1e3;
            samples.extend(std::iter::repeat_n(ms, report.started));
            started += report.started;
            outcomes.clear();
            runner.drain_started_into(&mut outcomes);
            for &run in &outcomes {
                taker.report(run, Outcome::Returned(Value::Int(0)));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            started, n,
            "the taking node started every released schedule"
        );
    }
    samples.sort_by(f64::total_cmp);
    let at = |q: usize| samples[(samples.len() * q / 100).min(samples.len() - 1)];
    let note = |which: &str| {
        format!(
            "{which} of ms from a node's clean close (its {n} due schedules released) to the tick \
             of another node (lease 300 ms: claims every 100 ms; ticking every 1 ms) that starts \
             each; {ROUNDS} rounds"
        )
    };
    Ok(vec![
        Row {
            name: "claim_to_start_p50",
            measure: Measure::Value {
                value: at(50),
                unit: "ms",
                goal: 100.0,
            },
            note: note("p50"),
        },
        Row {
            name: "claim_to_start_p99",
            measure: Measure::Value {
                value: at(99),
                unit: "ms",
                goal: 150.0,
            },
            note: note("p99"),
        },
    ])
}
