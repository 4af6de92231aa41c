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
fn resident(data: &Path, logs: &Path, app: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("--data-dir").arg(data).arg("--log-dir").arg(logs).arg("--app").arg(app);
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
    let mut child = resident(data.path(), &logs, Path::new("/nonexistent/hermes-desktop"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim_end(), READY_LINE);
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "", "nothing after the ready line, and stdout closed (end of file while it runs)");
    assert!(child.try_wait().unwrap().is_none(), "still running");
    assert!(try_hold(data.path()).unwrap().is_none(), "it holds the lock");

    let second = resident(data.path(), &logs, Path::new("/nonexistent/hermes-desktop")).output().unwrap();
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
    let launcher = WindowLauncher::new(app, "/data/dir".into(), "/log/dir".into());
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

/// Polls (≤ 20 s) until `path` exists; its text.
fn read_when_written(path: &Path, what: &str) -> String {
    let t = Instant::now();
    while !path.exists() {
        assert!(t.elapsed() < Duration::from_secs(20), "never written: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::read_to_string(path).unwrap().trim_end().to_string()
}

/// A stand-in for the window process: on `--standby` it writes its pid to `ready` and waits for one line on stdin
/// (end of file: it writes `eof` to `out`); a `["--prepared"]` line (the menu opening), it writes its pid to
/// `out.prepared` and waits for one more (end of file: `eof` to `out.unused`); then, or started directly, writes its
/// pid and its arguments (the line's, or its own) to `out`.
fn standby_script(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let (app, ready, out) = (dir.join("hermes-desktop"), dir.join("ready"), dir.join("out"));
    let script = format!(
        "#!/bin/sh
if [ \"$1\" = --standby ]; then
  echo $$ > '{r}.tmp' && mv '{r}.tmp' '{r}'
           if read -r line; then args=\"$line\"; else echo eof > '{o}'; exit 0; fi
  if [ \"$line\" = '[\"--prepared\"]' ]; then
    echo $$ > '{o}.prepared.tmp' && mv '{o}.prepared.tmp' '{o}.prepared'
    if read -r line; then args=\"$line\"; else echo eof > '{o}.unused'; exit 0; fi
  fi
else args=\"$*\"; fi
         printf '%s|%s\\n' $$ \"$args\" > '{o}.tmp' && mv '{o}.tmp' '{o}'
",
        r = ready.display(),
        o = out.display()
    );
    std::fs::write(&app, script).unwrap();
    std::fs::set_permissions(&app, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    (app, ready, out)
}

/// A window process on standby: started ahead, it is the process a Show wakes, told its command line on stdin as
/// one JSON line; a second Show (no standby left) starts a new process as before.
#[test]
fn a_show_wakes_the_window_process_on_standby_with_its_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let (app, ready, out) = standby_script(dir.path());
    let launcher = WindowLauncher::new(app, "/data/dir".into(), "/log/dir".into());
    launcher.prepare_standby();
    launcher.prepare_standby();
    let standby = read_when_written(&ready, "the standby started");
    launcher.launch(Some(Target { profile_id: "p-1".into(), conversation_id: "c \"2\"".into() }));
    let seen = read_when_written(&out, "the standby woken");
    assert_eq!(seen, format!("{standby}|[\"{OPEN_FLAG}\",\"p-1\",\"c \\\"2\\\"\"]"), "the standby itself ran on");
    assert_eq!(
        hermes_app::resident::parse_standby_line(seen.split_once('|').unwrap().1).unwrap(),
        [OPEN_FLAG, "p-1", "c \"2\""]
    );
    std::fs::remove_file(&out).unwrap();
    std::fs::remove_file(&ready).unwrap();
    launcher.launch(None);
    let seen = read_when_written(&out, "a new window process");
    let (pid, args) = seen.split_once('|').unwrap();
    assert_ne!(pid, standby, "a new process");
    assert_eq!(args, "", "Show: no arguments");
    assert!(!ready.exists(), "only one standby was started (the second prepare found it waiting)");
}

/// A standby whose executable was replaced on disk since it started (an update) is not woken: it is ended and the
/// new executable started; one that has ended is passed over the same way.
#[test]
fn a_standby_of_a_replaced_executable_or_one_that_ended_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let (app, ready, out) = standby_script(dir.path());
    let launcher = WindowLauncher::new(app.clone(), "/data/dir".into(), "/log/dir".into());
    launcher.prepare_standby();
    let standby: u32 = read_when_written(&ready, "the standby started").parse().unwrap();
    // the update: a new file in its place (another inode), as a package manager writes it
    let script = std::fs::read(&app).unwrap();
    std::fs::remove_file(&app).unwrap();
    std::fs::write(&app, script).unwrap();
    std::fs::set_permissions(&app, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    launcher.launch(None);
    let seen = read_when_written(&out, "a window process");
    assert_ne!(seen.split_once('|').unwrap().0, standby.to_string(), "not the old standby: {seen}");
    assert!(!Path::new(&format!("/proc/{standby}")).exists(), "the old standby ended (and reaped)");

    std::fs::remove_file(&out).unwrap();
    std::fs::remove_file(&ready).unwrap();
    launcher.prepare_standby();
    let standby: u32 = read_when_written(&ready, "a second standby").parse().unwrap();
    assert!(Command::new("kill").arg("-9").arg(standby.to_string()).status().unwrap().success());
    std::thread::sleep(Duration::from_millis(200));
    launcher.launch(None);
    let seen = read_when_written(&out, "a window process after the standby ended");
    assert_ne!(seen.split_once('|').unwrap().0, standby.to_string());
}

/// The standby's end of the pipe: the resident (its parent) gone, it reads end of file and exits by itself.
#[test]
fn a_standby_ends_when_its_resident_ends() {
    let dir = tempfile::tempdir().unwrap();
    let (app, ready, out) = standby_script(dir.path());
    let launcher = WindowLauncher::new(app, "/data/dir".into(), "/log/dir".into());
    launcher.prepare_standby();
    read_when_written(&ready, "the standby started");
    drop(launcher);
    assert_eq!(read_when_written(&out, "the standby's end"), "eof");
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

/// The unread total on the icon: a red disc in the bottom-right corner with the number in white, the rest of the
/// icon untouched; a different picture per number up to 9, then "9+"; nothing for none.
#[test]
fn the_unread_total_is_drawn_on_the_icon() {
    use hermes_resident::icon::{Pixmap, badged};
    let px = |p: &Pixmap, x: u32, y: u32| {
        let at = ((y * p.width + x) * 4) as usize;
        <[u8; 4]>::try_from(&p.argb[at..at + 4]).unwrap()
    };
    for size in [32, 64] {
        let blank = Pixmap { width: size, height: size, argb: vec![0; (size * size * 4) as usize] };
        assert_eq!(badged(&blank, 0), blank);
        let one = badged(&blank, 1);
        let d = size * 9 / 16;
        let changed: Vec<(u32, u32)> =
            (0..size).flat_map(|y| (0..size).map(move |x| (x, y))).filter(|&(x, y)| px(&one, x, y) != [0; 4]).collect();
        assert!(changed.iter().all(|&(x, y)| x >= size - d && y >= size - d), "only the corner is drawn on");
        assert_eq!(px(&one, size - d / 2, size - 2)[0], 255, "an opaque disc");
        assert_eq!(px(&one, size - d / 2, size - d / 2), [255; 4], "the digit's middle stroke is white");
        let pictures: std::collections::HashSet<Vec<u8>> = (1..=12).map(|n| badged(&blank, n).argb).collect();
        assert_eq!(pictures.len(), 10, "1 to 9, then one \"9+\"");
    }
}

/// A private session bus (`dbus-daemon`), ended when dropped.
struct Bus {
    daemon: std::process::Child,
    address: String,
}

impl Bus {
    /// `None` where the machine has no `dbus-daemon` or `gdbus` (the test then says so and checks nothing).
    fn start() -> Option<Bus> {
        let has = |tool: &str, arg: &str| Command::new(tool).arg(arg).output().is_ok_and(|o| o.status.success());
        if !has("dbus-daemon", "--version") || !has("gdbus", "help") {
            return None;
        }
        let mut daemon = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut address = String::new();
        BufReader::new(daemon.stdout.take()?).read_line(&mut address).ok()?;
        Some(Bus { daemon, address: address.trim().to_string() })
    }

    /// `gdbus call` on this bus; its output.
    fn call(&self, dest: &str, path: &str, method: &str, args: &[&str]) -> String {
        let out = Command::new("gdbus")
            .args(["call", "--address", &self.address, "--dest", dest, "--object-path", path, "--method", method])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{method}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The tray item's bus name once it has one.
    fn tray_name(&self) -> String {
        let t = Instant::now();
        loop {
            let names =
                self.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.ListNames", &[]);
            if let Some(at) = names.find("org.kde.StatusNotifierItem-") {
                return names[at..].split('\'').next().unwrap().to_string();
            }
            assert!(t.elapsed() < Duration::from_secs(20), "no tray item on the bus: {names}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

/// The id of the dbusmenu item whose label starts with `starts`, in a `GetLayout` answer.
fn item_id(layout: &str, starts: &str) -> String {
    let at = layout.find(&format!("'label': <'{starts}")).unwrap_or_else(|| panic!("{starts:?} in {layout}"));
    let open = layout[..at].rfind('(').unwrap();
    layout[open + 1..at].split(',').next().unwrap().trim().to_string()
}

/// The tray as a tray host reads it over D-Bus (StatusNotifierItem + com.canonical.dbusmenu): "Hermes", the app's
/// icon, the unread total in the tooltip and the menu (counted by the store: they survive the window process), the
/// agent's line; a click on the conversation's entry starts the window process on it, Quit ends the resident.
#[test]
fn the_tray_serves_the_dashboard_over_dbus_and_its_entries_act() {
    let Some(bus) = Bus::start() else {
        eprintln!("no dbus-daemon or gdbus here: the tray is not checked");
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let app = hermes_app::App::open(data.path()).unwrap();
    let (p, conv) = app
        .with_store(|s| {
            let p = s.profile_create(&hermes_store::NewProfile::adapter("Lab agent", "ws://127.0.0.1:9"))?;
            let c = s.conversation_for_adapter(&p.id)?;
            for text in ["one", "two"] {
                s.message_upsert(&hermes_store::Message::new(&c.id, hermes_store::Direction::Down, text, 1))?;
            }
            Ok((p, c))
        })
        .unwrap();
    drop(app);
    // (the window process the click starts: the resident's standby woken, or a new one if it was not ready yet)
    let (script, _, out) = standby_script(data.path());
    let mut child = resident(data.path(), &data.path().join("logs"), &script)
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let name = bus.tray_name();
    let get = |prop: &str| {
        bus.call(
            &name,
            "/StatusNotifierItem",
            "org.freedesktop.DBus.Properties.Get",
            &["org.kde.StatusNotifierItem", prop],
        )
    };
    assert_eq!(get("Title").trim(), "(<'Hermes'>,)");
    assert!(get("IconPixmap").starts_with("(<[(32, 32, [byte "), "the app's icon");
    let layout_when = |pred: &dyn Fn(&str) -> bool| {
        let t = Instant::now();
        loop {
            let layout = bus.call(&name, "/MenuBar", "com.canonical.dbusmenu.GetLayout", &["--", "0", "-1", "[]"]);
            if pred(&layout) {
                return layout;
            }
            assert!(t.elapsed() < Duration::from_secs(20), "the menu never showed what was expected: {layout}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let layout = layout_when(&|l| l.contains("'2 unread'"));
    assert!(layout.contains("'label': <'Lab agent — offline'>"), "{layout}");
    assert!(get("ToolTip").contains("Hermes — 2 unread · 0 of 1 agents connected"), "{}", get("ToolTip"));

    // the host opens the menu (twice: some ask at every hover), then the user picks an entry
    for _ in 0..2 {
        let answer = bus.call(&name, "/MenuBar", "com.canonical.dbusmenu.AboutToShow", &["0"]);
        assert!(answer.starts_with("(true,)") || answer.starts_with("(false,)"), "{answer}");
    }
    let click = |id: &str| bus.call(&name, "/MenuBar", "com.canonical.dbusmenu.Event", &[id, "clicked", "<0>", "0"]);
    click(&item_id(&layout, "Lab agent: "));
    let seen = read_when_written(&out, "the conversation's entry started no window process");
    let args = seen.split_once('|').unwrap().1;
    let args =
        hermes_app::resident::parse_standby_line(args).unwrap_or_else(|| args.split(' ').map(str::to_owned).collect());
    assert_eq!(args, [OPEN_FLAG, &p.id, &conv.id]);
    click(&item_id(&layout, "Mute notifications"));
    let layout = layout_when(&|l| l.contains("'Notifications muted — unmute'"));
    click(&item_id(&layout, "Quit"));
    let t = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(t.elapsed() < Duration::from_secs(20), "Quit did not end the resident");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(0));
    // the menu's opening read the window process's files ahead, once for the two; the start read them again
    let log = std::fs::read_to_string(data.path().join("logs").join("resident.log")).unwrap();
    let reads = |why: &str| {
        log.lines().filter(|l| l.contains("read ahead the window process's files") && l.contains(why)).count()
    };
    assert_eq!(reads("the tray's menu opened"), 1, "{log}");
    assert_eq!(reads("why=\"start\""), 1, "{log}");
}

/// A launcher on the stand-in ([`standby_script`]) with its standby started: the launcher, the standby's pid, and the
/// stand-in's `ready`, `out` and `out.prepared` files.
struct WithStandby {
    launcher: WindowLauncher,
    standby: String,
    ready: std::path::PathBuf,
    out: std::path::PathBuf,
    prepared: std::path::PathBuf,
}

fn with_standby(dir: &Path, prepared_for: Option<Duration>) -> WithStandby {
    let (app, ready, out) = standby_script(dir);
    let mut launcher = WindowLauncher::new(app, dir.join("data"), "/log/dir".into());
    if let Some(wait) = prepared_for {
        launcher.set_prepared_for(wait);
    }
    launcher.prepare_standby();
    let standby = read_when_written(&ready, "the standby started");
    WithStandby { launcher, standby, ready, out, prepared: dir.join("out.prepared") }
}

/// The tray's menu opening wakes the standby with `["--prepared"]` (not a notification being raised); the Show picked
/// then is told to that same process as its next line, and no other process starts.
#[test]
fn the_menu_opening_prepares_the_standby_and_the_pick_goes_to_it() {
    use hermes_resident::ShowHint;
    let dir = tempfile::tempdir().unwrap();
    let WithStandby { launcher, standby, ready, out, prepared } = with_standby(dir.path(), None);
    launcher.show_may_follow(ShowHint::Notified);
    std::thread::sleep(Duration::from_millis(300));
    assert!(!prepared.exists(), "a notification prepares nothing");
    launcher.show_may_follow(ShowHint::MenuOpened);
    assert_eq!(read_when_written(&prepared, "the standby prepares"), standby);
    launcher.show_may_follow(ShowHint::MenuOpened);
    launcher.launch(Some(Target { profile_id: "p".into(), conversation_id: "c".into() }));
    let seen = read_when_written(&out, "the pick");
    assert_eq!(seen, format!("{standby}|[\"{OPEN_FLAG}\",\"p\",\"c\"]"), "the prepared process itself, told the pick");
    std::fs::remove_file(&ready).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(!ready.exists(), "no other process started");
}

/// Nothing picked within its time: the prepared process reads end of file (and ends), a new standby is started in its
/// place, and a menu opened again soon after prepares nothing; the Quick Ask shortcut ends a prepared process too.
#[test]
fn an_unused_prepared_window_process_ends_and_a_new_standby_takes_its_place() {
    use hermes_resident::ShowHint;
    let dir = tempfile::tempdir().unwrap();
    let WithStandby { launcher, standby: first, ready, out, prepared } =
        with_standby(dir.path(), Some(Duration::from_millis(400)));
    std::fs::remove_file(&ready).unwrap();
    launcher.show_may_follow(ShowHint::MenuOpened);
    assert_eq!(read_when_written(&prepared, "the standby prepares"), first);
    assert_eq!(read_when_written(&dir.path().join("out.unused"), "the unused prepared process's end"), "eof");
    let second = read_when_written(&ready, "a new standby");
    assert_ne!(second, first);
    std::fs::remove_file(&prepared).unwrap();
    assert!(!out.exists(), "nothing started");
    launcher.show_may_follow(ShowHint::MenuOpened);
    std::thread::sleep(Duration::from_millis(500));
    assert!(!prepared.exists(), "a menu opened again soon after prepares nothing");
    // the standby is still there for a Show
    launcher.launch(None);
    assert_eq!(read_when_written(&out, "the Show"), format!("{second}|[]"));
}

#[test]
fn the_quick_ask_shortcut_ends_a_prepared_window_process() {
    use hermes_resident::ShowHint;
    let dir = tempfile::tempdir().unwrap();
    let WithStandby { launcher, standby, out, prepared, .. } = with_standby(dir.path(), None);
    launcher.show_may_follow(ShowHint::MenuOpened);
    assert_eq!(read_when_written(&prepared, "the standby prepares"), standby);
    launcher.quick_ask(false);
    // a new process runs the panel; the prepared one reads end of file
    let seen = read_when_written(&out, "the panel's process");
    let (pid, args) = seen.split_once('|').unwrap();
    assert_ne!(pid, standby);
    assert_eq!(args, "--quick-ask");
    assert_eq!(read_when_written(&dir.path().join("out.unused"), "the prepared process's end"), "eof");
    let t = Instant::now();
    while Path::new(&format!("/proc/{standby}")).exists() {
        assert!(t.elapsed() < Duration::from_secs(10), "the prepared process ended");
        std::thread::sleep(Duration::from_millis(10));
    }
}
