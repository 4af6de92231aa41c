//! Hermes Chat v3 gateway at `/ws/app?token=<jwt>` (G-1…G-11). The token was checked before the upgrade (G-3).

use std::sync::Arc;

use axum::extract::ws::{Message, WebSocket};
use hermes_protocol::v3::{Body, Envelope, decode, encode};
use tokio::sync::mpsc;

use crate::demo::{self, V3Job};
use crate::log::{Dialect, LogItem};
use crate::{Out, Shared};

async fn send(sock: &mut WebSocket, env: &Envelope) -> bool {
    sock.send(Message::Text(encode(env).into())).await.is_ok()
}

pub(crate) async fn connection(sh: Arc<Shared>, mut sock: WebSocket, user: String) {
    let (tx, mut rx) = mpsc::unbounded_channel::<Out>();
    let conn = sh.register(Dialect::V3, &user, tx.clone());
    tracing::info!(%user, conn, "v3: connected");
    let jobs = if sh.cfg.demo {
        let (jtx, jrx) = mpsc::unbounded_channel();
        tokio::spawn(demo::v3_worker(sh.clone(), user.clone(), tx.clone(), jrx));
        Some(jtx)
    } else {
        None
    };
    drop(tx);
    let mut stop = sh.shutdown.subscribe();
    loop {
        tokio::select! {
            _ = crate::stopped(&mut stop) => {
                crate::adapter::close(&mut sock, 1001, "server shutting down").await;
                break;
            }
            out = rx.recv() => match out {
                Some(Out::Frame(f)) => {
                    if sock.send(Message::Text(f.into())).await.is_err() {
                        break;
                    }
                }
                Some(Out::Close(code, reason)) => {
                    crate::adapter::close(&mut sock, code, &reason).await;
                    break;
                }
                Some(Out::Kick) | None => break,
            },
            msg = sock.recv() => match msg {
                Some(Ok(Message::Text(t))) => {
                    if !handle(&sh, &mut sock, &user, jobs.as_ref(), t.as_str()).await {
                        break;
                    }
                }
                Some(Ok(Message::Binary(_))) => tracing::debug!(%user, "v3: binary frame ignored"),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
            },
        }
    }
    sh.unregister(conn);
    tracing::info!(%user, conn, "v3: connection ended");
}

/// One envelope from the app. Dedup and log happen before the next frame is read (G-10).
async fn handle(
    sh: &Shared,
    sock: &mut WebSocket,
    user: &str,
    jobs: Option<&mpsc::UnboundedSender<V3Job>>,
    text: &str,
) -> bool {
    let env = match decode(text) {
        Ok(e) => e,
        Err(e) => {
            tracing::info!(%user, "v3: undecodable message dropped: {e}");
            return true;
        }
    };
    let body = match env.body() {
        Ok(b) => b,
        Err(e) => {
            // G-2: log and drop, keep the connection.
            tracing::info!(%user, "v3: message dropped: {e}");
            return true;
        }
    };
    let id = env.id.clone().unwrap_or_default();
    let session = env.session.clone().unwrap_or_default();
    let job = |j: V3Job| {
        if let Some(tx) = jobs {
            let _ = tx.send(j);
        }
    };
    let item = |text: Option<String>, media| LogItem::V3 {
        kind: env.kind.clone(),
        session: session.clone(),
        reply_to: env.reply_to.clone(),
        text,
        media,
    };
    match body {
        Body::Ping => return send(sock, &Envelope::pong()).await,
        Body::Text { text } => {
            if sh.log.accept(Dialect::V3, user, &id, item(Some(text.clone()), None)) {
                job(V3Job::Text { id, session, text });
            } else {
                tracing::debug!(%user, %id, "v3: repeated message dropped");
            }
        }
        Body::Media { text, media, .. } => {
            if sh.log.accept(Dialect::V3, user, &id, item(text, Some(media.clone()))) {
                job(V3Job::Media { id, session, media });
            }
        }
        Body::Error { code, text } => {
            if env.id.is_some() {
                sh.log.accept(Dialect::V3, user, &id, item(Some(format!("{}: {text}", code.as_str())), None));
            }
        }
        Body::Pong | Body::StreamStart | Body::Stream { .. } | Body::StreamEnd => {
            tracing::debug!(%user, kind = %env.kind, "v3: agent-to-app type from the app ignored");
        }
        Body::Unknown(kind) => tracing::debug!(%user, %kind, "v3: unknown type ignored (G-2)"),
    }
    true
}
