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
//! v3 files go over HTTP first (G-9): the session says which and when ([`Io::Upload`], retried with G-10's backoff),
//! the caller carries the bytes and reports back.
//!
//! The parts: frames from the agent (`incoming`), what the user sends (`outgoing`), the HTTP uploads (`upload`) and
//! the timer table (`timers`); this file holds the types and the connection's lifecycle.

mod incoming;
mod outgoing;
mod timers;
mod upload;

pub use timers::Timer;
pub use upload::UploadFailure;

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::adapter::{self, Device, Up};
use crate::backoff::{BackoffPolicy, Jitter, backoff};
pub use crate::dialect::Dialect;
use crate::event::{DisconnectCode, Event, Features, PromptOption};
use crate::heartbeat::Heartbeat;
use crate::media::{MediaAssembler, MediaLimits, MediaMeta, UpMediaMeta, UploadPlan};
use crate::outbox::Outbox;
use crate::refusal::Refusal;
use crate::reply::{ReplyAssembler, StreamAssembler};
use crate::v3::MediaDescriptor;
use upload::Uploads;

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
    /// Our own per-file limit ([`crate::media::DEFAULT_MEDIA_CAP`] by default, a setting): the agent's `max_media_bytes` is
    /// clamped to it, and it sizes the fixed buffer for unfinished incoming files (A-3, A-19 decision).
    pub max_media_bytes: u64,
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
    /// v3: a file to upload over HTTP first (G-9 step 1): it comes out as [`Io::Upload`], and once
    /// [`Session::handle_upload_done`] has its descriptor it goes as [`Outgoing::V3Media`] under the same id.
    V3File {
        path: PathBuf,
        filename: String,
        mime: String,
        caption: Option<String>,
        session: Option<String>,
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
            Outgoing::Media { .. }
            | Outgoing::MediaFile { .. }
            | Outgoing::V3File { .. }
            | Outgoing::V3Media { .. } => "file",
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
    /// v3: upload `path` to the gateway (`POST /api/media/upload`, G-9) as `filename` of type `mime`; then call
    /// [`Session::handle_upload_done`] with the media descriptor, or [`Session::handle_upload_failed`]. One at a time.
    Upload { id: String, path: PathBuf, filename: String, mime: String },
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
    /// v3: files waiting for (or in) their HTTP upload.
    uploads: Uploads,
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
        let uploads = Uploads::new(Jitter::new(cfg.seed.rotate_left(17)));
        let cfg_cap = cfg.max_media_bytes;
        let mut s = Session {
            cfg,
            state: State::Idle { retry_at: Some(now) },
            failures: 0,
            jitter,
            heartbeat: None,
            outbox: Outbox::new(),
            uploads,
            cursor: None,
            ping_seq: 0,
            need_ping: false,
            replies: ReplyAssembler::new(),
            streams: StreamAssembler::new(),
            media_in: MediaAssembler::new(MediaLimits::default().clamped(cfg_cap)),
            limits: MediaLimits::default().clamped(cfg_cap),
            capabilities: None,
            features: Features::default(),
            cards: HashMap::new(),
            io: VecDeque::new(),
            events: VecDeque::new(),
            last_malformed_report: None,
            malformed: 0,
        };
        s.media_in.set_buffer_cap(cfg_cap);
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
    /// Bytes of unfinished incoming files held now, and the most ever held at once (A-19 decision: never above
    /// [`Session::media_buffer_cap`], whatever the agent announces).
    pub fn media_buffered_bytes(&self) -> (u64, u64) {
        (self.media_in.buffered_bytes(), self.media_in.peak_buffered_bytes())
    }
    pub fn media_buffer_cap(&self) -> u64 {
        self.media_in.buffer_cap()
    }
    pub fn capabilities(&self) -> Option<&Map<String, Value>> {
        self.capabilities.as_ref()
    }
    /// What the agent accepts; everything on until the first `ready`.
    pub fn features(&self) -> Features {
        self.features
    }
    /// Items queued or in flight (v3 files waiting for their upload included).
    pub fn queued(&self) -> usize {
        self.outbox.len() + self.uploads.len()
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
        self.uploads.next(now)
    }

    // ---------------------------------------------------------------- inputs: connection

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

    // ---------------------------------------------------------------- internals

    fn become_ready(&mut self, session: String, avatar_url: Option<String>, capabilities: Map<String, Value>) {
        self.state = State::Ready;
        self.failures = 0; // reset after a ready
        self.uploads.handle_ready(); // a failed upload goes again at once
        self.limits = MediaLimits::from_capabilities(&capabilities).clamped(self.cfg.max_media_bytes);
        self.media_in.set_limits(self.limits);
        self.features = match self.cfg.dialect {
            Dialect::Adapter => {
                Features { max_file_bytes: Some(self.limits.max_media_bytes), ..Features::adapter(&capabilities) }
            }
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
}
