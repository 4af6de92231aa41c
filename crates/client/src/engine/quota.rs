//! The media folder's quota (a setting, 2 GiB by default): what the folder holds is measured on disk each time a
//! received file is about to be written, so a file the user removed frees its room at once. A file refused for the
//! quota loses nothing else: its caption still shows as the message's text, with the reason beside it.

use std::path::Path;

use hermes_protocol::Event;

use super::Engine;

/// Bytes of the regular files in `dir` and its sub-folders (partial downloads included: they are on their way in).
/// Links are not followed.
pub(super) async fn used(dir: &Path) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(mut rd) = tokio::fs::read_dir(&d).await else { continue };
        while let Ok(Some(e)) = rd.next_entry().await {
            let Ok(ft) = e.file_type().await else { continue };
            if ft.is_dir() {
                stack.push(e.path());
            } else if ft.is_file()
                && let Ok(m) = e.metadata().await
            {
                total = total.saturating_add(m.len());
            }
        }
    }
    total
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
