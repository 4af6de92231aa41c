//! Read-aloud played by the app itself: synthesised sentences go out through an output stream of our own, and
//! whatever the stream plays (silence included) is handed, at 16 kHz, to a reference sink — hands-free's echo
//! canceller — *before* the speakers play it. Compared with recording the output's monitor, the canceller gets its
//! reference with no recording at all (the monitor of a sink with speech-dispatcher's 2 ms stream on it posts
//! ~2,000 blocks a second), earlier than the echo by the output's own latency rather than after it, and stopping
//! is ours: the queue is dropped and the stream plays silence from its next period (≤ 40 ms of buffer).
//!
//! The stream lives on the thread that made the [`Player`] (a `cpal::Stream` is not `Send` everywhere); the audio
//! callback and the other threads meet in a [`PlayQueue`].

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};

use crate::resample::HERMES_RATE;

/// The stream's rate: eSpeak NG's own, so its voices are played as they are made.
pub const PLAY_RATE: u32 = 22_050;
/// One period of the output stream (20 ms); PulseAudio holds two.
const PERIOD: u32 = PLAY_RATE / 50;

/// What the audio callback tells the owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlayerEvent {
    /// The first sound of what was queued went out.
    Started,
    /// The queue ran dry and nothing more is expected.
    Ended,
    /// The output stream failed (its device went away); the owner drops it and opens a new one when needed.
    Failed,
}

/// Where the 16 kHz reference of what is played goes (the echo canceller's `render`).
pub type ReferenceSink = Box<dyn FnMut(&[i16]) + Send>;

struct Chunk {
    play: Vec<i16>,
    reference: Vec<i16>,
    pos: usize,
    ref_pos: usize,
}

struct State {
    queue: VecDeque<Chunk>,
    /// Sentences being synthesised for the present batch: the batch has not ended while any is.
    expecting: usize,
    /// Bumped by [`PlayQueue::stop`]: audio made for an older batch is dropped when it arrives.
    generation: u64,
    playing: bool,
    reference: Option<ReferenceSink>,
    /// Silence played, in samples × 16 000, not yet handed to the reference as 16 kHz zeros.
    silence_acc: u64,
    scratch: Vec<i16>,
    /// When the audio callback last ran, and for how many samples: a callback that comes later than the sound
    /// server's buffer lasts means the speakers played silence meanwhile (an underrun), which the reference must hold
    /// too, or the echo would come later than the canceller expects from then on.
    last_fill: Option<Instant>,
    /// How long the server's buffer lasts after a callback (two periods), where the stream's periods are ours.
    buffered: Option<Duration>,
    /// Underruns seen, and the silence they put into the reference.
    underruns: u64,
    underrun_ms: u64,
    /// The sound server's own count of the silence it put into the stream's timeline (frames at [`PLAY_RATE`]), where
    /// it keeps one (PulseAudio): then underruns are taken from it rather than from the callbacks' timing.
    server_silence: Option<SilenceSource>,
    /// How much of the server's count the reference holds already.
    silence_applied: i64,
    /// Reference samples (16 kHz) the next callbacks keep back: what the server dropped at a flush had already been
    /// handed to the canceller, and the speakers' timeline is that much behind the reference's.
    ref_skip: usize,
}

/// Reads the sound server's count of the silence it put into a stream (frames at [`PLAY_RATE`]; it never goes down).
pub type SilenceSource = Box<dyn Fn() -> i64 + Send>;

/// The least change of the server's silence count the reference follows (3 ms): its figure wanders by a fraction of
/// a millisecond between timing replies.
const SILENCE_STEP: i64 = PLAY_RATE as i64 * 3 / 1000;

/// The queue the audio callback plays from, shared with the threads that fill and stop it.
#[derive(Clone)]
pub struct PlayQueue(Arc<Mutex<State>>);

impl std::fmt::Debug for PlayQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlayQueue").finish_non_exhaustive()
    }
}

impl Default for PlayQueue {
    fn default() -> Self {
        PlayQueue(Arc::new(Mutex::new(State {
            queue: VecDeque::new(),
            expecting: 0,
            generation: 0,
            playing: false,
            reference: None,
            silence_acc: 0,
            scratch: Vec::with_capacity(1024),
            last_fill: None,
            buffered: None,
            underruns: 0,
            underrun_ms: 0,
            server_silence: None,
            silence_applied: 0,
            ref_skip: 0,
        })))
    }
}

impl PlayQueue {
    /// `n` sentences are on their way (to [`PlayQueue::push`]); returns the batch's generation.
    pub fn expect(&self, n: usize) -> u64 {
        let Ok(mut s) = self.0.lock() else { return u64::MAX };
        s.expecting += n;
        s.generation
    }

    /// A synthesised sentence (mono PCM16 at `rate`) of batch `generation`; dropped if the batch was stopped.
    /// `None`: the sentence could not be made (it is no longer expected).
    pub fn push(&self, generation: u64, pcm: Option<(Vec<i16>, u32)>) {
        // resampled outside the lock: the audio callback takes it every period
        let chunk = pcm.and_then(|(samples, rate)| chunk(samples, rate));
        let Ok(mut s) = self.0.lock() else { return };
        if s.generation != generation {
            return;
        }
        s.expecting = s.expecting.saturating_sub(1);
        if let Some(c) = chunk {
            s.queue.push_back(c);
        }
    }

    /// Is this batch still wanted (not stopped since)?
    pub fn is_current(&self, generation: u64) -> bool {
        self.0.lock().is_ok_and(|s| s.generation == generation)
    }

    /// Drop everything queued and expected. Returns whether anything was playing or on its way.
    pub fn stop(&self) -> bool {
        let Ok(mut s) = self.0.lock() else { return false };
        let was = s.playing || s.expecting > 0 || !s.queue.is_empty();
        s.queue.clear();
        s.expecting = 0;
        s.generation += 1;
        s.playing = false;
        was
    }

    /// Nothing playing, queued or expected.
    pub fn is_idle(&self) -> bool {
        self.0.lock().is_ok_and(|s| !s.playing && s.expecting == 0 && s.queue.is_empty())
    }

    /// Hand what is played to `sink` from now on (`None`: to nobody).
    pub fn set_reference(&self, sink: Option<ReferenceSink>) {
        if let Ok(mut s) = self.0.lock() {
            s.reference = sink;
            s.silence_acc = 0;
        }
    }

    /// A new output stream plays the queue: its first callback is no underrun. `buffered`: how long the server's
    /// buffer lasts after a callback, where it is known (a fixed period); else underruns are not looked for.
    fn restart_clock(&self, buffered: Option<Duration>) {
        if let Ok(mut s) = self.0.lock() {
            s.last_fill = None;
            s.buffered = buffered;
            s.server_silence = None;
        }
    }

    /// The output stream's server counts the silence it put in (`source`): the reference follows that count from now
    /// on, in steps of at least 3 ms (an underrun, the wait to refill after a flush).
    fn follow_server_silence(&self, source: SilenceSource) {
        if let Ok(mut s) = self.0.lock() {
            s.silence_applied = source();
            s.server_silence = Some(source);
        }
    }

    /// The sound server dropped what it held ([`Player::flush`]): that audio is in the reference but was never
    /// played, so the reference keeps back as much of what comes next (the silence after a stop). `dropped`: the
    /// frames the server says it dropped (at [`PLAY_RATE`]); where it did not say, what it held is reckoned from the
    /// last callback, which filled its buffer: what is left of it now. Without this each barge-in moved the echo
    /// 20–40 ms earlier against its reference, until after a few the echo came before it and could not be cancelled
    /// (bench/README.md).
    pub fn flushed(&self, dropped: Option<u64>) {
        self.flushed_at(dropped, Instant::now());
    }

    fn flushed_at(&self, dropped: Option<u64>, now: Instant) {
        let Ok(mut s) = self.0.lock() else { return };
        let estimate = match (s.last_fill, s.buffered) {
            (Some(at), Some(buffered)) => {
                let held = buffered.saturating_sub(now.saturating_duration_since(at));
                Some((held.as_secs_f64() * f64::from(HERMES_RATE)).round() as usize)
            }
            _ => None,
        };
        let told = dropped.map(|f| (f * u64::from(HERMES_RATE) + u64::from(PLAY_RATE) / 2) / u64::from(PLAY_RATE));
        let skip = told.map(|t| t as usize).or(estimate).unwrap_or(0);
        tracing::debug!(
            told_ms = told.map(|t| t / 16),
            estimate_ms = estimate.map(|e| e / 16),
            "read-aloud flushed: the reference keeps back {} ms",
            skip / 16
        );
        s.ref_skip += skip;
    }

    /// The underruns so far (the speakers went silent because a callback came late) and the silence they cost, in ms.
    pub fn underruns(&self) -> (u64, u64) {
        self.0.lock().map_or((0, 0), |s| (s.underruns, s.underrun_ms))
    }

    pub fn has_reference(&self) -> bool {
        self.0.lock().is_ok_and(|s| s.reference.is_some())
    }

    /// The audio callback: fill `out` (mono at [`PLAY_RATE`]) and hand its reference on. Returns what changed.
    pub fn fill(&self, out: &mut [i16]) -> Option<PlayerEvent> {
        self.fill_at(out, Instant::now())
    }

    fn fill_at(&self, out: &mut [i16], now: Instant) -> Option<PlayerEvent> {
        let Ok(mut guard) = self.0.lock() else {
            out.fill(0);
            return None;
        };
        let s = &mut *guard;
        s.scratch.clear();
        let last_fill = s.last_fill.replace(now);
        if let Some(count) = s.server_silence.as_ref().map(|f| f()) {
            // the server says how much silence the speakers played that was not ours (underruns)
            let delta = count - s.silence_applied;
            if delta >= SILENCE_STEP {
                s.silence_applied = count;
                s.underruns += 1;
                s.underrun_ms += delta as u64 * 1000 / u64::from(PLAY_RATE);
                s.scratch.resize((delta as u64 * u64::from(HERMES_RATE) / u64::from(PLAY_RATE)) as usize, 0);
            }
        } else if let (Some(at), Some(buffered)) = (last_fill, s.buffered) {
            // the server holds two periods: a callback later than that found the speakers silent for the rest
            let gap = now.saturating_duration_since(at).saturating_sub(buffered);
            if gap >= Duration::from_millis(5) {
                s.underruns += 1;
                s.underrun_ms += gap.as_millis() as u64;
                let zeros = (gap.as_secs_f64() * f64::from(HERMES_RATE)) as usize;
                s.scratch.resize(zeros, 0);
            }
        }
        let mut event = None;
        let mut i = 0;
        while i < out.len() {
            if let Some(c) = s.queue.front_mut() {
                let take = (out.len() - i).min(c.play.len() - c.pos);
                out[i..i + take].copy_from_slice(&c.play[c.pos..c.pos + take]);
                c.pos += take;
                i += take;
                let to = (c.reference.len() as u64 * c.pos as u64 / c.play.len().max(1) as u64) as usize;
                s.scratch.extend_from_slice(&c.reference[c.ref_pos..to]);
                c.ref_pos = to;
                if !s.playing {
                    s.playing = true;
                    event = Some(PlayerEvent::Started);
                }
                if c.pos >= c.play.len() {
                    s.queue.pop_front();
                }
            } else {
                let silent = out.len() - i;
                out[i..].fill(0);
                i = out.len();
                s.silence_acc += silent as u64 * u64::from(HERMES_RATE);
                let zeros = (s.silence_acc / u64::from(PLAY_RATE)) as usize;
                s.silence_acc %= u64::from(PLAY_RATE);
                s.scratch.resize(s.scratch.len() + zeros, 0);
                if s.playing && s.expecting == 0 {
                    s.playing = false;
                    event = Some(PlayerEvent::Ended);
                }
            }
        }
        let skip = s.ref_skip.min(s.scratch.len());
        s.scratch.drain(..skip);
        s.ref_skip -= skip;
        if let Some(r) = s.reference.as_mut() {
            r(&s.scratch);
        }
        event
    }
}

/// A sentence ready to play: at the stream's rate, with its 16 kHz reference.
fn chunk(samples: Vec<i16>, rate: u32) -> Option<Chunk> {
    if samples.is_empty() {
        return None;
    }
    let f: Vec<f32> = samples.iter().map(|&s| f32::from(s) / 32768.0).collect();
    let play = if rate == PLAY_RATE {
        samples
    } else {
        let r = crate::resample::resample_clip_to(&f, rate, PLAY_RATE).ok()?;
        r.into_iter().map(crate::wav::f32_to_i16).collect()
    };
    let reference = crate::resample::resample_clip_to(&f, rate, HERMES_RATE).ok()?;
    let reference = reference.into_iter().map(crate::wav::f32_to_i16).collect();
    Some(Chunk { play, reference, pos: 0, ref_pos: 0 })
}

/// The output stream that plays a [`PlayQueue`]. Not `Send`: it stays on the thread that opened it.
pub struct Player {
    _stream: cpal::Stream,
}

impl std::fmt::Debug for Player {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Player").finish_non_exhaustive()
    }
}

impl Player {
    /// Silence now: what the sound server still holds of the stream (up to two periods) is dropped, where the host
    /// lets us (PulseAudio); call it after [`PlayQueue::stop`], and hand what it returns to [`PlayQueue::flushed`]:
    /// the frames dropped, where the server told.
    pub fn flush(&self) -> Option<u64> {
        #[cfg(target_os = "linux")]
        #[allow(irrefutable_let_patterns)]
        if let cpal::platform::StreamInner::PulseAudio(s) = self._stream.as_inner() {
            return s.flush().ok().flatten();
        }
        None
    }

    /// Open the default output and start playing `queue` (silence while it is empty). `on_event` is called from the
    /// audio callback: keep it short.
    pub fn open(queue: PlayQueue, on_event: impl Fn(PlayerEvent) + Send + Sync + 'static) -> Result<Self, String> {
        let host = crate::devices::shared_host();
        let device = host.default_output_device().ok_or("no audio output")?;
        let on_event = Arc::new(on_event);
        let mut last_err = String::new();
        // a period of 20 ms, as the PulseAudio host honours; else what the device likes
        for size in [cpal::BufferSize::Fixed(PERIOD), cpal::BufferSize::Default] {
            let config = cpal::StreamConfig { channels: 1, sample_rate: PLAY_RATE, buffer_size: size };
            let buffered = matches!(size, cpal::BufferSize::Fixed(_))
                .then(|| Duration::from_secs_f64(2.0 * f64::from(PERIOD) / f64::from(PLAY_RATE)));
            queue.restart_clock(buffered);
            let (q, ev, ev2) = (queue.clone(), on_event.clone(), on_event.clone());
            let built = device.build_output_stream::<i16, _, _>(
                config,
                move |data: &mut [i16], _: &cpal::OutputCallbackInfo| {
                    if let Some(e) = q.fill(data) {
                        ev(e);
                    }
                },
                move |err: cpal::Error| {
                    // an xrun is heard and over (and counted by `fill`); the stream itself goes on
                    use cpal::ErrorKind as K;
                    if !matches!(err.kind(), K::Xrun | K::DeviceChanged | K::RealtimeDenied) {
                        ev2(PlayerEvent::Failed);
                    }
                },
                None,
            );
            match built {
                Ok(stream) => {
                    #[cfg(target_os = "linux")]
                    #[allow(irrefutable_let_patterns)]
                    if let cpal::platform::StreamInner::PulseAudio(s) = stream.as_inner() {
                        let count = s.inserted_silence();
                        queue.follow_server_silence(Box::new(move || count.load(std::sync::atomic::Ordering::Relaxed)));
                    }
                    stream.play().map_err(|e| e.to_string())?;
                    return Ok(Player { _stream: stream });
                }
                Err(e) => last_err = e.to_string(),
            }
        }
        Err(last_err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(n: usize) -> Vec<i16> {
        (0..n).map(|i| ((i as f32 * 0.2).sin() * 10_000.0) as i16).collect()
    }

    fn recorded() -> (PlayQueue, Arc<Mutex<Vec<i16>>>) {
        let q = PlayQueue::default();
        let got = Arc::new(Mutex::new(Vec::new()));
        let g = got.clone();
        q.set_reference(Some(Box::new(move |b: &[i16]| g.lock().unwrap().extend_from_slice(b))));
        (q, got)
    }

    #[test]
    fn what_is_played_goes_to_the_reference_at_16_khz_in_step() {
        let (q, got) = recorded();
        let batch = q.expect(1);
        q.push(batch, Some((tone(22_050), PLAY_RATE)));
        let mut out = vec![0i16; 441];
        let mut played = Vec::new();
        let mut events = Vec::new();
        // 1.5 s of periods: 1 s of the sentence, then silence
        for _ in 0..75 {
            if let Some(e) = q.fill(&mut out) {
                events.push(e);
            }
            played.extend_from_slice(&out);
        }
        assert_eq!(events, [PlayerEvent::Started, PlayerEvent::Ended]);
        assert_eq!(&played[..22_050], &tone(22_050)[..]);
        assert!(played[22_050..].iter().all(|&s| s == 0));
        let r = got.lock().unwrap();
        // 1.5 s at 16 kHz, give or take a sample of rounding
        assert!(r.len().abs_diff(24_000) <= 2, "{}", r.len());
        // the sentence's reference is loud through its second, and silence after it
        let loud = |s: &[i16]| s.iter().map(|&x| i32::from(x).abs()).max().unwrap_or(0);
        assert!(loud(&r[8_000..15_900]) > 5_000);
        assert_eq!(loud(&r[16_010..]), 0);
    }

    #[test]
    fn a_late_callback_puts_the_silence_the_speakers_played_into_the_reference() {
        let (q, got) = recorded();
        let (mut out, t0) = (vec![0i16; 441], Instant::now());
        q.restart_clock(Some(Duration::from_millis(40)));
        // 20 ms periods on time: nothing but the periods themselves
        for i in 0..10 {
            q.fill_at(&mut out, t0 + Duration::from_millis(20 * i));
        }
        assert_eq!(got.lock().unwrap().len(), 3200);
        assert_eq!(q.underruns(), (0, 0));
        // the next one 100 ms after the last: the two buffered periods lasted 40 ms, the speakers were silent 60 ms
        q.fill_at(&mut out, t0 + Duration::from_millis(280));
        assert_eq!(got.lock().unwrap().len(), 3200 + 960 + 320);
        assert_eq!(q.underruns(), (1, 60));
        // a new stream starts afresh
        q.restart_clock(Some(Duration::from_millis(40)));
        q.fill_at(&mut out, t0 + Duration::from_secs(5));
        assert_eq!(q.underruns().0, 1);
        // where the buffer is the device's own, a late callback is not taken for an underrun
        q.restart_clock(None);
        q.fill_at(&mut out, t0 + Duration::from_secs(6));
        q.fill_at(&mut out, t0 + Duration::from_secs(7));
        assert_eq!(q.underruns().0, 1);
    }

    #[test]
    fn the_servers_count_of_silence_goes_into_the_reference_in_place_of_the_callbacks_timing() {
        use std::sync::atomic::{AtomicI64, Ordering};
        let (q, got) = recorded();
        let count = Arc::new(AtomicI64::new(5));
        let c = count.clone();
        q.restart_clock(Some(Duration::from_millis(40)));
        q.follow_server_silence(Box::new(move || c.load(Ordering::Relaxed)));
        let (mut out, t0) = (vec![0i16; 441], Instant::now());
        let len = || got.lock().unwrap().len();
        q.fill_at(&mut out, t0);
        // a late callback is no underrun where the server says the speakers had enough
        q.fill_at(&mut out, t0 + Duration::from_millis(200));
        assert_eq!((len(), q.underruns()), (640, (0, 0)));
        // the server counts 60 ms (1,323 frames) of silence: 960 samples of it go in before the period
        count.store(5 + 1323, Ordering::Relaxed);
        q.fill_at(&mut out, t0 + Duration::from_millis(220));
        assert_eq!((len(), q.underruns()), (640 + 960 + 320, (1, 60)));
        // 2 ms more: under the step, the count wanders that much between replies
        count.store(5 + 1323 + 44, Ordering::Relaxed);
        q.fill_at(&mut out, t0 + Duration::from_millis(240));
        assert_eq!(len(), 640 + 960 + 640);
        // …and 2 ms more: 4 ms since the last step, which go in
        count.store(5 + 1323 + 88, Ordering::Relaxed);
        q.fill_at(&mut out, t0 + Duration::from_millis(260));
        assert_eq!((len(), q.underruns()), (640 + 960 + 640 + 63 + 320, (2, 63)));
        // a new stream: the callbacks' timing again until its server's count is followed
        q.restart_clock(Some(Duration::from_millis(40)));
        q.fill_at(&mut out, t0 + Duration::from_millis(300));
        q.fill_at(&mut out, t0 + Duration::from_millis(400));
        assert_eq!(q.underruns(), (3, 123));
    }

    #[test]
    fn what_a_flush_dropped_is_kept_back_from_the_reference() {
        let (q, got) = recorded();
        let (mut out, t0) = (vec![0i16; 441], Instant::now());
        q.restart_clock(Some(Duration::from_millis(40)));
        for i in 0..5 {
            q.fill_at(&mut out, t0 + Duration::from_millis(20 * i));
        }
        assert_eq!(got.lock().unwrap().len(), 1600);
        // flushed 10 ms after the last callback filled the buffer: 30 ms of it (480 samples) never played
        q.flushed_at(None, t0 + Duration::from_millis(90));
        q.fill_at(&mut out, t0 + Duration::from_millis(100));
        assert_eq!(got.lock().unwrap().len(), 1600, "the first period after it is kept back whole");
        q.fill_at(&mut out, t0 + Duration::from_millis(120));
        assert_eq!(got.lock().unwrap().len(), 1600 + 320 - 160);
        q.fill_at(&mut out, t0 + Duration::from_millis(140));
        assert_eq!(got.lock().unwrap().len(), 1600 + 640 - 160, "and no more");
        // where the buffer is the device's own, nothing is known and nothing kept back
        q.restart_clock(None);
        q.fill_at(&mut out, t0 + Duration::from_millis(160));
        q.flushed_at(None, t0 + Duration::from_millis(161));
        q.fill_at(&mut out, t0 + Duration::from_millis(180));
        assert_eq!(got.lock().unwrap().len(), 1600 + 1280 - 160);
        // what the server says it dropped wins over the reckoning: 661 frames at 22.05 kHz (30 ms) → 480 samples
        q.restart_clock(Some(Duration::from_millis(40)));
        q.fill_at(&mut out, t0 + Duration::from_millis(200));
        q.flushed_at(Some(661), t0 + Duration::from_millis(201));
        for i in 0..3 {
            q.fill_at(&mut out, t0 + Duration::from_millis(220 + 20 * i));
        }
        assert_eq!(got.lock().unwrap().len(), 1600 + 1280 - 160 + 320 * 4 - 480);
    }

    #[test]
    fn stop_drops_the_queue_and_what_is_still_being_made() {
        let (q, _) = recorded();
        let batch = q.expect(2);
        q.push(batch, Some((tone(44_100), PLAY_RATE)));
        let mut out = vec![0i16; 441];
        assert_eq!(q.fill(&mut out), Some(PlayerEvent::Started));
        assert!(q.stop(), "something was playing");
        assert!(!q.is_current(batch));
        // the second sentence arrives late: dropped
        q.push(batch, Some((tone(22_050), PLAY_RATE)));
        assert_eq!(q.fill(&mut out), None);
        assert!(out.iter().all(|&s| s == 0), "silence at once after stop");
        assert!(q.is_idle());
        assert!(!q.stop(), "nothing to stop");
    }

    #[test]
    fn a_batch_ends_only_when_its_last_sentence_has_played() {
        let q = PlayQueue::default();
        let batch = q.expect(2);
        q.push(batch, Some((tone(441), PLAY_RATE)));
        let mut out = vec![0i16; 441];
        assert_eq!(q.fill(&mut out), Some(PlayerEvent::Started));
        // the second is still being synthesised: a gap, not the end
        assert_eq!(q.fill(&mut out), None);
        assert!(!q.is_idle());
        // it could not be made: now the batch is over
        q.push(batch, None);
        assert_eq!(q.fill(&mut out), Some(PlayerEvent::Ended));
        assert!(q.is_idle());
    }

    #[test]
    fn another_rate_is_resampled_to_the_stream() {
        let q = PlayQueue::default();
        let batch = q.expect(1);
        q.push(batch, Some((tone(16_000), 16_000)));
        let mut played = 0;
        let mut out = vec![0i16; 441];
        while !q.is_idle() || played == 0 {
            q.fill(&mut out);
            played += 441;
            assert!(played < 5 * 22_050);
        }
        // 1 s at 16 kHz is 1 s here (the period that ended it is counted whole)
        assert!((22_050..22_050 + 2 * 441).contains(&played), "{played}");
    }
}
