//! Overlap `"cancel_other"` on the runtime (docs/schedules.md §16.7): the next point kills the
//! running firing's task — an async verb asleep past its interval is dropped, never resumed — and
//! starts its own, in virtual time.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use tickstep::Runtime;
use tickstep::kernel::ManualClock;
use tickstep::schedules::{FaultKind, ObjId, Options, Overlap, Value};

const WIZARD: ObjId = ObjId(1);

#[test]
fn the_next_point_drops_the_running_verb_and_starts_its_own() {
    let clock = ManualClock::new();
    let rt = Runtime::builder()
        .manual_clock(clock.clone())
        .without_commands()
        .in_memory_store()
        .build()
        .unwrap();
    let (started, finished) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
    let (s, f) = (started.clone(), finished.clone());
    rt.async_verb("slow", move |call| {
        let (s, f) = (s.clone(), f.clone());
        async move {
            s.set(s.get() + 1);
            call.sleep(Duration::from_secs(90)).await;
            f.set(f.get() + 1);
            Ok(Value::Int(0))
        }
    });
    let mut txn = rt.schedules().begin(WIZARD);
    let id = txn
        .schedule_every(
            ObjId(5),
            "slow",
            60.0,
            vec![],
            Options::new().overlap(Overlap::CancelOther),
        )
        .unwrap();
    txn.commit().unwrap();
    rt.run_for(Duration::from_secs(61)).unwrap();
    let first = rt.running_firings();
    assert_eq!(first.len(), 1);
    rt.run_for(Duration::from_secs(60)).unwrap(); // +120 arrives while +60 sleeps
    let now = rt.running_firings();
    assert_eq!(now.len(), 1, "one task runs: the new one");
    assert_ne!(now[0].run, first[0].run);
    assert_eq!(started.get(), 2);
    rt.run_for(Duration::from_secs(40)).unwrap(); // past +60's 90 s sleep
    assert_eq!(
        finished.get(),
        0,
        "the killed verb was dropped, never resumed"
    );
    let info = rt.schedules().begin(WIZARD).schedule_info(id).unwrap();
    assert_eq!(info.last_fault.map(|f| f.kind), Some(FaultKind::Killed));
    assert_eq!(
        info.fault_count, 1,
        "counted once, not again by the host's own report"
    );
}
