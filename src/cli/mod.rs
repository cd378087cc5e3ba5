//! The command-line layer: parses arguments, calls the library, renders results. No business logic
//! lives here; each command group is a small file.
//!
//! Exit codes: 0 success, 1 errors found in the input (diagnostics, unknown table, …), 2 usage errors.

pub mod args;
mod deploy;
mod pipeline;
mod project;
mod render;
mod scaffold;
mod sql;
mod table;
mod versioning;

use crate::config::Config;
use crate::diagnostics::Diagnostic;
use crate::lineage::{self, LoadOptions, Project};
use args::{Cli, Command, GlobalArgs, OutputFormat};
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
}

impl Failure {
    /// An error in the input or the environment (exit status 1).
    pub fn new(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            usage: false,
        }
    }

    /// A usage error (exit status 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            usage: true,
        }
    }
}

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::new(e.to_string())
    }
}

/// Result of a command: `Ok(true)` success, `Ok(false)` input errors were reported (exit 1).
pub type CmdResult = Result<bool, Failure>;

/// Parses the process arguments, runs the command and returns the exit status.
pub fn main() -> i32 {
    restore_sigpipe();
    exit_cleanly_when_output_fails();
    // Deeply nested or very long SQL (20,000 UNION ALL branches) recurses deep in the parser; the scan parses
    // on rayon's worker threads, whose default stack is 2 MiB. 64 MiB of address space each is reserved,
    // not committed.
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(64 << 20)
        .build_global();
    let cli = match Cli::try_parse_from(scaffold::version_config_alias(
        std::env::args_os().collect(),
    )) {
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
        Err(Failure { message, usage }) => {
            eprintln!("error: {message}");
            if usage { 2 } else { 1 }
        }
    }
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

/// Runs a parsed command line.
pub fn run(cli: &Cli) -> CmdResult {
    match &cli.command {
        Command::Sql(c) => sql::run(&cli.global, c),
        Command::Statement(c) => deploy::statement(&cli.global, c),
        Command::Table(c) => table::run(&cli.global, c),
        Command::Pipeline(c) => pipeline::run(&cli.global, c),
        Command::Project(c) => project::run(&cli.global, c),
        Command::Version(a) => scaffold::version(&cli.global, a),
        Command::Completions { shell } => scaffold::completions(*shell),
        Command::Man(a) => scaffold::man(a),
    }
}

/// Loads the configuration named by the global options (or the defaults), reporting unknown keys (once
/// per process, however many times a command asks for the configuration).
pub(crate) fn load_config(global: &GlobalArgs) -> Result<Config, Failure> {
    static REPORTED: std::sync::Once = std::sync::Once::new();
    let path = Config::locate(global.config.as_deref());
    let cfg = Config::load(path.as_deref())?.with_env(super::cli::deploy::env_lookup);
    let mut unknown: &[String] = &[];
    REPORTED.call_once(|| unknown = &cfg.unknown_keys);
    for k in unknown {
        eprintln!(
            "warning[config]: {}: unknown key '{k}' ignored",
            cfg.source
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        );
    }
    Ok(cfg)
}

/// Loads the project, prints its diagnostics on stderr and returns it.
pub(crate) fn load_project(
    global: &GlobalArgs,
    dir: &Path,
    allow_unknown: bool,
) -> Result<Project, Failure> {
    let cfg = load_config(global)?;
    let project = lineage::load(dir, &cfg, LoadOptions { allow_unknown })?;
    print_diagnostics_in(&project.diagnostics, scaffold::source_base(dir).as_deref());
    Ok(project)
}

/// Prints diagnostics on stderr, one per line with a closing count, each followed by a snippet of its source line
/// (file paths are relative to `base`, the pipelines folder's parent; files that cannot be read get none).
pub(crate) fn print_diagnostics_in(diags: &[Diagnostic], base: Option<&Path>) {
    let mut cache: std::collections::HashMap<&str, Option<String>> = Default::default();
    for d in diags {
        let source = match (&d.file, base, d.line) {
            (Some(f), Some(b), Some(_)) => cache
                .entry(f.as_str())
                .or_insert_with(|| std::fs::read_to_string(b.join(f)).ok())
                .as_deref(),
            _ => None,
        };
        eprintln!("{}", d.render(source));
    }
    let errors = diags.iter().filter(|d| d.is_error()).count();
    if errors > 0 {
        eprintln!("{errors} error(s), {} warning(s)", diags.len() - errors);
    }
}

/// Prints a value as pretty JSON on stdout.
pub(crate) fn print_json<T: serde::Serialize>(value: &T) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).expect("plain data serialises")
    );
}

pub(crate) fn is_json(global: &GlobalArgs) -> bool {
    global.output == OutputFormat::Json
}
