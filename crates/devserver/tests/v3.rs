//! Hermes Chat v3 at `/ws/app` and the media routes, over real loopback sockets (G-…).

mod common;

use std::time::Duration;

use common::*;
use hermes_devserver::{Config, Dialect, LogItem, make_jwt, start};
use serde_json::{Value, json};
use tokio_tungstenite::connect_async;
use tokio_tungstenite::tungstenite::Error as WsError;

fn msg(kind: &str, id: &str, data: Value) -> Value {
    json!({"id":id,"type":kind,"from":"alice","to":"hermes","session":"sess-1","ts":1719123456,"data":data})
}

async fn refused_status(url: &str) -> u16 {
    match connect_async(url).await {
        Err(WsError::Http(r)) => r.status().as_u16(),
        other => panic!("expected an HTTP refusal, got {:?}", other.map(|_| ())),
    }
}

#[tokio::test]
async fn g3_token_checked_before_upgrade() {
    let cfg = Config { v3_tokens: vec!["plain-token".into()], v3_user_id: "bob".into(), ..Config::fast() };
    let s = start(cfg).await.unwrap();
    assert_eq!(refused_status(&s.v3_url()).await, 401);
    assert_eq!(refused_status(&s.v3_url_with_token("nope")).await, 401);
    let forged = make_jwt("wrong-secret", "alice", None);
    assert_eq!(refused_status(&s.v3_url_with_token(&forged)).await, 401);
    let expired = make_jwt(hermes_devserver::DEV_JWT_SECRET, "alice", Some(1));
    assert_eq!(refused_status(&s.v3_url_with_token(&expired)).await, 401);

    // allow-listed token without sub → the configured user
    let mut ws = Ws::connect(&s.v3_url_with_token("plain-token")).await;
    ws.send(msg("text", "t1", json!({"text":"hi"}))).await;
    let r = ws.recv().await;
    assert_eq!(r["to"], "bob");
    // a signed JWT → its sub
    let mut ws = Ws::connect(&s.v3_url_with_token(&s.mint_v3_token("alice").unwrap())).await;
    ws.send(msg("text", "t1", json!({"text":"hi"}))).await;
    assert_eq!(ws.recv().await["to"], "alice");
}

#[tokio::test]
async fn g1_ping_pong_text_reply_and_dedup() {
    let s = start(Config::fast()).await.unwrap();
    let mut ws = Ws::connect(&s.v3_url_with_token(&s.mint_v3_token("alice").unwrap())).await;
    ws.send(json!({"type":"ping"})).await;
    assert_eq!(ws.recv().await, json!({"type":"pong"}));

    ws.send(msg("text", "m1", json!({"text":"hello"}))).await;
    let r = ws.recv().await;
    assert_eq!(r["type"], "text");
    assert_eq!(r["from"], "hermes");
    assert_eq!(r["to"], "alice");
    assert_eq!(r["session"], "sess-1");
    assert_eq!(r["reply_to"], "m1");
    assert_eq!(r["data"]["text"], "You said: hello");
    assert!(r["id"].is_string() && r["ts"].is_i64());

    // G-10: a resent id is dropped (counted); G-2: missing fields and unknown types are ignored
    ws.send(msg("text", "m1", json!({"text":"hello"}))).await;
    ws.send(json!({"type":"text","id":"m2","data":{"text":"no from/to/session/ts"}})).await;
    ws.send(msg("hologram", "m3", json!({}))).await;
    ws.send_text("garbage").await;
    ws.send(json!({"type":"ping"})).await;
    assert_eq!(ws.recv().await, json!({"type":"pong"}));
    let log = s.log();
    assert_eq!(log.len(), 1);
    assert_eq!((log[0].dialect, log[0].peer.as_str(), log[0].repeats), (Dialect::V3, "alice", 1));
    let LogItem::V3 { kind, session, text, .. } = &log[0].item else { panic!() };
    assert_eq!((kind.as_str(), session.as_str(), text.as_deref()), ("text", "sess-1", Some("hello")));
}

#[tokio::test]
async fn g5_g6_stream_sequence_and_g7_error() {
    let s = start(Config::fast()).await.unwrap();
    let mut ws = Ws::connect(&s.v3_url_with_token(&s.mint_v3_token("alice").unwrap())).await;
    ws.send(msg("text", "q1", json!({"text":"/stream"}))).await;
    let frames = ws.recv_until(|v| v["type"] == "stream_end").await;
    let start = &frames[0];
    assert_eq!(start["type"], "stream_start");
    assert_eq!(start["reply_to"], "q1");
    assert!(start["id"].is_string() && start["ts"].is_i64() && start.get("data").is_none());
    let body: Vec<&Value> = frames[1..frames.len() - 1].iter().collect();
    assert!(body.len() >= 10);
    assert!(body.iter().all(|f| f["type"] == "stream" && f.get("id").is_none() && f.get("ts").is_none()));
    let text: String = body.iter().map(|f| f["data"]["text"].as_str().unwrap()).collect();
    assert_eq!(text, hermes_devserver::assets::LONG_MARKDOWN);
    let end = frames.last().unwrap();
    assert!(end.get("id").is_none() && end.get("ts").is_none());
    assert_eq!(end["session"], "sess-1");

    ws.send(msg("text", "q2", json!({"text":"/error rate_limited"}))).await;
    let e = ws.recv().await;
    assert_eq!((e["type"].as_str(), e["reply_to"].as_str()), (Some("error"), Some("q2")));
    assert_eq!(e["data"]["code"], "rate_limited");
}

#[tokio::test]
async fn g9_upload_download_round_trip_and_media_message() {
    let s = start(Config::fast()).await.unwrap();
    let tok = s.mint_v3_token("alice").unwrap();
    let auth = format!("Bearer {tok}");
    let data: Vec<u8> = (0..100_000u32).map(|i| (i % 241) as u8).collect();
    let (ct, body) = multipart("file", "photo.jpg", "image/jpeg", &data);

    // 401 without (or with a wrong) Bearer
    let r = http(s.addr(), "POST", "/api/media/upload", &[("Content-Type", &ct)], &body).await;
    assert_eq!(r.status, 401);
    let r = http(s.addr(), "POST", "/api/media/upload", &[("Content-Type", &ct), ("Authorization", "Bearer x")], &body)
        .await;
    assert_eq!(r.status, 401);

    let r =
        http(s.addr(), "POST", "/api/media/upload", &[("Content-Type", &ct), ("Authorization", &auth)], &body).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let j = r.json();
    assert_eq!(
        (j["name"].as_str(), j["type"].as_str(), j["size"].as_u64()),
        (Some("photo.jpg"), Some("image/jpeg"), Some(100_000))
    );
    let id = j["media_id"].as_str().unwrap().to_string();
    assert_eq!(id.len(), 36, "a uuid");

    let path = format!("/media/{id}");
    assert_eq!(http(s.addr(), "GET", &path, &[], b"").await.status, 401);
    let r = http(s.addr(), "GET", &path, &[("Authorization", &auth)], b"").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, data);
    assert_eq!(r.header("content-type"), Some("image/jpeg"));
    assert_eq!(r.header("content-length"), Some("100000"));
    assert_eq!(http(s.addr(), "GET", "/media/nope", &[("Authorization", &auth)], b"").await.status, 404);

    // the image message over WS
    let mut ws = Ws::connect(&s.v3_url_with_token(&tok)).await;
    let media = json!({"id":id,"name":"photo.jpg","type":"image/jpeg","size":100000,"width":10,"height":10});
    ws.send(msg("image", "i1", json!({"text":"look","media":media}))).await;
    let r = ws.recv().await;
    assert_eq!(r["data"]["text"], "Got photo.jpg (100000 bytes)");
    let log = s.log();
    let LogItem::V3 { kind, media: Some(m), text, .. } = &log[0].item else { panic!() };
    assert_eq!((kind.as_str(), m.id.as_str(), text.as_deref()), ("image", id.as_str(), Some("look")));

    // an unknown media id → error answering the message
    let media = json!({"id":"missing","name":"x.pdf","type":"application/pdf","size":1});
    ws.send(msg("file", "f1", json!({"media":media}))).await;
    let e = ws.recv().await;
    assert_eq!(
        (e["type"].as_str(), e["reply_to"].as_str(), e["data"]["code"].as_str()),
        (Some("error"), Some("f1"), Some("upload_failed"))
    );
}

#[tokio::test]
async fn g9_upload_over_the_limit_is_413() {
    let s = start(Config { max_media_bytes: 1000, ..Config::fast() }).await.unwrap();
    let auth = format!("Bearer {}", s.mint_v3_token("alice").unwrap());
    let (ct, body) = multipart("file", "big.bin", "application/octet-stream", &[7u8; 5000]);
    let r =
        http(s.addr(), "POST", "/api/media/upload", &[("Content-Type", &ct), ("Authorization", &auth)], &body).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.json()["code"], "file_too_large");
    let (ct, body) = multipart("notfile", "a.txt", "text/plain", b"hi");
    let r =
        http(s.addr(), "POST", "/api/media/upload", &[("Content-Type", &ct), ("Authorization", &auth)], &body).await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn g8_media_demo_closes_the_stream_then_sends_files_that_download() {
    let s = start(Config::fast()).await.unwrap();
    let tok = s.mint_v3_token("alice").unwrap();
    let mut ws = Ws::connect(&s.v3_url_with_token(&tok)).await;
    ws.send(msg("text", "q", json!({"text":"/media"}))).await;
    let frames = ws.recv_until(|v| v["type"] == "file").await;
    let end = frames.iter().position(|f| f["type"] == "stream_end").unwrap();
    let image = frames.iter().position(|f| f["type"] == "image").unwrap();
    let voice = frames.iter().position(|f| f["type"] == "voice").unwrap();
    assert!(end < image && image < voice);
    let img = &frames[image]["data"]["media"];
    assert_eq!(
        (img["type"].as_str(), img["width"].as_u64(), img["height"].as_u64()),
        (Some("image/png"), Some(64), Some(48))
    );
    assert_eq!(frames[voice]["data"]["media"]["duration"], 1);
    let path = format!("/media/{}", img["id"].as_str().unwrap());
    let r = http(s.addr(), "GET", &path, &[("Authorization", &format!("Bearer {tok}"))], b"").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body.len() as u64, img["size"].as_u64().unwrap());
    assert_eq!(&r.body[..4], b"\x89PNG");
}

#[tokio::test]
async fn v3_kick_all_drops_the_connection() {
    let s = start(Config::fast()).await.unwrap();
    let mut ws = Ws::connect(&s.v3_url_with_token(&s.mint_v3_token("alice").unwrap())).await;
    ws.send(json!({"type":"ping"})).await;
    ws.recv().await;
    s.kick_all();
    assert_eq!(ws.end().await.1, End::Dropped);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(s.connections(), 0);
}

/// G-9 decision: the gateway decides the size limit. A file of exactly the limit is taken (and streamed back whole
/// with its length); one byte more is refused with HTTP 413 `file_too_large` — found while reading the body, or at
/// once when the request's length already says so — and a refused upload leaves no file behind.
#[tokio::test]
async fn g9_the_gateway_limit_is_exact_and_a_refused_upload_leaves_no_file() {
    let s = start(Config { max_media_bytes: 100_000, ..Config::fast() }).await.unwrap();
    let auth = format!("Bearer {}", s.mint_v3_token("alice").unwrap());
    let stored = || std::fs::read_dir(s.media_dir()).unwrap().count();
    let before = stored();
    let addr = s.addr();
    let upload = async |n: usize| {
        let data: Vec<u8> = (0..n).map(|i| (i % 239) as u8).collect();
        let (ct, body) = multipart("file", "clip.mp4", "video/mp4", &data);
        let r =
            http(addr, "POST", "/api/media/upload", &[("Content-Type", &ct), ("Authorization", &auth)], &body).await;
        (r, data)
    };
    let (r, data) = upload(100_000).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let id = r.json()["media_id"].as_str().unwrap().to_string();
    let got = http(s.addr(), "GET", &format!("/media/{id}"), &[("Authorization", &auth)], b"").await;
    assert_eq!((got.status, got.header("content-length")), (200, Some("100000")));
    assert_eq!(got.body, data);
    for n in [100_001, 300_000] {
        let (r, _) = upload(n).await;
        assert_eq!(r.status, 413, "{n} bytes");
        assert_eq!(r.json()["code"], "file_too_large", "{n} bytes");
    }
    assert_eq!(stored(), before + 1, "only the accepted file is kept");
}
