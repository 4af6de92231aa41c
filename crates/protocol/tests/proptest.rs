//! Property tests: wire round-trips, decoders that never panic, safe filenames, reply assembly in any order, and
//! the media splitter + assembler for any file size.

use std::time::Instant;

use base64::Engine as _;
use hermes_protocol::adapter::{
    self, Chunk, Device, Down, DownMedia, DownMessage, DownPrompt, PromptDone, PromptOption, Up, UpMedia,
};
use hermes_protocol::backoff::{BackoffPolicy, backoff};
use hermes_protocol::media::{
    self, MAX_PARTS, MIB, MIN_PART, MediaAssembler, MediaLimits, MediaOutput, PART_TARGET, SINGLE_FRAME_MAX,
    UpMediaMeta,
};
use hermes_protocol::reply::ReplyAssembler;
use hermes_protocol::v3::{self, Envelope};
use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use serde_json::{Map, Value};

// ------------------------------------------------------------------ strategies

fn text() -> impl Strategy<Value = String> {
    // arbitrary Unicode (control characters, quotes, backslashes, astral planes) plus short ASCII for readability
    prop_oneof![any::<String>(), "[a-z0-9 _.-]{0,12}"]
}

fn opt_text() -> impl Strategy<Value = Option<String>> {
    option::of(text())
}

/// JSON without floats: serde_json's default float parsing is not guaranteed to round-trip every f64 bit-exactly,
/// which is a property of the JSON library and not of this crate.
fn json(depth: u32) -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    prop_oneof![
        3 => leaf,
        1 => vec(json(depth - 1), 0..4).prop_map(Value::Array),
        1 => json_object(depth - 1).prop_map(Value::Object),
    ]
    .boxed()
}

fn json_object(depth: u32) -> BoxedStrategy<Map<String, Value>> {
    btree_map(text(), json(depth), 0..5).prop_map(|m| m.into_iter().collect()).boxed()
}

fn device() -> impl Strategy<Value = Device> {
    (text(), opt_text(), opt_text()).prop_map(|(id, name, platform)| Device { id, name, platform })
}

fn up_media() -> impl Strategy<Value = UpMedia> {
    (text(), text(), text(), text(), opt_text(), text(), any::<u32>(), any::<u32>()).prop_map(
        |(id, kind, mime, filename, caption, data, part, parts)| UpMedia {
            id,
            kind,
            mime,
            filename,
            caption,
            data,
            part,
            parts,
        },
    )
}

fn up() -> impl Strategy<Value = Up> {
    prop_oneof![
        (text(), device()).prop_map(|(token, device)| Up::Hello { token, device }),
        (text(), text(), opt_text()).prop_map(|(id, text, reply_to)| Up::Text { id, text, reply_to }),
        (text(), text(), text(), opt_text()).prop_map(|(id, format, data, text)| Up::Audio { id, format, data, text }),
        up_media().prop_map(Up::Media),
        (text(), opt_text(), opt_text()).prop_map(|(prompt_id, option_id, text)| Up::Prompt {
            prompt_id,
            option_id,
            text
        }),
    ]
}

fn down_message() -> impl Strategy<Value = DownMessage> {
    (
        text(),
        text(),
        option::of((any::<u32>(), any::<u32>()).prop_map(|(index, total)| Chunk { index, total })),
        option::of(any::<bool>()),
        option::of(any::<bool>()),
        opt_text(),
    )
        .prop_map(|(id, text, chunk, edit, final_, reply_to)| DownMessage {
            id,
            text,
            chunk,
            edit,
            final_,
            reply_to,
        })
}

fn down_prompt() -> impl Strategy<Value = DownPrompt> {
    let opt = (text(), text(), opt_text()).prop_map(|(id, label, style)| PromptOption { id, label, style });
    (text(), text(), text(), vec(opt, 0..4), opt_text(), opt_text(), opt_text(), option::of(any::<u64>())).prop_map(
        |(id, kind, text, options, command, description, session, timeout_seconds)| DownPrompt {
            id,
            kind,
            text,
            options,
            command,
            description,
            session,
            timeout_seconds,
        },
    )
}

fn down_media() -> impl Strategy<Value = DownMedia> {
    (
        (text(), text(), opt_text(), opt_text(), opt_text()),
        (
            option::of(any::<u32>()),
            option::of(any::<u32>()),
            option::of(any::<bool>()),
            option::of(any::<u64>()),
            opt_text(),
            opt_text(),
        ),
    )
        .prop_map(|((id, kind, mime, filename, caption), (part, parts, final_, size, data, url))| DownMedia {
            id,
            kind,
            mime,
            filename,
            caption,
            part,
            parts,
            final_,
            size,
            data,
            url,
        })
}

fn down() -> impl Strategy<Value = Down> {
    prop_oneof![
        (text(), opt_text(), option::of(json_object(2))).prop_map(|(session, avatar_url, capabilities)| Down::Ready {
            session,
            avatar_url,
            capabilities
        }),
        down_message().prop_map(Down::Message),
        down_prompt().prop_map(Down::Prompt),
        (opt_text(), opt_text(), opt_text(), option::of(any::<bool>())).prop_map(
            |(prompt_id, id, option_id, expired)| Down::PromptDone(PromptDone { prompt_id, id, option_id, expired })
        ),
        down_media().prop_map(Down::Media),
        option::of(any::<bool>()).prop_map(|stop| Down::Typing { stop }),
        text().prop_map(|state| Down::Avatar { state }),
        (text(), opt_text(), opt_text()).prop_map(|(code, text, id)| Down::Error { code, text, id }),
        Just(Down::Unknown),
    ]
}

/// `data` is an object or absent. (`Some(Value::Null)` is not a value the crate produces: it would encode as
/// `"data":null` and decode back as `None`.)
fn envelope() -> impl Strategy<Value = Envelope> {
    (
        (opt_text(), text(), opt_text(), opt_text()),
        (opt_text(), opt_text(), option::of(any::<i64>()), option::of(json_object(2).prop_map(Value::Object))),
    )
        .prop_map(|((id, kind, from, to), (session, reply_to, ts, data))| Envelope {
            id,
            kind,
            from,
            to,
            session,
            reply_to,
            ts,
            data,
        })
}

/// JSON objects shaped like frames: known keys and type names with values of any type, so the decoders' typed
/// paths (not only the syntax errors) are exercised.
fn frame_like() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("t"),
        Just("type"),
        Just("id"),
        Just("text"),
        Just("data"),
        Just("media"),
        Just("chunk"),
        Just("index"),
        Just("total"),
        Just("final"),
        Just("edit"),
        Just("part"),
        Just("parts"),
        Just("size"),
        Just("options"),
        Just("from"),
        Just("to"),
        Just("session"),
        Just("ts"),
        Just("code"),
        Just("device"),
        Just("capabilities"),
    ]
    .prop_map(str::to_string);
    let tag = prop_oneof![
        "ready",
        "message",
        "prompt",
        "prompt_done",
        "media",
        "typing",
        "avatar",
        "error",
        "hello",
        "text",
        "audio",
        "image",
        "voice",
        "video",
        "file",
        "stream_start",
        "stream",
        "stream_end",
        "ping",
        "pong"
    ]
    .prop_map(|s| Value::String(s.to_string()));
    let val = prop_oneof![3 => tag, 4 => json(2)];
    btree_map(key, val, 0..8).prop_map(|m| Value::Object(m.into_iter().collect()).to_string())
}

fn value(s: &str) -> Value {
    serde_json::from_str(s).expect("encoder wrote invalid JSON")
}

// ------------------------------------------------------------------ helpers

/// Deterministic, cheap pseudo-random bytes.
fn pattern(size: usize, seed: u64) -> Vec<u8> {
    let mut out = vec![0u8; size];
    let mut x = seed | 1;
    for chunk in out.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = x.to_le_bytes();
        chunk.copy_from_slice(&b[..chunk.len()]);
    }
    out
}

/// Split a file, check every A-18/A-19 rule on the frames, then feed them (in `order`) to a downlink assembler as
/// `media` frames with `final` on the last piece, and check the file comes out byte-identical exactly once.
fn split_and_reassemble(bytes: &[u8], order: Option<&[usize]>) {
    let size = bytes.len() as u64;
    let limits = MediaLimits { max_media_bytes: 24 * MIB };
    let meta = UpMediaMeta {
        id: "m1".into(),
        kind: "document".into(),
        mime: "application/pdf".into(),
        filename: "report.pdf".into(),
        caption: Some("Q3".into()),
    };
    let frames = media::split_file(&meta, bytes, &limits).expect("within limits");
    let parts = frames.len();
    assert!(parts >= 1 && parts <= MAX_PARTS as usize);
    assert_eq!(parts == 1, size <= SINGLE_FRAME_MAX, "one frame iff ≤ 8 MiB (size {size})");

    let mut downs = Vec::with_capacity(parts);
    for (i, f) in frames.iter().enumerate() {
        assert!(f.len() <= adapter::MAX_FRAME_BYTES);
        assert!(!f.contains('\n'), "A-18: base64 without line breaks");
        let Ok(Up::Media(m)) = adapter::decode_up(f) else { panic!("frame {i} is not an uplink media frame") };
        assert_eq!((m.id.as_str(), m.part as usize, m.parts as usize), ("m1", i, parts));
        let piece = base64::engine::general_purpose::STANDARD.decode(&m.data).expect("valid base64").len() as u64;
        if parts > 1 {
            assert!(piece >= MIN_PART, "piece {i} is {piece} bytes < 4 KiB (size {size})");
            assert!(piece <= PART_TARGET, "piece {i} is {piece} bytes > 3 MiB (size {size})");
        }
        downs.push(DownMedia {
            id: m.id,
            kind: m.kind,
            mime: Some(m.mime),
            filename: Some(m.filename),
            caption: m.caption,
            part: Some(m.part),
            parts: Some(m.parts),
            final_: Some(i + 1 == parts),
            size: Some(size),
            data: Some(m.data),
            url: None,
        });
    }
    drop(frames);

    let t = Instant::now();
    let mut asm = MediaAssembler::new(limits);
    let identity: Vec<usize> = (0..parts).collect();
    let order = order.unwrap_or(&identity);
    let mut outputs = Vec::new();
    for (n, &i) in order.iter().enumerate() {
        let out = asm.handle_media(downs[i].clone(), t).unwrap_or_else(|e| panic!("part {i} refused: {e}"));
        assert!(asm.buffered_bytes() <= size);
        if let Some(o) = out {
            assert_eq!(n + 1, parts, "completed before every piece arrived");
            outputs.push(o);
        }
    }
    assert_eq!(outputs.len(), 1, "exactly one completed file");
    let Some(MediaOutput::Complete { meta, bytes: got }) = outputs.pop() else { panic!("not a complete file") };
    assert_eq!(got.len(), bytes.len());
    assert!(got == bytes, "reassembled bytes differ (size {size})");
    assert_eq!((meta.filename.as_str(), meta.caption.as_deref()), ("report.pdf", Some("Q3")));
    assert_eq!((asm.unfinished(), asm.buffered_bytes()), (0, 0));
}

// ------------------------------------------------------------------ properties

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn up_round_trips(frame in up()) {
        let s = adapter::encode(&frame);
        prop_assert_eq!(adapter::decode_up(&s), Ok(frame.clone()));
        // and re-encoding is stable
        prop_assert_eq!(value(&adapter::encode(&adapter::decode_up(&s).unwrap())), value(&s));
    }

    #[test]
    fn down_round_trips(frame in down()) {
        let s = adapter::encode(&frame);
        prop_assert_eq!(adapter::decode_down(&s), Ok(frame.clone()));
        prop_assert_eq!(value(&adapter::encode(&adapter::decode_down(&s).unwrap())), value(&s));
    }

    /// The in-place `message` path reads exactly what the general decoder (the `Down` enum) reads, escapes included.
    #[test]
    fn message_read_in_place_is_the_enums_message(m in down_message()) {
        let s = adapter::encode(&Down::Message(m.clone()));
        let fast = adapter::decode_message_ref(&s).map(adapter::MessageRef::into_owned);
        prop_assert_eq!(fast.clone(), Some(m));
        prop_assert_eq!(fast.map(Down::Message), serde_json::from_str::<Down>(&s).ok());
    }

    #[test]
    fn message_read_in_place_agrees_on_odd_frames(body in frame_like()) {
        // `t` first, then any mix of fields (a second `t`, wrong types, unknown keys, nothing at all)
        let s = format!(r#"{{"t":"message",{}"#, &body[1..]);
        if let Some(m) = adapter::decode_message_ref(&s) {
            prop_assert_eq!(Some(Down::Message(m.into_owned())), serde_json::from_str::<Down>(&s).ok());
        }
    }

    #[test]
    fn envelope_round_trips(env in envelope()) {
        let s = v3::encode(&env);
        prop_assert_eq!(v3::decode(&s), Ok(env.clone()));
        // body() is total on anything that decodes
        let _ = env.body();
    }

    #[test]
    fn decoders_never_panic_on_strings(s in any::<String>()) {
        let _ = adapter::decode_down(&s);
        let _ = adapter::decode_up(&s);
        if let Ok(env) = v3::decode(&s) {
            let _ = env.body();
        }
    }

    #[test]
    fn decoders_never_panic_on_bytes(b in vec(any::<u8>(), 0..256)) {
        let s = String::from_utf8_lossy(&b);
        let _ = adapter::decode_down(&s);
        let _ = adapter::decode_up(&s);
        if let Ok(env) = v3::decode(&s) {
            let _ = env.body();
        }
    }

    #[test]
    fn decoders_never_panic_on_frame_shaped_json(s in frame_like()) {
        let _ = adapter::decode_down(&s);
        let _ = adapter::decode_up(&s);
        if let Ok(env) = v3::decode(&s) {
            let _ = env.body();
        }
    }

    #[test]
    fn a20_safe_filename_is_always_safe(
        name in prop_oneof![
            any::<String>(),
            // hostile alphabet: separators, dots, controls, bidi overrides, reserved names, multi-byte chars
            vec(prop_oneof![
                Just("/"), Just("\\"), Just("."), Just(".."), Just(" "), Just("\u{0}"), Just("\n"), Just("\u{7f}"),
                Just("\u{85}"), Just("\u{202E}"), Just("CON"), Just("nul"), Just("com1"), Just("a"), Just("é"),
                Just("𝄞"), Just(":"), Just("*"), Just("_"), Just("x.tar.gz"),
            ], 0..80).prop_map(|v| v.concat()),
        ],
        mime in option::of(prop_oneof![Just("image/png".to_string()), any::<String>()]),
    ) {
        let s = media::safe_filename(&name, mime.as_deref());
        prop_assert!(!s.is_empty());
        prop_assert!(s.len() <= 120, "{} bytes: {:?}", s.len(), s);
        prop_assert!(!s.contains('/') && !s.contains('\\'), "{:?}", s);
        prop_assert!(!s.chars().any(char::is_control), "{:?}", s);
        prop_assert!(s != "." && s != "..", "{:?}", s);
        prop_assert!(!s.starts_with('.'), "{:?}", s);
        let stem = s.split('.').next().unwrap_or("").to_ascii_uppercase();
        prop_assert!(!["CON", "PRN", "AUX", "NUL", "COM1", "LPT1"].contains(&stem.as_str()), "{:?}", s);
        // idempotent: a safe name stays as it is
        prop_assert_eq!(media::safe_filename(&s, mime.as_deref()), s.clone());
    }

    #[test]
    fn a9_any_permutation_of_chunks_joins_in_order_and_is_final_once(
        (texts, order, final_at) in vec(text(), 1..24).prop_flat_map(|texts| {
            let n = texts.len();
            (Just(texts), Just((0..n).collect::<Vec<usize>>()).prop_shuffle(), 0..n)
        }),
        reply_to in opt_text(),
    ) {
        let n = texts.len() as u32;
        let mut asm = ReplyAssembler::new();
        let mut finals = 0;
        let mut seen = std::collections::BTreeSet::new();
        for (k, &i) in order.iter().enumerate() {
            seen.insert(i);
            let u = asm.handle_message(DownMessage {
                id: "r1".into(),
                text: texts[i].clone(),
                chunk: Some(Chunk { index: i as u32, total: n }),
                edit: None,
                final_: Some(i == final_at),
                reply_to: reply_to.clone(),
            }).unwrap();
            // the whole text so far: the received chunks in index order
            let so_far: String = seen.iter().map(|&j| texts[j].as_str()).collect();
            prop_assert_eq!(&u.text, &so_far);
            prop_assert_eq!(u.reply_to.clone(), reply_to.clone());
            if u.final_ {
                finals += 1;
                prop_assert_eq!(k + 1, order.len(), "final before every chunk arrived");
                prop_assert_eq!(u.text, texts.concat());
            }
        }
        prop_assert_eq!(finals, 1);
    }

    #[test]
    fn a10_edits_replace_and_never_duplicate(edits in vec(text(), 1..20)) {
        let mut asm = ReplyAssembler::new();
        for (k, t) in edits.iter().enumerate() {
            let last = k + 1 == edits.len();
            let u = asm.handle_message(DownMessage {
                id: "r1".into(),
                text: t.clone(),
                chunk: Some(Chunk { index: 0, total: 1 }),
                edit: Some(true),
                final_: Some(last),
                reply_to: None,
            }).unwrap();
            prop_assert_eq!(&u.text, t);
            prop_assert_eq!(u.final_, last);
        }
    }

    #[test]
    fn a5_g10_backoff_stays_in_band(failures in any::<u32>(), jitter in -1.0f64..=1.0, v3 in any::<bool>()) {
        let (policy, bases): (_, &[u64]) = if v3 {
            (BackoffPolicy::V3, &[1, 2, 4, 8, 30])
        } else {
            (BackoffPolicy::Adapter, &[1, 2, 4, 8, 16, 30])
        };
        let base = bases[(failures as usize).min(bases.len() - 1)] as f64;
        let d = backoff(policy, failures, jitter).as_secs_f64();
        prop_assert!(d >= base * 0.8 - 1e-9 && d <= base * 1.2 + 1e-9, "{} s for base {}", d, base);
    }

    #[test]
    fn a19_upload_plans_obey_every_limit(size in 0u64..8_000 * MIB, max in 1u64..10_000 * MIB, overhead in 0u64..4096) {
        let limits = MediaLimits { max_media_bytes: max };
        match media::plan_upload(size, overhead, &limits) {
            Ok(plan) => {
                prop_assert!(size <= max);
                prop_assert!(plan.parts >= 1 && plan.parts <= MAX_PARTS);
                prop_assert_eq!(plan.parts == 1, size <= SINGLE_FRAME_MAX);
                let mut next = 0usize;
                for i in 0..plan.parts {
                    let r = plan.range(i);
                    prop_assert_eq!(r.start, next);
                    next = r.end;
                    if plan.parts > 1 {
                        prop_assert!(r.len() as u64 >= MIN_PART && r.len() as u64 <= PART_TARGET);
                    }
                    prop_assert!(media::base64_len(r.len() as u64) + overhead <= adapter::MAX_FRAME_BYTES as u64);
                }
                prop_assert_eq!(next as u64, size);
            }
            Err(e) => prop_assert!(size > max || size.div_ceil(PART_TARGET) > MAX_PARTS as u64, "{e}"),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a18_a20_small_files_split_and_reassemble(size in 0usize..=96 * 1024, seed in any::<u64>()) {
        split_and_reassemble(&pattern(size, seed), None);
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn a20_media_pieces_reassemble_in_any_order(
        (size, order) in (8 * MIB as usize + 1..=15 * MIB as usize).prop_flat_map(|size| {
            let parts = (size as u64).div_ceil(PART_TARGET) as usize;
            (Just(size), Just((0..parts).collect::<Vec<usize>>()).prop_shuffle())
        }),
        seed in any::<u64>(),
    ) {
        split_and_reassemble(&pattern(size, seed), Some(&order));
    }
}

proptest! {
    // big files: few cases
    #![proptest_config(ProptestConfig::with_cases(6))]

    #[test]
    fn a18_a20_files_up_to_20_mib_split_and_reassemble(size in 0usize..=20 * MIB as usize, seed in any::<u64>()) {
        split_and_reassemble(&pattern(size, seed), None);
    }
}

#[test]
fn a18_a20_boundary_sizes_split_and_reassemble() {
    let m = MIB as usize;
    for size in [0, 1, 4095, 4096, 3 * m, 8 * m - 1, 8 * m, 8 * m + 1, 9 * m, 12 * m, 12 * m + 1, 20 * m] {
        split_and_reassemble(&pattern(size, size as u64), None);
    }
}

#[test]
fn a20_zero_byte_file_completes_but_empty_data_with_url_is_a_download() {
    let t = Instant::now();
    let frame = |data: &str, url: Option<&str>| DownMedia {
        id: "z".into(),
        kind: "document".into(),
        mime: None,
        filename: Some("empty.txt".into()),
        caption: None,
        part: Some(0),
        parts: Some(1),
        final_: Some(true),
        size: Some(0),
        data: Some(data.into()),
        url: url.map(str::to_string),
    };
    let mut asm = MediaAssembler::new(MediaLimits::default());
    let out = asm.handle_media(frame("", None), t).unwrap();
    assert!(matches!(out, Some(MediaOutput::Complete { ref bytes, .. }) if bytes.is_empty()), "{out:?}");
    assert_eq!(asm.unfinished(), 0, "a zero-byte file must not linger as a partial series");
    let out = asm.handle_media(frame("", Some("https://x/f")), t).unwrap();
    assert!(matches!(out, Some(MediaOutput::Download { ref url, .. }) if url == "https://x/f"), "{out:?}");
}
