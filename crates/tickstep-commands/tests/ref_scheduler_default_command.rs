//! The reference suite's `SchedulerDefaultCommandTests`, ported (behaviour, not text): one test
//! per reference test, named after it.

mod common;

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use common::*;
use tickstep_commands::{Command, CommandScheduler, Mechanism, OpMode};

/// A command that sets `default` as `mech`'s default from inside its body, then parks.
fn scoping(name: &str, mech: &Mechanism, default: &Command) -> Command {
    let (mech, default) = (mech.clone(), default.clone());
    Command::no_requirements()
        .executing(move |co| {
            mech.set_default_command(&default).unwrap();
            async move {
                co.park().await;
            }
        })
        .named(name)
}

#[test]
fn global_default_command_is_always_used() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Mech");
    let default = parked_on(&mech, "Custom Default Command", 0);
    mech.set_default_command(&default).unwrap();
    assert!(!scheduler.is_scheduled(&default) && !scheduler.is_running(&default));
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&default));
    scheduler.set_opmode(Some(OpMode::new(1)));
    cycles(&clock, &scheduler, 1);
    assert!(
        scheduler.is_running(&default),
        "a global default keeps running when the opmode changes"
    );
}

#[test]
fn default_command_set_in_opmode_stops() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Mech");
    let global = mech.idle();
    mech.set_default_command(&global).unwrap();
    scheduler.set_opmode(Some(OpMode::new(1)));
    let in_opmode = parked_on(&mech, "Custom Default Command", 0);
    mech.set_default_command(&in_opmode).unwrap();
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&in_opmode));
    scheduler.set_opmode(Some(OpMode::new(2)));
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&in_opmode));
    assert!(scheduler.is_running(&global), "the global default is back");
}

#[test]
fn default_command_set_in_command_stops() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Mech");
    let global = mech.idle();
    mech.set_default_command(&global).unwrap();
    let scoped = parked_on(&mech, "Command-Scoped Default Command", 0);
    let scope = scoping("Scoping Command", &mech, &scoped);
    scheduler.schedule(&scope);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&scope));
    assert!(
        scheduler.is_running(&scoped),
        "started at once, as the scope's child"
    );
    assert_eq!(scheduler.parent_of(&scoped), Some(scope.clone()));
    assert!(!scheduler.is_running(&global));
    scheduler.cancel(&scope);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&scope));
    assert!(!scheduler.is_running(&scoped));
    assert!(scheduler.is_running(&global));
}

#[test]
fn interrupting_default_command_interrupts_owner() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Mech");
    let global = mech.idle();
    mech.set_default_command(&global).unwrap();
    let scoped = parked_on(&mech, "Command-Scoped Default Command", 0);
    let scope = scoping("Scoping Command", &mech, &scoped);
    let interruptor = parked_on(&mech, "Interruptor", 0);
    scheduler.schedule(&scope);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&scope) && scheduler.is_running(&scoped));
    assert!(!scheduler.is_running(&global));
    scheduler.schedule(&interruptor);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&scope));
    assert!(!scheduler.is_running(&scoped));
    assert!(!scheduler.is_running(&global));
    assert!(scheduler.is_running(&interruptor));
}

#[test]
fn default_command_stackup() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Mech");
    let global = mech.idle();
    mech.set_default_command(&global).unwrap();
    let in_opmode = parked_on(&mech, "Opmode Scoped Default Command", 0);
    let in_command = parked_on(&mech, "Command-Scoped Default Command", 0);
    let scope = scoping("Scoping Command", &mech, &in_command);

    scheduler.set_opmode(Some(OpMode::new(1)));
    mech.set_default_command(&in_opmode).unwrap();
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&in_opmode));

    scheduler.schedule(&scope);
    cycles(&clock, &scheduler, 1);
    assert!(
        !scheduler.is_running(&in_opmode),
        "the narrower default took over"
    );
    assert!(scheduler.is_running(&in_command));

    scheduler.set_opmode(Some(OpMode::new(2)));
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&in_opmode));
    assert!(
        !scheduler.is_running(&scope),
        "a command scheduled in the opmode ends with it"
    );
    assert!(!scheduler.is_running(&in_command));
    assert!(scheduler.is_running(&global));
}

/// Two commands on one mechanism, each setting the other as the default when it runs.
struct Flipper {
    mech: Mechanism,
    me: RefCell<Weak<Flipper>>,
}

impl Flipper {
    fn make(self: &Rc<Self>, n: u8) -> Command {
        let this = self.me.borrow().upgrade().expect("alive");
        self.mech
            .run(move |co| {
                let next = this.make(3 - n);
                this.mech.set_default_command(&next).unwrap();
                async move {
                    co.park().await;
                }
            })
            .named(format!("Command {n}"))
    }
}

#[test]
fn default_command_changing_default_command() {
    let (clock, scheduler) = setup();
    let flipper = Rc::new(Flipper {
        mech: Mechanism::new(&scheduler, "Mech"),
        me: RefCell::new(Weak::new()),
    });
    *flipper.me.borrow_mut() = Rc::downgrade(&flipper);
    flipper.mech.set_default_command(&flipper.make(1)).unwrap();
    let running_on_mech = |s: &CommandScheduler| {
        s.running()
            .into_iter()
            .filter(|i| i.requirements == ["Mech"])
            .map(|i| i.name)
            .collect::<Vec<_>>()
    };
    for i in 0..10 {
        cycles(&clock, &scheduler, 1);
        let expected = if i % 2 == 0 { "Command 1" } else { "Command 2" };
        assert_eq!(running_on_mech(&scheduler), [expected], "cycle {i}");
    }
    // The reference checks that re-setting does not grow its binding list; here a default that
    // replaces itself keeps the one entry of its scope, so memory stays flat (the running
    // command list above already holds one default).
    assert_eq!(scheduler.running().len(), 1);
}
