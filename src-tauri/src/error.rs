//! The one error type of the command layer. It crosses IPC as `{code, message}`: `code` is stable and
//! machine-readable, `message` is meant for the user and never carries a token.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type, thiserror::Error)]
#[error("{code}: {message}")]
pub struct AppError {
    pub code: String,
    pub message: String,
}

pub type AppResult<T> = Result<T, AppError>;

impl AppError {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        AppError { code: code.into(), message: message.into() }
    }
    pub fn not_found(what: &str) -> Self {
        AppError::new("not_found", format!("{what} was not found"))
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        AppError::new("invalid_input", message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        AppError::new("internal", message)
    }
}

impl From<hermes_store::Error> for AppError {
    fn from(e: hermes_store::Error) -> Self {
        use hermes_store::Error as E;
        let code = match &e {
            E::NotFound(_) => "not_found",
            E::DiskFull => "disk_full",
            E::Corrupt(_) => "store_corrupt",
            E::Busy => "store_busy",
            E::InvalidInput(_) | E::Constraint(_) | E::WrongDialect { .. } | E::InvalidState { .. } => "invalid_input",
            E::TooNew { .. } => "store_too_new",
            _ => "store_error",
        };
        AppError::new(code, e.to_string())
    }
}

impl From<hermes_client::keychain::KeychainError> for AppError {
    fn from(e: hermes_client::keychain::KeychainError) -> Self {
        AppError::new(e.code(), e.to_string())
    }
}

impl From<hermes_client::StartError> for AppError {
    fn from(e: hermes_client::StartError) -> Self {
        match e {
            hermes_client::StartError::Url(u) => AppError::new("invalid_url", u.to_string()),
            hermes_client::StartError::Persist(p) => AppError::new("store_error", p),
        }
    }
}

impl From<std::io::Error> for AppError {
    fn from(e: std::io::Error) -> Self {
        let code = match e.kind() {
            std::io::ErrorKind::NotFound => "not_found",
            std::io::ErrorKind::PermissionDenied => "permission_denied",
            _ => "io_error",
        };
        AppError::new(code, e.to_string())
    }
}

impl<T> From<std::sync::PoisonError<T>> for AppError {
    fn from(_: std::sync::PoisonError<T>) -> Self {
        AppError::internal("an internal lock is poisoned; restart the app")
    }
}
