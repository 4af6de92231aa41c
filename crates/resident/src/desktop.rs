//! Notifications through the desktop's notification daemon (notify-rust over D-Bus), as the window process raises
//! them: a `default` action, and a thread that waits for the daemon's `ActionInvoked`; one notification per
//! conversation at a time (a newer one replaces it on screen and is waited for by the same thread). A click starts
//! the window process on the conversation.

use std::sync::Arc;

use crate::resident::{Launcher, Note, Notifier, Target};

/// The real notifier (`hermes_app::notice`, as the window process's): a click starts the window process on the
/// conversation.
pub struct DesktopNotifier {
    launcher: Arc<dyn Launcher>,
}

impl DesktopNotifier {
    pub fn new(launcher: Arc<dyn Launcher>) -> DesktopNotifier {
        DesktopNotifier { launcher }
    }
}

impl Notifier for DesktopNotifier {
    fn notify(&self, note: Note) {
        let launcher = self.launcher.clone();
        let target = note.target.map(|t| (t.profile_id, t.conversation_id));
        hermes_app::notice::show(&note.title, &note.body, target, move |(profile_id, conversation_id)| {
            launcher.launch(Some(Target { profile_id, conversation_id }))
        });
    }
}
