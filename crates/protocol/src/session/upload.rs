//! v3 files go to the gateway over HTTP first (G-9 step 1), then as a `media` message (step 2). The session decides
//! which file goes, when, and whether a failed one is tried again; the caller only carries out [`Io::Upload`] and
//! reports how it went ([`Session::handle_upload_done`], [`Session::handle_upload_failed`]).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Instant;

use super::{Io, Outgoing, Queued, Session};
use crate::backoff::{BackoffPolicy, Jitter, backoff};
use crate::event::Event;
use crate::refusal::Refusal;
use crate::v3::MediaDescriptor;

/// Why an HTTP upload failed, as the caller judged it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UploadFailure {
    /// A passing failure (the network, a 5xx answer): the same file is tried again after a backoff delay (G-10's
    /// sequence: 1 s, 2 s, 4 s, 8 s, then 30 s, ±20 %), or at once after the next `ready` — never in a tight loop.
    Passing(String),
    /// Refused for good (HTTP 413 / `file_too_large` → [`Refusal::FileTooLarge`], another 4xx, an unreadable
    /// file → [`Refusal::UploadFailed`]): the message fails with this refusal and is not tried again.
    Final(Refusal),
}

/// A file waiting for its upload.
#[derive(Debug, Clone)]
struct Pending {
    id: String,
    created_unix: i64,
    path: PathBuf,
    filename: String,
    mime: String,
    caption: Option<String>,
    session: Option<String>,
}

/// The upload queue: one upload at a time, in the order the files were queued.
#[derive(Debug)]
pub(super) struct Uploads {
    queue: VecDeque<Pending>,
    /// The upload in progress (the caller is carrying out its [`Io::Upload`]).
    current: Option<String>,
    /// After a passing failure: no new try before this time. Cleared when it passes and on `ready`.
    retry_at: Option<Instant>,
    /// Passing failures in a row (the backoff step); reset by a success.
    failures: u32,
    jitter: Jitter,
}

impl Uploads {
    pub(super) fn new(jitter: Jitter) -> Uploads {
        Uploads { queue: VecDeque::new(), current: None, retry_at: None, failures: 0, jitter }
    }

    pub(super) fn len(&self) -> usize {
        self.queue.len()
    }

    pub(super) fn contains(&self, id: &str) -> bool {
        self.queue.iter().any(|p| p.id == id)
    }

    /// The retry timer ([`super::Timer::UploadRetry`]), armed only while a failed file waits for it.
    pub(super) fn retry_at(&self) -> Option<Instant> {
        self.retry_at.filter(|_| !self.queue.is_empty())
    }

    pub(super) fn handle_timeout(&mut self, now: Instant) {
        if self.retry_at.is_some_and(|t| now >= t) {
            self.retry_at = None;
        }
    }

    pub(super) fn handle_ready(&mut self) {
        self.retry_at = None;
    }

    /// The next upload to start, if none is running and no retry delay holds it back (the caller checked: ready).
    pub(super) fn next(&mut self, now: Instant) -> Option<Io> {
        if self.current.is_some() || self.retry_at.is_some_and(|t| now < t) {
            return None;
        }
        self.retry_at = None;
        let p = self.queue.front()?;
        self.current = Some(p.id.clone());
        Some(Io::Upload { id: p.id.clone(), path: p.path.clone(), filename: p.filename.clone(), mime: p.mime.clone() })
    }

    /// Take a file out of the queue (done, failed for good, cancelled).
    fn take(&mut self, id: &str) -> Option<Pending> {
        if self.current.as_deref() == Some(id) {
            self.current = None;
        }
        let i = self.queue.iter().position(|p| p.id == id)?;
        self.queue.remove(i)
    }
}

impl Session {
    /// Queue an [`Outgoing::V3File`] (checked by the caller).
    pub(super) fn queue_upload(&mut self, id: &str, created_unix: i64, item: Outgoing) {
        let Outgoing::V3File { path, filename, mime, caption, session } = item else { return };
        if self.uploads.contains(id) || self.outbox.get(id).is_some() {
            return; // already queued
        }
        self.uploads.queue.push_back(Pending {
            id: id.to_string(),
            created_unix,
            path,
            filename,
            mime,
            caption,
            session,
        });
    }

    /// Cancel a file waiting for (or in) its upload. Returns whether it was there.
    pub(super) fn cancel_upload(&mut self, id: &str) -> bool {
        self.uploads.take(id).is_some()
    }

    /// The gateway stored the file of [`Io::Upload`] `id` (G-9 step 1): its `media` message is queued in the outbox
    /// under the same id, with this descriptor, and goes like any other message. Nothing happens for an id no
    /// longer queued (cancelled meanwhile).
    pub fn handle_upload_done(&mut self, id: &str, media: MediaDescriptor) {
        self.uploads.failures = 0;
        let Some(p) = self.uploads.take(id) else { return };
        let item = Outgoing::V3Media { session: p.session, caption: p.caption, media };
        self.outbox.push(id, Queued { item, created_unix: p.created_unix });
    }

    /// The upload of [`Io::Upload`] `id` failed. A passing failure keeps the file first in the queue and arms
    /// [`super::Timer::UploadRetry`] (reported as an `upload_failed` error on the message, which stays queued); a final
    /// one takes it out and reports `rejected` with the refusal's code.
    pub fn handle_upload_failed(&mut self, id: &str, failure: UploadFailure, now: Instant) {
        match failure {
            UploadFailure::Passing(reason) => {
                if self.uploads.current.as_deref() == Some(id) {
                    self.uploads.current = None;
                }
                if !self.uploads.contains(id) {
                    return;
                }
                let delay = backoff(BackoffPolicy::V3, self.uploads.failures, self.uploads.jitter.next());
                self.uploads.failures = self.uploads.failures.saturating_add(1);
                self.uploads.retry_at = Some(now + delay);
                self.events.push_back(Event::Error {
                    code: "upload_failed".into(),
                    text: format!("upload failed, will retry in {:.1} s: {reason}", delay.as_secs_f64()),
                    id: Some(id.to_string()),
                });
            }
            UploadFailure::Final(r) => {
                if self.uploads.take(id).is_some() {
                    self.events.push_back(Event::Rejected {
                        cmd: "file".into(),
                        code: r.code().into(),
                        reason: r.to_string(),
                        id: Some(id.to_string()),
                    });
                }
            }
        }
    }
}
