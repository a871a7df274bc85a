//! Calendar times: a cron expression read in an IANA time zone under an explicit DST policy.
//!
//! A [`Calendar`] is a value: [`Calendar::new`] parses and checks a cron expression (5 or 6
//! fields, names, `L`, `W`, `#`, `?`, `@daily`-style aliases), looks its zone up in the tz
//! database bundled into the binary (never the host's zoneinfo, so every machine gives the same
//! instants) and takes a [`DstPolicy`] for wall times that a gap skips or a fold repeats.
//! [`Calendar::next_after`] and [`Calendar::upcoming`] then give its instants, and
//! [`Calendar::arrived`] counts the points that passed while nothing ran. It is the calendar of
//! `tickstep-schedules`' cron schedules, which re-exports it, and needs nothing of that engine:
//! this crate depends on `jiff` alone.
//!
//! ```
//! use tickstep_calendar::{Calendar, DstPolicy};
//! let cal = Calendar::new("0 9 * * MON-FRI", "America/New_York", DstPolicy::default())?;
//! let after = 1_774_569_600 * 1_000_000_000; // 2026-03-27T00:00:00Z, a Friday
//! let next = cal.next_after(after).unwrap();
//! assert_eq!(next / 1_000_000_000, 1_774_616_400); // 09:00 EDT, 13:00 UTC
//! # Ok::<(), tickstep_calendar::CalendarError>(())
//! ```
//!
//! # The model
//!
//! Instants are wall-clock Unix nanoseconds (`u64`), like every deadline of the engine; a
//! calendar fires on whole seconds. [`Calendar::new`] checks everything once — the expression
//! (`expr.rs`), that it names a date that exists (`civil.rs`), the zone and the policy — and
//! keeps the parsed fields as bit sets. [`Calendar::next_after`] walks wall-clock matches stretch
//! by stretch of the zone's timeline (`next.rs`), applying the DST policy where a wall time falls
//! in a gap or a fold (`dst.rs`). Every refusal is a [`CalendarError`] naming the field, the value
//! and the rule. The rules are numbered in docs/schedules.md §14 of the source.
//!
//! # Costs
//!
//! A search is a bit-set walk of the wall-clock fields plus a zone lookup per DST transition
//! crossed, with no allocation. The measurements are in
//! docs/schedules.md §14.8 and §14.16.

mod arrived;
mod civil;
mod dst;
mod error;
mod expr;
mod expr_text;
mod next;

use jiff::tz::TimeZone;

pub use arrived::PointsArrived;
pub use dst::{DstPolicy, FoldPolicy, GapPolicy};
pub use error::{CalendarError, CronField};

use civil::{DAY, days_from_civil};
use error::shown;
use expr::CronSpec;
use expr_text::Text;

/// The longest cron expression accepted, in bytes (docs/schedules.md §14.1).
pub const MAX_EXPR_LEN: usize = 256;

const NANOS: u64 = 1_000_000_000;

/// A cron expression in a time zone with a DST policy: the instants at which a calendar
/// schedule fires.
///
/// ```
/// use tickstep_calendar::{Calendar, DstPolicy};
/// // 03:00 on weekdays in Paris. 2026-03-27 is a Friday; 03:00 CET is 02:00 UTC.
/// let cal = Calendar::new("0 3 * * MON-FRI", "Europe/Paris", DstPolicy::default())?;
/// let friday = 1_774_569_600 * 1_000_000_000; // 2026-03-27T00:00:00Z
/// let next = cal.next_after(friday).unwrap();
/// assert_eq!(next / 1_000_000_000, 1_774_576_800); // 2026-03-27T02:00:00Z
/// // Then Monday 03:00 CEST (01:00 UTC): the clocks went forward on Sunday.
/// let times: Vec<u64> = cal.upcoming(friday, 2).map(|t| t / 1_000_000_000).collect();
/// assert_eq!(times, [1_774_576_800, 1_774_832_400]);
/// # Ok::<(), tickstep_calendar::CalendarError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Calendar {
    spec: CronSpec,
    /// Its IANA name is kept by jiff (`iana_name`), so the calendar holds no copy of it.
    zone: TimeZone,
    /// Short expressions are kept inline (`expr_text.rs`).
    expr: Text,
    policy: DstPolicy,
}

impl Calendar {
    /// Parses `expr` (docs/schedules.md §14.1) and looks `zone` up in the bundled tz database.
    ///
    /// # Errors
    ///
    /// [`CalendarError`] naming the field and rule for a bad expression,
    /// [`CalendarError::NeverOccurs`]
    /// for one that names no existing date (`0 0 30 2 *`), [`CalendarError::UnknownZone`] for a
    /// zone that is not in the database.
    ///
    /// ```
    /// use tickstep_calendar::{Calendar, CalendarError, DstPolicy};
    /// let never = Calendar::new("0 0 30 2 *", "UTC", DstPolicy::default()).unwrap_err();
    /// assert!(matches!(never, CalendarError::NeverOccurs { .. }));
    /// let zone = Calendar::new("@daily", "Mars/Olympus_Mons", DstPolicy::default()).unwrap_err();
    /// assert!(matches!(zone, CalendarError::UnknownZone { .. }));
    /// ```
    pub fn new(expr: &str, zone: &str, policy: DstPolicy) -> Result<Self, CalendarError> {
        let spec = CronSpec::parse(expr)?;
        // The Gregorian calendar repeats every 400 years, weekdays included: a date pattern with
        // no match in one cycle has none ever (docs/schedules.md §14.2).
        let cycle = days_from_civil(2000, 1, 1) * DAY;
        if spec
            .next_match(cycle, days_from_civil(2400, 1, 1) * DAY)
            .is_none()
        {
            return Err(CalendarError::NeverOccurs {
                expr: shown(expr.trim()),
            });
        }
        let unknown = || CalendarError::UnknownZone { zone: shown(zone) };
        if zone.len() > 64 {
            return Err(unknown());
        }
        let tz = TimeZone::get(zone).map_err(|_| unknown())?;
        // A zone of the database always has its name; one without could not be stored.
        if tz.iana_name().is_none() {
            return Err(unknown());
        }
        Ok(Self {
            spec,
            zone: tz,
            expr: Text::new(expr.trim()),
            policy,
        })
    }

    /// The first instant strictly after `after` (Unix nanoseconds) at which the calendar fires,
    /// or `None` if it never fires again before the last representable deadline (2554).
    ///
    /// ```
    /// use tickstep_calendar::{Calendar, DstPolicy};
    /// let cal = Calendar::new("*/10 * * * * *", "UTC", DstPolicy::default())?;
    /// assert_eq!(cal.next_after(0), Some(10_000_000_000));
    /// assert_eq!(cal.next_after(10_000_000_000), Some(20_000_000_000));
    /// # Ok::<(), tickstep_calendar::CalendarError>(())
    /// ```
    pub fn next_after(&self, after: u64) -> Option<u64> {
        // u64 nanoseconds are under 2^35 seconds: the conversion never saturates.
        let seconds = i64::try_from(after / NANOS).unwrap_or(i64::MAX);
        next::next_after(&self.spec, &self.zone, self.policy, seconds).map(|s| s as u64 * NANOS)
    }

    /// The next `count` instants after `after`, in order (fewer if the calendar ends first).
    ///
    /// ```
    /// use tickstep_calendar::{Calendar, DstPolicy};
    /// let cal = Calendar::new("@hourly", "Asia/Kolkata", DstPolicy::default())?;
    /// // Kolkata is UTC+05:30, so its hours start at half past UTC's.
    /// let hours: Vec<u64> = cal.upcoming(0, 3).map(|t| t / 1_000_000_000).collect();
    /// assert_eq!(hours, [1_800, 5_400, 9_000]);
    /// # Ok::<(), tickstep_calendar::CalendarError>(())
    /// ```
    pub fn upcoming(&self, after: u64, count: usize) -> impl Iterator<Item = u64> + '_ {
        let mut last = after;
        (0..count).map_while(move |_| {
            last = self.next_after(last)?;
            Some(last)
        })
    }

    /// The expression as given (trimmed).
    ///
    /// ```
    /// use tickstep_calendar::{Calendar, DstPolicy};
    /// let cal = Calendar::new(" @daily ", "UTC", DstPolicy::default())?;
    /// assert_eq!(cal.expr(), "@daily");
    /// # Ok::<(), tickstep_calendar::CalendarError>(())
    /// ```
    pub fn expr(&self) -> &str {
        self.expr.as_str()
    }

    /// The zone's IANA name, as the database spells it.
    ///
    /// ```
    /// use tickstep_calendar::{Calendar, DstPolicy};
    /// let cal = Calendar::new("@daily", "europe/paris", DstPolicy::default())?;
    /// assert_eq!(cal.zone(), "Europe/Paris");
    /// # Ok::<(), tickstep_calendar::CalendarError>(())
    /// ```
    pub fn zone(&self) -> &str {
        self.zone.iana_name().unwrap_or("UTC")
    }

    /// The DST policy.
    ///
    /// ```
    /// use tickstep_calendar::{Calendar, DstPolicy};
    /// let cal = Calendar::new("@daily", "UTC", DstPolicy::default())?;
    /// assert_eq!(cal.policy(), DstPolicy::default());
    /// # Ok::<(), tickstep_calendar::CalendarError>(())
    /// ```
    pub fn policy(&self) -> DstPolicy {
        self.policy
    }
}

/// Two calendars are equal when their expression (as given, trimmed), zone and policy are: a
/// calendar is a function of those three, so equal ones fire at the same instants.
///
/// ```
/// use tickstep_calendar::{Calendar, DstPolicy};
/// let a = Calendar::new("@daily", "europe/paris", DstPolicy::default())?;
/// assert_eq!(a, Calendar::new(" @daily", "Europe/Paris", DstPolicy::default())?);
/// assert_ne!(a, Calendar::new("0 0 * * *", "Europe/Paris", DstPolicy::default())?);
/// # Ok::<(), tickstep_calendar::CalendarError>(())
/// ```
impl PartialEq for Calendar {
    fn eq(&self, other: &Self) -> bool {
        self.expr() == other.expr() && self.zone() == other.zone() && self.policy == other.policy
    }
}

impl Eq for Calendar {}

/// Hashes what equality compares: the expression, the zone's name and the policy.
impl std::hash::Hash for Calendar {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.expr().hash(state);
        self.zone().hash(state);
        self.policy.hash(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calendar_is_small_and_shares_its_zone() {
        // A schedule keeps one (docs/schedules.md §14.7): the fields are bit sets in the
        // narrowest words that hold them, the zone a reference-counted handle on rules jiff's
        // bundled database parses once per zone and caches (its name with it), a short
        // expression inline. 88 bytes: with `Arc`'s two counts, one 112-byte allocator chunk.
        let size = std::mem::size_of::<Calendar>();
        assert!(size <= 88, "{size} bytes");
    }
}
