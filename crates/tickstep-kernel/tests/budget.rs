//! The budget: deferral, the budget-exempt Kernel queue, starvation order, and the modes.

mod common;

use std::rc::Rc;
use std::time::Duration;

use common::{Log, MS, SECOND, costly, server, with_config};
use tickstep_kernel::{BudgetMode, FrameStats, Priority, SchedulerConfig};

#[test]
fn kernel_priority_is_budget_exempt() {
    let (clock, sched) = server();
    let log = Log::new();
    for i in 0..3 {
        let _ = sched.schedule(
            costly(&log, &clock, &format!("k{i}"), 10 * MS),
            Priority::Kernel,
        );
    }
    let _ = sched.schedule(log.task("high"), Priority::High);
    sched.step_with_budget(MS);
    assert_eq!(log.take(), ["k0", "k1", "k2"]);
    assert_eq!(sched.stats().tasks_deferred, 1);
}

#[test]
fn step_zero_runs_only_kernel_work() {
    let (clock, sched) = server();
    let log = Log::new();
    let _ = sched.schedule(log.task("kernel"), Priority::Kernel);
    let _ = sched.schedule(log.task("high"), Priority::High);
    let _frame = sched
        .every(Duration::ZERO, log.every("every0"), Priority::Normal)
        .unwrap();
    let _timer = sched.after(MS, log.task("timer"), Priority::Low).unwrap();
    clock.advance(MS);
    sched.step_with_budget(Duration::ZERO);
    assert_eq!(log.take(), ["kernel"]);
    // Due timers and every(0) jobs still moved into their queues.
    assert_eq!(sched.queue_depths().queues, [0, 1, 1, 1, 0]);
    assert_eq!(sched.queue_depths().timers, 0);
    assert_eq!(sched.stats().tasks_deferred, 3);
}

#[test]
fn once_the_budget_is_spent_the_rest_is_deferred_to_the_next_step() {
    let (clock, sched) = server();
    let log = Log::new();
    for i in 0..4 {
        let _ = sched.schedule(costly(&log, &clock, &format!("n{i}"), MS), Priority::Normal);
    }
    sched.step_with_budget(2 * MS);
    assert_eq!(log.take(), ["n0", "n1"]);
    assert_eq!(sched.stats().tasks_deferred, 2);
    sched.step_with_budget(2 * MS);
    assert_eq!(log.take(), ["n2", "n3"]);
    assert_eq!(sched.stats().tasks_deferred, 0);
}

#[test]
fn background_starves_first_under_sustained_overload() {
    let (clock, sched) = server();
    let log = Log::new();
    let _bg = sched.schedule(log.task("background"), Priority::Background);
    for _ in 0..20 {
        let _ = sched.schedule(costly(&log, &clock, "low", MS), Priority::Low);
        let _ = sched.schedule(costly(&log, &clock, "low", MS), Priority::Low);
        sched.step_with_budget(2 * MS);
    }
    assert_eq!(log.count("background"), 0);
    assert_eq!(log.count("low"), 40);
    sched.step_with_budget(SECOND);
    assert_eq!(log.count("background"), 1);
}

#[test]
fn the_budget_is_checked_between_tasks_so_a_long_task_overruns_the_step() {
    let (clock, sched) = server();
    let log = Log::new();
    let _ = sched.schedule(costly(&log, &clock, "long", 30 * MS), Priority::Normal);
    let _ = sched.schedule(log.task("next"), Priority::Normal);
    sched.step_with_budget(5 * MS);
    assert_eq!(log.take(), ["long"]);
    assert_eq!(sched.stats().last_step, 30 * MS);
}

#[test]
fn deferral_is_not_fairness_deferred_background_stays_deferred() {
    let (clock, sched) = server();
    let log = Log::new();
    let _ = sched.schedule(log.task("bg"), Priority::Background);
    for _ in 0..3 {
        let _ = sched.schedule(costly(&log, &clock, "low", 2 * MS), Priority::Low);
        sched.step_with_budget(MS);
        assert_eq!(
            sched.stats().tasks_deferred,
            1,
            "the background task, again"
        );
    }
    assert_eq!(log.count("bg"), 0);
}

#[test]
fn work_added_to_the_queue_being_drained_waits_for_the_next_step() {
    let (_clock, sched) = server();
    let log = Log::new();
    let (s, l) = (sched.clone(), log.clone());
    let _ = sched.schedule(
        move || {
            l.push("first");
            let _ = s.schedule(l.task("same priority"), Priority::Normal);
            let _ = s.schedule(l.task("higher"), Priority::High);
            let _ = s.schedule(l.task("lower"), Priority::Low);
        },
        Priority::Normal,
    );
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["first", "lower"]);
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["higher", "same priority"]);
}

#[test]
fn a_task_that_reschedules_itself_cannot_livelock_the_step() {
    fn again(s: &tickstep_kernel::FrameScheduler, runs: Rc<std::cell::Cell<u32>>) {
        runs.set(runs.get() + 1);
        let s2 = s.clone();
        let _ = s.schedule(move || again(&s2, runs), Priority::Kernel);
    }
    let (_clock, sched) = server();
    let runs = Rc::new(std::cell::Cell::new(0));
    let (s, r) = (sched.clone(), runs.clone());
    let _ = sched.schedule(move || again(&s, r), Priority::Kernel);
    for step in 1..=5 {
        sched.step_with_budget(SECOND);
        assert_eq!(runs.get(), step);
    }
}

#[test]
fn tasks_deferred_mid_step_reads_the_previous_steps_value() {
    let (clock, sched) = server();
    let log = Log::new();
    for _ in 0..3 {
        let _ = sched.schedule(costly(&log, &clock, "n", MS), Priority::Normal);
    }
    sched.step_with_budget(MS);
    assert_eq!(sched.stats().tasks_deferred, 2);
    let seen = Rc::new(std::cell::Cell::new(u64::MAX));
    let (s, seen2) = (sched.clone(), seen.clone());
    let _ = sched.schedule(
        move || seen2.set(s.stats().tasks_deferred),
        Priority::Kernel,
    );
    sched.step_with_budget(SECOND);
    assert_eq!(seen.get(), 2, "mid-step read sees the previous step");
    assert_eq!(sched.stats().tasks_deferred, 0);
}

#[test]
fn an_explicit_budget_always_wins() {
    let (_clock, sched) = server();
    sched.step_with_budget(7 * MS);
    assert_eq!(sched.stats().last_budget, 7 * MS);
}

#[test]
fn the_server_defaults_to_frame_aware_16_5_ms_with_a_1_5_ms_floor() {
    assert_eq!(
        SchedulerConfig::server().budget_mode(),
        BudgetMode::FrameAware {
            target: Duration::from_micros(16_500),
            floor: Duration::from_micros(1_500)
        }
    );
}

#[test]
fn the_client_defaults_to_a_fixed_1_5_ms_slice() {
    let (_clock, sched) = with_config(SchedulerConfig::client());
    sched.step();
    assert_eq!(sched.stats().last_budget, Duration::from_micros(1_500));
}

#[test]
fn budget_alone_selects_fixed_mode_on_either_machine() {
    for config in [SchedulerConfig::server(), SchedulerConfig::client()] {
        let mode = config.budget(3 * MS).budget_mode();
        assert_eq!(mode, BudgetMode::Fixed(3 * MS));
    }
}

#[test]
fn frame_target_selects_frame_aware_mode_with_that_target() {
    for config in [SchedulerConfig::server(), SchedulerConfig::client()] {
        let mode = config.frame_target(20 * MS).budget_mode();
        assert_eq!(
            mode,
            BudgetMode::FrameAware {
                target: 20 * MS,
                floor: Duration::from_micros(1_500)
            }
        );
    }
}

struct Engine {
    heartbeat: std::cell::Cell<f64>,
    physics: std::cell::Cell<f64>,
}

impl FrameStats for Engine {
    fn heartbeat_time(&self) -> f64 {
        self.heartbeat.get()
    }
    fn physics_step_time(&self) -> f64 {
        self.physics.get()
    }
}

fn engine(heartbeat: f64, physics: f64) -> Rc<Engine> {
    Rc::new(Engine {
        heartbeat: heartbeat.into(),
        physics: physics.into(),
    })
}

#[test]
fn the_first_frame_aware_step_runs_at_the_floor() {
    let (_clock, sched) = with_config(
        SchedulerConfig::server()
            .frame_target(16 * MS)
            .budget(2 * MS),
    );
    sched.set_frame_stats(engine(0.0, 0.0));
    sched.step();
    assert_eq!(sched.stats().last_budget, 2 * MS);
}

#[test]
fn a_steady_frame_aware_step_fills_the_target_minus_other_work_and_physics() {
    let (clock, sched) = with_config(
        SchedulerConfig::server()
            .frame_target(16 * MS)
            .budget(2 * MS),
    );
    sched.set_frame_stats(engine(0.005, 0.003));
    sched.step();
    clock.advance(16 * MS);
    sched.step();
    // StepEma is 0 (steps took no time): Others = 5 ms + 3 ms physics; budget = 16 - 8 = 8 ms.
    assert_eq!(sched.stats().last_budget, 8 * MS);
    assert_eq!(sched.stats().last_frame_busy, 5 * MS);
    assert_eq!(sched.stats().last_physics, 3 * MS);
}

#[test]
fn step_ema_is_subtracted_so_the_schedulers_own_work_does_not_shrink_its_budget() {
    let (clock, sched) = with_config(SchedulerConfig::server().frame_target(16 * MS).budget(MS));
    sched.set_frame_stats(engine(0.010, 0.0));
    // Each step works 10 ms, so the engine's 10 ms heartbeat is all the scheduler's own work.
    for _ in 0..100 {
        let c = clock.clone();
        let _ = sched.schedule(move || c.advance(10 * MS), Priority::Normal);
        sched.step();
        clock.advance(6 * MS);
    }
    let stats = sched.stats();
    assert!(
        stats.step_ema.abs_diff(10 * MS) < MS / 10,
        "{:?}",
        stats.step_ema
    );
    // Others = max(10 - ~10, 0) = ~0: the budget is ~the whole target, not 16 - 10.
    assert!(stats.last_budget > 15 * MS, "{:?}", stats.last_budget);
}

#[test]
fn a_late_step_at_1_25_targets_drops_to_the_floor() {
    let (clock, sched) = with_config(
        SchedulerConfig::server()
            .frame_target(16 * MS)
            .budget(2 * MS),
    );
    sched.set_frame_stats(engine(0.0, 0.0));
    sched.step();
    clock.advance(20 * MS); // exactly 1.25 x 16 ms
    sched.step();
    assert_eq!(sched.stats().last_budget, 2 * MS);
    clock.advance(19 * MS); // under 1.25 x target: trusted
    sched.step();
    assert_eq!(sched.stats().last_budget, 16 * MS);
}

#[test]
fn the_budget_never_drops_below_the_floor() {
    let (clock, sched) = with_config(
        SchedulerConfig::server()
            .frame_target(16 * MS)
            .budget(2 * MS),
    );
    sched.set_frame_stats(engine(0.050, 0.050));
    sched.step();
    clock.advance(16 * MS);
    sched.step();
    assert_eq!(sched.stats().last_budget, 2 * MS);
}

struct LegacyEngine;

impl FrameStats for LegacyEngine {
    fn reports_seconds(&self) -> bool {
        false
    }
    fn heartbeat_time(&self) -> f64 {
        panic!("a legacy engine has no HeartbeatTime")
    }
    fn heartbeat_time_ms(&self) -> f64 {
        4.0
    }
    fn physics_step_time_ms(&self) -> f64 {
        2.0
    }
}

#[test]
fn the_legacy_milliseconds_stats_path_divides_by_1000() {
    let (clock, sched) = with_config(SchedulerConfig::server().frame_target(16 * MS).budget(MS));
    sched.set_frame_stats(Rc::new(LegacyEngine));
    sched.step();
    clock.advance(16 * MS);
    sched.step();
    let stats = sched.stats();
    assert_eq!(
        (stats.last_frame_busy, stats.last_physics),
        (4 * MS, 2 * MS)
    );
    assert_eq!(stats.last_budget, 10 * MS);
}

#[test]
fn nonsense_engine_readings_count_as_zero() {
    let (clock, sched) = with_config(SchedulerConfig::server().frame_target(16 * MS).budget(MS));
    sched.set_frame_stats(engine(f64::NAN, -1.0));
    sched.step();
    clock.advance(16 * MS);
    sched.step();
    assert_eq!(sched.stats().last_budget, 16 * MS);
}

#[test]
fn step_statistics_record_time_budget_and_counts() {
    let (clock, sched) = server();
    let log = Log::new();
    let _ = sched.schedule(costly(&log, &clock, "a", 3 * MS), Priority::Normal);
    let _ = sched.schedule(costly(&log, &clock, "b", 3 * MS), Priority::Normal);
    sched.step_with_budget(2 * MS);
    let stats = sched.stats();
    assert_eq!(
        (
            stats.last_step,
            stats.tasks_run,
            stats.tasks_deferred,
            stats.steps
        ),
        (3 * MS, 1, 1, 1)
    );
    assert_eq!(stats.step_ema, Duration::from_micros(300));
    assert_eq!(
        (
            stats.window_time,
            stats.window_steps,
            stats.window_max,
            stats.window_deferred
        ),
        (3 * MS, 1, 3 * MS, 1)
    );
}

#[test]
fn a_real_clock_honours_the_budget_too() {
    let sched = tickstep_kernel::FrameScheduler::new(
        tickstep_kernel::SystemClock::new(),
        SchedulerConfig::server(),
    );
    let log = Log::new();
    let _ = sched.schedule(log.task("kernel"), Priority::Kernel);
    let _ = sched.schedule(log.task("normal"), Priority::Normal);
    sched.step_with_budget(Duration::ZERO);
    assert_eq!(log.take(), ["kernel"]);
    assert_eq!(sched.stats().tasks_deferred, 1);
    sched.step_with_budget(Duration::from_secs(3600));
    assert_eq!(log.take(), ["normal"]);
}
