//! The cron language (docs/schedules.md §14.1): text to the sets of wall-clock values each field
//! allows. Matching those sets against a wall-clock date is `civil.rs`'s business; zones are
//! `zone.rs`'s.

use super::MAX_EXPR_LEN;
use super::error::shown;
use super::error::{CalendarError, CronField};

/// A set of small numbers, one bit each, in the narrowest word that holds the field's values:
/// a calendar is kept per schedule, so its bit sets are most of its size (docs/schedules.md
/// §14.7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Bits<W = u64>(pub(crate) W);

impl<W: Copy + Into<u64> + TryFrom<u64>> Bits<W> {
    fn word(self) -> u64 {
        self.0.into()
    }

    pub(crate) fn has(self, n: u32) -> bool {
        n < 64 && self.word() >> n & 1 == 1
    }

    /// The smallest member `>= from`.
    pub(crate) fn next_from(self, from: u32) -> Option<u32> {
        if from >= 64 {
            return None;
        }
        let rest = self.word() >> from;
        (rest != 0).then(|| from + rest.trailing_zeros())
    }

    /// Adds `n`; the parser checks every number against its field's bounds first, so it fits.
    fn add(&mut self, n: u32) {
        let word = self.word() | 1 << n;
        self.0 = W::try_from(word)
            .ok()
            .expect("a field's numbers fit its word");
    }

    fn add_range(&mut self, lo: u32, hi: u32, step: u32) {
        let mut n = lo;
        while n <= hi {
            self.add(n);
            n += step;
        }
    }

    /// Whether every number of `lo..=hi` (below 64) is a member: one mask, since every search
    /// asks it (`CronSpec::every_hour`).
    fn covers(self, lo: u32, hi: u32) -> bool {
        let mask = (u64::MAX >> (63 - (hi - lo))) << lo;
        self.word() & mask == mask
    }
}

/// A parsed expression: what each field allows. The flags are the cron language's own switches
/// (`L`, `LW`, `*` or not), one each.
#[allow(clippy::struct_excessive_bools)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CronSpec {
    pub(crate) seconds: Bits,
    pub(crate) minutes: Bits,
    pub(crate) hours: Bits<u32>,
    /// Days 1–31 named by number.
    pub(crate) days: Bits<u32>,
    /// `L`: the month's last day.
    pub(crate) last_day: bool,
    /// `LW`: the month's last weekday (Monday–Friday).
    pub(crate) last_weekday: bool,
    /// `nW`: the weekday nearest to day n, within its month.
    pub(crate) nearest_weekday: Bits<u32>,
    pub(crate) months: Bits<u16>,
    /// Weekdays 0–6 (Sunday = 0) named plainly.
    pub(crate) weekdays: Bits<u8>,
    /// `d#k`: bit `k` (1–5) of entry `d` — the k-th such weekday of the month.
    pub(crate) nth_weekday: [u8; 7],
    /// `dL`: the month's last such weekday.
    pub(crate) last_weekdays: Bits<u8>,
    /// The day-of-month field is not `*` or `?`.
    pub(crate) dom_restricted: bool,
    /// The day-of-week field is not `*` or `?`.
    pub(crate) dow_restricted: bool,
}

impl CronSpec {
    /// The hour field selects all 24 hours: the expression is wall-clock periodic within the day
    /// and the DST policy does not apply to it (docs/schedules.md §14.5).
    pub(crate) fn every_hour(&self) -> bool {
        self.hours.covers(0, 23)
    }

    /// Parses an expression: an `@alias`, or 5 or 6 fields separated by white space.
    pub(crate) fn parse(expr: &str) -> Result<Self, CalendarError> {
        if expr.len() > MAX_EXPR_LEN {
            return Err(CalendarError::TooLong { len: expr.len() });
        }
        let trimmed = expr.trim();
        if trimmed.is_empty() {
            return Err(CalendarError::Empty);
        }
        let expanded = if trimmed.starts_with('@') {
            alias(trimmed)?
        } else {
            trimmed
        };
        let fields: Vec<&str> = expanded.split_ascii_whitespace().collect();
        let (seconds, rest) = match fields.len() {
            5 => ("0", &fields[..]),
            6 => (fields[0], &fields[1..]),
            found => {
                return Err(CalendarError::FieldCount {
                    expr: shown(trimmed),
                    found,
                });
            }
        };
        let mut spec = CronSpec {
            seconds: plain_field(CronField::Second, seconds)?,
            minutes: plain_field(CronField::Minute, rest[0])?,
            hours: plain_field(CronField::Hour, rest[1])?,
            days: Bits(0),
            last_day: false,
            last_weekday: false,
            nearest_weekday: Bits(0),
            months: plain_field(CronField::Month, rest[3])?,
            weekdays: Bits(0),
            nth_weekday: [0; 7],
            last_weekdays: Bits(0),
            dom_restricted: !is_any(rest[2]),
            dow_restricted: !is_any(rest[4]),
        };
        spec.parse_days_of_month(rest[2])?;
        spec.parse_days_of_week(rest[4])?;
        Ok(spec)
    }

    fn parse_days_of_month(&mut self, text: &str) -> Result<(), CalendarError> {
        let field = CronField::DayOfMonth;
        if is_any(text) {
            self.days.add_range(1, 31, 1);
            return Ok(());
        }
        for item in items(field, text)? {
            let upper = item.to_ascii_uppercase();
            if upper == "L" {
                self.last_day = true;
            } else if upper == "LW" {
                self.last_weekday = true;
            } else if let Some(day) = upper.strip_suffix('W') {
                let day = number(field, item, day)?;
                self.nearest_weekday.add(day);
            } else {
                let (lo, hi, step) = range(field, item)?;
                self.days.add_range(lo, hi, step);
            }
        }
        Ok(())
    }

    fn parse_days_of_week(&mut self, text: &str) -> Result<(), CalendarError> {
        let field = CronField::DayOfWeek;
        if is_any(text) {
            self.weekdays.add_range(0, 6, 1);
            return Ok(());
        }
        for item in items(field, text)? {
            if let Some((day, nth)) = item.split_once('#') {
                let day = number(field, item, day)? % 7;
                let nth = parse_u32(nth)
                    .filter(|k| (1..=5).contains(k))
                    .ok_or_else(|| problem(field, item, "the number after # must be 1-5"))?;
                self.nth_weekday[day as usize] |= 1 << nth;
            } else if let Some(day) = item.strip_suffix(['L', 'l']) {
                let day = number(field, item, day)? % 7;
                self.last_weekdays.add(day);
            } else {
                let (lo, hi, step) = range(field, item)?;
                let mut bits = Bits::<u8>(0);
                bits.add_range(lo, hi, step);
                // 7 is Sunday, like 0.
                self.weekdays.0 |= (bits.0 | bits.0 >> 7) & 0x7f;
            }
        }
        Ok(())
    }
}

/// `*` or `?`: the field allows every value and does not count as restricted
/// (docs/schedules.md §14.6).
fn is_any(text: &str) -> bool {
    text == "*" || text == "?"
}

fn alias(word: &str) -> Result<&'static str, CalendarError> {
    Ok(match word.to_ascii_lowercase().as_str() {
        "@yearly" | "@annually" => "0 0 0 1 1 *",
        "@monthly" => "0 0 0 1 * *",
        "@weekly" => "0 0 0 * * 0",
        "@daily" | "@midnight" => "0 0 0 * * *",
        "@hourly" => "0 0 * * * *",
        _ => {
            return Err(CalendarError::UnknownAlias { alias: shown(word) });
        }
    })
}

/// A field with only numbers, names, ranges, steps and lists (no `L`, `W`, `#`, `?`).
fn plain_field<W>(field: CronField, text: &str) -> Result<Bits<W>, CalendarError>
where
    W: Copy + Default + Into<u64> + TryFrom<u64>,
{
    let mut bits = Bits::<W>::default();
    if text == "*" {
        let (lo, hi) = field.bounds();
        bits.add_range(lo, hi, 1);
        return Ok(bits);
    }
    for item in items(field, text)? {
        let (lo, hi, step) = range(field, item)?;
        bits.add_range(lo, hi, step);
    }
    Ok(bits)
}

fn items(field: CronField, text: &str) -> Result<impl Iterator<Item = &str>, CalendarError> {
    if text.split(',').any(str::is_empty) {
        return Err(problem(field, text, "an empty item in a list"));
    }
    Ok(text.split(','))
}

/// `*`, `n`, `a-b`, each optionally `/step`; `n/step` means `n-max/step`.
fn range(field: CronField, item: &str) -> Result<(u32, u32, u32), CalendarError> {
    let (lo_max, hi_max) = field.bounds();
    // `*` and `n/step` run to Saturday: 7 is only a second name for Sunday.
    let implicit_hi = if field == CronField::DayOfWeek {
        6
    } else {
        hi_max
    };
    let (span, step) = match item.split_once('/') {
        Some((span, step)) => {
            let step = parse_u32(step)
                .filter(|s| (1..=hi_max - lo_max + 1).contains(s))
                .ok_or_else(|| {
                    problem(
                        field,
                        item,
                        &format!("a step must be a number 1-{}", hi_max - lo_max + 1),
                    )
                })?;
            (span, Some(step))
        }
        None => (item, None),
    };
    let (lo, hi) = if span == "*" {
        (lo_max, implicit_hi)
    } else if let Some((a, b)) = span.split_once('-') {
        let (a, b) = (number(field, item, a)?, number(field, item, b)?);
        if a > b {
            return Err(problem(
                field,
                item,
                &format!("the range starts after it ends ({a} > {b}); ranges do not wrap"),
            ));
        }
        (a, b)
    } else {
        let n = number(field, item, span)?;
        (n, if step.is_some() { implicit_hi } else { n })
    };
    Ok((lo, hi, step.unwrap_or(1)))
}

/// A number or (months, weekdays) a three-letter English name, within the field's bounds.
fn number(field: CronField, item: &str, text: &str) -> Result<u32, CalendarError> {
    let (lo, hi) = field.bounds();
    let n = match parse_u32(text) {
        Some(n) => n,
        None => name(field, text).ok_or_else(|| {
            let expected = match field {
                CronField::Month => "a number or a month name (JAN-DEC)",
                CronField::DayOfWeek => "a number or a day name (SUN-SAT)",
                _ => "a number",
            };
            problem(
                field,
                item,
                &format!("\"{}\" is not {expected}", shown(text)),
            )
        })?,
    };
    if n < lo || n > hi {
        return Err(problem(field, item, &format!("{n} is outside {lo}-{hi}")));
    }
    Ok(n)
}

/// Decimal digits only (no sign, no spaces), at most 4 of them.
fn parse_u32(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 4 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn name(field: CronField, text: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
    ];
    const DAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
    let names: &[&str] = match field {
        CronField::Month => &MONTHS,
        CronField::DayOfWeek => &DAYS,
        _ => return None,
    };
    let index = names.iter().position(|n| n.eq_ignore_ascii_case(text))? as u32;
    Some(if field == CronField::Month {
        index + 1
    } else {
        index
    })
}

fn problem(field: CronField, item: &str, what: &str) -> CalendarError {
    CalendarError::Field {
        field,
        item: shown(item),
        problem: what.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_error(expr: &str) -> (CronField, String) {
        match CronSpec::parse(expr) {
            Err(CalendarError::Field { field, problem, .. }) => (field, problem),
            other => panic!("{expr}: {other:?}"),
        }
    }

    #[test]
    fn five_fields_fix_the_second_at_zero_and_six_name_it() {
        let five = CronSpec::parse("*/15 9-17 * * MON-FRI").unwrap();
        assert_eq!(five.seconds, Bits(1));
        assert_eq!(five.minutes, Bits(1 | 1 << 15 | 1 << 30 | 1 << 45));
        assert_eq!(five.weekdays, Bits(0b011_1110));
        let six = CronSpec::parse("10,20 0 3 * * *").unwrap();
        assert_eq!(six.seconds, Bits(1 << 10 | 1 << 20));
        assert!(!six.every_hour() && !five.every_hour());
        assert!(CronSpec::parse("0 * * * *").unwrap().every_hour());
    }

    #[test]
    fn names_steps_from_a_start_and_sunday_as_seven() {
        let spec = CronSpec::parse("0 0 5/10 jan,Jul-SEP 5-7").unwrap();
        assert_eq!(
            CronSpec::parse("0 0 * * 1/2").unwrap().weekdays,
            Bits(0b010_1010)
        );
        assert_eq!(spec.days, Bits(1 << 5 | 1 << 15 | 1 << 25));
        assert_eq!(spec.months, Bits(1 << 1 | 1 << 7 | 1 << 8 | 1 << 9));
        assert_eq!(spec.weekdays, Bits(1 | 1 << 5 | 1 << 6));
    }

    #[test]
    fn special_days_l_w_hash_and_question_mark() {
        let spec = CronSpec::parse("0 0 L,15W,LW * ?").unwrap();
        assert!(spec.last_day && spec.last_weekday && spec.nearest_weekday.has(15));
        assert!(spec.dom_restricted && !spec.dow_restricted);
        let spec = CronSpec::parse("0 0 ? * 5L,MON#2").unwrap();
        assert_eq!(spec.last_weekdays, Bits(1 << 5));
        assert_eq!(spec.nth_weekday[1], 1 << 2);
        assert!(!spec.dom_restricted && spec.dow_restricted);
    }

    #[test]
    fn aliases_expand_to_fixed_fields() {
        let daily = CronSpec::parse("@daily").unwrap();
        assert_eq!(daily, CronSpec::parse("0 0 * * *").unwrap());
        assert_eq!(
            CronSpec::parse("@Hourly").unwrap(),
            CronSpec::parse("0 * * * *").unwrap()
        );
        assert!(matches!(
            CronSpec::parse("@fortnightly"),
            Err(CalendarError::UnknownAlias { .. })
        ));
    }

    #[test]
    fn each_bad_item_names_its_field_and_rule() {
        assert_eq!(
            field_error("61 * * * *"),
            (CronField::Minute, "61 is outside 0-59".into())
        );
        assert_eq!(field_error("0 24 * * *").0, CronField::Hour);
        assert_eq!(field_error("0 0 0 * *").0, CronField::DayOfMonth);
        assert_eq!(field_error("0 0 * 13 *").0, CronField::Month);
        assert_eq!(field_error("0 0 * * 8").0, CronField::DayOfWeek);
        assert_eq!(field_error("60 0 0 * * *").0, CronField::Second);
        assert!(field_error("5-1 * * * *").1.contains("do not wrap"));
        assert!(field_error("*/0 * * * *").1.contains("step"));
        assert!(field_error("*/61 * * * *").1.contains("step"));
        assert!(field_error("1,,2 * * * *").1.contains("empty item"));
        assert!(field_error("? * * * *").1.contains("not a number"));
        assert!(field_error("0 L * * *").1.contains("not a number"));
        assert_eq!(field_error("0 0 * * MON#6").0, CronField::DayOfWeek);
        assert_eq!(field_error("0 0 32W * *").0, CronField::DayOfMonth);
        assert_eq!(field_error("0 0 * * FOO").0, CronField::DayOfWeek);
        assert_eq!(field_error("-1 * * * *").0, CronField::Minute);
        assert_eq!(field_error("99999999999 * * * *").0, CronField::Minute);
    }

    #[test]
    fn empty_huge_and_miscounted_expressions_are_refused() {
        assert_eq!(CronSpec::parse(" \t"), Err(CalendarError::Empty));
        let huge = "1,".repeat(200) + "1 * * * *";
        assert_eq!(
            CronSpec::parse(&huge),
            Err(CalendarError::TooLong { len: huge.len() })
        );
        assert!(matches!(
            CronSpec::parse("* * * *"),
            Err(CalendarError::FieldCount { found: 4, .. })
        ));
        assert!(matches!(
            CronSpec::parse("* * * * * * *"),
            Err(CalendarError::FieldCount { found: 7, .. })
        ));
    }

    #[test]
    fn covers_is_every_number_of_the_range() {
        let all_hours = CronSpec::parse("0 0-23 * * *").unwrap();
        assert!(all_hours.every_hour());
        for missing in [0, 11, 23] {
            let hours: Vec<String> = (0..24)
                .filter(|&h| h != missing)
                .map(|h| h.to_string())
                .collect();
            let spec = CronSpec::parse(&format!("0 {} * * *", hours.join(","))).unwrap();
            assert!(!spec.every_hour(), "hour {missing} missing");
        }
        assert!(Bits::<u64>(u64::MAX).covers(0, 63));
        assert!(Bits::<u64>(0b1110).covers(1, 3) && !Bits::<u64>(0b1110).covers(0, 3));
    }
}
