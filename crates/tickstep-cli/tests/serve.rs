//! `tickstep serve`, the real binary on an ephemeral loopback port, spoken to over TCP as a
//! netcat user would. Every wait is bounded (a deadline per expected line, a bound on each
//! process); the assertions are about what was said, never about how long it took. Reminders use
//! one-second delays, so the suite spends a few seconds of real time in all.

mod serve_client;

use std::io::Write;
use std::net::Shutdown;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use serve_client::{PATIENCE, Server, id_of, password_of};

fn store(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("world.db")
}

#[test]
fn a_reminder_fires_and_schedules_and_mail_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let mut alice = server.login("alice");
    let remind = alice.ask("remind 1 tea is ready");
    assert!(remind.starts_with("ok: schedule #"), "{remind}");
    let tea = id_of(&remind);
    assert_eq!(alice.expect("[#"), format!("[#{tea}] tea is ready"));

    let hourly = id_of(&alice.ask("every 3600 tell stretch"));
    // A reminder for alice that fires while she is away goes to her mailbox.
    let away = id_of(&alice.ask("remind 1 you missed this"));
    alice.quit();
    let mut bob = server.login("bob");
    bob.ask("remind 1 ping");
    bob.expect("[#"); // bob's later reminder has fired, so alice's has too
    drop(bob);
    server.shutdown();

    let server = Server::start(&store(&dir), &[]);
    let mut alice = server.login("alice");
    assert_eq!(
        alice.expect("[mail] ["),
        format!("[mail] [#{away}] you missed this")
    );
    let listing = alice.ask("schedules");
    assert_eq!(listing, "ok: 1 live schedule");
    let row = alice.expect("  #");
    assert!(
        row.starts_with(&format!("  #{hourly} every 3600 s tell")),
        "{row}"
    );
    let info = alice.ask(&format!("info {hourly}"));
    assert!(info.contains("owner alice"), "{info}");
    server.shutdown();
}

#[test]
fn players_cannot_touch_each_others_schedules_but_the_wizard_can() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let mut alice = server.login("alice");
    let mut bob = server.login("bob");
    let id = id_of(&alice.ask("every 60 say hello"));

    // Another's schedule reads as one that is not there (docs/serve.md §4.7).
    assert_eq!(
        bob.ask(&format!("stop {id}")),
        format!("error: you have no schedule #{id}")
    );
    assert_eq!(
        bob.ask(&format!("info #{id}")),
        format!("error: you have no schedule #{id}")
    );
    assert_eq!(bob.ask("schedules"), "ok: 0 live schedules");
    assert_eq!(
        bob.ask("shutdown"),
        "error: only the wizard may shut the server down"
    );

    let mut wizard = server.login("merlin");
    assert!(wizard.ask(&format!("info {id}")).contains("owner alice"));
    assert_eq!(
        wizard.ask(&format!("stop {id}")),
        format!("ok: stopped #{id}")
    );
    assert_eq!(
        alice.ask(&format!("stop {id}")),
        format!("error: you have no schedule #{id}")
    );
    let who = wizard.ask("who");
    assert_eq!(who, "ok: 3 online: alice, bob, merlin (wizard)");
}

#[test]
fn ten_thousand_schedules_from_one_player_meet_the_quota() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &["--quota", "5"]);
    let mut greedy = server.login("greedy");
    // Written from another thread while this one reads the replies, as a flooding client would.
    let mut writer = greedy.stream.try_clone().unwrap();
    let flood = std::thread::spawn(move || {
        let lines = "every 60 tell more\n".repeat(10_000);
        writer.write_all(lines.as_bytes()).unwrap();
    });
    let (mut ok, mut refused) = (0, 0);
    // Paced at 1,000 commands a second (docs/serve.md §11.11): about ten seconds of replies.
    let deadline = Instant::now() + PATIENCE * 4;
    while ok + refused < 10_000 {
        let line = greedy
            .line(deadline)
            .expect("the server keeps the connection");
        if line.starts_with("ok: schedule #") {
            ok += 1;
        } else if line
            .starts_with("error: quota reached: greedy has 5 live schedules and the limit is 5")
        {
            refused += 1;
        }
    }
    flood.join().unwrap();
    assert_eq!((ok, refused), (5, 9_995));
    let mut other = server.login("other");
    assert!(
        other
            .ask("remind 60 still served")
            .starts_with("ok: schedule #")
    );
}

#[test]
fn hostile_input_gets_a_clear_reply_or_a_clean_disconnect() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &store(&dir),
        &["--login-timeout", "1s", "--max-line", "256"],
    );
    let mut steady = server.login("steady");

    // Unknown commands and bad numbers: a reply naming the value and the rule.
    assert_eq!(
        steady.ask("dance"),
        "error: unknown command \"dance\" (type help)"
    );
    assert_eq!(
        steady.ask("remind soon tea"),
        "error: \"soon\" is not a delay in seconds from 0 to 3153600000 (100 years)"
    );
    assert_eq!(
        steady.ask("every 0.001 say spam"),
        "error: every needs at least 1 s between firings (got 0.001)"
    );

    // Bytes that are not UTF-8: refused, the connection stays. (0xff would be telnet's IAC:
    // docs/serve.md §8.1.)
    steady.send_bytes(b"say \xfe\xfe\n");
    assert_eq!(
        steady.expect("error:"),
        "error: the line is not UTF-8 text (byte 0xfe at offset 4); ignored"
    );
    assert!(steady.ask("who").starts_with("ok: 1 online"));

    // A huge line: a reason, then the connection closes.
    let mut huge = server.login("huge");
    huge.send(&"x".repeat(100_000));
    assert_eq!(
        huge.expect("error:"),
        "error: line longer than 256 bytes; closing the connection"
    );
    huge.expect_closed();

    // A client that never speaks is dropped after the login timeout.
    let mut silent = server.connect();
    assert_eq!(
        silent.expect("error:"),
        "error: not logged in within 1 s; goodbye"
    );
    silent.expect_closed();

    // A client that hangs up mid-line: the partial command is never run, its name is free again.
    let mut hasty = server.login("hasty");
    hasty.send_bytes(b"remind 1 half a li");
    hasty.stream.shutdown(Shutdown::Both).unwrap();
    drop(hasty);
    let deadline = Instant::now() + PATIENCE;
    let mut again = loop {
        // The old session ends when the server reads the hang-up; until then the name is taken.
        assert!(Instant::now() < deadline, "the hung-up session never ended");
        let mut c = server.connect();
        if c.try_log_in("hasty", &password_of("hasty"))
            .starts_with("ok: welcome")
        {
            break c;
        }
    };
    assert_eq!(again.ask("schedules"), "ok: 0 live schedules");

    // A bad name is refused and may be retried; the server served everyone throughout.
    let mut named = server.connect();
    named.send("no spaces allowed");
    assert!(
        named
            .expect("error:")
            .starts_with("error: a name is 1-24 letters")
    );
    named.log_in("named", &password_of("named"));
    assert_eq!(steady.ask("who"), "ok: 3 online: hasty, named, steady");
}

#[test]
fn two_players_contend_for_the_bell_and_the_loser_is_told_why() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let mut alice = server.login("alice");
    let mut bob = server.login("bob");
    let mut carol = server.login("carol");

    assert_eq!(alice.ask("ring 3"), "ok: you ring the bell (priority 3)");
    bob.expect("[bell] DING! alice rings the bell (priority 3)");
    assert_eq!(
        bob.ask("ring 1"),
        "error: the bell is busy: alice's ring has priority 3, yours is 1; a lower priority loses"
    );
    assert_eq!(carol.ask("ring 7"), "ok: you ring the bell (priority 7)");
    assert_eq!(
        alice.expect("[bell] your ring"),
        "[bell] your ring was cut off: carol (priority 7) took the bell from you (your priority 3)"
    );
    bob.expect("[bell] DING! carol rings the bell (priority 7)");
    bob.expect("[bell] the bell falls silent (carol)");
}

#[test]
fn help_documents_the_protocol_on_the_command_line_and_on_the_wire() {
    let out = Command::new(env!("CARGO_BIN_EXE_tickstep"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "--listen",
        "--db",
        "--wizard",
        "remind <seconds> <text>",
        "ring [priority]",
    ] {
        assert!(text.contains(needle), "--help lacks {needle:?}");
    }

    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let mut alice = server.login("alice");
    alice.send("help");
    alice.expect("Protocol (plain lines");
    alice.expect("  every <seconds> <verb> [args]");
}

#[test]
fn an_idle_world_runs_no_frames_however_much_its_players_chat() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let mut wizard = server.login("merlin");
    let mut alice = server.login("alice");
    let mut bob = server.login("bob");
    wizard.ask("stats"); // starts a fresh window
    // Ten says: a player's burst of chat (docs/serve.md §11.6).
    for n in 0..10 {
        assert!(alice.ask("who").starts_with("ok: 3 online"));
        assert_eq!(alice.ask(&format!("say hello {n}")), "ok: said");
        bob.expect(&format!("[say] alice says: hello {n}"));
    }
    let stats = wizard.ask("stats");
    assert!(stats.starts_with("ok: frames_run=0 "), "{stats}");
    // Work for the kernel brings frames back.
    assert!(alice.ask("remind 0 now").starts_with("ok: schedule #"));
    alice.expect("[#");
    let stats = wizard.ask("stats");
    assert!(!stats.starts_with("ok: frames_run=0 "), "{stats}");
    // Each frame is reported on the wall clock and in the server thread's CPU time
    // (docs/serve.md §3.5).
    let field = |key: &str| {
        stats
            .split_whitespace()
            .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
            .and_then(|v| v.parse::<u64>().ok())
    };
    for key in ["step_max_us", "overruns", "step_cpu_max_us", "cpu_overruns"] {
        assert!(field(key).is_some(), "{key} in {stats}");
    }
}

#[test]
fn a_named_schedule_is_created_once_and_found_again_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let mut alice = server.login("alice");
    let first = alice.ask("every 60 say top of the hour as hourly");
    assert!(first.ends_with("runs say every 60 s as hourly"), "{first}");
    let id = id_of(&first);
    assert_eq!(
        alice.ask("every 60 say top of the hour as hourly"),
        format!("ok: schedule #{id} is already hourly: nothing created")
    );
    assert_eq!(alice.ask("schedules"), "ok: 1 live schedule");
    assert!(
        alice
            .expect("  #")
            .starts_with(&format!("  #{id} as hourly every 60 s say"))
    );
    let other = alice.ask("every 30 say top of the hour as hourly");
    assert!(
        other.starts_with("error: E_INVARG: key \"hourly\"")
            && other.contains(&format!("schedule {id}"))
            && other.contains("interval differs"),
        "{other}"
    );
    let bad = alice.ask("every 60 say hi as no/slash");
    assert!(bad.starts_with("error: E_INVARG: \"no/slash\""), "{bad}");
    // The name is alice's: bob's own "hourly" is another schedule.
    let mut bob = server.login("bob");
    assert_ne!(
        id_of(&bob.ask("every 60 say top of the hour as hourly")),
        id
    );
    drop(bob);
    server.shutdown();

    let server = Server::start(&store(&dir), &[]);
    let mut alice = server.login("alice");
    assert_eq!(
        alice.ask("every 60 say top of the hour as hourly"),
        format!("ok: schedule #{id} is already hourly: nothing created")
    );
    server.shutdown();
}

#[test]
fn pause_resume_and_trigger_are_for_the_owner_or_the_wizard() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let mut alice = server.login("alice");
    let mut bob = server.login("bob");
    let id = id_of(&alice.ask("every 3600 tell hourly"));

    // Another's schedule gets the words a missing one gets, so ids cannot be probed
    // (docs/serve.md §4.7).
    for command in ["pause", "resume", "trigger"] {
        assert_eq!(
            bob.ask(&format!("{command} {id}")),
            format!("error: you have no schedule #{id}")
        );
        assert_eq!(
            bob.ask(&format!("{command} 999999")),
            "error: you have no schedule #999999"
        );
    }
    assert_eq!(
        alice.ask(&format!("pause {id} back after the deploy")),
        format!("ok: paused #{id}")
    );
    let info = alice.ask(&format!("info {id}"));
    assert!(
        info.ends_with("paused by alice: back after the deploy"),
        "{info}"
    );
    assert_eq!(
        alice.ask(&format!("pause {id}")),
        format!("ok: #{id} was paused already")
    );
    // A paused schedule still runs when triggered, once, and its cadence stays put.
    assert_eq!(
        alice.ask(&format!("trigger {id}")),
        format!("ok: #{id} runs now")
    );
    assert_eq!(alice.expect("[#"), format!("[#{id}] hourly"));
    let mut wizard = server.login("merlin");
    assert_eq!(
        wizard.ask(&format!("resume {id}")),
        format!("ok: resumed #{id}")
    );
    let info = alice.ask(&format!("info {id}"));
    assert!(
        info.contains("runs 1 ") && info.contains(" UTC (in 1 h)"),
        "{info}"
    );
    // A wizard is told why (docs/serve.md §4.7).
    let bad = wizard.ask("pause 999999");
    assert!(
        bad.starts_with("error: there is no schedule #999999"),
        "{bad}"
    );
    // The wizard is still connected: it stops the server itself.
    wizard.send("shutdown");
    wizard.expect("ok: shutting down");
}

#[test]
fn a_cron_schedule_in_a_time_zone_is_made_shown_and_checked_like_every() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &["--creates-per-player", "1"]);
    let mut alice = server.login("alice");
    let made = alice.ask("cron \"0 * * * *\" Europe/London say top of the hour");
    assert!(
        made.starts_with("ok: schedule #")
            && made.ends_with("runs say at \"0 * * * *\" in Europe/London"),
        "{made}"
    );
    let id = id_of(&made);
    let info = alice.ask(&format!("info {id}"));
    assert!(info.contains("cron \"0 * * * *\" Europe/London"), "{info}");
    let fields = alice.expect("  ");
    assert!(
        fields.contains("kind=\"cron\"") && fields.contains("zone=\"Europe/London\""),
        "{fields}"
    );
    // Why points were missed and how late the kept firings started (docs/serve.md §4.8): none
    // yet.
    assert!(
        fields.contains(" missed_by=[")
            && fields.contains(" last_missed_reason=\"\"")
            && fields.contains(" lateness_samples=0"),
        "{fields}"
    );
    // Bad input is the engine's typed error, naming the field and the rule, escaped.
    let bad = alice.ask("cron \"61 * * * *\" UTC say x");
    assert_eq!(
        bad,
        "error: E_INVARG: minute field \"61\": 61 is outside 0-59 (docs/schedules.md §14.1)"
    );
    let zone = alice.ask("cron @daily Mars/\u{1b}[31mRed say x");
    assert!(
        zone.starts_with("error: E_INVARG: unknown time zone") && !zone.contains('\u{1b}'),
        "{zone}"
    );
    // It counts against the same creation limit as `every` (docs/serve.md §11.3): a burst of
    // four, each attempt taking one, then one a second.
    assert!(alice.ask("every 60 say tick").starts_with("ok: schedule #"));
    let refused = alice.ask("cron @hourly UTC say again");
    assert!(
        refused.starts_with("error: too many new schedules"),
        "{refused}"
    );
}

/// docs/serve.md §3.10: `ping` answers with the server's clock, between the client's two reads of
/// the same clock; its word comes back escaped.
#[test]
fn ping_answers_with_the_servers_clock() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let mut alice = server.login("alice");
    let unix_ns = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    };
    let before = unix_ns();
    let pong = alice.ask("ping 7");
    let after = unix_ns();
    let ns: u128 = pong
        .strip_prefix("ok: pong 7 ")
        .and_then(|ns| ns.parse().ok())
        .unwrap_or_else(|| panic!("{pong}"));
    assert!(before <= ns && ns <= after, "{before} <= {ns} <= {after}");
    let odd = alice.ask("ping \u{1b}[31m");
    assert!(odd.starts_with("ok: pong \\x1b[31m "), "{odd}");
}

/// docs/serve.md §3.9: policy words before the verb set the engine's policies, checked by the
/// engine's own options map, before any creation limit is taken.
#[test]
fn policy_words_set_a_schedules_policies_and_bad_ones_are_named_at_no_cost() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &["--creates-per-player", "1"]);
    let mut alice = server.login("alice");
    // Refused words cost nothing: the burst of four creations is still whole after them.
    let typo = alice.ask("every 60 overlap=cancel_others say hi");
    assert!(
        typo.starts_with("error: E_INVARG: \"cancel_others\"") && typo.contains("overlap"),
        "{typo}"
    );
    let server_only = alice.ask("every 60 persist=0 say hi");
    assert!(
        server_only.starts_with("error: E_INVARG: persist")
            && server_only.contains("catchup_window")
            && server_only.contains("docs/serve.md §3.9"),
        "{server_only}"
    );
    let half = alice.ask("every 60 overlap= say hi");
    assert!(half.contains("\"overlap=\" is not name=value"), "{half}");
    let made = alice.ask(
        "every 60 overlap=cancel_other catchup_window=300 on_max_faults=pause max_faults=2 \
         remaining_runs=3 say a=b as beat",
    );
    assert!(made.ends_with("runs say every 60 s as beat"), "{made}");
    let id = id_of(&made);
    alice.ask(&format!("info {id}"));
    let fields = alice.expect("  ");
    for field in [
        "overlap=\"cancel_other\"",
        "catchup_window=300",
        "on_max_faults=\"pause\"",
        "max_faults=2",
        "remaining_runs=3",
        "args={\"a=b\"}",
    ] {
        assert!(fields.contains(field), "{field} in {fields}");
    }
    for n in 0..3 {
        assert!(
            alice
                .ask(&format!("at 1900000000 catchup=skip tell {n}"))
                .starts_with("ok: schedule #"),
            "creation {n} of the burst"
        );
    }
}

#[test]
fn replies_quote_numbers_as_typed_and_info_says_a_paused_schedule_is_paused() {
    // docs/serve.md §4.9: `1e-300` is not expanded into 300 digits, in a refusal or a reply.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let mut alice = server.login("alice");
    let soon = alice.ask("remind 1e-300 tea");
    assert_eq!(
        soon,
        format!("ok: schedule #{} reminds you in 1e-300 s", id_of(&soon))
    );
    assert_eq!(alice.expect("[#"), format!("[#{}] tea", id_of(&soon)));
    let every = alice.ask("every 3.6e3 say hourly");
    let id = id_of(&every);
    assert_eq!(every, format!("ok: schedule #{id} runs say every 3.6e3 s"));
    let at = alice.ask("at 1.9e9 ring");
    assert_eq!(
        at,
        format!("ok: schedule #{} runs ring at 1.9e9", id_of(&at))
    );

    // docs/schedules.md §9.4, §9.13: paused, nothing is due.
    alice.ask(&format!("pause {id}"));
    alice.send(&format!("info {id}"));
    alice.expect("ok: #");
    let fields = alice.expect("  id=");
    assert!(
        fields.contains(" next_run=0.0 ") && fields.contains(" status=\"paused\" "),
        "{fields}"
    );
    server.shutdown();
}
