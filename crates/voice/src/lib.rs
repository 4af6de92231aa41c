//! Microphone capture, resampling, WAV, level meter, VAD and TTS (A-23..A-26).

pub mod capture;
pub mod resample;
pub mod tts;
pub mod vad;
pub mod wav;
