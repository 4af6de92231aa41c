//! Quick Ask: a compact always-on-top panel, summoned from any app by a global shortcut (shortcuts.rs), that talks to
//! one agent without the main window. It is the same UI as the main window in a smaller frame (`window.__HERMES_VIEW__
//! = "quick"`): its page subscribes to the agents' connections like the main window's (the hub keeps one page per
//! window and agent), so replies, cards and errors stream into it and the exchange is stored like any other.
//!
//! Shown: centred on the monitor under the pointer, focused. Hidden (Esc, the shortcut again, "Open in Hermes"): its
//! webview stays for [`crate::window::hidden_destroy_after`] so the next press shows it at once, then it is destroyed.
//! While the main window is on screen the panel is kept built and hidden ([`prepare_soon`]): a press then shows a page
//! that is already there (the 100 ms), at the price of a web process for as long as the main window is open;
//! it goes with the main window's webview, so nothing of it is left while the app waits in the tray.
//! While it is on screen the main window's hidden timer does not hand the connections to the resident process; once
//! it hides and no window is on screen, that timer starts again (window.rs).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tauri::{AppHandle, Manager, WebviewUrl, WebviewWindow, WebviewWindowBuilder};

pub const QUICK: &str = "quick";

/// The command-line flag that opens the panel: a start from the resident process's shortcut, or a second start.
pub use hermes_app::resident::QUICK_FLAG;

/// The panel's size (logical pixels).
const SIZE: (f64, f64) = (640.0, 420.0);

/// A panel whose page has not rendered yet (prepared a moment ago; built for a press off Linux) is shown when its page
/// has rendered, or after this at the latest.
const FIRST_PAINT_AT_MOST: Duration = Duration::from_millis(1500);

/// The page's background (`--bg` in ui/src/app.css, light and dark): the colour of a panel on screen before its page.
#[cfg(target_os = "linux")]
const PAGE_LIGHT: tauri::window::Color = tauri::window::Color(0xf6, 0xf7, 0xf9, 0xff);
#[cfg(target_os = "linux")]
const PAGE_DARK: tauri::window::Color = tauri::window::Color(0x12, 0x14, 0x19, 0xff);

/// How long after the main window's page starts the panel is prepared: once the launch's own work is done.
const PREPARE_AFTER: Duration = Duration::from_secs(2);

/// Managed state of the panel's life.
#[derive(Default)]
pub struct QuickPanel {
    /// Bumped at every show and hide, so a destroy timer of an older hide does nothing.
    generation: AtomicU64,
    /// A panel built for a press waits for its page's first render before it goes on screen.
    awaiting_page: AtomicBool,
    /// The page of the panel built last has rendered (it may go on screen at once).
    rendered: AtomicBool,
    /// The capture shortcut was pressed: the panel's page starts a region capture when it next asks
    /// ([`quick_take_capture`]: at its start and whenever it gains the focus).
    capture_pending: AtomicBool,
    /// The window that had the keyboard focus when a shortcut summoned the panel (its id, looked up at a capture:
    /// capture.rs), kept only while the app's "name the window" setting is on.
    focused_before: std::sync::Mutex<Option<u32>>,
}

impl QuickPanel {
    /// The window [`remember_focused`] kept.
    pub fn focused_before(&self) -> Option<u32> {
        self.focused_before.lock().ok().and_then(|g| *g)
    }
}

/// Whether a capture's message names the window in focus (the app's setting, off by default).
pub fn names_window(app: &AppHandle) -> bool {
    app.try_state::<crate::settings::SettingsState>().is_some_and(|s| s.get().capture_names_window)
}

/// A shortcut summoned the panel: the window that has the keyboard focus now (another app's, before the panel takes
/// it) is kept for a capture's message — only its id, and only with the setting on. Quick: two X round trips.
pub fn remember_focused(app: &AppHandle) {
    let Some(st) = app.try_state::<QuickPanel>() else { return };
    let id = if names_window(app) { hermes_capture::active_window_id() } else { None };
    if let Ok(mut g) = st.focused_before.lock() {
        *g = id;
    }
}

/// The panel, when it exists and is on screen.
fn visible(app: &AppHandle) -> Option<WebviewWindow> {
    app.get_webview_window(QUICK).filter(|w| w.is_visible().unwrap_or(false))
}

/// Whether the panel is on screen.
pub fn is_visible(app: &AppHandle) -> bool {
    visible(app).is_some()
}

/// The window whose page records and reads aloud now: the panel while it is on screen, else the main window.
pub fn recording_view(app: &AppHandle) -> &'static str {
    if is_visible(app) { QUICK } else { crate::window::MAIN }
}

/// The shortcut was pressed (on global-hotkey's thread): toggle on the main thread.
pub fn toggle_soon(app: &AppHandle) {
    remember_focused(app);
    let handle = app.clone();
    let _ = app.run_on_main_thread(move || toggle(&handle));
}

/// Tells the panel's page that the capture shortcut was pressed while it is on screen (it then asks
/// [`quick_take_capture`]).
#[derive(Debug, Clone, serde::Serialize, specta::Type, tauri_specta::Event)]
pub struct CaptureRequested {}

/// The capture shortcut was pressed (on global-hotkey's thread), or a start asked for it (`--capture`): the panel
/// opens on a region capture. Its page asks at its start and whenever it gains the focus, and is told when it is on
/// screen already.
pub fn capture_soon(app: &AppHandle) {
    remember_focused(app);
    let handle = app.clone();
    let _ = app.run_on_main_thread(move || {
        let Some(st) = handle.try_state::<QuickPanel>() else { return };
        st.capture_pending.store(true, Ordering::SeqCst);
        tracing::info!("capture shortcut: the panel opens on a region capture");
        if visible(&handle).is_some() {
            use tauri_specta::Event as _;
            let _ = CaptureRequested {}.emit_to(&handle, QUICK);
        } else {
            show(&handle);
        }
    });
}

/// The panel's page asks whether the capture shortcut was pressed since it last asked (once: the answer is taken).
#[tauri::command]
#[specta::specta]
pub fn quick_take_capture(app: AppHandle, webview: tauri::Webview) -> bool {
    webview.label() == QUICK
        && app.try_state::<QuickPanel>().is_some_and(|s| s.capture_pending.swap(false, Ordering::SeqCst))
}

/// On screen and focused: hide it. Otherwise: show it (built if needed), focused.
pub fn toggle(app: &AppHandle) {
    match visible(app) {
        Some(w) if w.is_focused().unwrap_or(false) => hide(app),
        _ => show(app),
    }
}

/// Builds the panel: the app's page in its Quick Ask view, with the start-up snapshot, the host facts and the same
/// navigation guards as the main window. Hidden until [`show`] has placed it.
fn build(app: &AppHandle) -> tauri::Result<WebviewWindow> {
    if let Some(st) = app.try_state::<QuickPanel>() {
        st.rendered.store(false, Ordering::SeqCst);
    }
    let mut b = WebviewWindowBuilder::new(app, QUICK, WebviewUrl::App("index.html".into()));
    // placed when built: a position set on a window not yet mapped is not kept (X11 without a window manager)
    b = match centre_under_pointer(app) {
        Some(p) => b.position(p.x, p.y),
        None => b.center(),
    };
    b = crate::window::app_page(app, b)
        .title("Hermes — Quick Ask")
        .inner_size(SIZE.0, SIZE.1)
        .min_inner_size(480.0, 320.0)
        .decorations(false)
        .always_on_top(true)
        .skip_taskbar(true)
        .visible(false)
        .focused(true)
        .initialization_script("window.__HERMES_VIEW__ = 'quick';");
    let w = b.build()?;
    #[cfg(target_os = "linux")]
    crate::caret::watch(&w);
    Ok(w)
}

/// Where the panel goes: centred on the monitor under the pointer (the primary one when the pointer is unknown), in
/// logical pixels.
fn centre_under_pointer(app: &AppHandle) -> Option<tauri::LogicalPosition<f64>> {
    let m = app
        .cursor_position()
        .ok()
        .and_then(|p| app.monitor_from_point(p.x, p.y).ok().flatten())
        .or_else(|| app.primary_monitor().ok().flatten())?;
    let scale = m.scale_factor();
    let (pos, size) = (m.position().to_logical::<f64>(scale), m.size().to_logical::<f64>(scale));
    Some(tauri::LogicalPosition::new(
        pos.x + ((size.width - SIZE.0) / 2.0).max(0.0),
        pos.y + ((size.height - SIZE.1) / 2.0).max(0.0),
    ))
}

/// Shows the panel on the monitor under the pointer, focused on its input. A panel that is gone is built now and, on
/// Linux, goes on screen at once, holding the keys typed until its page is ready (typeahead.rs); one whose page has
/// not rendered yet otherwise (built now elsewhere, or prepared a moment ago) goes on screen once it has
/// ([`quick_page_ready`]; [`FIRST_PAINT_AT_MOST`] at the latest).
pub fn show(app: &AppHandle) {
    let Some(st) = app.try_state::<QuickPanel>() else { return };
    st.generation.fetch_add(1, Ordering::SeqCst);
    crate::window::hold_resident_timer(app);
    if app.get_webview_window(QUICK).is_none() {
        let w = match build(app) {
            Ok(w) => w,
            Err(e) => {
                tracing::warn!("cannot build the Quick Ask panel: {e}");
                return;
            }
        };
        tracing::info!(since_start_ms = crate::since_start_ms(), "Quick Ask panel built");
        // Linux: on screen now, in the page's background colour, holding the keys typed until the page is ready
        // (typeahead.rs) — a page loading in a new web process takes ~200 ms more here
        #[cfg(target_os = "linux")]
        {
            crate::typeahead::hold_keys(app, &w);
            let dark = w.theme().is_ok_and(|t| t == tauri::Theme::Dark);
            let _ = w.set_background_color(Some(if dark { PAGE_DARK } else { PAGE_LIGHT }));
            put_on_screen(app);
            return;
        }
        #[cfg(not(target_os = "linux"))]
        let _ = w;
    } else if st.rendered.load(Ordering::SeqCst) {
        put_on_screen(app);
        return;
    }
    if st.awaiting_page.swap(true, Ordering::SeqCst) {
        return; // asked already: shown when its page has rendered
    }
    crate::window::on_main_after(app, FIRST_PAINT_AT_MOST, |handle| {
        if handle.try_state::<QuickPanel>().is_some_and(|s| s.awaiting_page.swap(false, Ordering::SeqCst)) {
            tracing::warn!("the Quick Ask page did not say it rendered: shown anyway");
            put_on_screen(handle);
        }
    });
}

/// The main window's page has started (or the main window is back on screen): once the launch has settled, the panel
/// is built hidden if the main window is still on screen, a Quick Ask shortcut is set and there is no panel yet.
pub fn prepare_soon(app: &AppHandle) {
    crate::window::on_main_after(app, PREPARE_AFTER, prepare);
}

fn prepare(app: &AppHandle) {
    let shortcut = app
        .try_state::<crate::settings::SettingsState>()
        .map(|s| s.get())
        .is_none_or(|s| s.quick_ask_shortcut.is_some() || s.capture_shortcut.is_some());
    let quitting = app.try_state::<crate::window::MainWindow>().is_some_and(|s| s.quitting());
    if !shortcut || quitting || !crate::window::main_on_screen(app) || app.get_webview_window(QUICK).is_some() {
        return;
    }
    match build(app) {
        Ok(_) => tracing::info!(since_start_ms = crate::since_start_ms(), "Quick Ask panel prepared (hidden)"),
        Err(e) => tracing::warn!("cannot prepare the Quick Ask panel: {e}"),
    }
}

/// The main window's webview goes: so does a hidden panel's (the app waits in the tray with no web process).
pub fn drop_hidden(app: &AppHandle) {
    if let Some(w) = app.get_webview_window(QUICK).filter(|w| !w.is_visible().unwrap_or(true)) {
        tracing::info!("the hidden Quick Ask panel goes with the main window's webview");
        if let Some(st) = app.try_state::<QuickPanel>() {
            st.awaiting_page.store(false, Ordering::SeqCst);
        }
        let _ = w.destroy();
    }
}

fn put_on_screen(app: &AppHandle) {
    let Some(w) = app.get_webview_window(QUICK) else { return };
    if !w.is_visible().unwrap_or(false)
        && let Some(p) = centre_under_pointer(app)
    {
        let _ = w.set_position(p);
    }
    let _ = w.show();
    let _ = w.set_always_on_top(true);
    focus(&w);
    tracing::info!(since_start_ms = crate::since_start_ms(), "Quick Ask panel shown");
}

/// Back on screen where it is (a capture hid it for a moment), on top and focused. Any thread: the focus request
/// runs on the main thread (GTK's).
pub fn show_in_place(app: &AppHandle) {
    let handle = app.clone();
    let _ = app.run_on_main_thread(move || {
        let Some(w) = handle.get_webview_window(QUICK) else { return };
        let _ = w.show();
        let _ = w.set_always_on_top(true);
        focus(&w);
    });
}

fn focus(w: &WebviewWindow) {
    crate::window::focus_once_mapped(w);
}

/// Hides the panel; its webview is destroyed once it has stayed hidden for the main window's delay, unless the main
/// window is on screen then (it stays prepared for the next press; [`drop_hidden`] ends it with the main window's).
pub fn hide(app: &AppHandle) {
    let Some(w) = app.get_webview_window(QUICK) else { return };
    // what was typed into a panel closed before its page was ready is forgotten
    #[cfg(target_os = "linux")]
    let _ = app.run_on_main_thread(crate::typeahead::forget);
    if let Some(st) = app.try_state::<QuickPanel>() {
        st.awaiting_page.store(false, Ordering::SeqCst); // a panel still being built stays off screen
    }
    let _ = w.hide();
    tracing::info!("Quick Ask panel hidden");
    let generation = app.try_state::<QuickPanel>().map(|s| s.generation.fetch_add(1, Ordering::SeqCst) + 1);
    crate::window::release_resident_timer(app);
    let Some(generation) = generation else { return };
    let after = crate::window::hidden_destroy_after();
    crate::window::on_main_after(app, after, move |handle| {
        let still = handle.try_state::<QuickPanel>().is_some_and(|s| s.generation.load(Ordering::SeqCst) == generation);
        if let Some(w) = handle.get_webview_window(QUICK).filter(|_| still)
            && !w.is_visible().unwrap_or(true)
            && !crate::window::main_on_screen(handle)
        {
            tracing::info!("Quick Ask panel hidden for {}s: its webview is destroyed", after.as_secs());
            let _ = w.destroy();
        }
    });
}

/// The panel's page has rendered its first frame: a panel built for a press goes on screen now. `marks` is the page's
/// own timeline (its User Timing marks, ms after its navigation began: `boot=41 start=60 …`), logged for the bench's
/// breakdown of a press from the tray.
#[tauri::command]
#[specta::specta]
pub fn quick_page_ready(app: AppHandle, webview: tauri::Webview, marks: String) {
    if webview.label() != QUICK {
        return;
    }
    let marks = loggable_marks(&marks);
    tracing::info!(since_start_ms = crate::since_start_ms(), page = %marks, "Quick Ask page rendered");
    let Some(st) = app.try_state::<QuickPanel>() else { return };
    st.rendered.store(true, Ordering::SeqCst);
    if st.awaiting_page.swap(false, Ordering::SeqCst) {
        put_on_screen(&app);
    }
    // the keys typed while the page loaded go to it now, in order (typeahead.rs)
    #[cfg(target_os = "linux")]
    let _ = app.run_on_main_thread(|| {
        let n = crate::typeahead::release();
        if n > 0 {
            // (how many, never which: they are the user's message)
            tracing::info!(events = n, "key events held while the page loaded, put back for it");
        }
    });
}

/// A page's marks as the log takes them: `name=ms` words, nothing else, at most 400 characters.
pub fn loggable_marks(marks: &str) -> String {
    marks.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '=' | ' ' | '-')).take(400).collect()
}

/// Esc or the panel's close button.
#[tauri::command]
#[specta::specta]
pub fn quick_hide(app: AppHandle) {
    hide(&app);
}

/// "Open in Hermes": the main window (built again if it is gone) on the panel's conversation, the panel hidden. On the
/// main thread, not in the command (a window built inside a synchronous command deadlocks on Windows).
#[tauri::command]
#[specta::specta]
pub async fn quick_open_in_main(app: AppHandle, profile_id: String, conversation_id: String) {
    let handle = app.clone();
    let _ = app.run_on_main_thread(move || {
        hide(&handle);
        crate::window::open_conversation(&handle, &profile_id, &conversation_id);
    });
}
