//! A property test of the whole runtime against a reference model of durable schedules on a
//! frame clock: random one-shots and recurring schedules, some faulting, some stopped part-way,
//! over a random stretch of virtual time.
//!
//! The model: a recurring schedule of interval `i` created at 0 fires at `i, 2i, 3i, ...`; a
//! one-shot at `t` fires once at `t`; a schedule stopped at `s` fires only for deadlines before
//! `s`; faults never change the cadence (`max_faults` is off). All times are multiples of the
//! 20 ms frame, so "fires at t" means "fires in the frame at t" and the model is exact.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use proptest::prelude::*;
use tickstep::Runtime;
use tickstep::kernel::ManualClock;
use tickstep::schedules::{ObjId, Options, Value};

const WIZARD: ObjId = ObjId(1);
/// 50 fps: 20 ms frames, so every tenth of a second is a frame boundary.
const FPS: u32 = 50;
const FRAME: Duration = Duration::from_millis(20);

#[derive(Clone, Debug)]
struct Spec {
    /// `Some(interval)` in tenths of a second for a recurring schedule, `None` for a one-shot.
    every_tenths: Option<u64>,
    /// The one-shot's time, in tenths of a second.
    at_tenths: u64,
    faults: bool,
    /// Stop it at this many tenths plus a half (never on a deadline).
    stop_after_tenths: Option<u64>,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        prop::option::of(2u64..=200),
        1u64..=600,
        any::<bool>(),
        prop::option::of(0u64..=600),
    )
        .prop_map(|(every, at, faults, stop)| Spec {
            // Deadlines on even tenths, stops on odd-tenth halves: never the same frame.
            every_tenths: every.map(|e| e * 2),
            at_tenths: at * 2,
            faults,
            stop_after_tenths: stop.map(|s| s * 2),
        })
}

/// Firings the model expects within `end_tenths`.
fn expected(spec: &Spec, end_tenths: u64) -> u64 {
    // Stopped at stop + 0.5 tenths: deadlines up to `stop` fired, later ones did not.
    let last = spec
        .stop_after_tenths
        .map_or(end_tenths, |s| s.min(end_tenths));
    match spec.every_tenths {
        Some(interval) => last / interval,
        None => u64::from(spec.at_tenths <= last),
    }
}

fn tenths(n: u64) -> Duration {
    Duration::from_millis(100 * n)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn runtime_fires_what_the_model_says(specs in prop::collection::vec(spec(), 1..8), end in 10u64..=1200) {
        let clock = ManualClock::new();
        let rt = Runtime::builder()
            .manual_clock(clock.clone())
            .frame_rate(FPS)
            .without_commands()
            .in_memory_store()
            .build()
            .unwrap();
        let fired: Rc<RefCell<HashMap<u64, u64>>> = Rc::default();
        for verb in ["ok", "bad"] {
            let f = fired.clone();
            rt.verb(verb, move |call| {
                *f.borrow_mut().entry(call.schedule().get()).or_default() += 1;
                if call.firing().verb.as_ref() == "bad" { Err(Value::from("E_BAD")) } else { Ok(Value::Int(0)) }
            });
        }
        let start = rt.schedules().now_unix_seconds();
        let mut ids = Vec::new();
        let mut txn = rt.schedules().begin(WIZARD);
        for s in &specs {
            let verb = if s.faults { "bad" } else { "ok" };
            let options = Options::new().max_faults(0).adaptive(false);
            let id = match s.every_tenths {
                Some(every) => txn.schedule_every(ObjId(2), verb, tenths(every).as_secs_f64(), vec![], options),
                None => txn.schedule_at(ObjId(2), verb, start + tenths(s.at_tenths).as_secs_f64(), vec![], options),
            }
            .unwrap();
            ids.push(id);
        }
        txn.commit().unwrap();

        // Run to each stop in time order, stop, and carry on to the end.
        let mut stops: Vec<(u64, usize)> = specs
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.stop_after_tenths.filter(|&t| t < end * 2).map(|t| (t, i)))
            .collect();
        stops.sort_unstable();
        let mut now = Duration::ZERO;
        for (t, i) in stops {
            let at = tenths(t) + Duration::from_millis(50);
            rt.run_for(at.saturating_sub(now)).unwrap();
            now = at;
            let mut txn = rt.schedules().begin(WIZARD);
            txn.schedule_stop(ids[i]).unwrap();
            txn.commit().unwrap();
        }
        let end_time = tenths(end * 2) + FRAME;
        rt.run_for(end_time.saturating_sub(now)).unwrap();

        let fired = fired.borrow();
        let mut total = 0;
        for (s, id) in specs.iter().zip(&ids) {
            let want = expected(s, end * 2);
            let got = fired.get(&id.get()).copied().unwrap_or(0);
            prop_assert_eq!(got, want, "schedule {:?} over {} tenths", s, end * 2);
            total += want;
        }
        let stats = rt.stats();
        prop_assert_eq!(stats.firings_started, total);
        prop_assert_eq!(stats.firings_returned + stats.firings_faulted, total);
        let faults: u64 = specs.iter().filter(|s| s.faults).map(|s| expected(s, end * 2)).sum();
        prop_assert_eq!(stats.firings_faulted, faults);
    }
}
