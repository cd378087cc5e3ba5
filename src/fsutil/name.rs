//! The one check of a name (a table's, a statement's) that becomes part of a file name:
//! `<table>_lineage.json`, `ddl_<parent>.sql`, `expected_<table>_1.csv`, `<table>_pipeline_graph.html`.
//!
//! Flink accepts almost anything between backquotes (`` `../../tmp/x` ``), so a name is checked before
//! it is joined to a folder: it must be one plain component on every platform flinkpipe runs on, or
//! the command refuses. `pipeline validate` (the inventory) reports a table whose name fails it as an
//! error, with the file and line that name it.

/// The longest name accepted, in bytes: file systems allow 255 bytes per component, and the files
/// flinkpipe names add at most ~40 (`expected_…_10.csv`, `.….flinkpipe-tmp-<pid>`).
pub const MAX_NAME_BYTES: usize = 200;

/// Why a name cannot be (part of) a file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnsafeName {
    /// Nothing at all.
    Empty,
    /// `/` or `\`: a path, not a name (an absolute path starts with one).
    Separator,
    /// `..` anywhere (a parent folder), or the name `.`.
    Dots,
    /// NUL or another control character (U+0000–U+001F, U+007F–U+009F).
    Control(char),
    /// A character Windows forbids in file names: `<`, `>`, `:`, `"`, `|`, `?`, `*`.
    Reserved(char),
    /// A Windows device name (`CON`, `PRN`, `AUX`, `NUL`, `COM1`–`COM9`, `LPT1`–`LPT9`, with or
    /// without an extension, any case).
    Device,
    /// Ends with `.` or a space (Windows drops them: two names would be one file).
    TrailingDotOrSpace,
    /// Longer than [`MAX_NAME_BYTES`].
    TooLong(usize),
}

impl std::fmt::Display for UnsafeName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnsafeName::Empty => f.write_str("is empty"),
            UnsafeName::Separator => f.write_str("holds a path separator (`/` or `\\`)"),
            UnsafeName::Dots => f.write_str("holds `..` (or is `.`)"),
            UnsafeName::Control(c) => write!(f, "holds the control character U+{:04X}", *c as u32),
            UnsafeName::Reserved(c) => {
                write!(f, "holds `{c}`, which Windows forbids in file names")
            }
            UnsafeName::Device => f.write_str("is a Windows device name"),
            UnsafeName::TrailingDotOrSpace => f.write_str("ends with `.` or a space"),
            UnsafeName::TooLong(n) => write!(f, "is {n} bytes long (at most {MAX_NAME_BYTES})"),
        }
    }
}

/// A table name as messages show it: in backquotes, once (an inventory name that holds a dot is
/// already written back in backquotes, `` `x.y` ``, and keeps them).
pub fn shown_name(name: &str) -> String {
    if name.len() >= 2 && name.starts_with('`') && name.ends_with('`') {
        name.to_string()
    } else {
        format!("`{name}`")
    }
}

/// `name` itself when it can be (part of) a file name on every platform: one component, no path
/// separator, no `..`, no control character (NUL included), none of Windows' reserved characters or
/// device names, no trailing dot or space, at most [`MAX_NAME_BYTES`] bytes.
///
/// Errors: the first [`UnsafeName`] rule it breaks.
pub fn file_name_component(name: &str) -> Result<&str, UnsafeName> {
    if name.is_empty() {
        return Err(UnsafeName::Empty);
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(UnsafeName::TooLong(name.len()));
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(UnsafeName::Control(c));
    }
    if name.contains(['/', '\\']) {
        return Err(UnsafeName::Separator);
    }
    if name == "." || name.contains("..") {
        return Err(UnsafeName::Dots);
    }
    if let Some(c) = name.chars().find(|c| "<>:\"|?*".contains(*c)) {
        return Err(UnsafeName::Reserved(c));
    }
    if name.ends_with(['.', ' ']) {
        return Err(UnsafeName::TrailingDotOrSpace);
    }
    let stem = name.split('.').next().unwrap_or(name).trim_end();
    let upper = stem.to_ascii_uppercase();
    let device = matches!(upper.as_str(), "CON" | "PRN" | "AUX" | "NUL")
        || (upper.len() == 4
            && (upper.starts_with("COM") || upper.starts_with("LPT"))
            && upper.as_bytes()[3].is_ascii_digit()
            && upper.as_bytes()[3] != b'0');
    if device {
        return Err(UnsafeName::Device);
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Component, Path};

    #[test]
    fn plain_names_pass_and_paths_do_not() {
        for ok in [
            "orders",
            "sales_fct_orders_v2",
            "cat.db.t",
            "My Table",
            ".hidden",
            "ÉtéÜber",
            "console",
            "com0",
        ] {
            assert_eq!(file_name_component(ok), Ok(ok), "{ok}");
        }
        for (bad, why) in [
            ("", UnsafeName::Empty),
            ("../../../../tmp/x/PWNED", UnsafeName::Separator),
            ("/etc/passwd", UnsafeName::Separator),
            ("a\\b", UnsafeName::Separator),
            ("..", UnsafeName::Dots),
            (".", UnsafeName::Dots),
            ("a..b", UnsafeName::Dots),
            ("a\0b", UnsafeName::Control('\0')),
            ("a\nb", UnsafeName::Control('\n')),
            ("C:x", UnsafeName::Reserved(':')),
            ("a*b", UnsafeName::Reserved('*')),
            ("CON", UnsafeName::Device),
            ("lpt1.txt", UnsafeName::Device),
            ("x.", UnsafeName::TrailingDotOrSpace),
            ("x ", UnsafeName::TrailingDotOrSpace),
        ] {
            assert_eq!(file_name_component(bad), Err(why), "{bad:?}");
        }
        assert!(matches!(
            file_name_component(&"x".repeat(201)),
            Err(UnsafeName::TooLong(201))
        ));
    }

    /// The property: over generated names built from hostile pieces, a name that passes is one plain
    /// component of the folder it is joined to, whatever prefix and suffix a file name adds, and
    /// never a Windows-hostile one.
    #[test]
    fn a_name_that_passes_always_stays_in_its_folder() {
        const PIECES: &[&str] = &[
            "a", "..", ".", "/", "\\", "\0", "\n", "\x7f", "\u{85}", ":", "C:", "CON", "nul", "*",
            "?", "\"", "<", ">", "|", " ", "tmp", "x", "é", "_", "-", "PWNED", "~", "$HOME", "%2e",
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut passed = 0;
        for _ in 0..20_000 {
            let n = (next() % 6) as usize + 1;
            let name: String = (0..n)
                .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .collect();
            let Ok(ok) = file_name_component(&name) else {
                continue;
            };
            passed += 1;
            for file in [
                format!("{ok}_lineage.json"),
                format!("ddl_{ok}.sql"),
                format!("expected_{ok}_1.csv"),
                ok.to_string(),
            ] {
                let joined = Path::new("/base/dir").join(&file);
                let comps: Vec<Component> = joined.components().collect();
                assert_eq!(comps.len(), 4, "{name:?} → {joined:?}");
                assert!(
                    matches!(comps[3], Component::Normal(n) if n == file.as_str()),
                    "{name:?}"
                );
            }
            assert!(
                !ok.chars()
                    .any(|c| c.is_control() || "/\\<>:\"|?*".contains(c))
            );
            assert!(!ok.contains(".."));
        }
        assert!(
            passed > 100,
            "the generator also makes plain names ({passed})"
        );
    }
}
