//! The shell owns the connections. Every profile with a token is connected when the app starts (off the main thread,
//! after the window) and stays connected whether or not a page exists: the engine's events are stored by the engine
//! itself (the store is its persistence), counted as unread by the store, and notified here (notify.rs) whether or not
//! a page shows them. A page is a view that subscribes: its `connect` attaches its channel to the running engine and
//! gets the connection's state replayed first. The bookkeeping is `hermes_app::hub` (shared with the resident
//! process); [`pump`] runs it for one engine here.

use tauri::{AppHandle, Manager};

pub use hermes_app::hub::*;

use crate::ipc::EngineEvent;
use crate::state::AppState;

/// The engine's events, for as long as it runs: to the hub (and the page), the tray, notifications.
pub(crate) async fn pump(app: AppHandle, profile_id: String, mut events: hermes_client::Events) {
    while let Some(ev) = events.recv().await {
        if let EngineEvent::AccessDenied { reason } = &ev {
            tracing::warn!(profile = %profile_id, "access denied: {reason}");
        }
        let session = session_of(&ev);
        let Some(hub) = app.try_state::<Hub>() else { continue };
        let seen = hub.event(&profile_id, ev);
        if let Some(kind) = seen.incoming
            && let Some(st) = app.try_state::<AppState>()
        {
            let conversation = conversation_of(&st.app, &profile_id, session.as_deref());
            crate::notify::incoming(&app, &profile_id, conversation.as_deref(), kind);
        }
        if seen.state_changed || seen.incoming.is_some() {
            crate::tray::refresh(&app);
        }
    }
}

/// Every profile's line, in the store's order: profiles the hub never started are offline.
pub fn statuses(app: &AppHandle) -> Vec<AgentStatus> {
    match (app.try_state::<AppState>(), app.try_state::<Hub>()) {
        (Some(st), Some(hub)) => hermes_app::hub::statuses(&st.app, &hub),
        (Some(st), None) => hermes_app::hub::statuses(&st.app, &Hub::default()),
        _ => Vec::new(),
    }
}

/// The conversations with unread messages, most recent first.
pub fn unread(app: &AppHandle) -> Vec<UnreadConversation> {
    app.try_state::<AppState>().map(|st| hermes_app::hub::unread(&st.app)).unwrap_or_default()
}

/// At start: the hub, then (once a resident process that held them has ended) every profile with a token connected,
/// on the async runtime (the window does not wait).
pub fn start(app: &AppHandle) {
    app.manage(Hub::default());
    app.manage(crate::handover::Gate::new());
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        // (a prepared start takes nothing of the resident's before the user's pick: prepared.rs)
        if let Some(p) = app.try_state::<crate::prepared::Prepared>() {
            p.wait().await;
        }
        crate::handover::wait_for_resident(&app).await;
        connect_all(&app).await;
    });
}

/// Every profile with a token (in the keychain or for this session) connected.
pub async fn connect_all(app: &AppHandle) {
    let Some(st) = app.try_state::<AppState>() else { return };
    let profiles = st.app.profiles().unwrap_or_default();
    let session = st.session_tokens.lock().map(|m| m.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
    for p in profiles.into_iter().filter(|p| p.has_token || session.contains(&p.id)) {
        if let Err(e) = crate::commands::connection::ensure_engine(app, &p.id).await {
            tracing::warn!(profile = %p.id, "not connected: {}", e.message);
        }
    }
    crate::tray::refresh(app);
}
