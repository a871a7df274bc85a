//! The line protocol: what a player may type, parsed into a [`Request`], and the help text
//! (docs/serve.md §3).
//!
//! One command per line, words separated by spaces; the first word is the command (case
//! insensitive). Replies are lines starting `ok:` or `error:`; lines the world sends on its own
//! (firings, chat, the bell) start with `[`.

/// The help a connected player gets from `help`, and `tickstep serve --help` prints after the
/// options.
pub(crate) const HELP: &str = "\
Protocol (plain lines; netcat or telnet will do):
  first line             your name (1-24 letters, digits, '_' or '-'); one connection per name
  second line            your password; a new name chooses one (at least 6 characters)
  remind <seconds> <text>       tell me <text> in <seconds>
  every <seconds> <verb> [args] run <verb> every <seconds> (at least 1 s)
  at <unix-seconds> <verb> [args]  run <verb> once at that Unix time
  cron \"<expr>\" <zone> <verb> [args]  run <verb> at the times a cron expression names in
                         an IANA zone: cron \"0 9 * * MON-FRI\" Europe/London say stand-up
      verbs: tell <text> (to you), say <text> (to everyone), ring [priority] (the bell)
      policy words may come before the verb: every 60 overlap=cancel_other say hi
                         catchup=skip|once|all  catchup_window=<s>  overlap=skip|queue|
                         concurrent|cancel_other  max_faults=<n>  on_max_faults=retire|pause
                         remaining_runs=<n>
      ... as <name>      name it (1-64 letters, digits, '_', '-', '.' or ':'): a second
                         'as <name>' of the same schedule gets the first, creating nothing
  stop <id>              stop a schedule of yours (the wizard may stop anyone's)
  pause <id> [note]      pause a schedule of yours, keeping its cadence (note: why, shown by info)
  resume <id>            resume it; points missed meanwhile follow its catch-up rule
  trigger <id>           run a schedule of yours once now, leaving its cadence alone
  info <id>              a schedule's record (yours; the wizard may read anyone's)
  schedules              your live schedules (the wizard sees everyone's)
  who                    who is connected
  ping [word]            the server's clock as it answers: ok: pong [word] <Unix ns>
  say <text>             tell everyone connected
  ring [priority]        ring the shared bell for 3 s; a higher priority (0-9) cuts off a lower
                         one, an equal one takes over, a lower one is refused and told why
  help                   this text
  quit                   disconnect
  shutdown               (wizard) stop the server cleanly, committing the store
  stats                  (wizard) frame step times since the last stats, firings, schedules
  wizard <name>          (wizard) make a player a wizard
Replies start with 'ok:' or 'error:'; what the world sends by itself starts with '['.
Schedules are durable: they survive a restart with the same --db. A firing for a player who is
not connected waits in their mailbox, shown at their next login.";

/// The shortest interval `every` accepts from a player, a floor above the engine's 10 ms tick
/// (docs/serve.md §4.2).
pub(crate) const MIN_EVERY_SECONDS: f64 = 1.0;
/// The longest delay of `remind` and interval of `every`: 100 years of 365 days
/// (docs/serve.md §4.9).
pub(crate) const MAX_DELAY_SECONDS: f64 = 3_153_600_000.0;
/// The latest Unix time `at` accepts: the engine's last deadline (docs/schedules.md).
pub(crate) const MAX_UNIX_SECONDS: f64 = 18_446_744_073.0;
/// The highest bell priority.
pub(crate) const MAX_RING_PRIORITY: i32 = 9;

/// A verb a schedule may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WorldVerb {
    /// Tell the schedule's owner a text.
    Tell,
    /// Say a text to everyone connected.
    Say,
    /// Ring the bell at a priority.
    Ring,
}

impl WorldVerb {
    pub(crate) const ALL: [WorldVerb; 3] = [WorldVerb::Tell, WorldVerb::Say, WorldVerb::Ring];

    pub(crate) fn name(self) -> &'static str {
        match self {
            WorldVerb::Tell => "tell",
            WorldVerb::Say => "say",
            WorldVerb::Ring => "ring",
        }
    }

    fn parse(word: &str) -> Result<WorldVerb, ProtocolError> {
        WorldVerb::ALL
            .into_iter()
            .find(|v| v.name().eq_ignore_ascii_case(word))
            .ok_or_else(|| ProtocolError::UnknownVerb(word.to_owned()))
    }
}

/// What a schedule does when it fires.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Action {
    pub(crate) verb: WorldVerb,
    /// The text for tell/say, or the priority for ring, as typed.
    pub(crate) arg: String,
}

/// A number of seconds, and the word the player typed for it: replies quote the number as typed,
/// never as the float prints (`1e-300` stays `1e-300`, docs/serve.md §4.9).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Seconds {
    pub(crate) value: f64,
    /// The word as typed: only what `f64` parses (digits, a sign, a point, an exponent).
    pub(crate) typed: String,
}

/// A policy word, `name=value`, as typed before a schedule's verb (docs/serve.md §3.9); the
/// engine checks both when the schedule is made.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PolicyWord {
    pub(crate) name: String,
    pub(crate) value: String,
}

/// One parsed line of a logged-in player.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Request {
    Remind {
        seconds: Seconds,
        text: String,
    },
    Every {
        seconds: Seconds,
        action: Action,
        /// The schedule's key (`… as <name>`, docs/serve.md §3.6).
        key: Option<String>,
        /// Policy words before the verb (docs/serve.md §3.9).
        policies: Vec<PolicyWord>,
    },
    At {
        unix_seconds: Seconds,
        action: Action,
        key: Option<String>,
        policies: Vec<PolicyWord>,
    },
    /// A calendar schedule (docs/serve.md §3.8): checked by the engine, not here.
    Cron {
        expr: String,
        zone: String,
        action: Action,
        key: Option<String>,
        policies: Vec<PolicyWord>,
    },
    Stop(u64),
    /// Pause a schedule with a note (docs/serve.md §3.7).
    Pause {
        id: u64,
        note: String,
    },
    Resume(u64),
    Trigger(u64),
    Info(u64),
    Schedules,
    Who,
    Say(String),
    Ring(i32),
    Help,
    Quit,
    Shutdown,
    Stats,
    /// The server's clock as it answers, after the player's word (docs/serve.md §3.10).
    Ping(String),
    /// Make a player a wizard (a wizard's command).
    Wizard(String),
    /// An empty line: it gets a reply too (docs/serve.md §3.1).
    Nothing,
}

/// Every command word but `wizard` (the default wizard's name): none of them may be a player's
/// name (docs/serve.md §2.1).
const COMMANDS: [&str; 17] = [
    "remind",
    "every",
    "at",
    "cron",
    "stop",
    "info",
    "schedules",
    "who",
    "say",
    "ring",
    "help",
    "quit",
    "shutdown",
    "stats",
    "ping",
    "login",
    "password",
];

/// A line the server could not accept. Each names what was typed and the rule.
#[derive(Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ProtocolError {
    #[error("unknown command {0:?} (type help)")]
    UnknownCommand(String),
    #[error("{command} needs {what} (type help)")]
    Missing {
        command: &'static str,
        what: &'static str,
    },
    #[error("{value:?} is not {rule}")]
    BadNumber { value: String, rule: &'static str },
    #[error("unknown verb {0:?}: schedules may run tell, say or ring")]
    UnknownVerb(String),
    #[error("{command} policy word {word:?} is not name=value, as catchup_window=300 (type help)")]
    BadPolicy { command: &'static str, word: String },
    #[error("every needs at least {MIN_EVERY_SECONDS} s between firings (got {0})")]
    TooFrequent(String),
    #[error("a name is 1-24 letters, digits, '_' or '-' (got {0:?})")]
    BadName(String),
    #[error("{0:?} is a command, so it cannot be a name")]
    CommandName(String),
}

/// Checks a login name.
pub(crate) fn parse_name(line: &str) -> Result<String, ProtocolError> {
    let name = line.trim();
    let name = name.strip_prefix("login ").map_or(name, str::trim);
    let ok = (1..=24).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok && COMMANDS.iter().any(|c| c.eq_ignore_ascii_case(name)) {
        Err(ProtocolError::CommandName(name.to_owned()))
    } else if ok {
        Ok(name.to_owned())
    } else {
        Err(ProtocolError::BadName(name.chars().take(40).collect()))
    }
}

/// Parses one command line (already known to be UTF-8 and within the length cap).
pub(crate) fn parse(line: &str) -> Result<Request, ProtocolError> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(Request::Nothing);
    }
    let (command, rest) = split_word(line);
    let request = match command.to_ascii_lowercase().as_str() {
        "remind" => {
            let (seconds, text) = split_word(rest);
            let seconds = seconds_arg(
                "remind",
                seconds,
                "a delay in seconds from 0 to 3153600000 (100 years)",
                MAX_DELAY_SECONDS,
            )?;
            Request::Remind {
                seconds,
                text: required("remind", text, "a text after the seconds")?,
            }
        }
        "every" => {
            let (seconds, action) = split_word(rest);
            let typed = seconds;
            let seconds = seconds_arg(
                "every",
                seconds,
                "an interval in seconds up to 3153600000 (100 years)",
                MAX_DELAY_SECONDS,
            )?;
            if seconds.value < MIN_EVERY_SECONDS {
                return Err(ProtocolError::TooFrequent(typed.chars().take(40).collect()));
            }
            let (policies, action) = policy_words("every", action)?;
            let (action, key) = key_suffix("every", action)?;
            Request::Every {
                seconds,
                action: action_arg("every", action)?,
                key,
                policies,
            }
        }
        "at" => {
            let (when, action) = split_word(rest);
            let unix_seconds = seconds_arg(
                "at",
                when,
                "a Unix time in seconds from 0 to 18446744073 (July 2554)",
                MAX_UNIX_SECONDS,
            )?;
            let (policies, action) = policy_words("at", action)?;
            let (action, key) = key_suffix("at", action)?;
            Request::At {
                unix_seconds,
                action: action_arg("at", action)?,
                key,
                policies,
            }
        }
        "cron" => {
            let (expr, rest) = cron_expr(rest)?;
            let (zone, action) = split_word(rest);
            let zone = required("cron", zone, "an IANA time zone after the expression")?;
            let (policies, action) = policy_words("cron", action)?;
            let (action, key) = key_suffix("cron", action)?;
            Request::Cron {
                expr,
                zone,
                action: action_arg("cron", action)?,
                key,
                policies,
            }
        }
        "stop" => Request::Stop(id_arg("stop", rest)?),
        "pause" => {
            let (id, note) = split_word(rest);
            Request::Pause {
                id: id_arg("pause", id)?,
                note: note.to_owned(),
            }
        }
        "resume" => Request::Resume(id_arg("resume", rest)?),
        "trigger" => Request::Trigger(id_arg("trigger", rest)?),
        "info" => Request::Info(id_arg("info", rest)?),
        "schedules" => Request::Schedules,
        "who" => Request::Who,
        "say" => Request::Say(required("say", rest, "a text")?),
        "ring" => Request::Ring(priority_arg(rest)?),
        "help" => Request::Help,
        "quit" => Request::Quit,
        "shutdown" => Request::Shutdown,
        "stats" => Request::Stats,
        "ping" => Request::Ping(rest.chars().take(40).collect()),
        "wizard" => Request::Wizard(parse_name(rest)?),
        _ => {
            return Err(ProtocolError::UnknownCommand(
                command.chars().take(40).collect(),
            ));
        }
    };
    Ok(request)
}

/// A cron expression in double quotes (it has spaces), or an unquoted `@alias`, and the rest
/// (docs/serve.md §3.8). What is inside the quotes is the engine's to check.
fn cron_expr(text: &str) -> Result<(String, &str), ProtocolError> {
    const WHAT: &str = "a cron expression in double quotes, e.g. \"0 * * * *\", or an @alias";
    let text = text.trim();
    if let Some(quoted) = text.strip_prefix('"') {
        return match quoted.split_once('"') {
            Some((expr, rest)) => Ok((expr.to_owned(), rest.trim())),
            None => Err(ProtocolError::Missing {
                command: "cron",
                what: "the closing double quote of the expression",
            }),
        };
    }
    let (word, rest) = split_word(text);
    if word.starts_with('@') {
        Ok((word.to_owned(), rest))
    } else {
        Err(ProtocolError::Missing {
            command: "cron",
            what: WHAT,
        })
    }
}

/// The first word and the rest (trimmed).
fn split_word(text: &str) -> (&str, &str) {
    let text = text.trim();
    match text.split_once(char::is_whitespace) {
        Some((word, rest)) => (word, rest.trim()),
        None => (text, ""),
    }
}

fn required(
    command: &'static str,
    text: &str,
    what: &'static str,
) -> Result<String, ProtocolError> {
    if text.is_empty() {
        Err(ProtocolError::Missing { command, what })
    } else {
        Ok(text.to_owned())
    }
}

fn seconds_arg(
    command: &'static str,
    word: &str,
    rule: &'static str,
    max: f64,
) -> Result<Seconds, ProtocolError> {
    if word.is_empty() {
        return Err(ProtocolError::Missing {
            command,
            what: rule,
        });
    }
    match word.parse::<f64>() {
        Ok(value) if value.is_finite() && (0.0..=max).contains(&value) => Ok(Seconds {
            value,
            typed: word.to_owned(),
        }),
        _ => Err(ProtocolError::BadNumber {
            value: word.chars().take(40).collect(),
            rule,
        }),
    }
}

fn id_arg(command: &'static str, word: &str) -> Result<u64, ProtocolError> {
    let word = word.trim();
    if word.is_empty() {
        return Err(ProtocolError::Missing {
            command,
            what: "a schedule id",
        });
    }
    word.trim_start_matches('#')
        .parse::<u64>()
        .ok()
        .filter(|&id| id > 0)
        .ok_or_else(|| ProtocolError::BadNumber {
            value: word.chars().take(40).collect(),
            rule: "a schedule id (a positive whole number)",
        })
}

fn priority_arg(word: &str) -> Result<i32, ProtocolError> {
    if word.is_empty() {
        return Ok(0);
    }
    word.parse::<i32>()
        .ok()
        .filter(|p| (0..=MAX_RING_PRIORITY).contains(p))
        .ok_or_else(|| ProtocolError::BadNumber {
            value: word.chars().take(40).collect(),
            rule: "a bell priority from 0 to 9",
        })
}

/// Splits a trailing `as <name>` off a schedule's action: the action, and the name, if any
/// (docs/serve.md §3.6). The name's rule is the engine's (checked when the schedule is made); a
/// text that should end in the words "as x" cannot, which the help says.
/// Peels the policy words (`name=value`, docs/serve.md §3.9) off the front of a schedule's
/// action: every word before the verb that holds a `=`.
fn policy_words<'a>(
    command: &'static str,
    mut text: &'a str,
) -> Result<(Vec<PolicyWord>, &'a str), ProtocolError> {
    let mut words = Vec::new();
    loop {
        let (word, rest) = split_word(text);
        let Some((name, value)) = word.split_once('=') else {
            return Ok((words, text));
        };
        if name.is_empty() || value.is_empty() {
            return Err(ProtocolError::BadPolicy {
                command,
                word: word.chars().take(40).collect(),
            });
        }
        words.push(PolicyWord {
            name: name.to_ascii_lowercase(),
            value: value.to_owned(),
        });
        text = rest;
    }
}

fn key_suffix<'a>(
    command: &'static str,
    text: &'a str,
) -> Result<(&'a str, Option<String>), ProtocolError> {
    let (head, last) = match text.rsplit_once(char::is_whitespace) {
        Some((head, last)) => (head.trim_end(), last),
        None => ("", text),
    };
    if last.eq_ignore_ascii_case("as") && !head.is_empty() {
        return Err(ProtocolError::Missing {
            command,
            what: "a name after 'as'",
        });
    }
    let (action, word) = match head.rsplit_once(char::is_whitespace) {
        Some((action, word)) => (action.trim_end(), word),
        None => ("", head),
    };
    if word.eq_ignore_ascii_case("as") {
        Ok((action, Some(last.to_owned())))
    } else {
        Ok((text, None))
    }
}

fn action_arg(command: &'static str, text: &str) -> Result<Action, ProtocolError> {
    let (verb, arg) = split_word(text);
    if verb.is_empty() {
        return Err(ProtocolError::Missing {
            command,
            what: "a verb (tell, say or ring)",
        });
    }
    let verb = WorldVerb::parse(verb)?;
    match verb {
        WorldVerb::Tell | WorldVerb::Say => required(command, arg, "a text for the verb")?,
        WorldVerb::Ring => priority_arg(arg)?.to_string(),
    };
    Ok(Action {
        verb,
        arg: if verb == WorldVerb::Ring && arg.is_empty() {
            "0".to_owned()
        } else {
            arg.to_owned()
        },
    })
}

#[cfg(test)]
mod tests;
