//! A page of a store's list, filtered, ordered and paged in the store (docs/schedules.md §9.17),
//! on both stores: every filter and order against the same question asked of every whole row
//! (`Inspector::list`, each row's own `status()`), page by page, so the two agree row for row;
//! each state of docs/schedules.md §9.13 decided in SQL as the engine decides it; the most
//! recent runs and misses first and the last fault's kind (docs/schedules.md §9.19); bad input
//! refused by name.

mod common;

use common::Host;
use tickstep_schedules::{
    Error, FaultKind, Inspector, ListOrder, ListQuery, ObjId, Options, Overlap, ScheduleId,
    ScheduleKind, ScheduleStatus, StoredSchedule, Value,
};

const ORDERS: [ListOrder; 9] = [
    ListOrder::Id,
    ListOrder::Owner,
    ListOrder::Verb,
    ListOrder::Kind,
    ListOrder::State,
    ListOrder::Next,
    ListOrder::Key,
    ListOrder::LastRun,
    ListOrder::LastMiss,
];

/// A few hundred schedules of three owners, every kind, two verbs, some keyed, with arguments
/// to search; some paused, some running, some failing, the rest active. The store has them all
/// when this returns.
fn fill(h: &Host) {
    h.world.add_verb(h.room, "ring");
    let owners = [(h.prog, h.room), (h.other, h.other), (h.wiz, h.room)];
    for n in 0..300_u32 {
        let (owner, target) = owners[n as usize % 3];
        let verb = if n % 4 == 0 && target == h.room {
            "ring"
        } else {
            "tick"
        };
        let mut options = Options::new();
        if n % 5 == 0 {
            options = options.key(format!("k{:03}", (n * 37) % 300));
        }
        let args = match n % 6 {
            0 => vec![Value::from("tea time"), Value::Int(i64::from(n))],
            1 => vec![Value::List(vec![Value::Int(7), Value::from("x\"y")])],
            _ => vec![],
        };
        let mut txn = h.engine.begin(owner);
        match n % 3 {
            0 => txn.schedule_every(target, verb, f64::from(5 + n % 17), args, options),
            1 => txn.schedule_cron(
                target,
                verb,
                &format!("{} 3 * * *", n % 60),
                "UTC",
                args,
                options,
            ),
            _ => txn.schedule_at(
                target,
                verb,
                h.now() + f64::from(1 + n % 13) * 100.0,
                args,
                options,
            ),
        }
        .unwrap();
        txn.commit().unwrap();
    }
    // The ones due within 8 s start; of those, some fault, some stay running, the rest return.
    h.after(8.0);
    for (i, (run, _)) in h.started().into_iter().enumerate() {
        match i % 3 {
            0 => {
                h.fault(run);
            }
            1 => {}
            _ => {
                h.finish(run, Value::Int(0));
            }
        }
    }
    let ids = h.engine.begin(h.wiz).schedules(None).unwrap();
    for id in ids.iter().step_by(7) {
        h.engine
            .pause(h.wiz, *id, &format!("note {}", id.get()))
            .unwrap();
    }
    // One still running, paused as well.
    let running = h.started()[4].1.schedule;
    h.engine
        .pause(h.wiz, running, "paused while running")
        .unwrap();
    h.tick();
    h.engine.flush().unwrap();
}

/// The arguments as the list reads them.
fn args_text(args: &[Value]) -> String {
    args.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The same question asked of every whole row: the matched ids in order.
fn reference(all: &[StoredSchedule], q: &ListQuery) -> Vec<ScheduleId> {
    let mut kept: Vec<&StoredSchedule> = all
        .iter()
        .filter(|s| q.kind.is_none_or(|k| k == s.kind))
        .filter(|s| q.status.is_none_or(|st| st == s.status()))
        .filter(|s| q.owner.is_none_or(|o| o == s.owner))
        .filter(|s| q.verb.as_ref().is_none_or(|v| *v == s.verb))
        .filter(|s| q.namespace.as_ref().is_none_or(|n| *n == s.namespace))
        .filter(|s| {
            q.text.as_ref().is_none_or(|t| {
                s.verb.contains(t.as_str())
                    || args_text(&s.args).contains(t.as_str())
                    || s.owner.to_string().contains(t.as_str())
                    || s.key.as_ref().is_some_and(|k| k.contains(t.as_str()))
                    || q.text_owners.contains(&s.owner)
            })
        })
        .filter(|s| {
            q.last_fault
                .is_none_or(|k| s.last_fault.as_ref().is_some_and(|f| f.kind == k))
        })
        .collect();
    let due = |s: &StoredSchedule| {
        s.next_due_unix_nanos()
            .filter(|n| *n != 0)
            .unwrap_or(u64::MAX)
    };
    kept.sort_by(|a, b| {
        let by = match q.order {
            ListOrder::Owner => a.owner.0.cmp(&b.owner.0),
            ListOrder::Verb => a.verb.cmp(&b.verb),
            ListOrder::Kind => a.kind.as_str().cmp(b.kind.as_str()),
            ListOrder::State => a.status().cmp(&b.status()),
            ListOrder::Next => due(a).cmp(&due(b)),
            ListOrder::Key => (a.key.is_none(), &a.key).cmp(&(b.key.is_none(), &b.key)),
            ListOrder::LastRun => b.last_run_unix_nanos.cmp(&a.last_run_unix_nanos),
            // Missed times are kept in nanoseconds and read as seconds: compared as read.
            ListOrder::LastMiss => match (a.missed.last, b.missed.last) {
                (Some((x, _)), Some((y, _))) => y.total_cmp(&x),
                (x, y) => x.is_none().cmp(&y.is_none()),
            },
            _ => std::cmp::Ordering::Equal,
        };
        by.then(a.id.cmp(&b.id))
    });
    kept.into_iter().map(|s| s.id).collect()
}

/// Reads every page of `q` (and one past the last) and checks each against the reference.
fn check_all_pages(inspector: &Inspector, all: &[StoredSchedule], q: &ListQuery) {
    let expected = reference(all, q);
    let size = q.page_size;
    let pages = expected.len().div_ceil(size).max(1);
    let mut seen = Vec::new();
    for page in 1..=pages + 1 {
        let asked = ListQuery { page, ..q.clone() };
        let got = inspector.page(&asked).unwrap();
        assert_eq!(got.matched, expected.len() as u64, "{asked:?}");
        assert_eq!(got.total, all.len() as u64);
        assert_eq!(
            got.page,
            page.min(pages),
            "past the last page is the last page"
        );
        assert_eq!(got.pages(), pages);
        let from = (got.page - 1) * size;
        let want = &expected[from.min(expected.len())..(from + size).min(expected.len())];
        let ids: Vec<ScheduleId> = got.rows.iter().map(|r| r.id).collect();
        assert_eq!(ids, want, "{asked:?}");
        // Each row says what the whole row says.
        for row in &got.rows {
            let whole = all.iter().find(|s| s.id == row.id).unwrap();
            assert_eq!(row.status, whole.status(), "schedule {}", row.id.get());
            assert_eq!(row.next_due_unix_nanos, whole.next_due_unix_nanos());
            assert_eq!(
                (row.kind, &row.verb, &row.args, row.owner),
                (whole.kind, &whole.verb, &whole.args, whole.owner)
            );
            assert_eq!((&row.key, &row.namespace), (&whole.key, &whole.namespace));
            assert_eq!(row.pause_note, whole.pause.as_ref().map(|p| p.note.clone()));
            assert_eq!(
                row.calendar,
                whole
                    .calendar
                    .as_ref()
                    .map(|c| (c.expr.clone(), c.zone.clone()))
            );
            assert_eq!(
                (row.interval_ns, row.last_run_unix_nanos),
                (whole.interval_ns, whole.last_run_unix_nanos)
            );
            assert_eq!(
                (&row.last_fault, row.consecutive_faults),
                (&whole.last_fault, whole.consecutive_faults)
            );
            assert_eq!(row.last_miss, whole.missed.last);
            assert_eq!(
                (row.run_count, row.fault_count),
                (whole.run_count, whole.fault_count)
            );
        }
        if page <= pages {
            seen.extend(ids);
        }
    }
    assert_eq!(
        seen, expected,
        "the pages cover the matched rows once each: {q:?}"
    );
}

on_both_stores! {
    fn every_filter_and_order_pages_as_the_whole_rows_say(store) {
        let h = Host::on(store);
        fill(&h);
        let inspector = Inspector::open(store.path()).unwrap();
        let all = inspector.list().unwrap();
        assert_eq!(all.len(), 300);
        let base = ListQuery::new(40);
        let mut queries = vec![base.clone()];
        for kind in ScheduleKind::ALL {
            queries.push(ListQuery { kind: Some(kind), ..base.clone() });
        }
        for status in ScheduleStatus::ALL {
            queries.push(ListQuery { status: Some(status), ..base.clone() });
        }
        for owner in [h.prog, h.other, h.wiz, ObjId(999)] {
            queries.push(ListQuery { owner: Some(owner), ..base.clone() });
        }
        for verb in ["ring", "tick", "ti"] {
            queries.push(ListQuery { verb: Some(verb.into()), ..base.clone() });
        }
        for namespace in ["default", "other"] {
            queries.push(ListQuery { namespace: Some(namespace.into()), ..base.clone() });
        }
        // docs/schedules.md §9.19: the fixture's faults are errors; no other kind matches.
        for kind in [FaultKind::Error, FaultKind::TakenOver, FaultKind::Interrupted] {
            queries.push(ListQuery { last_fault: Some(kind), ..base.clone() });
        }
        // Text in the verb, in the arguments as they read (a string's quotes and escapes
        // included), in the owner as `#N`, in the key; an owner found by name.
        for text in ["rin", "tea time", "\"x\\\"y\"", "{7, ", &h.other.to_string(), "k01", "nothing"] {
            queries.push(ListQuery { text: Some(text.to_owned()), ..base.clone() });
        }
        queries.push(ListQuery { text: Some("nothing".into()), text_owners: vec![h.other], ..base.clone() });
        queries.push(ListQuery {
            kind: Some(ScheduleKind::Cron),
            status: Some(ScheduleStatus::Paused),
            owner: Some(h.prog),
            ..base.clone()
        });
        queries.push(ListQuery {
            verb: Some("tick".into()),
            text: Some("tea".into()),
            status: Some(ScheduleStatus::Active),
            ..base.clone()
        });
        for q in &queries {
            for order in ORDERS {
                check_all_pages(&inspector, &all, &ListQuery { order, ..q.clone() });
            }
        }
        // A page size of one, and one of the whole list, at the boundaries.
        for size in [1, 299, 300, 301] {
            check_all_pages(&inspector, &all, &ListQuery { order: ListOrder::Next, ..ListQuery::new(size) });
        }
    }
}

on_both_stores! {
    fn each_state_is_decided_in_the_store_as_the_engine_decides_it(store) {
        // docs/schedules.md §9.13: paused over running over failing over active.
        let h = Host::on(store);
        fill(&h);
        let inspector = Inspector::open(store.path()).unwrap();
        let all = inspector.list().unwrap();
        let txn = h.engine.begin(h.wiz);
        for status in ScheduleStatus::ALL {
            let page = inspector
                .page(&ListQuery { status: Some(status), ..ListQuery::new(1_000) })
                .unwrap();
            let stored: Vec<ScheduleId> =
                all.iter().filter(|s| s.status() == status).map(|s| s.id).collect();
            let engine: Vec<ScheduleId> = all
                .iter()
                .filter(|s| txn.schedule_info(s.id).unwrap().status() == status)
                .map(|s| s.id)
                .collect();
            let listed: Vec<ScheduleId> = page.rows.iter().map(|r| r.id).collect();
            assert_eq!(listed, stored, "{status:?}");
            assert_eq!(listed, engine, "{status:?}: the engine says the same");
            if status == ScheduleStatus::Retired {
                assert!(listed.is_empty(), "a store holds no retired schedule");
            } else {
                assert!(!listed.is_empty(), "the fixture has {status:?} schedules");
            }
        }
        // Paused while running is paused.
        let both = all.iter().find(|s| s.pause.is_some() && !s.running.is_empty());
        assert!(both.is_some(), "the fixture pauses a running schedule");
    }
}

on_both_stores! {
    fn a_namespace_scopes_both_counts_and_bad_input_is_refused_by_name(store) {
        let h = Host::on(store);
        h.every(5.0, Options::new());
        h.engine.flush().unwrap();
        let other = Inspector::open(store.path())
            .unwrap()
            .in_namespace(tickstep_schedules::Namespace::new("games").unwrap());
        let page = other.page(&ListQuery::new(50)).unwrap();
        assert_eq!((page.matched, page.total, page.rows.len()), (0, 0, 0));
        let inspector = Inspector::open(store.path()).unwrap();
        for (query, value) in [
            (ListQuery { page: 0, ..ListQuery::new(50) }, "0"),
            (ListQuery::new(0), "0"),
            (ListQuery::new(1_001), "1001"),
        ] {
            match inspector.page(&query) {
                Err(Error::InvalidArg { value: v, rule }) => {
                    assert_eq!(v, value);
                    assert!(rule.contains("docs/schedules.md §9.17"), "{rule}");
                }
                other => panic!("{query:?}: {other:?}"),
            }
        }
    }
}

on_both_stores! {
    fn the_most_recent_runs_and_misses_come_first_page_by_page(store) {
        // docs/schedules.md §9.19: schedules that last ran, and last missed, at many times.
        let h = Host::on(store);
        let ids: Vec<ScheduleId> = (0..40_u32)
            .map(|n| h.every(f64::from(3 + n % 11), Options::new().overlap(Overlap::Skip)))
            .collect();
        // Never run: one due in a day.
        h.every(86_400.0, Options::new());
        let mut held = Vec::new();
        for step in 1..=30_u32 {
            h.after(1.0);
            for (run, firing) in h.started() {
                if held.contains(&run) {
                    continue;
                }
                // Every fifth schedule's firing is kept running at its first start: its later
                // points are missed by overlap, each at a later time.
                if firing.schedule.get() % 5 == 0 && step < 12 {
                    held.push(run);
                } else {
                    h.finish(run, Value::Int(0));
                }
            }
        }
        h.engine.flush().unwrap();
        let inspector = Inspector::open(store.path()).unwrap();
        let all = inspector.list().unwrap();
        let runs: std::collections::BTreeSet<u64> = all.iter().map(|s| s.last_run_unix_nanos).collect();
        assert!(runs.len() > 5, "last runs at many times: {runs:?}");
        let missed = all.iter().filter(|s| s.missed.last.is_some()).count();
        assert!(missed >= 4 && missed < all.len(), "some missed, some not: {missed}");
        assert_eq!(all.len(), ids.len() + 1);
        for order in [ListOrder::LastRun, ListOrder::LastMiss] {
            for size in [1, 7, 41] {
                check_all_pages(&inspector, &all, &ListQuery { order, ..ListQuery::new(size) });
            }
            check_all_pages(
                &inspector,
                &all,
                &ListQuery { order, kind: Some(ScheduleKind::Every), owner: Some(h.prog), ..ListQuery::new(6) },
            );
        }
        let first = &inspector
            .page(&ListQuery { order: ListOrder::LastRun, ..ListQuery::new(1) })
            .unwrap()
            .rows[0];
        assert_eq!(first.last_run_unix_nanos, *runs.last().unwrap(), "the most recent first");
    }
}
