//! The main window: built from tauri.conf.json's `main` entry with the start-up snapshot, the host facts and the
//! navigation guards (and built again, the same way, whenever it is gone), shown once its page has rendered, hidden to
//! the tray when the user closes it, and destroyed once it has stayed hidden for [`HIDDEN_DESTROY`] so that its WebKit
//! processes end while the app waits in the tray. The engines live in the shell, not in the page: nothing is lost
//! with the page.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tauri::{AppHandle, Manager, WebviewWindow, WebviewWindowBuilder, WindowEvent};
use tauri_specta::Event as _;

use crate::ipc::OpenConversation;
use crate::state::AppState;
use crate::{boot, security};

pub const MAIN: &str = "main";

/// A window built now goes on screen once its page has rendered, not before. On screen at once, GTK drew the webview
/// while WebKit's web process was still starting, and WebKitGTK's draw waited on this main thread for that process's
/// first frame while the starting process waited too (both in a futex wait, stacks taken with gdb in the bench) until
/// WebKit's ~500 ms timeout ran out: a Show from the tray took 0.8–1.5 s to its page instead of ~0.3 s in most runs.
/// This long at most, if the page never says it has rendered.
pub const SHOW_AT_MOST: Duration = Duration::from_millis(1500);

/// How long the main window stays hidden before its webview is destroyed.
pub const HIDDEN_DESTROY: Duration = Duration::from_secs(60);

/// The command-line flag of a start at login: the app begins in the tray, with no window.
pub const HIDDEN_FLAG: &str = "--hidden";

/// [`HIDDEN_DESTROY`], or — in debug builds only, for the end-to-end tests — `HERMES_HIDE_DESTROY_SECS`.
pub fn hidden_destroy_after() -> Duration {
    #[cfg(debug_assertions)]
    if let Some(s) = std::env::var("HERMES_HIDE_DESTROY_SECS").ok().and_then(|v| v.trim().parse::<u64>().ok()) {
        return Duration::from_secs(s);
    }
    HIDDEN_DESTROY
}

/// Managed state of the main window's life.
#[derive(Default)]
pub struct MainWindow {
    /// Bumped at every show and hide: a destroy timer started for an older hide does nothing.
    generation: AtomicU64,
    /// The page of the current window has asked for `app_info` (it listens for events from then on).
    page_ready: AtomicBool,
    /// The conversation a rebuilt page opens first (handed over once through `app_info`).
    pending_open: Mutex<Option<OpenConversation>>,
    /// The window was closed by the user or destroyed while hidden: the app keeps running in the tray.
    resident: AtomicBool,
    /// Quit was asked for (tray, menu, Ctrl+Q): a close request then really closes.
    quitting: AtomicBool,
    /// A window built a moment ago goes on screen when its page has rendered (`main_page_ready`).
    show_on_render: AtomicBool,
    /// The current window's page has said it rendered.
    rendered: AtomicBool,
}

impl MainWindow {
    /// The conversation the page should open, once (read by `app_info`); also marks the page as listening.
    pub fn take_pending_open(&self) -> Option<OpenConversation> {
        self.page_ready.store(true, Ordering::SeqCst);
        self.pending_open.lock().ok().and_then(|mut p| p.take())
    }

    /// The app keeps running with no window (closed to the tray, destroyed while hidden, or started hidden).
    pub fn is_resident(&self) -> bool {
        self.resident.load(Ordering::SeqCst)
    }

    pub fn set_resident(&self, on: bool) {
        self.resident.store(on, Ordering::SeqCst);
    }

    pub fn quitting(&self) -> bool {
        self.quitting.load(Ordering::SeqCst)
    }
}

fn state(app: &AppHandle) -> Option<tauri::State<'_, MainWindow>> {
    app.try_state::<MainWindow>()
}

/// Builds the main window from the config: the start-up snapshot read now (so a rebuilt page shows what the store
/// holds now), the host facts, the navigation and new-window guards, close-to-tray. Must run on the main thread.
pub fn build(app: &AppHandle) -> tauri::Result<WebviewWindow> {
    let w = build_hidden(app)?;
    show_when_rendered(app);
    Ok(w)
}

/// The main window built as [`build`] does, left off screen ([`show_when_rendered`] puts it there).
pub fn build_hidden(app: &AppHandle) -> tauri::Result<WebviewWindow> {
    let cfg = app
        .config()
        .app
        .windows
        .iter()
        .find(|w| w.label == MAIN)
        .cloned()
        .ok_or_else(|| tauri::Error::WindowNotFound)?;
    if let Some(st) = state(app) {
        st.page_ready.store(false, Ordering::SeqCst);
        st.rendered.store(false, Ordering::SeqCst);
    }
    let w = app_page(app, WebviewWindowBuilder::from_config(app, &cfg)?).build()?;
    #[cfg(target_os = "linux")]
    crate::caret::watch(&w);
    let handle = app.clone();
    w.on_window_event(move |ev| on_event(&handle, ev));
    Ok(w)
}

/// The main window (built, off screen) goes on screen once its page has rendered (`main_page_ready`), or after
/// [`SHOW_AT_MOST`]. A page that has rendered already is left to the show that follows ([`show_main`]).
pub fn show_when_rendered(app: &AppHandle) {
    let Some(st) = state(app) else { return };
    // (asked first, then checked: a page reporting its render at this moment either finds the ask or is seen here)
    st.show_on_render.store(true, Ordering::SeqCst);
    if st.rendered.load(Ordering::SeqCst) {
        st.show_on_render.store(false, Ordering::SeqCst);
        return;
    }
    on_main_after(app, SHOW_AT_MOST, |handle| {
        if state(handle).is_some_and(|s| s.show_on_render.swap(false, Ordering::SeqCst)) {
            tracing::warn!("the main page did not say it rendered: shown anyway");
            put_on_screen(handle);
        }
    });
}

/// The app's own page in a window being built (the main window, the Quick Ask panel): what the page asks for first,
/// handed over with the window (the start-up snapshot, boot.rs: main frame only), the host facts, and the navigation
/// and new-window guards.
pub fn app_page<'a>(
    app: &AppHandle,
    mut b: WebviewWindowBuilder<'a, tauri::Wry, AppHandle>,
) -> WebviewWindowBuilder<'a, tauri::Wry, AppHandle> {
    if let Some(script) =
        app.try_state::<AppState>().and_then(|s| boot::snapshot(&s)).and_then(|boot| boot::script(&boot))
    {
        b = b.initialization_script(script);
    }
    if let Some(script) = boot::host_script(&boot::Host::current()) {
        b = b.initialization_script(script);
    }
    b.on_navigation(|u| {
        let ok = security::navigation_allowed(u);
        if !ok {
            tracing::warn!(scheme = u.scheme(), "blocked a navigation away from the app");
        }
        ok
    })
    .on_new_window(security::deny_new_window)
}

/// Whether the main window exists and is on screen.
pub fn main_on_screen(app: &AppHandle) -> bool {
    app.get_webview_window(MAIN).is_some_and(|w| w.is_visible().unwrap_or(false))
}

/// Runs `f` on the main thread once `after` has passed (the hidden windows' timers).
pub fn on_main_after(app: &AppHandle, after: Duration, f: impl FnOnce(&AppHandle) + Send + 'static) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(after).await;
        let handle = app.clone();
        let _ = app.run_on_main_thread(move || f(&handle));
    });
}

fn on_event(app: &AppHandle, ev: &WindowEvent) {
    if let WindowEvent::CloseRequested { api, .. } = ev {
        let quitting = state(app).is_some_and(|s| s.quitting());
        if !quitting && close_to_tray(app) {
            api.prevent_close();
            hide(app);
        }
    }
}

/// Does closing the window keep the app in the tray? macOS: always (the app stays in the menu bar and dock);
/// elsewhere: the setting (on by default).
fn close_to_tray(app: &AppHandle) -> bool {
    if cfg!(target_os = "macos") {
        return true;
    }
    app.try_state::<crate::settings::SettingsState>().is_none_or(|s| s.get().close_to_tray)
}

/// Hides the main window to the tray (the first time, a notification says so and how to quit), and destroys its
/// webview once it has stayed hidden for [`hidden_destroy_after`].
pub fn hide(app: &AppHandle) {
    let Some(w) = app.get_webview_window(MAIN) else { return };
    let _ = w.hide();
    let Some(st) = state(app) else { return };
    st.set_resident(true);
    let generation = st.generation.fetch_add(1, Ordering::SeqCst) + 1;
    tracing::info!("main window hidden to the tray");
    first_hide_hint(app);
    after_hidden(app, generation);
}

/// A start at login: no window; after [`hidden_destroy_after`] the connections may move to the resident process.
pub fn started_hidden(app: &AppHandle) {
    let Some(st) = state(app) else { return };
    st.set_resident(true);
    let generation = st.generation.fetch_add(1, Ordering::SeqCst) + 1;
    after_hidden(app, generation);
}

/// The Quick Ask panel is on screen: a hidden main window's timer stops (the panel's page needs this process).
pub fn hold_resident_timer(app: &AppHandle) {
    if let Some(st) = state(app) {
        st.generation.fetch_add(1, Ordering::SeqCst);
    }
}

/// The Quick Ask panel went away: if the main window is not on screen either (hidden, destroyed, never built), its
/// hidden timer starts again.
pub fn release_resident_timer(app: &AppHandle) {
    let Some(st) = state(app) else { return };
    if main_on_screen(app) || !st.is_resident() {
        return;
    }
    let generation = st.generation.fetch_add(1, Ordering::SeqCst) + 1;
    after_hidden(app, generation);
}

/// A start that opens only the Quick Ask panel (the resident process's shortcut): no main window; the app counts as
/// in the tray, and the hidden timer starts once the panel goes away.
pub fn started_for_panel(app: &AppHandle) {
    if let Some(st) = state(app) {
        st.set_resident(true);
    }
}

/// Once the window has stayed hidden (or absent) for [`hidden_destroy_after`] since `generation`: its webview is
/// destroyed, and the agents' connections go to the resident process where it can take them (handover.rs). Not while
/// the Quick Ask panel is on screen (its hide starts the timer again).
fn after_hidden(app: &AppHandle, generation: u64) {
    let after = hidden_destroy_after();
    on_main_after(app, after, move |handle| {
        let still = state(handle).is_some_and(|s| s.generation.load(Ordering::SeqCst) == generation);
        if !still || crate::quick::is_visible(handle) {
            return;
        }
        if let Some(w) = handle.get_webview_window(MAIN) {
            if w.is_visible().unwrap_or(true) {
                return;
            }
            tracing::info!("main window hidden for {}s: its webview is destroyed", after.as_secs());
            if let Err(e) = w.destroy() {
                tracing::warn!("cannot destroy the hidden window: {e}");
            }
            crate::heap::trim_after_startup();
        }
        crate::quick::drop_hidden(handle);
        crate::handover::start(handle);
    });
}

/// The first time the window goes to the tray (Windows, Linux): one notification saying the app still runs and how
/// to quit. Remembered in the settings.
fn first_hide_hint(app: &AppHandle) {
    if cfg!(target_os = "macos") {
        return;
    }
    let Some(settings) = app.try_state::<crate::settings::SettingsState>() else { return };
    let mut s = settings.get();
    if s.tray_hint_shown {
        return;
    }
    s.tray_hint_shown = true;
    if let Err(e) = settings.set(s) {
        tracing::warn!("cannot remember the tray hint: {e}");
    }
    use tauri_plugin_notification::NotificationExt as _;
    let quit = if cfg!(target_os = "macos") { "⌘Q" } else { "Ctrl+Q" };
    let shown = app
        .notification()
        .builder()
        .title("Hermes is still running")
        .body(format!(
            "Your agents stay connected in the tray. To quit, choose Quit in the tray menu or press {quit} in the window."
        ))
        .show();
    if let Err(e) = shown {
        tracing::warn!("cannot show the tray hint: {e}");
    }
}

/// Shows the main window, building it again if it is gone (destroyed while hidden, or never built: a start at login);
/// a window built now goes on screen once its page has rendered ([`SHOW_AT_MOST`]). Returns whether it was built now.
pub fn show_main(app: &AppHandle) -> bool {
    if let Some(st) = state(app) {
        st.generation.fetch_add(1, Ordering::SeqCst);
    }
    if app.get_webview_window(MAIN).is_some() {
        if state(app).is_some_and(|s| s.show_on_render.load(Ordering::SeqCst)) {
            return false; // built a moment ago: on screen once its page has rendered
        }
        put_on_screen(app);
        crate::quick::prepare_soon(app); // (a page built now asks from its start, app_info)
        return false;
    }
    match build(app) {
        Ok(_) => {
            tracing::info!("main window built again");
            true
        }
        Err(e) => {
            tracing::warn!("cannot build the main window: {e}");
            false
        }
    }
}

/// The main window on screen, in front, focused.
fn put_on_screen(app: &AppHandle) {
    let Some(w) = app.get_webview_window(MAIN) else { return };
    let _ = w.unminimize();
    let _ = w.show();
    focus_once_mapped(&w);
}

/// A window just shown takes the keyboard focus, once it is mapped (a show is carried out by the event loop later;
/// X refuses the focus to a window not yet viewable, and with no window manager nothing gives it later), and on X11
/// with a timestamp asked of the server then: a global shortcut's key press went to another client (the grab), so
/// GTK's last event time predates the focus moving away when the window last hid, and X ignores a focus request older
/// than that (seen: the second Quick Ask press showed the panel without the focus).
#[cfg(target_os = "linux")]
pub fn focus_once_mapped(w: &WebviewWindow) {
    use gtk::glib;
    use gtk::prelude::{Cast, GtkWindowExt, WidgetExt};
    let Ok(gw) = w.gtk_window() else {
        let _ = w.set_focus();
        return;
    };
    let mut waited = 0;
    glib::timeout_add_local(Duration::from_millis(5), move || {
        waited += 1;
        let gdk_window = gw.window();
        if !gdk_window.as_ref().is_some_and(|g| g.is_viewable()) && waited < 200 {
            return glib::ControlFlow::Continue;
        }
        match gdk_window.and_then(|g| g.downcast::<gdkx11::X11Window>().ok()) {
            Some(x11) => gw.present_with_time(gdkx11::functions::x11_get_server_time(&x11)),
            None => gw.present(),
        }
        glib::ControlFlow::Break
    });
}

#[cfg(not(target_os = "linux"))]
pub fn focus_once_mapped(w: &WebviewWindow) {
    let _ = w.set_focus();
}

/// Shows the main window (built again if it is gone) on `conversation_id` of `profile_id`: a page that listens gets
/// [`OpenConversation`]; a page being built finds it in `app_info`.
pub fn open_conversation(app: &AppHandle, profile_id: &str, conversation_id: &str) {
    let open = OpenConversation { profile_id: profile_id.to_string(), conversation_id: conversation_id.to_string() };
    let listening =
        app.get_webview_window(MAIN).is_some() && state(app).is_some_and(|s| s.page_ready.load(Ordering::SeqCst));
    if listening {
        show_main(app);
        if let Err(e) = open.emit_to(app, MAIN) {
            tracing::warn!("cannot ask the page to open a conversation: {e}");
        }
    } else {
        if let Some(st) = state(app)
            && let Ok(mut p) = st.pending_open.lock()
        {
            *p = Some(open);
        }
        show_main(app);
    }
}

/// The main window's page says where it is: `interactive` false once its first render has the composer (or says why
/// there is none), true once the conversation's history is painted and its agent connected. A window built a moment
/// ago goes on screen at the first of the two. `marks` is the page's own timeline (its User Timing marks, ms after its
/// navigation began), logged for the bench's breakdown of a start.
#[tauri::command]
#[specta::specta]
pub fn main_page_ready(app: AppHandle, webview: tauri::Webview, interactive: bool, marks: String) {
    if webview.label() != MAIN {
        return;
    }
    let marks = crate::quick::loggable_marks(&marks);
    let stage = if interactive { "interactive" } else { "rendered" };
    tracing::info!(since_start_ms = crate::since_start_ms(), page = %marks, "main page {stage}");
    record_startup_files(&app);
    if let Some(st) = state(&app) {
        st.rendered.store(true, Ordering::SeqCst);
    }
    if state(&app).is_some_and(|s| s.show_on_render.swap(false, Ordering::SeqCst)) {
        let handle = app.clone();
        let _ = app.run_on_main_thread(move || put_on_screen(&handle));
    }
}

/// Once per process, a few seconds after the page first rendered (off the main thread; its history, if any, is painted
/// by then): the parts of files this process and its WebKit processes used, for the resident to read ahead at its next
/// Show (`hermes_app::readahead`).
fn record_startup_files(app: &AppHandle) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    if !cfg!(target_os = "linux") {
        return;
    }
    let Some(dir) = app.try_state::<AppState>().map(|s| s.data_dir.clone()) else { return };
    ONCE.call_once(|| {
        crate::later("hermes-startup-files", Duration::from_secs(3), move || {
            match hermes_app::readahead::record_own(&dir) {
                Ok(n) => {
                    tracing::info!(files = n.files, kb = n.bytes >> 10, "recorded the parts of files the start used")
                }
                Err(e) => tracing::warn!("cannot record the start's files: {e}"),
            }
        });
    });
}

/// Quits the app: the engines are shut down on the way out (lib.rs `RunEvent::Exit`).
pub fn quit(app: &AppHandle) {
    if let Some(st) = state(app) {
        st.quitting.store(true, Ordering::SeqCst);
    }
    app.exit(0);
}

/// Quit (Ctrl+Q / ⌘Q in the window): the app ends, its connections with it.
#[tauri::command]
#[specta::specta]
pub fn quit_app(app: AppHandle) {
    quit(&app);
}

/// Writes (on) or removes (off) the OS's start-at-login entry, which starts the app with [`HIDDEN_FLAG`]. Linux: the
/// XDG autostart file `~/.config/autostart/Hermes.desktop`.
pub fn set_launch_at_login(app: &AppHandle, on: bool) -> crate::error::AppResult<()> {
    use tauri_plugin_autostart::ManagerExt as _;
    let launcher = app.autolaunch();
    let done = if on { launcher.enable() } else { launcher.disable() };
    done.map_err(|e| {
        crate::error::AppError::new(crate::error::ErrorCode::IoError, format!("cannot change start at login: {e}"))
    })?;
    tracing::info!(on, "start at login changed");
    Ok(())
}
