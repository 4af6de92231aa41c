//! Echo cancellation for hands-free on speakers: what the app plays (the read-aloud voice, taken from the output's
//! monitor) is removed from what the microphone hears, so that the VAD and barge-in react to the user only. Noise
//! suppression comes with it. This is WebRTC's audio processing module (AEC3, NS, high-pass filter) through sonora,
//! its pure-Rust port: no signal processing of our own beyond cutting the streams into its 10 ms frames.
//!
//! Both streams are 16 kHz mono PCM16, as everything else in this crate. Feed the playback with
//! [`EchoCanceller::render`] and the microphone with [`EchoCanceller::capture`], from any threads, through a
//! [`SharedEchoCanceller`]; AEC3 estimates the delay between them itself (the playback must reach it no later than
//! its echo reaches the microphone, which a monitor stream does). What little echo the canceller leaves is gated:
//! while the playback is audible, a frame the canceller took 26 dB or more off (and, while it is still converging,
//! one 20 dB under the playback) becomes silence (see `is_residual`).

use std::sync::{Arc, Mutex};

use sonora::config::{
    EchoCanceller as AecConfig, HighPassFilter, NoiseSuppression, NoiseSuppressionLevel, TransparentModeType,
};
use sonora::{AudioProcessing, Config, StreamConfig};

/// The sample rate of both streams.
pub const RATE: u32 = 16_000;
/// One processing frame: 10 ms.
pub const FRAME: usize = RATE as usize / 100;

/// How long the user must talk over read-aloud before it stops, when the canceller is on (the segmenter's default,
/// 200 ms, is for a microphone that also hears the speakers): six of the detector's 16 ms frames in a row. With the
/// detector's own ~120 ms before it calls a word's start speech, barge-in comes ~200 ms after the user starts
/// (tests/aec_speech.rs); 20 sentences read aloud on speakers still barge in on nothing.
pub const BARGE_IN_AFTER: std::time::Duration = std::time::Duration::from_millis(96);

/// What to run besides the echo canceller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AecOptions {
    /// WebRTC's noise suppression (moderate, ~12 dB) on the microphone after the echo canceller.
    pub noise_suppression: bool,
}

impl Default for AecOptions {
    fn default() -> Self {
        AecOptions { noise_suppression: true }
    }
}

/// How long the playback counts as audible after its last loud frame: the room's echo tail, with margin.
const HOLD_FRAMES: usize = 30;
/// The playback is audible above this frame RMS (−50 dBFS).
pub const AUDIBLE_RMS: f32 = 104.0;
/// While the playback is audible, a frame the canceller brought under this fraction of what the microphone heard
/// (−26 dB) was echo, not the user: AEC3 takes 30–50 dB off a voice's echo (tests/aec_speech.rs measures it) and
/// little off a person talking.
const RESIDUAL_RATIO: f32 = 0.05;
/// Until the canceller has heard this much audible playback (3 s of 10 ms frames) it is still finding the echo's
/// path and lets more through: until then a frame 20 dB under the playback's loudest recent frame is taken for echo
/// too (in tests/aec_speech.rs, without it the first sentence started an utterance).
const CONVERGED_AFTER: u64 = 300;
const UNDER_PLAYBACK_CONVERGING: f32 = 0.1;

/// Is a cleaned frame what is left of the echo (`far`: the loudest recent playback frame's RMS; `heard`: the audible
/// playback frames so far)? Those frames go out as silence so that a level-blind neural VAD does not start an
/// utterance on them. Judged against the frame itself, by what the canceller took off it: a gate on the playback's
/// level (−20 dB under its loudest frame of the last 300 ms, as before, or even −30 dB) also silenced the user's
/// quieter sounds, and barge-in on the rig took 650–750 ms instead of ~400 (bench/README.md).
fn is_residual(raw_rms: f32, cleaned_rms: f32, far: f32, heard: u64) -> bool {
    let converging = heard < CONVERGED_AFTER && cleaned_rms < far * UNDER_PLAYBACK_CONVERGING;
    far > AUDIBLE_RMS && (cleaned_rms < raw_rms * RESIDUAL_RATIO || converging)
}

/// The echo canceller and its frame buffers. Not `Sync`: share it as a [`SharedEchoCanceller`].
pub struct EchoCanceller {
    apm: AudioProcessing,
    render_rest: Vec<i16>,
    capture_rest: Vec<i16>,
    scratch: Vec<i16>,
    /// The RMS of the last [`HOLD_FRAMES`] playback frames (a ring): is it audible, for the residual gate.
    far: [f32; HOLD_FRAMES],
    far_at: usize,
    /// Audible playback frames so far: is the canceller still converging.
    heard: u64,
    /// Microphone frames turned to silence as echo.
    gated: u64,
}

/// What the canceller is doing, for the log (a self-trigger or a slow barge-in is read from it).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AecStats {
    /// The echo's delay AEC3 estimates, in ms.
    pub delay_ms: Option<i32>,
    /// How much AEC3 takes off the echo (echo return loss enhancement), in dB.
    pub erle_db: Option<f64>,
    /// The loudest recent playback frame's RMS (audible above 104, −50 dBFS).
    pub far_rms: f32,
    /// Audible playback heard so far, in ms (the canceller converges in its first 3 s).
    pub heard_ms: u64,
    /// Microphone audio turned to silence as the echo's residue so far, in ms.
    pub gated_ms: u64,
    /// Microphone audio held for its playback now, in ms.
    pub held_ms: u64,
    /// Microphone audio processed without its playback so far (a monitor that stalled past the longest wait), in ms.
    pub unreferenced_ms: u64,
}

fn rms(frame: &[i16]) -> f32 {
    let sum: f64 = frame.iter().map(|&x| f64::from(x) * f64::from(x)).sum();
    (sum / frame.len().max(1) as f64).sqrt() as f32
}

impl std::fmt::Debug for EchoCanceller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EchoCanceller").finish_non_exhaustive()
    }
}

impl EchoCanceller {
    pub fn new(opts: AecOptions) -> Self {
        let config = Config {
            // The HMM variant of "transparent mode" (AEC3 finds there is no echo: a headset, speakers turned down)
            // lets the user through at once where the default kept suppressing them while the playback was loud
            // (barge-in 507 ms after the user began in one spot of tests/aec_speech.rs, 203 ms with it).
            echo_canceller: Some(AecConfig { transparent_mode: TransparentModeType::Hmm, ..AecConfig::default() }),
            high_pass_filter: Some(HighPassFilter::default()),
            noise_suppression: opts
                .noise_suppression
                .then(|| NoiseSuppression { level: NoiseSuppressionLevel::Moderate, ..NoiseSuppression::default() }),
            ..Config::default()
        };
        let stream = StreamConfig::new(RATE, 1);
        let apm = AudioProcessing::builder().config(config).capture_config(stream).render_config(stream).build();
        EchoCanceller {
            apm,
            render_rest: Vec::with_capacity(FRAME),
            capture_rest: Vec::with_capacity(FRAME),
            scratch: vec![0; FRAME],
            far: [0.0; HOLD_FRAMES],
            far_at: 0,
            heard: 0,
            gated: 0,
        }
    }

    /// What it is doing (the held and unreferenced figures are the [`SharedEchoCanceller`]'s).
    pub fn stats(&self) -> AecStats {
        let st = self.apm.statistics();
        let ms = |frames: u64| frames * 10;
        AecStats {
            delay_ms: st.delay_ms,
            erle_db: st.echo_return_loss_enhancement,
            far_rms: self.far_level(),
            heard_ms: ms(self.heard),
            gated_ms: ms(self.gated),
            ..AecStats::default()
        }
    }

    /// The loudest recent playback frame's RMS.
    fn far_level(&self) -> f32 {
        self.far.iter().copied().fold(0.0, f32::max)
    }

    /// The far end: a block of what the speakers play, any length (whole frames go to the canceller, the rest waits
    /// for the next block).
    pub fn render(&mut self, block: &[i16]) {
        let (apm, scratch, far, at, heard) =
            (&mut self.apm, &mut self.scratch, &mut self.far, &mut self.far_at, &mut self.heard);
        frames(&mut self.render_rest, block, |frame| {
            // the only error is a wrong frame size, which `frames` never makes
            let _ = apm.process_render_i16(frame, scratch);
            far[*at] = rms(frame);
            if far[*at] > AUDIBLE_RMS {
                *heard += 1;
            }
            *at = (*at + 1) % HOLD_FRAMES;
        });
    }

    /// The near end: a block from the microphone, any length; the cleaned samples of every whole frame are appended
    /// to `out` (so `out` lags the input by less than 10 ms).
    pub fn capture(&mut self, block: &[i16], out: &mut Vec<i16>) {
        let (far, heard) = (self.far_level(), self.heard);
        let (apm, scratch, gated) = (&mut self.apm, &mut self.scratch, &mut self.gated);
        frames(&mut self.capture_rest, block, |frame| {
            if apm.process_capture_i16(frame, scratch).is_err() {
                out.extend_from_slice(frame);
            } else if is_residual(rms(frame), rms(scratch), far, heard) {
                *gated += 1;
                out.extend(std::iter::repeat_n(0, FRAME));
            } else {
                out.extend_from_slice(scratch);
            }
        });
    }
}

/// Cuts `rest + block` into 10 ms frames for `each`; what is left over (less than a frame) stays in `rest`.
fn frames(rest: &mut Vec<i16>, mut block: &[i16], mut each: impl FnMut(&[i16])) {
    if !rest.is_empty() {
        let need = FRAME - rest.len();
        let take = need.min(block.len());
        rest.extend_from_slice(&block[..take]);
        block = &block[take..];
        if rest.len() < FRAME {
            return;
        }
        each(rest);
        rest.clear();
    }
    let mut chunks = block.chunks_exact(FRAME);
    for frame in &mut chunks {
        each(frame);
    }
    rest.extend_from_slice(chunks.remainder());
}

/// How far (in samples of stream time) the playback must have been fed past a microphone frame before that frame is
/// processed: the two recordings arrive on their own threads in bursts (a worker tick, the sound server's fragments),
/// and a microphone frame processed before the playback that caused its echo cannot be cleaned. 60 ms.
const LEAD: u64 = 960;
/// A microphone frame never waits longer than this for the playback (a monitor that stalls or stops): 300 ms.
const MAX_WAIT: usize = 4800;

/// At most this much playback waits for the microphone (1 s, as much as AEC3 itself queues): the microphone may
/// have stopped.
const MAX_PENDING: usize = RATE as usize;

/// An [`EchoCanceller`] shared by the playback's and the microphone's threads. It keeps the two in order: a block
/// from the microphone is held until the playback of the same moment (by sample count since each started, the
/// playback's recording started first) has been fed, [`LEAD`] ahead, or for [`MAX_WAIT`] at most.
///
/// The playback only ever waits for another block's append: it is handed over under a lock of its own and goes to
/// AEC3 with the next microphone block (AEC3 queues it until then anyway). The app's player hands it over from its
/// audio callback, which, waiting for AEC3 to process a burst of microphone frames on a busy machine, came late
/// enough for the speakers to run dry.
#[derive(Debug, Clone)]
pub struct SharedEchoCanceller {
    inner: Arc<Mutex<Ordered>>,
    incoming: Arc<Mutex<Vec<i16>>>,
}

#[derive(Debug)]
struct Ordered {
    aec: EchoCanceller,
    /// How far the playback must be ahead of a microphone frame, in samples.
    lead: u64,
    rendered: u64,
    captured: u64,
    held: std::collections::VecDeque<i16>,
    /// Samples processed past the longest wait, without their playback.
    unreferenced: u64,
    /// Where AEC3's input goes too, as it gets it ([`SharedEchoCanceller::dump_to`]).
    dump: Option<dump::Writer>,
}

impl SharedEchoCanceller {
    /// For a reference recorded from the output's monitor: it arrives in the sound server's bursts, after the
    /// playback, so a microphone frame waits until the playback is [`LEAD`] past it.
    pub fn new(opts: AecOptions) -> Self {
        Self::with_lead(opts, LEAD)
    }

    /// For a reference handed over by the app's own player ([`crate::player`]): it comes before the speakers play
    /// it, by the output's buffer, so a microphone frame needs no more than its own moment's playback in.
    pub fn ahead_of_playback(opts: AecOptions) -> Self {
        Self::with_lead(opts, 0)
    }

    fn with_lead(opts: AecOptions, lead: u64) -> Self {
        let inner = Arc::new(Mutex::new(Ordered {
            aec: EchoCanceller::new(opts),
            lead,
            rendered: 0,
            captured: 0,
            held: std::collections::VecDeque::new(),
            unreferenced: 0,
            dump: None,
        }));
        SharedEchoCanceller { inner, incoming: Arc::default() }
    }

    /// [`EchoCanceller::stats`], with the ordering's own figures.
    pub fn stats(&self) -> AecStats {
        let Ok(o) = self.inner.lock() else { return AecStats::default() };
        let ms = |samples: u64| samples * 1000 / u64::from(RATE);
        AecStats { held_ms: ms(o.held.len() as u64), unreferenced_ms: ms(o.unreferenced), ..o.aec.stats() }
    }

    /// [`EchoCanceller::render`], with the next microphone block.
    pub fn render(&self, block: &[i16]) {
        if let Ok(mut pending) = self.incoming.lock() {
            pending.extend_from_slice(block);
            let excess = pending.len().saturating_sub(MAX_PENDING);
            pending.drain(..excess);
        }
    }

    /// From now on, every block AEC3 gets (the playback's and the microphone's, in the order it gets them) is also
    /// written to `path` — a diagnostic, as WebRTC's "AEC dump": `aec_replay` (an example of this crate) runs a dump
    /// through the canceller and the VAD again, the same way every time. The microphone is in it: only on request.
    pub fn dump_to(&self, path: &std::path::Path) -> std::io::Result<()> {
        let w = dump::Writer::create(path)?;
        if let Ok(mut o) = self.inner.lock() {
            o.dump = Some(w);
        }
        Ok(())
    }

    /// What was handed over since, to AEC3.
    fn take_playback(&self, o: &mut Ordered) {
        let block = self.incoming.lock().map(|mut p| std::mem::take(&mut *p)).unwrap_or_default();
        if block.is_empty() {
            return;
        }
        o.dump_block(dump::Call::Render, &block);
        o.aec.render(&block);
        o.rendered += block.len() as u64;
    }

    /// The microphone starts again after a gap (its device was lost and is back, or another one took over): its
    /// next sample is of the playback's present, not of where its sample count stopped. What it held is dropped.
    pub fn resync(&self) {
        if let Ok(mut o) = self.inner.lock() {
            self.take_playback(&mut o);
            o.held.clear();
            o.captured = o.rendered;
        }
    }

    /// [`EchoCanceller::capture`] of what may be processed now (this block and those held before it, once the
    /// playback is far enough ahead), returning the cleaned samples — possibly none yet. A poisoned lock gives the
    /// input back as it was.
    pub fn capture(&self, block: &[i16]) -> Vec<i16> {
        let mut out = Vec::with_capacity(block.len() + FRAME);
        let Ok(mut o) = self.inner.lock() else {
            out.extend_from_slice(block);
            return out;
        };
        self.take_playback(&mut o);
        o.held.extend(block.iter().copied());
        // the microphone samples whose playback is in: up to `rendered - LEAD` in stream time, or anything beyond
        // the longest wait
        let ready = o.rendered.saturating_sub(o.lead).saturating_sub(o.captured);
        let ready = usize::try_from(ready).unwrap_or(usize::MAX);
        let take = ready.max(o.held.len().saturating_sub(MAX_WAIT)).min(o.held.len());
        o.unreferenced += take.saturating_sub(ready) as u64;
        if take > 0 {
            let chunk: Vec<i16> = o.held.drain(..take).collect();
            o.captured += take as u64;
            o.dump_block(dump::Call::Capture, &chunk);
            o.aec.capture(&chunk, &mut out);
        }
        out
    }
}

impl Ordered {
    /// To the dump, if there is one; a write that fails ends it (with a warning: the canceller goes on).
    fn dump_block(&mut self, call: dump::Call, block: &[i16]) {
        if let Some(w) = &mut self.dump
            && let Err(e) = w.write(call, block)
        {
            tracing::warn!("the echo canceller's dump stops: {e}");
            self.dump = None;
        }
    }
}

pub mod dump;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_of_any_size_become_whole_frames_in_order() {
        let mut rest = Vec::new();
        let mut seen: Vec<i16> = Vec::new();
        let input: Vec<i16> = (0..1000).map(|i| i as i16).collect();
        for chunk in [&input[..7], &input[7..400], &input[400..401], &input[401..1000]] {
            frames(&mut rest, chunk, |f| {
                assert_eq!(f.len(), FRAME);
                seen.extend_from_slice(f);
            });
        }
        assert_eq!(seen, input[..960]);
        assert_eq!(rest, input[960..]);
    }

    #[test]
    fn capture_returns_whole_frames_and_keeps_the_rest() {
        let mut aec = EchoCanceller::new(AecOptions { noise_suppression: false });
        let mut out = Vec::new();
        aec.capture(&[0; 250], &mut out);
        assert_eq!(out.len(), FRAME);
        aec.capture(&[0; 70], &mut out);
        assert_eq!(out.len(), 2 * FRAME);
        aec.render(&[1; 333]);
    }

    #[test]
    fn a_frame_the_canceller_took_26_db_off_is_echo_only_while_the_playback_is_audible() {
        let (loud, converged) = (3000.0, CONVERGED_AFTER);
        // the echo alone: the canceller leaves 30 dB or less of it
        assert!(is_residual(3000.0, 90.0, loud, converged));
        // the user over the echo: most of what the microphone heard stays
        assert!(!is_residual(3000.0, 1500.0, loud, converged));
        // the user alone in a pause of the playback, 20 dB under its loudest recent frame: nothing was taken off
        assert!(!is_residual(300.0, 290.0, loud, converged));
        // …which the still-converging canceller takes for echo, as it would anything under −20 dB
        assert!(is_residual(250.0, 250.0, loud, 0));
        // nothing plays: whatever the noise suppression took off, the frame stays
        assert!(!is_residual(3000.0, 10.0, 50.0, converged));
    }

    #[test]
    fn the_stats_count_what_was_heard_and_gated() {
        let mut aec = EchoCanceller::new(AecOptions { noise_suppression: false });
        let loud: Vec<i16> = (0..FRAME * 10).map(|i| ((i as f32 * 0.3).sin() * 8000.0) as i16).collect();
        aec.render(&loud);
        let mut out = Vec::new();
        // silence at the microphone while the playback is loud and the canceller still converging: gated
        aec.capture(&[0; FRAME * 10], &mut out);
        let st = aec.stats();
        assert_eq!((st.heard_ms, st.gated_ms), (100, 100), "{st:?}");
        assert!(st.far_rms > AUDIBLE_RMS, "{st:?}");
        assert!(out.iter().all(|&x| x == 0));
    }

    fn is_send<T: Send>() {}

    #[test]
    fn the_shared_canceller_can_cross_threads() {
        is_send::<SharedEchoCanceller>();
        let shared = SharedEchoCanceller::new(AecOptions::default());
        let s2 = shared.clone();
        std::thread::spawn(move || s2.render(&[0; 2400])).join().unwrap();
        // the playback is 2400 samples in: the microphone's first 2400 - LEAD may go, in whole frames
        assert_eq!(shared.capture(&[0; 2400]).len(), (2400 - LEAD as usize) / FRAME * FRAME);
    }

    #[test]
    fn with_the_reference_ahead_of_the_speakers_a_frame_waits_only_for_its_own_moment() {
        let shared = SharedEchoCanceller::ahead_of_playback(AecOptions::default());
        assert!(shared.capture(&[0; 1600]).is_empty(), "no playback of its moment yet");
        shared.render(&[0; 800]);
        assert_eq!(shared.capture(&[]).len(), 800);
        shared.render(&[0; 800]);
        assert_eq!(shared.capture(&[]).len(), 800);
    }

    #[test]
    fn the_playback_never_waits_for_the_canceller_at_work() {
        let shared = SharedEchoCanceller::ahead_of_playback(AecOptions::default());
        // the microphone's side holds the canceller (as while AEC3 processes a burst of frames)
        let busy = shared.inner.lock().unwrap();
        let (s2, (tx, rx)) = (shared.clone(), std::sync::mpsc::channel());
        std::thread::spawn(move || {
            s2.render(&[0; 320]);
            let _ = tx.send(());
        });
        assert!(rx.recv_timeout(std::time::Duration::from_secs(5)).is_ok(), "the player's callback waited");
        drop(busy);
        // …and what it handed over reaches AEC3 with the next microphone block
        assert_eq!(shared.capture(&[0; 320]).len(), 320);
        // at most a second of it waits for a microphone that stopped
        shared.render(&vec![0; 3 * RATE as usize]);
        assert_eq!(shared.incoming.lock().unwrap().len(), MAX_PENDING);
    }

    #[test]
    fn a_dump_replayed_cleans_the_microphone_as_the_session_did() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.dump");
        let shared = SharedEchoCanceller::ahead_of_playback(AecOptions::default());
        shared.dump_to(&path).unwrap();
        let far: Vec<i16> = (0..RATE as usize).map(|i| ((i as f32 * 0.05).sin() * 6000.0) as i16).collect();
        // the microphone: the playback 20 ms late at half level, and a tone of its own
        let near: Vec<i16> =
            (0..far.len()).map(|i| far.get(i.wrapping_sub(320)).map_or(0, |&x| x / 2) + (i % 50) as i16 * 40).collect();
        let mut live = Vec::new();
        for (f, n) in far.chunks(441).zip(near.chunks(300)) {
            shared.render(f);
            live.extend(shared.capture(n));
        }
        drop(shared);
        let calls = dump::read(&std::fs::read(&path).unwrap()).unwrap();
        let mut replayed = Vec::new();
        dump::replay(&calls, &mut EchoCanceller::new(AecOptions::default()), |c, _| replayed.extend_from_slice(c));
        assert!(live.len() > RATE as usize / 2, "{}", live.len());
        assert_eq!(replayed, live);
    }

    #[test]
    fn after_a_gap_the_microphone_waits_for_the_playback_of_the_present() {
        let shared = SharedEchoCanceller::new(AecOptions::default());
        // 2 s of playback while the microphone was lost after 0.1 s
        shared.render(&[0; 32_000]);
        assert_eq!(shared.capture(&[0; 1600]).len(), 1600);
        // unsynced, the next block would pass at once although its playback has not come in yet
        shared.resync();
        assert!(shared.capture(&[0; 1600]).is_empty(), "held until the playback of its moment");
        shared.render(&[0; 1600 + LEAD as usize]);
        assert_eq!(shared.capture(&[]).len(), 1600);
    }

    #[test]
    fn microphone_blocks_wait_for_the_playback_of_their_moment() {
        let shared = SharedEchoCanceller::new(AecOptions::default());
        // no playback yet: held
        assert!(shared.capture(&[0; 1600]).is_empty());
        shared.render(&[0; 1600 + LEAD as usize]);
        assert_eq!(shared.capture(&[]).len(), 1600);
        // a playback that stalls: the microphone goes on after MAX_WAIT
        let mut out = 0;
        for _ in 0..20 {
            out += shared.capture(&[0; 800]).len();
        }
        assert!((16_000 - MAX_WAIT - FRAME..=16_000 - MAX_WAIT + FRAME).contains(&out), "{out}");
        // …and the log can tell: what went without its playback, and what waits
        let st = shared.stats();
        assert_eq!(st.held_ms, MAX_WAIT as u64 * 1000 / u64::from(RATE), "{st:?}");
        let unreferenced = st.unreferenced_ms * u64::from(RATE) / 1000;
        assert!(unreferenced.abs_diff(out as u64) <= FRAME as u64, "{st:?} for {out} samples");
    }
}
