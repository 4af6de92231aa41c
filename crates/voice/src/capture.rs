//! Microphone capture with `cpal`: any native format → mono → 16 kHz PCM16, with a level meter.
//!
//! The cpal stream lives on a worker thread of its own (cpal streams are not `Send` on every platform); the audio
//! callback only mixes to mono and hands the block over a channel. The worker resamples, meters, stores, and watches
//! for the device going away. [`Recording`] is `Send`, so the app can keep it in shared state.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cpal::traits::{DeviceTrait, StreamTrait};
use cpal::{FromSample, Sample, SampleFormat, SizedSample};

use crate::resample::{HERMES_RATE, StreamResampler};
use crate::wav::{encode_pcm16_mono_16k, f32_to_i16};

/// How long [`Recorder::start`] waits for the backend to open the device.
const START_TIMEOUT: Duration = Duration::from_secs(5);

pub use crate::clip::MAX_WAV_BYTES;
use crate::devices::find_device;
pub use crate::devices::{InputDevice, default_input_id, host_name, list_input_devices, playback_monitor};

/// Why recording failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CaptureError {
    /// The system has no input device (or no default one).
    #[error("no microphone found")]
    NoDevice,
    /// The named device does not exist (any more).
    #[error("microphone \"{0}\" not found")]
    DeviceNotFound(String),
    /// The device exists but could not be opened (busy, permission, unsupported format…).
    #[error("cannot open the microphone: {0}")]
    Open(String),
    /// The device went away or stopped delivering audio while recording.
    #[error("the microphone was disconnected or stopped working: {0}")]
    DeviceLost(String),
    /// Shorter than the minimum clip length: nothing to send.
    #[error("recording too short ({ms} ms; at least {min_ms} ms needed)")]
    TooShort {
        /// Recorded length.
        ms: u64,
        /// Minimum length.
        min_ms: u64,
    },
    /// Internal failure (resampler, worker thread).
    #[error("audio processing failed: {0}")]
    Internal(String),
}

/// What a running recording reports (on the worker thread; keep handlers short).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CaptureEvent {
    /// The stream is open; first audio may follow a moment later.
    Started {
        /// Device name.
        device: String,
        /// Native rate.
        sample_rate: u32,
        /// Native channel count.
        channels: u16,
    },
    /// Smoothed microphone level 0..1 (≈ 30 per second) for the UI and the avatar's `setVolume`.
    Level(f32),
    /// The recording reached [`RecorderConfig::max_wav_bytes`]: capture stopped, call [`Recording::stop`].
    Full,
    /// The device failed; [`Recording::stop`] will return this error.
    Error(CaptureError),
}

/// Recorder settings.
#[derive(Debug, Clone)]
pub struct RecorderConfig {
    /// Stop capturing when the WAV would exceed this size (A-24; default 8 MiB ≈ 4.4 min).
    pub max_wav_bytes: usize,
    /// Clips shorter than this are discarded with [`CaptureError::TooShort`] (default 300 ms).
    pub min_duration: Duration,
    /// Level meter period (default 33 ms ≈ 30 updates/s).
    pub level_interval: Duration,
    /// After audio has started, this long without any audio means the device is gone (default 3 s).
    pub stall_timeout: Duration,
    /// Keep the samples for [`Recording::stop`] (default true). Hands-free mode sets it to false: the samples only
    /// go to [`Recorder::on_samples`] (the VAD), memory stays flat and the size limit does not apply.
    pub keep_samples: bool,
}

impl Default for RecorderConfig {
    fn default() -> Self {
        Self {
            max_wav_bytes: MAX_WAV_BYTES,
            min_duration: Duration::from_millis(300),
            level_interval: Duration::from_millis(33),
            stall_timeout: Duration::from_secs(3),
            keep_samples: true,
        }
    }
}

type EventFn = Arc<dyn Fn(CaptureEvent) + Send + Sync>;
type SamplesFn = Arc<dyn Fn(&[i16]) + Send + Sync>;

/// Opens recordings. Cheap to clone; configure once, start many times.
#[derive(Clone, Default)]
pub struct Recorder {
    config: RecorderConfig,
    on_event: Option<EventFn>,
    on_samples: Option<SamplesFn>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").field("config", &self.config).finish_non_exhaustive()
    }
}

/// Control messages to the capture worker. Audio blocks travel on their own channel, which the worker drains every
/// [`AUDIO_TICK`] instead of waking for each block (a sound server may deliver one every few milliseconds).
enum Msg {
    StreamError(cpal::Error),
    Stop,
    Cancel,
}

#[derive(Default)]
struct Shared {
    samples: AtomicU64,
    full: AtomicBool,
    level_bits: AtomicU32,
    error: Mutex<Option<CaptureError>>,
}

/// A recording in progress. Dropping it cancels it.
pub struct Recording {
    tx: mpsc::Sender<Msg>,
    join: Option<JoinHandle<Result<Vec<i16>, CaptureError>>>,
    shared: Arc<Shared>,
    min_duration: Duration,
    device: String,
    device_id: String,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording").field("device", &self.device).field("secs", &self.duration_secs()).finish()
    }
}

impl Recorder {
    /// A recorder with default settings.
    pub fn new() -> Self {
        Self::default()
    }

    /// A recorder with the given settings.
    pub fn with_config(config: RecorderConfig) -> Self {
        Self { config, ..Self::default() }
    }

    /// Receive [`CaptureEvent`]s (levels, full, errors). Called on the capture worker thread.
    #[must_use]
    pub fn on_event(mut self, f: impl Fn(CaptureEvent) + Send + Sync + 'static) -> Self {
        self.on_event = Some(Arc::new(f));
        self
    }

    /// The event handler set by [`Recorder::on_event`] ([`crate::live`] wraps it).
    pub(crate) fn on_event_fn(&self) -> Option<EventFn> {
        self.on_event.clone()
    }

    /// Receive the 16 kHz mono samples as they are produced (e.g. for the VAD in hands-free mode).
    #[must_use]
    pub fn on_samples(mut self, f: impl Fn(&[i16]) + Send + Sync + 'static) -> Self {
        self.on_samples = Some(Arc::new(f));
        self
    }

    /// Start recording from the named device (name or id as in [`list_input_devices`]; a case-insensitive
    /// substring of the name also matches), or the system default when `None`.
    pub fn start(&self, device: Option<&str>) -> Result<Recording, CaptureError> {
        let (tx, rx) = mpsc::channel::<Msg>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(String, String), CaptureError>>();
        let shared = Arc::new(Shared::default());
        let worker = Worker {
            config: self.config.clone(),
            on_event: self.on_event.clone(),
            on_samples: self.on_samples.clone(),
            shared: shared.clone(),
        };
        let device_name = device.map(str::to_owned);
        let tx2 = tx.clone();
        let join = std::thread::Builder::new()
            .name("hermes-voice-capture".into())
            .spawn(move || worker.run(device_name.as_deref(), tx2, rx, ready_tx))
            .map_err(|e| CaptureError::Internal(e.to_string()))?;
        // Opening normally takes milliseconds; a sound server that accepts the connection but never answers must
        // not hang the app.
        match ready_rx.recv_timeout(START_TIMEOUT) {
            Ok(Ok((device, device_id))) => Ok(Recording {
                tx,
                join: Some(join),
                shared,
                min_duration: self.config.min_duration,
                device,
                device_id,
            }),
            Ok(Err(e)) => {
                let _ = join.join();
                Err(e)
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // The worker is stuck inside the audio backend: tell it to quit when it can, and leave it.
                let _ = tx.send(Msg::Cancel);
                Err(CaptureError::Open("the audio system did not respond".into()))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(match join.join() {
                Ok(Err(e)) => e,
                _ => CaptureError::Internal("capture thread ended unexpectedly".into()),
            }),
        }
    }
}

impl Recording {
    /// The device being recorded.
    pub fn device(&self) -> &str {
        &self.device
    }

    /// The backend's id of the device being recorded (`pulseaudio:…`, `alsa:…`), as [`default_input_id`] gives it.
    pub fn device_id(&self) -> &str {
        &self.device_id
    }

    /// Seconds of 16 kHz audio captured so far.
    pub fn duration_secs(&self) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        let n = self.shared.samples.load(Ordering::Relaxed) as f64;
        n / f64::from(HERMES_RATE)
    }

    /// The latest smoothed level 0..1.
    pub fn level(&self) -> f32 {
        f32::from_bits(self.shared.level_bits.load(Ordering::Relaxed))
    }

    /// True once the size limit is reached (capture has stopped; call [`Recording::stop`]).
    pub fn is_full(&self) -> bool {
        self.shared.full.load(Ordering::Relaxed)
    }

    /// The device error, if the device failed.
    pub fn error(&self) -> Option<CaptureError> {
        self.shared.error.lock().ok().and_then(|e| e.clone())
    }

    /// Stop and return the 16 kHz mono PCM16 samples.
    pub fn stop_samples(mut self) -> Result<Vec<i16>, CaptureError> {
        let _ = self.tx.send(Msg::Stop);
        let join = self.join.take().ok_or_else(|| CaptureError::Internal("already stopped".into()))?;
        let samples = join.join().map_err(|_| CaptureError::Internal("capture thread panicked".into()))??;
        let ms = samples.len() as u64 * 1000 / u64::from(HERMES_RATE);
        let min_ms = u64::try_from(self.min_duration.as_millis()).unwrap_or(u64::MAX);
        if ms < min_ms {
            return Err(CaptureError::TooShort { ms, min_ms });
        }
        Ok(samples)
    }

    /// Stop and return the recording as a 16 kHz mono PCM16 WAV, at most `max_wav_bytes` long.
    pub fn stop(self) -> Result<Vec<u8>, CaptureError> {
        self.stop_samples().map(|s| encode_pcm16_mono_16k(&s))
    }

    /// Stop and discard.
    pub fn cancel(mut self) {
        self.cancel_inner();
    }

    fn cancel_inner(&mut self) {
        let _ = self.tx.send(Msg::Cancel);
        if let Some(j) = self.join.take() {
            let _ = j.join();
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if self.join.is_some() {
            self.cancel_inner();
        }
    }
}

struct Worker {
    config: RecorderConfig,
    on_event: Option<EventFn>,
    on_samples: Option<SamplesFn>,
    shared: Arc<Shared>,
}

/// How often the worker takes the audio delivered since its last turn. Control messages (stop, cancel, a device
/// error) wake it at once.
const AUDIO_TICK: Duration = Duration::from_millis(20);

fn build_stream<T>(
    device: &cpal::Device,
    config: &cpal::StreamConfig,
    audio: mpsc::Sender<Vec<f32>>,
    tx: mpsc::Sender<Msg>,
) -> Result<cpal::Stream, cpal::Error>
where
    T: SizedSample,
    f32: FromSample<T>,
{
    let ch = usize::from(config.channels.max(1));
    let inv = 1.0 / ch as f32;
    device.build_input_stream::<T, _, _>(
        *config,
        move |data: &[T], _: &cpal::InputCallbackInfo| {
            let mono: Vec<f32> = if ch == 1 {
                data.iter().map(|&s| f32::from_sample(s)).collect()
            } else {
                data.chunks_exact(ch).map(|f| f.iter().map(|&s| f32::from_sample(s)).sum::<f32>() * inv).collect()
            };
            // (a send wakes nobody: the worker never blocks on this channel)
            let _ = audio.send(mono);
        },
        move |err: cpal::Error| {
            let _ = tx.send(Msg::StreamError(err));
        },
        None,
    )
}

fn open_stream(
    device: &cpal::Device,
    host_id: cpal::HostId,
    audio: &mpsc::Sender<Vec<f32>>,
    tx: &mpsc::Sender<Msg>,
) -> Result<(cpal::Stream, u32, u16), CaptureError> {
    let supported = device.default_input_config().map_err(|e| CaptureError::Open(e.to_string()))?;
    let format = supported.sample_format();
    let range = *supported.buffer_size();
    let mut config: cpal::StreamConfig = supported.into();
    // PulseAudio's default record fragment is large (audio arrived in ~1-2 s lumps and the tail was lost at stop):
    // ask for 20 ms fragments. ALSA keeps the backend default.
    #[cfg(target_os = "linux")]
    if host_id == cpal::HostId::PulseAudio
        && let cpal::SupportedBufferSize::Range { min, max } = range
    {
        config.buffer_size = cpal::BufferSize::Fixed((config.sample_rate / 50).clamp(min, max));
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (range, host_id);
    let (audio, tx) = (audio.clone(), tx.clone());
    let stream = match format {
        SampleFormat::I8 => build_stream::<i8>(device, &config, audio, tx),
        SampleFormat::I16 => build_stream::<i16>(device, &config, audio, tx),
        SampleFormat::I24 => build_stream::<cpal::I24>(device, &config, audio, tx),
        SampleFormat::I32 => build_stream::<i32>(device, &config, audio, tx),
        SampleFormat::U8 => build_stream::<u8>(device, &config, audio, tx),
        SampleFormat::U16 => build_stream::<u16>(device, &config, audio, tx),
        SampleFormat::U32 => build_stream::<u32>(device, &config, audio, tx),
        SampleFormat::F32 => build_stream::<f32>(device, &config, audio, tx),
        SampleFormat::F64 => build_stream::<f64>(device, &config, audio, tx),
        other => return Err(CaptureError::Open(format!("unsupported sample format {other}"))),
    }
    .map_err(|e| CaptureError::Open(e.to_string()))?;
    stream.play().map_err(|e| CaptureError::Open(e.to_string()))?;
    Ok((stream, config.sample_rate, config.channels))
}

/// Close a stream without risking a hang: dropping a cpal ALSA stream joins its thread, which can block forever
/// inside the PulseAudio ALSA plugin once the sound server has died. Drop it on a helper thread and wait at most
/// `wait`; if it does not finish, leave that thread behind rather than hang the app.
fn release(stream: Option<cpal::Stream>, wait: Duration) {
    let Some(stream) = stream else { return };
    let (tx, rx) = mpsc::channel::<()>();
    let spawned = std::thread::Builder::new().name("hermes-voice-close".into()).spawn(move || {
        drop(stream);
        let _ = tx.send(());
    });
    if spawned.is_ok() {
        let _ = rx.recv_timeout(wait);
    }
}

/// Map RMS to a 0..1 meter value: −60 dBFS → 0, −12 dBFS → 1, linear in dB.
pub fn level_from_rms(rms: f32) -> f32 {
    if rms <= 1e-6 {
        return 0.0;
    }
    let db = 20.0 * rms.log10();
    ((db + 60.0) / 48.0).clamp(0.0, 1.0)
}

struct Meter {
    period: usize,
    acc: f64,
    n: usize,
    level: f32,
}

impl Meter {
    /// Returns a new smoothed level each time a full period has been seen.
    fn push(&mut self, s: f32) -> Option<f32> {
        self.acc += f64::from(s) * f64::from(s);
        self.n += 1;
        if self.n < self.period {
            return None;
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
        let rms = (self.acc / self.n as f64).sqrt() as f32;
        self.acc = 0.0;
        self.n = 0;
        let target = level_from_rms(rms);
        // Fast attack, slower release: the meter jumps up with speech and falls back smoothly.
        let k = if target > self.level { 0.6 } else { 0.25 };
        self.level += k * (target - self.level);
        Some(self.level)
    }
}

impl Worker {
    fn emit(&self, e: CaptureEvent) {
        if let Some(f) = &self.on_event {
            f(e);
        }
    }

    fn fail(&self, e: CaptureError) {
        if let Ok(mut g) = self.shared.error.lock() {
            g.get_or_insert(e.clone());
        }
        self.emit(CaptureEvent::Error(e));
    }

    fn run(
        self,
        device: Option<&str>,
        tx: mpsc::Sender<Msg>,
        rx: mpsc::Receiver<Msg>,
        ready: mpsc::Sender<Result<(String, String), CaptureError>>,
    ) -> Result<Vec<i16>, CaptureError> {
        let (audio_tx, audio) = mpsc::channel::<Vec<f32>>();
        let opened = find_device(device).and_then(|(d, host_id)| {
            let name = d.description().map(|x| x.name().to_string()).unwrap_or_else(|_| "microphone".into());
            let id = d.id().map(|i| i.to_string()).unwrap_or_default();
            open_stream(&d, host_id, &audio_tx, &tx).map(|(s, rate, ch)| (s, rate, ch, name, id))
        });
        drop((tx, audio_tx));
        let (stream, rate, channels, name, id) = match opened {
            Ok(x) => x,
            Err(e) => {
                let _ = ready.send(Err(e.clone()));
                return Err(e);
            }
        };
        let mut resampler = StreamResampler::new(rate).map_err(CaptureError::Internal)?;
        let _ = ready.send(Ok((name.clone(), id)));
        self.emit(CaptureEvent::Started { device: name, sample_rate: rate, channels });

        let max_samples = self.config.max_wav_bytes.saturating_sub(44) / 2;
        let period = usize::try_from(self.config.level_interval.as_millis() * 16).unwrap_or(528).max(16);
        let mut meter = Meter { period, acc: 0.0, n: 0, level: 0.0 };
        let mut stream = Some(stream);
        let mut pcm: Vec<i16> = Vec::with_capacity(HERMES_RATE as usize * 30);
        let mut out_f = Vec::with_capacity(4096);
        let mut last_audio: Option<Instant> = None;
        let mut finished = false; // full or failed: no more capture
        loop {
            let msg = match rx.recv_timeout(AUDIO_TICK) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => Some(Msg::Cancel),
            };
            // The blocks delivered since the last turn come before whatever the message says.
            let mut got = false;
            for block in audio.try_iter() {
                got = true;
                if finished {
                    continue;
                }
                self.feed(&mut out_f, |o| resampler.push(&block, o), &mut pcm, &mut meter, max_samples)?;
                if pcm.len() >= max_samples {
                    release(stream.take(), Duration::from_millis(500));
                    finished = true;
                    self.shared.full.store(true, Ordering::Relaxed);
                    self.emit(CaptureEvent::Full);
                }
            }
            if got {
                last_audio = Some(Instant::now());
            }
            let Some(msg) = msg else {
                if !finished && last_audio.is_some_and(|t| t.elapsed() > self.config.stall_timeout) {
                    finished = true;
                    self.fail(CaptureError::DeviceLost("no audio from the device".into()));
                    release(stream.take(), Duration::ZERO);
                }
                continue;
            };
            match msg {
                Msg::StreamError(e) => {
                    use cpal::ErrorKind as K;
                    match e.kind() {
                        K::Xrun | K::DeviceChanged | K::RealtimeDenied => {}
                        _ if !finished => {
                            finished = true;
                            self.fail(CaptureError::DeviceLost(e.to_string()));
                            release(stream.take(), Duration::ZERO);
                        }
                        _ => {}
                    }
                }
                Msg::Cancel => {
                    release(stream.take(), Duration::from_millis(500));
                    return Ok(Vec::new());
                }
                Msg::Stop => {
                    let failed = self.shared.error.lock().ok().and_then(|g| g.clone());
                    if let Some(e) = failed {
                        return Err(e);
                    }
                    release(stream.take(), Duration::from_millis(500));
                    if !finished {
                        // Blocks already delivered before the stream was closed.
                        for block in audio.try_iter() {
                            self.feed(&mut out_f, |o| resampler.push(&block, o), &mut pcm, &mut meter, max_samples)?;
                        }
                        self.feed(&mut out_f, |o| resampler.finish(o), &mut pcm, &mut meter, max_samples)?;
                    }
                    self.emit(CaptureEvent::Level(0.0));
                    return Ok(pcm);
                }
            }
        }
    }

    /// Fill `out` with `produce` (resample a block, or flush the resampler's tail) and keep what came out.
    fn feed(
        &self,
        out: &mut Vec<f32>,
        produce: impl FnOnce(&mut Vec<f32>) -> Result<(), String>,
        pcm: &mut Vec<i16>,
        meter: &mut Meter,
        max_samples: usize,
    ) -> Result<(), CaptureError> {
        out.clear();
        produce(out).map_err(CaptureError::Internal)?;
        self.take(out, pcm, meter, max_samples);
        Ok(())
    }

    fn take(&self, block: &[f32], pcm: &mut Vec<i16>, meter: &mut Meter, max_samples: usize) {
        let room = max_samples.saturating_sub(pcm.len());
        let start = pcm.len();
        for &x in block.iter().take(room) {
            pcm.push(f32_to_i16(x));
            if let Some(l) = meter.push(x) {
                self.shared.level_bits.store(l.to_bits(), Ordering::Relaxed);
                self.emit(CaptureEvent::Level(l));
            }
        }
        let before = if self.config.keep_samples { 0 } else { self.shared.samples.load(Ordering::Relaxed) };
        self.shared.samples.store(before + pcm.len() as u64, Ordering::Relaxed);
        if let Some(f) = &self.on_samples
            && pcm.len() > start
        {
            f(&pcm[start..]);
        }
        if !self.config.keep_samples {
            pcm.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_mapping() {
        assert_eq!(level_from_rms(0.0), 0.0);
        assert_eq!(level_from_rms(1e-4), 0.0); // -80 dB
        assert!((level_from_rms(0.25) - 1.0).abs() < 0.01); // -12 dB
        let mid = level_from_rms(0.01); // -40 dB
        assert!((mid - 20.0 / 48.0).abs() < 1e-3);
    }

    #[test]
    fn meter_smooths_and_rate() {
        let mut m = Meter { period: 528, acc: 0.0, n: 0, level: 0.0 };
        let mut levels = Vec::new();
        for i in 0..16_000 {
            let x = if i < 8000 { 0.3 * ((i as f32) * 0.1).sin() } else { 0.0 };
            if let Some(l) = m.push(x) {
                levels.push(l);
            }
        }
        assert_eq!(levels.len(), 30); // ≈ 30 updates per second
        assert!(levels[2] > 0.8 && levels[14] > 0.9);
        // decays smoothly, not instantly
        assert!(levels[16] > 0.1 && levels[16] < levels[14]);
        assert!(levels[29] < 0.05);
    }
}
