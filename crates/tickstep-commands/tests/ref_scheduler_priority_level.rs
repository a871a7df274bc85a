//! The reference suite's `SchedulerPriorityLevelTests`, ported (behaviour, not text): one test per
//! reference test, named after it; its parameterised tests give one test per fork operation
//! (`fork`, `await`, `await_all`, `await_any`), suffixed with the operation.
//!
//! The reference cancels a composition whose fork is refused for priority unless the body opts
//! out; tickstep returns the error unless the body opts in with
//! `Coroutine::set_cancel_on_fork_failure(true)`. Each test sets the mode the reference test
//! relies on.

mod common;

use common::*;
use tickstep_commands::{
    Command, CommandScheduler, Coroutine, ForkError, Mechanism, ScheduleResult, Trigger,
};

/// The reference's `PriorityCommand`: parks, at `priority`, on `mechs`.
fn priority_command(priority: i32, mechs: &[&Mechanism]) -> Command {
    let mut builder = Command::no_requirements();
    for m in mechs {
        builder = builder.requiring(m);
    }
    let names: Vec<&str> = mechs.iter().map(|m| m.name()).collect();
    builder
        .executing(|co| async move {
            co.park().await;
        })
        .with_priority(priority)
        .named(format!("PriorityCommand[priority={priority}, {names:?}]"))
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Fork,
    Await,
    AwaitAll,
    AwaitAny,
}

/// Applies `op` to `cmds` from inside a body; the error, if any (await ops resolve at once when
/// refused).
async fn apply(op: Op, co: &Coroutine, cmds: &[Command]) -> Result<(), ForkError> {
    match op {
        Op::Fork => co.fork(cmds),
        Op::Await => co.await_cmd(&cmds[0]).await,
        Op::AwaitAll => co.await_all(cmds).await,
        Op::AwaitAny => co.await_any(cmds).await,
    }
}

fn events_contain(log: &[String], event: &str) -> bool {
    log.iter().any(|e| e == event)
}

#[test]
fn higher_priority_cancels() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Subsystem");
    let lower = priority_command(-1000, &[&mech]);
    let higher = priority_command(1000, &[&mech]);
    scheduler.schedule(&lower);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&lower));
    scheduler.schedule(&higher);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&higher));
    assert!(!scheduler.is_running(&lower));
}

#[test]
fn lower_priority_does_not_cancel() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Subsystem");
    let lower = priority_command(-1000, &[&mech]);
    let higher = priority_command(1000, &[&mech]);
    scheduler.schedule(&higher);
    cycles(&clock, &scheduler, 1);
    assert!(matches!(
        scheduler.schedule(&lower),
        ScheduleResult::LowerPriorityThanRunning { .. }
    ));
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&higher));
    assert!(!scheduler.is_running(&lower) && !scheduler.is_scheduled(&lower));
}

#[test]
fn same_priority_cancels() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Subsystem");
    let first = priority_command(512, &[&mech]);
    let second = priority_command(512, &[&mech]);
    scheduler.schedule(&first);
    cycles(&clock, &scheduler, 1);
    scheduler.schedule(&second);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&second));
    assert!(!scheduler.is_running(&first));
}

/// A parent at `priority` awaiting `child`.
fn awaiting_parent(name: &str, priority: i32, child: &Command) -> Command {
    let child = child.clone();
    Command::no_requirements()
        .executing(move |co| {
            let child = child.clone();
            async move {
                let _ = co.await_cmd(&child).await;
            }
        })
        .with_priority(priority)
        .named(name)
}

#[test]
fn child_inherits_higher_parent_priority() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Mechanism");
    let higher = priority_command(200, &[&mech]);
    let low_child = priority_command(-1000, &[&mech]);
    let parent = awaiting_parent("Parent", 1000, &low_child);
    scheduler.schedule(&higher);
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&parent));
    assert!(scheduler.is_running(&low_child));
    assert!(!scheduler.is_running(&higher));
}

#[test]
fn inner_default_command_inherits_higher_parent_priority() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Mechanism");
    let higher = priority_command(200, &[&mech]);
    let low_child = priority_command(-1000, &[&mech]);
    let (m, c) = (mech.clone(), low_child.clone());
    let parent = Command::no_requirements()
        .executing(move |co| {
            m.set_default_command(&c).unwrap();
            async move {
                co.park().await;
            }
        })
        .with_priority(1000)
        .named("Parent");
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    let expected = ["Parent".to_owned(), low_child.name().to_owned()];
    assert_eq!(running_names(&scheduler), expected);
    match scheduler.schedule(&higher) {
        ScheduleResult::LowerPriorityThanRunning {
            running,
            running_priority,
            priority,
        } => {
            assert_eq!(running, low_child.name());
            assert_eq!((running_priority, priority), (1000, 200));
        }
        other => panic!("expected a priority refusal, got {other:?}"),
    }
    assert_eq!(running_names(&scheduler), expected);
}

#[test]
fn inner_trigger_command_inherits_higher_parent_priority() {
    let (clock, scheduler) = setup();
    let events = record_events(&scheduler);
    let mech = Mechanism::new(&scheduler, "Mechanism");
    let higher = priority_command(200, &[&mech]);
    let low_child = priority_command(-1000, &[&mech]);
    let trigger = Trigger::new(&scheduler, || true);
    let c = low_child.clone();
    let parent = Command::no_requirements()
        .executing(move |co| {
            trigger.retry_while_true(&c);
            async move {
                co.park().await;
            }
        })
        .with_priority(1000)
        .named("Parent");
    scheduler.schedule(&higher);
    cycles(&clock, &scheduler, 1);
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 2);
    assert_eq!(
        running_names(&scheduler),
        ["Parent".to_owned(), low_child.name().to_owned()]
    );
    assert!(events.borrow().iter().any(|e| e.name.as_ref() == higher.name()
        && matches!(&e.kind, tickstep_commands::EventKind::Interrupted { by_name, .. } if by_name.as_ref() == low_child.name())));
}

#[test]
fn conflicting_commands_with_priority_inheritance() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Mechanism");
    let child1 = priority_command(0, &[&mech]);
    let child2 = priority_command(0, &[&mech]).named("child2");
    let parent1 = awaiting_parent("Parent1", 2000, &child1);
    let parent2 = awaiting_parent("Parent2", 1000, &child2);
    scheduler.schedule(&parent1);
    scheduler.schedule(&parent2);
    cycles(&clock, &scheduler, 1);
    assert_eq!(
        running_names(&scheduler),
        ["Parent1".to_owned(), child1.name().to_owned()]
    );
}

#[test]
fn conflicting_commands_with_priority_inheritance2() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Mechanism");
    let child1 = priority_command(0, &[&mech]);
    let child2 = priority_command(0, &[&mech]).named("child2");
    let parent1 = awaiting_parent("Parent1", 1000, &child1);
    let parent2 = awaiting_parent("Parent2", 2000, &child2);
    scheduler.schedule(&parent1);
    scheduler.schedule(&parent2);
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["Parent2", "child2"]);
}

fn low_priority_child_cancels_parent(op: Op) {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let mech = Mechanism::new(&scheduler, "Subsystem");
    let high = priority_command(512, &[&mech]).named("High");
    let unschedulable = priority_command(0, &[&mech]);
    let parent = Command::no_requirements()
        .executing(move |co| {
            let u = unschedulable.clone();
            async move {
                co.set_cancel_on_fork_failure(true);
                let _ = apply(op, &co, &[u]).await;
                co.park().await;
            }
        })
        .named("Parent");
    scheduler.schedule(&high);
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&parent));
    let log = take(&log);
    assert!(
        events_contain(&log, "Interrupted Parent by High"),
        "{log:?}"
    );
    assert!(events_contain(&log, "Canceled Parent"));
}

#[test]
fn low_priority_child_cancels_parent_fork() {
    low_priority_child_cancels_parent(Op::Fork);
}
#[test]
fn low_priority_child_cancels_parent_await() {
    low_priority_child_cancels_parent(Op::Await);
}
#[test]
fn low_priority_child_cancels_parent_await_all() {
    low_priority_child_cancels_parent(Op::AwaitAll);
}
#[test]
fn low_priority_child_cancels_parent_await_any() {
    low_priority_child_cancels_parent(Op::AwaitAny);
}

/// The parent keeps running and sees the refusal of `failing` (none of `cmds` started).
fn assert_fork_failure(
    scheduler: &CommandScheduler,
    clock: &tickstep_kernel::clock::ManualClock,
    op: Op,
    blocker: &Command,
    cmds: &[Command],
    failing: &Command,
) {
    let seen = std::rc::Rc::new(std::cell::RefCell::new(None));
    let (s, list) = (seen.clone(), cmds.to_vec());
    let parent = Command::no_requirements()
        .executing(move |co| {
            let (s, list) = (s.clone(), list.clone());
            async move {
                *s.borrow_mut() = Some(apply(op, &co, &list).await);
                co.park().await;
            }
        })
        .named("Parent");
    scheduler.schedule(blocker);
    scheduler.schedule(&parent);
    cycles(clock, scheduler, 1);
    assert!(scheduler.is_running(&parent));
    assert!(scheduler.is_running(blocker));
    for c in cmds {
        assert!(
            !scheduler.is_running(c) && !scheduler.is_scheduled(c),
            "{}",
            c.name()
        );
    }
    match seen.borrow_mut().take() {
        Some(Err(ForkError::Rejected { command, reason })) => {
            assert_eq!(command, failing.name());
            assert!(matches!(
                reason,
                ScheduleResult::LowerPriorityThanRunning { .. }
            ));
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn low_priority_child_gives_failure_object(op: Op) {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Subsystem");
    let high = priority_command(512, &[&mech]).named("High");
    let default = priority_command(0, &[&mech]);
    assert_fork_failure(
        &scheduler,
        &clock,
        op,
        &high,
        std::slice::from_ref(&default),
        &default,
    );
}

#[test]
fn low_priority_child_gives_failure_object_fork() {
    low_priority_child_gives_failure_object(Op::Fork);
}
#[test]
fn low_priority_child_gives_failure_object_await() {
    low_priority_child_gives_failure_object(Op::Await);
}
#[test]
fn low_priority_child_gives_failure_object_await_all() {
    low_priority_child_gives_failure_object(Op::AwaitAll);
}
#[test]
fn low_priority_child_gives_failure_object_await_any() {
    low_priority_child_gives_failure_object(Op::AwaitAny);
}

fn low_priority_child_with_schedulable_sibling_gives_failure_object(op: Op) {
    let (clock, scheduler) = setup();
    let busy = Mechanism::new(&scheduler, "Busy Subsystem");
    let idle = Mechanism::new(&scheduler, "Idle Subsystem");
    let high = priority_command(512, &[&busy]).named("High");
    let unschedulable = priority_command(0, &[&busy]);
    let schedulable = priority_command(0, &[&idle]);
    assert_fork_failure(
        &scheduler,
        &clock,
        op,
        &high,
        &[unschedulable.clone(), schedulable],
        &unschedulable,
    );
}

#[test]
fn low_priority_child_with_schedulable_sibling_gives_failure_object_fork() {
    low_priority_child_with_schedulable_sibling_gives_failure_object(Op::Fork);
}
#[test]
fn low_priority_child_with_schedulable_sibling_gives_failure_object_await_all() {
    low_priority_child_with_schedulable_sibling_gives_failure_object(Op::AwaitAll);
}
#[test]
fn low_priority_child_with_schedulable_sibling_gives_failure_object_await_any() {
    low_priority_child_with_schedulable_sibling_gives_failure_object(Op::AwaitAny);
}

fn low_priority_child_cancels_entire_composition(op: Op) {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let mech = Mechanism::new(&scheduler, "Subsystem");
    let high = priority_command(512, &[&mech]).named("High");
    let unschedulable = priority_command(0, &[&mech]);
    let grandchild = parked("Grandchild");
    let child = forks_then_parks("Child", &grandchild);
    let c = child.clone();
    let current = Command::no_requirements()
        .executing(move |co| {
            let (c, u) = (c.clone(), unschedulable.clone());
            async move {
                co.set_cancel_on_fork_failure(true);
                co.fork([&c]).unwrap();
                let _ = apply(op, &co, &[u]).await;
                co.park().await;
            }
        })
        .named("Current");
    let parent = awaiting_parent("Parent", 0, &current);
    let grandparent = awaiting_parent("Grandparent", 0, &parent);
    scheduler.schedule(&high);
    scheduler.schedule(&grandparent);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&high));
    let log = take(&log);
    assert!(
        events_contain(&log, "Interrupted Current by High"),
        "{log:?}"
    );
    assert_eq!(
        log.iter().filter(|e| e.starts_with("Interrupted")).count(),
        1,
        "only the command whose fork failed is interrupted"
    );
    for c in [&grandparent, &parent, &current, &child, &grandchild] {
        assert!(
            !scheduler.is_running(c) && !scheduler.is_scheduled(c),
            "{}",
            c.name()
        );
        assert!(events_contain(&log, &format!("Canceled {}", c.name())));
    }
}

#[test]
fn low_priority_child_cancels_entire_composition_fork() {
    low_priority_child_cancels_entire_composition(Op::Fork);
}
#[test]
fn low_priority_child_cancels_entire_composition_await() {
    low_priority_child_cancels_entire_composition(Op::Await);
}
#[test]
fn low_priority_child_cancels_entire_composition_await_all() {
    low_priority_child_cancels_entire_composition(Op::AwaitAll);
}
#[test]
fn low_priority_child_cancels_entire_composition_await_any() {
    low_priority_child_cancels_entire_composition(Op::AwaitAny);
}

fn high_priority_grandchild_with_low_priority_child(op: Op) {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Mech");
    let grandchild = priority_command(1000, &[&mech]).named("Grandchild");
    let child1 = awaiting_parent("Child1", 0, &grandchild);
    let child2 = priority_command(0, &[&mech]).named("Child2");
    let seen = std::rc::Rc::new(std::cell::RefCell::new(None));
    let s = seen.clone();
    let parent = Command::no_requirements()
        .executing(move |co| {
            let (s, list) = (s.clone(), vec![child1.clone(), child2.clone()]);
            async move {
                *s.borrow_mut() = Some(apply(op, &co, &list).await);
            }
        })
        .named("Parent");
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    match seen.borrow_mut().take() {
        Some(Err(ForkError::Rejected { command, reason })) => {
            assert_eq!(command, "Child2");
            match reason {
                ScheduleResult::LowerPriorityThanRunning { running, .. } => {
                    assert_eq!(running, "Grandchild");
                }
                other => panic!("expected LowerPriorityThanRunning, got {other:?}"),
            }
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn high_priority_grandchild_with_low_priority_child_fork() {
    high_priority_grandchild_with_low_priority_child(Op::Fork);
}
#[test]
fn high_priority_grandchild_with_low_priority_child_await_all() {
    high_priority_grandchild_with_low_priority_child(Op::AwaitAll);
}
#[test]
fn high_priority_grandchild_with_low_priority_child_await_any() {
    high_priority_grandchild_with_low_priority_child(Op::AwaitAny);
}
