//! `Value` decoding from JSON: any bytes either fail to decode or give a value that encodes back to
//! the same value (when storable), prints, and answers its accessors without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tickstep_schedules::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let _ = value.to_string();
    let _ = value.depth();
    let _ = value.as_seconds();
    let _ = value.as_flag();
    let _ = value.as_text();
    let _ = value.get("catchup");
    value.for_each_object(&mut |_| {});
    if value.is_storable() {
        let text = serde_json::to_string(&value).expect("a storable value encodes");
        let back: Value = serde_json::from_str(&text).expect("what we encoded decodes");
        assert_eq!(back, value, "JSON round trip changed the value");
    }
});
