//! `version [--config]`: the version, and the effective configuration with secrets masked.

use super::target::TargetKind;
use super::{Context, OpsError};

/// The flinkpipe version (`CARGO_PKG_VERSION`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The effective configuration.
#[derive(Debug, Clone)]
pub struct ShownConfig {
    /// The file it came from, or `built-in defaults`.
    pub source: String,
    /// The configuration as YAML, secrets masked as `****`.
    pub yaml: String,
    /// Statement-name prefix in effect (`dev-usw2`).
    pub statement_prefix: String,
    /// The region used in statement names.
    pub region: String,
    /// The target the configuration selects.
    pub target: TargetKind,
}

/// The effective configuration (file and environment overrides), secrets masked: the one every
/// command on `pipelines` uses ([`Context::project_config`]: `--config`, `$SL_CONFIG_FILE`,
/// `$CONFIG_FILE`, `./config.yaml`, else the project's `config.yaml` beside `pipelines`).
///
/// Errors: an unreadable or invalid configuration file.
pub fn show_config(ctx: &Context, pipelines: &std::path::Path) -> Result<ShownConfig, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    let yaml = cfg.effective_yaml()?;
    Ok(ShownConfig {
        source: cfg
            .source
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "built-in defaults".into()),
        yaml,
        statement_prefix: crate::plan::StatementNaming::from_config(&cfg).prefix,
        region: cfg.region().to_string(),
        target: TargetKind::of(&cfg),
    })
}
