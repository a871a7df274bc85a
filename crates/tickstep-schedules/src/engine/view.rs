//! An entry's `schedule_info` record (docs/schedules.md §9).

use super::cadence::upcoming;
use super::entry::{Entry, Kind};
use super::interner::Interner;
use crate::ScheduleId;
use crate::info::{NEXT_RUNS_SHOWN, PauseInfo, ScheduleInfo, unix_seconds};

impl Entry {
    /// The `schedule_info` record of this entry at `now` (Unix nanoseconds), its verb named by
    /// `verbs`.
    pub(super) fn info(&self, verbs: &Interner, now: u64) -> ScheduleInfo {
        let x = self.extra.as_deref();
        let ops = self.ops();
        let retired = self.retired();
        let next_run = if self.armed { self.fire_at } else { 0 };
        ScheduleInfo {
            id: ScheduleId::from_raw(self.id),
            target: self.target,
            verb: verbs.name(self.verb).to_string(),
            args: self.args().map(|a| a.to_vec()).unwrap_or_default(),
            owner: self.owner,
            authority: self.owner,
            kind: self.kind,
            interval: if self.kind == Kind::Every {
                self.interval_ns as f64 / 1e9
            } else {
                0.0
            },
            calendar: self.calendar.as_deref().map(crate::CalendarInfo::from),
            created_at: unix_seconds(self.created_at),
            next_run: unix_seconds(next_run),
            last_run: unix_seconds(self.last_run),
            run_count: self.run_count,
            fault_count: self.fault_count,
            consecutive_faults: self.consecutive_faults,
            last_fault: self.last_fault().cloned(),
            missed_count: self.missed_count,
            overlap_count: self.overlap_count,
            last_duration_ns: self.last_duration_ns,
            mean_duration_ns: x.map_or(0, |x| x.window.mean()),
            p99_duration_ns: x.map_or(0, |x| x.window.p99()),
            running_task: self
                .running()
                .iter()
                .find(|r| !r.waiting)
                .and_then(|r| r.run),
            interval_clamped: self.interval_clamped,
            retired: retired.is_some(),
            retire_reason: retired.map(|r| r.reason),
            adaptive: self.adaptive,
            catchup: self.catchup,
            overlap: self.overlap,
            jitter: self.jitter_ns as f64 / 1e9,
            max_faults: self.max_faults,
            pass_elapsed: self.pass_elapsed,
            persist: self.persist,
            player: self.player,
            state: self.state().map(|s| (**s).clone()),
            time_limit: self
                .limits()
                .time_limit_ns
                .map(std::time::Duration::from_nanos),
            tick_limit: self.limits().tick_limit.and_then(std::num::NonZeroU64::new),
            key: self.key().map(ToString::to_string),
            pause: ops.and_then(|o| o.paused.as_ref()).map(|p| PauseInfo {
                by: p.by,
                at: unix_seconds(p.at),
                note: p.note.clone(),
            }),
            paused_missed: ops.map_or(0, |o| o.paused_missed),
            missed: ops.map_or_else(Default::default, |o| o.missed.view(o.paused_missed)),
            trigger_pending: ops.is_some_and(|o| o.trigger),
            backfill: ops
                .and_then(|o| o.backfill)
                .map(|(next, last)| (unix_seconds(next), unix_seconds(last))),
            // Read from the store by `Shared::info`, only when asked (docs/schedules.md §9.11).
            history: Vec::new(),
            catchup_window: self.policies().catchup_window(),
            run_limit: self.policies().run_limit,
            remaining_runs: self.runs_left(),
            on_max_faults: self.policies().on_max_faults,
            next_runs: upcoming(self.cadence_view(), now, NEXT_RUNS_SHOWN)
                .into_iter()
                .map(unix_seconds)
                .collect(),
        }
    }
}
