//! Conversations as a list shows them (drafts and unread counts joined), and their small edits.

use crate::{App, Conversation, Result};

impl App {
    /// A profile's conversations, most recently active first, each with its draft and unread count. An adapter
    /// profile has exactly one: it is created on first sight.
    pub fn conversations(&self, profile_id: &str) -> Result<Vec<Conversation>> {
        self.with_store(|s| {
            if let Some(p) = s.profile_get(profile_id)?
                && p.dialect == hermes_store::Dialect::Adapter
            {
                s.conversation_for_adapter(&p.id)?;
            }
            s.conversations(profile_id)?
                .into_iter()
                .map(|c| {
                    let draft = s.draft_get(&c.id)?;
                    let unread = s.unread_count(&c.id)?;
                    Ok(Conversation { draft, unread, ..Conversation::from(c) })
                })
                .collect()
        })
    }

    pub fn create_conversation(&self, profile_id: &str, title: &str) -> Result<Conversation> {
        Ok(self.with_store(|s| s.conversation_create(profile_id, title.trim()))?.into())
    }

    pub fn rename_conversation(&self, id: &str, title: &str) -> Result<()> {
        self.with_store(|s| s.conversation_rename(id, title.trim()))
    }

    /// Its messages, cards, draft and outbox go with it.
    pub fn delete_conversation(&self, id: &str) -> Result<()> {
        self.with_store(|s| s.conversation_delete(id))
    }

    /// The composer's unsent text in a conversation (kept across switching conversations, quitting and crashes).
    pub fn draft(&self, conversation_id: &str) -> Result<Option<String>> {
        self.with_store(|s| s.draft_get(conversation_id))
    }

    /// Keeps the composer's text as the conversation's draft; an empty text removes it.
    pub fn set_draft(&self, conversation_id: &str, text: &str) -> Result<()> {
        self.with_store(|s| s.draft_set(conversation_id, text))
    }

    /// The user has the conversation open: what came in it so far is read (its unread count, kept across restarts,
    /// is 0).
    pub fn mark_read(&self, conversation_id: &str) -> Result<()> {
        self.with_store(|s| s.mark_read(conversation_id))
    }
}
