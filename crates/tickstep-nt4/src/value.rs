//! Topic values and their types (docs/nt4.md §2).

use crate::msgpack::{self, Msg};

/// A topic's value.
///
/// Its type string on NT4 is [`Value::type_str`]; a [`Value::Raw`] carries its own (`raw`, or
/// `proto:<message>` for protobuf).
///
/// ```
/// use tickstep_nt4::Value;
/// assert_eq!(Value::Int(3).type_str(), "int");
/// assert_eq!(Value::StringArray(vec!["a".into()]).type_str(), "string[]");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `boolean`.
    Boolean(bool),
    /// `int` (64-bit).
    Int(i64),
    /// `double`.
    Double(f64),
    /// `float` (32-bit; accepted from clients).
    Float(f32),
    /// `string`.
    String(String),
    /// `raw`, `protobuf` or any other binary type: the bytes and the type string.
    Raw(Vec<u8>, String),
    /// `boolean[]`.
    BooleanArray(Vec<bool>),
    /// `int[]`.
    IntArray(Vec<i64>),
    /// `double[]`.
    DoubleArray(Vec<f64>),
    /// `float[]`.
    FloatArray(Vec<f32>),
    /// `string[]`.
    StringArray(Vec<String>),
}

impl Value {
    /// The NT4 type string.
    ///
    /// ```
    /// use tickstep_nt4::Value;
    /// assert_eq!(Value::Raw(vec![], "proto:wpi.proto.ProtobufScheduler".into()).type_str(), "proto:wpi.proto.ProtobufScheduler");
    /// ```
    pub fn type_str(&self) -> &str {
        match self {
            Value::Boolean(_) => "boolean",
            Value::Int(_) => "int",
            Value::Double(_) => "double",
            Value::Float(_) => "float",
            Value::String(_) => "string",
            Value::Raw(_, t) => t,
            Value::BooleanArray(_) => "boolean[]",
            Value::IntArray(_) => "int[]",
            Value::DoubleArray(_) => "double[]",
            Value::FloatArray(_) => "float[]",
            Value::StringArray(_) => "string[]",
        }
    }

    /// The type string a `.wpilog` entry of this value has (`int` is `int64` there).
    ///
    /// ```
    /// use tickstep_nt4::Value;
    /// assert_eq!(Value::IntArray(vec![]).log_type_str(), "int64[]");
    /// ```
    pub fn log_type_str(&self) -> &str {
        match self {
            Value::Int(_) => "int64",
            Value::IntArray(_) => "int64[]",
            other => other.type_str(),
        }
    }

    /// The value as a boolean, if it is one.
    ///
    /// ```
    /// use tickstep_nt4::Value;
    /// assert_eq!(Value::Boolean(true).as_bool(), Some(true));
    /// assert_eq!(Value::Int(1).as_bool(), None);
    /// ```
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Boolean(b) => Some(*b),
            _ => None,
        }
    }

    /// The NT4 binary data type number of a type string (docs/nt4.md §2.1): unknown strings
    /// are binary (5), as the protocol says.
    pub(crate) fn type_id_of(type_str: &str) -> u8 {
        match type_str {
            "boolean" => 0,
            "double" => 1,
            "int" => 2,
            "float" => 3,
            "string" | "json" => 4,
            "boolean[]" => 16,
            "double[]" => 17,
            "int[]" => 18,
            "float[]" => 19,
            "string[]" => 20,
            _ => 5,
        }
    }

    /// Appends the `MessagePack` encoding of the value.
    pub(crate) fn write_msgpack(&self, out: &mut Vec<u8>) {
        match self {
            Value::Boolean(b) => msgpack::write_bool(out, *b),
            Value::Int(i) => msgpack::write_int(out, *i),
            Value::Double(d) => msgpack::write_f64(out, *d),
            Value::Float(f) => msgpack::write_f32(out, *f),
            Value::String(s) => msgpack::write_str(out, s),
            Value::Raw(b, _) => msgpack::write_bin(out, b),
            Value::BooleanArray(a) => {
                msgpack::write_array_len(out, a.len());
                for v in a {
                    msgpack::write_bool(out, *v);
                }
            }
            Value::IntArray(a) => {
                msgpack::write_array_len(out, a.len());
                for v in a {
                    msgpack::write_int(out, *v);
                }
            }
            Value::DoubleArray(a) => {
                msgpack::write_array_len(out, a.len());
                for v in a {
                    msgpack::write_f64(out, *v);
                }
            }
            Value::FloatArray(a) => {
                msgpack::write_array_len(out, a.len());
                for v in a {
                    msgpack::write_f32(out, *v);
                }
            }
            Value::StringArray(a) => {
                msgpack::write_array_len(out, a.len());
                for v in a {
                    msgpack::write_str(out, v);
                }
            }
        }
    }

    /// Decodes a client's value for a topic of type `type_str`; `None` when the value does not
    /// fit the type (the message is then ignored, docs/nt4.md §3.4).
    pub(crate) fn from_msgpack(type_str: &str, m: Msg) -> Option<Value> {
        fn num(m: &Msg) -> Option<f64> {
            match *m {
                Msg::Int(i) => Some(i as f64),
                Msg::UInt(u) => Some(u as f64),
                Msg::F32(f) => Some(f64::from(f)),
                Msg::F64(f) => Some(f),
                _ => None,
            }
        }
        fn int(m: &Msg) -> Option<i64> {
            match *m {
                Msg::Int(i) => Some(i),
                Msg::UInt(u) => i64::try_from(u).ok(),
                _ => None,
            }
        }
        fn items<T>(m: Msg, f: impl Fn(Msg) -> Option<T>) -> Option<Vec<T>> {
            match m {
                Msg::Array(a) => a.into_iter().map(f).collect(),
                _ => None,
            }
        }
        Some(match (type_str, m) {
            ("boolean", Msg::Bool(b)) => Value::Boolean(b),
            ("int", m) => Value::Int(int(&m)?),
            ("double", m) => Value::Double(num(&m)?),
            ("float", m) => Value::Float(num(&m)? as f32),
            ("string" | "json", Msg::Str(s)) => Value::String(s),
            ("boolean[]", m) => Value::BooleanArray(items(m, |x| match x {
                Msg::Bool(b) => Some(b),
                _ => None,
            })?),
            ("int[]", m) => Value::IntArray(items(m, |x| int(&x))?),
            ("double[]", m) => Value::DoubleArray(items(m, |x| num(&x))?),
            ("float[]", m) => Value::FloatArray(items(m, |x| num(&x).map(|f| f as f32))?),
            ("string[]", m) => Value::StringArray(items(m, |x| match x {
                Msg::Str(s) => Some(s),
                _ => None,
            })?),
            (t, Msg::Bin(b)) if Self::type_id_of(t) == 5 => Value::Raw(b, t.to_owned()),
            _ => return None,
        })
    }

    /// Makes `self` equal to `source`, reusing `self`'s buffers when both are of the same kind:
    /// the frame copies a changed value into the server's retained one without allocating
    /// (docs/nt4.md §8.3).
    pub(crate) fn assign_from(&mut self, source: &Value) {
        match (self, source) {
            (Value::String(a), Value::String(b)) => a.clone_from(b),
            (Value::Raw(a, at), Value::Raw(b, bt)) => {
                a.clone_from(b);
                at.clone_from(bt);
            }
            (Value::StringArray(a), Value::StringArray(b)) => a.clone_from(b),
            (Value::IntArray(a), Value::IntArray(b)) => a.clone_from(b),
            (Value::DoubleArray(a), Value::DoubleArray(b)) => a.clone_from(b),
            (Value::BooleanArray(a), Value::BooleanArray(b)) => a.clone_from(b),
            (Value::FloatArray(a), Value::FloatArray(b)) => a.clone_from(b),
            (this, source) => *this = source.clone(),
        }
    }

    /// The length of [`Value::write_log_payload`]'s output, so a record's header is written
    /// before its payload without a scratch buffer.
    pub(crate) fn log_payload_len(&self) -> usize {
        match self {
            Value::Boolean(_) => 1,
            Value::Int(_) | Value::Double(_) => 8,
            Value::Float(_) => 4,
            Value::String(s) => s.len(),
            Value::Raw(b, _) => b.len(),
            Value::BooleanArray(a) => a.len(),
            Value::IntArray(a) => a.len() * 8,
            Value::DoubleArray(a) => a.len() * 8,
            Value::FloatArray(a) => a.len() * 4,
            Value::StringArray(a) => 4 + a.iter().map(|s| 4 + s.len()).sum::<usize>(),
        }
    }

    /// Appends the `.wpilog` payload of the value (docs/nt4.md §6.3).
    pub(crate) fn write_log_payload(&self, out: &mut Vec<u8>) {
        match self {
            Value::Boolean(b) => out.push(u8::from(*b)),
            Value::Int(i) => out.extend_from_slice(&i.to_le_bytes()),
            Value::Double(d) => out.extend_from_slice(&d.to_le_bytes()),
            Value::Float(f) => out.extend_from_slice(&f.to_le_bytes()),
            Value::String(s) => out.extend_from_slice(s.as_bytes()),
            Value::Raw(b, _) => out.extend_from_slice(b),
            Value::BooleanArray(a) => out.extend(a.iter().map(|b| u8::from(*b))),
            Value::IntArray(a) => a
                .iter()
                .for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
            Value::DoubleArray(a) => a
                .iter()
                .for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
            Value::FloatArray(a) => a
                .iter()
                .for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
            Value::StringArray(a) => {
                out.extend_from_slice(&(a.len() as u32).to_le_bytes());
                for s in a {
                    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
                    out.extend_from_slice(s.as_bytes());
                }
            }
        }
    }
}
