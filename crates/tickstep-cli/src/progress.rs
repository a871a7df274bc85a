//! Progress bars for anything that takes longer than a second, drawn on stderr only when it is a
//! terminal (indicatif hides them otherwise), so piped output and tests stay clean.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar over `total` units named `what`, shown only after a second of work.
pub(crate) fn bar(total: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(total);
    let template = format!("{{bar:40}} {{pos}}/{{len}} {what} ({{eta}} left)");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style);
    }
    // Drawn at most a few times a second; a fast run finishes before the first draw.
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}
