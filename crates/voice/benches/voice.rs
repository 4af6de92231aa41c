//! Benchmarks: `cargo bench -p hermes-voice --features vad --bench voice`. `cargo test --benches` runs each once.
//!
//! Goal: key-up → audio frame ≤ 30 ms for a 10 s clip: WAV conversion + base64 of the result.

use std::hint::black_box;
use std::io::Cursor;

use base64::Engine;
use criterion::{Criterion, criterion_group, criterion_main};
use hermes_voice::vad::{Segmenter, SegmenterConfig};
use hermes_voice::wav::{encode_pcm16_mono_16k, split_wav, to_hermes_wav};

fn wav_48k_stereo(secs: f64, float: bool) -> Vec<u8> {
    let n = (48_000.0 * secs) as usize;
    let spec = hound::WavSpec {
        channels: 2,
        sample_rate: 48_000,
        bits_per_sample: if float { 32 } else { 16 },
        sample_format: if float { hound::SampleFormat::Float } else { hound::SampleFormat::Int },
    };
    let mut buf = Vec::new();
    let mut w = hound::WavWriter::new(Cursor::new(&mut buf), spec).unwrap();
    for i in 0..n {
        let t = i as f64 / 48_000.0;
        let x = 0.3 * (2.0 * std::f64::consts::PI * 220.0 * t).sin() * (1.0 + (7.0 * t).sin()) / 2.0;
        for _ in 0..2 {
            if float {
                w.write_sample(x as f32).unwrap();
            } else {
                w.write_sample((x * 32767.0) as i16).unwrap();
            }
        }
    }
    w.finalize().unwrap();
    buf
}

fn bench(c: &mut Criterion) {
    let f32_in = wav_48k_stereo(10.0, true);
    let i16_in = wav_48k_stereo(10.0, false);
    let mut g = c.benchmark_group("keyup_to_frame_10s");
    g.sample_size(20);
    g.bench_function("to_hermes_wav 48k stereo f32", |b| b.iter(|| to_hermes_wav(black_box(&f32_in)).unwrap()));
    g.bench_function("to_hermes_wav 48k stereo i16", |b| b.iter(|| to_hermes_wav(black_box(&i16_in)).unwrap()));
    g.bench_function("to_hermes_wav + base64 48k stereo f32", |b| {
        b.iter(|| {
            let wav = to_hermes_wav(black_box(&f32_in)).unwrap();
            base64::engine::general_purpose::STANDARD.encode(wav)
        })
    });
    let hermes = to_hermes_wav(&f32_in).unwrap();
    g.bench_function("identity 16k mono + base64", |b| {
        b.iter(|| base64::engine::general_purpose::STANDARD.encode(to_hermes_wav(black_box(&hermes)).unwrap()))
    });
    g.finish();

    let samples: Vec<i16> = (0..16_000 * 10).map(|i| ((i as f32 * 0.05).sin() * 5000.0) as i16).collect();
    c.bench_function("vad segmenter 10 s", |b| {
        b.iter(|| {
            let mut s = Segmenter::new(SegmenterConfig::default());
            for ch in samples.chunks(320) {
                black_box(s.push(ch));
            }
        })
    });
    let long = encode_pcm16_mono_16k(&vec![1i16; 16_000 * 300]);
    c.bench_function("split_wav 5 min into 8 MiB parts", |b| b.iter(|| split_wav(black_box(&long), 8 << 20).unwrap()));
}

criterion_group!(benches, bench);
criterion_main!(benches);
