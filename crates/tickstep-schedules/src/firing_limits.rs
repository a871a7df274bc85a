//! The `seconds` and `ticks` options: the limits a runner applies to each firing of a schedule
//! (docs/schedules.md §5.10).
//!
//! The engine does not enforce them — a firing is the runner's task — but it keeps them: they are
//! part of the schedule, checked at creation (a typed error naming the bad value, nothing
//! created), stored with it (so they survive a restart, docs/schedules.md §11.32), shown by
//! `schedule_info` and handed to the runner with every firing ([`Firing::time_limit`],
//! [`Firing::tick_limit`]). A runner that enforces limits, like the `tickstep` runtime's, reads
//! them there.
//!
//! [`Firing::time_limit`]: crate::Firing::time_limit
//! [`Firing::tick_limit`]: crate::Firing::tick_limit

use std::time::Duration;

use crate::limits::preview;
use crate::{Error, Value};

/// The `seconds` option's value: a positive, finite number of seconds that is at least one
/// nanosecond and fits 64-bit nanoseconds (what the store keeps).
pub(crate) fn parse_seconds(value: &Value) -> Result<Duration, Error> {
    let rule = "schedule option \"seconds\" must be a number of seconds > 0";
    let seconds = match *value {
        Value::Int(i) => i as f64,
        Value::Float(f) => f,
        _ => return Err(Error::invalid(preview(value), rule)),
    };
    if seconds.is_nan() || seconds <= 0.0 {
        return Err(Error::invalid(preview(value), rule));
    }
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|d| time_limit_ns(*d).is_some())
        .ok_or_else(|| Error::invalid(preview(value), TIME_LIMIT_RANGE))
}

/// The rule a time limit that is not a whole, storable number of nanoseconds breaks.
const TIME_LIMIT_RANGE: &str = "schedule option \"seconds\" must be a finite number of seconds \
     from 1 nanosecond to 18446744073 seconds (64-bit nanoseconds)";

/// A time limit as the store keeps it: nanoseconds, at least 1.
fn time_limit_ns(limit: Duration) -> Option<u64> {
    u64::try_from(limit.as_nanos()).ok().filter(|&n| n > 0)
}

/// Checks the limits the typed builder could not (`time_limit(Duration::ZERO)`, `tick_limit(0)`,
/// a time limit past 64-bit nanoseconds) and returns them as stored: nanoseconds and polls.
pub(crate) fn resolve(
    time_limit: Option<Duration>,
    tick_limit: Option<u64>,
) -> Result<(Option<u64>, Option<u64>), Error> {
    let time_limit_ns = match time_limit {
        None => None,
        Some(limit) => Some(
            time_limit_ns(limit)
                .ok_or_else(|| Error::invalid(format!("{limit:?}"), TIME_LIMIT_RANGE))?,
        ),
    };
    if tick_limit == Some(0) {
        return Err(Error::invalid(
            0,
            "schedule option \"ticks\" must be a whole number of polls >= 1",
        ));
    }
    Ok((time_limit_ns, tick_limit))
}

/// The `ticks` option's value: a whole number of polls, at least 1.
pub(crate) fn parse_ticks(value: &Value) -> Result<u64, Error> {
    match *value {
        Value::Int(i) if i >= 1 => Ok(i.unsigned_abs()),
        _ => Err(Error::invalid(
            preview(value),
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
            ("seconds", Value::Float(1e15), "64-bit nanoseconds"),
            ("seconds", Value::Float(1e-12), "1 nanosecond"),
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

    #[test]
    fn builder_limits_out_of_range_are_refused_at_creation_naming_the_value() {
        let zero = Options::new().time_limit(Duration::ZERO).resolve(true);
        let text = zero.err().unwrap().to_string();
        assert!(
            text.contains("0ns") && text.contains("1 nanosecond"),
            "{text}"
        );
        let huge = Duration::from_secs(u64::MAX);
        let text = Options::new()
            .time_limit(huge)
            .resolve(true)
            .err()
            .unwrap()
            .to_string();
        assert!(
            text.contains(&format!("{huge:?}")) && text.contains("64-bit"),
            "{text}"
        );
        let text = Options::new()
            .tick_limit(0)
            .resolve(true)
            .err()
            .unwrap()
            .to_string();
        assert!(
            text.starts_with("E_INVARG: 0:") && text.contains("ticks"),
            "{text}"
        );
        let ok = Options::new()
            .time_limit(Duration::from_millis(1500))
            .tick_limit(4)
            .resolve(true)
            .unwrap();
        assert_eq!(
            (ok.time_limit_ns, ok.tick_limit),
            (Some(1_500_000_000), Some(4))
        );
    }
}
