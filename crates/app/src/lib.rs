//! The app layer both front ends use (the desktop shell and `hermes-chat`): a profile's connection opened from the
//! store, profiles checked and kept, conversation summaries with drafts and unread counts, history pages with their
//! next cursor, search and export.
//!
//! It owns no connection and knows no UI toolkit: it reads and writes the store and hands back [`types`] values (or,
//! for a connection, the engine's handle and events). Front ends add only what is theirs — the shell its windows,
//! channels and token storage, the CLI its flags and terminal.

mod connect;
mod conversations;
pub mod dashboard;
pub mod delta;
mod error;
mod history;
pub mod hub;
#[cfg(all(target_os = "linux", feature = "notify"))]
pub mod notice;
pub mod picture;
mod profiles;
pub mod readahead;
pub mod resident;
pub mod settings;
pub mod types;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use hermes_store::Store;

pub use connect::{ConnectOptions, Connection, NEW_CONVERSATION_TITLE, Prepared};
pub use error::{Error, Result};
pub use history::{decode_cursor, encode_cursor, safe_name};
pub use profiles::check_input;
pub use types::*;

/// The store and the folders of one data directory, shared by everything that reads or writes them.
#[derive(Clone)]
pub struct App {
    store: Arc<Mutex<Store>>,
    data_dir: PathBuf,
    media_dir: PathBuf,
}

impl App {
    /// `store` is the one in `data_dir` (received files live in its `media` folder).
    pub fn new(store: Store, data_dir: impl Into<PathBuf>) -> App {
        let data_dir = data_dir.into();
        App { store: Arc::new(Mutex::new(store)), media_dir: hermes_store::media_dir(&data_dir), data_dir }
    }

    /// Open (or create) the store in `data_dir`.
    pub fn open(data_dir: impl Into<PathBuf>) -> Result<App> {
        let data_dir = data_dir.into();
        let store = Store::open_in(&data_dir)?;
        Ok(App::new(store, data_dir))
    }

    /// The shared store (the engine's persistence writes through the same one).
    pub fn store(&self) -> &Arc<Mutex<Store>> {
        &self.store
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Where received files are saved (`data_dir/media`).
    pub fn media_dir(&self) -> &Path {
        &self.media_dir
    }

    /// Run `f` with the store locked.
    pub fn with_store<T>(&self, f: impl FnOnce(&Store) -> hermes_store::Result<T>) -> Result<T> {
        let s = self.store.lock()?;
        Ok(f(&s)?)
    }
}
