//! Where the data lives.

use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// File name of the database inside the data folder.
pub const DB_FILE_NAME: &str = "hermes.sqlite3";

/// The platform's data folder for the app
/// (`ProjectDirs::from("app", "hermes", "hermes-desktop")`, its `data_dir()`), e.g.
/// `~/.local/share/hermes-desktop` on Linux. `None` when no home directory is known.
pub fn default_data_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("app", "hermes", "hermes-desktop").map(|d| d.data_dir().to_path_buf())
}

/// The data folder to use: `override_dir` (e.g. the CLI's `--data-dir`) if given, else
/// [`default_data_dir`].
pub fn resolve_data_dir(override_dir: Option<&Path>) -> Result<PathBuf> {
    match override_dir {
        Some(dir) => Ok(dir.to_path_buf()),
        None => default_data_dir()
            .ok_or_else(|| Error::InvalidInput("no home directory: pass an explicit data directory".into())),
    }
}

/// `data_dir/media`: where the engine saves media files (paths in the media index are relative
/// to it).
pub fn media_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("media")
}
