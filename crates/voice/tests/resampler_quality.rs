//! Resampler quality, 48 kHz → 16 kHz through the public converter: no aliasing from above 8 kHz, flat passband.
//! Measured with Goertzel probes (single-bin DFT) on the converted output.

use std::f64::consts::PI;
use std::io::Cursor;

use hermes_voice::wav::to_hermes_wav;

fn wav_f32(rate: u32, ch: u16, s: &[f32]) -> Vec<u8> {
    let spec = hound::WavSpec {
        channels: ch,
        sample_rate: rate,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let mut buf = Vec::new();
    let mut w = hound::WavWriter::new(Cursor::new(&mut buf), spec).unwrap();
    for &x in s {
        for _ in 0..ch {
            w.write_sample(x).unwrap();
        }
    }
    w.finalize().unwrap();
    buf
}

fn convert(s: &[f32]) -> Vec<f64> {
    let out = to_hermes_wav(&wav_f32(48_000, 2, s)).unwrap();
    let mut r = hound::WavReader::new(Cursor::new(out)).unwrap();
    assert_eq!(r.spec().sample_rate, 16_000);
    r.samples::<i16>().map(|x| f64::from(x.unwrap()) / 32768.0).collect()
}

/// Amplitude of the `freq` component (Hann-windowed Goertzel).
fn goertzel(s: &[f64], rate: f64, freq: f64) -> f64 {
    let n = s.len() as f64;
    let w = 2.0 * PI * freq / rate;
    let (mut s1, mut s2) = (0.0, 0.0);
    for (i, &x) in s.iter().enumerate() {
        let win = 0.5 - 0.5 * (2.0 * PI * i as f64 / n).cos();
        let s0 = x * win + 2.0 * w.cos() * s1 - s2;
        s2 = s1;
        s1 = s0;
    }
    let power = s1 * s1 + s2 * s2 - 2.0 * w.cos() * s1 * s2;
    // Hann coherent gain 0.5
    2.0 * power.sqrt() / (n * 0.5)
}

fn tone(freq: f64, secs: f64, amp: f64) -> Vec<f32> {
    let n = (48_000.0 * secs) as usize;
    (0..n).map(|i| (amp * (2.0 * PI * freq * i as f64 / 48_000.0).sin()) as f32).collect()
}

fn db(x: f64) -> f64 {
    20.0 * x.max(1e-12).log10()
}

#[test]
fn passband_is_flat_within_1_db() {
    for f in [100.0, 440.0, 1000.0, 3000.0, 5000.0, 6500.0, 7000.0] {
        let out = convert(&tone(f, 1.0, 0.5));
        let body = &out[1600..out.len() - 1600];
        let level = db(goertzel(body, 16_000.0, f) / 0.5);
        eprintln!("passband {f:>6} Hz: {level:+.3} dB");
        assert!(level.abs() <= 1.0, "{f} Hz: {level:+.2} dB");
    }
}

#[test]
fn tones_above_8k_do_not_alias() {
    for f in [8_500.0, 9_000.0, 10_000.0, 12_000.0, 15_000.0, 20_000.0, 23_000.0] {
        let out = convert(&tone(f, 1.0, 0.5));
        let body = &out[1600..out.len() - 1600];
        let alias = 16_000.0 - f % 16_000.0;
        let alias = if alias > 8_000.0 { 16_000.0 - alias } else { alias };
        let at_alias = db(goertzel(body, 16_000.0, alias) / 0.5);
        let rms = (body.iter().map(|x| x * x).sum::<f64>() / body.len() as f64).sqrt();
        let total = db(rms * 2f64.sqrt() / 0.5);
        eprintln!("{f:>6} Hz → alias bin {alias:>6} Hz: {at_alias:+.1} dB, total output {total:+.1} dB");
        // 16-bit output: the floor is about −90 dB; demand −60 dB.
        assert!(at_alias < -60.0 && total < -60.0, "{f} Hz leaks: {at_alias:.1} dB at {alias} Hz, {total:.1} dB total");
    }
}

#[test]
fn sweep_energy_above_8k_does_not_alias() {
    // Linear sweep 8.3 → 23.9 kHz over 3 s at −6 dBFS: the whole sweep is above the output Nyquist.
    let (f0, f1, secs) = (8_300.0f64, 23_900.0f64, 3.0);
    let n = (48_000.0 * secs) as usize;
    let sweep: Vec<f32> = (0..n)
        .map(|i| {
            let t = i as f64 / 48_000.0;
            (0.5 * (2.0 * PI * (f0 * t + (f1 - f0) * t * t / (2.0 * secs))).sin()) as f32
        })
        .collect();
    let out = convert(&sweep);
    let body = &out[1600..out.len() - 1600];
    let rms = (body.iter().map(|x| x * x).sum::<f64>() / body.len() as f64).sqrt();
    let level = db(rms * 2f64.sqrt() / 0.5);
    eprintln!("sweep 8.3-23.9 kHz: output {level:+.1} dB relative to input");
    assert!(level < -60.0, "{level:.1} dB aliased");

    // And a sweep inside the passband comes through at full level.
    let (f0, f1) = (100.0f64, 7_000.0f64);
    let sweep: Vec<f32> = (0..n)
        .map(|i| {
            let t = i as f64 / 48_000.0;
            (0.5 * (2.0 * PI * (f0 * t + (f1 - f0) * t * t / (2.0 * secs))).sin()) as f32
        })
        .collect();
    let out = convert(&sweep);
    let body = &out[1600..out.len() - 1600];
    let rms = (body.iter().map(|x| x * x).sum::<f64>() / body.len() as f64).sqrt();
    let level = db(rms * 2f64.sqrt() / 0.5);
    eprintln!("sweep 0.1-7 kHz: output {level:+.2} dB");
    assert!(level.abs() < 1.0);
}

/// The microphone's streaming resampler (10 ms chunks, for a short way from the microphone to hands-free's
/// detector) at the rates microphones deliver: as flat and as clean as the whole-clip path above, and it hands
/// out what came in within one 10 ms block (the 1024-frame chunk held the first 50 ms back).
#[test]
fn the_streaming_resampler_is_flat_clean_and_prompt() {
    use hermes_voice::resample::StreamResampler;
    for rate in [44_100u32, 48_000, 32_000, 22_050] {
        let stream = |x: &[f32]| -> (Vec<f64>, Vec<usize>) {
            let mut r = StreamResampler::new(rate).unwrap();
            let (mut out, mut lag) = (Vec::new(), Vec::new());
            for (i, b) in x.chunks(rate as usize / 100).enumerate() {
                r.push(b, &mut out).unwrap();
                // 16 kHz samples owed for the input so far, minus those handed out
                lag.push(((i + 1) * 160).saturating_sub(out.len()));
            }
            r.finish(&mut out).unwrap();
            (out.into_iter().map(f64::from).collect(), lag)
        };
        let tone = |f: f64| -> Vec<f32> {
            (0..rate as usize).map(|i| (0.5 * (2.0 * PI * f * i as f64 / f64::from(rate)).sin()) as f32).collect()
        };
        for f in [100.0, 1000.0, 5000.0, 7000.0] {
            let (out, lag) = stream(&tone(f));
            let level = db(goertzel(&out[1600..14_400], 16_000.0, f) / 0.5);
            assert!(level.abs() <= 1.0, "{rate} Hz, {f} Hz: {level:+.2} dB");
            let worst = lag[3..].iter().max().copied().unwrap_or(0);
            // 20 ms at most at the rates of nearly every microphone; 22 050 Hz's rate period is 20 ms itself
            let most = if rate % 8_000 == 0 || rate == 44_100 { 320 } else { 640 };
            eprintln!("streaming {rate} Hz, {f} Hz: {level:+.2} dB, at most {worst} samples held back");
            assert!(worst <= most, "{rate} Hz: {worst} samples held back");
        }
        if rate > 16_000 {
            let f = f64::from(rate) / 2.0 - 1_500.0;
            let (out, _) = stream(&tone(f));
            let alias = 16_000.0 - f % 16_000.0;
            let alias = if alias > 8_000.0 { 16_000.0 - alias } else { alias };
            let at_alias = db(goertzel(&out[1600..14_400], 16_000.0, alias) / 0.5);
            assert!(at_alias < -60.0, "{rate} Hz: {f} Hz leaks {at_alias:.1} dB at {alias} Hz");
        }
    }
}
