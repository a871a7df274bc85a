//! Async tasks: futures polled under the budget, parked while pending.

mod common;

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use common::{Log, MS, SECOND, server};
use tickstep_kernel::{FrameLoop, FrameScheduler, ManualClock, Priority, Role, SchedulerConfig};

/// A future that stays pending until its gate is opened, then wakes its task.
#[derive(Clone, Default)]
struct Gate(Rc<RefCell<(bool, Option<Waker>)>>);

impl Gate {
    fn open(&self) {
        let mut g = self.0.borrow_mut();
        g.0 = true;
        if let Some(w) = g.1.take() {
            w.wake();
        }
    }
    fn wait(&self) -> GateFuture {
        GateFuture(self.clone())
    }
}

struct GateFuture(Gate);

impl Future for GateFuture {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut g = (self.0).0.borrow_mut();
        if g.0 {
            Poll::Ready(())
        } else {
            g.1 = Some(cx.waker().clone());
            Poll::Pending
        }
    }
}

#[test]
fn a_future_is_polled_on_the_next_step() {
    let (_clock, sched) = server();
    let log = Log::new();
    let l = log.clone();
    let _h = sched.spawn(async move { l.push("ran") }, Priority::Normal);
    assert_eq!(log.len(), 0);
    sched.step();
    assert_eq!(log.take(), ["ran"]);
}

#[test]
fn a_pending_future_lets_the_step_move_on_and_resumes_after_its_wake() {
    let (_clock, sched) = server();
    let log = Log::new();
    let gate = Gate::default();
    let (l, g) = (log.clone(), gate.clone());
    let _h = sched.spawn(
        async move {
            l.push("start");
            g.wait().await;
            l.push("resumed");
        },
        Priority::High,
    );
    let _n = sched.schedule(log.task("next task"), Priority::Normal);
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["start", "next task"]);
    sched.step_with_budget(SECOND);
    assert_eq!(log.len(), 0, "parked: not polled without a wake");
    gate.open();
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["resumed"]);
}

#[test]
fn step_statistics_count_poll_time_only_never_the_time_parked() {
    let (clock, sched) = server();
    let gate = Gate::default();
    let (c, g) = (clock.clone(), gate.clone());
    let _h = sched.spawn(
        async move {
            c.advance(MS);
            g.wait().await; // "yields" for a long time
            c.advance(2 * MS);
        },
        Priority::Normal,
    );
    sched.step_with_budget(SECOND);
    assert_eq!(sched.stats().last_step, MS);
    clock.advance(10 * SECOND);
    gate.open();
    sched.step_with_budget(SECOND);
    let stats = sched.stats();
    assert_eq!(stats.last_step, 2 * MS);
    assert_eq!(
        stats.window_max,
        2 * MS,
        "the 10 s parked never reaches the window"
    );
    assert_eq!(stats.tasks_deferred, 0);
    assert_eq!(sched.top_tasks(1)[0].time, 3 * MS);
}

#[test]
fn futures_are_polled_under_the_same_budget_as_tasks() {
    let (clock, sched) = server();
    let log = Log::new();
    for i in 0..3 {
        let (l, c) = (log.clone(), clock.clone());
        let _ = sched.spawn(
            async move {
                l.push(format!("f{i}"));
                c.advance(MS);
            },
            Priority::Normal,
        );
    }
    sched.step_with_budget(MS);
    assert_eq!(log.take(), ["f0"]);
    assert_eq!(sched.stats().tasks_deferred, 2);
}

#[test]
fn a_recurring_async_job_never_overlaps_itself() {
    let (clock, sched) = server();
    let starts = Rc::new(Cell::new(0));
    let gate = Rc::new(RefCell::new(Gate::default()));
    let (s, g) = (starts.clone(), gate.clone());
    let _h = sched
        .every_async(
            100 * MS,
            move || {
                s.set(s.get() + 1);
                g.borrow().wait()
            },
            Priority::Normal,
        )
        .unwrap();
    for _ in 0..10 {
        clock.advance(100 * MS);
        sched.step_with_budget(SECOND);
    }
    assert_eq!(
        starts.get(),
        1,
        "the first run is still in flight: no second start"
    );
    assert_eq!(
        sched.queue_depths().timers,
        0,
        "not on the heap while running"
    );
    let old = gate.replace(Gate::default());
    old.open();
    sched.step_with_budget(SECOND);
    assert_eq!(
        sched.queue_depths().timers,
        1,
        "re-armed once the run completed"
    );
    clock.advance(100 * MS);
    sched.step_with_budget(SECOND);
    assert_eq!(starts.get(), 2);
}

#[test]
fn cancelling_a_parked_future_drops_it_at_once() {
    struct Flag(Rc<Cell<bool>>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.set(true);
        }
    }
    let (_clock, sched) = server();
    let dropped = Rc::new(Cell::new(false));
    let flag = Flag(dropped.clone());
    let gate = Gate::default();
    let g = gate.clone();
    let h = sched.spawn(
        async move {
            let _flag = flag;
            g.wait().await;
        },
        Priority::Normal,
    );
    sched.step();
    assert!(!dropped.get());
    h.cancel();
    assert!(dropped.get());
    gate.open(); // a stale wake is ignored
    sched.step();
    assert_eq!(sched.stats().tasks_run, 1);
}

#[test]
fn a_panicking_future_is_reported_and_isolated() {
    let (_clock, sched) = server();
    let log = Log::new();
    let seen = Rc::new(RefCell::new(String::new()));
    let s = seen.clone();
    sched.on_error(move |e| *s.borrow_mut() = e.message().to_owned());
    let _a = sched.spawn(async { panic!("future broke") }, Priority::Normal);
    let _b = sched.schedule(log.task("after"), Priority::Normal);
    sched.step();
    assert_eq!(*seen.borrow(), "future broke");
    assert_eq!(log.take(), ["after"]);
}

#[test]
fn a_wake_from_another_thread_is_served() {
    let (_clock, sched) = server();
    let log = Log::new();
    let slot: Rc<RefCell<Option<Waker>>> = Rc::default();
    let (l, s) = (log.clone(), slot.clone());
    let mut first = true;
    let _h = sched.spawn(
        std::future::poll_fn(move |cx| {
            if first {
                first = false;
                *s.borrow_mut() = Some(cx.waker().clone());
                Poll::Pending
            } else {
                l.push("woken");
                Poll::Ready(())
            }
        }),
        Priority::Normal,
    );
    sched.step();
    let waker = slot.borrow_mut().take().unwrap();
    std::thread::spawn(move || waker.wake()).join().unwrap();
    assert!(sched.has_runnable_work());
    sched.step();
    assert_eq!(log.take(), ["woken"]);
}

#[test]
fn a_woken_future_reattaches_a_sleeping_bound_scheduler() {
    let clock = ManualClock::new();
    let fl = FrameLoop::new(clock.clone(), Role::Server, 60);
    let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    sched.bind(&fl).unwrap();
    let log = Log::new();
    let gate = Gate::default();
    let (l, g) = (log.clone(), gate.clone());
    let _h = sched.spawn(
        async move {
            g.wait().await;
            l.push("done");
        },
        Priority::Normal,
    );
    fl.run_frames(3);
    assert!(!sched.is_attached(), "parked futures are not runnable work");
    gate.open();
    fl.run_frames(1);
    assert_eq!(log.take(), ["done"]);
    let _ = Duration::ZERO;
}

#[test]
fn spawning_many_futures_reuses_wakers_and_runs_them_all() {
    let (_clock, sched) = server();
    let count = Rc::new(Cell::new(0));
    for _ in 0..3 {
        for _ in 0..100 {
            let c = count.clone();
            let _ = sched.spawn(async move { c.set(c.get() + 1) }, Priority::Low);
        }
        sched.step_with_budget(SECOND);
    }
    assert_eq!(count.get(), 300);
}
