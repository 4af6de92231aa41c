//! Avatar windows (A-26…A-28). The bundled page normally lives in a same-origin iframe of the main window (the UI
//! drives it directly); this module adds the two cases that need a window of their own:
//!
//! - `avatar`: the bundled page detached into a small frameless, transparent, always-on-top window. Its only
//!   permission is dragging the window (capability `avatar-window`, scoped to this webview label).
//! - `avatar-remote`: the agent's own page (`ready.avatar_url` or the profile's override), opened only once the user
//!   allowed its origin for that profile (`consent`: https or loopback only; another host than the agent's is named
//!   as such). No capability matches its label and the app manifest requires a permission for every app command, so
//!   it has no IPC at all; it is private (its own throw-away storage), opens no windows, downloads nothing and is
//!   refused every permission. It is never put in an iframe of the main window (on Linux an iframe shares its
//!   window's IPC rights).
//!
//! Both are driven by evaluating script in which every argument is JSON-encoded by serde_json (A-28): text from the
//! agent can never become code.

pub mod consent;

use hermes_app::picture;

use serde::{Deserialize, Serialize};
use specta::Type;
use tauri::{AppHandle, Manager, WebviewUrl, WebviewWindowBuilder};
use tauri_specta::Event as _;

use crate::error::{AppError, AppResult};
use crate::state::AppState;

pub const DETACHED: &str = "avatar";
pub const REMOTE: &str = "avatar-remote";

/// The avatar contract's methods (A-26, plus the bundled page's optional `setSpeechLevel`, `setLook` and `setImage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "camelCase")]
pub enum AvatarMethod {
    SetState,
    Speak,
    SetVolume,
    SetSpeechLevel,
    /// The bundled page's colour theme (`lilac`, `mint`, …): the look chosen for the agent. A page without it ignores it.
    SetLook,
    /// The bundled page's picture (a `data:image/…` URL of the user's picture for the agent, `""`: none). Never sent to
    /// the agent's own page.
    SetImage,
}

impl AvatarMethod {
    fn js(self) -> &'static str {
        match self {
            AvatarMethod::SetState => "setState",
            AvatarMethod::Speak => "speak",
            AvatarMethod::SetVolume => "setVolume",
            AvatarMethod::SetSpeechLevel => "setSpeechLevel",
            AvatarMethod::SetLook => "setLook",
            AvatarMethod::SetImage => "setImage",
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
        AvatarMethod::SetState | AvatarMethod::Speak | AvatarMethod::SetLook => arg.is_string(),
        AvatarMethod::SetImage => {
            arg.as_str().is_some_and(|u| u.is_empty() || (u.starts_with("data:image/") && u.len() <= 4 * 1024 * 1024))
        }
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

/// Where the agent's own avatar page stands (A-27), for the avatar pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum RemoteAvatar {
    /// No page (none announced, or the window was closed on request).
    Closed,
    /// Never opened, whatever the user says (not https nor loopback, not a web address, a user/password in it).
    #[serde(rename_all = "camelCase")]
    Blocked { origin: Option<String>, reason: consent::Blocked },
    /// The user has not answered for this origin yet: the pane asks.
    #[serde(rename_all = "camelCase")]
    Ask { origin: String, agent_host: String, foreign: bool },
    /// The user said "not now" for this origin (remembered; the pane offers to show it after all).
    #[serde(rename_all = "camelCase")]
    Declined { origin: String, agent_host: String, foreign: bool },
    /// Open in its own private window.
    #[serde(rename_all = "camelCase")]
    Open { origin: String, agent_host: String, foreign: bool },
}

/// A remembered answer, for Settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct AvatarConsent {
    pub origin: String,
    pub consent: consent::Consent,
}

fn close_remote(app: &AppHandle) {
    if let Some(w) = app.get_webview_window(REMOTE) {
        let _ = w.close();
    }
}

/// The agent's own page, once the user allowed its origin: a private window (its own throw-away storage, nothing
/// shared with the app's pages), no IPC (no capability matches its label), no new windows, no downloads, every
/// permission request (camera, microphone, notifications, geolocation…) denied, navigation kept on its origin.
fn open_remote(app: &AppHandle, u: url::Url) -> AppResult<()> {
    if let Some(w) = app.get_webview_window(REMOTE) {
        if w.url().is_ok_and(|cur| consent::same_origin(&cur, &u) && cur.path() == u.path()) {
            return Ok(());
        }
        let _ = w.close();
    }
    let origin = u.clone();
    let w = WebviewWindowBuilder::new(app, REMOTE, WebviewUrl::External(u))
        .title("Hermes avatar")
        .inner_size(300.0, 360.0)
        .skip_taskbar(true)
        .incognito(true)
        .disable_drag_drop_handler()
        .on_navigation(move |n| consent::same_origin(n, &origin) || n.as_str() == "about:blank")
        .on_new_window(crate::security::deny_new_window)
        .on_download(|_, _| false)
        .build()
        .map_err(|e| AppError::internal(e.to_string()))?;
    deny_permissions(&w);
    watch_close(app, &w);
    Ok(())
}

/// Every permission request of the remote page is refused by the webview itself (WebKitGTK's `permission-request`:
/// camera, microphone, display capture, notifications, geolocation, pointer lock, device info, media keys…).
fn deny_permissions(w: &tauri::WebviewWindow) {
    #[cfg(target_os = "linux")]
    let _ = w.with_webview(|pv| {
        use webkit2gtk::{PermissionRequestExt as _, WebViewExt as _};
        pv.inner().connect_permission_request(|_, req| {
            req.deny();
            true
        });
    });
    #[cfg(not(target_os = "linux"))]
    let _ = w;
}

/// The agent's own avatar page (`ready.avatar_url` or the profile's override) for profile `profile_id`: opened in
/// its private window only when the address rules pass and the user allowed its origin for this profile; otherwise
/// says why not (the pane asks, or says it is blocked). Nothing connects to the page's host before that. `url: null`
/// closes the window.
#[tauri::command]
#[specta::specta]
pub async fn avatar_remote(
    app: AppHandle,
    state: tauri::State<'_, AppState>,
    consents: tauri::State<'_, consent::ConsentStore>,
    profile_id: String,
    url: Option<String>,
) -> AppResult<RemoteAvatar> {
    let Some(raw) = url.filter(|u| !u.trim().is_empty()) else {
        close_remote(&app);
        return Ok(RemoteAvatar::Closed);
    };
    let profile = state.app.profile(&profile_id)?;
    let page = match consent::check_page(&raw, &profile.url) {
        Ok(p) => p,
        Err(reason) => {
            close_remote(&app);
            let origin = url::Url::parse(raw.trim()).ok().map(|u| u.origin().ascii_serialization());
            tracing::warn!(?reason, "avatar page blocked");
            return Ok(RemoteAvatar::Blocked { origin: origin.filter(|o| o != "null"), reason });
        }
    };
    let consent::Page { url, origin, agent_host, foreign } = page;
    match consents.get(&profile_id, &origin) {
        Some(consent::Consent::Allowed) => {
            open_remote(&app, url)?;
            Ok(RemoteAvatar::Open { origin, agent_host, foreign })
        }
        Some(consent::Consent::Declined) => {
            close_remote(&app);
            Ok(RemoteAvatar::Declined { origin, agent_host, foreign })
        }
        None => {
            close_remote(&app);
            Ok(RemoteAvatar::Ask { origin, agent_host, foreign })
        }
    }
}

/// The user's answer for an avatar page's origin of a profile (`null` forgets it: the pane asks again). The page
/// itself is opened by the next `avatar_remote`.
#[tauri::command]
#[specta::specta]
pub fn avatar_consent(
    app: AppHandle,
    state: tauri::State<'_, AppState>,
    consents: tauri::State<'_, consent::ConsentStore>,
    profile_id: String,
    origin: String,
    consent: Option<consent::Consent>,
) -> AppResult<()> {
    let ids: Vec<String> = state.app.profiles()?.into_iter().map(|p| p.id).collect();
    if !ids.contains(&profile_id) {
        return Err(AppError::invalid("no such profile"));
    }
    consents.set(&profile_id, &origin, consent, &ids)?;
    if consent != Some(consent::Consent::Allowed) {
        if let Some(w) = app.get_webview_window(REMOTE) {
            if w.url().is_ok_and(|u| u.origin().ascii_serialization() == origin) {
                let _ = w.close();
            }
        }
    }
    Ok(())
}

/// The remembered answers of a profile (Settings lists them, with a way to revoke each).
#[tauri::command]
#[specta::specta]
pub fn avatar_consents(consents: tauri::State<'_, consent::ConsentStore>, profile_id: String) -> Vec<AvatarConsent> {
    consents.of(&profile_id).into_iter().map(|(origin, consent)| AvatarConsent { origin, consent }).collect()
}

/// The windows a call goes to: the detached bundled page and the agent's own page — but the user's picture only to
/// the bundled page (it is the user's, not the agent's page's business).
fn windows_for(method: AvatarMethod) -> &'static [&'static str] {
    match method {
        AvatarMethod::SetImage => &[DETACHED],
        _ => &[DETACHED, REMOTE],
    }
}

/// Call the avatar contract in the detached and the remote windows (those that are open).
#[tauri::command]
#[specta::specta]
pub fn avatar_call(app: AppHandle, method: AvatarMethod, arg: serde_json::Value) -> AppResult<()> {
    let script = call_script(method, &arg)?;
    for &label in windows_for(method) {
        if let Some(w) = app.get_webview_window(label) {
            let _ = w.eval(&script);
        }
    }
    Ok(())
}

/* ---------- a picture as the avatar ---------- */

fn known_profile(state: &AppState, id: &str) -> AppResult<()> {
    if state.app.profiles()?.iter().any(|p| p.id == id) { Ok(()) } else { Err(AppError::invalid("no such profile")) }
}

fn picture_error(e: picture::PictureError) -> AppError {
    match e {
        picture::PictureError::Io(m) => AppError::internal(m),
        other => AppError::invalid(other.to_string()),
    }
}

/// The user picks a picture (PNG, JPEG, WebP, GIF) for profile `profile_id`'s avatar: it is cropped, scaled and kept
/// (see [`picture`]). Its `data:` URL for the page, or `None` when the dialog was cancelled.
#[tauri::command]
#[specta::specta]
pub async fn avatar_picture_pick(
    app: AppHandle,
    state: tauri::State<'_, AppState>,
    profile_id: String,
) -> AppResult<Option<String>> {
    known_profile(&state, &profile_id)?;
    let Some(path) = crate::commands::files::pick_image(&app).await? else { return Ok(None) };
    let dir = state.data_dir.clone();
    crate::commands::blocking(move || {
        let len = std::fs::metadata(&path)?.len();
        if len > picture::MAX_FILE_BYTES {
            return Err(picture_error(picture::PictureError::TooLarge));
        }
        let pic = picture::prepare(&std::fs::read(&path)?).map_err(picture_error)?;
        picture::save(&dir, &profile_id, &pic)?;
        tracing::info!(profile = %profile_id, bytes = pic.bytes.len(), png = pic.png, "avatar picture kept");
        Ok(Some(pic.data_url()))
    })
    .await?
}

/// Profile `profile_id`'s avatar picture as a `data:` URL, if it has one.
#[tauri::command]
#[specta::specta]
pub async fn avatar_picture(state: tauri::State<'_, AppState>, profile_id: String) -> AppResult<Option<String>> {
    let dir = state.data_dir.clone();
    crate::commands::blocking(move || picture::load(&dir, &profile_id).map(|p| p.data_url())).await
}

/// Back to the drawn avatar for profile `profile_id`.
#[tauri::command]
#[specta::specta]
pub async fn avatar_picture_clear(state: tauri::State<'_, AppState>, profile_id: String) -> AppResult<()> {
    let dir = state.data_dir.clone();
    crate::commands::blocking(move || picture::remove(&dir, &profile_id)).await??;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_users_picture_never_reaches_the_agents_page() {
        assert_eq!(windows_for(AvatarMethod::SetImage), [DETACHED]);
        assert_eq!(windows_for(AvatarMethod::SetLook), [DETACHED, REMOTE]);
        assert!(call_script(AvatarMethod::SetImage, &json!("data:image/png;base64,iVBORw0KGgo=")).is_ok());
        assert!(call_script(AvatarMethod::SetImage, &json!("")).is_ok(), "'' takes it off");
        for bad in [json!("https://example.com/me.png"), json!("javascript:alert(1)"), json!(1)] {
            assert!(call_script(AvatarMethod::SetImage, &bad).is_err(), "{bad}");
        }
        let huge = format!("data:image/png;base64,{}", "A".repeat(4 * 1024 * 1024));
        assert!(call_script(AvatarMethod::SetImage, &json!(huge)).is_err());
    }

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
}
