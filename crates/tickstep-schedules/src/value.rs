//! The host-neutral value type for arguments, state, return values and fault values.
//!
//! It mirrors MOO's values (integer, float, string, object, symbol, list, map, bool) closely enough
//! that a MOO host converts one to one, while staying plain data any host can build. Values are
//! serialised with serde; the SQLite store keeps them as JSON so an operator can read them with the
//! `sqlite3` shell's JSON functions.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ObjId;

/// A MOO-like value.
///
/// Maps keep their pairs in insertion order (a `Vec`), which is all the engine needs and keeps
/// values cheap to build; lookups are by linear search in [`Value::get`].
///
/// ```
/// use tickstep_schedules::{ObjId, Value};
/// let v = Value::List(vec![Value::Int(1), Value::from("two"), Value::Obj(ObjId(3))]);
/// assert_eq!(v.to_string(), r#"{1, "two", #3}"#);
/// ```
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub enum Value {
    /// A 64-bit integer.
    Int(i64),
    /// A 64-bit float. Non-finite floats are rejected wherever a value is stored.
    Float(f64),
    /// A string.
    Str(String),
    /// An object reference.
    Obj(ObjId),
    /// A symbol (`'name` in mooR).
    Symbol(String),
    /// A list.
    List(Vec<Value>),
    /// A map, as key/value pairs in insertion order.
    Map(Vec<(Value, Value)>),
    /// A boolean.
    Bool(bool),
}

impl Value {
    /// The value as a number of seconds: an `Int` or a finite `Float`; anything else is `None`.
    ///
    /// ```
    /// use tickstep_schedules::Value;
    /// assert_eq!(Value::Int(2).as_seconds(), Some(2.0));
    /// assert_eq!(Value::Float(0.5).as_seconds(), Some(0.5));
    /// assert_eq!(Value::from("30").as_seconds(), None);
    /// ```
    pub fn as_seconds(&self) -> Option<f64> {
        match *self {
            Value::Int(i) => Some(i as f64),
            Value::Float(f) if f.is_finite() => Some(f),
            _ => None,
        }
    }

    /// The truth of a flag option: non-zero numbers and `true` are on, zero and `false` off;
    /// anything else is not a flag (`None`).
    ///
    /// ```
    /// use tickstep_schedules::Value;
    /// assert_eq!(Value::Int(0).as_flag(), Some(false));
    /// assert_eq!(Value::Bool(true).as_flag(), Some(true));
    /// assert_eq!(Value::from("yes").as_flag(), None);
    /// ```
    pub fn as_flag(&self) -> Option<bool> {
        match *self {
            Value::Int(i) => Some(i != 0),
            Value::Float(f) if f.is_finite() => Some(f != 0.0),
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The text of a string or symbol.
    ///
    /// ```
    /// use tickstep_schedules::Value;
    /// assert_eq!(Value::Symbol("skip".into()).as_text(), Some("skip"));
    /// assert_eq!(Value::Int(1).as_text(), None);
    /// ```
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Str(s) | Value::Symbol(s) => Some(s),
            _ => None,
        }
    }

    /// The value stored under string or symbol key `key` in a map.
    ///
    /// ```
    /// use tickstep_schedules::Value;
    /// let m = Value::Map(vec![(Value::from("kind"), Value::from("every"))]);
    /// assert_eq!(m.get("kind"), Some(&Value::from("every")));
    /// assert_eq!(m.get("nope"), None);
    /// ```
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(pairs) => pairs
                .iter()
                .find(|(k, _)| k.as_text() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// Calls `f` on every object reference inside this value (the value itself, list items, map
    /// keys and values), depth first. This is how the engine reports GC roots.
    ///
    /// ```
    /// use tickstep_schedules::{ObjId, Value};
    /// let v = Value::List(vec![Value::Obj(ObjId(1)), Value::Map(vec![(Value::Int(0), Value::Obj(ObjId(2)))])]);
    /// let mut seen = Vec::new();
    /// v.for_each_object(&mut |o| seen.push(o));
    /// assert_eq!(seen, [ObjId(1), ObjId(2)]);
    /// ```
    pub fn for_each_object(&self, f: &mut dyn FnMut(ObjId)) {
        match self {
            Value::Obj(o) => f(*o),
            Value::List(items) => items.iter().for_each(|v| v.for_each_object(f)),
            Value::Map(pairs) => pairs.iter().for_each(|(k, v)| {
                k.for_each_object(f);
                v.for_each_object(f);
            }),
            Value::Int(_) | Value::Float(_) | Value::Str(_) | Value::Symbol(_) | Value::Bool(_) => {
            }
        }
    }

    /// How deeply lists and maps nest: 0 for a scalar, 1 for a list of scalars, and so on.
    ///
    /// ```
    /// use tickstep_schedules::Value;
    /// assert_eq!(Value::Int(1).depth(), 0);
    /// assert_eq!(Value::List(vec![Value::List(vec![])]).depth(), 2);
    /// ```
    pub fn depth(&self) -> usize {
        match self {
            Value::List(items) => 1 + items.iter().map(Value::depth).max().unwrap_or(0),
            Value::Map(pairs) => {
                1 + pairs
                    .iter()
                    .map(|(k, v)| k.depth().max(v.depth()))
                    .max()
                    .unwrap_or(0)
            }
            Value::Int(_)
            | Value::Float(_)
            | Value::Str(_)
            | Value::Obj(_)
            | Value::Symbol(_)
            | Value::Bool(_) => 0,
        }
    }

    /// Whether every float inside this value is finite (JSON, and so the store, cannot hold NaN or
    /// infinities).
    ///
    /// ```
    /// use tickstep_schedules::Value;
    /// assert!(Value::List(vec![Value::Float(1.5)]).is_storable());
    /// assert!(!Value::List(vec![Value::Float(f64::NAN)]).is_storable());
    /// ```
    pub fn is_storable(&self) -> bool {
        match self {
            Value::Float(f) => f.is_finite(),
            Value::List(items) => items.iter().all(Value::is_storable),
            Value::Map(pairs) => pairs
                .iter()
                .all(|(k, v)| k.is_storable() && v.is_storable()),
            Value::Int(_) | Value::Str(_) | Value::Obj(_) | Value::Symbol(_) | Value::Bool(_) => {
                true
            }
        }
    }
}

impl From<&str> for Value {
    /// A string value.
    ///
    /// ```
    /// use tickstep_schedules::Value;
    /// assert_eq!(Value::from("hi"), Value::Str("hi".to_owned()));
    /// ```
    fn from(s: &str) -> Self {
        Value::Str(s.to_owned())
    }
}

impl From<String> for Value {
    /// A string value, taking the `String` as it is.
    ///
    /// ```
    /// use tickstep_schedules::Value;
    /// let e = std::io::Error::other("disk full");
    /// assert_eq!(Value::from(e.to_string()), Value::Str("disk full".to_owned()));
    /// ```
    fn from(s: String) -> Self {
        Value::Str(s)
    }
}

impl From<&String> for Value {
    /// A string value, copied.
    ///
    /// ```
    /// use tickstep_schedules::Value;
    /// let name = String::from("door");
    /// assert_eq!(Value::from(&name), Value::from("door"));
    /// ```
    fn from(s: &String) -> Self {
        Value::Str(s.clone())
    }
}

impl From<std::borrow::Cow<'_, str>> for Value {
    /// A string value.
    ///
    /// ```
    /// use std::borrow::Cow;
    /// use tickstep_schedules::Value;
    /// assert_eq!(Value::from(Cow::Borrowed("hi")), Value::from("hi"));
    /// ```
    fn from(s: std::borrow::Cow<'_, str>) -> Self {
        Value::Str(s.into_owned())
    }
}

impl From<bool> for Value {
    /// A boolean value.
    ///
    /// ```
    /// use tickstep_schedules::Value;
    /// assert_eq!(Value::from(true), Value::Bool(true));
    /// ```
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

/// The integer types that fit an `i64` without loss. `u64`, `usize` and `i128` may not fit, so
/// they have no `From`: convert with `i64::try_from` and decide what an overflow means.
macro_rules! from_small_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            #[doc = concat!("An integer value from an `", stringify!($t), "`, which always fits an `i64`.")]
            ///
            /// ```
            /// use tickstep_schedules::Value;
            #[doc = concat!("assert_eq!(Value::from(7_", stringify!($t), "), Value::Int(7));")]
            /// ```
            fn from(i: $t) -> Self {
                Value::Int(i64::from(i))
            }
        }
    )*};
}
from_small_int!(i8, i16, i32, u8, u16, u32);

impl From<f32> for Value {
    /// A float value (an `f32` widens to `f64` exactly).
    ///
    /// ```
    /// use tickstep_schedules::Value;
    /// assert_eq!(Value::from(0.5_f32), Value::Float(0.5));
    /// ```
    fn from(f: f32) -> Self {
        Value::Float(f64::from(f))
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    /// A list of the converted items.
    ///
    /// ```
    /// use tickstep_schedules::Value;
    /// assert_eq!(Value::from(vec![1_i64, 2]), Value::List(vec![Value::Int(1), Value::Int(2)]));
    /// ```
    fn from(items: Vec<T>) -> Self {
        Value::List(items.into_iter().map(Into::into).collect())
    }
}

impl<T: Into<Value>> FromIterator<T> for Value {
    /// A list of the converted items.
    ///
    /// ```
    /// use tickstep_schedules::Value;
    /// let v: Value = ["a", "b"].into_iter().collect();
    /// assert_eq!(v, Value::List(vec![Value::from("a"), Value::from("b")]));
    /// ```
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        Value::List(items.into_iter().map(Into::into).collect())
    }
}

impl From<i64> for Value {
    /// An integer value.
    ///
    /// ```
    /// use tickstep_schedules::Value;
    /// assert_eq!(Value::from(3_i64), Value::Int(3));
    /// ```
    fn from(i: i64) -> Self {
        Value::Int(i)
    }
}

impl From<f64> for Value {
    /// A float value.
    ///
    /// ```
    /// use tickstep_schedules::Value;
    /// assert_eq!(Value::from(0.5), Value::Float(0.5));
    /// ```
    fn from(f: f64) -> Self {
        Value::Float(f)
    }
}

impl From<ObjId> for Value {
    /// An object value.
    ///
    /// ```
    /// use tickstep_schedules::{ObjId, Value};
    /// assert_eq!(Value::from(ObjId(1)), Value::Obj(ObjId(1)));
    /// ```
    fn from(o: ObjId) -> Self {
        Value::Obj(o)
    }
}

impl fmt::Display for Value {
    /// MOO literal syntax, used in error messages so they name the offending value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Obj(o) => write!(f, "{o}"),
            Value::Symbol(s) => write!(f, "'{s}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::List(items) => {
                f.write_str("{")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("}")
            }
            Value::Map(pairs) => {
                f.write_str("[")?;
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k} -> {v}")?;
                }
                f.write_str("]")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_through_json() {
        let v = Value::Map(vec![
            (
                Value::from("a"),
                Value::List(vec![Value::Int(1), Value::Float(2.5)]),
            ),
            (Value::Symbol("s".into()), Value::Obj(ObjId(-3))),
            (Value::Bool(true), Value::Str(String::new())),
        ]);
        let json = serde_json::to_string(&v).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&json).unwrap(), v);
    }

    #[test]
    fn map_display_uses_moo_syntax() {
        let m = Value::Map(vec![(Value::from("k"), Value::Symbol("v".into()))]);
        assert_eq!(m.to_string(), r#"["k" -> 'v]"#);
    }
}
