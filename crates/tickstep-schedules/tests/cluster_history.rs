//! The cluster's history on `PostgreSQL` (docs/schedules.md §11.50): the migration that adds it
//! (fresh and in place), the events the claim, the lease renewal, a join and a clean leave write,
//! its bounds (a holdings sample a minute per node, a day kept), and `Inspector::cluster_history`
//! reading it back. `PostgreSQL` only by nature: a `SQLite` file serves one engine and keeps no
//! cluster history. Engines run on the `ManualClock`; claims and renewals run on their store
//! thread's real clock, so each wait for them is bounded and only its outcome is asserted.

mod common;

use std::time::{Duration, Instant};

use common::Host;
use common::stores::Store;
use tickstep_schedules::{ClusterEventKind, Inspector, Options};

/// Waits until `done` holds, ticking `h`, at most 10 s of real time; whether it held.
fn wait_until(h: &Host, mut done: impl FnMut() -> bool) -> bool {
    let give_up = Instant::now() + Duration::from_secs(10);
    while Instant::now() < give_up {
        h.tick();
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// The nodes in `tickstep_nodes` whose lease runs longer than a minute (a test's long-lease
/// node) and the others.
fn long_and_short_nodes(store: &Store) -> (Vec<i64>, Vec<i64>) {
    let rows = store.pairs(
        "SELECT node, (lease_until > now() + interval '1 minute')::int::bigint FROM tickstep_nodes",
    );
    let long = rows.iter().filter(|r| r.1 == 1).map(|r| r.0).collect();
    let short = rows.iter().filter(|r| r.1 == 0).map(|r| r.0).collect();
    (long, short)
}

#[test]
fn postgres_only_a_fresh_database_gets_the_cluster_history_and_an_older_one_upgrades_in_place() {
    let url = pg_or_skip!("history_migration");
    let store = Store::postgres(url);
    let a = Host::on(&store);
    let id = a.every(60.0, Options::new());
    a.engine.flush().unwrap();
    assert_eq!(
        store.count(
            "SELECT count(*) FROM schema_migrations WHERE version = 15 \
             AND description LIKE 'the cluster''s history%'"
        ),
        1,
        "a fresh database records version 15 with its description"
    );
    assert_eq!(
        store.count("SELECT count(*) FROM tickstep_cluster_history WHERE kind = 'joined'"),
        1
    );
    drop(a);

    // What a build of schema version 14 left: no history table, version 14 the newest.
    store.execute(
        "DROP TABLE tickstep_cluster_history; \
         DELETE FROM schema_migrations WHERE version = 15",
    );
    let old = Inspector::open(store.path()).unwrap();
    let history = old
        .cluster_history(Duration::from_secs(3600))
        .unwrap()
        .expect("a PostgreSQL store answers");
    assert!(!history.kept && history.events.is_empty(), "{history:?}");
    drop(old);

    // The next engine upgrades it in place: the schedule is still there, the history starts.
    let b = Host::on(&store);
    assert_eq!(b.engine.live_count(), 1);
    assert!(b.valid(id));
    assert_eq!(
        store.count("SELECT max(version) FROM schema_migrations"),
        15
    );
    let history = Inspector::open(store.path())
        .unwrap()
        .cluster_history(Duration::from_secs(3600))
        .unwrap()
        .unwrap();
    assert!(history.kept, "{history:?}");
    let kinds: Vec<_> = history.events.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds[..2],
        [ClusterEventKind::Joined, ClusterEventKind::Claimed],
        "{history:?}"
    );
    assert_eq!(history.events[1].schedules, 1, "{history:?}");
}

#[test]
fn postgres_only_a_join_a_takeover_a_sample_and_a_clean_leave_are_recorded_with_what_they_moved() {
    let url = pg_or_skip!("history_events");
    let store = Store::postgres(url);
    // A renews rarely, so the test can end its lease; B claims (and samples) often.
    let a = Host::with_lease(&store, Duration::from_secs(600));
    let ids: Vec<_> = (0..3).map(|_| a.every(1.0, Options::new())).collect();
    a.engine.flush().unwrap();
    let b = Host::with_lease(&store, Duration::from_millis(90));
    b.advance(2.0); // due within B's lookahead once claimable
    let (long, short) = long_and_short_nodes(&store);
    let (node_a, node_b) = (long[0], short[0]);
    store.lapse_long_leases();
    assert!(
        wait_until(&b, || b.engine.live_count() == ids.len()),
        "B took A's schedules over once A's lease ran out"
    );
    // B's renewals sample what it holds: once the sample shows the three, the takeover's
    // history is complete.
    assert!(wait_until(&b, || {
        store.count(&format!(
            "SELECT count(*) FROM tickstep_cluster_history \
             WHERE node = {node_b} AND kind = 'held'"
        )) >= 1
    }));
    std::mem::forget(a); // A is "dead": it never hands anything back
    drop(b); // B leaves cleanly, handing the three back
    let c = Host::with_lease(&store, Duration::from_secs(600));
    assert_eq!(c.engine.live_count(), 3, "C claimed what B handed back");

    let history = Inspector::open(store.path())
        .unwrap()
        .cluster_history(Duration::from_secs(3600))
        .unwrap()
        .unwrap();
    let of = |node: i64| -> Vec<(ClusterEventKind, u64)> {
        history
            .events
            .iter()
            .filter(|e| e.node == node)
            .map(|e| (e.kind, e.schedules))
            .collect()
    };
    // A joined and held its own creations (a creation is no claim); nothing else of A's.
    assert_eq!(of(node_a), [(ClusterEventKind::Joined, 0)], "{history:?}");
    let b_events = of(node_b);
    assert_eq!(b_events[0], (ClusterEventKind::Joined, 0), "{history:?}");
    assert!(
        b_events.contains(&(ClusterEventKind::TookOver { from: node_a }, 3)),
        "{history:?}"
    );
    assert_eq!(
        b_events.last(),
        Some(&(ClusterEventKind::Left, 3)),
        "{history:?}"
    );
    let held: Vec<u64> = b_events
        .iter()
        .filter(|e| e.0 == ClusterEventKind::Held)
        .map(|e| e.1)
        .collect();
    assert_eq!(held.len(), 1, "one sample a minute at most: {history:?}");
    let node_c = history.events.last().unwrap().node;
    assert_eq!(
        of(node_c),
        [
            (ClusterEventKind::Joined, 0),
            (ClusterEventKind::Claimed, 3)
        ],
        "{history:?}"
    );
    // Oldest first, each takeover from, to, how many and when; B's holdings end at 0.
    assert!(history.events.windows(2).all(|w| w[0].at <= w[1].at));
    let takeovers: Vec<_> = history.takeovers().collect();
    assert_eq!(takeovers.len(), 1, "{history:?}");
    assert_eq!(
        (takeovers[0].from, takeovers[0].to, takeovers[0].schedules),
        (node_a, node_b, 3)
    );
    let b_holdings = history
        .holdings()
        .into_iter()
        .find(|h| h.node == node_b)
        .unwrap();
    assert_eq!(b_holdings.points.last().map(|p| p.1), Some(0));
    assert!(b_holdings.left.is_some());
    assert!(b_holdings.points.iter().any(|p| p.1 == 3), "{b_holdings:?}");
    drop(c);
}

#[test]
fn postgres_only_the_renewal_prunes_events_older_than_a_day_and_samples_once_a_minute() {
    let url = pg_or_skip!("history_pruning");
    let store = Store::postgres(url);
    drop(Host::on(&store)); // migrated
    // Events of an earlier day and of this one, backdated by the database's clock.
    let day_ns: i64 = 24 * 3600 * 1_000_000_000;
    let now = "(extract(epoch FROM clock_timestamp()) * 1e9)::bigint";
    store.execute(&format!(
        "INSERT INTO tickstep_cluster_history (at_ns, node, kind, schedules) \
         SELECT {now} - {day_ns} - g::bigint * 1000000000, 1, 'held', 7 FROM generate_series(1, 500) g; \
         INSERT INTO tickstep_cluster_history (at_ns, node, kind, schedules) \
         VALUES ({now} - {day_ns} + 3600000000000, 1, 'held', 7)"
    ));
    let old = "SELECT count(*) FROM tickstep_cluster_history \
               WHERE node = 1 AND at_ns < (extract(epoch FROM clock_timestamp()) * 1e9)::bigint \
                                            - 86400000000000";
    assert_eq!(store.count(old), 500);
    let b = Host::with_lease(&store, Duration::from_millis(90));
    assert!(
        wait_until(&b, || store.count(old) == 0),
        "the first renewal that sampled pruned the day-old events"
    );
    assert_eq!(
        store.count("SELECT count(*) FROM tickstep_cluster_history WHERE node = 1"),
        1,
        "the event of 23 hours ago stays"
    );
    // Several more renewals (each moves the lease's end) sample nothing more within the minute.
    let lease = "SELECT (extract(epoch FROM lease_until) * 1e6)::bigint FROM tickstep_nodes";
    let mut seen = store.count(lease);
    let mut renewals = 0;
    assert!(wait_until(&b, || {
        let now = store.count(lease);
        if now != seen {
            renewals += 1;
            seen = now;
        }
        renewals >= 5
    }));
    assert_eq!(
        store.count("SELECT count(*) FROM tickstep_cluster_history WHERE kind = 'held'"),
        2,
        "B's one sample beside the event of 23 hours ago"
    );
}

#[test]
fn postgres_only_a_window_reads_only_its_own_events_and_sqlite_has_none() {
    let url = pg_or_skip!("history_window");
    let store = Store::postgres(url);
    drop(Host::on(&store));
    let now = "(extract(epoch FROM clock_timestamp()) * 1e9)::bigint";
    store.execute(&format!(
        "INSERT INTO tickstep_cluster_history (at_ns, node, kind, schedules) \
         VALUES ({now} - 7200000000000, 5, 'held', 2), ({now} - 60000000000, 5, 'held', 4)"
    ));
    let inspector = Inspector::open(store.path()).unwrap();
    let hour = inspector
        .cluster_history(Duration::from_secs(3600))
        .unwrap()
        .unwrap();
    let fives: Vec<u64> = hour
        .events
        .iter()
        .filter(|e| e.node == 5)
        .map(|e| e.schedules)
        .collect();
    assert_eq!(fives, [4], "{hour:?}");
    let day = inspector
        .cluster_history(Duration::from_secs(48 * 3600))
        .unwrap()
        .unwrap();
    assert_eq!(
        day.events.iter().filter(|e| e.node == 5).count(),
        2,
        "{day:?}"
    );
    assert!(!day.truncated);

    let sqlite = Store::sqlite();
    drop(Host::on(&sqlite));
    let file = Inspector::open(sqlite.path()).unwrap();
    assert_eq!(
        file.cluster_history(Duration::from_secs(3600)).unwrap(),
        None
    );
}
