//! The window process's files, read ahead when the resident process starts it (Linux).
//!
//! A start of the window process maps ~220 files (its binary, GTK's and WebKit's ~150 libraries, their web and
//! network processes' too, fonts, ICU's data). Where the page cache has let them go — after a while hidden, or on a
//! machine that reclaims idle cache within a minute, as the virtual machine this app is developed on does — the
//! dynamic loader then waits for one disk read per library, one after the other: ~200 major faults and ~100–200 ms
//! before `main`. So the window process records the files it and its WebKit processes mapped once its page is
//! interactive ([`record_own`]), and the resident asks the kernel to read them ahead ([`read_ahead`],
//! `posix_fadvise(WILLNEED)`: the reads go out together, smallest file first) on a thread of its own as it starts the
//! window process. Files already cached cost a lookup.
//!
//! The list lives in the data folder; what it names is only ever read ahead (never opened for anything else), regular
//! files with absolute paths only, at most [`MAX_FILES`] of them and [`MAX_BYTES`] in all.

use std::path::{Path, PathBuf};

/// The list's name in the data folder.
pub const LIST: &str = "startup-files.txt";
/// At most this many files are read ahead.
pub const MAX_FILES: usize = 1000;
/// At most this many bytes in all (files past it are left out, smallest first).
pub const MAX_BYTES: u64 = 1 << 30;

/// What [`read_ahead`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadAhead {
    /// Files the kernel was asked to read ahead.
    pub files: usize,
    /// Their size in all.
    pub bytes: u64,
}

/// The regular files mapped by these processes (from `/proc/PID/maps`; not device nodes), each once, sorted. Empty
/// elsewhere.
pub fn mapped_files(pids: &[u32]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = pids
        .iter()
        .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/maps")).ok())
        .flat_map(|maps| maps.lines().filter_map(map_path).map(PathBuf::from).collect::<Vec<_>>())
        .collect();
    files.sort_unstable();
    files.dedup();
    files.retain(|f| std::fs::metadata(f).is_ok_and(|m| m.is_file()));
    files
}

/// The path of one `/proc/PID/maps` line, if it maps a file (not `[heap]`, anonymous memory or a deleted file).
fn map_path(line: &str) -> Option<&str> {
    // address perms offset dev inode path — the path is the rest of the line after five fields
    let mut rest = line;
    for _ in 0..5 {
        rest = rest.trim_start().split_once(char::is_whitespace)?.1;
    }
    let path = rest.trim();
    (path.starts_with('/') && !path.ends_with(" (deleted)")).then_some(path)
}

/// This process and every process below it (its WebKit processes), from `/proc/PID/task/*/children`.
pub fn own_tree() -> Vec<u32> {
    let mut all = vec![std::process::id()];
    let mut i = 0;
    while i < all.len() && all.len() < 64 {
        let pid = all[i];
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for t in tasks.flatten() {
                if let Ok(children) = std::fs::read_to_string(t.path().join("children")) {
                    all.extend(children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
                }
            }
        }
        i += 1;
    }
    all.sort_unstable();
    all.dedup();
    all
}

/// Writes the list of `files` into `data_dir` (a temporary file renamed over the old list).
pub fn record(data_dir: &Path, files: &[PathBuf]) -> std::io::Result<()> {
    let mut text = String::new();
    for f in files.iter().take(MAX_FILES) {
        if let Some(s) = f.to_str().filter(|s| !s.contains('\n')) {
            text.push_str(s);
            text.push('\n');
        }
    }
    let tmp = data_dir.join(format!("{LIST}.tmp"));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, data_dir.join(LIST))
}

/// Records the files this process and its WebKit processes have mapped (the window process, once its page is
/// interactive).
pub fn record_own(data_dir: &Path) -> std::io::Result<usize> {
    let files = mapped_files(&own_tree());
    record(data_dir, &files)?;
    Ok(files.len())
}

/// Asks the kernel to read ahead the files the list in `data_dir` names, smallest first (no list: nothing).
pub fn read_ahead(data_dir: &Path) -> ReadAhead {
    let Ok(text) = std::fs::read_to_string(data_dir.join(LIST)) else { return ReadAhead::default() };
    let mut files: Vec<(u64, std::fs::File)> = text
        .lines()
        .take(MAX_FILES)
        .filter(|l| l.starts_with('/'))
        .filter_map(|l| {
            // (a regular file before it is opened: opening a device node can do something)
            std::fs::metadata(l).ok().filter(std::fs::Metadata::is_file)?;
            let f = std::fs::File::open(l).ok()?;
            let meta = f.metadata().ok()?;
            meta.is_file().then_some((meta.len(), f))
        })
        .collect();
    files.sort_by_key(|(len, _)| *len);
    let mut done = ReadAhead::default();
    for (len, f) in files {
        if done.bytes + len > MAX_BYTES {
            break;
        }
        if sys::will_need(&f) {
            done.files += 1;
            done.bytes += len;
        }
    }
    done
}

#[cfg(target_os = "linux")]
mod sys {
    pub fn will_need(f: &std::fs::File) -> bool {
        rustix::fs::fadvise(f, 0, None, rustix::fs::Advice::WillNeed).is_ok()
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    pub fn will_need(_: &std::fs::File) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_maps_line_gives_its_file_only() {
        let line = "7f1c2a000000-7f1c2a021000 r--p 00000000 08:01 1234   /usr/lib/x86_64-linux-gnu/libc.so.6";
        assert_eq!(map_path(line), Some("/usr/lib/x86_64-linux-gnu/libc.so.6"));
        assert_eq!(map_path("55d0c000-55d0e000 rw-p 00000000 00:00 0          [heap]"), None);
        assert_eq!(map_path("7ffd1000-7ffd2000 rw-p 00000000 00:00 0 "), None);
        assert_eq!(map_path("7f00-7f01 r--p 00000000 08:01 99 /tmp/a b.so (deleted)"), None);
        assert_eq!(map_path("7f00-7f01 r--p 00000000 08:01 99 /tmp/with space.so"), Some("/tmp/with space.so"));
        assert_eq!(map_path("garbage"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_maps_its_own_binary() {
        let exe = std::fs::canonicalize(std::env::current_exe().unwrap()).unwrap();
        let files = mapped_files(&own_tree());
        assert!(files.contains(&exe), "{exe:?} not among {} mapped files", files.len());
        assert!(own_tree().contains(&std::process::id()));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_list_is_read_ahead_within_its_limits() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_ahead(dir.path()), ReadAhead::default(), "no list: nothing");
        let a = dir.path().join("a.so");
        let b = dir.path().join("b.so");
        std::fs::write(&a, vec![1u8; 5000]).unwrap();
        std::fs::write(&b, vec![2u8; 300]).unwrap();
        let listed = [a.clone(), b.clone(), dir.path().join("gone.so"), dir.path().to_path_buf(), "/dev/null".into()];
        record(dir.path(), &listed).unwrap();
        // a missing file, a folder and a device are skipped; the list has no relative paths
        assert_eq!(read_ahead(dir.path()), ReadAhead { files: 2, bytes: 5300 });
        std::fs::write(dir.path().join(LIST), format!("relative.so\n{}\n", b.display())).unwrap();
        assert_eq!(read_ahead(dir.path()), ReadAhead { files: 1, bytes: 300 });
    }
}
