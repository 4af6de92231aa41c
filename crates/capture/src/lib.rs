//! Screen capture for "Look at my screen": the monitor under a point, the list of windows, one window's pixels
//! (through `xcap`: X11 and Wayland on Linux, CoreGraphics on macOS, GDI on Windows), and the pure helpers the shell
//! runs on them: [`crop`] and a fast [`encode_png`].
//!
//! **Every capture call blocks** (X11 round trips, a Wayland portal dialog, CoreGraphics): call [`screen_at`],
//! [`windows`], [`window_image`], [`focused_window`] and [`active_window_id`] from a blocking thread (`tokio::task::spawn_blocking`), never
//! on the async runtime. [`crop`] and [`encode_png`] are pure CPU work, best kept off it too (release build, 1200×800:
//! ~0.5 ms and ~10 ms).
//!
//! Coordinates: a [`MonitorShot`] is placed on the virtual desktop in physical pixels. A [`WindowInfo`]'s rectangle
//! is in the system's window coordinates: physical pixels on X11 and Windows (so it crops a [`MonitorShot`] after
//! subtracting the shot's `x`/`y`), points on macOS (multiply by the monitor's `scale`).
//!
//! On Wayland, xcap reads monitors and windows through XWayland: the list has only X11 clients, and each capture goes
//! through the desktop's screenshot portal (GNOME, KDE) or wlroots' screencopy.
//!
//! Nothing here panics on what the system returns: errors become [`CaptureError`], and a panic inside `xcap` is
//! caught and reported as [`CaptureError::Failed`].

#[cfg(target_os = "macos")]
mod macos;
pub mod permission;
mod pixels;
#[cfg(target_os = "linux")]
mod x11;

use std::panic::{AssertUnwindSafe, catch_unwind};

pub use pixels::{crop, encode_png};

/// A rectangle of a picture, in its pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Rect {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

/// One monitor's pixels, captured now, with where that monitor is on the virtual desktop (physical pixels).
pub struct MonitorShot {
    pub image: image::RgbaImage,
    pub x: i32,
    pub y: i32,
    /// The monitor's scale factor (physical pixels per logical pixel); 1.0 when the system gives none.
    pub scale: f32,
    pub name: String,
}

impl std::fmt::Debug for MonitorShot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MonitorShot")
            .field("width", &self.image.width())
            .field("height", &self.image.height())
            .field("x", &self.x)
            .field("y", &self.y)
            .field("scale", &self.scale)
            .field("name", &self.name)
            .finish()
    }
}

/// A window the user could show, as [`windows`] lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct WindowInfo {
    /// The system's window id (X11 window, `CGWindowID`, `HWND`): what [`window_image`] takes.
    pub id: u32,
    /// The owning process; 0 when the system does not say (an X11 window without `_NET_WM_PID`).
    pub pid: u32,
    pub title: String,
    /// The application: WM_CLASS's class on X11, the owner's name on macOS, the executable's on Windows.
    pub app_name: String,
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
    pub focused: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The system refused: macOS screen-recording permission not granted, the Wayland screenshot portal refused or
    /// cancelled.
    #[error("screen capture was refused: {0}")]
    Denied(String),
    /// No such window, or no monitor at all.
    #[error("not found: {0}")]
    NotFound(String),
    /// A crop (or a picture) that leaves no pixels.
    #[error("the region leaves no pixels of the picture")]
    Empty,
    #[error("screen capture failed: {0}")]
    Failed(String),
}

pub type Result<T> = std::result::Result<T, CaptureError>;

/// Windows smaller than this on either side are not offered (tool tips, drag handles, tray icons).
const MIN_WINDOW_SIDE: u32 = 40;

/// Captures the monitor containing the point `(x, y)` of the virtual desktop (physical pixels); when no monitor
/// contains it, the primary monitor, else the first. Blocks (see the crate's documentation).
pub fn screen_at(x: i32, y: i32) -> Result<MonitorShot> {
    permission_gate()?;
    guarded("capturing the screen", || {
        let monitors = xcap::Monitor::all().map_err(|e| xcap_error("listing the monitors", e))?;
        if monitors.is_empty() {
            return Err(CaptureError::NotFound("the system reports no monitor".into()));
        }
        let mut at_point = None;
        let mut primary = None;
        for (i, m) in monitors.iter().enumerate() {
            if let Some(r) = monitor_rect(m, to_physical_factor(m))
                && contains(r, x, y)
            {
                at_point = Some(i);
                break;
            }
            if primary.is_none() && m.is_primary().unwrap_or(false) {
                primary = Some(i);
            }
        }
        let i = at_point.or(primary).unwrap_or(0);
        let Some(m) = monitors.get(i) else {
            return Err(CaptureError::NotFound("the system reports no monitor".into()));
        };
        let name = m.name().unwrap_or_default();
        let image = m.capture_image().map_err(|e| xcap_error("capturing the monitor", e))?;
        if image.width() == 0 || image.height() == 0 {
            return Err(CaptureError::Failed(format!("monitor {name:?} gave an empty picture")));
        }
        let scale = sane_scale(m.scale_factor().unwrap_or(1.0));
        let f = to_physical_factor(m);
        let (mx, my) = match (m.x(), m.y()) {
            (Ok(mx), Ok(my)) => (scaled(mx, f), scaled(my, f)),
            _ => (0, 0),
        };
        Ok(MonitorShot { image, x: mx, y: my, scale, name })
    })
}

/// The windows the user could show, front to back. Leaves out minimized windows, windows not shown now (X11: on
/// another workspace), those of process `exclude_pid` (pass our own; 0 excludes nothing), those without a title,
/// those smaller than 40×40 and those entirely off every monitor. On X11 the list is the window manager's
/// `_NET_CLIENT_LIST_STACKING`: without a window manager there is none (an error). Blocks (see the crate's
/// documentation).
pub fn windows(exclude_pid: u32) -> Result<Vec<WindowInfo>> {
    permission_gate()?;
    guarded("listing the windows", || {
        let all = xcap::Window::all().map_err(|e| xcap_error("listing the windows", e))?;
        // Monitor rectangles in window coordinates, for the off-screen test (none known: no window is dropped).
        let screens: Vec<(i64, i64, i64, i64)> = xcap::Monitor::all()
            .map(|ms| ms.iter().filter_map(|m| monitor_rect(m, to_window_factor(m))).collect())
            .unwrap_or_default();
        let on_screen = OnScreen::open();
        let mut out = Vec::new();
        for w in &all {
            if let Some(info) = window_info(w, exclude_pid, &screens, &on_screen) {
                out.push(info);
            }
        }
        Ok(out)
    })
}

/// The pixels of window `id` (from [`windows`]), without the window manager's frame. On X11 without a compositor
/// the parts another window covers are not kept (they come back black on Xvfb): [`crop`] a [`screen_at`] instead to
/// show what the user sees. Blocks (see the crate's documentation).
pub fn window_image(id: u32) -> Result<image::RgbaImage> {
    permission_gate()?;
    guarded("capturing the window", || {
        let all = xcap::Window::all().map_err(|e| xcap_error("listing the windows", e))?;
        let Some(w) = all.iter().find(|w| w.id().ok() == Some(id)) else {
            return Err(CaptureError::NotFound(format!("no window with id {id}")));
        };
        if w.is_minimized().unwrap_or(false) || OnScreen::open().shown(id) == Some(false) {
            return Err(CaptureError::Failed(format!(
                "window {id} is not on the screen (minimized, or on another workspace)"
            )));
        }
        let image = w.capture_image().map_err(|e| xcap_error("capturing the window", e))?;
        if image.width() == 0 || image.height() == 0 {
            return Err(CaptureError::Failed(format!("window {id} gave an empty picture")));
        }
        Ok(image)
    })
}

/// The window with the keyboard focus, if [`windows`]`(exclude_pid)` lists it (so `None` while our own window has
/// the focus). Blocks (see the crate's documentation).
pub fn focused_window(exclude_pid: u32) -> Option<WindowInfo> {
    windows(exclude_pid).ok()?.into_iter().find(|w| w.focused)
}

/// The id of the window with the keyboard focus now, for a later [`windows`] lookup: taken when a shortcut is pressed,
/// before our panel takes the focus, so it must be quick. X11 (and XWayland): the window manager's
/// `_NET_ACTIVE_WINDOW`, two round trips; elsewhere [`focused_window`]`(0)`. Blocks briefly.
pub fn active_window_id() -> Option<u32> {
    #[cfg(target_os = "linux")]
    if let Some(screen) = x11::Screen::open() {
        return screen.active_window();
    }
    focused_window(0).map(|w| w.id)
}

fn window_info(
    w: &xcap::Window,
    exclude_pid: u32,
    screens: &[(i64, i64, i64, i64)],
    on_screen: &OnScreen,
) -> Option<WindowInfo> {
    let id = w.id().ok()?;
    let pid = w.pid().unwrap_or(0);
    if exclude_pid != 0 && pid == exclude_pid {
        return None;
    }
    if w.is_minimized().unwrap_or(false) || on_screen.shown(id) == Some(false) {
        return None;
    }
    let title = w.title().ok()?.trim().to_string();
    if title.is_empty() {
        return None;
    }
    let (x, y, width, height) = (w.x().ok()?, w.y().ok()?, w.width().ok()?, w.height().ok()?);
    if width < MIN_WINDOW_SIDE || height < MIN_WINDOW_SIDE {
        return None;
    }
    if !on_a_monitor(screens, (i64::from(x), i64::from(y), i64::from(width), i64::from(height))) {
        return None;
    }
    let app_name = w.app_name().unwrap_or_default();
    let focused = w.is_focused().unwrap_or(false);
    Some(WindowInfo { id, pid, title, app_name, x, y, width, height, focused })
}

/// Whether a window is shown now, where the system tells more than xcap does (X11: mapped with all its ancestors;
/// a window on another workspace is not). `None`: unknown, keep it.
struct OnScreen {
    #[cfg(target_os = "linux")]
    x: Option<x11::Screen>,
}

impl OnScreen {
    fn open() -> OnScreen {
        OnScreen {
            #[cfg(target_os = "linux")]
            x: x11::Screen::open(),
        }
    }

    #[cfg(target_os = "linux")]
    fn shown(&self, id: u32) -> Option<bool> {
        self.x.as_ref()?.viewable(id)
    }

    #[cfg(not(target_os = "linux"))]
    fn shown(&self, _id: u32) -> Option<bool> {
        None
    }
}

/// A monitor's rectangle (x, y, width, height) in xcap's units multiplied by `factor`; `None` when unreadable.
fn monitor_rect(m: &xcap::Monitor, factor: f32) -> Option<(i64, i64, i64, i64)> {
    let (x, y, w, h) = (m.x().ok()?, m.y().ok()?, m.width().ok()?, m.height().ok()?);
    let side = |v: u32| (f64::from(v) * f64::from(factor)).round() as i64;
    Some((i64::from(scaled(x, factor)), i64::from(scaled(y, factor)), side(w), side(h)))
}

/// Whether a window's rectangle shows on any of the monitors (all of them unknown: yes). Windows parks minimized
/// windows at (-32000, -32000); a window moved past an edge or onto an unseen viewport is no use to show either.
fn on_a_monitor(screens: &[(i64, i64, i64, i64)], window: (i64, i64, i64, i64)) -> bool {
    screens.is_empty() || screens.iter().any(|s| overlaps(*s, window))
}

fn contains((rx, ry, rw, rh): (i64, i64, i64, i64), x: i32, y: i32) -> bool {
    let (x, y) = (i64::from(x), i64::from(y));
    x >= rx && x < rx + rw && y >= ry && y < ry + rh
}

fn overlaps(a: (i64, i64, i64, i64), b: (i64, i64, i64, i64)) -> bool {
    a.0 < b.0 + b.2 && b.0 < a.0 + a.2 && a.1 < b.1 + b.3 && b.1 < a.1 + a.3
}

fn scaled(v: i32, factor: f32) -> i32 {
    let r = (f64::from(v) * f64::from(factor)).round();
    r.clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32
}

fn sane_scale(s: f32) -> f32 {
    if s.is_finite() && s > 0.0 { s } else { 1.0 }
}

/// What turns xcap's monitor coordinates into physical pixels: xcap divides X11's by the Xft.dpi scale and gives
/// macOS's in points; Windows' are already physical.
fn to_physical_factor(m: &xcap::Monitor) -> f32 {
    if cfg!(target_os = "windows") { 1.0 } else { sane_scale(m.scale_factor().unwrap_or(1.0)) }
}

/// What turns xcap's monitor coordinates into its window coordinates: on X11 windows are in physical pixels while
/// monitors are divided by the scale; on macOS both are points, on Windows both physical.
fn to_window_factor(m: &xcap::Monitor) -> f32 {
    if cfg!(target_os = "linux") { sane_scale(m.scale_factor().unwrap_or(1.0)) } else { 1.0 }
}

/// On macOS a capture without the screen-recording permission does not fail: it shows only the desktop and our own
/// windows. Refuse it up front instead.
fn permission_gate() -> Result<()> {
    match permission::check() {
        permission::Access::Denied => Err(CaptureError::Denied(
            "the screen-recording permission is not granted (System Settings → Privacy & Security → Screen \
             Recording)"
                .into(),
        )),
        permission::Access::Granted | permission::Access::Unknown => Ok(()),
    }
}

/// Runs an xcap call, turning a panic inside it into [`CaptureError::Failed`].
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(CaptureError::Failed(format!("{what}: the capture library panicked: {msg}")))
        }
    }
}

/// An xcap error as a [`CaptureError`], with what we were doing.
fn xcap_error(what: &str, e: xcap::XCapError) -> CaptureError {
    if let Some(denied) = denied(&e) {
        return CaptureError::Denied(denied);
    }
    match e {
        xcap::XCapError::NotSupported => CaptureError::Failed(format!("{what}: not supported on this system")),
        xcap::XCapError::InvalidCaptureRegion(r) => CaptureError::Failed(format!("{what}: invalid region {r}")),
        xcap::XCapError::Error(m) if m.contains("_NET_CLIENT_LIST_STACKING") => CaptureError::Failed(format!(
            "{what}: no window manager publishes the list of windows (_NET_CLIENT_LIST_STACKING)"
        )),
        e => CaptureError::Failed(format!("{what}: {e}")),
    }
}

/// Whether an xcap error means the system refused, and why.
#[cfg(target_os = "linux")]
fn denied(e: &xcap::XCapError) -> Option<String> {
    // On Wayland xcap tries GNOME Shell's screenshot interface, then the screenshot portal, then wlroots'
    // screencopy, and reports only the last failure. A compositor without screencopy (GNOME, KDE) thus ends in
    // ProtocolNotFound exactly when the first two gave nothing: the portal's request was refused or cancelled (or no
    // portal runs).
    match e {
        xcap::XCapError::LibwayshotError(libwayshot_xcap::Error::ProtocolNotFound(_)) => Some(
            "the desktop's screenshot portal refused or was cancelled (or none is running), and this Wayland \
             compositor offers no other way to read the screen"
                .into(),
        ),
        _ => None,
    }
}

#[cfg(target_os = "macos")]
fn denied(_e: &xcap::XCapError) -> Option<String> {
    // A failure without the permission is the permission's doing (it can be withdrawn while the app runs).
    (permission::check() == permission::Access::Denied)
        .then(|| "the screen-recording permission is not granted".to_string())
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn denied(_e: &xcap::XCapError) -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_helpers() {
        let r = (0, 0, 1920, 1080);
        assert!(contains(r, 0, 0));
        assert!(contains(r, 1919, 1079));
        assert!(!contains(r, 1920, 0));
        assert!(!contains(r, -1, 5));
        assert!(overlaps(r, (1900, 1000, 100, 100)));
        assert!(!overlaps(r, (1920, 0, 100, 100)));
        assert!(!overlaps(r, (-400, 0, 400, 100)));
        let two = [(0, 0, 1920, 1080), (1920, 0, 2560, 1440)];
        assert!(on_a_monitor(&two, (100, 100, 400, 300)));
        assert!(on_a_monitor(&two, (1800, 1200, 400, 300)), "on the second monitor, below the first");
        assert!(on_a_monitor(&two, (-350, -250, 400, 300)), "a corner on screen");
        assert!(!on_a_monitor(&two, (-32000, -32000, 160, 28)), "Windows' minimized position");
        assert!(!on_a_monitor(&two, (100, 1080, 400, 300)), "below the first monitor, left of the second");
        assert!(!on_a_monitor(&two, (4480, 0, 400, 300)), "right of everything");
        assert!(on_a_monitor(&[], (-32000, -32000, 160, 28)), "no monitor known: keep it");
        assert_eq!(scaled(1280, 1.5), 1920);
        assert_eq!(scaled(i32::MAX, 2.0), i32::MAX);
        assert_eq!(sane_scale(f32::NAN), 1.0);
        assert_eq!(sane_scale(0.0), 1.0);
        assert_eq!(sane_scale(2.0), 2.0);
    }

    #[test]
    fn a_panic_becomes_failed() {
        let r: Result<()> = guarded("testing", || panic!("boom"));
        match r {
            Err(CaptureError::Failed(m)) => assert!(m.contains("boom") && m.contains("testing"), "{m}"),
            other => panic!("expected Failed, got {other:?}"),
        }
    }
}
