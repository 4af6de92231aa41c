//! Desktop notifications, raised by the shell (they must fire with no page): a reply, a file or a card of an agent
//! while the main window is not focused, hidden or gone. Generic text only — the agent's name and "New reply" / "The
//! agent needs your approval" in the UI's language — never what the agent wrote or asks to run. Each kind can be
//! turned off and all can be muted for a while (`AppSettings::notify_reply`, `notify_card`, `mute_until`).
//!
//! Clicking one shows the window on that conversation (`window::open_conversation`). On Linux the notification has a
//! `default` action and a thread waits for the daemon's `ActionInvoked` over D-Bus (notify-rust); one notification per
//! conversation at a time: a newer one replaces it on screen and is waited for by the same thread. macOS and Windows
//! show it through Tauri's notification plugin, which on the desktop reports no click: there the notification only
//! tells, and the tray's list of unread conversations leads to them (see [`platform`]).

use tauri::{AppHandle, Manager};

use hermes_app::dashboard::{allowed, body_line, generic_text, notification_title};

use crate::hub::Incoming;
use crate::settings::SettingsState;
use crate::state::AppState;

/// Whether the user is looking at the app: its main window exists, is shown and has the focus.
fn watching(app: &AppHandle) -> bool {
    app.get_webview_window(crate::window::MAIN)
        .is_some_and(|w| w.is_visible().unwrap_or(false) && w.is_focused().unwrap_or(false))
}

/// An agent's reply, file or card arrived: a notification unless the user is looking or asked for none.
pub fn incoming(app: &AppHandle, profile_id: &str, conversation_id: Option<&str>, kind: Incoming) {
    let settings = app.try_state::<SettingsState>().map(|s| s.get()).unwrap_or_default();
    if !allowed(&settings, kind, crate::hub::now_ms()) || watching(app) {
        return;
    }
    let name = app.try_state::<AppState>().and_then(|st| st.app.profile(profile_id).ok()).map(|p| p.name);
    let title = notification_title(name.as_deref().unwrap_or_default());
    let body = body_line(generic_text(kind, &settings.locale));
    let target = conversation_id.map(|c| (profile_id.to_string(), c.to_string()));
    platform::show(app, &title, &body, target);
}

/// Shows the main window on the conversation (on the main thread).
fn open(app: &AppHandle, profile_id: String, conversation_id: String) {
    let handle = app.clone();
    let run = app.run_on_main_thread(move || crate::window::open_conversation(&handle, &profile_id, &conversation_id));
    if run.is_err() {
        tracing::warn!("cannot open the conversation: the main thread is gone");
    }
}

#[cfg(target_os = "linux")]
mod platform {
    use tauri::AppHandle;

    /// Off the calling thread (`hermes_app::notice`): a click shows the window on the conversation.
    pub fn show(app: &AppHandle, title: &str, body: &str, target: Option<(String, String)>) {
        let app = app.clone();
        hermes_app::notice::show(title, body, target, move |(profile, conversation)| {
            super::open(&app, profile, conversation)
        });
    }
}

/// macOS and Windows: Tauri's notification plugin (the system's own API underneath). On the desktop the plugin reports
/// no click, so these notifications only tell; the tray's list of unread conversations opens them.
#[cfg(not(target_os = "linux"))]
mod platform {
    use tauri::AppHandle;
    use tauri_plugin_notification::NotificationExt;

    pub fn show(app: &AppHandle, title: &str, body: &str, _target: Option<(String, String)>) {
        if let Err(e) = app.notification().builder().title(title).body(body).show() {
            tracing::warn!("notification failed: {e}");
        }
    }
}

/// Mute every notification for an hour from now (the tray's item).
pub fn mute_for_an_hour(app: &AppHandle) {
    let Some(st) = app.try_state::<SettingsState>() else { return };
    let settings = hermes_app::dashboard::muted_for_an_hour(st.get(), crate::hub::now_ms());
    if let Err(e) = st.set(settings) {
        tracing::warn!("cannot mute notifications: {}", e.message);
    }
}
