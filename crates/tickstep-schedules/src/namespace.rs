//! Namespaces (docs/schedules.md §15): the application a schedule belongs to, so that several
//! applications share one store and none of them sees, claims, fires or retires another's
//! schedules.
//!
//! A leaf module: a name and its rule, nothing of the engine or the stores. The name follows the
//! rule schedule keys follow (docs/schedules.md §5.12), so it is safe in every store, terminal
//! and URL as it is.

use std::fmt;

use crate::Error;
use crate::schedule_keys::{MAX_KEY_LEN, is_valid_key};

/// The rule, as errors state it.
pub(crate) const NAMESPACE_RULE: &str = "a namespace is 1 to 64 characters, each an ASCII \
     letter, digit, '_', '-', '.' or ':' (docs/schedules.md §15.1)";

/// The name of the application a schedule belongs to (docs/schedules.md §15).
///
/// An engine opens one namespace ([`Config::namespace`](crate::Config::namespace)) and sees only
/// its schedules; [`Namespace::DEFAULT`] (`default`) unless the host names its own. The name is
/// kept inline, so the type is `Copy` like the rest of [`Config`](crate::Config).
///
/// ```
/// use tickstep_schedules::Namespace;
/// let serve = Namespace::new("serve").unwrap();
/// assert_eq!(serve.as_str(), "serve");
/// assert_eq!(Namespace::default(), Namespace::DEFAULT);
/// assert_eq!(Namespace::DEFAULT.to_string(), "default");
/// let err = Namespace::new("my app").unwrap_err();
/// assert_eq!(err.code(), "E_INVARG");
/// assert!(err.to_string().contains("\"my app\""), "{err}");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Namespace {
    len: u8,
    bytes: [u8; MAX_KEY_LEN],
}

impl Namespace {
    /// The namespace of an engine that names none: `default`.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::Namespace::DEFAULT.as_str(), "default");
    /// ```
    pub const DEFAULT: Namespace = Namespace::from_static("default");

    /// `name` as a namespace.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArg`] (`E_INVARG`) naming `name` and the rule (docs/schedules.md §15.1)
    /// when it is empty, longer than 64 bytes, or holds anything but ASCII letters, digits, `_`,
    /// `-`, `.` and `:`.
    ///
    /// ```
    /// use tickstep_schedules::Namespace;
    /// assert!(Namespace::new("billing.eu-1").is_ok());
    /// assert!(Namespace::new("").is_err());
    /// ```
    pub fn new(name: &str) -> Result<Namespace, Error> {
        if !is_valid_key(name) {
            return Err(Error::invalid(
                format!("{:?}", crate::limits::excerpt(name)),
                NAMESPACE_RULE,
            ));
        }
        Ok(Namespace::from_static(name))
    }

    /// A namespace made from any text: each character the rule does not allow becomes `-`, and
    /// the result is cut to 64 bytes; [`Namespace::DEFAULT`] when nothing is left. A host names
    /// its namespace after its program this way (docs/runtime.md §6.5).
    ///
    /// ```
    /// use tickstep_schedules::Namespace;
    /// assert_eq!(Namespace::lossy("my game (beta)").as_str(), "my-game--beta-");
    /// assert_eq!(Namespace::lossy("").as_str(), "default");
    /// ```
    #[must_use]
    pub fn lossy(name: &str) -> Namespace {
        let kept: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':') {
                    c
                } else {
                    '-'
                }
            })
            .take(MAX_KEY_LEN)
            .collect();
        Namespace::new(&kept).unwrap_or(Namespace::DEFAULT)
    }

    /// The name.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::Namespace::new("demo").unwrap().as_str(), "demo");
    /// ```
    #[must_use]
    pub fn as_str(&self) -> &str {
        // Checked ASCII when made, so never the empty fallback.
        std::str::from_utf8(self.bytes.get(..usize::from(self.len)).unwrap_or_default())
            .unwrap_or_default()
    }

    /// `name`, at most [`MAX_KEY_LEN`] bytes (the rule is checked by the caller), inline.
    const fn from_static(name: &str) -> Namespace {
        let mut bytes = [0; MAX_KEY_LEN];
        let src = name.as_bytes();
        let mut i = 0;
        while i < src.len() && i < MAX_KEY_LEN {
            bytes[i] = src[i];
            i += 1;
        }
        #[allow(clippy::cast_possible_truncation)] // at most 64 bytes, copied above
        Namespace {
            len: i as u8,
            bytes,
        }
    }
}

impl Default for Namespace {
    fn default() -> Self {
        Namespace::DEFAULT
    }
}

impl fmt::Display for Namespace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Namespace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Namespace({:?})", self.as_str())
    }
}

impl std::str::FromStr for Namespace {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self, Error> {
        Namespace::new(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespace_follows_the_key_rule() {
        for good in ["a", "serve", "demo", "zone:12.tick-1_b", &"x".repeat(64)] {
            assert_eq!(Namespace::new(good).unwrap().as_str(), good);
        }
        for bad in ["", "my app", "tab\t", "é", &"x".repeat(65)] {
            assert!(Namespace::new(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn lossy_keeps_what_the_rule_allows_and_cuts_at_64() {
        assert_eq!(Namespace::lossy("job node").as_str(), "job-node");
        assert_eq!(Namespace::lossy(&"y".repeat(80)).as_str(), "y".repeat(64));
        assert_eq!(Namespace::lossy("ü").as_str(), "-");
    }
}
