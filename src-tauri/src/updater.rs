//! In-app updates through `tauri-plugin-updater`, driven from Rust only: the UI gets two narrow commands
//! (`check_for_updates`, `install_update`) and no plugin permission, so a compromised page cannot point the updater
//! anywhere.
//!
//! Where the update manifest (`latest.json`) comes from, first match wins:
//! 1. `plugins.updater.endpoints` in `tauri.conf.json` (empty in the repository);
//! 2. `HERMES_UPDATE_ENDPOINT` at build time (the release workflow sets it to the GitHub release's `latest.json`).
//!
//! With neither, the build has no updater: the check answers `not_configured` (the UI says so; no error, no dialog).
//! Artifacts are verified against the minisign public key in `plugins.updater.pubkey` before anything is installed.

use serde::Serialize;
use tauri::AppHandle;
use tauri_plugin_updater::UpdaterExt;
use url::Url;

/// The build-time endpoint (`HERMES_UPDATE_ENDPOINT`), if any; blank counts as none.
pub const BUILD_ENDPOINT: Option<&str> = option_env!("HERMES_UPDATE_ENDPOINT");

/// The result of an update check, as the UI shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum UpdateCheck {
    /// This build has no update endpoint (a local or distribution build): nothing to check.
    NotConfigured { current: String },
    /// The endpoint answered and there is nothing newer.
    UpToDate { current: String },
    /// A newer, signed release exists.
    Available { current: String, version: String, notes: Option<String>, date: Option<String> },
    /// The check itself failed (offline, endpoint down, bad manifest); the message is for the user.
    Failed { current: String, message: String },
}

/// The endpoints to use: the configured ones, else the build-time one. Only `https` URLs count (the plugin refuses
/// anything else in release builds); an unusable build-time value means "not configured", never a failure.
pub fn resolve_endpoints(configured: &[Url], build_time: Option<&str>) -> Vec<Url> {
    let configured: Vec<Url> = configured.iter().filter(|u| u.scheme() == "https").cloned().collect();
    if !configured.is_empty() {
        return configured;
    }
    build_time
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .and_then(|s| Url::parse(s).ok())
        .filter(|u| u.scheme() == "https" && u.host_str().is_some())
        .into_iter()
        .collect()
}

/// The endpoints of this build (config, then build time).
pub fn endpoints(app: &AppHandle) -> Vec<Url> {
    let configured: Vec<Url> = app
        .config()
        .plugins
        .0
        .get("updater")
        .and_then(|u| u.get("endpoints"))
        .and_then(|e| e.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_str()).filter_map(|s| Url::parse(s).ok()).collect())
        .unwrap_or_default();
    resolve_endpoints(&configured, BUILD_ENDPOINT)
}

fn current(app: &AppHandle) -> String {
    app.package_info().version.to_string()
}

/// A short, user-facing reason (no URLs with query strings, no internals).
fn failure(e: &tauri_plugin_updater::Error) -> String {
    use tauri_plugin_updater::Error as E;
    match e {
        E::Reqwest(_) | E::Network(_) => "the update server could not be reached".into(),
        E::ReleaseNotFound => "the update server sent no usable release information".into(),
        E::TargetNotFound(_) | E::TargetsNotFound(_) => "no update is published for this system".into(),
        E::Minisign(_) | E::SignatureUtf8(_) | E::Base64(_) => "the update's signature is not valid".into(),
        other => other.to_string(),
    }
}

async fn check(app: &AppHandle) -> Result<Option<tauri_plugin_updater::Update>, UpdateCheck> {
    let list = endpoints(app);
    if list.is_empty() {
        return Err(UpdateCheck::NotConfigured { current: current(app) });
    }
    let failed = |e: tauri_plugin_updater::Error| {
        tracing::warn!("update check failed: {e}");
        UpdateCheck::Failed { current: current(app), message: failure(&e) }
    };
    let updater = app
        .updater_builder()
        .endpoints(list)
        .and_then(|b| b.timeout(std::time::Duration::from_secs(20)).build())
        .map_err(failed)?;
    updater.check().await.map_err(failed)
}

/// Ask the update endpoint whether a newer signed release exists.
#[tauri::command]
#[specta::specta]
pub async fn check_for_updates(app: AppHandle) -> UpdateCheck {
    match check(&app).await {
        Err(status) => status,
        Ok(None) => UpdateCheck::UpToDate { current: current(&app) },
        Ok(Some(u)) => {
            tracing::info!(version = %u.version, "an update is available");
            UpdateCheck::Available {
                current: u.current_version.clone(),
                version: u.version.clone(),
                notes: u.body.clone().map(|b| b.chars().take(4000).collect()),
                date: u.raw_json.get("pub_date").and_then(|d| d.as_str()).map(str::to_string),
            }
        }
    }
}

/// Download the newer release, verify its signature, install it and restart. Answers with the check's status when
/// there is nothing to install (or it failed); on success the app restarts and the call never returns.
#[tauri::command]
#[specta::specta]
pub async fn install_update(app: AppHandle) -> UpdateCheck {
    let update = match check(&app).await {
        Err(status) => return status,
        Ok(None) => return UpdateCheck::UpToDate { current: current(&app) },
        Ok(Some(u)) => u,
    };
    tracing::info!(version = %update.version, "installing an update");
    if let Err(e) = update.download_and_install(|_, _| {}, || {}).await {
        tracing::warn!("update install failed: {e}");
        return UpdateCheck::Failed { current: current(&app), message: failure(&e) };
    }
    app.restart()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn no_endpoint_means_not_configured() {
        assert!(resolve_endpoints(&[], None).is_empty());
        assert!(resolve_endpoints(&[], Some("")).is_empty());
        assert!(resolve_endpoints(&[], Some("   ")).is_empty());
    }

    #[test]
    fn config_wins_over_build_time() {
        let cfg = [u("https://updates.example/latest.json")];
        assert_eq!(resolve_endpoints(&cfg, Some("https://other.example/latest.json")), cfg.to_vec());
    }

    #[test]
    fn build_time_endpoint_is_used_when_config_is_empty() {
        let got = resolve_endpoints(&[], Some(" https://github.com/o/r/releases/latest/download/latest.json "));
        assert_eq!(got, vec![u("https://github.com/o/r/releases/latest/download/latest.json")]);
    }

    #[test]
    fn insecure_or_broken_endpoints_are_ignored() {
        assert!(resolve_endpoints(&[u("http://updates.example/latest.json")], None).is_empty());
        assert!(resolve_endpoints(&[], Some("http://updates.example/latest.json")).is_empty());
        assert!(resolve_endpoints(&[], Some("not a url")).is_empty());
        assert!(resolve_endpoints(&[], Some("file:///etc/passwd")).is_empty());
    }

    #[test]
    fn the_status_crosses_ipc_as_a_tagged_object() {
        let v = serde_json::to_value(UpdateCheck::NotConfigured { current: "0.1.0".into() }).unwrap();
        assert_eq!(v, serde_json::json!({"status": "not_configured", "current": "0.1.0"}));
        let v = serde_json::to_value(UpdateCheck::Available {
            current: "0.1.0".into(),
            version: "0.2.0".into(),
            notes: None,
            date: None,
        })
        .unwrap();
        assert_eq!(v["status"], "available");
        assert_eq!(v["version"], "0.2.0");
    }
}
