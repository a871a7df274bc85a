//! The `seconds` and `ticks` options: the limits a runner applies to each firing of a schedule
//! (docs/schedules.md §5.10).
//!
//! The engine does not enforce them — a firing is the runner's task — and does not store them
//! (the store's schema does not carry them yet): a runner that enforces limits, like the
//! `tickstep` runtime's, is handed them by the host when the schedule is created. What this
//! layer does is parse and check them, so a script's options map is refused at the call site
//! with a typed error naming the bad value.

use std::time::Duration;

use crate::{Error, Value};

/// The `seconds` option's value: a positive, finite number of seconds that fits a `Duration`.
pub(crate) fn parse_seconds(value: &Value) -> Result<Duration, Error> {
    let rule = "schedule option \"seconds\" must be a number of seconds > 0";
    let seconds = match *value {
        Value::Int(i) => i as f64,
        Value::Float(f) => f,
        _ => return Err(Error::invalid(value, rule)),
    };
    if seconds.is_nan() || seconds <= 0.0 {
        return Err(Error::invalid(value, rule));
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| {
        Error::invalid(
            value,
            "schedule option \"seconds\" must be a finite number of seconds",
        )
    })
}

/// The `ticks` option's value: a whole number of polls, at least 1.
pub(crate) fn parse_ticks(value: &Value) -> Result<u64, Error> {
    match *value {
        Value::Int(i) if i >= 1 => Ok(i.unsigned_abs()),
        _ => Err(Error::invalid(
            value,
            "schedule option \"ticks\" must be a whole number of polls >= 1",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Options;

    fn one(key: &str, value: Value) -> Result<Options, Error> {
        Options::from_map(&Value::Map(vec![(Value::from(key), value)]))
    }

    #[test]
    fn good_limits_parse() {
        assert_eq!(
            one("seconds", Value::Int(3)).unwrap().firing_limits(),
            (Some(Duration::from_secs(3)), None)
        );
        assert_eq!(
            one("ticks", Value::Int(1)).unwrap().firing_limits(),
            (None, Some(1))
        );
    }

    #[test]
    fn hostile_limits_are_typed_errors_naming_the_value_and_the_rule() {
        for (key, value, rule) in [
            ("seconds", Value::Int(0), "> 0"),
            ("seconds", Value::Int(-5), "> 0"),
            ("seconds", Value::Float(f64::NAN), "> 0"),
            ("seconds", Value::Float(f64::INFINITY), "finite"),
            ("seconds", Value::Float(1e300), "finite"),
            ("seconds", Value::from("5"), "> 0"),
            ("ticks", Value::Int(0), ">= 1"),
            ("ticks", Value::Int(-1), ">= 1"),
            ("ticks", Value::Float(2.0), ">= 1"),
            ("ticks", Value::from("many"), ">= 1"),
        ] {
            let err = one(key, value.clone()).unwrap_err();
            assert_eq!(err.code(), "E_INVARG", "{key} {value}");
            let text = err.to_string();
            assert!(text.contains(key) && text.contains(rule), "{text}");
        }
    }
}
