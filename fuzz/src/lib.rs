//! Helpers shared by the fuzz targets: building `Value` trees from fuzzer bytes.
//!
//! `Value` does not implement `arbitrary::Arbitrary` (the library should not depend on a fuzzing
//! crate for this), so the trees are built here from an `Unstructured` byte stream. Depth is
//! bounded by the caller so a tree can go past `MAX_VALUE_DEPTH` — what the library must refuse —
//! without recursing deep enough to exhaust the fuzzer's stack.

use arbitrary::{Result, Unstructured};
use tickstep_schedules::{OPTION_KEYS, ObjId, Value};

/// Strings the parsers give meaning to, so the fuzzer reaches past "unknown key" quickly.
const WORDS: [&str; 14] = [
    "skip",
    "once",
    "all",
    "queue",
    "concurrent",
    "every",
    "at",
    "Once",
    "",
    "persit",
    "kind",
    "value",
    "\u{0}",
    "é",
];

/// A string: mostly a meaningful word or option key, sometimes anything.
pub fn text(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(match u.int_in_range(0..=3u8)? {
        0 => (*u.choose(&OPTION_KEYS)?).to_owned(),
        1 => (*u.choose(&WORDS)?).to_owned(),
        _ => u.arbitrary()?,
    })
}

/// An integer biased towards the edges the parsers check (`u32` range, sign, `i64` ends).
pub fn int(u: &mut Unstructured<'_>) -> Result<i64> {
    Ok(match u.int_in_range(0..=3u8)? {
        0 => *u.choose(&[
            0,
            1,
            -1,
            i64::from(u32::MAX),
            i64::from(u32::MAX) + 1,
            i64::MIN,
            i64::MAX,
        ])?,
        1 => i64::from(u.arbitrary::<i8>()?),
        _ => u.arbitrary()?,
    })
}

/// A float biased towards the values storage refuses (NaN, infinities) and the signed zeros.
pub fn float(u: &mut Unstructured<'_>) -> Result<f64> {
    Ok(match u.int_in_range(0..=3u8)? {
        0 => *u.choose(&[
            0.0,
            -0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            f64::MAX,
            1e300,
        ])?,
        1 => f64::from(u.arbitrary::<i16>()?) / 4.0,
        _ => u.arbitrary()?,
    })
}

/// A `Value` tree nesting at most `depth_left` lists or maps deep.
pub fn value(u: &mut Unstructured<'_>, depth_left: usize) -> Result<Value> {
    let kinds = if depth_left == 0 { 6 } else { 8 };
    Ok(match u.int_in_range(0..=kinds - 1)? {
        0 => Value::Int(int(u)?),
        1 => Value::Float(float(u)?),
        2 => Value::Str(text(u)?),
        3 => Value::Obj(ObjId(int(u)?)),
        4 => Value::Symbol(text(u)?),
        5 => Value::Bool(u.arbitrary()?),
        6 => {
            let mut items = Vec::new();
            u.arbitrary_loop(None, Some(8), |u| {
                items.push(value(u, depth_left - 1)?);
                Ok(std::ops::ControlFlow::Continue(()))
            })?;
            Value::List(items)
        }
        _ => {
            let mut pairs = Vec::new();
            u.arbitrary_loop(None, Some(8), |u| {
                pairs.push((value(u, depth_left - 1)?, value(u, depth_left - 1)?));
                Ok(std::ops::ControlFlow::Continue(()))
            })?;
            Value::Map(pairs)
        }
    })
}

/// A single-path chain `depth` lists deep around an integer: the cheapest way to probe a depth
/// limit exactly.
pub fn nested_list(depth: usize) -> Value {
    (0..depth).fold(Value::Int(0), |inner, _| Value::List(vec![inner]))
}
