//! Conversations, their drafts and unread counts, history pages, search and export: each a call into `hermes-app`.

use tauri::{AppHandle, State};

use crate::error::AppResult;
use crate::ipc::{Conversation, ExportFormat, HistoryPage, SearchHit};
use crate::state::AppState;

/// A profile's conversations with their drafts and unread counts (the adapter's one is created on first sight).
#[tauri::command(async)]
#[specta::specta]
pub fn list_conversations(state: State<'_, AppState>, profile_id: String) -> AppResult<Vec<Conversation>> {
    Ok(state.app.conversations(&profile_id)?)
}

#[tauri::command(async)]
#[specta::specta]
pub fn create_conversation(state: State<'_, AppState>, profile_id: String, title: String) -> AppResult<Conversation> {
    Ok(state.app.create_conversation(&profile_id, &title)?)
}

#[tauri::command(async)]
#[specta::specta]
pub fn rename_conversation(state: State<'_, AppState>, id: String, title: String) -> AppResult<()> {
    Ok(state.app.rename_conversation(&id, &title)?)
}

/// The composer's unsent text in a conversation (kept across switching conversations, quitting and crashes).
#[tauri::command(async)]
#[specta::specta]
pub fn get_draft(state: State<'_, AppState>, conversation_id: String) -> AppResult<Option<String>> {
    Ok(state.app.draft(&conversation_id)?)
}

/// Keeps the composer's text as the conversation's draft; an empty text removes it.
#[tauri::command(async)]
#[specta::specta]
pub fn set_draft(state: State<'_, AppState>, conversation_id: String, text: String) -> AppResult<()> {
    Ok(state.app.set_draft(&conversation_id, &text)?)
}

/// The user has the conversation open: what came in it so far is read.
#[tauri::command(async)]
#[specta::specta]
pub fn mark_read(app: AppHandle, state: State<'_, AppState>, conversation_id: String) -> AppResult<()> {
    state.app.mark_read(&conversation_id)?;
    // the tray's unread count and list
    crate::tray::refresh(&app);
    Ok(())
}

#[tauri::command(async)]
#[specta::specta]
pub fn delete_conversation(state: State<'_, AppState>, id: String) -> AppResult<()> {
    Ok(state.app.delete_conversation(&id)?)
}

/// A page of a conversation's messages, newest first: the newest when `cursor` is none, else the page older than
/// the one whose `next` it is.
#[tauri::command(async)]
#[specta::specta]
pub fn history(
    state: State<'_, AppState>,
    conversation_id: String,
    cursor: Option<String>,
    limit: u32,
) -> AppResult<HistoryPage> {
    Ok(crate::grants::history_for_page(state.app.history(&conversation_id, cursor.as_deref(), limit)?))
}

#[tauri::command(async)]
#[specta::specta]
pub fn search(state: State<'_, AppState>, query: String, profile_id: Option<String>) -> AppResult<Vec<SearchHit>> {
    Ok(state.app.search(&query, profile_id)?)
}

/// Saves the conversation where the user says (nothing when they cancel).
#[tauri::command]
#[specta::specta]
pub async fn export_conversation(
    app: AppHandle,
    state: State<'_, AppState>,
    id: String,
    format: ExportFormat,
) -> AppResult<()> {
    let export = state.app.export(&id, format)?;
    if let Some(path) = super::files::ask_save_path(&app, &export.file_name).await? {
        std::fs::write(&path, export.body)?;
    }
    Ok(())
}
