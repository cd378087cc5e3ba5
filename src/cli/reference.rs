//! The command reference in markdown, generated from the clap definitions of [`super::args`]: the
//! book's `docs/src/reference/commands.md` is this text, and a test (`tests/testsuite/docs.rs`) fails
//! when the file is stale (`UPDATE_DOCS=1 cargo test --test testsuite docs::` rewrites it).

use super::args::Cli;
use clap::{Arg, ArgAction, Command, CommandFactory};
use std::fmt::Write;

/// The whole command tree as markdown: one `##`-level section per command, depth first in the order
/// clap lists them (the order of the definitions), each with its description (`long_about`, else
/// `about`), its usage line and one bullet per argument (flags, value name, help, default, possible
/// values, environment variable). Global options are listed once, on `flinkpipe`; clap's own `help`
/// subcommand and `--help`/`--version` flags are left out. Deterministic: the same definitions always give the same bytes;
/// terminal width plays no part. Hidden commands and arguments are left out, as in `--help`.
pub fn markdown() -> String {
    let mut root = Cli::command().term_width(0);
    root.build();
    let mut out = String::new();
    out.push_str("# Command reference\n\n");
    out.push_str(
        "<!-- Generated from the clap definitions (src/cli/args.rs, src/cli/commands/) by \
         flinkpipe::cli::reference::markdown(); do not edit. Regenerate with \
         `UPDATE_DOCS=1 cargo test --test testsuite docs::`. -->\n\n",
    );
    out.push_str(
        "Every command with its options, as `--help` shows them. The hand-written overview, with \
         exit statuses and what each command writes, is the [command table](command-table.md).\n\n",
    );
    let mut path = Vec::new();
    section(&root, &mut path, &mut out);
    out
}

fn section(cmd: &Command, path: &mut Vec<String>, out: &mut String) {
    path.push(cmd.get_name().to_string());
    let title = path.join(" ");
    let _ = writeln!(out, "## `{title}`\n");
    let about = cmd
        .get_long_about()
        .or(cmd.get_about())
        .map(|s| s.to_string());
    if let Some(about) = about {
        let _ = writeln!(out, "{}\n", prose(about.trim()));
    }
    // Built, each subcommand's usage already names its whole path (`flinkpipe pipeline deploy …`).
    let mut usage_cmd = cmd.clone();
    let usage = usage_cmd.render_usage().to_string();
    let usage = usage.trim().trim_start_matches("Usage:").trim().to_string();
    let _ = writeln!(out, "```text\n{usage}\n```\n");
    let args: Vec<&Arg> = cmd
        .get_arguments()
        // Global options are listed once, on `flinkpipe` itself.
        .filter(|a| !a.is_hide_set() && !is_builtin(a) && (path.len() == 1 || !a.is_global_set()))
        .collect();
    if !args.is_empty() {
        for a in args {
            let _ = writeln!(out, "- {}", argument(a));
        }
        out.push('\n');
    }
    let subs: Vec<&Command> = cmd
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .collect();
    if !subs.is_empty() {
        out.push_str("Subcommands:\n\n");
        for s in &subs {
            let about = s.get_about().map(|a| a.to_string()).unwrap_or_default();
            let anchor = format!("{title} {}", s.get_name());
            let _ = writeln!(
                out,
                "- [`{}`](#{}){}",
                s.get_name(),
                slug(&anchor),
                if about.is_empty() {
                    String::new()
                } else {
                    format!(": {}", prose(&first_line(&about)))
                }
            );
        }
        out.push('\n');
        for s in subs {
            section(s, path, out);
        }
    }
    path.pop();
}

/// `--help` and `--version` are clap's own, the same on every command.
fn is_builtin(a: &Arg) -> bool {
    matches!(a.get_id().as_str(), "help" | "version")
}

fn argument(a: &Arg) -> String {
    let takes_value = matches!(a.get_action(), ArgAction::Set | ArgAction::Append);
    let value = a
        .get_value_names()
        .map(|v| {
            v.iter()
                .map(|n| format!("<{n}>"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| format!("<{}>", a.get_id().as_str().to_uppercase()));
    let mut names = Vec::new();
    if let Some(s) = a.get_short() {
        names.push(format!("-{s}"));
    }
    if let Some(l) = a.get_long() {
        names.push(format!("--{l}"));
    }
    let head = if names.is_empty() {
        // Positional.
        let repeat = if matches!(a.get_action(), ArgAction::Append) {
            "..."
        } else {
            ""
        };
        if a.is_required_set() {
            format!("`{value}{repeat}`")
        } else {
            format!("`[{value}]{repeat}`")
        }
    } else if takes_value {
        format!("`{} {value}`", names.join(", "))
    } else {
        format!("`{}`", names.join(", "))
    };
    let mut text = head;
    let help = a.get_long_help().or(a.get_help()).map(|h| h.to_string());
    if let Some(help) = help {
        let _ = write!(text, ": {}", prose(&one_paragraph(&help)));
    }
    let mut notes = Vec::new();
    if a.is_required_set() && !names.is_empty() {
        notes.push("required".to_string());
    }
    if a.is_global_set() {
        notes.push("global".to_string());
    }
    let defaults: Vec<String> = a
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if takes_value && !defaults.is_empty() {
        notes.push(format!("default `{}`", defaults.join(",")));
    }
    let possible: Vec<String> = a
        .get_possible_values()
        .iter()
        .filter(|p| !p.is_hide_set())
        .map(|p| format!("`{}`", p.get_name()))
        .collect();
    if takes_value && !possible.is_empty() {
        notes.push(format!("one of {}", possible.join(", ")));
    }
    if let Some(env) = a.get_env() {
        notes.push(format!("env `{}`", env.to_string_lossy()));
    }
    if !notes.is_empty() {
        let _ = write!(text, " ({})", notes.join("; "));
    }
    text
}

/// A help text as markdown prose: the `<PLACEHOLDER>`s clap's texts use (`<DIR>/<table>_lineage.json`)
/// are escaped outside code spans, so that a markdown renderer shows them instead of reading HTML.
fn prose(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_code = false;
    for c in s.chars() {
        match c {
            '`' => {
                in_code = !in_code;
                out.push(c);
            }
            '<' if !in_code => out.push_str("&lt;"),
            '>' if !in_code => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").trim().to_string()
}

/// Help texts on one markdown line: clap keeps the doc comment's line breaks in long help.
fn one_paragraph(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// GitHub's and mdBook's heading anchor: lower case, punctuation dropped, spaces to `-`.
fn slug(title: &str) -> String {
    title
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_has_a_section_and_the_text_is_stable() {
        let md = markdown();
        assert_eq!(md, markdown());
        fn walk(c: &Command, path: &mut Vec<String>, md: &str) {
            path.push(c.get_name().to_string());
            if !c.is_hide_set() && c.get_name() != "help" {
                let h = format!("## `{}`\n", path.join(" "));
                assert!(md.contains(&h), "missing {h}");
            }
            for s in c.get_subcommands() {
                walk(s, path, md);
            }
            path.pop();
        }
        walk(&Cli::command(), &mut Vec::new(), &md);
        assert!(md.contains("`--output <FORMAT>`") || md.contains("`--output <OUTPUT>`"));
    }

    #[test]
    fn placeholders_outside_code_are_escaped() {
        assert_eq!(
            prose("written as <DIR>/<table>.json; `a <b>` stays"),
            "written as &lt;DIR&gt;/&lt;table&gt;.json; `a <b>` stays"
        );
    }

    #[test]
    fn anchors_follow_heading_slugs() {
        assert_eq!(slug("`flinkpipe table init`"), "flinkpipe-table-init");
    }
}
