//! The configuration lives at the repository root (`../tauri.conf.json`) and `src-tauri/tauri.conf.json` is a symlink
//! to it (on Windows, clone with `core.symlinks=true`). tauri-build, `generate_context!()` and the Tauri CLI (run with
//! `TAURI_APP_PATH=src-tauri`, see `cargo xtask bundle`) all read it through the symlink, so relative paths inside it
//! (`../ui/dist`, `../icons/…`, `macos/…`, `linux/…`) are relative to `src-tauri/`.
//!
//! Commands are permissioned: the app manifest lists them, and `capabilities/main.json` grants them to the `main`
//! window only (keep the three lists in sync; a unit test checks it).

const COMMANDS: &[&str] = &[
    "app_info",
    "list_profiles",
    "create_profile",
    "update_profile",
    "set_paired",
    "set_home",
    "delete_profile",
    "set_token",
    "delete_token",
    "connect",
    "disconnect",
    "send_command",
    "list_conversations",
    "create_conversation",
    "rename_conversation",
    "get_draft",
    "set_draft",
    "mark_read",
    "delete_conversation",
    "history",
    "search",
    "export_conversation",
    "open_logs_folder",
    "open_external",
    "reveal_file",
    "open_file",
    "save_file_as",
    "pick_files",
    "file_url",
    "downscale_image",
    "file_info",
    "write_temp_file",
    "clipboard_image",
    "notify",
    "app_settings",
    "app_save_settings",
    "voice_devices",
    "voice_settings",
    "voice_save_settings",
    "voice_start",
    "voice_stop",
    "voice_cancel",
    "tts_status",
    "tts_speak",
    "tts_stop",
    "avatar_detach",
    "avatar_remote",
    "avatar_call",
    "check_for_updates",
    "install_update",
];

fn main() {
    // the update endpoint can be baked in at build time (see src/updater.rs)
    println!("cargo:rerun-if-env-changed=HERMES_UPDATE_ENDPOINT");
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .windows_attributes(tauri_build::WindowsAttributes::new().window_icon_path("../icons/icon.ico"))
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri-build failed");
}
