//! Speaking replies aloud (A-25): the system TTS through the `tts` crate (speech-dispatcher, AVSpeechSynthesizer,
//! WinRT). On Linux the app can play read-aloud itself instead ([`Playback`]) — asked for (`HERMES_TTS=app`,
//! [`Playback::App`]), or where speech-dispatcher is not installed but eSpeak NG is: the voice speech-dispatcher's
//! default module speaks with, synthesised by the `espeak-ng` program ([`crate::espeak`]) and played through an
//! output stream of the app's own ([`crate::player`]), so that hands-free's echo canceller gets what is played
//! before the speakers play it ([`Speaker::set_echo_reference`]) and a barge-in silences it at once. Not yet the
//! default where speech-dispatcher is there: on the speakers rig the canceller converged less well on it
//! (bench/README.md, "Read-aloud played by the app").
//!
//! [`Speaker`] owns the engine on a thread of its own (neither engine is `Send`), so the handle is `Send + Sync`
//! and can live in the app's shared state. [`split_sentences`] is always available; the system engine needs the
//! cargo feature `tts` (system packages: see the crate README), the app's own player the feature `capture`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use unicode_segmentation::UnicodeSegmentation;

/// Why TTS is not available or failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TtsError {
    /// No TTS engine (built without the `tts` feature, or speech-dispatcher missing).
    #[error("text-to-speech is not available: {0}")]
    Unavailable(String),
    /// The engine refused an operation.
    #[error("text-to-speech failed: {0}")]
    Failed(String),
    /// The TTS thread is gone.
    #[error("text-to-speech has stopped")]
    Closed,
}

/// What the speaker reports (use `Started`/`Ended`/`Stopped` to drive the avatar's `speaking` state, A-26).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpeakerEvent {
    /// The first queued sentence began playing.
    Started,
    /// Everything queued has been spoken.
    Ended,
    /// [`Speaker::stop`] interrupted speech (barge-in).
    Stopped,
    /// An asynchronous failure.
    Error(TtsError),
}

/// A system voice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoiceInfo {
    /// Engine id (pass to [`SpeakerConfig::voice`] / [`Speaker::set_voice`]).
    pub id: String,
    /// Display name.
    pub name: String,
    /// BCP 47 language tag.
    pub language: String,
}

/// Voice settings.
#[derive(Debug, Clone, Default)]
pub struct SpeakerConfig {
    /// Voice id or name (case-insensitive; a language tag like `en-GB` also matches), `None` for the default.
    pub voice: Option<String>,
    /// Speaking rate relative to normal (1.0 = normal, 2.0 ≈ twice as fast), clamped to the engine's range.
    pub rate: Option<f32>,
    /// Who plays read-aloud.
    pub playback: Playback,
}

/// Who plays read-aloud: the app itself (Linux, with the `espeak-ng` program) or the system TTS.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Playback {
    /// On Linux with eSpeak NG installed, the app, unless speech-dispatcher is installed and reads with another
    /// module than espeak-ng (then the system, for that voice); elsewhere the system. `HERMES_TTS=app` or
    /// `HERMES_TTS=speech-dispatcher` decides instead when set.
    #[default]
    Auto,
    /// The app (Linux with eSpeak NG installed; elsewhere the system).
    App,
    /// The system TTS.
    System,
}

/// Turn a (markdown) reply into sentences to speak: code blocks are left out, markup and link targets removed,
/// then Unicode sentence boundaries (UAX #29) split it; empty pieces are dropped.
pub fn split_sentences(text: &str) -> Vec<String> {
    let cleaned = speakable(text);
    cleaned
        .split_sentence_bounds()
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| s.chars().any(char::is_alphanumeric))
        .collect()
}

/// Markdown → plain speakable text (light-weight; no full markdown parser).
fn speakable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let t = t.trim_start_matches(['#', '>', ' ']);
        let t = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")).unwrap_or(t);
        out.push_str(&strip_inline(t));
        // A line break without punctuation ends a sentence too (lists, headings).
        if out.trim_end().ends_with(|c: char| c.is_alphanumeric()) {
            out.push('.');
        }
        out.push('\n');
    }
    out
}

fn strip_inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' | '_' | '`' => {}
            ']' if chars.peek() == Some(&'(') => {
                // [text](url) → text
                for c in chars.by_ref() {
                    if c == ')' {
                        break;
                    }
                }
            }
            '[' => {}
            c => out.push(c),
        }
    }
    out
}

type EventFn = Arc<dyn Fn(SpeakerEvent) + Send + Sync>;

/// What an engine's thread is given: its settings, where its events go, its commands (and a sender of its own, for
/// its callbacks), the speaking flag, and where to say whether it started (and whether it plays read-aloud itself).
#[cfg_attr(not(any(feature = "tts", all(target_os = "linux", feature = "capture"))), allow(dead_code))]
struct Engine {
    config: SpeakerConfig,
    on_event: EventFn,
    tx: mpsc::Sender<Cmd>,
    rx: mpsc::Receiver<Cmd>,
    speaking: Arc<AtomicBool>,
    ready: mpsc::Sender<Result<bool, TtsError>>,
}

/// A voice by id or name (case-insensitive), else by language tag, else the first whose name contains `want`.
#[cfg(any(feature = "tts", all(target_os = "linux", feature = "capture")))]
fn pick_voice<'a>(voices: &'a [VoiceInfo], want: &str) -> Option<&'a VoiceInfo> {
    let w = want.to_lowercase();
    voices
        .iter()
        .find(|v| v.id.to_lowercase() == w || v.name.to_lowercase() == w)
        .or_else(|| voices.iter().find(|v| v.language.to_lowercase() == w))
        .or_else(|| voices.iter().find(|v| v.name.to_lowercase().contains(&w)))
}

#[allow(dead_code)] // some variants only used with the `tts` feature
enum Cmd {
    Speak(Vec<String>),
    Stop,
    SetRate(f32),
    SetVoice(String, mpsc::Sender<Result<(), TtsError>>),
    Voices(mpsc::Sender<Result<Vec<VoiceInfo>, TtsError>>),
    Begin(u64),
    End(u64),
    /// The app's own player: what its audio callback saw.
    #[cfg(all(target_os = "linux", feature = "capture"))]
    Played(crate::player::PlayerEvent),
    /// The app's own player: where what it plays goes as the echo canceller's reference.
    #[cfg(all(target_os = "linux", feature = "capture"))]
    Reference(Option<crate::player::ReferenceSink>),
    /// A sentence could not be synthesised.
    Failed(TtsError),
    Shutdown,
}

/// The system TTS. `Send + Sync`; dropping it stops speech.
pub struct Speaker {
    tx: mpsc::Sender<Cmd>,
    speaking: Arc<AtomicBool>,
    plays_itself: bool,
    join: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Speaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Speaker").field("speaking", &self.is_speaking()).finish()
    }
}

impl Speaker {
    /// Connect to the system TTS. `on_event` is called from the TTS thread.
    pub fn new(
        config: SpeakerConfig,
        on_event: impl Fn(SpeakerEvent) + Send + Sync + 'static,
    ) -> Result<Self, TtsError> {
        let (tx, rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::channel();
        let speaking = Arc::new(AtomicBool::new(false));
        let on_event: EventFn = Arc::new(on_event);
        let (tx2, sp2) = (tx.clone(), speaking.clone());
        let join = std::thread::Builder::new()
            .name("hermes-voice-tts".into())
            .spawn(move || {
                let engine = Engine { config, on_event, tx: tx2, rx, speaking: sp2, ready: ready_tx };
                #[cfg(all(target_os = "linux", feature = "capture"))]
                if own::chosen(engine.config.playback) {
                    return own::run(engine);
                }
                backend::run(engine)
            })
            .map_err(|e| TtsError::Failed(e.to_string()))?;
        match ready_rx.recv() {
            Ok(Ok(plays_itself)) => Ok(Self { tx, speaking, plays_itself, join: Some(join) }),
            Ok(Err(e)) => {
                let _ = join.join();
                Err(e)
            }
            Err(_) => Err(TtsError::Closed),
        }
    }

    /// Speak a final reply: split into sentences and queue them after anything already playing.
    /// Returns the number of sentences queued.
    pub fn speak_sentences(&self, text: &str) -> Result<usize, TtsError> {
        let sentences = split_sentences(text);
        let n = sentences.len();
        if n > 0 {
            self.tx.send(Cmd::Speak(sentences)).map_err(|_| TtsError::Closed)?;
        }
        Ok(n)
    }

    /// Stop speaking now and drop the queue (barge-in). Emits [`SpeakerEvent::Stopped`] if something was playing.
    pub fn stop(&self) -> Result<(), TtsError> {
        self.tx.send(Cmd::Stop).map_err(|_| TtsError::Closed)
    }

    /// Is speech playing (between `Started` and `Ended`/`Stopped`)?
    pub fn is_speaking(&self) -> bool {
        self.speaking.load(Ordering::Relaxed)
    }

    /// Change the rate (1.0 = normal) for sentences queued from now on.
    pub fn set_rate(&self, rate: f32) -> Result<(), TtsError> {
        self.tx.send(Cmd::SetRate(rate)).map_err(|_| TtsError::Closed)
    }

    /// Choose a voice by id, name or language tag; `""` goes back to the engine's default voice (the one it had when
    /// the speaker started, before any configured voice).
    pub fn set_voice(&self, voice: &str) -> Result<(), TtsError> {
        let (rtx, rrx) = mpsc::channel();
        self.tx.send(Cmd::SetVoice(voice.to_string(), rtx)).map_err(|_| TtsError::Closed)?;
        rrx.recv().map_err(|_| TtsError::Closed)?
    }

    /// The voices the engine offers.
    pub fn voices(&self) -> Result<Vec<VoiceInfo>, TtsError> {
        let (rtx, rrx) = mpsc::channel();
        self.tx.send(Cmd::Voices(rtx)).map_err(|_| TtsError::Closed)?;
        rrx.recv().map_err(|_| TtsError::Closed)?
    }

    /// Does the app play read-aloud itself (so [`Speaker::set_echo_reference`] works), rather than the system TTS?
    pub fn plays_itself(&self) -> bool {
        self.plays_itself
    }

    /// Hand everything the app plays from now on (silence included, at 16 kHz, before the speakers play it) to the
    /// echo canceller as its reference, or stop (`None`). The output stream runs while a canceller is attached.
    /// Only when [`Speaker::plays_itself`]; otherwise `Unavailable`.
    #[cfg(feature = "aec")]
    pub fn set_echo_reference(&self, aec: Option<crate::aec::SharedEchoCanceller>) -> Result<(), TtsError> {
        if !self.plays_itself {
            return Err(TtsError::Unavailable("read-aloud is played by the system, not the app".into()));
        }
        #[cfg(all(target_os = "linux", feature = "capture"))]
        {
            let sink = aec.map(|a| Box::new(move |block: &[i16]| a.render(block)) as crate::player::ReferenceSink);
            self.tx.send(Cmd::Reference(sink)).map_err(|_| TtsError::Closed)
        }
        #[cfg(not(all(target_os = "linux", feature = "capture")))]
        {
            drop(aec);
            Err(TtsError::Unavailable("read-aloud is played by the system, not the app".into()))
        }
    }
}

impl Drop for Speaker {
    fn drop(&mut self) {
        let _ = self.tx.send(Cmd::Shutdown);
        if let Some(j) = self.join.take() {
            let _ = j.join();
        }
    }
}

#[cfg(not(feature = "tts"))]
mod backend {
    use super::*;

    pub(super) fn run(engine: Engine) {
        let _ =
            engine.ready.send(Err(TtsError::Unavailable("hermes-voice was built without the `tts` feature".into())));
    }
}

#[cfg(feature = "tts")]
mod backend {
    use std::collections::HashSet;

    use super::*;

    fn utterance_key(id: &tts::UtteranceId) -> u64 {
        #[allow(unreachable_patterns)]
        match id {
            #[cfg(target_os = "linux")]
            tts::UtteranceId::SpeechDispatcher(n) => *n,
            #[cfg(windows)]
            tts::UtteranceId::WinRt(n) => *n,
            _ => {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                format!("{id:?}").hash(&mut h);
                h.finish()
            }
        }
    }

    fn failed(e: tts::Error) -> TtsError {
        TtsError::Failed(e.to_string())
    }

    fn voice_info(v: &tts::Voice) -> VoiceInfo {
        VoiceInfo { id: v.id(), name: v.name(), language: v.language().to_string() }
    }

    fn set_voice(t: &mut tts::Tts, want: &str) -> Result<(), TtsError> {
        let voices = t.voices().map_err(failed)?;
        let infos: Vec<VoiceInfo> = voices.iter().map(voice_info).collect();
        let at = pick_voice(&infos, want)
            .and_then(|p| infos.iter().position(|v| std::ptr::eq(v, p)))
            .ok_or_else(|| TtsError::Failed(format!("no voice \"{want}\"")))?;
        t.set_voice(&voices[at]).map_err(failed)
    }

    fn set_rate(t: &mut tts::Tts, rel: f32) -> Result<(), TtsError> {
        if !t.supported_features().rate {
            return Ok(());
        }
        let (min, normal, max) = (t.min_rate(), t.normal_rate(), t.max_rate());
        // Relative 1.0 → normal; 2.0 → max; 0.5 → min (piecewise linear in the engine's scale).
        let r = rel.clamp(0.5, 2.0);
        let v = if r >= 1.0 { normal + (max - normal) * (r - 1.0) } else { normal - (normal - min) * (1.0 - r) * 2.0 };
        t.set_rate(v.clamp(min, max)).map(|_| ()).map_err(failed)
    }

    pub(super) fn run(engine: Engine) {
        let Engine { config, on_event, tx, rx, speaking, ready } = engine;
        let mut t = match tts::Tts::default() {
            Ok(t) => t,
            Err(e) => {
                let _ = ready.send(Err(TtsError::Unavailable(e.to_string())));
                return;
            }
        };
        let features = t.supported_features();
        if features.utterance_callbacks {
            let (b, e) = (tx.clone(), tx.clone());
            let _ = t.on_utterance_begin(Some(Box::new(move |id| {
                let _ = b.send(Cmd::Begin(utterance_key(&id)));
            })));
            let _ = t.on_utterance_end(Some(Box::new(move |id| {
                let _ = e.send(Cmd::End(utterance_key(&id)));
            })));
        }
        drop(tx);
        // what "" in `set_voice` goes back to
        let default_voice = t.voice().ok().flatten();
        if let Some(v) = &config.voice
            && let Err(e) = set_voice(&mut t, v)
        {
            let _ = ready.send(Err(e));
            return;
        }
        if let Some(r) = config.rate {
            let _ = set_rate(&mut t, r);
        }
        let _ = ready.send(Ok(false));

        let emit = |e| on_event(e);
        let mut pending: HashSet<u64> = HashSet::new();
        let mut started = false;
        while let Ok(cmd) = rx.recv() {
            match cmd {
                Cmd::Speak(sentences) => {
                    for s in sentences {
                        match t.speak(s, false) {
                            Ok(Some(id)) => {
                                pending.insert(utterance_key(&id));
                            }
                            Ok(None) => {}
                            Err(e) => emit(SpeakerEvent::Error(failed(e))),
                        }
                    }
                    if !features.utterance_callbacks && !started {
                        // No callbacks from this engine: report the start at once.
                        started = true;
                        speaking.store(true, Ordering::Relaxed);
                        emit(SpeakerEvent::Started);
                    }
                }
                Cmd::Begin(id) => {
                    if pending.contains(&id) && !started {
                        started = true;
                        speaking.store(true, Ordering::Relaxed);
                        emit(SpeakerEvent::Started);
                    }
                }
                Cmd::End(id) => {
                    if pending.remove(&id) && pending.is_empty() && started {
                        started = false;
                        speaking.store(false, Ordering::Relaxed);
                        emit(SpeakerEvent::Ended);
                    }
                }
                Cmd::Stop => {
                    if let Err(e) = t.stop() {
                        emit(SpeakerEvent::Error(failed(e)));
                    }
                    let was = started || !pending.is_empty();
                    pending.clear();
                    started = false;
                    speaking.store(false, Ordering::Relaxed);
                    if was {
                        emit(SpeakerEvent::Stopped);
                    }
                }
                Cmd::SetRate(r) => {
                    if let Err(e) = set_rate(&mut t, r) {
                        emit(SpeakerEvent::Error(e));
                    }
                }
                Cmd::SetVoice(v, reply) => {
                    let r = match (v.is_empty(), &default_voice) {
                        (false, _) => set_voice(&mut t, &v),
                        (true, Some(d)) => t.set_voice(d).map_err(failed),
                        (true, None) => Ok(()),
                    };
                    let _ = reply.send(r);
                }
                Cmd::Voices(reply) => {
                    let _ = reply.send(t.voices().map(|vs| vs.iter().map(voice_info).collect()).map_err(failed));
                }
                Cmd::Failed(e) => emit(SpeakerEvent::Error(e)),
                #[cfg(all(target_os = "linux", feature = "capture"))]
                Cmd::Played(_) | Cmd::Reference(_) => {}
                Cmd::Shutdown => {
                    let _ = t.stop();
                    break;
                }
            }
        }
        speaking.store(false, Ordering::Relaxed);
        let _ = t.on_utterance_begin(None);
        let _ = t.on_utterance_end(None);
    }
}

#[cfg(all(target_os = "linux", feature = "capture"))]
mod own;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences() {
        assert_eq!(
            split_sentences("Hello there. How are you? I'm fine!  Thanks."),
            vec!["Hello there.", "How are you?", "I'm fine!", "Thanks."]
        );
        assert_eq!(split_sentences("  "), Vec::<String>::new());
        assert_eq!(split_sentences("no punctuation at all"), vec!["no punctuation at all."]);
    }

    #[test]
    fn markdown_is_cleaned() {
        let md = "# Result\n\nUse **bold** and `code`. See [the docs](https://x.y/z).\n\n```rust\nfn main() {}\n```\n- first item\n- second item\n";
        assert_eq!(
            split_sentences(md),
            vec!["Result.", "Use bold and code.", "See the docs.", "first item.", "second item."]
        );
    }

    #[cfg(not(feature = "tts"))]
    #[test]
    fn without_feature_is_unavailable() {
        assert!(matches!(Speaker::new(SpeakerConfig::default(), |_| {}), Err(TtsError::Unavailable(_))));
    }
}
