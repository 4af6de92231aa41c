//! Hands-free's side of the shell: the echo canceller's reference recording, the listener's and the live input's
//! events to the page, and the microphone's state for the tray (with its "Stop listening").

use std::sync::Arc;

use hermes_voice::aec::{AecOptions, SharedEchoCanceller};
use hermes_voice::capture::{Recorder, RecorderConfig, Recording};
use hermes_voice::listener::ListenerEvent;
use hermes_voice::live::InputChange;
use hermes_voice::tts::Speaker;
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager};

use super::{Listening, VoiceClip, VoiceEvent, VoiceState};

/// The tray shows whether the microphone is open.
pub(super) fn set_listening(app: &AppHandle, now: Option<Listening>) {
    let Some(st) = app.try_state::<VoiceState>() else { return };
    let changed = st.listening.lock().map(|mut g| std::mem::replace(&mut *g, now) != now).unwrap_or(false);
    if changed {
        crate::tray::refresh(app);
    }
}

/// Hands-free's device changes, to the page (a message it shows until the microphone is back) and the tray; the
/// echo canceller starts its microphone afresh after the gap.
pub(super) fn input_changes(
    app: AppHandle,
    ch: Channel<VoiceEvent>,
    named: Option<String>,
    aec: Option<SharedEchoCanceller>,
) -> impl Fn(InputChange) + Send + 'static {
    move |c| match c {
        InputChange::Lost(e) => {
            tracing::warn!("hands-free: the microphone went away ({e}); listening again when it is back");
            set_listening(&app, Some(Listening { hands_free: true, lost: true }));
            let _ = ch.send(VoiceEvent::MicLost { message: mic_lost_message(named.as_deref()) });
        }
        InputChange::Resumed { device, after_loss } => {
            tracing::info!(%device, after_loss, "hands-free: listening again");
            if let Some(a) = &aec {
                a.resync();
            }
            set_listening(&app, Some(Listening { hands_free: true, lost: false }));
            let _ = ch.send(VoiceEvent::MicBack { device, after_loss });
        }
        _ => {}
    }
}

/// What the page shows while hands-free waits for its microphone.
pub fn mic_lost_message(named: Option<&str>) -> String {
    match named {
        Some(d) => format!(
            "The microphone \"{d}\" was disconnected. Hands-free listens again as soon as it is back — or choose \
             another one in Settings → Voice."
        ),
        None => "The microphone was disconnected. Hands-free listens again as soon as a microphone is connected."
            .to_string(),
    }
}

/// What feeds the echo canceller what the speakers play.
pub(super) enum EchoReference {
    /// The app plays read-aloud itself and hands the canceller each period before it is played.
    Player(Arc<Speaker>),
    /// The system TTS plays it: a recording of the default output's monitor.
    Monitor(Recording),
}

impl EchoReference {
    pub(super) fn end(self) {
        match self {
            EchoReference::Player(s) => {
                let _ = s.set_echo_reference(None);
            }
            EchoReference::Monitor(r) => r.cancel(),
        }
    }
}

/// The echo canceller for hands-free and what feeds it: the app's own read-aloud when `speaker` plays itself, else
/// a recording of the default output's monitor. `None`, and hands-free listens without it, where neither can be had.
pub(super) fn start_echo_reference(
    opts: AecOptions,
    speaker: Option<Arc<Speaker>>,
) -> Option<(SharedEchoCanceller, EchoReference)> {
    if let Some(sp) = speaker.filter(|s| s.plays_itself()) {
        let aec = SharedEchoCanceller::ahead_of_playback(opts);
        dump_if_asked(&aec);
        match sp.set_echo_reference(Some(aec.clone())) {
            Ok(()) => {
                tracing::info!(
                    noise_suppression = opts.noise_suppression,
                    "hands-free with echo cancellation (read-aloud played by the app)"
                );
                return Some((aec, EchoReference::Player(sp)));
            }
            Err(e) => tracing::warn!("the app's read-aloud cannot feed the echo canceller ({e}): trying the monitor"),
        }
    }
    let Some(monitor) = hermes_voice::capture::playback_monitor() else {
        tracing::info!("no output monitor (PulseAudio/PipeWire): hands-free without echo cancellation");
        return None;
    };
    let aec = SharedEchoCanceller::new(opts);
    dump_if_asked(&aec);
    let feed = aec.clone();
    let config = RecorderConfig { keep_samples: false, ..RecorderConfig::default() };
    match Recorder::with_config(config).on_samples(move |block| feed.render(block)).start(Some(&monitor)) {
        Ok(rec) => {
            tracing::info!(%monitor, noise_suppression = opts.noise_suppression, "hands-free with echo cancellation");
            Some((aec, EchoReference::Monitor(rec)))
        }
        Err(e) => {
            tracing::warn!(%monitor, "cannot record the output monitor ({e}): hands-free without echo cancellation");
            None
        }
    }
}

/// `HERMES_AEC_DUMP=<folder>`: each hands-free session's echo canceller input goes to a file there
/// (`aec-<unix ms>.dump`), to be replayed with `hermes-voice`'s `aec_replay` example. A diagnostic for a self-trigger
/// or a slow barge-in: it holds what the microphone heard, so only when asked for.
fn dump_if_asked(aec: &SharedEchoCanceller) {
    let Some(dir) = std::env::var_os("HERMES_AEC_DUMP").filter(|d| !d.is_empty()) else { return };
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let path = std::path::Path::new(&dir).join(format!("aec-{ms}.dump"));
    match aec.dump_to(&path) {
        Ok(()) => tracing::info!(path = %path.display(), "the echo canceller's input goes to a dump"),
        Err(e) => tracing::warn!(path = %path.display(), "cannot write the echo canceller's dump: {e}"),
    }
}

/// What the hands-free listener reports, to the UI's Channel; barge-in also stops read-aloud at once. Speech that
/// begins while the playback is audible, and every barge-in, go to the log with what the echo canceller was doing
/// (`aec`): a barge-in on the app's own voice is read from there.
pub(super) fn hands_free_events(
    app: AppHandle,
    ch: Channel<VoiceEvent>,
    aec: Option<SharedEchoCanceller>,
) -> impl FnMut(ListenerEvent) + Send + 'static {
    let log = move |what: &'static str| {
        let Some(st) = aec.as_ref().map(SharedEchoCanceller::stats) else { return };
        if what == "barge-in" || st.far_rms > hermes_voice::aec::AUDIBLE_RMS {
            tracing::info!(
                delay_ms = ?st.delay_ms,
                erle_db = ?st.erle_db.map(|e| (e * 10.0).round() / 10.0),
                far_rms = st.far_rms.round(),
                heard_ms = st.heard_ms,
                gated_ms = st.gated_ms,
                held_ms = st.held_ms,
                unreferenced_ms = st.unreferenced_ms,
                "hands-free: {what} while the canceller runs"
            );
        }
    };
    move |ev| match ev {
        ListenerEvent::SpeechStart => {
            log("speech began");
            let _ = ch.send(VoiceEvent::SpeechStart);
        }
        ListenerEvent::BargeIn => {
            // (the canceller's state as it stood: the playback's level goes once read-aloud stops)
            log("barge-in");
            if let Some(st) = app.try_state::<VoiceState>() {
                st.stop_speaking();
            }
            let _ = ch.send(VoiceEvent::BargeIn);
        }
        ListenerEvent::Utterance(clips) => {
            let _ = ch.send(VoiceEvent::Utterance { clips: clips.into_iter().map(VoiceClip::from).collect() });
        }
        // what began was not an utterance after all, or could not be kept: the page stops showing it is hearing one
        ListenerEvent::Discarded => {
            let _ = ch.send(VoiceEvent::SpeechEnd);
        }
        ListenerEvent::WriteFailed(e) => {
            tracing::warn!("cannot write an utterance: {e}");
            let _ = ch.send(VoiceEvent::SpeechEnd);
        }
        _ => {}
    }
}

/// The tray's "Stop listening": ends push-to-talk or hands-free without sending, and tells the page.
pub fn stop_listening(app: &AppHandle) {
    let Some(state) = app.try_state::<VoiceState>() else { return };
    let active = state.active.lock().ok().and_then(|mut g| g.take());
    set_listening(app, None);
    if let Some(a) = active {
        let events = a.events.clone();
        // called from the tray's menu on the main thread: closing the streams waits for their threads
        let spawned = std::thread::Builder::new().name("hermes-voice-stop".into()).spawn(move || {
            a.cancel();
            let _ = events.send(VoiceEvent::Stopped);
        });
        if let Err(e) = spawned {
            tracing::warn!("cannot stop listening: {e}");
        }
    }
}
