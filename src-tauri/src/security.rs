//! Security checks of the shell that do not need a running app (unit-tested): which URLs may leave the app, which
//! navigations the webview may make, and scrubbing of secrets from log lines.

use std::io::Write;
use std::sync::{Mutex, OnceLock};

/// `open_external` only hands http, https and mailto URLs to the OS (never `file:`, `javascript:`, custom schemes).
pub fn check_external_url(raw: &str) -> Result<url::Url, String> {
    let u = url::Url::parse(raw.trim()).map_err(|_| "this link is not a valid URL".to_string())?;
    match u.scheme() {
        "http" | "https" => {
            if u.host_str().is_none_or(str::is_empty) {
                return Err("this link has no host".into());
            }
            Ok(u)
        }
        "mailto" => Ok(u),
        other => Err(format!("links of type \"{other}:\" are not opened")),
    }
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

pub fn scrub(line: &str) -> String {
    let mut out = line.to_string();
    if let Ok(v) = secrets().lock() {
        for s in v.iter() {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), "[REDACTED]");
            }
        }
    }
    out
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
