//! Project configuration: shift_left's `config.yaml` keys (so existing projects work unchanged) plus
//! flinkpipe's own `flinkpipe:` section.
//!
//! Lookup order ([`Config::locate`]): `--config FILE`, `$SL_CONFIG_FILE`, `$CONFIG_FILE`, `./config.yaml`;
//! with none of them, defaults apply. Unknown keys are reported as warnings, never fatal. Secrets are never
//! read from this file by the offline commands. Keys and lookup order follow shift_left 0.1.52's
//! `config.yaml` (<https://github.com/jbcodeforce/shift_left_utils>).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// An environment variable of this process, `None` when unset or empty: the `env` argument that
/// [`Config::with_env`], [`crate::target::settings::confluent`] and [`crate::target::settings::gateway`] take outside
/// tests.
pub fn process_env(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|s| !s.is_empty())
}

/// Errors while loading configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid config file {path}: {message}")]
    Parse { path: PathBuf, message: String },
    /// The YAML parser rejected the file, at `line`:`column` (1-based; where the parser gives no
    /// position, the place the message points at: the repeated key, the second document, the
    /// control character, the first alias).
    #[error("invalid config file {}:{line}:{column}: {message}", path.display())]
    ParseAt {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// Settings the deploy needs are absent from both the file and the environment: all of them are
    /// named at once, each with the variable that may supply it.
    #[error("{}", missing_text(settings, secrets, file, purpose))]
    Missing {
        /// Dotted keys with the environment variable that may supply each, e.g.
        /// `(confluent_cloud.environment_id, SL_FLINK_ENV_ID)`.
        settings: Vec<(&'static str, &'static str)>,
        /// Environment variables of secrets that are not set (secrets are never read from the file).
        secrets: Vec<String>,
        /// The config file (or `config.yaml` when none was found).
        file: String,
        /// What needs them, e.g. `use Confluent Cloud`.
        purpose: &'static str,
    },
    /// A secret is missing from the environment (secrets are never read from the file).
    #[error("{0}")]
    Secret(#[from] MissingSecret),
}

/// A missing environment variable, named (raised where a secret is read,
/// [`crate::target::secrets::Credentials::from_env_with`]).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("environment variable {0} is not set (secrets are read from the environment only)")]
pub struct MissingSecret(pub String);

/// `missing configuration: k in config.yaml (or environment variable V) is required to …` for one
/// setting; every setting and secret listed when several are missing.
fn missing_text(
    settings: &[(&'static str, &'static str)],
    secrets: &[String],
    file: &str,
    purpose: &str,
) -> String {
    match (settings, secrets) {
        ([(key, env)], []) => format!(
            "missing configuration: {key} in {file} (or environment variable {env}) is required to {purpose}"
        ),
        ([], [var]) => format!(
            "environment variable {var} is not set (secrets are read from the environment only); it is required to {purpose}"
        ),
        _ => {
            let mut parts: Vec<String> = settings
                .iter()
                .map(|(k, e)| format!("{k} (or environment variable {e})"))
                .collect();
            parts.extend(
                secrets
                    .iter()
                    .map(|v| format!("environment variable {v} (a secret: environment only)")),
            );
            format!(
                "missing configuration in {file}: {} are required to {purpose}",
                parts.join(", ")
            )
        }
    }
}

/// The effective configuration.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Config {
    pub kafka: KafkaConfig,
    pub confluent_cloud: ConfluentCloudConfig,
    pub flink: FlinkConfig,
    pub app: AppConfig,
    pub flinkpipe: FlinkpipeConfig,
    /// Where the configuration came from (`None`: built-in defaults).
    #[serde(skip)]
    pub source: Option<PathBuf>,
    /// Unknown keys found while loading, as dotted paths.
    #[serde(skip)]
    pub unknown_keys: Vec<String>,
}

/// `kafka.*`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default)]
pub struct KafkaConfig {
    /// First part of statement names (`dev`, `stage`, `prod`…). Default `dev`.
    pub cluster_type: String,
    #[serde(rename = "bootstrap.servers")]
    pub bootstrap_servers: Option<String>,
    pub cluster_id: Option<String>,
    pub src_topic_prefix: Option<String>,
}

impl Default for KafkaConfig {
    fn default() -> Self {
        KafkaConfig {
            cluster_type: "dev".into(),
            bootstrap_servers: None,
            cluster_id: None,
            src_topic_prefix: None,
        }
    }
}

/// `confluent_cloud.*`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct ConfluentCloudConfig {
    pub environment_id: Option<String>,
    pub organization_id: Option<String>,
    pub cloud_provider: Option<String>,
    /// The region of the Flink compute pools; used for statement-name prefixes (shift_left 0.1.52
    /// wrongly used `confluent_cloud.region`, default `us-west-2`,
    /// <https://github.com/jbcodeforce/shift_left_utils>).
    pub cloud_region: Option<String>,
    pub region: Option<String>,
    /// shift_left's other spelling of the cloud provider (its template's key): read as
    /// `cloud_provider` when that is not set, as shift_left does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    pub service_account_id: Option<String>,
    pub page_size: Option<u32>,
}

/// `flink.*`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct FlinkConfig {
    pub compute_pool_id: Option<String>,
    /// Default catalog (`sql.current-catalog`): stripped from 3-part names when resolving references.
    pub catalog_name: Option<String>,
    /// Default database (`sql.current-database`): stripped from 2- and 3-part names.
    pub database_name: Option<String>,
    pub max_cfu: Option<f64>,
    /// shift_left's key: the share of a compute pool's `max_cfu` a deploy may fill (default 0.8).
    pub max_cfu_percent_before_allocation: Option<f64>,
    pub poll_timer: Option<u64>,
    pub submission_timeout_seconds: Option<u64>,
    pub sql_endpoint: Option<String>,
    /// shift_left's other key for the Flink SQL REST endpoint: read as `sql_endpoint` when that is
    /// not set (shift_left: `$SL_FLINK_SQL_ENDPOINT`, then `flink.sql_endpoint`, then
    /// `flink.endpoint`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
}

/// `app.*`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct AppConfig {
    pub products: Vec<String>,
    pub accepted_common_products: Vec<String>,
    pub post_fix_unit_test: Option<String>,
    /// shift_left's suffix of integration-test tables (`_it` when unset).
    pub post_fix_integration_test: Option<String>,
    pub timezone: Option<String>,
    /// shift_left's SQL rewriting plugin (a Python class): refused where SQL is sent, with the
    /// equivalent `flinkpipe.sql_rewrites` rules ([`crate::deploy::env_sql`]).
    pub sql_content_modifier: Option<String>,
    /// shift_left's prefix of source table names (`src_`): `table init` names sources
    /// `<prefix><product>_<name>` and the naming lint expects it ([`crate::scaffold::naming`]).
    pub src_table_name_prefix: Option<String>,
}

/// `flinkpipe.*`: settings shift_left does not have.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct FlinkpipeConfig {
    /// Extra or overriding layer-folder mappings, folder name → table type
    /// (e.g. `staging: intermediate`). Merged over the defaults of [`crate::scan::layout`].
    pub layers: BTreeMap<String, String>,
    /// Statement-name prefix override; default `<kafka.cluster_type>-<region abbreviation>`.
    pub statement_prefix: Option<String>,
    /// Per-layer options of the naming convention ([`crate::scaffold::naming`]).
    pub naming: NamingConfig,
    /// The Apache Flink SQL Gateway target; when its `url` is set (or `FLINKPIPE_GATEWAY_URL`),
    /// deploy commands use it instead of Confluent Cloud.
    pub gateway: GatewayConfig,
    /// Unit tests (`table run-unit-tests`): where test tables live on a local Kafka broker, timeouts.
    pub unit_tests: UnitTestsConfig,
    /// Values of the template placeholders the SQL files use (`${env}`, `{{ env }}` → `dev`): names are
    /// resolved with them when the project is read, and the SQL sent to a target has them substituted.
    /// One value per name; environments keep their own `config.yaml` (as shift_left's
    /// `SL_CONFIG_FILE` per environment).
    pub sql_variables: BTreeMap<String, String>,
    /// Compute pool per table or product (table name or product name → `lfcp-…`), over
    /// `flink.compute_pool_id`; a table's entry wins over its product's.
    pub compute_pools: BTreeMap<String, String>,
    /// The environment whose `sql_rewrites` apply (`$FLINKPIPE_ENVIRONMENT` wins); default
    /// `kafka.cluster_type`.
    pub environment: Option<String>,
    /// Ordered SQL rewrite rules per environment ([`crate::deploy::env_sql`]).
    pub sql_rewrites: BTreeMap<String, Vec<RuleConfig>>,
    /// Confluent Cloud endpoints besides the Flink one ([`ConfluentExtraConfig`]).
    pub confluent: ConfluentExtraConfig,
    /// Tables (inventory names) that are deliberately fed by more than one statement (two jobs
    /// appending to one topic): the one-writer rule ([`crate::inventory::writers`]) accepts them. Every other
    /// table, and its storage (topic, path, JDBC table, index), has one writer.
    pub multi_writer_tables: Vec<String>,
    /// The products' declared sink tables (what other teams or applications read outside the
    /// project): `project assess-unused-tables` never offers them for deletion, running or not.
    pub sink_tables: Vec<String>,
}

/// `flinkpipe.confluent.*`: the control plane and Metrics API base URLs (tests and private networks
/// override them).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct ConfluentExtraConfig {
    /// Default `https://api.confluent.cloud` (`$FLINKPIPE_CLOUD_API_URL` wins).
    pub cloud_api_url: Option<String>,
    /// Default `https://api.telemetry.confluent.cloud` (`$FLINKPIPE_METRICS_URL` wins).
    pub metrics_url: Option<String>,
    /// The Kafka cluster's REST endpoint (`https://lkc-….confluent.cloud`) for `project list-topics`;
    /// default: derived from `kafka.bootstrap.servers` (`$FLINKPIPE_KAFKA_REST_URL` wins).
    pub kafka_rest_url: Option<String>,
}

/// `flinkpipe.unit_tests.*`: the unit-test runner's settings.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct UnitTestsConfig {
    /// The Kafka broker the gateway's Flink cluster reaches, where test tables keep their rows and
    /// whose topics flinkpipe creates and deletes (env `FLINKPIPE_KAFKA_BOOTSTRAP` wins); default
    /// `localhost:9092` (`scripts/local-flink.sh`). Not used on Confluent Cloud.
    pub kafka_bootstrap_servers: Option<String>,
    /// Longest wait for one statement of a test run, in seconds (default 300).
    pub timeout_seconds: Option<u64>,
}

/// `flinkpipe.gateway.*`: an Apache Flink SQL Gateway and its cluster's JobManager
/// (SQL Gateway REST:
/// <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql-gateway/rest/>;
/// JobManager REST:
/// <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/ops/rest_api/>).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct GatewayConfig {
    /// SQL Gateway REST URL, e.g. `http://127.0.0.1:8083` (env `FLINKPIPE_GATEWAY_URL` wins).
    pub url: Option<String>,
    /// JobManager REST URL, e.g. `http://127.0.0.1:8081` (env `FLINKPIPE_JOBMANAGER_URL` wins);
    /// default: the gateway's host on port 8081.
    pub jobmanager_url: Option<String>,
    /// Session properties sent when the gateway session opens (`execution.runtime-mode` defaults to
    /// `streaming`).
    pub session_properties: BTreeMap<String, String>,
    /// DDL files or folders of `*.sql` declaring tables the project reads but does not define
    /// (external tables); relative paths are relative to the configuration file.
    pub external_ddl: Vec<PathBuf>,
    /// Seconds a submitted statement may take to return its result (planning and job submission).
    /// Default 180.
    pub submit_timeout_seconds: Option<u64>,
}

/// `flinkpipe.naming.*`: per-layer overrides of the convention that `table init` follows and
/// `table validate-table-names` checks. Keys are layers or layer folders (`fact`, `facts`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct NamingConfig {
    /// `changelog.mode` per layer (default: upsert for sources/intermediates/seeds, retract otherwise).
    pub changelog_mode: BTreeMap<String, String>,
    /// `kafka.cleanup-policy` per layer (default: delete for sources/intermediates, compact otherwise).
    pub cleanup_policy: BTreeMap<String, String>,
}

const KNOWN: &[(&str, &[&str])] = &[
    (
        "kafka",
        &[
            "cluster_type",
            "bootstrap.servers",
            "cluster_id",
            "src_topic_prefix",
            "api_key",
            "api_secret",
            "sasl.username",
            "sasl.password",
            "security.protocol",
            "sasl.mechanisms",
            // shift_left's spelling (a Kafka client setting, deprecated there): no effect here.
            "sasl.mechanism",
            "session.timeout.ms",
            "pkafka_cluster",
            "reject_topics_prefixes",
        ],
    ),
    (
        "confluent_cloud",
        &[
            "environment_id",
            "organization_id",
            "cloud_provider",
            "cloud_region",
            "region",
            "service_account_id",
            "api_key",
            "api_secret",
            "page_size",
            "base_api",
            "glb_name",
            "url_scope",
            "provider",
        ],
    ),
    (
        "flink",
        &[
            "compute_pool_id",
            "catalog_name",
            "database_name",
            "api_key",
            "api_secret",
            "max_cfu",
            "max_cfu_percent_before_allocation",
            "poll_timer",
            "submission_timeout_seconds",
            "sql_endpoint",
            "flink_url",
            "endpoint",
            // shift_left's default "None", deprecated there and used by none of its commands.
            "statement_name_post_fix",
        ],
    ),
    (
        "app",
        &[
            "accepted_common_products",
            "products",
            "post_fix_unit_test",
            "post_fix_integration_test",
            "cache_ttl",
            "logging",
            "timezone",
            "sql_content_modifier",
            "dml_naming_convention_modifier",
            "compute_pool_naming_convention_modifier",
            "data_limit_where_condition",
            "data_limit_replace_from_reg_ex",
            "data_limit_table_type",
            "data_limit_column_name_to_select_from",
            "modified_flink_files_file_name",
            "default_PK",
            "delta_max_time_in_min",
            "translator_to_flink_sql_agent",
            "report_output_dir",
            "src_table_name_prefix",
        ],
    ),
    (
        "flinkpipe",
        &[
            "layers",
            "statement_prefix",
            "naming",
            "gateway",
            "unit_tests",
            "sql_variables",
            "compute_pools",
            "environment",
            "sql_rewrites",
            "confluent",
            "multi_writer_tables",
            "sink_tables",
        ],
    ),
    ("registry", &[]),
];

/// The known key closest to an unknown one (`flinkpipe.gatway` → `flinkpipe.gateway`, `flnk` →
/// `flink`), for a "did you mean" hint: within its section when the section is known, else among the
/// sections; `None` when nothing is close ([`crate::graph::closest`]).
pub fn closest_key(unknown: &str) -> Option<String> {
    if let Some((section, sub)) = unknown.split_once('.')
        && let Some((_, subkeys)) = KNOWN.iter().find(|(s, _)| *s == section)
    {
        return crate::diagnostics::closest(sub, subkeys.iter().copied())
            .map(|k| format!("{section}.{k}"));
    }
    crate::diagnostics::closest(unknown, KNOWN.iter().map(|(s, _)| *s))
}

impl Config {
    /// Finds the configuration file: `explicit`, else `$SL_CONFIG_FILE`, `$CONFIG_FILE`, `./config.yaml`.
    /// Returns `None` when no file exists (defaults apply); an explicit path that does not exist is kept so
    /// that loading reports it.
    pub fn locate(explicit: Option<&Path>) -> Option<PathBuf> {
        if let Some(p) = explicit {
            return Some(p.to_path_buf());
        }
        for var in ["SL_CONFIG_FILE", "CONFIG_FILE"] {
            if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
                return Some(PathBuf::from(v));
            }
        }
        let local = PathBuf::from("config.yaml");
        local.is_file().then_some(local)
    }

    /// Loads the configuration from `path`, or the defaults when `path` is `None`.
    ///
    /// Errors: unreadable file or invalid YAML (with the parser's line).
    pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
        let Some(path) = path else {
            return Ok(Config::default());
        };
        let text = crate::fsutil::read_data_file(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_yaml(&text, path)
    }

    /// Parses YAML text; `path` is used in messages only.
    pub fn from_yaml(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let perr = |e: serde_yaml_ng::Error| yaml_error(path, text, &e);
        let value: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).map_err(perr)?;
        let mut unknown = Vec::new();
        if let serde_yaml_ng::Value::Mapping(map) = &value {
            for (k, v) in map {
                let key = k.as_str().unwrap_or("?");
                match KNOWN.iter().find(|(s, _)| *s == key) {
                    None => unknown.push(key.to_string()),
                    Some((_, subkeys)) => {
                        if let (serde_yaml_ng::Value::Mapping(sub), false) = (v, subkeys.is_empty())
                        {
                            for sk in sub.keys() {
                                let sk = sk.as_str().unwrap_or("?");
                                if !subkeys.contains(&sk) {
                                    unknown.push(format!("{key}.{sk}"));
                                }
                            }
                        }
                    }
                }
            }
        }
        // Typed from the text, not from `value`: the error then has the key path and the line
        // (`flinkpipe.layers: invalid type: integer `5`, expected a map at line 2 column 11`).
        let mut cfg: Config = if value.is_null() {
            Config::default()
        } else {
            serde_yaml_ng::from_str(text).map_err(perr)?
        };
        for (folder, table_type) in &cfg.flinkpipe.layers {
            if !crate::scan::layout::TABLE_TYPES.contains(&table_type.as_str()) {
                return Err(ConfigError::Parse {
                    path: path.to_path_buf(),
                    message: format!(
                        "{}flinkpipe.layers.{folder}: '{table_type}' is not a table type (one of {})",
                        line_of_key(text, &format!("flinkpipe.layers.{folder}"))
                            .map(|l| format!("line {l}: "))
                            .unwrap_or_default(),
                        crate::scan::layout::TABLE_TYPES.join(", ")
                    ),
                });
            }
        }
        // shift_left's alternative keys, read with its meaning where flinkpipe's own is not set.
        if cfg.confluent_cloud.cloud_provider.is_none() {
            cfg.confluent_cloud.cloud_provider = cfg.confluent_cloud.provider.clone();
        }
        if cfg.flink.sql_endpoint.is_none() {
            cfg.flink.sql_endpoint = cfg.flink.endpoint.clone();
        }
        cfg.source = Some(path.to_path_buf());
        cfg.unknown_keys = unknown;
        Ok(cfg)
    }

    /// The line (1-based) of a dotted key (`flink.max_cfu_percent_before_allocation`) in the file the
    /// configuration was read from, for errors about a value that parsed but is not allowed; `None`
    /// for the defaults, an unreadable file or a key not written as a block mapping entry.
    pub fn line_of(&self, dotted: &str) -> Option<usize> {
        let text = crate::fsutil::read_data_file(self.source.as_ref()?).ok()?;
        line_of_key(&text, dotted)
    }

    /// The configuration file for messages (`config.yaml` when none was found).
    pub fn file_name(&self) -> String {
        self.source
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "config.yaml".into())
    }

    /// The configuration with the environment's non-secret overrides applied (shift_left's variables and
    /// flinkpipe's own), so that every consumer (statement names, endpoints, `version --config`) sees
    /// the same values: `SL_CLOUD_PROVIDER` → `confluent_cloud.cloud_provider`, `SL_CLOUD_REGION` →
    /// `confluent_cloud.cloud_region`, `SL_FLINK_ENV_ID` → `confluent_cloud.environment_id`,
    /// `SL_CLOUD_ORGANIZATION_ID` → `confluent_cloud.organization_id`, `SL_CONFLUENT_PRINCIPAL_ID` →
    /// `confluent_cloud.service_account_id`, `SL_FLINK_COMPUTE_POOL_ID` → `flink.compute_pool_id`,
    /// `SL_FLINK_ENV_NAME` → `flink.catalog_name`, `SL_FLINK_DATABASE_NAME` → `flink.database_name`,
    /// `SL_FLINK_SQL_ENDPOINT` → `flink.sql_endpoint`, `FLINKPIPE_GATEWAY_URL` →
    /// `flinkpipe.gateway.url`, `FLINKPIPE_JOBMANAGER_URL` → `flinkpipe.gateway.jobmanager_url`.
    /// Empty variables are ignored. Secrets (`SL_FLINK_API_KEY`, …) are never copied into the
    /// configuration: they are read where they are used.
    pub fn with_env(mut self, env: impl Fn(&str) -> Option<String>) -> Config {
        let set = |slot: &mut Option<String>, var: &str| {
            if let Some(v) = env(var).filter(|v| !v.is_empty()) {
                *slot = Some(v);
            }
        };
        let cc = &mut self.confluent_cloud;
        set(&mut cc.cloud_provider, "SL_CLOUD_PROVIDER");
        set(&mut cc.cloud_region, "SL_CLOUD_REGION");
        set(&mut cc.environment_id, "SL_FLINK_ENV_ID");
        set(&mut cc.organization_id, "SL_CLOUD_ORGANIZATION_ID");
        set(&mut cc.service_account_id, "SL_CONFLUENT_PRINCIPAL_ID");
        let f = &mut self.flink;
        set(&mut f.compute_pool_id, "SL_FLINK_COMPUTE_POOL_ID");
        set(&mut f.catalog_name, "SL_FLINK_ENV_NAME");
        set(&mut f.database_name, "SL_FLINK_DATABASE_NAME");
        set(&mut f.sql_endpoint, "SL_FLINK_SQL_ENDPOINT");
        let g = &mut self.flinkpipe.gateway;
        set(&mut g.url, "FLINKPIPE_GATEWAY_URL");
        set(&mut g.jobmanager_url, "FLINKPIPE_JOBMANAGER_URL");
        self
    }

    /// The region used in statement names: `confluent_cloud.cloud_region` (or `$SL_CLOUD_REGION` after
    /// [`with_env`](Self::with_env)), else `confluent_cloud.region`, else `us-west-2` (shift_left's
    /// default).
    pub fn region(&self) -> &str {
        self.confluent_cloud
            .cloud_region
            .as_deref()
            .or(self.confluent_cloud.region.as_deref())
            .unwrap_or("us-west-2")
    }
}

/// Key names whose values [`Config::effective_yaml`] masks (case-insensitive substring match).
pub const SECRET_KEYS: &[&str] = &[
    "api_key",
    "api_secret",
    "password",
    "token",
    "secret",
    "sasl.username",
];

/// What a masked value is printed as.
pub const MASK: &str = "****";

impl Config {
    /// The effective configuration as YAML: the defaults with the file's values over them (keys flinkpipe
    /// does not model, like `flink.api_key`, included) and the environment's non-secret overrides of
    /// [`with_env`](Self::with_env) when they were applied, every value under a key of [`SECRET_KEYS`]
    /// replaced by [`MASK`]. Secret variables are never read or printed.
    ///
    /// Errors: the source file cannot be read or parsed again.
    pub fn effective_yaml(&self) -> Result<String, ConfigError> {
        // The keys flinkpipe knows come from `self` (the file's values with the environment's
        // overrides, see `with_env`); the file adds the keys flinkpipe does not read.
        let known = serde_yaml_ng::to_value(self).expect("plain data serialises");
        let mut value = match &self.source {
            Some(path) => {
                let text =
                    crate::fsutil::read_data_file(path).map_err(|source| ConfigError::Read {
                        path: path.clone(),
                        source,
                    })?;
                serde_yaml_ng::from_str(&text).map_err(|e| yaml_error(path, &text, &e))?
            }
            None => serde_yaml_ng::Value::Null,
        };
        if value.is_mapping() {
            merge_yaml(&mut value, known);
        } else {
            value = known;
        }
        mask_secrets(&mut value, false);
        Ok(serde_yaml_ng::to_string(&value).expect("YAML values serialise"))
    }
}

/// Deep-merges `over` into `base`: mappings key by key, anything else replaced.
fn merge_yaml(base: &mut serde_yaml_ng::Value, over: serde_yaml_ng::Value) {
    use serde_yaml_ng::Value;
    match (base, over) {
        (Value::Mapping(b), Value::Mapping(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) => merge_yaml(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, o) => *b = o,
    }
}

/// Replaces every non-null value under a secret-looking key (or inside one) by [`MASK`].
fn mask_secrets(value: &mut serde_yaml_ng::Value, secret: bool) {
    use serde_yaml_ng::Value;
    match value {
        Value::Mapping(m) => {
            for (k, v) in m.iter_mut() {
                let key = k.as_str().unwrap_or("").to_ascii_lowercase();
                let s = secret || SECRET_KEYS.iter().any(|w| key.contains(w));
                mask_secrets(v, s);
            }
        }
        Value::Sequence(items) => items.iter_mut().for_each(|v| mask_secrets(v, secret)),
        Value::Null => {}
        v if secret => *v = Value::String(MASK.to_string()),
        Value::String(text) => {
            // Credentials inside a URL (`http://user:pass@host`): the user-info part is masked.
            if let Some((scheme, rest)) = text.split_once("://")
                && let Some((_, host)) = rest.split_once('@')
                && !rest[..rest.len() - host.len() - 1].contains('/')
            {
                *text = format!("{scheme}://{MASK}@{host}");
            }
        }
        _ => {}
    }
}

/// The line (1-based) of a dotted key in YAML text written as nested block mappings (`flink:` then
/// an indented `max_cfu_percent_before_allocation: …`). Comments and blank lines are skipped.
pub fn line_of_key(text: &str, dotted: &str) -> Option<usize> {
    let parts: Vec<&str> = dotted.split('.').collect();
    let mut depth = 0;
    // The indentation of the mapping that holds the key searched, and of its entries.
    let mut parent: Option<usize> = None;
    let mut entries: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = line.len() - trimmed.len();
        if parent.is_some_and(|p| indent <= p) {
            return None; // left the mapping without finding the key
        }
        if indent != *entries.get_or_insert(indent) {
            continue; // deeper: inside another entry
        }
        let key = trimmed
            .split_once(':')
            .map(|(k, _)| k.trim().trim_matches(['"', '\'']));
        if key == Some(parts[depth]) {
            if depth + 1 == parts.len() {
                return Some(i + 1);
            }
            parent = Some(indent);
            entries = None;
            depth += 1;
        }
    }
    None
}

/// A YAML error of the file at `path` whose text is `text`, always with a line and column: the
/// parser's, or — for the errors that come without one (a repeated key, a second document, a control
/// character, an alias bomb) — the place the message points at, else 1:1.
pub fn yaml_error(path: &Path, text: &str, e: &serde_yaml_ng::Error) -> ConfigError {
    let message = e.to_string();
    // Some errors come with the position of the enclosing node (1:1 for a repeated top-level key):
    // the place the message points at is better.
    let (line, column) = match (yaml_position(text, &message), e.location()) {
        (Some(p), _) => p,
        (None, Some(l)) => (l.line(), l.column()),
        (None, None) => (1, 1),
    };
    ConfigError::ParseAt {
        path: path.to_path_buf(),
        line,
        column,
        message,
    }
}

/// Where a YAML error without a location points (see [`yaml_error`]): 1-based line and column.
fn yaml_position(text: &str, message: &str) -> Option<(usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let at_line = |i: usize, l: &str| (i + 1, l.len() - l.trim_start().len() + 1);
    if let Some(rest) = message.strip_prefix("duplicate entry with key ") {
        // `duplicate entry with key "kafka"`: the second line declaring that key.
        let key = rest.trim().trim_matches('"');
        let declares = |l: &str| {
            let t = l.trim_start().trim_start_matches("- ");
            [
                format!("{key}:"),
                format!("\"{key}\":"),
                format!("'{key}':"),
            ]
            .iter()
            .any(|k| t.starts_with(k.as_str()))
        };
        return lines
            .iter()
            .enumerate()
            .filter(|(_, l)| declares(l))
            .nth(1)
            .map(|(i, l)| at_line(i, l));
    }
    if message.contains("more than one document") {
        // The separator that starts the second document.
        let mut content = false;
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim_end();
            if (t == "---" || t.starts_with("--- ")) && content {
                return Some((i + 1, 1));
            }
            if t == "..." && content {
                return Some((i + 1, 1));
            }
            if !t.is_empty() && !t.starts_with('#') && t != "---" {
                content = true;
            }
        }
        return None;
    }
    if message.contains("control characters are not allowed") {
        let (i, l) = lines
            .iter()
            .enumerate()
            .find(|(_, l)| l.chars().any(|c| c.is_control() && c != '\t' && c != '\r'))?;
        let col = l
            .chars()
            .position(|c| c.is_control() && c != '\t' && c != '\r')?;
        return Some((i + 1, col + 1));
    }
    if message.contains("repetition limit exceeded") || message.contains("recursion limit") {
        // The first alias (`*name`) outside quotes and comments.
        for (i, l) in lines.iter().enumerate() {
            let code = l.split(" #").next().unwrap_or(l);
            if let Some(c) = code.find('*').filter(|&c| {
                code[c + 1..].starts_with(|x: char| x.is_alphanumeric() || x == '_')
                    && code[..c].matches(['\'', '"']).count() % 2 == 0
            }) {
                return Some((i + 1, code[..c].chars().count() + 1));
            }
        }
        return None;
    }
    None
}

/// Where a rule applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleScope {
    /// The table part of names in table positions.
    TableNames,
    /// Values of `'key' = 'value'` options and of statement properties.
    OptionValues,
    /// The whole statement text.
    Statements,
}

impl RuleScope {
    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleScope::TableNames => "table_names",
            RuleScope::OptionValues => "option_values",
            RuleScope::Statements => "statements",
        }
    }
}

/// Which statements a rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleKind {
    Ddl,
    Dml,
}

/// One rule as written under `flinkpipe.sql_rewrites.<environment>`; checked and applied by
/// [`crate::deploy::env_sql`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleConfig {
    /// `table_names`, `option_values` or `statements`.
    #[serde(rename = "in")]
    pub scope: Option<RuleScope>,
    /// Text replaced wherever it occurs (exactly one of `literal` and `regex`).
    pub literal: Option<String>,
    /// A regular expression (Rust `regex` syntax); `replace` may use `$1`, `${name}`.
    pub regex: Option<String>,
    /// The replacement (may be empty).
    pub replace: Option<String>,
    /// `option_values` only: the option or property key whose values are rewritten.
    pub option: Option<String>,
    /// Only DDL or only DML statements (default: both).
    pub kind: Option<RuleKind>,
}

#[cfg(test)]
mod tests {
    /// Issue #29 item 6: every YAML error of the configuration names file:line:column, those the
    /// parser gives without a position too.
    #[test]
    fn every_yaml_error_has_a_line_and_column() {
        let path = std::path::Path::new("config.yaml");
        let bomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n";
        for (text, want) in [
            (
                "kafka:\n  cluster_type: dev\nflink:\n  compute_pool_id: p\nkafka:\n  cluster_type: prod\n",
                "invalid config file config.yaml:5:1: duplicate entry with key \"kafka\"",
            ),
            (
                "kafka:\n  cluster_type: dev\n---\nflink: {}\n",
                "invalid config file config.yaml:3:1: deserializing from YAML containing more than one document is not supported",
            ),
            (
                "kafka:\n  cluster_type: d\u{7}ev\n",
                "invalid config file config.yaml:2:18: control characters are not allowed",
            ),
            (
                bomb,
                "invalid config file config.yaml:2:8: repetition limit exceeded",
            ),
            ("kafka: [1\n", "invalid config file config.yaml:2:1: "),
        ] {
            let e = super::Config::from_yaml(text, path)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(want), "want {want}\ngot  {e}");
        }
    }

    #[test]
    fn lines_of_dotted_keys() {
        let text = "kafka:\n  flink: x\n# c\nflink:\n  compute_pool_id: p\n  nested:\n    max_cfu_percent_before_allocation: 2\n\n  max_cfu_percent_before_allocation: 1.5\nother: 1\n";
        assert_eq!(
            super::line_of_key(text, "flink.max_cfu_percent_before_allocation"),
            Some(9)
        );
        assert_eq!(super::line_of_key(text, "flink.missing"), None);
        assert_eq!(super::line_of_key(text, "other"), Some(10));
    }

    use super::*;

    #[test]
    fn reads_shift_left_keys_and_reports_unknown_ones() {
        let yaml = "kafka:\n  cluster_type: stage\n  bogus: 1\nconfluent_cloud:\n  cloud_region: eu-central-1\nflink:\n  catalog_name: env1\n  database_name: cluster1\napp:\n  products: [p1, p2]\nextra: true\n";
        let cfg = Config::from_yaml(yaml, Path::new("config.yaml")).unwrap();
        assert_eq!(cfg.kafka.cluster_type, "stage");
        assert_eq!(cfg.region(), "eu-central-1");
        assert_eq!(cfg.flink.catalog_name.as_deref(), Some("env1"));
        assert_eq!(cfg.app.products, vec!["p1", "p2"]);
        assert_eq!(cfg.unknown_keys, vec!["kafka.bogus", "extra"]);
    }

    #[test]
    fn invalid_yaml_names_the_file() {
        let err = Config::from_yaml("kafka: [", Path::new("cfg.yaml")).unwrap_err();
        assert!(
            err.to_string().starts_with("invalid config file cfg.yaml:"),
            "{err}"
        );
    }

    #[test]
    fn credentials_in_urls_are_masked() {
        let cfg = Config::default().with_env(|v| {
            (v == "FLINKPIPE_GATEWAY_URL").then(|| "http://bob:hunter2@gw:8083/v1".to_string())
        });
        let y = cfg.effective_yaml().unwrap();
        assert!(y.contains("url: http://****@gw:8083/v1"), "{y}");
        assert!(!y.contains("hunter2"), "{y}");
    }

    #[test]
    fn layer_mappings_must_name_a_table_type() {
        let p = Path::new("c.yaml");
        assert!(Config::from_yaml("flinkpipe:\n  layers:\n    bronze: source\n", p).is_ok());
        // A value of the wrong type names its key and line.
        let err = Config::from_yaml("kafka: {}\nflinkpipe:\n  layers: 5\n", p)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("flinkpipe.layers") && err.contains("line 3"),
            "{err}"
        );
        let err = Config::from_yaml("flinkpipe:\n  layers:\n    bronze: gold\n", p)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "invalid config file c.yaml: line 3: flinkpipe.layers.bronze: 'gold' is not a table type (one of source, intermediate, dimension, fact, view, seed, dead_letter)"
        );
    }

    #[test]
    fn effective_yaml_masks_secrets_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(
            &path,
            "kafka:\n  cluster_type: prod\n  sasl.password: hunter2\nflink:\n  api_key: FLINKKEY\n  api_secret: s3cr3t\n  compute_pool_id: lfcp-1\nregistry:\n  token: abc\n",
        )
        .unwrap();
        let cfg = Config::load(Some(&path)).unwrap();
        let y = cfg.effective_yaml().unwrap();
        for secret in ["hunter2", "FLINKKEY", "s3cr3t", "abc"] {
            assert!(!y.contains(secret), "{secret} printed:\n{y}");
        }
        assert!(
            y.contains("api_key: '****'") && y.contains("sasl.password: '****'"),
            "{y}"
        );
        assert!(
            y.contains("cluster_type: prod") && y.contains("compute_pool_id: lfcp-1"),
            "{y}"
        );
        // defaults the file does not set are shown too
        assert!(y.contains("products: []"), "{y}");
    }

    #[test]
    fn defaults_without_file() {
        let cfg = Config::load(None).unwrap();
        assert_eq!(cfg.kafka.cluster_type, "dev");
        assert_eq!(cfg.region(), "us-west-2");
    }
}
