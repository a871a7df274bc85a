//! The `tickstep` command's duration and load-spec parsers (`crates/tickstep-cli/src/units.rs`).
//!
//! The CLI is a binary crate; rather than give it a library target just for this, the file is
//! compiled into this target with `#[path]` — it depends on nothing of the CLI's own, only on
//! `tickstep::kernel::Priority` — so the fuzzer runs exactly the code the command runs.
//!
//! Properties, beyond "never panics":
//! - a parsed duration printed back the way the CLI prints durations (`{:?}`: `1.5s`, `150µs`)
//!   parses to the same duration, to the nanosecond;
//! - printed as whole nanoseconds it parses back to within f64 precision (the parser reads an f64);
//! - `parse_positive_duration` is `parse_duration` minus zero;
//! - a parsed load respects the documented limits (at most `MAX_TASKS_PER_FRAME` tasks, cost at
//!   most `MAX_TASK_COST`), and printed back as `LEVEL=COUNTxCOST` or `name=COUNTxCOST` parses
//!   to the same load;
//! - a priority parses exactly when it is one of the five names (any case) or levels 1–5.
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;

#[allow(dead_code, unreachable_pub)]
#[path = "../../crates/tickstep-cli/src/units.rs"]
mod units;

use units::{
    MAX_TASK_COST, MAX_TASKS_PER_FRAME, parse_duration, parse_load, parse_positive_duration,
    parse_priority,
};

const UNITS: [&str; 9] = ["ns", "us", "µs", "ms", "s", "m", "h", "", "x"];
const PRIORITIES: [&str; 9] = [
    "kernel",
    "HIGH",
    "normal",
    "low",
    "background",
    "3",
    "0",
    "6",
    " 2 ",
];

fn check_duration(text: &str) {
    let parsed = parse_duration(text);
    let positive = parse_positive_duration(text);
    match &parsed {
        Ok(d) if d.is_zero() => assert!(positive.is_err(), "{text:?}"),
        Ok(d) => assert_eq!(positive.as_ref(), Ok(d), "{text:?}"),
        Err(_) => assert!(positive.is_err(), "{text:?}"),
    }
    let Ok(d) = parsed else { return };
    let unit_ok = ["ns", "us", "µs", "ms", "s", "m", "h"]
        .iter()
        .any(|u| text.trim().ends_with(u));
    assert!(unit_ok, "{text:?} parsed without a unit");

    let printed = format!("{d:?}");
    assert_eq!(
        parse_duration(&printed),
        Ok(d),
        "{text:?} -> {d:?} printed {printed:?}"
    );

    let nanos = format!("{}ns", d.as_nanos());
    let back = parse_duration(&nanos).unwrap_or_else(|e| panic!("{nanos:?}: {e}"));
    let tolerance = (d.as_nanos() >> 50).max(1);
    assert!(
        back.as_nanos().abs_diff(d.as_nanos()) <= tolerance,
        "{nanos:?} -> {back:?}"
    );
}

fn check_priority(text: &str) {
    let known = [
        ("kernel", 1),
        ("high", 2),
        ("normal", 3),
        ("low", 4),
        ("background", 5),
    ];
    let key = text.trim().to_ascii_lowercase();
    let expected = known
        .iter()
        .find(|(name, level)| key == *name || key == level.to_string())
        .map(|&(_, level)| level);
    assert_eq!(
        parse_priority(text).ok().map(|p| p.level()),
        expected,
        "{text:?}"
    );
}

fn check_load(text: &str) {
    let Ok(load) = parse_load(text) else { return };
    assert!(load.count <= MAX_TASKS_PER_FRAME, "{text:?} -> {load:?}");
    assert!(load.cost <= MAX_TASK_COST, "{text:?} -> {load:?}");
    let names = ["kernel", "high", "normal", "low", "background"];
    let name = names[usize::from(load.priority.level()) - 1];
    for printed in [
        format!("{}={}x{:?}", load.priority.level(), load.count, load.cost),
        format!("{name}={}x{:?}", load.count, load.cost),
    ] {
        assert_eq!(
            parse_load(&printed),
            Ok(load),
            "{text:?} printed {printed:?}"
        );
    }
}

/// A text shaped like a duration: digits, maybe a fraction, a unit, maybe spaces.
fn duration_text(u: &mut Unstructured<'_>) -> arbitrary::Result<String> {
    let whole: u64 = match u.int_in_range(0..=2u8)? {
        0 => u.int_in_range(0..=1000)?,
        1 => u.arbitrary::<u32>()?.into(),
        _ => u.arbitrary()?,
    };
    let mut s = String::new();
    if u.ratio(1, 8)? {
        s.push(' ');
    }
    if !u.ratio(1, 16)? {
        s.push_str(&whole.to_string());
    }
    if u.ratio(1, 3)? {
        s.push('.');
        let digits: u64 = u.arbitrary()?;
        let len = u.int_in_range(0..=20usize)?;
        s.extend(digits.to_string().chars().cycle().take(len));
    }
    s.push_str(u.choose(&UNITS)?);
    if u.ratio(1, 8)? {
        s.push('\t');
    }
    Ok(s)
}

fn load_text(u: &mut Unstructured<'_>) -> arbitrary::Result<String> {
    let count: u32 = match u.int_in_range(0..=2u8)? {
        0 => u.int_in_range(0..=200_000)?,
        1 => MAX_TASKS_PER_FRAME + u.int_in_range(0..=1)?,
        _ => u.arbitrary()?,
    };
    Ok(format!(
        "{}={}x{}",
        u.choose(&PRIORITIES)?,
        count,
        duration_text(u)?
    ))
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        let text = String::from_utf8_lossy(rest);
        check_duration(&text);
        check_priority(&text);
        check_load(&text);
    } else {
        let mut u = Unstructured::new(rest);
        if let Ok(text) = duration_text(&mut u) {
            check_duration(&text);
        }
        if let Ok(text) = load_text(&mut u) {
            check_load(&text);
        }
    }
});
