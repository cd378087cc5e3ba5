//! Keeping unit-test folders in step with their parents' schemas (`project update-ut-ddl`): a
//! foundation DDL (`tests/ddl_<parent>.sql`, the `CREATE TABLE <parent>_ut (…) WITH (…)` a test reads)
//! gets the column list of the parent's production DDL, its own name and `WITH` options kept; an input
//! CSV of that parent gets the parent's writable columns, in order: columns the parent added are added
//! with empty values, columns it dropped are dropped, the others keep their values.
//!
//! Pure text functions; the caller reads and writes the files.

/// The byte range of the column list of the first `CREATE TABLE` of `sql`: inside its first top-level
/// parentheses (strings, quoted identifiers and comments skipped). `None` when there is none.
pub fn column_list_range(sql: &str) -> Option<std::ops::Range<usize>> {
    let bytes = sql.as_bytes();
    let upper = sql.to_ascii_uppercase();
    let create = upper.find("CREATE")?;
    let mut i = create;
    let mut depth = 0usize;
    let mut open = None;
    while i < bytes.len() {
        match bytes[i] {
            b'\'' | b'`' | b'"' => {
                let q = bytes[i];
                i += 1;
                while i < bytes.len() {
                    if bytes[i] == q {
                        // A doubled quote is an escaped one.
                        if bytes.get(i + 1) == Some(&q) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'(' => {
                if depth == 0 {
                    open = Some(i);
                }
                depth += 1;
            }
            b')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(open? + 1..i);
                }
            }
            b';' if depth == 0 => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

/// `foundation` with its column list replaced by `production`'s (both `CREATE TABLE` texts).
///
/// Errors: either text has no column list ([`NoColumnList`] says which).
pub fn with_columns_of(foundation: &str, production: &str) -> Result<String, NoColumnList> {
    let f = column_list_range(foundation).ok_or(NoColumnList::Foundation)?;
    let p = column_list_range(production).ok_or(NoColumnList::Production)?;
    let mut out = String::with_capacity(foundation.len());
    out.push_str(&foundation[..f.start]);
    out.push_str(&production[p]);
    out.push_str(&foundation[f.end..]);
    Ok(out)
}

/// Which DDL given to [`with_columns_of`] has no `CREATE TABLE` column list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NoColumnList {
    /// The test folder's foundation DDL.
    #[error("the foundation DDL has no CREATE TABLE column list")]
    Foundation,
    /// The table's production DDL.
    #[error("the table's DDL has no CREATE TABLE column list")]
    Production,
}

/// What [`reshape_csv`] changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CsvChange {
    /// The new text.
    pub text: String,
    /// Columns added (with empty values).
    pub added: Vec<String>,
    /// Columns dropped (with their values).
    pub dropped: Vec<String>,
}

/// `csv` (a header line, then rows) with the columns `columns`, in that order.
///
/// Errors: the CSV cannot be read (the `csv` crate's error, which names the record and line).
pub fn reshape_csv(csv: &str, columns: &[String]) -> Result<CsvChange, ::csv::Error> {
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(csv.as_bytes());
    let header: Vec<String> = reader
        .headers()?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    let index: Vec<Option<usize>> = columns
        .iter()
        .map(|c| header.iter().position(|h| h == c))
        .collect();
    let mut writer = ::csv::WriterBuilder::new()
        .terminator(::csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    writer.write_record(columns)?;
    for row in reader.records() {
        let row = row?;
        let out: Vec<&str> = index
            .iter()
            .map(|i| i.and_then(|i| row.get(i)).unwrap_or(""))
            .collect();
        writer.write_record(&out)?;
    }
    let bytes = writer.into_inner().map_err(|e| e.into_error())?;
    // Fields cut from a `&str` at the reader's field boundaries, joined by ASCII: still UTF-8.
    let text = String::from_utf8(bytes).expect("CSV fields of a UTF-8 text stay UTF-8");
    Ok(CsvChange {
        text,
        added: columns
            .iter()
            .filter(|c| !header.contains(c))
            .cloned()
            .collect(),
        dropped: header
            .iter()
            .filter(|h| !columns.contains(h))
            .cloned()
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_column_list_is_replaced_and_the_rest_kept() {
        let foundation = "-- test copy\nCREATE TABLE IF NOT EXISTS t_ut (\n  a INT,\n  b STRING -- old ( comment\n) WITH ('connector' = 'kafka', 'topic' = 't(1)');\n";
        let production = "CREATE TABLE t (\n  a INT,\n  c DOUBLE,\n  PRIMARY KEY (a) NOT ENFORCED\n) DISTRIBUTED BY HASH(a) INTO 1 BUCKETS WITH ('value.format' = 'avro-registry');";
        assert_eq!(
            with_columns_of(foundation, production).unwrap(),
            "-- test copy\nCREATE TABLE IF NOT EXISTS t_ut (\n  a INT,\n  c DOUBLE,\n  PRIMARY KEY (a) NOT ENFORCED\n) WITH ('connector' = 'kafka', 'topic' = 't(1)');\n"
        );
        assert!(with_columns_of("SELECT 1", production).is_err());
    }

    #[test]
    fn csv_columns_follow_the_table() {
        let c = reshape_csv(
            "a,b,gone\n1,x,9\n2,\"y,z\",8\n",
            &["a".into(), "new".into(), "b".into()],
        )
        .unwrap();
        assert_eq!(c.text, "a,new,b\n1,,x\n2,,\"y,z\"\n");
        assert_eq!(c.added, vec!["new"]);
        assert_eq!(c.dropped, vec!["gone"]);
    }
}
