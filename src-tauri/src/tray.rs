//! The tray icon as a dashboard: one line per agent with its state, the total of unread messages on the icon (its
//! label/title), in the tooltip and on the dock/taskbar badge where the OS has one, the 5 most recent conversations
//! with unread messages (a click opens one), "Mute notifications for 1 hour", Show and Quit. Refreshed when an agent's
//! state changes, a reply/file/card arrives and a conversation is read. Fails soft (a log line) where no tray host
//! exists.

use tauri::menu::{IsMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Wry};

pub use hermes_app::dashboard::{Dashboard, RECENT};
use hermes_app::dashboard::{TrayAction, TrayItem};

const TRAY_ID: &str = "main-tray";

/// [`install`] on the main thread about a second from now.
pub fn install_soon(app: &AppHandle) {
    let app = app.clone();
    crate::later("hermes-tray-later", std::time::Duration::from_secs(1), move || {
        let handle = app.clone();
        if app.run_on_main_thread(move || install(&handle)).is_err() {
            tracing::warn!("no tray icon: the main thread is gone");
        }
    });
}

pub fn install(app: &AppHandle) {
    let build = || -> tauri::Result<()> {
        let menu = menu(app, &Dashboard::default())?;
        let mut b = TrayIconBuilder::with_id(TRAY_ID).tooltip("Hermes").menu(&menu).on_menu_event(|app, ev| {
            match hermes_app::dashboard::action(ev.id().as_ref()) {
                Some(TrayAction::Show) => crate::show_main(app),
                Some(TrayAction::Quit) => crate::window::quit(app),
                Some(TrayAction::Mute) => {
                    crate::notify::mute_for_an_hour(app);
                    refresh(app);
                }
                Some(TrayAction::Unmute) => {
                    if let Some(st) = app.try_state::<crate::settings::SettingsState>() {
                        let _ = st.set(crate::settings::AppSettings { mute_until: 0, ..st.get() });
                    }
                    refresh(app);
                }
                Some(TrayAction::StopListening) => crate::voice::stop_listening(app),
                Some(TrayAction::Open { profile_id, conversation_id }) => {
                    crate::window::open_conversation(app, &profile_id, &conversation_id);
                }
                None => {}
            }
        });
        if let Some(icon) = app.default_window_icon() {
            b = b.icon(icon.clone());
        }
        b.build(app)?;
        start_refresher(app);
        // an engine may have connected before the icon existed
        refresh(app);
        Ok(())
    };
    if let Err(e) = build() {
        tracing::warn!("no tray icon (no system tray here?): {e}");
    }
}

fn menu(app: &AppHandle, d: &Dashboard) -> tauri::Result<Menu<Wry>> {
    let mut items: Vec<Box<dyn IsMenuItem<Wry>>> = Vec::new();
    for item in d.items() {
        match item {
            TrayItem::Separator => items.push(Box::new(PredefinedMenuItem::separator(app)?)),
            TrayItem::Item { id, label, enabled } => {
                items.push(Box::new(MenuItem::with_id(app, id, label, enabled, None::<&str>)?))
            }
        }
    }
    let refs: Vec<&dyn IsMenuItem<Wry>> = items.iter().map(|i| i.as_ref()).collect();
    Menu::with_items(app, &refs)
}

/// The dashboard as it stands (the hub's states, the store's unread counts, the settings' mute).
pub fn dashboard(app: &AppHandle) -> Dashboard {
    let settings = app.try_state::<crate::settings::SettingsState>().map(|s| s.get()).unwrap_or_default();
    let muted = settings.mute_until > crate::hub::now_ms();
    let listening = app.try_state::<crate::voice::VoiceState>().and_then(|v| v.listening());
    Dashboard { agents: crate::hub::statuses(app), unread: crate::hub::unread(app), muted, listening }
}

/// The refreshes' queue: one thread applies them one after another, each reading the dashboard as it starts.
/// (Refreshed from the threads that asked, two could read the store in one order and set the menu in the other: a
/// conversation read in one window while another agent's message came in could leave "No unread" over an unread
/// message. A race seen in the code, not in a run; ordering them costs nothing.)
struct Refresher(std::sync::mpsc::Sender<()>);

/// Update the tray (menu, label, tooltip) and the badge from the agents' states and the unread counts, soon: a burst
/// of requests is one refresh that reads the state after the last of them.
pub fn refresh(app: &AppHandle) {
    if let Some(r) = app.try_state::<Refresher>() {
        let _ = r.0.send(());
    }
}

/// The thread that runs the refreshes (started with the icon; before it, there is nothing to refresh).
fn start_refresher(app: &AppHandle) {
    if app.try_state::<Refresher>().is_some() {
        return;
    }
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let handle = app.clone();
    let started = std::thread::Builder::new().name("hermes-tray".into()).spawn(move || {
        while rx.recv().is_ok() {
            while rx.try_recv().is_ok() {}
            apply(&handle);
        }
    });
    match started {
        Ok(_) => {
            app.manage(Refresher(tx));
        }
        Err(e) => tracing::warn!("the tray will not be refreshed: {e}"),
    }
}

fn apply(app: &AppHandle) {
    let Some(tray) = app.tray_by_id(TRAY_ID) else { return };
    let d = dashboard(app);
    match menu(app, &d) {
        Ok(m) => {
            let _ = tray.set_menu(Some(m));
        }
        Err(e) => tracing::warn!("cannot rebuild the tray menu: {e}"),
    }
    let _ = tray.set_title(d.title().as_deref());
    let _ = tray.set_tooltip(Some(d.tooltip()));
    set_icon(app, &tray, d.listening.is_some());
    badge(app, d.total_unread());
}

/// The icon with a red dot while the microphone is open, the plain one otherwise (set only when that changes: on
/// Linux each new icon is a PNG written for the tray host).
fn set_icon(app: &AppHandle, tray: &tauri::tray::TrayIcon, listening: bool) {
    static SHOWN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if SHOWN.swap(listening, std::sync::atomic::Ordering::Relaxed) == listening {
        return;
    }
    let Some(icon) = app.default_window_icon() else { return };
    let img = if listening {
        let mut rgba = icon.rgba().to_vec();
        hermes_app::dashboard::listening_icon(&mut rgba, icon.width(), icon.height());
        tauri::image::Image::new_owned(rgba, icon.width(), icon.height())
    } else {
        icon.clone().to_owned()
    };
    if let Err(e) = tray.set_icon(Some(img)) {
        tracing::warn!("cannot change the tray icon: {e}");
    }
}

/// The dock (macOS) or launcher (Linux, where the desktop supports it) badge; Windows has none without an overlay
/// icon, so the taskbar shows nothing there.
fn badge(app: &AppHandle, total: u32) {
    #[cfg(not(windows))]
    if let Some(w) = app.get_webview_window(crate::window::MAIN) {
        let _ = w.set_badge_count((total > 0).then_some(i64::from(total)));
    }
    #[cfg(windows)]
    let _ = (app, total);
}
