//! Scaffolding: new projects (`project init`) and new table folders (`table init`) from the templates of
//! [`templates`], following the naming convention of [`naming`] (which also lints existing trees).
//!
//! Both operations are all-or-nothing and never overwrite: every target path is checked first, and any
//! existing file aborts with [`ScaffoldError::Exists`] before anything is written; files are then created
//! with `create_new`, so a file appearing in between is not clobbered either.

pub mod naming;
pub mod templates;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::inventory::Inventory;
use crate::project::{Layout, scan};
use naming::{Convention, Layer, NameError, TableNaming};
use templates::{TemplateError, Templates};

/// Why scaffolding failed. Nothing was written in any case but [`ScaffoldError::Write`].
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// Files that would be overwritten.
    #[error("refusing to overwrite existing file(s): {}", .0.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    Exists(Vec<PathBuf>),
    /// The table, project or product name is not a plain identifier.
    #[error(transparent)]
    Name(#[from] NameError),
    /// A template is unreadable or has an unknown placeholder.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// `LAYER` is not one of the layers.
    #[error(
        "unknown layer '{0}': use sources, intermediates, dimensions, facts, views or seeds, or a folder <layer>[/<product>] of the pipelines folder"
    )]
    UnknownLayer(String),
    /// A table folder path (shift_left's `TABLE_PATH`) that is not `<layer>[/<product>]` inside the
    /// pipelines folder, or whose product differs from `--product-name`.
    #[error("table path '{path}': {reason}")]
    TablePath { path: String, reason: String },
    /// A non-source table was asked for without `--source`.
    #[error("a table in {layer} reads other tables: name them with --source TABLE (repeatable)")]
    SourceRequired { layer: &'static str },
    /// A `--source` that the project does not define.
    #[error(
        "--source '{name}': no table of the project (or of seeds/external_tables.json) has this name"
    )]
    UnknownSource { name: String },
    /// The pipelines folder does not exist.
    #[error("no pipelines folder at {0} (use --pipelines DIR or $PIPELINES)")]
    NoPipelines(PathBuf),
    /// The pipelines folder could not be scanned (to check `--source`).
    #[error("cannot scan {path}: {message}")]
    Scan { path: PathBuf, message: String },
    /// Writing a file failed (files written before it stay).
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The layout of a new project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectType {
    /// `pipelines/<layer>/` (tables may still be grouped by product below the layer).
    Kimball,
    /// `pipelines/<layer>/<product>/` for every product.
    DataProduct,
}

/// Request of `project init`.
#[derive(Debug, Clone)]
pub struct ProjectInit {
    /// Project name: the folder created under `parent`.
    pub name: String,
    /// Where the project folder is created.
    pub parent: PathBuf,
    /// Folder layout.
    pub project_type: ProjectType,
    /// Products (written to `app.products`; one folder per layer for [`ProjectType::DataProduct`]).
    pub products: Vec<String>,
}

/// Files created by an operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    /// The project root (project init) or table folder (table init).
    pub root: PathBuf,
    /// Created files relative to `root`, sorted.
    pub files: Vec<String>,
}

/// Default product of a data-product project (shift_left's `data_product_1`).
pub const DEFAULT_PRODUCT: &str = "data_product_1";

/// Creates a project: `config.yaml` (commented, shift_left's keys), `.gitignore`, `README.md` and the
/// layer folders (`pipelines/<layer>/.gitkeep`, or `pipelines/<layer>/<product>/.gitkeep`).
///
/// Errors: invalid name or product, existing files, unreadable override templates, write errors.
pub fn init_project(req: &ProjectInit) -> Result<Created, ScaffoldError> {
    naming::check_folder_name(&req.name)?;
    for p in &req.products {
        naming::check_identifier(p, "product")?;
    }
    let root = req.parent.join(&req.name);
    let tpl = Templates::new(Some(&root));
    let first = req.products.first();
    let vars: BTreeMap<&str, String> = [
        ("project", req.name.clone()),
        (
            "project_type",
            match req.project_type {
                ProjectType::Kimball => "kimball",
                ProjectType::DataProduct => "data_product",
            }
            .to_string(),
        ),
        ("products", req.products.join(", ")),
        (
            "product_flag",
            first.map(|p| format!(" --product {p}")).unwrap_or_default(),
        ),
        (
            "example_source",
            naming::table_naming(Layer::Source, first.map(String::as_str), "orders")?.table,
        ),
    ]
    .into_iter()
    .collect();
    let mut files: Vec<(String, String)> = vec![
        (
            "config.yaml".into(),
            tpl.render("project/config.yaml", &vars)?,
        ),
        (".gitignore".into(), tpl.render("project/gitignore", &vars)?),
        ("README.md".into(), tpl.render("project/README.md", &vars)?),
    ];
    for layer in Layer::ALL {
        match req.project_type {
            ProjectType::Kimball => files.push((
                format!("pipelines/{}/.gitkeep", layer.folder()),
                String::new(),
            )),
            ProjectType::DataProduct => {
                for p in &req.products {
                    files.push((
                        format!("pipelines/{}/{p}/.gitkeep", layer.folder()),
                        String::new(),
                    ));
                }
            }
        }
    }
    write_new(&root, &root, files)
}

/// `table init`'s second argument: a layer (`sources`, `fact`, a folder of `flinkpipe.layers`), or, as
/// shift_left 0.1.52 reads its `TABLE_PATH`, the folder the table folder goes in — `<layer>` or
/// `<layer>/<product>`, relative to the pipelines folder or an absolute path inside it
/// (`$PIPELINES/sources/p1`). Returns the layer and the product the path names.
///
/// Errors: a path outside the pipelines folder, or deeper than `<layer>/<product>`.
pub fn split_table_path(
    pipelines: &Path,
    arg: &str,
) -> Result<(String, Option<String>), ScaffoldError> {
    if !arg.contains('/') && !arg.contains(std::path::MAIN_SEPARATOR) {
        return Ok((arg.to_string(), None));
    }
    let bad = |reason: String| ScaffoldError::TablePath {
        path: arg.to_string(),
        reason,
    };
    let given = Path::new(arg);
    let rel: PathBuf = if given.is_absolute() {
        let root = pipelines
            .canonicalize()
            .unwrap_or_else(|_| pipelines.to_path_buf());
        // The folder may not exist yet: resolve its deepest existing ancestor.
        let mut existing = given.to_path_buf();
        let mut tail = Vec::new();
        while !existing.exists() {
            match (
                existing.file_name().map(|n| n.to_os_string()),
                existing.parent(),
            ) {
                (Some(n), Some(p)) => {
                    tail.push(n);
                    existing = p.to_path_buf();
                }
                _ => break,
            }
        }
        let mut full = existing.canonicalize().unwrap_or(existing);
        full.extend(tail.iter().rev());
        full.strip_prefix(&root)
            .map(Path::to_path_buf)
            .map_err(|_| {
                bad(format!(
                    "not inside the pipelines folder {}",
                    root.display()
                ))
            })?
    } else {
        given.to_path_buf()
    };
    let parts: Vec<String> = rel
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .map(|c| match c {
            std::path::Component::Normal(n) => Ok(n.to_string_lossy().into_owned()),
            _ => Err(bad(
                "use a folder inside the pipelines folder (no '..')".into()
            )),
        })
        .collect::<Result<_, _>>()?;
    match parts.as_slice() {
        [layer] => Ok((layer.clone(), None)),
        [layer, product] => Ok((layer.clone(), Some(product.clone()))),
        _ => Err(bad(
            "a table goes in <layer> or <layer>/<product> of the pipelines folder".into(),
        )),
    }
}

/// Request of `table init`.
#[derive(Debug, Clone)]
pub struct TableInit {
    /// The project's pipelines folder (its parent is the project root: `templates/`, `config.yaml`).
    pub pipelines: PathBuf,
    /// Table name, with or without the convention's prefix (`orders`, `src_sales_orders`).
    pub name: String,
    /// Layer folder or type (`sources`, `fact`, …, or a folder mapped in `flinkpipe.layers`), or
    /// the folder `<layer>[/<product>]` the table goes in ([`split_table_path`]).
    pub layer: String,
    /// The product (`None` or `"None"`: directly under the layer folder).
    pub product: Option<String>,
    /// Tables the DML reads (required outside sources and seeds).
    pub sources: Vec<String>,
}

/// Which deploy target the DDL of a new table is written for (`table init` follows the project's
/// target, [`crate::ops::target::TargetKind`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DdlStyle {
    /// Confluent Cloud: no `'connector'` (a table is its topic), `DISTRIBUTED BY`, `changelog.mode`,
    /// `kafka.cleanup-policy`, Avro-registry formats with the environment's schema context
    /// (`templates/table/ddl.sql`).
    Confluent,
    /// An Apache Flink SQL Gateway: `upsert-kafka` (a table with a primary key) or `kafka` (a source:
    /// an append-only topic, no key), `'topic'` = the table name, JSON formats, the broker the cluster
    /// reaches (`templates/table/ddl_gateway.sql`, `ddl_gateway_source.sql`).
    Gateway {
        /// `properties.bootstrap.servers`.
        bootstrap_servers: String,
    },
}

pub use crate::scan::layout::TODO_MARKER;

/// What `table init` created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedTable {
    /// The table name and folder name.
    pub naming: TableNaming,
    /// The table folder and its new files.
    pub created: Created,
}

/// Creates a table folder: `sql-scripts/ddl.<table>.sql`, `sql-scripts/dml.<table>.sql` (not for a
/// source without `--source`), `tests/README.md` and a `Makefile` calling flinkpipe.
///
/// The DDL is Confluent-style: `CREATE TABLE IF NOT EXISTS` with `PRIMARY KEY … NOT ENFORCED`,
/// `DISTRIBUTED BY HASH(id) INTO 1 BUCKETS` and the layer's `changelog.mode` / `kafka.cleanup-policy`.
/// The DML selects the template's columns from the `--source` tables (joined on `id` when several); a
/// seed without source gets an `INSERT … VALUES`.
///
/// Errors: no pipelines folder, unknown layer, invalid name, missing or unknown source, existing files.
pub fn init_table(
    req: &TableInit,
    cfg: &Config,
    style: &DdlStyle,
) -> Result<CreatedTable, ScaffoldError> {
    if !req.pipelines.is_dir() {
        return Err(ScaffoldError::NoPipelines(req.pipelines.clone()));
    }
    let layout = Layout::with_overrides(&cfg.flinkpipe.layers);
    let (layer_arg, path_product) = split_table_path(&req.pipelines, &req.layer)?;
    let (layer, folder) =
        if layout.is_layer(&layer_arg) && cfg.flinkpipe.layers.contains_key(&layer_arg) {
            let l = Layer::parse(layout.table_type(&layer_arg))
                .ok_or_else(|| ScaffoldError::UnknownLayer(req.layer.clone()))?;
            (l, layer_arg.clone())
        } else {
            let l = Layer::parse(&layer_arg)
                .ok_or_else(|| ScaffoldError::UnknownLayer(req.layer.clone()))?;
            (l, l.folder().to_string())
        };
    if let (Some(given), Some(in_path)) = (&req.product, &path_product)
        && given != in_path
    {
        return Err(ScaffoldError::TablePath {
            path: req.layer.clone(),
            reason: format!("its product folder is '{in_path}', --product-name says '{given}'"),
        });
    }
    let product = req
        .product
        .as_deref()
        .or(path_product.as_deref())
        .filter(|p| *p != crate::scan::layout::NO_PRODUCT);
    let naming = Convention::from_config(cfg).table_naming(layer, product, &req.name)?;
    if req.sources.is_empty() && !matches!(layer, Layer::Source | Layer::Seed) {
        return Err(ScaffoldError::SourceRequired {
            layer: layer.folder(),
        });
    }
    let mut source_keys: Vec<SourceKeys> = Vec::new();
    if !req.sources.is_empty() {
        let scanned = scan(&req.pipelines, &layout).map_err(|e| ScaffoldError::Scan {
            path: req.pipelines.clone(),
            message: e.to_string(),
        })?;
        let inv = Inventory::build(&scanned, cfg);
        for s in &req.sources {
            naming::check_identifier(s, "table")?;
            if !inv.tables.contains_key(s) {
                return Err(ScaffoldError::UnknownSource { name: s.clone() });
            }
        }
        source_keys = req
            .sources
            .iter()
            .map(|s| key_columns_of(&scanned, &inv, s))
            .collect();
    }

    let mut rel = PathBuf::from(&folder);
    if let Some(p) = product {
        rel.push(p);
    }
    rel.push(&naming.folder);
    let depth = rel.components().count();
    let conv = Convention::from_config(cfg);
    let root = req.pipelines.parent().filter(|p| !p.as_os_str().is_empty());
    let tpl = Templates::new(Some(root.unwrap_or(Path::new("."))));
    let mut vars = table_vars(
        &naming.table,
        layer,
        &folder,
        product,
        &req.sources,
        depth,
        &conv,
        cfg,
    );
    if req.sources.len() > 1 {
        vars.insert("from_clause", join_clause(&req.sources, &source_keys));
    }
    let ddl_template = match style {
        DdlStyle::Confluent => "table/ddl.sql",
        DdlStyle::Gateway { bootstrap_servers } => {
            vars.insert("bootstrap_servers", bootstrap_servers.clone());
            if layer == Layer::Source {
                "table/ddl_gateway_source.sql"
            } else {
                "table/ddl_gateway.sql"
            }
        }
    };

    let t = &naming.table;
    let mut files = vec![
        (
            format!("sql-scripts/ddl.{t}.sql"),
            tpl.render(ddl_template, &vars)?,
        ),
        (
            "Makefile".to_string(),
            makefile_with_marker(&tpl.render("table/Makefile", &vars)?),
        ),
        (
            "tests/README.md".to_string(),
            tpl.render("table/tests/README.md", &vars)?,
        ),
    ];
    if !req.sources.is_empty() {
        files.push((
            format!("sql-scripts/dml.{t}.sql"),
            tpl.render("table/dml.sql", &vars)?,
        ));
    } else if layer == Layer::Seed {
        files.push((
            format!("sql-scripts/dml.{t}.sql"),
            tpl.render("table/dml_values.sql", &vars)?,
        ));
    }
    let created = write_new(&req.pipelines, &req.pipelines.join(&rel), files)?;
    Ok(CreatedTable { naming, created })
}

/// The columns of a source a join may use: its primary key, and its key-like columns (`id`,
/// `*_id`, `*_key`) in declaration order.
#[derive(Debug, Clone, Default)]
struct SourceKeys {
    primary_key: Vec<String>,
    key_like: Vec<String>,
}

/// The key columns of table `name` from its DDL (a table without a readable DDL has none).
fn key_columns_of(scanned: &crate::scan::ScanResult, inv: &Inventory, name: &str) -> SourceKeys {
    let Some(t) = inv.tables.get(name) else {
        return SourceKeys::default();
    };
    let ddl = scanned
        .folders
        .iter()
        .find(|f| Some(&f.rel) == Some(&t.folder))
        .and_then(|f| f.ddl.as_ref());
    let Some(st) = ddl.and_then(|d| {
        d.analysis
            .statements
            .iter()
            .find(|s| s.kind.creates_relation() && !s.columns.is_empty())
    }) else {
        return SourceKeys::default();
    };
    let key_like = st
        .columns
        .iter()
        .map(|c| c.name.clone())
        .filter(|c| {
            let l = c.to_ascii_lowercase();
            st.primary_key.contains(c) || l == "id" || l.ends_with("_id") || l.ends_with("_key")
        })
        .collect();
    SourceKeys {
        primary_key: st.primary_key.clone(),
        key_like,
    }
}

/// The FROM clause joining several sources: on their shared primary key when every source has the
/// same one, else on the key-like columns every source has (in the first source's order); with
/// none, on `TRUE` with a [`TODO_MARKER`] comment to replace.
fn join_clause(sources: &[String], keys: &[SourceKeys]) -> String {
    let first_pk = keys
        .first()
        .map(|k| k.primary_key.clone())
        .unwrap_or_default();
    let shared_pk = !first_pk.is_empty() && keys.iter().all(|k| k.primary_key == first_pk);
    let on: Vec<String> = if shared_pk {
        first_pk
    } else {
        keys.first()
            .map(|k| {
                k.key_like
                    .iter()
                    .filter(|c| keys.iter().all(|o| o.key_like.contains(c)))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut from = format!("{} AS t1", sources[0]);
    for (i, s) in sources.iter().enumerate().skip(1) {
        let a = format!("t{}", i + 1);
        if on.is_empty() {
            // The comment comes first: after the condition it would swallow the template's `;`.
            from.push_str(&format!(
                "\n  -- {TODO_MARKER}: these sources share no key column; write the join condition\n  LEFT JOIN {s} AS {a} ON TRUE"
            ));
        } else {
            let cond: Vec<String> = on.iter().map(|c| format!("{a}.{c} = t1.{c}")).collect();
            from.push_str(&format!(
                "\n  LEFT JOIN {s} AS {a} ON {}",
                cond.join(" AND ")
            ));
        }
    }
    from
}

/// The line below which a table `Makefile`'s own targets live: `table update-makefile` regenerates
/// everything above it from the template and keeps everything below it.
pub const USER_TARGETS_MARKER: &str =
    "# --- flinkpipe: your targets below (kept by table update-makefile) ---";

/// A table `Makefile` as `table init` and `table update-makefile` write it: the template's text, a
/// blank line and [`USER_TARGETS_MARKER`], below which the user's own targets are kept by updates.
pub fn makefile_with_marker(fresh: &str) -> String {
    let mut text = fresh.trim_end_matches('\n').to_string();
    text.push_str("\n\n");
    text.push_str(USER_TARGETS_MARKER);
    text.push('\n');
    text
}

/// The `Makefile` of an existing table folder, rendered from the current `table/Makefile` template
/// (the project's override under `<project>/templates/` wins), for `table update-makefile`.
/// `folder_rel` is the table folder relative to the pipelines folder (`facts/p1/fct_order`); its
/// first component is the layer folder. `table_type` and `product` are the inventory's (`"None"`: no
/// product). `sources` fill the template's `{{sources}}` (the table's parents).
///
/// Errors: a table type that is no layer of the convention, a template that is unreadable or has an
/// unknown placeholder.
pub fn table_makefile(
    pipelines: &Path,
    folder_rel: &Path,
    table: &str,
    table_type: &str,
    product: &str,
    sources: &[String],
    cfg: &Config,
) -> Result<String, ScaffoldError> {
    let layer =
        Layer::parse(table_type).ok_or_else(|| ScaffoldError::UnknownLayer(table_type.into()))?;
    let folder = folder_rel
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_else(|| layer.folder().to_string());
    let product = Some(product).filter(|p| *p != crate::scan::layout::NO_PRODUCT);
    let conv = Convention::from_config(cfg);
    let root = pipelines.parent().filter(|p| !p.as_os_str().is_empty());
    let tpl = Templates::new(Some(root.unwrap_or(Path::new("."))));
    let vars = table_vars(
        table,
        layer,
        &folder,
        product,
        sources,
        folder_rel.components().count(),
        &conv,
        cfg,
    );
    Ok(tpl.render("table/Makefile", &vars)?)
}

#[allow(clippy::too_many_arguments)]
fn table_vars(
    table: &str,
    layer: Layer,
    folder: &str,
    product: Option<&str>,
    sources: &[String],
    depth: usize,
    conv: &Convention,
    cfg: &Config,
) -> BTreeMap<&'static str, String> {
    const COLUMNS: [&str; 3] = ["id", "payload", "updated_at"];
    let (select_list, from_clause) = match sources {
        [] => (String::new(), String::new()),
        [one] => (COLUMNS.join(",\n  "), one.clone()),
        [first, rest @ ..] => {
            let cols: Vec<String> = COLUMNS.iter().map(|c| format!("t1.{c}")).collect();
            let mut from = format!("{first} AS t1");
            for (i, s) in rest.iter().enumerate() {
                let a = format!("t{}", i + 2);
                from.push_str(&format!("\n  LEFT JOIN {s} AS {a} ON {a}.id = t1.id"));
            }
            (cols.join(",\n  "), from)
        }
    };
    [
        ("table", table.to_string()),
        ("layer", folder.to_string()),
        ("layer_type", layer.as_str().to_string()),
        (
            "product",
            product
                .unwrap_or(crate::scan::layout::NO_PRODUCT)
                .to_string(),
        ),
        (
            "of_product",
            product
                .map(|p| format!(" of product {p}"))
                .unwrap_or_default(),
        ),
        ("changelog_mode", conv.changelog_mode(layer).to_string()),
        ("cleanup_policy", conv.cleanup_policy(layer).to_string()),
        ("cluster_type", cfg.kafka.cluster_type.clone()),
        ("sources", sources.join(", ")),
        ("select_list", select_list),
        ("from_clause", from_clause),
        ("pipelines_rel", vec![".."; depth].join("/")),
    ]
    .into_iter()
    .collect()
}

/// Writes `files` (relative to `root`) if none exists yet; returns them sorted. No folder is created
/// and no file written through a symbolic link that leaves `tree` (the project, or the pipelines
/// folder): see [`crate::fsutil::confine`].
fn write_new(
    tree: &Path,
    root: &Path,
    files: Vec<(String, String)>,
) -> Result<Created, ScaffoldError> {
    let existing: Vec<PathBuf> = files
        .iter()
        .map(|(rel, _)| root.join(rel))
        .filter(|p| p.exists())
        .collect();
    if !existing.is_empty() {
        return Err(ScaffoldError::Exists(existing));
    }
    let werr = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ScaffoldError::Write { path, source }
    };
    let confine = crate::fsutil::Confinement::new(tree);
    for (rel, _) in &files {
        let path = root.join(rel);
        confine
            .check_file(&path)
            .map_err(|e| werr(&path)(e.into()))?;
    }
    for (rel, text) in &files {
        let path = root.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(werr(dir))?;
        }
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(werr(&path))?;
        f.write_all(text.as_bytes()).map_err(werr(&path))?;
    }
    let mut names: Vec<String> = files.into_iter().map(|(r, _)| r).collect();
    names.sort();
    Ok(Created {
        root: root.to_path_buf(),
        files: names,
    })
}

#[cfg(test)]
mod table_path_tests {
    use super::split_table_path;
    use std::path::Path;

    /// A layer, a `<layer>/<product>` folder (relative or absolute inside the pipelines folder, which
    /// need not exist yet) and nothing else.
    #[test]
    fn a_table_path_is_a_layer_and_maybe_a_product() {
        let dir = tempfile::tempdir().unwrap();
        let pipelines = dir.path().join("pipelines");
        std::fs::create_dir_all(pipelines.join("sources")).unwrap();
        let split = |a: &str| split_table_path(&pipelines, a).map_err(|e| e.to_string());
        assert_eq!(split("facts"), Ok(("facts".into(), None)));
        assert_eq!(
            split("sources/p1"),
            Ok(("sources".into(), Some("p1".into())))
        );
        assert_eq!(
            split("./sources/p1/"),
            Ok(("sources".into(), Some("p1".into())))
        );
        let abs = pipelines.join("sources/p1");
        assert_eq!(
            split(abs.to_str().unwrap()),
            Ok(("sources".into(), Some("p1".into())))
        );
        let abs = pipelines.join("dimensions");
        assert_eq!(
            split(abs.to_str().unwrap()),
            Ok(("dimensions".into(), None))
        );
        for bad in ["sources/p1/x", "../sources", "/elsewhere/sources"] {
            let e = split(bad).unwrap_err();
            assert!(e.contains(&format!("table path '{bad}'")), "{e}");
        }
        assert!(Path::new(&pipelines).is_dir());
    }
}
