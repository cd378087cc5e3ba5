//! Version suffixes of blue-green table names (shift_left 0.1.52's rule,
//! <https://github.com/jbcodeforce/shift_left_utils>): a name without a
//! trailing `_v<digits>` gets the default suffix (`_v2`); an existing suffix is incremented
//! (`_v2` → `_v3`, `_v9` → `_v10`).

use crate::sql::text::split_version;

/// The next version of a table name.
///
/// `default_suffix` applies to unversioned names and must look like `_v<digits>` (e.g. `_v2`); an
/// invalid suffix is an error naming it.
pub fn next_version(name: &str, default_suffix: &str) -> Result<String, String> {
    let digits = default_suffix.strip_prefix("_v").unwrap_or("");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "invalid version suffix '{default_suffix}': expected _v<digits>, e.g. _v2"
        ));
    }
    Ok(match split_version(name) {
        (base, Some(v)) => format!("{base}_v{}", v + 1),
        (_, None) => format!("{name}{default_suffix}"),
    })
}

/// The version a blue-green release replaced (the blue name of a green one): `t_v3` → `t_v2`,
/// `t_v2` → `t` (the first release versions an unversioned name as `_v2`); `None` for a name
/// without a version suffix (no release made it).
pub fn previous_version(name: &str) -> Option<String> {
    match split_version(name) {
        (base, Some(v)) if v > 2 => Some(format!("{base}_v{}", v - 1)),
        (base, Some(_)) => Some(base.to_string()),
        (_, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previous_versions() {
        assert_eq!(previous_version("t_v3").as_deref(), Some("t_v2"));
        assert_eq!(previous_version("t_v10").as_deref(), Some("t_v9"));
        assert_eq!(previous_version("t_v2").as_deref(), Some("t"));
        assert_eq!(previous_version("t"), None);
        for n in ["t", "t_v2", "order_view_v7"] {
            let next = next_version(n, "_v2").unwrap();
            assert_eq!(previous_version(&next).as_deref(), Some(n));
        }
    }

    #[test]
    fn versions() {
        assert_eq!(next_version("t", "_v2").unwrap(), "t_v2");
        assert_eq!(next_version("t_v2", "_v2").unwrap(), "t_v3");
        assert_eq!(next_version("t_v9", "_v2").unwrap(), "t_v10");
        assert_eq!(next_version("order_view", "_v2").unwrap(), "order_view_v2");
        assert_eq!(next_version("t_v", "_v2").unwrap(), "t_v_v2");
        assert_eq!(next_version("_v3", "_v2").unwrap(), "_v3_v2");
        assert!(next_version("t", "v2").is_err());
        assert!(next_version("t", "_vx").is_err());
        assert!(next_version("t", "_v2_v3").is_err());
        assert!(next_version("t", "_v").is_err());
    }
}
