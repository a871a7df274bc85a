//! `/metrics` served over a real socket, parsed by a real Prometheus text parser, and checked
//! against what the kernel, commands and schedules counted in the same run, all on a
//! `ManualClock` (docs/observability.md §1–§4).
//!
//! One test in this binary: the recorder is process-wide, so every value below is this run's.
//! The values compared are counts carried in `f64` by the text format: exact, so `==` is right.
#![allow(clippy::float_cmp)]

use std::collections::HashMap;
use std::time::Duration;

use prometheus_parse::{Scrape, Value as Sample};
use tickstep::commands::{CommandScheduler, Mechanism, ScheduleResult};
use tickstep::kernel::clock::ManualClock;
use tickstep::kernel::{FrameLoop, FrameScheduler, Priority, Role, SchedulerConfig};
use tickstep::schedules::testkit::{TestRunner, TestWorld};
use tickstep::schedules::{FaultKind, Options, Outcome, Schedules, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The scrape as `(name, sorted labels) -> value`; histograms as their `+Inf` bucket count.
fn series(scrape: &Scrape) -> HashMap<(String, String), f64> {
    let mut out = HashMap::new();
    for sample in &scrape.samples {
        let mut labels: Vec<_> = sample
            .labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        labels.sort();
        let value = match &sample.value {
            Sample::Counter(v) | Sample::Gauge(v) | Sample::Untyped(v) => *v,
            Sample::Histogram(buckets) => {
                buckets
                    .iter()
                    .find(|b| b.less_than.is_infinite())
                    .expect("a +Inf bucket")
                    .count
            }
            Sample::Summary(_) => panic!(
                "{} is a summary; docs/observability.md §4.2 says histogram",
                sample.metric
            ),
        };
        out.insert((sample.metric.clone(), labels.join(",")), value);
    }
    out
}

fn get(series: &HashMap<(String, String), f64>, name: &str, labels: &str) -> f64 {
    *series
        .get(&(name.to_owned(), labels.to_owned()))
        .unwrap_or_else(|| panic!("no series {name}{{{labels}}} in the scrape"))
}

/// Fetches `path` from `addr` with a bare HTTP/1.1 GET; bounded by the caller's timeout.
async fn http_get(addr: std::net::SocketAddr, path: &str) -> (String, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    (head.to_owned(), body.to_owned())
}

/// docs/observability.md §4.6: each metric family in the answer has a `# HELP` line with a
/// sentence and a `# TYPE` line, and the layers' families are all there.
fn every_family_says_what_it_is(body: &str) {
    let mut help = HashMap::new();
    let mut kind = HashMap::new();
    for line in body.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, text) = rest.split_once(' ').unwrap_or((rest, ""));
            help.insert(name.to_owned(), text.to_owned());
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind_name) = rest.split_once(' ').expect("# TYPE name kind");
            kind.insert(name.to_owned(), kind_name.to_owned());
        }
    }
    let families: std::collections::BTreeSet<&str> = body
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let name = l.split(['{', ' ']).next().unwrap();
            ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|suffix| {
                    name.strip_suffix(suffix)
                        .filter(|f| kind.get(*f).is_some_and(|k| k == "histogram"))
                })
                .unwrap_or(name)
        })
        .collect();
    assert!(families.len() >= 20, "the layers' families: {families:?}");
    for family in families {
        let text = help
            .get(family)
            .unwrap_or_else(|| panic!("{family} has no # HELP line"));
        assert!(
            text.ends_with('.') && text.len() > 15,
            "{family}'s help says little: {text:?}"
        );
        assert!(kind.contains_key(family), "{family} has no # TYPE line");
    }
}

#[test]
#[allow(clippy::too_many_lines)] // one run and one scrape: the checks read top to bottom
fn metrics_endpoint_matches_what_the_engines_counted() {
    let handle = tickstep::prometheus::install_recorder().expect("the only recorder");
    let clock = ManualClock::new();

    // Kernel: steps, one deferral, and idle frames (docs/observability.md §2).
    let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    let _ = sched.schedule(|| {}, Priority::Kernel);
    let _ = sched.schedule(|| {}, Priority::High);
    let _ = sched.schedule(|| {}, Priority::Low);
    sched.step_with_budget(Duration::ZERO); // runs Kernel, defers High and Low
    sched.step();
    sched.step();
    let idle_loop = FrameLoop::new(clock.clone(), Role::Server, 60);
    idle_loop.run_frames(30);

    // Schedules: three one-shots that return, fault and are killed; one whose target is gone.
    let world = TestWorld::new();
    let wiz = world.add_wizard();
    world.add_verb(wiz, "job");
    let doomed = world.add_object(wiz);
    world.add_verb(doomed, "job");
    let runner = TestRunner::new();
    let dir = tempfile::tempdir().unwrap();
    let engine = Schedules::open(
        dir.path().join("schedules.db"),
        clock.clone(),
        world.clone(),
        runner.clone(),
        tickstep::schedules::Config::default(),
    )
    .expect("a fresh SQLite store");
    let mut txn = engine.begin(wiz);
    let now = engine.now_unix_seconds();
    for _ in 0..3 {
        txn.schedule_at(wiz, "job", now + 2.0, vec![], Options::new())
            .unwrap();
    }
    txn.schedule_at(doomed, "job", now + 2.0, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();
    world.recycle(doomed);
    clock.advance(Duration::from_millis(2_500)); // each starts 0.5 s late
    engine.tick().unwrap();
    let runs: Vec<_> = runner.started().iter().map(|s| s.0).collect();
    assert_eq!(runs.len(), 3);
    assert!(engine.report(runs[0], Outcome::Returned(Value::Int(0))));
    assert!(engine.report(
        runs[1],
        Outcome::Fault {
            kind: FaultKind::Error,
            value: Value::from("boom")
        }
    ));
    assert!(engine.report(runs[2], Outcome::Killed));
    engine.tick().unwrap();

    // Commands: a queued conflict, then an interruption by a higher priority.
    let commands = CommandScheduler::new(clock.clone());
    let arm = Mechanism::new(&commands, "arm");
    let holder = arm
        .run(|co| async move {
            co.park().await;
        })
        .with_priority(2)
        .named("holder");
    let loser = arm
        .run(|co| async move {
            co.park().await;
        })
        .named("loser");
    let boss = arm
        .run(|co| async move {
            co.park().await;
        })
        .with_priority(5)
        .named("boss");
    assert_eq!(commands.schedule(&holder), ScheduleResult::Success);
    assert!(matches!(
        commands.schedule(&loser),
        ScheduleResult::LowerPriorityThanQueued { .. }
    ));
    commands.run().unwrap();
    assert!(matches!(
        commands.schedule(&loser),
        ScheduleResult::LowerPriorityThanRunning { .. }
    ));
    assert_eq!(commands.schedule(&boss), ScheduleResult::Success);
    commands.run().unwrap();
    let command_cycles = 2.0;

    // Serve /metrics on loopback and scrape it, bounded in time.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (head, body) = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = tickstep::prometheus::metrics_router(handle.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        tokio::time::timeout(Duration::from_secs(10), http_get(addr, "/metrics"))
            .await
            .expect("the scrape answers within 10 s")
    });
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_lowercase()
            .contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    let scrape =
        Scrape::parse(body.lines().map(|l| Ok(l.to_owned()))).expect("valid Prometheus text");
    let s = series(&scrape);
    every_family_says_what_it_is(&body);

    // Kernel against its own statistics.
    let stats = sched.stats();
    assert_eq!(stats.steps, 3);
    assert_eq!(
        get(&s, "tickstep_kernel_steps_total", ""),
        stats.steps as f64
    );
    assert_eq!(
        get(&s, "tickstep_kernel_step_seconds", ""),
        stats.steps as f64
    );
    assert_eq!(get(&s, "tickstep_kernel_deferred_tasks_total", ""), 2.0);
    assert_eq!(
        get(&s, "tickstep_kernel_pending_tasks", "priority=low"),
        0.0
    );
    assert_eq!(
        get(&s, "tickstep_kernel_frames_total", ""),
        idle_loop.frame_count() as f64
    );
    assert_eq!(get(&s, "tickstep_kernel_idle_frames_total", ""), 30.0);

    // Schedules against schedule_info and the runner.
    let started = runner.started().len() as f64;
    assert_eq!(
        get(&s, "tickstep_schedules_starts_total", "result=started"),
        started
    );
    assert_eq!(
        get(&s, "tickstep_schedules_starts_total", "result=target_gone"),
        1.0
    );
    assert_eq!(
        get(&s, "tickstep_schedules_firings_total", "outcome=returned"),
        1.0
    );
    assert_eq!(
        get(&s, "tickstep_schedules_firings_total", "outcome=fault"),
        1.0
    );
    assert_eq!(
        get(&s, "tickstep_schedules_firings_total", "outcome=killed"),
        1.0
    );
    assert_eq!(
        get(
            &s,
            "tickstep_schedules_retired_total",
            "reason=invalid_target"
        ),
        1.0
    );
    assert_eq!(get(&s, "tickstep_schedules_lateness_seconds", ""), started);
    let sum = scrape
        .samples
        .iter()
        .find(|x| x.metric == "tickstep_schedules_lateness_seconds_sum")
        .map(|x| match x.value {
            Sample::Untyped(v) | Sample::Counter(v) | Sample::Gauge(v) => v,
            _ => f64::NAN,
        })
        .expect("a lateness sum");
    assert!(
        (sum - 1.5).abs() < 1e-6,
        "three firings 0.5 s late each, got {sum}"
    );
    assert_eq!(
        get(&s, "tickstep_schedules_live", ""),
        engine.live_count() as f64
    );
    assert_eq!(get(&s, "tickstep_schedules_running", ""), 0.0);
    assert_eq!(get(&s, "tickstep_schedules_ticks_total", ""), 2.0);
    // The SQLite store wrote behind the ticks, and nothing is left queued or failed.
    assert!(get(&s, "tickstep_schedules_store_write_seconds", "store=sqlite") >= 1.0);
    assert_eq!(
        get(
            &s,
            "tickstep_schedules_store_write_failures_total",
            "store=sqlite"
        ),
        0.0
    );
    assert_eq!(
        get(
            &s,
            "tickstep_schedules_store_queued_batches",
            "store=sqlite"
        ),
        0.0
    );

    // Commands against the scheduler.
    assert_eq!(
        get(&s, "tickstep_commands_cycles_total", ""),
        command_cycles
    );
    assert_eq!(
        get(&s, "tickstep_commands_running", ""),
        commands.running().len() as f64
    );
    assert_eq!(commands.running().len(), 1);
    assert_eq!(get(&s, "tickstep_commands_interruptions_total", ""), 1.0);
    assert_eq!(
        get(&s, "tickstep_commands_conflicts_total", "with=queued"),
        1.0
    );
    assert_eq!(
        get(&s, "tickstep_commands_conflicts_total", "with=running"),
        1.0
    );

    // Bounded labels: no series carries an id, owner or verb.
    for sample in &scrape.samples {
        for key in sample.labels.keys() {
            assert!(
                [
                    "priority", "result", "outcome", "reason", "with", "store", "le"
                ]
                .contains(&key.as_str()),
                "{} has an unbounded label {key}",
                sample.metric
            );
        }
    }
}
