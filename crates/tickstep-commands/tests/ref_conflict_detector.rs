//! The reference suite's `ConflictDetectorTest`, ported (behaviour, not text): tickstep's conflict
//! detection is internal; it is observed where it decides, in the errors of concurrent groups.

mod common;

use common::*;
use tickstep_commands::{Command, CompositionError, ConflictPair, Mechanism, compose};

#[test]
fn empty_input_has_no_conflicts() {
    // An empty parallel is refused for being empty, not for a conflict.
    assert!(matches!(
        compose::parallel([]),
        Err(CompositionError::Empty { .. })
    ));
}

#[test]
fn single_input_has_no_conflicts() {
    let (_clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Mech");
    assert!(compose::parallel([&parked_on(&mech, "Command", 0)]).is_ok());
}

#[test]
fn command_does_not_conflict_with_self() {
    let (_clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Mech");
    let command = parked_on(&mech, "Command", 0);
    // Listed twice it is a duplicate (one command runs once at a time), not a conflict.
    assert!(matches!(
        compose::parallel([&command, &command]),
        Err(CompositionError::Duplicate { .. })
    ));
}

#[test]
fn detect_many_conflicts() {
    let (_clock, scheduler) = setup();
    let m1 = Mechanism::new(&scheduler, "Mech 1");
    let m2 = Mechanism::new(&scheduler, "Mech 2");
    let on = |name: &str, mechs: &[&Mechanism]| {
        let mut builder = Command::no_requirements();
        for m in mechs {
            builder = builder.requiring(m);
        }
        builder
            .executing(|co| async move {
                co.park().await;
            })
            .named(name)
    };
    let all = [
        on("Command1", &[&m1, &m2]),
        on("Command2", &[&m1]),
        on("Command3", &[&m2]),
        on("Command4", &[&m2, &m1]),
    ];
    let pair = |first: &str, second: &str, mechs: &[&str]| ConflictPair {
        first: first.into(),
        second: second.into(),
        mechanisms: mechs.iter().map(|m| (*m).to_owned()).collect(),
    };
    match compose::parallel(&all) {
        Err(CompositionError::ConflictingChildren { pairs, .. }) => assert_eq!(
            pairs,
            [
                pair("Command1", "Command2", &["Mech 1"]),
                pair("Command1", "Command3", &["Mech 2"]),
                pair("Command1", "Command4", &["Mech 1", "Mech 2"]),
                pair("Command2", "Command4", &["Mech 1"]),
                pair("Command3", "Command4", &["Mech 2"]),
            ]
        ),
        other => panic!("expected every conflicting pair, got {other:?}"),
    }
}
