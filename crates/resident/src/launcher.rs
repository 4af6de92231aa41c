//! Starting the window process: `<app>` (Show), `<app> --open-conversation P C` (a notification's click, a tray
//! conversation) or `<app> --quick-ask` (the Quick Ask shortcut: the panel alone), told the data and log folders through `HERMES_DATA_DIR` / `HERMES_LOG_DIR`. Detached: a process
//! group of its own, no stdin/stdout/stderr of ours. It ends this resident itself (`take_over`, SIGTERM) before it
//! connects.
//!
//! A window process on standby (`<app> --standby`, [`WindowLauncher::prepare_standby`]: started once this resident
//! serves, loaded and waiting before its `main` does anything) takes the command line of the next start through its
//! stdin instead of a new process being started, so a Show does not wait for exec and the dynamic loader
//! (`hermes_desktop::standby`). A standby that has ended, or whose executable was replaced on disk since it started
//! (an update), is not used: it is ended and a new process started.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hermes_app::resident::{CAPTURE_FLAG, OPEN_FLAG, QUICK_FLAG, STANDBY_FLAG, standby_line};

use crate::resident::{Launcher, ShowHint, Target};

/// The window process's executable and the folders it is told.
#[derive(Debug)]
pub struct WindowLauncher {
    pub app: PathBuf,
    pub data_dir: PathBuf,
    pub log_dir: PathBuf,
    standby: Mutex<Option<Standby>>,
    /// When a hint last had the files read ahead ([`Launcher::show_may_follow`]).
    read_for_hint: Mutex<Option<Instant>>,
}

/// A hint within this of the last one reads nothing more (some tray hosts ask at every hover of the icon; an agent
/// may send a burst of notifications).
const HINT_READ_EVERY: Duration = Duration::from_secs(20);

/// A window process waiting for its command line, and which executable it runs.
#[derive(Debug)]
struct Standby {
    child: Child,
    exe: Option<FileId>,
}

/// What tells an executable from the one that replaced it: device, inode, size and modification time.
type FileId = (u64, u64, u64, i64, i64);

fn file_id(path: &Path) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let m = std::fs::metadata(path).ok()?;
        Some((m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

impl WindowLauncher {
    pub fn new(app: PathBuf, data_dir: PathBuf, log_dir: PathBuf) -> Self {
        WindowLauncher { app, data_dir, log_dir, standby: Mutex::new(None), read_for_hint: Mutex::new(None) }
    }

    /// Starts a window process on standby, unless one waits already.
    pub fn prepare_standby(&self) {
        let Ok(mut slot) = self.standby.lock() else { return };
        if slot.is_some() {
            return;
        }
        let exe = file_id(&self.app);
        let mut cmd = self.command(None);
        cmd.arg(STANDBY_FLAG).stdin(Stdio::piped());
        match cmd.spawn() {
            Ok(child) => {
                tracing::info!(pid = child.id(), "window process on standby");
                *slot = Some(Standby { child, exe });
            }
            Err(e) => tracing::warn!(app = %self.app.display(), "cannot start a window process on standby: {e}"),
        }
    }

    /// The standby, woken with `cmd`'s arguments; `None` (and the standby ended) when there is none, it has ended,
    /// its executable was replaced since, or it cannot be told.
    fn wake_standby(&self, cmd: &Command) -> Option<Child> {
        let mut standby = self.standby.lock().ok()?.take()?;
        let args: Option<Vec<String>> = cmd.get_args().map(|a| a.to_str().map(str::to_owned)).collect();
        let running = matches!(standby.child.try_wait(), Ok(None));
        let same_exe = standby.exe.is_some() && standby.exe == file_id(&self.app);
        let told = running
            && same_exe
            && args.is_some_and(|args| {
                standby.child.stdin.take().is_some_and(|mut pipe| {
                    pipe.write_all(standby_line(&args).as_bytes()).and_then(|()| pipe.flush()).is_ok()
                })
            });
        if told {
            return Some(standby.child);
        }
        tracing::info!(pid = standby.child.id(), running, same_exe, "the window process on standby not used: ended");
        let _ = standby.child.kill();
        let _ = standby.child.wait();
        None
    }

    /// The command that starts the window process (on `target`).
    pub fn command(&self, target: Option<&Target>) -> Command {
        let mut cmd = Command::new(&self.app);
        if let Some(t) = target {
            cmd.arg(OPEN_FLAG).arg(&t.profile_id).arg(&t.conversation_id);
        }
        cmd.env("HERMES_DATA_DIR", &self.data_dir)
            .env("HERMES_LOG_DIR", &self.log_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt as _;
            cmd.process_group(0);
        }
        cmd
    }
}

impl WindowLauncher {
    /// The parts of files the window process's last start used, read ahead on a thread of their own
    /// (`hermes_app::readahead`); `why` goes to the log.
    fn read_ahead(&self, why: &'static str) {
        let dir = self.data_dir.clone();
        let reader = std::thread::Builder::new().name("hermes-read-ahead".into()).spawn(move || {
            let asked = Instant::now();
            let done = hermes_app::readahead::read_ahead(&dir);
            let ms = asked.elapsed().as_millis();
            tracing::info!(
                why,
                files = done.files,
                mb = done.bytes / (1 << 20),
                ms,
                "read ahead the window process's files"
            );
        });
        if let Err(e) = reader {
            tracing::debug!("no thread to read the window process's files ahead: {e}");
        }
    }

    fn start(&self, mut cmd: Command, what: &str) {
        // (what a hint's read-ahead read is in the page cache by now: those parts cost a lookup)
        self.read_ahead("start");
        // (the wall clock of the spawn, logged: the desktop bench times a Show from it)
        let epoch_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
        let (started, standby) = match self.wake_standby(&cmd) {
            Some(child) => (Ok(child), true),
            None => (cmd.spawn(), false),
        };
        match started {
            Ok(mut child) => {
                tracing::info!(pid = child.id(), what, standby, epoch_ms, "window process started");
                // reaped when it ends (this resident has usually ended first, by then)
                let waiter = std::thread::Builder::new().name("hermes-window-wait".into()).spawn(move || {
                    let _ = child.wait();
                });
                if let Err(e) = waiter {
                    tracing::debug!("no thread to reap the window process: {e}");
                }
            }
            Err(e) => tracing::warn!(app = %self.app.display(), "cannot start the window process: {e}"),
        }
    }
}

impl Launcher for WindowLauncher {
    /// The files read ahead while the user is still choosing: the window process's libraries that the page cache
    /// gave back while it waited come off the disk during the menu's few hundred milliseconds (or before a
    /// notification is clicked) rather than during the Show. Reading ahead only fills the page cache (nothing is
    /// mapped or kept by this process).
    fn show_may_follow(&self, why: ShowHint) {
        let mut last = self.read_for_hint.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_some_and(|t| t.elapsed() < HINT_READ_EVERY) {
            return;
        }
        *last = Some(Instant::now());
        drop(last);
        self.read_ahead(why.as_str());
    }

    fn launch(&self, target: Option<Target>) {
        let what = if target.is_some() { "a conversation" } else { "show" };
        self.start(self.command(target.as_ref()), what);
    }

    fn quick_ask(&self, capture: bool) {
        let mut cmd = self.command(None);
        cmd.arg(QUICK_FLAG);
        if capture {
            cmd.arg(CAPTURE_FLAG);
        }
        self.start(cmd, if capture { "quick ask on a capture" } else { "quick ask" });
    }
}
