//! `destroy()`: cancels everything; later use panics; step does nothing.

mod common;

use std::time::Duration;

use common::{Log, SECOND, server};
use tickstep_kernel::{FrameLoop, Priority, Role};

#[test]
fn destroy_cancels_every_handle_and_clears_every_queue() {
    let (clock, sched) = server();
    let log = Log::new();
    let a = sched.schedule(log.task("queued"), Priority::Normal);
    let b = sched
        .after(SECOND, log.task("timer"), Priority::Normal)
        .unwrap();
    let c = sched
        .every(Duration::ZERO, log.every("frame"), Priority::Normal)
        .unwrap();
    sched.destroy();
    assert!(a.is_cancelled() && b.is_cancelled() && c.is_cancelled());
    let depths = sched.queue_depths();
    assert_eq!((depths.queues, depths.timers), ([0; 5], 0));
    clock.advance(2 * SECOND);
    sched.step_with_budget(SECOND);
    assert_eq!(log.len(), 0);
    assert_eq!(sched.stats().steps, 0, "step does nothing after destroy");
}

#[test]
#[should_panic(expected = "scheduler is destroyed")]
fn schedule_after_destroy_panics() {
    let (_clock, sched) = server();
    sched.destroy();
    let _ = sched.schedule(|| {}, Priority::Normal);
}

#[test]
#[should_panic(expected = "scheduler is destroyed")]
fn after_after_destroy_panics() {
    let (_clock, sched) = server();
    sched.destroy();
    let _ = sched.after(SECOND, || {}, Priority::Normal);
}

#[test]
#[should_panic(expected = "scheduler is destroyed")]
fn every_after_destroy_panics() {
    let (_clock, sched) = server();
    sched.destroy();
    let _ = sched.every(SECOND, || {}, Priority::Normal);
}

#[test]
#[should_panic(expected = "scheduler is destroyed")]
fn spawn_after_destroy_panics() {
    let (_clock, sched) = server();
    sched.destroy();
    let _ = sched.spawn(async {}, Priority::Normal);
}

#[test]
#[should_panic(expected = "scheduler is destroyed")]
fn bind_after_destroy_panics() {
    let (clock, sched) = server();
    let fl = FrameLoop::new(clock, Role::Server, 60);
    sched.destroy();
    let _ = sched.bind(&fl);
}

#[test]
fn destroy_unbinds_and_drops_error_handlers() {
    let (clock, sched) = server();
    let fl = FrameLoop::new(clock, Role::Server, 60);
    sched.bind(&fl).unwrap();
    let called = std::rc::Rc::new(std::cell::Cell::new(false));
    let c = called.clone();
    sched.on_error(move |_| c.set(true));
    sched.destroy();
    assert!(!sched.is_bound());
    fl.run_frames(5);
    assert_eq!(fl.steps_taken(), 0);
    assert!(!called.get());
}

#[test]
fn destroy_twice_is_harmless() {
    let (_clock, sched) = server();
    sched.destroy();
    sched.destroy();
    assert!(sched.is_destroyed());
}
