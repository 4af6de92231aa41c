//! The async engine: one tokio task running `select!` over the socket, the command channel, transfer results and
//! the session's next deadline (rumqttc's `EventLoop` shape). All protocol decisions are the sans-IO
//! [`Session`]'s; this file only moves bytes, files and time.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{FutureExt as _, SinkExt as _, StreamExt as _};
use hermes_protocol::adapter::Device;
use hermes_protocol::media::{MediaMeta, UpMediaMeta, safe_filename};
use hermes_protocol::session::{Config, DownloadSource, Io, Outgoing, UploadFailure};
use hermes_protocol::v3::MediaDescriptor;
use hermes_protocol::{Command, Dialect, Direction, DisconnectCode, Event, Refusal, Session};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig, frame::coding::CloseCode};
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};
use tracing::{debug, info, warn};
use url::Url;

use crate::files::{self, kind_for_mime, mime_for_path};
use crate::http::{Http, HttpError};
use crate::persist::{OutboxRecord, Payload, Persist, PersistError};
use crate::policy::{self, UrlError};

/// Bytes of a file read and encoded per WebSocket fragment (a multiple of 3: no base64 padding inside a frame).
const FILE_CHUNK: usize = 768 * 1024;

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

    /// Ask the engine to quit and wait for it.
    pub async fn shutdown(self) {
        let _ = self.tx.send(Request::Command(Command::Quit, None)).await;
        let _ = self.task.await;
    }
}

enum Internal {
    Event(Event),
    Downloaded { meta: MediaMeta, path: PathBuf, size: u64, session: Option<String> },
    DownloadFailed { id: String, error: HttpError },
    Uploaded { id: String, media: MediaDescriptor },
    UploadFailed { id: String, error: HttpError },
}

/// At most this many events travel in one batch.
const MAX_BATCH: usize = 256;

/// The engine's events, in order. They travel in batches (one channel operation and at most one wake-up of the
/// consumer per burst of frames, not per event); [`Events::recv`] hands them out one at a time, like a channel.
#[derive(Debug)]
pub struct Events {
    rx: mpsc::Receiver<Vec<Event>>,
    batch: VecDeque<Event>,
    spare: Spare,
}

impl Events {
    /// The next event; `None` once the engine has stopped and every event was taken. Cancel-safe (`select!`).
    pub async fn recv(&mut self) -> Option<Event> {
        loop {
            if let Some(ev) = self.batch.pop_front() {
                return Some(ev);
            }
            let next = self.rx.recv().await?;
            self.take(next);
        }
    }

    /// The next event if one is waiting now.
    pub fn try_recv(&mut self) -> Option<Event> {
        loop {
            if let Some(ev) = self.batch.pop_front() {
                return Some(ev);
            }
            let next = self.rx.try_recv().ok()?;
            self.take(next);
        }
    }

    /// Every event waiting now (at least one; waits for it), in order: for consumers that handle bursts at once.
    /// Empty once the engine has stopped and every event was taken. Cancel-safe.
    pub async fn recv_batch(&mut self) -> Vec<Event> {
        let mut out: Vec<Event> = self.batch.drain(..).collect();
        if out.is_empty() {
            match self.rx.recv().await {
                Some(b) => out = b,
                None => return out,
            }
        }
        while let Ok(mut b) = self.rx.try_recv() {
            out.append(&mut b);
            self.spare.put(b);
        }
        out
    }

    /// The next batch becomes the current one; the emptied one goes back to the engine.
    fn take(&mut self, next: Vec<Event>) {
        let done = std::mem::replace(&mut self.batch, VecDeque::from(next));
        self.spare.put(Vec::from(done));
    }
}

/// Emptied batch vectors, handed back from [`Events`] to the engine (issue #4). Without them each burst allocated its
/// batch (up to 256 events of 176 bytes: 44 KiB) on the engine's thread and freed it on the consumer's; with glibc
/// that large request also merged the small chunks the consumer had freed (the events' strings) on every burst
/// (`malloc_consolidate`), which sent the engine's next small allocations down `_int_malloc`'s slow path.
#[derive(Debug, Default, Clone)]
struct Spare(Arc<std::sync::Mutex<Vec<Vec<Event>>>>);

/// At most this many spare batch vectors are kept.
const MAX_SPARE: usize = 4;

impl Spare {
    fn put(&self, v: Vec<Event>) {
        if !v.is_empty() || v.capacity() == 0 || v.capacity() > 2 * MAX_BATCH {
            return;
        }
        if let Ok(mut spare) = self.0.lock()
            && spare.len() < MAX_SPARE
        {
            spare.push(v);
        }
    }

    /// An empty vector, with room for a batch when one came back.
    fn take(&self) -> Vec<Event> {
        self.0.lock().ok().and_then(|mut spare| spare.pop()).unwrap_or_default()
    }
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
        },
        Instant::now().into_std(),
    );
    let engine = Engine {
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
    Ok((Handle { tx, task }, Events { rx: ev_rx, batch: VecDeque::new(), spare }))
}

struct Engine {
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
                match files::save_into(&dir, &meta.filename, &bytes).await {
                    Ok(path) => self.emit(media_event(&meta, &path, bytes.len() as u64, session)).await,
                    Err(e) => {
                        self.emit(Event::Error {
                            code: "disk".into(),
                            text: format!("could not save {}: {e}", meta.filename),
                            id: Some(meta.id),
                        })
                        .await
                    }
                }
            }
            Io::Download { meta, source, max_bytes, session } => self.start_download(meta, source, max_bytes, session),
            Io::Upload { id, path, filename, mime } => self.start_upload(id, path, filename, mime),
        }
    }

    async fn write(&mut self, ws: &mut Option<Ws>, msg: Message) {
        let Some(s) = ws.as_mut() else { return };
        if let Err(e) = s.send(msg).await {
            warn!(error = %e, "write failed");
            *ws = None;
            self.session.handle_socket_error(DisconnectCode::WriteFailed, &format!("write failed: {e}"), now());
        }
    }

    /// One `media` frame of a file on disk, read and base64-encoded piece by piece and written as the
    /// fragments of one text message (RFC 6455 §5.4): the peer gets the same message as a single frame, but neither
    /// the file nor its whole frame is ever in memory (an 8 MiB file costs about 3 MiB here, not 30).
    async fn write_file_frame(
        &mut self,
        ws: &mut Option<Ws>,
        id: &str,
        head: String,
        path: &Path,
        offset: u64,
        len: u64,
    ) {
        use std::io::{Read as _, Seek as _, SeekFrom};
        use tungstenite::protocol::frame::{
            Frame,
            coding::{Data, OpCode},
        };
        if ws.is_none() {
            return;
        }
        let open = std::fs::File::open(path).and_then(|mut f| {
            let size = f.metadata()?.len();
            if size < offset + len {
                return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the file became shorter"));
            }
            f.seek(SeekFrom::Start(offset))?;
            Ok(f)
        });
        let mut file = match open {
            Ok(f) => f,
            Err(e) => {
                // nothing written yet: the item is refused, the connection stays
                self.session.fail_item(id, &format!("could not read the file: {e}"));
                return;
            }
        };
        let mut buf = vec![0u8; (len as usize).min(FILE_CHUNK)];
        let mut out = head;
        let mut left = len as usize;
        let mut first = true;
        loop {
            let n = left.min(FILE_CHUNK);
            if let Err(e) = file.read_exact(&mut buf[..n]) {
                // part of the message is out: only closing the connection ends it; the item is refused
                warn!(error = %e, "file read failed while sending");
                *ws = None;
                self.session.fail_item(id, &format!("could not read the file: {e}"));
                self.session.handle_socket_error(
                    DisconnectCode::WriteFailed,
                    "a file could not be read while sending it",
                    now(),
                );
                return;
            }
            base64::Engine::encode_string(&base64::engine::general_purpose::STANDARD, &buf[..n], &mut out);
            left -= n;
            let last = left == 0;
            if last {
                out.push_str(hermes_protocol::media::MEDIA_FRAME_TAIL);
            }
            let opcode = if first { OpCode::Data(Data::Text) } else { OpCode::Data(Data::Continue) };
            let next = if last { String::new() } else { String::with_capacity(FILE_CHUNK / 3 * 4 + 8) };
            let frame = Frame::message(std::mem::replace(&mut out, next).into_bytes(), opcode, last);
            self.write(ws, Message::Frame(frame)).await;
            if last || ws.is_none() {
                return;
            }
            first = false;
        }
    }

    fn on_socket(
        &mut self,
        msg: Option<Result<Message, tungstenite::Error>>,
        ws: &mut Option<Ws>,
        t: std::time::Instant,
    ) {
        match msg {
            Some(Ok(Message::Text(text))) => self.session.handle_text(text.as_str(), t),
            Some(Ok(Message::Binary(_))) | Some(Ok(Message::Ping(_))) | Some(Ok(Message::Frame(_))) => {
                self.session.handle_activity(t)
            }
            Some(Ok(Message::Pong(p))) => self.session.handle_pong(&p, t),
            Some(Ok(Message::Close(frame))) => {
                let (code, reason) =
                    frame.map(|f| (Some(u16::from(f.code)), f.reason.to_string())).unwrap_or((None, String::new()));
                info!(?code, %reason, "closed by peer");
                *ws = None;
                self.session.handle_closed(code, &reason, t);
            }
            Some(Err(e)) => {
                warn!(error = %e, "socket error");
                *ws = None;
                let (code, text) = socket_error(&e);
                self.session.handle_socket_error(code, &text, t);
            }
            None => {
                *ws = None;
                self.session.handle_closed(None, "connection lost", t);
            }
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

    // ------------------------------------------------------------------ commands

    async fn on_command(&mut self, cmd: Command, ws: &mut Option<Ws>) -> Reply {
        let name = cmd.name();
        let result = match cmd {
            Command::Text { text, reply_to, id, session, retry_of } => {
                let id = id.unwrap_or_else(new_id);
                let rec = OutboxRecord {
                    id,
                    payload: Payload::Text { text, reply_to, session },
                    created_unix: unix_now(),
                    retry_of,
                };
                self.queue(rec).await
            }
            Command::File { path, caption, id, session, retry_of } => {
                self.queue_file(&path, caption, id, session, false, retry_of).await
            }
            Command::Audio { path, text, id, session, retry_of } => {
                self.queue_audio(&path, text, id, session, retry_of).await
            }
            Command::Prompt { prompt_id, option_id, text } => {
                self.session.answer_prompt(&prompt_id, option_id.as_deref(), text.as_deref()).map(|()| None)
            }
            Command::Cancel { id } => {
                let mut found = false;
                if let Some(h) = self.transfers.remove(&id) {
                    h.abort();
                    found = true;
                }
                found |= self.session.cancel(&id);
                if found {
                    let _ = self.persist.outbox_fail(&id, "cancelled", "cancelled");
                    self.emit(Event::Error {
                        code: "cancelled".into(),
                        text: "cancelled".into(),
                        id: Some(id.clone()),
                    })
                    .await;
                    Ok(Some(id))
                } else {
                    Err(Refusal::NothingToCancel)
                }
            }
            Command::Reconnect => {
                self.session.reconnect_now(now());
                Ok(None)
            }
            Command::Quit => {
                self.quit = true;
                if let Some(s) = ws.as_mut() {
                    let _ = tokio::time::timeout(Duration::from_secs(1), s.close(None)).await;
                }
                Ok(None)
            }
        };
        if let Err(r) = &result {
            self.emit(Event::Rejected { cmd: name.into(), code: r.code().into(), reason: r.to_string(), id: None })
                .await;
        }
        result
    }

    /// Validate, persist, then hand to the session (A-6: the outbox entry exists before anything is sent).
    async fn queue(&mut self, rec: OutboxRecord) -> Reply {
        let outgoing = self.outgoing_for(&rec)?;
        self.session.check(&outgoing)?;
        self.persist.outbox_insert(&rec)?;
        self.session.submit(&rec.id, rec.created_unix, outgoing)?;
        Ok(Some(rec.id))
    }

    /// The session item for a record (a v3 file is uploaded over HTTP first, G-9).
    fn outgoing_for(&self, rec: &OutboxRecord) -> Result<Outgoing, Refusal> {
        Ok(match &rec.payload {
            Payload::Text { text, reply_to, session } => {
                Outgoing::Text { text: text.clone(), reply_to: reply_to.clone(), session: session.clone() }
            }
            Payload::File { path, filename, mime, caption, session, .. } if self.cfg.dialect == Dialect::V3 => {
                Outgoing::V3File {
                    path: PathBuf::from(path),
                    filename: filename.clone(),
                    mime: mime.clone(),
                    caption: caption.clone(),
                    session: session.clone(),
                }
            }
            Payload::File { path, audio: true, caption, .. } => {
                let wav = std::fs::read(path)
                    .map_err(|e| Refusal::FileUnreadable(format!("could not read the recording: {}", io_text(&e))))?;
                Outgoing::Audio { wav: Arc::from(wav), text: caption.clone() }
            }
            Payload::File { path, filename, mime, caption, .. } => {
                // only the size now: the bytes are read from the outbox copy while the frames are written
                let size = std::fs::metadata(path)
                    .map_err(|e| Refusal::FileUnreadable(format!("could not read {filename}: {}", io_text(&e))))?
                    .len();
                Outgoing::MediaFile {
                    meta: UpMediaMeta {
                        id: rec.id.clone(),
                        kind: kind_for_mime(mime).into(),
                        mime: mime.clone(),
                        filename: filename.clone(),
                        caption: caption.clone(),
                    },
                    path: PathBuf::from(path),
                    size,
                }
            }
        })
    }

    async fn queue_file(
        &mut self,
        path: &str,
        caption: Option<String>,
        id: Option<String>,
        session: Option<String>,
        audio: bool,
        retry_of: Option<String>,
    ) -> Reply {
        let src = PathBuf::from(path);
        let name = src.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.to_string());
        let meta = tokio::fs::metadata(&src)
            .await
            .map_err(|e| Refusal::FileUnreadable(format!("cannot read {name}: {}", io_text(&e))))?;
        if !meta.is_file() {
            return Err(Refusal::NotAFile(name));
        }
        // a file the agent does not take is refused before it is copied anywhere.
        let features = self.session.features();
        if !(if audio { features.voice } else { features.files }) {
            let f = if audio { hermes_protocol::Feature::Voice } else { hermes_protocol::Feature::Files };
            return Err(Refusal::FeatureOff(f));
        }
        // G-9 decision: v3 has no client-side limit (the gateway answers `file_too_large` / HTTP 413)
        let limit = self.session.limits().max_media_bytes;
        if self.cfg.dialect == Dialect::Adapter && meta.len() > limit {
            return Err(hermes_protocol::media::MediaError::TooBig { size: meta.len(), limit }.into());
        }
        let filename =
            safe_filename(&src.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(), None);
        let mime = if audio { "audio/wav".to_string() } else { mime_for_path(&src) };
        let id = id.unwrap_or_else(new_id);
        // A copy in the outbox folder: the queued message survives the original being moved (nothing lost).
        let dir = self.cfg.outbox_dir.join(safe_filename(&id, None));
        tokio::fs::create_dir_all(&dir).await.map_err(|e| copy_refusal(&e))?;
        let copy = dir.join(&filename);
        tokio::fs::copy(&src, &copy).await.map_err(|e| copy_refusal(&e))?;
        let rec = OutboxRecord {
            id,
            payload: Payload::File {
                path: copy.to_string_lossy().into_owned(),
                filename,
                mime,
                caption,
                audio,
                session,
            },
            created_unix: unix_now(),
            retry_of,
        };
        let r = self.queue(rec).await;
        // the copy goes with a refusal, unless the id belongs to another message (its copy is that one's)
        if matches!(&r, Err(e) if !matches!(e, Refusal::IdInUse(_))) {
            let _ = tokio::fs::remove_dir_all(&dir).await;
        }
        r
    }

    async fn queue_audio(
        &mut self,
        path: &str,
        text: Option<String>,
        id: Option<String>,
        session: Option<String>,
        retry_of: Option<String>,
    ) -> Reply {
        if !self.session.features().voice {
            return Err(Refusal::FeatureOff(hermes_protocol::Feature::Voice));
        }
        let raw = tokio::fs::read(path)
            .await
            .map_err(|e| Refusal::FileUnreadable(format!("cannot read {path}: {}", io_text(&e))))?;
        // 16 kHz mono PCM16 WAV, whatever the input WAV was.
        let wav = hermes_voice::wav::to_hermes_wav(&raw)
            .map_err(|e| Refusal::FileUnreadable(format!("{path} is not a usable recording: {e}")))?;
        // the adapter takes at most 8 MiB of audio per message; v3 has no such limit (G-9 decision)
        let max_clip = match self.cfg.dialect {
            Dialect::Adapter => hermes_protocol::session::MAX_AUDIO_BYTES,
            Dialect::V3 => usize::MAX,
        };
        let clips = hermes_voice::wav::split_wav(&wav, max_clip)
            .map_err(|e| Refusal::FileUnreadable(format!("{path} is not a usable recording: {e}")))?;
        let base = id.unwrap_or_else(new_id);
        let tmp = tempdir_in(&self.cfg.outbox_dir).await?;
        let mut first = None;
        for (i, clip) in clips.iter().enumerate() {
            // longer recordings become several messages.
            let id = if i == 0 { base.clone() } else { format!("{base}-{}", i + 1) };
            let p = tmp.join(format!("voice-{}.wav", i + 1));
            tokio::fs::write(&p, clip).await.map_err(|e| copy_refusal(&e))?;
            let text = if i == 0 { text.clone() } else { None };
            let r =
                self.queue_file(&p.to_string_lossy(), text, Some(id), session.clone(), true, retry_of.clone()).await?;
            first = first.or(r);
        }
        let _ = tokio::fs::remove_dir_all(&tmp).await;
        Ok(first)
    }

    /// Cards still waiting from before this start (the store keeps them): answerable again.
    fn load_waiting_cards(&mut self) {
        for (id, options) in self.persist.waiting_cards() {
            self.session.restore_card(&id, options);
        }
    }

    fn load_outbox(&mut self) {
        let pending = match self.persist.outbox_pending() {
            Ok(p) => p,
            Err(e) => {
                warn!(%e, "could not load the outbox");
                return;
            }
        };
        for rec in pending {
            let id = rec.id.clone();
            let res = self.outgoing_for(&rec).and_then(|o| self.session.submit(&id, rec.created_unix, o));
            if let Err(r) = res {
                let _ = self.persist.outbox_fail(&id, r.code(), &r.to_string());
                self.batch.push(Event::Rejected {
                    cmd: rec.payload.kind().into(),
                    code: r.code().into(),
                    reason: r.to_string(),
                    id: Some(id),
                });
            }
        }
    }

    // ------------------------------------------------------------------ transfers

    fn start_download(&mut self, meta: MediaMeta, source: DownloadSource, max_bytes: u64, session: Option<String>) {
        let (url, bearer) = match &source {
            DownloadSource::Url(u) => match Url::parse(u) {
                // an agent-given URL gets no credentials.
                Ok(u) => (u, None),
                Err(_) => {
                    let _ = self.internal.send(Internal::DownloadFailed {
                        id: meta.id.clone(),
                        error: HttpError::Scheme("invalid url".into()),
                    });
                    return;
                }
            },
            DownloadSource::V3Media(media_id) => {
                let origin = policy::http_origin(&self.url);
                let Ok(u) = origin.join(&format!("media/{}", urlencode(media_id))) else { return };
                (u, Some(self.cfg.token.expose().to_string()))
            }
        };
        let http = self.http.clone();
        let tx = self.internal.clone();
        let dir = self.cfg.media_dir.clone();
        let id = meta.id.clone();
        let limits = crate::http::DownloadLimits {
            agent_max: max_bytes,
            user_max: self.cfg.max_download_bytes,
            keep_free: self.cfg.keep_free_bytes,
        };
        let task = tokio::spawn(async move {
            let ptx = tx.clone();
            let pid = meta.id.clone();
            let mut last = 0u64;
            let res = http
                .download(&url, bearer.as_deref(), limits, &dir, &meta.filename, move |done, total| {
                    if done == total || done - last >= 256 * 1024 {
                        last = done;
                        let _ = ptx.send(Internal::Event(Event::Progress {
                            id: pid.clone(),
                            direction: Direction::Down,
                            done,
                            total,
                        }));
                    }
                })
                .await;
            let _ = tx.send(match res {
                Ok((path, size)) => Internal::Downloaded { meta, path, size, session },
                Err(error) => Internal::DownloadFailed { id: meta.id, error },
            });
        });
        self.transfers.insert(id, task.abort_handle());
    }

    /// v3: carry out the session's [`Io::Upload`] (G-9) and report how it went.
    fn start_upload(&mut self, id: String, path: PathBuf, filename: String, mime: String) {
        let origin = policy::http_origin(&self.url);
        let token = self.cfg.token.expose().to_string();
        let http = self.http.clone();
        let tx = self.internal.clone();
        let tid = id.clone();
        let task = tokio::spawn(async move {
            let ptx = tx.clone();
            let pid = id.clone();
            let res = http
                .upload(&origin, &token, &path, &filename, &mime, move |done, total| {
                    let _ = ptx.send(Internal::Event(Event::Progress {
                        id: pid.clone(),
                        direction: Direction::Up,
                        done,
                        total,
                    }));
                })
                .await;
            let _ = tx.send(match res {
                Ok(up) => {
                    let size = up.size.unwrap_or_else(|| std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0));
                    let media =
                        describe(&path, &up.media_id, up.name.unwrap_or(filename), up.mime.unwrap_or(mime), size);
                    Internal::Uploaded { id, media }
                }
                Err(error) => Internal::UploadFailed { id, error },
            });
        });
        self.transfers.insert(tid, task.abort_handle());
    }

    async fn on_internal(&mut self, msg: Internal) {
        match msg {
            Internal::Event(ev) => self.emit(ev).await,
            Internal::Downloaded { meta, path, size, session } => {
                self.transfers.remove(&meta.id);
                self.emit(media_event(&meta, &path, size, session)).await;
            }
            Internal::DownloadFailed { id, error } => {
                self.transfers.remove(&id);
                self.emit(Event::Error {
                    code: error.code().into(),
                    text: format!("download failed: {error}"),
                    id: Some(id),
                })
                .await;
            }
            Internal::Uploaded { id, media } => {
                self.transfers.remove(&id);
                self.session.handle_upload_done(&id, media);
            }
            Internal::UploadFailed { id, error } => {
                self.transfers.remove(&id);
                let failure = match error {
                    // a passing failure: the session retries after a backoff delay
                    HttpError::Network(_) | HttpError::Status { status: 500..=599 } => {
                        UploadFailure::Passing(error.to_string())
                    }
                    HttpError::FileTooLarge { .. } => UploadFailure::Final(Refusal::FileTooLarge(error.to_string())),
                    _ => UploadFailure::Final(Refusal::UploadFailed(error.to_string())),
                };
                self.session.handle_upload_failed(&id, failure, now());
            }
        }
    }
}

fn media_event(meta: &MediaMeta, path: &Path, size: u64, session: Option<String>) -> Event {
    Event::Media {
        id: meta.id.clone(),
        kind: meta.kind.clone(),
        mime: meta.mime.clone(),
        filename: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| meta.filename.clone()),
        caption: meta.caption.clone(),
        path: path.to_string_lossy().into_owned(),
        size,
        session,
    }
}

/// G-4b: fill what can be read from the file (image size from its header, a WAV's duration, a video's size and
/// duration from its container).
fn describe(path: &Path, media_id: &str, name: String, mime: String, size: u64) -> MediaDescriptor {
    let mut d = MediaDescriptor {
        id: media_id.into(),
        name: Some(name),
        mime,
        size,
        width: None,
        height: None,
        duration: None,
    };
    if d.mime == "audio/wav" || d.mime == "audio/x-wav" {
        d.name = None; // voice carries no name (§4)
        d.duration = std::fs::read(path).ok().and_then(|b| hermes_voice::wav::duration_secs(&b));
    } else if d.mime.starts_with("image/")
        && let Ok(b) = crate::mediainfo::head(path)
        && let Some((w, h)) = files::image_size(&b)
    {
        d.width = Some(w);
        d.height = Some(h);
    } else if d.mime.starts_with("video/") {
        let v = crate::mediainfo::video(path);
        (d.width, d.height, d.duration) = (v.width, v.height, v.duration);
    }
    d
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

async fn tempdir_in(dir: &Path) -> Result<PathBuf, Refusal> {
    let p = dir.join(format!(".rec-{}", new_id()));
    tokio::fs::create_dir_all(&p).await.map_err(|e| copy_refusal(&e))?;
    Ok(p)
}

/// A socket error in a word and a short text (no OS error numbers: the word is what the user is shown).
fn socket_error(e: &tungstenite::Error) -> (DisconnectCode, String) {
    match e {
        tungstenite::Error::Capacity(c) => (DisconnectCode::Protocol, format!("frame too large: {c}")),
        tungstenite::Error::Protocol(p) => (DisconnectCode::Protocol, format!("protocol error: {p}")),
        tungstenite::Error::Io(io) => (io_code(io), io_text(io)),
        tungstenite::Error::Tls(t) => (DisconnectCode::Tls, format!("TLS failed: {t}")),
        tungstenite::Error::Url(u) => (DisconnectCode::Dns, u.to_string()),
        other => (DisconnectCode::Lost, other.to_string()),
    }
}

/// The cause of a network error in a word.
fn io_code(e: &std::io::Error) -> DisconnectCode {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::ConnectionRefused => DisconnectCode::Refused,
        K::TimedOut => DisconnectCode::Timeout,
        K::HostUnreachable | K::NetworkUnreachable | K::NetworkDown | K::AddrNotAvailable => {
            DisconnectCode::Unreachable
        }
        K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => DisconnectCode::Lost,
        // getaddrinfo failures come as `Other`/`Uncategorized` with this text
        _ if e.to_string().contains("failed to lookup address") || e.to_string().contains("Name or service") => {
            DisconnectCode::Dns
        }
        _ if e.get_ref().is_some_and(|inner| inner.is::<rustls::Error>()) => DisconnectCode::Tls,
        _ => DisconnectCode::Lost,
    }
}

/// An OS error without its "(os error N)" tail.
fn io_text(e: &std::io::Error) -> String {
    let t = e.to_string();
    match t.find(" (os error") {
        Some(i) => t[..i].to_lowercase(),
        None => t,
    }
}

/// Copying a file into the outbox folder failed: the disk is full, or the file is unreadable.
fn copy_refusal(e: &std::io::Error) -> Refusal {
    if e.kind() == std::io::ErrorKind::StorageFull || e.raw_os_error() == Some(28) {
        Refusal::DiskFull
    } else {
        Refusal::FileUnreadable(format!("cannot prepare the upload: {}", io_text(e)))
    }
}

/// Open the WebSocket (TLS through the shared rustls config). Frames over 16 MiB are refused.
async fn dial(url: Url, timeout: Duration) -> Result<Ws, DialError> {
    let cfg = WebSocketConfig::default()
        .max_message_size(Some(hermes_protocol::adapter::MAX_FRAME_BYTES + 64 * 1024))
        .max_frame_size(Some(hermes_protocol::adapter::MAX_FRAME_BYTES + 64 * 1024));
    let connector = Connector::Rustls(crate::tls::client_config());
    let fut = tokio_tungstenite::connect_async_tls_with_config(url.as_str(), Some(cfg), false, Some(connector));
    match tokio::time::timeout(timeout, fut).await {
        Err(_) => Err((None, DisconnectCode::Timeout, format!("no answer within {} s", timeout.as_secs()))),
        Ok(Err(tungstenite::Error::Http(resp))) => {
            let status = resp.status().as_u16();
            Err((Some(status), DisconnectCode::Http, format!("the server refused the connection (HTTP {status})")))
        }
        Ok(Err(e)) => {
            let (code, text) = socket_error(&e);
            Err((None, code, text))
        }
        Ok(Ok((ws, _))) => Ok(ws),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typing(n: usize) -> Vec<Event> {
        (0..n).map(|i| Event::Typing { on: i % 2 == 0 }).collect()
    }

    /// Batches come out one event at a time, in order, whichever way they are taken, and each emptied batch vector
    /// goes back to the engine's spares (issue #4) — at most `MAX_SPARE` of them, and only empty ones.
    #[tokio::test]
    async fn events_come_in_order_and_emptied_batches_are_reused() {
        let (tx, rx) = mpsc::channel(8);
        let spare = Spare::default();
        let mut events = Events { rx, batch: VecDeque::new(), spare: spare.clone() };
        let mut sent = Vec::new();
        for n in [3, 1, 2, 5, 4, 2, 1] {
            let mut b = spare.take();
            b.extend(typing(n));
            sent.extend(b.iter().cloned());
            tx.send(b).await.unwrap();
        }
        let mut got = vec![events.recv().await.unwrap(), events.try_recv().unwrap()];
        got.extend(events.recv_batch().await);
        drop(tx);
        assert_eq!(events.recv().await, None);
        assert_eq!(got, sent);
        let kept = spare.0.lock().unwrap();
        assert!(!kept.is_empty() && kept.len() <= MAX_SPARE);
        assert!(kept.iter().all(|v| v.is_empty() && v.capacity() > 0));
        drop(kept);
        spare.put(typing(1));
        spare.put(Vec::with_capacity(4 * MAX_BATCH));
        assert!(spare.0.lock().unwrap().iter().all(|v| v.is_empty() && v.capacity() <= 2 * MAX_BATCH));
    }
}
