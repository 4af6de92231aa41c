//! A profile's connection: started from the store by `hermes-app`, its events forwarded to the page's channel.

use hermes_app::ConnectOptions;
use hermes_client::{Secret, keychain};
use hermes_protocol::Event;
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};

use super::blocking;
use crate::error::{AppError, AppResult, ErrorCode};
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

pub(crate) async fn stop_engine(app: &AppHandle, state: &AppState, profile_id: &str) {
    let engine = state.engines.lock().await.remove(profile_id);
    if let Some(e) = engine {
        e.handle.shutdown().await;
        e.forward.abort();
        tracing::info!(profile = %profile_id, "disconnected");
    }
    if let Ok(mut m) = state.online.lock() {
        m.remove(profile_id);
    }
    crate::tray::refresh(app);
}

#[tauri::command]
#[specta::specta]
pub async fn connect(
    app: AppHandle,
    state: State<'_, AppState>,
    profile_id: String,
    on_event: Channel<crate::delta::UiEvent>,
) -> AppResult<()> {
    stop_engine(&app, &state, &profile_id).await;
    let profile = state.app.profile(&profile_id)?;
    let token = token_for(&state, &profile_id).await?;
    let settings = app.try_state::<crate::settings::SettingsState>().map(|s| s.get());
    let opts = ConnectOptions {
        max_download_bytes: settings.as_ref().map(|s| s.max_download_bytes()),
        max_media_bytes: settings.as_ref().map(|s| s.max_media_bytes()),
        media_quota_bytes: settings.as_ref().map(|s| s.media_quota_bytes()),
        ..ConnectOptions::default()
    };
    let conn = state.app.connect(&profile, token, &opts)?;
    let forward = tauri::async_runtime::spawn(forward(app.clone(), profile.id.clone(), conn.events, on_event));
    state.engines.lock().await.insert(profile.id, Engine { handle: conn.handle, forward });
    Ok(())
}

/// The engine's events to the page (streamed text as deltas), and the tray's online state.
async fn forward(
    app: AppHandle,
    profile_id: String,
    mut events: hermes_client::Events,
    on_event: Channel<crate::delta::UiEvent>,
) {
    let mut delta = crate::delta::StreamDelta::default();
    while let Some(ev) = events.recv().await {
        let online = match &ev {
            Event::Ready { .. } => Some(true),
            Event::Disconnected { .. } | Event::AccessDenied { .. } => Some(false),
            _ => None,
        };
        if let Some(on) = online {
            if let Some(st) = app.try_state::<AppState>()
                && let Ok(mut m) = st.online.lock()
            {
                m.insert(profile_id.clone(), on);
            }
            crate::tray::refresh(&app);
        }
        if let Event::AccessDenied { reason } = &ev {
            tracing::warn!(profile = %profile_id, "access denied: {reason}");
        }
        if on_event.send(delta.encode(ev)).is_err() {
            tracing::info!(profile = %profile_id, "the UI channel closed");
            break;
        }
    }
}

#[tauri::command]
#[specta::specta]
pub async fn disconnect(app: AppHandle, state: State<'_, AppState>, profile_id: String) -> AppResult<()> {
    stop_engine(&app, &state, &profile_id).await;
    Ok(())
}

#[tauri::command]
#[specta::specta]
pub async fn send_command(
    state: State<'_, AppState>,
    profile_id: String,
    command: EngineCommand,
) -> AppResult<SendResult> {
    Ok(SendResult { id: state.engine_command(&profile_id, command).await? })
}
