//! Times as a person reads them in `tickstep schedules`' tables (docs/runtime.md §7.10): a UTC
//! date to the second and how far it is from now, `2026-12-04 10:03:07 UTC (in 3 min)`. The
//! `--json` output keeps float Unix seconds, for scripts.

/// `unix_seconds` as a UTC date and its distance from `now`; `-` for 0.0, which `schedule_info`
/// uses for "never" and "none" (docs/schedules.md §9.2).
pub(crate) fn at(unix_seconds: f64, now: f64) -> String {
    if unix_seconds == 0.0 {
        return "-".to_owned();
    }
    format!("{} ({})", date(unix_seconds), relative(unix_seconds, now))
}

/// `unix_seconds` as `YYYY-MM-DD HH:MM:SS UTC`, or the number itself where it is no date
/// (outside the years -9999 to 9999, which no stored time is).
pub(crate) fn date(unix_seconds: f64) -> String {
    jiff::Timestamp::from_second(unix_seconds.floor() as i64).map_or_else(
        |_| format!("{unix_seconds} s"),
        |t| t.strftime("%Y-%m-%d %H:%M:%S UTC").to_string(),
    )
}

/// How far `unix_seconds` is from `now`, in the unit that reads best: `in 42 s`, `in 3 min`,
/// `2 h ago`, `in 4 d`; `now` within half a second.
pub(crate) fn relative(unix_seconds: f64, now: f64) -> String {
    let gap = unix_seconds - now;
    let size = gap.abs();
    if size < 0.5 {
        return "now".to_owned();
    }
    let (count, unit) = if size < 90.0 {
        (size, "s")
    } else if size < 90.0 * 60.0 {
        (size / 60.0, "min")
    } else if size < 36.0 * 3600.0 {
        (size / 3600.0, "h")
    } else {
        (size / 86_400.0, "d")
    };
    let count = count.round();
    if gap > 0.0 {
        format!("in {count} {unit}")
    } else {
        format!("{count} {unit} ago")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_reads_as_a_date_and_how_far_it_is() {
        // 2026-12-04 10:03:07 UTC
        let t = 1_796_378_587.0;
        assert_eq!(date(t), "2026-12-04 10:03:07 UTC");
        assert_eq!(at(t, t - 180.0), "2026-12-04 10:03:07 UTC (in 3 min)");
        assert_eq!(at(t, t + 7200.0), "2026-12-04 10:03:07 UTC (2 h ago)");
        assert_eq!(at(0.0, t), "-", "0.0 is never");
    }

    #[test]
    fn the_unit_is_the_one_that_reads_best() {
        let now = 1_000_000.0;
        for (gap, shown) in [
            (0.2, "now"),
            (-0.4, "now"),
            (42.0, "in 42 s"),
            (89.0, "in 89 s"),
            (90.0, "in 2 min"),
            (-600.0, "10 min ago"),
            (5400.0, "in 2 h"),
            (3.0 * 86_400.0, "in 3 d"),
        ] {
            assert_eq!(relative(now + gap, now), shown, "{gap}");
        }
    }
}
