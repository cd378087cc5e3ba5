//! The naming convention of a project and its lint (`flinkpipe table validate-table-names`).
//!
//! Convention (shift_left 0.1.52's `validate-table-names`,
//! <https://github.com/jbcodeforce/shift_left_utils>), per
//! layer with
//! product `p` (without a product the `p` part is left out):
//!
//! | layer | table name | folder | changelog.mode | kafka.cleanup-policy |
//! |---|---|---|---|---|
//! | sources | `src_p_…` | `src_…` | upsert | delete |
//! | intermediates | `int_p_…` | `int_…` | upsert | delete |
//! | dimensions | `p_dim_…` | `dim_…` | retract | compact |
//! | facts | `p_fct_…` | `fct_…` | retract | compact |
//! | views | `p_mv_…` | `mv_…` | retract | compact |
//! | seeds | `seed_p_…` | `seed_…` | upsert | compact |
//!
//! The modes and policies can be changed per layer in `config.yaml` under `flinkpipe.naming`
//! (`changelog_mode: {fact: append}`, `cleanup_policy: {…}`); products are checked against `app.products`
//! (plus `app.accepted_common_products`) when that list is not empty.
//!
//! The lint reports, each with file and line: file names that are not `ddl.<table>.sql` / `dml.<table>.sql`,
//! table names without their layer's prefix, products not configured, DDL without
//! `CREATE TABLE IF NOT EXISTS`, and — for Kafka-backed tables, i.e. without a `'connector'` option —
//! `changelog.mode`, `kafka.cleanup-policy` and the `key.`/`value.avro-registry.schema-context` options.

use std::collections::BTreeMap;

use crate::config::Config;
use crate::diagnostics::Diagnostic;
use crate::inventory::{first_created, first_insert_target};
use crate::scan::layout::NO_PRODUCT;
use crate::scan::{ScanResult, SqlFile, TableFolder};
use crate::sql::{StatementInfo, StatementKind};

/// The layers a table can be created in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// `sources/`: tables fed from outside (topics, connectors).
    Source,
    /// `intermediates/`: cleaning, deduplication, enrichment.
    Intermediate,
    /// `dimensions/`: entities.
    Dimension,
    /// `facts/`: events and aggregates.
    Fact,
    /// `views/`: data products served to consumers.
    View,
    /// `seeds/`: reference data inserted by the project.
    Seed,
}

impl Layer {
    /// Every layer, in deploy order.
    pub const ALL: [Layer; 6] = [
        Layer::Source,
        Layer::Seed,
        Layer::Intermediate,
        Layer::Dimension,
        Layer::Fact,
        Layer::View,
    ];

    /// The layer of a table type or layer folder (`facts`, `fact`, `mv`, …), see
    /// [`crate::graph::canonical_layer`]; `None` for anything else.
    pub fn parse(name: &str) -> Option<Layer> {
        Some(match crate::graph::canonical_layer(name) {
            "source" => Layer::Source,
            "intermediate" => Layer::Intermediate,
            "dimension" => Layer::Dimension,
            "fact" => Layer::Fact,
            "view" => Layer::View,
            "seed" => Layer::Seed,
            _ => return None,
        })
    }

    /// The table type, as in the inventory (`source`, `fact`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Source => "source",
            Layer::Intermediate => "intermediate",
            Layer::Dimension => "dimension",
            Layer::Fact => "fact",
            Layer::View => "view",
            Layer::Seed => "seed",
        }
    }

    /// The standard layer folder under `pipelines/`.
    pub fn folder(self) -> &'static str {
        match self {
            Layer::Source => "sources",
            Layer::Intermediate => "intermediates",
            Layer::Dimension => "dimensions",
            Layer::Fact => "facts",
            Layer::View => "views",
            Layer::Seed => "seeds",
        }
    }

    /// The short marker in table and folder names (`src`, `int`, `dim`, `fct`, `mv`, `seed`).
    pub fn marker(self) -> &'static str {
        match self {
            Layer::Source => "src",
            Layer::Intermediate => "int",
            Layer::Dimension => "dim",
            Layer::Fact => "fct",
            Layer::View => "mv",
            Layer::Seed => "seed",
        }
    }

    /// Whether the product comes after the marker (`src_p_…`) rather than before it (`p_fct_…`).
    fn product_after_marker(self) -> bool {
        matches!(self, Layer::Source | Layer::Intermediate | Layer::Seed)
    }

    /// shift_left's changelog mode of the layer's tables: `upsert` where rows are keyed updates of an
    /// entity (sources, intermediates, seeds), `retract` where aggregates are corrected (facts, dimensions,
    /// views).
    pub fn default_changelog_mode(self) -> &'static str {
        match self {
            Layer::Source | Layer::Intermediate | Layer::Seed => "upsert",
            Layer::Dimension | Layer::Fact | Layer::View => "retract",
        }
    }

    /// shift_left's `kafka.cleanup-policy`: `delete` for sources and intermediates, `compact` for the
    /// latest-value-per-key layers (dimensions, facts, views, seeds).
    pub fn default_cleanup_policy(self) -> &'static str {
        match self {
            Layer::Source | Layer::Intermediate => "delete",
            _ => "compact",
        }
    }
}

/// A table's name and folder under the convention.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableNaming {
    /// `sales_fct_orders`.
    pub table: String,
    /// `fct_orders`.
    pub folder: String,
}

/// The convention in force: per-layer options and the configured products.
#[derive(Debug, Clone)]
pub struct Convention {
    changelog_mode: BTreeMap<Layer, String>,
    cleanup_policy: BTreeMap<Layer, String>,
    /// Accepted products; empty = any.
    products: Vec<String>,
    /// The marker of source table names (`src`): shift_left's `app.src_table_name_prefix` (`src_`)
    /// without its trailing `_`.
    source_marker: String,
}

impl Default for Convention {
    fn default() -> Self {
        Convention {
            changelog_mode: Layer::ALL
                .iter()
                .map(|l| (*l, l.default_changelog_mode().to_string()))
                .collect(),
            cleanup_policy: Layer::ALL
                .iter()
                .map(|l| (*l, l.default_cleanup_policy().to_string()))
                .collect(),
            products: vec![],
            source_marker: Layer::Source.marker().to_string(),
        }
    }
}

impl Convention {
    /// The convention of a configuration: defaults, `flinkpipe.naming` overrides (keys are layer names or
    /// folders; unknown keys ignored), products from `app.products` + `app.accepted_common_products`.
    pub fn from_config(cfg: &Config) -> Self {
        let mut c = Convention::default();
        for (k, v) in &cfg.flinkpipe.naming.changelog_mode {
            if let Some(l) = Layer::parse(k) {
                c.changelog_mode.insert(l, v.clone());
            }
        }
        for (k, v) in &cfg.flinkpipe.naming.cleanup_policy {
            if let Some(l) = Layer::parse(k) {
                c.cleanup_policy.insert(l, v.clone());
            }
        }
        // shift_left's prefix of source table names (`src_`); one that is not an identifier
        // followed by `_` (empty, `-x`) keeps the default.
        if let Some(prefix) = &cfg.app.src_table_name_prefix {
            let marker = prefix.trim_end_matches('_');
            if check_identifier(marker, "table").is_ok() {
                c.source_marker = marker.to_string();
            }
        }
        if !cfg.app.products.is_empty() {
            c.products = cfg
                .app
                .products
                .iter()
                .chain(&cfg.app.accepted_common_products)
                .cloned()
                .collect();
        }
        c
    }

    /// The `changelog.mode` of a layer's tables.
    pub fn changelog_mode(&self, layer: Layer) -> &str {
        &self.changelog_mode[&layer]
    }

    /// The `kafka.cleanup-policy` of a layer's tables.
    pub fn cleanup_policy(&self, layer: Layer) -> &str {
        &self.cleanup_policy[&layer]
    }

    /// The marker of `layer`'s table names: [`Layer::marker`], except for sources, whose marker
    /// follows `app.src_table_name_prefix`.
    pub fn marker(&self, layer: Layer) -> &str {
        match layer {
            Layer::Source => &self.source_marker,
            _ => layer.marker(),
        }
    }

    /// [`expected_prefix`] with this convention's markers.
    pub fn expected_prefix(&self, layer: Layer, product: Option<&str>) -> String {
        prefix_with(self.marker(layer), layer, product)
    }

    /// [`table_naming`] with this convention's markers.
    ///
    /// Errors: an invalid table or product name.
    pub fn table_naming(
        &self,
        layer: Layer,
        product: Option<&str>,
        name: &str,
    ) -> Result<TableNaming, NameError> {
        naming_with(self.marker(layer), layer, product, name)
    }

    /// Whether `product` is accepted (always, when no products are configured).
    pub fn accepts_product(&self, product: &str) -> bool {
        self.products.is_empty() || self.products.iter().any(|p| p == product)
    }
}

/// The prefix every table name of `layer` and `product` starts with: `src_p_`, `p_fct_`, or without a
/// product `src_`, `fct_`.
pub fn expected_prefix(layer: Layer, product: Option<&str>) -> String {
    prefix_with(layer.marker(), layer, product)
}

fn prefix_with(marker: &str, layer: Layer, product: Option<&str>) -> String {
    match product {
        None => format!("{marker}_"),
        Some(p) if layer.product_after_marker() => format!("{marker}_{p}_"),
        Some(p) => format!("{p}_{marker}_"),
    }
}

/// Why a name cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Not `[A-Za-z][A-Za-z0-9_]*`; `what` is `table` or `product`.
    #[error(
        "'{name}' is not a valid {what} name: use letters, digits and underscores, starting with a letter"
    )]
    Invalid {
        /// The name as given.
        name: String,
        /// What it names.
        what: &'static str,
    },
    /// Not a plain folder name.
    #[error("'{0}' is not a valid project name: use letters, digits, '_', '-' and '.'")]
    InvalidFolder(String),
}

/// Checks that a name is a plain identifier (`[A-Za-z][A-Za-z0-9_]*`); `what` (`table`, `product`)
/// names it in the error.
pub fn check_identifier(name: &str, what: &'static str) -> Result<(), NameError> {
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(NameError::Invalid {
            name: name.to_string(),
            what,
        })
    }
}

/// Checks that a project name is one plain folder name: `[A-Za-z0-9_.-]+`, not starting with `.` or `-`.
pub fn check_folder_name(name: &str) -> Result<(), NameError> {
    let ok = !name.is_empty()
        && !name.starts_with(['.', '-'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        Err(NameError::InvalidFolder(name.to_string()))
    }
}

/// The table name and folder for `name` in `layer` and `product`: `orders` (or already `src_sales_orders`,
/// or `src_orders`) in sources of `sales` → table `src_sales_orders`, folder `src_orders`.
pub fn table_naming(
    layer: Layer,
    product: Option<&str>,
    name: &str,
) -> Result<TableNaming, NameError> {
    naming_with(layer.marker(), layer, product, name)
}

fn naming_with(
    marker: &str,
    layer: Layer,
    product: Option<&str>,
    name: &str,
) -> Result<TableNaming, NameError> {
    check_identifier(name, "table")?;
    if let Some(p) = product {
        check_identifier(p, "product")?;
    }
    let full = prefix_with(marker, layer, product);
    let short = format!("{marker}_");
    let base = name
        .strip_prefix(full.as_str())
        .or_else(|| name.strip_prefix(short.as_str()))
        .filter(|b| !b.is_empty())
        .unwrap_or(name);
    Ok(TableNaming {
        table: format!("{full}{base}"),
        folder: format!("{short}{base}"),
    })
}

/// Runs the naming lint over a scanned tree. Findings are errors with code `naming-file`,
/// `naming-table`, `naming-product`, `naming-if-not-exists`, `naming-changelog-mode`,
/// `naming-cleanup-policy` or `naming-schema-context`, each with file and line; sorted by file and line.
pub fn lint(scan: &ScanResult, conv: &Convention) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for f in &scan.folders {
        lint_folder(f, conv, &mut out);
    }
    crate::diagnostics::normalize(&mut out);
    out
}

fn lint_folder(f: &TableFolder, conv: &Convention, out: &mut Vec<Diagnostic>) {
    let product = (f.product != NO_PRODUCT).then_some(f.product.as_str());
    let layer = Layer::parse(&f.table_type);
    let ddl_table = f
        .ddl
        .as_ref()
        .and_then(|d| first_created(&d.analysis).map(|(r, kind)| (d, r, kind)));
    let dml_table = f
        .dml
        .as_ref()
        .and_then(|d| first_insert_target(&d.analysis).map(|r| (d, r)));

    // File names.
    if let Some((file, r, _)) = &ddl_table {
        check_file_name(file, "ddl", r.name.table(), out);
    }
    if let Some((file, r)) = &dml_table {
        check_file_name(file, "dml", r.name.table(), out);
    }

    // Table name and product.
    let named = dml_table
        .as_ref()
        .map(|(file, r)| (*file, r.name.table(), ref_line(r)))
        .or_else(|| {
            ddl_table
                .as_ref()
                .map(|(file, r, _)| (*file, r.name.table(), ref_line(r)))
        });
    if let (Some(layer), Some((file, table, line))) = (layer, named) {
        let prefix = conv.expected_prefix(layer, product);
        if !table.starts_with(&prefix) {
            out.push(
                Diagnostic::error(
                    "naming-table",
                    format!(
                        "table '{table}' in {} of product {} should be named {prefix}…",
                        layer.folder(),
                        product.unwrap_or(NO_PRODUCT)
                    ),
                )
                .at(&file.rel, line, None),
            );
        }
        if let Some(p) = product
            && !conv.accepts_product(p)
        {
            out.push(
                Diagnostic::error(
                    "naming-product",
                    format!("product '{p}' is not listed in app.products of the configuration"),
                )
                .at(&file.rel, line, None),
            );
        }
    }

    // The DDL's create statement and options.
    let Some(ddl) = &f.ddl else { return };
    let Some(stmt) = ddl
        .analysis
        .statements
        .iter()
        .find(|s| s.kind == StatementKind::CreateTable && !s.temporary)
    else {
        return;
    };
    let head: Vec<String> = stmt
        .text
        .split_whitespace()
        .take(6)
        .map(str::to_ascii_uppercase)
        .collect();
    let if_not_exists = head.get(2..5).is_some_and(|w| w == ["IF", "NOT", "EXISTS"]);
    if !if_not_exists {
        out.push(
            Diagnostic::error(
                "naming-if-not-exists",
                "the DDL should use CREATE TABLE IF NOT EXISTS (statements are re-run on redeploy)",
            )
            .at(&ddl.rel, Some(stmt.line), None),
        );
    }
    let Some(layer) = layer else { return };
    let option = |k: &str| {
        stmt.with_options
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(k))
            .map(|(_, v)| v.as_str())
    };
    if option("connector").is_some() {
        return; // not a Kafka-backed Confluent table: the Kafka options do not apply
    }
    for (code, key, want) in [
        (
            "naming-changelog-mode",
            "changelog.mode",
            conv.changelog_mode(layer),
        ),
        (
            "naming-cleanup-policy",
            "kafka.cleanup-policy",
            conv.cleanup_policy(layer),
        ),
    ] {
        match option(key) {
            Some(v) if v.eq_ignore_ascii_case(want) => {}
            Some(v) => out.push(
                Diagnostic::error(
                    code,
                    format!("'{key}' is '{v}'; {} tables use '{want}'", layer.folder()),
                )
                .at(&ddl.rel, Some(option_line(ddl, stmt, key)), None),
            ),
            None => out.push(
                Diagnostic::error(
                    code,
                    format!(
                        "'{key}' is missing; {} tables use '{key}' = '{want}'",
                        layer.folder()
                    ),
                )
                .at(&ddl.rel, Some(stmt.line), None),
            ),
        }
    }
    for key in [
        "key.avro-registry.schema-context",
        "value.avro-registry.schema-context",
    ] {
        if option(key).is_none() {
            out.push(
                Diagnostic::error("naming-schema-context", format!("'{key}' is missing")).at(
                    &ddl.rel,
                    Some(stmt.line),
                    None,
                ),
            );
        }
    }
}

fn ref_line(r: &crate::sql::TableRef) -> Option<usize> {
    r.span.as_ref().map(|s| s.start.line)
}

/// `ddl.<table>.sql` / `dml.<table>.sql`, reported on line 1 of the file. A file named after another
/// version of the table is accepted (`dml.orders.sql` writing `orders_v2`): blue-green versioning
/// rewrites the SQL and keeps file and folder names, as shift_left does.
fn check_file_name(file: &SqlFile, kind: &str, table: &str, out: &mut Vec<Diagnostic>) {
    use crate::sql::text::split_version;
    let name = file
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    let want = format!("{kind}.{table}.sql");
    let named_after = name
        .as_deref()
        .and_then(|n| n.strip_prefix(&format!("{kind}.")))
        .and_then(|n| n.strip_suffix(".sql"));
    let same_table =
        named_after.is_some_and(|n| n == table || split_version(n).0 == split_version(table).0);
    if !same_table {
        out.push(
            Diagnostic::error(
                "naming-file",
                format!(
                    "file should be named {want} after the table it {}",
                    if kind == "ddl" { "creates" } else { "writes" }
                ),
            )
            .at(&file.rel, Some(1), None),
        );
    }
}

/// The line of `'key'` in the statement's WITH clause (the statement's line when not found).
fn option_line(file: &SqlFile, stmt: &StatementInfo, key: &str) -> usize {
    let start: usize = file
        .text()
        .split_inclusive('\n')
        .take(stmt.line.saturating_sub(1))
        .map(str::len)
        .sum();
    let rest = file.text()[start..].to_ascii_lowercase();
    rest.find(&format!("'{}'", key.to_ascii_lowercase()))
        .map(|off| stmt.line + rest[..off].matches('\n').count())
        .unwrap_or(stmt.line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_layer_and_product() {
        let n = |l, p, name| table_naming(l, p, name).unwrap();
        assert_eq!(
            n(Layer::Source, Some("sales"), "orders"),
            TableNaming {
                table: "src_sales_orders".into(),
                folder: "src_orders".into()
            }
        );
        assert_eq!(
            n(Layer::Fact, Some("sales"), "sales_fct_revenue").table,
            "sales_fct_revenue"
        );
        assert_eq!(
            n(Layer::Fact, Some("sales"), "fct_revenue").folder,
            "fct_revenue"
        );
        assert_eq!(n(Layer::View, Some("c360"), "x").table, "c360_mv_x");
        assert_eq!(n(Layer::Dimension, None, "stores").table, "dim_stores");
        assert_eq!(n(Layer::Intermediate, Some("p"), "a").table, "int_p_a");
        assert_eq!(n(Layer::Seed, Some("p"), "a").table, "seed_p_a");
        assert!(table_naming(Layer::Fact, None, "bad-name").is_err());
        assert!(table_naming(Layer::Fact, Some("a b"), "x").is_err());
        assert!(check_folder_name("my-project.v2").is_ok());
        for bad in ["", "../x", "a/b", ".hidden", "-x"] {
            assert!(check_folder_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn layers_parse_from_folders_and_types() {
        assert_eq!(Layer::parse("facts"), Some(Layer::Fact));
        assert_eq!(Layer::parse("mv"), Some(Layer::View));
        assert_eq!(Layer::parse("intermediate"), Some(Layer::Intermediate));
        assert_eq!(Layer::parse("bronze"), None);
    }
}
