//! Messages: upsert by local id (streamed replies), paging, counting.

use rusqlite::{OptionalExtension, Row, params};

use crate::types::DirectionText;
use crate::{Cursor, Delivery, Error, Message, MessageError, Page, Result, Store, now_ms};

pub(crate) const COLS: &str = "m.id, m.conversation_id, m.server_id, m.direction, m.text, \
    m.assembly, m.edit_count, m.reply_to, m.error_code, m.error_text, m.delivery, m.created_at, \
    m.updated_at, m.attachments, m.seq, m.retry_of";

/// Reads a row selected with [`COLS`]; returns the message and its `seq`.
pub(crate) fn from_row(r: &Row<'_>) -> rusqlite::Result<(Message, i64)> {
    let error_code: Option<String> = r.get(8)?;
    let error_text: Option<String> = r.get(9)?;
    let attachments: String = r.get(13)?;
    let attachments: Vec<String> = serde_json::from_str(&attachments)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(13, rusqlite::types::Type::Text, Box::new(e)))?;
    Ok((
        Message {
            id: r.get(0)?,
            conversation_id: r.get(1)?,
            server_id: r.get(2)?,
            direction: r.get::<_, DirectionText>(3)?.0,
            text: r.get(4)?,
            assembly: r.get(5)?,
            edit_count: r.get(6)?,
            reply_to: r.get(7)?,
            error: match (error_code, error_text) {
                (None, None) => None,
                (code, text) => Some(MessageError { code: code.unwrap_or_default(), text: text.unwrap_or_default() }),
            },
            delivery: r.get(10)?,
            created_at: r.get(11)?,
            updated_at: r.get(12)?,
            attachments,
            retry_of: r.get(15)?,
        },
        r.get(14)?,
    ))
}

const UPSERT: &str = "INSERT INTO messages (id, conversation_id, server_id, direction, text, \
    assembly, edit_count, reply_to, error_code, error_text, delivery, created_at, updated_at, \
    attachments, retry_of) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
    ON CONFLICT (id) DO UPDATE SET
        server_id = coalesce(excluded.server_id, messages.server_id),
        text = excluded.text,
        assembly = excluded.assembly,
        edit_count = excluded.edit_count,
        reply_to = excluded.reply_to,
        error_code = excluded.error_code,
        error_text = excluded.error_text,
        delivery = excluded.delivery,
        updated_at = excluded.updated_at,
        attachments = excluded.attachments,
        retry_of = coalesce(excluded.retry_of, messages.retry_of)
    WHERE messages.conversation_id = excluded.conversation_id";

impl Store {
    /// Inserts the message, or updates it in place if its local id exists
    /// (`INSERT … ON CONFLICT(id) DO UPDATE`, one cached prepared statement): this is how a
    /// streamed reply is written delta after delta. `conversation_id`, `direction` and
    /// `created_at` of an existing row are kept; a known `server_id` is never cleared.
    ///
    /// Errors: `Constraint` if another message of the conversation already has this
    /// `server_id`, or the conversation does not exist; `InvalidInput` if the id exists in
    /// another conversation.
    pub fn message_upsert(&self, m: &Message) -> Result<()> {
        let attachments = serde_json::to_string(&m.attachments)?;
        let n = self.conn.prepare_cached(UPSERT)?.execute(params![
            m.id,
            m.conversation_id,
            m.server_id,
            DirectionText(m.direction),
            m.text,
            m.assembly,
            m.edit_count,
            m.reply_to,
            m.error.as_ref().map(|e| &e.code),
            m.error.as_ref().map(|e| &e.text),
            m.delivery,
            m.created_at,
            m.updated_at,
            attachments,
            m.retry_of,
        ])?;
        if n == 0 {
            return Err(Error::InvalidInput(format!("message {} belongs to another conversation", m.id)));
        }
        Ok(())
    }

    /// The message with this local id, or `None`.
    pub fn message_get(&self, id: &str) -> Result<Option<Message>> {
        Ok(self
            .conn
            .prepare_cached(&format!("SELECT {COLS} FROM messages m WHERE m.id = ?1"))?
            .query_row([id], from_row)
            .optional()?
            .map(|(m, _)| m))
    }

    /// The message the server knows as `server_id` in this conversation, or `None`.
    pub fn message_by_server_id(&self, conversation_id: &str, server_id: &str) -> Result<Option<Message>> {
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT {COLS} FROM messages m WHERE m.conversation_id = ?1 AND m.server_id = ?2"
            ))?
            .query_row([conversation_id, server_id], from_row)
            .optional()?
            .map(|(m, _)| m))
    }

    /// Sets the delivery state (and `updated_at`). `NotFound` if absent.
    pub fn message_set_delivery(&self, id: &str, delivery: Delivery) -> Result<()> {
        let n = self
            .conn
            .prepare_cached("UPDATE messages SET delivery = ?2, updated_at = ?3 WHERE id = ?1")?
            .execute(params![id, delivery, now_ms()])?;
        if n == 0 {
            return Err(Error::NotFound(format!("message {id}")));
        }
        Ok(())
    }

    /// Records the server's id for a message. `NotFound` if absent, `Constraint` if another
    /// message of the conversation has it.
    pub fn message_set_server_id(&self, id: &str, server_id: &str) -> Result<()> {
        let n = self
            .conn
            .prepare_cached("UPDATE messages SET server_id = ?2 WHERE id = ?1")?
            .execute(params![id, server_id])?;
        if n == 0 {
            return Err(Error::NotFound(format!("message {id}")));
        }
        Ok(())
    }

    /// Attaches (or clears) an error. `NotFound` if absent.
    pub fn message_set_error(&self, id: &str, error: Option<&MessageError>) -> Result<()> {
        let n = self
            .conn
            .prepare_cached("UPDATE messages SET error_code = ?2, error_text = ?3, updated_at = ?4 WHERE id = ?1")?
            .execute(params![id, error.map(|e| &e.code), error.map(|e| &e.text), now_ms()])?;
        if n == 0 {
            return Err(Error::NotFound(format!("message {id}")));
        }
        Ok(())
    }

    /// Marks every message still `streaming` as `final` (they were interrupted: the app crashed
    /// or the connection dropped mid-reply), attaching `error` to those that have none.
    /// Call at start-up. Returns how many. Only final messages are in the search index, so
    /// this also makes them searchable.
    pub fn messages_finalize_interrupted(&self, error: &MessageError) -> Result<usize> {
        Ok(self
            .conn
            .prepare_cached(
                "UPDATE messages SET assembly = 'final',
                     error_code = coalesce(error_code, ?1),
                     error_text = CASE WHEN error_code IS NULL THEN ?2 ELSE error_text END,
                     updated_at = max(updated_at, ?3)
                 WHERE assembly = 'streaming'",
            )?
            .execute(params![error.code, error.text, now_ms()])?)
    }

    /// Deletes a message. Returns whether it existed.
    pub fn message_delete(&self, id: &str) -> Result<bool> {
        let n = self.conn.prepare_cached("DELETE FROM messages WHERE id = ?1")?.execute([id])?;
        Ok(n > 0)
    }

    /// One page of a conversation's history, **newest first**: the `limit` newest messages
    /// strictly older than `before` (or the newest overall when `before` is `None`), ordered
    /// by `created_at` then insertion order. `page.next` is the cursor for the following
    /// (older) page, `None` when there is nothing older.
    pub fn page(&self, conversation_id: &str, before: Option<Cursor>, limit: u32) -> Result<Page> {
        let before = before.unwrap_or(Cursor { created_at: i64::MAX, seq: i64::MAX });
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLS} FROM messages m
             WHERE m.conversation_id = ?1 AND (m.created_at, m.seq) < (?2, ?3)
             ORDER BY m.created_at DESC, m.seq DESC LIMIT ?4"
        ))?;
        let rows =
            stmt.query_map(params![conversation_id, before.created_at, before.seq, i64::from(limit) + 1], from_row)?;
        let mut messages = Vec::with_capacity(limit as usize);
        let mut last = None;
        let mut more = false;
        for row in rows {
            let (m, seq) = row?;
            if messages.len() == limit as usize {
                more = true; // at least one older message exists
                break;
            }
            last = Some(Cursor { created_at: m.created_at, seq });
            messages.push(m);
        }
        let next = if more { last } else { None };
        Ok(Page { messages, next })
    }

    /// Number of messages in the conversation.
    pub fn count(&self, conversation_id: &str) -> Result<u64> {
        Ok(self
            .conn
            .prepare_cached("SELECT count(*) FROM messages WHERE conversation_id = ?1")?
            .query_row([conversation_id], |r| r.get::<_, i64>(0))?
            .unsigned_abs())
    }

    /// All messages of a conversation, oldest first (export).
    pub(crate) fn messages_all(&self, conversation_id: &str) -> Result<Vec<Message>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLS} FROM messages m WHERE m.conversation_id = ?1
             ORDER BY m.created_at, m.seq"
        ))?;
        let rows = stmt.query_map([conversation_id], |r| from_row(r).map(|(m, _)| m))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
