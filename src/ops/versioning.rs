//! `pipeline blue-green` (version the subgraph impacted since a git ref: `t` → `t_v2`) and
//! `project update-tables-version` (the same for listed tables and their descendants): plan the
//! rewrite, and with `apply` rewrite the files and rebuild the inventory and metadata, all or nothing.

use super::{Context, OpsError};
use crate::changes;
use crate::config::Config;
use crate::plan::StatementNaming;
use crate::project::Project;
use crate::versioning::record::{
    BlueGreenRecord, GreenFacts, GreenTable, RecordedStatement, Release,
};
use crate::versioning::{self, VersionRequest};
use std::path::Path;

pub use crate::versioning::VersionPlan;

/// What was versioned.
#[derive(Debug, Clone)]
pub struct Versioned {
    pub plan: VersionPlan,
    /// Whether rewriting was asked for (`--apply`, or `update-tables-version` without `--dry-run`).
    pub apply: bool,
    /// Whether files were rewritten (`apply` and something to rewrite).
    pub applied: bool,
    /// The base ref of a blue-green (`None` for `update-tables-version`).
    pub baseline_ref: Option<String>,
    /// The release added to `pipelines/blue_green.json` when files were rewritten.
    pub recorded: Option<Release>,
    /// With `--in-place`: the changed tables left out of the versioning because their new statement
    /// takes over the running one in place, and those versioned although their state would restore.
    pub in_place: Vec<InPlace>,
}

/// How `pipeline blue-green` versions.
#[derive(Debug, Clone, Default)]
pub struct BlueGreenOptions {
    /// Suffix for tables without a version yet (`_v2`).
    pub default_version: String,
    /// Rewrite the files (else only plan).
    pub apply: bool,
    pub allow_unknown: bool,
    /// Refuse when a schema change is breaking for a downstream reader.
    pub fail_on_breaking: bool,
    /// Leave out the tables whose statements are upgraded in place ([`InPlace`]).
    pub in_place: bool,
}

/// A changed table `--in-place` looked at.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct InPlace {
    pub table_name: String,
    /// The upgrade verdict of the statement writing it.
    pub verdict: crate::changes::upgrade::Verdict,
    /// Whether it is upgraded in place (not versioned).
    pub in_place: bool,
    /// Why, in a sentence.
    pub reason: String,
}

/// `pipeline blue-green`: the tables with a `logic` or `schema` change since `changes` and all their
/// descendants get their next version.
///
/// With `fail_on_breaking`, a schema change that a downstream reader uses refuses the versioning
/// ([`super::schema_changes`]).
///
/// Errors: a bad suffix (usage), errors in the project, git errors, a file that cannot be rewritten
/// safely (nothing is written), a breaking change with `fail_on_breaking`.
pub fn blue_green(
    ctx: &Context,
    pipelines: &Path,
    changes: &super::changes::ChangeRequest,
    options: &BlueGreenOptions,
) -> Result<Versioned, OpsError> {
    let BlueGreenOptions {
        default_version,
        apply,
        allow_unknown,
        fail_on_breaking,
        in_place,
    } = options.clone();
    let default_version = default_version.as_str();
    check_suffix(default_version)?;
    let cfg = ctx.project_config(pipelines)?;
    let project = loaded(ctx, &cfg, pipelines, allow_unknown, apply)?;
    let mut opts = super::changes::change_options(changes)?;
    let mut set = changes::list_changes(pipelines, &opts, &cfg)?;
    // The work tree no longer has a table the commits changed: it was rewritten since (a versioning
    // not committed yet, perhaps killed before it recorded its release). Compare the base with the
    // work tree, which is what is versioned.
    let moved_on = set.files.iter().any(|f| {
        f.change_kind != changes::ChangeKind::Deleted
            && !f.new_table_name.is_empty()
            && !project.inventory.tables.contains_key(&f.new_table_name)
    });
    if moved_on && !opts.include_uncommitted {
        ctx.console.note(
            "note: the work tree no longer has a table the commits changed (a versioning not committed yet?): comparing the base with the work tree, uncommitted changes included",
        );
        opts.include_uncommitted = true;
        set = changes::list_changes(pipelines, &opts, &cfg)?;
    }
    if fail_on_breaking {
        let breaking: Vec<String> = super::schema_changes::with_readers(
            &project,
            &cfg,
            pipelines,
            &set.files,
            &set.base_commit,
        )?
        .into_iter()
        .filter(|c| c.breaking)
        .map(|c| {
            let readers: Vec<String> = c
                .readers
                .iter()
                .map(|r| format!("{}.{} ({}:{})", r.table, r.column, r.file, r.line))
                .collect();
            format!(
                "{}.{} ({}) is read by {}",
                c.table,
                c.column,
                c.file,
                readers.join(", ")
            )
        })
        .collect();
        if !breaking.is_empty() {
            return Err(OpsError::Refused(format!(
                "--fail-on breaking: {} breaking schema change(s): {}; nothing was versioned (`pipeline validate --since REF` lists them)",
                breaking.len(),
                breaking.join("; ")
            )));
        }
    }
    let mut req = versioning::blue_green_request(&project, &cfg, pipelines, &set, default_version)?;
    let looked = if in_place {
        in_place_upgrades(
            ctx,
            &InPlaceInputs {
                cfg: &cfg,
                project: &project,
                files: &set.files,
                pipelines,
                changes,
                include_uncommitted: opts.include_uncommitted,
                allow_unknown,
            },
            &mut req,
        )?
    } else {
        Vec::new()
    };
    let mut v = run(
        ctx,
        &cfg,
        &project,
        &req,
        pipelines,
        apply,
        allow_unknown,
        Some(Baseline {
            base_ref: set.baseline_ref.clone(),
            base_commit: set.base_commit.clone(),
        }),
    )?;
    // A table left out of the seeds is still versioned when it descends from a versioned one.
    v.in_place = looked
        .into_iter()
        .map(|mut t| {
            if t.in_place && v.plan.renames.contains_key(&t.table_name) {
                t.in_place = false;
                t.reason = format!(
                    "{}, but it reads a versioned table: versioned with it",
                    t.verdict
                );
            }
            t
        })
        .collect();
    Ok(v)
}

/// What [`in_place_upgrades`] reads.
struct InPlaceInputs<'a> {
    cfg: &'a Config,
    project: &'a Project,
    /// The files changed since the base.
    files: &'a [changes::FileChange],
    pipelines: &'a Path,
    changes: &'a super::changes::ChangeRequest,
    include_uncommitted: bool,
    allow_unknown: bool,
}

/// `--in-place`: the upgrade verdict of each changed statement ([`super::upgrade_check`], on the
/// local Flink when it answers). A table is upgraded in place, and leaves the seeds, only when
/// - its statement is `stateless` by the verdict,
/// - the only file of it that changed beyond formatting is its DML (no DDL, options or
///   `.properties` change: its readers would see another schema, topic or format), and it is not a
///   CTAS or materialized table (whose query is its schema),
/// - on Confluent Cloud its sink takes no updates: the new statement continues from the old one's
///   offsets (carry-over,
///   <https://docs.confluent.io/cloud/current/flink/operate-and-deploy/carry-over-offsets.html>),
///   nothing read twice; on the SQL
///   Gateway the deploy stops the old job with a savepoint and starts the new SQL from its offsets
///   (`restart (offsets)`), whatever the sink;
/// - or, on the SQL Gateway only, its statement is `state-compatible`: the deploy starts the new SQL
///   from the old job's savepoint with its state (`upgrade (savepoint)`); Confluent Cloud exposes no
///   savepoints, so there it is versioned.
///
/// Rows already written, and readers' state, keep the old logic: nothing is recomputed.
fn in_place_upgrades(
    ctx: &Context,
    inp: &InPlaceInputs<'_>,
    req: &mut VersionRequest,
) -> Result<Vec<InPlace>, OpsError> {
    use crate::changes::upgrade::Verdict;
    use crate::changes::{ChangeKind, FileRole};
    use crate::sql::StatementKind as SqlKind;
    let InPlaceInputs {
        cfg,
        project,
        files,
        pipelines,
        changes,
        include_uncommitted,
        allow_unknown,
    } = *inp;
    let kind = super::target::TargetKind::of(cfg);
    let carries_offsets = kind == super::target::TargetKind::ConfluentCloud;
    let savepoints = kind == super::target::TargetKind::SqlGateway;
    let only_its_logic = |t: &str| {
        let mine: Vec<&changes::FileChange> = files
            .iter()
            .filter(|f| f.new_table_name == t && f.role != FileRole::Test)
            .collect();
        mine.iter()
            .any(|f| f.role == FileRole::Dml && f.content_kind == ChangeKind::Logic)
            && mine.iter().all(|f| {
                f.content_kind == ChangeKind::Cosmetic
                    || (f.role == FileRole::Dml && f.content_kind == ChangeKind::Logic)
            })
    };
    let report = super::upgrade_check::upgrade_check(
        ctx,
        pipelines,
        &super::upgrade_check::UpgradeCheckRequest {
            change: super::changes::ChangeRequest {
                include_uncommitted: changes.include_uncommitted || include_uncommitted,
                ..changes.clone()
            },
            tables: Vec::new(),
            engine: super::upgrade_check::Engine::Auto,
            allow_unknown,
            empirical: false,
            timeout: None,
        },
    )?;
    let mut out = Vec::new();
    for s in &report.statements {
        for t in &s.tables {
            if !req.seeds.contains(t) {
                continue;
            }
            let table = project.inventory.tables.get(t);
            let derived = table.is_some_and(|x| {
                matches!(
                    x.ddl_kind,
                    Some(SqlKind::Ctas | SqlKind::CreateMaterializedTable)
                )
            });
            let upsert = table.is_some_and(crate::deploy::spec::takes_updates);
            let (in_place, reason) = match s.verdict {
                Verdict::Stateless | Verdict::StateCompatible if derived => (
                    false,
                    format!("{}, but its query is its schema (CTAS or materialized table)", s.verdict),
                ),
                Verdict::Stateless | Verdict::StateCompatible if !only_its_logic(t) => (
                    false,
                    format!("{}, but more than its DML changed (DDL, options or .properties): its readers need a new version", s.verdict),
                ),
                Verdict::Stateless if savepoints => (
                    true,
                    "stateless: the deploy starts its new statement from the old job's offsets (restart (offsets)), and its readers keep reading it (rows already written keep the old logic)".into(),
                ),
                Verdict::Stateless if !carries_offsets => (
                    false,
                    "stateless, but this target cannot restart a changed statement from its offsets".into(),
                ),
                Verdict::Stateless if upsert => (
                    false,
                    "stateless, but its sink takes updates: offsets cannot be carried over into it".into(),
                ),
                Verdict::Stateless => (
                    true,
                    "stateless: its new statement takes over the old one's offsets in place, and its readers keep reading it (rows already written keep the old logic)".into(),
                ),
                Verdict::StateCompatible if savepoints => (
                    true,
                    "state-compatible: the deploy starts its new statement from the old job's savepoint with its state (upgrade (savepoint)), and its readers keep reading it".into(),
                ),
                Verdict::StateCompatible => (
                    false,
                    "state-compatible, but Confluent Cloud exposes no savepoints to restore into new SQL".into(),
                ),
                v => (false, format!("{v}: {}", s.reasons.first().cloned().unwrap_or_default())),
            };
            if in_place {
                req.seeds.retain(|x| x != t);
                req.seed_reasons.remove(t);
            }
            out.push(InPlace {
                table_name: t.clone(),
                verdict: s.verdict,
                in_place,
                reason,
            });
        }
    }
    Ok(out)
}

/// `project update-tables-version`: the listed tables and their descendants get their next version.
///
/// Errors: as [`blue_green`], and an unreadable table list.
pub fn update_tables_version(
    ctx: &Context,
    pipelines: &Path,
    table_list: &Path,
    default_version: &str,
    apply: bool,
    allow_unknown: bool,
) -> Result<Versioned, OpsError> {
    check_suffix(default_version)?;
    let cfg = ctx.project_config(pipelines)?;
    let project = loaded(ctx, &cfg, pipelines, allow_unknown, apply)?;
    let seeds = ctx.resolve_tables(&project, &super::scope::read_table_list(table_list)?)?;
    let req = VersionRequest {
        seed_reasons: seeds
            .iter()
            .map(|s| (s.clone(), "listed".to_string()))
            .collect(),
        seeds,
        default_suffix: default_version.to_string(),
        ..Default::default()
    };
    run(
        ctx,
        &cfg,
        &project,
        &req,
        pipelines,
        apply,
        allow_unknown,
        None,
    )
}

/// `--default-version` must be `_v<digits>` (a usage error otherwise).
fn check_suffix(suffix: &str) -> Result<(), OpsError> {
    versioning::names::next_version("t", suffix)
        .map(|_| ())
        .map_err(OpsError::Usage)
}

/// The project, checked for errors; with `apply`, what killed runs left in the tree is cleaned up
/// first ([`Context::recover_tree`]), since the files are about to be rewritten.
fn loaded(
    ctx: &Context,
    cfg: &Config,
    pipelines: &Path,
    allow_unknown: bool,
    apply: bool,
) -> Result<Project, OpsError> {
    if apply {
        ctx.recover_tree(pipelines, None)?;
    }
    let project = ctx.load_project(cfg, pipelines, allow_unknown)?;
    if project.has_errors() {
        return Err(OpsError::Refused(
            "the project has errors (above): fix them before versioning".into(),
        ));
    }
    if apply {
        ctx.recover_tree(pipelines, Some(&project.diagnostics))?;
    }
    Ok(project)
}

#[allow(clippy::too_many_arguments)]
fn run(
    ctx: &Context,
    cfg: &Config,
    project: &Project,
    req: &VersionRequest,
    pipelines: &Path,
    apply: bool,
    allow_unknown: bool,
    baseline: Option<Baseline>,
) -> Result<Versioned, OpsError> {
    let naming = StatementNaming::from_config(cfg);
    let plan = versioning::plan_versions(project, cfg, &naming, req)?;
    for e in &plan.edits {
        for n in &e.notes {
            ctx.console
                .warn(&format!("warning[storage]: {}: {n}", e.file));
        }
    }
    let applied = apply && !plan.edits.is_empty();
    let mut recorded = None;
    if applied {
        // SIGINT from here on is caught: the SQL files and the metadata change together or not at all.
        let sigint = crate::fsutil::catch_sigint();
        let command = if baseline.is_some() {
            "flinkpipe pipeline blue-green --apply"
        } else {
            "flinkpipe project update-tables-version"
        };
        // The SQL files and the blue-green record change in one batch (a kill leaves both old or both
        // new); the record is computed from the blue project and the renames, before any write.
        let record_path = BlueGreenRecord::path(pipelines);
        let record_before = match std::fs::read_to_string(&record_path) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(OpsError::Refused(format!(
                    "cannot read {}: {e}; nothing was changed",
                    record_path.display()
                )));
            }
        };
        let (record, release) = record_release(
            pipelines,
            &|g| facts_from_blue(project, &plan, g),
            &naming,
            &plan,
            baseline.as_ref(),
        )?;
        versioning::apply(
            &plan,
            pipelines,
            command,
            &[(record_path.clone(), record.to_text())],
        )
        .map_err(|e| match e {
            versioning::VersionError::Interrupted { committed } => {
                OpsError::Interrupted { committed }
            }
            e => e.into(),
        })?;
        // The metadata follows: if the rebuild fails, the SQL files and the record go back.
        let rebuilt = ctx
            .load_project(cfg, pipelines, allow_unknown)
            .and_then(|p| {
                if sigint.received() {
                    return Err(OpsError::Interrupted { committed: false });
                }
                if p.has_errors() {
                    return Err(OpsError::Refused(
                        "the rewritten project has errors (above); nothing was changed".into(),
                    ));
                }
                super::metadata::write_metadata_with(&p, pipelines, command, Vec::new())?;
                Ok(())
            });
        match rebuilt {
            Ok(()) => recorded = Some(release),
            // Interrupted while the metadata was being replaced: it was finished.
            Err(e @ OpsError::Interrupted { committed: true }) => {
                return Err(e);
            }
            Err(e) => {
                let mut stuck = versioning::restore(&plan);
                let put_back = match &record_before {
                    Some(text) => crate::fsutil::write_atomic(&record_path, text.as_bytes()),
                    None => std::fs::remove_file(&record_path),
                };
                if put_back.is_err() {
                    stuck.push(record_path.display().to_string());
                }
                if !stuck.is_empty() {
                    return Err(OpsError::RestoreFailed {
                        cause: e.to_string(),
                        stuck,
                    });
                }
                return Err(e);
            }
        }
    } else if apply && plan.edits.is_empty() && !plan.unchanged.is_empty() {
        recorded = rebuild_missing_record(
            ctx,
            project,
            &naming,
            req,
            &plan,
            pipelines,
            baseline.as_ref(),
        )?;
    }
    Ok(Versioned {
        plan,
        apply,
        applied,
        baseline_ref: baseline.map(|b| b.base_ref),
        recorded,
        in_place: Vec::new(),
    })
}

/// A tree whose tables already carry their next version against the base (a `blue-green --apply`
/// was killed before it recorded its release, by a version of flinkpipe that wrote the record apart,
/// or the record was lost) and no release of `pipelines/blue_green.json` names them: the release is
/// rebuilt from the tree (green tables) and the base names, and written (atomically). Returns it, or
/// `None` when a release already names them.
///
/// Errors: the record cannot be read or written; a cycle among the green tables.
fn rebuild_missing_record(
    ctx: &Context,
    project: &Project,
    naming: &StatementNaming,
    req: &VersionRequest,
    plan: &VersionPlan,
    pipelines: &Path,
    baseline: Option<&Baseline>,
) -> Result<Option<Release>, OpsError> {
    if req.base_of.is_empty() {
        return Ok(None);
    }
    let record = BlueGreenRecord::read(pipelines)?;
    let recorded = record.releases.iter().any(|r| {
        r.tables
            .iter()
            .any(|t| req.base_of.contains_key(&t.green_table_name))
    });
    if recorded {
        return Ok(None);
    }
    let green: std::collections::BTreeSet<String> = req.base_of.keys().cloned().collect();
    let mut rebuilt = VersionPlan {
        renames: req
            .base_of
            .iter()
            .map(|(head, base)| (base.clone(), head.clone()))
            .collect(),
        unchanged: plan.unchanged.clone(),
        edits: Vec::new(),
        green: Vec::new(),
    };
    for (wave, names) in project.graph.waves(Some(&green))?.into_iter().enumerate() {
        for name in names {
            rebuilt.green.push(versioning::GreenNode {
                blue_table_name: req.base_of[&name].clone(),
                table_name: name,
                wave,
                ddl_statement_name: None,
                dml_statement_name: None,
                blue_dml_statement_name: None,
                parents: Vec::new(),
                reason: "already versioned against the base; release record rebuilt".into(),
            });
        }
    }
    let (record, release) = record_release(
        pipelines,
        &|g| GreenFacts::from_green(project, g),
        naming,
        &rebuilt,
        baseline,
    )?;
    let path = BlueGreenRecord::path(pipelines);
    crate::fsutil::write_atomic_synced(&path, record.to_text().as_bytes())
        .map_err(|e| OpsError::Refused(format!("cannot write {}: {e}", path.display())))?;
    ctx.console.note(&format!(
        "note: the tables were already versioned against the base but {} recorded no release for them: rebuilt it ({} table(s))",
        path.display(),
        release.tables.len()
    ));
    Ok(Some(release))
}

/// The base of a blue-green versioning.
#[derive(Debug, Clone)]
struct Baseline {
    base_ref: String,
    base_commit: String,
}

/// The facts of green table `green`, read from the blue project before the rewrite (the green table is
/// the blue one renamed, its owner renamed too when it is versioned).
fn facts_from_blue(project: &Project, plan: &VersionPlan, green: &str) -> Option<GreenFacts> {
    let blue = plan
        .renames
        .iter()
        .find(|(_, g)| g.as_str() == green)
        .map(|(b, _)| b.as_str())?;
    let t = project.inventory.tables.get(blue)?;
    let owner_blue = t.written_by.as_deref().unwrap_or(&t.name);
    let owner = project.inventory.tables.get(owner_blue);
    let owner_green = plan
        .renames
        .get(owner_blue)
        .cloned()
        .unwrap_or_else(|| owner_blue.to_string());
    Some(GreenFacts::of(t, owner, owner_green))
}

/// The record with a new release for `plan` appended, and that release. Statement names are those of
/// the configuration in effect; `facts(green table)` tells what each green table has.
fn record_release(
    pipelines: &Path,
    facts: &dyn Fn(&str) -> Option<GreenFacts>,
    naming: &StatementNaming,
    plan: &VersionPlan,
    baseline: Option<&Baseline>,
) -> Result<(BlueGreenRecord, Release), OpsError> {
    let mut record = BlueGreenRecord::read(pipelines)?;
    record.format = 1;
    let blue_of = |green: &str| -> String {
        plan.renames
            .iter()
            .find(|(_, g)| g.as_str() == green)
            .map(|(b, _)| b.clone())
            .unwrap_or_else(|| green.to_string())
    };
    let tables = plan
        .green
        .iter()
        .filter_map(|g| {
            let f = facts(&g.table_name)?;
            // The blue table had the same files: its statements carry the blue names (a statement set
            // that writes it is named after its writer's blue name).
            let statements = |blue: bool| -> Vec<RecordedStatement> {
                if blue {
                    f.statements(naming, &g.blue_table_name, &blue_of(&f.owner))
                } else {
                    f.statements(naming, &g.table_name, &f.owner)
                }
            };
            let blue_statements = statements(true);
            let mut green_statements = statements(false);
            green_statements.reverse();
            Some(GreenTable {
                blue_table_name: g.blue_table_name.clone(),
                green_table_name: g.table_name.clone(),
                product_name: f.product.clone(),
                blue_statements,
                green_statements,
                reason: g.reason.clone(),
            })
        })
        .collect();
    let release = Release {
        created_at: super::now_utc(),
        base_ref: baseline.map(|b| b.base_ref.clone()),
        base_commit: baseline.map(|b| b.base_commit.clone()),
        statement_prefix: naming.prefix.clone(),
        tables,
        decommissioned: Vec::new(),
        rolled_back: Vec::new(),
    };
    record.releases.push(release.clone());
    Ok((record, release))
}
