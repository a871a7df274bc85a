//! What kind a schedule is, what it is doing in one word, and why it retired
//! (docs/schedules.md §9.1, §9.13).

/// Whether a schedule is a one-shot (`schedule_at`), recurring on an interval
/// (`schedule_every`) or on a calendar (`schedule_cron`, docs/schedules.md §14.12).
///
/// ```
/// assert_eq!(tickstep_schedules::ScheduleKind::Every.as_str(), "every");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ScheduleKind {
    /// A one-shot.
    At,
    /// A recurring schedule.
    Every,
    /// A calendar schedule: a cron expression in a time zone (docs/schedules.md §14.12).
    Cron,
}

impl ScheduleKind {
    /// Every kind the engine has, in the order of [`ScheduleKind::as_str`]'s docs: what a filter
    /// by kind offers and accepts (docs/serve.md §13.2).
    ///
    /// ```
    /// let names: Vec<_> = tickstep_schedules::ScheduleKind::ALL.iter().map(|k| k.as_str()).collect();
    /// assert_eq!(names, ["at", "every", "cron"]);
    /// ```
    pub const ALL: [ScheduleKind; 3] = [ScheduleKind::At, ScheduleKind::Every, ScheduleKind::Cron];

    /// Parses [`ScheduleKind::as_str`]'s spelling.
    ///
    /// ```
    /// use tickstep_schedules::ScheduleKind;
    /// assert_eq!(ScheduleKind::parse("cron"), Some(ScheduleKind::Cron));
    /// assert_eq!(ScheduleKind::parse("daily"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// `"at"`, `"every"` or `"cron"`.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::ScheduleKind::At.as_str(), "at");
    /// assert_eq!(tickstep_schedules::ScheduleKind::Cron.as_str(), "cron");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ScheduleKind::At => "at",
            ScheduleKind::Every => "every",
            ScheduleKind::Cron => "cron",
        }
    }

    /// Whether the kind fires again and again (`every` and `cron`).
    ///
    /// ```
    /// use tickstep_schedules::ScheduleKind;
    /// assert!(ScheduleKind::Cron.is_recurring());
    /// assert!(!ScheduleKind::At.is_recurring());
    /// ```
    pub fn is_recurring(self) -> bool {
        self != ScheduleKind::At
    }
}

/// What a schedule is doing, in one word: the `status` of `schedule_info`, the STATE column of
/// `tickstep schedules list` and the state the dashboard shows and filters by
/// (docs/schedules.md §9.13). The first that holds, in this order:
///
/// * `retired` — it will not fire again (docs/schedules.md §8.1);
/// * `paused` — an operator paused it (docs/schedules.md §9.4), a firing still running or not;
/// * `running` — a firing of it is in flight;
/// * `failing` — its last settled firing faulted (`consecutive_faults` > 0), and it fires on;
/// * `active` — it waits for its next cadence point.
///
/// ```
/// use tickstep_schedules::ScheduleStatus;
/// assert_eq!(ScheduleStatus::Paused.as_str(), "paused");
/// assert_eq!(ScheduleStatus::parse("failing"), Some(ScheduleStatus::Failing));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[non_exhaustive]
pub enum ScheduleStatus {
    /// Waiting for its next cadence point.
    Active,
    /// A firing is in flight.
    Running,
    /// Its last settled firing faulted; it fires on.
    Failing,
    /// Paused by an operator (docs/schedules.md §9.4).
    Paused,
    /// It will not fire again (docs/schedules.md §8.1).
    Retired,
}

impl ScheduleStatus {
    /// Every status, in the order of [`ScheduleStatus::as_str`]'s spellings.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::ScheduleStatus::ALL.len(), 5);
    /// ```
    pub const ALL: [ScheduleStatus; 5] = [
        ScheduleStatus::Active,
        ScheduleStatus::Running,
        ScheduleStatus::Failing,
        ScheduleStatus::Paused,
        ScheduleStatus::Retired,
    ];

    /// `"active"`, `"running"`, `"failing"`, `"paused"` or `"retired"`.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::ScheduleStatus::Running.as_str(), "running");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ScheduleStatus::Active => "active",
            ScheduleStatus::Running => "running",
            ScheduleStatus::Failing => "failing",
            ScheduleStatus::Paused => "paused",
            ScheduleStatus::Retired => "retired",
        }
    }

    /// Parses [`ScheduleStatus::as_str`]'s spelling.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::ScheduleStatus::parse("dead"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The rule of docs/schedules.md §9.13, from what both the engine's record and a stored row
    /// know: one decision for every reader.
    pub(crate) fn of(retired: bool, paused: bool, running: bool, consecutive_faults: u32) -> Self {
        if retired {
            ScheduleStatus::Retired
        } else if paused {
            ScheduleStatus::Paused
        } else if running {
            ScheduleStatus::Running
        } else if consecutive_faults > 0 {
            ScheduleStatus::Failing
        } else {
            ScheduleStatus::Active
        }
    }
}

impl std::fmt::Display for ScheduleStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a schedule retired (it will not fire again; its entry is kept 60 s for `schedule_info`).
///
/// ```
/// use tickstep_schedules::RetireReason;
/// assert_eq!(RetireReason::MaxFaults.as_str(), "max_faults");
/// assert_eq!(RetireReason::parse("completed"), Some(RetireReason::Completed));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum RetireReason {
    /// A one-shot fired and did not reschedule itself.
    Completed,
    /// `max_faults` consecutive faults.
    MaxFaults,
    /// The next deadline would pass the end of 64-bit Unix nanoseconds (counted as a fault).
    DeadlineOutOfRange,
    /// The target was no longer valid at firing time.
    InvalidTarget,
    /// Its `remaining_runs` were all made and settled (docs/schedules.md §16.5).
    RemainingRuns,
}

impl RetireReason {
    /// The reason's name in `retire_reason`.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::RetireReason::InvalidTarget.as_str(), "invalid_target");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            RetireReason::Completed => "completed",
            RetireReason::MaxFaults => "max_faults",
            RetireReason::DeadlineOutOfRange => "deadline_out_of_range",
            RetireReason::InvalidTarget => "invalid_target",
            RetireReason::RemainingRuns => "remaining_runs",
        }
    }

    /// Parses [`RetireReason::as_str`]'s spelling.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::RetireReason::parse("nope"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Self> {
        [
            RetireReason::Completed,
            RetireReason::MaxFaults,
            RetireReason::DeadlineOutOfRange,
            RetireReason::InvalidTarget,
            RetireReason::RemainingRuns,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }
}
