//! `Txn::commit_async` (docs/schedules.md §11.41): the commit handed to the store at once, the
//! transaction applied in memory only when the store answers, and the engine free to tick in
//! between. On `PostgreSQL` the answer comes from the store's thread; on `SQLite` it is ready at
//! the first poll.

mod common;

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use common::Host;
use common::stores::Store;
use tickstep_schedules::Options;

/// Wakes the thread that polls.
struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Polls `future` to completion on this thread, parking between polls (a minimal executor:
/// the crate's future needs none in particular).
fn block_on<F: Future>(future: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::park();
    }
}

fn applies_nothing_until_the_store_answers_then_everything(store: &Store) {
    let h = Host::on(store);
    let old = h.every(60.0, Options::new());
    let mut txn = h.engine.begin(h.prog);
    let new = txn
        .schedule_every(h.room, "tick", 30.0, vec![], Options::new())
        .unwrap();
    assert!(txn.schedule_stop(old).unwrap());
    let commit = txn.commit_async();
    // What this engine holds (another node's view reads the row, which may already be there).
    let listed = || h.engine.begin(h.wiz).schedules(None).unwrap();
    assert_eq!(
        listed(),
        vec![old],
        "nothing is applied before the commit completes"
    );
    block_on(commit).unwrap();
    assert_eq!(listed(), vec![new]);
    assert!(!h.valid(old));
    h.engine.flush().unwrap();
    assert_eq!(store.count("SELECT COUNT(*) FROM schedules"), 1);
}

#[test]
fn an_awaited_commit_applies_nothing_until_it_completes_then_everything_sqlite() {
    applies_nothing_until_the_store_answers_then_everything(&Store::sqlite());
}

#[test]
fn an_awaited_commit_applies_nothing_until_it_completes_then_everything_postgres() {
    let url = pg_or_skip!("async_commit");
    applies_nothing_until_the_store_answers_then_everything(&Store::postgres(url));
}

#[test]
fn postgres_only_a_schedule_fired_while_its_awaited_stop_is_in_flight_is_stopped_not_taken_over() {
    let url = pg_or_skip!("async_stop");
    let store = Store::postgres(url);
    let h = Host::on(&store);
    let id = h.every(1.0, Options::new());
    let mut txn = h.engine.begin(h.prog);
    assert!(txn.schedule_stop(id).unwrap());
    let commit = txn.commit_async();
    // The engine ticks before the commit completes: the schedule is still live here, fires,
    // and its cadence update is queued behind the stop.
    assert_eq!(h.after(1.0).started, 1);
    h.finish_all();
    block_on(commit).unwrap();
    h.engine.flush().unwrap();
    assert!(!h.valid(id));
    assert_eq!(store.count("SELECT COUNT(*) FROM schedules"), 0);
    let stats = h.engine.cluster_stats();
    assert_eq!(
        (stats.refused_writes, stats.taken_over),
        (0, 0),
        "the late update of a schedule this node stopped is no takeover"
    );
}
