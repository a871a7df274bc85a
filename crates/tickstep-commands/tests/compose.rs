//! Compositions and the state machine command.

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use common::{CYCLE, cycles, parked, parked_on, record, setup, strs, take, yields};
use tickstep_commands::compose::{self, StateMachine};
use tickstep_commands::{Command, CompositionError, Mechanism, StateMachineError};

#[test]
fn sequence_runs_children_in_order_and_ends_in_the_cycle_of_its_last_child() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let seq = compose::sequence([&yields("a", 1), &yields("b", 0)]).unwrap();
    assert_eq!(seq.name(), "a -> b");
    scheduler.schedule(&seq);
    cycles(&clock, &scheduler, 2);
    assert!(!scheduler.is_running(&seq));
    assert_eq!(
        take(&log),
        strs(&[
            "Scheduled a -> b",
            "Mounted a -> b",
            "Scheduled a",
            "Mounted a",
            "Yielded a",
            "Yielded a -> b",
            "Mounted a",
            "Completed a",
            "Mounted a -> b",
            "Scheduled b",
            "Mounted b",
            "Completed b",
            "Completed a -> b"
        ])
    );
}

#[test]
fn parallel_ends_in_the_cycle_its_last_child_ends() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let par = compose::parallel([&yields("a", 1), &yields("b", 2)]).unwrap();
    assert_eq!(par.name(), "(a & b)");
    scheduler.schedule(&par);
    cycles(&clock, &scheduler, 2);
    assert!(scheduler.is_running(&par));
    take(&log);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&par));
    assert_eq!(
        take(&log),
        strs(&[
            "Mounted b",
            "Completed b",
            "Mounted (a & b)",
            "Completed (a & b)"
        ])
    );
}

#[test]
fn race_ends_with_its_first_child_and_cancels_the_rest() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let slow = parked("slow");
    let r = compose::race([&slow, &yields("fast", 1)]).unwrap();
    assert_eq!(r.name(), "(slow | fast)");
    scheduler.schedule(&r);
    cycles(&clock, &scheduler, 2);
    assert!(!scheduler.is_running(&r) && !scheduler.is_running(&slow));
    let events = take(&log);
    assert_eq!(
        &events[events.len() - 2..],
        strs(&["Canceled slow", "Completed (slow | fast)"])
    );
}

#[test]
fn deadline_ends_when_its_required_children_end_and_cancels_the_optional_ones() {
    let (clock, scheduler) = setup();
    let (hooked, hook) = common::counter();
    let optional = Command::no_requirements()
        .executing(|co| async move {
            co.park().await;
        })
        .on_cancel(hook)
        .named("B");
    let d = compose::deadline([&yields("A", 2)], [&optional, &parked("C")]).unwrap();
    assert_eq!(d.name(), "[(A) * (B | C)]");
    scheduler.schedule(&d);
    cycles(&clock, &scheduler, 2);
    assert!(scheduler.is_running(&optional));
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&d) && !scheduler.is_running(&optional));
    assert_eq!(hooked.get(), 1);
}

#[test]
fn deadline_names_several_required_children() {
    let d = compose::deadline([&yields("A", 0), &yields("B", 0)], [&yields("C", 0)]).unwrap();
    assert_eq!(d.name(), "[(A & B) * (C)]");
}

#[test]
fn compositions_require_the_union_and_take_the_highest_child_priority() {
    let (_clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let wrist = Mechanism::new(&scheduler, "wrist");
    let a = parked_on(&arm, "a", 3);
    let b = parked_on(&wrist, "b", 7);
    let c = parked_on(&arm, "c", -1);
    for composed in [
        compose::parallel([&a, &b]).unwrap(),
        compose::sequence([&a, &b, &c]).unwrap(),
        compose::race([&a, &b]).unwrap(),
        compose::deadline([&a], [&b]).unwrap(),
    ] {
        assert_eq!(composed.requirements(), [arm.clone(), wrist.clone()]);
        assert_eq!(composed.priority(), 7);
    }
}

#[test]
fn conflicting_parallel_children_are_rejected_listing_every_pair() {
    let (_clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let wrist = Mechanism::new(&scheduler, "wrist");
    let a = parked_on(&arm, "a", 0);
    let ab = Command::requiring(&arm)
        .requiring(&wrist)
        .executing(|_co| async {})
        .named("ab");
    let b = parked_on(&wrist, "b", 0);
    let err = compose::parallel([&a, &ab, &b]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "parallel children must not share mechanisms: `a` and `ab` (both require arm); `ab` and `b` (both require wrist)"
    );
    assert!(compose::race([&a, &ab]).is_err());
    assert!(compose::deadline([&a], [&ab]).is_err());
    assert!(a.along_with(&ab).is_err());
    assert!(a.race_with(&ab).is_err());
    // A sequence runs them one at a time: no conflict.
    assert!(compose::sequence([&a, &ab, &b]).is_ok());
}

#[test]
fn empty_concurrent_and_duplicate_compositions_are_errors() {
    let a = yields("a", 0);
    // An empty sequence is allowed (as in the reference): named "", it completes at once.
    assert_eq!(compose::sequence([]).unwrap().name(), "");
    assert!(matches!(
        compose::parallel([]),
        Err(CompositionError::Empty { .. })
    ));
    assert!(matches!(
        compose::deadline([], [&a]),
        Err(CompositionError::Empty { .. })
    ));
    assert_eq!(
        compose::parallel([&a, &a]).unwrap_err().to_string(),
        "`a` appears more than once in a parallel; a command runs once at a time"
    );
}

#[test]
fn a_sequence_may_repeat_a_command() {
    let (clock, scheduler) = setup();
    let (n, bump) = common::counter();
    let step = Command::no_requirements()
        .executing(move |_co| {
            let bump = bump.clone();
            async move { bump() }
        })
        .named("step");
    let twice = compose::sequence([&step, &step]).unwrap();
    scheduler.schedule(&twice);
    cycles(&clock, &scheduler, 1);
    assert_eq!(n.get(), 2);
    assert!(!scheduler.is_running(&twice));
}

#[test]
fn chaining_methods_build_the_named_compositions() {
    let a = yields("A", 0);
    let b = yields("B", 0);
    assert_eq!(a.and_then(&b).name(), "A -> B");
    assert_eq!(a.along_with(&b).unwrap().name(), "(A & B)");
    assert_eq!(a.race_with(&b).unwrap().name(), "(A | B)");
    assert_eq!(
        a.with_timeout(Duration::from_millis(500)).name(),
        "(A | wait 500ms)"
    );
    assert_eq!(a.until(|| false).name(), "(A | Until Condition)");
    let nested = compose::parallel([&a.and_then(&b), &yields("C", 0)]).unwrap();
    assert_eq!(nested.name(), "(A -> B & C)");
}

#[test]
fn with_timeout_cancels_a_command_that_runs_too_long() {
    let (clock, scheduler) = setup();
    let (hooked, hook) = common::counter();
    let forever = Command::no_requirements()
        .executing(|co| async move {
            co.park().await;
        })
        .on_cancel(hook)
        .named("forever");
    let bounded = forever.with_timeout(CYCLE * 3);
    scheduler.schedule(&bounded);
    cycles(&clock, &scheduler, 3);
    assert!(scheduler.is_running(&forever));
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&bounded) && !scheduler.is_running(&forever));
    assert_eq!(hooked.get(), 1);
}

#[test]
fn with_timeout_lets_a_quick_command_finish() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let bounded = yields("quick", 1).with_timeout(Duration::from_secs(5));
    scheduler.schedule(&bounded);
    cycles(&clock, &scheduler, 2);
    let events = take(&log);
    assert!(events.contains(&"Completed quick".to_owned()));
    assert_eq!(events.last().unwrap(), "Completed (quick | wait 5s)");
}

#[test]
fn until_ends_a_built_command_when_the_condition_turns_true() {
    let (clock, scheduler) = setup();
    let stop = Rc::new(Cell::new(false));
    let s = stop.clone();
    let spin = parked("spin");
    let bounded = spin.until(move || s.get());
    scheduler.schedule(&bounded);
    cycles(&clock, &scheduler, 3);
    assert!(scheduler.is_running(&spin));
    stop.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&bounded) && !scheduler.is_running(&spin));
}

#[test]
fn interrupting_a_composition_cancels_every_child() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let arm = Mechanism::new(&scheduler, "arm");
    let a = parked_on(&arm, "a", 0);
    let b = parked("b");
    let par = compose::parallel([&a, &b]).unwrap();
    scheduler.schedule(&par);
    cycles(&clock, &scheduler, 1);
    take(&log);
    scheduler.schedule(&parked_on(&arm, "intruder", 1));
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&a) && !scheduler.is_running(&b) && !scheduler.is_running(&par));
    assert_eq!(
        take(&log)[..5],
        strs(&[
            "Scheduled intruder",
            "Interrupted (a & b) by intruder",
            "Canceled (a & b)",
            "Canceled b",
            "Canceled a"
        ])
    );
}

#[test]
fn a_failing_child_fails_the_composition_and_run_reports_the_child() {
    let (clock, scheduler) = setup();
    let bad = Command::no_requirements()
        .executing_fallible(|co| async move {
            co.yield_now().await;
            Err("encoder fault".into())
        })
        .named("bad");
    let other = parked("other");
    let par = compose::parallel([&bad, &other]).unwrap();
    scheduler.schedule(&par);
    cycles(&clock, &scheduler, 1);
    let err = scheduler.run().unwrap_err();
    assert_eq!(&*err.command, "bad");
    assert!(scheduler.running().is_empty());
}

type HookLog = Rc<RefCell<Vec<String>>>;

/// A recorder of state machine hooks.
fn hooks() -> (HookLog, impl Fn(&str) -> Box<dyn Fn()>) {
    let log = Rc::new(RefCell::new(Vec::new()));
    let l = log.clone();
    (log, move |s: &str| {
        let (l, s) = (l.clone(), s.to_owned());
        Box::new(move || l.borrow_mut().push(s.clone())) as Box<dyn Fn()>
    })
}

#[test]
fn state_machine_transition_fires_on_a_rising_edge_and_true_on_entry_counts() {
    let (clock, scheduler) = setup();
    let go = Rc::new(Cell::new(true)); // already true when the machine starts
    let g = go.clone();
    let mut machine = StateMachine::new("m");
    let idle = machine.state(&parked("idle"));
    let busy = machine.state(&parked("busy"));
    let back = machine.state(&parked("back"));
    machine.when(idle, busy, move || g.get());
    let g = go.clone();
    machine.when(busy, back, move || !g.get());
    let cmd = machine.build().unwrap();
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1);
    // The reference checks transitions right after entering: true on entry is a rising edge.
    parked_named(&scheduler, "busy");
    cycles(&clock, &scheduler, 2);
    parked_named(&scheduler, "busy");
    go.set(false);
    cycles(&clock, &scheduler, 1);
    parked_named(&scheduler, "back");
}

/// The running command named `name` (state commands are cloned into the machine).
fn parked_named(scheduler: &tickstep_commands::CommandScheduler, name: &str) -> Command {
    scheduler
        .running()
        .into_iter()
        .find(|i| i.name == name)
        .map_or_else(|| panic!("{name} is not running"), |i| i.command)
}

#[test]
fn state_machine_first_matching_transition_wins() {
    let (clock, scheduler) = setup();
    let go = Rc::new(Cell::new(false));
    let (g1, g2) = (go.clone(), go.clone());
    let mut machine = StateMachine::new("m");
    let start = machine.state(&parked("start"));
    let first = machine.state(&parked("first"));
    let second = machine.state(&parked("second"));
    machine.when(start, first, move || g1.get());
    machine.when(start, second, move || g2.get());
    scheduler.schedule(&machine.build().unwrap());
    cycles(&clock, &scheduler, 1);
    go.set(true);
    cycles(&clock, &scheduler, 1);
    parked_named(&scheduler, "first");
}

#[test]
fn state_machine_on_completion_moves_on_in_the_same_cycle_and_a_terminal_state_ends_it() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let mut machine = StateMachine::new("m");
    let a = machine.state(&yields("a", 1));
    let b = machine.state(&yields("b", 0));
    machine.on_completion(a, b);
    let cmd = machine.build().unwrap();
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 2);
    assert!(!scheduler.is_running(&cmd));
    let events = take(&log);
    assert_eq!(
        &events[6..],
        strs(&[
            "Mounted a",
            "Completed a",
            "Mounted m",
            "Scheduled b",
            "Mounted b",
            "Completed b",
            "Completed m"
        ])
    );
}

#[test]
fn state_machine_transitions_in_declaration_order_chain_within_a_cycle() {
    let (clock, scheduler) = setup();
    let alarm = Rc::new(Cell::new(false));
    let (a1, a2) = (alarm.clone(), alarm.clone());
    let mut machine = StateMachine::new("m");
    let run = machine.state(&parked("run"));
    let other = machine.state(&parked("other"));
    let stop = machine.state(&parked("stop"));
    machine.when(run, other, move || a1.get());
    machine.switch_from_any(stop, move || a2.get());
    scheduler.schedule(&machine.build().unwrap());
    cycles(&clock, &scheduler, 1);
    alarm.set(true);
    cycles(&clock, &scheduler, 1);
    parked_named(&scheduler, "stop");
    alarm.set(false);
    cycles(&clock, &scheduler, 1);
    alarm.set(true); // a rising edge into the current state restarts it (as the reference)
    cycles(&clock, &scheduler, 1);
    parked_named(&scheduler, "stop");
}

#[test]
fn state_machine_runs_enter_and_exit_hooks_in_order() {
    let (clock, scheduler) = setup();
    let (log, hook) = hooks();
    let mut machine = StateMachine::new("m");
    let a = machine.state(&yields("a", 0));
    let b = machine.state(&yields("b", 0));
    machine
        .on_completion(a, b)
        .on_enter(a, hook("enter a"))
        .on_exit(a, hook("exit a"))
        .on_enter(b, hook("enter b"))
        .on_exit(b, hook("exit b"));
    scheduler.schedule(&machine.build().unwrap());
    cycles(&clock, &scheduler, 1);
    // `a` completed before the machine ever yielded in it: the next state waits one cycle.
    assert_eq!(*log.borrow(), ["enter a", "exit a"]);
    cycles(&clock, &scheduler, 1);
    assert_eq!(*log.borrow(), ["enter a", "exit a", "enter b", "exit b"]);
}

#[test]
fn state_machine_start_in_chooses_the_initial_state() {
    let (clock, scheduler) = setup();
    let mut machine = StateMachine::new("m");
    let _a = machine.state(&parked("a"));
    let b = machine.state(&parked("b"));
    machine.start_in(b);
    scheduler.schedule(&machine.build().unwrap());
    cycles(&clock, &scheduler, 1);
    parked_named(&scheduler, "b");
}

#[test]
fn state_machine_rejects_no_states_and_foreign_states() {
    assert_eq!(
        StateMachine::new("empty").build().unwrap_err(),
        StateMachineError::NoStates {
            machine: "empty".into()
        }
    );
    let mut other = StateMachine::new("other");
    let foreign = other.state(&parked("x"));
    let mut machine = StateMachine::new("m");
    let a = machine.state(&parked("a"));
    machine.when(a, foreign, || true);
    assert_eq!(
        machine.build().unwrap_err().to_string(),
        "state machine `m` was given state 0 of another machine"
    );
}

#[test]
fn state_machine_requires_every_state_mechanism() {
    let (_clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let wrist = Mechanism::new(&scheduler, "wrist");
    let mut machine = StateMachine::new("m");
    machine.state(&parked_on(&arm, "a", 1));
    machine.state(&parked_on(&wrist, "b", 4));
    let cmd = machine.build().unwrap();
    assert_eq!(cmd.requirements(), [arm, wrist]);
    assert_eq!(cmd.priority(), 4);
}

#[test]
fn deadline_ends_in_the_cycle_of_its_last_required_child() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let d = compose::deadline([&yields("A", 1)], [&parked("B")]).unwrap();
    scheduler.schedule(&d);
    cycles(&clock, &scheduler, 1);
    take(&log);
    cycles(&clock, &scheduler, 1);
    assert_eq!(
        take(&log),
        strs(&[
            "Mounted B",
            "Yielded B",
            "Mounted A",
            "Completed A",
            "Mounted [(A) * (B)]",
            "Completed [(A) * (B)]",
            "Canceled B"
        ])
    );
}

#[test]
fn compositions_join_a_child_that_is_already_running_elsewhere() {
    let (clock, scheduler) = setup();
    let shared = yields("shared", 2);
    scheduler.schedule(&shared);
    cycles(&clock, &scheduler, 1);
    let par = compose::parallel([&shared, &yields("own", 0)]).unwrap();
    let dl = compose::deadline([&yields("req", 0)], [&shared]).unwrap();
    scheduler.schedule(&par);
    scheduler.schedule(&dl);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&par), "waits for the outside instance");
    assert!(
        !scheduler.is_running(&dl),
        "done once its required child ended"
    );
    assert!(
        scheduler.is_running(&shared),
        "a joined command is not the composition's to cancel"
    );
    assert_eq!(scheduler.parent_of(&shared), None);
    cycles(&clock, &scheduler, 2);
    assert!(!scheduler.is_running(&par) && !scheduler.is_running(&shared));
}
