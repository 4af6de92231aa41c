//! A-20 / G-9: `safe_filename` on arbitrary (hostile) names. Never panics; the result is one plain name that is safe to
//! create inside a folder on every OS: non-empty, no path separator, no control or bidi character, no leading dot,
//! not `.`/`..`, no Windows device name, bounded length, valid UTF-8 cut on a character boundary; idempotent.
#![no_main]

use hermes_protocol::media::safe_filename;
use libfuzzer_sys::fuzz_target;

const RESERVED: &[&str] = &[
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9", "LPT1", "LPT2",
    "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

fuzz_target!(|input: (&str, Option<&str>)| {
    let (name, mime) = input;
    let s = safe_filename(name, mime);
    assert!(!s.is_empty(), "empty name for {name:?}");
    assert!(s.len() <= 120, "too long: {} bytes for {name:?}", s.len());
    assert!(!s.starts_with('.'), "hidden or relative name {s:?} for {name:?}");
    assert!(s != "." && s != "..");
    assert!(!s.contains(['/', '\\', ':', '<', '>', '"', '|', '?', '*']), "{s:?}");
    assert!(!s.chars().any(char::is_control), "control character in {s:?}");
    assert!(
        !s.chars().any(|c| matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')),
        "bidi control in {s:?}"
    );
    let stem = s.split('.').next().unwrap_or("").trim().to_ascii_uppercase();
    assert!(!RESERVED.contains(&stem.as_str()), "reserved device name {s:?} for {name:?}");
    let p = std::path::Path::new(&s);
    assert_eq!(p.components().count(), 1, "{s:?} is not one path component");
    assert!(matches!(p.components().next(), Some(std::path::Component::Normal(_))), "{s:?}");
    assert_eq!(safe_filename(&s, mime), s, "not idempotent for {name:?}");
});
