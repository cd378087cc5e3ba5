//! `project update-ut-ddl` (shift_left's command): when tables' DDLs change, the unit-test folders of
//! the tables that read them follow — each foundation DDL of such a table gets its current column list
//! (name and `WITH` kept) and each CSV input of it the table's writable columns (added ones empty,
//! dropped ones removed); SQL inputs (`INSERT … VALUES`, positional) are reported for a hand edit. A
//! unified diff first; with `apply`, every file is written in one all-or-nothing batch.

use super::{Context, OpsError};
use crate::changes::{self, ChangeKind, FileRole};
use crate::fsutil::Batch;
use crate::unittest::definitions::{self, FileType, TestDefinitions};
use crate::unittest::foundations;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The command, as batch markers name it (it also repairs what a killed run left).
const COMMAND: &str = "flinkpipe project update-ut-ddl";

/// What a hand edit of a SQL input (`file`, text `sql`) of `table` needs once its columns are
/// `columns`: an INSERT that names no columns has positional rows (check them against the new
/// columns); one that names columns only needs an edit when it names a column the table no longer
/// has (the columns it does not name are NULL). `None`: nothing to do.
pub fn sql_input_note(file: &str, sql: &str, table: &str, columns: &[String]) -> Option<String> {
    let inserts = crate::sql::columns::insert_column_lists(sql);
    if inserts.is_empty() || inserts.iter().any(|(_, c)| c.is_none()) {
        return Some(format!(
            "{file}: SQL rows of {table} are positional: check them against its new columns ({})",
            columns.join(", ")
        ));
    }
    let mut gone: Vec<&str> = inserts
        .iter()
        .flat_map(|(_, c)| c.iter().flatten())
        .filter(|n| !columns.iter().any(|c| c.eq_ignore_ascii_case(n)))
        .map(String::as_str)
        .collect();
    gone.sort();
    gone.dedup();
    (!gone.is_empty()).then(|| {
        format!(
            "{file}: the INSERT into {table} names column(s) it no longer has: {} (its columns: {})",
            gone.join(", "),
            columns.join(", ")
        )
    })
}

/// Which tables' test copies to bring up to date.
#[derive(Debug, Clone, Default)]
pub struct UpdateUtDdlRequest {
    /// Only these tables (shift_left's `IMPACTED`).
    pub tables: Vec<String>,
    /// The tables whose DDL changed since this ref (shift_left's `--git-branch`).
    pub since: Option<String>,
    /// The tables of this `modified_flink_files.json` / table list (shift_left's
    /// `--modified-files-path`).
    pub modified_files: Option<PathBuf>,
    /// Write the files (otherwise only the diff).
    pub apply: bool,
}

/// One file rewritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UtEdit {
    /// Relative to the pipelines folder's parent (`pipelines/…/tests/ddl_t.sql`).
    pub file: String,
    pub path: PathBuf,
    pub before: String,
    pub after: String,
    /// What changed, in words (`columns added: x; dropped: y`).
    pub note: String,
}

/// What `update-ut-ddl` found and did.
#[derive(Debug, Clone, Default)]
pub struct UtUpdate {
    pub edits: Vec<UtEdit>,
    /// SQL inputs of a changed table that need a hand edit (positional values), with why.
    pub by_hand: Vec<String>,
    /// Whether the files were written.
    pub applied: bool,
}

impl UtUpdate {
    /// A unified diff of every edit.
    pub fn diff(&self) -> String {
        let mut out = String::new();
        for e in &self.edits {
            out.push_str(
                &similar::TextDiff::from_lines(&e.before, &e.after)
                    .unified_diff()
                    .context_radius(2)
                    .header(&format!("a/{}", e.file), &format!("b/{}", e.file))
                    .to_string(),
            );
        }
        out
    }
}

/// Brings the unit-test copies of the selected tables up to date with their DDLs (all tables with a
/// DDL when nothing selects).
///
/// Errors: errors in the project, git errors, an unreadable list, a file that cannot be read or
/// rewritten (nothing is written then).
pub fn update_ut_ddl(
    ctx: &Context,
    pipelines: &Path,
    req: &UpdateUtDdlRequest,
) -> Result<UtUpdate, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    if req.apply {
        ctx.recover_tree(pipelines, None)?;
    }
    let project = ctx.load_valid_project(
        &cfg,
        pipelines,
        false,
        "nothing updated: fix the errors above",
    )?;
    let selection = selected_tables(ctx, &project, pipelines, &cfg, req)?;
    let mut up = Updater {
        parent: pipelines.parent().unwrap_or(pipelines),
        all: selection.is_none(),
        out: UtUpdate::default(),
    };
    for e in walkdir::WalkDir::new(pipelines)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == definitions::FILE_NAME)
    {
        let Some(folder) = e.path().parent().and_then(Path::parent) else {
            continue;
        };
        let defs = TestDefinitions::load(e.path(), &up.rel(e.path()))?;
        for f in &defs.foundations {
            let Some(t) = project.inventory.tables.get(&f.table_name) else {
                continue;
            };
            if selection.as_ref().is_some_and(|s| !s.contains(&t.name)) {
                continue;
            }
            up.foundation(&project, folder, &defs, f, t)?;
        }
    }
    let mut out = up.out;
    if req.apply && !out.edits.is_empty() {
        let batch = Batch::begin(pipelines, COMMAND, COMMAND)?;
        let mut staged = Vec::new();
        for e in &out.edits {
            match batch.stage(&e.path, e.after.as_bytes()) {
                Ok(s) => staged.extend(s),
                Err(err) => {
                    batch.abandon(staged);
                    return Err(err.into());
                }
            }
        }
        batch.commit(staged)?;
        out.applied = true;
    }
    Ok(out)
}

/// The tables `req` names (a table, or a file listing tables: shift_left passes
/// `impacted_tables.json`), those whose DDL changed since `req.since` (beyond formatting) and those
/// of `req.modified_files`; `None` when nothing selects (every table with a DDL).
fn selected_tables(
    ctx: &Context,
    project: &crate::project::Project,
    pipelines: &Path,
    cfg: &crate::config::Config,
    req: &UpdateUtDdlRequest,
) -> Result<Option<BTreeSet<String>>, OpsError> {
    if req.tables.is_empty() && req.since.is_none() && req.modified_files.is_none() {
        return Ok(None);
    }
    let mut selected: BTreeSet<String> = BTreeSet::new();
    for given in &req.tables {
        let path = Path::new(given);
        if path.is_file() {
            let listed = super::scope::read_table_list(path)?;
            selected.extend(ctx.resolve_tables(project, &listed)?);
        } else {
            selected.extend(ctx.resolve_tables(project, std::slice::from_ref(given))?);
        }
    }
    if let Some(r) = &req.since {
        let opts = super::changes::change_options(&super::changes::ChangeRequest {
            since: Some(r.clone()),
            ..Default::default()
        })?;
        let set = changes::list_changes(pipelines, &opts, cfg)?;
        selected.extend(
            set.files
                .iter()
                .filter(|f| f.role == FileRole::Ddl && f.change_kind != ChangeKind::Cosmetic)
                .map(|f| f.new_table_name.clone())
                .filter(|t| project.inventory.tables.contains_key(t)),
        );
    }
    if let Some(f) = &req.modified_files {
        let listed = super::scope::read_table_list(f)?;
        selected.extend(ctx.resolve_tables(project, &listed)?);
    }
    Ok(Some(selected))
}

/// The columns of a plain `CREATE TABLE` (name, type, nullability, computed), `None` for any other
/// DDL (a CTAS's columns come from its query).
type Schema = Vec<(String, String, bool, bool)>;

fn schema(sql: &str) -> Option<Schema> {
    crate::sql::analyze(sql)
        .statements
        .into_iter()
        .find(|s| s.kind == crate::sql::StatementKind::CreateTable)
        .map(|s| {
            s.columns
                .into_iter()
                .map(|c| (c.name, c.data_type, c.nullable, c.computed))
                .collect()
        })
}

/// Collects the edits of one run.
struct Updater<'a> {
    /// The folder above `pipelines/`: file names are shown relative to it.
    parent: &'a Path,
    /// Every table is selected: a table without a column list is skipped silently.
    all: bool,
    out: UtUpdate,
}

impl Updater<'_> {
    fn rel(&self, p: &Path) -> String {
        crate::fsutil::slash_path(p.strip_prefix(self.parent).unwrap_or(p))
    }

    fn read(&self, p: &Path) -> Result<String, OpsError> {
        crate::fsutil::read_user_text(p, crate::fsutil::MAX_SQL_FILE_BYTES)
            .map_err(|e| OpsError::Refused(format!("cannot read {}: {e}", p.display())))
    }

    /// The test copy of table `t`'s DDL (foundation `f` of the tests in `folder`) gets the column
    /// list of its production DDL when the columns changed; then its inputs follow.
    fn foundation(
        &mut self,
        project: &crate::project::Project,
        folder: &Path,
        defs: &TestDefinitions,
        f: &definitions::Foundation,
        t: &crate::inventory::Table,
    ) -> Result<(), OpsError> {
        let Some(ddl_ref) = &t.ddl_ref else {
            return Ok(());
        };
        let production = self.read(&project.inventory.disk_path(ddl_ref))?;
        let Some(path) = definitions::resolve(folder, &f.ddl_for_test) else {
            return Ok(());
        };
        let before = self.read(&path)?;
        // Only a plain CREATE TABLE has a column list to copy; and only a change of the columns
        // rewrites the test copy.
        let Some(wanted) = schema(&production).filter(|c| !c.is_empty()) else {
            if !self.all {
                self.out.by_hand.push(format!(
                    "{}: {} has no CREATE TABLE column list ({ddl_ref}): update its test copy by hand",
                    self.rel(&path),
                    t.name
                ));
            }
            return Ok(());
        };
        if schema(&before).as_ref() == Some(&wanted) {
            return Ok(());
        }
        let after = foundations::with_columns_of(&before, &production)
            .map_err(|m| OpsError::Refused(format!("{}: {m}", self.rel(&path))))?;
        if after != before {
            self.out.edits.push(UtEdit {
                file: self.rel(&path),
                path: path.clone(),
                before,
                after,
                note: format!("column list of {} from {ddl_ref}", t.name),
            });
        }
        let columns: Vec<String> = crate::sql::analyze(&production)
            .statements
            .iter()
            .find(|s| s.kind.creates_relation() && !s.columns.is_empty())
            .map(|s| {
                s.columns
                    .iter()
                    .filter(|c| !c.computed)
                    .map(|c| c.name.clone())
                    .collect()
            })
            .unwrap_or_default();
        if columns.is_empty() {
            return Ok(());
        }
        self.inputs(folder, defs, t, &path, &columns)
    }

    /// The input files of table `t` in the test cases: a CSV gets the new set of columns (added
    /// ones empty); SQL rows, positional, are left to the user with a note when the test copy of the
    /// DDL (`ddl_path`) changed.
    fn inputs(
        &mut self,
        folder: &Path,
        defs: &TestDefinitions,
        t: &crate::inventory::Table,
        ddl_path: &Path,
        columns: &[String],
    ) -> Result<(), OpsError> {
        let mut inputs_done: BTreeSet<PathBuf> = BTreeSet::new();
        for input in defs
            .test_suite
            .iter()
            .flat_map(|c| &c.inputs)
            .filter(|i| i.table_name == t.name)
        {
            let Some(p) = definitions::resolve(folder, &input.file_name) else {
                continue;
            };
            if !inputs_done.insert(p.clone()) || !p.is_file() {
                continue;
            }
            match input.file_type {
                FileType::Csv => {
                    let before = self.read(&p)?;
                    let c = foundations::reshape_csv(&before, columns)
                        .map_err(|m| OpsError::Refused(format!("{}: {m}", self.rel(&p))))?;
                    // Only a change of the set of columns rewrites the file (the runner reads the
                    // columns by their header, in any order).
                    if !c.added.is_empty() || !c.dropped.is_empty() {
                        let mut note = Vec::new();
                        if !c.added.is_empty() {
                            note.push(format!("columns added (empty): {}", c.added.join(", ")));
                        }
                        if !c.dropped.is_empty() {
                            note.push(format!("columns dropped: {}", c.dropped.join(", ")));
                        }
                        self.out.edits.push(UtEdit {
                            file: self.rel(&p),
                            path: p.clone(),
                            before,
                            after: c.text,
                            note: note.join("; "),
                        });
                    }
                }
                FileType::Sql => {
                    let text = self.read(&p)?;
                    let Some(note) = sql_input_note(&self.rel(&p), &text, &t.name, columns) else {
                        continue;
                    };
                    if self.out.edits.iter().any(|e| e.path == ddl_path)
                        && !self.out.by_hand.contains(&note)
                    {
                        self.out.by_hand.push(note);
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::sql_input_note;

    #[test]
    fn only_positional_inserts_or_dropped_named_columns_need_a_hand_edit() {
        let cols: Vec<String> = ["id", "name", "email"].map(String::from).to_vec();
        let note = |sql: &str| sql_input_note("f.sql", sql, "t", &cols);
        assert!(
            note("INSERT INTO t VALUES (1, 'a');")
                .unwrap()
                .contains("positional")
        );
        assert!(
            note("INSERT INTO t (id, name) VALUES (1, 'a');\nINSERT INTO t VALUES (2, 'b', 'c');")
                .unwrap()
                .contains("positional")
        );
        assert_eq!(note("INSERT INTO t (id, name) VALUES (1, 'a');"), None);
        assert_eq!(
            note("INSERT INTO `t` (`ID`, email) VALUES (1, 'a'), (2, 'b');"),
            None
        );
        let n = note("INSERT INTO t (id, phone) VALUES (1, '5');").unwrap();
        assert!(n.contains("names column(s) it no longer has: phone"), "{n}");
        assert!(!n.contains("positional"), "{n}");
        // Not SQL that parses: checked by hand as before.
        assert!(
            note("INSERT INTO t VALUES (")
                .unwrap()
                .contains("positional")
        );
    }
}
