//! WAV, resampling and clips by default; microphone capture (`capture`), VAD and hands-free listening
//! (`vad`), echo cancellation (`aec`) and system TTS (`tts`) behind features.

#[cfg(feature = "aec")]
pub mod aec;
#[cfg(feature = "capture")]
pub mod capture;
pub mod clip;
#[cfg(feature = "capture")]
pub mod devices;
#[cfg(target_os = "linux")]
pub mod espeak;
#[cfg(feature = "vad")]
pub mod listener;
#[cfg(feature = "capture")]
pub mod live;
#[cfg(feature = "capture")]
pub mod player;
pub mod resample;
pub mod tts;
#[cfg(feature = "vad")]
pub mod vad;
pub mod wav;
