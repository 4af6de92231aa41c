//! The app's own read-aloud (Linux): sentences synthesised by the `espeak-ng` program on a thread of their own and
//! played through [`crate::player`], which hands the echo canceller what it plays.

use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use super::*;
use crate::espeak;
use crate::player::{PlayQueue, Player, PlayerEvent};

/// The output stream closes after this long with nothing to play and no canceller listening.
const CLOSE_IDLE_AFTER: Duration = Duration::from_secs(3);

/// The app plays read-aloud itself: asked for (`Playback::App`, `HERMES_TTS=app`) or, with `Playback::Auto`,
/// wherever eSpeak NG's program is installed and the system would read with it too — speech-dispatcher is not
/// installed, or its default module is espeak-ng (as it comes). Same voice, and the echo canceller gets exactly what
/// is played, before it is played: hands-free on speakers costs half as much and hears a barge-in sooner
/// (bench/README.md). A user who gave speech-dispatcher another voice (Festival, Piper…) keeps it.
pub(super) fn chosen(playback: Playback) -> bool {
    let no_system = || {
        std::process::Command::new("speech-dispatcher")
            .arg("--version")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_err()
    };
    let wanted = match playback {
        Playback::App => true,
        Playback::System => false,
        Playback::Auto => match std::env::var("HERMES_TTS").as_deref() {
            Ok("app") => true,
            Ok("speech-dispatcher" | "system") => false,
            _ => no_system() || system_voice_is_espeak(),
        },
    };
    wanted && espeak::available()
}

/// Does speech-dispatcher read with eSpeak NG (its default module, by its configuration)?
fn system_voice_is_espeak() -> bool {
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).ok();
    let config_home = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".config")));
    let user = config_home.and_then(|d| read(d.join("speech-dispatcher/speechd.conf")));
    let system = read("/etc/speech-dispatcher/speechd.conf".into());
    is_espeak(speechd_default_module(user.as_deref(), system.as_deref()).as_deref())
}

/// speech-dispatcher's default output module as its configuration names it: the user's file when there is one
/// (speech-dispatcher then reads only that one), else the system's; `None` where neither names one.
fn speechd_default_module(user: Option<&str>, system: Option<&str>) -> Option<String> {
    user.or(system)?
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let key = words.next()?;
            key.eq_ignore_ascii_case("DefaultModule").then(|| words.next()).flatten()
        })
        .next_back()
        .map(|m| m.trim_matches('"').to_string())
}

/// Is this module eSpeak NG's voices? `None`: speech-dispatcher's built-in default, which is espeak-ng.
fn is_espeak(module: Option<&str>) -> bool {
    matches!(module, None | Some("espeak-ng" | "espeak"))
}

fn resolve(voices: &[VoiceInfo], want: &str) -> Result<String, TtsError> {
    pick_voice(voices, want).map(|v| v.id.clone()).ok_or_else(|| TtsError::Failed(format!("no voice \"{want}\"")))
}

pub(super) fn run(engine: Engine) {
    let Engine { config, on_event, tx, rx, speaking, ready } = engine;
    let mut voices: Option<Vec<VoiceInfo>> = None;
    let all_voices = |cache: &mut Option<Vec<VoiceInfo>>| -> Result<Vec<VoiceInfo>, TtsError> {
        if cache.is_none() {
            *cache = Some(espeak::voices()?);
        }
        Ok(cache.clone().unwrap_or_default())
    };
    let mut voice: Option<String> = None;
    if let Some(want) = config.voice.as_deref().filter(|v| !v.is_empty()) {
        match all_voices(&mut voices).and_then(|vs| resolve(&vs, want)) {
            Ok(v) => voice = Some(v),
            Err(e) => {
                let _ = ready.send(Err(e));
                return;
            }
        }
    }
    let mut wpm = config.rate.map_or(espeak::NORMAL_WPM, espeak::wpm);
    let queue = PlayQueue::default();

    // the synthesis on a thread of its own, so that a stop is heard while a sentence is being made
    let (synth_tx, synth_rx) = mpsc::channel::<(u64, String, Option<String>, u32)>();
    let (q, failed) = (queue.clone(), tx.clone());
    let synth = std::thread::Builder::new().name("hermes-voice-synth".into()).spawn(move || {
        for (generation, text, voice, wpm) in synth_rx {
            if !q.is_current(generation) {
                continue;
            }
            match espeak::synthesize(&text, voice.as_deref(), wpm) {
                Ok(pcm) => q.push(generation, Some((pcm.samples, pcm.rate))),
                Err(e) => {
                    q.push(generation, None);
                    let _ = failed.send(Cmd::Failed(e));
                }
            }
        }
    });
    let synth = match synth {
        Ok(j) => j,
        Err(e) => {
            let _ = ready.send(Err(TtsError::Failed(e.to_string())));
            return;
        }
    };
    let _ = ready.send(Ok(true));

    let emit = |e| on_event(e);
    let mut player: Option<Player> = None;
    let mut idle_since: Option<Instant> = None;
    let open = |player: &mut Option<Player>| -> Result<(), TtsError> {
        if player.is_none() {
            let tx = tx.clone();
            let p = Player::open(queue.clone(), move |e| {
                let _ = tx.send(Cmd::Played(e));
            })
            .map_err(|e| TtsError::Failed(format!("cannot play read-aloud: {e}")))?;
            *player = Some(p);
        }
        Ok(())
    };
    loop {
        let cmd = match rx.recv_timeout(Duration::from_millis(500)) {
            Ok(c) => c,
            Err(RecvTimeoutError::Timeout) => {
                // nothing to play and nobody listening: the stream goes (waiting costs nothing)
                if player.is_some() && queue.is_idle() && !queue.has_reference() {
                    let since = *idle_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= CLOSE_IDLE_AFTER {
                        player = None;
                        idle_since = None;
                    }
                } else {
                    idle_since = None;
                }
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => break,
        };
        match cmd {
            Cmd::Speak(sentences) => {
                idle_since = None;
                if let Err(e) = open(&mut player) {
                    emit(SpeakerEvent::Error(e));
                    continue;
                }
                let generation = queue.expect(sentences.len());
                for s in sentences {
                    let _ = synth_tx.send((generation, s, voice.clone(), wpm));
                }
            }
            Cmd::Played(PlayerEvent::Started) => {
                // (a stop may have come between the callback and here)
                if !queue.is_idle() && !speaking.swap(true, Ordering::Relaxed) {
                    emit(SpeakerEvent::Started);
                }
            }
            Cmd::Played(PlayerEvent::Ended) => {
                if speaking.swap(false, Ordering::Relaxed) {
                    emit(SpeakerEvent::Ended);
                }
            }
            Cmd::Played(PlayerEvent::Failed) => {
                // the output went away: a new stream on the next sentence (or now, for a listening canceller)
                player = None;
                let was = queue.stop() | speaking.swap(false, Ordering::Relaxed);
                if was {
                    emit(SpeakerEvent::Stopped);
                }
                emit(SpeakerEvent::Error(TtsError::Failed("the audio output went away".into())));
                if queue.has_reference() {
                    let _ = open(&mut player);
                }
            }
            Cmd::Stop => {
                let was = queue.stop() | speaking.swap(false, Ordering::Relaxed);
                if was {
                    // (the server's buffer too: the speakers fall silent now, not 40 ms later)
                    if let Some(p) = &player {
                        queue.flushed(p.flush());
                    }
                    emit(SpeakerEvent::Stopped);
                }
            }
            Cmd::SetRate(r) => wpm = espeak::wpm(r),
            Cmd::SetVoice(v, reply) => {
                let r = if v.is_empty() {
                    voice = None;
                    Ok(())
                } else {
                    all_voices(&mut voices).and_then(|vs| resolve(&vs, &v)).map(|id| voice = Some(id))
                };
                let _ = reply.send(r);
            }
            Cmd::Voices(reply) => {
                let _ = reply.send(all_voices(&mut voices));
            }
            Cmd::Reference(sink) => {
                let on = sink.is_some();
                queue.set_reference(sink);
                if on && let Err(e) = open(&mut player) {
                    emit(SpeakerEvent::Error(e));
                }
            }
            Cmd::Failed(e) => emit(SpeakerEvent::Error(e)),
            Cmd::Begin(_) | Cmd::End(_) => {}
            Cmd::Shutdown => break,
        }
    }
    queue.stop();
    queue.set_reference(None);
    speaking.store(false, Ordering::Relaxed);
    drop(player);
    drop(synth_tx);
    let _ = synth.join();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_voice_is_espeak_unless_speech_dispatcher_was_given_another() {
        let debian = "# The DefaultModule selects which output module is the default.\n#DefaultModule espeak-ng\n";
        let festival = "AudioOutputMethod pulse\n  DefaultModule   \"festival\"\n";
        let espeak = "DefaultModule espeak-ng\n";
        let module = speechd_default_module;
        // as it comes: nothing named, the built-in default
        assert_eq!(module(None, Some(debian)), None);
        assert!(is_espeak(module(None, Some(debian)).as_deref()));
        assert!(is_espeak(module(None, None).as_deref()));
        // the system's file names another module; the user's file, when there is one, is the only one read
        assert_eq!(module(None, Some(festival)).as_deref(), Some("festival"));
        assert!(!is_espeak(module(None, Some(festival)).as_deref()));
        assert!(is_espeak(module(Some(espeak), Some(festival)).as_deref()));
        assert!(!is_espeak(module(Some(festival), Some(espeak)).as_deref()));
        assert!(is_espeak(module(Some("defaultmodule espeak"), None).as_deref()));
        // the last line that names one counts; mbrola's voices are not eSpeak's
        assert_eq!(module(Some("DefaultModule festival\nDefaultModule rhvoice\n"), None).as_deref(), Some("rhvoice"));
        assert!(!is_espeak(Some("espeak-ng-mbrola")));
    }
}
