//! The uplink log: every accepted uplink item once per id, with a count of repeats (A-6, G-10).
//!
//! Tests elsewhere use it to prove exactly-once delivery: a repeated id bumps `repeats` of the first entry and is
//! never processed again.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use hermes_protocol::v3::MediaDescriptor;
use serde::Serialize;
use tokio::sync::watch;

/// Which dialect an item came in on: the adapter protocol at `/ws` (A-…) or Hermes Chat v3 at `/ws/app` (G-…).
pub use hermes_protocol::Dialect;

/// One accepted uplink item.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogEntry {
    /// Position in the log (0-based), stable.
    pub seq: usize,
    pub dialect: Dialect,
    /// `device.id` (adapter) or `user_id` (v3).
    pub peer: String,
    /// The client's id of the item. For card answers: the card id (`prompt_id`).
    pub id: String,
    /// How many times the same id came again after it was accepted (dropped, not processed).
    pub repeats: u32,
    pub item: LogItem,
}

/// What was accepted.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LogItem {
    /// A-6b.
    Text { text: String, reply_to: Option<String> },
    /// `bytes` is the decoded size; `duration_secs` is read from the WAV header when it is one.
    Audio { bytes: u64, sha256: String, format: String, text: Option<String>, duration_secs: Option<f64> },
    /// a whole file, logged once when its last missing piece arrived. `filename` is as sent (untrusted).
    Media {
        kind: String,
        filename: String,
        mime: String,
        caption: Option<String>,
        size: u64,
        sha256: String,
        parts: u32,
    },
    /// an answer to a card. `option_id` is the outcome (after the A-15 safe-choice replacement);
    /// `requested_option_id` is what the client sent.
    PromptAnswer { option_id: String, requested_option_id: Option<String>, text: Option<String> },
    /// A v3 message (G-…): `kind` is its `type`.
    V3 { kind: String, session: String, reply_to: Option<String>, text: Option<String>, media: Option<MediaDescriptor> },
}

/// The log store. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub(crate) struct Log {
    inner: Mutex<Inner>,
    version: watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: Vec<LogEntry>,
    by_key: HashMap<(Dialect, String, String), usize>,
}

impl Log {
    pub(crate) fn new() -> Log {
        Log { inner: Mutex::new(Inner::default()), version: watch::Sender::new(0) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn bump(&self) {
        self.version.send_modify(|v| *v += 1);
    }

    /// Whether `(dialect, peer, id)` was accepted already.
    pub(crate) fn seen(&self, dialect: Dialect, peer: &str, id: &str) -> bool {
        self.lock().by_key.contains_key(&(dialect, peer.to_string(), id.to_string()))
    }

    /// Count a repeat of an accepted id. Returns false if the id is unknown.
    pub(crate) fn repeat(&self, dialect: Dialect, peer: &str, id: &str) -> bool {
        let found = {
            let mut g = self.lock();
            match g.by_key.get(&(dialect, peer.to_string(), id.to_string())).copied() {
                Some(i) => {
                    g.entries[i].repeats += 1;
                    true
                }
                None => false,
            }
        };
        if found {
            self.bump();
        }
        found
    }

    /// Accept an item: a new id is recorded and `true` returned (process it); a known id counts as a repeat and
    /// `false` is returned (drop it).
    pub(crate) fn accept(&self, dialect: Dialect, peer: &str, id: &str, item: LogItem) -> bool {
        let new = {
            let mut g = self.lock();
            let key = (dialect, peer.to_string(), id.to_string());
            if let Some(&i) = g.by_key.get(&key) {
                g.entries[i].repeats += 1;
                false
            } else {
                let seq = g.entries.len();
                g.entries.push(LogEntry { seq, dialect, peer: peer.into(), id: id.into(), repeats: 0, item });
                g.by_key.insert(key, seq);
                true
            }
        };
        self.bump();
        new
    }

    pub(crate) fn entries(&self) -> Vec<LogEntry> {
        self.lock().entries.clone()
    }

    /// Wait until `pred(log)` holds, at most `timeout`. Returns the log that satisfied it.
    pub(crate) async fn wait_for(
        &self,
        timeout: Duration,
        mut pred: impl FnMut(&[LogEntry]) -> bool,
    ) -> Option<Vec<LogEntry>> {
        let mut rx = self.version.subscribe();
        let fut = async {
            loop {
                rx.borrow_and_update();
                let entries = self.entries();
                if pred(&entries) {
                    return entries;
                }
                if rx.changed().await.is_err() {
                    // The sender lives as long as `self`: unreachable, but never spin.
                    std::future::pending::<()>().await;
                }
            }
        };
        tokio::time::timeout(timeout, fut).await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a6_repeats_are_counted_not_recorded_twice() {
        let log = Log::new();
        let item = LogItem::Text { text: "hi".into(), reply_to: None };
        assert!(log.accept(Dialect::Adapter, "d1", "m1", item.clone()));
        assert!(!log.accept(Dialect::Adapter, "d1", "m1", item.clone()));
        // same id from another device, or in the other dialect, is another item
        assert!(log.accept(Dialect::Adapter, "d2", "m1", item.clone()));
        assert!(log.accept(Dialect::V3, "d1", "m1", item));
        let e = log.entries();
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].repeats, 1);
        assert!(log.repeat(Dialect::Adapter, "d1", "m1"));
        assert!(!log.repeat(Dialect::Adapter, "d1", "nope"));
        assert_eq!(log.entries()[0].repeats, 2);
    }

    /// The log's JSON names the dialect `adapter` / `v3` (what tests and tools read).
    #[test]
    fn log_json_shape() {
        let log = Log::new();
        log.accept(Dialect::Adapter, "d1", "m1", LogItem::Text { text: "hi".into(), reply_to: None });
        log.accept(Dialect::V3, "u1", "m2", LogItem::Text { text: "yo".into(), reply_to: Some("m1".into()) });
        assert_eq!(
            serde_json::to_value(log.entries()).unwrap(),
            serde_json::json!([
                {"seq": 0, "dialect": "adapter", "peer": "d1", "id": "m1", "repeats": 0,
                 "item": {"type": "text", "text": "hi", "reply_to": null}},
                {"seq": 1, "dialect": "v3", "peer": "u1", "id": "m2", "repeats": 0,
                 "item": {"type": "text", "text": "yo", "reply_to": "m1"}},
            ])
        );
    }
}
