//! Reply assembly: adapter chunks and edits (A-9, A-10, A-21) and v3 streams (G-5, G-6).
//!
//! Memory is bounded: one reply holds at most [`MAX_REPLY_BYTES`] of text and at most [`MAX_CHUNKS`] chunks, and
//! the assembler remembers at most [`MAX_TRACKED`] replies (the oldest finished ones are forgotten first).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use smallvec::SmallVec;

use crate::adapter::DownMessage;

pub const MAX_REPLY_BYTES: usize = 4 * 1024 * 1024;
pub const MAX_CHUNKS: u32 = 4096;
pub const MAX_TRACKED: usize = 512;

/// The whole text of a reply so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyUpdate {
    pub id: String,
    pub text: String,
    pub final_: bool,
    pub reply_to: Option<String>,
    /// v3 conversation.
    pub session: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    #[error("reply {id} is longer than {limit} bytes; the rest is dropped")]
    TooLong { id: String, limit: usize },
    #[error("reply {id}: chunk {index} of {total} is out of range")]
    BadChunk { id: String, index: u32, total: u32 },
}

#[derive(Debug, Default)]
struct Reply {
    /// `(index, text)` sorted by index, each index once. Nearly every reply is one chunk: kept inline, no allocation.
    chunks: SmallVec<[(u32, String); 1]>,
    bytes: usize,
    total: Option<u32>,
    final_seen: bool,
    reply_to: Option<String>,
    truncated: bool,
}

impl Reply {
    fn text(&self) -> String {
        if let [(_, only)] = self.chunks.as_slice() {
            return only.clone();
        }
        let mut s = String::with_capacity(self.bytes);
        for (_, c) in &self.chunks {
            s.push_str(c);
        }
        s
    }
    /// The text of chunk `index` (empty when absent).
    fn chunk_len(&self, index: u32) -> usize {
        self.chunks.binary_search_by_key(&index, |c| c.0).map_or(0, |i| self.chunks[i].1.len())
    }
    fn put(&mut self, index: u32, text: String) {
        match self.chunks.binary_search_by_key(&index, |c| c.0) {
            Ok(i) => self.chunks[i].1 = text,
            Err(i) => self.chunks.insert(i, (index, text)),
        }
    }
    /// Final when `final` was seen and, if the total is known, every chunk is here (out-of-order safe). Each index
    /// is kept once and every index is below the largest total seen (checked on the way in), so counting suffices.
    fn is_complete(&self) -> bool {
        self.final_seen && self.total.is_none_or(|t| self.chunks.len() == t as usize)
    }
}

/// Adapter reply assembler.
///
/// The receive hot path (issue #4's throughput goal): one id allocation shared by the map and the age queue, a fast
/// seeded hasher (foldhash, via hashbrown: the map holds at most [`MAX_TRACKED`] ids, so even a hostile agent's
/// colliding ids cost a bounded scan), and single-chunk replies stored inline.
#[derive(Debug, Default)]
pub struct ReplyAssembler {
    replies: hashbrown::HashMap<Arc<str>, Reply>,
    order: VecDeque<Arc<str>>,
}

impl ReplyAssembler {
    pub fn new() -> Self {
        Self::default()
    }

    /// One `message` frame in; the reply's whole text so far out. Chunk texts join in `index` order; an edit (or a
    /// repeated chunk) replaces its chunk in place, so a repeat never duplicates text.
    pub fn handle_message(&mut self, m: DownMessage) -> Result<ReplyUpdate, ReplyError> {
        let (index, total) = match m.chunk {
            Some(c) => (c.index, Some(c.total)),
            None => (0, None),
        };
        if let Some(t) = total
            && (t == 0 || t > MAX_CHUNKS || index >= t)
        {
            return Err(ReplyError::BadChunk { id: m.id, index, total: t });
        }
        if index >= MAX_CHUNKS {
            return Err(ReplyError::BadChunk { id: m.id, index, total: total.unwrap_or(0) });
        }
        if !self.replies.contains_key(m.id.as_str()) {
            self.evict();
            let id: Arc<str> = Arc::from(m.id.as_str());
            self.order.push_back(id.clone());
            self.replies.insert(id, Reply::default());
        }
        let Some(r) = self.replies.get_mut(m.id.as_str()) else {
            return Err(ReplyError::TooLong { id: m.id, limit: MAX_REPLY_BYTES }); // unreachable: inserted above
        };
        if r.truncated {
            return Err(ReplyError::TooLong { id: m.id, limit: MAX_REPLY_BYTES });
        }
        let old = r.chunk_len(index);
        if r.bytes - old + m.text.len() > MAX_REPLY_BYTES {
            r.truncated = true;
            return Err(ReplyError::TooLong { id: m.id, limit: MAX_REPLY_BYTES });
        }
        r.bytes = r.bytes - old + m.text.len();
        r.put(index, m.text);
        if let Some(t) = total {
            r.total = Some(r.total.map_or(t, |old| old.max(t)));
        }
        if m.reply_to.is_some() {
            r.reply_to = m.reply_to;
        }
        if m.final_ == Some(true) {
            r.final_seen = true;
        }
        Ok(ReplyUpdate {
            text: r.text(),
            final_: r.is_complete(),
            reply_to: r.reply_to.clone(),
            session: None,
            id: m.id,
        })
    }

    fn evict(&mut self) {
        while self.order.len() >= MAX_TRACKED {
            // forget the oldest finished reply; if none is finished, the oldest of all
            let pos =
                self.order.iter().position(|id| self.replies.get(&**id).is_none_or(|r| r.is_complete())).unwrap_or(0);
            if let Some(id) = self.order.remove(pos) {
                self.replies.remove(&*id);
            }
        }
    }

    pub fn tracked(&self) -> usize {
        self.replies.len()
    }
}

/// v3 streams, one open stream per conversation (G-5, G-6).
#[derive(Debug, Default)]
pub struct StreamAssembler {
    open: HashMap<String, (String, String, Option<String>)>, // session → (id, text, reply_to)
}

impl StreamAssembler {
    pub fn new() -> Self {
        Self::default()
    }

    /// `stream_start`: an empty bubble. **Decision (G-6):** one still open in that session is completed first.
    pub fn handle_start(&mut self, session: &str, id: &str, reply_to: Option<String>) -> Vec<ReplyUpdate> {
        let mut out = Vec::new();
        if let Some(prev) = self.handle_end(session) {
            out.push(prev);
        }
        self.open.insert(session.to_string(), (id.to_string(), String::new(), reply_to.clone()));
        out.push(ReplyUpdate {
            id: id.to_string(),
            text: String::new(),
            final_: false,
            reply_to,
            session: Some(session.to_string()),
        });
        out
    }

    /// `stream`: append. **Decision (G-6):** no open stream in that session → ignored (`Ok(None)`).
    pub fn handle_stream(&mut self, session: &str, text: &str) -> Result<Option<ReplyUpdate>, ReplyError> {
        let Some((id, acc, reply_to)) = self.open.get_mut(session) else {
            return Ok(None);
        };
        if acc.len() + text.len() > MAX_REPLY_BYTES {
            return Err(ReplyError::TooLong { id: id.clone(), limit: MAX_REPLY_BYTES });
        }
        acc.push_str(text);
        Ok(Some(ReplyUpdate {
            id: id.clone(),
            text: acc.clone(),
            final_: false,
            reply_to: reply_to.clone(),
            session: Some(session.to_string()),
        }))
    }

    /// `stream_end`: the message is complete. No open stream → ignored.
    pub fn handle_end(&mut self, session: &str) -> Option<ReplyUpdate> {
        let (id, text, reply_to) = self.open.remove(session)?;
        Some(ReplyUpdate { id, text, final_: true, reply_to, session: Some(session.to_string()) })
    }

    /// The connection dropped: open streams cannot continue; they end with what they have.
    pub fn handle_disconnect(&mut self) -> Vec<ReplyUpdate> {
        let sessions: Vec<String> = self.open.keys().cloned().collect();
        sessions.iter().filter_map(|s| self.handle_end(s)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::Chunk;

    fn msg(id: &str, text: &str, chunk: Option<(u32, u32)>, edit: bool, fin: bool) -> DownMessage {
        DownMessage {
            id: id.into(),
            text: text.into(),
            chunk: chunk.map(|(index, total)| Chunk { index, total }),
            edit: edit.then_some(true),
            final_: Some(fin),
            reply_to: None,
        }
    }

    #[test]
    fn a9_chunks_join_in_index_order_even_out_of_order() {
        let mut a = ReplyAssembler::new();
        let u = a.handle_message(msg("r1", "world", Some((1, 2)), false, true)).unwrap();
        assert_eq!(u.text, "world");
        assert!(!u.final_, "final seen but chunk 0 missing: not complete yet");
        let u = a.handle_message(msg("r1", "hello ", Some((0, 2)), false, false)).unwrap();
        assert_eq!(u.text, "hello world");
        assert!(u.final_);
    }

    #[test]
    fn a10_a21_edits_replace_in_place_and_final_ends() {
        let mut a = ReplyAssembler::new();
        let u = a.handle_message(msg("r1", "Counting", Some((0, 1)), true, false)).unwrap();
        assert_eq!((u.text.as_str(), u.final_), ("Counting", false));
        let u = a.handle_message(msg("r1", "Counting the answer…", Some((0, 1)), true, true)).unwrap();
        assert_eq!((u.text.as_str(), u.final_), ("Counting the answer…", true));
    }

    #[test]
    fn a9_repeated_chunk_does_not_duplicate_text() {
        let mut a = ReplyAssembler::new();
        a.handle_message(msg("r", "a", Some((0, 2)), false, false)).unwrap();
        a.handle_message(msg("r", "a", Some((0, 2)), false, false)).unwrap();
        let u = a.handle_message(msg("r", "b", Some((1, 2)), false, true)).unwrap();
        assert_eq!(u.text, "ab");
    }

    #[test]
    fn a22_bad_chunk_indices_are_errors_not_panics() {
        let mut a = ReplyAssembler::new();
        assert!(matches!(
            a.handle_message(msg("r", "x", Some((3, 2)), false, false)),
            Err(ReplyError::BadChunk { .. })
        ));
        assert!(matches!(
            a.handle_message(msg("r", "x", Some((0, 0)), false, false)),
            Err(ReplyError::BadChunk { .. })
        ));
        assert!(a.handle_message(msg("r", "x", Some((0, MAX_CHUNKS + 1)), false, false)).is_err());
    }

    #[test]
    fn endless_non_final_chunks_are_bounded() {
        let mut a = ReplyAssembler::new();
        let big = "x".repeat(1024 * 1024);
        let mut errors = 0;
        for i in 0..8 {
            if a.handle_message(msg("r", &big, Some((i, MAX_CHUNKS)), false, false)).is_err() {
                errors += 1;
            }
        }
        assert_eq!(errors, 4, "the 5th MiB and after are refused");
    }

    #[test]
    fn tracked_replies_are_bounded() {
        let mut a = ReplyAssembler::new();
        for i in 0..(MAX_TRACKED * 3) {
            a.handle_message(msg(&format!("r{i}"), "t", None, false, true)).unwrap();
        }
        assert!(a.tracked() <= MAX_TRACKED);
    }

    #[test]
    fn g5_g6_stream_appends_and_ends() {
        let mut s = StreamAssembler::new();
        let u = s.handle_start("s1", "str_001", Some("msg_001".into()));
        assert_eq!(u.len(), 1);
        assert_eq!(u[0].text, "");
        s.handle_stream("s1", "quick").unwrap();
        let u = s.handle_stream("s1", "sort").unwrap().unwrap();
        assert_eq!(u.text, "quicksort");
        let end = s.handle_end("s1").unwrap();
        assert!(end.final_);
        assert_eq!(end.text, "quicksort");
        assert_eq!(end.reply_to.as_deref(), Some("msg_001"));
    }

    #[test]
    fn g6_stray_stream_ignored_and_new_start_completes_old() {
        let mut s = StreamAssembler::new();
        assert_eq!(s.handle_stream("s1", "x").unwrap(), None);
        assert_eq!(s.handle_end("s1"), None);
        s.handle_start("s1", "a", None);
        s.handle_stream("s1", "one").unwrap();
        let u = s.handle_start("s1", "b", None);
        assert_eq!(u.len(), 2);
        assert_eq!((u[0].id.as_str(), u[0].text.as_str(), u[0].final_), ("a", "one", true));
        assert_eq!((u[1].id.as_str(), u[1].final_), ("b", false));
        // streams in other sessions are independent
        s.handle_start("s2", "c", None);
        s.handle_stream("s2", "two").unwrap();
        assert_eq!(s.handle_end("s1").unwrap().id, "b");
        assert_eq!(s.handle_end("s2").unwrap().text, "two");
    }
}
