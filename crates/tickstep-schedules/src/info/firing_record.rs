//! One settled firing in a schedule's history, as `schedule_history` and the inspector report it
//! (docs/schedules.md §9.11, §9.16).

use crate::{Fault, Value};

/// How many settled firings the store keeps for each persistent schedule (docs/schedules.md
/// §9.11).
///
/// ```
/// assert_eq!(tickstep_schedules::HISTORY_KEPT, 20);
/// ```
pub const HISTORY_KEPT: u64 = 20;

/// One settled firing in a schedule's history (docs/schedules.md §9.11).
///
/// ```
/// let r = tickstep_schedules::FiringRecord { started: 1.0, ended: 1.5, nominal: 1.0, fault: None };
/// assert_eq!(r.outcome(), "returned");
/// ```
#[derive(Clone, PartialEq, Debug)]
pub struct FiringRecord {
    /// When it started, float Unix seconds.
    pub started: f64,
    /// When its outcome was reported, float Unix seconds.
    pub ended: f64,
    /// The cadence point it served, float Unix seconds.
    pub nominal: f64,
    /// Its fault (kind and value), or `None` when it returned.
    pub fault: Option<Fault>,
}

impl FiringRecord {
    /// How late it started: its start minus the point it served, seconds, never below 0.0 — a
    /// firing jitter started before its point was not late, as the lateness histogram counts it
    /// (docs/schedules.md §9.16, docs/observability.md §1.5).
    ///
    /// ```
    /// use tickstep_schedules::FiringRecord;
    /// let r = FiringRecord { started: 12.5, ended: 13.0, nominal: 10.0, fault: None };
    /// assert_eq!(r.lateness(), 2.5);
    /// let early = FiringRecord { started: 9.0, ended: 9.5, nominal: 10.0, fault: None };
    /// assert_eq!(early.lateness(), 0.0);
    /// ```
    pub fn lateness(&self) -> f64 {
        (self.started - self.nominal).max(0.0)
    }

    /// `"returned"` or `"fault"`.
    ///
    /// ```
    /// use tickstep_schedules::{Fault, FaultKind, FiringRecord, Value};
    /// let fault = Fault { kind: FaultKind::Killed, value: Value::from("killed") };
    /// let r = FiringRecord { started: 1.0, ended: 2.0, nominal: 1.0, fault: Some(fault) };
    /// assert_eq!(r.outcome(), "fault");
    /// ```
    pub fn outcome(&self) -> &'static str {
        if self.fault.is_some() {
            "fault"
        } else {
            "returned"
        }
    }

    /// The record as a map: `started`, `ended`, `nominal`, `outcome`, `fault` (its map, or 0),
    /// `lateness` (seconds, [`FiringRecord::lateness`]).
    ///
    /// ```
    /// let r = tickstep_schedules::FiringRecord { started: 1.0, ended: 1.5, nominal: 1.0, fault: None };
    /// assert_eq!(r.to_value().get("outcome"), Some(&tickstep_schedules::Value::from("returned")));
    /// ```
    pub fn to_value(&self) -> Value {
        let pairs = [
            ("started", Value::Float(self.started)),
            ("ended", Value::Float(self.ended)),
            ("nominal", Value::Float(self.nominal)),
            ("outcome", Value::from(self.outcome())),
            (
                "fault",
                self.fault.as_ref().map_or(Value::Int(0), Fault::to_value),
            ),
            ("lateness", Value::Float(self.lateness())),
        ];
        Value::Map(
            pairs
                .into_iter()
                .map(|(k, v)| (Value::from(k), v))
                .collect(),
        )
    }
}

impl crate::Lateness {
    /// The percentiles of `records`' lateness.
    ///
    /// ```
    /// let r = tickstep_schedules::FiringRecord { started: 3.0, ended: 3.5, nominal: 1.0, fault: None };
    /// assert_eq!(tickstep_schedules::Lateness::of(&[r]).p99, 2.0);
    /// ```
    pub fn of(records: &[FiringRecord]) -> crate::Lateness {
        Self::of_seconds(records.iter().map(FiringRecord::lateness).collect())
    }
}
