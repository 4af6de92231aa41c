//! The WAV readers of crates/voice (compiled in from its sources) on arbitrary bytes (a voice file we send, or a hostile file the user picks): `duration_secs`,
//! `to_hermes_wav` and `split_wav` never panic and never allocate beyond the input's size class (libFuzzer's
//! -rss_limit_mb catches a header that claims gigabytes). A conversion result is a WAV that reads back; a split
//! keeps every byte of the data and each piece fits the limit.
#![no_main]

#[allow(dead_code)]
#[path = "../../crates/voice/src/resample.rs"]
mod resample;
#[allow(dead_code)]
#[path = "../../crates/voice/src/wav.rs"]
mod wav;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (u16, &[u8])| {
    let (max, data) = input;
    let _ = wav::duration_secs(data);
    if let Ok(out) = wav::to_hermes_wav(data) {
        assert!(wav::duration_secs(&out).is_some(), "converted WAV does not read back");
    }
    let max = usize::from(max).max(45);
    if let Ok(parts) = wav::split_wav(data, max) {
        assert!(!parts.is_empty());
        if parts.len() > 1 {
            for p in &parts {
                assert!(p.len() <= max, "piece of {} bytes over the {max}-byte limit", p.len());
                assert!(wav::duration_secs(p).is_some(), "a piece does not read back");
            }
        }
    }
});
