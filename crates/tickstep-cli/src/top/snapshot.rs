//! The live view's snapshot as `top` reads it (the JSON of docs/serve.md §13.6), and the recent
//! frames it keeps for its chart.
//!
//! Read tolerantly (docs/serve.md §14.3): a field the server does not send is zero or empty, a
//! field `top` does not know is ignored, so a server a version ahead or behind still shows.
//! A field of the wrong type, or an event that is not a JSON object, is garbage and ends the view.

use std::collections::VecDeque;

use serde::Deserialize;

/// One snapshot, as sent once a second.
#[derive(Debug, Default, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub(crate) struct Snapshot {
    /// The frame period: the step budget, in microseconds.
    pub(crate) period_us: u64,
    /// Each frame since the last snapshot: wall and CPU step time in microseconds.
    pub(crate) frames: Vec<(u64, u64)>,
    pub(crate) over_budget: u64,
    /// The kernel's overload events so far.
    pub(crate) overloads: u64,
    pub(crate) deferred_last_step: u64,
    /// Tasks waiting per priority, kernel first.
    pub(crate) pending: Vec<(String, u64)>,
    pub(crate) commands_running: u64,
    /// The running commands themselves, where the server lists them (`{id, name, priority,
    /// mechanisms}` objects; anything else shown as its text).
    pub(crate) commands: Vec<serde_json::Value>,
    /// The kernel's hot tasks, where the server lists them (`[origin, total_us, calls, max_us]`).
    pub(crate) hot_tasks: Vec<serde_json::Value>,
    pub(crate) schedules_live: u64,
    /// How many of the live schedules are paused, where the server counts them.
    pub(crate) schedules_paused: Option<u64>,
    /// Firings started so far.
    pub(crate) firings: u64,
    /// Players online, where the host has players.
    pub(crate) online: Option<u64>,
}

impl Snapshot {
    /// Parses one event's data.
    pub(crate) fn parse(data: &str) -> Result<Snapshot, String> {
        serde_json::from_str(data).map_err(|e| {
            format!(
                "an event is not a live-view snapshot ({e}): {:?} (docs/serve.md §14.3)",
                super::sse::shown(data, 80)
            )
        })
    }

    /// The longest wall step among this snapshot's frames.
    pub(crate) fn worst_us(&self) -> u64 {
        self.frames.iter().map(|&(wall, _)| wall).max().unwrap_or(0)
    }

    /// One line of `key=value` fields, for `--frames` (docs/serve.md §14.4).
    pub(crate) fn line(&self) -> String {
        let pending: Vec<String> = self
            .pending
            .iter()
            .map(|(name, count)| format!("{}:{count}", super::visible(name)))
            .collect();
        format!(
            "period_us={} frames={} worst_us={} over_budget={} overloads={} deferred={} pending={} commands={} schedules={} paused={} firings={} online={}",
            self.period_us,
            self.frames.len(),
            self.worst_us(),
            self.over_budget,
            self.overloads,
            self.deferred_last_step,
            pending.join(","),
            self.commands_running,
            self.schedules_live,
            self.schedules_paused
                .map_or_else(|| "-".to_owned(), |n| n.to_string()),
            self.firings,
            self.online
                .map_or_else(|| "-".to_owned(), |n| n.to_string())
        )
    }
}

/// The newest snapshot and the frames of the last few, for the chart.
#[derive(Debug, Default)]
pub(crate) struct History {
    pub(crate) latest: Snapshot,
    /// Wall step times, oldest first, at most [`History::KEPT`].
    pub(crate) steps_us: VecDeque<u64>,
    /// Where, in `steps_us`, a snapshot brought new overload events (index of its first frame).
    pub(crate) overloads_at: VecDeque<usize>,
    /// How many snapshots have arrived.
    pub(crate) snapshots: u64,
}

impl History {
    /// About ten seconds of frames at 60 fps.
    pub(crate) const KEPT: usize = 600;

    pub(crate) fn push(&mut self, snapshot: Snapshot) {
        let first = self.steps_us.len();
        if self.snapshots > 0 && snapshot.overloads > self.latest.overloads {
            self.overloads_at.push_back(first);
        }
        self.steps_us
            .extend(snapshot.frames.iter().map(|&(wall, _)| wall));
        let excess = self.steps_us.len().saturating_sub(Self::KEPT);
        self.steps_us.drain(..excess);
        self.overloads_at = self
            .overloads_at
            .iter()
            .filter_map(|at| at.checked_sub(excess))
            .collect();
        self.latest = snapshot;
        self.snapshots += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_are_ignored_and_missing_ones_are_zero() {
        // docs/serve.md §14.3
        let s = Snapshot::parse(
            r#"{"period_us":16666,"frames":[[40,30]],"hot_tasks":[{"name":"x"}],"schedules_live":3}"#,
        )
        .unwrap();
        assert_eq!(s.period_us, 16_666);
        assert_eq!(s.frames, [(40, 30)]);
        assert_eq!(s.schedules_live, 3);
        assert_eq!(s.online, None);
        assert!(s.pending.is_empty());
    }

    #[test]
    fn garbage_is_named() {
        for junk in ["[1,2]", "not json", r#"{"period_us":"fast"}"#] {
            let error = Snapshot::parse(junk).unwrap_err();
            assert!(error.contains("not a live-view snapshot"), "{error}");
        }
    }

    #[test]
    fn history_keeps_the_newest_frames_and_shifts_overload_marks() {
        let mut history = History::default();
        let frames = |n: usize, us: u64| vec![(us, us); n];
        history.push(Snapshot {
            frames: frames(400, 10),
            ..Snapshot::default()
        });
        history.push(Snapshot {
            frames: frames(100, 20),
            overloads: 2,
            ..Snapshot::default()
        });
        assert_eq!(history.overloads_at, [400]);
        history.push(Snapshot {
            frames: frames(250, 30),
            overloads: 2,
            ..Snapshot::default()
        });
        assert_eq!(history.steps_us.len(), History::KEPT);
        assert_eq!(history.steps_us[0], 10);
        assert_eq!(history.overloads_at, [250]);
        assert_eq!(history.steps_us[250], 20);
    }
}
