//! The whole connection machine, both dialects, fed arbitrary frames (spec examples, mutated examples and raw
//! text), pongs, timeouts, closes, submissions and card answers, with outputs drained at random points.
//! Must never panic; `poll_io` must run dry; retry delays stay within the backoff band.
#![no_main]

#[path = "../common/examples.rs"]
mod examples;

use std::sync::Arc;
use std::time::{Duration, Instant};

use arbitrary::Arbitrary;
use hermes_protocol::adapter::Device;
use hermes_protocol::media::{MIB, UpMediaMeta};
use hermes_protocol::v3::MediaDescriptor;
use hermes_protocol::{Config, Dialect, Event, Io, Outgoing, Session};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Frame {
    /// One of the spec examples of the session's dialect.
    Example(u8),
    /// A spec example with a byte range replaced.
    Spliced {
        example: u8,
        at: u16,
        cut: u8,
        with: String,
    },
    Raw(String),
}

#[derive(Arbitrary, Debug)]
enum Submit {
    Text(String),
    Audio { len: u16, text: Option<String> },
    Media { len: u16, big: bool },
    V3Media { size: u32 },
}

#[derive(Arbitrary, Debug)]
enum Op {
    Connected,
    ConnectFailed(Option<u16>),
    Closed(Option<u16>),
    Reconnect,
    Advance {
        secs: u8,
        millis: u16,
    },
    FireTimeout,
    Frame(Frame),
    /// Pong for the ping `back` pings ago (0 = latest), or a raw payload.
    Pong {
        back: u8,
    },
    RawPong(Vec<u8>),
    Activity,
    Submit {
        id: u8,
        item: Submit,
    },
    Answer {
        card: u8,
        option: Option<u8>,
        text: Option<String>,
    },
    Cancel(u8),
    Poll(u8),
    Events,
}

#[derive(Arbitrary, Debug)]
struct Input {
    v3: bool,
    seed: u64,
    ops: Vec<Op>,
}

fn drain_io(s: &mut Session, now: Instant, max: usize, pings: &mut Vec<Vec<u8>>) {
    for _ in 0..max {
        match s.poll_io(now) {
            Some(Io::Ping(p)) => pings.push(p),
            Some(_) => {}
            None => return,
        }
    }
}

fn check_events(s: &mut Session) {
    while let Some(e) = s.poll_event() {
        if let Event::Disconnected { retry_in_ms: Some(ms), .. } = e {
            // A-5 / G-10: 1 s … 30 s, ±20 %
            assert!((799..=36_000).contains(&ms), "retry delay {ms} ms outside the backoff band");
        }
    }
}

fuzz_target!(|input: Input| {
    let dialect = if input.v3 { Dialect::V3 } else { Dialect::Adapter };
    let cfg = Config {
        dialect,
        token: "0123456789abcdef".repeat(4),
        device: Device { id: "desktop-1".into(), name: None, platform: None },
        user_id: "admin".into(),
        default_session: "abc-123-def".into(),
        seed: input.seed,
        max_media_bytes: hermes_protocol::media::DEFAULT_MEDIA_CAP,
    };
    let examples: Vec<&str> = if input.v3 { examples::V3.to_vec() } else { examples::ADAPTER_DOWN.to_vec() };
    let t0 = Instant::now();
    let mut now = t0;
    let mut s = Session::new(cfg, now);
    let mut pings: Vec<Vec<u8>> = Vec::new();
    for op in input.ops.into_iter().take(200) {
        // A-4 / G-3: once denied, nothing leaves that state (new settings make a new session)
        let denied_before = s.is_denied();
        match op {
            Op::Connected => s.handle_connected(now),
            Op::ConnectFailed(status) => s.handle_connect_failed(status, "failed", now),
            Op::Closed(code) => s.handle_closed(code, "", now),
            Op::Reconnect => s.reconnect_now(now),
            Op::Advance { secs, millis } => {
                now += Duration::from_secs(secs as u64) + Duration::from_millis(millis as u64)
            }
            Op::FireTimeout => {
                if let Some(t) = s.poll_timeout() {
                    now = now.max(t);
                }
                s.handle_timeout(now);
            }
            Op::Frame(f) => {
                let text = match f {
                    Frame::Example(i) => examples[i as usize % examples.len()].to_string(),
                    Frame::Spliced { example, at, cut, with } => {
                        let mut e = examples[example as usize % examples.len()].to_string();
                        let mut at = (at as usize) % (e.len() + 1);
                        while !e.is_char_boundary(at) {
                            at -= 1;
                        }
                        let mut end = (at + cut as usize).min(e.len());
                        while !e.is_char_boundary(end) {
                            end += 1;
                        }
                        e.replace_range(at..end, &with);
                        e
                    }
                    Frame::Raw(r) => r,
                };
                s.handle_text(&text, now);
            }
            Op::Pong { back } => {
                if !pings.is_empty() {
                    let i = pings.len() - 1 - (back as usize % pings.len());
                    let p = pings[i].clone();
                    s.handle_pong(&p, now);
                }
            }
            Op::RawPong(p) => s.handle_pong(&p, now),
            Op::Activity => s.handle_activity(now),
            Op::Submit { id, item } => {
                let item = match item {
                    Submit::Text(t) => Outgoing::Text { text: t, reply_to: None, session: None },
                    Submit::Audio { len, text } => Outgoing::Audio { wav: Arc::from(vec![0u8; len as usize]), text },
                    Submit::Media { len, big } => {
                        let size = if big { 8 * MIB as usize + len as usize * 64 } else { len as usize };
                        Outgoing::Media {
                            meta: UpMediaMeta {
                                id: String::new(),
                                kind: "document".into(),
                                mime: "application/pdf".into(),
                                filename: "r.pdf".into(),
                                caption: None,
                            },
                            bytes: Arc::from(vec![7u8; size]),
                        }
                    }
                    Submit::V3Media { size } => Outgoing::V3Media {
                        session: None,
                        caption: None,
                        media: MediaDescriptor {
                            id: "med".into(),
                            name: Some("a.png".into()),
                            mime: "image/png".into(),
                            size: size as u64,
                            width: None,
                            height: None,
                            duration: None,
                        },
                    },
                };
                let _ = s.submit(&format!("m{}", id % 32), 1_719_123_456, item);
            }
            Op::Answer { card, option, text } => {
                let card = if card % 2 == 0 { "5f6a…".to_string() } else { format!("p{card}") };
                let option = option.map(|o| ["c0", "c1", "other", "zzz"][o as usize % 4]);
                let _ = s.answer_prompt(&card, option, text.as_deref());
            }
            Op::Cancel(id) => {
                let _ = s.cancel(&format!("m{}", id % 32));
            }
            Op::Poll(n) => drain_io(&mut s, now, n as usize, &mut pings),
            Op::Events => check_events(&mut s),
        }
        if denied_before {
            assert!(s.is_denied() && !s.is_ready(), "left access-denied without a reconnect (A-4)");
        }
    }
    // everything runs dry: a bounded number of frames is pending (an upload is ≤ 2048 parts)
    drain_io(&mut s, now, 100_000, &mut pings);
    assert!(s.poll_io(now).is_none(), "poll_io does not run dry");
    check_events(&mut s);
});
