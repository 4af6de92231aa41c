//! Voice activity detection for hands-free mode and barge-in.
//!
//! [`Segmenter`] is a pure state machine over 16 kHz mono PCM16: feed it samples in any block size, it cuts them
//! into 16 ms frames, asks a [`SpeechDetector`] (the neural [`NeuralVad`] by default — `earshot`, weights compiled
//! into the crate, nothing downloaded — or the [`EnergyVad`] gate), and emits [`VadEvent`]s: speech start (usable for
//! barge-in), and complete utterances with ~300 ms pre-roll so first syllables survive.

use std::collections::VecDeque;
use std::time::Duration;

use crate::resample::HERMES_RATE;

/// Samples per VAD frame: 16 ms at 16 kHz.
pub const FRAME: usize = 256;

/// Something that scores one [`FRAME`] of 16 kHz audio: 0 = no speech, 1 = speech.
pub trait SpeechDetector: Send {
    /// Speech probability of this frame (exactly [`FRAME`] samples).
    fn score(&mut self, frame: &[i16]) -> f32;
    /// Forget all state (new stream).
    fn reset(&mut self);
}

/// The neural detector (`earshot`: a small pure-Rust network, its 40 KiB of weights ship inside the crate).
pub struct NeuralVad(Box<earshot::Detector>);

impl NeuralVad {
    /// A fresh detector.
    pub fn new() -> Self {
        Self(earshot::Detector::default_boxed())
    }
}

impl Default for NeuralVad {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for NeuralVad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NeuralVad")
    }
}

impl SpeechDetector for NeuralVad {
    fn score(&mut self, frame: &[i16]) -> f32 {
        self.0.predict_i16(frame)
    }
    fn reset(&mut self) {
        self.0.reset();
    }
}

/// Energy gate fallback: a frame is speech when it is `margin_db` above a tracked noise floor and above `floor_db`.
#[derive(Debug, Clone)]
pub struct EnergyVad {
    /// Absolute minimum level for speech, dBFS (default −45).
    pub floor_db: f32,
    /// Required distance above the noise floor, dB (default 12).
    pub margin_db: f32,
    noise_db: f32,
}

impl Default for EnergyVad {
    fn default() -> Self {
        Self { floor_db: -45.0, margin_db: 12.0, noise_db: -70.0 }
    }
}

/// Frame level in dBFS (−100 for digital silence).
pub fn frame_db(frame: &[i16]) -> f32 {
    if frame.is_empty() {
        return -100.0;
    }
    let e: f64 = frame.iter().map(|&s| f64::from(s) * f64::from(s)).sum::<f64>() / frame.len() as f64;
    #[allow(clippy::cast_possible_truncation)]
    let db = (10.0 * (e / (32768.0 * 32768.0)).max(1e-10).log10()) as f32;
    db
}

impl SpeechDetector for EnergyVad {
    fn score(&mut self, frame: &[i16]) -> f32 {
        let db = frame_db(frame);
        // The noise floor follows quiet frames quickly and loud ones very slowly.
        let k = if db < self.noise_db { 0.3 } else { 0.002 };
        self.noise_db += k * (db - self.noise_db);
        if db > self.floor_db && db > self.noise_db + self.margin_db { 1.0 } else { 0.0 }
    }
    fn reset(&mut self) {
        self.noise_db = -70.0;
    }
}

/// Segmenter settings.
#[derive(Debug, Clone)]
pub struct SegmenterConfig {
    /// Score at or above which a frame counts as speech (default 0.5).
    pub threshold: f32,
    /// Continuous speech needed to declare an onset (default 48 ms).
    pub onset: Duration,
    /// Audio kept before the onset (default 300 ms), so first syllables are not cut.
    pub pre_roll: Duration,
    /// Audio kept after the last speech frame (default 150 ms).
    pub post_roll: Duration,
    /// Silence that ends an utterance (default 600 ms).
    pub end_silence: Duration,
    /// Utterances with less speech than this are dropped (default 250 ms).
    pub min_speech: Duration,
    /// An utterance is cut here even without a pause (default 4 min, under the 8 MiB of A-24).
    pub max_utterance: Duration,
    /// Continuous speech after which [`VadEvent::BargeIn`] fires (default 200 ms).
    pub barge_in_after: Duration,
}

impl Default for SegmenterConfig {
    fn default() -> Self {
        Self {
            threshold: 0.5,
            onset: Duration::from_millis(48),
            pre_roll: Duration::from_millis(300),
            post_roll: Duration::from_millis(150),
            end_silence: Duration::from_millis(600),
            min_speech: Duration::from_millis(250),
            max_utterance: Duration::from_secs(240),
            barge_in_after: Duration::from_millis(200),
        }
    }
}

/// One utterance. Positions are sample indices (16 kHz) since the segmenter started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Utterance {
    /// First sample of `samples` (speech start minus pre-roll).
    pub start: u64,
    /// Where speech was detected to begin.
    pub speech_start: u64,
    /// Where the last speech frame ended.
    pub speech_end: u64,
    /// One past the last sample of `samples` (speech end plus post-roll).
    pub end: u64,
    /// The audio `start..end`, 16 kHz mono PCM16 — ready for [`crate::wav::encode_pcm16_mono_16k`].
    pub samples: Vec<i16>,
}

impl Utterance {
    /// Seconds of `samples`.
    pub fn duration_secs(&self) -> f64 {
        samples_to_secs(self.end - self.start)
    }
}

/// Sample index at 16 kHz → seconds.
pub fn samples_to_secs(n: u64) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let s = n as f64 / f64::from(HERMES_RATE);
    s
}

/// What the segmenter saw.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum VadEvent {
    /// Speech began at this sample.
    SpeechStart {
        /// Sample index of the onset.
        at: u64,
    },
    /// Speech has gone on for [`SegmenterConfig::barge_in_after`]: the user is talking over TTS → stop it.
    BargeIn {
        /// Sample index at which the condition was met.
        at: u64,
    },
    /// A complete utterance.
    Utterance(Utterance),
    /// Speech ended but was shorter than [`SegmenterConfig::min_speech`] (a cough, a click).
    Discarded {
        /// Onset.
        speech_start: u64,
        /// End of the last speech frame.
        speech_end: u64,
    },
}

fn frames(d: Duration) -> usize {
    usize::try_from(d.as_millis() * u128::from(HERMES_RATE) / 1000).unwrap_or(usize::MAX).div_ceil(FRAME)
}

fn samples(d: Duration) -> usize {
    usize::try_from(d.as_millis() * u128::from(HERMES_RATE) / 1000).unwrap_or(usize::MAX)
}

#[derive(Debug)]
enum State {
    Idle {
        /// Consecutive speech frames so far (onset candidate).
        run: usize,
    },
    Speech {
        start: u64,
        speech_start: u64,
        speech_end: u64,
        speech_frames: usize,
        run: usize,
        silence: usize,
        barged: bool,
        buf: Vec<i16>,
    },
}

/// The hands-free state machine.
pub struct Segmenter {
    cfg: SegmenterConfig,
    detector: Box<dyn SpeechDetector>,
    partial: Vec<i16>,
    pos: u64,
    history: VecDeque<i16>,
    history_cap: usize,
    state: State,
    last_speech: bool,
}

impl std::fmt::Debug for Segmenter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Segmenter").field("cfg", &self.cfg).field("pos", &self.pos).field("state", &self.state).finish()
    }
}

impl Segmenter {
    /// A segmenter with the neural detector.
    pub fn new(cfg: SegmenterConfig) -> Self {
        Self::with_detector(cfg, Box::new(NeuralVad::new()))
    }

    /// A segmenter with any detector (e.g. [`EnergyVad`]).
    pub fn with_detector(cfg: SegmenterConfig, detector: Box<dyn SpeechDetector>) -> Self {
        // pre-roll plus the onset frames, which are also before the declared onset in the history
        let history_cap = samples(cfg.pre_roll) + frames(cfg.onset) * FRAME;
        Self {
            cfg,
            detector,
            partial: Vec::with_capacity(FRAME),
            pos: 0,
            history: VecDeque::with_capacity(history_cap + FRAME),
            history_cap,
            state: State::Idle { run: 0 },
            last_speech: false,
        }
    }

    /// Is an utterance in progress?
    pub fn in_speech(&self) -> bool {
        matches!(self.state, State::Speech { .. })
    }

    /// Was the last frame speech (raw detector decision)?
    pub fn is_speech(&self) -> bool {
        self.last_speech
    }

    /// Samples consumed so far (16 kHz).
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Forget everything (e.g. after a device change), keeping the settings.
    pub fn reset(&mut self) {
        self.detector.reset();
        self.partial.clear();
        self.history.clear();
        self.pos = 0;
        self.state = State::Idle { run: 0 };
        self.last_speech = false;
    }

    /// Feed 16 kHz mono samples; returns what happened.
    pub fn push(&mut self, samples: &[i16]) -> Vec<VadEvent> {
        let mut events = Vec::new();
        let mut rest = samples;
        while !rest.is_empty() {
            let take = (FRAME - self.partial.len()).min(rest.len());
            self.partial.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.partial.len() == FRAME {
                let frame = std::mem::take(&mut self.partial);
                self.frame(&frame, &mut events);
                self.partial = frame;
                self.partial.clear();
            }
        }
        events
    }

    /// End of stream: close an utterance in progress (if long enough).
    pub fn finish(&mut self) -> Vec<VadEvent> {
        let mut events = Vec::new();
        if matches!(self.state, State::Speech { .. }) {
            self.close(&mut events);
        }
        events
    }

    fn frame(&mut self, frame: &[i16], events: &mut Vec<VadEvent>) {
        let speech = self.detector.score(frame) >= self.cfg.threshold;
        self.last_speech = speech;
        let frame_start = self.pos;
        self.pos += FRAME as u64;
        let onset_frames = frames(self.cfg.onset).max(1);
        match &mut self.state {
            State::Idle { run } => {
                *run = if speech { *run + 1 } else { 0 };
                self.history.extend(frame.iter().copied());
                let excess = self.history.len().saturating_sub(self.history_cap);
                self.history.drain(..excess);
                if *run >= onset_frames {
                    let run = *run;
                    let speech_start = frame_start + FRAME as u64 - (run * FRAME) as u64;
                    let pre = (samples(self.cfg.pre_roll) as u64).min(speech_start);
                    let start = speech_start - pre;
                    let keep = usize::try_from(self.pos - start).unwrap_or(usize::MAX).min(self.history.len());
                    let skip = self.history.len() - keep;
                    let buf: Vec<i16> = self.history.iter().skip(skip).copied().collect();
                    let start = self.pos - buf.len() as u64;
                    self.history.clear();
                    events.push(VadEvent::SpeechStart { at: speech_start });
                    self.state = State::Speech {
                        start,
                        speech_start,
                        speech_end: self.pos,
                        speech_frames: run,
                        run,
                        silence: 0,
                        barged: false,
                        buf,
                    };
                    self.check_barge_in(events);
                }
            }
            State::Speech { speech_end, speech_frames, run, silence, buf, .. } => {
                buf.extend_from_slice(frame);
                if speech {
                    *speech_end = self.pos;
                    *speech_frames += 1;
                    *run += 1;
                    *silence = 0;
                } else {
                    *run = 0;
                    *silence += 1;
                }
                let (silence, len) = (*silence, buf.len());
                self.check_barge_in(events);
                if silence >= frames(self.cfg.end_silence) || len >= samples(self.cfg.max_utterance) {
                    self.close(events);
                }
            }
        }
    }

    fn check_barge_in(&mut self, events: &mut Vec<VadEvent>) {
        let need = frames(self.cfg.barge_in_after).max(1);
        if let State::Speech { run, barged, .. } = &mut self.state
            && !*barged
            && *run >= need
        {
            *barged = true;
            events.push(VadEvent::BargeIn { at: self.pos });
        }
    }

    fn close(&mut self, events: &mut Vec<VadEvent>) {
        let state = std::mem::replace(&mut self.state, State::Idle { run: 0 });
        let State::Speech { start, speech_start, speech_end, speech_frames, buf, .. } = state else {
            return;
        };
        // What follows the utterance becomes history for the next pre-roll.
        let end = (speech_end + samples(self.cfg.post_roll) as u64).min(self.pos);
        let cut = usize::try_from(end - start).unwrap_or(usize::MAX).min(buf.len());
        let tail_from = buf.len().saturating_sub(self.history_cap).max(cut);
        self.history.extend(buf[tail_from..].iter().copied());
        if speech_frames < frames(self.cfg.min_speech) {
            events.push(VadEvent::Discarded { speech_start, speech_end });
            return;
        }
        let mut buf = buf;
        buf.truncate(cut);
        events.push(VadEvent::Utterance(Utterance { start, speech_start, speech_end, end, samples: buf }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scripted detector: speech where the frame's first sample is non-zero.
    struct Script;
    impl SpeechDetector for Script {
        fn score(&mut self, frame: &[i16]) -> f32 {
            if frame[0] != 0 { 1.0 } else { 0.0 }
        }
        fn reset(&mut self) {}
    }

    fn signal(parts: &[(bool, usize)]) -> Vec<i16> {
        let mut v = Vec::new();
        for &(sp, ms) in parts {
            let n = ms * 16;
            v.extend(std::iter::repeat_n(if sp { 1000 } else { 0 }, n));
        }
        v
    }

    fn run(seg: &mut Segmenter, s: &[i16], block: usize) -> Vec<VadEvent> {
        let mut ev = Vec::new();
        for c in s.chunks(block) {
            ev.extend(seg.push(c));
        }
        ev.extend(seg.finish());
        ev
    }

    fn utterances(ev: &[VadEvent]) -> Vec<&Utterance> {
        ev.iter()
            .filter_map(|e| match e {
                VadEvent::Utterance(u) => Some(u),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn two_utterances_with_pre_roll() {
        // 1 s silence, 1.024 s speech, 2 s silence, 0.512 s speech, 1 s silence
        let s = signal(&[(false, 1024), (true, 1024), (false, 2048), (true, 512), (false, 1024)]);
        for block in [1, 100, 256, 4096] {
            let mut seg = Segmenter::with_detector(SegmenterConfig::default(), Box::new(Script));
            let ev = run(&mut seg, &s, block);
            let u = utterances(&ev);
            assert_eq!(u.len(), 2, "block {block}: {ev:?}");
            assert_eq!(u[0].speech_start, 1024 * 16);
            assert_eq!(u[0].speech_end, 2048 * 16);
            assert_eq!(u[0].start, 1024 * 16 - 300 * 16);
            assert_eq!(u[0].end, 2048 * 16 + 150 * 16);
            assert_eq!(u[0].samples, s[u[0].start as usize..u[0].end as usize]);
            assert_eq!(u[1].speech_start, 4096 * 16);
            assert_eq!(u[1].samples, s[u[1].start as usize..u[1].end as usize]);
            let starts = ev.iter().filter(|e| matches!(e, VadEvent::SpeechStart { .. })).count();
            let barge = ev.iter().filter(|e| matches!(e, VadEvent::BargeIn { .. })).count();
            assert_eq!((starts, barge), (2, 2));
        }
    }

    #[test]
    fn short_pause_does_not_split_and_blip_is_discarded() {
        let s =
            signal(&[(false, 512), (true, 512), (false, 400), (true, 512), (false, 1024), (true, 64), (false, 1024)]);
        let mut seg = Segmenter::with_detector(SegmenterConfig::default(), Box::new(Script));
        let ev = run(&mut seg, &s, 333);
        assert_eq!(utterances(&ev).len(), 1, "{ev:?}");
        assert!(ev.iter().any(|e| matches!(e, VadEvent::Discarded { .. })));
    }

    #[test]
    fn finish_closes_open_utterance_and_max_length_cuts() {
        let s = signal(&[(false, 100), (true, 2000)]);
        let mut seg = Segmenter::with_detector(SegmenterConfig::default(), Box::new(Script));
        let ev = run(&mut seg, &s, 256);
        let u = utterances(&ev);
        assert_eq!(u.len(), 1);
        assert_eq!(u[0].end, s.len() as u64 / 256 * 256);

        let cfg = SegmenterConfig { max_utterance: Duration::from_millis(800), ..Default::default() };
        let mut seg = Segmenter::with_detector(cfg, Box::new(Script));
        let ev = run(&mut seg, &signal(&[(true, 2000)]), 256);
        assert!(utterances(&ev).len() >= 2, "{ev:?}");
        assert!(utterances(&ev).iter().all(|u| u.samples.len() <= 800 * 16 + 256));
    }

    #[test]
    fn energy_gate() {
        let mut e = EnergyVad::default();
        let quiet: Vec<i16> = (0..FRAME).map(|i| if i % 2 == 0 { 3 } else { -3 }).collect();
        let loud: Vec<i16> = (0..FRAME).map(|i| ((i as f32 * 0.2).sin() * 8000.0) as i16).collect();
        for _ in 0..50 {
            assert_eq!(e.score(&quiet), 0.0);
        }
        assert_eq!(e.score(&loud), 1.0);
        assert_eq!(frame_db(&[0; 256]), -100.0);
    }

    #[test]
    fn neural_vad_silence_is_not_speech() {
        let mut seg = Segmenter::new(SegmenterConfig::default());
        let ev = run(&mut seg, &vec![0i16; 16_000 * 2], 512);
        assert!(ev.is_empty());
        assert!(!seg.is_speech());
    }
}
