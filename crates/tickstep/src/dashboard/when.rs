//! Times and spans on a page (docs/serve.md §13.2): a span in words for a cadence (`every 90 s`,
//! `every 5 min`), and [`When`], a time on a page: how far it is from now as text (the host's
//! [`relative`], docs/runtime.md §7.10, the form the command-line tool's tables use too), the UTC
//! date as its hover title and `datetime`, which the page's script turns into the viewer's own
//! zone.

use maud::{Render, html};
use tickstep_host::relative;

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
