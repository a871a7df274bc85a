//! Recipes a host writes with schedules (debounce, one driver per object, upkeep over `elapsed`,
//! one heartbeat schedule, an audit), and re-entrancy (docs/schedules.md §10.3): user code calling
//! back into the engine. Each runs in memory and on both stores: none depends on the store.

mod common;

use std::cell::Cell;
use std::rc::Rc;

use common::Host;
use tickstep_schedules::{Options, ScheduleId, Value};

on_every_store! {
fn recipe_debounce_coalesces_a_burst_of_events_into_one_flush(store) {
    let h = Host::on(store);
    let flush_id: Cell<Option<ScheduleId>> = Cell::new(None);
    let event = || {
        let mut txn = h.engine.begin(h.prog);
        if let Some(id) = flush_id.get()
            && txn.schedule_valid(id) {
                txn.schedule_stop(id).unwrap();
            }
        let id = txn
            .schedule_at(
                h.room,
                "tick",
                h.now() + 2.0,
                vec![],
                Options::new().persist(false),
            )
            .unwrap();
        txn.commit().unwrap();
        flush_id.set(Some(id));
    };
    for _ in 0..10 {
        event();
        h.after(0.5);
    }
    assert_eq!(h.fired(), 0, "still bursting");
    h.after(2.0);
    assert_eq!(h.fired(), 1);
    assert_eq!(h.started()[0].0, h.last_run());
    assert_eq!(
        h.engine.live_count(),
        1,
        "the flush is running; nine were stopped"
    );
}
}

on_every_store! {
fn recipe_one_driver_per_object_never_double_drives(store) {
    let h = Host::on(store);
    let drive_id: Cell<Option<ScheduleId>> = Cell::new(None);
    let ensure_driver = || {
        let mut txn = h.engine.begin(h.prog);
        if !drive_id.get().is_some_and(|id| txn.schedule_valid(id)) {
            drive_id.set(Some(
                txn.schedule_at(h.room, "tick", h.now(), vec![], Options::new())
                    .unwrap(),
            ));
        }
        txn.commit().unwrap();
    };
    ensure_driver();
    ensure_driver();
    h.tick();
    ensure_driver(); // mid-drive: still valid
    assert_eq!(h.fired(), 1);
    h.finish(h.last_run(), Value::Int(1)); // the driver re-arms itself for 1 s
    ensure_driver();
    h.after(1.0);
    assert_eq!(h.fired(), 2);
    h.finish(h.last_run(), Value::Int(0)); // done driving
    ensure_driver(); // now a new driver is created
    h.tick();
    assert_eq!(h.fired(), 3);
    assert_eq!(h.engine.live_count(), 1);
}
}

on_every_store! {
fn recipe_per_object_upkeep_integrates_over_elapsed_whatever_the_punctuality(store) {
    let h = Host::on(store);
    let hp = Cell::new(0.0_f64);
    let regen_per_second = 2.0;
    h.every(5.0, Options::new());
    let mut handled = 0;
    for gap in [5.0, 5.0, 17.0, 5.0, 3.0] {
        h.after(gap);
        for (run, firing) in h.started().into_iter().skip(handled) {
            let Some(Value::Float(elapsed)) = firing.call_args().last().cloned() else {
                panic!("elapsed is the last argument");
            };
            hp.set(hp.get() + regen_per_second * elapsed);
            h.finish(run, Value::Int(0));
            handled += 1;
        }
    }
    // Firings at +5, +10, +32 (at +27 skip dropped the points +15..+25), +35: the elapsed
    // arguments sum to the real time between first and last firing, 30 s, however irregular.
    assert_eq!(handled, 4);
    assert!(
        (hp.get() - regen_per_second * 30.0).abs() < 1e-6,
        "{}",
        hp.get()
    );
}
}

on_every_store! {
fn recipe_heartbeat_replacement_is_one_recurring_schedule_with_one_listing(store) {
    let h = Host::on(store);
    let id = h.every(1.0, Options::new());
    assert_eq!(h.engine.begin(h.prog).schedules(None).unwrap(), vec![id]);
}
}

on_every_store! {
fn a_firing_may_create_and_stop_schedules_from_inside_runner_start(store) {
    let h = Rc::new(Host::on(store));
    let created: Rc<Cell<Option<ScheduleId>>> = Rc::new(Cell::new(None));
    {
        let (engine, prog, room, created) = (h.engine.clone(), h.prog, h.room, created.clone());
        h.runner.on_start(move |firing| {
            // A verb that schedules its successor and stops itself, mid-tick.
            let mut txn = engine.begin(prog);
            if created.get().is_none() {
                let next = txn
                    .schedule_every(room, "tick", 2.0, vec![], Options::new())
                    .unwrap();
                created.set(Some(next));
                assert!(txn.schedule_stop(firing.schedule).unwrap());
            }
            assert!(txn.schedules(None).is_ok());
            let _ = txn.schedule_info(firing.schedule);
            txn.commit().unwrap();
            let _ = engine.next_deadline();
            let _ = engine.anonymous_references();
        });
    }
    let first = h.every(1.0, Options::new());
    h.after(1.0);
    assert!(!h.valid(first));
    let next = created.get().unwrap();
    assert!(h.valid(next));
    h.after(2.0);
    assert_eq!(h.started().last().unwrap().1.schedule, next);
}
}

on_every_store! {
fn reporting_an_outcome_from_inside_a_start_for_an_earlier_run_is_safe(store) {
    let h = Rc::new(Host::on(store));
    {
        let (engine, runner) = (h.engine.clone(), h.runner.clone());
        h.runner.on_start(move |_| {
            // Settle whatever ran before this firing.
            let earlier: Vec<_> = runner.running();
            for run in earlier.iter().take(earlier.len().saturating_sub(1)) {
                runner.finish(
                    &engine,
                    *run,
                    tickstep_schedules::Outcome::Returned(Value::Int(0)),
                );
            }
        });
    }
    let id = h.every(1.0, Options::new());
    h.after(1.0);
    h.after(1.0); // overlap skip: the first is still running
    assert_eq!(h.fired(), 1);
    assert_eq!(h.info(id).overlap_count, 1);
}
}

/// A world whose answers call back into the engine, as a host's permission code might.
struct ReentrantWorld {
    inner: tickstep_schedules::testkit::TestWorld,
    engine: Rc<std::cell::OnceCell<tickstep_schedules::Schedules>>,
    calls: Rc<Cell<usize>>,
}

impl tickstep_schedules::World for ReentrantWorld {
    fn valid(&self, obj: tickstep_schedules::ObjId) -> bool {
        self.poke();
        self.inner.valid(obj)
    }
    fn is_wizard(&self, who: tickstep_schedules::ObjId) -> bool {
        self.poke();
        self.inner.is_wizard(who)
    }
    fn controls(&self, who: tickstep_schedules::ObjId, obj: tickstep_schedules::ObjId) -> bool {
        self.poke();
        self.inner.controls(who, obj)
    }
    fn verb_callable(
        &self,
        perms: tickstep_schedules::ObjId,
        target: tickstep_schedules::ObjId,
        verb: &str,
    ) -> bool {
        self.poke();
        self.inner.verb_callable(perms, target, verb)
    }
    fn is_anonymous(&self, obj: tickstep_schedules::ObjId) -> bool {
        self.poke();
        self.inner.is_anonymous(obj)
    }
}

impl ReentrantWorld {
    fn poke(&self) {
        thread_local!(static INSIDE: Cell<bool> = const { Cell::new(false) });
        // One level deep: the engine's own calls back into the world must not recurse forever.
        if INSIDE.with(|inside| inside.replace(true)) {
            return;
        }
        if let Some(engine) = self.engine.get() {
            self.calls.set(self.calls.get() + 1);
            let txn = engine.begin(tickstep_schedules::ObjId(1));
            let _ = txn.schedules(None);
            let _ = engine.next_deadline();
            let _ = engine.live_count();
        }
        INSIDE.with(|inside| inside.set(false));
    }
}

#[test]
fn world_callbacks_may_call_back_into_the_engine_without_a_borrow_panic() {
    use tickstep_kernel::clock::ManualClock;
    use tickstep_schedules::testkit::{TestRunner, TestWorld};
    let inner = TestWorld::new();
    let wiz = inner.add_wizard();
    let room = inner.add_object(wiz);
    inner.add_verb(room, "tick");
    let anon = inner.add_anonymous(wiz);
    let cell = Rc::new(std::cell::OnceCell::new());
    let calls = Rc::new(Cell::new(0));
    let world = ReentrantWorld {
        inner,
        engine: cell.clone(),
        calls: calls.clone(),
    };
    let clock = ManualClock::new();
    let runner = TestRunner::new();
    let engine = tickstep_schedules::Schedules::in_memory(
        clock.clone(),
        world,
        runner.clone(),
        common::config(),
    );
    assert!(cell.set(engine.clone()).is_ok());
    let mut txn = engine.begin(wiz);
    let id = txn
        .schedule_every(room, "tick", 1.0, vec![Value::Obj(anon)], Options::new())
        .unwrap();
    assert!(txn.schedules(Some(wiz)).is_ok());
    assert!(txn.schedule_info(id).is_ok());
    txn.commit().unwrap();
    let mut txn = engine.begin(wiz);
    clock.advance(std::time::Duration::from_secs(1));
    engine.tick().unwrap();
    assert_eq!(engine.anonymous_references(), vec![anon]);
    assert!(txn.schedule_stop(id).unwrap());
    txn.commit().unwrap();
    assert!(calls.get() > 5, "the world was asked, and asked back");
}

on_every_store! {
fn recipe_wizard_audit_flags_schedules_firing_more_often_than_once_a_second(store) {
    let h = Host::on(store);
    let fast = h.every(0.25, Options::new());
    h.every(5.0, Options::new());
    let wizard = h.engine.begin(h.wiz);
    let flagged: Vec<ScheduleId> = wizard
        .schedules(None)
        .unwrap()
        .into_iter()
        .filter(|&id| {
            let info = wizard.schedule_info(id).unwrap().to_value();
            info.get("kind") == Some(&Value::from("every"))
                && info.get("interval").and_then(Value::as_seconds).unwrap() < 1.0
        })
        .collect();
    assert_eq!(flagged, vec![fast]);
}
}
