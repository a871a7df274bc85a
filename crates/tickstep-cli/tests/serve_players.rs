//! `tickstep serve` against the players who attack it (issue 24, findings 1–4, 6 and 7): the real
//! binary on an ephemeral loopback port, spoken to over TCP. Every wait is bounded (a deadline per
//! expected line, a bound on each process); the assertions are about what was said and what is on
//! disk, never about how long it took.

mod run;
mod serve_client;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use run::stderr;
use serve_client::{Client, PATIENCE, Server, id_of, password_of};

fn store(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("world.db")
}

#[test]
fn a_players_text_reaches_others_escaped_so_no_one_fakes_a_system_line() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let mut mallory = server.login("mallory");
    let mut bob = server.login("bob");

    // A CR ends a line, as every line end a client may send does (docs/serve.md §8.2): the fake
    // system line is a second command, refused, and never reaches bob.
    assert_eq!(
        mallory.ask("say hi\r[system] the server is shutting down, type your password"),
        "ok: said"
    );
    assert!(mallory.expect("error: ").contains("[system]"));
    assert_eq!(bob.expect("[say] mallory says: "), "[say] mallory says: hi");
    mallory.ask("say \x1b[2J\x1b]0;pwned\x07\u{9b}31m\0 abc\u{202e}fed");
    assert_eq!(
        bob.expect("[say] mallory says: "),
        "[say] mallory says: \\x1b[2J\\x1b]0;pwned\\x07\\u{9b}31m\\x00 abc\\u{202e}fed"
    );
    // The speaker's own echo is escaped too, and is part of the reply.
    assert!(mallory.seen.iter().all(|line| !line.contains('\x1b')));

    // A schedule's say and a reminder's tell are escaped when they fire, and so are listings.
    let id = id_of(&mallory.ask("every 1 say \x1b[2Jrepeat\x07more"));
    assert_eq!(
        bob.expect(&format!("[#{id}] ")),
        format!("[#{id}] mallory says: \\x1b[2Jrepeat\\x07more")
    );
    assert!(mallory.ask("schedules").starts_with("ok: 1 live schedule"));
    let row = mallory.expect("  #");
    // A listing quotes the argument as a value, escapes and all.
    assert!(row.contains(r#"say "\u{1b}[2Jrepeat\u{7}more""#), "{row}");
    // So does `info`'s line of fields, and a note with a bidi control reads in typed order
    // (docs/serve.md §4.8, §11).
    assert_eq!(
        mallory.ask(&format!("pause {id} abc\u{202e}fed")),
        format!("ok: paused #{id}")
    );
    mallory.ask(&format!("info {id}"));
    let fields = mallory.expect("  ");
    for field in [
        r#" args={"\u{1b}[2Jrepeat\u{7}more"} "#,
        r#" pause_note="abc\u{202e}fed" "#,
        " paused=true ",
    ] {
        assert!(fields.contains(field), "{field} in {fields}");
    }
    assert!(!fields.chars().any(char::is_control), "{fields}");
    assert!(
        bob.seen
            .iter()
            .chain(&mallory.seen)
            .all(|line| { !line.starts_with("[system]") && !line.chars().any(char::is_control) })
    );
}

#[test]
fn a_name_is_an_account_nobody_else_can_take_and_guessing_is_limited() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let mut alice = server.login("alice");
    let id = id_of(&alice.ask("every 60 tell mine"));
    alice.quit();

    // A squatter who types alice's name is asked her password, refused, and asked again
    // (docs/serve.md §10.9).
    let mut squatter = server.connect();
    assert_eq!(
        squatter.try_log_in("alice", "letmein!"),
        "error: wrong password for alice"
    );
    // Four more guesses at the prompt asked again use up the address's five; the fifth is
    // told so and sent back to the name prompt (docs/serve.md §10.6, §10.9).
    let mut last = String::new();
    for guess in 0..4 {
        assert_eq!(
            squatter.expect("password: "),
            "password: type alice's password"
        );
        last = squatter.ask(&format!("guess-{guess}"));
    }
    assert!(
        last.starts_with("error: too many failed logins from your address: 5 at once"),
        "{last}"
    );
    squatter.expect("name: type your name");
    // Then even the right password is refused before it is asked, and the name prompt follows.
    squatter.send("alice");
    assert!(
        squatter
            .expect("error:")
            .starts_with("error: too many failed logins from your address")
    );
    squatter.expect("name: type your name");

    // `help` at the name prompt is help, not a player called help; `quit` leaves.
    let mut newcomer = server.connect();
    newcomer.send("help");
    newcomer.expect("help: type your name");
    newcomer.send("Help");
    newcomer.expect("help: type your name");
    newcomer.send("who");
    assert_eq!(
        newcomer.expect("error:"),
        "error: that is a command, so it cannot be a name"
    );
    // A new name with a short password is not created; the password is asked again, and an
    // empty line goes back to the name prompt (docs/serve.md §10.9, §10.10).
    assert_eq!(
        newcomer.try_log_in("carol", "abc"),
        "error: a password has at least 6 characters"
    );
    assert_eq!(
        newcomer.expect("password: "),
        "password: carol is a new name; choose a password (at least 6 characters)"
    );
    assert_eq!(
        newcomer.ask(""),
        "ok: no password typed, so carol was not made"
    );
    newcomer.expect("name: type your name");
    newcomer.log_in("carol", &password_of("carol"));
    assert_eq!(
        newcomer.ask(&format!("info {id}")),
        format!("error: you have no schedule #{id}")
    );
    drop(newcomer);
    drop(squatter);
    drop(server); // killed: the wizard's login would meet the address's failed logins too

    // The account survives a restart: the right password lets alice in, her schedule is there.
    let server = Server::start(&store(&dir), &[]);
    let mut alice = server.login("alice");
    assert!(alice.ask(&format!("info {id}")).contains("owner alice"));
}

#[test]
fn the_wizard_is_given_by_configuration_never_claimed_by_typing_its_name() {
    let dir = tempfile::tempdir().unwrap();
    // No wizard password in the environment: nobody can log in as merlin.
    let server = Server::start_with(&store(&dir), &[], None);
    let mut claimant = server.connect();
    claimant.send("merlin");
    assert!(
        claimant
            .expect("error:")
            .starts_with("error: merlin is the wizard's account; its password is given")
    );
    let mut bob = server.login("bob");
    assert_eq!(
        bob.ask("shutdown"),
        "error: only the wizard may shut the server down"
    );
    assert_eq!(
        bob.ask("wizard bob"),
        "error: only a wizard may make a wizard"
    );
    drop(server);

    // With the password configured, merlin is a wizard, and may make bob one.
    let server = Server::start(&store(&dir), &[]);
    let mut claimant = server.connect();
    assert_eq!(
        claimant.try_log_in("merlin", "merlin"),
        "error: wrong password for merlin"
    );
    let mut merlin = server.connect();
    merlin.send("merlin");
    merlin.expect("password: type merlin's password");
    merlin.send(&password_of("merlin"));
    assert!(
        merlin
            .expect("ok: welcome, merlin (#100); you are a wizard")
            .ends_with("wizard")
    );
    let mut bob = server.login("bob");
    assert!(bob.ask("stats").starts_with("error: only the wizard"));
    assert_eq!(merlin.ask("wizard bob"), "ok: bob is a wizard");
    bob.expect("[system] merlin made you a wizard");
    assert!(bob.ask("stats").starts_with("ok: frames_run="));
}

#[test]
fn a_create_stop_loop_is_rate_limited_and_the_wal_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let mut players: Vec<Client> = ["churn1", "churn2", "churn3"]
        .iter()
        .map(|name| server.login(name))
        .collect();
    let mut steady = server.login("steady");
    let churn = |player: &mut Client| -> Result<(), String> {
        let reply = player.ask("every 60 tell churn");
        if reply.starts_with("ok: schedule #") {
            let stopped = player.ask(&format!("stop {}", id_of(&reply)));
            assert!(stopped.starts_with("ok: stopped #"), "{stopped}");
            Ok(())
        } else {
            assert!(
                reply.starts_with("error: too many new schedules: "),
                "{reply}"
            );
            Err(reply)
        }
    };
    // One player alone meets the player's rate first (docs/serve.md §11.3).
    let (mut made, mut refusal) = (0, None);
    for _ in 0..2_000 {
        match churn(&mut players[0]) {
            Ok(()) => made += 1,
            Err(reply) => {
                refusal = Some(reply);
                break;
            }
        }
    }
    let refusal = refusal.expect("a create/stop loop is refused");
    assert!(
        refusal
            .starts_with("error: too many new schedules: 20 at once, then 5 a second per player"),
        "{refusal}"
    );
    assert!(made >= 20, "the burst was granted ({made})");
    // Three players of one address together ask more than the address's rate, so the address's
    // limit shows, however fast or slow the machine.
    let mut per_address = None;
    for round in 0..6_000 {
        if let Err(reply) = churn(&mut players[round % 3])
            && reply.contains("per address")
        {
            per_address = Some(reply);
            break;
        }
    }
    let per_address = per_address.expect("the address's limit is met");
    assert!(
        per_address
            .starts_with("error: too many new schedules: 40 at once, then 10 a second per address"),
        "{per_address}"
    );
    assert!(steady.ask("who").starts_with("ok: 4 online"));
    // docs/serve.md §11.10: at these rates the WAL stays small.
    let wal = std::fs::metadata(dir.path().join("world.db-wal")).map_or(0, |m| m.len());
    assert!(wal < 4 << 20, "the WAL grew to {wal} bytes");
    println!("churn: WAL {wal} bytes");
}

#[test]
fn a_pasted_burst_of_3000_commands_gets_3000_replies_and_stays_connected() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let mut paster = server.login("paster");
    // The world has lines for the paster meanwhile: a schedule that tells it every second.
    assert!(
        paster
            .ask("every 1 tell tick")
            .starts_with("ok: schedule #")
    );
    let mut writer = paster.stream.try_clone().unwrap();
    let paste = std::thread::spawn(move || {
        let mut lines = String::new();
        for n in 0..3_000 {
            lines.push_str(if n % 3 == 0 { "say pasted\n" } else { "who\n" });
        }
        writer.write_all(lines.as_bytes()).unwrap();
    });
    let (mut replies, mut echoes) = (0, 0);
    let deadline = Instant::now() + PATIENCE * 4;
    while replies < 3_000 {
        let line = paster
            .line(deadline)
            .unwrap_or_else(|| panic!("dropped after {replies} replies"));
        if line.starts_with("ok:") || line.starts_with("error:") {
            replies += 1;
        } else if line == "[say] paster says: pasted" {
            echoes += 1;
        }
    }
    paste.join().unwrap();
    assert_eq!(replies, 3_000);
    assert!(echoes >= 10, "the burst of says was echoed ({echoes})");
    assert!(
        paster.ask("who").starts_with("ok: 1 online"),
        "still connected"
    );
}

#[test]
fn a_client_that_stops_reading_is_told_why_before_the_connection_closes() {
    // docs/serve.md §11.8: the world's lines overflow the queue of a client that reads nothing;
    // when it reads again, after the close, it finds the reason as its last line before EOF.
    let dir = tempfile::tempdir().unwrap();
    let unlimited = [
        "--creates-per-player",
        "0",
        "--creates-per-address",
        "0",
        "--quota",
        "1000",
        "--max-line",
        "4096",
    ];
    let server = Server::start(&store(&dir), &unlimited);
    let mut merlin = server.login("merlin");
    let mut sleeper = server.login("sleeper");
    // Its own schedules tell it a 3,000-byte line every second, 400 of them: it pastes them and
    // reads nothing, so their firings fill its kernel buffers and then its queue.
    let text = "x".repeat(3_000);
    let mut writer = sleeper.stream.try_clone().unwrap();
    let paste = std::thread::spawn(move || {
        let lines = format!("every 1 tell {text}\n").repeat(400);
        let _ = writer.write_all(lines.as_bytes()); // the server may close before it is all read
    });
    let deadline = Instant::now() + PATIENCE * 2;
    while merlin.ask("who").contains("sleeper") {
        assert!(Instant::now() < deadline, "the sleeper was never dropped");
        std::thread::sleep(Duration::from_millis(100));
    }
    // It comes back to read only a while after it was dropped (longer than the server once
    // waited for a closing connection), and reads to the end.
    std::thread::sleep(Duration::from_secs(2));
    let deadline = Instant::now() + PATIENCE;
    let (mut last, mut firings) = (None, 0);
    while let Some(line) = sleeper.line(deadline) {
        firings += usize::from(line.starts_with("[#"));
        last = Some(line);
    }
    paste.join().unwrap();
    assert!(firings > 0, "it had firings waiting");
    assert_eq!(
        last.as_deref(),
        Some("error: you stopped reading: 1000 lines waited for you; closing the connection"),
        "the reason is the last line before EOF"
    );
    // The others were not touched.
    assert!(merlin.ask("who").starts_with("ok: 1 online: merlin"));
}

#[test]
fn a_store_deleted_while_serving_is_reported_and_new_schedules_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let mut merlin = server.login("merlin");
    let mut alice = server.login("alice");
    assert!(alice.ask("remind 600 before").starts_with("ok: schedule #"));
    std::fs::remove_file(store(&dir)).unwrap();
    let report = merlin.expect("[system] ");
    assert!(
        report.contains("world.db was deleted while serving; new schedules are refused"),
        "{report}"
    );
    let refused = alice.ask("remind 600 after");
    assert!(
        refused.starts_with("error: no new schedules: the store file ")
            && refused.ends_with("world.db was deleted while serving"),
        "{refused}"
    );
    // Its stop does not claim the store is committed: it fails.
    server.shutdown_failing(&mut merlin);
}

#[test]
fn a_store_truncated_while_serving_is_reported_and_the_server_keeps_running() {
    // docs/serve.md §12.4, §12.5: no file is memory-mapped where a truncation could raise
    // SIGBUS but the store's WAL index, so truncating the store and the world file is reported.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let mut merlin = server.login("merlin");
    let mut alice = server.login("alice");
    assert!(alice.ask("remind 600 before").starts_with("ok: schedule #"));
    let world = dir.path().join("world.db.world");
    assert!(world.exists() && dir.path().join("world.db.world-wal").exists());
    assert!(
        !dir.path().join("world.db.world-shm").exists(),
        "the world file's WAL index is kept in memory, not mapped from a file"
    );
    for file in [&store(&dir), &world] {
        std::fs::OpenOptions::new()
            .write(true)
            .open(file)
            .unwrap()
            .set_len(0)
            .unwrap();
    }
    let report = merlin.expect("[system] ");
    assert!(
        report.contains("was truncated while serving")
            && report.contains("new schedules are refused"),
        "{report}"
    );
    let refused = alice.ask("remind 600 after");
    assert!(
        refused.starts_with("error: no new schedules: the store file ")
            && refused.contains("was truncated while serving"),
        "{refused}"
    );
    // The server is still up and serving everyone: players chat and list.
    assert!(alice.ask("who").starts_with("ok: 2 online"));
    assert_eq!(alice.ask("say still here"), "ok: said");
    merlin.expect("[say] alice says: still here");
    assert!(alice.ask("schedules").starts_with("ok: "));
    server.shutdown_failing(&mut merlin);
}

#[test]
fn a_replaced_wal_index_is_reported_and_the_server_keeps_running() {
    // docs/serve.md §12.1, §12.4: the store's `-shm` is the one file still mapped. Replaced by
    // another file (a copy renamed over it), the server keeps the old one mapped, so it runs
    // on; the watch names the file, and new schedules are refused.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let mut merlin = server.login("merlin");
    let mut alice = server.login("alice");
    assert!(alice.ask("remind 600 before").starts_with("ok: schedule #"));
    let shm = dir.path().join("world.db-shm");
    let copy = dir.path().join("copy-shm");
    std::fs::copy(&shm, &copy).unwrap();
    std::fs::rename(&copy, &shm).unwrap();
    let report = merlin.expect("[system] ");
    assert!(
        report.contains("world.db-shm was replaced while serving"),
        "{report}"
    );
    let refused = alice.ask("remind 600 after");
    assert!(
        refused.starts_with("error: no new schedules: ") && refused.contains("world.db-shm"),
        "{refused}"
    );
    assert!(alice.ask("who").starts_with("ok: 2 online"));
    server.shutdown_failing(&mut merlin);
}

/// The device and inode of `path`, by `stat`: the test never opens a file `SQLite` owns either.
#[cfg(unix)]
fn identity(path: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt as _;
    let meta =
        std::fs::metadata(path).unwrap_or_else(|e| panic!("{} is gone: {e}", path.display()));
    (meta.dev(), meta.ino())
}

#[cfg(unix)]
#[test]
fn an_operator_writing_beside_a_running_server_deletes_and_resets_nothing() {
    // docs/serve.md §12.7: the watch once opened and closed the store's files every second,
    // which dropped the server's SQLite locks; the operator's connection then took itself for
    // the last one and deleted the WAL the server was still writing into.
    let dir = tempfile::tempdir().unwrap();
    let db = store(&dir);
    let started = Instant::now();
    let server = Server::start(&db, &[]);
    let mut merlin = server.login("merlin");
    let mut alice = server.login("alice");
    let kept = id_of(&alice.ask("every 600 tell kept"));
    let stopped = id_of(&alice.ask("every 900 tell stopped"));
    let files = ["", "-wal", "-shm"].map(|suffix| {
        let mut name = db.clone().into_os_string();
        name.push(suffix);
        PathBuf::from(name)
    });
    let before = files.each_ref().map(|file| identity(file));
    let db_arg = db.to_str().unwrap();
    let operator = |args: &[&str]| {
        let mut all = vec!["schedules", "--db", db_arg];
        all.extend_from_slice(args);
        let out = run::tickstep(&all);
        assert!(out.status.success(), "{all:?}: {}", stderr(&out));
        for (file, before) in files.iter().zip(before) {
            assert_eq!(
                identity(file),
                before,
                "{all:?} replaced {}",
                file.display()
            );
        }
    };
    let kept_id = kept.to_string();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    // One point of the 600 s cadence lies in the last 1,000 s.
    operator(&[
        "backfill",
        &kept_id,
        &(now - 1000).to_string(),
        &(now - 1).to_string(),
    ]);
    // Rounds of every action until the watch has looked at least twice since the start: the old
    // watch's first look dropped the locks, and the next operator connection deleted the WAL.
    let mut rounds = 0;
    while rounds < 2 || started.elapsed() < Duration::from_millis(2500) {
        operator(&["pause", &kept_id, "--note", "checking"]);
        operator(&["resume", &kept_id]);
        operator(&["trigger", &kept_id]);
        operator(&["list"]);
        rounds += 1;
        assert!(started.elapsed() < PATIENCE * 2, "bounded");
    }
    operator(&["stop", &stopped.to_string()]);
    // The server noticed nothing wrong: new schedules are taken, no wizard was warned (a
    // warning would have come before the reply to merlin's `who`).
    let more = alice.ask("every 1200 tell after");
    assert!(more.starts_with("ok: schedule #"), "{more}");
    assert!(merlin.ask("who").starts_with("ok: 2 online"));
    assert!(
        !merlin.seen.iter().any(|line| line.starts_with("[system]")),
        "{:?}",
        merlin.seen
    );
    drop((merlin, alice));
    server.shutdown();
    // Everything is where a restart finds it.
    let listed = run::tickstep(&["schedules", "--db", db_arg, "list", "--json"]);
    let listed = run::stdout(&listed);
    let ids: Vec<u64> = serde_json::from_str::<serde_json::Value>(&listed)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["id"].as_u64().unwrap())
        .collect();
    assert!(ids.contains(&kept) && !ids.contains(&stopped), "{ids:?}");
    assert_eq!(ids.len(), 2, "{listed}");
}

/// Runs `tickstep serve` that must fail at start; what it printed on stderr.
fn failed_start(args: &[&str]) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tickstep"))
        .arg("serve")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + PATIENCE;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server started although it should not have");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    stderr(&out)
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_failed_start_leaves_no_files_behind() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(&dir);
    let db = db.to_str().unwrap();
    // The port is taken.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let said = failed_start(&["--listen", &addr, "--db", db]);
    assert!(said.contains("cannot listen on"), "{said}");
    assert!(
        files_in(dir.path()).is_empty(),
        "{:?}",
        files_in(dir.path())
    );
    // The store is not a store: the world file the start made is removed again, the file that
    // was there is left as it was.
    std::fs::write(dir.path().join("world.db"), vec![b'x'; 8192]).unwrap();
    let said = failed_start(&["--listen", "127.0.0.1:0", "--db", db]);
    assert!(!said.is_empty());
    assert_eq!(files_in(dir.path()), ["world.db"]);
    assert_eq!(
        std::fs::read(dir.path().join("world.db")).unwrap(),
        vec![b'x'; 8192]
    );
}

#[test]
fn replies_name_what_the_player_typed_and_do_not_leak_which_ids_exist() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(&dir), &[]);
    let mut alice = server.login("alice");
    let mut bob = server.login("bob");
    let mut merlin = server.login("merlin");

    assert_eq!(alice.ask(""), "ok: nothing to do (type help)");
    assert_eq!(
        alice.ask("remind 1e20 x"),
        "error: \"1e20\" is not a delay in seconds from 0 to 3153600000 (100 years)"
    );
    assert_eq!(
        alice.ask("every 1e-300 say x"),
        "error: every needs at least 1 s between firings (got 1e-300)"
    );

    // Another's schedule and a missing one read the same to a player; the wizard sees which.
    let hers = id_of(&alice.ask("every 60 tell private"));
    let missing = hers + 1_000;
    for command in ["info", "stop"] {
        assert_eq!(
            bob.ask(&format!("{command} {hers}")),
            format!("error: you have no schedule #{hers}")
        );
        assert_eq!(
            bob.ask(&format!("{command} {missing}")),
            format!("error: you have no schedule #{missing}")
        );
        assert!(
            merlin
                .ask(&format!("{command} {missing}"))
                .starts_with(&format!("error: there is no schedule #{missing}"))
        );
    }
    assert!(merlin.ask(&format!("info {hers}")).contains("owner alice"));

    // info shows every field of the record.
    let info = alice.ask(&format!("info {hers}"));
    assert!(
        info.starts_with(&format!("ok: #{hers} every 60 s tell \"private\"")),
        "{info}"
    );
    let fields = alice.expect("  id=");
    for field in [" verb=", " interval=", " run_count=", " owner=", " key="] {
        assert!(fields.contains(field), "{field} in {fields}");
    }

    // stop of a one-shot that fired says so.
    let once = id_of(&alice.ask("remind 0 now"));
    alice.expect(&format!("[#{once}] now"));
    assert_eq!(
        alice.ask(&format!("stop {once}")),
        format!("ok: #{once} had already fired; its record is removed")
    );
    assert_eq!(alice.ask("schedules"), "ok: 1 live schedule");
}
