//! Crates carry only what they use: the client (and so the CLI) builds without audio system libraries, and the
//! desktop app without its `demo` feature has no HTTP server stack (axum, the devserver and its fault proxy).
//! `cargo tree` reads the lockfile only: fast, offline.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The crate names in the normal (non-dev, non-build) dependency tree `cargo tree <args>` prints.
fn tree(args: &[&str]) -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask is inside the workspace");
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .args(["tree", "--locked", "-e", "normal", "--prefix", "none", "--format", "{p}"])
        .args(args)
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "cargo tree {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

const AUDIO_SYSTEM: &[&str] = &["cpal", "alsa", "alsa-sys", "earshot"];

#[test]
fn client_and_cli_build_without_audio_system_libraries() {
    for package in ["hermes-client", "hermes-chat"] {
        let deps = tree(&["-p", package]);
        assert!(deps.contains("hermes-voice"), "{package}: the tree is read ({deps:?})");
        let found: Vec<_> = AUDIO_SYSTEM.iter().filter(|c| deps.contains(**c)).collect();
        assert!(found.is_empty(), "{package} depends on {found:?}: hermes-voice's `capture`/`vad` features crept in");
    }
    // the rule can fail: the app, which records, has them
    let app = tree(&["-p", "hermes-desktop"]);
    assert!(app.contains("cpal") && app.contains("earshot"), "{app:?}");
}

#[test]
fn desktop_without_demo_has_no_http_server() {
    let slim = tree(&["-p", "hermes-desktop", "--no-default-features"]);
    assert!(slim.contains("tauri"), "the tree is read ({slim:?})");
    for c in ["axum", "hermes-devserver"] {
        assert!(!slim.contains(c), "hermes-desktop --no-default-features depends on {c}");
    }
    let full = tree(&["-p", "hermes-desktop"]);
    assert!(full.contains("axum") && full.contains("hermes-devserver"), "the default build has the demo agent");
}

/// What the window process links and the resident process must not (its memory figure rests on it).
const WINDOW_TOOLKIT: &[&str] = &["gtk", "gdk", "webkit2gtk", "javascriptcore-rs", "tauri", "wry", "tao"];

#[test]
fn the_resident_process_links_neither_gtk_nor_webkit() {
    let resident = tree(&["-p", "hermes-resident", "--target", "x86_64-unknown-linux-gnu"]);
    // the tree is read: its tray, its engines and the Quick Ask shortcut's X11 grab
    assert!(
        resident.contains("ksni") && resident.contains("hermes-client") && resident.contains("global-hotkey"),
        "{resident:?}"
    );
    let found: Vec<_> = WINDOW_TOOLKIT.iter().filter(|c| resident.contains(**c)).collect();
    assert!(found.is_empty(), "hermes-resident depends on {found:?}");
    // the rule can fail: the window process has them all
    let app = tree(&["-p", "hermes-desktop", "--target", "x86_64-unknown-linux-gnu"]);
    assert!(
        WINDOW_TOOLKIT.iter().all(|c| app.contains(*c)),
        "{:?}",
        WINDOW_TOOLKIT.iter().filter(|c| !app.contains(**c)).collect::<Vec<_>>()
    );
}
