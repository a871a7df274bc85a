//! What the command scheduler records through the `metrics` facade (docs/observability.md §3).
//!
//! The handles are registered once per scheduler, so an update is a call on a handle: no key
//! lookup, no lock, no allocation on the robot loop's thread. Without a recorder they are no-ops.

use metrics::{Counter, Gauge, Unit};

/// A command scheduler's handles.
pub(crate) struct CommandMetrics {
    cycles: Counter,
    running: Gauge,
    interruptions: Counter,
    conflict_running: Counter,
    conflict_queued: Counter,
    conflict_fork: Counter,
}

/// Which rival a refused command met (the `with` label of docs/observability.md §3.4).
#[derive(Clone, Copy)]
pub(crate) enum ConflictWith {
    /// A running command of higher priority holds a mechanism.
    Running,
    /// A queued command of higher priority waits for a mechanism.
    Queued,
    /// Commands forked together need the same mechanism.
    Fork,
}

impl CommandMetrics {
    pub(crate) fn register() -> Self {
        describe();
        let conflict = |with: &'static str| metrics::counter!("tickstep_commands_conflicts_total", "with" => with);
        CommandMetrics {
            cycles: metrics::counter!("tickstep_commands_cycles_total"),
            running: metrics::gauge!("tickstep_commands_running"),
            interruptions: metrics::counter!("tickstep_commands_interruptions_total"),
            conflict_running: conflict("running"),
            conflict_queued: conflict("queued"),
            conflict_fork: conflict("fork"),
        }
    }

    /// One `run()` cycle ended with `running` commands running.
    pub(crate) fn cycle(&self, running: usize) {
        self.cycles.increment(1);
        self.running.set(running as f64);
    }

    /// A running command was displaced by another (docs/observability.md §3.3).
    pub(crate) fn interrupted(&self) {
        self.interruptions.increment(1);
    }

    /// A command was refused for a mechanism conflict (docs/observability.md §3.4).
    pub(crate) fn conflict(&self, with: ConflictWith) {
        match with {
            ConflictWith::Running => &self.conflict_running,
            ConflictWith::Queued => &self.conflict_queued,
            ConflictWith::Fork => &self.conflict_fork,
        }
        .increment(1);
    }
}

/// Tells the recorder installed now what each command metric means: the exporter's `# HELP`
/// lines (docs/observability.md §3, §4.6).
fn describe() {
    use metrics::{describe_counter, describe_gauge};
    describe_counter!(
        "tickstep_commands_cycles_total",
        Unit::Count,
        "Completed command-scheduler cycles."
    );
    describe_gauge!(
        "tickstep_commands_running",
        Unit::Count,
        "Commands running at the end of the last cycle."
    );
    describe_counter!(
        "tickstep_commands_interruptions_total",
        Unit::Count,
        "Running commands displaced by another command."
    );
    describe_counter!(
        "tickstep_commands_conflicts_total",
        Unit::Count,
        "Commands refused for a mechanism conflict, by the rival they met."
    );
}
