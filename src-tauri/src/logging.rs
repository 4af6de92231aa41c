//! Logs: a daily-rotated file in the OS log folder (7 files kept) and stderr. Every line passes through
//! [`crate::security::ScrubWriter`].

use std::path::Path;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use tracing_appender::non_blocking::{NonBlocking, NonBlockingBuilder, WorkerGuard};

use crate::security::ScrubWriter;

pub struct LogGuard(#[allow(dead_code)] Option<WorkerGuard>);

/// Lines the log file's writer thread may have queued. tracing-appender's default, 128,000, is a queue of 4 MB that
/// its channel writes through at start (a slot stamp every 32 bytes): 4 MB of the app's memory for good, in
/// `smaps` of the memory bench. Lines logged while the queue is full are dropped (the default, so a stuck disk never
/// stalls the app); at `info` the app logs a few lines a minute.
const LOG_QUEUE_LINES: usize = 8_192;

/// The log file's writer: daily files in `dir` (7 kept), written by a thread of their own.
fn file_writer(dir: &Path) -> Option<(NonBlocking, WorkerGuard)> {
    std::fs::create_dir_all(dir).ok()?;
    let appender = tracing_appender::rolling::Builder::new()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix("hermes-desktop")
        .filename_suffix("log")
        .max_log_files(7)
        .build(dir)
        .ok()?;
    Some(NonBlockingBuilder::default().buffered_lines_limit(LOG_QUEUE_LINES).finish(appender))
}

pub fn init(dir: &Path) -> LogGuard {
    let filter = EnvFilter::try_from_env("HERMES_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let stderr = tracing_subscriber::fmt::layer().with_writer(|| ScrubWriter(std::io::stderr()));
    match file_writer(dir) {
        Some((nb, guard)) => {
            let layer = tracing_subscriber::fmt::layer().with_ansi(false).with_writer(move || ScrubWriter(nb.clone()));
            let _ = tracing_subscriber::registry().with(filter).with(stderr).with(layer).try_init();
            LogGuard(Some(guard))
        }
        None => {
            let _ = tracing_subscriber::registry().with(filter).with(stderr).try_init();
            tracing::warn!("cannot write logs to {}", dir.display());
            LogGuard(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    /// The smaller queue still holds a burst: 2,000 lines written at once, faster than the writer thread drains them,
    /// all reach the file (none dropped), in order.
    #[test]
    fn a_burst_of_log_lines_all_reach_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let (mut nb, guard) = file_writer(dir.path()).expect("log file");
        for i in 0..2_000 {
            nb.write_all(format!("line {i}\n").as_bytes()).unwrap();
        }
        drop(guard); // flushes the queue
        let file = std::fs::read_dir(dir.path()).unwrap().flatten().next().expect("a log file").path();
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2_000);
        assert_eq!(lines[0], "line 0");
        assert_eq!(lines[1_999], "line 1999");
    }
}
