//! Daylight-saving time: what a schedule does with a wall-clock time that a zone skips (a gap)
//! or shows twice (a fold), and the zone facts the search needs to tell (docs/schedules.md §14.4,
//! docs/schedules.md §14.5).
//!
//! A zone's timeline is a row of *stretches*: the instants between two transitions, each with
//! one UTC offset. A wall-clock time inside a stretch's wall range is an instant of that stretch.
//! Where the offset goes back (a fold), the end of one stretch's wall range and the start of the
//! next one's overlap: those wall times are in both, first in the earlier stretch, then again in
//! the later. Where it goes forward (a gap), the wall times between the two ranges are in none.

use std::fmt;
use std::str::FromStr;

use jiff::Timestamp;
use jiff::tz::TimeZone;

use super::error::CalendarError;
use super::error::shown;

/// What a wall-clock time inside a gap (skipped by a spring-forward) does.
///
/// ```
/// use tickstep_schedules::GapPolicy;
/// assert_eq!("skip".parse::<GapPolicy>().unwrap(), GapPolicy::Skip);
/// assert_eq!(GapPolicy::default().to_string(), "shift");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GapPolicy {
    /// Fire at the first instant after the gap (the transition itself). Several wall times of
    /// one gap fire once. The default.
    #[default]
    Shift,
    /// Do not fire for that wall time.
    Skip,
}

/// What a wall-clock time inside a fold (shown twice by a fall-back) does.
///
/// ```
/// use tickstep_schedules::FoldPolicy;
/// assert_eq!("both".parse::<FoldPolicy>().unwrap(), FoldPolicy::Both);
/// assert_eq!(FoldPolicy::default().to_string(), "first");
/// assert!("twice".parse::<FoldPolicy>().is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FoldPolicy {
    /// Fire at its first occurrence (the earlier offset). The default.
    #[default]
    First,
    /// Fire at its second occurrence (the later offset).
    Last,
    /// Fire at both.
    Both,
}

/// A schedule's DST policy: one rule for gaps and one for folds. It applies to expressions that
/// name particular hours; one whose hour field allows every hour ignores it (docs/schedules.md
/// docs/schedules.md §14.5).
///
/// ```
/// use tickstep_schedules::{DstPolicy, FoldPolicy, GapPolicy};
/// let policy = DstPolicy::default();
/// assert_eq!((policy.gap, policy.fold), (GapPolicy::Shift, FoldPolicy::First));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DstPolicy {
    /// Wall times in a gap.
    pub gap: GapPolicy,
    /// Wall times in a fold.
    pub fold: FoldPolicy,
}

impl GapPolicy {
    /// Its word: `"shift"` or `"skip"`.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::GapPolicy::Skip.as_str(), "skip");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Shift => "shift",
            Self::Skip => "skip",
        }
    }
}

impl FoldPolicy {
    /// Its word: `"first"`, `"last"` or `"both"`.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::FoldPolicy::Last.as_str(), "last");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::First => "first",
            Self::Last => "last",
            Self::Both => "both",
        }
    }
}

impl FromStr for GapPolicy {
    type Err = CalendarError;
    fn from_str(word: &str) -> Result<Self, CalendarError> {
        match word {
            "shift" => Ok(Self::Shift),
            "skip" => Ok(Self::Skip),
            _ => Err(CalendarError::Policy {
                what: "gap",
                value: shown(word),
                allowed: "\"shift\", \"skip\"",
            }),
        }
    }
}

impl FromStr for FoldPolicy {
    type Err = CalendarError;
    fn from_str(word: &str) -> Result<Self, CalendarError> {
        match word {
            "first" => Ok(Self::First),
            "last" => Ok(Self::Last),
            "both" => Ok(Self::Both),
            _ => Err(CalendarError::Policy {
                what: "fold",
                value: shown(word),
                allowed: "\"first\", \"last\", \"both\"",
            }),
        }
    }
}

impl fmt::Display for GapPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for FoldPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The stretch of a zone's timeline holding one instant: its offset, and the transition that
/// ends it (the instant and the offset after it), if any.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stretch {
    pub(crate) offset: i64,
    pub(crate) end: Option<(i64, i64)>,
}

/// Zone lookups, in whole seconds since the Unix epoch (an instant inside jiff's range).
pub(crate) fn offset_at(zone: &TimeZone, instant: i64) -> i64 {
    Timestamp::from_second(instant).map_or(0, |t| i64::from(zone.to_offset(t).seconds()))
}

pub(crate) fn stretch_at(zone: &TimeZone, instant: i64) -> Stretch {
    let Ok(at) = Timestamp::from_second(instant) else {
        return Stretch {
            offset: 0,
            end: None,
        };
    };
    Stretch {
        offset: i64::from(zone.to_offset(at).seconds()),
        end: zone
            .following(at)
            .next()
            .map(|t| (t.timestamp().as_second(), i64::from(t.offset().seconds()))),
    }
}

/// The start of the stretch holding `instant` and the offset before it, if a transition
/// precedes it.
pub(crate) fn stretch_start(zone: &TimeZone, instant: i64) -> Option<(i64, i64)> {
    let after = Timestamp::from_second(instant + 1).ok()?;
    let start = zone.preceding(after).next()?.timestamp().as_second();
    Some((start, offset_at(zone, start - 1)))
}
