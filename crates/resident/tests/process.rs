//! The resident as a process (the built binary) and the window processes it starts: the hand-over protocol (the lock,
//! the ready line, stdout closed after it, SIGTERM through `take_over`, exit 0, the lock free again), a second resident
//! on the same data folder, the command line, the log file; and the window process started detached with the right
//! arguments and environment. No display and no session bus: the tray and the network watcher are simply absent.

#![cfg(target_os = "linux")]

use std::io::{BufRead as _, BufReader, Read as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hermes_app::resident::{OPEN_FLAG, READY_LINE, take_over, try_hold};
use hermes_resident::{Launcher, Target, WindowLauncher};

const BIN: &str = env!("CARGO_BIN_EXE_hermes-resident");

/// The resident with no bus to talk to (no tray, no notifications, no network watcher) and no keychain.
fn resident(data: &Path, logs: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("--data-dir").arg(data).arg("--log-dir").arg(logs).arg("--app").arg("/nonexistent/hermes-desktop");
    cmd.env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
        .env("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/bus")
        .env("HERMES_NO_KEYCHAIN", "1")
        .env_remove("HERMES_LOG");
    cmd
}

#[test]
fn the_hand_over_ready_line_then_closed_stdout_a_second_resident_and_sigterm() {
    let data = tempfile::tempdir().unwrap();
    let logs = data.path().join("logs");
    let mut child = resident(data.path(), &logs).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim_end(), READY_LINE);
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "", "nothing after the ready line, and stdout closed (end of file while it runs)");
    assert!(child.try_wait().unwrap().is_none(), "still running");
    assert!(try_hold(data.path()).unwrap().is_none(), "it holds the lock");

    let second = resident(data.path(), &logs).output().unwrap();
    assert!(second.status.success(), "{second:?}");
    assert_eq!(String::from_utf8_lossy(&second.stderr).trim(), "hermes-resident: already running");
    assert!(second.stdout.is_empty(), "no ready line from the second one");

    assert!(take_over(data.path(), Duration::from_secs(5)).unwrap(), "a resident was running");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "SIGTERM ends it cleanly");
    assert!(try_hold(data.path()).unwrap().is_some(), "the lock is free again");
    let log = std::fs::read_to_string(logs.join("resident.log")).unwrap();
    assert!(log.contains("resident started") && log.contains("SIGTERM") && log.contains("resident ended"), "{log}");
}

#[test]
fn a_command_line_that_does_not_fit_is_refused_with_the_usage() {
    let out = Command::new(BIN).arg("--data-dir").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--data-dir needs a value") && err.contains("usage: hermes-resident"), "{err}");
    let out = Command::new(BIN).args(["--data-dir", "/tmp", "--log-dir", "/tmp"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--app is missing"));
}

#[test]
fn args_parse_both_spellings_and_refuse_unknown_flags() {
    use hermes_resident::args::Args;
    let a = Args::parse(["--data-dir=/d", "--log-dir", "/l", "--app", "/usr/bin/hermes"].map(Into::into)).unwrap();
    assert_eq!(
        a,
        Args { data_dir: "/d".into(), log_dir: "/l".into(), app: "/usr/bin/hermes".into() },
        "--flag=value and --flag value"
    );
    assert!(Args::parse(["--data-dir", "/d", "--verbose"].map(Into::into)).is_err());
    assert!(Args::parse(["--data-dir="].map(Into::into)).is_err(), "an empty value");
}

/// A notification's click or a tray conversation: `<app> --open-conversation P C` with the folders in its
/// environment, in a process group of its own, with no stdin/stdout/stderr of the resident's.
#[test]
fn the_window_process_is_started_detached_on_the_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let app = dir.path().join("hermes-desktop");
    // pid, process group (field 5 of /proc/self/stat), stdin's target, arguments, folders
    let script = format!(
        "#!/bin/sh\nprintf '%s|%s|%s|%s|%s|%s\\n' $$ \"$(cut -d' ' -f5 /proc/$$/stat)\" \"$(readlink /proc/$$/fd/0)\" \
         \"$*\" \"$HERMES_DATA_DIR\" \"$HERMES_LOG_DIR\" > '{}.tmp' && mv '{0}.tmp' '{0}'\n",
        out.display()
    );
    std::fs::write(&app, script).unwrap();
    std::fs::set_permissions(&app, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let launcher = WindowLauncher { app, data_dir: "/data/dir".into(), log_dir: "/log/dir".into() };
    let target = Target { profile_id: "p-1".into(), conversation_id: "c-2".into() };
    let cmd = launcher.command(Some(&target));
    let args: Vec<_> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
    assert_eq!(args, [OPEN_FLAG, "p-1", "c-2"]);
    assert!(launcher.command(None).get_args().next().is_none(), "Show: no arguments");

    launcher.launch(Some(target));
    let t = Instant::now();
    while !out.exists() {
        assert!(t.elapsed() < Duration::from_secs(20), "the window process never ran");
        std::thread::sleep(Duration::from_millis(10));
    }
    let seen = std::fs::read_to_string(&out).unwrap();
    let fields: Vec<&str> = seen.trim_end().split('|').collect();
    assert_eq!(fields[0], fields[1], "a process group of its own: {seen}");
    assert_eq!(fields[2], "/dev/null", "no stdin of ours");
    assert_eq!(fields[3..], [&format!("{OPEN_FLAG} p-1 c-2"), "/data/dir", "/log/dir"]);
}

#[test]
fn the_tray_icon_is_the_apps_icon_in_argb32() {
    let icons = hermes_resident::icon::app_icons();
    assert_eq!(icons.iter().map(|i| (i.width, i.height)).collect::<Vec<_>>(), [(32, 32), (64, 64)]);
    for i in &icons {
        assert_eq!(i.argb.len(), (i.width * i.height * 4) as usize);
    }
    // alpha first: a 1×1 opaque red RGBA PNG becomes FF FF 00 00
    let mut png = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut png, 1, 1);
        enc.set_color(png::ColorType::Rgba);
        enc.write_header().unwrap().write_image_data(&[255, 0, 0, 255]).unwrap();
    }
    assert_eq!(hermes_resident::icon::decode(&png).unwrap().argb, [255, 255, 0, 0]);
    assert!(hermes_resident::icon::decode(b"not a png").is_err());
}
