//! Streamed replies to the UI as appended text.
//!
//! The engine's `message` event carries a reply's whole text so far (the `--jsonl` contract, A-9/A-10): a 20 KB reply
//! streamed by 200 edits is 2 MB of JSON through the channel, and over 8 KB Tauri hands each one over in two steps
//! (a script that fetches the payload over IPC). Between the shell and its own UI, an edit that only adds to the text
//! the UI already has travels as [`UiEvent::Append`]: the new tail. The UI's backend (`ui/src/lib/backend/tauri.ts`)
//! joins it back into the full `message` event, so everything above the backend sees the engine's model unchanged.
//! Any other edit (a rewrite, a first sight of the id) is sent whole.

use std::collections::VecDeque;

use serde::Serialize;

use hermes_protocol::SmallString;

use hermes_protocol::Event as EngineEvent;

/// What an engine's UI channel carries: the engine's own events, or the tail of a streamed reply.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(untagged)]
pub enum UiEvent {
    Engine(EngineEvent),
    Append(MessageAppend),
}

/// The tag of [`MessageAppend`]: `"message_append"`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum MessageAppendTag {
    MessageAppend,
}

/// A `message` whose text is the previous one sent for `id` on this channel followed by `append`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MessageAppend {
    pub event: MessageAppendTag,
    pub id: String,
    pub append: String,
    #[serde(rename = "final")]
    pub final_: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub reply_to: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub session: Option<String>,
}

/// Replies still streaming whose text the UI has (a few at a time; finished ones are forgotten).
const TRACKED: usize = 8;

/// The encoder of one UI channel (one engine connection): it remembers the last text sent per streaming reply.
#[derive(Debug, Default)]
pub struct StreamDelta {
    sent: VecDeque<(SmallString, SmallString)>,
}

impl StreamDelta {
    pub fn encode(&mut self, ev: EngineEvent) -> UiEvent {
        let EngineEvent::Message { id, text, final_, reply_to, session } = ev else {
            return UiEvent::Engine(ev);
        };
        let known = self.sent.iter().position(|(i, _)| *i == id).map(|p| self.sent.remove(p).expect("found").1);
        let out = match known {
            Some(prev) if !prev.is_empty() && text.starts_with(&*prev) => UiEvent::Append(MessageAppend {
                event: MessageAppendTag::MessageAppend,
                id: id.to_string(),
                append: text[prev.len()..].to_string(),
                final_,
                reply_to,
                session,
            }),
            // (id and text are kept below while the reply streams: the event gets copies)
            _ => {
                UiEvent::Engine(EngineEvent::Message { id: id.clone(), text: text.clone(), final_, reply_to, session })
            }
        };
        if !final_ {
            if self.sent.len() == TRACKED {
                self.sent.pop_front();
            }
            self.sent.push_back((id, text));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(id: &str, text: &str, final_: bool) -> EngineEvent {
        EngineEvent::Message { id: id.into(), text: text.into(), final_, reply_to: None, session: None }
    }

    /// The UI's decoder in miniature (ui/src/lib/backend/tauri.ts does the same): what it rebuilds must be exactly
    /// the engine's events.
    fn decode(texts: &mut std::collections::HashMap<String, String>, ev: UiEvent) -> EngineEvent {
        match ev {
            UiEvent::Engine(EngineEvent::Message { id, text, final_, reply_to, session }) => {
                texts.insert(id.to_string(), text.to_string());
                EngineEvent::Message { id, text, final_, reply_to, session }
            }
            UiEvent::Engine(other) => other,
            UiEvent::Append(a) => {
                let text = format!("{}{}", texts.get(&a.id).cloned().unwrap_or_default(), a.append);
                texts.insert(a.id.clone(), text.clone());
                EngineEvent::Message {
                    id: a.id.into(),
                    text: text.into(),
                    final_: a.final_,
                    reply_to: a.reply_to,
                    session: a.session,
                }
            }
        }
    }

    #[test]
    fn a9_growing_edits_travel_as_tails_and_decode_to_the_engines_events() {
        let mut enc = StreamDelta::default();
        let mut texts = Default::default();
        let stream = [
            msg("r1", "Hel", false),
            msg("r1", "Hello, wor", false),
            msg("r2", "other", false),
            msg("r1", "Hello, world — ünïcödé 🙂", false),
            msg("r1", "Hello, world — ünïcödé 🙂!", true),
        ];
        let mut wire = Vec::new();
        for ev in stream.clone() {
            let out = enc.encode(ev.clone());
            wire.push(serde_json::to_value(&out).unwrap());
            assert_eq!(decode(&mut texts, out), ev);
        }
        // the first sight of an id is whole; the growing edits are tails; the tag is on the wire
        assert_eq!(wire[0]["event"], "message");
        assert_eq!(
            wire[1],
            serde_json::json!({"event": "message_append", "id": "r1", "append": "lo, wor", "final": false})
        );
        assert_eq!(wire[2]["event"], "message");
        assert_eq!(wire[3]["append"], "ld — ünïcödé 🙂");
        assert_eq!(wire[4], serde_json::json!({"event": "message_append", "id": "r1", "append": "!", "final": true}));
    }

    #[test]
    fn a10_a_rewrite_is_sent_whole_and_a_finished_reply_is_forgotten() {
        let mut enc = StreamDelta::default();
        enc.encode(msg("r", "Draft one", false));
        // an edit that is not a continuation replaces the text: whole
        assert_eq!(enc.encode(msg("r", "Second draft", false)), UiEvent::Engine(msg("r", "Second draft", false)));
        assert!(matches!(enc.encode(msg("r", "Second draft, done", true)), UiEvent::Append(_)));
        // after final the id is not tracked: a later edit of the finished reply is whole again
        assert_eq!(
            enc.encode(msg("r", "Second draft, done (edited)", true)),
            UiEvent::Engine(msg("r", "Second draft, done (edited)", true))
        );
        // other events pass as they are
        let typing = EngineEvent::Typing { on: true };
        assert_eq!(enc.encode(typing.clone()), UiEvent::Engine(typing));
    }

    #[test]
    fn only_a_few_streaming_replies_are_remembered() {
        let mut enc = StreamDelta::default();
        for i in 0..(TRACKED + 3) {
            enc.encode(msg(&format!("r{i}"), "start", false));
        }
        assert_eq!(enc.sent.len(), TRACKED);
        // the oldest were forgotten: their next edit is whole, the newest's a tail
        assert!(matches!(enc.encode(msg("r0", "start more", false)), UiEvent::Engine(_)));
        assert!(matches!(enc.encode(msg(&format!("r{}", TRACKED + 2), "start more", false)), UiEvent::Append(_)));
    }
}
