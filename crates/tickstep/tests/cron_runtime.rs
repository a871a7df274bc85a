//! A calendar schedule through the facade's runtime (docs/schedules.md §14.12): the runtime's
//! frames fire it at its calendar's points across a DST change, in virtual time.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use tickstep::Runtime;
use tickstep::kernel::ManualClock;
use tickstep::kernel::clock::Clock;
use tickstep::schedules::{ObjId, Options, Value};

#[test]
fn a_runtime_fires_a_cron_schedule_at_its_points_across_spring_forward() {
    // 2026-03-08 01:00 EST; New York skips 02:00-03:00 that night.
    let start = 1_772_949_600;
    let clock = ManualClock::starting_at_unix_nanos(start * 1_000_000_000);
    let rt = Runtime::builder()
        .manual_clock(clock.clone())
        .in_memory_store()
        .build()
        .unwrap();
    let fired = Rc::new(RefCell::new(Vec::new()));
    let f = fired.clone();
    let c = clock.clone();
    rt.verb("wake", move |_| {
        f.borrow_mut().push(c.unix_nanos() / 1_000_000_000);
        Ok(Value::Int(0))
    });
    let wiz = ObjId(1);
    let mut txn = rt.schedules().begin(wiz);
    // 02:30 every day: on the 8th it does not exist, and the default policy runs it at 03:00 EDT.
    txn.schedule_cron(
        wiz,
        "wake",
        "30 2 * * *",
        "America/New_York",
        vec![],
        Options::new(),
    )
    .unwrap();
    txn.commit().unwrap();
    rt.run_for(Duration::from_secs(3_600 + 60)).unwrap();
    // The frames run at the runtime's rate: the firing within a second of the transition.
    let transition = start + 3_600; // 02:00 EST is 03:00 EDT
    let fired = fired.borrow();
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert!(
        (transition..=transition + 1).contains(&fired[0]),
        "{} for {transition}",
        fired[0]
    );
}
