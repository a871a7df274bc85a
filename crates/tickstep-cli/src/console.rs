//! What every subcommand says to the person at the terminal, outside its own output format: a
//! line on stdout that a closed pipe cannot turn into a panic, and a usage error that exits the way
//! clap's own do.

use clap::CommandFactory as _;

/// Prints one line to stdout. A closed pipe (`tickstep ... | head`) is not an error worth a
/// panic: the line is dropped and the command goes on to its clean shutdown.
pub(crate) fn say(line: impl std::fmt::Display) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// Exits with a usage error (code 2, like every argument clap rejects) for a rule that spans
/// several arguments.
pub(crate) fn usage_error(message: &str) -> ! {
    crate::Cli::command()
        .error(clap::error::ErrorKind::ValueValidation, message)
        .exit()
}
