//! The app settings' managed state and commands (the settings themselves: `hermes_app::settings`, shared with the
//! resident process).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tauri::State;

pub use hermes_app::settings::*;

use crate::error::AppResult;

/// Managed state: the settings and where they live.
pub struct SettingsState {
    dir: PathBuf,
    settings: Mutex<AppSettings>,
    /// Held by a save from start to end: saves run one after another, in the order they came (on → off quickly must
    /// end off; two concurrent saves each read the old value and the slower one won).
    saving: tokio::sync::Mutex<()>,
}

impl SettingsState {
    pub fn new(data_dir: &Path) -> Self {
        SettingsState {
            dir: data_dir.to_path_buf(),
            settings: Mutex::new(AppSettings::load(data_dir)),
            saving: tokio::sync::Mutex::new(()),
        }
    }

    pub fn get(&self) -> AppSettings {
        self.settings.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Normalize, write, then remember (a failed write changes nothing).
    pub fn set(&self, settings: AppSettings) -> AppResult<AppSettings> {
        let new = settings.normalized();
        new.save(&self.dir)?;
        *self.settings.lock()? = new.clone();
        Ok(new)
    }
}

#[tauri::command]
#[specta::specta]
pub fn app_settings(state: State<'_, SettingsState>) -> AppSettings {
    state.get()
}

/// Saves the settings and returns them as stored (clamped). A new download limit applies to the next connection;
/// start at login writes or removes the OS's autostart entry first (a failure there saves nothing); a Quick Ask
/// shortcut that does not parse or is the push-to-talk shortcut's keys is refused (nothing saved), a new one is
/// registered at once (taken by another app: saved, and the error says so).
#[tauri::command]
#[specta::specta]
pub async fn app_save_settings(
    app: tauri::AppHandle,
    state: State<'_, SettingsState>,
    settings: AppSettings,
) -> AppResult<AppSettings> {
    let _one_at_a_time = state.saving.lock().await;
    let mut settings = settings.normalized();
    let old = state.get();
    // one-time flags the shell sets are not taken back by a page that read the settings before
    settings.tray_hint_shown |= old.tray_hint_shown;
    settings.autostart_offered |= old.autostart_offered;
    let shortcut_changed =
        settings.quick_ask_shortcut != old.quick_ask_shortcut || settings.capture_shortcut != old.capture_shortcut;
    if shortcut_changed {
        for s in [&settings.quick_ask_shortcut, &settings.capture_shortcut].into_iter().flatten() {
            crate::shortcuts::parse(s)?;
        }
        let keys = crate::shortcuts::Keys {
            quick_ask: settings.quick_ask_shortcut.clone(),
            capture: settings.capture_shortcut.clone(),
            ..crate::shortcuts::saved(&app)
        };
        keys.check()?;
    }
    if settings.launch_at_login != old.launch_at_login {
        crate::window::set_launch_at_login(&app, settings.launch_at_login)?;
    }
    let saved = state.set(settings)?;
    if shortcut_changed {
        crate::shortcuts::apply_saved(&app)?;
    }
    Ok(saved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_keeps_what_it_stored() {
        let dir = tempfile::tempdir().unwrap();
        let st = SettingsState::new(dir.path());
        let saved = st.set(AppSettings { max_download_mb: 0, ..AppSettings::default() }).unwrap();
        assert_eq!(saved.max_download_mb, MIN_DOWNLOAD_MB, "the stored value is what the command returns");
        assert_eq!(st.get(), saved);
        assert_eq!(AppSettings::load(dir.path()), saved, "and what the next start reads");
    }

    #[test]
    fn a_failed_write_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let st = SettingsState::new(&dir.path().join("gone"));
        assert!(st.set(AppSettings { max_download_mb: 10, ..AppSettings::default() }).is_err());
        assert_eq!(st.get(), AppSettings::default());
    }
}
