//! A conversation's history page by page (messages with their files, and the cards of the same stretch of time),
//! search, and export.

use std::path::Path;

use hermes_store::{Cursor, SearchOptions, Store};

use crate::{
    App, Attachment, Error, Export, ExportFormat, HistoryPage, MessageState, Result, SearchHit, StoredCard,
    StoredMessage,
};

/// The most messages one page holds.
const MAX_PAGE: u32 = 500;

/// A page cursor as it travels: `<created_at>:<seq>` (opaque to a front end; it hands back what a page gave).
pub fn encode_cursor(c: Cursor) -> String {
    format!("{}:{}", c.created_at, c.seq)
}

/// The cursor [`encode_cursor`] wrote; anything else is [`Error::BadCursor`].
pub fn decode_cursor(s: &str) -> Result<Cursor> {
    let (at, seq) = s.split_once(':').ok_or(Error::BadCursor)?;
    let created_at = at.parse().map_err(|_| Error::BadCursor)?;
    let seq = seq.parse().map_err(|_| Error::BadCursor)?;
    Ok(Cursor { created_at, seq })
}

impl App {
    /// A page of a conversation's messages, newest first: the newest `limit` (1..=500) when `cursor` is `None`, else
    /// those older than the page that handed out `cursor`. `next` continues after this page.
    pub fn history(&self, conversation_id: &str, cursor: Option<&str>, limit: u32) -> Result<HistoryPage> {
        let limit = limit.clamp(1, MAX_PAGE);
        let cursor = cursor.map(decode_cursor).transpose()?;
        let s = self.store.lock()?;
        let page = s.page(conversation_id, cursor, limit)?;
        // The cards of the same stretch of time: from this page's oldest message (from the start when it is the
        // oldest page) up to the newer page's oldest message (no bound on the newest page). A card shown in the
        // same millisecond as a page's oldest message belongs to that page.
        let from = if page.next.is_some() { page.messages.last().map(|m| m.created_at) } else { None };
        let cards = s
            .cards_between(conversation_id, from, cursor.map(|c| c.created_at))?
            .into_iter()
            .map(StoredCard::from)
            .collect();
        let messages = page.messages.into_iter().map(|m| stored_message(&s, &self.media_dir, m)).collect();
        Ok(HistoryPage { messages, cards, next: page.next.map(encode_cursor) })
    }

    /// Messages matching `query` (words; the last one a prefix), best first; in one profile's conversations or all.
    pub fn search(&self, query: &str, profile_id: Option<String>) -> Result<Vec<SearchHit>> {
        let opts = SearchOptions { profile_id, ..SearchOptions::default() };
        let hits = self.with_store(|s| s.search(query, &opts))?;
        Ok(hits
            .into_iter()
            .map(|h| SearchHit {
                message_id: h.message_id,
                conversation_id: h.conversation_id,
                profile_id: h.profile_id,
                snippet: h.snippet,
                created_at: h.created_at,
            })
            .collect())
    }

    /// A conversation as a file: its text, and a name to suggest for it (its title, made safe).
    pub fn export(&self, conversation_id: &str, format: ExportFormat) -> Result<Export> {
        let s = self.store.lock()?;
        let (body, ext) = match format {
            ExportFormat::Markdown => (s.export_markdown(conversation_id)?, "md"),
            ExportFormat::Json => {
                let ex = s.export_json(conversation_id)?;
                (serde_json::to_string_pretty(&ex).map_err(Error::Export)?, "json")
            }
        };
        let title = s.conversation_get(conversation_id)?.map(|c| c.title).unwrap_or_default();
        let file_name = safe_name(&format!("{}.{ext}", if title.is_empty() { "conversation" } else { &title }));
        Ok(Export { body, file_name })
    }
}

/// A message with its files joined (a file no longer indexed is left out).
fn stored_message(s: &Store, media_dir: &Path, m: hermes_store::Message) -> StoredMessage {
    let attachments = m
        .attachments
        .iter()
        .filter_map(|id| s.media_get(id).ok().flatten())
        .map(|e| Attachment {
            kind: hermes_client::files::kind_for_mime(&e.mime).to_string(),
            filename: e.filename.clone().unwrap_or_else(|| e.path.rsplit('/').next().unwrap_or("file").to_string()),
            path: media_dir.join(&e.path).display().to_string(),
            media_id: e.id,
            mime: Some(e.mime),
            size: e.size,
            caption: None,
        })
        .collect();
    let state = if received(m.direction) {
        MessageState::Received
    } else {
        match m.delivery {
            Some(hermes_store::Delivery::Queued) => MessageState::Queued,
            Some(hermes_store::Delivery::Delivered) => MessageState::Delivered,
            Some(hermes_store::Delivery::Failed) => MessageState::Failed,
            Some(hermes_store::Delivery::Sent) | None => MessageState::Sent,
        }
    };
    StoredMessage {
        id: m.id,
        server_id: m.server_id,
        direction: m.direction,
        text: m.text,
        final_: m.assembly == hermes_store::Assembly::Final,
        state,
        reply_to: m.reply_to,
        error: m.error,
        created_at: m.created_at,
        attachments,
        retry_of: m.retry_of,
    }
}

/// The agent wrote it.
fn received(d: hermes_store::Direction) -> bool {
    d == hermes_store::Direction::Down
}

/// A file name that is safe to create anywhere and shows what it is: the client's one rule
/// ([`hermes_client::names::safe_name`]: the last path component, no control, reserved or invisible characters, no
/// Windows device name, bounded length; never empty).
pub fn safe_name(name: &str) -> String {
    hermes_client::names::safe_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_names() {
        assert_eq!(safe_name("../../etc/passwd"), "passwd");
        assert_eq!(safe_name("a<b>.png"), "a_b_.png");
        assert_eq!(safe_name(".."), "file.bin");
        assert_eq!(safe_name(""), "file.bin");
        assert_eq!(safe_name("Q3\u{200B}report\u{202E}fdp.exe"), "Q3reportfdp.exe");
        assert_eq!(safe_name("COM¹.txt"), "_COM¹.txt");
        assert_eq!(safe_name(&"x".repeat(300)).chars().count(), 120);
    }

    #[test]
    fn cursors_round_trip_and_anything_else_is_refused() {
        let c = Cursor { created_at: 1_700_000_000_123, seq: 42 };
        assert_eq!(decode_cursor(&encode_cursor(c)).unwrap(), c);
        let negative = Cursor { created_at: -5, seq: -1 };
        assert_eq!(decode_cursor(&encode_cursor(negative)).unwrap(), negative);
        for bad in ["", "12", "a:1", "1:b", "1:2:3", "msg-id"] {
            assert!(matches!(decode_cursor(bad), Err(Error::BadCursor)), "{bad:?}");
        }
    }
}
