//! The tokio driver, in virtual time: tokio's paused clock with a `ManualClock` runtime that
//! follows it (see the `tokio_driver` module docs). Frames are counted, never timed.
#![cfg(feature = "tokio")]

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use tickstep::kernel::clock::Clock;
use tickstep::kernel::{ManualClock, Priority};
use tickstep::schedules::{ObjId, Options, Value};
use tickstep::{Runtime, RuntimeBuilder, TokioDriver};

const WORLD: ObjId = ObjId(1);

fn quiet(clock: &ManualClock) -> RuntimeBuilder {
    Runtime::builder()
        .manual_clock(clock.clone())
        .without_commands()
        .diagnostics(false)
        .in_memory_store()
}

fn count_verb(rt: &Runtime, name: &str) -> Rc<Cell<u32>> {
    let count = Rc::new(Cell::new(0));
    let c = count.clone();
    rt.verb(name, move |_| {
        c.set(c.get() + 1);
        Ok(Value::Int(0))
    });
    count
}

fn every(rt: &Runtime, verb: &str, seconds: f64) {
    let mut txn = rt.schedules().begin(WORLD);
    txn.schedule_every(WORLD, verb, seconds, vec![], Options::new())
        .unwrap();
    txn.commit().unwrap();
}

fn secs(clock: &ManualClock) -> f64 {
    clock.now().as_nanos() as f64 / 1e9
}

#[tokio::test(start_paused = true)]
async fn an_idle_server_runs_no_frames_between_its_firings() {
    let clock = ManualClock::new();
    let driver = TokioDriver::new(quiet(&clock)).unwrap();
    let rings = count_verb(driver.runtime(), "ring");
    every(driver.runtime(), "ring", 600.0);
    let rt = driver.runtime().clone();
    let local = tokio::task::LocalSet::new();
    local
        .run_until(driver.run_until(tokio::time::sleep(Duration::from_secs(3601))))
        .await
        .unwrap();
    assert_eq!(rings.get(), 6);
    let stats = rt.stats();
    // 60 fps for an hour would be 216,060 frames; each firing costs the few frames of the
    // kernel's 34 ms wake window.
    assert!(stats.frames_run <= 6 * 6, "{stats:?}");
    assert!(stats.frames <= 6 * 7, "{stats:?}");
    assert!(secs(&clock) >= 3600.0);
}

#[tokio::test(start_paused = true)]
async fn a_busy_server_keeps_its_frame_rate() {
    let clock = ManualClock::new();
    let driver = TokioDriver::new(quiet(&clock).frame_rate(60)).unwrap();
    let rt = driver.runtime().clone();
    let steps = Rc::new(Cell::new(0u32));
    let s = steps.clone();
    let _job = rt
        .scheduler()
        .every(Duration::ZERO, move || s.set(s.get() + 1), Priority::Normal)
        .unwrap();
    let local = tokio::task::LocalSet::new();
    local
        .run_until(driver.run_until(tokio::time::sleep(Duration::from_secs(10))))
        .await
        .unwrap();
    let frames = rt.stats().frames_run;
    // tokio's timer has millisecond resolution: 16.67 ms frames land on whole milliseconds.
    assert!(
        (580..=601).contains(&frames),
        "{frames} frames in ten seconds"
    );
    assert_eq!(u64::from(steps.get()), frames);
}

#[tokio::test(start_paused = true)]
async fn a_submission_wakes_an_idle_runtime_at_once() {
    let clock = ManualClock::new();
    let driver = TokioDriver::new(quiet(&clock)).unwrap();
    let rings = count_verb(driver.runtime(), "ring");
    every(driver.runtime(), "ring", 3600.0);
    let handle = driver.handle();
    let ran_at = Rc::new(RefCell::new(Vec::new()));
    let local = tokio::task::LocalSet::new();
    let (at, c) = (ran_at.clone(), clock.clone());
    local.spawn_local(async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        // A job that arms a kernel timer 1 s later: it must run at 6 s, not after the hour.
        let (tx, rx) = tokio::sync::oneshot::channel();
        handle
            .submit(move |rt| {
                let _t = rt
                    .scheduler()
                    .after(
                        Duration::from_secs(1),
                        move || {
                            let _ = tx.send(());
                        },
                        Priority::Normal,
                    )
                    .unwrap();
            })
            .unwrap();
        rx.await.unwrap();
        at.borrow_mut().push(secs(&c));
    });
    local
        .run_until(driver.run_until(tokio::time::sleep(Duration::from_secs(3601))))
        .await
        .unwrap();
    let at = ran_at.borrow();
    assert_eq!(at.len(), 1);
    assert!((6.0..6.1).contains(&at[0]), "the timer ran at {} s", at[0]);
    assert_eq!(rings.get(), 1, "the hourly schedule still fired");
}

// Real tokio time: a paused clock would jump past the other thread's send. Bounded by a 10 s stop;
// it ends as soon as the job arrives.
#[tokio::test]
async fn a_handle_works_from_another_thread_and_can_stop_the_driver() {
    let clock = ManualClock::new();
    let driver = TokioDriver::new(quiet(&clock)).unwrap();
    let handle = driver.handle();
    let (tx, rx) = std::sync::mpsc::channel();
    let sender = std::thread::spawn(move || {
        let stopper = handle.clone();
        handle
            .submit(move |rt| {
                tx.send(rt.schedules().live_count()).unwrap();
                stopper.shutdown();
            })
            .unwrap();
        handle
    });
    let local = tokio::task::LocalSet::new();
    local
        .run_until(driver.run_until(tokio::time::sleep(Duration::from_secs(10))))
        .await
        .unwrap();
    assert_eq!(
        rx.try_recv(),
        Ok(0),
        "the job ran before the driver stopped"
    );
    let handle = sender.join().unwrap();
    assert!(
        handle.submit(|_| {}).is_err(),
        "a stopped driver refuses work"
    );
}

#[tokio::test(start_paused = true)]
async fn call_returns_the_jobs_result() {
    let clock = ManualClock::new();
    let driver = TokioDriver::new(quiet(&clock)).unwrap();
    driver.runtime().verb("ring", |_| Ok(Value::Int(0)));
    let handle = driver.handle();
    let local = tokio::task::LocalSet::new();
    let asked = local.spawn_local(async move {
        let live = handle
            .call(|rt| {
                every(rt, "ring", 60.0);
                rt.schedules().live_count()
            })
            .await;
        handle.shutdown();
        live
    });
    local.run_until(driver.run()).await.unwrap();
    assert_eq!(asked.await.unwrap(), Ok(1));
}

#[tokio::test(start_paused = true)]
async fn shutdown_commits_the_stores_cadence_updates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("world.db");
    let clock = ManualClock::starting_at_unix_nanos(1_700_000_000_000_000_000);
    let builder = Runtime::builder()
        .manual_clock(clock.clone())
        .without_commands()
        .store_path(&path);
    let driver = TokioDriver::new(builder).unwrap();
    let rings = count_verb(driver.runtime(), "ring");
    every(driver.runtime(), "ring", 10.0);
    let rt = driver.runtime().clone();
    let local = tokio::task::LocalSet::new();
    local
        .run_until(driver.run_until(tokio::time::sleep(Duration::from_secs(35))))
        .await
        .unwrap();
    assert_eq!(rings.get(), 3);
    drop(rt);

    let reopened = Runtime::builder()
        .manual_clock(clock.clone())
        .without_commands()
        .store_path(&path)
        .build()
        .unwrap();
    let txn = reopened.schedules().begin(WORLD);
    let id = txn.schedules(None).unwrap()[0];
    assert_eq!(txn.schedule_info(id).unwrap().run_count, 3);
}

#[tokio::test(start_paused = true)]
async fn the_runtime_is_usable_from_same_thread_tasks_between_frames() {
    let clock = ManualClock::new();
    let driver = TokioDriver::new(quiet(&clock)).unwrap();
    let rings = count_verb(driver.runtime(), "ring");
    let (rt, handle) = (driver.runtime().clone(), driver.handle());
    let local = tokio::task::LocalSet::new();
    local.spawn_local(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        every(&rt, "ring", 2.0); // directly, between frames
        handle.wake().unwrap(); // the idle runtime re-arms for it now
    });
    local
        .run_until(driver.run_until(tokio::time::sleep(Duration::from_secs(12))))
        .await
        .unwrap();
    assert_eq!(rings.get(), 5, "fired at 3, 5, 7, 9 and 11 s");
}

#[tokio::test(start_paused = true)]
async fn a_burst_of_wakes_while_idle_does_not_delay_the_next_firing() {
    let clock = ManualClock::new();
    let driver = TokioDriver::new(quiet(&clock)).unwrap();
    let rings = count_verb(driver.runtime(), "ring");
    every(driver.runtime(), "ring", 3.0);
    let handle = driver.handle();
    let local = tokio::task::LocalSet::new();
    local.spawn_local(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        // Ten thousand wakes in one instant: far more than one per frame.
        for _ in 0..10_000 {
            handle.wake().unwrap();
            tokio::task::yield_now().await;
        }
    });
    local
        .run_until(driver.run_until(tokio::time::sleep(Duration::from_millis(3_100))))
        .await
        .unwrap();
    assert_eq!(rings.get(), 1, "the 3 s firing ran on time");
}

#[tokio::test(start_paused = true)]
async fn before_frame_and_on_frame_bracket_every_frame_that_ran() {
    let clock = ManualClock::new();
    let mut driver = TokioDriver::new(quiet(&clock)).unwrap();
    let rt = driver.runtime().clone();
    let _job = rt
        .scheduler()
        .every(Duration::from_millis(100), || {}, Priority::Normal)
        .unwrap();
    // (frames run when a step began, frames run when its frame ended)
    let seen = Rc::new(RefCell::new(Vec::<(u64, Option<u64>)>::new()));
    let (before, after) = (seen.clone(), seen.clone());
    driver.before_frame(move |rt| {
        before
            .borrow_mut()
            .push((rt.frame_loop().frames_run(), None));
    });
    driver.on_frame(move |rt| {
        let mut seen = after.borrow_mut();
        let last = seen.last_mut().expect("before_frame ran first");
        assert!(last.1.is_none(), "one on_frame per step at most");
        last.1 = Some(rt.frame_loop().frames_run());
    });
    let local = tokio::task::LocalSet::new();
    local
        .run_until(driver.run_until(tokio::time::sleep(Duration::from_secs(2))))
        .await
        .unwrap();
    let seen = seen.borrow();
    let ran: Vec<_> = seen
        .iter()
        .filter_map(|(b, a)| a.map(|a| (*b, a)))
        .collect();
    assert_eq!(ran.len() as u64, rt.stats().frames_run);
    assert!(
        ran.len() >= 19,
        "a 100 ms job runs about 20 frames in 2 s: {ran:?}"
    );
    assert!(ran.iter().all(|(b, a)| a == &(b + 1)), "{ran:?}");
    // Idle passes get a before_frame and no on_frame.
    assert!(seen.len() > ran.len(), "{seen:?}");
}

/// docs/runtime.md §5.16: the driver needs no `LocalSet` and no current-thread runtime — a
/// multi-thread runtime's `block_on` (what `#[tokio::main]` does) polls it on the calling thread,
/// and `Send` tasks on the workers reach it by handle. Real time (the paused clock is
/// current-thread only), bounded: the run ends after three calls or fails after 10 s.
#[test]
fn the_driver_runs_in_a_multi_thread_main_and_reaches_its_workers_by_handle() {
    let tokio_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let main_thread = std::thread::current().id();
    let clock = ManualClock::new();
    let (frames, worker_thread, call_threads) = tokio_rt.block_on(async {
        let driver = TokioDriver::new(quiet(&clock)).unwrap();
        let rt = driver.runtime().clone();
        let handle = driver.handle();
        let worker = tokio::spawn(async move {
            let mut threads = Vec::new();
            for _ in 0..3 {
                threads.push(handle.call(|_| std::thread::current().id()).await.unwrap());
            }
            handle.shutdown();
            (std::thread::current().id(), threads)
        });
        let bound = tokio::time::timeout(Duration::from_secs(10), driver.run());
        bound.await.expect("the driver stopped").unwrap();
        let (worker_thread, call_threads) = worker.await.unwrap();
        (rt.stats().frames, worker_thread, call_threads)
    });
    assert_ne!(worker_thread, main_thread, "the task ran on a worker");
    assert_eq!(
        call_threads,
        vec![main_thread; 3],
        "every call ran on the driver's thread"
    );
    assert!(frames >= 1, "the driver ran frames: {frames}");
}
