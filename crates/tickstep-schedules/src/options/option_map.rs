//! An option map from a scripting language ([`Options::from_map`]), and the checks every option
//! gets when a schedule is created ([`Options::resolve`]).

use super::{Catchup, MAX_STATE_BYTES, OPTION_KEYS, Options, Overlap};
use crate::limits::{check_storable, preview, seconds_to_nanos};
use crate::{Error, Value};

impl Options {
    /// Parses a scripting language's option map: keys are strings or symbols from
    /// [`OPTION_KEYS`]; flags take integers or booleans; `catchup`/`overlap` take a string or
    /// symbol; `jitter` an integer or float; `max_faults` a non-negative integer; `player` an
    /// object; `state` anything.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArg`] naming the key for an unknown key, a key that is not a string or
    /// symbol, a value of the wrong type, or a policy spelled wrongly; also when `options` is not
    /// a map.
    ///
    /// ```
    /// use tickstep_schedules::{Options, Value};
    /// let typo = Value::Map(vec![(Value::from("persit"), Value::Int(0))]);
    /// let err = Options::from_map(&typo).unwrap_err();
    /// assert_eq!(err.code(), "E_INVARG");
    /// assert!(err.to_string().contains("persit"));
    /// ```
    pub fn from_map(options: &Value) -> Result<Self, Error> {
        let Value::Map(pairs) = options else {
            return Err(Error::invalid(
                preview(options),
                "schedule options must be a map",
            ));
        };
        let mut out = Options::default();
        for (key, value) in pairs {
            let Some(name) = key.as_text() else {
                return Err(Error::invalid(
                    preview(key),
                    "schedule option keys must be strings or symbols",
                ));
            };
            let wrong = |expected: &str| {
                Error::invalid(
                    preview(value),
                    format!("schedule option \"{name}\" must be {expected}"),
                )
            };
            match name {
                "adaptive" => out.adaptive = Some(value.as_flag().ok_or_else(|| wrong("a flag"))?),
                "pass_elapsed" => {
                    out.pass_elapsed = value.as_flag().ok_or_else(|| wrong("a flag"))?;
                }
                "persist" => out.persist = value.as_flag().ok_or_else(|| wrong("a flag"))?,
                "catchup" => {
                    out.catchup = value
                        .as_text()
                        .and_then(Catchup::parse)
                        .ok_or_else(|| wrong("\"skip\", \"once\" or \"all\""))?;
                }
                "overlap" => {
                    out.overlap = value.as_text().and_then(Overlap::parse).ok_or_else(|| {
                        wrong("\"skip\", \"queue\", \"concurrent\" or \"cancel_other\"")
                    })?;
                }
                "jitter" => {
                    out.jitter_seconds = match *value {
                        Value::Int(i) => i as f64,
                        Value::Float(f) => f,
                        _ => return Err(wrong("a number of seconds >= 0")),
                    };
                }
                "max_faults" => {
                    out.max_faults = match *value {
                        Value::Int(i) => u32::try_from(i)
                            .map_err(|_| wrong("an integer from 0 to 4294967295"))?,
                        _ => return Err(wrong("an integer from 0 to 4294967295")),
                    };
                }
                "seconds" => out.time_limit = Some(crate::firing_limits::parse_seconds(value)?),
                "ticks" => out.tick_limit = Some(crate::firing_limits::parse_ticks(value)?),
                "key" => {
                    out.key = Some(value.as_text().ok_or_else(|| wrong("a string"))?.to_owned());
                }
                "dst_gap" => {
                    out.dst.gap = parse_policy_word(value, name)?;
                }
                "dst_fold" => {
                    out.dst.fold = parse_policy_word(value, name)?;
                }
                "catchup_window" => {
                    out.catchup_window = Some(crate::policies::parse_catchup_window(value)?);
                }
                "remaining_runs" => {
                    out.remaining_runs = Some(crate::policies::parse_remaining_runs(value)?);
                }
                "on_max_faults" => {
                    out.on_max_faults = crate::policies::parse_on_max_faults(value)?;
                }
                "state" => out.state = Some(value.clone()),
                "player" => match *value {
                    Value::Obj(o) => out.player = Some(o),
                    _ => return Err(wrong("an object")),
                },
                _ => {
                    return Err(Error::invalid(
                        preview(key),
                        format!(
                            "unknown schedule option (known: {})",
                            OPTION_KEYS.join(", ")
                        ),
                    ));
                }
            }
        }
        Ok(out)
    }

    /// Checks the values the builder could not and resolves defaults that depend on the kind.
    pub(crate) fn resolve(&self, every: bool) -> Result<Resolved, Error> {
        let jitter = self.jitter_seconds;
        if !jitter.is_finite() || jitter < 0.0 {
            return Err(Error::invalid(
                Value::Float(jitter),
                "jitter must be a finite number of seconds >= 0",
            ));
        }
        let jitter_ns = seconds_to_nanos(jitter).ok_or_else(|| {
            Error::invalid(
                Value::Float(jitter),
                "jitter must fit in 64-bit nanoseconds (at most 18446744073 seconds)",
            )
        })?;
        if let Some(state) = &self.state {
            check_storable(state, "state")?;
            let size = serde_json::to_vec(state).map_or(usize::MAX, |b| b.len());
            if size > MAX_STATE_BYTES {
                return Err(Error::invalid(
                    crate::limits::preview(state),
                    format!(
                        "state must be at most {MAX_STATE_BYTES} bytes serialised (got {size})"
                    ),
                ));
            }
        }
        let (time_limit_ns, tick_limit) =
            crate::firing_limits::resolve(self.time_limit, self.tick_limit)?;
        let policies =
            crate::policies::resolve(self.catchup_window, self.remaining_runs, self.on_max_faults)?;
        Ok(Resolved {
            adaptive: self.adaptive.unwrap_or(!every),
            jitter_ns,
            time_limit_ns,
            tick_limit,
            policies,
        })
    }
}

/// Option values that needed checking or a kind-dependent default.
pub(crate) struct Resolved {
    pub(crate) adaptive: bool,
    pub(crate) jitter_ns: u64,
    /// The `seconds` limit in nanoseconds (at least 1), if set.
    pub(crate) time_limit_ns: Option<u64>,
    /// The `ticks` limit (at least 1), if set.
    pub(crate) tick_limit: Option<u64>,
    /// The policies of docs/schedules.md §16, checked.
    pub(crate) policies: crate::policies::Policies,
}

/// A DST policy word (`dst_gap`, `dst_fold`; docs/schedules.md §14.9): a string or symbol the
/// calendar's parser accepts, else `E_INVARG` naming the key, the value and the words allowed.
fn parse_policy_word<P>(value: &Value, key: &str) -> Result<P, Error>
where
    P: std::str::FromStr<Err = crate::CalendarError>,
{
    let word = value.as_text().ok_or_else(|| {
        Error::invalid(
            preview(value),
            format!("schedule option \"{key}\" must be a string (docs/schedules.md §14.9)"),
        )
    })?;
    word.parse().map_err(|e: crate::CalendarError| {
        Error::invalid(
            preview(value),
            format!("schedule option \"{key}\": {e} (docs/schedules.md §14.9)"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: Vec<(&str, Value)>) -> Value {
        Value::Map(
            pairs
                .into_iter()
                .map(|(k, v)| (Value::from(k), v))
                .collect(),
        )
    }

    #[test]
    fn option_unknown_key_is_invarg_naming_the_key() {
        let err = Options::from_map(&map(vec![("jiter", Value::Int(1))])).unwrap_err();
        assert!(matches!(err, Error::InvalidArg { ref value, .. } if value == "\"jiter\""));
    }

    #[test]
    fn option_keys_may_be_strings_or_symbols() {
        let m = Value::Map(vec![(Value::Symbol("persist".into()), Value::Int(0))]);
        assert!(!Options::from_map(&m).unwrap().persist);
    }

    #[test]
    fn option_key_that_is_not_text_is_invarg() {
        let m = Value::Map(vec![(Value::Int(1), Value::Int(0))]);
        assert_eq!(Options::from_map(&m).unwrap_err().code(), "E_INVARG");
    }

    #[test]
    fn option_wrong_value_type_is_invarg() {
        for (k, v) in [
            ("adaptive", Value::from("yes")),
            ("catchup", Value::Int(1)),
            ("catchup", Value::from("sometimes")),
            ("overlap", Value::from("parallel")),
            ("jitter", Value::from("1")),
            ("max_faults", Value::Int(-1)),
            ("max_faults", Value::Float(2.0)),
            ("player", Value::Int(3)),
            ("persist", Value::List(vec![])),
        ] {
            let err = Options::from_map(&map(vec![(k, v.clone())])).unwrap_err();
            assert_eq!(err.code(), "E_INVARG", "{k} -> {v}");
            assert!(err.to_string().contains(k), "{err}");
        }
    }

    #[test]
    fn options_that_are_not_a_map_are_invarg() {
        assert_eq!(
            Options::from_map(&Value::Int(0)).unwrap_err().code(),
            "E_INVARG"
        );
    }

    #[test]
    fn dst_policy_words_are_checked_and_named() {
        // docs/schedules.md §14.9: the calendar's words, the calendar's defaults.
        let o = Options::from_map(&map(vec![
            ("dst_gap", Value::from("skip")),
            ("dst_fold", Value::from("last")),
        ]))
        .unwrap();
        assert_eq!(o.dst().gap, crate::GapPolicy::Skip);
        assert_eq!(o.dst().fold, crate::FoldPolicy::Last);
        for (key, value) in [
            ("dst_gap", Value::from("later")),
            ("dst_fold", Value::from("twice")),
            ("dst_fold", Value::from("First")),
            ("dst_gap", Value::Int(1)),
        ] {
            let err = Options::from_map(&map(vec![(key, value.clone())])).unwrap_err();
            assert_eq!(err.code(), "E_INVARG");
            let text = err.to_string();
            assert!(text.contains(key), "{text}");
            assert!(text.contains("docs/schedules.md §14.9"), "{text}");
            if let Some(word) = value.as_text() {
                assert!(text.contains(word), "{text}");
            }
        }
    }

    #[test]
    fn adaptive_defaults_on_for_at_and_off_for_every() {
        assert!(Options::new().resolve(false).unwrap().adaptive);
        assert!(!Options::new().resolve(true).unwrap().adaptive);
    }

    #[test]
    fn negative_or_nan_jitter_is_invarg() {
        for j in [-0.5, f64::NAN, f64::INFINITY, 1e30] {
            assert_eq!(
                Options::new()
                    .jitter_seconds(j)
                    .resolve(true)
                    .err()
                    .unwrap()
                    .code(),
                "E_INVARG"
            );
        }
    }

    #[test]
    fn state_larger_than_4kb_serialised_is_invarg() {
        let big = Value::Str("x".repeat(MAX_STATE_BYTES));
        let err = Options::new().state(big).resolve(true).err().unwrap();
        assert!(err.to_string().contains("4096"), "{err}");
        let fits = Value::Str("x".repeat(MAX_STATE_BYTES - 20));
        assert!(Options::new().state(fits).resolve(true).is_ok());
    }
}
