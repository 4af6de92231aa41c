//! Files on disk: received media saved inside the media folder only, outgoing files copied into the outbox folder
//! so that a queued message survives the original being moved or deleted.

use std::path::{Path, PathBuf};

use crate::names::safe_name;

/// The kind of a file from its MIME type, one rule for the wire and the UI: `image`, `video` or `audio` by the type's
/// prefix, anything else `document` (the adapter's word, A-18).
pub fn kind_for_mime(mime: &str) -> &'static str {
    match mime.split('/').next().unwrap_or("") {
        "image" => "image",
        "video" => "video",
        "audio" => "audio",
        _ => "document",
    }
}

pub fn mime_for_path(path: &Path) -> String {
    mime_guess::from_path(path).first_or_octet_stream().essence_str().to_string()
}

/// A path in `dir` for `filename` (made safe) that does not exist yet: `name.ext`, `name (1).ext`, … Only for
/// names the app makes itself; a file from the agent or the user is created with [`create_new_in`].
pub fn unique_path(dir: &Path, filename: &str) -> PathBuf {
    let name = safe_name(filename);
    let mut n = 0;
    loop {
        let p = dir.join(numbered(&name, n));
        if !p.exists() {
            return p;
        }
        n += 1;
    }
}

/// `name.ext` for 0, `name (n).ext` after.
fn numbered(name: &str, n: u32) -> String {
    if n == 0 {
        return name.to_string();
    }
    match name.rfind('.') {
        Some(i) if i > 0 => format!("{} ({n}){}", &name[..i], &name[i..]),
        _ => format!("{name} ({n})"),
    }
}

/// A new, empty file in `dir` named after `filename` (made safe): `name.ext`, else `name (1).ext`, … Each name is
/// claimed with an exclusive create (`create_new`), so two writers of the same name never get the same file; a
/// check for existence followed by a rename would let both take it.
pub fn create_new_in(dir: &Path, filename: &str) -> std::io::Result<(std::fs::File, PathBuf)> {
    let name = safe_name(filename);
    for n in 0..10_000 {
        let p = dir.join(numbered(&name, n));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&p) {
            Ok(f) => return Ok((f, p)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "no free name left for this file"))
}

/// Move the finished file `tmp` (ours, in `dir`) to a new name in `dir` for `filename`: the name is claimed with
/// [`create_new_in`] and the file renamed over that empty claim, so the move stays atomic and never replaces
/// anything but the claim. The result carries the OS's "downloaded" mark.
pub fn place_new(tmp: &Path, dir: &Path, filename: &str) -> std::io::Result<PathBuf> {
    let (claim, dest) = create_new_in(dir, filename)?;
    drop(claim);
    if let Err(e) = std::fs::rename(tmp, &dest) {
        let _ = std::fs::remove_file(&dest);
        return Err(e);
    }
    mark(&dest);
    Ok(dest)
}

/// Write `bytes` as a new file in `dir` named after `filename` (exclusive create, see [`create_new_in`]).
pub fn write_new(dir: &Path, filename: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    use std::io::Write as _;
    std::fs::create_dir_all(dir)?;
    let (mut f, p) = create_new_in(dir, filename)?;
    if let Err(e) = f.write_all(bytes) {
        drop(f);
        let _ = std::fs::remove_file(&p);
        return Err(e);
    }
    Ok(p)
}

/// A copy of a received file where the user chose to save it, with the OS's "downloaded" mark (and no execute
/// bit, which a plain copy would carry over from its source).
pub fn save_copy(src: &Path, dest: &Path) -> std::io::Result<()> {
    std::fs::copy(src, dest)?;
    mark(dest);
    Ok(())
}

fn mark(p: &Path) {
    if let Err(e) = crate::osmark::mark_downloaded(p) {
        tracing::debug!(%e, path = %p.display(), "could not mark the file as downloaded");
    }
}

/// Write `bytes` as a new file named after `filename` inside `dir` (created if needed), atomically (temp file +
/// rename onto an exclusively created name, see [`place_new`]). The result is always inside `dir`.
pub async fn save_into(dir: &Path, filename: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    tokio::fs::create_dir_all(dir).await?;
    let tmp = dir.join(format!(".partial-{}", uuid::Uuid::new_v4()));
    tokio::fs::write(&tmp, bytes).await?;
    let (dir, filename, tmp2) = (dir.to_path_buf(), filename.to_string(), tmp.clone());
    let placed = tokio::task::spawn_blocking(move || place_new(&tmp2, &dir, &filename))
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e)));
    if placed.is_err() {
        let _ = tokio::fs::remove_file(&tmp).await;
    }
    placed
}

/// Remove leftovers of interrupted downloads (`.partial-*`) in `dir`.
pub async fn clean_partials(dir: &Path) {
    let Ok(mut rd) = tokio::fs::read_dir(dir).await else { return };
    while let Ok(Some(e)) = rd.next_entry().await {
        if e.file_name().to_string_lossy().starts_with(".partial-") {
            let _ = tokio::fs::remove_file(e.path()).await;
        }
    }
}

/// G-4b: width and height of an image we send, read from its PNG, GIF or JPEG header (no decoding).
pub fn image_size(b: &[u8]) -> Option<(u32, u32)> {
    if b.len() >= 24 && b.starts_with(b"\x89PNG\r\n\x1a\n") {
        let w = u32::from_be_bytes(b[16..20].try_into().ok()?);
        let h = u32::from_be_bytes(b[20..24].try_into().ok()?);
        return Some((w, h));
    }
    if b.len() >= 10 && (b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a")) {
        return Some((u16::from_le_bytes([b[6], b[7]]) as u32, u16::from_le_bytes([b[8], b[9]]) as u32));
    }
    if b.len() >= 4 && b[0] == 0xFF && b[1] == 0xD8 {
        let mut i = 2;
        while i + 9 < b.len() {
            if b[i] != 0xFF {
                return None;
            }
            let marker = b[i + 1];
            let len = u16::from_be_bytes([b[i + 2], b[i + 3]]) as usize;
            if matches!(marker, 0xC0..=0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF) {
                let h = u16::from_be_bytes([b[i + 5], b[i + 6]]) as u32;
                let w = u16::from_be_bytes([b[i + 7], b[i + 8]]) as u32;
                return Some((w, h));
            }
            i += 2 + len;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a20_saved_files_stay_inside_the_folder_and_never_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let a = save_into(dir.path(), "../../evil.sh", b"1").await.unwrap();
        let b = save_into(dir.path(), "../../evil.sh", b"2").await.unwrap();
        assert_eq!(a, dir.path().join("evil.sh"));
        assert_eq!(b, dir.path().join("evil (1).sh"));
        assert_eq!(std::fs::read(&a).unwrap(), b"1");
        assert_eq!(std::fs::read(&b).unwrap(), b"2");
        let c = save_into(dir.path(), "", b"3").await.unwrap();
        assert!(c.starts_with(dir.path()));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3, "no partial left behind");
    }

    #[test]
    fn a20_two_writers_of_the_same_name_never_share_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let writers: Vec<_> = (0..8u8)
            .map(|i| {
                let dir = dir.path().to_path_buf();
                std::thread::spawn(move || {
                    let tmp = dir.join(format!(".partial-{i}"));
                    std::fs::write(&tmp, [i]).unwrap();
                    place_new(&tmp, &dir, "report.pdf").unwrap()
                })
            })
            .collect();
        let mut paths: Vec<_> = writers.into_iter().map(|w| w.join().unwrap()).collect();
        paths.sort();
        paths.dedup();
        assert_eq!(paths.len(), 8, "each writer got its own name: {paths:?}");
        let mut contents: Vec<u8> = paths.iter().map(|p| std::fs::read(p).unwrap()[0]).collect();
        contents.sort();
        assert_eq!(contents, (0..8).collect::<Vec<u8>>(), "no file overwrote another");
        let (_, p) = create_new_in(dir.path(), "report.pdf").unwrap();
        assert_eq!(p, dir.path().join("report (8).pdf"));
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a20_received_files_and_saved_copies_are_not_executable() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let got = save_into(dir.path(), "run.sh", b"#!/bin/sh\necho hi\n").await.unwrap();
        assert_eq!(std::fs::metadata(&got).unwrap().permissions().mode() & 0o111, 0);
        // even from a source that has them (a copy keeps its source's mode)
        std::fs::set_permissions(&got, std::fs::Permissions::from_mode(0o755)).unwrap();
        let copy = dir.path().join("saved.sh");
        save_copy(&got, &copy).unwrap();
        assert_eq!(std::fs::metadata(&copy).unwrap().permissions().mode() & 0o111, 0);
        assert_eq!(std::fs::read(&copy).unwrap(), b"#!/bin/sh\necho hi\n");
        let w = write_new(dir.path(), "run.sh", b"x").unwrap();
        assert_eq!(w, dir.path().join("run (1).sh"));
    }

    #[test]
    fn g4b_image_size_from_headers_and_never_a_panic_on_junk() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&1920u32.to_be_bytes());
        png.extend_from_slice(&1080u32.to_be_bytes());
        assert_eq!(image_size(&png), Some((1920, 1080)));
        assert_eq!(image_size(b"GIF89a\x40\x01\xf0\x00rest"), Some((320, 240)));
        // JPEG: SOI, an APP0 segment to skip, then SOF0 with height 480 and width 640
        let jpeg = [
            0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x01, 0xE0, 0x02, 0x80, 0x03,
        ];
        assert_eq!(image_size(&jpeg), Some((640, 480)));
        for cut in 0..jpeg.len() {
            let _ = image_size(&jpeg[..cut]);
            let _ = image_size(&png[..cut.min(png.len())]);
        }
        assert_eq!(image_size(b"not an image at all"), None);
        assert_eq!(image_size(&[0xFF, 0xD8, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0]), None, "broken marker chain");
    }

    #[test]
    fn a18_kinds_follow_mime() {
        assert_eq!(kind_for_mime("image/png"), "image");
        assert_eq!(kind_for_mime("audio/wav"), "audio");
        assert_eq!(kind_for_mime("video/mp4"), "video");
        assert_eq!(kind_for_mime("application/pdf"), "document");
        assert_eq!(kind_for_mime("application/octet-stream"), "document");
        assert_eq!(kind_for_mime("text/plain"), "document");
        assert_eq!(kind_for_mime(""), "document");
        assert_eq!(kind_for_mime("imagefoo"), "document");
        assert_eq!(mime_for_path(Path::new("x.PNG")), "image/png");
        assert_eq!(mime_for_path(Path::new("x.unknownext")), "application/octet-stream");
    }
}
