//! The deploy target, chosen in one place: an Apache Flink SQL Gateway when `flinkpipe.gateway.url` (or
//! `$FLINKPIPE_GATEWAY_URL`) is set, else Confluent Cloud for Apache Flink. Also the live statement
//! list every deploy-side operation starts from, and the async runtime they run on.

use super::OpsError;
use crate::config::{Config, ConfigError, process_env};
use crate::deploy::env_sql::EnvSql;
use crate::deploy::spec;
use crate::plan::{StatementNaming, StatementStatus};
use crate::project::Project;
use crate::target::gateway::catalog::Definitions;
use crate::target::{
    ConfluentTarget, GatewayTarget, Scrubber, StatementSpec, StatementState, Target,
};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Which kind of target a configuration points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// Confluent Cloud for Apache Flink (`sql/v1`).
    ConfluentCloud,
    /// An Apache Flink SQL Gateway (REST `/v2`) and its JobManager.
    SqlGateway,
}

impl TargetKind {
    /// The target a configuration selects: the gateway when its URL is set, else Confluent Cloud.
    pub fn of(cfg: &Config) -> TargetKind {
        if crate::target::settings::gateway(cfg, &process_env).is_some() {
            TargetKind::SqlGateway
        } else {
            TargetKind::ConfluentCloud
        }
    }

    /// Whether a target is fully configured (every setting and secret present), so that commands that
    /// may read live phases (`build-execution-plan`) ask it.
    pub fn is_configured(cfg: &Config) -> bool {
        crate::target::settings::gateway(cfg, &process_env).is_some()
            || crate::target::settings::confluent(cfg, &process_env).is_ok()
    }

    /// Human name: `Apache Flink SQL Gateway`, `Confluent Cloud`.
    pub fn describe(self) -> &'static str {
        match self {
            TargetKind::ConfluentCloud => "Confluent Cloud",
            TargetKind::SqlGateway => "Apache Flink SQL Gateway",
        }
    }
}

/// A connected target and the scrubber that masks its secrets in every message.
pub struct Connected {
    pub target: Box<dyn Target>,
    pub scrubber: Scrubber,
    pub kind: TargetKind,
}

impl Connected {
    /// A target error as an [`OpsError::Target`], secrets masked, prefixed with what was being done.
    pub fn error(&self, doing: &str, e: impl std::fmt::Display) -> OpsError {
        OpsError::Target(self.scrubber.scrub(&format!("{doing}: {e}")))
    }
}

/// Connects the configured target. The gateway learns the project's statements, and the external
/// tables' DDL (`flinkpipe.gateway.external_ddl`), to declare tables in its session; deleted finished
/// jobs are remembered in the project's `.flinkpipe/` folder.
///
/// Errors: missing Confluent Cloud settings (named with their variables, and how to use a gateway
/// instead), unreadable external DDL, a client that cannot be built.
pub fn connect(cfg: &Config, project: Option<&Project>) -> Result<Connected, OpsError> {
    connect_with_aliases(cfg, project, &[])
}

/// [`connect`], and on the SQL Gateway also declares each `(table, alias)` pair's alias: a copy of
/// the table's definition (its DDL, or the CTAS / materialized table that creates it) with the
/// table's name replaced by the alias (whole words). `pipeline release-check` uses it to read a blue table whose files were renamed to green (`t_v2` → `t`);
/// Confluent Cloud tables are topics in the catalog and need no declaration.
///
/// Errors: as [`connect`].
pub fn connect_with_aliases(
    cfg: &Config,
    project: Option<&Project>,
    aliases: &[(String, String)],
) -> Result<Connected, OpsError> {
    if let Some(settings) = crate::target::settings::gateway(cfg, &process_env) {
        let target = gateway_with_aliases(cfg, project, settings, aliases)?;
        tracing::info!("target: {}", target.describe());
        return Ok(Connected {
            target: Box::new(target),
            scrubber: secrets_scrubber(&process_env),
            kind: TargetKind::SqlGateway,
        });
    }
    let settings = crate::target::settings::confluent(cfg, &process_env).map_err(|e| match e {
        ConfigError::Missing { .. } => OpsError::Target(format!(
            "{e}; to use an Apache Flink SQL Gateway instead, set flinkpipe.gateway.url or $FLINKPIPE_GATEWAY_URL"
        )),
        e => e.into(),
    })?;
    let scrubber = secrets_scrubber(&process_env);
    let target = ConfluentTarget::new(settings)
        .map_err(|e| OpsError::Target(scrubber.scrub(&e.to_string())))?;
    tracing::info!("target: {}", target.describe());
    Ok(Connected {
        target: Box::new(target),
        scrubber,
        kind: TargetKind::ConfluentCloud,
    })
}

/// A SQL Gateway client with `settings` that knows the project's statements and the external tables'
/// DDL (as [`connect`] builds it for a gateway target); also used to reach the local Flink of a
/// project whose target is Confluent Cloud (`upgrade-check --engine local`).
///
/// Errors: unreadable external DDL, invalid SQL variables, a client that cannot be built.
pub fn gateway_with(
    cfg: &Config,
    project: Option<&Project>,
    settings: crate::target::GatewaySettings,
) -> Result<GatewayTarget, OpsError> {
    gateway_with_aliases(cfg, project, settings, &[])
}

/// [`gateway_with`], with the aliases of [`connect_with_aliases`] declared too.
fn gateway_with_aliases(
    cfg: &Config,
    project: Option<&Project>,
    mut settings: crate::target::GatewaySettings,
    aliases: &[(String, String)],
) -> Result<GatewayTarget, OpsError> {
    settings.deleted_jobs_file =
        project.map(|p| super::state_dir(&p.inventory.root).join("gateway-deleted-jobs.json"));
    let mut specs = match project {
        Some(p) => spec::project_statements(
            p,
            &StatementNaming::from_config(cfg),
            &EnvSql::from_config(cfg, &process_env)?,
        )?,
        None => Vec::new(),
    };
    specs.extend(external_ddl(cfg)?);
    let aliased = alias_definitions(&specs, aliases)?;
    specs.extend(aliased);
    GatewayTarget::new(settings, Definitions::new(specs))
        .map_err(|e| OpsError::Target(e.to_string()))
}

/// The declarations of [`connect_with_aliases`]'s aliases: for each `(table, alias)`, a copy of
/// every statement of `specs` that creates `table` (its DDL, a CTAS, a materialized table) with the
/// table's name replaced by the alias (whole words, any case), marked a declaration (DDL) so it is
/// never run as a job nor listed as a statement.
///
/// Errors: none in practice (a table name always makes a valid pattern once escaped).
fn alias_definitions(
    specs: &[StatementSpec],
    aliases: &[(String, String)],
) -> Result<Vec<StatementSpec>, OpsError> {
    let mut aliased = Vec::new();
    for (table, alias) in aliases {
        // The name as a whole word, or as the end of a location after `_`, `.` or `-` (a topic
        // `<namespace>_<table>` moves with its table in a blue-green, `crate::sql::rewrite`).
        let word = regex::Regex::new(&format!(r"(?i)(\b|[_.\-]){}\b", regex::escape(table)))
            .map_err(|e| OpsError::Usage(e.to_string()))?;
        // The table's definition: its DDL, or the CTAS / materialized table that creates it (the
        // alias is then declared from the `DESCRIBE` of its query, as the table itself is).
        for s in specs.iter().filter(|s| {
            crate::sql::analyze(&s.sql).statements.iter().any(|st| {
                st.kind.creates_relation()
                    && st
                        .sinks
                        .first()
                        .is_some_and(|k| k.name.table().eq_ignore_ascii_case(table))
            })
        }) {
            let mut copy = s.clone();
            // A declaration only: the copy is never run as a job, nor listed as a statement.
            copy.kind = crate::target::StatementKind::Ddl;
            copy.name = format!("{}-as-{alias}", s.name);
            copy.sql = word
                .replace_all(&s.sql, |c: &regex::Captures| format!("{}{alias}", &c[1]))
                .into_owned();
            aliased.push(copy);
        }
    }
    Ok(aliased)
}

/// A scrubber for every secret flinkpipe reads from the environment ([`Scrubber::of_environment`]:
/// the Flink and Cloud API keys, secrets and Basic tokens), so that none of them shows in any output,
/// whichever the command uses.
pub fn secrets_scrubber(env: &dyn Fn(&str) -> Option<String>) -> Scrubber {
    Scrubber::of_environment(env)
}

/// The DDL statements of `flinkpipe.gateway.external_ddl` (files, or folders of `*.sql`, sorted).
fn external_ddl(cfg: &Config) -> Result<Vec<StatementSpec>, OpsError> {
    const WHAT: &str = "flinkpipe.gateway.external_ddl";
    let mut files = Vec::new();
    for p in crate::target::settings::gateway_external_ddl(cfg) {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(&p)
                .map_err(|source| OpsError::Read {
                    what: WHAT,
                    path: p.clone(),
                    source,
                })?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "sql"))
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(p);
        }
    }
    let mut out = Vec::new();
    for f in files {
        let text = crate::fsutil::read_user_text(&f, crate::fsutil::MAX_SQL_FILE_BYTES).map_err(
            |source| OpsError::Read {
                what: WHAT,
                path: f.clone(),
                source,
            },
        )?;
        let stem = f.file_stem().and_then(|s| s.to_str()).unwrap_or("ddl");
        let base = crate::plan::naming::fit_length(format!(
            "external-{}",
            stem.replace(['.', '_'], "-").to_ascii_lowercase()
        ));
        out.extend(
            spec::steps_from_sql(
                &text,
                &base,
                crate::target::StatementKind::Ddl,
                BTreeMap::new(),
            )
            .into_iter()
            .map(|s| s.spec),
        );
    }
    Ok(out)
}

/// A tokio runtime for one operation.
pub fn runtime() -> Result<tokio::runtime::Runtime, OpsError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| OpsError::Target(format!("cannot start the async runtime: {e}")))
}

/// Every statement on the target, by name (one paginated listing).
pub async fn live_statements(c: &Connected) -> Result<BTreeMap<String, StatementState>, OpsError> {
    let list = c
        .target
        .list_statements()
        .await
        .map_err(|e| c.error("listing statements", e))?;
    Ok(list.into_iter().map(|s| (s.name.clone(), s)).collect())
}

/// The project's statements when every name in `expected` is among those flinkpipe created
/// ([`Target::list_own_statements`]: on Confluent Cloud one listing filtered by the server with
/// `label_selector` on flinkpipe's label, instead of every team's statements); when one is not (not
/// deployed yet, or made by another tool), every statement of the environment
/// ([`live_statements`]), so that nothing the project names is ever reported absent while it exists.
pub async fn own_statements(
    c: &Connected,
    expected: &std::collections::BTreeSet<String>,
) -> Result<BTreeMap<String, StatementState>, OpsError> {
    let own: BTreeMap<String, StatementState> = c
        .target
        .list_own_statements()
        .await
        .map_err(|e| c.error("listing statements", e))?
        .into_iter()
        .map(|s| (s.name.clone(), s))
        .collect();
    if expected.iter().all(|n| own.contains_key(n)) {
        return Ok(own);
    }
    live_statements(c).await
}

/// Plan statuses from live states.
pub fn status_of(live: &BTreeMap<String, StatementState>) -> StatementStatus {
    StatementStatus {
        phases: live
            .iter()
            .map(|(k, v)| (k.clone(), v.phase.clone()))
            .collect(),
    }
}

/// The live statement phases (one list call) of the configured target.
pub fn live_status(cfg: &Config, project: &Project) -> Result<StatementStatus, OpsError> {
    let c = connect(cfg, Some(project))?;
    let rt = runtime()?;
    let live = rt.block_on(live_statements(&c))?;
    Ok(status_of(&live))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::StatementKind;
    use crate::target::gateway::catalog::{Definition, Definitions};

    fn spec(name: &str, sql: &str, kind: StatementKind) -> StatementSpec {
        StatementSpec {
            name: name.into(),
            sql: sql.into(),
            properties: BTreeMap::new(),
            kind,
            compute_pool: None,
        }
    }

    /// `release-check` reads a blue table through its green successor's definition, whatever
    /// defines it: a DDL, a CTAS or a materialized table (a job's statement: the alias is a
    /// declaration only, derived from its query as the table itself is).
    #[test]
    fn aliases_are_declared_from_every_kind_of_definition() {
        let specs = vec![
            spec(
                "p-ddl-t-v2",
                "CREATE TABLE t_v2 (id INT) WITH ('connector' = 'kafka', 'topic' = 'team_a.t_v2')",
                StatementKind::Ddl,
            ),
            spec(
                "p-dml-mv-v2",
                "CREATE MATERIALIZED TABLE mv_v2 (PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = 'mv_v2') FRESHNESS = INTERVAL '1' MINUTE AS SELECT id FROM t_v2",
                StatementKind::Dml,
            ),
            spec(
                "p-dml-c-v2",
                "CREATE TABLE c_v2 WITH ('connector' = 'kafka', 'topic' = 'c_v2') AS SELECT id FROM t_v2",
                StatementKind::Dml,
            ),
            spec(
                "p-dml-x",
                "INSERT INTO x SELECT id FROM mv_v2",
                StatementKind::Dml,
            ),
        ];
        let aliases: Vec<(String, String)> = [("t_v2", "t"), ("mv_v2", "mv"), ("c_v2", "c")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let copies = alias_definitions(&specs, &aliases).unwrap();
        assert_eq!(copies.len(), 3, "{copies:#?}");
        assert!(copies.iter().all(|c| c.kind == StatementKind::Ddl));
        let mut all = specs.clone();
        all.extend(copies);
        let defs = Definitions::new(all);
        match defs.definition_of("t") {
            Some(Definition::Ddl { sql, .. }) => {
                assert!(sql.contains("'topic' = 'team_a.t'"), "{sql}")
            }
            other => panic!("t: {other:?}"),
        }
        for blue in ["mv", "c"] {
            match defs.definition_of(blue) {
                Some(Definition::Derived { table, options, .. }) => {
                    assert_eq!(table, blue);
                    assert!(
                        options.iter().any(|(k, v)| k == "topic" && v == blue),
                        "{options:?}"
                    );
                }
                other => panic!("{blue}: {other:?}"),
            }
        }
        // The copies are declarations: never a job of the listing.
        assert!(defs.is_ddl("p-dml-mv-v2-as-mv"));
        assert!(!defs.is_ddl("p-dml-mv-v2"));
    }
}
