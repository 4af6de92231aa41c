//! The SQLite side of the engine: the durable outbox and the history (messages, media index) written from the
//! one event model, so the CLI and the app keep the same records.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use hermes_protocol::{Event, Refusal};
use hermes_store::{
    Assembly, Card, Delivery, Direction, MediaEntry, MediaOrigin, Message, MessageError, NewOutboxEntry, OutboxKind,
    OutboxState, Store, now_ms,
};
use sha2::{Digest as _, Sha256};
use tracing::warn;

use crate::persist::{OutboxRecord, Payload, Persist, PersistError};

/// [`Persist`] on the store, for one profile. The store is shared (the app reads history from it too).
pub struct StorePersist {
    store: Arc<Mutex<Store>>,
    profile_id: String,
    /// Adapter: the profile's one conversation. v3: the default one.
    default_conversation: String,
    media_dir: PathBuf,
    /// server id → local id of incoming messages, so edits upsert one row without a lookup each time.
    incoming: HashMap<String, String>,
}

impl StorePersist {
    pub fn new(store: Arc<Mutex<Store>>, profile_id: &str, default_conversation: &str, media_dir: &Path) -> Self {
        StorePersist {
            store,
            profile_id: profile_id.into(),
            default_conversation: default_conversation.into(),
            media_dir: media_dir.into(),
            incoming: HashMap::new(),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&Store) -> hermes_store::Result<T>) -> Result<T, PersistError> {
        let guard = self.store.lock().map_err(|_| PersistError::Poisoned)?;
        Ok(f(&guard)?)
    }

    /// The conversation of a v3 session (created if the agent speaks in one we do not know), else the default.
    fn conversation_for(&self, store: &Store, session: Option<&str>) -> hermes_store::Result<String> {
        let Some(session) = session else { return Ok(self.default_conversation.clone()) };
        let convs = store.conversations(&self.profile_id)?;
        if let Some(c) = convs.iter().find(|c| c.session == session) {
            return Ok(c.id.clone());
        }
        // adapter (one conversation), or a v3 session we do not know (the agent answers in ours): the default
        Ok(self.default_conversation.clone())
    }

    fn incoming_text(
        &mut self,
        server_id: &str,
        text: &str,
        final_: bool,
        reply_to: Option<&str>,
        session: Option<&str>,
    ) {
        let local = self.incoming.get(server_id).cloned();
        let res = self.with(|s| {
            let conv = self.conversation_for(s, session)?;
            let existing = match &local {
                Some(id) => s.message_get(id)?,
                None => s.message_by_server_id(&conv, server_id)?,
            };
            let now = now_ms();
            let m = match existing {
                Some(mut m) => {
                    m.text = text.to_string();
                    m.edit_count += 1;
                    m.assembly = if final_ { Assembly::Final } else { Assembly::Streaming };
                    m.updated_at = now;
                    m
                }
                None => {
                    let mut m = Message::new(&conv, Direction::Down, text, now);
                    m.server_id = Some(server_id.to_string());
                    m.reply_to = reply_to.map(str::to_string);
                    m.assembly = if final_ { Assembly::Final } else { Assembly::Streaming };
                    m
                }
            };
            s.message_upsert(&m)?;
            Ok(m.id)
        });
        match res {
            Ok(id) => {
                if final_ {
                    self.incoming.remove(server_id);
                } else {
                    self.incoming.insert(server_id.to_string(), id);
                }
            }
            Err(e) => warn!(%e, "could not record a reply"),
        }
    }

    fn incoming_media(&mut self, ev: &Event) -> Result<(), PersistError> {
        let Event::Media { id, kind: _, mime, filename, caption, path, size, session } = ev else { return Ok(()) };
        let bytes = std::fs::read(path)?;
        let sha = hex::encode(Sha256::digest(&bytes));
        let rel = Path::new(path)
            .strip_prefix(&self.media_dir)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| PathBuf::from(filename));
        let profile_id = self.profile_id.clone();
        self.with(|s| {
            s.atomically(|s| {
                let conv = self.conversation_for(s, session.as_deref())?;
                let mut m = Message::new(&conv, Direction::Down, caption.as_deref().unwrap_or(""), now_ms());
                m.server_id = Some(format!("media:{id}"));
                let media_id = hermes_store::new_id();
                m.attachments = vec![media_id.clone()];
                s.message_upsert(&m)?;
                s.media_insert(&MediaEntry {
                    id: media_id,
                    profile_id: profile_id.clone(),
                    message_id: Some(m.id.clone()),
                    path: rel.to_string_lossy().into_owned(),
                    sha256: sha.clone(),
                    mime: mime.clone().unwrap_or_else(|| "application/octet-stream".into()),
                    size: *size,
                    filename: Some(filename.clone()),
                    origin: MediaOrigin::Received,
                    created_at: now_ms(),
                })
            })
        })
    }
}

impl Persist for StorePersist {
    fn waiting_cards(&mut self) -> Vec<(String, Vec<hermes_protocol::adapter::PromptOption>)> {
        let cards = self.with(|s| s.cards_waiting(&self.default_conversation, now_ms())).unwrap_or_else(|e| {
            warn!(%e, "could not load the waiting cards");
            Vec::new()
        });
        cards.into_iter().map(|c| (c.id, serde_json::from_value(c.options).unwrap_or_default())).collect()
    }

    fn outbox_insert(&mut self, rec: &OutboxRecord) -> Result<(), Refusal> {
        let payload = serde_json::to_value(rec).map_err(|_| Refusal::Store)?;
        let kind = match rec.payload.kind() {
            "text" => OutboxKind::Text,
            "audio" => OutboxKind::Audio,
            _ => OutboxKind::Media,
        };
        let (text, session) = match &rec.payload {
            Payload::Text { text, session, .. } => (text.clone(), session.clone()),
            Payload::File { filename, caption, session, .. } => {
                (caption.clone().unwrap_or_else(|| filename.clone()), session.clone())
            }
        };
        let profile_id = self.profile_id.clone();
        let guard = self.store.lock().map_err(|_| Refusal::Store)?;
        let res = guard.atomically(|s| {
            // A-6 and the retry rule (Persist::outbox_insert): a failed entry that never reached the agent goes back
            // into the queue under its id; any other used id is refused.
            if let Some(old) = s.outbox_get(&rec.id)? {
                if old.state != OutboxState::Failed {
                    return Ok(Err(Refusal::IdInUse(rec.id.clone())));
                }
                s.outbox_retry(&rec.id)?;
                if let Some(mut m) = s.message_get(&rec.id)? {
                    m.delivery = Some(Delivery::Queued);
                    m.error = None;
                    m.updated_at = now_ms();
                    s.message_upsert(&m)?;
                }
                return Ok(Ok(()));
            }
            if s.message_get(&rec.id)?.is_some() {
                return Ok(Err(Refusal::IdInUse(rec.id.clone())));
            }
            let conv = self.conversation_for(s, session.as_deref())?;
            // the outbox entry and the local echo: both or neither
            s.outbox_insert(&NewOutboxEntry {
                id: rec.id.clone(),
                profile_id: profile_id.clone(),
                conversation_id: conv.clone(),
                kind,
                payload: payload.clone(),
            })?;
            // milliseconds, like the agent's messages: a message sent within the same second as the ones around it
            // keeps its place in the history (the record's `created_unix` is whole seconds, for the v3 envelope)
            let mut m = Message::new(&conv, Direction::Up, &text, now_ms());
            m.id = rec.id.clone();
            m.retry_of = rec.retry_of.clone();
            if let Payload::Text { reply_to, .. } = &rec.payload {
                m.reply_to = reply_to.clone();
            }
            s.message_upsert(&m)?;
            Ok(Ok(()))
        });
        match res {
            Ok(r) => r,
            Err(hermes_store::Error::DiskFull) => Err(Refusal::DiskFull),
            Err(e) => {
                warn!(%e, "could not queue a message");
                Err(Refusal::Store)
            }
        }
    }

    fn outbox_pending(&mut self) -> Result<Vec<OutboxRecord>, PersistError> {
        let entries = self.with(|s| {
            s.outbox_requeue_in_flight(&self.profile_id)?;
            s.outbox_pending(&self.profile_id)
        })?;
        Ok(entries.into_iter().filter_map(|e| serde_json::from_value(e.payload).ok()).collect())
    }

    fn outbox_confirm(&mut self, id: &str) -> Result<(), PersistError> {
        self.with(|s| {
            s.atomically(|s| {
                s.outbox_confirm(id)?;
                // an error from the agent for this message wins over the delivery confirmation that follows it
                if s.message_get(id)?.is_some_and(|m| m.delivery != Some(Delivery::Failed)) {
                    s.message_set_delivery(id, Delivery::Delivered)?;
                }
                Ok(())
            })
        })
    }

    fn outbox_fail(&mut self, id: &str, code: &str, reason: &str) -> Result<(), PersistError> {
        self.with(|s| {
            s.atomically(|s| {
                if s.outbox_get(id)?.is_some_and(|e| e.state != OutboxState::Confirmed) {
                    s.outbox_fail(id, reason)?;
                }
                if s.message_get(id)?.is_some() {
                    s.message_set_delivery(id, Delivery::Failed)?;
                    s.message_set_error(id, Some(&MessageError { code: code.into(), text: reason.into() }))?;
                }
                Ok(())
            })
        })
    }

    fn record(&mut self, event: &Event) {
        let res = match event {
            Event::Sent { id } => self.with(|s| {
                if s.outbox_get(id)?.is_some() {
                    s.outbox_mark_in_flight(id)?;
                }
                // never back from failed (an error for it came first) or delivered (the Pong overtook it)
                if s.message_get(id)?.is_some_and(|m| m.delivery == Some(Delivery::Queued)) {
                    s.message_set_delivery(id, Delivery::Sent)?;
                }
                Ok(())
            }),
            Event::Message { id, text, final_, reply_to, session } => {
                self.incoming_text(id, text, *final_, reply_to.as_deref(), session.as_deref());
                Ok(())
            }
            Event::Media { .. } => self.incoming_media(event),
            // Cards are the adapter's (A-12..A-17): its one conversation. Kept with their outcome, so the history shows
            // them after a restart and one still waiting can be answered then.
            Event::Prompt { id, kind, text, options, command, description, timeout_seconds } => self.with(|s| {
                s.card_insert(&Card {
                    conversation_id: self.default_conversation.clone(),
                    id: id.clone(),
                    kind: kind.clone(),
                    text: text.clone(),
                    options: serde_json::to_value(options).unwrap_or_default(),
                    command: command.clone(),
                    description: description.clone(),
                    timeout_seconds: timeout_seconds.map(|t| i64::try_from(t).unwrap_or(i64::MAX)),
                    created_at: now_ms(),
                    done: None,
                })
            }),
            Event::PromptDone { prompt_id, option_id, expired } => {
                self.with(|s| s.card_done(&self.profile_id, prompt_id, option_id.as_deref(), *expired))
            }
            // The agent refused one of our messages (it had received it): failed with its error, for good — the
            // delivery confirmation that may follow does not change it.
            Event::Error { code, text, id: Some(id) } => self.with(|s| {
                if let Some(m) = s.message_get(id)? {
                    s.message_set_error(id, Some(&MessageError { code: code.clone(), text: text.clone() }))?;
                    if m.direction == Direction::Up && code != "upload_failed" {
                        s.message_set_delivery(id, Delivery::Failed)?;
                    }
                }
                Ok(())
            }),
            Event::Disconnected { .. } => self.with(|s| s.outbox_requeue_in_flight(&self.profile_id).map(|_| ())),
            _ => Ok(()),
        };
        if let Err(e) = res {
            warn!(%e, "could not record an event");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hermes_protocol::adapter::PromptOption;
    use hermes_store::{CardDone, NewProfile};

    #[test]
    fn cards_and_their_outcome_are_recorded_with_the_conversation() {
        let store = Store::open_in_memory().unwrap();
        let p = store.profile_create(&NewProfile::adapter("p", "ws://127.0.0.1:1")).unwrap();
        let c = store.conversation_for_adapter(&p.id).unwrap();
        let store = Arc::new(Mutex::new(store));
        let mut rec = StorePersist::new(store.clone(), &p.id, &c.id, Path::new("/nonexistent"));
        let prompt = Event::Prompt {
            id: "k1".into(),
            kind: "exec_approval".into(),
            text: "Run it?".into(),
            options: vec![PromptOption {
                id: "once".into(),
                label: "Allow once".into(),
                style: Some("primary".into()),
            }],
            command: Some("make clean".into()),
            description: None,
            timeout_seconds: Some(300),
        };
        rec.record(&prompt);
        rec.record(&prompt); // a repeated frame: still one card
        {
            let s = store.lock().unwrap();
            let cards = s.cards_between(&c.id, None, None).unwrap();
            assert_eq!(cards.len(), 1);
            assert_eq!(cards[0].command.as_deref(), Some("make clean"));
            assert_eq!(cards[0].options[0]["id"], "once");
            assert_eq!(cards[0].timeout_seconds, Some(300));
            assert_eq!(cards[0].done, None);
        }
        rec.record(&Event::PromptDone { prompt_id: "k1".into(), option_id: Some("once".into()), expired: false });
        let s = store.lock().unwrap();
        assert_eq!(
            s.card_get(&c.id, "k1").unwrap().unwrap().done,
            Some(CardDone { option_id: Some("once".into()), expired: false })
        );
    }
}
