//! Why a command was refused before anything went on the wire: one typed value from the session, the engine and the
//! front ends, with a stable [`Refusal::code`] (the `rejected{code}` event, the app's error codes, translated by the
//! UI) and a human English text (`Display`; never SQL, never a raw OS error).

use crate::media::MediaError;

/// A feature the agent can switch off (A-3 decision).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// `media` frames (adapter) — files.
    Files,
    /// `audio` frames (adapter) — voice messages.
    Voice,
}

impl std::fmt::Display for Feature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Feature::Files => "files",
            Feature::Voice => "voice messages",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the message is empty")]
    Empty,
    #[error("the message is too long ({encoded} bytes encoded; at most {limit})")]
    TooLong { encoded: usize, limit: usize },
    #[error("this agent does not accept {0}")]
    FeatureOff(Feature),
    #[error("the recording is {size} bytes; at most {limit} fit in one message (A-24)")]
    AudioTooBig { size: usize, limit: usize },
    /// A file the agent's limits refuse (size, parts, frame size: A-19).
    #[error("{0}")]
    Media(MediaError),
    #[error("not connected: the card cannot be answered now")]
    NotConnected,
    #[error("this card is closed or unknown")]
    UnknownCard,
    #[error("this card was already answered")]
    AlreadyAnswered,
    #[error("`{0}` is not an option of this card")]
    NotAnOption(String),
    #[error("choose an option or write an answer")]
    NoAnswer,
    /// The id is taken by a message the agent may already have (A-6: the adapter drops repeated ids).
    #[error("the id {0:?} is already used by another message")]
    IdInUse(String),
    #[error("{0}")]
    WrongDialect(&'static str),
    /// A file to send could not be read (missing, unreadable, moved while queued).
    #[error("{0}")]
    FileUnreadable(String),
    #[error("{0} is not a file")]
    NotAFile(String),
    /// The message could not be kept on this computer (the outbox is written before anything is sent, A-6).
    #[error("the message could not be saved on this computer: the disk is full")]
    DiskFull,
    #[error("the message could not be saved on this computer (the local database failed)")]
    Store,
    #[error("nothing to cancel with this id")]
    NothingToCancel,
    #[error("the connection to the agent has stopped")]
    EngineStopped,
    #[error("bad command: {0}")]
    BadCommand(String),
    /// An item left the outbox without reaching the agent (its file became unreadable while it was being sent).
    #[error("not sent: {0}")]
    NotSent(String),
    #[error("cancelled")]
    Cancelled,
    /// v3: the gateway refused the upload as too large (HTTP 413 / `file_too_large`, G-9).
    #[error("{0}")]
    FileTooLarge(String),
    /// v3: the gateway refused the upload for another reason.
    #[error("{0}")]
    UploadFailed(String),
}

impl Refusal {
    /// Every code [`Refusal::code`] can return (the UI translates each; a test checks the list is complete).
    pub const ALL_CODES: &'static [&'static str] = &[
        "empty",
        "too_long",
        "capability_off",
        "too_big",
        "bad_frame",
        "not_connected",
        "unknown_card",
        "already_answered",
        "not_an_option",
        "no_answer",
        "id_in_use",
        "wrong_dialect",
        "file_unreadable",
        "not_a_file",
        "disk_full",
        "store_error",
        "not_found",
        "engine_stopped",
        "bad_command",
        "not_sent",
        "cancelled",
        "file_too_large",
        "upload_failed",
    ];

    /// The stable code: `rejected{code}` in `--jsonl`, the app's error code.
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::Empty => "empty",
            Refusal::TooLong { .. } => "too_long",
            Refusal::FeatureOff(_) => "capability_off",
            Refusal::AudioTooBig { .. } => "too_big",
            Refusal::Media(e) => match e.code() {
                "too_big" => "too_big",
                _ => "bad_frame",
            },
            Refusal::NotConnected => "not_connected",
            Refusal::UnknownCard => "unknown_card",
            Refusal::AlreadyAnswered => "already_answered",
            Refusal::NotAnOption(_) => "not_an_option",
            Refusal::NoAnswer => "no_answer",
            Refusal::IdInUse(_) => "id_in_use",
            Refusal::WrongDialect(_) => "wrong_dialect",
            Refusal::FileUnreadable(_) => "file_unreadable",
            Refusal::NotAFile(_) => "not_a_file",
            Refusal::DiskFull => "disk_full",
            Refusal::Store => "store_error",
            Refusal::NothingToCancel => "not_found",
            Refusal::EngineStopped => "engine_stopped",
            Refusal::BadCommand(_) => "bad_command",
            Refusal::NotSent(_) => "not_sent",
            Refusal::Cancelled => "cancelled",
            Refusal::FileTooLarge(_) => "file_too_large",
            Refusal::UploadFailed(_) => "upload_failed",
        }
    }
}

impl From<MediaError> for Refusal {
    fn from(e: MediaError) -> Self {
        Refusal::Media(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant's code is in `ALL_CODES` (the UI's translation list is checked against it).
    #[test]
    fn every_code_is_listed() {
        let all = [
            Refusal::Empty,
            Refusal::TooLong { encoded: 1, limit: 0 },
            Refusal::FeatureOff(Feature::Files),
            Refusal::AudioTooBig { size: 1, limit: 0 },
            Refusal::Media(MediaError::TooBig { size: 2, limit: 1 }),
            Refusal::Media(MediaError::TooManyParts { parts: 3000, limit: 2048 }),
            Refusal::NotConnected,
            Refusal::UnknownCard,
            Refusal::AlreadyAnswered,
            Refusal::NotAnOption("x".into()),
            Refusal::NoAnswer,
            Refusal::IdInUse("x".into()),
            Refusal::WrongDialect("x"),
            Refusal::FileUnreadable("x".into()),
            Refusal::NotAFile("x".into()),
            Refusal::DiskFull,
            Refusal::Store,
            Refusal::NothingToCancel,
            Refusal::EngineStopped,
            Refusal::BadCommand("x".into()),
            Refusal::NotSent("x".into()),
            Refusal::Cancelled,
            Refusal::FileTooLarge("x".into()),
            Refusal::UploadFailed("x".into()),
        ];
        let mut seen: Vec<&str> = all.iter().map(Refusal::code).collect();
        seen.sort();
        seen.dedup();
        let mut listed = Refusal::ALL_CODES.to_vec();
        listed.sort();
        assert_eq!(seen, listed);
    }
}
