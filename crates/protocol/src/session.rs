//! The connection session: ties the wire model and the small machines together, for both dialects.
//!
//! Sans-IO (quinn-proto's shape): the caller owns the socket and the clock. Inputs are `handle_*(…, now)`, outputs
//! are [`Session::poll_io`] (what to do on the network), [`Session::poll_event`] (what to tell the user) and
//! [`Session::poll_timeout`] (when to call [`Session::handle_timeout`]).
//!
//! Adapter (A-2…A-8): connect → `hello` first → `ready` (capabilities, A-3) → traffic; close 1008 = access denied,
//! no retry; other drops reconnect with backoff. v3 (G-3, G-8, G-10): the upgrade itself is the login
//! (token in the URL, the caller's business); 401/403 = access denied; an app-level `ping` every 30 s.
//! Both: the outbox — frames written, then a WebSocket Ping whose Pong confirms them; in-flight items go back
//! to pending on a drop and are resent first, in order, with the same ids, after the next `ready`.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Map, Value};

use crate::adapter::{self, Device, Down, Up};
use crate::backoff::{BackoffPolicy, Jitter, backoff};
pub use crate::dialect::Dialect;
use crate::event::{Direction, DisconnectCode, Event, Features, PromptOption};
use crate::heartbeat::{Heartbeat, HeartbeatAction};
use crate::media::{self, MediaAssembler, MediaError, MediaLimits, MediaMeta, MediaOutput, UpMediaMeta, UploadPlan};
use crate::outbox::Outbox;
use crate::refusal::{Feature, Refusal};
use crate::reply::{ReplyAssembler, ReplyUpdate, StreamAssembler};
use crate::v3::{self, Body, Envelope, MediaDescriptor};

/// close code for access denied.
pub const CLOSE_POLICY: u16 = 1008;
/// How long to wait for `ready` after the socket opened before giving up on this attempt.
pub const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// one audio clip at most.
pub const MAX_AUDIO_BYTES: usize = 8 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct Config {
    pub dialect: Dialect,
    /// Adapter: sent in `hello` only. v3: unused here (the caller puts it in the URL).
    pub token: String,
    /// Adapter: the device block of `hello`.
    pub device: Device,
    /// v3: our `from` (G-4).
    pub user_id: String,
    /// v3: the conversation used when a command names none (G-11).
    pub default_session: String,
    /// Seed of the jitter source.
    pub seed: u64,
}

/// Something the user wants sent; queued in the outbox under an id.
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    Text {
        text: String,
        reply_to: Option<String>,
        session: Option<String>,
    },
    /// Adapter: a WAV clip.
    Audio {
        wav: Arc<Vec<u8>>,
        text: Option<String>,
    },
    /// Adapter: a file. `meta.id` is ignored: the outbox id is used.
    Media {
        meta: UpMediaMeta,
        bytes: Arc<Vec<u8>>,
    },
    /// Adapter: a file on disk of `size` bytes, sent like [`Outgoing::Media`] but never held in memory: its
    /// frames come out as [`Io::SendFile`] and the caller reads and encodes the bytes while writing them.
    /// `meta.id` is ignored: the outbox id is used.
    MediaFile {
        meta: UpMediaMeta,
        path: PathBuf,
        size: u64,
    },
    /// v3: a file already uploaded over HTTP (G-9 step 2).
    V3Media {
        session: Option<String>,
        caption: Option<String>,
        media: MediaDescriptor,
    },
}

impl Outgoing {
    pub fn cmd_name(&self) -> &'static str {
        match self {
            Outgoing::Text { .. } => "text",
            Outgoing::Audio { .. } => "audio",
            Outgoing::Media { .. } | Outgoing::MediaFile { .. } | Outgoing::V3Media { .. } => "file",
        }
    }
}

#[derive(Debug, Clone)]
struct Queued {
    item: Outgoing,
    created_unix: i64,
}

/// Where a file to download is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DownloadSource {
    /// the frame's `url`.
    Url(String),
    /// G-9: `GET /media/{id}` on the gateway.
    V3Media(String),
}

/// What the caller must do on the network or disk.
#[derive(Debug, Clone, PartialEq)]
pub enum Io {
    /// Open the socket; then call `handle_connected` or `handle_connect_failed`.
    Connect,
    /// Write one text frame.
    Send(String),
    /// Write one uplink `media` frame of an [`Outgoing::MediaFile`]: `head`, then the base64 of the
    /// `len` bytes of `path` from `offset`, then [`media::MEDIA_FRAME_TAIL`] — one text message, which the caller
    /// may write as several WebSocket fragments. If the file cannot be read, call [`Session::fail_item`].
    SendFile { id: String, head: String, path: PathBuf, offset: u64, len: u64 },
    /// Write a WebSocket Ping with this payload; its Pong goes to `handle_pong`.
    Ping(Vec<u8>),
    /// Close the socket (no `handle_closed` needed afterwards).
    Close { code: u16, reason: String },
    /// A received file is whole: save it (inside the media folder, under `meta.filename`), then emit `media`.
    Save { meta: MediaMeta, bytes: Vec<u8>, session: Option<String> },
    /// A received file must be downloaded (at most `max_bytes`: the adapter's per-file limit, `u64::MAX` on v3, which
    /// has none; the caller applies its own download cap and the free disk space too), then saved and announced
    /// like `Save`.
    Download { meta: MediaMeta, source: DownloadSource, max_bytes: u64, session: Option<String> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not connected; connect at `retry_at`.
    Idle {
        retry_at: Option<Instant>,
    },
    Connecting,
    /// Adapter: socket open, `hello` sent, waiting for `ready`.
    AwaitReady {
        deadline: Instant,
    },
    Ready,
    /// A-4 / G-3: stopped until settings change.
    Denied,
}

#[derive(Debug, Clone)]
struct Card {
    options: Vec<PromptOption>,
    answered: bool,
}

/// The in-progress upload (one frame per `poll_io`).
#[derive(Debug, Clone)]
struct Cursor {
    id: String,
    next_part: u32,
    plan: UploadPlan,
}

pub struct Session {
    cfg: Config,
    state: State,
    failures: u32,
    jitter: Jitter,
    heartbeat: Option<Heartbeat>,
    outbox: Outbox<Queued>,
    cursor: Option<Cursor>,
    ping_seq: u64,
    need_ping: bool,
    replies: ReplyAssembler,
    streams: StreamAssembler,
    media_in: MediaAssembler,
    limits: MediaLimits,
    capabilities: Option<Map<String, Value>>,
    features: Features,
    cards: HashMap<String, Card>,
    io: VecDeque<Io>,
    events: VecDeque<Event>,
    last_malformed_report: Option<Instant>,
    malformed: u64,
}

impl Session {
    /// A new session; it asks to connect at once.
    pub fn new(cfg: Config, now: Instant) -> Session {
        let jitter = Jitter::new(cfg.seed);
        let mut s = Session {
            cfg,
            state: State::Idle { retry_at: Some(now) },
            failures: 0,
            jitter,
            heartbeat: None,
            outbox: Outbox::new(),
            cursor: None,
            ping_seq: 0,
            need_ping: false,
            replies: ReplyAssembler::new(),
            streams: StreamAssembler::new(),
            media_in: MediaAssembler::new(MediaLimits::default()),
            limits: MediaLimits::default(),
            capabilities: None,
            features: Features::default(),
            cards: HashMap::new(),
            io: VecDeque::new(),
            events: VecDeque::new(),
            last_malformed_report: None,
            malformed: 0,
        };
        s.handle_timeout(now);
        s
    }

    pub fn dialect(&self) -> Dialect {
        self.cfg.dialect
    }
    pub fn is_ready(&self) -> bool {
        self.state == State::Ready
    }
    pub fn is_denied(&self) -> bool {
        self.state == State::Denied
    }
    pub fn limits(&self) -> MediaLimits {
        self.limits
    }
    pub fn capabilities(&self) -> Option<&Map<String, Value>> {
        self.capabilities.as_ref()
    }
    /// What the agent accepts; everything on until the first `ready`.
    pub fn features(&self) -> Features {
        self.features
    }
    /// Items queued or in flight.
    pub fn queued(&self) -> usize {
        self.outbox.len()
    }
    /// Frames that could not be decoded since the start (they were dropped).
    pub fn malformed_frames(&self) -> u64 {
        self.malformed
    }
    pub fn set_default_session(&mut self, session: impl Into<String>) {
        self.cfg.default_session = session.into();
    }

    // ---------------------------------------------------------------- outputs

    /// How many events [`poll_event`](Self::poll_event) has ready (to size a batch once).
    pub fn events_waiting(&self) -> usize {
        self.events.len()
    }

    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The next thing to do on the network. Uploads are produced one frame per call, so memory stays at one frame.
    pub fn poll_io(&mut self, now: Instant) -> Option<Io> {
        if let Some(io) = self.io.pop_front() {
            return Some(io);
        }
        if self.state != State::Ready {
            return None;
        }
        if let Some(io) = self.next_outbox_frame() {
            return Some(io);
        }
        if self.need_ping {
            self.need_ping = false;
            return Some(self.ping_now(now));
        }
        None
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut t = match self.state {
            State::Idle { retry_at } => retry_at,
            State::AwaitReady { deadline } => Some(deadline),
            _ => None,
        };
        if let Some(hb) = &self.heartbeat {
            t = Some(t.map_or(hb.poll_timeout(), |x| x.min(hb.poll_timeout())));
        }
        if let Some(m) = self.media_in.poll_timeout() {
            t = Some(t.map_or(m, |x| x.min(m)));
        }
        t
    }

    // ---------------------------------------------------------------- inputs: time and connection

    pub fn handle_timeout(&mut self, now: Instant) {
        match self.state {
            State::Idle { retry_at: Some(at) } if now >= at => {
                self.state = State::Connecting;
                self.events.push_back(Event::Connecting { attempt: self.failures + 1 });
                self.io.push_back(Io::Connect);
            }
            State::AwaitReady { deadline } if now >= deadline => {
                self.drop_connection(DisconnectCode::NoReady, "no ready from the agent in time", now, true);
                return;
            }
            _ => {}
        }
        let action = self.heartbeat.as_mut().and_then(|hb| hb.handle_timeout(now));
        match action {
            Some(HeartbeatAction::Ping) => match self.cfg.dialect {
                Dialect::Adapter => {
                    let p = self.ping_now(now);
                    self.io.push_back(p);
                }
                Dialect::V3 => self.io.push_back(Io::Send(v3::encode(&Envelope::ping()))),
            },
            Some(HeartbeatAction::Dead) => {
                self.drop_connection(
                    DisconnectCode::Dead,
                    "no frame from the agent for 90 s (connection dead)",
                    now,
                    true,
                );
            }
            None => {}
        }
        for id in self.media_in.handle_timeout(now) {
            self.events.push_back(Event::Error {
                code: "media_incomplete".into(),
                text: "a file from the agent stopped arriving and was discarded".into(),
                id: Some(id),
            });
        }
    }

    /// The socket is open.
    pub fn handle_connected(&mut self, now: Instant) {
        if self.state != State::Connecting {
            return;
        }
        // G-8: v3's heartbeat is the app-level `ping`, every 30 s whatever WebSocket Pings confirm deliveries
        self.heartbeat = Some(match self.cfg.dialect {
            Dialect::Adapter => Heartbeat::new(now),
            Dialect::V3 => Heartbeat::app_level(now),
        });
        match self.cfg.dialect {
            Dialect::Adapter => {
                // hello is the first frame, the token only here.
                let hello = Up::Hello { token: self.cfg.token.clone(), device: self.cfg.device.clone() };
                self.io.push_back(Io::Send(adapter::encode(&hello)));
                self.state = State::AwaitReady { deadline: now + READY_TIMEOUT };
            }
            Dialect::V3 => {
                // G-3: the accepted upgrade is the login; there is no ready frame.
                self.become_ready(self.cfg.default_session.clone(), None, Map::new());
            }
        }
    }

    /// Opening the socket failed. `http_status` is the refused upgrade's status, if any (G-3). Without a finer
    /// cause the failure counts as [`DisconnectCode::Http`] (with a status) or [`DisconnectCode::Unreachable`].
    pub fn handle_connect_failed(&mut self, http_status: Option<u16>, reason: &str, now: Instant) {
        let code = if http_status.is_some() { DisconnectCode::Http } else { DisconnectCode::Unreachable };
        self.handle_connect_error(http_status, code, reason, now);
    }

    /// [`handle_connect_failed`](Self::handle_connect_failed) with the cause the caller found (refused, DNS, TLS…).
    pub fn handle_connect_error(&mut self, http_status: Option<u16>, code: DisconnectCode, reason: &str, now: Instant) {
        if self.state != State::Connecting {
            return;
        }
        if matches!(http_status, Some(401) | Some(403)) {
            self.deny(format!("the server refused the token (HTTP {})", http_status.unwrap_or(0)));
            return;
        }
        self.state = State::Idle { retry_at: None };
        self.schedule_retry(code, reason.to_string(), now);
    }

    /// The socket closed (by the peer or the network). `code` is the close frame's code, if any.
    pub fn handle_closed(&mut self, code: Option<u16>, reason: &str, now: Instant) {
        if code == Some(CLOSE_POLICY) {
            self.reset_connection();
            let why = if reason.is_empty() { "access denied by the agent (close 1008)" } else { reason };
            self.deny(why.to_string());
            return;
        }
        let why = match (code, reason.is_empty()) {
            (Some(c), true) => format!("connection closed ({c})"),
            (_, false) => reason.to_string(),
            (None, true) => "connection lost".to_string(),
        };
        let kind = if code.is_some() { DisconnectCode::Closed } else { DisconnectCode::Lost };
        self.drop_connection(kind, &why, now, false);
    }

    /// The socket failed (a read or write error, a protocol violation): dropped, retried with backoff.
    pub fn handle_socket_error(&mut self, code: DisconnectCode, reason: &str, now: Instant) {
        self.drop_connection(code, reason, now, false);
    }

    /// The network came back or the machine woke up, or the user asked: try now (not after access denied).
    pub fn reconnect_now(&mut self, now: Instant) {
        // access denied stays denied; only new settings (a new session) try again.
        if let State::Idle { .. } = self.state {
            self.state = State::Idle { retry_at: Some(now) };
            self.handle_timeout(now);
        }
    }

    /// A WebSocket Pong arrived.
    pub fn handle_pong(&mut self, payload: &[u8], now: Instant) {
        if let Some(hb) = &mut self.heartbeat {
            hb.handle_rx(now);
        }
        let Ok(bytes) = <[u8; 8]>::try_from(payload) else {
            return;
        };
        let seq = u64::from_be_bytes(bytes);
        if seq > self.ping_seq {
            return; // not one of ours
        }
        for id in self.outbox.handle_pong(seq) {
            self.events.push_back(Event::Delivered { id });
        }
    }

    /// A WebSocket Ping (answered by the WebSocket layer) or any other sign of life.
    pub fn handle_activity(&mut self, now: Instant) {
        if let Some(hb) = &mut self.heartbeat {
            hb.handle_rx(now);
        }
    }

    // ---------------------------------------------------------------- inputs: frames

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

    fn push_reply(&mut self, u: ReplyUpdate) {
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

    // ---------------------------------------------------------------- commands

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
            (Dialect::V3, Outgoing::V3Media { .. }) => Ok(()),
            (Dialect::Adapter, Outgoing::V3Media { .. }) => {
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
        self.outbox.push(id, Queued { item, created_unix });
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

    /// Cancel a queued item or an upload in progress. Returns whether something was cancelled.
    pub fn cancel(&mut self, id: &str) -> bool {
        if self.cursor.as_ref().is_some_and(|c| c.id == id) {
            self.cursor = None;
        }
        self.outbox.remove(id).is_some()
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

    // ---------------------------------------------------------------- internals

    fn become_ready(&mut self, session: String, avatar_url: Option<String>, capabilities: Map<String, Value>) {
        self.state = State::Ready;
        self.failures = 0; // reset after a ready
        self.limits = MediaLimits::from_capabilities(&capabilities);
        self.media_in.set_limits(self.limits);
        self.features = match self.cfg.dialect {
            Dialect::Adapter => Features::adapter(&capabilities),
            Dialect::V3 => Features::v3(),
        };
        self.capabilities = Some(capabilities.clone());
        self.events.push_back(Event::Ready { session, avatar_url, capabilities, features: self.features });
        // Items queued before these capabilities were known may no longer be allowed.
        let refused: Vec<(String, Refusal, &'static str)> = self
            .outbox
            .ids()
            .into_iter()
            .filter_map(|(id, _)| {
                let q = self.outbox_item(&id)?;
                self.check(&q.item).err().map(|why| (id, why, q.item.cmd_name()))
            })
            .collect();
        for (id, r, cmd) in refused {
            self.outbox.remove(&id);
            self.events.push_back(Event::Rejected {
                cmd: cmd.into(),
                code: r.code().into(),
                reason: r.to_string(),
                id: Some(id),
            });
        }
    }

    fn outbox_item(&self, id: &str) -> Option<Queued> {
        self.outbox.get(id).cloned()
    }

    fn deny(&mut self, reason: String) {
        self.state = State::Denied;
        self.heartbeat = None;
        self.events.push_back(Event::AccessDenied { reason });
    }

    fn reset_connection(&mut self) {
        self.heartbeat = None;
        self.cursor = None;
        self.need_ping = false;
        self.outbox.handle_disconnect();
        self.media_in.handle_disconnect();
        self.io.retain(|io| matches!(io, Io::Save { .. } | Io::Download { .. }));
        // A card answer may have been dropped with the queue: let the user answer again (the server, which validates
        // answers, closes the card with `prompt_done` if the first one did arrive).
        for card in self.cards.values_mut() {
            card.answered = false;
        }
        for u in self.streams.handle_disconnect() {
            self.push_reply(u);
        }
    }

    /// Drop the connection (if any) and schedule the next attempt.
    fn drop_connection(&mut self, code: DisconnectCode, reason: &str, now: Instant, we_close: bool) {
        if matches!(self.state, State::Idle { .. } | State::Denied) {
            return;
        }
        self.reset_connection();
        if we_close {
            self.io.push_back(Io::Close { code: 1000, reason: reason.to_string() });
        }
        self.state = State::Idle { retry_at: None };
        self.schedule_retry(code, reason.to_string(), now);
    }

    fn schedule_retry(&mut self, code: DisconnectCode, reason: String, now: Instant) {
        let policy = match self.cfg.dialect {
            Dialect::Adapter => BackoffPolicy::Adapter,
            Dialect::V3 => BackoffPolicy::V3,
        };
        let delay = backoff(policy, self.failures, self.jitter.next());
        self.failures = self.failures.saturating_add(1);
        self.state = State::Idle { retry_at: Some(now + delay) };
        self.events.push_back(Event::Disconnected { code, reason, retry_in_ms: Some(delay.as_millis() as u64) });
    }

    fn ping_now(&mut self, now: Instant) -> Io {
        self.ping_seq += 1;
        if let Some(hb) = &mut self.heartbeat {
            hb.handle_ping_sent(now);
        }
        Io::Ping(self.ping_seq.to_be_bytes().to_vec())
    }

    /// The next frame of the outbox, if any; marks items in flight once their last frame is out.
    fn next_outbox_frame(&mut self) -> Option<Io> {
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
