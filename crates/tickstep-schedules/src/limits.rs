//! The limits on what a schedule may hold (docs/schedules.md §5.7, §8.3, §13.13): deadlines
//! are 64-bit Unix nanoseconds, and values must survive a trip through the store's JSON.

use std::time::Duration;

use crate::{Error, Value};

/// How deeply `args` and `state` may nest lists and maps. The store keeps values as JSON, and
/// each level costs two or three levels of JSON nesting against the JSON reader's limit of 128;
/// 32 leaves room and is far beyond what schedule arguments need.
///
/// ```
/// assert_eq!(tickstep_schedules::MAX_VALUE_DEPTH, 32);
/// ```
pub const MAX_VALUE_DEPTH: usize = 32;

/// Rejects values the store cannot hold (non-finite floats, nesting past [`MAX_VALUE_DEPTH`]),
/// naming where they were found.
pub(crate) fn check_storable(value: &Value, what: &str) -> Result<(), Error> {
    if !value.is_storable() {
        return Err(Error::invalid(
            preview(value),
            format!("{what} must not contain NaN or infinite floats"),
        ));
    }
    let depth = value.depth();
    if depth > MAX_VALUE_DEPTH {
        return Err(Error::invalid(
            preview(value),
            format!("{what} may nest lists and maps at most {MAX_VALUE_DEPTH} deep (got {depth})"),
        ));
    }
    Ok(())
}

/// A host-reported fault value the store can hold: as is when storable, else its text (so a
/// NaN or a pathological nesting in an error value can never make the store unreadable).
pub(crate) fn storable_fault_value(value: Value) -> Value {
    if value.is_storable() && value.depth() <= MAX_VALUE_DEPTH {
        value
    } else {
        Value::Str(preview(&value))
    }
}

/// A value's text for an error message, cut short so a 1 MB state does not make a 1 MB error.
/// (Display recurses; values reaching it have passed the depth check or are fault values whose
/// depth the host produced.)
pub(crate) fn preview(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > EXCERPT_BYTES {
        excerpt(&text)
    } else {
        text
    }
}

/// The longest text an error message quotes from a value or a stored column, in bytes.
const EXCERPT_BYTES: usize = 80;

/// `text` for an error message: whole when short, else its first 77 bytes (at a character
/// boundary), `...` and its full length, so a corrupt 1 MB column does not make a 1 MB error.
pub(crate) fn excerpt(text: &str) -> String {
    if text.len() <= EXCERPT_BYTES {
        return text.to_owned();
    }
    let cut = (0..=EXCERPT_BYTES - 3)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}... ({} bytes)", &text[..cut], text.len())
}

/// `seconds` as whole nanoseconds, or `None` when negative, not finite, or past `u64::MAX`.
pub(crate) fn seconds_to_nanos(seconds: f64) -> Option<u64> {
    if !seconds.is_finite() || seconds < 0.0 {
        return None;
    }
    let nanos = (seconds * 1e9).round();
    // 2^64 is exactly representable; anything at or above it does not fit.
    if nanos >= 18_446_744_073_709_551_616.0 {
        None
    } else {
        Some(nanos as u64)
    }
}

/// `d` in nanoseconds, saturating.
pub(crate) fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_to_nanos_rejects_what_does_not_fit() {
        assert_eq!(seconds_to_nanos(1.5), Some(1_500_000_000));
        assert_eq!(seconds_to_nanos(18_446_744_074.0), None);
        assert_eq!(seconds_to_nanos(-1.0), None);
    }

    #[test]
    fn non_storable_fault_values_become_their_text() {
        assert_eq!(storable_fault_value(Value::Int(1)), Value::Int(1));
        assert_eq!(
            storable_fault_value(Value::Float(f64::NAN)),
            Value::from("NaN")
        );
    }
}
