//! Managed state: the store, the running engines (one per connected profile), session-only tokens, the demo agent.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use hermes_client::{Handle, Secret};
use hermes_store::{Cursor, Store};

use crate::error::{AppError, AppResult};
use crate::ipc::{EngineCommand, KeychainInfo};

pub struct Engine {
    pub handle: Handle,
    pub forward: tauri::async_runtime::JoinHandle<()>,
}

pub struct Demo {
    pub profile_id: String,
    pub server: hermes_devserver::Running,
}

pub struct AppState {
    pub store: Arc<Mutex<Store>>,
    pub data_dir: PathBuf,
    pub media_dir: PathBuf,
    pub tmp_dir: PathBuf,
    pub log_dir: PathBuf,
    pub keychain: KeychainInfo,
    pub engines: tokio::sync::Mutex<HashMap<String, Engine>>,
    /// Tokens kept in process memory only (no keychain, or the user asked for "this session only").
    pub session_tokens: Mutex<HashMap<String, Secret>>,
    /// History paging: message id → the cursor that continues after it.
    pub cursors: Mutex<HashMap<String, Cursor>>,
    /// Profiles whose engine reported `ready` (tray status).
    pub online: Mutex<HashMap<String, bool>>,
    pub demo: Mutex<Option<Demo>>,
    /// The last `hermes://connect` link, until the UI picks it up with `app_info` (a link that launched the app
    /// arrives before the page listens for the event).
    pub pending_link: Mutex<Option<crate::ipc::DeepLinkConnect>>,
}

impl AppState {
    /// Hand a command to a profile's engine: the id a message went under, or `not_connected` / `rejected` (nothing sent).
    pub async fn engine_command(&self, profile_id: &str, command: EngineCommand) -> AppResult<Option<String>> {
        let engines = self.engines.lock().await;
        let e =
            engines.get(profile_id).ok_or_else(|| AppError::new("not_connected", "this profile is not connected"))?;
        e.handle.command(command).await.map_err(|reason| AppError::new("rejected", reason))
    }

    pub fn new(store: Store, data_dir: PathBuf, log_dir: PathBuf, keychain: KeychainInfo) -> Self {
        AppState {
            store: Arc::new(Mutex::new(store)),
            media_dir: hermes_store::media_dir(&data_dir),
            tmp_dir: data_dir.join("tmp"),
            data_dir,
            log_dir,
            keychain,
            engines: tokio::sync::Mutex::new(HashMap::new()),
            session_tokens: Mutex::new(HashMap::new()),
            cursors: Mutex::new(HashMap::new()),
            online: Mutex::new(HashMap::new()),
            demo: Mutex::new(None),
            pending_link: Mutex::new(None),
        }
    }

    pub fn with_store<T>(&self, f: impl FnOnce(&Store) -> hermes_store::Result<T>) -> crate::error::AppResult<T> {
        let s = self.store.lock()?;
        Ok(f(&s)?)
    }

    pub fn any_online(&self) -> bool {
        self.online.lock().map(|m| m.values().any(|v| *v)).unwrap_or(false)
    }
}

/// Probe the OS keychain once (a read of an entry that does not exist).
pub fn probe_keychain() -> KeychainInfo {
    if std::env::var_os("HERMES_NO_KEYCHAIN").is_some() {
        return KeychainInfo { available: false, detail: Some("disabled by HERMES_NO_KEYCHAIN".into()) };
    }
    match hermes_client::keychain::get("hermes-desktop-probe") {
        Ok(_) => KeychainInfo { available: true, detail: None },
        Err(e) => KeychainInfo { available: false, detail: Some(e.to_string()) },
    }
}
