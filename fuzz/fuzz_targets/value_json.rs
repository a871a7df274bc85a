//! `Value` decoding from JSON — the form the store keeps `args`, `state` and fault values in.
//!
//! Properties, beyond "never panics":
//! - decode → encode → decode gives an equal value, and encoding again gives the same bytes
//!   (the store may rewrite what it read without drifting);
//! - every value the store accepts (`is_storable`, at most `MAX_VALUE_DEPTH` deep) encodes and
//!   decodes back equal — "every stored value reads back";
//! - nesting: what the decoder itself enforces is serde_json's recursion limit (128 JSON levels,
//!   two per list level), so a decoded value is at most 64 deep; `MAX_VALUE_DEPTH` (32) is
//!   enforced where values are stored, not here, and a chain of exactly 32 lists or maps decodes.
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use tickstep_fuzz::{nested_list, value};
use tickstep_schedules::{MAX_VALUE_DEPTH, Value};

/// The deepest value serde_json's recursion limit lets through.
const DECODER_DEPTH_BOUND: usize = 64;

fn round_trip(v: &Value) {
    let text = serde_json::to_vec(v).expect("a finite value encodes");
    let back: Value = serde_json::from_slice(&text).unwrap_or_else(|e| {
        panic!(
            "{v:?} encoded as {} does not decode: {e}",
            String::from_utf8_lossy(&text)
        )
    });
    assert_eq!(&back, v, "encoded as {}", String::from_utf8_lossy(&text));
    let again = serde_json::to_vec(&back).expect("re-encode");
    assert_eq!(again, text, "encoding is not stable");
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 3 {
        0 => {
            let Ok(v) = serde_json::from_slice::<Value>(rest) else {
                return;
            };
            assert!(v.is_storable(), "JSON cannot spell NaN or infinity: {v:?}");
            assert!(v.depth() <= DECODER_DEPTH_BOUND, "depth {}", v.depth());
            let _ = v.to_string(); // the error messages' preview must render anything decoded
            round_trip(&v);
        }
        1 => {
            let mut u = Unstructured::new(rest);
            let Ok(v) = value(&mut u, MAX_VALUE_DEPTH + 4) else {
                return;
            };
            if v.is_storable() && v.depth() <= MAX_VALUE_DEPTH {
                round_trip(&v);
            }
        }
        _ => {
            // Single-path chains around the limit: lists, maps (a key or a value) or a mix.
            let depth = usize::from(rest.first().copied().unwrap_or(0)) % (DECODER_DEPTH_BOUND + 8);
            let shape = rest.get(1..).unwrap_or_default();
            let v = (0..depth).fold(nested_list(0), |inner, level| {
                match shape.get(level).copied().unwrap_or(0) % 3 {
                    0 => Value::List(vec![inner]),
                    1 => Value::Map(vec![(inner, Value::Int(0))]),
                    _ => Value::Map(vec![(Value::from("k"), inner)]),
                }
            });
            assert_eq!(v.depth(), depth);
            if depth <= MAX_VALUE_DEPTH {
                round_trip(&v);
            } else {
                // Past the store's limit the decoder may refuse, but must not crash.
                let text = serde_json::to_vec(&v).expect("encode");
                if let Ok(back) = serde_json::from_slice::<Value>(&text) {
                    assert_eq!(back, v);
                }
            }
        }
    }
});
