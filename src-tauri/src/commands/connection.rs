//! A profile's connection: started from the store by `hermes-app` (at start for every profile with a token, hub.rs),
//! the page's channel attached to it.

use hermes_app::ConnectOptions;
use hermes_client::{Secret, keychain};
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};

use super::blocking;
use crate::error::{AppError, AppResult, ErrorCode};
use crate::hub::{AgentStatus, Hub};
use crate::ipc::{EngineCommand, SendResult};
use crate::security;
use crate::state::{AppState, Engine};

/// This session's token of the profile, else the keychain's.
async fn token_for(state: &AppState, profile_id: &str) -> AppResult<Secret> {
    if let Some(t) = state.session_tokens.lock()?.get(profile_id).cloned() {
        return Ok(t);
    }
    let account = profile_id.to_string();
    match blocking(move || keychain::get(&account)).await? {
        Ok(Some(t)) => {
            security::register_secret(t.expose());
            Ok(t)
        }
        Ok(None) => {
            Err(AppError::new(ErrorCode::NoToken, "no token is saved for this profile: add it in the settings"))
        }
        Err(e) => Err(e.into()),
    }
}

/// Stop the profile's engine (a deleted profile, a changed token or URL): the only way an engine stops before quit.
pub(crate) async fn stop_engine(app: &AppHandle, state: &AppState, profile_id: &str) {
    let engine = state.engines.lock().await.remove(profile_id);
    if let Some(e) = engine {
        e.handle.shutdown().await;
        e.forward.abort();
        tracing::info!(profile = %profile_id, "disconnected");
    }
    if let Some(hub) = app.try_state::<Hub>() {
        hub.stopped(profile_id);
    }
    crate::tray::refresh(app);
}

/// The profile's engine, started when it is not running (with the settings' limits); a running one is left alone.
pub(crate) async fn ensure_engine(app: &AppHandle, profile_id: &str) -> AppResult<()> {
    // not while a resident process holds the agents' connections (handover.rs)
    if let Some(gate) = app.try_state::<crate::handover::Gate>() {
        gate.opened().await;
    }
    let state = app.state::<AppState>();
    if state.engines.lock().await.contains_key(profile_id) {
        return Ok(());
    }
    let profile = state.app.profile(profile_id)?;
    let token = token_for(&state, profile_id).await?;
    let settings = app.try_state::<crate::settings::SettingsState>().map(|s| s.get());
    let opts = ConnectOptions {
        max_download_bytes: settings.as_ref().map(|s| s.max_download_bytes()),
        max_media_bytes: settings.as_ref().map(|s| s.max_media_bytes()),
        media_quota_bytes: settings.as_ref().map(|s| s.media_quota_bytes()),
        ..ConnectOptions::default()
    };
    let mut engines = state.engines.lock().await;
    if engines.contains_key(profile_id) {
        return Ok(()); // started meanwhile (the start-up and a page at once)
    }
    let conn = state.app.connect(&profile, token, &opts)?;
    if let Some(hub) = app.try_state::<Hub>() {
        hub.started(profile_id);
    }
    let forward = tauri::async_runtime::spawn(crate::hub::pump(app.clone(), profile.id.clone(), conn.events));
    engines.insert(profile.id, Engine { handle: conn.handle, forward });
    drop(engines);
    crate::tray::refresh(app);
    Ok(())
}

/// The page subscribes to the profile's connection: its channel is attached to the running engine (started if it is
/// not running) and first gets the connection's state replayed. A page that goes away is detached; the engine runs on.
#[tauri::command]
#[specta::specta]
pub async fn connect(
    app: AppHandle,
    webview: tauri::Webview,
    profile_id: String,
    on_event: Channel<crate::delta::UiEvent>,
) -> AppResult<()> {
    ensure_engine(&app, &profile_id).await?;
    let Some(hub) = app.try_state::<Hub>() else { return Err(AppError::internal("the hub is not running")) };
    let label = webview.label().to_string();
    let (check, prof, view) = (app.clone(), profile_id.clone(), label.clone());
    hub.attach(
        &profile_id,
        &view,
        Box::new(move |ev| {
            if check.get_webview_window(&label).is_none() {
                tracing::info!(profile = %prof, "the page went away: detached");
                return false;
            }
            // a received file's path reaches the page as a token (grants.rs)
            let ev = match ev {
                crate::delta::UiEvent::Engine(e) => crate::delta::UiEvent::Engine(crate::grants::event_for_page(e)),
                other => other,
            };
            on_event.send(ev).is_ok()
        }),
    );
    Ok(())
}

#[tauri::command]
#[specta::specta]
pub async fn disconnect(app: AppHandle, state: State<'_, AppState>, profile_id: String) -> AppResult<()> {
    stop_engine(&app, &state, &profile_id).await;
    Ok(())
}

/// Every agent with its connection's state (connected / connecting / offline) and since when.
#[tauri::command(async)]
#[specta::specta]
pub fn agent_statuses(app: AppHandle) -> Vec<AgentStatus> {
    crate::hub::statuses(&app)
}

#[tauri::command]
#[specta::specta]
pub async fn send_command(
    state: State<'_, AppState>,
    profile_id: String,
    command: EngineCommand,
) -> AppResult<SendResult> {
    let command = crate::grants::resolve_command(crate::grants::global(), command)?;
    Ok(SendResult { id: state.engine_command(&profile_id, command).await? })
}
