//! Catch-up `"all"` fires every point, in order, whatever the overlap policy
//! (docs/schedules.md §4.5, §11.8, §11.28, §13.64): a point that comes due while the catch-up's
//! backlog is still being worked off joins the backlog — it is no overlap of it.
//!
//! The first tests fall behind on one schedule per overlap policy, then run the host for a while
//! on virtual time with firings that last longer than a tick (started at one tick, ended just
//! before the tick after next), so that the catch-up takes several intervals and the live points
//! come due while a catch-up firing runs. Three ways to fall behind: an engine that stalled (no
//! store), downtime between a close and an open (docs/schedules.md §11.8, both stores), and a
//! `PostgreSQL` takeover from a node whose lease ran out (docs/schedules.md §11.26). The others
//! check where a catch-up ends: a restart in the middle of one starts it afresh
//! (docs/schedules.md §13.66); once it has caught up, overlap applies again; and one that cannot
//! catch up ends after 1,000 firings (docs/schedules.md §13.65).

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::stores::Store;
use common::{Host, t0};
use tickstep_kernel::clock::{Clock, ManualClock};
use tickstep_schedules::{Catchup, Options, Overlap, RunId, ScheduleId, Value};

const SEC: u64 = 1_000_000_000;
const POLICIES: [Overlap; 3] = [Overlap::Skip, Overlap::Queue, Overlap::Concurrent];

/// Catch-up `all` with `overlap`.
fn all(overlap: Overlap) -> Options {
    Options::new().catchup(Catchup::All).overlap(overlap)
}

/// Runs `h` for `ticks` ticks, `step` seconds apart (the first one now), each firing ending
/// just before the tick after the one after it started: it is running at the next tick.
fn run_with_firings_spanning_a_tick(h: &Host, ticks: usize, step: f64) {
    let mut started_at: BTreeMap<RunId, usize> = BTreeMap::new();
    for t in 0..ticks {
        if t > 0 {
            h.advance(step);
        }
        for run in h.runner.running() {
            let at = *started_at.entry(run).or_insert(t);
            if at + 2 <= t {
                h.finish(run, Value::Int(0));
            }
        }
        h.tick();
        for run in h.runner.running() {
            started_at.entry(run).or_insert(t);
        }
    }
}

/// The nominal points (Unix ns) the runner started for `id`, in the order it started them.
fn fired(h: &Host, id: ScheduleId) -> Vec<u64> {
    h.started()
        .iter()
        .filter(|(_, f)| f.schedule == id)
        .map(|(_, f)| f.nominal_unix_nanos)
        .collect()
}

/// Every point of `id` from `first` fired once, in order, up to the cadence's present (the
/// catch-up ended and the live points followed), and nothing counted dropped.
fn assert_every_point_fired(h: &Host, id: ScheduleId, overlap: Overlap, first: u64, every: u64) {
    let points = fired(h, id);
    let want: Vec<u64> = (0..points.len() as u64)
        .map(|k| first + k * every)
        .collect();
    assert_eq!(points, want, "{overlap:?}: every point, in order, once");
    let now = h.clock.unix_nanos();
    assert!(
        *points.last().unwrap() + 2 * every > now,
        "{overlap:?}: the catch-up ended and the live points fire ({} points)",
        points.len()
    );
    let info = h.info(id);
    assert_eq!(
        (info.missed_count, info.overlap_count),
        (0, 0),
        "{overlap:?}: nothing dropped"
    );
}

#[test]
fn a_stalled_engine_catching_up_fires_the_points_that_come_due_during_the_burst() {
    let h = Host::new();
    let ids: Vec<_> = POLICIES.map(|o| h.every(1.0, all(o))).into();
    h.advance(15.5); // points +1 .. +15 passed with no tick
    run_with_firings_spanning_a_tick(&h, 80, 0.1);
    for (id, overlap) in ids.into_iter().zip(POLICIES) {
        assert_every_point_fired(&h, id, overlap, (t0() as u64 + 1) * SEC, SEC);
    }
}

on_both_stores! {
    fn catching_up_at_open_fires_the_points_that_come_due_during_the_burst(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let ids: Vec<_> = POLICIES.map(|o| h.every(1.0, all(o))).into();
        let wall = h.clock.unix_nanos() + 15 * SEC + SEC / 2; // +1 .. +15 pass while down
        drop(h);
        let h = Host::open(path, ManualClock::starting_at_unix_nanos(wall));
        run_with_firings_spanning_a_tick(&h, 80, 0.1);
        for (id, overlap) in ids.into_iter().zip(POLICIES) {
            assert_every_point_fired(&h, id, overlap, (t0() as u64 + 1) * SEC, SEC);
        }
    }
}

#[test]
fn postgres_only_a_node_taking_over_fires_the_backlog_and_the_points_that_come_due_during_it() {
    let url = pg_or_skip!("catch_up_takeover");
    let store = Store::postgres(url);
    // A renews its lease rarely, so the test can end it from outside; B claims often.
    let a = Host::with_lease(&store, Duration::from_secs(600));
    let b = Host::with_lease(&store, Duration::from_millis(90));
    let ids: Vec<_> = POLICIES.map(|o| a.every(1.0, all(o))).into();
    assert_eq!(a.after(1.0).started, 3);
    a.finish_all();
    a.engine.flush().unwrap();
    // A stops ticking (as if paused) and its lease runs out; B's clock is 14.5 s on.
    store.lapse_long_leases();
    b.advance(15.5);
    // Claims are applied at a tick; the one that applies them also starts the catch-up (+2).
    b.take_over(ids.len());
    run_with_firings_spanning_a_tick(&b, 80, 0.1);
    for (id, overlap) in ids.into_iter().zip(POLICIES) {
        // A fired +1; B fires +2 on, each once.
        assert_every_point_fired(&b, id, overlap, (t0() as u64 + 2) * SEC, SEC);
    }
    drop(a);
}

on_both_stores! {
    fn a_restart_during_a_catch_up_starts_it_afresh_with_the_points_of_the_downtime(store) {
        let path = store.path();
        let h = Host::open(path, ManualClock::new());
        let id = h.every(1.0, all(Overlap::Skip));
        let wall = h.clock.unix_nanos() + 5 * SEC + SEC / 2;
        drop(h);
        let h = Host::open(path, ManualClock::starting_at_unix_nanos(wall));
        run_with_firings_spanning_a_tick(&h, 4, 0.1); // +1 and +2 fire, +3 is due
        assert_eq!(fired(&h, id).len(), 2);
        let wall = h.clock.unix_nanos() + 3 * SEC; // down again while catching up
        drop(h);
        let h = Host::open(path, ManualClock::starting_at_unix_nanos(wall));
        // +2 was running: handed back, and this host's tasks did not survive (docs/schedules.md §11.5).
        for f in h.engine.interrupted() {
            assert!(h.engine.abandon(f.run));
        }
        run_with_firings_spanning_a_tick(&h, 60, 0.1);
        let points = fired(&h, id);
        assert_eq!(
            points.first(),
            Some(&((t0() as u64 + 3) * SEC)),
            "the catch-up goes on where it stopped"
        );
        assert_every_point_fired(&h, id, Overlap::Skip, (t0() as u64 + 3) * SEC, SEC);
    }
}

#[test]
fn once_caught_up_a_firing_that_runs_past_the_next_point_is_an_overlap_again() {
    let h = Host::new();
    let id = h.every(1.0, all(Overlap::Skip));
    h.advance(3.5); // +1 .. +3 passed
    // +1, +2, +3 fire at 3.5, 3.7 and 3.9; +4 comes due while +3 runs and fires at 4.1; its
    // firing ends at 4.3 with +5 not due: the catch-up is over.
    run_with_firings_spanning_a_tick(&h, 10, 0.1);
    assert_eq!(fired(&h, id).len(), 4);
    h.after(0.7); // +5 fires at 5.1
    assert_eq!(fired(&h, id).len(), 5);
    h.after(1.0); // +6 arrives while +5 still runs: an overlap, as before the catch-up
    let info = h.info(id);
    assert_eq!((info.overlap_count, info.missed_count), (1, 0));
    h.finish_all();
    h.after(1.0);
    assert_eq!(
        fired(&h, id).last(),
        Some(&((t0() as u64 + 7) * SEC)),
        "+7 fires on time"
    );
}

#[test]
fn a_catch_up_that_cannot_catch_up_ends_after_1000_firings_and_overlap_applies_again() {
    let h = Host::new();
    // Every firing lasts two ticks of 0.1 s: twice the interval. Each catch-up firing waits for
    // the one before, so the catch-up falls further behind with every firing.
    let id = h.every(0.1, all(Overlap::Skip));
    h.advance(1.05); // ten points passed
    run_with_firings_spanning_a_tick(&h, 2_001, 0.1);
    let points = fired(&h, id);
    let first = (t0() * 1e9) as u64 + 100_000_000;
    let catch_up: Vec<u64> = (0..1_000).map(|k| first + k * 100_000_000).collect();
    assert_eq!(
        points[..1_000],
        catch_up[..],
        "1,000 points in order, none skipped"
    );
    let info = h.info(id);
    assert_eq!(
        info.missed_count, 0,
        "ten points behind: none dropped at the start"
    );
    assert!(
        info.overlap_count > 0,
        "then overlap `skip` applies again: the points due meanwhile are dropped as overlaps"
    );
    // The 1,000th firing started ten points behind plus one per firing before it; the next
    // one serves the present, the points in between counted as overlaps of the 1,000th.
    let skipped = (points[1_000] - catch_up[999]) / 100_000_000 - 1;
    assert!(
        skipped > 900,
        "back in the present: {skipped} points skipped"
    );
    assert_eq!(info.overlap_count, skipped);
}
