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
//!
//! As the tray's menu opens, the standby is woken ahead of the user's choice ([`PREPARED_FLAG`]): it builds its main
//! window hidden and waits, unconnected, for the Show's command line, which the click then writes — the window
//! process's start (GTK, the store, WebKit's web process, the page's load and first render) runs while the user moves
//! to "Show Hermes" instead of after the click. Nothing picked within [`PREPARED_FOR`] (the menu closed, Mute or Quit
//! chosen): its stdin is closed, it exits, and a new standby is started; a menu opening within
//! [`PREPARE_AGAIN_AFTER`] of such an unused one prepares nothing (tray hosts that ask at every hover of the icon).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hermes_app::resident::{CAPTURE_FLAG, OPEN_FLAG, PREPARED_FLAG, QUICK_FLAG, STANDBY_FLAG, standby_line};

use crate::resident::{Launcher, ShowHint, Target};

/// The window process's executable and the folders it is told.
#[derive(Debug)]
pub struct WindowLauncher {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    app: PathBuf,
    data_dir: PathBuf,
    log_dir: PathBuf,
    standby: Mutex<Option<Standby>>,
    /// A window process woken as the menu opened, waiting for the Show's command line.
    prepared: Mutex<Option<Prepared>>,
    /// When a prepared window process last went unused.
    unused_prepared: Mutex<Option<Instant>>,
    /// How long a prepared window process waits for a pick ([`PREPARED_FOR`]).
    prepared_for: Duration,
    /// When a hint last had the files read ahead ([`Launcher::show_may_follow`]).
    read_for_hint: Mutex<Option<Instant>>,
}

/// How long a window process prepared at the menu's opening waits for a click before it is ended.
pub const PREPARED_FOR: Duration = Duration::from_secs(15);

/// After a prepared window process went unused, a menu opening within this prepares none (the read-ahead still runs).
pub const PREPARE_AGAIN_AFTER: Duration = Duration::from_secs(60);

/// [`PREPARED_FOR`], or — in debug builds only, for the end-to-end tests — `HERMES_PREPARED_MS`.
fn prepared_for() -> Duration {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("HERMES_PREPARED_MS").ok().and_then(|v| v.trim().parse::<u64>().ok()) {
        return Duration::from_millis(ms);
    }
    PREPARED_FOR
}

/// A woken window process building its window hidden, and the pipe its Show's command line goes through.
#[derive(Debug)]
struct Prepared {
    child: Child,
    stdin: ChildStdin,
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
        WindowLauncher {
            inner: Arc::new(Inner {
                app,
                data_dir,
                log_dir,
                standby: Mutex::new(None),
                prepared: Mutex::new(None),
                unused_prepared: Mutex::new(None),
                prepared_for: prepared_for(),
                read_for_hint: Mutex::new(None),
            }),
        }
    }

    /// How long a prepared window process waits for a pick (a test's shorter time); before the launcher is used.
    pub fn set_prepared_for(&mut self, wait: Duration) {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.prepared_for = wait;
        }
    }

    /// Starts a window process on standby, unless one waits already.
    pub fn prepare_standby(&self) {
        let Ok(mut slot) = self.inner.standby.lock() else { return };
        if slot.is_some() {
            return;
        }
        let exe = file_id(&self.inner.app);
        let mut cmd = self.command(None);
        cmd.arg(STANDBY_FLAG).stdin(Stdio::piped());
        match cmd.spawn() {
            Ok(child) => {
                tracing::info!(pid = child.id(), "window process on standby");
                *slot = Some(Standby { child, exe });
            }
            Err(e) => tracing::warn!(app = %self.inner.app.display(), "cannot start a window process on standby: {e}"),
        }
    }

    /// The standby taken out of its slot if it can be woken; `None` (and the standby ended) when there is none, it
    /// has ended, or its executable was replaced since.
    fn usable_standby(&self) -> Option<Standby> {
        let mut standby = self.inner.standby.lock().ok()?.take()?;
        let running = matches!(standby.child.try_wait(), Ok(None));
        let same_exe = standby.exe.is_some() && standby.exe == file_id(&self.inner.app);
        if running && same_exe {
            return Some(standby);
        }
        tracing::info!(pid = standby.child.id(), running, same_exe, "the window process on standby not used: ended");
        end(standby.child);
        None
    }

    /// The standby, woken with `cmd`'s arguments; `None` (and the standby ended) when there is none, it has ended,
    /// its executable was replaced since, or it cannot be told.
    fn wake_standby(&self, cmd: &Command) -> Option<Child> {
        let mut standby = self.usable_standby()?;
        let told =
            args_of(cmd).is_some_and(|args| standby.child.stdin.take().is_some_and(|mut pipe| tell(&mut pipe, &args)));
        if told {
            return Some(standby.child);
        }
        tracing::info!(pid = standby.child.id(), "the window process on standby cannot be told: ended");
        end(standby.child);
        None
    }

    /// The menu is opening: the standby woken to prepare the main window ([`PREPARED_FLAG`]), unless a prepared
    /// process waits already, one went unused a moment ago, or there is no standby to wake.
    fn prepare_window(&self) {
        let Ok(mut slot) = self.inner.prepared.lock() else { return };
        if let Some(p) = slot.as_mut() {
            if matches!(p.child.try_wait(), Ok(None)) {
                return;
            }
            tracing::info!(pid = p.child.id(), "the prepared window process had ended");
            *slot = None;
        }
        let recently = self.inner.unused_prepared.lock().ok().and_then(|t| *t).map(|t| t.elapsed());
        if recently.is_some_and(|t| t < PREPARE_AGAIN_AFTER) {
            return;
        }
        let Some(mut standby) = self.usable_standby() else { return };
        let Some(mut stdin) = standby.child.stdin.take() else {
            end(standby.child);
            return;
        };
        if !tell(&mut stdin, &[PREPARED_FLAG.to_string()]) {
            tracing::info!(pid = standby.child.id(), "the window process on standby cannot be told: ended");
            end(standby.child);
            return;
        }
        let pid = standby.child.id();
        tracing::info!(pid, "the tray's menu opened: the window process on standby prepares the window");
        *slot = Some(Prepared { child: standby.child, stdin });
        drop(slot);
        // (the process's end once unused, on a thread of its own: a weak reference, so that a resident ending drops
        // the pipe at once)
        let inner = Arc::downgrade(&self.inner);
        let wait = self.inner.prepared_for;
        let timer = std::thread::Builder::new().name("hermes-prepared".into()).spawn(move || {
            std::thread::sleep(wait);
            if let Some(inner) = inner.upgrade() {
                WindowLauncher { inner }.end_unused_prepared(pid);
            }
        });
        if let Err(e) = timer {
            tracing::debug!("no thread to end an unused prepared window process: {e}");
        }
    }

    /// The prepared process `pid`, if nothing was picked for it: its pipe closed (it exits at the end of file) and a
    /// new standby started in its place.
    fn end_unused_prepared(&self, pid: u32) {
        let unused = {
            let Ok(mut slot) = self.inner.prepared.lock() else { return };
            if slot.as_ref().is_none_or(|p| p.child.id() != pid) {
                return;
            }
            slot.take()
        };
        let Some(Prepared { child, stdin }) = unused else { return };
        drop(stdin);
        tracing::info!(pid, "nothing picked in the tray's menu: the prepared window process ends");
        if let Ok(mut t) = self.inner.unused_prepared.lock() {
            *t = Some(Instant::now());
        }
        reap(child);
        self.prepare_standby();
    }

    /// The prepared process told `cmd`'s arguments (the Show the user picked); `None` (and it ended) when there is
    /// none, it has ended, or it cannot be told.
    fn go_prepared(&self, cmd: &Command) -> Option<Child> {
        let Prepared { mut child, mut stdin } = self.inner.prepared.lock().ok()?.take()?;
        let running = matches!(child.try_wait(), Ok(None));
        if running && args_of(cmd).is_some_and(|args| tell(&mut stdin, &args)) {
            return Some(child);
        }
        tracing::info!(pid = child.id(), running, "the prepared window process not used: ended");
        drop(stdin);
        end(child);
        None
    }

    /// The prepared process, if one waits, ended: what was picked is not a Show (the Quick Ask shortcut).
    fn drop_prepared(&self) {
        let prepared = self.inner.prepared.lock().ok().and_then(|mut p| p.take());
        if let Some(Prepared { child, stdin }) = prepared {
            drop(stdin);
            tracing::info!(pid = child.id(), "the prepared window process is not what was asked for: it ends");
            reap(child);
        }
    }

    /// The command that starts the window process (on `target`).
    pub fn command(&self, target: Option<&Target>) -> Command {
        let mut cmd = Command::new(&self.inner.app);
        if let Some(t) = target {
            cmd.arg(OPEN_FLAG).arg(&t.profile_id).arg(&t.conversation_id);
        }
        cmd.env("HERMES_DATA_DIR", &self.inner.data_dir)
            .env("HERMES_LOG_DIR", &self.inner.log_dir)
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

/// A command's arguments (without the program), if they are all text.
fn args_of(cmd: &Command) -> Option<Vec<String>> {
    cmd.get_args().map(|a| a.to_str().map(str::to_owned)).collect()
}

/// Writes a command line to a waiting window process ([`standby_line`]); whether it went through.
fn tell(pipe: &mut ChildStdin, args: &[String]) -> bool {
    pipe.write_all(standby_line(args).as_bytes()).and_then(|()| pipe.flush()).is_ok()
}

/// Ends a window process that waits (killed and reaped).
fn end(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Reaps a window process when it ends, on a thread of its own.
fn reap(mut child: Child) {
    let waiter = std::thread::Builder::new().name("hermes-window-wait".into()).spawn(move || {
        let _ = child.wait();
    });
    if let Err(e) = waiter {
        tracing::debug!("no thread to reap the window process: {e}");
    }
}

impl WindowLauncher {
    /// The parts of files the window process's last start used, read ahead on a thread of their own
    /// (`hermes_app::readahead`); `why` goes to the log.
    fn read_ahead(&self, why: &'static str) {
        let dir = self.inner.data_dir.clone();
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
        let (started, prepared, standby) = if let Some(child) = self.go_prepared(&cmd) {
            (Ok(child), true, false)
        } else if let Some(child) = self.wake_standby(&cmd) {
            (Ok(child), false, true)
        } else {
            (cmd.spawn(), false, false)
        };
        match started {
            Ok(child) => {
                tracing::info!(pid = child.id(), what, prepared, standby, epoch_ms, "window process started");
                // reaped when it ends (this resident has usually ended first, by then)
                reap(child);
            }
            Err(e) => tracing::warn!(app = %self.inner.app.display(), "cannot start the window process: {e}"),
        }
    }
}

impl Launcher for WindowLauncher {
    /// The files read ahead while the user is still choosing: the window process's libraries that the page cache
    /// gave back while it waited come off the disk during the menu's few hundred milliseconds (or before a
    /// notification is clicked) rather than during the Show. Reading ahead only fills the page cache (nothing is
    /// mapped or kept by this process).
    /// As the menu opens, the window is also prepared ([`PREPARED_FLAG`]): not for a notification (raised without
    /// the user, and perhaps never clicked).
    fn show_may_follow(&self, why: ShowHint) {
        let mut last = self.inner.read_for_hint.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_none_or(|t| t.elapsed() >= HINT_READ_EVERY) {
            *last = Some(Instant::now());
            drop(last);
            self.read_ahead(why.as_str());
        }
        if why == ShowHint::MenuOpened {
            self.prepare_window();
        }
    }

    fn launch(&self, target: Option<Target>) {
        let what = if target.is_some() { "a conversation" } else { "show" };
        self.start(self.command(target.as_ref()), what);
    }

    fn quick_ask(&self, capture: bool) {
        self.drop_prepared();
        let mut cmd = self.command(None);
        cmd.arg(QUICK_FLAG);
        if capture {
            cmd.arg(CAPTURE_FLAG);
        }
        self.start(cmd, if capture { "quick ask on a capture" } else { "quick ask" });
    }
}
