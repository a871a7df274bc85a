//! The reference suite's `ParallelGroupTest`, ported (behaviour, not text): one test per
//! reference test, named after it. The reference's group with required and optional commands is
//! `compose::parallel` (all required), `compose::race` (all optional) or `compose::deadline`.

mod common;

use std::cell::Cell;
use std::rc::Rc;

use common::*;
use tickstep_commands::{Command, Mechanism, compose};

/// A command on `mech` that yields, then counts, `n` times.
fn counting(mech: &Mechanism, name: &str, n: u32) -> (Command, Rc<Cell<u32>>) {
    let count = Rc::new(Cell::new(0));
    let c = count.clone();
    let cmd = mech
        .run(move |co| {
            let c = c.clone();
            async move {
                for _ in 0..n {
                    co.yield_now().await;
                    c.set(c.get() + 1);
                }
            }
        })
        .named(name);
    (cmd, count)
}

#[test]
fn parallel_all() {
    let (clock, scheduler) = setup();
    let (r1, r2) = (
        Mechanism::new(&scheduler, "R1"),
        Mechanism::new(&scheduler, "R2"),
    );
    let (c1, n1) = counting(&r1, "C1", 5);
    let (c2, n2) = counting(&r2, "C2", 10);
    let parallel = compose::parallel([&c1, &c2]).unwrap().named("Parallel");
    scheduler.schedule(&parallel);
    cycles(&clock, &scheduler, 1);
    assert!(
        scheduler.is_running(&parallel) && scheduler.is_running(&c1) && scheduler.is_running(&c2)
    );
    for i in 1..5 {
        cycles(&clock, &scheduler, 1);
        assert!(scheduler.is_running(&c1) && scheduler.is_running(&c2));
        assert_eq!((n1.get(), n2.get()), (i, i));
    }
    for i in 5..10 {
        cycles(&clock, &scheduler, 1);
        assert!(!scheduler.is_running(&c1) && scheduler.is_running(&c2));
        assert_eq!((n1.get(), n2.get()), (5, i));
    }
    assert!(scheduler.is_running(&parallel));
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&parallel) && !scheduler.is_running(&c2));
    assert_eq!((n1.get(), n2.get()), (5, 10));
}

#[test]
fn race() {
    let (clock, scheduler) = setup();
    let (r1, r2) = (
        Mechanism::new(&scheduler, "R1"),
        Mechanism::new(&scheduler, "R2"),
    );
    let (c1, n1) = counting(&r1, "C1", 5);
    let (c2, n2) = counting(&r2, "C2", 10);
    let race = compose::race([&c1, &c2]).unwrap().named("Race");
    scheduler.schedule(&race);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&race) && scheduler.is_running(&c1) && scheduler.is_running(&c2));
    for i in 1..5 {
        cycles(&clock, &scheduler, 1);
        assert_eq!((n1.get(), n2.get()), (i, i));
    }
    cycles(&clock, &scheduler, 1);
    assert!(
        !scheduler.is_running(&race) && !scheduler.is_running(&c1) && !scheduler.is_running(&c2)
    );
    assert_eq!((n1.get(), n2.get()), (5, 5));
}

#[test]
fn nested() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "mechanism");
    let (command, count) = counting(&mech, "Command", 5);
    let inner = compose::parallel([&command]).unwrap().named("Inner");
    let outer = compose::race([&inner]).unwrap().named("Outer");
    scheduler.schedule(&outer);
    assert!(scheduler.is_scheduled(&outer));
    assert!(!scheduler.is_scheduled(&inner) && !scheduler.is_running(&inner));
    assert!(!scheduler.is_scheduled(&command) && !scheduler.is_running(&command));
    cycles(&clock, &scheduler, 1);
    assert!(
        scheduler.is_running(&outer)
            && scheduler.is_running(&inner)
            && scheduler.is_running(&command)
    );
    assert_eq!(count.get(), 0);
    for i in 1..5 {
        cycles(&clock, &scheduler, 1);
        assert!(
            scheduler.is_running(&outer)
                && scheduler.is_running(&inner)
                && scheduler.is_running(&command)
        );
        assert_eq!(count.get(), i);
    }
    cycles(&clock, &scheduler, 1);
    assert!(
        !scheduler.is_running(&outer)
            && !scheduler.is_running(&inner)
            && !scheduler.is_running(&command)
    );
}

fn abc() -> (Command, Command, Command) {
    (instant("A"), instant("B"), instant("C"))
}

#[test]
fn automatic_name_race() {
    let (a, b, c) = abc();
    assert_eq!(compose::race([&a, &b, &c]).unwrap().name(), "(A | B | C)");
}

#[test]
fn automatic_name_all() {
    let (a, b, c) = abc();
    assert_eq!(
        compose::parallel([&a, &b, &c]).unwrap().name(),
        "(A & B & C)"
    );
}

#[test]
fn automatic_name_deadline() {
    let (a, b, c) = abc();
    assert_eq!(
        compose::deadline([&a], [&b, &c]).unwrap().name(),
        "[(A) * (B | C)]"
    );
}

#[test]
fn inherits_requirements() {
    let (_clock, scheduler) = setup();
    let (m1, m2) = (
        Mechanism::new(&scheduler, "Mech 1"),
        Mechanism::new(&scheduler, "Mech 2"),
    );
    let group = compose::parallel([
        &parked_on(&m1, "Command 1", 0),
        &parked_on(&m2, "Command 2", 0),
    ])
    .unwrap();
    assert_eq!(group.requirements(), [m1, m2]);
}

#[test]
fn inherits_priority() {
    let (_clock, scheduler) = setup();
    let (m1, m2) = (
        Mechanism::new(&scheduler, "Mech 1"),
        Mechanism::new(&scheduler, "Mech 2"),
    );
    let group = compose::parallel([
        &parked_on(&m1, "Command 1", 100),
        &parked_on(&m2, "Command 2", 200),
    ])
    .unwrap();
    assert_eq!(group.priority(), 200);
}
