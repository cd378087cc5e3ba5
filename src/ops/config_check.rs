//! `project validate-config [--target gateway|confluent]`: every key of the configuration file
//! checked — known, of the right type, with an allowed value, and present when the target needs it —
//! and every problem reported at once, each with its line. shift_left's `validate-config` stops at the
//! first problem and gives no line; loading the file for a command (serde) also stops at the first.

use super::{Context, OpsError};
use crate::config::{Config, line_of_key};
use serde::Serialize;
use serde_yaml_ng::Value;
use std::path::PathBuf;

/// The deploy target whose required settings are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckTarget {
    Gateway,
    Confluent,
}

/// What is wrong with a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// The file is not YAML (the parser's line).
    Syntax,
    /// A key neither shift_left nor flinkpipe reads.
    UnknownKey,
    /// A value of the wrong type (a list where a string is expected).
    WrongType,
    /// A value of the right type that is not allowed (`cloud_provider: ibm`).
    NotAllowed,
    /// A setting the target needs that neither the file nor the environment gives.
    Missing,
}

/// One problem.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigProblem {
    pub kind: ProblemKind,
    /// The dotted key (`flink.max_cfu`), or the environment variable of a missing secret.
    pub key: String,
    /// 1-based line in the file, when the key is in it.
    pub line: Option<usize>,
    pub message: String,
}

/// The result: `problems` empty means the file is good for the target.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigCheck {
    /// The file checked (`None`: no file was found; only the target's requirements are checked).
    pub file: Option<PathBuf>,
    pub target: CheckTarget,
    pub problems: Vec<ConfigProblem>,
}

/// The type a key's value must have.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Str,
    /// A non-negative integer.
    Int,
    /// Any number.
    Num,
    StrList,
    /// A map of strings to strings.
    StrMap,
    /// A mapping checked elsewhere or free-form (`logging`, `sql_rewrites`).
    Any,
}

/// Every key flinkpipe or shift_left reads, with its type. Sections are those of
/// [`crate::config::Config`]; `registry` is shift_left's and free-form.
const SCHEMA: &[(&str, &[(&str, Kind)])] = &[
    (
        "kafka",
        &[
            ("cluster_type", Kind::Str),
            ("bootstrap.servers", Kind::Str),
            ("cluster_id", Kind::Str),
            ("src_topic_prefix", Kind::Str),
            ("api_key", Kind::Str),
            ("api_secret", Kind::Str),
            ("sasl.username", Kind::Str),
            ("sasl.password", Kind::Str),
            ("security.protocol", Kind::Str),
            ("sasl.mechanisms", Kind::Str),
            ("session.timeout.ms", Kind::Int),
            ("pkafka_cluster", Kind::Str),
            ("reject_topics_prefixes", Kind::StrList),
        ],
    ),
    (
        "confluent_cloud",
        &[
            ("environment_id", Kind::Str),
            ("organization_id", Kind::Str),
            ("cloud_provider", Kind::Str),
            ("cloud_region", Kind::Str),
            ("region", Kind::Str),
            ("service_account_id", Kind::Str),
            ("api_key", Kind::Str),
            ("api_secret", Kind::Str),
            ("page_size", Kind::Int),
            ("base_api", Kind::Str),
            ("glb_name", Kind::Str),
            ("url_scope", Kind::Str),
        ],
    ),
    (
        "flink",
        &[
            ("compute_pool_id", Kind::Str),
            ("catalog_name", Kind::Str),
            ("database_name", Kind::Str),
            ("api_key", Kind::Str),
            ("api_secret", Kind::Str),
            ("max_cfu", Kind::Num),
            ("max_cfu_percent_before_allocation", Kind::Num),
            ("poll_timer", Kind::Int),
            ("submission_timeout_seconds", Kind::Int),
            ("sql_endpoint", Kind::Str),
            ("flink_url", Kind::Str),
        ],
    ),
    (
        "app",
        &[
            ("accepted_common_products", Kind::StrList),
            ("products", Kind::StrList),
            ("post_fix_unit_test", Kind::Str),
            ("post_fix_integration_test", Kind::Str),
            ("cache_ttl", Kind::Int),
            ("logging", Kind::Any),
            ("timezone", Kind::Str),
            ("sql_content_modifier", Kind::Str),
            ("dml_naming_convention_modifier", Kind::Str),
            ("compute_pool_naming_convention_modifier", Kind::Str),
            ("data_limit_where_condition", Kind::Str),
            ("data_limit_replace_from_reg_ex", Kind::Str),
            ("data_limit_table_type", Kind::Str),
            ("data_limit_column_name_to_select_from", Kind::Str),
            ("modified_flink_files_file_name", Kind::Str),
            ("default_PK", Kind::Str),
            ("delta_max_time_in_min", Kind::Int),
            ("translator_to_flink_sql_agent", Kind::Str),
            ("report_output_dir", Kind::Str),
        ],
    ),
    (
        "flinkpipe",
        &[
            ("layers", Kind::StrMap),
            ("statement_prefix", Kind::Str),
            ("naming", Kind::Any),
            ("gateway", Kind::Any),
            ("unit_tests", Kind::Any),
            ("sql_variables", Kind::StrMap),
            ("compute_pools", Kind::StrMap),
            ("environment", Kind::Str),
            ("sql_rewrites", Kind::Any),
            ("confluent", Kind::Any),
            ("multi_writer_tables", Kind::StrList),
            ("sink_tables", Kind::StrList),
        ],
    ),
    ("registry", &[]),
];

/// Checks the configuration file that commands would use ([`Context::config`]) for `target` (default:
/// the gateway when one is configured, else Confluent Cloud). Values the environment supplies
/// (`SL_FLINK_ENV_ID`, …) count as present; secrets are looked for in the environment only and never
/// printed.
///
/// Errors: only a file that cannot be read; everything wrong in it is a [`ConfigProblem`].
pub fn validate_config(
    ctx: &Context,
    target: Option<CheckTarget>,
) -> Result<ConfigCheck, OpsError> {
    let path = Config::locate(ctx.config_file.as_deref());
    let text = match &path {
        Some(p) => Some(
            crate::fsutil::read_data_file(p).map_err(|source| OpsError::Read {
                what: "the configuration file",
                path: p.clone(),
                source,
            })?,
        ),
        None => None,
    };
    let mut problems = Vec::new();
    let mut typed = Config::default();
    let mut typed_from_file = path.is_none();
    if let (Some(p), Some(text)) = (&path, &text) {
        match serde_yaml_ng::from_str::<Value>(text) {
            Err(e) => {
                let (line, message) = match crate::config::yaml_error(p, text, &e) {
                    crate::config::ConfigError::ParseAt { line, message, .. } => {
                        (Some(line), message)
                    }
                    other => (None, other.to_string()),
                };
                problems.push(ConfigProblem {
                    kind: ProblemKind::Syntax,
                    key: String::new(),
                    line,
                    message,
                });
            }
            Ok(value) => check_value(&value, text, &mut problems),
        }
        if problems.is_empty() {
            // Types are right: what the commands would load.
            if let Ok(c) = Config::from_yaml(text, p) {
                typed = c;
                typed_from_file = true;
            }
        }
    }
    let typed = typed.with_env(crate::config::process_env);
    let target = target.unwrap_or(
        if crate::target::settings::gateway(&typed, &crate::config::process_env).is_some() {
            CheckTarget::Gateway
        } else {
            CheckTarget::Confluent
        },
    );
    let line = |key: &str| text.as_deref().and_then(|t| line_of_key(t, key));
    match target {
        CheckTarget::Confluent => {
            if let Err(crate::config::ConfigError::Missing {
                settings, secrets, ..
            }) = crate::target::settings::confluent(&typed, &crate::config::process_env)
            {
                for (key, var) in settings {
                    problems.push(ConfigProblem {
                        kind: ProblemKind::Missing,
                        key: key.to_string(),
                        line: None,
                        message: format!(
                            "{key} (or environment variable {var}) is required to use Confluent Cloud"
                        ),
                    });
                }
                for var in secrets {
                    problems.push(ConfigProblem {
                        kind: ProblemKind::Missing,
                        message: format!(
                            "environment variable {var} is not set (a secret: read from the environment only) and is required to use Confluent Cloud"
                        ),
                        key: var,
                        line: None,
                    });
                }
            }
            if typed.flink.compute_pool_id.is_none() && typed.flinkpipe.compute_pools.is_empty() {
                problems.push(ConfigProblem {
                    kind: ProblemKind::Missing,
                    key: "flink.compute_pool_id".into(),
                    line: line("flink"),
                    message: "flink.compute_pool_id (or environment variable SL_FLINK_COMPUTE_POOL_ID, or flinkpipe.compute_pools) is required to deploy on Confluent Cloud".into(),
                });
            }
        }
        CheckTarget::Gateway => {
            if crate::target::settings::gateway(&typed, &crate::config::process_env).is_none() {
                problems.push(ConfigProblem {
                    kind: ProblemKind::Missing,
                    key: "flinkpipe.gateway.url".into(),
                    line: line("flinkpipe"),
                    message: "flinkpipe.gateway.url (or environment variable FLINKPIPE_GATEWAY_URL) is required to use a Flink SQL Gateway".into(),
                });
            }
        }
    }
    if !typed_from_file {
        // The file did not load (its type errors are above): a key written in it is not missing.
        problems.retain(|p| p.kind != ProblemKind::Missing || line(&p.key).is_none());
    }
    problems.sort_by_key(|p| (p.line.is_none(), p.line));
    Ok(ConfigCheck {
        file: path,
        target,
        problems,
    })
}

fn check_value(value: &Value, text: &str, out: &mut Vec<ConfigProblem>) {
    let Value::Mapping(map) = value else {
        if !value.is_null() {
            out.push(ConfigProblem {
                kind: ProblemKind::WrongType,
                key: String::new(),
                line: Some(1),
                message: "the file must be a mapping of sections (kafka:, confluent_cloud:, flink:, app:, flinkpipe:)".into(),
            });
        }
        return;
    };
    for (k, v) in map {
        let section = k.as_str().unwrap_or("?");
        let Some((_, keys)) = SCHEMA.iter().find(|(s, _)| *s == section) else {
            out.push(ConfigProblem {
                kind: ProblemKind::UnknownKey,
                key: section.to_string(),
                line: line_of_key(text, section),
                message: format!(
                    "unknown section '{section}' (known: kafka, confluent_cloud, flink, app, flinkpipe, registry)"
                ),
            });
            continue;
        };
        if keys.is_empty() || v.is_null() {
            continue;
        }
        let Value::Mapping(sub) = v else {
            out.push(wrong(section, line_of_key(text, section), "a mapping", v));
            continue;
        };
        for (sk, sv) in sub {
            let key = sk.as_str().unwrap_or("?");
            let dotted = format!("{section}.{key}");
            let line = sub_line(text, section, key);
            let Some((_, kind)) = keys.iter().find(|(n, _)| *n == key) else {
                out.push(ConfigProblem {
                    kind: ProblemKind::UnknownKey,
                    key: dotted.clone(),
                    line,
                    message: format!(
                        "unknown key '{dotted}' (neither shift_left nor flinkpipe reads it)"
                    ),
                });
                continue;
            };
            if sv.is_null() {
                continue;
            }
            if let Some(p) = check_kind(&dotted, line, *kind, sv) {
                out.push(p);
                continue;
            }
            if let Some(msg) = allowed(&dotted, sv) {
                out.push(ConfigProblem {
                    kind: ProblemKind::NotAllowed,
                    key: dotted,
                    line,
                    message: msg,
                });
            }
        }
    }
}

/// The line of `section.key` (keys may hold dots: `bootstrap.servers`).
fn sub_line(text: &str, section: &str, key: &str) -> Option<usize> {
    let start = line_of_key(text, section)?;
    text.lines()
        .enumerate()
        .skip(start)
        .take_while(|(_, l)| l.trim().is_empty() || l.starts_with([' ', '\t', '#']))
        .find(|(_, l)| {
            l.trim_start()
                .split_once(':')
                .is_some_and(|(k, _)| k.trim().trim_matches(['"', '\'']) == key)
        })
        .map(|(i, _)| i + 1)
}

fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

fn wrong(key: &str, line: Option<usize>, expected: &str, v: &Value) -> ConfigProblem {
    ConfigProblem {
        kind: ProblemKind::WrongType,
        key: key.to_string(),
        line,
        message: format!("{key} must be {expected}, not {}", describe(v)),
    }
}

fn check_kind(key: &str, line: Option<usize>, kind: Kind, v: &Value) -> Option<ConfigProblem> {
    let ok = match kind {
        // shift_left's loader takes scalars as strings (`cluster_id: 123`).
        Kind::Str => matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_)),
        Kind::Int => v.as_u64().is_some(),
        Kind::Num => v.as_f64().is_some(),
        Kind::StrList => v
            .as_sequence()
            .is_some_and(|s| s.iter().all(|x| matches!(x, Value::String(_)))),
        Kind::StrMap => v.as_mapping().is_some_and(|m| {
            m.iter()
                .all(|(k, x)| k.is_string() && matches!(x, Value::String(_) | Value::Number(_)))
        }),
        Kind::Any => true,
    };
    let expected = match kind {
        Kind::Str => "a string",
        Kind::Int => "a whole number ≥ 0",
        Kind::Num => "a number",
        Kind::StrList => "a list of strings",
        Kind::StrMap => "a mapping of names to strings",
        Kind::Any => "",
    };
    (!ok).then(|| wrong(key, line, expected, v))
}

/// Allowed values, where the tools restrict them; the message when `v` is not one.
fn allowed(key: &str, v: &Value) -> Option<String> {
    let s = v.as_str();
    let n = v.as_f64();
    match key {
        "confluent_cloud.cloud_provider" => {
            let p = s.unwrap_or_default().to_ascii_lowercase();
            (!["aws", "gcp", "azure"].contains(&p.as_str())).then(|| {
                format!(
                    "{key}: '{}' is not aws, gcp or azure",
                    s.unwrap_or_default()
                )
            })
        }
        "confluent_cloud.page_size" => n
            .filter(|n| !(1.0..=100.0).contains(n))
            .map(|n| format!("{key}: {n} is not between 1 and 100 (the API's page sizes)")),
        "flink.max_cfu" => n
            .filter(|n| {
                !crate::target::cloud::MAX_CFU_VALUES.contains(&(*n as u32)) || n.fract() != 0.0
            })
            .map(|n| format!("{key}: {n} is not a compute pool size (5, 10, 20, 30, 40 or 50)")),
        "flink.max_cfu_percent_before_allocation" => n
            .filter(|n| !(*n > 0.0 && *n <= 1.0))
            .map(|n| format!("{key}: {n} is not a share between 0 (excluded) and 1 (e.g. 0.8)")),
        "app.post_fix_unit_test" => {
            let p = s.unwrap_or_default();
            let rest = p.strip_prefix('_').unwrap_or("");
            (!(p.starts_with('_')
                && (2..=3).contains(&rest.len())
                && rest.chars().all(|c| c.is_ascii_alphanumeric())))
            .then(|| {
                format!("{key}: '{p}' is not '_' followed by 2 or 3 letters or digits (e.g. _ut)")
            })
        }
        "flinkpipe.layers" => v.as_mapping().and_then(|m| {
            let bad: Vec<String> = m
                .iter()
                .filter_map(|(f, t)| {
                    let t = t.as_str().unwrap_or_default();
                    (!crate::scan::layout::TABLE_TYPES.contains(&t))
                        .then(|| format!("{}: '{t}'", f.as_str().unwrap_or("?")))
                })
                .collect();
            (!bad.is_empty()).then(|| {
                format!(
                    "{key}: {} is not a table type (one of {})",
                    bad.join(", "),
                    crate::scan::layout::TABLE_TYPES.join(", ")
                )
            })
        }),
        _ => None,
    }
}
