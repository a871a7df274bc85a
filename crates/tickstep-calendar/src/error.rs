//! What a calendar refuses: each error names the field (or zone, or policy) and the rule of
//! docs/schedules.md §14 it broke, and quotes at most 80 bytes of what it was given
//! (docs/schedules.md §12.3).

use std::fmt;

use super::MAX_EXPR_LEN;

/// One of the six fields of a cron expression, in the order they are written (the seconds only
/// in the six-field form).
///
/// ```
/// use tickstep_calendar::CronField;
/// assert_eq!(CronField::DayOfWeek.to_string(), "day-of-week");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CronField {
    /// Seconds, 0–59 (six-field form only).
    Second,
    /// Minutes, 0–59.
    Minute,
    /// Hours, 0–23.
    Hour,
    /// Day of the month, 1–31, `L`, `nW`, `LW`.
    DayOfMonth,
    /// Month, 1–12 or `JAN`–`DEC`.
    Month,
    /// Day of the week, 0–7 (0 and 7 are Sunday) or `SUN`–`SAT`, `nL`, `n#k`.
    DayOfWeek,
}

impl CronField {
    /// The field's lowest and highest number.
    pub(crate) fn bounds(self) -> (u32, u32) {
        match self {
            Self::Second | Self::Minute => (0, 59),
            Self::Hour => (0, 23),
            Self::DayOfMonth => (1, 31),
            Self::Month => (1, 12),
            Self::DayOfWeek => (0, 7),
        }
    }
}

impl fmt::Display for CronField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Second => "second",
            Self::Minute => "minute",
            Self::Hour => "hour",
            Self::DayOfMonth => "day-of-month",
            Self::Month => "month",
            Self::DayOfWeek => "day-of-week",
        })
    }
}

/// Why a calendar (expression, zone, DST policy) was refused. Nothing is created from a refused
/// calendar.
///
/// ```
/// use tickstep_calendar::{Calendar, CalendarError, CronField, DstPolicy};
/// let e = Calendar::new("61 * * * *", "UTC", DstPolicy::default()).unwrap_err();
/// assert!(matches!(e, CalendarError::Field { field: CronField::Minute, .. }));
/// assert_eq!(
///     e.to_string(),
///     "minute field \"61\": 61 is outside 0-59 (docs/schedules.md §14.1)"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CalendarError {
    /// The expression is empty or only white space.
    #[error("empty cron expression: it needs 5 or 6 fields or an @alias (docs/schedules.md §14.1)")]
    Empty,
    /// The expression is longer than [`MAX_EXPR_LEN`] bytes.
    #[error("cron expression of {len} bytes: at most {MAX_EXPR_LEN} (docs/schedules.md §14.1)")]
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// Not 5 or 6 fields.
    #[error(
        "cron expression \"{expr}\" has {found} fields: it needs 5 (minute hour day month weekday) or 6 (second first) (docs/schedules.md §14.1)"
    )]
    FieldCount {
        /// The expression (escaped, cut at 80 bytes).
        expr: String,
        /// How many white-space separated fields it has.
        found: usize,
    },
    /// An `@word` that is not one of the aliases.
    #[error(
        "unknown alias \"{alias}\": one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly (docs/schedules.md §14.1)"
    )]
    UnknownAlias {
        /// What was written (escaped, cut at 80 bytes).
        alias: String,
    },
    /// One item of one field broke the field's grammar or range.
    #[error("{field} field \"{item}\": {problem} (docs/schedules.md §14.1)")]
    Field {
        /// The field.
        field: CronField,
        /// The item (between commas) that was refused, escaped and cut at 80 bytes.
        item: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The expression is well formed but names no date that exists in any year (`0 0 30 2 *`).
    #[error(
        "cron expression \"{expr}\" never occurs: no date in the 400-year Gregorian cycle matches its day, month and weekday fields (docs/schedules.md §14.2)"
    )]
    NeverOccurs {
        /// The expression (escaped, cut at 80 bytes).
        expr: String,
    },
    /// The zone is not in the bundled IANA tz database.
    #[error(
        "unknown time zone \"{zone}\": an IANA name such as \"Europe/Paris\" or \"UTC\" from the bundled tz database (docs/schedules.md §14.3)"
    )]
    UnknownZone {
        /// The name given (escaped, cut at 80 bytes).
        zone: String,
    },
    /// A DST policy word that is not one of the allowed ones.
    #[error("DST policy \"{value}\" for a {what}: one of {allowed} (docs/schedules.md §14.4)")]
    Policy {
        /// `"gap"` or `"fold"`.
        what: &'static str,
        /// The word given (escaped, cut at 80 bytes).
        value: String,
        /// The allowed words.
        allowed: &'static str,
    },
}

/// `text` as an error quotes it: quotes, backslashes and control characters escaped (so what is
/// shown is one printable line), then at most 80 bytes of that, cut at a character boundary and
/// followed by `...` and the text's length in bytes when cut (docs/schedules.md §12.3). Escaping
/// comes first so that an escaped control character cannot make the quote longer than the cut.
pub(crate) fn shown(text: &str) -> String {
    const MAX: usize = 80;
    let bytes = |c: char| c.escape_debug().map(char::len_utf8).sum::<usize>();
    let whole = text.chars().map(bytes).sum::<usize>() <= MAX;
    let mut out = String::new();
    for c in text.chars() {
        if !whole && out.len() + bytes(c) > MAX - 3 {
            return format!("{out}... ({} bytes)", text.len());
        }
        out.extend(c.escape_debug());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn a_quote_is_escaped_before_it_is_cut() {
        assert_eq!(shown("a\"b"), "a\\\"b");
        assert_eq!(shown(&"x".repeat(80)), "x".repeat(80));
        let controls = "\u{13}".repeat(100);
        let quoted = shown(&controls);
        assert!(quoted.len() <= 80 + " (100 bytes)".len(), "{quoted}");
        assert!(quoted.ends_with("... (100 bytes)"), "{quoted}");
        let long = shown(&"é".repeat(100));
        assert!(
            long.starts_with("éé") && long.ends_with("... (200 bytes)"),
            "{long}"
        );
    }
}
