//! The INSTALLED app: `cargo xtask test` builds the release .deb, installs it with dpkg and runs this test
//! with `HERMES_PACKAGE_BIN=/usr/bin/hermes-desktop` under Xvfb, in a D-Bus session with an unlocked gnome-keyring and
//! a throwaway HOME; then it purges the package. Skipped unless `HERMES_PACKAGE_BIN` is set.
//!
//! It proves that the packaged binary (release profile, embedded UI, custom protocol) opens its native window, reads
//! its token from the keychain, connects to a devserver on the loopback and chats, and that a build without an update
//! endpoint says so in Settings instead of failing.

mod wd;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use wd::{Driver, Session};

const TOKEN: &str = "package-token-0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a";

fn installed_binary() -> Option<PathBuf> {
    let bin = std::env::var_os("HERMES_PACKAGE_BIN").map(PathBuf::from);
    if bin.is_none() {
        eprintln!("skipped: set HERMES_PACKAGE_BIN (cargo xtask test installs the .deb and sets it)");
    }
    bin
}

fn body_has(s: &Session, what: &str, secs: u64) {
    s.wait(&format!("text {what:?}"), secs, &format!("return document.body.innerText.includes({})", json!(what)));
}

/// The X11 windows with exactly this title (the native window, not only a webview).
fn x_windows_titled(title: &str) -> Vec<String> {
    Command::new("xdotool")
        .args(["search", "--name", &format!("^{title}$")])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The window's icon as the window manager sees it (`_NET_WM_ICON`), e.g. "Icon (128 x 128)".
fn x_window_icon(id: &str) -> String {
    Command::new("xprop")
        .args(["-id", id, "_NET_WM_ICON"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").to_string())
        .unwrap_or_default()
}

#[test]
fn package_installed_app_opens_connects_and_has_no_update_endpoint() {
    let Some(bin) = installed_binary() else { return };
    assert!(bin.is_absolute() && bin.is_file(), "{} is not an installed program", bin.display());
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_default();
    assert!(
        !bin.starts_with(env!("CARGO_MANIFEST_DIR")) && (target.is_empty() || !bin.starts_with(&target)),
        "HERMES_PACKAGE_BIN must be the installed binary, not a build output: {}",
        bin.display()
    );

    // the agent: a devserver on the loopback
    let agent = wd::LoopbackAgent::start(TOKEN);
    let server = agent.s();

    // a data folder with one profile whose token is in the (throwaway) keychain
    let data = tempfile::tempdir().unwrap();
    wd::profile_with_token(data.path(), "Packaged", &server.adapter_url(), TOKEN, hermes_store::Dialect::Adapter, None);

    let shots = wd::screens();
    let driver = Driver::start(data.path());
    let s = driver.session(bin.to_str().unwrap(), &[]);

    // its window opens, with the embedded UI
    s.wait("composer", 30, "return !!document.getElementById('composer-input')");
    // the window goes on screen once the page says it has rendered, a moment after the composer is in the DOM:
    // until then GTK has not realized it and X11 has no window to find
    let t = Instant::now();
    let windows = loop {
        let found = x_windows_titled("Hermes");
        let with_icon = found.iter().any(|w| x_window_icon(w).contains("Icon (128 x 128)"));
        if with_icon || t.elapsed() > Duration::from_secs(10) {
            break found;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(!windows.is_empty(), "no X11 window titled Hermes");
    // the generated app icon (icons/128x128.png, the first PNG of bundle.icon) is the window icon
    assert!(
        windows.iter().any(|w| x_window_icon(w).contains("Icon (128 x 128)")),
        "the window has no 128 px icon: {:?}",
        windows.iter().map(|w| x_window_icon(w)).collect::<Vec<_>>()
    );

    // it connects with the keychain token and chats
    let t = Instant::now();
    while server.ready_count() == 0 {
        assert!(t.elapsed() < Duration::from_secs(30), "the installed app never connected to the devserver");
        std::thread::sleep(Duration::from_millis(50));
    }
    s.wait("no banner", 15, "return !document.querySelector('.banner')");
    s.exec(
        "const t=document.getElementById('composer-input'); t.focus(); t.value=arguments[0];
         t.dispatchEvent(new Event('input',{bubbles:true}));",
        json!(["hello from the installed package"]),
    );
    s.wait("send enabled", 5, "return !document.querySelector('.composer button.send').disabled");
    s.exec("document.querySelector('.composer button.send').click()", json!([]));
    body_has(&s, "You said: hello from the installed package", 20);
    s.screenshot(&shots.join("package-01-connected.png"));

    // Settings → About: the packaged version, and the updater disabled cleanly (no endpoint in this build)
    s.exec("document.querySelector('button[aria-label=\"Settings\"]').click()", json!([]));
    s.wait("settings", 10, "return !!document.getElementById('tab-about')");
    s.exec("document.getElementById('tab-about').click()", json!([]));
    body_has(&s, env!("CARGO_PKG_VERSION"), 10);
    s.wait(
        "check button",
        10,
        "return [...document.querySelectorAll('button')].some(b => b.innerText.includes('Check for updates'))",
    );
    s.exec(
        "[...document.querySelectorAll('button')].find(b => b.innerText.includes('Check for updates')).click()",
        json!([]),
    );
    body_has(&s, "Updates are not configured for this build", 20);
    assert!(s.alert_text().is_none(), "an alert dialog opened");
    s.screenshot(&shots.join("package-02-updates.png"));

    drop(s);
    drop(driver);
    drop(agent);
}
