//! WAV conversion to the Hermes format (A-23: 16 kHz, mono, PCM signed 16-bit) and splitting.

use std::io::Cursor;

use hound::{SampleFormat, WavReader, WavSpec};

use crate::resample::{self, HERMES_RATE};

/// Longest input accepted by [`to_hermes_wav`]: 30 minutes.
pub const MAX_INPUT_SECS: u64 = 30 * 60;

/// The WAV spec of everything Hermes receives.
pub const HERMES_SPEC: WavSpec =
    WavSpec { channels: 1, sample_rate: HERMES_RATE, bits_per_sample: 16, sample_format: SampleFormat::Int };

/// Why a WAV could not be converted or split.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WavError {
    /// The bytes are not a (readable) RIFF/WAVE file.
    #[error("not a WAV file: {0}")]
    NotWav(String),
    /// A WAV, but in an encoding this app does not read (e.g. compressed, 64-bit float).
    #[error("unsupported WAV format: {0}")]
    Unsupported(String),
    /// No audio samples.
    #[error("the recording is empty")]
    Empty,
    /// Longer than [`MAX_INPUT_SECS`].
    #[error("the recording is too long: {secs:.0} s (limit {max_secs} s)")]
    TooLong {
        /// Duration of the input.
        secs: f64,
        /// The limit.
        max_secs: u64,
    },
    /// `max_bytes` cannot hold a WAV header plus one sample frame.
    #[error("cannot split a WAV into parts of at most {0} bytes")]
    MaxBytesTooSmall(usize),
    /// Truncated or inconsistent sample data.
    #[error("corrupt WAV data: {0}")]
    Corrupt(String),
    /// The resampler failed (should not happen for valid input).
    #[error("resampling failed: {0}")]
    Resample(String),
}

fn map_hound(e: hound::Error) -> WavError {
    match e {
        hound::Error::FormatError(m) => WavError::NotWav(m.to_string()),
        hound::Error::Unsupported => WavError::Unsupported("this WAV encoding is not supported".into()),
        hound::Error::TooWide => WavError::Unsupported("sample width too large".into()),
        hound::Error::InvalidSampleFormat => WavError::Unsupported("invalid sample format".into()),
        hound::Error::UnfinishedSample => WavError::Corrupt("truncated sample".into()),
        hound::Error::IoError(e) => WavError::Corrupt(e.to_string()),
    }
}

fn open(input: &[u8]) -> Result<WavReader<Cursor<&[u8]>>, WavError> {
    if input.len() < 12 || &input[0..4] != b"RIFF" || &input[8..12] != b"WAVE" {
        return Err(WavError::NotWav("missing RIFF/WAVE header".into()));
    }
    WavReader::new(Cursor::new(input)).map_err(map_hound)
}

/// The raw sample bytes of the data chunk (exactly `frames × block_align` bytes), or `Corrupt` if truncated.
fn data_bytes(r: WavReader<Cursor<&[u8]>>) -> Result<&[u8], WavError> {
    let spec = r.spec();
    let frames = r.duration() as usize;
    let block = usize::from(spec.channels) * usize::from(spec.bits_per_sample).div_ceil(8);
    let cur = r.into_inner();
    let start = usize::try_from(cur.position()).unwrap_or(usize::MAX);
    let all = *cur.get_ref();
    let want = frames.saturating_mul(block);
    all.get(start..start.saturating_add(want)).ok_or_else(|| {
        WavError::Corrupt(format!("header says {want} bytes of samples, found {}", all.len().saturating_sub(start)))
    })
}

/// A canonical 44-byte PCM WAV header for 16-bit samples.
fn pcm16_header(channels: u16, rate: u32, data_len: usize) -> Vec<u8> {
    let data_len = u32::try_from(data_len).expect("WAV data over 4 GiB");
    let block = channels * 2;
    let mut h = Vec::with_capacity(44 + data_len as usize);
    h.extend_from_slice(b"RIFF");
    h.extend_from_slice(&(36 + data_len).to_le_bytes());
    h.extend_from_slice(b"WAVEfmt ");
    h.extend_from_slice(&16u32.to_le_bytes());
    h.extend_from_slice(&1u16.to_le_bytes()); // PCM
    h.extend_from_slice(&channels.to_le_bytes());
    h.extend_from_slice(&rate.to_le_bytes());
    h.extend_from_slice(&(rate * u32::from(block)).to_le_bytes());
    h.extend_from_slice(&block.to_le_bytes());
    h.extend_from_slice(&16u16.to_le_bytes());
    h.extend_from_slice(b"data");
    h.extend_from_slice(&data_len.to_le_bytes());
    h
}

/// Duration from the header (frames / sample rate), `None` if the bytes are not a readable WAV.
pub fn duration_secs(wav: &[u8]) -> Option<f64> {
    let r = open(wav).ok()?;
    let rate = r.spec().sample_rate;
    (rate > 0).then(|| f64::from(r.duration()) / f64::from(rate))
}

/// A voice note's waveform for drawing: the loudest sample of each of `buckets` equal slices of the clip (channels
/// averaged), scaled so that the loudest slice is 255 — a quiet recording still shows its shape; silence (nothing
/// above 1/50 of full scale) stays flat rather than amplified noise. A clip shorter than `buckets` samples repeats
/// its samples; one with no samples is [`WavError`] like any unreadable clip.
pub fn waveform(wav: &[u8], buckets: usize) -> Result<Vec<u8>, WavError> {
    let (samples, _) = decode_mono(wav)?;
    if buckets == 0 || samples.is_empty() {
        return Ok(Vec::new());
    }
    let peaks: Vec<f32> = (0..buckets)
        .map(|b| {
            let (from, to) =
                (b * samples.len() / buckets, ((b + 1) * samples.len() / buckets).max(b * samples.len() / buckets + 1));
            samples[from.min(samples.len() - 1)..to.min(samples.len())].iter().fold(0f32, |m, x| m.max(x.abs()))
        })
        .collect();
    let norm = peaks.iter().copied().fold(0.02f32, f32::max);
    Ok(peaks.iter().map(|p| ((p / norm).min(1.0) * 255.0).round() as u8).collect())
}

/// Is this spec already the Hermes format?
fn is_hermes(spec: &WavSpec) -> bool {
    spec.channels == 1
        && spec.sample_rate == HERMES_RATE
        && spec.bits_per_sample == 16
        && spec.sample_format == SampleFormat::Int
}

/// Decode any PCM int (8/16/24/32-bit) or 32-bit float WAV to mono f32 in [-1, 1] (channels averaged).
/// Returns the samples and the sample rate.
pub fn decode_mono(input: &[u8]) -> Result<(Vec<f32>, u32), WavError> {
    let mut r = open(input)?;
    let spec = r.spec();
    check_spec(&spec)?;
    let frames = r.duration() as usize;
    let ch = usize::from(spec.channels);
    // the header's frame count is a claim: never reserve more than the input could hold
    let mut mono = Vec::with_capacity(frames.min(input.len()));
    let inv_ch = 1.0 / ch as f32;
    // Fast paths for the common encodings: read the data chunk directly.
    match (spec.sample_format, spec.bits_per_sample) {
        (SampleFormat::Int, 16) => {
            let data = data_bytes(r)?;
            let scale = inv_ch / 32768.0;
            mono.extend(
                data.chunks_exact(2 * ch).map(|f| {
                    f.chunks_exact(2).map(|b| f32::from(i16::from_le_bytes([b[0], b[1]]))).sum::<f32>() * scale
                }),
            );
            return if mono.is_empty() { Err(WavError::Empty) } else { Ok((mono, spec.sample_rate)) };
        }
        (SampleFormat::Float, 32) => {
            let data = data_bytes(r)?;
            mono.extend(data.chunks_exact(4 * ch).map(|f| {
                finite(f.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).sum::<f32>() * inv_ch)
            }));
            return if mono.is_empty() { Err(WavError::Empty) } else { Ok((mono, spec.sample_rate)) };
        }
        _ => {}
    }
    match spec.sample_format {
        SampleFormat::Float => fold(r.samples::<f32>(), ch, inv_ch, 1.0, &mut mono)?,
        SampleFormat::Int if spec.bits_per_sample <= 16 => {
            let scale = 1.0 / (1u32 << (spec.bits_per_sample - 1)) as f32;
            fold(r.samples::<i16>().map(|s| s.map(f32::from)), ch, inv_ch, scale, &mut mono)?
        }
        SampleFormat::Int => {
            let scale = (1.0f64 / f64::from(1u32 << (spec.bits_per_sample - 1))) as f32;
            #[allow(clippy::cast_precision_loss)]
            fold(r.samples::<i32>().map(|s| s.map(|v| v as f32)), ch, inv_ch, scale, &mut mono)?
        }
    }
    if mono.is_empty() {
        return Err(WavError::Empty);
    }
    Ok((mono, spec.sample_rate))
}

/// NaN and infinities (a float WAV can hold them; a sum can overflow) become silence and huge values are clipped to
/// full scale: the resampler's FFT panics on non-finite values and overflows on huge ones (found by
/// fuzz/fuzz_targets/wav.rs). Full scale is where the PCM16 output clips anyway.
fn finite(x: f32) -> f32 {
    if x.is_finite() { x.clamp(-1.0, 1.0) } else { 0.0 }
}

fn fold<I>(samples: I, ch: usize, inv_ch: f32, scale: f32, out: &mut Vec<f32>) -> Result<(), WavError>
where
    I: Iterator<Item = Result<f32, hound::Error>>,
{
    let mut acc = 0.0f32;
    let mut k = 0;
    for s in samples {
        acc += s.map_err(map_hound)?;
        k += 1;
        if k == ch {
            out.push(finite(acc * inv_ch * scale));
            acc = 0.0;
            k = 0;
        }
    }
    Ok(())
}

fn check_spec(spec: &WavSpec) -> Result<(), WavError> {
    if spec.channels == 0 {
        return Err(WavError::Unsupported("zero channels".into()));
    }
    if spec.sample_rate == 0 {
        return Err(WavError::Unsupported("sample rate 0".into()));
    }
    match (spec.sample_format, spec.bits_per_sample) {
        (SampleFormat::Int, 8 | 16 | 24 | 32) | (SampleFormat::Float, 32) => Ok(()),
        (f, b) => Err(WavError::Unsupported(format!("{b}-bit {f:?} samples"))),
    }
}

fn check_header(r: &WavReader<Cursor<&[u8]>>) -> Result<(), WavError> {
    let spec = r.spec();
    check_spec(&spec)?;
    if r.duration() == 0 {
        return Err(WavError::Empty);
    }
    let secs = f64::from(r.duration()) / f64::from(spec.sample_rate);
    #[allow(clippy::cast_precision_loss)]
    if secs > MAX_INPUT_SECS as f64 {
        return Err(WavError::TooLong { secs, max_secs: MAX_INPUT_SECS });
    }
    Ok(())
}

/// f32 in [-1, 1] → i16 (rounded, clamped).
pub fn f32_to_i16(x: f32) -> i16 {
    // The clamp makes the cast exact.
    #[allow(clippy::cast_possible_truncation)]
    let v = (x * 32768.0).round().clamp(-32768.0, 32767.0) as i16;
    v
}

/// Convert any WAV (PCM 8/16/24/32-bit int or 32-bit float, any rate, any channel count) to the Hermes format:
/// 16 kHz, mono (channels averaged), PCM signed 16-bit. An input already in that format is returned unchanged.
pub fn to_hermes_wav(input: &[u8]) -> Result<Vec<u8>, WavError> {
    let r = open(input)?;
    check_header(&r)?;
    if is_hermes(&r.spec()) {
        // Validate that the data is all there before handing it on unchanged.
        data_bytes(r)?;
        return Ok(input.to_vec());
    }
    let (mono, rate) = decode_mono(input)?;
    let out = resample::resample_clip(&mono, rate).map_err(WavError::Resample)?;
    let pcm: Vec<i16> = out.iter().map(|&x| f32_to_i16(x)).collect();
    Ok(encode_pcm16_mono_16k(&pcm))
}

/// Encode samples as a 16 kHz mono PCM16 WAV (44-byte header).
pub fn encode_pcm16_mono_16k(samples: &[i16]) -> Vec<u8> {
    encode_pcm16(samples, HERMES_SPEC)
}

fn encode_pcm16(samples: &[i16], spec: WavSpec) -> Vec<u8> {
    let mut buf = pcm16_header(spec.channels, spec.sample_rate, samples.len() * 2);
    buf.extend(samples.iter().flat_map(|s| s.to_le_bytes()));
    buf
}

/// split a PCM16 WAV (normally 16 kHz mono) larger than `max_bytes` into several valid WAVs, each at most
/// `max_bytes` long (header included), in order, no sample lost or duplicated, parts of near-equal length.
/// A WAV of at most `max_bytes` comes back as one element equal to the input.
pub fn split_wav(wav: &[u8], max_bytes: usize) -> Result<Vec<Vec<u8>>, WavError> {
    let r = open(wav)?;
    let spec = r.spec();
    if spec.sample_format != SampleFormat::Int || spec.bits_per_sample != 16 {
        return Err(WavError::Unsupported(format!(
            "split_wav needs PCM 16-bit, got {}-bit {:?}",
            spec.bits_per_sample, spec.sample_format
        )));
    }
    if r.duration() == 0 {
        return Err(WavError::Empty);
    }
    if wav.len() <= max_bytes {
        return Ok(vec![wav.to_vec()]);
    }
    let ch = usize::from(spec.channels.max(1));
    let frame_bytes = 2 * ch;
    let per = max_bytes.saturating_sub(44) / frame_bytes;
    if per == 0 {
        return Err(WavError::MaxBytesTooSmall(max_bytes));
    }
    let data = data_bytes(r)?;
    let frames = data.len() / frame_bytes;
    let parts = frames.div_ceil(per);
    let size = frames.div_ceil(parts);
    Ok(data
        .chunks(size * frame_bytes)
        .map(|c| {
            let mut w = pcm16_header(spec.channels, spec.sample_rate, c.len());
            w.extend_from_slice(c);
            w
        })
        .collect())
}

#[cfg(test)]
mod tests {

    #[test]
    fn waveform_follows_the_loudness_and_never_amplifies_silence() {
        // 1 s at 16 kHz: quiet first half, loud second half, then a silent clip
        let mut pcm: Vec<i16> = (0..8000).map(|i| if i % 2 == 0 { 1000 } else { -1000 }).collect();
        pcm.extend((0..8000).map(|i| if i % 2 == 0 { 20000 } else { -20000 }));
        let w = waveform(&encode_pcm16_mono_16k(&pcm), 10).unwrap();
        assert_eq!(w.len(), 10);
        assert!(w[..5].iter().all(|&v| v == 13), "{w:?}"); // 1000/20000 of the loudest
        assert!(w[5..].iter().all(|&v| v == 255), "{w:?}");
        let silent = waveform(&encode_pcm16_mono_16k(&[30; 16000]), 8).unwrap();
        assert!(silent.iter().all(|&v| v <= 12), "{silent:?}"); // 30 of 32768: a flat stub, not full bars
        // more buckets than samples, and nothing at all
        assert_eq!(waveform(&encode_pcm16_mono_16k(&[100, -20000, 5]), 6).unwrap().len(), 6);
        assert!(waveform(&encode_pcm16_mono_16k(&[]), 6).is_err(), "an empty clip has no picture");
        assert!(waveform(b"not a wav", 6).is_err());
    }

    use super::*;
    use hound::WavWriter;

    #[test]
    fn non_finite_float_samples_and_lying_headers_are_errors_or_silence_never_a_panic() {
        // found by fuzz/fuzz_targets/wav.rs: NaN/inf samples made the resampler's FFT panic
        let spec =
            WavSpec { channels: 1, sample_rate: 22_050, bits_per_sample: 32, sample_format: SampleFormat::Float };
        let mut buf = Cursor::new(Vec::new());
        {
            let mut w = WavWriter::new(&mut buf, spec).unwrap();
            for i in 0..4000 {
                let x = match i % 4 {
                    0 => f32::NAN,
                    1 => f32::INFINITY,
                    2 => f32::MAX,
                    _ => 0.25,
                };
                w.write_sample(x).unwrap();
            }
            w.finalize().unwrap();
        }
        let out = to_hermes_wav(buf.get_ref()).expect("converted");
        assert!(duration_secs(&out).is_some());
        // a header claiming ~4 billion frames over a few bytes of data: no giant allocation, a clean result
        let mut lying = encode_pcm16(&[1, 2, 3], WavSpec { sample_rate: 44_100, ..HERMES_SPEC });
        lying[40..44].copy_from_slice(&u32::MAX.to_le_bytes());
        let _ = decode_mono(&lying);
    }

    fn write(spec: WavSpec, f: impl FnOnce(&mut WavWriter<Cursor<&mut Vec<u8>>>)) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut w = WavWriter::new(Cursor::new(&mut buf), spec).unwrap();
        f(&mut w);
        w.finalize().unwrap();
        buf
    }

    fn read_i16(wav: &[u8]) -> (WavSpec, Vec<i16>) {
        let mut r = WavReader::new(Cursor::new(wav)).unwrap();
        (r.spec(), r.samples::<i16>().map(Result::unwrap).collect())
    }

    fn rms_i16(s: &[i16]) -> f64 {
        (s.iter().map(|&x| (f64::from(x) / 32768.0).powi(2)).sum::<f64>() / s.len() as f64).sqrt()
    }

    fn sine(rate: u32, secs: f64, freq: f64, amp: f64) -> impl Iterator<Item = f64> {
        let n = (f64::from(rate) * secs) as usize;
        (0..n).map(move |i| amp * (2.0 * std::f64::consts::PI * freq * i as f64 / f64::from(rate)).sin())
    }

    #[test]
    fn stereo_float_44k1_to_hermes() {
        let spec =
            WavSpec { channels: 2, sample_rate: 44_100, bits_per_sample: 32, sample_format: SampleFormat::Float };
        let wav = write(spec, |w| {
            for x in sine(44_100, 2.0, 440.0, 0.5) {
                w.write_sample(x as f32).unwrap();
                w.write_sample(x as f32).unwrap();
            }
        });
        let out = to_hermes_wav(&wav).unwrap();
        let (ospec, s) = read_i16(&out);
        assert_eq!(ospec, HERMES_SPEC);
        let d = duration_secs(&out).unwrap();
        assert!((d - 2.0).abs() / 2.0 < 0.01, "duration {d}");
        let rms = rms_i16(&s[1600..s.len() - 1600]);
        let want = 0.5 / 2f64.sqrt();
        assert!((rms - want).abs() / want < 0.02, "rms {rms} want {want}");
        assert_eq!(out.len(), 44 + s.len() * 2);
    }

    #[test]
    fn channels_are_averaged() {
        // left = sine, right = silence → half amplitude
        let spec = WavSpec { channels: 2, sample_rate: 16_000, bits_per_sample: 16, sample_format: SampleFormat::Int };
        let wav = write(spec, |w| {
            for x in sine(16_000, 1.0, 300.0, 0.8) {
                w.write_sample((x * 32767.0) as i16).unwrap();
                w.write_sample(0i16).unwrap();
            }
        });
        let (ospec, s) = read_i16(&to_hermes_wav(&wav).unwrap());
        assert_eq!(ospec, HERMES_SPEC);
        assert_eq!(s.len(), 16_000);
        let want = 0.4 / 2f64.sqrt();
        assert!((rms_i16(&s) - want).abs() / want < 0.01);
    }

    #[test]
    fn int_widths_and_rates() {
        for (bits, rate) in [(8u16, 8_000u32), (16, 48_000), (24, 22_050), (32, 96_000), (16, 11_025), (24, 44_101)] {
            let spec =
                WavSpec { channels: 1, sample_rate: rate, bits_per_sample: bits, sample_format: SampleFormat::Int };
            let full = f64::from((1u32 << (bits - 1)) - 1);
            let wav = write(spec, |w| {
                for x in sine(rate, 1.0, 440.0, 0.5) {
                    let v = (x * full).round() as i32;
                    if bits == 8 {
                        w.write_sample(v as i8).unwrap();
                    } else {
                        w.write_sample(v).unwrap();
                    }
                }
            });
            let out = to_hermes_wav(&wav).unwrap_or_else(|e| panic!("{bits} bit {rate} Hz: {e}"));
            let (ospec, s) = read_i16(&out);
            assert_eq!(ospec, HERMES_SPEC);
            assert!((s.len() as f64 - 16_000.0).abs() <= 2.0, "{bits}/{rate}: {} samples", s.len());
            let rms = rms_i16(&s[800..s.len() - 800]);
            let want = 0.5 / 2f64.sqrt();
            assert!((rms - want).abs() / want < 0.03, "{bits}/{rate}: rms {rms}");
        }
    }

    #[test]
    fn identity_is_byte_identical() {
        let s: Vec<i16> = sine(16_000, 0.5, 1000.0, 0.3).map(|x| (x * 32767.0) as i16).collect();
        let wav = encode_pcm16_mono_16k(&s);
        assert_eq!(to_hermes_wav(&wav).unwrap(), wav);
        assert_eq!(wav.len(), 44 + 2 * s.len());
        assert_eq!(read_i16(&wav).1, s);
        assert!((duration_secs(&wav).unwrap() - 0.5).abs() < 1e-9);
    }

    #[test]
    fn bad_input() {
        assert!(matches!(to_hermes_wav(b""), Err(WavError::NotWav(_))));
        assert!(matches!(to_hermes_wav(b"hello world, not a wav at all"), Err(WavError::NotWav(_))));
        assert!(matches!(to_hermes_wav(&encode_pcm16_mono_16k(&[])), Err(WavError::Empty)));
        let spec = WavSpec { channels: 1, sample_rate: 8000, bits_per_sample: 8, sample_format: SampleFormat::Int };
        assert!(matches!(to_hermes_wav(&write(spec, |_| {})), Err(WavError::Empty)));
        // Truncated data chunk
        let wav = encode_pcm16_mono_16k(&[1; 1000]);
        assert!(to_hermes_wav(&wav[..1000]).is_err());
        // Too long: a header that claims 31 minutes (the data itself is never read).
        let mut long = encode_pcm16_mono_16k(&[0; 16]);
        long[40..44].copy_from_slice(&(16_000u32 * 2 * 31 * 60).to_le_bytes());
        assert!(matches!(to_hermes_wav(&long), Err(WavError::TooLong { .. })));
        // Unsupported: A-law (format tag 6)
        let mut alaw = encode_pcm16_mono_16k(&[0; 100]);
        alaw[20] = 6;
        assert!(matches!(to_hermes_wav(&alaw), Err(WavError::Unsupported(_)) | Err(WavError::NotWav(_))));
        assert_eq!(duration_secs(b"nope"), None);
    }

    #[test]
    fn split_small_is_identity() {
        let wav = encode_pcm16_mono_16k(&[5; 100]);
        assert_eq!(split_wav(&wav, wav.len()).unwrap(), vec![wav.clone()]);
        assert_eq!(split_wav(&wav, 8 << 20).unwrap(), vec![wav]);
    }

    fn check_split(n: usize, max: usize) {
        let s: Vec<i16> = (0..n).map(|i| (i % 65_536) as u16 as i16).collect();
        let wav = encode_pcm16_mono_16k(&s);
        let parts = split_wav(&wav, max).unwrap();
        let mut all = Vec::new();
        for p in &parts {
            assert!(p.len() <= max, "part {} > {max}", p.len());
            let (spec, ps) = read_i16(p);
            assert_eq!(spec, HERMES_SPEC);
            assert!(!ps.is_empty());
            all.extend(ps);
        }
        assert_eq!(all, s);
        if wav.len() <= max {
            assert_eq!(parts, vec![wav]);
        } else {
            assert_eq!(parts.len(), (n).div_ceil((max - 44) / 2));
        }
    }

    #[test]
    fn split_invariants() {
        check_split(10_000, 44 + 2);
        check_split(10_000, 1000);
        check_split(10_000, 1001);
        check_split(10_000, 20_044);
        check_split(10_000, 20_043);
        check_split(1, 46);
        // 5 minutes at 16 kHz in A-24 sized parts
        check_split(16_000 * 300, 8 << 20);
        assert!(matches!(split_wav(&encode_pcm16_mono_16k(&[1, 2]), 45), Err(WavError::MaxBytesTooSmall(45))));
        assert!(matches!(split_wav(b"junk", 100), Err(WavError::NotWav(_))));
    }

    #[test]
    fn streaming_resampler_matches_length() {
        let input: Vec<f32> = sine(48_000, 1.0, 440.0, 0.5).map(|x| x as f32).collect();
        let mut r = crate::resample::StreamResampler::new(48_000).unwrap();
        let mut out = Vec::new();
        for c in input.chunks(333) {
            r.push(c, &mut out).unwrap();
        }
        r.finish(&mut out).unwrap();
        assert_eq!(out.len(), 16_000);
        let clip = crate::resample::resample_clip(&input, 48_000).unwrap();
        assert_eq!(clip.len(), 16_000);
        // streaming and whole-clip paths agree (same filter, same alignment)
        let maxdiff = out.iter().zip(&clip).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(maxdiff < 1e-3, "maxdiff {maxdiff}");
    }

    mod prop {
        use proptest::prelude::*;
        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]
            #[test]
            fn split_any(n in 1usize..20_000, max in 46usize..50_000) {
                super::check_split(n, max);
            }
        }
    }
}
