//! The edges a new user meets first: where `run_for` ends, fire-and-forget tasks, a server with
//! no commands.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use tickstep::Runtime;
use tickstep::kernel::{Clock, ManualClock, Priority};
use tickstep::schedules::{ObjId, Options, Value};

fn ringing(rt: &Runtime) -> Rc<Cell<u32>> {
    let rings = Rc::new(Cell::new(0));
    let r = rings.clone();
    rt.verb("ring", move |_| {
        r.set(r.get() + 1);
        Ok(Value::Int(0))
    });
    let mut txn = rt.schedules().begin(ObjId(1));
    txn.schedule_every(ObjId(1), "ring", 1.0, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();
    rings
}

#[test]
fn run_for_serves_a_firing_due_exactly_at_its_end() {
    for fps in [50, 60] {
        let clock = ManualClock::new();
        let rt = Runtime::builder()
            .manual_clock(clock.clone())
            .frame_rate(fps)
            .in_memory_store()
            .build()
            .unwrap();
        let rings = ringing(&rt);
        rt.run_for(Duration::from_secs(3)).unwrap();
        assert_eq!(rings.get(), 3, "{fps} fps: the firing due at 3 s ran");
        rt.run_for(Duration::from_secs(2)).unwrap();
        assert_eq!(rings.get(), 5, "{fps} fps: no firing twice, none skipped");
        // Each call ends on a frame, at most one frame past its own end (60 fps frames do not
        // land on whole seconds), and the second call's end counts from where the first ended.
        let now = clock.now().as_nanos();
        assert!(
            (5_000_000_000..5_000_000_000 + 34_000_000).contains(&now),
            "{now}"
        );
    }
}

#[test]
fn run_until_stops_before_the_first_frame_after_its_condition_holds() {
    let rt = Runtime::builder()
        .manual_clock(ManualClock::new())
        .in_memory_store()
        .build()
        .unwrap();
    let rings = ringing(&rt);
    rt.run_until(|| rings.get() == 3).unwrap();
    assert_eq!(rings.get(), 3);
    let frames = rt.frame_loop().frame_count();
    rt.run_until(|| rings.get() == 3).unwrap();
    assert_eq!(
        rt.frame_loop().frame_count(),
        frames,
        "already true: no frame"
    );
}

#[test]
fn fire_and_forget_kernel_work_needs_no_handle() {
    let rt = Runtime::builder()
        .manual_clock(ManualClock::new())
        .in_memory_store()
        .build()
        .unwrap();
    let done = Rc::new(Cell::new(0));
    let (a, b) = (done.clone(), done.clone());
    rt.scheduler()
        .schedule_detached(move || a.set(a.get() + 1), Priority::Low);
    rt.scheduler().spawn_detached(
        async move {
            tickstep::yield_now().await;
            b.set(b.get() + 1);
        },
        Priority::Low,
    );
    rt.run_for(Duration::from_millis(100)).unwrap();
    assert_eq!(done.get(), 2);
}
