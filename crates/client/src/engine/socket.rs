//! The WebSocket: opening it, writing frames (a file's frame straight from disk), and handing what is read to the
//! session.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_util::SinkExt as _;
use hermes_protocol::DisconnectCode;
use tokio_tungstenite::Connector;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Message};
use tracing::{info, warn};
use url::Url;

use super::{DialError, Engine, Ws, now};

/// Bytes of a file read and encoded per WebSocket fragment (a multiple of 3: no base64 padding inside a frame).
const FILE_CHUNK: usize = 768 * 1024;

impl Engine {
    pub(super) async fn write(&mut self, ws: &mut Option<Ws>, msg: Message) {
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
    pub(super) async fn write_file_frame(
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

    pub(super) fn on_socket(
        &mut self,
        msg: Option<Result<Message, tungstenite::Error>>,
        ws: &mut Option<Ws>,
        t: std::time::Instant,
    ) {
        match msg {
            Some(Ok(Message::Text(text))) => {
                self.session.handle_text(text.as_str(), t);
                let (held, peak) = self.session.media_buffered_bytes();
                self.gauge.held.store(held, Ordering::Relaxed);
                self.gauge.peak.store(peak, Ordering::Relaxed);
            }
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
pub(super) fn io_text(e: &std::io::Error) -> String {
    let t = e.to_string();
    match t.find(" (os error") {
        Some(i) => t[..i].to_lowercase(),
        None => t,
    }
}

/// Open the WebSocket (TLS through the shared rustls config). Frames over 16 MiB are refused.
pub(super) async fn dial(url: Url, timeout: Duration) -> Result<Ws, DialError> {
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
