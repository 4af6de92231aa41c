//! G-4b: what the app reads from a file it sends, to fill the v3 media descriptor. Videos: width, height and
//! duration from the MP4/MOV (ISO BMFF) or WebM/Matroska container, through `nom-exif` (headers only, seeking past
//! the media data; never the whole file in memory). A field that cannot be read is left out rather than guessed.

use std::io::Read as _;
use std::path::Path;

use nom_exif::{EntryValue, TrackInfoTag};

/// At most this much of an image is read to find its size (a JPEG's frame header can follow large EXIF/ICC blocks).
const IMAGE_HEAD_BYTES: u64 = 4 * 1024 * 1024;

/// What a video container says about its picture.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct VideoInfo {
    pub width: Option<u32>,
    pub height: Option<u32>,
    /// Seconds.
    pub duration: Option<f64>,
}

/// Width, height and duration of the video at `path`; `Default` (nothing known) for anything it cannot read.
pub fn video(path: &Path) -> VideoInfo {
    // The file is the user's, not the network's; still, a parser bug must cost the fields, not the upload.
    let read = std::panic::catch_unwind(|| nom_exif::read_track(path));
    let Ok(Ok(track)) = read else {
        return VideoInfo::default();
    };
    let uint = |tag| match track.get(tag)? {
        EntryValue::U32(v) => Some(u64::from(*v)),
        EntryValue::U64(v) => Some(*v),
        EntryValue::U16(v) => Some(u64::from(*v)),
        _ => None,
    };
    let dim = |tag| uint(tag).and_then(|v| u32::try_from(v).ok()).filter(|v| *v > 0);
    VideoInfo {
        width: dim(TrackInfoTag::Width),
        height: dim(TrackInfoTag::Height),
        // milliseconds in the container; seconds on the wire, to the millisecond
        duration: uint(TrackInfoTag::DurationMs).filter(|ms| *ms > 0).map(|ms| ms as f64 / 1000.0),
    }
}

/// The first bytes of a file (at most [`IMAGE_HEAD_BYTES`]): enough for an image's size, whatever the file's size.
pub fn head(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    std::fs::File::open(path)?.take(IMAGE_HEAD_BYTES).read_to_end(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
    }

    /// Small real files made once with ffmpeg (testsrc, libx264 / mpeg4 / libvpx-vp9); `ffprobe` reports the same
    /// sizes and durations. The MOV has its `moov` box after the media data (ffmpeg's default), the MP4 before it.
    #[test]
    fn g4b_video_size_and_duration_from_mp4_mov_and_webm() {
        let cases = [("clip.mp4", 160, 90, 2.0), ("clip.mov", 96, 64, 3.0), ("clip.webm", 128, 72, 1.5)];
        for (name, w, h, secs) in cases {
            let v = video(&fixture(name));
            assert_eq!((v.width, v.height), (Some(w), Some(h)), "{name}");
            let d = v.duration.unwrap_or_else(|| panic!("{name}: no duration"));
            assert!((d - secs).abs() < 0.1, "{name}: {d} s, expected {secs} s");
        }
    }

    /// Fields that cannot be read are left out, never guessed, and nothing panics on a broken file.
    #[test]
    fn g4b_unreadable_or_cut_videos_give_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(video(&dir.path().join("missing.mp4")), VideoInfo::default());
        let junk = dir.path().join("junk.mp4");
        std::fs::write(&junk, b"not a video at all, just some text").unwrap();
        assert_eq!(video(&junk), VideoInfo::default());
        for name in ["clip.mp4", "clip.mov", "clip.webm"] {
            let whole = std::fs::read(fixture(name)).unwrap();
            for cut in [8, 40, whole.len() / 3, whole.len() - 7] {
                let p = dir.path().join(format!("cut-{cut}-{name}"));
                std::fs::write(&p, &whole[..cut]).unwrap();
                let v = video(&p);
                assert!(v.width.is_none_or(|w| w > 0) && v.duration.is_none_or(|d| d > 0.0), "{name}/{cut}: {v:?}");
            }
        }
    }

    #[test]
    fn g4b_an_images_head_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.png");
        std::fs::write(&p, vec![0u8; (IMAGE_HEAD_BYTES + 1000) as usize]).unwrap();
        assert_eq!(head(&p).unwrap().len() as u64, IMAGE_HEAD_BYTES);
    }
}
