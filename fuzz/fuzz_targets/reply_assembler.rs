//! Reply assembly (A-9, A-10, A-21; G-5, G-6) under arbitrary sequences of `message` frames and v3 stream events.
//! Oracles: a reply's text is always its accepted chunks joined in index order; `final` only when every chunk is
//! there; text never exceeds MAX_REPLY_BYTES; streams append exactly what was accepted.
#![no_main]

use std::collections::{BTreeMap, HashMap};

use arbitrary::Arbitrary;
use hermes_protocol::adapter::{Chunk, DownMessage};
use hermes_protocol::reply::{MAX_REPLY_BYTES, MAX_TRACKED, ReplyAssembler, StreamAssembler};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Text {
    Small(String),
    /// A large text without a large input: `len` bytes of one character.
    Big {
        len: u32,
        ch: char,
    },
}

impl Text {
    fn render(&self) -> String {
        match self {
            Text::Small(s) => s.clone(),
            Text::Big { len, ch } => ch.to_string().repeat((*len % (3 * 1024 * 1024)) as usize / ch.len_utf8()),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Op {
    Message {
        id: u8,
        text: Text,
        chunk: Option<(u16, u16)>,
        edit: Option<bool>,
        final_: Option<bool>,
        reply_to: Option<u8>,
    },
    StreamStart {
        session: u8,
        id: u8,
    },
    Stream {
        session: u8,
        text: Text,
    },
    StreamEnd {
        session: u8,
    },
    Disconnect,
}

#[derive(Default)]
struct Model {
    chunks: BTreeMap<u32, String>,
}

fuzz_target!(|ops: Vec<Op>| {
    let mut replies = ReplyAssembler::new();
    let mut streams = StreamAssembler::new();
    let mut model: HashMap<String, Model> = HashMap::new();
    let mut open: HashMap<String, (String, String)> = HashMap::new(); // session → (id, text)
    for op in ops.into_iter().take(256) {
        match op {
            Op::Message { id, text, chunk, edit, final_, reply_to } => {
                let id = format!("r{}", id % 64); // ≤ MAX_TRACKED ids: nothing is evicted, the model stays exact
                let text = text.render();
                let chunk = chunk.map(|(index, total)| Chunk { index: index as u32, total: total as u32 });
                let m = DownMessage {
                    id: id.clone(),
                    text: text.clone(),
                    chunk,
                    edit,
                    final_,
                    reply_to: reply_to.map(|r| r.to_string()),
                };
                // errors (bad chunk, too long) change nothing the model tracks
                if let Ok(u) = replies.handle_message(m) {
                    assert_eq!(u.id, id);
                    let entry = model.entry(id).or_default();
                    entry.chunks.insert(chunk.map_or(0, |c| c.index), text);
                    let joined: String = entry.chunks.values().map(String::as_str).collect();
                    assert_eq!(u.text, joined, "text is the accepted chunks in index order");
                    assert!(u.text.len() <= MAX_REPLY_BYTES);
                    if u.final_
                        && let Some(c) = chunk
                    {
                        assert!((0..c.total).all(|i| entry.chunks.contains_key(&i)), "final with a chunk missing");
                    }
                }
                assert!(replies.tracked() <= MAX_TRACKED);
            }
            Op::StreamStart { session, id } => {
                let (session, id) = (format!("s{}", session % 8), format!("str{id}"));
                let out = streams.handle_start(&session, &id, None);
                let prev = open.insert(session.clone(), (id.clone(), String::new()));
                assert_eq!(out.len(), 1 + prev.is_some() as usize);
                if let Some((pid, ptext)) = prev {
                    assert_eq!((&*out[0].id, &*out[0].text, out[0].final_), (pid.as_str(), ptext.as_str(), true));
                }
                let last = out.last().unwrap();
                assert_eq!((&*last.id, last.text.as_str(), last.final_), (id.as_str(), "", false));
            }
            Op::Stream { session, text } => {
                let session = format!("s{}", session % 8);
                let text = text.render();
                match streams.handle_stream(&session, &text) {
                    Ok(Some(u)) => {
                        let (id, acc) = open.get_mut(&session).expect("an update only for an open stream");
                        acc.push_str(&text);
                        assert_eq!((&*u.id, &*u.text, u.final_), (id.as_str(), acc.as_str(), false));
                        assert!(u.text.len() <= MAX_REPLY_BYTES);
                    }
                    Ok(None) => assert!(!open.contains_key(&session), "an open stream ignored a chunk"),
                    Err(_) => assert!(open.contains_key(&session)),
                }
            }
            Op::StreamEnd { session } => {
                let session = format!("s{}", session % 8);
                let out = streams.handle_end(&session);
                match (out, open.remove(&session)) {
                    (Some(u), Some((id, text))) => {
                        assert_eq!((&*u.id, &*u.text, u.final_), (id.as_str(), text.as_str(), true))
                    }
                    (None, None) => {}
                    (a, b) => panic!("stream end mismatch: {a:?} vs {b:?}"),
                }
            }
            Op::Disconnect => {
                let mut ended: Vec<String> = streams
                    .handle_disconnect()
                    .into_iter()
                    .map(|u| {
                        assert!(u.final_);
                        u.id.into_string()
                    })
                    .collect();
                let mut want: Vec<String> = open.drain().map(|(_, (id, _))| id).collect();
                ended.sort();
                want.sort();
                assert_eq!(ended, want);
            }
        }
    }
});
