//! "Look at my screen" (Quick Ask): the whole screen under the pointer, one window picked from a list, or a region
//! drawn on a frozen screenshot, attached to the question as a PNG — and a picture already attached cut to a region.
//!
//! Nothing is captured except on the user's click (or the capture shortcut): every capture is a command the page
//! calls for a button. The window that asked (the panel) hides first and comes back where it was; what was captured
//! goes to the temporary folder and to that page only, as a token (grants.rs) for its composer, whose agent the user
//! picked. Pixels come from `hermes-capture` (xcap: X11, the Wayland portal, macOS, Windows); its calls block, so they
//! run on the blocking pool.
//!
//! A region: [`capture_region_begin`] hides the panel, captures the monitor under the pointer and keeps that frozen
//! picture, writes it for the page to show, and moves the hidden panel over that monitor; the page shows the picture
//! full-bleed and calls [`capture_region_show`] once it is loaded; the user drags a rectangle (or presses Esc) and
//! [`capture_region_end`] cuts it out of the frozen picture (never a second capture) and puts the panel back.

use std::sync::Mutex;
use std::time::Duration;

use hermes_capture::CaptureError;
use serde::Deserialize;
use serde::Serialize;
use specta::Type;
use tauri::{AppHandle, Manager, PhysicalPosition, PhysicalSize, State, WebviewWindow};

use crate::commands::blocking;
use crate::error::{AppError, AppResult, ErrorCode};
use crate::grants::{self, Purpose};
use crate::state::AppState;

/// How long a hidden panel is given to leave the screen, and the windows under it to be drawn again, before a capture.
const HIDE_SETTLE: Duration = Duration::from_millis(180);

/// A capture, attached by the page like a dropped file.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct Captured {
    /// The PNG's token (grants.rs).
    pub path: String,
    pub width: u32,
    pub height: u32,
}

/// A rectangle in a picture's own pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Type)]
pub struct Rect {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

impl From<Rect> for hermes_capture::Rect {
    fn from(r: Rect) -> Self {
        hermes_capture::Rect { x: r.x, y: r.y, width: r.width, height: r.height }
    }
}

/// A window the user may pick to capture.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct CaptureWindow {
    pub id: u32,
    pub title: String,
    pub app_name: String,
    pub width: u32,
    pub height: u32,
}

/// Whether the OS lets the app read the screen (macOS asks the user once; elsewhere always granted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub enum CaptureAccess {
    Granted,
    Denied,
    Unknown,
}

impl From<hermes_capture::permission::Access> for CaptureAccess {
    fn from(a: hermes_capture::permission::Access) -> Self {
        use hermes_capture::permission::Access as A;
        match a {
            A::Granted => CaptureAccess::Granted,
            A::Denied => CaptureAccess::Denied,
            A::Unknown => CaptureAccess::Unknown,
        }
    }
}

impl From<CaptureError> for AppError {
    fn from(e: CaptureError) -> Self {
        let code = match &e {
            CaptureError::Denied(_) => ErrorCode::CaptureDenied,
            CaptureError::NotFound(_) => ErrorCode::NotFound,
            CaptureError::Empty => ErrorCode::Empty,
            CaptureError::Failed(_) => ErrorCode::CaptureFailed,
        };
        AppError::new(code, e.to_string())
    }
}

/// The frozen screenshot of a region capture under way, and where the window that asked was.
struct Frozen {
    image: image::RgbaImage,
    label: String,
    restore: Option<(PhysicalPosition<i32>, PhysicalSize<u32>)>,
}

/// Managed state: at most one region capture at a time.
#[derive(Default)]
pub struct Capturing {
    frozen: Mutex<Option<Frozen>>,
}

/// The calling window, hidden and given time to leave the screen; with where it was, to put it back.
async fn hide_caller(app: &AppHandle, label: &str) -> Option<(WebviewWindow, PhysicalPosition<i32>)> {
    let w = app.get_webview_window(label).filter(|w| w.is_visible().unwrap_or(false))?;
    let at = w.outer_position().ok()?;
    let _ = w.hide();
    tokio::time::sleep(HIDE_SETTLE).await;
    Some((w, at))
}

/// Back on screen where it was, focused (the panel through quick.rs, so that it keeps the keyboard focus on X11).
fn show_again(app: &AppHandle, w: &WebviewWindow, at: PhysicalPosition<i32>) {
    let _ = w.set_position(at);
    if w.label() == crate::quick::QUICK {
        crate::quick::show_in_place(app);
    } else {
        let _ = w.show();
        let _ = w.set_focus();
    }
}

/// The pointer, in physical pixels of the virtual desktop (0,0 when the OS does not say).
fn pointer(app: &AppHandle) -> (i32, i32) {
    app.cursor_position().map(|p| (p.x.round() as i32, p.y.round() as i32)).unwrap_or((0, 0))
}

/// Writes the picture as a PNG named `<what>-<stamp>.png` in the temporary folder: its token and size.
fn keep(tmp: &std::path::Path, what: &str, stamp: &str, image: &image::RgbaImage) -> AppResult<Captured> {
    let png = hermes_capture::encode_png(image)?;
    let name = hermes_app::safe_name(&format!("{what}-{stamp}.png"));
    let path = hermes_client::files::write_new(tmp, &name, &png)?;
    Ok(Captured {
        path: grants::global().grant(&path, Purpose::Captured)?,
        width: image.width(),
        height: image.height(),
    })
}

/// Captures only for the Quick Ask panel, whose buttons and shortcut are the only ways a capture starts: another
/// window's page (the main window, an avatar page) asking is refused.
fn from_panel(webview: &tauri::Webview) -> AppResult<()> {
    if webview.label() == crate::quick::QUICK {
        Ok(())
    } else {
        Err(AppError::new(ErrorCode::CaptureDenied, "only the Quick Ask panel captures the screen"))
    }
}

/// `take` (blocking) with the asking panel hidden meanwhile, back where it was after; the picture kept as
/// `<what>-<stamp>.png`.
async fn take_hidden(
    app: &AppHandle,
    webview: &tauri::Webview,
    tmp: std::path::PathBuf,
    what: &'static str,
    stamp: String,
    take: impl FnOnce(i32, i32) -> hermes_capture::Result<image::RgbaImage> + Send + 'static,
) -> AppResult<Captured> {
    from_panel(webview)?;
    let hidden = hide_caller(app, webview.label()).await;
    let (x, y) = pointer(app);
    let image = blocking(move || take(x, y)).await;
    if let Some((w, at)) = &hidden {
        show_again(app, w, *at);
    }
    let image = image??;
    let done = blocking(move || keep(&tmp, what, &stamp, &image)).await??;
    tracing::info!(width = done.width, height = done.height, "{what} captured");
    Ok(done)
}

/// "Screen": the monitor under the pointer.
#[tauri::command]
#[specta::specta]
pub async fn capture_screen(
    app: AppHandle,
    webview: tauri::Webview,
    state: State<'_, AppState>,
    stamp: String,
) -> AppResult<Captured> {
    let tmp = state.tmp_dir.clone();
    take_hidden(&app, &webview, tmp, "screen", stamp, |x, y| hermes_capture::screen_at(x, y).map(|s| s.image)).await
}

/// The windows on screen that "Window" offers, front to back (none of this app's own).
#[tauri::command]
#[specta::specta]
pub async fn capture_windows(webview: tauri::Webview) -> AppResult<Vec<CaptureWindow>> {
    from_panel(&webview)?;
    let list = blocking(|| hermes_capture::windows(std::process::id())).await??;
    Ok(list
        .into_iter()
        .map(|w| CaptureWindow { id: w.id, title: w.title, app_name: w.app_name, width: w.width, height: w.height })
        .collect())
}

/// A window named in a capture's message: its title and app.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct NamedWindow {
    pub title: String,
    pub app_name: String,
}

/// The window a capture's message names: `picked` (a "Window" capture) or the one that had the keyboard focus when
/// the panel was summoned (quick.rs). `None` with the app's setting off (the default), when that window was this
/// app's own or is gone, or without a window list.
#[tauri::command]
#[specta::specta]
pub async fn capture_named_window(
    app: AppHandle,
    webview: tauri::Webview,
    picked: Option<u32>,
) -> AppResult<Option<NamedWindow>> {
    from_panel(&webview)?;
    if !crate::quick::names_window(&app) {
        return Ok(None);
    }
    let Some(id) = picked.or_else(|| app.try_state::<crate::quick::QuickPanel>().and_then(|s| s.focused_before()))
    else {
        return Ok(None);
    };
    let own = std::process::id();
    let found = blocking(move || hermes_capture::windows(own).ok()?.into_iter().find(|w| w.id == id)).await?;
    Ok(found.map(|w| NamedWindow { title: w.title, app_name: w.app_name }))
}

/// "Window": the picked window's pixels.
#[tauri::command]
#[specta::specta]
pub async fn capture_window(
    app: AppHandle,
    webview: tauri::Webview,
    state: State<'_, AppState>,
    id: u32,
    stamp: String,
) -> AppResult<Captured> {
    let tmp = state.tmp_dir.clone();
    take_hidden(&app, &webview, tmp, "window", stamp, move |_, _| hermes_capture::window_image(id)).await
}

/// "Region", first step: the monitor under the pointer, frozen; the page gets it (a fast PNG in the temporary folder)
/// to draw on, and the asking window, still hidden, now covers that monitor. A capture that fails puts it back.
#[tauri::command]
#[specta::specta]
pub async fn capture_region_begin(
    app: AppHandle,
    webview: tauri::Webview,
    state: State<'_, AppState>,
    capturing: State<'_, Capturing>,
    stamp: String,
) -> AppResult<Captured> {
    from_panel(&webview)?;
    let label = webview.label().to_string();
    let w = app.get_webview_window(&label).ok_or_else(|| AppError::not_found("the window"))?;
    // a region capture left unfinished (its page reloaded): where the window was then is where it goes back to, not
    // the whole monitor it covers now
    let stale = capturing.frozen.lock()?.take().filter(|f| f.label == label).and_then(|f| f.restore);
    let restore = stale.or_else(|| w.outer_position().ok().zip(w.inner_size().ok()));
    let hidden = hide_caller(&app, &label).await;
    let (x, y) = pointer(&app);
    let shot = match blocking(move || hermes_capture::screen_at(x, y)).await.and_then(|r| r.map_err(AppError::from)) {
        Ok(shot) => shot,
        Err(e) => {
            if let Some((w, at)) = &hidden {
                show_again(&app, w, *at);
            }
            return Err(e);
        }
    };
    let (mx, my) = (shot.x, shot.y);
    let tmp = state.tmp_dir.clone();
    let (shown, image) = blocking(move || keep(&tmp, "screen", &stamp, &shot.image).map(|c| (c, shot.image))).await??;
    let _ = w.set_position(PhysicalPosition::new(mx, my));
    let _ = w.set_size(PhysicalSize::new(image.width(), image.height()));
    *capturing.frozen.lock()? = Some(Frozen { image, label, restore });
    tracing::info!(width = shown.width, height = shown.height, "region capture: the screen is frozen");
    Ok(shown)
}

/// "Region", second step: the page shows the frozen picture over the whole monitor; the window goes on screen.
#[tauri::command]
#[specta::specta]
pub fn capture_region_show(app: AppHandle, webview: tauri::Webview) {
    if let Some(w) = app.get_webview_window(webview.label()) {
        let _ = w.show();
        let _ = w.set_always_on_top(true);
        if w.label() == crate::quick::QUICK {
            crate::quick::show_in_place(&app);
        } else {
            let _ = w.set_focus();
        }
    }
}

/// "Region", last step: the rectangle drawn (in the frozen picture's pixels), or `None` when the user gave up. The
/// window goes back where it was; the region is cut from the frozen picture.
#[tauri::command]
#[specta::specta]
pub async fn capture_region_end(
    app: AppHandle,
    state: State<'_, AppState>,
    capturing: State<'_, Capturing>,
    rect: Option<Rect>,
    stamp: String,
) -> AppResult<Option<Captured>> {
    let Some(frozen) = capturing.frozen.lock()?.take() else {
        return Err(AppError::new(ErrorCode::NotFound, "no region capture is under way"));
    };
    if let Some(w) = app.get_webview_window(&frozen.label) {
        let _ = w.hide();
        if let Some((at, size)) = frozen.restore {
            let _ = w.set_size(size);
            let _ = w.set_position(at);
        }
        if w.label() == crate::quick::QUICK {
            crate::quick::show_in_place(&app);
        } else {
            let _ = w.show();
        }
    }
    let Some(rect) = rect else { return Ok(None) };
    let tmp = state.tmp_dir.clone();
    let done = blocking(move || {
        let cut = hermes_capture::crop(&frozen.image, rect.into())?;
        keep(&tmp, "region", &stamp, &cut)
    })
    .await??;
    tracing::info!(width = done.width, height = done.height, "region captured");
    Ok(Some(done))
}

/// The biggest picture [`crop_image`] decodes (pixels); a screenshot of an 8K screen is 33 million.
const CROP_AT_MOST_PIXELS: u64 = 64 * 1024 * 1024;

/// An attached picture cut to `rect` (in its own pixels): the token of a PNG of the cut in the temporary folder.
#[tauri::command]
#[specta::specta]
pub async fn crop_image(state: State<'_, AppState>, token: String, rect: Rect, stamp: String) -> AppResult<Captured> {
    let tmp = state.tmp_dir.clone();
    blocking(move || crop_of(&tmp, &token, rect, &stamp)).await?
}

fn crop_of(tmp: &std::path::Path, token: &str, rect: Rect, stamp: &str) -> AppResult<Captured> {
    let g = grants::global().resolve(token)?;
    let not_image =
        |e: image::ImageError| AppError::new(ErrorCode::NotAnImage, format!("this picture cannot be read: {e}"));
    let mut reader = image::ImageReader::open(&g.path)?.with_guessed_format()?;
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(CROP_AT_MOST_PIXELS * 4);
    reader.limits(limits);
    let img = reader.decode().map_err(not_image)?.to_rgba8();
    let cut = hermes_capture::crop(&img, rect.into())?;
    let stem = std::path::Path::new(&g.name).file_stem().and_then(|s| s.to_str()).unwrap_or("picture").to_string();
    keep(tmp, &format!("{stem}-cut"), stamp, &cut)
}

/// Whether the OS lets the app read the screen: the page explains before the first capture when it is not granted.
#[tauri::command]
#[specta::specta]
pub fn capture_access() -> CaptureAccess {
    hermes_capture::permission::check().into()
}

/// Asks the OS for the screen (macOS shows its own prompt once; System Settings after that).
#[tauri::command]
#[specta::specta]
pub async fn capture_access_request() -> AppResult<CaptureAccess> {
    Ok(blocking(hermes_capture::permission::request).await?.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_granted_picture_is_cut_to_the_rectangle_into_a_new_png_and_anything_else_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("shot.png");
        let img = image::RgbaImage::from_fn(40, 30, |x, y| image::Rgba([x as u8 * 6, y as u8 * 8, 90, 255]));
        img.save(&src).unwrap();
        let before = std::fs::read(&src).unwrap();
        let token = grants::global().grant(&src, Purpose::Picked).unwrap();
        let rect = Rect { x: 10, y: 5, width: 20, height: 12 };
        let cut = crop_of(dir.path(), &token, rect, "t1").unwrap();
        assert_eq!((cut.width, cut.height), (20, 12));
        let g = grants::global().resolve(&cut.path).unwrap();
        assert_eq!(g.purpose, Purpose::Captured);
        assert_eq!(g.name, "shot-cut-t1.png");
        let got = image::open(&g.path).unwrap().to_rgba8();
        assert_eq!(got.get_pixel(0, 0), img.get_pixel(10, 5));
        assert_eq!(got.get_pixel(19, 11), img.get_pixel(29, 16));
        assert_eq!(std::fs::read(&src).unwrap(), before, "the original is left as it was");

        // a rectangle off the picture leaves nothing
        let off = Rect { x: 100, y: 100, width: 5, height: 5 };
        assert_eq!(crop_of(dir.path(), &token, off, "t2").unwrap_err().code, ErrorCode::Empty);
        // not a picture
        let txt = dir.path().join("notes.txt");
        std::fs::write(&txt, "hello").unwrap();
        let t = grants::global().grant(&txt, Purpose::Picked).unwrap();
        assert_eq!(crop_of(dir.path(), &t, rect, "t3").unwrap_err().code, ErrorCode::NotAnImage);
        // a path is no token
        let e = crop_of(dir.path(), &src.to_string_lossy(), rect, "t4").unwrap_err();
        assert_eq!(e.code, ErrorCode::FileNotGranted);
    }
}
