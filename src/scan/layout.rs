//! Folder conventions of a pipelines tree (shift_left 0.1.52's,
//! <https://github.com/jbcodeforce/shift_left_utils>; see also `docs/src/concepts/layout.md`):
//!
//! ```text
//! pipelines/<layer>/[<product>/]<table_folder>/sql-scripts/{ddl,dml}.<table>.sql
//! ```
//!
//! The layer is the first folder under the pipelines root, matched by whole path component (never a
//! substring test on the path, which made shift_left call every table under `/home/u/datasources` a source).

use std::collections::BTreeMap;

/// Table type written for a folder that maps to no layer (shift_left's spelling).
pub const UNKNOWN_TYPE: &str = "unknown-type";

/// The table types a layer folder can map to (shift_left's types; `flinkpipe.layers` values must be
/// one of them).
pub const TABLE_TYPES: &[&str] = &[
    "source",
    "intermediate",
    "dimension",
    "fact",
    "view",
    "seed",
    "dead_letter",
];

/// Product name written when a table folder sits directly under its layer (shift_left writes the string).
pub const NO_PRODUCT: &str = "None";

/// Maps the first folder under the pipelines root to a table type.
#[derive(Debug, Clone)]
pub struct Layout {
    layers: BTreeMap<String, String>,
}

impl Default for Layout {
    fn default() -> Self {
        let mut layers = BTreeMap::new();
        for (folder, ty) in [
            ("sources", "source"),
            ("source", "source"),
            ("intermediates", "intermediate"),
            ("intermediate", "intermediate"),
            ("stage", "intermediate"),
            ("staging", "intermediate"),
            ("dimensions", "dimension"),
            ("dimension", "dimension"),
            ("facts", "fact"),
            ("fact", "fact"),
            ("views", "view"),
            ("view", "view"),
            ("mv", "view"),
            ("seeds", "seed"),
            ("seed", "seed"),
            ("dead_letter", "dead_letter"),
        ] {
            layers.insert(folder.to_string(), ty.to_string());
        }
        Layout { layers }
    }
}

impl Layout {
    /// The default mapping with `overrides` (folder → type, from `flinkpipe.layers` in the config) applied.
    pub fn with_overrides(overrides: &BTreeMap<String, String>) -> Self {
        let mut l = Layout::default();
        for (k, v) in overrides {
            l.layers.insert(k.clone(), v.clone());
        }
        l
    }

    /// Table type of a folder name (`facts` → `fact`); [`UNKNOWN_TYPE`] when not a layer.
    pub fn table_type(&self, layer_folder: &str) -> &str {
        self.layers
            .get(layer_folder)
            .map(String::as_str)
            .unwrap_or(UNKNOWN_TYPE)
    }

    /// Whether a folder name is a layer folder.
    pub fn is_layer(&self, folder: &str) -> bool {
        self.layers.contains_key(folder)
    }

    /// Layer type and product of a table folder given as path components relative to the pipelines root
    /// (`["facts", "p1", "fct_order"]` → `("fact", "p1")`).
    ///
    /// The product is the folder right below the layer when the table folder is deeper than the layer;
    /// [`NO_PRODUCT`] when the table folder sits directly under the layer (or at the root).
    pub fn classify(&self, rel_components: &[&str]) -> (String, String) {
        let ty = rel_components
            .first()
            .map(|f| self.table_type(f))
            .unwrap_or(UNKNOWN_TYPE)
            .to_string();
        let product = if rel_components.len() >= 3 {
            rel_components[1].to_string()
        } else {
            NO_PRODUCT.to_string()
        };
        (ty, product)
    }
}

/// The marker a generated file leaves where the user must decide (the DML's join condition when
/// the sources share no key column, written by `table init`): reading the project reports it as
/// `scaffold-todo` with file and line (a warning; an error with `pipeline validate --strict`).
pub const TODO_MARKER: &str = "TODO(flinkpipe)";

/// The release record of blue-green versioning, in the pipelines folder (`pipelines/blue_green.json`,
/// written by [`crate::versioning::record`]).
pub const BLUE_GREEN_FILE: &str = "blue_green.json";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_and_product_by_component() {
        let l = Layout::default();
        assert_eq!(
            l.classify(&["facts", "p1", "fct_order"]),
            ("fact".into(), "p1".into())
        );
        assert_eq!(
            l.classify(&["sources", "src_x"]),
            ("source".into(), "None".into())
        );
        assert_eq!(
            l.classify(&["datasources", "p1", "t"]),
            ("unknown-type".into(), "p1".into())
        );
        assert_eq!(
            l.classify(&["views", "c360", "user_view"]),
            ("view".into(), "c360".into())
        );
    }

    #[test]
    fn overrides_apply() {
        let mut o = BTreeMap::new();
        o.insert("bronze".to_string(), "source".to_string());
        let l = Layout::with_overrides(&o);
        assert_eq!(l.table_type("bronze"), "source");
        assert_eq!(l.table_type("facts"), "fact");
    }
}
