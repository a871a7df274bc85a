//! The hot-task profiler and the diagnostics window.

mod common;

use std::panic::Location;
use std::time::Duration;

use common::{Log, MS, SECOND, costly, server, with_config};
use tickstep_kernel::{Priority, SchedulerConfig};

#[test]
fn each_tasks_time_is_attributed_to_the_line_that_scheduled_it() {
    let (clock, sched) = server();
    let log = Log::new();
    let line = line!() + 2;
    for _ in 0..3 {
        let _ = sched.schedule(costly(&log, &clock, "a", 2 * MS), Priority::Normal);
    }
    let _ = sched.schedule(costly(&log, &clock, "b", MS), Priority::Normal);
    sched.step_with_budget(SECOND);
    let top = sched.top_tasks(5);
    assert_eq!(top.len(), 2);
    assert!(
        top[0].key.ends_with(&format!("profile.rs:{line}:23")),
        "{}",
        top[0].key
    );
    assert_eq!((top[0].time, top[0].calls, top[0].max), (6 * MS, 3, 2 * MS));
    assert_eq!((top[1].time, top[1].calls), (MS, 1));
}

#[test]
fn top_tasks_is_hottest_first_and_limited_to_count() {
    let (clock, sched) = server();
    let log = Log::new();
    let _ = sched
        .with_origin("cool")
        .schedule(costly(&log, &clock, "c", MS), Priority::Normal);
    let _ = sched
        .with_origin("hot")
        .schedule(costly(&log, &clock, "h", 5 * MS), Priority::Normal);
    let _ = sched
        .with_origin("warm")
        .schedule(costly(&log, &clock, "w", 3 * MS), Priority::Normal);
    sched.step_with_budget(SECOND);
    let keys: Vec<String> = sched.top_tasks(2).into_iter().map(|h| h.key).collect();
    assert_eq!(keys, ["hot", "warm"]);
}

#[test]
fn set_task_origin_names_a_call_site_in_the_profiler() {
    #[track_caller]
    fn spawn_process(sched: &tickstep_kernel::FrameScheduler) -> &'static Location<'static> {
        let _ = sched.schedule(|| {}, Priority::Normal);
        Location::caller()
    }
    let (_clock, sched) = server();
    let site = spawn_process(&sched);
    sched.set_task_origin(site, "Process Lobby");
    sched.step_with_budget(SECOND);
    assert_eq!(sched.top_tasks(1)[0].key, "Process Lobby");
}

#[test]
fn reset_profile_clears_time_and_calls() {
    let (clock, sched) = server();
    let log = Log::new();
    let _ = sched.schedule(costly(&log, &clock, "a", MS), Priority::Normal);
    sched.step_with_budget(SECOND);
    sched.reset_profile();
    assert!(sched.top_tasks(5).is_empty());
    let _ = sched
        .with_origin("next")
        .schedule(costly(&log, &clock, "b", MS), Priority::Normal);
    sched.step_with_budget(SECOND);
    assert_eq!(sched.top_tasks(5)[0].key, "next");
}

#[test]
fn profiling_off_attributes_nothing_but_keeps_the_aggregate_stats() {
    let (clock, sched) = with_config(SchedulerConfig::server().profile_tasks(false));
    let log = Log::new();
    let _ = sched.schedule(costly(&log, &clock, "a", 2 * MS), Priority::Normal);
    let _ = sched.schedule(costly(&log, &clock, "b", 2 * MS), Priority::Normal);
    sched.step_with_budget(MS);
    assert!(sched.top_tasks(5).is_empty());
    let stats = sched.stats();
    assert_eq!(
        (stats.tasks_run, stats.tasks_deferred, stats.last_step),
        (1, 1, 2 * MS)
    );
    assert_eq!(stats.window_task_key, None);
    assert!(
        stats.window_deferred_keys.is_empty(),
        "no scan of the deferred backlog"
    );
}

#[test]
fn turning_profiling_off_clears_the_profile_and_window_attribution() {
    let (clock, sched) = server();
    let log = Log::new();
    let _ = sched.schedule(costly(&log, &clock, "a", 2 * MS), Priority::Normal);
    let _ = sched.schedule(costly(&log, &clock, "b", 2 * MS), Priority::Normal);
    sched.step_with_budget(MS);
    assert!(!sched.top_tasks(5).is_empty());
    sched.set_task_profiling(false);
    assert!(!sched.profiles_tasks());
    assert!(sched.top_tasks(5).is_empty());
    let stats = sched.stats();
    assert_eq!(
        (stats.window_task_key, stats.window_deferred_keys.len()),
        (None, 0)
    );
    assert_eq!(stats.window_deferred, 1, "aggregate window stats stay");
}

#[test]
fn tasks_scheduled_while_profiling_was_off_are_attributed_once_it_is_on() {
    let (clock, sched) = with_config(SchedulerConfig::server().profile_tasks(false));
    let log = Log::new();
    let _ = sched.schedule(costly(&log, &clock, "a", MS), Priority::Normal);
    sched.set_task_profiling(true);
    sched.step_with_budget(SECOND);
    assert_eq!(sched.top_tasks(1)[0].calls, 1);
}

#[test]
fn the_window_tracks_the_longest_task_and_the_deferred_origins() {
    let (clock, sched) = server();
    let log = Log::new();
    let _ = sched
        .with_origin("long")
        .schedule(costly(&log, &clock, "l", 4 * MS), Priority::High);
    for _ in 0..3 {
        let _ = sched
            .with_origin("starved")
            .schedule(log.task("s"), Priority::Low);
    }
    let _ = sched
        .with_origin("idle")
        .schedule(log.task("i"), Priority::Background);
    sched.step_with_budget(MS);
    let window = sched.take_step_window();
    assert_eq!(window.steps, 1);
    assert_eq!(window.deferred, 4);
    assert_eq!(
        (window.longest_task, window.longest_task_origin.as_deref()),
        (4 * MS, Some("long"))
    );
    assert_eq!(
        window.top_deferred,
        [("starved".to_owned(), 3), ("idle".to_owned(), 1)]
    );
    assert_eq!(window.top_deferred_summary(), "starved x3, idle x1");
    // Drained.
    let empty = sched.take_step_window();
    assert_eq!(
        (empty.steps, empty.deferred, empty.longest_task_origin),
        (0, 0, None)
    );
}

#[test]
fn the_window_sums_deferrals_over_steps_so_bursts_are_not_missed() {
    let (clock, sched) = server();
    let log = Log::new();
    for _ in 0..3 {
        let _ = sched.schedule(costly(&log, &clock, "a", 2 * MS), Priority::Normal);
        let _ = sched.schedule(costly(&log, &clock, "b", 2 * MS), Priority::Normal);
        sched.step_with_budget(MS);
    }
    sched.step_with_budget(SECOND); // drains the backlog: a point sample reads zero
    assert_eq!(sched.stats().tasks_deferred, 0);
    let window = sched.take_step_window();
    assert_eq!(
        (window.steps, window.deferred, window.longest_step),
        (4, 1 + 2 + 3, 6 * MS)
    );
    let _ = Duration::ZERO;
}

#[test]
fn profiler_zones_can_be_switched_globally() {
    tickstep_kernel::set_profiler_zones(true);
    let (_clock, sched) = server();
    let log = Log::new();
    let _ = sched.schedule(log.task("zoned"), Priority::Normal);
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["zoned"]);
    assert!(tickstep_kernel::profiler_zones());
    tickstep_kernel::set_profiler_zones(false);
    assert!(!tickstep_kernel::profiler_zones());
}
