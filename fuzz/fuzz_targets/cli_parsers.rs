//! The CLI's duration (`3s`, `1.5m`) and load-spec (`normal=40x150us`) parsers on arbitrary text.
//! They live in the binary crate; this target compiles the same file as a module of its own
//! (`#[path]`), so what is fuzzed is exactly what the `tickstep` command runs.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code, unreachable_pub)]
#[path = "../../crates/tickstep-cli/src/units.rs"]
mod units;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(d) = units::parse_duration(&text) {
        let _ = units::ms(d);
    }
    let _ = units::parse_positive_duration(&text);
    if let Ok(load) = units::parse_load(&text) {
        let _ = format!("{load:?}");
    }
    let _ = units::parse_priority(&text);
});
