//! The app as a resident Hermes device, through the real app (WebKitWebDriver, Xvfb; see e2e.rs), its shell and the
//! reference agent on loopback: closing the window keeps the process and its connections; the start-at-login
//! setting writes and removes the XDG autostart entry; a start with the login flag connects every agent without a
//! window; a window hidden past its (shortened) timeout loses its WebKit web process, and showing it builds the page
//! again, interactive. Skipped unless `HERMES_E2E=1` (`cargo xtask e2e e2e_resident`).
//! Screenshots: `target/e2e-screens/resident-*.png`.

mod wd;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use wd::app::*;
use wd::desk::*;
use wd::tray::*;

#[test]
fn e2e_resident_close_keeps_the_app_and_its_connections() {
    if !enabled() {
        return;
    }
    let setup = Setup::new(&["Lab agent", "Second agent"]);
    let app = setup.launch(&[]);
    within(15, "both agents connected", || setup.connections() == 2);
    let ready = setup.agent.s().ready_count();

    close_main(app.pid);
    within(10, "the window off screen", || x::shown(app.pid, "Hermes").is_empty());
    std::thread::sleep(Duration::from_secs(2));
    assert!(app.alive(), "closing the window does not end the app");
    assert_eq!(setup.connections(), 2, "the agents still see this device");
    assert_eq!(setup.agent.s().ready_count(), ready, "and no connection was made again");
    // what the agent sends now still reaches the device
    let (_, device) = &setup.profiles[0];
    assert_eq!(
        setup
            .agent
            .s()
            .send_raw_to_device(device, r#"{"t":"message","id":"while-hidden","text":"while you were away"}"#),
        1,
        "the device is reachable while its window is closed"
    );
}

#[test]
fn e2e_resident_start_at_login_setting_writes_and_removes_the_autostart_entry() {
    if !enabled() {
        return;
    }
    let setup = Setup::new(&["Lab agent"]);
    let app = setup.launch(&[]);
    let entry = setup.home.join(".config/autostart/Hermes.desktop");
    assert!(!entry.exists(), "off by default");
    app.s.exec("document.querySelector('button[aria-label=\"Settings\"]').click()", json!([]));
    app.s.wait("the General tab", 10, "return !!document.getElementById('tab-general')");
    app.s.exec("document.getElementById('tab-general').click()", json!([]));
    app.s.wait("the start-at-login switch", 10, "return !!document.querySelector('[data-testid=launch-at-login]')");
    app.s.wait(
        "the agent's line with its state",
        10,
        "const r = document.querySelector('[data-testid=agent-residency]'); return !!r && r.innerText.includes('Lab agent') && r.innerText.includes('Connected')",
    );
    app.s.exec("document.querySelector('[data-testid=launch-at-login]').click()", json!([]));
    within(10, "the autostart entry written", || entry.exists());
    let text = std::fs::read_to_string(&entry).unwrap();
    let exec = text.lines().find(|l| l.starts_with("Exec=")).unwrap_or_default().to_string();
    assert!(exec.contains("hermes-desktop") && exec.ends_with(" --hidden"), "starts this app hidden: {exec}");
    app.s.screenshot(&wd::screens().join("resident-settings-general.png"));
    app.s.exec("document.querySelector('[data-testid=launch-at-login]').click()", json!([]));
    within(10, "the autostart entry removed", || !entry.exists());
    // (the entry goes first, then the settings file is written: read it once it has been)
    let stored = || std::fs::read_to_string(setup.data.path().join("app-settings.json")).unwrap_or_default();
    within(10, "remembered off", || stored().contains("\"launchAtLogin\": false"));
}

#[test]
fn e2e_resident_a_login_start_connects_every_agent_without_a_window() {
    if !enabled() {
        return;
    }
    let setup = Setup::new(&["Lab agent", "Second agent"]);
    let app = setup.spawn(&["--hidden"]);
    within(20, "both agents connected", || setup.connections() == 2);
    std::thread::sleep(Duration::from_secs(2));
    assert!(x::shown(app.pid(), "Hermes").is_empty(), "no window on screen");
    assert!(web_processes(app.pid()).is_empty(), "no webview at all");
    assert_eq!(setup.connections(), 2);
}

/// A start puts the main window on screen with its page, not before: on screen at once, GTK drew the webview while
/// WebKit's web process was starting and both waited ~500 ms (src-tauri/src/window.rs `SHOW_AT_MOST`). The window
/// is mapped only once the page has said it rendered (the log line is written by the log's own thread: a moment's
/// grace), then the page says the conversation is interactive (on screen, painted, connected).
#[test]
fn e2e_resident_a_start_shows_the_window_once_its_page_has_rendered() {
    if !enabled() {
        return;
    }
    let setup = Setup::new(&["Lab agent"]);
    // a conversation with history, as a user's is: the page paints it before it says it is interactive
    {
        let store = hermes_store::Store::open_in(setup.data.path()).unwrap();
        let conv = store.conversation_for_adapter(&setup.profiles[0].0).unwrap();
        let m =
            hermes_store::Message::new(&conv.id, hermes_store::Direction::Down, "Good morning", hermes_store::now_ms());
        store.message_upsert(&m).unwrap();
    }
    let app = setup.spawn(&[]);
    // (looking at the X server only once GTK has started: the app logs after that, before it builds its window)
    within(20, "the app starts", || wd::app_log(setup.data.path()).contains("hermes-desktop starting"));
    let t = Instant::now();
    while x::shown(app.pid(), "Hermes").is_empty() {
        assert!(t.elapsed() < Duration::from_secs(20), "the window comes on screen\n{}", logs(&setup));
        std::thread::sleep(Duration::from_millis(5));
    }
    let on_screen = t.elapsed();
    let t = Instant::now();
    while !wd::app_log(setup.data.path()).contains("main page rendered") {
        assert!(
            t.elapsed() < Duration::from_millis(60),
            "the window was on screen ({} ms after the start) before its page said it rendered\n{}",
            on_screen.as_millis(),
            logs(&setup)
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    within(20, "the page says the conversation is interactive", || {
        wd::app_log(setup.data.path()).contains("main page interactive")
    });
    let log = wd::app_log(setup.data.path());
    let line = log.lines().find(|l| l.contains("main page interactive")).unwrap();
    for mark in ["history-painted=", "connected=", "shown="] {
        assert!(line.contains(mark), "the page's marks name {mark}: {line}");
    }
    assert!(!log.contains("shown anyway"), "the page said it rendered in time");
    assert_eq!(setup.connections(), 1);
}

#[test]
fn e2e_resident_hidden_past_the_timeout_without_a_resident_process_loses_its_webview_and_show_builds_it_again() {
    if !enabled() {
        return;
    }
    let setup = Setup::new(&["Lab agent"]);
    // the path of macOS, Windows and a token kept for this session only: no resident process, this one stays
    let app = setup.launch(&[("HERMES_HIDE_DESTROY_SECS", "2"), ("HERMES_NO_RESIDENT", "1")]);
    wd::app::type_and_send(&app.s, "before hiding");
    body_has(&app.s, "You said: before hiding", 15);
    assert!(!app.web_processes().is_empty(), "a page has its web process");

    close_main(app.pid);
    let t = Instant::now();
    while !app.web_processes().is_empty() {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the web process is still there; the app's log:\n{}",
            logs(&setup)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(app.alive(), "the app lives on without its webview");
    assert_eq!(setup.connections(), 1, "still connected");

    // showing again: a second start hands over to the running app (single instance), which builds the window again
    let second = Command::new(BIN)
        .env("HERMES_DATA_DIR", setup.data.path())
        .env("HOME", &setup.home)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(second.success(), "the second start hands over and ends");
    within(20, "the window on screen again", || !x::shown(app.pid, "Hermes").is_empty());
    // the window maps before WebKit has started its web process for the page: wait for it, don't sample once
    within(20, "a new web process", || !app.web_processes().is_empty());
    attach_rebuilt(&app.s);
    body_has(&app.s, "You said: before hiding", 15);
    wd::app::type_and_send(&app.s, "after showing");
    body_has(&app.s, "You said: after showing", 15);
    app.s.screenshot(&wd::screens().join("resident-rebuilt.png"));
    assert_eq!(setup.connections(), 1, "the same single connection");
}

/* ---------- scheduled messages, notifications and the tray (the shell owns the connections) ---------- */

/// A child process ended when dropped.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The desktop's notification service on this test's session bus (Debian's `notification-daemon`), and `dbus-monitor`
/// recording every `Notify` call.
struct Notifications {
    daemon: Reaped,
    _monitor: Reaped,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

/// A notification bubble's X window.
struct Bubble(String);

impl Bubble {
    /// Clicks it, as a user does: the daemon then invokes the notification's default action (`ActionInvoked` from
    /// its own bus name).
    fn click(&self) {
        let ok = Command::new("xdotool")
            .args(["mousemove", "--window", &self.0, "40", "20", "click", "1"])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "clicked the bubble {}", self.0);
    }
}

/// One `Notify` call as the daemon got it.
#[derive(Debug)]
struct Shown {
    strings: Vec<String>,
}

impl Notifications {
    fn start() -> Notifications {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("notify.log");
        let daemon = Command::new("/usr/lib/notification-daemon/notification-daemon")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("notification-daemon (apt install notification-daemon)");
        let monitor = Command::new("dbus-monitor")
            .arg("type='method_call',interface='org.freedesktop.Notifications',member='Notify'")
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-monitor");
        within(10, "the notification daemon on the bus", || {
            Command::new("gdbus")
                .args(["call", "--session", "--dest", "org.freedesktop.Notifications", "--object-path"])
                .args([
                    "/org/freedesktop/Notifications",
                    "--method",
                    "org.freedesktop.Notifications.GetServerInformation",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
        Notifications { daemon: Reaped(daemon), _monitor: Reaped(monitor), log, _dir: dir }
    }

    /// The notification bubble on screen (the daemon's window).
    fn bubble(&self) -> Bubble {
        let pid = self.daemon.0.id().to_string();
        let mut window = String::new();
        let t = Instant::now();
        while window.is_empty() {
            if t.elapsed() > Duration::from_secs(10) {
                let _ = Command::new("import")
                    .args(["-window", "root"])
                    .arg(wd::screens().join("resident-no-bubble.png"))
                    .status();
                panic!("no notification bubble on screen");
            }
            let o = Command::new("xdotool").args(["search", "--onlyvisible", "--pid", &pid]).output();
            window = o
                .map(|o| String::from_utf8_lossy(&o.stdout).lines().last().unwrap_or_default().to_string())
                .unwrap_or_default();
            std::thread::sleep(Duration::from_millis(50));
        }
        // the pointer over it keeps it on screen while the test looks at the tray
        let _ = Command::new("xdotool").args(["mousemove", "--window", &window, "40", "20"]).status();
        Bubble(window)
    }

    fn raw(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Every `Notify` so far with its string arguments.
    fn shown(&self) -> Vec<Shown> {
        let raw = self.raw();
        let mut blocks: Vec<(String, Vec<String>)> = Vec::new();
        for line in raw.lines() {
            if line.starts_with(char::is_whitespace) {
                if let Some(b) = blocks.last_mut() {
                    b.1.push(line.trim().to_string());
                }
            } else {
                blocks.push((line.to_string(), Vec::new()));
            }
        }
        let mut out = Vec::new();
        for (head, body) in &blocks {
            if !(head.starts_with("method call") && head.contains("member=Notify")) {
                continue;
            }
            let strings = body
                .iter()
                .filter_map(|l| l.strip_prefix("string \"").map(|s| s.trim_end_matches('"').to_string()))
                .collect();
            out.push(Shown { strings });
        }
        out
    }
}

/// The window back on screen with a page in it, which shows `text` in the open conversation, once.
fn shown_with(app: &Running, text: &str) {
    within(20, "the main window on screen again", || !x::shown(app.pid, "Hermes").is_empty());
    attach_rebuilt(&app.s);
    let script =
        format!("return !!document.querySelector('.conv.active') && document.body.innerText.includes({})", json!(text));
    app.s.wait("the conversation with the scheduled message", 20, &script);
    // once: the list shows only when the history is in, and the message came live before it (under its wire id,
    // which the store keeps beside its own)
    let bubbles = app.s.exec(
        "const [t] = arguments; return [...document.querySelectorAll('main .bubble')].filter((b) => b.innerText.includes(t)).length",
        json!([text]),
    );
    assert_eq!(bubbles, json!(1), "the message is shown once");
}

/// The window closed, the second agent's cron job sends a message to this device: a notification with the agent's
/// name and generic text only, the tray counts it (label and menu, with the conversation listed); the tray's entry for
/// it shows the window on that conversation with the message, and the count goes back to nothing.
#[test]
fn e2e_resident_a_scheduled_message_while_closed_notifies_counts_and_opens_its_conversation() {
    if !enabled() {
        return;
    }
    let notes = Notifications::start();
    let setup = Setup::new(&["Lab agent", "Second agent"]);
    let app = setup.launch(&[]);
    within(15, "both agents connected", || setup.connections() == 2);
    tray_menu_when(app.pid, 15, "the tray with both agents connected", |m| {
        m.contains("Lab agent — connected") && m.contains("Second agent — connected") && m.contains("No unread")
    });

    close_main(app.pid);
    within(10, "the window off screen", || x::shown(app.pid, "Hermes").is_empty());
    let before = notes.shown().len();
    let (_, device) = &setup.profiles[1];
    let job = setup.agent.s().schedule_to_device(device, Duration::from_secs(1), "Stand-up in 5 minutes (cron numbat)");
    assert!(
        matches!(job.wait(Duration::from_secs(10)), Some(hermes_devserver::CronOutcome::Delivered { connections: 1 })),
        "the device is connected while its window is closed"
    );

    let mut shown = Vec::new();
    within(10, "a notification for the scheduled message", || {
        shown = notes.shown();
        shown.len() > before && shown[before..].iter().any(|n| n.strings.iter().any(|s| s == "Second agent"))
    });
    let at = before + shown[before..].iter().position(|n| n.strings.iter().any(|s| s == "Second agent")).unwrap();
    let note = &shown[at];
    assert!(note.strings.iter().any(|s| s == "New reply"), "generic text: {note:?}");
    assert!(!notes.raw().contains("numbat"), "never the agent's words: {}", notes.raw());

    let (tray_at, menu) = tray_menu_when(app.pid, 10, "the tray counts the message", |m| m.contains("1 unread"));
    assert!(menu.contains("Second agent: "), "the conversation is listed: {menu}");
    assert!(tray_label(&tray_at).contains("'1'"), "the unread total beside the icon: {}", tray_label(&tray_at));

    // The notification's own click is not driven here: notify-rust waits for ActionInvoked from the daemon's bus name,
    // and a signal a test emits comes from its own. The tray's entry for the conversation is the other way back.
    tray_click(&tray_at, &menu, "Second agent: ");
    shown_with(&app, "Stand-up in 5 minutes (cron numbat)");
    app.s.screenshot(&wd::screens().join("resident-notification-opened.png"));
    tray_menu_when(app.pid, 10, "read once shown", |m| m.contains("No unread"));
}

/// While the first agent's conversation is open, the second agent's scheduled message arrives: the open conversation
/// stays, the second agent's is marked unread in the sidebar and counted in the tray; the tray's entry for it opens
/// it with the message.
#[test]
fn e2e_resident_a_second_agents_scheduled_message_while_the_first_is_open_and_the_tray_opens_it() {
    if !enabled() {
        return;
    }
    let _notes = Notifications::start();
    let setup = Setup::new(&["Lab agent", "Second agent"]);
    let app = setup.launch(&[]);
    within(15, "both agents connected", || setup.connections() == 2);
    // the agent whose conversation is open: its section of the sidebar
    let first_open = "return document.querySelector('.conv.active')?.closest('section.profile')?.ariaLabel ?? ''";
    // (the sidebar lists each agent's conversations as they load: the composer can come first)
    app.s.wait("a conversation open in the sidebar", 10, first_open);
    let open_before = app.s.exec(first_open, json!([]));
    assert_eq!(open_before, json!("Lab agent"), "the first agent's conversation is open");
    type_and_send(&app.s, "hello first");
    body_has(&app.s, "You said: hello first", 15);

    let (_, device) = &setup.profiles[1];
    let job = setup.agent.s().schedule_to_device(device, Duration::from_millis(500), "Backup finished (cron 5521)");
    assert!(matches!(job.wait(Duration::from_secs(10)), Some(hermes_devserver::CronOutcome::Delivered { .. })));
    app.s.wait(
        "the second agent's conversation marked unread",
        15,
        "return !!document.querySelector('.conv-btn.unread .badge')",
    );
    assert_eq!(app.s.exec(first_open, json!([])), open_before, "the first agent's conversation stays open");
    let chat = app.s.exec("return document.querySelector('main')?.innerText ?? ''", json!([]));
    assert!(!chat.to_string().contains("Backup finished"), "not in the open chat: {chat}");
    let (tray_at, menu) = tray_menu_when(app.pid, 10, "the tray counts it", |m| m.contains("1 unread"));
    app.s.screenshot(&wd::screens().join("resident-second-agent-unread.png"));

    tray_click(&tray_at, &menu, "Second agent: ");
    shown_with(&app, "Backup finished (cron 5521)");
    assert_eq!(app.s.exec(first_open, json!([])), json!("Second agent"), "the second agent's conversation is open now");
    tray_menu_when(app.pid, 10, "read once open", |m| m.contains("No unread"));
}

/* ---------- the resident process (Linux): the window process ends, a small one keeps the agents ---------- */

/// Hidden past its (shortened) timeout, the window process hands the agents' connections to `hermes-resident` and
/// ends; the resident process maps neither GTK nor WebKit, keeps both agents connected (A-1: the same device ids),
/// notifies a scheduled message with generic text and counts it in its own tray; a click on the notification starts
/// the window process on its conversation, which ends the resident and connects again; its tray's Quit ends
/// everything.
#[test]
fn e2e_resident_hidden_past_the_timeout_hands_over_to_the_resident_process_whose_notification_brings_the_window_back() {
    if !enabled() {
        return;
    }
    let notes = Notifications::start();
    let setup = Setup::new(&["Lab agent", "Second agent"]);
    // the first hide's "still running" hint was shown before: the only bubble on screen is the message's
    std::fs::write(setup.data.path().join("app-settings.json"), r#"{"trayHintShown": true}"#).unwrap();
    let app = setup.launch(&[("HERMES_HIDE_DESTROY_SECS", "2")]);
    within(15, "both agents connected", || setup.connections() == 2);
    type_and_send(&app.s, "before hiding");
    body_has(&app.s, "You said: before hiding", 15);
    let ready = setup.agent.s().ready_count();
    // the files this start mapped (its own and its WebKit processes'), for the resident to read ahead at its Show
    let list = setup.data.path().join(hermes_app::readahead::LIST);
    within(15, "the start's files recorded", || list.exists());
    let listed = hermes_app::readahead::list(setup.data.path());
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_hermes-desktop")).unwrap();
    // the app's binary first (the order things were mapped), then the parts of WebKit's libraries it used
    assert_eq!(listed.first().map(|s| s.path.as_path()), Some(exe.as_path()), "the app's binary first: {listed:?}");
    let has = |name: &str| listed.iter().find(|s| s.path.to_string_lossy().contains(name));
    assert!(has("libjavascriptcoregtk").is_some(), "WebKit's libraries: {listed:?}");
    let webkit = has("libwebkit2gtk").unwrap_or_else(|| panic!("WebKit's library in {listed:?}"));
    let size = std::fs::metadata(&webkit.path).unwrap().len();
    let used: u64 = webkit.parts.iter().map(|p| p.1).sum();
    assert!(used > 0 && used < size, "only the parts of {:?} used are read ahead: {used} of {size} bytes", webkit.path);

    close_main(app.pid);
    let t = Instant::now();
    while app.alive() {
        assert!(t.elapsed() < Duration::from_secs(30), "the window process did not end; its log:\n{}", logs(&setup));
        std::thread::sleep(Duration::from_millis(100));
    }
    let residents = processes_named("hermes-resident", setup.data.path());
    assert_eq!(residents.len(), 1, "one resident process: {residents:?}");
    let resident = residents[0];
    within(20, "both agents connected through the resident", || {
        setup.connections() == 2 && setup.agent.s().ready_count() >= ready + 2
    });
    assert!(!maps_toolkit(resident), "the resident maps neither GTK nor WebKit");
    // a figure for the notes, not a goal checked here (the bench measures the optimised build)
    let rollup = std::fs::read_to_string(format!("/proc/{resident}/smaps_rollup")).unwrap_or_default();
    let pss = rollup.lines().find(|l| l.starts_with("Pss:")).unwrap_or_default().to_string();
    eprintln!("resident process (debug build), 2 agents connected: {pss}");
    assert!(web_processes(resident).is_empty(), "no webview");
    // the next Show's window process, started ahead by the resident and waiting (standby.rs): no GTK, no WebKit
    within(20, "a window process on standby", || standbys(setup.data.path()).len() == 1);
    let standby = standbys(setup.data.path())[0];
    assert!(maps_toolkit(standby), "loaded: GTK and WebKit mapped and bound");
    // nothing of its start begun: its one thread blocked reading its stdin (a JavaScriptCore constructor's thread
    // ends by itself)
    within(20, "the standby's one thread", || {
        std::fs::read_dir(format!("/proc/{standby}/task")).is_ok_and(|d| d.count() == 1)
    });
    let wchan = std::fs::read_to_string(format!("/proc/{standby}/wchan")).unwrap_or_default();
    assert!(wchan.contains("pipe_read"), "waiting on its stdin: {wchan}");
    assert!(web_processes(standby).is_empty(), "no webview");
    let rollup = std::fs::read_to_string(format!("/proc/{standby}/smaps_rollup")).unwrap_or_default();
    let kb = |field: &str| -> u64 {
        let line = rollup.lines().find(|l| l.starts_with(field)).unwrap_or_default();
        line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or(u64::MAX)
    };
    eprintln!(
        "window process on standby (debug build): PSS {} kB, of it file pages {} kB",
        kb("Pss:"),
        kb("Pss_File:")
    );
    // its loading touches ~33 MB of the files it maps (this debug build, measured without the page-out); given back,
    // what is left are pages other processes mapped too as it started (4–14 MB here)
    assert!(kb("Pss_File:") < 20 * 1024, "the standby gave its file pages back:\n{rollup}");

    // a scheduled message while only the resident runs: delivered, notified with generic text, counted in its tray
    let before = notes.shown().len();
    let (second_id, device) = &setup.profiles[1];
    let job = setup.agent.s().schedule_to_device(device, Duration::from_secs(1), "Stand-up in 5 minutes (cron quokka)");
    assert!(
        matches!(job.wait(Duration::from_secs(10)), Some(hermes_devserver::CronOutcome::Delivered { connections: 1 })),
        "the device is connected through the resident"
    );
    within(10, "a notification for the scheduled message", || {
        notes.shown()[before..].iter().any(|n| n.strings.iter().any(|s| s == "Second agent"))
    });
    let note = notes.shown().into_iter().skip(before).find(|n| n.strings.iter().any(|s| s == "Second agent")).unwrap();
    assert!(note.strings.iter().any(|s| s == "New reply"), "generic text: {note:?}");
    // (a word, not a number: dbus-monitor stamps every message with the epoch time, which once read 1796610…)
    assert!(!notes.raw().contains("quokka"), "never the agent's words");
    let (tray_at, _menu) = tray_menu_when(resident, 15, "the resident's tray counts the message", |m| {
        m.contains("1 unread") && m.contains("Lab agent — connected") && m.contains("Second agent — connected")
    });
    // (ksni has no label beside the icon: the total is in the tooltip, the menu and drawn on the icon)
    let tip = sni_property(&tray_at, "ToolTip");
    assert!(tip.contains("Hermes — 1 unread · 2 of 2 agents connected"), "the unread total in the tooltip: {tip}");
    let store = hermes_app::App::open(setup.data.path()).unwrap();
    let conv = store.conversations(second_id).unwrap().into_iter().next().expect("the second agent's conversation");
    assert_eq!(conv.unread, 1, "stored and counted by the resident");
    let _ = Command::new("import")
        .args(["-window", "root"])
        .arg(wd::screens().join("resident-process-hidden.png"))
        .status();

    // the notification, clicked: the window process starts on its conversation, the resident ends (the tray's entry
    // for it does the same: crates/resident/tests). A bubble is on screen for a few seconds only: a second message,
    // and its bubble (replacing the first one's: the same conversation) is clicked at once.
    let shown_before = notes.shown().len();
    let job = setup.agent.s().schedule_to_device(device, Duration::from_millis(300), "Reminder (cron dingo)");
    assert!(matches!(job.wait(Duration::from_secs(10)), Some(hermes_devserver::CronOutcome::Delivered { .. })));
    within(10, "the second message's notification", || notes.shown().len() > shown_before);
    notes.bubble().click();
    within(20, "the resident ended", || processes_named("hermes-resident", setup.data.path()).is_empty());
    let resident_log = std::fs::read_to_string(setup.data.path().join("logs/resident.log")).unwrap_or_default();
    let read_ahead = resident_log.lines().find(|l| l.contains("read ahead the window process's files")).unwrap_or("");
    assert!(
        read_ahead.contains("files=") && !read_ahead.contains("files=0 "),
        "the resident read the window process's files ahead: {read_ahead:?}"
    );
    // the files were read ahead already as the first notification was raised, seconds before a click (the second
    // one's within 20 s of it reads nothing more)
    let line_of = |what: &str| resident_log.lines().position(|l| l.contains(what));
    let notified = line_of("why=\"a notification is shown\"");
    assert!(
        notified.is_some() && notified < line_of("window process started"),
        "a notification raised read the window process's files ahead before the start:\n{resident_log}"
    );
    let windows = processes_named("hermes-desktop", setup.data.path());
    assert_eq!(windows, [standby], "one window process: the standby, woken");
    assert!(
        resident_log.lines().any(|l| l.contains("window process started") && l.contains("standby=true")),
        "the resident woke its standby:\n{resident_log}"
    );
    let window = windows[0];
    within(30, "the window on screen", || !x::shown(window, "Hermes").is_empty());
    within(30, "the conversation shown (read)", || {
        store.conversations(second_id).unwrap().into_iter().find(|c| c.id == conv.id).is_some_and(|c| c.unread == 0)
    });
    within(20, "both agents connected through the window process", || setup.connections() == 2);
    shot_then_quit(&setup, window, "resident-process-show.png", "No unread");
    within(10, "the agents see the device go", || setup.connections() == 0);
    // the resident's log and everything both processes wrote: no token (A-29)
    assert!(setup.data.path().join("logs/resident.log").exists(), "the resident logged");
    assert_token_nowhere(setup.data.path(), TOKEN);
}

/// The screen once the window process `window` has settled (`shot`), then its tray's Quit (once its menu has
/// `menu_has`): every process of the app ends, standbys too.
fn shot_then_quit(setup: &Setup, window: u32, shot: &str, menu_has: &str) {
    std::thread::sleep(Duration::from_millis(800));
    let _ = Command::new("import").args(["-window", "root"]).arg(wd::screens().join(shot)).status();
    let (tray_at, menu) = tray_menu_when(window, 15, "the window process's tray", |m| m.contains(menu_has));
    tray_click(&tray_at, &menu, "Quit");
    within(20, "quit ends every process", || {
        processes_named("hermes-desktop", setup.data.path()).is_empty()
            && processes_named("hermes-resident", setup.data.path()).is_empty()
            && standbys(setup.data.path()).is_empty()
    });
}

/// The window process's hand-over to a resident (its window closed, hidden past the shortened timeout): the resident's
/// pid once it holds the connections and its standby waits.
fn handed_over(setup: &Setup, window: u32, connections: usize) -> u32 {
    let ready = setup.agent.s().ready_count();
    close_main(window);
    within(30, "the window process ended", || !std::path::Path::new(&format!("/proc/{window}")).exists());
    let residents = processes_named("hermes-resident", setup.data.path());
    assert_eq!(residents.len(), 1, "one resident process: {residents:?}\n{}", logs(setup));
    within(20, "the agents connected through the resident", || {
        setup.connections() == connections && setup.agent.s().ready_count() >= ready + connections as u64
    });
    within(20, "a window process on standby", || standbys(setup.data.path()).len() == 1);
    residents[0]
}

/// The resident's tray menu opening wakes its standby ahead of the pick (`--prepared`): it starts as for a Show — the
/// window built hidden, WebKit's web process started, the page loaded and rendered — but takes nothing: the resident
/// keeps the connections (the agent sees no new one) and nothing is on screen. Nothing picked: it ends within its
/// (shortened) time, a new standby takes its place, and a menu opened again soon after prepares nothing. Picked (Show,
/// with a new resident): the prepared process itself goes on screen and takes the connections over.
#[test]
fn e2e_resident_the_trays_menu_prepares_the_window_and_a_show_finds_it_ready() {
    if !enabled() {
        return;
    }
    let setup = Setup::new(&["Lab agent"]);
    std::fs::write(setup.data.path().join("app-settings.json"), r#"{"trayHintShown": true}"#).unwrap();
    let app = setup.launch(&[("HERMES_HIDE_DESTROY_SECS", "2"), ("HERMES_PREPARED_MS", "6000")]);
    within(15, "the agent connected", || setup.connections() == 1);
    let resident = handed_over(&setup, app.pid, 1);
    let standby = standbys(setup.data.path())[0];
    let rendered = |what: &str| wd::app_log(setup.data.path()).matches(what).count();
    let rendered_before = rendered("main page rendered");
    let ready = setup.agent.s().ready_count();
    // the window's place and size, saved as its process ended
    let window_state = setup.data.path().join("xdg-config/app.hermes.desktop/.window-state.json");
    let saved = std::fs::read_to_string(&window_state).unwrap_or_default();
    assert!(saved.contains("\"main\""), "the main window's state saved: {saved:?}");

    // the menu opens: the standby prepares the window, off screen and unconnected
    let (tray, _) = tray_menu_when(resident, 15, "the resident's tray", |m| m.contains("Show Hermes"));
    tray_menu_opening(&tray);
    within(20, "the standby woken to prepare the window", || !wd::is_standby(standby));
    within(30, "the prepared window's page rendered", || rendered("main page rendered") > rendered_before);
    assert!(!web_processes(standby).is_empty(), "its WebKit web process runs");
    assert!(x::shown(standby, "Hermes").is_empty(), "nothing on screen before a pick");
    assert_eq!(processes_named("hermes-resident", setup.data.path()), [resident], "the resident still runs");
    assert_eq!(setup.connections(), 1);
    assert_eq!(setup.agent.s().ready_count(), ready, "the prepared window never connected:\n{}", logs(&setup));
    let log = wd::app_log(setup.data.path());
    assert!(log.contains("hidden until picked") && !log.contains("was picked"), "{log}");

    // nothing picked: it ends, a new standby takes its place
    within(20, "the unused prepared window ended", || !std::path::Path::new(&format!("/proc/{standby}")).exists());
    assert!(x::shown(standby, "Hermes").is_empty());
    assert_eq!(
        std::fs::read_to_string(&window_state).unwrap_or_default(),
        saved,
        "a window never on screen saves no place or size of its own"
    );
    within(20, "a new standby", || standbys(setup.data.path()).iter().any(|p| *p != standby));
    let standby2 = standbys(setup.data.path())[0];
    let resident_log = || std::fs::read_to_string(setup.data.path().join("logs/resident.log")).unwrap_or_default();
    assert!(resident_log().contains("nothing picked in the tray's menu"), "{}", resident_log());
    // opened again at once: nothing prepared (the read-ahead alone)
    tray_menu_opening(&tray);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(wd::is_standby(standby2), "a menu opened again soon after prepares nothing");
    assert_eq!(setup.agent.s().ready_count(), ready, "the agent saw no other connection");
    assert_eq!(processes_named("hermes-resident", setup.data.path()), [resident]);

    // Show: the standby (not prepared) is the window; hidden again, a new resident
    let (tray, menu) = tray_menu_when(resident, 15, "the resident's tray", |m| m.contains("Show Hermes"));
    tray_click(&tray, &menu, "Show Hermes");
    within(30, "the window on screen", || !x::shown(standby2, "Hermes").is_empty());
    within(20, "connected through the window process", || {
        setup.connections() == 1 && processes_named("hermes-resident", setup.data.path()).is_empty()
    });
    let resident = handed_over(&setup, standby2, 1);
    let prepared = standbys(setup.data.path())[0];
    let ready = setup.agent.s().ready_count();
    let rendered_before = rendered("main page rendered");

    // the menu opens, the page renders off screen, then Show is picked
    let (tray, menu) = tray_menu_when(resident, 15, "the new resident's tray", |m| m.contains("Show Hermes"));
    tray_menu_opening(&tray);
    within(30, "the prepared window's page rendered", || rendered("main page rendered") > rendered_before);
    assert_eq!(setup.agent.s().ready_count(), ready, "not connected before the pick");
    tray_click(&tray, &menu, "Show Hermes");
    within(20, "the prepared window on screen", || !x::shown(prepared, "Hermes").is_empty());
    within(20, "the resident ended", || processes_named("hermes-resident", setup.data.path()).is_empty());
    within(20, "connected through the prepared window process", || {
        setup.connections() == 1 && setup.agent.s().ready_count() > ready
    });
    assert_eq!(
        processes_named("hermes-desktop", setup.data.path()),
        [prepared],
        "one window process: the prepared one"
    );
    assert!(
        resident_log().lines().any(|l| l.contains("window process started") && l.contains("prepared=true")),
        "{}",
        resident_log()
    );
    assert!(wd::app_log(setup.data.path()).contains("the prepared window was picked"));
    shot_then_quit(&setup, prepared, "resident-prepared-show.png", "Quit");
}
