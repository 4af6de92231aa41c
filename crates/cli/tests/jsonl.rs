//! End-to-end: the `hermes-chat --jsonl` binary against the reference agent on loopback. This is the public
//! scripting contract of the README: one JSON command per stdin line, one JSON event per stdout line.

mod common;

use std::path::Path;
use std::time::Duration;

use hermes_devserver::{Config as ServerConfig, LogItem};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

struct Cli {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    seen: Vec<Value>,
}

fn cli(url: &str, device: &str, data: &Path, token: &str, extra: &[&str]) -> Cli {
    let mut child = common::spawn_cli(url, device, data, token, "debug", extra);
    let stdin = child.stdin.take().unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    Cli { child, stdin, lines, seen: Vec::new() }
}

impl Cli {
    async fn send(&mut self, cmd: Value) {
        self.send_raw(&cmd.to_string()).await;
    }
    async fn send_raw(&mut self, line: &str) {
        self.stdin.write_all(format!("{line}\n").as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }
    async fn wait(&mut self, mut pred: impl FnMut(&Value) -> bool) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            let line = tokio::time::timeout_at(deadline, self.lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("timed out; seen: {:#?}", self.seen))
                .unwrap()
                .unwrap_or_else(|| panic!("hermes-chat exited; seen: {:#?}", self.seen));
            let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            assert!(v.get("event").and_then(Value::as_str).is_some(), "every line names its event: {line}");
            self.seen.push(v.clone());
            if pred(&v) {
                return v;
            }
        }
    }
    /// Like `wait`, but an event already seen counts (for events whose order is not fixed, e.g. a reply may come
    /// before the delivery confirmation of the message it answers).
    async fn seen_or_wait(&mut self, mut pred: impl FnMut(&Value) -> bool) -> Value {
        if let Some(v) = self.seen.iter().find(|v| pred(v)) {
            return v.clone();
        }
        self.wait(pred).await
    }
    async fn event(&mut self, name: &str) -> Value {
        self.wait(|v| v["event"] == name).await
    }
    /// quit and return everything written to stderr
    async fn quit(mut self) -> String {
        self.send(json!({"cmd": "quit"})).await;
        let out = tokio::time::timeout(Duration::from_secs(10), self.child.wait_with_output()).await.unwrap().unwrap();
        assert!(out.status.success(), "exit status {}", out.status);
        String::from_utf8_lossy(&out.stderr).into_owned()
    }
}

async fn server() -> hermes_devserver::Running {
    hermes_devserver::start(ServerConfig::fast()).await.unwrap()
}

#[tokio::test]
async fn jsonl_text_round_trip_and_contract_shapes() {
    let srv = server().await;
    let data = tempfile::tempdir().unwrap();
    let mut c = cli(&srv.adapter_url(), "cli-1", data.path(), srv.token(), &[]);
    assert_eq!(c.event("connecting").await["attempt"], 1);
    let ready = c.event("ready").await;
    assert_eq!(ready["session"], "mobile:cli-1");
    assert_eq!(ready["capabilities"], json!({"max_media_bytes": 8 * 1024 * 1024}), "capabilities as received");
    // A-3: what they mean, decided once for every front end
    assert_eq!(ready["features"], json!({"files": true, "voice": true, "max_file_bytes": 8 * 1024 * 1024}));
    c.send(json!({"cmd": "text", "text": "hello from a script"})).await;
    let sent = c.event("sent").await;
    let id = sent["id"].as_str().unwrap().to_string();
    c.seen_or_wait(|v| v["event"] == "delivered" && v["id"] == id.as_str()).await;
    let msg = c.seen_or_wait(|v| v["event"] == "message" && v["final"] == true).await;
    assert!(msg["text"].as_str().unwrap().contains("hello from a script"));
    assert!(msg["id"].is_string());
    assert!(c.seen.iter().any(|v| v["event"] == "typing" && v["on"] == true));
    c.seen_or_wait(|v| v["event"] == "avatar" && v["state"] == "idle").await;
    let stderr = c.quit().await;
    assert!(!stderr.contains(srv.token()), "the token leaked into the log");
    let log = srv.log();
    assert_eq!(log.iter().filter(|e| e.id == id).count(), 1);
}

#[tokio::test]
async fn jsonl_bad_lines_are_rejected_and_nothing_is_sent() {
    let srv = server().await;
    let data = tempfile::tempdir().unwrap();
    let mut c = cli(&srv.adapter_url(), "cli-2", data.path(), srv.token(), &[]);
    c.event("ready").await;
    c.send_raw("this is not json").await;
    let r = c.event("rejected").await;
    assert!(r["reason"].as_str().unwrap().contains("bad command"));
    assert_eq!(r["code"], "bad_command");
    c.send(json!({"cmd": "text"})).await; // missing text
    assert_eq!(c.event("rejected").await["cmd"], "text");
    c.send(json!({"cmd": "launch_missiles"})).await;
    c.event("rejected").await;
    c.send(json!({"cmd": "file", "path": "/definitely/not/here.png"})).await;
    let r = c.event("rejected").await;
    assert_eq!((&r["cmd"], &r["code"]), (&json!("file"), &json!("file_unreadable")));
    // the connection is fine
    c.send(json!({"cmd": "text", "text": "ok"})).await;
    c.wait(|v| v["event"] == "message" && v["final"] == true).await;
    c.quit().await;
    assert_eq!(srv.log().len(), 1, "only the good message reached the agent");
}

/// The retry rule of the contract (A-6): a `text` whose `id` is already used gets `rejected{code:"id_in_use"}` — never a
/// database error — and nothing more reaches the agent; the agent's `error{id}` for a message stays its outcome, and
/// the retry is a new message that names it (`retry_of`).
#[tokio::test]
async fn jsonl_a_used_id_is_rejected_as_id_in_use_and_a_retry_names_the_failed_one() {
    let srv = server().await;
    let data = tempfile::tempdir().unwrap();
    let mut c = cli(&srv.adapter_url(), "cli-ids", data.path(), srv.token(), &[]);
    c.event("ready").await;
    c.send(json!({"cmd": "text", "text": "/error", "id": "x1"})).await;
    let err = c.wait(|v| v["event"] == "error" && v["id"] == "x1").await;
    assert_eq!(err["code"], "internal");
    c.seen_or_wait(|v| v["event"] == "delivered" && v["id"] == "x1").await;
    c.send(json!({"cmd": "text", "text": "/error", "id": "x1"})).await;
    let r = c.event("rejected").await;
    assert_eq!((&r["cmd"], &r["code"]), (&json!("text"), &json!("id_in_use")));
    let reason = r["reason"].as_str().unwrap().to_lowercase();
    assert!(!reason.contains("constraint") && !reason.contains("sql"), "{reason}");
    c.send(json!({"cmd": "text", "text": "once more", "id": "x2", "retry_of": "x1"})).await;
    c.wait(|v| v["event"] == "delivered" && v["id"] == "x2").await;
    c.quit().await;
    let log = srv.log();
    assert_eq!(log.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), ["x1", "x2"]);
    assert_eq!(log[0].repeats, 0, "the refused retry never reached the agent");
    let store = hermes_store::Store::open_in(data.path()).unwrap();
    assert_eq!(store.message_get("x2").unwrap().unwrap().retry_of.as_deref(), Some("x1"));
    let x1 = store.message_get("x1").unwrap().unwrap();
    assert_eq!(x1.delivery, Some(hermes_store::Delivery::Failed));
}

#[tokio::test]
async fn jsonl_files_audio_and_cards() {
    let srv = server().await;
    let data = tempfile::tempdir().unwrap();
    let mut c = cli(&srv.adapter_url(), "cli-3", data.path(), srv.token(), &[]);
    c.event("ready").await;
    // a document: kind from the MIME type
    let doc = data.path().join("report.pdf");
    std::fs::write(&doc, b"%PDF-1.4 not really").unwrap();
    c.send(json!({"cmd": "file", "path": doc, "caption": "the report"})).await;
    let file_id = c.event("sent").await["id"].as_str().unwrap().to_string();
    c.wait(|v| v["event"] == "delivered" && v["id"] == file_id.as_str()).await;
    // any WAV becomes 16 kHz mono PCM16 (A-23): a 44.1 kHz stereo float clip of 1 s
    let wav = data.path().join("voice.wav");
    let spec = hound::WavSpec {
        channels: 2,
        sample_rate: 44_100,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let mut w = hound::WavWriter::create(&wav, spec).unwrap();
    for i in 0..44_100 {
        let s = (i as f32 * 440.0 * std::f32::consts::TAU / 44_100.0).sin() * 0.5;
        w.write_sample(s).unwrap();
        w.write_sample(s).unwrap();
    }
    w.finalize().unwrap();
    c.send(json!({"cmd": "audio", "path": wav, "text": "transcript"})).await;
    let audio_id = c.event("sent").await["id"].as_str().unwrap().to_string();
    c.wait(|v| v["event"] == "delivered" && v["id"] == audio_id.as_str()).await;
    // over the limit: refused locally
    let huge = data.path().join("huge.bin");
    std::fs::write(&huge, vec![0u8; 8 * 1024 * 1024 + 1]).unwrap();
    c.send(json!({"cmd": "file", "path": huge})).await;
    assert_eq!(c.event("rejected").await["cmd"], "file");
    // a card answered by the script
    c.send(json!({"cmd": "text", "text": "/clarify"})).await;
    let card = c.event("prompt").await;
    assert_eq!(card["kind"], "clarify");
    let card_id = card["id"].as_str().unwrap().to_string();
    c.send(json!({"cmd": "prompt", "prompt_id": card_id, "option_id": "other", "text": "YAML please"})).await;
    let done = c.event("prompt_done").await;
    assert_eq!(
        (done["prompt_id"].as_str(), done["option_id"].as_str(), &done["expired"]),
        (Some(card_id.as_str()), Some("other"), &json!(false))
    );
    // media from the agent: saved, path given
    c.send(json!({"cmd": "text", "text": "/media"})).await;
    let media = c.event("media").await;
    let path = media["path"].as_str().unwrap();
    assert!(Path::new(path).starts_with(data.path()), "{path}");
    assert_eq!(std::fs::metadata(path).unwrap().len(), media["size"].as_u64().unwrap());
    c.quit().await;

    let log = srv.log();
    let doc_entry = log.iter().find(|e| e.id == file_id).unwrap();
    assert!(matches!(&doc_entry.item, LogItem::Media { kind, mime, filename, caption, .. }
        if kind == "document" && mime == "application/pdf" && filename == "report.pdf" && caption.as_deref() == Some("the report")));
    let audio = log.iter().find(|e| e.id == audio_id).unwrap();
    match &audio.item {
        LogItem::Audio { format, text, duration_secs, bytes, .. } => {
            assert_eq!(format, "wav");
            assert_eq!(text.as_deref(), Some("transcript"));
            let d = duration_secs.unwrap();
            assert!((d - 1.0).abs() < 0.02, "duration {d}");
            assert!((*bytes as i64 - (44 + 32_000)).abs() < 200, "16 kHz mono PCM16: {bytes} bytes");
        }
        other => panic!("{other:?}"),
    }
    assert!(log.iter().any(|e| matches!(&e.item, LogItem::PromptAnswer { option_id, text, .. } if option_id == "other" && text.as_deref() == Some("YAML please"))));
}

#[tokio::test]
async fn jsonl_queued_message_survives_a_restart_of_the_process() {
    let probe = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = probe.local_addr().unwrap();
    drop(probe);
    let url = format!("ws://{addr}/ws");
    let data = tempfile::tempdir().unwrap();
    let mut c = cli(&url, "cli-4", data.path(), hermes_devserver::DEV_TOKEN, &[]);
    c.event("disconnected").await;
    c.send(json!({"cmd": "text", "text": "written offline", "id": "fixed-id-1"})).await;
    c.quit().await;

    let srv = hermes_devserver::start(ServerConfig { bind: addr, ..ServerConfig::fast() }).await.unwrap();
    let mut c = cli(&url, "cli-4", data.path(), hermes_devserver::DEV_TOKEN, &[]);
    c.seen_or_wait(|v| v["event"] == "delivered" && v["id"] == "fixed-id-1").await;
    c.seen_or_wait(|v| v["event"] == "message" && v["final"] == true).await;
    c.quit().await;
    let log = srv.log();
    assert_eq!(log.len(), 1);
    assert_eq!((log[0].id.as_str(), log[0].repeats), ("fixed-id-1", 0));
}

#[tokio::test]
async fn jsonl_access_denied_and_v3() {
    let srv = server().await;
    let data = tempfile::tempdir().unwrap();
    let mut c = cli(&srv.adapter_url(), "cli-5", data.path(), "wrong-token-value", &[]);
    let denied = c.event("access_denied").await;
    assert!(denied["reason"].is_string());
    let stderr = c.quit().await;
    assert!(!stderr.contains("wrong-token-value"));

    let jwt = srv.mint_v3_token("carol").unwrap();
    let mut c = cli(&srv.v3_url(), "cli-6", data.path(), &jwt, &["--dialect", "v3"]);
    c.event("ready").await;
    c.send(json!({"cmd": "text", "text": "/stream"})).await;
    let m = c.wait(|v| v["event"] == "message" && v["final"] == true).await;
    assert!(m["text"].as_str().unwrap().len() > 100);
    let stderr = c.quit().await;
    assert!(!stderr.contains(&jwt), "the v3 token (in the URL) leaked into the log");
}

#[test]
fn no_token_is_a_clear_error() {
    let data = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hermes-chat"))
        .args(["--url", "ws://127.0.0.1:9/ws", "--device-id", "x", "--jsonl", "--data-dir"])
        .arg(data.path())
        .env_remove("HERMES_TOKEN")
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no token"), "{err}");
}

/// The friendly mode says why an agent cannot be reached in words, not an OS error number: nothing listens on the
/// port → "can't reach the agent — connection refused".
#[tokio::test]
async fn interactive_an_agent_never_reached_is_explained() {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = probe.local_addr().unwrap();
    drop(probe);
    let data = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_hermes-chat"))
        .args(["--url", &format!("ws://{addr}/ws"), "--device-id", "cli-refused", "--data-dir"])
        .arg(data.path())
        .env("HERMES_TOKEN", "t")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(15), async {
        while let Some(l) = lines.next_line().await.unwrap() {
            if l.starts_with('○') {
                return l;
            }
        }
        panic!("hermes-chat ended without a disconnect line");
    })
    .await
    .unwrap();
    assert!(line.contains("can't reach the agent — connection refused"), "{line}");
    assert!(!line.contains("os error"), "{line}");
    let _ = child.kill().await;
}

/// A-3 through the contract, for every documented shape: `ready.features` says what the agent accepts and a file is
/// sent or refused with `capability_off` accordingly (absent / `{}` / the real `{"max_media_bytes": N}` keep files
/// on; `"media": false` or a 0 limit switch them off).
#[tokio::test]
async fn jsonl_capability_shapes_decide_features_and_file_refusals() {
    use hermes_devserver::Capabilities;
    let shapes = [
        (Capabilities::Absent, true),
        (Capabilities::parse("{}").unwrap(), true),
        (Capabilities::Real, true),
        (Capabilities::parse(r#"{"media":false}"#).unwrap(), false),
        (Capabilities::parse(r#"{"max_media_bytes":0}"#).unwrap(), false),
    ];
    for (i, (caps, files)) in shapes.into_iter().enumerate() {
        let srv =
            hermes_devserver::start(ServerConfig { capabilities: caps.clone(), ..ServerConfig::fast() }).await.unwrap();
        let data = tempfile::tempdir().unwrap();
        let mut c = cli(&srv.adapter_url(), &format!("cli-caps-{i}"), data.path(), srv.token(), &[]);
        let ready = c.event("ready").await;
        assert_eq!(ready["features"]["files"], files, "{caps:?}");
        assert_eq!(ready["features"]["voice"], true, "{caps:?}");
        let doc = data.path().join("a.txt");
        std::fs::write(&doc, b"hello").unwrap();
        c.send(json!({"cmd": "file", "path": doc, "id": "f1"})).await;
        if files {
            c.wait(|v| v["event"] == "delivered" && v["id"] == "f1").await;
        } else {
            let r = c.event("rejected").await;
            assert_eq!((&r["cmd"], &r["code"]), (&json!("file"), &json!("capability_off")), "{caps:?}");
        }
        c.quit().await;
        assert_eq!(srv.log().iter().any(|e| e.id == "f1"), files, "{caps:?}");
    }
}
