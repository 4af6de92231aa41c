//! Starting the window process: `<app>` (Show), `<app> --open-conversation P C` (a notification's click, a tray
//! conversation) or `<app> --quick-ask` (the Quick Ask shortcut: the panel alone), told the data and log folders through `HERMES_DATA_DIR` / `HERMES_LOG_DIR`. Detached: a process
//! group of its own, no stdin/stdout/stderr of ours. It ends this resident itself (`take_over`, SIGTERM) before it
//! connects.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use hermes_app::resident::{CAPTURE_FLAG, OPEN_FLAG, QUICK_FLAG};

use crate::resident::{Launcher, Target};

/// The window process's executable and the folders it is told.
#[derive(Debug, Clone)]
pub struct WindowLauncher {
    pub app: PathBuf,
    pub data_dir: PathBuf,
    pub log_dir: PathBuf,
}

impl WindowLauncher {
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
    fn start(&self, mut cmd: Command, what: &str) {
        // the parts of files its last start used, read ahead while it starts (hermes_app::readahead)
        let dir = self.data_dir.clone();
        let reader = std::thread::Builder::new().name("hermes-read-ahead".into()).spawn(move || {
            let asked = std::time::Instant::now();
            let done = hermes_app::readahead::read_ahead(&dir);
            let ms = asked.elapsed().as_millis();
            tracing::info!(
                files = done.files,
                mb = done.bytes / (1 << 20),
                ms,
                "read ahead the window process's files"
            );
        });
        if let Err(e) = reader {
            tracing::debug!("no thread to read the window process's files ahead: {e}");
        }
        // (the wall clock of the spawn, logged: the desktop bench times a Show from it)
        let epoch_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
        match cmd.spawn() {
            Ok(mut child) => {
                tracing::info!(pid = child.id(), what, epoch_ms, "window process started");
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
