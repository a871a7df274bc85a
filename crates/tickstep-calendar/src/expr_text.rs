//! A calendar's expression text, kept inside the calendar when it is short.
//!
//! A calendar is kept per schedule (docs/schedules.md §14.7) and nearly every cron expression is
//! short (`0 3 * * MON-FRI` is 15 bytes): kept inline, such a text costs no allocation of its
//! own — a boxed one would add an allocator chunk of at least 32 bytes to every calendar.

/// The longest text kept inline, in bytes: with its length byte and the tag, the same 24 bytes
/// as a `Box<str>` and its padding.
const INLINE: usize = 22;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Text {
    Inline { len: u8, bytes: [u8; INLINE] },
    Boxed(Box<str>),
}

impl Text {
    pub(super) fn new(text: &str) -> Self {
        match u8::try_from(text.len()) {
            Ok(len) if text.len() <= INLINE => {
                let mut bytes = [0; INLINE];
                bytes[..text.len()].copy_from_slice(text.as_bytes());
                Self::Inline { len, bytes }
            }
            _ => Self::Boxed(text.into()),
        }
    }

    pub(super) fn as_str(&self) -> &str {
        match self {
            Self::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).expect("copied whole from a str")
            }
            Self::Boxed(text) => text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_inline_long_text_boxed_and_both_read_back() {
        assert_eq!(std::mem::size_of::<Text>(), 24);
        for text in [
            "",
            "@daily",
            "0 3 * * MON-FRI",
            "22 bytes exactly here!",
            "é 0 * * * *",
        ] {
            let kept = Text::new(text);
            assert!(matches!(kept, Text::Inline { .. }), "{text:?}");
            assert_eq!(kept.as_str(), text);
        }
        let long = "0,5,10,15,20,25 9-17 * * MON-FRI";
        let kept = Text::new(long);
        assert!(matches!(kept, Text::Boxed(_)));
        assert_eq!(kept.as_str(), long);
    }
}
