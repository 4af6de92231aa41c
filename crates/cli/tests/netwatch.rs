//! A-5 through the real `hermes-chat --jsonl`: its system bus (`DBUS_SYSTEM_BUS_ADDRESS`) is a private daemon with a
//! stand-in logind; while it waits out a long backoff, a resume makes it reconnect at once.
#![cfg(target_os = "linux")]

#[path = "../../client/tests/standin/mod.rs"]
mod standin;

use std::process::Stdio;
use std::time::Duration;

use hermes_devserver::Config as ServerConfig;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, BufReader};

#[tokio::test]
async fn a5_jsonl_reconnects_at_once_when_the_machine_wakes() {
    let Some(bus) = standin::bus() else { return };
    let sys = standin::StandIn::start(&bus, Some(standin::CONNECTED_GLOBAL), true).await;
    // the agent is not there yet: its port, free
    let probe = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = probe.local_addr().unwrap();
    drop(probe);
    let data = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_hermes-chat"))
        .args(["--url", &format!("ws://{addr}/ws"), "--device-id", "cli-netwatch", "--jsonl", "--data-dir"])
        .arg(data.path())
        .env("HERMES_TOKEN", hermes_devserver::DEV_TOKEN)
        .env("DBUS_SYSTEM_BUS_ADDRESS", &bus.address)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("hermes-chat starts");
    let _stdin = child.stdin.take().unwrap(); // open: closing it would quit
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen: Vec<Value> = Vec::new();

    // Failed attempts grow the backoff (1, 2, 4, 8 s ± 20 %) until the next try is at least 6 s off.
    let retry_in = loop {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("no long backoff; seen: {seen:#?}"))
            .unwrap()
            .expect("hermes-chat runs");
        let v: Value = serde_json::from_str(&line).unwrap();
        seen.push(v.clone());
        if v["event"] == "disconnected"
            && let Some(ms) = v["retry_in_ms"].as_u64().filter(|ms| *ms >= 6000)
        {
            break Duration::from_millis(ms);
        }
    };
    let own_retry = tokio::time::Instant::now() + retry_in;
    let _srv = hermes_devserver::start(ServerConfig { bind: addr, ..ServerConfig::fast() }).await.unwrap();

    sys.prepare_for_sleep(false).await;

    // A new attempt that reaches `ready`, before the CLI would have tried by itself.
    let mut after: Vec<Value> = Vec::new();
    loop {
        let line = tokio::time::timeout_at(own_retry, lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("no reconnect before the backoff's own retry; since the wake: {after:#?}"))
            .unwrap()
            .expect("hermes-chat runs");
        let v: Value = serde_json::from_str(&line).unwrap();
        let ready = v["event"] == "ready";
        after.push(v);
        if ready {
            break;
        }
    }
    assert_eq!(after[0]["event"], "connecting", "a new attempt first: {after:#?}");
    assert!(!after.iter().any(|v| v["event"] == "disconnected"), "that attempt went through: {after:#?}");
}
