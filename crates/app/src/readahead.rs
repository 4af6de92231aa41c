//! The window process's files, read ahead when the resident process starts it (Linux).
//!
//! A start of the window process maps ~220 files (its binary, GTK's and WebKit's ~150 libraries, their web and
//! network processes' too, fonts, ICU's data). Where the page cache has let them go — after a while hidden, or on a
//! machine that reclaims idle cache within a minute, as the virtual machine this app is developed on does — the
//! dynamic loader then waits for one disk read per library, one after the other: ~200 major faults and ~100–200 ms
//! before `main`. So the window process records what it and its WebKit processes touched of each file once its page
//! has rendered ([`record_own`]: the pages present in their mappings, from `/proc/PID/pagemap`, in the order the
//! loader mapped them), and the resident asks the kernel to read just those parts ahead ([`read_ahead`],
//! `posix_fadvise(WILLNEED)`, from a few threads so that the files' own lookups go out together too) as it starts
//! the window process. Parts already cached cost a lookup.
//!
//! The list lives in the data folder; what it names is only ever read ahead (never opened for anything else), regular
//! files with absolute paths only, at most [`MAX_FILES`] of them and [`MAX_BYTES`] in all. A line is a path, a tab
//! and the parts as `offset+length` in bytes, separated by spaces; a line without parts is left out.

use std::path::{Path, PathBuf};

/// The list's name in the data folder.
pub const LIST: &str = "startup-files.txt";
/// At most this many files are read ahead.
pub const MAX_FILES: usize = 1000;
/// At most this many bytes in all (parts past it are left out, in the list's order).
pub const MAX_BYTES: u64 = 1 << 30;
/// At most this many parts are kept of one file (the closest ones are merged first).
const MAX_PARTS: usize = 512;
/// Two parts of a file closer than this are read as one (the kernel's own read-ahead would read the gap anyway).
const MERGE_GAP: u64 = 32 << 10;
/// Threads that ask for the read-ahead.
const WORKERS: usize = 8;
const PAGE: u64 = 4096;

/// What [`read_ahead`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadAhead {
    /// Files the kernel was asked to read ahead.
    pub files: usize,
    /// The size of their parts, in all.
    pub bytes: u64,
}

/// One file and the parts of it (`(offset, length)` in bytes, sorted, apart) to read ahead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Startup {
    pub path: PathBuf,
    pub parts: Vec<(u64, u64)>,
}

/// One file-backed line of `/proc/PID/maps`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mapping<'a> {
    start: u64,
    end: u64,
    offset: u64,
    path: &'a str,
}

/// A `/proc/PID/maps` line that maps a file (not `[heap]`, anonymous memory or a deleted file).
fn mapping(line: &str) -> Option<Mapping<'_>> {
    // address perms offset dev inode path — the path is the rest of the line after five fields
    let mut fields = [""; 5];
    let mut rest = line;
    for f in &mut fields {
        let (field, tail) = rest.trim_start().split_once(char::is_whitespace)?;
        *f = field;
        rest = tail;
    }
    let path = rest.trim();
    if !path.starts_with('/') || path.ends_with(" (deleted)") {
        return None;
    }
    let (start, end) = fields[0].split_once('-')?;
    let start = u64::from_str_radix(start, 16).ok()?;
    let end = u64::from_str_radix(end, 16).ok()?;
    let offset = u64::from_str_radix(fields[2], 16).ok()?;
    (end > start).then_some(Mapping { start, end, offset, path })
}

/// The file parts these processes have touched: for each process (in the given order), its executable first, then
/// its mappings from the highest address down (the order the dynamic loader mapped them in); within a mapping, the
/// pages present (`/proc/PID/pagemap`; the whole mapping where that cannot be read). Regular files only, each once,
/// its parts merged. Empty elsewhere.
pub fn mapped_parts(pids: &[u32]) -> Vec<Startup> {
    let mut out: Vec<Startup> = Vec::new();
    let mut index = std::collections::HashMap::<PathBuf, usize>::new();
    for &pid in pids {
        let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else { continue };
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
        let mut mappings: Vec<Mapping> = maps.lines().filter_map(mapping).collect();
        // the executable's own mappings first (the kernel maps it before the loader runs), then top down
        mappings.sort_by_key(|m| (exe.as_deref() != Some(Path::new(m.path)), std::cmp::Reverse(m.start)));
        let pagemap = std::fs::File::open(format!("/proc/{pid}/pagemap")).ok();
        for m in mappings {
            let path = PathBuf::from(m.path);
            let i = match index.get(&path) {
                Some(&i) => i,
                None => {
                    if !std::fs::metadata(&path).is_ok_and(|md| md.is_file()) {
                        continue;
                    }
                    index.insert(path.clone(), out.len());
                    out.push(Startup { path, parts: Vec::new() });
                    out.len() - 1
                }
            };
            let present = pagemap.as_ref().and_then(|f| present_pages(f, m.start, m.end));
            let parts = &mut out[i].parts;
            match present {
                Some(pages) => parts.extend(pages.into_iter().map(|(first, n)| (m.offset + first * PAGE, n * PAGE))),
                None => parts.push((m.offset, m.end - m.start)),
            }
        }
    }
    for s in &mut out {
        s.parts = merged(std::mem::take(&mut s.parts));
    }
    out.retain(|s| !s.parts.is_empty());
    out
}

/// The runs of pages present in `start..end` of a process's memory, as `(first page, pages)` counted from `start`
/// (`None` if its pagemap cannot be read).
#[cfg(unix)]
fn present_pages(pagemap: &std::fs::File, start: u64, end: u64) -> Option<Vec<(u64, u64)>> {
    use std::os::unix::fs::FileExt as _;
    let pages = (end - start) / PAGE;
    let mut runs: Vec<(u64, u64)> = Vec::new();
    let mut buf = vec![0u8; 8 * 4096];
    let mut page = 0;
    while page < pages {
        let n = (pages - page).min(4096);
        let chunk = &mut buf[..(n * 8) as usize];
        pagemap.read_exact_at(chunk, (start / PAGE + page) * 8).ok()?;
        for (k, entry) in chunk.chunks_exact(8).enumerate() {
            let entry = u64::from_le_bytes(entry.try_into().ok()?);
            // bit 63: present in memory (file pages and their private copies alike)
            if entry >> 63 == 1 {
                let p = page + k as u64;
                match runs.last_mut() {
                    Some((first, len)) if *first + *len == p => *len += 1,
                    _ => runs.push((p, 1)),
                }
            }
        }
        page += n;
    }
    Some(runs)
}

#[cfg(not(unix))]
fn present_pages(_: &std::fs::File, _: u64, _: u64) -> Option<Vec<(u64, u64)>> {
    None
}

/// `parts` sorted, overlapping and close ones ([`MERGE_GAP`]) joined, at most [`MAX_PARTS`] (joining across the
/// smallest gaps first).
fn merged(mut parts: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    parts.retain(|&(_, len)| len > 0);
    parts.sort_unstable();
    let mut gap = MERGE_GAP;
    loop {
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(parts.len());
        for (off, len) in parts.iter().copied() {
            match out.last_mut() {
                Some((o, l)) if off <= *o + *l + gap => *l = (*l).max(off + len - *o),
                _ => out.push((off, len)),
            }
        }
        if out.len() <= MAX_PARTS {
            return out;
        }
        parts = out;
        gap *= 4;
    }
}

/// This process and every process below it (its WebKit processes), from `/proc/PID/task/*/children`: this one
/// first, then in the order they were found.
pub fn own_tree() -> Vec<u32> {
    let mut all = vec![std::process::id()];
    let mut i = 0;
    while i < all.len() && all.len() < 64 {
        let pid = all[i];
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for t in tasks.flatten() {
                if let Ok(children) = std::fs::read_to_string(t.path().join("children")) {
                    for c in children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()) {
                        if !all.contains(&c) {
                            all.push(c);
                        }
                    }
                }
            }
        }
        i += 1;
    }
    all
}

/// Writes the list of `files` into `data_dir` (a temporary file renamed over the old list).
pub fn record(data_dir: &Path, files: &[Startup]) -> std::io::Result<()> {
    use std::fmt::Write as _;
    let mut text = String::new();
    for f in files.iter().filter(|f| !f.parts.is_empty()).take(MAX_FILES) {
        if let Some(s) = f.path.to_str().filter(|s| !s.contains(['\n', '\t'])) {
            text.push_str(s);
            text.push('\t');
            for (i, (off, len)) in f.parts.iter().enumerate() {
                let _ = write!(text, "{}{off}+{len}", if i == 0 { "" } else { " " });
            }
            text.push('\n');
        }
    }
    let tmp = data_dir.join(format!("{LIST}.tmp"));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, data_dir.join(LIST))
}

/// Records the file parts this process and its WebKit processes have touched (the window process, once its page is
/// rendered). Returns the files and their parts' size.
pub fn record_own(data_dir: &Path) -> std::io::Result<ReadAhead> {
    let files = mapped_parts(&own_tree());
    record(data_dir, &files)?;
    let bytes = files.iter().flat_map(|f| &f.parts).map(|(_, len)| len).sum();
    Ok(ReadAhead { files: files.len(), bytes })
}

/// The list in `data_dir`, as [`read_ahead`] reads it (none: empty).
pub fn list(data_dir: &Path) -> Vec<Startup> {
    std::fs::read_to_string(data_dir.join(LIST)).map(|text| parse(&text)).unwrap_or_default()
}

/// The list's lines, parsed: absolute paths with parts, within [`MAX_FILES`] and [`MAX_BYTES`] (in order).
fn parse(text: &str) -> Vec<Startup> {
    let mut budget = MAX_BYTES;
    let mut out = Vec::new();
    for line in text.lines() {
        if out.len() == MAX_FILES || budget == 0 {
            break;
        }
        let Some((path, parts)) = line.split_once('\t') else { continue };
        if !path.starts_with('/') {
            continue;
        }
        let mut kept = Vec::new();
        for part in parts.split_whitespace().take(MAX_PARTS) {
            let Some((off, len)) = part.split_once('+') else { continue };
            let (Ok(off), Ok(len)) = (off.parse::<u64>(), len.parse::<u64>()) else { continue };
            let len = len.min(budget);
            if len > 0 {
                kept.push((off, len));
                budget -= len;
            }
        }
        if !kept.is_empty() {
            out.push(Startup { path: PathBuf::from(path), parts: kept });
        }
    }
    out
}

/// Asks the kernel to read ahead the file parts the list in `data_dir` names, in the list's order, from
/// [`WORKERS`] threads (no list: nothing).
pub fn read_ahead(data_dir: &Path) -> ReadAhead {
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
    let list = list(data_dir);
    let next = AtomicUsize::new(0);
    let files = AtomicUsize::new(0);
    let bytes = AtomicU64::new(0);
    let work = || {
        while let Some(s) = list.get(next.fetch_add(1, Ordering::Relaxed)) {
            // (a regular file before it is opened: opening a device node can do something)
            if !std::fs::metadata(&s.path).is_ok_and(|m| m.is_file()) {
                continue;
            }
            let Ok(f) = std::fs::File::open(&s.path) else { continue };
            let Some(size) = f.metadata().ok().filter(std::fs::Metadata::is_file).map(|m| m.len()) else { continue };
            let mut asked = 0;
            for &(off, len) in s.parts.iter().filter(|(off, _)| *off < size) {
                let len = len.min(size - off);
                if sys::will_need(&f, off, len) {
                    asked += len;
                }
            }
            if asked > 0 {
                files.fetch_add(1, Ordering::Relaxed);
                bytes.fetch_add(asked, Ordering::Relaxed);
            }
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..WORKERS.min(list.len()) {
            if std::thread::Builder::new().name("hermes-read-ahead".into()).spawn_scoped(scope, work).is_err() {
                break;
            }
        }
        work();
    });
    ReadAhead { files: files.into_inner(), bytes: bytes.into_inner() }
}

#[cfg(target_os = "linux")]
mod sys {
    pub fn will_need(f: &std::fs::File, offset: u64, len: u64) -> bool {
        let Some(len) = std::num::NonZeroU64::new(len) else { return false };
        rustix::fs::fadvise(f, offset, Some(len), rustix::fs::Advice::WillNeed).is_ok()
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    pub fn will_need(_: &std::fs::File, _: u64, _: u64) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_maps_line_gives_its_file_and_where_it_is_only() {
        let line = "7f1c2a000000-7f1c2a021000 r--p 00001000 08:01 1234   /usr/lib/x86_64-linux-gnu/libc.so.6";
        assert_eq!(
            mapping(line),
            Some(Mapping {
                start: 0x7f1c2a000000,
                end: 0x7f1c2a021000,
                offset: 0x1000,
                path: "/usr/lib/x86_64-linux-gnu/libc.so.6"
            })
        );
        assert_eq!(mapping("55d0c000-55d0e000 rw-p 00000000 00:00 0          [heap]"), None);
        assert_eq!(mapping("7ffd1000-7ffd2000 rw-p 00000000 00:00 0 "), None);
        assert_eq!(mapping("7f00-7f01 r--p 00000000 08:01 99 /tmp/a b.so (deleted)"), None);
        assert_eq!(
            mapping("7f00-7f01 r--p 00000000 08:01 99 /tmp/with space.so").map(|m| m.path),
            Some("/tmp/with space.so")
        );
        assert_eq!(mapping("7f01-7f00 r--p 00000000 08:01 99 /tmp/backwards.so"), None);
        assert_eq!(mapping("zz-7f00 r--p 00000000 08:01 99 /tmp/x.so"), None);
        assert_eq!(mapping("garbage"), None);
    }

    #[test]
    fn parts_are_sorted_and_close_ones_joined() {
        assert_eq!(merged(vec![(8192, 4096), (0, 4096), (0, 0)]), vec![(0, 12288)]);
        let far = MERGE_GAP + 2 * PAGE;
        assert_eq!(merged(vec![(far, PAGE), (0, PAGE), (PAGE / 2, PAGE)]), vec![(0, PAGE + PAGE / 2), (far, PAGE)]);
        // too many parts: joined across the smallest gaps until they fit
        let many: Vec<(u64, u64)> = (0..3 * MAX_PARTS as u64).map(|i| (i * 10 * MERGE_GAP, PAGE)).collect();
        let joined = merged(many);
        assert!(joined.len() <= MAX_PARTS && !joined.is_empty(), "{}", joined.len());
        assert_eq!(joined.first().map(|p| p.0), Some(0));
        assert_eq!(joined.last().map(|p| p.0 + p.1), Some((3 * MAX_PARTS as u64 - 1) * 10 * MERGE_GAP + PAGE));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_has_touched_parts_of_its_own_binary_first() {
        let exe = std::fs::canonicalize(std::env::current_exe().unwrap()).unwrap();
        let files = mapped_parts(&own_tree());
        assert_eq!(files.first().map(|f| &f.path), Some(&exe), "the executable comes first");
        let size = std::fs::metadata(&exe).unwrap().len();
        let touched: u64 = files[0].parts.iter().map(|p| p.1).sum();
        // a test binary carries its debug information, which is never mapped
        assert!(touched > 0 && touched < size, "{touched} of {size} bytes");
        assert!(files.iter().all(|f| f.parts.windows(2).all(|w| w[0].0 + w[0].1 < w[1].0)), "sorted and apart");
        assert_eq!(own_tree().first(), Some(&std::process::id()));
    }

    #[test]
    fn the_list_keeps_absolute_paths_with_parts_within_the_budget() {
        let text = "relative.so\t0+10\n/no/parts.so\t\n/bad/parts.so\tx+1 5 2+\n/a.so\t0+4096 8192+100\n/no-tab.so\n";
        assert_eq!(parse(text), vec![Startup { path: "/a.so".into(), parts: vec![(0, 4096), (8192, 100)] }]);
        let over = format!("/a.so\t0+{}\n/b.so\t0+{MAX_BYTES}\n/c.so\t0+1\n", MAX_BYTES - 10);
        assert_eq!(
            parse(&over),
            vec![
                Startup { path: "/a.so".into(), parts: vec![(0, MAX_BYTES - 10)] },
                Startup { path: "/b.so".into(), parts: vec![(0, 10)] }
            ]
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_list_is_read_ahead_within_its_files() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_ahead(dir.path()), ReadAhead::default(), "no list: nothing");
        let a = dir.path().join("a.so");
        let b = dir.path().join("b.so");
        std::fs::write(&a, vec![1u8; 50_000]).unwrap();
        std::fs::write(&b, vec![2u8; 300]).unwrap();
        let part = |path: &Path, parts: Vec<(u64, u64)>| Startup { path: path.to_path_buf(), parts };
        let listed = [
            part(&a, vec![(0, 4096), (40_960, 20_000)]),
            part(&b, vec![(0, 4096), (8192, 4096)]),
            part(&dir.path().join("gone.so"), vec![(0, 4096)]),
            part(dir.path(), vec![(0, 4096)]),
            part(Path::new("/dev/null"), vec![(0, 4096)]),
            part(&dir.path().join("no-parts.so"), vec![]),
        ];
        record(dir.path(), &listed).unwrap();
        // a missing file, a folder and a device are skipped, and parts end at the file's end
        assert_eq!(read_ahead(dir.path()), ReadAhead { files: 2, bytes: 4096 + (50_000 - 40_960) + 300 });
        let text = std::fs::read_to_string(dir.path().join(LIST)).unwrap();
        assert!(!text.contains("no-parts"), "{text}");
        assert!(text.starts_with(&format!("{}\t0+4096 40960+20000\n", a.display())), "{text}");
    }
}
