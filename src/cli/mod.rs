//! The command-line layer: parses arguments ([`args`]), calls one operation of [`crate::ops`] per
//! command (`commands`, one file per command, mirroring `flinkpipe <group> <command>`) and renders
//! its report ([`render`]). No business logic lives here.
//!
//! Exit codes: 0 success, 1 errors found in the input (diagnostics, unknown table, …), 2 usage errors,
//! 130 interrupted cleanly by SIGINT, SIGTERM or SIGHUP (a batch of writes finished or undone first; a
//! deploy that started nothing new and recorded its end; a decommission or rollback that journaled and
//! printed every statement it had acted on).

// The flags' doc comments are clap's help texts, where `<DIR>` and `<time>` are placeholders, not HTML.
#![allow(rustdoc::invalid_html_tags)]

pub mod args;
pub mod commands;
pub mod reference;
pub mod render;

use crate::diagnostics::Diagnostic;
use crate::ops::{self, OpsError};
use args::{Cli, GlobalArgs, OutputFormat};
use clap::Parser;
use std::path::Path;

/// An error that ends a command: printed on stderr; exit status 1, or 2 for a usage error (arguments
/// that do not make sense, as clap's own errors).
#[derive(Debug)]
pub struct Failure {
    /// The message, without the `error: ` prefix.
    pub message: String,
    /// Exit with status 2 instead of 1.
    pub usage: bool,
    /// Print the message as it is, without `error: ` (the errors were reported above it).
    pub plain: bool,
    /// Interrupted by SIGINT: exit with status 130 (128 + SIGINT, what a shell reports).
    pub interrupted: bool,
}

impl Failure {
    /// An error in the input or the environment (exit status 1).
    pub fn new(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            usage: false,
            plain: false,
            interrupted: false,
        }
    }

    /// A usage error (exit status 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            usage: true,
            plain: false,
            interrupted: false,
        }
    }

    /// A decommission or rollback ended by a signal (exit status 130): `acted` of `total`
    /// `what` (`statement(s)`, `green statement(s)`) were `verb`-ed, each recorded in the release
    /// journal of `pipelines`; the release stays open and the same command finishes the work.
    pub fn release_interrupted(
        which: ops::signals::Interrupt,
        acted: usize,
        total: usize,
        what: &str,
        verb: ops::statement::StatementVerb,
        pipelines: &Path,
    ) -> Self {
        Failure {
            message: format!(
                "interrupted ({}): {acted} of {total} {what} {}, each recorded in {}; the release stays open: run the same command again to finish",
                which.as_str(),
                verb.past(),
                ops::release_journal::path(pipelines).display()
            ),
            usage: false,
            plain: false,
            interrupted: true,
        }
    }
}

impl From<OpsError> for Failure {
    fn from(e: OpsError) -> Self {
        Failure {
            message: e.to_string(),
            usage: e.is_usage(),
            plain: e.is_reported(),
            interrupted: e.is_interrupted(),
        }
    }
}

/// Result of a command: `Ok(true)` success, `Ok(false)` problems were reported (exit 1).
pub type CmdResult = Result<bool, Failure>;

/// What every command gets: the operations context (configuration lookup, console) and the output
/// format.
pub struct Invocation<'a> {
    pub ctx: ops::Context<'a>,
    pub global: &'a GlobalArgs,
}

impl Invocation<'_> {
    /// `--output json`.
    pub fn json(&self) -> bool {
        self.global.output == OutputFormat::Json
    }
}

/// The console of the command line: diagnostics and warnings on stderr, each diagnostic with a snippet
/// of its source line.
pub struct Stderr;

impl ops::Console for Stderr {
    fn diagnostics(&self, diagnostics: &[Diagnostic], base: Option<&Path>) {
        render::print_diagnostics_in(diagnostics, base);
    }
    fn warn(&self, message: &str) {
        eprintln!("{message}");
    }
    fn note(&self, message: &str) {
        eprintln!("{message}");
    }
}

/// Commands run inside a project without DIR and without `$PIPELINES` use that project
/// ([`crate::project::discover_pipelines`]): `$PIPELINES` is set to it for the argument parser, so
/// every command's DIR default (and the project's `config.yaml` beside it) follows. Called first,
/// before any thread starts.
fn find_project() {
    if crate::config::process_env("PIPELINES").is_some() || Path::new("pipelines").is_dir() {
        return;
    }
    let Some(found) = std::env::current_dir()
        .ok()
        .and_then(|cwd| crate::project::discover_pipelines(&cwd))
    else {
        return;
    };
    // SAFETY: no other thread exists yet (this runs first in `main`), so nothing reads the
    // environment concurrently.
    unsafe { std::env::set_var("PIPELINES", &found) };
}

/// Parses the process arguments, runs the command and returns the exit status.
pub fn main() -> i32 {
    find_project();
    restore_sigpipe();
    exit_cleanly_when_output_fails();
    // Deeply nested or very long SQL (20,000 UNION ALL branches) recurses deep in the parser; the scan parses
    // on rayon's worker threads, whose default stack is 2 MiB. 64 MiB of address space each is reserved,
    // not committed.
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(64 << 20)
        .build_global();
    let cli = match Cli::try_parse_from(args::negated_flags(args::version_config_alias(
        std::env::args_os().collect(),
    ))) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    init_logging(cli.global.verbose);
    match run(&cli) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(Failure {
            message,
            usage,
            plain,
            interrupted,
        }) => {
            if plain {
                eprintln!("{message}");
            } else {
                eprintln!("error: {message}");
            }
            match (interrupted, usage) {
                (true, _) => 130,
                (false, true) => 2,
                (false, false) => 1,
            }
        }
    }
}

/// Runs a parsed command line.
pub fn run(cli: &Cli) -> CmdResult {
    let inv = Invocation {
        ctx: ops::Context::new(cli.global.config.clone(), &Stderr),
        global: &cli.global,
    };
    commands::run(&inv, &cli.command)
}

/// `flinkpipe … | head` must end quietly when the reader goes away, as Unix tools do, instead of
/// panicking on `EPIPE` in `println!`: restore the default SIGPIPE action that Rust's runtime ignores.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called once at start-up, before any thread exists; SIG_DFL is a valid handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// `print!` panics when standard output cannot be written (a full disk, a closed file): report it as an
/// error and exit 1 instead of a panic and its backtrace. Every other panic keeps the default report.
fn exit_cleanly_when_output_fails() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if let Some(cause) = message.strip_prefix("failed printing to stdout: ") {
            eprintln!("error: cannot write the output: {cause}");
            std::process::exit(1);
        }
        default(info);
    }));
}

fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("FLINKPIPE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    // Colours only on a terminal: logs piped to a file or CI stay plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .without_time()
        .try_init();
}
