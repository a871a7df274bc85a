//! `Kernel`: main scheduler on Heartbeat, cached phase schedulers, overload diagnostics.

mod common;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use common::{MS, SECOND};
use tickstep_kernel::{
    BudgetMode, FramePhase, Kernel, KernelConfig, ManualClock, Overload, Priority, Role,
    ScheduleError,
};

#[test]
fn boot_binds_the_main_scheduler_to_heartbeat() {
    let kernel = Kernel::boot(ManualClock::new(), Role::Server, KernelConfig::default());
    let main = kernel.scheduler();
    assert_eq!(main.phase(), FramePhase::Heartbeat);
    assert!(main.is_bound());
    assert!(matches!(main.budget_mode(), BudgetMode::FrameAware { .. }));
    let client = Kernel::boot(ManualClock::new(), Role::Client, KernelConfig::default());
    assert_eq!(
        client.scheduler().budget_mode(),
        BudgetMode::Fixed(Duration::from_micros(1_500))
    );
}

#[test]
fn phase_schedulers_are_cached_per_phase_with_a_fixed_budget_equal_to_the_main_floor() {
    let kernel = Kernel::boot(
        ManualClock::new(),
        Role::Server,
        KernelConfig::default().budget(2 * MS).frame_target(16 * MS),
    );
    let pre = kernel.phase_scheduler(FramePhase::PreSimulation).unwrap();
    assert!(pre.same_as(&kernel.phase_scheduler(FramePhase::PreSimulation).unwrap()));
    assert!(!pre.same_as(&kernel.phase_scheduler(FramePhase::PostSimulation).unwrap()));
    assert_eq!(pre.budget_mode(), BudgetMode::Fixed(2 * MS));
    assert_eq!(pre.phase(), FramePhase::PreSimulation);
    assert!(
        kernel
            .phase_scheduler(FramePhase::Heartbeat)
            .unwrap()
            .same_as(kernel.scheduler())
    );
}

#[test]
fn prerender_schedulers_are_client_only() {
    let server = Kernel::boot(ManualClock::new(), Role::Server, KernelConfig::default());
    let err = server.phase_scheduler(FramePhase::PreRender).unwrap_err();
    assert_eq!(err, ScheduleError::PreRenderOnServer);
    assert_eq!(err.to_string(), "PreRender schedulers are client-only");
    let client = Kernel::boot(ManualClock::new(), Role::Client, KernelConfig::default());
    assert_eq!(
        client
            .phase_scheduler(FramePhase::PreRender)
            .unwrap()
            .phase(),
        FramePhase::PreRender
    );
}

/// A kernel whose main scheduler defers Background work every frame while `overloaded` is set.
type Overloaded = (
    ManualClock,
    Kernel,
    Rc<RefCell<Vec<Overload>>>,
    Rc<std::cell::Cell<bool>>,
);

fn overloaded_kernel() -> Overloaded {
    let clock = ManualClock::new();
    let kernel = Kernel::boot(clock.clone(), Role::Server, KernelConfig::default());
    let seen: Rc<RefCell<Vec<Overload>>> = Rc::default();
    let s = seen.clone();
    kernel
        .enable_diagnostics(move |o| s.borrow_mut().push(o.clone()))
        .unwrap();
    let overloaded = Rc::new(std::cell::Cell::new(true));
    let (sched, c, on) = (
        kernel.scheduler().clone(),
        clock.clone(),
        overloaded.clone(),
    );
    // Dropping the handle does not cancel the job.
    let _ = kernel
        .scheduler()
        .with_origin("flood")
        .every(
            Duration::ZERO,
            move || {
                if on.get() {
                    c.advance(20 * MS);
                    let _ = sched
                        .with_origin("starved sweep")
                        .schedule(|| {}, Priority::Background);
                }
            },
            Priority::Low,
        )
        .unwrap();
    (clock, kernel, seen, overloaded)
}

#[test]
fn overload_is_published_after_deferred_work_in_three_consecutive_windows() {
    let (_clock, kernel, seen, _on) = overloaded_kernel();
    kernel.frame_loop().run_for(2 * SECOND + 500 * MS);
    assert!(seen.borrow().is_empty(), "two windows are not enough");
    kernel.frame_loop().run_for(SECOND);
    let seen = seen.borrow();
    assert_eq!(seen.len(), 1);
    let o = &seen[0];
    assert_eq!(o.windows, 3);
    assert!(o.window.deferred > 0);
    assert_eq!(o.window.top_deferred[0].0, "starved sweep");
    assert_eq!(o.window.longest_task_origin.as_deref(), Some("flood"));
    assert_eq!(o.window.longest_task, 20 * MS);
    assert_eq!(o.hot_tasks[0].key, "flood");
}

#[test]
fn a_window_without_deferrals_resets_the_streak() {
    let (_clock, kernel, seen, on) = overloaded_kernel();
    // Windows ending at 1 s and 2 s see deferrals (streak 2)...
    kernel.frame_loop().run_for(SECOND + 500 * MS);
    on.set(false);
    // ...the one ending at 3 s is clean (the backlog drained at once): the streak resets.
    kernel.frame_loop().run_for(2 * SECOND);
    on.set(true);
    // Windows ending at 4 s and 5 s: a new streak of two. Three in a row never happened.
    kernel.frame_loop().run_for(SECOND + 900 * MS);
    assert!(seen.borrow().is_empty());
    kernel.frame_loop().run_for(SECOND);
    assert_eq!(
        seen.borrow().len(),
        1,
        "the third window of the new streak publishes"
    );
}

#[test]
fn sustained_overload_reports_again_every_three_windows() {
    let (_clock, kernel, seen, _on) = overloaded_kernel();
    kernel.frame_loop().run_for(6 * SECOND + 500 * MS);
    assert_eq!(seen.borrow().len(), 2);
}

#[test]
fn diagnostics_are_server_only() {
    let client = Kernel::boot(ManualClock::new(), Role::Client, KernelConfig::default());
    let err = client.enable_diagnostics(|_| {}).unwrap_err();
    assert_eq!(
        err,
        ScheduleError::DiagnosticsServerOnly { role: Role::Client }
    );
}

#[test]
fn enabling_diagnostics_turns_profiling_back_on() {
    let kernel = Kernel::boot(
        ManualClock::new(),
        Role::Server,
        KernelConfig::default().profile_tasks(false),
    );
    assert!(!kernel.scheduler().profiles_tasks());
    kernel.enable_diagnostics(|_| {}).unwrap();
    assert!(kernel.scheduler().profiles_tasks());
}

#[test]
fn an_idle_kernel_with_diagnostics_sleeps_between_windows() {
    let kernel = Kernel::boot(ManualClock::new(), Role::Server, KernelConfig::default());
    kernel.enable_diagnostics(|_| {}).unwrap();
    kernel.frame_loop().run_for(10 * SECOND);
    let steps = kernel.scheduler().stats().steps;
    assert!(
        steps <= 10 * 4,
        "a few frames per one-second window, not 600: {steps}"
    );
}
