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

/// The WebSocket and HTTP libraries print whole frames and requests at debug/trace, and the `hello` frame carries the
/// token: their crates (and sub-crates) are capped at `info` whatever `HERMES_LOG` says, as in the CLI. A filter
/// of its own rather than `EnvFilter` directives, which a more specific `HERMES_LOG=hyper_util::client=trace` would
/// override.
const CAPPED: [&str; 8] =
    ["tungstenite", "tokio_tungstenite", "hyper", "hyper_util", "h2", "reqwest", "tauri_plugin_updater", "ureq"];

fn capped(target: &str, level: &tracing::Level) -> bool {
    *level > tracing::Level::INFO
        && CAPPED.iter().any(|c| target.strip_prefix(c).is_some_and(|rest| rest.is_empty() || rest.starts_with("::")))
}

fn cap_libraries() -> tracing_subscriber::filter::FilterFn<impl Fn(&tracing::Metadata<'_>) -> bool> {
    tracing_subscriber::filter::filter_fn(|m| !capped(m.target(), m.level()))
}

pub fn init(dir: &Path) -> LogGuard {
    let filter = EnvFilter::try_from_env("HERMES_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let filter = tracing_subscriber::Layer::and_then(filter, cap_libraries());
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

    /// A trace-level `HERMES_LOG`, even one naming the crate, never lets the WebSocket/HTTP libraries' debug and trace
    /// lines through (they print frames with the token); their info lines and the app's own trace lines still pass.
    #[test]
    fn library_logs_are_capped_at_info_whatever_hermes_log_says() {
        let buf = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
        let sink = buf.clone();
        let filter = EnvFilter::new("trace,hyper_util::client=trace,tokio_tungstenite=trace");
        let subscriber = tracing_subscriber::registry()
            .with(tracing_subscriber::Layer::and_then(filter, cap_libraries()))
            .with(tracing_subscriber::fmt::layer().with_ansi(false).with_writer(move || Sink(sink.clone())));
        tracing::subscriber::with_default(subscriber, || {
            tracing::trace!(target: "tungstenite::protocol", "frame tungstenite-trace");
            tracing::debug!(target: "tokio_tungstenite", "frame tokio-tungstenite-debug");
            tracing::trace!(target: "hyper_util::client::legacy", "request hyper-util-trace");
            tracing::debug!(target: "hyper::proto::h1", "request hyper-debug");
            tracing::trace!(target: "h2::codec", "h2-trace");
            tracing::debug!(target: "reqwest::connect", "reqwest-debug");
            tracing::info!(target: "hyper_util::client", "hyper-util-info");
            tracing::trace!(target: "hypercorn_not_capped", "other-crate-trace");
            tracing::trace!(target: "hermes_desktop::state", "app-trace");
        });
        let text = String::from_utf8(buf.lock().unwrap().clone()).unwrap();
        for hidden in [
            "tungstenite-trace",
            "tokio-tungstenite-debug",
            "hyper-util-trace",
            "hyper-debug",
            "h2-trace",
            "reqwest-debug",
        ] {
            assert!(!text.contains(hidden), "{hidden} got through:\n{text}");
        }
        for shown in ["hyper-util-info", "other-crate-trace", "app-trace"] {
            assert!(text.contains(shown), "{shown} missing:\n{text}");
        }
    }

    #[derive(Clone)]
    struct Sink(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The token is scrubbed as itself, JSON-escaped (as a library logging a frame writes it) and percent-encoded (as
    /// in a logged URL), upper- or lowercase hex, and in a mix of these.
    #[test]
    fn the_scrubber_catches_the_token_in_every_form() {
        use crate::security::{register_secret, scrub};
        let token = "tok/en+\"q\\uote=€9";
        register_secret(token);
        let json = serde_json::to_string(token).unwrap(); // "tok/en+\"q\\uote=€9" with escapes
        let json = &json[1..json.len() - 1];
        let forms = [
            token.to_string(),
            json.to_string(),
            json.replace('/', "\\/"), // `/` escaped as JSON may
            "tok\\u002fen\\u002B\\u0022q\\u005Cuote\\u003d\\u20ac9".to_string(), // every char as \uXXXX
            "tok%2Fen%2B%22q%5Cuote%3D%E2%82%AC9".to_string(), // percent-encoded, uppercase
            "tok%2fen%2b%22q%5cuote%3d%e2%82%ac9".to_string(), // lowercase
            "tok%2Fen+\\\"q%5cuote=%E2%82%AC9".to_string(), // a mix
        ];
        for form in forms {
            let line = format!("{{\"t\":\"hello\",\"token\":\"{form}\"}} and ws://h/ws?token={form}&x=1");
            let out = scrub(&line);
            assert_eq!(
                out, "{\"t\":\"hello\",\"token\":\"[REDACTED]\"} and ws://h/ws?token=[REDACTED]&x=1",
                "form {form}"
            );
        }
        // a line that only resembles the token keeps its text
        assert_eq!(scrub("tok/en+ and tok%2Fen"), "tok/en+ and tok%2Fen");
    }

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
