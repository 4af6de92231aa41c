//! The real client process (`hermes-chat --jsonl`) under attack from its own machine and network:
//! - `kill -9` with 10 messages written to a connection that went half-open (in the outbox, marked in flight) and a
//!   chunked file half received → after a restart all 10 are delivered exactly once, the partial file is discarded
//!   (downlink pieces live in memory only and the adapter frees an unfinished series when the connection drops, A-19;
//!   nothing of it is on disk), and the database passes `PRAGMA integrity_check`;
//! - secrets: full runs in both dialects at the most verbose log level (texts, uploads, downloads, a crash) → the token
//!   appears in no log line, no event, no file of the data folder (database, WAL, media, outbox).

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use hermes_devserver::faultproxy::FaultProxy;
use hermes_devserver::{Config as ServerConfig, LogItem};
use hermes_store::Store;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};

struct Cli {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    /// stderr, drained all the time (trace logs would fill the pipe and block the process)
    stderr: tokio::task::JoinHandle<String>,
    seen: Vec<Value>,
    /// every stdout line, for the secrets check
    out: String,
}

fn cli(url: &str, device: &str, data: &Path, token: &str, extra: &[&str]) -> Cli {
    let mut child = common::spawn_cli(url, device, data, token, "trace", extra);
    let stdin = child.stdin.take().unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut err: ChildStderr = child.stderr.take().unwrap();
    let stderr = tokio::spawn(async move {
        let mut buf = Vec::new();
        let _ = err.read_to_end(&mut buf).await;
        String::from_utf8_lossy(&buf).into_owned()
    });
    Cli { child, stdin, lines, stderr, seen: Vec::new(), out: String::new() }
}

impl Cli {
    async fn send(&mut self, cmd: Value) {
        self.stdin.write_all(format!("{cmd}\n").as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }
    /// the next event line
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("timed out; seen: {:#?}", self.seen))
            .unwrap()
            .unwrap_or_else(|| panic!("hermes-chat exited; seen: {:#?}", self.seen));
        self.out.push_str(&line);
        self.out.push('\n');
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        self.seen.push(v.clone());
        v
    }
    /// an event matching `pred` (one already seen counts: the order of some events is not fixed)
    async fn wait(&mut self, mut pred: impl FnMut(&Value) -> bool) -> Value {
        if let Some(v) = self.seen.iter().find(|v| pred(v)) {
            return v.clone();
        }
        loop {
            let v = self.next().await;
            if pred(&v) {
                return v;
            }
        }
    }
    /// wait until `n` events named `name` were seen
    async fn wait_count(&mut self, name: &str, n: usize) {
        while self.seen.iter().filter(|v| v["event"] == name).count() < n {
            self.next().await;
        }
    }
    /// quit; returns stdout and stderr
    async fn quit(mut self) -> String {
        self.send(json!({"cmd": "quit"})).await;
        let mut rest = String::new();
        let _ = tokio::time::timeout(Duration::from_secs(10), async {
            while let Ok(Some(l)) = self.lines.next_line().await {
                rest.push_str(&l);
                rest.push('\n');
            }
        })
        .await;
        let status = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await.unwrap().unwrap();
        assert!(status.success(), "exit status {status}");
        let err = self.stderr.await.unwrap();
        format!("{}{rest}{err}", self.out)
    }
    /// `kill -9`; returns what it wrote until then
    async fn kill9(mut self) -> String {
        self.child.start_kill().unwrap();
        let status = self.child.wait().await.unwrap();
        use std::os::unix::process::ExitStatusExt as _;
        assert_eq!(status.signal(), Some(9), "killed by SIGKILL");
        let err = self.stderr.await.unwrap();
        format!("{}{err}", self.out)
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
}

fn integrity(data: &Path) -> (Vec<String>, usize) {
    let store = Store::open_in(data).unwrap();
    let problems = store.integrity_check().unwrap();
    let profile = store.profiles().unwrap().into_iter().next().expect("a profile");
    let pending = store.outbox_pending(&profile.id).unwrap().len();
    (problems, pending)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_with_10_queued_messages_and_a_half_received_file_then_restart_delivers_all_once() {
    let srv = hermes_devserver::start(ServerConfig { demo: false, ..ServerConfig::fast() }).await.unwrap();
    let proxy = FaultProxy::start(srv.addr(), 9).await.unwrap();
    let url = format!("ws://{}/ws", proxy.addr());
    let data = tempfile::tempdir().unwrap();
    let mut c = cli(&url, "crash-1", data.path(), srv.token(), &[]);
    c.wait(|v| v["event"] == "ready").await;

    // a chunked file from the agent, half received: part 0 of 3 (then a marker message proves part 0 was read)
    let piece = "QUJD".repeat(2048);
    let part0 = json!({"t":"media","id":"partial-1","kind":"document","mime":"application/octet-stream",
        "filename":"partial.bin","part":0,"parts":3,"data":piece});
    assert_eq!(srv.send_raw_to_device("crash-1", &part0.to_string()), 1);
    srv.send_raw_to_device("crash-1", r#"{"t":"message","id":"marker","text":"part 0 is in","final":true}"#);
    c.wait(|v| v["event"] == "message" && v["id"] == "marker").await;

    // the connection goes half-open: 10 messages are written into it and never confirmed
    proxy.half_open();
    let ids: Vec<String> = (0..10).map(|i| format!("crash-msg-{i}")).collect();
    for id in &ids {
        c.send(json!({"cmd": "text", "text": format!("queued {id}"), "id": id})).await;
    }
    for id in &ids {
        c.wait(|v| v["event"] == "sent" && v["id"] == *id).await;
    }
    assert!(!c.seen.iter().any(|v| v["event"] == "delivered"), "nothing can be confirmed through a half-open line");
    c.kill9().await;
    proxy.drop_all(true);

    // right after the crash: the database is sound and holds the 10 messages
    let (problems, pending) = integrity(data.path());
    assert!(problems.is_empty(), "integrity_check after kill -9: {problems:?}");
    assert_eq!(pending, 10, "the 10 messages are in the durable outbox");

    // restart: all 10 go out, in order, once
    let mut c = cli(&url, "crash-1", data.path(), srv.token(), &[]);
    for id in &ids {
        c.wait(|v| v["event"] == "delivered" && v["id"] == *id).await;
    }
    // the rest of the file never comes (the agent's series died with the connection): nothing is assembled
    tokio::time::sleep(Duration::from_millis(300)).await;
    c.quit().await;
    let log = srv.log();
    let texts: Vec<(&str, u32)> =
        log.iter().filter(|e| matches!(e.item, LogItem::Text { .. })).map(|e| (e.id.as_str(), e.repeats)).collect();
    let want: Vec<(&str, u32)> = ids.iter().map(|id| (id.as_str(), 0)).collect();
    assert_eq!(texts, want, "all 10 arrived once, in order");
    for e in &log {
        if let LogItem::Text { text, .. } = &e.item {
            assert_eq!(text, &format!("queued {}", e.id));
        }
    }

    // the partial file: discarded (nothing of it on disk, no leftover partial)
    let mut files = Vec::new();
    walk(data.path(), &mut files);
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy();
        assert!(!name.contains("partial"), "a piece of the half-received file is on disk: {}", f.display());
    }
    let (problems, pending) = integrity(data.path());
    assert!(problems.is_empty(), "integrity_check after the restart: {problems:?}");
    assert_eq!(pending, 0, "the outbox is empty");
    let store = Store::open_in(data.path()).unwrap();
    for id in &ids {
        let m = store.message_get(id).unwrap().expect("the local echo");
        assert_eq!(m.delivery, Some(hermes_store::Delivery::Delivered), "{id}");
    }
}

fn hits(haystack: &[u8], needle: &str) -> usize {
    haystack.windows(needle.len()).filter(|w| *w == needle.as_bytes()).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_the_token_is_in_no_log_event_database_or_file_after_full_runs_and_a_crash() {
    // distinctive secrets, so a hit can only be a leak
    let token = format!("{}{}", uuid_hex(), uuid_hex());
    let jwt_secret = format!("jwt-secret-{}", uuid_hex());
    let srv = hermes_devserver::start(ServerConfig {
        token: token.clone(),
        v3_jwt_secret: Some(jwt_secret.clone()),
        ..ServerConfig::fast()
    })
    .await
    .unwrap();
    let jwt = srv.mint_v3_token("carol").unwrap();
    let data = tempfile::tempdir().unwrap();
    let file = data.path().join("upload.txt");
    std::fs::write(&file, b"some notes").unwrap();
    let mut output = String::new();

    // adapter: text + reply, a file up, files down (one by url), then quit
    let mut c = cli(&srv.adapter_url(), "secrets-1", data.path(), &token, &[]);
    c.wait(|v| v["event"] == "ready").await;
    c.send(json!({"cmd":"text","text":"hello","id":"s-1"})).await;
    c.wait(|v| v["event"] == "message" && v["final"] == true && v["reply_to"] == "s-1").await;
    c.send(json!({"cmd":"file","path":file,"id":"s-2"})).await;
    c.wait(|v| v["event"] == "delivered" && v["id"] == "s-2").await;
    c.send(json!({"cmd":"text","text":"/media","id":"s-3"})).await;
    c.wait_count("media", 3).await;
    output += &c.quit().await;

    // v3: text, a file up (HTTP with the token), the demo's media down (HTTP with the token), then a crash
    let mut c = cli(&srv.v3_url(), "secrets-2", data.path(), &jwt, &["--dialect", "v3"]);
    c.wait(|v| v["event"] == "ready").await;
    c.send(json!({"cmd":"text","text":"hello v3","id":"v-1"})).await;
    c.wait(|v| v["event"] == "message" && v["final"] == true).await;
    c.send(json!({"cmd":"file","path":file,"id":"v-2"})).await;
    c.wait(|v| v["event"] == "delivered" && v["id"] == "v-2").await;
    c.send(json!({"cmd":"text","text":"/media","id":"v-3"})).await;
    c.wait_count("media", 3).await;
    output += &c.kill9().await;

    // a wrong token: refused; the wrong value is not echoed either
    let wrong = format!("wrong-{}", uuid_hex());
    let mut c = cli(&srv.adapter_url(), "secrets-3", data.path(), &wrong, &[]);
    c.wait(|v| v["event"] == "access_denied").await;
    let denied = c.quit().await;

    assert!(output.contains("DEBUG") || output.contains("TRACE"), "the logs were verbose");
    let secrets = [token.as_str(), jwt.as_str(), jwt.rsplit('.').next().unwrap(), jwt_secret.as_str()];
    for (i, s) in secrets.iter().enumerate() {
        let at = output.find(s).map(|p| {
            let lo = output.floor_char_boundary(p.saturating_sub(300));
            let hi = output.ceil_char_boundary((p + s.len() + 100).min(output.len()));
            output[lo..hi].replace(s, "<SECRET>")
        });
        assert_eq!(at, None, "secret #{i} in the CLI's stdout/stderr");
    }
    assert_eq!(hits(denied.as_bytes(), &wrong), 0, "the refused token in the log");
    let mut files = Vec::new();
    walk(data.path(), &mut files);
    assert!(files.iter().any(|f| f.to_string_lossy().contains("hermes")), "the database is there: {files:?}");
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        for s in secrets.iter().chain([&wrong.as_str()]) {
            assert_eq!(hits(&bytes, s), 0, "a secret in {}", f.display());
        }
    }
}

fn uuid_hex() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}
