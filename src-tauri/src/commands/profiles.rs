//! Profiles and their tokens (the keychain, or this session's memory only).

use hermes_client::{Secret, keychain};
use tauri::{AppHandle, State};

use super::blocking;
use crate::error::{AppError, AppResult};
use crate::ipc::{Profile, ProfileInput};
use crate::security;
use crate::state::AppState;

/// The profile as the UI shows it: a token kept for this session counts as one.
fn profile_out(state: &AppState, p: hermes_store::Profile) -> Profile {
    let session = state.session_tokens.lock().map(|m| m.contains_key(&p.id)).unwrap_or(false);
    Profile::from_store(p, session)
}

/// The profiles as the UI lists them (also the start-up snapshot, `boot.rs`).
pub(crate) fn profiles_of(state: &AppState) -> AppResult<Vec<Profile>> {
    Ok(state.app.profiles()?.into_iter().map(|p| profile_out(state, p)).collect())
}

#[tauri::command(async)]
#[specta::specta]
pub fn list_profiles(state: State<'_, AppState>) -> AppResult<Vec<Profile>> {
    profiles_of(&state)
}

#[tauri::command(async)]
#[specta::specta]
pub fn create_profile(state: State<'_, AppState>, input: ProfileInput) -> AppResult<Profile> {
    Ok(profile_out(&state, state.app.create_profile(&input)?))
}

#[tauri::command(async)]
#[specta::specta]
pub fn update_profile(state: State<'_, AppState>, id: String, input: ProfileInput) -> AppResult<Profile> {
    Ok(profile_out(&state, state.app.update_profile(&id, &input)?))
}

/// The agent evidently approved this device, or refused it again: the UI decides which.
#[tauri::command(async)]
#[specta::specta]
pub fn set_paired(state: State<'_, AppState>, profile_id: String, paired: bool) -> AppResult<Profile> {
    Ok(profile_out(&state, state.app.set_paired(&profile_id, paired)?))
}

/// The agent's home channel (`/sethome`), or none.
#[tauri::command(async)]
#[specta::specta]
pub fn set_home(state: State<'_, AppState>, profile_id: String, conversation_id: Option<String>) -> AppResult<Profile> {
    Ok(profile_out(&state, state.app.set_home(&profile_id, conversation_id.as_deref())?))
}

#[tauri::command]
#[specta::specta]
pub async fn delete_profile(app: AppHandle, state: State<'_, AppState>, id: String) -> AppResult<()> {
    super::connection::stop_engine(&app, &state, &id).await;
    state.session_tokens.lock()?.remove(&id);
    let account = id.clone();
    if let Err(e) = blocking(move || keychain::delete(&account)).await? {
        tracing::warn!(profile = %id, "could not remove the token from the keychain: {e}");
    }
    Ok(state.app.delete_profile(&id)?)
}

#[tauri::command]
#[specta::specta]
pub async fn set_token(
    state: State<'_, AppState>,
    profile_id: String,
    token: String,
    session_only: bool,
) -> AppResult<()> {
    let token = token.trim().to_string();
    if token.is_empty() {
        return Err(AppError::invalid("the token is empty"));
    }
    security::register_secret(&token);
    state.app.profile(&profile_id)?;
    let secret = Secret::new(token);
    if session_only {
        state.session_tokens.lock()?.insert(profile_id.clone(), secret);
        tracing::info!(profile = %profile_id, "token kept for this session only");
        return Ok(());
    }
    let account = profile_id.clone();
    let s2 = secret.clone();
    blocking(move || keychain::set(&account, &s2)).await??;
    state.session_tokens.lock()?.remove(&profile_id);
    state.app.set_has_token(&profile_id, true)?;
    tracing::info!(profile = %profile_id, "token saved in the keychain");
    Ok(())
}

#[tauri::command]
#[specta::specta]
pub async fn delete_token(state: State<'_, AppState>, profile_id: String) -> AppResult<()> {
    state.session_tokens.lock()?.remove(&profile_id);
    let account = profile_id.clone();
    blocking(move || keychain::delete(&account)).await??;
    Ok(state.app.set_has_token(&profile_id, false)?)
}
