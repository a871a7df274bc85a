//! Schedule keys (docs/schedules.md §5.12–§5.18): the rule a key must follow, and what makes two
//! keyed schedules "the same schedule" when a creation finds its key taken.
//!
//! A leaf module: it knows rows (the one shape every schedule has, in memory or stored), never
//! the engine's entries, so the engine and both stores judge keys by the same code.

use crate::Error;
use crate::store_rows::ScheduleRow;

/// The longest schedule key, in bytes (docs/schedules.md §5.12).
///
/// ```
/// assert_eq!(tickstep_schedules::MAX_KEY_LEN, 64);
/// ```
pub const MAX_KEY_LEN: usize = 64;

/// The rule, as errors state it.
pub(crate) const KEY_RULE: &str = "a schedule key is 1 to 64 characters, each an ASCII letter, \
     digit, '_', '-', '.' or ':' (docs/schedules.md §5.12)";

/// Whether `key` follows the rule of docs/schedules.md §5.12.
pub(crate) fn is_valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= MAX_KEY_LEN
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'))
}

/// Refuses a key that breaks the rule: `E_INVARG` naming the key (quoted and escaped, so a
/// control character shows) and the rule.
pub(crate) fn check_key(key: &str) -> Result<(), Error> {
    if is_valid_key(key) {
        Ok(())
    } else {
        Err(Error::invalid(
            format!("{:?}", crate::limits::excerpt(key)),
            KEY_RULE,
        ))
    }
}

/// The first part of the definition in which `a` and `b` differ, by its option's name; `None`
/// when they define the same schedule (docs/schedules.md §5.13). The deadline, the creation time,
/// the id and the cadence state are not part of it: they are when, not what.
pub(crate) fn first_difference(a: &ScheduleRow, b: &ScheduleRow) -> Option<&'static str> {
    let checks: [(&'static str, bool); 19] = [
        ("kind", a.kind == b.kind),
        ("calendar", a.calendar == b.calendar),
        ("target", a.target == b.target),
        ("verb", a.verb == b.verb),
        ("args", a.args == b.args),
        ("interval", a.interval_ns == b.interval_ns),
        ("state", a.state == b.state),
        ("player", a.player == b.player),
        ("catchup", a.catchup == b.catchup),
        ("overlap", a.overlap == b.overlap),
        ("jitter", a.jitter_ns == b.jitter_ns),
        ("max_faults", a.max_faults == b.max_faults),
        ("adaptive", a.adaptive == b.adaptive),
        ("pass_elapsed", a.pass_elapsed == b.pass_elapsed),
        ("seconds", a.time_limit_ns == b.time_limit_ns),
        ("ticks", a.tick_limit == b.tick_limit),
        (
            "catchup_window",
            a.policies.catchup_window_ns == b.policies.catchup_window_ns,
        ),
        (
            "remaining_runs",
            a.policies.run_limit == b.policies.run_limit,
        ),
        (
            "on_max_faults",
            a.policies.on_max_faults == b.policies.on_max_faults,
        ),
    ];
    checks
        .into_iter()
        .find(|(_, same)| !same)
        .map(|(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_the_rule() {
        for good in [
            "a",
            "heartbeat",
            "zone:12.tick-1_b",
            &"k".repeat(MAX_KEY_LEN),
        ] {
            assert!(is_valid_key(good), "{good}");
        }
        for bad in [
            "",
            &"k".repeat(MAX_KEY_LEN + 1),
            "two words",
            "bell\u{7}",
            "tab\t",
            "é",
            "a/b",
        ] {
            let err = check_key(bad).unwrap_err();
            assert_eq!(err.code(), "E_INVARG", "{bad:?}");
            assert!(err.to_string().contains("docs/schedules.md §5.12"), "{err}");
        }
    }

    #[test]
    fn a_bad_key_is_named_escaped_and_bounded() {
        let err = check_key("bell\u{7}").unwrap_err().to_string();
        assert!(err.contains("bell\\u{7}"), "{err}");
        let err = check_key(&"x".repeat(1000)).unwrap_err().to_string();
        assert!(err.contains("(1000 bytes)") && err.len() < 400, "{err}");
    }
}
