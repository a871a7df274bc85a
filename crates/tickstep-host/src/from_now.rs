//! How far a time is from now, as a person says it (docs/runtime.md §7.10): the one form every
//! host that shows a schedule's times to a person uses — the command-line tool's tables and
//! `info`, the dashboard's pages — so a time reads the same wherever it is read.

/// How far `unix_seconds` is from `now`, as a person says it: `in 42 s`, `in 12 min`,
/// `in 3 h 12 min`, `2 d 4 h ago`; `now` within half a second. Up to an hour, one unit;
/// beyond, the unit and the next one down, so a weekly schedule reads `in 6 d 23 h`.
///
/// ```
/// use tickstep_host::relative;
/// assert_eq!(relative(1_000.0 + 192.0 * 60.0, 1_000.0), "in 3 h 12 min");
/// assert_eq!(relative(1_000.0, 1_120.0), "2 min ago");
/// assert_eq!(relative(1_000.0, 1_000.2), "now");
/// ```
pub fn relative(unix_seconds: f64, now: f64) -> String {
    let gap = unix_seconds - now;
    let size = gap.abs();
    if size < 0.5 {
        return "now".to_owned();
    }
    let whole = size.round() as u64;
    let minutes = (size / 60.0).round() as u64;
    let span = if whole < 90 {
        format!("{whole} s")
    } else if minutes < 60 {
        format!("{minutes} min")
    } else if whole < 48 * 3600 {
        two_units(whole, 3600, "h", 60, "min")
    } else {
        two_units(whole, 86_400, "d", 3600, "h")
    };
    if gap > 0.0 {
        format!("in {span}")
    } else {
        format!("{span} ago")
    }
}

/// `seconds` as whole `big` units and the rest rounded to `small` units (`3 h 12 min`; the
/// small part left out when it rounds to 0, carried into the big one when it rounds to a whole).
fn two_units(seconds: u64, big: u64, big_name: &str, small: u64, small_name: &str) -> String {
    let mut count = seconds / big;
    let mut rest = ((seconds % big) as f64 / small as f64).round() as u64;
    if rest * small == big {
        count += 1;
        rest = 0;
    }
    if rest == 0 {
        format!("{count} {big_name}")
    } else {
        format!("{count} {big_name} {rest} {small_name}")
    }
}
