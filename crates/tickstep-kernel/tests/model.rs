//! Model test: random schedule/after/every/cancel/advance/step sequences against a small
//! reference model of docs/kernel.md §2–§5, comparing run order, stats and queue depths.

mod common;

use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Duration;

use common::Log;
use proptest::prelude::*;
use tickstep_kernel::{Clock, FrameScheduler, ManualClock, Priority, SchedulerConfig, TaskHandle};

#[derive(Clone, Debug)]
enum Op {
    Schedule {
        priority: u8,
        cost: u8,
    },
    After {
        delay: u8,
        priority: u8,
        cost: u8,
    },
    Every {
        interval: u8,
        priority: u8,
        cost: u8,
    },
    Cancel {
        which: usize,
    },
    Advance {
        ms: u8,
    },
    Step {
        budget: Option<u8>,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..5u8, 0..4u8).prop_map(|(priority, cost)| Op::Schedule { priority, cost }),
        2 => (0..30u8, 0..5u8, 0..4u8).prop_map(|(delay, priority, cost)| Op::After { delay, priority, cost }),
        1 => (0..25u8, 0..5u8, 0..3u8).prop_map(|(interval, priority, cost)| Op::Every { interval, priority, cost }),
        2 => any::<usize>().prop_map(|which| Op::Cancel { which }),
        2 => (0..20u8).prop_map(|ms| Op::Advance { ms }),
        3 => proptest::option::of(0..8u8).prop_map(|budget| Op::Step { budget }),
    ]
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Once,
    Frame,
    Every(u64),
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum State {
    Queued,
    Heap { deadline: u64, seq: u64 },
    Frame,
    Done,
}

struct Task {
    priority: usize,
    cost: u64,
    kind: Kind,
    state: State,
    cancelled: bool,
    deadline: u64,
}

/// The scheduler of docs/kernel.md §3–§5, written as plainly as possible (times in ms).
#[derive(Default)]
struct Model {
    now: u64,
    tasks: Vec<Task>,
    queues: [VecDeque<usize>; 5],
    frame: Vec<usize>,
    seq: u64,
    log: Vec<String>,
    tasks_run: u64,
    tasks_deferred: u64,
    steps: u64,
}

impl Model {
    fn add(&mut self, priority: usize, cost: u64, kind: Kind, delay: Option<u64>) {
        let id = self.tasks.len();
        let state = match (kind, delay) {
            (Kind::Frame, _) => {
                self.frame.push(id);
                State::Frame
            }
            (_, Some(d)) => {
                self.seq += 1;
                State::Heap {
                    deadline: self.now + d,
                    seq: self.seq,
                }
            }
            (_, None) => {
                self.queues[priority].push_back(id);
                State::Queued
            }
        };
        self.tasks.push(Task {
            priority,
            cost,
            kind,
            state,
            cancelled: false,
            deadline: self.now + delay.unwrap_or(0),
        });
    }

    fn cancel(&mut self, id: usize) {
        let t = &mut self.tasks[id];
        if t.cancelled || t.state == State::Done {
            return;
        }
        t.cancelled = true;
        match t.state {
            State::Heap { .. } => t.state = State::Done,
            State::Frame => {
                t.state = State::Done;
                self.frame.retain(|&i| i != id);
            }
            _ => {}
        }
    }

    fn live(&self, q: usize) -> usize {
        self.queues[q]
            .iter()
            .filter(|&&i| !self.tasks[i].cancelled)
            .count()
    }

    fn step(&mut self, budget: u64) {
        let start = self.now;
        let deadline = start + budget;
        // Due timers in (deadline, seq) order, then the frame list.
        let mut due: Vec<(u64, u64, usize)> = self
            .tasks
            .iter()
            .enumerate()
            .filter_map(|(i, t)| match t.state {
                State::Heap { deadline, seq } if deadline <= start => Some((deadline, seq, i)),
                _ => None,
            })
            .collect();
        due.sort_unstable();
        for (_, _, i) in due {
            self.tasks[i].state = State::Queued;
            self.queues[self.tasks[i].priority].push_back(i);
        }
        for i in std::mem::take(&mut self.frame) {
            self.tasks[i].state = State::Queued;
            self.queues[self.tasks[i].priority].push_back(i);
        }
        let mut deferred = 0;
        'drain: for q in 0..5 {
            let snapshot = self.queues[q].len();
            for _ in 0..snapshot {
                let i = *self.queues[q].front().unwrap();
                if self.tasks[i].cancelled {
                    self.queues[q].pop_front();
                    self.tasks[i].state = State::Done;
                    continue;
                }
                if q != 0 && self.now >= deadline {
                    deferred = (q..5).map(|q| self.live(q)).sum::<usize>() as u64;
                    break 'drain;
                }
                self.queues[q].pop_front();
                self.log.push(i.to_string());
                self.tasks_run += 1;
                self.now += self.tasks[i].cost;
                let now = self.now;
                let t = &mut self.tasks[i];
                t.state = match t.kind {
                    Kind::Once => State::Done,
                    Kind::Frame => {
                        self.frame.push(i);
                        State::Frame
                    }
                    Kind::Every(d) => {
                        let mut next = t.deadline + d;
                        if next <= now {
                            next = now + d;
                        }
                        t.deadline = next;
                        self.seq += 1;
                        State::Heap {
                            deadline: next,
                            seq: self.seq,
                        }
                    }
                };
            }
        }
        self.tasks_deferred = deferred;
        self.steps += 1;
    }

    fn depths(&self) -> ([usize; 5], usize) {
        let timers = self
            .tasks
            .iter()
            .filter(|t| matches!(t.state, State::Heap { .. } | State::Frame))
            .count();
        (std::array::from_fn(|q| self.live(q)), timers)
    }
}

fn priority(p: u8) -> Priority {
    Priority::from_level(i64::from(p) + 1)
}

fn body(log: &Log, clock: &ManualClock, id: usize, cost: u64) -> impl FnMut() + 'static {
    let (log, clock) = (log.clone(), clock.clone());
    move || {
        log.push(id.to_string());
        clock.advance(Duration::from_millis(cost));
    }
}

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let clock = ManualClock::new();
    let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    let log = Log::new();
    let mut model = Model::default();
    let mut handles: Vec<Rc<TaskHandle>> = Vec::new();
    for op in ops {
        let id = handles.len();
        match *op {
            Op::Schedule { priority: p, cost } => {
                let f = body(&log, &clock, id, cost.into());
                handles.push(Rc::new(sched.schedule(f, priority(p))));
                model.add(p.into(), cost.into(), Kind::Once, None);
            }
            Op::After {
                delay,
                priority: p,
                cost,
            } => {
                let f = body(&log, &clock, id, cost.into());
                let d = Duration::from_millis(delay.into());
                handles.push(Rc::new(sched.after(d, f, priority(p)).unwrap()));
                model.add(p.into(), cost.into(), Kind::Once, Some(delay.into()));
            }
            Op::Every {
                interval,
                priority: p,
                cost,
            } => {
                let f = body(&log, &clock, id, cost.into());
                let d = Duration::from_millis(interval.into());
                handles.push(Rc::new(sched.every(d, f, priority(p)).unwrap()));
                if interval == 0 {
                    model.add(p.into(), cost.into(), Kind::Frame, None);
                } else {
                    model.add(
                        p.into(),
                        cost.into(),
                        Kind::Every(interval.into()),
                        Some(interval.into()),
                    );
                }
            }
            Op::Cancel { which } => {
                if !handles.is_empty() {
                    let i = which % handles.len();
                    handles[i].cancel();
                    model.cancel(i);
                }
            }
            Op::Advance { ms } => {
                clock.advance(Duration::from_millis(ms.into()));
                model.now += u64::from(ms);
            }
            Op::Step { budget } => {
                let b = budget.map_or(1_000, u64::from);
                sched.step_with_budget(Duration::from_millis(b));
                model.step(b);
                let ran = log.take();
                let want = std::mem::take(&mut model.log);
                prop_assert_eq!(ran, want);
                let stats = sched.stats();
                prop_assert_eq!(stats.tasks_run, model.tasks_run);
                prop_assert_eq!(stats.tasks_deferred, model.tasks_deferred);
                prop_assert_eq!(stats.steps, model.steps);
            }
        }
        prop_assert_eq!(clock.now().as_nanos(), model.now * 1_000_000);
        let depths = sched.queue_depths();
        prop_assert_eq!((depths.queues, depths.timers), model.depths());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_scheduler_matches_the_reference_model(ops in proptest::collection::vec(op(), 1..80)) {
        run(&ops)?;
    }
}
