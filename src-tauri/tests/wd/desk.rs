//! The resident app's end-to-end set-up, shared by e2e_resident.rs and e2e_quick.rs: an agent with profiles on it
//! (tokens in the keychain), the app under WebDriver or started directly, its processes and X11 windows.
#![allow(dead_code)] // each e2e test crate uses a part

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use super::app::*;
use super::{Driver, Session};
use crate::wd;

pub const BIN: &str = env!("CARGO_BIN_EXE_hermes-desktop");

/// What every test here starts from: the agent, a data folder with profiles on it (each with its token), and a
/// home folder of its own under the data folder (the XDG autostart entry lands in `home/.config/autostart`).
pub struct Setup {
    pub agent: Agent,
    pub data: tempfile::TempDir,
    pub home: PathBuf,
    /// `(profile id, device id)` of each agent, in the sidebar's order.
    pub profiles: Vec<(String, String)>,
}

impl Setup {
    /// An agent and one profile per name on it.
    pub fn new(names: &[&str]) -> Setup {
        let agent = Agent::start(None);
        let data = tempfile::tempdir().unwrap();
        let profiles = names
            .iter()
            .map(|n| {
                let p =
                    wd::profile_with_token(data.path(), n, &agent.url(), TOKEN, hermes_store::Dialect::Adapter, None);
                (p.id, p.device_id)
            })
            .collect();
        let home = data.path().join("home");
        // (the autostart plugin creates `autostart` but not its parent)
        std::fs::create_dir_all(home.join(".config")).unwrap();
        Setup { agent, data, home, profiles }
    }

    /// The environment the app gets (besides what [`Driver::start_env`] sets): its home, and `extra`.
    fn env<'a>(&'a self, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut v = vec![("HOME", self.home.to_str().unwrap())];
        v.extend_from_slice(extra);
        v
    }

    /// The app under WebDriver with `extra` environment variables, once every agent's conversation shows as
    /// connected (no banner).
    pub fn launch(&self, extra: &[(&str, &str)]) -> Running {
        let driver = Driver::start_env(self.data.path(), &self.env(extra));
        let s = driver.session(BIN, &[]);
        s.wait(
            "connected",
            30,
            "return !!document.getElementById('composer-input') && !document.querySelector('.banner')",
        );
        let pid = app_pid(driver.pid());
        Running { s, driver, pid }
    }

    /// The app started directly (no WebDriver: a start at login has no page to drive), with `args`, the data folder,
    /// the XDG folders [`Driver::start_env`] would give it and its home. Killed by pid when dropped.
    pub fn spawn(&self, args: &[&str]) -> Spawned {
        let data = self.data.path();
        let xdg = |name: &str| {
            let d = data.join(name);
            std::fs::create_dir_all(&d).unwrap();
            d
        };
        wd::wait_gone(BIN);
        let child = Command::new(BIN)
            .args(args)
            .env("HERMES_DATA_DIR", data)
            .env("XDG_DATA_HOME", xdg("xdg-data"))
            .env("XDG_CACHE_HOME", xdg("xdg-cache"))
            .env("XDG_CONFIG_HOME", xdg("xdg-config"))
            .env("HOME", &self.home)
            .env("LANG", "C.UTF-8")
            .env("LANGUAGE", "en")
            .stdout(Stdio::null())
            // (what it says before its log exists: in a failure's message, `logs`)
            .stderr(std::fs::File::create(data.join("stderr.txt")).map_or(Stdio::null(), Stdio::from))
            .spawn()
            .unwrap();
        Spawned(child)
    }

    /// The agent's open connections.
    pub fn connections(&self) -> usize {
        self.agent.s().connections()
    }
}

/// The app under WebDriver: its session, its driver (ends the app when dropped) and its pid.
pub struct Running {
    pub s: Session,
    pub driver: Driver,
    pub pid: u32,
}

impl Running {
    /// The app's WebKit web processes (the page's renderer).
    pub fn web_processes(&self) -> Vec<u32> {
        web_processes(self.pid)
    }

    /// Is the process still there?
    pub fn alive(&self) -> bool {
        alive(self.pid)
    }
}

pub struct Spawned(Child);

impl Spawned {
    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let below = wd::descendants(self.0.id());
        let _ = self.0.kill();
        let _ = self.0.wait();
        for pid in below {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
        wd::wait_gone(BIN);
    }
}

fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default().trim().to_string()
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rfind(')').is_some_and(|i| !s[i + 2..].starts_with('Z')))
}

/// The app's process below the WebDriver (its child running [`BIN`]).
pub fn app_pid(driver: u32) -> u32 {
    let exe = std::fs::canonicalize(BIN).unwrap();
    wd::descendants(driver)
        .into_iter()
        .find(|p| std::fs::read_link(format!("/proc/{p}/exe")).is_ok_and(|e| e == exe) && !wd::is_standby(*p))
        .expect("the app's process below the WebDriver")
}

/// The WebKit web processes below `pid`.
pub fn web_processes(pid: u32) -> Vec<u32> {
    wd::descendants(pid).into_iter().filter(|p| comm(*p).starts_with("WebKitWebProces") && alive(*p)).collect()
}

/// Polls `ok` every 100 ms for up to `secs`; fails with `what`.
pub fn within(secs: u64, what: &str, mut ok: impl FnMut() -> bool) {
    let t = Instant::now();
    while !ok() {
        assert!(t.elapsed() < Duration::from_secs(secs), "never ({secs} s): {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The X11 side of the tests: the app's top-level windows (Xvfb has no window manager, so they are the root's
/// children), and closing one as a window manager does.
pub mod x {
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{
        AtomEnum, ClientMessageEvent, ConnectionExt, EventMask, MapState, Window as XWindow,
    };

    fn atom(c: &impl Connection, name: &str) -> u32 {
        c.intern_atom(false, name.as_bytes()).unwrap().reply().unwrap().atom
    }

    /// The app's (`pid`'s) windows that are on screen and titled `title`.
    pub fn shown(pid: u32, title: &str) -> Vec<XWindow> {
        let (c, screen) = x11rb::connect(None).expect("an X display (run under cargo xtask e2e)");
        let root = c.setup().roots[screen].root;
        let net_pid = atom(&c, "_NET_WM_PID");
        let utf8 = atom(&c, "UTF8_STRING");
        let net_name = atom(&c, "_NET_WM_NAME");
        let mut out = Vec::new();
        for w in c.query_tree(root).unwrap().reply().unwrap().children {
            let Ok(attr) = c.get_window_attributes(w).unwrap().reply() else { continue };
            if attr.map_state != MapState::VIEWABLE {
                continue;
            }
            let owner = c.get_property(false, w, net_pid, AtomEnum::CARDINAL, 0, 1).unwrap().reply().ok();
            if owner.and_then(|r| r.value32().and_then(|mut v| v.next())) != Some(pid) {
                continue;
            }
            let name = c.get_property(false, w, net_name, utf8, 0, 256).unwrap().reply().ok();
            if name.is_some_and(|n| n.value == title.as_bytes()) {
                out.push(w);
            }
        }
        out
    }

    /// The title of the top-level window that holds the keyboard focus (itself or one of its children), if it is on
    /// screen.
    pub fn focused_title() -> Option<String> {
        let (c, screen) = x11rb::connect(None).expect("an X display");
        let root = c.setup().roots[screen].root;
        let utf8 = atom(&c, "UTF8_STRING");
        let net_name = atom(&c, "_NET_WM_NAME");
        let focus = c.get_input_focus().ok()?.reply().ok()?;
        // the top-level window the focus is in
        let mut w = focus.focus;
        loop {
            let tree = c.query_tree(w).ok()?.reply().ok()?;
            if tree.parent == root || tree.parent == x11rb::NONE {
                break;
            }
            w = tree.parent;
        }
        let viewable = c.get_window_attributes(w).ok()?.reply().ok()?.map_state == MapState::VIEWABLE;
        let name = c.get_property(false, w, net_name, utf8, 0, 256).ok()?.reply().ok()?;
        viewable.then(|| String::from_utf8_lossy(&name.value).into_owned())
    }

    /// Whether a window titled `title` (of any process) is on screen and holds the keyboard focus.
    pub fn shown_and_focused(title: &str) -> bool {
        focused_title().is_some_and(|t| t == title)
    }

    /// `w`'s place and size on the screen (x, y, width, height; a top-level window's parent is the root here).
    pub fn geometry(w: XWindow) -> (i32, i32, u32, u32) {
        let (c, _) = x11rb::connect(None).unwrap();
        let g = c.get_geometry(w).unwrap().reply().unwrap();
        (g.x.into(), g.y.into(), g.width.into(), g.height.into())
    }

    /// The pixels (32-bit ZPixmap) of a rectangle of `w`, from the X server: what is on screen now.
    pub fn pixels(w: XWindow, (x, y, width, height): (i16, i16, u16, u16)) -> Vec<u8> {
        let (c, _) = x11rb::connect(None).unwrap();
        c.get_image(x11rb::protocol::xproto::ImageFormat::Z_PIXMAP, w, x, y, width, height, !0)
            .unwrap()
            .reply()
            .unwrap()
            .data
    }

    /// The screen's size.
    pub fn screen_size() -> (u32, u32) {
        let (c, screen) = x11rb::connect(None).unwrap();
        let s = &c.setup().roots[screen];
        (s.width_in_pixels.into(), s.height_in_pixels.into())
    }

    /// Another app's window over the whole screen with the keyboard focus, for as long as it lives: the app's windows
    /// are covered and unfocused.
    pub struct Cover(x11rb::rust_connection::RustConnection);

    pub fn cover_screen() -> Cover {
        use x11rb::protocol::xproto::{CreateWindowAux, InputFocus, WindowClass};
        use x11rb::wrapper::ConnectionExt as _;
        let (c, screen) = x11rb::connect(None).unwrap();
        let s = c.setup().roots[screen].clone();
        let w = c.generate_id().unwrap();
        let aux = CreateWindowAux::new().background_pixel(s.black_pixel);
        let (width, height) = (s.width_in_pixels, s.height_in_pixels);
        c.create_window(s.root_depth, w, s.root, 0, 0, width, height, 0, WindowClass::INPUT_OUTPUT, 0, &aux).unwrap();
        c.map_window(w).unwrap();
        c.sync().unwrap();
        c.set_input_focus(InputFocus::PARENT, w, x11rb::CURRENT_TIME).unwrap();
        c.sync().unwrap();
        Cover(c)
    }

    /// The four colours of [`pattern_window`]'s quadrants: top-left, top-right, bottom-left, bottom-right.
    pub const PATTERN: [[u8; 3]; 4] = [[230, 30, 40], [30, 200, 60], [40, 70, 230], [250, 210, 20]];

    /// Another app's window with a known picture, for as long as it lives: `w`×`h` at `x`,`y`, titled `title`, its
    /// quadrants filled with [`PATTERN`]. The picture is the window's background pixmap, so the X server itself
    /// draws it again whenever it is uncovered (no client has to answer an Expose).
    pub struct Pattern(x11rb::rust_connection::RustConnection, pub XWindow);

    pub fn pattern_window(x: i16, y: i16, w: u16, h: u16, title: &str) -> Pattern {
        use x11rb::protocol::xproto::{ChangeGCAux, CreateGCAux, CreateWindowAux, PropMode, Rectangle, WindowClass};
        use x11rb::wrapper::ConnectionExt as _;
        let (c, screen) = x11rb::connect(None).unwrap();
        let s = c.setup().roots[screen].clone();
        let pix = c.generate_id().unwrap();
        c.create_pixmap(s.root_depth, pix, s.root, w, h).unwrap();
        let gc = c.generate_id().unwrap();
        c.create_gc(gc, pix, &CreateGCAux::new()).unwrap();
        let (hw, hh) = (w / 2, h / 2);
        let quads = [(0, 0), (hw as i16, 0), (0, hh as i16), (hw as i16, hh as i16)];
        for ([r, g, b], (qx, qy)) in PATTERN.iter().zip(quads) {
            // TrueColor 24-bit: the pixel value is the colour itself
            let pixel = (u32::from(*r) << 16) | (u32::from(*g) << 8) | u32::from(*b);
            c.change_gc(gc, &ChangeGCAux::new().foreground(pixel)).unwrap();
            c.poly_fill_rectangle(pix, gc, &[Rectangle { x: qx, y: qy, width: hw, height: hh }]).unwrap();
        }
        let win = c.generate_id().unwrap();
        let aux = CreateWindowAux::new().background_pixmap(pix);
        c.create_window(s.root_depth, win, s.root, x, y, w, h, 0, WindowClass::INPUT_OUTPUT, 0, &aux).unwrap();
        let utf8 = atom(&c, "UTF8_STRING");
        let net_name = atom(&c, "_NET_WM_NAME");
        c.change_property8(PropMode::REPLACE, win, net_name, utf8, title.as_bytes()).unwrap();
        c.change_property8(PropMode::REPLACE, win, AtomEnum::WM_NAME, AtomEnum::STRING, title.as_bytes()).unwrap();
        c.change_property8(PropMode::REPLACE, win, AtomEnum::WM_CLASS, AtomEnum::STRING, b"pattern\0Pattern\0")
            .unwrap();
        let net_pid = atom(&c, "_NET_WM_PID");
        c.change_property32(PropMode::REPLACE, win, net_pid, AtomEnum::CARDINAL, &[std::process::id()]).unwrap();
        // a window manager keeps a program's own position (WM_NORMAL_HINTS: USPosition | USSize)
        let hints = [3u32, x as u32, y as u32, w as u32, h as u32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        c.change_property32(PropMode::REPLACE, win, AtomEnum::WM_NORMAL_HINTS, AtomEnum::WM_SIZE_HINTS, &hints)
            .unwrap();
        c.map_window(win).unwrap();
        c.sync().unwrap();
        Pattern(c, win)
    }

    impl Pattern {
        /// Where the window's pixels are on the screen now (a window manager may have framed or moved it).
        pub fn origin(&self) -> (i32, i32) {
            let s = &self.0.setup().roots[0];
            let t = self.0.translate_coordinates(self.1, s.root, 0, 0).unwrap().reply().unwrap();
            (t.dst_x.into(), t.dst_y.into())
        }
    }

    /// Asks `w` to close, as a window manager's close button does (`WM_DELETE_WINDOW`).
    pub fn close(w: XWindow) {
        let (c, _) = x11rb::connect(None).unwrap();
        let protocols = atom(&c, "WM_PROTOCOLS");
        let delete = atom(&c, "WM_DELETE_WINDOW");
        let ev = ClientMessageEvent::new(32, w, protocols, [delete, 0, 0, 0, 0]);
        c.send_event(false, w, EventMask::NO_EVENT, ev).unwrap();
        c.flush().unwrap();
    }
}

/// Closes the app's main window as the user does (the window manager's close), once it is on screen.
pub fn close_main(pid: u32) {
    let mut shown = Vec::new();
    within(10, "the main window on screen", || {
        shown = x::shown(pid, "Hermes");
        !shown.is_empty()
    });
    // Asked again every 2 s until it is off screen: a close request sent right after a reply has been seen to get
    // lost now and then (no CloseRequested at all in the app's log), as a second click on a close button would.
    let t = Instant::now();
    loop {
        for w in &shown {
            x::close(*w);
        }
        let asked = Instant::now();
        while asked.elapsed() < Duration::from_secs(2) {
            if x::shown(pid, "Hermes").is_empty() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(t.elapsed() < Duration::from_secs(10), "the main window never went off screen");
        shown = x::shown(pid, "Hermes");
    }
}

/// Switches the session to the page of a main window built again (the old one is gone with its webview).
pub fn attach_rebuilt(s: &Session) {
    within(20, "a page of the rebuilt window", || {
        let handles = s.handles();
        handles.iter().any(|h| {
            s.switch_to(h)
                && s.try_exec(
                    "return !!document.getElementById('composer-input') && !document.querySelector('[data-testid=quick-panel]')",
                )
                .is_ok_and(|v| v == json!(true))
        })
    });
}

/// Processes whose program is named `name` and whose command line or environment names `data` (the resident gets
/// `--data-dir`, the window process it starts `HERMES_DATA_DIR`); not a window process on standby ([`standbys`]).
pub fn processes_named(name: &str, data: &std::path::Path) -> Vec<u32> {
    let data = data.to_string_lossy().to_string();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let prog = cmd.split(|b| *b == 0).next().map(|a| String::from_utf8_lossy(a).to_string()).unwrap_or_default();
        if prog.rsplit('/').next() != Some(name) || wd::is_standby(pid) {
            continue;
        }
        let env = std::fs::read(e.path().join("environ")).unwrap_or_default();
        if String::from_utf8_lossy(&cmd).contains(&data) || String::from_utf8_lossy(&env).contains(&data) {
            out.push(pid);
        }
    }
    out
}

/// The window processes on standby started for the data folder `data` (their environment names it).
pub fn standbys(data: &std::path::Path) -> Vec<u32> {
    let want = format!("HERMES_DATA_DIR={}", data.display());
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| wd::is_standby(*p) && alive(*p))
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == want.as_bytes()))
        })
        .collect()
}

/// The app's and the resident's logs (the tail of each file), for a failure's message.
pub fn logs(setup: &Setup) -> String {
    let mut out = String::new();
    let mut files = wd::app::paths_under(&[setup.data.path().join("logs")]);
    files.push(setup.data.path().join("stderr.txt"));
    for p in files.into_iter().filter(|p| p.exists()) {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(40).collect();
        out += &format!("--- {}\n{}\n", p.display(), tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
    }
    out
}

/// What a process has mapped: does it hold GTK's or WebKit's libraries?
pub fn maps_toolkit(pid: u32) -> bool {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
    maps.contains("libwebkit2gtk") || maps.contains("libgtk-3")
}
