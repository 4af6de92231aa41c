//! Reply assembly: adapter chunks and edits (A-9, A-10, A-21) and v3 streams (G-5, G-6).
//!
//! Memory is bounded: one reply holds at most [`MAX_REPLY_BYTES`] of text and at most [`MAX_CHUNKS`] chunks, and
//! the assembler remembers at most [`MAX_TRACKED`] replies (the oldest finished ones are forgotten first).

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher as _;

use smallvec::SmallVec;

use crate::adapter::{DownMessage, MessageRef};
use crate::event::{INLINE_BYTES, SmallString};

pub const MAX_REPLY_BYTES: usize = 4 * 1024 * 1024;
pub const MAX_CHUNKS: u32 = 4096;
pub const MAX_TRACKED: usize = 512;

/// The whole text of a reply so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyUpdate {
    pub id: SmallString,
    pub text: SmallString,
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
    #[error("reply {id} already came whole; chunk {index} of {total} cannot be joined to it")]
    CameWhole { id: String, index: u32, total: u32 },
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
    /// It came whole (one chunk, no `total` above 1) and complete: its text went out with the update and is not kept
    /// (nothing can be joined to it; an edit replaces it whole). See [`ReplyAssembler::handle`].
    released: bool,
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
/// The receive hot path (the engine's throughput goal): the frame's strings are borrowed until they must be kept; the
/// replies live in a slab of at most [`MAX_TRACKED`] slots that is reused in place (a new reply takes the slot of the
/// one it evicts, which the eviction has just read, so no cold memory is written and no entry is moved), and the map
/// is a hashbrown table of slot numbers with a fast seeded hasher (foldhash: the table holds at most
/// [`MAX_TRACKED`] ids, so even a hostile agent's colliding ids cost a bounded scan). Single-chunk replies are
/// stored inline.
#[derive(Default)]
pub struct ReplyAssembler {
    /// Slot numbers in `slots`, by the hash of their id.
    index: hashbrown::HashTable<u32>,
    slots: Vec<Tracked>,
    /// Every tracked slot, oldest reply first.
    order: VecDeque<u32>,
    hasher: hashbrown::DefaultHashBuilder,
}

#[derive(Default)]
struct Tracked {
    hash: u64,
    /// The id's bytes, inline up to 40 (a UUID with a short prefix): no allocation per reply for the usual ids.
    id: SmallVec<[u8; INLINE_BYTES]>,
    reply: Reply,
}

impl std::fmt::Debug for ReplyAssembler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplyAssembler").field("tracked", &self.index.len()).finish()
    }
}

impl ReplyAssembler {
    pub fn new() -> Self {
        Self::default()
    }

    /// One `message` frame in; the reply's whole text so far out. Chunk texts join in `index` order; an edit (or a
    /// repeated chunk) replaces its chunk in place, so a repeat never duplicates text.
    pub fn handle_message(&mut self, m: DownMessage) -> Result<ReplyUpdate, ReplyError> {
        self.handle(m.view())
    }

    /// [`handle_message`](Self::handle_message) for a frame decoded in place ([`crate::adapter::decode_message_ref`]).
    pub fn handle(&mut self, m: MessageRef<'_>) -> Result<ReplyUpdate, ReplyError> {
        let (index, total) = match m.chunk {
            Some(c) => (c.index, Some(c.total)),
            None => (0, None),
        };
        if let Some(t) = total
            && (t == 0 || t > MAX_CHUNKS || index >= t)
        {
            return Err(ReplyError::BadChunk { id: m.id.into_owned(), index, total: t });
        }
        if index >= MAX_CHUNKS {
            return Err(ReplyError::BadChunk { id: m.id.into_owned(), index, total: total.unwrap_or(0) });
        }
        let hash = self.hasher.hash_one(m.id.as_bytes());
        let slots = &self.slots;
        let found = self.index.find(hash, |&s| slots.get(s as usize).is_some_and(|e| e.id[..] == *m.id.as_bytes()));
        let slot = match found {
            Some(&s) => s as usize,
            None => {
                let s = self.free_slot();
                let e = &mut self.slots[s];
                e.hash = hash;
                e.id.clear();
                e.id.extend_from_slice(m.id.as_bytes());
                e.reply = Reply::default();
                self.order.push_back(s as u32);
                let slots = &self.slots;
                self.index.insert_unique(hash, s as u32, |&j| slots.get(j as usize).map_or(0, |e| e.hash));
                s
            }
        };
        let r = &mut self.slots[slot].reply;
        if r.truncated {
            return Err(ReplyError::TooLong { id: m.id.into_owned(), limit: MAX_REPLY_BYTES });
        }
        let whole = index == 0 && total.is_none_or(|t| t == 1);
        if r.released && !whole {
            // **Decision (A-9, A-10):** a chunk for a reply that came whole and complete is refused (`bad_reply`). Its
            // text went to the screen and is not kept here: joining the chunk to nothing would replace the shown reply
            // with a fragment. A spec-following agent never chunks a reply it already sent whole; edits still apply.
            return Err(ReplyError::CameWhole { id: m.id.into_owned(), index, total: total.unwrap_or(0) });
        }
        let old = r.chunk_len(index);
        if r.bytes - old + m.text.len() > MAX_REPLY_BYTES {
            r.truncated = true;
            return Err(ReplyError::TooLong { id: m.id.into_owned(), limit: MAX_REPLY_BYTES });
        }
        if let Some(t) = total {
            r.total = Some(r.total.map_or(t, |old| old.max(t)));
        }
        if let Some(to) = m.reply_to {
            r.reply_to = Some(to.into_owned());
        }
        if m.final_ == Some(true) {
            r.final_seen = true;
        }
        // A reply that comes whole and is complete with this frame (nearly every short reply) needs its text no more:
        // the text goes straight to the update (inline when short: no allocation) and the reply keeps only what an
        // edit needs (final, reply_to) and an empty chunk 0.
        let only = r.chunks.is_empty() || (r.chunks.len() == 1 && r.chunks[0].0 == index);
        let (text, final_) = if only && r.final_seen && r.total.is_none_or(|t| t <= 1) {
            r.released = true;
            r.bytes = 0;
            r.put(index, String::new());
            (SmallString::from(m.text), true)
        } else {
            r.released = false;
            r.bytes = r.bytes - old + m.text.len();
            r.put(index, m.text.into_owned());
            (SmallString::from_string(r.text()), r.is_complete())
        };
        Ok(ReplyUpdate { text, final_, reply_to: r.reply_to.clone(), session: None, id: SmallString::from(m.id) })
    }

    /// A slot for a new reply: a new one while fewer than [`MAX_TRACKED`] are tracked, else the slot of the oldest
    /// finished reply (if none is finished, of the oldest of all), which is forgotten.
    fn free_slot(&mut self) -> usize {
        if self.order.len() < MAX_TRACKED {
            self.slots.push(Tracked::default());
            return self.slots.len() - 1;
        }
        let slots = &self.slots;
        let done = |s: &u32| slots.get(*s as usize).is_none_or(|e| e.reply.is_complete());
        // the usual case first: the oldest reply is finished
        let pos = if self.order.front().is_some_and(&done) { 0 } else { self.order.iter().position(done).unwrap_or(0) };
        let Some(s) = self.order.remove(pos) else {
            // unreachable (MAX_TRACKED > 0); a new slot keeps this total
            self.slots.push(Tracked::default());
            return self.slots.len() - 1;
        };
        let hash = self.slots[s as usize].hash;
        if let Ok(e) = self.index.find_entry(hash, |&j| j == s) {
            e.remove();
        }
        s as usize
    }

    pub fn tracked(&self) -> usize {
        self.index.len()
    }

    /// `typing{stop:true}` (A-11: "switches the indicator off at once, like a final"): every reply still open (no
    /// `final` yet, or chunks missing) is finished now with the text it has, oldest first. A chunk that still arrives
    /// later updates it again.
    pub fn finish_open(&mut self) -> Vec<ReplyUpdate> {
        let mut out = Vec::new();
        for &s in &self.order {
            let Some(e) = self.slots.get_mut(s as usize) else { continue };
            let r = &mut e.reply;
            if r.released || r.truncated || r.is_complete() || r.chunks.is_empty() {
                continue;
            }
            r.final_seen = true;
            r.total = None;
            out.push(ReplyUpdate {
                text: SmallString::from_string(r.text()),
                final_: true,
                reply_to: r.reply_to.clone(),
                session: None,
                id: SmallString::from(String::from_utf8_lossy(&e.id).as_ref()),
            });
        }
        out
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
            id: id.into(),
            text: SmallString::new(),
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
            id: id.as_str().into(),
            text: acc.as_str().into(),
            final_: false,
            reply_to: reply_to.clone(),
            session: Some(session.to_string()),
        }))
    }

    /// `stream_end`: the message is complete. No open stream → ignored.
    pub fn handle_end(&mut self, session: &str) -> Option<ReplyUpdate> {
        let (id, text, reply_to) = self.open.remove(session)?;
        Some(ReplyUpdate {
            id: id.into(),
            text: text.into(),
            final_: true,
            reply_to,
            session: Some(session.to_string()),
        })
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
        assert_eq!((&*u.text, u.final_), ("Counting", false));
        let u = a.handle_message(msg("r1", "Counting the answer…", Some((0, 1)), true, true)).unwrap();
        assert_eq!((&*u.text, u.final_), ("Counting the answer…", true));
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
    fn a10_a21_a_finished_whole_reply_can_be_edited_again_but_not_chunked() {
        let mut a = ReplyAssembler::new();
        let u = a.handle_message(msg("r1", "first answer", None, false, true)).unwrap();
        assert_eq!((&*u.text, u.final_), ("first answer", true));
        // an edit replaces it whole, still final (final is sticky), as often as it comes
        let u = a.handle_message(msg("r1", "corrected answer", None, true, false)).unwrap();
        assert_eq!((&*u.text, u.final_), ("corrected answer", true));
        let u = a.handle_message(msg("r1", "corrected again", Some((0, 1)), true, true)).unwrap();
        assert_eq!((&*u.text, u.final_), ("corrected again", true));
        // a chunk joined to it would show a fragment in its place: refused, and the reply stays editable
        assert!(matches!(
            a.handle_message(msg("r1", "more", Some((1, 2)), false, true)),
            Err(ReplyError::CameWhole { index: 1, total: 2, .. })
        ));
        let u = a.handle_message(msg("r1", "last word", None, true, true)).unwrap();
        assert_eq!((&*u.text, u.final_), ("last word", true));
        // a whole reply still streaming keeps its text: chunks may still join it (out of spec, but nothing is lost)
        a.handle_message(msg("r2", "part one ", None, false, false)).unwrap();
        let u = a.handle_message(msg("r2", "part two", Some((1, 2)), false, true)).unwrap();
        assert_eq!((&*u.text, u.final_), ("part one part two", true));
    }

    #[test]
    fn a10_a_finished_whole_reply_keeps_its_reply_to_and_byte_limit() {
        let mut a = ReplyAssembler::new();
        let mut m = msg("r1", "short", None, false, true);
        m.reply_to = Some("q1".into());
        a.handle_message(m).unwrap();
        let big = "x".repeat(MAX_REPLY_BYTES);
        let u = a.handle_message(msg("r1", &big, None, true, true)).unwrap();
        assert_eq!((u.text.len(), u.reply_to.as_deref()), (MAX_REPLY_BYTES, Some("q1")));
        assert!(matches!(
            a.handle_message(msg("r1", &format!("{big}y"), None, true, true)),
            Err(ReplyError::TooLong { .. })
        ));
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

    /// A-9, A-21: when the table is full the oldest *finished* reply goes first (one probe when it is the oldest of
    /// all); a reply still streaming survives many finished ones after it and keeps joining its chunks.
    #[test]
    fn a9_a21_eviction_keeps_an_unfinished_reply() {
        let mut a = ReplyAssembler::new();
        a.handle_message(msg("open", "part one ", Some((0, 2)), false, false)).unwrap();
        for i in 0..(MAX_TRACKED * 2) {
            a.handle_message(msg(&format!("r{i}"), "t", None, false, true)).unwrap();
        }
        assert_eq!(a.tracked(), MAX_TRACKED);
        let u = a.handle_message(msg("open", "part two", Some((1, 2)), false, true)).unwrap();
        assert_eq!((&*u.text, u.final_), ("part one part two", true));
        // the newest finished one is still known: an edit keeps it final (A-10)
        let last = format!("r{}", MAX_TRACKED * 2 - 1);
        let u = a.handle_message(msg(&last, "edited", None, true, false)).unwrap();
        assert_eq!((&*u.text, u.final_), ("edited", true));
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
        assert_eq!((&*u[0].id, &*u[0].text, u[0].final_), ("a", "one", true));
        assert_eq!((&*u[1].id, u[1].final_), ("b", false));
        // streams in other sessions are independent
        s.handle_start("s2", "c", None);
        s.handle_stream("s2", "two").unwrap();
        assert_eq!(s.handle_end("s1").unwrap().id, "b");
        assert_eq!(s.handle_end("s2").unwrap().text, "two");
    }

    /// The event of a small whole reply allocates nothing (its id and text are inline); longer texts and
    /// replies still streaming are whole and right.
    #[test]
    fn a9_a_small_whole_reply_is_inline_and_a_long_one_is_whole() {
        let mut a = ReplyAssembler::new();
        let frame = r#"{"t":"message","id":"r1","text":"hello number 7, a short reply","final":true}"#;
        let u = a.handle(crate::adapter::decode_message_ref(frame).unwrap()).unwrap();
        assert_eq!((&*u.id, &*u.text, u.final_), ("r1", "hello number 7, a short reply", true));
        assert!(!u.id.spilled() && !u.text.spilled(), "a small reply's event is inline");
        // a UUID id with a prefix still fits
        let id = "msg_0f8fad5b-d9cb-469f-a165-70867728950e";
        assert_eq!(id.len(), INLINE_BYTES);
        let u = a.handle_message(msg(id, "ok", None, false, true)).unwrap();
        assert!(!u.id.spilled());
        // a long text is on the heap, whole; an escaped one is decoded
        let long = "word ".repeat(100);
        let u = a.handle_message(msg("r2", &long, None, false, true)).unwrap();
        assert_eq!(&*u.text, long.as_str());
        assert!(u.text.spilled());
        let esc = r#"{"t":"message","id":"r3","text":"a\nb \"q\"","final":true}"#;
        let u = a.handle(crate::adapter::decode_message_ref(esc).unwrap()).unwrap();
        assert_eq!(&*u.text, "a\nb \"q\"");
        // streaming: the text so far, then edited whole
        let u = a.handle_message(msg("r4", "Count", None, false, false)).unwrap();
        assert_eq!((&*u.text, u.final_), ("Count", false));
        let u = a.handle_message(msg("r4", "Counted: 3", None, true, true)).unwrap();
        assert_eq!((&*u.text, u.final_), ("Counted: 3", true));
    }
}
