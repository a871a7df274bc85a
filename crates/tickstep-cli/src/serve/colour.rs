//! The server's colour (docs/serve.md §8.10): a telnet client that says it shows ANSI colour gets
//! the server's own markers — `[system]`, `[say]`, `[mail]`, `[bell]` and `error:` — painted,
//! and nothing else. A player's text can never carry colour of its own: it reaches here with every
//! control character already written as a visible escape (docs/serve.md §11.1), so the only ESC bytes on the
//! wire are the ones this module writes.

/// MTTS's bit for "the client shows ANSI colour" (the MUD Terminal Type Standard's bit 1).
const MTTS_ANSI: u32 = 1;

/// The markers the server paints, each with its SGR colour.
const MARKERS: [(&str, &str); 5] = [
    ("[system]", "1;33"),
    ("error:", "31"),
    ("[say]", "36"),
    ("[mail]", "32"),
    ("[bell]", "35"),
];

/// Whether a client with this MTTS bit field and these terminal types shows ANSI colour.
pub(crate) fn shows_ansi(mtts: Option<u32>, terminal_types: &[String]) -> bool {
    match mtts {
        Some(bits) => bits & MTTS_ANSI != 0,
        // Asked for every line a client is sent, so compared in place, without an upper-cased copy.
        None => terminal_types.iter().any(|t| {
            ["ANSI", "XTERM", "VT100"].iter().any(|name| {
                t.as_bytes()
                    .windows(name.len())
                    .any(|w| w.eq_ignore_ascii_case(name.as_bytes()))
            })
        }),
    }
}

/// Appends `line` with its leading marker, if it has one, in the marker's colour.
pub(crate) fn paint(line: &str, out: &mut String) {
    match MARKERS.iter().find(|(marker, _)| line.starts_with(marker)) {
        Some((marker, sgr)) => {
            out.push_str("\x1b[");
            out.push_str(sgr);
            out.push('m');
            out.push_str(marker);
            out.push_str("\x1b[0m");
            out.push_str(&line[marker.len()..]);
        }
        None => out.push_str(line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn painted(line: &str) -> String {
        let mut out = String::new();
        paint(line, &mut out);
        out
    }

    #[test]
    fn only_the_servers_marker_is_painted() {
        assert_eq!(
            painted("[system] the store is gone"),
            "\x1b[1;33m[system]\x1b[0m the store is gone"
        );
        assert_eq!(
            painted("error: no such schedule"),
            "\x1b[31merror:\x1b[0m no such schedule"
        );
        assert_eq!(painted("ok: said"), "ok: said");
        // A marker in the middle of a player's text is not the server's.
        assert_eq!(
            painted("[say] bob says: [system] hi"),
            "\x1b[36m[say]\x1b[0m bob says: [system] hi"
        );
    }

    #[test]
    fn ansi_is_what_mtts_says_or_else_what_the_terminal_is_called() {
        assert!(shows_ansi(Some(137), &[]));
        assert!(!shows_ansi(Some(136), &["XTERM".into()]));
        assert!(shows_ansi(None, &["xterm-256color".into()]));
        assert!(!shows_ansi(None, &["DUMB".into()]));
        assert!(!shows_ansi(None, &[]));
    }
}
