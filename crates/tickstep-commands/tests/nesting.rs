//! Nesting, forks, awaits, errors and panics.

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use common::{cycles, forks_then_parks, parked, parked_on, record, setup, strs, take, yields};
use tickstep_commands::{Command, ForkError, Mechanism, ScheduleResult};

/// A parent that awaits `child` then records that it resumed.
fn awaiting(name: &str, child: &Command, resumed: &Rc<Cell<bool>>) -> Command {
    let (child, resumed) = (child.clone(), resumed.clone());
    Command::no_requirements()
        .executing_fallible(move |co| {
            let (child, resumed) = (child.clone(), resumed.clone());
            async move {
                co.await_cmd(&child).await?;
                resumed.set(true);
                Ok(())
            }
        })
        .named(name)
}

#[test]
fn a_child_starts_synchronously_inside_the_parents_poll_and_runs_once_that_cycle() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let child = yields("C", 3);
    let parent = awaiting("P", &child, &Rc::new(Cell::new(false)));
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    assert_eq!(
        take(&log),
        strs(&[
            "Scheduled P",
            "Mounted P",
            "Scheduled C",
            "Mounted C",
            "Yielded C",
            "Yielded P"
        ])
    );
    cycles(&clock, &scheduler, 1);
    // Newest first: the child runs before its parent.
    assert_eq!(
        take(&log),
        strs(&["Mounted C", "Yielded C", "Mounted P", "Yielded P"])
    );
}

#[test]
fn a_parent_awaiting_a_child_resumes_in_the_cycle_the_child_completes() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let resumed = Rc::new(Cell::new(false));
    let child = yields("C", 1);
    let parent = awaiting("P", &child, &resumed);
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    take(&log);
    cycles(&clock, &scheduler, 1);
    assert!(resumed.get());
    assert_eq!(
        take(&log),
        strs(&["Mounted C", "Completed C", "Mounted P", "Completed P"])
    );
}

#[test]
fn children_never_outlive_their_parent() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let a = parked("A");
    let b = parked("B");
    let (ca, cb) = (a.clone(), b.clone());
    let parent = Command::no_requirements()
        .executing_fallible(move |co| {
            let (a, b) = (ca.clone(), cb.clone());
            async move {
                co.fork([&a, &b])?;
                co.yield_now().await;
                Ok(())
            }
        })
        .named("P");
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 2);
    assert!(!scheduler.is_running(&a) && !scheduler.is_running(&b));
    let events = take(&log);
    assert_eq!(
        &events[events.len() - 3..],
        strs(&["Completed P", "Canceled B", "Canceled A"])
    );
}

#[test]
fn canceling_a_parent_reports_it_before_its_descendants() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let grandchild = parked("G");
    let child = forks_then_parks("C", &grandchild);
    let parent = forks_then_parks("P", &child);
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    take(&log);
    scheduler.cancel(&parent);
    assert_eq!(
        take(&log),
        strs(&["Canceled P", "Canceled C", "Canceled G"])
    );
    assert!(scheduler.running().is_empty());
}

#[test]
fn a_child_may_use_its_parents_mechanisms() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let child = parked_on(&arm, "child", 0);
    let c = child.clone();
    let parent = arm
        .run(move |co| {
            let c = c.clone();
            async move {
                co.await_cmd(&c).await.unwrap();
            }
        })
        .named("parent");
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&parent) && scheduler.is_running(&child));
    // The parent keeps the mechanism: an outsider of lower priority is refused.
    let outsider = parked_on(&arm, "outsider", -1);
    assert!(matches!(
        scheduler.schedule(&outsider),
        ScheduleResult::LowerPriorityThanRunning { .. }
    ));
}

#[test]
fn interrupting_a_child_cancels_its_whole_composition() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let arm = Mechanism::new(&scheduler, "arm");
    let child = parked_on(&arm, "child", 0);
    let c = child.clone();
    let parent = Command::no_requirements()
        .executing(move |co| {
            let c = c.clone();
            async move {
                co.await_cmd(&c).await.unwrap();
            }
        })
        .named("parent");
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    take(&log);
    let intruder = parked_on(&arm, "intruder", 0);
    scheduler.schedule(&intruder);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&parent) && !scheduler.is_running(&child));
    assert_eq!(
        take(&log),
        strs(&[
            "Scheduled intruder",
            "Interrupted parent by intruder",
            "Canceled parent",
            "Canceled child",
            "Mounted intruder",
            "Yielded intruder"
        ])
    );
}

#[test]
fn effective_priority_is_the_maximum_over_ancestors() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let child = parked_on(&arm, "child", -100);
    let c = child.clone();
    let parent = Command::no_requirements()
        .executing(move |co| {
            let c = c.clone();
            async move {
                co.await_cmd(&c).await.unwrap();
            }
        })
        .with_priority(50)
        .named("parent");
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    let info = scheduler
        .running()
        .into_iter()
        .find(|i| i.name == "child")
        .unwrap();
    assert_eq!(info.priority, 50);
    let rival = parked_on(&arm, "rival", 49);
    assert_eq!(
        scheduler.schedule(&rival),
        ScheduleResult::LowerPriorityThanRunning {
            running: "child".into(),
            running_priority: 50,
            priority: 49
        }
    );
}

#[test]
fn a_child_that_loses_a_priority_conflict_fails_the_fork_and_starts_nothing() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let owner = parked_on(&arm, "owner", 10);
    scheduler.schedule(&owner);
    cycles(&clock, &scheduler, 1);
    let free = parked("free");
    let weak = parked_on(&arm, "weak", 0);
    let result = Rc::new(RefCell::new(None));
    let (f, w, out) = (free.clone(), weak.clone(), result.clone());
    let parent = Command::no_requirements()
        .executing(move |co| {
            let (f, w, out) = (f.clone(), w.clone(), out.clone());
            async move {
                *out.borrow_mut() = Some(co.fork([&f, &w]));
                co.park().await;
            }
        })
        .named("parent");
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    let err = result.borrow_mut().take().unwrap().unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot fork `weak`: priority 0 is lower than running command `owner` (priority 10)"
    );
    assert!(!scheduler.is_running(&free), "all or nothing");
    assert!(scheduler.is_running(&owner));
}

#[test]
fn a_failed_fork_propagated_with_question_mark_cancels_the_composition() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let arm = Mechanism::new(&scheduler, "arm");
    let owner = parked_on(&arm, "owner", 10);
    scheduler.schedule(&owner);
    cycles(&clock, &scheduler, 1);
    take(&log);
    let weak = parked_on(&arm, "weak", 0);
    let w = weak.clone();
    let parent = Command::no_requirements()
        .executing_fallible(move |co| {
            let w = w.clone();
            async move {
                co.await_cmd(&w).await?;
                Ok(())
            }
        })
        .named("parent");
    scheduler.schedule(&parent);
    let err = scheduler.run().unwrap_err();
    assert_eq!(&*err.command, "parent");
    assert!(matches!(
        err.source.downcast_ref::<ForkError>(),
        Some(ForkError::Rejected { .. })
    ));
    assert_eq!(
        take(&log),
        strs(&[
            "Scheduled parent",
            "Mounted parent",
            "CompletedWithError parent",
        ])
    );
}

#[test]
fn forking_mutually_conflicting_commands_is_an_error_listing_every_pair() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let wrist = Mechanism::new(&scheduler, "wrist");
    let a = parked_on(&arm, "a", 0);
    let b = Command::requiring(&arm)
        .requiring(&wrist)
        .executing(|co| async move {
            co.park().await;
        })
        .named("b");
    let c = parked_on(&wrist, "c", 0);
    let result = Rc::new(RefCell::new(None));
    let (ca, cb, cc, out) = (a.clone(), b.clone(), c.clone(), result.clone());
    let parent = Command::no_requirements()
        .executing(move |co| {
            let (a, b, c, out) = (ca.clone(), cb.clone(), cc.clone(), out.clone());
            async move {
                *out.borrow_mut() = Some(co.fork([&a, &b, &c]));
            }
        })
        .named("parent");
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    let err = result.borrow_mut().take().unwrap().unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot fork mutually conflicting commands: `a` and `b` (both require arm); `b` and `c` (both require wrist)"
    );
    assert!(scheduler.running().is_empty());
}

#[test]
fn forking_an_already_running_command_is_an_error() {
    let (clock, scheduler) = setup();
    let busy = parked("busy");
    scheduler.schedule(&busy);
    cycles(&clock, &scheduler, 1);
    let result = Rc::new(RefCell::new(None));
    let (b, out) = (busy.clone(), result.clone());
    let parent = Command::no_requirements()
        .executing(move |co| {
            let (b, out) = (b.clone(), out.clone());
            async move {
                *out.borrow_mut() = Some(co.fork([&b]));
            }
        })
        .named("parent");
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    assert_eq!(
        result.borrow_mut().take().unwrap(),
        Err(ForkError::AlreadyRunning {
            command: "busy".into()
        })
    );
}

#[test]
fn awaiting_itself_blocks_only_itself() {
    let (clock, scheduler) = setup();
    let me: Rc<RefCell<Option<Command>>> = Rc::new(RefCell::new(None));
    let slot = me.clone();
    let narcissus = Command::no_requirements()
        .executing(move |co| {
            let slot = slot.clone();
            async move {
                let me = slot.borrow().clone().unwrap();
                co.await_cmd(&me).await.unwrap();
            }
        })
        .named("narcissus");
    *me.borrow_mut() = Some(narcissus.clone());
    let bystander = yields("bystander", 2);
    scheduler.schedule(&narcissus);
    scheduler.schedule(&bystander);
    cycles(&clock, &scheduler, 5);
    assert!(scheduler.is_running(&narcissus));
    assert!(
        !scheduler.is_running(&bystander),
        "others keep running and finish"
    );
}

#[test]
fn two_commands_awaiting_each_other_block_only_themselves() {
    let (clock, scheduler) = setup();
    let slots: Rc<RefCell<Vec<Command>>> = Rc::new(RefCell::new(Vec::new()));
    let waiter = |name: &str, other: usize| {
        let slots = slots.clone();
        Command::no_requirements()
            .executing(move |co| {
                let slots = slots.clone();
                async move {
                    co.yield_now().await;
                    let other = slots.borrow()[other].clone();
                    co.await_cmd(&other).await.unwrap();
                }
            })
            .named(name)
    };
    let a = waiter("a", 1);
    let b = waiter("b", 0);
    slots.borrow_mut().extend([a.clone(), b.clone()]);
    let bystander = yields("bystander", 3);
    scheduler.schedule(&a);
    scheduler.schedule(&b);
    scheduler.schedule(&bystander);
    cycles(&clock, &scheduler, 10);
    assert!(scheduler.is_running(&a) && scheduler.is_running(&b));
    assert!(!scheduler.is_running(&bystander));
    scheduler.cancel(&a);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&b), "b resumes once a is gone");
}

#[test]
fn await_any_cancels_the_others() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let slow = parked("slow");
    let fast = yields("fast", 1);
    let (s, f) = (slow.clone(), fast.clone());
    let first = Command::no_requirements()
        .executing_fallible(move |co| {
            let (s, f) = (s.clone(), f.clone());
            async move { Ok(co.await_any([&s, &f]).await?) }
        })
        .named("first");
    scheduler.schedule(&first);
    cycles(&clock, &scheduler, 2);
    assert!(!scheduler.is_running(&slow) && !scheduler.is_running(&first));
    let events = take(&log);
    assert_eq!(
        &events[events.len() - 2..],
        strs(&["Canceled slow", "Completed first"])
    );
}

/// docs/commands.md §9.4: `CompletedWithError` for the child, then its root is canceled.
#[test]
fn a_child_erroring_after_a_remount_cancels_the_root_in_the_seed_order() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let child = Command::no_requirements()
        .executing_fallible(|co| async move {
            co.yield_now().await;
            Err("sensor unplugged".into())
        })
        .named("C");
    let c = child.clone();
    let parent = Command::no_requirements()
        .executing_fallible(move |co| {
            let c = c.clone();
            async move { Ok(co.await_cmd(&c).await?) }
        })
        .named("P");
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    let err = scheduler.run().unwrap_err();
    assert_eq!(
        take(&log),
        strs(&[
            "Scheduled P",
            "Mounted P",
            "Scheduled C",
            "Mounted C",
            "Yielded C",
            "Yielded P",
            "Mounted C",
            "CompletedWithError C",
            "Canceled P"
        ])
    );
    assert_eq!(&*err.command, "C");
    assert_eq!(err.source.to_string(), "sensor unplugged");
    // Named where it was awaited: this file.
    assert!(
        err.scheduled_at.file().ends_with("nesting.rs"),
        "{}",
        err.scheduled_at
    );
    assert!(scheduler.running().is_empty());
}

#[test]
fn run_error_names_where_a_top_level_command_was_scheduled() {
    let (_clock, scheduler) = setup();
    let failing = Command::no_requirements()
        .executing_fallible(|_co| async { Err(std::fmt::Error.into()) })
        .named("failing");
    let line = line!() + 1;
    scheduler.schedule(&failing);
    let err = scheduler.run().unwrap_err();
    assert_eq!(err.scheduled_at.line(), line);
    assert!(
        err.to_string()
            .starts_with("command `failing` (#1, scheduled at ")
    );
    // The cause is the error's source, not part of its message (docs/README.md, "Errors").
    assert!(err.to_string().ends_with(") failed"));
    assert_eq!(
        std::error::Error::source(&err).map(ToString::to_string),
        Some("an error occurred when formatting an argument".to_owned())
    );
}

#[test]
fn an_error_stops_the_rest_of_the_cycle_and_the_others_run_next_cycle() {
    let (clock, scheduler) = setup();
    let (n, bump) = common::counter();
    let older = Command::no_requirements()
        .executing(move |co| {
            let bump = bump.clone();
            async move {
                for _ in 0..100 {
                    bump();
                    co.yield_now().await;
                }
            }
        })
        .named("older");
    let failing = Command::no_requirements()
        .executing_fallible(|co| async move {
            co.yield_now().await;
            Err("boom".into())
        })
        .named("failing");
    scheduler.schedule(&older);
    scheduler.schedule(&failing);
    cycles(&clock, &scheduler, 1);
    assert_eq!(n.get(), 1);
    assert!(scheduler.run().is_err()); // failing runs first (newest) and stops the cycle
    assert_eq!(n.get(), 1);
    cycles(&clock, &scheduler, 1);
    assert_eq!(n.get(), 2);
    assert!(scheduler.is_running(&older));
}

#[test]
fn a_panic_resumes_after_the_event_and_listeners_cannot_swallow_it() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    // A listener that tries its best to "handle" the failure.
    let s2 = scheduler.clone();
    scheduler.on_event(move |e| {
        if e.kind.label() == "CompletedWithError" {
            s2.cancel_all();
        }
    });
    let child = Command::no_requirements()
        .executing(|_co| async { panic!("gearbox exploded") })
        .named("C");
    let c = child.clone();
    let parent = Command::no_requirements()
        .executing_fallible(move |co| {
            let c = c.clone();
            async move { Ok(co.await_cmd(&c).await?) }
        })
        .named("P");
    scheduler.schedule(&parent);
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = scheduler.run();
    }))
    .unwrap_err();
    assert_eq!(*panic.downcast_ref::<&str>().unwrap(), "gearbox exploded");
    assert_eq!(
        take(&log),
        strs(&[
            "Scheduled P",
            "Mounted P",
            "Scheduled C",
            "Mounted C",
            "CompletedWithError C",
            "Canceled P"
        ])
    );
    // The scheduler is still usable after the panic.
    let after = yields("after", 0);
    scheduler.schedule(&after);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&after));
}

#[test]
fn an_error_event_carries_the_message() {
    let (_clock, scheduler) = setup();
    let events = common::record_events(&scheduler);
    let failing = Command::no_requirements()
        .executing_fallible(|_co| async { Err("bad wiring".into()) })
        .named("f");
    scheduler.schedule(&failing);
    let _ = scheduler.run();
    let last = events.borrow().last().cloned().unwrap();
    assert_eq!(
        last.kind,
        tickstep_commands::EventKind::CompletedWithError {
            message: "bad wiring".into()
        }
    );
}

#[test]
fn parent_of_reports_the_parent_and_none_for_roots() {
    let (clock, scheduler) = setup();
    let child = parked("child");
    let parent = awaiting("parent", &child, &Rc::new(Cell::new(false)));
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    assert_eq!(scheduler.parent_of(&child), Some(parent.clone()));
    assert_eq!(scheduler.parent_of(&parent), None);
    let running = scheduler.running();
    assert_eq!(running[1].parent, Some(running[0].id));
}
