//! The agent cannot set our limits: its `max_media_bytes` is clamped to ours, and unfinished
//! incoming files share one fixed buffer whose size the agent's numbers do not move. Synthetic time (`t0 + ms`).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use base64::Engine as _;
use hermes_protocol::adapter::Device;
use hermes_protocol::media::{DEFAULT_MEDIA_CAP, MIB, MediaError, UpMediaMeta};
use hermes_protocol::{Config, Dialect, Event, Features, Io, Outgoing, Refusal, Session};
use serde_json::{Value, json};

const PETA: u64 = 1_000_000_000_000_000;

fn cfg(max_media_bytes: u64) -> Config {
    Config {
        dialect: Dialect::Adapter,
        token: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef".into(),
        device: Device { id: "desktop-1".into(), name: None, platform: None },
        user_id: "admin".into(),
        default_session: "s".into(),
        seed: 7,
        max_media_bytes,
    }
}

fn drain(s: &mut Session, t: Instant) -> (Vec<Io>, Vec<Event>) {
    let ios = std::iter::from_fn(|| s.poll_io(t)).collect();
    (ios, std::iter::from_fn(|| s.poll_event()).collect())
}

/// A session taken to `ready` with `caps`; the `ready` event is returned.
fn ready(our_cap: u64, caps: Value, t: Instant) -> (Session, Event) {
    let mut s = Session::new(cfg(our_cap), t);
    drain(&mut s, t);
    s.handle_connected(t);
    drain(&mut s, t);
    s.handle_text(&json!({"t":"ready","session":"mobile:x","capabilities":caps}).to_string(), t);
    assert!(s.is_ready());
    let (_, evs) = drain(&mut s, t);
    let ready = evs.into_iter().find(|e| matches!(e, Event::Ready { .. })).expect("a ready event");
    (s, ready)
}

fn on_disk(size: u64) -> Outgoing {
    let meta = UpMediaMeta {
        id: "x".into(),
        kind: "document".into(),
        mime: "application/pdf".into(),
        filename: "a.pdf".into(),
        caption: None,
    };
    Outgoing::MediaFile { meta, path: PathBuf::from("/nonexistent/a.pdf"), size }
}

fn features_of(ev: &Event) -> Features {
    match ev {
        Event::Ready { features, .. } => *features,
        other => panic!("not a ready: {other:?}"),
    }
}

/// an agent announcing 10^15 bytes changes nothing beyond our cap — for what we send, what the front ends are
/// told, and what we accept; a smaller agent limit still holds for what we send.
#[test]
fn a3_max_media_bytes_is_clamped_to_our_cap() {
    let t0 = Instant::now();
    let (mut s, ev) = ready(DEFAULT_MEDIA_CAP, json!({"max_media_bytes": PETA}), t0);
    assert_eq!(s.limits().max_media_bytes, 64 * MIB);
    assert_eq!(features_of(&ev).max_file_bytes, Some(64 * MIB), "the UI is told our number, not the agent's");
    assert_eq!(s.check(&on_disk(64 * MIB)), Ok(()));
    assert_eq!(
        s.check(&on_disk(64 * MIB + 1)),
        Err(Refusal::Media(MediaError::TooBig { size: 64 * MIB + 1, limit: 64 * MIB }))
    );
    // an incoming file announced over our cap is refused at its first frame, whatever the agent said
    let big = json!({"t":"media","id":"a1","kind":"document","filename":"x.bin","part":0,"parts":2,"size":PETA,
        "data": base64::engine::general_purpose::STANDARD.encode([0u8; 4096])});
    s.handle_text(&big.to_string(), t0);
    let (_, evs) = drain(&mut s, t0);
    assert!(
        evs.iter().any(|e| matches!(e, Event::Error { code, id: Some(id), .. } if code == "too_big" && id == "a1")),
        "{evs:?}"
    );
    assert_eq!(s.media_buffered_bytes().0, 0);

    // our cap is a setting: 16 MiB
    let (s, ev) = ready(16 * MIB, json!({"max_media_bytes": PETA}), t0);
    assert_eq!((s.limits().max_media_bytes, features_of(&ev).max_file_bytes), (16 * MIB, Some(16 * MIB)));
    assert_eq!(s.media_buffer_cap(), 16 * MIB, "the buffer follows our cap, never the agent's number");

    // the agent's smaller limit still applies to what we send
    let (s, ev) = ready(DEFAULT_MEDIA_CAP, json!({"max_media_bytes": 4 * MIB}), t0);
    assert_eq!((s.limits().max_media_bytes, features_of(&ev).max_file_bytes), (4 * MIB, Some(4 * MIB)));
    assert!(
        matches!(s.check(&on_disk(4 * MIB + 1)), Err(Refusal::Media(MediaError::TooBig { limit, .. })) if limit == 4 * MIB)
    );
    assert_eq!(s.media_buffer_cap(), 64 * MIB);
}

/// A-19 decision: all unfinished incoming files together hold at most the fixed buffer; when a piece would go over,
/// the oldest unfinished file is dropped with `error{code:"media_buffer_full"}` and its later pieces are ignored.
/// The agent announces 10^15 and streams 8 files × 2048 parts of 4 KiB, interleaved: the session's own accounting
/// never passes the cap, files still complete, and nothing is left held at the end.
#[test]
fn a19_unfinished_incoming_files_share_a_fixed_buffer_and_the_oldest_goes_first() {
    let t0 = Instant::now();
    let cap = 16 * MIB;
    let (mut s, _) = ready(cap, json!({"max_media_bytes": PETA}), t0);
    assert_eq!(s.media_buffer_cap(), cap);
    let piece = base64::engine::general_purpose::STANDARD.encode(vec![9u8; 4096]);
    let (files, parts) = (8u32, 2048u32);
    let mut dropped = Vec::new();
    let mut saved = Vec::new();
    for p in 0..parts {
        for f in 0..files {
            let t = t0 + Duration::from_millis(u64::from(p));
            let frame = json!({"t":"media","id":format!("f{f}"),"kind":"document","filename":format!("f{f}.bin"),
                "caption":"kept","part":p,"parts":parts,"final":p + 1 == parts,"data":piece});
            s.handle_text(&frame.to_string(), t);
            let (held, peak) = s.media_buffered_bytes();
            assert!(held <= cap && peak <= cap, "held {held}, peak {peak}, cap {cap}");
            let (ios, evs) = drain(&mut s, t);
            for e in evs {
                match e {
                    Event::Error { code, id: Some(id), .. } if code == "media_buffer_full" => dropped.push(id),
                    Event::Error { code, .. } => panic!("unexpected error {code}"),
                    _ => {}
                }
            }
            for io in ios {
                if let Io::Save { meta, bytes, .. } = io {
                    assert_eq!(bytes.len() as u64, u64::from(parts) * 4096);
                    saved.push(meta.id);
                }
            }
        }
    }
    assert!(!dropped.is_empty(), "64 MiB streamed through a 16 MiB buffer must drop some");
    let mut order = dropped.clone();
    order.sort();
    assert_eq!(dropped, order, "the oldest unfinished file is dropped first");
    assert!(!saved.is_empty(), "the newest files still complete");
    assert!(saved.iter().all(|id| !dropped.contains(id)));
    assert_eq!(dropped.len() + saved.len(), files as usize, "every file is either saved or reported");
    assert_eq!(s.media_buffered_bytes().0, 0, "nothing is left held");
    assert!(s.media_buffered_bytes().1 > cap - 4 * MIB, "the buffer was used up to near its cap");
}
