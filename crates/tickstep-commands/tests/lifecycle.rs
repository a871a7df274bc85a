//! The scheduler's lifecycle rules (docs/commands.md §2, §3, §5 and §9), one test per rule.

mod common;

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use common::{
    CYCLE, counter, cycles, forks_then_parks, parked, parked_on, record, setup, strs, take, yields,
};
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
                co.request_cancellation().await;
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

/// docs/commands.md §2.1: cleanup, sideloads, triggers, defaults, promotion, execution.
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
fn a_sideload_ends_when_its_body_returns_and_forks_at_its_own_scope() {
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
    let t = target.clone();
    scheduler.sideload(move |co| async move {
        co.fork([&t]).unwrap();
    });
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&target), "it outlives the sideload");
    assert_eq!(
        scheduler.parent_of(&target),
        None,
        "a sideload has no children"
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
    let parent = forks_then_parks("parent", &child);
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    assert!(
        scheduler.is_scheduled(&follower),
        "queued, not a child of the parent"
    );
    assert_eq!(scheduler.parent_of(&child), Some(parent));
}
