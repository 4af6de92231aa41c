//! Managed state: the store, the running engines (one per connected profile), session-only tokens, the demo agent.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use hermes_client::{Handle, Secret};
use hermes_store::Store;

use crate::error::{AppError, AppResult, ErrorCode};
use crate::ipc::{EngineCommand, KeychainInfo};

pub struct Engine {
    pub handle: Handle,
    pub forward: tauri::async_runtime::JoinHandle<()>,
}

#[cfg(feature = "demo")]
pub struct Demo {
    pub profile_id: String,
    pub server: hermes_devserver::Running,
}

pub struct AppState {
    /// The store and the app layer over it (profiles, conversations, history, connections).
    pub app: hermes_app::App,
    pub data_dir: PathBuf,
    pub media_dir: PathBuf,
    pub tmp_dir: PathBuf,
    pub log_dir: PathBuf,
    pub keychain: Keychain,
    pub engines: tokio::sync::Mutex<HashMap<String, Engine>>,
    /// Tokens kept in process memory only (no keychain, or the user asked for "this session only").
    pub session_tokens: Mutex<HashMap<String, Secret>>,
    #[cfg(feature = "demo")]
    pub demo: Mutex<Option<Demo>>,
    /// The last `hermes://connect` link, until the UI picks it up with `app_info` (a link that launched the app
    /// arrives before the page listens for the event).
    pub pending_link: Mutex<Option<crate::ipc::DeepLinkConnect>>,
}

impl AppState {
    /// Hand a command to a profile's engine: the id a message went under, or `not_connected` / the refusal's code
    /// (nothing sent).
    pub async fn engine_command(&self, profile_id: &str, command: EngineCommand) -> AppResult<Option<String>> {
        let engines = self.engines.lock().await;
        let e = engines
            .get(profile_id)
            .ok_or_else(|| AppError::new(ErrorCode::NotConnected, "this profile is not connected"))?;
        e.handle.command(command).await.map_err(|r| AppError::from(&r))
    }

    pub fn new(store: Store, data_dir: PathBuf, log_dir: PathBuf, keychain: Keychain) -> Self {
        AppState {
            app: hermes_app::App::new(store, &data_dir),
            media_dir: hermes_store::media_dir(&data_dir),
            tmp_dir: data_dir.join("tmp"),
            data_dir,
            log_dir,
            keychain,
            engines: tokio::sync::Mutex::new(HashMap::new()),
            session_tokens: Mutex::new(HashMap::new()),
            #[cfg(feature = "demo")]
            demo: Mutex::new(None),
            pending_link: Mutex::new(None),
        }
    }

    pub fn with_store<T>(&self, f: impl FnOnce(&Store) -> hermes_store::Result<T>) -> crate::error::AppResult<T> {
        Ok(self.app.with_store(f)?)
    }
}

/// one OS watcher for the app (netwatch.rs). Each "the network is back" / "the machine woke" makes every running
/// engine reconnect at once instead of waiting out its backoff; where the OS tells nothing, the backoff alone.
pub fn reconnect_on_wake(app: &tauri::AppHandle) {
    use tauri::Manager as _;
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let Some(mut watcher) = hermes_client::netwatch::start().await else { return };
        while watcher.next().await.is_some() {
            let st = app.state::<AppState>();
            for e in st.engines.lock().await.values() {
                let _ = e.handle.send(EngineCommand::Reconnect).await;
            }
        }
    });
}

/// Whether the OS keychain answers: probed once at start, on a thread of its own (a D-Bus round trip of 6-10 ms that
/// the main window's creation does not wait for), and read when first asked (`app_info`).
pub struct Keychain {
    known: std::sync::OnceLock<KeychainInfo>,
    probe: Mutex<Option<std::thread::JoinHandle<KeychainInfo>>>,
}

impl Keychain {
    /// Start the probe.
    pub fn probe() -> Self {
        Self::probe_with(probe_keychain)
    }

    fn probe_with(probe: impl FnOnce() -> KeychainInfo + Send + 'static) -> Self {
        let probe = std::thread::Builder::new().name("hermes-keychain-probe".into()).spawn(move || {
            let info = probe();
            if !info.available {
                tracing::warn!("no usable keychain: {}", info.detail.clone().unwrap_or_default());
            }
            info
        });
        Keychain { known: std::sync::OnceLock::new(), probe: Mutex::new(probe.ok()) }
    }

    /// An answer known already (tests).
    pub fn known(info: KeychainInfo) -> Self {
        Keychain { known: std::sync::OnceLock::from(info), probe: Mutex::new(None) }
    }

    /// The probe's answer (waits for it the first time, if it is still running).
    pub fn info(&self) -> KeychainInfo {
        self.known
            .get_or_init(|| {
                let handle = self.probe.lock().ok().and_then(|mut p| p.take());
                handle.and_then(|h| h.join().ok()).unwrap_or_else(|| KeychainInfo {
                    available: false,
                    detail: Some("the keychain probe failed".into()),
                })
            })
            .clone()
    }
}

/// Probe the OS keychain once (a read of an entry that does not exist).
fn probe_keychain() -> KeychainInfo {
    if std::env::var_os("HERMES_NO_KEYCHAIN").is_some() {
        return KeychainInfo { available: false, detail: Some("disabled by HERMES_NO_KEYCHAIN".into()) };
    }
    match hermes_client::keychain::get("hermes-desktop-probe") {
        Ok(_) => KeychainInfo { available: true, detail: None },
        Err(e) => KeychainInfo { available: false, detail: Some(e.reason().to_string()) },
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn the_keychain_probe_is_waited_for_once_and_its_answer_kept() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let c = calls.clone();
        let k = Arc::new(Keychain::probe_with(move || {
            // still probing when the page first asks: the answer comes when this returns
            rx.recv().unwrap();
            c.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            KeychainInfo { available: true, detail: None }
        }));
        let asking = {
            let k = k.clone();
            std::thread::spawn(move || k.info().available)
        };
        // the probe cannot finish before the send below, so neither can the question
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!asking.is_finished(), "info() answered before the probe did");
        tx.send(()).unwrap();
        assert!(asking.join().unwrap());
        assert!(k.info().available);
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn a_probe_that_panics_reads_as_no_keychain() {
        let k = Keychain::probe_with(|| panic!("D-Bus went away"));
        let info = k.info();
        assert!(!info.available);
        assert_eq!(info.detail.as_deref(), Some("the keychain probe failed"));
    }
}
