//! App-wide settings that are not per profile and not voice: the largest file the app downloads from an agent, our
//! own per-file limit for the agent's files (its `max_media_bytes` is clamped to it) and the media folder's quota. Remembered per machine as a JSON file in the data folder (same scheme as `voice-settings.json`).

use std::path::Path;

use serde::{Deserialize, Serialize};

pub const SETTINGS_FILE: &str = "app-settings.json";
const MIB: u64 = 1024 * 1024;
/// The download limit's range (MiB): 1 MiB … 1 TiB.
pub const MIN_DOWNLOAD_MB: u32 = 1;
pub const MAX_DOWNLOAD_MB: u32 = 1024 * 1024;
/// The default download limit (MiB): the engine's default, 2 GiB.
pub const DEFAULT_DOWNLOAD_MB: u32 = (hermes_client::http::DEFAULT_MAX_DOWNLOAD_BYTES / MIB) as u32;
/// Our per-file limit's range (MiB): 1 MiB … 16 GiB; the default is the engine's, 64 MiB (A-3, A-19 decision).
pub const MIN_MEDIA_MB: u32 = 1;
pub const MAX_MEDIA_MB: u32 = 16 * 1024;
pub const DEFAULT_MEDIA_MB: u32 = (hermes_protocol::media::DEFAULT_MEDIA_CAP / MIB) as u32;
/// The media folder's quota range (MiB): 1 MiB … 1 TiB; the default is the engine's, 2 GiB.
pub const MIN_QUOTA_MB: u32 = 1;
pub const MAX_QUOTA_MB: u32 = 1024 * 1024;
pub const DEFAULT_QUOTA_MB: u32 = (hermes_client::http::DEFAULT_MEDIA_QUOTA_BYTES / MIB) as u32;
/// The Quick Ask panel's default global shortcut: Ctrl+Alt+Space, ⌥Space on macOS (⌘Space is Spotlight's).
pub const DEFAULT_QUICK_ASK: &str = if cfg!(target_os = "macos") { "Alt+Space" } else { "Control+Alt+Space" };
/// The screen capture's default global shortcut (the Quick Ask panel, a region drawn on a still of the screen):
/// Ctrl+Alt+S (⌃⌥S on macOS).
pub const DEFAULT_CAPTURE: &str = "Control+Alt+KeyS";

/// App settings, remembered per machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct AppSettings {
    /// The largest file downloaded from an agent, in MiB (1 … 1 048 576). Applies to connections made after a change.
    pub max_download_mb: u32,
    /// Our per-file limit for the agent's files, in MiB (1 … 16 384): the agent's `max_media_bytes` is clamped to
    /// it, and it sizes the buffer for unfinished incoming files. Applies to connections made after a change.
    pub max_media_mb: u32,
    /// The most the media folder may hold, in MiB (1 … 1 048 576); a file that would go over it is refused.
    pub media_quota_mb: u32,
    /// Closing the main window keeps the app running in the tray (Windows, Linux; macOS apps always stay).
    pub close_to_tray: bool,
    /// Start at login, hidden in the tray (the OS's autostart entry is written and removed with it).
    pub launch_at_login: bool,
    /// The start-at-login offer was made (once, after the first real agent was added).
    pub autostart_offered: bool,
    /// The "still running in the tray" notification was shown (once).
    pub tray_hint_shown: bool,
    /// A notification for an agent's reply or file while the window is not focused (notify.rs).
    pub notify_reply: bool,
    /// A notification for an agent's approval or question card while the window is not focused.
    pub notify_card: bool,
    /// No notification before this time (ms since the epoch; the tray's "Mute notifications for 1 hour").
    pub mute_until: i64,
    /// The UI's language (`en`, `ru`, `zh`), for what the shell says without a page (notifications).
    pub locale: String,
    /// The global shortcut that opens the Quick Ask panel from anywhere (`Control+Alt+Space`); `null` turns it off.
    pub quick_ask_shortcut: Option<String>,
    /// The global shortcut that opens the Quick Ask panel on a region capture (`Control+Alt+KeyS`); `null` turns it
    /// off.
    pub capture_shortcut: Option<String>,
    /// A capture's message names the window that had the focus when the panel was summoned (its title and app), for
    /// the user to keep or delete before sending. Off by default: a window's title can say more than its pixels.
    pub capture_names_window: bool,
}

impl Default for AppSettings {
    fn default() -> Self {
        AppSettings {
            max_download_mb: DEFAULT_DOWNLOAD_MB,
            max_media_mb: DEFAULT_MEDIA_MB,
            media_quota_mb: DEFAULT_QUOTA_MB,
            close_to_tray: true,
            launch_at_login: false,
            autostart_offered: false,
            tray_hint_shown: false,
            notify_reply: true,
            notify_card: true,
            mute_until: 0,
            locale: "en".into(),
            quick_ask_shortcut: Some(DEFAULT_QUICK_ASK.into()),
            capture_shortcut: Some(DEFAULT_CAPTURE.into()),
            capture_names_window: false,
        }
    }
}

impl AppSettings {
    /// Clamp to sane ranges.
    pub fn normalized(mut self) -> Self {
        self.max_download_mb = self.max_download_mb.clamp(MIN_DOWNLOAD_MB, MAX_DOWNLOAD_MB);
        self.max_media_mb = self.max_media_mb.clamp(MIN_MEDIA_MB, MAX_MEDIA_MB);
        self.media_quota_mb = self.media_quota_mb.clamp(MIN_QUOTA_MB, MAX_QUOTA_MB);
        if !matches!(self.locale.as_str(), "en" | "ru" | "zh") {
            self.locale = "en".into();
        }
        let keys = |v: Option<String>| v.map(|v| v.trim().to_string()).filter(|v| !v.is_empty() && v.len() <= 100);
        self.quick_ask_shortcut = keys(self.quick_ask_shortcut);
        self.capture_shortcut = keys(self.capture_shortcut);
        self
    }

    /// Our per-file limit in bytes, for `EngineConfig::max_media_bytes`.
    pub fn max_media_bytes(&self) -> u64 {
        u64::from(self.max_media_mb) * MIB
    }

    /// The media folder's quota in bytes, for `EngineConfig::media_quota_bytes`.
    pub fn media_quota_bytes(&self) -> u64 {
        u64::from(self.media_quota_mb) * MIB
    }

    /// The download limit in bytes, for `EngineConfig::max_download_bytes`.
    pub fn max_download_bytes(&self) -> u64 {
        u64::from(self.max_download_mb) * MIB
    }

    /// Read from `dir`; a missing or broken file gives the defaults.
    pub fn load(dir: &Path) -> Self {
        read_json::<AppSettings>(dir, SETTINGS_FILE).normalized()
    }

    /// Write to `dir` atomically (temp file + rename).
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        write_json(dir, SETTINGS_FILE, self)
    }
}

/// A settings file `name` in `dir`, read as `T`; a missing or broken file (or a field of the wrong type) gives the
/// defaults. The app's settings files (`app-settings.json`, `voice-settings.json`) all use this.
pub fn read_json<T: serde::de::DeserializeOwned + Default>(dir: &Path, name: &str) -> T {
    std::fs::read(dir.join(name)).ok().and_then(|b| serde_json::from_slice::<T>(&b).ok()).unwrap_or_default()
}

/// Writes `value` as the settings file `name` in `dir` atomically: a temp file, then a rename over the old one.
pub fn write_json<T: Serialize>(dir: &Path, name: &str, value: &T) -> std::io::Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    std::fs::write(&tmp, serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?)?;
    std::fs::rename(tmp, dir.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_when_missing_roundtrip_and_defaults_when_broken() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(AppSettings::load(dir.path()), AppSettings::default());
        assert_eq!(AppSettings::default().max_download_bytes(), hermes_client::http::DEFAULT_MAX_DOWNLOAD_BYTES);
        // our media limits (A-3, A-19 decision): 64 MiB per file, a 2 GiB media folder
        let d = AppSettings::default();
        assert_eq!((d.max_media_bytes(), d.media_quota_bytes()), (64 * MIB, 2048 * MIB));
        let s = AppSettings {
            max_download_mb: 500,
            max_media_mb: 32,
            media_quota_mb: 4096,
            close_to_tray: false,
            launch_at_login: true,
            autostart_offered: true,
            tray_hint_shown: true,
            notify_reply: false,
            notify_card: false,
            mute_until: 1_700_000_000_000,
            locale: "ru".into(),
            quick_ask_shortcut: None,
            capture_shortcut: Some("Alt+F7".into()),
            capture_names_window: true,
        };
        s.save(dir.path()).unwrap();
        assert_eq!(AppSettings::load(dir.path()), s);
        assert!(!dir.path().join(format!("{SETTINGS_FILE}.tmp")).exists(), "the temp file is renamed away");
        std::fs::write(dir.path().join(SETTINGS_FILE), b"{not json").unwrap();
        assert_eq!(AppSettings::load(dir.path()), AppSettings::default(), "a broken file gives the defaults");
        std::fs::write(dir.path().join(SETTINGS_FILE), br#"{"maxDownloadMb":"lots"}"#).unwrap();
        assert_eq!(AppSettings::load(dir.path()), AppSettings::default(), "a wrong type gives the defaults");
        std::fs::write(dir.path().join(SETTINGS_FILE), br#"{"future":true}"#).unwrap();
        assert_eq!(AppSettings::load(dir.path()), AppSettings::default(), "missing fields take their defaults");
        assert_eq!(AppSettings::load(dir.path()).quick_ask_shortcut.as_deref(), Some(DEFAULT_QUICK_ASK));
        std::fs::write(dir.path().join(SETTINGS_FILE), br#"{"quickAskShortcut":"  "}"#).unwrap();
        assert_eq!(AppSettings::load(dir.path()).quick_ask_shortcut, None, "a blank shortcut is off");
        assert_eq!(AppSettings::load(dir.path()).capture_shortcut.as_deref(), Some(DEFAULT_CAPTURE));
        std::fs::write(dir.path().join(SETTINGS_FILE), br#"{"captureShortcut":null}"#).unwrap();
        assert_eq!(AppSettings::load(dir.path()).capture_shortcut, None, "null turns it off");
    }

    #[test]
    fn values_are_clamped_on_load_and_save() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(SETTINGS_FILE), br#"{"maxDownloadMb":0}"#).unwrap();
        assert_eq!(AppSettings::load(dir.path()).max_download_mb, MIN_DOWNLOAD_MB);
        std::fs::write(dir.path().join(SETTINGS_FILE), br#"{"maxDownloadMb":4000000000}"#).unwrap();
        assert_eq!(AppSettings::load(dir.path()).max_download_mb, MAX_DOWNLOAD_MB);
        let max = AppSettings { max_download_mb: MAX_DOWNLOAD_MB, ..AppSettings::default() };
        assert_eq!(max.max_download_bytes(), 1024 * 1024 * MIB);
        std::fs::write(dir.path().join(SETTINGS_FILE), br#"{"maxMediaMb":0,"mediaQuotaMb":4000000000}"#).unwrap();
        let l = AppSettings::load(dir.path());
        assert_eq!((l.max_media_mb, l.media_quota_mb), (MIN_MEDIA_MB, MAX_QUOTA_MB));
    }
}
