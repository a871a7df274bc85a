//! Shared helpers for the integration tests: a recording listener and small command makers.
#![allow(dead_code, unreachable_pub)]

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use tickstep_commands::{Command, CommandScheduler, Event, Mechanism};
use tickstep_kernel::clock::ManualClock;

/// One robot cycle.
pub const CYCLE: Duration = Duration::from_millis(20);

pub fn setup() -> (ManualClock, CommandScheduler) {
    let clock = ManualClock::new();
    let scheduler = CommandScheduler::new(clock.clone());
    (clock, scheduler)
}

/// Records every event as "Kind name".
pub fn record(scheduler: &CommandScheduler) -> Rc<RefCell<Vec<String>>> {
    let log = Rc::new(RefCell::new(Vec::new()));
    let sink = log.clone();
    scheduler.on_event(move |e: &Event| sink.borrow_mut().push(e.to_string()));
    log
}

/// Records full events.
pub fn record_events(scheduler: &CommandScheduler) -> Rc<RefCell<Vec<Event>>> {
    let log = Rc::new(RefCell::new(Vec::new()));
    let sink = log.clone();
    scheduler.on_event(move |e: &Event| sink.borrow_mut().push(e.clone()));
    log
}

pub fn take(log: &Rc<RefCell<Vec<String>>>) -> Vec<String> {
    std::mem::take(&mut *log.borrow_mut())
}

/// Runs `n` cycles, advancing the clock one cycle after each.
pub fn cycles(clock: &ManualClock, scheduler: &CommandScheduler, n: usize) {
    for _ in 0..n {
        scheduler.run().unwrap();
        clock.advance(CYCLE);
    }
}

/// A command that never ends on its own.
pub fn parked(name: &str) -> Command {
    Command::no_requirements()
        .executing(|co| async move {
            co.park().await;
        })
        .named(name)
}

/// A command that forks `child` on its first mount, then never ends on its own.
pub fn forks_then_parks(name: &str, child: &Command) -> Command {
    let child = child.clone();
    Command::no_requirements()
        .executing(move |co| {
            let child = child.clone();
            async move {
                co.fork([&child]).unwrap();
                co.park().await;
            }
        })
        .named(name)
}

/// A command on `mechanism` that never ends on its own.
pub fn parked_on(mechanism: &Mechanism, name: &str, priority: i32) -> Command {
    mechanism
        .run(|co| async move {
            co.park().await;
        })
        .with_priority(priority)
        .named(name)
}

/// A command that yields `n` times then completes.
pub fn yields(name: &str, n: usize) -> Command {
    Command::no_requirements()
        .executing(move |co| async move {
            for _ in 0..n {
                co.yield_now().await;
            }
        })
        .named(name)
}

/// A counter shared with a closure.
pub fn counter() -> (Rc<Cell<u32>>, impl Fn() + Clone + 'static) {
    let n = Rc::new(Cell::new(0));
    let m = n.clone();
    (n, move || m.set(m.get() + 1))
}

pub fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// Names of the running commands, in the order they started.
pub fn running_names(scheduler: &CommandScheduler) -> Vec<String> {
    scheduler.running().into_iter().map(|i| i.name).collect()
}

/// A command that yields once, then completes (the reference's `Coroutine::yield` body).
pub fn yield_once(name: &str) -> Command {
    yields(name, 1)
}

/// A command that completes in its first mount.
pub fn instant(name: &str) -> Command {
    Command::no_requirements()
        .executing(|_co| async {})
        .named(name)
}

/// A shared flag and a condition reading it.
pub fn flag() -> (Rc<Cell<bool>>, impl Fn() -> bool + Clone + 'static) {
    let f = Rc::new(Cell::new(false));
    let g = f.clone();
    (f, move || g.get())
}
