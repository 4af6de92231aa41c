//! What a received file really is, read from its own bytes and its name's extension, never from the agent's
//! `mime`/`kind` label: the app offers "Open" (the OS default handler) only for an allow-list of types a viewer
//! shows without running anything, and only when the bytes and the extension agree. A PDF's bytes named
//! `x.pdf.exe` open as a program on Windows (the extension decides there), so they are not viewable; an `.exe`'s
//! bytes named `x.pdf` are not a PDF, so they are not viewable either.

use std::io::Read;
use std::path::Path;

/// How many bytes of a file are read to decide (magic numbers sit in the first few; text is checked this far).
const SNIFF_BYTES: u64 = 64 * 1024;

/// The family an extension or a file's bytes belong to, for the allow-list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Image,
    /// Audio and video together: `.m4a`/`.mp4` and `.ogg`/`.ogv` share containers.
    AudioVideo,
    Pdf,
    Text,
}

/// What a file is, for the UI: whether "Open" is offered, and its real type to name in the warning otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileType {
    /// The OS may open it: an allow-listed extension and bytes of the same family.
    pub viewable: bool,
    /// The type read from the bytes (`application/vnd.microsoft.portable-executable`, `application/pdf`), `text/plain`
    /// for text, or `application/octet-stream` when the bytes say nothing.
    pub real_mime: String,
    /// The usual extension of that type (`exe`, `pdf`), when the bytes name one.
    pub real_ext: Option<String>,
    /// The name's own last extension, lowercased (`exe` for `report.pdf.exe`), empty when it has none.
    pub name_ext: String,
}

/// The allow-list by extension (lowercase, without the dot). SVG and HTML are left out on purpose: they carry
/// scripts, and the OS opens them in a browser.
fn family_of_ext(ext: &str) -> Option<Family> {
    Some(match ext {
        "png" | "jpg" | "jpeg" | "gif" | "webp" | "bmp" => Family::Image,
        "mp3" | "wav" | "ogg" | "oga" | "opus" | "m4a" | "aac" | "flac" | "mp4" | "m4v" | "webm" | "mkv" | "mov"
        | "ogv" => Family::AudioVideo,
        "pdf" => Family::Pdf,
        "txt" | "md" | "log" | "csv" => Family::Text,
        _ => return None,
    })
}

/// The family of a sniffed type, if it is one the allow-list knows (SVG is never sniffed by `infer`, so an
/// image here is always a raster format).
fn family_of_sniffed(t: &infer::Type) -> Option<Family> {
    match t.matcher_type() {
        infer::MatcherType::Image => Some(Family::Image),
        infer::MatcherType::Audio | infer::MatcherType::Video => Some(Family::AudioVideo),
        _ if t.mime_type() == "application/pdf" => Some(Family::Pdf),
        _ => None,
    }
}

/// Plain text: no magic number, valid UTF-8 (a character cut at the end of the sample is fine) and no NUL byte.
fn looks_like_text(b: &[u8]) -> bool {
    if b.contains(&0) {
        return false;
    }
    match std::str::from_utf8(b) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && b.len() - e.valid_up_to() < 4,
    }
}

/// The name's last extension, lowercased; empty when there is none (a leading dot is not an extension).
pub fn name_ext(name: &str) -> String {
    match name.rfind('.') {
        Some(i) if i > 0 => name[i + 1..].trim().to_lowercase(),
        _ => String::new(),
    }
}

/// What `bytes` (the start of a file) named `name` really are.
pub fn classify(name: &str, bytes: &[u8]) -> FileType {
    let ext = name_ext(name);
    let sniffed = infer::get(bytes);
    let text = sniffed.is_none() && looks_like_text(bytes);
    let by_bytes = match &sniffed {
        Some(t) => family_of_sniffed(t),
        None if text => Some(Family::Text),
        None => None,
    };
    let viewable = matches!((family_of_ext(&ext), by_bytes), (Some(a), Some(b)) if a == b);
    let (real_mime, real_ext) = match sniffed {
        Some(t) => (t.mime_type().to_string(), Some(t.extension().to_string())),
        None if text => ("text/plain".to_string(), None),
        None => ("application/octet-stream".to_string(), None),
    };
    FileType { viewable, real_mime, real_ext, name_ext: ext }
}

/// [`classify`] for a file on disk, reading at most its first 64 KiB.
pub fn of_file(path: &Path) -> std::io::Result<FileType> {
    let mut head = Vec::new();
    std::fs::File::open(path)?.take(SNIFF_BYTES).read_to_end(&mut head)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(classify(&name, &head))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PDF: &[u8] = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n";
    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0";
    /// The start of a Windows program: "MZ", then the PE header offset at 0x3C pointing at "PE\0\0".
    fn exe() -> Vec<u8> {
        let mut b = vec![0u8; 0x80];
        b[0] = b'M';
        b[1] = b'Z';
        b[0x3C] = 0x40;
        b[0x40..0x44].copy_from_slice(b"PE\0\0");
        b
    }

    #[test]
    fn a20_viewable_only_when_the_extension_and_the_bytes_agree() {
        assert!(classify("report.pdf", PDF).viewable);
        assert!(classify("photo.PNG", PNG).viewable);
        assert!(classify("notes.txt", "привет, мир\n".as_bytes()).viewable);
        // the bytes of a PDF under an executable's extension: Windows runs it by its extension
        let t = classify("report.pdf.exe", PDF);
        assert!(!t.viewable);
        assert_eq!((t.real_mime.as_str(), t.name_ext.as_str()), ("application/pdf", "exe"));
        // a program under a PDF's name: the bytes say what it is
        let t = classify("report.pdf", &exe());
        assert!(!t.viewable);
        assert_eq!(t.real_ext.as_deref(), Some("exe"));
        assert_eq!(t.real_mime, "application/vnd.microsoft.portable-executable");
        // an image's bytes named as a PDF, text named as an image, binary junk named as text
        assert!(!classify("x.pdf", PNG).viewable);
        assert!(!classify("x.png", b"just some text").viewable);
        assert!(!classify("x.txt", b"\0\x01\x02\x03binary").viewable);
        assert!(!classify("x.txt", &exe()).viewable);
    }

    #[test]
    fn a20_scripts_and_unknown_types_are_never_viewable() {
        for name in ["x.svg", "x.html", "x.htm", "x.js", "x.sh", "x.bat", "x.cmd", "x.ps1", "x.lnk", "x.desktop", "x"] {
            let t = classify(name, b"<svg onload=alert(1)></svg>");
            assert!(!t.viewable, "{name}");
            assert_eq!(t.real_mime, "text/plain", "{name}");
        }
        let zip = classify("archive.zip", b"PK\x03\x04\x14\0\0\0\0\0");
        assert!(!zip.viewable);
        assert_eq!(zip.real_mime, "application/zip");
        assert_eq!(classify("x.bin", b"\xff\xfe\0\0\x01").real_mime, "application/octet-stream");
        assert_eq!(classify(".pdf", PDF).name_ext, "", "a leading dot is not an extension");
    }

    #[test]
    fn text_cut_inside_a_character_is_still_text() {
        let s = "ééé".as_bytes();
        assert!(looks_like_text(&s[..s.len() - 1]));
        assert!(!looks_like_text(b"\xff\xff abc"));
    }

    #[test]
    fn a20_of_file_reads_the_file_not_its_label() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("report.pdf.exe");
        std::fs::write(&p, PDF).unwrap();
        assert!(!of_file(&p).unwrap().viewable);
        let q = dir.path().join("report.pdf");
        std::fs::write(&q, PDF).unwrap();
        assert!(of_file(&q).unwrap().viewable);
        assert!(of_file(&dir.path().join("gone.pdf")).is_err());
    }
}
