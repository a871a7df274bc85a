//! What a start, a run's end, a fault, a takeover or an operator's action leaves of a schedule:
//! one of the three files of `Core`'s methods (see [`core`](super::core)).
//!
//! * **A start** ([`Core::record`], [`Core::record_waited`]) — the run is awaited, or its fault
//!   or retirement is recorded.
//! * **An operator's action** from the store's notes, and a pause at `max_faults`
//!   (docs/schedules.md §9.12, §16.6); the engine's own calls are in [`handle`](super::handle).
//!
//! Settling a run: the outcome the host reports decides counters, the adaptive next delay, and
//! whether the schedule retires.
//!
//! * **Returned** — resets `consecutive_faults`. With `adaptive` on, a positive number of seconds
//!   sets the next deadline to that long after the outcome arrived (for a recurring schedule this
//!   replaces only the next interval; the cadence continues from that deadline). Anything else
//!   retires a one-shot as `completed` and leaves a recurring cadence alone.
//! * **Fault / Killed** — counts a fault (`fault_count` for life, `consecutive_faults` since the
//!   last success). `max_faults` consecutive faults (0 = never) retire as `max_faults`; otherwise a
//!   one-shot retires as `completed`, since it will not fire again.
//!
//! A run of a schedule that was stopped or retired meanwhile is ignored, though its outcome still
//! ends the engine's wait for it: a retired entry stops naming the run, whose id the host may
//! give to a new run (docs/schedules.md §7.9).
//!
//! **Overlap `"cancel_other"`** (docs/schedules.md §16.7, [`Core::cancel_running`]): a cadence
//! point that arrives while a firing of its schedule runs ends that firing and starts its own.
//!
//! The engine does not own the host's tasks, so ending a firing is two halves. Here, under the
//! tick's borrow, each firing in flight is settled as a fault of kind `killed` whose value names
//! the point that replaced it — the outcome a kill reports, counted as one (`fault_count`,
//! `consecutive_faults`, `max_faults`, the history) — and its run joins `Runs::cancelled`. The
//! tick then hands each such run to `Runner::cancel` with no borrow held (docs/schedules.md
//! §10.3), and the host stops the task; whatever it reports for the run later is ignored, since
//! the engine no longer waits for it (docs/schedules.md §7.9). A firing still waiting for its
//! durable start (docs/schedules.md §11.42) has no task yet: its place in the running list goes,
//! so it never starts, and it is counted as the same fault.

use tickstep_kernel::clock::Instant;

use super::core::Core;
use super::entry::{Entry, Kind, Retired, Running};
use super::table::Later;
use crate::info::{RetireReason, unix_seconds};
use crate::limits::seconds_to_nanos;
use crate::row_actions::OPERATOR;
use crate::store_rows::OperatorAction;
use crate::{Fault, FaultKind, Firing, ObjId, Outcome, RunId, Value};

/// What happened when the engine tried to start a firing.
pub(super) enum Verdict {
    Started(RunId),
    TargetGone,
    Failed(Fault),
}

impl Verdict {
    /// Counts this start attempt and, when it started, its lateness (docs/observability.md
    /// §1.1, §1.5): immediate starts and those that waited for a durable write alike.
    #[inline]
    fn count(&self, metrics: &crate::metrics::SchedulesMetrics, firing: &Firing, now: u64) {
        match self {
            Verdict::Started(_) => metrics.started(now.saturating_sub(firing.nominal_unix_nanos)),
            Verdict::TargetGone => metrics.target_gone(),
            Verdict::Failed(_) => metrics.start_failed(),
        }
    }
}

impl Core {
    /// Step 3: the start's consequence.
    pub(super) fn record(&mut self, firing: &Firing, verdict: Verdict, now: u64, mono: Instant) {
        verdict.count(&self.metrics, firing, now);
        let id = firing.schedule.get();
        match verdict {
            Verdict::Started(run) => {
                let Some(e) = self.table.get_mut(id).filter(|e| e.is_live()) else {
                    // Stopped or retired while starting: the task runs, its result is ignored.
                    return;
                };
                e.extra_mut().running.push(Running {
                    run: Some(run),
                    nominal: firing.nominal_unix_nanos,
                    // Never 0: 0 marks a start a clean shutdown knows never happened.
                    started_unix: now.max(1),
                    waiting: false,
                });
                self.runs.await_run(run, id, mono);
                self.mark_dirty(id);
            }
            Verdict::TargetGone => self.retire(id, RetireReason::InvalidTarget, now),
            Verdict::Failed(fault) => {
                if self.table.get(id).is_some_and(super::entry::Entry::is_live) {
                    self.fault(id, fault, now);
                    self.firing_ended(id, now);
                }
            }
        }
    }

    /// The start's consequence for a firing that waited: the run it waited as starts, or its
    /// place goes and the fault or retirement is recorded as for an immediate start. The start
    /// writes nothing: the run id is on disk already, with the update that made the point served
    /// (docs/schedules.md §11.42), and one write per firing is what the store was built around.
    pub(super) fn record_waited(
        &mut self,
        firing: &Firing,
        verdict: Verdict,
        (now, mono): (u64, Instant),
    ) {
        verdict.count(&self.metrics, firing, now);
        let id = firing.schedule.get();
        let Some(e) = self.table.get_mut(id) else {
            return;
        };
        let live = e.is_live();
        let Some(at) = e.waiting_start(firing.run) else {
            return;
        };
        let running = &mut e.extra_mut().running;
        if let (Verdict::Started(run), true) = (&verdict, live) {
            running[at].waiting = false;
            running[at].started_unix = now.max(1);
            self.runs.await_run(*run, id, mono);
            return;
        }
        running.remove(at);
        match verdict {
            Verdict::TargetGone => self.retire(id, RetireReason::InvalidTarget, now),
            Verdict::Failed(fault) if live => {
                self.fault(id, fault, now);
                self.firing_ended(id, now);
            }
            // Started on a schedule retired meanwhile (its row is gone): the task runs, its
            // result is ignored (docs/schedules.md §3.4). A start that failed there changes nothing.
            Verdict::Started(_) | Verdict::Failed(_) => {}
        }
    }

    pub(super) fn settle(&mut self, run: RunId, outcome: Outcome, now: u64, mono: Instant) -> bool {
        let Some(record) = self.runs.finish(run) else {
            return false;
        };
        let id = record.schedule;
        let Some(e) = self.table.get_mut(id) else {
            return false;
        };
        // The run is over even when its schedule retired meanwhile: an entry still naming it
        // would report it as `running_task`, and expiring later would forget whichever new run
        // the host gave the same id (docs/schedules.md §7.9).
        let served = e
            .running()
            .iter()
            .find(|r| r.run == Some(run))
            .map(|r| (r.nominal, r.started_unix));
        e.extra_mut().running.retain(|r| r.run != Some(run));
        if !e.is_live() {
            return false;
        }
        let x = e.extra_mut();
        if let Some(started) = record.started {
            let nanos = u64::try_from((mono - started).as_nanos()).unwrap_or(u64::MAX);
            x.window.push(nanos);
            e.last_duration_ns = nanos;
        }
        self.metrics.settled(&outcome);
        match outcome {
            Outcome::Returned(value) => self.succeed(id, &value, now),
            Outcome::Fault { kind, value } => self.fault(id, Fault { kind, value }, now),
            Outcome::Killed => self.fault(
                id,
                Fault {
                    kind: FaultKind::Killed,
                    value: Value::from("killed"),
                },
                now,
            ),
        }
        if let Some((nominal, started)) = served {
            self.store
                .record_history((&self.table, id), nominal, started, now);
        }
        self.firing_ended(id, now);
        self.mark_dirty(id);
        true
    }

    /// A firing of `id` ended — settled, taken over, or failed to start. With none left
    /// running, a point waiting behind it (queued, or the next point of a catch-up, which is
    /// due) is armed to start now; a catch-up whose next point is not due yet has caught up and
    /// is over, so the points after it follow overlap again (docs/schedules.md §4.5, §13.64).
    pub(super) fn firing_ended(&mut self, id: u64, now: u64) {
        let Some(e) = self.table.get_mut(id) else {
            return;
        };
        if e.is_live() && e.is_spent() {
            // Its last run has settled: it retires (docs/schedules.md §16.5).
            self.spent(id, now);
            return;
        }
        if !e.is_live() || !e.kind.is_recurring() || e.is_running() {
            return;
        }
        if e.queued().is_some() || (e.backlog > 0 && e.next_run <= now) {
            self.table.arm(id, now);
        } else if e.backlog > 0 {
            e.backlog = 0;
            let armed = e.cadence_view().waiting;
            self.mark_dirty(id);
            if !armed {
                // Popped early by its jitter while the catch-up's last firing ran.
                let mut later = Later::new();
                self.arm_next(id, now, &mut later);
                for (id, at) in later {
                    self.table.arm(id, at);
                }
            }
        }
    }

    fn succeed(&mut self, id: u64, value: &Value, now: u64) {
        let Some(e) = self.table.get_mut(id) else {
            return;
        };
        e.consecutive_faults = 0;
        let delay = if e.adaptive {
            value.as_seconds().filter(|&s| s > 0.0)
        } else {
            None
        };
        let kind = e.kind;
        match delay {
            Some(seconds) => {
                let Some(next) = seconds_to_nanos(seconds).and_then(|d| now.checked_add(d)) else {
                    self.out_of_range(id, now);
                    return;
                };
                let e = self.table.get_mut(id).expect("checked above");
                e.next_run = next;
                e.backlog = 0;
                let mut later = Later::new();
                self.arm_next(id, now, &mut later);
                for (id, at) in later {
                    self.table.arm(id, at);
                }
            }
            None if kind == Kind::At => self.retire(id, RetireReason::Completed, now),
            None => {}
        }
    }

    /// Counts a fault; retires on `max_faults`, and retires a settled one-shot.
    pub(super) fn fault(&mut self, id: u64, fault: Fault, now: u64) {
        let Some(e) = self.table.get_mut(id) else {
            return;
        };
        e.fault_count = e.fault_count.saturating_add(1);
        e.consecutive_faults = e.consecutive_faults.saturating_add(1);
        e.extra_mut().last_fault = Some(Fault {
            kind: fault.kind,
            value: crate::limits::storable_fault_value(fault.value),
        });
        self.mark_dirty(id);
        let e = self.table.get(id).expect("checked above");
        if e.max_faults > 0 && e.consecutive_faults >= e.max_faults {
            let pause =
                e.kind.is_recurring() && e.policies().on_max_faults == crate::OnMaxFaults::Pause;
            if pause {
                // It sleeps until an operator resumes it (docs/schedules.md §16.6).
                let note = max_faults_note(e.consecutive_faults, &fault_kept(e));
                self.pause_for_faults(id, &note, now);
            } else {
                self.retire(id, RetireReason::MaxFaults, now);
            }
        } else if e.kind == Kind::At && !e.is_running() {
            self.retire(id, RetireReason::Completed, now);
        }
    }

    /// The next deadline would pass the end of time: a fault, and retirement for that reason.
    pub(super) fn out_of_range(&mut self, id: u64, now: u64) {
        let Some(e) = self.table.get_mut(id) else {
            return;
        };
        e.fault_count = e.fault_count.saturating_add(1);
        e.consecutive_faults = e.consecutive_faults.saturating_add(1);
        e.extra_mut().last_fault = Some(Fault {
            kind: FaultKind::DeadlineOutOfRange,
            value: Value::from("next deadline is past 18446744073 (Unix seconds)"),
        });
        self.retire(id, RetireReason::DeadlineOutOfRange, now);
    }

    /// Retires `id`: it will not fire again; its entry stays for the retention period.
    pub(super) fn retire(&mut self, id: u64, reason: RetireReason, now: u64) {
        let Some(e) = self.table.get_mut(id).filter(|e| e.is_live()) else {
            return;
        };
        e.armed = false;
        e.backlog = 0;
        self.metrics.retired(reason);
        let e = self.table.get_mut(id).expect("checked above");
        let persisted = e.persist && self.store.backend.is_some();
        let owner = e.owner;
        let x = e.extra_mut();
        x.queued = None;
        x.retired = Some(Retired { reason, at: now });
        if let Some(key) = x.key.clone() {
            // Retirement frees the key at once (docs/schedules.md §5.16).
            self.keys.unindex(owner, &key, id);
        }
        self.retention.keep(id, now);
        if persisted {
            // Retired entries are never saved: the row goes at the next group commit.
            self.store.doomed_rows.push(id);
        }
        tracing::debug!(schedule = id, reason = reason.as_str(), "schedule retired");
    }

    /// Ends every firing of `id` in flight because cadence point `point` arrived under overlap
    /// `"cancel_other"`. Returns whether the schedule is still live and unpaused, so the point
    /// may start: settling the killed firings may have retired or paused it (`max_faults`,
    /// docs/schedules.md §16.6).
    pub(super) fn cancel_running(&mut self, id: u64, point: u64, now: u64) -> bool {
        let Some(e) = self.table.get_mut(id) else {
            return false;
        };
        let why = || Fault {
            kind: FaultKind::Killed,
            value: Value::Str(format!(
                "killed: overlap \"cancel_other\" started the point at {}",
                crate::info::unix_seconds(point)
            )),
        };
        let waiting = e.running().iter().filter(|r| r.waiting).count();
        let runs: Vec<_> = e
            .running()
            .iter()
            .filter(|r| !r.waiting)
            .filter_map(|r| r.run)
            .collect();
        if waiting > 0 {
            e.extra_mut().running.retain(|r| !r.waiting);
            for _ in 0..waiting {
                self.fault(id, why(), now);
            }
            self.mark_dirty(id);
        }
        for run in runs {
            let Some(started) = self.runs.awaited.get(&run).map(|r| r.started) else {
                continue;
            };
            let mono = self.runs.tick_mono.or(started);
            let Some(mono) = mono else {
                continue;
            };
            let Fault { kind, value } = why();
            self.settle(run, Outcome::Fault { kind, value }, now, mono);
            self.runs.cancelled.push(run);
        }
        self.table
            .get(id)
            .is_some_and(|e| e.is_live() && !e.is_paused() && !e.is_spent())
    }

    /// Settles the `firings` a claimed schedule's row said were running on node `from` (`None`:
    /// the row had no holder): each counts in `fault_count`, the last is `last_fault`;
    /// `consecutive_faults` is left alone. A one-shot will not fire again and retires
    /// `"completed"`, as a faulting one-shot does (docs/schedules.md §7.4); for a recurring schedule
    /// the firings have ended (a point waiting behind them is armed now).
    pub(super) fn settle_taken_over(
        &mut self,
        id: u64,
        firings: usize,
        from: Option<u64>,
        now: u64,
    ) {
        // The loader took them off the running list already; a parked start stays there.
        let Some(e) = self.table.get_mut(id) else {
            return;
        };
        if !e.is_live() {
            return;
        }
        let value = match from {
            Some(node) => format!("taken over from node {node}, whose lease ran out"),
            None => "taken over from a node that handed it back while it ran".to_string(),
        };
        e.fault_count = e
            .fault_count
            .saturating_add(u64::try_from(firings).unwrap_or(u64::MAX));
        e.extra_mut().last_fault = Some(Fault {
            kind: FaultKind::TakenOver,
            value: Value::Str(value),
        });
        let kind = e.kind;
        tracing::info!(
            schedule = id,
            firings,
            from,
            "settled the firings a schedule taken over from another node had in flight"
        );
        self.mark_dirty(id);
        if kind == Kind::At {
            self.retire(id, RetireReason::Completed, now);
        } else {
            self.firing_ended(id, now);
        }
    }

    /// Pauses `id` at `max_faults` under `on_max_faults = "pause"` (docs/schedules.md §16.6): by
    /// no one (`#-1`), as the engine's own act, written with the next group commit as any
    /// change an outcome makes.
    pub(super) fn pause_for_faults(&mut self, id: u64, note: &str, now: u64) {
        if self
            .table
            .get_mut(id)
            .is_some_and(|e| e.pause(ObjId(-1), note, now))
        {
            self.mark_dirty(id);
        }
    }

    /// Resumes `id` if paused (docs/schedules.md §9.4); whether it was.
    pub(super) fn resume_entry(&mut self, id: u64, now: u64) -> bool {
        let Some(e) = self.table.get_mut(id) else {
            return false;
        };
        let Some(paused) = e.extra_mut().ops.paused.take() else {
            return false;
        };
        // A catch-up the pause interrupted starts afresh, with the points of the pause
        // (docs/schedules.md §4.5).
        let idle_recurring = e.kind.is_recurring() && !e.is_running() && e.queued().is_none();
        let step = e.step().filter(|_| idle_recurring && e.next_run <= now);
        if let Some(step) = step {
            let arrived = step.arrived(e.next_run, e.next_run, now);
            // What the catch-up drops is counted missed as `paused` (`Core::count_missed`).
            self.operator.catching_up_paused = true;
            let due = e.next_run;
            self.catch_up(id, &step, arrived, due, now);
            self.operator.catching_up_paused = false;
        } else if paused.armed {
            let at = e.fire_at;
            self.table.arm(id, at);
        }
        true
    }

    /// Applies an action an operator took from outside the engine, found in the store's notes
    /// (docs/schedules.md §9.12): as the engine's own call would, with the operator's authority
    /// (the store's: `#-1` pauses). The store already holds the action's state for a restart;
    /// the schedule is marked so the store gets the engine's view of it too. An action that
    /// does not apply (a backfill of a one-shot, say) is logged and dropped.
    ///
    /// A note is applied once: the schedule's operator state records the newest note it
    /// includes (`note`), which the store's own write of the action already carries.
    pub(super) fn apply_operator_note(
        &mut self,
        seq: u64,
        id: u64,
        action: OperatorAction,
        now: u64,
    ) {
        let Some(e) = self.table.get_mut(id).filter(|e| e.is_live() && e.persist) else {
            return;
        };
        if e.ops().is_some_and(|o| o.note >= seq) {
            return;
        }
        e.extra_mut().ops.note = seq;
        let applied = match action {
            OperatorAction::Pause { note } => {
                e.pause(OPERATOR, &note, now);
                Ok(())
            }
            OperatorAction::Resume => {
                self.resume_entry(id, now);
                Ok(())
            }
            OperatorAction::Trigger => {
                e.trigger();
                Ok(())
            }
            OperatorAction::Backfill { from, to } => e
                .backfill((from, to), (unix_seconds(from), unix_seconds(to)))
                .map(drop),
        };
        match applied {
            Ok(()) => {
                tracing::info!(schedule = id, "operator action applied from the store");
                self.mark_dirty(id);
                if self
                    .table
                    .get(id)
                    .is_some_and(super::entry::Entry::has_operator_firings)
                {
                    self.operator.want_pass(id, now);
                }
            }
            Err(error) => {
                tracing::warn!(%error, schedule = id, "an operator's action from the store does not apply");
            }
        }
    }
}

/// The fault an entry keeps as `last_fault`, which [`Core::fault`] has just set.
fn fault_kept(e: &Entry) -> Fault {
    e.last_fault().cloned().unwrap_or(Fault {
        kind: FaultKind::Error,
        value: Value::Int(0),
    })
}

/// The pause note of a schedule paused at `max_faults` (docs/schedules.md §16.6): how many
/// faults in a row, and the last one's kind and value, within the note rule (at most
/// [`MAX_NOTE_BYTES`](crate::MAX_NOTE_BYTES), no control character; docs/schedules.md §9.5).
fn max_faults_note(consecutive: u32, fault: &crate::Fault) -> String {
    let text = format!(
        "max_faults: {consecutive} faults in a row, the last {}: {}",
        fault.kind.as_str(),
        crate::limits::preview(&fault.value)
    );
    let mut note = String::with_capacity(text.len());
    for c in text.chars().map(|c| if c.is_control() { ' ' } else { c }) {
        if note.len() + c.len_utf8() > crate::MAX_NOTE_BYTES {
            break;
        }
        note.push(c);
    }
    note
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_max_faults_note_names_the_fault_within_the_note_rule() {
        let fault = crate::Fault {
            kind: crate::FaultKind::Error,
            value: Value::from("E_DIV\u{7}"),
        };
        let note = max_faults_note(3, &fault);
        assert!(
            note.contains("3 faults") && note.contains("error") && note.contains("E_DIV"),
            "{note}"
        );
        assert!(!note.chars().any(char::is_control), "{note:?}");
        let long = crate::Fault {
            kind: crate::FaultKind::Error,
            value: Value::Str("é".repeat(500)),
        };
        assert!(max_faults_note(50, &long).len() <= crate::MAX_NOTE_BYTES);
    }
}
