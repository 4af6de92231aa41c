//! The resident's log: `resident.log` in the log folder, appended to (the previous one kept as `resident.log.1` once
//! it passes [`ROTATE_AT`]). Nothing goes to stdout. The WebSocket and HTTP libraries, which print whole frames (the
//! `hello` frame carries the token, A-2) at debug and trace, are capped at `info` whatever `HERMES_LOG` says.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::Path;
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

pub const LOG_FILE: &str = "resident.log";
/// A log file this big is set aside at start.
pub const ROTATE_AT: u64 = 4 * 1024 * 1024;

const CAPPED: [&str; 7] = ["tungstenite", "tokio_tungstenite", "hyper", "hyper_util", "h2", "reqwest", "zbus"];

/// Whether a line of `target` at `level` is kept out of the log whatever the filter says.
pub fn capped(target: &str, level: &tracing::Level) -> bool {
    *level > tracing::Level::INFO
        && CAPPED.iter().any(|c| target.strip_prefix(c).is_some_and(|rest| rest.is_empty() || rest.starts_with("::")))
}

/// Opens `dir/resident.log` for appending (set aside first when too big).
pub fn open(dir: &Path) -> std::io::Result<File> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(LOG_FILE);
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > ROTATE_AT) {
        let _ = std::fs::rename(&path, dir.join(format!("{LOG_FILE}.1")));
    }
    OpenOptions::new().create(true).append(true).open(path)
}

/// Logs to `dir/resident.log` (filter: `HERMES_LOG`, default `info`); nowhere when the file cannot be opened.
pub fn init(dir: &Path) {
    let filter = EnvFilter::try_from_env("HERMES_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let cap = tracing_subscriber::filter::filter_fn(|m| !capped(m.target(), m.level()));
    match open(dir) {
        Ok(file) => {
            let layer = tracing_subscriber::fmt::layer().with_ansi(false).with_writer(Mutex::new(file));
            let _ = tracing_subscriber::registry()
                .with(tracing_subscriber::Layer::and_then(filter, cap))
                .with(layer)
                .try_init();
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "hermes-resident: cannot write its log in {}: {e}", dir.display());
        }
    }
}
