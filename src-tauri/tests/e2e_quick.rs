//! Quick Ask through the real app (WebKitWebDriver, Xvfb; see e2e.rs), its shell and the reference agent on loopback:
//! the global shortcut, pressed with xdotool as a keyboard would, opens the panel while the main window is hidden; the
//! keys typed land in its input; the streamed reply and an approval card appear in the panel and are answered there;
//! "Open in Hermes" shows the main window on that conversation; Esc hides the panel. Rebinding the shortcut works and
//! a clash with push-to-talk is refused with a message. From the resident process (the window process gone), the
//! shortcut starts a window process with the panel alone. Skipped unless `HERMES_E2E=1` (`cargo xtask e2e e2e_quick`).
//! Screenshots: `target/e2e-screens/quick-*.png`.

mod wd;

use std::process::Command;
use std::time::Duration;

use serde_json::json;
use wd::Session;
use wd::app::*;
use wd::desk::*;

const PANEL: &str = "Hermes — Quick Ask";

/// Presses keys as a keyboard does (the X server's input: a global shortcut's grab sees it).
fn keys(combo: &str) {
    let ok = Command::new("xdotool").args(["key", "--clearmodifiers", combo]).status().is_ok_and(|s| s.success());
    assert!(ok, "xdotool key {combo}");
}

/// Types text into whatever has the keyboard focus.
fn type_keys(text: &str) {
    let ok = Command::new("xdotool").args(["type", "--delay", "20", text]).status().is_ok_and(|s| s.success());
    assert!(ok, "xdotool type");
}

/// The app logged that its global shortcuts are registered.
fn registered(setup: &Setup) {
    within(20, "the global shortcuts registered", || {
        wd::app_log(setup.data.path()).contains("global shortcuts registered")
    });
}

/// Switches the session to the page that `is` (a script's boolean) describes.
fn attach(s: &Session, what: &str, is: &str) {
    within(20, what, || s.handles().iter().any(|h| s.switch_to(h) && s.try_exec(is).is_ok_and(|v| v == json!(true))));
}

/// Switches the session to the panel's page.
fn attach_panel(s: &Session) {
    attach(
        s,
        "the panel's page",
        "return !!document.querySelector('[data-testid=quick-panel]') && !!document.getElementById('composer-input')",
    );
}

/// Switches the session to the main window's page.
fn attach_main(s: &Session) {
    attach(
        s,
        "the main window's page",
        "return !document.querySelector('[data-testid=quick-panel]') && !!document.getElementById('composer-input')",
    );
}

/// One agent, and the first hide's "still running" hint shown before (no bubble of it on screen).
fn hinted_setup() -> Setup {
    let setup = Setup::new(&["Lab agent"]);
    std::fs::write(setup.data.path().join("app-settings.json"), r#"{"trayHintShown": true}"#).unwrap();
    setup
}

/// The app with its shortcuts registered and its main window closed (hidden: no resident process takes over).
fn launch_hidden(setup: &Setup) -> Running {
    let app = setup.launch(&[("HERMES_NO_RESIDENT", "1"), ("HERMES_SHORTCUT_AFTER_MS", "0")]);
    registered(setup);
    close_main(app.pid);
    app
}

/// The shortcut pressed: the panel on screen, the session on its page, connected.
fn open_panel(app: &Running) {
    keys("ctrl+alt+space");
    within(10, "the panel on screen", || !x::shown(app.pid, PANEL).is_empty());
    attach_panel(&app.s);
    app.s.wait("the panel connected", 20, "return !document.querySelector('.banner')");
}

fn shot(name: &str) {
    let _ = Command::new("import").args(["-window", "root"]).arg(wd::screens().join(name)).status();
}

#[test]
fn e2e_quick_the_shortcut_opens_the_panel_over_a_hidden_app_where_a_reply_streams_and_a_card_is_answered() {
    if !enabled() {
        return;
    }
    let setup = hinted_setup();
    let app = launch_hidden(&setup);
    assert!(x::shown(app.pid, PANEL).is_empty(), "no panel before the shortcut");

    // the shortcut, from "another app": the panel on screen, its input focused (the keys typed land in it)
    keys("ctrl+alt+space");
    within(10, "the panel on screen", || !x::shown(app.pid, PANEL).is_empty());
    assert!(x::shown(app.pid, "Hermes").is_empty(), "the main window stays hidden");
    // centred on the screen under the pointer (the one screen here), built at its compact size
    let (x, y, w, h) = x::geometry(x::shown(app.pid, PANEL)[0]);
    let (sw, sh) = x::screen_size();
    assert!((w, h) == (640, 420), "the panel's size: {w}×{h}");
    assert!(
        (x - (sw as i32 - w as i32) / 2).abs() <= 2 && (y - (sh as i32 - h as i32) / 2).abs() <= 2,
        "centred: at {x},{y} on a {sw}×{sh} screen"
    );
    attach_panel(&app.s);
    app.s.wait("the panel connected", 20, "return !document.querySelector('.banner')");
    app.s.wait(
        "its input focused",
        10,
        "return document.activeElement && document.activeElement.id === 'composer-input'",
    );
    type_keys("hello from anywhere");
    keys("Return");
    body_has(&app.s, "You said: hello from anywhere", 15);
    assert_eq!(
        app.s.exec("return document.querySelector('[data-testid=quick-agent]').selectedOptions[0].text", json!([])),
        json!("Lab agent"),
        "the panel says which agent it talks to"
    );

    // an approval card, answered in the panel
    type_and_send(&app.s, "/approve");
    app.s.wait(
        "the card in the panel",
        15,
        "return [...document.querySelectorAll('article.card button')].some(b => b.innerText.includes('Allow once'))",
    );
    shot("quick-panel-card.png");
    app.s.exec(
        "[...document.querySelectorAll('article.card button')].find(b => b.innerText.includes('Allow once')).click()",
        json!([]),
    );
    app.s.wait("answered in the panel", 15, "return !!document.querySelector('article.card .outcome')");
    assert_eq!(setup.connections(), 1, "the panel uses the app's one connection");

    // "Open in Hermes": the main window on this conversation, the panel gone
    app.s.exec("document.querySelector('[data-testid=quick-open-main]').click()", json!([]));
    within(10, "the main window on screen", || !x::shown(app.pid, "Hermes").is_empty());
    within(10, "the panel hidden", || x::shown(app.pid, PANEL).is_empty());
    attach_main(&app.s);
    body_has(&app.s, "You said: hello from anywhere", 15);
    app.s.wait("the answered card there too", 15, "return !!document.querySelector('article.card .outcome')");

    // the shortcut again over the main window, then Esc: hidden
    keys("ctrl+alt+space");
    within(10, "the panel on screen again", || !x::shown(app.pid, PANEL).is_empty());
    attach_panel(&app.s);
    shot("quick-panel.png");
    app.s.wait(
        "its input focused",
        10,
        "return document.activeElement && document.activeElement.id === 'composer-input'",
    );
    keys("Escape");
    within(10, "Esc hides the panel", || x::shown(app.pid, PANEL).is_empty());
    assert!(!x::shown(app.pid, "Hermes").is_empty(), "the main window stays");

    // pressed again after Esc: on screen with the keyboard focus (X's own, not only the page's)
    std::thread::sleep(Duration::from_millis(500));
    keys("ctrl+alt+space");
    let t = std::time::Instant::now();
    while !x::shown_and_focused(PANEL) {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the panel again, focused: the focus is in {:?}, the panel on screen: {}\n{}",
            x::focused_title(),
            !x::shown(app.pid, PANEL).is_empty(),
            logs(&setup)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The WebKit web processes under the app's process (one per live page).
fn web_processes(pid: u32) -> usize {
    wd::descendants(pid)
        .into_iter()
        .filter(|p| std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == "WebKitWebProces"))
        .count()
}

/// With the main window on screen, the panel is prepared hidden once the launch has settled: the first press shows
/// that page, built before (the issue's ≤ 100 ms needs a page that is already there), focused; after Esc it stays
/// prepared past the hidden delay while the main window is open, and it goes with the main window's webview once the
/// app waits in the tray (no web process left).
#[test]
fn e2e_quick_with_the_main_window_open_the_first_press_shows_a_prepared_panel() {
    if !enabled() {
        return;
    }
    let setup = hinted_setup();
    let app = setup.launch(&[
        ("HERMES_NO_RESIDENT", "1"),
        ("HERMES_SHORTCUT_AFTER_MS", "0"),
        ("HERMES_HIDE_DESTROY_SECS", "3"),
    ]);
    registered(&setup);
    within(20, "the panel prepared", || logs(&setup).contains("Quick Ask panel prepared (hidden)"));
    assert!(x::shown(app.pid, PANEL).is_empty(), "prepared off screen");
    attach_panel(&app.s);
    assert_eq!(
        app.s.exec("return document.visibilityState", json!([])),
        json!("hidden"),
        "the prepared page knows it is out of sight (it marks nothing read, plays nothing)"
    );
    within(20, "two pages alive", || web_processes(app.pid) == 2);

    keys("ctrl+alt+space");
    within(10, "the prepared panel on screen and focused", || x::shown_and_focused(PANEL));
    assert!(!logs(&setup).contains("Quick Ask panel built"), "the press built nothing:\n{}", logs(&setup));
    app.s.wait(
        "its input focused",
        10,
        "return document.activeElement && document.activeElement.id === 'composer-input'",
    );
    type_keys("prepared before");
    keys("Return");
    body_has(&app.s, "You said: prepared before", 15);

    keys("Escape");
    within(10, "Esc hides the panel", || x::shown(app.pid, PANEL).is_empty());
    std::thread::sleep(Duration::from_secs(5));
    assert!(
        !logs(&setup).contains("Quick Ask panel hidden for"),
        "kept past the hidden delay while the main window is open"
    );
    keys("ctrl+alt+space");
    within(10, "shown again at once", || x::shown_and_focused(PANEL));
    keys("Escape");
    within(10, "hidden again", || x::shown(app.pid, PANEL).is_empty());
    std::thread::sleep(Duration::from_secs(5));

    // (the panel's own delay has passed with the main window on screen: only the main window's can end it now)
    close_main(app.pid);
    within(20, "the hidden panel goes with the main window's webview", || {
        logs(&setup).contains("the hidden Quick Ask panel goes with the main window's webview")
    });
    within(20, "no web process while the app waits in the tray", || web_processes(app.pid) == 0);
    assert!(app.alive(), "the app stays in the tray");
}

/// Serves the X clipboard (as an app that copied does) for as long as the value lives: `-quiet` keeps xclip in the
/// foreground, so it is ended by its pid.
struct Clip(std::process::Child);

impl Clip {
    fn text(text: &str) -> Clip {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("clip.txt");
        std::fs::write(&f, text).unwrap();
        Clip::serve(&["-t", "UTF8_STRING"], &f)
    }

    fn png(path: &std::path::Path) -> Clip {
        Clip::serve(&["-t", "image/png"], path)
    }

    fn serve(target: &[&str], file: &std::path::Path) -> Clip {
        let child = Command::new("xclip")
            .args(["-quiet", "-selection", "clipboard"])
            .args(target)
            .arg("-i")
            .arg(file)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("xclip (apt install xclip)");
        // xclip reads its file before it owns the selection
        std::thread::sleep(Duration::from_millis(300));
        Clip(child)
    }
}

impl Drop for Clip {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// "Ask about the clipboard" in the panel: the clipboard's text (another app's, served by xclip) is quoted
/// above the question typed after it, and the agent gets both in one message; its picture is attached as a PNG file
/// and arrives pixel for pixel. Nothing is read before the click.
#[test]
fn e2e_quick_ask_about_the_clipboard_quotes_its_text_and_sends_its_picture() {
    if !enabled() {
        return;
    }
    let setup = hinted_setup();
    let app = launch_hidden(&setup);
    let _text = Clip::text("Deploy failed: exit code 137\nOOMKilled");
    open_panel(&app);
    let composer = "return document.getElementById('composer-input').value";
    assert_eq!(app.s.exec(composer, json!([])), json!(""), "nothing read before the click");

    app.s.exec("document.querySelector('[data-testid=quick-clipboard]').click()", json!([]));
    app.s.wait(
        "the clipboard's text quoted, the caret after it",
        10,
        "const f = document.getElementById('composer-input'); \
         return f.value === '> Deploy failed: exit code 137\\n> OOMKilled\\n\\n' && document.activeElement === f \
           && f.selectionStart === f.value.length",
    );
    type_keys("why?");
    shot("quick-clipboard-text.png");
    keys("Return");
    let texts = || {
        setup.agent.s().log().into_iter().filter_map(|e| match e.item {
            hermes_devserver::LogItem::Text { text, .. } => Some(text),
            _ => None,
        })
    };
    within(15, "the agent got the quote and the question", || {
        texts().any(|t| t == "> Deploy failed: exit code 137\n> OOMKilled\n\nwhy?")
    });

    let files = tempfile::tempdir().unwrap();
    let png = files.path().join("shot.png");
    noise_png(&png, 64, 48);
    let _picture = Clip::png(&png);
    app.s.exec("document.querySelector('[data-testid=quick-clipboard]').click()", json!([]));
    let got = app.s.wait(
        "the clipboard's picture attached",
        15,
        "const n = document.querySelector('.composer .files .name'); return n ? n.textContent.trim() : ''",
    );
    let name = got.as_str().unwrap().to_string();
    assert!(name.starts_with("clipboard-") && name.ends_with(".png"), "{name}");
    shot("quick-clipboard-picture.png");
    app.s.wait("send enabled", 10, "return !document.querySelector('.composer button.send').disabled");
    app.s.exec("document.querySelector('.composer button.send').click()", json!([]));
    within(15, "the picture received", || received(&setup.agent).iter().any(|(n, _)| *n == name));
    let (_, bytes) = received(&setup.agent).into_iter().find(|(n, _)| *n == name).unwrap();
    let img = image::load_from_memory(&bytes).expect("a picture");
    assert_eq!((img.width(), img.height()), (64, 48), "the same picture");
    assert_eq!(img.to_rgb8().as_raw(), image::open(&png).unwrap().to_rgb8().as_raw(), "pixel for pixel");
}

/// Voice in the panel: push-to-talk held while the panel is on screen records in the panel (the main
/// window stays hidden), the clip spoken into the virtual microphone goes to the panel's conversation as one 16 kHz
/// WAV `audio` frame (A-23), and its voice note shows in the panel.
/// The agent got a picture named `<what>-….png`: its pixels.
fn received_picture(agent: &Agent, what: &str) -> image::RgbImage {
    let named = |n: &str| n.starts_with(&format!("{what}-")) && n.ends_with(".png");
    within(20, &format!("the agent received the {what} capture"), || received(agent).iter().any(|(n, _)| named(n)));
    let (_, bytes) = received(agent).into_iter().find(|(n, _)| named(n)).unwrap();
    image::load_from_memory(&bytes).expect("a PNG").to_rgb8()
}

/// The composer holds one attachment named `<what>-….png`; sent with the Send button.
fn send_attached(setup: &Setup, app: &Running, what: &str) {
    let got = app.s.wait(
        "the capture attached (or a notice why not)",
        20,
        "const n = document.querySelector('.composer .files .name'); if (n) return n.textContent.trim(); \
         const e = document.querySelector('[data-testid=quick-notice]'); return e ? 'notice: ' + e.textContent : ''",
    );
    let name = got.as_str().unwrap();
    assert!(!name.starts_with("notice: "), "{name}\n{}", wd::app_log(setup.data.path()));
    assert!(name.starts_with(&format!("{what}-")) && name.ends_with(".png"), "{name}");
    app.s.wait("send enabled", 10, "return !document.querySelector('.composer button.send').disabled");
    app.s.wait("its preview", 10, "const i = document.querySelector('[data-testid=attach-thumb]'); return !!i && i.complete && i.naturalWidth > 0");
    shot(&format!("quick-capture-{what}-attached.png"));
    app.s.exec("document.querySelector('.composer button.send').click()", json!([]));
    app.s.wait("the composer empty again", 10, "return !document.querySelector('.composer .files')");
}

/// The pixel at `(x, y)` is `want`, give or take the PNG round trip (none) and a 16-bit visual (a few levels).
fn assert_colour(img: &image::RgbImage, x: u32, y: u32, want: [u8; 3], what: &str) {
    let got = img.get_pixel(x, y).0;
    let close = got.iter().zip(want).all(|(a, b)| a.abs_diff(b) <= 8);
    assert!(close, "{what}: pixel ({x}, {y}) is {got:?}, want {want:?}");
}

/// A window manager on the test display for as long as it lives (xcap's window list reads the manager's
/// `_NET_CLIENT_LIST_STACKING`; Xvfb alone has none).
struct WindowManager(std::process::Child);

impl WindowManager {
    fn start() -> WindowManager {
        let child = Command::new("openbox").arg("--sm-disable").spawn().expect("openbox (cargo xtask e2e installs it)");
        within(10, "the window manager running", || {
            Command::new("xprop")
                .args(["-root", "_NET_SUPPORTING_WM_CHECK"])
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("window id"))
        });
        WindowManager(child)
    }
}

impl Drop for WindowManager {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn e2e_quick_look_at_my_screen_the_whole_screen_a_region_drawn_with_the_mouse_and_a_picked_window() {
    if !enabled() {
        return;
    }
    let setup = hinted_setup();
    let app = launch_hidden(&setup);
    // another app's window with a known picture, partly under where the panel opens (the middle of the screen)
    let (pw, ph) = (400u32, 300u32);
    let pattern = x::pattern_window(200, 150, pw as u16, ph as u16, "Pattern — test app");
    open_panel(&app);
    let (sw, sh) = x::screen_size();
    let (ox, oy) = pattern.origin();
    let quadrant_centres = |ox: i32, oy: i32| {
        let (qw, qh) = (pw as i32 / 4, ph as i32 / 4);
        [(ox + qw, oy + qh), (ox + 3 * qw, oy + qh), (ox + qw, oy + 3 * qh), (ox + 3 * qw, oy + 3 * qh)]
    };
    let panel = x::shown(app.pid, PANEL)[0];
    let (px, py, _, _) = x::geometry(panel);

    // "Screen": the whole screen, the panel hidden while it is taken
    app.s.exec("document.querySelector('[data-testid=capture-screen]').click()", json!([]));
    send_attached(&setup, &app, "screen");
    let screen = received_picture(&setup.agent, "screen");
    assert_eq!(screen.dimensions(), (sw, sh), "the whole screen, at its size");
    for (i, (x, y)) in quadrant_centres(ox, oy).into_iter().enumerate() {
        assert_colour(&screen, x as u32, y as u32, x::PATTERN[i], "the pattern window in the screen capture");
    }
    let (right_x, right_y) = quadrant_centres(ox, oy)[3];
    assert!(right_x > px && right_y > py, "this quadrant is under the panel: the capture shows it, not the panel");
    assert_eq!(x::shown(app.pid, PANEL).len(), 1, "the panel is back on screen");
    let (bx, by, _, _) = x::geometry(x::shown(app.pid, PANEL)[0]);
    assert_eq!((bx, by), (px, py), "where it was");
    shot("quick-capture-screen.png");

    // "Region": the screen frozen and shown over the whole monitor; a rectangle drawn with the pointer (xdotool,
    // as a mouse) from the middle of the top-left quadrant to the middle of the bottom-right one
    app.s.exec("document.querySelector('[data-testid=capture-region]').click()", json!([]));
    within(10, "the frozen screen over the whole monitor", || {
        x::shown(app.pid, PANEL).first().is_some_and(|w| {
            let (_, _, w, h) = x::geometry(*w);
            (w, h) == (sw, sh)
        })
    });
    app.s.wait("the still is shown", 10, "const i = document.querySelector('[data-testid=region-picker] img'); return !!i && i.complete && i.naturalWidth > 0");
    shot("quick-capture-region-picker.png");
    let [(x0, y0), _, _, (x1, y1)] = quadrant_centres(ox, oy);
    let pointer = |args: &[&str]| {
        let ok = Command::new("xdotool").args(args).status().is_ok_and(|s| s.success());
        assert!(ok, "xdotool {args:?}");
    };
    pointer(&["mousemove", &x0.to_string(), &y0.to_string()]);
    pointer(&["mousedown", "1"]);
    pointer(&["mousemove", &((x0 + x1) / 2).to_string(), &((y0 + y1) / 2).to_string()]);
    pointer(&["mousemove", &x1.to_string(), &y1.to_string()]);
    app.s.wait(
        "the selection drawn",
        5,
        "const s = document.querySelector('[data-testid=region-selection]'); return !!s && s.textContent.includes('×')",
    );
    shot("quick-capture-region-drawn.png");
    pointer(&["mouseup", "1"]);
    send_attached(&setup, &app, "region");
    let region = received_picture(&setup.agent, "region");
    assert_eq!(region.dimensions(), ((x1 - x0) as u32, (y1 - y0) as u32), "the rectangle drawn, in screen pixels");
    let (rw, rh) = region.dimensions();
    for (i, (x, y)) in
        [(rw / 4, rh / 4), (3 * rw / 4, rh / 4), (rw / 4, 3 * rh / 4), (3 * rw / 4, 3 * rh / 4)].into_iter().enumerate()
    {
        assert_colour(&region, x, y, x::PATTERN[i], "each quadrant in its corner of the region");
    }
    let (bx, by, bw, bh) = x::geometry(x::shown(app.pid, PANEL)[0]);
    assert_eq!((bx, by, bw, bh).0, px, "the panel back where it was");
    assert!(bw < sw && bh < sh, "and at its own size: {bw}×{bh}");

    // the capture shortcut: the panel (already on screen) goes straight to a region capture; Esc gives it up
    keys("ctrl+alt+s");
    app.s.wait("the region picker from the shortcut", 10, "const i = document.querySelector('[data-testid=region-picker] img'); return !!i && i.complete && i.naturalWidth > 0");
    within(10, "over the whole monitor", || x::shown(app.pid, PANEL).first().is_some_and(|w| x::geometry(*w).2 == sw));
    keys("Escape");
    app.s.wait("the picker gone", 10, "return !document.querySelector('[data-testid=region-picker]')");
    within(10, "the panel back at its size", || {
        x::shown(app.pid, PANEL).first().is_some_and(|w| x::geometry(*w).2 < sw)
    });
    assert_eq!(
        app.s.exec("return document.querySelectorAll('.composer .files li').length", json!([])),
        json!(0),
        "nothing attached"
    );

    // "Window": the windows on screen listed (a window manager keeps that list), the pattern's picked
    let _wm = WindowManager::start();
    // (openbox names itself on the root before it has taken the windows already there: wait for its list to hold
    // the pattern window, as a desktop's would long before anyone clicks "Window")
    let pattern_id = format!("{:#x}", pattern.1);
    within(10, "the window manager lists the pattern window", || {
        Command::new("xprop").args(["-root", "_NET_CLIENT_LIST"]).output().is_ok_and(|o| {
            String::from_utf8_lossy(&o.stdout).split(|c: char| c == ',' || c.is_whitespace()).any(|w| w == pattern_id)
        })
    });
    app.s.exec("document.querySelector('[data-testid=capture-window]').click()", json!([]));
    let titles = app.s.wait(
        "the window list",
        10,
        "const l = [...document.querySelectorAll('[data-testid=capture-window-list] [role=menuitem] .w-title')]; \
         return l.length ? l.map((e) => e.textContent) : null",
    );
    let titles: Vec<String> = serde_json::from_value(titles).unwrap();
    assert!(titles.iter().any(|t| t == "Pattern — test app"), "the test window is in the list: {titles:?}");
    assert!(!titles.iter().any(|t| t.starts_with("Hermes")), "none of the app's own windows: {titles:?}");
    shot("quick-capture-window-list.png");
    app.s.exec(
        "[...document.querySelectorAll('[data-testid=capture-window-list] [role=menuitem]')] \
           .find((b) => b.querySelector('.w-title').textContent === 'Pattern — test app').click()",
        json!([]),
    );
    send_attached(&setup, &app, "window");
    let window = received_picture(&setup.agent, "window");
    assert_eq!(window.dimensions(), (pw, ph), "the window's own size");
    for (i, (x, y)) in
        [(pw / 4, ph / 4), (3 * pw / 4, ph / 4), (pw / 4, 3 * ph / 4), (3 * pw / 4, 3 * ph / 4)].into_iter().enumerate()
    {
        assert_colour(&window, x, y, x::PATTERN[i], "the window capture");
    }

    // "Name the window" on (Settings → Shortcuts, off by default): the pattern window has the focus when the shortcut
    // summons the panel, and a Screen capture's message starts with its title and app, to keep or delete
    keys("Escape");
    within(10, "Esc hides the panel", || x::shown(app.pid, PANEL).is_empty());
    app.s.exec(
        "return (async () => { const I = window.__TAURI_INTERNALS__; const s = await I.invoke('app_settings'); \
         await I.invoke('app_save_settings', {settings: {...s, captureNamesWindow: true}}); })();",
        json!([]),
    );
    let activated = Command::new("xdotool")
        .args(["windowactivate", "--sync", &pattern.1.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(activated, "xdotool windowactivate the pattern window");
    within(10, "the pattern window active", || {
        Command::new("xdotool")
            .arg("getactivewindow")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == pattern.1.to_string())
    });
    // (under a window manager the panel is framed: x::shown, which reads the root's children, does not see it)
    keys("ctrl+alt+space");
    attach_panel(&app.s);
    app.s.wait("the panel on screen", 10, "return document.visibilityState === 'visible'");
    app.s.exec("document.querySelector('[data-testid=capture-screen]').click()", json!([]));
    app.s.wait(
        "the message names the window in focus before",
        20,
        "return document.getElementById('composer-input').value.startsWith('From the window “Pattern — test app” (Pattern)')",
    );
    shot("quick-capture-names-window.png");
    send_attached(&setup, &app, "screen");
    body_has(&app.s, "From the window “Pattern — test app” (Pattern)", 15);
    drop(pattern);
}

#[test]
fn e2e_quick_push_to_talk_while_the_panel_is_open_speaks_into_its_conversation() {
    if !enabled() || !audio_ready() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let speech = espeak_wav(tmp.path(), "What is on my calendar today?");
    let _monitor = MonitorStream::start();
    let setup = hinted_setup();
    let app = launch_hidden(&setup);
    open_panel(&app);

    let key = |dir: &str| {
        let ok = Command::new("xdotool").args([dir, "ctrl+shift+space"]).status().is_ok_and(|st| st.success());
        assert!(ok, "xdotool {dir}");
    };
    key("keydown");
    app.s.wait("recording in the panel", 10, "return window.__hermesVoice.phase === 'recording'");
    std::thread::sleep(Duration::from_millis(400));
    assert!(Command::new("paplay").args(["--device=vsink"]).arg(&speech).status().unwrap().success());
    shot("quick-voice-recording.png");
    std::thread::sleep(Duration::from_millis(300));
    key("keyup");
    app.s.wait("stopped on release", 10, "return window.__hermesVoice.phase !== 'recording'");
    let frames = || {
        setup
            .agent
            .s()
            .log()
            .into_iter()
            .filter_map(|e| match e.item {
                hermes_devserver::LogItem::Audio { format, duration_secs, .. } => Some((format, duration_secs)),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    within(20, "the agent got the clip", || !frames().is_empty());
    let got = frames();
    assert_eq!(got.len(), 1, "{got:?}");
    let spoken = hermes_voice::wav::duration_secs(&std::fs::read(&speech).unwrap()).expect("espeak-ng WAV");
    let dur = got[0].1.expect("a WAV duration");
    assert!(got[0].0.contains("wav") && dur >= spoken && dur < spoken + 4.0, "{got:?} for {spoken} s of speech");
    app.s.wait("the voice note in the panel", 10, "return !!document.querySelector('.row.out .voice button.play')");
    assert_eq!(
        app.s.exec("return document.querySelector('.voice-ctl [role=alert]')?.textContent ?? ''", json!([])),
        json!(""),
        "no error by the microphone (the main window's page recorded too: the panel's stop found nothing to stop)"
    );
    shot("quick-voice-sent.png");
    assert!(!x::shown(app.pid, PANEL).is_empty(), "the panel stays on screen");
    assert!(x::shown(app.pid, "Hermes").is_empty(), "the main window stays hidden");
}

#[test]
fn e2e_quick_rebinding_the_shortcut_works_and_the_push_to_talk_keys_are_refused() {
    if !enabled() {
        return;
    }
    let setup = Setup::new(&["Lab agent"]);
    let app = setup.launch(&[("HERMES_NO_RESIDENT", "1"), ("HERMES_SHORTCUT_AFTER_MS", "0")]);
    registered(&setup);
    app.s.exec("window.dispatchEvent(new KeyboardEvent('keydown', {key: ',', ctrlKey: true}))", json!([]));
    app.s.wait("settings", 10, "return !!document.querySelector('[role=dialog]')");
    app.s.exec(
        "[...document.querySelectorAll('[role=dialog] button, [role=dialog] [role=tab]')].find(b => b.innerText.trim() === 'Shortcuts').click()",
        json!([]),
    );
    app.s.wait("the Quick Ask field", 10, "const f = document.querySelector('[data-testid=quick-ask-shortcut]'); return !!f && f.value === 'Control+Alt+Space'");

    let set = |value: &str| {
        app.s.exec(
            "const f = document.querySelector('[data-testid=quick-ask-shortcut]'); f.value = arguments[0]; \
             f.dispatchEvent(new Event('input', {bubbles: true})); f.dispatchEvent(new Event('change', {bubbles: true}))",
            json!([value]),
        );
    };
    // the push-to-talk keys (Ctrl+Shift+Space by default, in another spelling): refused, with a message
    set("Shift+Control+Space");
    app.s.wait(
        "the clash refused",
        10,
        "const e = document.querySelector('[data-testid=quick-ask-error]'); return !!e && e.innerText.includes('push-to-talk')",
    );
    app.s.screenshot(&wd::screens().join("quick-shortcut-clash.png"));
    let stored = std::fs::read_to_string(setup.data.path().join("app-settings.json")).unwrap_or_default();
    assert!(!stored.contains("Shift+Control+Space"), "nothing saved: {stored}");

    // other keys: saved and registered at once; the old ones no longer open the panel
    set("Control+Alt+KeyJ");
    within(10, "saved", || {
        std::fs::read_to_string(setup.data.path().join("app-settings.json"))
            .is_ok_and(|s| s.contains("\"quickAskShortcut\": \"Control+Alt+KeyJ\""))
    });
    app.s.wait("no error", 5, "return !document.querySelector('[data-testid=quick-ask-error]')");
    keys("ctrl+alt+space");
    std::thread::sleep(Duration::from_millis(1500));
    assert!(x::shown(app.pid, PANEL).is_empty(), "the old shortcut is let go");
    keys("ctrl+alt+j");
    within(10, "the new shortcut opens the panel", || !x::shown(app.pid, PANEL).is_empty());
}

/// With the window process gone (its connections handed to `hermes-resident`), the shortcut starts a window process
/// with the panel alone: it takes the connection back, and what is typed is sent and answered.
#[test]
fn e2e_quick_from_the_resident_process_the_shortcut_starts_the_panel_alone() {
    if !enabled() {
        return;
    }
    let setup = hinted_setup();
    let app = setup.launch(&[("HERMES_HIDE_DESTROY_SECS", "2")]);
    close_main(app.pid);
    within(30, "the window process ended", || !app.alive());
    within(20, "the resident process connected", || {
        processes_named("hermes-resident", setup.data.path()).len() == 1 && setup.connections() == 1
    });
    let t = std::time::Instant::now();
    while !logs(&setup).contains("Quick Ask shortcut grabbed") {
        assert!(t.elapsed() < Duration::from_secs(20), "the resident never grabbed the shortcut:\n{}", logs(&setup));
        std::thread::sleep(Duration::from_millis(100));
    }

    keys("ctrl+alt+space");
    within(30, "a window process", || processes_named("hermes-desktop", setup.data.path()).len() == 1);
    let window = processes_named("hermes-desktop", setup.data.path())[0];
    within(30, "the panel on screen", || !x::shown(window, PANEL).is_empty());
    shot("quick-panel-from-resident-at-once.png");
    // typed at once, as someone who pressed the shortcut does: the panel is on screen before its page is ready (Linux),
    // and the keys typed meanwhile are held by the window and put back for the page, in order (typeahead.rs)
    type_keys("asked from the tray");
    keys("Return");
    assert!(x::shown(window, "Hermes").is_empty(), "the panel alone, no main window");
    within(20, "the resident ended", || processes_named("hermes-resident", setup.data.path()).is_empty());
    within(20, "connected through the window process", || setup.connections() == 1);
    let store = hermes_app::App::open(setup.data.path()).unwrap();
    let (profile, _) = &setup.profiles[0];
    within(20, "sent and answered, stored like any other exchange", || {
        let conv = store.conversations(profile).unwrap().into_iter().next();
        conv.and_then(|c| store.history(&c.id, None, 20).ok()).is_some_and(|h| {
            h.messages.iter().any(|m| m.text == "asked from the tray")
                && h.messages.iter().any(|m| m.text.contains("You said: asked from the tray"))
        })
    });
    let held = logs(&setup).lines().find(|l| l.contains("key events held while the page loaded")).map(str::to_owned);
    eprintln!("e2e_quick: keys held while the page loaded: {}", held.as_deref().unwrap_or("none (the page was ready)"));
    assert!(!logs(&setup).contains("asked from the tray"), "the typed text is never logged");
    shot("quick-panel-from-resident.png");
    let pid = window.to_string();
    let _ = Command::new("kill").arg(&pid).status();
    within(20, "the window process ended", || processes_named("hermes-desktop", setup.data.path()).is_empty());
}
