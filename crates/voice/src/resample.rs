//! Mono resampling to 16 kHz with `rubato` (whole clips and streaming).

use rubato::audioadapter_buffers::direct::InterleavedSlice;
use rubato::{
    Async, Fft, FixedAsync, FixedSync, Indexing, Resampler, SincInterpolationParameters, SincInterpolationType,
    WindowFunction,
};

/// The Hermes sample rate.
pub const HERMES_RATE: u32 = 16_000;

/// Frames per resampler chunk (input side).
const CHUNK: usize = 1024;

/// Above this many input frames per "rate period" (rate / gcd) the synchronous FFT resampler would need a huge,
/// slow FFT; fall back to the asynchronous sinc resampler for such odd rates.
const MAX_FFT_PERIOD: usize = 4096;

fn gcd(mut a: usize, mut b: usize) -> usize {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A mono resampler from `rate_in` to `rate_out` with fixed-size input chunks.
fn new_resampler_to(rate_in: u32, rate_out: u32) -> Result<Box<dyn Resampler<f32> + Send>, String> {
    new_resampler_chunk(rate_in, rate_out, CHUNK)
}

/// The streaming resampler's input chunk: 10 ms. It hands out audio one chunk (plus its filter's delay) after it came
/// in: with [`CHUNK`] (1024 frames, which rubato rounds up to 30 ms at 44.1 kHz) the microphone's first output came
/// 50 ms after its input, with 10 ms after 10–30 ms — the difference is heard in how soon hands-free hears the user
/// (barge-in) — and the passband is still flat to 7 kHz (`tests/resampler_quality.rs`).
fn stream_chunk(rate_in: u32) -> usize {
    (rate_in as usize / 100).max(64)
}

fn new_resampler_chunk(rate_in: u32, rate_out: u32, chunk: usize) -> Result<Box<dyn Resampler<f32> + Send>, String> {
    let (rin, rout) = (rate_in as usize, rate_out as usize);
    if rin == 0 || rout == 0 {
        return Err("sample rate 0".into());
    }
    if rin / gcd(rin, rout) <= MAX_FFT_PERIOD {
        // One sub-chunk: the largest FFT for the chunk, hence the narrowest transition band (flat to 7 kHz).
        Fft::<f32>::new_custom(rin, rout, chunk, 1, 1, WindowFunction::BlackmanHarris2, FixedSync::Input)
            .map(|r| Box::new(r) as Box<dyn Resampler<f32> + Send>)
            .map_err(|e| e.to_string())
    } else {
        let params = SincInterpolationParameters::new(256, WindowFunction::BlackmanHarris2)
            .oversampling_factor(256)
            .interpolation(SincInterpolationType::Cubic);
        Async::<f32>::new_sinc(rout as f64 / rin as f64, 1.0, &params, chunk, 1, FixedAsync::Input)
            .map(|r| Box::new(r) as Box<dyn Resampler<f32> + Send>)
            .map_err(|e| e.to_string())
    }
}

/// Resample a whole mono clip to 16 kHz. The output has `ceil(len * 16000 / rate_in)` samples, start-up delay
/// removed (the clip keeps its timing).
pub(crate) fn resample_clip(mono: &[f32], rate_in: u32) -> Result<Vec<f32>, String> {
    resample_clip_to(mono, rate_in, HERMES_RATE)
}

/// Resample a whole mono clip from `rate_in` to `rate_out`, as [`resample_clip`] does to 16 kHz.
pub(crate) fn resample_clip_to(mono: &[f32], rate_in: u32, rate_out: u32) -> Result<Vec<f32>, String> {
    if rate_in == rate_out {
        return Ok(mono.to_vec());
    }
    if mono.is_empty() {
        return Ok(Vec::new());
    }
    let mut r = new_resampler_to(rate_in, rate_out)?;
    let input = InterleavedSlice::new(mono, 1, mono.len()).map_err(|e| e.to_string())?;
    let out = r.process_all(&input, mono.len(), None).map_err(|e| e.to_string())?;
    Ok(out.take_data())
}

/// Streaming mono resampler to 16 kHz: feed blocks of any size, get 16 kHz samples as they are ready.
/// The resampler's start-up delay is trimmed so that the output lines up with the input in time, and
/// [`StreamResampler::finish`] flushes the tail so that the total length is `ceil(n_in * 16000 / rate_in)`.
pub struct StreamResampler {
    inner: Option<Box<dyn Resampler<f32> + Send>>,
    pending: Vec<f32>,
    out_buf: Vec<f32>,
    to_trim: usize,
    frames_in: u64,
    frames_out: u64,
    rate_in: u32,
}

impl std::fmt::Debug for StreamResampler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamResampler").field("rate_in", &self.rate_in).finish_non_exhaustive()
    }
}

impl StreamResampler {
    /// A streaming resampler from `rate_in` Hz (mono) to 16 kHz.
    pub fn new(rate_in: u32) -> Result<Self, String> {
        let inner = match rate_in {
            HERMES_RATE => None,
            _ => Some(new_resampler_chunk(rate_in, HERMES_RATE, stream_chunk(rate_in))?),
        };
        let (out_max, to_trim) = inner.as_ref().map(|r| (r.output_frames_max(), r.output_delay())).unwrap_or((0, 0));
        Ok(Self {
            inner,
            pending: Vec::with_capacity(CHUNK * 2),
            out_buf: vec![0.0; out_max],
            to_trim,
            frames_in: 0,
            frames_out: 0,
            rate_in,
        })
    }

    fn emit(&mut self, n: usize, out: &mut Vec<f32>) {
        let skip = self.to_trim.min(n);
        self.to_trim -= skip;
        out.extend_from_slice(&self.out_buf[skip..n]);
        self.frames_out += (n - skip) as u64;
    }

    /// Feed mono samples at the input rate; append ready 16 kHz samples to `out`.
    pub fn push(&mut self, input: &[f32], out: &mut Vec<f32>) -> Result<(), String> {
        self.frames_in += input.len() as u64;
        if self.inner.is_none() {
            out.extend_from_slice(input);
            self.frames_out += input.len() as u64;
            return Ok(());
        }
        self.pending.extend_from_slice(input);
        let mut consumed = 0;
        while let Some(r) = self.inner.as_mut() {
            let need = r.input_frames_next();
            if self.pending.len() - consumed < need {
                break;
            }
            let (nin, nout) = step(r.as_mut(), &self.pending[consumed..consumed + need], &mut self.out_buf, None)?;
            consumed += nin;
            self.emit(nout, out);
        }
        self.pending.drain(..consumed);
        Ok(())
    }

    /// Flush: process what is pending (zero-padded) and trim the output so that the total number of output
    /// samples is `ceil(frames_in * 16000 / rate_in)`.
    pub fn finish(mut self, out: &mut Vec<f32>) -> Result<(), String> {
        let expected = (self.frames_in * u64::from(HERMES_RATE)).div_ceil(u64::from(self.rate_in));
        let mut rounds = 0;
        while self.frames_out < expected {
            let Some(r) = self.inner.as_mut() else { break };
            let need = r.input_frames_next();
            let have = self.pending.len().min(need);
            self.pending.resize(need, 0.0);
            let idx = Indexing::new().partial_len(have);
            let (_, nout) = step(r.as_mut(), &self.pending, &mut self.out_buf, Some(&idx))?;
            self.pending.clear();
            self.emit(nout, out);
            rounds += 1;
            if rounds > 1000 {
                return Err("resampler did not flush".into());
            }
        }
        let extra = usize::try_from(self.frames_out.saturating_sub(expected)).unwrap_or(usize::MAX);
        out.truncate(out.len().saturating_sub(extra));
        Ok(())
    }
}

fn step(
    r: &mut (dyn Resampler<f32> + Send),
    input: &[f32],
    out_buf: &mut [f32],
    idx: Option<&Indexing>,
) -> Result<(usize, usize), String> {
    let inp = InterleavedSlice::new(input, 1, input.len()).map_err(|e| e.to_string())?;
    let olen = out_buf.len();
    let mut outp = InterleavedSlice::new_mut(out_buf, 1, olen).map_err(|e| e.to_string())?;
    r.process_into_buffer(&inp, &mut outp, idx).map_err(|e| e.to_string())
}
