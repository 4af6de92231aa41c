//! Security checks of the shell that do not need a running app (unit-tested): which URLs may leave the app, which
//! navigations the webview may make, and scrubbing of secrets from log lines.

use std::io::Write;
use std::sync::{Mutex, OnceLock};

/// `open_external` only hands http, https and mailto URLs to the OS (never `file:`, `javascript:`, custom schemes).
/// A `mailto:` link keeps its recipients and only its `subject` and `body`: a link in an agent's reply must not add
/// hidden `cc`/`bcc` recipients or `attach` a local file in mail clients that honour it.
pub fn check_external_url(raw: &str) -> Result<url::Url, String> {
    let u = url::Url::parse(raw.trim()).map_err(|_| "this link is not a valid URL".to_string())?;
    match u.scheme() {
        "http" | "https" => {
            if u.host_str().is_none_or(str::is_empty) {
                return Err("this link has no host".into());
            }
            Ok(u)
        }
        "mailto" => Ok(mailto_subject_and_body_only(u)),
        other => Err(format!("links of type \"{other}:\" are not opened")),
    }
}

fn mailto_subject_and_body_only(mut u: url::Url) -> url::Url {
    // RFC 6068 fields, split by hand: `+` in a mailto query is a plus, not a space, so each kept value stays exactly
    // as the link encoded it; only the field name is decoded (`%62cc` is `bcc`) to be compared.
    let kept: Vec<String> = u
        .query()
        .unwrap_or("")
        .split('&')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let name = percent_decode_lossy(k).to_ascii_lowercase();
            (name == "subject" || name == "body").then(|| format!("{name}={v}"))
        })
        .collect();
    let query = kept.join("&");
    u.set_fragment(None);
    u.set_query((!query.is_empty()).then_some(query.as_str()));
    u
}

fn percent_decode_lossy(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every window refuses to open another (`window.open`, `target=_blank`, a middle click the page did not handle):
/// links leave the app only through `open_external`, which checks them, never in a new in-app webview.
pub fn new_window_allowed(_u: &url::Url) -> bool {
    false
}

/// The handler every `WebviewWindowBuilder` gets (`on_new_window`).
pub fn deny_new_window<R: tauri::Runtime>(
    u: url::Url,
    _features: tauri::webview::NewWindowFeatures,
) -> tauri::webview::NewWindowResponse<R> {
    if new_window_allowed(&u) {
        return tauri::webview::NewWindowResponse::Allow;
    }
    tracing::warn!(scheme = u.scheme(), "blocked a request to open a new window");
    tauri::webview::NewWindowResponse::Deny
}

/// The webview may only navigate within the app's own bundled origin; every link goes through `open_external`.
pub fn navigation_allowed(u: &url::Url) -> bool {
    let own = match u.scheme() {
        // Linux/macOS custom protocol, Windows/Android http://tauri.localhost
        "tauri" => u.host_str() == Some("localhost"),
        "http" | "https" => u.host_str() == Some("tauri.localhost"),
        // in-page: about:blank (iframes with srcdoc) only
        "about" => u.as_str() == "about:blank" || u.as_str() == "about:srcdoc",
        _ => false,
    };
    own || (cfg!(debug_assertions) && is_dev_server(u))
}

fn is_dev_server(u: &url::Url) -> bool {
    // `tauri dev` with Vite on the loopback (debug builds only)
    u.scheme() == "http" && u.host_str() == Some("localhost") && u.port() == Some(5173)
}

/// Secrets registered here are replaced by `[REDACTED]` in every log line (a second line of defence: the code never
/// logs a token by construction — `Secret` prints as `Secret(REDACTED)`, URLs go through `redact_url`).
fn secrets() -> &'static Mutex<Vec<String>> {
    static S: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    S.get_or_init(|| Mutex::new(Vec::new()))
}

pub fn register_secret(s: &str) {
    if s.len() < 4 {
        return;
    }
    if let Ok(mut v) = secrets().lock()
        && !v.iter().any(|x| x == s)
    {
        v.push(s.to_string());
    }
}

/// Replaces every registered secret in `line`, also where it appears escaped: inside a JSON string (`\"`, `\\`,
/// `\/`, `\u0041`…) or percent-encoded (`%2F`, `%2f`), in any mix, since a library may log a frame or a URL
/// that carries the token in either form.
pub fn scrub(line: &str) -> String {
    let Ok(v) = secrets().lock() else {
        return line.to_string();
    };
    if v.is_empty() {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    'scan: while i < line.len() {
        for s in v.iter() {
            if let Some(end) = secret_at(line.as_bytes(), i, s) {
                out.push_str("[REDACTED]");
                i = end;
                continue 'scan;
            }
        }
        let ch = line[i..].chars().next().unwrap_or_default();
        out.push(ch);
        i += ch.len_utf8().max(1);
    }
    out
}

/// Where `secret` ends if it starts at byte `i` of `line`, each of its characters written as itself, as JSON escapes
/// it, or percent-encoded. A character can match in more than one way (`\` is itself or the first half of `\\`), so
/// every way is followed: the set of positions reached after each character (small: a few per character).
fn secret_at(line: &[u8], i: usize, secret: &str) -> Option<usize> {
    let mut at = vec![i];
    for ch in secret.chars() {
        let mut next: Vec<usize> = Vec::new();
        for &p in &at {
            for end in char_forms_at(line, p, ch).into_iter().flatten() {
                if !next.contains(&end) {
                    next.push(end);
                }
            }
        }
        if next.is_empty() {
            return None;
        }
        at = next;
    }
    at.into_iter().max()
}

/// Where `ch` ends if written at byte `i`: as itself, percent-encoded, or as a JSON escape.
fn char_forms_at(line: &[u8], i: usize, ch: char) -> [Option<usize>; 4] {
    fn hex_at(line: &[u8], i: usize, n: usize) -> Option<u32> {
        let digits = std::str::from_utf8(line.get(i..i + n)?).ok()?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(digits, 16).ok()
    }
    let mut buf = [0u8; 4];
    let bytes = ch.encode_utf8(&mut buf).as_bytes();
    let literal = (line.get(i..i + bytes.len()) == Some(bytes)).then_some(i + bytes.len());
    // percent-encoded: every UTF-8 byte as %XX (either case)
    let percent = bytes
        .iter()
        .enumerate()
        .all(|(n, &b)| line.get(i + 3 * n) == Some(&b'%') && hex_at(line, i + 3 * n + 1, 2) == Some(u32::from(b)))
        .then_some(i + 3 * bytes.len());
    if line.get(i) != Some(&b'\\') {
        return [literal, percent, None, None];
    }
    // JSON string escapes: the short ones, and \uXXXX (a surrogate pair beyond the BMP)
    let short = match ch {
        '"' | '\\' | '/' => Some(ch as u8),
        '\u{8}' => Some(b'b'),
        '\u{c}' => Some(b'f'),
        '\n' => Some(b'n'),
        '\r' => Some(b'r'),
        '\t' => Some(b't'),
        _ => None,
    };
    let short = short.filter(|s| line.get(i + 1) == Some(s)).map(|_| i + 2);
    let mut units = [0u16; 2];
    let units = ch.encode_utf16(&mut units);
    let unicode = units
        .iter()
        .enumerate()
        .all(|(n, &u)| {
            let p = i + 6 * n;
            line.get(p..p + 2) == Some(&b"\\u"[..]) && hex_at(line, p + 2, 4) == Some(u32::from(u))
        })
        .then_some(i + 6 * units.len());
    [literal, percent, short, unicode]
}

/// A writer that scrubs registered secrets from what passes through it.
pub struct ScrubWriter<W: Write>(pub W);

impl<W: Write> Write for ScrubWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(scrub(&text).as_bytes())?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_urls() {
        for ok in ["https://example.com/a?b=c", "http://localhost:8080/", "mailto:me@example.com"] {
            assert!(check_external_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "javascript:alert(1)",
            "JaVaScRiPt:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "file:///etc/passwd",
            "vbscript:msgbox",
            "hermes://connect?url=x",
            "ftp://example.com",
            "smb://host/share",
            "/relative",
            "",
            "http://",
        ] {
            assert!(check_external_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn mailto_keeps_only_subject_and_body() {
        let out = |raw: &str| check_external_url(raw).unwrap().to_string();
        assert_eq!(
            out("mailto:me@example.com?subject=Hi%20there&cc=spy@evil.example&bcc=x@evil.example&body=a+b%26c"),
            "mailto:me@example.com?subject=Hi%20there&body=a+b%26c"
        );
        assert_eq!(out("mailto:me@example.com?attach=/home/me/.ssh/id_ed25519"), "mailto:me@example.com");
        assert_eq!(out("mailto:me@example.com?ATTACHMENT=~/.ssh/id_rsa&Subject=x"), "mailto:me@example.com?subject=x");
        assert_eq!(out("mailto:me@example.com?to=evil@example.com&in-reply-to=x#frag"), "mailto:me@example.com");
        assert_eq!(out("mailto:a@example.com,b@example.com"), "mailto:a@example.com,b@example.com");
        // a percent-encoded key is still recognised and dropped
        assert_eq!(out("mailto:me@example.com?%62cc=x@evil.example"), "mailto:me@example.com");
        // http(s) links keep their query as it is
        assert_eq!(out("https://example.com/a?cc=1&b=2"), "https://example.com/a?cc=1&b=2");
    }

    #[test]
    fn no_window_opens_another() {
        for u in [
            "https://example.com/",
            "http://tauri.localhost/",
            "tauri://localhost/index.html",
            "about:blank",
            "mailto:me@example.com",
            "javascript:alert(1)",
            "file:///etc/passwd",
        ] {
            assert!(!new_window_allowed(&url::Url::parse(u).unwrap()), "{u}");
        }
    }

    #[test]
    fn navigation() {
        let ok = ["tauri://localhost/", "tauri://localhost/index.html#x", "http://tauri.localhost/"];
        for u in ok {
            assert!(navigation_allowed(&url::Url::parse(u).unwrap()), "{u}");
        }
        let bad = [
            "https://evil.example/",
            "http://tauri.localhost.evil.example/",
            "tauri://evil/",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "data:text/html,hi",
            "asset://localhost/x",
        ];
        for u in bad {
            assert!(!navigation_allowed(&url::Url::parse(u).unwrap()), "{u}");
        }
    }

    #[test]
    fn scrub_registered_secrets() {
        register_secret("s3cr3t-token-xyz");
        assert_eq!(scrub("url=ws://h/ws?token=s3cr3t-token-xyz ok"), "url=ws://h/ws?token=[REDACTED] ok");
        let mut buf = Vec::new();
        ScrubWriter(&mut buf).write_all(b"a s3cr3t-token-xyz b").unwrap();
        assert_eq!(buf, b"a [REDACTED] b");
    }
}
