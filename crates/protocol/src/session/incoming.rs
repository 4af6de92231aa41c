//! Frames from the agent: decoded (tolerantly, A-7, A-22, G-2) and turned into events and io.

use std::time::{Duration, Instant};

use super::{Card, DownloadSource, Io, Session, State};
use crate::adapter::{self, Down};
use crate::dialect::Dialect;
use crate::event::Event;
use crate::media::{self, MediaError, MediaMeta, MediaOutput};
use crate::reply::ReplyUpdate;
use crate::v3::{self, Body, Envelope};

impl Session {
    pub fn handle_text(&mut self, text: &str, now: Instant) {
        // Frames read from a socket we already gave up on are stale: drop them.
        if !matches!(self.state, State::AwaitReady { .. } | State::Ready) {
            return;
        }
        self.handle_activity(now);
        match self.cfg.dialect {
            Dialect::Adapter => {
                // the frame that comes by the thousand, read in place (its strings copied once, where they are kept)
                if let Some(m) = adapter::decode_message_ref(text) {
                    return self.on_message(m);
                }
                match adapter::decode_down(text) {
                    Ok(frame) => self.on_adapter(frame, now),
                    Err(e) => self.on_malformed(e.to_string(), now),
                }
            }
            Dialect::V3 => match v3::decode(text).and_then(|env| env.body().map(|b| (env, b))) {
                Ok((env, body)) => self.on_v3(env, body, now),
                Err(e) => self.on_malformed(e.to_string(), now),
            },
        }
    }

    fn on_malformed(&mut self, detail: String, now: Instant) {
        self.malformed += 1;
        // A-22 / G-2: dropped, connection kept. Reported at most once a second so a flood cannot flood the user.
        if self.last_malformed_report.is_none_or(|t| now.saturating_duration_since(t) >= Duration::from_secs(1)) {
            self.last_malformed_report = Some(now);
            self.events.push_back(Event::Error { code: "malformed_frame".into(), text: detail, id: None });
        }
    }

    fn on_message(&mut self, m: adapter::MessageRef<'_>) {
        match self.replies.handle(m) {
            Ok(u) => self.push_reply(u),
            Err(e) => self.events.push_back(Event::Error { code: "bad_reply".into(), text: e.to_string(), id: None }),
        }
    }

    fn on_adapter(&mut self, frame: Down, now: Instant) {
        match frame {
            Down::Ready { session, avatar_url, capabilities } => {
                // Only on a live connection: a stale frame read after a close must not revive the session.
                if !matches!(self.state, State::AwaitReady { .. } | State::Ready) {
                    return;
                }
                let avatar_url = avatar_url.filter(|u| !u.trim().is_empty());
                self.become_ready(session, avatar_url, capabilities.unwrap_or_default());
            }
            Down::Message(m) => self.on_message(m.view()),
            Down::Prompt(p) => {
                self.cards.insert(p.id.clone(), Card { options: p.options.clone(), answered: false });
                self.events.push_back(Event::Prompt {
                    id: p.id,
                    kind: p.kind,
                    text: p.text,
                    options: p.options,
                    command: p.command,
                    description: p.description,
                    timeout_seconds: p.timeout_seconds,
                });
            }
            Down::PromptDone(d) => {
                let Some(id) = d.card_id().map(str::to_string) else {
                    return;
                };
                self.cards.remove(&id);
                self.events.push_back(Event::PromptDone {
                    prompt_id: id,
                    option_id: d.option_id,
                    expired: d.expired == Some(true),
                });
            }
            Down::Media(m) => {
                let id = m.id.clone();
                match self.media_in.handle_media(m, now) {
                    Ok(Some(out)) => self.push_media(out, None),
                    Ok(None) => {}
                    Err(e) => self.media_error(e, Some(id)),
                }
                for e in self.media_in.take_dropped() {
                    let id = match &e {
                        MediaError::BufferFull { id, .. } => Some(id.clone()),
                        _ => None,
                    };
                    self.media_error(e, id);
                }
            }
            Down::Typing { stop } => {
                // `typing{stop:true}` switches the indicator off at once, like a final: a reply still open ends
                // here with the text it has.
                if stop == Some(true) {
                    for u in self.replies.finish_open() {
                        self.push_reply(u);
                    }
                }
                self.events.push_back(Event::Typing { on: stop != Some(true) })
            }
            Down::Avatar { state } => self.events.push_back(Event::Avatar { state }),
            Down::Error { code, text, id } => {
                let text = text.unwrap_or_else(|| code.clone());
                // §10: `auth_failed` (with or without close 1008) is access denied: retrying is pointless.
                let denied = code == "auth_failed";
                self.events.push_back(Event::Error { text: text.clone(), code, id });
                if denied {
                    self.reset_connection();
                    self.io.push_back(Io::Close { code: 1000, reason: "access denied".into() });
                    self.deny(text);
                }
            }
            Down::Unknown => {}
        }
    }

    fn on_v3(&mut self, env: Envelope, body: Body, _now: Instant) {
        let session = env.session.clone();
        let sess = session.clone().unwrap_or_default();
        match body {
            Body::Ping => self.io.push_back(Io::Send(v3::encode(&Envelope::pong()))),
            Body::Pong => {}
            Body::Text { text } => self.push_reply(ReplyUpdate {
                id: env.id.unwrap_or_default().into(),
                text: text.into(),
                final_: true,
                reply_to: env.reply_to,
                session,
            }),
            Body::Media { kind, text, media } => {
                let id = env.id.unwrap_or_default();
                let meta = MediaMeta {
                    id,
                    kind: kind.as_str().to_string(),
                    filename: media::safe_filename(media.name.as_deref().unwrap_or(""), Some(&media.mime)),
                    mime: Some(media.mime.clone()),
                    caption: text,
                    declared_size: Some(media.size),
                };
                self.io.push_back(Io::Download {
                    meta,
                    source: DownloadSource::V3Media(media.id),
                    // G-9 decision: no protocol limit on v3 (the adapter's 8 MiB does not apply); the caller's
                    // download cap and the free disk space do
                    max_bytes: u64::MAX,
                    session,
                });
            }
            Body::StreamStart => {
                let id = env.id.unwrap_or_default();
                for u in self.streams.handle_start(&sess, &id, env.reply_to) {
                    self.push_reply(u);
                }
            }
            Body::Stream { text } => match self.streams.handle_stream(&sess, &text) {
                Ok(Some(u)) => self.push_reply(u),
                Ok(None) => {}
                Err(e) => {
                    self.events.push_back(Event::Error { code: "bad_reply".into(), text: e.to_string(), id: None })
                }
            },
            Body::StreamEnd => {
                if let Some(u) = self.streams.handle_end(&sess) {
                    self.push_reply(u);
                }
            }
            // G-7: with reply_to it belongs to that message.
            Body::Error { code, text } => {
                self.events.push_back(Event::Error { code: code.as_str().to_string(), text, id: env.reply_to })
            }
            Body::Unknown(_) => {} // G-2
        }
    }

    pub(super) fn push_reply(&mut self, u: ReplyUpdate) {
        // Each update carries the whole text so far, so of several not yet polled updates of one reply only the newest
        // matters: replace the previous one. Without this, n small chunks read in one burst cost n²/2 bytes of events
        // (a hostile agent's 400 chunks of 16 KiB queued ~500 MiB: crates/client/tests/hostile.rs).
        if let Some(Event::Message { id, final_: false, .. }) = self.events.back()
            && *id == u.id
        {
            self.events.pop_back();
        }
        self.events.push_back(Event::Message {
            id: u.id,
            text: u.text,
            final_: u.final_,
            reply_to: u.reply_to,
            session: u.session,
        });
    }

    fn push_media(&mut self, out: MediaOutput, session: Option<String>) {
        match out {
            MediaOutput::Complete { meta, bytes } => self.io.push_back(Io::Save { meta, bytes, session }),
            MediaOutput::Download { meta, url, max_bytes } => {
                self.io.push_back(Io::Download { meta, source: DownloadSource::Url(url), max_bytes, session })
            }
        }
    }

    fn media_error(&mut self, e: MediaError, id: Option<String>) {
        self.events.push_back(Event::Error { code: e.code().into(), text: e.to_string(), id });
    }
}
