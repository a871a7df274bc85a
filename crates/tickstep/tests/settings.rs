//! The one builder core (docs/runtime.md §8.3): `RuntimeBuilder` sets the kernel's budget and
//! frame target as the Bevy plugin's builder does, and both check their settings the same way.

use std::time::Duration;

use tickstep::kernel::{BudgetMode, ManualClock, Priority, Role};
use tickstep::{Runtime, RuntimeBuilder, RuntimeError, SettingsError};

const MS: Duration = Duration::from_millis(1);

fn builder(clock: &ManualClock) -> RuntimeBuilder {
    Runtime::builder()
        .manual_clock(clock.clone())
        .without_commands()
        .diagnostics(false)
        .in_memory_store()
}

#[test]
fn a_budget_given_to_the_runtime_builder_is_the_main_schedulers_fixed_slice() {
    let clock = ManualClock::new();
    let rt = builder(&clock)
        .role(Role::Client)
        .budget(3 * MS)
        .build()
        .unwrap();
    assert_eq!(rt.scheduler().budget_mode(), BudgetMode::Fixed(3 * MS));
    // Ten tasks of 1 ms each: a step under a 3 ms slice runs the three that fit and stops
    // before the fourth (the clock is read before each task, docs/kernel.md §4).
    for _ in 0..10 {
        let c = clock.clone();
        let _task = rt
            .scheduler()
            .schedule(move || c.advance(MS), Priority::Normal);
    }
    rt.step_frame().unwrap();
    let ran = rt.scheduler().stats().tasks_run;
    assert_eq!(ran, 3, "ran {ran} of 10 under 3 ms");
    assert_eq!(rt.scheduler().stats().last_budget, 3 * MS);
}

#[test]
fn a_frame_target_given_to_the_runtime_builder_selects_the_frame_aware_budget() {
    let clock = ManualClock::new();
    let rt = builder(&clock)
        .frame_target(30 * MS)
        .budget(2 * MS)
        .build()
        .unwrap();
    assert_eq!(
        rt.scheduler().budget_mode(),
        BudgetMode::FrameAware {
            target: 30 * MS,
            floor: 2 * MS
        }
    );
}

#[test]
fn without_budget_or_target_the_runtime_keeps_the_kernels_role_defaults() {
    let clock = ManualClock::new();
    let plain = builder(&clock).build().unwrap();
    let kernel_default = tickstep::kernel::FrameScheduler::new(
        clock.clone(),
        tickstep::kernel::SchedulerConfig::server(),
    );
    assert_eq!(
        plain.scheduler().budget_mode(),
        kernel_default.budget_mode()
    );
}

#[test]
fn settings_that_break_a_rule_are_the_same_typed_errors_the_plugin_returns() {
    let clock = ManualClock::new();
    let err = |b: RuntimeBuilder| match b.build() {
        Err(RuntimeError::Settings(e)) => e,
        other => panic!("expected a settings error, got {other:?}"),
    };
    assert_eq!(
        err(builder(&clock).budget(Duration::ZERO)),
        SettingsError::ZeroDuration {
            what: "budget",
            got: Duration::ZERO
        }
    );
    assert_eq!(
        err(builder(&clock).frame_target(Duration::ZERO)),
        SettingsError::ZeroDuration {
            what: "frame target",
            got: Duration::ZERO
        }
    );
    assert_eq!(
        err(builder(&clock).command_period(Duration::ZERO)),
        SettingsError::ZeroDuration {
            what: "command period",
            got: Duration::ZERO
        }
    );
    assert_eq!(
        err(builder(&clock).schedules_tick(Duration::ZERO)),
        SettingsError::ZeroDuration {
            what: "schedules tick",
            got: Duration::ZERO
        }
    );
    let above = err(builder(&clock).frame_target(2 * MS).budget(3 * MS));
    assert_eq!(
        above.to_string(),
        "budget 3ms must not exceed the frame target 2ms"
    );
    assert_eq!(
        err(builder(&clock).role(Role::Client).diagnostics(true)),
        SettingsError::DiagnosticsOnClient { role: Role::Client }
    );
}
