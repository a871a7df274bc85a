//! Re-entrancy: tasks call back into their own scheduler without a borrow panic.

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use common::{Log, MS, SECOND, server};
use tickstep_kernel::{Priority, ScheduleError, TaskHandle};

#[test]
fn a_task_can_schedule_after_every_and_inspect_its_own_scheduler() {
    let (clock, sched) = server();
    let log = Log::new();
    let keep: Rc<RefCell<Vec<TaskHandle>>> = Rc::default();
    let (s, l, k) = (sched.clone(), log.clone(), keep.clone());
    let _h = sched.schedule(
        move || {
            k.borrow_mut()
                .push(s.after(MS, l.task("after"), Priority::Normal).unwrap());
            k.borrow_mut()
                .push(s.every(MS, l.every("every"), Priority::Normal).unwrap());
            let _ = s.schedule(l.task("schedule"), Priority::Normal);
            let _ = (
                s.stats(),
                s.queue_depths(),
                s.top_tasks(3),
                s.has_runnable_work(),
            );
        },
        Priority::High,
    );
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["schedule"]);
    clock.advance(MS);
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["after", "every"]);
}

#[test]
fn a_task_can_destroy_its_scheduler_and_the_step_stops_after_it() {
    let (_clock, sched) = server();
    let log = Log::new();
    let (s, l) = (sched.clone(), log.clone());
    let _a = sched.schedule(
        move || {
            l.push("destroyer");
            s.destroy();
        },
        Priority::High,
    );
    let later = sched.schedule(log.task("later"), Priority::Normal);
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["destroyer"]);
    assert!(later.is_cancelled());
}

#[test]
fn a_nested_step_from_inside_a_task_is_a_no_op() {
    let (_clock, sched) = server();
    let log = Log::new();
    let (s, l) = (sched.clone(), log.clone());
    let _a = sched.schedule(
        move || {
            l.push("outer");
            s.step();
        },
        Priority::High,
    );
    let _b = sched.schedule(log.task("inner"), Priority::High);
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["outer", "inner"]);
    assert_eq!(sched.stats().steps, 1);
}

#[test]
fn an_entry_is_queued_again_without_allocating_a_new_task() {
    let (_clock, sched) = server();
    let runs = Rc::new(Cell::new(0));
    let r = runs.clone();
    let entry = sched.entry(move || r.set(r.get() + 1), Priority::Normal);
    assert_eq!(
        sched.queue_depths().queues,
        [0; 5],
        "an entry waits until queued"
    );
    for n in 1..=3 {
        sched.schedule_entry(&entry).unwrap();
        assert_eq!(sched.schedule_entry(&entry), Err(ScheduleError::EntryBusy));
        sched.step_with_budget(SECOND);
        assert_eq!(runs.get(), n);
    }
}

#[test]
fn an_entry_may_queue_itself_again_while_running() {
    let (_clock, sched) = server();
    let runs = Rc::new(Cell::new(0));
    let slot: Rc<RefCell<Option<tickstep_kernel::ReusableTask>>> = Rc::default();
    let (s, r, e) = (sched.clone(), runs.clone(), Rc::downgrade(&slot));
    let entry = sched.entry(
        move || {
            r.set(r.get() + 1);
            if r.get() < 3
                && let Some(slot) = e.upgrade()
            {
                let slot = slot.borrow();
                let entry = slot.as_ref().unwrap();
                s.schedule_entry(entry).unwrap();
                assert_eq!(s.schedule_entry(entry), Err(ScheduleError::EntryBusy));
            }
        },
        Priority::Normal,
    );
    *slot.borrow_mut() = Some(entry);
    sched
        .schedule_entry(slot.borrow().as_ref().unwrap())
        .unwrap();
    for _ in 0..5 {
        sched.step_with_budget(SECOND);
    }
    assert_eq!(runs.get(), 3, "one run per step, requeued twice");
}

#[test]
fn a_cancelled_or_foreign_entry_cannot_be_queued() {
    let (_clock, sched) = server();
    let (_clock2, other) = server();
    let entry = sched.entry(|| {}, Priority::Normal);
    assert_eq!(
        other.schedule_entry(&entry),
        Err(ScheduleError::EntryCancelled)
    );
    sched.schedule_entry(&entry).unwrap();
    entry.cancel();
    assert!(entry.is_cancelled());
    assert_eq!(sched.queue_depths().queues[2], 0);
    assert_eq!(
        sched.schedule_entry(&entry),
        Err(ScheduleError::EntryCancelled)
    );
}

#[test]
fn dropping_an_entry_frees_it() {
    let (_clock, sched) = server();
    let ran = Rc::new(Cell::new(false));
    let r = ran.clone();
    let entry = sched.entry(move || r.set(true), Priority::Normal);
    sched.schedule_entry(&entry).unwrap();
    drop(entry);
    sched.step_with_budget(SECOND);
    assert!(!ran.get());
}

#[test]
fn dropping_a_tasks_captures_may_use_the_scheduler() {
    struct OnDrop(tickstep_kernel::FrameScheduler, Log);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            let _ = self.0.schedule(self.1.task("from drop"), Priority::Normal);
        }
    }
    let (_clock, sched) = server();
    let log = Log::new();
    let guard = OnDrop(sched.clone(), log.clone());
    let h = sched.schedule(move || drop(guard), Priority::Normal);
    let guard2 = OnDrop(sched.clone(), log.clone());
    let cancelled = sched.schedule(move || drop(guard2), Priority::Normal);
    cancelled.cancel(); // drops the captures right here, outside any borrow
    sched.step_with_budget(SECOND); // runs the cancelled guard's task; `h` drops its guard
    sched.step_with_budget(SECOND); // runs the task `h`'s guard scheduled while dropping
    drop(h);
    assert_eq!(log.take(), ["from drop", "from drop"]);
}
