//! Files on disk: received media saved inside the media folder only, outgoing files copied into the outbox folder
//! so that a queued message survives the original being moved or deleted.

use std::path::{Path, PathBuf};

use hermes_protocol::media::safe_filename;

/// A-18 kind of an uplink file from its MIME type.
pub fn adapter_kind_for_mime(mime: &str) -> &'static str {
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

/// A path in `dir` for `filename` (already safe) that does not exist yet: `name.ext`, `name (1).ext`, …
pub fn unique_path(dir: &Path, filename: &str) -> PathBuf {
    let name = safe_filename(filename, None);
    let (stem, ext) = match name.rfind('.') {
        Some(i) if i > 0 => (&name[..i], &name[i..]),
        _ => (name.as_str(), ""),
    };
    let mut p = dir.join(&name);
    let mut n = 1;
    while p.exists() {
        p = dir.join(format!("{stem} ({n}){ext}"));
        n += 1;
    }
    p
}

/// Write `bytes` as a new file named after `filename` inside `dir` (created if needed), atomically (temp file +
/// rename). The result is always inside `dir`.
pub async fn save_into(dir: &Path, filename: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    tokio::fs::create_dir_all(dir).await?;
    let tmp = dir.join(format!(".partial-{}", uuid::Uuid::new_v4()));
    tokio::fs::write(&tmp, bytes).await?;
    let dest = unique_path(dir, filename);
    if let Err(e) = tokio::fs::rename(&tmp, &dest).await {
        let _ = tokio::fs::remove_file(&tmp).await;
        return Err(e);
    }
    Ok(dest)
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
    fn a18_kinds_follow_mime() {
        assert_eq!(adapter_kind_for_mime("image/png"), "image");
        assert_eq!(adapter_kind_for_mime("audio/wav"), "audio");
        assert_eq!(adapter_kind_for_mime("video/mp4"), "video");
        assert_eq!(adapter_kind_for_mime("application/pdf"), "document");
        assert_eq!(mime_for_path(Path::new("x.PNG")), "image/png");
        assert_eq!(mime_for_path(Path::new("x.unknownext")), "application/octet-stream");
    }
}
