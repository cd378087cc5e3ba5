//! Statement names: `<env>-<region abbreviation>[-<product>]-<ddl|dml>-<table-kebab>`, as shift_left names
//! them (shift_left 0.1.52, <https://github.com/jbcodeforce/shift_left_utils>), validated against
//! Confluent Cloud's rule for statement names
//! (<https://docs.confluent.io/cloud/current/api.html#tag/Statements-(sqlv1)>: at most 100
//! characters, lower-case alphanumerics and `-`, starting and ending alphanumeric).
//!
//! Names are built from `[a-z0-9-]` only. A name longer than 100 characters is shortened
//! deterministically: cut to 93 characters and suffixed with `-` and 6 hex digits of a stable hash of the
//! full name, so two long names that share a prefix stay distinct.

use crate::config::Config;

/// Confluent Cloud's maximum statement-name length (since 2024-05).
pub const MAX_STATEMENT_NAME: usize = 100;

/// Builds statement names for one environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementNaming {
    /// `dev-usw2`: the part before the product.
    pub prefix: String,
}

/// shift_left's region abbreviation: drop `-`, then `east→e`, `west→w`, `south→s`, `north→n`,
/// `central→c` (`us-west-2` → `usw2`, `eu-central-1` → `euc1`).
pub fn region_abbreviation(region: &str) -> String {
    let mut s = region.replace('-', "").to_ascii_lowercase();
    for (long, short) in [
        ("east", "e"),
        ("west", "w"),
        ("south", "s"),
        ("north", "n"),
        ("central", "c"),
    ] {
        s = s.replace(long, short);
    }
    s
}

/// Lower-case kebab form of a name: `_`, `.` and every character outside `[a-z0-9]` become `-`; runs of
/// `-` collapse and leading/trailing `-` go.
pub fn kebab(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// Whether `name` is a valid Confluent Cloud statement name.
pub fn is_valid_statement_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !name.is_empty()
        && name.len() <= MAX_STATEMENT_NAME
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-' || *b == b'.')
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
}

/// FNV-1a, 64 bits: a stable hash (unlike `std`'s, which may change between Rust releases).
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

/// Shortens `name` to [`MAX_STATEMENT_NAME`] when needed (see module docs).
pub fn fit_length(name: String) -> String {
    if name.len() <= MAX_STATEMENT_NAME {
        return name;
    }
    // Names are ASCII after `kebab`; cutting at a character boundary keeps this safe for any input.
    let cut = name
        .char_indices()
        .nth(MAX_STATEMENT_NAME - 7)
        .map_or(name.len(), |(i, _)| i);
    let head = name[..cut].trim_end_matches('-');
    format!("{head}-{:06x}", fnv1a(&name) & 0xff_ffff)
}

impl StatementNaming {
    /// Naming from the configuration: `flinkpipe.statement_prefix` if set, else
    /// `<kafka.cluster_type>-<abbreviation of confluent_cloud.cloud_region>`.
    pub fn from_config(config: &Config) -> Self {
        // Every part goes through `kebab`, so any configured value gives `[a-z0-9-]` (`us_west_2` →
        // `us-w-2`, `"---"` → nothing).
        let prefix = match &config.flinkpipe.statement_prefix {
            Some(p) => kebab(p),
            None => kebab(&format!(
                "{}-{}",
                kebab(&config.kafka.cluster_type),
                kebab(&region_abbreviation(config.region()))
            )),
        };
        StatementNaming { prefix }
    }

    fn name(&self, product: &str, kind: &str, table: &str) -> String {
        let product = kebab(product);
        let product = (!product.is_empty() && product != "none").then_some(product.as_str());
        let table = kebab(table);
        let parts: Vec<&str> = [
            Some(self.prefix.as_str()),
            product,
            Some(kind),
            Some(&table),
        ]
        .into_iter()
        .flatten()
        .filter(|p| !p.is_empty())
        .collect();
        fit_length(parts.join("-"))
    }

    /// The DDL statement name of a table (`dev-usw2-p1-ddl-src-p1-table-3`).
    pub fn ddl(&self, product: &str, table: &str) -> String {
        self.name(product, "ddl", table)
    }

    /// The DML statement name of a table (`dev-usw2-p2-dml-src-x`).
    pub fn dml(&self, product: &str, table: &str) -> String {
        self.name(product, "dml", table)
    }

    /// Whether a statement name is under this naming's prefix (`dev-usw2-…`): a statement this
    /// configuration may have created. Another project configured with the same prefix shares it.
    pub fn is_under_prefix(&self, statement: &str) -> bool {
        !self.prefix.is_empty()
            && statement.len() > self.prefix.len()
            && statement.starts_with(&self.prefix)
            && statement.as_bytes()[self.prefix.len()] == b'-'
    }

    /// The statements a table of the project owns, DML first: the DML that writes it (its own, or the
    /// statement set of the table that writes it), then its DDL. External tables own none.
    pub fn table_statements(&self, project: &crate::project::Project, table: &str) -> Vec<String> {
        let Some(tb) = project.inventory.tables.get(table) else {
            return Vec::new();
        };
        if tb.external {
            return Vec::new();
        }
        let owner = tb
            .written_by
            .as_ref()
            .and_then(|w| project.inventory.tables.get(w))
            .unwrap_or(tb);
        let dml = owner
            .dml_ref
            .as_ref()
            .map(|_| self.dml(&owner.product, &owner.name));
        let ddl = tb.ddl_ref.as_ref().map(|_| self.ddl(&tb.product, &tb.name));
        [dml, ddl].into_iter().flatten().collect()
    }

    /// Every statement the project's tables own, with the owning table: their DDL and DML, and the
    /// helper statements the deploy names after them while it works (`<name>-co` during a carry-over,
    /// `<ddl name>-drop` for an allowed drop).
    pub fn owned_statements(
        &self,
        project: &crate::project::Project,
    ) -> std::collections::BTreeMap<String, String> {
        let mut owned = std::collections::BTreeMap::new();
        for t in project.inventory.tables.keys() {
            for s in self.table_statements(project, t) {
                for helper in [
                    fit_length(format!("{s}-co")),
                    fit_length(format!("{s}-drop")),
                ] {
                    owned.entry(helper).or_insert_with(|| t.clone());
                }
                owned.entry(s).or_insert_with(|| t.clone());
            }
        }
        owned
    }
}

/// Tables whose statement names collide: two different tables would share a DDL or DML statement name
/// (names differing only by case or by characters outside `[a-z0-9]`, e.g. `int_x`, `INT_X`, `` `int-x` ``),
/// so a deploy would adopt or replace the other table's statement. One error per colliding name, naming
/// every table and its folder. Tables written by another table's statement set share its DML on purpose.
pub fn collisions(
    project: &crate::project::Project,
    naming: &StatementNaming,
) -> Vec<crate::diagnostics::Diagnostic> {
    use std::collections::BTreeMap;
    let mut by_name: BTreeMap<String, Vec<&crate::inventory::Table>> = BTreeMap::new();
    for t in project.inventory.tables.values().filter(|t| !t.external) {
        if t.ddl_ref.is_some() {
            by_name
                .entry(naming.ddl(&t.product, &t.name))
                .or_default()
                .push(t);
        }
        if t.dml_ref.is_some() {
            by_name
                .entry(naming.dml(&t.product, &t.name))
                .or_default()
                .push(t);
        }
    }
    by_name
        .into_iter()
        .filter(|(_, ts)| ts.len() > 1)
        .map(|(name, ts)| {
            let list: Vec<String> = ts
                .iter()
                .map(|t| format!("'{}' ({})", t.name, t.folder))
                .collect();
            crate::diagnostics::Diagnostic::error(
                "statement-name-collision",
                format!(
                    "tables {} would all deploy as statement '{name}'; rename one of them",
                    list.join(", ")
                ),
            )
            .at(
                ts[1]
                    .dml_ref
                    .clone()
                    .or(ts[1].ddl_ref.clone())
                    .unwrap_or_default(),
                None,
                None,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shift_left_examples() {
        let n = StatementNaming {
            prefix: "dev-usw2".into(),
        };
        assert_eq!(n.dml("p2", "src_x"), "dev-usw2-p2-dml-src-x");
        assert_eq!(
            n.dml("common", "src_table_1"),
            "dev-usw2-common-dml-src-table-1"
        );
        assert_eq!(
            n.ddl("p1", "src_p1_table_3"),
            "dev-usw2-p1-ddl-src-p1-table-3"
        );
        assert_eq!(n.dml("None", "x_v2"), "dev-usw2-dml-x-v2");
        assert_eq!(region_abbreviation("us-west-2"), "usw2");
        // Odd configured values still give valid names, never a panic.
        for (cluster, region, prefix) in [
            ("dev", "us_west_2", None),
            ("prod x", "us west 2!", None),
            ("dev", &format!("{}é", "a".repeat(88)) as &str, None),
            ("dev", "us-west-2", Some("---")),
            ("dev", "us-west-2", Some("Team_A")),
        ] {
            let mut c = Config::default();
            c.kafka.cluster_type = cluster.into();
            c.confluent_cloud.cloud_region = Some(region.into());
            c.flinkpipe.statement_prefix = prefix.map(str::to_string);
            let n = StatementNaming::from_config(&c);
            for name in [n.ddl("p", "src_a"), n.dml("None", "T_é")] {
                assert!(is_valid_statement_name(&name), "{name:?}");
            }
        }
        assert_eq!(region_abbreviation("eu-central-1"), "euc1");
        assert_eq!(region_abbreviation("ap-southeast-1"), "apse1");
    }

    #[test]
    fn every_name_is_valid_even_for_odd_tables() {
        let n = StatementNaming {
            prefix: "prod-euc1".into(),
        };
        for t in [
            "Orders.V1",
            "user-events",
            "__x__",
            "café",
            &"very_long_table_name_".repeat(10),
        ] {
            let name = n.dml("Sales_EU", t);
            assert!(is_valid_statement_name(&name), "{name}");
        }
    }

    #[test]
    fn long_names_are_shortened_deterministically_and_stay_distinct() {
        let n = StatementNaming {
            prefix: "dev-usw2".into(),
        };
        let a = n.dml("p1", &format!("{}_a", "x".repeat(120)));
        let b = n.dml("p1", &format!("{}_b", "x".repeat(120)));
        assert_eq!(a.len(), 100);
        assert_ne!(a, b);
        assert_eq!(a, n.dml("p1", &format!("{}_a", "x".repeat(120))));
    }
}
