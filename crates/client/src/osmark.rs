//! The OS's "downloaded from the internet" mark on every file written from an agent's bytes (received media and
//! the copies the user saves), so that the OS warns before running it as it would for a browser download:
//! Windows: the `Zone.Identifier` alternate data stream with `ZoneId=3` (the Internet zone; SmartScreen and Office
//! read it). macOS: the `com.apple.quarantine` extended attribute (Gatekeeper reads it). Unix: the execute bits are
//! cleared. The Windows and macOS parts are compiled only on those systems (the CI's clippy runners build them).

use std::path::Path;

/// Mark `path` as downloaded from the internet. Best effort on file systems without the feature (FAT has no
/// alternate streams, some mounts no extended attributes): the error is returned for the caller to log.
pub fn mark_downloaded(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    no_exec(path)?;
    #[cfg(windows)]
    windows::mark(path)?;
    #[cfg(target_os = "macos")]
    macos::mark(path)?;
    Ok(())
}

/// Clear the execute bits (a copy keeps its source's mode; a received file never needs them).
#[cfg(unix)]
fn no_exec(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut perm = std::fs::metadata(path)?.permissions();
    let mode = perm.mode();
    if mode & 0o111 != 0 {
        perm.set_mode(mode & !0o111);
        std::fs::set_permissions(path, perm)?;
    }
    Ok(())
}

#[cfg(windows)]
mod windows {
    use std::path::Path;

    /// The stream a browser writes: `<file>:Zone.Identifier` holding `[ZoneTransfer]` / `ZoneId=3`. NTFS opens an
    /// alternate data stream through the plain file API, so std's write is enough.
    pub fn mark(path: &Path) -> std::io::Result<()> {
        let mut ads = path.as_os_str().to_os_string();
        ads.push(":Zone.Identifier");
        std::fs::write(ads, b"[ZoneTransfer]\r\nZoneId=3\r\n")
    }
}

#[cfg(target_os = "macos")]
mod macos {
    use std::path::Path;

    /// `com.apple.quarantine` = `<flags>;<hex seconds since 1970>;<agent name>;` as Safari writes it (flags 0081:
    /// quarantined, downloaded by an app that is not the system's own downloader).
    pub fn mark(path: &Path) -> std::io::Result<()> {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        let value = format!("0081;{now:08x};Hermes;");
        xattr::set(path, "com.apple.quarantine", value.as_bytes())
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a20_marked_files_lose_their_execute_bits() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run.sh");
        std::fs::write(&p, b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        mark_downloaded(&p).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o644);
    }
}
