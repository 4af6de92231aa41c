//! A desktop notification that leads somewhere (Linux: the notification daemon over D-Bus, through notify-rust), the
//! same in the window process and the resident one: the agent's name and generic text, a `default` action, and a
//! thread that waits for the daemon's `ActionInvoked`; one notification per conversation at a time (a newer one
//! replaces it on screen and is waited for by the same thread). The click's consequence is the caller's: the window
//! process shows the conversation, the resident starts the window process on it.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// A conversation: (profile id, conversation id).
pub type Target = (String, String);

/// The notification on screen per conversation (its daemon id), while its thread waits for a click.
fn shown() -> &'static Mutex<HashMap<Target, u32>> {
    static SHOWN: OnceLock<Mutex<HashMap<Target, u32>>> = OnceLock::new();
    SHOWN.get_or_init(Default::default)
}

/// Shows `title` / `body` off the calling thread; for a conversation, `on_click` runs (on that thread) when the user
/// activates the notification.
pub fn show(title: &str, body: &str, target: Option<Target>, on_click: impl FnOnce(Target) + Send + 'static) {
    let (title, body) = (title.to_string(), body.to_string());
    let spawned = std::thread::Builder::new().name("hermes-notify".into()).spawn(move || {
        let mut n = notify_rust::Notification::new();
        n.appname("Hermes").summary(&title).body(&body);
        let Some(key) = target else {
            if let Err(e) = n.show() {
                tracing::warn!("notification failed: {e}");
            }
            return;
        };
        n.action("default", "Open");
        let replaces = shown().lock().ok().and_then(|m| m.get(&key).copied());
        if let Some(id) = replaces {
            // the thread that waits for this conversation's notification waits for this one too
            n.id(id);
            if let Err(e) = n.show() {
                tracing::warn!("notification failed: {e}");
            }
            return;
        }
        let handle = match n.show() {
            Ok(h) => h,
            Err(e) => {
                tracing::warn!("notification failed: {e}");
                return;
            }
        };
        if let Ok(mut m) = shown().lock() {
            m.insert(key.clone(), handle.id());
        }
        let mut clicked = false;
        handle.wait_for_action(|action| clicked = action == "default");
        if let Ok(mut m) = shown().lock() {
            m.remove(&key);
        }
        if clicked {
            tracing::info!("notification clicked: opening its conversation");
            on_click(key);
        }
    });
    if let Err(e) = spawned {
        tracing::warn!("cannot start the notification thread: {e}");
    }
}
