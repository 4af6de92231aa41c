//! The adapter protocol at `/ws` (A-1…A-33).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use hermes_protocol::adapter::{DecodeError, Device, Down, Up, decode_up, encode};
use hermes_protocol::media::safe_filename;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

use crate::cards::Answer;
use crate::demo::{self, AdapterJob};
use crate::log::{Dialect, LogItem};
use crate::{Out, Shared, ct_eq, lock};

/// Close code for "access denied".
pub(crate) const CLOSE_POLICY: u16 = 1008;
/// Close code for a protocol violation (not `hello` first, A-2).
pub(crate) const CLOSE_PROTOCOL: u16 = 1002;

const KNOWN_UP: [&str; 5] = ["hello", "text", "audio", "media", "prompt"];

pub(crate) fn error(code: &str, text: impl Into<String>, id: Option<String>) -> Down {
    Down::Error { code: code.to_string(), text: Some(text.into()), id }
}

async fn send(sock: &mut WebSocket, frame: &Down) -> bool {
    sock.send(Message::Text(encode(frame).into())).await.is_ok()
}

pub(crate) async fn close(sock: &mut WebSocket, code: u16, reason: &str) {
    let reason = truncate(reason, 123);
    let _ = sock.send(Message::Close(Some(CloseFrame { code, reason: reason.into() }))).await;
    // Give the peer a moment to answer the close handshake; then drop.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), async {
        while let Some(Ok(m)) = sock.recv().await {
            if matches!(m, Message::Close(_)) {
                break;
            }
        }
    })
    .await;
}

/// What the next incoming message is.
enum Incoming {
    Text(String),
    Binary,
    Closed,
}

async fn next(sock: &mut WebSocket) -> Incoming {
    loop {
        match sock.recv().await {
            Some(Ok(Message::Text(t))) => return Incoming::Text(t.to_string()),
            Some(Ok(Message::Binary(_))) => return Incoming::Binary,
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue, // pongs are answered by the WS layer
            Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return Incoming::Closed,
        }
    }
}

/// Whether the raw query string carries a `token` parameter (A-2: not accepted).
pub(crate) fn query_has_token(query: Option<&str>) -> bool {
    query.is_some_and(|q| q.split('&').any(|kv| kv.split('=').next() == Some("token")))
}

/// At most `max` bytes of `s`, cut at a char boundary (close reasons are limited to 123 bytes).
pub(crate) fn truncate(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// Id of a malformed frame, for the `error{id}` (only on the error path).
fn frame_id(text: &str) -> Option<String> {
    let v: Value = serde_json::from_str(text).ok()?;
    v.get("id").or_else(|| v.get("prompt_id")).and_then(Value::as_str).map(str::to_string)
}

pub(crate) async fn connection(sh: Arc<Shared>, mut sock: WebSocket, token_in_url: bool) {
    if token_in_url {
        tracing::info!("adapter: refused a connection with ?token= in the URL (A-2)");
        let text = "the token goes in hello, never in the URL (?token= is not accepted)";
        send(&mut sock, &error("auth_failed", text, None)).await;
        close(&mut sock, CLOSE_POLICY, "token in URL is not accepted").await;
        return;
    }
    let mut stop = sh.shutdown.subscribe();
    let first = tokio::select! {
        r = tokio::time::timeout(sh.cfg.hello_timeout, next(&mut sock)) => r,
        _ = crate::stopped(&mut stop) => return,
    };
    let text = match first {
        Ok(Incoming::Text(t)) => t,
        Ok(Incoming::Binary) => {
            send(&mut sock, &error("bad_frame", "the first frame must be hello", None)).await;
            close(&mut sock, CLOSE_PROTOCOL, "hello expected").await;
            return;
        }
        Ok(Incoming::Closed) => return,
        Err(_) => {
            send(&mut sock, &error("bad_frame", "no hello in time", None)).await;
            close(&mut sock, CLOSE_PROTOCOL, "hello expected").await;
            return;
        }
    };
    let device = match decode_up(&text) {
        Ok(Up::Hello { token, device }) => {
            if !ct_eq(token.as_bytes(), sh.cfg.token.as_bytes()) {
                tracing::info!(device = %device.id, "adapter: wrong token");
                send(&mut sock, &error("auth_failed", "wrong token", None)).await;
                close(&mut sock, CLOSE_POLICY, "wrong token").await;
                return;
            }
            if device.id.is_empty() {
                send(&mut sock, &error("bad_frame", "device.id is empty", None)).await;
                close(&mut sock, CLOSE_PROTOCOL, "device.id is empty").await;
                return;
            }
            if let Some(allowed) = &sh.cfg.allowed_devices
                && !allowed.contains(&device.id)
            {
                tracing::info!(device = %device.id, "adapter: device not allowed");
                let reason =
                    format!("device {} is not approved: hermes pairing approve mobile {}", device.id, device.id);
                send(&mut sock, &error("auth_failed", reason.clone(), None)).await;
                // A close reason is at most 123 bytes.
                close(&mut sock, CLOSE_POLICY, &truncate(&reason, 120)).await;
                return;
            }
            device
        }
        _ => {
            tracing::info!("adapter: first frame was not hello");
            send(&mut sock, &error("bad_frame", "the first frame must be hello", None)).await;
            close(&mut sock, CLOSE_PROTOCOL, "hello expected").await;
            return;
        }
    };
    run(sh, sock, device).await;
}

async fn run(sh: Arc<Shared>, mut sock: WebSocket, device: Device) {
    let dev = device.id.clone();
    let (tx, mut rx) = mpsc::unbounded_channel::<Out>();
    let conn = sh.register(Dialect::Adapter, &dev, tx.clone());
    // the real adapter announces only `max_media_bytes`; tests choose other shapes (Config::capabilities).
    let ready = Down::Ready {
        session: format!("mobile:{dev}"),
        avatar_url: sh.cfg.avatar_url.clone(),
        capabilities: sh.cfg.ready_capabilities(),
    };
    tracing::info!(device = %dev, conn, "adapter: ready");
    if send(&mut sock, &ready).await {
        sh.readies.fetch_add(1, Ordering::Relaxed);
        let jobs = if sh.cfg.demo {
            let (jtx, jrx) = mpsc::unbounded_channel();
            tokio::spawn(demo::adapter_worker(sh.clone(), dev.clone(), tx.clone(), jrx));
            Some(jtx)
        } else {
            None
        };
        drop(tx);
        let mut stop = sh.shutdown.subscribe();
        loop {
            tokio::select! {
                _ = crate::stopped(&mut stop) => {
                    close(&mut sock, 1001, "server shutting down").await;
                    break;
                }
                out = rx.recv() => match out {
                    Some(Out::Frame(f)) => {
                        if sock.send(Message::Text(f.into())).await.is_err() {
                            break;
                        }
                    }
                    Some(Out::Close(code, reason)) => {
                        close(&mut sock, code, &reason).await;
                        break;
                    }
                    Some(Out::Kick) | None => break, // dropping the socket: no close frame
                },
                msg = next(&mut sock) => match msg {
                    Incoming::Text(t) => {
                        if !handle(&sh, &mut sock, &dev, conn, jobs.as_ref(), t).await {
                            break;
                        }
                    }
                    Incoming::Binary => {
                        if !send(&mut sock, &error("bad_frame", "binary frames are not part of the protocol", None)).await {
                            break;
                        }
                    }
                    Incoming::Closed => break,
                },
            }
        }
    }
    sh.unregister(conn);
    lock(&sh.uploads).drop_conn(&dev, conn);
    tracing::info!(device = %dev, conn, "adapter: connection ended");
}

/// Handle one uplink text frame. Everything that must happen before the next frame is read (dedup, log) happens
/// here, so the WebSocket Pong that follows confirms it. Returns false when the socket is gone.
async fn handle(
    sh: &Shared,
    sock: &mut WebSocket,
    dev: &str,
    conn: u64,
    jobs: Option<&mpsc::UnboundedSender<AdapterJob>>,
    text: String,
) -> bool {
    let job = |j: AdapterJob| {
        if let Some(tx) = jobs {
            let _ = tx.send(j);
        }
    };
    let up = match decode_up(&text) {
        Ok(up) => up,
        Err(DecodeError::TooLarge { size, limit }) => {
            return send(sock, &error("too_big", format!("frame is {size} bytes; at most {limit}"), None)).await;
        }
        Err(DecodeError::Malformed { t, .. }) if !KNOWN_UP.contains(&t.as_str()) && t != "?" => {
            // say we did not understand, stay connected.
            tracing::debug!(%t, "adapter: unsupported frame");
            return send(sock, &error("unsupported_frame", format!("unknown frame type {t:?}"), None)).await;
        }
        Err(e) => {
            tracing::debug!(device = %dev, "adapter: bad frame: {e}");
            return send(sock, &error("bad_frame", e.to_string(), frame_id(&text))).await;
        }
    };
    drop(text);
    match up {
        Up::Hello { .. } => send(sock, &error("bad_frame", "already greeted: hello comes once", None)).await,
        Up::Text { id, text, reply_to } => {
            let item = LogItem::Text { text: text.clone(), reply_to };
            if sh.log.accept(Dialect::Adapter, dev, &id, item) {
                job(AdapterJob::Text { id, text });
            } else {
                tracing::debug!(device = %dev, %id, "adapter: repeated text dropped (A-6)");
            }
            true
        }
        Up::Audio { id, format, data, text } => {
            if sh.log.repeat(Dialect::Adapter, dev, &id) {
                return true;
            }
            use base64::Engine as _;
            let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data.as_bytes()) else {
                return send(sock, &error("bad_frame", "audio: invalid base64", Some(id))).await;
            };
            // audio up to 8 MiB, whatever the per-file media limit
            let limit = hermes_protocol::session::MAX_AUDIO_BYTES;
            if bytes.len() > limit {
                let t = format!("audio is {} bytes; at most {limit}", bytes.len());
                return send(sock, &error("too_big", t, Some(id))).await;
            }
            let secs = if format.eq_ignore_ascii_case("wav") { crate::assets::wav_duration(&bytes) } else { None };
            let item = LogItem::Audio {
                bytes: bytes.len() as u64,
                sha256: hex::encode(Sha256::digest(&bytes)),
                format,
                text,
                duration_secs: secs,
            };
            if sh.log.accept(Dialect::Adapter, dev, &id, item) {
                job(AdapterJob::Audio { secs });
            }
            true
        }
        Up::Media(m) => {
            if !sh.cfg.upload_delay.is_zero() {
                tokio::time::sleep(sh.cfg.upload_delay).await;
            }
            if sh.log.seen(Dialect::Adapter, dev, &m.id) {
                // a resent file that was already assembled; one repeat per resent series (its last piece).
                if m.part.checked_add(1) == Some(m.parts) {
                    sh.log.repeat(Dialect::Adapter, dev, &m.id);
                }
                return true;
            }
            let id = m.id.clone();
            let outcome = lock(&sh.uploads).handle(dev, conn, m);
            match outcome {
                Err(e) => {
                    tracing::debug!(device = %dev, %id, code = e.code, "adapter: media refused: {}", e.text);
                    send(sock, &error(e.code, e.text, Some(id))).await
                }
                Ok(crate::uploads::Outcome::Complete(f)) => {
                    let size = f.bytes.len() as u64;
                    let sha = hex::encode(Sha256::digest(&f.bytes));
                    let safe = safe_filename(&f.filename, Some(&f.mime));
                    if let Err(e) =
                        tokio::fs::write(sh.media_dir.join(format!("{}-{safe}", uuid::Uuid::new_v4())), &f.bytes).await
                    {
                        tracing::warn!("adapter: could not keep a received file: {e}");
                    }
                    let item = LogItem::Media {
                        kind: f.kind,
                        filename: f.filename,
                        mime: f.mime,
                        caption: f.caption,
                        size,
                        sha256: sha,
                        parts: f.parts,
                    };
                    if sh.log.accept(Dialect::Adapter, dev, &f.id, item) {
                        job(AdapterJob::Media { filename: safe, size });
                    }
                    true
                }
                Ok(_) => true,
            }
        }
        Up::Prompt { prompt_id, option_id, text } => {
            let answer = lock(&sh.cards).answer(&prompt_id, dev, option_id.as_deref(), text.as_deref());
            match answer {
                Answer::Forbidden => {
                    send(sock, &error("forbidden", "this card was shown to another device", Some(prompt_id))).await
                }
                Answer::Again { done, answered } => {
                    if answered {
                        sh.log.repeat(Dialect::Adapter, dev, &prompt_id);
                    }
                    send(sock, &Down::PromptDone(done)).await
                }
                Answer::Done { done, kind, option_id: chosen, option_label } => {
                    let item = LogItem::PromptAnswer {
                        option_id: chosen.clone(),
                        requested_option_id: option_id,
                        text: text.clone(),
                    };
                    sh.log.accept(Dialect::Adapter, dev, &prompt_id, item);
                    if !send(sock, &Down::PromptDone(done)).await {
                        return false;
                    }
                    job(AdapterJob::Answer { kind, option_id: chosen, label: option_label, text });
                    true
                }
            }
        }
    }
}
