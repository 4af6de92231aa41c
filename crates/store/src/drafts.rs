//! The composer's unsent text per conversation (schema version 2).

use rusqlite::{OptionalExtension as _, params};

use crate::{Error, Result, Store, now_ms};

/// The longest draft kept, in bytes (UTF-8). A longer one is refused whole (`InvalidInput`), so what is stored is
/// always something the user typed, never a cut.
pub const MAX_DRAFT_BYTES: usize = 1024 * 1024;

impl Store {
    /// The conversation's draft, or `None` (no draft, or no such conversation).
    pub fn draft_get(&self, conversation_id: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .prepare_cached("SELECT text FROM drafts WHERE conversation_id = ?1")?
            .query_row([conversation_id], |r| r.get(0))
            .optional()?)
    }

    /// Keeps `text` as the conversation's draft; an empty (or blank) text removes it. `NotFound` if the conversation
    /// does not exist, `InvalidInput` over [`MAX_DRAFT_BYTES`].
    pub fn draft_set(&self, conversation_id: &str, text: &str) -> Result<()> {
        if text.len() > MAX_DRAFT_BYTES {
            return Err(Error::InvalidInput(format!(
                "a draft of {} bytes is over the {MAX_DRAFT_BYTES}-byte limit",
                text.len()
            )));
        }
        if text.trim().is_empty() {
            self.conn.prepare_cached("DELETE FROM drafts WHERE conversation_id = ?1")?.execute([conversation_id])?;
            return Ok(());
        }
        self.write_tx(|_| {
            self.conversation_require(conversation_id)?;
            self.conn
                .prepare_cached(
                    "INSERT INTO drafts (conversation_id, text, updated_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT (conversation_id) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at",
                )?
                .execute(params![conversation_id, text, now_ms()])?;
            Ok(())
        })
    }
}
