//! Linux: the window process started ahead of a Show. The resident (`hermes-resident`, while the app is hidden in the
//! tray) keeps one `hermes-desktop --standby` waiting, so that a Show, a notification's click or the Quick Ask
//! shortcut does not pay for the process's start: exec, and the dynamic loader mapping and binding GTK's and WebKit's
//! ~100 libraries (linked `BIND_NOW`: all their symbols resolved before `main`), which read each library's headers
//! and symbol tables from a page cache that has let them go while the app was hidden. Measured in `bench/README.md`
//! ("A window process on standby").
//!
//! The standby does nothing of its own start before it is woken — no GTK, no store, no lock, no connection, no thread
//! of its own (a JavaScriptCore library constructor's thread ends by itself within seconds): it carries the name
//! [`STANDBY_NAME`], gives back the file pages its loading touched, and blocks reading stdin. The resident writes its
//! real command line there ([`hermes_app::resident::standby_line`]); the process takes its own name back and starts as
//! if it had just been started with that command line. End of file (the resident ended: quit, killed, or a window
//! process took over) ends it, as does a line that is not a command line.
//!
//! Woken with [`PREPARED_FLAG`] (the tray's menu opening), it reads one more line on a thread of its own: the command
//! line of what the user then picked, handed to the start through [`take_go`] (`prepared.rs`), or nothing (end of
//! file: nothing picked).

use std::io::BufRead as _;
use std::sync::Mutex;
use std::sync::mpsc;

use hermes_app::resident::{PREPARED_FLAG, STANDBY_FLAG, STANDBY_NAME, parse_standby_line};

/// What a prepared start was told to do next: the picked command line, or `None` (nothing was picked).
pub type Go = mpsc::Receiver<Option<Vec<String>>>;

static GO: Mutex<Option<Go>> = Mutex::new(None);

/// The command line a prepared start waits for (once; `None` for a start that was not prepared).
pub fn take_go() -> Option<Go> {
    GO.lock().ok()?.take()
}

/// `args` as they are, unless they are the standby's (`--standby` alone): then waits for the real command line on
/// stdin and returns it, or ends the process (end of file, or a line that is not a command line).
pub fn wait_if_standby(args: Vec<String>) -> Vec<String> {
    if args != [STANDBY_FLAG] {
        return args;
    }
    let own = std::fs::read_to_string("/proc/self/comm").unwrap_or_default();
    set_name(STANDBY_NAME);
    give_back_file_pages();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(n) if n > 0 => {}
        // the resident ended: nothing to start for
        _ => std::process::exit(0),
    }
    let Some(args) = parse_standby_line(&line) else {
        eprintln!("hermes-desktop: a standby woken with something that is not a command line");
        std::process::exit(2)
    };
    if args == [PREPARED_FLAG] {
        // the next line is the user's pick; until then the pipe stays this process's stdin
        let (tx, rx) = mpsc::channel();
        if let Ok(mut go) = GO.lock() {
            *go = Some(rx);
        }
        let reader = std::thread::Builder::new().name("hermes-prepared".into()).spawn(move || {
            let mut line = String::new();
            let picked = match std::io::stdin().lock().read_line(&mut line) {
                Ok(n) if n > 0 => parse_standby_line(&line),
                _ => None,
            };
            let _ = tx.send(picked);
        });
        if reader.is_err() {
            eprintln!("hermes-desktop: no thread to wait for the prepared window's Show");
            std::process::exit(2)
        }
    } else if let Ok(null) = std::fs::File::open("/dev/null") {
        // nothing of this process reads the resident's pipe again: stdin is /dev/null, as a started window process's
        let _ = rustix::stdio::dup2_stdin(&null);
    }
    if !own.trim().is_empty() {
        set_name(own.trim());
    }
    args
}

/// The name of this process (its main thread's, which is the process's in `ps`); at most 15 bytes are kept.
fn set_name(name: &str) {
    // (the main thread's name is the process's: /proc/self is this thread group's leader, and this runs on it)
    let _ = std::fs::write("/proc/self/comm", name);
}

/// The pages of its files the loading touched (headers, symbol tables, the libraries' constructors), given back to
/// the system at once (`MADV_PAGEOUT` over every file mapping): a waiting standby keeps only what the loading wrote —
/// the bound symbols and relocated data, which is the work saved — instead of ~38 MB of file pages it will not read
/// again before a Show (when the resident reads the start's files ahead anyway, `hermes_app::readahead`). Pages
/// another process maps too (the C library's) are left where they are, and nothing is lost: the hint drops clean
/// pages only.
fn give_back_file_pages() {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else { return };
    for (start, len) in file_mappings(&maps) {
        page_out(start, len);
    }
}

/// The file mappings (start, length) in a `/proc/PID/maps` text: lines "start-end perms offset dev inode path" whose
/// path is a file's (starts with '/'); not anonymous memory, the heap, the stack or the kernel's `[vdso]`.
fn file_mappings(maps: &str) -> Vec<(usize, usize)> {
    maps.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let (range, path) = (fields.next()?, fields.nth(4)?);
            let (start, end) = range.split_once('-')?;
            let (start, end) = (usize::from_str_radix(start, 16).ok()?, usize::from_str_radix(end, 16).ok()?);
            let len = end.checked_sub(start).filter(|n| *n > 0)?;
            path.starts_with('/').then_some((start, len))
        })
        .collect()
}

#[allow(unsafe_code)] // `madvise` (see SAFETY below)
fn page_out(start: usize, len: usize) {
    // SAFETY: the range is one of this process's own mappings as the kernel listed it, and `MADV_PAGEOUT` is advice
    // that changes no memory's contents: clean file pages are read again from their file at the next access, dirty
    // or anonymous ones go to swap or stay. (An error — an old kernel without the advice — leaves the pages where
    // they are.)
    let _ = unsafe { rustix::mm::madvise(start as *mut std::ffi::c_void, len, rustix::mm::Advice::LinuxPageOut) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_mappings_are_given_back() {
        let maps = "\
5581a0000000-5581a0200000 r--p 00000000 08:01 1234   /opt/Hermes/hermes-desktop
7f10a0000000-7f10a0021000 rw-p 00000000 00:00 0
7f10b0000000-7f10b0001000 r-xp 00010000 08:01 99     /usr/lib/x86_64-linux-gnu/lib with space.so (deleted)
5581a1000000-5581a1100000 rw-p 00000000 00:00 0      [heap]
7ffd10000000-7ffd10021000 rw-p 00000000 00:00 0      [stack]
7ffd10100000-7ffd10102000 r-xp 00000000 00:00 0      [vdso]
not a mapping line
7f10c0000000-7f10b0000000 r--p 00000000 08:01 5      /backwards
";
        assert_eq!(file_mappings(maps), [(0x5581a0000000, 0x200000), (0x7f10b0000000, 0x1000)]);
        // this process's own: the test binary is a file mapping
        let own = std::fs::read_to_string("/proc/self/maps").unwrap();
        assert!(!file_mappings(&own).is_empty());
    }
}
