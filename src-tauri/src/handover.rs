//! The window process and the resident one (`hermes-resident`, Linux). This process keeps GTK's and WebKit's
//! libraries mapped (~100 MB of PSS) even with no webview, so once the main window has stayed hidden for its timeout
//! (or a start at login has waited as long) the agents' connections move to the resident process, which links neither,
//! and this process ends. Exactly one of the two is connected at a time (the spec says nothing of two connections of
//! one device, so they never overlap): the engines here stop first, then the resident starts hers and says
//! [`READY_LINE`]; the other way, every start of this process ends a running resident before it connects
//! ([`wait_for_resident`]). Where the hand-over cannot happen (another OS, a token kept for this session only — the
//! demo agent's too —, no `hermes-resident` beside this program) this process stays in the tray itself.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use hermes_app::resident::READY_LINE;
use tauri::{AppHandle, Manager};

use crate::state::AppState;

/// The resident program: `hermes-resident` beside this one.
pub fn resident_bin() -> Option<PathBuf> {
    let bin = std::env::current_exe().ok()?.parent()?.join("hermes-resident");
    bin.is_file().then_some(bin)
}

/// Why the connections stay here, if they do.
pub fn refusal(app: &AppHandle) -> Option<&'static str> {
    if !cfg!(target_os = "linux") {
        return Some("no resident process on this OS");
    }
    if std::env::var_os("HERMES_NO_RESIDENT").is_some() {
        return Some("turned off by HERMES_NO_RESIDENT");
    }
    let Some(st) = app.try_state::<AppState>() else { return Some("the app is not set up") };
    if st.session_tokens.lock().map(|m| !m.is_empty()).unwrap_or(true) {
        return Some("a token is kept for this session only (or the demo agent runs in this process)");
    }
    if resident_bin().is_none() {
        return Some("no hermes-resident beside the app");
    }
    None
}

/// Engines may start (managed state): false while the connections belong to a resident process.
pub struct Gate(tokio::sync::watch::Sender<bool>);

impl Gate {
    pub fn new() -> Gate {
        Gate(tokio::sync::watch::channel(false).0)
    }

    fn set(&self, open: bool) {
        self.0.send_replace(open);
    }

    /// Waits until engines may start.
    pub async fn opened(&self) {
        let mut rx = self.0.subscribe();
        let _ = rx.wait_for(|open| *open).await;
    }
}

impl Default for Gate {
    fn default() -> Self {
        Gate::new()
    }
}

/// At start (off the main thread): a resident process that holds the connections is asked to end, and engines may
/// start once it has.
pub async fn wait_for_resident(app: &AppHandle) {
    let Some(st) = app.try_state::<AppState>() else { return };
    let dir = st.data_dir.clone();
    let ended =
        tauri::async_runtime::spawn_blocking(move || hermes_app::resident::take_over(&dir, Duration::from_secs(5)))
            .await;
    match ended {
        Ok(Ok(true)) => tracing::info!(
            since_start_ms = crate::since_start_ms(),
            "took the agents' connections back from the resident process"
        ),
        Ok(Ok(false)) => {}
        Ok(Err(e)) => tracing::warn!("cannot end the resident process: {e}"),
        Err(e) => tracing::warn!("cannot end the resident process: {e}"),
    }
    if let Some(g) = app.try_state::<Gate>() {
        g.set(true);
    }
}

/// The main window has been gone for its timeout: hand the connections to the resident process and end, or stay.
pub fn start(app: &AppHandle) {
    if let Some(why) = refusal(app) {
        tracing::info!("the app keeps its agents connected itself: {why}");
        return;
    }
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        if let Some(g) = app.try_state::<Gate>() {
            g.set(false);
        }
        stop_engines(&app).await;
        // the resident grabs the Quick Ask keys: this process lets go of them first (X11 grants a grab to one client)
        let handle = app.clone();
        let _ = tauri::async_runtime::spawn_blocking(move || crate::shortcuts::release(&handle)).await;
        let ready = tauri::async_runtime::spawn_blocking({
            let app = app.clone();
            move || spawn_resident(&app)
        })
        .await
        .unwrap_or_else(|e| Err(e.to_string()));
        let came_back = app.get_webview_window(crate::window::MAIN).is_some();
        match ready {
            Ok(()) if !came_back => {
                tracing::info!("the resident process holds the agents' connections now: this process ends");
                crate::window::quit(&app);
            }
            Ok(()) => {
                tracing::info!("the window came back during the hand-over: the connections stay here");
                take_back(&app).await;
            }
            Err(e) => {
                tracing::warn!("the resident process did not start ({e}): the app keeps its agents connected");
                take_back(&app).await;
            }
        }
    });
}

/// The hand-over did not happen (or was undone): the connections and the shortcuts come back to this process.
async fn take_back(app: &AppHandle) {
    wait_for_resident(app).await;
    crate::hub::connect_all(app).await;
    let handle = app.clone();
    let registered = tauri::async_runtime::spawn_blocking(move || crate::shortcuts::apply_saved(&handle)).await;
    if let Ok(Err(e)) = registered {
        tracing::warn!("global shortcuts: {}", e.message);
    }
}

async fn stop_engines(app: &AppHandle) {
    let Some(st) = app.try_state::<AppState>() else { return };
    let ids: Vec<String> = st.engines.lock().await.keys().cloned().collect();
    for id in ids {
        crate::commands::connection::stop_engine(app, &st, &id).await;
    }
}

/// Starts `hermes-resident` in a process group of its own and waits (at most 10 s) for its ready line.
fn spawn_resident(app: &AppHandle) -> Result<(), String> {
    let st = app.try_state::<AppState>().ok_or("no state")?;
    let bin = resident_bin().ok_or("no hermes-resident")?;
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(bin);
    // its own process group: a terminal's Ctrl+C for this process is not for it
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd
        .arg("--data-dir")
        .arg(&st.data_dir)
        .arg("--log-dir")
        .arg(&st.log_dir)
        .arg("--app")
        .arg(me)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let out = child.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(out).read_line(&mut line);
        let _ = tx.send(line);
    });
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(line) if line.trim() == READY_LINE => Ok(()),
        other => {
            let _ = child.kill();
            let _ = child.wait();
            Err(match other {
                Ok(line) if line.is_empty() => "it ended without a word".to_string(),
                Ok(line) => format!("it said {:?}", line.trim()),
                Err(_) => "no ready line in 10 s".to_string(),
            })
        }
    }
}
