//! The reference suite's `SchedulerCancellationTests`, ported (behaviour, not text): one test per
//! reference test, named after it.

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use common::*;
use tickstep_commands::{Command, CommandScheduler, Mechanism, compose};

fn scheduled_or_running(scheduler: &CommandScheduler, cmd: &Command) -> bool {
    scheduler.is_scheduled(cmd) || scheduler.is_running(cmd)
}

fn running_on(scheduler: &CommandScheduler, mech: &Mechanism) -> Vec<String> {
    scheduler
        .running()
        .into_iter()
        .filter(|i| i.requirements.iter().any(|r| r == mech.name()))
        .map(|i| i.name)
        .collect()
}

/// A flag set by a cancel hook.
fn hook_flag() -> (Rc<Cell<bool>>, impl Fn() + 'static) {
    let ran = Rc::new(Cell::new(false));
    let r = ran.clone();
    (ran, move || r.set(true))
}

#[test]
fn cancel_on_interrupt_does_not_resume() {
    let (clock, scheduler) = setup();
    let count = Rc::new(Cell::new(0));
    let mech = Mechanism::new(&scheduler, "mechanism");
    let interrupter = Command::requiring(&mech)
        .executing(|_co| async {})
        .with_priority(2)
        .named("Interrupter");
    let c = count.clone();
    let canceled = Command::requiring(&mech)
        .executing(move |co| {
            let c = c.clone();
            async move {
                c.set(1);
                co.yield_now().await;
                c.set(2);
            }
        })
        .with_priority(1)
        .named("Cancel By Default");
    scheduler.schedule(&canceled);
    cycles(&clock, &scheduler, 1);
    scheduler.schedule(&interrupter);
    cycles(&clock, &scheduler, 1);
    assert_eq!(count.get(), 1, "the interrupted body never resumed");
}

#[test]
fn default_command_resumes_after_interruption() {
    let (clock, scheduler) = setup();
    let (count, bump) = counter();
    let mech = Mechanism::new(&scheduler, "mechanism");
    let default = mech
        .run(move |co| {
            let bump = bump.clone();
            async move {
                loop {
                    bump();
                    co.yield_now().await;
                }
            }
        })
        .with_priority(-1)
        .named("Default Command");
    let newer = mech.run(|_co| async {}).named("Newer Command");
    mech.set_default_command(&default).unwrap();
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&default));
    scheduler.schedule(&newer);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&default));
    assert_eq!(count.get(), 1);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&default));
    assert_eq!(count.get(), 2);
}

#[test]
fn cancels_evicts_on_deck() {
    let (_clock, scheduler) = setup();
    let command = parked("Command");
    scheduler.schedule(&command);
    scheduler.cancel(&command);
    assert!(!scheduled_or_running(&scheduler, &command));
}

#[test]
fn command_canceling_self() {
    // Rust cannot stop a body in the middle of synchronous code: canceling oneself through the
    // scheduler takes effect at the body's next await (see `request_cancellation`).
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let ran_after = Rc::new(Cell::new(false));
    let me: Rc<RefCell<Option<Command>>> = Rc::new(RefCell::new(None));
    let (r, m) = (ran_after.clone(), me.clone());
    let command = Command::no_requirements()
        .executing(move |co| {
            let (r, m) = (r.clone(), m.clone());
            async move {
                let this = m.borrow().clone().expect("set before scheduling");
                co.scheduler().cancel(&this);
                co.yield_now().await;
                r.set(true);
            }
        })
        .named("Self-Canceling Command");
    *me.borrow_mut() = Some(command.clone());
    scheduler.schedule(&command);
    cycles(&clock, &scheduler, 2);
    assert!(!ran_after.get());
    assert!(take(&log).contains(&"Canceled Self-Canceling Command".to_owned()));
    assert!(!scheduled_or_running(&scheduler, &command));
}

#[test]
fn request_cancellation() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let ran_after = Rc::new(Cell::new(false));
    let r = ran_after.clone();
    let command = Command::no_requirements()
        .executing(move |co| {
            let r = r.clone();
            async move {
                co.request_cancellation().await;
                r.set(true);
            }
        })
        .named("Self-Canceling Command");
    scheduler.schedule(&command);
    cycles(&clock, &scheduler, 1);
    assert!(!ran_after.get());
    assert!(take(&log).contains(&"Canceled Self-Canceling Command".to_owned()));
    assert!(!scheduled_or_running(&scheduler, &command));
}

#[test]
fn request_cancellation_bubbles_down() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let child = parked("child");
    let c = child.clone();
    let command = Command::no_requirements()
        .executing(move |co| {
            let c = c.clone();
            async move {
                co.fork([&c]).unwrap();
                co.request_cancellation().await;
            }
        })
        .named("Self-Canceling Command");
    scheduler.schedule(&command);
    cycles(&clock, &scheduler, 1);
    let events = take(&log);
    assert!(events.contains(&"Canceled Self-Canceling Command".to_owned()));
    assert!(events.contains(&"Canceled child".to_owned()));
    assert!(!scheduled_or_running(&scheduler, &child));
}

#[test]
fn request_cancellation_does_not_bubble_up() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let quitter = Command::no_requirements()
        .executing(|co| async move {
            co.request_cancellation().await;
        })
        .named("Self-Canceling Command");
    let q = quitter.clone();
    let parent = Command::no_requirements()
        .executing(move |co| {
            let q = q.clone();
            async move {
                let _ = co.await_cmd(&q).await;
                co.park().await;
            }
        })
        .named("Parent");
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    assert!(take(&log).contains(&"Canceled Self-Canceling Command".to_owned()));
    assert_eq!(running_names(&scheduler), ["Parent"]);
}

#[test]
fn request_cancellation_calls_on_cancel() {
    let (clock, scheduler) = setup();
    let (ran, hook) = hook_flag();
    let command = Command::no_requirements()
        .executing(|co| async move {
            co.request_cancellation().await;
        })
        .on_cancel(hook)
        .named("Self-Cancelling Command");
    scheduler.schedule(&command);
    cycles(&clock, &scheduler, 1);
    assert!(ran.get());
}

#[test]
fn cancel_all_evicts_on_deck() {
    let (_clock, scheduler) = setup();
    let command = parked("Command");
    scheduler.schedule(&command);
    scheduler.cancel_all();
    assert!(!scheduled_or_running(&scheduler, &command));
}

#[test]
fn cancel_all_cancels_all() {
    let (clock, scheduler) = setup();
    let commands: Vec<Command> = (1..=10)
        .map(|i| yield_once(&format!("Command {i}")))
        .collect();
    for c in &commands {
        scheduler.schedule(c);
    }
    cycles(&clock, &scheduler, 1);
    scheduler.cancel_all();
    for c in &commands {
        assert!(!scheduler.is_running(c), "{} was not canceled", c.name());
    }
}

#[test]
fn cancel_all_calls_on_cancel_hook_for_running_commands() {
    let (clock, scheduler) = setup();
    let (ran, hook) = hook_flag();
    let command = Command::no_requirements()
        .executing(|co| async move {
            co.park().await;
        })
        .on_cancel(hook)
        .named("Command");
    scheduler.schedule(&command);
    cycles(&clock, &scheduler, 1);
    scheduler.cancel_all();
    assert!(ran.get());
}

#[test]
fn cancel_all_does_not_call_on_cancel_hook_for_queued_commands() {
    let (_clock, scheduler) = setup();
    let (ran, hook) = hook_flag();
    let command = Command::no_requirements()
        .executing(|co| async move {
            co.park().await;
        })
        .on_cancel(hook)
        .named("Command");
    scheduler.schedule(&command);
    scheduler.cancel_all();
    assert!(!ran.get());
}

#[test]
fn cancel_all_starts_defaults() {
    let (clock, scheduler) = setup();
    let mechs: Vec<Mechanism> = (1..=10)
        .map(|i| {
            let m = Mechanism::new(&scheduler, format!("System {i}"));
            m.set_default_command(&m.idle()).unwrap();
            m
        })
        .collect();
    let mut builder = Command::no_requirements();
    for m in &mechs {
        builder = builder.requiring(m);
    }
    let big = builder
        .executing(|co| async move { co.yield_now().await })
        .named("Big Command");
    scheduler.schedule(&big);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&big));
    for m in &mechs {
        assert_eq!(running_on(&scheduler, m), ["Big Command"]);
    }
    scheduler.cancel_all();
    assert!(!scheduler.is_running(&big));
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&big));
    for m in &mechs {
        assert_eq!(running_on(&scheduler, m), [format!("{} idle", m.name())]);
    }
}

/// A command that awaits `inner` and then parks.
fn awaiting(name: &str, inner: Command, on: Option<&Mechanism>) -> Command {
    let body = move |co: tickstep_commands::Coroutine| {
        let inner = inner.clone();
        async move {
            let _ = co.await_cmd(&inner).await;
        }
    };
    match on {
        Some(m) => m.run(body).named(name),
        None => Command::no_requirements().executing(body).named(name),
    }
}

#[test]
fn cancel_deeply_nested_compositions() {
    let (clock, scheduler) = setup();
    let root = awaiting(
        "Root",
        awaiting("C2", awaiting("C3", parked("Park"), None), None),
        None,
    );
    scheduler.schedule(&root);
    cycles(&clock, &scheduler, 1);
    assert_eq!(scheduler.running().len(), 4);
    scheduler.cancel(&root);
    assert!(scheduler.running().is_empty());
}

#[test]
fn compositions_do_not_self_cancel() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "The mechanism");
    let group = awaiting(
        "Group",
        awaiting(
            "C2",
            awaiting("C3", parked_on(&mech, "Park", 0), Some(&mech)),
            Some(&mech),
        ),
        Some(&mech),
    );
    scheduler.schedule(&group);
    cycles(&clock, &scheduler, 1);
    assert_eq!(scheduler.running().len(), 4);
    assert!(scheduler.is_running(&group));
}

#[test]
fn compositions_do_not_cancel_parent() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "The mechanism");
    let first = parked_on(&mech, "First Child", 0);
    let second = parked_on(&mech, "Second Child", 0);
    let group = mech
        .run(move |co| {
            let (first, second) = (first.clone(), second.clone());
            async move {
                co.fork([&first]).unwrap();
                co.fork([&second]).unwrap();
                co.park().await;
            }
        })
        .named("Group");
    scheduler.schedule(&group);
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["Group", "Second Child"]);
}

#[test]
fn does_not_run_on_cancel_when_interrupting_on_deck() {
    let (clock, scheduler) = setup();
    let (ran, hook) = hook_flag();
    let mech = Mechanism::new(&scheduler, "The mechanism");
    let cmd = mech
        .run(|co| async move { co.yield_now().await })
        .on_cancel(hook)
        .named("cmd");
    let interrupter = mech
        .run(|co| async move { co.yield_now().await })
        .named("Interrupter");
    scheduler.schedule(&cmd);
    scheduler.schedule(&interrupter);
    cycles(&clock, &scheduler, 1);
    assert!(!ran.get());
}

#[test]
fn does_not_run_on_cancel_when_canceling_on_deck() {
    let (clock, scheduler) = setup();
    let (ran, hook) = hook_flag();
    let mech = Mechanism::new(&scheduler, "The mechanism");
    let cmd = mech
        .run(|co| async move { co.yield_now().await })
        .on_cancel(hook)
        .named("cmd");
    scheduler.schedule(&cmd);
    scheduler.cancel(&cmd);
    cycles(&clock, &scheduler, 1);
    assert!(!ran.get());
}

#[test]
fn runs_on_cancel_when_interrupting_command() {
    let (clock, scheduler) = setup();
    let (ran, hook) = hook_flag();
    let mech = Mechanism::new(&scheduler, "The mechanism");
    let cmd = mech
        .run(|co| async move {
            co.park().await;
        })
        .on_cancel(hook)
        .named("cmd");
    let interrupter = parked_on(&mech, "Interrupter", 0);
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1);
    scheduler.schedule(&interrupter);
    cycles(&clock, &scheduler, 1);
    assert!(ran.get());
}

#[test]
fn does_not_run_on_cancel_when_completing() {
    let (clock, scheduler) = setup();
    let (ran, hook) = hook_flag();
    let mech = Mechanism::new(&scheduler, "The mechanism");
    let cmd = mech
        .run(|co| async move { co.yield_now().await })
        .on_cancel(hook)
        .named("cmd");
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 2);
    assert!(!scheduled_or_running(&scheduler, &cmd));
    assert!(!ran.get());
}

#[test]
fn runs_on_cancel_when_canceling() {
    let (clock, scheduler) = setup();
    let (ran, hook) = hook_flag();
    let mech = Mechanism::new(&scheduler, "The mechanism");
    let cmd = mech
        .run(|co| async move { co.yield_now().await })
        .on_cancel(hook)
        .named("cmd");
    scheduler.schedule(&cmd);
    cycles(&clock, &scheduler, 1);
    scheduler.cancel(&cmd);
    assert!(ran.get());
}

#[test]
fn runs_on_cancel_when_canceling_parent() {
    let (clock, scheduler) = setup();
    let (ran, hook) = hook_flag();
    let mech = Mechanism::new(&scheduler, "The mechanism");
    let cmd = mech
        .run(|co| async move { co.yield_now().await })
        .on_cancel(hook)
        .named("cmd");
    let group = compose::sequence([&cmd]).unwrap().named("Seq");
    scheduler.schedule(&group);
    cycles(&clock, &scheduler, 1);
    scheduler.cancel(&group);
    assert!(ran.get());
}
