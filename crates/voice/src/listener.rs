//! Hands-free listening (A-23, A-24): 16 kHz mono blocks from the microphone → the VAD [`Segmenter`] → each
//! utterance written as WAV clip(s) into a folder and reported, ready to send.
//!
//! The segmenter and the disk run on a thread of the listener's own, so the capture worker only hands blocks over a
//! channel and never waits for them. Wiring with the `capture` feature:
//!
//! ```ignore
//! let listener = Listener::start(Segmenter::new(cfg), tmp_dir, |ev| { /* to the UI */ })?;
//! let recording = Recorder::with_config(RecorderConfig { keep_samples: false, ..Default::default() })
//!     .on_samples(listener.sink())
//!     .start(None)?;
//! // … later: the recording ends first (its sink goes), then the listener sends the utterance in progress.
//! recording.cancel();
//! listener.finish();
//! ```

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;

use crate::clip::{Clip, ClipError, MAX_WAV_BYTES, write_clips};
use crate::vad::{Segmenter, VadEvent};

/// What the listener reports (on its own thread; keep handlers short).
#[derive(Debug)]
#[non_exhaustive]
pub enum ListenerEvent {
    /// Speech began.
    SpeechStart,
    /// The speech that began was too short to be an utterance (a cough, a click): nothing is sent.
    Discarded,
    /// The user has been talking for a moment: whatever is being read aloud should stop (barge-in).
    BargeIn,
    /// One utterance, written: usually one clip, several (each ≤ 8 MiB, A-24) for a very long one.
    Utterance(Vec<Clip>),
    /// An utterance could not be written (folder gone, disk full); listening goes on.
    WriteFailed(ClipError),
}

/// A running hands-free listener. Feed it through [`Listener::sink`] (or [`Listener::push`]); end it with
/// [`Listener::finish`] (an utterance in progress is still written and reported) or [`Listener::cancel`] then
/// `finish` (nothing more is reported). Dropped without `finish`, it is cancelled and its thread ends on its own once
/// the samples stop.
#[derive(Debug)]
pub struct Listener {
    tx: Option<mpsc::Sender<Vec<i16>>>,
    cancelled: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Listener {
    /// Start listening: utterances found by `segmenter` are written into `dir` (created when needed) and reported to
    /// `on_event`.
    pub fn start(
        segmenter: Segmenter,
        dir: impl Into<PathBuf>,
        on_event: impl FnMut(ListenerEvent) + Send + 'static,
    ) -> std::io::Result<Listener> {
        let (tx, rx) = mpsc::channel::<Vec<i16>>();
        let cancelled = Arc::new(AtomicBool::new(false));
        let (dir, flag) = (dir.into(), cancelled.clone());
        let thread = std::thread::Builder::new()
            .name("hermes-vad".into())
            .spawn(move || run(segmenter, &rx, &dir, &flag, on_event))?;
        Ok(Listener { tx: Some(tx), cancelled, thread: Some(thread) })
    }

    /// A sample sink for the recording (`capture::Recorder::on_samples`): hands each block to the listener.
    /// The listener's input ends when this sink (every clone of it) and the listener's own handle are gone.
    pub fn sink(&self) -> impl Fn(&[i16]) + Send + Sync + 'static {
        let tx = self.tx.clone();
        move |block: &[i16]| {
            if let Some(tx) = &tx {
                let _ = tx.send(block.to_vec());
            }
        }
    }

    /// Hand over one block of 16 kHz mono samples.
    pub fn push(&self, block: &[i16]) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(block.to_vec());
        }
    }

    /// Report nothing more, from now on (blocks still queued are dropped unread).
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// End of input: wait until every block is processed and, unless cancelled, the utterance in progress is written
    /// and reported. Returns once every [`Listener::sink`] is dropped too, so stop the recording feeding it first.
    pub fn finish(mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.cancel();
        }
    }
}

fn run(
    mut seg: Segmenter,
    rx: &mpsc::Receiver<Vec<i16>>,
    dir: &std::path::Path,
    cancelled: &AtomicBool,
    mut on_event: impl FnMut(ListenerEvent),
) {
    let mut handle = |events: Vec<VadEvent>| {
        for ev in events {
            if cancelled.load(Ordering::Relaxed) {
                return;
            }
            let out = match ev {
                VadEvent::SpeechStart { .. } => ListenerEvent::SpeechStart,
                VadEvent::BargeIn { .. } => ListenerEvent::BargeIn,
                VadEvent::Discarded { .. } => ListenerEvent::Discarded,
                VadEvent::Utterance(u) => match write_clips(&u.samples, dir, MAX_WAV_BYTES) {
                    Ok(clips) => ListenerEvent::Utterance(clips),
                    Err(e) => ListenerEvent::WriteFailed(e),
                },
            };
            on_event(out);
        }
    };
    while let Ok(block) = rx.recv() {
        if cancelled.load(Ordering::Relaxed) {
            return;
        }
        handle(seg.push(&block));
    }
    // The input ended (listening switched off): an utterance in progress is still sent.
    handle(seg.finish());
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::vad::{EnergyVad, SegmenterConfig};
    use crate::wav;

    /// Speech-like input: a low noise floor (never digital silence) with bursts of a 220 Hz tone whose loudness
    /// wobbles at a syllable rate. `(true, ms)` is a burst, `(false, ms)` a pause.
    fn signal(parts: &[(bool, usize)]) -> Vec<i16> {
        let mut seed = 0x2545_f491_u32;
        let mut out = Vec::new();
        for &(burst, ms) in parts {
            for i in 0..ms * 16 {
                seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                let noise = f64::from((seed >> 16) as u16 as i16) / 32768.0 * 30.0;
                let t = i as f64 / 16_000.0;
                let tone = if burst {
                    let syllables = 0.6 + 0.4 * (2.0 * std::f64::consts::PI * 4.0 * t).sin().abs();
                    8000.0 * syllables * (2.0 * std::f64::consts::PI * 220.0 * t).sin()
                } else {
                    0.0
                };
                out.push((noise + tone) as i16);
            }
        }
        out
    }

    fn segmenter() -> Segmenter {
        Segmenter::with_detector(SegmenterConfig::default(), Box::new(EnergyVad::default()))
    }

    /// Start a listener into `dir`, feed `input` in 30 ms blocks through its sink as the capture would, finish, and
    /// return what it reported.
    fn listen(dir: &std::path::Path, input: &[i16], cancel_first: bool) -> Vec<ListenerEvent> {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen2 = seen.clone();
        let listener = Listener::start(segmenter(), dir, move |ev| seen2.lock().unwrap().push(ev)).unwrap();
        if cancel_first {
            listener.cancel();
        }
        let sink = listener.sink();
        for block in input.chunks(480) {
            sink(block);
        }
        drop(sink); // the recording ends
        listener.finish();
        std::mem::take(&mut *seen.lock().unwrap())
    }

    fn kinds(events: &[ListenerEvent]) -> Vec<&'static str> {
        events
            .iter()
            .map(|e| match e {
                ListenerEvent::SpeechStart => "start",
                ListenerEvent::Discarded => "discarded",
                ListenerEvent::BargeIn => "barge-in",
                ListenerEvent::Utterance(_) => "utterance",
                ListenerEvent::WriteFailed(_) => "write-failed",
            })
            .collect()
    }

    /// A burst longer than the onset but shorter than an utterance (a cough) is reported as discarded, so the page
    /// stops showing that it hears someone; nothing is written.
    #[test]
    fn speech_too_short_for_an_utterance_is_reported_discarded() {
        let dir = tempfile::tempdir().unwrap();
        let input = signal(&[(false, 800), (true, 120), (false, 1500)]);
        let events = listen(dir.path(), &input, false);
        assert_eq!(kinds(&events), ["start", "discarded"], "{events:?}");
        assert_eq!(std::fs::read_dir(dir.path()).map(|d| d.count()).unwrap_or(0), 0, "nothing written");
    }

    /// Where `needle` occurs in `hay` (the clip's audio inside the input).
    fn find(hay: &[i16], needle: &[i16]) -> Option<usize> {
        hay.windows(needle.len()).position(|w| w == needle)
    }

    /// A-23/A-24: two utterances separated by a pause become two clips, each the input's own audio (pre-roll before
    /// the burst, the burst, post-roll after it), unchanged; the second, still going when the input ends, is flushed
    /// by `finish`.
    #[test]
    fn two_utterances_become_two_clips_of_the_input_audio() {
        let dir = tempfile::tempdir().unwrap();
        let input = signal(&[(false, 800), (true, 1200), (false, 1500), (true, 900), (false, 200)]);
        let events = listen(dir.path(), &input, false);
        assert_eq!(kinds(&events), ["start", "barge-in", "utterance", "start", "barge-in", "utterance"], "{events:?}");
        let clips: Vec<&Clip> = events
            .iter()
            .filter_map(|e| match e {
                ListenerEvent::Utterance(c) => Some(c),
                _ => None,
            })
            .map(|c| {
                assert_eq!(c.len(), 1, "a short utterance is one clip");
                &c[0]
            })
            .collect();
        let mut at = Vec::new();
        for (clip, burst_secs) in clips.iter().zip([1.2, 0.9]) {
            assert!(clip.path.starts_with(dir.path()), "{clip:?}");
            let bytes = std::fs::read(&clip.path).unwrap();
            assert_eq!(bytes.len() as u32, clip.size);
            assert_eq!(wav::to_hermes_wav(&bytes).unwrap(), bytes, "16 kHz mono PCM16 (A-23)");
            let pcm: Vec<i16> = bytes[44..].chunks_exact(2).map(|b| i16::from_le_bytes([b[0], b[1]])).collect();
            at.push(find(&input, &pcm).expect("the clip is a stretch of the input, unchanged"));
            // the burst plus some of the pre-roll (300 ms) and post-roll (150 ms) around it
            assert!(clip.secs > burst_secs && clip.secs < burst_secs + 0.5, "{clip:?}");
        }
        // the first clip starts in the pause before the first burst (pre-roll), the second in the pause before its own
        assert!(at[0] < 800 * 16 && at[0] > 400 * 16, "{at:?}");
        assert!(at[1] < 3500 * 16 && at[1] > 3000 * 16, "{at:?}");
    }

    #[test]
    fn silence_reports_nothing_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let events = listen(&dir.path().join("clips"), &signal(&[(false, 3000)]), false);
        assert!(events.is_empty(), "{events:?}");
        assert!(!dir.path().join("clips").exists());
    }

    #[test]
    fn cancelled_reports_nothing_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let input = signal(&[(false, 500), (true, 1000), (false, 1000), (true, 1000)]);
        let events = listen(&dir.path().join("clips"), &input, true);
        assert!(events.is_empty(), "{events:?}");
        assert!(!dir.path().join("clips").exists());
    }

    /// The folder cannot be written: each utterance says so, and listening goes on.
    #[test]
    fn an_unwritable_folder_is_reported_per_utterance() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-folder");
        std::fs::write(&file, b"x").unwrap();
        let input = signal(&[(false, 500), (true, 800), (false, 1000), (true, 800), (false, 1000)]);
        let events = listen(&file, &input, false);
        assert_eq!(kinds(&events), ["start", "barge-in", "write-failed", "start", "barge-in", "write-failed"]);
        assert!(matches!(events[2], ListenerEvent::WriteFailed(ClipError::Io(_))), "{events:?}");
    }

    /// `push` feeds the same path as the sink; dropping an unfinished listener neither hangs nor reports.
    #[test]
    fn push_then_drop() {
        let dir = tempfile::tempdir().unwrap();
        let seen = Arc::new(Mutex::new(0usize));
        let seen2 = seen.clone();
        let listener = Listener::start(segmenter(), dir.path(), move |_| *seen2.lock().unwrap() += 1).unwrap();
        listener.cancel();
        listener.push(&signal(&[(true, 1000)]));
        drop(listener);
        assert_eq!(*seen.lock().unwrap(), 0);
    }
}
