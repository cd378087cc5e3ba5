//! Bounded reads of the files a user gives or a project holds: regular files only, each kind with a
//! maximum size, and an error that says which file was refused and why.
//!
//! A FIFO named `dml.x.sql` used to hang every command that read the tree, and a SQL file linked to
//! `/dev/zero` was read until the kernel killed the process. Every read of a user file goes through
//! [`read_user_file`].

use std::fs::OpenOptions;
use std::io::{ErrorKind, Read};
use std::path::Path;

/// The largest SQL file (`ddl.*.sql`, `dml.*.sql`, `.properties`, `sql query --file`) flinkpipe reads:
/// 8 MiB. Real table files are a few KB to a few hundred KB; the parser's memory grows with the file
/// (a small multiple for ordinary SQL, far more for pathological input such as megabytes of `;`), and
/// this bound keeps that in check. A larger file is refused with its size.
pub const MAX_SQL_FILE_BYTES: u64 = 8 << 20;

/// The largest data file flinkpipe reads (`config.yaml`, `seeds/external_tables.json`,
/// `--statement-status`, table lists, templates, `blue_green.json`, `modified_flink_files.json`):
/// 64 MiB, a hundred times what 10,000 tables need.
pub const MAX_DATA_FILE_BYTES: u64 = 64 << 20;

/// The largest `seeds/external_tables.json` manifest: 8 MiB (about 125,000 declarations, over ten
/// times what 10,000 tables need). Each declaration becomes a table of the inventory and a node of the
/// graph, some 35 bytes of memory per byte of the manifest: at 64 MiB a manifest took 2.2 GB (#29);
/// at 8 MiB it stays under 300 MB. A larger manifest is refused with its size.
pub const MAX_EXTERNAL_MANIFEST_BYTES: u64 = 8 << 20;

/// The largest file flinkpipe reads back among those it writes itself (`pipeline_graph.json`): 4 GiB
/// (the graph file of a 1,000,000-table chain is 790 MB).
pub const MAX_GENERATED_FILE_BYTES: u64 = 4 << 30;

/// The limit for a project file by its name: [`MAX_SQL_FILE_BYTES`] for `.sql` and `.properties`
/// files, [`MAX_DATA_FILE_BYTES`] for any other.
pub fn max_bytes_for(path: &Path) -> u64 {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("sql") || e.eq_ignore_ascii_case("properties") => {
            MAX_SQL_FILE_BYTES
        }
        _ => MAX_DATA_FILE_BYTES,
    }
}

/// Reads a file given by the user or found in the project, refusing what is not a regular file and
/// what is larger than `max_bytes`.
///
/// The file is opened without blocking (`O_NONBLOCK`: opening a FIFO with no writer would wait forever)
/// and the opened handle is checked (`fstat`), so what is read is what was checked: a FIFO, a socket, a
/// device (`/dev/zero`, possibly through a symbolic link) or a folder is refused before any byte is
/// read. The size is checked before reading, and the read stops after `max_bytes` + 1 bytes anyway (a
/// file that grows meanwhile, or reports no size as `/proc` files do).
///
/// Errors (`std::io::Error`, the message says why and gives the limit; callers prefix the path):
/// `InvalidInput` for a file that is not a regular file ("not a regular file but a FIFO (named pipe):
/// refused …"), `FileTooLarge` for one over the limit ("too large (9 MiB, over the limit of 8 MiB …)"),
/// and the system's errors (not found, permission).
pub fn read_user_file(path: &Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    read_user_file_stamped(path, max_bytes).map(|(bytes, _)| bytes)
}

/// [`read_user_file`], with the file's metadata as it was (`fstat` of the open file) just before its
/// bytes were read: a [`super::Stamp`] of it never names a newer state than the bytes returned.
pub fn read_user_file_stamped(
    path: &Path,
    max_bytes: u64,
) -> std::io::Result<(Vec<u8>, std::fs::Metadata)> {
    let open = |flags: libc::c_int| {
        let mut options = OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | flags);
        }
        let _ = flags;
        options.open(path)
    };
    // Reading a file does not change its access time (`O_NOATIME`, Linux): at 100,000 tables the
    // inode updates of a scan were a tenth of its system time. Only the file's owner may ask for
    // that (`EPERM` otherwise): other files are opened as usual.
    #[cfg(target_os = "linux")]
    let file = match open(libc::O_NOATIME) {
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => open(0),
        other => other,
    }?;
    #[cfg(not(target_os = "linux"))]
    let file = open(0)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            ErrorKind::InvalidInput,
            format!(
                "not a regular file but {}: refused (flinkpipe reads only regular files)",
                file_kind(&meta)
            ),
        ));
    }
    let too_large = |size: String| {
        std::io::Error::new(
            ErrorKind::FileTooLarge,
            format!(
                "too large ({size}, over the limit of {} for this kind of file): refused",
                byte_size(max_bytes)
            ),
        )
    };
    if meta.len() > max_bytes {
        // Just over the limit, a rounded size would read as the limit itself: give the bytes.
        let size = if meta.len() < max_bytes + max_bytes / 10 {
            format!("{} bytes", meta.len())
        } else {
            byte_size(meta.len())
        };
        return Err(too_large(size));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(format!("more than {}", byte_size(max_bytes))));
    }
    Ok((bytes, meta))
}

/// A data file given by the user (JSON or YAML: `config.yaml`, `external_tables.json`, a status file, a
/// table list, `blue_green.json`) as text: [`read_user_text`] with [`MAX_DATA_FILE_BYTES`], and a UTF-8
/// byte order mark at the start dropped (editors on Windows write one; JSON parsers reject it).
pub fn read_data_file(path: &Path) -> std::io::Result<String> {
    read_data_file_within(path, MAX_DATA_FILE_BYTES)
}

/// [`read_data_file`] with another limit (`seeds/external_tables.json`:
/// [`MAX_EXTERNAL_MANIFEST_BYTES`]).
pub fn read_data_file_within(path: &Path, max_bytes: u64) -> std::io::Result<String> {
    let mut text = read_user_text(path, max_bytes)?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// [`read_user_file`] as UTF-8 text, byte for byte. Errors: those of [`read_user_file`], and
/// `InvalidData` naming the line and column of the first byte that is not UTF-8.
pub fn read_user_text(path: &Path, max_bytes: u64) -> std::io::Result<String> {
    let bytes = read_user_file(path, max_bytes)?;
    String::from_utf8(bytes).map_err(|e| {
        let (line, column) = utf8_error_position(e.as_bytes(), e.utf8_error().valid_up_to());
        std::io::Error::new(
            ErrorKind::InvalidData,
            format!("not valid UTF-8 (line {line}, column {column}); save it as UTF-8"),
        )
    })
}

/// A project file as text with the limit of its kind ([`max_bytes_for`]): SQL and `.properties`
/// files up to [`MAX_SQL_FILE_BYTES`], data files (YAML, CSV, JSON) up to [`MAX_DATA_FILE_BYTES`].
/// Errors: those of [`read_user_text`].
pub fn read_project_file(path: impl AsRef<Path>) -> std::io::Result<String> {
    let path = path.as_ref();
    read_user_text(path, max_bytes_for(path))
}

/// Whether `e` is a refusal of [`read_user_file`] (not a regular file, over the size limit) rather
/// than an error of the system.
pub fn is_refusal(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::InvalidInput | ErrorKind::FileTooLarge)
}

/// The diagnostic for a project file that [`read_user_file`] could not read, without its location:
/// `file-refused` ("not a regular file but a FIFO (named pipe): refused …", "too large (9 MiB, over
/// the limit of 8 MiB …)") or `unreadable-file` (`"cannot read file: <system reason>"`).
pub fn read_diagnostic(e: &std::io::Error) -> crate::diagnostics::Diagnostic {
    use crate::diagnostics::Diagnostic;
    if is_refusal(e) {
        Diagnostic::error("file-refused", e.to_string())
    } else {
        Diagnostic::error("unreadable-file", format!("cannot read file: {e}"))
    }
}

/// The 1-based line and column (in bytes) of offset `pos` of `bytes`.
pub fn utf8_error_position(bytes: &[u8], pos: usize) -> (usize, usize) {
    let before = &bytes[..pos.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = before.len()
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1)
        + 1;
    (line, column)
}

/// What a file that is not a regular file is, for messages: `a FIFO (named pipe)`, `a character
/// device`, ….
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    if meta.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "a special file"
}

/// `1234 bytes`, `8 MiB`, `1.5 GiB`: a size for messages.
pub fn byte_size(n: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (unit, name) in UNITS {
        if n >= unit {
            return if n.is_multiple_of(unit) {
                format!("{} {name}", n / unit)
            } else {
                format!("{:.1} {name}", n as f64 / unit as f64)
            };
        }
    }
    format!("{n} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(byte_size(12), "12 bytes");
        assert_eq!(byte_size(8 << 20), "8 MiB");
        assert_eq!(byte_size(1536), "1.5 KiB");
    }

    #[test]
    fn regular_files_within_the_limit_are_read_and_a_bom_is_dropped_from_data() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.json");
        std::fs::write(&p, b"\xEF\xBB\xBF{}").unwrap();
        assert_eq!(read_data_file(&p).unwrap(), "{}");
        assert_eq!(read_user_text(&p, 5).unwrap(), "\u{feff}{}");
        let err = read_user_file(&p, 4).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::FileTooLarge);
        assert!(err.to_string().contains("5 bytes"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn fifos_devices_and_folders_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("dml.x.sql");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let err = read_user_file(&fifo, 100).unwrap_err();
        assert!(is_refusal(&err));
        assert!(err.to_string().contains("FIFO"), "{err}");
        let zero = dir.path().join("ddl.zero.sql");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let err = read_user_file(&zero, 100).unwrap_err();
        assert!(err.to_string().contains("character device"), "{err}");
        let err = read_user_file(dir.path(), 100).unwrap_err();
        assert!(err.to_string().contains("folder"), "{err}");
    }

    #[test]
    fn not_utf8_names_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.sql");
        std::fs::write(&p, b"ab\ncd\xff").unwrap();
        let err = read_user_text(&p, 100).unwrap_err();
        assert!(err.to_string().contains("line 2, column 3"), "{err}");
    }
}
