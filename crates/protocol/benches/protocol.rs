//! Protocol hot paths: `cargo bench -p hermes-protocol` (MB/s via `Throughput::Bytes`).
//! `cargo test -p hermes-protocol --benches` runs each benchmark once as a smoke test.

use std::hint::black_box;
use std::time::{Duration, Instant};

use base64::Engine as _;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use hermes_protocol::adapter::{self, Chunk, Down, DownMedia, DownMessage};
use hermes_protocol::media::{self, MIB, MediaAssembler, MediaLimits, MediaOutput, UpMediaMeta};
use hermes_protocol::reply::ReplyAssembler;

fn pattern(size: usize) -> Vec<u8> {
    (0..size).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect()
}

/// A typical reply frame, about 200 bytes.
fn message_frame() -> String {
    adapter::encode(&Down::Message(DownMessage {
        id: "r-5f6a2c1e9b7d".into(),
        text: "Sure — here is the quicksort in Rust you asked for; it partitions around the last element and \
               recurses on both halves."
            .into(),
        chunk: Some(Chunk { index: 0, total: 1 }),
        edit: None,
        final_: Some(true),
        reply_to: Some("m-000123".into()),
    }))
}

fn decode_message(c: &mut Criterion) {
    let frame = message_frame();
    assert!((150..=260).contains(&frame.len()), "{} bytes", frame.len());
    let mut g = c.benchmark_group("adapter");
    g.throughput(Throughput::Bytes(frame.len() as u64));
    g.bench_function("decode_message_frame", |b| {
        b.iter(|| {
            let d = adapter::decode_down(black_box(&frame)).unwrap();
            assert!(matches!(d, Down::Message(_)));
            d
        })
    });
    g.finish();
}

fn media(c: &mut Criterion) {
    let file = pattern(8 * MIB as usize);
    let frame = adapter::encode(&Down::Media(DownMedia {
        id: "a1".into(),
        kind: "document".into(),
        mime: Some("application/pdf".into()),
        filename: Some("report.pdf".into()),
        caption: Some("Q3".into()),
        part: Some(0),
        parts: Some(1),
        final_: Some(true),
        size: Some(file.len() as u64),
        data: Some(base64::engine::general_purpose::STANDARD.encode(&file)),
        url: None,
    }));
    let now = Instant::now();
    let mut g = c.benchmark_group("media");
    g.sample_size(10).measurement_time(Duration::from_secs(8));

    // downlink: JSON decode of an ~11 MiB frame + base64 decode + assembly of the 8 MiB file
    g.throughput(Throughput::Bytes(frame.len() as u64));
    g.bench_function("decode_8mib_media_frame", |b| {
        b.iter(|| {
            let Ok(Down::Media(m)) = adapter::decode_down(black_box(&frame)) else { panic!("not media") };
            let mut asm = MediaAssembler::new(MediaLimits::default());
            let Ok(Some(MediaOutput::Complete { bytes, .. })) = asm.handle_media(m, now) else { panic!("incomplete") };
            assert_eq!(bytes.len(), file.len());
            bytes
        })
    });

    // uplink: an 8 MiB file into frames (one frame, base64 straight into the JSON)
    let meta = UpMediaMeta {
        id: "m1".into(),
        kind: "document".into(),
        mime: "application/pdf".into(),
        filename: "report.pdf".into(),
        caption: None,
    };
    let limits = MediaLimits::default();
    g.throughput(Throughput::Bytes(file.len() as u64));
    g.bench_function("split_8mib_file", |b| {
        b.iter(|| {
            let frames = media::split_file(&meta, black_box(&file), &limits).unwrap();
            assert_eq!(frames.len(), 1);
            frames
        })
    });
    g.finish();
}

fn reply_edits(c: &mut Criterion) {
    // a 20 KB reply streamed as 100 edits, each carrying the whole text so far (A-21)
    let full: String = "lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(360)[..20_000].to_string();
    let edits: Vec<DownMessage> = (1..=100)
        .map(|k| DownMessage {
            id: "r1".into(),
            text: full[..full.len() * k / 100].to_string(),
            chunk: Some(Chunk { index: 0, total: 1 }),
            edit: Some(true),
            final_: Some(k == 100),
            reply_to: None,
        })
        .collect();
    let bytes: usize = edits.iter().map(|m| m.text.len()).sum();
    let mut g = c.benchmark_group("reply");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("20kb_reply_as_100_edits", |b| {
        b.iter_batched(
            || edits.clone(),
            |edits| {
                let mut asm = ReplyAssembler::new();
                let mut last = None;
                for m in edits {
                    last = Some(asm.handle_message(m).unwrap());
                }
                let last = last.unwrap();
                assert!(last.final_ && last.text.len() == 20_000);
                last
            },
            criterion::BatchSize::SmallInput,
        )
    });
    g.finish();
}

/// The sans-IO half of the engine's receive path (its throughput goal is in bench/README.md): a ready adapter session
/// takes small final `message` frames, each with a new id as an agent sends them, and hands out one event each.
fn session_receive(c: &mut Criterion) {
    use hermes_protocol::adapter::Device;
    use hermes_protocol::session::{Config, Session};
    use hermes_protocol::{Dialect, Event, Io};
    let t0 = Instant::now();
    let cfg = Config {
        dialect: Dialect::Adapter,
        token: "t".into(),
        device: Device { id: "bench".into(), name: None, platform: None },
        user_id: "u".into(),
        default_session: "s".into(),
        seed: 1,
        max_media_bytes: hermes_protocol::media::DEFAULT_MEDIA_CAP,
    };
    let mut s = Session::new(cfg, t0);
    while s.poll_io(t0).is_some() {}
    s.handle_connected(t0);
    while s.poll_io(t0).is_some() {}
    s.handle_text(r#"{"t":"ready","session":"mobile:b","capabilities":{}}"#, t0);
    while s.poll_event().is_some() {}
    while s.poll_io(t0).is_some() {}
    assert!(s.is_ready());
    let frames: Vec<String> = (0..4096)
        .map(|i| format!(r#"{{"t":"message","id":"m{i}","text":"hello number {i}, a short reply","final":true}}"#))
        .collect();
    let mut g = c.benchmark_group("session");
    g.throughput(Throughput::Elements(1));
    let mut i = 0;
    g.bench_function("receive_small_final_message", |b| {
        b.iter(|| {
            s.handle_text(black_box(&frames[i % frames.len()]), t0);
            i += 1;
            let ev = s.poll_event();
            assert!(matches!(ev, Some(Event::Message { final_: true, .. })));
            ev
        })
    });
    let _: Option<Io> = s.poll_io(t0);
    g.finish();
}

criterion_group!(benches, decode_message, media, reply_edits, session_receive);
criterion_main!(benches);
