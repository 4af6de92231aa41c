//! What can go wrong in the app layer. A front end maps it to its own words (the desktop shell: `AppError`'s code).

use hermes_client::policy::UrlError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A profile without a name (only spaces count as none).
    #[error("the profile needs a name")]
    NameMissing,
    /// The profile's URL is not one the engine would connect to.
    #[error(transparent)]
    InvalidUrl(#[from] UrlError),
    /// A profile, conversation, … that is not (or no longer) in the store.
    #[error("{0} was not found")]
    NotFound(&'static str),
    /// A history cursor that no page handed out.
    #[error("this history cursor is not valid")]
    BadCursor,
    #[error(transparent)]
    Store(#[from] hermes_store::Error),
    /// The engine did not start (its URL, or the outbox could not be read).
    #[error(transparent)]
    Start(#[from] hermes_client::StartError),
    /// A JSON export that could not be written as text.
    #[error("the export could not be written: {0}")]
    Export(#[source] serde_json::Error),
    /// A thread panicked while it held the store.
    #[error("an internal lock is poisoned; restart the app")]
    Poisoned,
}

impl<T> From<std::sync::PoisonError<T>> for Error {
    fn from(_: std::sync::PoisonError<T>) -> Self {
        Error::Poisoned
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
