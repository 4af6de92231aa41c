//! Downlink media assembly under arbitrary sequences of `media` frames, timeouts and drops.
//! Oracles: memory stays bounded (≤ 8 unfinished series, each ≤ the per-file limit); a completed file is within
//! the limit and has a safe name; expired series are gone after `handle_timeout`; a drop frees everything.
//! (Byte-identical reassembly of well-formed uploads is a property test: tests/proptest.rs.)
#![no_main]

use std::time::{Duration, Instant};

use arbitrary::Arbitrary;
use base64::Engine as _;
use hermes_protocol::adapter::DownMedia;
use hermes_protocol::media::{MAX_UNFINISHED, MIB, MediaAssembler, MediaLimits, MediaOutput};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Data {
    None,
    Bytes(Vec<u8>),
    /// A large piece without a large input: `len` copies of `byte` (bounded to 5 MiB).
    Fill {
        len: u32,
        byte: u8,
    },
    /// Anything, base64 or not.
    Raw(String),
}

#[derive(Arbitrary, Debug)]
enum Op {
    Media {
        id: u8,
        part: Option<u16>,
        parts: Option<u16>,
        final_: Option<bool>,
        size: Option<u32>,
        data: Data,
        url: bool,
        filename: Option<String>,
    },
    Advance {
        secs: u16,
    },
    Timeout,
    Disconnect,
}

#[derive(Arbitrary, Debug)]
struct Input {
    limit: u8,
    ops: Vec<Op>,
}

fuzz_target!(|input: Input| {
    let max = match input.limit % 4 {
        0 => 8 * MIB,
        1 => 16 * MIB,
        2 => 64 * 1024,
        _ => 1 + input.limit as u64,
    };
    let limits = MediaLimits { max_media_bytes: max };
    let mut asm = MediaAssembler::new(limits);
    let t0 = Instant::now();
    let mut now = t0;
    for op in input.ops.into_iter().take(128) {
        match op {
            Op::Media { id, part, parts, final_, size, data, url, filename } => {
                let data = match data {
                    Data::None => None,
                    Data::Bytes(b) => Some(base64::engine::general_purpose::STANDARD.encode(b)),
                    Data::Fill { len, byte } => Some(
                        base64::engine::general_purpose::STANDARD
                            .encode(vec![byte; (len % (5 * 1024 * 1024)) as usize]),
                    ),
                    Data::Raw(s) => Some(s),
                };
                let m = DownMedia {
                    id: format!("m{}", id % 16),
                    kind: "document".into(),
                    mime: Some("application/octet-stream".into()),
                    filename,
                    caption: None,
                    part: part.map(u32::from),
                    parts: parts.map(u32::from),
                    final_,
                    size: size.map(u64::from),
                    data,
                    url: url.then(|| "https://agent.example.com/f".to_string()),
                };
                match asm.handle_media(m, now) {
                    Ok(Some(MediaOutput::Complete { meta, bytes })) => {
                        assert!(bytes.len() as u64 <= max, "a completed file over the limit");
                        assert!(!meta.filename.is_empty() && !meta.filename.contains(['/', '\\']));
                    }
                    Ok(Some(MediaOutput::Download { max_bytes, .. })) => assert_eq!(max_bytes, max),
                    Ok(None) | Err(_) => {}
                }
            }
            Op::Advance { secs } => now += Duration::from_secs(secs as u64),
            Op::Timeout => {
                asm.handle_timeout(now);
                if let Some(t) = asm.poll_timeout() {
                    assert!(t > now, "an expired series survived handle_timeout");
                }
            }
            Op::Disconnect => {
                asm.handle_disconnect();
                assert_eq!((asm.unfinished(), asm.buffered_bytes()), (0, 0));
            }
        }
        assert!(asm.unfinished() <= MAX_UNFINISHED);
        assert!(asm.buffered_bytes() <= asm.unfinished() as u64 * max, "a series holds more than one file's limit");
        // the fixed buffer cap, whatever the agent's per-file number
        assert!(asm.buffered_bytes() <= asm.buffer_cap() && asm.peak_buffered_bytes() <= asm.buffer_cap());
    }
});
