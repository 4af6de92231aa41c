//! A private X server for the capture tests and the bench: our own Xvfb on a free display, optionally openbox on it
//! (xcap's window list is the window manager's `_NET_CLIENT_LIST_STACKING`), and an X client (x11rb, pure Rust) that
//! draws windows whose pixels we know.
//!
//! Missing tools fail loudly: `cargo xtask test` installs them (xvfb, openbox).

#![allow(dead_code)] // the bench uses part of it

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::properties::{WmSizeHints, WmSizeHintsSpecification};
use x11rb::protocol::xproto::{
    AtomEnum, ChangeGCAux, ClientMessageEvent, ConnectionExt as _, CreateGCAux, CreateWindowAux, EventMask,
    ImageFormat, ImageOrder, MapState, PropMode, Rectangle, Window, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

pub const SCREEN_W: u16 = 1920;
pub const SCREEN_H: u16 = 1080;

/// Polls `ok` every 20 ms until it holds; panics with `what` after `secs`.
pub fn wait_until(secs: u64, what: &str, mut ok: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !ok() {
        assert!(t0.elapsed() < Duration::from_secs(secs), "timed out after {secs} s waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn require(tool: &str, package: &str) {
    let found =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file())).unwrap_or(false);
    assert!(
        found,
        "`{tool}` is not installed: these tests need their own X server and window manager \
         (apt-get install {package}, or run `cargo xtask test`, which installs them)"
    );
}

/// A child process stopped (and reaped) on drop: SIGTERM, so that an X server removes its socket and lock file,
/// then SIGKILL after 3 s.
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let pid = self.0.id().to_string();
        let termed = Command::new("kill").args(["-TERM", &pid]).stderr(Stdio::null()).status();
        if termed.is_ok_and(|s| s.success()) {
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(3) {
                if let Ok(Some(_)) = self.0.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Our own Xvfb, `SCREEN_W`×`SCREEN_H`×24, on the first free display from :140.
pub struct Xvfb {
    pub display: String,
    server: Option<Reaped>,
    files: [PathBuf; 2],
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        drop(self.server.take());
        // Killed hard, the server leaves its socket and lock file: they are ours, remove them.
        for f in &self.files {
            let _ = std::fs::remove_file(f);
        }
    }
}

impl Xvfb {
    pub fn start() -> Xvfb {
        require("Xvfb", "xvfb");
        for n in 140..200 {
            let socket = PathBuf::from(format!("/tmp/.X11-unix/X{n}"));
            let lock = PathBuf::from(format!("/tmp/.X{n}-lock"));
            if socket.exists() || lock.exists() {
                continue;
            }
            let child = Command::new("Xvfb")
                .arg(format!(":{n}"))
                .args(["-screen", "0", &format!("{SCREEN_W}x{SCREEN_H}x24"), "-nolisten", "tcp", "-noreset"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("cannot start Xvfb");
            let mut server = Reaped(child);
            let t0 = Instant::now();
            loop {
                let ours_runs = matches!(server.0.try_wait(), Ok(None));
                if ours_runs && socket.exists() && x11rb::connect(Some(&format!(":{n}"))).is_ok() {
                    return Xvfb { display: format!(":{n}"), server: Some(server), files: [socket, lock] };
                }
                if let Ok(Some(_)) = server.0.try_wait() {
                    break; // lost a race for this display: try the next one
                }
                assert!(t0.elapsed() < Duration::from_secs(15), "Xvfb :{n} did not come up within 15 s");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        panic!("no free X display between :140 and :199");
    }
}

/// Points this process (xcap reads DISPLAY at every call) at `display`, as an X11 session: a developer's Wayland
/// session variables would send xcap to the screenshot portal instead.
///
/// Call it while the process has a single thread (at the top of `main`).
pub fn use_display(display: &str) {
    // SAFETY: called at the top of `main` (`harness = false`), before any other thread exists, so nothing reads the
    // environment concurrently.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("DISPLAY", display);
        std::env::set_var("XDG_SESSION_TYPE", "x11");
        std::env::remove_var("WAYLAND_DISPLAY");
    }
}

/// openbox on `display`, with its configuration and cache in `home` (the default rc.xml from /etc/xdg).
pub fn start_openbox(x: &X, home: &Path) -> Reaped {
    require("openbox", "openbox");
    let wm = Reaped(
        Command::new("openbox")
            .env("DISPLAY", &x.display)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env("XDG_DATA_HOME", home.join("data"))
            .env_remove("WAYLAND_DISPLAY")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(home.join("openbox.log")).expect("openbox.log"))
            .spawn()
            .expect("cannot start openbox"),
    );
    let wm_s0 = x.atom(&format!("WM_S{}", x.screen));
    let stacking = x.atom("_NET_CLIENT_LIST_STACKING");
    wait_until(15, "openbox to take the screen", || {
        let owner = x.conn.get_selection_owner(wm_s0).unwrap().reply().unwrap().owner;
        owner != 0 && x.root_property(stacking).is_some()
    });
    // Owning the screen is not yet handling requests: a window mapped at that moment can wait in openbox's queue
    // until some later event wakes it (seen here about once in ten starts). Map probe windows, a new one every
    // 300 ms, until openbox manages one: from then on it handles what arrives.
    let mut probes = Vec::new();
    let t0 = Instant::now();
    'ready: loop {
        assert!(t0.elapsed() < Duration::from_secs(15), "openbox did not manage a window within 15 s");
        probes.push(x.plain_window((0, 0, 60, 60), "hermes-capture-probe", [0, 0, 0]));
        let t1 = Instant::now();
        while t1.elapsed() < Duration::from_millis(300) {
            let listed = x.stacking();
            if probes.iter().any(|p| listed.contains(p)) {
                break 'ready;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    for p in &probes {
        x.destroy(*p);
    }
    wait_until(15, "openbox to forget the probe windows", || {
        let listed = x.stacking();
        !probes.iter().any(|p| listed.contains(p))
    });
    wm
}

/// Our X client.
pub struct X {
    pub conn: RustConnection,
    pub display: String,
    pub screen: usize,
    pub root: Window,
    depth: u8,
    masks: (u32, u32, u32),
    lsb_first: bool,
}

/// An 8-bit RGB colour.
pub type Rgb = [u8; 3];

impl X {
    pub fn connect(display: &str) -> X {
        let (conn, screen) = x11rb::connect(Some(display)).expect("cannot connect to our Xvfb");
        let setup = conn.setup();
        let s = &setup.roots[screen];
        let visual = s
            .allowed_depths
            .iter()
            .flat_map(|d| d.visuals.iter())
            .find(|v| v.visual_id == s.root_visual)
            .expect("root visual");
        let masks = (visual.red_mask, visual.green_mask, visual.blue_mask);
        let (root, depth) = (s.root, s.root_depth);
        let lsb_first = setup.image_byte_order == ImageOrder::LSB_FIRST;
        assert_eq!(depth, 24, "the tests assume a 24-bit TrueColor screen");
        X { conn, display: display.to_string(), screen, root, depth, masks, lsb_first }
    }

    pub fn atom(&self, name: &str) -> u32 {
        self.conn.intern_atom(false, name.as_bytes()).unwrap().reply().unwrap().atom
    }

    /// The server's pixel value for a colour (TrueColor: the colour's bits under the visual's masks).
    pub fn pixel(&self, [r, g, b]: Rgb) -> u32 {
        let put = |v: u8, mask: u32| (u32::from(v) << mask.trailing_zeros()) & mask;
        put(r, self.masks.0) | put(g, self.masks.1) | put(b, self.masks.2)
    }

    /// The colour of a pixel value read back from the server.
    fn rgb_of(&self, p: u32) -> Rgb {
        let get = |mask: u32| ((p & mask) >> mask.trailing_zeros()) as u8;
        [get(self.masks.0), get(self.masks.1), get(self.masks.2)]
    }

    /// The screen's colour at root coordinates, read by X directly (not through xcap).
    pub fn root_pixel(&self, x: i16, y: i16) -> Rgb {
        let img = self.conn.get_image(ImageFormat::Z_PIXMAP, self.root, x, y, 1, 1, !0).unwrap().reply().unwrap();
        let b: [u8; 4] = img.data[..4].try_into().unwrap();
        self.rgb_of(if self.lsb_first { u32::from_le_bytes(b) } else { u32::from_be_bytes(b) })
    }

    /// A top-level window of `w`×`h` at (`x`, `y`) (user-specified position, so the window manager keeps it), its
    /// background a pixmap where `paint` drew: the server repaints it on every exposure, no event loop needed.
    /// Titled (`_NET_WM_NAME` and `WM_NAME`) unless `title` is empty; `WM_CLASS` `class`; `_NET_WM_PID` our pid.
    pub fn window(
        &self,
        (x, y, w, h): (i16, i16, u16, u16),
        title: &str,
        class: (&str, &str),
        paint: &[(Rectangle, Rgb)],
    ) -> Window {
        let c = &self.conn;
        let pixmap = c.generate_id().unwrap();
        c.create_pixmap(self.depth, pixmap, self.root, w, h).unwrap();
        let gc = c.generate_id().unwrap();
        c.create_gc(gc, pixmap, &CreateGCAux::new().foreground(0).graphics_exposures(0)).unwrap();
        for (r, colour) in paint {
            c.change_gc(gc, &ChangeGCAux::new().foreground(self.pixel(*colour))).unwrap();
            c.poly_fill_rectangle(pixmap, gc, &[*r]).unwrap();
        }
        let win = c.generate_id().unwrap();
        c.create_window(
            x11rb::COPY_DEPTH_FROM_PARENT,
            win,
            self.root,
            x,
            y,
            w,
            h,
            0,
            WindowClass::INPUT_OUTPUT,
            x11rb::COPY_FROM_PARENT,
            &CreateWindowAux::new().background_pixmap(pixmap).event_mask(EventMask::STRUCTURE_NOTIFY),
        )
        .unwrap();
        c.free_pixmap(pixmap).unwrap();
        c.free_gc(gc).unwrap();
        if !title.is_empty() {
            let utf8 = self.atom("UTF8_STRING");
            c.change_property8(PropMode::REPLACE, win, self.atom("_NET_WM_NAME"), utf8, title.as_bytes()).unwrap();
            c.change_property8(PropMode::REPLACE, win, AtomEnum::WM_NAME, AtomEnum::STRING, title.as_bytes()).unwrap();
        }
        let wm_class = format!("{}\0{}\0", class.0, class.1);
        c.change_property8(PropMode::REPLACE, win, AtomEnum::WM_CLASS, AtomEnum::STRING, wm_class.as_bytes()).unwrap();
        c.change_property32(
            PropMode::REPLACE,
            win,
            self.atom("_NET_WM_PID"),
            AtomEnum::CARDINAL,
            &[std::process::id()],
        )
        .unwrap();
        let mut hints = WmSizeHints::new();
        hints.position = Some((WmSizeHintsSpecification::UserSpecified, x.into(), y.into()));
        hints.size = Some((WmSizeHintsSpecification::UserSpecified, w.into(), h.into()));
        hints.min_size = Some((w.into(), h.into()));
        hints.max_size = Some((w.into(), h.into()));
        hints.set_normal_hints(c, win).unwrap();
        c.map_window(win).unwrap();
        c.flush().unwrap();
        win
    }

    /// A window filled with one colour.
    pub fn plain_window(&self, geometry: (i16, i16, u16, u16), title: &str, colour: Rgb) -> Window {
        let r = Rectangle { x: 0, y: 0, width: geometry.2, height: geometry.3 };
        self.window(geometry, title, ("plain", "Plain"), &[(r, colour)])
    }

    pub fn viewable(&self, win: Window) -> bool {
        self.conn
            .get_window_attributes(win)
            .unwrap()
            .reply()
            .map(|a| a.map_state == MapState::VIEWABLE)
            .unwrap_or(false)
    }

    /// Where the window's (0, 0) is on the root window: after the window manager's frame.
    pub fn origin(&self, win: Window) -> (i32, i32) {
        let r = self.conn.translate_coordinates(win, self.root, 0, 0).unwrap().reply().unwrap();
        (r.dst_x.into(), r.dst_y.into())
    }

    /// A 32-bit property of the root window (`None` when absent).
    pub fn root_property(&self, atom: u32) -> Option<Vec<u32>> {
        let r = self.conn.get_property(false, self.root, atom, AtomEnum::ANY, 0, 4096).unwrap().reply().unwrap();
        r.value32().map(|v| v.collect())
    }

    pub fn active_window(&self) -> Option<Window> {
        self.root_property(self.atom("_NET_ACTIVE_WINDOW")).and_then(|v| v.first().copied()).filter(|&w| w != 0)
    }

    /// The window manager's client list, bottom to top.
    pub fn stacking(&self) -> Vec<Window> {
        self.root_property(self.atom("_NET_CLIENT_LIST_STACKING")).unwrap_or_default()
    }

    fn client_message(&self, win: Window, kind: &str, data: [u32; 5]) {
        let ev = ClientMessageEvent::new(32, win, self.atom(kind), data);
        self.conn
            .send_event(false, self.root, EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY, ev)
            .unwrap();
        self.conn.flush().unwrap();
    }

    /// Asks the window manager to activate (raise and focus) `win`, as a pager would.
    pub fn activate(&self, win: Window) {
        self.client_message(win, "_NET_ACTIVE_WINDOW", [2, 0, 0, 0, 0]);
    }

    /// Asks the window manager to minimize `win` (ICCCM IconicState).
    pub fn iconify(&self, win: Window) {
        self.client_message(win, "WM_CHANGE_STATE", [3, 0, 0, 0, 0]);
    }

    pub fn destroy(&self, win: Window) {
        self.conn.destroy_window(win).unwrap();
        self.conn.flush().unwrap();
    }

    /// The window's `_NET_WM_STATE` atoms.
    pub fn net_wm_state(&self, win: Window) -> Vec<u32> {
        let r = self.conn.get_property(false, win, self.atom("_NET_WM_STATE"), AtomEnum::ATOM, 0, 64).unwrap();
        r.reply().unwrap().value32().map(|v| v.collect()).unwrap_or_default()
    }

    /// Asks the window manager to put `win` on workspace `desktop`.
    pub fn to_desktop(&self, win: Window, desktop: u32) {
        self.client_message(win, "_NET_WM_DESKTOP", [desktop, 2, 0, 0, 0]);
    }
}
