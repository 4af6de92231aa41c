//! Rules of the source tree that keep the next change a one-place change:
//! - no source file over 700 lines (tests, benches, fuzz targets and generated files aside);
//! - comments say why, not when: no comment cites an issue number or a work session (that history is in git and
//!   bench/README.md);
//! - the public functions of the protocol, client and app layers return typed errors, never `Result<_, String>`.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask is inside the workspace").to_path_buf()
}

/// Source files under `dirs` (relative to the root) with one of `exts`, skipping dependencies and build output.
fn sources(dirs: &[&str], exts: &[&str]) -> Vec<PathBuf> {
    fn walk(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if p.is_dir() {
                if !matches!(name.as_str(), "node_modules" | "target" | "dist" | "gen" | ".svelte-kit") {
                    walk(&p, exts, out);
                }
            } else if exts.iter().any(|x| name.ends_with(x)) {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for d in dirs {
        walk(&root().join(d), exts, &mut out);
    }
    out.sort();
    out
}

/// Tests, benches, fuzz targets and generated files may be long.
fn exempt(p: &Path) -> bool {
    let s = p.to_string_lossy();
    ["/tests/", "/test/", "/benches/", "/fuzz/", "/examples/"].iter().any(|d| s.contains(d))
        || s.ends_with("bindings.ts")
        || s.ends_with(".test.ts")
}

const CODE: &[&str] = &[".rs", ".ts", ".svelte"];
const TREES: &[&str] = &["crates", "src-tauri/src", "src-tauri/build.rs", "ui/src", "avatar", "xtask/src"];

#[test]
fn no_source_file_is_over_700_lines() {
    let files = sources(TREES, CODE);
    assert!(files.len() > 50, "the tree is read: {} files", files.len());
    let long: Vec<String> = files
        .iter()
        .filter(|p| !exempt(p))
        .filter_map(|p| {
            let n = std::fs::read_to_string(p).ok()?.lines().count();
            (n > 700).then(|| format!("{} ({n} lines)", p.strip_prefix(root()).unwrap_or(p).display()))
        })
        .collect();
    assert!(long.is_empty(), "split these by responsibility: {long:#?}");
}

/// A comment that dates itself: "issue #4", "(#23)", "session 14".
fn dated(comment: &str) -> bool {
    let c = comment.to_lowercase();
    let words: Vec<&str> = c.split(|ch: char| !ch.is_alphanumeric() && ch != '#').filter(|w| !w.is_empty()).collect();
    words.windows(2).any(|w| {
        (w[0] == "issue" || w[0] == "issues" || w[0] == "session")
            && w[1].trim_start_matches('#').chars().all(|ch| ch.is_ascii_digit())
            && !w[1].trim_start_matches('#').is_empty()
    }) || {
        let ws: Vec<&str> = c.split_whitespace().map(|w| w.trim_matches(|ch: char| "(),.;:'".contains(ch))).collect();
        ws.iter().enumerate().any(|(i, w)| {
            // a standard's number ("UAX #29") is not an issue
            let standard = i > 0 && matches!(ws[i - 1], "uax" | "utr" | "rfc" | "tr" | "iso");
            !standard
                && w.len() >= 2
                && w.len() <= 4
                && w.starts_with('#')
                && w[1..].chars().all(|ch| ch.is_ascii_digit())
        })
    }
}

/// The comment text of a line of Rust, TypeScript or Svelte (`//`, `///`, `//!`, `/* … */`, `*` continuation, `<!--`).
fn comment_of(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if t.starts_with("//") || t.starts_with("/*") || t.starts_with("* ") || t.starts_with("<!--") {
        return Some(t);
    }
    line.find(" // ").map(|i| &line[i..])
}

#[test]
fn comments_say_why_not_when() {
    let mut hits = Vec::new();
    for p in sources(TREES, CODE).iter().chain(sources(&["src-tauri/tests", "xtask"], &[".rs"]).iter()) {
        let Ok(text) = std::fs::read_to_string(p) else { continue };
        if p.ends_with("source_rules.rs") {
            continue;
        }
        for (i, line) in text.lines().enumerate() {
            if let Some(c) = comment_of(line)
                && dated(c)
            {
                hits.push(format!("{}:{}: {}", p.strip_prefix(root()).unwrap_or(p).display(), i + 1, c.trim()));
            }
        }
    }
    assert!(hits.is_empty(), "comments citing issues or sessions (keep the why, drop the when): {hits:#?}");
}

#[test]
fn the_dated_comment_rule_can_fail() {
    assert!(dated("// the receive hot path (issue #4's goal)"));
    assert!(dated("/// measured in session 14"));
    assert!(dated("// see #23"));
    assert!(!dated("// Unicode sentence boundaries (UAX #29)"), "a standard's number");
    assert!(!dated("// one session per profile, 4 retries"));
    assert!(!dated("// color #fff"));
}

#[test]
fn public_functions_of_the_core_layers_return_typed_errors() {
    let files = sources(&["crates/protocol/src", "crates/client/src", "crates/app/src"], &[".rs"]);
    assert!(files.len() > 10, "the tree is read: {} files", files.len());
    let mut hits = Vec::new();
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        // a signature may span lines: join each `pub fn` / `pub async fn` up to its body's brace
        let mut sig: Option<(usize, String)> = None;
        for (i, line) in text.lines().enumerate() {
            let t = line.trim_start();
            if sig.is_none() && (t.starts_with("pub fn ") || t.starts_with("pub async fn ")) {
                sig = Some((i + 1, String::new()));
            }
            if let Some((at, s)) = sig.as_mut() {
                s.push_str(t);
                if t.contains('{') || t.ends_with(';') {
                    let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
                    if compact.contains(",String>") && compact.contains("->Result<") {
                        hits.push(format!("{}:{at}: {}", p.strip_prefix(root()).unwrap_or(p).display(), s));
                    }
                    sig = None;
                }
            }
        }
    }
    assert!(hits.is_empty(), "public fns returning Result<_, String>: {hits:#?}");
}
