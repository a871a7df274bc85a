//! Several engines (nodes) on one `PostgreSQL` database (docs/schedules.md §11.18, §11.25–§11.27): ids
//! handed out by the database, claims, leases and fencing. Every test here is `PostgreSQL` only
//! by nature — a `SQLite` file serves one engine — so each name says `postgres_only`. (The
//! failover test with real processes is `failover.rs`.)

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::Host;
use common::stores::Store;
use tickstep_kernel::clock::ManualClock;
use tickstep_schedules::{FaultKind, Options};

#[test]
fn postgres_only_two_engines_creating_interleaved_get_disjoint_ids() {
    let url = pg_or_skip!("disjoint_ids");
    let store = Store::postgres(url);
    let a = Host::open(store.path(), ManualClock::new());
    let b = Host::open(store.path(), ManualClock::new());
    let mut seen = BTreeSet::new();
    let mut per_node = [Vec::new(), Vec::new()];
    // More than one block each (1,024 ids), so both nodes come back for a second block.
    for i in 0..2_200 {
        let (node, h) = if i % 2 == 0 { (0, &a) } else { (1, &b) };
        let id = h.at(60.0, Options::new().persist(false)).get();
        assert!(seen.insert(id), "id {id} handed out twice");
        per_node[node].push(id);
    }
    for ids in &per_node {
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "each node's ids rise");
    }
    drop((a, b));
    // A restart never hands out an id either node used.
    let c = Host::open(store.path(), ManualClock::new());
    let id = c.at(60.0, Options::new()).get();
    assert!(!seen.contains(&id) && id > *seen.iter().max().unwrap());
}

/// Ticks `h` until `done` holds, at most 10 s of real time (claims run on the store thread every
/// third of a lease, on the real clock): the outcome is asserted, never how long it took.
fn tick_until(h: &Host, mut done: impl FnMut(&Host) -> bool) -> bool {
    let give_up = Instant::now() + Duration::from_secs(10);
    while Instant::now() < give_up {
        h.tick();
        if done(h) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

#[test]
fn postgres_only_a_node_past_its_lease_loses_its_schedules_to_another_and_its_late_writes_are_refused()
 {
    let url = pg_or_skip!("takeover");
    let store = Store::postgres(url);
    // A renews its lease rarely, so the test can end it from outside; B claims often.
    let a = Host::with_lease(&store, Duration::from_secs(600));
    let b = Host::with_lease(&store, Duration::from_millis(90));
    let id = a.every(1.0, Options::new());
    assert_eq!(a.after(1.0).started, 1);
    a.finish_all();
    a.engine.flush().unwrap();
    assert_eq!(
        store.count("SELECT fence FROM schedules"),
        1,
        "held since creation"
    );
    b.advance(2.0);
    // A live holder keeps it: B claims nothing while A's lease runs.
    b.tick();
    assert_eq!(b.engine.live_count(), 0, "B holds nothing");
    // A's lease runs out (as if A were paused past it).
    store.lapse_long_leases();
    assert!(
        tick_until(&b, |b| b.engine.live_count() == 1),
        "B took the schedule over once A's lease ran out"
    );
    assert_eq!(b.engine.cluster_stats().claimed, 1);
    assert_eq!(store.count("SELECT fence FROM schedules"), 2);
    // B fired (in the tick that took it over) the point A had not fired yet, exactly where A
    // left the cadence.
    assert_eq!(b.fired(), 1);
    assert!(common::approx(b.nominal(0), a.nominal(0) + 1.0));
    b.finish_all();
    b.engine.flush().unwrap();
    // A wakes up and fires it too, in memory: its write is refused, counted, and A drops it.
    assert_eq!(a.after(1.0).started, 1);
    a.finish_all();
    a.engine.flush().unwrap();
    let stats = a.engine.cluster_stats();
    assert!(stats.refused_writes >= 1, "{stats:?}");
    assert_eq!(stats.taken_over, 1);
    a.tick();
    assert_eq!(a.engine.live_count(), 0, "A dropped the schedule B holds");
    assert!(a.valid(id), "and still sees it, read from B's row");
    assert_eq!(
        store.count("SELECT run_count FROM schedules"),
        2,
        "A's late write never landed: the row has A's first firing and B's"
    );
    assert_eq!(b.info(id).run_count, 2);
}

#[test]
fn postgres_only_a_node_closed_cleanly_hands_its_schedules_back_at_once() {
    let url = pg_or_skip!("release");
    let store = Store::postgres(url);
    let a = Host::with_lease(&store, Duration::from_secs(600));
    let b = Host::with_lease(&store, Duration::from_millis(90));
    let ids: Vec<_> = (0..5).map(|_| a.every(1.0, Options::new())).collect();
    drop(a);
    assert_eq!(
        store.count("SELECT COUNT(*) FROM schedules WHERE owner_node IS NULL"),
        5
    );
    b.advance(1.0);
    assert!(
        tick_until(&b, |b| b.engine.live_count() == ids.len()),
        "B claimed every schedule A gave back, long before A's 10-minute lease"
    );
    assert_eq!(b.fired(), 5, "and fired each in the tick that took it");
}

#[test]
fn postgres_only_an_operator_stop_made_anywhere_reaches_the_node_that_holds_the_schedule() {
    let url = pg_or_skip!("stop_anywhere");
    let store = Store::postgres(url.clone());
    let a = Host::with_lease(&store, Duration::from_secs(600));
    let b = Host::with_lease(&store, Duration::from_secs(600));
    let on_a = a.every(1.0, Options::new());
    let on_b = b.every(60.0, Options::new());
    // A node that does not hold a schedule reads it from the database (docs/schedules.md §11.30).
    let seen_from_a = a.info(on_b);
    assert!(common::approx(seen_from_a.next_run, b.info(on_b).next_run));
    assert!(a.valid(on_b));
    assert!(tickstep_schedules::Inspector::stop(&url, on_b).unwrap());
    // The engine asks its store for stops once per `Config::tick` of its own clock.
    assert!(
        tick_until(&b, |b| {
            b.advance(0.01);
            b.engine.take_operator_stops() == vec![on_b]
        }),
        "the holder dropped the schedule once its store thread read the note"
    );
    assert!(!b.valid(on_b));
    assert!(a.valid(on_a), "the other node's schedule is untouched");
    a.advance(1.0);
    b.advance(60.0);
    assert_eq!(a.tick().started, 1);
    b.tick();
    assert_eq!(b.fired(), 0, "the stopped schedule never fired");
    assert_eq!(store.count("SELECT COUNT(*) FROM schedules"), 1);
}

#[test]
fn postgres_only_a_transaction_on_any_node_stops_a_schedule_another_node_holds() {
    let url = pg_or_skip!("txn_stop_anywhere");
    let store = Store::postgres(url);
    let a = Host::with_lease(&store, Duration::from_secs(600));
    let b = Host::with_lease(&store, Duration::from_secs(600));
    let on_b = b.every(60.0, Options::new());
    let mut txn = a.engine.begin(a.prog);
    assert!(
        txn.schedule_stop(on_b).unwrap(),
        "the owner stops it from node A"
    );
    txn.commit().unwrap();
    assert_eq!(store.count("SELECT COUNT(*) FROM schedules"), 0);
    assert!(!a.valid(on_b));
    assert!(
        tick_until(&b, |b| {
            b.advance(0.01);
            b.engine.live_count() == 0
        }),
        "node B, which held it, dropped it once its store thread read the note"
    );
    b.advance(60.0);
    b.tick();
    assert_eq!(b.fired(), 0, "the stopped schedule never fired");
}

#[test]
fn postgres_only_a_standby_with_nothing_due_claims_on_its_own_wakes_its_host_and_settles_the_firing_the_row_brings()
 {
    let url = pg_or_skip!("standby_takeover");
    let store = Store::postgres(url);
    let a = Host::with_lease(&store, Duration::from_secs(600));
    let b = Host::with_lease(&store, Duration::from_millis(90));
    let (tell, news) = std::sync::mpsc::channel::<()>();
    let tell = std::sync::Mutex::new(tell);
    b.engine.set_store_waker(std::sync::Arc::new(move || {
        let _ = tell.lock().unwrap().send(());
    }));
    // A fires the first point and dies with it running: the row says so.
    let id = a.every(1.0, Options::new().max_faults(1));
    assert_eq!(a.after(1.0).started, 1);
    a.engine.flush().unwrap();
    let served = a.nominal(0);
    // B's engine looks once (its clock just before A's next point) and then never ticks again
    // on its own: nothing is due on it.
    b.advance(1.5);
    assert_eq!(b.tick().started, 0);
    assert_eq!(b.engine.live_count(), 0, "A's lease runs: B holds nothing");
    while news.try_recv().is_ok() {}
    store.lapse_long_leases();
    // docs/schedules.md §11.40: B's store thread claims on its own schedule and wakes the host.
    news.recv_timeout(Duration::from_secs(10))
        .expect("B's store claimed the row and woke its host, with B's engine idle");
    assert_eq!(b.engine.cluster_stats().claimed, 1);
    b.tick();
    assert_eq!(b.engine.live_count(), 1);
    // docs/schedules.md §11.39: the firing that came with the row is settled at once.
    let info = b.info(id);
    assert_eq!(info.running_task, None);
    let fault = info.last_fault.expect("the taken-over firing is recorded");
    assert_eq!(fault.kind, FaultKind::TakenOver);
    let text = fault.value.to_string();
    assert!(
        text.contains("taken over from node") && text.contains("whose lease ran out"),
        "{text}"
    );
    assert_eq!(info.fault_count, 1);
    assert_eq!(
        (info.consecutive_faults, info.retired),
        (0, false),
        "docs/schedules.md §13.36: a takeover does not count toward max_faults (here 1)"
    );
    // The next point fires: it is no overlap behind a firing nobody will settle.
    assert_eq!(b.after(0.5).started, 1);
    assert!(common::approx(b.nominal(0), served + 1.0));
    assert_eq!(b.info(id).overlap_count, 0);
    b.finish_all();
    b.engine.flush().unwrap();
    assert_eq!(store.count("SELECT run_count FROM schedules"), 2);
}

/// docs/schedules.md §11.57: with `hand_back_taken_over` on, the firings a claimed row brings
/// are this host's to decide on — here run again — instead of settled as taken over; the row
/// is rewritten with the claiming engine's run ids.
#[test]
fn postgres_only_a_node_that_hands_back_taken_over_firings_runs_them_again_and_each_settles_once() {
    let url = pg_or_skip!("hand_back");
    let store = Store::postgres(url);
    let a = Host::with_lease(&store, Duration::from_secs(600));
    let mut config = common::config();
    config.lease = Duration::from_millis(90);
    config.hand_back_taken_over = true;
    let b = Host::on_with_config(&store, config);
    // A hands out a few run ids first, so its ids and B's differ.
    for _ in 0..5 {
        a.at(0.5, Options::new().persist(false));
    }
    assert_eq!(a.after(0.5).started, 5);
    a.finish_all();
    // A starts a one-shot's and a recurring schedule's firings and dies with both running.
    let once = a.at(1.0, Options::new());
    let every = a.every(1.0, Options::new());
    assert_eq!(a.after(1.0).started, 2);
    a.engine.flush().unwrap();
    let a_runs: Vec<_> = a.started()[5..].iter().map(|(run, _)| *run).collect();
    let served: Vec<_> = a.started()[5..]
        .iter()
        .map(|(_, f)| (f.schedule, f.nominal_unix_nanos))
        .collect();
    // B's clock just before the recurring schedule's next point (t0 + 2.5): a claim looks one
    // lease ahead (docs/schedules.md §11.40).
    b.advance(2.45);
    store.lapse_long_leases();
    b.take_over(2);
    let mut handed = b.engine.interrupted();
    handed.sort_by_key(|f| f.schedule);
    let got: Vec<_> = handed
        .iter()
        .map(|f| (f.schedule, f.nominal_unix_nanos))
        .collect();
    assert_eq!(got, served, "each running point is handed to B's host");
    for f in &handed {
        let info = b.info(f.schedule);
        assert_eq!(
            info.running_task,
            Some(f.run),
            "still the schedule's running firing"
        );
        assert_eq!(info.fault_count, 0, "not settled as taken over");
    }
    assert_eq!(
        b.fired(),
        0,
        "the recurring one's next point waits behind it (overlap)"
    );
    // The row now names B's run ids, so a crash of B hands back what B was told.
    b.engine.flush().unwrap();
    let rows = store.texts("SELECT id, running FROM schedules ORDER BY id");
    for (f, (id, running)) in handed.iter().zip(&rows) {
        assert_eq!(*id as u64, f.schedule.get());
        assert!(running.starts_with(&format!("[[{},", f.run.0)), "{running}");
    }
    let a_runs: Vec<_> = a_runs.iter().map(|r| r.0).collect();
    assert!(
        handed.iter().all(|f| !a_runs.contains(&f.run.0)),
        "fresh ids of B's, not A's: {handed:?} against {a_runs:?}"
    );
    for f in &handed {
        assert!(b.engine.rerun(f.run));
    }
    let again: Vec<_> = b
        .started()
        .iter()
        .map(|(run, f)| (*run, f.schedule, f.nominal_unix_nanos))
        .collect();
    let want: Vec<_> = handed
        .iter()
        .map(|f| (f.run, f.schedule, f.nominal_unix_nanos))
        .collect();
    assert_eq!(again, want, "each point runs again on B, once");
    b.finish_all();
    let info = b.info(once);
    assert_eq!(
        (
            info.retire_reason,
            info.fault_count,
            info.last_fault.is_none()
        ),
        (Some(tickstep_schedules::RetireReason::Completed), 0, true),
        "the one-shot completed as its rerun returned"
    );
    assert_eq!(b.info(every).fault_count, 0);
    assert_eq!(
        b.after(1.0).started,
        1,
        "and the recurring one fires its next point"
    );
}

#[test]
fn postgres_only_a_node_opening_after_the_holder_died_settles_the_firing_it_brings_as_taken_over() {
    let url = pg_or_skip!("takeover_at_open");
    let store = Store::postgres(url);
    let a = Host::with_lease(&store, Duration::from_secs(600));
    let id = a.every(1.0, Options::new());
    assert_eq!(a.after(1.0).started, 1);
    a.engine.flush().unwrap();
    // A dies with the firing running (no clean close hands the row back), and its lease runs
    // out before B opens.
    std::mem::forget(a);
    store.execute("UPDATE tickstep_nodes SET lease_until = now() - interval '1 second'");
    let b = Host::with_lease(&store, Duration::from_secs(600));
    assert!(
        b.engine.interrupted().is_empty(),
        "another node's firing is not handed to this host as its own (docs/schedules.md §11.5)"
    );
    let info = b.info(id);
    assert_eq!(info.running_task, None);
    assert_eq!(info.last_fault.map(|f| f.kind), Some(FaultKind::TakenOver));
    assert_eq!(b.after(2.0).started, 1, "and the next point fires");
}

/// A node whose lease ran out while it lived keeps its schedules in memory until a write tells
/// it otherwise. When the node that took one over has already fired it and retired it, the row
/// is gone: the late node's cadence update matches nothing, and the firing it carries must not
/// start (docs/schedules.md §11.55). Before, the update counted as written and the job ran twice
/// (found by the peers bench's W2, docs/peers.md §4.4).
#[test]
fn postgres_only_a_firing_whose_row_another_node_retired_meanwhile_never_starts() {
    let url = pg_or_skip!("gone_row_never_starts");
    let store = Store::postgres(url);
    // The late node: real time (a start waits for its write, docs/schedules.md §11.42) and a
    // lease long enough that only the test ends it.
    let late = Host::on_real_time_with_lease(&store, Duration::from_secs(3_600));
    let job = late.at(10.0, Options::new());
    late.engine.flush().unwrap();
    store.lapse_long_leases();
    // The other node claims the row as it opens, fires the job and retires it.
    let other = Host::on(&store);
    assert!(other.valid(job), "the other node took the job over");
    other.after(10.0);
    assert_eq!(other.fired(), 1);
    other.finish_all();
    other.tick();
    other.engine.flush().unwrap();
    assert_eq!(store.count("SELECT COUNT(*) FROM schedules"), 0, "retired");
    // The late node reaches the job's deadline with its own copy of it.
    late.advance(10.0);
    late.tick();
    late.engine.wait_for_writes().unwrap();
    late.tick();
    late.tick();
    assert_eq!(
        late.fired(),
        0,
        "the job ran once, on the node that held it"
    );
    assert!(!late.valid(job), "and the late node dropped it");
}

/// A node whose store thread stalls past its lease (starved, or paused) has its schedule taken
/// over; the other node fires a point and hands the row back; the first node's engine, not yet
/// told, plans the same point from its stale copy; then its store thread wakes and claims the
/// row back before it writes that plan. The write carries the fence of the new claim, so before
/// docs/schedules.md §11.56 it landed: the point was committed twice, once by each node (found
/// by `failover.rs` under heavy load). A write planned before the engine took the claim must
/// not land (docs/schedules.md §11.56).
#[test]
fn postgres_only_a_node_that_claims_back_a_row_it_lost_never_writes_what_it_planned_before() {
    let url = pg_or_skip!("claimed_back");
    let store = Store::postgres(url.clone());
    // Claims look one lease ahead: two seconds covers the schedule's next point.
    let a = Host::on_real_time_with_lease(&store, Duration::from_secs(2));
    let id = a.every(1.0, Options::new());
    a.engine.flush().unwrap();
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client.batch_execute(common::pg::COMMITTED_LOG).unwrap();
    let node_a: i64 = client
        .query_one(
            "SELECT owner_node FROM tickstep_schedules WHERE id = $1",
            &[&i64::try_from(id.get()).unwrap()],
        )
        .unwrap()
        .get(0);
    // A's store thread stalls: the test holds A's lease row, so A's next renewal waits on it.
    let mut holder = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let mut stall = holder.transaction().unwrap();
    stall
        .execute(
            "SELECT 1 FROM tickstep_nodes WHERE node = $1 FOR UPDATE",
            &[&node_a],
        )
        .unwrap();
    let waited_for = |client: &mut postgres::Client, sql: &str| {
        let give_up = Instant::now() + Duration::from_secs(10);
        while !client.query_one(sql, &[]).unwrap().get::<_, bool>(0) {
            assert!(Instant::now() < give_up, "waited 10 s for: {sql}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    waited_for(
        &mut client,
        "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted)",
    );
    waited_for(
        &mut client,
        &format!(
            "SELECT lease_until < clock_timestamp() FROM tickstep_nodes WHERE node = {node_a}"
        ),
    );
    // B takes the row over as it opens, fires the schedule's first point, and closes cleanly,
    // handing the row back.
    let b = Host::with_lease(&store, Duration::from_secs(600));
    assert!(b.valid(id));
    b.after(1.0);
    assert_eq!(b.fired(), 1, "B fired the first point");
    b.finish_all();
    b.engine.flush().unwrap();
    drop(b);
    // A's engine reaches the same point with its own copy and plans it; its write waits behind
    // the stalled thread.
    assert_eq!(a.after(1.0).started, 0, "a start waits for its write");
    // A's thread wakes: it renews, claims the row back, then writes what the engine queued.
    stall.rollback().unwrap();
    a.engine.flush().unwrap();
    for _ in 0..3 {
        a.tick();
        a.engine.flush().unwrap();
    }
    let twice: Vec<(i64, i64)> = client
        .query(
            "SELECT point, COUNT(*) FROM firing_log GROUP BY point HAVING COUNT(*) > 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(twice, vec![], "a point committed twice: (point, times)");
    assert_eq!(a.fired(), 0, "A never started the point B fired");
    assert_eq!(a.engine.live_count(), 1, "A holds the row it claimed back");
    assert!(
        a.engine.cluster_stats().refused_writes >= 1,
        "A's stale write was refused"
    );
}
