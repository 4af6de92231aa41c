//! The Tauri commands: one-line adapters from IPC to `hermes-app` and the shell's own parts (windows, dialogs,
//! keychain). Every command returns `AppResult` (`{code, message}`).
//!
//! A plain `fn` command runs on the main thread, where GTK and WebKit paint and every IPC reply is delivered: commands
//! that read or write the store or files (a search, a 64 MiB pasted image decoded from base64, a media file probed
//! for its duration) are therefore `#[tauri::command(async)]` and run on the async runtime's threads.

pub mod connection;
pub mod conversations;
pub mod files;
pub mod profiles;
pub mod system;

use crate::error::{AppError, AppResult, ErrorCode};

pub(crate) async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> AppResult<T> {
    tauri::async_runtime::spawn_blocking(f).await.map_err(|e| AppError::internal(e.to_string()))
}

impl From<hermes_app::Error> for AppError {
    fn from(e: hermes_app::Error) -> Self {
        use hermes_app::Error as E;
        match e {
            E::Store(e) => e.into(),
            E::Start(e) => e.into(),
            E::NameMissing | E::BadCursor => AppError::invalid(e.to_string()),
            E::InvalidUrl(_) => AppError::new(ErrorCode::InvalidUrl, e.to_string()),
            E::NotFound(what) => AppError::not_found(what),
            E::Export(_) | E::Poisoned => AppError::internal(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_errors_keep_their_codes() {
        let code = |e: hermes_app::Error| AppError::from(e).code;
        assert_eq!(code(hermes_app::Error::NameMissing), ErrorCode::InvalidInput);
        assert_eq!(code(hermes_app::Error::BadCursor), ErrorCode::InvalidInput);
        assert_eq!(code(hermes_app::Error::NotFound("the profile")), ErrorCode::NotFound);
        assert_eq!(code(hermes_app::Error::Store(hermes_store::Error::Busy)), ErrorCode::StoreBusy);
        assert_eq!(code(hermes_app::Error::Poisoned), ErrorCode::Internal);
        let url = hermes_client::policy::check_url("http://example.com", false, true).unwrap_err();
        assert_eq!(code(hermes_app::Error::InvalidUrl(url)), ErrorCode::InvalidUrl);
    }
}
