//! The reference suite's `CoroutineTest`, ported (behaviour, not text): one test per reference
//! test, named after it. `waitUntilNullParamThrows` is not expressible (no null in Rust); see the
//! crate docs.

mod common;

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::Mutex;
use std::time::Duration;

use common::*;
use tickstep_commands::{Command, Coroutine, WaitResult};
use tickstep_kernel::clock::Instant;

/// A command recording the result of `wait_until_timeout(condition, 1 s)`.
fn waiting(
    name: &str,
    condition: impl Fn() -> bool + Clone + Unpin + 'static,
) -> (Command, Rc<Cell<Option<WaitResult>>>) {
    let result = Rc::new(Cell::new(None));
    let r = result.clone();
    let cmd = Command::no_requirements()
        .executing(move |co| {
            let (r, condition) = (r.clone(), condition.clone());
            async move {
                r.set(Some(
                    co.wait_until_timeout(condition, Duration::from_secs(1))
                        .await,
                ));
            }
        })
        .named(name);
    (cmd, result)
}

#[test]
fn wait_until_condition_met() {
    let (clock, scheduler) = setup();
    let (condition, when) = flag();
    let (cmd, result) = waiting("Wait Until Condition Met", when);
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&cmd));
    condition.set(true);
    cycles(&clock, &scheduler, 1);
    assert_eq!(result.get(), Some(WaitResult::ConditionMet));
    assert!(!scheduler.is_running(&cmd));
}

#[test]
fn wait_until_timeout() {
    let (clock, scheduler) = setup();
    let (_condition, when) = flag();
    let (cmd, result) = waiting("Wait Until Timeout", when);
    scheduler.schedule(&cmd);
    scheduler.run().unwrap();
    assert!(scheduler.is_running(&cmd));
    clock.set(Instant::ZERO + Duration::from_millis(500));
    scheduler.run().unwrap();
    assert!(scheduler.is_running(&cmd));
    clock.set(Instant::ZERO + Duration::from_millis(1100));
    scheduler.run().unwrap();
    assert_eq!(result.get(), Some(WaitResult::TimedOut));
    assert!(!scheduler.is_running(&cmd));
}

#[test]
fn wait_until_immediate_condition_met() {
    let (clock, scheduler) = setup();
    let (cmd, result) = waiting("Wait Until Immediate Condition Met", || true);
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1);
    assert_eq!(result.get(), Some(WaitResult::ConditionMet));
    assert!(!scheduler.is_running(&cmd));
}

#[test]
fn wait_until_condition_met_exactly_at_timeout() {
    let (clock, scheduler) = setup();
    let (condition, when) = flag();
    let (cmd, result) = waiting("Wait Until Condition Met Exactly At Timeout", when);
    scheduler.schedule(&cmd);
    scheduler.run().unwrap();
    clock.set(Instant::ZERO + Duration::from_secs(1));
    condition.set(true);
    scheduler.run().unwrap();
    assert_eq!(
        result.get(),
        Some(WaitResult::ConditionMet),
        "the condition wins a tie"
    );
    assert!(!scheduler.is_running(&cmd));
}

#[test]
fn fork_many() {
    let (clock, scheduler) = setup();
    let forked = [parked("a"), parked("b"), parked("c")];
    let list = forked.clone();
    let all = Command::no_requirements()
        .executing(move |co| {
            let list = list.clone();
            async move {
                co.fork(&list).unwrap();
                co.park().await;
            }
        })
        .named("Fork Many");
    scheduler.schedule(&all);
    cycles(&clock, &scheduler, 1);
    assert!(forked.iter().all(|c| scheduler.is_running(c)));
}

#[test]
#[allow(clippy::await_holding_refcell_ref)] // holding it across the yield is the point
fn yield_in_synchronized_block() {
    // A JVM monitor held across a yield; the Rust analogue is a `RefCell` borrow held across an
    // await, which is fine in a single-threaded scheduler.
    let (clock, scheduler) = setup();
    let i = Rc::new(RefCell::new(0));
    let ic = i.clone();
    let cmd = Command::no_requirements()
        .executing(move |co| {
            let i = ic.clone();
            async move {
                loop {
                    let mut guard = i.borrow_mut();
                    *guard += 1;
                    co.yield_now().await;
                    drop(guard);
                }
            }
        })
        .named("Yield In Synchronized Block");
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1);
    assert!(
        i.try_borrow().is_err(),
        "the borrow is held across the yield"
    );
    scheduler.cancel(&cmd);
    assert_eq!(*i.borrow(), 1, "dropping the canceled body released it");
}

#[test]
#[allow(clippy::await_holding_lock)] // holding it across the yield is the point
fn yield_in_lock_body() {
    let (clock, scheduler) = setup();
    let i = Rc::new(Mutex::new(0));
    let ic = i.clone();
    let cmd = Command::no_requirements()
        .executing(move |co| {
            let i = ic.clone();
            async move {
                loop {
                    let mut guard = i.lock().unwrap();
                    *guard += 1;
                    co.yield_now().await;
                    drop(guard);
                }
            }
        })
        .named("Increment In Lock Block");
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1);
    scheduler.cancel(&cmd);
    assert_eq!(*i.lock().unwrap(), 1);
}

#[test]
fn coroutine_escaping_command() {
    let (clock, scheduler) = setup();
    let escaped: Rc<RefCell<Option<Coroutine>>> = Rc::new(RefCell::new(None));
    let e = escaped.clone();
    let bad = Command::no_requirements()
        .executing(move |co| {
            *e.borrow_mut() = Some(co);
            async {}
        })
        .named("Bad Command");
    scheduler.schedule(&bad);
    cycles(&clock, &scheduler, 1);
    let co = escaped.borrow_mut().take().unwrap();
    let panic = catch_unwind(AssertUnwindSafe(|| drop(co.yield_now()))).unwrap_err();
    assert_eq!(
        panic.downcast_ref::<&str>().copied(),
        Some("Coroutines can only be used by the command bound to them")
    );
}

#[test]
fn using_parent_coroutine_in_child_throws() {
    let (_clock, scheduler) = setup();
    let parent = Command::no_requirements()
        .executing(|parent_co| async move {
            let pc = Rc::new(parent_co);
            let p = pc.clone();
            let child = Command::no_requirements()
                .executing(move |_child_co| {
                    let p = p.clone();
                    async move {
                        p.yield_now().await;
                    }
                })
                .named("Child");
            let _ = pc.await_cmd(&child).await;
        })
        .named("Parent");
    scheduler.schedule(&parent);
    let panic = catch_unwind(AssertUnwindSafe(|| scheduler.run())).unwrap_err();
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap();
    assert_eq!(
        message,
        "Coroutines can only be used by the command bound to them"
    );
    assert!(!scheduler.is_running(&parent));
}

#[test]
fn await_any_cleans_up() {
    let (clock, scheduler) = setup();
    let first_ran = Rc::new(Cell::new(false));
    let second_ran = Rc::new(Cell::new(false));
    let after = Rc::new(Cell::new(false));
    let f = first_ran.clone();
    let first = Command::no_requirements()
        .executing(move |_co| {
            f.set(true);
            async {}
        })
        .named("First");
    let s = second_ran.clone();
    let second = Command::no_requirements()
        .executing(move |co| {
            s.set(true);
            async move {
                co.park().await;
            }
        })
        .named("Second");
    let a = after.clone();
    let outer = Command::no_requirements()
        .executing(move |co| {
            let (first, second, a) = (first.clone(), second.clone(), a.clone());
            async move {
                co.await_any([&first, &second]).await.unwrap();
                a.set(true);
                co.park().await;
            }
        })
        .named("Command");
    scheduler.schedule(&outer);
    cycles(&clock, &scheduler, 1);
    assert!(first_ran.get() && second_ran.get() && after.get());
    assert_eq!(running_names(&scheduler), ["Command"]);
}
