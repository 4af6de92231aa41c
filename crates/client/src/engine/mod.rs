//! The async engine: one tokio task running `select!` over the socket, the command channel, transfer results and
//! the session's next deadline (rumqttc's `EventLoop` shape). All protocol decisions are the sans-IO
//! [`Session`]'s; the engine only moves bytes, files and time.
//!
//! The parts: the loop and the session's io (this file), the socket (`socket`), commands and the outbox
//! (`commands`), HTTP transfers (`transfers`) and the event batches handed to the consumer (`events`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::{FutureExt as _, StreamExt as _};
use hermes_protocol::adapter::Device;
use hermes_protocol::media::MediaMeta;
use hermes_protocol::session::{Config, Io};
use hermes_protocol::v3::MediaDescriptor;
use hermes_protocol::{Command, Dialect, DisconnectCode, Event, Refusal, Session};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, frame::coding::CloseCode};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use tracing::{debug, info, warn};
use url::Url;

use crate::files;
use crate::http::{Http, HttpError};
use crate::persist::{Persist, PersistError};
use crate::policy::{self, UrlError};
use events::{MAX_BATCH, Spare};
use socket::dial;
use transfers::media_event;

mod commands;
mod events;
mod quota;
mod socket;
mod transfers;

pub use events::Events;

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;
type Connecting = Pin<Box<dyn Future<Output = Result<Ws, DialError>> + Send>>;

/// Why opening the socket failed: the refused upgrade's HTTP status (if any), the cause in a word, the detail.
type DialError = (Option<u16>, DisconnectCode, String);

/// A secret that never prints.
#[derive(Clone, Default)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Secret {
        Secret(s.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(REDACTED)")
    }
}

#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Adapter: `ws(s)://…/ws`. v3: the gateway's `…/ws/app` (the token is appended, G-3).
    pub url: String,
    pub dialect: Dialect,
    pub token: Secret,
    /// Adapter `hello.device`.
    pub device: Device,
    /// v3 `from`; when absent, the JWT's `sub` (G-4).
    pub user_id: Option<String>,
    /// v3 conversation used when a command names none.
    pub default_session: String,
    /// allow `ws://` to a public address.
    pub allow_insecure_ws: bool,
    /// Received files go here (and nowhere else).
    pub media_dir: PathBuf,
    /// Copies of queued outgoing files.
    pub outbox_dir: PathBuf,
    pub connect_timeout: Duration,
    /// Seed for reconnect jitter.
    pub seed: u64,
    /// A received file larger than this is not downloaded (G-9 decision: a setting, 2 GiB by default); the adapter's
    /// per-file limit applies to its files as well.
    pub max_download_bytes: u64,
    /// A download stops before the disk holding `media_dir` has less than this free (64 MiB by default).
    pub keep_free_bytes: u64,
    /// Our per-file limit for adapter media both ways; the agent's `max_media_bytes` is clamped to it.
    pub max_media_bytes: u64,
    /// The media folder holds at most this much (2 GiB by default): a received file that would go over is refused
    /// with `media_quota_full`, downloads included.
    pub media_quota_bytes: u64,
}

impl EngineConfig {
    pub fn new(
        url: impl Into<String>,
        dialect: Dialect,
        token: Secret,
        device_id: impl Into<String>,
        data_dir: &Path,
    ) -> Self {
        EngineConfig {
            url: url.into(),
            dialect,
            token,
            device: Device {
                id: device_id.into(),
                name: Some(host_name()),
                platform: Some(std::env::consts::OS.to_string()), // linux | macos | windows
            },
            user_id: None,
            default_session: uuid::Uuid::new_v4().to_string(),
            allow_insecure_ws: false,
            media_dir: data_dir.join("media"),
            outbox_dir: data_dir.join("outbox"),
            connect_timeout: Duration::from_secs(15),
            seed: rand_seed(),
            max_download_bytes: crate::http::DEFAULT_MAX_DOWNLOAD_BYTES,
            keep_free_bytes: crate::http::DEFAULT_KEEP_FREE_BYTES,
            max_media_bytes: hermes_protocol::media::DEFAULT_MEDIA_CAP,
            media_quota_bytes: crate::http::DEFAULT_MEDIA_QUOTA_BYTES,
        }
    }
}

fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok().map(|s| s.trim().to_string()))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "desktop".into())
}

fn rand_seed() -> u64 {
    let u = uuid::Uuid::new_v4();
    u.as_u64_pair().0
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Url(#[from] UrlError),
    #[error("the outbox could not be read: {0}")]
    Persist(#[from] PersistError),
}

/// What the engine answers to a command: the local id it queued (text, file, audio) or why it refused.
pub type Reply = Result<Option<String>, Refusal>;

enum Request {
    Command(Command, Option<oneshot::Sender<Reply>>),
}

/// A handle to a running engine. Dropping it stops the engine.
pub struct Handle {
    tx: mpsc::Sender<Request>,
    task: tokio::task::JoinHandle<()>,
    gauge: Arc<MediaGauge>,
}

/// The session's own accounting of unfinished incoming files (A-19 decision), as the engine last saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaBuffer {
    /// Bytes held now.
    pub held: u64,
    /// The most held at once since the engine started.
    pub peak: u64,
    /// The fixed cap (from our own per-file limit, never the agent's number).
    pub cap: u64,
}

#[derive(Debug, Default)]
struct MediaGauge {
    held: AtomicU64,
    peak: AtomicU64,
    cap: AtomicU64,
}

impl Handle {
    /// Send a command and wait for the engine to accept (queued, id) or refuse it.
    pub async fn command(&self, cmd: Command) -> Reply {
        let (tx, rx) = oneshot::channel();
        self.tx.send(Request::Command(cmd, Some(tx))).await.map_err(|_| Refusal::EngineStopped)?;
        rx.await.map_err(|_| Refusal::EngineStopped)?
    }

    /// Send a command without waiting for the answer (it still comes as events). The only error is
    /// [`Refusal::EngineStopped`].
    pub async fn send(&self, cmd: Command) -> Result<(), Refusal> {
        self.tx.send(Request::Command(cmd, None)).await.map_err(|_| Refusal::EngineStopped)
    }

    /// What the buffer for unfinished incoming files holds (diagnostics and tests).
    pub fn media_buffer(&self) -> MediaBuffer {
        let g = &self.gauge;
        MediaBuffer {
            held: g.held.load(Ordering::Relaxed),
            peak: g.peak.load(Ordering::Relaxed),
            cap: g.cap.load(Ordering::Relaxed),
        }
    }

    /// Ask the engine to quit and wait for it.
    pub async fn shutdown(self) {
        let _ = self.tx.send(Request::Command(Command::Quit, None)).await;
        let _ = self.task.await;
    }
}

enum Internal {
    Event(Event),
    Downloaded { meta: MediaMeta, path: PathBuf, size: u64, session: Option<String> },
    DownloadFailed { id: String, caption: Option<String>, session: Option<String>, error: HttpError },
    Uploaded { id: String, media: MediaDescriptor },
    UploadFailed { id: String, error: HttpError },
}

/// Start an engine. Events arrive on the returned receiver; the engine stops when the handle is dropped or `quit`.
pub fn spawn(cfg: EngineConfig, persist: Box<dyn Persist>) -> Result<(Handle, Events), StartError> {
    let url = policy::check_url(&cfg.url, cfg.allow_insecure_ws, cfg.dialect == Dialect::Adapter)?;
    let (tx, rx) = mpsc::channel(256);
    let (ev_tx, ev_rx) = mpsc::channel(64);
    let (in_tx, in_rx) = mpsc::unbounded_channel();
    let spare = Spare::default();
    let user_id = cfg
        .user_id
        .clone()
        .or_else(|| hermes_protocol::v3::jwt_subject(cfg.token.expose()))
        .unwrap_or_else(|| cfg.device.id.clone());
    let session = Session::new(
        Config {
            dialect: cfg.dialect,
            token: cfg.token.expose().to_string(),
            device: cfg.device.clone(),
            user_id,
            default_session: cfg.default_session.clone(),
            seed: cfg.seed,
            max_media_bytes: cfg.max_media_bytes,
        },
        Instant::now().into_std(),
    );
    let gauge = Arc::new(MediaGauge::default());
    gauge.cap.store(session.media_buffer_cap(), Ordering::Relaxed);
    let engine = Engine {
        gauge: gauge.clone(),
        url,
        cfg,
        session,
        persist,
        http: Http::new(),
        events: ev_tx,
        batch: Vec::new(),
        spare: spare.clone(),
        internal: in_tx,
        transfers: HashMap::new(),
        quit: false,
    };
    let task = tokio::spawn(engine.run(rx, in_rx));
    Ok((Handle { tx, task, gauge }, Events::new(ev_rx, spare)))
}

struct Engine {
    gauge: Arc<MediaGauge>,
    url: Url,
    cfg: EngineConfig,
    session: Session,
    persist: Box<dyn Persist>,
    http: Http,
    events: mpsc::Sender<Vec<Event>>,
    /// Events not yet handed to the consumer (sent at the end of each [`Engine::pump`]).
    batch: Vec<Event>,
    /// Batch vectors the consumer emptied, reused for the next batches.
    spare: Spare,
    internal: mpsc::UnboundedSender<Internal>,
    /// Transfers in progress by message id (download or upload), for cancel.
    transfers: HashMap<String, AbortHandle>,
    quit: bool,
}

fn now() -> std::time::Instant {
    Instant::now().into_std()
}

fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

impl Engine {
    async fn run(mut self, mut rx: mpsc::Receiver<Request>, mut internal_rx: mpsc::UnboundedReceiver<Internal>) {
        let _ = tokio::fs::create_dir_all(&self.cfg.media_dir).await;
        files::clean_partials(&self.cfg.media_dir).await;
        self.load_outbox();
        self.load_waiting_cards();
        let mut ws: Option<Ws> = None;
        let mut connecting: Option<Connecting> = None;
        // One timer for the session's deadline, moved when the deadline moves (not a new timer every turn).
        let far = Instant::now() + Duration::from_secs(86_400 * 365);
        let sleep = tokio::time::sleep_until(far);
        tokio::pin!(sleep);
        let mut armed = far;
        loop {
            let more = self.pump(&mut ws, &mut connecting).await;
            if self.quit || self.events.is_closed() {
                break;
            }
            let deadline = self.session.poll_timeout().map(Instant::from_std).unwrap_or(far);
            if deadline != armed {
                sleep.as_mut().reset(deadline);
                armed = deadline;
            }
            tokio::select! {
                biased;
                req = rx.recv() => match req {
                    Some(Request::Command(cmd, reply)) => {
                        let r = self.on_command(cmd, &mut ws).await;
                        if let Some(tx) = reply { let _ = tx.send(r); }
                    }
                    None => self.quit = true,
                },
                Some(msg) = internal_rx.recv() => self.on_internal(msg).await,
                res = async { match connecting.as_mut() { Some(f) => f.await, None => std::future::pending().await } }, if connecting.is_some() => {
                    connecting = None;
                    match res {
                        Ok(socket) => {
                            info!(url = %policy::redact_url(self.url.as_str()), "connected");
                            ws = Some(socket);
                            self.session.handle_connected(now());
                        }
                        Err((status, code, reason)) => {
                            warn!(%reason, ?status, ?code, "connect failed");
                            self.session.handle_connect_error(status, code, &reason, now());
                        }
                    }
                }
                msg = async { match ws.as_mut() { Some(s) => s.next().await, None => std::future::pending().await } }, if ws.is_some() => {
                    let t = now();
                    self.on_socket(msg, &mut ws, t);
                    // Take whatever else is already buffered before going round the select again (throughput): one
                    // clock reading and one batch of events for the burst.
                    // (the one just read and MAX_BATCH - 1 more: one batch of events, not a full one and a single)
                    for _ in 1..MAX_BATCH {
                        // a frame that asked for io (a file to save) is carried out before later frames are read, so
                        // their events cannot overtake its result
                        if self.session.has_io() {
                            break;
                        }
                        let Some(s) = ws.as_mut() else { break };
                        match s.next().now_or_never() {
                            Some(m) => self.on_socket(m, &mut ws, t),
                            None => break,
                        }
                    }
                }
                _ = &mut sleep, if armed != far => {
                    armed = far; // fired: re-armed from the session next turn
                    self.session.handle_timeout(now());
                }
                // the pump stopped between two parts of an upload: nothing else is waiting, so go on with it
                _ = std::future::ready(()), if more => {}
            }
        }
        self.pump(&mut ws, &mut connecting).await;
        if let Some(mut s) = ws.take() {
            let _ = tokio::time::timeout(Duration::from_secs(2), s.close(None)).await;
        }
        for (_, h) in self.transfers.drain() {
            h.abort();
        }
        debug!("engine stopped");
    }

    /// Carry out everything the session wants done, and deliver its events. Returns `true` when it stopped after one
    /// part of an upload with more to write: the caller looks at commands (a cancel) and the socket (the agent may
    /// talk meanwhile) and calls again. What the session said with an io (the part's progress, `sent`) is delivered
    /// as soon as that io is done, so a progress bar moves as the file goes out, not all at once at the end.
    async fn pump(&mut self, ws: &mut Option<Ws>, connecting: &mut Option<Connecting>) -> bool {
        loop {
            let mut progressed = false;
            loop {
                // What the session said before this io comes before what the io makes happen: a message read just
                // before a file stays above that file's `media` (which saving it emits).
                self.batch.reserve(self.session.events_waiting().min(MAX_BATCH));
                self.emit_session_events().await;
                let Some(io) = self.session.poll_io(now()) else { break };
                progressed = true;
                let part = matches!(io, Io::SendFile { .. });
                self.do_io(io, ws, connecting).await;
                if part && ws.is_some() && self.session.uploading() {
                    self.emit_session_events().await;
                    self.flush_events().await;
                    return true;
                }
            }
            if self.session.events_waiting() > 0 {
                progressed = true;
                self.emit_session_events().await;
            }
            if !progressed {
                break;
            }
        }
        self.flush_events().await;
        false
    }

    /// Hand the collected events to the consumer in one batch.
    async fn flush_events(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let batch = std::mem::replace(&mut self.batch, self.spare.take());
        let _ = self.events.send(batch).await;
    }

    async fn do_io(&mut self, io: Io, ws: &mut Option<Ws>, connecting: &mut Option<Connecting>) {
        match io {
            Io::Connect => {
                if let Some(mut old) = ws.take() {
                    let _ = tokio::time::timeout(Duration::from_millis(500), old.close(None)).await;
                }
                let target = match self.cfg.dialect {
                    Dialect::Adapter => self.url.clone(),
                    Dialect::V3 => policy::v3_url_with_token(&self.url, self.cfg.token.expose()),
                };
                info!(url = %policy::redact_url(self.url.as_str()), "connecting");
                *connecting = Some(Box::pin(dial(target, self.cfg.connect_timeout)));
            }
            Io::Send(text) => self.write(ws, Message::Text(text.into())).await,
            Io::SendFile { id, head, path, offset, len } => {
                self.write_file_frame(ws, &id, head, &path, offset, len).await
            }
            Io::Ping(p) => self.write(ws, Message::Ping(p.into())).await,
            Io::Close { code, reason } => {
                if let Some(mut s) = ws.take() {
                    let frame = CloseFrame { code: CloseCode::from(code), reason: reason.into() };
                    let _ = tokio::time::timeout(Duration::from_millis(500), s.close(Some(frame))).await;
                }
            }
            Io::Save { meta, bytes, session } => {
                let dir = self.cfg.media_dir.clone();
                let (quota, used) = (self.cfg.media_quota_bytes, quota::used(&dir).await);
                if used.saturating_add(bytes.len() as u64) > quota {
                    let e = HttpError::QuotaFull { quota, used };
                    return self.refuse_file(meta.id, meta.caption, session, e.code(), e.to_string()).await;
                }
                match files::save_into(&dir, &meta.filename, &bytes).await {
                    Ok(path) => self.emit(media_event(&meta, &path, bytes.len() as u64, session)).await,
                    Err(e) => {
                        let text = format!("could not save {}: {e}", meta.filename);
                        self.refuse_file(meta.id, meta.caption, session, "disk", text).await
                    }
                }
            }
            Io::Download { meta, source, max_bytes, session } => self.start_download(meta, source, max_bytes, session),
            Io::Upload { id, path, filename, mime } => self.start_upload(id, path, filename, mime),
        }
    }

    async fn emit(&mut self, ev: Event) {
        if self.collect(ev) {
            self.flush_events().await;
        }
    }

    /// What [`emit`](Self::emit) does before a flush, without an `await` (the pump's per-event path: no future to
    /// build and move the event into). `true` when the batch is full and must be flushed now.
    fn collect(&mut self, ev: Event) -> bool {
        match &ev {
            Event::Delivered { id } => {
                if let Err(e) = self.persist.outbox_confirm(id) {
                    warn!(%e, "outbox confirm failed");
                }
            }
            Event::Rejected { id: Some(id), code, reason, .. } => {
                let _ = self.persist.outbox_fail(id, code, reason);
            }
            _ => {}
        }
        self.persist.record(&ev);
        self.batch.push(ev);
        self.batch.len() >= MAX_BATCH
    }

    /// Every event the session has ready, into the batch (flushed whenever it fills).
    async fn emit_session_events(&mut self) {
        while let Some(ev) = self.session.poll_event() {
            if self.collect(ev) {
                self.flush_events().await;
            }
        }
    }
}
