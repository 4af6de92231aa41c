//! Finished recordings as files: 16 kHz mono samples → WAV parts of at most `max_bytes` each, written into a
//! folder, ready to be sent as `audio` messages.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::wav::{self, WavError};

/// the largest audio payload of one message.
pub const MAX_WAV_BYTES: usize = 8 * 1024 * 1024;

/// One written WAV file: 16 kHz mono PCM16, at most the `max_bytes` it was written with.
#[derive(Debug, Clone, PartialEq)]
pub struct Clip {
    /// Where it was written (inside the folder given to [`write_clips`]).
    pub path: PathBuf,
    /// Its duration.
    pub secs: f64,
    /// Its size in bytes.
    pub size: u32,
}

/// Why clips could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClipError {
    /// The audio could not be split (a `max_bytes` too small for one sample).
    #[error(transparent)]
    Wav(#[from] WavError),
    /// The folder or a file could not be written.
    #[error("cannot write the recording: {0}")]
    Io(#[from] std::io::Error),
}

/// 16 kHz mono samples → WAV parts of at most `max_bytes` (A-24; lossless, in order), written into `dir` (created if
/// needed) as `voice-<ms since the epoch>[-<n>].wav`. A name already taken gets a ` (1)`, ` (2)`… suffix: a file is
/// never overwritten.
pub fn write_clips(samples: &[i16], dir: &Path, max_bytes: usize) -> Result<Vec<Clip>, ClipError> {
    let wav = wav::encode_pcm16_mono_16k(samples);
    let parts = if wav.len() <= max_bytes { vec![wav] } else { wav::split_wav(&wav, max_bytes)? };
    std::fs::create_dir_all(dir)?;
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let n = parts.len();
    let mut out = Vec::with_capacity(n);
    for (i, part) in parts.into_iter().enumerate() {
        let stem = if n == 1 { format!("voice-{stamp}") } else { format!("voice-{stamp}-{}", i + 1) };
        let path = write_new(dir, &stem, &part)?;
        out.push(Clip {
            path,
            secs: wav::duration_secs(&part).unwrap_or(0.0),
            size: u32::try_from(part.len()).unwrap_or(u32::MAX),
        });
    }
    Ok(out)
}

/// Create `dir/<stem>.wav`, or the first free `<stem> (n).wav`, and write `bytes` into it. `create_new` makes taking
/// the name and creating the file one step, so two writers never share a file.
fn write_new(dir: &Path, stem: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    for n in 0u32.. {
        let name = if n == 0 { format!("{stem}.wav") } else { format!("{stem} ({n}).wav") };
        let path = dir.join(name);
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut f) => {
                f.write_all(bytes)?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free file name"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// a clip over the limit becomes several WAVs, each ≤ the limit, together the whole recording.
    #[test]
    fn a24_long_clips_are_split() {
        let dir = tempfile::tempdir().unwrap();
        let samples: Vec<i16> = (0..1_000_000).map(|i| ((i % 200) as i16 - 100) * 50).collect();
        let max = 400_000;
        let clips = write_clips(&samples, dir.path(), max).unwrap();
        assert!(clips.len() >= 5, "{clips:?}");
        let mut total = 0.0;
        let mut pcm = Vec::new();
        for c in &clips {
            assert!(c.path.starts_with(dir.path()));
            let bytes = std::fs::read(&c.path).unwrap();
            assert!(bytes.len() <= max);
            assert_eq!(bytes.len() as u32, c.size);
            // 16 kHz mono PCM16 already: the converter hands such a file back byte-identical.
            assert_eq!(wav::to_hermes_wav(&bytes).unwrap(), bytes);
            pcm.extend_from_slice(&bytes[44..]);
            total += c.secs;
        }
        assert!((total - 1_000_000.0 / 16_000.0).abs() < 0.01, "{total}");
        assert_eq!(pcm, wav::encode_pcm16_mono_16k(&samples)[44..], "the parts are the recording, in order");
        let one = write_clips(&samples[..16_000], dir.path(), max).unwrap();
        assert_eq!(one.len(), 1);
        assert!((one[0].secs - 1.0).abs() < 1e-6);
    }

    #[test]
    fn names_already_taken_are_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let first = write_new(dir.path(), "voice-1", b"one").unwrap();
        let second = write_new(dir.path(), "voice-1", b"two").unwrap();
        assert_eq!(first.file_name().unwrap(), "voice-1.wav");
        assert_eq!(second.file_name().unwrap(), "voice-1 (1).wav");
        assert_eq!(std::fs::read(&first).unwrap(), b"one");
        assert_eq!(std::fs::read(&second).unwrap(), b"two");
    }

    #[test]
    fn an_unwritable_folder_is_an_io_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-folder");
        std::fs::write(&file, b"x").unwrap();
        let err = write_clips(&[0i16; 1600], &file, MAX_WAV_BYTES).unwrap_err();
        assert!(matches!(err, ClipError::Io(_)), "{err:?}");
    }
}
