//! Files dropped on the window and images pasted into the composer, through the real app under Xvfb: a GTK drag
//! source (tests/tools/drag_source.py, as a file manager is one) offers files as `text/uri-list`, xdotool presses the
//! mouse on it and carries the pointer over the app's window, and GTK, WebKitGTK and Tauri run the real XDND
//! conversation. The devserver keeps what it receives in its media folder, so a file is proven to arrive byte for
//! byte. Skipped unless `HERMES_E2E=1` (`cargo xtask e2e e2e_dnd`). Screenshots: `target/e2e-screens/dnd-*.png`.

mod wd;

use std::io::BufRead as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wd::Session;
use wd::app::*;

/// Runs `xdotool` with `args`; its standard output.
fn xdo(args: &[&str]) -> String {
    let out = Command::new("xdotool").args(args).output().expect("xdotool (apt install xdotool)");
    assert!(out.status.success(), "xdotool {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A rectangle on the X screen.
#[derive(Debug, Clone, Copy)]
struct Rect {
    x: i32,
    y: i32,
    w: i32,
    h: i32,
}

impl Rect {
    fn center(&self) -> (i32, i32) {
        (self.x + self.w / 2, self.y + self.h / 2)
    }
}

/// The app's window on the screen (the largest visible window titled "Hermes").
fn app_window() -> Rect {
    let t = Instant::now();
    loop {
        let ids = Command::new("xdotool").args(["search", "--onlyvisible", "--name", "^Hermes$"]).output().unwrap();
        let mut best: Option<Rect> = None;
        for id in String::from_utf8_lossy(&ids.stdout).split_whitespace() {
            let g = xdo(&["getwindowgeometry", "--shell", id]);
            let v = |k: &str| {
                g.lines().find_map(|l| l.strip_prefix(&format!("{k}="))).and_then(|n| n.trim().parse::<i32>().ok())
            };
            if let (Some(x), Some(y), Some(w), Some(h)) = (v("X"), v("Y"), v("WIDTH"), v("HEIGHT"))
                && best.is_none_or(|b| w * h > b.w * b.h)
            {
                best = Some(Rect { x, y, w, h });
            }
        }
        if let Some(b) = best {
            return b;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "the app's window is not on the screen");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Where on the screen the centre of the page element `selector` is (the page is the window's whole area).
fn on_screen(s: &Session, win: Rect, selector: &str) -> (i32, i32) {
    let r = s.exec(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();
         return [Math.round(r.left + r.width / 2), Math.round(r.top + r.height / 2)]",
        json!([selector]),
    );
    let (x, y) = (r[0].as_i64().unwrap() as i32, r[1].as_i64().unwrap() as i32);
    (win.x + x, win.y + y)
}

/// The Debian Python (the one python3-gi is installed for), else whatever `python3` is on the path.
fn python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() { "/usr/bin/python3" } else { "python3" }
}

/// A running drag source offering `paths`; its reports (`begin`, `data`, `end`, `failed`) arrive on `events`.
struct DragSource {
    child: Child,
    events: mpsc::Receiver<Value>,
    rect: Rect,
}

impl DragSource {
    /// A source window at (`x`, `y`) offering `paths` as `text/uri-list`.
    fn open(paths: &[&Path], x: i32, y: i32) -> DragSource {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/drag_source.py");
        let mut child = Command::new(python())
            .arg(script)
            .args(["--x", &x.to_string(), "--y", &y.to_string()])
            .args(paths)
            .stdout(Stdio::piped())
            .spawn()
            .expect("the drag source (apt install python3-gi gir1.2-gtk-3.0)");
        let out = child.stdout.take().unwrap();
        let (tx, events) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line)
                    && tx.send(v).is_err()
                {
                    break;
                }
            }
        });
        let ready = events.recv_timeout(Duration::from_secs(15)).expect("the drag source did not open");
        assert_eq!(ready["event"], "ready", "{ready}");
        let n = |k: &str| ready[k].as_i64().unwrap() as i32;
        DragSource { child, events, rect: Rect { x: n("x"), y: n("y"), w: n("width"), h: n("height") } }
    }

    /// Presses the mouse on the source and carries the pointer to `to` in small steps, as a hand does (GTK starts
    /// the drag past its threshold, and each move is an XDND position message to the window under the pointer).
    /// The button stays down: the drag hovers at `to` until [`DragSource::release`].
    fn carry_to(&self, to: (i32, i32)) {
        let (x0, y0) = self.rect.center();
        xdo(&["mousemove", &x0.to_string(), &y0.to_string()]);
        std::thread::sleep(Duration::from_millis(200));
        xdo(&["mousedown", "1"]);
        std::thread::sleep(Duration::from_millis(300));
        let steps = 16;
        for i in 1..=steps {
            let x = x0 + (to.0 - x0) * i / steps;
            let y = y0 + (to.1 - y0) * i / steps;
            xdo(&["mousemove", &x.to_string(), &y.to_string()]);
            std::thread::sleep(Duration::from_millis(60));
        }
        // a little wiggle at the target: WebKit asks for the data on a position message over the page
        for d in [3, -3, 0] {
            xdo(&["mousemove", &(to.0 + d).to_string(), &to.1.to_string()]);
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Lets go of the mouse; waits until the source says the drag ended, and returns every report since the drag began.
    fn release(mut self) -> Vec<Value> {
        xdo(&["mouseup", "1"]);
        let mut seen = Vec::new();
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(15) {
            match self.events.recv_timeout(Duration::from_millis(200)) {
                Ok(v) => {
                    let end = v["event"] == "end";
                    seen.push(v);
                    if end {
                        break;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let _ = self.child.wait();
        seen
    }

    /// The drag in one go: carry to `to`, let go; the drag must have ended with a drop, not a failure.
    fn drop_at(self, to: (i32, i32)) -> Vec<Value> {
        self.carry_to(to);
        let seen = self.release();
        assert!(seen.iter().any(|v| v["event"] == "end"), "the drag never ended: {seen:?}");
        assert!(!seen.iter().any(|v| v["event"] == "failed"), "the drop failed: {seen:?}");
        seen
    }
}

impl Drop for DragSource {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The whole X screen as the user sees it (the drag source's window included), with the session's DISPLAY.
fn screen_shot(path: &Path) {
    let ok = Command::new("import").args(["-window", "root"]).arg(path).status().is_ok_and(|s| s.success());
    if !ok {
        eprintln!("import -window root failed for {}", path.display());
    }
}

fn media_log(agent: &Agent) -> Vec<(String, u64)> {
    agent
        .s()
        .log()
        .into_iter()
        .filter_map(|e| match e.item {
            hermes_devserver::LogItem::Media { filename, size, .. } => Some((filename, size)),
            _ => None,
        })
        .collect()
}

/// The names on the composer's attachment chips.
fn staged(s: &Session) -> Vec<String> {
    let v = s.exec(
        "return [...document.querySelectorAll('.composer .files .name')].map((n) => n.textContent.trim())",
        json!([]),
    );
    v.as_array().unwrap().iter().map(|n| n.as_str().unwrap_or_default().to_string()).collect()
}

fn composer_alerts(s: &Session) -> Vec<String> {
    let v = s.exec(
        "return [...document.querySelectorAll('.composer [role=alert]')].map((n) => n.textContent.trim())",
        json!([]),
    );
    v.as_array().unwrap().iter().map(|n| n.as_str().unwrap_or_default().to_string()).collect()
}

fn send(s: &Session) {
    s.wait("send enabled", 10, "return !document.querySelector('.composer button.send').disabled");
    s.exec("document.querySelector('.composer button.send').click()", json!([]));
}

fn connected(s: &Session) {
    s.wait("connected", 30, "return !!document.getElementById('composer-input') && !document.querySelector('.banner')");
}

/// Where the drag source's window goes: left of the app's window when there is room, else over its sidebar (it is
/// mapped later, so it is on top); either way away from the chat area, where the files are dropped.
fn source_spot(win: Rect) -> (i32, i32) {
    (if win.x >= 90 { win.x - 85 } else { 4 }, win.y + win.h / 2)
}

/// One file dropped on the chat: the overlay shows while the pointer hovers with it (page DOM and screen), goes at
/// the drop, the file is attached, and sent it arrives whole. Then three files in one drag (a space and Cyrillic in
/// their names: the URIs are percent-encoded) all arrive; then a folder is refused with a sentence naming it and
/// nothing goes out.
#[test]
fn e2e_dnd_files_overlay_and_folder() {
    if !enabled() {
        return;
    }
    let shots = wd::screens();
    let agent = Agent::start(None);
    let (data, _) = data_with_profile("Drop agent", &agent.url(), TOKEN);
    let l = launch(data.path());
    let s = &l.s;
    connected(s);
    let win = app_window();
    eprintln!("app window: {win:?}");
    let target = on_screen(s, win, "main");
    let spot = source_spot(win);

    let files = tempfile::tempdir().unwrap();
    let hello = files.path().join("hello.txt");
    std::fs::write(&hello, b"hello from a drag and drop\n").unwrap();

    // one file, hovering first: the overlay is on the page and on the screen
    let src = DragSource::open(&[&hello], spot.0, spot.1);
    src.carry_to(target);
    s.wait("the drop overlay while dragging", 15, "return !!document.querySelector('.drop')");
    let overlay = s.exec("return document.querySelector('.drop').innerText", json!([]));
    assert!(overlay.as_str().unwrap_or_default().contains("Drop files to send"), "{overlay}");
    let covers = s.exec(
        "const r = document.querySelector('.drop').getBoundingClientRect();
         return r.width >= innerWidth - 1 && r.height >= innerHeight - 1 && getComputedStyle(document.querySelector('.drop')).visibility === 'visible'",
        json!([]),
    );
    assert_eq!(covers, json!(true), "the overlay covers the window");
    s.screenshot(&shots.join("dnd-1-overlay.png"));
    screen_shot(&shots.join("dnd-1-overlay-screen.png"));
    assert_eq!(staged(s), Vec::<String>::new(), "nothing is attached before the drop");
    let seen = src.release();
    assert!(seen.iter().any(|v| v["event"] == "data"), "the app asked for the data: {seen:?}");
    assert!(!seen.iter().any(|v| v["event"] == "failed"), "the drop failed: {seen:?}");
    s.wait("the overlay gone after the drop", 10, "return !document.querySelector('.drop')");
    s.wait(
        "hello.txt attached",
        10,
        "return document.querySelector('.composer .files')?.innerText.includes('hello.txt')",
    );
    assert_eq!(staged(s), vec!["hello.txt"]);
    assert!(received(&agent).is_empty(), "a drop attaches; it does not send by itself");
    send(s);
    until("hello.txt received", || received(&agent).iter().any(|(n, _)| n == "hello.txt"));
    assert_eq!(received(&agent), vec![("hello.txt".to_string(), std::fs::read(&hello).unwrap())]);
    s.wait("the chips gone after sending", 10, "return !document.querySelector('.composer .files')");

    // several files in one drag
    let notes = files.path().join("meeting notes.txt");
    std::fs::write(&notes, "agenda: ship it\n".repeat(40)).unwrap();
    let report = files.path().join("отчёт.csv");
    std::fs::write(&report, "a,b\n1,2\n").unwrap();
    let picture = files.path().join("picture.png");
    noise_png(&picture, 120, 80);
    DragSource::open(&[&notes, &report, &picture], spot.0, spot.1).drop_at(target);
    s.wait("three files attached", 15, "return document.querySelectorAll('.composer .files .name').length === 3");
    assert_eq!(staged(s), vec!["meeting notes.txt", "отчёт.csv", "picture.png"], "in the order they were offered");
    s.screenshot(&shots.join("dnd-2-three-files.png"));
    send(s);
    until("all four files received", || received(&agent).len() == 4);
    let got = received(&agent);
    for p in [&notes, &report, &picture] {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(p).unwrap();
        assert!(got.iter().any(|(n, b)| *n == name && *b == bytes), "{name} arrived whole: {got:?}");
    }

    // a folder: refused with a sentence naming it, nothing attached, nothing sent
    let folder = files.path().join("Holiday photos");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("inside.txt"), b"not sent").unwrap();
    let before = media_log(&agent);
    DragSource::open(&[&folder], spot.0, spot.1).drop_at(target);
    s.wait("the folder refused", 10, "return document.querySelectorAll('.composer [role=alert]').length > 0");
    assert_eq!(
        composer_alerts(s),
        vec!["“Holiday photos” is a folder. Only files can be sent — open it and drop the files inside."]
    );
    assert_eq!(staged(s), Vec::<String>::new());
    assert_eq!(s.exec("return document.querySelector('.composer button.send').disabled", json!([])), json!(true));
    s.screenshot(&shots.join("dnd-3-folder-refused.png"));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(media_log(&agent), before, "nothing went out");
    assert_eq!(received(&agent).len(), 4);
}

/// A file over the agent's limit (`max_media_bytes` 64 KiB here) is explained on its chip before anything is sent:
/// Send stays off, Enter sends nothing; the image is offered a downscale, which makes it fit, and the downscaled
/// copy is what arrives.
#[test]
fn e2e_dnd_over_the_limit() {
    if !enabled() {
        return;
    }
    const LIMIT: u64 = 64 * 1024;
    let shots = wd::screens();
    let agent = Agent::start_tweaked(|c| c.max_media_bytes = LIMIT);
    let (data, _) = data_with_profile("Small agent", &agent.url(), TOKEN);
    let l = launch(data.path());
    let s = &l.s;
    connected(s);
    let win = app_window();
    let target = on_screen(s, win, "main");
    let spot = source_spot(win);

    let files = tempfile::tempdir().unwrap();
    let photo = files.path().join("big photo.png");
    noise_png(&photo, 400, 300);
    let archive = files.path().join("archive.bin");
    std::fs::write(&archive, vec![7u8; 100 * 1024]).unwrap();
    assert!(std::fs::metadata(&photo).unwrap().len() > LIMIT);

    DragSource::open(&[&photo, &archive], spot.0, spot.1).drop_at(target);
    s.wait("two files attached", 15, "return document.querySelectorAll('.composer .files .name').length === 2");
    let chips = s.exec("return [...document.querySelectorAll('.composer .file')].map((f) => f.innerText)", json!([]));
    eprintln!("chips: {chips}");
    let chips: Vec<String> = chips.as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
    assert!(chips[0].contains("the agent accepts files up to 64 KB"), "{chips:?}");
    assert!(chips[1].contains("This file is 100 KB; the agent accepts files up to 64 KB"), "{chips:?}");
    let offers = s.exec(
        "return [...document.querySelectorAll('.composer .file')].map((f) => [...f.querySelectorAll('button')].some((b) => b.innerText.includes('Downscale image')))",
        json!([]),
    );
    assert_eq!(offers, json!([true, false]), "a downscale for the image, not for the other file");
    assert_eq!(s.exec("return document.querySelector('.composer button.send').disabled", json!([])), json!(true));
    // Enter in the composer sends nothing either
    type_text(s, "both, please");
    s.exec(
        "document.getElementById('composer-input').dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}))",
        json!([]),
    );
    s.screenshot(&shots.join("dnd-4-over-the-limit.png"));
    std::thread::sleep(Duration::from_millis(500));
    assert!(agent.s().log().is_empty(), "nothing was sent: {:?}", agent.s().log());

    s.exec(
        "[...document.querySelectorAll('.composer .file button')].find((b) => b.innerText.includes('Downscale image')).click()",
        json!([]),
    );
    s.wait(
        "downscaled",
        30,
        "return document.querySelector('.composer .files')?.innerText.includes('big photo-small.jpg')",
    );
    s.exec("document.querySelector('.composer button[aria-label=\"Remove archive.bin\"]').click()", json!([]));
    s.wait("no alert left", 10, "return !document.querySelector('.composer .files [role=alert]')");
    s.screenshot(&shots.join("dnd-5-downscaled.png"));
    send(s);
    until("the downscaled photo received", || !received(&agent).is_empty());
    let got = received(&agent);
    assert_eq!(got.len(), 1, "{:?}", got.iter().map(|g| &g.0).collect::<Vec<_>>());
    assert_eq!(got[0].0, "big photo-small.jpg");
    assert!(got[0].1.len() as u64 <= LIMIT, "{} bytes", got[0].1.len());
    let img = image::load_from_memory(&got[0].1).expect("a picture");
    assert!(img.width() > 0 && img.height() > 0);
    until("the caption sent with it", || {
        agent.s().log().iter().any(
            |e| matches!(&e.item, hermes_devserver::LogItem::Media { caption: Some(c), .. } if c == "both, please"),
        )
    });
}

/// An image on the X clipboard (as an image viewer or a screenshot tool puts it there) pasted with Ctrl+V into the
/// composer becomes an attachment, and sent it arrives as the same picture.
#[test]
fn e2e_dnd_paste_image_from_the_clipboard() {
    if !enabled() {
        return;
    }
    let shots = wd::screens();
    let agent = Agent::start(None);
    let (data, _) = data_with_profile("Paste agent", &agent.url(), TOKEN);
    let l = launch(data.path());
    let s = &l.s;
    connected(s);
    let win = app_window();

    let files = tempfile::tempdir().unwrap();
    let png = files.path().join("clip.png");
    noise_png(&png, 64, 48);
    // xclip serves the clipboard for as long as it runs (-quiet: in the foreground, so it is ended by its pid)
    let mut clip = Command::new("xclip")
        .args(["-quiet", "-selection", "clipboard", "-t", "image/png", "-i"])
        .arg(&png)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("xclip (apt install xclip)");
    std::thread::sleep(Duration::from_millis(300));

    // the pointer over the window (no window manager: the keyboard goes where the pointer is), the composer focused
    let field = on_screen(s, win, "#composer-input");
    xdo(&["mousemove", &field.0.to_string(), &field.1.to_string()]);
    xdo(&["click", "1"]);
    s.wait("composer focused", 5, "return document.activeElement?.id === 'composer-input'");
    xdo(&["key", "--clearmodifiers", "ctrl+v"]);
    let got = s.wait(
        "the pasted image attached",
        15,
        "const n = document.querySelector('.composer .files .name'); return n ? n.textContent.trim() : ''",
    );
    let name = got.as_str().unwrap().to_string();
    eprintln!("pasted as {name}");
    assert!(name.starts_with("pasted-") && name.ends_with(".png"), "{name}");
    let _ = clip.kill();
    let _ = clip.wait();
    s.screenshot(&shots.join("dnd-6-pasted.png"));
    send(s);
    until("the pasted image received", || !received(&agent).is_empty());
    let got = received(&agent);
    assert_eq!(got[0].0, name);
    let img = image::load_from_memory(&got[0].1).expect("a picture");
    assert_eq!((img.width(), img.height()), (64, 48), "the same picture");
    let want = image::open(&png).unwrap().to_rgb8();
    assert_eq!(img.to_rgb8().as_raw(), want.as_raw(), "pixel for pixel");
}
