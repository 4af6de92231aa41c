//! The durable outbox behind message (re)sending.
//!
//! Life cycle: `outbox_insert` (pending, **before** the frame is sent) → `outbox_mark_in_flight`
//! (each send attempt) → `outbox_confirm` (server ack). On disconnect or after a crash,
//! `outbox_requeue_in_flight` puts in-flight entries back to pending (and `outbox_pending`
//! already lists them). A permanent error: `outbox_fail` (state `failed`, kept until the user
//! retries with `outbox_retry` or deletes it). Order is the insertion order (`seq`, an
//! AUTOINCREMENT column, so never reused), ids never change.

use rusqlite::{OptionalExtension, Row, params};

use crate::{Error, NewOutboxEntry, OutboxEntry, OutboxState, Result, Store, now_ms};

const COLS: &str = "id, seq, profile_id, conversation_id, kind, payload, state, attempts, \
                    last_error, created_at, updated_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<OutboxEntry> {
    let payload: String = r.get(5)?;
    let payload = serde_json::from_str(&payload)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(5, rusqlite::types::Type::Text, Box::new(e)))?;
    Ok(OutboxEntry {
        id: r.get(0)?,
        seq: r.get(1)?,
        profile_id: r.get(2)?,
        conversation_id: r.get(3)?,
        kind: r.get(4)?,
        payload,
        state: r.get(6)?,
        attempts: r.get(7)?,
        last_error: r.get(8)?,
        created_at: r.get(9)?,
        updated_at: r.get(10)?,
    })
}

impl Store {
    /// Appends an entry in state `pending`. Call it (and commit) **before** sending the frame.
    /// `Constraint` if the id exists already or the profile/conversation does not.
    pub fn outbox_insert(&self, e: &NewOutboxEntry) -> Result<OutboxEntry> {
        let payload = serde_json::to_string(&e.payload)?;
        let now = now_ms();
        let seq = self
            .conn
            .prepare_cached(
                "INSERT INTO outbox (id, profile_id, conversation_id, kind, payload, state,
                 attempts, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'pending', 0, ?6, ?6) RETURNING seq",
            )?
            .query_row(params![e.id, e.profile_id, e.conversation_id, e.kind, payload, now], |r| r.get(0))?;
        Ok(OutboxEntry {
            id: e.id.clone(),
            seq,
            profile_id: e.profile_id.clone(),
            conversation_id: e.conversation_id.clone(),
            kind: e.kind,
            payload: e.payload.clone(),
            state: OutboxState::Pending,
            attempts: 0,
            last_error: None,
            created_at: now,
            updated_at: now,
        })
    }

    /// The entry, or `None`.
    pub fn outbox_get(&self, id: &str) -> Result<Option<OutboxEntry>> {
        Ok(self
            .conn
            .prepare_cached(&format!("SELECT {COLS} FROM outbox WHERE id = ?1"))?
            .query_row([id], from_row)
            .optional()?)
    }

    fn outbox_list(&self, profile_id: &str, states: &str) -> Result<Vec<OutboxEntry>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLS} FROM outbox WHERE profile_id = ?1 AND state IN ({states}) ORDER BY seq"
        ))?;
        let rows = stmt.query_map([profile_id], from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Entries to (re)send for a profile: `pending` and `in_flight` (after a crash or
    /// reconnect an in-flight entry may never have reached the server), in insertion order.
    pub fn outbox_pending(&self, profile_id: &str) -> Result<Vec<OutboxEntry>> {
        self.outbox_list(profile_id, "'pending', 'in_flight'")
    }

    /// Wedged entries (`failed`) of a profile, in insertion order, for the UI's retry list.
    pub fn outbox_failed(&self, profile_id: &str) -> Result<Vec<OutboxEntry>> {
        self.outbox_list(profile_id, "'failed'")
    }

    fn outbox_state(&self, id: &str) -> Result<OutboxState> {
        self.conn
            .prepare_cached("SELECT state FROM outbox WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?
            .ok_or_else(|| Error::NotFound(format!("outbox entry {id}")))
    }

    /// Marks an entry as being sent and counts the attempt. Allowed from `pending` and
    /// `in_flight` (a resend); `InvalidState` from `confirmed` / `failed`; `NotFound` if absent.
    pub fn outbox_mark_in_flight(&self, id: &str) -> Result<()> {
        let n = self
            .conn
            .prepare_cached(
                "UPDATE outbox SET state = 'in_flight', attempts = attempts + 1, updated_at = ?2
                 WHERE id = ?1 AND state IN ('pending', 'in_flight')",
            )?
            .execute(params![id, now_ms()])?;
        if n == 0 {
            return Err(Error::InvalidState {
                what: format!("outbox entry {id}"),
                state: self.outbox_state(id)?.as_str(),
                action: "mark it in flight",
            });
        }
        Ok(())
    }

    /// Puts every `in_flight` entry of the profile back to `pending` (on disconnect, or at
    /// start-up after a crash). Returns how many.
    pub fn outbox_requeue_in_flight(&self, profile_id: &str) -> Result<usize> {
        Ok(self
            .conn
            .prepare_cached(
                "UPDATE outbox SET state = 'pending', updated_at = ?2
                 WHERE profile_id = ?1 AND state = 'in_flight'",
            )?
            .execute(params![profile_id, now_ms()])?)
    }

    /// The server acknowledged the entry: state `confirmed`. Idempotent. Returns `false` if
    /// the id is unknown (e.g. a duplicate ack after [`Store::outbox_purge_confirmed`]).
    pub fn outbox_confirm(&self, id: &str) -> Result<bool> {
        let n = self
            .conn
            .prepare_cached(
                "UPDATE outbox SET state = 'confirmed', last_error = NULL, updated_at = ?2
                 WHERE id = ?1",
            )?
            .execute(params![id, now_ms()])?;
        Ok(n > 0)
    }

    /// A permanent error: state `failed` with `last_error`; not resent until
    /// [`Store::outbox_retry`]. `NotFound` if absent, `InvalidState` if already confirmed.
    pub fn outbox_fail(&self, id: &str, error: &str) -> Result<()> {
        let n = self
            .conn
            .prepare_cached(
                "UPDATE outbox SET state = 'failed', last_error = ?2, updated_at = ?3
                 WHERE id = ?1 AND state <> 'confirmed'",
            )?
            .execute(params![id, error, now_ms()])?;
        if n == 0 {
            return Err(Error::InvalidState {
                what: format!("outbox entry {id}"),
                state: self.outbox_state(id)?.as_str(),
                action: "fail it",
            });
        }
        Ok(())
    }

    /// Records a transient error on an entry without changing its state (e.g. the socket
    /// dropped while it was in flight). `NotFound` if absent.
    pub fn outbox_note_error(&self, id: &str, error: &str) -> Result<()> {
        let n = self
            .conn
            .prepare_cached("UPDATE outbox SET last_error = ?2, updated_at = ?3 WHERE id = ?1")?
            .execute(params![id, error, now_ms()])?;
        if n == 0 {
            return Err(Error::NotFound(format!("outbox entry {id}")));
        }
        Ok(())
    }

    /// The user retries a `failed` entry: back to `pending`, keeping its id and its original
    /// position in the queue. A no-op on `pending` / `in_flight`; `InvalidState` if confirmed;
    /// `NotFound` if absent.
    pub fn outbox_retry(&self, id: &str) -> Result<()> {
        match self.outbox_state(id)? {
            OutboxState::Pending | OutboxState::InFlight => Ok(()),
            OutboxState::Confirmed => Err(Error::InvalidState {
                what: format!("outbox entry {id}"),
                state: OutboxState::Confirmed.as_str(),
                action: "retry it",
            }),
            OutboxState::Failed => {
                self.conn
                    .prepare_cached(
                        "UPDATE outbox SET state = 'pending', updated_at = ?2
                         WHERE id = ?1 AND state = 'failed'",
                    )?
                    .execute(params![id, now_ms()])?;
                Ok(())
            }
        }
    }

    /// Removes an entry whatever its state (the user discards a failed message). Returns
    /// whether it existed.
    pub fn outbox_delete(&self, id: &str) -> Result<bool> {
        Ok(self.conn.prepare_cached("DELETE FROM outbox WHERE id = ?1")?.execute([id])? > 0)
    }

    /// Deletes `confirmed` entries last updated before `older_than_ms` (pass `i64::MAX` for
    /// all). Returns how many.
    pub fn outbox_purge_confirmed(&self, older_than_ms: i64) -> Result<usize> {
        Ok(self
            .conn
            .prepare_cached("DELETE FROM outbox WHERE state = 'confirmed' AND updated_at < ?1")?
            .execute([older_than_ms])?)
    }
}
