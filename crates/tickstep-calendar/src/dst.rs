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
/// use tickstep_calendar::GapPolicy;
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
/// use tickstep_calendar::FoldPolicy;
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
/// use tickstep_calendar::{DstPolicy, FoldPolicy, GapPolicy};
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
    /// assert_eq!(tickstep_calendar::GapPolicy::Skip.as_str(), "skip");
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
    /// assert_eq!(tickstep_calendar::FoldPolicy::Last.as_str(), "last");
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

/// The stretch holding `instant`. The last one found on this thread is kept: a calendar that
/// fires often asks for the same stretch again and again (a secondly one, once a second), and
/// finding the next transition is the costly part of a search — a zone's rules after its table
/// are computed from its POSIX rule. The kept stretch answers for any instant from the one it
/// was found for up to its end, in the zone of the same name (names are unique in the bundled
/// database, docs/schedules.md §14.3).
pub(crate) fn stretch_at(zone: &TimeZone, instant: i64) -> Stretch {
    let name = zone.iana_name().unwrap_or("");
    let kept = LAST_STRETCH.with_borrow(|last| {
        last.as_ref()
            .filter(|(n, from, s)| {
                n == name && *from <= instant && s.end.is_none_or(|(end, _)| instant < end)
            })
            .map(|(_, _, s)| *s)
    });
    if let Some(stretch) = kept {
        return stretch;
    }
    let Ok(at) = Timestamp::from_second(instant) else {
        return Stretch {
            offset: 0,
            end: None,
        };
    };
    let stretch = Stretch {
        offset: i64::from(zone.to_offset(at).seconds()),
        end: zone
            .following(at)
            .next()
            .map(|t| (t.timestamp().as_second(), i64::from(t.offset().seconds()))),
    };
    if !name.is_empty() {
        LAST_STRETCH.with_borrow_mut(|last| match last {
            Some((n, from, s)) if n == name => (*from, *s) = (instant, stretch),
            _ => *last = Some((name.to_owned(), instant, stretch)),
        });
    }
    stretch
}

thread_local! {
    /// The last stretch [`stretch_at`] found on this thread: its zone's name, the instant it
    /// was found for, the stretch.
    static LAST_STRETCH: std::cell::RefCell<Option<(String, i64, Stretch)>> =
        const { std::cell::RefCell::new(None) };
}

/// The start of the stretch holding `instant` and the offset before it, if a transition
/// precedes it.
pub(crate) fn stretch_start(zone: &TimeZone, instant: i64) -> Option<(i64, i64)> {
    let after = Timestamp::from_second(instant + 1).ok()?;
    let start = zone.preceding(after).next()?.timestamp().as_second();
    Some((start, offset_at(zone, start - 1)))
}

#[cfg(test)]
mod kept_stretch_tests {
    use super::*;

    #[test]
    fn the_kept_stretch_answers_only_inside_itself_and_its_zone() {
        let paris = TimeZone::get("Europe/Paris").unwrap();
        let tokyo = TimeZone::get("Asia/Tokyo").unwrap();
        // 2026-03-29 01:00 UTC: Paris goes from +1 to +2.
        let change = 1_774_746_000;
        let after = stretch_at(&paris, change + 10);
        assert_eq!(after.offset, 7_200);
        // Before the instant the kept stretch was found for: looked up again, not kept.
        assert_eq!(stretch_at(&paris, change - 10).offset, 3_600);
        assert_eq!(
            stretch_at(&paris, change - 10).end.map(|e| e.0),
            Some(change)
        );
        // Another zone at the same instant is its own.
        assert_eq!(stretch_at(&tokyo, change - 10).offset, 32_400);
        assert_eq!(stretch_at(&paris, change + 20).offset, 7_200);
    }
}
