//! The HTTP side: WebSocket upgrades (adapter, v3) and media routes (G-9, A-20 `url`).

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::multipart::MultipartRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::{DefaultBodyLimit, Multipart, Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use hermes_protocol::media::safe_filename;
use serde_json::json;

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

/// G-9: `POST /api/media/upload`, multipart with a part `file`, Bearer required.
async fn upload(
    State(sh): State<Arc<Shared>>,
    headers: HeaderMap,
    multipart: Result<Multipart, MultipartRejection>,
) -> Response {
    if bearer(&headers).and_then(|t| sh.v3_user(t)).is_none() {
        return err(StatusCode::UNAUTHORIZED, "unauthorized", "missing or invalid bearer token");
    }
    let max = sh.cfg.max_media_bytes;
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max.saturating_add(64 * 1024)) {
        return err(StatusCode::PAYLOAD_TOO_LARGE, "file_too_large", "file over the limit");
    }
    let mut mp = match multipart {
        Ok(m) => m,
        Err(e) => return err(StatusCode::BAD_REQUEST, "upload_failed", &e.body_text()),
    };
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
        let mut bytes = Vec::new();
        loop {
            match field.chunk().await {
                Ok(Some(c)) => {
                    if !sh.cfg.upload_delay.is_zero() {
                        tokio::time::sleep(sh.cfg.upload_delay).await;
                    }
                    if bytes.len() as u64 + c.len() as u64 > max {
                        return err(StatusCode::PAYLOAD_TOO_LARGE, "file_too_large", "file over the limit");
                    }
                    bytes.extend_from_slice(&c);
                }
                Ok(None) => break,
                Err(e) => return err(StatusCode::BAD_REQUEST, "upload_failed", &e.body_text()),
            }
        }
        return match sh.store_file(&name, &mime, &bytes).await {
            Ok((id, f)) => {
                let body = json!({ "media_id": id, "name": f.name, "type": f.mime, "size": f.size });
                lock(&sh.media).insert(id, f);
                Json(body).into_response()
            }
            Err(e) => {
                tracing::warn!("upload: could not store: {e}");
                err(StatusCode::INTERNAL_SERVER_ERROR, "internal", "could not store the file")
            }
        };
    }
}

async fn serve_file(f: StoredFile) -> Response {
    match tokio::fs::read(&f.path).await {
        Ok(bytes) => {
            let mut r = bytes.into_response();
            let h = r.headers_mut();
            if let Ok(v) = HeaderValue::from_str(&f.mime) {
                h.insert(header::CONTENT_TYPE, v);
            }
            let disp = format!("attachment; filename=\"{}\"", f.name.replace(['"', '\\'], "_"));
            if let Ok(v) = HeaderValue::from_str(&disp) {
                h.insert(header::CONTENT_DISPOSITION, v);
            }
            r
        }
        Err(_) => err(StatusCode::NOT_FOUND, "not_found", "no such media"),
    }
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
