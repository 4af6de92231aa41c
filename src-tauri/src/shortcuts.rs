//! The app's three global shortcuts, registered together from their settings: push-to-talk (held: pressed and released
//! reach the page that records — the Quick Ask panel while it is on screen, else the main window), Quick Ask
//! (pressed: the panel opens, or hides when it is on screen and focused) and screen capture (pressed: the panel
//! opens on a region capture). No two may be the same keys: a save that would make them so is refused with
//! `shortcut_conflict`, and nothing is saved.

use std::sync::Mutex;

use tauri::{AppHandle, Manager};
use tauri_plugin_global_shortcut::{GlobalShortcutExt, Shortcut, ShortcutState};
use tauri_specta::Event as _;

use crate::error::{AppError, AppResult, ErrorCode};

/// Managed state: held while the shortcuts are (re-)registered, so that registrations happen one at a time and in the
/// order of the settings they read. Never taken on the main thread: registering waits for it.
#[derive(Default)]
pub struct Registering(Mutex<()>);

/// Check a shortcut string the way the plugin will parse it.
pub fn parse(s: &str) -> AppResult<Shortcut> {
    s.parse::<Shortcut>()
        .map_err(|e| AppError::new(ErrorCode::InvalidShortcut, format!("\"{s}\" is not a valid shortcut: {e}")))
}

/// Whether two shortcut strings name the same keys (`Ctrl+Alt+Space` and `control+alt+SPACE` do).
pub fn same(a: &str, b: &str) -> bool {
    match (parse(a), parse(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a.trim().eq_ignore_ascii_case(b.trim()),
    }
}

/// The shortcuts as saved (or about to be): push-to-talk, Quick Ask, screen capture; `None` is off.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keys {
    pub push_to_talk: Option<String>,
    pub quick_ask: Option<String>,
    pub capture: Option<String>,
}

impl Keys {
    /// Refuses keys in which two shortcuts are the same keys.
    pub fn check(&self) -> AppResult<()> {
        let named = [
            ("push-to-talk", self.push_to_talk.as_deref()),
            ("Quick Ask", self.quick_ask.as_deref()),
            ("screen capture", self.capture.as_deref()),
        ];
        for (i, (a_name, a)) in named.iter().enumerate() {
            for (b_name, b) in &named[i + 1..] {
                if let (Some(a), Some(b)) = (a, b)
                    && same(a, b)
                {
                    return Err(AppError::new(
                        ErrorCode::ShortcutConflict,
                        format!("\"{b}\" is both the {a_name} and the {b_name} shortcut: one of them needs other keys"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The shortcuts as saved now.
pub fn saved(app: &AppHandle) -> Keys {
    let push_to_talk = app.try_state::<crate::voice::VoiceState>().and_then(|v| v.settings().shortcut);
    let settings = app.try_state::<crate::settings::SettingsState>().map(|s| s.get());
    let (quick_ask, capture) = settings.map(|s| (s.quick_ask_shortcut, s.capture_shortcut)).unwrap_or_default();
    Keys { push_to_talk, quick_ask, capture }
}

/// (Re-)registers the shortcuts (what was registered before is dropped first). A shortcut that cannot be registered
/// (taken by another app, Wayland, the same keys as one before it) is reported, never fatal, and does not keep the
/// others from being registered.
pub fn apply(app: &AppHandle, keys: &Keys) -> AppResult<()> {
    let push_to_talk = keys.push_to_talk.as_deref();
    let quick_ask = keys.quick_ask.as_deref();
    let gs = app.global_shortcut();
    let _ = gs.unregister_all();
    let unavailable = |s: &str, e: tauri_plugin_global_shortcut::Error| {
        AppError::new(ErrorCode::ShortcutUnavailable, format!("cannot use \"{s}\" as a global shortcut: {e}"))
    };
    let mut first_error = None;
    if let Some(s) = push_to_talk {
        let done = parse(s).and_then(|sc| {
            gs.on_shortcut(sc, |app, _sc, ev| {
                let pressed = ev.state() == ShortcutState::Pressed;
                let _ = crate::voice::PushToTalk { pressed }.emit_to(app, crate::quick::recording_view(app));
            })
            .map_err(|e| unavailable(s, e))
        });
        if let Err(e) = done {
            first_error.get_or_insert(e);
        }
    }
    // a key press that opens the panel: Quick Ask (checked against push-to-talk) and capture (against both)
    let pair = Keys { push_to_talk: keys.push_to_talk.clone(), quick_ask: quick_ask.map(Into::into), capture: None };
    type OnPress = fn(&AppHandle);
    let pressed: [(Option<&str>, &Keys, OnPress); 2] =
        [(quick_ask, &pair, crate::quick::toggle_soon), (keys.capture.as_deref(), keys, crate::quick::capture_soon)];
    for (shortcut, against, on_press) in pressed {
        let Some(s) = shortcut else { continue };
        let done = against.check().and_then(|()| parse(s)).and_then(|sc| {
            gs.on_shortcut(sc, move |app, _sc, ev| {
                if ev.state() == ShortcutState::Pressed {
                    on_press(app);
                }
            })
            .map_err(|e| unavailable(s, e))
        });
        if let Err(e) = done {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Registers both shortcuts as saved now, one registration at a time. Never call it on the main thread.
pub fn apply_saved(app: &AppHandle) -> AppResult<()> {
    let Some(reg) = app.try_state::<Registering>() else { return Ok(()) };
    let _one_at_a_time = reg.0.lock()?;
    apply(app, &saved(app))
}

/// Lets go of both shortcuts (the hand-over to the resident process, which grabs the Quick Ask keys itself). Never
/// call it on the main thread.
pub fn release(app: &AppHandle) {
    let Some(reg) = app.try_state::<Registering>() else { return };
    let Ok(_one_at_a_time) = reg.0.lock() else { return };
    if let Err(e) = app.global_shortcut().unregister_all() {
        tracing::warn!("cannot let go of the global shortcuts: {e}");
    }
}

/// How long after start-up the shortcuts are registered (see [`register_soon`]).
const AFTER_START: std::time::Duration = std::time::Duration::from_millis(1200);

/// Registers the saved shortcuts shortly after start-up, off the launch path. On X11 every registration call blocks
/// the main thread until global-hotkey's thread, which looks at its queue every 50 ms, answers: done in `setup` that
/// was ~90 ms before the window could be created, and done right after setup it would hold the main loop while the
/// page loads. Registrations take [`Registering`] (never a settings lock, which the main thread's commands take:
/// holding one while the main thread runs the registration deadlocked), so that shortcuts saved meanwhile are
/// registered after these, never before. A start that opens the Quick Ask panel registers at once. Both wait until a
/// resident process that held the connections (and its own grab of the Quick Ask keys) has ended.
pub fn register_soon(app: &AppHandle, now: bool) {
    app.manage(Registering::default());
    let app = app.clone();
    // (the end-to-end test moves it, to register while the page is busy calling the shell)
    let after = std::env::var("HERMES_SHORTCUT_AFTER_MS").ok().and_then(|v| v.parse().ok());
    let delay =
        if now { std::time::Duration::ZERO } else { after.map_or(AFTER_START, std::time::Duration::from_millis) };
    crate::later("shortcut-register", delay, move || {
        // a resident process that holds the Quick Ask keys lets go of them when it ends (handover.rs)
        if let Some(gate) = app.try_state::<crate::handover::Gate>() {
            tauri::async_runtime::block_on(gate.opened());
        }
        match apply_saved(&app) {
            Ok(()) => tracing::info!("global shortcuts registered"),
            Err(e) => tracing::warn!("global shortcuts: {}", e.message),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortcuts_parse_like_the_plugin_and_the_same_keys_are_the_same_in_any_spelling() {
        assert!(parse(crate::voice::DEFAULT_SHORTCUT).is_ok());
        assert!(parse(crate::settings::DEFAULT_QUICK_ASK).is_ok());
        assert!(parse("Alt+F9").is_ok());
        assert_eq!(parse("Ctrl+Banana").unwrap_err().code, ErrorCode::InvalidShortcut);
        assert!(same("Control+Alt+Space", "ctrl+alt+space"));
        assert!(same("Alt+Control+Space", "Control+Alt+Space"), "the order of the modifiers does not matter");
        assert!(!same("Control+Alt+Space", "Control+Shift+Space"));
    }

    fn keys(p: Option<&str>, q: Option<&str>, c: Option<&str>) -> Keys {
        Keys { push_to_talk: p.map(Into::into), quick_ask: q.map(Into::into), capture: c.map(Into::into) }
    }

    #[test]
    fn no_two_shortcuts_may_be_the_same_keys() {
        let e = keys(Some("CommandOrControl+Shift+Space"), Some("Control+Shift+Space"), None).check();
        #[cfg(not(target_os = "macos"))]
        assert_eq!(e.unwrap_err().code, ErrorCode::ShortcutConflict);
        #[cfg(target_os = "macos")]
        assert!(e.is_ok(), "CommandOrControl is ⌘ on macOS");
        let defaults = keys(
            Some(crate::voice::DEFAULT_SHORTCUT),
            Some(crate::settings::DEFAULT_QUICK_ASK),
            Some(crate::settings::DEFAULT_CAPTURE),
        );
        assert!(defaults.check().is_ok(), "the defaults are three different keys");
        assert!(parse(crate::settings::DEFAULT_CAPTURE).is_ok());
        assert!(keys(None, Some("Control+Alt+Space"), None).check().is_ok(), "one of them off: no clash");
        assert!(keys(Some("Control+Alt+Space"), None, None).check().is_ok());
        let e = keys(None, Some("Control+Alt+Space"), Some("alt+control+space")).check().unwrap_err();
        assert_eq!(e.code, ErrorCode::ShortcutConflict);
        assert!(e.message.contains("Quick Ask and the screen capture"), "{}", e.message);
        let e = keys(Some("Alt+F7"), None, Some("Alt+F7")).check().unwrap_err();
        assert!(e.message.contains("push-to-talk and the screen capture"), "{}", e.message);
    }
}
