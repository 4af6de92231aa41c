//! The resident's global shortcuts on a real X server (our own Xvfb): the default Quick Ask and capture keys are
//! grabbed, a press (xdotool, as a keyboard: the X grab sees it) starts the window process with `--quick-ask`, and
//! waiting for a press costs nothing — no thread of the resident wakes up on a timer (the shortcut crate's X11
//! thread polled every 50 ms: 20 wake-ups a second for as long as the app waited in the tray; see
//! third_party/README.md). Fails (does not skip) without Xvfb or xdotool: `cargo xtask test` installs them.

#![cfg(target_os = "linux")]

use std::collections::HashMap;
use std::io::Read as _;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hermes-resident");

/// A process ended (and reaped) when dropped.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Xvfb on a display it picks itself (`-displayfd`): the display's name, and the server.
fn xvfb() -> (String, Reaped) {
    let mut child = Command::new("Xvfb")
        .args(["-displayfd", "1", "-screen", "0", "1024x768x24", "-nolisten", "tcp"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb (cargo xtask test installs it)");
    let mut out = child.stdout.take().unwrap();
    let mut number = String::new();
    let mut byte = [0u8; 1];
    while out.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
        number.push(byte[0] as char);
    }
    assert!(!number.is_empty(), "Xvfb said no display number");
    (format!(":{number}"), Reaped(child))
}

fn wait_until(secs: u64, what: &str, mut ok: impl FnMut() -> bool) {
    let t = Instant::now();
    while !ok() {
        assert!(t.elapsed() < Duration::from_secs(secs), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Context switches (voluntary + involuntary) of each thread of `pid` so far: tid → (name, switches).
fn switches(pid: u32) -> HashMap<u32, (String, u64)> {
    let mut m = HashMap::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten() {
        let Ok(tid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let status = std::fs::read_to_string(e.path().join("status")).unwrap_or_default();
        let field = |key: &str| status.lines().find_map(|l| l.strip_prefix(key)).map_or("", str::trim).to_string();
        let n = |key: &str| field(key).parse::<u64>().unwrap_or(0);
        m.insert(tid, (field("Name:"), n("voluntary_ctxt_switches:") + n("nonvoluntary_ctxt_switches:")));
    }
    m
}

#[test]
fn the_shortcuts_are_grabbed_a_press_starts_the_panel_and_waiting_wakes_no_thread() {
    let (display, _x) = xvfb();
    let dir = tempfile::tempdir().unwrap();
    let (data, logs, out) = (dir.path().join("data"), dir.path().join("logs"), dir.path().join("launched"));
    std::fs::create_dir_all(&data).unwrap();
    // the window process: writes its arguments
    let app = dir.path().join("hermes-desktop");
    std::fs::write(&app, format!("#!/bin/sh\necho \"$*\" > '{0}.tmp' && mv '{0}.tmp' '{0}'\n", out.display())).unwrap();
    std::fs::set_permissions(&app, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let child = Command::new(BIN)
        .arg("--data-dir")
        .arg(&data)
        .arg("--log-dir")
        .arg(&logs)
        .arg("--app")
        .arg(&app)
        .env("DISPLAY", &display)
        // no session bus (no tray, notifications or network watcher: threads of their own that are not under test)
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
        .env("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/bus")
        .env("HERMES_NO_KEYCHAIN", "1")
        .env_remove("HERMES_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let _resident = Reaped(child);
    let log = || std::fs::read_to_string(logs.join("resident.log")).unwrap_or_default();
    wait_until(20, "both shortcuts grabbed", || {
        let l = log();
        l.contains("Quick Ask shortcut grabbed") && l.contains("capture shortcut grabbed")
    });

    // Waiting: over 3 s, no thread wakes more than a few times (a 50 ms poll would be ~60).
    std::thread::sleep(Duration::from_millis(500));
    let before = switches(pid);
    std::thread::sleep(Duration::from_secs(3));
    let after = switches(pid);
    let busy: Vec<String> = after
        .iter()
        .map(|(tid, (name, n))| (tid, name, n.saturating_sub(before.get(tid).map_or(0, |(_, b)| *b))))
        .filter(|(_, _, woke)| *woke > 6)
        .map(|(tid, name, woke)| format!("{name}/{tid}: {woke} wake-ups"))
        .collect();
    assert!(busy.is_empty(), "threads woke while the resident waited for a key: {busy:?}\n{}", log());

    // A press: the window process starts on the panel.
    let press = Command::new("xdotool").args(["key", "ctrl+alt+space"]).env("DISPLAY", &display).status();
    assert!(press.expect("xdotool (cargo xtask test installs it)").success());
    wait_until(10, "the window process started by the press", || out.exists());
    assert_eq!(std::fs::read_to_string(&out).unwrap().trim(), "--quick-ask", "{}", log());
}
