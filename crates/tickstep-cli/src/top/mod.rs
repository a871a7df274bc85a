//! `tickstep top --http ADDR`: the dashboard's live view (docs/serve.md §13.6) in a terminal,
//! attached to a running `tickstep serve --http` over its server-sent events (docs/serve.md §14).
//!
//! * [`sse`] — a small HTTP/1.1 client for one event stream over a `TcpStream`, every buffer
//!   bounded;
//! * [`snapshot`] — the dashboard's snapshot type, read tolerantly, and the recent frames for the
//!   chart;
//! * [`screen`] — the ratatui picture.
//!
//! A reader thread turns events into snapshots and hands them over a channel; the main thread
//! draws and reads keys, so `q` answers at once however quiet the stream. When the stream ends —
//! the server gone, an answer that is garbage or over a bound — `top` restores the terminal,
//! says why and exits non-zero; it does not reconnect (docs/serve.md §14.2).

mod screen;
mod snapshot;
mod sse;

use std::io::IsTerminal;
use std::sync::mpsc;
use std::time::Duration;

use ratatui::DefaultTerminal;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};

use snapshot::History;
use sse::EventStream;
use tickstep::dashboard::LiveSnapshot;

/// `text` with control and bidi characters as visible escapes (docs/serve.md §11.1), as serve
/// shows one player's text to another: the one place `top` makes a server's strings safe for the
/// terminal.
fn visible(text: &str) -> String {
    tickstep_host::shown(text).into_owned()
}

/// `tickstep top` (docs/serve.md §14).
#[derive(clap::Args, Debug)]
pub(crate) struct TopArgs {
    /// The HTTP side of a running `tickstep serve --http ADDR` (also as serve prints it,
    /// `http://127.0.0.1:8080/`).
    #[arg(long, value_name = "ADDR")]
    http: String,
    /// Print N snapshots as plain `key=value` lines and exit, instead of the live view (for
    /// scripts; needs no terminal).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    frames: Option<u64>,
}

pub(crate) fn run(args: &TopArgs) -> Result<(), String> {
    let mut stream = EventStream::open(&args.http).map_err(|e| e.to_string())?;
    if let Some(count) = args.frames {
        for seen in 0..count {
            let snapshot = next_snapshot(&mut stream).map_err(|e| after(seen, &e))?;
            crate::console::say(snapshot::line(&snapshot));
        }
        return Ok(());
    }
    if !std::io::stdout().is_terminal() {
        return Err("top's live view needs a terminal; --frames N prints plain lines".into());
    }
    let (send, snapshots) = mpsc::channel();
    std::thread::spawn(move || {
        loop {
            let next = next_snapshot(&mut stream);
            let failed = next.is_err();
            if send.send(next).is_err() || failed {
                return;
            }
        }
    });
    // ratatui's init restores the terminal on a panic too (its panic hook).
    let mut terminal =
        ratatui::try_init().map_err(|e| format!("cannot start the live view: {e}"))?;
    let result = drive(&mut terminal, &snapshots, &args.http);
    ratatui::restore();
    result
}

/// The next event, as a snapshot.
fn next_snapshot(stream: &mut EventStream<std::net::TcpStream>) -> Result<LiveSnapshot, String> {
    let data = stream.next_event().map_err(|e| e.to_string())?;
    snapshot::parse(&data)
}

/// An error, with how many snapshots came before it.
fn after(seen: u64, error: &str) -> String {
    format!("{error}, after {seen} snapshots")
}

/// How often keys are read while no snapshot comes.
const KEYS: Duration = Duration::from_millis(100);

fn drive(
    terminal: &mut DefaultTerminal,
    snapshots: &mpsc::Receiver<Result<LiveSnapshot, String>>,
    addr: &str,
) -> Result<(), String> {
    let mut history = History::default();
    let note = |history: &History| {
        if history.snapshots == 0 {
            " · waiting for the first".to_owned()
        } else {
            String::new()
        }
    };
    let mut changed = true;
    loop {
        loop {
            match snapshots.try_recv() {
                Ok(Ok(snapshot)) => {
                    history.push(snapshot);
                    changed = true;
                }
                Ok(Err(error)) => return Err(after(history.snapshots, &error)),
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    return Err(after(history.snapshots, "the stream's reader stopped"));
                }
            }
        }
        if changed {
            terminal
                .draw(|frame| screen::draw(frame, &history, addr, &note(&history)))
                .map_err(|e| e.to_string())?;
            changed = false;
        }
        if !event::poll(KEYS).map_err(|e| e.to_string())? {
            continue;
        }
        match event::read().map_err(|e| e.to_string())? {
            Event::Key(key)
                if key.kind == KeyEventKind::Press
                    && (matches!(key.code, KeyCode::Char('q') | KeyCode::Esc)
                        || (key.code == KeyCode::Char('c')
                            && key.modifiers.contains(KeyModifiers::CONTROL))) =>
            {
                return Ok(());
            }
            // A resized terminal is drawn again at once, not at the next snapshot.
            Event::Resize(..) => changed = true,
            _ => {}
        }
    }
}
