//! The hot-task profiler: wall time per origin.
//!
//! An origin is where a task came from: the `#[track_caller]` [`Location`] of the `schedule`,
//! `after`, `every` or `spawn` call (docs/kernel.md §2.4 and §13.3), or a
//! label set with [`FrameScheduler::with_origin`](crate::FrameScheduler::with_origin). Origins are interned
//! into a dense table once per call site; a slot caches its index, so the per-task cost of
//! profiling is one array update and no hashing. Interning itself is skipped for repeat calls
//! from the same site by a one-entry cache (a pointer comparison).
//!
//! The window counters (longest task, deferred per origin) feed
//! [`FrameScheduler::take_step_window`](crate::FrameScheduler::take_step_window).

use std::collections::HashMap;
use std::panic::Location;
use std::time::Duration;

use crate::HotTask;

/// "Not interned yet": a slot scheduled while profiling was off.
pub(crate) const NO_ORIGIN: u32 = u32::MAX;

struct Origin {
    name: String,
    total_nanos: u64,
    calls: u64,
    max_nanos: u64,
    window_deferred: u64,
}

impl Origin {
    fn named(name: String) -> Self {
        Origin {
            name,
            total_nanos: 0,
            calls: 0,
            max_nanos: 0,
            window_deferred: 0,
        }
    }
}

pub(crate) struct Profiler {
    origins: Vec<Origin>,
    by_location: HashMap<usize, u32>,
    by_label: HashMap<String, u32>,
    /// The last interned location: repeat calls from one site skip the map.
    last_location: (usize, u32),
    /// Longest task in the window and its origin.
    window_task_max: u64,
    window_task_origin: u32,
}

fn location_key(location: &'static Location<'static>) -> usize {
    std::ptr::from_ref(location) as usize
}

/// `file:line:column`, the way a panic names a place.
pub(crate) fn location_name(location: &Location<'_>) -> String {
    format!(
        "{}:{}:{}",
        location.file(),
        location.line(),
        location.column()
    )
}

impl Profiler {
    pub(crate) fn new() -> Self {
        Profiler {
            origins: Vec::new(),
            by_location: HashMap::new(),
            by_label: HashMap::new(),
            last_location: (0, NO_ORIGIN),
            window_task_max: 0,
            window_task_origin: NO_ORIGIN,
        }
    }

    /// The origin index of a call site.
    #[inline]
    pub(crate) fn intern_location(&mut self, location: &'static Location<'static>) -> u32 {
        let key = location_key(location);
        if self.last_location.0 == key {
            return self.last_location.1;
        }
        let next = self.origins.len() as u32;
        let index = *self.by_location.entry(key).or_insert(next);
        if index == next {
            self.origins.push(Origin::named(location_name(location)));
        }
        self.last_location = (key, index);
        index
    }

    /// The origin index of a label.
    pub(crate) fn intern_label(&mut self, label: &str) -> u32 {
        if let Some(&index) = self.by_label.get(label) {
            return index;
        }
        let index = self.origins.len() as u32;
        self.origins.push(Origin::named(label.to_owned()));
        self.by_label.insert(label.to_owned(), index);
        index
    }

    /// Renames a call site (docs/kernel.md §2.4).
    pub(crate) fn rename(&mut self, location: &'static Location<'static>, label: &str) {
        let index = self.intern_location(location);
        label.clone_into(&mut self.origins[index as usize].name);
    }

    pub(crate) fn name(&self, origin: u32) -> Option<&str> {
        self.origins.get(origin as usize).map(|o| o.name.as_str())
    }

    /// Attributes one run of `nanos` to `origin`.
    #[inline]
    pub(crate) fn record(&mut self, origin: u32, nanos: u64) {
        let o = &mut self.origins[origin as usize];
        o.total_nanos += nanos;
        o.calls += 1;
        o.max_nanos = o.max_nanos.max(nanos);
        if nanos > self.window_task_max || self.window_task_origin == NO_ORIGIN {
            self.window_task_max = nanos;
            self.window_task_origin = origin;
        }
    }

    /// Counts `weight` deferrals against `origin` (more than one when a sampled entry stands for
    /// a stretch of the backlog).
    pub(crate) fn note_deferred(&mut self, origin: u32, weight: u64) {
        self.origins[origin as usize].window_deferred += weight;
    }

    /// Hottest origins by total time.
    pub(crate) fn top(&self, count: usize) -> Vec<HotTask> {
        let mut hot: Vec<&Origin> = self.origins.iter().filter(|o| o.calls > 0).collect();
        hot.sort_by(|a, b| {
            b.total_nanos
                .cmp(&a.total_nanos)
                .then(b.calls.cmp(&a.calls))
        });
        hot.into_iter()
            .take(count)
            .map(|o| HotTask {
                key: o.name.clone(),
                time: Duration::from_nanos(o.total_nanos),
                calls: o.calls,
                max: Duration::from_nanos(o.max_nanos),
            })
            .collect()
    }

    /// Clears time, calls and max (origin names stay interned).
    pub(crate) fn reset(&mut self) {
        for o in &mut self.origins {
            o.total_nanos = 0;
            o.calls = 0;
            o.max_nanos = 0;
        }
    }

    /// The window's longest task and its origin name.
    pub(crate) fn window_task(&self) -> (Duration, Option<String>) {
        (
            Duration::from_nanos(self.window_task_max),
            self.name(self.window_task_origin).map(str::to_owned),
        )
    }

    /// Deferred counts per origin in the window, most first, at most `count`.
    pub(crate) fn window_deferred(&self, count: usize) -> Vec<(String, u64)> {
        let mut keys: Vec<(String, u64)> = self
            .origins
            .iter()
            .filter(|o| o.window_deferred > 0)
            .map(|o| (o.name.clone(), o.window_deferred))
            .collect();
        keys.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        keys.truncate(count);
        keys
    }

    /// Clears the window's attribution (longest task, deferred per origin).
    pub(crate) fn clear_window(&mut self) {
        self.window_task_max = 0;
        self.window_task_origin = NO_ORIGIN;
        for o in &mut self.origins {
            o.window_deferred = 0;
        }
    }
}
