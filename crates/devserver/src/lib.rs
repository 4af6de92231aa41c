//! Reference Hermes agent for both dialects on loopback: demo and test peer.
//!
//! One HTTP server serves
//! - the adapter protocol at `/ws` (`../shared/spec/adapter.md`, A-1…A-33),
//! - Hermes Chat v3 at `/ws/app?token=<jwt>` (`../shared/spec/chat-v3.md`, G-1…G-11),
//! - v3 media: `POST /api/media/upload`, `GET /media/{id}` (G-9), and the adapter's `url` downloads at
//!   `GET /files/{name}` (A-20).
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! let server = hermes_devserver::start(hermes_devserver::Config::default()).await?;
//! println!("adapter at {}", server.adapter_url());
//! // … drive a client, then prove exactly-once delivery:
//! let log = server.log();
//! assert!(log.iter().all(|e| e.repeats == 0));
//! server.shutdown().await;
//! # Ok(()) }
//! ```

mod adapter;
pub mod assets;
mod cards;
mod cron;
mod demo;
pub mod faultproxy;
mod http;
mod jwt;
mod log;
mod uploads;
mod v3;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hermes_protocol::adapter::Down;
use hermes_protocol::media::{MIB, MediaLimits};
use hermes_protocol::v3::Envelope;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

pub use cron::{CronOutcome, Scheduled};
pub use jwt::{make_jwt, verify_jwt};
pub use log::{Dialect, LogEntry, LogItem};

/// The well-known development token (64 hex characters, A-2). Never use it outside loopback.
pub const DEV_TOKEN: &str = "deadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeef";
/// The well-known development HS256 secret of the v3 gateway.
pub const DEV_JWT_SECRET: &str = "hermes-dev-jwt-secret";

/// The largest WebSocket message the server reads. Frames over 16 MiB (A-19) but under this get a polite
/// `error{code:"too_big"}` and the connection stays; larger ones are cut by the WebSocket layer (close 1009).
pub(crate) const WS_READ_LIMIT: usize = hermes_protocol::adapter::MAX_FRAME_BYTES + MIB as usize;

/// Server configuration. `Config::default()` is a loopback server on an ephemeral port with the dev token,
/// any device allowed, demo on, 8 MiB media limit, and a temporary media folder.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen; port 0 picks a free port ([`Running::addr`] tells which).
    pub bind: SocketAddr,
    /// The adapter token expected in `hello` (A-2).
    pub token: String,
    /// Devices allowed on the adapter; `None` = any device (A-4).
    pub allowed_devices: Option<Vec<String>>,
    /// v3 tokens accepted as they are (G-3). The `user_id` is the token's unverified JWT `sub` if it has one,
    /// else [`Config::v3_user_id`].
    pub v3_tokens: Vec<String>,
    /// v3 JWTs signed HS256 with this secret (and not expired) are accepted; `user_id` = `sub` (G-3, G-4).
    pub v3_jwt_secret: Option<String>,
    /// `user_id` for accepted v3 tokens without a `sub`.
    pub v3_user_id: String,
    /// Per-file media limit, announced as `capabilities.max_media_bytes` (A-3, A-19) and used for v3 uploads.
    pub max_media_bytes: u64,
    /// What the adapter's `ready` says in `capabilities` (A-3). By default the real adapter's shape.
    pub capabilities: Capabilities,
    /// Run the demo agent (replies, cards, media). Off: the server only accepts and logs.
    pub demo: bool,
    /// Where received and demo files are kept; `None` = a temporary folder removed at shutdown.
    pub media_dir: Option<PathBuf>,
    /// `ready.avatar_url` (A-27); absent by default.
    pub avatar_url: Option<String>,
    /// Pause between streamed pieces (edits, chunks, v3 `stream`).
    pub pace: Duration,
    /// Pause between `typing{stop}` and `avatar{idle}` (A-11).
    pub idle_pause: Duration,
    /// `timeout_seconds` of the demo cards (A-16), 300 by default.
    pub card_timeout_secs: u64,
    /// `timeout_seconds` of the `/expire` card, 5 by default.
    pub expire_card_secs: u64,
    /// How long a new adapter connection may take to send `hello`.
    pub hello_timeout: Duration,
    /// Keep the uplink log (and so the memory of which ids were accepted) of an earlier server: a restarted server
    /// that still drops repeats, like an agent whose deduplication survives its restarts. `None`: a fresh log.
    pub log: Option<LogHandle>,
    /// Pause after each received upload piece (an adapter `media` frame, a chunk of a v3 HTTP upload body): a slow
    /// agent, so that upload progress (and its cancel button) can be seen and tested. Zero by default. A slow agent's
    /// sockets also get a small receive buffer, so that the kernel does not swallow most of an upload at once.
    pub upload_delay: Duration,
    /// Hermes's DM pairing (A-8, spec §10): an adapter device not yet approved gets a pairing-code reply to its first
    /// message and no answer at all to later ones, until [`Running::approve_device`]. Off by default: every device
    /// is answered.
    pub pairing_code_first: bool,
}

/// What the adapter announces in `ready.capabilities` (A-3).
#[derive(Debug, Clone, PartialEq)]
pub enum Capabilities {
    /// `{"max_media_bytes": <Config::max_media_bytes>}` and nothing else: what the real adapter sends.
    Real,
    /// No `capabilities` key at all.
    Absent,
    /// Exactly this object (`{}`, `{"media": false}`, `{"audio": false, "max_media_bytes": 0}`…). Its
    /// `max_media_bytes` (8 MiB when absent, A-3) is also the limit the server enforces on files.
    Custom(serde_json::Map<String, serde_json::Value>),
}

impl Capabilities {
    /// Parses the `--capabilities` flag: `absent`, `real`, or a JSON object.
    pub fn parse(s: &str) -> Result<Capabilities, String> {
        match s.trim() {
            "real" => Ok(Capabilities::Real),
            "absent" => Ok(Capabilities::Absent),
            json => match serde_json::from_str::<serde_json::Value>(json) {
                Ok(serde_json::Value::Object(m)) => Ok(Capabilities::Custom(m)),
                _ => Err(format!("--capabilities: `real`, `absent` or a JSON object, not {json:?}")),
            },
        }
    }
}

impl Config {
    /// The `capabilities` object of `ready`, or `None` when it is absent.
    pub fn ready_capabilities(&self) -> Option<serde_json::Map<String, serde_json::Value>> {
        match &self.capabilities {
            Capabilities::Real => {
                let mut m = serde_json::Map::new();
                m.insert("max_media_bytes".into(), self.max_media_bytes.into());
                Some(m)
            }
            Capabilities::Absent => None,
            Capabilities::Custom(m) => Some(m.clone()),
        }
    }

    /// The per-file limit the adapter enforces: the announced `max_media_bytes`, 8 MiB when it announces none (A-3).
    pub fn adapter_media_limit(&self) -> u64 {
        match &self.capabilities {
            Capabilities::Real => self.max_media_bytes,
            Capabilities::Absent => 8 * MIB,
            Capabilities::Custom(m) => m.get("max_media_bytes").and_then(serde_json::Value::as_u64).unwrap_or(8 * MIB),
        }
    }
}

/// `SO_RCVBUF` of a slow agent's sockets ([`Config::upload_delay`]).
const SLOW_RECV_BUFFER: u32 = 128 * 1024;

/// The uplink log of a server, to hand to the next one ([`Config::log`], [`Running::log_handle`]).
#[derive(Debug, Clone)]
pub struct LogHandle(Arc<log::Log>);

impl Default for Config {
    fn default() -> Self {
        Config {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            token: DEV_TOKEN.to_string(),
            allowed_devices: None,
            v3_tokens: Vec::new(),
            v3_jwt_secret: Some(DEV_JWT_SECRET.to_string()),
            v3_user_id: "user".to_string(),
            max_media_bytes: 8 * MIB,
            capabilities: Capabilities::Real,
            demo: true,
            media_dir: None,
            avatar_url: None,
            pace: Duration::from_millis(40),
            idle_pause: Duration::from_millis(300),
            card_timeout_secs: 300,
            expire_card_secs: 5,
            hello_timeout: Duration::from_secs(30),
            log: None,
            upload_delay: Duration::ZERO,
            pairing_code_first: false,
        }
    }
}

impl Config {
    /// The defaults with short pauses (2 ms pace, 20 ms idle pause, 1 s `/expire` card): for tests.
    pub fn fast() -> Config {
        Config {
            pace: Duration::from_millis(2),
            idle_pause: Duration::from_millis(20),
            expire_card_secs: 1,
            ..Config::default()
        }
    }
}

/// What a connection task is told to do from outside.
#[derive(Debug)]
pub(crate) enum Out {
    /// Send this text frame.
    Frame(String),
    /// Send a close frame with this code and reason, then end.
    Close(u16, String),
    /// End at once, without a close frame (simulates a network drop).
    Kick,
}

#[derive(Debug)]
pub(crate) struct ConnHandle {
    pub dialect: Dialect,
    pub peer: String,
    pub tx: mpsc::UnboundedSender<Out>,
}

/// A stored file (v3 media store or adapter `/files`).
#[derive(Debug, Clone)]
pub(crate) struct StoredFile {
    pub name: String,
    pub mime: String,
    pub size: u64,
    pub path: PathBuf,
}

/// State shared by every task of one server.
#[derive(Debug)]
pub(crate) struct Shared {
    pub cfg: Config,
    pub addr: SocketAddr,
    pub media_dir: PathBuf,
    pub log: Arc<log::Log>,
    pub conns: Mutex<HashMap<u64, ConnHandle>>,
    next_conn: AtomicU64,
    pub readies: AtomicU64,
    pub uploads: Mutex<uploads::Uploads>,
    pub cards: Mutex<cards::Cards>,
    /// v3 media by id (G-9).
    pub media: Mutex<HashMap<String, StoredFile>>,
    /// Adapter demo files served at `/files/{name}` (A-20 `url`).
    pub files: Mutex<HashMap<String, StoredFile>>,
    /// [`Config::pairing_code_first`]: the devices approved, and those that were sent their pairing code.
    pub pairing: Mutex<demo::Pairing>,
    pub shutdown: watch::Sender<bool>,
    /// The runtime the server runs on (scheduled messages are timed there, whoever schedules them).
    pub rt: tokio::runtime::Handle,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Resolves once the server is shutting down.
pub(crate) async fn stopped(rx: &mut watch::Receiver<bool>) {
    if rx.wait_for(|s| *s).await.is_err() {
        std::future::pending::<()>().await;
    }
}

pub(crate) fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

impl Shared {
    pub(crate) fn register(&self, dialect: Dialect, peer: &str, tx: mpsc::UnboundedSender<Out>) -> u64 {
        let id = self.next_conn.fetch_add(1, Ordering::Relaxed);
        lock(&self.conns).insert(id, ConnHandle { dialect, peer: peer.to_string(), tx });
        id
    }

    pub(crate) fn unregister(&self, conn: u64) {
        lock(&self.conns).remove(&conn);
    }

    /// Send a text frame to every live connection of `peer` in `dialect`. Returns how many got it.
    pub(crate) fn send_to(&self, dialect: Dialect, peer: &str, frame: &str) -> usize {
        lock(&self.conns)
            .values()
            .filter(|c| c.dialect == dialect && c.peer == peer)
            .filter(|c| c.tx.send(Out::Frame(frame.to_string())).is_ok())
            .count()
    }

    /// Keep `bytes` in the media folder under a fresh unguessable id.
    pub(crate) async fn store_file(
        &self,
        name: &str,
        mime: &str,
        bytes: &[u8],
    ) -> std::io::Result<(String, StoredFile)> {
        let id = uuid::Uuid::new_v4().to_string();
        let path = self.media_dir.join(&id);
        tokio::fs::write(&path, bytes).await?;
        Ok((id, StoredFile { name: name.to_string(), mime: mime.to_string(), size: bytes.len() as u64, path }))
    }

    /// Validate a v3 token (G-3). Returns the `user_id`.
    pub(crate) fn v3_user(&self, token: &str) -> Option<String> {
        if token.is_empty() {
            return None;
        }
        if self.cfg.v3_tokens.iter().any(|t| ct_eq(t.as_bytes(), token.as_bytes())) {
            return Some(hermes_protocol::v3::jwt_subject(token).unwrap_or_else(|| self.cfg.v3_user_id.clone()));
        }
        let secret = self.cfg.v3_jwt_secret.as_deref()?;
        let claims = jwt::verify_jwt(secret, token, unix_now())?;
        Some(claims.get("sub").and_then(|s| s.as_str()).map_or_else(|| self.cfg.v3_user_id.clone(), str::to_string))
    }
}

/// Constant-time equality (the length is not secret).
pub(crate) fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A running server. Dropping it stops the server abruptly; prefer [`Running::shutdown`].
#[derive(Debug)]
pub struct Running {
    shared: Arc<Shared>,
    server: Option<JoinHandle<()>>,
    stop: Option<oneshot::Sender<()>>,
    _tmp: Option<tempfile::TempDir>,
}

/// Start a server. Returns once it listens.
pub async fn start(cfg: Config) -> anyhow::Result<Running> {
    let listener = if cfg.upload_delay.is_zero() {
        tokio::net::TcpListener::bind(cfg.bind).await?
    } else {
        // A slow agent has a small receive window too (inherited by accepted sockets): otherwise the kernel takes
        // several MiB of an upload at once and the client's progress races far ahead of what the agent has read.
        let sock = if cfg.bind.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
        sock.set_reuseaddr(true)?;
        sock.set_recv_buffer_size(SLOW_RECV_BUFFER)?;
        sock.bind(cfg.bind)?;
        sock.listen(1024)?
    };
    let addr = listener.local_addr()?;
    let (media_dir, tmp) = match &cfg.media_dir {
        Some(d) => {
            tokio::fs::create_dir_all(d).await?;
            (d.clone(), None)
        }
        None => {
            let t = tempfile::Builder::new().prefix("hermes-devserver-").tempdir()?;
            (t.path().to_path_buf(), Some(t))
        }
    };
    let limits = MediaLimits { max_media_bytes: cfg.adapter_media_limit() };
    let log = cfg.log.as_ref().map_or_else(|| Arc::new(log::Log::new()), |h| h.0.clone());
    let shared = Arc::new(Shared {
        cfg,
        addr,
        media_dir,
        log,
        conns: Mutex::new(HashMap::new()),
        next_conn: AtomicU64::new(1),
        readies: AtomicU64::new(0),
        uploads: Mutex::new(uploads::Uploads::new(limits)),
        cards: Mutex::new(cards::Cards::default()),
        media: Mutex::new(HashMap::new()),
        files: Mutex::new(HashMap::new()),
        pairing: Mutex::new(demo::Pairing::default()),
        shutdown: watch::Sender::new(false),
        rt: tokio::runtime::Handle::current(),
    });
    let app = http::router(shared.clone());
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let serve = axum::serve(listener, app).with_graceful_shutdown(async {
            let _ = stop_rx.await;
        });
        if let Err(e) = serve.await {
            tracing::warn!("server error: {e}");
        }
    });
    tracing::info!(%addr, "hermes-devserver listening");
    Ok(Running { shared, server: Some(server), stop: Some(stop_tx), _tmp: tmp })
}

impl Running {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.shared.addr
    }

    /// `ws://127.0.0.1:PORT/ws`: the adapter (A-2).
    pub fn adapter_url(&self) -> String {
        format!("ws://{}/ws", self.shared.addr)
    }

    /// `ws://127.0.0.1:PORT/ws/app`: the v3 gateway, without the token (G-3).
    pub fn v3_url(&self) -> String {
        format!("ws://{}/ws/app", self.shared.addr)
    }

    /// The v3 URL with `?token=` (G-3).
    pub fn v3_url_with_token(&self, token: &str) -> String {
        format!("{}?token={}", self.v3_url(), token)
    }

    /// `http://127.0.0.1:PORT`: the HTTP origin (G-9).
    pub fn http_base(&self) -> String {
        format!("http://{}", self.shared.addr)
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &Config {
        &self.shared.cfg
    }

    /// The adapter token in force.
    pub fn token(&self) -> &str {
        &self.shared.cfg.token
    }

    /// A fresh v3 JWT for `sub`, signed with the configured secret (`None` if no secret is configured).
    pub fn mint_v3_token(&self, sub: &str) -> Option<String> {
        self.shared.cfg.v3_jwt_secret.as_deref().map(|s| make_jwt(s, sub, Some(unix_now() + 24 * 3600)))
    }

    /// Where files are kept.
    pub fn media_dir(&self) -> &Path {
        &self.shared.media_dir
    }

    /// A snapshot of the uplink log.
    pub fn log(&self) -> Vec<LogEntry> {
        self.shared.log.entries()
    }

    /// The log itself, to give to a restarted server ([`Config::log`]).
    pub fn log_handle(&self) -> LogHandle {
        LogHandle(self.shared.log.clone())
    }

    /// Wait until `pred(log)` holds, at most `timeout`; returns that log, or `None` on timeout.
    pub async fn wait_for_log(
        &self,
        timeout: Duration,
        pred: impl FnMut(&[LogEntry]) -> bool,
    ) -> Option<Vec<LogEntry>> {
        self.shared.log.wait_for(timeout, pred).await
    }

    /// Live WebSocket connections (both dialects, after `ready` / upgrade).
    pub fn connections(&self) -> usize {
        lock(&self.shared.conns).len()
    }

    /// How many `ready` frames were sent (successful adapter handshakes).
    pub fn ready_count(&self) -> u64 {
        self.shared.readies.load(Ordering::Relaxed)
    }

    /// Drop every connection abruptly, without a close frame (a network drop, A-5).
    pub fn kick_all(&self) {
        for c in lock(&self.shared.conns).values() {
            let _ = c.tx.send(Out::Kick);
        }
    }

    /// Close every connection with a close frame of `code` and `reason` (e.g. 1008 to simulate revocation, A-31).
    pub fn close_all_with(&self, code: u16, reason: &str) {
        for c in lock(&self.shared.conns).values() {
            let _ = c.tx.send(Out::Close(code, reason.to_string()));
        }
    }

    /// The owner ran `hermes pairing approve` for `device` ([`Config::pairing_code_first`]): its messages are answered.
    pub fn approve_device(&self, device: &str) {
        lock(&self.shared.pairing).approve(device);
    }

    /// Push an adapter frame to every live connection of `device` (e.g. a cron delivery). Returns how many got it.
    pub fn send_to_device(&self, device: &str, frame: &Down) -> usize {
        self.shared.send_to(Dialect::Adapter, device, &hermes_protocol::adapter::encode(frame))
    }

    /// Push any text (even a malformed frame) to every live adapter connection of `device`.
    pub fn send_raw_to_device(&self, device: &str, text: &str) -> usize {
        self.shared.send_to(Dialect::Adapter, device, text)
    }

    /// A scheduled (cron) message for `device`: after `delay`, `text` goes down as an ordinary final `message` frame to
    /// the device's live adapter connections, or to none (`device_offline`) — see [`CronOutcome`]. Callable from any
    /// thread.
    pub fn schedule_to_device(&self, device: &str, delay: Duration, text: &str) -> Scheduled {
        cron::schedule(&self.shared, device, delay, text)
    }

    /// Push a v3 envelope to every live v3 connection of `user`.
    pub fn send_to_user(&self, user: &str, env: &Envelope) -> usize {
        self.shared.send_to(Dialect::V3, user, &hermes_protocol::v3::encode(env))
    }

    /// Close every connection (1001), stop listening and wait for the server to end (at most ~2 s).
    pub async fn shutdown(mut self) {
        self.shared.shutdown.send_replace(true);
        self.close_all_with(1001, "server shutting down");
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(mut h) = self.server.take()
            && tokio::time::timeout(Duration::from_secs(2), &mut h).await.is_err()
        {
            h.abort();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.shared.shutdown.send_replace(true);
        for c in lock(&self.shared.conns).values() {
            let _ = c.tx.send(Out::Kick);
        }
        if let Some(h) = self.server.take() {
            h.abort();
        }
    }
}
