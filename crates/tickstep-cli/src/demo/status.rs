//! What the demo reports each second: budget, tasks run and deferred, running commands,
//! schedules fired and faulted, and the world.

use std::time::Duration;

use tickstep::{Runtime, RuntimeStats};

use super::demo_world::{DemoWorldState, describe};
use crate::units::ms;

/// Accumulates per-frame readings between two reports.
pub(crate) struct Sampler {
    last: RuntimeStats,
    steps_seen: u64,
    deferred: u64,
    longest_step: Duration,
}

/// One second's numbers.
#[derive(Debug, Default, Clone)]
pub(crate) struct Second {
    pub(crate) budget: Duration,
    pub(crate) longest_step: Duration,
    pub(crate) tasks_run: u64,
    pub(crate) deferred: u64,
    pub(crate) fired: u64,
    pub(crate) faulted: u64,
    pub(crate) live: usize,
    pub(crate) commands: Vec<String>,
}

impl Sampler {
    pub(crate) fn new(rt: &Runtime) -> Self {
        let last = rt.stats();
        Sampler {
            steps_seen: last.kernel.steps,
            last,
            deferred: 0,
            longest_step: Duration::ZERO,
        }
    }

    /// Called before every frame: adds the last step's deferrals (once per step).
    pub(crate) fn frame(&mut self, rt: &Runtime) {
        let stats = rt.scheduler().stats();
        if stats.steps != self.steps_seen {
            self.steps_seen = stats.steps;
            self.deferred += stats.tasks_deferred;
            self.longest_step = self.longest_step.max(stats.last_step);
        }
    }

    /// The numbers since the previous call.
    pub(crate) fn second(&mut self, rt: &Runtime) -> Second {
        let now = rt.stats();
        let second = Second {
            budget: now.kernel.last_budget,
            longest_step: self.longest_step,
            tasks_run: now.kernel.tasks_run - self.last.kernel.tasks_run,
            deferred: self.deferred,
            fired: now.firings_started - self.last.firings_started,
            faulted: now.firings_faulted - self.last.firings_faulted,
            live: now.schedules_live,
            commands: rt
                .commands()
                .running()
                .into_iter()
                .map(|c| c.name)
                .collect(),
        };
        self.last = now;
        self.deferred = 0;
        self.longest_step = Duration::ZERO;
        second
    }

    /// One status line.
    pub(crate) fn line(&mut self, rt: &Runtime, world: &DemoWorldState, at: Duration) -> String {
        let s = self.second(rt);
        let rooms: Vec<String> = world.rooms.iter().map(describe).collect();
        format!(
            "[{:>4.0}s] budget {} longest step {} | tasks {} run {} deferred | commands: {} | schedules {} live, {} fired, {} faulted | {} | bell {}, vitality {:.1}, lockdowns {}",
            at.as_secs_f64(),
            ms(s.budget),
            ms(s.longest_step),
            s.tasks_run,
            s.deferred,
            s.commands.join(", "),
            s.live,
            s.fired,
            s.faulted,
            rooms.join(" "),
            world.tally.bell_rings.get(),
            world.tally.vitality.get(),
            world.tally.lockdowns.get(),
        )
    }
}
