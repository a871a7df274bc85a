//! What the schedules engine records through the `metrics` facade (docs/observability.md §1).
//!
//! The handles are registered once, when the engine is built, so an update is a call on a handle:
//! no key lookup, no lock, no allocation on the tick's thread. Without a recorder they are no-ops.
//! No label carries a schedule id, owner or verb: every label set is a fixed, small enum.

use std::cell::RefCell;

use metrics::{Counter, Gauge, Histogram, Unit};

use crate::{EngineTally, MissedReason, RetireReason};

/// The engine's handles.
pub(crate) struct SchedulesMetrics {
    ticks: Counter,
    started: Counter,
    start_failed: Counter,
    target_gone: Counter,
    returned: Counter,
    faulted: Counter,
    killed: Counter,
    missed: [Counter; 5],
    retired: [Counter; 5],
    lateness: Histogram,
    live: Gauge,
    running: Gauge,
    /// The same starts and misses, kept for the host to read (docs/schedules.md §9.18).
    tally: RefCell<EngineTally>,
}

impl SchedulesMetrics {
    pub(crate) fn register() -> Self {
        describe();
        let start = |result: &'static str| metrics::counter!("tickstep_schedules_starts_total", "result" => result);
        let outcome = |outcome: &'static str| metrics::counter!("tickstep_schedules_firings_total", "outcome" => outcome);
        SchedulesMetrics {
            ticks: metrics::counter!("tickstep_schedules_ticks_total"),
            started: start("started"),
            start_failed: start("failed"),
            target_gone: start("target_gone"),
            returned: outcome("returned"),
            faulted: outcome("fault"),
            killed: outcome("killed"),
            missed: MissedReason::ALL
                .map(|reason| metrics::counter!("tickstep_schedules_missed_total", "reason" => reason.as_str())),
            retired: [
                RetireReason::Completed,
                RetireReason::MaxFaults,
                RetireReason::DeadlineOutOfRange,
                RetireReason::InvalidTarget,
                RetireReason::RemainingRuns,
            ]
            .map(|reason| {
                metrics::counter!("tickstep_schedules_retired_total", "reason" => reason.as_str())
            }),
            lateness: metrics::histogram!("tickstep_schedules_lateness_seconds"),
            live: metrics::gauge!("tickstep_schedules_live"),
            running: metrics::gauge!("tickstep_schedules_running"),
            tally: RefCell::default(),
        }
    }

    /// A firing started `late_nanos` after its nominal time (docs/observability.md §1.1, §1.5).
    pub(crate) fn started(&self, late_nanos: u64) {
        self.started.increment(1);
        self.lateness.record(late_nanos as f64 / 1e9);
        self.tally.borrow_mut().started(late_nanos);
    }

    /// What has been counted since the engine was built (docs/schedules.md §9.18).
    pub(crate) fn tally(&self) -> EngineTally {
        *self.tally.borrow()
    }

    /// A firing could not start: the runner or the verb refused it (docs/observability.md §1.1).
    pub(crate) fn start_failed(&self) {
        self.start_failed.increment(1);
    }

    /// A firing found its target gone (docs/observability.md §1.1).
    pub(crate) fn target_gone(&self) {
        self.target_gone.increment(1);
    }

    /// A run settled (docs/observability.md §1.2): returned, faulted or was killed.
    pub(crate) fn settled(&self, outcome: &crate::Outcome) {
        match outcome {
            crate::Outcome::Returned(_) => &self.returned,
            crate::Outcome::Fault { .. } => &self.faulted,
            crate::Outcome::Killed => &self.killed,
        }
        .increment(1);
    }

    /// `points` cadence points passed without firing (docs/observability.md §1.4).
    pub(crate) fn missed(&self, reason: MissedReason, points: u64) {
        if points > 0 {
            self.missed[reason as usize].increment(points);
            self.tally.borrow_mut().missed_by[reason as usize] += points;
        }
    }

    /// A schedule retired (docs/observability.md §1.3).
    pub(crate) fn retired(&self, reason: RetireReason) {
        let index = match reason {
            RetireReason::Completed => 0,
            RetireReason::MaxFaults => 1,
            RetireReason::DeadlineOutOfRange => 2,
            RetireReason::InvalidTarget => 3,
            RetireReason::RemainingRuns => 4,
        };
        self.retired[index].increment(1);
    }

    /// A tick ended with `live` schedules and `running` firings in flight
    /// (docs/observability.md §1.6, §1.7).
    pub(crate) fn tick(&self, live: usize, running: usize) {
        self.ticks.increment(1);
        self.live.set(live as f64);
        self.running.set(running as f64);
    }
}

/// A store's writer thread's handles (docs/observability.md §1.9–§1.11), labelled by the kind of
/// store. Recorded off the frame, on the writer's own thread.
pub(crate) struct StoreMetrics {
    write_seconds: Histogram,
    write_failures: Counter,
    queued_batches: Gauge,
}

impl StoreMetrics {
    /// `store` is `"sqlite"` or `"postgres"`.
    pub(crate) fn register(store: &'static str) -> Self {
        describe();
        StoreMetrics {
            write_seconds: metrics::histogram!("tickstep_schedules_store_write_seconds", "store" => store),
            write_failures: metrics::counter!("tickstep_schedules_store_write_failures_total", "store" => store),
            queued_batches: metrics::gauge!("tickstep_schedules_store_queued_batches", "store" => store),
        }
    }

    /// One transaction of `batches` queued batches took `elapsed`, and succeeded or not.
    pub(crate) fn wrote(&self, batches: usize, elapsed: std::time::Duration, ok: bool) {
        self.queued_batches
            .set(if ok { 0.0 } else { batches as f64 });
        if ok {
            self.write_seconds.record(elapsed.as_secs_f64());
        } else {
            self.write_failures.increment(1);
        }
    }
}

/// A `PostgreSQL` node's cluster handles (docs/observability.md §1.12–§1.14), recorded on its
/// store thread.
#[cfg(feature = "postgres")]
pub(crate) struct ClusterMetrics {
    claimed: Counter,
    refused_writes: Counter,
    taken_over: Counter,
}

#[cfg(feature = "postgres")]
impl Default for ClusterMetrics {
    fn default() -> Self {
        describe();
        ClusterMetrics {
            claimed: metrics::counter!("tickstep_schedules_cluster_claimed_total"),
            refused_writes: metrics::counter!("tickstep_schedules_cluster_refused_writes_total"),
            taken_over: metrics::counter!("tickstep_schedules_cluster_taken_over_total"),
        }
    }
}

#[cfg(feature = "postgres")]
impl ClusterMetrics {
    /// `rows` schedules claimed from other nodes or from nobody.
    pub(crate) fn claimed(&self, rows: u64) {
        self.claimed.increment(rows);
    }

    /// `rows` writes refused because another node claimed the rows since.
    pub(crate) fn refused(&self, rows: u64) {
        self.refused_writes.increment(rows);
    }

    /// `rows` schedules this node held were taken over by another.
    pub(crate) fn taken_over(&self, rows: u64) {
        self.taken_over.increment(rows);
    }
}

/// Tells the recorder installed now what each schedules metric means and its unit: the
/// exporter's `# HELP` lines (docs/observability.md §1, §4.6). Called wherever handles are
/// registered (the engine, a store's writer, a cluster node).
fn describe() {
    use metrics::{describe_counter, describe_gauge, describe_histogram};
    describe_counter!(
        "tickstep_schedules_starts_total",
        Unit::Count,
        "Firings the engine tried to start, by result."
    );
    describe_counter!(
        "tickstep_schedules_firings_total",
        Unit::Count,
        "Started firings settled, by outcome."
    );
    describe_counter!(
        "tickstep_schedules_retired_total",
        Unit::Count,
        "Schedules retired, by reason."
    );
    describe_counter!(
        "tickstep_schedules_missed_total",
        Unit::Count,
        "Cadence points that passed without a firing of their own, by reason."
    );
    describe_histogram!(
        "tickstep_schedules_lateness_seconds",
        Unit::Seconds,
        "Each started firing's start time minus its nominal time."
    );
    describe_gauge!(
        "tickstep_schedules_live",
        Unit::Count,
        "Live (not retired) schedules at the end of the last tick."
    );
    describe_gauge!(
        "tickstep_schedules_running",
        Unit::Count,
        "Firings started and not yet settled, at the end of the last tick."
    );
    describe_counter!(
        "tickstep_schedules_ticks_total",
        Unit::Count,
        "Completed schedules ticks."
    );
    describe_histogram!(
        "tickstep_schedules_store_write_seconds",
        Unit::Seconds,
        "Each transaction of the store's writer thread."
    );
    describe_counter!(
        "tickstep_schedules_store_write_failures_total",
        Unit::Count,
        "Writer transactions that failed; their batches are retried."
    );
    describe_gauge!(
        "tickstep_schedules_store_queued_batches",
        Unit::Count,
        "Batches the store's writer still holds after its last attempt."
    );
    describe_counter!(
        "tickstep_schedules_cluster_claimed_total",
        Unit::Count,
        "Schedules this PostgreSQL node claimed from a dead node or from nobody."
    );
    describe_counter!(
        "tickstep_schedules_cluster_refused_writes_total",
        Unit::Count,
        "Writes refused because another node claimed the rows since."
    );
    describe_counter!(
        "tickstep_schedules_cluster_taken_over_total",
        Unit::Count,
        "Schedules this node held that another node took over."
    );
}
