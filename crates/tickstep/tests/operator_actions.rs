//! The schedules engine's operator actions through the facade's runtime (docs/schedules.md
//! §9.4, §9.6): a paused schedule's firings stop while frames run, a trigger runs it at the
//! next frame even when nothing else is due, and a resume picks the cadence up again.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use tickstep::Runtime;
use tickstep::kernel::ManualClock;
use tickstep::schedules::{ObjId, Options, Value};

#[test]
fn pause_trigger_and_resume_act_on_a_running_runtime() {
    let rt = Runtime::builder()
        .manual_clock(ManualClock::new())
        .in_memory_store()
        .build()
        .unwrap();
    let rings = Rc::new(Cell::new(0));
    let r = rings.clone();
    rt.verb("ring", move |_| {
        r.set(r.get() + 1);
        Ok(Value::Int(0))
    });
    let wiz = ObjId(1);
    let mut txn = rt.schedules().begin(wiz);
    let id = txn
        .schedule_every(wiz, "ring", 10.0, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();
    rt.run_for(Duration::from_secs(10)).unwrap();
    assert_eq!(rings.get(), 1);

    assert!(rt.schedules().pause(wiz, id, "quiet").unwrap());
    rt.run_for(Duration::from_secs(30)).unwrap();
    assert_eq!(rings.get(), 1, "nothing fires while paused");

    // Nothing else is due: the runtime still ticks the engine for the trigger.
    assert!(rt.schedules().trigger_now(wiz, id).unwrap());
    rt.run_for(Duration::from_millis(100)).unwrap();
    assert_eq!(rings.get(), 2, "the trigger ran at the next frames");

    assert!(rt.schedules().resume(wiz, id).unwrap());
    let info = rt.schedules().begin(wiz).schedule_info(id).unwrap();
    assert_eq!(
        info.paused_missed, 3,
        "the points at 20, 30 and 40 s were paused through"
    );
    rt.run_for(Duration::from_secs(10)).unwrap();
    assert_eq!(rings.get(), 3, "the cadence runs again");
}
