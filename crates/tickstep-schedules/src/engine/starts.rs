//! Starts that wait for their cadence update to be durable (docs/schedules.md §11.42).
//!
//! A tick that finds a persistent schedule due on a store does everything a start does to the
//! cadence at once — the next deadline, the counters, a place in the running list under the run
//! id the engine hands the firing — but the firing itself waits here. The group commit hands the
//! update to the store's writer (behind the tick, docs/schedules.md §11.35, docs/schedules.md
//! §11.15); a later tick, once the store reports that write durable, starts the firing. So the
//! promise of docs/schedules.md §11.5 holds after a crash — the point a firing served is never
//! fired again, and the run that served it is on disk under its id, because the row saying so is
//! written before the verb runs — and the frame never waits for the disk: it learns durability
//! from a counter the writer raises.
//!
//! A firing that needs no write — no store, a schedule that does not persist — starts in the
//! tick that plans it, as does one on a store that writes before `commit` returns (write, then
//! start). Under a virtual clock the tick waits for its own write and starts its firings at once:
//! virtual time treats the disk as instant, so a run on a `ManualClock` is deterministic and a
//! due point starts at its deadline.
//!
//! A waiting start whose schedule was stopped, dropped for another node or replaced meanwhile
//! (its place in the running list is gone) never starts. One whose schedule retired meanwhile
//! starts, as it would have had it started at once, and its outcome is ignored (docs/schedules.md §3.4).
//!
//! Restart: after a crash a place in the running list is a run that may or may not have started;
//! it is handed back to the host with its run id (`interrupted()`), which reattaches the task it
//! still has or abandons the run (docs/schedules.md §11.5: the point is not fired again). A clean
//! shutdown marks the ones it knows never started (`started_unix` 0), and the next open starts
//! those at its first tick under the same run id.

use tickstep_kernel::clock::Instant;

use super::core::{Core, RunRecord};
use super::entry::Running;
use super::handle::Schedules;
use super::pending::Pending;
use super::tick::Verdict;
use crate::info::RetireReason;
use crate::{Fault, FaultKind, Firing, Value};

impl Core {
    /// Whether a firing of `id` must wait for its cadence update to be durable: only a
    /// persistent schedule on a store has one.
    pub(super) fn starts_after_write(&self, id: u64) -> bool {
        self.store.is_some() && self.table.get(id).is_some_and(|e| e.persist)
    }

    /// Keeps `firing` until the update that records it is durable. Its schedule lists its run
    /// as running (waiting), which is what the update carries; planning it marked the schedule
    /// for the group commit already.
    pub(super) fn defer(&mut self, firing: Firing, now: u64) {
        let id = firing.schedule.get();
        if let Some(e) = self.table.get_mut(id) {
            e.extra_mut().running.push(Running {
                run: Some(firing.run),
                nominal: firing.nominal_unix_nanos,
                // Never 0 here: 0 marks a start a clean shutdown knows never happened.
                started_unix: now.max(1),
                waiting: true,
            });
            debug_assert!(
                e.dirty,
                "a planned firing's schedule is marked for the commit"
            );
        }
        self.pending.push_back(Pending {
            firing,
            seq: None,
            planned: now,
        });
    }

    /// A group commit carried every waiting start not yet carried; the store counts it `seq`.
    pub(super) fn carried(&mut self, seq: u64) {
        for p in self.pending.iter_mut().rev() {
            if p.seq.is_some() {
                break;
            }
            p.seq = Some(seq);
        }
    }

    /// The grouped commits the store has made durable (all, without a store).
    pub(super) fn durable_through(&self) -> u64 {
        self.store.as_ref().map_or(u64::MAX, |s| s.durable_behind())
    }

    /// The oldest waiting start whose update is durable by `durable`, skipping those whose
    /// place in the running list is gone (stopped, taken over).
    pub(super) fn next_durable(&mut self, durable: u64) -> Option<Firing> {
        while self
            .pending
            .front()
            .is_some_and(|p| p.seq.is_some_and(|seq| seq <= durable))
        {
            let firing = self.pending.pop_front()?.firing;
            if self.placeholder(&firing).is_some() {
                return Some(firing);
            }
        }
        None
    }

    /// Where `firing` waits in its schedule's running list.
    fn placeholder(&self, firing: &Firing) -> Option<usize> {
        self.table
            .get(firing.schedule.get())?
            .waiting_start(firing.run)
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
        self.count_start(firing, &verdict, now);
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
            self.await_run(*run, id, mono);
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

    /// A fresh run id: one above every id this engine handed out or restored, so a run is never
    /// confused with another it still waits for, restored ones included (docs/schedules.md §7.9).
    pub(super) fn next_run_id(&mut self) -> crate::RunId {
        self.last_run += 1;
        crate::RunId(self.last_run)
    }

    /// Remembers `run` as a run of schedule `id` started at `mono`.
    pub(super) fn await_run(&mut self, run: crate::RunId, id: u64, mono: Instant) {
        let earlier = self.runs.insert(
            run,
            RunRecord {
                schedule: id,
                started: Some(mono),
            },
        );
        if let Some(earlier) = earlier {
            tracing::warn!(
                run = run.0,
                schedule = earlier.schedule,
                "runner reused the id of a run still awaiting its outcome; the earlier run's outcome will be attributed to the new one"
            );
        }
    }

    /// Whether a waiting start's update is durable by `durable`: a tick now would start it.
    pub(super) fn startable(&self, durable: u64) -> bool {
        self.pending
            .front()
            .is_some_and(|p| p.seq.is_some_and(|seq| seq <= durable))
    }

    /// When the host should tick again for the waiting starts: one engine tick after the
    /// oldest was planned.
    pub(super) fn pending_deadline(&self) -> Option<u64> {
        self.pending
            .front()
            .map(|p| p.planned.saturating_add(self.tick_ns))
    }

    /// A clean shutdown: every waiting start is known never to have started. Marked so in the
    /// running list (`started_unix` 0), the next open starts it instead of settling it.
    pub(super) fn park_pending(&mut self) {
        for p in std::mem::take(&mut self.pending) {
            let id = p.firing.schedule.get();
            if let Some(at) = self.placeholder(&p.firing) {
                let e = self.table.get_mut(id).expect("placeholder found");
                e.extra_mut().running[at].started_unix = 0;
                self.mark_dirty(id);
            }
        }
    }

    /// At open: a firing that was waiting for its update when the engine stopped. Parked by a
    /// clean shutdown (never started), it waits again under the run id it was given (a new one
    /// for a row written before run ids were, or claimed from another node), until the update
    /// saying it is no longer parked is durable; otherwise it is a row from a
    /// build that wrote no run id before the start, whose firing may have started: it is
    /// settled as interrupted (docs/schedules.md §11.5: its point is not fired again).
    pub(super) fn restore_waiting(
        &mut self,
        id: u64,
        (nominal, run): (u64, Option<crate::RunId>),
        parked: bool,
        now: u64,
    ) {
        if parked {
            let run = run.unwrap_or_else(|| self.next_run_id());
            let Some(firing) = self.firing(id, nominal, now, run) else {
                return;
            };
            let Some(e) = self.table.get_mut(id) else {
                return;
            };
            // Its place was kept at load. From here it is an ordinary waiting start: it takes
            // its run id and no longer says "never started", and it starts only once that is
            // written, so a crash after the start never starts it again.
            if let Some(place) = e
                .extra_mut()
                .running
                .iter_mut()
                .find(|r| r.is_parked() && r.nominal == nominal)
            {
                place.run = Some(run);
                place.started_unix = now.max(1);
            }
            self.mark_dirty(id);
            self.pending.push_back(Pending {
                firing,
                seq: None,
                planned: now,
            });
            return;
        }
        // Its place in the running list went at load (`Loader::apply`).
        self.fault(
            id,
            Fault {
                kind: FaultKind::Interrupted,
                value: Value::from("interrupted by restart"),
            },
            now,
        );
    }
}

impl Schedules {
    /// Starts the waiting firings whose update is durable by `durable`, oldest first, until
    /// `slice_end` (if any) has passed after a start (docs/schedules.md §10.5); counts them in
    /// `report`. Returns whether the slice ran out.
    pub(super) fn start_durable(
        &self,
        durable: u64,
        (now, mono): (u64, Instant),
        slice_end: Option<Instant>,
        report: &mut super::TickReport,
    ) -> bool {
        let shared = &*self.shared;
        loop {
            let Some(firing) = shared.core.borrow_mut().next_durable(durable) else {
                return false;
            };
            let verdict = self.try_start(&firing);
            report.count(&verdict);
            shared
                .core
                .borrow_mut()
                .record_waited(&firing, verdict, (now, mono));
            if slice_end.is_some_and(|end| shared.clock.now() >= end) {
                return true;
            }
        }
    }
}
