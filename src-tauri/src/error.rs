//! The one error type of the command layer. It crosses IPC as `{code, message}`: `code` is stable and
//! machine-readable, `message` is meant for the user and never carries a token.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type, thiserror::Error)]
#[error("{code}: {message}")]
pub struct AppError {
    pub code: ErrorCode,
    pub message: String,
}

pub type AppResult<T> = Result<T, AppError>;

/// Declares [`ErrorCode`]: each variant with its one wire spelling (serde, TypeScript, [`ErrorCode::as_str`]).
macro_rules! error_codes {
    ($($(#[$m:meta])* $variant:ident = $s:literal,)+) => {
        /// Every `code` a failed call can carry: the shell's own and every refused engine command's
        /// (`hermes_protocol::Refusal::code`). TypeScript sees a string-literal union; the page has a sentence for
        /// each (ui/src/lib/errors.ts, checked by `tsc`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
        pub enum ErrorCode {
            $($(#[$m])* #[serde(rename = $s)] $variant,)+
        }

        impl ErrorCode {
            /// Every code.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)+];

            /// The wire spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $s,)+
                }
            }

            /// The code spelled `s`, if there is one.
            pub fn from_code(s: &str) -> Option<ErrorCode> {
                match s {
                    $($s => Some(ErrorCode::$variant),)+
                    _ => None,
                }
            }
        }
    };
}

error_codes! {
    // the `From` impls below
    NotFound = "not_found",
    InvalidInput = "invalid_input",
    Internal = "internal",
    DiskFull = "disk_full",
    StoreCorrupt = "store_corrupt",
    StoreBusy = "store_busy",
    StoreTooNew = "store_too_new",
    StoreError = "store_error",
    KeychainUnavailable = "keychain_unavailable",
    KeychainLocked = "keychain_locked",
    KeychainError = "keychain_error",
    InvalidUrl = "invalid_url",
    PermissionDenied = "permission_denied",
    IoError = "io_error",
    // the commands, state, media, avatar
    NoToken = "no_token",
    OpenFailed = "open_failed",
    BlockedUrl = "blocked_url",
    ForbiddenPath = "forbidden_path",
    FileNotGranted = "file_not_granted",
    NotViewable = "not_viewable",
    IsFolder = "is_folder",
    TooLarge = "too_large",
    NotAnImage = "not_an_image",
    NotConnected = "not_connected",
    // voice
    NoMicrophone = "no_microphone",
    MicrophoneNotFound = "microphone_not_found",
    MicrophoneBusy = "microphone_busy",
    MicrophoneLost = "microphone_lost",
    TooShort = "too_short",
    AudioFailed = "audio_failed",
    InvalidShortcut = "invalid_shortcut",
    ShortcutUnavailable = "shortcut_unavailable",
    ShortcutConflict = "shortcut_conflict",
    NotRecording = "not_recording",
    TtsUnavailable = "tts_unavailable",
    TtsFailed = "tts_failed",
    // screen capture
    CaptureDenied = "capture_denied",
    CaptureFailed = "capture_failed",
    // a refused engine command (`Refusal::code`; not_found, disk_full, store_error and not_connected are above)
    Empty = "empty",
    TooLong = "too_long",
    CapabilityOff = "capability_off",
    TooBig = "too_big",
    BadFrame = "bad_frame",
    UnknownCard = "unknown_card",
    AlreadyAnswered = "already_answered",
    NotAnOption = "not_an_option",
    NoAnswer = "no_answer",
    IdInUse = "id_in_use",
    WrongDialect = "wrong_dialect",
    FileUnreadable = "file_unreadable",
    NotAFile = "not_a_file",
    EngineStopped = "engine_stopped",
    BadCommand = "bad_command",
    NotSent = "not_sent",
    Cancelled = "cancelled",
    FileTooLarge = "file_too_large",
    UploadFailed = "upload_failed",
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Tests (and logs) compare a code with its spelling.
impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl AppError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        AppError { code, message: message.into() }
    }
    pub fn not_found(what: &str) -> Self {
        AppError::new(ErrorCode::NotFound, format!("{what} was not found"))
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        AppError::new(ErrorCode::InvalidInput, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        AppError::new(ErrorCode::Internal, message)
    }
}

/// A refused engine command keeps its refusal's code (every `Refusal::ALL_CODES` entry is an [`ErrorCode`]: tested).
impl From<&hermes_protocol::Refusal> for AppError {
    fn from(r: &hermes_protocol::Refusal) -> Self {
        AppError::new(ErrorCode::from_code(r.code()).unwrap_or(ErrorCode::Internal), r.to_string())
    }
}

impl From<hermes_protocol::Refusal> for AppError {
    fn from(r: hermes_protocol::Refusal) -> Self {
        AppError::from(&r)
    }
}

impl From<hermes_store::Error> for AppError {
    fn from(e: hermes_store::Error) -> Self {
        use hermes_store::Error as E;
        let code = match &e {
            E::NotFound(_) => ErrorCode::NotFound,
            E::DiskFull => ErrorCode::DiskFull,
            E::Corrupt(_) => ErrorCode::StoreCorrupt,
            E::Busy => ErrorCode::StoreBusy,
            E::InvalidInput(_) | E::Constraint(_) | E::WrongDialect { .. } | E::InvalidState { .. } => {
                ErrorCode::InvalidInput
            }
            E::TooNew { .. } => ErrorCode::StoreTooNew,
            _ => ErrorCode::StoreError,
        };
        AppError::new(code, e.to_string())
    }
}

impl From<hermes_client::keychain::KeychainError> for AppError {
    fn from(e: hermes_client::keychain::KeychainError) -> Self {
        use hermes_client::keychain::KeychainError as K;
        let code = match &e {
            K::Unavailable(_) => ErrorCode::KeychainUnavailable,
            K::Locked(_) => ErrorCode::KeychainLocked,
            K::Other(_) => ErrorCode::KeychainError,
        };
        AppError::new(code, e.to_string())
    }
}

impl From<hermes_client::StartError> for AppError {
    fn from(e: hermes_client::StartError) -> Self {
        match e {
            hermes_client::StartError::Url(u) => AppError::new(ErrorCode::InvalidUrl, u.to_string()),
            hermes_client::StartError::Persist(p) => AppError::new(ErrorCode::StoreError, p.to_string()),
        }
    }
}

impl From<std::io::Error> for AppError {
    fn from(e: std::io::Error) -> Self {
        let code = match e.kind() {
            std::io::ErrorKind::NotFound => ErrorCode::NotFound,
            std::io::ErrorKind::PermissionDenied => ErrorCode::PermissionDenied,
            _ => ErrorCode::IoError,
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

    #[test]
    fn one_spelling_per_code() {
        let mut seen = std::collections::HashSet::new();
        for &c in ErrorCode::ALL {
            assert!(seen.insert(c.as_str()), "{c} twice");
            assert_eq!(serde_json::to_value(c).unwrap(), serde_json::Value::String(c.as_str().into()));
            assert_eq!(serde_json::from_value::<ErrorCode>(c.as_str().into()).unwrap(), c);
            assert_eq!(ErrorCode::from_code(c.as_str()), Some(c));
        }
        assert_eq!(ErrorCode::from_code("brand_new"), None);
    }

    /// The wire shape is `{code, message}` with the code's word.
    #[test]
    fn the_json_is_code_and_message() {
        let e = AppError::new(ErrorCode::NoToken, "no token is saved for this profile");
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"code": "no_token", "message": "no token is saved for this profile"})
        );
        assert_eq!(e.to_string(), "no_token: no token is saved for this profile");
    }

    /// A refused command keeps exactly its refusal's code (never the `internal` fallback).
    #[test]
    fn every_refusal_code_is_an_error_code() {
        for code in hermes_protocol::Refusal::ALL_CODES {
            let c =
                ErrorCode::from_code(code).unwrap_or_else(|| panic!("`{code}` of Refusal::ALL_CODES is no ErrorCode"));
            assert_eq!(c.as_str(), *code);
        }
        use hermes_protocol::{Feature, Refusal};
        let cases = [
            (Refusal::Empty, ErrorCode::Empty),
            (Refusal::FeatureOff(Feature::Voice), ErrorCode::CapabilityOff),
            (Refusal::NothingToCancel, ErrorCode::NotFound),
            (Refusal::Store, ErrorCode::StoreError),
            (Refusal::IdInUse("m1".into()), ErrorCode::IdInUse),
            (Refusal::UploadFailed("502".into()), ErrorCode::UploadFailed),
        ];
        for (r, code) in cases {
            let e = AppError::from(&r);
            assert_eq!(e.code, code, "{r:?}");
            assert_eq!(e.message, r.to_string());
        }
    }

    #[test]
    fn store_keychain_and_io_errors_have_their_codes() {
        use hermes_store::Error as S;
        let store = [
            (S::NotFound("x".into()), ErrorCode::NotFound),
            (S::DiskFull, ErrorCode::DiskFull),
            (S::Corrupt("x".into()), ErrorCode::StoreCorrupt),
            (S::Busy, ErrorCode::StoreBusy),
            (S::Constraint("UNIQUE constraint failed: outbox.id".into()), ErrorCode::InvalidInput),
            (S::Migration("x".into()), ErrorCode::StoreError),
            (S::TooNew { found: 9, supported: 1 }, ErrorCode::StoreTooNew),
            (S::InvalidInput("x".into()), ErrorCode::InvalidInput),
        ];
        for (e, code) in store {
            assert_eq!(AppError::from(e).code, code);
        }
        use hermes_client::keychain::KeychainError as K;
        assert_eq!(AppError::from(K::Unavailable("x".into())).code, ErrorCode::KeychainUnavailable);
        assert_eq!(AppError::from(K::Locked("x".into())).code, ErrorCode::KeychainLocked);
        assert_eq!(AppError::from(K::Other("x".into())).code, ErrorCode::KeychainError);
        let io = |k| AppError::from(std::io::Error::from(k)).code;
        assert_eq!(io(std::io::ErrorKind::NotFound), ErrorCode::NotFound);
        assert_eq!(io(std::io::ErrorKind::PermissionDenied), ErrorCode::PermissionDenied);
        assert_eq!(io(std::io::ErrorKind::Other), ErrorCode::IoError);
    }

    /// The page's lists of what events carry match the Rust sources (its sentences for `ErrorCode` are checked by
    /// `tsc`: errors.ts keys them by the generated union).
    #[test]
    fn the_page_names_every_code() {
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
