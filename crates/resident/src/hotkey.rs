//! The Quick Ask and capture shortcuts while the window process is gone: the keys saved in the app's settings
//! (`quickAskShortcut`, `captureShortcut`), grabbed on X11 through global-hotkey (x11rb: no GTK, the parser the window
//! process's shortcut plugin uses, so the same string means the same keys). A press starts the window process with the
//! panel alone (on a region capture for the capture keys); it takes the connections over (and ends this process) as
//! any window process does.

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

/// Grabs the Quick Ask keys and the capture keys (none saved: nothing to grab). Every failure (a shortcut that does
/// not parse, no X11 display, keys another app holds) is logged and leaves the resident without that shortcut.
pub fn start(quick_ask: Option<&str>, capture: Option<&str>, launcher: Arc<dyn Launcher>) -> Option<QuickAskKey> {
    // (keys, opens on a capture)
    let mut keys: Vec<(HotKey, String, bool)> = Vec::new();
    for (s, on_capture) in [(quick_ask, false), (capture, true)] {
        let Some(s) = s else { continue };
        match s.parse::<HotKey>() {
            Ok(k) if keys.iter().any(|(other, _, _)| other.id() == k.id()) => {
                tracing::warn!("the shortcut \"{s}\" is already the Quick Ask keys: not grabbed twice");
            }
            Ok(k) => keys.push((k, s.to_string(), on_capture)),
            Err(e) => tracing::warn!("the shortcut \"{s}\" does not parse: {e}"),
        }
    }
    if keys.is_empty() {
        return None;
    }
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
    let to_grab: Vec<(HotKey, String, &str)> =
        keys.iter().map(|(k, s, c)| (*k, s.clone(), if *c { "capture" } else { "Quick Ask" })).collect();
    let spawned = std::thread::Builder::new().name("hermes-quick-ask-grab".into()).spawn(move || {
        let t = Instant::now();
        let mut left = to_grab;
        while !left.is_empty() {
            left.retain(|(key, name, what)| match grabbing.register(*key) {
                Ok(()) => {
                    tracing::info!(shortcut = %name, "{what} shortcut grabbed");
                    false
                }
                Err(e) if t.elapsed() > GRAB_FOR => {
                    tracing::warn!("cannot grab the {what} shortcut \"{name}\": {e}");
                    false
                }
                Err(_) => true,
            });
            if !left.is_empty() {
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    });
    if let Err(e) = spawned {
        tracing::warn!("no thread to grab the shortcuts: {e}");
        return None;
    }
    let ids: Vec<(u32, bool)> = keys.iter().map(|(k, _, c)| (k.id(), *c)).collect();
    let last = Mutex::new(None::<Instant>);
    GlobalHotKeyEvent::set_event_handler(Some(move |ev: GlobalHotKeyEvent| {
        let Some(&(_, on_capture)) = ids.iter().find(|(id, _)| *id == ev.id()) else { return };
        if ev.state() != HotKeyState::Pressed {
            return;
        }
        let Ok(mut last) = last.lock() else { return };
        if last.is_some_and(|t| t.elapsed() < AGAIN_AFTER) {
            return;
        }
        *last = Some(Instant::now());
        tracing::info!(capture = on_capture, "Quick Ask shortcut pressed");
        launcher.quick_ask(on_capture);
    }));
    Some(QuickAskKey { _manager: manager })
}
