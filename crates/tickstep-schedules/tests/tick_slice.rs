//! The tick's time slice (docs/schedules.md §10.5), on virtual time: the runner moves the
//! `ManualClock` on as a real start would take time, and the tick stops starting firings once its
//! slice has passed. The rest stay due, in deadline order, and fire at the next ticks — each
//! exactly once.

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::{Host, config};
use tickstep_kernel::clock::ManualClock;
use tickstep_schedules::{Options, ScheduleId};

/// What one start costs in these tests, in engine-clock time.
const START_COST: Duration = Duration::from_micros(100);
const SLICE: Duration = Duration::from_millis(1);
const DUE: usize = 5_000;

/// A host whose engine has a 1 ms slice and whose runner takes 100 µs per start.
fn sliced_host(store: &common::stores::Store) -> Host {
    let mut config = config();
    config.max_tick_time = Some(SLICE);
    let h = Host::on_with_config(store, config);
    let clock: ManualClock = h.clock.clone();
    h.runner.on_start(move |_| clock.advance(START_COST));
    h
}

/// `DUE` one-shots, created out of deadline order, all due 10 s from now, 1 ms apart.
fn due_one_shots(h: &Host) -> Vec<ScheduleId> {
    let start = h.now();
    let mut txn = h.engine.begin(h.prog);
    let ids = (0..DUE)
        .map(|i| {
            let rank = (i * 7_919) % DUE; // a permutation: creation order is not deadline order
            let at = start + 5.0 + rank as f64 * 0.001;
            txn.schedule_at(h.room, "tick", at, vec![], Options::new())
                .expect("create")
        })
        .collect();
    txn.commit().expect("commit");
    h.advance(10.0);
    ids
}

on_every_store! {
    fn a_sliced_tick_drains_a_backlog_over_several_ticks_in_deadline_order_each_once(store) {
        let h = sliced_host(store);
        let ids = due_one_shots(&h);
        let first = h.tick();
        // The clock is read after each start: the tenth start ends the 1 ms slice.
        assert_eq!((first.started, first.not_started), (10, 0));
        assert!(first.more_due, "the rest stay due");
        let mut ticks = 1;
        loop {
            // Meanwhile every schedule is visible: fired ones have run once, the rest not yet.
            if ticks % 50 == 0 {
                let txn = h.engine.begin(h.prog);
                let fired = h.fired();
                for id in &ids {
                    assert!(txn.schedule_info(*id).is_ok(), "#{id} is visible");
                }
                assert!(fired < DUE);
            }
            let report = h.tick();
            ticks += 1;
            assert!(report.started <= 10, "tick {ticks} started {}", report.started);
            if !report.more_due {
                break;
            }
        }
        assert_eq!(ticks, DUE / 10);
        let started = h.runner.started();
        assert_eq!(started.len(), DUE, "every due firing started");
        let distinct: HashSet<_> = started.iter().map(|(_, f)| f.schedule).collect();
        assert_eq!(distinct.len(), DUE, "none fired twice");
        assert!(
            started.windows(2).all(|w| w[0].1.nominal_unix_nanos <= w[1].1.nominal_unix_nanos),
            "the backlog fires in deadline order across ticks"
        );
        for id in &ids {
            assert_eq!(h.info(*id).run_count, 1);
        }
        // Nothing more is due: a later tick starts nothing.
        assert_eq!(h.after(1.0).started, 0);
    }
}

on_every_store! {
    fn a_slice_never_stops_a_tick_before_its_first_firing(store) {
        let mut config = config();
        config.max_tick_time = Some(Duration::ZERO);
        let h = Host::on_with_config(store, config);
        h.every(1.0, Options::new());
        h.every(1.0, Options::new());
        h.advance(1.0);
        let first = h.tick();
        assert_eq!((first.started, first.more_due), (1, true));
        let second = h.tick();
        assert_eq!((second.started, second.more_due), (1, false));
    }
}

on_every_store! {
    fn the_count_bound_still_holds_inside_a_generous_slice(store) {
        let mut config = config();
        config.max_tick_time = Some(Duration::from_secs(1));
        config.max_firings_per_tick = 7;
        let h = Host::on_with_config(store, config);
        for _ in 0..20 {
            h.every(1.0, Options::new());
        }
        h.advance(1.0);
        let started: Vec<usize> = std::iter::from_fn(|| {
            let r = h.tick();
            (r.started > 0).then_some(r.started)
        })
        .collect();
        assert_eq!(started, [7, 7, 6]);
    }
}

#[test]
fn an_entry_rearmed_to_a_due_deadline_waits_for_the_next_sliced_tick() {
    // catch-up "all": a schedule three intervals behind is re-armed to a deadline already due;
    // within one sliced tick it must not be visited again (docs/schedules.md §10.2).
    let mut config = config();
    config.max_tick_time = Some(Duration::from_secs(1));
    let h = Host::with_config(config);
    h.every(
        1.0,
        Options::new()
            .catchup(tickstep_schedules::Catchup::All)
            .overlap(tickstep_schedules::Overlap::Concurrent),
    );
    h.advance(3.0);
    assert_eq!(h.tick().started, 1);
    assert_eq!(h.tick().started, 1);
    assert_eq!(h.tick().started, 1);
    assert_eq!(h.tick().started, 0);
}
