//! A terminal program run in tmux, its screen read with `capture-pane`: how the tests see what a
//! person at a terminal would. Every wait is bounded by [`PATIENCE`].

use std::process::Command;
use std::time::{Duration, Instant};

use super::PATIENCE;

/// A tmux server of the test's own (its own socket) with one session, killed when dropped.
pub(crate) struct Tmux {
    socket: String,
}

/// The one session's name.
const SESSION: &str = "t";

impl Tmux {
    /// Starts `command` (run by tmux's shell) in a `width` × `height` pane, on a socket named
    /// after `name` and this process.
    pub(crate) fn start(name: &str, width: u16, height: u16, command: &str) -> Tmux {
        let tmux = Tmux {
            socket: format!("tickstep-{name}-{}", std::process::id()),
        };
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            SESSION,
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            command,
        ]);
        tmux
    }

    pub(crate) fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub(crate) fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", SESSION])
    }

    /// Waits until the screen shows `text`, and returns the screen.
    pub(crate) fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "the screen never showed {text:?}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types `keys` as they are (`send-keys -l`), without Enter.
    pub(crate) fn type_keys(&self, keys: &str) {
        self.run(&["send-keys", "-t", SESSION, "-l", keys]);
    }

    pub(crate) fn type_line(&self, line: &str) {
        self.type_keys(line);
        self.run(&["send-keys", "-t", SESSION, "Enter"]);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}
