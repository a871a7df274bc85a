//! Text one user typed, made safe to show another (docs/serve.md §11.1): what every host that
//! shows a schedule's stored text — a note, an argument, a fault — to a person puts it through,
//! on a terminal or, escaped once more for HTML, in the dashboard (docs/serve.md §13.3).
//!
//! A player's words reach other players' terminals: `say`, a schedule's `say` or `tell`,
//! listings and `info`. Raw, a carriage return lets them overwrite a line and fake a
//! `[system]` notice, an escape sequence clears a screen or sets a window title, a BEL rings,
//! and a bidi override (U+202E) turns the rest of a line around. So every such character is
//! shown as a visible escape — `\r`, `\x1b`, `\u{202e}` — where one player's text is put in a
//! line for another; a backslash stays as typed, since nothing after it is interpreted.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Unicode's explicit directional formatting characters (UAX #9): embeddings, overrides,
/// isolates and marks. Shown escaped, so a line reads in the order it was typed.
const BIDI_CONTROLS: [char; 12] = [
    '\u{061c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}',
    '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
];

/// Whether `c` is shown escaped: C0 (NUL, BEL, CR, LF, ESC …), DEL, C1 (CSI …) and the bidi
/// controls.
fn is_escaped(c: char) -> bool {
    c.is_control() || BIDI_CONTROLS.contains(&c)
}

/// `text` as another player's screen may show it: printable characters as they are, the rest
/// as visible escapes (docs/serve.md §11.1). Borrows when nothing needs escaping.
///
/// ```
/// assert_eq!(tickstep_host::shown("hi\r[system] bye"), "hi\\r[system] bye");
/// assert_eq!(tickstep_host::shown("plain"), "plain");
/// ```
pub fn shown(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 && is_escaped(c) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_escaped(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_text_is_borrowed_unchanged() {
        assert!(matches!(shown("héllo, wörld ✓ \\x1b"), Cow::Borrowed(_)));
    }

    #[test]
    fn controls_escapes_and_bidi_overrides_become_visible() {
        assert_eq!(
            shown("hi\r[system] shutting down"),
            "hi\\r[system] shutting down"
        );
        assert_eq!(
            shown("\x1b[2J\x1b]0;pwned\x07"),
            "\\x1b[2J\\x1b]0;pwned\\x07"
        );
        assert_eq!(shown("a\0b\x7fc"), "a\\x00b\\x7fc");
        assert_eq!(shown("\u{9b}31m"), "\\u{9b}31m", "C1 CSI");
        assert_eq!(shown("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(shown("x\u{2066}y\u{200f}"), "x\\u{2066}y\\u{200f}");
        assert_eq!(shown("tab\there\nnext"), "tab\\there\\nnext");
    }
}
