//! The Tauri commands: thin adapters from IPC to the crates. Every command returns `AppResult` (`{code, message}`).
//!
//! A plain `fn` command runs on the main thread, where GTK and WebKit paint and every IPC reply is delivered: commands
//! that read or write the store or files (a search, a 64 MiB pasted image decoded from base64, a media file probed
//! for its duration) are therefore `#[tauri::command(async)]` and run on the async runtime's threads.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use hermes_client::{EngineConfig, Secret, StorePersist, keychain, policy};
use hermes_store::{Cursor, NewProfile, ProfileUpdate, SearchOptions};
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};
use tauri_plugin_dialog::DialogExt;
use tauri_plugin_notification::NotificationExt;
use tauri_plugin_opener::OpenerExt;

use crate::error::{AppError, AppResult};
use crate::ipc::*;
use crate::security;
use crate::state::{AppState, Engine};

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> AppResult<T> {
    tauri::async_runtime::spawn_blocking(f).await.map_err(|e| AppError::internal(e.to_string()))
}

#[tauri::command(async)]
#[specta::specta]
pub fn app_info(app: AppHandle, state: State<'_, AppState>) -> AppInfo {
    AppInfo {
        version: app.package_info().version.to_string(),
        data_dir: state.data_dir.display().to_string(),
        log_dir: state.log_dir.display().to_string(),
        keychain: state.keychain.info(),
        demo: state.demo.lock().map(|d| d.is_some()).unwrap_or(false),
        pending_link: state.pending_link.lock().ok().and_then(|mut l| l.take()),
    }
}

fn session_token(state: &AppState, id: &str) -> bool {
    state.session_tokens.lock().map(|m| m.contains_key(id)).unwrap_or(false)
}

fn profile_out(state: &AppState, p: hermes_store::Profile) -> Profile {
    let s = session_token(state, &p.id);
    Profile::from_store(p, s)
}

#[tauri::command(async)]
#[specta::specta]
pub fn list_profiles(state: State<'_, AppState>) -> AppResult<Vec<Profile>> {
    profiles_of(&state)
}

/// The profiles as the UI lists them (also the start-up snapshot, `boot.rs`).
pub(crate) fn profiles_of(state: &AppState) -> AppResult<Vec<Profile>> {
    let list = state.with_store(|s| s.profiles())?;
    Ok(list.into_iter().map(|p| profile_out(state, p)).collect())
}

fn check_input(input: &ProfileInput) -> AppResult<()> {
    if input.name.trim().is_empty() {
        return Err(AppError::invalid("the profile needs a name"));
    }
    policy::check_url(input.url.trim(), input.allow_insecure_ws, input.dialect == Dialect::Adapter)
        .map_err(|e| AppError::new("invalid_url", e.to_string()))?;
    Ok(())
}

fn clean(s: Option<String>) -> Option<String> {
    s.map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

#[tauri::command(async)]
#[specta::specta]
pub fn create_profile(state: State<'_, AppState>, input: ProfileInput) -> AppResult<Profile> {
    check_input(&input)?;
    let new = NewProfile {
        name: input.name.trim().to_string(),
        url: input.url.trim().to_string(),
        dialect: input.dialect,
        v3_user_id: clean(input.user_id),
        allow_insecure_ws: input.allow_insecure_ws,
        avatar_url: clean(input.avatar_url_override),
    };
    let p = state.with_store(|s| s.profile_create(&new))?;
    tracing::info!(profile = %p.id, url = %policy::redact_url(&p.url), "profile created");
    Ok(profile_out(&state, p))
}

#[tauri::command(async)]
#[specta::specta]
pub fn update_profile(state: State<'_, AppState>, id: String, input: ProfileInput) -> AppResult<Profile> {
    check_input(&input)?;
    let upd = ProfileUpdate {
        name: input.name.trim().to_string(),
        url: input.url.trim().to_string(),
        v3_user_id: clean(input.user_id),
        allow_insecure_ws: input.allow_insecure_ws,
        avatar_url: clean(input.avatar_url_override),
    };
    let p = state.with_store(|s| s.profile_update(&id, &upd))?;
    Ok(profile_out(&state, p))
}

/// The agent evidently approved this device (A-8: it answered a message sent after its first reply; the first time
/// is kept), or refused it again (`auth_failed` / close 1008: `paired` false). The UI decides which.
#[tauri::command(async)]
#[specta::specta]
pub fn set_paired(state: State<'_, AppState>, profile_id: String, paired: bool) -> AppResult<Profile> {
    let p = state.with_store(|s| store_set_paired(s, &profile_id, paired))?;
    Ok(profile_out(&state, p))
}

fn store_set_paired(
    s: &hermes_store::Store,
    profile_id: &str,
    paired: bool,
) -> hermes_store::Result<hermes_store::Profile> {
    if paired {
        s.profile_mark_paired(profile_id)
    } else {
        s.profile_clear_paired(profile_id)?;
        s.profile_get(profile_id)?.ok_or_else(|| hermes_store::Error::NotFound(format!("profile {profile_id}")))
    }
}

/// Makes a conversation the agent's home channel (the user sent `/sethome` there: its scheduled messages arrive
/// there), or clears it with `None`. Refused when the conversation is not the profile's.
#[tauri::command(async)]
#[specta::specta]
pub fn set_home(state: State<'_, AppState>, profile_id: String, conversation_id: Option<String>) -> AppResult<Profile> {
    let p = state.with_store(|s| s.profile_set_home(&profile_id, conversation_id.as_deref()))?;
    Ok(profile_out(&state, p))
}

#[tauri::command]
#[specta::specta]
pub async fn delete_profile(app: AppHandle, state: State<'_, AppState>, id: String) -> AppResult<()> {
    stop_engine(&app, &state, &id).await;
    state.session_tokens.lock()?.remove(&id);
    let account = id.clone();
    if let Err(e) = blocking(move || keychain::delete(&account)).await? {
        tracing::warn!(profile = %id, "could not remove the token from the keychain: {e}");
    }
    state.with_store(|s| s.profile_delete(&id))?;
    Ok(())
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
    state.with_store(|s| s.profile_get(&profile_id))?.ok_or_else(|| AppError::not_found("the profile"))?;
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
    state.with_store(|s| s.profile_set_has_token(&profile_id, true))?;
    tracing::info!(profile = %profile_id, "token saved in the keychain");
    Ok(())
}

#[tauri::command]
#[specta::specta]
pub async fn delete_token(state: State<'_, AppState>, profile_id: String) -> AppResult<()> {
    state.session_tokens.lock()?.remove(&profile_id);
    let account = profile_id.clone();
    blocking(move || keychain::delete(&account)).await??;
    state.with_store(|s| s.profile_set_has_token(&profile_id, false))?;
    Ok(())
}

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
        Ok(None) => Err(AppError::new("no_token", "no token is saved for this profile: add it in the settings")),
        Err(e) => Err(e.into()),
    }
}

async fn stop_engine(app: &AppHandle, state: &AppState, profile_id: &str) {
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
    let profile =
        state.with_store(|s| s.profile_get(&profile_id))?.ok_or_else(|| AppError::not_found("the profile"))?;
    let token = token_for(&state, &profile_id).await?;
    let conv = state.with_store(|s| match profile.dialect {
        hermes_store::Dialect::Adapter => s.conversation_for_adapter(&profile.id),
        hermes_store::Dialect::V3 => match s.conversations(&profile.id)?.into_iter().next() {
            Some(c) => Ok(c),
            None => s.conversation_create(&profile.id, "New conversation"),
        },
    })?;
    let dialect = match profile.dialect {
        hermes_store::Dialect::Adapter => hermes_protocol::Dialect::Adapter,
        hermes_store::Dialect::V3 => hermes_protocol::Dialect::V3,
    };
    let mut cfg = EngineConfig::new(profile.url.clone(), dialect, token, profile.device_id.clone(), &state.data_dir);
    cfg.user_id = profile.v3_user_id.clone();
    cfg.allow_insecure_ws = profile.allow_insecure_ws;
    cfg.media_dir = state.media_dir.clone();
    cfg.default_session = conv.session.clone();
    if let Some(s) = app.try_state::<crate::settings::SettingsState>() {
        cfg.max_download_bytes = s.get().max_download_bytes();
    }
    let persist = StorePersist::new(state.store.clone(), &profile.id, &conv.id, &state.media_dir);
    let (handle, mut rx) = hermes_client::spawn(cfg, Box::new(persist))?;
    tracing::info!(profile = %profile.id, url = %policy::redact_url(&profile.url), "connecting");
    let app2 = app.clone();
    let pid = profile.id.clone();
    let forward = tauri::async_runtime::spawn(async move {
        let mut delta = crate::delta::StreamDelta::default();
        while let Some(ev) = rx.recv().await {
            let online = match &ev {
                hermes_protocol::Event::Ready { .. } => Some(true),
                hermes_protocol::Event::Disconnected { .. } | hermes_protocol::Event::AccessDenied { .. } => {
                    Some(false)
                }
                _ => None,
            };
            if let Some(on) = online {
                if let Some(st) = app2.try_state::<AppState>()
                    && let Ok(mut m) = st.online.lock()
                {
                    m.insert(pid.clone(), on);
                }
                crate::tray::refresh(&app2);
            }
            if let hermes_protocol::Event::AccessDenied { reason } = &ev {
                tracing::warn!(profile = %pid, "access denied: {reason}");
            }
            if on_event.send(delta.encode(ev)).is_err() {
                tracing::info!(profile = %pid, "the UI channel closed");
                break;
            }
        }
    });
    state.engines.lock().await.insert(profile.id.clone(), Engine { handle, forward });
    Ok(())
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

#[tauri::command(async)]
#[specta::specta]
pub fn list_conversations(state: State<'_, AppState>, profile_id: String) -> AppResult<Vec<Conversation>> {
    conversations_of(&state, &profile_id)
}

/// A profile's conversations as the UI lists them (the adapter's one is created on first sight).
pub(crate) fn conversations_of(state: &AppState, profile_id: &str) -> AppResult<Vec<Conversation>> {
    let list = state.with_store(|s| {
        let p = s.profile_get(profile_id)?;
        if let Some(p) = p
            && p.dialect == hermes_store::Dialect::Adapter
        {
            s.conversation_for_adapter(&p.id)?;
        }
        s.conversations(profile_id)?
            .into_iter()
            .map(|c| {
                let draft = s.draft_get(&c.id)?;
                let unread = s.unread_count(&c.id)?;
                Ok(Conversation { draft, unread, ..Conversation::from(c) })
            })
            .collect::<hermes_store::Result<Vec<_>>>()
    })?;
    Ok(list)
}

#[tauri::command(async)]
#[specta::specta]
pub fn create_conversation(state: State<'_, AppState>, profile_id: String, title: String) -> AppResult<Conversation> {
    Ok(state.with_store(|s| s.conversation_create(&profile_id, title.trim()))?.into())
}

#[tauri::command(async)]
#[specta::specta]
pub fn rename_conversation(state: State<'_, AppState>, id: String, title: String) -> AppResult<()> {
    state.with_store(|s| s.conversation_rename(&id, title.trim()))
}

/// The composer's unsent text in a conversation (kept across switching conversations, quitting and crashes).
#[tauri::command(async)]
#[specta::specta]
pub fn get_draft(state: State<'_, AppState>, conversation_id: String) -> AppResult<Option<String>> {
    state.with_store(|s| s.draft_get(&conversation_id))
}

/// Keeps the composer's text as the conversation's draft; an empty text removes it.
#[tauri::command(async)]
#[specta::specta]
pub fn set_draft(state: State<'_, AppState>, conversation_id: String, text: String) -> AppResult<()> {
    state.with_store(|s| s.draft_set(&conversation_id, &text))
}

/// The user has the conversation open: what came in it so far is read (its unread count, kept across restarts, is 0).
#[tauri::command(async)]
#[specta::specta]
pub fn mark_read(state: State<'_, AppState>, conversation_id: String) -> AppResult<()> {
    state.with_store(|s| s.mark_read(&conversation_id))
}

#[tauri::command(async)]
#[specta::specta]
pub fn delete_conversation(state: State<'_, AppState>, id: String) -> AppResult<()> {
    state.with_store(|s| s.conversation_delete(&id))
}

fn kind_for_mime(mime: &str) -> &'static str {
    if mime.starts_with("image/") {
        "image"
    } else if mime.starts_with("audio/") {
        "audio"
    } else if mime.starts_with("video/") {
        "video"
    } else {
        "file"
    }
}

fn stored_message(state: &AppState, s: &hermes_store::Store, m: hermes_store::Message) -> StoredMessage {
    let attachments = m
        .attachments
        .iter()
        .filter_map(|id| s.media_get(id).ok().flatten())
        .map(|e| Attachment {
            kind: kind_for_mime(&e.mime).to_string(),
            filename: e.filename.clone().unwrap_or_else(|| e.path.rsplit('/').next().unwrap_or("file").to_string()),
            path: state.media_dir.join(&e.path).display().to_string(),
            media_id: e.id,
            mime: Some(e.mime),
            size: e.size,
            caption: None,
        })
        .collect();
    let state_ = match (m.direction, m.delivery) {
        (hermes_store::Direction::In, _) => MessageState::Received,
        (_, Some(hermes_store::Delivery::Queued)) => MessageState::Queued,
        (_, Some(hermes_store::Delivery::Delivered)) => MessageState::Delivered,
        (_, Some(hermes_store::Delivery::Failed)) => MessageState::Failed,
        (_, _) => MessageState::Sent,
    };
    StoredMessage {
        id: m.id,
        server_id: m.server_id,
        direction: m.direction,
        text: m.text,
        final_: m.assembly == hermes_store::Assembly::Final,
        state: state_,
        reply_to: m.reply_to,
        error: m.error,
        created_at: iso(m.created_at),
        attachments,
        retry_of: m.retry_of,
    }
}

#[tauri::command(async)]
#[specta::specta]
pub fn history(
    state: State<'_, AppState>,
    conversation_id: String,
    before: Option<String>,
    limit: u32,
) -> AppResult<HistoryPage> {
    history_of(&state, &conversation_id, before, limit)
}

/// A page of a conversation's messages, newest first, before the message `before` (remembering the cursor of the
/// page's last message for the next call).
pub(crate) fn history_of(
    state: &AppState,
    conversation_id: &str,
    before: Option<String>,
    limit: u32,
) -> AppResult<HistoryPage> {
    let limit = limit.clamp(1, 500);
    let s = state.store.lock()?;
    let cursor = match before {
        None => None,
        Some(id) => match state.cursors.lock()?.get(&id).copied() {
            Some(c) => Some(c),
            // Unknown id (e.g. a live message): everything up to and including its millisecond; the UI drops dupes.
            None => s.message_get(&id)?.map(|m| Cursor { created_at: m.created_at, seq: i64::MAX }),
        },
    };
    let page = s.page(conversation_id, cursor, limit)?;
    if let (Some(next), Some(last)) = (page.next, page.messages.last()) {
        state.cursors.lock()?.insert(last.id.clone(), next);
    }
    let has_more = page.next.is_some();
    // the cards of the same stretch of time: from this page's oldest message (from the start when it is the last page)
    // up to the newer page's oldest message (no bound on the first page)
    let from = if has_more { page.messages.last().map(|m| m.created_at) } else { None };
    let cards = s
        .cards_between(conversation_id, from, cursor.map(|c| c.created_at))?
        .into_iter()
        .map(crate::ipc::StoredCard::from)
        .collect();
    let messages = page.messages.into_iter().map(|m| stored_message(state, &s, m)).collect();
    Ok(HistoryPage { messages, has_more, cards })
}

#[tauri::command(async)]
#[specta::specta]
pub fn search(state: State<'_, AppState>, query: String, profile_id: Option<String>) -> AppResult<Vec<SearchHit>> {
    let opts = SearchOptions { profile_id, ..SearchOptions::default() };
    let hits = state.with_store(|s| s.search(&query, &opts))?;
    Ok(hits
        .into_iter()
        .map(|h| SearchHit {
            message_id: h.message_id,
            conversation_id: h.conversation_id,
            profile_id: h.profile_id,
            snippet: h.snippet,
            created_at: iso(h.created_at),
        })
        .collect())
}

/// Ask where to save; `None` if the user cancelled.
/// WebDriver cannot drive the native GTK file dialogs: under automation only (`TAURI_WEBVIEW_AUTOMATION`, set by
/// WebKitWebDriver), `HERMES_E2E_SAVE_DIR` answers "save as" with `<dir>/<suggested name>` and `HERMES_E2E_PICK_FILES`
/// (paths separated by newlines) answers the file picker. Everything after the dialog runs as for a user.
/// Compiled into debug builds only (the e2e suite drives the debug build): a release build has no dialog overrides.
#[cfg(debug_assertions)]
fn e2e_dialog_override(var: &str) -> Option<String> {
    std::env::var_os("TAURI_WEBVIEW_AUTOMATION")?;
    std::env::var(var).ok().filter(|v| !v.is_empty())
}

#[cfg(not(debug_assertions))]
fn e2e_dialog_override(_var: &str) -> Option<String> {
    None
}

async fn ask_save_path(app: &AppHandle, suggested: &str) -> AppResult<Option<PathBuf>> {
    if let Some(dir) = e2e_dialog_override("HERMES_E2E_SAVE_DIR") {
        return Ok(Some(PathBuf::from(dir).join(suggested)));
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog().file().set_file_name(suggested).save_file(move |p| {
        let _ = tx.send(p.and_then(|p| p.into_path().ok()));
    });
    rx.await.map_err(|_| AppError::internal("the save dialog closed unexpectedly"))
}

fn safe_name(name: &str) -> String {
    let base = Path::new(name).file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let cleaned: String =
        base.chars().map(|c| if c.is_control() || "/\\:*?\"<>|".contains(c) { '_' } else { c }).collect();
    let cleaned = cleaned.trim_matches(|c| c == '.' || c == ' ').to_string();
    if cleaned.is_empty() { "file".into() } else { cleaned.chars().take(120).collect() }
}

#[tauri::command]
#[specta::specta]
pub async fn export_conversation(
    app: AppHandle,
    state: State<'_, AppState>,
    id: String,
    format: ExportFormat,
) -> AppResult<()> {
    let (body, ext) = match format {
        ExportFormat::Markdown => (state.with_store(|s| s.export_markdown(&id))?, "md"),
        ExportFormat::Json => {
            let ex = state.with_store(|s| s.export_json(&id))?;
            (serde_json::to_string_pretty(&ex).map_err(|e| AppError::internal(e.to_string()))?, "json")
        }
    };
    let title = state.with_store(|s| s.conversation_get(&id))?.map(|c| c.title).unwrap_or_default();
    let name = safe_name(&format!("{}.{ext}", if title.is_empty() { "conversation" } else { &title }));
    if let Some(path) = ask_save_path(&app, &name).await? {
        std::fs::write(&path, body)?;
    }
    Ok(())
}

#[tauri::command]
#[specta::specta]
pub fn open_logs_folder(app: AppHandle, state: State<'_, AppState>) -> AppResult<()> {
    std::fs::create_dir_all(&state.log_dir)?;
    app.opener()
        .open_path(state.log_dir.display().to_string(), None::<&str>)
        .map_err(|e| AppError::new("open_failed", e.to_string()))
}

#[tauri::command]
#[specta::specta]
pub fn open_external(app: AppHandle, url: String) -> AppResult<()> {
    let u = security::check_external_url(&url).map_err(|m| AppError::new("blocked_url", m))?;
    app.opener().open_url(u.as_str(), None::<&str>).map_err(|e| AppError::new("open_failed", e.to_string()))
}

/// Files the UI may act on: only inside the app's data folder (received media, pasted files, outbox copies).
fn app_file(state: &AppState, path: &str) -> AppResult<PathBuf> {
    let p = std::fs::canonicalize(path).map_err(|_| AppError::not_found("the file"))?;
    let root = std::fs::canonicalize(&state.data_dir)?;
    if p.starts_with(&root) {
        Ok(p)
    } else {
        Err(AppError::new("forbidden_path", "this file is outside the app's folder"))
    }
}

#[tauri::command]
#[specta::specta]
pub fn reveal_file(app: AppHandle, state: State<'_, AppState>, path: String) -> AppResult<()> {
    let p = app_file(&state, &path)?;
    app.opener().reveal_item_in_dir(p).map_err(|e| AppError::new("open_failed", e.to_string()))
}

#[tauri::command]
#[specta::specta]
pub fn open_file(app: AppHandle, state: State<'_, AppState>, path: String) -> AppResult<()> {
    let p = app_file(&state, &path)?;
    app.opener()
        .open_path(p.display().to_string(), None::<&str>)
        .map_err(|e| AppError::new("open_failed", e.to_string()))
}

#[tauri::command]
#[specta::specta]
pub async fn save_file_as(app: AppHandle, state: State<'_, AppState>, path: String) -> AppResult<()> {
    let src = app_file(&state, &path)?;
    let name = safe_name(&src.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default());
    if let Some(dest) = ask_save_path(&app, &name).await? {
        std::fs::copy(&src, dest)?;
    }
    Ok(())
}

#[tauri::command]
#[specta::specta]
pub async fn pick_files(app: AppHandle) -> AppResult<Vec<String>> {
    if let Some(list) = e2e_dialog_override("HERMES_E2E_PICK_FILES") {
        return Ok(list.lines().map(str::to_string).collect());
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog().file().pick_files(move |paths| {
        let _ = tx.send(paths.unwrap_or_default());
    });
    let paths = rx.await.map_err(|_| AppError::internal("the file dialog closed unexpectedly"))?;
    Ok(paths.into_iter().filter_map(|p| p.into_path().ok()).map(|p| p.display().to_string()).collect())
}

/// The URL of a received file for `<img>`/`<audio>` (the asset protocol is scoped to the media folder only).
#[tauri::command(async)]
#[specta::specta]
pub fn file_url(state: State<'_, AppState>, path: String) -> AppResult<String> {
    let p = std::fs::canonicalize(&path).map_err(|_| AppError::not_found("the file"))?;
    let media = std::fs::canonicalize(&state.media_dir)?;
    let tmp = std::fs::canonicalize(&state.tmp_dir).unwrap_or_else(|_| state.tmp_dir.clone());
    if !(p.starts_with(&media) || p.starts_with(&tmp)) {
        return Err(AppError::new("forbidden_path", "only received files can be shown"));
    }
    Ok(asset_url(&p))
}

pub fn asset_url(p: &Path) -> String {
    let enc: String = url::form_urlencoded::byte_serialize(p.to_string_lossy().as_bytes()).collect();
    let enc = enc.replace('+', "%20");
    if cfg!(any(windows, target_os = "android")) {
        format!("http://asset.localhost/{enc}")
    } else {
        format!("asset://localhost/{enc}")
    }
}

#[tauri::command]
#[specta::specta]
pub async fn downscale_image(state: State<'_, AppState>, path: String, max_bytes: u32) -> AppResult<String> {
    let tmp = state.tmp_dir.clone();
    blocking(move || crate::media::downscale(Path::new(&path), u64::from(max_bytes), &tmp)).await?
}

#[tauri::command(async)]
#[specta::specta]
pub fn file_info(path: String) -> AppResult<FileInfo> {
    let p = PathBuf::from(&path);
    let meta = std::fs::metadata(&p)?;
    // a folder dropped on the window: its own code, so that the page can say why it is refused (only files are sent)
    if meta.is_dir() {
        return Err(AppError::new("is_folder", "this is a folder; only files can be sent"));
    }
    if !meta.is_file() {
        return Err(AppError::invalid("this is not a file"));
    }
    Ok(FileInfo {
        name: p.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default(),
        size: meta.len(),
        mime: Some(hermes_client::files::mime_for_path(&p)),
        duration_ms: crate::media::duration_ms(&p),
        path,
    })
}

const MAX_TEMP_BYTES: usize = 64 * 1024 * 1024;

#[tauri::command(async)]
#[specta::specta]
pub fn write_temp_file(state: State<'_, AppState>, filename: String, base64: String) -> AppResult<String> {
    if base64.len() > MAX_TEMP_BYTES * 4 / 3 + 4 {
        return Err(AppError::new("too_large", "this file is too large"));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(base64.as_bytes())
        .map_err(|_| AppError::invalid("the file data is not valid base64"))?;
    std::fs::create_dir_all(&state.tmp_dir)?;
    let path = hermes_client::files::unique_path(&state.tmp_dir, &safe_name(&filename));
    std::fs::write(&path, bytes)?;
    Ok(path.display().to_string())
}

/// The image on the system clipboard, written as a PNG named `filename` in the temporary folder: its path, or `None`
/// when the clipboard holds no image. The page asks when its paste event carried no file (WebKitGTK's never does
/// for an image; see clipboard.rs).
#[tauri::command]
#[specta::specta]
pub async fn clipboard_image(
    app: AppHandle,
    state: State<'_, AppState>,
    filename: String,
) -> AppResult<Option<String>> {
    let Some(png) = crate::clipboard::image_png(&app).await? else { return Ok(None) };
    let tmp = state.tmp_dir.clone();
    blocking(move || -> AppResult<Option<String>> {
        std::fs::create_dir_all(&tmp)?;
        let path = hermes_client::files::unique_path(&tmp, &safe_name(&filename));
        std::fs::write(&path, png)?;
        Ok(Some(path.display().to_string()))
    })
    .await?
}

/// One line of at most [`NOTIFICATION_MAX_CHARS`] characters.
pub fn notification_body(body: &str) -> String {
    body.chars().filter(|c| !c.is_control()).take(NOTIFICATION_MAX_CHARS).collect()
}

/// A notification says what happened in a few words; the UI passes only its own (translated) generic texts, never
/// the agent's words (tested end to end in e2e_notifications_and_tray).
const NOTIFICATION_MAX_CHARS: usize = 120;

#[tauri::command]
#[specta::specta]
pub fn notify(app: AppHandle, title: String, body: String) -> AppResult<()> {
    let title: String = title.chars().filter(|c| !c.is_control()).take(64).collect();
    if let Err(e) = app.notification().builder().title(title).body(notification_body(&body)).show() {
        tracing::warn!("notification failed: {e}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_names() {
        assert_eq!(safe_name("../../etc/passwd"), "passwd");
        assert_eq!(safe_name("a<b>.png"), "a_b_.png");
        assert_eq!(safe_name(".."), "file");
        assert_eq!(safe_name(""), "file");
    }

    #[test]
    fn notifications_are_generic() {
        assert_eq!(notification_body("Новый ответ"), "Новый ответ");
        assert_eq!(notification_body("a\nb\u{1b}[31mc"), "ab[31mc", "one line, no control characters");
        assert_eq!(notification_body(&"x".repeat(500)).chars().count(), NOTIFICATION_MAX_CHARS);
    }

    #[test]
    fn file_info_refuses_a_folder_by_its_own_code() {
        let dir = tempfile::tempdir().unwrap();
        let e = file_info(dir.path().display().to_string()).unwrap_err();
        assert_eq!(e.code, "is_folder", "{e}");
        let f = dir.path().join("note.txt");
        std::fs::write(&f, b"hello").unwrap();
        let info = file_info(f.display().to_string()).unwrap();
        assert_eq!((info.name.as_str(), info.size), ("note.txt", 5));
        let gone = file_info(dir.path().join("gone.txt").display().to_string()).unwrap_err();
        assert_eq!(gone.code, "not_found", "{gone}");
    }

    #[test]
    fn set_paired_records_once_and_forgets() {
        let dir = tempfile::tempdir().unwrap();
        let s = hermes_store::Store::open_in(dir.path()).unwrap();
        let new = NewProfile {
            name: "Hermes".into(),
            url: "ws://127.0.0.1:8787/ws".into(),
            dialect: Dialect::Adapter,
            v3_user_id: None,
            allow_insecure_ws: false,
            avatar_url: None,
        };
        let id = s.profile_create(&new).unwrap().id;
        assert!(!Profile::from_store(s.profile_get(&id).unwrap().unwrap(), false).paired);
        let first = store_set_paired(&s, &id, true).unwrap();
        assert!(first.paired_at.is_some() && Profile::from_store(first.clone(), false).paired);
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(store_set_paired(&s, &id, true).unwrap().paired_at, first.paired_at, "the first time is kept");
        let forgotten = store_set_paired(&s, &id, false).unwrap();
        assert_eq!(forgotten.paired_at, None);
        assert!(!Profile::from_store(forgotten, false).paired);
        let e = AppError::from(store_set_paired(&s, "nobody", false).unwrap_err());
        assert_eq!(e.code, "not_found");
    }

    #[test]
    fn asset_urls_are_encoded() {
        let u = asset_url(Path::new("/data/media/a b#.png"));
        assert!(u.ends_with("%2Fdata%2Fmedia%2Fa%20b%23.png"), "{u}");
    }
}
