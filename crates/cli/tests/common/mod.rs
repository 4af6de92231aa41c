//! What the CLI's end-to-end tests share: starting the real `hermes-chat` binary in `--jsonl` mode.

use std::path::Path;
use std::process::Stdio;

use tokio::process::{Child, Command};

/// `hermes-chat --url URL --device-id DEVICE --jsonl --data-dir DATA EXTRA…` with the token in `HERMES_TOKEN`, the
/// log level `log` in `HERMES_LOG`, and stdin/stdout/stderr piped; killed when dropped.
pub fn spawn_cli(url: &str, device: &str, data: &Path, token: &str, log: &str, extra: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_hermes-chat"))
        .args(["--url", url, "--device-id", device, "--jsonl", "--data-dir"])
        .arg(data)
        .args(extra)
        .env("HERMES_TOKEN", token)
        .env("HERMES_LOG", log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("hermes-chat starts")
}
