//! What the engine keeps of operators between its calls: the schedules whose trigger or backfill
//! waits for the tick (docs/schedules.md §9.6, §9.7), the schedules an operator stopped from
//! outside until the host takes the list (docs/schedules.md §9.12), when the store was last
//! asked for such stops, and whether a resume is catching up (docs/observability.md §1.4).

use std::time::Duration;

use tickstep_kernel::clock::Instant;

/// The operator's side of the engine's state.
pub(super) struct OperatorQueue {
    /// Schedules with an operator's trigger or backfill waiting for the tick (docs/schedules.md
    /// §9.6, §9.7); empty nearly always, so a tick pays one check for it.
    pub(super) due: Vec<u64>,
    /// When the host should tick for them (Unix nanoseconds).
    pub(super) at: u64,
    /// Schedules dropped because an operator stopped them, until the host takes the list.
    pub(super) stopped: Vec<u64>,
    /// When the store was last polled for operator stops (monotonic).
    last_stop_poll: Option<Instant>,
    /// Set while a resume catches up: the points it drops were missed while paused
    /// (docs/observability.md §1.4).
    pub(super) catching_up_paused: bool,
}

impl Default for OperatorQueue {
    fn default() -> Self {
        OperatorQueue {
            due: Vec::new(),
            at: u64::MAX,
            stopped: Vec::new(),
            last_stop_poll: None,
            catching_up_paused: false,
        }
    }
}

impl OperatorQueue {
    /// Asks the next tick to plan `id`'s operator firings.
    pub(super) fn want_pass(&mut self, id: u64, now: u64) {
        if !self.due.contains(&id) {
            self.due.push(id);
        }
        self.at = self.at.min(now);
    }

    /// When the host should tick for operator firings: `None` without any.
    #[inline]
    pub(super) fn deadline(&self) -> Option<u64> {
        (!self.due.is_empty()).then_some(self.at)
    }

    /// Whether the store is due a poll for operator stops at `mono`: at most once per engine
    /// tick interval ([`Config::tick`](crate::Config::tick), `tick_ns`) of monotonic time, so a
    /// host ticking faster than that does not pay the poll every call; a stop is noticed by the
    /// first tick at least one interval after the last poll. Notes the poll when it is due.
    pub(super) fn poll_stops_due(&mut self, mono: Instant, tick_ns: u64) -> bool {
        let interval = Duration::from_nanos(tick_ns);
        if self
            .last_stop_poll
            .is_some_and(|last| mono.duration_since(last) < interval)
        {
            return false;
        }
        self.last_stop_poll = Some(mono);
        true
    }
}
