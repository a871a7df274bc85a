//! An entry's `schedule_info` record (docs/schedules.md §9).

use super::cadence::upcoming;
use super::entry::{Entry, Kind};
use super::interner::Interner;
use crate::ScheduleId;
use crate::info::{NEXT_RUNS_SHOWN, PauseInfo, ScheduleInfo, unix_seconds};

/// The `schedule_info` record of entry `e` at `now` (Unix nanoseconds), its verb named by
/// `verbs`.
pub(super) fn schedule_info(e: &Entry, verbs: &Interner, now: u64) -> ScheduleInfo {
    let x = e.extra.as_deref();
    let ops = e.ops();
    let retired = e.retired();
    let next_run = if e.armed { e.fire_at } else { 0 };
    ScheduleInfo {
        id: ScheduleId::from_raw(e.id),
        target: e.target,
        verb: verbs.name(e.verb).to_string(),
        args: e.args().map(|a| a.to_vec()).unwrap_or_default(),
        owner: e.owner,
        authority: e.owner,
        kind: e.kind,
        interval: if e.kind == Kind::Every {
            e.interval_ns as f64 / 1e9
        } else {
            0.0
        },
        calendar: e.calendar.as_deref().map(crate::CalendarInfo::from),
        created_at: unix_seconds(e.created_at),
        next_run: unix_seconds(next_run),
        last_run: unix_seconds(e.last_run),
        run_count: e.run_count,
        fault_count: e.fault_count,
        consecutive_faults: e.consecutive_faults,
        last_fault: e.last_fault().cloned(),
        missed_count: e.missed_count,
        overlap_count: e.overlap_count,
        last_duration_ns: e.last_duration_ns,
        mean_duration_ns: x.map_or(0, |x| x.window.mean()),
        p99_duration_ns: x.map_or(0, |x| x.window.p99()),
        running_task: e.running().iter().find(|r| !r.waiting).and_then(|r| r.run),
        interval_clamped: e.interval_clamped,
        retired: retired.is_some(),
        retire_reason: retired.map(|r| r.reason),
        adaptive: e.adaptive,
        catchup: e.catchup,
        overlap: e.overlap,
        jitter: e.jitter_ns as f64 / 1e9,
        max_faults: e.max_faults,
        pass_elapsed: e.pass_elapsed,
        persist: e.persist,
        player: e.player,
        state: e.state().map(|s| (**s).clone()),
        time_limit: e
            .limits()
            .time_limit_ns
            .map(std::time::Duration::from_nanos),
        tick_limit: e.limits().tick_limit.and_then(std::num::NonZeroU64::new),
        key: e.key().map(ToString::to_string),
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
        catchup_window: e.policies().catchup_window(),
        run_limit: e.policies().run_limit,
        remaining_runs: e.runs_left(),
        on_max_faults: e.policies().on_max_faults,
        next_runs: upcoming(e.cadence_view(), now, NEXT_RUNS_SHOWN)
            .into_iter()
            .map(unix_seconds)
            .collect(),
    }
}
