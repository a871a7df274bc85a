//! `await_all` and `await_any` against children that end on different cycles
//! (docs/commands.md §5.6, §13.4). The reference's `awaitCompletion` once returned after one poll
//! per child (allwpilib #9381): a join that resumes its parent before the last child ended, or
//! that counts a child's first yield as its end, fails these.

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use common::*;
use tickstep_commands::{Command, CommandScheduler};

/// A command that records the cycle it ends in, after yielding `n` times.
fn ends_after(
    name: &str,
    n: usize,
    cycle: &Rc<Cell<u32>>,
    ended: &Rc<RefCell<Vec<(String, u32)>>>,
) -> Command {
    let (cycle, ended, label) = (cycle.clone(), ended.clone(), name.to_owned());
    Command::no_requirements()
        .executing(move |co| {
            let (cycle, ended, label) = (cycle.clone(), ended.clone(), label.clone());
            async move {
                for _ in 0..n {
                    co.yield_now().await;
                }
                ended.borrow_mut().push((label, cycle.get()));
            }
        })
        .named(name)
}

/// Runs cycles numbered from 1, keeping `cycle` current.
fn run_numbered(scheduler: &CommandScheduler, cycle: &Rc<Cell<u32>>, n: u32) {
    for _ in 0..n {
        cycle.set(cycle.get() + 1);
        scheduler.run().unwrap();
    }
}

#[test]
fn await_all_resumes_in_the_cycle_the_last_child_ends() {
    let (_clock, scheduler) = setup();
    let cycle = Rc::new(Cell::new(0));
    let ended = Rc::new(RefCell::new(Vec::new()));
    let a = ends_after("a", 0, &cycle, &ended);
    let b = ends_after("b", 2, &cycle, &ended);
    let c = ends_after("c", 4, &cycle, &ended);
    let (kids, cy, en) = ([a, b, c], cycle.clone(), ended.clone());
    let parent = Command::no_requirements()
        .executing(move |co| {
            let (kids, cy, en) = (kids.clone(), cy.clone(), en.clone());
            async move {
                co.await_all(&kids).await.unwrap();
                en.borrow_mut().push(("parent".into(), cy.get()));
            }
        })
        .named("parent");
    scheduler.schedule(&parent);
    run_numbered(&scheduler, &cycle, 8);
    assert_eq!(
        *ended.borrow(),
        [
            ("a".into(), 1),
            ("b".into(), 3),
            ("c".into(), 5),
            ("parent".into(), 5)
        ]
    );
    assert!(!scheduler.is_running(&parent));
}

#[test]
fn await_all_waits_for_a_joined_command_running_elsewhere() {
    let (_clock, scheduler) = setup();
    let cycle = Rc::new(Cell::new(0));
    let ended = Rc::new(RefCell::new(Vec::new()));
    let long = ends_after("long", 6, &cycle, &ended);
    let short = ends_after("short", 1, &cycle, &ended);
    scheduler.schedule(&long);
    run_numbered(&scheduler, &cycle, 1);
    let (kids, cy, en) = ([long.clone(), short], cycle.clone(), ended.clone());
    let parent = Command::no_requirements()
        .executing(move |co| {
            let (kids, cy, en) = (kids.clone(), cy.clone(), en.clone());
            async move {
                co.await_all(&kids).await.unwrap();
                en.borrow_mut().push(("parent".into(), cy.get()));
            }
        })
        .named("parent");
    scheduler.schedule(&parent);
    run_numbered(&scheduler, &cycle, 9);
    let ended = ended.borrow();
    let when = |name: &str| ended.iter().find(|(n, _)| n == name).map(|(_, c)| *c);
    assert_eq!(when("short"), Some(3));
    assert_eq!(when("long"), Some(7));
    // `long` was scheduled before the parent, so it runs after it in each cycle (newest
    // first, docs/commands.md §3.4): the parent sees it ended one cycle later.
    assert_eq!(when("parent"), Some(8));
}

#[test]
fn await_any_resumes_when_the_first_child_ends_and_cancels_the_rest() {
    let (_clock, scheduler) = setup();
    let cycle = Rc::new(Cell::new(0));
    let ended = Rc::new(RefCell::new(Vec::new()));
    let b = ends_after("b", 2, &cycle, &ended);
    let c = ends_after("c", 4, &cycle, &ended);
    let (kids, cy, en) = ([b, c.clone()], cycle.clone(), ended.clone());
    let parent = Command::no_requirements()
        .executing(move |co| {
            let (kids, cy, en) = (kids.clone(), cy.clone(), en.clone());
            async move {
                co.await_any(&kids).await.unwrap();
                en.borrow_mut().push(("parent".into(), cy.get()));
                co.yield_now().await;
            }
        })
        .named("parent");
    scheduler.schedule(&parent);
    run_numbered(&scheduler, &cycle, 2);
    assert!(ended.borrow().is_empty(), "neither child ended yet");
    run_numbered(&scheduler, &cycle, 1);
    assert!(!scheduler.is_running(&c), "the slower child is canceled");
    run_numbered(&scheduler, &cycle, 4);
    assert_eq!(*ended.borrow(), [("b".into(), 3), ("parent".into(), 3)]);
}

#[test]
fn await_any_on_children_that_all_keep_running_never_resumes() {
    let (_clock, scheduler) = setup();
    let cycle = Rc::new(Cell::new(0));
    let resumed = Rc::new(Cell::new(false));
    let (a, b) = (parked("a"), parked("b"));
    let (kids, r) = ([a.clone(), b.clone()], resumed.clone());
    let parent = Command::no_requirements()
        .executing(move |co| {
            let (kids, r) = (kids.clone(), r.clone());
            async move {
                co.await_any(&kids).await.unwrap();
                r.set(true);
            }
        })
        .named("parent");
    scheduler.schedule(&parent);
    run_numbered(&scheduler, &cycle, 10);
    assert!(!resumed.get());
    assert!(scheduler.is_running(&a) && scheduler.is_running(&b));
}
