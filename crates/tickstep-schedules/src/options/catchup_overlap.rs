//! The two policies for deadlines that arrive at a bad time: [`Catchup`], for cadence points
//! that passed with nothing running, and [`Overlap`], for one that arrives while a firing still
//! runs (docs/schedules.md §4.4–§4.5).

/// What to do about cadence points that passed with nothing running to account for them
/// (the server was down, or the scheduler stalled past more than one point).
///
/// ```
/// use tickstep_schedules::Catchup;
/// assert_eq!(Catchup::default(), Catchup::Skip);
/// assert_eq!(Catchup::parse("all"), Some(Catchup::All));
/// assert_eq!(Catchup::Once.as_str(), "once");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Catchup {
    /// Drop every missed point; the next deadline is the first cadence point after now.
    #[default]
    Skip,
    /// One late firing now stands for all missed points; then the cadence resumes.
    Once,
    /// Fire each missed point in order, and the points that come due meanwhile, at most
    /// [`MAX_CATCHUP_FIRINGS`] per catch-up.
    All,
}

/// The most firings one catch-up under [`Catchup::All`] makes: of the missed points it keeps the
/// latest this many (older ones are dropped), and the points that come due while it fires them
/// join it up to the same bound in all (docs/schedules.md §4.5).
///
/// ```
/// assert_eq!(tickstep_schedules::MAX_CATCHUP_FIRINGS, 1000);
/// ```
pub const MAX_CATCHUP_FIRINGS: u64 = 1000;

impl Catchup {
    /// The option's spelling.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::Catchup::Skip.as_str(), "skip");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Catchup::Skip => "skip",
            Catchup::Once => "once",
            Catchup::All => "all",
        }
    }

    /// Parses the option's spelling.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::Catchup::parse("once"), Some(tickstep_schedules::Catchup::Once));
    /// assert_eq!(tickstep_schedules::Catchup::parse("Once"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "skip" => Some(Catchup::Skip),
            "once" => Some(Catchup::Once),
            "all" => Some(Catchup::All),
            _ => None,
        }
    }
}

/// What to do when a deadline arrives while the previous firing of the same schedule still runs.
///
/// ```
/// use tickstep_schedules::Overlap;
/// assert_eq!(Overlap::default(), Overlap::Skip);
/// assert_eq!(Overlap::parse("queue"), Some(Overlap::Queue));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Overlap {
    /// Drop the deadline (counted in `overlap_count`); the cadence stays in phase.
    #[default]
    Skip,
    /// At most one deadline waits and starts when the running firing ends; further ones are
    /// dropped and counted.
    Queue,
    /// Every deadline starts a firing; `running_task` reports the oldest.
    Concurrent,
    /// The deadline kills the running firing (a fault of kind `killed` naming why) and starts
    /// (docs/schedules.md §16.7).
    CancelOther,
}

impl Overlap {
    /// The option's spelling.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::Overlap::Concurrent.as_str(), "concurrent");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Overlap::Skip => "skip",
            Overlap::Queue => "queue",
            Overlap::Concurrent => "concurrent",
            Overlap::CancelOther => "cancel_other",
        }
    }

    /// Parses the option's spelling.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::Overlap::parse("skip"), Some(tickstep_schedules::Overlap::Skip));
    /// assert_eq!(tickstep_schedules::Overlap::parse("parallel"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "skip" => Some(Overlap::Skip),
            "queue" => Some(Overlap::Queue),
            "concurrent" => Some(Overlap::Concurrent),
            "cancel_other" => Some(Overlap::CancelOther),
            _ => None,
        }
    }
}
