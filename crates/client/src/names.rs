//! The one rule for a file name that comes from the agent or the user and becomes a file on disk: the protocol's
//! [`safe_filename`] (no path, no control or reserved characters, bounded length), after every character that
//! does not show is taken out, so that the name the user reads is the name the OS uses.

use hermes_protocol::media::safe_filename;

/// Characters that take no space or reorder what follows: zero-width ones, the byte order mark, bidi marks,
/// embeddings, overrides and isolates (U+061C, U+200E/F, U+202A–E, U+2066–9), the soft hyphen, invisible
/// operators, interlinear annotation marks, tag characters and variation selectors, Hangul fillers and the
/// blank Braille pattern (both drawn as nothing).
fn invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}' | '\u{180B}'..='\u{180F}'
        | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{2800}' | '\u{3164}'
        | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}' | '\u{FFF9}'..='\u{FFFB}' | '\u{E0000}'..='\u{E0FFF}')
}

/// Device names Windows reserves in any folder, with or without an extension; besides the usual ones, the
/// superscript digits (`COM¹`, `LPT³`) Windows also reads as port numbers, and the console's `CONIN$`/`CONOUT$`.
const RESERVED: [&str; 30] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9", "LPT1", "LPT2",
    "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9", "COM¹", "COM²", "COM³", "LPT¹", "LPT²", "LPT³", "CONIN$",
    "CONOUT$",
];

/// Whether `name` (with or without an extension) is a Windows device name.
pub fn is_reserved(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or("").trim_end_matches(' ').to_uppercase();
    RESERVED.contains(&stem.as_str())
}

/// A name safe to create anywhere and honest to read: invisible characters removed, any other space (no-break,
/// em, ideographic, line separators) made an ASCII space and runs of spaces made one, then [`safe_filename`],
/// then a `_` before a device name. Never empty; idempotent.
pub fn safe_name(name: &str) -> String {
    let mut visible = String::with_capacity(name.len());
    for c in name.chars().filter(|c| !invisible(*c)) {
        let c = if c.is_whitespace() && !c.is_ascii() { ' ' } else { c };
        if !(c == ' ' && visible.ends_with(' ')) {
            visible.push(c);
        }
    }
    let mut s = safe_filename(&visible, None);
    if is_reserved(&s) {
        s.insert(0, '_');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a20_invisible_characters_are_removed() {
        for hidden in [
            '\u{200B}',
            '\u{200C}',
            '\u{200D}',
            '\u{2060}',
            '\u{FEFF}',
            '\u{061C}',
            '\u{00AD}',
            '\u{200E}',
            '\u{200F}',
            '\u{202A}',
            '\u{202E}',
            '\u{2066}',
            '\u{2069}',
            '\u{180E}',
            '\u{E0041}',
            '\u{FE0F}',
            '\u{3164}',
        ] {
            assert_eq!(safe_name(&format!("rep{hidden}ort.pdf")), "report.pdf", "U+{:04X}", hidden as u32);
        }
        // the classic: an override that makes "exe.pdf" read as "fdp.exe"
        assert_eq!(safe_name("invoice\u{202E}fdp.exe"), "invoicefdp.exe");
        assert_eq!(safe_name("\u{200B}\u{FEFF}"), "file.bin", "nothing visible left");
    }

    #[test]
    fn a20_other_spaces_become_one_ascii_space() {
        assert_eq!(safe_name("a\u{00A0}b\u{2003}c\u{3000}d\u{202F}e.txt"), "a b c d e.txt");
        assert_eq!(safe_name("report.pdf\u{2028}\u{2029}.exe"), "report.pdf .exe");
        assert_eq!(safe_name(&format!("report.pdf{}.exe", " ".repeat(80))), "report.pdf .exe");
    }

    #[test]
    fn a20_windows_device_names_are_reserved_with_superscripts_and_console_names() {
        for name in ["CON", "con.txt", "Aux", "nul.tar.gz", "COM1", "lpt9.log", "COM¹", "com².txt", "LPT³", "CONIN$"]
        {
            assert!(is_reserved(name), "{name}");
            assert!(safe_name(name).starts_with('_'), "{name} -> {}", safe_name(name));
        }
        assert_eq!(safe_name("conout$.log"), "_conout$.log");
        assert_eq!(safe_name("COM\u{00B9}"), "_COM\u{00B9}");
        for fine in ["CONSOLE.txt", "COM10", "LPT", "com", "icon.png", "report.pdf"] {
            assert!(!is_reserved(fine), "{fine}");
            assert_eq!(safe_name(fine), fine);
        }
    }

    #[test]
    fn a20_safe_name_is_idempotent_and_keeps_the_protocol_rules() {
        for name in ["../../etc/passwd", "a<b>.png", "..", "", "x\u{202E}gpj.exe", "COM¹.txt", "a\u{00A0}\u{00A0}b"] {
            let once = safe_name(name);
            assert_eq!(safe_name(&once), once, "{name:?}");
            assert!(!once.is_empty() && !once.contains('/') && !once.starts_with('.'));
        }
        assert_eq!(safe_name("../../etc/passwd"), "passwd");
    }
}
