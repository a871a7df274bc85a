//! The options map parser (`Options::from_map`), fed maps built from arbitrary bytes: known and
//! unknown keys, every value type, nesting. A map that parses is then used to create a schedule
//! on an in-memory engine (which checks what the parser cannot: jitter range, state size and
//! storability) and fired, so an accepted option can never panic the engine later.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tickstep_kernel::clock::ManualClock;
use tickstep_schedules::testkit::{CountingRunner, OpenWorld};
use tickstep_schedules::{ObjId, Options, Schedules, Value};

const KEYS: [&str; 12] = [
    "adaptive", "pass_elapsed", "persist", "catchup", "overlap", "jitter", "max_faults", "state",
    "player", "seconds", "ticks", "",
];
const WORDS: [&str; 8] = ["skip", "once", "all", "queue", "concurrent", "Once", "yes", "\u{0}"];

/// Reads bytes as a small program that builds a value.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        let Some((&b, rest)) = self.0.split_first() else {
            return 0;
        };
        self.0 = rest;
        b
    }

    fn u64(&mut self) -> u64 {
        (0..8).fold(0, |n, _| (n << 8) | u64::from(self.byte()))
    }

    fn text(&mut self) -> String {
        let len = usize::from(self.byte() % 16);
        let bytes: Vec<u8> = (0..len).map(|_| self.byte()).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    fn value(&mut self, depth: u32) -> Value {
        match self.byte() % 11 {
            0 => Value::Int(self.u64() as i64),
            1 => Value::Float(f64::from_bits(self.u64())),
            2 => Value::Float(f64::from(self.byte()) / 4.0),
            3 => Value::Str(self.text()),
            4 => Value::from(WORDS[usize::from(self.byte()) % WORDS.len()]),
            5 => Value::Symbol(self.text()),
            6 => Value::Obj(ObjId(i64::from(self.byte() as i8))),
            7 => Value::Bool(self.byte() % 2 == 0),
            8 if depth < 40 => {
                let n = self.byte() % 4;
                Value::List((0..n).map(|_| self.value(depth + 1)).collect())
            }
            9 if depth < 40 => {
                let n = self.byte() % 4;
                Value::Map((0..n).map(|_| (self.value(depth + 1), self.value(depth + 1))).collect())
            }
            _ => Value::Int(i64::from(self.byte())),
        }
    }

    fn options(&mut self) -> Value {
        if self.byte() % 8 == 0 {
            return self.value(0); // not even a map, sometimes
        }
        let n = self.byte() % 6;
        Value::Map(
            (0..n)
                .map(|_| {
                    let key = match self.byte() % 4 {
                        0 => self.value(1),
                        1 => Value::Symbol(KEYS[usize::from(self.byte()) % KEYS.len()].into()),
                        _ => Value::from(KEYS[usize::from(self.byte()) % KEYS.len()]),
                    };
                    (key, self.value(1))
                })
                .collect(),
        )
    }
}

fuzz_target!(|data: &[u8]| {
    let mut bytes = Bytes(data);
    let map = bytes.options();
    let every = bytes.byte() % 2 == 0;
    let Ok(options) = Options::from_map(&map) else {
        return;
    };
    let clock = ManualClock::new();
    let runner = CountingRunner::default();
    let engine = Schedules::in_memory(clock.clone(), OpenWorld, runner.clone(), Default::default());
    let mut txn = engine.begin(ObjId(1));
    let created = if every {
        txn.schedule_every(ObjId(2), "tick", 1.0, vec![], options)
    } else {
        let at = engine.now_unix_seconds() + 1.0;
        txn.schedule_at(ObjId(2), "tick", at, vec![], options)
    };
    if created.is_err() {
        return;
    }
    txn.commit().expect("an in-memory commit cannot fail");
    for _ in 0..3 {
        clock.advance(std::time::Duration::from_secs(1));
        engine.tick().expect("an in-memory tick cannot fail");
    }
});
