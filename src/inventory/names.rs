//! The one resolver of a table name given by the user (`--table-name`, a table-list file, `report T`,
//! a table in a `graph --select` expression, `table preview T`, the unit-test commands). Every command
//! resolves names the same way, in this order:
//!
//! 1. the exact name;
//! 2. else the one table whose name is equal ignoring ASCII case (`INT_B` is `int_b`); two or more
//!    such tables (`Orders` and `orders`) make the name ambiguous: an error listing them;
//! 3. else the newest `_vN` version of that base name (`int_b` is `int_b_v3` when a blue-green
//!    `--apply` has versioned it, and `int_b_v2` is `int_b_v3` too: only a newer version counts),
//!    the base compared ignoring case;
//! 4. else an error with the closest name, if one is close ([`crate::graph::closest`]).
//!
//! A name resolved to another one (steps 2 and 3) comes with a [`Resolved::note`] that the operations
//! print on stderr, so that reading the green table for a blue name is never silent.

use crate::sql::text::split_version;

/// A user-given name resolved to a table of the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The name as given.
    pub given: String,
    /// The table's name in the project.
    pub name: String,
    /// How the name was found.
    pub how: Match,
}

/// How a name was resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    Exact,
    /// Equal ignoring case.
    IgnoringCase,
    /// The newest `_vN` version of the name.
    NewestVersion,
}

impl Resolved {
    /// `note: 'int_b' is 'int_b_v2' (its newest version)` when the name resolved to another one.
    pub fn note(&self) -> Option<String> {
        let why = match self.how {
            Match::Exact => return None,
            Match::IgnoringCase => "(names ignore case)",
            Match::NewestVersion => "(its newest version)",
        };
        Some(format!("note: '{}' is '{}' {why}", self.given, self.name))
    }
}

/// Why a name resolves to no table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// No table has this name, in any case or version.
    #[error("unknown table '{name}'{}", suggestion.as_ref().map(|s| format!(" (did you mean '{s}'?)")).unwrap_or_default())]
    Unknown {
        name: String,
        /// The closest name, if one is close.
        suggestion: Option<String>,
    },
    /// More than one table has this name ignoring case (or is its newest version).
    #[error("table name '{name}' is ambiguous: it matches {}; give the exact name", candidates.iter().map(|c| format!("'{c}'")).collect::<Vec<_>>().join(", "))]
    Ambiguous {
        name: String,
        /// The matching tables, sorted.
        candidates: Vec<String>,
    },
}

impl NameError {
    /// ` (did you mean 'x'?)` for an unknown name with a suggestion, else empty.
    pub fn hint(&self) -> String {
        match self {
            NameError::Unknown {
                suggestion: Some(s),
                ..
            } => format!(" (did you mean '{s}'?)"),
            _ => String::new(),
        }
    }
}

/// Resolves `given` among `names` (the tables of the project, or the nodes of its graph). See the
/// module documentation for the order.
///
/// Errors: [`NameError::Ambiguous`] for a name two tables match ignoring case, [`NameError::Unknown`]
/// (with the closest name) for one no table matches.
pub fn resolve<'a>(
    given: &str,
    names: impl IntoIterator<Item = &'a str>,
) -> Result<Resolved, NameError> {
    let names: Vec<&str> = names.into_iter().collect();
    let names = names.iter().copied();
    let found = |name: &str, how| Resolved {
        given: given.to_string(),
        name: name.to_string(),
        how,
    };
    if let Some(n) = names.clone().find(|n| *n == given) {
        return Ok(found(n, Match::Exact));
    }
    let mut folded: Vec<&str> = names
        .clone()
        .filter(|n| n.eq_ignore_ascii_case(given))
        .collect();
    folded.sort_unstable();
    match folded.as_slice() {
        [n] => return Ok(found(n, Match::IgnoringCase)),
        [] => {}
        _ => {
            return Err(NameError::Ambiguous {
                name: given.to_string(),
                candidates: folded.iter().map(|s| s.to_string()).collect(),
            });
        }
    }
    let (base, version) = split_version(given);
    let mut newest: Vec<(u64, &str)> = names
        .clone()
        .filter_map(|n| match split_version(n) {
            (b, Some(v)) if b.eq_ignore_ascii_case(base) && Some(v) > version => Some((v, n)),
            _ => None,
        })
        .collect();
    if let Some(top) = newest.iter().map(|(v, _)| *v).max() {
        newest.retain(|(v, _)| *v == top);
        newest.sort_unstable();
        if let [(_, n)] = newest.as_slice() {
            return Ok(found(n, Match::NewestVersion));
        }
        return Err(NameError::Ambiguous {
            name: given.to_string(),
            candidates: newest.iter().map(|(_, n)| n.to_string()).collect(),
        });
    }
    Err(NameError::Unknown {
        name: given.to_string(),
        suggestion: crate::diagnostics::closest(given, names),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(given: &str, names: &[&str]) -> Result<(String, Match), NameError> {
        resolve(given, names.iter().copied()).map(|r| (r.name, r.how))
    }

    #[test]
    fn exact_then_case_then_newest_version() {
        let names = ["int_b", "int_c_v2", "int_c_v3", "src_a", "Fct_X"];
        assert_eq!(r("int_b", &names).unwrap(), ("int_b".into(), Match::Exact));
        assert_eq!(
            r("INT_B", &names).unwrap(),
            ("int_b".into(), Match::IgnoringCase)
        );
        assert_eq!(
            r("fct_x", &names).unwrap(),
            ("Fct_X".into(), Match::IgnoringCase)
        );
        assert_eq!(
            r("int_c", &names).unwrap(),
            ("int_c_v3".into(), Match::NewestVersion)
        );
        assert_eq!(
            r("INT_C", &names).unwrap(),
            ("int_c_v3".into(), Match::NewestVersion)
        );
        assert_eq!(r("int_c_v2", &names).unwrap().1, Match::Exact);
        // An older version than any table is not its newest version.
        assert!(matches!(
            r("int_c_v1", &["int_b", "int_c_v1_x", "int_c"]).unwrap_err(),
            NameError::Unknown { .. }
        ));
        assert_eq!(
            r("int_c_v5", &names).unwrap_err().to_string(),
            "unknown table 'int_c_v5' (did you mean 'int_c_v2'?)"
        );
    }

    #[test]
    fn ambiguous_case_lists_candidates() {
        let names = ["orders", "Orders", "x_v2", "X_v2"];
        let e = r("ORDERS", &names).unwrap_err();
        assert_eq!(
            e.to_string(),
            "table name 'ORDERS' is ambiguous: it matches 'Orders', 'orders'; give the exact name"
        );
        assert_eq!(r("orders", &names).unwrap().1, Match::Exact);
        assert!(matches!(
            r("x", &names).unwrap_err(),
            NameError::Ambiguous { .. }
        ));
    }

    #[test]
    fn notes() {
        let res = resolve("int_b", ["int_b_v2"]).unwrap();
        assert_eq!(
            res.note().unwrap(),
            "note: 'int_b' is 'int_b_v2' (its newest version)"
        );
        assert!(resolve("a", ["a"]).unwrap().note().is_none());
    }
}
