//! The Quick Ask shortcut while the window process is gone: the keys saved in the app's settings
//! (`quickAskShortcut`), grabbed on X11 through global-hotkey (x11rb: no GTK, the parser the window process's shortcut
//! plugin uses, so the same string means the same keys). A press starts the window process with the panel alone; it
//! takes the connections over (and ends this process) as any window process does.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use global_hotkey::hotkey::HotKey;
use global_hotkey::{GlobalHotKeyEvent, GlobalHotKeyManager, HotKeyState};

use crate::Launcher;

/// Presses this soon after a launch are the same request: the window process is starting and will end this one.
const AGAIN_AFTER: Duration = Duration::from_secs(3);

/// How long the keys are asked for while another client (the window process that is ending) holds them.
const GRAB_FOR: Duration = Duration::from_secs(15);

/// The grab, for as long as this is kept.
pub struct QuickAskKey {
    _manager: Arc<GlobalHotKeyManager>,
}

/// Grabs `shortcut` (none saved: nothing to grab). Every failure (a shortcut that does not parse, no X11 display,
/// keys another app holds) is logged and leaves the resident without the shortcut.
pub fn start(shortcut: Option<&str>, launcher: Arc<dyn Launcher>) -> Option<QuickAskKey> {
    let s = shortcut?;
    let key: HotKey = match s.parse() {
        Ok(k) => k,
        Err(e) => {
            tracing::warn!("the Quick Ask shortcut \"{s}\" does not parse: {e}");
            return None;
        }
    };
    let manager = match GlobalHotKeyManager::new() {
        Ok(m) => m,
        Err(e) => {
            tracing::warn!("no global shortcuts here: {e}");
            return None;
        }
    };
    // The window process that handed over still holds the keys until its X connection closes (it exits once this
    // process has said it is ready): X grants a key grab to one client at a time, so ask again until it is free.
    let manager = Arc::new(manager);
    let grabbing = manager.clone();
    let name = s.to_string();
    let spawned = std::thread::Builder::new().name("hermes-quick-ask-grab".into()).spawn(move || {
        let t = Instant::now();
        loop {
            match grabbing.register(key) {
                Ok(()) => {
                    tracing::info!(shortcut = %name, "Quick Ask shortcut grabbed");
                    return;
                }
                Err(e) if t.elapsed() > GRAB_FOR => {
                    tracing::warn!("cannot grab the Quick Ask shortcut \"{name}\": {e}");
                    return;
                }
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        }
    });
    if let Err(e) = spawned {
        tracing::warn!("no thread to grab the Quick Ask shortcut: {e}");
        return None;
    }
    let id = key.id();
    let last = Mutex::new(None::<Instant>);
    GlobalHotKeyEvent::set_event_handler(Some(move |ev: GlobalHotKeyEvent| {
        if ev.id() != id || ev.state() != HotKeyState::Pressed {
            return;
        }
        let Ok(mut last) = last.lock() else { return };
        if last.is_some_and(|t| t.elapsed() < AGAIN_AFTER) {
            return;
        }
        *last = Some(Instant::now());
        tracing::info!("Quick Ask shortcut pressed");
        launcher.quick_ask();
    }));
    Some(QuickAskKey { _manager: manager })
}
