//! The engine against the reference gateway on loopback (Hermes Chat v3). Requirement ids in the test names.

mod common;

use common::*;
use hermes_devserver::{Config as ServerConfig, LogItem};
use hermes_protocol::{Command, Dialect, Event};

async fn gateway() -> hermes_devserver::Running {
    hermes_devserver::start(ServerConfig::fast()).await.expect("devserver")
}

#[tokio::test]
async fn g3_g4_g5_g6_text_and_streamed_replies_in_our_session() {
    let srv = gateway().await;
    let jwt = srv.mint_v3_token("alice").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&srv.v3_url(), Dialect::V3, &jwt, "desktop-v1", dir.path());
    cfg.default_session = "11111111-2222-4333-8444-555555555555".into();
    let mut c = start(cfg);
    c.ready().await;
    let id = c.text("hi gateway").await;
    c.wait(5, |e| matches!(e, Event::Delivered { id: i } if *i == id)).await;
    let reply = if c.seen.iter().any(|e| matches!(e, Event::Message { final_: true, .. })) {
        c.seen
            .iter()
            .find_map(|e| match e {
                Event::Message { text, final_: true, .. } => Some(text.to_string()),
                _ => None,
            })
            .unwrap()
    } else {
        c.final_reply().await
    };
    assert!(reply.contains("hi gateway"), "{reply}");
    c.text("/stream").await;
    match c.wait(10, |e| matches!(e, Event::Message { final_: true, text, .. } if text.len() > 100)).await {
        Event::Message { session, .. } => assert_eq!(session.as_deref(), Some("11111111-2222-4333-8444-555555555555")),
        _ => unreachable!(),
    }
    // G-4: `from` is the JWT's sub; the message went to our session
    let log = srv.log();
    let first = log.iter().find(|e| e.id == id).expect("logged");
    match &first.item {
        LogItem::V3 { kind, session, text, .. } => {
            assert_eq!(
                (kind.as_str(), session.as_str(), text.as_deref()),
                ("text", "11111111-2222-4333-8444-555555555555", Some("hi gateway"))
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn g3_refused_upgrade_is_access_denied_without_retry() {
    let srv = gateway().await;
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.v3_url(), Dialect::V3, "not-a-valid-token", "desktop-v2", dir.path()));
    match c.wait(5, |e| matches!(e, Event::AccessDenied { .. })).await {
        Event::AccessDenied { reason } => assert!(reason.contains("401"), "{reason}"),
        _ => unreachable!(),
    }
    c.drain(2200).await;
    assert_eq!(c.seen.iter().filter(|e| matches!(e, Event::Connecting { .. })).count(), 1);
}

#[tokio::test]
async fn g9_upload_over_http_then_media_message_and_download_of_agent_files() {
    let srv = gateway().await;
    let jwt = srv.mint_v3_token("bob").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.v3_url(), Dialect::V3, &jwt, "desktop-v3", dir.path()));
    c.ready().await;
    // a real PNG header so width/height are filled (G-4b)
    let (png, _, _) = hermes_devserver::assets::demo_png();
    let path = dir.path().join("chart.png");
    std::fs::write(&path, &png).unwrap();
    let id = c
        .handle
        .command(Command::File {
            path: path.to_string_lossy().into(),
            caption: Some("look".into()),
            id: None,
            session: None,
            retry_of: None,
        })
        .await
        .unwrap()
        .unwrap();
    c.wait(10, |e| matches!(e, Event::Delivered { id: i } if *i == id)).await;
    assert!(
        c.seen.iter().any(|e| matches!(e, Event::Progress { id: i, done, total, .. } if *i == id && done == total))
    );
    let log = srv.log();
    let entry = log.iter().find(|e| e.id == id).expect("media message logged");
    match &entry.item {
        LogItem::V3 { kind, text, media: Some(m), .. } => {
            assert_eq!(kind, "image");
            assert_eq!(text.as_deref(), Some("look"));
            assert_eq!(m.size, png.len() as u64);
            assert!(m.width.is_some() && m.height.is_some(), "G-4b: image size from the header");
        }
        other => panic!("{other:?}"),
    }
    // agent → app: files are downloaded over HTTP into the media folder
    c.text("/media").await;
    let ev = c.wait(15, |e| matches!(e, Event::Media { .. })).await;
    if let Event::Media { path, size, .. } = ev {
        assert!(std::path::Path::new(&path).starts_with(dir.path().join("media")));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), size);
    }
}

/// A TCP proxy in front of the gateway that refuses the first `fail` upload requests with HTTP 503 (a passing
/// failure) and passes everything else through. Returns its address and the number of uploads it saw.
async fn flaky_upload_proxy(
    target: std::net::SocketAddr,
    fail: usize,
) -> (std::net::SocketAddr, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::AsyncWriteExt as _;
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let uploads = std::sync::Arc::new(AtomicUsize::new(0));
    let seen = uploads.clone();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = l.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                const UPLOAD: &[u8] = b"POST /api/media/upload";
                let mut head = [0u8; 32];
                let mut n = 0;
                for _ in 0..50 {
                    n = inbound.peek(&mut head).await.unwrap_or(0);
                    if n >= UPLOAD.len() || n == 0 {
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                }
                if head[..n].starts_with(UPLOAD) && seen.fetch_add(1, Ordering::SeqCst) < fail {
                    let refusal = b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
                    let _ = inbound.write_all(refusal).await;
                    let _ = inbound.shutdown().await;
                    return;
                }
                let Ok(mut out) = tokio::net::TcpStream::connect(target).await else { return };
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut out).await;
            });
        }
    });
    (addr, uploads)
}

/// G-9, G-10: an upload that fails for a passing reason (HTTP 503 here) is tried again by itself after a backoff
/// delay, on the same connection — not only after the next `ready` — and the agent gets the file once.
#[tokio::test]
async fn g9_g10_a_failed_upload_is_retried_after_a_backoff_delay_without_reconnecting() {
    let srv = gateway().await;
    let jwt = srv.mint_v3_token("carol").unwrap();
    let (proxy, uploads) = flaky_upload_proxy(srv.addr(), 1).await;
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&format!("ws://{proxy}/ws/app"), Dialect::V3, &jwt, "desktop-v4", dir.path()));
    c.ready().await;
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, b"retry me").unwrap();
    let id = c
        .handle
        .command(Command::File {
            path: path.to_string_lossy().into(),
            caption: None,
            id: None,
            session: None,
            retry_of: None,
        })
        .await
        .unwrap()
        .unwrap();
    c.wait(10, |e| matches!(e, Event::Error { code, id: Some(i), .. } if code == "upload_failed" && *i == id)).await;
    let failed_at = std::time::Instant::now();
    c.wait(10, |e| matches!(e, Event::Delivered { id: i } if *i == id)).await;
    assert!(
        failed_at.elapsed() >= std::time::Duration::from_millis(700),
        "retried after the first backoff step (1 s ± 20 %), not at once: {:?}",
        failed_at.elapsed()
    );
    assert_eq!(c.seen.iter().filter(|e| matches!(e, Event::Ready { .. })).count(), 1, "no reconnect was needed");
    assert_eq!(uploads.load(std::sync::atomic::Ordering::SeqCst), 2, "one refused upload, one retry");
    assert_eq!(srv.log().iter().filter(|e| e.id == id).count(), 1, "the agent got the media message once");
}
