//! The HTTP side: WebSocket upgrades (adapter, v3) and media routes (G-9, A-20 `url`).

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Body;
use axum::extract::multipart::MultipartRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::{DefaultBodyLimit, Multipart, Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use hermes_protocol::media::safe_filename;
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::{Shared, StoredFile, WS_READ_LIMIT, lock};

pub(crate) fn router(sh: Arc<Shared>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/ws", get(adapter_ws))
        .route("/ws/app", get(v3_ws))
        .route("/api/media/upload", post(upload).layer(DefaultBodyLimit::disable()))
        .route("/media/{id}", get(download))
        .route("/files/{name}", get(file))
        .with_state(sh)
}

async fn index() -> &'static str {
    "hermes-devserver: adapter at /ws, Chat v3 at /ws/app?token=<jwt>, media at /api/media/upload and /media/{id}\n"
}

fn err(status: StatusCode, code: &str, text: &str) -> Response {
    (status, Json(json!({ "code": code, "text": text }))).into_response()
}

async fn adapter_ws(
    State(sh): State<Arc<Shared>>,
    RawQuery(q): RawQuery,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let ws = match ws {
        Ok(ws) => ws,
        Err(e) => return e.into_response(),
    };
    let token_in_url = crate::adapter::query_has_token(q.as_deref());
    ws.max_message_size(WS_READ_LIMIT)
        .max_frame_size(WS_READ_LIMIT)
        .on_upgrade(move |sock| crate::adapter::connection(sh, sock, token_in_url))
}

/// Percent-decoding of one query value (`+` is a space). Invalid escapes are kept as they are.
fn percent_decode(s: &str) -> String {
    fn hex(c: u8) -> Option<u8> {
        (c as char).to_digit(16).map(|d| d as u8)
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (b.get(i + 1).copied().and_then(hex), b.get(i + 2).copied().and_then(hex))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn query_param(q: Option<&str>, key: &str) -> Option<String> {
    q?.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        (k == key).then(|| percent_decode(v))
    })
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// G-3: the token is checked before the upgrade; refused → 401.
async fn v3_ws(
    State(sh): State<Arc<Shared>>,
    RawQuery(q): RawQuery,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let token = query_param(q.as_deref(), "token").unwrap_or_default();
    let Some(user) = sh.v3_user(&token) else {
        tracing::info!("v3: upgrade refused (missing or invalid token)");
        return err(StatusCode::UNAUTHORIZED, "unauthorized", "missing or invalid token");
    };
    let ws = match ws {
        Ok(ws) => ws,
        Err(e) => return e.into_response(),
    };
    ws.max_message_size(WS_READ_LIMIT)
        .max_frame_size(WS_READ_LIMIT)
        .on_upgrade(move |sock| crate::v3::connection(sh, sock, user))
}

/// A MIME type from a file name's extension.
fn mime_for_name(name: &str) -> &'static str {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "wav" => "audio/wav",
        "ogg" | "opus" => "audio/ogg",
        "mp3" => "audio/mpeg",
        "m4a" => "audio/mp4",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        "mov" => "video/quicktime",
        "pdf" => "application/pdf",
        "txt" => "text/plain",
        "md" => "text/markdown",
        "csv" => "text/csv",
        "json" => "application/json",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}

/// G-9: `POST /api/media/upload`, multipart with a part `file`, Bearer required. The gateway decides the size limit
/// (G-9 decision: `Config::max_media_bytes` here): a file over it is refused with HTTP 413 and
/// `{"code":"file_too_large"}` — decided from the request's length when it already says so, else as soon as the body
/// passes the limit. The file streams to disk; a refused or broken upload leaves nothing behind.
///
/// Like a well-behaved gateway (nginx's lingering close), the rest of a refused upload is read and discarded before
/// the answer, within bounds ([`DRAIN_MAX_BYTES`], [`DRAIN_MAX_TIME`]): closing a socket with unread data resets the
/// connection, and the client would see a network error instead of the 413.
async fn upload(
    State(sh): State<Arc<Shared>>,
    headers: HeaderMap,
    multipart: Result<Multipart, MultipartRejection>,
) -> Response {
    if bearer(&headers).and_then(|t| sh.v3_user(t)).is_none() {
        return err(StatusCode::UNAUTHORIZED, "unauthorized", "missing or invalid bearer token");
    }
    let max = sh.cfg.max_media_bytes;
    let too_large = || err(StatusCode::PAYLOAD_TOO_LARGE, "file_too_large", &format!("file over the {max}-byte limit"));
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let mut mp = match multipart {
        Ok(m) => m,
        Err(e) => return err(StatusCode::BAD_REQUEST, "upload_failed", &e.body_text()),
    };
    if declared.is_some_and(|n| n > max.saturating_add(64 * 1024)) {
        Drain::new().rest(&mut mp).await;
        return too_large();
    }
    loop {
        let mut field = match mp.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => return err(StatusCode::BAD_REQUEST, "upload_failed", "no part named file"),
            Err(e) => return err(StatusCode::BAD_REQUEST, "upload_failed", &e.body_text()),
        };
        if field.name() != Some("file") {
            continue;
        }
        let raw_name = field.file_name().unwrap_or("").to_string();
        let mime = field
            .content_type()
            .map(str::to_string)
            .filter(|m| !m.is_empty() && m != "application/octet-stream")
            .unwrap_or_else(|| mime_for_name(&raw_name).to_string());
        let name = safe_filename(&raw_name, Some(&mime));
        let id = uuid::Uuid::new_v4().to_string();
        let path = sh.media_dir.join(&id);
        let mut file = match tokio::fs::File::create(&path).await {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!("upload: could not store: {e}");
                return err(StatusCode::INTERNAL_SERVER_ERROR, "internal", "could not store the file");
            }
        };
        let mut size = 0u64;
        let failed = loop {
            match field.chunk().await {
                Ok(Some(c)) => {
                    if !sh.cfg.upload_delay.is_zero() {
                        tokio::time::sleep(sh.cfg.upload_delay).await;
                    }
                    size += c.len() as u64;
                    if size > max {
                        break Some(Outcome::TooLarge);
                    }
                    if let Err(e) = file.write_all(&c).await {
                        tracing::warn!("upload: could not store: {e}");
                        break Some(Outcome::Failed(err(
                            StatusCode::INTERNAL_SERVER_ERROR,
                            "internal",
                            "could not store the file",
                        )));
                    }
                }
                Ok(None) => break None,
                Err(e) => break Some(Outcome::Failed(err(StatusCode::BAD_REQUEST, "upload_failed", &e.body_text()))),
            }
        };
        let failed = match failed {
            None => file.flush().await.err().map(|e| {
                tracing::warn!("upload: could not store: {e}");
                Outcome::Failed(err(StatusCode::INTERNAL_SERVER_ERROR, "internal", "could not store the file"))
            }),
            some => some,
        };
        drop(file);
        if let Some(outcome) = failed {
            let _ = tokio::fs::remove_file(&path).await;
            return match outcome {
                Outcome::Failed(resp) => resp,
                Outcome::TooLarge => {
                    let mut d = Drain::new();
                    if d.part(&mut field).await {
                        drop(field);
                        d.rest(&mut mp).await;
                    }
                    too_large()
                }
            };
        }
        let body = json!({ "media_id": id, "name": name, "type": mime, "size": size });
        lock(&sh.media).insert(id, StoredFile { name, mime, size, path });
        return Json(body).into_response();
    }
}

/// How an upload ended early.
enum Outcome {
    Failed(Response),
    TooLarge,
}

/// At most this much of a refused upload is read and discarded before the answer.
const DRAIN_MAX_BYTES: u64 = 256 * 1024 * 1024;
/// And for at most this long.
const DRAIN_MAX_TIME: std::time::Duration = std::time::Duration::from_secs(30);

/// Reads and discards the rest of a refused request body — what is left of the current part, then every other
/// part — within [`DRAIN_MAX_BYTES`] and [`DRAIN_MAX_TIME`] in all.
struct Drain {
    left: u64,
    deadline: tokio::time::Instant,
}

impl Drain {
    fn new() -> Drain {
        Drain { left: DRAIN_MAX_BYTES, deadline: tokio::time::Instant::now() + DRAIN_MAX_TIME }
    }

    /// The rest of one part; `false` once a bound is reached.
    async fn part(&mut self, f: &mut axum::extract::multipart::Field<'_>) -> bool {
        let left = &mut self.left;
        let read = async {
            while let Ok(Some(c)) = f.chunk().await {
                *left = left.saturating_sub(c.len() as u64);
                if *left == 0 {
                    return false;
                }
            }
            true
        };
        tokio::time::timeout_at(self.deadline, read).await.unwrap_or(false)
    }

    /// Every part still to come.
    async fn rest(&mut self, mp: &mut Multipart) {
        while let Ok(Ok(Some(mut f))) = tokio::time::timeout_at(self.deadline, mp.next_field()).await {
            if !self.part(&mut f).await {
                return;
            }
        }
    }
}

/// A stored file, streamed from disk with its length (a client can show progress and refuse it by size early).
async fn serve_file(f: StoredFile) -> Response {
    let Ok(file) = tokio::fs::File::open(&f.path).await else {
        return err(StatusCode::NOT_FOUND, "not_found", "no such media");
    };
    let len = file.metadata().await.map(|m| m.len()).unwrap_or(f.size);
    let chunks = futures_util::stream::unfold(file, |mut file| async move {
        let mut buf = vec![0u8; 64 * 1024];
        match file.read(&mut buf).await {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok::<_, std::io::Error>(buf), file))
            }
            Err(e) => Some((Err(e), file)),
        }
    });
    let mut r = Body::from_stream(chunks).into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    if let Ok(v) = HeaderValue::from_str(&f.mime) {
        h.insert(header::CONTENT_TYPE, v);
    }
    let disp = format!("attachment; filename=\"{}\"", f.name.replace(['"', '\\'], "_"));
    if let Ok(v) = HeaderValue::from_str(&disp) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    r
}

/// G-9: `GET /media/{id}`, Bearer required.
async fn download(State(sh): State<Arc<Shared>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    if bearer(&headers).and_then(|t| sh.v3_user(t)).is_none() {
        return err(StatusCode::UNAUTHORIZED, "unauthorized", "missing or invalid bearer token");
    }
    let f = lock(&sh.media).get(&id).cloned();
    match f {
        Some(f) => serve_file(f).await,
        None => err(StatusCode::NOT_FOUND, "not_found", "no such media"),
    }
}

/// the adapter's `url` downloads (demo files under unguessable names; no auth, like a signed URL).
async fn file(State(sh): State<Arc<Shared>>, Path(name): Path<String>) -> Response {
    let f = lock(&sh.files).get(&name).cloned();
    match f {
        Some(f) => serve_file(f).await,
        None => err(StatusCode::NOT_FOUND, "not_found", "no such file"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_and_percent_decoding() {
        assert_eq!(query_param(Some("a=1&token=x%2By+z"), "token").as_deref(), Some("x+y z"));
        assert_eq!(query_param(Some("token"), "token").as_deref(), Some(""));
        assert_eq!(query_param(Some("a=1"), "token"), None);
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("%41%"), "A%");
    }
}
