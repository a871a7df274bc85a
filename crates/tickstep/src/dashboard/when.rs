//! Times and spans as a person reads them (docs/runtime.md §7.10, docs/serve.md §13.2): how far a
//! time is from now (`in 3 h 12 min`, `2 min ago`) — the one helper the command-line tool's tables
//! and the dashboard share — a span in words for a cadence (`every 90 s`, `every 5 min`), and
//! [`When`], a time on a page: the relative form as text, the UTC date as its hover title and
//! `datetime`, which the page's script turns into the viewer's own zone.

use maud::{Render, html};

/// A time on a page, relative to `now`, with its date on hover; `-` for 0.0 (never, none).
pub(crate) struct When {
    pub(crate) at: f64,
    pub(crate) now: f64,
}

impl Render for When {
    fn render_to(&self, buffer: &mut String) {
        if self.at == 0.0 {
            buffer.push('-');
            return;
        }
        let (iso, date) = jiff::Timestamp::from_second(self.at.floor() as i64).map_or_else(
            |_| (String::new(), format!("{} s", self.at)),
            |t| {
                (
                    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
                    t.strftime("%Y-%m-%d %H:%M:%S UTC").to_string(),
                )
            },
        );
        html! { time datetime=(iso) title=(date) { (relative(self.at, self.now)) } }
            .render_to(buffer);
    }
}

/// A span of `seconds` in the unit that reads best: `0.5 s`, `90 s`, `5 min`, `2 h`,
/// `1 h 30 min`, `7 d`.
pub(crate) fn span(seconds: f64) -> String {
    if seconds < 120.0 || seconds.fract() != 0.0 {
        let shown = format!("{seconds:.3}");
        return format!("{} s", shown.trim_end_matches('0').trim_end_matches('.'));
    }
    let whole = seconds as u64;
    if whole.is_multiple_of(86_400) {
        format!("{} d", whole / 86_400)
    } else if whole.is_multiple_of(3600) {
        format!("{} h", whole / 3600)
    } else if whole.is_multiple_of(60) && whole < 3600 {
        format!("{} min", whole / 60)
    } else if whole.is_multiple_of(60) {
        format!("{} h {} min", whole / 3600, whole % 3600 / 60)
    } else {
        format!("{whole} s")
    }
}

/// How far `unix_seconds` is from `now`, as a person says it: `in 42 s`, `in 12 min`,
/// `in 3 h 12 min`, `2 d 4 h ago`; `now` within half a second. Up to an hour, one unit;
/// beyond, the unit and the next one down, so a weekly schedule reads `in 6 d 23 h`.
#[cfg_attr(not(feature = "internal-cli"), allow(unreachable_pub))]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_read_in_the_unit_that_fits() {
        for (seconds, shown) in [
            (0.5, "0.5 s"),
            (1.0, "1 s"),
            (60.0, "60 s"),
            (90.0, "90 s"),
            (300.0, "5 min"),
            (7200.0, "2 h"),
            (5400.0, "1 h 30 min"),
            (604_800.0, "7 d"),
            (3601.0, "3601 s"),
        ] {
            assert_eq!(span(seconds), shown, "{seconds}");
        }
    }

    #[test]
    fn a_time_on_a_page_is_relative_with_its_date_on_hover() {
        // 2026-12-04 10:03:07 UTC.
        let at = 1_796_378_587.0;
        let html = maud::html! { (When { at, now: at - 192.0 * 60.0 }) }.into_string();
        assert_eq!(
            html,
            "<time datetime=\"2026-12-04T10:03:07Z\" title=\"2026-12-04 10:03:07 UTC\">in 3 h 12 min</time>"
        );
        assert_eq!(
            maud::html! { (When { at: 0.0, now: at }) }.into_string(),
            "-"
        );
    }
}
