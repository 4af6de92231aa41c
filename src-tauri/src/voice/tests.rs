//! The voice settings and the capture errors' codes.
use super::*;

#[test]
fn settings_roundtrip_and_defaults() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(VoiceSettings::load(dir.path()), VoiceSettings::default());
    let s = VoiceSettings {
        device: Some("USB Mic".into()),
        shortcut: None,
        end_silence_ms: 900,
        tts_voice: Some("en-GB".into()),
        tts_rate: 1.25,
        echo_cancellation: false,
        noise_suppression: false,
    };
    s.save(dir.path()).unwrap();
    assert_eq!(VoiceSettings::load(dir.path()), s);
    // a file from before echo cancellation existed: both on
    std::fs::write(dir.path().join(SETTINGS_FILE), br#"{"endSilenceMs": 700}"#).unwrap();
    let old = VoiceSettings::load(dir.path());
    assert!(old.echo_cancellation && old.noise_suppression && old.end_silence_ms == 700);
    std::fs::write(dir.path().join(SETTINGS_FILE), b"{not json").unwrap();
    assert_eq!(VoiceSettings::load(dir.path()), VoiceSettings::default(), "a broken file gives the defaults");
}

#[test]
fn settings_are_clamped() {
    let s = VoiceSettings {
        device: Some("  ".into()),
        shortcut: Some(" ".into()),
        end_silence_ms: 5,
        tts_voice: None,
        tts_rate: f32::NAN,
        ..Default::default()
    }
    .normalized();
    assert_eq!((s.device, s.shortcut, s.end_silence_ms, s.tts_rate), (None, None, 200, 1.0));
    let s = VoiceSettings { end_silence_ms: 60_000, tts_rate: 9.0, ..Default::default() }.normalized();
    assert_eq!((s.end_silence_ms, s.tts_rate), (3000, 2.0));
}

#[test]
fn capture_errors_have_stable_codes() {
    assert_eq!(capture_error(&CaptureError::NoDevice).code, "no_microphone");
    assert_eq!(capture_error(&CaptureError::DeviceLost("x".into())).code, "microphone_lost");
    assert_eq!(capture_error(&CaptureError::TooShort { ms: 100, min_ms: 300 }).code, "too_short");
}
