//! The echo canceller's cost: `cargo bench -p hermes-voice --features aec --bench aec`.
//!
//! Goal (hands-free on speakers): ≤ 3 % of one core while hands-free listens, i.e. ≤ 300 ms of processing for 10 s of
//! audio (the playback and the microphone, each 16 kHz mono, in 20 ms blocks as the recorders deliver them), with
//! noise suppression on. `cargo test --benches` runs it once.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use hermes_voice::aec::{AecOptions, SharedEchoCanceller};

/// A voice-like playback (a 140 Hz buzz with harmonics, syllables at 4 Hz) and the microphone hearing it 25 ms later
/// at half level over a faint hiss, 10 s of each.
fn signals() -> (Vec<i16>, Vec<i16>) {
    let n = 16_000 * 10;
    let far: Vec<i16> = (0..n)
        .map(|i| {
            let t = i as f32 / 16_000.0;
            let syllable = (std::f32::consts::PI * 4.0 * t).sin().max(0.0);
            let buzz: f32 = (1..8).map(|k| (2.0 * std::f32::consts::PI * 140.0 * k as f32 * t).sin() / k as f32).sum();
            (buzz * syllable * 6000.0) as i16
        })
        .collect();
    let mut seed: u32 = 7;
    let mic = (0..n)
        .map(|i| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            let echo = if i >= 400 { i32::from(far[i - 400]) / 2 } else { 0 };
            (echo + (seed % 41) as i32 - 20) as i16
        })
        .collect();
    (far, mic)
}

fn bench(c: &mut Criterion) {
    let (far, mic) = signals();
    let mut g = c.benchmark_group("aec_10s_of_audio");
    g.sample_size(10);
    for ns in [true, false] {
        g.bench_function(if ns { "echo cancellation + noise suppression" } else { "echo cancellation" }, |b| {
            b.iter(|| {
                let aec = SharedEchoCanceller::new(AecOptions { noise_suppression: ns });
                let mut n = 0;
                for (f, m) in far.chunks(320).zip(mic.chunks(320)) {
                    aec.render(f);
                    n += aec.capture(black_box(m)).len();
                }
                black_box(n)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
