//! The tray icon: status (connected/offline), Show, Quit. Fails soft (a log line) where no tray host exists.

use tauri::menu::{Menu, MenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager};

use crate::state::AppState;

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
        let status = MenuItem::with_id(app, "status", "Hermes — offline", false, None::<&str>)?;
        let show = MenuItem::with_id(app, "show", "Show Hermes", true, None::<&str>)?;
        let quit = MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?;
        let menu = Menu::with_items(app, &[&status, &show, &quit])?;
        let mut b =
            TrayIconBuilder::with_id(TRAY_ID).tooltip("Hermes — offline").menu(&menu).on_menu_event(|app, ev| match ev
                .id()
                .as_ref()
            {
                "show" => crate::show_main(app),
                "quit" => app.exit(0),
                _ => {}
            });
        if let Some(icon) = app.default_window_icon() {
            b = b.icon(icon.clone());
        }
        b.build(app)?;
        app.manage(StatusItem(status));
        // an engine may have connected before the icon existed
        refresh(app);
        Ok(())
    };
    if let Err(e) = build() {
        tracing::warn!("no tray icon (no system tray here?): {e}");
    }
}

struct StatusItem(MenuItem<tauri::Wry>);

/// Update the tray's status line from the engines' state.
pub fn refresh(app: &AppHandle) {
    let online = app.try_state::<AppState>().is_some_and(|s| s.any_online());
    let text = if online { "Hermes — connected" } else { "Hermes — offline" };
    if let Some(item) = app.try_state::<StatusItem>() {
        let _ = item.0.set_text(text);
    }
    if let Some(tray) = app.tray_by_id(TRAY_ID) {
        let _ = tray.set_tooltip(Some(text));
    }
}
