//! Our media limits through the `hermes-chat` binary against the reference agent: `--media-quota-mb` sets the
//! media folder's quota, and a file from the agent that would go over it is refused with a clear line.

use std::time::Duration;

use hermes_devserver::Config as ServerConfig;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

/// the media folder is already at its 1 MiB quota; the agent's file is refused with `media_quota_full`, the
/// line says how to make room, and nothing new is written to the folder.
#[tokio::test]
async fn interactive_a_file_over_the_media_quota_is_refused_with_a_clear_line() {
    let srv = hermes_devserver::start(ServerConfig::fast()).await.unwrap();
    let data = tempfile::tempdir().unwrap();
    let media = data.path().join("media");
    std::fs::create_dir_all(&media).unwrap();
    std::fs::write(media.join("full.bin"), vec![0u8; 1024 * 1024]).unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_hermes-chat"))
        .args(["--url", &srv.adapter_url(), "--device-id", "cli-quota", "--media-quota-mb", "1", "--data-dir"])
        .arg(data.path())
        .env("HERMES_TOKEN", srv.token())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    let line = tokio::time::timeout(Duration::from_secs(20), async {
        let mut asked = false;
        while let Some(l) = lines.next_line().await.unwrap() {
            seen.push(l.clone());
            if !asked && l.starts_with('●') {
                asked = true;
                stdin.write_all(b"/media\n").await.unwrap();
                stdin.flush().await.unwrap();
            }
            if l.starts_with("⚠ media_quota_full") {
                return l;
            }
        }
        panic!("hermes-chat ended without the quota line");
    })
    .await
    .unwrap_or_else(|_| panic!("timed out; lines: {seen:#?}"));
    assert!(line.contains("the media folder is full (1 MiB of its 1 MiB quota used)"), "{line}");
    assert!(line.contains("--media-quota-mb"), "{line}");
    let names: Vec<_> = std::fs::read_dir(&media).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, vec!["full.bin"], "nothing written over the quota");
    let _ = child.kill().await;
}
