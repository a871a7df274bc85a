//! Times as a person reads them (docs/runtime.md §7.10): a date to the second in the local zone
//! and how far it is from now, `2026-12-04 11:03:07 CET (in 3 h 12 min)`. `--utc` shows the date
//! in UTC, `--unix` the bare Unix seconds for scripts, and `--json` keeps float Unix seconds.

use jiff::tz::TimeZone;

/// How the command prints times: chosen once, from `--utc` and `--unix`.
#[derive(Clone, Debug)]
pub(crate) enum Times {
    /// Dates in this zone (the system's: `TZ`, else `/etc/localtime`; UTC when neither says).
    Zone(TimeZone),
    /// Unix seconds, with no distance from now.
    Unix,
}

impl Times {
    /// The local zone, UTC with `utc`, bare seconds with `unix`.
    pub(crate) fn chosen(utc: bool, unix: bool) -> Times {
        if unix {
            Times::Unix
        } else if utc {
            Times::Zone(TimeZone::UTC)
        } else {
            Times::Zone(TimeZone::try_system().unwrap_or(TimeZone::UTC))
        }
    }

    /// `unix_seconds` as a date and its distance from `now`; `-` for 0.0, which `schedule_info`
    /// uses for "never" and "none" (docs/schedules.md §9.2).
    pub(crate) fn at(&self, unix_seconds: f64, now: f64) -> String {
        if unix_seconds == 0.0 {
            return "-".to_owned();
        }
        match self {
            Times::Unix => self.date(unix_seconds),
            Times::Zone(_) => format!(
                "{} ({})",
                self.date(unix_seconds),
                relative(unix_seconds, now)
            ),
        }
    }

    /// `unix_seconds` as `YYYY-MM-DD HH:MM:SS ZONE` (or as seconds to the millisecond with
    /// `--unix`), or the number itself where it is no date (outside the years -9999 to 9999,
    /// which no stored time is).
    pub(crate) fn date(&self, unix_seconds: f64) -> String {
        let Times::Zone(zone) = self else {
            return format!("{unix_seconds:.3}");
        };
        jiff::Timestamp::from_second(unix_seconds.floor() as i64).map_or_else(
            |_| format!("{unix_seconds} s"),
            |t| {
                t.to_zoned_datetime(zone.clone())
                    .strftime("%Y-%m-%d %H:%M:%S %Z")
                    .to_string()
            },
        )
    }

    /// How far `unix_seconds` is from `now`, or the time itself with `--unix`.
    pub(crate) fn until(&self, unix_seconds: f64, now: f64) -> String {
        match self {
            Times::Unix => self.date(unix_seconds),
            Times::Zone(_) => relative(unix_seconds, now),
        }
    }
}

/// How far a time is from now, as a person says it: one helper for the CLI and the dashboard
/// (docs/runtime.md §7.10).
pub(crate) use tickstep_host::relative;

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-12-04 10:03:07 UTC.
    const T: f64 = 1_796_378_587.0;

    #[test]
    fn a_time_reads_as_a_date_in_the_zone_and_how_far_it_is() {
        let utc = Times::chosen(true, false);
        assert_eq!(utc.date(T), "2026-12-04 10:03:07 UTC");
        assert_eq!(utc.at(T, T - 180.0), "2026-12-04 10:03:07 UTC (in 3 min)");
        assert_eq!(utc.at(T, T + 7200.0), "2026-12-04 10:03:07 UTC (2 h ago)");
        assert_eq!(utc.at(0.0, T), "-", "0.0 is never");
        let paris = Times::Zone(jiff::tz::db().get("Europe/Paris").unwrap());
        assert_eq!(paris.date(T), "2026-12-04 11:03:07 CET");
        let summer = T - 150.0 * 86_400.0; // early July
        assert!(
            paris.date(summer).ends_with(" CEST"),
            "{}",
            paris.date(summer)
        );
    }

    #[test]
    fn unix_seconds_are_for_scripts() {
        let unix = Times::chosen(true, true);
        assert_eq!(unix.at(T + 0.115, T), "1796378587.115");
        assert_eq!(unix.until(T, T - 60.0), "1796378587.000");
        assert_eq!(unix.at(0.0, T), "-");
    }

    #[test]
    fn the_units_are_the_ones_that_read_best() {
        let now = 1_000_000.0;
        for (gap, shown) in [
            (0.2, "now"),
            (-0.4, "now"),
            (42.0, "in 42 s"),
            (89.0, "in 89 s"),
            (90.0, "in 2 min"),
            (-600.0, "10 min ago"),
            (3599.0, "in 1 h"),
            (3569.0, "in 59 min"),
            (3600.0, "in 1 h"),
            (5400.0, "in 1 h 30 min"),
            (3.0 * 3600.0 + 12.0 * 60.0 + 20.0, "in 3 h 12 min"),
            (2.0 * 3600.0 - 10.0, "in 2 h"),
            (-(26.0 * 3600.0), "26 h ago"),
            (3.0 * 86_400.0, "in 3 d"),
            (6.0 * 86_400.0 + 23.0 * 3600.0 + 100.0, "in 6 d 23 h"),
            (2.0 * 86_400.0 - 60.0, "in 47 h 59 min"),
            (2.0 * 86_400.0 + 1000.0, "in 2 d"),
        ] {
            assert_eq!(relative(now + gap, now), shown, "{gap}");
        }
    }
}
