//! Transactions, ids and the whole permission table, positive and negative.

mod common;

use common::Host;
use tickstep_schedules::{Error, ObjId, Options, ScheduleId, Value};

on_every_store! {
    fn a_schedule_created_in_a_task_that_rolls_back_never_exists_and_never_fires(store) {
        let h = Host::on(store);
        let mut txn = h.engine.begin(h.prog);
        let id = txn
            .schedule_every(h.room, "tick", 1.0, vec![], Options::new())
            .unwrap();
        txn.rollback();
        assert!(!h.valid(id));
        h.after(10.0);
        assert_eq!(h.fired(), 0);
        assert_eq!(
            h.engine.begin(h.wiz).schedule_info(id).unwrap_err().code(),
            "E_INVARG"
        );
    }
}

on_every_store! {
    fn dropping_a_transaction_is_a_rollback(store) {
        let h = Host::on(store);
        let id = {
            let mut txn = h.engine.begin(h.prog);
            txn.schedule_every(h.room, "tick", 1.0, vec![], Options::new())
                .unwrap()
        };
        assert!(!h.valid(id));
        assert_eq!(h.engine.live_count(), 0);
    }
}

on_every_store! {
    fn creation_is_invisible_to_other_tasks_until_commit(store) {
        let h = Host::on(store);
        let mut txn = h.engine.begin(h.prog);
        let id = txn
            .schedule_every(h.room, "tick", 1.0, vec![], Options::new())
            .unwrap();
        assert!(!h.valid(id));
        h.after(1.0);
        assert_eq!(h.fired(), 0, "the scheduler does not see it either");
        txn.commit().unwrap();
        assert!(h.valid(id));
    }
}

on_every_store! {
    fn schedule_stop_takes_effect_when_the_task_commits(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new());
        let mut txn = h.engine.begin(h.prog);
        assert!(txn.schedule_stop(id).unwrap());
        assert!(!txn.schedule_valid(id), "the stopping task sees it stopped");
        assert!(h.valid(id), "others do not, yet");
        h.after(1.0);
        assert_eq!(h.fired(), 1);
        txn.commit().unwrap();
        assert!(!h.valid(id));
    }
}

on_every_store! {
    fn a_rolled_back_stop_never_happened(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new());
        let mut txn = h.engine.begin(h.prog);
        txn.schedule_stop(id).unwrap();
        drop(txn);
        assert!(h.valid(id));
    }
}

on_every_store! {
    fn within_the_creating_task_schedule_valid_is_true_and_schedule_stop_works(store) {
        let h = Host::on(store);
        let mut txn = h.engine.begin(h.prog);
        let id = txn
            .schedule_every(h.room, "tick", 1.0, vec![], Options::new())
            .unwrap();
        assert!(txn.schedule_valid(id));
        assert_eq!(txn.schedules(None).unwrap(), vec![id]);
        assert_eq!(txn.schedules_for(h.room), vec![id]);
        assert!(txn.schedule_stop(id).unwrap());
        assert!(!txn.schedule_valid(id));
        txn.commit().unwrap();
        assert!(!h.valid(id));
        h.after(5.0);
        assert_eq!(h.fired(), 0);
    }
}

on_every_store! {
    fn ids_are_never_reused_not_even_after_a_rollback_or_a_stop(store) {
        let h = Host::on(store);
        let mut seen = Vec::new();
        for round in 0..5 {
            let mut txn = h.engine.begin(h.prog);
            let id = txn
                .schedule_every(h.room, "tick", 1.0, vec![], Options::new())
                .unwrap();
            seen.push(id);
            if round % 2 == 0 {
                txn.rollback();
            } else {
                txn.schedule_stop(id).unwrap();
                txn.commit().unwrap();
            }
        }
        let mut sorted = seen.clone();
        sorted.dedup();
        assert_eq!(sorted.len(), 5);
        assert!(seen.windows(2).all(|w| w[0] < w[1]));
    }
}

on_every_store! {
    fn schedule_stop_of_an_id_that_names_nothing_is_a_quiet_false(store) {
        let h = Host::on(store);
        let mut txn = h.engine.begin(h.prog);
        assert!(!txn.schedule_stop(ScheduleId::from_raw(123_456)).unwrap());
    }
}

on_every_store! {
    fn schedule_stop_of_a_fired_one_shot_returns_false(store) {
        let h = Host::on(store);
        let id = h.at(0.0, Options::new());
        h.tick();
        h.finish(h.last_run(), Value::Int(0));
        assert!(!h.engine.begin(h.prog).schedule_stop(id).unwrap());
    }
}

on_every_store! {
    fn a_running_one_shot_is_still_valid_until_its_outcome_settles_it(store) {
        let h = Host::on(store);
        let id = h.at(0.0, Options::new());
        h.tick();
        assert!(h.valid(id));
        h.finish(h.last_run(), Value::Int(0));
        assert!(!h.valid(id));
    }
}

on_every_store! {
    fn bad_arguments_are_invarg_naming_the_value_and_create_nothing(store) {
        let h = Host::on(store);
        let mut txn = h.engine.begin(h.prog);
        let cases: Vec<(Result<ScheduleId, Error>, &str)> = vec![
            (
                txn.schedule_at(h.room, "tick", f64::NAN, vec![], Options::new()),
                "NaN",
            ),
            (
                txn.schedule_at(h.room, "tick", -1.0, vec![], Options::new()),
                "-1",
            ),
            (
                txn.schedule_at(h.room, "tick", f64::INFINITY, vec![], Options::new()),
                "inf",
            ),
            (
                txn.schedule_every(h.room, "tick", -0.5, vec![], Options::new()),
                "-0.5",
            ),
            (
                txn.schedule_every(h.room, "tick", f64::NAN, vec![], Options::new()),
                "NaN",
            ),
            (
                txn.schedule_every(h.room, "", 1.0, vec![], Options::new()),
                "\"\"",
            ),
            (
                txn.schedule_every(h.room, "nope", 1.0, vec![], Options::new()),
                "nope",
            ),
            (
                txn.schedule_every(ObjId(9999), "tick", 1.0, vec![], Options::new()),
                "#9999",
            ),
            (
                txn.schedule_every(
                    h.room,
                    "tick",
                    1.0,
                    vec![Value::Float(f64::NAN)],
                    Options::new(),
                ),
                "NaN",
            ),
            (
                txn.schedule_every(
                    h.room,
                    "tick",
                    1.0,
                    vec![],
                    Options::new().jitter_seconds(-1.0),
                ),
                "-1",
            ),
            (
                txn.schedule_every(
                    h.room,
                    "tick",
                    1.0,
                    vec![],
                    Options::new().state(Value::Str("x".repeat(5000))),
                ),
                "4096",
            ),
            (
                txn.schedule_every(
                    h.room,
                    "tick",
                    1.0,
                    vec![],
                    Options::new().player(ObjId(777)),
                ),
                "#777",
            ),
        ];
        for (result, needle) in cases {
            let err = result.unwrap_err();
            assert_eq!(err.code(), "E_INVARG", "{err}");
            assert!(matches!(err, Error::InvalidArg { .. }));
            assert!(
                err.to_string().contains(needle),
                "{err} should name {needle}"
            );
        }
        assert!(
            txn.schedules(None).unwrap().is_empty(),
            "nothing half-created"
        );
        txn.commit().unwrap();
        assert_eq!(h.engine.live_count(), 0);
    }
}

on_every_store! {
    fn owner_and_authority_are_the_creating_tasks_permissions(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new());
        let info = h.info(id);
        assert_eq!((info.owner, info.authority), (h.prog, h.prog));
        h.after(1.0);
        assert_eq!(h.started()[0].1.authority, h.prog);
    }
}

on_every_store! {
    fn the_verb_must_be_callable_now_by_the_creator_or_creation_is_invarg(store) {
        let h = Host::on(store);
        let vault = h.world.add_object(h.other);
        h.world.add_private_verb(vault, "open", h.other);
        let mut txn = h.engine.begin(h.prog);
        let err = txn
            .schedule_every(vault, "open", 1.0, vec![], Options::new().player(h.prog))
            .unwrap_err();
        assert_eq!(err.code(), "E_INVARG", "not executable by prog");
        let mut mine = h.engine.begin(h.other);
        assert!(
            mine.schedule_every(vault, "open", 1.0, vec![], Options::new())
                .is_ok()
        );
    }
}

on_every_store! {
    fn a_verb_found_on_an_ancestor_is_callable(store) {
        let h = Host::on(store);
        let base = h.world.add_object(h.prog);
        h.world.add_verb(base, "inherited");
        let child = h.world.add_object(h.prog);
        h.world.set_parent(child, base);
        let mut txn = h.engine.begin(h.prog);
        assert!(
            txn.schedule_every(child, "inherited", 1.0, vec![], Options::new())
                .is_ok()
        );
    }
}

on_every_store! {
    fn player_must_be_an_object_the_creator_controls_or_creation_is_eperm(store) {
        let h = Host::on(store);
        let mut txn = h.engine.begin(h.prog);
        // Explicit player that prog neither is nor owns.
        let err = txn
            .schedule_every(h.room, "tick", 1.0, vec![], Options::new().player(h.other))
            .unwrap_err();
        assert_eq!(err.code(), "E_PERM");
        // Default player is the target: a target prog does not control is refused too.
        let err = txn
            .schedule_every(h.other, "tick", 1.0, vec![], Options::new())
            .unwrap_err();
        assert!(matches!(err, Error::Perm { .. }));
        // Being the player, or owning it, is enough.
        assert!(
            txn.schedule_every(h.room, "tick", 1.0, vec![], Options::new().player(h.prog))
                .is_ok()
        );
        assert!(
            txn.schedule_every(h.other, "tick", 1.0, vec![], Options::new().player(h.room))
                .is_ok()
        );
    }
}

on_every_store! {
    fn a_wizard_may_name_any_player(store) {
        let h = Host::on(store);
        let mut txn = h.engine.begin(h.wiz);
        assert!(
            txn.schedule_every(h.room, "tick", 1.0, vec![], Options::new().player(h.other))
                .is_ok()
        );
        assert!(
            txn.schedule_every(h.other, "tick", 1.0, vec![], Options::new())
                .is_ok()
        );
    }
}

on_every_store! {
    fn schedule_stop_is_for_the_owner_or_a_wizard_and_eperm_for_others_on_a_live_schedule(store) {
        let h = Host::on(store);
        let a = h.every(1.0, Options::new());
        let b = h.every(1.0, Options::new());
        let mut other = h.engine.begin(h.other);
        assert_eq!(other.schedule_stop(a).unwrap_err().code(), "E_PERM");
        let mut owner = h.engine.begin(h.prog);
        assert!(owner.schedule_stop(a).unwrap());
        owner.commit().unwrap();
        let mut wizard = h.engine.begin(h.wiz);
        assert!(wizard.schedule_stop(b).unwrap());
        wizard.commit().unwrap();
        assert_eq!(h.engine.live_count(), 0);
    }
}

on_every_store! {
    fn schedule_info_is_for_the_owner_or_a_wizard(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new());
        assert!(h.engine.begin(h.prog).schedule_info(id).is_ok());
        assert!(h.engine.begin(h.wiz).schedule_info(id).is_ok());
        let err = h.engine.begin(h.other).schedule_info(id).unwrap_err();
        assert!(matches!(err, Error::Perm { who, .. } if who == h.other));
    }
}

on_every_store! {
    fn schedules_shows_a_wizard_every_live_schedule_and_anyone_else_their_own(store) {
        let h = Host::on(store);
        let mine = h.every(1.0, Options::new());
        let mut txn = h.engine.begin(h.other);
        let theirs = txn
            .schedule_every(h.other, "tick", 1.0, vec![], Options::new())
            .unwrap();
        txn.commit().unwrap();
        assert_eq!(
            h.engine.begin(h.wiz).schedules(None).unwrap(),
            vec![mine, theirs]
        );
        assert_eq!(h.engine.begin(h.prog).schedules(None).unwrap(), vec![mine]);
        assert_eq!(
            h.engine.begin(h.other).schedules(None).unwrap(),
            vec![theirs]
        );
    }
}

on_every_store! {
    fn schedules_with_an_owner_is_for_a_wizard_or_that_owner(store) {
        let h = Host::on(store);
        let mine = h.every(1.0, Options::new());
        assert_eq!(
            h.engine.begin(h.prog).schedules(Some(h.prog)).unwrap(),
            vec![mine]
        );
        assert_eq!(
            h.engine.begin(h.wiz).schedules(Some(h.prog)).unwrap(),
            vec![mine]
        );
        assert!(
            h.engine
                .begin(h.wiz)
                .schedules(Some(h.wiz))
                .unwrap()
                .is_empty()
        );
        let err = h.engine.begin(h.other).schedules(Some(h.prog)).unwrap_err();
        assert_eq!(err.code(), "E_PERM");
    }
}

on_every_store! {
    fn schedules_for_is_open_to_anyone_so_a_recycle_path_can_stop_them(store) {
        let h = Host::on(store);
        let id = h.every(1.0, Options::new());
        let other = h.engine.begin(h.other);
        assert_eq!(other.schedules_for(h.room), vec![id]);
        // The recycle path runs with wizard permissions and stops each one.
        let mut recycle = h.engine.begin(h.wiz);
        for id in recycle.schedules_for(h.room) {
            assert!(recycle.schedule_stop(id).unwrap());
        }
        recycle.commit().unwrap();
        assert!(h.engine.begin(h.wiz).schedules_for(h.room).is_empty());
    }
}

on_every_store! {
    fn the_key_value_option_map_is_checked_at_creation(store) {
        let h = Host::on(store);
        let map = Value::Map(vec![
            (Value::from("persist"), Value::Int(0)),
            (
                Value::Symbol("overlap".into()),
                Value::Symbol("queue".into()),
            ),
            (Value::from("state"), Value::from("k")),
        ]);
        let mut txn = h.engine.begin(h.prog);
        let id = txn
            .schedule_every(
                h.room,
                "tick",
                1.0,
                vec![],
                tickstep_schedules::Options::from_map(&map).unwrap(),
            )
            .unwrap();
        let info = txn.schedule_info(id).unwrap();
        assert!(!info.persist);
        assert_eq!(info.overlap, tickstep_schedules::Overlap::Queue);
        assert_eq!(info.state, Some(Value::from("k")));
    }
}

on_every_store! {
    /// docs/schedules.md §9.1: every key, in order.
    fn schedule_info_reports_every_field_the_seed_lists(store) {
        let h = Host::on(store);
        let id = h.every(2.0, Options::new().jitter_seconds(0.5));
        h.after(3.0);
        h.advance(0.25);
        h.finish_all();
        let map = h.info(id).to_value();
        let keys = [
            "id",
            "target",
            "verb",
            "args",
            "owner",
            "authority",
            "kind",
            "interval",
            "created_at",
            "next_run",
            "last_run",
            "run_count",
            "fault_count",
            "consecutive_faults",
            "last_fault",
            "missed_count",
            "overlap_count",
            "last_duration_ns",
            "mean_duration_ns",
            "p99_duration_ns",
            "running_task",
            "interval_clamped",
            "retired",
            "retire_reason",
            "adaptive",
            "catchup",
            "overlap",
            "jitter",
            "max_faults",
            "pass_elapsed",
            "persist",
            "player",
            "state",
            "seconds",
            "ticks",
            "key",
            "paused",
            "paused_by",
            "paused_at",
            "pause_note",
            "paused_missed",
            "trigger_pending",
            "backfill",
            "next_runs",
            "history",
            "cron",
            "zone",
            "dst_gap",
            "dst_fold",
            "status",
            "catchup_window",
            "run_limit",
            "remaining_runs",
            "on_max_faults",
            "missed_by",
            "last_missed_at",
            "last_missed_reason",
            "lateness_p50",
            "lateness_p99",
            "lateness_samples",
        ];
        let Value::Map(pairs) = &map else { panic!() };
        assert_eq!(pairs.len(), keys.len());
        for (k, (key, _)) in keys.iter().zip(pairs) {
            assert_eq!(key, &Value::from(*k));
        }
        assert_eq!(map.get("last_duration_ns"), Some(&Value::Int(250_000_000)));
        assert_eq!(map.get("mean_duration_ns"), Some(&Value::Int(250_000_000)));
        assert_eq!(map.get("p99_duration_ns"), Some(&Value::Int(250_000_000)));
        assert_eq!(map.get("kind"), Some(&Value::from("every")));
        assert_eq!(map.get("catchup"), Some(&Value::from("skip")));
        assert_eq!(
            map.get("state"),
            Some(&Value::Int(0)),
            "absent optional values are 0"
        );
        assert_eq!(map.get("last_fault"), Some(&Value::Int(0)));
        assert_eq!(map.get("status"), Some(&Value::from("active")));
    }
}

fn nested(depth: usize) -> Value {
    (0..depth).fold(Value::Int(0), |inner, i| {
        if i % 2 == 0 {
            Value::List(vec![inner])
        } else {
            Value::Map(vec![(Value::from("k"), inner)])
        }
    })
}

on_every_store! {
    fn args_or_state_nested_deeper_than_the_store_can_read_back_are_invarg(store) {
        let h = Host::on(store);
        let mut txn = h.engine.begin(h.prog);
        let deep = nested(tickstep_schedules::MAX_VALUE_DEPTH + 1);
        let err = txn
            .schedule_every(h.room, "tick", 1.0, vec![deep.clone()], Options::new())
            .unwrap_err();
        assert!(err.to_string().contains("at most 32 deep"), "{err}");
        let err = txn
            .schedule_every(h.room, "tick", 1.0, vec![], Options::new().state(deep))
            .unwrap_err();
        assert_eq!(err.code(), "E_INVARG");
        let ok = nested(tickstep_schedules::MAX_VALUE_DEPTH);
        assert!(
            txn.schedule_every(h.room, "tick", 1.0, vec![ok], Options::new())
                .is_ok()
        );
    }
}
