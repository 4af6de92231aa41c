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

// ================================================================== G-9 decision: size limits; G-4b: video fields

const MIB: u64 = 1024 * 1024;

fn send_file(path: &std::path::Path) -> Command {
    Command::File { path: path.to_string_lossy().into(), caption: None, id: None, session: None, retry_of: None }
}

fn write_file(path: &std::path::Path, size: u64) {
    let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
    std::fs::write(path, data).unwrap();
}

/// What is in the media folder (hidden partial files included).
fn media_files(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir.join("media"))
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// A file the gateway stores (as the agent's bridge would upload it), described for a v3 media message.
async fn stored_on_gateway(
    srv: &hermes_devserver::Running,
    jwt: &str,
    dir: &std::path::Path,
    name: &str,
    size: u64,
) -> hermes_protocol::v3::MediaDescriptor {
    let path = dir.join(name);
    write_file(&path, size);
    let origin = url::Url::parse(&srv.http_base()).unwrap();
    let up = hermes_client::http::Http::new()
        .upload(&origin, jwt, &path, name, "application/octet-stream", |_, _| {})
        .await
        .expect("stored on the gateway");
    std::fs::remove_file(&path).unwrap();
    hermes_protocol::v3::MediaDescriptor {
        id: up.media_id,
        name: Some(name.into()),
        mime: "application/octet-stream".into(),
        size,
        width: None,
        height: None,
        duration: None,
    }
}

fn agent_file(id: &str, media: &hermes_protocol::v3::MediaDescriptor) -> hermes_protocol::v3::Envelope {
    hermes_protocol::v3::Envelope::media(id, "hermes", "11111111-2222-4333-8444-555555555555", 1, None, media)
}

/// G-9 decision: v3 has no client-side limit — a file over the adapter's 8 MiB goes to the gateway, which takes it
/// here (its limit is 32 MiB) — and the agent's files over 8 MiB are downloaded too.
#[tokio::test]
async fn g9_files_over_8_mib_go_both_ways_when_the_gateway_takes_them() {
    let srv =
        hermes_devserver::start(ServerConfig { max_media_bytes: 32 * MIB, ..ServerConfig::fast() }).await.unwrap();
    let jwt = srv.mint_v3_token("dave").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.v3_url(), Dialect::V3, &jwt, "desktop-v5", dir.path()));
    c.ready().await;
    let path = dir.path().join("big.bin");
    write_file(&path, 9 * MIB);
    let id = c.handle.command(send_file(&path)).await.expect("no 8 MiB cap on v3").unwrap();
    c.wait_forget(60, |e| matches!(e, Event::Delivered { id: i } if *i == id)).await;
    let log = srv.log();
    match &log.iter().find(|e| e.id == id).expect("the media message reached the agent").item {
        LogItem::V3 { media: Some(m), .. } => assert_eq!(m.size, 9 * MIB),
        other => panic!("{other:?}"),
    }
    // agent → app: 9 MiB, over the adapter's 8 MiB, under the 2 GiB download cap
    let media = stored_on_gateway(&srv, &jwt, dir.path(), "report.bin", 9 * MIB).await;
    assert_eq!(srv.send_to_user("dave", &agent_file("f-9mib", &media)), 1);
    match c
        .wait_forget(60, |e| matches!(e, Event::Media { id, .. } | Event::Error { id: Some(id), .. } if id == "f-9mib"))
        .await
    {
        Event::Media { path, size, .. } => {
            assert_eq!(size, 9 * MIB);
            assert_eq!(std::fs::metadata(path).unwrap().len(), 9 * MIB);
        }
        other => panic!("{other:?}"),
    }
}

/// G-9 decision: the gateway's refusal (HTTP 413 `file_too_large`) is shown on that message, with its code kept;
/// the file is refused for good (not retried) and never announced to the agent.
#[tokio::test]
async fn g9_the_gateways_file_too_large_is_shown_on_that_message_and_not_retried() {
    let srv = hermes_devserver::start(ServerConfig { max_media_bytes: MIB, ..ServerConfig::fast() }).await.unwrap();
    let jwt = srv.mint_v3_token("frank").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.v3_url(), Dialect::V3, &jwt, "desktop-v6", dir.path()));
    c.ready().await;
    // over the limit by a little (found while the gateway reads the body) and by a lot (refused from its length)
    for (name, size) in [("a-bit-big.bin", MIB + 200 * 1024), ("huge.bin", 24 * MIB)] {
        let path = dir.path().join(name);
        write_file(&path, size);
        let id = c.handle.command(send_file(&path)).await.expect("accepted by the app").unwrap();
        let ev = c
            .wait(30, |e| {
                matches!(e, Event::Rejected { id: Some(i), .. } | Event::Error { id: Some(i), .. } | Event::Delivered { id: i } if *i == id)
            })
            .await;
        match ev {
            Event::Rejected { code, reason, .. } => {
                assert_eq!(code, "file_too_large", "{name}: {reason}");
                assert!(reason.contains("over its size limit"), "{name}: {reason}");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    let later = c.drain(1500).await;
    assert!(
        !later.iter().any(|e| matches!(e, Event::Error { code, .. } if code == "upload_failed")),
        "a refusal is not retried: {later:?}"
    );
    assert!(srv.log().is_empty(), "nothing reached the agent");
}

/// G-9 decision: a received file over the download cap (a setting) stops with an error on that message and leaves
/// no file, partial or whole; a file under the cap still arrives.
#[tokio::test]
async fn g9_a_received_file_over_the_download_cap_stops_and_leaves_no_file() {
    let srv = gateway().await;
    let jwt = srv.mint_v3_token("erin").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&srv.v3_url(), Dialect::V3, &jwt, "desktop-v7", dir.path());
    cfg.max_download_bytes = 2 * MIB;
    let mut c = start(cfg);
    c.ready().await;
    let big = stored_on_gateway(&srv, &jwt, dir.path(), "big.bin", 3 * MIB).await;
    let small = stored_on_gateway(&srv, &jwt, dir.path(), "small.bin", MIB).await;
    srv.send_to_user("erin", &agent_file("f-big", &big));
    match c
        .wait(20, |e| matches!(e, Event::Media { id, .. } | Event::Error { id: Some(id), .. } if id == "f-big"))
        .await
    {
        Event::Error { code, text, .. } => {
            assert_eq!(code, "download_too_big", "{text}");
            assert!(text.contains("download limit of 2 MiB"), "{text}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(media_files(dir.path()), Vec::<String>::new(), "no file left");
    srv.send_to_user("erin", &agent_file("f-small", &small));
    c.wait(20, |e| matches!(e, Event::Media { id, .. } if id == "f-small")).await;
    assert_eq!(media_files(dir.path()), vec!["small.bin"]);
}

/// A TCP proxy in front of the gateway that answers `GET /media/…` itself: the headers of a 4 MiB file, its first
/// MiB, then nothing more (a stalled transfer); everything else passes through.
async fn stalling_download_proxy(target: std::net::SocketAddr) -> std::net::SocketAddr {
    use tokio::io::AsyncWriteExt as _;
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = l.accept().await {
            tokio::spawn(async move {
                const GET: &[u8] = b"GET /media/";
                let mut head = [0u8; 16];
                let mut n = 0;
                for _ in 0..50 {
                    n = inbound.peek(&mut head).await.unwrap_or(0);
                    if n >= GET.len() || n == 0 {
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                }
                if head[..n].starts_with(GET) {
                    let h = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", 4 * MIB);
                    let _ = inbound.write_all(h.as_bytes()).await;
                    let _ = inbound.write_all(&vec![9u8; MIB as usize]).await;
                    std::future::pending::<()>().await;
                }
                let Ok(mut out) = tokio::net::TcpStream::connect(target).await else { return };
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut out).await;
            });
        }
    });
    addr
}

/// G-9: a download is cancellable, and a cancelled one leaves no file behind.
#[tokio::test]
async fn g9_a_cancelled_download_leaves_no_file() {
    let srv = gateway().await;
    let jwt = srv.mint_v3_token("gina").unwrap();
    let proxy = stalling_download_proxy(srv.addr()).await;
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&format!("ws://{proxy}/ws/app"), Dialect::V3, &jwt, "desktop-v8", dir.path()));
    c.ready().await;
    let media = hermes_protocol::v3::MediaDescriptor {
        id: "med_slow".into(),
        name: Some("slow.bin".into()),
        mime: "application/octet-stream".into(),
        size: 4 * MIB,
        width: None,
        height: None,
        duration: None,
    };
    srv.send_to_user("gina", &agent_file("f-slow", &media));
    // progress is reported every 256 KiB: the last report of the first MiB is at 768 KiB or more
    c.wait(20, |e| matches!(e, Event::Progress { id, done, .. } if id == "f-slow" && *done >= MIB / 2)).await;
    assert_eq!(media_files(dir.path()).len(), 1, "the partial file is there while downloading");
    c.handle.command(Command::Cancel { id: "f-slow".into() }).await.expect("cancelled");
    c.wait(5, |e| matches!(e, Event::Error { code, id: Some(id), .. } if code == "cancelled" && id == "f-slow")).await;
    // the aborted task removes its file as it ends: wait for that state
    for _ in 0..100 {
        if media_files(dir.path()).is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(media_files(dir.path()), Vec::<String>::new(), "no partial file left after a cancel");
    assert!(!c.seen.iter().any(|e| matches!(e, Event::Media { .. })));
}

/// G-4b: a video's `width`, `height` and `duration` are filled from its MP4/MOV/WebM container.
#[tokio::test]
async fn g4b_video_uploads_carry_width_height_and_duration() {
    let srv = gateway().await;
    let jwt = srv.mint_v3_token("hana").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&srv.v3_url(), Dialect::V3, &jwt, "desktop-v9", dir.path()));
    c.ready().await;
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for (name, mime, w, h, secs) in [
        ("clip.mp4", "video/mp4", 160, 90, 2.0),
        ("clip.mov", "video/quicktime", 96, 64, 3.0),
        ("clip.webm", "video/webm", 128, 72, 1.5),
    ] {
        let id = c.handle.command(send_file(&fixtures.join(name))).await.unwrap().unwrap();
        c.wait(20, |e| matches!(e, Event::Delivered { id: i } if *i == id)).await;
        let log = srv.log();
        match &log.iter().find(|e| e.id == id).expect("logged").item {
            LogItem::V3 { kind, media: Some(m), .. } => {
                assert_eq!((kind.as_str(), m.mime.as_str()), ("video", mime), "{name}");
                assert_eq!((m.width, m.height), (Some(w), Some(h)), "{name}");
                let d = m.duration.unwrap_or_else(|| panic!("{name}: no duration"));
                assert!((d - secs).abs() < 0.1, "{name}: {d} s");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}
