//! The scaffolding templates: files under `templates/` at the repository root, embedded in the binary with
//! `include_str!`, each overridable by a project's own `<project>/templates/<same relative path>`.
//!
//! The syntax is deliberately tiny: `{{name}}` (spaces inside the braces allowed) is replaced by the value
//! of `name`; every other character is copied. A placeholder without a value is an error naming the
//! template, line and placeholder, so a typo in an overriding template never produces a half-filled file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The built-in templates: relative path under `templates/` → text.
pub const EMBEDDED: &[(&str, &str)] = &[
    (
        "project/config.yaml",
        include_str!("../../templates/project/config.yaml"),
    ),
    (
        "project/gitignore",
        include_str!("../../templates/project/gitignore"),
    ),
    (
        "project/README.md",
        include_str!("../../templates/project/README.md"),
    ),
    (
        "table/ddl.sql",
        include_str!("../../templates/table/ddl.sql"),
    ),
    (
        "table/ddl_gateway.sql",
        include_str!("../../templates/table/ddl_gateway.sql"),
    ),
    (
        "table/ddl_gateway_source.sql",
        include_str!("../../templates/table/ddl_gateway_source.sql"),
    ),
    (
        "table/dml.sql",
        include_str!("../../templates/table/dml.sql"),
    ),
    (
        "table/dml_values.sql",
        include_str!("../../templates/table/dml_values.sql"),
    ),
    (
        "table/Makefile",
        include_str!("../../templates/table/Makefile"),
    ),
    (
        "table/tests/README.md",
        include_str!("../../templates/table/tests/README.md"),
    ),
];

/// Why a template could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    /// No built-in template has this relative path.
    #[error("no template named '{0}'")]
    Unknown(String),
    /// The project's overriding template exists but cannot be read.
    #[error("cannot read template {path}: {source}")]
    Read {
        /// The overriding file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A `{{name}}` without a value (or an unclosed `{{`).
    #[error("{origin}:{line}: unknown placeholder '{{{{{name}}}}}'")]
    Placeholder {
        /// The template: its path, or `builtin:<relative path>`.
        origin: String,
        /// 1-based line of the placeholder.
        line: usize,
        /// The placeholder's name.
        name: String,
    },
}

/// The template set of one project: the embedded templates, overridden file by file by
/// `<project_root>/templates/<relative path>` when such a file exists.
#[derive(Debug, Clone)]
pub struct Templates {
    override_dir: Option<PathBuf>,
}

impl Templates {
    /// The templates of the project rooted at `project_root` (the folder holding `pipelines/`), or only
    /// the embedded ones when `None`.
    pub fn new(project_root: Option<&Path>) -> Self {
        Templates {
            override_dir: project_root.map(|r| r.join("templates")),
        }
    }

    /// The text of a template and where it came from (`templates/table/ddl.sql` for a project override,
    /// `builtin:table/ddl.sql` otherwise).
    pub fn source(&self, rel: &str) -> Result<(String, String), TemplateError> {
        let builtin = EMBEDDED
            .iter()
            .find(|(p, _)| *p == rel)
            .map(|(_, t)| *t)
            .ok_or_else(|| TemplateError::Unknown(rel.to_string()))?;
        if let Some(dir) = &self.override_dir {
            let path = dir.join(rel);
            if path.is_file() {
                let text = crate::fsutil::read_user_text(&path, crate::fsutil::MAX_DATA_FILE_BYTES)
                    .map_err(|source| TemplateError::Read {
                        path: path.clone(),
                        source,
                    })?;
                return Ok((text, path.display().to_string()));
            }
        }
        Ok((builtin.to_string(), format!("builtin:{rel}")))
    }

    /// Renders template `rel` with `vars`.
    pub fn render(
        &self,
        rel: &str,
        vars: &BTreeMap<&str, String>,
    ) -> Result<String, TemplateError> {
        let (text, origin) = self.source(rel)?;
        render_str(&text, &origin, vars)
    }
}

/// Replaces every `{{name}}` of `text` by `vars[name]`; `origin` names the template in errors.
pub fn render_str(
    text: &str,
    origin: &str,
    vars: &BTreeMap<&str, String>,
) -> Result<String, TemplateError> {
    let mut out = String::with_capacity(text.len() + 64);
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let line = text[..text.len() - rest.len() + start]
            .matches('\n')
            .count()
            + 1;
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            return Err(TemplateError::Placeholder {
                origin: origin.to_string(),
                line,
                name: after.lines().next().unwrap_or("").to_string(),
            });
        };
        let name = after[..end].trim();
        match vars.get(name) {
            Some(v) => out.push_str(v),
            None => {
                return Err(TemplateError::Placeholder {
                    origin: origin.to_string(),
                    line,
                    name: name.to_string(),
                });
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&'static str, &str)]) -> BTreeMap<&'static str, String> {
        pairs.iter().map(|(k, v)| (*k, v.to_string())).collect()
    }

    #[test]
    fn replaces_placeholders_with_or_without_spaces() {
        let v = vars(&[("table", "src_p_a"), ("mode", "upsert")]);
        assert_eq!(
            render_str("t={{table}} m={{ mode }}.", "x", &v).unwrap(),
            "t=src_p_a m=upsert."
        );
    }

    #[test]
    fn unknown_placeholder_names_origin_and_line() {
        let err =
            render_str("a\nb {{tabel}}\n", "templates/table/ddl.sql", &vars(&[])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "templates/table/ddl.sql:2: unknown placeholder '{{tabel}}'"
        );
    }

    #[test]
    fn every_embedded_template_is_listed_once() {
        let mut names: Vec<&str> = EMBEDDED.iter().map(|(p, _)| *p).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), EMBEDDED.len());
    }
}
