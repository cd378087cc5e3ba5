//! File-system helpers shared by every command that writes: atomic writes and path display.

use std::io::Write;
use std::path::Path;

/// Writes `contents` to `path` atomically: a temporary file in the same folder, then renamed over the
/// target. Readers see the old file or the new one, never half of it; on error the target is untouched
/// and the temporary file is removed.
///
/// Errors: the folder does not exist or is not writable, or the rename fails (the target is untouched).
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".flinkpipe-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(contents)?;
    // tempfile creates 0600 files; keep the target's mode, or use the usual 0644 for a new file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map(|m| m.permissions().mode() & 0o7777)
            .unwrap_or(0o644);
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    // No fsync: the rename makes the switch atomic for every reader, which is the guarantee promised here;
    // syncing each of 10,000 metadata files would cost seconds for crash durability nobody asked for.
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Serialises `value` as pretty JSON (4-space indent, as shift_left writes its files) with a final newline.
pub fn to_json_pretty<T: serde::Serialize>(value: &T) -> String {
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    value
        .serialize(&mut ser)
        .expect("JSON serialisation of plain data cannot fail");
    buf.push(b'\n');
    String::from_utf8(buf).expect("serde_json writes UTF-8")
}

/// A path as `/`-separated text, whatever the platform: the form stored in JSON files.
pub fn slash_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_content_and_keeps_a_readable_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
                0o644
            );
        }
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn failed_write_leaves_the_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("missing-folder").join("f.json");
        assert!(write_atomic(&p, b"x").is_err());
        assert!(!p.exists());
    }
}
