//! The adapter dialect at `/ws`, over real loopback sockets (A-…).

mod common;

use std::time::Duration;

use base64::Engine as _;
use common::*;
use hermes_devserver::{Config, Dialect, LogItem, start};
use hermes_protocol::media::{MediaLimits, UpMediaMeta, encode_media_frame, split_file};
use serde_json::{Value, json};

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

#[tokio::test]
async fn a2_first_frame_must_be_hello() {
    let s = start(Config::fast()).await.unwrap();
    let mut ws = Ws::connect(&s.adapter_url()).await;
    ws.send(json!({"t":"text","id":"m1","text":"hi"})).await;
    let (frames, end) = ws.end().await;
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0]["t"], "error");
    assert_eq!(frames[0]["code"], "bad_frame");
    assert!(matches!(end, End::Closed(1002, _)), "{end:?}");
    assert!(s.log().is_empty());
    s.shutdown().await;
}

#[tokio::test]
async fn a4_wrong_token_device_not_allowed_and_url_token_get_1008() {
    let cfg = Config { allowed_devices: Some(vec!["desk-1".into()]), ..Config::fast() };
    let s = start(cfg).await.unwrap();

    let mut ws = Ws::connect(&s.adapter_url()).await;
    ws.send(hello("0000", "desk-1")).await;
    let (frames, end) = ws.end().await;
    assert_eq!(frames[0]["code"], "auth_failed");
    assert_eq!(end, End::Closed(1008, "wrong token".into()));

    let mut ws = Ws::connect(&s.adapter_url()).await;
    ws.send(hello(s.token(), "intruder")).await;
    let (frames, end) = ws.end().await;
    assert_eq!(frames[0]["code"], "auth_failed");
    let End::Closed(1008, reason) = end else { panic!("{end:?}") };
    assert!(reason.contains("hermes pairing approve mobile intruder"), "{reason}");

    // A-2: `?token=` is not accepted, even with the right token, even followed by a good hello.
    let mut ws = Ws::connect(&format!("{}?token={}", s.adapter_url(), s.token())).await;
    ws.send(hello(s.token(), "desk-1")).await;
    let (frames, end) = ws.end().await;
    assert!(frames.iter().all(|f| f["t"] != "ready"));
    assert!(matches!(end, End::Closed(1008, _)), "{end:?}");

    let (_ws, _) = adapter(&s, "desk-1").await;
    assert_eq!(s.ready_count(), 1);
    s.shutdown().await;
}

/// A-3: the reference agent's `ready` has the real adapter's shape — `capabilities` is `{"max_media_bytes": N}` and
/// nothing invented (a devserver more generous than the document makes every test against it a lie).
#[tokio::test]
async fn a3_ready_fields_are_the_real_adapters() {
    let cfg = Config {
        avatar_url: Some("https://example.com/avatar.html".into()),
        max_media_bytes: 1234567,
        ..Config::fast()
    };
    let s = start(cfg).await.unwrap();
    let (_ws, ready) = adapter(&s, "desktop-1").await;
    assert_eq!(ready["session"], "mobile:desktop-1");
    assert_eq!(ready["avatar_url"], "https://example.com/avatar.html");
    assert_eq!(ready["capabilities"], json!({"max_media_bytes": 1234567}));
    // absent by default
    let s2 = start(Config::fast()).await.unwrap();
    let (_ws2, ready) = adapter(&s2, "d").await;
    assert!(ready.get("avatar_url").is_none());
    assert_eq!(ready["capabilities"], json!({"max_media_bytes": 8 * 1024 * 1024}));
}

/// Tests choose the other shapes the document allows: no `capabilities`, `{}`, or explicit `false`s; the enforced file
/// limit follows what is announced (8 MiB when nothing is, A-3).
#[tokio::test]
async fn a3_other_capability_shapes_on_request() {
    use hermes_devserver::Capabilities;
    let absent = start(Config { capabilities: Capabilities::Absent, ..Config::fast() }).await.unwrap();
    let (_ws, ready) = adapter(&absent, "d").await;
    assert!(ready.get("capabilities").is_none(), "{ready}");
    assert_eq!(absent.config().adapter_media_limit(), 8 * 1024 * 1024);
    let off = Capabilities::parse(r#"{"media":false,"audio":false}"#).unwrap();
    let s = start(Config { capabilities: off, ..Config::fast() }).await.unwrap();
    let (_ws, ready) = adapter(&s, "d").await;
    assert_eq!(ready["capabilities"], json!({"media": false, "audio": false}));
    let empty = start(Config { capabilities: Capabilities::parse("{}").unwrap(), ..Config::fast() }).await.unwrap();
    let (_ws, ready) = adapter(&empty, "d").await;
    assert_eq!(ready["capabilities"], json!({}));
    assert_eq!(Capabilities::parse("real"), Ok(Capabilities::Real));
    assert!(Capabilities::parse("[1]").is_err());
    let small = Capabilities::parse(r#"{"max_media_bytes":4096}"#).unwrap();
    assert_eq!(Config { capabilities: small, ..Config::fast() }.adapter_media_limit(), 4096);
}

#[tokio::test]
async fn a11_demo_reply_order_and_a6_dedup() {
    let s = start(Config::fast()).await.unwrap();
    let (mut ws, _) = adapter(&s, "d1").await;
    ws.send(json!({"t":"text","id":"m1","text":"hello there","reply_to":"x0"})).await;
    let frames = ws.recv_until(|v| v["t"] == "avatar" && v["state"] == "idle").await;
    let kinds: Vec<String> = frames
        .iter()
        .map(|f| match t_of(f) {
            "avatar" => format!("avatar:{}", f["state"].as_str().unwrap()),
            "typing" if f["stop"] == true => "typing:stop".into(),
            t => t.to_string(),
        })
        .collect();
    assert_eq!(kinds, ["avatar:thinking", "typing", "message", "typing:stop", "avatar:idle"]);
    assert_eq!(frames[2]["text"], "You said: hello there");
    assert_eq!(frames[2]["final"], true);
    assert_eq!(frames[2]["reply_to"], "m1");

    // The same id again (a resend after a drop): logged once, repeats counted, not answered.
    ws.send(json!({"t":"text","id":"m1","text":"hello there"})).await;
    ws.send(json!({"t":"text","id":"m1","text":"hello there"})).await;
    ws.expect_silence(Duration::from_millis(200)).await;
    let log = s.log();
    assert_eq!(log.len(), 1);
    assert_eq!((log[0].id.as_str(), log[0].repeats, log[0].dialect), ("m1", 2, Dialect::Adapter));
    assert_eq!(log[0].item, LogItem::Text { text: "hello there".into(), reply_to: Some("x0".into()) });

    // And after a reconnect too.
    drop(ws);
    let (mut ws, _) = adapter(&s, "d1").await;
    ws.send(json!({"t":"text","id":"m1","text":"hello there"})).await;
    ws.expect_silence(Duration::from_millis(200)).await;
    assert_eq!(s.log()[0].repeats, 3);
}

#[tokio::test]
async fn a10_a21_stream_by_edits_ends_with_the_full_text() {
    let s = start(Config::fast()).await.unwrap();
    let (mut ws, _) = adapter(&s, "d1").await;
    ws.send(json!({"t":"text","id":"s1","text":"/stream"})).await;
    let frames = ws.recv_until(|v| v["t"] == "avatar" && v["state"] == "idle").await;
    let msgs: Vec<&Value> = frames.iter().filter(|f| f["t"] == "message").collect();
    assert!(msgs.len() >= 20, "{}", msgs.len());
    let id = &msgs[0]["id"];
    assert!(msgs.iter().all(|m| m["id"] == *id && m["edit"] == true));
    assert!(msgs[..msgs.len() - 1].iter().all(|m| m["final"] == false));
    let last = msgs.last().unwrap();
    assert_eq!(last["final"], true);
    assert_eq!(last["text"], hermes_devserver::assets::LONG_MARKDOWN);
    for w in msgs.windows(2) {
        assert!(w[1]["text"].as_str().unwrap().starts_with(w[0]["text"].as_str().unwrap()));
    }
    // A-11: typing stop comes after the last edit
    let pos_last = frames.iter().position(|f| f == *last).unwrap();
    assert_eq!(frames[pos_last + 1]["t"], "typing");
    assert_eq!(frames[pos_last + 1]["stop"], true);
    let md = last["text"].as_str().unwrap();
    for needle in ["# ", "- ", "```", "| ", "]("] {
        assert!(md.contains(needle), "{needle}");
    }
}

#[tokio::test]
async fn a9_chunks_join_in_index_order_even_shuffled() {
    let s = start(Config::fast()).await.unwrap();
    let (mut ws, _) = adapter(&s, "d1").await;
    for cmd in ["/chunks", "/chunks-shuffled"] {
        ws.send(json!({"t":"text","id":cmd,"text":cmd})).await;
        let frames = ws.recv_until(|v| v["t"] == "avatar" && v["state"] == "idle").await;
        let msgs: Vec<&Value> = frames.iter().filter(|f| f["t"] == "message").collect();
        let total = msgs[0]["chunk"]["total"].as_u64().unwrap() as usize;
        assert_eq!(msgs.len(), total);
        assert!(msgs.iter().all(|m| m["id"] == msgs[0]["id"]));
        assert_eq!(msgs.last().unwrap()["final"], true);
        let mut parts: Vec<(u64, &str)> =
            msgs.iter().map(|m| (m["chunk"]["index"].as_u64().unwrap(), m["text"].as_str().unwrap())).collect();
        let in_order = parts.windows(2).all(|w| w[0].0 < w[1].0);
        assert_eq!(in_order, cmd == "/chunks", "{cmd}");
        parts.sort();
        let joined: String = parts.iter().map(|p| p.1).collect();
        assert_eq!(joined, hermes_devserver::assets::LONG_MARKDOWN);
    }
}

async fn card(ws: &mut Ws, cmd: &str) -> Value {
    ws.send(json!({"t":"text","id":format!("{cmd}-{}", rand_id()),"text":cmd})).await;
    let frames = ws.recv_until(|v| v["t"] == "avatar" && v["state"] == "idle").await;
    frames.into_iter().find(|f| f["t"] == "prompt").expect("a card")
}

fn rand_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

#[tokio::test]
async fn a13_approve_card_answer_gives_prompt_done_and_outcome() {
    let s = start(Config::fast()).await.unwrap();
    let (mut ws, _) = adapter(&s, "d1").await;
    let c = card(&mut ws, "/approve").await;
    assert_eq!(c["kind"], "exec_approval");
    assert!(c["command"].as_str().unwrap().contains("cargo build"));
    assert!(c["description"].is_string());
    assert_eq!(c["timeout_seconds"], 300);
    assert_eq!(c["session"], "mobile:d1");
    let ids: Vec<&str> = c["options"].as_array().unwrap().iter().map(|o| o["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["allow-once", "allow-always", "deny"]);
    assert_eq!(c["options"][0]["style"], "primary");
    assert_eq!(c["options"][2]["style"], "danger");
    let pid = c["id"].as_str().unwrap().to_string();

    ws.send(json!({"t":"prompt","prompt_id":pid,"option_id":"allow-once"})).await;
    let done = ws.recv().await;
    assert_eq!(done, json!({"t":"prompt_done","prompt_id":pid,"option_id":"allow-once"}));
    let frames = ws.recv_until(|v| v["t"] == "avatar" && v["state"] == "idle").await;
    let msg = frames.iter().find(|f| f["t"] == "message").unwrap();
    assert!(msg["text"].as_str().unwrap().contains("Allowed once"), "{msg}");

    // A repeat of the answer: the same outcome again, logged once with a repeat, no second outcome message.
    ws.send(json!({"t":"prompt","prompt_id":pid,"option_id":"allow-once"})).await;
    assert_eq!(ws.recv().await, done);
    ws.expect_silence(Duration::from_millis(150)).await;
    let log = s.log();
    let e = log.iter().find(|e| e.id == pid).unwrap();
    assert_eq!(e.repeats, 1);
    assert!(matches!(&e.item, LogItem::PromptAnswer { option_id, .. } if option_id == "allow-once"));
}

#[tokio::test]
async fn a15_invalid_option_becomes_the_safe_choice_and_a14_free_text() {
    let s = start(Config::fast()).await.unwrap();
    let (mut ws, _) = adapter(&s, "d1").await;
    let c = card(&mut ws, "/approve").await;
    ws.send(json!({"t":"prompt","prompt_id":c["id"],"option_id":"yes-please"})).await;
    let done = ws.recv().await;
    assert_eq!(done["option_id"], "deny");
    let frames = ws.recv_until(|v| v["t"] == "avatar" && v["state"] == "idle").await;
    assert!(frames.iter().any(|f| f["t"] == "message" && f["text"].as_str().unwrap().contains("Denied")));

    let c = card(&mut ws, "/clarify").await;
    assert_eq!(c["kind"], "clarify");
    assert!(c["options"].as_array().unwrap().iter().any(|o| o["id"] == "other"));
    ws.send(json!({"t":"prompt","prompt_id":c["id"],"option_id":"bogus"})).await;
    assert_eq!(ws.recv().await["option_id"], "cancel");
    ws.recv_until(|v| v["t"] == "avatar" && v["state"] == "idle").await;

    let c = card(&mut ws, "/clarify").await;
    ws.send(json!({"t":"prompt","prompt_id":c["id"],"text":"YAML please"})).await;
    assert_eq!(ws.recv().await["option_id"], "other");
    let frames = ws.recv_until(|v| v["t"] == "avatar" && v["state"] == "idle").await;
    assert!(frames.iter().any(|f| f["text"] == "You wrote: YAML please"));
}

#[tokio::test]
async fn a17_another_device_is_forbidden_a16_unknown_and_expired_cards() {
    let s = start(Config::fast()).await.unwrap();
    let (mut ws, _) = adapter(&s, "d1").await;
    let (mut other, _) = adapter(&s, "d2").await;
    let c = card(&mut ws, "/approve").await;
    other.send(json!({"t":"prompt","prompt_id":c["id"],"option_id":"allow-once"})).await;
    let e = other.recv().await;
    assert_eq!((e["t"].as_str(), e["code"].as_str()), (Some("error"), Some("forbidden")));
    // still open for its own device
    ws.send(json!({"t":"prompt","prompt_id":c["id"],"option_id":"deny"})).await;
    assert_eq!(ws.recv().await["option_id"], "deny");
    ws.recv_until(|v| v["t"] == "avatar" && v["state"] == "idle").await;

    ws.send(json!({"t":"prompt","prompt_id":"no-such-card","option_id":"deny"})).await;
    assert_eq!(ws.recv().await, json!({"t":"prompt_done","prompt_id":"no-such-card","expired":true}));

    let c = card(&mut ws, "/expire").await;
    assert_eq!(c["timeout_seconds"], 1);
    let t0 = std::time::Instant::now();
    let done = ws.recv().await;
    assert_eq!(done, json!({"t":"prompt_done","prompt_id":c["id"],"expired":true}));
    assert!(t0.elapsed() >= Duration::from_millis(800));
    ws.send(json!({"t":"prompt","prompt_id":c["id"],"option_id":"yes"})).await;
    assert_eq!(ws.recv().await["expired"], true);
    assert!(s.log().iter().all(|e| e.id != c["id"].as_str().unwrap()));
}

#[tokio::test]
async fn a18_media_single_and_multipart_logged_once_with_sha() {
    let s = start(Config { max_media_bytes: 16 * 1024 * 1024, ..Config::fast() }).await.unwrap();
    let (mut ws, _) = adapter(&s, "d1").await;
    let small: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
    ws.send(json!({"t":"media","id":"f1","kind":"image","mime":"image/png","filename":"a.png","caption":"look",
        "data":b64(&small),"part":0,"parts":1}))
        .await;
    let frames = ws.recv_until(|v| v["t"] == "avatar" && v["state"] == "idle").await;
    assert!(frames.iter().any(|f| f["text"] == "Got a.png (20000 bytes)"), "{frames:?}");

    // 9 MiB: three ~3 MiB pieces, via the protocol crate's splitter.
    let big: Vec<u8> = (0..9 * 1024 * 1024u32).map(|i| (i * 7 % 253) as u8).collect();
    let meta = UpMediaMeta {
        id: "f2".into(),
        kind: "document".into(),
        mime: "application/pdf".into(),
        filename: "../report.pdf".into(),
        caption: None,
    };
    let parts = split_file(&meta, &big, &MediaLimits { max_media_bytes: 16 * 1024 * 1024 }).unwrap();
    assert_eq!(parts.len(), 3);
    for p in &parts {
        ws.send_text(p).await;
    }
    let frames = ws.recv_until(|v| v["t"] == "avatar" && v["state"] == "idle").await;
    assert!(frames.iter().any(|f| f["text"] == format!("Got report.pdf ({} bytes)", big.len())), "{frames:?}");

    // Resent whole (as after a drop): one repeat, no second reply.
    for p in &parts {
        ws.send_text(p).await;
    }
    ws.expect_silence(Duration::from_millis(300)).await;
    let log = s.log();
    assert_eq!(log.len(), 2);
    match &log[0].item {
        LogItem::Media { filename, size, sha256, parts, caption, .. } => {
            assert_eq!((filename.as_str(), *size, *parts, caption.as_deref()), ("a.png", 20_000, 1, Some("look")));
            assert_eq!(*sha256, sha256_hex(&small));
        }
        other => panic!("{other:?}"),
    }
    match &log[1].item {
        LogItem::Media { filename, size, sha256, parts, .. } => {
            assert_eq!((filename.as_str(), *size, *parts), ("../report.pdf", big.len() as u64, 3));
            assert_eq!(*sha256, sha256_hex(&big));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!((log[0].repeats, log[1].repeats), (0, 1));
}

async fn expect_error(ws: &mut Ws, frame: String, code: &str, id: &str) {
    ws.send_text(&frame).await;
    let e = ws.recv().await;
    assert_eq!((e["t"].as_str(), e["code"].as_str(), e["id"].as_str()), (Some("error"), Some(code), Some(id)), "{e}");
}

#[tokio::test]
async fn a19_limits_give_the_right_codes() {
    let s = start(Config { max_media_bytes: 64 * 1024, ..Config::fast() }).await.unwrap();
    let (mut ws, _) = adapter(&s, "d1").await;
    let meta = |id: &str| UpMediaMeta {
        id: id.into(),
        kind: "document".into(),
        mime: "application/octet-stream".into(),
        filename: "x.bin".into(),
        caption: None,
    };
    // file over max_media_bytes in one frame
    expect_error(&mut ws, encode_media_frame(&meta("big"), &[0; 64 * 1024 + 1], 0, 1), "too_big", "big").await;
    // part >= parts, parts > 2048, parts == 0
    expect_error(&mut ws, encode_media_frame(&meta("p1"), &[0; 4096], 2, 2), "bad_frame", "p1").await;
    expect_error(&mut ws, encode_media_frame(&meta("p2"), &[0; 4096], 0, 2049), "bad_frame", "p2").await;
    expect_error(&mut ws, encode_media_frame(&meta("p3"), &[0; 4096], 0, 0), "bad_frame", "p3").await;
    // a piece under 4 KiB in a series
    expect_error(&mut ws, encode_media_frame(&meta("small"), &[0; 1000], 0, 2), "bad_frame", "small").await;
    // the series grows past the file limit
    for i in 0..15 {
        ws.send_text(&encode_media_frame(&meta("grow"), &[0; 4096], i, 16)).await;
    }
    expect_error(&mut ws, encode_media_frame(&meta("grow"), &[0; 8192], 15, 16), "too_big", "grow").await;
    // more than 8 unfinished uploads
    for i in 0..8 {
        ws.send_text(&encode_media_frame(&meta(&format!("u{i}")), &[0; 4096], 0, 2)).await;
    }
    expect_error(&mut ws, encode_media_frame(&meta("u8"), &[0; 4096], 0, 2), "too_big", "u8").await;
    // a frame over 16 MiB
    let huge = format!("{{\"t\":\"text\",\"id\":\"h\",\"text\":\"{}\"}}", "a".repeat(16 * 1024 * 1024));
    ws.send_text(&huge).await;
    let e = ws.recv().await;
    assert_eq!(e["code"], "too_big");
    // still connected, nothing was logged
    ws.send(json!({"t":"text","id":"after","text":"still here?"})).await;
    let frames = ws.recv_until(|v| v["t"] == "message").await;
    assert_eq!(frames.last().unwrap()["text"], "You said: still here?");
    assert_eq!(s.log().len(), 1);
}

#[tokio::test]
async fn a19_unfinished_series_are_freed_when_the_connection_drops() {
    let s = start(Config::fast()).await.unwrap();
    let meta = |id: &str| UpMediaMeta {
        id: id.into(),
        kind: "document".into(),
        mime: "text/plain".into(),
        filename: "x.txt".into(),
        caption: None,
    };
    let (mut ws, _) = adapter(&s, "d1").await;
    for i in 0..8 {
        ws.send_text(&encode_media_frame(&meta(&format!("u{i}")), &[1; 4096], 0, 2)).await;
    }
    drop(ws);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (mut ws, _) = adapter(&s, "d1").await;
    // all eight can start again, and complete
    for i in 0..8 {
        ws.send_text(&encode_media_frame(&meta(&format!("u{i}")), &[1; 4096], 0, 2)).await;
        ws.send_text(&encode_media_frame(&meta(&format!("u{i}")), &[2; 4096], 1, 2)).await;
    }
    let log = s.wait_for_log(T, |l| l.len() == 8).await.expect("8 files");
    assert!(log.iter().all(|e| matches!(e.item, LogItem::Media { size: 8192, .. })));
}

#[tokio::test]
async fn a23_audio_reply_and_log() {
    let s = start(Config::fast()).await.unwrap();
    let (mut ws, _) = adapter(&s, "d1").await;
    let wav = hermes_devserver::assets::tone_wav(1.5);
    ws.send(json!({"t":"audio","id":"v1","format":"wav","data":b64(&wav),"text":"hi"})).await;
    let frames = ws.recv_until(|v| v["t"] == "message").await;
    assert_eq!(frames.last().unwrap()["text"], "Got your voice note (1.5 s)");
    let log = s.log();
    let LogItem::Audio { bytes, sha256, format, text, duration_secs } = &log[0].item else { panic!() };
    assert_eq!((*bytes, format.as_str(), text.as_deref()), (wav.len() as u64, "wav", Some("hi")));
    assert_eq!(*sha256, sha256_hex(&wav));
    assert_eq!(*duration_secs, Some(1.5));
}

#[tokio::test]
async fn a22_unknown_t_gets_unsupported_frame_and_the_connection_stays() {
    let s = start(Config::fast()).await.unwrap();
    let (mut ws, _) = adapter(&s, "d1").await;
    ws.send(json!({"t":"telepathy","id":"z"})).await;
    let e = ws.recv().await;
    assert_eq!((e["t"].as_str(), e["code"].as_str()), (Some("error"), Some("unsupported_frame")));
    ws.send_text("{not json").await;
    assert_eq!(ws.recv().await["code"], "bad_frame");
    ws.send(json!({"t":"text","text":"no id"})).await;
    assert_eq!(ws.recv().await["code"], "bad_frame");
    ws.send(json!({"t":"text","id":"ok","text":"ping?"})).await;
    let frames = ws.recv_until(|v| v["t"] == "message").await;
    assert_eq!(frames.last().unwrap()["text"], "You said: ping?");
}

#[tokio::test]
async fn demo_media_error_pairing_and_help() {
    let s = start(Config::fast()).await.unwrap();
    let (mut ws, _) = adapter(&s, "d1").await;
    ws.send(json!({"t":"text","id":"m","text":"/media"})).await;
    let frames = ws.recv_until(|v| v["t"] == "avatar" && v["state"] == "idle").await;
    let media: Vec<&Value> = frames.iter().filter(|f| f["t"] == "media").collect();
    let png = media.iter().find(|m| m["kind"] == "image").unwrap();
    let bytes = base64::engine::general_purpose::STANDARD.decode(png["data"].as_str().unwrap()).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(png["size"], bytes.len());
    assert_eq!((png["parts"].as_u64(), png["final"].as_bool()), (Some(1), Some(true)));
    // the voice note by url, from the same server
    let voice = media.iter().find(|m| m["kind"] == "voice").unwrap();
    let url = voice["url"].as_str().unwrap();
    let path = url.strip_prefix(&s.http_base()).expect("own origin");
    let r = http(s.addr(), "GET", path, &[], b"").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("audio/wav"));
    assert_eq!(voice["size"], r.body.len());
    let secs = hermes_devserver::assets::wav_duration(&r.body).unwrap();
    assert!((secs - 1.0).abs() < 0.01);
    // the document in parts
    let doc: Vec<&&Value> = media.iter().filter(|m| m["kind"] == "document").collect();
    assert!(doc.len() >= 2);
    assert!(doc.iter().all(|d| d["id"] == doc[0]["id"]));
    assert_eq!(doc.last().unwrap()["final"], true);
    let joined: Vec<u8> = doc
        .iter()
        .flat_map(|d| base64::engine::general_purpose::STANDARD.decode(d["data"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(joined, hermes_devserver::assets::demo_document());

    ws.send(json!({"t":"text","id":"e","text":"/error"})).await;
    let frames = ws.recv_until(|v| v["t"] == "error").await;
    assert_eq!(frames.last().unwrap()["id"], "e");
    ws.recv_until(|v| v["t"] == "avatar" && v["state"] == "idle").await;

    ws.send(json!({"t":"text","id":"p","text":"/pairing"})).await;
    ws.expect_silence(Duration::from_millis(200)).await;

    ws.send(json!({"t":"text","id":"h","text":"/help"})).await;
    let frames = ws.recv_until(|v| v["t"] == "message").await;
    assert!(frames.last().unwrap()["text"].as_str().unwrap().contains("/approve"));
}

#[tokio::test]
async fn kick_all_drops_without_close_frame_and_close_all_with_code() {
    let s = start(Config::fast()).await.unwrap();
    let (mut a, _) = adapter(&s, "d1").await;
    let (mut b, _) = adapter(&s, "d2").await;
    assert_eq!(s.connections(), 2);
    s.kick_all();
    assert_eq!(a.end().await.1, End::Dropped);
    assert_eq!(b.end().await.1, End::Dropped);
    let (mut c, _) = adapter(&s, "d1").await;
    s.close_all_with(1008, "token revoked");
    assert_eq!(c.end().await.1, End::Closed(1008, "token revoked".into()));
    // server-pushed frames reach the device
    let (mut d, _) = adapter(&s, "d3").await;
    let n = s.send_to_device("d3", &hermes_protocol::adapter::Down::Typing { stop: None });
    assert_eq!(n, 1);
    assert_eq!(d.recv().await, json!({"t":"typing"}));
    s.shutdown().await;
    assert!(matches!(d.end().await.1, End::Closed(1001, _)));
}

#[tokio::test]
async fn no_demo_only_logs() {
    let s = start(Config { demo: false, ..Config::fast() }).await.unwrap();
    let (mut ws, _) = adapter(&s, "d1").await;
    ws.send(json!({"t":"text","id":"1","text":"/stream"})).await;
    ws.expect_silence(Duration::from_millis(200)).await;
    assert_eq!(s.log().len(), 1);
}

#[tokio::test]
async fn hostile_frames_never_break_the_server() {
    let s = start(Config::fast()).await.unwrap();
    let (mut ws, _) = adapter(&s, "d1").await;
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let hostile = [
        json!({"t":"media","id":"x","kind":"image","mime":"a/b","filename":"f","data":"","part":u32::MAX,"parts":u32::MAX}).to_string(),
        json!({"t":"prompt"}).to_string(),
        json!({"t":5}).to_string(),
        "[]".to_string(),
        "null".to_string(),
        deep,
        json!({"t":"audio","id":"a1","format":"wav","data":"UklGRv////9XQVZF"}).to_string(),
        json!({"t":"media","id":"y","kind":"x","mime":"","filename":"","data":"@@@","part":0,"parts":1}).to_string(),
    ];
    for h in &hostile {
        ws.send_text(h).await;
    }
    // every frame but the audio (a valid frame with an unreadable clip) gets an error
    let mut errors = 0;
    let frames = ws.recv_until(|v| v["t"] == "message").await;
    for f in &frames {
        if f["t"] == "error" {
            errors += 1;
        }
    }
    assert_eq!(errors, hostile.len() - 1, "{frames:?}");
    assert_eq!(frames.last().unwrap()["text"], "Got your voice note (unknown length)");
    ws.send(json!({"t":"text","id":"ok","text":"alive"})).await;
    let frames = ws.recv_until(|v| v["t"] == "message" && v["text"] == "You said: alive").await;
    assert!(!frames.is_empty());
}
