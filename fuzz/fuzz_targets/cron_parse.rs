//! Calendar expressions (docs/schedules.md §14): `Calendar::new` on arbitrary text — raw bytes, or
//! fields assembled from the language's own pieces so the fuzzer gets past the first check — in
//! zones with gaps and folds, then the next occurrences from an arbitrary instant.
//!
//! Properties, beyond "never panics":
//! - a refusal is a typed `CalendarError` whose message names its rule of docs/schedules.md §14
//!   and stays short (quotes are cut at 80 bytes, docs/schedules.md §12.3), so a huge input
//!   never makes a huge message;
//! - an accepted calendar's next occurrences are whole seconds, strictly increasing, each after
//!   the instant it was asked from, and asking again from the instant just before one finds it;
//! - the expression the calendar keeps parses again to the same firings.
#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use tickstep_schedules::{Calendar, CalendarError, DstPolicy, FoldPolicy, GapPolicy};

const NANOS: u64 = 1_000_000_000;

const ZONES: [&str; 10] = [
    "UTC",
    "America/New_York",
    "Europe/Paris",
    "Australia/Lord_Howe",
    "Africa/Cairo",
    "America/Santiago",
    "Pacific/Apia",
    "Asia/Kolkata",
    "europe/london",
    "Nowhere/Atlantis",
];

const PIECES: [&str; 24] = [
    "*", "?", "/", "-", ",", "L", "W", "#", "LW", "0", "1", "2", "5", "7", "12", "15", "23", "29",
    "30", "31", "59", "60", "MON", "JAN",
];

const ALIASES: [&str; 4] = ["@daily", "@hourly", "@weekly", "@yearly"];

fn field(u: &mut Unstructured<'_>) -> Result<String> {
    let mut text = String::new();
    for _ in 0..u.int_in_range(1..=4)? {
        text.push_str(u.choose(&PIECES)?);
    }
    Ok(text)
}

fn expression(u: &mut Unstructured<'_>) -> Result<String> {
    match u.int_in_range(0..=3)? {
        0 => {
            let len = u.int_in_range(0..=300)?;
            Ok(String::from_utf8_lossy(u.bytes(len)?).into_owned())
        }
        1 => Ok((*u.choose(&ALIASES)?).to_owned()),
        _ => {
            let count = if u.arbitrary()? { 5 } else { 6 };
            let fields = (0..count).map(|_| field(u)).collect::<Result<Vec<_>>>()?;
            Ok(fields.join(" "))
        }
    }
}

fn check(u: &mut Unstructured<'_>) -> Result<()> {
    let expr = expression(u)?;
    let zone = *u.choose(&ZONES)?;
    let policy = DstPolicy {
        gap: *u.choose(&[GapPolicy::Shift, GapPolicy::Skip])?,
        fold: *u.choose(&[FoldPolicy::First, FoldPolicy::Last, FoldPolicy::Both])?,
    };
    // 1990 to 2100, in nanoseconds, not on a whole second.
    let start = u.int_in_range(631_152_000_000_000_000..=4_102_444_800_000_000_000u64)?;
    let cal = match Calendar::new(&expr, zone, policy) {
        Ok(cal) => cal,
        Err(e) => {
            let message = e.to_string();
            assert!(message.contains("docs/schedules.md §14."), "{message}");
            assert!(message.len() < 400, "{} bytes: {message}", message.len());
            if let CalendarError::TooLong { len } = e {
                assert_eq!(len, expr.len());
            }
            return Ok(());
        }
    };
    let firings: Vec<u64> = cal.upcoming(start, 4).collect();
    let mut previous = start;
    for &t in &firings {
        assert!(t > previous, "{expr:?} in {zone}: {t} after {previous}");
        assert_eq!(t % NANOS, 0);
        assert_eq!(cal.next_after(t - 1), Some(t), "{expr:?} in {zone}");
        previous = t;
    }
    let again =
        Calendar::new(cal.expr(), cal.zone(), cal.policy()).expect("a kept calendar parses");
    assert!(again.upcoming(start, 4).eq(firings.iter().copied()));
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = check(&mut Unstructured::new(data));
});
