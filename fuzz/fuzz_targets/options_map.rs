//! `Options::from_map` on arbitrary `Value` trees (built from the bytes, or decoded from the bytes
//! as JSON), then the options used to create a schedule in an in-memory engine.
//!
//! Properties, beyond "never panics":
//! - `from_map` agrees with an independent model built on the typed builder: it succeeds exactly
//!   when every key is a known option spelled as a string or symbol and every value has the type
//!   the docs give, and then equals the builder applied pair by pair (the last repeat wins);
//! - every refusal is `E_INVARG` and names the offending key (or, for a non-text key or a
//!   non-map, carries that value's text);
//! - creating a schedule with parsed options either succeeds or fails with a typed error; it
//!   never panics, whatever the jitter, state or player.
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use tickstep_fuzz::value;
use tickstep_kernel::clock::ManualClock;
use tickstep_schedules::testkit::{TestRunner, TestWorld};
use tickstep_schedules::{
    Catchup, DstPolicy, Error, FoldPolicy, GapPolicy, OPTION_KEYS, Options, Overlap, Schedules,
    Value,
};

/// How a well-formed map must parse, or the key of the first pair it must refuse.
fn model(options: &Value) -> Result<Options, Option<String>> {
    let Value::Map(pairs) = options else {
        return Err(None);
    };
    let mut out = Options::new();
    for (key, v) in pairs {
        let Some(name) = key.as_text() else {
            return Err(None);
        };
        let bad = || Some(name.to_owned());
        out = match name {
            "adaptive" => out.adaptive(v.as_flag().ok_or_else(bad)?),
            "pass_elapsed" => out.pass_elapsed(v.as_flag().ok_or_else(bad)?),
            "persist" => out.persist(v.as_flag().ok_or_else(bad)?),
            "catchup" => out.catchup(v.as_text().and_then(Catchup::parse).ok_or_else(bad)?),
            "overlap" => out.overlap(v.as_text().and_then(Overlap::parse).ok_or_else(bad)?),
            "jitter" => out.jitter_seconds(match *v {
                Value::Int(i) => i as f64,
                Value::Float(f) => f,
                _ => return Err(bad()),
            }),
            "max_faults" => match *v {
                Value::Int(i) => out.max_faults(u32::try_from(i).map_err(|_| bad())?),
                _ => return Err(bad()),
            },
            // The limits: a time limit of whole, storable nanoseconds; a poll budget of at least 1.
            "seconds" => {
                let secs = match *v {
                    Value::Int(i) => i as f64,
                    Value::Float(f) => f,
                    _ => return Err(bad()),
                };
                let limit = (secs > 0.0)
                    .then(|| std::time::Duration::try_from_secs_f64(secs).ok())
                    .flatten()
                    .filter(|d| d.as_nanos() >= 1 && d.as_nanos() <= u128::from(u64::MAX))
                    .ok_or_else(bad)?;
                out.time_limit(limit)
            }
            "ticks" => match *v {
                Value::Int(i) if i >= 1 => out.tick_limit(i.unsigned_abs()),
                _ => return Err(bad()),
            },
            // The key's rule is checked at creation, not here: any text parses.
            "key" => out.key(v.as_text().ok_or_else(bad)?),
            // The DST words of docs/schedules.md §14.9, exactly as spelled there.
            "dst_gap" => {
                let gap = match v.as_text().ok_or_else(bad)? {
                    "shift" => GapPolicy::Shift,
                    "skip" => GapPolicy::Skip,
                    _ => return Err(bad()),
                };
                let fold = out.dst().fold;
                out.dst_policy(DstPolicy { gap, fold })
            }
            "dst_fold" => {
                let fold = match v.as_text().ok_or_else(bad)? {
                    "first" => FoldPolicy::First,
                    "last" => FoldPolicy::Last,
                    "both" => FoldPolicy::Both,
                    _ => return Err(bad()),
                };
                let gap = out.dst().gap;
                out.dst_policy(DstPolicy { gap, fold })
            }
            "state" => out.state(v.clone()),
            "player" => match *v {
                Value::Obj(o) => out.player(o),
                _ => return Err(bad()),
            },
            _ => {
                assert!(!OPTION_KEYS.contains(&name));
                return Err(bad());
            }
        };
    }
    Ok(out)
}

fn check(options: &Value, u: &mut Unstructured<'_>) {
    let parsed = Options::from_map(options);
    match (model(options), &parsed) {
        // Debug, not `==`: a NaN jitter or state is refused later, not here, and NaN != NaN.
        (Ok(expected), Ok(got)) => assert_eq!(format!("{expected:?}"), format!("{got:?}")),
        (Err(key), Err(err)) => {
            assert_eq!(err.code(), "E_INVARG", "{err}");
            let Error::InvalidArg { value, .. } = err else {
                panic!("not InvalidArg: {err:?}");
            };
            let message = err.to_string();
            match key {
                // Unknown keys are shown as values (quoted and escaped), bad values by their key's
                // plain name.
                // A long key is shown as a bounded excerpt, with its length.
                Some(name) => assert!(
                    message.contains(&name)
                        || message.contains(&format!("{name:?}"))
                        || message.contains(" bytes)"),
                    "{name:?} not named in {message}"
                ),
                None => assert!(!value.is_empty() || message.contains("map"), "{message}"),
            }
        }
        (expected, got) => panic!("model {expected:?} but from_map {got:?} for {options:?}"),
    }
    let Ok(options) = parsed else { return };
    let limits = options.firing_limits();
    let key = options.key_name().map(str::to_owned);

    // Use them: every outcome of creating a schedule is a typed error or a schedule.
    let world = TestWorld::new();
    let wizard = world.add_wizard();
    world.add_verb(wizard, "tick");
    let engine = Schedules::in_memory(
        ManualClock::new(),
        world,
        TestRunner::new(),
        Default::default(),
    );
    let mut txn = engine.begin(wizard);
    let every = u.arbitrary::<bool>().unwrap_or(false);
    let created = if every {
        txn.schedule_every(wizard, "tick", 60.0, vec![], options)
    } else {
        let when = engine.now_unix_seconds() + 60.0;
        txn.schedule_at(wizard, "tick", when, vec![], options)
    };
    match created {
        Ok(id) => {
            let info = txn
                .schedule_info(id)
                .expect("a schedule just created has info");
            assert!(info.jitter.is_finite() && info.jitter >= 0.0, "{info:?}");
            // What the options asked for is what the schedule keeps.
            assert_eq!(
                (
                    info.time_limit,
                    info.tick_limit.map(std::num::NonZeroU64::get)
                ),
                limits,
                "{info:?}"
            );
            assert_eq!(info.key, key, "{info:?}");
            txn.commit().expect("in-memory commit");
        }
        Err(e) => assert!(matches!(e.code(), "E_INVARG" | "E_PERM"), "{e:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut u = Unstructured::new(rest);
    if mode & 1 == 0 {
        // A tree from the bytes; 40 levels is past MAX_VALUE_DEPTH (32), so `state` gets both.
        if let Ok(options) = value(&mut u, 40) {
            check(&options, &mut u);
        }
    } else if let Ok(options) = serde_json::from_slice::<Value>(rest) {
        check(&options, &mut Unstructured::new(&[]));
    }
});
