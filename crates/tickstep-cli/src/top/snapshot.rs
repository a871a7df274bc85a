//! The live view's snapshot as `top` reads it — the dashboard's own [`LiveSnapshot`], the one
//! type both ends of the wire use (docs/serve.md §13.6) — and the recent frames it keeps for its
//! chart.
//!
//! Read tolerantly (docs/serve.md §14.3): a field the server does not send is zero or empty, a
//! field `top` does not know is ignored, so a server a version ahead or behind still shows.
//! A field of the wrong type, or an event that is not a JSON object, is garbage and ends the view.

use std::collections::VecDeque;

use tickstep::dashboard::LiveSnapshot;

/// Parses one event's data.
pub(crate) fn parse(data: &str) -> Result<LiveSnapshot, String> {
    serde_json::from_str(data).map_err(|e| {
        format!(
            "an event is not a live-view snapshot ({e}): {:?} (docs/serve.md §14.3)",
            super::sse::shown(data, 80)
        )
    })
}

/// The longest wall step among a snapshot's frames.
pub(crate) fn worst_us(s: &LiveSnapshot) -> u64 {
    s.frames.iter().map(|&(wall, _)| wall).max().unwrap_or(0)
}

/// One line of `key=value` fields, for `--frames` (docs/serve.md §14.4).
pub(crate) fn line(s: &LiveSnapshot) -> String {
    let pending: Vec<String> = s
        .pending
        .iter()
        .map(|(name, count)| format!("{}:{count}", super::visible(name)))
        .collect();
    format!(
        "period_us={} frames={} worst_us={} over_budget={} overloads={} deferred={} pending={} commands={} schedules={} paused={} firings={} online={}",
        s.period_us,
        s.frames.len(),
        worst_us(s),
        s.over_budget,
        s.overloads,
        s.deferred_last_step,
        pending.join(","),
        s.commands_running,
        s.schedules_live,
        s.schedules_paused
            .map_or_else(|| "-".to_owned(), |n| n.to_string()),
        s.firings,
        s.online.map_or_else(|| "-".to_owned(), |n| n.to_string())
    )
}

/// The newest snapshot and the frames of the last few, for the chart.
#[derive(Debug, Default)]
pub(crate) struct History {
    pub(crate) latest: LiveSnapshot,
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

    pub(crate) fn push(&mut self, snapshot: LiveSnapshot) {
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
        let s = parse(
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
            let error = parse(junk).unwrap_err();
            assert!(error.contains("not a live-view snapshot"), "{error}");
        }
    }

    #[test]
    fn history_keeps_the_newest_frames_and_shifts_overload_marks() {
        let mut history = History::default();
        let frames = |n: usize, us: u64| vec![(us, us); n];
        history.push(LiveSnapshot {
            frames: frames(400, 10),
            ..LiveSnapshot::default()
        });
        history.push(LiveSnapshot {
            frames: frames(100, 20),
            overloads: 2,
            ..LiveSnapshot::default()
        });
        assert_eq!(history.overloads_at, [400]);
        history.push(LiveSnapshot {
            frames: frames(250, 30),
            overloads: 2,
            ..LiveSnapshot::default()
        });
        assert_eq!(history.steps_us.len(), History::KEPT);
        assert_eq!(history.steps_us[0], 10);
        assert_eq!(history.overloads_at, [250]);
        assert_eq!(history.steps_us[250], 20);
    }
}
