//! The hand-over between the window process and the resident one (Linux). Exactly one of them keeps the agents
//! connected at a time: the resident holds an exclusive lock on `resident.lock` in the data folder (with its pid in
//! it) for as long as it runs, and a window process that starts asks it to end (SIGTERM: it closes its connections
//! and exits) and waits for the lock to be free before it connects. The other way, the window process stops its
//! engines first, starts the resident and waits for [`READY_LINE`] on its stdout before it exits.

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// What the resident prints on its stdout once it holds the lock and has started its engines.
pub const READY_LINE: &str = "hermes-resident: ready";
/// The window process's flag for a conversation to show at start: `--open-conversation <profile> <conversation>`.
pub const OPEN_FLAG: &str = "--open-conversation";
/// The flag of a window process started to show only the Quick Ask panel (the resident's global shortcut).
pub const QUICK_FLAG: &str = "--quick-ask";
/// With [`QUICK_FLAG`]: the panel opens on a region capture (the resident's capture shortcut).
pub const CAPTURE_FLAG: &str = "--capture";
/// The lock file in the data folder.
pub const LOCK_FILE: &str = "resident.lock";
/// The flag of a window process started ahead of a Show (a standby): linked, loaded and waiting, before anything of
/// its own start, for its real command line on stdin ([`standby_line`]); it exits at end of file (its resident ended).
pub const STANDBY_FLAG: &str = "--standby";
/// The command line a standby is woken with as the tray's menu opens, before the user has chosen: the window process
/// starts and builds its main window hidden, then waits — not connected, no tray, no shortcuts — for one more line on
/// stdin: the command line of the Show (or the conversation) the user then picks. Only then does it take the
/// connections from the resident and put the window on screen. End of file first (nothing was picked: the resident
/// ended the wait, or ended): it exits.
pub const PREPARED_FLAG: &str = "--prepared";
/// The process name (`/proc/PID/comm`, what `ps` and `top` show) a standby carries while it waits; woken, it takes
/// back its own.
pub const STANDBY_NAME: &str = "hermes-standby";

/// The line that wakes a standby: its command line (without the program) as a JSON array of strings.
pub fn standby_line(args: &[String]) -> String {
    let mut line = serde_json::Value::from(args.to_vec()).to_string();
    line.push('\n');
    line
}

/// The command line in a standby's wake-up line; `None` for anything but one JSON array of strings.
pub fn parse_standby_line(line: &str) -> Option<Vec<String>> {
    serde_json::from_str(line.trim_end_matches(['\n', '\r'])).ok()
}

/// The lock, held until dropped (or the process ends).
#[derive(Debug)]
pub struct Held {
    _file: File,
}

fn open_lock(data_dir: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(data_dir.join(LOCK_FILE))
}

/// Takes the resident's lock in `data_dir` and writes this process's pid in it; `None` when another process holds it.
pub fn try_hold(data_dir: &Path) -> io::Result<Option<Held>> {
    let mut file = open_lock(data_dir)?;
    if !sys::try_lock(&file)? {
        return Ok(None);
    }
    file.set_len(0)?;
    file.rewind()?;
    write!(file, "{}", std::process::id())?;
    file.flush()?;
    Ok(Some(Held { _file: file }))
}

/// Ends the resident running on `data_dir`, if one is: SIGTERM, then a wait for its lock to be free (SIGKILL once
/// `timeout` has passed). Returns whether one was running.
pub fn take_over(data_dir: &Path, timeout: Duration) -> io::Result<bool> {
    let mut file = match open_lock(data_dir) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    if sys::try_lock(&file)? {
        sys::unlock(&file);
        return Ok(false);
    }
    let mut pid = String::new();
    file.read_to_string(&mut pid)?;
    let pid: Option<u32> = pid.trim().parse().ok().filter(|p| *p > 1 && *p != std::process::id());
    if let Some(pid) = pid {
        tracing::info!(pid, "a resident process holds the agents' connections: asking it to end");
        sys::signal(pid, false);
    }
    let start = Instant::now();
    let mut killed = false;
    loop {
        if sys::try_lock(&file)? {
            sys::unlock(&file);
            tracing::info!(ms = start.elapsed().as_millis() as u64, "the resident process has ended");
            return Ok(true);
        }
        if start.elapsed() >= timeout && !killed {
            if let Some(pid) = pid {
                tracing::warn!(pid, "the resident process did not end in time: killed");
                sys::signal(pid, true);
            }
            killed = true;
        }
        if start.elapsed() >= timeout * 2 {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "the resident process still holds its lock"));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(unix)]
mod sys {
    use std::fs::File;
    use std::io;

    use rustix::fs::{FlockOperation, flock};
    use rustix::io::Errno;
    use rustix::process::{Pid, Signal, kill_process};

    pub fn try_lock(f: &File) -> io::Result<bool> {
        match flock(f, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(true),
            Err(Errno::WOULDBLOCK) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    pub fn unlock(f: &File) {
        let _ = flock(f, FlockOperation::Unlock);
    }

    pub fn signal(pid: u32, kill: bool) {
        let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else { return };
        let _ = kill_process(pid, if kill { Signal::KILL } else { Signal::TERM });
    }
}

/// Elsewhere there is no resident process: the window process keeps the connections itself.
#[cfg(not(unix))]
mod sys {
    use std::fs::File;
    use std::io;

    pub fn try_lock(_: &File) -> io::Result<bool> {
        Ok(true)
    }

    pub fn unlock(_: &File) {}

    pub fn signal(_: u32, _: bool) {}
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_standby_line_carries_any_command_line_and_nothing_else_wakes_one() {
        let args: Vec<String> = vec![OPEN_FLAG.into(), "p \"1\"\n".into(), "ü ✓".into()];
        let line = standby_line(&args);
        assert!(line.ends_with('\n') && line.matches('\n').count() == 1, "one line: {line:?}");
        assert_eq!(parse_standby_line(&line), Some(args));
        assert_eq!(parse_standby_line("[]\n"), Some(vec![]), "Show: no arguments");
        for bad in ["", "\n", "[1]", "{\"a\":1}", "[\"a\"", "--open-conversation p c"] {
            assert_eq!(parse_standby_line(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_lock_is_exclusive_and_free_again_once_dropped() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!take_over(dir.path(), Duration::from_millis(100)).unwrap(), "no lock file: nothing to end");
        let held = try_hold(dir.path()).unwrap().expect("free");
        assert_eq!(std::fs::read_to_string(dir.path().join(LOCK_FILE)).unwrap(), std::process::id().to_string());
        assert!(try_hold(dir.path()).unwrap().is_none(), "a second holder is refused");
        drop(held);
        assert!(!take_over(dir.path(), Duration::from_millis(100)).unwrap(), "a free lock: nothing to end");
        assert!(try_hold(dir.path()).unwrap().is_some());
    }

    /// A real process holding the lock (a shell running `flock`) is ended by SIGTERM and the call returns once the
    /// lock is free.
    #[test]
    fn take_over_ends_the_holder_and_waits_for_its_lock() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join(LOCK_FILE);
        std::fs::write(&lock, "").unwrap();
        // `exec sleep` keeps the flock'd descriptor in a process whose pid the shell writes into the lock file
        let script = format!("exec 9<>'{0}'; flock -x 9; echo $$ > '{0}'; exec sleep 30", lock.display());
        let mut child = std::process::Command::new("sh").arg("-c").arg(&script).spawn().unwrap();
        let t = Instant::now();
        while std::fs::read_to_string(&lock).unwrap_or_default().trim().is_empty() {
            assert!(t.elapsed() < Duration::from_secs(10), "the holder never started");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(try_hold(dir.path()).unwrap().is_none(), "held by the child");
        assert!(take_over(dir.path(), Duration::from_secs(5)).unwrap(), "it was running");
        let status = child.wait().unwrap();
        assert!(!status.success(), "ended by a signal: {status:?}");
        assert!(try_hold(dir.path()).unwrap().is_some(), "the lock is free");
    }
}
