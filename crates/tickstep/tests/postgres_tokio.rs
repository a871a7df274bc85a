//! The runtime on `PostgreSQL` inside tokio, the way a server runs it (docs/runtime.md §6.1,
//! docs/schedules.md §11.38): the tokio driver is built on a `postgres://` URL from a task of a
//! current-thread tokio runtime. The synchronous client used to be called on that thread and
//! panicked ("Cannot start a runtime from within a runtime"); the store's connection now lives
//! on its own thread. Real server, real clock: each test polls for its outcome with a deadline
//! and asserts the outcome, never a duration.
#![cfg(all(feature = "tokio", feature = "postgres"))]

#[path = "../../tickstep-schedules/tests/common/pg.rs"]
mod pg;
/// Where `pg_or_skip!` looks for the server helper.
mod common {
    pub(crate) use super::pg;
}

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use tickstep::schedules::{ObjId, Options, Value};
use tickstep::{Runtime, TokioDriver};

const WORLD: ObjId = ObjId(1);
/// How long a test waits for its outcome before it fails.
const GIVE_UP: Duration = Duration::from_secs(20);

/// Completes once `done` holds, or after [`GIVE_UP`].
async fn until(done: impl Fn() -> bool) {
    let give_up = tokio::time::Instant::now() + GIVE_UP;
    while !done() && tokio::time::Instant::now() < give_up {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Runs `test` as `#[tokio::test]` would — a current-thread runtime, inside a `LocalSet` as the
/// driver needs — after the helper has made the test's database (the helper's own client is
/// the synchronous one, which must not run inside tokio).
fn in_tokio(test: impl std::future::Future<Output = ()>) {
    let threads = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tokio::task::LocalSet::new().block_on(&threads, test);
}

/// A driver on the database at `url`, built here (inside tokio, as a server builds it), with a
/// verb "ring" that counts its firings.
fn ringing_driver(url: &str) -> (TokioDriver, Rc<Cell<u32>>) {
    let builder = Runtime::builder()
        .store_path(url)
        .without_commands()
        .diagnostics(false);
    let driver = TokioDriver::new(builder).expect("opens inside tokio, no panic");
    let rings = Rc::new(Cell::new(0_u32));
    let count = Rc::clone(&rings);
    driver.runtime().verb("ring", move |_| {
        count.set(count.get() + 1);
        Ok(Value::Int(0))
    });
    (driver, rings)
}

/// Runs `driver` until `rings` reached three (bounded by [`GIVE_UP`]).
async fn run_until_three(driver: TokioDriver, rings: &Rc<Cell<u32>>) {
    let seen = Rc::clone(rings);
    driver
        .run_until(until(move || seen.get() >= 3))
        .await
        .unwrap();
    assert!(rings.get() >= 3, "fired {} times", rings.get());
}

#[test]
fn a_tokio_driver_built_inside_tokio_on_a_postgres_url_opens_and_fires() {
    let url = pg_or_skip!("tokio_open");
    in_tokio(async move {
        let (driver, rings) = ringing_driver(&url);
        let mut txn = driver.runtime().schedules().begin(WORLD);
        let id = txn
            .schedule_every(WORLD, "ring", 0.05, vec![], Options::new())
            .unwrap();
        txn.commit().unwrap();
        let runtime = Rc::clone(driver.runtime());
        run_until_three(driver, &rings).await;
        let info = runtime.schedules().begin(WORLD).schedule_info(id).unwrap();
        assert!(info.run_count >= 3);
    });
}

#[test]
fn a_commit_awaited_from_a_tokio_task_lands_and_its_schedule_fires() {
    let url = pg_or_skip!("tokio_commit");
    in_tokio(async move {
        let (driver, rings) = ringing_driver(&url);
        let (runtime, handle) = (Rc::clone(driver.runtime()), driver.handle());
        // A connection task's way to create a schedule: the thread keeps running frames and
        // other tasks while the server commits (docs/runtime.md §6.4).
        let task = tokio::task::spawn_local(async move {
            let mut txn = runtime.schedules().begin(WORLD);
            let id = txn
                .schedule_every(WORLD, "ring", 0.05, vec![], Options::new())
                .unwrap();
            txn.commit_async().await.unwrap();
            handle.wake().unwrap();
            id
        });
        let runtime = Rc::clone(driver.runtime());
        run_until_three(driver, &rings).await;
        let id = task.await.unwrap();
        assert!(runtime.schedules().begin(WORLD).schedule_valid(id));
    });
}
