//! The telnet codec's tests: negotiation, line ends, NAWS, TTYPE, CHARSET, ECHO, GMCP and
//! wrapping, each fed bytes as a client sends them (docs/serve.md §8).

use super::*;

fn feed(t: &mut Telnet, bytes: &[u8]) -> (Vec<Event>, Vec<u8>) {
    let (mut events, mut out) = (Vec::new(), Vec::new());
    t.receive(bytes, &mut events, &mut out);
    (events, out)
}

fn line(s: &str) -> Event {
    Event::Line(s.as_bytes().to_vec())
}

#[test]
fn every_line_end_ends_one_line() {
    // docs/serve.md §8.2: CR, LF, CRLF and CR NUL.
    let mut t = Telnet::new(64);
    let (events, out) = feed(&mut t, b"a\rb\nc\r\nd\r\0e\n\rf\r");
    assert_eq!(
        events,
        [
            line("a"),
            line("b"),
            line("c"),
            line("d"),
            line("e"),
            line(""),
            line("f")
        ]
    );
    assert!(out.is_empty());
    // A CR at the end of one read and its LF at the start of the next: one line end.
    let (events, _) = feed(&mut t, b"\ng\n");
    assert_eq!(events, [line("g")]);
    assert!(!t.is_telnet());
}

#[test]
fn a_message_ends_the_line_it_leaves_open_and_no_other() {
    // docs/serve.md §9.2: the rule of docs/serve.md §8.2, plus the end of a message.
    let mut t = Telnet::new(64);
    let mut events = Vec::new();
    for message in [
        &b"alice"[..],
        b"bob\n",
        b"carol\r\n",
        b"dave\r",
        b"\n",
        b"eve\r",
        b"\nfay\r\0",
        b"",
        b"gus\rhal\nivy",
        b"\n",
        b"jo\r",
        b"",
    ] {
        t.receive_message(message, &mut events, &mut Vec::new());
    }
    let lines: Vec<&str> = events
        .iter()
        .map(|e| match e {
            Event::Line(l) => std::str::from_utf8(l).unwrap(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        lines,
        [
            "alice", "bob", "carol", "dave", // the LF after dave's CR is its line end
            "eve", "fay", "", // an empty message is an empty line
            "gus", "hal", "ivy", "", // ivy's message ended without a CR: the LF is a line
            "jo", "",
        ]
    );
    // A message over the cap is refused once; the next is a line again.
    let mut t = Telnet::new(4);
    let (mut events, mut out) = (Vec::new(), Vec::new());
    t.receive_message(b"toolong", &mut events, &mut out);
    t.receive_message(b"ok", &mut events, &mut out);
    assert_eq!(events, [Event::TooLong, line("ok")]);
}

#[test]
fn negotiations_never_reach_the_lines() {
    let mut t = Telnet::new(64);
    let mut input = b"lo".to_vec();
    input.extend_from_slice(&[
        IAC, WILL, OPT_NAWS, IAC, SB, OPT_NAWS, 0, 80, 0, 24, IAC, SE,
    ]);
    input.extend_from_slice(b"ok");
    input.extend_from_slice(&[IAC, 241, IAC, SE, IAC, IAC]); // NOP, a stray SE, a data 0xFF
    input.extend_from_slice(b"!\r\n");
    let (events, out) = feed(&mut t, &input);
    assert_eq!(events, [Event::Line(b"look\xff!".to_vec())]);
    assert_eq!(out, [IAC, DO, OPT_NAWS]);
    assert_eq!(t.peer().width, Some(80));
    assert!(t.is_telnet());
}

#[test]
fn an_iac_split_across_reads_is_one_command() {
    let mut t = Telnet::new(64);
    let mut events = Vec::new();
    let mut out = Vec::new();
    for byte in [b'h', IAC, DO, OPT_GMCP, b'i', b'\n'] {
        t.receive(&[byte], &mut events, &mut out);
    }
    assert_eq!(events, [line("hi")]);
    assert_eq!(out, [IAC, WILL, OPT_GMCP]);
}

#[test]
fn unknown_options_are_refused_once() {
    // docs/serve.md §8.3
    let mut t = Telnet::new(64);
    let flood: Vec<u8> = (0..1000)
        .flat_map(|_| [IAC, WILL, 99, IAC, DO, 98])
        .collect();
    let (events, out) = feed(&mut t, &flood);
    assert!(events.is_empty());
    assert_eq!(out, [IAC, DONT, 99, IAC, WONT, 98]);
}

#[test]
fn a_do_dont_flood_settles_after_a_few_replies() {
    let mut t = Telnet::new(64);
    let flood: Vec<u8> = (0..10_000)
        .flat_map(|_| [IAC, DO, OPT_GMCP, IAC, DONT, OPT_GMCP])
        .collect();
    let (_, out) = feed(&mut t, &flood);
    assert!(
        out.len() <= 3 * (usize::from(MAX_CHANGES) + 1),
        "{} bytes",
        out.len()
    );
    assert!(!t.gmcp_on());
    assert_eq!(t.options[usize::from(OPT_GMCP)].us, Q::No);
}

#[test]
fn answers_to_our_offers_do_not_loop() {
    let mut t = Telnet::new(64);
    let mut greeting = Vec::new();
    t.greeting(&mut greeting);
    let (_, out) = feed(
        &mut t,
        &[IAC, DO, OPT_GMCP, IAC, DO, OPT_EOR, IAC, WONT, OPT_NAWS],
    );
    assert!(out.is_empty(), "{out:?}");
    assert!(t.gmcp_on() && t.eor());
    // Saying it again changes nothing and gets no reply.
    let (_, out) = feed(&mut t, &[IAC, DO, OPT_GMCP, IAC, WONT, OPT_NAWS]);
    assert!(out.is_empty());
}

#[test]
fn terminal_types_are_asked_until_they_repeat() {
    let mut t = Telnet::new(64);
    let mut greeting = Vec::new();
    t.greeting(&mut greeting);
    let (_, out) = feed(&mut t, &[IAC, WILL, OPT_TTYPE]);
    assert_eq!(out, [IAC, SB, OPT_TTYPE, TTYPE_SEND, IAC, SE]);
    let is = |name: &[u8]| {
        let mut v = vec![IAC, SB, OPT_TTYPE, TTYPE_IS];
        v.extend_from_slice(name);
        v.extend_from_slice(&[IAC, SE]);
        v
    };
    for name in [
        &b"TINTIN++"[..],
        b"XTERM-256COLOR",
        b"MTTS 137",
        b"MTTS 137",
    ] {
        feed(&mut t, &is(name));
    }
    assert_eq!(
        t.peer().terminal_types,
        ["TINTIN++", "XTERM-256COLOR", "MTTS 137"]
    );
    assert_eq!(t.peer().mtts(), Some(137));
}

#[test]
fn markers_are_painted_only_for_a_client_that_shows_colour() {
    // docs/serve.md §8.10
    let line = "[system] the store is gone";
    let mut raw = Telnet::new(64);
    let mut out = Vec::new();
    raw.encode_line(line, &mut out);
    assert_eq!(out, b"[system] the store is gone\r\n");
    // A telnet client that names no terminal gets no colour either.
    feed(&mut raw, &[IAC, WILL, OPT_NAWS]);
    let mut out = Vec::new();
    raw.encode_line(line, &mut out);
    assert!(!out.contains(&0x1b));

    let mut mud = Telnet::new(64);
    let mut greeting = Vec::new();
    mud.greeting(&mut greeting);
    feed(&mut mud, &[IAC, WILL, OPT_TTYPE]);
    for name in [&b"MUDLET"[..], b"ANSI-256COLOR", b"MTTS 9"] {
        let mut v = vec![IAC, SB, OPT_TTYPE, TTYPE_IS];
        v.extend_from_slice(name);
        v.extend_from_slice(&[IAC, SE]);
        feed(&mut mud, &v);
    }
    let mut out = Vec::new();
    mud.encode_line(line, &mut out);
    assert_eq!(out, b"\x1b[1;33m[system]\x1b[0m the store is gone\r\n");
}

#[test]
fn charset_utf8_is_offered_and_accepted() {
    let mut t = Telnet::new(64);
    let mut greeting = Vec::new();
    t.greeting(&mut greeting);
    let (_, out) = feed(&mut t, &[IAC, WILL, OPT_CHARSET]);
    assert_eq!(out, b"\xff\xfa\x2a\x01;UTF-8\xff\xf0");
    let (_, out) = feed(&mut t, b"\xff\xfa\x2a\x02UTF-8\xff\xf0");
    assert!(out.is_empty());
    assert!(t.peer().utf8);
    // The client's own request: UTF-8 is picked from its list.
    let (_, out) = feed(&mut t, b"\xff\xfa\x2a\x01 ISO-8859-1 UTF-8\xff\xf0");
    assert_eq!(out, b"\xff\xfa\x2a\x02UTF-8\xff\xf0");
}

#[test]
fn gmcp_messages_in_and_out() {
    let mut t = Telnet::new(64);
    let (_, out) = feed(&mut t, &[IAC, DO, OPT_GMCP]);
    assert_eq!(out, [IAC, WILL, OPT_GMCP]);
    let (events, _) = feed(
        &mut t,
        b"\xff\xfa\xc9Core.Hello {\"client\":\"Mudlet\",\"version\":\"4\"}\xff\xf0",
    );
    assert_eq!(
        events,
        [Event::Gmcp(
            "Core.Hello".into(),
            "{\"client\":\"Mudlet\",\"version\":\"4\"}".into()
        )]
    );
    let mut out = Vec::new();
    t.gmcp("Char.Name", "{\"name\":\"\u{ff}\"}", &mut out);
    assert_eq!(out[..3], [IAC, SB, OPT_GMCP]);
    assert!(out.ends_with(&[IAC, SE]));
}

#[test]
fn an_endless_subnegotiation_is_bounded() {
    // docs/serve.md §8.7
    let mut t = Telnet::new(64);
    feed(&mut t, &[IAC, SB, OPT_GMCP]);
    let junk = vec![b'x'; 1 << 20];
    for _ in 0..4 {
        let (events, out) = feed(&mut t, &junk);
        assert!(events.is_empty() && out.is_empty());
    }
    assert!(t.sb.capacity() <= 2 * MAX_SUBNEGOTIATION);
    // Once it ends, lines flow again.
    let (events, _) = feed(&mut t, b"\xff\xf0who\n");
    assert_eq!(events, [line("who")]);
}

#[test]
fn a_megabyte_of_iac_is_an_overlong_line() {
    let mut t = Telnet::new(1024);
    let (events, out) = feed(&mut t, &vec![IAC; 1 << 20]);
    assert_eq!(events, [Event::TooLong]);
    assert!(out.is_empty());
    assert!(t.line.capacity() <= 2048);
    // The rest of that line is dropped up to its end; the next line is read.
    let (events, _) = feed(&mut t, b"x\nwho\n");
    assert_eq!(events, [line("who")]);
}

#[test]
fn random_bytes_are_bounded_in_lines_and_replies() {
    // docs/serve.md §8.3, §8.7: whatever arrives, lines stay under the cap and the replies
    // under MAX_REPLY_BYTES. Random bytes, biased to telnet's commands and options.
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..20 {
        let mut t = Telnet::new(64);
        let mut greeting = Vec::new();
        t.greeting(&mut greeting);
        let (mut events, mut out) = (Vec::new(), Vec::new());
        for _ in 0..2000 {
            let chunk: Vec<u8> = (0..next() % 64)
                .map(|_| {
                    let r = next();
                    match r % 4 {
                        0 => IAC,
                        1 => [WILL, WONT, DO, DONT, SB, SE, 0, b'\r', b'\n'][(r >> 8) as usize % 9],
                        2 => [
                            OPT_ECHO,
                            OPT_TTYPE,
                            OPT_EOR,
                            OPT_NAWS,
                            OPT_CHARSET,
                            OPT_GMCP,
                        ][(r >> 8) as usize % 6],
                        _ => (r >> 8) as u8,
                    }
                })
                .collect();
            t.receive(&chunk, &mut events, &mut out);
        }
        for event in &events {
            if let Event::Line(line) = event {
                assert!(line.len() <= 64 && !line.contains(&b'\n'));
            }
        }
        assert!(
            out.len() <= MAX_REPLY_BYTES,
            "{} bytes of replies",
            out.len()
        );
        assert!(t.sb.len() <= MAX_SUBNEGOTIATION && t.line.len() <= 64);
    }
}

#[test]
fn output_is_crlf_escaped_and_wrapped() {
    let mut t = Telnet::new(64);
    let mut out = Vec::new();
    t.encode_line("hello", &mut out);
    assert_eq!(out, b"hello\r\n");
    feed(&mut t, &[IAC, SB, OPT_NAWS, 0, 20, 0, 24, IAC, SE]);
    let mut out = Vec::new();
    t.encode_line("the quick brown fox jumps over the lazy dog", &mut out);
    assert_eq!(
        out,
        b"the quick brown fox\r\njumps over the lazy\r\ndog\r\n"
    );
    let mut out = Vec::new();
    t.encode_line(&"x".repeat(45), &mut out);
    assert_eq!(
        out.split(|&b| b == b'\n')
            .map(<[u8]>::len)
            .collect::<Vec<_>>(),
        [21, 21, 6, 0]
    );
}

#[test]
fn echo_is_hidden_only_for_telnet_clients() {
    // docs/serve.md §8.5
    let mut raw = Telnet::new(64);
    let mut out = Vec::new();
    raw.hide_input(true, &mut out);
    assert!(out.is_empty());
    let mut t = Telnet::new(64);
    feed(&mut t, &[IAC, 241]);
    t.hide_input(true, &mut out);
    assert_eq!(out, [IAC, WILL, OPT_ECHO]);
    let (_, replies) = feed(&mut t, &[IAC, DO, OPT_ECHO]);
    assert!(replies.is_empty());
    out.clear();
    t.hide_input(false, &mut out);
    assert_eq!(out, [IAC, WONT, OPT_ECHO]);
    let (_, replies) = feed(&mut t, &[IAC, DONT, OPT_ECHO]);
    assert!(replies.is_empty());
    // A client that asks the server to echo unprompted is refused.
    let (_, replies) = feed(&mut t, &[IAC, DO, OPT_ECHO]);
    assert_eq!(replies, [IAC, WONT, OPT_ECHO]);
}

#[test]
fn echo_asked_back_before_the_client_answered_is_asked_once_it_does() {
    // docs/serve.md §7.38: a client that typed a password line and its next name in one
    // burst. Hiding is asked, ended before the client's DO came, and asked again before its
    // DONT came: each change waits for the answer to the last, and the input ends hidden.
    let mut t = Telnet::new(64);
    feed(&mut t, &[IAC, 241]);
    let mut out = Vec::new();
    t.hide_input(true, &mut out);
    t.hide_input(false, &mut out);
    t.hide_input(true, &mut out);
    assert_eq!(
        out,
        [IAC, WILL, OPT_ECHO],
        "nothing more while WILL is unanswered"
    );
    let (_, replies) = feed(&mut t, &[IAC, DO, OPT_ECHO]);
    assert!(replies.is_empty(), "the last wish is the one asked: hidden");
    // Shown, hidden again before the DONT: the WILL goes once the DONT is in.
    out.clear();
    t.hide_input(false, &mut out);
    t.hide_input(true, &mut out);
    assert_eq!(out, [IAC, WONT, OPT_ECHO]);
    let (_, replies) = feed(&mut t, &[IAC, DONT, OPT_ECHO]);
    assert_eq!(replies, [IAC, WILL, OPT_ECHO]);
    // A client that refuses to stop echoing is not asked again and again.
    let (_, replies) = feed(&mut t, &[IAC, DONT, OPT_ECHO]);
    assert!(replies.is_empty());
}

#[test]
fn prompts_end_in_ga_or_eor() {
    let mut t = Telnet::new(64);
    let mut out = Vec::new();
    t.end_prompt(&mut out);
    assert!(out.is_empty(), "nothing for a raw client");
    feed(&mut t, &[IAC, DO, OPT_EOR]);
    t.end_prompt(&mut out);
    assert_eq!(out, [IAC, EOR_CMD]);
}

#[test]
fn every_iac_in_data_is_doubled_and_nothing_else_changes() {
    // RFC 854: a data byte 255 is sent as IAC IAC; runs between them are copied as they are.
    for (data, sent) in [
        (&b""[..], &b""[..]),
        (b"plain line", b"plain line"),
        (b"\xff", b"\xff\xff"),
        (
            b"a\xffb\xff\xffc\xff",
            b"a\xff\xffb\xff\xff\xff\xffc\xff\xff",
        ),
    ] {
        let mut out = b"kept".to_vec();
        escape_iac(data, &mut out);
        assert_eq!(out[4..], *sent, "{data:?}");
        assert_eq!(&out[..4], b"kept", "appended, not replaced");
    }
}
