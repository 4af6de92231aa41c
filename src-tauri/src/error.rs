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

/// Every `code` the shell's own errors can carry (refused engine commands add `hermes_protocol::Refusal::ALL_CODES`).
/// The page has a sentence for each in every language (`SHELL_ERROR_CODES` in ui/src/lib/errors.ts); the tests below
/// hold the three lists together.
pub const APP_ERROR_CODES: &[&str] = &[
    // the `From` impls below
    "not_found",
    "invalid_input",
    "internal",
    "disk_full",
    "store_corrupt",
    "store_busy",
    "store_too_new",
    "store_error",
    "keychain_unavailable",
    "keychain_locked",
    "keychain_error",
    "invalid_url",
    "permission_denied",
    "io_error",
    // commands.rs, state.rs, media.rs, avatar.rs
    "no_token",
    "open_failed",
    "blocked_url",
    "forbidden_path",
    "is_folder",
    "too_large",
    "not_an_image",
    "not_connected",
    // voice.rs
    "no_microphone",
    "microphone_not_found",
    "microphone_busy",
    "microphone_lost",
    "too_short",
    "audio_failed",
    "invalid_shortcut",
    "shortcut_unavailable",
    "not_recording",
    "tts_unavailable",
    "tts_failed",
];

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The quoted words of `export const <name> = [ … ]` in ui/src/lib/errors.ts.
    fn page_list(name: &str) -> Vec<String> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/lib/errors.ts");
        let ts = std::fs::read_to_string(&path).unwrap();
        let start = ts.find(&format!("export const {name} = [")).unwrap_or_else(|| panic!("{name} not in errors.ts"));
        let body = &ts[start..];
        let body = &body[..body.find("] as const").unwrap()];
        body.lines()
            .map(str::trim)
            .filter_map(|l| l.strip_prefix('\'')?.split('\'').next())
            .map(str::to_string)
            .collect()
    }

    /// Every code written as the literal first argument of `AppError::new` in the shell's sources.
    fn codes_in_sources() -> Vec<(String, String)> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut found = Vec::new();
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let text = std::fs::read_to_string(e.path()).unwrap();
            for (i, _) in text.match_indices("AppError::new(\"") {
                let rest = &text[i + "AppError::new(\"".len()..];
                let code = &rest[..rest.find('"').unwrap()];
                found.push((code.to_string(), e.file_name().to_string_lossy().into_owned()));
            }
        }
        assert!(found.len() > 10, "the scan found too little: {found:?}");
        found
    }

    #[test]
    fn every_code_written_in_the_shell_is_listed() {
        for (code, file) in codes_in_sources() {
            assert!(APP_ERROR_CODES.contains(&code.as_str()), "`{code}` ({file}) is not in APP_ERROR_CODES");
        }
        let store = [
            hermes_store::Error::NotFound("x".into()),
            hermes_store::Error::DiskFull,
            hermes_store::Error::Corrupt("x".into()),
            hermes_store::Error::Busy,
            hermes_store::Error::Constraint("UNIQUE constraint failed: outbox.id".into()),
            hermes_store::Error::Migration("x".into()),
            hermes_store::Error::TooNew { found: 9, supported: 1 },
            hermes_store::Error::InvalidInput("x".into()),
        ];
        let keychain = [
            hermes_client::keychain::KeychainError::Unavailable("x".into()),
            hermes_client::keychain::KeychainError::Locked("x".into()),
            hermes_client::keychain::KeychainError::Other("x".into()),
        ];
        let io = [std::io::ErrorKind::NotFound, std::io::ErrorKind::PermissionDenied, std::io::ErrorKind::Other];
        let mut made: Vec<AppError> = store.into_iter().map(AppError::from).collect();
        made.extend(keychain.into_iter().map(AppError::from));
        made.extend(io.into_iter().map(|k| AppError::from(std::io::Error::from(k))));
        made.push(AppError::from(hermes_client::StartError::Persist("x".into())));
        for e in made {
            assert!(APP_ERROR_CODES.contains(&e.code.as_str()), "`{}` is not in APP_ERROR_CODES", e.code);
        }
    }

    /// The page translates every code the shell, a refused command and a dropped connection can carry (A-3 decision,
    /// issue: no raw SQL or engine text on screen).
    #[test]
    fn the_page_names_every_code() {
        let shell = page_list("SHELL_ERROR_CODES");
        for code in APP_ERROR_CODES {
            assert!(shell.iter().any(|c| c == code), "`{code}` is not in SHELL_ERROR_CODES (ui/src/lib/errors.ts)");
        }
        for code in &shell {
            assert!(APP_ERROR_CODES.contains(&code.as_str()), "`{code}` of SHELL_ERROR_CODES is no AppError code");
        }
        let mut refusals = page_list("REFUSAL_CODES");
        refusals.sort();
        let mut rust = hermes_protocol::Refusal::ALL_CODES.to_vec();
        rust.sort();
        assert_eq!(refusals, rust, "REFUSAL_CODES (ui/src/lib/errors.ts) and Refusal::ALL_CODES differ");

        use hermes_protocol::DisconnectCode::*;
        let all = [Refused, Unreachable, Dns, Timeout, Tls, Http, Closed, Lost, Dead, NoReady, WriteFailed, Protocol];
        // (a new variant fails to compile here until it is listed above, and so on the page)
        for c in all {
            match c {
                Refused | Unreachable | Dns | Timeout | Tls | Http | Closed | Lost | Dead | NoReady | WriteFailed
                | Protocol => {}
            }
        }
        let mut rust: Vec<String> =
            all.iter().map(|c| serde_json::to_value(c).unwrap().as_str().unwrap().to_string()).collect();
        rust.sort();
        let mut page = page_list("DISCONNECT_CODES");
        page.sort();
        assert_eq!(page, rust, "DISCONNECT_CODES (ui/src/lib/errors.ts) and DisconnectCode differ");
    }
}
