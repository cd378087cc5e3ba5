//! Tables other teams own, declared in `seeds/external_tables.json` manifests
//! (`{"tables": [{"table_name", "kafka_topic", "product_name"}]}`): parsed with line and column on
//! errors, and turned into shift_left's `external_kafka` tables.

use super::*;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ExternalManifest {
    tables: Vec<ExternalDeclaration>,
}

/// One table of a `seeds/external_tables.json` manifest (shift_left's shape), as written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct ExternalDeclaration {
    /// The table's name, as the project's SQL reads it.
    pub table_name: String,
    /// Its Kafka topic; absent means the table's name ([`external_table`]).
    #[serde(default)]
    pub kafka_topic: Option<String>,
    /// Its product; absent means `common`.
    #[serde(default)]
    pub product_name: Option<String>,
}

impl ExternalDeclaration {
    /// The topic the inventory records: `kafka_topic`, else the table's name.
    pub fn effective_topic(&self) -> &str {
        self.kafka_topic.as_deref().unwrap_or(&self.table_name)
    }

    /// The product the inventory records: `product_name`, else `common`.
    pub fn effective_product(&self) -> &str {
        self.product_name.as_deref().unwrap_or("common")
    }
}

/// Why a `seeds/external_tables.json` manifest could not be read: serde_json's message, which ends with
/// the position (`missing field `table_name` at line 3 column 5`), and that position (1-based; 0 when
/// the input ended early).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    /// The parser's message, position included.
    pub message: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

/// Parses a `seeds/external_tables.json` manifest: `{"tables":[{"table_name","kafka_topic",
/// "product_name"}]}`, shift_left 0.1.52's manifest of `external_kafka` tables
/// (<https://github.com/jbcodeforce/shift_left_utils>).
///
/// Errors: the text is not such a document.
pub fn parse_external_manifest(text: &str) -> Result<Vec<ExternalDeclaration>, ManifestError> {
    let tables = serde_json::from_str::<ExternalManifest>(text)
        .map(|m| m.tables)
        .map_err(|e| ManifestError {
            message: e.to_string(),
            line: e.line(),
            column: e.column(),
        })?;
    if let Some(i) = tables.iter().position(|t| t.table_name.trim().is_empty()) {
        return Err(ManifestError {
            message: format!("entry {} of \"tables\" has an empty table_name", i + 1),
            line: 0,
            column: 0,
        });
    }
    Ok(tables)
}

/// Adds one manifest, its path and its text as read, to the key of the manifests.
fn hash_manifest(h: &mut xxhash_rust::xxh3::Xxh3, path: &Path, text: &str) {
    crate::scan::cache::hash_field(h, path.as_os_str().as_encoded_bytes());
    crate::scan::cache::hash_field(h, text.as_bytes());
}

/// The key [`read_external_manifests`] gives the `manifests` (found by the scan's walk, in its
/// order), read now without parsing them: the inventory's part of a project's inputs key for a
/// [`crate::scan::probe`]. `None` when one cannot be read (a load reports it).
pub fn manifests_key(manifests: &[PathBuf]) -> Option<u128> {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for path in manifests {
        let text =
            crate::fsutil::read_data_file_within(path, crate::fsutil::MAX_EXTERNAL_MANIFEST_BYTES)
                .ok()?;
        hash_manifest(&mut h, path, &text);
    }
    Some(h.digest128())
}

/// Reads the `seeds/external_tables.json` files the scan found (shift_left's manifest:
/// `{"tables":[{"table_name","kafka_topic","product_name"}]}`).
/// Also returns the key (XXH3-128) of the manifests as they were read here: their paths and texts,
/// for [`Inventory::manifests_key`](super::Inventory::manifests_key); `None` when one could not be read.
pub(super) fn read_external_manifests(
    root: &Path,
    root_name: &str,
    manifests: &[PathBuf],
    diags: &mut Vec<Diagnostic>,
) -> (Vec<Table>, Option<u128>) {
    let mut out = Vec::new();
    let mut key = Some(xxhash_rust::xxh3::Xxh3::new());
    for path in manifests {
        let rel = format!(
            "{root_name}/{}",
            crate::fsutil::slash_path(path.strip_prefix(root).unwrap_or(path))
        );
        // Regular files only, bounded (memory grows ~35× the manifest); a UTF-8 byte order mark is
        // dropped.
        let tables = match crate::fsutil::read_data_file_within(
            path,
            crate::fsutil::MAX_EXTERNAL_MANIFEST_BYTES,
        )
        .map_err(|e| (e.to_string(), None))
        .inspect(|t| {
            if let Some(h) = &mut key {
                hash_manifest(h, path, t);
            }
        })
        .inspect_err(|_| key = None)
        .and_then(|t| {
            parse_external_manifest(&t)
                .map_err(|e| (e.message, Some((e.line, e.column)).filter(|p| p.0 > 0)))
        }) {
            Ok(m) => m,
            Err((message, at)) => {
                diags.push(
                    Diagnostic::error(
                        "bad-external-tables",
                        format!("cannot read external tables manifest: {message}"),
                    )
                    .at(rel, at.map(|p| p.0), at.map(|p| p.1)),
                );
                continue;
            }
        };
        for e in tables {
            out.push(Table {
                manifest: Some(rel.clone()),
                ..external_table(
                    &e.table_name,
                    e.product_name.unwrap_or_else(|| "common".into()),
                    e.kafka_topic,
                    root_name,
                )
            });
        }
    }
    (out, key.map(|h| h.digest128()))
}

/// A table defined outside the project (shift_left's `external_kafka` shape: folder
/// `<root>/seeds/<name>`, no DDL or DML).
pub fn external_table(
    name: &str,
    product: String,
    topic: Option<String>,
    root_name: &str,
) -> Table {
    Table {
        name: name.to_string(),
        product,
        table_type: EXTERNAL_TYPE.to_string(),
        folder: format!("{root_name}/seeds/{name}"),
        ddl_ref: None,
        dml_ref: None,
        kafka_topic: Some(topic.unwrap_or_else(|| name.to_string())),
        external: true,
        unknown: false,
        manifest: None,
        reads: Vec::new(),
        extra_sinks: Vec::new(),
        sink_at: None,
        written_by: None,
        set_member_writes: Vec::new(),
        statefulness: Statefulness::None,
        state_from_fallback: false,
        state_reasons: Vec::new(),
        joins: JoinCounts::default(),
        primary_key: Vec::new(),
        with_options: Vec::new(),
        ddl_kind: None,
        temporal_join_sources: Vec::new(),
    }
}
