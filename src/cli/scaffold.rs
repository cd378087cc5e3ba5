//! `flinkpipe project init`, `table init`, `table validate-table-names`, and the everyday commands around
//! the command line itself: `version`, `completions`, `man`.

use super::args::{
    Cli, GlobalArgs, ManArgs, ProjectInitArgs, ProjectTypeArg, TableInitArgs, VersionArgs,
};
use super::{CmdResult, Failure, is_json, load_config, print_json};
use crate::config::Config;
use crate::project::{Layout, scan};
use crate::scaffold::{self, ProjectInit, ProjectType, TableInit, naming};
use clap::CommandFactory;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub(super) fn project_init(global: &GlobalArgs, args: &ProjectInitArgs) -> CmdResult {
    let project_type = match args.project_type {
        ProjectTypeArg::Kimball => ProjectType::Kimball,
        ProjectTypeArg::DataProduct => ProjectType::DataProduct,
    };
    let products = if args.products.is_empty() && project_type == ProjectType::DataProduct {
        vec![scaffold::DEFAULT_PRODUCT.to_string()]
    } else {
        args.products.clone()
    };
    let created = scaffold::init_project(&ProjectInit {
        name: args.name.clone(),
        parent: args.path.clone(),
        project_type,
        products,
    })?;
    print_created(global, None, &created);
    Ok(true)
}

pub(super) fn table_init(global: &GlobalArgs, args: &TableInitArgs) -> CmdResult {
    let cfg = project_config(global, &args.pipelines)?;
    let t = scaffold::init_table(
        &TableInit {
            pipelines: args.pipelines.clone(),
            name: args.name.clone(),
            layer: args.layer.clone(),
            product: args.product.clone(),
            sources: args.sources.clone(),
        },
        &cfg,
    )?;
    print_created(global, Some(&t.naming.table), &t.created);
    Ok(true)
}

/// The configuration for a command on a project: the global lookup, else `<project root>/config.yaml`.
fn project_config(global: &GlobalArgs, pipelines: &Path) -> Result<Config, Failure> {
    let cfg = load_config(global)?;
    if cfg.source.is_some() {
        return Ok(cfg);
    }
    let beside = pipelines
        .parent()
        .map(|p| p.join("config.yaml"))
        .filter(|p| p.is_file());
    match beside {
        Some(p) => Ok(load_config(&GlobalArgs {
            config: Some(p),
            ..global.clone()
        })?),
        None => Ok(cfg),
    }
}

fn print_created(global: &GlobalArgs, table: Option<&str>, c: &scaffold::Created) {
    if is_json(global) {
        print_json(&serde_json::json!({
            "table_name": table,
            "root": c.root.display().to_string(),
            "files": c.files,
        }));
        return;
    }
    match table {
        Some(t) => println!("created table {t} in {}", c.root.display()),
        None => println!("created project {}", c.root.display()),
    }
    for f in &c.files {
        println!("  {f}");
    }
}

pub(super) fn validate_table_names(global: &GlobalArgs, dir: &Path) -> CmdResult {
    let cfg = project_config(global, dir)?;
    let scanned = scan(dir, &Layout::with_overrides(&cfg.flinkpipe.layers))?;
    let findings = naming::lint(&scanned, &naming::Convention::from_config(&cfg));
    if is_json(global) {
        print_json(&findings);
    } else {
        super::print_diagnostics_in(&findings, source_base(dir).as_deref());
        if findings.is_empty() {
            println!(
                "ok: {} table folders follow the naming convention",
                scanned.folders.len()
            );
        }
    }
    Ok(findings.is_empty())
}

/// The folder that diagnostic file paths (`pipelines/…`) are relative to: the pipelines folder's parent.
pub(super) fn source_base(pipelines: &Path) -> Option<PathBuf> {
    pipelines
        .canonicalize()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
}

pub(super) fn version(global: &GlobalArgs, args: &VersionArgs) -> CmdResult {
    let version = env!("CARGO_PKG_VERSION");
    if !args.show_config {
        if is_json(global) {
            print_json(&serde_json::json!({ "version": version }));
        } else {
            println!("flinkpipe {version}");
        }
        return Ok(true);
    }
    let cfg = load_config(global)?;
    let yaml = cfg.effective_yaml()?;
    let source = cfg
        .source
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "built-in defaults".into());
    if is_json(global) {
        let value: serde_json::Value = serde_yaml_ng::from_str(&yaml)?;
        print_json(&serde_json::json!({ "version": version, "source": source, "config": value }));
    } else {
        println!("# flinkpipe {version}, configuration from {source} (secrets masked)");
        let naming = crate::plan::StatementNaming::from_config(&cfg);
        println!(
            "# statement names: {}-<product>-<ddl|dml>-<table> (region {}; target: {})",
            naming.prefix,
            cfg.region(),
            if cfg.gateway_settings(&super::deploy::env_lookup).is_some() {
                "Apache Flink SQL Gateway"
            } else {
                "Confluent Cloud"
            }
        );
        print!("{yaml}");
    }
    Ok(true)
}

/// shift_left spells it `version --config`, but `--config FILE` is our global option: a `--config` after
/// `version` is read as `--show-config` (keeping a following FILE as the file to show).
pub(super) fn version_config_alias(args: Vec<OsString>) -> Vec<OsString> {
    let mut i = 1;
    while i < args.len() {
        let a = args[i].to_string_lossy();
        if a == "--config" || a == "--output" {
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    if args.get(i).is_none_or(|a| a != "version") {
        return args;
    }
    let mut out: Vec<OsString> = args[..=i].to_vec();
    // `--show-config` given explicitly (or once already): a `--config` is then only the global option.
    let mut shown = args[i + 1..].iter().any(|a| a == "--show-config");
    let mut show = |out: &mut Vec<OsString>| {
        if !shown {
            out.push("--show-config".into());
            shown = true;
        }
    };
    let mut rest = args[i + 1..].iter().peekable();
    while let Some(a) = rest.next() {
        let s = a.to_string_lossy();
        if s == "--config" {
            show(&mut out);
            if let Some(v) = rest.next_if(|v| !v.to_string_lossy().starts_with('-')) {
                out.push(a.clone());
                out.push(v.clone());
            }
        } else if s.starts_with("--config=") {
            show(&mut out);
            out.push(a.clone());
        } else {
            out.push(a.clone());
        }
    }
    out
}

pub(super) fn completions(shell: clap_complete::Shell) -> CmdResult {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "flinkpipe", &mut std::io::stdout());
    Ok(true)
}

pub(super) fn man(args: &ManArgs) -> CmdResult {
    let cmd = Cli::command();
    match &args.out {
        None => {
            clap_mangen::Man::new(cmd).render(&mut std::io::stdout())?;
        }
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            clap_mangen::generate_to(cmd, dir)?;
            let mut pages: Vec<String> = std::fs::read_dir(dir)?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("flinkpipe") && n.ends_with(".1"))
                .collect();
            pages.sort();
            println!("{} man pages written to {}", pages.len(), dir.display());
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alias(args: &[&str]) -> Vec<String> {
        version_config_alias(args.iter().map(OsString::from).collect())
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn version_config_is_show_config() {
        assert_eq!(
            alias(&["fp", "version", "--config"]),
            ["fp", "version", "--show-config"]
        );
        assert_eq!(
            alias(&["fp", "--output", "json", "version", "--config", "c.yaml"]),
            [
                "fp",
                "--output",
                "json",
                "version",
                "--show-config",
                "--config",
                "c.yaml"
            ]
        );
        assert_eq!(
            alias(&["fp", "version", "--config", "-v"]),
            ["fp", "version", "--show-config", "-v"]
        );
        // an explicit --show-config makes a following --config FILE the global option only
        assert_eq!(
            alias(&["fp", "version", "--show-config", "--config", "c.yaml"]),
            ["fp", "version", "--show-config", "--config", "c.yaml"]
        );
        // other commands keep their global --config FILE
        assert_eq!(
            alias(&["fp", "pipeline", "validate", "--config", "c.yaml"]),
            ["fp", "pipeline", "validate", "--config", "c.yaml"]
        );
        assert_eq!(
            alias(&["fp", "--config", "c.yaml", "version"]),
            ["fp", "--config", "c.yaml", "version"]
        );
    }
}
