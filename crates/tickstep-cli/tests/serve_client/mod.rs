//! A real `tickstep serve` process on an ephemeral loopback port, and a client that speaks to it
//! over TCP as a netcat user would. Every wait is bounded (a deadline per expected line, a bound on
//! each process); tests assert what was said, never how long it took.
#![allow(dead_code)]

pub(crate) mod tmux;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// The longest any single expected line may take to arrive.
pub(crate) const PATIENCE: Duration = Duration::from_secs(15);

/// A child process whose stdout is read line by line on a thread of its own and whose stderr is
/// kept (and passed on to the test's own), so a test can say what it printed on either.
pub(crate) struct Printing {
    pub(crate) child: Child,
    /// Its stdout's lines as they come.
    pub(crate) lines: mpsc::Receiver<String>,
    stderr: Arc<Mutex<Vec<String>>>,
    stderr_reader: Option<std::thread::JoinHandle<()>>,
}

/// How a process ended: its exit status, the lines of its stdout not taken before, and every
/// line of its stderr.
pub(crate) struct Ended {
    pub(crate) status: ExitStatus,
    pub(crate) rest: Vec<String>,
    pub(crate) stderr: Vec<String>,
}

/// Starts `command` with its stdout read line by line and its stderr kept.
pub(crate) fn spawn_printing(command: &mut Command) -> Printing {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the tickstep binary starts");
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&stderr);
    let from = child.stderr.take().unwrap();
    let stderr_reader = std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            eprintln!("{line}");
            kept.lock().unwrap().push(line);
        }
    });
    Printing {
        child,
        lines,
        stderr,
        stderr_reader: Some(stderr_reader),
    }
}

impl Printing {
    /// The next line it prints that starts with `prefix` (skipping others).
    pub(crate) fn printed(&self, prefix: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("the process never printed {prefix:?}"));
            if line.starts_with(prefix) {
                return line;
            }
        }
    }

    /// What it has printed on stderr so far.
    pub(crate) fn stderr(&self) -> Vec<String> {
        self.stderr.lock().unwrap().clone()
    }

    /// Sends it the signal `name` (`-TERM`, `-INT`, …) with `kill`, as an operator would.
    pub(crate) fn signal(&self, name: &str) {
        let sent = Command::new("kill")
            .args([name, &self.child.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(sent, "kill {name} {}", self.child.id());
    }

    /// Waits (bounded) for it to exit, then reads what it printed to the end.
    pub(crate) fn wait_exit(&mut self) -> Ended {
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the process did not exit within {PATIENCE:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut rest = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(PATIENCE) {
            rest.push(line);
        }
        if let Some(reader) = self.stderr_reader.take() {
            reader.join().expect("the stderr reader");
        }
        Ended {
            status,
            rest,
            stderr: self.stderr(),
        }
    }
}

impl Drop for Printing {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A running server; killed when dropped (a clean stop goes through the wizard's `shutdown`).
pub(crate) struct Server {
    /// The process, its further lines on stdout and its stderr.
    pub(crate) process: Printing,
    pub(crate) addr: String,
}

/// The password the tests give `name` (the wizard's comes from the environment).
pub(crate) fn password_of(name: &str) -> String {
    format!("{name}-secret")
}

impl Server {
    /// Starts a server whose wizard is merlin, with merlin's password in the environment; the
    /// tests' players all connect from one address, so names per address are not capped unless
    /// `extra` says so.
    pub(crate) fn start(db: &Path, extra: &[&str]) -> Server {
        Server::start_with(db, extra, Some(&password_of("merlin")))
    }

    /// [`Server::start`], with `wizard_password` as `TICKSTEP_WIZARD_PASSWORD` (or none).
    pub(crate) fn start_with(db: &Path, extra: &[&str], wizard_password: Option<&str>) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tickstep"));
        command
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--wizard",
                "merlin",
                "--db",
            ])
            .arg(db)
            .args(extra);
        if !extra.contains(&"--names-per-address") {
            command.args(["--names-per-address", "0"]);
        }
        command.env_remove("TICKSTEP_WIZARD_PASSWORD");
        if let Some(password) = wizard_password {
            command.env("TICKSTEP_WIZARD_PASSWORD", password);
        }
        let process = spawn_printing(&mut command);
        let first = process
            .lines
            .recv_timeout(PATIENCE)
            .expect("the server prints its address");
        let addr = first
            .strip_prefix("tickstep serve: listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
            .to_owned();
        Server { process, addr }
    }

    /// The HTTP side's `HOST:PORT` (`--http`), from what the server printed at start.
    pub(crate) fn http_addr(&self) -> String {
        self.printed("tickstep serve: browsers on http://")
            .trim_start_matches("tickstep serve: browsers on http://")
            .trim_end_matches('/')
            .to_owned()
    }

    /// The next line the server prints that starts with `prefix` (skipping others).
    pub(crate) fn printed(&self, prefix: &str) -> String {
        self.process.printed(prefix)
    }

    pub(crate) fn connect(&self) -> Client {
        let stream = TcpStream::connect(&self.addr).expect("the server accepts");
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut client = Client {
            stream,
            pending: Vec::new(),
            seen: Vec::new(),
        };
        client.expect("hello:");
        client
    }

    /// Logs `name` in with [`password_of`] (creating the account the first time).
    pub(crate) fn login(&self, name: &str) -> Client {
        let mut client = self.connect();
        client.log_in(name, &password_of(name));
        client
    }

    /// The wizard's clean stop; the process must exit successfully.
    pub(crate) fn shutdown(mut self) {
        let mut wizard = self.login("merlin");
        wizard.send("shutdown");
        wizard.expect("ok: shutting down");
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.process.child.try_wait().unwrap() {
                assert!(status.success(), "the server exited with {status}");
                return;
            }
            assert!(Instant::now() < deadline, "the server did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Server {
    /// Stops it with SIGTERM, as a service manager would: how it exited, and the lines it printed
    /// that were not read yet.
    #[cfg(unix)]
    pub(crate) fn terminate(self) -> (std::process::ExitStatus, Vec<String>) {
        self.stop_by("-TERM")
    }

    /// Stops it with `signal` (`-TERM`, `-INT`, `-HUP`): how it exited, and the lines it printed
    /// that were not read yet.
    #[cfg(unix)]
    pub(crate) fn stop_by(mut self, signal: &str) -> (std::process::ExitStatus, Vec<String>) {
        self.process.signal(signal);
        let ended = self.process.wait_exit();
        (ended.status, ended.rest)
    }

    /// A wizard's `shutdown` of a server that found its store lost: it must exit with a failure
    /// status of its own, not claim the store is committed (docs/serve.md §12.2), and not be
    /// ended by a signal.
    pub(crate) fn shutdown_failing(mut self, wizard: &mut Client) {
        wizard.send("shutdown");
        wizard.expect("ok: shutting down");
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.process.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "the server did not stop");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(!status.success(), "a lost store is not a clean stop");
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt as _;
            assert_eq!(status.signal(), None, "it exited; no signal ended it");
        }
    }
}

pub(crate) struct Client {
    pub(crate) stream: TcpStream,
    pending: Vec<u8>,
    /// Every line received, for failure messages.
    pub(crate) seen: Vec<String>,
}

impl Client {
    /// Types `name` and `password` at the prompts and expects the welcome.
    pub(crate) fn log_in(&mut self, name: &str, password: &str) {
        self.send(name);
        self.expect("password: ");
        self.send(password);
        self.expect(&format!("ok: welcome, {name}"));
    }

    /// Types `name` and `password` and returns the reply after the password (`ok:` or `error:`).
    pub(crate) fn try_log_in(&mut self, name: &str, password: &str) -> String {
        self.send(name);
        self.expect("password: ");
        self.ask(password)
    }

    pub(crate) fn send(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes());
    }

    pub(crate) fn send_bytes(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("the server reads");
    }

    /// The next line, or `None` once the server has closed the connection.
    pub(crate) fn line(&mut self, deadline: Instant) -> Option<String> {
        loop {
            if let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                let line = String::from_utf8_lossy(&without_offers(&line[..end])).into_owned();
                self.seen.push(line.clone());
                return Some(line);
            }
            assert!(
                Instant::now() < deadline,
                "no complete line in time; saw {:#?}",
                self.seen
            );
            let mut chunk = [0u8; 4096];
            match self.stream.read(&mut chunk) {
                Ok(0) => return None,
                Ok(n) => self.pending.extend_from_slice(&chunk[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => return None, // reset by the server
            }
        }
    }

    /// Skips lines until one starts with `prefix`, and returns it.
    pub(crate) fn expect(&mut self, prefix: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.line(deadline) {
                Some(line) if line.starts_with(prefix) => return line,
                Some(_) => {}
                None => panic!("closed before {prefix:?}; saw {:#?}", self.seen),
            }
        }
    }

    /// Says `quit` and waits until the server has closed the connection (so the player is
    /// logged out before the next step).
    pub(crate) fn quit(mut self) {
        assert_eq!(self.ask("quit"), "ok: bye");
        self.expect_closed();
    }

    /// Asserts the server closes the connection (after any lines).
    pub(crate) fn expect_closed(&mut self) {
        let deadline = Instant::now() + PATIENCE;
        while self.line(deadline).is_some() {}
    }

    /// Sends a command and returns its reply (the first `ok:` or `error:` line).
    pub(crate) fn ask(&mut self, line: &str) -> String {
        self.send(line);
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.line(deadline) {
                Some(reply) if reply.starts_with("ok:") || reply.starts_with("error:") => {
                    return reply;
                }
                Some(_) => {}
                None => panic!("closed before a reply to {line:?}; saw {:#?}", self.seen),
            }
        }
    }
}

/// A line as a raw-line client reads it: the server's telnet commands (its offers at connect,
/// docs/serve.md §8.1; GA or EOR after a burst, docs/serve.md §8.8; the password's ECHO switch,
/// docs/serve.md §8.5; GMCP, docs/serve.md §8.6) and the CR of its CRLF taken out.
fn without_offers(line: &[u8]) -> Vec<u8> {
    let mut kept = Vec::with_capacity(line.len());
    let mut bytes = line.iter().peekable();
    while let Some(&b) = bytes.next() {
        if b != 0xff {
            kept.push(b);
            continue;
        }
        match bytes.next() {
            // WILL, WONT, DO, DONT: the verb and its option.
            Some(251..=254) => {
                bytes.next();
            }
            // A sub-negotiation (GMCP): to its IAC SE.
            Some(250) => {
                while let Some(&b) = bytes.next() {
                    if b == 0xff && bytes.peek() == Some(&&240) {
                        bytes.next();
                        break;
                    }
                }
            }
            Some(255) => kept.push(255),
            // GA, EOR and the other two-byte commands (the password's ECHO switch may follow
            // a GA at the start of a line).
            _ => {}
        }
    }
    if kept.last() == Some(&b'\r') {
        kept.pop();
    }
    kept
}

/// The schedule id in a reply such as `ok: schedule #7 reminds you in 1 s`.
pub(crate) fn id_of(reply: &str) -> u64 {
    let digits: String = reply
        .split('#')
        .nth(1)
        .unwrap_or_else(|| panic!("no id in {reply:?}"))
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap()
}

/// Runs a client program to its end within `limit`, killing it past that, and returns what it
/// printed: a real client must not hang a test.
#[allow(dead_code)] // not every test binary that includes this module runs a program
pub(crate) fn run_bounded(command: &mut Command, limit: Duration) -> std::process::Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the client starts");
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Whether `probe` succeeds; if not, the test is skipped, or fails under `CI`.
#[allow(dead_code)] // not every test binary that includes this module needs a client program
pub(crate) fn available(what: &str, probe: &mut Command) -> bool {
    let ok = probe
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "{what} is missing under CI (.ci/run installs it)"
        );
        eprintln!("skipped: {what} is not installed");
    }
    ok
}
