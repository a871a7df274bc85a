//! What a case of the login property is made of: the client's acts, the texts they type, and
//! the strategies that draw them.

use super::*;

/// What ends a line the client types.
#[derive(Clone, Copy, Debug)]
pub(super) enum End {
    /// None: a frame's end ends it (a WebSocket); a stream gets LF.
    Frame,
    Lf,
    CrLf,
    Cr,
    CrNul,
}

impl End {
    pub(super) fn bytes(self, transport: Transport) -> &'static [u8] {
        match self {
            End::Frame if transport.is_ws() => b"",
            End::Frame | End::Lf => b"\n",
            End::CrLf => b"\r\n",
            End::Cr => b"\r",
            End::CrNul => b"\r\0",
        }
    }
}

/// One act of the client, read by the stage its connection is at.
#[derive(Clone, Debug)]
pub(super) enum Act {
    /// A name of the case's pool; the right (or a chosen, good) password; `who` once in.
    Good(u8),
    /// A line that is not a name; a wrong (or, choosing, a weak) password.
    Bad,
    /// Bytes that are not UTF-8 (a TEXT frame cannot carry them: then `Bad`).
    NotUtf8,
    Empty,
    Help,
    Quit,
    /// Hangs up, with part of a line typed first when `partial`.
    HangUp {
        partial: bool,
    },
    /// Types `Good` (or `Bad`), then hangs up without reading.
    TypeAndHangUp {
        good: bool,
    },
    TooLong,
    /// On a closed connection: connects with a short login timeout, types a name and part of a
    /// password, and waits.
    Stall,
}

/// The texts an act may type, drawn for every step.
#[derive(Clone, Debug)]
pub(super) struct Texts {
    pub(super) good: String,
    pub(super) wrong: String,
    pub(super) weak: String,
    pub(super) bad_name: (String, bool),
    pub(super) not_utf8: Vec<u8>,
    pub(super) partial: String,
}

#[derive(Clone, Debug)]
pub(super) struct Step {
    pub(super) conn: usize,
    pub(super) act: Act,
    pub(super) texts: Texts,
    pub(super) end: End,
    /// Where a stream's write is cut (each taken modulo the length).
    pub(super) cuts: (u8, u8),
    /// A WebSocket frame after one that ended in a bare CR starts with that CR's LF.
    pub(super) lf_first: bool,
    /// Typed in one write (one frame) with the next step's line.
    pub(super) batch: bool,
}

/// A password: the mark `Zq` among name characters (so some are names too: the old bug read
/// one as a name), or among any printable text.
pub(super) fn password() -> impl Strategy<Value = String> {
    prop_oneof![
        ("[a-z0-9_-]{0,6}", "[a-z0-9_-]{4,10}").prop_map(|(a, b)| format!("{a}Zq{b}")),
        ("[ -~]{0,6}", "[ -~é中😀]{4,10}").prop_map(|(a, b)| format!("{a}Zq{b}")),
    ]
}

pub(super) fn texts() -> impl Strategy<Value = Texts> {
    let weak = prop_oneof![
        "Zq[a-z0-9é]{0,3}",
        "Zq[a-z]{4,8}[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f]",
        "Zq[a-z]{2,4}\\x1b\\[2J[a-z]{0,3}",
    ];
    let bad_name = prop_oneof![
        ("[a-y0-9]{1,8} [a-y0-9!?.]{1,8}").prop_map(|s| (s, false)),
        "[a-y0-9_-]{25,30}".prop_map(|s| (s, false)),
        "[a-y]{1,4}[!?.@][a-y]{0,4}".prop_map(|s| (s, false)),
        prop::sample::select(vec!["who", "say", "schedules", "stop", "ring", "Remind"])
            .prop_map(|s| (s.to_owned(), true)),
    ];
    let not_utf8 = (
        "[a-z ]{0,4}",
        prop::collection::vec(0x80u8..=0xfe, 0..3),
        "[a-z]{0,4}",
    )
        .prop_map(|(a, mut bad, b)| {
            bad.push(0xfe); // never UTF-8
            [a.as_bytes(), b"Zq", &bad, b.as_bytes()].concat()
        });
    (
        password(),
        password(),
        weak,
        bad_name,
        not_utf8,
        "Zq[a-z]{0,5}",
    )
        .prop_map(|(good, wrong, weak, bad_name, not_utf8, partial)| Texts {
            good,
            wrong,
            weak,
            bad_name,
            not_utf8,
            partial,
        })
}

pub(super) fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        40 => any::<u8>().prop_map(Act::Good),
        12 => Just(Act::Bad),
        4 => Just(Act::NotUtf8),
        4 => Just(Act::Empty),
        2 => Just(Act::Help),
        3 => Just(Act::Quit),
        4 => any::<bool>().prop_map(|partial| Act::HangUp { partial }),
        4 => any::<bool>().prop_map(|good| Act::TypeAndHangUp { good }),
        1 => Just(Act::TooLong),
        2 => Just(Act::Stall),
    ]
}

/// Some wrong passwords come in runs, as a guesser's do, so the cases reach the lockout: a `Bad`
/// step whose cut says so is typed up to six times, each time a different password.
pub(super) fn with_guesses(steps: Vec<Step>) -> Vec<Step> {
    let mut out = Vec::with_capacity(steps.len());
    for step in steps {
        let runs = match step.act {
            Act::Bad if step.cuts.1 % 4 == 0 => 1 + usize::from(step.cuts.0 % 6),
            _ => 1,
        };
        for n in 1..runs {
            let mut guess = step.clone();
            guess.texts.wrong = format!("{}{n}", step.texts.wrong);
            out.push(guess);
        }
        out.push(step);
    }
    out
}

pub(super) fn step() -> impl Strategy<Value = Step> {
    let end = prop_oneof![
        Just(End::Frame),
        Just(End::Lf),
        Just(End::CrLf),
        Just(End::Cr),
        Just(End::CrNul)
    ];
    (
        prop::bool::weighted(0.15),
        act(),
        texts(),
        end,
        any::<(u8, u8)>(),
        any::<bool>(),
        prop::bool::weighted(0.15),
    )
        .prop_map(|(second, act, texts, end, cuts, lf_first, batch)| Step {
            conn: usize::from(second),
            act,
            texts,
            end,
            cuts,
            lf_first,
            batch,
        })
}
