//! The schedule policies of docs/schedules.md §16, modelled on Temporal's schedule policies:
//! `catchup_window` (docs/schedules.md §16.1, §16.2), `remaining_runs`
//! (docs/schedules.md §16.5) and `on_max_faults` (docs/schedules.md §16.6).
//!
//! They are part of a schedule's definition, checked at creation (a typed error naming the value
//! and the rule, nothing created), kept in the entry's rare part (an ordinary schedule pays
//! nothing for them), stored with the row as one JSON column, `policies` (NULL when every policy
//! has its default: `SQLite` schema version 11, `PostgreSQL` 13, docs/schedules.md §16.3), and shown by
//! `schedule_info`, the store's reader and the hosts' views.

use std::time::Duration;

use crate::limits::preview;
use crate::{Error, Value};

/// A schedule's policies as the engine keeps and the store writes them (the `policies` column).
/// The default is every policy off, which a store writes as NULL.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Policies {
    /// `catchup_window` in nanoseconds (at least 1): points older than this when the engine
    /// sees them are missed, not fired (docs/schedules.md §16.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) catchup_window_ns: Option<u64>,
    /// `remaining_runs` as given at creation (at least 1): the firings the schedule makes in
    /// all before it retires `remaining_runs` (docs/schedules.md §16.5). What is left is this
    /// less `run_count`, so nothing of it changes as the schedule fires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) run_limit: Option<u64>,
    /// What reaching `max_faults` does (docs/schedules.md §16.6).
    #[serde(default, skip_serializing_if = "OnMaxFaults::is_retire")]
    pub(crate) on_max_faults: OnMaxFaults,
}

/// What a recurring schedule does when it reaches `max_faults` consecutive faults
/// (docs/schedules.md §16.6): retire (the default, docs/schedules.md §7.4) or pause with a note
/// naming the fault, for an operator to resume.
///
/// ```
/// use tickstep_schedules::OnMaxFaults;
/// assert_eq!(OnMaxFaults::default(), OnMaxFaults::Retire);
/// assert_eq!(OnMaxFaults::parse("pause"), Some(OnMaxFaults::Pause));
/// assert_eq!(OnMaxFaults::Pause.as_str(), "pause");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnMaxFaults {
    /// Retire with `max_faults`.
    #[default]
    Retire,
    /// Pause, with a note naming the fault; the counters are kept.
    Pause,
}

impl OnMaxFaults {
    /// The option's spelling.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::OnMaxFaults::Retire.as_str(), "retire");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            OnMaxFaults::Retire => "retire",
            OnMaxFaults::Pause => "pause",
        }
    }

    /// Parses the option's spelling.
    ///
    /// ```
    /// assert_eq!(tickstep_schedules::OnMaxFaults::parse("Pause"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "retire" => Some(OnMaxFaults::Retire),
            "pause" => Some(OnMaxFaults::Pause),
            _ => None,
        }
    }

    #[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
    fn is_retire(&self) -> bool {
        *self == OnMaxFaults::Retire
    }
}

/// The `on_max_faults` option's value from an options map: `"retire"` or `"pause"`, a string or
/// a symbol.
pub(crate) fn parse_on_max_faults(value: &Value) -> Result<OnMaxFaults, Error> {
    value.as_text().and_then(OnMaxFaults::parse).ok_or_else(|| {
        Error::invalid(
            preview(value),
            "schedule option \"on_max_faults\" must be \"retire\" or \"pause\" \
             (docs/schedules.md §16.6)",
        )
    })
}

impl Policies {
    /// Whether every policy has its default (the row stores NULL).
    pub(crate) fn is_default(&self) -> bool {
        *self == Policies::default()
    }

    /// The `catchup_window` as a duration.
    pub(crate) fn catchup_window(&self) -> Option<Duration> {
        self.catchup_window_ns.map(Duration::from_nanos)
    }
}

/// The rule a `catchup_window` breaks (docs/schedules.md §16.1).
const WINDOW_RULE: &str = "schedule option \"catchup_window\" must be a finite number of seconds \
     from 1 nanosecond to 18446744073 seconds (docs/schedules.md §16.1)";

/// The `catchup_window` option's value from an options map: a positive number of seconds.
pub(crate) fn parse_catchup_window(value: &Value) -> Result<Duration, Error> {
    let seconds = match *value {
        Value::Int(i) => i as f64,
        Value::Float(f) => f,
        _ => return Err(Error::invalid(preview(value), WINDOW_RULE)),
    };
    if !seconds.is_finite() || seconds <= 0.0 {
        return Err(Error::invalid(preview(value), WINDOW_RULE));
    }
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|d| window_ns(*d).is_some())
        .ok_or_else(|| Error::invalid(preview(value), WINDOW_RULE))
}

/// A window as the store keeps it: nanoseconds, at least 1.
fn window_ns(window: Duration) -> Option<u64> {
    u64::try_from(window.as_nanos()).ok().filter(|&n| n > 0)
}

/// The rule a `remaining_runs` breaks (docs/schedules.md §16.5).
const RUNS_RULE: &str = "schedule option \"remaining_runs\" must be a whole number of firings \
     >= 1 (docs/schedules.md §16.5)";

/// The `remaining_runs` option's value from an options map: a whole number, at least 1.
pub(crate) fn parse_remaining_runs(value: &Value) -> Result<u64, Error> {
    match *value {
        Value::Int(i) if i >= 1 => Ok(i.unsigned_abs()),
        _ => Err(Error::invalid(preview(value), RUNS_RULE)),
    }
}

/// Checks what the typed builder could not (a zero window, one past 64-bit nanoseconds, no
/// runs at all) and returns the policies as kept.
pub(crate) fn resolve(
    catchup_window: Option<Duration>,
    remaining_runs: Option<u64>,
    on_max_faults: OnMaxFaults,
) -> Result<Policies, Error> {
    let catchup_window_ns = match catchup_window {
        None => None,
        Some(window) => Some(
            window_ns(window).ok_or_else(|| Error::invalid(format!("{window:?}"), WINDOW_RULE))?,
        ),
    };
    if remaining_runs == Some(0) {
        return Err(Error::invalid(0, RUNS_RULE));
    }
    Ok(Policies {
        catchup_window_ns,
        run_limit: remaining_runs,
        on_max_faults,
    })
}

/// The `policies` column of a stored row: `None` (NULL) for the defaults.
pub(crate) fn to_column(p: &Policies) -> Option<String> {
    (!p.is_default()).then(|| serde_json::to_string(p).expect("policies serialise"))
}

/// A stored `policies` column read back; `None` when it is not what [`to_column`] writes.
pub(crate) fn from_column(text: &str) -> Option<Policies> {
    let p: Policies = serde_json::from_str(text).ok()?;
    (p.catchup_window_ns != Some(0) && p.run_limit != Some(0)).then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Options;

    fn one(key: &str, value: Value) -> Result<Options, Error> {
        Options::from_map(&Value::Map(vec![(Value::from(key), value)]))
    }

    #[test]
    fn a_window_in_seconds_parses() {
        assert_eq!(
            one("catchup_window", Value::Int(30))
                .unwrap()
                .catchup_window,
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            one("catchup_window", Value::Float(0.5))
                .unwrap()
                .catchup_window,
            Some(Duration::from_millis(500))
        );
    }

    #[test]
    fn bad_windows_are_typed_errors_naming_the_value_and_the_rule() {
        for value in [
            Value::Int(0),
            Value::Int(-5),
            Value::Float(f64::NAN),
            Value::Float(f64::INFINITY),
            Value::Float(1e15),
            Value::Float(1e-12),
            Value::from("30"),
        ] {
            let err = one("catchup_window", value.clone()).unwrap_err();
            assert_eq!(err.code(), "E_INVARG");
            let text = err.to_string();
            assert!(text.contains("catchup_window"), "{text}");
            assert!(text.contains("docs/schedules.md §16.1"), "{text}");
            assert!(text.contains(&preview(&value)), "{text}");
        }
        let err = Options::new()
            .catchup_window(Duration::ZERO)
            .resolve(true)
            .err()
            .unwrap();
        assert!(err.to_string().contains("docs/schedules.md §16.1"), "{err}");
    }

    #[test]
    fn remaining_runs_are_a_whole_number_of_at_least_one() {
        assert_eq!(
            one("remaining_runs", Value::Int(3)).unwrap().remaining_runs,
            Some(3)
        );
        for value in [
            Value::Int(0),
            Value::Int(-1),
            Value::Float(2.0),
            Value::from("3"),
        ] {
            let err = one("remaining_runs", value.clone()).unwrap_err();
            assert_eq!(err.code(), "E_INVARG");
            let text = err.to_string();
            assert!(text.contains("docs/schedules.md §16.5"), "{text}");
            assert!(text.contains(&preview(&value)), "{text}");
        }
        let err = Options::new()
            .remaining_runs(0)
            .resolve(true)
            .err()
            .unwrap();
        assert!(err.to_string().contains("docs/schedules.md §16.5"), "{err}");
    }

    #[test]
    fn on_max_faults_takes_its_two_words() {
        assert_eq!(
            one("on_max_faults", Value::Symbol("pause".into()))
                .unwrap()
                .on_max_faults,
            OnMaxFaults::Pause
        );
        for value in [Value::from("Pause"), Value::from("stop"), Value::Int(1)] {
            let err = one("on_max_faults", value.clone()).unwrap_err();
            assert_eq!(err.code(), "E_INVARG");
            let text = err.to_string();
            assert!(text.contains("docs/schedules.md §16.6"), "{text}");
            assert!(text.contains(&preview(&value)), "{text}");
        }
    }

    #[test]
    fn the_column_is_null_for_the_defaults_and_round_trips() {
        assert_eq!(to_column(&Policies::default()), None);
        let p = Policies {
            catchup_window_ns: Some(5_000_000_000),
            run_limit: Some(3),
            on_max_faults: OnMaxFaults::Pause,
        };
        let text = to_column(&p).unwrap();
        assert_eq!(from_column(&text), Some(p));
        assert_eq!(from_column("{\"catchup_window_ns\":0}"), None);
        assert_eq!(from_column("{\"run_limit\":0}"), None);
        assert_eq!(from_column("{\"surprise\":1}"), None);
    }
}
