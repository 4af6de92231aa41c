//! Notifications through the desktop's notification daemon (notify-rust over D-Bus), as the window process raises
//! them: a `default` action, and a thread that waits for the daemon's `ActionInvoked`; one notification per
//! conversation at a time (a newer one replaces it on screen and is waited for by the same thread). A click starts
//! the window process on the conversation.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::resident::{Launcher, Note, Notifier, Target};

/// The real notifier.
pub struct DesktopNotifier {
    launcher: Arc<dyn Launcher>,
    /// The notification on screen per conversation (its daemon id), while its thread waits for a click.
    shown: Arc<Mutex<HashMap<Target, u32>>>,
}

impl DesktopNotifier {
    pub fn new(launcher: Arc<dyn Launcher>) -> DesktopNotifier {
        DesktopNotifier { launcher, shown: Arc::default() }
    }
}

impl Notifier for DesktopNotifier {
    /// Off the calling thread: the D-Bus call, then (for a conversation) the wait for its default action.
    fn notify(&self, note: Note) {
        let (launcher, shown) = (self.launcher.clone(), self.shown.clone());
        let spawned = std::thread::Builder::new().name("hermes-notify".into()).spawn(move || {
            let mut n = notify_rust::Notification::new();
            n.appname("Hermes").summary(&note.title).body(&note.body);
            let Some(target) = note.target else {
                if let Err(e) = n.show() {
                    tracing::warn!("notification failed: {e}");
                }
                return;
            };
            n.action("default", "Open");
            let replaces = shown.lock().ok().and_then(|m| m.get(&target).copied());
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
            if let Ok(mut m) = shown.lock() {
                m.insert(target.clone(), handle.id());
            }
            let mut clicked = false;
            handle.wait_for_action(|action| clicked = action == "default");
            if let Ok(mut m) = shown.lock() {
                m.remove(&target);
            }
            if clicked {
                tracing::info!("notification clicked: opening its conversation");
                launcher.launch(Some(target));
            }
        });
        if let Err(e) = spawned {
            tracing::warn!("cannot start the notification thread: {e}");
        }
    }
}
