//! The reference suite's `SequentialGroupTest`, ported (behaviour, not text): one test per
//! reference test, named after it.

mod common;

use common::*;
use tickstep_commands::{Mechanism, compose};

#[test]
fn single() {
    let (clock, scheduler) = setup();
    let command = yield_once("The Command");
    let sequence = compose::sequence([&command]).unwrap().named("The Sequence");
    scheduler.schedule(&sequence);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&sequence) && scheduler.is_running(&command));
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&sequence) && !scheduler.is_running(&command));
}

#[test]
fn two_commands() {
    let (clock, scheduler) = setup();
    let (c1, c2) = (yield_once("C1"), yield_once("C2"));
    let sequence = compose::sequence([&c1, &c2]).unwrap().named("C1 > C2");
    scheduler.schedule(&sequence);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&sequence) && scheduler.is_running(&c1));
    assert!(!scheduler.is_running(&c2) && !scheduler.is_scheduled(&c2));
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&sequence));
    assert!(!scheduler.is_running(&c1));
    assert!(scheduler.is_running(&c2), "C2 starts in the cycle C1 ends");
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&sequence) && !scheduler.is_running(&c2));
}

#[test]
fn inherits_requirements() {
    let (_clock, scheduler) = setup();
    let (m1, m2) = (
        Mechanism::new(&scheduler, "Mech 1"),
        Mechanism::new(&scheduler, "Mech 2"),
    );
    let sequence = compose::sequence([
        &parked_on(&m1, "Command 1", 0),
        &parked_on(&m2, "Command 2", 0),
    ])
    .unwrap();
    assert_eq!(sequence.requirements(), [m1, m2]);
}

#[test]
fn inherits_priority() {
    let (_clock, scheduler) = setup();
    let (m1, m2) = (
        Mechanism::new(&scheduler, "Mech 1"),
        Mechanism::new(&scheduler, "Mech 2"),
    );
    let sequence = compose::sequence([
        &parked_on(&m1, "Command 1", 100),
        &parked_on(&m2, "Command 2", 200),
    ])
    .unwrap();
    assert_eq!(sequence.priority(), 200);
}
