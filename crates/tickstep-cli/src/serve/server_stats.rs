//! The wizard's `stats` (docs/serve.md §3.4, §3.5): the frames' step times since the last
//! `stats`, the firings, and the commands the server has answered. One owned part of the
//! [`Server`](super::server::Server) (docs/serve.md §4.10).

use std::cell::Cell;

use tickstep::Runtime;

use super::frame_times::FrameTimes;

/// What `stats` counts between its reports.
#[derive(Default)]
pub(crate) struct ServerStats {
    /// Commands answered since the start.
    commands_handled: Cell<u64>,
    /// The frames' step times (the live view's frames among them).
    pub(crate) frames: FrameTimes,
    /// Firings started as of the last `stats`.
    firings_reported: Cell<u64>,
}

impl ServerStats {
    /// One more command answered.
    pub(crate) fn command(&self) {
        self.commands_handled.set(self.commands_handled.get() + 1);
    }

    /// The report: frame step times since the last one, firings, schedules, connections
    /// (`online`), commands, and the scheduled says dropped since the last (`says_dropped`).
    pub(crate) fn report(&self, rt: &Runtime, online: usize, says_dropped: u64) -> String {
        let frames = self.frames.take_summary();
        let rt = rt.stats();
        format!(
            "ok: frames_run={} step_p50_us={} step_p99_us={} step_max_us={} overruns={} \
             step_cpu_p50_us={} step_cpu_p99_us={} step_cpu_max_us={} cpu_overruns={} \
             firings_window={} firings={} live={} online={} commands={} says_dropped={}",
            frames.count,
            frames.wall.p50,
            frames.wall.p99,
            frames.wall.max,
            frames.wall.overruns,
            frames.cpu.p50,
            frames.cpu.p99,
            frames.cpu.max,
            frames.cpu.overruns,
            rt.firings_started - self.firings_reported.replace(rt.firings_started),
            rt.firings_started,
            rt.schedules_live,
            online,
            self.commands_handled.get(),
            says_dropped
        )
    }
}
