//! What the user sends: checked against the limits, queued in the outbox and written frame by frame.

use base64::Engine as _;

use super::{Card, Cursor, Io, MAX_AUDIO_BYTES, Outgoing, Queued, Session, State};
use crate::adapter::{self, Up};
use crate::dialect::Dialect;
use crate::event::{Direction, Event, PromptOption};
use crate::media::{self, UpMediaMeta};
use crate::refusal::{Feature, Refusal};
use crate::v3::{self, Envelope};

impl Session {
    /// Would `item` be accepted now? Checks every limit before anything is written anywhere.
    pub fn check(&self, item: &Outgoing) -> Result<(), Refusal> {
        match (self.cfg.dialect, item) {
            (_, Outgoing::Text { text, .. }) => {
                if text.trim().is_empty() {
                    return Err(Refusal::Empty);
                }
                // the encoded frame must fit in 16 MiB; JSON escapes can grow text up to 6×, so measure when
                // the cheap bound is not enough.
                let limit = adapter::MAX_FRAME_BYTES - 64 * 1024;
                let encoded = if text.len() * 6 < limit {
                    text.len()
                } else {
                    serde_json::to_string(text).map_or(usize::MAX, |e| e.len())
                };
                if encoded > limit {
                    return Err(Refusal::TooLong { encoded, limit });
                }
                Ok(())
            }
            (Dialect::Adapter, Outgoing::Audio { wav, .. }) => {
                self.feature(Feature::Voice)?;
                if wav.len() > MAX_AUDIO_BYTES {
                    return Err(Refusal::AudioTooBig { size: wav.len(), limit: MAX_AUDIO_BYTES });
                }
                Ok(())
            }
            (Dialect::Adapter, Outgoing::Media { meta, bytes }) => {
                self.feature(Feature::Files)?;
                media::plan_upload(bytes.len() as u64, media::frame_overhead(meta), &self.limits)?;
                Ok(())
            }
            (Dialect::Adapter, Outgoing::MediaFile { meta, size, .. }) => {
                self.feature(Feature::Files)?;
                media::plan_upload(*size, media::frame_overhead(meta), &self.limits)?;
                Ok(())
            }
            // G-9 decision: no client-side limit on v3; the gateway decides (`file_too_large` / HTTP 413)
            (Dialect::V3, Outgoing::V3Media { .. } | Outgoing::V3File { .. }) => Ok(()),
            (Dialect::Adapter, Outgoing::V3Media { .. } | Outgoing::V3File { .. }) => {
                Err(Refusal::WrongDialect("not a frame of the adapter protocol"))
            }
            (Dialect::V3, _) => Err(Refusal::WrongDialect("files and voice go through the gateway upload first (G-9)")),
        }
    }

    /// a base frame the agent switched off is not used (see [`Features::adapter`]).
    fn feature(&self, f: Feature) -> Result<(), Refusal> {
        let on = match f {
            Feature::Files => self.features.files,
            Feature::Voice => self.features.voice,
        };
        if on { Ok(()) } else { Err(Refusal::FeatureOff(f)) }
    }

    /// Queue an item under `id` (already persisted by the caller). Sent at once when ready, else after the next
    /// `ready`. A repeated id is ignored (it is already queued).
    pub fn submit(&mut self, id: &str, created_unix: i64, item: Outgoing) -> Result<(), Refusal> {
        self.check(&item)?;
        match item {
            Outgoing::V3File { .. } => self.queue_upload(id, created_unix, item),
            item => {
                self.outbox.push(id, Queued { item, created_unix });
            }
        }
        Ok(())
    }

    /// The caller could not carry out an item's [`Io::SendFile`] (its file is gone or unreadable): the item leaves
    /// the outbox for good and `rejected` is reported. The caller should drop the connection if part of the frame
    /// was already written (the agent discards an unfinished series, A-19).
    pub fn fail_item(&mut self, id: &str, reason: &str) {
        let cmd = self.outbox.get(id).map_or("file", |q| q.item.cmd_name());
        if self.cursor.as_ref().is_some_and(|c| c.id == id) {
            self.cursor = None;
        }
        if self.outbox.remove(id).is_some() {
            let r = Refusal::NotSent(reason.to_string());
            self.events.push_back(Event::Rejected {
                cmd: cmd.into(),
                code: r.code().into(),
                reason: r.to_string(),
                id: Some(id.to_string()),
            });
        }
    }

    /// Io is queued (e.g. a received file to save).
    pub fn has_io(&self) -> bool {
        !self.io.is_empty()
    }

    /// A multi-part upload has parts left to write.
    pub fn uploading(&self) -> bool {
        self.cursor.is_some()
    }

    /// Cancel a queued item or an upload in progress (a v3 file's HTTP upload too: the caller stops carrying it
    /// out). Returns whether something was cancelled.
    pub fn cancel(&mut self, id: &str) -> bool {
        if self.cursor.as_ref().is_some_and(|c| c.id == id) {
            self.cursor = None;
        }
        self.cancel_upload(id) | self.outbox.remove(id).is_some()
    }

    /// A card shown before this session (kept by the app across a restart, still waiting): it can be answered again.
    /// The agent, which validates answers, closes it with `prompt_done` (expired when it no longer knows it, A-16).
    pub fn restore_card(&mut self, id: &str, options: Vec<PromptOption>) {
        self.cards.entry(id.to_string()).or_insert(Card { options, answered: false });
    }

    /// answer a card. Exactly one frame; never a chat message.
    pub fn answer_prompt(
        &mut self,
        prompt_id: &str,
        option_id: Option<&str>,
        text: Option<&str>,
    ) -> Result<(), Refusal> {
        if self.state != State::Ready {
            return Err(Refusal::NotConnected);
        }
        let Some(card) = self.cards.get_mut(prompt_id) else {
            return Err(Refusal::UnknownCard);
        };
        if card.answered {
            return Err(Refusal::AlreadyAnswered);
        }
        match option_id {
            Some(o) if !card.options.iter().any(|opt| opt.id == o) => {
                return Err(Refusal::NotAnOption(o.to_string())); // never invent an option
            }
            None if text.is_none_or(|t| t.trim().is_empty()) => {
                return Err(Refusal::NoAnswer);
            }
            _ => {}
        }
        card.answered = true;
        let frame = Up::Prompt {
            prompt_id: prompt_id.to_string(),
            option_id: option_id.map(str::to_string),
            text: text.map(str::to_string),
        };
        self.io.push_back(Io::Send(adapter::encode(&frame)));
        Ok(())
    }

    /// The next frame of the outbox, if any; marks items in flight once their last frame is out.
    pub(super) fn next_outbox_frame(&mut self) -> Option<Io> {
        if self.cursor.is_none() {
            let (id, q) = self.outbox.next_pending().map(|(id, q)| (id.to_string(), q.clone()))?;
            match self.encode_whole(&id, &q) {
                Ok(Some(frame)) => {
                    self.written(&id);
                    return Some(Io::Send(frame));
                }
                Ok(None) => {} // a file: the cursor is set
                Err(r) => {
                    self.outbox.remove(&id);
                    self.events.push_back(Event::Rejected {
                        cmd: q.item.cmd_name().into(),
                        code: r.code().into(),
                        reason: r.to_string(),
                        id: Some(id),
                    });
                    return self.next_outbox_frame();
                }
            }
        }
        let cur = self.cursor.clone()?;
        let range = cur.plan.range(cur.next_part);
        let io = match self.outbox.get(&cur.id).map(|q| &q.item) {
            Some(Outgoing::Media { meta, bytes }) => {
                let meta = UpMediaMeta { id: cur.id.clone(), ..meta.clone() };
                Io::Send(media::encode_media_frame(&meta, &bytes[range.clone()], cur.next_part, cur.plan.parts))
            }
            Some(Outgoing::MediaFile { meta, path, .. }) => {
                let meta = UpMediaMeta { id: cur.id.clone(), ..meta.clone() };
                Io::SendFile {
                    id: cur.id.clone(),
                    head: media::media_frame_head(&meta, cur.next_part, cur.plan.parts),
                    path: path.clone(),
                    offset: range.start as u64,
                    len: range.len() as u64,
                }
            }
            _ => {
                self.cursor = None;
                return None;
            }
        };
        self.events.push_back(Event::Progress {
            id: cur.id.clone(),
            direction: Direction::Up,
            done: range.end as u64,
            total: cur.plan.size,
        });
        if cur.next_part + 1 >= cur.plan.parts {
            self.cursor = None;
            self.written(&cur.id);
        } else if let Some(c) = &mut self.cursor {
            c.next_part += 1;
        }
        Some(io)
    }

    fn written(&mut self, id: &str) {
        self.outbox.mark_in_flight(id, self.ping_seq + 1);
        self.need_ping = true;
        self.events.push_back(Event::Sent { id: id.to_string() });
    }

    /// Encode a single-frame item; for media set up the cursor and return `Ok(None)`.
    fn encode_whole(&mut self, id: &str, q: &Queued) -> Result<Option<String>, Refusal> {
        self.check(&q.item)?;
        let from = self.cfg.user_id.clone();
        let frame = match &q.item {
            Outgoing::Text { text, reply_to, session } => match self.cfg.dialect {
                Dialect::Adapter => {
                    adapter::encode(&Up::Text { id: id.to_string(), text: text.clone(), reply_to: reply_to.clone() })
                }
                Dialect::V3 => v3::encode(&Envelope::text(
                    id,
                    &from,
                    session.as_deref().unwrap_or(&self.cfg.default_session),
                    reply_to.as_deref(),
                    q.created_unix,
                    text,
                )),
            },
            Outgoing::Audio { wav, text } => adapter::encode(&Up::Audio {
                id: id.to_string(),
                format: "wav".into(),
                data: base64::engine::general_purpose::STANDARD.encode(wav.as_slice()),
                text: text.clone(),
            }),
            Outgoing::Media { meta, bytes } => {
                let meta = UpMediaMeta { id: id.to_string(), ..meta.clone() };
                let plan = media::plan_upload(bytes.len() as u64, media::frame_overhead(&meta), &self.limits)?;
                self.cursor = Some(Cursor { id: id.to_string(), next_part: 0, plan });
                return Ok(None);
            }
            Outgoing::MediaFile { meta, size, .. } => {
                let meta = UpMediaMeta { id: id.to_string(), ..meta.clone() };
                let plan = media::plan_upload(*size, media::frame_overhead(&meta), &self.limits)?;
                self.cursor = Some(Cursor { id: id.to_string(), next_part: 0, plan });
                return Ok(None);
            }
            // never in the outbox: it waits in the upload queue until it becomes `V3Media`
            Outgoing::V3File { .. } => {
                return Err(Refusal::WrongDialect("a file goes through the gateway upload first"));
            }
            Outgoing::V3Media { session, caption, media } => v3::encode(&Envelope::media(
                id,
                &from,
                session.as_deref().unwrap_or(&self.cfg.default_session),
                q.created_unix,
                caption.as_deref(),
                media,
            )),
        };
        Ok(Some(frame))
    }
}
