//! Voice in the shell (A-23…A-25): the microphone (push-to-talk and hands-free), the push-to-talk global shortcut,
//! read-aloud, and the settings they share. Thin: capture, WAV, VAD, hands-free listening and TTS live in
//! `hermes-voice`; this is their Tauri side (commands, Channel and events, managed state).
//!
//! Flow: the UI calls `voice_start` with a Channel for levels (~30/s) and hands-free utterances; `voice_stop` writes
//! the finished clip(s) as WAV files in the app's temp folder (≤ 8 MiB each, A-24) and, given a [`VoiceSendTo`],
//! hands them to the profile's engine as `audio` commands itself — key-up to frame is one IPC call, not two round
//! trips through the page — and returns them with the ids they were sent under, for the UI's local echo (a voice
//! note). Hands-free utterances arrive on the Channel and the UI sends them. The global shortcut only reports
//! pressed/released to the UI, so the button and the shortcut share one path.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hermes_voice::aec::{AecOptions, SharedEchoCanceller};
use hermes_voice::capture::{CaptureError, CaptureEvent, MAX_WAV_BYTES, Recorder, RecorderConfig, Recording};
use hermes_voice::clip::{Clip, ClipError};
use hermes_voice::listener::Listener;
use hermes_voice::live::LiveInput;
use hermes_voice::tts::{Playback, Speaker, SpeakerConfig, SpeakerEvent};
use hermes_voice::vad::{Segmenter, SegmenterConfig};
use serde::{Deserialize, Serialize};
use specta::Type;
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};
use tauri_specta::Event as _;

use crate::error::{AppError, AppResult, ErrorCode};

mod hands_free;
mod send;
use hands_free::{EchoReference, hands_free_events, input_changes, set_listening, start_echo_reference};
pub use hands_free::{mic_lost_message, stop_listening};
pub use send::VoiceSendTo;
use send::send_clips;

/// Push-to-talk clips may run past one message: capture up to four messages' worth, then split.
const MAX_PTT_BYTES: usize = 4 * MAX_WAV_BYTES;
/// The default push-to-talk shortcut (held anywhere, also with the window in the background).
pub const DEFAULT_SHORTCUT: &str = "CommandOrControl+Shift+Space";
const SETTINGS_FILE: &str = "voice-settings.json";

/* ---------- IPC types ---------- */

/// Voice settings, remembered per machine (a JSON file in the data folder).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(rename_all = "camelCase", default)]
pub struct VoiceSettings {
    /// The chosen microphone (name as listed); `null` follows the system default.
    pub device: Option<String>,
    /// The push-to-talk global shortcut (e.g. `CommandOrControl+Shift+Space`); `null` disables it.
    pub shortcut: Option<String>,
    /// Hands-free: the silence that ends an utterance (ms).
    pub end_silence_ms: u32,
    /// Read-aloud voice (id, name or language tag); `null` for the system default.
    pub tts_voice: Option<String>,
    /// Read-aloud rate (1.0 = normal).
    pub tts_rate: f32,
    /// Hands-free: remove the app's own read-aloud voice from the microphone (echo cancellation, with what the
    /// speakers play as the reference), so that it neither starts an utterance nor barges in on itself. Needs an
    /// output monitor (PulseAudio or PipeWire); without one hands-free listens as before.
    pub echo_cancellation: bool,
    /// Hands-free: WebRTC's noise suppression on the microphone (with echo cancellation).
    pub noise_suppression: bool,
}

impl Default for VoiceSettings {
    fn default() -> Self {
        VoiceSettings {
            device: None,
            shortcut: Some(DEFAULT_SHORTCUT.into()),
            end_silence_ms: 600,
            tts_voice: None,
            tts_rate: 1.0,
            echo_cancellation: true,
            noise_suppression: true,
        }
    }
}

impl VoiceSettings {
    /// Clamp to sane ranges and drop blanks.
    pub fn normalized(mut self) -> Self {
        let blank = |s: Option<String>| s.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        self.device = blank(self.device);
        self.shortcut = blank(self.shortcut);
        self.tts_voice = blank(self.tts_voice);
        self.end_silence_ms = self.end_silence_ms.clamp(200, 3000);
        self.tts_rate = if self.tts_rate.is_finite() { self.tts_rate.clamp(0.5, 2.0) } else { 1.0 };
        self
    }

    /// Read from `dir`; a missing or broken file gives the defaults.
    pub fn load(dir: &Path) -> Self {
        crate::settings::read_json::<VoiceSettings>(dir, SETTINGS_FILE).normalized()
    }

    /// Write to `dir` atomically (temp file + rename).
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        crate::settings::write_json(dir, SETTINGS_FILE, self)
    }
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct VoiceDevice {
    pub name: String,
    pub id: String,
    pub is_default: bool,
}

#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct VoiceDevices {
    /// `PulseAudio` or `ALSA` on Linux.
    pub host: String,
    pub devices: Vec<VoiceDevice>,
    /// The remembered choice (`null`: the system default).
    pub selected: Option<String>,
    /// The remembered device is not connected now.
    pub selected_missing: bool,
    /// Listing failed (no audio system): a message for the user.
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum VoiceMode {
    /// Record while held; `voice_stop` returns the clip.
    PushToTalk,
    /// Listen continuously; every utterance arrives as [`VoiceEvent::Utterance`].
    HandsFree,
}

/// A finished clip: a 16 kHz mono PCM16 WAV of at most 8 MiB, ready for an `audio` command.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct VoiceClip {
    /// Its token (`crate::grants`), for `send_command`'s `audio` and `file_url`.
    pub path: String,
    pub secs: f64,
    pub size: u32,
    /// Sent by `voice_stop` (a [`VoiceSendTo`] was given): the message id the engine took it under.
    pub id: Option<String>,
    /// Sent by `voice_stop` but refused (not connected, over the agent's limit…): nothing went out; the UI shows the
    /// echo as failed, with retry.
    pub error: Option<AppError>,
}

/// What a running recording tells the UI (over the Channel given to `voice_start`).
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum VoiceEvent {
    /// Microphone level 0..1, ~30 per second (the ring around the mic button, the avatar's `setVolume`).
    Level { level: f32 },
    /// Hands-free: speech began.
    SpeechStart,
    /// Hands-free: the speech that began ended without an utterance (too short — a cough, a click — or it could not
    /// be written).
    SpeechEnd,
    /// Hands-free: the user talks over read-aloud — it was stopped (stop agent voice notes too).
    BargeIn,
    /// Hands-free: one utterance, ready to send.
    Utterance { clips: Vec<VoiceClip> },
    /// The microphone failed (unplugged…): recording has ended.
    Error { code: ErrorCode, message: String },
    /// Hands-free: the microphone went away; listening goes on by itself when it is back (`MicBack`).
    MicLost { message: String },
    /// Hands-free: listening again on `device`, after a loss or because the system default input changed.
    MicBack { device: String, after_loss: bool },
    /// Listening was ended from outside the page (the tray's "Stop listening").
    Stopped,
}

/// The push-to-talk shortcut was pressed or released (also while the window is in the background).
#[derive(Debug, Clone, PartialEq, Serialize, Type, tauri_specta::Event)]
pub struct PushToTalk {
    pub pressed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum TtsState {
    Started,
    Ended,
    Stopped,
    Error,
}

/// Read-aloud started / ended / was stopped (drives the avatar's `speaking` state).
#[derive(Debug, Clone, PartialEq, Serialize, Type, tauri_specta::Event)]
pub struct TtsEvent {
    pub state: TtsState,
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct TtsVoice {
    pub id: String,
    pub name: String,
    pub language: String,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct TtsStatus {
    pub available: bool,
    /// Why not (for the settings page).
    pub detail: Option<String>,
    pub voices: Vec<TtsVoice>,
}

/* ---------- state ---------- */

/// The microphone as it is open: a push-to-talk recording, or hands-free listening that outlives its device.
enum Input {
    Ptt(Recording),
    Live(LiveInput),
}

impl Input {
    fn end(self) {
        match self {
            Input::Ptt(r) => r.cancel(),
            Input::Live(l) => l.stop(),
        }
    }
}

struct Active {
    mode: VoiceMode,
    input: Input,
    /// Hands-free: the VAD and clip writer fed by the recording.
    listener: Option<Listener>,
    /// Hands-free with echo cancellation: where the canceller's reference comes from (what the speakers play).
    reference: Option<EchoReference>,
    /// The page's Channel (the tray's "Stop listening" tells it).
    events: Channel<VoiceEvent>,
}

impl Active {
    /// Stop without sending anything: the listener reports nothing more, the recording ends, then the listener.
    fn cancel(self) {
        if let Some(l) = &self.listener {
            l.cancel();
        }
        if let Some(r) = self.reference {
            r.end();
        }
        self.input.end();
        if let Some(l) = self.listener {
            l.finish();
        }
    }
}

/// The microphone is open: what the tray shows (and offers to stop).
pub use hermes_app::dashboard::Listening;

/// Managed state of the voice features.
pub struct VoiceState {
    dir: PathBuf,
    tmp_dir: PathBuf,
    settings: Mutex<VoiceSettings>,
    active: Mutex<Option<Active>>,
    speaker: Mutex<Option<Result<Arc<Speaker>, String>>>,
    /// The voice and rate the speaker was last set to by `tts_speak` (`None`: as configured at its start).
    applied_voice: Mutex<Option<(Option<String>, f32)>>,
    /// The microphone is open (for the tray).
    listening: Mutex<Option<Listening>>,
}

impl VoiceState {
    pub fn new(data_dir: &Path, tmp_dir: &Path) -> Self {
        VoiceState {
            dir: data_dir.to_path_buf(),
            tmp_dir: tmp_dir.to_path_buf(),
            settings: Mutex::new(VoiceSettings::load(data_dir)),
            active: Mutex::new(None),
            speaker: Mutex::new(None),
            applied_voice: Mutex::new(None),
            listening: Mutex::new(None),
        }
    }

    /// Whether (and how) the microphone is open now.
    pub fn listening(&self) -> Option<Listening> {
        self.listening.lock().ok().and_then(|g| *g)
    }

    pub fn settings(&self) -> VoiceSettings {
        self.settings.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Read-aloud's speaker, made on first use (the app's own player, or the system TTS: speech-dispatcher may need a
    /// moment to spawn).
    fn speaker(&self, app: &AppHandle) -> Result<Arc<Speaker>, String> {
        let mut g = self.speaker.lock().map_err(|e| e.to_string())?;
        if let Some(s) = g.as_ref() {
            return s.clone();
        }
        let set = self.settings();
        let app2 = app.clone();
        let config = SpeakerConfig { voice: set.tts_voice.clone(), rate: Some(set.tts_rate), playback: Playback::Auto };
        let made = Speaker::new(config, move |ev| {
            let (state, detail) = match ev {
                SpeakerEvent::Started => (TtsState::Started, None),
                SpeakerEvent::Ended => (TtsState::Ended, None),
                SpeakerEvent::Stopped => (TtsState::Stopped, None),
                SpeakerEvent::Error(e) => (TtsState::Error, Some(e.to_string())),
                _ => return,
            };
            let _ = TtsEvent { state, detail }.emit(&app2);
        })
        .map(Arc::new)
        .map_err(|e| e.to_string());
        if let Err(e) = &made {
            tracing::warn!("read-aloud unavailable: {e}");
        }
        *g = Some(made.clone());
        made
    }

    fn stop_speaking(&self) {
        if let Ok(g) = self.speaker.lock()
            && let Some(Ok(s)) = g.as_ref()
        {
            let _ = s.stop();
        }
    }
}

/* ---------- pure helpers (tested) ---------- */

/// Stable codes for the UI (its texts are translated there).
pub fn capture_error(e: &CaptureError) -> AppError {
    let code = match e {
        CaptureError::NoDevice => ErrorCode::NoMicrophone,
        CaptureError::DeviceNotFound(_) => ErrorCode::MicrophoneNotFound,
        CaptureError::Open(_) => ErrorCode::MicrophoneBusy,
        CaptureError::DeviceLost(_) => ErrorCode::MicrophoneLost,
        CaptureError::TooShort { .. } => ErrorCode::TooShort,
        _ => ErrorCode::AudioFailed,
    };
    AppError::new(code, e.to_string())
}

/// 16 kHz mono samples → WAV parts of at most `max_bytes`, written into `dir` as `voice-….wav`.
pub fn write_clips(samples: &[i16], dir: &Path, max_bytes: usize) -> AppResult<Vec<VoiceClip>> {
    match hermes_voice::clip::write_clips(samples, dir, max_bytes) {
        Ok(clips) => Ok(clips.into_iter().map(VoiceClip::from).collect()),
        Err(ClipError::Io(e)) => Err(e.into()),
        Err(e) => Err(AppError::internal(e.to_string())),
    }
}

impl From<Clip> for VoiceClip {
    fn from(c: Clip) -> Self {
        // the page names the clip by a token (grants.rs); a clip already gone has none
        let path = crate::grants::global().grant(&c.path, crate::grants::Purpose::Recorded).unwrap_or_default();
        VoiceClip { path, secs: c.secs, size: c.size, id: None, error: None }
    }
}

/* ---------- commands ---------- */

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> AppResult<T> {
    tauri::async_runtime::spawn_blocking(f).await.map_err(|e| AppError::internal(e.to_string()))
}

#[tauri::command]
#[specta::specta]
pub async fn voice_devices(state: State<'_, VoiceState>) -> AppResult<VoiceDevices> {
    let selected = state.settings().device;
    let host = hermes_voice::capture::host_name().to_string();
    let listed = blocking(hermes_voice::capture::list_input_devices).await?;
    Ok(match listed {
        Ok(list) => {
            let devices: Vec<VoiceDevice> =
                list.into_iter().map(|d| VoiceDevice { name: d.name, id: d.id, is_default: d.is_default }).collect();
            let selected_missing =
                selected.as_ref().is_some_and(|s| !devices.iter().any(|d| &d.name == s || &d.id == s));
            VoiceDevices { host, devices, selected, selected_missing, error: None }
        }
        Err(e) => VoiceDevices { host, devices: vec![], selected, selected_missing: false, error: Some(e.to_string()) },
    })
}

#[tauri::command]
#[specta::specta]
pub fn voice_settings(state: State<'_, VoiceState>) -> VoiceSettings {
    state.settings()
}

#[tauri::command]
#[specta::specta]
pub async fn voice_save_settings(
    app: AppHandle,
    state: State<'_, VoiceState>,
    settings: VoiceSettings,
) -> AppResult<VoiceSettings> {
    let new = settings.normalized();
    if let Some(s) = &new.shortcut {
        crate::shortcuts::parse(s)?;
    }
    let keys = crate::shortcuts::Keys { push_to_talk: new.shortcut.clone(), ..crate::shortcuts::saved(&app) };
    keys.check()?;
    let old = state.settings();
    new.save(&state.dir)?;
    *state.settings.lock()? = new.clone();
    if old.shortcut != new.shortcut {
        crate::shortcuts::apply_saved(&app)?;
    }
    if (old.tts_voice != new.tts_voice || old.tts_rate != new.tts_rate)
        && let Ok(g) = state.speaker.lock()
        && let Some(Ok(sp)) = g.as_ref()
    {
        let _ = sp.set_rate(new.tts_rate);
        let _ = sp.set_voice(new.tts_voice.as_deref().unwrap_or(""));
        // the next reply applies its agent's own voice again if it has one
        if let Ok(mut a) = state.applied_voice.lock() {
            *a = None;
        }
    }
    Ok(new)
}

/// Start recording from the chosen (or default) microphone. A recording already running is discarded first.
#[tauri::command]
#[specta::specta]
pub async fn voice_start(
    app: AppHandle,
    state: State<'_, VoiceState>,
    mode: VoiceMode,
    on_event: Channel<VoiceEvent>,
) -> AppResult<String> {
    cancel_active(&app, &state);
    let set = state.settings();
    let ch = on_event.clone();
    let app_ev = app.clone();
    // Hands-free keeps no samples: they only go to the listener (memory stays flat, no size limit).
    let keep_samples = mode == VoiceMode::PushToTalk;
    let config = RecorderConfig { max_wav_bytes: MAX_PTT_BYTES, keep_samples, ..RecorderConfig::default() };
    let mut recorder = Recorder::with_config(config).on_event(move |ev| match ev {
        CaptureEvent::Level(level) => {
            let _ = ch.send(VoiceEvent::Level { level });
        }
        CaptureEvent::Error(e) => {
            // push-to-talk only (hands-free turns errors into `MicLost`): the recording has ended
            let err = capture_error(&e);
            set_listening(&app_ev, None);
            let _ = ch.send(VoiceEvent::Error { code: err.code, message: err.message });
        }
        _ => {}
    });
    let mut listener = None;
    let mut reference = None;
    let mut resync: Option<SharedEchoCanceller> = None;
    if mode == VoiceMode::HandsFree {
        let aec = if set.echo_cancellation {
            let opts = AecOptions { noise_suppression: set.noise_suppression };
            // read-aloud played by the app itself hands the canceller its reference; else the output's monitor
            let speaker = state.speaker(&app).ok();
            blocking(move || start_echo_reference(opts, speaker)).await?
        } else {
            None
        };
        let mut cfg = SegmenterConfig {
            end_silence: Duration::from_millis(u64::from(set.end_silence_ms)),
            ..SegmenterConfig::default()
        };
        if aec.is_some() {
            // the app's own voice is out of the microphone: barge in on less of the user's (the 300 ms goal)
            cfg.barge_in_after = hermes_voice::aec::BARGE_IN_AFTER;
        }
        let events = hands_free_events(app.clone(), on_event.clone(), aec.as_ref().map(|(a, _)| a.clone()));
        let l = Listener::start(Segmenter::new(cfg), &state.tmp_dir, events)?;
        let sink = l.sink();
        recorder = match aec {
            Some((aec, rec)) => {
                reference = Some(rec);
                resync = Some(aec.clone());
                recorder.on_samples(move |block| {
                    let clean = aec.capture(block);
                    if !clean.is_empty() {
                        sink(&clean);
                    }
                })
            }
            None => recorder.on_samples(sink),
        };
        listener = Some(l);
    }
    let device = set.device.clone();
    let started = match mode {
        VoiceMode::PushToTalk => blocking(move || recorder.start(device.as_deref()).map(Input::Ptt)).await?,
        VoiceMode::HandsFree => {
            let on_change = input_changes(app.clone(), on_event.clone(), set.device.clone(), resync);
            blocking(move || recorder.start_live(device.as_deref(), on_change).map(Input::Live)).await?
        }
    };
    let input = match started {
        Ok(r) => r,
        Err(e) => {
            if let Some(l) = listener {
                l.cancel();
            }
            if let Some(r) = reference {
                r.end();
            }
            return Err(match (&e, &set.device) {
                (CaptureError::DeviceNotFound(_), Some(d)) => AppError::new(
                    ErrorCode::MicrophoneNotFound,
                    format!(
                        "The microphone \"{d}\" is not connected. Plug it in, or choose another one in Settings → Voice."
                    ),
                ),
                _ => capture_error(&e),
            });
        }
    };
    let name = match &input {
        Input::Ptt(r) => r.device().to_string(),
        Input::Live(l) => l.device().unwrap_or_default(),
    };
    tracing::info!(device = %name, ?mode, "recording");
    *state.active.lock()? = Some(Active { mode, input, listener, reference, events: on_event });
    set_listening(&app, Some(Listening { hands_free: mode == VoiceMode::HandsFree, lost: false }));
    Ok(name)
}

fn cancel_active(app: &AppHandle, state: &VoiceState) {
    if let Some(a) = state.active.lock().ok().and_then(|mut g| g.take()) {
        a.cancel();
    }
    set_listening(app, None);
}

/// Stop: push-to-talk returns the clip(s) (an error `too_short` for < 300 ms) — sent already when `send` names the
/// profile (each clip's `id`, or its `error` if the engine refused it); hands-free ends listening (an utterance in
/// progress still arrives on the Channel) and returns nothing.
#[tauri::command]
#[specta::specta]
pub async fn voice_stop(
    app: AppHandle,
    state: State<'_, VoiceState>,
    app_state: State<'_, crate::state::AppState>,
    send: Option<VoiceSendTo>,
) -> AppResult<Vec<VoiceClip>> {
    let Some(active) = state.active.lock()?.take() else {
        set_listening(&app, None);
        return Err(AppError::new(ErrorCode::NotRecording, "nothing is being recorded"));
    };
    set_listening(&app, None);
    let tmp = state.tmp_dir.clone();
    let mut clips = blocking(move || match active.mode {
        VoiceMode::PushToTalk => {
            let t = std::time::Instant::now();
            let Input::Ptt(recording) = active.input else {
                return Err(AppError::internal("push-to-talk without its recording"));
            };
            let samples = recording.stop_samples().map_err(|e| capture_error(&e))?;
            let stopped = t.elapsed();
            let clips = write_clips(&samples, &tmp, MAX_WAV_BYTES)?;
            tracing::info!(
                secs = samples.len() as f64 / 16_000.0,
                parts = clips.len(),
                stop_ms = stopped.as_secs_f64() * 1000.0,
                wav_ms = (t.elapsed() - stopped).as_secs_f64() * 1000.0,
                "voice clip ready"
            );
            Ok::<_, AppError>(clips)
        }
        VoiceMode::HandsFree => {
            // The recording's end drops its sample sink: the listener then sends the utterance in progress.
            active.input.end();
            if let Some(r) = active.reference {
                r.end();
            }
            if let Some(l) = active.listener {
                l.finish();
            }
            Ok(vec![])
        }
    })
    .await??;
    if let Some(to) = send {
        send_clips(&app_state, to, &mut clips).await;
    }
    Ok(clips)
}

/// Esc: stop without sending anything.
#[tauri::command]
#[specta::specta]
pub async fn voice_cancel(app: AppHandle, state: State<'_, VoiceState>) -> AppResult<()> {
    let prev = state.active.lock()?.take();
    set_listening(&app, None);
    if let Some(a) = prev {
        blocking(move || a.cancel()).await?;
    }
    Ok(())
}

#[tauri::command]
#[specta::specta]
pub async fn tts_status(app: AppHandle) -> AppResult<TtsStatus> {
    blocking(move || {
        let st = app.state::<VoiceState>();
        match st.speaker(&app) {
            Ok(sp) => TtsStatus {
                available: true,
                detail: None,
                voices: sp
                    .voices()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|v| TtsVoice { id: v.id, name: v.name, language: v.language })
                    .collect(),
            },
            Err(e) => TtsStatus { available: false, detail: Some(e), voices: vec![] },
        }
    })
    .await
}

/// Speak a final reply sentence by sentence (queued after anything playing). Returns how many sentences.
#[tauri::command]
#[specta::specta]
pub async fn tts_speak(
    app: AppHandle,
    webview: tauri::Webview,
    text: String,
    voice: Option<String>,
    rate: Option<f32>,
) -> AppResult<u32> {
    // Two pages may show the same reply (the main window and the Quick Ask panel): the one that records reads aloud,
    // the other says nothing (0 sentences).
    if webview.label() != crate::quick::recording_view(&app) {
        return Ok(0);
    }
    blocking(move || {
        let st = app.state::<VoiceState>();
        let sp = st.speaker(&app).map_err(|e| AppError::new(ErrorCode::TtsUnavailable, e))?;
        // The agent's own voice and rate (chosen per profile) or the settings': applied when they change.
        let set = st.settings();
        let want = (
            voice.map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).or(set.tts_voice),
            rate.filter(|r| r.is_finite()).map_or(set.tts_rate, |r| r.clamp(0.5, 2.0)),
        );
        let mut applied = st.applied_voice.lock()?;
        if *applied != Some(want.clone()) {
            let _ = sp.set_rate(want.1);
            // "" goes back to the engine's own default voice
            sp.set_voice(want.0.as_deref().unwrap_or(""))
                .map_err(|e| AppError::new(ErrorCode::TtsFailed, e.to_string()))?;
            *applied = Some(want);
        }
        drop(applied);
        let n = sp.speak_sentences(&text).map_err(|e| AppError::new(ErrorCode::TtsFailed, e.to_string()))?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    })
    .await?
}

#[tauri::command]
#[specta::specta]
pub fn tts_stop(state: State<'_, VoiceState>) {
    state.stop_speaking();
}

#[cfg(test)]
mod tests;
