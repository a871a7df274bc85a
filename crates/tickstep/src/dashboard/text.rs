//! Text one user typed, as HTML (docs/serve.md §13.3): made terminal-safe by the host's
//! [`shown`] (docs/serve.md §11.1), then its markup characters made entities.

use tickstep_host::shown;

/// `text` as HTML text or attribute value: control and bidi characters (an ANSI escape's ESC
/// among them) shown as visible escapes by [`shown`], then the five markup characters as
/// entities, so nothing a user typed is markup or reaches a terminal (docs/serve.md §13.3).
pub(crate) fn escape(text: &str) -> String {
    let shown = shown(text);
    let mut out = String::with_capacity(shown.len());
    for c in shown.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_quotes_and_ansi_escapes_come_out_as_text() {
        // docs/serve.md §13.3
        assert_eq!(
            escape("<script>alert(1)</script>"),
            "&lt;script&gt;alert(1)&lt;/script&gt;"
        );
        assert_eq!(
            escape("\"><img onerror='x'>"),
            "&quot;&gt;&lt;img onerror=&#39;x&#39;&gt;"
        );
        assert_eq!(escape("\u{1b}[31mred"), "\\x1b[31mred");
        assert_eq!(escape("a\u{202e}<b"), "a\\u{202e}&lt;b");
        assert_eq!(escape("a & b"), "a &amp; b");
    }
}
