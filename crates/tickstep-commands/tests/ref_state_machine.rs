//! The reference suite's `StateMachineTest`, ported (behaviour, not text): one test per
//! reference test, named after it.

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use common::*;
use tickstep_commands::compose::{MAX_STATE_ENTRIES_PER_RUN, StateMachine};
use tickstep_commands::{Command, Mechanism, StateMachineError, Trigger};

#[test]
fn errors_without_initial_state() {
    // Decision: the first state added is the initial one, so a machine cannot lack one (the
    // reference fails at run time). What remains to check: an empty machine is refused.
    let (clock, scheduler) = setup();
    assert_eq!(
        StateMachine::new("State Machine").build().unwrap_err(),
        StateMachineError::NoStates {
            machine: "State Machine".into()
        }
    );
    let mech = Mechanism::new(&scheduler, "Mechanism");
    let one = parked_on(&mech, "Command 1", 0);
    let two = parked_on(&mech, "Command 2", 0);
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&one);
    let s2 = machine.state(&two);
    machine.on_completion(s1, s2);
    scheduler.schedule(&machine.build().unwrap());
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["State Machine", "Command 1"]);
}

#[test]
fn initial_state_can_be_overridden() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Mechanism");
    let one = parked_on(&mech, "Command 1", 0);
    let two = parked_on(&mech, "Command 2", 0);
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&one);
    let s2 = machine.state(&two);
    machine.start_in(s1).start_in(s2).on_completion(s2, s1);
    let cmd = machine.build().unwrap();
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&cmd));
    assert!(scheduler.is_running(&two));
    assert!(!scheduler.is_running(&one));
}

#[test]
fn transitions() {
    let (clock, scheduler) = setup();
    let (a, when_a) = flag();
    let (b, when_b) = flag();
    let mech = Mechanism::new(&scheduler, "Mechanism");
    let cmds: Vec<Command> = (1..=3)
        .map(|i| parked_on(&mech, &format!("Command {i}"), 0))
        .collect();
    let mut machine = StateMachine::new("State Machine");
    let s: Vec<_> = cmds.iter().map(|c| machine.state(c)).collect();
    machine.when(s[0], s[1], when_a).when(s[1], s[2], when_b);
    let cmd = machine.build().unwrap();
    scheduler.schedule(&cmd);
    let only = |i: usize| {
        assert!(scheduler.is_running(&cmd));
        for (j, c) in cmds.iter().enumerate() {
            assert_eq!(scheduler.is_running(c), i == j, "{}", c.name());
        }
    };
    cycles(&clock, &scheduler, 1);
    only(0);
    a.set(true);
    cycles(&clock, &scheduler, 1);
    only(1);
    b.set(true);
    cycles(&clock, &scheduler, 1);
    only(2);
}

#[test]
fn transitions_if_condition_is_already_true_when_entered() {
    let (clock, scheduler) = setup();
    let (one, two) = (parked("Command 1"), parked("Command 2"));
    let (signal, when) = flag();
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&one);
    let s2 = machine.state(&two);
    machine.when(s1, s2, when);
    signal.set(true);
    let cmd = machine.build().unwrap();
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&cmd));
    assert!(!scheduler.is_running(&one));
    assert!(scheduler.is_running(&two));
}

#[test]
fn command_exits() {
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    let one = Command::no_requirements()
        .executing(move |co| {
            let when = when.clone();
            async move { co.wait_until(when).await }
        })
        .named("Command 1");
    let two = parked("Command 2");
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&one);
    let s2 = machine.state(&two);
    machine.on_completion(s1, s2).exit_on_completion(s2);
    let cmd = machine.build().unwrap();
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&cmd) && scheduler.is_running(&one));
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&cmd));
    assert!(!scheduler.is_running(&one));
    assert!(scheduler.is_running(&two));
}

#[test]
fn state_transitions_to_self() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let (signal, when) = flag();
    let (inits, init) = counter();
    let command = Command::no_requirements()
        .executing(move |co| {
            init();
            async move {
                co.park().await;
            }
        })
        .named("Command");
    let mut machine = StateMachine::new("State Machine");
    let s = machine.state(&command);
    machine.when(s, s, when);
    let cmd = machine.build().unwrap();
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&cmd));
    assert_eq!(inits.get(), 1);
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&cmd));
    assert_eq!(inits.get(), 2, "the state's command restarted");
    assert_eq!(
        take(&log),
        strs(&[
            "Scheduled State Machine",
            "Mounted State Machine",
            "Scheduled Command",
            "Mounted Command",
            "Yielded Command",
            "Yielded State Machine",
            // second run: the child first, then the machine restarts it
            "Mounted Command",
            "Yielded Command",
            "Mounted State Machine",
            "Canceled Command",
            "Scheduled Command",
            "Mounted Command",
            "Yielded Command",
            "Yielded State Machine",
        ])
    );
}

#[test]
fn oneshot_command_transitions_to_self_on_complete() {
    let (clock, scheduler) = setup();
    let (count, bump) = counter();
    let command = Command::no_requirements()
        .executing(move |_co| {
            bump();
            async {}
        })
        .named("Command");
    let mut machine = StateMachine::new("State Machine");
    let s = machine.state(&command);
    machine.on_completion(s, s);
    let cmd = machine.build().unwrap();
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1); // returns: one state per cycle, no endless re-entry
    assert!(scheduler.is_running(&cmd));
    assert_eq!(count.get(), 1);
    cycles(&clock, &scheduler, 3);
    assert_eq!(count.get(), 4);
}

#[test]
fn only_first_explicit_transition_fires() {
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&parked("Command 1"));
    let s2 = machine.state(&parked("Command 2"));
    let s3 = machine.state(&parked("Command 3"));
    machine.when(s1, s2, when.clone()).when(s1, s3, when);
    scheduler.schedule(&machine.build().unwrap());
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["State Machine", "Command 1"]);
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["State Machine", "Command 2"]);
}

#[test]
fn only_last_when_complete_transition_fires() {
    let (clock, scheduler) = setup();
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&yield_once("Command 1"));
    let s2 = machine.state(&yield_once("Command 2"));
    let s3 = machine.state(&yield_once("Command 3"));
    machine.on_completion(s1, s2).on_completion(s1, s3);
    scheduler.schedule(&machine.build().unwrap());
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["State Machine", "Command 1"]);
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["State Machine", "Command 3"]);
}

fn completion_race(conditional_first: bool) {
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&yield_once("Command 1"));
    let s2 = machine.state(&yield_once("Command 2"));
    let s3 = machine.state(&yield_once("Command 3"));
    if conditional_first {
        machine.on_completion_if(s1, s3, when).on_completion(s1, s2);
    } else {
        machine.on_completion(s1, s2).on_completion_if(s1, s3, when);
    }
    scheduler.schedule(&machine.build().unwrap());
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["State Machine", "Command 1"]);
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["State Machine", "Command 3"]);
}

#[test]
fn when_complete_and_takes_priority_over_when_complete_if_called_last() {
    completion_race(false);
}

#[test]
fn when_complete_and_takes_priority_over_when_complete_if_calle_first() {
    completion_race(true);
}

#[test]
fn composing_complete() {
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    let one = yield_once("Command 1");
    let two = parked("Command 2");
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&one);
    let s2 = machine.state(&two);
    machine
        .exit_on_completion(s1)
        .on_completion_if(s1, s2, when);
    let cmd = machine.build().unwrap();

    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&cmd) && scheduler.is_running(&one));
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&cmd), "low signal: the machine exits");

    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&cmd) && scheduler.is_running(&one));
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&cmd));
    assert!(!scheduler.is_running(&one));
    assert!(scheduler.is_running(&two));
}

#[test]
fn switch_from_any() {
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    let one = yield_once("Command 1");
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&one);
    let s2 = machine.state(&parked("Command 2"));
    let s3 = machine.state(&parked("Command 3"));
    machine
        .switch_from(&[s1, s2], s3, when)
        .on_completion(s1, s2);
    let cmd = machine.build().unwrap();

    // 1 -> 3 (1 completes into 2, whose from-any transition fires at once)
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["State Machine", "Command 1"]);
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["State Machine", "Command 3"]);

    scheduler.cancel(&cmd);
    signal.set(false);

    // 2 -> 3
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["State Machine", "Command 1"]);
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["State Machine", "Command 2"]);
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["State Machine", "Command 3"]);
}

#[test]
fn switch_to_supplier_when_complete() {
    let (clock, scheduler) = setup();
    let (count, bump) = counter();
    let one = Command::no_requirements()
        .executing(move |co| {
            bump();
            async move { co.yield_now().await }
        })
        .named("Command 1");
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&one);
    let s2 = machine.state(&parked("Command 2"));
    let s3 = machine.state(&parked("Command 3"));
    let c = count.clone();
    machine.on_completion_pick(s1, move || Some(if c.get() == 1 { s2 } else { s3 }));
    scheduler.schedule(&machine.build().unwrap());
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["State Machine", "Command 1"]);
    cycles(&clock, &scheduler, 1); // the pick is read when the command ends (count is 1)
    assert_eq!(running_names(&scheduler), ["State Machine", "Command 2"]);
}

#[test]
fn switch_to_supplier_with_condition() {
    let (clock, scheduler) = setup();
    let (count, bump) = counter();
    let one = Command::no_requirements()
        .executing(move |co| {
            let bump = bump.clone();
            async move {
                loop {
                    co.yield_now().await;
                    bump();
                }
            }
        })
        .named("Command 1");
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&one);
    let s2 = machine.state(&parked("Command 2"));
    let s3 = machine.state(&parked("Command 3"));
    let (c1, c2) = (count.clone(), count.clone());
    machine.when_pick(
        s1,
        move || Some(if c1.get() == 1 { s2 } else { s3 }),
        move || c2.get() == 1,
    );
    scheduler.schedule(&machine.build().unwrap());
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["State Machine", "Command 1"]);
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["State Machine", "Command 2"]);
}

#[test]
fn runs_on_enter_for_initial_state() {
    let (clock, scheduler) = setup();
    let (enters, enter) = counter();
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&parked("Command 1"));
    let s2 = machine.state(&parked("Command 2"));
    machine.on_enter(s1, enter).on_completion(s1, s2);
    scheduler.schedule(&machine.build().unwrap());
    cycles(&clock, &scheduler, 1);
    assert_eq!(enters.get(), 1);
}

#[test]
fn runs_on_exit_on_transition() {
    let (clock, scheduler) = setup();
    let (exits, exit) = counter();
    let (signal, when) = flag();
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&parked("Command 1"));
    let s2 = machine.state(&parked("Command 2"));
    machine.on_exit(s1, exit).when(s1, s2, when);
    scheduler.schedule(&machine.build().unwrap());
    cycles(&clock, &scheduler, 1);
    assert_eq!(exits.get(), 0);
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert_eq!(exits.get(), 1);
}

#[test]
fn runs_on_exit_when_complete() {
    let (clock, scheduler) = setup();
    let (exits, exit) = counter();
    let one = instant("Command 1");
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&one);
    machine.on_exit(s1, exit);
    scheduler.schedule(&machine.build().unwrap());
    cycles(&clock, &scheduler, 1);
    assert_eq!(exits.get(), 1);
    assert!(!scheduler.is_running(&one));
}

#[test]
fn on_exit_can_schedule() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Mechanism");
    let main = parked_on(&mech, "Main Mech Command", 0);
    let background = parked_on(&mech, "Background Mech Command", 0);
    let next = parked("Next");
    let (signal, when) = flag();
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&main);
    let s2 = machine.state(&next);
    let (sched, bg) = (scheduler.clone(), background.clone());
    machine.when(s1, s2, when).on_exit(s1, move || {
        sched.schedule(&bg);
    });
    let cmd = machine.build().unwrap();
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&cmd) && scheduler.is_running(&main));
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&cmd));
    assert!(!scheduler.is_running(&main));
    assert!(scheduler.is_running(&background));
    assert!(scheduler.is_running(&next));
}

/// A shared log of hook names.
type HookLog = Rc<RefCell<Vec<&'static str>>>;

fn hook_log() -> (HookLog, impl Fn(&'static str) -> Box<dyn Fn()>) {
    let log = Rc::new(RefCell::new(Vec::new()));
    let l = log.clone();
    (log, move |s| {
        let l = l.clone();
        Box::new(move || l.borrow_mut().push(s)) as Box<dyn Fn()>
    })
}

#[test]
fn runs_on_enter_callbacks_in_insertion_order() {
    let (clock, scheduler) = setup();
    let (log, hook) = hook_log();
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&instant("Command 1"));
    machine
        .on_enter(s1, hook("onEnter 1"))
        .on_enter(s1, hook("onEnter 2"));
    scheduler.schedule(&machine.build().unwrap());
    cycles(&clock, &scheduler, 1);
    assert_eq!(*log.borrow(), ["onEnter 1", "onEnter 2"]);
}

#[test]
fn runs_on_exit_callbacks_in_insertion_order() {
    let (clock, scheduler) = setup();
    let (log, hook) = hook_log();
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&instant("Command 1"));
    machine
        .on_exit(s1, hook("onExit 1"))
        .on_exit(s1, hook("onExit 2"));
    scheduler.schedule(&machine.build().unwrap());
    cycles(&clock, &scheduler, 1);
    assert_eq!(*log.borrow(), ["onExit 1", "onExit 2"]);
}

#[test]
fn on_enter_sees_new_command() {
    let (clock, scheduler) = setup();
    let one = parked("Command 1");
    let saw = Rc::new(Cell::new(false));
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&one);
    let (sched, c, seen) = (scheduler.clone(), one.clone(), saw.clone());
    machine.on_enter(s1, move || seen.set(sched.is_running(&c)));
    scheduler.schedule(&machine.build().unwrap());
    cycles(&clock, &scheduler, 1);
    assert!(saw.get());
}

#[test]
fn on_exit_with_transition_sees_exited_command() {
    let (clock, scheduler) = setup();
    let one = parked("Command 1");
    let saw = Rc::new(Cell::new(false));
    let (signal, when) = flag();
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&one);
    let s2 = machine.state(&parked("Command 2"));
    let (sched, c, seen) = (scheduler.clone(), one.clone(), saw.clone());
    machine
        .on_exit(s1, move || seen.set(sched.is_running(&c)))
        .when(s1, s2, when);
    scheduler.schedule(&machine.build().unwrap());
    cycles(&clock, &scheduler, 1);
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(saw.get());
}

#[test]
fn on_exit_with_complete_cannot_see_exited_command() {
    let (clock, scheduler) = setup();
    let one = yield_once("Command 1");
    let called = Rc::new(Cell::new(false));
    let saw = Rc::new(Cell::new(false));
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&one);
    let s2 = machine.state(&parked("Command 2"));
    let (sched, c, seen, was_called) =
        (scheduler.clone(), one.clone(), saw.clone(), called.clone());
    machine
        .on_exit(s1, move || {
            was_called.set(true);
            seen.set(sched.is_running(&c));
        })
        .on_completion(s1, s2);
    scheduler.schedule(&machine.build().unwrap());
    cycles(&clock, &scheduler, 1);
    assert!(!called.get());
    cycles(&clock, &scheduler, 1);
    assert!(called.get());
    assert!(!saw.get(), "a completed command is no longer running");
}

#[test]
fn led_state_machine() {
    // The reference only checks that this machine can be declared with triggers as conditions;
    // here it is also run.
    let (clock, scheduler) = setup();
    let leds = Mechanism::new(&scheduler, "LEDs");
    let idle = parked_on(&leds, "Default Animation", -1);
    let info = leds
        .run(|co| async move { co.yield_now().await })
        .named("Info");
    let warning = leds
        .run(|co| async move { co.yield_now().await })
        .with_priority(1)
        .named("Warning");
    let normal_event = Trigger::new(&scheduler, || true);
    let high_event = Trigger::new(&scheduler, || true);
    let mut machine = StateMachine::new("State Machine");
    let idle_state = machine.state(&idle);
    let info_state = machine.state(&info);
    let warning_state = machine.state(&warning);
    let normal_only = normal_event.and(&high_event.not());
    let (n, h1, h2, h3) = (
        normal_event.clone(),
        high_event.clone(),
        high_event.clone(),
        high_event.clone(),
    );
    machine
        .when(idle_state, info_state, move || normal_only.get())
        .when(idle_state, warning_state, move || h1.get())
        .on_completion_if(warning_state, info_state, move || n.get())
        .on_completion_if(info_state, warning_state, move || h2.get())
        .switch_from_any(warning_state, move || h3.get())
        .on_completion(idle_state, idle_state);
    let cmd = machine.build().unwrap();
    assert_eq!(cmd.priority(), 1);
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["State Machine", "Warning"]);
}

#[test]
fn conditions_that_flip_on_every_read_fail_the_machine_with_a_typed_error() {
    // Not in the reference: the guard that keeps one run() bounded. Twelve self-transitions whose
    // conditions toggle on each read would re-enter the state 2^12 times without yielding.
    let (clock, scheduler) = setup();
    let mut machine = StateMachine::new("flippy");
    let s = machine.state(&parked("spin"));
    for _ in 0..12 {
        let value = Cell::new(false);
        machine.when(s, s, move || {
            value.set(!value.get());
            value.get()
        });
    }
    let cmd = machine.build().unwrap();
    scheduler.schedule(&cmd);
    let error = scheduler.run().unwrap_err();
    assert_eq!(error.command.as_ref(), "flippy");
    let source = error
        .source
        .downcast_ref::<StateMachineError>()
        .expect("a StateMachineError");
    assert_eq!(
        *source,
        StateMachineError::TooManyEntries {
            machine: "flippy".into(),
            limit: MAX_STATE_ENTRIES_PER_RUN
        }
    );
    assert!(!scheduler.is_running(&cmd));
    clock.advance(CYCLE);
    scheduler.run().unwrap();
}

#[test]
fn on_exit_runs_when_the_whole_machine_is_canceled() {
    // Not in the reference (its canceled machine never leaves its state): a user's cleanup in
    // `on_exit` must not depend on how the state was left.
    let (clock, scheduler) = setup();
    let (exits, exit) = counter();
    let mut machine = StateMachine::new("State Machine");
    let s1 = machine.state(&parked("Command 1"));
    machine.on_exit(s1, exit);
    let cmd = machine.build().unwrap();
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1);
    assert_eq!(exits.get(), 0);
    scheduler.cancel(&cmd);
    assert_eq!(exits.get(), 1);
    cycles(&clock, &scheduler, 1);
    assert_eq!(exits.get(), 1);
}
