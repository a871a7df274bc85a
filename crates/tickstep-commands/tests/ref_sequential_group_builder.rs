//! The reference suite's `SequentialGroupBuilderTest`, ported (behaviour, not text): one test per
//! reference test, named after it. Its null-argument tests (`andThenSingleNull`,
//! `andThenThenVarargNullArray`, `andThenNullInVarargs`, `namedWithNull`) have no Rust form; see
//! the crate docs.

mod common;

use common::*;
use tickstep_commands::compose;

#[test]
fn and_then_single() {
    let c1 = parked("C1");
    let sequence = compose::sequence([&c1]).unwrap().named("Seq");
    assert_eq!(sequence.name(), "Seq");
}

#[test]
fn and_then_multiple() {
    let (c1, c2) = (parked("C1"), parked("C2"));
    let sequence = compose::sequence([&c1, &c2]).unwrap().named("Seq");
    assert_eq!(sequence.name(), "Seq");
}

#[test]
fn and_then_repeated() {
    let (clock, scheduler) = setup();
    let (c1, c2) = (yield_once("C1"), yield_once("C2"));
    let sequence = c1.and_then(&c2).named("Seq");
    assert_eq!(sequence.name(), "Seq");
    scheduler.schedule(&sequence);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&c1));
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&c2), "C1 then C2, in that order");
}

#[test]
fn until_returns_parallel_group() {
    let (clock, scheduler) = setup();
    let c1 = parked("C1");
    let sequence = compose::sequence([&c1])
        .unwrap()
        .until(|| false)
        .named("Seq");
    assert_eq!(sequence.name(), "Seq");
    scheduler.schedule(&sequence);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&c1));
}

#[test]
fn automatic_name_with_empty_group() {
    let (clock, scheduler) = setup();
    let sequence = compose::sequence([]).unwrap();
    assert_eq!(sequence.name(), "");
    scheduler.schedule(&sequence);
    cycles(&clock, &scheduler, 1);
    assert!(
        !scheduler.is_running(&sequence),
        "an empty sequence completes at once"
    );
}

#[test]
fn automatic_name_with_one_command() {
    assert_eq!(compose::sequence([&parked("C1")]).unwrap().name(), "C1");
}

#[test]
fn automatic_name_with_multiple_commands() {
    assert_eq!(
        compose::sequence([&parked("C1"), &parked("C2")])
            .unwrap()
            .name(),
        "C1 -> C2"
    );
}

#[test]
fn automatic_name_with_until_condition() {
    let sequence = compose::sequence([&parked("C1"), &parked("C2")])
        .unwrap()
        .until(|| true);
    assert_eq!(sequence.name(), "(C1 -> C2 | Until Condition)");
}
