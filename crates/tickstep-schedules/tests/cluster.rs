//! Several engines (nodes) on one `PostgreSQL` database (docs/schedules.md §11.18–§11.20): ids
//! handed out by the database, claims, leases and fencing. Every test here is `PostgreSQL` only
//! by nature — a `SQLite` file serves one engine — so each name says `postgres_only`. (The
//! failover test with real processes is `failover.rs`.)

mod common;

use std::collections::BTreeSet;

use common::Host;
use common::stores::Store;
use tickstep_kernel::clock::ManualClock;
use tickstep_schedules::Options;

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
