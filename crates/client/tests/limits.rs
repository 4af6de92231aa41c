//! The agent cannot set our limits, through the engine against a raw agent on loopback (a WebSocket peer written
//! here, and a raw HTTP server for `url` media): its `max_media_bytes` of 10^15 is clamped to ours, the buffer
//! for unfinished incoming files stays under its fixed cap (A-19 decision, asserted on the session's own accounting
//! of buffered bytes), and the media folder's quota refuses a file that would go over it, `url` downloads included
//! leaving nothing partial and keeping the caption.

mod common;

use std::path::Path;

use base64::Engine as _;
use common::*;
use futures_util::{SinkExt as _, StreamExt as _};
use hermes_protocol::media::MIB;
use hermes_protocol::{Dialect, Event};
use serde_json::json;
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

const PETA: u64 = 1_000_000_000_000_000;

/// A raw agent: answers `hello` with a `ready` announcing 10^15 bytes per file, then sends every frame it is given.
async fn agent() -> (String, mpsc::UnboundedSender<String>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/ws", l.local_addr().unwrap());
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        let Ok((tcp, _)) = l.accept().await else { return };
        let Ok(ws) = tokio_tungstenite::accept_async(tcp).await else { return };
        let (mut out, mut inp) = ws.split();
        if !matches!(inp.next().await, Some(Ok(Message::Text(_)))) {
            return;
        }
        let ready = json!({"t":"ready","session":"mobile:big","capabilities":{"max_media_bytes":PETA}});
        if out.send(Message::text(ready.to_string())).await.is_err() {
            return;
        }
        tokio::spawn(async move { while let Some(Ok(_)) = inp.next().await {} });
        while let Some(f) = rx.recv().await {
            if out.feed(Message::text(f)).await.is_err() {
                return;
            }
            if rx.is_empty() && out.flush().await.is_err() {
                return;
            }
        }
    });
    (url, tx)
}

/// A raw HTTP/1.1 server answering every request with `len` bytes (Content-Length announced or not).
async fn http_file(len: usize, announce: bool) -> String {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/file.bin", l.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = l.accept().await {
            tokio::spawn(async move {
                if read_request_head(&mut tcp).await.is_none() {
                    return;
                }
                let head = if announce {
                    format!("HTTP/1.1 200 OK\r\ncontent-length: {len}\r\nconnection: close\r\n\r\n")
                } else {
                    "HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n".to_string()
                };
                let _ = tcp.write_all(head.as_bytes()).await;
                let _ = tcp.write_all(&vec![5u8; len]).await;
            });
        }
    });
    base
}

/// A raw HTTP/1.1 server for two downloads side by side: each gets 2 MiB without a length; the first pauses after
/// 512 KiB until the second has asked, so both are under way together.
async fn http_pair() -> String {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/", l.local_addr().unwrap());
    let second = std::sync::Arc::new(tokio::sync::Notify::new());
    tokio::spawn(async move {
        let mut n = 0;
        while let Ok((mut tcp, _)) = l.accept().await {
            n += 1;
            let (first, second) = (n == 1, second.clone());
            if !first {
                second.notify_one();
            }
            tokio::spawn(async move {
                if read_request_head(&mut tcp).await.is_none() {
                    return;
                }
                let _ = tcp.write_all(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n").await;
                let piece = vec![6u8; 64 * 1024];
                for i in 0..32 {
                    if first && i == 8 {
                        second.notified().await;
                    }
                    if tcp.write_all(&piece).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    base
}

/// Everything in the media folder (partials included).
fn files_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

/// A ready engine on a raw agent whose media folder has a quota of `quota` bytes: the engine, the agent's frame
/// sender, the media folder, and the data folder (kept alive for the test).
async fn ready_with_quota(
    quota: u64,
) -> (Client, mpsc::UnboundedSender<String>, std::path::PathBuf, tempfile::TempDir) {
    let (url, tx) = agent().await;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&url, Dialect::Adapter, "t", "desk", dir.path());
    cfg.media_quota_bytes = quota;
    let media = cfg.media_dir.clone();
    let mut c = start(cfg);
    c.wait(10, |e| matches!(e, Event::Ready { .. })).await;
    (c, tx, media, dir)
}

async fn until_end(c: &mut Client, agent: &mpsc::UnboundedSender<String>) {
    agent.send(json!({"t":"message","id":"end","text":"end","final":true}).to_string()).unwrap();
    c.wait_forget(120, |e| matches!(e, Event::Message { id, final_: true, .. } if id == "end")).await;
}

/// decision: the agent announces 10^15 and streams 8 files × 2048 parts of 8 KiB (128 MiB), interleaved.
/// The engine's limit is ours (64 MiB), the session's accounting of buffered bytes never passes the 64 MiB cap, the
/// oldest unfinished files are dropped with `media_buffer_full`, the rest are saved, and the connection stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a3_a19_an_agent_announcing_10_15_bytes_cannot_grow_the_incoming_buffer() {
    let (url, tx) = agent().await;
    let dir = tempfile::tempdir().unwrap();
    let mut c = start(config(&url, Dialect::Adapter, "t", "desk", dir.path()));
    let ready = c.wait(10, |e| matches!(e, Event::Ready { .. })).await;
    let Event::Ready { features, .. } = ready else { unreachable!() };
    assert_eq!(features.max_file_bytes, Some(64 * MIB), "our cap, not the agent's 10^15");
    let cap = c.handle.media_buffer().cap;
    assert_eq!(cap, 64 * MIB);

    let piece = base64::engine::general_purpose::STANDARD.encode(vec![1u8; 8 * 1024]);
    let (files, parts) = (8u32, 2048u32);
    let feeder = tx.clone();
    tokio::spawn(async move {
        for p in 0..parts {
            for f in 0..files {
                let frame = json!({"t":"media","id":format!("f{f}"),"kind":"document","filename":format!("f{f}.bin"),
                    "part":p,"parts":parts,"final":p + 1 == parts,"data":piece});
                if feeder.send(frame.to_string()).is_err() {
                    return;
                }
            }
        }
    });
    let (mut dropped, mut saved) = (Vec::new(), Vec::new());
    while dropped.len() + saved.len() < files as usize {
        match c.wait_forget(120, |e| matches!(e, Event::Media { .. } | Event::Error { .. })).await {
            Event::Media { id, size, .. } => {
                assert_eq!(size, u64::from(parts) * 8 * 1024);
                saved.push(id);
            }
            Event::Error { code, id: Some(id), .. } if code == "media_buffer_full" => dropped.push(id),
            other => panic!("unexpected {other:?}"),
        }
        let b = c.handle.media_buffer();
        assert!(b.held <= cap && b.peak <= cap, "{b:?}");
    }
    until_end(&mut c, &tx).await;
    let b = c.handle.media_buffer();
    assert!(b.peak <= cap, "the session never held more than the cap: {b:?}");
    assert!(b.peak > cap / 2, "the stream did fill the buffer: {b:?}");
    assert_eq!(b.held, 0, "nothing is left held");
    assert!(!dropped.is_empty() && !saved.is_empty(), "dropped {dropped:?}, saved {saved:?}");
    let mut sorted = dropped.clone();
    sorted.sort();
    assert_eq!(dropped, sorted, "the oldest unfinished file goes first");
    c.handle.shutdown().await;
}

/// the media folder has a quota (a setting): a file that would go over it is refused with
/// `media_quota_full` — a `url` download (size announced, or found out while streaming) and a file that came whole
/// over the socket alike — nothing partial is left, the caption still shows, and the next message still arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a20_a_file_over_the_media_quota_is_refused_and_leaves_nothing() {
    let (mut c, tx, media, _dir) = ready_with_quota(3 * MIB).await;
    std::fs::write(media.join("already-here.bin"), vec![0u8; 2 * MIB as usize]).unwrap();

    let sized = http_file(2 * MIB as usize, true).await;
    let streamed = http_file(2 * MIB as usize, false).await;
    let whole = base64::engine::general_purpose::STANDARD.encode(vec![7u8; 2 * MIB as usize]);
    let frames = [
        json!({"t":"media","id":"u1","kind":"document","filename":"a.bin","caption":"report one","final":true,"url":sized}),
        json!({"t":"media","id":"u2","kind":"document","filename":"b.bin","caption":"report two","final":true,"url":streamed}),
        json!({"t":"media","id":"w1","kind":"document","filename":"c.bin","caption":"report three","parts":1,"final":true,"data":whole}),
    ];
    for (f, caption) in frames.iter().zip(["report one", "report two", "report three"]) {
        let id = f["id"].as_str().unwrap().to_string();
        tx.send(f.to_string()).unwrap();
        let err = c
            .wait(30, |e| matches!(e, Event::Error { id: Some(i), .. } | Event::Media { id: i, .. } if *i == id))
            .await;
        let Event::Error { code, text, .. } = err else { panic!("saved over the quota: {err:?}") };
        assert_eq!(code, "media_quota_full", "{id}: {text}");
        assert!(text.contains("the media folder is full"), "{text}");
        assert!(
            c.seen
                .iter()
                .any(|e| matches!(e, Event::Message { id: i, text, .. } if *i == id && text.as_str() == caption)),
            "{id}: the caption is kept"
        );
    }
    until_end(&mut c, &tx).await;
    assert_eq!(files_in(&media), vec!["already-here.bin"], "nothing partial or refused was left");
    // room again: the same file fits once the folder has space
    std::fs::remove_file(media.join("already-here.bin")).unwrap();
    tx.send(json!({"t":"media","id":"u3","kind":"document","filename":"a.bin","final":true,"url":sized}).to_string())
        .unwrap();
    let ev =
        c.wait(30, |e| matches!(e, Event::Media { id, .. } | Event::Error { id: Some(id), .. } if id == "u3")).await;
    assert!(matches!(ev, Event::Media { size, .. } if size == 2 * MIB), "{ev:?}");
    c.handle.shutdown().await;
}

/// two `url` downloads side by side each see the other grow (the folder is measured again as they write), so
/// together they cannot pass the quota: of two 2 MiB files under a 3 MiB quota at most one is kept, the other is
/// refused with `media_quota_full` and leaves no partial.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a20_downloads_side_by_side_cannot_pass_the_quota_together() {
    let (mut c, tx, media, _dir) = ready_with_quota(3 * MIB).await;
    let base = http_pair().await;
    for id in ["p1", "p2"] {
        let f = json!({"t":"media","id":id,"kind":"document","filename":format!("{id}.bin"),"final":true,"url":format!("{base}{id}")});
        tx.send(f.to_string()).unwrap();
    }
    let (mut saved, mut refused) = (0, 0);
    while saved + refused < 2 {
        match c.wait(60, |e| matches!(e, Event::Media { .. } | Event::Error { .. })).await {
            Event::Media { size, .. } => {
                assert_eq!(size, 2 * MIB);
                saved += 1;
            }
            Event::Error { code, .. } if code == "media_quota_full" => refused += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(saved <= 1 && refused >= 1, "saved {saved}, refused {refused}");
    until_end(&mut c, &tx).await;
    let names = files_in(&media);
    assert!(names.iter().all(|n| !n.starts_with(".partial")), "{names:?}");
    let held: u64 = names.iter().map(|n| std::fs::metadata(media.join(n)).unwrap().len()).sum();
    assert!(held <= 3 * MIB, "the folder holds {held} bytes");
    c.handle.shutdown().await;
}
