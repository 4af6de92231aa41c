//! Logs: a daily-rotated file in the OS log folder (7 files kept) and stderr. Every line passes through
//! [`crate::security::ScrubWriter`].

use std::path::Path;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use crate::security::ScrubWriter;

pub struct LogGuard(#[allow(dead_code)] Option<tracing_appender::non_blocking::WorkerGuard>);

pub fn init(dir: &Path) -> LogGuard {
    let filter = EnvFilter::try_from_env("HERMES_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let stderr = tracing_subscriber::fmt::layer().with_writer(|| ScrubWriter(std::io::stderr()));
    let file = std::fs::create_dir_all(dir).ok().and_then(|_| {
        tracing_appender::rolling::Builder::new()
            .rotation(tracing_appender::rolling::Rotation::DAILY)
            .filename_prefix("hermes-desktop")
            .filename_suffix("log")
            .max_log_files(7)
            .build(dir)
            .ok()
    });
    match file {
        Some(appender) => {
            let (nb, guard) = tracing_appender::non_blocking(appender);
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
