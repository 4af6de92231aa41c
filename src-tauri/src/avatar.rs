//! Avatar windows (A-26…A-28). The bundled page normally lives in a same-origin iframe of the main window (the UI
//! drives it directly); this module adds the two cases that need a window of their own:
//!
//! - `avatar`: the bundled page detached into a small frameless, transparent, always-on-top window. Its only
//!   permission is dragging the window (capability `avatar-window`, scoped to this webview label).
//! - `avatar-remote`: the agent's own page (`ready.avatar_url` or the profile's override). No capability matches its
//!   label and the app manifest requires a permission for every app command, so it has no IPC at all. It is never put
//!   in an iframe of the main window (on Linux an iframe shares its window's IPC rights).
//!
//! Both are driven by evaluating script in which every argument is JSON-encoded by serde_json (A-28): text from the
//! agent can never become code.

use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use specta::Type;
use tauri::{AppHandle, Manager, WebviewUrl, WebviewWindowBuilder};
use tauri_specta::Event as _;

use crate::error::{AppError, AppResult};

pub const DETACHED: &str = "avatar";
pub const REMOTE: &str = "avatar-remote";

/// The avatar contract's methods (A-26, plus the bundled page's optional `setSpeechLevel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "camelCase")]
pub enum AvatarMethod {
    SetState,
    Speak,
    SetVolume,
    SetSpeechLevel,
}

impl AvatarMethod {
    fn js(self) -> &'static str {
        match self {
            AvatarMethod::SetState => "setState",
            AvatarMethod::Speak => "speak",
            AvatarMethod::SetVolume => "setVolume",
            AvatarMethod::SetSpeechLevel => "setSpeechLevel",
        }
    }
}

/// An avatar window was closed (by the user or the window manager): the UI re-embeds the avatar.
#[derive(Debug, Clone, PartialEq, Serialize, Type, tauri_specta::Event)]
pub struct AvatarWindowClosed {
    pub label: String,
}

/// The script for one call (A-28): the method comes from a closed set, the argument is JSON-encoded (strings for
/// `setState`/`speak`, numbers for the levels; anything else is refused). A page without `hermesAvatar`, or one that
/// throws, costs nothing.
pub fn call_script(method: AvatarMethod, arg: &serde_json::Value) -> AppResult<String> {
    let ok = match method {
        AvatarMethod::SetState | AvatarMethod::Speak => arg.is_string(),
        AvatarMethod::SetVolume | AvatarMethod::SetSpeechLevel => arg.is_number(),
    };
    if !ok {
        return Err(AppError::invalid(format!(
            "{} takes a {}",
            method.js(),
            if arg.is_number() { "string" } else { "number" }
        )));
    }
    let json = serde_json::to_string(arg).map_err(|e| AppError::internal(e.to_string()))?;
    let m = method.js();
    Ok(format!(
        "(function(){{try{{var a=window.hermesAvatar;if(a&&typeof a.{m}==='function')a.{m}({json});}}catch(e){{}}}})();"
    ))
}

/// Only http(s) pages with a host; returns the parsed URL.
pub fn check_remote_url(raw: &str) -> AppResult<url::Url> {
    let u = url::Url::parse(raw.trim()).map_err(|_| AppError::invalid("the avatar URL is not a valid URL"))?;
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none() {
        return Err(AppError::invalid("the avatar URL must be an http(s) address"));
    }
    Ok(u)
}

/// Is anything listening at the page's host and port? (A page that cannot even be connected to falls back to the
/// bundled avatar.)
fn reachable(u: &url::Url) -> bool {
    let (Some(host), Some(port)) = (u.host_str(), u.port_or_known_default()) else { return false };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let Ok(addrs) = (host, port).to_socket_addrs() else { return false };
    addrs.into_iter().any(|a| TcpStream::connect_timeout(&a, Duration::from_secs(3)).is_ok())
}

/// Navigation in the remote window stays on the page's own origin.
fn same_origin(a: &url::Url, b: &url::Url) -> bool {
    a.origin() == b.origin()
}

/// Lets the frameless window be moved by dragging the character (the `avatar-window` capability allows only this).
const DRAG_SCRIPT: &str = r#"
document.addEventListener('mousedown', function (e) {
  if (e.button !== 0) return;
  var i = window.__TAURI_INTERNALS__;
  if (i && i.invoke) i.invoke('plugin:window|start_dragging').catch(function () {});
}, true);
"#;

fn watch_close(app: &AppHandle, w: &tauri::WebviewWindow) {
    let (app, label) = (app.clone(), w.label().to_string());
    w.on_window_event(move |ev| {
        if let tauri::WindowEvent::Destroyed = ev {
            // Keep the floating window's place now, not only at a clean exit.
            use tauri_plugin_window_state::{AppHandleExt, StateFlags};
            let _ = app.save_window_state(StateFlags::POSITION | StateFlags::SIZE);
            let _ = AvatarWindowClosed { label: label.clone() }.emit(&app);
        }
    });
}

/// Detach the bundled avatar into its own floating window (`open: true`), or close that window.
#[tauri::command]
#[specta::specta]
pub async fn avatar_detach(app: AppHandle, open: bool, click_through: bool) -> AppResult<()> {
    if let Some(w) = app.get_webview_window(DETACHED) {
        if open {
            let _ = w.set_ignore_cursor_events(click_through);
            let _ = w.show();
            return Ok(());
        }
        w.close().map_err(|e| AppError::internal(e.to_string()))?;
        return Ok(());
    }
    if !open {
        return Ok(());
    }
    let mut w = WebviewWindowBuilder::new(&app, DETACHED, WebviewUrl::App("avatar/avatar.html".into()));
    // (the avatar page reads `window.__HERMES_HOST__` for its font stack, as the UI does)
    if let Some(script) = crate::boot::host_script(&crate::boot::Host::current()) {
        w = w.initialization_script(script);
    }
    let w = w
        .title("Hermes avatar")
        .inner_size(260.0, 300.0)
        .min_inner_size(140.0, 160.0)
        .decorations(false)
        .transparent(true)
        .shadow(false)
        .always_on_top(true)
        .skip_taskbar(true)
        .resizable(true)
        .initialization_script(DRAG_SCRIPT)
        .on_navigation(crate::security::navigation_allowed)
        .on_new_window(crate::security::deny_new_window)
        .build()
        .map_err(|e| AppError::internal(e.to_string()))?;
    if click_through {
        let _ = w.set_ignore_cursor_events(true);
    }
    watch_close(&app, &w);
    Ok(())
}

/// Show the agent's own avatar page in its own window without any IPC (`url: null` closes it). Returns false when the
/// page cannot be reached: the UI keeps the bundled avatar.
#[tauri::command]
#[specta::specta]
pub async fn avatar_remote(app: AppHandle, url: Option<String>) -> AppResult<bool> {
    let Some(raw) = url else {
        if let Some(w) = app.get_webview_window(REMOTE) {
            let _ = w.close();
        }
        return Ok(false);
    };
    let u = check_remote_url(&raw)?;
    let u2 = u.clone();
    let ok = tauri::async_runtime::spawn_blocking(move || reachable(&u2)).await.unwrap_or(false);
    if !ok {
        tracing::warn!(url = %hermes_client::policy::redact_url(u.as_str()), "avatar page unreachable: bundled avatar");
        if let Some(w) = app.get_webview_window(REMOTE) {
            let _ = w.close();
        }
        return Ok(false);
    }
    if let Some(w) = app.get_webview_window(REMOTE) {
        if w.url().is_ok_and(|cur| same_origin(&cur, &u) && cur.path() == u.path()) {
            return Ok(true);
        }
        let _ = w.close();
    }
    let origin = u.clone();
    let w = WebviewWindowBuilder::new(&app, REMOTE, WebviewUrl::External(u))
        .title("Hermes avatar")
        .inner_size(300.0, 360.0)
        .always_on_top(true)
        .skip_taskbar(true)
        .disable_drag_drop_handler()
        .on_navigation(move |n| same_origin(n, &origin) || n.as_str() == "about:blank")
        .on_new_window(crate::security::deny_new_window)
        .build()
        .map_err(|e| AppError::internal(e.to_string()))?;
    watch_close(&app, &w);
    Ok(true)
}

/// Call the avatar contract in the detached and the remote windows (those that are open).
#[tauri::command]
#[specta::specta]
pub fn avatar_call(app: AppHandle, method: AvatarMethod, arg: serde_json::Value) -> AppResult<()> {
    let script = call_script(method, &arg)?;
    for label in [DETACHED, REMOTE] {
        if let Some(w) = app.get_webview_window(label) {
            let _ = w.eval(&script);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A-28: hostile text stays one JSON string literal: the script's only call is the contract's, and the literal
    /// decodes back to exactly the text.
    #[test]
    fn a28_arguments_are_json_encoded() {
        let evil = "\"); alert(1); (\"\\'`</script><script>alert(2)</script>\n\r\u{2028}\u{2029}${x}";
        let s = call_script(AvatarMethod::Speak, &json!(evil)).unwrap();
        let start = s.find("a.speak(").unwrap() + "a.speak(".len();
        let end = s.rfind(");}catch").unwrap();
        let literal = &s[start..end];
        assert_eq!(serde_json::from_str::<String>(literal).unwrap(), evil);
        assert!(!literal.contains('\n') && !literal.contains('\r'), "{literal}");
        assert_eq!(s.matches("a.speak(").count(), 1);
        let v = call_script(AvatarMethod::SetVolume, &json!(0.5)).unwrap();
        assert!(v.contains("a.setVolume(0.5)"), "{v}");
    }

    #[test]
    fn wrong_argument_types_are_refused() {
        assert!(call_script(AvatarMethod::SetState, &json!(1)).is_err());
        assert!(call_script(AvatarMethod::SetVolume, &json!("1); alert(1")).is_err());
        assert!(call_script(AvatarMethod::Speak, &json!({"a": 1})).is_err());
        assert!(call_script(AvatarMethod::SetSpeechLevel, &json!(null)).is_err());
    }

    #[test]
    fn method_names_come_from_a_closed_set() {
        let m: Result<AvatarMethod, _> = serde_json::from_value(json!("constructor"));
        assert!(m.is_err());
        let m: AvatarMethod = serde_json::from_value(json!("setSpeechLevel")).unwrap();
        assert_eq!(m.js(), "setSpeechLevel");
    }

    #[test]
    fn a27_only_http_pages() {
        assert!(check_remote_url("https://agent.example/avatar/").is_ok());
        assert!(check_remote_url("http://127.0.0.1:8080/a.html").is_ok());
        for bad in
            ["javascript:alert(1)", "file:///etc/passwd", "tauri://localhost/index.html", "data:text/html,x", "nope"]
        {
            assert!(check_remote_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn remote_navigation_stays_on_its_origin() {
        let a = url::Url::parse("https://agent.example/avatar/").unwrap();
        assert!(same_origin(&a, &url::Url::parse("https://agent.example/other").unwrap()));
        assert!(!same_origin(&a, &url::Url::parse("https://evil.example/").unwrap()));
        assert!(!same_origin(&a, &url::Url::parse("tauri://localhost/").unwrap()));
    }
}
