//! The media folder's quota (a setting, 2 GiB by default): what the folder holds is measured on disk each time a
//! received file is about to be written, so a file the user removed frees its room at once. A file refused for the
//! quota loses nothing else: its caption still shows as the message's text, with the reason beside it.

use std::path::Path;

use hermes_protocol::Event;

use super::Engine;

/// What the media folder holds now (see [`crate::http::folder_usage`]).
pub(super) async fn used(dir: &Path) -> u64 {
    crate::http::folder_usage(dir).await
}

impl Engine {
    /// A received file that was not kept: its caption (the message's text) is still shown, then why.
    pub(super) async fn refuse_file(
        &mut self,
        id: String,
        caption: Option<String>,
        session: Option<String>,
        code: &str,
        text: String,
    ) {
        if let Some(c) = caption.filter(|c| !c.trim().is_empty()) {
            self.emit(Event::Message {
                id: id.as_str().into(),
                text: c.as_str().into(),
                final_: true,
                reply_to: None,
                session,
            })
            .await;
        }
        self.emit(Event::Error { code: code.into(), text, id: Some(id) }).await;
    }
}
