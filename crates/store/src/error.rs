//! Error type of the store.

use rusqlite::ErrorCode;

/// Everything that can go wrong in the store. Nothing in this crate panics on I/O or SQLite
/// failures: they all surface as one of these variants.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The requested row (profile, conversation, message, outbox entry, media) does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// The disk (or the file-size limit) is full: SQLITE_FULL. The transaction was rolled back;
    /// nothing half-written remains.
    #[error("disk full: could not write to the database")]
    DiskFull,
    /// The file is not a SQLite database or is damaged (SQLITE_CORRUPT / SQLITE_NOTADB).
    #[error("database file is corrupt or not a database: {0}")]
    Corrupt(String),
    /// Another process holds a lock for longer than the busy timeout.
    #[error("database is busy (locked by another connection)")]
    Busy,
    /// A uniqueness / foreign-key / check constraint was violated, e.g. two messages with the same
    /// server id in one conversation, or an outbox entry for an unknown profile.
    #[error("constraint violated: {0}")]
    Constraint(String),
    /// Applying the schema migrations failed.
    #[error("migration failed: {0}")]
    Migration(String),
    /// The database was written by a newer version of the app (its schema version is above ours).
    #[error("database schema version {found} is newer than this app supports ({supported})")]
    TooNew { found: i64, supported: i64 },
    /// The operation does not apply to this profile's dialect (e.g. creating a second
    /// conversation on an `adapter` profile).
    #[error("profile {profile_id} has dialect {actual}, operation needs {expected}")]
    WrongDialect { profile_id: String, expected: &'static str, actual: &'static str },
    /// The row exists but is in a state that forbids the operation (e.g. marking a `failed`
    /// outbox entry in flight without `outbox_retry` first).
    #[error("{what} is in state {state}, cannot {action}")]
    InvalidState { what: String, state: &'static str, action: &'static str },
    /// An argument was rejected before reaching SQLite (e.g. an absolute media path).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// Filesystem error outside SQLite (creating the data folder).
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// JSON (de)serialisation of a stored column failed.
    #[error("JSON error: {0}")]
    Json(#[from] serde_json::Error),
    /// Any other SQLite error.
    #[error("SQLite error: {0}")]
    Sqlite(rusqlite::Error),
}

/// Result alias of the store.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        if let rusqlite::Error::SqliteFailure(ffi, msg) = &e {
            let text = msg.clone().unwrap_or_else(|| ffi.to_string());
            match ffi.code {
                ErrorCode::DiskFull => return Error::DiskFull,
                ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase => {
                    return Error::Corrupt(text);
                }
                ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => return Error::Busy,
                ErrorCode::ConstraintViolation => return Error::Constraint(text),
                _ => {}
            }
        }
        Error::Sqlite(e)
    }
}

impl From<rusqlite_migration::Error> for Error {
    fn from(e: rusqlite_migration::Error) -> Self {
        use rusqlite_migration::{Error as M, MigrationDefinitionError as D};
        match e {
            M::RusqliteError { err, query } => match Error::from(err) {
                Error::Sqlite(inner) => Error::Migration(format!("{inner} (while running {query})")),
                mapped => mapped,
            },
            M::MigrationDefinition(D::DatabaseTooFarAhead) => {
                Error::TooNew { found: -1, supported: crate::schema::LATEST_VERSION }
            }
            other => Error::Migration(other.to_string()),
        }
    }
}
