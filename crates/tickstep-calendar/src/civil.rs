//! Wall-clock (civil) time, with no zone: which dates and times a [`CronSpec`] matches, and the
//! first match at or after a given wall-clock time (docs/schedules.md §14.1, §14.6).
//!
//! A wall-clock time is counted as "wall seconds": seconds since 1970-01-01T00:00:00 on the wall
//! clock, as if every day had 86,400 of them. An instant is its wall seconds minus the zone's
//! offset there. The date arithmetic is the proleptic Gregorian calendar by day counts (the
//! classic civil-from-days conversion), a few integer operations with no table and no allocation;
//! the property test checks it against jiff's own calendar.

use super::expr::CronSpec;

pub(crate) const DAY: i64 = 86_400;

/// The last year a search looks at. Deadlines end in 2554 (u64 nanoseconds,
/// docs/schedules.md §1), so nothing later is ever needed.
pub(crate) const LAST_YEAR: i64 = 2600;

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(crate) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let (m, d) = (i64::from(month), i64::from(day));
    let y = if m <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date of a day count since 1970-01-01: (year, month 1–12, day 1–31).
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Sunday = 0 … Saturday = 6.
pub(crate) fn weekday(days: i64) -> u32 {
    // 1970-01-01 was a Thursday.
    (days + 4).rem_euclid(7) as u32
}

pub(crate) fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

impl CronSpec {
    /// Whether day `day` of a month of `length` days, falling on `weekday`, is allowed by the
    /// day-of-month and day-of-week fields: either one when both are restricted, as classic cron
    /// does (docs/schedules.md §13.44).
    pub(crate) fn day_matches(&self, day: u32, length: u32, weekday: u32) -> bool {
        let by_month = || {
            self.days.has(day)
                || (self.last_day && day == length)
                || (self.last_weekday && day == last_weekday_of(length, day, weekday))
                || (self.nearest_weekday.0 != 0 && self.is_nearest_weekday(day, length, weekday))
        };
        let by_week = || {
            self.weekdays.has(weekday)
                || self.nth_weekday[weekday as usize] >> day.div_ceil(7) & 1 == 1
                || (self.last_weekdays.has(weekday) && day + 7 > length)
        };
        match (self.dom_restricted, self.dow_restricted) {
            (true, true) => by_month() || by_week(),
            (true, false) => by_month(),
            (false, true) => by_week(),
            (false, false) => true,
        }
    }

    /// `nW`: is `day` the weekday (Monday–Friday) nearest to some named day `n` of this month,
    /// never crossing into another month? A named day past the month's end names nothing.
    fn is_nearest_weekday(&self, day: u32, length: u32, weekday: u32) -> bool {
        if weekday == 0 || weekday == 6 {
            return false;
        }
        (1..=length).any(|n| {
            if !self.nearest_weekday.has(n) {
                return false;
            }
            let n_weekday = (i64::from(weekday) + i64::from(n) - i64::from(day)).rem_euclid(7);
            let nearest = match n_weekday {
                6 if n == 1 => 3,          // Saturday the 1st: Monday the 3rd
                6 => n - 1,                // Saturday: the Friday before
                0 if n == length => n - 2, // Sunday the last: the Friday before
                0 => n + 1,                // Sunday: the Monday after
                _ => n,
            };
            nearest == day
        })
    }

    /// The first wall-clock second `>= from` and `< until` that the expression matches, if any.
    pub(crate) fn next_match(&self, from: i64, until: i64) -> Option<i64> {
        let (mut year, mut month, mut day) = civil_from_days(from.div_euclid(DAY));
        let second_of_day = from.rem_euclid(DAY) as u32;
        let (mut hour, mut minute, mut second) = (
            second_of_day / 3600,
            second_of_day / 60 % 60,
            second_of_day % 60,
        );
        loop {
            if year > LAST_YEAR {
                return None;
            }
            match self.months.next_from(month) {
                Some(m) if m <= 12 => {
                    if m != month {
                        (month, day, hour, minute, second) = (m, 1, 0, 0, 0);
                    }
                }
                _ => {
                    (year, month, day, hour, minute, second) = (year + 1, 1, 1, 0, 0, 0);
                    continue;
                }
            }
            let first_day = days_from_civil(year, month, 1);
            if (first_day + i64::from(day) - 1) * DAY >= until {
                return None;
            }
            let length = days_in_month(year, month);
            let found = (day..=length)
                .find(|&d| self.day_matches(d, length, weekday(first_day + i64::from(d) - 1)));
            let Some(d) = found else {
                (month, day, hour, minute, second) = (month + 1, 1, 0, 0, 0);
                if month > 12 {
                    (year, month) = (year + 1, 1);
                }
                continue;
            };
            if d != day {
                (day, hour, minute, second) = (d, 0, 0, 0);
            }
            let Some(h) = self.hours.next_from(hour).filter(|&h| h < 24) else {
                (day, hour, minute, second) = (day + 1, 0, 0, 0);
                if day > length {
                    (month, day) = (month + 1, 1);
                    if month > 12 {
                        (year, month) = (year + 1, 1);
                    }
                }
                continue;
            };
            if h != hour {
                (hour, minute, second) = (h, 0, 0);
            }
            let Some(m) = self.minutes.next_from(minute).filter(|&m| m < 60) else {
                (hour, minute, second) = (hour + 1, 0, 0);
                continue_hour(&mut year, &mut month, &mut day, &mut hour, length);
                continue;
            };
            if m != minute {
                (minute, second) = (m, 0);
            }
            let Some(s) = self.seconds.next_from(second).filter(|&s| s < 60) else {
                (minute, second) = (minute + 1, 0);
                if minute == 60 {
                    (hour, minute) = (hour + 1, 0);
                    continue_hour(&mut year, &mut month, &mut day, &mut hour, length);
                }
                continue;
            };
            let found =
                (first_day + i64::from(day) - 1) * DAY + i64::from(hour * 3600 + minute * 60 + s);
            return (found < until).then_some(found);
        }
    }
}

/// After an hour overflowed past 23: the next day's midnight, or the next month's first.
fn continue_hour(year: &mut i64, month: &mut u32, day: &mut u32, hour: &mut u32, length: u32) {
    if *hour < 24 {
        return;
    }
    (*day, *hour) = (*day + 1, 0);
    if *day > length {
        (*month, *day) = (*month + 1, 1);
        if *month > 12 {
            (*year, *month) = (*year + 1, 1);
        }
    }
}

/// The last Monday–Friday of a month of `length` days, given that `day` falls on `weekday`.
fn last_weekday_of(length: u32, day: u32, weekday: u32) -> u32 {
    let last_weekday = (weekday + length - day) % 7;
    match last_weekday {
        0 => length - 2,
        6 => length - 1,
        _ => length,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wall(y: i64, mo: u32, d: u32, h: i64, mi: i64) -> i64 {
        days_from_civil(y, mo, d) * DAY + h * 3600 + mi * 60
    }

    fn next(expr: &str, from: i64) -> Option<i64> {
        CronSpec::parse(expr).unwrap().next_match(from, i64::MAX)
    }

    #[test]
    fn day_counts_round_trip_and_know_the_weekday() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        for days in [-1_000_000, -1, 0, 59, 11_016, 19_000, 230_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(weekday(days_from_civil(2026, 12, 3)), 4); // a Thursday
        assert_eq!(days_in_month(2000, 2), 29);
        assert_eq!(days_in_month(2100, 2), 28);
    }

    #[test]
    fn next_match_carries_over_each_field() {
        let from = wall(2026, 12, 31, 23, 59) + 30;
        assert_eq!(next("* * * * *", from), Some(wall(2027, 1, 1, 0, 0)));
        assert_eq!(
            next("*/20 * * * * *", from),
            Some(wall(2026, 12, 31, 23, 59) + 40)
        );
        assert_eq!(next("0 12 * * *", from), Some(wall(2027, 1, 1, 12, 0)));
        assert_eq!(next("0 0 29 2 *", from), Some(wall(2028, 2, 29, 0, 0)));
        assert_eq!(
            next("0 0 31 * *", wall(2027, 4, 1, 0, 0)),
            Some(wall(2027, 5, 31, 0, 0))
        );
        assert_eq!(next("0 0 30 2 *", from), None);
    }

    #[test]
    fn special_days() {
        let from = wall(2026, 1, 1, 0, 0);
        // The last day, the last weekday and the last Friday of February 2026 (Saturday the 28th).
        assert_eq!(next("0 0 L 2 *", from), Some(wall(2026, 2, 28, 0, 0)));
        assert_eq!(next("0 0 LW 2 *", from), Some(wall(2026, 2, 27, 0, 0)));
        assert_eq!(next("0 0 ? 2 5L", from), Some(wall(2026, 2, 27, 0, 0)));
        // The second Monday of March 2026 is the 9th.
        assert_eq!(next("0 0 ? 3 MON#2", from), Some(wall(2026, 3, 9, 0, 0)));
        // 1W: Saturday 1 August 2026 → Monday the 3rd; 15W: Sunday 15 March → Monday the 16th.
        assert_eq!(next("0 0 1W 8 *", from), Some(wall(2026, 8, 3, 0, 0)));
        assert_eq!(next("0 0 15W 3 *", from), Some(wall(2026, 3, 16, 0, 0)));
        // 31W: Sunday 31 May 2026 → Friday the 29th; no 31st in June: nothing that month.
        assert_eq!(next("0 0 31W 5,6 *", from), Some(wall(2026, 5, 29, 0, 0)));
        assert_eq!(next("0 0 31W 6 *", from), None);
    }

    #[test]
    fn both_day_fields_restricted_means_either() {
        // The 13th, or any Friday: from Thursday 1 January 2026, Friday the 2nd comes first.
        let from = wall(2026, 1, 1, 0, 0);
        assert_eq!(next("0 0 13 * FRI", from), Some(wall(2026, 1, 2, 0, 0)));
        assert_eq!(next("0 0 13 * ?", from), Some(wall(2026, 1, 13, 0, 0)));
        assert_eq!(next("0 0 ? * FRI", from), Some(wall(2026, 1, 2, 0, 0)));
    }
}
