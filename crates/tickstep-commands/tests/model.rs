//! Property test: the conflict and priority rules against a small reference model.
//!
//! Commands are drawn from a fixed pool (random requirements over three mechanisms, random
//! priorities, some finishing on their first mount). Random schedule / cancel / `cancel_all` /
//! run sequences go to both the scheduler and the model; after every step the `ScheduleResult`
//! and every command's queued/running state must agree.

use std::collections::BTreeSet;

use proptest::prelude::*;
use tickstep_commands::{Command, CommandScheduler, Mechanism, ScheduleResult};
use tickstep_kernel::clock::ManualClock;

const MECHANISMS: usize = 3;

#[derive(Clone, Debug)]
struct Spec {
    requires: Vec<usize>,
    priority: i32,
    quick: bool,
}

#[derive(Clone, Debug)]
enum Op {
    Schedule(usize),
    Cancel(usize),
    CancelAll,
    Run,
}

#[derive(Default)]
struct Model {
    /// Queued commands in the order they were scheduled.
    queued: Vec<usize>,
    running: BTreeSet<usize>,
}

impl Model {
    fn shares(specs: &[Spec], a: usize, b: usize) -> bool {
        specs[a]
            .requires
            .iter()
            .any(|m| specs[b].requires.contains(m))
    }

    fn owner(&self, specs: &[Spec], m: usize) -> Option<usize> {
        self.running
            .iter()
            .copied()
            .find(|r| specs[*r].requires.contains(&m))
    }

    fn schedule(&mut self, specs: &[Spec], i: usize) -> ScheduleResult {
        if self.queued.contains(&i) || self.running.contains(&i) {
            return ScheduleResult::AlreadyRunning;
        }
        let me = &specs[i];
        for &m in &me.requires {
            if let Some(o) = self.owner(specs, m)
                && specs[o].priority > me.priority
            {
                return ScheduleResult::LowerPriorityThanRunning {
                    running: format!("c{o}"),
                    running_priority: specs[o].priority,
                    priority: me.priority,
                };
            }
        }
        for &m in &me.requires {
            if let Some(&q) = self
                .queued
                .iter()
                .find(|q| specs[**q].requires.contains(&m))
                && specs[q].priority > me.priority
            {
                return ScheduleResult::LowerPriorityThanQueued {
                    queued: format!("c{q}"),
                    queued_priority: specs[q].priority,
                    priority: me.priority,
                };
            }
        }
        self.queued.retain(|q| !Self::shares(specs, *q, i));
        self.queued.push(i);
        ScheduleResult::Success
    }

    fn run(&mut self, specs: &[Spec]) {
        for q in std::mem::take(&mut self.queued) {
            let rivals: Vec<usize> = self
                .running
                .iter()
                .copied()
                .filter(|r| Self::shares(specs, *r, q))
                .collect();
            if rivals
                .iter()
                .any(|r| specs[*r].priority > specs[q].priority)
            {
                continue;
            }
            for r in rivals {
                self.running.remove(&r);
            }
            self.running.insert(q);
        }
        self.running.retain(|r| !specs[*r].quick);
    }
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        proptest::collection::btree_set(0..MECHANISMS, 0..=2),
        -2i32..=2,
        proptest::bool::weighted(0.25),
    )
        .prop_map(|(requires, priority, quick)| Spec {
            requires: requires.into_iter().collect(),
            priority,
            quick,
        })
}

fn op(pool: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..pool).prop_map(Op::Schedule),
        2 => (0..pool).prop_map(Op::Cancel),
        1 => Just(Op::CancelAll),
        4 => Just(Op::Run),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn conflict_and_priority_rules_match_the_model(
        specs in proptest::collection::vec(spec(), 2..7),
        ops in proptest::collection::vec(op(6), 1..60),
    ) {
        let scheduler = CommandScheduler::new(ManualClock::new());
        let mechanisms: Vec<Mechanism> =
            (0..MECHANISMS).map(|m| Mechanism::new(&scheduler, format!("m{m}"))).collect();
        let commands: Vec<Command> = specs
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut builder = Command::no_requirements();
                for &m in &s.requires {
                    builder = builder.requiring(&mechanisms[m]);
                }
                let quick = s.quick;
                builder
                    .executing(move |co| async move {
                        if !quick {
                            co.park().await;
                        }
                    })
                    .with_priority(s.priority)
                    .named(format!("c{i}"))
            })
            .collect();
        let mut model = Model::default();
        for op in ops {
            match op {
                Op::Schedule(i) if i < specs.len() => {
                    let expected = model.schedule(&specs, i);
                    prop_assert_eq!(scheduler.schedule(&commands[i]), expected, "schedule c{}", i);
                }
                Op::Cancel(i) if i < specs.len() => {
                    scheduler.cancel(&commands[i]);
                    model.queued.retain(|q| *q != i);
                    model.running.remove(&i);
                }
                Op::CancelAll => {
                    scheduler.cancel_all();
                    model.queued.clear();
                    model.running.clear();
                }
                Op::Run => {
                    scheduler.run().unwrap();
                    model.run(&specs);
                }
                _ => {}
            }
            for (i, c) in commands.iter().enumerate() {
                prop_assert_eq!(scheduler.is_scheduled(c), model.queued.contains(&i), "queued c{}", i);
                prop_assert_eq!(scheduler.is_running(c), model.running.contains(&i), "running c{}", i);
            }
        }
    }
}
