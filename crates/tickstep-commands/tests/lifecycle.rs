//! The scheduler's lifecycle rules, one test per sentence of the seed and issue.

mod common;

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use common::{CYCLE, counter, cycles, parked, parked_on, record, setup, strs, take, yields};
use tickstep_commands::{Command, Mechanism, ScheduleResult};

#[test]
fn scheduled_means_queued_and_mounted_means_running() {
    let (_clock, scheduler) = setup();
    let c = parked("c");
    assert_eq!(scheduler.schedule(&c), ScheduleResult::Success);
    assert!(scheduler.is_scheduled(&c));
    assert!(!scheduler.is_running(&c));
    assert_eq!(scheduler.queued().len(), 1);
    assert!(scheduler.running().is_empty());
    scheduler.run().unwrap();
    assert!(!scheduler.is_scheduled(&c));
    assert!(scheduler.is_running(&c));
    assert!(scheduler.queued().is_empty());
    assert_eq!(scheduler.running()[0].name, "c");
}

#[test]
fn scheduling_a_running_command_again_reports_already_running() {
    let (_clock, scheduler) = setup();
    let c = parked("c");
    scheduler.schedule(&c);
    assert_eq!(scheduler.schedule(&c), ScheduleResult::AlreadyRunning);
    scheduler.run().unwrap();
    assert_eq!(scheduler.schedule(&c), ScheduleResult::AlreadyRunning);
    assert_eq!(scheduler.running().len(), 1);
}

#[test]
fn a_command_runs_until_it_yields_and_resumes_next_cycle() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let c = yields("c", 2);
    scheduler.schedule(&c);
    cycles(&clock, &scheduler, 3);
    assert_eq!(
        take(&log),
        strs(&[
            "Scheduled c",
            "Mounted c",
            "Yielded c",
            "Mounted c",
            "Yielded c",
            "Mounted c",
            "Completed c"
        ])
    );
}

#[test]
fn completion_releases_requirements() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let quick = arm.run(|_co| async {}).with_priority(9).named("quick");
    let low = parked_on(&arm, "low", -5);
    scheduler.schedule(&quick);
    assert!(matches!(
        scheduler.schedule(&low),
        ScheduleResult::LowerPriorityThanQueued { .. }
    ));
    cycles(&clock, &scheduler, 1);
    assert_eq!(scheduler.schedule(&low), ScheduleResult::Success);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&low));
}

#[test]
fn higher_priority_pending_command_interrupts_the_running_one() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let arm = Mechanism::new(&scheduler, "arm");
    let low = parked_on(&arm, "low", 0);
    let high = parked_on(&arm, "high", 1);
    scheduler.schedule(&low);
    cycles(&clock, &scheduler, 1);
    take(&log);
    assert_eq!(scheduler.schedule(&high), ScheduleResult::Success);
    // Scheduled, not yet started: the running one keeps running until promotion.
    assert!(scheduler.is_running(&low));
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&low));
    assert!(scheduler.is_running(&high));
    assert_eq!(
        take(&log),
        strs(&[
            "Scheduled high",
            "Interrupted low",
            "Canceled low",
            "Mounted high",
            "Yielded high"
        ])
    );
}

#[test]
fn equal_priority_newly_scheduled_command_wins_the_tie() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let first = parked_on(&arm, "first", 3);
    let second = parked_on(&arm, "second", 3);
    scheduler.schedule(&first);
    cycles(&clock, &scheduler, 1);
    assert_eq!(scheduler.schedule(&second), ScheduleResult::Success);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&second));
    assert!(!scheduler.is_running(&first));
}

#[test]
fn equal_priority_tie_among_queued_commands_goes_to_the_newest() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let arm = Mechanism::new(&scheduler, "arm");
    let first = parked_on(&arm, "first", 0);
    let second = parked_on(&arm, "second", 0);
    scheduler.schedule(&first);
    scheduler.schedule(&second);
    assert!(!scheduler.is_scheduled(&first));
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&second));
    assert_eq!(
        take(&log),
        strs(&[
            "Scheduled first",
            "Scheduled second",
            "Interrupted first",
            "Canceled first",
            "Mounted second",
            "Yielded second"
        ])
    );
}

#[test]
fn lower_priority_command_is_rejected_with_lower_priority_than_running() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let high = parked_on(&arm, "high", 10);
    let low = parked_on(&arm, "low", 2);
    scheduler.schedule(&high);
    cycles(&clock, &scheduler, 1);
    assert_eq!(
        scheduler.schedule(&low),
        ScheduleResult::LowerPriorityThanRunning {
            running: "high".into(),
            running_priority: 10,
            priority: 2
        }
    );
    assert!(!scheduler.is_scheduled(&low));
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&high));
}

#[test]
fn lower_priority_command_is_rejected_with_lower_priority_than_queued() {
    let (_clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let high = parked_on(&arm, "high", 10);
    let low = parked_on(&arm, "low", i32::MIN);
    scheduler.schedule(&high);
    assert_eq!(
        scheduler.schedule(&low),
        ScheduleResult::LowerPriorityThanQueued {
            queued: "high".into(),
            queued_priority: 10,
            priority: i32::MIN
        }
    );
    assert_eq!(scheduler.queued().len(), 1);
}

#[test]
fn commands_on_disjoint_mechanisms_run_side_by_side() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let wrist = Mechanism::new(&scheduler, "wrist");
    let a = parked_on(&arm, "a", 0);
    let b = parked_on(&wrist, "b", 0);
    scheduler.schedule(&a);
    scheduler.schedule(&b);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&a) && scheduler.is_running(&b));
}

#[test]
fn a_multi_mechanism_command_interrupts_every_owner_it_conflicts_with() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let wrist = Mechanism::new(&scheduler, "wrist");
    let a = parked_on(&arm, "a", 0);
    let b = parked_on(&wrist, "b", 0);
    let both = Command::requiring(&arm)
        .requiring(&wrist)
        .executing(|co| async move {
            co.park().await;
        })
        .named("both");
    scheduler.schedule(&a);
    scheduler.schedule(&b);
    cycles(&clock, &scheduler, 1);
    scheduler.schedule(&both);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&a) && !scheduler.is_running(&b));
    assert!(scheduler.is_running(&both));
}

#[test]
fn default_command_runs_when_the_mechanism_is_idle() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let hold = parked_on(&arm, "hold", 0);
    arm.set_default_command(&hold).unwrap();
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&hold));
}

#[test]
fn default_command_returns_after_an_interruption() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let arm = Mechanism::new(&scheduler, "arm");
    let hold = parked_on(&arm, "hold", 0);
    arm.set_default_command(&hold).unwrap();
    cycles(&clock, &scheduler, 1);
    let raise = arm
        .run(|co| async move {
            co.yield_now().await;
        })
        .named("raise");
    scheduler.schedule(&raise);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&raise) && !scheduler.is_running(&hold));
    cycles(&clock, &scheduler, 1); // raise completes
    assert!(!scheduler.is_running(&raise));
    cycles(&clock, &scheduler, 1); // the mechanism is idle at the start of this cycle
    assert!(scheduler.is_running(&hold));
    let events = take(&log);
    let tail: Vec<&str> = events.iter().map(String::as_str).skip(3).collect();
    assert_eq!(
        tail,
        [
            "Scheduled raise",
            "Interrupted hold",
            "Canceled hold",
            "Mounted raise",
            "Yielded raise",
            "Mounted raise",
            "Completed raise",
            "Scheduled hold",
            "Mounted hold",
            "Yielded hold"
        ]
    );
}

#[test]
fn default_command_is_not_queued_over_a_queued_command() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let hold = parked_on(&arm, "hold", 0);
    let user = parked_on(&arm, "user", 0);
    arm.set_default_command(&hold).unwrap();
    scheduler.schedule(&user);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&user));
    assert!(!scheduler.is_running(&hold));
}

#[test]
fn default_command_must_require_exactly_its_mechanism() {
    let (_clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let wrist = Mechanism::new(&scheduler, "wrist");
    let both = Command::requiring(&arm)
        .requiring(&wrist)
        .executing(|_co| async {})
        .named("both");
    let err = arm.set_default_command(&both).unwrap_err();
    assert_eq!(
        err.to_string(),
        "default command `both` for mechanism `arm` must require exactly that mechanism (it requires [arm, wrist])"
    );
    let other = wrist.run(|_co| async {}).named("w");
    assert!(arm.set_default_command(&other).is_err());
    assert!(
        arm.default_command().is_none(),
        "a rejected default leaves none set"
    );
}

#[test]
fn idle_parks_at_the_lowest_priority() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let idle = arm.idle();
    scheduler.schedule(&idle);
    cycles(&clock, &scheduler, 3);
    assert!(scheduler.is_running(&idle));
    let anything = parked_on(&arm, "anything", i32::MIN);
    assert_eq!(scheduler.schedule(&anything), ScheduleResult::Success);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&anything));
}

#[test]
fn cancel_of_a_queued_command_removes_it_without_on_cancel() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let (hooked, hook) = counter();
    let c = Command::no_requirements()
        .executing(|co| async move {
            co.park().await;
        })
        .on_cancel(hook)
        .named("c");
    scheduler.schedule(&c);
    scheduler.cancel(&c);
    assert!(!scheduler.is_scheduled(&c));
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&c));
    assert_eq!(hooked.get(), 0);
    assert_eq!(take(&log), strs(&["Scheduled c", "Canceled c"]));
}

#[test]
fn cancel_of_a_running_command_runs_on_cancel_once() {
    let (clock, scheduler) = setup();
    let (hooked, hook) = counter();
    let c = Command::no_requirements()
        .executing(|co| async move {
            co.park().await;
        })
        .on_cancel(hook)
        .named("c");
    scheduler.schedule(&c);
    cycles(&clock, &scheduler, 1);
    scheduler.cancel(&c);
    scheduler.cancel(&c);
    assert_eq!(hooked.get(), 1);
    assert!(!scheduler.is_running(&c));
}

#[test]
fn on_cancel_never_runs_on_completion_or_error() {
    let (clock, scheduler) = setup();
    let (hooked, hook) = counter();
    let done = Command::no_requirements()
        .executing(|_co| async {})
        .on_cancel(hook.clone())
        .named("done");
    let failing = Command::no_requirements()
        .executing_fallible(|_co| async { Err("broken".into()) })
        .on_cancel(hook)
        .named("failing");
    scheduler.schedule(&done);
    cycles(&clock, &scheduler, 1);
    scheduler.schedule(&failing);
    assert!(scheduler.run().is_err());
    assert_eq!(hooked.get(), 0);
}

#[test]
fn self_cancel_ends_the_command_at_its_next_yield() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let reached = Rc::new(Cell::new(false));
    let r = reached.clone();
    let (hooked, hook) = counter();
    let quitter = Command::no_requirements()
        .executing(move |co| {
            let r = r.clone();
            async move {
                co.yield_now().await;
                co.request_cancellation();
                co.yield_now().await;
                r.set(true);
            }
        })
        .on_cancel(hook)
        .named("quitter");
    scheduler.schedule(&quitter);
    cycles(&clock, &scheduler, 3);
    assert!(!reached.get());
    assert!(!scheduler.is_running(&quitter));
    assert_eq!(hooked.get(), 1);
    assert_eq!(
        take(&log),
        strs(&[
            "Scheduled quitter",
            "Mounted quitter",
            "Yielded quitter",
            "Mounted quitter",
            "Canceled quitter"
        ])
    );
}

#[test]
fn self_cancel_through_the_scheduler_does_not_double_borrow() {
    let (clock, scheduler) = setup();
    let me: Rc<Cell<Option<Command>>> = Rc::new(Cell::new(None));
    let slot = me.clone();
    let c = Command::no_requirements()
        .executing(move |co| {
            let slot = slot.clone();
            async move {
                let me = slot.take().unwrap();
                co.scheduler().cancel(&me);
                co.yield_now().await;
            }
        })
        .named("c");
    me.set(Some(c.clone()));
    scheduler.schedule(&c);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&c));
}

#[test]
fn cancel_all_cancels_queued_and_running_and_runs_on_cancel_only_for_running() {
    let (clock, scheduler) = setup();
    let (hooked, hook) = counter();
    let mk = |name: &str| {
        Command::no_requirements()
            .executing(|co| async move {
                co.park().await;
            })
            .on_cancel(hook.clone())
            .named(name)
    };
    let (a, b, queued) = (mk("a"), mk("b"), mk("queued"));
    scheduler.schedule(&a);
    scheduler.schedule(&b);
    cycles(&clock, &scheduler, 1);
    scheduler.schedule(&queued);
    scheduler.cancel_all();
    assert_eq!(hooked.get(), 2);
    assert!(scheduler.running().is_empty() && scheduler.queued().is_empty());
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.running().is_empty());
}

#[test]
fn a_wait_shorter_than_the_cycle_waits_one_cycle() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let c = Command::no_requirements()
        .executing(|co| async move { co.wait(Duration::from_millis(5)).await })
        .named("c");
    scheduler.schedule(&c);
    scheduler.run().unwrap();
    assert!(scheduler.is_running(&c));
    clock.advance(CYCLE);
    scheduler.run().unwrap();
    assert!(!scheduler.is_running(&c));
    assert_eq!(
        take(&log),
        strs(&[
            "Scheduled c",
            "Mounted c",
            "Yielded c",
            "Mounted c",
            "Completed c"
        ])
    );
}

#[test]
fn wait_compares_against_the_clock_not_the_cycle_count() {
    let (clock, scheduler) = setup();
    let c = Command::no_requirements()
        .executing(|co| async move { co.wait(Duration::from_millis(50)).await })
        .named("c");
    scheduler.schedule(&c);
    for _ in 0..10 {
        scheduler.run().unwrap(); // the clock does not move: the wait never ends
    }
    assert!(scheduler.is_running(&c));
    clock.advance(Duration::from_millis(49));
    scheduler.run().unwrap();
    assert!(scheduler.is_running(&c));
    clock.advance(Duration::from_millis(1));
    scheduler.run().unwrap();
    assert!(!scheduler.is_running(&c));
}

#[test]
fn a_zero_wait_does_not_yield() {
    let (_clock, scheduler) = setup();
    let c = Command::no_requirements()
        .executing(|co| async move { co.wait(Duration::ZERO).await })
        .named("c");
    scheduler.schedule(&c);
    scheduler.run().unwrap();
    assert!(!scheduler.is_running(&c));
}

#[test]
fn wait_until_timeout_checks_the_condition_before_the_timeout() {
    let (clock, scheduler) = setup();
    let result = Rc::new(Cell::new(None));
    let out = result.clone();
    let flag = Rc::new(Cell::new(false));
    let f = flag.clone();
    let c = Command::no_requirements()
        .executing(move |co| {
            let (out, f) = (out.clone(), f.clone());
            async move {
                out.set(Some(co.wait_until_timeout(move || f.get(), CYCLE).await));
            }
        })
        .named("c");
    scheduler.schedule(&c);
    scheduler.run().unwrap();
    clock.advance(CYCLE);
    flag.set(true); // true in the very cycle the timeout passes
    scheduler.run().unwrap();
    assert_eq!(
        result.get(),
        Some(tickstep_commands::WaitResult::ConditionMet)
    );
}

#[test]
fn wait_until_timeout_times_out() {
    let (clock, scheduler) = setup();
    let result = Rc::new(Cell::new(None));
    let out = result.clone();
    let c = Command::no_requirements()
        .executing(move |co| {
            let out = out.clone();
            async move {
                out.set(Some(co.wait_until_timeout(|| false, CYCLE * 2).await));
            }
        })
        .named("c");
    scheduler.schedule(&c);
    cycles(&clock, &scheduler, 2);
    assert_eq!(result.get(), None);
    cycles(&clock, &scheduler, 1);
    assert_eq!(result.get(), Some(tickstep_commands::WaitResult::TimedOut));
}

#[test]
fn until_on_the_builder_ends_the_command_as_completed() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let stop = Rc::new(Cell::new(false));
    let s = stop.clone();
    let c = Command::no_requirements()
        .executing(|co| async move {
            co.park().await;
        })
        .until(move || s.get())
        .named("c");
    scheduler.schedule(&c);
    cycles(&clock, &scheduler, 2);
    stop.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&c));
    assert_eq!(take(&log).last().unwrap(), "Completed c");
}

#[test]
fn coroutines_can_only_be_used_by_the_command_bound_to_them() {
    let (clock, scheduler) = setup();
    let stolen: Rc<Cell<Option<tickstep_commands::Coroutine>>> = Rc::new(Cell::new(None));
    let put = stolen.clone();
    let victim = Command::no_requirements()
        .executing(move |co| {
            put.set(Some(co));
            async {}
        })
        .named("victim");
    let thief_slot = stolen.clone();
    let thief = Command::no_requirements()
        .executing(move |_co| {
            let slot = thief_slot.clone();
            async move {
                let co = slot.take().unwrap();
                co.yield_now().await;
            }
        })
        .named("thief");
    scheduler.schedule(&victim);
    cycles(&clock, &scheduler, 1);
    scheduler.schedule(&thief);
    let panic =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| scheduler.run())).unwrap_err();
    let message = panic
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_else(|| (*panic.downcast_ref::<&str>().unwrap()).to_owned());
    assert!(message.contains("Coroutines can only be used by the command bound to them"));
    assert!(!scheduler.is_running(&thief));
}

#[test]
fn commands_can_schedule_and_cancel_other_commands_from_their_body() {
    let (clock, scheduler) = setup();
    let victim = parked("victim");
    let fresh = parked("fresh");
    scheduler.schedule(&victim);
    cycles(&clock, &scheduler, 1);
    let (v, f) = (victim.clone(), fresh.clone());
    let boss = Command::no_requirements()
        .executing(move |co| {
            let (v, f) = (v.clone(), f.clone());
            async move {
                let s = co.scheduler();
                s.cancel(&v);
                assert!(!s.is_running(&v));
                assert_eq!(s.schedule(&f), ScheduleResult::Success);
                co.park().await;
            }
        })
        .named("boss");
    scheduler.schedule(&boss);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&victim));
    // Scheduled from inside a running command: a child that started at once.
    assert!(scheduler.is_running(&fresh));
    assert_eq!(scheduler.parent_of(&fresh), Some(boss.clone()));
}

#[test]
fn listeners_may_call_back_into_the_scheduler() {
    let (clock, scheduler) = setup();
    let follow_up = parked("follow-up");
    let s2 = scheduler.clone();
    let f = follow_up.clone();
    scheduler.on_event(move |e| {
        if e.to_string() == "Completed first" {
            s2.schedule(&f);
            let _ = s2.running();
        }
    });
    let first = yields("first", 0);
    scheduler.schedule(&first);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_scheduled(&follow_up));
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&follow_up));
}

#[test]
fn on_cancel_may_schedule_a_command() {
    let (clock, scheduler) = setup();
    let cleanup = yields("cleanup", 1);
    let s2 = scheduler.clone();
    let cl = cleanup.clone();
    let c = Command::no_requirements()
        .executing(|co| async move {
            co.park().await;
        })
        .on_cancel(move || {
            s2.schedule(&cl);
        })
        .named("c");
    scheduler.schedule(&c);
    cycles(&clock, &scheduler, 1);
    scheduler.cancel(&c);
    assert!(scheduler.is_scheduled(&cleanup));
}

#[test]
#[should_panic(expected = "called from inside run()")]
fn run_from_inside_run_panics() {
    let (_clock, scheduler) = setup();
    let s2 = scheduler.clone();
    scheduler.add_periodic(move || {
        let _ = s2.run();
    });
    scheduler.run().unwrap();
}

#[test]
fn a_mechanism_of_another_scheduler_is_refused_with_a_clear_panic() {
    let (_clock, scheduler) = setup();
    let (_c2, other) = setup();
    let foreign = Mechanism::new(&other, "foreign arm");
    let c = parked_on(&foreign, "c", 0);
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| scheduler.schedule(&c)))
        .unwrap_err();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(
        message.contains("requires mechanism `foreign arm`, which belongs to another scheduler")
    );
    assert!(scheduler.queued().is_empty(), "nothing half-created");
}

#[test]
fn events_carry_the_clock_time() {
    let (clock, scheduler) = setup();
    let events = common::record_events(&scheduler);
    let c = yields("c", 1);
    clock.advance(Duration::from_secs(3));
    scheduler.schedule(&c);
    scheduler.run().unwrap();
    clock.advance(CYCLE);
    scheduler.run().unwrap();
    let events = events.borrow();
    assert_eq!(events[0].at.as_nanos(), 3_000_000_000);
    assert_eq!(events.last().unwrap().at.as_nanos(), 3_020_000_000);
}

#[test]
fn run_phases_follow_the_seed_order() {
    let (clock, scheduler) = setup();
    let order = Rc::new(std::cell::RefCell::new(Vec::<String>::new()));
    let o = order.clone();
    scheduler.on_event(move |e| o.borrow_mut().push(e.to_string()));
    let o = order.clone();
    scheduler.add_periodic(move || o.borrow_mut().push("sideload".into()));
    let o = order.clone();
    let from_trigger = parked("from trigger");
    tickstep_commands::Trigger::new(&scheduler, move || {
        o.borrow_mut().push("trigger polled".into());
        true
    })
    .on_true(&from_trigger);
    let arm = Mechanism::new(&scheduler, "arm");
    arm.set_default_command(&parked_on(&arm, "default", 0))
        .unwrap();
    cycles(&clock, &scheduler, 1);
    assert_eq!(
        *order.borrow(),
        strs(&[
            "sideload",
            "trigger polled",
            "Scheduled from trigger",
            "Scheduled default",
            // Promotion, then execution newest first.
            "Mounted default",
            "Yielded default",
            "Mounted from trigger",
            "Yielded from trigger"
        ])
    );
}

#[test]
fn a_sideload_ends_when_its_body_returns_and_cannot_fork() {
    let (clock, scheduler) = setup();
    let (n, bump) = counter();
    scheduler.sideload(move |co| async move {
        bump();
        co.yield_now().await;
        bump();
    });
    cycles(&clock, &scheduler, 4);
    assert_eq!(n.get(), 2);
    assert_eq!(scheduler.telemetry().sideloads, 0);
    let target = parked("target");
    scheduler.sideload(move |co| async move {
        let _ = co.fork([&target]);
    });
    let panic =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| scheduler.run())).unwrap_err();
    assert!(
        panic
            .downcast_ref::<String>()
            .unwrap()
            .contains("a sideload coroutine cannot fork")
    );
}

#[test]
fn a_listener_scheduling_during_a_mount_schedules_at_top_level() {
    let (clock, scheduler) = setup();
    let follower = parked("follower");
    let s2 = scheduler.clone();
    let f = follower.clone();
    scheduler.on_event(move |e| {
        if e.to_string() == "Scheduled child" {
            s2.schedule(&f);
        }
    });
    let child = parked("child");
    let c = child.clone();
    let parent = Command::no_requirements()
        .executing(move |co| {
            let c = c.clone();
            async move {
                co.fork([&c]).unwrap();
                co.park().await;
            }
        })
        .named("parent");
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    assert!(
        scheduler.is_scheduled(&follower),
        "queued, not a child of the parent"
    );
    assert_eq!(scheduler.parent_of(&child), Some(parent));
}
