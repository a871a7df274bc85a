//! `tickstep serve`'s telnet codec (`crates/tickstep-cli/src/serve/telnet.rs`, docs/serve.md §8),
//! compiled in with `#[path]` (with the colour module it uses) as `cli_units` compiles the units parser: it depends on nothing
//! but `std`, so the fuzzer runs exactly the code the server runs.
//!
//! Properties, beyond "never panics":
//! - no line is longer than the cap or holds a line end;
//! - all the replies any input draws stay under `MAX_REPLY_BYTES` (docs/serve.md §8.3);
//! - input without IAC is plain lines: the codec's lines are the input split at CR, LF, CRLF and
//!   CR NUL, over-long ones replaced by `TooLong`;
//! - cutting the input into reads anywhere changes nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code, unreachable_pub)]
#[path = "../../crates/tickstep-cli/src/serve/telnet.rs"]
mod telnet;
// The server's colour (docs/serve.md §8.10), which the codec's line writer uses; `std` only too.
#[allow(dead_code, unreachable_pub)]
#[path = "../../crates/tickstep-cli/src/serve/colour.rs"]
mod colour;

use telnet::{Event, MAX_REPLY_BYTES, Telnet};

const CAP: usize = 32;

fn run(reads: &[&[u8]]) -> (Vec<Event>, Vec<u8>) {
    let mut codec = Telnet::new(CAP);
    let (mut events, mut out) = (Vec::new(), Vec::new());
    codec.greeting(&mut Vec::new());
    for read in reads {
        codec.receive(read, &mut events, &mut out);
    }
    (events, out)
}

/// The lines of `input` (which holds no IAC), as a raw-line client means them.
fn plain_lines(input: &[u8]) -> Vec<Event> {
    let mut events = Vec::new();
    let (mut line, mut after_cr, mut long) = (Vec::new(), false, false);
    for &b in input {
        let was_cr = std::mem::replace(&mut after_cr, false);
        match b {
            b'\n' | 0 if was_cr => {}
            b'\r' | b'\n' => {
                after_cr = b == b'\r';
                if !std::mem::replace(&mut long, false) {
                    events.push(Event::Line(std::mem::take(&mut line)));
                }
                line.clear();
            }
            _ if long => {}
            _ if line.len() == CAP => {
                long = true;
                line.clear();
                events.push(Event::TooLong);
            }
            _ => line.push(b),
        }
    }
    events
}

fuzz_target!(|data: &[u8]| {
    let Some((&cut, input)) = data.split_first() else {
        return;
    };
    let (events, out) = run(&[input]);
    for event in &events {
        if let Event::Line(line) = event {
            assert!(line.len() <= CAP, "{line:?}");
            assert!(!line.contains(&b'\n') && !line.contains(&b'\r'), "{line:?}");
        }
    }
    assert!(
        out.len() <= MAX_REPLY_BYTES,
        "{} bytes of replies",
        out.len()
    );
    if !input.contains(&255) {
        assert_eq!(events, plain_lines(input));
    }
    let at = usize::from(cut) % (input.len() + 1);
    let (first, second) = input.split_at(at);
    assert_eq!(run(&[first, second]), (events, out), "cut at {at}");
});
