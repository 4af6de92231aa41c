//! State-machine tests of `Session` with synthetic time (`t0 + Duration`), both dialects. Each test names the
//! requirement it checks (A-n: spec/adapter.md, G-n: spec/chat-v3.md).

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use hermes_protocol::adapter::{Device, PromptOption};
use hermes_protocol::media::MediaError;
use hermes_protocol::media::{MIB, UpMediaMeta};
use hermes_protocol::session::{Timer, UploadFailure};
use hermes_protocol::v3::MediaDescriptor;
use hermes_protocol::{
    Config, Dialect, Direction, DisconnectCode, DownloadSource, Event, Feature, Features, Io, Outgoing, Refusal,
    Session,
};
use serde_json::{Value, json};

const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn cfg(dialect: Dialect) -> Config {
    Config {
        dialect,
        token: TOKEN.into(),
        device: Device { id: "desktop-1".into(), name: Some("host".into()), platform: Some("linux".into()) },
        user_id: "admin".into(),
        default_session: "abc-123-def".into(),
        seed: 0x5eed,
        max_media_bytes: hermes_protocol::media::DEFAULT_MEDIA_CAP,
    }
}

fn ios(s: &mut Session, now: Instant) -> Vec<Io> {
    let mut out = Vec::new();
    while let Some(io) = s.poll_io(now) {
        out.push(io);
        assert!(out.len() < 10_000, "poll_io does not run dry");
    }
    out
}

fn events(s: &mut Session) -> Vec<Event> {
    std::iter::from_fn(|| s.poll_event()).collect()
}

fn json_of(io: &Io) -> Value {
    match io {
        Io::Send(f) => serde_json::from_str(f).expect("frames are JSON"),
        other => panic!("expected a Send, got {other:?}"),
    }
}

/// The `id` of every `Send` (frames without one are skipped).
fn sent_ids(ios: &[Io]) -> Vec<String> {
    ios.iter()
        .filter(|io| matches!(io, Io::Send(_)))
        .filter_map(|io| json_of(io).get("id").and_then(Value::as_str).map(str::to_string))
        .collect()
}

fn pings(ios: &[Io]) -> Vec<Vec<u8>> {
    ios.iter()
        .filter_map(|io| match io {
            Io::Ping(p) => Some(p.clone()),
            _ => None,
        })
        .collect()
}

fn text(t: &str) -> Outgoing {
    Outgoing::Text { text: t.into(), reply_to: None, session: None }
}

fn file(size: usize) -> Outgoing {
    let bytes: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
    Outgoing::Media {
        meta: UpMediaMeta {
            id: "ignored".into(),
            kind: "document".into(),
            mime: "application/pdf".into(),
            filename: "report.pdf".into(),
            caption: None,
        },
        bytes: Arc::from(bytes),
    }
}

fn ready_frame(caps: Value) -> String {
    json!({"t":"ready","session":"mobile:desktop-1","avatar_url":"","capabilities":caps}).to_string()
}

/// An adapter session taken through connect → hello → ready at `t`; io and events drained.
fn adapter_ready(caps: Value, t: Instant) -> Session {
    let mut s = Session::new(cfg(Dialect::Adapter), t);
    assert_eq!(ios(&mut s, t), vec![Io::Connect]);
    s.handle_connected(t);
    let hello = ios(&mut s, t);
    assert_eq!(hello.len(), 1);
    assert_eq!(json_of(&hello[0])["t"], "hello");
    s.handle_text(&ready_frame(caps), t);
    assert!(s.is_ready());
    events(&mut s);
    s
}

/// A v3 session connected at `t`; io and events drained.
fn v3_ready(t: Instant) -> Session {
    let mut s = Session::new(cfg(Dialect::V3), t);
    assert_eq!(ios(&mut s, t), vec![Io::Connect]);
    s.handle_connected(t);
    assert!(s.is_ready());
    events(&mut s);
    s
}

/// After a drop: run the clock to the retry deadline, connect, and (adapter) receive `ready` with `caps`.
fn reconnect(s: &mut Session, caps: Value, now: Instant) -> Instant {
    let at = s.poll_timeout().expect("a retry is scheduled");
    assert!(at >= now);
    s.handle_timeout(at);
    assert_eq!(ios(s, at), vec![Io::Connect]);
    s.handle_connected(at);
    if s.dialect() == Dialect::Adapter {
        let hello = ios(s, at);
        assert_eq!(hello.len(), 1, "only hello before ready (A-2): {hello:?}");
        assert_eq!(json_of(&hello[0])["t"], "hello");
        s.handle_text(&ready_frame(caps), at);
    }
    assert!(s.is_ready());
    at
}

/// The `Disconnected` event among `evs`: its `retry_in_ms`.
fn retry_ms(evs: &[Event]) -> u64 {
    let found: Vec<u64> = evs
        .iter()
        .filter_map(|e| match e {
            Event::Disconnected { retry_in_ms, .. } => Some(retry_in_ms.expect("a retry is scheduled")),
            _ => None,
        })
        .collect();
    assert_eq!(found.len(), 1, "exactly one Disconnected: {evs:?}");
    found[0]
}

fn pong_for(ping: &[u8]) -> Vec<u8> {
    ping.to_vec()
}

// ================================================================== connection life cycle (adapter)

#[test]
fn a2_hello_is_the_first_frame_carries_the_token_and_nothing_precedes_ready() {
    let t0 = Instant::now();
    let mut s = Session::new(cfg(Dialect::Adapter), t0);
    assert_eq!(events(&mut s), vec![Event::Connecting { attempt: 1 }]);
    // queued before the socket exists: waits (A-6)
    s.submit("m1", 1, text("hello agent")).unwrap();
    assert_eq!(ios(&mut s, t0), vec![Io::Connect]);
    assert_eq!(ios(&mut s, t0), vec![], "nothing before the socket is open");

    s.handle_connected(t0 + ms(50));
    let first = ios(&mut s, t0 + ms(50));
    assert_eq!(first.len(), 1, "only hello before ready: {first:?}");
    assert_eq!(
        json_of(&first[0]),
        json!({"t":"hello","token":TOKEN,"device":{"id":"desktop-1","name":"host","platform":"linux"}})
    );
    // time passes, a card cannot be answered, and still nothing else goes out before `ready`
    s.handle_timeout(t0 + secs(5));
    assert_eq!(ios(&mut s, t0 + secs(5)), vec![]);
    assert_eq!(s.answer_prompt("p", Some("c"), None), Err(Refusal::NotConnected));
    assert_eq!(ios(&mut s, t0 + secs(5)), vec![]);
    assert!(!s.is_ready());

    s.handle_text(&ready_frame(json!({})), t0 + secs(6));
    let after = ios(&mut s, t0 + secs(6));
    assert_eq!(sent_ids(&after), vec!["m1"]);
    assert_eq!(json_of(&after[0]), json!({"t":"text","id":"m1","text":"hello agent"}));
    // the token goes only in hello (A-2, A-29)
    for io in &after {
        if let Io::Send(f) = io {
            assert!(!f.contains(TOKEN), "token leaked into {f}");
        }
    }
}

#[test]
fn a3_ready_gives_capabilities_and_applies_max_media_bytes() {
    let t0 = Instant::now();
    let mut s = Session::new(cfg(Dialect::Adapter), t0);
    ios(&mut s, t0);
    s.handle_connected(t0);
    ios(&mut s, t0);
    events(&mut s);
    let caps = json!({"audio":true,"media":true,"max_media_bytes":16 * MIB});
    s.handle_text(&ready_frame(caps.clone()), t0);
    let evs = events(&mut s);
    assert_eq!(
        evs,
        vec![Event::Ready {
            session: "mobile:desktop-1".into(),
            avatar_url: None, // "" means absent (A-3, A-27)
            capabilities: caps.as_object().unwrap().clone(),
            features: Features { files: true, voice: true, max_file_bytes: Some(16 * MIB) },
        }]
    );
    assert_eq!(s.limits().max_media_bytes, 16 * MIB);
    assert_eq!(s.check(&file(9 * MIB as usize)), Ok(()), "9 MiB fits a 16 MiB limit");
    assert!(matches!(s.check(&file(16 * MIB as usize + 1)), Err(Refusal::Media(MediaError::TooBig { .. }))));

    // absent max_media_bytes: 8 MiB
    let s = adapter_ready(json!({"media":true}), t0);
    assert_eq!(s.limits().max_media_bytes, 8 * MIB);
    assert_eq!(s.capabilities().and_then(|c| c.get("media")), Some(&Value::Bool(true)));
}

/// A-3 decision: text, voice, files and card answers are base frames, on unless the agent switches them off. A real
/// adapter announces only `max_media_bytes`; an absent, empty or unknown-keyed `capabilities` changes nothing.
#[test]
fn a3_absent_empty_or_limit_only_capabilities_keep_voice_and_files_on() {
    let t0 = Instant::now();
    let shapes = [
        json!({"t":"ready","session":"mobile:desktop-1"}).to_string(), // no capabilities at all
        ready_frame(json!({})),
        ready_frame(json!({"max_media_bytes": 8 * MIB})), // the real adapter
        ready_frame(json!({"audio":"yes","media":1,"stickers":false})), // not `false` / unknown: ignored
    ];
    for frame in shapes {
        let mut s = Session::new(cfg(Dialect::Adapter), t0);
        ios(&mut s, t0);
        s.handle_connected(t0);
        ios(&mut s, t0);
        events(&mut s);
        s.handle_text(&frame, t0);
        let evs = events(&mut s);
        assert!(
            matches!(&evs[..], [Event::Ready { features, .. }]
                if *features == Features { files: true, voice: true, max_file_bytes: Some(8 * MIB) }),
            "{frame}: {evs:?}"
        );
        let audio = Outgoing::Audio { wav: Arc::from(vec![1u8; 64]), text: None };
        assert_eq!(s.check(&audio), Ok(()), "{frame}");
        assert_eq!(s.check(&file(10)), Ok(()), "{frame}");
        s.submit("a1", 1, audio).unwrap();
        s.submit("f1", 1, file(10)).unwrap();
        let out = ios(&mut s, t0);
        assert_eq!(sent_ids(&out), vec!["a1", "f1"], "{frame}");
        assert_eq!(json_of(&out[0])["t"], "audio");
        assert_eq!(json_of(&out[1])["t"], "media");
    }
}

/// A-3 decision: a feature is off only when a known key is present and `false`, or `max_media_bytes` is 0 (no file
/// uploads; voice is its own frame, A-24). The refusal names the feature; nothing is queued or sent.
#[test]
fn a3_an_explicit_false_or_a_zero_limit_switches_exactly_that_feature_off() {
    let t0 = Instant::now();
    let audio = || Outgoing::Audio { wav: Arc::from(vec![1u8; 64]), text: None };
    for (caps, files, voice) in [
        (json!({"media": false}), false, true),
        (json!({"audio": false}), true, false),
        (json!({"max_media_bytes": 0}), false, true),
        (json!({"audio": false, "media": false, "max_media_bytes": 8 * MIB}), false, false),
    ] {
        let mut s = adapter_ready(caps.clone(), t0);
        assert_eq!((s.features().files, s.features().voice), (files, voice), "{caps}");
        let want_file = if files { Ok(()) } else { Err(Refusal::FeatureOff(Feature::Files)) };
        let want_audio = if voice { Ok(()) } else { Err(Refusal::FeatureOff(Feature::Voice)) };
        assert_eq!(s.check(&file(10)), want_file, "{caps}");
        assert_eq!(s.check(&audio()), want_audio, "{caps}");
        assert_eq!(s.submit("f1", 1, file(10)), want_file);
        assert_eq!(s.submit("a1", 1, audio()), want_audio);
        assert_eq!(s.queued(), usize::from(files) + usize::from(voice));
        // text needs no capability
        assert_eq!(s.check(&text("hi")), Ok(()));
        let sent = sent_ids(&ios(&mut s, t0));
        assert_eq!(sent.len(), s.queued(), "{caps}: only what is on goes out");
    }
    assert_eq!(Refusal::FeatureOff(Feature::Files).code(), "capability_off");
    assert_eq!(Refusal::FeatureOff(Feature::Files).to_string(), "this agent does not accept files");
}

#[test]
fn a3_items_queued_before_ready_are_rejected_if_the_capability_is_off() {
    let t0 = Instant::now();
    let mut s = Session::new(cfg(Dialect::Adapter), t0);
    // capabilities unknown yet: accepted into the outbox
    s.submit("a1", 1, Outgoing::Audio { wav: Arc::from(vec![0u8; 64]), text: None }).unwrap();
    s.submit("t1", 1, text("hi")).unwrap();
    ios(&mut s, t0);
    s.handle_connected(t0);
    ios(&mut s, t0);
    events(&mut s);
    s.handle_text(&ready_frame(json!({"audio":false})), t0);
    let evs = events(&mut s);
    assert!(
        evs.iter().any(|e| matches!(e, Event::Rejected { cmd, code, id: Some(id), .. }
            if cmd == "audio" && code == "capability_off" && id == "a1")),
        "{evs:?}"
    );
    assert_eq!(sent_ids(&ios(&mut s, t0)), vec!["t1"], "the refused audio is never sent");
}

#[test]
fn a4_close_1008_is_access_denied_and_no_connect_ever_follows() {
    let t0 = Instant::now();
    // after ready
    let mut s = adapter_ready(json!({}), t0);
    s.submit("m1", 1, text("x")).unwrap();
    ios(&mut s, t0);
    s.handle_closed(Some(1008), "device not allowed", t0 + secs(1));
    let evs = events(&mut s);
    assert!(evs.contains(&Event::AccessDenied { reason: "device not allowed".into() }), "{evs:?}");
    assert!(!evs.iter().any(|e| matches!(e, Event::Disconnected { .. })), "no retry announced: {evs:?}");
    assert!(s.is_denied() && !s.is_ready());
    assert_eq!(s.poll_timeout(), None, "no timer: nothing is scheduled");
    for h in [2, 60, 3600, 86_400 * 30] {
        s.handle_timeout(t0 + secs(h));
        let out = ios(&mut s, t0 + secs(h));
        assert!(!out.contains(&Io::Connect), "reconnected after access denied: {out:?}");
    }
    assert_eq!(events(&mut s), vec![]);

    // before ready (wrong token): the same, with a default reason
    let mut s = Session::new(cfg(Dialect::Adapter), t0);
    ios(&mut s, t0);
    s.handle_connected(t0);
    ios(&mut s, t0);
    events(&mut s);
    s.handle_closed(Some(1008), "", t0);
    assert!(matches!(events(&mut s).as_slice(), [Event::AccessDenied { reason }] if reason.contains("1008")));
    s.handle_timeout(t0 + secs(3600));
    assert_eq!(ios(&mut s, t0 + secs(3600)), vec![]);
}

/// Drop → Disconnected in band → no Connect just before the deadline → Connect exactly at it. Returns the deadline.
fn check_retry(s: &mut Session, base_secs: u64, now: Instant, attempt: u32) -> Instant {
    let evs = events(s);
    let r = retry_ms(&evs);
    assert!(r + 1 >= base_secs * 800 && r <= base_secs * 1200, "retry_in_ms {r} outside ±20 % of {base_secs} s");
    let at = s.poll_timeout().expect("retry scheduled");
    assert!(at >= now + ms(r) && at < now + ms(r + 1), "deadline ≠ now + retry_in_ms");
    s.handle_timeout(at - Duration::from_micros(1));
    assert_eq!(ios(s, at), vec![], "connect before the deadline");
    s.handle_timeout(at);
    assert_eq!(ios(s, at), vec![Io::Connect]);
    assert_eq!(events(s), vec![Event::Connecting { attempt }]);
    at
}

#[test]
fn a5_drops_reconnect_at_the_deadline_with_backoff_1_2_4_8_16_30_reset_after_ready() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    let mut now = t0 + secs(10);
    s.handle_closed(Some(1006), "", now);
    now = check_retry(&mut s, 1, now, 2);
    for (i, base) in [2, 4, 8, 16, 30, 30, 30].into_iter().enumerate() {
        s.handle_connect_failed(None, "connection refused", now);
        now = check_retry(&mut s, base, now, i as u32 + 3);
    }
    // a successful ready resets the backoff
    s.handle_connected(now);
    ios(&mut s, now);
    s.handle_text(&ready_frame(json!({})), now);
    events(&mut s);
    s.handle_closed(None, "network changed", now + secs(1));
    check_retry(&mut s, 1, now + secs(1), 2);
}

#[test]
fn a5_socket_open_without_ready_in_time_is_dropped_and_retried() {
    let t0 = Instant::now();
    let mut s = Session::new(cfg(Dialect::Adapter), t0);
    ios(&mut s, t0);
    s.handle_connected(t0);
    ios(&mut s, t0);
    events(&mut s);
    let deadline = s.poll_timeout().unwrap();
    assert!(deadline > t0 && deadline <= t0 + secs(30));
    s.handle_timeout(deadline);
    let out = ios(&mut s, deadline);
    assert!(matches!(out.as_slice(), [Io::Close { .. }]), "{out:?}");
    let r = retry_ms(&events(&mut s));
    assert!((800..=1200).contains(&r));
}

#[test]
fn g10_v3_backoff_is_1_2_4_8_30_and_resets_after_connecting() {
    let t0 = Instant::now();
    let mut s = v3_ready(t0);
    let mut now = t0 + secs(1);
    s.handle_closed(Some(1001), "going away", now);
    now = check_retry(&mut s, 1, now, 2);
    for (i, base) in [2, 4, 8, 30, 30].into_iter().enumerate() {
        s.handle_connect_failed(Some(502), "bad gateway", now);
        now = check_retry(&mut s, base, now, i as u32 + 3);
    }
    s.handle_connected(now);
    assert!(s.is_ready());
    events(&mut s);
    s.handle_closed(None, "", now);
    check_retry(&mut s, 1, now, 2);
}

// ================================================================== heartbeat

#[test]
fn a5_heartbeat_pings_every_30s_and_closes_after_90s_without_any_frame() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    assert_eq!(s.poll_timeout(), Some(t0 + secs(30)));
    s.handle_timeout(t0 + secs(29));
    assert_eq!(ios(&mut s, t0 + secs(29)), vec![]);
    s.handle_timeout(t0 + secs(30));
    let out = ios(&mut s, t0 + secs(30));
    assert!(matches!(out.as_slice(), [Io::Ping(p)] if p.len() == 8), "{out:?}");
    s.handle_timeout(t0 + secs(60));
    assert_eq!(pings(&ios(&mut s, t0 + secs(60))).len(), 1);
    s.handle_timeout(t0 + secs(89));
    assert_eq!(ios(&mut s, t0 + secs(89)), vec![]);
    assert!(s.is_ready());
    // 90 s without any frame (no pong came): dead, close, reconnect
    s.handle_timeout(t0 + secs(90));
    let out = ios(&mut s, t0 + secs(90));
    assert!(matches!(out.as_slice(), [Io::Close { code: 1000, .. }]), "{out:?}");
    assert!(!s.is_ready());
    check_retry(&mut s, 1, t0 + secs(90), 2);
}

#[test]
fn a5_any_frame_or_pong_keeps_the_connection_alive() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    s.handle_timeout(t0 + secs(30));
    let p = pings(&ios(&mut s, t0 + secs(30)));
    s.handle_pong(&p[0], t0 + secs(31));
    s.handle_timeout(t0 + secs(90));
    assert!(!ios(&mut s, t0 + secs(90)).iter().any(|io| matches!(io, Io::Close { .. })));
    s.handle_text(r#"{"t":"avatar","state":"idle"}"#, t0 + secs(100));
    s.handle_timeout(t0 + secs(189));
    assert!(!ios(&mut s, t0 + secs(189)).iter().any(|io| matches!(io, Io::Close { .. })));
    assert!(s.is_ready());
    s.handle_timeout(t0 + secs(190));
    assert!(ios(&mut s, t0 + secs(190)).iter().any(|io| matches!(io, Io::Close { .. })));
}

#[test]
fn g8_v3_heartbeat_sends_type_ping_and_closes_after_90s() {
    let t0 = Instant::now();
    let mut s = v3_ready(t0);
    s.handle_timeout(t0 + secs(30));
    let out = ios(&mut s, t0 + secs(30));
    assert_eq!(out, vec![Io::Send(r#"{"type":"ping"}"#.into())]);
    // the server's pong is a frame: alive
    s.handle_text(r#"{"type":"pong"}"#, t0 + secs(31));
    s.handle_timeout(t0 + secs(60));
    assert_eq!(ios(&mut s, t0 + secs(60)), vec![Io::Send(r#"{"type":"ping"}"#.into())]);
    s.handle_timeout(t0 + secs(120));
    let out = ios(&mut s, t0 + secs(120));
    assert!(!out.iter().any(|io| matches!(io, Io::Close { .. })), "89 s after the last frame: {out:?}");
    s.handle_timeout(t0 + secs(121));
    let out = ios(&mut s, t0 + secs(121));
    assert!(out.iter().any(|io| matches!(io, Io::Close { .. })), "90 s after the last frame: {out:?}");
    check_retry(&mut s, 1, t0 + secs(121), 2);
}

// ================================================================== outbox (A-6)

#[test]
fn a6_items_go_in_order_sent_then_delivered_only_after_the_matching_pong() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    for id in ["m1", "m2", "m3"] {
        s.submit(id, 1, text(id)).unwrap();
    }
    let out = ios(&mut s, t0);
    assert_eq!(sent_ids(&out), vec!["m1", "m2", "m3"]);
    assert!(matches!(out.last(), Some(Io::Ping(_))), "the Ping goes after the frames: {out:?}");
    let p = pings(&out);
    assert_eq!(p.len(), 1);
    let sent: Vec<Event> = ["m1", "m2", "m3"].iter().map(|id| Event::Sent { id: (*id).into() }).collect();
    assert_eq!(events(&mut s), sent);
    // not ours / wrong size: nothing confirmed
    s.handle_pong(b"hello", t0);
    s.handle_pong(&[], t0);
    s.handle_pong(&u64::MAX.to_be_bytes(), t0);
    assert_eq!(events(&mut s), vec![]);
    assert_eq!(s.queued(), 3);
    s.handle_pong(&pong_for(&p[0]), t0 + ms(20));
    let delivered: Vec<Event> = ["m1", "m2", "m3"].iter().map(|id| Event::Delivered { id: (*id).into() }).collect();
    assert_eq!(events(&mut s), delivered);
    assert_eq!(s.queued(), 0);
    // a repeated pong confirms nothing more
    s.handle_pong(&pong_for(&p[0]), t0 + ms(30));
    assert_eq!(events(&mut s), vec![]);
}

#[test]
fn a6_a_pong_for_an_older_ping_confirms_only_older_items() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    s.submit("a", 1, text("a")).unwrap();
    let p1 = pings(&ios(&mut s, t0));
    s.submit("b", 1, text("b")).unwrap();
    let p2 = pings(&ios(&mut s, t0));
    assert_eq!((p1.len(), p2.len()), (1, 1));
    assert_ne!(p1, p2);
    events(&mut s);
    s.handle_pong(&p1[0], t0 + ms(5));
    assert_eq!(events(&mut s), vec![Event::Delivered { id: "a".into() }]);
    s.handle_pong(&p2[0], t0 + ms(6));
    assert_eq!(events(&mut s), vec![Event::Delivered { id: "b".into() }]);
}

#[test]
fn a6_heartbeat_ping_sent_after_an_item_also_confirms_it() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    s.submit("a", 1, text("a")).unwrap();
    // the item is written, then the heartbeat fires before the delivery ping was polled
    let first = s.poll_io(t0).unwrap();
    assert_eq!(sent_ids(std::slice::from_ref(&first)), vec!["a"]);
    s.handle_timeout(t0 + secs(30));
    let out = ios(&mut s, t0 + secs(30));
    let p = pings(&out);
    assert!(!p.is_empty());
    events(&mut s);
    // the first ping written after the frame confirms it
    s.handle_pong(&p[0], t0 + secs(30));
    assert_eq!(events(&mut s), vec![Event::Delivered { id: "a".into() }]);
}

#[test]
fn a6_drop_before_pong_resends_same_ids_first_and_in_order_confirmed_never_resent() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    s.submit("a", 1, text("a")).unwrap();
    let p = pings(&ios(&mut s, t0));
    s.handle_pong(&p[0], t0);
    s.submit("b", 1, text("b")).unwrap();
    s.submit("c", 1, Outgoing::Text { text: "c".into(), reply_to: Some("r9".into()), session: None }).unwrap();
    let before = ios(&mut s, t0);
    assert_eq!(sent_ids(&before), vec!["b", "c"]);
    events(&mut s);

    s.handle_closed(Some(1006), "", t0 + secs(1));
    events(&mut s);
    // written while offline: waits, goes after the resent ones
    s.submit("d", 2, text("d")).unwrap();
    assert_eq!(ios(&mut s, t0 + secs(1)), vec![]);
    assert_eq!(s.queued(), 3);

    let at = reconnect(&mut s, json!({}), t0 + secs(1));
    let after = ios(&mut s, at);
    assert_eq!(sent_ids(&after), vec!["b", "c", "d"], "in flight first, in order; a (confirmed) never again");
    // the very same frames (same ids, same content)
    assert_eq!(after[0], before[0]);
    assert_eq!(after[1], before[1]);
    let p = pings(&after);
    events(&mut s);
    s.handle_pong(&p[0], at);
    assert_eq!(
        events(&mut s),
        vec![
            Event::Delivered { id: "b".into() },
            Event::Delivered { id: "c".into() },
            Event::Delivered { id: "d".into() }
        ]
    );
}

#[test]
fn a6_a_repeated_id_is_queued_once() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    s.submit("m", 1, text("one")).unwrap();
    s.submit("m", 1, text("one")).unwrap();
    assert_eq!(sent_ids(&ios(&mut s, t0)), vec!["m"]);
}

// ================================================================== media up (A-18, A-19)

fn media_frames(out: &[Io]) -> Vec<Value> {
    out.iter().filter(|io| matches!(io, Io::Send(_))).map(json_of).collect()
}

#[test]
fn a18_an_8_mib_file_is_one_frame() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({"media":true}), t0);
    s.submit("f1", 1, file(8 * MIB as usize)).unwrap();
    let out = ios(&mut s, t0);
    let frames = media_frames(&out);
    assert_eq!(frames.len(), 1);
    assert_eq!(
        (frames[0]["id"].as_str(), frames[0]["part"].as_u64(), frames[0]["parts"].as_u64()),
        (Some("f1"), Some(0), Some(1))
    );
    let data = base64::engine::general_purpose::STANDARD.decode(frames[0]["data"].as_str().unwrap()).unwrap();
    assert_eq!(data.len() as u64, 8 * MIB);
    assert!(matches!(out.last(), Some(Io::Ping(_))));
    let evs = events(&mut s);
    assert_eq!(
        evs,
        vec![
            Event::Progress { id: "f1".into(), direction: Direction::Up, done: 8 * MIB, total: 8 * MIB },
            Event::Sent { id: "f1".into() },
        ]
    );
}

#[test]
fn a18_a_9_mib_file_is_3_parts_with_progress() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({"media":true,"max_media_bytes":16 * MIB}), t0);
    let Outgoing::Media { bytes: original, .. } = file(9 * MIB as usize) else { unreachable!() };
    s.submit("f9", 1, file(9 * MIB as usize)).unwrap();
    let out = ios(&mut s, t0);
    let frames = media_frames(&out);
    assert_eq!(frames.len(), 3);
    let mut joined = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        assert_eq!((f["id"].as_str(), f["part"].as_u64(), f["parts"].as_u64()), (Some("f9"), Some(i as u64), Some(3)));
        joined.extend(base64::engine::general_purpose::STANDARD.decode(f["data"].as_str().unwrap()).unwrap());
    }
    assert!(joined == *original, "parts join to the file");
    assert!(matches!(out.last(), Some(Io::Ping(_))), "one delivery ping after the last part");
    assert_eq!(pings(&out).len(), 1);
    let evs = events(&mut s);
    let progress: Vec<(u64, u64)> = evs
        .iter()
        .filter_map(|e| match e {
            Event::Progress { id, direction: Direction::Up, done, total } if id == "f9" => Some((*done, *total)),
            _ => None,
        })
        .collect();
    assert_eq!(progress.len(), 3);
    assert!(progress.windows(2).all(|w| w[0].0 < w[1].0), "progress grows: {progress:?}");
    assert_eq!(progress[2], (9 * MIB, 9 * MIB));
    assert_eq!(evs.last(), Some(&Event::Sent { id: "f9".into() }), "Sent once, after the last part");
    assert_eq!(evs.iter().filter(|e| matches!(e, Event::Sent { .. })).count(), 1);
}

/// A-18: a file on disk comes out as `SendFile` pieces whose text, once the caller fills in the data, is exactly
/// the frame of the in-memory path (same heads, same ranges, same progress, one `Sent`, one delivery ping).
#[test]
fn a18_a_file_on_disk_gives_the_same_frames_as_in_memory() {
    let t0 = Instant::now();
    let caps = json!({"media":true,"max_media_bytes":16 * MIB});
    let Outgoing::Media { meta, bytes } = file(9 * MIB as usize) else { unreachable!() };
    let mut mem = adapter_ready(caps.clone(), t0);
    mem.submit("f9", 1, Outgoing::Media { meta: meta.clone(), bytes: bytes.clone() }).unwrap();
    let expected: Vec<String> = ios(&mut mem, t0)
        .into_iter()
        .filter_map(|io| match io {
            Io::Send(f) => Some(f),
            _ => None,
        })
        .collect();
    let mut disk = adapter_ready(caps, t0);
    let path = std::path::PathBuf::from("/outbox/f9/report.pdf");
    let item = Outgoing::MediaFile { meta, path: path.clone(), size: bytes.len() as u64 };
    disk.submit("f9", 1, item).unwrap();
    let out = ios(&mut disk, t0);
    let mut got = Vec::new();
    for io in &out {
        if let Io::SendFile { id, head, path: p, offset, len } = io {
            assert_eq!((id.as_str(), p), ("f9", &path));
            let data = &bytes[*offset as usize..(*offset + *len) as usize];
            let b64 = base64::engine::general_purpose::STANDARD.encode(data);
            got.push(format!("{head}{b64}{}", hermes_protocol::media::MEDIA_FRAME_TAIL));
        }
    }
    assert_eq!(got.len(), 3);
    assert!(got == expected, "the pieces make the same frames");
    assert!(matches!(out.last(), Some(Io::Ping(_))), "one delivery ping after the last part");
    assert_eq!(events(&mut disk), events(&mut mem), "same progress and Sent");
}

/// A file that cannot be read when its frame is due: `fail_item` refuses it for good (rejected, out of the outbox).
#[test]
fn a18_an_unreadable_file_is_rejected_and_leaves_the_outbox() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({"media":true}), t0);
    let Outgoing::Media { meta, .. } = file(10) else { unreachable!() };
    s.submit("gone", 1, Outgoing::MediaFile { meta, path: "/nope".into(), size: 10 }).unwrap();
    let out = ios(&mut s, t0);
    assert!(matches!(&out[0], Io::SendFile { id, .. } if id == "gone"));
    events(&mut s);
    s.fail_item("gone", "could not read the file");
    assert_eq!(s.queued(), 0);
    assert_eq!(
        events(&mut s),
        vec![Event::Rejected {
            cmd: "file".into(),
            code: "not_sent".into(),
            reason: "not sent: could not read the file".into(),
            id: Some("gone".into())
        }]
    );
}

#[test]
fn a19_over_the_limit_is_refused_by_check_and_submit_before_anything_is_sent() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({"media":true,"audio":true}), t0);
    let too_big = file(8 * MIB as usize + 1);
    let why = s.check(&too_big).unwrap_err();
    assert_eq!(why, Refusal::Media(MediaError::TooBig { size: 8 * MIB + 1, limit: 8 * MIB }));
    assert_eq!(why.code(), "too_big");
    assert!(why.to_string().contains("8388608"), "{why}");
    assert_eq!(s.submit("big", 1, too_big), Err(why));
    let long_audio = Outgoing::Audio { wav: Arc::from(vec![0u8; 8 * MIB as usize + 1]), text: None };
    assert_eq!(
        s.check(&long_audio),
        Err(Refusal::AudioTooBig { size: 8 * MIB as usize + 1, limit: 8 * MIB as usize }),
        "A-24: audio ≤ 8 MiB"
    );
    assert_eq!(
        s.submit("aud", 1, long_audio),
        Err(Refusal::AudioTooBig { size: 8 * MIB as usize + 1, limit: 8 * MIB as usize })
    );
    assert_eq!(s.queued(), 0);
    assert_eq!(ios(&mut s, t0), vec![]);
    assert_eq!(events(&mut s), vec![]);
    // the same 9 MiB file is fine under a 16 MiB limit
    let s = adapter_ready(json!({"media":true,"max_media_bytes":16 * MIB}), t0);
    assert_eq!(s.check(&file(9 * MIB as usize)), Ok(()));
}

#[test]
fn a19_an_upload_interrupted_by_a_drop_is_resent_whole_after_ready() {
    let t0 = Instant::now();
    let caps = json!({"media":true,"max_media_bytes":16 * MIB});
    let mut s = adapter_ready(caps.clone(), t0);
    s.submit("f9", 1, file(9 * MIB as usize)).unwrap();
    let first = s.poll_io(t0).unwrap();
    assert_eq!(json_of(&first)["part"], 0);
    let second = s.poll_io(t0).unwrap();
    assert_eq!(json_of(&second)["part"], 1);
    events(&mut s);
    s.handle_closed(None, "", t0 + secs(1));
    events(&mut s);
    let at = reconnect(&mut s, caps, t0 + secs(1));
    let out = ios(&mut s, at);
    let frames = media_frames(&out);
    let parts: Vec<(String, u64)> =
        frames.iter().map(|f| (f["id"].as_str().unwrap().to_string(), f["part"].as_u64().unwrap())).collect();
    assert_eq!(parts, vec![("f9".into(), 0), ("f9".into(), 1), ("f9".into(), 2)], "all parts, same id");
    assert_eq!(out[0], first, "the same first frame");
}

#[test]
fn a18_cancel_stops_an_upload_in_progress() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({"media":true,"max_media_bytes":16 * MIB}), t0);
    s.submit("f9", 1, file(9 * MIB as usize)).unwrap();
    s.submit("t", 1, text("after")).unwrap();
    assert_eq!(json_of(&s.poll_io(t0).unwrap())["part"], 0);
    assert!(s.cancel("f9"));
    assert_eq!(sent_ids(&ios(&mut s, t0)), vec!["t"], "no further part of a cancelled upload");
}

// ================================================================== prompts (A-12..A-16)

const CARD: &str = r#"{"t":"prompt","id":"5f6a…","kind":"clarify","text":"Which format?","options":[{"id":"c0","label":"CSV","style":""},{"id":"c1","label":"JSON","style":""},{"id":"other","label":"✏️ Your own answer","style":""}],"session":"mobile:tel-1","timeout_seconds":300}"#;

fn with_card(t0: Instant) -> Session {
    let mut s = adapter_ready(json!({}), t0);
    s.handle_text(CARD, t0);
    let evs = events(&mut s);
    assert!(
        matches!(evs.as_slice(), [Event::Prompt { id, options, timeout_seconds: Some(300), .. }]
            if id == "5f6a…" && options.len() == 3),
        "{evs:?}"
    );
    s
}

#[test]
fn a13_an_answer_is_exactly_one_prompt_frame_never_a_text_frame() {
    let t0 = Instant::now();
    let mut s = with_card(t0);
    s.answer_prompt("5f6a…", Some("c1"), None).unwrap();
    let out = ios(&mut s, t0);
    assert_eq!(out.len(), 1, "exactly one frame, no ping, no text: {out:?}");
    assert_eq!(json_of(&out[0]), json!({"t":"prompt","prompt_id":"5f6a…","option_id":"c1"}));
    assert_eq!(events(&mut s), vec![], "the answer is not a chat message (no Sent)");
    assert_eq!(s.queued(), 0);
    // a second answer is refused and sends nothing
    assert_eq!(s.answer_prompt("5f6a…", Some("c0"), None), Err(Refusal::AlreadyAnswered));
    assert_eq!(ios(&mut s, t0), vec![]);
}

#[test]
fn a13_a_card_restored_from_before_a_restart_can_be_answered_once() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    assert_eq!(s.answer_prompt("k1", Some("once"), None), Err(Refusal::UnknownCard), "unknown before it is restored");
    let opt = |id: &str| PromptOption { id: id.into(), label: id.into(), style: None };
    s.restore_card("k1", vec![opt("once"), opt("deny")]);
    assert_eq!(
        s.answer_prompt("k1", Some("sometimes"), None),
        Err(Refusal::NotAnOption("sometimes".into())),
        "A-15 still holds: its own options only"
    );
    s.answer_prompt("k1", Some("once"), None).unwrap();
    assert_eq!(json_of(&ios(&mut s, t0)[0]), json!({"t":"prompt","prompt_id":"k1","option_id":"once"}));
    assert_eq!(s.answer_prompt("k1", Some("deny"), None), Err(Refusal::AlreadyAnswered));
    // restoring it again (another load) does not reopen it
    s.restore_card("k1", vec![opt("once")]);
    assert_eq!(s.answer_prompt("k1", Some("once"), None), Err(Refusal::AlreadyAnswered));
    assert_eq!(events(&mut s), vec![], "no event: the UI already shows it from the history");
}

#[test]
fn a14_free_text_answer_with_or_without_option_other() {
    let t0 = Instant::now();
    let mut s = with_card(t0);
    s.answer_prompt("5f6a…", Some("other"), Some("YAML")).unwrap();
    let out = ios(&mut s, t0);
    assert_eq!(json_of(&out[0]), json!({"t":"prompt","prompt_id":"5f6a…","option_id":"other","text":"YAML"}));

    let mut s = with_card(t0);
    assert_eq!(s.answer_prompt("5f6a…", None, None), Err(Refusal::NoAnswer), "neither option nor text");
    assert_eq!(s.answer_prompt("5f6a…", None, Some("  ")), Err(Refusal::NoAnswer), "blank text");
    assert_eq!(ios(&mut s, t0), vec![]);
    s.answer_prompt("5f6a…", None, Some("TOML")).unwrap();
    assert_eq!(json_of(&ios(&mut s, t0)[0]), json!({"t":"prompt","prompt_id":"5f6a…","text":"TOML"}));
}

#[test]
fn a15_an_unknown_option_is_refused_and_nothing_is_sent() {
    let t0 = Instant::now();
    let mut s = with_card(t0);
    let why = s.answer_prompt("5f6a…", Some("approve"), None).unwrap_err();
    assert_eq!(why, Refusal::NotAnOption("approve".into()));
    assert_eq!(ios(&mut s, t0), vec![]);
    // unknown card
    assert_eq!(s.answer_prompt("nope", Some("c1"), None), Err(Refusal::UnknownCard));
    assert_eq!(ios(&mut s, t0), vec![]);
    // the card is still answerable with a real option
    s.answer_prompt("5f6a…", Some("c0"), None).unwrap();
    assert_eq!(ios(&mut s, t0).len(), 1);
}

#[test]
fn a16_prompt_done_by_id_closes_the_card_and_reports_the_real_choice() {
    let t0 = Instant::now();
    let mut s = with_card(t0);
    s.handle_text(r#"{"t":"prompt_done","id":"5f6a…","option_id":"c0"}"#, t0);
    assert_eq!(
        events(&mut s),
        vec![Event::PromptDone { prompt_id: "5f6a…".into(), option_id: Some("c0".into()), expired: false }]
    );
    assert_eq!(s.answer_prompt("5f6a…", Some("c1"), None), Err(Refusal::UnknownCard), "closed card");
    assert_eq!(ios(&mut s, t0), vec![]);
}

#[test]
fn a16_expired_card_is_prompt_done_expired() {
    let t0 = Instant::now();
    let mut s = with_card(t0);
    s.handle_text(r#"{"t":"prompt_done","prompt_id":"5f6a…","expired":true}"#, t0 + secs(300));
    assert_eq!(events(&mut s), vec![Event::PromptDone { prompt_id: "5f6a…".into(), option_id: None, expired: true }]);
    assert_eq!(s.answer_prompt("5f6a…", Some("c1"), None), Err(Refusal::UnknownCard));
    // a prompt_done that names no card is ignored
    s.handle_text(r#"{"t":"prompt_done","expired":true}"#, t0 + secs(301));
    assert_eq!(events(&mut s), vec![]);
}

// ================================================================== downlink frames (adapter)

#[test]
fn a11_typing_and_typing_stop_and_avatar() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    s.handle_text(r#"{"t":"typing"}"#, t0);
    s.handle_text(r#"{"t":"avatar","state":"thinking"}"#, t0);
    s.handle_text(r#"{"t":"typing","stop":true}"#, t0);
    s.handle_text(r#"{"t":"typing","stop":false}"#, t0);
    assert_eq!(
        events(&mut s),
        vec![
            Event::Typing { on: true },
            Event::Avatar { state: "thinking".into() },
            Event::Typing { on: false },
            Event::Typing { on: true },
        ]
    );
}

#[test]
fn a9_a21_chunked_and_edited_replies_become_whole_message_events() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    let mut seen = Vec::new();
    for frame in [
        r#"{"t":"message","id":"r1","text":"world","chunk":{"index":1,"total":2},"final":true}"#,
        r#"{"t":"message","id":"r1","text":"hello ","chunk":{"index":0,"total":2},"final":false}"#,
        r#"{"t":"message","id":"r2","text":"Counting","edit":true,"chunk":{"index":0,"total":1},"final":false}"#,
        r#"{"t":"message","id":"r2","text":"Counting the answer…","edit":true,"chunk":{"index":0,"total":1},"final":true,"reply_to":"m1"}"#,
    ] {
        s.handle_text(frame, t0);
        seen.extend(events(&mut s));
    }
    let msg = |id: &str, text: &str, final_: bool, reply_to: Option<&str>| Event::Message {
        id: id.into(),
        text: text.into(),
        final_,
        reply_to: reply_to.map(str::to_string),
        session: None,
    };
    assert_eq!(
        seen,
        vec![
            msg("r1", "world", false, None),
            msg("r1", "hello world", true, None),
            msg("r2", "Counting", false, None),
            msg("r2", "Counting the answer…", true, Some("m1")),
        ]
    );
}

#[test]
fn a9_a21_a_burst_of_updates_of_one_reply_is_one_event_not_n_squared_bytes() {
    // Each event carries the whole text so far: updates not yet polled are replaced by the newest, so a hostile
    // agent's endless non-final chunks cannot make the events grow quadratically (crates/client/tests/hostile.rs).
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    let piece = "y".repeat(1000);
    for i in 0..100 {
        s.handle_text(
            &json!({"t":"message","id":"r1","text":piece,"chunk":{"index":i,"total":200},"final":false}).to_string(),
            t0,
        );
    }
    s.handle_text(r#"{"t":"message","id":"r2","text":"other","final":false}"#, t0);
    s.handle_text(r#"{"t":"message","id":"r1","text":"!","chunk":{"index":100,"total":200},"final":false}"#, t0);
    let ev = events(&mut s);
    let texts: Vec<(String, usize, bool)> = ev
        .iter()
        .filter_map(|e| match e {
            Event::Message { id, text, final_, .. } => Some((id.to_string(), text.len(), *final_)),
            _ => None,
        })
        .collect();
    // r1's first 100 chunks became one event; r2 in between keeps the order; then r1 again
    assert_eq!(
        texts,
        vec![("r1".to_string(), 100_000, false), ("r2".to_string(), 5, false), ("r1".to_string(), 100_001, false)]
    );
    // a final update is never replaced
    s.handle_text(r#"{"t":"message","id":"r3","text":"done","final":true}"#, t0);
    s.handle_text(r#"{"t":"message","id":"r3","text":"done again","edit":true,"final":false}"#, t0);
    let n = events(&mut s).iter().filter(|e| matches!(e, Event::Message { id, .. } if id == "r3")).count();
    assert_eq!(n, 2);
}

#[test]
fn a20_media_from_the_agent_is_saved_or_downloaded_with_a_safe_name() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    let data = base64::engine::general_purpose::STANDARD.encode(b"PNGDATA");
    s.handle_text(
        &json!({"t":"media","id":"a1","kind":"image","mime":"image/png","filename":"../../chart.png","caption":"Chart","part":0,"parts":1,"final":true,"size":7,"data":data}).to_string(),
        t0,
    );
    let out = ios(&mut s, t0);
    let [Io::Save { meta, bytes, session: None }] = out.as_slice() else { panic!("{out:?}") };
    assert_eq!(
        (meta.filename.as_str(), bytes.as_slice(), meta.caption.as_deref()),
        ("chart.png", &b"PNGDATA"[..], Some("Chart"))
    );
    s.handle_text(
        r#"{"t":"media","id":"v1","kind":"voice","mime":"audio/ogg","part":0,"parts":1,"final":true,"url":"https://agent/v1.ogg"}"#,
        t0,
    );
    let out = ios(&mut s, t0);
    let [Io::Download { source, meta, max_bytes, .. }] = out.as_slice() else { panic!("{out:?}") };
    assert_eq!(source, &DownloadSource::Url("https://agent/v1.ogg".into()));
    assert_eq!((meta.filename.as_str(), *max_bytes), ("file.ogg", 8 * MIB));
    // over the limit: an error event, nothing to save
    s.handle_text(
        r#"{"t":"media","id":"big","kind":"video","part":0,"parts":1,"final":true,"size":9000000,"data":"AAAA"}"#,
        t0,
    );
    assert_eq!(ios(&mut s, t0), vec![]);
    assert!(
        matches!(events(&mut s).as_slice(), [Event::Error { code, id: Some(id), .. }] if code == "too_big" && id == "big")
    );
}

#[test]
fn a7_unknown_frames_are_ignored_and_the_connection_stays() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    for f in [r#"{"t":"sticker","id":"x"}"#, r#"{"t":"hello"}"#, r#"{"t":"presence","online":true,"extra":[1]}"#] {
        s.handle_text(f, t0);
    }
    assert_eq!(events(&mut s), vec![]);
    assert_eq!(ios(&mut s, t0), vec![]);
    assert!(s.is_ready());
    assert_eq!(s.malformed_frames(), 0);
}

#[test]
fn a22_malformed_frames_report_at_most_one_error_per_second_and_the_session_stays_ready() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    let malformed_events = |s: &mut Session| {
        events(s).iter().filter(|e| matches!(e, Event::Error { code, .. } if code == "malformed_frame")).count()
    };
    s.handle_text("not json", t0);
    assert_eq!(malformed_events(&mut s), 1);
    s.handle_text(r#"{"t":"message","id":5}"#, t0 + ms(500));
    s.handle_text(r#"{"t":"prompt"}"#, t0 + ms(999));
    for i in 0..100 {
        s.handle_text("{{{", t0 + ms(999) + Duration::from_micros(i));
    }
    assert_eq!(malformed_events(&mut s), 0, "a flood is not reported frame by frame");
    s.handle_text("[]", t0 + secs(1));
    assert_eq!(malformed_events(&mut s), 1);
    assert_eq!(s.malformed_frames(), 104);
    assert!(s.is_ready());
    assert!(!ios(&mut s, t0 + secs(1)).iter().any(|io| matches!(io, Io::Close { .. })));
    s.handle_text(r#"{"t":"message","id":"r","text":"ok","final":true}"#, t0 + secs(1));
    assert!(matches!(events(&mut s).as_slice(), [Event::Message { text, final_: true, .. }] if text == "ok"));
}

#[test]
fn a22_error_frames_become_error_events() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    s.handle_text(r#"{"t":"error","code":"too_big","text":"file > 8 MiB","id":"f1"}"#, t0);
    s.handle_text(r#"{"t":"error","code":"unsupported_frame"}"#, t0);
    assert_eq!(
        events(&mut s),
        vec![
            Event::Error { code: "too_big".into(), text: "file > 8 MiB".into(), id: Some("f1".into()) },
            Event::Error { code: "unsupported_frame".into(), text: "unsupported_frame".into(), id: None },
        ]
    );
}

// ================================================================== v3

#[test]
fn g3_v3_connected_is_ready_at_once() {
    let t0 = Instant::now();
    let mut s = Session::new(cfg(Dialect::V3), t0);
    assert_eq!(ios(&mut s, t0), vec![Io::Connect]);
    events(&mut s);
    s.handle_connected(t0);
    assert!(s.is_ready());
    assert_eq!(
        events(&mut s),
        vec![Event::Ready {
            session: "abc-123-def".into(),
            avatar_url: None,
            capabilities: Default::default(),
            features: Features { files: true, voice: true, max_file_bytes: None },
        }]
    );
    assert_eq!(ios(&mut s, t0), vec![], "no hello in v3: the token is in the URL");
}

#[test]
fn g3_v3_http_401_or_403_is_access_denied_without_retry() {
    let t0 = Instant::now();
    for status in [401, 403] {
        let mut s = Session::new(cfg(Dialect::V3), t0);
        ios(&mut s, t0);
        events(&mut s);
        s.handle_connect_failed(Some(status), "refused", t0);
        let evs = events(&mut s);
        assert!(matches!(evs.as_slice(), [Event::AccessDenied { reason }] if reason.contains(&status.to_string())));
        assert!(s.is_denied());
        assert_eq!(s.poll_timeout(), None);
        s.handle_timeout(t0 + secs(86_400));
        assert_eq!(ios(&mut s, t0 + secs(86_400)), vec![]);
    }
    // other statuses retry
    let mut s = Session::new(cfg(Dialect::V3), t0);
    ios(&mut s, t0);
    events(&mut s);
    s.handle_connect_failed(Some(500), "server error", t0);
    check_retry(&mut s, 1, t0, 2);
}

#[test]
fn g5_g6_v3_text_and_streams_become_message_events() {
    let t0 = Instant::now();
    let mut s = v3_ready(t0);
    s.handle_text(
        r#"{"id":"msg_002","type":"text","from":"hermes","to":"admin","session":"abc-123-def","reply_to":"msg_001","ts":1719123457,"data":{"text":"好的，马上处理"}}"#,
        t0,
    );
    s.handle_text(
        r#"{"id":"str_001","type":"stream_start","from":"hermes","to":"admin","session":"abc-123-def","reply_to":"msg_001","ts":1719123457}"#,
        t0,
    );
    s.handle_text(
        r#"{"type":"stream","from":"hermes","to":"admin","session":"abc-123-def","data":{"text":"快速排序的"}}"#,
        t0,
    );
    s.handle_text(
        r#"{"type":"stream","from":"hermes","to":"admin","session":"abc-123-def","data":{"text":"思路"}}"#,
        t0,
    );
    // a stream in another conversation with nothing open there is ignored (G-6 decision)
    s.handle_text(r#"{"type":"stream","from":"hermes","to":"admin","session":"other","data":{"text":"x"}}"#, t0);
    s.handle_text(r#"{"type":"stream_end","from":"hermes","to":"admin","session":"abc-123-def"}"#, t0);
    let m = |id: &str, text: &str, final_: bool| Event::Message {
        id: id.into(),
        text: text.into(),
        final_,
        reply_to: Some("msg_001".into()),
        session: Some("abc-123-def".into()),
    };
    // updates not yet polled are replaced by the newest (each carries the whole text so far): one polled burst
    // gives the stream's final state at once
    assert_eq!(events(&mut s), vec![m("msg_002", "好的，马上处理", true), m("str_001", "快速排序的思路", true)]);
}

#[test]
fn g6_v3_an_open_stream_ends_with_what_it_has_when_the_connection_drops() {
    let t0 = Instant::now();
    let mut s = v3_ready(t0);
    s.handle_text(r#"{"id":"s1","type":"stream_start","from":"hermes","to":"admin","session":"S","ts":1}"#, t0);
    s.handle_text(r#"{"type":"stream","from":"hermes","to":"admin","session":"S","data":{"text":"part"}}"#, t0);
    events(&mut s);
    s.handle_closed(None, "", t0);
    let evs = events(&mut s);
    assert!(
        evs.iter().any(|e| matches!(e, Event::Message { id, text, final_: true, .. } if id == "s1" && text == "part"))
    );
}

#[test]
fn g9_v3_media_message_is_a_download_of_the_media_id() {
    let t0 = Instant::now();
    let mut s = v3_ready(t0);
    s.handle_text(
        r#"{"id":"msg_006","type":"file","from":"hermes","to":"admin","session":"abc-123-def","ts":1719123456,"data":{"text":"分析下这个数据","media":{"id":"med_j0k1l2","name":"../sales.csv","type":"text/csv","size":10240}}}"#,
        t0,
    );
    let out = ios(&mut s, t0);
    let [Io::Download { meta, source, max_bytes, session }] = out.as_slice() else { panic!("{out:?}") };
    assert_eq!(source, &DownloadSource::V3Media("med_j0k1l2".into()));
    assert_eq!((meta.id.as_str(), meta.kind.as_str(), meta.filename.as_str()), ("msg_006", "file", "sales.csv"));
    assert_eq!((meta.caption.as_deref(), meta.declared_size), (Some("分析下这个数据"), Some(10240)));
    // G-9 decision: v3 has no protocol limit on a file; the caller's download cap and the free disk space apply
    assert_eq!((*max_bytes, session.as_deref()), (u64::MAX, Some("abc-123-def")));
    // a file over the adapter's 8 MiB is downloaded too, not refused
    s.handle_text(
        r#"{"id":"v9","type":"video","from":"hermes","to":"admin","session":"abc-123-def","ts":1,"data":{"media":{"id":"m","type":"video/mp4","size":99999999}}}"#,
        t0,
    );
    let out = ios(&mut s, t0);
    assert!(matches!(out.as_slice(), [Io::Download { meta, max_bytes: u64::MAX, .. }] if meta.id == "v9"), "{out:?}");
    assert!(!events(&mut s).iter().any(|e| matches!(e, Event::Error { .. })));
}

#[test]
fn g7_v3_error_with_reply_to_belongs_to_that_message() {
    let t0 = Instant::now();
    let mut s = v3_ready(t0);
    s.handle_text(
        r#"{"id":"err_001","type":"error","from":"hermes","to":"admin","session":"abc-123-def","reply_to":"msg_001","ts":1719123457,"data":{"code":"timeout","text":"处理超时，请稍后再试"}}"#,
        t0,
    );
    s.handle_text(
        r#"{"id":"err_002","type":"error","from":"hermes","to":"admin","session":"abc-123-def","ts":1719123457,"data":{"code":"offline","text":"x"}}"#,
        t0,
    );
    assert_eq!(
        events(&mut s),
        vec![
            Event::Error {
                code: "timeout".into(), text: "处理超时，请稍后再试".into(), id: Some("msg_001".into())
            },
            Event::Error { code: "offline".into(), text: "x".into(), id: None },
        ]
    );
}

#[test]
fn g2_v3_a_message_missing_a_required_field_is_dropped_and_the_connection_kept() {
    let t0 = Instant::now();
    let mut s = v3_ready(t0);
    // no ts
    s.handle_text(r#"{"id":"m","type":"text","from":"hermes","to":"admin","session":"s","data":{"text":"lost"}}"#, t0);
    // stream_start without id
    s.handle_text(r#"{"type":"stream_start","from":"hermes","to":"admin","session":"s","ts":1}"#, t0 + secs(2));
    let evs = events(&mut s);
    assert!(!evs.iter().any(|e| matches!(e, Event::Message { .. })), "dropped: {evs:?}");
    assert_eq!(s.malformed_frames(), 2);
    assert!(s.is_ready());
    assert!(!ios(&mut s, t0 + secs(2)).iter().any(|io| matches!(io, Io::Close { .. })));
    // unknown type: ignored silently
    s.handle_text(r#"{"id":"x","type":"sticker","from":"hermes","to":"admin","session":"s","ts":1}"#, t0 + secs(3));
    assert_eq!(events(&mut s), vec![]);
}

#[test]
fn g8_v3_a_ping_from_the_server_is_answered_with_pong() {
    let t0 = Instant::now();
    let mut s = v3_ready(t0);
    s.handle_text(r#"{"type": "ping"}"#, t0);
    assert_eq!(ios(&mut s, t0), vec![Io::Send(r#"{"type":"pong"}"#.into())]);
    assert_eq!(events(&mut s), vec![]);
}

#[test]
fn g10_v3_outbox_sends_envelopes_and_confirms_by_pong() {
    let t0 = Instant::now();
    let mut s = v3_ready(t0);
    s.submit("msg_001", 1_719_123_456, text("帮我写个快速排序")).unwrap();
    s.submit(
        "msg_002",
        1_719_123_457,
        Outgoing::Text { text: "x".into(), reply_to: Some("r".into()), session: Some("other".into()) },
    )
    .unwrap();
    let media = MediaDescriptor {
        id: "med_a1b2c3".into(),
        name: Some("photo.jpg".into()),
        mime: "image/jpeg".into(),
        size: 245_760,
        width: Some(1920),
        height: Some(1080),
        duration: None,
    };
    s.submit("msg_003", 1_719_123_456, Outgoing::V3Media { session: None, caption: Some("看下这张图".into()), media })
        .unwrap();
    let out = ios(&mut s, t0);
    assert_eq!(
        json_of(&out[0]),
        json!({"id":"msg_001","type":"text","from":"admin","to":"hermes","session":"abc-123-def","ts":1719123456,"data":{"text":"帮我写个快速排序"}})
    );
    assert_eq!(
        json_of(&out[1]),
        json!({"id":"msg_002","type":"text","from":"admin","to":"hermes","session":"other","reply_to":"r","ts":1719123457,"data":{"text":"x"}})
    );
    // the seed's image example, exactly
    assert_eq!(
        json_of(&out[2]),
        json!({"id":"msg_003","type":"image","from":"admin","to":"hermes","session":"abc-123-def","ts":1719123456,
               "data":{"text":"看下这张图","media":{"id":"med_a1b2c3","name":"photo.jpg","type":"image/jpeg","size":245760,"width":1920,"height":1080}}})
    );
    let p = pings(&out);
    assert_eq!(p.len(), 1);
    events(&mut s);
    s.handle_pong(&p[0], t0);
    assert_eq!(events(&mut s).len(), 3);
    // files and voice go through the HTTP upload in v3 (G-9), never as adapter frames
    let upload_first = Err(Refusal::WrongDialect("files and voice go through the gateway upload first (G-9)"));
    assert_eq!(s.check(&file(10)), upload_first);
    assert_eq!(s.check(&Outgoing::Audio { wav: Arc::from(vec![0u8; 4]), text: None }), upload_first);
}

#[test]
fn g10_v3_unsent_messages_keep_their_id_and_are_resent_after_reconnecting() {
    let t0 = Instant::now();
    let mut s = v3_ready(t0);
    s.submit("a", 7, text("one")).unwrap();
    let before = ios(&mut s, t0);
    s.handle_closed(Some(1006), "", t0);
    events(&mut s);
    let at = reconnect(&mut s, json!({}), t0);
    let after = ios(&mut s, at);
    assert_eq!(after[0], before[0], "same envelope, same id and ts");
}

// ================================================================== v3 files: HTTP upload first (G-9, G-10)

fn v3_file(name: &str) -> Outgoing {
    Outgoing::V3File {
        path: format!("/outbox/{name}").into(),
        filename: name.into(),
        mime: "image/jpeg".into(),
        caption: Some("看下这张图".into()),
        session: None,
    }
}

fn upload_io(id: &str, name: &str) -> Io {
    Io::Upload {
        id: id.into(),
        path: format!("/outbox/{name}").into(),
        filename: name.into(),
        mime: "image/jpeg".into(),
    }
}

fn photo() -> MediaDescriptor {
    MediaDescriptor {
        id: "med_a1b2c3".into(),
        name: Some("photo.jpg".into()),
        mime: "image/jpeg".into(),
        size: 245_760,
        width: Some(1920),
        height: Some(1080),
        duration: None,
    }
}

fn uploads(ios: &[Io]) -> Vec<String> {
    ios.iter()
        .filter_map(|io| match io {
            Io::Upload { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn g9_g10_a_v3_file_is_uploaded_one_at_a_time_then_its_media_message_goes_with_the_descriptor() {
    let t0 = Instant::now();
    let mut s = v3_ready(t0);
    s.submit("msg_003", 1_719_123_456, v3_file("photo.jpg")).unwrap();
    s.submit("msg_004", 1_719_123_457, v3_file("two.jpg")).unwrap();
    assert_eq!(s.queued(), 2);
    // one upload at a time, in order; nothing on the socket before the gateway has the file
    assert_eq!(ios(&mut s, t0), vec![upload_io("msg_003", "photo.jpg")]);
    assert_eq!(ios(&mut s, t0 + secs(5)), vec![]);
    s.handle_upload_done("msg_003", photo());
    let out = ios(&mut s, t0 + secs(5));
    assert_eq!(
        json_of(&out[0]),
        json!({"id":"msg_003","type":"image","from":"admin","to":"hermes","session":"abc-123-def","ts":1719123456,
               "data":{"text":"看下这张图","media":{"id":"med_a1b2c3","name":"photo.jpg","type":"image/jpeg","size":245760,"width":1920,"height":1080}}})
    );
    assert_eq!(uploads(&out), ["msg_004"], "the next file's upload starts after the first is done");
    assert_eq!(events(&mut s), vec![Event::Sent { id: "msg_003".into() }]);
    s.handle_pong(&pings(&out)[0], t0 + secs(5));
    assert_eq!(events(&mut s), vec![Event::Delivered { id: "msg_003".into() }]);
    assert_eq!(s.queued(), 1);
}

#[test]
fn g9_g10_a_passing_upload_failure_is_retried_when_the_backoff_timer_fires_never_before() {
    let t0 = Instant::now();
    let mut s = v3_ready(t0);
    s.submit("f1", 7, v3_file("a.jpg")).unwrap();
    assert_eq!(uploads(&ios(&mut s, t0)), ["f1"]);
    s.handle_upload_failed("f1", UploadFailure::Passing("HTTP 503".into()), t0);
    match &events(&mut s)[..] {
        [Event::Error { code, text, id: Some(id) }] => {
            assert_eq!((code.as_str(), id.as_str()), ("upload_failed", "f1"));
            assert!(text.contains("will retry") && text.contains("HTTP 503"), "{text}");
        }
        other => panic!("one upload_failed error on the message: {other:?}"),
    }
    // G-10's sequence: 1 s ±20 %, then 2 s ±20 %; the named timer is the session's next deadline
    let at = s.timer(Timer::UploadRetry).expect("the retry timer is armed");
    assert!(at >= t0 + ms(800) && at <= t0 + ms(1200), "{:?}", at - t0);
    assert_eq!(s.poll_timeout(), Some(at));
    s.handle_timeout(at - ms(1));
    assert_eq!(ios(&mut s, at - ms(1)), vec![], "no try before the delay");
    s.handle_timeout(at);
    assert_eq!(s.timer(Timer::UploadRetry), None);
    assert_eq!(ios(&mut s, at), vec![upload_io("f1", "a.jpg")]);
    s.handle_upload_failed("f1", UploadFailure::Passing("connection reset".into()), at);
    let at2 = s.timer(Timer::UploadRetry).expect("armed again");
    assert!(at2 >= at + ms(1600) && at2 <= at + ms(2400), "{:?}", at2 - at);
    // a success resets the step: the next passing failure waits 1 s again
    s.handle_timeout(at2);
    assert_eq!(uploads(&ios(&mut s, at2)), ["f1"]);
    s.handle_upload_done("f1", photo());
    s.submit("f2", 8, v3_file("b.jpg")).unwrap();
    let out = ios(&mut s, at2);
    assert_eq!(sent_ids(&out), ["f1"]);
    assert_eq!(uploads(&out), ["f2"]);
    s.handle_upload_failed("f2", UploadFailure::Passing("HTTP 502".into()), at2);
    let at3 = s.timer(Timer::UploadRetry).expect("armed");
    assert!(at3 >= at2 + ms(800) && at3 <= at2 + ms(1200), "{:?}", at3 - at2);
}

#[test]
fn g9_g10_a_failed_upload_goes_again_at_once_after_the_next_ready() {
    let t0 = Instant::now();
    let mut s = v3_ready(t0);
    s.submit("f1", 7, v3_file("a.jpg")).unwrap();
    ios(&mut s, t0);
    s.handle_upload_failed("f1", UploadFailure::Passing("HTTP 503".into()), t0);
    s.handle_timeout(s.timer(Timer::UploadRetry).unwrap());
    assert_eq!(uploads(&ios(&mut s, t0 + secs(1))), ["f1"]);
    s.handle_upload_failed("f1", UploadFailure::Passing("HTTP 503".into()), t0 + secs(1));
    let retry = s.timer(Timer::UploadRetry).unwrap(); // ~2 s later
    s.handle_closed(Some(1006), "", t0 + secs(1));
    events(&mut s);
    let reconnect_at = s.timer(Timer::Reconnect).unwrap(); // ~1 s later
    assert!(reconnect_at < retry);
    s.handle_timeout(reconnect_at);
    assert_eq!(ios(&mut s, reconnect_at), vec![Io::Connect]);
    s.handle_connected(reconnect_at);
    assert_eq!(s.timer(Timer::UploadRetry), None, "ready clears the retry delay");
    assert_eq!(uploads(&ios(&mut s, reconnect_at)), ["f1"], "at once after ready");
}

#[test]
fn g9_g10_no_upload_while_disconnected_and_a_passed_retry_time_is_no_busy_deadline() {
    let t0 = Instant::now();
    let mut s = v3_ready(t0);
    s.submit("f1", 7, v3_file("a.jpg")).unwrap();
    ios(&mut s, t0);
    s.handle_upload_failed("f1", UploadFailure::Passing("HTTP 503".into()), t0);
    let retry = s.timer(Timer::UploadRetry).unwrap(); // 0.8–1.2 s
    s.handle_closed(None, "", t0 + ms(500));
    events(&mut s);
    let reconnect_at = s.timer(Timer::Reconnect).unwrap(); // 1.3–1.7 s
    assert!(retry < reconnect_at);
    assert_eq!(s.poll_timeout(), Some(retry));
    s.handle_timeout(retry);
    assert_eq!(ios(&mut s, retry), vec![], "not while disconnected");
    assert_eq!(s.poll_timeout(), Some(reconnect_at), "the passed retry time is not a deadline any more");
    s.handle_timeout(reconnect_at);
    assert_eq!(ios(&mut s, reconnect_at), vec![Io::Connect]);
    s.handle_connected(reconnect_at);
    assert_eq!(uploads(&ios(&mut s, reconnect_at)), ["f1"]);
}

#[test]
fn g9_a_file_too_large_upload_fails_the_message_and_is_never_retried() {
    let t0 = Instant::now();
    let mut s = v3_ready(t0);
    s.submit("big", 7, v3_file("big.mov")).unwrap();
    assert_eq!(uploads(&ios(&mut s, t0)), ["big"]);
    let why = Refusal::FileTooLarge("the gateway refused the file as too large (HTTP 413)".into());
    s.handle_upload_failed("big", UploadFailure::Final(why.clone()), t0);
    assert_eq!(
        events(&mut s),
        vec![Event::Rejected {
            cmd: "file".into(),
            code: "file_too_large".into(),
            reason: why.to_string(),
            id: Some("big".into())
        }]
    );
    assert_eq!(s.queued(), 0);
    assert_eq!(s.timer(Timer::UploadRetry), None);
    for later in [secs(1), secs(31), secs(61)] {
        s.handle_activity(t0 + later);
        s.handle_timeout(t0 + later);
        assert_eq!(uploads(&ios(&mut s, t0 + later)), Vec::<String>::new(), "never tried again");
    }
    assert!(s.is_ready());
    events(&mut s);
    // any other final refusal is the same: out of the queue with its code
    s.submit("other", 8, v3_file("x.jpg")).unwrap();
    ios(&mut s, t0 + secs(61));
    s.handle_upload_failed("other", UploadFailure::Final(Refusal::UploadFailed("HTTP 400".into())), t0 + secs(61));
    assert!(matches!(&events(&mut s)[..], [Event::Rejected { code, .. }] if code == "upload_failed"));
    assert_eq!(s.queued(), 0);
}

#[test]
fn g9_cancel_takes_a_file_out_of_the_upload_queue_and_a_late_result_sends_nothing() {
    let t0 = Instant::now();
    let mut s = v3_ready(t0);
    s.submit("f1", 7, v3_file("a.jpg")).unwrap();
    s.submit("f2", 8, v3_file("b.jpg")).unwrap();
    assert_eq!(uploads(&ios(&mut s, t0)), ["f1"]);
    assert!(s.cancel("f1"));
    assert!(!s.cancel("f1"));
    s.handle_upload_done("f1", photo());
    let out = ios(&mut s, t0);
    assert_eq!(sent_ids(&out), Vec::<String>::new(), "a cancelled upload's result sends nothing");
    assert_eq!(uploads(&out), ["f2"], "the next file goes");
    assert_eq!(s.queued(), 1);
}

#[test]
fn g9_a_v3_file_is_refused_on_the_adapter() {
    let t0 = Instant::now();
    let s = adapter_ready(json!({}), t0);
    assert_eq!(s.check(&v3_file("a.jpg")), Err(Refusal::WrongDialect("not a frame of the adapter protocol")));
}

// ================================================================== regressions: bugs found in session.rs, now fixed

#[test]
fn a4_a_late_ready_frame_does_not_undo_access_denied() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    s.handle_closed(Some(1008), "denied", t0);
    events(&mut s);
    // a frame that was already read from the old socket is delivered after the close
    s.handle_text(&ready_frame(json!({})), t0);
    assert!(s.is_denied(), "a stale `ready` turned a denied session Ready");
    s.handle_closed(Some(1006), "", t0 + secs(1));
    s.handle_timeout(t0 + secs(3600));
    assert!(!ios(&mut s, t0 + secs(3600)).contains(&Io::Connect), "reconnected after access denied (A-4)");
}

#[test]
fn a5_a_stale_ready_while_waiting_to_reconnect_does_not_cancel_the_retry() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    s.handle_closed(Some(1006), "", t0);
    events(&mut s);
    assert!(s.poll_timeout().is_some());
    s.handle_text(&ready_frame(json!({})), t0);
    assert!(!s.is_ready(), "Ready without a socket");
    assert!(s.poll_timeout().is_some(), "the retry timer is gone: the session never reconnects");
}

#[test]
fn a13_a_card_answer_lost_to_a_drop_can_be_given_again() {
    let t0 = Instant::now();
    let mut s = with_card(t0);
    s.answer_prompt("5f6a…", Some("c1"), None).unwrap();
    // the connection drops before the engine polled the frame out
    s.handle_closed(None, "", t0);
    events(&mut s);
    let at = reconnect(&mut s, json!({}), t0);
    let out = ios(&mut s, at);
    let resent = out.iter().any(|io| matches!(io, Io::Send(f) if f.contains("\"prompt_id\"")));
    assert!(resent || s.answer_prompt("5f6a…", Some("c1"), None).is_ok(), "the answer was never sent and cannot be");
}

#[test]
fn a19_a_text_that_encodes_over_16_mib_is_refused_before_sending() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    let t = "\u{1}".repeat(4 * 1024 * 1024); // 4 MiB of text, 24 MiB as JSON (`\u0001` each)
    if s.submit("big", 1, text(&t)).is_ok() {
        let out = ios(&mut s, t0);
        for io in &out {
            if let Io::Send(f) = io {
                assert!(f.len() <= 16 * 1024 * 1024, "a {} byte frame was sent (A-19: ≤ 16 MiB)", f.len());
            }
        }
    }
}

#[test]
fn a4_reconnect_now_does_not_leave_access_denied_and_stale_frames_are_dropped() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    s.handle_closed(Some(1008), "denied", t0);
    events(&mut s);
    // the OS says the network is back: still denied, no connect
    s.reconnect_now(t0 + secs(1));
    assert!(s.is_denied());
    assert!(!ios(&mut s, t0 + secs(1)).contains(&Io::Connect));
    // a frame read from the old socket after the close produces nothing
    s.handle_text(r#"{"t":"message","id":"late","text":"x","final":true}"#, t0 + secs(2));
    assert!(events(&mut s).is_empty());
}

/// A-11 / source §3: `typing{stop:true}` is the end of the reply — one still open (no `final`) is finished at that
/// moment with the text it has, before the typing event; a finished reply is not repeated.
#[test]
fn a11_typing_stop_finishes_an_open_reply() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    s.handle_text(r#"{"t":"typing"}"#, t0);
    s.handle_text(r#"{"t":"message","id":"r1","text":"Counting","edit":true,"chunk":{"index":0,"total":1}}"#, t0);
    s.handle_text(r#"{"t":"message","id":"r0","text":"done before","final":true}"#, t0);
    s.handle_text(r#"{"t":"message","id":"r2","text":"part one ","chunk":{"index":0,"total":2}}"#, t0);
    events(&mut s);
    s.handle_text(r#"{"t":"typing","stop":true}"#, t0);
    let evs = events(&mut s);
    let finals: Vec<(String, String)> = evs
        .iter()
        .filter_map(|e| match e {
            Event::Message { id, text, final_: true, .. } => Some((id.to_string(), text.to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(finals, vec![("r1".into(), "Counting".into()), ("r2".into(), "part one ".into())], "{evs:?}");
    assert_eq!(evs.last(), Some(&Event::Typing { on: false }), "the reply ends before the indicator goes off");
    // a second stop finishes nothing again
    s.handle_text(r#"{"t":"typing","stop":true}"#, t0);
    assert_eq!(events(&mut s), vec![Event::Typing { on: false }]);
    // a late chunk still lands on its reply
    s.handle_text(r#"{"t":"message","id":"r2","text":"two","chunk":{"index":1,"total":2},"final":true}"#, t0);
    assert!(matches!(&events(&mut s)[..], [Event::Message { id, text, final_: true, .. }]
        if id.as_str() == "r2" && text.as_str() == "part one two"));
}

/// Source §10–11: `error{auth_failed}` is access denied even without a close 1008 — no reconnect, the socket closed.
#[test]
fn a4_auth_failed_without_close_1008_is_access_denied() {
    let t0 = Instant::now();
    let mut s = adapter_ready(json!({}), t0);
    s.handle_text(r#"{"t":"error","code":"auth_failed","text":"device desktop-1 is not approved"}"#, t0);
    let evs = events(&mut s);
    assert_eq!(
        evs,
        vec![
            Event::Error { code: "auth_failed".into(), text: "device desktop-1 is not approved".into(), id: None },
            Event::AccessDenied { reason: "device desktop-1 is not approved".into() },
        ]
    );
    assert!(s.is_denied());
    assert!(matches!(&ios(&mut s, t0)[..], [Io::Close { .. }]));
    // no retry, ever, and a later close changes nothing
    assert_eq!(s.poll_timeout(), None, "nothing scheduled: no retry");
    s.handle_closed(Some(1000), "", t0);
    s.handle_timeout(t0 + secs(120));
    assert_eq!(ios(&mut s, t0 + secs(120)), vec![]);
    assert!(!events(&mut s).iter().any(|e| matches!(e, Event::Connecting { .. } | Event::Disconnected { .. })));
    // other agent errors keep the connection
    let mut s = adapter_ready(json!({}), t0);
    s.handle_text(r#"{"t":"error","code":"forbidden","text":"not your card"}"#, t0);
    assert!(s.is_ready());
}

/// The cause of a failed attempt reaches the front ends as a code they translate ("Can't reach … — refused").
#[test]
fn a5_a_failed_attempt_says_why_in_a_code() {
    let t0 = Instant::now();
    let mut s = Session::new(cfg(Dialect::Adapter), t0);
    ios(&mut s, t0);
    events(&mut s);
    s.handle_connect_error(None, DisconnectCode::Refused, "connection refused", t0);
    assert!(matches!(
        &events(&mut s)[..],
        [Event::Disconnected { code: DisconnectCode::Refused, retry_in_ms: Some(_), .. }]
    ));
    // a close frame is `closed`, a drop without one `lost`
    let mut s = adapter_ready(json!({}), t0);
    s.handle_closed(Some(1001), "going away", t0);
    assert!(matches!(&events(&mut s)[..], [Event::Disconnected { code: DisconnectCode::Closed, .. }]));
    let mut s = adapter_ready(json!({}), t0);
    s.handle_closed(None, "", t0);
    assert!(matches!(&events(&mut s)[..], [Event::Disconnected { code: DisconnectCode::Lost, .. }]));
    // and the wire form the front ends read
    let ev = Event::Disconnected { code: DisconnectCode::NoReady, reason: "x".into(), retry_in_ms: None };
    assert_eq!(serde_json::to_value(&ev).unwrap()["code"], "no_ready");
}

/// G-8: the gateway expects the app-level `{"type":"ping"}` every 30 s. The WebSocket Pings that confirm delivery
/// (A-6) are not it: a message every few seconds must not push the app-level ping back.
#[test]
fn g8_v3_app_level_ping_every_30s_whatever_websocket_pings_confirm_messages() {
    let t0 = Instant::now();
    let mut s = v3_ready(t0);
    let app_ping = Io::Send(r#"{"type":"ping"}"#.into());
    let mut app_pings = Vec::new();
    let mut ws_pings = 0;
    // a message every 7 s for two minutes, each confirmed by a WebSocket Ping/Pong at once
    for step in 1..=17u64 {
        let now = t0 + secs(step * 7);
        // the session's deadlines that fall before this message
        while let Some(at) = s.poll_timeout().filter(|at| *at <= now) {
            s.handle_timeout(at);
            for io in ios(&mut s, at) {
                if io == app_ping {
                    app_pings.push(at.duration_since(t0).as_secs());
                    s.handle_text(r#"{"type":"pong"}"#, at);
                }
            }
        }
        s.submit(&format!("m{step}"), 1, text("still here")).unwrap();
        for io in ios(&mut s, now) {
            assert_ne!(io, app_ping, "the app-level ping is not sent with messages");
            if let Io::Ping(p) = io {
                ws_pings += 1;
                s.handle_pong(&p, now);
            }
        }
    }
    assert!(ws_pings >= 17, "each message was confirmed by a WebSocket Ping ({ws_pings})");
    assert_eq!(app_pings, vec![30, 60, 90], "an app-level ping every 30 s, on time");
    assert!(s.is_ready());
}

/// G-9 decision: no client-side size limit on v3 media; the gateway decides (`file_too_large` / HTTP 413).
#[test]
fn g9_v3_media_over_the_adapter_limit_is_not_refused_by_the_app() {
    let t0 = Instant::now();
    let mut s = v3_ready(t0);
    let media = MediaDescriptor {
        id: "med_big".into(),
        name: Some("film.mp4".into()),
        mime: "video/mp4".into(),
        size: 3 * 1024 * MIB,
        width: Some(1920),
        height: Some(1080),
        duration: Some(600.0),
    };
    let item = Outgoing::V3Media { session: None, caption: None, media };
    assert_eq!(s.check(&item), Ok(()));
    s.submit("big", 1, item).unwrap();
    let out = ios(&mut s, t0);
    assert_eq!(sent_ids(&out), vec!["big"]);
    assert_eq!(json_of(&out[0])["data"]["media"]["size"], 3 * 1024 * MIB);
}
