//! The reference suite's `StagedCommandBuilderTest`, ported (behaviour, not text). Only
//! `streamlined` and `allOptions` have a Rust form: the builder stages are consumed by value, so
//! reusing one after `named` does not compile (the reference's eleven `*_throwsAfterBuild` tests),
//! and there is no null (its thirteen `*_throwsNPE` tests). See the crate docs.

mod common;

use common::*;
use tickstep_commands::{Command, Mechanism};

#[test]
fn streamlined() {
    let command = Command::no_requirements()
        .executing(|co| async move {
            co.park().await;
        })
        .until(|| false)
        .named("Name");
    assert_eq!(command.name(), "Name");
}

#[test]
fn all_options() {
    let (_clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Mech");
    let command = Command::no_requirements()
        .requiring(&mech)
        .requiring(&mech)
        .executing(|co| async move {
            co.park().await;
        })
        .on_cancel(|| {})
        .until(|| false)
        .with_priority(10)
        .named("Name");
    assert_eq!(command.name(), "Name");
    assert_eq!(command.requirements(), [mech]);
    assert_eq!(command.priority(), 10);
}
