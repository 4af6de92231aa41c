//! The token's only home: the OS keychain — Keychain on macOS, Credential Manager on Windows, the Secret
//! Service on Linux. One entry per profile (service `hermes-desktop`, account = the profile id). Errors say clearly
//! what is wrong (no keychain at all, locked) so the app can offer "remember for this session only".

use crate::engine::Secret;

pub const SERVICE: &str = "hermes-desktop";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeychainError {
    #[error("no system keychain is available here ({0})")]
    Unavailable(String),
    #[error("the system keychain is locked or refused access ({0})")]
    Locked(String),
    #[error("keychain error: {0}")]
    Other(String),
}

impl KeychainError {
    /// What the OS store said, without this error's own sentence (for a note that already says it).
    pub fn reason(&self) -> &str {
        match self {
            KeychainError::Unavailable(r) | KeychainError::Locked(r) | KeychainError::Other(r) => r,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            KeychainError::Unavailable(_) => "keychain_unavailable",
            KeychainError::Locked(_) => "keychain_locked",
            KeychainError::Other(_) => "keychain_error",
        }
    }
}

fn map(e: keyring::Error) -> KeychainError {
    let text = e.to_string();
    match e {
        keyring::Error::NoStorageAccess(_) => KeychainError::Locked(text),
        keyring::Error::PlatformFailure(_) | keyring::Error::NoDefaultStore => KeychainError::Unavailable(text),
        _ => KeychainError::Other(text),
    }
}

fn entry(account: &str) -> Result<keyring::Entry, KeychainError> {
    keyring::Entry::new(SERVICE, account).map_err(map)
}

/// The token of `account`, or `None` when none is stored.
pub fn get(account: &str) -> Result<Option<Secret>, KeychainError> {
    match entry(account)?.get_password() {
        Ok(p) => Ok(Some(Secret::new(p))),
        Err(keyring::Error::NoEntry) => Ok(None),
        Err(e) => Err(map(e)),
    }
}

/// Store (or replace) the token of `account`.
pub fn set(account: &str, token: &Secret) -> Result<(), KeychainError> {
    entry(account)?.set_password(token.expose()).map_err(map)
}

/// Remove the token of `account` (no error if there was none).
pub fn delete(account: &str) -> Result<(), KeychainError> {
    match entry(account)?.delete_credential() {
        Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(e) => Err(map(e)),
    }
}
