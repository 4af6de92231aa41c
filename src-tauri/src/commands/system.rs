//! The app itself: its facts, its log folder, links opened in the browser (notifications: notify.rs).

use tauri::{AppHandle, Manager, State};
use tauri_plugin_opener::OpenerExt;

use crate::error::{AppError, AppResult, ErrorCode};
use crate::ipc::AppInfo;
use crate::security;
use crate::state::AppState;

#[tauri::command(async)]
#[specta::specta]
pub fn app_info(app: AppHandle, webview: tauri::Webview, state: State<'_, AppState>) -> AppInfo {
    // what was waiting for the main window's page is handed to it alone (not to the Quick Ask panel's)
    let main = webview.label() == crate::window::MAIN;
    if main {
        crate::quick::prepare_soon(&app);
    }
    AppInfo {
        version: app.package_info().version.to_string(),
        data_dir: state.data_dir.display().to_string(),
        log_dir: state.log_dir.display().to_string(),
        keychain: state.keychain.info(),
        // Is the built-in demo agent running? Never in a build without the `demo` feature.
        #[cfg(feature = "demo")]
        demo: state.demo.lock().map(|d| d.is_some()).unwrap_or(false),
        #[cfg(not(feature = "demo"))]
        demo: false,
        pending_link: if main { state.pending_link.lock().ok().and_then(|mut l| l.take()) } else { None },
        open_conversation: if main {
            app.try_state::<crate::window::MainWindow>().and_then(|w| w.take_pending_open())
        } else {
            None
        },
    }
}

#[tauri::command]
#[specta::specta]
pub fn open_logs_folder(app: AppHandle, state: State<'_, AppState>) -> AppResult<()> {
    std::fs::create_dir_all(&state.log_dir)?;
    app.opener()
        .open_path(state.log_dir.display().to_string(), None::<&str>)
        .map_err(|e| AppError::new(ErrorCode::OpenFailed, e.to_string()))
}

#[tauri::command]
#[specta::specta]
pub fn open_external(app: AppHandle, url: String) -> AppResult<()> {
    let u = security::check_external_url(&url).map_err(|m| AppError::new(ErrorCode::BlockedUrl, m))?;
    app.opener().open_url(u.as_str(), None::<&str>).map_err(|e| AppError::new(ErrorCode::OpenFailed, e.to_string()))
}
