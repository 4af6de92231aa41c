//! Conversations: one per adapter profile, many per v3 profile.

use rusqlite::{OptionalExtension, Row, params};

use crate::profiles::require_dialect;
use crate::{Conversation, Dialect, Error, Result, Store, new_id, now_ms};

const COLS: &str = "id, profile_id, title, session, created_at, updated_at, last_preview";

fn from_row(r: &Row<'_>) -> rusqlite::Result<Conversation> {
    Ok(Conversation {
        id: r.get(0)?,
        profile_id: r.get(1)?,
        title: r.get(2)?,
        session: r.get(3)?,
        created_at: r.get(4)?,
        updated_at: r.get(5)?,
        last_preview: r.get(6)?,
    })
}

/// The server-side session of an adapter profile: `mobile:<device id>`.
pub fn adapter_session(device_id: &str) -> String {
    format!("mobile:{device_id}")
}

impl Store {
    fn conversation_insert(&self, c: &Conversation) -> Result<()> {
        self.conn
            .prepare_cached(&format!("INSERT INTO conversations ({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"))?
            .execute(params![c.id, c.profile_id, c.title, c.session, c.created_at, c.updated_at, c.last_preview])?;
        Ok(())
    }

    /// The single conversation of an `adapter` profile, created on first call (session
    /// `mobile:<device id>`, title = profile name). `WrongDialect` for v3 profiles.
    pub fn conversation_for_adapter(&self, profile_id: &str) -> Result<Conversation> {
        if let Some(c) = self.adapter_conversation_lookup(profile_id)? {
            return Ok(c);
        }
        // Not there yet: check again and create under the write lock (BEGIN IMMEDIATE), so two
        // callers cannot both create one (UNIQUE(profile_id, session) backs this up).
        self.write_tx(|_| {
            if let Some(c) = self.adapter_conversation_lookup(profile_id)? {
                return Ok(c);
            }
            let profile = self.profile_require(profile_id)?;
            let now = now_ms();
            let c = Conversation {
                id: new_id(),
                profile_id: profile_id.to_owned(),
                title: profile.name.clone(),
                session: adapter_session(&profile.device_id),
                created_at: now,
                updated_at: now,
                last_preview: None,
            };
            self.conversation_insert(&c)?;
            Ok(c)
        })
    }

    /// The existing conversation of an adapter profile (errors for unknown / v3 profiles).
    fn adapter_conversation_lookup(&self, profile_id: &str) -> Result<Option<Conversation>> {
        let profile = self.profile_require(profile_id)?;
        require_dialect(&profile, Dialect::Adapter)?;
        let sql = format!("SELECT {COLS} FROM conversations WHERE profile_id = ?1 AND session = ?2");
        Ok(self
            .conn
            .prepare_cached(&sql)?
            .query_row(params![profile_id, adapter_session(&profile.device_id)], from_row)
            .optional()?)
    }

    /// A new conversation of a `v3` profile with a fresh session UUID (v4).
    /// `WrongDialect` for adapter profiles.
    pub fn conversation_create(&self, profile_id: &str, title: &str) -> Result<Conversation> {
        self.conversation_create_with_session(profile_id, title, &new_id())
    }

    /// A new conversation of a `v3` profile for a session UUID chosen elsewhere (the CLI's `--session`).
    /// `Constraint` if the profile has a conversation with this session already.
    pub fn conversation_create_with_session(
        &self,
        profile_id: &str,
        title: &str,
        session: &str,
    ) -> Result<Conversation> {
        self.write_tx(|_| {
            let profile = self.profile_require(profile_id)?;
            require_dialect(&profile, Dialect::V3)?;
            let now = now_ms();
            let c = Conversation {
                id: new_id(),
                profile_id: profile_id.to_owned(),
                title: title.to_owned(),
                session: session.to_owned(),
                created_at: now,
                updated_at: now,
                last_preview: None,
            };
            self.conversation_insert(&c)?;
            Ok(c)
        })
    }

    /// The conversation, or `None`.
    pub fn conversation_get(&self, id: &str) -> Result<Option<Conversation>> {
        Ok(self
            .conn
            .prepare_cached(&format!("SELECT {COLS} FROM conversations WHERE id = ?1"))?
            .query_row([id], from_row)
            .optional()?)
    }

    pub(crate) fn conversation_require(&self, id: &str) -> Result<Conversation> {
        self.conversation_get(id)?.ok_or_else(|| Error::NotFound(format!("conversation {id}")))
    }

    /// A profile's conversations, most recently updated first.
    pub fn conversations(&self, profile_id: &str) -> Result<Vec<Conversation>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLS} FROM conversations WHERE profile_id = ?1
             ORDER BY updated_at DESC, created_at DESC, id"
        ))?;
        let rows = stmt.query_map([profile_id], from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Renames a conversation (does not bump `updated_at`).
    pub fn conversation_rename(&self, id: &str, title: &str) -> Result<()> {
        let n = self
            .conn
            .prepare_cached("UPDATE conversations SET title = ?2 WHERE id = ?1")?
            .execute(params![id, title])?;
        if n == 0 {
            return Err(Error::NotFound(format!("conversation {id}")));
        }
        Ok(())
    }

    /// Deletes a conversation with its messages and outbox entries (media index rows stay:
    /// they belong to the profile). `NotFound` if absent.
    pub fn conversation_delete(&self, id: &str) -> Result<()> {
        let n = self.conn.prepare_cached("DELETE FROM conversations WHERE id = ?1")?.execute([id])?;
        if n == 0 {
            return Err(Error::NotFound(format!("conversation {id}")));
        }
        Ok(())
    }
}
