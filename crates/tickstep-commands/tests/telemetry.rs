//! Telemetry snapshots and the greedy-loop watchdog (time from the `ManualClock`).

mod common;

use std::time::Duration;

use common::{cycles, parked, parked_on, record, setup, take};
use tickstep_commands::{Command, DEFAULT_WATCHDOG_LIMIT, EventKind, Mechanism};
use tickstep_kernel::clock::ManualClock;

/// A command whose every mount takes `per_mount` of (virtual) time, then yields.
fn busy(clock: &ManualClock, name: &str, per_mount: Duration) -> Command {
    let clock = clock.clone();
    Command::no_requirements()
        .executing(move |co| {
            let clock = clock.clone();
            async move {
                loop {
                    clock.advance(per_mount);
                    co.yield_now().await;
                }
            }
        })
        .named(name)
}

#[test]
fn telemetry_lists_queued_and_running_commands_with_their_details() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let child = parked_on(&arm, "child", 1);
    let c = child.clone();
    let parent = arm
        .run(move |co| {
            let c = c.clone();
            async move {
                co.await_cmd(&c).await.unwrap();
            }
        })
        .with_priority(4)
        .named("parent");
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    scheduler.schedule(&parked("waiting"));
    let t = scheduler.telemetry();
    assert_eq!(t.cycle, 1);
    assert_eq!(t.queued.len(), 1);
    assert_eq!(t.queued[0].name, "waiting");
    assert_eq!(t.running.len(), 2);
    let (p, c) = (&t.running[0], &t.running[1]);
    assert_eq!((p.name.as_str(), p.priority, p.parent), ("parent", 4, None));
    assert_eq!(
        (c.name.as_str(), c.priority, c.parent),
        ("child", 4, Some(p.id))
    );
    assert_eq!(c.requirements, ["arm"]);
    assert_ne!(p.id, c.id);
}

#[test]
fn telemetry_reports_last_and_total_run_time_per_command_and_the_whole_run() {
    let (clock, scheduler) = setup();
    let slow = busy(&clock, "slow", Duration::from_millis(3));
    scheduler.schedule(&slow);
    scheduler.run().unwrap();
    scheduler.run().unwrap();
    let t = scheduler.telemetry();
    let info = &t.running[0];
    assert_eq!(info.last_run_time, Duration::from_millis(3));
    assert_eq!(info.total_run_time, Duration::from_millis(6));
    assert_eq!(t.last_run_time, Duration::from_millis(3));
}

#[test]
fn nested_mounts_are_timed_separately() {
    let (clock, scheduler) = setup();
    let child = busy(&clock, "child", Duration::from_millis(2));
    let c = child.clone();
    let inner_clock = clock.clone();
    let parent = Command::no_requirements()
        .executing(move |co| {
            let (c, clock) = (c.clone(), inner_clock.clone());
            async move {
                clock.advance(Duration::from_millis(5));
                co.await_cmd(&c).await.unwrap();
            }
        })
        .named("parent");
    scheduler.schedule(&parent);
    scheduler.run().unwrap();
    let t = scheduler.telemetry();
    let parent_info = t.running.iter().find(|i| i.name == "parent").unwrap();
    let child_info = t.running.iter().find(|i| i.name == "child").unwrap();
    assert_eq!(child_info.last_run_time, Duration::from_millis(2));
    assert_eq!(
        parent_info.last_run_time,
        Duration::from_millis(7),
        "includes its child"
    );
}

#[test]
fn watchdog_reports_a_mount_longer_than_the_limit_by_name() {
    let (clock, scheduler) = setup();
    let events = common::record_events(&scheduler);
    let greedy = busy(&clock, "greedy", Duration::from_millis(25));
    scheduler.schedule(&greedy);
    scheduler.run().unwrap();
    let overran: Vec<_> = events
        .borrow()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Overran { .. }))
        .cloned()
        .collect();
    assert_eq!(overran.len(), 1);
    assert_eq!(&*overran[0].name, "greedy");
    assert_eq!(
        overran[0].kind,
        EventKind::Overran {
            elapsed: Duration::from_millis(25),
            limit: DEFAULT_WATCHDOG_LIMIT
        }
    );
}

#[test]
fn watchdog_stays_quiet_within_the_limit_and_when_off() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    scheduler.schedule(&busy(&clock, "fine", Duration::from_millis(20)));
    scheduler.run().unwrap();
    assert!(!take(&log).iter().any(|e| e.starts_with("Overran")));
    scheduler.set_watchdog_limit(None);
    scheduler.schedule(&busy(&clock, "greedy", Duration::from_secs(1)));
    scheduler.run().unwrap();
    assert!(!take(&log).iter().any(|e| e.starts_with("Overran")));
}

#[test]
fn watchdog_limit_is_configurable() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    scheduler.set_watchdog_limit(Some(Duration::from_millis(1)));
    scheduler.schedule(&busy(&clock, "slowish", Duration::from_millis(2)));
    scheduler.run().unwrap();
    assert!(take(&log).contains(&"Overran slowish".to_owned()));
}

#[test]
fn mount_timing_off_skips_per_command_times_and_the_watchdog() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    scheduler.set_mount_timing(false);
    scheduler.schedule(&busy(&clock, "greedy", Duration::from_millis(30)));
    scheduler.run().unwrap();
    let t = scheduler.telemetry();
    assert_eq!(t.running[0].last_run_time, Duration::ZERO);
    assert_eq!(
        t.last_run_time,
        Duration::from_millis(30),
        "the whole run is still timed"
    );
    assert!(!take(&log).iter().any(|e| e.starts_with("Overran")));
}

/// docs/commands.md §10.4: a yielding mount keeps its end reading raw while nobody listens; a
/// listener added later in the same `run()` still stamps events with the latest mount's end.
#[test]
fn a_listener_added_mid_run_stamps_events_with_the_latest_mount_end() {
    let (clock, scheduler) = setup();
    let child = parked("child");
    let log = std::rc::Rc::new(std::cell::RefCell::new(None));
    let (sink, handle) = (log.clone(), scheduler.clone());
    let adder = Command::no_requirements()
        .executing(move |co| {
            let (child, sink, handle) = (child.clone(), sink.clone(), handle.clone());
            async move {
                *sink.borrow_mut() = Some(common::record_events(&handle));
                co.fork([&child]).unwrap();
                co.park().await;
            }
        })
        .named("adder");
    // Scheduled last, so mounted first (newest first): its 5 ms mount ends before `adder` runs.
    scheduler.schedule(&adder);
    scheduler.schedule(&busy(&clock, "slow", Duration::from_millis(5)));
    scheduler.run().unwrap();
    let events = log.borrow().clone().expect("adder ran");
    let events = events.borrow();
    let first = events.first().expect("the fork was reported");
    assert_eq!(&*first.name, "child");
    assert_eq!(first.at.as_nanos(), 5_000_000, "{events:?}");
    let running = scheduler.running();
    let slow = running.iter().find(|i| i.name == "slow").unwrap();
    assert_eq!(slow.last_run_time, Duration::from_millis(5));
}

/// docs/commands.md §10.5: a reused snapshot equals a fresh one however the lists change
/// (commands queued, started, nested, interrupted, ended; more and then fewer of them).
#[test]
fn telemetry_into_a_reused_snapshot_equals_a_fresh_one() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let wrist = Mechanism::new(&scheduler, "wrist");
    let low = arm
        .run(|co| async move {
            co.park().await;
        })
        .with_priority(1)
        .named("low");
    let high = Command::requiring(&arm)
        .requiring(&wrist)
        .executing(|co| async move {
            co.park().await;
        })
        .with_priority(5)
        .named("high");
    let child = parked("child");
    let inner = child.clone();
    let parent = Command::no_requirements()
        .executing(move |co| {
            let child = inner.clone();
            async move {
                co.await_cmd(&child).await.unwrap();
            }
        })
        .named("parent");
    let others: Vec<Command> = (0..5).map(|i| parked(&format!("other {i}"))).collect();
    let mut snapshot = scheduler.telemetry();
    let steps: [&dyn Fn(); 5] = [
        &|| drop(scheduler.schedule(&low)),
        &|| others.iter().for_each(|c| drop(scheduler.schedule(c))),
        &|| {
            drop(scheduler.schedule(&high));
            drop(scheduler.schedule(&parent));
        },
        &|| others.iter().take(4).for_each(|c| scheduler.cancel(c)),
        &|| scheduler.cancel_all(),
    ];
    for step in steps {
        step();
        scheduler.telemetry_into(&mut snapshot);
        assert_eq!(snapshot, scheduler.telemetry(), "queued");
        scheduler.run().unwrap();
        clock.advance(Duration::from_millis(20));
        scheduler.telemetry_into(&mut snapshot);
        assert_eq!(snapshot, scheduler.telemetry(), "after run()");
    }
    assert!(snapshot.running.is_empty() && snapshot.queued.is_empty());
}
