//! The reference model: schedules in a `BTreeMap`, cadence points walked one at a time, due work
//! found by a linear scan. Obvious rather than fast; the engine is checked against it.

use std::collections::BTreeMap;

use tickstep_schedules::{Catchup, Overlap};

use super::{RETENTION, SEC};

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Kind {
    At,
    Every(u64),
}

#[derive(Clone, Debug)]
pub(super) struct Sched {
    pub(super) kind: Kind,
    pub(super) overlap: Overlap,
    pub(super) catchup: Catchup,
    pub(super) max_faults: u32,
    pub(super) next_run: u64,
    pub(super) fire_at: Option<u64>,
    pub(super) running: Vec<u64>,
    pub(super) queued: Option<u64>,
    pub(super) backlog: u64,
    pub(super) run_count: u64,
    pub(super) fault_count: u64,
    pub(super) consecutive: u32,
    pub(super) missed: u64,
    pub(super) overlaps: u64,
    pub(super) retired_at: Option<u64>,
}

#[derive(Default)]
pub(super) struct Model {
    pub(super) s: BTreeMap<u64, Sched>,
}

impl Model {
    pub(super) fn live(&self) -> impl Iterator<Item = (&u64, &Sched)> {
        self.s.iter().filter(|(_, s)| s.retired_at.is_none())
    }

    /// One tick at `now`: the (schedule, nominal) pairs that fire.
    pub(super) fn tick(&mut self, now: u64) -> Vec<(u64, u64)> {
        self.s
            .retain(|_, s| s.retired_at.is_none_or(|at| at + RETENTION > now));
        let mut due: Vec<(u64, u64)> = self
            .live()
            .filter_map(|(&id, s)| s.fire_at.filter(|&at| at <= now).map(|at| (at, id)))
            .collect();
        due.sort_unstable();
        let mut fired = Vec::new();
        for (_, id) in due {
            let s = self.s.get_mut(&id).unwrap();
            s.fire_at = None;
            if let Some(nominal) = visit(s, now) {
                s.run_count += 1;
                s.running.push(nominal);
                fired.push((id, nominal));
            }
        }
        fired.sort_unstable();
        fired
    }

    /// Loading after a restart: a recurring schedule whose firing was in flight gets catch-up for
    /// the points that passed, waiting behind the restored firing; an idle one that missed two or
    /// more points gets its catch-up at open too (one passed point is an ordinary late firing,
    /// unless the schedule was catching up: that catch-up starts afresh).
    pub(super) fn restore(&mut self, now: u64) {
        for s in self.s.values_mut() {
            let Kind::Every(i) = s.kind else { continue };
            let mut n = 0;
            if s.running.is_empty() {
                let Some(due) = s.fire_at.map(|at| at.max(s.next_run)) else {
                    continue;
                };
                if s.queued.is_some() || due > now {
                    continue;
                }
                while due + n * i <= now {
                    n += 1;
                }
                if n < 2 && s.backlog == 0 {
                    continue;
                }
            } else {
                if s.next_run > now {
                    continue;
                }
                while s.next_run + n * i <= now {
                    n += 1;
                }
            }
            let (first, firings) = match s.catchup {
                Catchup::Skip => (n, 0),
                Catchup::Once => (n - 1, 1),
                Catchup::All => (n - n.min(1000), 1000),
            };
            s.missed += first;
            s.next_run += first * i;
            s.backlog = firings;
            s.fire_at = Some(s.next_run);
        }
    }

    /// An outcome: applied to a live schedule; ignored for a retired one, whose firing has
    /// nevertheless ended (docs/schedules.md §7.9).
    pub(super) fn settle(&mut self, id: u64, nominal: u64, outcome: u8, now: u64) -> bool {
        let Some(s) = self.s.get_mut(&id) else {
            return false;
        };
        let pos = s.running.iter().position(|&n| n == nominal).unwrap();
        s.running.remove(pos);
        if s.retired_at.is_some() {
            return false;
        }
        if outcome < 4 {
            s.consecutive = 0;
            let delay = u64::from(outcome) * SEC;
            if s.kind == Kind::At {
                if delay > 0 {
                    s.next_run = now + delay;
                    s.fire_at = Some(s.next_run);
                } else {
                    s.retired_at = Some(now);
                }
            }
        } else {
            s.fault_count += 1;
            s.consecutive += 1;
            if (s.max_faults > 0 && s.consecutive >= s.max_faults) || s.kind == Kind::At {
                s.retired_at = Some(now);
            }
        }
        // The firing ended: what waits behind it starts; a catch-up with no point due is over.
        if s.retired_at.is_none() && s.running.is_empty() {
            if s.queued.is_some() || (s.backlog > 0 && s.next_run <= now) {
                s.fire_at = Some(now);
            } else if s.backlog > 0 {
                s.backlog = 0;
            }
        }
        true
    }
}

/// The model's reading of engine/cadence.rs, one point at a time.
fn visit(s: &mut Sched, now: u64) -> Option<u64> {
    let Kind::Every(i) = s.kind else {
        return Some(s.next_run);
    };
    let running = !s.running.is_empty();
    if running && s.overlap != Overlap::Concurrent {
        if s.backlog > 0 {
            return None;
        }
        loop {
            if s.overlap == Overlap::Queue && s.queued.is_none() {
                s.queued = Some(s.next_run);
            } else {
                s.overlaps += 1;
            }
            s.next_run += i;
            if s.next_run > now {
                break;
            }
        }
        s.fire_at = Some(s.next_run);
        return None;
    }
    if !running && let Some(q) = s.queued.take() {
        s.fire_at = Some(s.next_run);
        return Some(q);
    }
    if s.backlog > 0 {
        return Some(catch_up_step(s, i, now));
    }
    let mut points = vec![s.next_run];
    while points.last().unwrap() + i <= now {
        points.push(points.last().unwrap() + i);
    }
    let n = points.len() as u64;
    let policy = if n == 1 {
        Catchup::Once
    } else if running {
        Catchup::All
    } else {
        s.catchup
    };
    let first = match policy {
        Catchup::Skip => None,
        Catchup::Once => Some(n - 1),
        Catchup::All => Some(n - n.min(1000)),
    };
    let dropped = first.unwrap_or(n);
    if running {
        s.overlaps += dropped;
    } else {
        s.missed += dropped;
    }
    match (first, policy) {
        (None, _) => {
            s.next_run = points[points.len() - 1] + i;
            s.fire_at = Some(s.next_run);
            None
        }
        (Some(f), Catchup::All) => {
            // A catch-up: 1,000 firings in all, from the oldest kept point.
            s.next_run = points[f as usize];
            s.backlog = 1000;
            Some(catch_up_step(s, i, now))
        }
        (Some(f), _) => {
            let nominal = points[f as usize];
            s.next_run = nominal + i;
            s.fire_at = Some(s.next_run);
            Some(nominal)
        }
    }
}

/// The next point of a catch-up fires; the one after it is due at the next tick while the
/// catch-up may fire more, and points coming due meanwhile join it. Caught up, it lasts until
/// its firing ends (`settle`), except under `concurrent`, which waits for no firing.
fn catch_up_step(s: &mut Sched, i: u64, now: u64) -> u64 {
    let nominal = s.next_run;
    s.next_run += i;
    s.backlog -= 1;
    if s.backlog > 0 && s.next_run > now && s.overlap == Overlap::Concurrent {
        s.backlog = 0;
    }
    s.fire_at = Some(s.next_run);
    nominal
}

pub(super) fn new_sched(
    kind: Kind,
    overlap: Overlap,
    catchup: Catchup,
    max_faults: u32,
    first: u64,
) -> Sched {
    Sched {
        kind,
        overlap,
        catchup,
        max_faults,
        next_run: first,
        fire_at: Some(first),
        running: Vec::new(),
        queued: None,
        backlog: 0,
        run_count: 0,
        fault_count: 0,
        consecutive: 0,
        missed: 0,
        overlaps: 0,
        retired_at: None,
    }
}
