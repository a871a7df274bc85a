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

use super::core::Core;
use super::entry::{Kind, Retired};
use super::handle::Schedules;
use super::table::Later;
use crate::info::{HISTORY_KEPT, RetireReason};
use crate::limits::seconds_to_nanos;
use crate::row::HistoryRow;
use crate::{Fault, FaultKind, Outcome, RunId, Value};

impl Schedules {
    /// Reports how run `run` ended. Returns `false` (and changes nothing) when the engine is not
    /// waiting for that run: unknown, already reported, or its schedule was stopped or retired
    /// (docs/schedules.md §3.4 and §11.5).
    ///
    /// A conflict retry is not an outcome: report once per firing, after the last attempt.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_schedules::kernel::clock::ManualClock;
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// use tickstep_schedules::{Outcome, Options, Schedules, Value};
    ///
    /// let clock = ManualClock::new();
    /// let world = TestWorld::new();
    /// let wiz = world.add_wizard();
    /// world.add_verb(wiz, "lockup");
    /// let runner = TestRunner::new();
    /// let engine = Schedules::in_memory(clock.clone(), world, runner.clone(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let now = engine.now_unix_seconds();
    /// let id = txn.schedule_at(wiz, "lockup", now, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// engine.tick().unwrap();
    /// let run = runner.started()[0].0;
    /// // Adaptive (the default for schedule_at): returning 30 fires again in 30 s.
    /// assert!(engine.report(run, Outcome::Returned(Value::Int(30))));
    /// assert!(!engine.report(run, Outcome::Returned(Value::Int(0))), "reported twice");
    /// clock.advance(Duration::from_secs(30));
    /// engine.tick().unwrap();
    /// assert_eq!(runner.started().len(), 2);
    /// ```
    pub fn report(&self, run: RunId, outcome: Outcome) -> bool {
        let shared = &*self.shared;
        let now = shared.clock.unix_nanos();
        let mono = shared.clock.now();
        shared.core.borrow_mut().settle(run, outcome, now, mono)
    }
}

impl Core {
    pub(super) fn settle(
        &mut self,
        run: RunId,
        outcome: Outcome,
        now: u64,
        mono: tickstep_kernel::clock::Instant,
    ) -> bool {
        let Some(record) = self.runs.remove(&run) else {
            return false;
        };
        self.interrupted.retain(|f| f.run != run);
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
            self.record_history(id, nominal, started, now);
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

    /// Queues the settled firing of `id` for its history, with the next group commit
    /// (docs/schedules.md §9.11); its fault, if any, is the schedule's `last_fault` just set.
    /// Only a persistent schedule on a store keeps one.
    fn record_history(&mut self, id: u64, nominal: u64, started: u64, now: u64) {
        if self.store.is_none() {
            return;
        }
        let Some(e) = self.table.get(id).filter(|e| e.persist) else {
            return;
        };
        let settled = e.settled();
        let fault = if e.consecutive_faults > 0 {
            e.last_fault().cloned()
        } else {
            None
        };
        self.history.push(HistoryRow {
            schedule: id,
            slot: u32::try_from(settled % HISTORY_KEPT).expect("below HISTORY_KEPT"),
            started,
            ended: now,
            nominal,
            fault,
        });
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
        let persisted = e.persist && self.store.is_some();
        let owner = e.owner;
        let x = e.extra_mut();
        x.queued = None;
        x.retired = Some(Retired { reason, at: now });
        if let Some(key) = x.key.clone() {
            // Retirement frees the key at once (docs/schedules.md §5.16).
            self.unindex(owner, &key, id);
        }
        self.retired
            .push_back((now.saturating_add(self.retention_ns), id));
        if persisted {
            // Retired entries are never saved: the row goes at the next group commit.
            self.doomed_rows.push(id);
        }
        tracing::debug!(schedule = id, reason = reason.as_str(), "schedule retired");
    }
}

/// The fault an entry keeps as `last_fault`, which [`Core::fault`] has just set.
fn fault_kept(e: &super::entry::Entry) -> Fault {
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
