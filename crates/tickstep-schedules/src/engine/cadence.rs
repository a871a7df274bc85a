//! Deadline arithmetic: which cadence points have passed, what overlap and catch-up make of them,
//! where jitter puts the next firing, and the tick's plan that visits due entries (step 1 of
//! [`tick`](super::tick)) and operator firings. One of the three files of `Core`'s methods (see
//! [`core`](super::core)).
//!
//! A recurring schedule's cadence is computed from its previous deadline, never from when a firing
//! ended, so it stays in phase however long firings take. When a tick visits a due entry whose
//! cadence point is `P`, the points that have passed are `P, P+i, …, P+(n-1)i` with
//! `n = (now - D) / i + 1`, where `D` is the later of `P` and its jittered deadline (lateness
//! caused by jitter is not lateness of the scheduler):
//!
//! * **while a firing runs** (overlap): every one of the `n` points "arrived mid-firing". `skip`
//!   drops them all; `queue` keeps the first waiting if nothing waits yet and drops the rest;
//!   `concurrent` starts a firing for each (at most 1,000; older ones are dropped). Dropped points
//!   count in `overlap_count`.
//! * **with nothing running** (catch-up): `n == 1` is an ordinary, slightly late firing under every
//!   policy. `n > 1` means points were missed (the server was down, or the scheduler stalled past
//!   a whole interval): `skip` drops all `n` and waits for the first point after now; `once` fires
//!   once now for all of them (serving the latest); `all` keeps the latest 1,000 and starts a
//!   catch-up. Dropped points count in `missed_count`.
//! * **during a catch-up** (`all`): it fires its points in order, one per tick, each waiting for
//!   the previous firing unless `concurrent`, and every point that comes due meanwhile joins it:
//!   a point due while a catch-up firing runs waits its turn instead of counting as an overlap
//!   (docs/schedules.md §4.5, §13.64). It ends once it has caught up and its last firing has
//!   ended (`Core::firing_ended`; at once under `concurrent`), or after 1,000 firings in all
//!   (docs/schedules.md §13.65); `backlog` holds the firings it may still make.
//!
//! A calendar schedule (`cron`) goes through the same code with its points searched instead of
//! computed: `n` is the count of its real points from `P` to now (docs/schedules.md §14.13),
//! and "the point after" is the calendar's next one.
//!
//! Points past the end of 64-bit Unix nanoseconds retire the schedule with
//! `deadline_out_of_range` (a fault) when the engine computes them: a due point fires first, even
//! when the point after it is out of range (the last representable point fires; the schedule
//! retires as that firing starts, which is when its next deadline would be armed).

use crate::MissedReason;
use crate::info::RetireReason;
use std::time::Duration;

use super::core::Core;
use super::entry::Kind;
use super::table::Later;
use crate::options::MAX_CATCHUP_FIRINGS;
use crate::store_rows::OpsRow;
use crate::{Catchup, Firing, Overlap, RunId, ScheduleId};

pub(super) use crate::fire_times::{Arrived, CadenceView, Step, upcoming};

impl Core {
    /// Arms `id` for its next cadence point, jittered.
    pub(super) fn arm_next(&mut self, id: u64, now: u64, later: &mut Later) {
        let Some((point, jitter)) = self.table.get(id).map(|e| (e.next_run, e.jitter_ns)) else {
            return;
        };
        let at = self.settings.jittered(point, jitter, now);
        self.table.arm_at(id, at, now, later);
    }

    /// Handles one due entry: returns the firing to start, if any, having already updated the
    /// cadence (the next deadline is armed as the firing starts).
    pub(super) fn visit(&mut self, id: u64, now: u64, later: &mut Later) -> Option<Firing> {
        let e = self.table.get(id)?;
        if !e.is_live() {
            return None;
        }
        if e.is_spent() {
            // Armed again behind its last run (a queued point, a catch-up, an adaptive delay):
            // it fires no more (docs/schedules.md §16.5).
            self.spent(id, now);
            return None;
        }
        match e.kind {
            // A one-shot stays disarmed while it runs; its outcome retires or re-arms it.
            Kind::At => Some(self.start(id, e.next_run, now)),
            Kind::Every | Kind::Cron => self.visit_recurring(id, now, later),
        }
    }

    /// Sets the next cadence point of `id` at `now`. A calendar under `gap = "skip"` counts the
    /// gaps whose wall times it passed without firing as missed, reason `dst_gap`
    /// (docs/schedules.md §14.15): every move of the cadence goes through here, forward, so
    /// each gap is counted once.
    pub(super) fn set_next_run(&mut self, id: u64, next: u64, now: u64) {
        let Some(e) = self.table.get_mut(id) else {
            return;
        };
        let from = std::mem::replace(&mut e.next_run, next);
        if let Some(calendar) = e.calendar.as_deref()
            && next > from
        {
            let gaps = calendar.gaps_skipped(from, next);
            self.count_missed(id, MissedReason::DstGap, gaps, now);
        }
    }

    /// Counts `points` points of `id` that passed at `now` without a firing of their own, for
    /// `reason`: the one place a dropped point is counted, so that the counts by reason add up
    /// to `missed_count` (catch-up, catch-up window, paused) and `overlap_count` (overlap), and
    /// the metric's to both (docs/schedules.md §9.15, docs/observability.md §1.4). Points a
    /// resume drops passed while the schedule was paused, whichever rule drops them.
    pub(super) fn count_missed(&mut self, id: u64, reason: MissedReason, points: u64, now: u64) {
        if points == 0 {
            return;
        }
        let reason = match reason {
            MissedReason::Catchup | MissedReason::CatchupWindow
                if self.operator.catching_up_paused =>
            {
                MissedReason::Paused
            }
            reason => reason,
        };
        let Some(e) = self.table.get_mut(id) else {
            return;
        };
        match reason {
            MissedReason::Overlap => e.overlap_count = e.overlap_count.saturating_add(points),
            // The schedule did what its DST policy says: not in `missed_count`
            // (docs/schedules.md §14.15).
            MissedReason::DstGap => {}
            MissedReason::Catchup | MissedReason::CatchupWindow | MissedReason::Paused => {
                e.missed_count = e.missed_count.saturating_add(points);
            }
        }
        let ops = &mut e.extra_mut().ops;
        if reason == MissedReason::Paused {
            ops.paused_missed = ops.paused_missed.saturating_add(points);
        }
        ops.missed.add(reason, points, now);
        self.metrics.missed(reason, points);
        self.mark_dirty(id);
    }

    fn visit_recurring(&mut self, id: u64, now: u64, later: &mut Later) -> Option<Firing> {
        let e = self.table.get(id)?;
        let step = e.step()?;
        let point = e.next_run;
        // Lateness counts from when the point was due: jitter that moved it later is not the
        // scheduler being late, and jitter that moved it earlier does not make later points
        // arrive sooner.
        let due = point.max(e.fire_at);
        let running = e.is_running();
        let overlap = e.overlap;
        let catching_up = e.backlog > 0;
        if running && overlap != Overlap::Concurrent {
            if catching_up {
                // A point due during a catch-up is part of it, not an overlap of it: it waits
                // for the running firing, whose end re-arms the entry (docs/schedules.md §4.5).
                return None;
            }
            if overlap == Overlap::CancelOther {
                return self.cancel_other(id, &step, (point, due), now, later);
            }
            let arrived = step.arrived(point, due, now);
            let n = arrived.count;
            let take_queue_slot = overlap == Overlap::Queue && e.queued().is_none();
            let e = self.table.get_mut(id)?;
            let dropped = if take_queue_slot {
                e.extra_mut().queued = Some(point);
                n - 1
            } else {
                n
            };
            self.count_missed(id, MissedReason::Overlap, dropped, now);
            self.mark_dirty(id);
            return self.move_cadence(id, arrived.end, now, later);
        }
        if !running && let Some(queued) = e.queued() {
            self.table.get_mut(id)?.extra_mut().queued = None;
            if point <= now {
                self.table.arm_at(id, point, now, later);
            } else {
                self.arm_next(id, now, later);
            }
            return Some(self.start(id, queued, now));
        }
        if catching_up {
            return self.catch_up_step(id, &step, now, later);
        }
        // Only a point older than the window needs the window's count (docs/schedules.md §16.2).
        let policy = e.catchup;
        let windowed = e
            .policies()
            .catchup_window_ns
            .is_some_and(|window| now.saturating_sub(window) > due);
        let mut arrived = step.arrived(point, due, now);
        if windowed {
            let Some(left) = self.within_window(id, &step, arrived, due, now) else {
                // Every point was older than the catch-up window: missed, none fired.
                if self.table.get(id).is_some_and(super::entry::Entry::is_live) {
                    self.arm_next(id, now, later);
                }
                return None;
            };
            arrived = left;
        }
        let n = arrived.count;
        let catchup = if n == 1 {
            Catchup::Once
        } else if running {
            // Concurrent and busy: these points arrived mid-firing, and each starts one.
            Catchup::All
        } else {
            policy
        };
        let reason = if running {
            MissedReason::Overlap
        } else {
            MissedReason::Catchup
        };
        let dropped = match catchup {
            Catchup::Skip => n,
            Catchup::Once => n - 1,
            Catchup::All => {
                // The kept points become a catch-up, fired one per tick from the oldest.
                let dropped = self.begin_catch_up(id, &step, arrived, Catchup::All, now)?;
                self.count_missed(id, reason, dropped, now);
                return self.catch_up_step(id, &step, now, later);
            }
        };
        self.count_missed(id, reason, dropped, now);
        if catchup == Catchup::Skip {
            return self.move_cadence(id, arrived.end, now, later);
        }
        // The fired point has arrived (it is at most now), so it is representable.
        let nominal = arrived.latest;
        let Some(end) = arrived.end else {
            return Some(self.start_last(id, nominal, now));
        };
        self.set_next_run(id, end, now);
        self.arm_next(id, now, later);
        Some(self.start(id, nominal, now))
    }

    /// Drops the `arrived` points of `id` (from its `next_run`, the first due at `due`) that are
    /// older than its catch-up window at `now`, counting each missed with reason
    /// `catchup_window` (docs/schedules.md §16.2), and moves `next_run` to the first point left.
    /// Returns the points left, which the catch-up rules then take as any arrived points; `None`
    /// when none is left (the cadence then waits for the point after them, unarmed, or the
    /// schedule retired running off the end of time). A point is older than the window when
    /// more than the window has passed since it was due.
    fn within_window(
        &mut self,
        id: u64,
        step: &Step,
        arrived: Arrived,
        due: u64,
        now: u64,
    ) -> Option<Arrived> {
        let e = self.table.get(id)?;
        let Some(window) = e.policies().catchup_window_ns else {
            return Some(arrived);
        };
        // The points due at or before `cutoff` are more than `window` old.
        let Some(cutoff) = now.checked_sub(window).and_then(|t| t.checked_sub(1)) else {
            return Some(arrived);
        };
        if due > cutoff {
            return Some(arrived);
        }
        let point = e.next_run;
        let old = step.arrived(point, due, cutoff).count.min(arrived.count);
        self.count_missed(id, MissedReason::CatchupWindow, old, now);
        self.mark_dirty(id);
        if old == arrived.count {
            match arrived.end {
                Some(end) => self.set_next_run(id, end, now),
                None => self.out_of_range(id, now),
            }
            return None;
        }
        // The points left are the last `count - old`, so the first of them is representable.
        let first = step.nth(point, old)?;
        self.set_next_run(id, first, now);
        Some(step.arrived(first, first, now))
    }

    /// Overlap `"cancel_other"` (docs/schedules.md §16.7): the points from `point` (due at
    /// `due`) arrived while a firing of `id` runs. The running firings are killed, the newest
    /// point starts, and the older ones, which arrived mid-firing and start nothing, count in
    /// `overlap_count`. Nothing starts when the kills retired or paused the schedule.
    fn cancel_other(
        &mut self,
        id: u64,
        step: &Step,
        (point, due): (u64, u64),
        now: u64,
        later: &mut Later,
    ) -> Option<Firing> {
        let arrived = step.arrived(point, due, now);
        if !self.cancel_running(id, arrived.latest, now) {
            return None;
        }
        self.count_missed(id, MissedReason::Overlap, arrived.count - 1, now);
        self.mark_dirty(id);
        let nominal = arrived.latest;
        let Some(end) = arrived.end else {
            return Some(self.start_last(id, nominal, now));
        };
        self.set_next_run(id, end, now);
        self.arm_next(id, now, later);
        Some(self.start(id, nominal, now))
    }

    /// Fires the next point of `id`'s catch-up (its `next_run`, which is due) and spends one of
    /// the catch-up's firings (docs/schedules.md §4.5). The catch-up goes on while its points
    /// keep coming due, one per tick, each waiting for the previous firing unless
    /// `overlap = "concurrent"`; once the point after this one is not yet due, it has caught up,
    /// and it ends when this firing ends with no point due (`Core::firing_ended`) — at once
    /// under `"concurrent"`, which waits for no firing. It also ends after its last firing
    /// ([`MAX_CATCHUP_FIRINGS`] in all); the points after that are treated as any points are
    /// (docs/schedules.md §13.65).
    fn catch_up_step(
        &mut self,
        id: u64,
        step: &Step,
        now: u64,
        later: &mut Later,
    ) -> Option<Firing> {
        let e = self.table.get_mut(id)?;
        let point = e.next_run;
        e.backlog -= 1;
        let (left, concurrent) = (e.backlog, e.overlap == Overlap::Concurrent);
        let Some(next) = step.after(point) else {
            return Some(self.start_last(id, point, now));
        };
        self.set_next_run(id, next, now);
        if left > 0 && next <= now {
            self.table.arm_at(id, next, now, later);
        } else {
            if concurrent {
                self.table.get_mut(id)?.backlog = 0;
            }
            self.arm_next(id, now, later);
        }
        Some(self.start(id, point, now))
    }

    /// Fires `nominal`, a valid cadence point whose successor is past the end of 64-bit Unix
    /// nanoseconds: the point fires, and computing the next one retires the schedule
    /// `deadline_out_of_range` (a fault). Retired, the firing's outcome is not recorded.
    fn start_last(&mut self, id: u64, nominal: u64, now: u64) -> Firing {
        let firing = self.start(id, nominal, now);
        self.out_of_range(id, now);
        firing
    }

    /// Moves the cadence to `next` and arms it, or retires when it ran off the end of time.
    fn move_cadence(
        &mut self,
        id: u64,
        next: Option<u64>,
        now: u64,
        later: &mut Later,
    ) -> Option<Firing> {
        match next {
            Some(next) => {
                self.set_next_run(id, next, now);
                self.arm_next(id, now, later);
            }
            None => self.out_of_range(id, now),
        }
        None
    }

    /// Applies the catch-up policy to the cadence points from `next_run` that have passed
    /// (`arrived`, counted by `step`) and arms the entry: `skip` drops them all, `once` keeps
    /// the latest, `all` the latest [`MAX_CATCHUP_FIRINGS`]; the kept points are a catch-up,
    /// fired from the first tick, one per tick. The points older than the catch-up window
    /// (the first due at `due`) are missed first (docs/schedules.md §16.2); a single point left
    /// is fired as any late point is.
    pub(super) fn catch_up(&mut self, id: u64, step: &Step, arrived: Arrived, due: u64, now: u64) {
        let Some(catchup) = self
            .table
            .get(id)
            .filter(|e| !e.is_spent())
            .map(|e| e.catchup)
        else {
            return;
        };
        let Some(arrived) = self.within_window(id, step, arrived, due, now) else {
            if self.table.get(id).is_some_and(super::entry::Entry::is_live) {
                let mut later = Later::new();
                self.arm_next(id, now, &mut later);
                for (id, at) in later {
                    self.table.arm(id, at);
                }
            }
            return;
        };
        let Some(dropped) = self.begin_catch_up(id, step, arrived, catchup, now) else {
            return;
        };
        self.count_missed(id, MissedReason::Catchup, dropped, now);
        let e = self.table.get_mut(id).expect("checked above");
        let (next, catching_up) = (e.next_run, e.backlog > 0);
        let mut later = Later::new();
        if catching_up {
            self.table.arm_at(id, next, now, &mut later);
        } else {
            self.arm_next(id, now, &mut later);
        }
        for (id, at) in later {
            self.table.arm(id, at);
        }
    }

    /// Starts a catch-up of the `arrived` points from `id`'s `next_run` under `catchup`,
    /// arming nothing: `skip` keeps none and moves the cadence past them; `once` keeps the
    /// latest for one firing; `all` keeps the latest [`MAX_CATCHUP_FIRINGS`] and allows that
    /// many firings in all, so that points coming due while it works them off join it
    /// (docs/schedules.md §4.5, §13.64). The first kept point becomes `next_run`; `backlog`
    /// holds the firings the catch-up may still make. Returns how many points were dropped, or
    /// `None` when the cadence ran off the end of time (the schedule retired).
    fn begin_catch_up(
        &mut self,
        id: u64,
        step: &Step,
        arrived: Arrived,
        catchup: Catchup,
        now: u64,
    ) -> Option<u64> {
        let n = arrived.count;
        let point = self.table.get(id)?.next_run;
        let (first, firings) = match catchup {
            Catchup::Skip => (n, 0),
            Catchup::Once => (n - 1, 1),
            Catchup::All => (n - n.min(MAX_CATCHUP_FIRINGS), MAX_CATCHUP_FIRINGS),
        };
        let next = match first {
            _ if first == n => arrived.end,
            _ if first + 1 == n => Some(arrived.latest),
            _ => step.nth(point, first),
        };
        let Some(next) = next else {
            self.out_of_range(id, now);
            return None;
        };
        self.set_next_run(id, next, now);
        let e = self.table.get_mut(id)?;
        e.backlog = u16::try_from(firings).unwrap_or(u16::MAX);
        self.mark_dirty(id);
        Some(first)
    }

    /// Starts a firing of `id` serving cadence point `nominal`: counts it, computes `elapsed`.
    /// The last of its `remaining_runs` leaves it spent (docs/schedules.md §16.5).
    pub(super) fn start(&mut self, id: u64, nominal: u64, now: u64) -> Firing {
        let run = self.runs.next_id();
        let firing = self
            .firing(id, nominal, now, run)
            .expect("start is only called for an entry that exists");
        let e = self.table.get_mut(id).expect("checked above");
        e.run_count = e.run_count.saturating_add(1);
        e.last_run = now;
        let spent = e.is_spent();
        self.mark_dirty(id);
        if spent {
            // This firing is the last: it is not on the running list yet, so the schedule
            // retires when it ends (`Core::firing_ended`), not now.
            self.fire_no_more(id);
        }
        firing
    }

    /// `id` has started the last of its `remaining_runs` (docs/schedules.md §16.5): once none
    /// of its firings runs it retires `remaining_runs`; until then nothing of it fires.
    pub(super) fn spent(&mut self, id: u64, now: u64) {
        let Some(e) = self.table.get(id).filter(|e| e.is_live()) else {
            return;
        };
        if e.is_running() {
            self.fire_no_more(id);
        } else {
            self.retire(id, RetireReason::RemainingRuns, now);
        }
    }

    /// Nothing of `id` fires again — no cadence point, no queued point or catch-up, no trigger
    /// or backfill — while its last runs end (docs/schedules.md §16.5).
    fn fire_no_more(&mut self, id: u64) {
        let Some(e) = self.table.get_mut(id) else {
            return;
        };
        e.armed = false;
        e.backlog = 0;
        if let Some(x) = e.extra.as_deref_mut() {
            x.queued = None;
            x.ops.trigger = false;
            x.ops.backfill = None;
        }
        self.mark_dirty(id);
    }

    /// The firing of `id` serving `nominal` at `now` as run `run`, counting nothing; `None`
    /// when `id` is gone. `elapsed` is the time since the previous firing started
    /// (docs/schedules.md §5.6).
    pub(super) fn firing(&self, id: u64, nominal: u64, now: u64, run: RunId) -> Option<Firing> {
        let e = self.table.get(id)?;
        let elapsed = e.pass_elapsed.then(|| {
            if e.last_run == 0 {
                0.0
            } else {
                now.saturating_sub(e.last_run) as f64 / 1e9
            }
        });
        Some(Firing {
            schedule: ScheduleId::from_raw(id),
            run,
            target: e.target,
            verb: self.names.verbs.name(e.verb).clone(),
            args: e
                .args()
                .cloned()
                .unwrap_or_else(|| self.names.empty_args.clone()),
            state: e.state().cloned(),
            elapsed,
            player: e.player,
            authority: e.owner,
            nominal_unix_nanos: nominal,
            time_limit: e.limits().time_limit_ns.map(Duration::from_nanos),
            tick_limit: e.limits().tick_limit.and_then(std::num::NonZeroU64::new),
        })
    }

    /// Step 1: up to `want` of the firings this tick starts, visiting due entries while the
    /// tick has visited fewer than the per-tick bound (`visits` counts across a tick's plans).
    /// Entries re-armed to a deadline already due go to `later`, re-armed when the tick ends.
    /// A firing that must wait for its cadence update (docs/schedules.md §11.42) is kept
    /// waiting here, under the same borrow; the others are returned to start now. Returns them
    /// with how many firings were planned in all.
    pub(super) fn plan(
        &mut self,
        now: u64,
        want: usize,
        visits: &mut usize,
        later: &mut Later,
    ) -> (Vec<Firing>, usize) {
        let mut firings = self.starts.take_firings();
        let mut planned = 0;
        while planned < want && *visits < self.settings.max_per_tick {
            let Some(id) = self.table.pop_due(now) else {
                break;
            };
            *visits += 1;
            if let Some(firing) = self.visit(id, now, later) {
                planned += 1;
                if self.store.starts_after_write(self.table.get(id)) {
                    self.defer(firing, now);
                } else {
                    firings.push(firing);
                }
            }
        }
        (firings, planned)
    }

    /// The tick's operator pass: for each schedule with a trigger or backfill waiting, at most
    /// one firing (a trigger first). Firings that must wait for their update are deferred as
    /// the heap's are; the rest are returned to start now.
    pub(super) fn plan_operator(&mut self, now: u64) -> Vec<Firing> {
        if self.operator.due.is_empty() {
            return Vec::new();
        }
        let mut start_now = Vec::new();
        for id in std::mem::take(&mut self.operator.due) {
            let (firing, again) = self.visit_operator(id, now);
            if again {
                self.operator.due.push(id);
            }
            if let Some(firing) = firing {
                if self.store.starts_after_write(self.table.get(id)) {
                    self.defer(firing, now);
                } else {
                    start_now.push(firing);
                }
            }
        }
        // What waits (a backfill behind a running firing) is looked at again one tick on.
        self.operator.at = now.saturating_add(self.settings.tick_ns);
        start_now
    }

    /// One schedule's operator firing this tick, and whether it has more to come.
    fn visit_operator(&mut self, id: u64, now: u64) -> (Option<Firing>, bool) {
        let Some(e) = self.table.get(id).filter(|e| e.is_live()) else {
            return (None, false);
        };
        if e.is_spent() {
            // Its last run has started: no trigger or backfill fires (docs/schedules.md §16.5).
            self.spent(id, now);
            return (None, false);
        }
        let busy = e.is_running() && e.overlap != Overlap::Concurrent;
        let (overlap, queue_free, step) = (e.overlap, e.queued().is_none(), e.step());
        let OpsRow {
            trigger, backfill, ..
        } = e.ops().cloned().unwrap_or_default();
        if trigger {
            let e = self.table.get_mut(id).expect("checked above");
            e.extra_mut().ops.trigger = false;
            let firing = if busy && overlap == Overlap::CancelOther {
                // The trigger kills the running firing and starts (docs/schedules.md §16.7).
                self.cancel_running(id, now, now)
                    .then(|| self.start(id, now, now))
            } else if busy {
                // Overlap decides, as for a cadence point arriving mid-firing (docs/schedules.md §4.4).
                if overlap == Overlap::Queue && queue_free {
                    e.extra_mut().queued = Some(now);
                } else {
                    self.count_missed(id, crate::MissedReason::Overlap, 1, now);
                }
                None
            } else {
                Some(self.start(id, now, now))
            };
            self.mark_dirty(id);
            return (firing, backfill.is_some());
        }
        let Some((point, last)) = backfill else {
            return (None, false);
        };
        if busy {
            return (None, true);
        }
        let rest = step
            .and_then(|s| s.after(point))
            .filter(|&p| p <= last)
            .map(|p| (p, last));
        let e = self.table.get_mut(id).expect("checked above");
        e.extra_mut().ops.backfill = rest;
        let firing = self.start(id, point, now);
        (Some(firing), rest.is_some())
    }
}

impl super::entry::Entry {
    /// How this entry's cadence steps; `None` for a one-shot.
    pub(super) fn step(&self) -> Option<Step> {
        Step::of(self.kind, self.interval_ns, self.calendar.as_ref())
    }

    /// This entry's [`CadenceView`].
    pub(super) fn cadence_view(&self) -> CadenceView<'_> {
        let paused = self.ops().and_then(|o| o.paused.as_ref());
        CadenceView {
            kind: self.kind,
            calendar: self.calendar.as_deref(),
            next_run: self.next_run,
            interval_ns: self.interval_ns,
            waiting: self.armed || paused.is_some_and(|p| p.armed),
            paused: paused.is_some(),
            // A schedule whose last run has started has no next point (docs/schedules.md §16.5).
            live: self.is_live() && !self.is_spent(),
        }
    }
}
